/*
 * label_common.cuh - tiles, pixel tests and the union-find steps of label.cu (internal), written
 * so that the host can run them too: with LB_HOST defined, one host thread runs every item of a
 * phase in turn (a valid schedule: the items of a phase only meet through atomics and barriers),
 * which is how tests/test_label_tiles.cpp checks this code where CI has no GPU.
 *
 * The image is cut into tiles of LB_TILE pixels: 32x32 in 2D, 16x8x8 in 3D. A tile's local index
 * lx + tx*(ly + ty*lz) orders its pixels as the global raster order does.
 */
#ifndef IWPP_CUDA_LABEL_COMMON_CUH
#define IWPP_CUDA_LABEL_COMMON_CUH

#ifdef LB_HOST
#include <stdint.h>
#define LB_FN inline
#define LB_HD inline
#define LB_SYNC()
#define LB_SYNC_OR(x) (x)
#define LB_TID 0
#define LB_NTH 1
/* as common.cuh's */
struct geom {
    int64_t w, h, d;
    int n;
    signed char off[26][3];
};
template <typename T> inline T lb_atomic_min(T *a, T v)
{
    const T o = *a;
    if (v < o) *a = v;
    return o;
}
template <typename T> inline T lb_atomic_max(T *a, T v)
{
    const T o = *a;
    if (v > o) *a = v;
    return o;
}
inline unsigned int lb_atomic_or(unsigned int *a, unsigned int v)
{
    const unsigned int o = *a;
    *a = o | v;
    return o;
}
inline unsigned int lb_atomic_add(unsigned int *a, unsigned int v)
{
    const unsigned int o = *a;
    *a = o + v;
    return o;
}
template <typename T> inline T lb_ld(const T *p) { return *p; }
#else
#include "common.cuh"
#define LB_FN __device__ __forceinline__
#define LB_HD __host__ __device__ __forceinline__
#define LB_SYNC() __syncthreads()
#define LB_SYNC_OR(x) __syncthreads_or(x)
#define LB_TID ((int)threadIdx.x)
#define LB_NTH ((int)blockDim.x)
template <typename T> __device__ __forceinline__ T lb_atomic_min(T *a, T v) { return atomicMin(a, v); }
template <typename T> __device__ __forceinline__ T lb_atomic_max(T *a, T v) { return atomicMax(a, v); }
__device__ __forceinline__ unsigned int lb_atomic_or(unsigned int *a, unsigned int v) { return atomicOr(a, v); }
__device__ __forceinline__ unsigned int lb_atomic_add(unsigned int *a, unsigned int v) { return atomicAdd(a, v); }
/* through L2: values other blocks change with atomics during the kernel */
template <typename T> __device__ __forceinline__ T lb_ld(const T *p) { return __ldcg(p); }
#endif

#define LB_TILE 1024

struct lb_tiling {
    int tx, ty, tz;        /* tile sizes */
    int64_t ntx, nty, ntz; /* tiles along each axis */
    int64_t ntiles;
};

/* Tiles of @p tx x @p ty x @p tz (at most LB_TILE pixels); tz is 1 for a 2D image. */
static inline lb_tiling lb_make_tiling_sized(const geom &g, int tx, int ty, int tz)
{
    lb_tiling t;
    t.tx = tx;
    t.ty = ty;
    t.tz = g.d > 1 ? tz : 1;
    t.ntx = (g.w + t.tx - 1) / t.tx;
    t.nty = (g.h + t.ty - 1) / t.ty;
    t.ntz = (g.d + t.tz - 1) / t.tz;
    t.ntiles = t.ntx * t.nty * t.ntz;
    return t;
}

static inline lb_tiling lb_make_tiling(const geom &g)
{
    return g.d > 1 ? lb_make_tiling_sized(g, 16, 8, 8) : lb_make_tiling_sized(g, 32, 32, 1);
}

LB_HD int lb_tile_pixels(const lb_tiling &t) { return t.tx * t.ty * t.tz; }

/* First pixel of tile @p tile. */
LB_HD void lb_origin(const lb_tiling &t, int64_t tile, int64_t *x0, int64_t *y0, int64_t *z0)
{
    const int64_t tz = tile / (t.ntx * t.nty), r = tile - tz * t.ntx * t.nty, ty = r / t.ntx;
    *x0 = (r - ty * t.ntx) * t.tx;
    *y0 = ty * t.ty;
    *z0 = tz * t.tz;
}

/* Local coordinates of local index @p li (2D tiles of 32 x 32: shifts, not divisions). */
LB_HD void lb_local(const lb_tiling &t, int li, int *lx, int *ly, int *lz)
{
    if (t.tx == 32 && t.ty == 32) {
        *lx = li & 31, *ly = (li >> 5) & 31, *lz = li >> 10;
        return;
    }
    *lx = li % t.tx;
    const int r = li / t.tx;
    *ly = r % t.ty;
    *lz = r / t.ty;
}

/* The @p k-th pixel of a 2D tile's outer ring (top row, bottom row, left and right columns);
 * the ring has 2 tx + 2 (ty - 2) pixels (tx, ty >= 2). */
LB_HD void lb_ring(const lb_tiling &t, int k, int *lx, int *ly)
{
    if (k < 2 * t.tx) {
        *lx = k < t.tx ? k : k - t.tx, *ly = k < t.tx ? 0 : t.ty - 1;
        return;
    }
    const int j = k - 2 * t.tx, side = t.ty - 2;
    *lx = j < side ? 0 : t.tx - 1, *ly = 1 + (j < side ? j : j - side);
}

/* Foreground: nonzero (F32: -0.0 is zero, as in C). */
template <typename T> LB_HD bool lb_fg(T v) { return v != (T)0; }

/* Two neighbours are in one component: both nonzero and, in EQUAL mode, equal (F32 exactly). */
template <typename T> LB_HD bool lb_joined(T a, T b, int equal)
{
    return lb_fg(a) && lb_fg(b) && (!equal || a == b);
}

/* Background in the parent array (never a valid index: images have fewer pixels than this). */
template <typename IdxT> LB_HD IdxT lb_none() { return (IdxT)~(IdxT)0; }

/* ---- union-find: every root is the smallest index of its set ---- */

/* in shared memory (local indices) */
LB_FN int lb_sfind(volatile int *sp, int x)
{
    /* path halving, by atomicMin so that a link another thread makes meanwhile is never undone:
     * on nuclei-sized blobs the chains grew to hundreds of steps without it */
    int p = sp[x];
    while (p != x) {
        const int pp = sp[p];
        if (pp != p) lb_atomic_min((int *)&sp[x], pp);
        x = p;
        p = pp;
    }
    return x;
}

/* Link the larger root under the smaller (Playne & Hawick, 2018): if the atomic finds that b
 * is no longer a root, b has been linked meanwhile and a joins where it went. */
LB_FN void lb_sunion(int *sp, int a, int b)
{
    for (;;) {
        a = lb_sfind(sp, a);
        b = lb_sfind(sp, b);
        if (a == b) return;
        if (a > b) {
            const int t = a;
            a = b;
            b = t;
        }
        const int old = lb_atomic_min(&sp[b], a);
        if (old == b) return;
        b = old;
    }
}

/* in global memory, with path halving (P only ever decreases, a root only by linking) */
template <typename IdxT> LB_FN IdxT lb_gfind(IdxT *P, IdxT x)
{
    IdxT p = lb_ld(P + x);
    while (p != x) {
        const IdxT pp = lb_ld(P + p);
        if (pp != p) lb_atomic_min(P + x, pp);
        x = p;
        p = pp;
    }
    return x;
}

template <typename IdxT> LB_FN void lb_gunion(IdxT *P, IdxT a, IdxT b)
{
    for (;;) {
        a = lb_gfind(P, a);
        b = lb_gfind(P, b);
        if (a == b) return;
        if (a > b) {
            const IdxT t = a;
            a = b;
            b = t;
        }
        const IdxT old = lb_atomic_min(P + b, a);
        if (old == b) return;
        b = old;
    }
}

/* ---- the two passes of label.cu, one tile each (every thread of the block calls them) ---- */

/* Union-find inside the tile (backward neighbours @p gb only: each pair once), then P[i] = the
 * global index of i's local root, NONE on background. @p sp, @p sv: LB_TILE entries of shared
 * memory. Cells beyond the image read as background. */
template <typename T, typename IdxT>
LB_FN void lb_tile_pass(const T *in, IdxT *P, const geom &gb, const lb_tiling &t, int equal, int64_t tile, int *sp,
                        T *sv)
{
    int64_t x0, y0, z0;
    lb_origin(t, tile, &x0, &y0, &z0);
    const int np = lb_tile_pixels(t);
    for (int li = LB_TID; li < np; li += LB_NTH) {
        int lx, ly, lz;
        lb_local(t, li, &lx, &ly, &lz);
        const int64_t x = x0 + lx, y = y0 + ly, z = z0 + lz;
        sv[li] = (x < gb.w && y < gb.h && z < gb.d) ? in[x + gb.w * (y + gb.h * z)] : (T)0;
        sp[li] = li;
    }
    LB_SYNC();
    for (int li = LB_TID; li < np; li += LB_NTH) {
        const T v = sv[li];
        if (!lb_fg(v)) continue;
        int lx, ly, lz;
        lb_local(t, li, &lx, &ly, &lz);
        for (int k = 0; k < gb.n; ++k) {
            const int qx = lx + gb.off[k][0], qy = ly + gb.off[k][1], qz = lz + gb.off[k][2];
            if (qx < 0 || qx >= t.tx || qy < 0 || qy >= t.ty || qz < 0 || qz >= t.tz) continue;
            const int lq = qx + t.tx * (qy + t.ty * qz);
            if (lb_joined(v, sv[lq], equal)) lb_sunion(sp, li, lq);
        }
    }
    LB_SYNC();
    for (int li = LB_TID; li < np; li += LB_NTH) {
        int lx, ly, lz;
        lb_local(t, li, &lx, &ly, &lz);
        const int64_t x = x0 + lx, y = y0 + ly, z = z0 + lz;
        if (x >= gb.w || y >= gb.h || z >= gb.d) continue;
        IdxT r = lb_none<IdxT>();
        if (lb_fg(sv[li])) {
            int rx, ry, rz;
            lb_local(t, lb_sfind(sp, li), &rx, &ry, &rz);
            r = (IdxT)((x0 + rx) + gb.w * ((y0 + ry) + gb.h * (z0 + rz)));
        }
        P[x + gb.w * (y + gb.h * z)] = r;
    }
    LB_SYNC(); /* sp and sv are reused by the next tile */
}

/* The neighbour pairs of the tile's face pixels that straddle two tiles, joined in P. */
template <typename T, typename IdxT>
LB_FN void lb_border_pass(const T *in, IdxT *P, const geom &gb, const lb_tiling &t, int equal, int64_t tile)
{
    int64_t x0, y0, z0;
    lb_origin(t, tile, &x0, &y0, &z0);
    /* 2D: only the outer ring can meet another tile (its 2 tx + 2 ty - 4 pixels, not all) */
    const bool ring = t.tz == 1 && t.tx >= 2 && t.ty >= 2;
    const int np = ring ? 2 * t.tx + 2 * (t.ty - 2) : lb_tile_pixels(t);
    for (int li = LB_TID; li < np; li += LB_NTH) {
        int lx, ly, lz = 0;
        if (ring)
            lb_ring(t, li, &lx, &ly);
        else
            lb_local(t, li, &lx, &ly, &lz);
        const bool face = lx == 0 || ly == 0 || lz == 0 || lx == t.tx - 1 || ly == t.ty - 1 || lz == t.tz - 1;
        const int64_t x = x0 + lx, y = y0 + ly, z = z0 + lz;
        if (!face || x >= gb.w || y >= gb.h || z >= gb.d) continue;
        const int64_t p = x + gb.w * (y + gb.h * z);
        const T v = in[p];
        if (!lb_fg(v)) continue;
        for (int k = 0; k < gb.n; ++k) {
            const int qx = lx + gb.off[k][0], qy = ly + gb.off[k][1], qz = lz + gb.off[k][2];
            if (qx >= 0 && qx < t.tx && qy >= 0 && qy < t.ty && qz >= 0 && qz < t.tz) continue; /* same tile */
            const int64_t gx = x0 + qx, gy = y0 + qy, gz = z0 + qz;
            if (gx < 0 || gx >= gb.w || gy < 0 || gy >= gb.h || gz < 0 || gz >= gb.d) continue;
            const int64_t q = gx + gb.w * (gy + gb.h * gz);
            if (lb_joined(v, in[q], equal)) lb_gunion(P, (IdxT)p, (IdxT)q);
        }
    }
}

/* The backward half of a neighbourhood (offsets before 0 in raster order). */
static inline geom lb_backward(const geom &g)
{
    geom gb = g;
    gb.n = 0;
    for (int k = 0; k < g.n; ++k) {
        const int dx = g.off[k][0], dy = g.off[k][1], dz = g.off[k][2];
        if (dz < 0 || (dz == 0 && (dy < 0 || (dy == 0 && dx < 0)))) {
            for (int a = 0; a < 3; ++a) gb.off[gb.n][a] = g.off[k][a];
            ++gb.n;
        }
    }
    return gb;
}

#ifndef LB_HOST
#include <cub/block/block_scan.cuh>

#define LB_THREADS 256

/* Exclusive scan of the @p m chunk counts by one block (chunks are 4096 pixels, so m is small:
 * 16384 at 8192^2); the total goes to off[m]. cub::DeviceScan would do it too, but its header
 * pulls in <iostream>, whose static initialiser the glibc-2.17 jar libraries cannot link. */
static __global__ void __launch_bounds__(LB_THREADS) scan_counts(const unsigned long long *cnt, int64_t m,
                                                          unsigned long long *off)
{
    typedef cub::BlockScan<unsigned long long, LB_THREADS> scan_t;
    __shared__ typename scan_t::TempStorage tmp;
    __shared__ unsigned long long carry;
    if (threadIdx.x == 0) carry = 0;
    __syncthreads();
    for (int64_t b = 0; b < m; b += LB_THREADS) {
        const int64_t i = b + threadIdx.x;
        unsigned long long v = i < m ? cnt[i] : 0ull, x, sum;
        scan_t(tmp).ExclusiveSum(v, x, sum);
        if (i < m) off[i] = carry + x;
        __syncthreads();
        if (threadIdx.x == 0) carry += sum;
        __syncthreads();
    }
    if (threadIdx.x == 0) off[m] = carry;
}

/* The error of a labeling whose input type no kernel takes (the dispatcher checks it first). */
static inline iwpp_status iwpp_label_type_error(iwpp_context *ctx, const iwpp_buf *in)
{
    return iwpp_set_error(ctx, IWPP_EINTERNAL, "internal: labeling of type %s reached the CUDA backend",
                          iwpp_type_name(in->type));
}
#endif

#endif
