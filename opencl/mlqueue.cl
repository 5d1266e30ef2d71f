/*
 * mlqueue.cl - work-group collectives and the multi-level queue.
 *
 * Levels: (1) a private queue per work-item: its own slice of a local-memory
 * array (as in the paper; tq[i * L + lid], so neighbouring work-items use
 * neighbouring banks), written without synchronisation; (2) a work-group queue in local memory, in
 * which each work-item reserves room for its private queue with one local
 * atomic_add per step (see mlq_push); (3) a global queue per work-group,
 * filled from the local queue with coalesced copies. The global queue has a
 * fixed capacity: items past it are dropped and the overflow flag is raised,
 * after which the host re-runs the propagation from the partial result.
 */

/* Exclusive prefix sum of v over the work-group (any size). tmp holds
 * get_local_size(0) + 1 uints; on return tmp[get_local_size(0)] is the sum
 * (valid until the next call). Every work-item must call it. (The sum is not
 * returned through a pointer to a private variable: some work-group
 * compilers, PoCL among them, mishandle such pointers across barriers.) */
inline uint wg_scan_excl(uint v, __local uint *tmp)
{
    uint lid = (uint)get_local_id(0), n = (uint)get_local_size(0);
    tmp[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 1; s < n; s <<= 1) {
        uint add = lid >= s ? tmp[lid - s] : 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        tmp[lid] += add;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint incl = tmp[lid];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == n - 1) tmp[n] = incl;
    barrier(CLK_LOCAL_MEM_FENCE);
    return incl - v;
}

/*
 * mlq_push (collective): each work-item with items reserves its room in the local queue with
 * one local atomic_add; a work-item whose items do not all fit writes them straight to the
 * global out queue (room reserved with a local atomic on out_n) and records where the local
 * queue's valid part ends. Two barriers per call (a work-group prefix sum of the counts took
 * 2 log2(L) + 5, and most rounds of a tissue-like propagation hold few items, so those
 * barriers were the cost). Afterwards the local queue is flushed when it is more than half
 * full. That decision is taken by work-item 0 between the barriers and kept in its own flag:
 * reading bq_n after the second barrier would race with a faster work-item's next atomic_add,
 * and work-items that disagreed would reach mlq_flush's barriers unevenly.
 * (One call site per kernel: PoCL 5 gave wrong results with two barrier-holding queue
 * variants in the two branches of a uniform if.)
 */
typedef struct mlq_state {
    uint bq_n;    /* items reserved in the local queue (may pass bq_cap) */
    uint bq_end;  /* the smallest start of a reservation that did not fit */
    uint out_n;   /* items written (or attempted) to the global out queue */
    uint flush;   /* mlq_push's decision to flush, read by every work-item */
} mlq_state;

inline void mlq_flush(__local mlq_state *st, __local const uint *bq, __global uint *out_q,
                       uint cap, __global volatile uint *overflow)
{
    uint lid = (uint)get_local_id(0), L = (uint)get_local_size(0);
    uint n = st->bq_n, o = st->out_n;
    for (uint i = lid; i < n; i += L) {
        uint pos = o + i;
        if (pos < cap)
            out_q[pos] = bq[i];
        else
            *overflow = 1u;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        st->out_n = o + n;
        st->bq_n = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

inline void mlq_push(__local mlq_state *st, __local uint *bq, uint bq_cap, __local const uint *tq,
                      uint tn, __global uint *out_q, uint cap, __global volatile uint *overflow)
{
    uint lid = (uint)get_local_id(0), L = (uint)get_local_size(0);
    if (tn > 0) {
        uint o = atomic_add(&st->bq_n, tn);
        if (o + tn <= bq_cap) {
            for (uint i = 0; i < tn; ++i) bq[o + i] = tq[i * L + lid];
        } else {
            atomic_min(&st->bq_end, o);
            uint g = atomic_add(&st->out_n, tn);
            for (uint i = 0; i < tn; ++i) {
                if (g + i < cap)
                    out_q[g + i] = tq[i * L + lid];
                else
                    *overflow = 1u;
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        const uint n = min(st->bq_n, st->bq_end);
        st->bq_n = n;
        st->bq_end = 0xffffffffu;
        st->flush = n > bq_cap / 2;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (st->flush) mlq_flush(st, bq, out_q, cap, overflow);
}

#define VARIANT_MULTILEVEL 0
#define VARIANT_ATOMIC 1
#define VARIANT_PREFIXSUM 2

/*
 * MLQ_GROUP_ROUNDS(VISIT): the body of a queue-phase kernel (rec_queue, edt_dan_queue), written
 * once for both. Work-group g takes its equal share of the seed list, then runs rounds: its
 * work-items take the round's items K at a time and run VISIT(p) on each, which calls
 * MLQ_QUEUE(q) for every neighbour q it changed; the queued items are the next round's input.
 * The groups never wait for each other. It expects the kernel's arguments seeds, nseeds, gq,
 * cap, counters, gstats, bq, bq_cap, scan, tq, K and variant, with these meanings:
 *   tq: K * noffs entries per work-item (the private queues, in local memory);
 *   gq: two halves (in/out) of cap items per group; counters[1] the overflow flag,
 *       counters[2 + g] group g's count in the atomic variant;
 *   gstats[2g] = items taken, gstats[2g+1] = rounds;
 *   variant: VARIANT_MULTILEVEL (private + local + global queue, the private queues moved into
 *   the local one with a local atomic per work-item: mlq_push), VARIANT_PREFIXSUM (the same with
 *   K = 1: the local queue updated after every item), VARIANT_ATOMIC (one global atomic per
 *   queued item).
 * (A macro because OpenCL C has no templates; VISIT itself stays an ordinary function call.)
 */
#define MLQ_QUEUE(q)                                                                                   \
    do {                                                                                               \
        if (variant == VARIANT_ATOMIC) {                                                               \
            const uint pos_ = atomic_inc(mlq_acount);                                                  \
            if (pos_ < cap)                                                                            \
                mlq_out[pos_] = (q);                                                                   \
            else                                                                                       \
                *mlq_ovf = 1u;                                                                         \
        } else {                                                                                       \
            tq[(mlq_tn++) * mlq_L + mlq_lid] = (q);                                                    \
        }                                                                                              \
    } while (0)

#define MLQ_GROUP_ROUNDS(VISIT)                                                                        \
    __local mlq_state mlq_st;                                                                          \
    const uint mlq_g = (uint)get_group_id(0), mlq_G = (uint)get_num_groups(0);                         \
    const uint mlq_lid = (uint)get_local_id(0), mlq_L = (uint)get_local_size(0);                       \
    const uint mlq_b0 = (uint)(((ulong)nseeds * mlq_g) / mlq_G);                                       \
    const uint mlq_b1 = (uint)(((ulong)nseeds * (mlq_g + 1)) / mlq_G);                                 \
    __global const uint *mlq_in = seeds + mlq_b0;                                                      \
    uint mlq_in_n = mlq_b1 - mlq_b0;                                                                   \
    __global uint *mlq_qa = gq + (size_t)mlq_g * 2u * cap;                                             \
    __global uint *mlq_qb = mlq_qa + cap;                                                              \
    __global uint *mlq_out = mlq_qa;                                                                   \
    __global volatile uint *mlq_ovf = counters + 1;                                                    \
    __global volatile uint *mlq_acount = counters + 2 + mlq_g;                                         \
    uint mlq_visited = 0, mlq_rounds = 0;                                                              \
    while (mlq_in_n > 0) {                                                                             \
        if (mlq_lid == 0) {                                                                            \
            mlq_st.bq_n = 0;                                                                           \
            mlq_st.out_n = 0;                                                                          \
            mlq_st.bq_end = 0xffffffffu;                                                               \
            if (variant == VARIANT_ATOMIC) *mlq_acount = 0u;                                           \
        }                                                                                              \
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);                                           \
        for (uint mlq_base = 0; mlq_base < mlq_in_n; mlq_base += mlq_L * K) {                          \
            uint mlq_tn = 0;                                                                           \
            for (uint mlq_j = 0; mlq_j < K; ++mlq_j) {                                                 \
                const uint mlq_idx = mlq_base + mlq_j * mlq_L + mlq_lid;                               \
                if (mlq_idx >= mlq_in_n) break;                                                        \
                ++mlq_visited;                                                                         \
                VISIT(mlq_in[mlq_idx]);                                                                \
            }                                                                                          \
            if (variant != VARIANT_ATOMIC) mlq_push(&mlq_st, bq, bq_cap, tq, mlq_tn, mlq_out, cap, mlq_ovf); \
        }                                                                                              \
        if (variant != VARIANT_ATOMIC) mlq_flush(&mlq_st, bq, mlq_out, cap, mlq_ovf);                  \
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);                                           \
        ++mlq_rounds;                                                                                  \
        const uint mlq_n_out = (variant == VARIANT_ATOMIC) ? *mlq_acount : mlq_st.out_n;               \
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);                                           \
        mlq_in_n = min(mlq_n_out, cap);                                                                \
        mlq_in = mlq_out;                                                                              \
        mlq_out = (mlq_out == mlq_qa) ? mlq_qb : mlq_qa;                                               \
    }                                                                                                  \
    wg_scan_excl(mlq_visited, scan);                                                                   \
    if (mlq_lid == 0) {                                                                                \
        gstats[2 * mlq_g] = scan[mlq_L];                                                               \
        gstats[2 * mlq_g + 1] = mlq_rounds;                                                            \
    }
