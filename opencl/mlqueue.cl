/*
 * mlqueue.cl - work-group collectives and the multi-level queue.
 *
 * Levels: (1) a private queue per work-item: its own slice of a local-memory
 * array (as in the paper; tq[i * L + lid], so neighbouring work-items use
 * neighbouring banks), written without synchronisation; (2) a work-group queue in local memory, into
 * which the private queues are written at offsets from a local prefix sum,
 * with one local counter update per step; (3) a global queue per work-group,
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

/* The state of one work-group's queue (all fields in local memory). */
typedef struct mlq_state {
    uint bq_n;  /* items in the local queue */
    uint out_n; /* items written (or attempted) to the global out queue */
} mlq_state;

/* Copy the local queue to the global out queue (collective). */
inline void mlq_flush(__local mlq_state *st, __local const uint *bq, __global uint *out_q, uint cap,
                      __global volatile uint *overflow)
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

/* Append each work-item's private items tq[i * L + lid], i < tn (collective):
 * through the local queue when they fit, else straight to the global queue. */
inline void mlq_push(__local mlq_state *st, __local uint *bq, uint bq_cap, __local uint *scan,
                     __local const uint *tq, uint tn, __global uint *out_q, uint cap,
                     __global volatile uint *overflow)
{
    uint lid = (uint)get_local_id(0), L = (uint)get_local_size(0);
    uint off = wg_scan_excl(tn, scan);
    uint total = scan[L];
    if (st->bq_n + total > bq_cap) mlq_flush(st, bq, out_q, cap, overflow);
    if (total > bq_cap) {
        uint o = st->out_n + off;
        for (uint i = 0; i < tn; ++i) {
            if (o + i < cap)
                out_q[o + i] = tq[i * L + lid];
            else
                *overflow = 1u;
        }
    } else {
        uint o = st->bq_n + off;
        for (uint i = 0; i < tn; ++i) bq[o + i] = tq[i * L + lid];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        if (total > bq_cap)
            st->out_n += total;
        else
            st->bq_n += total;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}
