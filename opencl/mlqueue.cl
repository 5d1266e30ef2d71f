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
