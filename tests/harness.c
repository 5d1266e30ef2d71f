/* harness.c - see harness.h. */
#include "harness.h"

#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <windows.h>
#endif

harness_config g_cfg[HARNESS_MAX_CONFIGS];
int g_ncfg = 0;
iwpp_backend g_backend = IWPP_BACKEND_CPU;
int64_t g_tile = 16;

static char g_program[128] = "test";

/* ------------------------------------------------------------------ setup */

static int parse_backend(const char *s, iwpp_backend *out)
{
    if (!s || !*s || strcmp(s, "cpu") == 0) *out = IWPP_BACKEND_CPU;
    else if (strcmp(s, "cuda") == 0) *out = IWPP_BACKEND_CUDA;
    else if (strcmp(s, "opencl") == 0) *out = IWPP_BACKEND_OPENCL;
    else return 0;
    return 1;
}

static int parse_gpu_config(const char *s, harness_config *c)
{
    c->algorithm = IWPP_ALGO_AUTO;
    c->queue_variant = IWPP_QUEUE_MULTILEVEL;
    if (strcmp(s, "auto") == 0) {
    } else if (strcmp(s, "queue") == 0) {
        c->algorithm = IWPP_ALGO_QUEUE;
    } else if (strcmp(s, "atomic") == 0) {
        c->algorithm = IWPP_ALGO_QUEUE;
        c->queue_variant = IWPP_QUEUE_ATOMIC;
    } else if (strcmp(s, "prefixsum") == 0) {
        c->algorithm = IWPP_ALGO_QUEUE;
        c->queue_variant = IWPP_QUEUE_PREFIXSUM;
    } else if (strcmp(s, "megapixel") == 0) {
        c->algorithm = IWPP_ALGO_MEGAPIXEL;
    } else {
        return 0;
    }
    return 1;
}

iwpp_status harness_make_context(const harness_config *c, iwpp_context **out)
{
    iwpp_context *ctx = NULL;
    iwpp_status st = iwpp_context_create(&ctx, g_backend);
    if (st != IWPP_OK) {
        fprintf(stderr, "%s: cannot create a %s context: %s: %s\n", g_program,
                iwpp_backend_name(g_backend), iwpp_status_name(st),
                ctx ? iwpp_error_message(ctx) : "(no context)");
        iwpp_context_destroy(ctx);
        *out = NULL;
        return st;
    }
    if (g_backend == IWPP_BACKEND_CPU) st = iwpp_context_set_threads(ctx, c->threads);
    if (st == IWPP_OK) st = iwpp_context_set_tile_size(ctx, g_tile);
    if (st == IWPP_OK && g_backend != IWPP_BACKEND_CPU) {
        st = iwpp_context_set_algorithm(ctx, c->algorithm);
        if (st == IWPP_OK) st = iwpp_context_set_queue_variant(ctx, c->queue_variant);
    }
    if (st != IWPP_OK) {
        fprintf(stderr, "%s: cannot configure context \"%s\": %s: %s\n", g_program, c->name,
                iwpp_status_name(st), iwpp_error_message(ctx));
        iwpp_context_destroy(ctx);
        *out = NULL;
        return st;
    }
    *out = ctx;
    return IWPP_OK;
}

/* A GPU setting this build does not implement (IWPP_EUNSUPPORTED on a tiny
 * reconstruction) is left out with a loud note, not counted as a failure;
 * any other failure is left for the tests to report. */
static int config_supported(const harness_config *c)
{
    uint8_t mk[6] = {0, 0, 0, 0, 0, 9}, ms[6] = {1, 2, 3, 4, 5, 6};
    iwpp_image a = iwpp_image_2d(mk, IWPP_U8, 3, 2), b = iwpp_image_2d(ms, IWPP_U8, 3, 2);
    iwpp_status st = iwpp_reconstruct(c->ctx, &a, &b, 4, IWPP_BY_DILATION);
    if (st == IWPP_EUNSUPPORTED) {
        printf("NOTE: %s: configuration \"%s\" is not run: %s\n", g_program, c->name,
               iwpp_error_message(c->ctx));
        return 0;
    }
    return 1;
}

int harness_init(const char *program)
{
    const char *slash = strrchr(program, '/');
    snprintf(g_program, sizeof g_program, "%s", slash ? slash + 1 : program);
    /* unbuffered so that messages interleave with CMocka's in ctest logs */
    setvbuf(stdout, NULL, _IONBF, 0);

    const char *be = getenv("IWPP_TEST_BACKEND");
    if (!parse_backend(be, &g_backend)) {
        fprintf(stderr, "%s: IWPP_TEST_BACKEND=\"%s\" is not one of cpu, cuda, opencl\n",
                g_program, be);
        return 1;
    }
    const char *tile = getenv("IWPP_TEST_TILE");
    if (tile && *tile) {
        g_tile = atoll(tile);
        if (g_tile <= 0) {
            fprintf(stderr, "%s: IWPP_TEST_TILE=\"%s\" is not a positive number\n", g_program, tile);
            return 1;
        }
    }
    char reason[512] = "";
    if (!iwpp_backend_available(g_backend, reason, sizeof reason)) {
        printf("SKIPPED: %s: %s\n", iwpp_backend_name(g_backend),
               reason[0] ? reason : "backend not usable (no reason given)");
        fprintf(stderr, "SKIPPED: %s: %s\n", iwpp_backend_name(g_backend),
                reason[0] ? reason : "backend not usable (no reason given)");
        return HARNESS_SKIP;
    }

    const char *list;
    if (g_backend == IWPP_BACKEND_CPU) {
        list = getenv("IWPP_TEST_THREADS");
        if (!list || !*list) list = "1,2,3,7";
    } else {
        list = getenv("IWPP_TEST_GPU_CONFIGS");
        if (!list || !*list) list = "queue,megapixel";
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    g_ncfg = 0;
    for (char *tok = strtok(buf, ", "); tok; tok = strtok(NULL, ", ")) {
        if (g_ncfg == HARNESS_MAX_CONFIGS) {
            fprintf(stderr, "%s: more than %d configurations in \"%s\"\n", g_program,
                    HARNESS_MAX_CONFIGS, list);
            return 1;
        }
        harness_config *c = &g_cfg[g_ncfg];
        memset(c, 0, sizeof *c);
        if (g_backend == IWPP_BACKEND_CPU) {
            char *end = NULL;
            long t = strtol(tok, &end, 10);
            if (!end || *end || t < 0 || t > 1024) {
                fprintf(stderr, "%s: IWPP_TEST_THREADS item \"%s\" is not a thread count\n",
                        g_program, tok);
                return 1;
            }
            c->threads = (int)t;
            snprintf(c->name, sizeof c->name, "cpu threads=%ld tile=%lld", t, (long long)g_tile);
        } else {
            if (!parse_gpu_config(tok, c)) {
                fprintf(stderr,
                        "%s: IWPP_TEST_GPU_CONFIGS item \"%s\" is not one of auto, queue, "
                        "atomic, prefixsum, megapixel\n",
                        g_program, tok);
                return 1;
            }
            snprintf(c->name, sizeof c->name, "%s %s", iwpp_backend_name(g_backend), tok);
        }
        if (harness_make_context(c, &c->ctx) != IWPP_OK) return 1;
        if (g_backend != IWPP_BACKEND_CPU && !config_supported(c)) {
            iwpp_context_destroy(c->ctx);
            c->ctx = NULL;
            continue;
        }
        ++g_ncfg;
    }
    if (g_ncfg == 0) {
        if (g_backend != IWPP_BACKEND_CPU) {
            printf("SKIPPED: %s: none of the configurations \"%s\" is supported by this build\n",
                   iwpp_backend_name(g_backend), list);
            return HARNESS_SKIP;
        }
        fprintf(stderr, "%s: no configuration to run\n", g_program);
        return 1;
    }
    printf("%s: backend %s, %d configuration(s):", g_program, iwpp_backend_name(g_backend), g_ncfg);
    for (int i = 0; i < g_ncfg; ++i) printf(" [%s]", g_cfg[i].name);
    printf("\n");
    return 0;
}

void harness_tune(const char *key, const char *value)
{
    for (int i = 0; i < g_ncfg; ++i)
        if (g_cfg[i].ctx && iwpp_context_set_tuning(g_cfg[i].ctx, key, value) != IWPP_OK)
            fail_msg("tuning %s = %s: %s", key, value ? value : "(default)", iwpp_error_message(g_cfg[i].ctx));
}

void harness_fini(void)
{
    for (int i = 0; i < g_ncfg; ++i) {
        iwpp_context_destroy(g_cfg[i].ctx);
        g_cfg[i].ctx = NULL;
    }
    g_ncfg = 0;
}

_Noreturn void harness_exit(int status)
{
    harness_fini();
    fflush(stdout);
    fflush(stderr);
#ifdef _WIN32
    /* Ends the process at once (wine: straight to _exit, no unix destructors; see harness.h). */
    TerminateProcess(GetCurrentProcess(), (UINT)status);
#endif
    exit(status);
}

static _Atomic int g_printed_failures = 0;

/* Each test gets its own budget of printed failures. */
static int reset_printed(void **state)
{
    (void)state;
    g_printed_failures = 0;
    return 0;
}

int harness_run(const char *group, const struct CMUnitTest *tests, size_t n)
{
    char name[160];
    snprintf(name, sizeof name, "%s[%s]", group, iwpp_backend_name(g_backend));
    struct CMUnitTest *t = calloc(n, sizeof *t);
    if (!t) return 1;
    for (size_t i = 0; i < n; ++i) {
        t[i] = tests[i];
        if (!t[i].setup_func) t[i].setup_func = reset_printed;
    }
    const char *filter = getenv("IWPP_TEST_FILTER"); /* e.g. "test_spiral*" */
    if (filter && *filter) cmocka_set_test_filter(filter);
    int failed = _cmocka_run_group_tests(name, t, n, NULL, NULL);
    free(t);
    return failed;
}

/* ------------------------------------------------------------------ random */

void trng_seed(trng *r, uint64_t seed)
{
    r->s = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    if (r->s == 0) r->s = 1;
    for (int i = 0; i < 4; ++i) trng_next(r);
}

uint64_t trng_next(trng *r)
{
    /* xorshift64* */
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

int64_t trng_below(trng *r, int64_t n)
{
    return n <= 1 ? 0 : (int64_t)(trng_next(r) % (uint64_t)n);
}

/* ------------------------------------------------------------------ images */

static const unsigned char CANARY[4] = {0xA5, 0x5A, 0xC3, 0x3C};

int timg_init(timg *t, iwpp_type type, odims d, int64_t pad_y, int64_t pad_z)
{
    memset(t, 0, sizeof *t);
    size_t es = iwpp_type_size(type);
    t->sy = d.w + pad_y;
    t->sz = t->sy * d.h + pad_z;
    int64_t elems = t->sz * d.d + pad_y + 3; /* a few trailing elements of padding too */
    t->bytes = (size_t)elems * es;
    t->alloc = malloc(t->bytes);
    if (!t->alloc) return 0;
    t->v.data = t->alloc;
    t->v.type = type;
    t->v.width = d.w;
    t->v.height = d.h;
    t->v.depth = d.d;
    t->v.stride_y = (pad_y || pad_z) ? t->sy : 0;
    t->v.stride_z = (pad_y || pad_z) ? t->sz : 0;
    timg_canary(t);
    return 1;
}

void timg_free(timg *t)
{
    free(t->alloc);
    memset(t, 0, sizeof *t);
}

void timg_canary(timg *t)
{
    for (size_t i = 0; i < t->bytes; ++i) t->alloc[i] = CANARY[i & 3];
}

odims timg_dims(const timg *t)
{
    odims d = {t->v.width, t->v.height, t->v.depth};
    return d;
}

static size_t timg_offset(const timg *t, int64_t x, int64_t y, int64_t z)
{
    return (size_t)(x + y * t->sy + z * t->sz);
}

double timg_get(const timg *t, int64_t x, int64_t y, int64_t z)
{
    size_t o = timg_offset(t, x, y, z);
    switch (t->v.type) {
    case IWPP_U8: return ((const uint8_t *)t->alloc)[o];
    case IWPP_U16: return ((const uint16_t *)t->alloc)[o];
    case IWPP_F32: return ((const float *)t->alloc)[o];
    case IWPP_I64: return (double)((const int64_t *)t->alloc)[o];
    case IWPP_U32: return ((const uint32_t *)t->alloc)[o];
    }
    return NAN;
}

void timg_set(timg *t, int64_t x, int64_t y, int64_t z, double v)
{
    size_t o = timg_offset(t, x, y, z);
    switch (t->v.type) {
    case IWPP_U8: ((uint8_t *)t->alloc)[o] = (uint8_t)v; break;
    case IWPP_U16: ((uint16_t *)t->alloc)[o] = (uint16_t)v; break;
    case IWPP_F32: ((float *)t->alloc)[o] = (float)v; break;
    case IWPP_I64: ((int64_t *)t->alloc)[o] = (int64_t)v; break;
    case IWPP_U32: ((uint32_t *)t->alloc)[o] = (uint32_t)v; break;
    }
}

void timg_load(timg *t, const double *v)
{
    odims d = timg_dims(t);
    for (int64_t z = 0; z < d.d; ++z)
        for (int64_t y = 0; y < d.h; ++y)
            for (int64_t x = 0; x < d.w; ++x) timg_set(t, x, y, z, v[x + d.w * (y + d.h * z)]);
}

void timg_store(const timg *t, double *v)
{
    odims d = timg_dims(t);
    for (int64_t z = 0; z < d.d; ++z)
        for (int64_t y = 0; y < d.h; ++y)
            for (int64_t x = 0; x < d.w; ++x) v[x + d.w * (y + d.h * z)] = timg_get(t, x, y, z);
}

static int is_pixel_byte(const timg *t, size_t byte)
{
    size_t es = iwpp_type_size(t->v.type);
    int64_t e = (int64_t)(byte / es);
    int64_t z = e / t->sz, r = e % t->sz;
    int64_t y = r / t->sy, x = r % t->sy;
    return z < t->v.depth && y < t->v.height && x < t->v.width;
}

int timg_padding_intact(const timg *t)
{
    for (size_t i = 0; i < t->bytes; ++i)
        if (!is_pixel_byte(t, i) && t->alloc[i] != CANARY[i & 3]) return 0;
    return 1;
}

int timg_bytes_equal(const timg *t, const unsigned char *snapshot)
{
    return memcmp(t->alloc, snapshot, t->bytes) == 0;
}

/* ------------------------------------------------------------------ generators */

double *vol_alloc(odims d)
{
    double *v = calloc((size_t)odims_count(d) + 1, sizeof(double));
    if (!v) abort();
    return v;
}

void gen_random(trng *r, iwpp_type type, odims d, int levels, double *v)
{
    int64_t n = odims_count(d);
    if (levels < 1) levels = 1;
    for (int64_t i = 0; i < n; ++i) {
        int64_t k = trng_below(r, levels);
        switch (type) {
        case IWPP_U8: v[i] = levels >= 256 ? (double)k : floor((double)k * 255.0 / (levels > 1 ? levels - 1 : 1)); break;
        case IWPP_U16: v[i] = floor((double)k * 65535.0 / (levels > 1 ? levels - 1 : 1)); break;
        default: v[i] = ((double)k - levels / 2) * 0.25; break; /* multiples of 0.25, negatives too */
        }
    }
}

void gen_binary(trng *r, odims d, double p_fg, double fg, double *v)
{
    int64_t n = odims_count(d);
    for (int64_t i = 0; i < n; ++i)
        v[i] = ((double)(trng_next(r) >> 11) / 9007199254740992.0) < p_fg ? fg : 0.0;
}

void gen_const(odims d, double c, double *v)
{
    int64_t n = odims_count(d);
    for (int64_t i = 0; i < n; ++i) v[i] = c;
}

void gen_spiral(odims d, double *v)
{
    gen_const(d, 0.0, v);
    int64_t plane = d.w * d.h;
    double *s = v; /* build in slice 0, copy to the others */
    int64_t x = 0, y = 0;
    int dir = 0; /* 0 right, 1 down, 2 left, 3 up */
    static const int DX[4] = {1, 0, -1, 0}, DY[4] = {0, 1, 0, -1};
    s[0] = 1.0;
    int turns_without_move = 0;
    while (turns_without_move < 2) {
        int64_t nx = x + DX[dir], ny = y + DY[dir];
        int64_t ax = x + 2 * DX[dir], ay = y + 2 * DY[dir];
        int ok = nx >= 0 && ny >= 0 && nx < d.w && ny < d.h && s[nx + d.w * ny] == 0.0;
        /* keep a wall of one pixel: the cell after next must be free or outside */
        if (ok && ax >= 0 && ay >= 0 && ax < d.w && ay < d.h && s[ax + d.w * ay] != 0.0) ok = 0;
        /* and no side contact with earlier corridor (besides where we come from) */
        if (ok) {
            for (int k = 0; k < 4 && ok; ++k) {
                int64_t sx = nx + DX[k], sy = ny + DY[k];
                if (sx == x && sy == y) continue;
                if (sx >= 0 && sy >= 0 && sx < d.w && sy < d.h && s[sx + d.w * sy] != 0.0) ok = 0;
            }
        }
        if (ok) {
            x = nx;
            y = ny;
            s[x + d.w * y] = 1.0;
            turns_without_move = 0;
        } else {
            dir = (dir + 1) & 3;
            ++turns_without_move;
        }
    }
    for (int64_t z = 1; z < d.d; ++z) memcpy(v + z * plane, v, (size_t)plane * sizeof(double));
}

void gen_maze(trng *r, odims d, double *v)
{
    gen_const(d, 0.0, v);
    /* cells at even coordinates; walls between them; depth-first carving */
    int64_t cw = (d.w + 1) / 2, ch = (d.h + 1) / 2, cd = (d.d + 1) / 2;
    int64_t ncell = cw * ch * cd;
    unsigned char *seen = calloc((size_t)ncell, 1);
    int64_t *stack = malloc((size_t)ncell * sizeof(int64_t));
    if (!seen || !stack) abort();
    int64_t top = 0;
    stack[top++] = 0;
    seen[0] = 1;
    v[0] = 1.0;
    static const int DIRS[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
    while (top > 0) {
        int64_t c = stack[top - 1];
        int64_t cx = c % cw, cy = (c / cw) % ch, cz = c / (cw * ch);
        int cand[6], nc = 0;
        for (int k = 0; k < 6; ++k) {
            int64_t nx = cx + DIRS[k][0], ny = cy + DIRS[k][1], nz = cz + DIRS[k][2];
            if (nx < 0 || ny < 0 || nz < 0 || nx >= cw || ny >= ch || nz >= cd) continue;
            if (!seen[nx + cw * (ny + ch * nz)]) cand[nc++] = k;
        }
        if (nc == 0) {
            --top;
            continue;
        }
        int k = cand[trng_below(r, nc)];
        int64_t nx = cx + DIRS[k][0], ny = cy + DIRS[k][1], nz = cz + DIRS[k][2];
        int64_t n = nx + cw * (ny + ch * nz);
        seen[n] = 1;
        /* carve the wall pixel between and the new cell */
        int64_t wx = 2 * cx + DIRS[k][0], wy = 2 * cy + DIRS[k][1], wz = 2 * cz + DIRS[k][2];
        v[wx + d.w * (wy + d.h * wz)] = 1.0;
        v[2 * nx + d.w * (2 * ny + d.h * 2 * nz)] = 1.0;
        stack[top++] = n;
    }
    free(seen);
    free(stack);
}

/* ------------------------------------------------------------------ checks */

void note_failure(int *fails)
{
    ++*fails;
    ++g_printed_failures;
}

static int may_print(void) { return g_printed_failures < 40; }

int check_equal(const timg *got, const double *expected, const char *what)
{
    odims d = timg_dims(got);
    int64_t bad = 0;
    int64_t fx = 0, fy = 0, fz = 0;
    double fg = 0, fe = 0;
    for (int64_t z = 0; z < d.d; ++z)
        for (int64_t y = 0; y < d.h; ++y)
            for (int64_t x = 0; x < d.w; ++x) {
                double e = expected[x + d.w * (y + d.h * z)];
                double g = timg_get(got, x, y, z);
                int same;
                if (got->v.type == IWPP_F32) {
                    float ef = (float)e, gf = (float)g;
                    same = memcmp(&ef, &gf, sizeof ef) == 0;
                } else {
                    same = e == g;
                }
                if (!same) {
                    if (bad == 0) {
                        fx = x, fy = y, fz = z, fg = g, fe = e;
                    }
                    ++bad;
                }
            }
    if (bad) {
        if (may_print())
            print_error("FAIL: %s: %lld of %lld pixels differ; first at (x=%lld, y=%lld, z=%lld): got "
                        "%.9g, expected %.9g\n",
                        what, (long long)bad, (long long)odims_count(d), (long long)fx,
                        (long long)fy, (long long)fz, fg, fe);
        return 1;
    }
    return check_padding(got, what);
}

int check_padding(const timg *got, const char *what)
{
    if (!timg_padding_intact(got)) {
        if (may_print())
            print_error("FAIL: %s: the call wrote outside the view (into the stride padding)\n", what);
        return 1;
    }
    return 0;
}

int check_ok(iwpp_status st, iwpp_context *ctx, const char *what)
{
    if (st == IWPP_OK) return 0;
    if (may_print())
        print_error("FAIL: %s: returned %s: %s\n", what, iwpp_status_name(st), iwpp_error_message(ctx));
    return 1;
}

const char *mode_name(iwpp_morph_mode m) { return m == IWPP_BY_EROSION ? "erosion" : "dilation"; }

double type_max(iwpp_type t) { return oracle_type_max(t); }

double as_type(iwpp_type t, double v)
{
    if (t == IWPP_F32) return (double)(float)v;
    return v;
}

const char *fmt(const char *f, ...)
{
    static _Thread_local char bufs[8][512];
    static _Thread_local int next = 0;
    char *b = bufs[next];
    next = (next + 1) & 7;
    va_list ap;
    va_start(ap, f);
    vsnprintf(b, sizeof bufs[0], f, ap);
    va_end(ap);
    return b;
}
