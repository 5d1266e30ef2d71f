/*
 * reconstruct_2d.cuh - the 2D fast paths of FH_GPU (reconstruct.cu): raster scans and the
 * wavefront collection with four pixels of a row per thread.
 *
 * The generic kernels take one pixel per thread and one narrow load per neighbour: on an 8192^2
 * U8 tissue image a row scan took 0.56 ms, a column scan 0.50 ms and a collection 0.55 ms on the
 * H100 (ncu), about ten times the time the memory needs. Here a thread owns four consecutive
 * pixels of a row (one 4-, 8- or 16-byte load for U8, U16, F32 when the row width is a multiple
 * of 4), and the values of the neighbouring columns come from the neighbouring lanes by shuffle;
 * only the two lanes at a warp's edges read theirs from memory.
 *
 * Every value written is min(max(J of some neighbours and of p), I(p)) (mirrored for erosion),
 * which never passes the reconstruction, so values read while other threads write them (stale or
 * fresh) only change how far a scan gets, never the result: the queue phase finishes the rest.
 */
#ifndef IWPP_CUDA_RECONSTRUCT_2D_CUH
#define IWPP_CUDA_RECONSTRUCT_2D_CUH

#include "common.cuh"

#define SEG2_X 1024 /* pixels of a row one warp scans (a multiple of 128) */
#define SEG2_Y 256  /* rows of a column band one thread scans, at most */

/* Rows a column scan's thread takes: SEG2_Y, halved (down to 64) while that leaves fewer than
 * 256 warps, so that a small image's scan is not a few long chains. H100, compute ms of U8
 * tissue reconstructions, 256 / 128 / 64 rows: 1536^2 0.94-0.95 / 0.85-0.88 / 0.83-0.85 (288
 * warps at 64), 4096^2 1.42-1.44 / 1.50-1.52 / 1.71-1.74 (512 warps at 256), 8192^2 4.14-4.25 /
 * 4.20-4.24 / 4.45-4.46; a tiled 8192^2 call at 1/8 (tiles of 1537^2) 31.8-34.6 / 30.6-30.7 /
 * 28.1-29.1 ms. (Fill holes, which wants long reach, 1536^2: 1.60-1.62 / 1.68-1.70 / 1.72-1.76.) */
static int64_t seg2_rows(int64_t w, int64_t h)
{
    const int64_t wpr = ((w + 3) / 4 + 31) / 32;
    int64_t rows = SEG2_Y;
    while (rows > 64 && wpr * ((h + rows - 1) / rows) < 256) rows /= 2;
    return rows;
}
#define BAND2_Y 8   /* rows whose pixels a column scan loads before it uses them */

template <typename T> struct quad_word;
template <> struct quad_word<uint8_t> { typedef unsigned int type; };
template <> struct quad_word<uint16_t> { typedef uint2 type; };
template <> struct quad_word<float> { typedef float4 type; };

template <typename T> union quad {
    typename quad_word<T>::type w;
    T e[4];
};

template <typename T> __device__ __forceinline__ T shfl_up_v(T v, int o)
{
    return (T)__shfl_up_sync(0xffffffffu, (unsigned)v, o);
}
template <> __device__ __forceinline__ float shfl_up_v<float>(float v, int o) { return __shfl_up_sync(0xffffffffu, v, o); }
template <typename T> __device__ __forceinline__ T shfl_down_v(T v, int o)
{
    return (T)__shfl_down_sync(0xffffffffu, (unsigned)v, o);
}
template <> __device__ __forceinline__ float shfl_down_v<float>(float v, int o)
{
    return __shfl_down_sync(0xffffffffu, v, o);
}
template <typename T> __device__ __forceinline__ T shfl_v(T v, int l) { return (T)__shfl_sync(0xffffffffu, (unsigned)v, l); }
template <> __device__ __forceinline__ float shfl_v<float>(float v, int l) { return __shfl_sync(0xffffffffu, v, l); }

/* Pixels x .. x+3 of a row (x a multiple of 4); those at or beyond @p end read as @p fill. @p vec:
 * rows start on a 16-byte boundary (width a multiple of 4, aligned buffers). */
template <typename T>
__device__ __forceinline__ void load_quad(const T *row, int64_t x, int64_t end, bool vec, T fill, T (&v)[4])
{
    if (vec && x + 4 <= end) {
        quad<T> q;
        q.w = *(const typename quad_word<T>::type *)(row + x);
#pragma unroll
        for (int i = 0; i < 4; ++i) v[i] = q.e[i];
    } else {
#pragma unroll
        for (int i = 0; i < 4; ++i) v[i] = x + i < end ? row[x + i] : fill;
    }
}

template <typename T>
__device__ __forceinline__ void store_quad(T *row, int64_t x, int64_t end, bool vec, const T (&v)[4])
{
    if (vec && x + 4 <= end) {
        quad<T> q;
#pragma unroll
        for (int i = 0; i < 4; ++i) q.e[i] = v[i];
        *(typename quad_word<T>::type *)(row + x) = q.w;
    } else {
#pragma unroll
        for (int i = 0; i < 4; ++i)
            if (x + i < end) row[x + i] = v[i];
    }
}

/* v moved towards a, then bounded by b (a already within b): one pixel's step of a scan. */
template <bool ERO, typename T> __device__ __forceinline__ T step2(T v, T a, T b)
{
    return order<ERO>::limit(order<ERO>::best(v, a), b);
}

/* A row scan in direction DIR: one warp per SEG2_X pixels of a row, 128 pixels a step. Each
 * pixel's update v -> step2(v, a, b) composes associatively, so a lane composes its four, the
 * warp scans the 32 compositions, and each lane then applies them to its carry-in. */
template <typename T, bool ERO, bool CONN8, int DIR>
__global__ void scan_x2d_kernel(T *J, const T *__restrict__ I, int64_t w, int64_t h, int64_t nseg, bool vec)
{
    typedef order<ERO> O;
    const int64_t gw = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (gw >= h * nseg) return; /* whole warp */
    const int64_t y = gw / nseg, seg = gw - y * nseg;
    const int64_t x0 = seg * SEG2_X, x1 = x0 + SEG2_X < w ? x0 + SEG2_X : w;
    T *row = J + y * w;
    const T *mrow = I + y * w;
    const T *up = y > 0 ? row - w : row, *dn = y + 1 < h ? row + w : row;
    const bool has_up = CONN8 && y > 0, has_dn = CONN8 && y + 1 < h;
    const T W = O::template worst<T>(), TOP = O::template top<T>();
    /* the carry and the diagonal predecessors of the segment's first pixel */
    const int64_t xin = DIR > 0 ? x0 - 1 : x1;
    T carry = W, uprev = W, dprev = W;
    if (xin >= 0 && xin < w) {
        carry = row[xin];
        if (has_up) uprev = up[xin];
        if (has_dn) dprev = dn[xin];
    }
    const int64_t nblk = (x1 - x0 + 127) / 128;
    const int g = DIR > 0 ? lane : 31 - lane; /* the lane's quad within a block of 128 */
    T j[4], m[4], u[4], d[4];
    auto load = [&](int64_t k, T (&j_)[4], T (&m_)[4], T (&u_)[4], T (&d_)[4]) {
        const int64_t b = DIR > 0 ? k : nblk - 1 - k;
        const int64_t x = x0 + b * 128 + 4 * g;
        load_quad(row, x, x1, vec, W, j_);
        load_quad(mrow, x, x1, vec, TOP, m_); /* past the end: identity steps */
#pragma unroll
        for (int i = 0; i < 4; ++i) u_[i] = d_[i] = W;
        if (has_up) load_quad(up, x, x1, vec, W, u_);
        if (has_dn) load_quad(dn, x, x1, vec, W, d_);
    };
    load(0, j, m, u, d);
    for (int64_t k = 0; k < nblk; ++k) {
        const int64_t b = DIR > 0 ? k : nblk - 1 - k;
        const int64_t x = x0 + b * 128 + 4 * g;
        T jn[4], mn[4], un[4], dn_[4];
        if (k + 1 < nblk) load(k + 1, jn, mn, un, dn_);
        /* element i in scan order is pixel P(i) of the quad */
#define P(i) (DIR > 0 ? (i) : 3 - (i))
        T a[4], bb[4];
        T dup = shfl_up_v(u[P(3)], 1), ddn = shfl_up_v(d[P(3)], 1);
        if (lane == 0) dup = uprev, ddn = dprev;
        uprev = shfl_v(u[P(3)], 31);
        dprev = shfl_v(d[P(3)], 31);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            T av = j[P(i)];
            if (CONN8) av = O::best(av, O::best(i == 0 ? dup : u[P(i - 1)], i == 0 ? ddn : d[P(i - 1)]));
            bb[i] = m[P(i)];
            a[i] = O::limit(av, bb[i]);
        }
        T A = a[0], B = bb[0];
#pragma unroll
        for (int i = 1; i < 4; ++i) {
            A = step2<ERO>(A, a[i], bb[i]);
            B = step2<ERO>(B, a[i], bb[i]);
        }
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const T pa = shfl_up_v(A, o), pb = shfl_up_v(B, o);
            if (lane >= o) {
                const T na = step2<ERO>(pa, A, B), nb = step2<ERO>(pb, A, B);
                A = na;
                B = nb;
            }
        }
        const T ea = shfl_up_v(A, 1), eb = shfl_up_v(B, 1);
        T v = lane == 0 ? carry : step2<ERO>(carry, ea, eb);
        T o_[4];
        bool changed = false;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            v = step2<ERO>(v, a[i], bb[i]);
            o_[P(i)] = v;
            changed |= v != j[P(i)];
        }
        carry = shfl_v(v, 31);
        if (changed) store_quad(row, x, x1, vec, o_);
#undef P
#pragma unroll
        for (int i = 0; i < 4; ++i) j[i] = jn[i], m[i] = mn[i], u[i] = un[i], d[i] = dn_[i];
    }
}

/* A column scan in direction DIR: one thread per four columns and segy rows (seg2_rows); a
 * warp covers 128 consecutive columns of one band, so the diagonal predecessors (the previous
 * row's new values of columns x-1 and x+4) are the neighbouring lanes' carries. Loads run
 * BAND2_Y rows ahead of their use. */
template <typename T, bool ERO, bool CONN8, int DIR>
__global__ void scan_y2d_kernel(T *J, const T *__restrict__ I, int64_t w, int64_t h, int64_t nseg, int64_t wpr,
                                bool vec, int64_t segy)
{
    typedef order<ERO> O;
    const int64_t gw = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (gw >= nseg * wpr) return; /* whole warp */
    const int64_t seg = gw / wpr, wr = gw - seg * wpr;
    const int64_t x = (wr * 32 + lane) * 4; /* may be >= w: the lane still takes part in shuffles */
    const int64_t y0 = seg * segy, y1 = y0 + segy < h ? y0 + segy : h;
    const int64_t ys = DIR > 0 ? y0 : y1 - 1, n = y1 - y0;
    const T W = O::template worst<T>();
    T c[4];
    {
        const int64_t yin = ys - DIR;
        if (yin >= 0 && yin < h)
            load_quad(J + yin * w, x, w, vec, W, c);
        else
#pragma unroll
            for (int i = 0; i < 4; ++i) c[i] = W;
    }
    for (int64_t s = 0; s < n; s += BAND2_Y) {
        T jj[BAND2_Y][4], mm[BAND2_Y][4], edge[BAND2_Y];
        if (vec && x + 4 <= w && s + BAND2_Y <= n) {
            /* a whole band of whole quads: every load unconditional, so that the band's loads
               are waited for once (a load inside a branch is waited for where the branches
               join: H100, 1536^2, 0.29 ms a column scan, one latency a load) */
            typedef typename quad_word<T>::type word;
#pragma unroll
            for (int r = 0; r < BAND2_Y; ++r) {
                const int64_t y = ys + DIR * (s + r), yp = y - DIR;
                quad<T> qj, qm;
                qj.w = *(const word *)(J + y * w + x);
                qm.w = *(const word *)(I + y * w + x);
#pragma unroll
                for (int i = 0; i < 4; ++i) jj[r][i] = qj.e[i], mm[r][i] = qm.e[i];
                /* the edge lanes' diagonal predecessor in the next warp's columns, loaded with
                   the band (possibly before that warp updates it: a scan then gets less far,
                   never wrong) */
                const int64_t ex = lane == 0 ? x - 1 : x + 4;
                const bool eok = CONN8 && (lane == 0 || lane == 31) && yp >= 0 && yp < h && ex >= 0 && ex < w;
                const int64_t ey = min(max(yp, (int64_t)0), h - 1), exc = min(max(ex, (int64_t)0), w - 1);
                const T e = J[ey * w + exc]; /* no branch: min/max */
                edge[r] = eok ? e : W;
            }
        } else {
#pragma unroll
            for (int r = 0; r < BAND2_Y; ++r)
                if (s + r < n) {
                    const int64_t y = ys + DIR * (s + r), yp = y - DIR;
                    load_quad(J + y * w, x, w, vec, W, jj[r]);
                    load_quad(I + y * w, x, w, vec, W, mm[r]); /* past the width: pinned at W */
                    edge[r] = W;
                    if (CONN8 && yp >= 0 && yp < h) {
                        if (lane == 0 && x > 0 && x <= w) edge[r] = J[yp * w + x - 1];
                        if (lane == 31 && x + 4 < w) edge[r] = J[yp * w + x + 4];
                    }
                }
        }
#pragma unroll
        for (int r = 0; r < BAND2_Y; ++r) {
            if (s + r >= n) break; /* uniform across the warp */
            const int64_t y = ys + DIR * (s + r);
            T left = W, right = W;
            if (CONN8) {
                left = shfl_up_v(c[3], 1);
                right = shfl_down_v(c[0], 1);
                if (lane == 0) left = edge[r];
                if (lane == 31) right = edge[r];
            }
            T nc[4];
            bool changed = false;
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                T av = jj[r][i];
                if (CONN8) av = O::best(av, O::best(i == 0 ? left : c[i - 1], i == 3 ? right : c[i + 1]));
                av = O::limit(av, mm[r][i]);
                nc[i] = step2<ERO>(c[i], av, mm[r][i]);
                changed |= nc[i] != jj[r][i];
            }
#pragma unroll
            for (int i = 0; i < 4; ++i) c[i] = nc[i];
            if (changed && x < w) store_quad(J + y * w, x, w, vec, nc);
        }
    }
}

/* The initial wavefront of a 2D image: p with a neighbour q where J(q) is behind J(p) and behind
 * I(q). One warp per 128 pixels of a row, rows y-1, y, y+1 loaded once; a missing neighbour reads
 * as a sentinel s with I(q) = J(q) = s, which can never satisfy the second test. */
template <typename T, bool ERO, bool CONN8, typename IdxT>
__global__ void collect2d_kernel(const T *J, const T *__restrict__ I, int64_t w, int64_t h, int64_t wpr, bool vec,
                                 IdxT *out, long long cap, unsigned long long *count)
{
    typedef order<ERO> O;
    const int lane = threadIdx.x & 31;
    const int64_t nw = h * wpr;
    const int64_t warps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    const T S = O::template top<T>();
    for (int64_t gw = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; gw < nw; gw += warps) {
        const int64_t y = gw / wpr, wr = gw - y * wpr;
        const int64_t x = (wr * 32 + lane) * 4;
        T jr[3][6], ir[3][6]; /* rows y-1, y, y+1; columns x-1 .. x+4 */
#pragma unroll
        for (int r = 0; r < 3; ++r) {
            const int64_t yy = y + r - 1;
            const bool ok = yy >= 0 && yy < h;
            T q[4], iq[4];
            if (ok) {
                load_quad(J + yy * w, x, w, vec, S, q);
                load_quad(I + yy * w, x, w, vec, S, iq);
            } else {
#pragma unroll
                for (int i = 0; i < 4; ++i) q[i] = iq[i] = S;
            }
            T l = shfl_up_v(q[3], 1), li = shfl_up_v(iq[3], 1);
            T rt = shfl_down_v(q[0], 1), ri = shfl_down_v(iq[0], 1);
            if (lane == 0) {
                const bool in = ok && x > 0 && x <= w;
                l = in ? J[yy * w + x - 1] : S;
                li = in ? I[yy * w + x - 1] : S;
            }
            if (lane == 31) {
                const bool in = ok && x + 4 < w;
                rt = in ? J[yy * w + x + 4] : S;
                ri = in ? I[yy * w + x + 4] : S;
            }
            jr[r][0] = l;
            ir[r][0] = li;
            jr[r][5] = rt;
            ir[r][5] = ri;
#pragma unroll
            for (int i = 0; i < 4; ++i) jr[r][i + 1] = q[i], ir[r][i + 1] = iq[i];
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            bool act = false;
            if (x + i < w) {
                const T jp = jr[1][i + 1];
#pragma unroll
                for (int r = 0; r < 3; ++r)
#pragma unroll
                    for (int c = i; c < i + 3; ++c) {
                        if (r == 1 && c == i + 1) continue;                 /* p itself */
                        if (!CONN8 && r != 1 && c != i + 1) continue;       /* diagonals */
                        act |= O::ahead(jp, jr[r][c]) && O::ahead(ir[r][c], jr[r][c]);
                    }
            }
            const unsigned long long pos = warp_append_slot(act, count);
            if (act && (long long)pos < cap) out[pos] = (IdxT)(y * w + x + i);
        }
    }
}

#endif
