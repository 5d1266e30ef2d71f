/*
 * test_labels_ops.c - the operations composed on labeling and the watershed (extended maxima
 * and minima, impose minima, distance watershed) against compositions of the oracles, bit for
 * bit; progress and cancel of the watershed calls. Part of the test_labels executable.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_labels.h"

/* ------------------------------------------------------------------ composed operations */

/* One composed case on every configuration: call(ctx, in view, aux view, out view). */
typedef iwpp_status (*comp_call)(iwpp_context *ctx, const iwpp_image *in, const iwpp_image *aux, double p,
                                 int conn, int lines, iwpp_image *out);

static int run_comp(comp_call call, iwpp_type t, iwpp_type aux_t, iwpp_type out_t, odims d, const double *in,
                    const double *aux, double p, int conn, int lines, int64_t pad, const double *expected,
                    int expect_einval, const char *what0)
{
    int fails = 0;
    for (int i = 0; i < g_ncfg; ++i) {
        const char *what = fmt("%s %s p=%g conn=%d lines=%d out=%s %lldx%lldx%lld pad=%lld [%s]", what0,
                               iwpp_type_name(t), p, conn, lines, iwpp_type_name(out_t), (long long)d.w,
                               (long long)d.h, (long long)d.d, (long long)pad, g_cfg[i].name);
        timg a, b, o;
        if (!timg_init(&a, t, d, pad, pad) || !timg_init(&b, aux_t, d, pad ? pad + 1 : 0, 0) ||
            !timg_init(&o, out_t, d, pad ? pad + 2 : 0, pad))
            fail_msg("out of memory in the test");
        timg_load(&a, in);
        if (aux) timg_load(&b, aux);
        unsigned char *snap = malloc(o.bytes);
        memcpy(snap, o.alloc, o.bytes);
        iwpp_status st = call(g_cfg[i].ctx, &a.v, aux ? &b.v : NULL, p, conn, lines, &o.v);
        int bad;
        if (expect_einval) {
            bad = st != IWPP_EINVAL || !timg_bytes_equal(&o, snap);
            if (bad) print_error("FAIL: %s: expected EINVAL and an untouched output, got %s\n", what, iwpp_status_name(st));
        } else {
            bad = check_ok(st, g_cfg[i].ctx, what);
            if (!bad) bad = check_equal(&o, expected, what) || check_padding(&o, what);
        }
        if (bad) note_failure(&fails);
        free(snap);
        timg_free(&a);
        timg_free(&b);
        timg_free(&o);
    }
    return fails;
}

static iwpp_status call_emax(iwpp_context *c, const iwpp_image *in, const iwpp_image *aux, double h, int conn, int l, iwpp_image *out)
{
    (void)aux, (void)l;
    return iwpp_extended_maxima(c, in, h, conn, out);
}
static iwpp_status call_emin(iwpp_context *c, const iwpp_image *in, const iwpp_image *aux, double h, int conn, int l, iwpp_image *out)
{
    (void)aux, (void)l;
    return iwpp_extended_minima(c, in, h, conn, out);
}
static iwpp_status call_impose(iwpp_context *c, const iwpp_image *in, const iwpp_image *aux, double h, int conn, int l, iwpp_image *out)
{
    (void)h, (void)l;
    return iwpp_impose_minima(c, in, aux, conn, out);
}
static double g_spacing[3] = {1, 1, 1};
static iwpp_status call_dws(iwpp_context *c, const iwpp_image *in, const iwpp_image *aux, double dyn, int conn, int l, iwpp_image *out)
{
    (void)aux;
    return iwpp_distance_watershed(c, in, g_spacing, dyn, conn, l, out);
}

void test_extended_and_impose(void **state)
{
    (void)state;
    int fails = 0;
    static const odims sizes[] = {{1, 1, 1}, {13, 7, 1}, {31, 29, 1}, {7, 6, 5}};
    for (int s = 0; s < 4; ++s)
        for (int t = 0; t < 3; ++t) {
            odims d = sizes[s];
            const int64_t n = odims_count(d);
            trng r;
            trng_seed(&r, 1000 + (uint64_t)(s * 3 + t));
            double *in = vol_alloc(d), *e = vol_alloc(d), *tmp = vol_alloc(d), *mk = vol_alloc(d), *g = vol_alloc(d);
            gen_random(&r, TYPES[t], d, s % 2 ? 7 : 60, in);
            const double hs[3] = {0.0, TYPES[t] == IWPP_F32 ? 0.75 : 1.4, TYPES[t] == IWPP_F32 ? 3.3 : 40.0};
            for (int c = 0; c < 2; ++c) {
                const int conn = d.d > 1 ? (c ? 26 : 6) : (c ? 8 : 4);
                for (int k = 0; k < 3; ++k)
                    for (int mx = 0; mx < 2; ++mx) {
                        oracle_hextrema(in, d, TYPES[t], hs[k], conn, mx, tmp);
                        oracle_regional_extrema(tmp, d, conn, mx, e);
                        fails += run_comp(mx ? call_emax : call_emin, TYPES[t], IWPP_U8, IWPP_U8, d, in, NULL, hs[k],
                                          conn, 0, k == 1 ? 2 : 0, e, 0, mx ? "extended_maxima" : "extended_minima");
                    }
                /* impose minima: markers of another type, sparse; expected by the definition */
                const iwpp_type mt = TYPES[(t + 1 + c) % 3];
                gen_binary(&r, d, 0.05, mt == IWPP_F32 ? -2.0 : 1.0, mk);
                const double lo = TYPES[t] == IWPP_F32 ? -INFINITY : 0.0, hi = TYPES[t] == IWPP_F32 ? INFINITY : type_max(TYPES[t]);
                for (int64_t i = 0; i < n; ++i) {
                    e[i] = mk[i] != 0.0 ? lo : hi;
                    double up = TYPES[t] == IWPP_F32 ? (double)nextafterf((float)in[i], INFINITY) : fmin(in[i] + 1, hi);
                    g[i] = fmin(e[i], up);
                }
                oracle_reconstruct(e, g, d, conn, 1);
                fails += run_comp(call_impose, TYPES[t], mt, TYPES[t], d, in, mk, 0, conn, 0, c ? 3 : 0, e, 0, "impose_minima");
            }
            free(in), free(e), free(tmp), free(mk), free(g);
        }
    assert_int_equal(fails, 0);
}

/* Expected distance watershed, composed from the oracles; returns the marker count. */
static int64_t oracle_dws(const double *bin, odims d, double dyn, int conn, int lines, double *expected)
{
    const int64_t n = odims_count(d);
    float *dist = malloc((size_t)n * sizeof *dist + 4);
    double *dd = vol_alloc(d), *hm = vol_alloc(d), *rm = vol_alloc(d);
    uint32_t *lab = malloc((size_t)n * sizeof *lab + 4), *out = malloc((size_t)n * sizeof *out + 4);
    oracle_edt(bin, d, g_spacing, dist);
    for (int64_t i = 0; i < n; ++i) dd[i] = dist[i];
    oracle_hextrema(dd, d, IWPP_F32, dyn, conn, 1, hm);
    oracle_regional_extrema(hm, d, conn, 1, rm);
    const int64_t count = oracle_label(rm, d, conn, 0, lab);
    for (int64_t i = 0; i < n; ++i) dd[i] = (double)(0.0f - dist[i]);
    oracle_watershed(dd, lab, bin, d, conn, lines, out);
    for (int64_t i = 0; i < n; ++i) expected[i] = out[i];
    free(dist), free(dd), free(hm), free(rm), free(lab), free(out);
    return count;
}

/* Random discs (balls), some overlapping: the distance watershed splits touching ones. */
static void gen_discs(trng *r, odims d, int count, double fg, double *v)
{
    gen_const(d, 0.0, v);
    for (int k = 0; k < count; ++k) {
        const double cx = (double)trng_below(r, d.w), cy = (double)trng_below(r, d.h), cz = (double)trng_below(r, d.d);
        const double rad = 1.5 + (double)trng_below(r, 5);
        for (int64_t z = 0; z < d.d; ++z)
            for (int64_t y = 0; y < d.h; ++y)
                for (int64_t x = 0; x < d.w; ++x) {
                    const double dx = (double)x - cx, dy = (double)y - cy, dz = d.d > 1 ? (double)z - cz : 0.0;
                    if (dx * dx + dy * dy + dz * dz <= rad * rad) v[x + d.w * (y + d.h * z)] = fg;
                }
    }
}

void test_distance_watershed(void **state)
{
    (void)state;
    need_ws();
    need_label();
    int fails = 0;
    static const odims sizes[] = {{1, 1, 1}, {23, 19, 1}, {41, 37, 1}, {13, 12, 9}};
    static const double spacings[2][3] = {{1, 1, 1}, {0.5, 1.25, 2.0}};
    for (int s = 0; s < 4; ++s)
        for (int t = 0; t < 3; ++t) {
            odims d = sizes[s];
            trng r;
            trng_seed(&r, 1100 + (uint64_t)(s * 3 + t));
            double *bin = vol_alloc(d), *e = vol_alloc(d);
            gen_discs(&r, d, 2 + (int)(odims_count(d) / 150), TYPES[t] == IWPP_F32 ? -1.0 : 7.0, bin);
            if (s == 0) bin[0] = 1.0;
            for (int k = 0; k < 2; ++k) {
                memcpy(g_spacing, spacings[(s + t + k) % 2], sizeof g_spacing);
                const int conn = d.d > 1 ? (k ? 18 : 26) : (k ? 4 : 8);
                const double dyn = k ? 0.0 : 0.7;
                for (int lines = 0; lines < 2; ++lines) {
                    const int64_t count = oracle_dws(bin, d, dyn, conn, lines, e);
                    if (s == 2 && count < 3) { /* the case must have objects to split */
                        print_error("FAIL: distance_watershed test image has %lld markers only\n", (long long)count);
                        ++fails;
                    }
                    const iwpp_type ot = OUTS[(k + lines) % 2];
                    fails += run_comp(call_dws, TYPES[t], IWPP_U8, ot, d, bin, NULL, dyn, conn, lines, lines ? 1 : 0, e,
                                      ot == IWPP_U16 && count > 65535, "distance_watershed");
                }
            }
            free(bin), free(e);
        }
    memcpy(g_spacing, spacings[0], sizeof g_spacing);
    assert_int_equal(fails, 0);
}

/* ------------------------------------------------------------------ progress and cancel */

typedef struct prog {
    int calls, cancel_at, decreased;
    double last;
} prog;

static int on_progress(void *user, double f)
{
    prog *p = user;
    if (f < p->last) p->decreased = 1;
    p->last = f;
    return ++p->calls == p->cancel_at;
}

/* Fractions never decrease within a call; a cancel at any report leaves the output untouched
 * (the CPU writes straight into the caller's view, so it must write only at the very end). */
void test_progress_and_cancel(void **state)
{
    (void)state;
    need_ws();
    need_label();
    int fails = 0;
    odims d = {41, 37, 1};
    const int64_t n = odims_count(d);
    trng r;
    trng_seed(&r, 1300);
    double *bin = vol_alloc(d);
    gen_discs(&r, d, 12, 1.0, bin);
    uint8_t *b8 = malloc((size_t)n);
    float *rel = malloc((size_t)n * sizeof *rel);
    uint32_t *mk = calloc((size_t)n, sizeof *mk), *out = malloc((size_t)n * sizeof *out);
    for (int64_t i = 0; i < n; ++i) b8[i] = bin[i] != 0, rel[i] = (float)trng_below(&r, 9);
    mk[n / 3] = 4, mk[2 * n / 3] = 9;
    iwpp_image B = iwpp_image_2d(b8, IWPP_U8, d.w, d.h), R = iwpp_image_2d(rel, IWPP_F32, d.w, d.h),
               M = iwpp_image_2d(mk, IWPP_U32, d.w, d.h), O = iwpp_image_2d(out, IWPP_U32, d.w, d.h);
    for (int i = 0; i < g_ncfg; ++i) {
        iwpp_context *ctx = g_cfg[i].ctx;
        for (int op = 0; op < 3; ++op) {
            prog p = {0, 0, 0, -1.0};
            iwpp_context_set_progress(ctx, on_progress, &p);
            int64_t count;
            iwpp_status st = op == 0 ? iwpp_watershed(ctx, &R, &M, &B, 8, 1, &O)
                           : op == 1 ? iwpp_distance_watershed(ctx, &B, NULL, 0.5, 8, 0, &O)
                                     : iwpp_label(ctx, &B, 8, IWPP_LABEL_BINARY, &O, &count);
            const int total = p.calls;
            if (st != IWPP_OK || p.decreased || p.last != 1.0) {
                print_error("FAIL: progress of op %d [%s]: %s, decreased=%d, last=%g\n", op, g_cfg[i].name,
                            iwpp_status_name(st), p.decreased, p.last);
                ++fails;
            }
            for (int k = 1; k < total; ++k) { /* the final 1 cannot cancel */
                memset(out, 0xA5, (size_t)n * sizeof *out);
                prog c = {0, k, 0, -1.0};
                iwpp_context_set_progress(ctx, on_progress, &c);
                st = op == 0 ? iwpp_watershed(ctx, &R, &M, &B, 8, 1, &O)
                   : op == 1 ? iwpp_distance_watershed(ctx, &B, NULL, 0.5, 8, 0, &O)
                             : iwpp_label(ctx, &B, 8, IWPP_LABEL_BINARY, &O, &count);
                int touched = 0;
                for (int64_t j = 0; j < n; ++j) touched |= out[j] != 0xA5A5A5A5u;
                if (st != IWPP_ECANCELED || touched) {
                    print_error("FAIL: cancel of op %d at report %d of %d [%s]: %s, output %s\n", op, k, total,
                                g_cfg[i].name, iwpp_status_name(st), touched ? "written" : "untouched");
                    ++fails;
                }
            }
        }
        iwpp_context_set_progress(ctx, NULL, NULL);
    }
    free(bin), free(b8), free(rel), free(mk), free(out);
    assert_int_equal(fails, 0);
}
