/*
 * test_label_composed.c - the composed label operations (native/ops/watershed.c) against a
 * composition of the oracles written independently of test_labels.c, on every configuration of
 * the backend under test:
 *   iwpp_extended_maxima/minima = oracle_regional_extrema(oracle_hextrema(in, h));
 *   iwpp_impose_minima          = oracle_reconstruct by erosion of m over min(m, in stepped up);
 *   iwpp_distance_watershed     = oracle_edt -> extended maxima -> oracle_label ->
 *                                 oracle_watershed of the negated distance inside the objects.
 * The distance watershed needs the backend's label and watershed ops: without them
 * (IWPP_EUNSUPPORTED) its test skips with a message.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const iwpp_type TYPES[3] = {IWPP_U8, IWPP_U16, IWPP_F32};

/* Runs @p st's call result against @p expected on @p out, the input unchanged. Returns 1 on a failure. */
static int verdict(iwpp_status st, int cfg, const timg *in, const unsigned char *snap_in, const timg *out,
                   const double *expected, const char *what)
{
    int bad = check_ok(st, g_cfg[cfg].ctx, what);
    if (!bad) bad = check_equal(out, expected, what) || check_padding(out, what);
    if (!bad && in && !timg_bytes_equal(in, snap_in)) {
        print_error("FAIL: %s: the input was modified\n", what);
        bad = 1;
    }
    return bad;
}

/* ------------------------------------------------------------ extended extrema */

static int run_extended(iwpp_type t, odims d, const double *in, double h, int conn, int maxima, uint64_t seed)
{
    int fails = 0;
    double *hx = vol_alloc(d), *expected = vol_alloc(d);
    oracle_hextrema(in, d, t, h, conn, maxima, hx);
    oracle_regional_extrema(hx, d, conn, maxima, expected);
    for (int i = 0; i < g_ncfg; ++i) {
        const char *what = fmt("extended %s %s h=%g conn=%d %lldx%lldx%lld seed=%llu [%s]", maxima ? "maxima" : "minima",
                               iwpp_type_name(t), h, conn, (long long)d.w, (long long)d.h, (long long)d.d,
                               (unsigned long long)seed, g_cfg[i].name);
        timg a, o;
        if (!timg_init(&a, t, d, seed % 2 ? 3 : 0, 0) || !timg_init(&o, IWPP_U8, d, seed % 3 ? 0 : 5, 0))
            fail_msg("out of memory in the test");
        timg_load(&a, in);
        unsigned char *snap = malloc(a.bytes);
        memcpy(snap, a.alloc, a.bytes);
        iwpp_status st = maxima ? iwpp_extended_maxima(g_cfg[i].ctx, &a.v, h, conn, &o.v)
                                : iwpp_extended_minima(g_cfg[i].ctx, &a.v, h, conn, &o.v);
        if (verdict(st, i, &a, snap, &o, expected, what)) note_failure(&fails);
        free(snap);
        timg_free(&a);
        timg_free(&o);
    }
    free(hx);
    free(expected);
    return fails;
}

static void test_extended(void **state)
{
    (void)state;
    static const odims sizes[] = {{1, 1, 1}, {19, 1, 1}, {17, 13, 1}, {31, 29, 1}, {7, 6, 5}};
    int fails = 0;
    uint64_t seed = 300;
    for (int s = 0; s < 5; ++s)
        for (int t = 0; t < 3; ++t)
            for (int k = 0; k < 3; ++k) {
                trng r;
                trng_seed(&r, ++seed);
                double *in = vol_alloc(sizes[s]);
                gen_random(&r, TYPES[t], sizes[s], 6, in);
                /* h: 0, one level step (the height == h case), and a larger one */
                const double step = TYPES[t] == IWPP_F32 ? 0.25 : 1.0;
                const double h = k == 0 ? 0.0 : k == 1 ? step : 2.5 * step;
                const int conn = sizes[s].d > 1 ? (k == 2 ? 6 : 26) : (k == 2 ? 4 : 8);
                fails += run_extended(TYPES[t], sizes[s], in, h, conn, 1, seed);
                fails += run_extended(TYPES[t], sizes[s], in, h, conn, 0, seed);
                free(in);
            }
    assert_int_equal(fails, 0);
}

/* ------------------------------------------------------------ impose minima */

/* The expected impose minima: m (type min on markers, type max elsewhere) reconstructed by
 * erosion over g = min(m, in stepped up by 1, saturating, or to the next float). */
static void impose_expected(iwpp_type t, odims d, const double *in, const double *markers, int conn, double *out)
{
    const int64_t n = odims_count(d);
    double *g = vol_alloc(d);
    for (int64_t i = 0; i < n; ++i) {
        const double up = t == IWPP_F32 ? (double)nextafterf((float)in[i], INFINITY) : fmin(in[i] + 1.0, type_max(t));
        /* the type's extremes: 0 and 255/65535, or -inf and +inf for F32 (as MATLAB imimposemin) */
        out[i] = markers[i] != 0.0 ? (t == IWPP_F32 ? -INFINITY : 0.0) : (t == IWPP_F32 ? INFINITY : type_max(t));
        g[i] = fmin(out[i], up);
    }
    oracle_reconstruct(out, g, d, conn, 1);
    free(g);
}

static int run_impose(iwpp_type t, odims d, const double *in, const double *markers, int conn, int in_place,
                      uint64_t seed)
{
    int fails = 0;
    double *expected = vol_alloc(d);
    impose_expected(t, d, in, markers, conn, expected);
    for (int i = 0; i < g_ncfg; ++i) {
        const char *what = fmt("impose minima %s conn=%d %lldx%lldx%lld%s seed=%llu [%s]", iwpp_type_name(t), conn,
                               (long long)d.w, (long long)d.h, (long long)d.d, in_place ? " in place" : "",
                               (unsigned long long)seed, g_cfg[i].name);
        timg a, m, o;
        if (!timg_init(&a, t, d, seed % 2 ? 2 : 0, 0) || !timg_init(&m, IWPP_U8, d, 0, 0) ||
            !timg_init(&o, t, d, seed % 2 ? 0 : 4, 0))
            fail_msg("out of memory in the test");
        timg_load(&a, in);
        timg_load(&m, markers);
        unsigned char *snap = malloc(a.bytes);
        memcpy(snap, a.alloc, a.bytes);
        iwpp_status st = iwpp_impose_minima(g_cfg[i].ctx, &a.v, &m.v, conn, in_place ? &a.v : &o.v);
        if (verdict(st, i, in_place ? NULL : &a, snap, in_place ? &a : &o, expected, what)) note_failure(&fails);
        free(snap);
        timg_free(&a);
        timg_free(&m);
        timg_free(&o);
    }
    free(expected);
    return fails;
}

static void test_impose(void **state)
{
    (void)state;
    static const odims sizes[] = {{1, 1, 1}, {23, 1, 1}, {17, 13, 1}, {30, 27, 1}, {8, 7, 6}};
    int fails = 0;
    uint64_t seed = 400;
    for (int s = 0; s < 5; ++s)
        for (int t = 0; t < 3; ++t)
            for (int k = 0; k < 2; ++k) {
                trng r;
                trng_seed(&r, ++seed);
                double *in = vol_alloc(sizes[s]), *mk = vol_alloc(sizes[s]);
                gen_random(&r, TYPES[t], sizes[s], 9, in);
                /* few markers; k = 1 adds saturation: U8/U16 values at the type's top */
                gen_binary(&r, sizes[s], 0.04, 1.0, mk);
                if (k == 1 && TYPES[t] != IWPP_F32)
                    for (int64_t i = 0; i < odims_count(sizes[s]); i += 3) in[i] = type_max(TYPES[t]);
                const int conn = sizes[s].d > 1 ? (k ? 26 : 6) : (k ? 8 : 4);
                fails += run_impose(TYPES[t], sizes[s], in, mk, conn, k, seed);
                free(in);
                free(mk);
            }
    assert_int_equal(fails, 0);
}

/* ------------------------------------------------------------ distance watershed */

static void dtws_expected(odims d, const double *binary, const double spacing[3], double dynamic, int conn,
                          int lines, double *out)
{
    const int64_t n = odims_count(d);
    float *dist = malloc((size_t)n * sizeof *dist);
    double *dd = vol_alloc(d), *hx = vol_alloc(d), *ext = vol_alloc(d), *neg = vol_alloc(d);
    uint32_t *mk = malloc((size_t)n * sizeof *mk), *lab = malloc((size_t)n * sizeof *lab);
    oracle_edt(binary, d, spacing, dist);
    for (int64_t i = 0; i < n; ++i) dd[i] = dist[i] > FLT_MAX ? FLT_MAX : dist[i];
    oracle_hextrema(dd, d, IWPP_F32, dynamic, conn, 1, hx);
    oracle_regional_extrema(hx, d, conn, 1, ext);
    oracle_label(ext, d, conn, 0, mk);
    for (int64_t i = 0; i < n; ++i) neg[i] = -dd[i];
    oracle_watershed(neg, mk, binary, d, conn, lines, lab);
    for (int64_t i = 0; i < n; ++i) out[i] = lab[i];
    free(dist);
    free(dd);
    free(hx);
    free(ext);
    free(neg);
    free(mk);
    free(lab);
}

static int run_dtws(odims d, iwpp_type t, iwpp_type out_t, const double *binary, const double spacing[3],
                    double dynamic, int conn, int lines, uint64_t seed)
{
    int fails = 0;
    double *expected = vol_alloc(d);
    dtws_expected(d, binary, spacing, dynamic, conn, lines, expected);
    for (int i = 0; i < g_ncfg; ++i) {
        const char *what = fmt("distance watershed %s->%s spacing %g,%g,%g dynamic=%g conn=%d lines=%d "
                               "%lldx%lldx%lld seed=%llu [%s]", iwpp_type_name(t), iwpp_type_name(out_t),
                               spacing[0], spacing[1], spacing[2], dynamic, conn, lines, (long long)d.w,
                               (long long)d.h, (long long)d.d, (unsigned long long)seed, g_cfg[i].name);
        timg a, o;
        if (!timg_init(&a, t, d, seed % 2 ? 3 : 0, 0) || !timg_init(&o, out_t, d, seed % 2 ? 0 : 2, 0))
            fail_msg("out of memory in the test");
        timg_load(&a, binary);
        unsigned char *snap = malloc(a.bytes);
        memcpy(snap, a.alloc, a.bytes);
        iwpp_status st = iwpp_distance_watershed(g_cfg[i].ctx, &a.v, spacing, dynamic, conn, lines, &o.v);
        if (verdict(st, i, &a, snap, &o, expected, what)) note_failure(&fails);
        free(snap);
        timg_free(&a);
        timg_free(&o);
    }
    free(expected);
    return fails;
}

/* Overlapping discs (balls in 3D) of random centres and radii: touching objects to split. */
static void gen_balls(trng *r, odims d, int count, double *v)
{
    memset(v, 0, (size_t)odims_count(d) * sizeof *v);
    for (int k = 0; k < count; ++k) {
        const double cx = (double)trng_below(r, d.w), cy = (double)trng_below(r, d.h), cz = (double)trng_below(r, d.d);
        const double rad = 2.0 + (double)trng_below(r, 5);
        for (int64_t z = 0; z < d.d; ++z)
            for (int64_t y = 0; y < d.h; ++y)
                for (int64_t x = 0; x < d.w; ++x)
                    if ((x - cx) * (x - cx) + (y - cy) * (y - cy) + (z - cz) * (z - cz) <= rad * rad)
                        v[x + d.w * (y + d.h * z)] = 1.0;
    }
}

static void test_distance_watershed(void **state)
{
    (void)state;
    uint8_t px = 1;
    uint32_t lab = 0;
    iwpp_image one = iwpp_image_2d(&px, IWPP_U8, 1, 1), out = iwpp_image_2d(&lab, IWPP_U32, 1, 1);
    const double unit[3] = {1, 1, 1};
    if (iwpp_distance_watershed(g_cfg[0].ctx, &one, unit, 0, 4, 0, &out) == IWPP_EUNSUPPORTED) {
        printf("SKIPPED: the distance watershed needs labeling and the watershed, not available on the %s "
               "backend\n", iwpp_backend_name(g_backend));
        skip();
    }
    static const odims sizes[] = {{1, 1, 1}, {9, 1, 1}, {33, 25, 1}, {48, 40, 1}, {14, 13, 11}};
    static const double spacings[3][3] = {{1, 1, 1}, {0.5, 1.0, 2.0}, {1.5, 1.5, 0.75}};
    int fails = 0;
    uint64_t seed = 500;
    for (int s = 0; s < 5; ++s)
        for (int k = 0; k < 3; ++k) {
            trng r;
            trng_seed(&r, ++seed);
            double *bin = vol_alloc(sizes[s]);
            if (k == 2 && s < 2) gen_const(sizes[s], 1.0, bin); /* no background: one object */
            else gen_balls(&r, sizes[s], 3 + k * 2, bin);
            const int conn = sizes[s].d > 1 ? (k == 1 ? 6 : 26) : (k == 1 ? 4 : 8);
            const double dynamic = k == 0 ? 0.0 : k == 1 ? 0.5 : 1.0;
            fails += run_dtws(sizes[s], TYPES[k], k % 2 ? IWPP_U16 : IWPP_U32, bin, spacings[k], dynamic, conn,
                              k == 1, seed);
            free(bin);
        }
    assert_int_equal(fails, 0);
}

/* ------------------------------------------------------------ bad arguments */

static void test_bad_arguments(void **state)
{
    (void)state;
    iwpp_context *ctx = g_cfg[0].ctx;
    uint8_t a[4] = {0, 1, 2, 3}, o8[4];
    uint16_t o16[4];
    float f[4] = {0, 1, NAN, 3};
    iwpp_image in = iwpp_image_2d(a, IWPP_U8, 2, 2), out8 = iwpp_image_2d(o8, IWPP_U8, 2, 2),
               out16 = iwpp_image_2d(o16, IWPP_U16, 2, 2), nan = iwpp_image_2d(f, IWPP_F32, 2, 2),
               small = iwpp_image_2d(o8, IWPP_U8, 2, 1);
    const double sp[3] = {1, 1, 1};
    assert_int_equal(iwpp_extended_maxima(ctx, &in, 1, 8, &out16), IWPP_EINVAL); /* out must be U8 */
    assert_int_equal(iwpp_extended_minima(ctx, &in, -1, 8, &out8), IWPP_EINVAL);
    assert_int_equal(iwpp_extended_maxima(ctx, &in, 1, 5, &out8), IWPP_EINVAL);
    assert_int_equal(iwpp_impose_minima(ctx, &in, &small, 8, &out8), IWPP_EINVAL);
    assert_int_equal(iwpp_impose_minima(ctx, &in, &in, 8, &out16), IWPP_EINVAL); /* out: the type of in */
    assert_int_equal(iwpp_impose_minima(ctx, &nan, &in, 8, &nan), IWPP_EINVAL);
    assert_int_equal(iwpp_distance_watershed(ctx, &in, sp, NAN, 8, 0, &out16), IWPP_EINVAL);
    assert_non_null(strstr(iwpp_error_message(ctx), "dynamic"));
    assert_int_equal(iwpp_distance_watershed(ctx, &in, sp, 1, 8, 0, &out8), IWPP_EINVAL); /* labels: U16/U32 */
    assert_int_equal(iwpp_distance_watershed(ctx, &nan, sp, 1, 8, 0, &out16), IWPP_EINVAL);
}

int main(int argc, char **argv)
{
    (void)argc;
    int rc = harness_init(argv[0]);
    if (rc) harness_exit(rc);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_extended),
        cmocka_unit_test(test_impose),
        cmocka_unit_test(test_distance_watershed),
        cmocka_unit_test(test_bad_arguments),
    };
    int failed = HARNESS_RUN("label_composed", tests);
    harness_exit(failed ? 1 : 0);
}
