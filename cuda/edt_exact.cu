/*
 * edt_exact.cu - the exact Euclidean distance transform on CUDA (and the entry point of both
 * EDT methods; the Danielsson method is in edt_danielsson.cu).
 *
 * IWPP_EDT_EXACT: the separable transform of native/cpu/edt.c, pass for pass, with the same
 * double arithmetic in the same order (this file is compiled with -fmad=false so that no
 * multiply-add is fused), so the distances equal the CPU's bit for bit:
 *   A. along the outer axis (y in 2D, z in 3D): nearest background on the line, forward and
 *      backward sweeps, one thread per (column, segment of 128), coalesced;
 *   B. (3D) along y (edt_cols): one block per tile of up to 32 columns (x) of a slice, the
 *      banded envelopes of pass C in shared memory, one area per column; columns too tall for
 *      shared memory (h above ~24000 on Hopper) take the multi-block kernels below;
 *   C. along x: one block per row (edt_rows): banded lower envelopes in shared memory, each pixel
 *      takes the smallest d2 over its own band and the bands beside it that can still be closer,
 *      then dist = (float)sqrt(d2) and the nearest index. Rows too wide for shared memory (and
 *      rows of 16384 pixels or more, where that is faster) take the multi-block kernels:
 *   B/C for long lines (edt_wbuild, edt_wsmin, edt_wquery): the same bands, a line cut into
 *      segments of 128 bands, one block per (line, segment); the band tables (envelope stacks,
 *      counts, minima, superband minima) go through global memory, so a pixel reaches bands of
 *      other segments there; same candidates, same d2, same sites as the one-block kernels.
 *      IWPP_CUDA_EDT_WIDE=N forces them with segments of N pixels, 0 disables them (then long
 *      lines take one thread per line, the older kernels edt_pass_y3 / edt_pass_x).
 * 3D images with unit spacing take none of the above but the lines path (edt_x1d, edt_lines_y,
 * edt_lines_out; the solver in edt_lines.cuh): passes x, y, z, one thread per line, in integers.
 * 2D images with unit spacing take the column bands (edt_x1d, edt_cb_hull, edt_cb_merge,
 * edt_cb_colour; the solver in edt_colbands.cuh): pass x, then each column's envelope by bands.
 * One-thread-per-line envelopes keep their stacks (v, zn, zd) in device scratch laid out
 * [element][line], so that the threads of a warp (consecutive lines) touch consecutive words;
 * lines are processed in batches that bound the scratch.
 *
 * IWPP_EDT_DANIELSSON: edt_danielsson.cu.
 *
 * Size: about 1400 lines: every kernel of the exact transform and its launches in one translation
 * unit (the launches need the kernel templates); host code: plan_exact chooses the paths,
 * plan_layout the scratch, shape_* the launch shapes, run_* launch.
 */
#include "mlqueue.cuh"
#include "edt_colbands.cuh"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_SITE (-1)

template <typename T> __device__ __forceinline__ bool is_bg(const T *p, int64_t i) { return p[i] == (T)0; }

/* Pass A: nearest background plane along the outer axis of `count` planes of `len` contiguous
 * lines (2D: len = w, count = h; 3D: len = w*h, count = d): out[k*len + i] = the nearest k' with
 * in[k'*len + i] background (ties: the smaller k', as the CPU's sweeps), or NO_SITE.
 * Columns are cut into segments of SEG_A planes so that len*nseg threads share the work:
 * A1 records each segment's first and last background plane, A2 writes its segment once from a
 * mask of its background planes and the nearest background above and below found from those
 * summaries (2D merged rows: as uint16, half the bytes for pass C to read). */
#define SEG_A 128

template <typename T>
__global__ void edt_pass_a1(const T *__restrict__ in, int64_t len, int64_t count, int64_t nseg,
                            int32_t *__restrict__ first, int32_t *__restrict__ last)
{
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < len * nseg; t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t i = t % len, sg = t / len;
        const int64_t k0 = sg * SEG_A, k1 = k0 + SEG_A < count ? k0 + SEG_A : count;
        int32_t f = NO_SITE, l = NO_SITE;
        for (int64_t k = k0; k < k1; ++k)
            if (is_bg(in, k * len + i)) {
                if (f == NO_SITE) f = (int32_t)k;
                l = (int32_t)k;
            }
        first[t] = f;
        last[t] = l;
    }
}

/* The segment's background planes as a 128-bit mask (two words): the first set bit at or after
 * j (0..SEG_A), or -1. */
__device__ __forceinline__ int seg_next_bg(uint64_t lo, uint64_t hi, int j)
{
    if (j < 64) {
        const uint64_t m = lo >> j;
        if (m) return j + __ffsll((long long)m) - 1;
        j = 64;
    }
    if (j >= 128) return -1;
    const uint64_t m = hi >> (j - 64);
    return m ? j + __ffsll((long long)m) - 1 : -1;
}

/* A2: each pixel's nearest background plane, the nearer of the one at or above (ties) and the one
 * below, written once; the segment's background planes are read once into a mask. M: int32_t, or
 * uint16_t for 2D maps (NO_SITE as 0xFFFF: edt_rows_env reads them so). */
template <typename T, typename M>
__global__ void edt_pass_a2(const T *__restrict__ in, int64_t len, int64_t count, int64_t nseg,
                            const int32_t *__restrict__ first, const int32_t *__restrict__ last,
                            M *__restrict__ out)
{
    static_assert(SEG_A == 128, "the mask holds 128 planes");
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < len * nseg; t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t i = t % len, sg = t / len;
        const int64_t k0 = sg * SEG_A, k1 = k0 + SEG_A < count ? k0 + SEG_A : count;
        int32_t above = NO_SITE, below = NO_SITE;
        for (int64_t s = sg - 1; s >= 0 && above == NO_SITE; --s) above = last[s * len + i];
        for (int64_t s = sg + 1; s < nseg && below == NO_SITE; ++s) below = first[s * len + i];
        uint64_t lo = 0, hi = 0;
        for (int64_t k = k0; k < k1; ++k) {
            const int j = (int)(k - k0);
            if (is_bg(in, k * len + i)) {
                if (j < 64)
                    lo |= (uint64_t)1 << j;
                else
                    hi |= (uint64_t)1 << (j - 64);
            }
        }
        int32_t prev = above;
        int nj = seg_next_bg(lo, hi, 0);
        for (int64_t k = k0; k < k1; ++k) {
            const int j = (int)(k - k0);
            if (nj >= 0 && nj < j) nj = seg_next_bg(lo, hi, j);
            const int32_t kk = (int32_t)k, nxt = nj >= 0 ? (int32_t)(k0 + nj) : below;
            if (nj == j) prev = kk;
            const bool take = (nxt != NO_SITE) && ((prev == NO_SITE) || (nxt - kk < kk - prev));
            const int32_t site = take ? nxt : prev;
            out[k * len + i] = site == NO_SITE ? (M)NO_SITE : (M)site;
        }
    }
}

/* The lower envelope of native/cpu/edt.c (envelope_line), for one line whose f values are given
 * by F(i) (a device functor), with the stacks at v[k*L], zn[k*L], zd[k*L]. Calls out(i, p, d2)
 * for every i, p = NO_SITE if the line has no site. Same arithmetic, same order as the CPU. */
template <class F, class OUT>
__device__ __forceinline__ void envelope(int64_t n, const F &f, double h, int32_t *v, double *zn, double *zd,
                                         int64_t L, const OUT &out)
{
    const double h2 = h * h;
    int64_t k = -1;
    for (int64_t q = 0; q < n; ++q) {
        const double fq = f(q);
        if (fq == INFINITY) continue;
        double num = 0.0, den = 1.0;
        while (k >= 0) {
            const int64_t p = v[k * L];
            num = (fq - f(p)) + h2 * (double)((q - p) * (q + p));
            den = 2.0 * h2 * (double)(q - p);
            if (k == 0 || num * zd[k * L] > zn[k * L] * den) break;
            --k;
        }
        ++k;
        v[k * L] = (int32_t)q;
        zn[k * L] = num;
        zd[k * L] = den;
    }
    if (k < 0) {
        for (int64_t i = 0; i < n; ++i) out(i, (int64_t)NO_SITE, (double)INFINITY);
        return;
    }
    const int64_t top = k;
    k = 0;
    int64_t p = v[0];
    double fp = f(p);
    for (int64_t i = 0; i < n; ++i) {
        double t = (double)(i - p) * h;
        double cur = fp + t * t;
        while (k < top) {
            const int64_t pn = v[(k + 1) * L];
            double tn = (double)(i - pn) * h;
            const double fpn = f(pn);
            double nxt = fpn + tn * tn;
            if (nxt > cur) break;
            ++k;
            p = pn;
            fp = fpn;
            cur = nxt;
        }
        out(i, p, cur);
    }
}

/* f along y for pass B: from the z sites of column (x, z). */
struct f_colz {
    const int32_t *nz;
    int64_t base, stride, z;
    double hz;
    __device__ __forceinline__ double operator()(int64_t y) const
    {
        const int32_t c = nz[base + y * stride];
        if (c == NO_SITE) return INFINITY;
        const double tz = (double)(z - c) * hz;
        return tz * tz;
    }
};
struct out_colz {
    const int32_t *nz;
    int32_t *ny2, *nz2;
    int64_t base, stride;
    __device__ __forceinline__ void operator()(int64_t y, int64_t a, double) const
    {
        ny2[base + y * stride] = (int32_t)a;
        nz2[base + y * stride] = a == NO_SITE ? NO_SITE : nz[base + a * stride];
    }
};

__global__ void edt_pass_y3(const int32_t *nz, int32_t *ny2, int32_t *nz2, int64_t w, int64_t h, int64_t line0,
                            int64_t nlines, double hy, double hz, int32_t *v, double *zn, double *zd)
{
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nlines) return;
    const int64_t line = line0 + t, x = line % w, z = line / w;
    f_colz f;
    f.nz = nz;
    f.base = x + w * h * z;
    f.stride = w;
    f.z = z;
    f.hz = hz;
    out_colz o;
    o.nz = nz;
    o.ny2 = ny2;
    o.nz2 = nz2;
    o.base = f.base;
    o.stride = w;
    envelope(h, f, hy, v + t, zn + t, zd + t, nlines, o);
}

/* f along x for pass C: from the y (and z) sites of row (y, z). */
struct f_row {
    const int32_t *ny, *nz;
    int64_t base, y, z;
    double hy, hz;
    __device__ __forceinline__ double operator()(int64_t x) const
    {
        const int32_t cy = ny[base + x];
        if (cy == NO_SITE) return INFINITY;
        if (nz) {
            const double tz = (double)(z - nz[base + x]) * hz;
            const double ty = (double)(y - cy) * hy;
            return tz * tz + ty * ty;
        }
        const double ty = (double)(y - cy) * hy;
        return ty * ty;
    }
};
struct out_row {
    const int32_t *ny, *nz;
    float *dist;
    int64_t *nearest;
    int64_t base, w, h;
    __device__ __forceinline__ void operator()(int64_t x, int64_t a, double d2) const
    {
        dist[base + x] = (float)sqrt(d2);
        if (nearest) {
            if (a == NO_SITE) {
                nearest[base + x] = -1;
            } else {
                const int64_t sz = nz ? (int64_t)nz[base + a] : 0;
                nearest[base + x] = a + w * ((int64_t)ny[base + a] + h * sz);
            }
        }
    }
};

__global__ void edt_pass_x(const int32_t *ny, const int32_t *nz, float *dist, int64_t *nearest, int64_t w, int64_t h,
                           int64_t line0, int64_t nlines, double hx, double hy, double hz, int32_t *v, double *zn,
                           double *zd)
{
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nlines) return;
    const int64_t row = line0 + t, y = row % h, z = row / h;
    f_row f;
    f.ny = ny;
    f.nz = nz;
    f.base = row * w;
    f.y = y;
    f.z = z;
    f.hy = hy;
    f.hz = hz;
    out_row o;
    o.ny = ny;
    o.nz = nz;
    o.dist = dist;
    o.nearest = nearest;
    o.base = row * w;
    o.w = w;
    o.h = h;
    envelope(w, f, hx, v + t, zn + t, zd + t, nlines, o);
}

/* ---- Pass C (rows along x), row-parallel ----
 * One block per row. The row's f values (the squared distance to each column's site, formed as
 * on the CPU) go to shared memory; the row is cut into bands of RB_S sites and each thread builds
 * the lower envelope of its band's parabolas (Felzenszwalb-Huttenlocher, the same intersection
 * test as the CPU, only site offsets are kept: the intersections are re-formed from f). Then every
 * pixel x queries its own band's envelope and the bands beside it, outwards, while a band can
 * still hold a closer site: a band whose smallest f plus the squared gap to x (all rounded as d2
 * itself is) is not below the best d2 so far is skipped, and so are whole superbands of RB_SB
 * bands; the scan of a side stops once the squared gap alone reaches the best d2. Each candidate's
 * d2 is f[p] + ((x - p) * hx)^2, the CPU's expression, and the smallest is kept: the CPU's
 * envelope gives the exact minimum of the same expression whenever the arithmetic is exact (for
 * example unit spacing), so the distances are equal bit for bit. */
#define RB_S 32
#define RB_SB 32
#define RB_THREADS 512 /* default block size; IWPP_CUDA_EDT_ROW_THREADS=256 selects the other */

/* Shared memory of edt_rows for rows of w pixels: f (one padding double after every RB_S, so that
 * the threads building their bands' envelopes read distinct banks), bmin[NB], smin[NSB]
 * (doubles), cnt[NB], then the stacks, interleaved: entry k of band b at stk[k * NB + b] (bytes). */
#define RB_PAD(x) ((x) + ((x) >> 5))
static inline size_t rb_smem_bytes(int64_t w)
{
    const int64_t nb = (w + RB_S - 1) / RB_S, nsb = (nb + RB_SB - 1) / RB_SB;
    return (size_t)(w + nb + nb + nsb) * sizeof(double) + (size_t)nb + (size_t)nb * RB_S;
}

/* Envelope of the finite f[q], lo <= q < hi (positions along the line), whose f values are at
 * sf[RB_PAD(q - org)]: offsets q - lo into st[k * ss], returns their count; *mn the smallest f
 * (INFINITY if none). The intersection test uses the positions along the line, as the CPU does
 * (I: int where the products stay below 2^31, int64_t for lines of any length). */
template <typename I>
__host__ __device__ __forceinline__ int rb_build_at(const double *sf, I org, I lo, I hi, double h2, unsigned char *st,
                                                    int ss, double *mn)
{
    int k = -1;
    double m = INFINITY;
    for (I q = lo; q < hi; ++q) {
        const double fq = sf[RB_PAD(q - org)];
        if (fq == INFINITY) continue;
        m = fq < m ? fq : m;
        while (k >= 1) {
            const I p = lo + st[k * ss], pp = lo + st[(k - 1) * ss];
            const double fp = sf[RB_PAD(p - org)], fpp = sf[RB_PAD(pp - org)];
            const double num = (fq - fp) + h2 * (double)((q - p) * (q + p));
            const double den = 2.0 * h2 * (double)(q - p);
            const double zn = (fp - fpp) + h2 * (double)((p - pp) * (p + pp));
            const double zd = 2.0 * h2 * (double)(p - pp);
            if (num * zd > zn * den) break;
            --k;
        }
        ++k;
        st[k * ss] = (unsigned char)(q - lo);
    }
    *mn = m;
    return k + 1;
}

/* The same for a whole line in shared memory (f of q at sf[RB_PAD(q)]). */
__host__ __device__ __forceinline__ int rb_build(const double *sf, int lo, int hi, double h2, unsigned char *st,
                                                 int ss, double *mn)
{
    return rb_build_at<int>(sf, 0, lo, hi, h2, st, ss, mn);
}

/* f of the sites of a line held in shared memory from position org on */
struct rb_sf {
    const double *sf;
    int org;
    __host__ __device__ __forceinline__ double operator()(int p) const { return sf[RB_PAD(p - org)]; }
};

template <class F> __host__ __device__ __forceinline__ double rb_eval(const F &f, int p, int x, double hx)
{
    const double t = (double)(x - p) * hx;
    return f(p) + t * t;
}

/* The envelope of one band at x (its values along the stack are unimodal): improves best/bi.
 * The band's m sites are lo + st[k * ss], k < m; f gives their f values. */
template <class F>
__host__ __device__ __forceinline__ void rb_query_band(const F &f, const unsigned char *st, int ss, int m, int lo,
                                                       int x, double hx, double &best, int &bi)
{
    if (m == 0) return;
    int a = 0, c = m - 1;
    while (a < c) {
        const int mid = (a + c) >> 1;
        const double g0 = rb_eval(f, lo + st[mid * ss], x, hx), g1 = rb_eval(f, lo + st[(mid + 1) * ss], x, hx);
        if (g1 < g0)
            a = mid + 1;
        else
            c = mid;
    }
    const int p = lo + st[a * ss];
    const double g = rb_eval(f, p, x, hx);
    if (g < best) {
        best = g;
        bi = p;
    }
}

/* A line's band tables, all in shared memory (edt_rows, edt_cols): f, band minima bmin[NB],
 * superband minima smin, counts cnt[NB] and the stacks, entry k of band b at stk[k * NB + b]. */
struct rb_line_smem {
    const double *sf, *bmin, *smin;
    const unsigned char *cnt, *stk;
    int NB;
    __host__ __device__ __forceinline__ double bm(int b) const { return bmin[b]; }
    __host__ __device__ __forceinline__ double sm(int s) const { return smin[s]; }
    __host__ __device__ __forceinline__ void query(int b, int x, double hx, double &best, int &bi) const
    {
        rb_sf f;
        f.sf = sf;
        f.org = 0;
        rb_query_band(f, stk + b, NB, cnt[b], b * RB_S, x, hx, best, bi);
    }
};

/* Nearest site of pixel x of a line of NB bands whose tables A gives (bm(b), sm(s), query(b, ...)):
 * d2 in best, the site's position in bi (-1 if the line has none). */
template <class A>
__host__ __device__ __forceinline__ void rb_pixel_t(const A &a, int NB, int x, double hx, double &best, int &bi)
{
    best = INFINITY;
    bi = -1;
    const int b0 = x / RB_S;
    a.query(b0, x, hx, best, bi);
    for (int b = b0 - 1; b >= 0;) {
        const double t = (double)(x - (b * RB_S + RB_S - 1)) * hx;
        const double t2 = t * t;
        if (!(t2 < best)) break;
        if ((b % RB_SB) == RB_SB - 1 && !(a.sm(b / RB_SB) + t2 < best)) {
            b -= RB_SB;
            continue;
        }
        if (a.bm(b) + t2 < best) a.query(b, x, hx, best, bi);
        --b;
    }
    for (int b = b0 + 1; b < NB;) {
        const double t = (double)(b * RB_S - x) * hx;
        const double t2 = t * t;
        if (!(t2 < best)) break;
        if ((b % RB_SB) == 0 && !(a.sm(b / RB_SB) + t2 < best)) {
            b += RB_SB;
            continue;
        }
        if (a.bm(b) + t2 < best) a.query(b, x, hx, best, bi);
        ++b;
    }
}

__host__ __device__ __forceinline__ void rb_pixel(const double *sf, const double *bmin, const double *smin,
                                                  const unsigned char *cnt, const unsigned char *stk, int NB, int x,
                                                  double hx, double &best, int &bi)
{
    rb_line_smem a;
    a.sf = sf;
    a.bmin = bmin;
    a.smin = smin;
    a.cnt = cnt;
    a.stk = stk;
    a.NB = NB;
    rb_pixel_t(a, NB, x, hx, best, bi);
}

template <int THREADS>
__global__ void __launch_bounds__(THREADS) edt_rows(const int32_t *__restrict__ ny, const int32_t *__restrict__ nz,
                                                       float *__restrict__ dist, int64_t *__restrict__ nearest,
                                                       int64_t w, int64_t h, int64_t row0, int64_t rows, double hx,
                                                       double hy, double hz)
{
    extern __shared__ double rb_smem[];
    const int W = (int)w, NB = (W + RB_S - 1) / RB_S, NSB = (NB + RB_SB - 1) / RB_SB;
    double *sf = rb_smem, *bmin = sf + W + NB, *smin = bmin + NB;
    unsigned char *cnt = (unsigned char *)(smin + NSB), *stk = cnt + NB;
    const double h2 = hx * hx;
    for (int64_t row = row0 + blockIdx.x; row < rows; row += gridDim.x) {
        const int64_t base = row * w, y = row % h, z = row / h;
        __syncthreads();
        for (int x = threadIdx.x; x < W; x += blockDim.x) {
            const int32_t cy = ny[base + x];
            double f = INFINITY;
            if (cy != NO_SITE) {
                if (nz) {
                    const double tz = (double)(z - nz[base + x]) * hz;
                    const double ty = (double)(y - cy) * hy;
                    f = tz * tz + ty * ty;
                } else {
                    const double ty = (double)(y - cy) * hy;
                    f = ty * ty;
                }
            }
            sf[RB_PAD(x)] = f;
        }
        __syncthreads();
        for (int b = threadIdx.x; b < NB; b += blockDim.x) {
            const int lo = b * RB_S, hi = lo + RB_S < W ? lo + RB_S : W;
            double mn;
            cnt[b] = (unsigned char)rb_build(sf, lo, hi, h2, stk + b, NB, &mn);
            bmin[b] = mn;
        }
        __syncthreads();
        for (int s = threadIdx.x; s < NSB; s += blockDim.x) {
            double m = INFINITY;
            const int e = (s + 1) * RB_SB < NB ? (s + 1) * RB_SB : NB;
            for (int b = s * RB_SB; b < e; ++b) m = bmin[b] < m ? bmin[b] : m;
            smin[s] = m;
        }
        __syncthreads();
        for (int x = threadIdx.x; x < W; x += blockDim.x) {
            double best;
            int bi;
            rb_pixel(sf, bmin, smin, cnt, stk, NB, x, hx, best, bi);
            dist[base + x] = (float)sqrt(best);
            if (nearest) {
                if (bi < 0) {
                    nearest[base + x] = -1;
                } else {
                    const int64_t sz = nz ? (int64_t)nz[base + bi] : 0;
                    nearest[base + x] = (int64_t)bi + w * ((int64_t)ny[base + bi] + h * sz);
                }
            }
        }
    }
}

#include "edt_envelope.cuh" /* em_line, em_solve: merged band envelopes (see there) */

/* Pass C: one block per row (a loop over rows). INTV: unit spacing, integer arithmetic. */
template <bool IS3, bool INTV>
__global__ void __launch_bounds__(RB_THREADS) edt_rows_env(const int32_t *__restrict__ ny,
                                                           const int32_t *__restrict__ nz, float *__restrict__ dist,
                                                           int64_t *__restrict__ nearest, int64_t w, int64_t h,
                                                           int64_t row0, int64_t rows, double hx, double hy, double hz)
{
    extern __shared__ double em_smem[];
    typedef em_line<IS3, INTV> line;
    typedef typename line::V V;
    const int W = (int)w, tid = threadIdx.x, nth = blockDim.x;
    line L;
    L.layout(em_smem, W);
    L.hy = hy;
    L.h = hx;
    L.h2 = hx * hx;
    for (int64_t row = row0 + blockIdx.x; row < rows; row += gridDim.x) {
        const int64_t rb = row * w;
        const int y = (int)(row % h), z = (int)(row / h);
        L.y = y;
        __syncthreads();
        for (int x = tid; x < W; x += nth) {
            if (IS3) {
                const int32_t cy = ny[rb + x];
                V f = em_inf(V());
                if (cy != NO_SITE) f = em_sq(z - nz[rb + x], hz, V()) + em_sq(y - cy, hy, V());
                L.sv[RB_PAD(x)] = f;
            } else {
                L.su[RB_PAD(x)] = ((const uint16_t *)ny)[rb + x]; /* 2D: pass A's uint16 map, EM_NONE = no site */
            }
        }
        __syncthreads();
        em_solve<IS3, INTV>((unsigned char *)em_smem, 0, 1, W, hy, hx, y);
        for (int x = tid; x < W; x += nth) {
            V best;
            const int bi = L.find(x, best);
            dist[rb + x] = bi < 0 ? INFINITY : (float)sqrt((double)best);
            if (nearest) {
                if (bi < 0) {
                    nearest[rb + x] = -1;
                } else {
                    const int64_t sy = IS3 ? (int64_t)ny[rb + bi] : (int64_t)L.su[RB_PAD(bi)];
                    const int64_t sz = IS3 ? (int64_t)nz[rb + bi] : 0;
                    nearest[rb + x] = (int64_t)bi + w * (sy + h * sz);
                }
            }
        }
    }
}

/* Pass B (3D, along y): one block per tile of TX consecutive columns of a slice z, each column a
 * line of h with f = ((z - sz) * hz)^2, in its own area of line_bytes; loads and stores
 * touch TX consecutive words of an image row. Pixel y takes the envelope site p minimising
 * f[p] + ((y - p) * hy)^2, the CPU's pass B expression; pass C forms tz^2 + ty^2 from it. */
#define EM_COL_THREADS 256
template <bool INTV>
__global__ void __launch_bounds__(EM_COL_THREADS) edt_cols_env(const int32_t *__restrict__ nz, int32_t *__restrict__ ny2,
                                                           int32_t *__restrict__ nz2, int64_t w, int64_t h, int64_t d,
                                                           int TX, int64_t line_bytes, double hy, double hz)
{
    extern __shared__ double ce_smem[];
    typedef em_line<true, INTV> line;
    typedef typename line::V V;
    unsigned char *const sm = (unsigned char *)ce_smem;
    const int H = (int)h, tid = threadIdx.x, nth = blockDim.x;
    const int64_t ntx = (w + TX - 1) / TX, tiles = ntx * d;
    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const int64_t z = tile / ntx, x0 = (tile % ntx) * TX;
        const int tw = (int)(w - x0 < TX ? w - x0 : TX);
        const int64_t base = z * w * h + x0;
        __syncthreads();
        for (int t = tid; t < tw * H; t += nth) {
            const int j = t % tw, y = t / tw;
            const int32_t c = nz[base + (int64_t)y * w + j];
            ((V *)(sm + (int64_t)j * line_bytes))[RB_PAD(y)] = c == NO_SITE ? em_inf(V()) : em_sq((int)z - c, hz, V());
        }
        __syncthreads();
        em_solve<true, INTV>(sm, line_bytes, tw, H, 0.0, hy, 0);
        for (int t = tid; t < tw * H; t += nth) {
            const int j = t % tw, y = t / tw;
            line L;
            L.layout(sm + (int64_t)j * line_bytes, H);
            L.h = hy;
            V best;
            const int bi = L.find(y, best);
            const int64_t o = base + (int64_t)y * w + j;
            ny2[o] = bi < 0 ? NO_SITE : bi;
            nz2[o] = bi < 0 ? NO_SITE : nz[base + (int64_t)bi * w + j];
        }
    }
}

/* ---- Pass B (3D, along y), column tiles ----
 * One block per tile of TX consecutive columns (x0 .. x0+TX-1) of one slice z: the TX lines of h
 * pixels along y are solved together with the banded envelopes of pass C, each line with its own
 * shared-memory area of cb_line_bytes(h) (f, band minima, superband minima, counts, stacks, as
 * edt_rows lays them out). Loads and stores touch TX consecutive int32 of a row at a time, so a
 * warp reads and writes whole 32-byte sectors. A line's f is its column's squared z distance
 * ((z - sz) * hz)^2, and each pixel y takes a site p minimising f[p] + ((y - p) * hy)^2, the
 * expression of the CPU's pass B; pass C forms tz^2 + ty^2 from the chosen site with the same
 * operations in the same order, so any minimiser (ties) gives pass C the same value. */
#define CB_THREADS 256
#define CB_TARGET_SMEM (48 * 1024) /* bytes of shared memory a tile aims at (several blocks per SM) */

static inline size_t cb_line_bytes(int64_t h) { return (rb_smem_bytes(h) + 15) & ~(size_t)15; }

__global__ void __launch_bounds__(CB_THREADS) edt_cols(const int32_t *__restrict__ nz, int32_t *__restrict__ ny2,
                                                       int32_t *__restrict__ nz2, int64_t w, int64_t h, int64_t d,
                                                       int TX, int64_t line_bytes, double hy, double hz)
{
    extern __shared__ double cb_smem[];
    const int H = (int)h, NB = (H + RB_S - 1) / RB_S, NSB = (NB + RB_SB - 1) / RB_SB;
    const int64_t ntx = (w + TX - 1) / TX, tiles = ntx * d;
    const double h2 = hy * hy;
    char *const sm = (char *)cb_smem;
#define CB_SF(j) ((double *)(sm + (int64_t)(j) * line_bytes))
#define CB_BMIN(j) (CB_SF(j) + H + NB)
#define CB_SMIN(j) (CB_BMIN(j) + NB)
#define CB_CNT(j) ((unsigned char *)(CB_SMIN(j) + NSB))
#define CB_STK(j) (CB_CNT(j) + NB)
    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const int64_t z = tile / ntx, x0 = (tile % ntx) * TX;
        const int tw = (int)(w - x0 < TX ? w - x0 : TX);
        const int64_t base = z * w * h + x0; /* pixel (x0, 0, z) */
        __syncthreads();
        for (int t = threadIdx.x; t < tw * H; t += blockDim.x) {
            const int j = t % tw, y = t / tw;
            const int32_t c = nz[base + (int64_t)y * w + j];
            double f = INFINITY;
            if (c != NO_SITE) {
                const double tz = (double)(z - c) * hz;
                f = tz * tz;
            }
            CB_SF(j)[RB_PAD(y)] = f;
        }
        __syncthreads();
        for (int t = threadIdx.x; t < tw * NB; t += blockDim.x) {
            const int j = t % tw, b = t / tw;
            const int lo = b * RB_S, hi = lo + RB_S < H ? lo + RB_S : H;
            double mn;
            CB_CNT(j)[b] = (unsigned char)rb_build(CB_SF(j), lo, hi, h2, CB_STK(j) + b, NB, &mn);
            CB_BMIN(j)[b] = mn;
        }
        __syncthreads();
        for (int t = threadIdx.x; t < tw * NSB; t += blockDim.x) {
            const int j = t % tw, sb = t / tw;
            const double *bmin = CB_BMIN(j);
            double m = INFINITY;
            const int e = (sb + 1) * RB_SB < NB ? (sb + 1) * RB_SB : NB;
            for (int b = sb * RB_SB; b < e; ++b) m = bmin[b] < m ? bmin[b] : m;
            CB_SMIN(j)[sb] = m;
        }
        __syncthreads();
        for (int t = threadIdx.x; t < tw * H; t += blockDim.x) {
            const int j = t % tw, y = t / tw;
            double best;
            int bi;
            rb_pixel(CB_SF(j), CB_BMIN(j), CB_SMIN(j), CB_CNT(j), CB_STK(j), NB, y, hy, best, bi);
            const int64_t o = base + (int64_t)y * w + j;
            ny2[o] = bi < 0 ? NO_SITE : (int32_t)bi;
            nz2[o] = bi < 0 ? NO_SITE : nz[base + (int64_t)bi * w + j];
        }
    }
#undef CB_SF
#undef CB_BMIN
#undef CB_SMIN
#undef CB_CNT
#undef CB_STK
}

/* ---- Lines too long for one block's shared memory: band tables in global memory ----
 * The banded method of edt_rows / edt_cols with a line cut into segments of segb bands (bands of
 * RB_S pixels counted from the start of the line, so every band, its envelope and its minimum are
 * those of the shared-memory kernels), one block per (line, segment), in three launches:
 *   edt_wbuild: f of the segment into shared memory, each band's envelope (the same intersection
 *     test on positions along the line), its count and its smallest f to global tables; the stacks
 *     go out as 32 bytes per band;
 *   edt_wsmin: the superband minima (RB_SB bands);
 *   edt_wquery: f, counts, minima and stacks of the segment back into shared memory, then each
 *     pixel runs rb_pixel_t: bands of its segment from shared memory, bands beyond it from the
 *     global tables, their sites' f formed again from the site maps (same expression).
 * Same candidates, same skips, same d2 as the one-block kernels, hence the same distances and
 * sites. Lines are processed in batches that bound the tables (1 + 32 + 8 bytes per band, 8 per
 * superband). Rows (COLS = 0, pass C): line = y + h * z; columns (COLS = 1, 3D pass B, along y):
 * line = x + w * z. */
#define WB_THREADS 256
#define WB_SEG_DEFAULT 4096 /* pixels per segment (128 bands): 39 KB of shared memory per block */
/* Rows at least this wide take the multi-block kernels even where edt_rows fits: on the H100,
 * 16384 and 20000 pixels wide they took 9% less time than edt_rows (one block of 155 KB per SM
 * there), 8192 wide 22% more (cuda/README.md) */
#define WB_AUTO_MIN_W 16384

struct wb_lines {
    const int32_t *ny, *nz; /* rows: ny, and nz in 3D (else NULL); columns: nz */
    int64_t w, h, len;      /* image width and height, pixels per line */
    double ha, hy, hz;      /* spacing along the line, hy, hz */
    float *dist;            /* rows: distances and nearest indices (NULL: not wanted) */
    int64_t *nearest;
    int32_t *ny2, *nz2;     /* columns: the chosen site's y and z */
    int64_t line0, nlines;  /* this batch */
    int segb, nb, nsb, nseg; /* bands per segment; bands, superbands and segments per line */
    unsigned char *gcnt, *gstk; /* tables of the batch: [line - line0][band] (stacks: 32 bytes a band) */
    double *gbmin, *gsmin;      /* [line - line0][band], [line - line0][superband] */
};

template <class T> __host__ __device__ __forceinline__ T wb_ld(const T *p)
{
#ifdef __CUDA_ARCH__
    return __ldg(p);
#else
    return *p;
#endif
}

/* f of a row's sites from the site maps (the expression of edt_rows) */
struct wf_row {
    const int32_t *ny, *nz;
    int64_t base, y, z;
    double hy, hz;
    __host__ __device__ __forceinline__ double operator()(int64_t x) const
    {
        const int32_t cy = wb_ld(ny + base + x);
        if (cy == NO_SITE) return INFINITY;
        if (nz) {
            const double tz = (double)(z - wb_ld(nz + base + x)) * hz;
            const double ty = (double)(y - cy) * hy;
            return tz * tz + ty * ty;
        }
        const double ty = (double)(y - cy) * hy;
        return ty * ty;
    }
};

/* f of a column's sites (the expression of edt_cols) */
struct wf_col {
    const int32_t *nz;
    int64_t base, stride, z;
    double hz;
    __host__ __device__ __forceinline__ double operator()(int64_t y) const
    {
        const int32_t c = wb_ld(nz + base + y * stride);
        if (c == NO_SITE) return INFINITY;
        const double tz = (double)(z - c) * hz;
        return tz * tz;
    }
};

template <int COLS> struct wb_mode;
template <> struct wb_mode<0> {
    typedef wf_row F;
    static __host__ __device__ __forceinline__ F line(const wb_lines &L, int64_t row)
    {
        F f;
        f.ny = L.ny;
        f.nz = L.nz;
        f.base = row * L.w;
        f.y = row % L.h;
        f.z = row / L.h;
        f.hy = L.hy;
        f.hz = L.hz;
        return f;
    }
    static __host__ __device__ __forceinline__ void put(const wb_lines &L, const F &f, int64_t x, double d2, int64_t a)
    {
        L.dist[f.base + x] = (float)sqrt(d2);
        if (L.nearest) {
            if (a < 0) {
                L.nearest[f.base + x] = -1;
            } else {
                const int64_t sz = L.nz ? (int64_t)L.nz[f.base + a] : 0;
                L.nearest[f.base + x] = a + L.w * ((int64_t)L.ny[f.base + a] + L.h * sz);
            }
        }
    }
};
template <> struct wb_mode<1> {
    typedef wf_col F;
    static __host__ __device__ __forceinline__ F line(const wb_lines &L, int64_t col)
    {
        F f;
        f.nz = L.nz;
        f.z = col / L.w;
        f.base = f.z * L.w * L.h + col % L.w;
        f.stride = L.w;
        f.hz = L.hz;
        return f;
    }
    static __host__ __device__ __forceinline__ void put(const wb_lines &L, const F &f, int64_t y, double, int64_t a)
    {
        const int64_t o = f.base + y * f.stride;
        L.ny2[o] = a < 0 ? NO_SITE : (int32_t)a;
        L.nz2[o] = a < 0 ? NO_SITE : L.nz[f.base + a * f.stride];
    }
};

/* Shared memory of edt_wbuild / edt_wquery: f of the segment (padded as in edt_rows), band
 * minima, counts, stacks (entry k of band j of the segment at sstk[k * segb + j]). */
static inline size_t wb_smem_bytes(int segb)
{
    return (size_t)(RB_PAD((int64_t)segb * RB_S) + segb) * sizeof(double) + (size_t)segb * (1 + RB_S);
}
struct wb_sm {
    double *sf, *sbmin;
    unsigned char *scnt, *sstk;
};
__host__ __device__ __forceinline__ wb_sm wb_carve(void *mem, int segb)
{
    wb_sm m;
    m.sf = (double *)mem;
    m.sbmin = m.sf + RB_PAD((int64_t)segb * RB_S);
    m.scnt = (unsigned char *)(m.sbmin + segb);
    m.sstk = m.scnt + segb;
    return m;
}

/* One (line, segment) unit: batch line li, bands [b0, b1), pixels [lo, hi). */
struct wb_seg {
    int64_t li;
    int b0, b1, lo, hi;
};
__host__ __device__ __forceinline__ wb_seg wb_unit(const wb_lines &L, int64_t unit)
{
    wb_seg g;
    g.li = unit / L.nseg;
    g.b0 = (int)(unit % L.nseg) * L.segb;
    g.b1 = g.b0 + L.segb < L.nb ? g.b0 + L.segb : L.nb;
    g.lo = g.b0 * RB_S;
    const int64_t e = (int64_t)g.b1 * RB_S;
    g.hi = (int)(e < L.len ? e : L.len);
    return g;
}

/* The phases below are run by the nt threads of a block (thread tid), with a barrier between. */
template <int COLS>
__host__ __device__ __forceinline__ void wb_load_f(const wb_lines &L, const wb_seg &g, const wb_sm &m, int tid, int nt)
{
    const typename wb_mode<COLS>::F f = wb_mode<COLS>::line(L, L.line0 + g.li);
    for (int p = g.lo + tid; p < g.hi; p += nt) m.sf[RB_PAD(p - g.lo)] = f(p);
}

__host__ __device__ __forceinline__ void wb_build_bands(const wb_lines &L, const wb_seg &g, const wb_sm &m, int tid,
                                                        int nt)
{
    const double h2 = L.ha * L.ha;
    const int64_t t0 = g.li * L.nb + g.b0;
    for (int j = tid; j < g.b1 - g.b0; j += nt) {
        const int64_t lo = (int64_t)g.lo + (int64_t)j * RB_S, hi = lo + RB_S < g.hi ? lo + RB_S : g.hi;
        double mn;
        const int c = rb_build_at<int64_t>(m.sf, g.lo, lo, hi, h2, m.sstk + j, L.segb, &mn);
        m.scnt[j] = (unsigned char)c;
        L.gcnt[t0 + j] = (unsigned char)c;
        L.gbmin[t0 + j] = mn;
    }
}

/* stacks out: 8 words of 4 entries per band, entries beyond the count as 0 */
__host__ __device__ __forceinline__ void wb_store_stk(const wb_lines &L, const wb_seg &g, const wb_sm &m, int tid, int nt)
{
    uint32_t *gw = (uint32_t *)L.gstk + (g.li * L.nb + g.b0) * (RB_S / 4);
    for (int i = tid; i < (g.b1 - g.b0) * (RB_S / 4); i += nt) {
        const int j = i / (RB_S / 4), q = i % (RB_S / 4), c = m.scnt[j];
        uint32_t v = 0;
        for (int r = 0; r < 4; ++r) {
            const int k = 4 * q + r;
            if (k < c) v |= (uint32_t)m.sstk[k * L.segb + j] << (8 * r);
        }
        gw[i] = v;
    }
}

/* superband minima of the batch, thread t of nt */
__host__ __device__ __forceinline__ void wb_smin(const wb_lines &L, int64_t t0, int64_t nt)
{
    for (int64_t t = t0; t < L.nlines * L.nsb; t += nt) {
        const int64_t li = t / L.nsb;
        const int s = (int)(t % L.nsb);
        const int e = (s + 1) * RB_SB < L.nb ? (s + 1) * RB_SB : L.nb;
        const double *bm = L.gbmin + li * L.nb;
        double m = INFINITY;
        for (int b = s * RB_SB; b < e; ++b) m = bm[b] < m ? bm[b] : m;
        L.gsmin[t] = m;
    }
}

/* counts, minima and stacks of the segment back into shared memory */
__host__ __device__ __forceinline__ void wb_load_tables(const wb_lines &L, const wb_seg &g, const wb_sm &m, int tid,
                                                        int nt)
{
    const int64_t t0 = g.li * L.nb + g.b0;
    for (int j = tid; j < g.b1 - g.b0; j += nt) {
        m.scnt[j] = wb_ld(L.gcnt + t0 + j);
        m.sbmin[j] = wb_ld(L.gbmin + t0 + j);
    }
    const uint32_t *gw = (const uint32_t *)L.gstk + t0 * (RB_S / 4);
    for (int i = tid; i < (g.b1 - g.b0) * (RB_S / 4); i += nt) {
        const int j = i / (RB_S / 4), q = i % (RB_S / 4);
        const uint32_t v = wb_ld(gw + i);
        for (int r = 0; r < 4; ++r) m.sstk[(4 * q + r) * L.segb + j] = (unsigned char)(v >> (8 * r));
    }
}

/* band tables of one line: the segment's bands [b0, b1) in shared memory, the others global */
template <class F> struct rb_line_wide {
    F fg;                             /* f of any site of the line, from the site maps */
    const double *sf, *sbmin;         /* the segment: f from position org on, minima */
    const unsigned char *scnt, *sstk; /* counts, stacks (stride segb) */
    int b0, b1, segb, org;
    const double *gbmin, *gsmin;      /* the line's global tables */
    const unsigned char *gcnt, *gstk;
    __host__ __device__ __forceinline__ bool own(int b) const { return (unsigned)(b - b0) < (unsigned)(b1 - b0); }
    __host__ __device__ __forceinline__ double bm(int b) const { return own(b) ? sbmin[b - b0] : wb_ld(gbmin + b); }
    __host__ __device__ __forceinline__ double sm(int s) const { return wb_ld(gsmin + s); }
    __host__ __device__ __forceinline__ void query(int b, int x, double hx, double &best, int &bi) const
    {
        if (own(b)) {
            rb_sf f;
            f.sf = sf;
            f.org = org;
            rb_query_band(f, sstk + (b - b0), segb, scnt[b - b0], b * RB_S, x, hx, best, bi);
        } else {
            rb_query_band(fg, gstk + (int64_t)b * RB_S, 1, wb_ld(gcnt + b), b * RB_S, x, hx, best, bi);
        }
    }
};

template <int COLS>
__host__ __device__ __forceinline__ void wb_pixels(const wb_lines &L, const wb_seg &g, const wb_sm &m, int tid, int nt)
{
    typedef typename wb_mode<COLS>::F F;
    rb_line_wide<F> a;
    a.fg = wb_mode<COLS>::line(L, L.line0 + g.li);
    a.sf = m.sf;
    a.sbmin = m.sbmin;
    a.scnt = m.scnt;
    a.sstk = m.sstk;
    a.b0 = g.b0;
    a.b1 = g.b1;
    a.segb = L.segb;
    a.org = g.lo;
    a.gbmin = L.gbmin + g.li * L.nb;
    a.gsmin = L.gsmin + g.li * L.nsb;
    a.gcnt = L.gcnt + g.li * L.nb;
    a.gstk = L.gstk + g.li * L.nb * RB_S;
    for (int x = g.lo + tid; x < g.hi; x += nt) {
        double best;
        int bi;
        rb_pixel_t(a, L.nb, x, L.ha, best, bi);
        wb_mode<COLS>::put(L, a.fg, x, best, bi);
    }
}

template <int COLS> __global__ void __launch_bounds__(WB_THREADS) edt_wbuild(wb_lines L)
{
    extern __shared__ double wb_smem[];
    const wb_sm m = wb_carve(wb_smem, L.segb);
    for (int64_t u = blockIdx.x; u < L.nlines * L.nseg; u += gridDim.x) {
        const wb_seg g = wb_unit(L, u);
        __syncthreads();
        wb_load_f<COLS>(L, g, m, threadIdx.x, blockDim.x);
        __syncthreads();
        wb_build_bands(L, g, m, threadIdx.x, blockDim.x);
        __syncthreads();
        wb_store_stk(L, g, m, threadIdx.x, blockDim.x);
    }
}

__global__ void edt_wsmin(wb_lines L)
{
    wb_smin(L, (int64_t)blockIdx.x * blockDim.x + threadIdx.x, (int64_t)gridDim.x * blockDim.x);
}

template <int COLS> __global__ void __launch_bounds__(WB_THREADS) edt_wquery(wb_lines L)
{
    extern __shared__ double wb_smem[];
    const wb_sm m = wb_carve(wb_smem, L.segb);
    for (int64_t u = blockIdx.x; u < L.nlines * L.nseg; u += gridDim.x) {
        const wb_seg g = wb_unit(L, u);
        __syncthreads();
        wb_load_f<COLS>(L, g, m, threadIdx.x, blockDim.x);
        wb_load_tables(L, g, m, threadIdx.x, blockDim.x);
        __syncthreads();
        wb_pixels<COLS>(L, g, m, threadIdx.x, blockDim.x);
    }
}

/* Table bytes per line of len pixels (each table 256-aligned within a batch). */
static inline size_t wb_line_bytes(int64_t len)
{
    const int64_t nb = (len + RB_S - 1) / RB_S, nsb = (nb + RB_SB - 1) / RB_SB;
    return (size_t)nb * (sizeof(double) + RB_S + 1) + (size_t)nsb * sizeof(double);
}

/* Plan of a wide pass over `lines` lines of L.len pixels: segments of seg_px pixels (whole
 * bands, as many as shared memory allows), batches of lines whose tables fit `area` bytes at tab
 * (256-aligned); sets L's table fields and the launch shape. L's image fields are the caller's. */
struct wb_plan {
    wb_lines L;
    int64_t lines, batch;
    size_t smem;
    int grid_cap;
};

template <int COLS>
static iwpp_status wb_prepare(iwpp_context *ctx, wb_plan &P, int64_t lines, int seg_px, char *tab, size_t area)
{
    cuda_state *st = cu_state(ctx);
    wb_lines &L = P.L;
    L.nb = (int)((L.len + RB_S - 1) / RB_S);
    L.nsb = (L.nb + RB_SB - 1) / RB_SB;
    int segb = (seg_px + RB_S - 1) / RB_S;
    if (segb > L.nb) segb = L.nb;
    while (segb > 1 && wb_smem_bytes(segb) > st->smem_optin) --segb;
    L.segb = segb;
    L.nseg = (L.nb + segb - 1) / segb;
    P.smem = wb_smem_bytes(segb);
    if (P.smem > 48 * 1024) {
        CU_TRY(ctx, cu_allow_smem(st, edt_wbuild<COLS>),
               "configuring the distance transform's long-line kernels");
        CU_TRY(ctx, cu_allow_smem(st, edt_wquery<COLS>),
               "configuring the distance transform's long-line kernels");
    }
    int occ = 0;
    CU_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, edt_wquery<COLS>, WB_THREADS, P.smem),
           "sizing the distance transform's long-line kernels");
    if (occ < 1) occ = 1;
    P.grid_cap = st->sms * occ * 4;
    const size_t al = 256;
    int64_t batch = (int64_t)(area / (wb_line_bytes(L.len) + 4 * al));
    if (batch < 1) batch = 1;
    if (batch > lines) batch = lines;
    P.lines = lines;
    P.batch = batch;
    const size_t nbb = (size_t)batch * (size_t)L.nb, nsbb = (size_t)batch * (size_t)L.nsb;
    char *p = tab;
    L.gbmin = (double *)p;
    p += (nbb * sizeof(double) + al - 1) / al * al;
    L.gsmin = (double *)p;
    p += (nsbb * sizeof(double) + al - 1) / al * al;
    L.gstk = (unsigned char *)p;
    p += (nbb * RB_S + al - 1) / al * al;
    L.gcnt = (unsigned char *)p;
    return IWPP_OK;
}

/* Bytes of tables wb_prepare needs at least (one line) and would like (every line at once). */
static inline size_t wb_min_area(int64_t len) { return wb_line_bytes(len) + 4 * 256; }

template <int COLS> static void wb_launch(cudaStream_t s, wb_plan P, int sms)
{
    wb_lines &L = P.L;
    for (int64_t l0 = 0; l0 < P.lines; l0 += P.batch) {
        L.line0 = l0;
        L.nlines = P.lines - l0 < P.batch ? P.lines - l0 : P.batch;
        const unsigned grid = cu_blocks(L.nlines * L.nseg, 1, P.grid_cap);
        edt_wbuild<COLS><<<grid, WB_THREADS, P.smem, s>>>(L);
        edt_wsmin<<<cu_blocks(L.nlines * L.nsb, 256, sms * 8), 256, 0, s>>>(L);
        edt_wquery<COLS><<<grid, WB_THREADS, P.smem, s>>>(L);
    }
}

#include "edt_lines.cuh" /* ln_solve and its lines: one thread per line (see there) */

/* ---- The lines path (3D, unit spacing): passes x, y, z ----
 * Pass X: one warp per row. The warp ballots "background" over each run of 32 pixels into a mask
 * (shared memory), finds for each run the first background after it (a suffix minimum across
 * the lanes, 32 runs at a time), then gives every pixel the nearer of the last background at or
 * before it and the first at or after it (ties: the left one), as a uint16 column, LN_NONE where
 * the row has none. Shared memory: 8 bytes per run of each warp of the block. */
#define X1_THREADS 256
static inline int x1_warps(int64_t w) { return (int64_t)64 * ((w + 31) / 32) <= 48 * 1024 ? 8 : 1; }

template <typename T>
__global__ void __launch_bounds__(X1_THREADS) edt_x1d(const T *__restrict__ in, uint16_t *__restrict__ sx, int64_t w,
                                                      int64_t rows)
{
    extern __shared__ unsigned x1_smem[];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, wpb = blockDim.x >> 5;
    const int nc = (int)((w + 31) / 32), far = 0x7FFFFFFF;
    unsigned *mask = x1_smem + (size_t)warp * 2 * nc;
    int *next = (int *)(mask + nc);
    for (int64_t row = (int64_t)blockIdx.x * wpb + warp; row < rows; row += (int64_t)gridDim.x * wpb) {
        const T *p = in + row * w;
        for (int c = 0; c < nc; ++c) {
            const int x = c * 32 + lane;
            const unsigned m = __ballot_sync(0xFFFFFFFFu, x < w && p[x] == (T)0);
            if (lane == 0) mask[c] = m;
        }
        __syncwarp();
        int carry = far; /* first background in the runs already passed (to the right) */
        for (int g = (nc - 1) / 32; g >= 0; --g) {
            const int c = g * 32 + lane;
            const unsigned m = c < nc ? mask[c] : 0u;
            int v = m ? c * 32 + __ffs((int)m) - 1 : far;
            for (int off = 1; off < 32; off <<= 1) {
                const int o = __shfl_down_sync(0xFFFFFFFFu, v, off);
                if (lane + off < 32) v = min(v, o);
            }
            int after = __shfl_down_sync(0xFFFFFFFFu, v, 1);
            if (lane == 31) after = far;
            if (c < nc) next[c] = min(after, carry);
            carry = min(carry, __shfl_sync(0xFFFFFFFFu, v, 0));
        }
        __syncwarp();
        uint16_t *o = sx + row * w;
        int left = -1; /* last background before the current run */
        for (int c = 0; c < nc; ++c) {
            const unsigned m = mask[c];
            const int x = c * 32 + lane;
            const unsigned lo = m & (0xFFFFFFFFu >> (31 - lane)), hi = m & (0xFFFFFFFFu << lane);
            const int l = lo ? c * 32 + 31 - __clz((int)lo) : left;
            const int r = hi ? c * 32 + __ffs((int)hi) - 1 : next[c];
            int best = l >= 0 ? l : LN_NONE;
            if (r != far && (l < 0 || r - x < x - l)) best = r;
            if (x < w) o[x] = (uint16_t)best;
            if (m) left = c * 32 + 31 - __clz((int)m);
        }
        __syncwarp();
    }
}

/* The envelope passes run as many blocks of 256 threads as are resident at once (the stacks:
 * a shared-memory window per thread, and cap * 32 entries of stk per warp, cap a multiple of 4);
 * each warp takes the next 32 lines from a counter until none is left, so lines of unequal cost
 * balance. ln_begin sets up the thread's stack, ln_take returns the warp's next first line. */
__device__ __forceinline__ void ln_begin(ln_stack &stack, ln_entry *win, ln_entry *stk, int cap)
{
    const int64_t gid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    stack.win = win + (threadIdx.x & ~31u) * LN_WIN + (threadIdx.x & 31u);
    stack.glob = stk + (gid >> 5) * (int64_t)cap * 32 + (gid & 31) * 4;
}
__device__ __forceinline__ int64_t ln_take(unsigned long long *next)
{
    unsigned long long l0 = 0;
    if ((threadIdx.x & 31) == 0) l0 = atomicAdd(next, 32ull);
    return (int64_t)__shfl_sync(0xFFFFFFFFu, l0, 0);
}

/* Pass Y (3D): one thread per column x of a slice z, along y. */
__global__ void __launch_bounds__(256) edt_lines_y(const uint16_t *__restrict__ sx, int *__restrict__ f2,
                                                   uint16_t *__restrict__ sy, ln_entry *__restrict__ stk,
                                                   unsigned long long *next, int64_t w, int64_t h, int64_t d, int cap)
{
    __shared__ ln_entry win[LN_WIN * 256];
    ln_stack stack;
    ln_begin(stack, win, stk, cap);
    for (int64_t l0; (l0 = ln_take(next)) < w * d;) {
        const int64_t line = l0 + (threadIdx.x & 31);
        if (line >= w * d) continue;
        ln_line_y L;
        L.sx = sx, L.f2 = f2, L.sy = sy, L.w = w, L.x = (int)(line % w);
        L.base = (line / w) * w * h + L.x;
        ln_solve(L, stack, (int)h);
    }
}

/* The last pass: one thread per pixel (x, y) of a plane, along z (3D) or one per column x,
 * along y (2D): distances and nearest indices. */
__global__ void __launch_bounds__(256) edt_lines_out(const uint16_t *__restrict__ sx, const uint16_t *__restrict__ sy,
                                                     const int *__restrict__ f2, float *__restrict__ dist,
                                                     int64_t *__restrict__ nearest, ln_entry *__restrict__ stk,
                                                     unsigned long long *next, int64_t w, int64_t h, int64_t d,
                                                     int cap)
{
    const bool is3 = d > 1;
    const int64_t lines = is3 ? w * h : w;
    __shared__ ln_entry win[LN_WIN * 256];
    ln_stack stack;
    ln_begin(stack, win, stk, cap);
    for (int64_t l0; (l0 = ln_take(next)) < lines;) {
        const int64_t line = l0 + (threadIdx.x & 31);
        if (line >= lines) continue;
        ln_line_out L;
        L.sx = sx, L.sy = sy, L.f2 = is3 ? f2 : NULL, L.dist = dist, L.nearest = nearest;
        L.base = line, L.step = is3 ? w * h : w, L.w = w, L.h = h, L.x = (int)(line % w);
        ln_solve(L, stack, (int)(is3 ? d : h));
    }
}

/* ---- 2D with unit spacing: column bands (edt_colbands.cuh) ----
 * After pass X (edt_x1d): the bands' hulls (one thread per column and band), their merge (a
 * tree: one thread per column and pair of groups of bands, one launch a level), then the distances (one thread per column and segment of `lc` rows, rows
 * [y0, y1) of the image, so that the whole call's download can follow bands of rows). */
__global__ void __launch_bounds__(256) edt_cb_hull(cb_grid G)
{
    __shared__ uint32_t win[CB_WIN * 256];
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < G.w * G.K; t += (int64_t)gridDim.x * blockDim.x)
        cb_hull(G, (int)(t % G.w), (int)(t / G.w), win + threadIdx.x, 256);
}

/* one level of the merge tree: every pair of groups of 2^l bands of every column */
__global__ void __launch_bounds__(128) edt_cb_merge(cb_grid G, int l)
{
    const int64_t pairs = ((G.K - 1) >> (l + 1)) + 1;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < G.w * pairs; t += (int64_t)gridDim.x * blockDim.x) {
        int b0, bm, b1;
        if (cb_pair(G, l, (int)(t / G.w), &b0, &bm, &b1)) cb_merge_pair(G, (int)(t % G.w), b0, bm, b1);
    }
}

__global__ void __launch_bounds__(256) edt_cb_colour(cb_grid G, float *__restrict__ dist, int64_t *__restrict__ nearest,
                                                     int lc, int y0, int y1)
{
    const int s0 = y0 / lc, segs = (y1 + lc - 1) / lc - s0;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < G.w * segs; t += (int64_t)gridDim.x * blockDim.x) {
        const int x = (int)(t % G.w), sg = s0 + (int)(t / G.w);
        const int a = sg * lc > y0 ? sg * lc : y0, b = sg * lc + lc < y1 ? sg * lc + lc : y1;
        cb_out o;
        o.dist = dist, o.nearest = nearest, o.w = G.w, o.x = x;
        cb_colour(G, o, x, a, b);
    }
}

/* The exact transform's path, chosen from the device's shared memory and the image.
 * Rows (pass C): merged band envelopes, one block per row (ROWS_MERGED), wherever a row fits in
 * shared memory (2D rows up to ~40000 pixels on Hopper, 3D ~19000) with positions and 2D site rows
 * in 16 bits; else the multi-block long-line kernels (ROWS_WIDE), or one thread per row
 * (ROWS_SERIAL) where those are disabled. Columns (pass B, 3D): tiles of TX columns by merged
 * envelopes (COLS_MERGED), TX the largest power of two up to 32 within CB_TARGET_SMEM; columns
 * too tall for shared memory: the long-line kernels (COLS_WIDE), else one thread per column.
 * Knobs (measurements and tests): IWPP_CUDA_EDT_ROWS=banded / IWPP_CUDA_EDT_COLS=banded keep the
 * older banded query (ROWS_BANDED, COLS_BANDED); IWPP_CUDA_EDT_WIDE: unset = the choice above,
 * 0 = never the long-line kernels (one thread per line instead, or the banded query on rows that
 * fit), N > 0 = every row pass and every 3D column pass takes them with segments of N pixels;
 * IWPP_CUDA_EDT_COL_TILE = 1..32 sets TX, 0 the one-thread-per-column pass B. */
enum { ROWS_MERGED, ROWS_BANDED, ROWS_WIDE, ROWS_SERIAL };
enum { COLS_NONE, COLS_MERGED, COLS_BANDED, COLS_WIDE, COLS_SERIAL };
struct cu_plan {
    int rows, cols;
    size_t cb_line; /* shared memory of one column of a tile */
    int cb_tx;      /* columns per tile */
    int wb_seg;     /* long-line segment length */
    bool intv;      /* merged envelopes in integers: unit spacing, w^2 + h^2 + d^2 < 2^31 */
    bool lines;     /* the lines path (passes x, y, z, one thread per line): 3D with intv */
    int ln_cap;     /* its stack depth: the longest envelope line */
    int64_t ln_threads;
    bool colbands;  /* 2D with intv: column bands (edt_colbands.cuh) */
    int cb_k, cb_l, cb_lc; /* bands of a column, rows of a band, rows of a colour segment */
};

/* The lines path (IWPP_CUDA_EDT_LINES: unset = 3D images, 1 = 2D too, 0 = never) wherever the
 * integers apply, the envelope lines are at most LN_MAX_LEN long and no other pass is asked for
 * (cuda.edt_rows, cuda.edt_cols, cuda.edt_wide, cuda.edt_col_tile); its threads: the resident
 * blocks of 256, fewer where the lines are fewer or the stacks would pass LN_STACK_BYTES. */
#define LN_MAX_LEN 4096
/* offset of the lines path's map i (0 sx, 1 f2, 2 sy; 3: the end) in the call's scratch */
static inline size_t ln_maps(size_t n, int i)
{
    const size_t al2 = (2 * n + 255) & ~(size_t)255, al4 = (4 * n + 255) & ~(size_t)255;
    return i == 0 ? 0 : i == 1 ? al2 : i == 2 ? al2 + al4 : 2 * al2 + al4;
}
#define LN_STACK_BYTES ((int64_t)1 << 30)
static void plan_lines(const iwpp_context *ctx, const cuda_state *st, int64_t w, int64_t h, int64_t d, cu_plan *P)
{
    const long long want = iwpp_tune_int(ctx, IWPP_TUNE_CUDA_EDT_LINES, -1, 0, 1);
    const int64_t cap = d > 1 ? (h > d ? h : d) : h, lines = d > 1 ? (w * d > w * h ? w * d : w * h) : w;
    const bool other = iwpp_tune(ctx, IWPP_TUNE_CUDA_EDT_ROWS) || iwpp_tune(ctx, IWPP_TUNE_CUDA_EDT_COLS) ||
                       iwpp_tune(ctx, IWPP_TUNE_CUDA_EDT_WIDE) || iwpp_tune(ctx, IWPP_TUNE_CUDA_EDT_COL_TILE);
    P->lines = P->intv && want != 0 && (d > 1 || want == 1) && cap <= LN_MAX_LEN && !other;
    P->ln_cap = (int)((cap + 3) & ~3); /* whole 32-byte sectors per thread */
    int occ = 0;
    if (P->lines && cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, edt_lines_y, 256, 0) != cudaSuccess) occ = 0;
    cudaGetLastError();
    int64_t t = (lines + 255) / 256 * 256;
    if (t > (int64_t)st->sms * (occ > 0 ? occ : 4) * 256) t = (int64_t)st->sms * (occ > 0 ? occ : 4) * 256;
    if (t > LN_STACK_BYTES / (cap * (int64_t)sizeof(ln_entry))) t = LN_STACK_BYTES / (cap * (int64_t)sizeof(ln_entry));
    P->ln_threads = t < 256 ? 256 : t / 256 * 256;
}

/* Column bands (IWPP_CUDA_EDT_BANDS: unset = K from the image, "K" or "K,R", 0 = never) for 2D
 * images where the integers apply and neither the lines path nor another pass is asked for. By
 * default K = 2 x the device's resident thread slots / w bands (1 to CB_MAXK; shorter bands, short
 * stacks), colour segments of 32 rows. */
static void plan_colbands(const iwpp_context *ctx, const cuda_state *st, int64_t w, int64_t h, int64_t d, cu_plan *P)
{
    const char *v = iwpp_tune(ctx, IWPP_TUNE_CUDA_EDT_BANDS);
    long long k = -1, lc = -1;
    if (v) {
        char *end = NULL;
        k = strtoll(v, &end, 10);
        if (end && *end == ',') lc = strtoll(end + 1, NULL, 10);
    }
    const bool other = iwpp_tune(ctx, IWPP_TUNE_CUDA_EDT_ROWS) || iwpp_tune(ctx, IWPP_TUNE_CUDA_EDT_COLS) ||
                       iwpp_tune(ctx, IWPP_TUNE_CUDA_EDT_WIDE) || iwpp_tune(ctx, IWPP_TUNE_CUDA_EDT_COL_TILE);
    P->colbands = d == 1 && P->intv && !P->lines && k != 0 && !other;
    if (!P->colbands) return;
    if (k < 0) {
        k = ((int64_t)st->sms * 4096 + w - 1) / w;
        /* bands of at least a sector of rows: the entries E hold whole sectors per band, so bands
           of fewer rows (short images: EDT strips) would take up to 8x their 4 bytes a pixel */
        if (k > h / CB_SECTOR) k = h / CB_SECTOR;
    }
    if (k > CB_MAXK) k = CB_MAXK;
    if (k > h) k = h;
    if (k < 1) k = 1;
    P->cb_l = (int)((h + k - 1) / k);
    P->cb_k = (int)((h + P->cb_l - 1) / P->cb_l);
    P->cb_lc = lc > 0 ? (int)(lc < h ? lc : h) : (int)(h < 32 ? h : 32);
}

static void plan_exact(const iwpp_context *ctx, const cuda_state *st, int64_t w, int64_t h, int64_t d,
                       const double sp[3], cu_plan *P)
{
    P->intv = sp[0] == 1.0 && sp[1] == 1.0 && sp[2] == 1.0 && w * w + h * h + d * d < ((int64_t)1 << 31);
    const char *wb_env = iwpp_tune(ctx, IWPP_TUNE_CUDA_EDT_WIDE), *rv = iwpp_tune(ctx, IWPP_TUNE_CUDA_EDT_ROWS),
               *cv = iwpp_tune(ctx, IWPP_TUNE_CUDA_EDT_COLS), *tv = iwpp_tune(ctx, IWPP_TUNE_CUDA_EDT_COL_TILE);
    const long long wb_want = wb_env ? atoll(wb_env) : -1;
    const int cb_want = tv ? atoi(tv) : -1;
    const bool rows_banded = rv && !strcmp(rv, "banded"), cols_banded = cv && !strcmp(cv, "banded");
    const int64_t wb_max = (int64_t)INT32_MAX - 64; /* positions and band ends stay in int */
    P->wb_seg = wb_want > 0 ? (int)(wb_want < (1 << 24) ? wb_want : (1 << 24)) : WB_SEG_DEFAULT;
    const bool rows_fit = rb_smem_bytes(w) <= st->smem_optin && w < 0x7FFFFFFF;
    if (wb_want <= 0 && !rows_banded && w <= EM_MAX && (d > 1 || h < EM_MAX) && em_bytes(w, d > 1, P->intv) <= st->smem_optin)
        P->rows = ROWS_MERGED;
    else if (rows_fit && (wb_want == 0 || (wb_want < 0 && (rows_banded || w < WB_AUTO_MIN_W))))
        P->rows = ROWS_BANDED;
    else if (wb_want != 0 && w <= wb_max)
        P->rows = ROWS_WIDE;
    else
        P->rows = ROWS_SERIAL;
    P->cols = COLS_NONE;
    P->cb_line = 0;
    P->cb_tx = 1;
    if (d > 1) {
        const bool merged_fit = h <= EM_MAX && em_bytes(h, true, P->intv) <= st->smem_optin,
                   banded_fit = cb_line_bytes(h) <= st->smem_optin && h < 0x7FFFFFFF;
        if (wb_want <= 0 && cb_want != 0 && !cols_banded && merged_fit) {
            P->cols = COLS_MERGED;
            P->cb_line = em_bytes(h, true, P->intv);
        } else if (wb_want <= 0 && cb_want != 0 && banded_fit) {
            P->cols = COLS_BANDED;
            P->cb_line = cb_line_bytes(h);
        } else if (h <= wb_max && (wb_want > 0 || (wb_want < 0 && !banded_fit))) {
            P->cols = COLS_WIDE;
        } else {
            P->cols = COLS_SERIAL;
        }
    }
    if (P->cols == COLS_MERGED || P->cols == COLS_BANDED) {
        while (P->cb_tx < 32 && (size_t)(P->cb_tx * 2) * P->cb_line <= CB_TARGET_SMEM && P->cb_tx < w) P->cb_tx *= 2;
        if (cb_want >= 1 && cb_want <= 32 && (size_t)cb_want * P->cb_line <= st->smem_optin) P->cb_tx = cb_want;
    }
    plan_lines(ctx, st, w, h, d, P);
    plan_colbands(ctx, st, w, h, d, P);
}

template <typename T>
static void launch_outer(cudaStream_t s, const void *in, int64_t len, int64_t count, int32_t *sum, int32_t *out,
                         bool map16)
{
    const int64_t nseg = (count + SEG_A - 1) / SEG_A;
    int32_t *first = sum, *last = sum + len * nseg;
    const unsigned b = cu_blocks(len * nseg, 128, 1 << 30);
    edt_pass_a1<T><<<b, 128, 0, s>>>((const T *)in, len, count, nseg, first, last);
    if (map16)
        edt_pass_a2<T, uint16_t><<<b, 128, 0, s>>>((const T *)in, len, count, nseg, first, last, (uint16_t *)out);
    else
        edt_pass_a2<T, int32_t><<<b, 128, 0, s>>>((const T *)in, len, count, nseg, first, last, out);
}

/* Device scratch of one call: the site maps, then one region shared by pass A's summaries, the
 * one-thread-per-line envelope stacks (for a batch of L lines of at most maxlen) and the long-line
 * tables (wb_area bytes). */
struct exact_layout {
    size_t maps_al, stack_bytes, wb_area;
    int64_t L, maxlen;
};

static size_t free_device_bytes()
{
    size_t free_bytes = 0, tot = 0;
    cudaMemGetInfo(&free_bytes, &tot);
    cudaGetLastError();
    return free_bytes;
}

/* offset of the column bands' map i (0 sx, 1 E, 2 R; 3: the end) in the call's scratch */
static inline size_t cb_maps(const cu_plan &P, int64_t w, int64_t h, int i)
{
    const size_t a0 = ((size_t)(2 * w * h) + 255) & ~(size_t)255,
                 a1 = ((size_t)4 * CB_SECTOR * (size_t)P.cb_k * (size_t)CB_CHUNKS(P.cb_l) * (size_t)w + 255) & ~(size_t)255,
                 a2 = ((size_t)4 * (size_t)P.cb_k * (size_t)w + 255) & ~(size_t)255;
    return i == 0 ? 0 : i == 1 ? a0 : i == 2 ? a0 + a1 : a0 + a1 + a2;
}

static void plan_layout(const cu_plan &P, int64_t w, int64_t h, int64_t d, exact_layout *X)
{
    const int64_t n = w * h * d, lines_c = h * d, lines_b = w * d;
    const bool rows_wide = P.rows == ROWS_WIDE, cols_wide = P.cols == COLS_WIDE;
    const bool cols_serial = d > 1 && P.cols != COLS_MERGED && P.cols != COLS_BANDED && !cols_wide;
    const bool rows_serial = P.rows != ROWS_MERGED && P.rows != ROWS_BANDED && !rows_wide;
    memset(X, 0, sizeof *X);
    if (P.colbands) { /* sx (uint16), the bands' entries E, their ranges R */
        X->maps_al = cb_maps(P, w, h, 3);
        return;
    }
    if (P.lines) { /* sx (uint16), f2 (int), sy (uint16); then the stacks */
        X->maps_al = ln_maps((size_t)n, 3);
        X->stack_bytes = 256 + (size_t)P.ln_threads * (size_t)P.ln_cap * sizeof(ln_entry); /* counters, stacks */
        return;
    }
    X->maps_al = ((size_t)n * sizeof(int32_t) * (d > 1 ? 3 : 1) + 255) & ~(size_t)255;
    int64_t maxlines = 0;
    if (cols_serial) X->maxlen = h, maxlines = lines_b;
    if (rows_serial) {
        if (w > X->maxlen) X->maxlen = w;
        if (lines_c > maxlines) maxlines = lines_c;
    }
    const size_t free_bytes = (X->maxlen > 0 || rows_wide || cols_wide) ? free_device_bytes() : 0;
    const size_t half_free = free_bytes > X->maps_al ? (free_bytes - X->maps_al) / 2 : 0;
    if (X->maxlen > 0) {
        size_t budget = (size_t)3 << 29; /* 1.5 GiB of stacks at most */
        if (half_free && half_free < budget) budget = half_free;
        X->L = (int64_t)(budget / ((size_t)X->maxlen * 20));
        if (X->L > maxlines) X->L = maxlines;
        if (X->L < 1) X->L = 1;
    }
    /* long-line tables: all lines at once if within 1 GiB (and half the free memory), else
     * batches; at least one line of each wide pass */
    if (rows_wide || cols_wide) {
        size_t want = 0, least = 0;
        if (rows_wide) want = wb_min_area(w) * (size_t)lines_c, least = wb_min_area(w);
        if (cols_wide) {
            if (wb_min_area(h) * (size_t)lines_b > want) want = wb_min_area(h) * (size_t)lines_b;
            if (wb_min_area(h) > least) least = wb_min_area(h);
        }
        size_t budget = (size_t)1 << 30;
        if (half_free && half_free < budget) budget = half_free;
        X->wb_area = want < budget ? want : budget;
        if (X->wb_area < least) X->wb_area = least;
    }
    const int64_t alen = d > 1 ? w * h : w, acount = d > 1 ? d : h;
    const size_t sum_bytes = (size_t)2 * (size_t)alen * (size_t)((acount + SEG_A - 1) / SEG_A) * sizeof(int32_t);
    X->stack_bytes = (size_t)X->L * (size_t)X->maxlen * 20;
    if (X->stack_bytes < sum_bytes) X->stack_bytes = sum_bytes;
    if (X->stack_bytes < X->wb_area) X->stack_bytes = X->wb_area;
}

/* A kernel's launch: grid, block, dynamic shared memory. */
struct launch_shape {
    unsigned grid, threads;
    size_t smem;
};

/* Grid for @p lines work items of one block each: resident blocks per SM x SMs x 4. */
template <typename K>
static iwpp_status shape_blocks(iwpp_context *ctx, K kern, unsigned block, size_t smem, int64_t lines,
                                const char *what, unsigned *grid)
{
    cuda_state *st = cu_state(ctx);
    if (smem > 48 * 1024) CU_TRY(ctx, cu_allow_smem(st, kern), what);
    int occ = 0;
    CU_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kern, (int)block, smem), what);
    *grid = cu_blocks(lines, 1, st->sms * (occ < 1 ? 1 : occ) * 4);
    return IWPP_OK;
}

typedef void (*row_kernel)(const int32_t *, const int32_t *, float *, int64_t *, int64_t, int64_t, int64_t, int64_t,
                           double, double, double);
typedef void (*col_kernel)(const int32_t *, int32_t *, int32_t *, int64_t, int64_t, int64_t, int, int64_t, double,
                           double);

/* Pass C kernel and its shape for ROWS_MERGED / ROWS_BANDED (tuning key cuda.edt_row_threads). */
static iwpp_status shape_rows(iwpp_context *ctx, const cu_plan &P, int64_t w, int64_t d, int64_t lines,
                              row_kernel *kern, launch_shape *sh)
{
    const char *ev = iwpp_tune(ctx, IWPP_TUNE_CUDA_EDT_ROW_THREADS);
    const int want_t = ev ? atoi(ev) : 0;
    if (P.rows == ROWS_MERGED) {
        /* about 4 pixels a thread, 64 to 512 threads (short 3D rows: more blocks per SM) */
        *kern = d > 1 ? (P.intv ? edt_rows_env<true, true> : edt_rows_env<true, false>)
                      : (P.intv ? edt_rows_env<false, true> : edt_rows_env<false, false>);
        sh->smem = em_bytes(w, d > 1, P.intv);
        sh->threads = 64;
        while (sh->threads < RB_THREADS && (int64_t)sh->threads * 4 < w) sh->threads *= 2;
        if (want_t >= 64 && want_t <= RB_THREADS && (want_t & (want_t - 1)) == 0) sh->threads = (unsigned)want_t;
        return shape_blocks(ctx, *kern, sh->threads, sh->smem, lines, "sizing the distance transform's row kernel",
                            &sh->grid);
    }
    *kern = want_t == 256 ? edt_rows<256> : want_t == 512 ? edt_rows<512> : edt_rows<RB_THREADS>;
    const unsigned block = want_t == 256 || want_t == 512 ? (unsigned)want_t : RB_THREADS;
    sh->smem = rb_smem_bytes(w);
    iwpp_status e = shape_blocks(ctx, *kern, block, sh->smem, lines, "sizing the distance transform's row kernel",
                                 &sh->grid);
    /* occupancy for the full block; narrow rows launch fewer threads */
    sh->threads = w < (int64_t)block ? (unsigned)((w + 31) / 32 * 32) : block;
    return e;
}

/* Pass B kernel and its shape for COLS_MERGED / COLS_BANDED: tiles of cb_tx columns. */
static iwpp_status shape_cols(iwpp_context *ctx, const cu_plan &P, int64_t w, int64_t d, col_kernel *kern,
                              launch_shape *sh)
{
    *kern = P.cols != COLS_MERGED ? edt_cols : P.intv ? edt_cols_env<true> : edt_cols_env<false>;
    sh->threads = CB_THREADS;
    sh->smem = (size_t)P.cb_tx * P.cb_line;
    return shape_blocks(ctx, *kern, CB_THREADS, sh->smem, (w + P.cb_tx - 1) / P.cb_tx * d,
                        "sizing the distance transform's column kernel", &sh->grid);
}

/* The long-line passes' tables (wb_prepare) for the columns (3D) and the rows. */
static iwpp_status prepare_wide(iwpp_context *ctx, const cu_plan &P, const iwpp_buf *bin, const double sp[3],
                                int32_t *m0, char *stk, const exact_layout &X, iwpp_buf *dist, iwpp_buf *nearest,
                                wb_plan *wrow, wb_plan *wcol)
{
    const int64_t w = bin->w, h = bin->h, d = bin->d, n = w * h * d;
    memset(wrow, 0, sizeof *wrow);
    memset(wcol, 0, sizeof *wcol);
    iwpp_status e;
    if (P.cols == COLS_WIDE) {
        wb_lines &C = wcol->L;
        C.nz = m0, C.ny2 = m0 + n, C.nz2 = m0 + 2 * n;
        C.w = w, C.h = h, C.len = h;
        C.ha = sp[1], C.hy = sp[1], C.hz = sp[2];
        if ((e = wb_prepare<1>(ctx, *wcol, w * d, P.wb_seg, stk, X.wb_area)) != IWPP_OK) return e;
    }
    if (P.rows == ROWS_WIDE) {
        wb_lines &R = wrow->L;
        R.ny = d > 1 ? m0 + n : m0;
        R.nz = d > 1 ? m0 + 2 * n : NULL;
        R.w = w, R.h = h, R.len = w;
        R.ha = sp[0], R.hy = sp[1], R.hz = sp[2];
        R.dist = (float *)dist->ptr;
        R.nearest = nearest ? (int64_t *)nearest->ptr : NULL;
        if ((e = wb_prepare<0>(ctx, *wrow, h * d, P.wb_seg, stk, X.wb_area)) != IWPP_OK) return e;
    }
    return IWPP_OK;
}

/* Pass A along the outer axis, by input type. */
static void run_pass_a(cudaStream_t s, const iwpp_buf *bin, int32_t *sum, int32_t *m0, bool map16)
{
    const int64_t d = bin->d, alen = d > 1 ? bin->w * bin->h : bin->w, acount = d > 1 ? d : bin->h;
    switch (bin->type) {
    case IWPP_U8: launch_outer<uint8_t>(s, bin->ptr, alen, acount, sum, m0, map16); break;
    case IWPP_U16: launch_outer<uint16_t>(s, bin->ptr, alen, acount, sum, m0, map16); break;
    default: launch_outer<float>(s, bin->ptr, alen, acount, sum, m0, map16); break;
    }
}

/* The buffers and shapes one call's passes B and C read. */
struct exact_run {
    cudaStream_t s;
    int sms;
    int64_t w, h, d;
    double hx, hy, hz;
    int32_t *m0, *sum;
    double *zn, *zd;
    int32_t *v;
    ln_entry *ln_stk;
    int64_t L;
    float *dist;
    int64_t *nearest;
    row_kernel rk;
    col_kernel ck;
    launch_shape rows, cols;
    wb_plan wrow, wcol;
};

/* The column bands' maps in the call's scratch. */
static cb_grid cb_make(const cu_plan &P, const exact_run &r)
{
    cb_grid G;
    G.sx = (const uint16_t *)r.m0;
    G.E = (uint32_t *)((char *)r.m0 + cb_maps(P, r.w, r.h, 1));
    G.R = (uint32_t *)((char *)r.m0 + cb_maps(P, r.w, r.h, 2));
    G.w = r.w, G.h = (int)r.h, G.L = P.cb_l, G.K = P.cb_k;
    return G;
}

/* Pass B (3D) along y: nz -> ny2, nz2. */
static void run_cols(const cu_plan &P, exact_run &r)
{
    const int64_t n = r.w * r.h * r.d, lines_b = r.w * r.d;
    int32_t *ny2 = r.m0 + n, *nz2 = r.m0 + 2 * n;
    if (P.cols == COLS_MERGED || P.cols == COLS_BANDED) {
        r.ck<<<r.cols.grid, r.cols.threads, r.cols.smem, r.s>>>(r.m0, ny2, nz2, r.w, r.h, r.d, P.cb_tx,
                                                                (int64_t)P.cb_line, r.hy, r.hz);
    } else if (P.cols == COLS_WIDE) {
        wb_launch<1>(r.s, r.wcol, r.sms);
    } else {
        for (int64_t l0 = 0; l0 < lines_b; l0 += r.L) {
            const int64_t nl = lines_b - l0 < r.L ? lines_b - l0 : r.L;
            edt_pass_y3<<<cu_blocks(nl, 128, 1 << 30), 128, 0, r.s>>>(r.m0, ny2, nz2, r.w, r.h, l0, nl, r.hy, r.hz,
                                                                      r.v, r.zn, r.zd);
        }
    }
}

/* Pass C along x: sites -> distances and nearest indices; rows [row0, row1) of the merged and
 * banded kernels (the whole image for the others). */
static void run_rows(const cu_plan &P, exact_run &r, int64_t row0 = 0, int64_t row1 = -1)
{
    const int64_t lines_c = r.h * r.d, n = r.w * lines_c;
    const int32_t *ny = r.d > 1 ? r.m0 + n : r.m0, *nz = r.d > 1 ? r.m0 + 2 * n : NULL;
    if (row1 < 0) row1 = lines_c;
    if (P.colbands) {
        const int segs = (int)((row1 + P.cb_lc - 1) / P.cb_lc - row0 / P.cb_lc);
        edt_cb_colour<<<cu_blocks(r.w * segs, 256, 1 << 30), 256, 0, r.s>>>(cb_make(P, r), r.dist, r.nearest, P.cb_lc,
                                                                             (int)row0, (int)row1);
    } else if (P.rows == ROWS_MERGED || P.rows == ROWS_BANDED) {
        const unsigned grid = row1 - row0 < (int64_t)r.rows.grid ? (unsigned)(row1 - row0) : r.rows.grid;
        r.rk<<<grid, r.rows.threads, r.rows.smem, r.s>>>(ny, nz, r.dist, r.nearest, r.w, r.h, row0, row1, r.hx, r.hy,
                                                         r.hz);
    } else if (P.rows == ROWS_WIDE) {
        wb_launch<0>(r.s, r.wrow, r.sms);
    } else {
        for (int64_t l0 = 0; l0 < lines_c; l0 += r.L) {
            const int64_t nl = lines_c - l0 < r.L ? lines_c - l0 : r.L;
            edt_pass_x<<<cu_blocks(nl, 128, 1 << 30), 128, 0, r.s>>>(ny, nz, r.dist, r.nearest, r.w, r.h, l0, nl,
                                                                     r.hx, r.hy, r.hz, r.v, r.zn, r.zd);
        }
    }
}

/* The lines path: pass X into sx, then (3D) pass Y into f2 and sy, then the last pass. */
template <typename T> static void launch_x1d(cudaStream_t s, const void *in, uint16_t *sx, int64_t w, int64_t rows)
{
    const int warps = x1_warps(w);
    const size_t smem = (size_t)warps * 8 * (size_t)((w + 31) / 32);
    edt_x1d<T><<<cu_blocks(rows, warps, 1 << 30), warps * 32, smem, s>>>((const T *)in, sx, w, rows);
}

static void run_x1d(const exact_run &r, const iwpp_buf *bin, uint16_t *sx)
{
    const int64_t rows = r.h * r.d;
    switch (bin->type) {
    case IWPP_U8: launch_x1d<uint8_t>(r.s, bin->ptr, sx, r.w, rows); break;
    case IWPP_U16: launch_x1d<uint16_t>(r.s, bin->ptr, sx, r.w, rows); break;
    default: launch_x1d<float>(r.s, bin->ptr, sx, r.w, rows); break;
    }
}

static void run_lines(const cu_plan &P, exact_run &r, const iwpp_buf *bin)
{
    const int64_t w = r.w, h = r.h, d = r.d, n = w * h * d;
    uint16_t *sx = (uint16_t *)r.m0, *sy = (uint16_t *)((char *)r.m0 + ln_maps((size_t)n, 2));
    int *f2 = (int *)((char *)r.m0 + ln_maps((size_t)n, 1));
    run_x1d(r, bin, sx);
    const unsigned grid = (unsigned)(P.ln_threads / 256);
    unsigned long long *next = (unsigned long long *)r.ln_stk; /* two line counters, then the stacks */
    ln_entry *stk = r.ln_stk + 32;
    cudaMemsetAsync(next, 0, 2 * sizeof *next, r.s);
    if (d > 1) edt_lines_y<<<grid, 256, 0, r.s>>>(sx, f2, r.nearest ? sy : NULL, stk, next, w, h, d, P.ln_cap);
    edt_lines_out<<<grid, 256, 0, r.s>>>(sx, sy, f2, r.dist, r.nearest, stk, next + 1, w, h, d, P.ln_cap);
}

/* Column bands up to the distances: pass X, the bands' hulls, their merge. */
static void run_colbands(const cu_plan &P, exact_run &r, const iwpp_buf *bin)
{
    const cb_grid G = cb_make(P, r);
    run_x1d(r, bin, (uint16_t *)r.m0);
    edt_cb_hull<<<cu_blocks(r.w * G.K, 256, 1 << 30), 256, 0, r.s>>>(G);
    for (int l = 0; (1 << l) < G.K; ++l) {
        const int64_t pairs = ((G.K - 1) >> (l + 1)) + 1;
        edt_cb_merge<<<cu_blocks(r.w * pairs, 128, 1 << 30), 128, 0, r.s>>>(G, l);
    }
}

/* Every pass before the row pass: pass A and, in 3D, pass B (or the column bands up to their
 * distances, the last pass); or all of the lines path, after which no row pass is left (false). */
static bool run_to_rows(const cu_plan &P, exact_run &r, const iwpp_buf *bin)
{
    if (P.colbands) {
        run_colbands(P, r, bin);
        return true;
    }
    if (P.lines) {
        run_lines(P, r, bin);
        return false;
    }
    run_pass_a(r.s, bin, r.sum, r.m0, r.d == 1 && P.rows == ROWS_MERGED);
    if (r.d > 1) run_cols(P, r);
    return true;
}

/* Everything a call needs before its first kernel: plan, scratch, kernel shapes, long-line tables. */
static iwpp_status exact_setup(iwpp_context *ctx, const iwpp_buf *bin, const double sp[3], iwpp_buf *dist,
                               iwpp_buf *nearest, const cu_plan &P, exact_run &r)
{
    cuda_state *st = cu_state(ctx);
    const int64_t w = bin->w, h = bin->h, d = bin->d;
    exact_layout X;
    plan_layout(P, w, h, d, &X);
    void *mem = NULL;
    iwpp_status e = cu_scratch(ctx, X.maps_al + X.stack_bytes, &mem);
    if (e != IWPP_OK) return e;
    memset(&r, 0, sizeof r);
    r.s = st->stream, r.sms = st->sms, r.w = w, r.h = h, r.d = d, r.hx = sp[0], r.hy = sp[1], r.hz = sp[2];
    r.m0 = (int32_t *)mem, r.L = X.L;
    char *stk = (char *)mem + X.maps_al;
    r.zn = (double *)stk, r.zd = r.zn + (size_t)X.L * X.maxlen, r.v = (int32_t *)(r.zd + (size_t)X.L * X.maxlen);
    r.dist = (float *)dist->ptr, r.nearest = nearest ? (int64_t *)nearest->ptr : NULL;
    if (!P.lines && !P.colbands && (P.rows == ROWS_MERGED || P.rows == ROWS_BANDED) &&
        (e = shape_rows(ctx, P, w, d, h * d, &r.rk, &r.rows)))
        return e;
    if (!P.lines && (P.cols == COLS_MERGED || P.cols == COLS_BANDED) && (e = shape_cols(ctx, P, w, d, &r.ck, &r.cols)))
        return e;
    r.sum = (int32_t *)stk;
    if (P.lines || P.colbands) {
        r.ln_stk = (ln_entry *)stk;
        return IWPP_OK;
    }
    return prepare_wide(ctx, P, bin, sp, r.m0, stk, X, dist, nearest, &r.wrow, &r.wcol);
}

/* stats.variant and rounds of a call */
static void exact_name(iwpp_context *ctx, const cu_plan &P, int64_t h, int64_t d, const char *extra)
{
    if (P.colbands) {
        snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "edt-exact-colbands/int%s", extra);
        ctx->stats.rounds = 2;
        return;
    }
    if (P.lines) {
        snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "edt-exact-lines/int%s", extra);
        ctx->stats.rounds = d > 1 ? 3 : 2;
        return;
    }
    static const char *const rows_name[] = {"/merged-rows", "/banded-rows", "/wide-rows", ""};
    static const char *const cols_name[] = {"", "/merged-cols", "/banded-cols", "/wide-cols", ""};
    snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "edt-exact-separable%s%s%s%s", rows_name[P.rows],
             cols_name[P.cols], P.intv && (P.rows == ROWS_MERGED || P.cols == COLS_MERGED) ? "/int" : "", extra);
    ctx->stats.rounds = d > 1 ? 3 : (h > 1 ? 2 : 1);
}

static iwpp_status edt_exact(iwpp_context *ctx, const iwpp_buf *bin, const double sp[3], iwpp_buf *dist,
                             iwpp_buf *nearest)
{
    const int64_t w = bin->w, h = bin->h, d = bin->d;
    cu_plan P;
    plan_exact(ctx, cu_state(ctx), w, h, d, sp, &P);
    exact_run r;
    iwpp_status e = exact_setup(ctx, bin, sp, dist, nearest, P, r);
    if (e != IWPP_OK) return e;
    if ((e = cu_timer_start(ctx)) != IWPP_OK) return e;
    if (run_to_rows(P, r, bin)) run_rows(P, r);
    if ((e = cu_timer_stop(ctx)) != IWPP_OK) return e;
    exact_name(ctx, P, h, d, "");
    return IWPP_OK;
}

/* The work buffers edt_exact would take for these sizes (exact_setup's scratch): the EDT tiles
 * size their regions by it (native/tiles.c). */
extern "C" double iwpp_cuda_edt_scratch_bytes(iwpp_context *ctx, iwpp_type type, int64_t w, int64_t h, int64_t d,
                                              const double sp[3], int nearest)
{
    (void)type, (void)nearest; /* the plan depends on neither */
    if (cu_enter(ctx) != IWPP_OK) {
        ctx->message[0] = '\0';
        return -1.0;
    }
    cu_plan P;
    plan_exact(ctx, cu_state(ctx), w, h, d, sp, &P);
    exact_layout X;
    plan_layout(P, w, h, d, &X);
    return (double)(X.maps_al + X.stack_bytes);
}

/* edt_danielsson.cu */
iwpp_status iwpp_cuda_edt_danielsson(iwpp_context *ctx, const iwpp_buf *bin, const double sp[3], iwpp_buf *dist,
                                     iwpp_buf *nearest);

extern "C" iwpp_status iwpp_cuda_edt(iwpp_context *ctx, const iwpp_buf *binary, iwpp_edt_method method,
                                     const double spacing[3], iwpp_buf *dist, iwpp_buf *nearest)
{
    iwpp_status e = cu_enter(ctx);
    if (e != IWPP_OK) return e;
    const int64_t lim = (int64_t)INT32_MAX - 1;
    if (binary->w > lim || binary->h > lim || binary->d > lim)
        return iwpp_set_error(ctx, IWPP_EUNSUPPORTED,
                              "distance transform on CUDA: each image side must be at most %lld pixels", (long long)lim);
    return method == IWPP_EDT_DANIELSSON ? iwpp_cuda_edt_danielsson(ctx, binary, spacing, dist, nearest)
                                         : edt_exact(ctx, binary, spacing, dist, nearest);
}

/* Pass A (and B in 3D), then the row pass in bands, each band's distances going down on the copy
 * stream while the next bands compute (cu_download_gated). */
static iwpp_status exact_banded(iwpp_context *ctx, const cu_plan &P, const iwpp_buf *bin, const double sp[3],
                                iwpp_buf *dist, iwpp_buf *nearest, iwpp_image *dist_out, iwpp_image *nearest_out)
{
    cuda_state *st = cu_state(ctx);
    const int64_t w = bin->w, lines = bin->h * bin->d;
    exact_run r;
    iwpp_status e = exact_setup(ctx, bin, sp, dist, nearest, P, r);
    if (e != IWPP_OK) return e;
    if ((e = cu_timer_start(ctx)) != IWPP_OK) return e;
    const bool rows = run_to_rows(P, r, bin);
    cu_gates G; /* the lines path's last pass ends every row at once: one gate */
    G.n = !rows ? 1 : lines < IWPP_CUDA_BANDS ? (int)lines : IWPP_CUDA_BANDS;
    if (P.colbands) { /* each band of rows enough colour threads to fill the device twice */
        const int64_t rows_needed = ((int64_t)st->sms * 4096 + w - 1) / w * P.cb_lc, g = lines / rows_needed;
        G.n = g < 1 ? 1 : g < IWPP_CUDA_BANDS ? (int)g : IWPP_CUDA_BANDS;
    }
    for (int b = 0; b < G.n; ++b) {
        const int64_t l0 = lines * b / G.n, l1 = lines * (b + 1) / G.n;
        if (rows) run_rows(P, r, l0, l1);
        CU_TRY(ctx, cudaEventRecord(st->band_ev[b], st->stream), "recording an event");
        G.end[b] = (size_t)(l1 * w) * sizeof(float);
        G.ev[b] = st->band_ev[b];
    }
    if ((e = cu_timer_mark(ctx)) != IWPP_OK) return e;
    if ((e = cu_download_gated(ctx, dist->ptr, dist_out, &G)) != IWPP_OK) return e;
    if (nearest && (e = iwpp_cuda_download(ctx, nearest, nearest_out)) != IWPP_OK) return e;
    return cu_timer_read(ctx);
}

/* The whole exact EDT from the caller's views (ops->edt_views, dispatch.c). The input goes up as
 * bits of "!= 0" where it can (cu_upload_nonzero: an eighth of a U8 image's bytes; the transform
 * reads nothing else), and the row pass, the last, runs in bands whose distances go down while
 * the next bands compute. IWPP_EUNSUPPORTED (no message): the generic path runs instead. */
extern "C" iwpp_status iwpp_cuda_edt_views(iwpp_context *ctx, const iwpp_image *binary, iwpp_edt_method method,
                                           const double sp[3], iwpp_image *dist_out, iwpp_image *nearest_out)
{
    const int64_t w = binary->width, h = binary->height, d = binary->depth, lim = (int64_t)INT32_MAX - 1;
    if (method != IWPP_EDT_EXACT || w > lim || h > lim || d > lim) return IWPP_EUNSUPPORTED;
    iwpp_status e = cu_enter(ctx);
    if (e != IWPP_OK) return e;
    cu_plan P;
    plan_exact(ctx, cu_state(ctx), w, h, d, sp, &P);
    if (!P.lines && !P.colbands && P.rows != ROWS_MERGED && P.rows != ROWS_BANDED) return IWPP_EUNSUPPORTED;
    if ((e = cu_bands_ready(ctx)) != IWPP_OK) return e;
    const bool bits = cu_bits_upload_ok(ctx, binary, false);
    iwpp_buf in, dist, near;
    memset(&in, 0, sizeof in);
    in.type = bits ? IWPP_U8 : binary->type, in.w = w, in.h = h, in.d = d;
    dist = in, near = in;
    dist.type = IWPP_F32, near.type = IWPP_I64;
    if ((e = iwpp_cuda_buf_alloc(ctx, &in)) != IWPP_OK) return e;
    if ((e = iwpp_cuda_buf_alloc(ctx, &dist)) == IWPP_OK) {
        if (!nearest_out || (e = iwpp_cuda_buf_alloc(ctx, &near)) == IWPP_OK) {
            e = bits ? cu_upload_nonzero(ctx, (uint8_t *)in.ptr, binary) : iwpp_cuda_upload(ctx, &in, binary);
            if (e == IWPP_OK)
                e = exact_banded(ctx, P, &in, sp, &dist, nearest_out ? &near : NULL, dist_out, nearest_out);
            if (nearest_out) iwpp_cuda_buf_free(ctx, &near);
        }
        iwpp_cuda_buf_free(ctx, &dist);
    }
    iwpp_cuda_buf_free(ctx, &in);
    if (e == IWPP_OK) {
        exact_name(ctx, P, h, d, bits ? "/bits/bands" : "/bands");
    }
    return e;
}
