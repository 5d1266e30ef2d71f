/*
 * test_errors.c - bad input never aborts: every error reachable from the API
 * returns its status with a message a person can act on, and writes nothing
 * to any output (outputs are filled with a canary first and compared after).
 */
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int g_fails;

/* case-insensitive search of any '|'-separated keyword */
static int mentions(const char *msg, const char *keywords)
{
    char low[1100];
    size_t n = strlen(msg);
    if (n >= sizeof low) n = sizeof low - 1;
    for (size_t i = 0; i < n; ++i) low[i] = (char)tolower((unsigned char)msg[i]);
    low[n] = '\0';
    const char *k = keywords;
    while (*k) {
        const char *bar = strchr(k, '|');
        size_t len = bar ? (size_t)(bar - k) : strlen(k);
        char word[64];
        if (len >= sizeof word) len = sizeof word - 1;
        memcpy(word, k, len);
        word[len] = '\0';
        if (strstr(low, word)) return 1;
        if (!bar) break;
        k = bar + 1;
    }
    return 0;
}

/* Check the status (want2 = an accepted alternative or -1) and the message. */
static void expect(iwpp_context *ctx, iwpp_status got, iwpp_status want, int want2, const char *keywords,
                   const char *what)
{
    if (got != want && (want2 < 0 || got != (iwpp_status)want2)) {
        print_error("FAIL: %s: returned %s, expected %s%s%s (message: \"%s\")\n", what, iwpp_status_name(got),
                    iwpp_status_name(want), want2 >= 0 ? " or " : "",
                    want2 >= 0 ? iwpp_status_name((iwpp_status)want2) : "", ctx ? iwpp_error_message(ctx) : "");
        ++g_fails;
        return;
    }
    if (!ctx) return;
    const char *msg = iwpp_error_message(ctx);
    if (!msg || strlen(msg) < 8) {
        print_error("FAIL: %s: the message \"%s\" is empty or too short to act on\n", what, msg ? msg : "(NULL)");
        ++g_fails;
        return;
    }
    if (keywords && !mentions(msg, keywords)) {
        print_error("FAIL: %s: the message \"%s\" mentions none of \"%s\"\n", what, msg, keywords);
        ++g_fails;
        return;
    }
    print_message("ok  %-60s -> %s: %s\n", what, iwpp_status_name(got), msg);
}

/* outputs must be untouched */
static void expect_untouched(const timg *t, const unsigned char *snap, const char *what)
{
    if (!timg_bytes_equal(t, snap)) {
        print_error("FAIL: %s: an output was written although the call failed\n", what);
        ++g_fails;
    }
}

typedef struct fixture {
    timg a, b, out, out3, dist, near, f_nan, f_ok, a3, b3, i64, u16;
    unsigned char *snap_a, *snap_out, *snap_out3, *snap_dist, *snap_near, *snap_a3, *snap_u16;
} fixture;

static unsigned char *snapshot(const timg *t)
{
    unsigned char *s = malloc(t->bytes);
    memcpy(s, t->alloc, t->bytes);
    return s;
}

static void fixture_init(fixture *f)
{
    odims d = {8, 6, 1}, d3 = {5, 4, 3};
    trng r;
    trng_seed(&r, 1);
    double *v = vol_alloc(d), *v3 = vol_alloc(d3);
    gen_random(&r, IWPP_U8, d, 256, v);
    gen_random(&r, IWPP_U8, d3, 256, v3);
    timg_init(&f->a, IWPP_U8, d, 0, 0);
    timg_init(&f->b, IWPP_U8, d, 0, 0);
    timg_init(&f->out, IWPP_U8, d, 0, 0);
    timg_init(&f->out3, IWPP_U8, d3, 0, 0);
    timg_init(&f->u16, IWPP_U16, d, 0, 0);
    timg_init(&f->dist, IWPP_F32, d, 0, 0);
    timg_init(&f->near, IWPP_I64, d, 0, 0);
    timg_init(&f->f_nan, IWPP_F32, d, 0, 0);
    timg_init(&f->f_ok, IWPP_F32, d, 0, 0);
    timg_init(&f->a3, IWPP_U8, d3, 0, 0);
    timg_init(&f->b3, IWPP_U8, d3, 0, 0);
    timg_init(&f->i64, IWPP_I64, d, 0, 0);
    timg_load(&f->a, v);
    timg_load(&f->b, v);
    timg_load(&f->f_ok, v);
    timg_load(&f->f_nan, v);
    timg_set(&f->f_nan, 5, 4, 0, NAN); /* one NaN, late in the image */
    timg_load(&f->a3, v3);
    timg_load(&f->b3, v3);
    for (int64_t i = 0; i < 48; ++i) ((int64_t *)f->i64.alloc)[i] = i & 1;
    /* outputs keep their canary */
    f->snap_a = snapshot(&f->a);
    f->snap_out = snapshot(&f->out);
    f->snap_out3 = snapshot(&f->out3);
    f->snap_dist = snapshot(&f->dist);
    f->snap_near = snapshot(&f->near);
    f->snap_a3 = snapshot(&f->a3);
    f->snap_u16 = snapshot(&f->u16);
    free(v);
    free(v3);
}

static void fixture_free(fixture *f)
{
    timg *all[] = {&f->a, &f->b, &f->out, &f->out3, &f->dist, &f->near, &f->f_nan, &f->f_ok, &f->a3, &f->b3, &f->i64, &f->u16};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) timg_free(all[i]);
    free(f->snap_a);
    free(f->snap_out);
    free(f->snap_out3);
    free(f->snap_dist);
    free(f->snap_near);
    free(f->snap_a3);
    free(f->snap_u16);
}

/* ------------------------------------------------------------------ reconstruct */
static void test_reconstruct_errors(void **state)
{
    (void)state;
    g_fails = 0;
    for (int c = 0; c < g_ncfg; ++c) {
        iwpp_context *ctx = g_cfg[c].ctx;
        fixture f;
        fixture_init(&f);
        iwpp_image m = f.a.v, k = f.b.v;
        iwpp_status st;
#define RECON(label, mk, mask, conn, mode, want, want2, kw)                               \
    do {                                                                                   \
        iwpp_image mk_ = (mk), mask_ = (mask);                                             \
        st = iwpp_reconstruct(ctx, &mk_, &mask_, (conn), (mode));                          \
        expect(ctx, st, want, want2, kw, fmt("reconstruct: %s [%s]", label, g_cfg[c].name)); \
        expect_untouched(&f.a, f.snap_a, label);                                           \
        expect_untouched(&f.a3, f.snap_a3, label);                                         \
    } while (0)

        st = iwpp_reconstruct(NULL, &m, &k, 8, IWPP_BY_DILATION);
        expect(NULL, st, IWPP_EINVAL, -1, NULL, "reconstruct: NULL context");
        expect_untouched(&f.a, f.snap_a, "NULL context");
        st = iwpp_reconstruct(ctx, NULL, &k, 8, IWPP_BY_DILATION);
        expect(ctx, st, IWPP_EINVAL, -1, "null|marker", fmt("reconstruct: NULL marker [%s]", g_cfg[c].name));
        st = iwpp_reconstruct(ctx, &m, NULL, 8, IWPP_BY_DILATION);
        expect(ctx, st, IWPP_EINVAL, -1, "null|mask", fmt("reconstruct: NULL mask [%s]", g_cfg[c].name));
        expect_untouched(&f.a, f.snap_a, "NULL mask");

        iwpp_image t = k;
        t.data = NULL;
        RECON("mask data NULL", m, t, 8, IWPP_BY_DILATION, IWPP_EINVAL, -1, "null|data|mask");
        t = k;
        t.width = 0;
        RECON("mask width 0", m, t, 8, IWPP_BY_DILATION, IWPP_EINVAL, -1, "width|size|empty|zero");
        t = k;
        t.height = 0;
        RECON("mask height 0", m, t, 8, IWPP_BY_DILATION, IWPP_EINVAL, -1, "height|size|empty|zero");
        t = k;
        t.depth = 0;
        RECON("mask depth 0", m, t, 8, IWPP_BY_DILATION, IWPP_EINVAL, -1, "depth|size|empty|zero");
        t = k;
        t.width = -8;
        RECON("mask width -8", m, t, 8, IWPP_BY_DILATION, IWPP_EINVAL, -1, "width|size|negative");
        /* both zero-sized: still an error */
        {
            iwpp_image z1 = m, z2 = k;
            z1.width = z2.width = 0;
            RECON("marker and mask width 0", z1, z2, 8, IWPP_BY_DILATION, IWPP_EINVAL, -1, "width|size|empty|zero");
        }
        t = k;
        t.type = (iwpp_type)99;
        RECON("mask type 99", m, t, 8, IWPP_BY_DILATION, IWPP_EINVAL, -1, "type");
        {
            iwpp_image m64 = f.i64.v, k64 = f.i64.v;
            st = iwpp_reconstruct(ctx, &m64, &k64, 8, IWPP_BY_DILATION);
            /* I64 is a type of the API but no input type: EINVAL or EUNSUPPORTED */
            expect(ctx, st, IWPP_EINVAL, IWPP_EUNSUPPORTED, "type|i64",
                   fmt("reconstruct: I64 marker and mask [%s]", g_cfg[c].name));
        }
        t = k;
        t.height = 5;
        RECON("mask 8x5 vs marker 8x6", m, t, 8, IWPP_BY_DILATION, IWPP_EINVAL, -1, "size|height|mask|marker|match");
        t = k;
        t.width = 7;
        RECON("mask 7x6 vs marker 8x6", m, t, 8, IWPP_BY_DILATION, IWPP_EINVAL, -1, "size|width|mask|marker|match");
        {
            iwpp_image m3 = f.a3.v, k3 = f.b3.v;
            k3.depth = 2;
            RECON("mask depth 2 vs marker depth 3", m3, k3, 6, IWPP_BY_DILATION, IWPP_EINVAL, -1, "size|depth|mask|marker|match");
        }
        RECON("mask U16 vs marker U8", m, f.u16.v, 8, IWPP_BY_DILATION, IWPP_EINVAL, -1, "type|u16|u8|match");
        int badc[] = {5, 0, -1, 7, 27, 10};
        for (size_t i = 0; i < sizeof badc / sizeof badc[0]; ++i)
            RECON(fmt("connectivity %d", badc[i]), m, k, badc[i], IWPP_BY_DILATION, IWPP_EINVAL, -1, "connectivity");
        RECON("connectivity 4 on a 3D image", f.a3.v, f.b3.v, 4, IWPP_BY_DILATION, IWPP_EINVAL, -1, "connectivity");
        RECON("connectivity 8 on a 3D image", f.a3.v, f.b3.v, 8, IWPP_BY_EROSION, IWPP_EINVAL, -1, "connectivity");
        RECON("mode 7", m, k, 8, (iwpp_morph_mode)7, IWPP_EINVAL, -1, "mode");
        {
            /* NaN in the marker / mask */
            timg mk;
            timg_init(&mk, IWPP_F32, timg_dims(&f.f_nan), 0, 0);
            double *v = vol_alloc(timg_dims(&f.f_nan));
            timg_store(&f.f_nan, v);
            timg_load(&mk, v);
            unsigned char *s = snapshot(&mk);
            st = iwpp_reconstruct(ctx, &mk.v, &f.f_ok.v, 8, IWPP_BY_DILATION);
            expect(ctx, st, IWPP_EINVAL, -1, "nan", fmt("reconstruct: NaN in the F32 marker [%s]", g_cfg[c].name));
            expect_untouched(&mk, s, "NaN marker");
            timg_store(&f.f_ok, v);
            timg_load(&mk, v);
            free(s);
            s = snapshot(&mk);
            st = iwpp_reconstruct(ctx, &mk.v, &f.f_nan.v, 8, IWPP_BY_EROSION);
            expect(ctx, st, IWPP_EINVAL, -1, "nan", fmt("reconstruct: NaN in the F32 mask [%s]", g_cfg[c].name));
            expect_untouched(&mk, s, "NaN mask");
            free(s);
            free(v);
            timg_free(&mk);
        }
        {
            /* kill borders takes -inf like any value: pixels equal to their reconstruction
               (the -inf one too, where -inf - -inf has no value) are 0; no NaN comes out */
            timg inf_img, kout;
            timg_init(&inf_img, IWPP_F32, timg_dims(&f.f_ok), 0, 0);
            timg_init(&kout, IWPP_F32, timg_dims(&f.f_ok), 0, 0);
            double *v = vol_alloc(timg_dims(&f.f_ok));
            timg_store(&f.f_ok, v);
            timg_load(&inf_img, v);
            timg_set(&inf_img, 3, 2, 0, -INFINITY);
            unsigned char *s = snapshot(&kout);
            st = iwpp_kill_borders(ctx, &inf_img.v, 8, &kout.v);
            if (st != IWPP_OK) {
                print_error("FAIL: kill_borders: -inf in the F32 input [%s]: returned %s (%s)\n", g_cfg[c].name,
                            iwpp_status_name(st), iwpp_error_message(ctx));
                ++g_fails;
            } else {
                double *o = vol_alloc(timg_dims(&kout));
                timg_store(&kout, o);
                for (int64_t i = 0; i < odims_count(timg_dims(&kout)); ++i)
                    if (isnan(o[i])) {
                        print_error("FAIL: kill_borders: -inf in the F32 input [%s]: pixel %lld is NaN\n",
                                    g_cfg[c].name, (long long)i);
                        ++g_fails;
                        break;
                    }
                free(o);
            }
            free(s);
            free(v);
            timg_free(&inf_img);
            timg_free(&kout);
        }
        {
            iwpp_image big = k;
            big.stride_y = INT64_MAX / 2; /* its extent overflows 64 bits */
            RECON("mask stride_y INT64_MAX/2", m, big, 8, IWPP_BY_DILATION, IWPP_EINVAL, -1, "stride");
            big = k;
            big.stride_z = -5;
            RECON("mask stride_z -5", m, big, 8, IWPP_BY_DILATION, IWPP_EINVAL, -1, "stride");
        }
        t = k;
        t.stride_y = 7; /* < width 8 */
        RECON("mask stride_y 7 < width 8", m, t, 8, IWPP_BY_DILATION, IWPP_EINVAL, -1, "stride");
        t = k;
        t.stride_y = -8;
        RECON("mask stride_y -8", m, t, 8, IWPP_BY_DILATION, IWPP_EINVAL, -1, "stride");
        {
            iwpp_image m3 = f.a3.v, k3 = f.b3.v;
            k3.stride_y = 5;
            k3.stride_z = 19; /* < 5 * 4 */
            RECON("mask stride_z 19 < stride_y*height 20", m3, k3, 6, IWPP_BY_DILATION, IWPP_EINVAL, -1, "stride");
            m3.stride_y = 4; /* the output: stride_y < width */
            m3.stride_z = 20;
            k3 = f.b3.v;
            RECON("marker stride_y 4 < width 5", m3, k3, 6, IWPP_BY_DILATION, IWPP_EINVAL, -1, "stride");
        }
        {
            /* sizes whose product overflows: rejected before touching memory */
            iwpp_image h1 = m, h2 = k;
            h1.width = h2.width = (int64_t)1 << 40;
            h1.height = h2.height = (int64_t)1 << 40;
            RECON("2^40 x 2^40 (overflowing size)", h1, h2, 8, IWPP_BY_DILATION, IWPP_EINVAL, IWPP_ENOMEM,
                  "size|large|overflow|memory|bytes|width|height|pixels");
        }
#undef RECON
        fixture_free(&f);
    }
    assert_int_equal(g_fails, 0);
}

/* ------------------------------------------------------------------ EDT */
static void test_edt_errors(void **state)
{
    (void)state;
    g_fails = 0;
    for (int c = 0; c < g_ncfg; ++c) {
        iwpp_context *ctx = g_cfg[c].ctx;
        fixture f;
        fixture_init(&f);
        iwpp_status st;
        double one[3] = {1, 1, 1};
#define EDT(label, bin_, method_, spacing_, dst_, nr_, want, want2, kw)                               \
    do {                                                                                             \
        st = iwpp_distance_transform(ctx, (bin_), (method_), (spacing_), (dst_), (nr_));               \
        expect(ctx, st, want, want2, kw, fmt("distance_transform: %s [%s]", label, g_cfg[c].name));   \
        expect_untouched(&f.dist, f.snap_dist, label);                                               \
        expect_untouched(&f.near, f.snap_near, label);                                               \
        expect_untouched(&f.out, f.snap_out, label);                                                 \
        expect_untouched(&f.u16, f.snap_u16, label);                                                 \
    } while (0)
        iwpp_image b = f.b.v;
        st = iwpp_distance_transform(NULL, &b, IWPP_EDT_EXACT, one, &f.dist.v, &f.near.v);
        expect(NULL, st, IWPP_EINVAL, -1, NULL, "distance_transform: NULL context");
        EDT("NULL binary", NULL, IWPP_EDT_EXACT, one, &f.dist.v, &f.near.v, IWPP_EINVAL, -1, "null|binary|input");
        EDT("NULL dist_out", &b, IWPP_EDT_EXACT, one, NULL, &f.near.v, IWPP_EINVAL, -1, "null|dist");
        EDT("dist_out U8", &b, IWPP_EDT_EXACT, one, &f.out.v, NULL, IWPP_EINVAL, -1, "f32|type|dist");
        EDT("dist_out U16", &b, IWPP_EDT_DANIELSSON, one, &f.u16.v, NULL, IWPP_EINVAL, -1, "f32|type|dist");
        EDT("nearest_out F32", &b, IWPP_EDT_EXACT, one, &f.dist.v, &f.f_ok.v, IWPP_EINVAL, -1, "i64|type|nearest");
        EDT("nearest_out U8", &b, IWPP_EDT_DANIELSSON, one, &f.dist.v, &f.out.v, IWPP_EINVAL, -1, "i64|type|nearest");
        {
            iwpp_image d2 = f.dist.v;
            d2.height = 5;
            EDT("dist_out 8x5 vs 8x6", &b, IWPP_EDT_EXACT, one, &d2, NULL, IWPP_EINVAL, -1, "size|height|dist|match");
            iwpp_image n2 = f.near.v;
            n2.width = 7;
            EDT("nearest_out 7x6 vs 8x6", &b, IWPP_EDT_EXACT, one, &f.dist.v, &n2, IWPP_EINVAL, -1, "size|width|nearest|match");
            iwpp_image d3 = f.dist.v;
            d3.stride_y = 3;
            EDT("dist_out stride_y 3 < width 8", &b, IWPP_EDT_EXACT, one, &d3, NULL, IWPP_EINVAL, -1, "stride");
        }
        EDT("I64 binary", &f.i64.v, IWPP_EDT_EXACT, one, &f.dist.v, NULL, IWPP_EINVAL, IWPP_EUNSUPPORTED, "type|i64");
        {
            iwpp_image t = b;
            t.type = (iwpp_type)42;
            EDT("binary type 42", &t, IWPP_EDT_EXACT, one, &f.dist.v, NULL, IWPP_EINVAL, -1, "type");
            t = b;
            t.depth = 0;
            EDT("binary depth 0", &t, IWPP_EDT_EXACT, one, &f.dist.v, NULL, IWPP_EINVAL, -1, "depth|size|empty|zero");
            t = b;
            t.data = NULL;
            EDT("binary data NULL", &t, IWPP_EDT_EXACT, one, &f.dist.v, NULL, IWPP_EINVAL, -1, "null|data");
        }
        EDT("method 9", &b, (iwpp_edt_method)9, one, &f.dist.v, NULL, IWPP_EINVAL, -1, "method");
        double bad_sp[][3] = {{0, 1, 1}, {1, -1, 1}, {1, 1, NAN}, {INFINITY, 1, 1}, {1, -0.0, 1}};
        for (size_t i = 0; i < sizeof bad_sp / sizeof bad_sp[0]; ++i)
            EDT(fmt("spacing (%g, %g, %g)", bad_sp[i][0], bad_sp[i][1], bad_sp[i][2]), &b, IWPP_EDT_EXACT, bad_sp[i],
                &f.dist.v, &f.near.v, IWPP_EINVAL, -1, "spacing");
        EDT("NaN in an F32 binary", &f.f_nan.v, IWPP_EDT_EXACT, one, &f.dist.v, &f.near.v, IWPP_EINVAL, -1, "nan");
        EDT("NaN in an F32 binary (Danielsson)", &f.f_nan.v, IWPP_EDT_DANIELSSON, NULL, &f.dist.v, NULL, IWPP_EINVAL, -1, "nan");
#undef EDT
        fixture_free(&f);
    }
    assert_int_equal(g_fails, 0);
}

/* ------------------------------------------------------------------ composed ops */
typedef enum { C_FILL, C_KILL, C_RMAX, C_RMIN, C_HMAX, C_HMIN, C_OPEN, C_CLOSE, C_N } cop;
static const char *CNAMES[C_N] = {"fill_holes", "kill_borders", "regional_maxima", "regional_minima",
                                  "h_maxima", "h_minima", "opening_by_reconstruction", "closing_by_reconstruction"};

static iwpp_status ccall(iwpp_context *ctx, cop op, const iwpp_image *in, double h, int radius, int conn,
                         iwpp_image *out)
{
    switch (op) {
    case C_FILL: return iwpp_fill_holes(ctx, in, conn, out);
    case C_KILL: return iwpp_kill_borders(ctx, in, conn, out);
    case C_RMAX: return iwpp_regional_maxima(ctx, in, conn, out);
    case C_RMIN: return iwpp_regional_minima(ctx, in, conn, out);
    case C_HMAX: return iwpp_h_maxima(ctx, in, h, conn, out);
    case C_HMIN: return iwpp_h_minima(ctx, in, h, conn, out);
    case C_OPEN: return iwpp_opening_by_reconstruction(ctx, in, radius, conn, out);
    default: return iwpp_closing_by_reconstruction(ctx, in, radius, conn, out);
    }
}

static void test_composed_errors(void **state)
{
    (void)state;
    g_fails = 0;
    for (int c = 0; c < g_ncfg; ++c) {
        iwpp_context *ctx = g_cfg[c].ctx;
        for (int o = 0; o < C_N; ++o) {
            fixture f;
            fixture_init(&f);
            cop op = (cop)o;
            iwpp_status st;
            iwpp_image in = f.b.v;
#define COMP2(label, inp, h, radius, conn, outp, alt, kw)                                             \
    do {                                                                                             \
        st = ccall(ctx, op, (inp), (h), (radius), (conn), (outp));                                   \
        expect(ctx, st, IWPP_EINVAL, alt, kw, fmt("%s: %s [%s]", CNAMES[o], label, g_cfg[c].name));   \
        expect_untouched(&f.out, f.snap_out, label);                                                 \
        expect_untouched(&f.u16, f.snap_u16, label);                                                 \
        expect_untouched(&f.dist, f.snap_dist, label);                                               \
        expect_untouched(&f.out3, f.snap_out3, label);                                               \
    } while (0)
#define COMP(label, inp, h, radius, conn, outp, kw) COMP2(label, inp, h, radius, conn, outp, -1, kw)
            st = ccall(NULL, op, &in, 1, 1, 8, &f.out.v);
            expect(NULL, st, IWPP_EINVAL, -1, NULL, fmt("%s: NULL context", CNAMES[o]));
            expect_untouched(&f.out, f.snap_out, "NULL context");
            COMP("NULL in", NULL, 1, 1, 8, &f.out.v, "null|in");
            COMP("NULL out", &in, 1, 1, 8, NULL, "null|out");
            COMP("connectivity 5", &in, 1, 1, 5, &f.out.v, "connectivity");
            COMP("connectivity 4 on a 3D image", &f.b3.v, 1, 1, 4, &f.out3.v, "connectivity");
            COMP("connectivity 8 on a 3D image", &f.b3.v, 1, 1, 8, &f.out3.v, "connectivity");
            COMP2("I64 input", &f.i64.v, 1, 1, 8, &f.out.v, IWPP_EUNSUPPORTED, "type|i64");
            {
                iwpp_image t = in;
                t.type = (iwpp_type)0;
                COMP("input type 0", &t, 1, 1, 8, &f.out.v, "type");
                t = in;
                t.height = 0;
                COMP("input height 0", &t, 1, 1, 8, &f.out.v, "height|size|empty|zero");
                t = in;
                t.stride_y = 2;
                COMP("input stride_y 2 < width 8", &t, 1, 1, 8, &f.out.v, "stride");
                iwpp_image o2 = f.out.v;
                o2.height = 5;
                COMP("out 8x5 vs in 8x6", &in, 1, 1, 8, &o2, "size|height|out|match");
                o2 = f.out.v;
                o2.stride_y = 7;
                COMP("out stride_y 7 < width 8", &in, 1, 1, 8, &o2, "stride");
            }
            if (op == C_RMAX || op == C_RMIN) {
                COMP2("out U16 (must be U8)", &in, 1, 1, 8, &f.u16.v, IWPP_EUNSUPPORTED, "u8");
                COMP2("out F32 (must be U8) for an F32 input", &f.f_ok.v, 1, 1, 8, &f.dist.v, IWPP_EUNSUPPORTED, "u8");
            } else {
                COMP("out U16 for a U8 input", &in, 1, 1, 8, &f.u16.v, "type|u16|u8|out|match");
                COMP("out U8 for an F32 input", &f.f_ok.v, 1, 1, 8, &f.out.v, "type|f32|u8|out|match");
            }
            COMP("NaN in an F32 input", &f.f_nan.v, 1, 1, 8, (op == C_RMAX || op == C_RMIN) ? &f.out.v : &f.dist.v, "nan");
            if (op == C_HMAX || op == C_HMIN) {
                COMP("h = -1", &in, -1.0, 1, 8, &f.out.v, "h");
                COMP("h = NaN", &in, NAN, 1, 8, &f.out.v, "h");
                COMP("h = -1e-9", &f.f_ok.v, -1e-9, 1, 8, &f.dist.v, "h");
            }
            if (op == C_OPEN || op == C_CLOSE) {
                COMP("radius -1", &in, 1, -1, 8, &f.out.v, "radius");
                COMP("radius -1000", &in, 1, -1000, 26, &f.out.v, "radius");
            }
#undef COMP
#undef COMP2
            fixture_free(&f);
        }
    }
    assert_int_equal(g_fails, 0);
}

/* ------------------------------------------------------------------ contexts, devices, names */
static void test_context_errors(void **state)
{
    (void)state;
    g_fails = 0;
    iwpp_status st;
    assert_non_null(iwpp_error_message(NULL));
    st = iwpp_context_create(NULL, IWPP_BACKEND_CPU);
    expect(NULL, st, IWPP_EINVAL, -1, NULL, "context_create(NULL)");
    iwpp_context_destroy(NULL);

    iwpp_context *ctx = NULL;
    st = iwpp_context_create(&ctx, (iwpp_backend)99);
    expect(ctx, st, IWPP_EINVAL, -1, "backend", "context_create(backend 99)");
    iwpp_context_destroy(ctx);

    /* requesting a backend that is not usable -> EDEVICE and a usable CPU context */
    iwpp_backend missing[2] = {IWPP_BACKEND_CUDA, IWPP_BACKEND_OPENCL};
    int tried = 0;
    for (int i = 0; i < 2; ++i) {
        char reason[256] = "";
        if (iwpp_backend_available(missing[i], reason, sizeof reason)) continue;
        ++tried;
        if (strlen(reason) < 8) {
            print_error("FAIL: backend_available(%s) gives no reason (\"%s\")\n", iwpp_backend_name(missing[i]), reason);
            ++g_fails;
        }
        ctx = NULL;
        st = iwpp_context_create(&ctx, missing[i]);
        expect(ctx, st, IWPP_EDEVICE, -1, iwpp_backend_name(missing[i]),
               fmt("context_create(%s) without that backend", iwpp_backend_name(missing[i])));
        if (!ctx) {
            print_error("FAIL: context_create(%s) returned EDEVICE without a CPU context\n", iwpp_backend_name(missing[i]));
            ++g_fails;
            continue;
        }
        if (iwpp_context_backend(ctx) != IWPP_BACKEND_CPU) {
            print_error("FAIL: the fallback context runs on %s, not cpu\n", iwpp_backend_name(iwpp_context_backend(ctx)));
            ++g_fails;
        }
        uint8_t mk[6] = {0, 0, 9, 0, 0, 0}, ms[6] = {5, 5, 5, 5, 1, 5};
        iwpp_image a = iwpp_image_2d(mk, IWPP_U8, 6, 1), b = iwpp_image_2d(ms, IWPP_U8, 6, 1);
        st = iwpp_reconstruct(ctx, &a, &b, 4, IWPP_BY_DILATION);
        if (st != IWPP_OK || mk[0] != 5 || mk[3] != 5 || mk[4] != 1 || mk[5] != 1) {
            print_error("FAIL: the CPU fallback context of %s does not work (%s)\n", iwpp_backend_name(missing[i]),
                        iwpp_status_name(st));
            ++g_fails;
        }
        iwpp_context_destroy(ctx);
    }
    if (!tried) print_message("note: every GPU backend is available here; the EDEVICE request case was not run\n");

    assert_int_equal(iwpp_backend_available((iwpp_backend)99, NULL, 0), 0);
    assert_int_equal(iwpp_backend_available(IWPP_BACKEND_CPU, NULL, 0), 1);

    /* setters */
    ctx = g_cfg[0].ctx;
    expect(NULL, iwpp_context_set_threads(NULL, 1), IWPP_EINVAL, -1, NULL, "set_threads(NULL)");
    expect(ctx, iwpp_context_set_threads(ctx, -1), IWPP_EINVAL, -1, "thread", "set_threads(-1)");
    expect(ctx, iwpp_context_set_tile_size(ctx, -5), IWPP_EINVAL, -1, "tile", "set_tile_size(-5)");
    expect(ctx, iwpp_context_set_queue_capacity(ctx, -1), IWPP_EINVAL, -1, "capacity|queue", "set_queue_capacity(-1)");
    expect(ctx, iwpp_context_set_algorithm(ctx, (iwpp_algorithm)99), IWPP_EINVAL, -1, "algorithm", "set_algorithm(99)");
    expect(ctx, iwpp_context_set_queue_variant(ctx, (iwpp_queue_variant)99), IWPP_EINVAL, -1, "variant|queue",
           "set_queue_variant(99)");
    expect(ctx, iwpp_context_set_device(ctx, -1), IWPP_EINVAL, IWPP_EDEVICE, "device", "set_device(-1)");
    expect(ctx, iwpp_context_set_device(ctx, 100000), IWPP_EINVAL, IWPP_EDEVICE, "device", "set_device(100000)");
    /* a failed setter leaves the context working as before */
    {
        uint8_t mk[4] = {0, 7, 0, 0}, ms[4] = {3, 9, 4, 2};
        iwpp_image a = iwpp_image_2d(mk, IWPP_U8, 4, 1), b = iwpp_image_2d(ms, IWPP_U8, 4, 1);
        st = iwpp_reconstruct(ctx, &a, &b, 4, IWPP_BY_DILATION);
        if (st != IWPP_OK || mk[0] != 3 || mk[1] != 7 || mk[2] != 4 || mk[3] != 2) {
            print_error("FAIL: the context no longer works after failed setters (%s: %s)\n", iwpp_status_name(st),
                        iwpp_error_message(ctx));
            ++g_fails;
        }
    }
    expect(ctx, iwpp_context_stats(ctx, NULL), IWPP_EINVAL, -1, "null|stats|out", "context_stats(ctx, NULL)");
    iwpp_stats s;
    expect(NULL, iwpp_context_stats(NULL, &s), IWPP_EINVAL, -1, NULL, "context_stats(NULL, &s)");

    /* devices */
    assert_int_equal(iwpp_device_count(IWPP_BACKEND_CPU), 1);
    iwpp_device_info info;
    memset(&info, 0, sizeof info);
    assert_int_equal(iwpp_device_info_get(IWPP_BACKEND_CPU, 0, &info), IWPP_OK);
    assert_true(info.name[0] != '\0' && info.compute_units >= 1);
    assert_true(iwpp_device_info_get(IWPP_BACKEND_CPU, 1, &info) != IWPP_OK);
    assert_true(iwpp_device_info_get(IWPP_BACKEND_CPU, -1, &info) != IWPP_OK);
    assert_true(iwpp_device_info_get(IWPP_BACKEND_CPU, 0, NULL) != IWPP_OK);
    assert_true(iwpp_device_info_get((iwpp_backend)99, 0, &info) != IWPP_OK);
    if (g_backend != IWPP_BACKEND_CPU) {
        int n = iwpp_device_count(g_backend);
        assert_true(n >= 1);
        assert_int_equal(iwpp_device_info_get(g_backend, 0, &info), IWPP_OK);
        print_message("%s device 0: %s (%s), %llu bytes, %d units, gpu=%d\n", iwpp_backend_name(g_backend), info.name,
                      info.platform, (unsigned long long)info.global_memory, info.compute_units, info.is_gpu);
        assert_true(iwpp_device_info_get(g_backend, n, &info) != IWPP_OK);
    }

    /* names */
    iwpp_status codes[] = {IWPP_OK, IWPP_EINVAL, IWPP_ENOMEM, IWPP_EDEVICE, IWPP_EUNSUPPORTED, IWPP_EINTERNAL};
    for (size_t i = 0; i < 6; ++i) {
        assert_non_null(iwpp_status_name(codes[i]));
        assert_true(strlen(iwpp_status_name(codes[i])) > 0);
        for (size_t j = 0; j < i; ++j) assert_true(strcmp(iwpp_status_name(codes[i]), iwpp_status_name(codes[j])) != 0);
    }
    assert_non_null(iwpp_status_name((iwpp_status)77));
    assert_int_equal(iwpp_type_size(IWPP_U8), 1);
    assert_int_equal(iwpp_type_size(IWPP_U16), 2);
    assert_int_equal(iwpp_type_size(IWPP_F32), 4);
    assert_int_equal(iwpp_type_size(IWPP_I64), 8);
    assert_int_equal(iwpp_type_size((iwpp_type)9), 0);
    assert_string_equal(iwpp_type_name(IWPP_U16), "u16");
    assert_string_equal(iwpp_type_name((iwpp_type)9), "unknown");
    assert_string_equal(iwpp_backend_name(IWPP_BACKEND_OPENCL), "opencl");
    {
        uint8_t px[24];
        iwpp_image v = iwpp_image_3d(px, IWPP_U8, 4, 3, 2);
        assert_true(v.width == 4 && v.height == 3 && v.depth == 2 && v.data == px);
        v = iwpp_image_2d(px, IWPP_U8, 4, 3);
        assert_true(v.depth == 1);
    }
    assert_int_equal(g_fails, 0);
}

int main(int argc, char **argv)
{
    (void)argc;
    int rc = harness_init(argv[0]);
    if (rc) harness_exit(rc);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reconstruct_errors),
        cmocka_unit_test(test_edt_errors),
        cmocka_unit_test(test_composed_errors),
        cmocka_unit_test(test_context_errors),
    };
    int failed = HARNESS_RUN("errors", tests);
    harness_exit(failed ? 1 : 0);
}
