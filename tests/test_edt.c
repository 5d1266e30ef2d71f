/*
 * test_edt.c - iwpp_distance_transform against brute force.
 *
 * EXACT: bit for bit equal to (float)sqrt of the brute-force minimum of the
 * squared distance, summed in the documented order ((dz*hz)^2 + (dy*hy)^2) +
 * (dx*hx)^2 in double, for every spacing.
 * DANIELSSON: never below the exact distance, never above the provable bound
 * (the shortest spacing-weighted 8/26-neighbour step path from a background
 * pixel, oracle_danielsson_bound), and equal where the nearest background
 * pixel is unique along a line (1D images, a single background pixel).
 * nearest_out: a background pixel whose distance is the returned distance;
 * a background pixel's own index on the background; -1 if no background.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "synth.h"

typedef struct ecase {
    iwpp_type type;
    odims d;
    const double *binary;
    const double *spacing; /* NULL = pass NULL (1,1,1) */
    int dyadic;            /* squared distances exact in double: compare bit for bit */
    int dan_exact;         /* Danielsson must equal the exact result here */
    int64_t pad_y, pad_z;
    const char *label;
    uint64_t seed;
} ecase;

static int float_close(float a, float b, int ulps)
{
    if (a == b) return 1;
    if (isnan(a) || isnan(b) || isinf(a) || isinf(b)) return 0;
    float lo = a < b ? a : b, hi = a < b ? b : a;
    for (int i = 0; i < ulps; ++i) lo = nextafterf(lo, INFINITY);
    return lo >= hi;
}

static int run_case(const ecase *c)
{
    int fails = 0;
    odims d = c->d;
    int64_t n = odims_count(d);
    double one[3] = {1, 1, 1};
    const double *sp = c->spacing ? c->spacing : one;
    float *exact = malloc((size_t)n * sizeof(float));
    double *dan_bound = malloc((size_t)n * sizeof(double));
    oracle_edt(c->binary, d, sp, exact);
    oracle_danielsson_bound(c->binary, d, sp, dan_bound);
    int64_t nbg = 0;
    for (int64_t i = 0; i < n; ++i) nbg += c->binary[i] == 0;

    for (int ci = 0; ci < g_ncfg; ++ci)
        for (int method = 0; method < 2; ++method)
            for (int with_nearest = 0; with_nearest < 2; ++with_nearest) {
                iwpp_context *ctx = g_cfg[ci].ctx;
                iwpp_edt_method em = method ? IWPP_EDT_DANIELSSON : IWPP_EDT_EXACT;
                const char *what = fmt("edt %s %s%s %lldx%lldx%lld spacing=(%g,%g,%g)%s %s pad=%lld/%lld seed=%llu [%s]",
                                       method ? "danielsson" : "exact", iwpp_type_name(c->type),
                                       with_nearest ? " +nearest" : "", (long long)d.w, (long long)d.h,
                                       (long long)d.d, sp[0], sp[1], sp[2], c->spacing ? "" : "(NULL)",
                                       c->label, (long long)c->pad_y, (long long)c->pad_z,
                                       (unsigned long long)c->seed, g_cfg[ci].name);
                timg bin, dist, near;
                memset(&near, 0, sizeof near);
                if (!timg_init(&bin, c->type, d, c->pad_y, c->pad_z) ||
                    !timg_init(&dist, IWPP_F32, d, c->pad_y ? c->pad_y + 2 : 0, c->pad_z ? c->pad_z + 1 : 0) ||
                    (with_nearest && !timg_init(&near, IWPP_I64, d, c->pad_y, c->pad_z ? c->pad_z + 3 : 0)))
                    fail_msg("out of memory in the test");
                timg_load(&bin, c->binary);
                unsigned char *snap = malloc(bin.bytes);
                memcpy(snap, bin.alloc, bin.bytes);

                iwpp_status st = iwpp_distance_transform(ctx, &bin.v, em, c->spacing, &dist.v,
                                                         with_nearest ? &near.v : NULL);
                int bad = check_ok(st, ctx, what);
                if (!bad) bad = check_padding(&dist, what) || (with_nearest && check_padding(&near, what));
                if (!bad && !timg_bytes_equal(&bin, snap)) {
                    print_error("FAIL: %s: the binary input was modified\n", what);
                    bad = 1;
                }
                int64_t first = -1;
                float fgot = 0, fexp = 0;
                int64_t fnear = 0;
                const char *why = "";
                for (int64_t z = 0; !bad && z < d.d; ++z)
                    for (int64_t y = 0; y < d.h; ++y)
                        for (int64_t x = 0; x < d.w; ++x) {
                            int64_t p = x + d.w * (y + d.h * z);
                            float g = (float)timg_get(&dist, x, y, z);
                            float e = exact[p];
                            int ok;
                            if (method == 0 || c->dan_exact) {
                                if (method == 0) ok = memcmp(&g, &e, sizeof g) == 0;
                                else ok = float_close(g, e, 4);
                                why = method == 0 ? "not the exact distance" : "Danielsson must be exact here";
                            } else {
                                ok = isinf(e) ? isinf(g) && g > 0
                                              : (double)g >= (double)e * (1.0 - 1e-6) - 1e-6 &&
                                                    (double)g <= dan_bound[p] * (1.0 + 1e-6) + 1e-6;
                                why = "outside the Danielsson bound";
                            }
                            int64_t q = 0;
                            if (ok && with_nearest) {
                                q = (int64_t)timg_get(&near, x, y, z);
                                if (nbg == 0) {
                                    ok = q == -1;
                                    why = "nearest must be -1 without background";
                                } else if (q < 0 || q >= n || c->binary[q] != 0) {
                                    ok = 0;
                                    why = "nearest is not a background pixel";
                                } else if (c->binary[p] == 0 && q != p) {
                                    ok = 0;
                                    why = "a background pixel's nearest must be itself";
                                } else {
                                    float dq = (float)oracle_index_distance(p, q, d, sp);
                                    ok = (method == 0 && c->dyadic) ? dq == g : float_close(dq, g, 4);
                                    why = "the distance to the returned nearest pixel differs from dist";
                                    if (ok && method == 0) {
                                        ok = dq == e || float_close(dq, e, 4);
                                        why = "the returned nearest pixel is not a nearest one";
                                    }
                                }
                            }
                            if (!ok && first < 0) {
                                first = p;
                                fgot = g;
                                fexp = e;
                                fnear = q;
                                print_error("FAIL: %s: %s at (x=%lld, y=%lld, z=%lld): got dist %.9g, exact %.9g, nearest %lld\n",
                                            what, why, (long long)x, (long long)y, (long long)z, (double)fgot,
                                            (double)fexp, (long long)fnear);
                                bad = 1;
                            }
                        }
                if (bad) note_failure(&fails);
                free(snap);
                timg_free(&bin);
                timg_free(&dist);
                if (with_nearest) timg_free(&near);
            }
    free(exact);
    free(dan_bound);
    return fails;
}

static const double SP_ONE[3] = {1, 1, 1};
static const double SP_ANISO[3] = {0.5, 2.0, 1.25};
static const double SP_ANISO2[3] = {1.25, 0.75, 3.0};
static const double SP_MICRO[3] = {0.1625, 0.1625, 0.4}; /* not dyadic */

static void fg_values(iwpp_type t, double out[3])
{
    /* foreground is any nonzero value, negative floats included */
    if (t == IWPP_U8) { out[0] = 255; out[1] = 1; out[2] = 7; }
    else if (t == IWPP_U16) { out[0] = 65535; out[1] = 1; out[2] = 300; }
    else { out[0] = 1.0; out[1] = -2.5; out[2] = 1e-30; }
}

static int random_cases(uint64_t seed, const odims *sizes, int nsizes)
{
    static const iwpp_type types[3] = {IWPP_U8, IWPP_U16, IWPP_F32};
    const double *sps[4] = {NULL, SP_ONE, SP_ANISO, SP_ANISO2};
    static const double pfg[3] = {0.5, 0.9, 0.995};
    int fails = 0;
    for (int s = 0; s < nsizes; ++s)
        for (int t = 0; t < 3; ++t)
            for (int p = 0; p < 3; ++p) {
                odims d = sizes[s];
                trng r;
                trng_seed(&r, ++seed);
                double fg[3];
                fg_values(types[t], fg);
                double *b = vol_alloc(d);
                gen_binary(&r, d, pfg[p], fg[p], b);
                ecase c = {types[t], d, b, sps[(s + t + p) % 4], 1, 0, 0, 0, "random", seed};
                fails += run_case(&c);
                free(b);
            }
    return fails;
}

static void test_random_2d(void **state)
{
    (void)state;
    static const odims sizes[] = {{1, 1, 1},   {1, 29, 1},  {29, 1, 1},  {2, 3, 1},   {13, 7, 1},
                                  {15, 17, 1}, {16, 16, 1}, {33, 31, 1}, {64, 64, 1}, {64, 5, 1}};
    assert_int_equal(random_cases(100, sizes, sizeof sizes / sizeof sizes[0]), 0);
}

static void test_random_3d(void **state)
{
    (void)state;
    static const odims sizes[] = {{1, 1, 5}, {5, 4, 3}, {9, 1, 7}, {7, 8, 1}, {16, 16, 16}, {17, 15, 6}};
    assert_int_equal(random_cases(200, sizes, sizeof sizes / sizeof sizes[0]), 0);
}

/* Long lines: GPU passes cut lines into segments (pass A, 128 planes) and rows into bands and
 * superbands (pass C, 32 and 1024 pixels; in 3D pass B too, along y, in tiles of columns);
 * these cross those boundaries. */
static void test_long_lines(void **state)
{
    (void)state;
    static const odims sizes[] = {{1100, 3, 1}, {7, 300, 1}, {5, 4, 260}, {3, 1100, 2}, {40, 70, 3}};
    assert_int_equal(random_cases(700, sizes, sizeof sizes / sizeof sizes[0]), 0);
}

/* OpenCL pass C (and pass B) for lines too long for local memory, forced on small images:
 * ocl.edt_rows=wide (band tables in global memory, a row over several work-groups of 64
 * bands: 2100 and 4200 pixels cross group and superband boundaries), ocl.edt_local_mem
 * (the automatic choice under a small local memory: wide rows, and one work-item per column in
 * 3D) and ocl.edt_rows=serial (one work-item per row). */
static void test_wide_rows(void **state)
{
    (void)state;
    if (g_backend != IWPP_BACKEND_OPENCL) skip();
    static const odims wide[] = {{2100, 3, 1}, {4200, 2, 1}, {300, 5, 1}, {70, 4, 3}, {2200, 2, 2}};
    /* {160, 130, 2}: wide rows and the column fallback in one call (separate work buffers) */
    static const odims small_lm[] = {{500, 6, 1}, {400, 3, 2}, {9, 300, 2}, {160, 130, 2}};
    static const odims serial[] = {{300, 5, 1}, {70, 4, 3}};
    int fails = 0;
    harness_tune("ocl.edt_rows", "wide");
    fails += random_cases(800, wide, sizeof wide / sizeof wide[0]);
    harness_tune("ocl.edt_rows", NULL);
    harness_tune("ocl.edt_local_mem", "1024");
    fails += random_cases(900, small_lm, sizeof small_lm / sizeof small_lm[0]);
    harness_tune("ocl.edt_local_mem", NULL);
    harness_tune("ocl.edt_rows", "serial");
    fails += random_cases(1000, serial, sizeof serial / sizeof serial[0]);
    harness_tune("ocl.edt_rows", NULL);
    assert_int_equal(fails, 0);
}

/* CUDA passes C and B (3D) for lines too long for one block's shared memory: band tables in
 * global memory, a line over several blocks (cuda/edt.cu, edt_wbuild / edt_wquery).
 * cuda.edt_wide=N forces that path on every line with segments of N pixels: 64 and 96 put
 * 2 and 3 bands in a segment, so these sizes cross segment, band and superband (1024 pixel)
 * boundaries in rows and, in 3D, in columns along y; then rows of 70000 pixels and columns of
 * 30000 (3D), too long for shared memory on any current GPU, take it without the switch, and
 * cuda.edt_wide=0 gives them the one-thread-per-line kernels. */
static int cuda_wide_sparse(uint64_t seed, odims d, const double *sp)
{
    trng r;
    trng_seed(&r, seed);
    double *b = vol_alloc(d);
    gen_binary(&r, d, 0.998, 1.0, b);
    b[odims_count(d) / 3] = 0.0;
    ecase c = {IWPP_U8, d, b, sp, sp != SP_MICRO, 0, 0, 0, "long lines, sparse background", seed};
    int fails = run_case(&c);
    free(b);
    return fails;
}

/* the path the exact transform takes on an image of size d (one background pixel), from the
 * variant the first configuration's context reports: it must (present) or must not contain want
 * (used on OpenCL too) */
static int cuda_wide_variant(odims d, const char *want, int present)
{
    double *b = vol_alloc(d);
    gen_const(d, 1.0, b);
    b[0] = 0.0;
    timg bin, dist;
    if (!timg_init(&bin, IWPP_U8, d, 0, 0) || !timg_init(&dist, IWPP_F32, d, 0, 0)) fail_msg("out of memory in the test");
    timg_load(&bin, b);
    iwpp_context *ctx = g_cfg[0].ctx;
    const char *what = fmt("edt exact %lldx%lldx%lld [%s]", (long long)d.w, (long long)d.h, (long long)d.d, g_cfg[0].name);
    int bad = check_ok(iwpp_distance_transform(ctx, &bin.v, IWPP_EDT_EXACT, NULL, &dist.v, NULL), ctx, what);
    iwpp_stats s;
    if (!bad && (iwpp_context_stats(ctx, &s) != IWPP_OK || !strstr(s.variant, want) != !present)) {
        print_error("FAIL: %s: expected the variant %s \"%s\", got \"%s\"\n", what,
                    present ? "to contain" : "not to contain", want, s.variant);
        bad = 1;
    }
    timg_free(&bin);
    timg_free(&dist);
    free(b);
    return bad;
}

static void test_cuda_wide_lines(void **state)
{
    (void)state;
    if (g_backend != IWPP_BACKEND_CUDA) skip();
    static const odims forced[] = {{2100, 3, 1}, {300, 5, 1}, {33, 2, 1}, {70, 4, 3}, {5, 1100, 2}, {2, 2, 40}};
    const odims wide_row = {70000, 2, 1}, tall_col = {3, 30000, 2};
    int fails = 0;
    harness_tune("cuda.edt_wide", "64");
    fails += random_cases(1100, forced, sizeof forced / sizeof forced[0]);
    fails += cuda_wide_sparse(1150, (odims){4000, 2, 1}, SP_MICRO);
    fails += cuda_wide_sparse(1151, (odims){3, 3000, 2}, SP_ANISO);
    fails += cuda_wide_variant((odims){40, 3, 1}, "/wide-rows", 1);
    fails += cuda_wide_variant((odims){4, 50, 3}, "/wide-rows/wide-cols", 1);
    harness_tune("cuda.edt_wide", "96");
    fails += random_cases(1200, forced, 5);
    harness_tune("cuda.edt_wide", NULL);
    fails += cuda_wide_sparse(1300, wide_row, NULL);
    fails += cuda_wide_sparse(1301, wide_row, SP_ANISO2);
    fails += cuda_wide_sparse(1302, tall_col, SP_ANISO);
    fails += cuda_wide_variant(wide_row, "/wide-rows", 1);
    fails += cuda_wide_variant(tall_col, "/merged-rows/wide-cols", 1);
    harness_tune("cuda.edt_bands", "0"); /* 2D with unit spacing: else the column bands */
    fails += cuda_wide_variant((odims){400, 300, 1}, "/merged-rows", 1);
    fails += cuda_wide_variant((odims){29000, 2, 1}, "/merged-rows", 1); /* ~29700 fit on Hopper */
    harness_tune("cuda.edt_bands", NULL);
    harness_tune("cuda.edt_wide", "0");
    fails += cuda_wide_sparse(1303, wide_row, SP_ANISO);
    fails += cuda_wide_sparse(1304, tall_col, NULL);
    fails += cuda_wide_variant(wide_row, "wide", 0);
    fails += cuda_wide_variant(tall_col, "wide", 0);
    harness_tune("cuda.edt_wide", NULL);
    assert_int_equal(fails, 0);
}

static void test_non_dyadic_spacing(void **state)
{
    (void)state;
    int fails = 0;
    static const odims sizes[] = {{31, 29, 1}, {12, 11, 9}};
    for (int s = 0; s < 2; ++s) {
        trng r;
        trng_seed(&r, 300 + (uint64_t)s);
        double *b = vol_alloc(sizes[s]);
        gen_binary(&r, sizes[s], 0.97, 1.0, b);
        ecase c = {IWPP_U8, sizes[s], b, SP_MICRO, 0, 0, 0, 0, "calibrated spacing", 300 + (uint64_t)s};
        fails += run_case(&c);
        free(b);
    }
    assert_int_equal(fails, 0);
}

static void test_degenerate(void **state)
{
    (void)state;
    int fails = 0;
    static const odims sizes[] = {{1, 1, 1}, {1, 17, 1}, {17, 1, 1}, {23, 19, 1}, {6, 5, 4}};
    static const iwpp_type types[3] = {IWPP_U8, IWPP_U16, IWPP_F32};
    for (int s = 0; s < 5; ++s)
        for (int t = 0; t < 3; ++t) {
            odims d = sizes[s];
            int64_t n = odims_count(d);
            double *b = vol_alloc(d);
            double fg[3];
            fg_values(types[t], fg);
            /* all background */
            gen_const(d, 0.0, b);
            ecase c = {types[t], d, b, SP_ANISO, 1, 1, 0, 0, "all background", 0};
            fails += run_case(&c);
            /* no background: +inf and -1 */
            gen_const(d, fg[1], b);
            c.label = "no background";
            fails += run_case(&c);
            /* a single background pixel: a corner, then the middle */
            b[n - 1] = 0.0;
            c.label = "single background pixel (last)";
            c.spacing = NULL;
            fails += run_case(&c);
            b[n - 1] = fg[1];
            b[n / 2] = 0.0;
            c.label = "single background pixel (middle)";
            c.spacing = SP_ANISO2;
            fails += run_case(&c);
            /* 1D lines: Danielsson is exact there */
            if (d.w == 1 || d.h == 1) {
                trng r;
                trng_seed(&r, 400 + (uint64_t)s);
                gen_binary(&r, d, 0.8, fg[0], b);
                c.label = "1D random";
                c.seed = 400 + (uint64_t)s;
                fails += run_case(&c);
            }
            free(b);
        }
    assert_int_equal(fails, 0);
}

static void test_strided(void **state)
{
    (void)state;
    int fails = 0;
    static const odims sizes[] = {{13, 7, 1}, {9, 8, 7}, {1, 6, 2}};
    for (int s = 0; s < 3; ++s) {
        trng r;
        trng_seed(&r, 500 + (uint64_t)s);
        double *b = vol_alloc(sizes[s]);
        gen_binary(&r, sizes[s], 0.85, 3.0, b);
        ecase c = {IWPP_U16, sizes[s], b, SP_ANISO, 1, 0, 4, sizes[s].d > 1 ? 6 : 0, "strided", 500 + (uint64_t)s};
        fails += run_case(&c);
        c.type = IWPP_F32;
        c.pad_y = 1;
        fails += run_case(&c);
        free(b);
    }
    assert_int_equal(fails, 0);
}

/* Shapes with many equidistant background pixels (ties) and thin structures. */
static void test_shapes(void **state)
{
    (void)state;
    int fails = 0;
    odims d2 = {41, 37, 1};
    double *b = vol_alloc(d2);
    /* a disc of foreground: ties everywhere along the diagonals */
    for (int64_t y = 0; y < d2.h; ++y)
        for (int64_t x = 0; x < d2.w; ++x) {
            double dx = (double)x - 20, dy = (double)y - 18;
            b[x + d2.w * y] = dx * dx + dy * dy <= 16.5 * 16.5 ? 1 : 0;
        }
    ecase c = {IWPP_U8, d2, b, NULL, 1, 0, 0, 0, "disc", 0};
    fails += run_case(&c);
    /* the spiral's walls as background: long thin structures */
    gen_spiral(d2, b);
    c.label = "spiral corridors";
    c.spacing = SP_ANISO;
    fails += run_case(&c);
    free(b);
    /* 3D: a ball, and a maze */
    odims d3 = {15, 14, 13};
    b = vol_alloc(d3);
    for (int64_t z = 0; z < d3.d; ++z)
        for (int64_t y = 0; y < d3.h; ++y)
            for (int64_t x = 0; x < d3.w; ++x) {
                double dx = (double)x - 7, dy = (double)y - 6.5, dz = (double)z - 6;
                b[x + d3.w * (y + d3.h * z)] = dx * dx + dy * dy + dz * dz <= 36 ? 1 : 0;
            }
    c.d = d3;
    c.binary = b;
    c.label = "ball";
    c.spacing = SP_ANISO2;
    fails += run_case(&c);
    trng r;
    trng_seed(&r, 600);
    gen_maze(&r, d3, b);
    c.label = "maze";
    c.spacing = NULL;
    c.seed = 600;
    fails += run_case(&c);
    free(b);
    assert_int_equal(fails, 0);
}

/* Every input family of the benchmark (bench/synth.c: lines at 0/1/45/89 degrees, crossing
 * diagonals, circles up to radius side, a disk, a corner pixel, a background row / column,
 * checkerboards, random background from 1e-6 to 0.5, nuclei) at small sizes: distances bit for
 * bit equal to the brute-force oracle where that is cheap, else to the CPU backend (itself checked
 * against the oracle above); nearest indices are background pixels at exactly that distance. The
 * sizes give rows of 7, 35 and 66 bands (3 to 7 merge levels of the GPU row pass), and in 3D
 * columns of more than one band. On a GPU the row pass (3D: and the column pass) must be the
 * merged-envelope one. */
/* The older row and column passes (banded query over band tables), which the plan keeps for
 * comparisons (tuning keys {cuda,ocl}.edt_rows=banded, {cuda,ocl}.edt_cols=banded): still exact. */
static void test_banded_paths(void **state)
{
    (void)state;
    if (g_backend == IWPP_BACKEND_CPU) skip();
    const int ocl = g_backend == IWPP_BACKEND_OPENCL;
    static const odims sizes[] = {{300, 5, 1}, {1100, 3, 1}, {70, 40, 3}, {17, 70, 4}};
    harness_tune(ocl ? "ocl.edt_rows" : "cuda.edt_rows", "banded");
    harness_tune(ocl ? "ocl.edt_cols" : "cuda.edt_cols", "banded");
    int fails = random_cases(1400, sizes, sizeof sizes / sizeof sizes[0]);
    fails += cuda_wide_variant((odims){70, 40, 3}, "/banded-rows/banded-cols", 1);
    harness_tune(ocl ? "ocl.edt_rows" : "cuda.edt_rows", NULL);
    harness_tune(ocl ? "ocl.edt_cols" : "cuda.edt_cols", NULL);
    harness_tune(ocl ? "ocl.edt_lines" : "cuda.edt_lines", "0");
    fails += cuda_wide_variant((odims){70, 40, 3}, "/merged-rows/merged-cols", 1);
    harness_tune(ocl ? "ocl.edt_lines" : "cuda.edt_lines", NULL);
    assert_int_equal(fails, 0);
}

/* The backends whose exact EDT takes 2D images with unit spacing by column bands. */
static int colbands_backend(void) { return g_backend == IWPP_BACKEND_CUDA || g_backend == IWPP_BACKEND_OPENCL; }

/* The column bands ({cuda,ocl}.edt_bands, 2D with unit spacing; the default there): bands of a
 * single row (merges of every band), of a few rows and colour segments that do not line up with
 * them, the most bands a column can have, one band (no merge); random images of every type and
 * the other spacings (which keep the merged rows) through random_cases, with nearest indices. */
static void test_colbands(void **state)
{
    (void)state;
    if (!colbands_backend()) skip();
    const char *key = g_backend == IWPP_BACKEND_OPENCL ? "ocl.edt_bands" : "cuda.edt_bands";
    static const odims sizes[] = {{37, 70, 1}, {300, 9, 1}, {5, 130, 1}, {1, 40, 1}, {64, 64, 1}};
    static const char *const forced[] = {"64,1", "3,5", "7,2", "1,7", "13,64", NULL};
    int fails = 0;
    for (int k = 0; k < 6; ++k) {
        harness_tune(key, forced[k]);
        fails += random_cases(1700 + 100 * (uint64_t)k, sizes, sizeof sizes / sizeof sizes[0]);
    }
    fails += cuda_wide_variant((odims){300, 200, 1}, "edt-exact-colbands/int", 1);
    harness_tune(key, "0");
    fails += cuda_wide_variant((odims){300, 200, 1}, "colbands", 0);
    fails += cuda_wide_variant((odims){300, 200, 1}, "/merged-rows", 1);
    harness_tune(key, NULL);
    assert_int_equal(fails, 0);
}

/* The GPU backends' one-thread-per-line passes ({cuda,ocl}.edt_lines; unit spacing only, the
 * default for 3D): rows that end inside a run (CUDA: 32, OpenCL: a tile of 64) and rows of many
 * runs (pass X), rows wide enough for CUDA's one-warp blocks, 2D images where the key asks for
 * them too; the other spacings of random_cases must keep the merged path. */
static void test_lines_path(void **state)
{
    (void)state;
    if (g_backend == IWPP_BACKEND_CPU) skip();
    const char *key = g_backend == IWPP_BACKEND_OPENCL ? "ocl.edt_lines" : "cuda.edt_lines";
    static const odims sizes3[] = {{33, 70, 5}, {1500, 3, 4}, {5, 2, 300}};
    static const odims sizes2[] = {{2100, 9, 1}, {37, 300, 1}, {1, 40, 1}};
    int fails = random_cases(1500, sizes3, sizeof sizes3 / sizeof sizes3[0]);
    fails += cuda_wide_sparse(1550, (odims){30000, 2, 2}, NULL); /* pass X in one-warp blocks */
    fails += cuda_wide_variant((odims){33, 70, 5}, "edt-exact-lines/int", 1);
    fails += cuda_wide_variant((odims){2100, 9, 1}, "lines", 0);
    harness_tune(key, "1");
    fails += random_cases(1600, sizes2, sizeof sizes2 / sizeof sizes2[0]);
    fails += cuda_wide_variant((odims){2100, 9, 1}, "edt-exact-lines/int", 1);
    harness_tune(key, "0");
    fails += cuda_wide_variant((odims){33, 70, 5}, "lines", 0);
    harness_tune(key, NULL);
    assert_int_equal(fails, 0);
}

/* (float)sqrt of ((dz*hz)^2 + (dy*hy)^2) + (dx*hx)^2: the documented order, so a nearest site
 * gives exactly the returned distance */
/* Outputs of 1 MiB and more (distances of 512 x 512 pixels; nearest indices twice that), two
 * sizes in turn on one context: the GPU backends hand a freed image buffer to the next image of
 * the same size (OpenCL: opencl/backend.c's pool_keep; CUDA: its stream-ordered pool), so later
 * calls get buffers that held an earlier call's images and results; every result must still be
 * the exact one (or within Danielsson's bound). A few background pixels keep the brute-force
 * oracle short. */
static void test_buffer_reuse(void **state)
{
    (void)state;
    static const odims sizes[] = {{512, 512, 1}, {520, 510, 1}, {512, 512, 1}};
    trng r;
    trng_seed(&r, 4242);
    int fails = 0;
    for (int i = 0; i < 3; ++i) {
        double *b = vol_alloc(sizes[i]);
        gen_binary(&r, sizes[i], 0.9998, 1.0, b);
        b[odims_count(sizes[i]) / 2 + 7 * (int64_t)i] = 0.0;
        ecase c = {IWPP_U8, sizes[i], b, NULL, 1, 0, 0, 0, "outputs of 1 MiB and more, buffers kept between calls", 4242 + (uint64_t)i};
        fails += run_case(&c);
        free(b);
    }
    assert_int_equal(fails, 0);
}

/* Staged transfers (cuda/device.cu, opencl/backend.c) forced for every size, with chunks of 4 KiB:
 * hundreds of chunks, the short ones at both ends, views with padded rows and slices. */
static void test_staged_transfers(void **state)
{
    (void)state;
    if (g_backend == IWPP_BACKEND_CPU) skip();
    harness_tune("ocl.stage", "0");
    harness_tune("cuda.stage_min", "0");
    static const odims sizes[] = {{700, 300, 1}, {129, 67, 5}, {1, 1, 1}};
    trng r;
    trng_seed(&r, 5150);
    int fails = 0;
    static const iwpp_type types[3] = {IWPP_U8, IWPP_U16, IWPP_F32};
    /* 4 KiB chunks, and the smallest a chunk may be (100 is raised to 128 bytes: the bits
       upload packs 1024 pixels a chunk at the least) */
    static const char *const chunks[2] = {"4K", "100"};
    for (int ch = 0; ch < 2; ++ch) {
        harness_tune("ocl.stage_chunk", chunks[ch]);
        harness_tune("cuda.stage_chunk", chunks[ch]);
        for (int i = ch; i < 3; ++i) /* (the smallest chunks on the smaller images: thousands of chunks) */
            for (int64_t pad = 0; pad <= 3; pad += 3) {
                double *b = vol_alloc(sizes[i]);
                gen_binary(&r, sizes[i], 0.99, 1.0, b);
                /* unpadded views of the exact EDT go up as bits of "!= 0" (OpenCL's ocl_edt_views) */
                ecase c = {types[(i + (int)pad) % 3], sizes[i], b, NULL, 1, 0, pad, pad,
                           ch == 0 ? "staged transfers, 4 KiB chunks" : "staged transfers, 128-byte chunks",
                           5150 + (uint64_t)i};
                fails += run_case(&c);
                free(b);
            }
    }
    harness_tune("ocl.stage", NULL);
    harness_tune("ocl.stage_chunk", NULL);
    harness_tune("cuda.stage_min", NULL);
    harness_tune("cuda.stage_chunk", NULL);
    assert_int_equal(fails, 0);
}

static float site_distance(int64_t a, int64_t b, odims d, const double sp[3])
{
    const double tx = (double)(a % d.w - b % d.w) * sp[0];
    const double ty = (double)((a / d.w) % d.h - (b / d.w) % d.h) * sp[1];
    const double tz = (double)(a / (d.w * d.h) - b / (d.w * d.h)) * sp[2];
    return (float)sqrt((tz * tz + ty * ty) + tx * tx);
}

static int family_case(const char *fam, odims d, const double *sp, iwpp_context *cpu)
{
    const int64_t n = odims_count(d);
    uint8_t *img = malloc((size_t)n);
    double *bin = vol_alloc(d);
    float *want = malloc((size_t)n * sizeof(float)), *got = malloc((size_t)n * sizeof(float));
    int64_t *near = malloc((size_t)n * sizeof(int64_t));
    if (!img || !want || !got || !near) fail_msg("out of memory in the test");
    if (synth_edt_family(img, fam, d.w, d.h, d.d, 7) != 0) fail_msg("unknown family %s", fam);
    int64_t nbg = 0;
    for (int64_t i = 0; i < n; ++i) {
        bin[i] = img[i];
        nbg += img[i] == 0;
    }
    const double one[3] = {1, 1, 1};
    const double *s = sp ? sp : one;
    iwpp_image vb = d.d > 1 ? iwpp_image_3d(img, IWPP_U8, d.w, d.h, d.d) : iwpp_image_2d(img, IWPP_U8, d.w, d.h);
    iwpp_image vw = d.d > 1 ? iwpp_image_3d(want, IWPP_F32, d.w, d.h, d.d) : iwpp_image_2d(want, IWPP_F32, d.w, d.h);
    iwpp_image vg = d.d > 1 ? iwpp_image_3d(got, IWPP_F32, d.w, d.h, d.d) : iwpp_image_2d(got, IWPP_F32, d.w, d.h);
    iwpp_image vn = d.d > 1 ? iwpp_image_3d(near, IWPP_I64, d.w, d.h, d.d) : iwpp_image_2d(near, IWPP_I64, d.w, d.h);
    const char *ref = "oracle";
    int bad = 0;
    if ((double)n * (double)nbg <= 4e7) {
        oracle_edt(bin, d, s, want);
    } else {
        ref = "cpu backend";
        bad = check_ok(iwpp_distance_transform(cpu, &vb, IWPP_EDT_EXACT, sp, &vw, NULL), cpu, "cpu reference");
    }
    iwpp_context *ctx = g_cfg[0].ctx;
    for (int with_near = 0; with_near < 2 && !bad; ++with_near) {
        const char *what = fmt("edt exact family %s %lldx%lldx%lld spacing=(%g,%g,%g)%s vs %s [%s]", fam,
                               (long long)d.w, (long long)d.h, (long long)d.d, s[0], s[1], s[2],
                               with_near ? " +nearest" : "", ref, g_cfg[0].name);
        bad = check_ok(iwpp_distance_transform(ctx, &vb, IWPP_EDT_EXACT, sp, &vg, with_near ? &vn : NULL), ctx, what);
        iwpp_stats st;
        /* a GPU backend, unit spacing: 3D one thread per line ({cuda,ocl}.edt_lines), 2D column
         * bands ({cuda,ocl}.edt_bands) */
        const int lines = d.d > 1 && !sp, bands = d.d == 1 && !sp && colbands_backend();
        if (!bad && g_backend != IWPP_BACKEND_CPU &&
            (iwpp_context_stats(ctx, &st) != IWPP_OK ||
             (lines   ? !strstr(st.variant, "edt-exact-lines")
              : bands ? !strstr(st.variant, "edt-exact-colbands")
                      : !strstr(st.variant, "/merged-rows") || (d.d > 1 && !strstr(st.variant, "/merged-cols"))))) {
            print_error("FAIL: %s: the passes are not the %s ones (variant \"%s\")\n", what,
                        lines ? "one-thread-per-line" : bands ? "column-band" : "merged-envelope", st.variant);
            bad = 1;
        }
        for (int64_t i = 0; i < n && !bad; ++i) {
            if (memcmp(&got[i], &want[i], sizeof(float)) != 0) {
                print_error("FAIL: %s: pixel %lld: got %.9g, want %.9g\n", what, (long long)i, (double)got[i],
                            (double)want[i]);
                bad = 1;
            } else if (with_near) {
                const int64_t q = near[i];
                if (nbg == 0 ? q != -1
                             : (q < 0 || q >= n || img[q] != 0 || site_distance(i, q, d, s) != got[i])) {
                    print_error("FAIL: %s: pixel %lld: nearest %lld is not a background pixel at distance %.9g\n",
                                what, (long long)i, (long long)q, (double)got[i]);
                    bad = 1;
                }
            }
        }
    }
    free(img);
    free(bin);
    free(want);
    free(got);
    free(near);
    return bad;
}

static void test_families(void **state)
{
    (void)state;
    /* Under an emulator (the linux-aarch64 and windows-x86_64 suites run under qemu and wine,
       CPU only) the brute-force checks of every family take longer than the test's limit; the
       families are there for the GPU paths, which those suites do not have. */
    if (getenv("IWPP_TEST_EMULATED")) skip();
    static const odims sizes[] = {{200, 150, 1}, {1100, 40, 1}, {2100, 9, 1}, {37, 70, 1}, {40, 36, 20}, {70, 9, 5}};
    const double *sps[3] = {NULL, SP_ANISO, SP_MICRO};
    iwpp_context *cpu = NULL;
    if (iwpp_context_create(&cpu, IWPP_BACKEND_CPU) != IWPP_OK) fail_msg("no CPU context");
    int fails = 0;
    for (int si = 0; si < (int)(sizeof sizes / sizeof sizes[0]); ++si)
        for (int f = 0; f < synth_edt_family_count(); ++f)
            fails += family_case(synth_edt_family_name(f), sizes[si], sps[(si + f) % 3], cpu);
    iwpp_context_destroy(cpu);
    assert_int_equal(fails, 0);
}

/* The Danielsson propagation's phases on the GPU backends: global rounds alone
 * ({cuda,ocl}.dan_switch huge), the block / work-group queues from the start (0), and both with
 * queues (and CUDA's round lists) so small that they overflow and are re-seeded from the partial
 * result; every queue variant. */
static void dan_switch(const char *v)
{
    harness_tune("cuda.dan_switch", v);
    harness_tune("ocl.dan_switch", v);
}

/* {cuda,ocl}.dan_tiles: the tile side of the Danielsson propagation by tiles; "0": the queues */
static void dan_tiles(const char *v)
{
    harness_tune("cuda.dan_tiles", v);
    harness_tune("ocl.dan_tiles", v);
}

static void test_danielsson_phases(void **state)
{
    (void)state;
    if (g_backend == IWPP_BACKEND_CPU) skip();
    dan_tiles("0");
    static const odims sizes[] = {{64, 64, 1}, {33, 70, 1}, {17, 15, 6}};
    static const struct {
        iwpp_queue_variant variant;
        const char *switch_at;
        int64_t capacity;
    } runs[] = {{IWPP_QUEUE_MULTILEVEL, "4", 0},  {IWPP_QUEUE_MULTILEVEL, "100000000", 0},
                {IWPP_QUEUE_MULTILEVEL, "0", 16}, {IWPP_QUEUE_ATOMIC, "0", 16},
                {IWPP_QUEUE_PREFIXSUM, "0", 16},  {IWPP_QUEUE_ATOMIC, "0", 0},
                {IWPP_QUEUE_PREFIXSUM, "0", 0},   {IWPP_QUEUE_MULTILEVEL, "100000000", 16}};
    int fails = 0;
    for (int r = 0; r < (int)(sizeof runs / sizeof runs[0]); ++r) {
        for (int i = 0; i < g_ncfg; ++i) {
            assert_int_equal(iwpp_context_set_queue_variant(g_cfg[i].ctx, runs[r].variant), IWPP_OK);
            assert_int_equal(iwpp_context_set_queue_capacity(g_cfg[i].ctx, runs[r].capacity), IWPP_OK);
        }
        dan_switch(runs[r].switch_at);
        fails += random_cases(1700 + 100 * (uint64_t)r, sizes, sizeof sizes / sizeof sizes[0]);
    }
    /* OpenCL: sites as linear indices (images of 2^31 pixels and more), queues from the start */
    harness_tune("ocl.dan_linear", "1");
    dan_switch("0");
    fails += random_cases(2700, sizes, sizeof sizes / sizeof sizes[0]);
    harness_tune("ocl.dan_linear", NULL);
    for (int i = 0; i < g_ncfg; ++i) assert_int_equal(iwpp_context_set_queue_capacity(g_cfg[i].ctx, 16), IWPP_OK);
    /* one background pixel in a corner, queues of 16 items: the re-seeding must run. On OpenCL
     * from the work-group queues. On CUDA from the global rounds, whose lists then hold 16 items
     * too: CUDA counts a re-run only where the wavefront collected after an overflow is not
     * empty, and after a block queue's overflow the kept items finish a one-site image alone. */
    const odims d = {48, 40, 1};
    double *b = vol_alloc(d);
    for (int64_t i = 0; i < odims_count(d); ++i) b[i] = 1;
    b[0] = 0;
    dan_switch(g_backend == IWPP_BACKEND_CUDA ? "100000000" : "0");
    for (int i = 0; i < g_ncfg; ++i)
        assert_int_equal(iwpp_context_set_queue_variant(g_cfg[i].ctx, IWPP_QUEUE_MULTILEVEL), IWPP_OK);
    ecase c = {IWPP_U8, d, b, NULL, 1, 0, 0, 0, "corner", 0};
    fails += run_case(&c);
    iwpp_stats st;
    iwpp_context_stats(g_cfg[0].ctx, &st);
    if (st.overflow_reruns < 1) {
        print_error("FAIL: Danielsson with queues of 16 items: no overflow re-run (variant %s, %lld rounds, %lld "
                    "pixels visited)\n",
                    st.variant, (long long)st.rounds, (long long)st.pixels_visited);
        ++fails;
    }
    free(b);
    dan_switch(NULL);
    dan_tiles(NULL);
    for (int i = 0; i < g_ncfg; ++i) {
        assert_int_equal(iwpp_context_set_queue_variant(g_cfg[i].ctx, g_cfg[i].queue_variant), IWPP_OK);
        assert_int_equal(iwpp_context_set_queue_capacity(g_cfg[i].ctx, 0), IWPP_OK);
    }
    assert_int_equal(fails, 0);
}

/* One call's stats: the variant names tiles of side `side`, and at least `rounds` rounds ran. */
static int dan_tile_stats(int side, long long rounds, const char *what)
{
    iwpp_stats st;
    iwpp_context_stats(g_cfg[0].ctx, &st);
    char want[32];
    snprintf(want, sizeof want, "tiles-%dx%d", side, side);
    if (strstr(st.variant, want) && st.rounds >= rounds) return 0;
    print_error("FAIL: Danielsson by tiles, %s: variant %s (want %s), %lld rounds (want at least %lld)\n", what,
                st.variant, want, (long long)st.rounds, rounds);
    return 1;
}

/* The Danielsson propagation by tiles (the GPUs' default in 2D): tiles of side 8, 16 and 64 over
 * images of many tiles, partial tiles at the edges, 2D and 3D, every type and spacing; fronts that cross
 * the whole image (one background pixel in a corner, one background row) go through a round per
 * tile they cross, each of which must run for the distances to be right. */
static void test_danielsson_tiles(void **state)
{
    (void)state;
    if (g_backend == IWPP_BACKEND_CPU) skip();
    static const odims sizes[] = {{70, 45, 1}, {9, 130, 1}, {130, 3, 1}, {21, 18, 11}, {5, 6, 40}};
    static const char *const sides[] = {"8", "16", "64"};
    int fails = 0;
    for (int si = 0; si < 3; ++si) {
        const int side = atoi(sides[si]);
        dan_tiles(sides[si]);
        fails += random_cases(3100 + 100 * (uint64_t)si, sizes, sizeof sizes / sizeof sizes[0]);
        const odims d = {100, 75, 1};
        double *b = vol_alloc(d);
        for (int64_t i = 0; i < odims_count(d); ++i) b[i] = 1;
        b[odims_count(d) - 1] = 0; /* the last corner: one site for every pixel, Danielsson exact */
        ecase c = {IWPP_U8, d, b, NULL, 1, 1, 0, 0, "one background pixel, last corner", 0};
        fails += run_case(&c);
        fails += dan_tile_stats(side, (100 + side - 1) / side, c.label);
        b[odims_count(d) - 1] = 1;
        for (int64_t x = 0; x < d.w; ++x) b[x + d.w * 2] = 0; /* one background row near the top */
        c.dan_exact = 0;
        c.label = "one background row";
        c.spacing = SP_ANISO;
        fails += run_case(&c);
        fails += dan_tile_stats(side, (75 - 3) / side, c.label);
        free(b);
        if (side == 8) { /* 3D: cubes of 8, a site in the first corner */
            const odims d3 = {20, 17, 26};
            double *b3 = vol_alloc(d3);
            for (int64_t i = 0; i < odims_count(d3); ++i) b3[i] = 1;
            b3[0] = 0;
            ecase c3 = {IWPP_F32, d3, b3, NULL, 1, 1, 0, 0, "3D, one background voxel", 0};
            fails += run_case(&c3);
            iwpp_stats st;
            iwpp_context_stats(g_cfg[0].ctx, &st);
            if (!strstr(st.variant, "tiles-8x8x8") || st.rounds < 4) {
                print_error("FAIL: 3D Danielsson by tiles: variant %s, %lld rounds\n", st.variant, (long long)st.rounds);
                ++fails;
            }
            free(b3);
        }
    }
    dan_tiles(NULL);
    assert_int_equal(fails, 0);
}

/* Every input family of bench/edt_families (lines at several angles, rings, a corner pixel, one
 * background row or column, checkerboards, random densities, nuclei) at small sizes, 2D and 3D,
 * by both methods: the exact one equal to the oracle, the Danielsson one within its bounds; on
 * the GPUs by their default schedule and by tiles of 16 (several tiles, partial ones at the
 * edges). */
static void test_danielsson_families(void **state)
{
    (void)state;
    static const odims sizes[] = {{120, 90, 1}, {24, 22, 18}};
    int fails = 0;
    for (int pass = 0; pass < (g_backend == IWPP_BACKEND_CPU ? 1 : 2); ++pass) {
        dan_tiles(pass ? "16" : NULL);
        for (int si = 0; si < 2; ++si)
            for (int f = 0; f < synth_edt_family_count(); ++f) {
                const odims d = sizes[si];
                const int64_t n = odims_count(d);
                uint8_t *img = malloc((size_t)n);
                double *b = vol_alloc(d);
                if (!img || synth_edt_family(img, synth_edt_family_name(f), d.w, d.h, d.d, 7) != 0)
                    fail_msg("family %s", synth_edt_family_name(f));
                for (int64_t i = 0; i < n; ++i) b[i] = img[i];
                ecase c = {IWPP_U8, d, b, NULL, 1, 0, 0, 0, synth_edt_family_name(f), 7};
                fails += run_case(&c);
                free(img);
                free(b);
            }
    }
    dan_tiles(NULL);
    assert_int_equal(fails, 0);
}

int main(int argc, char **argv)
{
    (void)argc;
    int rc = harness_init(argv[0]);
    if (rc) harness_exit(rc);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_2d),  cmocka_unit_test(test_random_3d),
        cmocka_unit_test(test_non_dyadic_spacing), cmocka_unit_test(test_degenerate),
        cmocka_unit_test(test_strided),    cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_long_lines), cmocka_unit_test(test_wide_rows),
        cmocka_unit_test(test_cuda_wide_lines), cmocka_unit_test(test_families),
        cmocka_unit_test(test_banded_paths), cmocka_unit_test(test_lines_path),
        cmocka_unit_test(test_colbands),   cmocka_unit_test(test_buffer_reuse),
        cmocka_unit_test(test_danielsson_phases), cmocka_unit_test(test_danielsson_tiles),
        cmocka_unit_test(test_danielsson_families),
        cmocka_unit_test(test_staged_transfers),
    };
    int failed = HARNESS_RUN("edt", tests);
    harness_exit(failed ? 1 : 0);
}
