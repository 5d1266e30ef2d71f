/*
 * test_badinput.c - a sweep of bad and edge-case calls over every public function of iwpp.h.
 *
 * Hand-listed cases (names, device queries, context creation and setters, thread counts,
 * view constructors with overflowing sizes, EDT spacings, special floats) and a few thousand
 * random calls (fixed seed): a valid call is drawn (operation, type, sizes down to 1x1, 1xN,
 * Nx1 and 1x1xN, strides, connectivity, parameters, contents with -0, +-inf, denormals),
 * then up to three mutations are applied (NULL context / view / data, unknown and wrong
 * types, zero, negative and overflowing sizes, mismatched sizes, negative, short and
 * overflowing strides, bad enums and connectivities, NaN, bad spacing, h and radius), plus
 * random calls whose views share memory, and random calls on contexts with a memory budget or
 * a worker list (the tile scheduler) after bad and good worker lists.
 *
 * Every call must return the expected status. On an error the message must name the
 * offending argument, no byte of any buffer of the call may change, and the context's stats
 * still describe the last successful call. On success the result equals the oracle (values)
 * and the sequential CPU backend (bits; -0 and +0 count as one, see first_bits_diff), inputs
 * are unchanged and nothing outside the output views is written. GPU backends draw sizes from a
 * short list (GPU_SHAPES) so that PoCL compiles few kernel variants.
 *
 * IWPP_BADINPUT_CALLS: random calls (default 6000) and alias calls (a fifth of them);
 * IWPP_BADINPUT_SEED: the seed (default 10).
 */
#include <ctype.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

#define BIT(s) (1u << (s))
#define ST_OK BIT(IWPP_OK)
#define ST_INVAL BIT(IWPP_EINVAL)
#define ST_UNSUP BIT(IWPP_EUNSUPPORTED)

static int g_fails;
static long g_calls;
static iwpp_context *g_ref; /* sequential CPU: the bits every backend must give */

static void report(const char *f, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static void report(const char *f, ...)
{
    if (g_fails++ >= 60) return; /* the count still goes up */
    char buf[1400];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    print_error("FAIL: %s\n", buf);
}

static long env_long(const char *name, long dflt)
{
    const char *s = getenv(name);
    return s && *s ? atol(s) : dflt;
}

static double now_s(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int is_word(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* 1 if @p msg mentions one of the '|'-separated keywords (case-insensitive) at the start of a
 * word; a keyword ending in '$' must also end there ("h$" is not "height"). NULL: anything. */
static int mentions(const char *msg, const char *kws)
{
    if (!kws) return 1;
    size_t n = strlen(msg);
    const char *k = kws;
    for (;;) {
        const char *bar = strchr(k, '|');
        size_t len = bar ? (size_t)(bar - k) : strlen(k);
        int whole = len > 0 && k[len - 1] == '$';
        if (whole) --len;
        for (size_t i = 0; len && i + len <= n; ++i) {
            if (i > 0 && is_word(msg[i - 1])) continue;
            size_t j = 0;
            while (j < len && tolower((unsigned char)msg[i + j]) == tolower((unsigned char)k[j])) ++j;
            if (j < len) continue;
            if (whole && i + len < n && is_word(msg[i + len])) continue;
            return 1;
        }
        if (!bar) return 0;
        k = bar + 1;
    }
}

static const char *status_list(unsigned mask)
{
    static char buf[256];
    buf[0] = '\0';
    for (int s = 0; s <= IWPP_EINTERNAL; ++s)
        if (mask & BIT(s)) {
            if (buf[0]) strcat(buf, " or ");
            strcat(buf, iwpp_status_name((iwpp_status)s));
        }
    return buf;
}

/* A hand-listed expectation: status in @p mask; if it is an error, a message that mentions
 * @p arg and @p topic (keywords as for mentions()). Returns 1 if the call succeeded. */
static int expect(iwpp_context *ctx, iwpp_status st, unsigned mask, const char *arg, const char *topic,
                  const char *what)
{
    if (!(mask & BIT(st))) {
        report("%s: returned %s, expected %s (message: \"%s\")", what, iwpp_status_name(st), status_list(mask),
             ctx ? iwpp_error_message(ctx) : "");
        return 0;
    }
    if (st == IWPP_OK || !ctx) return st == IWPP_OK;
    const char *msg = iwpp_error_message(ctx);
    if (!msg || strlen(msg) < 8)
        report("%s: the message \"%s\" is empty or too short to act on", what, msg ? msg : "(NULL)");
    else if (!mentions(msg, arg) || !mentions(msg, topic))
        report("%s: the message \"%s\" does not mention %s / %s", what, msg, arg ? arg : "-", topic ? topic : "-");
    return 0;
}

/* ------------------------------------------------------------------ operations */

typedef enum {
    OP_RECON, OP_EDT, OP_FILL, OP_KILL, OP_RMAX, OP_RMIN, OP_HMAX, OP_HMIN, OP_OPEN, OP_CLOSE, OP_N
} opkind;
static const char *const OPNAME[OP_N] = {"reconstruct", "distance_transform", "fill_holes", "kill_borders",
                                         "regional_maxima", "regional_minima", "h_maxima", "h_minima",
                                         "opening_by_reconstruction", "closing_by_reconstruction"};

/* The arguments of any operation: in = mask / binary / in, out = marker_inout / dist_out / out,
 * out2 = nearest_out. */
typedef struct args {
    iwpp_context *ctx;
    const iwpp_image *in;
    iwpp_image *out, *out2;
    int conn;
    iwpp_morph_mode mode;
    iwpp_edt_method method;
    const double *spacing;
    double h;
    int radius;
} args;

static iwpp_status call_op(opkind op, const args *a)
{
    ++g_calls;
    switch (op) {
    case OP_RECON: return iwpp_reconstruct(a->ctx, a->out, a->in, a->conn, a->mode);
    case OP_EDT: return iwpp_distance_transform(a->ctx, a->in, a->method, a->spacing, a->out, a->out2);
    case OP_FILL: return iwpp_fill_holes(a->ctx, a->in, a->conn, a->out);
    case OP_KILL: return iwpp_kill_borders(a->ctx, a->in, a->conn, a->out);
    case OP_RMAX: return iwpp_regional_maxima(a->ctx, a->in, a->conn, a->out);
    case OP_RMIN: return iwpp_regional_minima(a->ctx, a->in, a->conn, a->out);
    case OP_HMAX: return iwpp_h_maxima(a->ctx, a->in, a->h, a->conn, a->out);
    case OP_HMIN: return iwpp_h_minima(a->ctx, a->in, a->h, a->conn, a->out);
    case OP_OPEN: return iwpp_opening_by_reconstruction(a->ctx, a->in, a->radius, a->conn, a->out);
    default: return iwpp_closing_by_reconstruction(a->ctx, a->in, a->radius, a->conn, a->out);
    }
}

static iwpp_type out_type(opkind op, iwpp_type in)
{
    return op == OP_EDT ? IWPP_F32 : (op == OP_RMAX || op == OP_RMIN) ? IWPP_U8 : in;
}

/* Argument names as messages spell them. */
static const char *arg_name(opkind op, int role)
{
    if (op == OP_RECON) return role == 0 ? "mask$" : "marker$|marker_inout$";
    if (op == OP_EDT) return role == 0 ? "binary$" : role == 1 ? "dist_out$" : "nearest_out$";
    return role == 0 ? "in$" : "out$";
}
static const char *all_names(opkind op)
{
    return op == OP_RECON ? "mask$|marker$|marker_inout$" : op == OP_EDT ? "binary$|dist_out$|nearest_out$" : "in$|out$";
}

/* Expected values of every operation but the EDT (checked against its bounds). */
static void oracle_op(opkind op, iwpp_type t, odims d, const double *vin, const double *vmk, int conn,
                      iwpp_morph_mode mode, double h, int radius, double *exp)
{
    int64_t n = odims_count(d);
    switch (op) {
    case OP_RECON:
        memcpy(exp, vmk, (size_t)n * sizeof *exp);
        oracle_reconstruct(exp, vin, d, conn, mode == IWPP_BY_EROSION);
        break;
    case OP_FILL:
        if (t == IWPP_F32) { /* the F32 maximum is +inf: a hole walled by +inf fills to +inf */
            for (int64_t z = 0; z < d.d; ++z)
                for (int64_t y = 0; y < d.h; ++y)
                    for (int64_t x = 0; x < d.w; ++x) {
                        int64_t p = x + d.w * (y + d.h * z);
                        exp[p] = oracle_on_border(d, x, y, z) ? vin[p] : INFINITY;
                    }
            oracle_reconstruct(exp, vin, d, conn, 1);
        } else {
            oracle_fill_holes(vin, d, t, conn, exp);
        }
        break;
    case OP_KILL: oracle_kill_borders(vin, d, t, conn, exp); break;
    case OP_RMAX: oracle_regional_extrema(vin, d, conn, 1, exp); break;
    case OP_RMIN: oracle_regional_extrema(vin, d, conn, 0, exp); break;
    case OP_HMAX: oracle_hextrema(vin, d, t, h, conn, 1, exp); break;
    case OP_HMIN: oracle_hextrema(vin, d, t, h, conn, 0, exp); break;
    case OP_OPEN: oracle_open_close(vin, d, radius, conn, 1, exp); break;
    default: oracle_open_close(vin, d, radius, conn, 0, exp); break;
    }
}

/* ------------------------------------------------------------------ images */

static unsigned char *snapshot(const timg *t)
{
    if (!t->alloc) return NULL;
    unsigned char *s = malloc(t->bytes);
    if (!s) abort();
    memcpy(s, t->alloc, t->bytes);
    return s;
}

static size_t pixel_offset(const timg *t, int64_t x, int64_t y, int64_t z)
{
    return (size_t)(x + y * t->sy + z * t->sz) * iwpp_type_size(t->v.type);
}

/* Load values that may not fit the type (a replaced buffer of another type): finite values
 * clamped to the type's range, the rest 0. */
static void load_converted(timg *t, const double *v)
{
    odims d = timg_dims(t);
    double lo = t->v.type == IWPP_I64 ? -1e18 : oracle_type_min(t->v.type);
    double hi = t->v.type == IWPP_I64 ? 1e18 : oracle_type_max(t->v.type);
    for (int64_t z = 0; z < d.d; ++z)
        for (int64_t y = 0; y < d.h; ++y)
            for (int64_t x = 0; x < d.w; ++x) {
                double a = v[x + d.w * (y + d.h * z)];
                a = isfinite(a) ? fmin(fmax(a, lo), hi) : 0.0;
                if (t->v.type != IWPP_F32) a = floor(a);
                timg_set(t, x, y, z, a);
            }
}

/* First pixel whose bytes differ between two images of the same type and sizes, or -1.
 * -0 and +0 count as the same: which one a reconstruction keeps where both meet depends on
 * the order of propagation (threads, tiles, GPU), and they are the same value. */
static int64_t first_bits_diff(const timg *a, const timg *b)
{
    odims d = timg_dims(a);
    size_t es = iwpp_type_size(a->v.type);
    for (int64_t z = 0; z < d.d; ++z)
        for (int64_t y = 0; y < d.h; ++y)
            for (int64_t x = 0; x < d.w; ++x) {
                const unsigned char *pa = a->alloc + pixel_offset(a, x, y, z), *pb = b->alloc + pixel_offset(b, x, y, z);
                if (!memcmp(pa, pb, es)) continue;
                if (a->v.type == IWPP_F32) {
                    float fa, fb;
                    memcpy(&fa, pa, 4);
                    memcpy(&fb, pb, 4);
                    if (fa == 0.0f && fb == 0.0f) continue;
                }
                return x + d.w * (y + d.h * z);
            }
    return -1;
}

static int float_close(float a, float b, int ulps)
{
    if (a == b) return 1;
    if (isnan(a) || isnan(b) || isinf(a) || isinf(b)) return 0;
    float lo = a < b ? a : b, hi = a < b ? b : a;
    for (int i = 0; i < ulps; ++i) lo = nextafterf(lo, INFINITY);
    return lo >= hi;
}

/* 1 if two values read from images of type @p t are the same (F32: -0 == +0, NaN never). */
static int same_value(iwpp_type t, double got, double want)
{
    if (t == IWPP_F32) return (float)got == (float)want;
    return got == want;
}

static const char *dims_str(odims d) { return fmt("%lldx%lldx%lld", (long long)d.w, (long long)d.h, (long long)d.d); }

/* ------------------------------------------------------------------ result checks */

/* Check dist (and nearest) of a successful EDT of @p bin (values) against brute force. */
static int check_edt_values(const double *bin, odims d, const double sp[3], iwpp_edt_method method,
                            const timg *dist, const timg *near, const char *what)
{
    int64_t n = odims_count(d), nbg = 0;
    float *exact = malloc((size_t)n * sizeof *exact);
    double *bound = malloc((size_t)n * sizeof *bound);
    if (!exact || !bound) abort();
    oracle_edt(bin, d, sp, exact);
    oracle_danielsson_bound(bin, d, sp, bound);
    for (int64_t i = 0; i < n; ++i) nbg += bin[i] == 0;
    int bad = 0;
    for (int64_t z = 0; z < d.d && !bad; ++z)
        for (int64_t y = 0; y < d.h && !bad; ++y)
            for (int64_t x = 0; x < d.w && !bad; ++x) {
                int64_t p = x + d.w * (y + d.h * z);
                float g = (float)timg_get(dist, x, y, z), e = exact[p];
                const char *why = NULL;
                if (method == IWPP_EDT_EXACT) {
                    if (memcmp(&g, &e, sizeof g)) why = "not the exact distance";
                } else if (isinf(e) ? !(isinf(g) && g > 0)
                                    : !((double)g >= (double)e * (1.0 - 1e-6) &&
                                        (double)g <= bound[p] * (1.0 + 1e-6))) {
                    why = "outside the Danielsson bounds";
                }
                int64_t q = 0;
                if (!why && near) {
                    q = (int64_t)timg_get(near, x, y, z);
                    if (nbg == 0) {
                        if (q != -1) why = "nearest must be -1 without background";
                    } else if (q < 0 || q >= n || bin[q] != 0) {
                        why = "nearest is not a background pixel (-1 means no background at all)";
                    } else if (bin[p] == 0 && q != p) {
                        why = "a background pixel's nearest must be itself";
                    } else if (!float_close((float)oracle_index_distance(p, q, d, sp), g, 4)) {
                        why = "the distance to the returned nearest pixel differs from dist";
                    }
                }
                if (why) {
                    report("%s: %s at (x=%lld, y=%lld, z=%lld): got %.9g, exact %.9g, nearest %lld", what, why,
                         (long long)x, (long long)y, (long long)z, (double)g, (double)e, (long long)q);
                    bad = 1;
                }
            }
    free(exact);
    free(bound);
    return bad;
}

/* Compare an output image with expected values; 1 on a mismatch (reported). */
static int check_values(const timg *got, const double *exp, const char *what)
{
    odims d = timg_dims(got);
    for (int64_t z = 0; z < d.d; ++z)
        for (int64_t y = 0; y < d.h; ++y)
            for (int64_t x = 0; x < d.w; ++x) {
                double g = timg_get(got, x, y, z), e = exp[x + d.w * (y + d.h * z)];
                if (!same_value(got->v.type, g, e)) {
                    report("%s: at (x=%lld, y=%lld, z=%lld) got %.9g, expected %.9g", what, (long long)x,
                         (long long)y, (long long)z, g, e);
                    return 1;
                }
            }
    return 0;
}

/* The same call on the sequential CPU with contiguous copies: the bits must be the same. */
static int check_against_ref(opkind op, const args *a0, iwpp_type t, odims d, const double *vin,
                             const double *vmk, const timg *got, const char *what)
{
    if (op == OP_EDT && a0->method == IWPP_EDT_DANIELSSON) return 0; /* order-dependent within bounds */
    timg in, out;
    if (!timg_init(&in, t, d, 0, 0) || !timg_init(&out, got->v.type, d, 0, 0)) abort();
    timg_load(&in, vin);
    if (op == OP_RECON) timg_load(&out, vmk);
    args a = *a0;
    a.ctx = g_ref;
    a.in = &in.v;
    a.out = &out.v;
    a.out2 = NULL;
    iwpp_status st = call_op(op, &a);
    int bad = 0;
    if (st != IWPP_OK) {
        report("%s: the sequential CPU refused the same call: %s: %s", what, iwpp_status_name(st),
             iwpp_error_message(g_ref));
        bad = 1;
    } else {
        int64_t p = first_bits_diff(&out, got);
        if (p >= 0) {
            report("%s: pixel %lld has other bits than on the sequential CPU (%.9g vs %.9g)", what, (long long)p,
                 timg_get(got, p % d.w, (p / d.w) % d.h, p / (d.w * d.h)),
                 timg_get(&out, p % d.w, (p / d.w) % d.h, p / (d.w * d.h)));
            bad = 1;
        }
    }
    timg_free(&in);
    timg_free(&out);
    return bad;
}

/* ------------------------------------------------------------------ random calls */

typedef struct expct {
    unsigned mask;     /* statuses accepted */
    const char *arg;   /* the message names one of these (mentions()) */
    const char *topic; /* and one of these */
    char label[72];
} expct;

#define MAX_EXP 6
typedef struct rcase {
    opkind op;
    iwpp_type type; /* input type (binary, mask, in) */
    odims d;
    int conn;
    iwpp_morph_mode mode;
    iwpp_edt_method method;
    double sp[3];
    int sp_null;
    double h;
    int radius;
    double *vin, *vmk;  /* input values; marker values (reconstruct) */
    timg t[3];          /* in, out, out2 (out2: EDT nearest_out, or none) */
    int64_t pad[3][2];  /* padding each buffer was made with */
    iwpp_image v[3];    /* the views passed (mutated copies of t[i].v) */
    int null_view[2], null_ctx;
    unsigned char *snap[3];
    iwpp_context *ctx;
    expct e[MAX_EXP];
    int ne;
    int mismatched;
    int strided[3]; /* a stride mutation per view at most: a second could undo the first */
} rcase;

static void add_exp(rcase *c, unsigned mask, const char *arg, const char *topic, const char *label)
{
    if (c->ne == MAX_EXP) return;
    expct *e = &c->e[c->ne++];
    e->mask = mask;
    e->arg = arg;
    e->topic = topic;
    snprintf(e->label, sizeof e->label, "%s", label);
}

/* GPU backends draw from a fixed list: PoCL compiles a kernel anew for every new launch
 * geometry (about a second each, cold), the CPU takes any size. */
static const odims GPU_SHAPES[] = {{1, 1, 1}, {1, 7, 1}, {7, 1, 1}, {1, 1, 6},
                                   {5, 1, 3}, {9, 7, 1}, {3, 3, 3}, {23, 17, 1}};

static odims random_dims(trng *r)
{
    if (g_backend != IWPP_BACKEND_CPU)
        return GPU_SHAPES[trng_below(r, (int64_t)(sizeof GPU_SHAPES / sizeof GPU_SHAPES[0]))];
    int64_t a = 2 + trng_below(r, 9), b = 2 + trng_below(r, 8), c = 2 + trng_below(r, 4);
    switch (trng_below(r, 12)) {
    case 0: return (odims){1, 1, 1};
    case 1: return (odims){1, a, 1};
    case 2: return (odims){a, 1, 1};
    case 3: return (odims){1, 1, a};
    case 4: return (odims){a, 1, c};
    case 5: return (odims){1, b, c};
    case 6: return (odims){17 + trng_below(r, 24), 17 + trng_below(r, 20), 1}; /* several 16-pixel tiles */
    case 7:
    case 8:
    case 9: return (odims){a, b, 1};
    default: return (odims){a, b, c};
    }
}

/* Gray values with plateaus; F32 sometimes with -0, +-inf, extremes and denormals. */
static void gen_values(trng *r, iwpp_type t, odims d, double *v, int allow_inf)
{
    int levels = trng_below(r, 4) == 0 ? 256 : 1 + (int)trng_below(r, 5);
    gen_random(r, t, d, levels, v);
    if (t == IWPP_F32 && trng_below(r, 2)) {
        static const double sp[] = {-0.0, 0.0, FLT_MAX, -FLT_MAX, FLT_TRUE_MIN, -FLT_TRUE_MIN, FLT_MIN, 1e-30,
                                    INFINITY, -INFINITY};
        int nsp = allow_inf ? 10 : 8;
        int64_t n = odims_count(d);
        for (int64_t i = 0; i < n; ++i)
            if (trng_below(r, 5) == 0) v[i] = sp[trng_below(r, nsp)];
    }
}

static void rcase_free(rcase *c)
{
    for (int i = 0; i < 3; ++i) {
        timg_free(&c->t[i]);
        free(c->snap[i]);
    }
    free(c->vin);
    free(c->vmk);
}

static void make_buf(rcase *c, int role, iwpp_type t, trng *r)
{
    int64_t py = trng_below(r, 3) == 0 ? 1 + trng_below(r, 3) : 0;
    int64_t pz = trng_below(r, 3) == 0 ? trng_below(r, 5) : 0;
    c->pad[role][0] = py;
    c->pad[role][1] = pz;
    if (!timg_init(&c->t[role], t, c->d, py, pz)) abort();
    c->v[role] = c->t[role].v;
}

static void rcase_init(rcase *c, trng *r, iwpp_context *ctx)
{
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->op = (opkind)trng_below(r, OP_N);
    static const iwpp_type types[3] = {IWPP_U8, IWPP_U16, IWPP_F32};
    c->type = types[trng_below(r, 3)];
    c->d = random_dims(r);
    static const int c2[] = {4, 8, 4, 8, 6, 18, 26}, c3[] = {6, 18, 26};
    c->conn = c->d.d == 1 ? c2[trng_below(r, 7)] : c3[trng_below(r, 3)];
    c->mode = trng_below(r, 2) ? IWPP_BY_EROSION : IWPP_BY_DILATION;
    c->method = trng_below(r, 2) ? IWPP_EDT_DANIELSSON : IWPP_EDT_EXACT;
    static const int radii[] = {0, 1, 1, 2, 3, 5, 40};
    c->radius = radii[trng_below(r, 7)];
    c->vin = vol_alloc(c->d);
    if (c->op == OP_EDT) {
        static const double p[] = {0.0, 0.3, 0.7, 0.95, 1.0};
        static const double fg[] = {1, 255, 65535, -2.5, INFINITY, -INFINITY, FLT_TRUE_MIN, FLT_MAX};
        int nfg = c->type == IWPP_U8 ? 2 : c->type == IWPP_U16 ? 3 : 8;
        gen_binary(r, c->d, p[trng_below(r, 5)], fg[trng_below(r, nfg)], c->vin);
        if (c->type == IWPP_F32 && trng_below(r, 2)) /* -0 is background too */
            for (int64_t i = 0; i < odims_count(c->d); ++i)
                if (c->vin[i] == 0 && trng_below(r, 2)) c->vin[i] = -0.0;
        c->sp_null = trng_below(r, 3) == 0;
        static const double sps[] = {1, 1, 0.5, 2, 3, 0.1, 1e-3, 1e3, 1e-74, 1e18, 1e30};
        for (int i = 0; i < 3; ++i) c->sp[i] = c->sp_null ? 1.0 : sps[trng_below(r, 11)];
        double ext = c->d.w * c->sp[0] + c->d.h * c->sp[1] + c->d.d * c->sp[2];
        if (!(ext <= 1e30)) add_exp(c, ST_OK | ST_INVAL, NULL, "spacing", "large spacing");
    } else {
        gen_values(r, c->type, c->d, c->vin, 1);
    }
    if (c->op == OP_RECON) {
        c->vmk = vol_alloc(c->d);
        gen_values(r, c->type, c->d, c->vmk, 1);
    }
    static const double hs[] = {0, -0.0, 0.25, 0.49, 0.5, 1, 2.5, 3, 40, 255, 256, 70000, 1e-30, 3.4e38, 1e300};
    c->h = hs[trng_below(r, 15)];
    if ((c->op == OP_HMAX || c->op == OP_HMIN) && c->type == IWPP_F32 && c->h > FLT_MAX)
        add_exp(c, ST_INVAL, NULL, "h$", "h above FLT_MAX on f32"); /* (float)h would be +inf */

    make_buf(c, 0, c->type, r);
    timg_load(&c->t[0], c->vin);
    make_buf(c, 1, out_type(c->op, c->type), r);
    if (c->op == OP_RECON) timg_load(&c->t[1], c->vmk);
    if (c->op == OP_EDT && trng_below(r, 2)) make_buf(c, 2, IWPP_I64, r);
    /* an output's old contents are never read: fill F32 pixels with NaN sometimes */
    if (c->op != OP_RECON && c->t[1].v.type == IWPP_F32 && trng_below(r, 4) == 0) {
        odims d = c->d;
        for (int64_t z = 0; z < d.d; ++z)
            for (int64_t y = 0; y < d.h; ++y)
                for (int64_t x = 0; x < d.w; ++x) timg_set(&c->t[1], x, y, z, NAN);
    }
}

static int sane_view(const iwpp_image *v)
{
    return v->width >= 1 && v->width <= 4096 && v->height >= 1 && v->height <= 4096 && v->depth >= 1 &&
           v->depth <= 4096 && v->stride_y >= 0 && v->stride_y <= 1 << 20 && v->stride_z >= 0 &&
           v->stride_z <= 1 << 24;
}

enum {
    MU_NULL_CTX, MU_NULL_VIEW, MU_NULL_DATA, MU_BAD_TYPE, MU_WRONG_TYPE, MU_SIZE_BAD, MU_SIZE_HUGE,
    MU_SIZE_MISMATCH, MU_STRIDE_NEG, MU_STRIDE_SMALL, MU_STRIDE_HUGE, MU_STRIDE_UNUSED, MU_CONN, MU_CONN_2D,
    MU_MODE, MU_METHOD, MU_SPACING, MU_H, MU_RADIUS, MU_NAN, MU_INF, MU_N
};

#define SIZE_TOPIC "width|height|depth|size|pixels|too$|but$|stride|connectivity|overflow|large"

/* Apply one mutation; 0 if the drawn one does not apply to this call. */
static int mutate(rcase *c, trng *r)
{
    int nroles = c->t[2].alloc ? 3 : 2;
    int role = (int)trng_below(r, nroles);
    timg *t = &c->t[role];
    iwpp_image *v = &c->v[role];
    const char *an = arg_name(c->op, role);
    /* inputs are read (NaN scan) once their view passes: only views backed by memory */
    int is_input = role == 0 || (role == 1 && c->op == OP_RECON);
    switch ((int)trng_below(r, MU_N)) {
    case MU_NULL_CTX:
        c->null_ctx = 1;
        add_exp(c, ST_INVAL, NULL, NULL, "NULL context");
        return 1;
    case MU_NULL_VIEW:
        if (role == 2) return 0; /* a NULL nearest_out is valid */
        c->null_view[role] = 1;
        add_exp(c, ST_INVAL, an, "null", fmt("NULL %s", an));
        return 1;
    case MU_NULL_DATA:
        v->data = NULL;
        add_exp(c, ST_INVAL, an, "null|data", fmt("%s data NULL", an));
        return 1;
    case MU_BAD_TYPE: {
        static const int bad[] = {0, 6, 7, 99, -1, INT_MAX, INT_MIN};
        int b = bad[trng_below(r, 7)];
        v->type = (iwpp_type)b;
        add_exp(c, ST_INVAL, an, "type|unknown", fmt("%s type %d", an, b));
        return 1;
    }
    case MU_WRONG_TYPE: {
        static const iwpp_type all[4] = {IWPP_U8, IWPP_U16, IWPP_F32, IWPP_I64};
        iwpp_type want = role == 0 ? c->type : role == 1 ? out_type(c->op, c->type) : IWPP_I64;
        iwpp_type nt = role == 0 ? IWPP_I64 : all[trng_below(r, 4)];
        if (nt == want) return 0;
        int64_t py = c->pad[role][0], pz = c->pad[role][1];
        timg_free(t);
        if (!timg_init(t, nt, c->d, py, pz)) abort();
        if (is_input) load_converted(t, role == 0 ? c->vin : c->vmk);
        v->data = v->data ? t->alloc : NULL;
        v->type = nt;
        const char *who = c->op == OP_RECON ? "mask$|marker$" : an;
        add_exp(c, ST_INVAL | ST_UNSUP, who, "type|u8|u16|f32|i64",
                fmt("%s of type %s", an, iwpp_type_name(nt)));
        return 1;
    }
    case MU_SIZE_BAD: {
        static const int64_t bad[] = {0, -1, -3, INT64_MIN, -((int64_t)1 << 40)};
        int64_t b = bad[trng_below(r, 5)];
        int dim = (int)trng_below(r, 3);
        if (dim == 0) v->width = b;
        else if (dim == 1) v->height = b;
        else v->depth = b;
        add_exp(c, ST_INVAL, an, SIZE_TOPIC, fmt("%s %s %lld", an, dim == 0 ? "width" : dim == 1 ? "height" : "depth", (long long)b));
        return 1;
    }
    case MU_SIZE_HUGE: {
        /* every product overflows int64 */
        static const int64_t huge[][3] = {{INT64_MAX, 1, 1},
                                          {1, INT64_MAX, 1},
                                          {1, 1, INT64_MAX},
                                          {(int64_t)1 << 32, (int64_t)1 << 32, 1},
                                          {(int64_t)1 << 21, (int64_t)1 << 21, (int64_t)1 << 22},
                                          {INT64_MAX, INT64_MAX, INT64_MAX},
                                          {(int64_t)1 << 62, 2, 1},
                                          {3, (int64_t)1 << 61, 2},
                                          {((int64_t)1 << 31) + 1, ((int64_t)1 << 31) + 1, 2},
                                          {5, 4, (int64_t)1 << 61}};
        const int64_t *s = huge[trng_below(r, 10)];
        int every = (int)trng_below(r, 2);
        for (int i = 0; i < nroles; ++i)
            if (every || i == role) {
                c->v[i].width = s[0];
                c->v[i].height = s[1];
                c->v[i].depth = s[2];
            }
        add_exp(c, ST_INVAL, every ? all_names(c->op) : an, SIZE_TOPIC,
                fmt("%s %lldx%lldx%lld", every ? "every view" : an, (long long)s[0], (long long)s[1], (long long)s[2]));
        return 1;
    }
    case MU_SIZE_MISMATCH: {
        if (!sane_view(v) || c->mismatched) return 0; /* two could cancel out */
        c->mismatched = 1;
        int dim = (int)trng_below(r, 3);
        int64_t *f = dim == 0 ? &v->width : dim == 1 ? &v->height : &v->depth;
        int grow = is_input ? 0 : (int)trng_below(r, 2); /* a view larger than its memory is no test */
        if (!grow && *f < 2) return 0;
        *f += grow ? 1 : -1;
        add_exp(c, ST_INVAL, all_names(c->op), SIZE_TOPIC, fmt("%s %s %+d", an, dim == 0 ? "width" : dim == 1 ? "height" : "depth", grow ? 1 : -1));
        return 1;
    }
    case MU_STRIDE_NEG: {
        if (c->strided[role]++) return 0;
        static const int64_t bad[] = {-1, -2, -64, INT64_MIN, -((int64_t)1 << 40)};
        int64_t b = bad[trng_below(r, 5)];
        if (trng_below(r, 2)) v->stride_y = b;
        else v->stride_z = b;
        add_exp(c, ST_INVAL, an, "stride", fmt("%s stride %lld", an, (long long)b));
        return 1;
    }
    case MU_STRIDE_SMALL: {
        if (c->strided[role]++) return 0;
        if (!sane_view(v)) return 0;
        int64_t sy = v->stride_y ? v->stride_y : v->width;
        if (trng_below(r, 2)) {
            if (v->width < 2) return 0;
            v->stride_y = 1 + trng_below(r, v->width - 1);
            add_exp(c, ST_INVAL, an, "stride", fmt("%s stride_y %lld < width", an, (long long)v->stride_y));
        } else {
            if (v->depth < 2) return 0;
            int64_t need = sy * (v->height - 1) + v->width;
            if (need < 2) return 0;
            v->stride_z = 1 + trng_below(r, need - 1);
            add_exp(c, ST_INVAL, an, "stride", fmt("%s stride_z %lld < slice", an, (long long)v->stride_z));
        }
        return 1;
    }
    case MU_STRIDE_HUGE: {
        if (c->strided[role]++) return 0;
        if (!sane_view(v)) return 0;
        if (trng_below(r, 2)) {
            static const int64_t big[] = {INT64_MAX, INT64_MAX / 2 + 1, (int64_t)1 << 62};
            v->stride_y = big[trng_below(r, 3)];
            /* with one row (and explicit stride_z or one slice) stride_y is never used */
            int unused = v->height == 1 && (v->depth == 1 || v->stride_z);
            add_exp(c, unused ? ST_OK | ST_INVAL : ST_INVAL, an, "stride", fmt("%s stride_y %lld", an, (long long)v->stride_y));
        } else {
            static const int64_t big[] = {INT64_MAX, INT64_MAX / 3, (int64_t)1 << 62};
            v->stride_z = big[trng_below(r, 3)];
            add_exp(c, v->depth == 1 ? ST_OK | ST_INVAL : ST_INVAL, an, "stride",
                    fmt("%s stride_z %lld", an, (long long)v->stride_z));
        }
        return 1;
    }
    case MU_STRIDE_UNUSED: {
        if (c->strided[role]++) return 0;
        /* a stride that addresses no pixel: stride_z of one slice, stride_y of one row */
        if (!sane_view(v)) return 0;
        if (v->depth == 1 && trng_below(r, 2)) {
            v->stride_z = 1 + trng_below(r, 50);
            add_exp(c, ST_OK | ST_INVAL, an, "stride", fmt("%s stride_z %lld on one slice", an, (long long)v->stride_z));
        } else if (v->height == 1 && v->depth == 1) {
            v->stride_y = v->width + trng_below(r, 50);
            add_exp(c, ST_OK | ST_INVAL, an, "stride", fmt("%s stride_y %lld on one row", an, (long long)v->stride_y));
        } else {
            return 0;
        }
        return 1;
    }
    case MU_CONN: {
        if (c->op == OP_EDT) return 0;
        static const int bad[] = {-1, 0, 1, 2, 3, 5, 7, 9, 10, 12, 25, 27, 28, INT_MIN, INT_MAX};
        c->conn = bad[trng_below(r, 15)];
        add_exp(c, ST_INVAL, NULL, "connectivity", fmt("connectivity %d", c->conn));
        return 1;
    }
    case MU_CONN_2D:
        if (c->op == OP_EDT || c->d.d < 2) return 0;
        c->conn = trng_below(r, 2) ? 4 : 8;
        add_exp(c, ST_INVAL, NULL, "connectivity", fmt("connectivity %d on a 3D image", c->conn));
        return 1;
    case MU_MODE: {
        if (c->op != OP_RECON) return 0;
        static const int bad[] = {-1, 2, 3, 99, INT_MIN, INT_MAX};
        int b = bad[trng_below(r, 6)];
        c->mode = (iwpp_morph_mode)b;
        add_exp(c, ST_INVAL, NULL, "mode", fmt("mode %d", b));
        return 1;
    }
    case MU_METHOD: {
        if (c->op != OP_EDT) return 0;
        static const int bad[] = {-1, 2, 3, 99, INT_MIN, INT_MAX};
        int b = bad[trng_below(r, 6)];
        c->method = (iwpp_edt_method)b;
        add_exp(c, ST_INVAL, NULL, "method", fmt("method %d", b));
        return 1;
    }
    case MU_SPACING: {
        if (c->op != OP_EDT) return 0;
        static const double bad[] = {NAN, -NAN, 0.0, -0.0, -1.0, -1e-300, INFINITY, -INFINITY, 1e-200,
                                     1e-151, DBL_MIN, 4.9e-324, 1e39, 1e200, DBL_MAX, 1e-76, 1e-100, 1e-140};
        int axis = (int)trng_below(r, 3);
        double b = bad[trng_below(r, 18)];
        c->sp_null = 0;
        c->sp[axis] = b;
        add_exp(c, ST_INVAL, NULL, "spacing", fmt("spacing[%d] = %g", axis, b));
        return 1;
    }
    case MU_H: {
        if (c->op != OP_HMAX && c->op != OP_HMIN) return 0;
        static const double bad[] = {-1, -0.5, -1e-300, -INFINITY, INFINITY, NAN, -NAN, -DBL_MAX};
        c->h = bad[trng_below(r, 8)];
        add_exp(c, ST_INVAL, NULL, "h$", fmt("h = %g", c->h));
        return 1;
    }
    case MU_RADIUS: {
        if (c->op != OP_OPEN && c->op != OP_CLOSE) return 0;
        static const int bad[] = {-1, -2, INT_MIN, 100001, INT_MAX, 1 << 30};
        c->radius = bad[trng_below(r, 6)];
        add_exp(c, ST_INVAL, NULL, "radius", fmt("radius %d", c->radius));
        return 1;
    }
    case MU_NAN: {
        if (!is_input || t->v.type != IWPP_F32) return 0;
        static const uint32_t nans[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xffbfffffu, 0x7fffffffu};
        uint32_t bits = nans[trng_below(r, 5)];
        int64_t x = trng_below(r, c->d.w), y = trng_below(r, c->d.h), z = trng_below(r, c->d.d);
        memcpy(t->alloc + pixel_offset(t, x, y, z), &bits, sizeof bits);
        add_exp(c, ST_INVAL, an, "nan", fmt("%s has NaN 0x%08x", an, (unsigned)bits));
        return 1;
    }
    case MU_INF: /* +-inf are valid values for every operation (kill borders too, since issue 15) */
        return 0;
    }
    return 0;
}

static void check_untouched(rcase *c, const char *what)
{
    static const char *const who[3] = {"the input", "the output", "nearest_out"};
    for (int i = 0; i < 3; ++i)
        if (c->t[i].alloc && !timg_bytes_equal(&c->t[i], c->snap[i]))
            report("%s: %s was written although the call failed", what, who[i]);
}

/* A successful random call: inputs unchanged, nothing outside the outputs written, values. */
static void check_success(rcase *c, const args *a, const char *what)
{
    if (!timg_bytes_equal(&c->t[0], c->snap[0])) report("%s: the input was modified", what);
    for (int i = 1; i < 3; ++i)
        if (c->t[i].alloc && !timg_padding_intact(&c->t[i])) report("%s: a call wrote outside its output view", what);
    const double one[3] = {1, 1, 1};
    if (c->op == OP_EDT) {
        if (check_edt_values(c->vin, c->d, c->sp_null ? one : c->sp, c->method, &c->t[1],
                             c->t[2].alloc ? &c->t[2] : NULL, what))
            return;
    } else {
        double *exp = vol_alloc(c->d);
        oracle_op(c->op, c->type, c->d, c->vin, c->vmk, c->conn, c->mode, c->h, c->radius, exp);
        int bad = check_values(&c->t[1], exp, what);
        free(exp);
        if (bad) return;
    }
    check_against_ref(c->op, a, c->type, c->d, c->vin, c->vmk, &c->t[1], what);
}

static const char *describe(const rcase *c)
{
    const char *extra = c->op == OP_RECON ? fmt(" mode=%d", (int)c->mode)
                        : c->op == OP_EDT ? fmt(" method=%d spacing=%s(%g,%g,%g)%s", (int)c->method,
                                                c->sp_null ? "NULL" : "", c->sp[0], c->sp[1], c->sp[2],
                                                c->t[2].alloc ? " +nearest" : "")
                        : (c->op == OP_HMAX || c->op == OP_HMIN) ? fmt(" h=%g", c->h)
                        : (c->op == OP_OPEN || c->op == OP_CLOSE) ? fmt(" radius=%d", c->radius)
                                                                  : "";
    char muts[400] = "";
    for (int i = 0; i < c->ne; ++i) {
        strncat(muts, i ? ", " : " [", sizeof muts - strlen(muts) - 1);
        strncat(muts, c->e[i].label, sizeof muts - strlen(muts) - 1);
    }
    if (c->ne) strncat(muts, "]", sizeof muts - strlen(muts) - 1);
    return fmt("%s %s %s conn=%d%s%s", OPNAME[c->op], iwpp_type_name(c->type), dims_str(c->d), c->conn, extra, muts);
}

/* Set while the context has a memory budget: a valid call may then be refused for it. */
static int g_budget;
static double g_op_time[OP_N][2];
static long g_op_count[OP_N][2];

static void run_random_call(trng *r, iwpp_context *ctx, const char *cfg, long index)
{
    rcase c;
    rcase_init(&c, r, ctx);
    int64_t k = trng_below(r, 20);
    int nm = k < 4 ? 0 : k < 17 ? 1 : k < 19 ? 2 : 3;
    for (int m = 0, tries = 0; m < nm && tries < 50; ++tries) m += mutate(&c, r);
    for (int i = 0; i < 3; ++i) c.snap[i] = snapshot(&c.t[i]);
    args a = {c.null_ctx ? NULL : ctx,
              c.null_view[0] ? NULL : &c.v[0],
              c.null_view[1] ? NULL : &c.v[1],
              c.t[2].alloc ? &c.v[2] : NULL,
              c.conn,
              c.mode,
              c.method,
              c.sp_null ? NULL : c.sp,
              c.h,
              c.radius};
    iwpp_stats before, after;
    iwpp_context_stats(ctx, &before);
    double t0 = now_s();
    iwpp_status st = call_op(c.op, &a);
    g_op_time[c.op][st == IWPP_OK] += now_s() - t0;
    g_op_count[c.op][st == IWPP_OK]++;
    char what[720]; /* fmt()'s buffers rotate: keep a copy */
    snprintf(what, sizeof what, "random call %ld: %s [%s]", index, describe(&c), cfg);
    int hard = 0;
    for (int i = 0; i < c.ne; ++i) hard |= !(c.e[i].mask & ST_OK);
    if (st == IWPP_OK) {
        if (hard) {
            report("%s: returned IWPP_OK although an argument is wrong", what);
            /* an accepted bad view may have been written through: nothing more to compare */
        } else {
            check_success(&c, &a, what);
        }
        rcase_free(&c);
        return;
    }
    const char *msg = c.null_ctx ? "" : iwpp_error_message(ctx);
    if (!hard && g_budget && (st == IWPP_EUNSUPPORTED || st == IWPP_ENOMEM) && mentions(msg, "budget|memory")) {
        check_untouched(&c, what); /* e.g. the GPUs' Danielsson EDT does not go by tiles */
        rcase_free(&c);
        return;
    }
    int matched = 0;
    for (int i = 0; i < c.ne && !matched; ++i)
        matched = (c.e[i].mask & BIT(st)) &&
                  (c.null_ctx || (strlen(msg) >= 8 && mentions(msg, c.e[i].arg) && mentions(msg, c.e[i].topic)));
    if (!matched) report("%s: returned %s: \"%s\" (not an expected status or message)", what, iwpp_status_name(st), msg);
    check_untouched(&c, what);
    iwpp_context_stats(ctx, &after);
    if (memcmp(&before, &after, sizeof before)) report("%s: a refused call changed the stats", what);
    rcase_free(&c);
}

static void test_random_sweep(void **state)
{
    (void)state;
    g_fails = 0;
    long n = env_long("IWPP_BADINPUT_CALLS", 6000);
    trng r;
    trng_seed(&r, (uint64_t)env_long("IWPP_BADINPUT_SEED", 10));
    long calls0 = g_calls;
    double t0 = now_s();
    for (long i = 0; i < n; ++i) run_random_call(&r, g_cfg[i % g_ncfg].ctx, g_cfg[i % g_ncfg].name, i);
    print_message("random sweep: %ld calls (%ld with the reference) in %.1f s\n", n, g_calls - calls0, now_s() - t0);
    for (int op = 0; op < OP_N; ++op)
        print_message("  %-26s refused %5ld in %6.2f s, ran %5ld in %6.2f s\n", OPNAME[op], g_op_count[op][0],
                      g_op_time[op][0], g_op_count[op][1], g_op_time[op][1]);
    assert_int_equal(g_fails, 0);
}

/* ------------------------------------------------------------------ shared memory */

/* Views with a byte offset into one buffer; every offset a multiple of 8 (alignment). */
typedef struct mview {
    iwpp_image v;
    size_t off;  /* bytes */
    int64_t sy, sz;
} mview;

static size_t mview_extent(const mview *m)
{
    return (size_t)((m->v.depth - 1) * m->sz + (m->v.height - 1) * m->sy + m->v.width) * iwpp_type_size(m->v.type);
}

static void mview_make(mview *m, iwpp_type t, odims d, trng *r)
{
    memset(m, 0, sizeof *m);
    int padded = (int)trng_below(r, 2);
    m->sy = d.w + (padded ? trng_below(r, 3) : 0);
    m->sz = m->sy * d.h + (padded ? trng_below(r, 4) : 0);
    m->v.type = t;
    m->v.width = d.w;
    m->v.height = d.h;
    m->v.depth = d.d;
    m->v.stride_y = padded ? m->sy : 0;
    m->v.stride_z = padded ? m->sz : 0;
}

static size_t mview_pix(const mview *m, int64_t x, int64_t y, int64_t z)
{
    return m->off + (size_t)(x + y * m->sy + z * m->sz) * iwpp_type_size(m->v.type);
}

static void mview_write(unsigned char *mem, const mview *m, const double *v)
{
    odims d = {m->v.width, m->v.height, m->v.depth};
    for (int64_t z = 0; z < d.d; ++z)
        for (int64_t y = 0; y < d.h; ++y)
            for (int64_t x = 0; x < d.w; ++x) {
                double a = v[x + d.w * (y + d.h * z)];
                unsigned char *p = mem + mview_pix(m, x, y, z);
                switch (m->v.type) {
                case IWPP_U8: *p = (uint8_t)a; break;
                case IWPP_U16: { uint16_t u = (uint16_t)a; memcpy(p, &u, 2); break; }
                case IWPP_F32: { float f = (float)a; memcpy(p, &f, 4); break; }
                case IWPP_I64: { int64_t i = (int64_t)a; memcpy(p, &i, 8); break; }
                case IWPP_U32: { uint32_t u = (uint32_t)a; memcpy(p, &u, 4); break; }
                }
            }
}

static void mview_read(const unsigned char *mem, const mview *m, double *v)
{
    odims d = {m->v.width, m->v.height, m->v.depth};
    for (int64_t z = 0; z < d.d; ++z)
        for (int64_t y = 0; y < d.h; ++y)
            for (int64_t x = 0; x < d.w; ++x) {
                const unsigned char *p = mem + mview_pix(m, x, y, z);
                double a = 0;
                switch (m->v.type) {
                case IWPP_U8: a = *p; break;
                case IWPP_U16: { uint16_t u; memcpy(&u, p, 2); a = u; break; }
                case IWPP_F32: { float f; memcpy(&f, p, 4); a = f; break; }
                case IWPP_I64: { int64_t i; memcpy(&i, p, 8); a = (double)i; break; }
                case IWPP_U32: { uint32_t u; memcpy(&u, p, 4); a = u; break; }
                }
                v[x + d.w * (y + d.h * z)] = a;
            }
}

/* Mark the bytes of a view's pixels in @p map. */
static void mview_mark(unsigned char *map, const mview *m)
{
    size_t es = iwpp_type_size(m->v.type);
    for (int64_t z = 0; z < m->v.depth; ++z)
        for (int64_t y = 0; y < m->v.height; ++y)
            for (int64_t x = 0; x < m->v.width; ++x) memset(map + mview_pix(m, x, y, z), 1, es);
}

/* One call whose views share one allocation: an output over an input (the very same view,
 * or shifted by a multiple of 8 bytes, maybe with other strides and another type), marker
 * over mask, EDT outputs over the binary or over each other. */
static void run_alias_call(trng *r, iwpp_context *ctx, const char *cfg, long index)
{
    static const iwpp_type types[3] = {IWPP_U8, IWPP_U16, IWPP_F32};
    opkind op = (opkind)trng_below(r, OP_N);
    iwpp_type t = types[trng_below(r, 3)];
    odims d = random_dims(r);
    if (d.w * d.h * d.d > 400) d.h = 400 / d.w > 0 ? 400 / d.w : 1;
    int conn = d.d == 1 ? (trng_below(r, 2) ? 4 : 8) : (trng_below(r, 2) ? 6 : 26);
    iwpp_morph_mode mode = trng_below(r, 2) ? IWPP_BY_EROSION : IWPP_BY_DILATION;
    iwpp_edt_method method = trng_below(r, 2) ? IWPP_EDT_DANIELSSON : IWPP_EDT_EXACT;
    double h = trng_below(r, 2) ? 1.0 : 3.0;
    int radius = (int)trng_below(r, 3);
    int nearest_over_dist = op == OP_EDT && trng_below(r, 4) == 0;
    int with_near = op == OP_EDT && (nearest_over_dist || trng_below(r, 2));

    mview in, out, near;
    mview_make(&in, t, d, r);
    mview_make(&out, out_type(op, t), d, r);
    mview_make(&near, IWPP_I64, d, r);
    size_t ein = mview_extent(&in), eout = mview_extent(&out), enear = mview_extent(&near);
    size_t span = (ein > eout ? ein : eout) / 8 + 2;
    int same = op != OP_EDT && out.v.type == in.v.type && trng_below(r, 4) == 0; /* out == in, one view */
    in.off = 8 * (size_t)trng_below(r, (int64_t)span);
    out.off = same ? in.off : 8 * (size_t)trng_below(r, (int64_t)span);
    if (same) {
        out.v = in.v;
        out.sy = in.sy;
        out.sz = in.sz;
    }
    if (with_near) near.off = nearest_over_dist ? out.off + 8 * (size_t)trng_below(r, (int64_t)(eout / 8 + 1))
                                                : 8 * (size_t)trng_below(r, (int64_t)span);
    if (with_near && !nearest_over_dist && near.off < out.off + eout && out.off < near.off + enear)
        nearest_over_dist = 1; /* drawn over dist_out by chance */
    size_t bytes = in.off + ein;
    if (out.off + eout > bytes) bytes = out.off + eout;
    if (with_near && near.off + enear > bytes) bytes = near.off + enear;
    bytes += 16;
    unsigned char *mem = malloc(bytes), *before = malloc(bytes), *map = calloc(bytes, 1);
    double *vin = vol_alloc(d), *vmk = vol_alloc(d), *exp = vol_alloc(d);
    if (!mem || !before || !map) abort();
    for (size_t i = 0; i < bytes; ++i) mem[i] = (unsigned char)(0xA5 ^ (i * 29));
    if (op == OP_EDT) gen_binary(r, d, 0.6, t == IWPP_F32 ? 2.5 : 1, vin);
    else gen_values(r, t, d, vin, 1);
    mview_write(mem, &in, vin);
    if (op == OP_RECON) {
        gen_values(r, t, d, vmk, 1);
        mview_write(mem, &out, vmk);
        mview_read(mem, &out, vmk); /* what the call sees, after the marker covered the mask */
    }
    mview_read(mem, &in, vin);
    memcpy(before, mem, bytes);
    in.v.data = mem + in.off;
    out.v.data = mem + out.off;
    near.v.data = mem + near.off;
    args a = {ctx, &in.v, &out.v, with_near ? &near.v : NULL, conn, mode, method, NULL, h, radius};
    if (same && trng_below(r, 2)) a.in = a.out; /* the same iwpp_image too */
    iwpp_status st = call_op(op, &a);
    char what[400];
    snprintf(what, sizeof what, "alias call %ld: %s %s %s conn=%d in@%zu out@%zu%s%s [%s]", index, OPNAME[op],
             iwpp_type_name(t), dims_str(d), conn, in.off, out.off, with_near ? fmt(" nearest@%zu", near.off) : "",
             same ? " (out = in)" : "", cfg);
    if (nearest_over_dist) {
        /* outputs over each other have no result to compare: refused, or nothing outside them written */
        if (st != IWPP_OK) {
            expect(ctx, st, ST_INVAL, "nearest_out$|dist_out$", "overlap|share|alias|same", what);
            if (memcmp(mem, before, bytes)) report("%s: written although the call failed", what);
        } else {
            mview_mark(map, &out);
            mview_mark(map, &near);
            for (size_t i = 0; i < bytes; ++i)
                if (!map[i] && mem[i] != before[i]) {
                    report("%s: byte %zu outside both outputs was written", what, i);
                    break;
                }
        }
    } else if (expect(ctx, st, ST_OK, NULL, NULL, what)) {
        mview_mark(map, &out);
        if (with_near) mview_mark(map, &near);
        for (size_t i = 0; i < bytes; ++i)
            if (!map[i] && mem[i] != before[i]) {
                report("%s: byte %zu outside the outputs was written", what, i);
                break;
            }
        /* the result, read back through contiguous copies */
        timg got, gnear;
        memset(&gnear, 0, sizeof gnear);
        if (!timg_init(&got, out.v.type, d, 0, 0) || (with_near && !timg_init(&gnear, IWPP_I64, d, 0, 0))) abort();
        double *tmp = vol_alloc(d);
        mview_read(mem, &out, tmp);
        timg_load(&got, tmp); /* exact: every value read fits its own type */
        if (with_near) {
            mview_read(mem, &near, tmp);
            timg_load(&gnear, tmp);
        }
        free(tmp);
        if (op == OP_EDT) {
            double one[3] = {1, 1, 1};
            check_edt_values(vin, d, one, method, &got, with_near ? &gnear : NULL, what);
        } else {
            oracle_op(op, t, d, vin, vmk, conn, mode, h, radius, exp);
            if (!check_values(&got, exp, what)) check_against_ref(op, &a, t, d, vin, vmk, &got, what);
        }
        timg_free(&got);
        if (with_near) timg_free(&gnear);
    }
    free(mem);
    free(before);
    free(map);
    free(vin);
    free(vmk);
    free(exp);
}

static void test_shared_memory(void **state)
{
    (void)state;
    g_fails = 0;
    long n = env_long("IWPP_BADINPUT_CALLS", 6000) / 5;
    trng r;
    trng_seed(&r, (uint64_t)env_long("IWPP_BADINPUT_SEED", 10) + 1000);
    double t0 = now_s();
    for (long i = 0; i < n; ++i) run_alias_call(&r, g_cfg[i % g_ncfg].ctx, g_cfg[i % g_ncfg].name, i);
    print_message("shared-memory calls: %ld in %.1f s\n", n, now_s() - t0);
    assert_int_equal(g_fails, 0);
}

/* ------------------------------------------------------------------ hand-listed cases */

/* A small valid reconstruction on @p ctx, checked against the oracle; 1 if it is right. */
static int still_works(iwpp_context *ctx, const char *what)
{
    uint8_t mk[12] = {0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0}, ms[12] = {5, 5, 1, 9, 5, 5, 7, 7, 7, 2, 2, 2};
    double vm[12], vk[12];
    for (int i = 0; i < 12; ++i) vm[i] = mk[i], vk[i] = ms[i];
    odims d = {4, 3, 1};
    oracle_reconstruct(vm, vk, d, 8, 0);
    iwpp_image a = iwpp_image_2d(mk, IWPP_U8, 4, 3), b = iwpp_image_2d(ms, IWPP_U8, 4, 3);
    ++g_calls;
    iwpp_status st = iwpp_reconstruct(ctx, &a, &b, 8, IWPP_BY_DILATION);
    for (int i = 0; st == IWPP_OK && i < 12; ++i)
        if (mk[i] != vm[i]) st = IWPP_EINTERNAL;
    if (st != IWPP_OK) {
        report("%s: the context no longer computes right: %s: %s", what, iwpp_status_name(st), iwpp_error_message(ctx));
        return 0;
    }
    return 1;
}

static void test_names_and_devices(void **state)
{
    (void)state;
    g_fails = 0;
    static const int bad_enums[] = {-1, 6, 7, 99, INT_MAX, INT_MIN};
    for (size_t i = 0; i < sizeof bad_enums / sizeof bad_enums[0]; ++i) {
        int b = bad_enums[i];
        g_calls += 5;
        const char *s = iwpp_status_name((iwpp_status)b);
        if (!s || !*s) report("status_name(%d) is empty", b);
        if (iwpp_type_size((iwpp_type)b) != 0) report("type_size(%d) is not 0", b);
        if (strcmp(iwpp_type_name((iwpp_type)b), "unknown")) report("type_name(%d) is not \"unknown\"", b);
        if (strcmp(iwpp_backend_name((iwpp_backend)b), "unknown")) report("backend_name(%d) is not \"unknown\"", b);
        if (iwpp_device_count((iwpp_backend)b) != 0) report("device_count(%d) is not 0", b);
        char reason[64];
        memset(reason, 'Z', sizeof reason);
        ++g_calls;
        if (iwpp_backend_available((iwpp_backend)b, reason, sizeof reason)) report("backend_available(%d) says yes", b);
        else if (!memchr(reason, '\0', sizeof reason) || strlen(reason) < 8)
            report("backend_available(%d) gives no reason (\"%.63s\")", b, reason);
        ++g_calls;
        if (iwpp_backend_available((iwpp_backend)b, NULL, 100)) report("backend_available(%d, NULL) says yes", b);
        iwpp_device_info info, sentinel;
        memset(&info, 0xAB, sizeof info);
        sentinel = info;
        ++g_calls;
        iwpp_status st = iwpp_device_info_get((iwpp_backend)b, 0, &info);
        expect(NULL, st, ST_INVAL | BIT(IWPP_EDEVICE), NULL, NULL, fmt("device_info_get(backend %d)", b));
        if (memcmp(&info, &sentinel, sizeof info)) report("device_info_get(backend %d) wrote its output", b);
    }
    if (iwpp_type_size((iwpp_type)0) != 0 || strcmp(iwpp_type_name((iwpp_type)0), "unknown"))
        report("type 0 is not unknown");
    if (!iwpp_error_message(NULL) || strlen(iwpp_error_message(NULL)) < 8) report("error_message(NULL) is empty");
    if (iwpp_context_backend(NULL) == IWPP_BACKEND_AUTO) report("context_backend(NULL) is AUTO");
    g_calls += 4;

    /* reason buffers of every size, even 0 and 1, with a sentinel after them */
    iwpp_backend kinds[4] = {IWPP_BACKEND_AUTO, IWPP_BACKEND_CPU, IWPP_BACKEND_CUDA, IWPP_BACKEND_OPENCL};
    for (int k = 0; k < 4; ++k)
        for (size_t n = 0; n < 6; ++n) {
            char reason[8];
            memset(reason, 'Z', sizeof reason);
            ++g_calls;
            int ok = iwpp_backend_available(kinds[k], reason, n);
            for (size_t i = n; i < sizeof reason; ++i)
                if (reason[i] != 'Z') {
                    report("backend_available(%s, reason, %zu) wrote past its buffer", iwpp_backend_name(kinds[k]), n);
                    break;
                }
            if (n > 0 && !memchr(reason, '\0', n))
                report("backend_available(%s, reason, %zu) left it unterminated", iwpp_backend_name(kinds[k]), n);
            (void)ok;
        }

    /* device indices */
    iwpp_backend tested[2] = {IWPP_BACKEND_CPU, g_backend};
    for (int k = 0; k < 2; ++k) {
        iwpp_backend be = tested[k];
        int n = iwpp_device_count(be);
        ++g_calls;
        if (n < 1) report("device_count(%s) = %d", iwpp_backend_name(be), n);
        int bad_idx[] = {-1, n, n + 1, INT_MAX, INT_MIN};
        for (int i = 0; i < 5; ++i) {
            iwpp_device_info info, sentinel;
            memset(&info, 0x5C, sizeof info);
            sentinel = info;
            ++g_calls;
            iwpp_status st = iwpp_device_info_get(be, bad_idx[i], &info);
            expect(NULL, st, ST_INVAL | BIT(IWPP_EDEVICE), NULL, NULL,
                   fmt("device_info_get(%s, %d)", iwpp_backend_name(be), bad_idx[i]));
            if (memcmp(&info, &sentinel, sizeof info))
                report("device_info_get(%s, %d) wrote its output", iwpp_backend_name(be), bad_idx[i]);
        }
        ++g_calls;
        expect(NULL, iwpp_device_info_get(be, 0, NULL), ST_INVAL, NULL, NULL,
               fmt("device_info_get(%s, 0, NULL)", iwpp_backend_name(be)));
        iwpp_device_info info;
        memset(&info, 0x5C, sizeof info);
        ++g_calls;
        if (iwpp_device_info_get(be, 0, &info) != IWPP_OK || !memchr(info.name, '\0', sizeof info.name) ||
            !memchr(info.platform, '\0', sizeof info.platform) || info.compute_units < 1)
            report("device_info_get(%s, 0) is not a complete record", iwpp_backend_name(be));
    }
    assert_int_equal(g_fails, 0);
}

static void test_contexts_and_setters(void **state)
{
    (void)state;
    g_fails = 0;
    iwpp_status st;
    ++g_calls;
    expect(NULL, iwpp_context_create(NULL, IWPP_BACKEND_CPU), ST_INVAL, NULL, NULL, "context_create(NULL)");
    ++g_calls;
    expect(NULL, iwpp_context_create(NULL, (iwpp_backend)99), ST_INVAL, NULL, NULL, "context_create(NULL, 99)");
    iwpp_context_destroy(NULL);
    static const int bad_backends[] = {-1, 4, 99, INT_MAX, INT_MIN};
    for (int i = 0; i < 5; ++i) {
        iwpp_context *ctx = (iwpp_context *)&st; /* must be overwritten */
        ++g_calls;
        st = iwpp_context_create(&ctx, (iwpp_backend)bad_backends[i]);
        const char *what = fmt("context_create(backend %d)", bad_backends[i]);
        expect(ctx, st, ST_INVAL, NULL, "backend", what);
        if (ctx == (iwpp_context *)&st) {
            report("%s: *out was not set", what);
        } else if (ctx) {
            if (iwpp_context_backend(ctx) == IWPP_BACKEND_AUTO) report("%s: the context runs on AUTO", what);
            still_works(ctx, what);
            iwpp_context_destroy(ctx);
        }
    }

    /* setters, on the test's contexts and on a fresh CPU context */
    iwpp_context *cpu = NULL;
    if (iwpp_context_create(&cpu, IWPP_BACKEND_CPU) != IWPP_OK) report("cannot create a CPU context");
    for (int k = -1; k < g_ncfg && cpu; ++k) {
        iwpp_context *ctx = k < 0 ? cpu : g_cfg[k].ctx;
        const char *cfg = k < 0 ? "fresh cpu" : g_cfg[k].name;
        iwpp_stats s0, s1;
        still_works(ctx, cfg);
        iwpp_context_stats(ctx, &s0);
        g_calls += 6;
        expect(NULL, iwpp_context_set_threads(NULL, 1), ST_INVAL, NULL, NULL, "set_threads(NULL)");
        expect(NULL, iwpp_context_set_tile_size(NULL, 64), ST_INVAL, NULL, NULL, "set_tile_size(NULL)");
        expect(NULL, iwpp_context_set_queue_capacity(NULL, 0), ST_INVAL, NULL, NULL, "set_queue_capacity(NULL)");
        expect(NULL, iwpp_context_set_algorithm(NULL, IWPP_ALGO_AUTO), ST_INVAL, NULL, NULL, "set_algorithm(NULL)");
        expect(NULL, iwpp_context_set_queue_variant(NULL, IWPP_QUEUE_MULTILEVEL), ST_INVAL, NULL, NULL,
               "set_queue_variant(NULL)");
        expect(NULL, iwpp_context_set_device(NULL, 0), ST_INVAL, NULL, NULL, "set_device(NULL)");
        static const int bad_threads[] = {-1, -2, INT_MIN, IWPP_MAX_THREADS + 1, 4096, 100000, INT_MAX};
        for (int i = 0; i < 7; ++i) {
            ++g_calls;
            st = iwpp_context_set_threads(ctx, bad_threads[i]);
            expect(ctx, st, ST_INVAL, NULL, "thread", fmt("set_threads(%d) [%s]", bad_threads[i], cfg));
            if (st == IWPP_OK) iwpp_context_set_threads(ctx, k < 0 ? 1 : g_cfg[k].threads); /* never run it */
        }
        static const int64_t bad_tiles[] = {3, 0, -1, -64, INT64_MIN, ((int64_t)1 << 20) + 1, INT64_MAX};
        for (int i = 0; i < 7; ++i) {
            ++g_calls;
            expect(ctx, iwpp_context_set_tile_size(ctx, bad_tiles[i]), ST_INVAL, NULL, "tile",
                   fmt("set_tile_size(%lld) [%s]", (long long)bad_tiles[i], cfg));
        }
        static const int64_t bad_caps[] = {-1, -4096, INT64_MIN};
        for (int i = 0; i < 3; ++i) {
            ++g_calls;
            expect(ctx, iwpp_context_set_queue_capacity(ctx, bad_caps[i]), ST_INVAL, NULL, "capacity|queue",
                   fmt("set_queue_capacity(%lld) [%s]", (long long)bad_caps[i], cfg));
        }
        static const int bad_e[] = {-1, 3, 4, 99, INT_MAX, INT_MIN};
        for (int i = 0; i < 6; ++i) {
            g_calls += 2;
            expect(ctx, iwpp_context_set_algorithm(ctx, (iwpp_algorithm)bad_e[i]), ST_INVAL, NULL, "algorithm",
                   fmt("set_algorithm(%d) [%s]", bad_e[i], cfg));
            expect(ctx, iwpp_context_set_queue_variant(ctx, (iwpp_queue_variant)bad_e[i]), ST_INVAL, NULL,
                   "variant|queue", fmt("set_queue_variant(%d) [%s]", bad_e[i], cfg));
        }
        g_calls += 2;
        expect(ctx, iwpp_context_stats(ctx, NULL), ST_INVAL, NULL, "stats|out|null", fmt("context_stats(ctx, NULL) [%s]", cfg));
        expect(NULL, iwpp_context_stats(NULL, &s1), ST_INVAL, NULL, NULL, "context_stats(NULL, out)");
        iwpp_context_stats(ctx, &s1);
        if (memcmp(&s0, &s1, sizeof s0)) report("refused setters changed the stats [%s]", cfg);
        still_works(ctx, fmt("after refused setters [%s]", cfg));
    }
    /* device indices on a CPU context (one device): refused, and the context keeps working */
    static const int bad_dev[] = {-1, INT_MIN, 1, 2, INT_MAX};
    for (int i = 0; i < 5 && cpu; ++i) {
        ++g_calls;
        st = iwpp_context_set_device(cpu, bad_dev[i]);
        expect(cpu, st, ST_INVAL | BIT(IWPP_EDEVICE), NULL, "device", fmt("cpu set_device(%d)", bad_dev[i]));
        still_works(cpu, fmt("cpu after set_device(%d)", bad_dev[i]));
    }
    if (g_backend != IWPP_BACKEND_CPU) {
        int n = iwpp_device_count(g_backend);
        ++g_calls;
        st = iwpp_context_set_device(g_cfg[0].ctx, n);
        expect(g_cfg[0].ctx, st, ST_INVAL | BIT(IWPP_EDEVICE), NULL, "device", fmt("set_device(%d) [%s]", n, g_cfg[0].name));
        if (iwpp_context_backend(g_cfg[0].ctx) != g_backend) report("a refused set_device left the %s backend", iwpp_backend_name(g_backend));
        still_works(g_cfg[0].ctx, "after a refused set_device");
    }
    iwpp_context_destroy(cpu);
    assert_int_equal(g_fails, 0);
}

/* Valid extremes of the settings: results still exact. */
static void test_setting_extremes(void **state)
{
    (void)state;
    g_fails = 0;
    iwpp_context *cpu = NULL;
    if (iwpp_context_create(&cpu, IWPP_BACKEND_CPU) != IWPP_OK) {
        report("cannot create a CPU context");
        assert_int_equal(g_fails, 0);
        return;
    }
    /* the largest thread count, with many tiles, runs and is exact */
    odims d = {64, 48, 1};
    trng r;
    trng_seed(&r, 77);
    double *mk = vol_alloc(d), *ms = vol_alloc(d), *exp = vol_alloc(d);
    gen_random(&r, IWPP_U16, d, 256, ms);
    gen_random(&r, IWPP_U16, d, 256, mk);
    memcpy(exp, mk, (size_t)odims_count(d) * sizeof *exp);
    oracle_reconstruct(exp, ms, d, 8, 0);
    timg a, b;
    if (!timg_init(&a, IWPP_U16, d, 0, 0) || !timg_init(&b, IWPP_U16, d, 0, 0)) abort();
    timg_load(&b, ms);
    struct {
        int threads;
        int64_t tile;
    } set[] = {{IWPP_MAX_THREADS, 4}, {1, 4}, {3, (int64_t)1 << 20}, {0, 4}, {2, 5}};
    for (size_t i = 0; i < sizeof set / sizeof set[0]; ++i) {
        const char *what = fmt("threads %d, tile %lld", set[i].threads, (long long)set[i].tile);
        g_calls += 3;
        if (!expect(cpu, iwpp_context_set_threads(cpu, set[i].threads), ST_OK, NULL, NULL, what) ||
            !expect(cpu, iwpp_context_set_tile_size(cpu, set[i].tile), ST_OK, NULL, NULL, what))
            continue;
        timg_load(&a, mk);
        if (expect(cpu, iwpp_reconstruct(cpu, &a.v, &b.v, 8, IWPP_BY_DILATION), ST_OK, NULL, NULL, what))
            check_values(&a, exp, what);
    }
    /* GPU settings: every algorithm and queue variant, a queue of 1 item (overflow re-runs) and
     * capacities far beyond any memory: exact, or refused with a message */
    for (int c = 0; c < g_ncfg; ++c) {
        iwpp_context *ctx = g_cfg[c].ctx;
        /* beyond INT32_MAX the backends' queue sizes would wrap (2^62 gave a wrong result) */
        static const int64_t caps[] = {1, 7, INT32_MAX, INT64_MAX, (int64_t)1 << 62, (int64_t)1 << 40,
                                       (int64_t)1 << 32, (int64_t)INT32_MAX + 1};
        for (int i = 0; i < 8; ++i) {
            const char *what = fmt("queue capacity %lld [%s]", (long long)caps[i], g_cfg[c].name);
            g_calls += 2;
            iwpp_status st = iwpp_context_set_queue_capacity(ctx, caps[i]);
            if (!expect(ctx, st, caps[i] <= INT32_MAX ? ST_OK : ST_INVAL, NULL, "capacity|queue", what)) continue;
            timg_load(&a, mk);
            st = iwpp_reconstruct(ctx, &a.v, &b.v, 8, IWPP_BY_DILATION);
            if (expect(ctx, st, ST_OK | BIT(IWPP_ENOMEM) | ST_INVAL, NULL, "capacity|queue|memory", what))
                check_values(&a, exp, what);
        }
        iwpp_context_set_queue_capacity(ctx, 0);
        if (g_backend == IWPP_BACKEND_CPU) continue;
        for (int al = 0; al < 3; ++al)
            for (int qv = 0; qv < 3; ++qv) {
                const char *what = fmt("algorithm %d, queue variant %d [%s]", al, qv, g_cfg[c].name);
                g_calls += 3;
                if (!expect(ctx, iwpp_context_set_algorithm(ctx, (iwpp_algorithm)al), ST_OK, NULL, NULL, what) ||
                    !expect(ctx, iwpp_context_set_queue_variant(ctx, (iwpp_queue_variant)qv), ST_OK, NULL, NULL, what))
                    continue;
                timg_load(&a, mk);
                iwpp_status st = iwpp_reconstruct(ctx, &a.v, &b.v, 8, IWPP_BY_DILATION);
                if (expect(ctx, st, ST_OK | ST_UNSUP, NULL, NULL, what) && st == IWPP_OK) check_values(&a, exp, what);
            }
        iwpp_context_set_algorithm(ctx, g_cfg[c].algorithm);
        iwpp_context_set_queue_variant(ctx, g_cfg[c].queue_variant);
    }
    /* the largest radius on a tiny image */
    {
        float px[6] = {1, 5, 2, 8, 3, 4}, out[6];
        double v[6] = {1, 5, 2, 8, 3, 4}, e[6];
        odims d6 = {3, 2, 1};
        for (int op = 0; op < 2; ++op) {
            oracle_open_close(v, d6, 100000, 8, !op, e);
            for (int c = 0; c < g_ncfg; ++c) {
                iwpp_image in = iwpp_image_2d(px, IWPP_F32, 3, 2), o = iwpp_image_2d(out, IWPP_F32, 3, 2);
                ++g_calls;
                iwpp_status st = op ? iwpp_closing_by_reconstruction(g_cfg[c].ctx, &in, 100000, 8, &o)
                                    : iwpp_opening_by_reconstruction(g_cfg[c].ctx, &in, 100000, 8, &o);
                const char *what = fmt("%s radius 100000 [%s]", op ? "closing" : "opening", g_cfg[c].name);
                if (expect(g_cfg[c].ctx, st, ST_OK, NULL, NULL, what))
                    for (int i = 0; i < 6; ++i)
                        if (out[i] != (float)e[i]) {
                            report("%s: pixel %d is %g, expected %g", what, i, out[i], e[i]);
                            break;
                        }
            }
        }
    }
    timg_free(&a);
    timg_free(&b);
    free(mk);
    free(ms);
    free(exp);
    iwpp_context_destroy(cpu);
    assert_int_equal(g_fails, 0);
}

/* iwpp_image_2d / 3d with sizes whose product overflows: a view every operation refuses. */
static void test_image_views(void **state)
{
    (void)state;
    g_fails = 0;
    static const int64_t sizes[][3] = {{INT64_MAX, 2, 1},
                                       {2, INT64_MAX, 1},
                                       {(int64_t)1 << 32, (int64_t)1 << 32, 1},
                                       {(int64_t)1 << 21, (int64_t)1 << 21, (int64_t)1 << 22},
                                       {INT64_MAX, INT64_MAX, INT64_MAX},
                                       {-1, INT64_MIN, 1},
                                       {INT64_MIN, -1, 1},
                                       {INT64_MIN, INT64_MIN, 1},
                                       {3, (int64_t)1 << 62, 4},
                                       {-((int64_t)1 << 40), (int64_t)1 << 40, 1},
                                       {(int64_t)1 << 40, -((int64_t)1 << 40), 2},
                                       {0, INT64_MAX, 1},
                                       {-3, 4, 1},
                                       {4, 3, 0},
                                       {4, 3, -2}};
    uint8_t px[64];
    memset(px, 7, sizeof px);
    timg o8, of;
    odims d = {4, 3, 1};
    if (!timg_init(&o8, IWPP_U8, d, 0, 0) || !timg_init(&of, IWPP_F32, d, 0, 0)) abort();
    unsigned char *s8 = snapshot(&o8), *sf = snapshot(&of), pxs[64];
    memcpy(pxs, px, sizeof px);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        const int64_t *s = sizes[i];
        for (int two_d = 0; two_d < 2; ++two_d) {
            if (two_d && s[2] != 1) continue;
            iwpp_image v = two_d ? iwpp_image_2d(px, IWPP_U8, s[0], s[1]) : iwpp_image_3d(px, IWPP_U8, s[0], s[1], s[2]);
            ++g_calls;
            if (v.width != s[0] || v.height != s[1] || v.depth != s[2])
                print_message("note: image_%dd(%lld, %lld, %lld) gives a %lldx%lldx%lld view\n", two_d ? 2 : 3,
                              (long long)s[0], (long long)s[1], (long long)s[2], (long long)v.width,
                              (long long)v.height, (long long)v.depth);
            for (int c = 0; c < g_ncfg; ++c) {
                iwpp_context *ctx = g_cfg[c].ctx;
                const char *what = fmt("image_%dd(%lld, %lld, %lld) [%s]", two_d ? 2 : 3, (long long)s[0],
                                       (long long)s[1], (long long)s[2], g_cfg[c].name);
                iwpp_image m = v;
                int conn = s[2] == 1 ? 8 : 26;
                ++g_calls;
                expect(ctx, iwpp_reconstruct(ctx, &m, &v, conn, IWPP_BY_DILATION), ST_INVAL, NULL, SIZE_TOPIC,
                       fmt("reconstruct, marker = mask = %s", what));
                ++g_calls;
                expect(ctx, iwpp_fill_holes(ctx, &v, conn, &o8.v), ST_INVAL, NULL, SIZE_TOPIC, fmt("fill_holes in = %s", what));
                ++g_calls;
                expect(ctx, iwpp_distance_transform(ctx, &v, IWPP_EDT_EXACT, NULL, &of.v, NULL), ST_INVAL, NULL,
                       SIZE_TOPIC, fmt("distance_transform binary = %s", what));
                iwpp_image ov = two_d ? iwpp_image_2d(of.v.data, IWPP_F32, s[0], s[1])
                                      : iwpp_image_3d(of.v.data, IWPP_F32, s[0], s[1], s[2]);
                iwpp_image b = o8.v;
                ++g_calls;
                expect(ctx, iwpp_distance_transform(ctx, &b, IWPP_EDT_DANIELSSON, NULL, &ov, NULL), ST_INVAL, NULL,
                       SIZE_TOPIC, fmt("distance_transform dist_out = %s", what));
                if (!timg_bytes_equal(&o8, s8) || !timg_bytes_equal(&of, sf) || memcmp(px, pxs, sizeof px))
                    report("%s: a buffer was written", what);
            }
        }
    }
    /* valid constructions address the pixels the API documents */
    uint8_t p3[2 * 3 * 4];
    for (int i = 0; i < 24; ++i) p3[i] = (uint8_t)i;
    iwpp_image v = iwpp_image_3d(p3, IWPP_U8, 4, 3, 2);
    g_calls += 2;
    if (v.data != p3 || v.type != IWPP_U8 || v.width != 4 || v.height != 3 || v.depth != 2 ||
        (v.stride_y && v.stride_y != 4) || (v.stride_z && v.stride_z != 12))
        report("image_3d(4, 3, 2) is not a contiguous view");
    v = iwpp_image_2d(NULL, IWPP_F32, 1, 1);
    if (v.depth != 1 || v.width != 1 || v.height != 1) report("image_2d(1, 1) is not 1x1x1");
    ++g_calls;
    expect(g_cfg[0].ctx, iwpp_fill_holes(g_cfg[0].ctx, &v, 4, &of.v), ST_INVAL, "in$", "null|data", "image_2d(NULL data)");
    timg_free(&o8);
    timg_free(&of);
    free(s8);
    free(sf);
    assert_int_equal(g_fails, 0);
}

/* EDT spacings at the edges of what is allowed; -1 only without background. */
static void test_edt_spacing(void **state)
{
    (void)state;
    g_fails = 0;
    struct {
        odims d;
        double sp[3];
        unsigned want;
    } cases[] = {
        {{5, 4, 1}, {1e200, 1, 1}, ST_INVAL},
        {{5, 4, 1}, {1, 1e200, 1}, ST_INVAL},
        {{5, 4, 1}, {1, 1, 1e200}, ST_INVAL | ST_OK}, /* one slice: z never counts */
        {{3, 3, 3}, {1, 1, 1e200}, ST_INVAL},
        {{5, 4, 1}, {1e39, 1, 1}, ST_INVAL},
        {{5, 4, 1}, {3e38, 3e38, 1}, ST_INVAL},
        {{5, 4, 1}, {DBL_MAX, DBL_MAX, 1}, ST_INVAL},
        {{5, 4, 1}, {1e-200, 1, 1}, ST_INVAL},
        {{5, 4, 1}, {1, 1e-151, 1}, ST_INVAL},
        {{5, 4, 1}, {1, 1, 4.9e-324}, ST_INVAL},
        {{5, 4, 1}, {1e-140, 1, 1}, ST_INVAL},
        {{64, 16, 1}, {1e-100, 1e-100, 1e-100}, ST_INVAL},
        {{5, 4, 1}, {1e-76, 1, 1}, ST_INVAL},
        {{5, 4, 1}, {1e-74, 1, 1}, ST_OK},
        {{64, 16, 1}, {1e-74, 1e-74, 1e-74}, ST_OK}, /* h^4 (the envelope's products) still normal */
        {{9, 7, 5}, {1e-74, 1e-74, 1e-74}, ST_OK},
        {{5, 4, 1}, {1e18, 1e18, 1}, ST_OK},
        {{5, 4, 2}, {1e30, 2e30, 1e30}, ST_OK},
        {{1, 1, 7}, {1, 1, 1e30}, ST_OK},
        {{9, 1, 1}, {1e36, 1, 1}, ST_OK},
        {{5, 4, 1}, {-0.0, 1, 1}, ST_INVAL},
        {{5, 4, 1}, {1, NAN, 1}, ST_INVAL},
        {{5, 4, 1}, {1, 1, -INFINITY}, ST_INVAL},
    };
    trng r;
    trng_seed(&r, 99);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        odims d = cases[i].d;
        for (int bg = 0; bg < 3; ++bg) { /* some background, one background pixel, none */
            double *bin = vol_alloc(d);
            gen_binary(&r, d, bg == 0 ? 0.6 : 1.0, 1.0, bin);
            if (bg == 1) bin[trng_below(&r, odims_count(d))] = 0;
            for (int c = 0; c < g_ncfg; ++c)
                for (int m = 0; m < 2; ++m) {
                    iwpp_context *ctx = g_cfg[c].ctx;
                    timg b, dist, near;
                    if (!timg_init(&b, IWPP_U8, d, 0, 0) || !timg_init(&dist, IWPP_F32, d, 1, 0) ||
                        !timg_init(&near, IWPP_I64, d, 0, 2))
                        abort();
                    timg_load(&b, bin);
                    unsigned char *sd = snapshot(&dist), *sn = snapshot(&near);
                    const char *what = fmt("EDT %s %s spacing (%g, %g, %g), %s [%s]", m ? "danielsson" : "exact",
                                           dims_str(d), cases[i].sp[0], cases[i].sp[1], cases[i].sp[2],
                                           bg == 0 ? "background" : bg == 1 ? "one background pixel" : "no background",
                                           g_cfg[c].name);
                    ++g_calls;
                    iwpp_edt_method method = m ? IWPP_EDT_DANIELSSON : IWPP_EDT_EXACT;
                    iwpp_status st = iwpp_distance_transform(ctx, &b.v, method, cases[i].sp, &dist.v, &near.v);
                    if (expect(ctx, st, cases[i].want, NULL, "spacing", what)) {
                        if (!timg_padding_intact(&dist) || !timg_padding_intact(&near))
                            report("%s: wrote outside the outputs", what);
                        else
                            check_edt_values(bin, d, cases[i].sp, method, &dist, &near, what);
                    } else if (!timg_bytes_equal(&dist, sd) || !timg_bytes_equal(&near, sn)) {
                        report("%s: an output was written although the call failed", what);
                    }
                    free(sd);
                    free(sn);
                    timg_free(&b);
                    timg_free(&dist);
                    timg_free(&near);
                }
            free(bin);
        }
    }
    assert_int_equal(g_fails, 0);
}

/* F32 inputs made of one special value, and h that turns into +inf as a float. */
static void test_special_floats(void **state)
{
    (void)state;
    g_fails = 0;
    static const double specials[] = {-0.0, 0.0, INFINITY, -INFINITY, FLT_MAX, -FLT_MAX, FLT_TRUE_MIN, -FLT_TRUE_MIN};
    odims dims[] = {{1, 1, 1}, {7, 1, 1}, {1, 7, 1}, {1, 1, 6}, {9, 7, 1}, {3, 3, 3}}; /* in GPU_SHAPES */
    for (size_t s = 0; s < sizeof specials / sizeof specials[0]; ++s)
        for (size_t k = 0; k < sizeof dims / sizeof dims[0]; ++k) {
            odims d = dims[k];
            double *v = vol_alloc(d), *exp = vol_alloc(d);
            gen_const(d, specials[s], v);
            v[odims_count(d) / 2] = specials[(s + 3) % 8]; /* one other value in the middle */
            for (int op = 0; op < OP_N; ++op) {
                if (op == OP_EDT) continue;
                int conn = d.d > 1 ? 26 : 8;
                for (int c = 0; c < g_ncfg; ++c) {
                    timg in, out;
                    if (!timg_init(&in, IWPP_F32, d, 1, 1) || !timg_init(&out, out_type((opkind)op, IWPP_F32), d, 0, 0)) abort();
                    timg_load(&in, v);
                    if (op == OP_RECON) timg_load(&out, v); /* marker = mask */
                    unsigned char *so = snapshot(&out);
                    args a = {g_cfg[c].ctx, &in.v, &out.v, NULL, conn, IWPP_BY_DILATION, IWPP_EDT_EXACT, NULL, 2.0, 1};
                    const char *what = fmt("%s on f32 %s of %g with %g [%s]", OPNAME[op], dims_str(d), specials[s],
                                           specials[(s + 3) % 8], g_cfg[c].name);
                    iwpp_status st = call_op((opkind)op, &a);
                    if (expect(g_cfg[c].ctx, st, ST_OK, NULL, NULL, what)) {
                        oracle_op((opkind)op, IWPP_F32, d, v, v, conn, IWPP_BY_DILATION, 2.0, 1, exp);
                        if (!check_values(&out, exp, what)) check_against_ref((opkind)op, &a, IWPP_F32, d, v, v, &out, what);
                    }
                    free(so);
                    timg_free(&in);
                    timg_free(&out);
                }
            }
            free(v);
            free(exp);
        }
    /* h finite as a double but +inf as a float, on an image holding +inf (h-maxima) or -inf
     * (h-minima): in -/+ (float)h has no value there (OpenCL gave NaN): refused */
    for (int mx = 0; mx < 2; ++mx)
        for (int c = 0; c < g_ncfg; ++c) {
            float px[6] = {1, mx ? INFINITY : -INFINITY, 2, 3, 0, 5}, out[6];
            for (int i = 0; i < 6; ++i) out[i] = 42.0f;
            iwpp_image in = iwpp_image_2d(px, IWPP_F32, 3, 2), o = iwpp_image_2d(out, IWPP_F32, 3, 2);
            ++g_calls;
            iwpp_status st = mx ? iwpp_h_maxima(g_cfg[c].ctx, &in, 1e300, 8, &o) : iwpp_h_minima(g_cfg[c].ctx, &in, 1e300, 8, &o);
            const char *what = fmt("%s h = 1e300 on an f32 image with %s [%s]", mx ? "h_maxima" : "h_minima",
                                   mx ? "+inf" : "-inf", g_cfg[c].name);
            if (expect(g_cfg[c].ctx, st, ST_INVAL, "h$", NULL, what)) {
                for (int i = 0; i < 6; ++i)
                    if (isnan(out[i])) {
                        report("%s: pixel %d is NaN", what, i);
                        break;
                    }
            } else {
                for (int i = 0; i < 6; ++i)
                    if (out[i] != 42.0f) {
                        report("%s: the output was written", what);
                        break;
                    }
            }
        }
    assert_int_equal(g_fails, 0);
}

static int stop_at_once(void *user, double fraction)
{
    (void)fraction;
    ++*(int *)user;
    return 1;
}

/* The tile scheduler's settings: worker lists, memory budgets, progress; then random calls
 * (bad and valid) on contexts that go through tiles. */
static void test_tiles_and_workers(void **state)
{
    (void)state;
    g_fails = 0;
    g_calls += 3;
    expect(NULL, iwpp_context_set_memory_limit(NULL, 0), ST_INVAL, NULL, NULL, "set_memory_limit(NULL)");
    expect(NULL, iwpp_context_set_workers(NULL, "cpu"), ST_INVAL, NULL, NULL, "set_workers(NULL)");
    expect(NULL, iwpp_context_set_progress(NULL, NULL, NULL), ST_INVAL, NULL, NULL, "set_progress(NULL)");
    iwpp_context *ctx = NULL;
    if (harness_make_context(&g_cfg[0], &ctx) != IWPP_OK) {
        report("cannot create a second context");
        assert_int_equal(g_fails, 0);
        return;
    }
    char many[2000] = "", junk[5000];
    for (int i = 0; i < 300; ++i) strcat(many, "cpu*1,");
    memset(junk, 'x', sizeof junk - 1);
    junk[sizeof junk - 1] = '\0';
    const char *bad[] = {"bogus", "cpu*0", "cpu*-1", "cpu*", "cpu*1x", "cpu*100000", "cpu*2147483648",
                         "cpu*99999999999999999999", "cuda:-1", "opencl:999", "cuda:1025", "opencl:", "cuda:x",
                         "gpu*257", "cpu*200,cpu*100", "cpux", "gpu;cpu", "*2", "all-gpus*0", "cpu**2", many, junk};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        const char *what = fmt("set_workers(\"%.40s\"%s)", bad[i], strlen(bad[i]) > 40 ? "..." : "");
        ++g_calls;
        expect(ctx, iwpp_context_set_workers(ctx, bad[i]), ST_INVAL, NULL, "worker", what);
        still_works(ctx, what);
    }
    uint64_t limits[] = {1, 4096, 100000, UINT64_MAX, 0};
    const char *good[] = {"gpu", "cpu*2", "cpu*1,gpu", " cpu*2 , gpu ", "", NULL};
    trng r;
    trng_seed(&r, (uint64_t)env_long("IWPP_BADINPUT_SEED", 10) + 2000);
    /* GPU tiles come in many launch geometries, each a new PoCL compile (cold): fewer there */
    long per = env_long("IWPP_BADINPUT_CALLS", 6000) / (g_backend == IWPP_BACKEND_CPU ? 40 : 400);
    for (int i = 0; i < 11; ++i) {
        iwpp_status st;
        const char *what;
        if (i < 5) {
            what = fmt("memory limit %llu", (unsigned long long)limits[i]);
            ++g_calls;
            st = iwpp_context_set_memory_limit(ctx, limits[i]);
            g_budget = limits[i] != 0;
        } else {
            what = fmt("workers \"%s\"", good[i - 5] ? good[i - 5] : "(NULL)");
            ++g_calls;
            st = iwpp_context_set_workers(ctx, good[i - 5]);
        }
        if (!expect(ctx, st, ST_OK, NULL, NULL, what)) continue;
        char cfg[96];
        snprintf(cfg, sizeof cfg, "%s, %s", g_cfg[0].name, what);
        for (long k = 0; k < per; ++k) run_random_call(&r, ctx, cfg, k);
        if (i == 4) { /* back to no budget: the worker lists alone */
            ++g_calls;
            iwpp_context_set_memory_limit(ctx, 0);
        }
    }
    /* devices that may or may not be there */
    const char *maybe[] = {"all-gpus", "cuda:0", "opencl:0", "all-gpus*2"};
    for (int i = 0; i < 4; ++i) {
        const char *what = fmt("set_workers(\"%s\")", maybe[i]);
        ++g_calls;
        expect(ctx, iwpp_context_set_workers(ctx, maybe[i]), ST_OK | ST_INVAL, NULL, "worker", what);
        still_works(ctx, what);
    }
    /* a progress callback that stops at once: the call finishes or is cancelled, nothing else */
    int calls = 0;
    g_calls += 2;
    expect(ctx, iwpp_context_set_workers(ctx, "cpu*2"), ST_OK, NULL, NULL, "set_workers(cpu*2)");
    expect(ctx, iwpp_context_set_progress(ctx, stop_at_once, &calls), ST_OK, NULL, NULL, "set_progress");
    {
        odims d = {300, 200, 1};
        double *mk = vol_alloc(d), *ms = vol_alloc(d);
        gen_maze(&r, d, ms);
        mk[0] = 1;
        timg a, b;
        if (!timg_init(&a, IWPP_U8, d, 0, 0) || !timg_init(&b, IWPP_U8, d, 0, 0)) abort();
        timg_load(&a, mk);
        timg_load(&b, ms);
        ++g_calls;
        iwpp_status st = iwpp_reconstruct(ctx, &a.v, &b.v, 4, IWPP_BY_DILATION);
        if (expect(ctx, st, ST_OK | BIT(IWPP_ECANCELED), NULL, NULL, "reconstruct with a progress that stops") &&
            st == IWPP_OK) {
            /* the maze is too long a path for the oracle: the sequential CPU gives the bits */
            timg e;
            if (!timg_init(&e, IWPP_U8, d, 0, 0)) abort();
            timg_load(&e, mk);
            ++g_calls;
            if (iwpp_reconstruct(g_ref, &e.v, &b.v, 4, IWPP_BY_DILATION) != IWPP_OK || first_bits_diff(&a, &e) >= 0)
                report("reconstruct with a progress that stops: not the sequential CPU's result");
            timg_free(&e);
        }
        timg_free(&a);
        timg_free(&b);
        free(mk);
        free(ms);
    }
    ++g_calls;
    expect(ctx, iwpp_context_set_progress(ctx, NULL, NULL), ST_OK, NULL, NULL, "set_progress(NULL)");
    still_works(ctx, "after a stopped call");
    iwpp_context_destroy(ctx);
    assert_int_equal(g_fails, 0);
}

int main(int argc, char **argv)
{
    (void)argc;
    int rc = harness_init(argv[0]);
    if (rc) harness_exit(rc);
    if (iwpp_context_create(&g_ref, IWPP_BACKEND_CPU) != IWPP_OK || iwpp_context_set_threads(g_ref, 1) != IWPP_OK) {
        fprintf(stderr, "test_badinput: cannot create the reference CPU context\n");
        return 1;
    }
    double t0 = now_s();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_and_devices),
        cmocka_unit_test(test_contexts_and_setters),
        cmocka_unit_test(test_setting_extremes),
        cmocka_unit_test(test_image_views),
        cmocka_unit_test(test_edt_spacing),
        cmocka_unit_test(test_special_floats),
        cmocka_unit_test(test_random_sweep),
        cmocka_unit_test(test_shared_memory),
        cmocka_unit_test(test_tiles_and_workers),
    };
    int failed = HARNESS_RUN("badinput", tests);
    printf("test_badinput: %ld calls of the API in %.1f s\n", g_calls, now_s() - t0);
    iwpp_context_destroy(g_ref);
    harness_exit(failed ? 1 : 0);
}
