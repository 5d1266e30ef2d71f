/*
 * test_tiles.c - reconstruction through the tile scheduler (native/tiles.c) against the
 * definitional oracle, bit for bit: a tiny memory budget cuts small images into tens to
 * hundreds of tiles, and the worker lists put several workers on one image.
 *
 * Inputs whose propagation must cross many tiles (a spiral through every tile, a maze, one
 * seed in a corner), sizes that are not multiples of the tile, every type, mode and
 * connectivity, 2D and 3D, and the operations built on reconstruction.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const iwpp_type TYPES[3] = {IWPP_U8, IWPP_U16, IWPP_F32};
static const iwpp_morph_mode MODES[2] = {IWPP_BY_DILATION, IWPP_BY_EROSION};

/* How a case's context is set up beyond the configuration under test. */
typedef struct tiling {
    uint64_t budget;     /* bytes; 0 = default */
    const char *workers; /* NULL = default */
    const char *label;
    const char *rerun_pops; /* tuning tiles.rerun_pops; NULL = default */
    const char *host_threads; /* tuning tiles.host_threads; NULL = default */
} tiling;

/* Cases whose tiled run had re-runs give up for full runs (tiling "re-runs give up"). */
static int g_full_reruns;

/* The tilings every case runs with: a budget alone (the backend's default workers), a budget
 * with a mixed worker list (the device twice and two CPU workers), and that list again with
 * every host re-run giving up after 2 pops for a full run of its tile (handed to a device by
 * the CPU workers) and three host threads taking turns on each worker (set explicitly, the key
 * applies to CPU workers too: under ThreadSanitizer the CPU backend's run checks the threads'
 * sharing of a worker's context). */
static int tilings(tiling *out, iwpp_type type)
{
    /* budgets that give regions of a few hundred pixels (tiles.c: the devices count their work
       buffers per pixel too, OpenCL its 32-bit copy of the marker and queues, CUDA the wavefront) */
    const uint64_t es = iwpp_type_size(type), per_px = g_backend == IWPP_BACKEND_CPU    ? 2 * es
                                                      : g_backend == IWPP_BACKEND_CUDA ? 2 * es + 1
                                                                                       : 2 * es + 9;
    int n = 0;
    out[n++] = (tiling){450 * per_px, NULL, "small budget", NULL, NULL};
    const char *list = g_backend == IWPP_BACKEND_CPU ? "cpu*3" : "gpu*2,cpu*2";
    const uint64_t budget = (g_backend == IWPP_BACKEND_CPU ? 1500 : 700) * per_px;
    out[n++] = (tiling){budget, list, g_backend == IWPP_BACKEND_CPU ? "small budget, cpu*3" : "small budget, gpu*2,cpu*2",
                        NULL, NULL};
    out[n++] = (tiling){budget, list, "re-runs give up after 2 pops, 3 host threads", "2", "3"};
    return n;
}

static iwpp_context *tiled_context(const harness_config *c, const tiling *t)
{
    iwpp_context *ctx = NULL;
    if (harness_make_context(c, &ctx) != IWPP_OK) return NULL;
    iwpp_status st = iwpp_context_set_memory_limit(ctx, t->budget);
    if (st == IWPP_OK && t->workers) st = iwpp_context_set_workers(ctx, t->workers);
    if (st == IWPP_OK && t->rerun_pops) st = iwpp_context_set_tuning(ctx, "tiles.rerun_pops", t->rerun_pops);
    if (st == IWPP_OK && t->host_threads) st = iwpp_context_set_tuning(ctx, "tiles.host_threads", t->host_threads);
    if (st != IWPP_OK) {
        print_error("cannot set up tiling \"%s\": %s\n", t->label, iwpp_error_message(ctx));
        iwpp_context_destroy(ctx);
        return NULL;
    }
    return ctx;
}

/* The in-memory result of the sequential CPU backend (itself checked against the oracle by
 * test_reconstruct): the oracle's repeated sweeps take minutes on a long spiral. */
static void cpu_reference(iwpp_type type, odims d, int conn, iwpp_morph_mode mode, const double *marker,
                          const double *mask, double *out)
{
    iwpp_context *ctx = NULL;
    timg mk, ms;
    if (iwpp_context_create(&ctx, IWPP_BACKEND_CPU) != IWPP_OK || iwpp_context_set_threads(ctx, 1) != IWPP_OK ||
        !timg_init(&mk, type, d, 0, 0) || !timg_init(&ms, type, d, 0, 0))
        fail_msg("cannot set up the CPU reference");
    timg_load(&mk, marker);
    timg_load(&ms, mask);
    if (iwpp_reconstruct(ctx, &mk.v, &ms.v, conn, mode) != IWPP_OK)
        fail_msg("CPU reference failed: %s", iwpp_error_message(ctx));
    timg_store(&mk, out);
    timg_free(&mk);
    timg_free(&ms);
    iwpp_context_destroy(ctx);
}

/* Configurations a case runs on: all CPU thread counts; on a GPU backend the first setting
 * only (the tiles do not depend on the queue variant, and PoCL is slow). */
static int ncfg(void) { return g_backend == IWPP_BACKEND_CPU ? g_ncfg : 1; }

/* Reconstruct on every configuration and tiling; compare with the oracle (or, with
 * @p by_cpu, the sequential CPU result). @p min_tiles: the tiled grid must have at least that
 * many tiles (0 = do not check). */
static int run_case(iwpp_type type, odims d, int conn, iwpp_morph_mode mode, const double *marker,
                    const double *mask, const char *label_in, int64_t min_tiles, int by_cpu)
{
    int fails = 0;
    char label[256]; /* fmt()'s buffers rotate: a label made by it is overwritten after 8 calls */
    snprintf(label, sizeof label, "%s", label_in);
    int64_t n = odims_count(d);
    double *expected = vol_alloc(d);
    if (by_cpu) {
        cpu_reference(type, d, conn, mode, marker, mask, expected);
    } else {
        memcpy(expected, marker, (size_t)n * sizeof(double));
        oracle_reconstruct(expected, mask, d, conn, mode == IWPP_BY_EROSION);
        for (int64_t k = 0; k < n; ++k) expected[k] = as_type(type, expected[k]);
    }
    tiling tl[4];
    int ntl = tilings(tl, type);
    for (int i = 0; i < ncfg(); ++i)
        for (int t = 0; t < ntl; ++t) {
            const char *what = fmt("tiled reconstruct %s %s conn=%d %lldx%lldx%lld %s, %s [%s]",
                                   iwpp_type_name(type), mode_name(mode), conn, (long long)d.w,
                                   (long long)d.h, (long long)d.d, label, tl[t].label, g_cfg[i].name);
            iwpp_context *ctx = tiled_context(&g_cfg[i], &tl[t]);
            if (!ctx) {
                note_failure(&fails);
                continue;
            }
            timg mk, ms;
            if (!timg_init(&mk, type, d, 3, d.d > 1 ? 5 : 0) || !timg_init(&ms, type, d, 0, 0))
                fail_msg("out of memory in the test");
            timg_load(&mk, marker);
            timg_load(&ms, mask);
            iwpp_status st = iwpp_reconstruct(ctx, &mk.v, &ms.v, conn, mode);
            int bad = check_ok(st, ctx, what);
            if (!bad) bad = check_equal(&mk, expected, what) || check_padding(&mk, what);
            iwpp_stats stats;
            iwpp_context_stats(ctx, &stats);
            /* (an image smaller than the budget may run in memory: min_tiles 0) */
            if (!bad && min_tiles > 0 && stats.tile_grid < min_tiles) {
                print_error("FAIL: %s: %lld tiles, expected at least %lld (variant \"%s\")\n", what,
                            (long long)stats.tile_grid, (long long)min_tiles, stats.variant);
                bad = 1;
            }
            if (!bad && stats.tile_grid > 0 && (stats.tiles < stats.tile_grid || stats.bytes_to_device <= 0 ||
                         stats.bytes_from_device <= 0 || stats.workers < 1)) {
                print_error("FAIL: %s: implausible tile figures (%lld runs of %lld tiles, %lld/%lld bytes)\n",
                            what, (long long)stats.tiles, (long long)stats.tile_grid,
                            (long long)stats.bytes_to_device, (long long)stats.bytes_from_device);
                bad = 1;
            }
            const char *fr = strstr(stats.variant, " full re-run");
            if (!bad && tl[t].rerun_pops && fr) {
                while (fr > stats.variant && fr[-1] >= '0' && fr[-1] <= '9') --fr;
                g_full_reruns += atoi(fr) > 0;
            }
            if (bad) note_failure(&fails);
            timg_free(&mk);
            timg_free(&ms);
            iwpp_context_destroy(ctx);
        }
    free(expected);
    return fails;
}

/* Random masks (plateaus on some), markers above the mask in places (clipping). */
static void test_random(void **state)
{
    (void)state;
    int fails = 0;
    static const odims s2[] = {{157, 103, 1}, {3, 91, 1}, {77, 1, 1}};
    static const odims s3[] = {{23, 19, 13}, {1, 9, 40}};
    uint64_t seed = 500;
    for (int t = 0; t < 3; ++t)
        for (int m = 0; m < 2; ++m)
            for (int dim = 2; dim <= 3; ++dim) {
                const odims *sizes = dim == 2 ? s2 : s3;
                int ns = dim == 2 ? 3 : 2;
                static const int c2[] = {4, 8}, c3[] = {6, 18, 26};
                const int *conns = dim == 2 ? c2 : c3;
                int nc = dim == 2 ? 2 : 3;
                for (int s = 0; s < ns; ++s)
                    for (int c = 0; c < nc; ++c) {
                        odims d = sizes[s];
                        trng r;
                        trng_seed(&r, ++seed);
                        double *mask = vol_alloc(d), *marker = vol_alloc(d);
                        gen_random(&r, TYPES[t], d, (seed & 1) ? 9 : 256, mask);
                        gen_random(&r, TYPES[t], d, 256, marker);
                        /* mostly far from the mask: long propagation, some clipping */
                        for (int64_t k = 0; k < odims_count(d); ++k)
                            if (trng_below(&r, 100) < 97)
                                marker[k] = MODES[m] == IWPP_BY_DILATION ? (TYPES[t] == IWPP_F32 ? -64.0 : 0.0)
                                                                         : (TYPES[t] == IWPP_F32 ? 64.0 : type_max(TYPES[t]));
                        fails += run_case(TYPES[t], d, conns[c], MODES[m], marker, mask,
                                          fmt("random seed=%llu", (unsigned long long)seed),
                                          s == 0 ? 20 : 0, 0);
                        free(mask);
                        free(marker);
                    }
            }
    assert_int_equal(fails, 0);
}

/* One seed in a corner; the mask a spiral or a maze: the wave crosses every tile, most of them
 * many times. */
static void test_long_paths(void **state)
{
    (void)state;
    int fails = 0;
    static const odims sizes[] = {{201, 173, 1}, {31, 29, 5}};
    for (int s = 0; s < 2; ++s)
        for (int kind = 0; kind < 2; ++kind)
            for (int t = 0; t < 3; ++t) {
                odims d = sizes[s];
                trng r;
                trng_seed(&r, 900 + (uint64_t)(s * 10 + kind));
                double *mask = vol_alloc(d), *marker = vol_alloc(d);
                if (kind == 0)
                    gen_spiral(d, mask);
                else
                    gen_maze(&r, d, mask);
                double hi = TYPES[t] == IWPP_F32 ? 2.5 : 200.0;
                for (int64_t k = 0; k < odims_count(d); ++k) {
                    mask[k] *= hi;
                    marker[k] = 0.0;
                }
                marker[0] = hi; /* corridors start at (0,0,0) */
                int conn = d.d > 1 ? 6 : 4;
                fails += run_case(TYPES[t], d, conn, IWPP_BY_DILATION, marker, mask,
                                  kind == 0 ? "spiral, one seed in a corner" : "maze, one seed in a corner",
                                  d.d > 1 ? 8 : 100, 1);
                /* the dual: a hole of low values reached from the corner by erosion */
                for (int64_t k = 0; k < odims_count(d); ++k) {
                    mask[k] = hi - mask[k];
                    marker[k] = hi;
                }
                marker[0] = 0.0;
                fails += run_case(TYPES[t], d, d.d > 1 ? 26 : 8, IWPP_BY_EROSION, marker, mask,
                                  kind == 0 ? "inverted spiral, erosion" : "inverted maze, erosion", 0, 1);
                free(mask);
                free(marker);
            }
    assert_int_equal(fails, 0);
    /* the long paths re-run tiles for long: the forced tiling must have handed some to full runs */
    if (g_full_reruns == 0) fail_msg("no case had a re-run give up for a full run");
}

/* Operations built on reconstruction go through tiles too: compare with the oracle. */
static void test_composed(void **state)
{
    (void)state;
    int fails = 0;
    const odims d = {97, 61, 1};
    for (int t = 0; t < 3; ++t) {
        tiling tl[4];
        int ntl = tilings(tl, TYPES[t]);
        trng r;
        trng_seed(&r, 1300 + (uint64_t)t);
        double *in = vol_alloc(d), *want = vol_alloc(d);
        gen_random(&r, TYPES[t], d, 5, in);
        for (int op = 0; op < 3; ++op) {
            const char *name = op == 0 ? "fill holes" : op == 1 ? "kill borders" : "h-maxima 2";
            if (op == 0)
                oracle_fill_holes(in, d, TYPES[t], 4, want);
            else if (op == 1)
                oracle_kill_borders(in, d, TYPES[t], 8, want);
            else
                oracle_hextrema(in, d, TYPES[t], 2.0, 8, 1, want);
            for (int64_t k = 0; k < odims_count(d); ++k) want[k] = as_type(TYPES[t], want[k]);
            for (int i = 0; i < ncfg(); ++i)
                for (int j = 0; j < ntl; ++j) {
                    const char *what = fmt("tiled %s %s [%s, %s]", name, iwpp_type_name(TYPES[t]), tl[j].label,
                                           g_cfg[i].name);
                    iwpp_context *ctx = tiled_context(&g_cfg[i], &tl[j]);
                    timg a, o;
                    if (!ctx || !timg_init(&a, TYPES[t], d, 0, 0) || !timg_init(&o, TYPES[t], d, 2, 0))
                        fail_msg("setup failed");
                    timg_load(&a, in);
                    iwpp_status st = op == 0   ? iwpp_fill_holes(ctx, &a.v, 4, &o.v)
                                     : op == 1 ? iwpp_kill_borders(ctx, &a.v, 8, &o.v)
                                               : iwpp_h_maxima(ctx, &a.v, 2.0, 8, &o.v);
                    int bad = check_ok(st, ctx, what);
                    if (!bad) bad = check_equal(&o, want, what) || check_padding(&o, what);
                    iwpp_stats stats;
                    iwpp_context_stats(ctx, &stats);
                    if (!bad && stats.tile_grid < 2) {
                        print_error("FAIL: %s: did not run through tiles (%s)\n", what, stats.variant);
                        bad = 1;
                    }
                    if (bad) note_failure(&fails);
                    timg_free(&a);
                    timg_free(&o);
                    iwpp_context_destroy(ctx);
                }
        }
        free(in);
        free(want);
    }
    assert_int_equal(fails, 0);
}

/* Exact EDT by strips or square tiles with margins (GPU backends: the CPU needs no device budget): distances
 * bit-identical to the in-memory CPU result, nearest indices at exactly that distance. */
/* @p far: the image has pixels far from any background (a margin the regions of a small budget
 * cannot hold), so the CPU may take the call there. */
static int edt_case(const double *bin, odims d, const double sp[3], const char *label, uint64_t budget, int far)
{
    int fails = 0;
    const int64_t n = odims_count(d);
    float *want = malloc((size_t)n * sizeof *want), *got = malloc((size_t)n * sizeof *got);
    int64_t *near = malloc((size_t)n * sizeof *near);
    uint8_t *b = malloc((size_t)n);
    for (int64_t k = 0; k < n; ++k) b[k] = bin[k] != 0 ? 255 : 0;
    iwpp_image in = iwpp_image_3d(b, IWPP_U8, d.w, d.h, d.d);
    iwpp_image wd = iwpp_image_3d(want, IWPP_F32, d.w, d.h, d.d), gd = iwpp_image_3d(got, IWPP_F32, d.w, d.h, d.d);
    iwpp_image gn = iwpp_image_3d(near, IWPP_I64, d.w, d.h, d.d);
    iwpp_context *cpu = NULL;
    if (iwpp_context_create(&cpu, IWPP_BACKEND_CPU) != IWPP_OK ||
        iwpp_distance_transform(cpu, &in, IWPP_EDT_EXACT, sp, &wd, NULL) != IWPP_OK)
        fail_msg("CPU reference EDT failed");
    iwpp_context_destroy(cpu);
    iwpp_context *ctx = NULL;
    const char *what = fmt("tiled exact EDT %lldx%lldx%lld %s spacing (%g, %g, %g) budget %llu", (long long)d.w,
                           (long long)d.h, (long long)d.d, label, sp[0], sp[1], sp[2], (unsigned long long)budget);
    if (harness_make_context(&g_cfg[0], &ctx) != IWPP_OK ||
        iwpp_context_set_memory_limit(ctx, budget) != IWPP_OK)
        fail_msg("setup failed");
    iwpp_status st = iwpp_distance_transform(ctx, &in, IWPP_EDT_EXACT, sp, &gd, &gn);
    int bad = check_ok(st, ctx, what);
    iwpp_stats stats;
    iwpp_context_stats(ctx, &stats);
    /* without nearest indices (strips may then write rows straight from the device) */
    float *alone = malloc((size_t)n * sizeof *alone);
    iwpp_image ad = iwpp_image_3d(alone, IWPP_F32, d.w, d.h, d.d);
    if (!bad) {
        bad = check_ok(iwpp_distance_transform(ctx, &in, IWPP_EDT_EXACT, sp, &ad, NULL), ctx, what);
        if (!bad && memcmp(alone, want, (size_t)n * sizeof *want) != 0) {
            print_error("FAIL: %s: distances without nearest indices differ from the CPU's\n", what);
            bad = 1;
        }
    }
    free(alone);
    for (int64_t k = 0; k < n && !bad; ++k) {
        if (memcmp(&want[k], &got[k], sizeof(float)) != 0) {
            print_error("FAIL: %s: pixel %lld: got %.9g, want %.9g (%s)\n", what, (long long)k, got[k], want[k],
                        stats.variant);
            bad = 1;
        } else if (isinf(want[k]) ? near[k] != -1
                                  : (near[k] < 0 || near[k] >= n || bin[near[k]] != 0 ||
                                     (float)oracle_index_distance(k, near[k], d, sp) != want[k])) {
            print_error("FAIL: %s: pixel %lld: nearest index %lld is not a nearest background pixel\n", what,
                        (long long)k, (long long)near[k]);
            bad = 1;
        }
    }
    /* a budget whose regions hold the margins these images need must run by tiles (strips or
       square tiles); a smaller one runs by tiles or, where a margin does not fit, on the CPU */
    const int may_cpu = budget < 100000 || (far && budget < 1000000);
    if (!bad && stats.tile_grid < 4 && !(may_cpu && strstr(stats.variant, "CPU"))) {
        print_error("FAIL: %s: did not run by tiles (%s)\n", what, stats.variant);
        bad = 1;
    }
    if (bad) note_failure(&fails);
    iwpp_context_destroy(ctx);
    free(want);
    free(got);
    free(near);
    free(b);
    return fails;
}

static void test_edt(void **state)
{
    (void)state;
    if (g_backend == IWPP_BACKEND_CPU) {
        printf("(the CPU has no device budget: EDT tiles run on GPU backends)\n");
        return;
    }
    int fails = 0;
    static const odims sizes[] = {{157, 103, 1}, {29, 23, 17}};
    const double unit[3] = {1, 1, 1}, aniso[3] = {1.0, 1.5, 2.25}, fine_y[3] = {0.7, 0.11, 1.3};
    for (int s = 0; s < 2; ++s) {
        odims d = sizes[s];
        int64_t n = odims_count(d);
        double *v = vol_alloc(d);
        trng r;
        for (int fam = 0; fam < 6; ++fam) {
            trng_seed(&r, 4000 + (uint64_t)(s * 10 + fam));
            const char *label = "";
            switch (fam) {
            case 0: gen_binary(&r, d, 0.9, 1, v); label = "random 10% background"; break;
            case 1: gen_binary(&r, d, 0.999, 1, v); label = "random 0.1% background"; break;
            case 2: gen_const(d, 1, v); v[0] = 0; label = "one background pixel in a corner"; break;
            case 3: gen_const(d, 1, v); label = "no background"; break;
            case 4:
                gen_const(d, 1, v);
                for (int64_t x = 0; x < d.w; ++x) v[x + d.w * (d.h / 2)] = 0;
                label = "one background row";
                break;
            default:
                gen_const(d, 1, v);
                for (int64_t k = 0; k < n; ++k)
                    if ((k % d.w) == (k / d.w) % d.h) v[k] = 0;
                label = "a diagonal line";
                break;
            }
            /* square tiles (a row with margins does not fit), strips whose margins may not
               fit, strips whose regions may span the image */
            const int far = fam >= 2;
            fails += edt_case(v, d, unit, label, 600 * 21, far);
            fails += edt_case(v, d, unit, label, 660000, far);
            fails += edt_case(v, d, aniso, label, 660000, far);
            fails += edt_case(v, d, aniso, label, 2000000, far);
        }
        free(v);
    }
    {
        /* a fine axis (y at 0.11 against 0.7 and 1.3): square tiles with margins of one physical
           width run on the device (the same pixels on every axis grew the region past the budget,
           and the CPU took the call) */
        const odims d = {61, 53, 47};
        double *v = vol_alloc(d);
        trng r;
        trng_seed(&r, 4100);
        gen_binary(&r, d, 0.9, 1, v);
        fails += edt_case(v, d, fine_y, "random 10% background, fine y", 600000, 0);
        free(v);
    }
    assert_int_equal(fails, 0);
}

/* Strips whose input goes up as bits of "!= 0" (ops->upload_nonzero; staged transfers forced
 * on: PoCL does not stage by default): U8, U16 and F32 inputs with values other
 * than 0 and 1 (F32: -0 is background; denormals and negative values are not) give the
 * CPU's distances bit for bit, with and without nearest indices (each a background pixel at that
 * distance), and the strips say "/bits". 128-byte chunks: a region goes up in 1024-pixel pieces
 * through the ring of staging buffers, its last byte of bits partial. */
static void test_edt_strips_bits(void **state)
{
    (void)state;
    if (g_backend == IWPP_BACKEND_CPU) {
        printf("(the CPU has no device budget: EDT tiles run on GPU backends)\n");
        return;
    }
    const int64_t w = 157, h = 211, n = w * h;
    const iwpp_type types[3] = {IWPP_U8, IWPP_U16, IWPP_F32};
    const float fvals[5] = {-1e-45f, 1e-40f, -3.5f, 1e30f, 0.25f};
    void *in = malloc((size_t)n * 4);
    float *want = malloc((size_t)n * sizeof *want), *got = malloc((size_t)n * sizeof *got);
    int64_t *near = malloc((size_t)n * sizeof *near);
    assert_true(in && want && got && near);
    int fails = 0;
    for (int t = 0; t < 3; ++t) {
        trng r;
        trng_seed(&r, 4200 + (uint64_t)t);
        for (int64_t k = 0; k < n; ++k) {
            const uint64_t v = trng_next(&r);
            const int bg = v % 20 == 0;
            if (types[t] == IWPP_U8) ((uint8_t *)in)[k] = bg ? 0 : (uint8_t)(1 + (v >> 8) % 255);
            if (types[t] == IWPP_U16) ((uint16_t *)in)[k] = bg ? 0 : (uint16_t)(1 + (v >> 8) % 65535);
            if (types[t] == IWPP_F32) ((float *)in)[k] = bg ? ((v >> 8) & 1 ? -0.0f : 0.0f) : fvals[(v >> 8) % 5];
        }
        iwpp_image im = iwpp_image_2d(in, types[t], w, h);
        iwpp_image wd = iwpp_image_2d(want, IWPP_F32, w, h), gd = iwpp_image_2d(got, IWPP_F32, w, h);
        iwpp_image gn = iwpp_image_2d(near, IWPP_I64, w, h);
        iwpp_context *cpu = NULL, *ctx = NULL;
        assert_int_equal(iwpp_context_create(&cpu, IWPP_BACKEND_CPU), IWPP_OK);
        assert_int_equal(iwpp_distance_transform(cpu, &im, IWPP_EDT_EXACT, NULL, &wd, NULL), IWPP_OK);
        iwpp_context_destroy(cpu);
        assert_int_equal(harness_make_context(&g_cfg[0], &ctx), IWPP_OK);
        assert_int_equal(iwpp_context_set_memory_limit(ctx, 660000), IWPP_OK);
        static const char *const tune[4][2] = {
            {"ocl.stage", "0"}, {"cuda.stage_min", "0"}, {"ocl.stage_chunk", "128"}, {"cuda.stage_chunk", "128"}};
        for (int i = 0; i < 4; ++i) assert_int_equal(iwpp_context_set_tuning(ctx, tune[i][0], tune[i][1]), IWPP_OK);
        /* the staging ring is made again at each change of chunk size (CUDA: released and
           pinned anew); "" is the default (the strips' worker contexts then stage through 4 MiB) */
        static const char *const chunks[7] = {"128", "256", "384", "256", "384", "128", ""};
        /* tiles.edt_helpers "1": a helper thread per worker copies the strips' rows into the
           output (with ordinary memory too, so that every backend runs that path here) */
        for (int pass = 0; pass < 14; ++pass) {
            const int with_near = pass & 1, helpers = pass < 7;
            assert_int_equal(iwpp_context_set_tuning(ctx, "cuda.stage_chunk", chunks[pass % 7]), IWPP_OK);
            assert_int_equal(iwpp_context_set_tuning(ctx, "tiles.edt_helpers", helpers ? "1" : "0"), IWPP_OK);
            const char *what = fmt("EDT strips from bits, %s, %s nearest indices, cuda.stage_chunk \"%s\", helpers %d",
                                   iwpp_type_name(types[t]), with_near ? "with" : "without", chunks[pass % 7], helpers);
            memset(got, 0, (size_t)n * sizeof *got);
            int bad = check_ok(iwpp_distance_transform(ctx, &im, IWPP_EDT_EXACT, NULL, &gd, with_near ? &gn : NULL),
                               ctx, what);
            iwpp_stats stats;
            iwpp_context_stats(ctx, &stats);
            if (!bad && memcmp(got, want, (size_t)n * sizeof *got) != 0) {
                print_error("FAIL: %s: distances differ from the CPU's (%s)\n", what, stats.variant);
                bad = 1;
            }
            const odims d = {w, h, 1};
            const double unit[3] = {1, 1, 1};
            for (int64_t k = 0; k < n && with_near && !bad; ++k) {
                const int64_t q = near[k];
                const int q_bg = q >= 0 && q < n &&
                                 (types[t] == IWPP_U8    ? ((uint8_t *)in)[q] == 0
                                  : types[t] == IWPP_U16 ? ((uint16_t *)in)[q] == 0
                                                         : ((float *)in)[q] == 0.0f);
                if (!q_bg || (float)oracle_index_distance(k, q, d, unit) != want[k]) {
                    print_error("FAIL: %s: pixel %lld: nearest index %lld is not a nearest background pixel\n", what,
                                (long long)k, (long long)q);
                    bad = 1;
                }
            }
            if (!bad && (!strstr(stats.variant, "strips") || !strstr(stats.variant, "/bits"))) {
                print_error("FAIL: %s: not strips from bits (%s)\n", what, stats.variant);
                bad = 1;
            }
            if (!bad && (strstr(stats.variant, "/helpers") != NULL) != (helpers && !with_near)) {
                print_error("FAIL: %s: helpers %s (%s)\n", what, helpers && !with_near ? "missing" : "unasked for",
                            stats.variant);
                bad = 1;
            }
            if (!bad) printf("%s: %s\n", what, stats.variant);
            if (bad) note_failure(&fails);
        }
        iwpp_context_destroy(ctx);
    }
    free(in);
    free(want);
    free(got);
    free(near);
    assert_int_equal(fails, 0);
}

/* Progress reaches 1, and a progress callback that asks to stop gets IWPP_ECANCELED. */
static int g_calls, g_backwards;
static double g_last;
static int count_progress(void *user, double f)
{
    (void)user;
    ++g_calls;
    g_backwards += f < g_last; /* fractions never decrease within a call (iwpp.h) */
    g_last = f;
    return 0;
}
static int cancel_at_once(void *user, double f)
{
    (void)user;
    (void)f;
    return 1;
}

/* The exact EDT of @p in (2D U8) under @p budget on @p ctx: it runs the way @p path names (in
 * its variant), its progress reaches 1 and its result equals the CPU's; a listener that cancels at
 * its first report stops it (or the call finished before one, unless @p cancel_sure). */
static void edt_progress_case(iwpp_context *ctx, const iwpp_image *in, uint64_t budget, const char *path,
                              int cancel_sure)
{
    const int64_t n = in->width * in->height;
    float *want = malloc((size_t)n * sizeof *want), *got = malloc((size_t)n * sizeof *got);
    iwpp_image wd = iwpp_image_2d(want, IWPP_F32, in->width, in->height);
    iwpp_image gd = iwpp_image_2d(got, IWPP_F32, in->width, in->height);
    iwpp_context *cpu = NULL;
    assert_int_equal(iwpp_context_create(&cpu, IWPP_BACKEND_CPU), IWPP_OK);
    assert_int_equal(iwpp_distance_transform(cpu, in, IWPP_EDT_EXACT, NULL, &wd, NULL), IWPP_OK);
    iwpp_context_destroy(cpu);
    assert_int_equal(iwpp_context_set_memory_limit(ctx, budget), IWPP_OK);
    g_calls = g_backwards = 0;
    g_last = -1;
    assert_int_equal(iwpp_context_set_progress(ctx, count_progress, NULL), IWPP_OK);
    assert_int_equal(iwpp_distance_transform(ctx, in, IWPP_EDT_EXACT, NULL, &gd, NULL), IWPP_OK);
    iwpp_stats stats;
    iwpp_context_stats(ctx, &stats);
    if (!strstr(stats.variant, path))
        fail_msg("EDT under %llu B: ran as \"%s\", not by %s", (unsigned long long)budget, stats.variant, path);
    assert_true(g_calls >= 1);
    assert_true(g_last == 1.0);
    assert_int_equal(g_backwards, 0);
    assert_memory_equal(want, got, (size_t)n * sizeof *want);
    assert_int_equal(iwpp_context_set_progress(ctx, cancel_at_once, NULL), IWPP_OK);
    const iwpp_status st = iwpp_distance_transform(ctx, in, IWPP_EDT_EXACT, NULL, &gd, NULL);
    if (st != IWPP_OK || cancel_sure) {
        assert_int_equal(st, IWPP_ECANCELED);
        assert_non_null(strstr(iwpp_error_message(ctx), "cancel"));
    }
    assert_int_equal(iwpp_context_set_progress(ctx, NULL, NULL), IWPP_OK);
    free(want);
    free(got);
}

static void test_progress_and_cancel(void **state)
{
    (void)state;
    const odims d = {301, 257, 1};
    double *mask = vol_alloc(d), *marker = vol_alloc(d);
    gen_spiral(d, mask);
    for (int64_t k = 0; k < odims_count(d); ++k) marker[k] = 0, mask[k] *= 100;
    marker[0] = 100;
    tiling t = {1000, NULL, "budget 1000 B", NULL, NULL};
    iwpp_context *ctx = tiled_context(&g_cfg[0], &t);
    assert_non_null(ctx);
    timg mk, ms;
    assert_true(timg_init(&mk, IWPP_U8, d, 0, 0) && timg_init(&ms, IWPP_U8, d, 0, 0));
    timg_load(&mk, marker);
    timg_load(&ms, mask);
    g_calls = 0;
    g_last = -1;
    assert_int_equal(iwpp_context_set_progress(ctx, count_progress, NULL), IWPP_OK);
    assert_int_equal(iwpp_reconstruct(ctx, &mk.v, &ms.v, 4, IWPP_BY_DILATION), IWPP_OK);
    assert_true(g_calls >= 1);
    assert_true(g_last == 1.0);
    /* tiles.trace: a header line, a line per tile run (as many as the stats count), an end line */
    char path[32];
    snprintf(path, sizeof path, "iwpp_trace_%s.txt", iwpp_backend_name(g_backend));
    remove(path);
    assert_int_equal(iwpp_context_set_tuning(ctx, "tiles.trace", path), IWPP_OK);
    timg_load(&mk, marker);
    assert_int_equal(iwpp_reconstruct(ctx, &mk.v, &ms.v, 4, IWPP_BY_DILATION), IWPP_OK);
    assert_int_equal(iwpp_context_set_tuning(ctx, "tiles.trace", ""), IWPP_OK);
    iwpp_stats ts;
    iwpp_context_stats(ctx, &ts);
    FILE *tf = fopen(path, "r");
    assert_non_null(tf);
    char line[512];
    int64_t heads = 0, runs = 0, ends = 0, short_runs = 0;
    while (fgets(line, sizeof line, tf)) {
        heads += strncmp(line, "tiles ", 6) == 0;
        ends += strncmp(line, "end ", 4) == 0;
        if (strncmp(line, "tile ", 5) != 0) continue;
        runs++;
        /* 18 fields each (bench/tiles_trace.py reads them by position): "tile", worker, tile,
           run, kind, picked, full start, six full-run times, pops, four re-run fields */
        int fields = 0;
        for (char *t = strtok(line, " \n"); t; t = strtok(NULL, " \n")) fields++;
        short_runs += fields != 18;
    }
    fclose(tf);
    remove(path);
    assert_int_equal(heads, 1);
    assert_int_equal(ends, 1);
    assert_true(ts.tiles > 0);
    assert_int_equal(runs, ts.tiles);
    assert_int_equal(short_runs, 0);
    timg_load(&mk, marker);
    assert_int_equal(iwpp_context_set_progress(ctx, cancel_at_once, NULL), IWPP_OK);
    iwpp_status st = iwpp_reconstruct(ctx, &mk.v, &ms.v, 4, IWPP_BY_DILATION);
    /* a call that finished before the first report (fast machine) is not a failure */
    if (st != IWPP_OK) {
        assert_int_equal(st, IWPP_ECANCELED);
        assert_non_null(strstr(iwpp_error_message(ctx), "cancel"));
    }
    if (g_backend != IWPP_BACKEND_CPU) {
        /* the exact EDT by each of its ways beyond a budget: strips; square tiles (a row with its
           margins is beyond a worker's share); the CPU (one background pixel: the margin every
           tile needs is beyond the budget) */
        edt_progress_case(ctx, &ms.v, 4000000, "strips", 0);
        edt_progress_case(ctx, &ms.v, 12600, "edt tiles ", 0);
        memset(ms.v.data, 255, (size_t)odims_count(d));
        ((uint8_t *)ms.v.data)[0] = 0;
        edt_progress_case(ctx, &ms.v, 660000, "CPU", 1);
    }
    timg_free(&mk);
    timg_free(&ms);
    iwpp_context_destroy(ctx);
    free(mask);
    free(marker);
}

/* A mask that shares memory with the marker (a view one row further into the same pixels):
 * the tiles write the marker while they read the mask, so the mask must be read as it was. */
static void test_mask_overlaps_marker(void **state)
{
    (void)state;
    const int64_t w = 64, h = 64;
    uint8_t *a = malloc((size_t)(w * (h + 1))), *b = malloc((size_t)(w * (h + 1)));
    trng r;
    trng_seed(&r, 77);
    for (int64_t i = 0; i < w * (h + 1); ++i) a[i] = b[i] = (uint8_t)trng_below(&r, 256);
    iwpp_context *ref = NULL, *ctx = NULL;
    assert_int_equal(iwpp_context_create(&ref, IWPP_BACKEND_CPU), IWPP_OK);
    assert_int_equal(harness_make_context(&g_cfg[0], &ctx), IWPP_OK);
    assert_int_equal(iwpp_context_set_memory_limit(ctx, 1024), IWPP_OK);
    if (g_backend == IWPP_BACKEND_CPU) assert_int_equal(iwpp_context_set_workers(ctx, "cpu*4"), IWPP_OK);
    iwpp_image mk = iwpp_image_2d(a, IWPP_U8, w, h), ms = iwpp_image_2d(a + w, IWPP_U8, w, h);
    iwpp_image mk2 = iwpp_image_2d(b, IWPP_U8, w, h), ms2 = iwpp_image_2d(b + w, IWPP_U8, w, h);
    assert_int_equal(iwpp_reconstruct(ref, &mk2, &ms2, 8, IWPP_BY_DILATION), IWPP_OK);
    assert_int_equal(iwpp_reconstruct(ctx, &mk, &ms, 8, IWPP_BY_DILATION), IWPP_OK);
    iwpp_stats st;
    iwpp_context_stats(ctx, &st);
    assert_true(st.tile_grid > 1);
    assert_memory_equal(a, b, (size_t)(w * (h + 1)));
    iwpp_context_destroy(ref);
    iwpp_context_destroy(ctx);
    free(a);
    free(b);
}

/* Worker lists: what is refused, and what is accepted. */
static void test_worker_lists(void **state)
{
    (void)state;
    iwpp_context *ctx = NULL;
    assert_int_equal(harness_make_context(&g_cfg[0], &ctx), IWPP_OK);
    const char *bad[] = {"gpu*0", "gpu*", "cpu*-2", "cpu*100000", "fpga", "cuda:", "opencl:x", "cpu,,gpu*2x",
                         "cuda:99999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        assert_int_equal(iwpp_context_set_workers(ctx, bad[i]), IWPP_EINVAL);
        assert_true(strlen(iwpp_error_message(ctx)) > 10);
    }
    assert_int_equal(iwpp_context_set_workers(ctx, "gpu*2, cpu*2"), IWPP_OK);
    assert_int_equal(iwpp_context_set_workers(ctx, ""), IWPP_OK);
    assert_int_equal(iwpp_context_set_workers(ctx, NULL), IWPP_OK);
    assert_int_equal(iwpp_context_set_memory_limit(NULL, 5), IWPP_EINVAL);
    iwpp_context_destroy(ctx);
}

int main(void)
{
    int rc = harness_init("test_tiles");
    if (rc) harness_exit(rc);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worker_lists),
        cmocka_unit_test(test_mask_overlaps_marker),
        cmocka_unit_test(test_progress_and_cancel),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_long_paths),
        cmocka_unit_test(test_composed),
        cmocka_unit_test(test_edt),
        cmocka_unit_test(test_edt_strips_bits),
    };
    int fails = HARNESS_RUN("tiles", tests);
    harness_exit(fails ? 1 : 0);
}
