/*
 * test_budget.c - a memory budget is kept, and a device with less memory than the budget says is
 * survived, on an OpenCL device whose buffers are counted and capped (ocl_memcap.c, loaded in
 * place of the system's ICD loader through IWPP_OPENCL_LIBRARY). Every result is checked against
 * the CPU's, bit for bit. Skipped (77) without an OpenCL device.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "iwpp.h"
#include "ocl_memcap.h"

/* A w x h binary image with about @p bg_per_mille background pixels a thousand (fixed seed). */
static uint8_t *binary_image(int64_t w, int64_t h, unsigned bg_per_mille)
{
    uint8_t *b = malloc((size_t)(w * h));
    assert_non_null(b);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int64_t k = 0; k < w * h; ++k) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        b[k] = (x >> 33) % 1000 < bg_per_mille ? 0 : 255;
    }
    return b;
}

static char g_variant[64]; /* how the last call ran (its stats.variant) */

/* Progress seen by the calls: fractions never decrease within one call (iwpp.h). */
static int g_reports, g_backwards;
static double g_last;
static int watch_progress(void *user, double f)
{
    (void)user;
    g_reports++;
    g_backwards += f < g_last;
    g_last = f;
    return 0;
}

static iwpp_context *opencl_context(uint64_t limit, const char *workers)
{
    iwpp_context *ctx = NULL;
    assert_int_equal(iwpp_context_create(&ctx, IWPP_BACKEND_OPENCL), IWPP_OK);
    assert_int_equal(iwpp_context_set_progress(ctx, watch_progress, NULL), IWPP_OK);
    assert_int_equal(iwpp_context_set_memory_limit(ctx, limit), IWPP_OK);
    if (workers) assert_int_equal(iwpp_context_set_workers(ctx, workers), IWPP_OK);
    return ctx;
}

/* The exact EDT of b (w x h) on ctx, with nearest indices or not: equal to the CPU's; returns the
 * most device memory alive during the call. */
static size_t edt_checked(iwpp_context *ctx, const uint8_t *b, int64_t w, int64_t h, int nearest, const char *what)
{
    const size_t n = (size_t)(w * h);
    float *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    int64_t *near = nearest ? malloc(n * sizeof *near) : NULL;
    assert_true(want && got && (near || !nearest));
    iwpp_image in = iwpp_image_2d((void *)b, IWPP_U8, w, h);
    iwpp_image wd = iwpp_image_2d(want, IWPP_F32, w, h), gd = iwpp_image_2d(got, IWPP_F32, w, h);
    iwpp_image gn = iwpp_image_2d(near, IWPP_I64, w, h);
    iwpp_context *cpu = NULL;
    assert_int_equal(iwpp_context_create(&cpu, IWPP_BACKEND_CPU), IWPP_OK);
    assert_int_equal(iwpp_distance_transform(cpu, &in, IWPP_EDT_EXACT, NULL, &wd, NULL), IWPP_OK);
    iwpp_context_destroy(cpu);
    iwpp_memcap_peak_reset();
    g_reports = g_backwards = 0;
    g_last = -1;
    const iwpp_status st = iwpp_distance_transform(ctx, &in, IWPP_EDT_EXACT, NULL, &gd, nearest ? &gn : NULL);
    const size_t peak = iwpp_memcap_peak_reset();
    iwpp_stats stats;
    iwpp_context_stats(ctx, &stats);
    snprintf(g_variant, sizeof g_variant, "%s", stats.variant);
    printf("%s: %s, peak %.1f MB (%s), progress %d report(s) ending at %g%s\n", what, iwpp_status_name(st),
           peak / 1e6, stats.variant, g_reports, g_last, g_backwards ? ", WENT BACK" : "");
    if (st != IWPP_OK) fail_msg("%s: %s", what, iwpp_error_message(ctx));
    assert_true(peak > 0); /* the device ran it (the counting library is the one loaded) */
    assert_int_equal(g_backwards, 0);
    assert_true(g_last == 1.0);
    assert_memory_equal(want, got, n * sizeof *want);
    free(want);
    free(got);
    free(near);
    return peak;
}

/* The device runs out inside the backend's EDT (its work buffers), where the budget said there was
 * room: the call goes on another way (square tiles, the CPU) and gives the same result. */
static void test_device_smaller_than_the_budget(void **state)
{
    (void)state;
    const int64_t w = 1000, h = 3000;
    uint8_t *b = binary_image(w, h, 100);
    for (int nearest = 0; nearest < 2; ++nearest) {
        iwpp_context *ctx = opencl_context(20000000, NULL);
        iwpp_memcap_set(10000000);
        edt_checked(ctx, b, w, h, nearest, "20 MB budget, 10 MB device");
        assert_null(strstr(g_variant, "CPU")); /* on the device, under half the budget */
        iwpp_context_destroy(ctx);
        /* the default budget: in memory first, then by tiles on what the device says it has
           (PoCL: 90 % of the host's memory), halved until the calls fit */
        ctx = opencl_context(0, NULL);
        iwpp_memcap_set(25000000);
        edt_checked(ctx, b, w, h, nearest, "default budget, 25 MB device");
        assert_null(strstr(g_variant, "CPU"));
        iwpp_context_destroy(ctx);
        iwpp_memcap_set(0);
    }
    assert_int_equal(iwpp_memcap_live(), 0);
    free(b);
}

/* The device memory alive during a call stays within its budget: strips whose thinner regions
 * take more than thicker ones (the column bands end at w^2 + h^2 = 2^31), and a second call
 * with a smaller budget after one that kept buffers for nearest indices. */
static void test_budget_kept(void **state)
{
    (void)state;
    {
        const int64_t w = 200, h = 92698;
        uint8_t *b = binary_image(w, h, 100);
        iwpp_context *ctx = opencl_context(108424259, "opencl:0");
        const size_t peak = edt_checked(ctx, b, w, h, 0, "200x92698, one worker, 108 MB");
        assert_true(peak <= 108424259);
        iwpp_context_destroy(ctx);
        free(b);
    }
    {
        const int64_t w = 2000, h = 6000;
        uint8_t *b = binary_image(w, h, 100);
        iwpp_context *ctx = opencl_context(120000000, NULL);
        size_t peak = edt_checked(ctx, b, w, h, 1, "2000x6000 with nearest indices, 120 MB");
        assert_true(peak <= 120000000);
        assert_int_equal(iwpp_context_set_memory_limit(ctx, 60000000), IWPP_OK);
        peak = edt_checked(ctx, b, w, h, 0, "the same context, no nearest indices, 60 MB");
        assert_true(peak <= 60000000);
        assert_int_equal(iwpp_context_set_memory_limit(ctx, 20000000), IWPP_OK);
        peak = edt_checked(ctx, b, w, h, 0, "the same context, 20 MB");
        assert_true(peak <= 20000000);
        iwpp_context_destroy(ctx);
        /* background on a 160-pixel grid: the strips' margins grow, and their regions with them
           (a freed region buffer went to the backend's pool of idle images, outside the budget:
           76 MB held at 60) */
        for (int64_t y = 0; y < h; ++y)
            for (int64_t x = 0; x < w; ++x) b[y * w + x] = x % 160 == 0 && y % 160 == 0 ? 0 : 255;
        ctx = opencl_context(60000000, NULL);
        peak = edt_checked(ctx, b, w, h, 0, "2000x6000, background on a 160-pixel grid, 60 MB");
        assert_true(peak <= 60000000);
        iwpp_context_destroy(ctx);
        free(b);
    }
    assert_int_equal(iwpp_memcap_live(), 0);
}

/* The reconstruction by tiles keeps its budget too (its worker contexts, their regions and queues). */
static void test_reconstruction_budget(void **state)
{
    (void)state;
    const int64_t w = 1500, h = 2000;
    const size_t n = (size_t)(w * h);
    uint8_t *mask = binary_image(w, h, 300), *marker = malloc(n), *want = malloc(n);
    assert_true(marker && want);
    for (size_t k = 0; k < n; ++k) mask[k] = (uint8_t)(mask[k] ? 60 + k % 151 : k % 37); /* a relief */
    /* the third: many queue groups (64 a compute unit; NVIDIA's H100 runs 528 in all, whose
       queues at their smallest took 1.6 MB a worker, beyond a 6 MB budget shared by three) */
    const uint64_t budgets[] = {6000000, 20000000, 2000000};
    for (int b = 0; b < 3; ++b) {
        for (size_t k = 0; k < n; ++k) marker[k] = want[k] = k % 997 == 0 ? mask[k] : 0;
        iwpp_image mk = iwpp_image_2d(marker, IWPP_U8, w, h), ms = iwpp_image_2d(mask, IWPP_U8, w, h);
        iwpp_image wk = iwpp_image_2d(want, IWPP_U8, w, h);
        iwpp_context *cpu = NULL;
        assert_int_equal(iwpp_context_create(&cpu, IWPP_BACKEND_CPU), IWPP_OK);
        assert_int_equal(iwpp_reconstruct(cpu, &wk, &ms, 8, IWPP_BY_DILATION), IWPP_OK);
        iwpp_context_destroy(cpu);
        iwpp_context *ctx = opencl_context(budgets[b], NULL);
        if (b == 2) assert_int_equal(iwpp_context_set_tuning(ctx, "ocl.queue_groups", "64"), IWPP_OK);
        iwpp_memcap_peak_reset();
        const iwpp_status st = iwpp_reconstruct(ctx, &mk, &ms, 8, IWPP_BY_DILATION);
        const size_t peak = iwpp_memcap_peak_reset();
        iwpp_stats stats;
        iwpp_context_stats(ctx, &stats);
        printf("reconstruction 1500x2000 under %.0f MB: %s, peak %.1f MB (%s)\n", budgets[b] / 1e6,
               iwpp_status_name(st), peak / 1e6, stats.variant);
        if (st != IWPP_OK) fail_msg("%s", iwpp_error_message(ctx));
        assert_true(stats.tile_grid > 1);
        assert_true(peak > 0);
        assert_memory_equal(want, marker, n);
        assert_true(peak <= budgets[b]);
        iwpp_context_destroy(ctx);
    }
    assert_int_equal(iwpp_memcap_live(), 0);
    free(mask);
    free(marker);
    free(want);
}

/* A tile worker's context keeps the message of a call that failed in it (a reconstruction that ran
 * the device out); a later EDT by strips on the same context, whose regions cannot go up as bits
 * on this device (PoCL does not stage), must not take that message for its own and fail (found in
 * review: IWPP_EUNSUPPORTED with the reconstruction's out-of-memory message). */
static void test_worker_message_after_failure(void **state)
{
    (void)state;
    const int64_t w = 1500, h = 2000;
    const size_t n = (size_t)(w * h);
    uint8_t *mask = malloc(n), *marker = malloc(n), *bin = malloc(n);
    assert_true(mask && marker && bin);
    for (size_t k = 0; k < n; ++k) {
        mask[k] = (uint8_t)(60 + k % 151);
        bin[k] = k % 1013 != 0;
    }
    iwpp_context *ctx = opencl_context(20000000, NULL);
    iwpp_image mk = iwpp_image_2d(marker, IWPP_U8, w, h), ms = iwpp_image_2d(mask, IWPP_U8, w, h);
    int failed = 0;
    for (size_t cap = 600000; cap <= 4000000; cap += 400000) {
        iwpp_memcap_set(cap);
        for (size_t k = 0; k < n; ++k) marker[k] = k % 997 == 0 ? mask[k] : 0;
        failed += iwpp_reconstruct(ctx, &mk, &ms, 8, IWPP_BY_DILATION) == IWPP_ENOMEM;
    }
    iwpp_memcap_set(0);
    assert_true(failed > 0);
    const size_t peak = edt_checked(ctx, bin, w, h, 0, "1500x2000 after reconstructions that ran a 0.6-3.8 MB device out");
    assert_true(peak <= 20000000);
    iwpp_context_destroy(ctx);
    free(mask);
    free(marker);
    free(bin);
    assert_int_equal(iwpp_memcap_live(), 0);
}

/* Each test starts with no cap (a failed one may have left its cap set). */
static int no_cap(void **state)
{
    (void)state;
    iwpp_memcap_set(0);
    return 0;
}

int main(void)
{
    const char *lib = getenv("IWPP_OPENCL_LIBRARY");
    if (!lib || !strstr(lib, "memcap")) { /* else it would count nothing and pass */
        printf("IWPP_OPENCL_LIBRARY does not name the counting library (ocl_memcap): skipped\n");
        return 77;
    }
    iwpp_context *probe = NULL;
    if (iwpp_context_create(&probe, IWPP_BACKEND_OPENCL) != IWPP_OK) {
        printf("no OpenCL device: skipped (%s)\n", probe ? iwpp_error_message(probe) : "");
        iwpp_context_destroy(probe);
        return 77;
    }
    iwpp_context_destroy(probe);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_device_smaller_than_the_budget, no_cap),
        cmocka_unit_test_setup(test_budget_kept, no_cap),
        cmocka_unit_test_setup(test_reconstruction_budget, no_cap),
        cmocka_unit_test_setup(test_worker_message_after_failure, no_cap),
    };
    return cmocka_run_group_tests_name("budget", tests, NULL, NULL);
}
