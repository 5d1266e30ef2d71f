/*
 * label_runs.cu - connected-component labeling on CUDA by row runs (iwpp_label's path for images
 * below 2^32 - 1 pixels, 3D ones with a U32 output; label.cu has the tile path and the entry).
 * The rules (runs, which rows touch, tile borders) are in label_runs.cuh, which
 * tests/test_label_tiles.cpp runs on the host; cuda/README.md (Labeling) has the figures.
 * Over 600 lines: the kernels of one path and the host code that launches them, kept together.
 */
#include "label_common.cuh"
#include "label_runs.cuh"

#include <cub/block/block_scan.cuh>

#include <string.h>

/* ---- by row runs (label_runs.cuh has the rules) ----
 * R1 run_local_kernel: a warp per tile (32x32 in 2D, 32x4x8 in 3D), a row as a ballot mask, each
 *    row's runs joined to the runs of its earlier neighbour rows in shared memory; G[r] = r at
 *    every local root r (global raster index), per row segment (32 pixels of one image row in
 *    one tile) the mask of local roots, for U32 outputs each pixel's local root + 1 in the
 *    output, and in 2D the tile's ring of local roots.
 * R2 2D, run_border_kernel: one warp per tile joins its right and bottom boundaries (and,
 *    8-connected, its two lower corners) in G with lb_gunion. 3D, run_border3_kernel: the tile's
 *    rows against their neighbour rows in other tiles by segments of one stored root, then the
 *    x faces pixel by pixel.
 * R3 run_flatten_kernel: which local roots are global roots (the others pointed straight at
 *    theirs); run_rank_kernel, a block per band of 32 image rows: the exclusive count of global
 *    roots per segment in raster order; scan_counts: each band's first label and the total.
 * R4 run_final_stored_kernel (U32): each local root's label from its global root's band, segment
 *    and bit, then the pixels rewritten; run_final_kernel (2D U16, written only once the count
 *    is known to fit): the tile's runs found again instead of stored.
 * Memory besides the output: G (4 bytes a pixel, touched at local roots only), 512 bytes a tile
 * (2D), 16 bytes a segment. */

#define LR_WARPS 8 /* tiles per block of the border kernel */
#define LR_FULL 0xFFFFFFFFu

struct lr_grid {
    int64_t w, h, d;
    int64_t rows;          /* image rows, h * d: a row's index is z * h + y */
    int ntx, nty, ntz;     /* tiles along x, y, z */
    int tyr, tzr;          /* a tile's rows along y and z: 32 x 1 (2D), 4 x 8 (3D) */
    unsigned int ntiles;
};

/* A tile and where its rows are. */
struct lr_tile {
    int tx, ty, tz;
};

__device__ __forceinline__ lr_tile lr_tile_of(const lr_grid &g, unsigned int tile)
{
    lr_tile t;
    t.tx = (int)(tile % (unsigned int)g.ntx);
    const unsigned int r = tile / (unsigned int)g.ntx;
    t.ty = (int)(r % (unsigned int)g.nty);
    t.tz = (int)(r / (unsigned int)g.nty);
    return t;
}

/* The image row of the tile's row @p r (lane r of its warp), or -1 past the image. TYR: the tile's
 * rows along y (32 in 2D, 4 in 3D), a constant so that r / TYR and r % TYR cost nothing. */
template <int TYR> __device__ __forceinline__ int64_t lr_image_row(const lr_grid &g, const lr_tile &t, int r)
{
    constexpr int TZR = LR_SIDE / TYR;
    const int64_t y = (int64_t)t.ty * TYR + r % TYR, z = (int64_t)t.tz * TZR + r / TYR;
    return y < g.h && z < g.d ? z * g.h + y : -1;
}

/* Global raster index of local index @p li (row li / 32, column li % 32) of tile @p t. */
template <int TYR> __device__ __forceinline__ unsigned int lr_global(const lr_grid &g, const lr_tile &t, int li)
{
    constexpr int TZR = LR_SIDE / TYR;
    const int r = li >> 5;
    const int64_t y = (int64_t)t.ty * TYR + r % TYR, z = (int64_t)t.tz * TZR + r / TYR;
    return (unsigned int)((z * g.h + y) * g.w + (int64_t)t.tx * LR_SIDE + (li & 31));
}

template <typename T> __device__ __forceinline__ T lr_shfl_up(T v)
{
    return (T)__shfl_up_sync(LR_FULL, (unsigned int)v, 1);
}
template <> __device__ __forceinline__ float lr_shfl_up<float>(float v) { return __shfl_up_sync(LR_FULL, v, 1); }

/* Shared memory of one warp's tile: the union-find on run starts (local index r * 32 + a) and
 * the values (EQUAL mode). */
template <typename T, bool EQUAL> struct lr_smem {
    int sp[LR_SIDE * LR_SIDE];
    T sv[EQUAL ? LR_SIDE * LR_SIDE : 1];
};

/* 3D for connectivities 6, 18 and 26 (2D: 4 and 8). */
template <int CONN> struct lr_conn {
    static constexpr bool D3 = CONN == 6 || CONN == 18 || CONN == 26;
    static constexpr int TYR = D3 ? 4 : 32, TZR = D3 ? 8 : 1;
    static constexpr int NROWS = D3 ? 4 : 1; /* earlier rows a row touches (label_runs.cuh) */
    __device__ static int dy(int k) { return lr_row_dy(k); }
    __device__ static int dz(int k) { return lr_row_dz(k); }
    __device__ static int reach(int k) { return lr_reach(CONN, k); }
};

/* The runs of tile @p t by one warp: lane r ends with row r's foreground and start masks (F, S)
 * and sm.sp[r * 32 + a] = the local root of every run start a of its row. */
template <typename T, bool EQUAL, int CONN>
__device__ __forceinline__ void lr_warp_runs(const T *__restrict__ in, const lr_grid &g, const lr_tile &t,
                                             lr_smem<T, EQUAL> &sm, unsigned int &F, unsigned int &S)
{
    typedef lr_conn<CONN> C;
    const int lane = threadIdx.x & 31;
    const int64_t gx = (int64_t)t.tx * LR_SIDE + lane;
    T v[LR_SIDE];
#pragma unroll
    for (int r = 0; r < LR_SIDE; ++r) {
        const int64_t y = (int64_t)t.ty * C::TYR + r % C::TYR, z = (int64_t)t.tz * C::TZR + r / C::TYR;
        v[r] = (gx < g.w && y < g.h && z < g.d) ? in[(z * g.h + y) * g.w + gx] : (T)0;
    }
    F = S = 0;
#pragma unroll
    for (int r = 0; r < LR_SIDE; ++r) {
        const bool fg = lb_fg(v[r]);
        const unsigned int f = __ballot_sync(LR_FULL, fg);
        unsigned int j;
        if (EQUAL) {
            const T left = lr_shfl_up(v[r]);
            j = __ballot_sync(LR_FULL, lane > 0 && lb_joined(left, v[r], 1));
            sm.sv[r * LR_SIDE + lane] = v[r];
        } else {
            j = f & (f << 1);
        }
        if (lane == r) F = f, S = f & ~j;
    }
    const int row = lane * LR_SIDE;
    for (unsigned int m = S; m; m &= m - 1u) {
        const int a = __ffs(m) - 1;
        sm.sp[row + a] = row + a;
    }
    const int ly = lane % C::TYR, lz = lane / C::TYR;
    unsigned int FU[C::NROWS], SU[C::NROWS];
#pragma unroll
    for (int k = 0; k < C::NROWS; ++k) {
        const int ny = ly + C::dy(k), nz = lz + C::dz(k);
        const bool ok = ny >= 0 && ny < C::TYR && nz >= 0;
        const int src = ok ? ny + C::TYR * nz : lane;
        FU[k] = __shfl_sync(LR_FULL, F, src), SU[k] = __shfl_sync(LR_FULL, S, src);
        if (!ok) FU[k] = 0;
    }
    __syncwarp();
#pragma unroll
    for (int k = 0; k < C::NROWS; ++k) {
        const int reach = C::reach(k);
        if (reach < 0 || !FU[k]) continue;
        const int other = (ly + C::dy(k) + C::TYR * (lz + C::dz(k))) * LR_SIDE;
        for (unsigned int m = S; m; m &= m - 1u) {
            const int a = __ffs(m) - 1;
            lr_touching(a, lr_run_end(F, S, a), FU[k], SU[k], reach == 1, [&](int su) {
                if (!EQUAL || sm.sv[row + a] == sm.sv[other + su]) lb_sunion(sm.sp, row + a, other + su);
            });
        }
    }
    __syncwarp();
    /* every start straight to its root (a root is an ancestor, so finds of other lanes meanwhile
     * stay right) */
    for (unsigned int m = S; m; m &= m - 1u) {
        const int a = __ffs(m) - 1;
        sm.sp[row + a] = lb_sfind(sm.sp, row + a);
    }
    __syncwarp();
}

/* The global index of the root of pixel @p x of local row @p r (masks F, S), or NONE. */
template <typename T, bool EQUAL>
__device__ __forceinline__ unsigned int lr_pixel_root(const lr_smem<T, EQUAL> &sm, const lr_grid &g, const lr_tile &t,
                                                      int r, unsigned int F, unsigned int S, int x)
{
    return ((F >> x) & 1u) ? lr_global<LR_SIDE>(g, t, sm.sp[r * LR_SIDE + lr_start(S, x)]) : lb_none<unsigned int>(); /* 2D */
}

#define LR_TILES_PER_BLOCK 4

/* @p store (NULL: not kept) gets each pixel's local root + 1 (0 on background), for
 * run_final_stored_kernel and the 3D border: a U32 output holds it until the labels replace it
 * (a U16 output is written only once its count is known to fit, so the final pass finds the runs
 * again; 3D U16 outputs take the tile path). The ring (2D) serves the 2D border. */
template <typename T, bool EQUAL, int CONN>
__global__ void __launch_bounds__(32 * LR_TILES_PER_BLOCK)
    run_local_kernel(const T *__restrict__ in, lr_grid g, unsigned int *G, unsigned int *ring, unsigned int *rootmask,
                     unsigned int *store)
{
    __shared__ lr_smem<T, EQUAL> smem[LR_TILES_PER_BLOCK];
    const unsigned int tile = blockIdx.x * LR_TILES_PER_BLOCK + (threadIdx.x >> 5);
    if (tile >= g.ntiles) return;
    lr_smem<T, EQUAL> &sm = smem[threadIdx.x >> 5];
    const lr_tile t = lr_tile_of(g, tile);
    unsigned int F, S;
    lr_warp_runs<T, EQUAL, CONN>(in, g, t, sm, F, S);
    const int lane = threadIdx.x & 31, row = lane * LR_SIDE;
    unsigned int roots = 0;
    for (unsigned int m = S; m; m &= m - 1u) {
        const int a = __ffs(m) - 1;
        if (sm.sp[row + a] != row + a) continue;
        roots |= 1u << a;
        const unsigned int gr = lr_global<lr_conn<CONN>::TYR>(g, t, row + a);
        G[gr] = gr;
    }
    const int64_t irow = lr_image_row<lr_conn<CONN>::TYR>(g, t, lane);
    if (irow >= 0) rootmask[irow * g.ntx + t.tx] = roots;
    if (!lr_conn<CONN>::D3) {
        unsigned int *rg = ring + (size_t)tile * LR_RING;
        rg[LR_LEFT + lane] = lr_pixel_root(sm, g, t, lane, F, S, 0);
        rg[LR_RIGHT + lane] = lr_pixel_root(sm, g, t, lane, F, S, LR_SIDE - 1);
        const unsigned int F0 = __shfl_sync(LR_FULL, F, 0), S0 = __shfl_sync(LR_FULL, S, 0);
        const unsigned int F1 = __shfl_sync(LR_FULL, F, 31), S1 = __shfl_sync(LR_FULL, S, 31);
        rg[LR_TOP + lane] = lr_pixel_root(sm, g, t, 0, F0, S0, lane);
        rg[LR_BOTTOM + lane] = lr_pixel_root(sm, g, t, LR_SIDE - 1, F1, S1, lane);
    }
    if (!store) return;
    const int64_t gx = (int64_t)t.tx * LR_SIDE + lane;
#pragma unroll 8
    for (int r = 0; r < LR_SIDE; ++r) {
        const unsigned int f = __shfl_sync(LR_FULL, F, r), st = __shfl_sync(LR_FULL, S, r);
        const int64_t ir = lr_image_row<lr_conn<CONN>::TYR>(g, t, r);
        if (ir >= 0 && gx < g.w)
            store[ir * g.w + gx] = ((f >> lane) & 1u) ? (unsigned int)sm.sp[r * LR_SIDE + lr_start(st, lane)] + 1u : 0u;
    }
}

/* One warp per tile: its right boundary, its bottom boundary and, 8-connected, the two corners
 * below it (bottom-right with the tile down-right, bottom-left with the tile down-left). */
template <typename T, bool EQUAL, bool CONN8>
__global__ void __launch_bounds__(32 * LR_WARPS)
    run_border_kernel(const T *__restrict__ in, lr_grid g, unsigned int *G, const unsigned int *__restrict__ ring)
{
    const unsigned int tile = blockIdx.x * LR_WARPS + (threadIdx.x >> 5);
    if (tile >= g.ntiles) return;
    const int i = threadIdx.x & 31;
    const int tx = (int)(tile % (unsigned int)g.ntx), ty = (int)(tile / (unsigned int)g.ntx);
    const unsigned int *a = ring + (size_t)tile * LR_RING;
    const int64_t x0 = (int64_t)tx * LR_SIDE, y0 = (int64_t)ty * LR_SIDE;
    auto unite = [&](unsigned int p, unsigned int q) { lb_gunion(G, p, q); };
    if (tx + 1 < g.ntx) { /* a's right column against the left column of the tile to the right */
        const unsigned int *b = a + LR_RING;
        const T va = EQUAL && a[LR_RIGHT + i] != lb_none<unsigned int>() ? in[(y0 + i) * g.w + x0 + LR_SIDE - 1] : (T)0;
        lr_boundary_pairs(
            i, a + LR_RIGHT, b + LR_LEFT, CONN8,
            [&](int j) { return !EQUAL || in[(y0 + j) * g.w + x0 + LR_SIDE] == va; }, unite);
    }
    if (ty + 1 < g.nty) { /* a's bottom row against the top row of the tile below */
        const unsigned int *b = a + (size_t)g.ntx * LR_RING;
        const T va = EQUAL && a[LR_BOTTOM + i] != lb_none<unsigned int>() ? in[(y0 + LR_SIDE - 1) * g.w + x0 + i] : (T)0;
        lr_boundary_pairs(
            i, a + LR_BOTTOM, b + LR_TOP, CONN8,
            [&](int j) { return !EQUAL || in[(y0 + LR_SIDE) * g.w + x0 + j] == va; }, unite);
        if (CONN8 && i < 2) {
            const int dx = i == 0 ? 1 : -1; /* lane 0: down-right, lane 1: down-left */
            if ((dx > 0 && tx + 1 < g.ntx) || (dx < 0 && tx > 0)) {
                const unsigned int *c = a + (size_t)g.ntx * LR_RING + dx * LR_RING;
                const unsigned int p = a[LR_BOTTOM + (dx > 0 ? LR_SIDE - 1 : 0)], q = c[LR_TOP + (dx > 0 ? 0 : LR_SIDE - 1)];
                if (p != lb_none<unsigned int>() && q != lb_none<unsigned int>()) {
                    const int64_t px = x0 + (dx > 0 ? LR_SIDE - 1 : 0);
                    if (!EQUAL || in[(y0 + LR_SIDE - 1) * g.w + px] == in[(y0 + LR_SIDE) * g.w + px + dx]) unite(p, q);
                }
            }
        }
    }
}

/* 3D: one warp per tile, a lane per column, with the local roots stored in the output.
 * Rows of the tile against their earlier neighbour rows in other tiles (along y or z): a row is
 * cut into segments of one stored root, and each segment is joined to the segments of the other
 * row that touch it (lr_touching, columns of this tile); then the pairs that cross the tile's
 * x faces, pixel by pixel (lanes 0 and 31 only). A pixel pair of two tiles is one of these. */
template <typename T, bool EQUAL, int CONN>
__global__ void __launch_bounds__(32 * LR_WARPS)
    run_border3_kernel(const T *__restrict__ in, lr_grid g, geom gb, unsigned int *G, const unsigned int *__restrict__ store)
{
    typedef lr_conn<CONN> C;
    __shared__ unsigned int other_root[LR_WARPS][LR_SIDE];
    __shared__ T other_val[LR_WARPS][EQUAL ? LR_SIDE : 1];
    const int warp = threadIdx.x >> 5;
    const unsigned int tile = blockIdx.x * LR_WARPS + warp;
    if (tile >= g.ntiles) return;
    const lr_tile t = lr_tile_of(g, tile);
    const int lane = threadIdx.x & 31;
    const int64_t gx = (int64_t)t.tx * LR_SIDE + lane;
    const bool col = gx < g.w;
    for (int r = 0; r < LR_SIDE; ++r) {
        const int ly = r % C::TYR, lz = r / C::TYR;
        const int64_t gy = (int64_t)t.ty * C::TYR + ly, gz = (int64_t)t.tz * C::TZR + lz;
        if (gy >= g.h || gz >= g.d) continue; /* the same for every lane */
        const int64_t pa = (gz * g.h + gy) * g.w + gx;
        const unsigned int sa = col ? store[pa] : 0u;
        const unsigned int ra = sa ? lr_global<C::TYR>(g, t, (int)sa - 1) : 0u;
        const unsigned int prev = __shfl_up_sync(LR_FULL, sa, 1);
        const unsigned int FA = __ballot_sync(LR_FULL, sa != 0);
        const unsigned int SA = __ballot_sync(LR_FULL, sa != 0 && (lane == 0 || prev != sa));
        for (int k = 0; k < C::NROWS; ++k) {
            const int reach = C::reach(k), ny = ly + C::dy(k), nz = lz + C::dz(k);
            if (reach < 0 || (ny >= 0 && ny < C::TYR && nz >= 0)) continue; /* none, or the same tile */
            const int64_t qy = gy + C::dy(k), qz = gz + C::dz(k);
            if (qy < 0 || qy >= g.h || qz < 0) continue;
            lr_tile u = t;
            u.ty = (int)(qy / C::TYR), u.tz = (int)(qz / C::TZR);
            const int64_t pb = (qz * g.h + qy) * g.w + gx;
            const unsigned int sb = col ? store[pb] : 0u;
            const unsigned int pv = __shfl_up_sync(LR_FULL, sb, 1);
            const unsigned int FB = __ballot_sync(LR_FULL, sb != 0);
            const unsigned int SB = __ballot_sync(LR_FULL, sb != 0 && (lane == 0 || pv != sb));
            if (!FB || !FA) continue;
            other_root[warp][lane] = sb ? lr_global<C::TYR>(g, u, (int)sb - 1) : 0u;
            if (EQUAL) other_val[warp][lane] = sb ? in[pb] : (T)0;
            __syncwarp();
            if ((SA >> lane) & 1u) {
                const T va = EQUAL ? in[pa] : (T)0;
                lr_touching(lane, lr_run_end(FA, SA, lane), FB, SB, reach == 1, [&](int s) {
                    if (!EQUAL || other_val[warp][s] == va) lb_gunion(G, ra, other_root[warp][s]);
                });
            }
            __syncwarp();
        }
        /* across the x faces: lane 0 to x0 - 1, lane 31 to x0 + 32 */
        if (!sa || (lane != 0 && lane != LR_SIDE - 1)) continue;
        const int dxo = lane == 0 ? -1 : 1;
        for (int k = 0; k < gb.n; ++k) {
            const int dx = gb.off[k][0], dy = gb.off[k][1], dz = gb.off[k][2];
            if (dx != dxo) continue;
            const int64_t qx = gx + dx, qy = gy + dy, qz = gz + dz;
            if (qx < 0 || qx >= g.w || qy < 0 || qy >= g.h || qz < 0 || qz >= g.d) continue;
            const int64_t q = (qz * g.h + qy) * g.w + qx;
            const unsigned int sq = store[q];
            if (!sq || (EQUAL && in[pa] != in[q])) continue;
            lr_tile u;
            u.tx = (int)(qx / LR_SIDE), u.ty = (int)(qy / C::TYR), u.tz = (int)(qz / C::TZR);
            lb_gunion(G, ra, lr_global<C::TYR>(g, u, (int)sq - 1));
        }
    }
}

/* A thread per segment s = y * ntx + tx (raster order): the global roots among its local roots
 * (rootmask) into gmask, every other local root pointed straight at its root. Local roots of one
 * segment often share a parent (a long component crosses each tile many times), so the last
 * parent's root is remembered. */
__global__ void run_flatten_kernel(lr_grid g, unsigned int *G, const unsigned int *__restrict__ rootmask,
                                   unsigned int *gmask, int64_t nseg)
{
    for (int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; s < nseg; s += (int64_t)gridDim.x * blockDim.x) {
        unsigned int m = rootmask[s], gm = 0, last = lb_none<unsigned int>(), last_root = 0;
        const int64_t y = s / g.ntx, x = (s - y * g.ntx) * LR_SIDE;
        while (m) {
            const int bit = __ffs(m) - 1;
            m &= m - 1;
            const unsigned int r = (unsigned int)(y * g.w + x + bit);
            unsigned int p = __ldcg(G + r);
            if (p == r) {
                gm |= 1u << bit;
                continue;
            }
            if (p != last) {
                last = p;
                for (unsigned int q = __ldcg(G + p); q != p; q = __ldcg(G + p)) p = q;
                last_root = p;
            }
            G[r] = last_root;
        }
        gmask[s] = gm;
    }
}

/* One block per band of 32 image rows: the exclusive count of global roots (gmask) before each
 * segment of the band into segoff, the band's total into band[ty]. */
__global__ void __launch_bounds__(LB_THREADS)
    run_rank_kernel(lr_grid g, const unsigned int *__restrict__ gmask, unsigned int *segoff, unsigned long long *band)
{
    typedef cub::BlockScan<unsigned int, LB_THREADS> scan_t;
    __shared__ typename scan_t::TempStorage tmp;
    __shared__ unsigned int carry;
    const int64_t y0 = (int64_t)blockIdx.x * LR_SIDE, y1 = y0 + LR_SIDE < g.rows ? y0 + LR_SIDE : g.rows;
    const int64_t s0 = y0 * g.ntx, s1 = y1 * g.ntx;
    if (threadIdx.x == 0) carry = 0;
    __syncthreads();
    for (int64_t base = s0; base < s1; base += LB_THREADS) {
        const int64_t s = base + threadIdx.x;
        const unsigned int gm = s < s1 ? gmask[s] : 0u;
        unsigned int ex = 0, total = 0;
        scan_t(tmp).ExclusiveSum((unsigned int)__popc(gm), ex, total);
        if (s < s1) segoff[s] = carry + ex;
        __syncthreads();
        if (threadIdx.x == 0) carry += total;
        __syncthreads();
    }
    if (threadIdx.x == 0) band[blockIdx.x] = carry;
}

/* The label of local root @p li of tile @p t: its global root's place in raster order. */
template <int TYR>
__device__ __forceinline__ unsigned int lr_label(const lr_grid &g, const lr_tile &t, int li, const unsigned int *G,
                                                 const unsigned int *gmask, const unsigned int *segoff,
                                                 const unsigned long long *bandoff)
{
    const unsigned int gr = G[lr_global<TYR>(g, t, li)];
    const int64_t y = gr / g.w, x = gr - y * g.w, s = y * g.ntx + x / LR_SIDE; /* y: image row */
    const unsigned int before = gmask[s] & ((1u << (x & 31)) - 1u);
    return (unsigned int)bandoff[y / LR_SIDE] + segoff[s] + (unsigned int)__popc(before) + 1u;
}

/* The labels of a tile whose pixels hold their local root + 1 (run_local_kernel's store): each
 * lane labels the local roots of its row, then the rows are rewritten in place. */
template <int TYR>
__global__ void __launch_bounds__(32 * LR_TILES_PER_BLOCK)
    run_final_stored_kernel(lr_grid g, const unsigned int *__restrict__ G, const unsigned int *__restrict__ rootmask,
                            const unsigned int *__restrict__ gmask, const unsigned int *__restrict__ segoff,
                            const unsigned long long *__restrict__ bandoff, unsigned int *out)
{
    __shared__ unsigned int labs[LR_TILES_PER_BLOCK][LR_SIDE * LR_SIDE];
    const unsigned int tile = blockIdx.x * LR_TILES_PER_BLOCK + (threadIdx.x >> 5);
    if (tile >= g.ntiles) return;
    unsigned int *lab = labs[threadIdx.x >> 5];
    const lr_tile t = lr_tile_of(g, tile);
    const int lane = threadIdx.x & 31;
    const int64_t irow = lr_image_row<TYR>(g, t, lane);
    for (unsigned int m = irow >= 0 ? rootmask[irow * g.ntx + t.tx] : 0u; m; m &= m - 1u) {
        const int li = lane * LR_SIDE + __ffs(m) - 1;
        lab[li] = lr_label<TYR>(g, t, li, G, gmask, segoff, bandoff);
    }
    __syncwarp();
    const int64_t gx = (int64_t)t.tx * LR_SIDE + lane;
    if (gx >= g.w) return;
#pragma unroll 8
    for (int r = 0; r < LR_SIDE; ++r) {
        const int64_t ir = lr_image_row<TYR>(g, t, r);
        if (ir < 0) continue;
        unsigned int *o = out + ir * g.w + gx;
        const unsigned int v = *o;
        if (v) *o = lab[v - 1];
    }
}

template <typename T, bool EQUAL, int CONN, typename OutT>
__global__ void __launch_bounds__(32 * LR_TILES_PER_BLOCK)
    run_final_kernel(const T *__restrict__ in, lr_grid g, const unsigned int *__restrict__ G,
                     const unsigned int *__restrict__ gmask, const unsigned int *__restrict__ segoff,
                     const unsigned long long *__restrict__ bandoff, OutT *out)
{
    __shared__ lr_smem<T, EQUAL> smem[LR_TILES_PER_BLOCK];
    __shared__ unsigned int labs[LR_TILES_PER_BLOCK][LR_SIDE * LR_SIDE];
    const unsigned int tile = blockIdx.x * LR_TILES_PER_BLOCK + (threadIdx.x >> 5);
    if (tile >= g.ntiles) return;
    lr_smem<T, EQUAL> &sm = smem[threadIdx.x >> 5];
    unsigned int *lab = labs[threadIdx.x >> 5];
    const lr_tile t = lr_tile_of(g, tile);
    unsigned int F, S;
    lr_warp_runs<T, EQUAL, CONN>(in, g, t, sm, F, S);
    const int lane = threadIdx.x & 31, row = lane * LR_SIDE;
    for (unsigned int m = S; m; m &= m - 1u) { /* local roots: their global root's rank */
        const int a = __ffs(m) - 1;
        if (sm.sp[row + a] == row + a) lab[row + a] = lr_label<LR_SIDE>(g, t, row + a, G, gmask, segoff, bandoff); /* 2D */
    }
    __syncwarp();
    for (unsigned int m = S; m; m &= m - 1u) { /* the other runs: their root's label */
        const int a = __ffs(m) - 1;
        const int r = sm.sp[row + a];
        if (r != row + a) lab[row + a] = lab[r];
    }
    __syncwarp();
    const int64_t gx = (int64_t)t.tx * LR_SIDE + lane, y0 = (int64_t)t.ty * LR_SIDE; /* 2D only */
    const bool inside = gx < g.w;
    const int rows = g.h - y0 < LR_SIDE ? (int)(g.h - y0) : LR_SIDE;
    OutT *o = out + y0 * g.w + gx;
#pragma unroll 8
    for (int y = 0; y < LR_SIDE; ++y) {
        const unsigned int f = __shfl_sync(LR_FULL, F, y), st = __shfl_sync(LR_FULL, S, y);
        if (y >= rows) break;
        if (inside) o[y * g.w] = ((f >> lane) & 1u) ? (OutT)lab[y * LR_SIDE + lr_start(st, lane)] : (OutT)0;
    }
}

/* ---- host side, by row runs ---- */

/* Scratch of the run path: ring (LR_RING a tile, 2D), rootmask, gmask and segoff (one a
 * segment), band totals and their scan (bands + 1 each). */
struct lr_scratch {
    unsigned int *ring, *rootmask, *gmask, *segoff;
    unsigned long long *band, *bandoff;
};

static int64_t lr_bands(const lr_grid &g) { return (g.rows + LR_SIDE - 1) / LR_SIDE; }

static iwpp_status lr_scratch_get(iwpp_context *ctx, const lr_grid &g, lr_scratch *sc)
{
    const size_t nseg = (size_t)g.rows * (size_t)g.ntx, nb = ((size_t)lr_bands(g) + 1) * 8;
    const size_t ring = g.d > 1 ? 0 : (size_t)g.ntiles * LR_RING * 4;
    const size_t sz[6] = {ring, nseg * 4, nseg * 4, nseg * 4, nb, nb};
    size_t total = 0, at[6];
    for (int k = 0; k < 6; ++k) at[k] = total, total += (sz[k] + 255) & ~(size_t)255;
    void *mem = NULL;
    iwpp_status e = cu_scratch(ctx, total, &mem);
    if (e != IWPP_OK) return e;
    char *m = (char *)mem;
    sc->ring = (unsigned int *)(m + at[0]);
    sc->rootmask = (unsigned int *)(m + at[1]);
    sc->gmask = (unsigned int *)(m + at[2]);
    sc->segoff = (unsigned int *)(m + at[3]);
    sc->band = (unsigned long long *)(m + at[4]);
    sc->bandoff = (unsigned long long *)(m + at[5]);
    return IWPP_OK;
}

/* The tile borders: the ring pass in 2D, the stored local roots in 3D. */
template <typename T, bool EQUAL, int CONN>
static void lr_borders(cuda_state *st, const T *in, const lr_grid &g, const geom &gb, unsigned int *G,
                       const lr_scratch &sc, const unsigned int *store)
{
    const unsigned int grid = (g.ntiles + LR_WARPS - 1) / LR_WARPS;
    if (lr_conn<CONN>::D3)
        run_border3_kernel<T, EQUAL, CONN><<<grid, 32 * LR_WARPS, 0, st->stream>>>(in, g, gb, G, store);
    else
        run_border_kernel<T, EQUAL, CONN == 8><<<grid, 32 * LR_WARPS, 0, st->stream>>>(in, g, G, sc.ring);
}

template <typename T, bool EQUAL, int CONN>
static iwpp_status label_runs_typed(iwpp_context *ctx, const T *in, const lr_grid &g, const geom &gbk,
                                    iwpp_buf *labels, int64_t *count)
{
    cuda_state *st = cu_state(ctx);
    iwpp_buf gb;
    memset(&gb, 0, sizeof gb);
    gb.type = IWPP_U32;
    gb.w = g.w, gb.h = g.h, gb.d = g.d;
    iwpp_status e = iwpp_cuda_buf_alloc(ctx, &gb);
    if (e != IWPP_OK) return e;
    unsigned int *G = (unsigned int *)gb.ptr;
    lr_scratch sc;
    if ((e = lr_scratch_get(ctx, g, &sc)) != IWPP_OK) {
        iwpp_cuda_buf_free(ctx, &gb);
        return e;
    }
    const unsigned int tgrid = (g.ntiles + LR_TILES_PER_BLOCK - 1) / LR_TILES_PER_BLOCK;
    const bool u16 = labels->type == IWPP_U16; /* 2D only (label_runs_on) */
    unsigned int *store = u16 ? NULL : (unsigned int *)labels->ptr;
    const int64_t nseg = g.rows * g.ntx, bands = lr_bands(g);
    run_local_kernel<T, EQUAL, CONN><<<tgrid, 32 * LR_TILES_PER_BLOCK, 0, st->stream>>>(in, g, G, sc.ring, sc.rootmask,
                                                                                       store);
    lr_borders<T, EQUAL, CONN>(st, in, g, gbk, G, sc, store);
    run_flatten_kernel<<<cu_blocks(nseg, 256, st->sms * 16), 256, 0, st->stream>>>(g, G, sc.rootmask, sc.gmask, nseg);
    run_rank_kernel<<<(unsigned int)bands, LB_THREADS, 0, st->stream>>>(g, sc.gmask, sc.segoff, sc.band);
    scan_counts<<<1, LB_THREADS, 0, st->stream>>>(sc.band, bands, sc.bandoff);
    e = IWPP_OK;
    if (cudaGetLastError() != cudaSuccess) e = iwpp_set_error(ctx, IWPP_EDEVICE, "CUDA: launching the labeling runs");
    if (e == IWPP_OK && cudaMemcpyAsync(st->hctr, sc.bandoff + bands, sizeof(unsigned long long),
                                        cudaMemcpyDeviceToHost, st->stream) != cudaSuccess)
        e = cu_fail(ctx, cudaGetLastError(), "reading the label count");
    /* a 16-bit output is checked before it is written; a 32-bit one always holds the count */
    if (e == IWPP_OK && u16 && (e = cu_sync(ctx, "counting the components")) == IWPP_OK && st->hctr[0] > 65535)
        e = iwpp_labels_overflow(ctx, (int64_t)st->hctr[0]);
    if (e == IWPP_OK) {
        if (u16)
            run_final_kernel<T, EQUAL, CONN, uint16_t><<<tgrid, 32 * LR_TILES_PER_BLOCK, 0, st->stream>>>(
                in, g, G, sc.gmask, sc.segoff, sc.bandoff, (uint16_t *)labels->ptr);
        else
            run_final_stored_kernel<lr_conn<CONN>::TYR><<<tgrid, 32 * LR_TILES_PER_BLOCK, 0, st->stream>>>(
                g, G, sc.rootmask, sc.gmask, sc.segoff, sc.bandoff, store);
        e = cu_sync(ctx, "labeling");
    }
    iwpp_cuda_buf_free(ctx, &gb);
    *count = (int64_t)st->hctr[0];
    return e;
}

/* The run path takes images with fewer than 2^32 - 1 pixels (32-bit indices and NONE): 2D ones,
 * and 3D ones with a U32 output (the border pass reads the local roots stored there); not with
 * IWPP_CUDA_LABEL_RUNS=0. */
bool cu_label_runs_on(iwpp_context *ctx, const iwpp_buf *in, const iwpp_buf *labels)
{
    return (in->d == 1 || labels->type == IWPP_U32) && iwpp_buf_count(in) < (int64_t)0xFFFFFFFFll &&
           iwpp_tune_int(ctx, IWPP_TUNE_CUDA_LABEL_RUNS, 1, 0, 1);
}

template <typename T, int CONN>
static iwpp_status label_runs_conn(iwpp_context *ctx, const T *in, const lr_grid &g, const geom &gb, int equal,
                                   iwpp_buf *labels, int64_t *count)
{
    return equal ? label_runs_typed<T, true, CONN>(ctx, in, g, gb, labels, count)
                 : label_runs_typed<T, false, CONN>(ctx, in, g, gb, labels, count);
}

/* @p gb: the backward half of the neighbourhood (2 or 4 neighbours in 2D, 3, 9 or 13 in 3D). */
template <typename T>
static iwpp_status label_runs(iwpp_context *ctx, const iwpp_buf *in, const geom &gb, int equal, iwpp_buf *labels,
                              int64_t *count)
{
    lr_grid g;
    const bool d3 = in->d > 1;
    g.w = in->w, g.h = in->h, g.d = in->d;
    g.rows = in->h * in->d;
    g.tyr = d3 ? lr_conn<6>::TYR : lr_conn<4>::TYR;
    g.tzr = d3 ? lr_conn<6>::TZR : lr_conn<4>::TZR;
    g.ntx = (int)((in->w + LR_SIDE - 1) / LR_SIDE);
    g.nty = (int)((in->h + g.tyr - 1) / g.tyr);
    g.ntz = (int)((in->d + g.tzr - 1) / g.tzr);
    g.ntiles = (unsigned int)g.ntx * (unsigned int)g.nty * (unsigned int)g.ntz;
    const T *p = (const T *)in->ptr;
    if (!d3) return gb.n == 4 ? label_runs_conn<T, 8>(ctx, p, g, gb, equal, labels, count)
                              : label_runs_conn<T, 4>(ctx, p, g, gb, equal, labels, count);
    return gb.n == 13 ? label_runs_conn<T, 26>(ctx, p, g, gb, equal, labels, count)
         : gb.n == 9  ? label_runs_conn<T, 18>(ctx, p, g, gb, equal, labels, count)
                      : label_runs_conn<T, 6>(ctx, p, g, gb, equal, labels, count);
}

/* The row-run path: see label_runs_on. */
iwpp_status cu_label_runs(iwpp_context *ctx, const iwpp_buf *in, const geom &gb, int equal, iwpp_buf *labels,
                          int64_t *count)
{
    switch (in->type) {
    case IWPP_U8: return label_runs<uint8_t>(ctx, in, gb, equal, labels, count);
    case IWPP_U16: return label_runs<uint16_t>(ctx, in, gb, equal, labels, count);
    case IWPP_F32: return label_runs<float>(ctx, in, gb, equal, labels, count);
    default: return iwpp_label_type_error(ctx, in);
    }
}
