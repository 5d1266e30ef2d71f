/*
 * test_stress.c - exactness under a tiny GPU queue capacity (overflow re-runs),
 * 1000 calls in a loop (leaks show under ASan / compute-sanitizer), 8 host
 * threads each with its own context calling at once (also on images that grow call after call), the stats record, and
 * calls whose views share memory (an output over an input, marker = mask).
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* ---- a small set of jobs with precomputed expected results ---- */
typedef struct job {
    int kind; /* 0 reconstruct, 1 edt exact, 2 edt danielsson (dist checked against bound), 3 fill holes, 4 h-maxima, 5 regional minima */
    iwpp_type type;
    odims d;
    double *a, *b; /* marker/mask or input */
    double *expected;
    float *edt;
    int conn;
} job;

static void job_make(job *j, int kind, iwpp_type type, odims d, uint64_t seed)
{
    memset(j, 0, sizeof *j);
    j->kind = kind;
    j->type = type;
    j->d = d;
    j->conn = d.d > 1 ? 26 : 8;
    trng r;
    trng_seed(&r, seed);
    int64_t n = odims_count(d);
    j->a = vol_alloc(d);
    j->b = vol_alloc(d);
    j->expected = vol_alloc(d);
    if (kind == 0) {
        double *corr = vol_alloc(d);
        gen_maze(&r, d, corr);
        for (int64_t i = 0; i < n; ++i) {
            j->b[i] = corr[i] != 0 ? (double)(100 + trng_below(&r, 100)) : 0.0;
            j->a[i] = 0.0;
        }
        j->a[0] = 255.0;
        free(corr);
        memcpy(j->expected, j->a, (size_t)n * sizeof(double));
        oracle_reconstruct(j->expected, j->b, d, j->conn, 0);
    } else if (kind == 1 || kind == 2) {
        gen_binary(&r, d, 0.9, 1.0, j->a);
        j->edt = malloc((size_t)n * sizeof(float));
        double one[3] = {1, 1, 1};
        oracle_edt(j->a, d, one, j->edt);
    } else {
        gen_random(&r, type, d, 6, j->a);
        if (kind == 3) oracle_fill_holes(j->a, d, type, j->conn, j->expected);
        else if (kind == 4) oracle_hextrema(j->a, d, type, 1.0, j->conn, 1, j->expected);
        else oracle_regional_extrema(j->a, d, j->conn, 0, j->expected);
    }
}

static void job_free(job *j)
{
    free(j->a);
    free(j->b);
    free(j->expected);
    free(j->edt);
}

/* Run a job once on ctx; 0 if exact (or within the bound), 1 and a message if not. */
static int job_run(const job *j, iwpp_context *ctx, const char *what)
{
    timg x, y;
    iwpp_status st;
    int bad = 0;
    if (j->kind == 0) {
        timg_init(&x, j->type, j->d, 0, 0);
        timg_init(&y, j->type, j->d, 0, 0);
        timg_load(&x, j->a);
        timg_load(&y, j->b);
        st = iwpp_reconstruct(ctx, &x.v, &y.v, j->conn, IWPP_BY_DILATION);
        bad = check_ok(st, ctx, what);
        if (!bad) bad = check_equal(&x, j->expected, what);
    } else if (j->kind == 1 || j->kind == 2) {
        timg_init(&x, j->type, j->d, 0, 0);
        timg_init(&y, IWPP_F32, j->d, 0, 0);
        timg_load(&x, j->a);
        st = iwpp_distance_transform(ctx, &x.v, j->kind == 1 ? IWPP_EDT_EXACT : IWPP_EDT_DANIELSSON, NULL,
                                     &y.v, NULL);
        bad = check_ok(st, ctx, what);
        int64_t n = odims_count(j->d);
        for (int64_t i = 0; !bad && i < n; ++i) {
            float g = ((const float *)y.v.data)[i], e = j->edt[i];
            int ok = j->kind == 1 ? g == e : (g >= e - 1e-6f && g - e <= 1.0f + 1e-5f);
            if (!ok) {
                print_error("FAIL: %s: pixel %lld: got %.9g, exact %.9g\n", what, (long long)i, (double)g, (double)e);
                bad = 1;
            }
        }
    } else {
        iwpp_type ot = j->kind == 5 ? IWPP_U8 : j->type;
        timg_init(&x, j->type, j->d, 0, 0);
        timg_init(&y, ot, j->d, 0, 0);
        timg_load(&x, j->a);
        if (j->kind == 3) st = iwpp_fill_holes(ctx, &x.v, j->conn, &y.v);
        else if (j->kind == 4) st = iwpp_h_maxima(ctx, &x.v, 1.0, j->conn, &y.v);
        else st = iwpp_regional_minima(ctx, &x.v, j->conn, &y.v);
        bad = check_ok(st, ctx, what);
        if (!bad) bad = check_equal(&y, j->expected, what);
    }
    timg_free(&x);
    timg_free(&y);
    return bad;
}

/* ---- tiny queue capacity ---- */
static void test_tiny_queue_capacity(void **state)
{
    (void)state;
    int fails = 0;
    job jobs[4];
    odims d2 = {64, 64, 1}, d3 = {16, 16, 16};
    job_make(&jobs[0], 0, IWPP_U8, d2, 11);
    job_make(&jobs[1], 0, IWPP_U8, d3, 12);
    job_make(&jobs[2], 2, IWPP_U8, d2, 13);
    job_make(&jobs[3], 3, IWPP_U16, d3, 14);
    for (int c = 0; c < g_ncfg; ++c) {
        iwpp_context *ctx = NULL;
        if (harness_make_context(&g_cfg[c], &ctx) != IWPP_OK) fail_msg("cannot create a context");
        iwpp_status st = iwpp_context_set_queue_capacity(ctx, 16);
        if (check_ok(st, ctx, "iwpp_context_set_queue_capacity(ctx, 16)")) note_failure(&fails);
        for (int k = 0; k < 4; ++k) {
            const char *what = fmt("queue capacity 16, job %d [%s]", k, g_cfg[c].name);
            if (job_run(&jobs[k], ctx, what)) note_failure(&fails);
            iwpp_stats s;
            if (iwpp_context_stats(ctx, &s) == IWPP_OK)
                print_message("%s: variant \"%s\", overflow re-runs %lld, rounds %lld\n", what, s.variant,
                              (long long)s.overflow_reruns, (long long)s.rounds);
        }
        iwpp_context_destroy(ctx);
    }
    for (int k = 0; k < 4; ++k) job_free(&jobs[k]);
    assert_int_equal(fails, 0);
}

/* ---- 1000 calls in a loop ---- */
static void test_thousand_calls(void **state)
{
    (void)state;
    int fails = 0;
    job jobs[6];
    odims d = {13, 11, 1};
    for (int k = 0; k < 6; ++k) job_make(&jobs[k], k, k == 4 ? IWPP_F32 : IWPP_U8, d, 100 + (uint64_t)k);
    /* the first configuration only: the loop is about resources, not variants */
    iwpp_context *ctx = g_cfg[0].ctx;
    for (int i = 0; i < 1000 && fails < 3; ++i) {
        const job *j = &jobs[i % 6];
        if (job_run(j, ctx, fmt("call %d of 1000 (kind %d) [%s]", i, j->kind, g_cfg[0].name))) note_failure(&fails);
    }
    /* contexts too: create, use, destroy */
    for (int i = 0; i < 50 && fails < 3; ++i) {
        iwpp_context *c2 = NULL;
        if (harness_make_context(&g_cfg[i % g_ncfg], &c2) != IWPP_OK) {
            note_failure(&fails);
            break;
        }
        if (job_run(&jobs[i % 6], c2, fmt("fresh context %d [%s]", i, g_cfg[i % g_ncfg].name))) note_failure(&fails);
        iwpp_context_destroy(c2);
    }
    for (int k = 0; k < 6; ++k) job_free(&jobs[k]);
    assert_int_equal(fails, 0);
}

/* ---- 8 host threads, one context each ---- */
#define NTHREADS 8
typedef struct worker {
    const harness_config *cfg;
    job jobs[3];
    int fails;
    int index;
    pthread_barrier_t *barrier;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    iwpp_context *ctx = NULL;
    iwpp_status st = harness_make_context(w->cfg, &ctx);
    pthread_barrier_wait(w->barrier);
    if (st != IWPP_OK) {
        w->fails = 1;
        return NULL;
    }
    for (int rep = 0; rep < 4; ++rep)
        for (int k = 0; k < 3; ++k)
            if (job_run(&w->jobs[k], ctx, fmt("thread %d job %d rep %d [%s]", w->index, k, rep, w->cfg->name)))
                ++w->fails;
    iwpp_context_destroy(ctx);
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    int fails = 0;
    for (int c = 0; c < g_ncfg; ++c) {
        worker w[NTHREADS];
        pthread_t th[NTHREADS];
        pthread_barrier_t barrier;
        pthread_barrier_init(&barrier, NULL, NTHREADS);
        for (int i = 0; i < NTHREADS; ++i) {
            w[i].cfg = &g_cfg[c];
            w[i].fails = 0;
            w[i].index = i;
            w[i].barrier = &barrier;
            odims d2 = {33 + i, 29, 1}, d3 = {9, 8, 7 + i % 3};
            job_make(&w[i].jobs[0], 0, i & 1 ? IWPP_U16 : IWPP_U8, d2, 200 + (uint64_t)i);
            job_make(&w[i].jobs[1], 1, IWPP_U8, d3, 300 + (uint64_t)i);
            job_make(&w[i].jobs[2], 4, IWPP_F32, d3, 400 + (uint64_t)i);
        }
        for (int i = 0; i < NTHREADS; ++i) pthread_create(&th[i], NULL, worker_main, &w[i]);
        for (int i = 0; i < NTHREADS; ++i) {
            pthread_join(th[i], NULL);
            fails += w[i].fails;
            for (int k = 0; k < 3; ++k) job_free(&w[i].jobs[k]);
        }
        pthread_barrier_destroy(&barrier);
    }
    assert_int_equal(fails, 0);
}

/* ---- threads whose images grow call after call ---- */
/* Each call of a thread is wider than its last, so every kernel runs at a new grid size in
 * several queues at once. PoCL before 7.0 keeps one compiled copy of a kernel per grid size and,
 * when a command ends, gives back the first copy it finds for that kernel, not the one that
 * command took; with three queues or more in flight that aborted the process within seconds
 * (assertion `found->ref_count > 0', the CI's ASan run of test_budget). */
#define GROW_THREADS 12
#define GROW_CALLS 100
typedef struct grower {
    uint64_t seed;
    int fails;
    pthread_barrier_t *barrier;
} grower;

static void *grower_main(void *arg)
{
    grower *g = arg;
    iwpp_context *ctx = NULL, *cpu = NULL;
    iwpp_status st = iwpp_context_create(&ctx, g_backend); /* default settings, as a plugin's */
    if (st == IWPP_OK) st = iwpp_context_create(&cpu, IWPP_BACKEND_CPU);
    pthread_barrier_wait(g->barrier);
    trng r;
    trng_seed(&r, g->seed);
    for (int call = 0; st == IWPP_OK && call < GROW_CALLS && !g->fails; ++call) {
        const int64_t w = 64 + 4 * call + trng_below(&r, 4), h = 16 + trng_below(&r, 8);
        const size_t n = (size_t)(w * h);
        uint8_t *mask = malloc(n), *marker = malloc(n), *want = malloc(n);
        if (!mask || !marker || !want) {
            g->fails = 1;
        } else {
            for (size_t k = 0; k < n; ++k) {
                mask[k] = (uint8_t)(20 + trng_below(&r, 200));
                marker[k] = want[k] = k % 97 ? 0 : mask[k];
            }
            iwpp_image mk = iwpp_image_2d(marker, IWPP_U8, w, h), ms = iwpp_image_2d(mask, IWPP_U8, w, h);
            iwpp_image wk = iwpp_image_2d(want, IWPP_U8, w, h);
            if (iwpp_reconstruct(cpu, &wk, &ms, 8, IWPP_BY_DILATION) != IWPP_OK ||
                iwpp_reconstruct(ctx, &mk, &ms, 8, IWPP_BY_DILATION) != IWPP_OK) {
                print_error("%lldx%lld: %s\n", (long long)w, (long long)h, iwpp_error_message(ctx));
                g->fails = 1;
            } else if (memcmp(marker, want, n) != 0) {
                print_error("%lldx%lld: differs from the CPU's result\n", (long long)w, (long long)h);
                g->fails = 1;
            }
        }
        free(mask);
        free(marker);
        free(want);
    }
    if (st != IWPP_OK) g->fails = 1;
    iwpp_context_destroy(ctx);
    iwpp_context_destroy(cpu);
    return NULL;
}

static void test_threads_growing_images(void **state)
{
    (void)state;
    grower g[GROW_THREADS];
    pthread_t th[GROW_THREADS];
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, GROW_THREADS);
    for (int i = 0; i < GROW_THREADS; ++i) {
        g[i] = (grower){7919 * (uint64_t)i + 1, 0, &barrier};
        pthread_create(&th[i], NULL, grower_main, &g[i]);
    }
    int fails = 0;
    for (int i = 0; i < GROW_THREADS; ++i) {
        pthread_join(th[i], NULL);
        fails += g[i].fails;
    }
    pthread_barrier_destroy(&barrier);
    assert_int_equal(fails, 0);
}

/* ---- the stats record ---- */
static void test_stats(void **state)
{
    (void)state;
    job j;
    job_make(&j, 0, IWPP_U8, (odims){40, 30, 1}, 500);
    for (int c = 0; c < g_ncfg; ++c) {
        iwpp_context *ctx = g_cfg[c].ctx;
        assert_int_equal(iwpp_context_backend(ctx), g_backend);
        assert_int_equal(job_run(&j, ctx, fmt("stats job [%s]", g_cfg[c].name)), 0);
        iwpp_stats s;
        memset(&s, 0x7f, sizeof s);
        assert_int_equal(iwpp_context_stats(ctx, &s), IWPP_OK);
        print_message("[%s] backend %s variant \"%s\" total %.3f ms compute %.3f ms visited %lld rounds %lld\n",
                      g_cfg[c].name, iwpp_backend_name(s.backend), s.variant, s.total_ms, s.compute_ms,
                      (long long)s.pixels_visited, (long long)s.rounds);
        assert_int_equal(s.backend, g_backend);
        assert_true(s.total_ms >= 0.0 && isfinite(s.total_ms));
        assert_true(s.compute_ms >= 0.0 && isfinite(s.compute_ms));
        assert_true(memchr(s.variant, '\0', sizeof s.variant) != NULL);
        assert_true(s.variant[0] != '\0');
        assert_true(s.pixels_visited >= 0 && s.rounds >= 0 && s.overflow_reruns >= 0);
    }
    job_free(&j);
}

/* ---- views that share memory ---- */
/* The API allows an output that overlaps an input (the library reads every input before it
 * writes an output) and the same buffer as marker and mask; backends that write straight into
 * the caller's views (the CPU) must not take those shortcuts then. */
static void test_aliased_views(void **state)
{
    (void)state;
    const int64_t w = 97, h = 61, n = w * h;
    float *bin = malloc((size_t)n * sizeof *bin), *ref = malloc((size_t)n * sizeof *ref);
    float *buf = malloc((size_t)(2 * n) * sizeof *buf);
    unsigned char *img = malloc((size_t)n), *want = malloc((size_t)n);
    assert_non_null(bin);
    assert_non_null(ref);
    assert_non_null(buf);
    assert_non_null(img);
    assert_non_null(want);
    trng r;
    trng_seed(&r, 4242);
    for (int64_t i = 0; i < n; ++i) {
        bin[i] = trng_below(&r, 13) == 0 ? 0.0f : 1.0f;
        img[i] = (unsigned char)trng_below(&r, 256);
    }
    memcpy(want, img, (size_t)n); /* reconstruction of a mask under itself: the mask */
    int fails = 0;
    for (int c = 0; c < g_ncfg; ++c) {
        iwpp_context *ctx = g_cfg[c].ctx;
        iwpp_image b = iwpp_image_2d(bin, IWPP_F32, w, h), rv = iwpp_image_2d(ref, IWPP_F32, w, h);
        assert_int_equal(iwpp_distance_transform(ctx, &b, IWPP_EDT_EXACT, NULL, &rv, NULL), IWPP_OK);
        /* dist_out is the binary itself */
        memcpy(buf, bin, (size_t)n * sizeof *buf);
        iwpp_image ip = iwpp_image_2d(buf, IWPP_F32, w, h);
        iwpp_status st = iwpp_distance_transform(ctx, &ip, IWPP_EDT_EXACT, NULL, &ip, NULL);
        if (st != IWPP_OK || memcmp(buf, ref, (size_t)n * sizeof *buf) != 0) {
            print_error("[%s] EDT with dist_out = binary: %s %s\n", g_cfg[c].name, iwpp_status_name(st),
                        st ? iwpp_error_message(ctx) : "result differs");
            fails++;
        }
        /* dist_out overlapping the second half of the binary */
        memcpy(buf, bin, (size_t)n * sizeof *buf);
        iwpp_image bb = iwpp_image_2d(buf, IWPP_F32, w, h), dd = iwpp_image_2d(buf + n / 2, IWPP_F32, w, h);
        st = iwpp_distance_transform(ctx, &bb, IWPP_EDT_EXACT, NULL, &dd, NULL);
        if (st != IWPP_OK || memcmp(buf + n / 2, ref, (size_t)n * sizeof *buf) != 0) {
            print_error("[%s] EDT with dist_out over half the binary: %s %s\n", g_cfg[c].name,
                        iwpp_status_name(st), st ? iwpp_error_message(ctx) : "result differs");
            fails++;
        }
        /* marker and mask the same buffer */
        iwpp_image m = iwpp_image_2d(img, IWPP_U8, w, h);
        st = iwpp_reconstruct(ctx, &m, &m, 8, IWPP_BY_DILATION);
        if (st != IWPP_OK || memcmp(img, want, (size_t)n) != 0) {
            print_error("[%s] reconstruction with marker = mask: %s %s\n", g_cfg[c].name, iwpp_status_name(st),
                        st ? iwpp_error_message(ctx) : "result differs");
            fails++;
        }
    }
    free(bin);
    free(ref);
    free(buf);
    free(img);
    free(want);
    assert_int_equal(fails, 0);
}

int main(int argc, char **argv)
{
    (void)argc;
    int rc = harness_init(argv[0]);
    if (rc) harness_exit(rc);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiny_queue_capacity),
        cmocka_unit_test(test_thousand_calls),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_threads_growing_images),
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_aliased_views),
    };
    int failed = HARNESS_RUN("stress", tests);
    harness_exit(failed ? 1 : 0);
}
