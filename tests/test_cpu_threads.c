/*
 * test_cpu_threads.c - the CPU backend's thread counts (issue 13): the default
 * count and every explicit one give the one-thread result bit for bit (F32
 * zeros included: every zero comes out as +0), also with many more threads
 * than cores and tiles of odd sizes; small images run sequentially by default.
 * No timing here (that is bench/cpu_bench). CPU only: runs once, not per backend.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#include "iwpp.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static int64_t below(int64_t n) { return (int64_t)(rnd() % (uint64_t)n); }

static iwpp_context *cpu_ctx(int threads, int64_t tile)
{
    iwpp_context *c = NULL;
    assert_int_equal(iwpp_context_create(&c, IWPP_BACKEND_CPU), IWPP_OK);
    assert_int_equal(iwpp_context_set_threads(c, threads), IWPP_OK);
    if (tile > 0) assert_int_equal(iwpp_context_set_tile_size(c, tile), IWPP_OK);
    return c;
}

static iwpp_image img(void *p, iwpp_type t, int64_t w, int64_t h, int64_t d)
{
    iwpp_image im = iwpp_image_2d(p, t, w, h);
    im.depth = d;
    return im;
}

/* Reconstruction of marker under mask on ctx, into out (marker left as it was). */
static void rec(iwpp_context *c, const void *marker, const void *mask, void *out, iwpp_type t,
                int64_t w, int64_t h, int64_t d, int conn, iwpp_morph_mode mode)
{
    const size_t bytes = (size_t)(w * h * d) * iwpp_type_size(t);
    memcpy(out, marker, bytes);
    iwpp_image mk = img(out, t, w, h, d), ms = img((void *)mask, t, w, h, d);
    iwpp_status st = iwpp_reconstruct(c, &mk, &ms, conn, mode);
    if (st != IWPP_OK) fail_msg("reconstruction failed: %s", iwpp_error_message(c));
}

static const char *variant(iwpp_context *c)
{
    static iwpp_stats s;
    assert_int_equal(iwpp_context_stats(c, &s), IWPP_OK);
    return s.variant;
}

/* F32 marker and mask full of zeros of both signs: every thread count and tile size
   gives the same bits, and no -0 comes out. */
static void test_f32_zero_signs(void **state)
{
    (void)state;
    static const int64_t dims[][3] = {{97, 61, 1}, {40, 33, 1}, {23, 19, 11}};
    static const int threads[] = {1, 2, 3, 7, 16, 0};
    static const int64_t tiles[] = {16, 5, 256};
    for (int di = 0; di < 3; ++di) {
        const int64_t w = dims[di][0], h = dims[di][1], d = dims[di][2], n = w * h * d;
        float *mk = malloc((size_t)n * 4), *ms = malloc((size_t)n * 4);
        float *ref = malloc((size_t)n * 4), *got = malloc((size_t)n * 4);
        assert_non_null(mk);
        assert_non_null(ms);
        assert_non_null(ref);
        assert_non_null(got);
        static const float vals[] = {-1.0f, -0.0f, 0.0f, -0.0f, 0.0f, 1.0f, 2.0f};
        for (int64_t i = 0; i < n; ++i) {
            mk[i] = vals[below(7)];
            ms[i] = vals[below(7)];
        }
        const int conns[2] = {d == 1 ? 4 : 6, d == 1 ? 8 : 26};
        for (int ci = 0; ci < 2; ++ci)
            for (int mode = 0; mode < 2; ++mode) {
                const iwpp_morph_mode m = mode ? IWPP_BY_EROSION : IWPP_BY_DILATION;
                iwpp_context *c1 = cpu_ctx(1, 0);
                rec(c1, mk, ms, ref, IWPP_F32, w, h, d, conns[ci], m);
                iwpp_context_destroy(c1);
                for (int64_t i = 0; i < n; ++i)
                    if (ref[i] == 0.0f && signbit(ref[i]))
                        fail_msg("-0 in the one-thread result at %lld", (long long)i);
                for (int ti = 0; ti < 6; ++ti)
                    for (int ki = 0; ki < 3; ++ki) {
                        iwpp_context *c = cpu_ctx(threads[ti], tiles[ki]);
                        rec(c, mk, ms, got, IWPP_F32, w, h, d, conns[ci], m);
                        iwpp_context_destroy(c);
                        if (memcmp(ref, got, (size_t)n * 4) != 0)
                            fail_msg("%lldx%lldx%lld conn %d %s, %d threads, tile %lld: bits differ "
                                     "from one thread",
                                     (long long)w, (long long)h, (long long)d, conns[ci],
                                     mode ? "erosion" : "dilation", threads[ti], (long long)tiles[ki]);
                    }
            }
        free(mk);
        free(ms);
        free(ref);
        free(got);
    }
}

/* A corridor winding over the whole image (every tile crossed many times). */
static void make_comb(uint8_t *m, int64_t w, int64_t h)
{
    memset(m, 0, (size_t)(w * h));
    for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
            const int wall_row = (y % 4) == 2;
            const int gap = ((y / 4) % 2 == 0) ? (x == w - 1) : (x == 0);
            m[y * w + x] = (uint8_t)((!wall_row || gap) ? 50 + (x * 7 + y * 3) % 200 : 0);
        }
}

/* Default threads, explicit counts far above the cores, odd tiles: the one-thread result. */
static void test_threads_match_one(void **state)
{
    (void)state;
    static const int64_t sizes[][2] = {{300, 200}, {1100, 1000}};
    static const int threads[] = {0, 2, 5, 32};
    static const int64_t tiles[] = {256, 8, 37};
    for (int si = 0; si < 2; ++si) {
        const int64_t w = sizes[si][0], h = sizes[si][1], n = w * h;
        uint8_t *ms = malloc((size_t)n), *mk = malloc((size_t)n), *ref = malloc((size_t)n),
                *got = malloc((size_t)n);
        uint16_t *ms16 = malloc((size_t)n * 2), *mk16 = malloc((size_t)n * 2),
                 *ref16 = malloc((size_t)n * 2), *got16 = malloc((size_t)n * 2);
        assert_true(ms && mk && ref && got && ms16 && mk16 && ref16 && got16);
        for (int input = 0; input < 2; ++input) {
            if (input == 0) {
                /* smooth random field: many plateaus and long slopes */
                for (int64_t y = 0; y < h; ++y)
                    for (int64_t x = 0; x < w; ++x)
                        ms[y * w + x] = (uint8_t)(127 + 60 * sin((double)x / 37.0) * cos((double)y / 53.0) +
                                                  (double)below(30));
                for (int64_t i = 0; i < n; ++i) mk[i] = ms[i] > 40 ? (uint8_t)(ms[i] - 40) : 0;
            } else {
                make_comb(ms, w, h);
                memset(mk, 0, (size_t)n);
                mk[0] = 255;
            }
            for (int64_t i = 0; i < n; ++i) {
                ms16[i] = (uint16_t)(ms[i] * 257 + below(200));
                mk16[i] = (uint16_t)(mk[i] * 257);
            }
            for (int conn = 4; conn <= 8; conn += 4) {
                iwpp_context *c1 = cpu_ctx(1, 0);
                rec(c1, mk, ms, ref, IWPP_U8, w, h, 1, conn, IWPP_BY_DILATION);
                rec(c1, mk16, ms16, ref16, IWPP_U16, w, h, 1, conn, IWPP_BY_DILATION);
                iwpp_context_destroy(c1);
                for (int ti = 0; ti < 4; ++ti)
                    for (int ki = 0; ki < 3; ++ki) {
                        if (threads[ti] == 0 && ki > 0) continue;
                        iwpp_context *c = cpu_ctx(threads[ti], tiles[ki]);
                        rec(c, mk, ms, got, IWPP_U8, w, h, 1, conn, IWPP_BY_DILATION);
                        if (memcmp(ref, got, (size_t)n))
                            fail_msg("U8 %lldx%lld input %d conn %d: %d threads tile %lld differ",
                                     (long long)w, (long long)h, input, conn, threads[ti],
                                     (long long)tiles[ki]);
                        rec(c, mk16, ms16, got16, IWPP_U16, w, h, 1, conn, IWPP_BY_DILATION);
                        if (memcmp(ref16, got16, (size_t)n * 2))
                            fail_msg("U16 %lldx%lld input %d conn %d: %d threads tile %lld differ",
                                     (long long)w, (long long)h, input, conn, threads[ti],
                                     (long long)tiles[ki]);
                        iwpp_context_destroy(c);
                    }
            }
        }
        free(ms);
        free(mk);
        free(ref);
        free(got);
        free(ms16);
        free(mk16);
        free(ref16);
        free(got16);
    }
}

/* Exact EDT and fill holes: default and explicit thread counts give the one-thread result. */
static void test_edt_fill_match_one(void **state)
{
    (void)state;
    static const int64_t dims[][3] = {{1500, 1100, 1}, {64, 50, 40}, {33, 7, 1}};
    static const int threads[] = {0, 3, 32};
    for (int di = 0; di < 3; ++di) {
        const int64_t w = dims[di][0], h = dims[di][1], d = dims[di][2], n = w * h * d;
        uint8_t *bin = malloc((size_t)n), *fill1 = malloc((size_t)n), *fill = malloc((size_t)n);
        float *d1 = malloc((size_t)n * 4), *dt = malloc((size_t)n * 4);
        int64_t *n1 = malloc((size_t)n * 8), *nt = malloc((size_t)n * 8);
        assert_true(bin && fill1 && fill && d1 && dt && n1 && nt);
        for (int64_t i = 0; i < n; ++i) bin[i] = below(100) < 93 ? 255 : 0;
        const int conn = d == 1 ? 4 : 6;
        iwpp_image b = img(bin, IWPP_U8, w, h, d);
        iwpp_image o1 = img(d1, IWPP_F32, w, h, d), on1 = img(n1, IWPP_I64, w, h, d);
        iwpp_image f1 = img(fill1, IWPP_U8, w, h, d);
        iwpp_context *c1 = cpu_ctx(1, 0);
        assert_int_equal(iwpp_distance_transform(c1, &b, IWPP_EDT_EXACT, NULL, &o1, &on1), IWPP_OK);
        assert_int_equal(iwpp_fill_holes(c1, &b, conn, &f1), IWPP_OK);
        iwpp_context_destroy(c1);
        for (int ti = 0; ti < 3; ++ti) {
            iwpp_context *c = cpu_ctx(threads[ti], 0);
            iwpp_image o = img(dt, IWPP_F32, w, h, d), on = img(nt, IWPP_I64, w, h, d);
            iwpp_image f = img(fill, IWPP_U8, w, h, d);
            assert_int_equal(iwpp_distance_transform(c, &b, IWPP_EDT_EXACT, NULL, &o, &on), IWPP_OK);
            assert_int_equal(iwpp_fill_holes(c, &b, conn, &f), IWPP_OK);
            iwpp_context_destroy(c);
            if (memcmp(d1, dt, (size_t)n * 4) || memcmp(n1, nt, (size_t)n * 8))
                fail_msg("EDT %lldx%lldx%lld: %d threads differ from one", (long long)w,
                         (long long)h, (long long)d, threads[ti]);
            if (memcmp(fill1, fill, (size_t)n))
                fail_msg("fill holes %lldx%lldx%lld: %d threads differ from one", (long long)w,
                         (long long)h, (long long)d, threads[ti]);
        }
        free(bin);
        free(fill1);
        free(fill);
        free(d1);
        free(dt);
        free(n1);
        free(nt);
    }
}

/* The default thread count runs small images sequentially; an explicit count uses the tiles. */
static void test_default_small_sequential(void **state)
{
    (void)state;
    const int64_t w = 256, h = 256, n = w * h;
    uint8_t *ms = malloc((size_t)n), *mk = malloc((size_t)n), *out = malloc((size_t)n);
    assert_true(ms && mk && out);
    for (int64_t i = 0; i < n; ++i) {
        ms[i] = (uint8_t)below(256);
        mk[i] = ms[i] / 2;
    }
    iwpp_context *c = cpu_ctx(0, 0);
    rec(c, mk, ms, out, IWPP_U8, w, h, 1, 8, IWPP_BY_DILATION);
    assert_string_equal(variant(c), "fast-hybrid");
    iwpp_context_destroy(c);
    c = cpu_ctx(2, 16);
    rec(c, mk, ms, out, IWPP_U8, w, h, 1, 8, IWPP_BY_DILATION);
    assert_string_equal(variant(c), "tiled-queue");
    iwpp_context_destroy(c);
    free(ms);
    free(mk);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f32_zero_signs),
        cmocka_unit_test(test_threads_match_one),
        cmocka_unit_test(test_edt_fill_match_one),
        cmocka_unit_test(test_default_small_sequential),
    };
    harness_exit(cmocka_run_group_tests_name("cpu_threads", tests, NULL, NULL));
}
