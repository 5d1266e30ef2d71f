/*
 * test_hostcopy.c - the host copies of the staged transfers (native/hostcopy.c), no backend:
 * iwpp_stream_copy against memcpy and iwpp_pack_nonzero (the exact EDT's bit upload on CUDA)
 * against a pixel-by-pixel reference, every type, lengths and offsets around the 16-pixel
 * vector steps, and the values that "!= 0" decides on (-0.0f, NaN, subnormals, high bits).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "harness.h"

#include "backend.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rng = 12345u;
static uint32_t next_u32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

static int ref_nonzero(const void *p, iwpp_type t, size_t i)
{
    if (t == IWPP_U8) return ((const uint8_t *)p)[i] != 0;
    if (t == IWPP_U16) return ((const uint16_t *)p)[i] != 0;
    return ((const float *)p)[i] != 0.0f;
}

static void fill(void *p, iwpp_type t, size_t n, int density)
{
    static const float specials[] = {0.0f, -0.0f, 1e-45f, -1e-45f, 1.0f, -3.5f, INFINITY, -INFINITY};
    for (size_t i = 0; i < n; ++i) {
        const uint32_t r = next_u32();
        const int zero = (int)(r % 100) >= density;
        if (t == IWPP_U8) ((uint8_t *)p)[i] = zero ? 0 : (uint8_t)(1u << (r >> 8) % 8);
        else if (t == IWPP_U16) ((uint16_t *)p)[i] = zero ? 0 : (uint16_t)(1u << (r >> 8) % 16);
        else ((float *)p)[i] = zero ? ((r >> 8) & 1 ? -0.0f : 0.0f) : specials[2 + (r >> 8) % 6];
    }
    if (t == IWPP_F32 && n > 3) ((float *)p)[n / 2] = NAN; /* not zero: foreground, as on the devices */
}

static void test_pack_nonzero(void **state)
{
    (void)state;
    static const iwpp_type types[3] = {IWPP_U8, IWPP_U16, IWPP_F32};
    for (int ti = 0; ti < 3; ++ti) {
        const iwpp_type t = types[ti];
        const size_t es = iwpp_type_size(t);
        for (size_t n = 0; n <= 300; n += (n < 40 ? 1 : 13)) {
            for (size_t off = 0; off < 3; ++off) {  /* unaligned sources */
                for (int density = 0; density <= 100; density += 50) {
                    char *buf = malloc((n + off) * es + 1);
                    uint8_t *bits = malloc(n / 8 + 2);
                    assert_non_null(buf);
                    assert_non_null(bits);
                    void *src = buf + off * es;
                    fill(src, t, n, density);
                    memset(bits, 0xA5, n / 8 + 2);
                    iwpp_pack_nonzero(src, t, n, bits);
                    for (size_t i = 0; i < n; ++i) assert_int_equal((bits[i / 8] >> (i % 8)) & 1, ref_nonzero(src, t, i));
                    if (n % 8) assert_int_equal(bits[n / 8] >> (n % 8), 0); /* unused bits are 0 */
                    assert_int_equal(bits[(n + 7) / 8], 0xA5);             /* nothing written past them */
                    free(buf);
                    free(bits);
                }
            }
        }
    }
}

/* The chunks of a staged transfer tile [0, total) in order, none larger than the buffers, and a
 * transfer of at least 4 buffers' worth has its ramp (3 small chunks at either end). */
static void test_chunk_plan(void **state)
{
    (void)state;
    const size_t M = (size_t)1 << 20;
    const size_t cases[][2] = {{6800000, 16 * M}, {2 * M, 16 * M}, {M / 2, 16 * M}, {268435456, 16 * M},
                               {64 * M, 16 * M},  {1000, 128},    {100, 128},      {5 * M + 3, 4 * M},
                               {1, 16 * M},       {4 * M, 1 * M}, {3 * M + 1, 1 * M}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        const size_t total = cases[c][0], C = cases[c][1];
        const iwpp_chunk_plan p = iwpp_chunk_plan_make(total, C);
        size_t at = 0;
        for (size_t k = 0; k < p.n; ++k) {
            size_t a, b;
            iwpp_chunk_bounds(&p, k, &a, &b);
            assert_int_equal(a, at);
            assert_true(b > a && b - a <= C);
            at = b;
        }
        assert_int_equal(at, total);
        if (total >= 4 * C) assert_true(p.n >= 6); /* the ramp */
    }
}

static void test_stream_copy(void **state)
{
    (void)state;
    const size_t sizes[] = {0, 1, 15, 16, 63, 64, 4095, 4096, 4097, 100000, 1 << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k)
        for (size_t off = 0; off < 17; off += 5) {
            const size_t n = sizes[k];
            unsigned char *a = malloc(n + 32), *b = malloc(n + 32);
            assert_non_null(a);
            assert_non_null(b);
            for (size_t i = 0; i < n + 32; ++i) a[i] = (unsigned char)next_u32(), b[i] = 0x5A;
            iwpp_stream_copy(b + off, a + 3, n);
            assert_memory_equal(b + off, a + 3, n);
            for (size_t i = 0; i < off; ++i) assert_int_equal(b[i], 0x5A);
            for (size_t i = off + n; i < n + 32; ++i) assert_int_equal(b[i], 0x5A);
            free(a);
            free(b);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pack_nonzero),
        cmocka_unit_test(test_stream_copy),
        cmocka_unit_test(test_chunk_plan),
    };
    harness_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
