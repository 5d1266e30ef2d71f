/*
 * edt_danielsson.cl - the Danielsson EDT: IWPP propagation of nearest-background sites with a
 * 32-bit compare-and-swap (edt_dan_*). Host side: edt_danielsson.c. Appended after edt_exact.cl
 * in the EDT program (FP_CONTRACT OFF there: d2 is formed as on the CPU).
 *
 * A site is a background pixel's coordinates packed in 32 bits, x | y << sy | z << sz, where they
 * fit in 31 bits (sy > 0: shifts, where the linear index would need two divisions per
 * neighbour), else its linear index (sy = 0). DAN_NONE: none yet.
 */
#define DAN_NONE 0xffffffffu

inline int3 site_xyz(uint s, int w, int h, int sy, int sz)
{
    if (sy == 0) return coords_of(s, w, h);
    return (int3)((int)(s & ((1u << sy) - 1u)), (int)((s >> sy) & ((1u << (sz - sy)) - 1u)), (int)(s >> sz));
}

inline uint site_at(int3 c, int w, int h, int sy, int sz)
{
    if (sy == 0) return (uint)c.x + (uint)w * ((uint)c.y + (uint)h * (uint)c.z);
    return (uint)c.x | ((uint)c.y << sy) | ((uint)c.z << sz);
}

/* d2 of site sc at pixel c, as native/cpu/edt.c's site_d2 */
inline double site_d2(int3 sc, int3 c, double hx, double hy, double hz)
{
    double tz = (double)(c.z - sc.z) * hz;
    double ty = (double)(c.y - sc.y) * hy;
    double tx = (double)(c.x - sc.x) * hx;
    return (tz * tz + ty * ty) + tx * tx;
}

/* Offers site s (at sc) to pixel q (at cq), whose site was cur when read: takes it by
 * compare-and-swap while it is strictly closer than q's own; 1 if q changed. A cur read a little
 * earlier is as good as a fresh one: a pixel's site only ever gets strictly closer, so where the
 * old one already beats s the new one does too, and a stale cur makes the swap fail and
 * return the current one. */
inline int dan_offer(__global volatile uint *vr, uint q, int3 cq, uint s, int3 sc, uint cur, int w, int h, int sy,
                     int sz, double hx, double hy, double hz)
{
    const double dn = site_d2(sc, cq, hx, hy, hz);
    while (cur != s && (cur == DAN_NONE || dn < site_d2(site_xyz(cur, w, h, sy, sz), cq, hx, hy, hz))) {
        const uint old = atomic_cmpxchg(&vr[q], cur, s);
        if (old == cur) return 1;
        cur = old;
    }
    return 0;
}

/* The sites of p's neighbours k0 .. k0 + DAN_AHEAD - 1, read together before any is offered
 * (the reads of a volatile pointer keep their order, so one at a time they would wait for each
 * other and for the swaps between them); s (no offer) past the image or past noffs. */
#define DAN_AHEAD 8
inline void dan_read_ahead(__global volatile uint *vr, uint p, int3 c, uint s, __constant int4 *offs, int noffs,
                           int k0, int w, int h, int d, uint cur[DAN_AHEAD])
{
    for (int i = 0; i < DAN_AHEAD; ++i) {
        const int k = k0 + i;
        cur[i] = k < noffs && inside(c, offs[k], w, h, d) ? vr[p + (uint)offs[k].w] : s;
    }
}

/* Slot for each work-item with `flag` in a list that whole work-groups append to: a local atomic
 * per item, one global atomic per group (a single global counter for every item serialises the
 * seeding of dense backgrounds). tmp: 2 local words. Every work-item of the group must call it. */
inline uint group_append_slot(int flag, __global volatile uint *count, __local volatile uint *tmp)
{
    if (get_local_id(0) == 0) tmp[0] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint off = flag ? atomic_inc(&tmp[0]) : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) tmp[1] = tmp[0] > 0u ? atomic_add(count, tmp[0]) : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    return tmp[1] + off;
}

/* Sites: background pixels are their own site, others none; contour pixels seed the list. */
__kernel void edt_dan_init(__global const pix_t *in, __global uint *vr, int w, int h, int d, int sy, int sz,
                           __constant int4 *offs, int noffs, uint n, __global uint *list,
                           __global volatile uint *count, __local volatile uint *tmp)
{
    const uint p = (uint)get_global_id(0);
    int seed = 0;
    if (p < n) { /* no early exit: every work-item reaches group_append_slot's barriers */
        const int bg = in[p] == (pix_t)0;
        const int3 c = coords_of(p, w, h);
        vr[p] = bg ? site_at(c, w, h, sy, sz) : DAN_NONE;
        for (int k = 0; k < noffs && bg && !seed; ++k) {
            const int4 o = offs[k];
            seed = inside(c, o, w, h, d) && in[p + (uint)o.w] != (pix_t)0;
        }
    }
    const uint slot = group_append_slot(seed, count, tmp);
    if (seed) list[slot] = p;
}

/* After a queue overflow: every pixel whose site some neighbour would take, listed again. */
__kernel void edt_dan_seed(__global const uint *vr, int w, int h, int d, int sy, int sz, __constant int4 *offs,
                           int noffs, uint n, __global uint *list, __global volatile uint *count, double hx,
                           double hy, double hz, __local volatile uint *tmp)
{
    const uint p = (uint)get_global_id(0);
    const uint s = p < n ? vr[p] : DAN_NONE;
    int seed = 0;
    if (s != DAN_NONE) {
        const int3 c = coords_of(p, w, h), sc = site_xyz(s, w, h, sy, sz);
        for (int k = 0; k < noffs && !seed; ++k) {
            const int4 o = offs[k];
            if (!inside(c, o, w, h, d)) continue;
            const uint cur = vr[p + (uint)o.w];
            const int3 cq = c + o.xyz;
            seed = cur != s && (cur == DAN_NONE || site_d2(sc, cq, hx, hy, hz) <
                                                      site_d2(site_xyz(cur, w, h, sy, sz), cq, hx, hy, hz));
        }
    }
    const uint slot = group_append_slot(seed, count, tmp);
    if (seed) list[slot] = p;
}

/* One round of the global rounds, used while the front is small (the work-group queues below
 * would leave most groups idle): every listed pixel offers its site to its neighbours; a
 * neighbour that takes it is listed for the next round, at most once per round (mark holds the
 * round number). The counts live on the device, so the host enqueues several rounds between
 * reads: round r takes its input count from cnt[r % 3], appends to cnt[(r+1) % 3] (zeroed by
 * round r - 1) and zeroes cnt[(r+2) % 3] (round r - 1's input, no longer read); cnt[3..4] add up
 * the pixels visited, cnt[5] the rounds that had work. Any global size works (a grid-stride loop
 * over the list). */
__kernel void edt_dan_round(__global uint *vr, int w, int h, int d, int sy, int sz, __constant int4 *offs,
                            int noffs, __global const uint *in_list, __global uint *out_list,
                            __global volatile uint *cnt, __global volatile uint *mark, uint round,
                            double hx, double hy, double hz)
{
    const uint in_n = cnt[round % 3];
    __global volatile uint *out_n = cnt + (round + 1) % 3;
    if (get_global_id(0) == 0) { /* one writer per round, rounds in order: plain stores */
        cnt[(round + 2) % 3] = 0;
        const uint lo = cnt[3], nlo = lo + in_n;
        cnt[3] = nlo;
        cnt[4] += nlo < lo; /* visited: a 64-bit sum in cnt[3], cnt[4] */
        cnt[5] += in_n > 0; /* rounds that had work */
    }
    __global volatile uint *vv = (__global volatile uint *)vr;
    for (uint i = (uint)get_global_id(0); i < in_n; i += (uint)get_global_size(0)) {
        const uint p = in_list[i];
        const uint s = vv[p];
        const int3 c = coords_of(p, w, h), sc = site_xyz(s, w, h, sy, sz);
        for (int k0 = 0; k0 < noffs; k0 += DAN_AHEAD) {
            uint cur[DAN_AHEAD];
            dan_read_ahead(vv, p, c, s, offs, noffs, k0, w, h, d, cur);
            for (int i = 0; i < DAN_AHEAD; ++i) {
                if (cur[i] == s) continue;
                const int4 o = offs[k0 + i];
                const uint q = p + (uint)o.w;
                if (dan_offer(vv, q, c + o.xyz, s, sc, cur[i], w, h, sy, sz, hx, hy, hz) &&
                    atomic_xchg(&mark[q], round) != round)
                    out_list[atomic_inc(out_n)] = q;
            }
        }
    }
}

/* The work-group queues (MLQ_GROUP_ROUNDS, mlqueue.cl), once the front is large: each listed pixel
 * offers its current site to its neighbours, and every neighbour that took it is queued. */
#define DAN_VISIT(p)                                                                                   \
    do {                                                                                               \
        const uint p_ = (p);                                                                           \
        const uint s = vv[p_];                                                                         \
        const int3 c = coords_of(p_, w, h), sc = site_xyz(s, w, h, sy, sz);                            \
        for (int k0 = 0; k0 < noffs; k0 += DAN_AHEAD) {                                                \
            uint cur[DAN_AHEAD];                                                                       \
            dan_read_ahead(vv, p_, c, s, offs, noffs, k0, w, h, d, cur);                               \
            for (int i = 0; i < DAN_AHEAD; ++i) {                                                      \
                if (cur[i] == s) continue;                                                             \
                const int4 o = offs[k0 + i];                                                           \
                const uint q = p_ + (uint)o.w;                                                         \
                if (dan_offer(vv, q, c + o.xyz, s, sc, cur[i], w, h, sy, sz, hx, hy, hz)) MLQ_QUEUE(q); \
            }                                                                                          \
        }                                                                                              \
    } while (0)

__kernel void edt_dan_queue(__global uint *vr, int w, int h, int d, int sy, int sz, __constant int4 *offs,
                            int noffs, double hx, double hy, double hz, __global const uint *seeds,
                            uint nseeds, __global uint *gq, uint cap, __global volatile uint *counters,
                            __global uint *gstats, __local uint *bq, uint bq_cap, __local uint *scan,
                            __local uint *tq, uint K, int variant, uint leave_rounds)
{
    __global volatile uint *vv = (__global volatile uint *)vr;
    MLQ_GROUP_ROUNDS(DAN_VISIT)
}

/* Distances (same arithmetic as the exact method) and nearest indices from the sites. */
__kernel void edt_dan_final(__global const uint *vr, __global float *dist, __global long *nearest,
                            int want_nearest, int w, int h, int sy, int sz, uint n, double hx, double hy, double hz)
{
    uint p = (uint)get_global_id(0);
    if (p >= n) return;
    uint s = vr[p];
    if (s == DAN_NONE) {
        dist[p] = INFINITY;
        if (want_nearest) nearest[p] = -1;
        return;
    }
    const int3 sc = site_xyz(s, w, h, sy, sz);
    dist[p] = (float)sqrt(site_d2(sc, coords_of(p, w, h), hx, hy, hz));
    if (want_nearest) nearest[p] = (long)sc.x + (long)w * ((long)sc.y + (long)h * (long)sc.z);
}
