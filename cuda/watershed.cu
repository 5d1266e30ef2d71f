/*
 * watershed.cu - marker-controlled watershed on CUDA (iwpp_watershed), in three phases.
 *
 *  1. Levels: build_kernel writes g = in inside the mask (the type's maximum outside) and
 *     m = in at the markers inside the mask (maximum elsewhere); the backend's reconstruction by
 *     erosion of m over g leaves L(p), the least highest value on a path from a marker, in m.
 *  2. Keys K = D << 32 | label, the smallest wins: markers inside the mask (0 | label), every
 *     other pixel all ones (unreached). A pixel p inside the mask, not a marker, takes from a
 *     reached neighbour q the key (in(p) > L(q) ? 0 : D(q) + 1, label(q)) when
 *     max(L(q), in(p)) == L(p); p is SET to the key of the least (D, L(q), D(q), label(q)) (after
 *     a climb, the flood that arrived first), not lowered to it (see
 *     watershed_tile.cuh, which has the steps of phases 2 and 3 and which
 *     tests/test_label_tiles.cpp runs on the host). These equations have one solution (tests/oracle.c; the priority flood gives
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
#include "watershed_tile.cuh"

extern "C" {
#include "dispatch.h" /* iwpp_progress_report */
}

#include <stdio.h>

#define WS_THREADS 256
#define WS_BATCH 8                /* rounds launched between two reads of the list length */
#define WS_MAX_ROUNDS (1ll << 24) /* a guard against a bug, far above any real need */

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

/* ---- phase 2 (the steps: watershed_tile.cuh) ---- */

template <typename LabT>
__global__ void key_kernel(const LabT *__restrict__ mk, const uint8_t *__restrict__ mask, geom g, lb_tiling t,
                           unsigned long long *K, uint8_t *upd, unsigned int *stamp)
{
    const int64_t n = g.w * g.h * g.d;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        ws_key_init<LabT>(i, mk, mask, g, t, K, upd, stamp);
}

__global__ void list_kernel(unsigned int *stamp, int64_t ntiles, ws_lists w)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < ntiles; i += (int64_t)gridDim.x * blockDim.x)
        if (stamp[i] == 1u) w.q[0][atomicAdd(&w.cnt[0], 1u)] = (unsigned int)i;
}

/* One round: every tile of list @p from is relaxed; the tiles next to its changed face pixels go
 * on list 1 - @p from with stamp @p stamp. */
template <typename T>
__global__ void __launch_bounds__(WS_THREADS)
    round_kernel(unsigned long long *K, const T *__restrict__ L, const T *__restrict__ in,
                 const uint8_t *__restrict__ upd, geom g, lb_tiling t, ws_lists w, int from, unsigned int stamp)
{
    __shared__ ws_smem<T> s;
    const unsigned int n = w.cnt[from];
    unsigned long long done = 0;
    for (unsigned int e = blockIdx.x; e < n; e += gridDim.x, ++done) {
        const unsigned int tile = w.q[from][e];
        const unsigned int dirs = ws_tile<T>(s, K, K, L, in, upd, g, t, tile);
        if (threadIdx.x == 0 && dirs) ws_push(w, t, tile, dirs, 1 - from, stamp);
    }
    if (threadIdx.x == 0 && done) atomicAdd(w.pops, done);
}

/* ---- phase 3 ---- */

template <typename T, typename LabT>
__global__ void out_kernel(const unsigned long long *__restrict__ K, const T *__restrict__ L,
                           const uint8_t *__restrict__ upd, geom g, int lines, LabT *out)
{
    const int64_t n = g.w * g.h * g.d;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        out[i] = (LabT)ws_out_label<T>(i, K, L, upd, g, lines);
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
    gb.kept = 0;
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
    kb.kept = ub.kept = 0;
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
        /* progress only at fixed points: the number of rounds depends on the schedule, and a
         * listener must see the same reports on every run (test_labels cancels at each) */
        if ((e = run_rounds<T>(ctx, K, L, (const T *)in->ptr, upd, g, t, w)) != IWPP_OK ||
            (e = iwpp_progress_report(ctx, 0.9)) != IWPP_OK)
            goto out;
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
    if ((e = iwpp_progress_report(ctx, 0.5)) == IWPP_OK)
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
