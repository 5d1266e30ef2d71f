/*
 * edt_danielsson.cl - the Danielsson EDT: IWPP propagation of nearest-background sites. Two
 * schedules of the same propagation (host side: edt_danielsson.c): by tiles in local memory
 * (edt_dan_tiles, the default), or pixel by pixel with a 32-bit compare-and-swap through global
 * rounds and the work-group queues (edt_dan_init ... edt_dan_queue). Appended after edt_exact.cl
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
 * other and for the swaps between them); s (no offer) past the image or past noffs. Two at a
 * time: in the 3D queues (512^3, H200, NVIDIA's OpenCL) eight took up to 1.5x the time of one
 * (ring_n4), two 0.89-1.06x that of one, the worst family 1.38x CUDA's time against 1.53x
 * (bench/dan_device.sh with IWPP_OCL_BUILD_OPTIONS=-DDAN_AHEAD=n; opencl/README.md). */
#ifndef DAN_AHEAD
#define DAN_AHEAD 2
#endif
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

/* NVIDIA's OpenCL (IWPP_NV_PTX, set by the host; inline PTX): the lanes of a warp that visit an
 * item wait for each other after every read-ahead, as CUDA's queue does with its vote after
 * every neighbour. Left to itself the compiler let lanes that had taken different branches of the
 * offers (a swap, a retried swap, none) go on apart, each part issuing the next loads on its own:
 * with the wait, 512^3 on the H200 took 0.52-0.95x the time without it over 22 families, 0.55-0.97x
 * CUDA's (bench/dan_device.sh; without it 0.57-1.36x). */
#ifdef IWPP_NV_PTX
#define DAN_WARP_MASK() uint wmask_; asm volatile("activemask.b32 %0;" : "=r"(wmask_))
#define DAN_WARP_SYNC() asm volatile("bar.warp.sync %0;" : : "r"(wmask_))
#else
#define DAN_WARP_MASK() (void)0
#define DAN_WARP_SYNC() (void)0
#endif

/* The work-group queues (MLQ_GROUP_ROUNDS, mlqueue.cl), once the front is large: each listed pixel
 * offers its current site to its neighbours, and every neighbour that took it is queued. */
#define DAN_VISIT(p)                                                                                   \
    do {                                                                                               \
        const uint p_ = (p);                                                                           \
        const uint s = vv[p_];                                                                         \
        const int3 c = coords_of(p_, w, h), sc = site_xyz(s, w, h, sy, sz);                            \
        DAN_WARP_MASK();                                                                               \
        for (int k0 = 0; k0 < noffs; k0 += DAN_AHEAD) {                                                \
            uint cur[DAN_AHEAD];                                                                       \
            dan_read_ahead(vv, p_, c, s, offs, noffs, k0, w, h, d, cur);                               \
            for (int i = 0; i < DAN_AHEAD; ++i) {                                                      \
                if (cur[i] == s) continue;                                                             \
                const int4 o = offs[k0 + i];                                                           \
                const uint q = p_ + (uint)o.w;                                                         \
                if (dan_offer(vv, q, c + o.xyz, s, sc, cur[i], w, h, sy, sz, hx, hy, hz)) MLQ_QUEUE(q); \
            }                                                                                          \
            DAN_WARP_SYNC();                                                                           \
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

/* ---- By tiles (the default) ----
 * Round r takes a list of tiles (round 0: every tile, its sites made from the binary image).
 * A work-group loads its tile (a square of side S, or a cube in 3D) and a one-pixel frame of the
 * neighbours' sites into local memory and relaxes it there until nothing changes: a pixel takes
 * the nearest of its neighbours' sites when that is strictly nearer than its own (the fixpoint
 * of the queue's offers, so the same bounds). It relaxes by sweeps, as Danielsson's own passes:
 * for each axis, the work-group's two halves walk the tile plane by plane in the two directions
 * at once (a barrier a step), each pixel of a plane taking from its 3 (2D) or 9 (3D) neighbours
 * in the plane before, so a front crosses the whole tile in one sweep; sweeps repeat until one
 * changes nothing (every pixel then keeps its site against all 8 / 26 neighbours). The halves
 * never write the same plane in one step (S is even). Changed pixels go back to the site map;
 * a changed pixel on the tile's border lists the neighbouring tile that holds a pixel next to
 * it which would take its site (checked against the frame as loaded, then against the site map
 * now), for round r + 1, once (mark[t] = r). Tiles of one round write disjoint pixels, and a
 * tile that read a border before it changed is listed again by it. Counts as edt_dan_round's:
 * cnt[r % 3] in, cnt[(r + 1) % 3] out, cnt[3..4] tiles taken (64-bit), cnt[5] rounds that had
 * work. intd (unit spacing): squared distances from integer differences, exact (the double
 * formula's value wherever that one is exact, below 2^53). Local memory: ls (the frame and tile, nh sites), chg (S^dim bytes:
 * changed), lv (4 flags). Work-group: 2 S^(dim-1) items. */
inline double dan_d2(uint s, int3 c, int w, int h, int sy, int sz, double hx, double hy, double hz, int intd)
{
    const int3 sc = site_xyz(s, w, h, sy, sz);
    if (intd) {
        const long dx = c.x - sc.x, dy = c.y - sc.y, dz = c.z - sc.z;
        return (double)(dx * dx + dy * dy + dz * dz);
    }
    return site_d2(sc, c, hx, hy, hz);
}

__kernel void edt_dan_tiles(__global const pix_t *in, __global uint *vr, int w, int h, int d, int sy, int sz,
                            int lgs, int ntx, int nty, int ntz, __global const uint *in_list,
                            __global uint *out_list, __global volatile uint *cnt, __global volatile uint *mark,
                            uint round, int dense, int intd, double hx, double hy, double hz, __local uint *ls,
                            __local uchar *chg, __local volatile int *lv)
{
    const int lid = (int)get_local_id(0), L = (int)get_local_size(0);
    const int S = 1 << lgs, zh = d > 1;
    const int HX = S + 3, HY = S + 2, HZ = zh ? S + 2 : 1; /* rows of an odd length: columns on distinct banks */
    const int nh = HX * HY * HZ, npix = zh ? S * S * S : S * S, P = L / 2;
    const uint n_in = dense ? (uint)(ntx * nty * ntz) : cnt[round % 3];
    __global volatile uint *out_n = cnt + (round + 1) % 3;
    if (get_global_id(0) == 0) { /* one writer per round, rounds in order: plain stores */
        cnt[(round + 2) % 3] = 0;
        const uint c3 = cnt[3], nc3 = c3 + n_in;
        cnt[3] = nc3;
        cnt[4] += nc3 < c3;
        cnt[5] += n_in > 0;
    }
    for (uint ti = (uint)get_group_id(0); ti < n_in; ti += (uint)get_num_groups(0)) {
        const uint t = dense ? ti : in_list[ti];
        const int bx = (int)(t % (uint)ntx), br = (int)(t / (uint)ntx), by = br % nty, bz = br / nty;
        const int3 o = (int3)(bx << lgs, by << lgs, zh ? bz << lgs : 0);
        for (int j = lid; j < nh; j += L) { /* the tile and its frame */
            const int fr = j / HX;
            const int3 c = o + (int3)(j % HX - 1, fr % HY - 1, fr / HY - zh);
            uint s = DAN_NONE;
            if (c.x >= 0 && c.x < w && c.y >= 0 && c.y < h && c.z >= 0 && c.z < d) {
                const uint p = (uint)c.x + (uint)w * ((uint)c.y + (uint)h * (uint)c.z);
                s = !dense ? vr[p] : in[p] == (pix_t)0 ? site_at(c, w, h, sy, sz) : DAN_NONE;
            }
            ls[j] = s;
        }
        for (int i = lid; i < npix; i += L) chg[i] = 0;
        if (lid == 0) lv[0] = lv[1] = lv[2] = lv[3] = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        /* a listed tile was relaxed when it was last taken and nobody else writes its pixels: only
         * its outer ring can change first. The ring against all its neighbours; no sweep if none changed */
        if (!dense) {
            int any = 0;
            for (int i = lid; i < npix; i += L) {
                const int3 l = (int3)(i & (S - 1), (i >> lgs) & (S - 1), i >> (2 * lgs));
                const int3 pc = o + l;
                if (pc.x >= w || pc.y >= h || pc.z >= d ||
                    !(l.x == 0 || l.x == S - 1 || l.y == 0 || l.y == S - 1 || (zh && (l.z == 0 || l.z == S - 1))))
                    continue;
                const int li = (l.x + 1) + HX * ((l.y + 1) + HY * (l.z + zh));
                const uint s = ls[li];
                double bd = s == DAN_NONE ? INFINITY : dan_d2(s, pc, w, h, sy, sz, hx, hy, hz, intd);
                uint best = s;
                for (int dz = -zh; dz <= zh && bd > 0.0; ++dz)
                    for (int dy = -1; dy <= 1; ++dy)
                        for (int dx = -1; dx <= 1; ++dx) {
                            const uint q = ls[li + dx + HX * (dy + HY * dz)];
                            if (q == DAN_NONE || q == best) continue;
                            const double dq = dan_d2(q, pc, w, h, sy, sz, hx, hy, hz, intd);
                            if (dq < bd) best = q, bd = dq;
                        }
                if (best != s) ls[li] = best, chg[i] = 1, any = 1;
            }
            if (any) lv[2] = 1;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (!lv[2]) lv[1] = -1; /* no sweep (read by all after the next barrier) */
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        /* sweeps until one changes nothing; sweep k's flag is lv[k % 3], cleared in sweep k - 1
         * (its last readers passed the barrier of sweep k - 2 before) */
        const int dir = lid < P ? 1 : -1, u = lid % P % S, v = lid % P / S; /* this item's place in a plane */
        for (uint k = 0; lv[1] != -1; ++k) {
            if (lid == 0) lv[(k + 1) % 3] = 0;
            int any = 0;
            for (int ax = 0; ax < 2 + zh; ++ax) {
                const int a = ax == 0 ? 1 : ax == 1 ? 0 : 2; /* rows (y) first, then columns, then z */
                const int au = a == 0 ? 1 : 0, av = a == 2 ? 1 : 2; /* the plane's axes */
                const int sa = a == 0 ? 1 : a == 1 ? HX : HX * HY, su = au == 0 ? 1 : HX, sv = av == 1 ? HX : HX * HY;
                for (int step = 0; step < S; ++step) {
                    int l3[3];
                    l3[a] = dir > 0 ? step : S - 1 - step;
                    l3[au] = u;
                    l3[av] = v;
                    const int3 pc = o + (int3)(l3[0], l3[1], l3[2]);
                    if (pc.x < w && pc.y < h && pc.z < d) {
                        const int li = (l3[0] + 1) + HX * ((l3[1] + 1) + HY * (l3[2] + zh));
                        const uint s = ls[li];
                        double bd = s == DAN_NONE ? INFINITY : dan_d2(s, pc, w, h, sy, sz, hx, hy, hz, intd);
                        uint best = s;
                        const int back = li - dir * sa;
                        for (int dv = -zh; dv <= zh && bd > 0.0; ++dv)
                            for (int du = -1; du <= 1; ++du) {
                                const uint q = ls[back + du * su + dv * sv];
                                if (q == DAN_NONE || q == best) continue;
                                const double dq = dan_d2(q, pc, w, h, sy, sz, hx, hy, hz, intd);
                                if (dq < bd) best = q, bd = dq;
                            }
                        if (best != s) {
                            ls[li] = best;
                            chg[l3[0] + S * (l3[1] + S * l3[2])] = 1;
                            any = 1;
                        }
                    }
                    barrier(CLK_LOCAL_MEM_FENCE);
                }
            }
            if (any) lv[k % 3] = 1;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (!lv[k % 3]) break;
        }
        for (int i = lid; i < npix; i += L) { /* changed pixels back; the neighbouring tiles to list */
            const int3 l = (int3)(i & (S - 1), (i >> lgs) & (S - 1), i >> (2 * lgs));
            const int3 pc = o + l;
            if (pc.x >= w || pc.y >= h || pc.z >= d || !(dense || chg[i])) continue;
            const int li = (l.x + 1) + HX * ((l.y + 1) + HY * (l.z + zh));
            const uint s = ls[li];
            vr[(uint)pc.x + (uint)w * ((uint)pc.y + (uint)h * (uint)pc.z)] = s;
            if (!chg[i] || !(l.x == 0 || l.x == S - 1 || l.y == 0 || l.y == S - 1 || (zh && (l.z == 0 || l.z == S - 1))))
                continue;
            int bits = 0;
            for (int dz = -zh; dz <= zh; ++dz)
                for (int dy = -1; dy <= 1; ++dy)
                    for (int dx = -1; dx <= 1; ++dx) {
                        const int3 lq = l + (int3)(dx, dy, dz), q = pc + (int3)(dx, dy, dz);
                        const int tdx = lq.x < 0 ? -1 : lq.x >= S, tdy = lq.y < 0 ? -1 : lq.y >= S,
                                  tdz = lq.z < 0 ? -1 : lq.z >= S;
                        if (!(tdx | tdy | tdz) || q.x < 0 || q.x >= w || q.y < 0 || q.y >= h || q.z < 0 || q.z >= d)
                            continue;
                        const double ds = dan_d2(s, q, w, h, sy, sz, hx, hy, hz, intd);
                        const uint f = ls[li + dx + HX * (dy + HY * dz)];
                        if (f != DAN_NONE && !(ds < dan_d2(f, q, w, h, sy, sz, hx, hy, hz, intd))) continue;
                        if (!dense) { /* the frame may have improved since it was read */
                            const uint g = vr[(uint)q.x + (uint)w * ((uint)q.y + (uint)h * (uint)q.z)];
                            if (g != DAN_NONE && !(ds < dan_d2(g, q, w, h, sy, sz, hx, hy, hz, intd))) continue;
                        }
                        bits |= 1 << ((tdx + 1) + 3 * (tdy + 1) + 9 * (tdz + 1));
                    }
            if (bits) atomic_or(&lv[3], bits);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const int seen = lv[3];
        for (int b = lid; b < 27; b += L) { /* (a work-group of 2 x 8 items in 2D) */
            const int nx = bx + b % 3 - 1, ny = by + b / 3 % 3 - 1, nz = bz + b / 9 - 1;
            if (((seen >> b) & 1) && nx >= 0 && nx < ntx && ny >= 0 && ny < nty && nz >= 0 && nz < ntz) {
                const uint nt = (uint)nx + (uint)ntx * ((uint)ny + (uint)nty * (uint)nz);
                if (atomic_xchg(&mark[nt], round) != round) out_list[atomic_inc(out_n)] = nt;
            }
        }
        /* ls, chg and lv are the next tile's, whose frame may hold this one's pixels */
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }
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
