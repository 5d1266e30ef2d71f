/*
 * cpu_bench - the CPU backend's default thread count against one thread, idle
 * and with busy processes on the same cores, and its scaling on a tissue-like
 * texture (issue 13). A benchmark, not a test: it prints tables; a result that
 * differs between thread counts is printed as MISMATCH and makes the exit
 * status 2.
 *
 *   cpu_bench --all                 both tables below, the bars marked
 *   cpu_bench --load  [--sizes 512,2048,4096] [--busy N] [--reps R]
 *       reconstruction (8-connected, histo texture, marker = image - 40), exact
 *       EDT and fill holes (4-connected background) of the histo texture's
 *       tissue mask; each at the default thread count (context threads = 0) and
 *       on one thread, runs alternating, median of R; first idle, then with N
 *       processes busy-looping beside it (default: as many as cores).
 *   cpu_bench --scaling [--scale-sizes 4096,8192] [--threads 1,2,4,...]
 *       reconstruction 8-connected on the histo and the synthetic tissue
 *       inputs: speed-up over one thread and efficiency per thread count.
 */
#define _GNU_SOURCE
#include "iwpp.h"
#include "synth.h"

#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXL 16
#define MAXREPS 61

typedef struct opts {
    int load, scaling;
    int64_t sizes[MAXL];
    int nsizes;
    int64_t scale_sizes[MAXL];
    int nscale;
    int threads[MAXL];
    int nthreads;
    int busy; /* -1: as many as cores */
    int reps;
    double h;
    int ops[3]; /* which of OP_REC, OP_EDT, OP_FILL the load table runs */
    int64_t tile; /* tile size of the default context (0: the library's) */
} opts;

static int cores(void)
{
    cpu_set_t s;
    if (sched_getaffinity(0, sizeof s, &s) == 0) return CPU_COUNT(&s);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

static double loadavg1(void)
{
    double l[1] = {0.0};
    return getloadavg(l, 1) == 1 ? l[0] : -1.0;
}

/* ---- busy processes ------------------------------------------------------------ */

static pid_t busy_pids[256];
static int nbusy;

static void busy_start(int n)
{
    for (int i = 0; i < n && nbusy < 256; ++i) {
        pid_t p = fork();
        if (p == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            volatile unsigned long x = 0;
            for (;;) x++;
        }
        if (p > 0) busy_pids[nbusy++] = p;
    }
    usleep(200000); /* let the scheduler spread them */
}

static void busy_stop(void)
{
    for (int i = 0; i < nbusy; ++i) kill(busy_pids[i], SIGKILL);
    for (int i = 0; i < nbusy; ++i) waitpid(busy_pids[i], NULL, 0);
    nbusy = 0;
}

static void on_signal(int sig)
{
    busy_stop();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* ---- cases --------------------------------------------------------------------- */

enum { OP_REC, OP_EDT, OP_FILL, OP_N };
static const char *OP_NAME[OP_N] = {"rec-dil c8", "edt-exact", "fill-holes c4"};

typedef struct input {
    int64_t n;
    uint8_t *img, *marker, *bin; /* texture, its marker, its tissue mask (0/255) */
    uint8_t *work;               /* marker copy / fill output */
    float *dist;
} input;

static int input_make(input *in, int64_t n, int synthetic, double h)
{
    memset(in, 0, sizeof *in);
    in->n = n;
    const size_t px = (size_t)(n * n);
    in->img = malloc(px);
    in->marker = malloc(px);
    in->bin = malloc(px);
    in->work = malloc(px);
    in->dist = malloc(px * sizeof(float));
    if (!in->img || !in->marker || !in->bin || !in->work || !in->dist) return -1;
    if (synthetic)
        synth_tissue(in->img, IWPP_U8, n, n, 1, 1);
    else if (synth_histo(in->img, n, n, 1))
        return -1;
    synth_sub_sat(in->marker, in->img, IWPP_U8, (int64_t)px, h);
    for (size_t i = 0; i < px; ++i) in->bin[i] = in->img[i] < 215 ? 255 : 0;
    return 0;
}

static void input_free(input *in)
{
    free(in->img);
    free(in->marker);
    free(in->bin);
    free(in->work);
    free(in->dist);
}

/* One timed call of op on ctx; its result is left in in->work (rec, fill) or in->dist (edt). */
static double run_once(iwpp_context *ctx, int op, input *in)
{
    const int64_t n = in->n;
    iwpp_status st = IWPP_OK;
    double t0 = 0.0;
    if (op == OP_REC) {
        memcpy(in->work, in->marker, (size_t)(n * n));
        iwpp_image mk = iwpp_image_2d(in->work, IWPP_U8, n, n);
        iwpp_image ms = iwpp_image_2d(in->img, IWPP_U8, n, n);
        t0 = synth_now_ms();
        st = iwpp_reconstruct(ctx, &mk, &ms, 8, IWPP_BY_DILATION);
    } else if (op == OP_EDT) {
        iwpp_image b = iwpp_image_2d(in->bin, IWPP_U8, n, n);
        iwpp_image d = iwpp_image_2d(in->dist, IWPP_F32, n, n);
        t0 = synth_now_ms();
        st = iwpp_distance_transform(ctx, &b, IWPP_EDT_EXACT, NULL, &d, NULL);
    } else {
        iwpp_image b = iwpp_image_2d(in->bin, IWPP_U8, n, n);
        iwpp_image o = iwpp_image_2d(in->work, IWPP_U8, n, n);
        t0 = synth_now_ms();
        st = iwpp_fill_holes(ctx, &b, 4, &o);
    }
    const double ms = synth_now_ms() - t0;
    if (st != IWPP_OK) {
        fprintf(stderr, "cpu_bench: %s failed: %s\n", OP_NAME[op], iwpp_error_message(ctx));
        busy_stop();
        exit(1);
    }
    return ms;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int mismatches;

/* Result of op (already in in) against a reference copy; counts a mismatch. */
static void check_same(int op, const input *in, const void *ref, const char *what)
{
    const size_t px = (size_t)(in->n * in->n);
    const void *got = op == OP_EDT ? (const void *)in->dist : (const void *)in->work;
    const size_t bytes = op == OP_EDT ? px * sizeof(float) : px;
    if (memcmp(got, ref, bytes) != 0) {
        fprintf(stderr, "*** MISMATCH %s %lld^2 (%s) differs from one thread ***\n", OP_NAME[op],
                (long long)in->n, what);
        mismatches++;
    }
}

typedef struct pair {
    double t1, td, ratio;
    char variant[128];
} pair;

/* Mean time of k calls made back to back. */
static double batch(iwpp_context *c, int op, input *in, int k)
{
    double t = 0.0;
    for (int i = 0; i < k; ++i) t += run_once(c, op, in);
    return t / k;
}

/*
 * One thread against the default count: reps rounds, each timing a batch of
 * calls on one context then on the other (the order alternating), a batch
 * being as many calls as take about 300 ms. On a loaded machine a short call
 * either loses a whole time slice to another process (10-20 ms) or none, and
 * which one does follows the rhythm of the scheduler rather than the code;
 * batches longer than a few slices average that out. Reported: the median
 * over the rounds of each column, and the median of the per-round ratios.
 */
static pair time_pair(iwpp_context *c1, iwpp_context *cd, int op, input *in, int reps, void *ref)
{
    double a[MAXREPS], b[MAXREPS], q[MAXREPS];
    pair p;
    if (reps > MAXREPS) reps = MAXREPS;
    const double est = run_once(c1, op, in); /* warm-up, and the reference */
    memcpy(ref, op == OP_EDT ? (void *)in->dist : (void *)in->work,
           op == OP_EDT ? (size_t)(in->n * in->n) * sizeof(float) : (size_t)(in->n * in->n));
    run_once(cd, op, in);
    check_same(op, in, ref, "default threads");
    int k = est > 0.0 ? (int)(300.0 / est) : 1;
    if (k < 1) k = 1;
    if (k > 1000) k = 1000;
    for (int r = 0; r < reps; ++r) {
        if (r % 2 == 0) {
            a[r] = batch(c1, op, in, k);
            b[r] = batch(cd, op, in, k);
        } else {
            b[r] = batch(cd, op, in, k);
            a[r] = batch(c1, op, in, k);
        }
        q[r] = b[r] / a[r];
    }
    check_same(op, in, ref, "default threads");
    if (getenv("CPU_BENCH_SAMPLES"))
        for (int r = 0; r < reps; ++r)
            fprintf(stderr, "%s %lld round %d (%d calls): t1 %.2f default %.2f\n", OP_NAME[op],
                    (long long)in->n, r, k, a[r], b[r]);
    iwpp_stats s;
    iwpp_context_stats(cd, &s);
    if (!strcmp(s.variant, "tiled-queue"))
        snprintf(p.variant, sizeof p.variant, "%s (%lld tile runs)", s.variant, (long long)s.rounds);
    else
        snprintf(p.variant, sizeof p.variant, "%s", s.variant);
    p.ratio = median(q, reps);
    p.t1 = median(a, reps);
    p.td = median(b, reps);
    return p;
}

static void load_table(const opts *o)
{
    const int nc = cores();
    const int busy = o->busy >= 0 ? o->busy : nc;
    iwpp_context *c1, *cd;
    if (iwpp_context_create(&c1, IWPP_BACKEND_CPU) != IWPP_OK ||
        iwpp_context_create(&cd, IWPP_BACKEND_CPU) != IWPP_OK) {
        fprintf(stderr, "cpu_bench: no CPU context\n");
        exit(1);
    }
    iwpp_context_set_threads(c1, 1);
    iwpp_context_set_threads(cd, 0);
    if (o->tile > 0) iwpp_context_set_tile_size(cd, o->tile);
    printf("\n== default threads vs one thread: %d cores, %d busy-looping processes in the busy "
           "columns; %d rounds, each a batch of calls (about 300 ms) on one thread then at the default\n"
           "count, order alternating; t1, default: median ms per call; ratio: median of the rounds'\n"
           "ratios; input histo (rec), its tissue mask (edt, fill)\n",
           nc, busy, o->reps);
    printf("%-14s %6s | %9s %9s %6s | %9s %9s %6s %5s | %s\n", "op", "size", "idle t1", "default",
           "ratio", "busy t1", "default", "ratio", "bar", "default ran / load avg during busy");
    for (int si = 0; si < o->nsizes; ++si) {
        input in;
        if (input_make(&in, o->sizes[si], 0, o->h)) {
            fprintf(stderr, "cpu_bench: out of memory at %lld^2\n", (long long)o->sizes[si]);
            exit(1);
        }
        void *ref = malloc((size_t)(in.n * in.n) * sizeof(float));
        for (int op = 0; op < OP_N; ++op) {
            if (!o->ops[op]) continue;
            pair idle = time_pair(c1, cd, op, &in, o->reps, ref);
            busy_start(busy);
            pair bz = time_pair(c1, cd, op, &in, o->reps, ref);
            const double la = loadavg1();
            busy_stop();
            const double r = bz.ratio;
            printf("%-14s %6lld | %9.2f %9.2f %6.2f | %9.2f %9.2f %6.2f %5s | %s / %.2f\n",
                   OP_NAME[op], (long long)in.n, idle.t1, idle.td, idle.ratio, bz.t1, bz.td, r,
                   r <= 1.1 ? "ok" : "MISS", bz.variant, la);
            fflush(stdout);
        }
        free(ref);
        input_free(&in);
    }
    iwpp_context_destroy(c1);
    iwpp_context_destroy(cd);
}

static void scaling_table(const opts *o)
{
    const int nc = cores();
    int th[MAXL], nth = 0;
    if (o->nthreads) {
        for (int i = 0; i < o->nthreads; ++i) th[nth++] = o->threads[i];
    } else {
        for (int t = 1; t < nc && nth < MAXL - 1; t *= 2) th[nth++] = t;
        th[nth++] = nc;
    }
    printf("\n== scaling: reconstruction by dilation, 8-connected, marker = image - %.0f, U8; "
           "median of %d runs (ms); idle machine expected (load avg now %.2f)\n",
           o->h, o->reps, loadavg1());
    printf("%-7s %6s %7s %9s %8s %6s %5s %s\n", "input", "size", "threads", "ms", "speedup", "eff",
           "bar", "variant / tile runs / pops");
    for (int synthetic = 0; synthetic <= 1; ++synthetic)
        for (int si = 0; si < o->nscale; ++si) {
            input in;
            if (input_make(&in, o->scale_sizes[si], synthetic, o->h)) {
                fprintf(stderr, "cpu_bench: out of memory at %lld^2\n", (long long)o->scale_sizes[si]);
                exit(1);
            }
            void *ref = malloc((size_t)(in.n * in.n));
            double t1 = 0.0;
            for (int k = 0; k < nth; ++k) {
                iwpp_context *c;
                if (iwpp_context_create(&c, IWPP_BACKEND_CPU) != IWPP_OK) exit(1);
                iwpp_context_set_threads(c, th[k]);
                double v[64];
                int reps = o->reps > 64 ? 64 : o->reps;
                run_once(c, OP_REC, &in);
                if (k == 0) memcpy(ref, in.work, (size_t)(in.n * in.n));
                else check_same(OP_REC, &in, ref, "scaling");
                for (int r = 0; r < reps; ++r) v[r] = run_once(c, OP_REC, &in);
                const double m = median(v, reps);
                if (k == 0) t1 = m;
                iwpp_stats s;
                iwpp_context_stats(c, &s);
                const double sp = t1 / m, eff = sp / th[k];
                const char *bar = "";
                if (!synthetic && th[k] >= 16 && in.n >= 8192) bar = sp >= 10.0 ? "ok" : "MISS";
                else if (!synthetic && th[k] >= 16 && in.n >= 4096) bar = eff >= 0.5 ? "ok" : "MISS";
                printf("%-7s %6lld %7d %9.2f %8.2f %6.2f %5s %s / %lld / %lld\n", synthetic ? "tissue" : "histo",
                       (long long)in.n, th[k], m, sp, eff, bar, s.variant, (long long)s.rounds,
                       (long long)s.pixels_visited);
                fflush(stdout);
                iwpp_context_destroy(c);
            }
            free(ref);
            input_free(&in);
        }
}

static int parse_list(const char *s, int64_t *out, int max)
{
    int n = 0;
    while (*s && n < max) {
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s || v < 1) return -1;
        out[n++] = v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return n;
}

static void usage(void)
{
    printf("usage: cpu_bench [--all | --load | --scaling] [--sizes 512,2048,4096] [--busy N]\n"
           "                 [--scale-sizes 4096,8192] [--threads 1,2,4,8,16] [--reps R] [--h H]\n"
           "                 [--ops rec,edt,fill] [--tile N] [--write-histo N FILE.pgm]\n"
           "  --all       --load and --scaling (the issue-13 tables, bars marked ok / MISS)\n"
           "  --load      default threads vs one thread, idle and with N busy processes (default N = cores)\n"
           "  --scaling   reconstruction speed-up per thread count on the histo and tissue inputs\n"
           "  --write-histo N FILE  write the N x N histo texture as an 8-bit PGM and exit\n");
}

int main(int argc, char **argv)
{
    opts o;
    memset(&o, 0, sizeof o);
    o.busy = -1;
    o.reps = 7;
    o.h = 40.0;
    o.ops[OP_REC] = o.ops[OP_EDT] = o.ops[OP_FILL] = 1;
    o.nsizes = parse_list("512,2048,4096", o.sizes, MAXL);
    o.nscale = parse_list("4096,8192", o.scale_sizes, MAXL);
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--all")) o.load = o.scaling = 1;
        else if (!strcmp(a, "--load")) o.load = 1;
        else if (!strcmp(a, "--scaling")) o.scaling = 1;
        else if (!strcmp(a, "--sizes") && v) { o.nsizes = parse_list(v, o.sizes, MAXL); ++i; }
        else if (!strcmp(a, "--scale-sizes") && v) { o.nscale = parse_list(v, o.scale_sizes, MAXL); ++i; }
        else if (!strcmp(a, "--threads") && v) {
            int64_t t[MAXL];
            o.nthreads = parse_list(v, t, MAXL);
            for (int k = 0; k < o.nthreads; ++k) o.threads[k] = (int)t[k];
            ++i;
        } else if (!strcmp(a, "--busy") && v) { o.busy = atoi(v); ++i; }
        else if (!strcmp(a, "--tile") && v) { o.tile = atoll(v); ++i; }
        else if (!strcmp(a, "--ops") && v) {
            o.ops[OP_REC] = strstr(v, "rec") != NULL;
            o.ops[OP_EDT] = strstr(v, "edt") != NULL;
            o.ops[OP_FILL] = strstr(v, "fill") != NULL;
            ++i;
        }
        else if (!strcmp(a, "--reps") && v) { o.reps = atoi(v); ++i; }
        else if (!strcmp(a, "--h") && v) { o.h = atof(v); ++i; }
        else if (!strcmp(a, "--write-histo") && v && i + 2 < argc) {
            int64_t n = atoll(v);
            uint8_t *img = malloc((size_t)(n * n));
            FILE *f = fopen(argv[i + 2], "wb");
            if (!img || !f || synth_histo(img, n, n, 1)) return 1;
            fprintf(f, "P5\n%lld %lld\n255\n", (long long)n, (long long)n);
            fwrite(img, 1, (size_t)(n * n), f);
            fclose(f);
            free(img);
            return 0;
        } else {
            usage();
            return !strcmp(a, "--help") ? 0 : 1;
        }
    }
    if (o.nsizes < 1 || o.nscale < 1 || o.nthreads < 0 || o.reps < 1) {
        usage();
        return 1;
    }
    if (!o.load && !o.scaling) {
        usage();
        return 1;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    printf("cpu_bench: %d cores (affinity), load average %.2f at start\n", cores(), loadavg1());
    if (o.load) load_table(&o);
    if (o.scaling) scaling_table(&o);
    busy_stop();
    if (mismatches) {
        printf("%d MISMATCH(es)\n", mismatches);
        return 2;
    }
    return 0;
}
