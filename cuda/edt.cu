/*
 * edt.cu - Euclidean distance transforms on CUDA.
 *
 * IWPP_EDT_EXACT: the separable transform of native/cpu/edt.c, pass for pass, with the same
 * double arithmetic in the same order (this file is compiled with -fmad=false so that no
 * multiply-add is fused), so the distances equal the CPU's bit for bit:
 *   A. along the outer axis (y in 2D, z in 3D): nearest background on the line, forward and
 *      backward sweeps, one thread per (column, segment of 128), coalesced;
 *   B. (3D) along y (edt_cols): one block per tile of up to 32 columns (x) of a slice, the
 *      banded envelopes of pass C in shared memory, one area per column; columns too tall for
 *      shared memory (h above ~24000 on Hopper) fall back to one thread per (x, z) line;
 *   C. along x: one block per row (edt_rows): banded lower envelopes in shared memory, each pixel
 *      takes the smallest d2 over its own band and the bands beside it that can still be closer,
 *      then dist = (float)sqrt(d2) and the nearest index. Rows too wide for shared memory fall
 *      back to one thread per row.
 * One-thread-per-line envelopes keep their stacks (v, zn, zd) in device scratch laid out
 * [element][line], so that the threads of a warp (consecutive lines) touch consecutive words;
 * lines are processed in batches that bound the scratch.
 *
 * IWPP_EDT_DANIELSSON: paper 000 Alg. 6 on the multi-level queue (mlqueue.cuh): every pixel
 * holds its nearest background site packed in 64 bits (x, y, z: 21 bits each); a neighbour
 * takes p's site if it is strictly closer, by a 64-bit atomicCAS retried while it still is.
 * 8-connected in 2D, 26 in 3D, as on the CPU; d2 is formed as on the CPU.
 */
#include "mlqueue.cuh"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define NO_SITE (-1)

template <typename T> __device__ __forceinline__ bool is_bg(const T *p, int64_t i) { return p[i] == (T)0; }

/* Pass A: nearest background plane along the outer axis of `count` planes of `len` contiguous
 * lines (2D: len = w, count = h; 3D: len = w*h, count = d): out[k*len + i] = the nearest k' with
 * in[k'*len + i] background (ties: the smaller k', as the CPU's sweeps), or NO_SITE.
 * Columns are cut into segments of SEG_A planes so that len*nseg threads share the work:
 * A1 records each segment's first and last background plane, A2 sweeps its segment with the
 * nearest background above and below found from those summaries. */
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

template <typename T>
__global__ void edt_pass_a2(const T *__restrict__ in, int64_t len, int64_t count, int64_t nseg,
                            const int32_t *__restrict__ first, const int32_t *__restrict__ last,
                            int32_t *__restrict__ out)
{
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < len * nseg; t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t i = t % len, sg = t / len;
        const int64_t k0 = sg * SEG_A, k1 = k0 + SEG_A < count ? k0 + SEG_A : count;
        int32_t above = NO_SITE, below = NO_SITE;
        for (int64_t s = sg - 1; s >= 0 && above == NO_SITE; --s) above = last[s * len + i];
        for (int64_t s = sg + 1; s < nseg && below == NO_SITE; ++s) below = first[s * len + i];
        int32_t prev = above;
        for (int64_t k = k0; k < k1; ++k) {
            prev = is_bg(in, k * len + i) ? (int32_t)k : prev;
            out[k * len + i] = prev;
        }
        for (int64_t k = k1 - 1; k >= k0; --k) {
            const int32_t cur = out[k * len + i];
            const int32_t kk = (int32_t)k;
            if (cur == kk) below = kk;
            const bool take = (below != NO_SITE) && ((cur == NO_SITE) || (below - kk < kk - cur));
            if (take) out[k * len + i] = below;
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

/* Envelope of the finite f[q], lo <= q < hi: offsets q - lo into st[k * ss], returns their count;
 * *mn the smallest f (INFINITY if none). */
__host__ __device__ __forceinline__ int rb_build(const double *sf, int lo, int hi, double h2, unsigned char *st,
                                                 int ss, double *mn)
{
    int k = -1;
    double m = INFINITY;
    for (int q = lo; q < hi; ++q) {
        const double fq = sf[RB_PAD(q)];
        if (fq == INFINITY) continue;
        m = fq < m ? fq : m;
        while (k >= 1) {
            const int p = lo + st[k * ss], pp = lo + st[(k - 1) * ss];
            const double fp = sf[RB_PAD(p)], fpp = sf[RB_PAD(pp)];
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

__host__ __device__ __forceinline__ double rb_eval(const double *sf, int p, int x, double hx)
{
    const double t = (double)(x - p) * hx;
    return sf[RB_PAD(p)] + t * t;
}

/* The envelope of band b at x (its values along the stack are unimodal): improves best/bi. */
__host__ __device__ __forceinline__ void rb_query(const double *sf, const unsigned char *stk, const unsigned char *cnt,
                                                  int NB, int b, int x, double hx, double &best, int &bi)
{
    const int m = cnt[b];
    if (m == 0) return;
    const unsigned char *st = stk + b;
    const int lo = b * RB_S;
    int a = 0, c = m - 1;
    while (a < c) {
        const int mid = (a + c) >> 1;
        const double g0 = rb_eval(sf, lo + st[mid * NB], x, hx), g1 = rb_eval(sf, lo + st[(mid + 1) * NB], x, hx);
        if (g1 < g0)
            a = mid + 1;
        else
            c = mid;
    }
    const int p = lo + st[a * NB];
    const double g = rb_eval(sf, p, x, hx);
    if (g < best) {
        best = g;
        bi = p;
    }
}

/* Nearest site of pixel x: d2 in best, the site's column in bi (-1 if the row has none). */
__host__ __device__ __forceinline__ void rb_pixel(const double *sf, const double *bmin, const double *smin,
                                                  const unsigned char *cnt, const unsigned char *stk, int NB, int x,
                                                  double hx, double &best, int &bi)
{
    best = INFINITY;
    bi = -1;
    const int b0 = x / RB_S;
    rb_query(sf, stk, cnt, NB, b0, x, hx, best, bi);
    for (int b = b0 - 1; b >= 0;) {
        const double t = (double)(x - (b * RB_S + RB_S - 1)) * hx;
        const double t2 = t * t;
        if (!(t2 < best)) break;
        if ((b % RB_SB) == RB_SB - 1 && !(smin[b / RB_SB] + t2 < best)) {
            b -= RB_SB;
            continue;
        }
        if (bmin[b] + t2 < best) rb_query(sf, stk, cnt, NB, b, x, hx, best, bi);
        --b;
    }
    for (int b = b0 + 1; b < NB;) {
        const double t = (double)(b * RB_S - x) * hx;
        const double t2 = t * t;
        if (!(t2 < best)) break;
        if ((b % RB_SB) == 0 && !(smin[b / RB_SB] + t2 < best)) {
            b += RB_SB;
            continue;
        }
        if (bmin[b] + t2 < best) rb_query(sf, stk, cnt, NB, b, x, hx, best, bi);
        ++b;
    }
}

template <int THREADS>
__global__ void __launch_bounds__(THREADS) edt_rows(const int32_t *__restrict__ ny, const int32_t *__restrict__ nz,
                                                       float *__restrict__ dist, int64_t *__restrict__ nearest,
                                                       int64_t w, int64_t h, int64_t rows, double hx, double hy,
                                                       double hz)
{
    extern __shared__ double rb_smem[];
    const int W = (int)w, NB = (W + RB_S - 1) / RB_S, NSB = (NB + RB_SB - 1) / RB_SB;
    double *sf = rb_smem, *bmin = sf + W + NB, *smin = bmin + NB;
    unsigned char *cnt = (unsigned char *)(smin + NSB), *stk = cnt + NB;
    const double h2 = hx * hx;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
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

template <typename T>
static void launch_outer(cudaStream_t s, const void *in, int64_t len, int64_t count, int32_t *sum, int32_t *out)
{
    const int64_t nseg = (count + SEG_A - 1) / SEG_A;
    int32_t *first = sum, *last = sum + len * nseg;
    const unsigned b = cu_blocks(len * nseg, 128, 1 << 30);
    edt_pass_a1<T><<<b, 128, 0, s>>>((const T *)in, len, count, nseg, first, last);
    edt_pass_a2<T><<<b, 128, 0, s>>>((const T *)in, len, count, nseg, first, last, out);
}

static iwpp_status edt_exact(iwpp_context *ctx, const iwpp_buf *bin, const double sp[3], iwpp_buf *dist,
                             iwpp_buf *nearest)
{
    cuda_state *st = cu_state(ctx);
    cudaStream_t s = st->stream;
    const int64_t w = bin->w, h = bin->h, d = bin->d, n = w * h * d;
    /* pass C row-parallel when a row's working set fits in shared memory (w up to ~24000 on
     * Hopper), else one thread per row as pass B */
    const size_t rb_bytes = rb_smem_bytes(w);
    const bool rows_fast = rb_bytes <= st->smem_optin && w < 0x7FFFFFFF;
    /* pass B by column tiles when one line of h fits in shared memory: TX lines per tile, the
     * largest power of two up to 32 whose tile stays within CB_TARGET_SMEM (at least 1), no wider
     * than the image; IWPP_CUDA_EDT_COL_TILE (1..32) overrides it for measurements, 0 selects
     * the one-thread-per-line kernel */
    const size_t cb_line = cb_line_bytes(h);
    const char *cb_env = getenv("IWPP_CUDA_EDT_COL_TILE"); /* "0": the one-thread-per-line pass B */
    const int cb_want = cb_env ? atoi(cb_env) : -1;
    const bool cols_fast = d > 1 && cb_line <= st->smem_optin && h < 0x7FFFFFFF && cb_want != 0;
    int cb_tx = 1;
    if (cols_fast) {
        while (cb_tx < 32 && (size_t)(cb_tx * 2) * cb_line <= CB_TARGET_SMEM && cb_tx < w) cb_tx *= 2;
        if (cb_want >= 1 && cb_want <= 32 && (size_t)cb_want * cb_line <= st->smem_optin) cb_tx = cb_want;
    }
    /* site maps: ny (2D) / nz, ny2, nz2 (3D), then the envelope stacks for a batch of lines
     * (pass B's lines of h in 3D, pass C's lines of w without rows_fast) */
    /* pass A summaries (2 per segment and line) share the envelope stacks' space */
    const size_t maps = (size_t)n * sizeof(int32_t) * (d > 1 ? 3 : 1);
    const size_t maps_al = (maps + 255) & ~(size_t)255;
    const int64_t lines_c = h * d, lines_b = w * d;
    int64_t maxlen = 0, maxlines = 0;
    if (d > 1 && !cols_fast) {
        maxlen = h;
        maxlines = lines_b;
    }
    if (!rows_fast) {
        if (w > maxlen) maxlen = w;
        if (lines_c > maxlines) maxlines = lines_c;
    }
    int64_t L = 0;
    if (maxlen > 0) {
        size_t fr = 0, tot = 0;
        cudaMemGetInfo(&fr, &tot);
        cudaGetLastError();
        size_t budget = (size_t)3 << 29; /* 1.5 GiB of stacks at most */
        if (fr > maps_al && (fr - maps_al) / 2 < budget) budget = (fr - maps_al) / 2;
        L = (int64_t)(budget / ((size_t)maxlen * 20));
        if (L > maxlines) L = maxlines;
        if (L < 1) L = 1;
    }
    const int64_t alen = d > 1 ? w * h : w, acount = d > 1 ? d : h;
    const size_t sum_bytes = (size_t)2 * (size_t)alen * (size_t)((acount + SEG_A - 1) / SEG_A) * sizeof(int32_t);
    size_t stack_bytes = (size_t)L * (size_t)maxlen * 20;
    if (stack_bytes < sum_bytes) stack_bytes = sum_bytes;
    void *mem = NULL;
    iwpp_status e = cu_scratch(ctx, maps_al + stack_bytes, &mem);
    if (e != IWPP_OK) return e;
    int32_t *m0 = (int32_t *)mem;
    char *stk = (char *)mem + maps_al;
    double *zn = (double *)stk;
    double *zd = zn + (size_t)L * maxlen;
    int32_t *v = (int32_t *)(zd + (size_t)L * maxlen);

    unsigned rb_grid = 1, rb_threads = RB_THREADS;
    void (*rb_kern)(const int32_t *, const int32_t *, float *, int64_t *, int64_t, int64_t, int64_t, double, double,
                    double) = edt_rows<RB_THREADS>;
    if (rows_fast) {
        /* block size for measurements: IWPP_CUDA_EDT_ROW_THREADS = 256 or 512 */
        const char *ev = getenv("IWPP_CUDA_EDT_ROW_THREADS");
        if (ev && atoi(ev) == 256) {
            rb_threads = 256;
            rb_kern = edt_rows<256>;
        } else if (ev && atoi(ev) == 512) {
            rb_threads = 512;
            rb_kern = edt_rows<512>;
        }
        if (rb_bytes > 48 * 1024)
            CU_TRY(ctx, cudaFuncSetAttribute(rb_kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)rb_bytes),
                   "configuring the distance transform's row kernel");
        const unsigned block = rb_threads;
        if (w < (int64_t)rb_threads) rb_threads = (unsigned)((w + 31) / 32 * 32);
        int occ = 0;
        CU_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, rb_kern, (int)block, rb_bytes),
               "sizing the distance transform's row kernel");
        if (occ < 1) occ = 1;
        rb_grid = cu_blocks(lines_c, 1, st->sms * occ * 4);
    }

    unsigned cb_grid = 1;
    const size_t cb_bytes = (size_t)cb_tx * cb_line;
    if (cols_fast) {
        if (cb_bytes > 48 * 1024)
            CU_TRY(ctx, cudaFuncSetAttribute(edt_cols, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)cb_bytes),
                   "configuring the distance transform's column kernel");
        int occ = 0;
        CU_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, edt_cols, CB_THREADS, cb_bytes),
               "sizing the distance transform's column kernel");
        if (occ < 1) occ = 1;
        cb_grid = cu_blocks((w + cb_tx - 1) / cb_tx * d, 1, st->sms * occ * 4);
    }

    if ((e = cu_timer_start(ctx)) != IWPP_OK) return e;
    int32_t *sum = (int32_t *)stk;
    switch (bin->type) {
    case IWPP_U8: launch_outer<uint8_t>(s, bin->ptr, alen, acount, sum, m0); break;
    case IWPP_U16: launch_outer<uint16_t>(s, bin->ptr, alen, acount, sum, m0); break;
    default: launch_outer<float>(s, bin->ptr, alen, acount, sum, m0); break;
    }
    const int32_t *ny = m0, *nz = NULL;
    if (d > 1) {
        int32_t *ny2 = m0 + n, *nz2 = m0 + 2 * n;
        if (cols_fast) {
            edt_cols<<<cb_grid, CB_THREADS, cb_bytes, s>>>(m0, ny2, nz2, w, h, d, cb_tx, (int64_t)cb_line, sp[1],
                                                           sp[2]);
        } else {
            for (int64_t l0 = 0; l0 < lines_b; l0 += L) {
                const int64_t nl = lines_b - l0 < L ? lines_b - l0 : L;
                edt_pass_y3<<<cu_blocks(nl, 128, 1 << 30), 128, 0, s>>>(m0, ny2, nz2, w, h, l0, nl, sp[1], sp[2], v,
                                                                        zn, zd);
            }
        }
        ny = ny2;
        nz = nz2;
    }
    if (rows_fast) {
        rb_kern<<<rb_grid, rb_threads, rb_bytes, s>>>(ny, nz, (float *)dist->ptr,
                                                       nearest ? (int64_t *)nearest->ptr : NULL, w, h, lines_c,
                                                       sp[0], sp[1], sp[2]);
    } else {
        for (int64_t l0 = 0; l0 < lines_c; l0 += L) {
            const int64_t nl = lines_c - l0 < L ? lines_c - l0 : L;
            edt_pass_x<<<cu_blocks(nl, 128, 1 << 30), 128, 0, s>>>(ny, nz, (float *)dist->ptr,
                                                                    nearest ? (int64_t *)nearest->ptr : NULL, w, h, l0,
                                                                    nl, sp[0], sp[1], sp[2], v, zn, zd);
        }
    }
    if ((e = cu_timer_stop(ctx)) != IWPP_OK) return e;
    snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "edt-exact-separable%s%s",
             rows_fast ? "/banded-rows" : "", cols_fast ? "/banded-cols" : "");
    ctx->stats.rounds = d > 1 ? 3 : (h > 1 ? 2 : 1);
    return IWPP_OK;
}

/* ---- Danielsson ---- */

#define SITE_NONE 0xFFFFFFFFFFFFFFFFull
#define SITE_BITS 21
#define SITE_MASK ((1ull << SITE_BITS) - 1)

__device__ __forceinline__ unsigned long long site_pack(int64_t x, int64_t y, int64_t z)
{
    return (unsigned long long)x | ((unsigned long long)y << SITE_BITS) | ((unsigned long long)z << (2 * SITE_BITS));
}

/* d2 exactly as native/cpu/edt.c's site_d2 */
__device__ __forceinline__ double site_d2(unsigned long long s, int64_t x, int64_t y, int64_t z, double hx, double hy,
                                          double hz)
{
    const int64_t sx = (int64_t)(s & SITE_MASK), sy = (int64_t)((s >> SITE_BITS) & SITE_MASK),
                  sz = (int64_t)((s >> (2 * SITE_BITS)) & SITE_MASK);
    const double tz = (double)(z - sz) * hz;
    const double ty = (double)(y - sy) * hy;
    const double tx = (double)(x - sx) * hx;
    return (tz * tz + ty * ty) + tx * tx;
}

template <typename T>
__global__ void dan_init(const T *in, unsigned long long *vr, int64_t w, int64_t h, int64_t n)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t x = i % w, r = i / w, y = r % h, z = r / h;
        vr[i] = in[i] == (T)0 ? site_pack(x, y, z) : SITE_NONE;
    }
}

template <typename IdxT> struct dan_op {
    unsigned long long *vr;
    geom g;
    double hx, hy, hz;
    struct item {
        int64_t x, y, z;
        unsigned long long s;
    };
    __device__ __forceinline__ int nbr() const { return g.n; }
    __device__ __forceinline__ bool load(IdxT p, item &it) const
    {
        const int64_t pp = (int64_t)p;
        it.x = pp % g.w;
        const int64_t r = pp / g.w;
        it.y = r % g.h;
        it.z = r / g.h;
        it.s = __ldcg(vr + pp);
        return it.s != SITE_NONE;
    }
    __device__ __forceinline__ bool visit(const item &it, int k, IdxT &q) const
    {
        const int64_t qx = it.x + g.off[k][0], qy = it.y + g.off[k][1], qz = it.z + g.off[k][2];
        if (qx < 0 || qx >= g.w || qy < 0 || qy >= g.h || qz < 0 || qz >= g.d) return false;
        const int64_t qi = qx + g.w * (qy + g.h * qz);
        q = (IdxT)qi;
        const double dn = site_d2(it.s, qx, qy, qz, hx, hy, hz);
        unsigned long long cur = __ldcg(vr + qi);
        for (;;) {
            if (cur == it.s) return false;
            if (cur != SITE_NONE && !(dn < site_d2(cur, qx, qy, qz, hx, hy, hz))) return false;
            const unsigned long long prev = atomicCAS(vr + qi, cur, it.s);
            if (prev == cur) return true;
            cur = prev;
        }
    }
};

/* wavefront: pixels with a site that some neighbour would take */
template <typename IdxT>
__global__ void dan_collect(const unsigned long long *vr, geom g, double hx, double hy, double hz, IdxT *out,
                            long long cap, unsigned long long *count)
{
    const int64_t n = g.w * g.h * g.d;
    for (int64_t b0 = (int64_t)blockIdx.x * blockDim.x; b0 < n; b0 += (int64_t)gridDim.x * blockDim.x) {
        const int64_t p = b0 + threadIdx.x;
        bool act = false;
        if (p < n) {
            const unsigned long long s = vr[p];
            if (s != SITE_NONE) {
                const int64_t x = p % g.w, r = p / g.w, y = r % g.h, z = r / g.h;
                for (int k = 0; k < g.n && !act; ++k) {
                    const int64_t qx = x + g.off[k][0], qy = y + g.off[k][1], qz = z + g.off[k][2];
                    if (qx < 0 || qx >= g.w || qy < 0 || qy >= g.h || qz < 0 || qz >= g.d) continue;
                    const unsigned long long c = vr[qx + g.w * (qy + g.h * qz)];
                    act = c != s && (c == SITE_NONE ||
                                     site_d2(s, qx, qy, qz, hx, hy, hz) < site_d2(c, qx, qy, qz, hx, hy, hz));
                }
            }
        }
        const unsigned ball = __ballot_sync(0xffffffffu, act);
        if (ball) {
            unsigned long long b = 0;
            const unsigned lane = threadIdx.x & 31;
            if (lane == 0) b = atomicAdd(count, (unsigned long long)__popc(ball));
            b = __shfl_sync(0xffffffffu, b, 0);
            const unsigned long long pos = b + __popc(ball & ((1u << lane) - 1u));
            if (act && (long long)pos < cap) out[pos] = (IdxT)p;
        }
    }
}

__global__ void dan_final(const unsigned long long *vr, float *dist, int64_t *nearest, int64_t w, int64_t h, int64_t n,
                          double hx, double hy, double hz)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const unsigned long long s = vr[i];
        if (s == SITE_NONE) {
            dist[i] = INFINITY;
            if (nearest) nearest[i] = -1;
            continue;
        }
        const int64_t x = i % w, r = i / w, y = r % h, z = r / h;
        dist[i] = (float)sqrt(site_d2(s, x, y, z, hx, hy, hz));
        if (nearest) {
            const int64_t sx = (int64_t)(s & SITE_MASK), sy = (int64_t)((s >> SITE_BITS) & SITE_MASK),
                          sz = (int64_t)((s >> (2 * SITE_BITS)) & SITE_MASK);
            nearest[i] = sx + w * (sy + h * sz);
        }
    }
}

template <typename IdxT, int VARIANT>
static iwpp_status dan_queue(iwpp_context *ctx, unsigned long long *vr, const geom &g, const double sp[3],
                             char *work, size_t work_bytes)
{
    cuda_state *st = cu_state(ctx);
    cudaStream_t s = st->stream;
    const int64_t N = g.w * g.h * g.d;
    int threshold = 0;
    const size_t smem = mlq_smem_bytes<IdxT>(VARIANT, g.n, &threshold);
    auto kern = mlq_kernel<dan_op<IdxT>, IdxT, VARIANT>;
    if (smem > 48 * 1024)
        CU_TRY(ctx, cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem),
               "configuring the queue kernel");
    int occ = 0;
    CU_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kern, MLQ_THREADS, smem), "sizing the queue kernel");
    if (occ < 1) occ = 1;
    if (occ > 4) occ = 4;
    const int blocks = st->sms * occ;
    /* work space: wavefront (N items) | block queues | per-block counters */
    const size_t init_bytes = ((size_t)N * sizeof(IdxT) + 255) & ~(size_t)255;
    const size_t gc_bytes = (size_t)blocks * sizeof(unsigned long long);
    long long cap;
    if (ctx->queue_capacity > 0) {
        cap = ctx->queue_capacity;
    } else {
        cap = (long long)((work_bytes - init_bytes - gc_bytes) / ((size_t)blocks * 2 * sizeof(IdxT)));
    }
    if (init_bytes + gc_bytes + (size_t)blocks * 2 * (size_t)cap * sizeof(IdxT) > work_bytes || cap < 1)
        return iwpp_set_error(ctx, IWPP_EINTERNAL, "internal: Danielsson work space too small");
    IdxT *init = (IdxT *)work;
    IdxT *gq = (IdxT *)(work + init_bytes);
    unsigned long long *gcount = (unsigned long long *)((char *)gq + (size_t)blocks * 2 * (size_t)cap * sizeof(IdxT));
    unsigned long long *ctr = st->dctr;
    dan_op<IdxT> op;
    op.vr = vr;
    op.g = g;
    op.hx = sp[0];
    op.hy = sp[1];
    op.hz = sp[2];
    for (int pass = 0;; ++pass) {
        CU_TRY(ctx, cudaMemsetAsync(ctr, 0, 8 * sizeof(unsigned long long), s), "clearing counters");
        dan_collect<IdxT><<<cu_blocks(N, 256, st->sms * 8), 256, 0, s>>>(vr, g, sp[0], sp[1], sp[2], init, N, ctr);
        CU_TRY(ctx, cudaMemcpyAsync(st->hctr, ctr, sizeof(unsigned long long), cudaMemcpyDeviceToHost, s),
               "reading the wavefront size");
        iwpp_status e = cu_sync(ctx, "collecting the wavefront");
        if (e != IWPP_OK) return e;
        const long long count = (long long)st->hctr[0];
        if (count == 0) break;
        if (pass > 0) ctx->stats.overflow_reruns++;
        CU_TRY(ctx, cudaMemsetAsync(gcount, 0, gc_bytes, s), "clearing queue counters");
        CU_TRY(ctx, cudaMemsetAsync(ctr, 0, 8 * sizeof(unsigned long long), s), "clearing counters");
        mlq_ctl ctl;
        ctl.visited = ctr + 1;
        ctl.rounds = ctr + 2;
        ctl.overflow = ctr + 3;
        ctl.gcount = gcount;
        kern<<<blocks, MLQ_THREADS, smem, s>>>(op, init, count, gq, cap, threshold, ctl);
        CU_TRY(ctx, cudaMemcpyAsync(st->hctr, ctr, 4 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, s),
               "reading the queue counters");
        e = cu_sync(ctx, "running the queue phase");
        if (e != IWPP_OK) return e;
        ctx->stats.pixels_visited += (int64_t)st->hctr[1];
        ctx->stats.rounds += (int64_t)st->hctr[2];
        if (!st->hctr[3]) break;
    }
    return IWPP_OK;
}

template <typename IdxT>
static iwpp_status dan_variant(iwpp_context *ctx, unsigned long long *vr, const geom &g, const double sp[3],
                               char *work, size_t work_bytes)
{
    switch (ctx->queue_variant) {
    case IWPP_QUEUE_ATOMIC: return dan_queue<IdxT, IWPP_QUEUE_ATOMIC>(ctx, vr, g, sp, work, work_bytes);
    case IWPP_QUEUE_PREFIXSUM: return dan_queue<IdxT, IWPP_QUEUE_PREFIXSUM>(ctx, vr, g, sp, work, work_bytes);
    default: return dan_queue<IdxT, IWPP_QUEUE_MULTILEVEL>(ctx, vr, g, sp, work, work_bytes);
    }
}

static iwpp_status edt_danielsson(iwpp_context *ctx, const iwpp_buf *bin, const double sp[3], iwpp_buf *dist,
                                  iwpp_buf *nearest)
{
    cuda_state *st = cu_state(ctx);
    cudaStream_t s = st->stream;
    const int64_t w = bin->w, h = bin->h, d = bin->d, n = w * h * d;
    if (w > (int64_t)SITE_MASK || h > (int64_t)SITE_MASK || d > (int64_t)SITE_MASK)
        return iwpp_set_error(ctx, IWPP_EUNSUPPORTED,
                              "Danielsson distance transform on CUDA: each side must be below %lld pixels; "
                              "use the exact method",
                              (long long)SITE_MASK);
    const geom g = make_geom(bin, 26);
    const int small = n < (int64_t)0xFFFFFFF0ll;
    const size_t isz = small ? 4 : 8;
    const size_t vr_bytes = ((size_t)n * 8 + 255) & ~(size_t)255;
    /* block queues: N/2 items in all (or the requested capacity), at least 4096 per block */
    const int blocks_max = st->sms * 4;
    long long cap = ctx->queue_capacity > 0 ? ctx->queue_capacity : n / (2 * blocks_max) + 4096;
    const size_t work_bytes = (((size_t)n * isz + 255) & ~(size_t)255) + (size_t)blocks_max * 2 * (size_t)cap * isz +
                              (size_t)blocks_max * 8 + 256;
    void *mem = NULL;
    iwpp_status e = cu_scratch(ctx, vr_bytes + work_bytes, &mem);
    if (e != IWPP_OK) return e;
    unsigned long long *vr = (unsigned long long *)mem;
    char *work = (char *)mem + vr_bytes;
    if ((e = cu_timer_start(ctx)) != IWPP_OK) return e;
    const unsigned nb = cu_blocks(n, 256, st->sms * 16);
    switch (bin->type) {
    case IWPP_U8: dan_init<uint8_t><<<nb, 256, 0, s>>>((const uint8_t *)bin->ptr, vr, w, h, n); break;
    case IWPP_U16: dan_init<uint16_t><<<nb, 256, 0, s>>>((const uint16_t *)bin->ptr, vr, w, h, n); break;
    default: dan_init<float><<<nb, 256, 0, s>>>((const float *)bin->ptr, vr, w, h, n); break;
    }
    e = small ? dan_variant<unsigned int>(ctx, vr, g, sp, work, work_bytes)
              : dan_variant<unsigned long long>(ctx, vr, g, sp, work, work_bytes);
    if (e != IWPP_OK) return e;
    dan_final<<<nb, 256, 0, s>>>(vr, (float *)dist->ptr, nearest ? (int64_t *)nearest->ptr : NULL, w, h, n, sp[0],
                                 sp[1], sp[2]);
    if ((e = cu_timer_stop(ctx)) != IWPP_OK) return e;
    snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "edt-danielsson/%s",
             ctx->queue_variant == IWPP_QUEUE_ATOMIC      ? "atomic"
             : ctx->queue_variant == IWPP_QUEUE_PREFIXSUM ? "prefixsum"
                                                          : "multilevel");
    return IWPP_OK;
}

extern "C" iwpp_status iwpp_cuda_edt(iwpp_context *ctx, const iwpp_buf *binary, iwpp_edt_method method,
                                     const double spacing[3], iwpp_buf *dist, iwpp_buf *nearest)
{
    iwpp_status e = cu_enter(ctx);
    if (e != IWPP_OK) return e;
    const int64_t lim = (int64_t)INT32_MAX - 1;
    if (binary->w > lim || binary->h > lim || binary->d > lim)
        return iwpp_set_error(ctx, IWPP_EUNSUPPORTED,
                              "distance transform on CUDA: each image side must be at most %lld pixels", (long long)lim);
    return method == IWPP_EDT_DANIELSSON ? edt_danielsson(ctx, binary, spacing, dist, nearest)
                                         : edt_exact(ctx, binary, spacing, dist, nearest);
}
