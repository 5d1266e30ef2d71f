/*
 * label.cu - connected-component labeling on CUDA (iwpp_label): union-find in which the root of
 * every set is its smallest index, so that numbering the roots in raster order numbers the
 * components by their first pixel.
 *
 * Images below 2^32 - 1 pixels (3D ones with a U32 output) take the row-run path (label_runs.cu,
 * its rules in label_runs.cuh): one warp per tile of 32 rows of 32 pixels (32x32 in 2D, 32x4x8 in
 * 3D), rows as bit masks, unions between run starts only. The others (3D with a U16 output,
 * larger images) and IWPP_CUDA_LABEL_RUNS=0 take the tile path, here:
 *  1. tile_kernel: tiles of 32x32 (2D) or 16x8x8 (3D) pixels in shared memory; union-find on
 *     local indices (the local raster order is the global raster order restricted to the tile,
 *     so a local root is the smallest global index of its local set), then P[i] = the global
 *     index of i's local root; background P[i] = NONE.
 *  2. border_kernel: neighbour pairs that straddle two tiles are joined in P: the larger root is
 *     linked under the smaller with atomicMin (the loop of Playne & Hawick, 2018).
 *     The steps of 1 and 2 are in label_common.cuh, which tests/test_label_tiles.cpp runs on
 *     the host.
 *  3. count_kernel: roots (P[i] == i) per chunk of LB_CHUNK pixels; an exclusive scan of the
 *     counts (one block, scan_counts) gives each chunk's first label and the total, which is checked
 *     against the output type before anything is written.
 *  4. rank_kernel: a block scan of the root flags of each chunk in raster order: out[root] =
 *     rank + 1. 5. final_kernel: out[i] = out[find(i)] for the other pixels, 0 on background.
 * Indices are 32-bit below 2^32 - 1 pixels, 64-bit above.
 */
#include "label_common.cuh"
#include "label_runs.cuh" /* cu_label_runs: the row-run path (label_runs.cu) */

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <stdio.h>

#define LB_ITEMS 16
#define LB_CHUNK (LB_THREADS * LB_ITEMS)

/* ---- the forest (label_common.cuh has the steps) ---- */

template <typename T, typename IdxT>
__global__ void __launch_bounds__(LB_THREADS)
    tile_kernel(const T *__restrict__ in, IdxT *P, geom gb, lb_tiling t, int equal)
{
    __shared__ int sp[LB_TILE];
    __shared__ T sv[LB_TILE];
    for (int64_t tile = blockIdx.x; tile < t.ntiles; tile += gridDim.x)
        lb_tile_pass<T, IdxT>(in, P, gb, t, equal, tile, sp, sv);
}

template <typename T, typename IdxT>
__global__ void __launch_bounds__(LB_THREADS)
    border_kernel(const T *__restrict__ in, IdxT *P, geom gb, lb_tiling t, int equal)
{
    for (int64_t tile = blockIdx.x; tile < t.ntiles; tile += gridDim.x)
        lb_border_pass<T, IdxT>(in, P, gb, t, equal, tile);
}

/* ---- numbering ---- */

template <typename IdxT>
__global__ void __launch_bounds__(LB_THREADS) count_kernel(const IdxT *P, int64_t n, int64_t nchunks,
                                                           unsigned long long *cnt)
{
    typedef cub::BlockReduce<unsigned int, LB_THREADS> reduce_t;
    __shared__ typename reduce_t::TempStorage tmp;
    for (int64_t c = blockIdx.x; c < nchunks; c += gridDim.x) {
        unsigned int mine = 0;
        for (int k = 0; k < LB_ITEMS; ++k) {
            const int64_t i = c * LB_CHUNK + (int64_t)k * LB_THREADS + threadIdx.x;
            if (i < n && P[i] == (IdxT)i) ++mine;
        }
        const unsigned int sum = reduce_t(tmp).Sum(mine);
        if (threadIdx.x == 0) cnt[c] = sum;
        __syncthreads(); /* tmp is reused */
    }
}

/* out[root] = its label; the label of chunk c's first root is off[c] + 1. */
template <typename IdxT, typename OutT>
__global__ void __launch_bounds__(LB_THREADS) rank_kernel(const IdxT *P, int64_t n, int64_t nchunks,
                                                          const unsigned long long *off, OutT *out)
{
    typedef cub::BlockScan<unsigned int, LB_THREADS> scan_t;
    __shared__ typename scan_t::TempStorage tmp;
    for (int64_t c = blockIdx.x; c < nchunks; c += gridDim.x) {
        unsigned long long base = off[c] + 1;
        for (int k = 0; k < LB_ITEMS; ++k) { /* item k*LB_THREADS + thread: raster order is k, then thread */
            const int64_t i = c * LB_CHUNK + (int64_t)k * LB_THREADS + threadIdx.x;
            const unsigned int flag = (i < n && P[i] == (IdxT)i) ? 1u : 0u;
            unsigned int rank = 0, total = 0;
            scan_t(tmp).ExclusiveSum(flag, rank, total);
            if (flag) out[i] = (OutT)(base + rank);
            base += total;
            __syncthreads(); /* tmp is reused */
        }
    }
}

template <typename IdxT, typename OutT>
__global__ void final_kernel(const IdxT *P, int64_t n, OutT *out)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        IdxT p = P[i];
        if (p == lb_none<IdxT>()) {
            out[i] = 0;
            continue;
        }
        if (p == (IdxT)i) continue; /* a root: written by rank_kernel */
        IdxT pp = P[p];
        while (pp != p) { /* no writes to P any more: a plain walk to the root */
            p = pp;
            pp = P[p];
        }
        out[i] = out[p];
    }
}


/* ---- host side ---- */

/* Union-find into P (steps 1 and 2). */
template <typename T, typename IdxT>
static iwpp_status build_forest(iwpp_context *ctx, const T *in, IdxT *P, const geom &gb, int equal)
{
    cuda_state *st = cu_state(ctx);
    const lb_tiling t = lb_make_tiling(gb);
    const unsigned grid = cu_blocks(t.ntiles * LB_THREADS, LB_THREADS, st->sms * 16);
    tile_kernel<T, IdxT><<<grid, LB_THREADS, 0, st->stream>>>(in, P, gb, t, equal);
    CU_TRY(ctx, cudaGetLastError(), "launching the labeling tile kernel");
    border_kernel<T, IdxT><<<grid, LB_THREADS, 0, st->stream>>>(in, P, gb, t, equal);
    CU_TRY(ctx, cudaGetLastError(), "launching the labeling border kernel");
    return IWPP_OK;
}

/* Roots per chunk and their exclusive scan in scratch; *total = the number of components. */
template <typename IdxT>
static iwpp_status count_roots(iwpp_context *ctx, const IdxT *P, int64_t n, unsigned long long **off_out,
                               int64_t *total)
{
    cuda_state *st = cu_state(ctx);
    const int64_t nchunks = (n + LB_CHUNK - 1) / LB_CHUNK;
    const size_t arr = ((size_t)(nchunks + 1) * sizeof(unsigned long long) + 255) & ~(size_t)255;
    void *mem = NULL;
    iwpp_status e = cu_scratch(ctx, 2 * arr, &mem);
    if (e != IWPP_OK) return e;
    unsigned long long *cnt = (unsigned long long *)mem, *off = (unsigned long long *)((char *)mem + arr);
    const unsigned grid = cu_blocks(nchunks * LB_THREADS, LB_THREADS, st->sms * 16);
    count_kernel<IdxT><<<grid, LB_THREADS, 0, st->stream>>>(P, n, nchunks, cnt);
    scan_counts<<<1, LB_THREADS, 0, st->stream>>>(cnt, nchunks, off);
    CU_TRY(ctx, cudaGetLastError(), "launching the root count");
    CU_TRY(ctx, cudaMemcpyAsync(st->hctr, off + nchunks, sizeof(unsigned long long), cudaMemcpyDeviceToHost, st->stream),
           "reading the label count");
    if ((e = cu_sync(ctx, "counting the components")) != IWPP_OK) return e;
    *total = (int64_t)st->hctr[0];
    *off_out = off;
    return IWPP_OK;
}

template <typename IdxT, typename OutT>
static iwpp_status number(iwpp_context *ctx, const IdxT *P, int64_t n, const unsigned long long *off, OutT *out)
{
    cuda_state *st = cu_state(ctx);
    const int64_t nchunks = (n + LB_CHUNK - 1) / LB_CHUNK;
    rank_kernel<IdxT, OutT><<<cu_blocks(nchunks * LB_THREADS, LB_THREADS, st->sms * 16), LB_THREADS, 0, st->stream>>>(
        P, n, nchunks, off, out);
    CU_TRY(ctx, cudaGetLastError(), "launching the label ranks");
    final_kernel<IdxT, OutT><<<cu_blocks(n, 256, st->sms * 32), 256, 0, st->stream>>>(P, n, out);
    CU_TRY(ctx, cudaGetLastError(), "launching the label fill");
    return IWPP_OK;
}

template <typename T, typename IdxT>
static iwpp_status label_typed(iwpp_context *ctx, const iwpp_buf *in, const geom &gb, int equal, iwpp_buf *labels,
                               int64_t *count)
{
    const int64_t n = iwpp_buf_count(in);
    iwpp_buf pb = *in;
    pb.type = sizeof(IdxT) == 4 ? IWPP_U32 : IWPP_I64;
    pb.ptr = pb.priv = NULL;
    pb.kept = 0;
    iwpp_status e = iwpp_cuda_buf_alloc(ctx, &pb);
    if (e != IWPP_OK) return e;
    IdxT *P = (IdxT *)pb.ptr;
    unsigned long long *off = NULL;
    int64_t total = 0;
    if (!(e = build_forest<T, IdxT>(ctx, (const T *)in->ptr, P, gb, equal)) &&
        !(e = count_roots<IdxT>(ctx, P, n, &off, &total))) {
        if (labels->type == IWPP_U16 && total > 65535)
            e = iwpp_labels_overflow(ctx, total);
        else if (total > (int64_t)0xFFFFFFFFll)
            e = iwpp_set_error(ctx, IWPP_EINVAL, "%lld labels do not fit in a 32-bit label image",
                               (long long)total);
        else if (labels->type == IWPP_U16)
            e = number<IdxT, uint16_t>(ctx, P, n, off, (uint16_t *)labels->ptr);
        else
            e = number<IdxT, uint32_t>(ctx, P, n, off, (uint32_t *)labels->ptr);
    }
    if (e == IWPP_OK) e = cu_sync(ctx, "labeling");
    iwpp_cuda_buf_free(ctx, &pb);
    *count = total;
    return e;
}

template <typename T>
static iwpp_status label_idx(iwpp_context *ctx, const iwpp_buf *in, const geom &gb, int equal, iwpp_buf *labels,
                             int64_t *count)
{
    if (iwpp_buf_count(in) < (int64_t)0xFFFFFFFFll) /* every index and NONE fit in 32 bits */
        return label_typed<T, unsigned int>(ctx, in, gb, equal, labels, count);
    return label_typed<T, unsigned long long>(ctx, in, gb, equal, labels, count);
}

extern "C" iwpp_status iwpp_cuda_label(iwpp_context *ctx, const iwpp_buf *in, int connectivity,
                                       iwpp_label_mode mode, iwpp_buf *labels, int64_t *count)
{
    iwpp_status e = cu_enter(ctx);
    if (e != IWPP_OK) return e;
    *count = 0;
    if (iwpp_buf_count(in) == 0) return IWPP_OK;
    const geom gb = lb_backward(make_geom(in, connectivity));
    const int equal = mode == IWPP_LABEL_EQUAL;
    if ((e = cu_timer_start(ctx)) != IWPP_OK) return e;
    const bool runs = cu_label_runs_on(ctx, in, labels);
    if (runs) e = cu_label_runs(ctx, in, gb, equal, labels, count);
    else switch (in->type) {
    case IWPP_U8: e = label_idx<uint8_t>(ctx, in, gb, equal, labels, count); break;
    case IWPP_U16: e = label_idx<uint16_t>(ctx, in, gb, equal, labels, count); break;
    case IWPP_F32: e = label_idx<float>(ctx, in, gb, equal, labels, count); break;
    default:
        return iwpp_label_type_error(ctx, in);
    }
    if (e != IWPP_OK) return e;
    if ((e = cu_timer_stop(ctx)) != IWPP_OK) return e;
    snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "%s", runs ? "union-find/runs" : "union-find");
    return IWPP_OK;
}
