/*
 * harness.h - what every CMocka test executable shares: the backend
 * parameter, test images with strides and canaries, random and adversarial
 * image generators, and comparisons that print the first mismatch.
 *
 * The backend is a parameter, not a copy of the tests:
 *   IWPP_TEST_BACKEND      cpu | cuda | opencl      (default cpu)
 *   IWPP_TEST_THREADS      cpu thread counts, e.g. "1,2,3,7" (default); 1 = sequential
 *   IWPP_TEST_GPU_CONFIGS  GPU algorithm settings, a comma list of
 *                          auto | queue | atomic | prefixsum | megapixel
 *                          (default "queue,megapixel"; queue = FH_GPU with the
 *                          multi-level queue, atomic/prefixsum = FH_GPU with that
 *                          queue variant, megapixel = IWPP-MP)
 *   IWPP_TEST_TILE         tile size set on every context (default 16, small so
 *                          that tile boundaries are crossed by small images)
 *   IWPP_TEST_FILTER       run only the tests whose name matches (CMocka pattern, e.g. "test_spiral*")
 * Every case runs on every configuration (one context each); the oracle
 * result is computed once per case.
 *
 * A backend that is built but has no usable device makes the executable print
 * "SKIPPED: <backend>: <reason>" and exit 77 (ctest: Skipped).
 */
#ifndef IWPP_TEST_HARNESS_H
#define IWPP_TEST_HARNESS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "iwpp.h"
#include "oracle.h"

#define HARNESS_SKIP 77
#define HARNESS_MAX_CONFIGS 16

typedef struct harness_config {
    char name[64];        /* e.g. "cpu threads=3", "opencl megapixel" */
    iwpp_context *ctx;
    int threads;          /* cpu only */
    iwpp_algorithm algorithm;
    iwpp_queue_variant queue_variant;
} harness_config;

extern harness_config g_cfg[HARNESS_MAX_CONFIGS];
extern int g_ncfg;
extern iwpp_backend g_backend;
extern int64_t g_tile;

/** Read the environment, check the backend, create the contexts.
 *  Returns 0 (ready), HARNESS_SKIP (printed SKIPPED) or 1 (setup error, printed). */
int harness_init(const char *program);
void harness_fini(void);
/** End the test program with @p status (after harness_fini; stdout and stderr flushed). The
 *  mains that link this harness end here. On Windows it is TerminateProcess: under wine (the
 *  windows-x86_64 suite) a normal exit runs the Linux side's destructors (PoCL's LLVM) after
 *  wineserver has armed a 0.5 s SIGKILL timer for the process (wine 8, server/process.c), and a
 *  slow exit on a busy machine turned a passed run into "Killed" (CI, session 26's stop). */
_Noreturn void harness_exit(int status);
/** Create a context configured like configuration @p c (for per-thread tests). */
iwpp_status harness_make_context(const harness_config *c, iwpp_context **out);
/** Run the group with a name that carries the backend; returns the failure count. */
int harness_run(const char *group, const struct CMUnitTest *tests, size_t n);
#define HARNESS_RUN(group, tests) harness_run(group, tests, sizeof(tests) / sizeof((tests)[0]))

/* ---------------- random numbers (fixed seeds) ---------------- */
typedef struct trng { uint64_t s; } trng;
void trng_seed(trng *r, uint64_t seed);
uint64_t trng_next(trng *r);
/** Uniform integer in [0, n). */
int64_t trng_below(trng *r, int64_t n);

/* ---------------- test images ---------------- */
/**
 * A test image: a view into a larger allocation. With pad_y/pad_z > 0 the
 * view is strided (stride_y = w + pad_y, stride_z = stride_y*h + pad_z) and
 * the padding holds a canary that a call must never change. With no padding
 * the strides are left 0 ("contiguous").
 */
typedef struct timg {
    iwpp_image v;
    unsigned char *alloc;
    size_t bytes;
    int64_t sy, sz; /* effective strides */
} timg;

int timg_init(timg *t, iwpp_type type, odims d, int64_t pad_y, int64_t pad_z);
void timg_free(timg *t);
/** Fill the whole allocation (pixels and padding) with the canary byte pattern. */
void timg_canary(timg *t);
double timg_get(const timg *t, int64_t x, int64_t y, int64_t z);
void timg_set(timg *t, int64_t x, int64_t y, int64_t z, double v);
/** Copy pixel values from a contiguous double array (values representable in the type). */
void timg_load(timg *t, const double *v);
/** Copy pixel values into a contiguous double array. */
void timg_store(const timg *t, double *v);
/** 1 if every padding byte still holds the canary. */
int timg_padding_intact(const timg *t);
/** 1 if the whole allocation equals @p snapshot (bytes). */
int timg_bytes_equal(const timg *t, const unsigned char *snapshot);
odims timg_dims(const timg *t);

/* ---------------- generators (contiguous double arrays) ---------------- */
double *vol_alloc(odims d);
/** Random gray levels of @p type; @p levels distinct levels (small => plateaus).
 *  F32 values are multiples of 0.25 around 0, negatives included. */
void gen_random(trng *r, iwpp_type type, odims d, int levels, double *v);
/** Random binary: foreground (value @p fg) with probability @p p_fg, else 0. */
void gen_binary(trng *r, odims d, double p_fg, double fg, double *v);
/** 1 on a one-pixel-wide spiral corridor from (0,0) inward, 0 on its walls (2D, per slice). */
void gen_spiral(odims d, double *v);
/** 1 on the corridors of a random perfect maze (cells at even coordinates), 0 on walls. */
void gen_maze(trng *r, odims d, double *v);
void gen_const(odims d, double c, double *v);

/* ---------------- checks ---------------- */
/** Compare @p got with @p expected bit for bit (F32: identical bits of (float)expected).
 *  On mismatch print the case, the first mismatch (x,y,z,got,expected) and the count. */
int check_equal(const timg *got, const double *expected, const char *what);
/** Also verify the canary padding of @p got is intact. */
int check_padding(const timg *got, const char *what);
/** Print "FAIL: <what>: <status> <message>" and return 1 if @p st != IWPP_OK. */
int check_ok(iwpp_status st, iwpp_context *ctx, const char *what);

/* A tuning setting (iwpp_context_set_tuning) on every configuration's context; NULL value:
 * back to the default. Fails the test on a refused key. */
void harness_tune(const char *key, const char *value);
/** Limit the number of failing cases printed per test. */
void note_failure(int *fails);

const char *mode_name(iwpp_morph_mode m);
double type_max(iwpp_type t);
/** Clamp-free conversion used for expected results: value as stored in @p type. */
double as_type(iwpp_type t, double v);

/** A printf into a static rotating buffer for case descriptions. */
const char *fmt(const char *f, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

#endif
