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
 * global out queue (room reserved with a local atomic on out_n). One barrier per call (a
 * work-group prefix sum of the counts took 2 log2(L) + 5, and most rounds of a tissue-like
 * propagation hold few items, so barriers are the cost). The reservations of a step go to their
 * own slot, one of three in turn: after the barrier every work-item reads this step's slot and
 * forms the queue's new fill level itself, the same value everywhere (so all agree on a flush and
 * reach its barriers together), while the next step's atomics go to the next slot and work-item
 * 0 clears the one after it (last read before this step's barrier).
 * (One call site per kernel: PoCL 5 gave wrong results with two barrier-holding queue
 * variants in the two branches of a uniform if.)
 */
typedef struct mlq_slot {
    uint n;   /* items reserved in this step (may pass the room left) */
    uint end; /* the smallest reservation offset that did not fit */
} mlq_slot;

typedef struct mlq_state {
    mlq_slot slot[3];
    uint out_n;  /* items written (or attempted) to the global out queue */
    uint next_n; /* the next round's input, as work-item 0 saw it after the round */
    uint leave;  /* the group leaves its queue (leave_rounds) */
} mlq_state;

inline void mlq_reset(__local mlq_state *st)
{
    for (int i = 0; i < 3; ++i) {
        st->slot[i].n = 0;
        st->slot[i].end = 0xffffffffu;
    }
    st->out_n = 0;
}

/* Writes the local queue's first n items to the global out queue (collective, n the same in
 * every work-item); the local queue is empty afterwards. */
inline void mlq_flush(__local mlq_state *st, __local const uint *bq, uint n, __global uint *out_q,
                       uint cap, __global volatile uint *overflow)
{
    uint lid = (uint)get_local_id(0), L = (uint)get_local_size(0);
    uint o = st->out_n;
    for (uint i = lid; i < n; i += L) {
        uint pos = o + i;
        if (pos < cap)
            out_q[pos] = bq[i];
        else
            *overflow = 1u;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) st->out_n = o + n;
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* Returns the local queue's fill level after this step's items (fill: before them; step: the
 * calls so far); flushes the queue when it is more than half full, returning 0 then. */
inline uint mlq_push(__local mlq_state *st, uint step, uint fill, __local uint *bq, uint bq_cap,
                      __local const uint *tq, uint tn, __global uint *out_q, uint cap,
                      __global volatile uint *overflow)
{
    uint lid = (uint)get_local_id(0), L = (uint)get_local_size(0);
    __local mlq_slot *sl = &st->slot[step % 3u];
    if (tn > 0) {
        uint o = atomic_add(&sl->n, tn);
        if (fill + o + tn <= bq_cap) {
            for (uint i = 0; i < tn; ++i) bq[fill + o + i] = tq[i * L + lid];
        } else {
            atomic_min(&sl->end, o);
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
    fill += min(sl->n, sl->end);
    if (lid == 0) {
        __local mlq_slot *next = &st->slot[(step + 2u) % 3u];
        next->n = 0;
        next->end = 0xffffffffu;
    }
    if (fill > bq_cap / 2) {
        mlq_flush(st, bq, fill, out_q, cap, overflow);
        fill = 0;
    }
    return fill;
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
 * cap, counters, gstats, bq, bq_cap, scan, tq, K, variant and leave_rounds, with these meanings:
 *   tq: K * noffs entries per work-item (the private queues, in local memory);
 *   gq: two halves (in/out) of cap items per group; counters[1] the overflow flag,
 *       counters[2 + g] group g's count in the atomic variant; with leave_rounds > 0
 *       counters[2 + G] the groups finished, counters[3 + G] those that left early;
 *   leave_rounds: > 0: a group still busy when all other groups but an eighth have finished
 *       leaves after that many rounds (after a 32nd of them with 16 items a work-item queued),
 *       raising the overflow flag: the host collects the front again and spreads it over every
 *       group (a flood from one seed, a long chain); 0: never;
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
    __global volatile uint *mlq_fin = counters + 2 + mlq_G;                                            \
    uint mlq_visited = 0, mlq_rounds = 0;                                                              \
    while (mlq_in_n > 0) {                                                                             \
        if (mlq_lid == 0) mlq_reset(&mlq_st);                                                          \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
        uint mlq_fill = 0, mlq_step = 0;                                                               \
        for (uint mlq_base = 0; mlq_base < mlq_in_n; mlq_base += mlq_L * K, ++mlq_step) {              \
            uint mlq_tn = 0;                                                                           \
            for (uint mlq_j = 0; mlq_j < K; ++mlq_j) {                                                 \
                const uint mlq_idx = mlq_base + mlq_j * mlq_L + mlq_lid;                               \
                if (mlq_idx >= mlq_in_n) break;                                                        \
                ++mlq_visited;                                                                         \
                VISIT(mlq_in[mlq_idx]);                                                                \
            }                                                                                          \
            if (variant != VARIANT_ATOMIC)                                                             \
                mlq_fill = mlq_push(&mlq_st, mlq_step, mlq_fill, bq, bq_cap, tq, mlq_tn, mlq_out, cap, mlq_ovf); \
        }                                                                                              \
        if (variant != VARIANT_ATOMIC) mlq_flush(&mlq_st, bq, mlq_fill, mlq_out, cap, mlq_ovf);        \
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE); /* the out queue: the next round's input */ \
        ++mlq_rounds;                                                                                  \
        if (mlq_lid == 0) {                                                                            \
            /* (the atomic variant's count is taken and cleared in one step) */                        \
            const uint mlq_n_out = (variant == VARIANT_ATOMIC) ? atomic_xchg(mlq_acount, 0u) : mlq_st.out_n; \
            mlq_st.next_n = mlq_n_out;                                                                 \
            if (leave_rounds > 0u) {                                                                   \
                mlq_st.leave = mlq_n_out > 0u &&                                                       \
                               (mlq_rounds >= leave_rounds ||                                          \
                                (mlq_rounds >= leave_rounds / 32u && mlq_n_out >= 16u * mlq_L)) &&    \
                               *mlq_fin + 1u + mlq_G / 8u >= mlq_G;                                    \
                if (mlq_st.leave) {                                                                    \
                    *mlq_ovf = 1u; /* the collection finds what this queue held */                     \
                    atomic_inc(mlq_fin + 1);                                                           \
                }                                                                                      \
            }                                                                                          \
        }                                                                                              \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
        mlq_in_n = (leave_rounds > 0u && mlq_st.leave) ? 0u : min(mlq_st.next_n, cap);                 \
        mlq_in = mlq_out;                                                                              \
        mlq_out = (mlq_out == mlq_qa) ? mlq_qb : mlq_qa;                                               \
    }                                                                                                  \
    if (leave_rounds > 0u && mlq_lid == 0) atomic_inc(mlq_fin);                                        \
    wg_scan_excl(mlq_visited, scan);                                                                   \
    if (mlq_lid == 0) {                                                                                \
        gstats[2 * mlq_g] = scan[mlq_L];                                                               \
        gstats[2 * mlq_g + 1] = mlq_rounds;                                                            \
    }
