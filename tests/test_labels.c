/*
 * test_labels.c - iwpp_label and iwpp_watershed against oracle_label / oracle_watershed bit for
 * bit, and the label passes (remove border labels, size filter), on every configuration of the
 * backend under test. A backend without the label or watershed op (IWPP_EUNSUPPORTED) skips
 * those tests with a message, so that the suite stays green while a backend lacks them.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_labels.h"

const iwpp_type TYPES[3] = {IWPP_U8, IWPP_U16, IWPP_F32};
const iwpp_type OUTS[2] = {IWPP_U16, IWPP_U32};
int g_have_label, g_have_ws;

/* ------------------------------------------------------------------ labeling */

typedef struct lcase {
    iwpp_type type, out;
    odims d;
    const double *in;
    int conn, equal;
    int64_t pad_y, pad_z;
    const char *label;
    uint64_t seed;
} lcase;

static int run_label(const lcase *c)
{
    int fails = 0;
    const int64_t n = odims_count(c->d);
    uint32_t *lab = malloc((size_t)n * sizeof *lab + 4);
    double *expected = vol_alloc(c->d);
    const int64_t count = oracle_label(c->in, c->d, c->conn, c->equal, lab);
    for (int64_t i = 0; i < n; ++i) expected[i] = lab[i];
    const int overflow = c->out == IWPP_U16 && count > 65535;
    for (int i = 0; i < g_ncfg; ++i) {
        const char *what = fmt("label %s->%s %s conn=%d %lldx%lldx%lld %s pad=%lld/%lld seed=%llu [%s]",
                               iwpp_type_name(c->type), iwpp_type_name(c->out), c->equal ? "equal" : "binary",
                               c->conn, (long long)c->d.w, (long long)c->d.h, (long long)c->d.d, c->label,
                               (long long)c->pad_y, (long long)c->pad_z, (unsigned long long)c->seed,
                               g_cfg[i].name);
        timg in, out;
        if (!timg_init(&in, c->type, c->d, c->pad_y, c->pad_z) ||
            !timg_init(&out, c->out, c->d, c->pad_y ? c->pad_y + 2 : 0, c->pad_z ? c->pad_z + 1 : 0))
            fail_msg("out of memory in the test");
        timg_load(&in, c->in);
        unsigned char *snap_in = malloc(in.bytes), *snap_out = malloc(out.bytes);
        memcpy(snap_in, in.alloc, in.bytes);
        memcpy(snap_out, out.alloc, out.bytes);
        int64_t got_count = -7;
        iwpp_status st = iwpp_label(g_cfg[i].ctx, &in.v, c->conn, c->equal ? IWPP_LABEL_EQUAL : IWPP_LABEL_BINARY,
                                    &out.v, &got_count);
        int bad = 0;
        if (overflow) {
            if (st != IWPP_EINVAL) {
                print_error("FAIL: %s: %lld components into u16 gave %s, expected EINVAL\n", what,
                            (long long)count, iwpp_status_name(st));
                bad = 1;
            } else if (!timg_bytes_equal(&out, snap_out)) {
                print_error("FAIL: %s: a failed call (overflow) wrote to the output\n", what);
                bad = 1;
            }
        } else {
            bad = check_ok(st, g_cfg[i].ctx, what);
            if (!bad) bad = check_equal(&out, expected, what) || check_padding(&out, what);
            if (!bad && got_count != count) {
                print_error("FAIL: %s: count %lld, expected %lld\n", what, (long long)got_count, (long long)count);
                bad = 1;
            }
        }
        if (!bad && !timg_bytes_equal(&in, snap_in)) {
            print_error("FAIL: %s: the input was modified\n", what);
            bad = 1;
        }
        if (bad) note_failure(&fails);
        free(snap_in);
        free(snap_out);
        timg_free(&in);
        timg_free(&out);
    }
    free(lab);
    free(expected);
    return fails;
}

void need_label(void)
{
    if (!g_have_label) {
        printf("SKIPPED: labeling is not available on the %s backend\n", iwpp_backend_name(g_backend));
        skip();
    }
}

static int label_sweep(uint64_t seed, const odims *sizes, int nsizes, const int *conns, int nconn)
{
    int fails = 0;
    for (int s = 0; s < nsizes; ++s)
        for (int t = 0; t < 3; ++t)
            for (int c = 0; c < nconn; ++c) {
                trng r;
                trng_seed(&r, ++seed);
                double *in = vol_alloc(sizes[s]);
                /* few levels: large equal regions for the equal mode; binary-ish otherwise */
                if (seed % 2) gen_random(&r, TYPES[t], sizes[s], 3 + (int)(seed % 4), in);
                else gen_binary(&r, sizes[s], 0.45, TYPES[t] == IWPP_F32 ? -0.75 : 1.0, in);
                for (int e = 0; e < 2; ++e) {
                    lcase lc = {TYPES[t], OUTS[(seed + (uint64_t)e) % 2], sizes[s], in, conns[c], e, 0, 0,
                                "random", seed};
                    fails += run_label(&lc);
                }
                free(in);
            }
    return fails;
}

static void test_label_random(void **state)
{
    (void)state;
    need_label();
    static const odims s2[] = {{1, 1, 1}, {1, 19, 1}, {23, 1, 1}, {13, 7, 1}, {17, 17, 1}, {45, 37, 1}, {100, 70, 1}, {64, 96, 1}};
    static const int c2[] = {4, 8, 6, 26}; /* 6 and 26 on one slice act as 4 and 8 */
    static const odims s3[] = {{1, 1, 9}, {5, 4, 3}, {11, 9, 7}, {17, 16, 15}};
    static const int c3[] = {6, 18, 26};
    int fails = label_sweep(100, s2, 8, c2, 4);
    fails += label_sweep(200, s3, 4, c3, 3);
    assert_int_equal(fails, 0);
}

/* Spirals and mazes (one long component), strided views, constant images, F32 extremes. */
static void test_label_adversarial(void **state)
{
    (void)state;
    need_label();
    int fails = 0;
    static const odims sizes[] = {{37, 29, 1}, {13, 11, 9}};
    for (int s = 0; s < 2; ++s) {
        odims d = sizes[s];
        const int64_t n = odims_count(d);
        int conn = d.d > 1 ? 6 : 4, conn2 = d.d > 1 ? 26 : 8;
        double *in = vol_alloc(d);
        trng r;
        trng_seed(&r, 300 + (uint64_t)s);
        for (int k = 0; k < 6; ++k) {
            const char *what = "";
            iwpp_type t = TYPES[k % 3];
            switch (k) {
            case 0: gen_spiral(d, in); what = "spiral"; break;
            case 1: gen_maze(&r, d, in); what = "maze"; break;
            case 2: gen_const(d, -2.5, in); what = "constant nonzero"; break;
            case 3: gen_const(d, 0.0, in); what = "all zero"; break;
            case 4: gen_random(&r, IWPP_U16, d, 2, in); what = "u16 0/65535"; break;
            default:
                for (int64_t i = 0; i < n; ++i) {
                    static const double v[5] = {0.0, FLT_MAX, -FLT_MAX, INFINITY, -INFINITY};
                    in[i] = v[trng_below(&r, 5)];
                }
                what = "f32 extremes";
                break;
            }
            for (int e = 0; e < 2; ++e)
                for (int o = 0; o < 2; ++o) {
                    lcase lc = {t, OUTS[o], d, in, conn, e, 0, 0, what, 300 + (uint64_t)s};
                    fails += run_label(&lc);
                    lc.conn = conn2;
                    lc.pad_y = 3;
                    lc.pad_z = d.d > 1 ? 5 : 0;
                    fails += run_label(&lc);
                }
        }
        free(in);
    }
    assert_int_equal(fails, 0);
}

/* Isolated pixels on a grid of step 2: exactly 65535 components fit a U16 output, 65536 do
 * not (EINVAL, output untouched); U32 takes both. */
static void test_label_overflow(void **state)
{
    (void)state;
    need_label();
    int fails = 0;
    static const odims sizes[] = {{509, 513, 1}, {511, 513, 1}}; /* 255 x 257 = 65535, 256 x 257 = 65792 */
    for (int s = 0; s < 2; ++s) {
        odims d = sizes[s];
        double *in = vol_alloc(d);
        for (int64_t y = 0; y < d.h; ++y)
            for (int64_t x = 0; x < d.w; ++x) in[x + d.w * y] = (x % 2 == 0 && y % 2 == 0) ? 1.0 : 0.0;
        for (int o = 0; o < 2; ++o) {
            lcase lc = {IWPP_U8, OUTS[o], d, in, 8, 0, 0, 0, "grid of isolated pixels", 0};
            fails += run_label(&lc);
        }
        free(in);
    }
    assert_int_equal(fails, 0);
}

/* ------------------------------------------------------------------ watershed */

typedef struct wcase {
    iwpp_type type, mk_type, mask_type, out;
    odims d;
    const double *in;
    const uint32_t *markers;
    const double *mask; /* NULL: no mask */
    int conn, lines;
    int64_t pad_y, pad_z;
    int in_place; /* labels_out is the markers' view (mk_type == out) */
    const char *label;
    uint64_t seed;
} wcase;

static uint32_t max_label(const uint32_t *mk, int64_t n)
{
    uint32_t m = 0;
    for (int64_t i = 0; i < n; ++i) m = mk[i] > m ? mk[i] : m;
    return m;
}

/* One configuration; returns 1 on failure. */
static int run_ws_config(const wcase *c, const double *expected, int overflow, iwpp_context *ctx, const char *what)
{
    timg in, mk, ms, out;
    const int64_t py = c->pad_y, pz = c->pad_z;
    if (!timg_init(&in, c->type, c->d, py, pz) || !timg_init(&mk, c->mk_type, c->d, py ? py + 1 : 0, pz ? pz + 2 : 0) ||
        !timg_init(&ms, c->mask_type, c->d, py ? py + 3 : 0, pz) ||
        !timg_init(&out, c->out, c->d, py ? py + 2 : 0, pz ? pz + 1 : 0))
        fail_msg("out of memory in the test");
    const int64_t n = odims_count(c->d);
    double *tmp = vol_alloc(c->d);
    for (int64_t i = 0; i < n; ++i) tmp[i] = c->markers[i];
    timg_load(&in, c->in);
    timg_load(&mk, tmp);
    if (c->mask) timg_load(&ms, c->mask);
    free(tmp);
    timg *res = c->in_place ? &mk : &out;
    unsigned char *s_in = malloc(in.bytes), *s_mk = malloc(mk.bytes), *s_ms = malloc(ms.bytes), *s_out = malloc(res->bytes);
    memcpy(s_in, in.alloc, in.bytes);
    memcpy(s_mk, mk.alloc, mk.bytes);
    memcpy(s_ms, ms.alloc, ms.bytes);
    memcpy(s_out, res->alloc, res->bytes);
    iwpp_status st = iwpp_watershed(ctx, &in.v, &mk.v, c->mask ? &ms.v : NULL, c->conn, c->lines, &res->v);
    int bad = 0;
    if (overflow) {
        if (st != IWPP_EINVAL) {
            print_error("FAIL: %s: labels above 65535 into u16 gave %s, expected EINVAL\n", what, iwpp_status_name(st));
            bad = 1;
        } else if (!timg_bytes_equal(res, s_out)) {
            print_error("FAIL: %s: a failed call (overflow) wrote to the output\n", what);
            bad = 1;
        }
    } else {
        bad = check_ok(st, ctx, what);
        if (!bad) bad = check_equal(res, expected, what) || check_padding(res, what);
    }
    if (!bad && (!timg_bytes_equal(&in, s_in) || !timg_bytes_equal(&ms, s_ms) ||
                 (!c->in_place && !timg_bytes_equal(&mk, s_mk)))) {
        print_error("FAIL: %s: an input was modified\n", what);
        bad = 1;
    }
    free(s_in);
    free(s_mk);
    free(s_ms);
    free(s_out);
    timg_free(&in);
    timg_free(&mk);
    timg_free(&ms);
    timg_free(&out);
    return bad;
}

static int run_ws(const wcase *c)
{
    int fails = 0;
    const int64_t n = odims_count(c->d);
    uint32_t *lab = malloc((size_t)n * sizeof *lab + 4);
    double *expected = vol_alloc(c->d);
    oracle_watershed(c->in, c->markers, c->mask, c->d, c->conn, c->lines, lab);
    for (int64_t i = 0; i < n; ++i) expected[i] = lab[i];
    const int overflow = c->out == IWPP_U16 && max_label(c->markers, n) > 65535;
    for (int i = 0; i < g_ncfg; ++i) {
        const char *what = fmt("watershed %s markers=%s mask=%s out=%s conn=%d lines=%d %lldx%lldx%lld %s pad=%lld/%lld%s "
                               "seed=%llu [%s]",
                               iwpp_type_name(c->type), iwpp_type_name(c->mk_type),
                               c->mask ? iwpp_type_name(c->mask_type) : "none", iwpp_type_name(c->out), c->conn,
                               c->lines, (long long)c->d.w, (long long)c->d.h, (long long)c->d.d, c->label,
                               (long long)c->pad_y, (long long)c->pad_z, c->in_place ? " in-place" : "",
                               (unsigned long long)c->seed, g_cfg[i].name);
        if (run_ws_config(c, expected, overflow, g_cfg[i].ctx, what)) note_failure(&fails);
    }
    free(lab);
    free(expected);
    return fails;
}

void need_ws(void)
{
    if (!g_have_ws) {
        printf("SKIPPED: the watershed is not available on the %s backend\n", iwpp_backend_name(g_backend));
        skip();
    }
}

/* @p count markers: single pixels or small blocks, labels in [1, top] (not consecutive). */
static void gen_markers(trng *r, odims d, int count, uint32_t top, uint32_t *mk)
{
    const int64_t n = odims_count(d);
    memset(mk, 0, (size_t)n * sizeof *mk);
    for (int k = 0; k < count; ++k) {
        const uint32_t v = 1 + (uint32_t)trng_below(r, top);
        const int64_t x0 = trng_below(r, d.w), y0 = trng_below(r, d.h), z0 = trng_below(r, d.d);
        const int64_t e = trng_below(r, 3) == 0 ? 2 : 1; /* some 2x2(x2) blocks */
        for (int64_t z = z0; z < z0 + e && z < d.d; ++z)
            for (int64_t y = y0; y < y0 + e && y < d.h; ++y)
                for (int64_t x = x0; x < x0 + e && x < d.w; ++x) mk[x + d.w * (y + d.h * z)] = v;
    }
}

static void gen_mask(trng *r, odims d, iwpp_type t, double *mask)
{
    gen_binary(r, d, 0.8, t == IWPP_F32 ? -0.5 : 3.0, mask);
}

static int ws_sweep(uint64_t seed, const odims *sizes, int nsizes, const int *conns, int nconn)
{
    static const iwpp_type MK[3] = {IWPP_U8, IWPP_U16, IWPP_U32};
    int fails = 0;
    for (int s = 0; s < nsizes; ++s)
        for (int t = 0; t < 3; ++t)
            for (int c = 0; c < nconn; ++c) {
                odims d = sizes[s];
                trng r;
                trng_seed(&r, ++seed);
                double *in = vol_alloc(d), *mask = vol_alloc(d);
                uint32_t *mk = malloc((size_t)odims_count(d) * sizeof *mk + 4);
                gen_random(&r, TYPES[t], d, seed % 2 ? 4 : 200, in);
                const iwpp_type mkt = MK[seed % 3], out = OUTS[(seed / 3) % 2];
                const uint32_t top = mkt == IWPP_U8 ? 255u : (mkt == IWPP_U16 || out == IWPP_U16) ? 65535u : 900000u;
                gen_markers(&r, d, 1 + (int)trng_below(&r, 6 + odims_count(d) / 40), top, mk);
                const iwpp_type mt = TYPES[(seed / 2) % 3];
                gen_mask(&r, d, mt, mask);
                for (int v = 0; v < 4; ++v) {
                    wcase wc = {TYPES[t], mkt, mt, out, d, in, mk, (v & 2) ? mask : NULL, conns[c], v & 1,
                                0, 0, 0, "random", seed};
                    fails += run_ws(&wc);
                }
                free(in);
                free(mask);
                free(mk);
            }
    return fails;
}

static void test_ws_random(void **state)
{
    (void)state;
    need_ws();
    static const odims s2[] = {{1, 1, 1}, {1, 17, 1}, {19, 1, 1}, {13, 7, 1}, {31, 29, 1}};
    static const int c2[] = {4, 8, 18};
    static const odims s3[] = {{1, 1, 8}, {5, 4, 3}, {11, 10, 9}};
    static const int c3[] = {6, 18, 26};
    int fails = ws_sweep(400, s2, 5, c2, 3);
    fails += ws_sweep(500, s3, 3, c3, 3);
    assert_int_equal(fails, 0);
}

/* Plateaus, ties, touching markers, one or no marker, markers outside the mask. */
static int ws_plateau_cases(odims d, int conn, iwpp_type t)
{
    int fails = 0;
    const int64_t n = odims_count(d);
    double *in = vol_alloc(d), *mask = vol_alloc(d);
    uint32_t *mk = calloc((size_t)n + 1, sizeof *mk);
    trng r;
    trng_seed(&r, 600 + (uint64_t)conn);
    for (int k = 0; k < 8; ++k) {
        const char *what = "";
        memset(mk, 0, (size_t)n * sizeof *mk);
        gen_const(d, t == IWPP_F32 ? -1.5 : 7.0, in);
        gen_const(d, 1.0, mask);
        switch (k) {
        case 0: /* ties: the larger label first in raster order, equidistant pixels take the smaller */
            mk[0] = 9, mk[n - 1] = 4, what = "constant, two markers at the ends"; break;
        case 1: mk[n / 2] = 77, what = "constant, one marker"; break;
        case 2: what = "no marker"; break;
        case 3: /* touching markers of different labels */
            for (int64_t i = 0; i < n; ++i) mk[i] = (i % d.w) == d.w / 2 ? 5 : (i % d.w) == d.w / 2 + 1 ? 3 : 0;
            what = "touching marker columns"; break;
        case 4: /* a marker outside the mask must be ignored; another inside */
            mk[0] = 2, mask[0] = 0.0, mk[n - 1] = 8, what = "one marker outside the mask"; break;
        case 5: /* large flat regions on random levels, markers everywhere */
            gen_random(&r, t, d, 3, in), gen_markers(&r, d, 9, 40000, mk), gen_mask(&r, d, IWPP_U8, mask);
            what = "three levels, flat regions"; break;
        case 7: /* nothing inside: no region at all */
            gen_const(d, 0.0, mask), mk[0] = 3, what = "mask all outside"; break;
        case 6: /* two plateau basins at different heights joined by a ridge */
            for (int64_t i = 0; i < n; ++i) in[i] = (i % d.w) < d.w / 2 ? 1.0 : (i % d.w) == d.w / 2 ? 6.0 : 2.0;
            mk[0] = 11, mk[n - 1] = 12, what = "two plateaus and a ridge"; break;
        }
        for (int v = 0; v < 4; ++v) {
            wcase wc = {t, IWPP_U16, IWPP_U8, OUTS[v / 2], d, in, mk, k >= 4 ? mask : NULL, conn, v & 1, 0, 0, 0,
                        what, 600};
            fails += run_ws(&wc);
        }
    }
    free(in);
    free(mask);
    free(mk);
    return fails;
}

static void test_ws_plateaus(void **state)
{
    (void)state;
    need_ws();
    int fails = 0;
    static const odims sizes[] = {{1, 9, 1}, {12, 9, 1}, {9, 7, 5}};
    for (int s = 0; s < 3; ++s)
        for (int t = 0; t < 3; ++t) {
            int conns[2] = {sizes[s].d > 1 ? 6 : 4, sizes[s].d > 1 ? 26 : 8};
            for (int c = 0; c < 2; ++c) fails += ws_plateau_cases(sizes[s], conns[c], TYPES[t]);
        }
    assert_int_equal(fails, 0);
}

/* Long propagation: a spiral corridor (low) with one marker at its outer end and one at its
 * centre, and a maze; both with and without lines. */
static void test_ws_long_paths(void **state)
{
    (void)state;
    need_ws();
    int fails = 0;
    static const odims sizes[] = {{35, 33, 1}, {15, 13, 5}};
    for (int s = 0; s < 2; ++s)
        for (int k = 0; k < 2; ++k) {
            odims d = sizes[s];
            const int64_t n = odims_count(d);
            double *corr = vol_alloc(d), *in = vol_alloc(d);
            uint32_t *mk = calloc((size_t)n + 1, sizeof *mk);
            trng r;
            trng_seed(&r, 700 + (uint64_t)s);
            if (k == 0) gen_spiral(d, corr);
            else gen_maze(&r, d, corr);
            int64_t last = 0;
            for (int64_t i = 0; i < n; ++i) {
                in[i] = corr[i] != 0.0 ? (double)trng_below(&r, 2) : 200.0;
                if (corr[i] != 0.0) last = i;
            }
            mk[0] = 3;
            mk[last] = 2;
            for (int t = 0; t < 3; ++t)
                for (int v = 0; v < 4; ++v) {
                    wcase wc = {TYPES[t], IWPP_U8, IWPP_U8, OUTS[v / 2], d, in, mk, NULL, d.d > 1 ? 6 : 4, v & 1,
                                0, 0, 0, k ? "maze" : "spiral", 700};
                    fails += run_ws(&wc);
                    wc.conn = d.d > 1 ? 18 : 8;
                    fails += run_ws(&wc);
                }
            free(corr);
            free(in);
            free(mk);
        }
    assert_int_equal(fails, 0);
}

/* Strided views, out == markers, U16 output of U32 markers above 65535 (EINVAL, untouched),
 * F32 reliefs with infinities. */
static void test_ws_views_and_types(void **state)
{
    (void)state;
    need_ws();
    int fails = 0;
    static const odims sizes[] = {{21, 17, 1}, {9, 8, 7}};
    for (int s = 0; s < 2; ++s) {
        odims d = sizes[s];
        const int64_t n = odims_count(d);
        double *in = vol_alloc(d), *mask = vol_alloc(d);
        uint32_t *mk = malloc((size_t)n * sizeof *mk + 4);
        trng r;
        trng_seed(&r, 800 + (uint64_t)s);
        const int conn = d.d > 1 ? 18 : 8;
        for (int t = 0; t < 3; ++t) {
            gen_random(&r, TYPES[t], d, 6, in);
            if (TYPES[t] == IWPP_F32)
                for (int64_t i = 0; i < n; i += 5) in[i] = (i / 5) % 2 ? INFINITY : -INFINITY;
            gen_markers(&r, d, 7, 65535, mk);
            gen_mask(&r, d, TYPES[t], mask);
            for (int o = 0; o < 2; ++o) {
                wcase wc = {TYPES[t], OUTS[o], IWPP_F32, OUTS[o], d, in, mk, mask, conn, o, 3, d.d > 1 ? 4 : 0, 0,
                            "strided", 800};
                fails += run_ws(&wc);
                wc.in_place = 1;
                fails += run_ws(&wc);
                wc.pad_y = wc.pad_z = 0;
                fails += run_ws(&wc);
            }
            mk[n / 3] = 70000; /* does not fit a U16 output */
            wcase wc = {TYPES[t], IWPP_U32, IWPP_F32, IWPP_U16, d, in, mk, mask, conn, 1, 0, 0, 0, "label 70000", 800};
            fails += run_ws(&wc);
            wc.out = IWPP_U32;
            fails += run_ws(&wc);
        }
        free(in);
        free(mask);
        free(mk);
    }
    assert_int_equal(fails, 0);
}

/* ------------------------------------------------------------------ label passes (host) */

/* Definitions, by brute force (labels may be as large as 2^32 - 1): a label is removed when one
 * of its pixels is on the border / when its pixel count is out of range. */
static void oracle_label_pass(const double *lab, odims d, int border, int64_t lo, int64_t hi, double *out)
{
    const int64_t n = odims_count(d);
    for (int64_t i = 0; i < n; ++i) {
        int64_t size = 0;
        int on_border = 0;
        for (int64_t j = 0; j < n; ++j)
            if (lab[j] == lab[i]) {
                ++size;
                on_border |= oracle_on_border(d, j % d.w, (j / d.w) % d.h, j / (d.w * d.h));
            }
        const int gone = border ? on_border : size < lo || (hi > 0 && size > hi);
        out[i] = lab[i] != 0 && gone ? 0.0 : lab[i];
    }
}

static int run_pass(iwpp_type t, odims d, const double *lab, int border, int64_t lo, int64_t hi, int in_place,
                    int64_t pad, const char *label)
{
    double *expected = vol_alloc(d);
    oracle_label_pass(lab, d, border, lo, hi, expected);
    int fails = 0;
    for (int i = 0; i < g_ncfg; ++i) {
        const char *what = fmt("%s %s %lldx%lldx%lld min=%lld max=%lld%s pad=%lld %s [%s]",
                               border ? "remove_border_labels" : "label_size_filter", iwpp_type_name(t),
                               (long long)d.w, (long long)d.h, (long long)d.d, (long long)lo, (long long)hi,
                               in_place ? " in-place" : "", (long long)pad, label, g_cfg[i].name);
        timg in, out;
        if (!timg_init(&in, t, d, pad, pad) || !timg_init(&out, t, d, pad ? pad + 1 : 0, 0))
            fail_msg("out of memory in the test");
        timg_load(&in, lab);
        timg *res = in_place ? &in : &out;
        iwpp_status st = border ? iwpp_remove_border_labels(g_cfg[i].ctx, &in.v, &res->v)
                                : iwpp_label_size_filter(g_cfg[i].ctx, &in.v, lo, hi, &res->v);
        int bad = check_ok(st, g_cfg[i].ctx, what);
        if (!bad) bad = check_equal(res, expected, what) || check_padding(res, what);
        if (bad) note_failure(&fails);
        timg_free(&in);
        timg_free(&out);
    }
    free(expected);
    return fails;
}

static void test_label_passes(void **state)
{
    (void)state;
    int fails = 0;
    static const iwpp_type LT[3] = {IWPP_U8, IWPP_U16, IWPP_U32};
    static const odims sizes[] = {{1, 1, 1}, {1, 7, 1}, {19, 13, 1}, {9, 8, 7}, {6, 5, 1}};
    for (int s = 0; s < 5; ++s)
        for (int t = 0; t < 3; ++t) {
            odims d = sizes[s];
            const int64_t n = odims_count(d);
            trng r;
            trng_seed(&r, 900 + (uint64_t)(s * 3 + t));
            double *lab = vol_alloc(d);
            const int64_t top = LT[t] == IWPP_U8 ? 255 : LT[t] == IWPP_U16 ? 65535 : 4000000000LL;
            /* blocks of labels: sizes vary, some labels repeat in separate places */
            for (int64_t i = 0; i < n; ++i)
                lab[i] = (i % 4 == 0 || trng_below(&r, 3) == 0) ? (double)(trng_below(&r, 6) ? 1 + trng_below(&r, 9) : top) : (i ? lab[i - 1] : 0.0);
            for (int p = 0; p < 2; ++p) {
                int64_t pad = p ? 2 : 0;
                fails += run_pass(LT[t], d, lab, 1, 0, 0, 0, pad, "random");
                fails += run_pass(LT[t], d, lab, 1, 0, 0, 1, pad, "random");
                static const int64_t ranges[4][2] = {{0, 0}, {3, 0}, {2, 6}, {5, 5}};
                for (int k = 0; k < 4; ++k)
                    fails += run_pass(LT[t], d, lab, 0, ranges[k][0], ranges[k][1], k & 1, pad, "random");
            }
            free(lab);
        }
    assert_int_equal(fails, 0);
}

/* Whether @p ctx has the label / watershed ops (a 1x1 call; IWPP_EUNSUPPORTED = not). */
static void probe_ops(iwpp_context *ctx)
{
    uint8_t px = 1;
    uint32_t lab = 0, mk = 1;
    iwpp_image in = iwpp_image_2d(&px, IWPP_U8, 1, 1), out = iwpp_image_2d(&lab, IWPP_U32, 1, 1),
               m = iwpp_image_2d(&mk, IWPP_U32, 1, 1);
    g_have_label = iwpp_label(ctx, &in, 4, IWPP_LABEL_BINARY, &out, NULL) != IWPP_EUNSUPPORTED;
    g_have_ws = iwpp_watershed(ctx, &in, &m, NULL, 4, 0, &out) != IWPP_EUNSUPPORTED;
    if (!g_have_label) printf("%s: labeling is not available on the %s backend: its tests skip\n", "test_labels", iwpp_backend_name(g_backend));
    if (!g_have_ws) printf("%s: the watershed is not available on the %s backend: its tests skip\n", "test_labels", iwpp_backend_name(g_backend));
}

int main(int argc, char **argv)
{
    (void)argc;
    int rc = harness_init(argv[0]);
    if (rc) harness_exit(rc);
    probe_ops(g_cfg[0].ctx);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_label_random),  cmocka_unit_test(test_label_adversarial),
        cmocka_unit_test(test_label_overflow), cmocka_unit_test(test_ws_random),
        cmocka_unit_test(test_ws_plateaus),    cmocka_unit_test(test_ws_long_paths),
        cmocka_unit_test(test_ws_views_and_types), cmocka_unit_test(test_label_passes),
        cmocka_unit_test(test_extended_and_impose), cmocka_unit_test(test_distance_watershed),
        cmocka_unit_test(test_progress_and_cancel),
    };
    int failed = HARNESS_RUN("labels", tests);
    harness_exit(failed ? 1 : 0);
}
