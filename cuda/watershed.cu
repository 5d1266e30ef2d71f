/*
 * watershed.cu - marker-controlled watershed on CUDA (iwpp_watershed), in three phases.
 *
 *  1. Levels: build_kernel writes g = in inside the mask (the type's maximum outside) and
 *     m = in at the markers inside the mask (maximum elsewhere); the backend's reconstruction by
 *     erosion of m over g leaves L(p), the least highest value on a path from a marker, in m.
 *  2. Keys K = D << 32 | label, the smallest wins: markers inside the mask (0 | label), every
 *     other pixel all ones (unreached). A pixel p inside the mask, not a marker, takes from a
 *     reached neighbour q the key (in(p) > L(q) ? 0 : D(q) + 1, label(q)) when
 *     max(L(q), in(p)) == L(p); p is SET to the smallest such key, not lowered to it (see
 *     ws_relax). These equations have one solution (tests/oracle.c; the priority flood gives
 *     it too), which any order of updates reaches as long as a pixel is evaluated again
 *     whenever a neighbour changes. It is found in rounds over a list of active tiles
 *     (label_common.cuh's tiles): a block loads its tile and a one-pixel halo into shared
 *     memory, relaxes the tile until it is stable (Jacobi steps), writes back the pixels that
 *     changed (each pixel is written only by its own tile's block) and puts the tiles next to
 *     each changed face pixel on the next list. A per-tile stamp keeps a tile at most once on a
 *     list. The first list: tiles with a marker and their neighbours. Rounds are launched in
 *     batches; the host reads the list length between batches and stops when it is 0.
 *  3. out_kernel: label = low 32 bits (0 when unreached or outside the mask); with lines, a
 *     non-marker pixel next to another label with a smaller (L, D, label) becomes 0.
 */
#include "label_common.cuh"

#include <stdio.h>

#define WS_THREADS 256
#define WS_OWN (LB_TILE / WS_THREADS) /* pixels of a tile per thread */
#define WS_HALO 1800                  /* tile + halo cells: 18 x 10 x 10 (3D), 34 x 34 (2D) */
#define WS_BATCH 8                    /* rounds launched between two reads of the list length */
#define WS_MAX_ROUNDS (1ll << 24)     /* a guard against a bug, far above any real need */
#define KEY_NONE 0xFFFFFFFFFFFFFFFFull

/* Keys are read by other blocks while their owner writes them: relaxed 64-bit accesses (never torn). */
__device__ __forceinline__ unsigned long long key_load(const unsigned long long *p)
{
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void key_store(unsigned long long *p, unsigned long long v)
{
    asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

/* The key p gets from q (KEY_NONE: none): level must equal L(p); D restarts after a climb. */
template <typename T>
__device__ __forceinline__ unsigned long long ws_candidate(unsigned long long kq, T lq, T ip, T lp)
{
    if (kq == KEY_NONE) return KEY_NONE;
    const T lev = lq > ip ? lq : ip;
    if (!(lev == lp)) return KEY_NONE;
    unsigned long long d = 0;
    if (!(ip > lq)) {
        d = (kq >> 32) + 1;
        if (d > 0xFFFFFFFEull) d = 0xFFFFFFFEull; /* only on plateaus of more than 2^32 steps */
    }
    return (d << 32) | (kq & 0xFFFFFFFFull);
}

/* The faces of its tile that pixel (lx, ly, lz) touches, as bits (dz+1)*9 + (dy+1)*3 + (dx+1) of
 * the neighbouring tiles that hold it in their halo. */
__device__ __forceinline__ unsigned int ws_face_bits(const lb_tiling &t, int lx, int ly, int lz)
{
    const int fx = lx == 0 ? -1 : (lx == t.tx - 1 ? 1 : 0);
    const int fy = ly == 0 ? -1 : (ly == t.ty - 1 ? 1 : 0);
    const int fz = t.tz == 1 ? 0 : (lz == 0 ? -1 : (lz == t.tz - 1 ? 1 : 0));
    unsigned int bits = 0;
    for (int ez = 0; ez <= (fz != 0); ++ez)
        for (int ey = 0; ey <= (fy != 0); ++ey)
            for (int ex = 0; ex <= (fx != 0); ++ex) {
                if (!ex && !ey && !ez) continue;
                bits |= 1u << ((ez * fz + 1) * 9 + (ey * fy + 1) * 3 + (ex * fx + 1));
            }
    return bits;
}

/* Tile lists of phase 2 (in the scratch arena). */
struct ws_lists {
    unsigned int *q[2];      /* two lists of tiles, ntiles entries each */
    unsigned int *cnt;       /* their lengths */
    unsigned int *stamp;     /* per tile: the round of the last list it was put on */
    unsigned long long *pops; /* tiles processed */
};

/* Put the tiles marked in @p bits around tile (tx, ty, tz) on list @p to with @p stamp. */
__device__ void ws_push(const ws_lists &w, const lb_tiling &t, int64_t tx, int64_t ty, int64_t tz, unsigned int bits,
                        int to, unsigned int stamp)
{
    for (int b = 0; b < 27; ++b) {
        if (!(bits & (1u << b))) continue;
        const int64_t nx = tx + b % 3 - 1, ny = ty + (b / 3) % 3 - 1, nz = tz + b / 9 - 1;
        if (nx < 0 || nx >= t.ntx || ny < 0 || ny >= t.nty || nz < 0 || nz >= t.ntz) continue;
        const unsigned int nt = (unsigned int)(nx + t.ntx * (ny + t.nty * nz));
        if (atomicMax(&w.stamp[nt], stamp) < stamp) w.q[to][atomicAdd(&w.cnt[to], 1u)] = nt;
    }
}

/* ---- phase 1 ---- */

template <typename T, typename LabT>
__global__ void build_kernel(const T *__restrict__ in, const LabT *__restrict__ mk, const uint8_t *__restrict__ mask,
                             T *g, T *m, int64_t n)
{
    const T hi = pix<T>::highest();
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const bool inside = !mask || mask[i] != 0;
        const T v = in[i];
        g[i] = inside ? v : hi;
        m[i] = inside && mk[i] != 0 ? v : hi;
    }
}

/* ---- phase 2 ---- */

/* Keys, the "may change" flags and the stamps (1) of the tiles of the first list. */
template <typename LabT>
__global__ void key_kernel(const LabT *__restrict__ mk, const uint8_t *__restrict__ mask, geom g, lb_tiling t,
                           unsigned long long *K, uint8_t *upd, unsigned int *stamp)
{
    const int64_t n = g.w * g.h * g.d;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const bool inside = !mask || mask[i] != 0;
        const LabT lab = mk[i];
        const bool marker = inside && lab != 0;
        K[i] = marker ? (unsigned long long)lab : KEY_NONE;
        upd[i] = inside && !marker;
        if (!marker) continue;
        const int64_t x = i % g.w, r = i / g.w, y = r % g.h, z = r / g.h;
        const int64_t tx = x / t.tx, ty = y / t.ty, tz = z / t.tz;
        const unsigned int bits = ws_face_bits(t, (int)(x - tx * t.tx), (int)(y - ty * t.ty), (int)(z - tz * t.tz)) |
                                  (1u << 13); /* 13: the tile itself */
        for (int b = 0; b < 27; ++b) {
            if (!(bits & (1u << b))) continue;
            const int64_t nx = tx + b % 3 - 1, ny = ty + (b / 3) % 3 - 1, nz = tz + b / 9 - 1;
            if (nx < 0 || nx >= t.ntx || ny < 0 || ny >= t.nty || nz < 0 || nz >= t.ntz) continue;
            stamp[nx + t.ntx * (ny + t.nty * nz)] = 1u; /* same value from every writer */
        }
    }
}

__global__ void list_kernel(unsigned int *stamp, int64_t ntiles, ws_lists w)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < ntiles; i += (int64_t)gridDim.x * blockDim.x)
        if (stamp[i] == 1u) w.q[0][atomicAdd(&w.cnt[0], 1u)] = (unsigned int)i;
}

/* Tile + halo geometry: cell (hx, hy, hz) with hx in [-1, tx] etc. (hz = 0 only in 2D). */
struct ws_halo {
    int sx, sy, sz, zo;
};

__device__ __forceinline__ ws_halo ws_make_halo(const lb_tiling &t)
{
    ws_halo h;
    h.sx = t.tx + 2;
    h.sy = t.ty + 2;
    h.sz = t.tz > 1 ? t.tz + 2 : 1;
    h.zo = t.tz > 1 ? 1 : 0;
    return h;
}

template <typename T>
__device__ void ws_load_halo(unsigned long long *sk, T *sl, const unsigned long long *K, const T *__restrict__ L,
                             const geom &g, const ws_halo &hs, int64_t x0, int64_t y0, int64_t z0)
{
    const int S = hs.sx * hs.sy * hs.sz;
    for (int h = threadIdx.x; h < S; h += WS_THREADS) {
        const int hx = h % hs.sx, r = h / hs.sx, hy = r % hs.sy, hz = r / hs.sy;
        const int64_t x = x0 + hx - 1, y = y0 + hy - 1, z = z0 + hz - hs.zo;
        unsigned long long k = KEY_NONE;
        T l = (T)0;
        if (x >= 0 && x < g.w && y >= 0 && y < g.h && z >= 0 && z < g.d) {
            const int64_t i = x + g.w * (y + g.h * z);
            k = key_load(K + i);
            l = L[i];
        }
        sk[h] = k;
        sl[h] = l;
    }
}

/* Jacobi steps over the tile's own pixels until none changes (every thread calls it). A pixel is
 * set to the best key its neighbours give it now, not lowered to it: a climb (D = 0) passes on
 * only the label, so a neighbour whose key falls to a smaller D with another label can raise
 * it. The keys settle level by level and, on a level, by increasing D (tests/oracle.c). */
template <typename T>
__device__ void ws_relax(unsigned long long *sk, const T *sl, const int *hi, const bool *up, const T *ip,
                         const int *dh, int nn)
{
    for (;;) {
        unsigned long long nk[WS_OWN];
        bool set[WS_OWN];
        bool changed = false;
#pragma unroll
        for (int j = 0; j < WS_OWN; ++j) {
            set[j] = false;
            nk[j] = KEY_NONE;
            if (!up[j]) continue;
            const T lp = sl[hi[j]];
            for (int k = 0; k < nn; ++k) {
                const int q = hi[j] + dh[k];
                const unsigned long long c = ws_candidate(sk[q], sl[q], ip[j], lp);
                if (c < nk[j]) nk[j] = c;
            }
            set[j] = nk[j] != sk[hi[j]];
            changed |= set[j];
        }
        __syncthreads(); /* every read of this step is done */
#pragma unroll
        for (int j = 0; j < WS_OWN; ++j)
            if (set[j]) sk[hi[j]] = nk[j];
        if (!__syncthreads_or(changed)) break;
    }
}

/* One round: every tile of list @p from is relaxed; tiles next to changed face pixels go on
 * list 1 - @p from with stamp @p stamp. */
template <typename T>
__global__ void __launch_bounds__(WS_THREADS)
    round_kernel(unsigned long long *K, const T *__restrict__ L, const T *__restrict__ in,
                 const uint8_t *__restrict__ upd, geom g, lb_tiling t, ws_lists w, int from, unsigned int stamp)
{
    __shared__ unsigned long long sk[WS_HALO];
    __shared__ T sl[WS_HALO];
    __shared__ unsigned int dirs;
    const unsigned int n = w.cnt[from];
    const ws_halo hs = ws_make_halo(t);
    int dh[26];
    for (int k = 0; k < g.n; ++k) dh[k] = g.off[k][0] + hs.sx * (g.off[k][1] + hs.sy * g.off[k][2]);
    unsigned long long done = 0;
    for (unsigned int e = blockIdx.x; e < n; e += gridDim.x, ++done) {
        const unsigned int tile = w.q[from][e];
        int64_t x0, y0, z0;
        lb_origin(t, tile, &x0, &y0, &z0);
        if (threadIdx.x == 0) dirs = 0;
        ws_load_halo(sk, sl, K, L, g, hs, x0, y0, z0);
        int hi[WS_OWN], face[WS_OWN];
        bool up[WS_OWN];
        T ip[WS_OWN];
        int64_t gi[WS_OWN];
#pragma unroll
        for (int j = 0; j < WS_OWN; ++j) {
            int lx, ly, lz;
            lb_local(t, threadIdx.x + j * WS_THREADS, &lx, &ly, &lz);
            hi[j] = (lx + 1) + hs.sx * ((ly + 1) + hs.sy * (lz + hs.zo));
            face[j] = (int)ws_face_bits(t, lx, ly, lz);
            const int64_t x = x0 + lx, y = y0 + ly, z = z0 + lz;
            up[j] = false;
            ip[j] = (T)0;
            gi[j] = -1;
            if (x < g.w && y < g.h && z < g.d) {
                gi[j] = x + g.w * (y + g.h * z);
                up[j] = upd[gi[j]] != 0;
                ip[j] = in[gi[j]];
            }
        }
        __syncthreads(); /* halo loaded */
        unsigned long long k0[WS_OWN];
#pragma unroll
        for (int j = 0; j < WS_OWN; ++j) k0[j] = sk[hi[j]];
        ws_relax(sk, sl, hi, up, ip, dh, g.n);
#pragma unroll
        for (int j = 0; j < WS_OWN; ++j) {
            const unsigned long long k = sk[hi[j]];
            if (!up[j] || k == k0[j]) continue;
            key_store(K + gi[j], k);
            if (face[j]) atomicOr(&dirs, (unsigned int)face[j]);
        }
        __syncthreads(); /* dirs complete */
        if (threadIdx.x == 0 && dirs) {
            const int64_t tz = tile / (t.ntx * t.nty), r = tile - tz * t.ntx * t.nty, ty = r / t.ntx;
            ws_push(w, t, r - ty * t.ntx, ty, tz, dirs, 1 - from, stamp);
        }
        __syncthreads(); /* sk, sl and dirs are reused by the next tile */
    }
    if (threadIdx.x == 0 && done) atomicAdd(w.pops, done);
}

/* ---- phase 3 ---- */

template <typename T>
__device__ __forceinline__ bool ws_less(T la, unsigned long long ka, T lb, unsigned long long kb)
{
    if (la != lb) return la < lb;
    return ka < kb; /* (D, label) in the key's order */
}

template <typename T, typename LabT>
__global__ void out_kernel(const unsigned long long *__restrict__ K, const T *__restrict__ L,
                           const uint8_t *__restrict__ upd, geom g, int lines, LabT *out)
{
    const int64_t n = g.w * g.h * g.d;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const unsigned long long kp = K[i];
        uint32_t lab = kp == KEY_NONE ? 0u : (uint32_t)kp;
        if (lines && lab != 0 && upd[i]) {
            const int64_t x = i % g.w, r = i / g.w, y = r % g.h, z = r / g.h;
            const T lp = L[i];
            for (int k = 0; k < g.n; ++k) {
                const int64_t qx = x + g.off[k][0], qy = y + g.off[k][1], qz = z + g.off[k][2];
                if (qx < 0 || qx >= g.w || qy < 0 || qy >= g.h || qz < 0 || qz >= g.d) continue;
                const int64_t q = qx + g.w * (qy + g.h * qz);
                const unsigned long long kq = K[q];
                if (kq == KEY_NONE || (uint32_t)kq == lab) continue;
                if (ws_less(L[q], kq, lp, kp)) {
                    lab = 0;
                    break;
                }
            }
        }
        out[i] = (LabT)lab;
    }
}

/* ---- host side ---- */

/* Phase 1: L into @p lv (a new buffer of in's type). */
template <typename T, typename LabT>
static iwpp_status levels(iwpp_context *ctx, const iwpp_buf *in, const iwpp_buf *markers, const iwpp_buf *mask,
                          int connectivity, iwpp_buf *lv)
{
    cuda_state *st = cu_state(ctx);
    const int64_t n = iwpp_buf_count(in);
    iwpp_buf gb = *in;
    gb.ptr = gb.priv = NULL;
    *lv = gb;
    iwpp_status e = iwpp_cuda_buf_alloc(ctx, &gb);
    if (e != IWPP_OK) return e;
    if ((e = iwpp_cuda_buf_alloc(ctx, lv)) != IWPP_OK) {
        iwpp_cuda_buf_free(ctx, &gb);
        return e;
    }
    if ((e = cu_timer_start(ctx)) == IWPP_OK) {
        build_kernel<T, LabT><<<cu_blocks(n, 256, st->sms * 32), 256, 0, st->stream>>>(
            (const T *)in->ptr, (const LabT *)markers->ptr, mask ? (const uint8_t *)mask->ptr : NULL, (T *)gb.ptr,
            (T *)lv->ptr, n);
        e = cu_timer_stop(ctx);
    }
    if (e == IWPP_OK) e = iwpp_cuda_reconstruct(ctx, lv, &gb, connectivity, IWPP_BY_EROSION);
    iwpp_cuda_buf_free(ctx, &gb);
    if (e != IWPP_OK) iwpp_cuda_buf_free(ctx, lv);
    return e;
}

/* Tile lists in the scratch arena (free again once phase 1's reconstruction is over). */
static iwpp_status make_lists(iwpp_context *ctx, const lb_tiling &t, ws_lists *w)
{
    cuda_state *st = cu_state(ctx);
    if (t.ntiles >= (int64_t)0xFFFFFFFFll)
        return iwpp_set_error(ctx, IWPP_EUNSUPPORTED, "the CUDA watershed handles at most 2^32 - 1 tiles of %d pixels",
                              LB_TILE);
    const size_t tb = ((size_t)t.ntiles * sizeof(unsigned int) + 255) & ~(size_t)255;
    void *mem = NULL;
    iwpp_status e = cu_scratch(ctx, 3 * tb + 256, &mem);
    if (e != IWPP_OK) return e;
    char *p = (char *)mem;
    w->q[0] = (unsigned int *)p;
    w->q[1] = (unsigned int *)(p + tb);
    w->stamp = (unsigned int *)(p + 2 * tb);
    w->cnt = (unsigned int *)(p + 3 * tb);
    w->pops = (unsigned long long *)(p + 3 * tb + 64);
    CU_TRY(ctx, cudaMemsetAsync(w->stamp, 0, tb + 256, st->stream), "clearing the tile lists");
    return IWPP_OK;
}

/* Rounds until a list comes out empty. */
template <typename T>
static iwpp_status run_rounds(iwpp_context *ctx, unsigned long long *K, const T *L, const T *in, const uint8_t *upd,
                              const geom &g, const lb_tiling &t, const ws_lists &w)
{
    cuda_state *st = cu_state(ctx);
    cudaStream_t s = st->stream;
    int occ = 0;
    CU_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, round_kernel<T>, WS_THREADS, 0),
           "sizing the watershed kernel");
    const unsigned grid = (unsigned)(st->sms * (occ > 0 ? occ : 1));
    long long rounds = 0;
    int from = 0;
    for (;;) {
        for (int b = 0; b < WS_BATCH; ++b, ++rounds) {
            CU_TRY(ctx, cudaMemsetAsync(w.cnt + (1 - from), 0, sizeof(unsigned int), s), "clearing a tile list");
            round_kernel<T><<<grid, WS_THREADS, 0, s>>>(K, L, in, upd, g, t, w, from, (unsigned int)(rounds + 2));
            from = 1 - from;
        }
        CU_TRY(ctx, cudaGetLastError(), "launching the watershed rounds");
        CU_TRY(ctx, cudaMemcpyAsync(st->hctr, w.cnt + from, sizeof(unsigned int), cudaMemcpyDeviceToHost, s),
               "reading the tile list length");
        iwpp_status e = cu_sync(ctx, "running the watershed rounds");
        if (e != IWPP_OK) return e;
        if (*(volatile unsigned int *)st->hctr == 0) break;
        if (rounds >= WS_MAX_ROUNDS)
            return iwpp_set_error(ctx, IWPP_EINTERNAL, "internal: the CUDA watershed did not settle in %lld rounds",
                                  rounds);
    }
    CU_TRY(ctx, cudaMemcpyAsync(st->hctr, w.pops, sizeof(unsigned long long), cudaMemcpyDeviceToHost, s),
           "reading the tile count");
    iwpp_status e = cu_sync(ctx, "reading the tile count");
    if (e != IWPP_OK) return e;
    ctx->stats.rounds += rounds;
    ctx->stats.pixels_visited += (int64_t)st->hctr[0] * LB_TILE;
    return IWPP_OK;
}

/* Phases 2 and 3 on the levels @p L. */
template <typename T, typename LabT>
static iwpp_status flood(iwpp_context *ctx, const iwpp_buf *in, const iwpp_buf *markers, const iwpp_buf *mask,
                         const geom &g, const T *L, int lines, iwpp_buf *labels)
{
    cuda_state *st = cu_state(ctx);
    const int64_t n = iwpp_buf_count(in);
    const lb_tiling t = lb_make_tiling(g);
    iwpp_buf kb = *in, ub = *in;
    kb.type = IWPP_I64;
    ub.type = IWPP_U8;
    kb.ptr = kb.priv = ub.ptr = ub.priv = NULL;
    ws_lists w;
    iwpp_status e;
    if ((e = iwpp_cuda_buf_alloc(ctx, &kb)) || (e = iwpp_cuda_buf_alloc(ctx, &ub)) || (e = make_lists(ctx, t, &w)) ||
        (e = cu_timer_start(ctx)))
        goto out;
    {
        unsigned long long *K = (unsigned long long *)kb.ptr;
        uint8_t *upd = (uint8_t *)ub.ptr;
        const unsigned blocks = cu_blocks(n, 256, st->sms * 32);
        key_kernel<LabT><<<blocks, 256, 0, st->stream>>>((const LabT *)markers->ptr,
                                                          mask ? (const uint8_t *)mask->ptr : NULL, g, t, K, upd,
                                                          w.stamp);
        list_kernel<<<cu_blocks(t.ntiles, 256, st->sms * 8), 256, 0, st->stream>>>(w.stamp, t.ntiles, w);
        if ((e = run_rounds<T>(ctx, K, L, (const T *)in->ptr, upd, g, t, w)) != IWPP_OK) goto out;
        out_kernel<T, LabT><<<blocks, 256, 0, st->stream>>>(K, L, upd, g, lines, (LabT *)labels->ptr);
        e = cu_timer_stop(ctx);
    }
out:
    iwpp_cuda_buf_free(ctx, &ub);
    iwpp_cuda_buf_free(ctx, &kb);
    return e;
}

template <typename T, typename LabT>
static iwpp_status ws_typed(iwpp_context *ctx, const iwpp_buf *in, const iwpp_buf *markers, const iwpp_buf *mask,
                            int connectivity, int lines, iwpp_buf *labels)
{
    iwpp_buf lv;
    iwpp_status e = levels<T, LabT>(ctx, in, markers, mask, connectivity, &lv);
    if (e != IWPP_OK) return e;
    const geom g = make_geom(in, connectivity);
    e = flood<T, LabT>(ctx, in, markers, mask, g, (const T *)lv.ptr, lines, labels);
    iwpp_cuda_buf_free(ctx, &lv);
    return e;
}

template <typename T>
static iwpp_status ws_label_type(iwpp_context *ctx, const iwpp_buf *in, const iwpp_buf *markers,
                                 const iwpp_buf *mask, int connectivity, int lines, iwpp_buf *labels)
{
    if (labels->type == IWPP_U16)
        return ws_typed<T, uint16_t>(ctx, in, markers, mask, connectivity, lines, labels);
    return ws_typed<T, uint32_t>(ctx, in, markers, mask, connectivity, lines, labels);
}

extern "C" iwpp_status iwpp_cuda_watershed(iwpp_context *ctx, const iwpp_buf *in, const iwpp_buf *markers,
                                           const iwpp_buf *mask, int connectivity, int lines, iwpp_buf *labels)
{
    iwpp_status e = cu_enter(ctx);
    if (e != IWPP_OK) return e;
    if (iwpp_buf_count(in) == 0) return IWPP_OK;
    if (markers->type != labels->type || (labels->type != IWPP_U16 && labels->type != IWPP_U32) ||
        (mask && mask->type != IWPP_U8))
        return iwpp_set_error(ctx, IWPP_EINTERNAL,
                              "internal: CUDA watershed called with markers %s, labels %s, mask %s",
                              iwpp_type_name(markers->type), iwpp_type_name(labels->type),
                              mask ? iwpp_type_name(mask->type) : "none");
    switch (in->type) {
    case IWPP_U8: e = ws_label_type<uint8_t>(ctx, in, markers, mask, connectivity, lines, labels); break;
    case IWPP_U16: e = ws_label_type<uint16_t>(ctx, in, markers, mask, connectivity, lines, labels); break;
    case IWPP_F32: e = ws_label_type<float>(ctx, in, markers, mask, connectivity, lines, labels); break;
    default:
        return iwpp_set_error(ctx, IWPP_EINTERNAL, "internal: watershed of type %s reached the CUDA backend",
                              iwpp_type_name(in->type));
    }
    if (e != IWPP_OK) return e;
    snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "reconstruct+tile-rounds");
    return IWPP_OK;
}
