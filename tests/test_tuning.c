/*
 * test_tuning.c - tuning settings live in the context (native/tuning.c): read from the
 * environment once when a context is created, overridden by iwpp_context_set_tuning, handed to
 * tile workers, parsed with clamps and defaults; bad keys and values are refused. On OpenCL
 * (PoCL in CI) a tuned reconstruction (raster scans 0, 1, 5) still equals the CPU's bit for bit.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

#include "backend.h"
#include "iwpp.h"

static void test_env_read_at_create(void **state)
{
    (void)state;
    setenv("IWPP_CUDA_STAGE_CHUNK", "4M", 1);
    setenv("IWPP_OCL_REC_SCANS", "3", 1);
    iwpp_context *a = NULL, *b = NULL;
    assert_int_equal(iwpp_context_create(&a, IWPP_BACKEND_CPU), IWPP_OK);
    unsetenv("IWPP_CUDA_STAGE_CHUNK");
    unsetenv("IWPP_OCL_REC_SCANS");
    assert_int_equal(iwpp_context_create(&b, IWPP_BACKEND_CPU), IWPP_OK);
    assert_string_equal(iwpp_tune(a, IWPP_TUNE_CUDA_STAGE_CHUNK), "4M");
    assert_int_equal(iwpp_tune_bytes(a, IWPP_TUNE_CUDA_STAGE_CHUNK, 1, 0, (size_t)1 << 40), (size_t)4 << 20);
    assert_int_equal(iwpp_tune_int(a, IWPP_TUNE_OCL_REC_SCANS, 2, 0, 64), 3);
    /* read once: the later environment change did not reach a, and b never saw the values */
    assert_null(iwpp_tune(b, IWPP_TUNE_CUDA_STAGE_CHUNK));
    assert_int_equal(iwpp_tune_int(b, IWPP_TUNE_OCL_REC_SCANS, 2, 0, 64), 2);
    iwpp_context_destroy(a);
    iwpp_context_destroy(b);
}

static void test_setter(void **state)
{
    (void)state;
    iwpp_context *c = NULL;
    assert_int_equal(iwpp_context_create(&c, IWPP_BACKEND_CPU), IWPP_OK);
    assert_int_equal(iwpp_context_set_tuning(c, "ocl.rec_scans", "7"), IWPP_OK);
    assert_int_equal(iwpp_tune_int(c, IWPP_TUNE_OCL_REC_SCANS, 2, 0, 64), 7);
    assert_int_equal(iwpp_context_set_tuning(c, "ocl.rec_scans", NULL), IWPP_OK);
    assert_int_equal(iwpp_tune_int(c, IWPP_TUNE_OCL_REC_SCANS, 2, 0, 64), 2);
    assert_int_equal(iwpp_context_set_tuning(c, "ocl.rec_scans", "9"), IWPP_OK);
    assert_int_equal(iwpp_context_set_tuning(c, "ocl.rec_scans", ""), IWPP_OK);
    assert_null(iwpp_tune(c, IWPP_TUNE_OCL_REC_SCANS));

    assert_int_equal(iwpp_context_set_tuning(c, "cuda.no_such_key", "1"), IWPP_EINVAL);
    assert_non_null(strstr(iwpp_error_message(c), "cuda.no_such_key"));
    assert_non_null(strstr(iwpp_error_message(c), "cuda.stage_chunk")); /* the message lists the keys */
    assert_int_equal(iwpp_context_set_tuning(c, NULL, "1"), IWPP_EINVAL);
    assert_int_equal(iwpp_context_set_tuning(NULL, "cuda.pool", "0"), IWPP_EINVAL);
    char long_value[64];
    memset(long_value, '1', sizeof long_value - 1);
    long_value[sizeof long_value - 1] = '\0';
    assert_int_equal(iwpp_context_set_tuning(c, "cuda.stage_chunk", long_value), IWPP_EINVAL);
    assert_null(iwpp_tune(c, IWPP_TUNE_CUDA_STAGE_CHUNK)); /* a refused value leaves the old one */
    /* the context still works after refusals */
    uint8_t mk[16] = {0}, ms[16];
    for (int i = 0; i < 16; ++i) ms[i] = (uint8_t)(i * 13);
    mk[5] = 200;
    iwpp_image a = iwpp_image_2d(mk, IWPP_U8, 4, 4), b = iwpp_image_2d(ms, IWPP_U8, 4, 4);
    assert_int_equal(iwpp_reconstruct(c, &a, &b, 8, IWPP_BY_DILATION), IWPP_OK);
    iwpp_context_destroy(c);
}

static void test_parsers(void **state)
{
    (void)state;
    iwpp_context *c = NULL;
    assert_int_equal(iwpp_context_create(&c, IWPP_BACKEND_CPU), IWPP_OK);
    const iwpp_tune_key k = IWPP_TUNE_CUDA_STAGE_MIN;
    const size_t lo = 10, hi = (size_t)1 << 30;
    struct {
        const char *v;
        size_t want;
    } bytes[] = {{"off", hi}, {"abc", 5}, {"2k", 2048}, {"4G", hi}, {"3", lo}, {"-4", 5}, {"0.5M", 524288}};
    for (size_t i = 0; i < sizeof bytes / sizeof bytes[0]; ++i) {
        assert_int_equal(iwpp_context_set_tuning(c, "cuda.stage_min", bytes[i].v), IWPP_OK);
        assert_int_equal(iwpp_tune_bytes(c, k, 5, lo, hi), bytes[i].want);
    }
    assert_int_equal(iwpp_context_set_tuning(c, "cuda.stage_threads", "12x"), IWPP_OK);
    assert_int_equal(iwpp_tune_int(c, IWPP_TUNE_CUDA_STAGE_THREADS, 8, 1, 64), 8); /* unreadable: default */
    assert_int_equal(iwpp_context_set_tuning(c, "cuda.stage_threads", "500"), IWPP_OK);
    assert_int_equal(iwpp_tune_int(c, IWPP_TUNE_CUDA_STAGE_THREADS, 8, 1, 64), 64); /* clamped */
    iwpp_context_destroy(c);
}

/* Tile workers are contexts of their own: they take the caller's settings. */
static void test_workers_inherit(void **state)
{
    (void)state;
    iwpp_context *c = NULL;
    assert_int_equal(iwpp_context_create(&c, IWPP_BACKEND_CPU), IWPP_OK);
    assert_int_equal(iwpp_context_set_tuning(c, "ocl.edt_rows", "banded"), IWPP_OK);
    assert_int_equal(iwpp_context_set_workers(c, "cpu*3"), IWPP_OK);
    const int64_t w = 96, h = 80;
    uint8_t *mk = calloc((size_t)(w * h), 1), *ms = malloc((size_t)(w * h));
    assert_non_null(mk);
    assert_non_null(ms);
    for (int64_t i = 0; i < w * h; ++i) ms[i] = (uint8_t)((i * 2654435761u) >> 24);
    mk[0] = 255;
    iwpp_image a = iwpp_image_2d(mk, IWPP_U8, w, h), b = iwpp_image_2d(ms, IWPP_U8, w, h);
    assert_int_equal(iwpp_reconstruct(c, &a, &b, 8, IWPP_BY_DILATION), IWPP_OK);
    assert_true(c->ntile_ctx >= 1);
    for (int i = 0; i < c->ntile_ctx; ++i) {
        if (!c->tile_ctx[i]) continue;
        assert_string_equal(iwpp_tune(c->tile_ctx[i], IWPP_TUNE_OCL_EDT_ROWS), "banded");
    }
    free(mk);
    free(ms);
    iwpp_context_destroy(c);
}

/* OpenCL (PoCL here): the raster-scan count changes the work, never the result. */
static void test_opencl_scans_exact(void **state)
{
    (void)state;
    iwpp_context *g = NULL, *cpu = NULL;
    if (iwpp_context_create(&g, IWPP_BACKEND_OPENCL) != IWPP_OK) {
        iwpp_context_destroy(g);
        skip();
    }
    assert_int_equal(iwpp_context_create(&cpu, IWPP_BACKEND_CPU), IWPP_OK);
    const int64_t w = 70, h = 53;
    const size_t n = (size_t)(w * h);
    uint8_t *ms = malloc(n), *ref = malloc(n), *got = malloc(n);
    assert_non_null(ms);
    assert_non_null(ref);
    assert_non_null(got);
    for (size_t i = 0; i < n; ++i) ms[i] = (uint8_t)(((i * 2654435761u) >> 20) & 0xFF);
    memset(ref, 0, n);
    ref[n / 2] = 255;
    ref[7] = 255;
    memcpy(got, ref, n);
    iwpp_image a = iwpp_image_2d(ref, IWPP_U8, w, h), b = iwpp_image_2d(ms, IWPP_U8, w, h);
    assert_int_equal(iwpp_reconstruct(cpu, &a, &b, 8, IWPP_BY_DILATION), IWPP_OK);
    const char *scans[] = {"0", "1", "5"};
    uint8_t *seed = malloc(n);
    assert_non_null(seed);
    memcpy(seed, got, n);
    for (int s = 0; s < 3; ++s) {
        assert_int_equal(iwpp_context_set_tuning(g, "ocl.rec_scans", scans[s]), IWPP_OK);
        memcpy(got, seed, n);
        iwpp_image c = iwpp_image_2d(got, IWPP_U8, w, h);
        assert_int_equal(iwpp_reconstruct(g, &c, &b, 8, IWPP_BY_DILATION), IWPP_OK);
        assert_memory_equal(got, ref, n);
    }
    free(seed);
    free(ms);
    free(ref);
    free(got);
    iwpp_context_destroy(g);
    iwpp_context_destroy(cpu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_env_read_at_create), cmocka_unit_test(test_setter), cmocka_unit_test(test_parsers),
        cmocka_unit_test(test_workers_inherit), cmocka_unit_test(test_opencl_scans_exact),
    };
    harness_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
