/*
 * test_composed.c - the operations built on reconstruction against the
 * oracle, bit for bit. Compiled three times:
 *   COMPOSED_GROUP=1  fill holes, kill borders            (test_fill_kill)
 *   COMPOSED_GROUP=2  regional maxima/minima, h-maxima/h-minima (test_extrema)
 *   COMPOSED_GROUP=3  opening/closing by reconstruction   (test_open_close)
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#ifndef COMPOSED_GROUP
#define COMPOSED_GROUP 1
#endif

typedef enum op_t { OP_FILL, OP_KILL, OP_RMAX, OP_RMIN, OP_HMAX, OP_HMIN, OP_OPEN, OP_CLOSE } op_t;
static const char *OP_NAMES[] = {"fill_holes", "kill_borders", "regional_maxima", "regional_minima",
                                 "h_maxima",   "h_minima",     "opening",         "closing"};

#if COMPOSED_GROUP == 1
static const op_t GROUP_OPS[] = {OP_FILL, OP_KILL};
#define GROUP_NAME "fill_kill"
#elif COMPOSED_GROUP == 2
static const op_t GROUP_OPS[] = {OP_RMAX, OP_RMIN, OP_HMAX, OP_HMIN};
#define GROUP_NAME "extrema"
#else
static const op_t GROUP_OPS[] = {OP_OPEN, OP_CLOSE};
#define GROUP_NAME "open_close"
#endif
#define NOPS ((int)(sizeof GROUP_OPS / sizeof GROUP_OPS[0]))

static const iwpp_type TYPES[3] = {IWPP_U8, IWPP_U16, IWPP_F32};

static iwpp_type out_type(op_t op, iwpp_type in)
{
    return (op == OP_RMAX || op == OP_RMIN) ? IWPP_U8 : in;
}

static int has_param(op_t op) { return op == OP_HMAX || op == OP_HMIN || op == OP_OPEN || op == OP_CLOSE; }

static iwpp_status call_op(iwpp_context *ctx, op_t op, const iwpp_image *in, double param, int conn,
                           iwpp_image *out)
{
    switch (op) {
    case OP_FILL: return iwpp_fill_holes(ctx, in, conn, out);
    case OP_KILL: return iwpp_kill_borders(ctx, in, conn, out);
    case OP_RMAX: return iwpp_regional_maxima(ctx, in, conn, out);
    case OP_RMIN: return iwpp_regional_minima(ctx, in, conn, out);
    case OP_HMAX: return iwpp_h_maxima(ctx, in, param, conn, out);
    case OP_HMIN: return iwpp_h_minima(ctx, in, param, conn, out);
    case OP_OPEN: return iwpp_opening_by_reconstruction(ctx, in, (int)param, conn, out);
    default: return iwpp_closing_by_reconstruction(ctx, in, (int)param, conn, out);
    }
}

static void oracle_op(op_t op, const double *in, odims d, iwpp_type t, double param, int conn, double *out)
{
    switch (op) {
    case OP_FILL: oracle_fill_holes(in, d, t, conn, out); break;
    case OP_KILL: oracle_kill_borders(in, d, t, conn, out); break;
    case OP_RMAX: oracle_regional_extrema(in, d, conn, 1, out); break;
    case OP_RMIN: oracle_regional_extrema(in, d, conn, 0, out); break;
    case OP_HMAX: oracle_hextrema(in, d, t, param, conn, 1, out); break;
    case OP_HMIN: oracle_hextrema(in, d, t, param, conn, 0, out); break;
    case OP_OPEN: oracle_open_close(in, d, (int)param, conn, 1, out); break;
    default: oracle_open_close(in, d, (int)param, conn, 0, out); break;
    }
}

typedef struct ccase {
    op_t op;
    iwpp_type type;
    odims d;
    const double *in;
    double param;
    int conn;
    int64_t pad_y, pad_z;
    int in_place;
    const char *label;
    uint64_t seed;
} ccase;

static int run_case(const ccase *c)
{
    int fails = 0;
    double *expected = vol_alloc(c->d);
    oracle_op(c->op, c->in, c->d, c->type, c->param, c->conn, expected);
    iwpp_type ot = out_type(c->op, c->type);
    if (c->in_place && ot != c->type) {
        free(expected);
        return 0; /* out must be U8: in place only when in is U8 too */
    }
    for (int i = 0; i < g_ncfg; ++i) {
        const char *what = fmt("%s %s param=%g conn=%d %lldx%lldx%lld %s%s pad=%lld/%lld seed=%llu [%s]",
                               OP_NAMES[c->op], iwpp_type_name(c->type), c->param, c->conn,
                               (long long)c->d.w, (long long)c->d.h, (long long)c->d.d, c->label,
                               c->in_place ? " in-place" : "", (long long)c->pad_y, (long long)c->pad_z,
                               (unsigned long long)c->seed, g_cfg[i].name);
        timg in, out;
        if (!timg_init(&in, c->type, c->d, c->pad_y, c->pad_z)) fail_msg("out of memory in the test");
        timg_load(&in, c->in);
        unsigned char *snap = NULL;
        if (!c->in_place) {
            if (!timg_init(&out, ot, c->d, c->pad_y ? c->pad_y + 2 : 0, c->pad_z ? c->pad_z + 1 : 0))
                fail_msg("out of memory in the test");
            snap = malloc(in.bytes);
            memcpy(snap, in.alloc, in.bytes);
        }
        timg *res = c->in_place ? &in : &out;
        iwpp_status st = call_op(g_cfg[i].ctx, c->op, &in.v, c->param, c->conn, &res->v);
        int bad = check_ok(st, g_cfg[i].ctx, what);
        if (!bad) bad = check_equal(res, expected, what);
        if (!bad && snap && !timg_bytes_equal(&in, snap)) {
            print_error("FAIL: %s: the input was modified\n", what);
            bad = 1;
        }
        if (bad) note_failure(&fails);
        free(snap);
        timg_free(&in);
        if (!c->in_place) timg_free(&out);
    }
    free(expected);
    return fails;
}

/* The parameters each op is tried with, for type t. */
static int params_for(op_t op, iwpp_type t, double out[6])
{
    if (op == OP_HMAX || op == OP_HMIN) {
        if (t == IWPP_F32) {
            out[0] = 0.0; out[1] = 0.25; out[2] = 1.75; out[3] = 0.3; /* 0.3: not exact in float */
            return 4;
        }
        if (t == IWPP_U16) {
            out[0] = 0.0; out[1] = 1.0; out[2] = 8191.6; out[3] = 30000.4;
            return 4;
        }
        out[0] = 0.0; out[1] = 1.0; out[2] = 2.4; out[3] = 2.6; out[4] = 40.0;
        return 5;
    }
    if (op == OP_OPEN || op == OP_CLOSE) {
        out[0] = 0; out[1] = 1; out[2] = 2; out[3] = 3;
        return 4;
    }
    out[0] = 0;
    return 1;
}

static int random_cases(uint64_t seed, const odims *sizes, int nsizes, const int *conns, int nconn)
{
    int fails = 0;
    for (int o = 0; o < NOPS; ++o)
        for (int s = 0; s < nsizes; ++s)
            for (int t = 0; t < 3; ++t)
                for (int c = 0; c < nconn; ++c) {
                    op_t op = GROUP_OPS[o];
                    odims d = sizes[s];
                    trng r;
                    trng_seed(&r, ++seed);
                    double *in = vol_alloc(d);
                    /* few levels: plateaus and basins; many levels: fine structure */
                    int levels = (seed % 3 == 0) ? 256 : (seed % 3 == 1) ? 5 : 12;
                    gen_random(&r, TYPES[t], d, levels, in);
                    double params[6];
                    int np = params_for(op, TYPES[t], params);
                    for (int p = 0; p < np; ++p) {
                        ccase cc = {op, TYPES[t], d, in, params[p], conns[c], 0, 0, 0, "random", seed};
                        fails += run_case(&cc);
                    }
                    free(in);
                }
    return fails;
}

static void test_random_2d(void **state)
{
    (void)state;
    static const odims sizes[] = {{1, 1, 1},   {1, 19, 1},  {19, 1, 1},  {2, 2, 1},  {13, 7, 1},
                                  {16, 16, 1}, {17, 17, 1}, {33, 31, 1}, {64, 64, 1}};
    static const int conns[] = {4, 8};
    assert_int_equal(random_cases(10000 * COMPOSED_GROUP, sizes, sizeof sizes / sizeof sizes[0], conns, 2), 0);
}

static void test_random_3d(void **state)
{
    (void)state;
    static const odims sizes[] = {{1, 1, 7}, {5, 4, 3}, {9, 9, 1}, {16, 16, 16}, {7, 13, 6}};
    static const int conns[] = {6, 18, 26};
    assert_int_equal(random_cases(20000 * COMPOSED_GROUP, sizes, sizeof sizes / sizeof sizes[0], conns, 3), 0);
}

/* Constant images, binary images with and without foreground/background,
 * holes, border objects, the extreme values of each type. */
static void test_adversarial(void **state)
{
    (void)state;
    int fails = 0;
    static const odims sizes[] = {{1, 1, 1}, {15, 13, 1}, {8, 7, 6}};
    for (int o = 0; o < NOPS; ++o)
        for (int s = 0; s < 3; ++s)
            for (int t = 0; t < 3; ++t) {
                op_t op = GROUP_OPS[o];
                iwpp_type ty = TYPES[t];
                odims d = sizes[s];
                int64_t n = odims_count(d);
                double mx = ty == IWPP_F32 ? FLT_MAX : type_max(ty);
                double mn = ty == IWPP_F32 ? -FLT_MAX : 0.0;
                double fgv = ty == IWPP_F32 ? 1.0 : type_max(ty);
                double *in = vol_alloc(d);
                int conn = d.d > 1 ? 6 : 4;
                int conn2 = d.d > 1 ? 26 : 8;
                double params[6];
                int np = params_for(op, ty, params);
                struct {
                    int kind;
                    const char *label;
                } kinds[] = {{0, "all zero"}, {1, "all max"}, {2, "all min"}, {3, "binary rings (holes)"},
                             {4, "binary: border objects and inner objects"}, {5, "extremes of the type"},
                             {6, "binary, no background"}, {7, "binary, no foreground"}};
                for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
                    trng r;
                    trng_seed(&r, 900 + k);
                    switch (kinds[k].kind) {
                    case 0: gen_const(d, 0.0, in); break;
                    case 1: gen_const(d, mx, in); break;
                    case 2: gen_const(d, mn, in); break;
                    case 3: /* concentric rings every 3 pixels: nested holes */
                        for (int64_t z = 0; z < d.d; ++z)
                            for (int64_t y = 0; y < d.h; ++y)
                                for (int64_t x = 0; x < d.w; ++x) {
                                    int64_t e = x < y ? x : y;
                                    if (d.w - 1 - x < e) e = d.w - 1 - x;
                                    if (d.h - 1 - y < e) e = d.h - 1 - y;
                                    if (d.d > 1) {
                                        if (z < e) e = z;
                                        if (d.d - 1 - z < e) e = d.d - 1 - z;
                                    }
                                    in[x + d.w * (y + d.h * z)] = (e % 3 == 1) ? fgv : 0.0;
                                }
                        break;
                    case 4: gen_binary(&r, d, 0.35, fgv, in); break;
                    case 5:
                        for (int64_t i = 0; i < n; ++i) {
                            int64_t k3 = trng_below(&r, 3);
                            in[i] = k3 == 0 ? mn : k3 == 1 ? mx : (ty == IWPP_F32 ? -0.5 : 1.0);
                        }
                        break;
                    case 6: gen_const(d, fgv, in); break;
                    default: gen_const(d, 0.0, in); break;
                    }
                    for (int p = 0; p < np; ++p) {
                        ccase cc = {op, ty, d, in, params[p], conn, 0, 0, 0, kinds[k].label, 900 + k};
                        fails += run_case(&cc);
                        cc.conn = conn2;
                        fails += run_case(&cc);
                    }
                }
                free(in);
            }
    assert_int_equal(fails, 0);
}

/* Strided views and out == in. */
static void test_strided_and_in_place(void **state)
{
    (void)state;
    int fails = 0;
    static const odims sizes[] = {{13, 7, 1}, {17, 16, 1}, {9, 8, 5}};
    for (int o = 0; o < NOPS; ++o)
        for (int s = 0; s < 3; ++s)
            for (int t = 0; t < 3; ++t) {
                op_t op = GROUP_OPS[o];
                odims d = sizes[s];
                uint64_t seed = 950 + (uint64_t)(o * 10 + s * 3 + t);
                trng r;
                trng_seed(&r, seed);
                double *in = vol_alloc(d);
                gen_random(&r, TYPES[t], d, 6, in);
                double param = has_param(op) ? (op == OP_OPEN || op == OP_CLOSE ? 1 : (TYPES[t] == IWPP_F32 ? 0.5 : 1)) : 0;
                int conn = d.d > 1 ? 18 : 8;
                ccase cc = {op, TYPES[t], d, in, param, conn, 3, d.d > 1 ? 4 : 0, 0, "strided", seed};
                fails += run_case(&cc);
                cc.in_place = 1;
                cc.label = "strided";
                fails += run_case(&cc);
                cc.pad_y = 0;
                cc.pad_z = 0;
                cc.label = "contiguous";
                fails += run_case(&cc);
                free(in);
            }
    assert_int_equal(fails, 0);
}

/* Sizes around the tile size, with structures crossing tile borders. */
static void test_tile_boundaries(void **state)
{
    (void)state;
    int fails = 0;
    int64_t t = g_tile > 40 ? 16 : g_tile;
    odims sizes[] = {{t - 1, t + 1, 1}, {t, t, 1}, {2 * t + 1, t + 1, 1}, {t + 1, t - 1, 3}, {33, 32, 1}};
    for (int o = 0; o < NOPS; ++o)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
            for (int ty = 0; ty < 3; ++ty) {
                op_t op = GROUP_OPS[o];
                odims d = sizes[s];
                if (d.w < 1 || d.h < 1) continue;
                uint64_t seed = 970 + (uint64_t)(o * 100 + (int)s * 3 + ty);
                trng r;
                trng_seed(&r, seed);
                double *corr = vol_alloc(d), *in = vol_alloc(d);
                gen_maze(&r, d, corr);
                int64_t n = odims_count(d);
                /* maze walls are background/high rim; corridors get a few levels */
                for (int64_t i = 0; i < n; ++i) {
                    double hi = TYPES[ty] == IWPP_F32 ? 5.0 : type_max(TYPES[ty]);
                    in[i] = corr[i] != 0.0 ? hi - (double)trng_below(&r, 3) : (double)trng_below(&r, 2);
                }
                double params[6];
                int np = params_for(op, TYPES[ty], params);
                for (int p = 0; p < np; ++p) {
                    ccase cc = {op, TYPES[ty], d, in, params[p], d.d > 1 ? 6 : 4, 0, 0, 0, "tile boundary maze", seed};
                    fails += run_case(&cc);
                    cc.conn = d.d > 1 ? 26 : 8;
                    fails += run_case(&cc);
                }
                free(corr);
                free(in);
            }
    assert_int_equal(fails, 0);
}

#if COMPOSED_GROUP == 2
/* Hand-checked semantics on top of the oracle: a peak of height exactly h
 * vanishes, saturation on 8/16-bit, huge h, F32 negative plateaus. */
static void test_h_semantics(void **state)
{
    (void)state;
    int fails = 0;
    odims d = {7, 5, 1};
    double *in = vol_alloc(d);
    static const iwpp_type ts[3] = {IWPP_U8, IWPP_U16, IWPP_F32};
    for (int t = 0; t < 3; ++t) {
        gen_const(d, ts[t] == IWPP_F32 ? -10.0 : 10.0, in);
        in[1 + 7 * 1] += 5; /* peak of height 5 */
        in[5 + 7 * 3] += 3; /* peak of height 3 */
        double hs[] = {3.0, 5.0, 1e12};
        for (int k = 0; k < 3; ++k) {
            if (ts[t] == IWPP_F32 && k == 2) continue; /* f - 1e12 in float: no saturation case */
            for (int op = OP_HMAX; op <= OP_HMIN; ++op) {
                ccase cc = {(op_t)op, ts[t], d, in, hs[k], 8, 0, 0, 0, "peaks of height 3 and 5", 0};
                fails += run_case(&cc);
            }
        }
        /* a dip at 0 on U8/U16: in - h underflows and must saturate at 0 */
        if (ts[t] != IWPP_F32) {
            in[3 + 7 * 2] = 0;
            ccase cc = {OP_HMAX, ts[t], d, in, 7.0, 4, 0, 0, 0, "saturation at 0", 0};
            fails += run_case(&cc);
            in[3 + 7 * 2] = type_max(ts[t]);
            cc.op = OP_HMIN;
            cc.label = "saturation at the type maximum";
            fails += run_case(&cc);
        }
    }
    free(in);
    assert_int_equal(fails, 0);
}
#endif

int main(int argc, char **argv)
{
    (void)argc;
    int rc = harness_init(argv[0]);
    if (rc) harness_exit(rc);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_2d),   cmocka_unit_test(test_random_3d),
        cmocka_unit_test(test_adversarial), cmocka_unit_test(test_strided_and_in_place),
        cmocka_unit_test(test_tile_boundaries),
#if COMPOSED_GROUP == 2
        cmocka_unit_test(test_h_semantics),
#endif
    };
    int failed = HARNESS_RUN(GROUP_NAME, tests);
    harness_exit(failed ? 1 : 0);
}
