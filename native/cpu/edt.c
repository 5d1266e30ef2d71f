/*
 * edt.c - Euclidean distance transform on the CPU.
 *
 * Size: about 1200 lines because the exact passes, the GPUs' bit-exact reference, read as one piece.
 *
 * Two methods:
 *
 * IWPP_EDT_EXACT ("edt-exact-separable")
 *   A separable, linear-time exact transform that carries the nearest
 *   background pixel (the "site") through one pass per axis:
 *     A. along the outermost axis (y in 2D, z in 3D): for every pixel the
 *        nearest background pixel on its own line, by a forward and a
 *        backward sweep. The sweeps run over whole rows (2D) or slices (3D)
 *        at once, so every memory access is contiguous; threads take
 *        disjoint strips of columns.
 *     B. (3D only) along y: lower envelope of parabolas per column. Columns
 *        are processed in blocks of COLS_PER_BLOCK, gathered into a small
 *        column-major scratch so the strided axis is read one cache line per
 *        row instead of one pixel per row.
 *     C. along x (contiguous): lower envelope of parabolas per row, then the
 *        outputs.
 *   The lower envelope (Felzenszwalb-Huttenlocher) is built without any
 *   division: the intersection abscissa of two parabolas is kept as a
 *   numerator/denominator pair and compared by cross-multiplication; the
 *   final scan picks, at each x, the envelope parabola by comparing the
 *   values themselves. With unit spacing every quantity is an integer held
 *   exactly in a double (for images up to ~10^5 pixels a side), so the
 *   chosen site is an exact minimiser.
 *
 *   Arithmetic of the result (the GPU backends reproduce it bit for bit):
 *   with the site (sx, sy, sz) of pixel (x, y, z) and spacing (hx, hy, hz),
 *   all in IEEE double, evaluated in this order,
 *       d2 = ( ((double)(z - sz) * hz)^2 + ((double)(y - sy) * hy)^2 )
 *            + ((double)(x - sx) * hx)^2
 *   (in 2D the z term is absent: d2 = ((y-sy)*hy)^2 + ((x-sx)*hx)^2), and
 *       dist = (float)sqrt(d2)
 *   i.e. the double distance correctly rounded once to float. This is the
 *   order in which SciPy's distance_transform_edt(sampling=(hz, hy, hx))
 *   forms its float64 result, so dist equals that result cast to float32.
 *   nearest = sx + w * (sy + h * sz). Ties go to the site the passes meet
 *   last (the larger coordinate along the pass axis).
 *
 * IWPP_EDT_DANIELSSON ("edt-danielsson")
 *   The IWPP propagation of Teodoro et al. (paper 000, Alg. 3): every pixel
 *   holds its current nearest background pixel (site); background pixels
 *   with a foreground neighbour seed a FIFO; popping p, each neighbour q
 *   (8-connected in 2D, 26 in 3D) takes p's site if that is strictly closer
 *   to q (d2 as above) and is queued. Sequential (the result then does not
 *   depend on the thread count). Distances are formed from the final sites
 *   with the same arithmetic as the exact method, so a pixel whose site is
 *   a true nearest one gets exactly the exact result.
 *   Bounds, for any order of propagation (so for the GPU backends too): when
 *   the queue is empty, d(q, site(q)) <= d(q, site(p)) <= d(p, site(p)) +
 *   |q - p| for every neighbour p of q, hence along a neighbour path from the
 *   true nearest background pixel b of q:
 *       exact(q) <= result(q) <= L(q - b),
 *   L(v) = (n1 - n2) h1 + (n2 - n3) sqrt(h1^2 + h2^2) + n3 sqrt(h1^2 + h2^2 + h3^2)
 *   with n1 >= n2 >= n3 the step counts |v_i| sorted, h_i their spacings
 *   (n3 = 0 in 2D). With unit spacing L <= 1.0824 exact in 2D and
 *   <= 1.1281 exact in 3D. Measured (random and hill-climbed adversarial
 *   images): at most 0.091 pixel above exact in 2D with unit spacing, 0.34 of
 *   the smallest spacing with spacing (1, 3); no error found in 3D with unit
 *   spacing. Exact on 1D lines and with one background pixel.
 *
 * No background at all: dist = +INFINITY and nearest = -1 everywhere.
 */
#include "cpu.h"
#include "neighborhood.h"

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "cpu/pool.h"

#define NO_SITE ((int32_t)-1)
#define COLS_PER_BLOCK 16

/* ------------------------------------------------------------------------ */
/* Pass A: nearest background pixel along the outer axis of a stack of
 * `count` planes of `len` contiguous pixels (rows in 2D, slices in 3D).
 * out[k*len + i] = index k' of the nearest background pixel on line i, or
 * NO_SITE. Only columns i0 <= i < i1 are touched. */

#define DEFINE_FORWARD_SWEEP(T, NAME)                                                     \
    static void NAME(const T *in, int64_t len, int64_t count, int64_t i0, int64_t i1,     \
                     int32_t *out)                                                        \
    {                                                                                     \
        {                                                                                 \
            const T *r = in + i0;                                                         \
            int32_t *o = out + i0;                                                        \
            int64_t n = i1 - i0;                                                          \
            for (int64_t i = 0; i < n; ++i) o[i] = (r[i] == 0) ? 0 : NO_SITE;             \
        }                                                                                 \
        for (int64_t k = 1; k < count; ++k) {                                             \
            const T *r = in + k * len + i0;                                               \
            int32_t *o = out + k * len + i0;                                              \
            const int32_t *p = o - len;                                                   \
            int32_t kk = (int32_t)k;                                                      \
            int64_t n = i1 - i0;                                                          \
            for (int64_t i = 0; i < n; ++i) o[i] = (r[i] == 0) ? kk : p[i];               \
        }                                                                                 \
    }

DEFINE_FORWARD_SWEEP(uint8_t, forward_u8)
DEFINE_FORWARD_SWEEP(uint16_t, forward_u16)
DEFINE_FORWARD_SWEEP(float, forward_f32)

static void backward_sweep(int64_t len, int64_t count, int64_t i0, int64_t i1, int32_t *out)
{
    int64_t n = i1 - i0;
    for (int64_t k = count - 2; k >= 0; --k) {
        int32_t *o = out + k * len + i0;
        const int32_t *b = o + len; /* final values of line k+1 */
        int32_t kk = (int32_t)k;
        for (int64_t i = 0; i < n; ++i) {
            int32_t cur = o[i], cand = b[i];
            /* cand is either cur itself or the nearest site below k */
            int take = (cand != NO_SITE) & ((cur == NO_SITE) | (cand - kk < kk - cur));
            o[i] = take ? cand : cur;
        }
    }
}

static void pass_outer(const void *in, iwpp_type type, int64_t len, int64_t count, int64_t i0,
                       int64_t i1, int32_t *out)
{
    switch (type) {
    case IWPP_U8: forward_u8((const uint8_t *)in, len, count, i0, i1, out); break;
    case IWPP_U16: forward_u16((const uint16_t *)in, len, count, i0, i1, out); break;
    default: forward_f32((const float *)in, len, count, i0, i1, out); break;
    }
    backward_sweep(len, count, i0, i1, out);
}

/* ------------------------------------------------------------------------ */
/* Lower envelope of the parabolas  F_p(i) = f[p] + ((double)(i - p) * h)^2
 * over the sites p (f[p] finite) of a line of n pixels: arg[i] receives a site
 * minimising F_p(i) (NO_SITE if the line has no site) and d2[i] (if not NULL)
 * that minimum, computed exactly as F above.
 *
 * A site with f[p] == 0 (a background pixel of the line itself) is a wall:
 * for i on one side of it, every site on the other side is strictly farther.
 * The line is therefore cut at its walls and each run of pixels between two
 * walls is solved on its own: short runs by trying every site of the run and
 * its two walls, longer ones by the Felzenszwalb-Huttenlocher envelope.
 * Scratch: walls (n+1 int32), v (n int32), zn, zd (n doubles). */

#define SHORT_RUN 6

/* Felzenszwalb-Huttenlocher over the sites in [lo, hi], answers for x in
 * [xlo, xhi]. Intersections are kept as num/den pairs (den > 0) and compared
 * by cross-multiplication, so there is no division. */
static void envelope_range(const double *f, double h, int64_t lo, int64_t hi, int64_t xlo,
                           int64_t xhi, int32_t *v, double *zn, double *zd, int32_t *arg,
                           double *d2)
{
    const double h2 = h * h;
    int64_t k = -1;
    for (int64_t q = lo; q <= hi; ++q) {
        const double fq = f[q];
        if (fq == INFINITY) continue;
        double num = 0.0, den = 1.0;
        while (k >= 0) {
            const int64_t p = v[k];
            /* abscissa where F_q overtakes F_p: num / den */
            num = (fq - f[p]) + h2 * (double)((q - p) * (q + p));
            den = 2.0 * h2 * (double)(q - p);
            /* keep p while that abscissa lies right of where p itself took over */
            if (k == 0 || num * zd[k] > zn[k] * den) break;
            --k;
        }
        ++k;
        v[k] = (int32_t)q;
        zn[k] = num;
        zd[k] = den;
    }
    if (k < 0) {
        for (int64_t x = xlo; x <= xhi; ++x) {
            arg[x] = NO_SITE;
            if (d2) d2[x] = INFINITY;
        }
        return;
    }
    const int64_t top = k;
    k = 0;
    int64_t p = v[0];
    double fp = f[p];
    for (int64_t x = xlo; x <= xhi; ++x) {
        double t = (double)(x - p) * h;
        double cur = fp + t * t;
        while (k < top) {
            const int64_t pn = v[k + 1];
            double tn = (double)(x - pn) * h;
            double nxt = f[pn] + tn * tn;
            if (nxt > cur) break;
            ++k;
            p = pn;
            fp = f[pn];
            cur = nxt;
        }
        arg[x] = (int32_t)p;
        if (d2) d2[x] = cur;
    }
}

static void envelope_line(int64_t n, const double *f, double h, int32_t *walls, int32_t *v,
                          double *zn, double *zd, int32_t *arg, double *d2)
{
    int64_t nw = 0;
    for (int64_t i = 0; i < n; ++i) {
        walls[nw] = (int32_t)i;
        nw += (f[i] == 0.0);
    }
    int64_t a = -1; /* the wall left of the run, -1 if none */
    for (int64_t wi = 0; wi <= nw; ++wi) {
        const int64_t b = (wi < nw) ? walls[wi] : n; /* the wall right of it, n if none */
        const int64_t len = b - a - 1;
        if (len > 0) {
            const int64_t lo = (a < 0) ? 0 : a, hi = (b >= n) ? n - 1 : b;
            if (len <= SHORT_RUN) {
                for (int64_t x = a + 1; x < b; ++x) {
                    double best = INFINITY;
                    int32_t bi = NO_SITE;
                    for (int64_t s = lo; s <= hi; ++s) {
                        double t = (double)(x - s) * h;
                        double val = f[s] + t * t;
                        if (val < best) {
                            best = val;
                            bi = (int32_t)s;
                        }
                    }
                    arg[x] = bi;
                    if (d2) d2[x] = best;
                }
            } else {
                envelope_range(f, h, lo, hi, a + 1, b - 1, v, zn, zd, arg, d2);
            }
        }
        if (b < n) {
            arg[b] = (int32_t)b;
            if (d2) d2[b] = 0.0;
        }
        a = b;
    }
}

/* ------------------------------------------------------------------------ */

typedef struct exact_job {
    const iwpp_buf *bin;
    int64_t w, h, d;
    double hx, hy, hz;
    int32_t *ny;      /* per pixel: y of the site (aliases the dist buffer) */
    int32_t *nz;      /* 3D: per pixel z of the site (own allocation) */
    float *dist;
    int64_t *nearest; /* may be NULL */
    int unit;         /* unit spacing and small sides: the int64 row path */
    /* 2D bands */
    int64_t nbands;
    int32_t *carry_up;   /* [nbands][w]: nearest background row above the band */
    int32_t *carry_down; /* [nbands][w]: nearest background row below the band */
} exact_job;

/* Per-thread scratch. */
typedef struct scratch {
    double *f, *zn, *zd, *d2;
    int32_t *v, *arg, *walls, *rny, *rnz, *below;
    double *fc;            /* 3D pass B: COLS_PER_BLOCK columns of h */
    int32_t *nzc, *argc;
} scratch;

static void scratch_free(scratch *S)
{
    free(S->f);
    free(S->zn);
    free(S->zd);
    free(S->d2);
    free(S->v);
    free(S->arg);
    free(S->walls);
    free(S->rny);
    free(S->rnz);
    free(S->below);
    free(S->fc);
    free(S->nzc);
    free(S->argc);
    memset(S, 0, sizeof *S);
}

static int scratch_alloc(scratch *S, int64_t w, int64_t h, int columns)
{
    const size_t m = (size_t)(w > h ? w : h) + 1;
    memset(S, 0, sizeof *S);
    S->f = (double *)malloc(m * sizeof(double));
    S->zn = (double *)malloc(m * sizeof(double));
    S->zd = (double *)malloc(m * sizeof(double));
    S->d2 = (double *)malloc(m * sizeof(double));
    S->v = (int32_t *)malloc(m * sizeof(int32_t));
    S->arg = (int32_t *)malloc(m * sizeof(int32_t));
    S->walls = (int32_t *)malloc(m * sizeof(int32_t));
    S->rny = (int32_t *)malloc(m * sizeof(int32_t));
    S->rnz = (int32_t *)malloc(m * sizeof(int32_t));
    S->below = (int32_t *)malloc(m * sizeof(int32_t));
    int ok = S->f && S->zn && S->zd && S->d2 && S->v && S->arg && S->walls && S->rny && S->rnz &&
             S->below;
    if (ok && columns) {
        const size_t c = (size_t)COLS_PER_BLOCK * (size_t)h;
        S->fc = (double *)malloc(c * sizeof(double));
        S->nzc = (int32_t *)malloc(c * sizeof(int32_t));
        S->argc = (int32_t *)malloc(c * sizeof(int32_t));
        ok = S->fc && S->nzc && S->argc;
    }
    if (!ok) scratch_free(S);
    return ok;
}

/* One scratch per thread, all allocated before the transform writes anything
 * (the outputs may be the caller's own views: a failed call must leave them
 * untouched). Returns NULL if any allocation fails. */
static scratch *scratch_set_alloc(int nt, int64_t w, int64_t h, int columns)
{
    scratch *set = (scratch *)calloc((size_t)nt, sizeof(scratch));
    if (!set) return NULL;
    for (int t = 0; t < nt; ++t) {
        if (!scratch_alloc(&set[t], w, h, columns)) {
            for (int u = 0; u < t; ++u) scratch_free(&set[u]);
            free(set);
            return NULL;
        }
    }
    return set;
}

static void scratch_set_free(scratch *set, int nt)
{
    if (!set) return;
    for (int t = 0; t < nt; ++t) scratch_free(&set[t]);
    free(set);
}

/*
 * Pixels per thread below which the default thread count is lowered (a
 * 512 x 512 transform, a few ms on one core, runs sequentially: see
 * iwpp_cpu_threads_for).
 */
#define EDT_PX_PER_THREAD ((int64_t)1 << 19)

/* ---- Unit-spacing rows (hx = hy = hz = 1, every side <= UNIT_MAX_SIDE) ----
 * The same envelope in integers: every quantity of the double version is an
 * integer below 2^53 there, so the double version computes it exactly and
 * this one takes the very same decisions (same sites, same ties). With sides
 * of at most 2^15 - 1 the column values g = dz^2 + dy^2 fit in int32 and the
 * cross-products stay below 2^50. The distance is (float)sqrt((double)d2) as
 * documented; for d2 <= 2^24 it is computed as sqrtf((float)d2), which is the
 * same float: d2 is exact in float, sqrtf is correctly rounded, and rounding
 * the correctly rounded double square root to float gives the correctly
 * rounded float one (53 >= 2 * 24 + 2).
 * The row is walked as alternating runs of background pixels (g == 0: the
 * distance is 0 and the site is the pixel itself) and of foreground pixels,
 * each of which is solved between its two walls. */

#define UNIT_MAX_SIDE 32767
#define UNIT_NONE INT32_MAX /* g of a pixel without a site */

static inline float unit_dist(int64_t d2)
{
    return (d2 <= ((int64_t)1 << 24)) ? sqrtf((float)d2) : (float)sqrt((double)d2);
}

/* First x >= x0 (< n) with (g[x] == 0) != want_zero, or n. */
static inline int64_t unit_scan(const int32_t *restrict g, int64_t x, int64_t n, int want_zero)
{
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    const int all = want_zero ? 0xF : 0x0;
    while (x + 4 <= n) {
        const __m128i e = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(g + x)), zero);
        const int m = _mm_movemask_ps(_mm_castsi128_ps(e)) ^ all; /* bits: stop here */
        if (m) return x + __builtin_ctz((unsigned)m);
        x += 4;
    }
#endif
    while (x < n && ((g[x] == 0) == want_zero)) ++x;
    return x;
}

/* Envelope over the sites in [lo, hi] (g < UNIT_NONE), outputs for x in
 * [xlo, xhi]; arg may be NULL. */
static int unit_range(const int32_t *restrict g, int64_t lo, int64_t hi, int64_t xlo,
                      int64_t xhi, int32_t *restrict v, int64_t *restrict zn,
                      int64_t *restrict zd, int32_t *restrict arg, float *restrict dst,
                      int exact)
{
    int64_t k = -1;
    for (int64_t q = lo; q <= hi; ++q) {
        const int64_t gq = g[q];
        if (gq == UNIT_NONE) continue;
        int64_t num = 0, den = 1;
        while (k >= 0) {
            const int64_t p = v[k];
            num = (gq - g[p]) + (q - p) * (q + p);
            den = 2 * (q - p);
            if (k == 0 || num * zd[k] > zn[k] * den) break;
            --k;
        }
        ++k;
        v[k] = (int32_t)q;
        zn[k] = num;
        zd[k] = den;
    }
    if (k < 0) {
        for (int64_t x = xlo; x <= xhi; ++x) {
            if (arg) arg[x] = NO_SITE;
            dst[x] = INFINITY;
        }
        return 0;
    }
    int64_t big = 0;
    const int64_t top = k;
    k = 0;
    int64_t p = v[0];
    int64_t gp = g[p];
    for (int64_t x = xlo; x <= xhi; ++x) {
        int64_t cur = gp + (x - p) * (x - p);
        while (k < top) {
            const int64_t pn = v[k + 1];
            const int64_t nxt = g[pn] + (x - pn) * (x - pn);
            if (nxt > cur) break;
            ++k;
            p = pn;
            gp = g[pn];
            cur = nxt;
        }
        if (arg) arg[x] = (int32_t)p;
        if (exact) {
            dst[x] = unit_dist(cur);
        } else {
            dst[x] = (float)cur;
            big |= cur > ((int64_t)1 << 24);
        }
    }
    return big != 0;
}

/* The foreground run [x, b) of a row of n pixels, walls at x - 1 (if x > 0)
 * and b (if b < n). exact = 0: dst receives (float)d2 and the return value
 * says whether some d2 exceeds 2^24 (then (float)d2 may be inexact);
 * exact = 1: dst receives the distances. */
static int unit_run(int64_t n, const int32_t *restrict g, int64_t x, int64_t b,
                    int32_t *restrict v, int64_t *restrict zn, int64_t *restrict zd,
                    int32_t *restrict arg, float *restrict dst, int exact)
{
    const int64_t lo = (x > 0) ? x - 1 : 0, hi = (b < n) ? b : n - 1;
    if (b - x > SHORT_RUN) return unit_range(g, lo, hi, x, b - 1, v, zn, zd, arg, dst, exact);
    int64_t big = 0;
    for (int64_t i = x; i < b; ++i) {
        int64_t best = INT64_MAX;
        int32_t bi = NO_SITE;
        for (int64_t s = lo; s <= hi; ++s) {
            if (g[s] == UNIT_NONE) continue;
            const int64_t val = (int64_t)g[s] + (i - s) * (i - s);
            if (val < best) {
                best = val;
                bi = (int32_t)s;
            }
        }
        if (arg) arg[i] = bi;
        if (bi == NO_SITE) {
            dst[i] = INFINITY;
        } else if (exact) {
            dst[i] = unit_dist(best);
        } else {
            dst[i] = (float)best;
            big |= best > ((int64_t)1 << 24);
        }
    }
    return big != 0;
}

#if defined(__SSE2__)
/* Distances only (no sites), for a foreground run [x0, b) with walls on both
 * sides (x0 > 0, b < n) of at most WINDOW_RUN pixels: at each x the nearest
 * wall bounds d2 by wd^2, so only the sites s with |x - s| < wd can do better
 * (they lie inside the run), and those are tried two at a time in doubles,
 * where every quantity is an integer below 2^53 and therefore exact: the
 * minimum is the very integer the envelope finds (only a tie-break between
 * sites could differ, and no site is reported). A site without a column site
 * (UNIT_NONE, i.e. INT32_MAX) never wins against the wall bound, which is at
 * most (UNIT_MAX_SIDE / 2)^2. Same outputs and return value as unit_run with
 * exact = 0. */
#define WINDOW_RUN 48
static int unit_window(const int32_t *restrict g, int64_t x0, int64_t b, float *restrict dst)
{
    int big = 0;
    const __m128d two = _mm_set1_pd(2.0);
    for (int64_t x = x0; x < b; ++x) {
        const int64_t wl = x - (x0 - 1), wr = b - x, wd = wl < wr ? wl : wr;
        int64_t s = x - wd + 1;
        const int64_t e = x + wd;
        const __m128d vx = _mm_set1_pd((double)x);
        __m128d vs = _mm_set_pd((double)(s + 1), (double)s);
        __m128d b0 = _mm_set1_pd((double)(wd * wd)), b1 = b0;
        for (; s + 4 <= e; s += 4) {
            const __m128d g0 = _mm_cvtepi32_pd(_mm_loadl_epi64((const __m128i *)(g + s)));
            const __m128d g1 = _mm_cvtepi32_pd(_mm_loadl_epi64((const __m128i *)(g + s + 2)));
            const __m128d t0 = _mm_sub_pd(vx, vs);
            const __m128d t1 = _mm_sub_pd(t0, two);
            b0 = _mm_min_pd(b0, _mm_add_pd(g0, _mm_mul_pd(t0, t0)));
            b1 = _mm_min_pd(b1, _mm_add_pd(g1, _mm_mul_pd(t1, t1)));
            vs = _mm_add_pd(vs, _mm_add_pd(two, two));
        }
        b0 = _mm_min_pd(b0, b1);
        b0 = _mm_min_sd(b0, _mm_unpackhi_pd(b0, b0));
        double best = _mm_cvtsd_f64(b0);
        for (; s < e; ++s) {
            const double t = (double)(x - s);
            const double val = (double)g[s] + t * t;
            best = val < best ? val : best;
        }
        dst[x] = (float)best;
        big |= best > (double)((int64_t)1 << 24);
    }
    return big;
}
#endif

/* Row envelope and distances of a row of n pixels with column values g. */
static void unit_line(int64_t n, const int32_t *restrict g, int32_t *restrict v,
                      int64_t *restrict zn, int64_t *restrict zd, int32_t *restrict arg,
                      float *restrict dst)
{
    int64_t x = 0;
    while (x < n) {
        /* background run [x, e) */
        const int64_t e = unit_scan(g, x, n, 1);
        if (e > x) {
            memset(dst + x, 0, (size_t)(e - x) * sizeof(float));
            if (arg)
                for (int64_t i = x; i < e; ++i) arg[i] = (int32_t)i;
            x = e;
            if (x >= n) break;
        }
        /* foreground run [x, b) */
        const int64_t b = unit_scan(g, x + 1, n, 0);
        int big;
#if defined(__SSE2__)
        if (!arg && x > 0 && b < n && b - x <= WINDOW_RUN)
            big = unit_window(g, x, b, dst);
        else
#endif
            big = unit_run(n, g, x, b, v, zn, zd, arg, dst, 0);
        if (big) {
            unit_run(n, g, x, b, v, zn, zd, arg, dst, 1);
        } else {
            /* every d2 <= 2^24 is exact in float: sqrtf gives the documented result */
            int64_t i = x;
#if defined(__SSE2__)
            for (; i + 4 <= b; i += 4)
                _mm_storeu_ps(dst + i, _mm_sqrt_ps(_mm_loadu_ps(dst + i)));
#endif
            for (; i < b; ++i) dst[i] = sqrtf(dst[i]);
        }
        x = b;
    }
}

static void row_output_unit(const exact_job *J, int64_t y, int64_t z, scratch *S)
{
    const int64_t w = J->w, h = J->h;
    const int64_t off = (z * h + y) * w;
    int32_t *restrict g = (int32_t *)S->f;
    const int32_t *restrict rny = S->rny, *restrict rnz = S->rnz;
    const int32_t yy = (int32_t)y, zz = (int32_t)z;
    if (J->nz) {
        for (int64_t x = 0; x < w; ++x) {
            const int32_t sy = rny[x], dz = zz - rnz[x], dy = yy - sy;
            const int32_t v = dz * dz + dy * dy;
            g[x] = (sy == NO_SITE) ? UNIT_NONE : v;
        }
    } else {
        for (int64_t x = 0; x < w; ++x) {
            const int32_t sy = rny[x], dy = yy - sy;
            const int32_t v = dy * dy;
            g[x] = (sy == NO_SITE) ? UNIT_NONE : v;
        }
    }
    int32_t *arg = J->nearest ? S->arg : NULL;
    unit_line(w, g, S->v, (int64_t *)S->zn, (int64_t *)S->zd, arg, J->dist + off);
    if (J->nearest) {
        int64_t *nd = J->nearest + off;
        for (int64_t x = 0; x < w; ++x) {
            int32_t a = arg[x];
            if (a == NO_SITE) {
                nd[x] = -1;
            } else {
                int64_t sz = J->nz ? rnz[a] : 0;
                nd[x] = (int64_t)a + w * ((int64_t)rny[a] + h * sz);
            }
        }
    }
}

/* Pass C for row (y, z), whose sites' y (and z in 3D) are in S->rny (S->rnz):
 * envelope along x, then the outputs. */
static void row_output(const exact_job *J, int64_t y, int64_t z, scratch *S)
{
    if (J->unit) {
        row_output_unit(J, y, z, S);
        return;
    }
    const int64_t w = J->w, h = J->h;
    const int64_t off = (z * h + y) * w;
    double *f = S->f;
    const int32_t *rny = S->rny, *rnz = S->rnz;
    const double hy = J->hy, hz = J->hz;
    const int32_t yy = (int32_t)y, zz = (int32_t)z;
    if (J->nz) {
        for (int64_t x = 0; x < w; ++x) {
            const int32_t sy = rny[x], sz = rnz[x];
            double tz = (double)(zz - sz) * hz;
            double ty = (double)(yy - sy) * hy;
            double v = tz * tz + ty * ty;
            f[x] = (sy == NO_SITE) ? INFINITY : v;
        }
    } else {
        for (int64_t x = 0; x < w; ++x) {
            const int32_t sy = rny[x];
            double ty = (double)(yy - sy) * hy;
            double v = ty * ty;
            f[x] = (sy == NO_SITE) ? INFINITY : v;
        }
    }
    envelope_line(w, f, J->hx, S->walls, S->v, S->zn, S->zd, S->arg, S->d2);
    float *dst = J->dist + off;
    const double *d2 = S->d2;
    for (int64_t x = 0; x < w; ++x) dst[x] = (float)sqrt(d2[x]);
    if (J->nearest) {
        int64_t *nd = J->nearest + off;
        const int32_t *arg = S->arg;
        for (int64_t x = 0; x < w; ++x) {
            int32_t a = arg[x];
            if (a == NO_SITE) {
                nd[x] = -1;
            } else {
                int64_t sz = J->nz ? rnz[a] : 0;
                nd[x] = (int64_t)a + w * ((int64_t)rny[a] + h * sz);
            }
        }
    }
}

/* ---- 2D: pass A in horizontal bands, fused with pass C. ----
 * Step 1 (per band): forward sweep inside the band (NO_SITE where no
 * background lies above within the band), and the first background row of
 * every column of the band (into carry_down, temporarily).
 * Step 2 (serial, nbands x w): turn the per-band last/first rows into the
 * nearest background row above / below each band.
 * Step 3 (per band, bottom to top): backward sweep that completes each row's
 * column sites, then the row's envelope and outputs while it is hot.
 * The forward values of row y are kept at the start of the dist row y itself
 * (which step 3 overwrites only after reading them), as int16 when every row
 * index fits (h <= UNIT_MAX_SIDE: half the memory traffic of the image-sized
 * intermediate), else as int32. */

#define DEFINE_BAND_FORWARD(T, M, NAME)                                                   \
    static void NAME##_row(const T *restrict r, const M *restrict p, M *restrict o,       \
                           int32_t *restrict first, int32_t yy, int64_t w)                \
    {                                                                                     \
        for (int64_t i = 0; i < w; ++i) {                                                 \
            /* all-ones masks keep the loop free of branches */                           \
            const int32_t bg = -(int32_t)(r[i] == 0);                                     \
            const int32_t pv = p[i], fi = first[i];                                       \
            const int32_t c = bg & -(int32_t)(fi == NO_SITE);                             \
            o[i] = (M)((yy & bg) | (pv & ~bg));                                           \
            first[i] = (yy & c) | (fi & ~c);                                              \
        }                                                                                 \
    }                                                                                     \
    static void NAME(const T *in, int64_t w, int64_t y0, int64_t y1, int32_t *map,        \
                     int32_t *first, int32_t *last)                                       \
    {                                                                                     \
        const T *r = in + y0 * w;                                                         \
        M *o = (M *)(map + y0 * w);                                                       \
        const int32_t yy = (int32_t)y0;                                                   \
        for (int64_t i = 0; i < w; ++i) {                                                 \
            const int32_t bg = -(int32_t)(r[i] == 0);                                     \
            const int32_t v = (yy & bg) | (NO_SITE & ~bg);                                \
            o[i] = (M)v;                                                                  \
            first[i] = v;                                                                 \
        }                                                                                 \
        for (int64_t y = y0 + 1; y < y1; ++y)                                             \
            NAME##_row(in + y * w, (const M *)(map + (y - 1) * w), (M *)(map + y * w),    \
                       first, (int32_t)y, w);                                             \
        /* per column, the band's last background row */                                 \
        const M *l = (const M *)(map + (y1 - 1) * w);                                     \
        for (int64_t i = 0; i < w; ++i) last[i] = l[i];                                   \
    }

#define DEFINE_BAND_BACKWARD(T, M, NAME)                                                  \
    static void NAME(const T *in, int64_t w, int64_t y, const M *restrict ny,             \
                     const int32_t *restrict up0, int32_t *restrict below,                \
                     int32_t *restrict rny)                                               \
    {                                                                                     \
        const T *restrict r = in + y * w;                                                 \
        const int32_t yy = (int32_t)y;                                                    \
        for (int64_t i = 0; i < w; ++i) {                                                 \
            const int32_t bg = -(int32_t)(r[i] == 0);                                     \
            const int32_t bv = below[i], nv = ny[i], uv = up0[i];                         \
            const int32_t b = (yy & bg) | (bv & ~bg);                                     \
            const int32_t nn = -(int32_t)(nv == NO_SITE);                                 \
            const int32_t u = (uv & nn) | (nv & ~nn);                                     \
            below[i] = b;                                                                 \
            const int32_t take = -(int32_t)((b != NO_SITE) &                              \
                                            ((u == NO_SITE) | (b - yy < yy - u)));        \
            rny[i] = (b & take) | (u & ~take);                                            \
        }                                                                                 \
    }

/* The map shares its memory with the float distances: accessed through types
 * that may alias anything, so that no compiler moves a distance store above a
 * map load (or the reverse) on the grounds that the types differ. */
#if defined(__GNUC__)
typedef int16_t __attribute__((__may_alias__)) map16;
typedef int32_t __attribute__((__may_alias__)) map32;
#else
typedef int16_t map16;
typedef int32_t map32;
#endif

DEFINE_BAND_FORWARD(uint8_t, map16, band_forward_u8_s16)
DEFINE_BAND_FORWARD(uint16_t, map16, band_forward_u16_s16)
DEFINE_BAND_FORWARD(float, map16, band_forward_f32_s16)
DEFINE_BAND_FORWARD(uint8_t, map32, band_forward_u8_s32)
DEFINE_BAND_FORWARD(uint16_t, map32, band_forward_u16_s32)
DEFINE_BAND_FORWARD(float, map32, band_forward_f32_s32)
DEFINE_BAND_BACKWARD(uint8_t, map16, band_backward_u8_s16)
DEFINE_BAND_BACKWARD(uint16_t, map16, band_backward_u16_s16)
DEFINE_BAND_BACKWARD(float, map16, band_backward_f32_s16)
DEFINE_BAND_BACKWARD(uint8_t, map32, band_backward_u8_s32)
DEFINE_BAND_BACKWARD(uint16_t, map32, band_backward_u16_s32)
DEFINE_BAND_BACKWARD(float, map32, band_backward_f32_s32)

static void band_rows(const exact_job *J, int64_t b, int64_t *y0, int64_t *y1)
{
    *y0 = b * J->h / J->nbands;
    *y1 = (b + 1) * J->h / J->nbands;
}

static int band_map16(const exact_job *J) { return J->h <= UNIT_MAX_SIDE; }

static void band_step1(const exact_job *J, int64_t b)
{
    int64_t y0, y1;
    band_rows(J, b, &y0, &y1);
    const int64_t w = J->w;
    int32_t *first = J->carry_down + b * w, *last = J->carry_up + b * w;
    const void *in = J->bin->ptr;
    if (band_map16(J)) {
        switch (J->bin->type) {
        case IWPP_U8: band_forward_u8_s16((const uint8_t *)in, w, y0, y1, J->ny, first, last); break;
        case IWPP_U16: band_forward_u16_s16((const uint16_t *)in, w, y0, y1, J->ny, first, last); break;
        default: band_forward_f32_s16((const float *)in, w, y0, y1, J->ny, first, last); break;
        }
    } else {
        switch (J->bin->type) {
        case IWPP_U8: band_forward_u8_s32((const uint8_t *)in, w, y0, y1, J->ny, first, last); break;
        case IWPP_U16: band_forward_u16_s32((const uint16_t *)in, w, y0, y1, J->ny, first, last); break;
        default: band_forward_f32_s32((const float *)in, w, y0, y1, J->ny, first, last); break;
        }
    }
}

static void band_step2(const exact_job *J)
{
    const int64_t w = J->w, nb = J->nbands;
    /* carry_up[b] := last background row strictly above band b */
    for (int64_t i = 0; i < w; ++i) {
        int32_t run = NO_SITE;
        for (int64_t b = 0; b < nb; ++b) {
            int32_t last = J->carry_up[b * w + i];
            J->carry_up[b * w + i] = run;
            if (last != NO_SITE) run = last;
        }
        run = NO_SITE;
        for (int64_t b = nb - 1; b >= 0; --b) {
            int32_t first = J->carry_down[b * w + i];
            J->carry_down[b * w + i] = run;
            if (first != NO_SITE) run = first;
        }
    }
}

static void band_step3(const exact_job *J, int64_t b, scratch *S)
{
    int64_t y0, y1;
    band_rows(J, b, &y0, &y1);
    const int64_t w = J->w;
    const int32_t *up0 = J->carry_up + b * w;
    const void *in = J->bin->ptr;
    const int m16 = band_map16(J);
    memcpy(S->below, J->carry_down + b * w, (size_t)w * sizeof(int32_t));
    for (int64_t y = y1 - 1; y >= y0; --y) {
        /* the band's forward values of row y, all read (into S->rny) before row_output
         * overwrites the row with distances */
        const map32 *fwd = (const map32 *)(J->ny + y * w);
        int32_t *below = S->below, *rny = S->rny;
        if (m16) {
            const map16 *f16 = (const map16 *)fwd;
            switch (J->bin->type) {
            case IWPP_U8: band_backward_u8_s16((const uint8_t *)in, w, y, f16, up0, below, rny); break;
            case IWPP_U16: band_backward_u16_s16((const uint16_t *)in, w, y, f16, up0, below, rny); break;
            default: band_backward_f32_s16((const float *)in, w, y, f16, up0, below, rny); break;
            }
        } else {
            switch (J->bin->type) {
            case IWPP_U8: band_backward_u8_s32((const uint8_t *)in, w, y, fwd, up0, below, rny); break;
            case IWPP_U16: band_backward_u16_s32((const uint16_t *)in, w, y, fwd, up0, below, rny); break;
            default: band_backward_f32_s32((const float *)in, w, y, fwd, up0, below, rny); break;
            }
        }
        row_output(J, y, 0, S);
    }
}

/* ---- 3D ---- */

/* Pass B (3D) for the block of columns x0 <= x < x0 + bw of slice z. */
static void exact_colblock(const exact_job *J, int64_t z, int64_t x0, int64_t bw, scratch *S)
{
    const int64_t w = J->w, h = J->h;
    int32_t *nzc = S->nzc, *argc = S->argc;
    double *fc = S->fc;
    for (int64_t y = 0; y < h; ++y) {
        const int32_t *src = J->nz + (z * h + y) * w + x0;
        for (int64_t j = 0; j < bw; ++j) nzc[j * h + y] = src[j];
    }
    for (int64_t j = 0; j < bw; ++j) {
        double *f = fc + j * h;
        const int32_t *c = nzc + j * h;
        for (int64_t y = 0; y < h; ++y) {
            double tz = (double)(z - c[y]) * J->hz;
            f[y] = (c[y] == NO_SITE) ? INFINITY : tz * tz;
        }
        envelope_line(h, f, J->hy, S->walls, S->v, S->zn, S->zd, argc + j * h, NULL);
    }
    for (int64_t y = 0; y < h; ++y) {
        int32_t *dy = J->ny + (z * h + y) * w + x0;
        int32_t *dz = J->nz + (z * h + y) * w + x0;
        for (int64_t j = 0; j < bw; ++j) {
            int32_t a = argc[j * h + y];
            dy[j] = a;
            dz[j] = (a == NO_SITE) ? NO_SITE : nzc[j * h + a];
        }
    }
}

static iwpp_status enomem_scratch(iwpp_context *ctx, int nt, int64_t w, int64_t h)
{
    int64_t m = (w > h ? w : h);
    return iwpp_set_error(ctx, IWPP_ENOMEM,
                          "distance transform: cannot allocate the per-thread scratch lines "
                          "(%d threads, about %.1f KiB each); free memory or use fewer threads",
                          nt, (double)(m * (40 + 12 * COLS_PER_BLOCK)) / 1024.0);
}

/* The parallel loops of edt_exact: items handed out on demand (cpu/pool.h). */
typedef struct edt_par {
    exact_job *J;
    scratch *SS;
    int64_t chunk, len, nxb;
} edt_par;

static void par_band_step1(void *arg, int64_t i0, int64_t i1, int worker)
{
    const edt_par *P = (const edt_par *)arg;
    (void)worker;
    for (int64_t b = i0; b < i1; ++b) band_step1(P->J, b);
}

static void par_band_step3(void *arg, int64_t i0, int64_t i1, int worker)
{
    const edt_par *P = (const edt_par *)arg;
    for (int64_t b = i0; b < i1; ++b) band_step3(P->J, b, &P->SS[worker]);
}

static void par_pass_a(void *arg, int64_t i0, int64_t i1, int worker)
{
    const edt_par *P = (const edt_par *)arg;
    const exact_job *J = P->J;
    (void)worker;
    for (int64_t c = i0; c < i1; ++c) {
        int64_t a0 = c * P->chunk, a1 = a0 + P->chunk < P->len ? a0 + P->chunk : P->len;
        pass_outer(J->bin->ptr, J->bin->type, P->len, J->d, a0, a1, J->nz);
    }
}

static void par_pass_b(void *arg, int64_t i0, int64_t i1, int worker)
{
    const edt_par *P = (const edt_par *)arg;
    const exact_job *J = P->J;
    for (int64_t t = i0; t < i1; ++t) {
        int64_t z = t / P->nxb, x0 = (t % P->nxb) * COLS_PER_BLOCK;
        int64_t bw = J->w - x0 < COLS_PER_BLOCK ? J->w - x0 : COLS_PER_BLOCK;
        exact_colblock(J, z, x0, bw, &P->SS[worker]);
    }
}

static void par_pass_c(void *arg, int64_t i0, int64_t i1, int worker)
{
    const edt_par *P = (const edt_par *)arg;
    const exact_job *J = P->J;
    scratch *S = &P->SS[worker];
    for (int64_t r = i0; r < i1; ++r) {
        const int64_t y = r % J->h, z = r / J->h;
        memcpy(S->rny, J->ny + r * J->w, (size_t)J->w * sizeof(int32_t));
        memcpy(S->rnz, J->nz + r * J->w, (size_t)J->w * sizeof(int32_t));
        row_output(J, y, z, S);
    }
}

static iwpp_status edt_exact(iwpp_context *ctx, const iwpp_buf *bin, const double spacing[3],
                             iwpp_buf *dist, iwpp_buf *nearest)
{
    const int64_t w = bin->w, h = bin->h, d = bin->d;
    const int nt = iwpp_cpu_threads_for(ctx, w * h * d, EDT_PX_PER_THREAD);
    exact_job J;
    memset(&J, 0, sizeof J);
    J.bin = bin;
    J.w = w;
    J.h = h;
    J.d = d;
    J.hx = spacing[0];
    J.hy = spacing[1];
    J.hz = spacing[2];
    J.dist = (float *)dist->ptr;
    J.ny = (int32_t *)dist->ptr; /* the float output doubles as the int32 site map */
    J.nearest = nearest ? (int64_t *)nearest->ptr : NULL;
    J.unit = J.hx == 1.0 && J.hy == 1.0 && (d == 1 || J.hz == 1.0) && w <= UNIT_MAX_SIDE &&
             h <= UNIT_MAX_SIDE && d <= UNIT_MAX_SIDE;

    /* Everything that can fail comes first: dist and nearest may be the caller's views. */
    scratch *SS = scratch_set_alloc(nt, w, h, d > 1);
    if (!SS) return enomem_scratch(ctx, nt, w, h);

    if (d == 1) {
        /* 8 bands per thread: the dynamic schedule then keeps both steps balanced when other
         * processes take a core for a while */
        int64_t nb = (int64_t)nt * 8;
        if (nb > h) nb = h;
        if (nb < 1) nb = 1;
        J.nbands = nb;
        J.carry_up = (int32_t *)malloc((size_t)(nb * w) * sizeof(int32_t));
        J.carry_down = (int32_t *)malloc((size_t)(nb * w) * sizeof(int32_t));
        if (!J.carry_up || !J.carry_down) {
            free(J.carry_up);
            free(J.carry_down);
            scratch_set_free(SS, nt);
            return iwpp_set_error(ctx, IWPP_ENOMEM,
                                  "distance transform: cannot allocate %.1f MiB of host memory "
                                  "for the band borders; free memory or use fewer threads",
                                  (double)(nb * w) * 8.0 / 1048576.0);
        }
        edt_par P = {&J, SS, 0, 0, 0};
        iwpp_par_for(nt, nb, 1, par_band_step1, &P);
        band_step2(&J);
        iwpp_par_for(nt, nb, 1, par_band_step3, &P);
        free(J.carry_up);
        free(J.carry_down);
    } else {
        J.nz = (int32_t *)malloc((size_t)(w * h * d) * sizeof(int32_t));
        if (!J.nz) {
            scratch_set_free(SS, nt);
            return iwpp_set_error(ctx, IWPP_ENOMEM,
                                  "distance transform: cannot allocate %.1f MiB of host memory "
                                  "for the z-site map of a %lldx%lldx%lld image; free memory or "
                                  "use a smaller image",
                                  (double)(w * h * d) * 4.0 / 1048576.0, (long long)w,
                                  (long long)h, (long long)d);
        }
        const int64_t len = w * h;
        int64_t chunk = (len + nt - 1) / nt;
        if (chunk < 256) chunk = 256;
        chunk = (chunk + 15) / 16 * 16;
        const int64_t nchunks = (len + chunk - 1) / chunk;
        const int64_t nxb = (w + COLS_PER_BLOCK - 1) / COLS_PER_BLOCK;
        const int64_t tasks = nxb * d, rows = h * d;
        edt_par P = {&J, SS, 0, 0, 0};
        P.chunk = chunk;
        P.len = len;
        P.nxb = nxb;
        /* Three passes, each complete before the next starts (the workers are joined). */
        iwpp_par_for(nt, nchunks, 1, par_pass_a, &P);
        iwpp_par_for(nt, tasks, 4, par_pass_b, &P);
        iwpp_par_for(nt, rows, 16, par_pass_c, &P);
        free(J.nz);
    }
    scratch_set_free(SS, nt);
    snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "%s", "edt-exact-separable");
    ctx->stats.pixels_visited = 0;
    ctx->stats.rounds = (d > 1) ? 3 : 2;
    return IWPP_OK;
}

/* ------------------------------------------------------------------------ */
/* Danielsson by IWPP propagation. */

typedef struct site3 {
    int32_t x, y, z; /* x < 0: no site yet ("infinitely far") */
} site3;

typedef struct fifo {
    int64_t *a;  /* linear pixel indices */
    size_t cap;  /* power of two */
    size_t head; /* next to pop */
    size_t size;
} fifo;

static int fifo_push(fifo *q, int64_t v)
{
    if (q->size == q->cap) {
        size_t ncap = q->cap * 2;
        int64_t *na = (int64_t *)malloc(ncap * sizeof(int64_t));
        if (!na) return 0;
        /* unwrap into the new array */
        size_t first = q->cap - q->head;
        if (first > q->size) first = q->size;
        memcpy(na, q->a + q->head, first * sizeof(int64_t));
        memcpy(na + first, q->a, (q->size - first) * sizeof(int64_t));
        free(q->a);
        q->a = na;
        q->cap = ncap;
        q->head = 0;
    }
    q->a[(q->head + q->size) & (q->cap - 1)] = v;
    q->size++;
    return 1;
}

static inline double site_d2(const site3 *s, int64_t x, int64_t y, int64_t z, double hx,
                             double hy, double hz)
{
    double tz = (double)(z - s->z) * hz;
    double ty = (double)(y - s->y) * hy;
    double tx = (double)(x - s->x) * hx;
    return (tz * tz + ty * ty) + tx * tx;
}

static inline int is_bg(const void *p, iwpp_type t, int64_t i)
{
    switch (t) {
    case IWPP_U8: return ((const uint8_t *)p)[i] == 0;
    case IWPP_U16: return ((const uint16_t *)p)[i] == 0;
    default: return ((const float *)p)[i] == 0.0f;
    }
}

/* Distances (and nearest indices) from the final sites, rows i0..i1-1. */
typedef struct dan_out {
    const site3 *vr;
    float *dst;
    int64_t *nd;
    int64_t w, h;
    double hx, hy, hz;
} dan_out;

static void dan_out_rows(void *arg, int64_t r0, int64_t r1, int worker)
{
    const dan_out *O = (const dan_out *)arg;
    const int64_t w = O->w, h = O->h;
    (void)worker;
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t y = r % h, z = r / h;
        for (int64_t x = 0; x < w; ++x) {
            const int64_t i = r * w + x;
            const site3 *s = &O->vr[i];
            if (s->x < 0) {
                O->dst[i] = INFINITY;
                if (O->nd) O->nd[i] = -1;
            } else {
                O->dst[i] = (float)sqrt(site_d2(s, x, y, z, O->hx, O->hy, O->hz));
                if (O->nd) O->nd[i] = (int64_t)s->x + w * ((int64_t)s->y + h * (int64_t)s->z);
            }
        }
    }
}

/* Sites of the background pixels; the background pixels next to the foreground queued (the
 * contour). Returns 0 when the queue cannot grow. */
static int dan_init(const iwpp_buf *bin, const int off[26][3], int nn, site3 *vr, fifo *q)
{
    const int64_t w = bin->w, h = bin->h, d = bin->d;
    for (int64_t z = 0; z < d; ++z)
        for (int64_t y = 0; y < h; ++y)
            for (int64_t x = 0; x < w; ++x) {
                int64_t i = x + w * (y + h * z);
                if (!is_bg(bin->ptr, bin->type, i)) {
                    vr[i].x = -1;
                    vr[i].y = -1;
                    vr[i].z = -1;
                    continue;
                }
                vr[i].x = (int32_t)x;
                vr[i].y = (int32_t)y;
                vr[i].z = (int32_t)z;
                for (int k = 0; k < nn; ++k) {
                    int64_t qx = x + off[k][0], qy = y + off[k][1], qz = z + off[k][2];
                    if (qx < 0 || qx >= w || qy < 0 || qy >= h || qz < 0 || qz >= d) continue;
                    if (!is_bg(bin->ptr, bin->type, qx + w * (qy + h * qz))) {
                        if (!fifo_push(q, i)) return 0;
                        break;
                    }
                }
            }
    return 1;
}

/* The propagation: a popped pixel offers its site to each neighbour, which takes it when it is
 * closer than its own (and is queued again). Returns the pops, or -1 when the queue cannot grow. */
static int64_t dan_propagate(int64_t w, int64_t h, int64_t d, const double sp[3], const int off[26][3], int nn,
                             site3 *vr, fifo *q)
{
    int64_t pops = 0;
    while (q->size > 0) {
        int64_t p = q->a[q->head];
        q->head = (q->head + 1) & (q->cap - 1);
        q->size--;
        pops++;
        const int64_t px = p % w, py = (p / w) % h, pz = p / (w * h);
        const site3 s = vr[p];
        for (int k = 0; k < nn; ++k) {
            int64_t qx = px + off[k][0], qy = py + off[k][1], qz = pz + off[k][2];
            if (qx < 0 || qx >= w || qy < 0 || qy >= h || qz < 0 || qz >= d) continue;
            int64_t qi = qx + w * (qy + h * qz);
            site3 *t = &vr[qi];
            double dn = site_d2(&s, qx, qy, qz, sp[0], sp[1], sp[2]);
            if (t->x < 0 || dn < site_d2(t, qx, qy, qz, sp[0], sp[1], sp[2])) {
                *t = s;
                if (!fifo_push(q, qi)) return -1;
            }
        }
    }
    return pops;
}

static iwpp_status edt_danielsson(iwpp_context *ctx, const iwpp_buf *bin,
                                  const double spacing[3], iwpp_buf *dist, iwpp_buf *nearest)
{
    const int64_t w = bin->w, h = bin->h, d = bin->d, n = w * h * d;
    int off[26][3];
    const int nn = iwpp_neighbors(26, d == 1, off);
    site3 *vr = (site3 *)malloc((size_t)n * sizeof(site3));
    fifo q;
    q.cap = 1024;
    q.head = 0;
    q.size = 0;
    q.a = (int64_t *)malloc(q.cap * sizeof(int64_t));
    if (!vr || !q.a) {
        free(vr);
        free(q.a);
        return iwpp_set_error(ctx, IWPP_ENOMEM,
                              "Danielsson distance transform: cannot allocate %.1f MiB of host "
                              "memory for the nearest-site map; free memory or use the exact "
                              "method on a smaller image",
                              (double)n * (double)sizeof(site3) / 1048576.0);
    }
    const int64_t pops = dan_init(bin, (const int(*)[3])off, nn, vr, &q)
                             ? dan_propagate(w, h, d, spacing, (const int(*)[3])off, nn, vr, &q)
                             : -1;
    if (pops < 0) {
        size_t cap = q.cap;
        free(vr);
        free(q.a);
        return iwpp_set_error(ctx, IWPP_ENOMEM,
                              "Danielsson distance transform: cannot grow the propagation "
                              "queue beyond %zu entries (%.1f MiB); free memory or use the "
                              "exact method",
                              cap, (double)cap * 8.0 / 1048576.0);
    }
    /* Distances from the final sites. */
    dan_out O = {vr, (float *)dist->ptr, nearest ? (int64_t *)nearest->ptr : NULL, w, h,
                 spacing[0], spacing[1], spacing[2]};
    iwpp_par_for(iwpp_cpu_threads_for(ctx, n, EDT_PX_PER_THREAD), h * d, 16, dan_out_rows, &O);
    free(vr);
    free(q.a);
    snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "%s", "edt-danielsson");
    ctx->stats.pixels_visited = pops;
    ctx->stats.rounds = 0;
    return IWPP_OK;
}

iwpp_status iwpp_cpu_edt(iwpp_context *ctx, const iwpp_buf *binary, iwpp_edt_method method,
                         const double spacing[3], iwpp_buf *dist, iwpp_buf *nearest)
{
    const int64_t lim = (int64_t)INT32_MAX - 1;
    if (binary->w > lim || binary->h > lim || binary->d > lim)
        return iwpp_set_error(ctx, IWPP_EUNSUPPORTED,
                              "distance transform on the CPU: each image side must be at most "
                              "%lld pixels, but the image is %lldx%lldx%lld",
                              (long long)lim, (long long)binary->w, (long long)binary->h,
                              (long long)binary->d);
    if (binary->type != IWPP_U8 && binary->type != IWPP_U16 && binary->type != IWPP_F32)
        return iwpp_set_error(ctx, IWPP_EINTERNAL,
                              "distance transform on the CPU: input type %s reached the backend",
                              iwpp_type_name(binary->type));
    double t0 = iwpp_now_ms();
    iwpp_status st = (method == IWPP_EDT_DANIELSSON)
                         ? edt_danielsson(ctx, binary, spacing, dist, nearest)
                         : edt_exact(ctx, binary, spacing, dist, nearest);
    if (st == IWPP_OK) ctx->stats.compute_ms = iwpp_now_ms() - t0;
    return st;
}
