/*
 * mlqueue.cuh - the multi-level GPU queue and the generic queue phase of an irregular
 * wavefront propagation (paper 000, section 3.2 and Alg. 4).
 *
 * Levels, fastest first:
 *   TQ   per-thread queue: TQN slots per thread in shared memory (slot k of thread t at
 *        tq[k * blockDim + t], so a warp writing the same slot hits 32 banks);
 *   BQ   block queue in shared memory: a warp that has a full TQ computes a warp prefix sum of
 *        the TQ sizes of its lanes and reserves its room with ONE shared atomic;
 *   GBQ  global block queue in device memory (two per block: in and out, swapped each round):
 *        BQ is spilled into it with coalesced stores when it passes a threshold.
 * Blocks never talk to each other: each owns a slice of the initial wavefront and its own
 * GBQs, and runs rounds (process the in-queue, fill the out-queue, swap) until its queue is
 * empty. A GBQ that would overflow keeps what fits, drops the rest and raises a flag: the host
 * then collects the wavefront again from the partial result and re-runs the phase.
 * The same way out serves imbalance (ctl.leave_rounds): a flood from one seed lives in one
 * block, and a long chain keeps one block going while the others idle (H200, 8192^2, one seed
 * in a corner of a tissue mask: 2.6-4.2 s in one block). Such a block leaves with its queue
 * once nearly every other block has finished, raising the flag: the host's next pass (a raster
 * iteration, then the collection) spreads the front over every block again.
 *
 * Variants (IWPP_QUEUE_*), for the paper's Table 1:
 *   MULTILEVEL  TQ + BQ (warp prefix sum, one shared atomic per warp) + GBQ;
 *   PREFIXSUM   no TQ: every neighbour step each warp aggregates its new items with a ballot
 *               prefix sum into BQ;
 *   ATOMIC      one global atomicAdd per enqueued item, straight into the GBQ.
 *
 * The propagation itself is a policy class Op with
 *   typedef ... item;                               per-pixel state of a dequeued pixel
 *   __device__ bool load(IdxT p, item &it) const;   false: nothing to propagate from p
 *   __device__ int  nbr() const;                    neighbours per pixel (uniform)
 *   __device__ bool visit(const item &it, int k, IdxT &q) const;
 *                                                   try neighbour k; true if q must be queued
 *   static constexpr int NBR_UNROLL;                neighbours visited in an unrolled loop
 *                                                   (a constant k), the rest in a loop
 * The caller owns the shared memory (dynamic: TQN*blockDim + bqcap items of IdxT).
 */
#ifndef IWPP_CUDA_MLQUEUE_CUH
#define IWPP_CUDA_MLQUEUE_CUH

#include "common.cuh"

#include <type_traits>

#define MLQ_THREADS 256
#define MLQ_TQN 8

/* Counters shared by all blocks of one launch (device memory). */
struct mlq_ctl {
    unsigned long long *visited;   /* items taken off queues */
    unsigned long long *rounds;    /* max rounds over blocks */
    unsigned long long *overflow;  /* != 0: some GBQ dropped items, or a block left early */
    unsigned long long *gcount;    /* ATOMIC variant: per-block out counters (gridDim entries) */
    unsigned long long *finished;  /* blocks whose queue ran empty (or that left early) */
    unsigned long long *left;      /* blocks that left early */
    long long leave_rounds;        /* > 0: a block still busy when 7/8 of the blocks have finished
                                      leaves after this many rounds, or after leave_rounds / 32
                                      with a queue of 16 items a thread; 0: never */
};

__device__ __forceinline__ unsigned lane_id() { return threadIdx.x & 31u; }

/* Shared-memory control words of one block. */
struct mlq_shared {
    int bqn;              /* items in BQ */
    int spill_m;          /* items moved by the current spill */
    long long spill_at;   /* where they go in the out GBQ */
    long long outn;       /* items in the out GBQ */
};

/* Move BQ into the out GBQ (whole block; between barriers). */
template <typename IdxT>
__device__ void mlq_spill(mlq_shared &s, IdxT *bq, IdxT *out, long long cap, const mlq_ctl &ctl)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        long long room = cap - s.outn;
        int m = s.bqn;
        if ((long long)m > room) {
            m = (int)(room > 0 ? room : 0);
            atomicExch(ctl.overflow, 1ull);
        }
        s.spill_at = s.outn;
        s.spill_m = m;
        s.outn += m;
    }
    __syncthreads();
    for (int j = threadIdx.x; j < s.spill_m; j += blockDim.x) out[s.spill_at + j] = bq[j];
    __syncthreads();
    if (threadIdx.x == 0) s.bqn = 0;
    __syncthreads();
}

/* Warp-level move of every lane's TQ into BQ: prefix sum of the sizes, one shared atomic. */
template <typename IdxT>
__device__ __forceinline__ void mlq_warp_flush(mlq_shared &s, IdxT *tq, IdxT *bq, int &cnt)
{
    const unsigned lane = lane_id();
    int incl = cnt;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        int v = __shfl_up_sync(0xffffffffu, incl, o);
        if ((int)lane >= o) incl += v;
    }
    int total = __shfl_sync(0xffffffffu, incl, 31);
    int base = 0;
    if (lane == 0 && total) base = atomicAdd(&s.bqn, total);
    base = __shfl_sync(0xffffffffu, base, 0) + incl - cnt;
    for (int j = 0; j < cnt; ++j) bq[base + j] = tq[j * blockDim.x + threadIdx.x];
    cnt = 0;
}

template <class Op, typename IdxT, int VARIANT>
__global__ void __launch_bounds__(MLQ_THREADS)
mlq_kernel(Op op, const IdxT *__restrict__ init, long long init_n, IdxT *gq, long long cap,
           int bq_threshold, mlq_ctl ctl)
{
    extern __shared__ unsigned char mlq_smem_raw[];
    IdxT *tq = (IdxT *)mlq_smem_raw;
    IdxT *bq = tq + (VARIANT == IWPP_QUEUE_MULTILEVEL ? MLQ_TQN * blockDim.x : 0);
    __shared__ mlq_shared s;
    __shared__ long long s_n;

    const long long per = (init_n + gridDim.x - 1) / gridDim.x;
    long long start = per * blockIdx.x;
    long long n = init_n - start;
    if (n > per) n = per;
    if (n < 0) n = 0;
    const IdxT *in = init + (n > 0 ? start : 0);
    IdxT *qa = gq + (long long)blockIdx.x * 2 * cap;
    IdxT *qb = qa + cap;
    IdxT *out = qa;
    if (threadIdx.x == 0) {
        s.bqn = 0;
        s.outn = 0;
    }
    __syncthreads();

    unsigned long long visited = 0;
    long long rounds = 0;
    int cnt = 0; /* this thread's TQ size */
    const int nbr = op.nbr();

    while (n > 0) {
        for (long long base = 0; base < n; base += blockDim.x) {
            long long i = base + threadIdx.x;
            bool valid = i < n;
            typename Op::item it;
            if (valid) {
                IdxT p = __ldcg(in + i);
                ++visited;
                valid = op.load(p, it);
            }
            auto step = [&](int k) {
                IdxT q = 0;
                bool has = valid && op.visit(it, k, q);
                if (VARIANT == IWPP_QUEUE_MULTILEVEL) {
                    if (has) tq[cnt++ * blockDim.x + threadIdx.x] = q;
                    if (__any_sync(0xffffffffu, cnt == MLQ_TQN)) mlq_warp_flush(s, tq, bq, cnt);
                } else if (VARIANT == IWPP_QUEUE_PREFIXSUM) {
                    const int slot = warp_append_slot(has, &s.bqn);
                    if (has) bq[slot] = q;
                } else if (has) {
                    unsigned long long pos = atomicAdd(&ctl.gcount[blockIdx.x], 1ull);
                    if ((long long)pos < cap)
                        out[pos] = q;
                    else
                        atomicExch(ctl.overflow, 1ull);
                }
            };
            /* the first Op::NBR_UNROLL neighbours unrolled: k is then a constant, so an item may
               keep per-neighbour values in registers (recon_op's prefetch) */
#pragma unroll
            for (int k = 0; k < Op::NBR_UNROLL; ++k)
                if (k < nbr) step(k);
            for (int k = Op::NBR_UNROLL; k < nbr; ++k) step(k);
            if (VARIANT != IWPP_QUEUE_ATOMIC) {
                __syncthreads();
                if (s.bqn > bq_threshold) mlq_spill(s, bq, out, cap, ctl);
            }
        }
        /* end of round: everything queued goes to the out GBQ, then swap */
        if (VARIANT == IWPP_QUEUE_MULTILEVEL) mlq_warp_flush(s, tq, bq, cnt);
        if (VARIANT != IWPP_QUEUE_ATOMIC) {
            mlq_spill(s, bq, out, cap, ctl);
            if (threadIdx.x == 0) {
                s_n = s.outn;
                s.outn = 0;
            }
        } else {
            __syncthreads();
            if (threadIdx.x == 0) {
                long long c = (long long)atomicExch(&ctl.gcount[blockIdx.x], 0ull);
                s_n = c < cap ? c : cap;
            }
        }
        ++rounds;
        if (ctl.leave_rounds > 0 && threadIdx.x == 0 && s_n > 0 &&
            (rounds >= ctl.leave_rounds || (rounds >= ctl.leave_rounds / 32 && s_n >= 16 * (long long)blockDim.x)) &&
            *(volatile unsigned long long *)ctl.finished >= gridDim.x - gridDim.x / 8) {
            atomicExch(ctl.overflow, 1ull); /* the collection finds what this queue held */
            atomicAdd(ctl.left, 1ull);
            s_n = 0;
        }
        __syncthreads();
        n = s_n;
        in = out;
        out = (out == qa) ? qb : qa;
        __syncthreads();
    }
    if (ctl.leave_rounds > 0 && threadIdx.x == 0) atomicAdd(ctl.finished, 1ull);

    /* block totals */
    typedef unsigned long long ull;
    for (int o = 16; o > 0; o >>= 1) visited += __shfl_down_sync(0xffffffffu, visited, o);
    if (lane_id() == 0 && visited) atomicAdd(ctl.visited, (ull)visited);
    if (threadIdx.x == 0 && rounds) atomicMax(ctl.rounds, (ull)rounds);
}

/* Shared memory a launch needs, and the BQ threshold that keeps BQ from overflowing. */
template <typename IdxT>
static inline size_t mlq_smem_bytes(int variant, int nbr, int *threshold)
{
    const int reserve = MLQ_THREADS * ((variant == IWPP_QUEUE_MULTILEVEL ? MLQ_TQN : 0) + nbr);
    const int extra = 2048;
    *threshold = extra;
    size_t items = (size_t)(variant == IWPP_QUEUE_MULTILEVEL ? MLQ_TQN * MLQ_THREADS : 0);
    if (variant != IWPP_QUEUE_ATOMIC) items += (size_t)(extra + reserve);
    return items * sizeof(IdxT);
}

/* The shape of one queue phase for kernel @p kern: shared memory, BQ threshold, and blocks
 * (resident blocks per SM, clamped to 1..4, times the SMs). */
struct mlq_shape {
    size_t smem;
    int threshold;
    int blocks;
};
template <typename IdxT, typename Kern>
static iwpp_status mlq_shape_for(iwpp_context *ctx, Kern kern, int variant, int nbr, mlq_shape *out)
{
    cuda_state *st = cu_state(ctx);
    out->smem = mlq_smem_bytes<IdxT>(variant, nbr, &out->threshold);
    if (out->smem > 48 * 1024) CU_TRY(ctx, cu_allow_smem(st, kern), "configuring the queue kernel");
    int occ = 0;
    CU_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kern, MLQ_THREADS, out->smem),
           "sizing the queue kernel");
    out->blocks = st->sms * (occ < 1 ? 1 : occ > 4 ? 4 : occ);
    /* tile workers sharing the device: each takes its share of the resident blocks, so that
       their queue phases (latency-bound on a tile: the longest path, not the pixels) run side
       by side instead of one after the other (cuda.queue_share 0: every launch all of them) */
    const int share = ctx->device_share;
    if (share > 1 && iwpp_tune_int(ctx, IWPP_TUNE_CUDA_QUEUE_SHARE, 1, 0, 1)) {
        out->blocks /= share;
        if (out->blocks < st->sms) out->blocks = st->sms;
    }
    return IWPP_OK;
}

/* Calls f(std::integral_constant<int, V>()) for the context's queue variant V, so that every
 * queue phase instantiates its kernels the same way (MULTILEVEL unless ATOMIC or PREFIXSUM). */
template <typename F> static iwpp_status mlq_by_variant(const iwpp_context *ctx, F &&f)
{
    switch (ctx->queue_variant) {
    case IWPP_QUEUE_ATOMIC: return f(std::integral_constant<int, IWPP_QUEUE_ATOMIC>());
    case IWPP_QUEUE_PREFIXSUM: return f(std::integral_constant<int, IWPP_QUEUE_PREFIXSUM>());
    default: return f(std::integral_constant<int, IWPP_QUEUE_MULTILEVEL>());
    }
}

/* One launch of the queue phase from @p count initial items (init): clears the counters
 * (ctr[0..7], and the ATOMIC variant's per-block gcount), runs @p kern on @p blocks blocks,
 * adds the items taken and the rounds to the stats, and sets *overflowed when a global block
 * queue dropped items or a block left early (@p leave_rounds, mlq_ctl): the caller then re-runs
 * from the partial result. Synchronises. */
template <typename Kern, typename Op, typename IdxT>
static iwpp_status mlq_launch(iwpp_context *ctx, Kern kern, int blocks, size_t smem, const Op &op,
                              const IdxT *init, long long count, IdxT *gq, long long cap, int threshold,
                              unsigned long long *ctr, unsigned long long *gcount, size_t gc_bytes,
                              bool *overflowed, long long leave_rounds = 0, bool *left = NULL)
{
    cuda_state *st = cu_state(ctx);
    cudaStream_t s = st->stream;
    CU_TRY(ctx, cudaMemsetAsync(gcount, 0, gc_bytes, s), "clearing queue counters");
    CU_TRY(ctx, cudaMemsetAsync(ctr, 0, 8 * sizeof(unsigned long long), s), "clearing counters");
    mlq_ctl ctl;
    ctl.visited = ctr + 1;
    ctl.rounds = ctr + 2;
    ctl.overflow = ctr + 3;
    ctl.gcount = gcount;
    ctl.finished = ctr + 4;
    ctl.left = ctr + 5;
    ctl.leave_rounds = leave_rounds;
    kern<<<blocks, MLQ_THREADS, smem, s>>>(op, init, count, gq, cap, threshold, ctl);
    CU_TRY(ctx, cudaMemcpyAsync(st->hctr, ctr, 6 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, s),
           "reading the queue counters");
    iwpp_status e = cu_sync(ctx, "running the queue phase");
    if (e != IWPP_OK) return e;
    ctx->stats.pixels_visited += (int64_t)st->hctr[1];
    ctx->stats.rounds += (int64_t)st->hctr[2];
    *overflowed = st->hctr[3] != 0;
    if (left) *left = st->hctr[5] != 0;
    return IWPP_OK;
}

#endif
