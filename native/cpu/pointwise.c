/*
 * pointwise.c - pointwise primitives, unit erosion/dilation and min/max on
 * the CPU, for U8, U16 and F32 buffers (see iwpp_pw_op in backend.h).
 *
 * Exact semantics (the GPU backends reproduce them bit for bit):
 *  - MIN: dst = (a < b) ? a : b;  MAX: dst = (a > b) ? a : b. On ties the
 *    result is b (this only shows for F32 -0 versus +0).
 *  - Integers (U8, U16): arithmetic in 32/64-bit integers, then clamped to
 *    [0, type max]. A scalar s is taken as the nearest integer (halves away
 *    from zero) after clamping to +-2^31.
 *  - F32: SUB_SCALAR / ADD_SCALAR compute a -/+ (float)s in float (one
 *    rounding of s to float, one rounded float operation, no clamping:
 *    overflow gives +-inf as IEEE says); SUB computes a - b in float;
 *    STEP_DOWN / STEP_UP are nextafterf(a, -inf) / nextafterf(a, +inf).
 *  - FILL / BORDER: (T)s is, for integers, s clamped to [0, type max] and
 *    rounded to nearest (halves away from zero); for F32, (float)s.
 *  - LESS / GREATER: dst (U8) = 255 where a < b (a > b), else 0.
 * morph_unit on F32 uses IEEE 754-2019 minimum / maximum (-0 < +0), so its
 * result is independent of the order in which neighbours are combined.
 * min/max: (double) of the smallest / largest element.
 * dst may be the same buffer as a or b: every loop reads element i of its
 * inputs before it writes element i of dst and touches nothing else.
 */
#include "cpu.h"
#include "pool.h"
#include "neighborhood.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#define IWPP_OMP(x) _Pragma(#x)
#else
#define IWPP_OMP(x)
#endif

/* Elements per parallel work item, and the size below which one thread runs. */
#define BLK ((int64_t)16384)
#define PAR_MIN ((int64_t)1 << 16)
/*
 * Pixels per thread for the default thread count: these loops stream memory
 * and take a few ms even at 4096 x 4096 on one core, while an OpenMP team's
 * threads spin for a while after it ends, taking cores from the next step and
 * from other processes; so only images above 2^25 pixels get threads unless
 * the caller set a count.
 */
#define PW_PX_PER_THREAD ((int64_t)1 << 24)
#define PW_PAR_MIN_DEFAULT ((int64_t)1 << 25)

static int pw_threads(const iwpp_context *ctx, int64_t n)
{
    if (ctx->threads <= 0 && n < PW_PAR_MIN_DEFAULT) return 1;
    return iwpp_cpu_threads_for(ctx, n, PW_PX_PER_THREAD);
}

#define PAR_BLOCKS(n, nt, BODY)                                                           \
    do {                                                                                  \
        const int64_t n_ = (n);                                                           \
        (void)(nt);                                                                       \
        const int64_t nb_ = (n_ + BLK - 1) / BLK;                                         \
        IWPP_OMP(omp parallel for num_threads(nt) schedule(static) if (n_ >= PAR_MIN))  \
        for (int64_t b_ = 0; b_ < nb_; ++b_) {                                            \
            const int64_t i0 = b_ * BLK;                                                  \
            const int64_t i1 = (i0 + BLK < n_) ? i0 + BLK : n_;                           \
            for (int64_t i = i0; i < i1; ++i) { BODY; }                                   \
        }                                                                                 \
    } while (0)

static int64_t round_scalar(double s)
{
    if (!(s > -2147483648.0)) return INT32_MIN; /* also NaN */
    if (s > 2147483647.0) return INT32_MAX;
    return (int64_t)llround(s);
}

static int64_t clamp_i64(int64_t v, int64_t hi) { return v < 0 ? 0 : (v > hi ? hi : v); }

/* ---- integer types ---- */

#define DEFINE_PW_INT(T, SUF, TMAX)                                                       \
    static void pw_##SUF(int nt, iwpp_pw_op op, const iwpp_buf *D, T *dst,                \
                         const T *a, const T *b, double s, int64_t n)                     \
    {                                                                                     \
        const int64_t si = round_scalar(s);                                               \
        const T cs = (T)clamp_i64(si, TMAX);                                              \
        switch (op) {                                                                     \
        case IWPP_PW_COPY:                                                                \
            if (dst != a) PAR_BLOCKS(n, nt, dst[i] = a[i]);                               \
            break;                                                                        \
        case IWPP_PW_FILL: PAR_BLOCKS(n, nt, dst[i] = cs); break;                         \
        case IWPP_PW_MIN: PAR_BLOCKS(n, nt, T x = a[i]; T y = b[i];                       \
                                     dst[i] = (x < y) ? x : y);                           \
            break;                                                                        \
        case IWPP_PW_MAX: PAR_BLOCKS(n, nt, T x = a[i]; T y = b[i];                       \
                                     dst[i] = (x > y) ? x : y);                           \
            break;                                                                        \
        case IWPP_PW_SUB_SCALAR: {                                                        \
            const int32_t k = (int32_t)(si < -(TMAX + 1) ? -(TMAX + 1)                    \
                                        : si > TMAX + 1 ? TMAX + 1 : si);                 \
            PAR_BLOCKS(n, nt, int32_t t = (int32_t)a[i] - k;                              \
                       t = t < 0 ? 0 : t; t = t > TMAX ? TMAX : t; dst[i] = (T)t);         \
            break;                                                                        \
        }                                                                                 \
        case IWPP_PW_ADD_SCALAR: {                                                        \
            const int32_t k = (int32_t)(si < -(TMAX + 1) ? -(TMAX + 1)                    \
                                        : si > TMAX + 1 ? TMAX + 1 : si);                 \
            PAR_BLOCKS(n, nt, int32_t t = (int32_t)a[i] + k;                              \
                       t = t < 0 ? 0 : t; t = t > TMAX ? TMAX : t; dst[i] = (T)t);         \
            break;                                                                        \
        }                                                                                 \
        case IWPP_PW_STEP_DOWN:                                                           \
            PAR_BLOCKS(n, nt, T x = a[i]; dst[i] = (T)(x - (x > 0)));                     \
            break;                                                                        \
        case IWPP_PW_STEP_UP:                                                             \
            PAR_BLOCKS(n, nt, T x = a[i]; dst[i] = (T)(x + (x < TMAX)));                  \
            break;                                                                        \
        case IWPP_PW_SUB:                                                                 \
            PAR_BLOCKS(n, nt, T x = a[i]; T y = b[i]; dst[i] = (T)(x > y ? x - y : 0));   \
            break;                                                                        \
        case IWPP_PW_BORDER: border_##SUF(nt, D, dst, a, cs); break;                      \
        default: break;                                                                   \
        }                                                                                 \
    }

/* BORDER: dst = a on the border, cs inside. */
#define DEFINE_BORDER(T, SUF)                                                             \
    static void border_##SUF(int nt, const iwpp_buf *D, T *dst, const T *a, T cs)         \
    {                                                                                     \
        const int64_t w = D->w, h = D->h, d = D->d, rows = h * d;                         \
        (void)nt;                                                                         \
        IWPP_OMP(omp parallel for num_threads(nt) schedule(static) if (w * rows >= PAR_MIN)) \
        for (int64_t r = 0; r < rows; ++r) {                                              \
            const int64_t y = r % h, z = r / h;                                           \
            T *o = dst + r * w;                                                           \
            const T *in = a + r * w;                                                      \
            const int edge = (y == 0) || (y == h - 1) || (d > 1 && (z == 0 || z == d - 1)); \
            if (edge) {                                                                   \
                if (o != in)                                                              \
                    for (int64_t x = 0; x < w; ++x) o[x] = in[x];                         \
            } else {                                                                      \
                const T first = in[0], last = in[w - 1];                                  \
                for (int64_t x = 1; x < w - 1; ++x) o[x] = cs;                            \
                o[0] = first;                                                             \
                o[w - 1] = last;                                                          \
            }                                                                             \
        }                                                                                 \
    }

DEFINE_BORDER(uint8_t, u8)
DEFINE_BORDER(uint16_t, u16)
DEFINE_BORDER(float, f32)
DEFINE_PW_INT(uint8_t, u8, 255)
DEFINE_PW_INT(uint16_t, u16, 65535)

/* ---- F32 ---- */

/* nextafterf(x, -inf) and nextafterf(x, +inf) for non-NaN x, on the bits. */
static inline float step_down_f32(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    u = (x > 0.0f) ? u - 1u : u + 1u;
    memcpy(&x, &u, sizeof u);
    return x;
}
static inline float step_up_f32(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    u = (x > 0.0f) ? u + 1u : u - 1u;
    memcpy(&x, &u, sizeof u);
    return x;
}
static inline float next_down(float x)
{
    float r = step_down_f32(x);
    r = (x == 0.0f) ? -0x1p-149f : r;
    return (x == -INFINITY) ? x : r;
}
static inline float next_up(float x)
{
    float r = step_up_f32(x);
    r = (x == 0.0f) ? 0x1p-149f : r;
    return (x == INFINITY) ? x : r;
}

static void pw_f32(int nt, iwpp_pw_op op, const iwpp_buf *D, float *dst, const float *a,
                   const float *b, double s, int64_t n)
{
    const float fs = (float)s;
    switch (op) {
    case IWPP_PW_COPY:
        if (dst != a) PAR_BLOCKS(n, nt, dst[i] = a[i]);
        break;
    case IWPP_PW_FILL: PAR_BLOCKS(n, nt, dst[i] = fs); break;
    case IWPP_PW_MIN: PAR_BLOCKS(n, nt, float x = a[i]; float y = b[i]; dst[i] = (x < y) ? x : y);
        break;
    case IWPP_PW_MAX: PAR_BLOCKS(n, nt, float x = a[i]; float y = b[i]; dst[i] = (x > y) ? x : y);
        break;
    case IWPP_PW_SUB_SCALAR: PAR_BLOCKS(n, nt, dst[i] = a[i] - fs); break;
    case IWPP_PW_ADD_SCALAR: PAR_BLOCKS(n, nt, dst[i] = a[i] + fs); break;
    case IWPP_PW_STEP_DOWN: PAR_BLOCKS(n, nt, dst[i] = next_down(a[i])); break;
    case IWPP_PW_STEP_UP: PAR_BLOCKS(n, nt, dst[i] = next_up(a[i])); break;
    case IWPP_PW_SUB: PAR_BLOCKS(n, nt, dst[i] = a[i] - b[i]); break;
    case IWPP_PW_BORDER: border_f32(nt, D, dst, a, fs); break;
    default: break;
    }
}

/* ---- comparisons into U8 ---- */

#define DEFINE_CMP(T, SUF)                                                                \
    static void cmp_##SUF(int nt, int greater, uint8_t *dst, const T *a, const T *b,      \
                          int64_t n)                                                      \
    {                                                                                     \
        if (greater)                                                                      \
            PAR_BLOCKS(n, nt, T x = a[i]; T y = b[i]; dst[i] = (uint8_t)(x > y ? 255 : 0)); \
        else                                                                              \
            PAR_BLOCKS(n, nt, T x = a[i]; T y = b[i]; dst[i] = (uint8_t)(x < y ? 255 : 0)); \
    }

DEFINE_CMP(uint8_t, u8)
DEFINE_CMP(uint16_t, u16)
DEFINE_CMP(float, f32)
DEFINE_CMP(int64_t, i64)

iwpp_status iwpp_cpu_pointwise(iwpp_context *ctx, iwpp_pw_op op, iwpp_buf *dst,
                               const iwpp_buf *a, const iwpp_buf *b, double s)
{
    const int64_t n = iwpp_buf_count(dst);
    const int nt = pw_threads(ctx, n);
    const void *ap = a ? a->ptr : NULL;
    const void *bp = b ? b->ptr : NULL;
    if (op == IWPP_PW_LESS || op == IWPP_PW_GREATER) {
        const int g = (op == IWPP_PW_GREATER);
        uint8_t *o = (uint8_t *)dst->ptr;
        switch (a->type) {
        case IWPP_U8: cmp_u8(nt, g, o, (const uint8_t *)ap, (const uint8_t *)bp, n); break;
        case IWPP_U16: cmp_u16(nt, g, o, (const uint16_t *)ap, (const uint16_t *)bp, n); break;
        case IWPP_F32: cmp_f32(nt, g, o, (const float *)ap, (const float *)bp, n); break;
        case IWPP_I64: cmp_i64(nt, g, o, (const int64_t *)ap, (const int64_t *)bp, n); break;
        default:
            return iwpp_set_error(ctx, IWPP_EINTERNAL,
                                  "pointwise comparison on the CPU: type %s reached the backend",
                                  iwpp_type_name(a->type));
        }
        return IWPP_OK;
    }
    if (op == IWPP_PW_COPY && dst->type == IWPP_I64) {
        if (dst->ptr != ap) memcpy(dst->ptr, ap, (size_t)n * sizeof(int64_t));
        return IWPP_OK;
    }
    switch (dst->type) {
    case IWPP_U8:
        pw_u8(nt, op, dst, (uint8_t *)dst->ptr, (const uint8_t *)ap, (const uint8_t *)bp, s, n);
        break;
    case IWPP_U16:
        pw_u16(nt, op, dst, (uint16_t *)dst->ptr, (const uint16_t *)ap, (const uint16_t *)bp, s,
               n);
        break;
    case IWPP_F32:
        pw_f32(nt, op, dst, (float *)dst->ptr, (const float *)ap, (const float *)bp, s, n);
        break;
    default:
        return iwpp_set_error(ctx, IWPP_EINTERNAL,
                              "pointwise operation %d on the CPU: type %s reached the backend",
                              (int)op, iwpp_type_name(dst->type));
    }
    return IWPP_OK;
}

/* ------------------------------------------------------------------------ */
/* Unit erosion / dilation, row by row. The neighbourhood (centre included) is
 * described by the rows (dy, dz) it touches; on each such row it takes either
 * dx = 0 only ("narrow") or dx in {-1, 0, 1} ("wide"). Out-of-image neighbours
 * are ignored. */

typedef struct nbrow {
    int dy, dz, wide;
} nbrow;

static int unit_rows(int conn, int flat, nbrow rows[9])
{
    int off[26][3];
    int n = iwpp_neighbors(conn, flat, off);
    int nr = 1;
    rows[0].dy = 0;
    rows[0].dz = 0;
    rows[0].wide = 0; /* the centre row; made wide by (+-1, 0, 0) below */
    for (int k = 0; k < n; ++k) {
        int j;
        for (j = 0; j < nr; ++j)
            if (rows[j].dy == off[k][1] && rows[j].dz == off[k][2]) break;
        if (j == nr) {
            rows[nr].dy = off[k][1];
            rows[nr].dz = off[k][2];
            rows[nr].wide = 0;
            ++nr;
        }
        if (off[k][0] != 0) rows[j].wide = 1;
    }
    return nr;
}

#define MORPH_MIN(x, y) ((y) < (x) ? (y) : (x))
#define MORPH_MAX(x, y) ((y) > (x) ? (y) : (x))
/* F32: IEEE 754-2019 minimum/maximum on non-NaN values, where -0 < +0, so the
 * result does not depend on the order in which neighbours are visited. */
static inline float fmin_z(float x, float y)
{
    float m = (y < x) ? y : x;
    return (y == x && signbit(y)) ? y : m;
}
static inline float fmax_z(float x, float y)
{
    float m = (y > x) ? y : x;
    return (y == x && !signbit(y)) ? y : m;
}

#define DEFINE_MORPH(T, SUF, OP, NAME)                                                    \
    static void NAME(T *restrict o, const T *src, int64_t w, int64_t h, int64_t d,        \
                     int64_t y, int64_t z, const nbrow *rows, int nr)                     \
    {                                                                                     \
        for (int k = 0; k < nr; ++k) {                                                    \
            const int64_t yy = y + rows[k].dy, zz = z + rows[k].dz;                       \
            if (yy < 0 || yy >= h || zz < 0 || zz >= d) continue;                         \
            const T *restrict r = src + (zz * h + yy) * w;                                \
            if (k == 0) {                                                                 \
                /* centre row: always first and in range */                               \
                if (rows[0].wide && w > 1) {                                              \
                    o[0] = OP(r[0], r[1]);                                                \
                    for (int64_t x = 1; x < w - 1; ++x) {                                 \
                        T m = OP(r[x - 1], r[x]);                                         \
                        o[x] = OP(m, r[x + 1]);                                           \
                    }                                                                     \
                    o[w - 1] = OP(r[w - 2], r[w - 1]);                                    \
                } else {                                                                  \
                    for (int64_t x = 0; x < w; ++x) o[x] = r[x];                          \
                }                                                                         \
            } else if (rows[k].wide && w > 1) {                                           \
                o[0] = OP(o[0], OP(r[0], r[1]));                                          \
                for (int64_t x = 1; x < w - 1; ++x) {                                     \
                    T m = OP(r[x - 1], r[x]);                                             \
                    m = OP(m, r[x + 1]);                                                  \
                    o[x] = OP(o[x], m);                                                   \
                }                                                                         \
                o[w - 1] = OP(o[w - 1], OP(r[w - 2], r[w - 1]));                          \
            } else {                                                                      \
                for (int64_t x = 0; x < w; ++x) o[x] = OP(o[x], r[x]);                    \
            }                                                                             \
        }                                                                                 \
    }

DEFINE_MORPH(uint8_t, u8, MORPH_MIN, erode_u8)
DEFINE_MORPH(uint8_t, u8, MORPH_MAX, dilate_u8)
DEFINE_MORPH(uint16_t, u16, MORPH_MIN, erode_u16)
DEFINE_MORPH(uint16_t, u16, MORPH_MAX, dilate_u16)
DEFINE_MORPH(float, f32, fmin_z, erode_f32)
DEFINE_MORPH(float, f32, fmax_z, dilate_f32)

static void morph_row(iwpp_type t, int erode, void *dst, const void *src, int64_t w, int64_t h,
                      int64_t d, int64_t r, const nbrow *rows, int nr)
{
    const int64_t y = r % h, z = r / h;
    switch (t) {
    case IWPP_U8: {
        uint8_t *o = (uint8_t *)dst + r * w;
        if (erode) erode_u8(o, (const uint8_t *)src, w, h, d, y, z, rows, nr);
        else dilate_u8(o, (const uint8_t *)src, w, h, d, y, z, rows, nr);
        break;
    }
    case IWPP_U16: {
        uint16_t *o = (uint16_t *)dst + r * w;
        if (erode) erode_u16(o, (const uint16_t *)src, w, h, d, y, z, rows, nr);
        else dilate_u16(o, (const uint16_t *)src, w, h, d, y, z, rows, nr);
        break;
    }
    default: {
        float *o = (float *)dst + r * w;
        if (erode) erode_f32(o, (const float *)src, w, h, d, y, z, rows, nr);
        else dilate_f32(o, (const float *)src, w, h, d, y, z, rows, nr);
        break;
    }
    }
}

iwpp_status iwpp_cpu_morph_unit(iwpp_context *ctx, iwpp_buf *dst, const iwpp_buf *src,
                                int connectivity, iwpp_morph_mode mode, int iterations)
{
    const int64_t w = src->w, h = src->h, d = src->d, n = w * h * d, rows = h * d;
    const size_t es = iwpp_type_size(src->type);
    if (src->type != IWPP_U8 && src->type != IWPP_U16 && src->type != IWPP_F32)
        return iwpp_set_error(ctx, IWPP_EINTERNAL,
                              "unit erosion/dilation on the CPU: type %s reached the backend",
                              iwpp_type_name(src->type));
    if (iterations <= 0) {
        if (dst->ptr != src->ptr) memcpy(dst->ptr, src->ptr, (size_t)n * es);
        return IWPP_OK;
    }
    nbrow nb[9];
    const int nr = unit_rows(connectivity, d == 1, nb);
    void *scr = NULL;
    if (iterations > 1) {
        scr = malloc((size_t)n * es);
        if (!scr)
            return iwpp_set_error(ctx, IWPP_ENOMEM,
                                  "unit erosion/dilation: cannot allocate %.1f MiB of host memory "
                                  "for the scratch image; free memory or use a smaller image",
                                  (double)n * (double)es / 1048576.0);
    }
    const int nt = pw_threads(ctx, n * iterations);
    (void)nt;
    const int erode = (mode == IWPP_BY_EROSION);
    const iwpp_type t = src->type;
    void *dp = dst->ptr;
    const void *sp = src->ptr;
IWPP_OMP(omp parallel num_threads(nt) if (n >= PAR_MIN))
    {
        const void *cur = sp;
        for (int it = 0; it < iterations; ++it) {
            /* the last iteration writes dst; earlier ones alternate so that holds */
            void *out = ((iterations - 1 - it) % 2 == 0) ? dp : scr;
IWPP_OMP(omp for schedule(static))
            for (int64_t r = 0; r < rows; ++r) morph_row(t, erode, out, cur, w, h, d, r, nb, nr);
            /* implicit barrier: the whole of out is written before it is read */
            cur = out;
        }
    }
    free(scr);
    return IWPP_OK;
}

/* ------------------------------------------------------------------------ */

#define DEFINE_MINMAX(T, SUF)                                                             \
    static void minmax_##SUF(int nt, const T *a, int64_t n, double *mn, double *mx)       \
    {                                                                                     \
        const int64_t nb = (n + BLK - 1) / BLK;                                           \
        (void)nt;                                                                         \
        T glo = a[0], ghi = a[0];                                                         \
        IWPP_OMP(omp parallel num_threads(nt) if (n >= PAR_MIN))                        \
        {                                                                                 \
            T lo = a[0], hi = a[0];                                                       \
            IWPP_OMP(omp for schedule(static))                                          \
            for (int64_t b = 0; b < nb; ++b) {                                            \
                const int64_t i0 = b * BLK, i1 = (i0 + BLK < n) ? i0 + BLK : n;           \
                for (int64_t i = i0; i < i1; ++i) {                                       \
                    T v = a[i];                                                           \
                    lo = (v < lo) ? v : lo;                                               \
                    hi = (v > hi) ? v : hi;                                               \
                }                                                                         \
            }                                                                             \
            IWPP_OMP(omp critical(iwpp_minmax))                                         \
            {                                                                             \
                glo = (lo < glo) ? lo : glo;                                              \
                ghi = (hi > ghi) ? hi : ghi;                                              \
            }                                                                             \
        }                                                                                 \
        *mn = (double)glo;                                                                \
        *mx = (double)ghi;                                                                \
    }

DEFINE_MINMAX(uint8_t, u8)
DEFINE_MINMAX(uint16_t, u16)
DEFINE_MINMAX(float, f32)

iwpp_status iwpp_cpu_minmax(iwpp_context *ctx, const iwpp_buf *a, double *min, double *max)
{
    const int64_t n = iwpp_buf_count(a);
    const int nt = pw_threads(ctx, n);
    if (n <= 0) {
        *min = 0.0;
        *max = 0.0;
        return IWPP_OK;
    }
    switch (a->type) {
    case IWPP_U8: minmax_u8(nt, (const uint8_t *)a->ptr, n, min, max); break;
    case IWPP_U16: minmax_u16(nt, (const uint16_t *)a->ptr, n, min, max); break;
    case IWPP_F32: minmax_f32(nt, (const float *)a->ptr, n, min, max); break;
    default:
        return iwpp_set_error(ctx, IWPP_EINTERNAL, "min/max on the CPU: type %s reached the backend",
                              iwpp_type_name(a->type));
    }
    return IWPP_OK;
}
