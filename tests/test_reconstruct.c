/*
 * test_reconstruct.c - iwpp_reconstruct against the definitional oracle, bit
 * for bit, on every configuration of the backend under test.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const iwpp_type TYPES[3] = {IWPP_U8, IWPP_U16, IWPP_F32};
static const iwpp_morph_mode MODES[2] = {IWPP_BY_DILATION, IWPP_BY_EROSION};

typedef struct rcase {
    iwpp_type type;
    odims d;
    int conn;
    iwpp_morph_mode mode;
    const double *marker;
    const double *mask;
    int64_t pad_y, pad_z; /* strides of the marker view; the mask gets other ones */
    const char *label;
    uint64_t seed;
} rcase;

/* Run one case on every configuration; returns the number of failures. */
static int run_case(const rcase *c)
{
    int fails = 0;
    int64_t n = odims_count(c->d);
    double *expected = vol_alloc(c->d);
    memcpy(expected, c->marker, (size_t)n * sizeof(double));
    oracle_reconstruct(expected, c->mask, c->d, c->conn, c->mode == IWPP_BY_EROSION);
    for (int k = 0; k < n; ++k) expected[k] = as_type(c->type, expected[k]);

    for (int i = 0; i < g_ncfg; ++i) {
        const char *what = fmt("reconstruct %s %s conn=%d %lldx%lldx%lld %s pad=%lld/%lld seed=%llu [%s]",
                               iwpp_type_name(c->type), mode_name(c->mode), c->conn,
                               (long long)c->d.w, (long long)c->d.h, (long long)c->d.d, c->label,
                               (long long)c->pad_y, (long long)c->pad_z,
                               (unsigned long long)c->seed, g_cfg[i].name);
        timg mk, ms;
        if (!timg_init(&mk, c->type, c->d, c->pad_y, c->pad_z) ||
            !timg_init(&ms, c->type, c->d, c->pad_y ? c->pad_y + 1 : 0, c->pad_z ? c->pad_z + 2 : 0)) {
            fail_msg("out of memory in the test");
        }
        timg_load(&mk, c->marker);
        timg_load(&ms, c->mask);
        unsigned char *mask_snapshot = malloc(ms.bytes);
        memcpy(mask_snapshot, ms.alloc, ms.bytes);

        iwpp_status st = iwpp_reconstruct(g_cfg[i].ctx, &mk.v, &ms.v, c->conn, c->mode);
        int bad = check_ok(st, g_cfg[i].ctx, what);
        if (!bad) bad = check_equal(&mk, expected, what);
        if (!bad && !timg_bytes_equal(&ms, mask_snapshot)) {
            print_error("FAIL: %s: the mask (an input) was modified\n", what);
            bad = 1;
        }
        if (bad) note_failure(&fails);
        free(mask_snapshot);
        timg_free(&mk);
        timg_free(&ms);
    }
    free(expected);
    return fails;
}

/* marker variants */
enum { MK_INDEPENDENT, MK_SHIFTED, MK_SEEDS, MK_COUNT };
static const char *MK_NAMES[MK_COUNT] = {"random marker (clipped)", "mask-shifted marker",
                                         "sparse seeds"};

static void make_marker(trng *r, int variant, iwpp_type t, iwpp_morph_mode mode, odims d,
                        const double *mask, double *marker)
{
    int64_t n = odims_count(d);
    double lo = t == IWPP_F32 ? -64.0 : 0.0;
    double hi = t == IWPP_F32 ? 64.0 : type_max(t);
    switch (variant) {
    case MK_INDEPENDENT:
        gen_random(r, t, d, 7, marker);
        break;
    case MK_SHIFTED:
        for (int64_t i = 0; i < n; ++i) {
            double step = t == IWPP_F32 ? 0.25 * (double)trng_below(r, 40)
                                        : (double)trng_below(r, t == IWPP_U8 ? 60 : 20000);
            double v = mode == IWPP_BY_DILATION ? mask[i] - step : mask[i] + step;
            marker[i] = v < lo ? lo : v > hi ? hi : v;
        }
        break;
    default:
        for (int64_t i = 0; i < n; ++i)
            marker[i] = trng_below(r, 100) < 2 ? mask[i] : (mode == IWPP_BY_DILATION ? lo : hi);
        break;
    }
}

static int random_cases(uint64_t seed0, const odims *sizes, int nsizes, const int *conns, int nconn)
{
    int fails = 0;
    uint64_t seed = seed0;
    for (int s = 0; s < nsizes; ++s)
        for (int t = 0; t < 3; ++t)
            for (int c = 0; c < nconn; ++c)
                for (int m = 0; m < 2; ++m)
                    for (int v = 0; v < MK_COUNT; ++v) {
                        odims d = sizes[s];
                        trng r;
                        trng_seed(&r, ++seed);
                        double *mask = vol_alloc(d), *marker = vol_alloc(d);
                        /* few levels on half the cases: plateaus */
                        gen_random(&r, TYPES[t], d, (seed & 1) ? 9 : 256, mask);
                        make_marker(&r, v, TYPES[t], MODES[m], d, mask, marker);
                        rcase rc = {TYPES[t], d, conns[c], MODES[m], marker, mask, 0, 0, MK_NAMES[v], seed};
                        fails += run_case(&rc);
                        free(mask);
                        free(marker);
                    }
    return fails;
}

static void test_random_2d(void **state)
{
    (void)state;
    static const odims sizes[] = {{1, 1, 1},   {1, 23, 1},  {23, 1, 1},  {2, 2, 1},
                                  {13, 7, 1},  {15, 15, 1}, {16, 16, 1}, {17, 17, 1},
                                  {16, 33, 1}, {33, 31, 1}, {64, 64, 1}};
    static const int conns[] = {4, 8};
    assert_int_equal(random_cases(1000, sizes, sizeof sizes / sizeof sizes[0], conns, 2), 0);
}

/* Sizes for the GPU's 2D scans: widths a multiple of 4 and not (CUDA's four-pixel loads), heights
 * over several column segments with a partial band of rows at their ends (seg2_rows in
 * cuda/reconstruct_2d.cuh: 64-256 rows a segment, 8-row bands). */
static void test_scan_segments_2d(void **state)
{
    (void)state;
    static const odims sizes[] = {{132, 203, 1}, {130, 201, 1}, {516, 97, 1}, {4, 300, 1}, {257, 131, 1}};
    static const int conns[] = {4, 8};
    assert_int_equal(random_cases(1500, sizes, sizeof sizes / sizeof sizes[0], conns, 2), 0);
}

static void test_random_3d(void **state)
{
    (void)state;
    static const odims sizes[] = {{1, 1, 1}, {1, 1, 7},  {7, 1, 1},   {1, 7, 1},   {5, 4, 3},
                                  {9, 8, 7}, {13, 11, 1}, {15, 16, 17}, {16, 16, 16}};
    static const int conns[] = {6, 18, 26};
    assert_int_equal(random_cases(2000, sizes, sizeof sizes / sizeof sizes[0], conns, 3), 0);
}

/* Constant and degenerate marker/mask pairs. */
static void test_constant_images(void **state)
{
    (void)state;
    int fails = 0;
    static const odims sizes[] = {{1, 1, 1}, {17, 5, 1}, {6, 5, 4}};
    for (int s = 0; s < 3; ++s)
        for (int t = 0; t < 3; ++t)
            for (int m = 0; m < 2; ++m) {
                odims d = sizes[s];
                int conn = d.d > 1 ? 26 : 8;
                iwpp_type ty = TYPES[t];
                double mx = ty == IWPP_F32 ? FLT_MAX : type_max(ty);
                double mn = ty == IWPP_F32 ? -FLT_MAX : 0.0;
                double *a = vol_alloc(d), *b = vol_alloc(d);
                struct {
                    double marker, mask;
                    const char *label;
                } pairs[] = {{0, 0, "all zero"},
                             {mx, mx, "all max"},
                             {mn, mn, "all min"},
                             {mx, mn, "marker above the mask everywhere"},
                             {mn, mx, "marker at the minimum, mask at the maximum"},
                             {ty == IWPP_F32 ? -3.5 : 3, ty == IWPP_F32 ? -3.5 : 3, "marker == mask"}};
                for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; ++p) {
                    gen_const(d, pairs[p].marker, a);
                    gen_const(d, pairs[p].mask, b);
                    rcase rc = {ty, d, conn, MODES[m], a, b, 0, 0, pairs[p].label, 0};
                    fails += run_case(&rc);
                    /* 4-connectivity / 6 too */
                    rc.conn = d.d > 1 ? 6 : 4;
                    fails += run_case(&rc);
                }
                /* marker == mask with a random image */
                trng r;
                trng_seed(&r, 77 + (uint64_t)s);
                gen_random(&r, ty, d, 256, b);
                rcase rc = {ty, d, conn, MODES[m], b, b, 0, 0, "random marker == mask", 77 + (uint64_t)s};
                fails += run_case(&rc);
                /* marker above the mask everywhere: result = mask (dilation) */
                for (int64_t i = 0; i < odims_count(d); ++i)
                    a[i] = MODES[m] == IWPP_BY_DILATION ? (ty == IWPP_F32 ? 64.0 : mx) : (ty == IWPP_F32 ? -64.0 : 0.0);
                rc.marker = a;
                rc.label = "marker beyond the mask, random mask";
                fails += run_case(&rc);
                free(a);
                free(b);
            }
    assert_int_equal(fails, 0);
}

/* One seed floods the whole image (mask constant high, or random high). */
static void test_single_seed_flood(void **state)
{
    (void)state;
    int fails = 0;
    static const odims sizes[] = {{64, 64, 1}, {15, 15, 1},  {16, 16, 1}, {17, 17, 1}, {31, 33, 1},
                                  {32, 32, 1}, {33, 31, 1},  {47, 49, 1}, {1, 300, 1}, {300, 1, 1},
                                  {17, 17, 17}, {16, 16, 16}, {1, 1, 40}, {33, 3, 5}};
    uint64_t seed = 3000;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
        for (int t = 0; t < 3; ++t)
            for (int m = 0; m < 2; ++m)
                for (int variant = 0; variant < 2; ++variant) {
                    odims d = sizes[s];
                    iwpp_type ty = TYPES[t];
                    int64_t n = odims_count(d);
                    double *mask = vol_alloc(d), *mk = vol_alloc(d);
                    trng r;
                    trng_seed(&r, ++seed);
                    double lo = ty == IWPP_F32 ? -60.0 : 0.0;
                    double hi = ty == IWPP_F32 ? 60.0 : type_max(ty);
                    if (variant == 0) {
                        gen_const(d, MODES[m] == IWPP_BY_DILATION ? hi : lo, mask);
                    } else {
                        gen_random(&r, ty, d, 256, mask);
                    }
                    gen_const(d, MODES[m] == IWPP_BY_DILATION ? lo : hi, mk);
                    /* the seed: the far corner for half of the cases, else a random pixel */
                    int64_t p = (seed & 1) ? n - 1 : trng_below(&r, n);
                    mk[p] = MODES[m] == IWPP_BY_DILATION ? hi : lo;
                    int conns3[3] = {6, 18, 26}, conns2[2] = {4, 8};
                    int nc = d.d > 1 ? 3 : 2;
                    for (int c = 0; c < nc; ++c) {
                        rcase rc = {ty, d, d.d > 1 ? conns3[c] : conns2[c], MODES[m], mk, mask, 0, 0,
                                    variant ? "one seed, random mask" : "one seed floods a constant mask", seed};
                        fails += run_case(&rc);
                    }
                    free(mask);
                    free(mk);
                }
    assert_int_equal(fails, 0);
}

/* Spirals and mazes: the propagation path is about half the pixels. */
static void test_spiral_maze(void **state)
{
    (void)state;
    int fails = 0;
    static const odims sizes[] = {{63, 63, 1}, {33, 47, 1}, {15, 15, 15}, {16, 16, 16}, {17, 9, 5}};
    uint64_t seed = 4000;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
        for (int shape = 0; shape < 2; ++shape)
            for (int t = 0; t < 3; ++t)
                for (int m = 0; m < 2; ++m) {
                    odims d = sizes[s];
                    if (shape == 0 && d.d > 1) continue; /* spirals are per slice: 2D only */
                    iwpp_type ty = TYPES[t];
                    int64_t n = odims_count(d);
                    trng r;
                    trng_seed(&r, ++seed);
                    double *corr = vol_alloc(d), *mask = vol_alloc(d), *mk = vol_alloc(d);
                    if (shape == 0) gen_spiral(d, corr);
                    else gen_maze(&r, d, corr);
                    double lo = ty == IWPP_F32 ? -64.0 : 0.0;
                    double hi = ty == IWPP_F32 ? 63.75 : type_max(ty);
                    for (int64_t i = 0; i < n; ++i) {
                        double v;
                        if (corr[i] == 0.0) v = MODES[m] == IWPP_BY_DILATION ? lo : hi; /* walls */
                        else if (ty == IWPP_F32) v = (double)(trng_below(&r, 200) - 60) * 0.25;
                        else v = floor(type_max(ty) / 2) + (double)trng_below(&r, (int64_t)type_max(ty) / 2);
                        mask[i] = v;
                        mk[i] = MODES[m] == IWPP_BY_DILATION ? lo : hi;
                    }
                    mk[0] = MODES[m] == IWPP_BY_DILATION ? hi : lo; /* the corridor's start */
                    const int *conns;
                    int conns3[3] = {6, 18, 26}, conns2[2] = {4, 8};
                    int nc = d.d > 1 ? 3 : 2;
                    conns = d.d > 1 ? conns3 : conns2;
                    for (int c = 0; c < nc; ++c) {
                        rcase rc = {ty, d, conns[c], MODES[m], mk, mask, 0, 0, shape ? "maze" : "spiral", seed};
                        fails += run_case(&rc);
                    }
                    free(corr);
                    free(mask);
                    free(mk);
                }
    assert_int_equal(fails, 0);
}

/* One 63^2 spiral on a queue configuration with the blocks leaving after one round: the
 * stats must show that the way out was taken (a re-run pass; or the host's finish). */
static void check_leave_taken(int host_finishes)
{
    iwpp_context *ctx = NULL; /* the first configuration with a queue phase */
    for (int i = 0; i < g_ncfg && !ctx; ++i)
        if (strcmp(g_cfg[i].name, "megapixel") != 0) ctx = g_cfg[i].ctx;
    if (!ctx) return;
    const odims d = {63, 63, 1};
    const int64_t n = odims_count(d);
    double *corr = vol_alloc(d), *mask = vol_alloc(d), *mk = vol_alloc(d);
    gen_spiral(d, corr);
    for (int64_t i = 0; i < n; ++i) {
        mask[i] = corr[i] == 0.0 ? 0.0 : 200.0;
        mk[i] = 0.0;
    }
    mk[0] = 200.0;
    timg a, b;
    if (!timg_init(&a, IWPP_U8, d, 0, 0) || !timg_init(&b, IWPP_U8, d, 0, 0)) fail_msg("out of memory in the test");
    timg_load(&a, mk);
    timg_load(&b, mask);
    assert_int_equal(iwpp_reconstruct(ctx, &a.v, &b.v, 4, IWPP_BY_DILATION), IWPP_OK);
    iwpp_stats st;
    assert_int_equal(iwpp_context_stats(ctx, &st), IWPP_OK);
    const int on_host = strstr(st.variant, "long chains on the host") != NULL;
    if (on_host != host_finishes || (!host_finishes && st.overflow_reruns == 0))
        fail_msg("spiral 63^2, blocks leaving after one round, queue_host %s: variant \"%s\", %lld re-runs",
                 host_finishes ? "1" : "off", st.variant, (long long)st.overflow_reruns);
    timg_free(&a);
    timg_free(&b);
    free(corr);
    free(mask);
    free(mk);
}

/* The queue phase's blocks (work-groups) leave after one round once nearly all others are done
 * (the way out of a flood or a long chain in one block, cuda.queue_leave / ocl.queue_leave):
 * every pass then spreads the front again, hundreds of passes a call here, or the host finishes
 * from the partial result (cuda.queue_host / ocl.queue_host). GPU backends only. */
static void test_queue_blocks_leave(void **state)
{
    if (g_backend == IWPP_BACKEND_CPU) {
        print_message("(the queue's early leave is the GPU backends': nothing more to check on the CPU)\n");
        return;
    }
    const int cuda = g_backend == IWPP_BACKEND_CUDA;
    const char *leave_key = cuda ? "cuda.queue_leave" : "ocl.queue_leave";
    const char *host_key = cuda ? "cuda.queue_host" : "ocl.queue_host";
    /* the front spread again after every pass; the host finishing after the first, the second */
    static const char *const host[3] = {"off", "1", "2"};
    harness_tune(leave_key, "1");
    for (int i = 0; i < 3; ++i) {
        print_message("%s = %s\n", host_key, host[i]);
        harness_tune(host_key, host[i]);
        if (i < 2) check_leave_taken(i == 1);
        test_single_seed_flood(state);
        test_spiral_maze(state);
        test_random_2d(state);
    }
    harness_tune(host_key, NULL);
    harness_tune(leave_key, NULL);
}

/* Strided views (stride_y > width, stride_z > stride_y*height). */
static void test_strided(void **state)
{
    (void)state;
    int fails = 0;
    static const odims sizes[] = {{1, 1, 1}, {13, 7, 1}, {17, 16, 1}, {9, 8, 7}, {1, 5, 3}};
    uint64_t seed = 5000;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
        for (int t = 0; t < 3; ++t)
            for (int m = 0; m < 2; ++m) {
                odims d = sizes[s];
                trng r;
                trng_seed(&r, ++seed);
                double *mask = vol_alloc(d), *mk = vol_alloc(d);
                gen_random(&r, TYPES[t], d, 12, mask);
                make_marker(&r, MK_SEEDS, TYPES[t], MODES[m], d, mask, mk);
                rcase rc = {TYPES[t], d, d.d > 1 ? 18 : 8, MODES[m], mk, mask, 3, d.d > 1 ? 5 : 0, "strided", seed};
                fails += run_case(&rc);
                rc.pad_y = 1;
                rc.pad_z = d.d > 1 ? 1 : 0;
                rc.conn = d.d > 1 ? 6 : 4;
                fails += run_case(&rc);
                free(mask);
                free(mk);
            }
    assert_int_equal(fails, 0);
}

/* Sizes one below, at and above the tile size (and twice it), with seeds that
 * must cross many tile borders. */
static void test_tile_boundaries(void **state)
{
    (void)state;
    int fails = 0;
    int64_t t = g_tile > 40 ? 16 : g_tile;
    odims sizes[] = {{t - 1, t - 1, 1}, {t, t, 1},         {t + 1, t + 1, 1}, {2 * t - 1, 2 * t + 1, 1},
                     {2 * t, 2 * t, 1}, {t + 1, 1, 1},     {1, t + 1, 1},     {t - 1, t, t + 1},
                     {t, t, t},         {t + 1, t + 1, 3}, {31, 32, 1},       {65, 33, 1}};
    uint64_t seed = 6000;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
        for (int ty = 0; ty < 3; ++ty)
            for (int m = 0; m < 2; ++m) {
                odims d = sizes[s];
                if (d.w < 1 || d.h < 1) continue;
                trng r;
                trng_seed(&r, ++seed);
                double *corr = vol_alloc(d), *mask = vol_alloc(d), *mk = vol_alloc(d);
                gen_maze(&r, d, corr);
                int64_t n = odims_count(d);
                for (int64_t i = 0; i < n; ++i) {
                    double hi = TYPES[ty] == IWPP_F32 ? 8.0 : type_max(TYPES[ty]);
                    double lo = TYPES[ty] == IWPP_F32 ? -8.0 : 0.0;
                    double v = corr[i] != 0.0 ? hi - (double)trng_below(&r, 3) : lo + (double)trng_below(&r, 2);
                    if (MODES[m] == IWPP_BY_EROSION) v = hi + lo - v;
                    mask[i] = v;
                }
                make_marker(&r, MK_SEEDS, TYPES[ty], MODES[m], d, mask, mk);
                mk[0] = mask[0];
                int conn = d.d > 1 ? 6 : 4;
                rcase rc = {TYPES[ty], d, conn, MODES[m], mk, mask, 0, 0, "tile boundary maze", seed};
                fails += run_case(&rc);
                rc.conn = d.d > 1 ? 26 : 8;
                fails += run_case(&rc);
                free(corr);
                free(mask);
                free(mk);
            }
    assert_int_equal(fails, 0);
}

/* F32 extremes: negative values, infinities and the largest finite values. */
static void test_f32_extremes(void **state)
{
    (void)state;
    int fails = 0;
    odims d = {19, 11, 1};
    int64_t n = odims_count(d);
    trng r;
    trng_seed(&r, 7000);
    double *mask = vol_alloc(d), *mk = vol_alloc(d);
    static const double pool[] = {-INFINITY, INFINITY, -FLT_MAX, FLT_MAX, -1e-30, 1e-30, -0.5, 0.0, 3.0e38};
    for (int m = 0; m < 2; ++m) {
        for (int64_t i = 0; i < n; ++i) {
            mask[i] = pool[trng_below(&r, 9)];
            mk[i] = trng_below(&r, 10) == 0 ? mask[i] : pool[trng_below(&r, 9)];
        }
        rcase rc = {IWPP_F32, d, 8, MODES[m], mk, mask, 0, 0, "f32 infinities and extremes", 7000};
        fails += run_case(&rc);
        rc.conn = 4;
        fails += run_case(&rc);
    }
    free(mask);
    free(mk);
    assert_int_equal(fails, 0);
}

int main(int argc, char **argv)
{
    (void)argc;
    int rc = harness_init(argv[0]);
    if (rc) harness_exit(rc);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_2d),       cmocka_unit_test(test_scan_segments_2d),
        cmocka_unit_test(test_random_3d),
        cmocka_unit_test(test_constant_images), cmocka_unit_test(test_single_seed_flood),
        cmocka_unit_test(test_spiral_maze),     cmocka_unit_test(test_strided),
        cmocka_unit_test(test_tile_boundaries), cmocka_unit_test(test_f32_extremes),
        cmocka_unit_test(test_queue_blocks_leave),
    };
    int failed = HARNESS_RUN("reconstruct", tests);
    harness_exit(failed ? 1 : 0);
}
