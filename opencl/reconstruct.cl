/*
 * reconstruct.cl - FH_GPU morphological reconstruction on 32-bit keys.
 *
 * The host converts the marker to keys J = key(marker) ^ inv (inv = 0 for
 * reconstruction by dilation, ~0 for erosion, which turns erosion into
 * dilation of the complemented keys); the mask I stays in its own type and
 * is keyed on the fly. Everything below is therefore a reconstruction by
 * dilation: J only grows, by atomic_max, and never exceeds key(I) ^ inv.
 *
 * Phase 1 (rec_scan): raster and anti-raster scans split into one pass per
 * axis and direction, one work-item per image line. Lines read neighbours
 * that other work-items are writing; any value they see is a valid lower
 * bound, so the scans only have to be fast, not complete.
 * Phase 2 (rec_seed, rec_queue): every pixel that can still raise a
 * neighbour seeds the queue; the work-groups then propagate with the
 * multi-level queue (mlqueue.cl) until their queues are empty.
 */

/*
 * Phase 1 as parallel scans. Along one line, in the scan direction,
 *   v[i] = min(m[i], max(a[i], v[i-1])),  a[i] = max(J[i], J at the neighbours
 *   of i in the previous slice of the other lines),
 * so v[i] = f_i(v[i-1]) with f_i(x) = clamp(x, min(a[i], m[i]), m[i]).
 * Clamps compose into clamps (f2(f1(x)) = clamp(x, f2(lo1), f2(hi1))), so a
 * line is cut into segments of B pixels: rec_scan_seg composes each
 * segment's function, rec_scan_carry runs along the segments of each line to
 * find the value entering each segment, and rec_scan_apply walks each
 * segment from its entering value and writes the raised pixels. Values read
 * from other lines may be stale or fresh: every value is a lower bound of the
 * result, so the scans stay correct and the queue phase finishes the work.
 *
 * Work-item g handles line (g % nlines), segment (g / nlines), except along
 * x (axis 0) where neighbouring work-items take neighbouring segments of the
 * same row (segmajor = 1) so that their reads share cache lines.
 */
typedef struct scan_geo {
    uint p0;   /* linear index of scan position 0 of the line */
    int step;  /* linear step per scan position */
    int3 c0;   /* coordinates of scan position 0 */
    int3 dc;   /* coordinate step per scan position */
} scan_geo;

inline scan_geo scan_line(uint line, int w, int h, int d, int axis, int dir)
{
    scan_geo g;
    int len;
    if (axis == 0) {
        g.c0 = (int3)(0, (int)(line % (uint)h), (int)(line / (uint)h));
        g.dc = (int3)(dir, 0, 0);
        g.step = dir;
        len = w;
    } else if (axis == 1) {
        g.c0 = (int3)((int)(line % (uint)w), 0, (int)(line / (uint)w));
        g.dc = (int3)(0, dir, 0);
        g.step = dir * w;
        len = h;
    } else {
        g.c0 = (int3)((int)(line % (uint)w), (int)(line / (uint)w), 0);
        g.dc = (int3)(0, 0, dir);
        g.step = dir * w * h;
        len = d;
    }
    if (dir < 0) {
        if (axis == 0) g.c0.x = len - 1;
        else if (axis == 1) g.c0.y = len - 1;
        else g.c0.z = len - 1;
    }
    g.p0 = (uint)g.c0.x + (uint)w * ((uint)g.c0.y + (uint)h * (uint)g.c0.z);
    return g;
}

inline void scan_item(uint gid, uint nlines, uint nseg, int segmajor, uint *line, uint *seg)
{
    if (segmajor) {
        *line = gid / nseg;
        *seg = gid % nseg;
    } else {
        *line = gid % nlines;
        *seg = gid / nlines;
    }
}

inline uint scan_a(__global const uint *J, uint p, int3 c, int w, int h, int d,
                   __constant int4 *offs, int noffs)
{
    uint a = J[p];
    for (int k = 0; k < noffs; ++k) {
        int4 o = offs[k];
        if (inside(c, o, w, h, d)) a = max(a, J[p + (uint)o.w]);
    }
    return a;
}

__kernel void rec_scan_seg(__global const uint *J, __global const pix_t *I, uint inv, int w,
                           int h, int d, int axis, int dir, __constant int4 *offs, int noffs,
                           uint nlines, int len, int B, uint nseg, int segmajor,
                           __global uint2 *F)
{
    uint gid = (uint)get_global_id(0);
    if (gid >= nlines * nseg) return;
    uint line, seg;
    scan_item(gid, nlines, nseg, segmajor, &line, &seg);
    scan_geo g = scan_line(line, w, h, d, axis, dir);
    int t0 = (int)seg * B, t1 = min(t0 + B, len);
    uint lo = 0u, hi = 0xffffffffu;
    uint p = g.p0 + (uint)(t0 * g.step);
    int3 c = g.c0 + g.dc * t0;
    for (int t = t0; t < t1; ++t) {
        uint m = key_of(I[p]) ^ inv;
        uint a = min(scan_a(J, p, c, w, h, d, offs, noffs), m);
        lo = clamp(lo, a, m);
        hi = clamp(hi, a, m);
        p += (uint)g.step;
        c += g.dc;
    }
    F[(size_t)seg * nlines + line] = (uint2)(lo, hi);
}

/* Replaces each segment's function by the value entering it (in .x). */
__kernel void rec_scan_carry(uint nlines, uint nseg, __global uint2 *F)
{
    uint line = (uint)get_global_id(0);
    if (line >= nlines) return;
    uint x = 0u;
    for (uint s = 0; s < nseg; ++s) {
        size_t i = (size_t)s * nlines + line;
        uint2 f = F[i];
        F[i] = (uint2)(x, 0u);
        x = clamp(x, f.x, f.y);
    }
}

__kernel void rec_scan_apply(__global uint *J, __global const pix_t *I, uint inv, int w, int h,
                             int d, int axis, int dir, __constant int4 *offs, int noffs,
                             uint nlines, int len, int B, uint nseg, int segmajor,
                             __global const uint2 *F)
{
    uint gid = (uint)get_global_id(0);
    if (gid >= nlines * nseg) return;
    uint line, seg;
    scan_item(gid, nlines, nseg, segmajor, &line, &seg);
    scan_geo g = scan_line(line, w, h, d, axis, dir);
    int t0 = (int)seg * B, t1 = min(t0 + B, len);
    uint v = F[(size_t)seg * nlines + line].x;
    uint p = g.p0 + (uint)(t0 * g.step);
    int3 c = g.c0 + g.dc * t0;
    for (int t = t0; t < t1; ++t) {
        uint m = key_of(I[p]) ^ inv;
        uint cur = J[p];
        if (cur < m) {
            v = min(m, max(max(v, cur), scan_a(J, p, c, w, h, d, offs, noffs)));
            if (v != cur) J[p] = v;
        } else {
            v = cur; /* cur == m: the pixel is at its bound */
        }
        p += (uint)g.step;
        c += g.dc;
    }
}

/* Append every pixel that can raise a neighbour q (J(q) < J(p), J(q) < I(q))
 * to list (capacity cap); counters[0] counts them, counters[1] flags overflow. */
__kernel void rec_seed(__global const uint *J, __global const pix_t *I, uint inv, int w, int h,
                       int d, __constant int4 *offs, int noffs, uint n, __global uint *list,
                       uint cap, __global volatile uint *counters, __local uint *scan)
{
    __local uint base;
    uint p = (uint)get_global_id(0);
    uint flag = 0;
    if (p < n) {
        uint jp = J[p];
        int3 c = coords_of(p, w, h);
        for (int k = 0; k < noffs; ++k) {
            int4 o = offs[k];
            if (!inside(c, o, w, h, d)) continue;
            uint q = p + (uint)o.w;
            uint jq = J[q];
            if (jq < jp && jq < (key_of(I[q]) ^ inv)) flag = 1;
        }
    }
    /* no early exits around the barriers: PoCL needs every work-item to
     * follow the same path through them */
    uint off = wg_scan_excl(flag, scan);
    uint total = scan[get_local_size(0)];
    if (get_local_id(0) == 0 && total > 0) base = atomic_add(&counters[0], total);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (flag) {
        uint pos = base + off;
        if (pos < cap)
            list[pos] = p;
        else
            counters[1] = 1u;
    }
}

/*
 * Queue phase (MLQ_GROUP_ROUNDS, mlqueue.cl): each listed pixel p raises its neighbours with
 * atomic_max, and every neighbour it raised is queued.
 */
#define REC_VISIT(p)                                                                                   \
    do {                                                                                               \
        const uint p_ = (p);                                                                           \
        const uint v = Jv[p_]; /* coherent read: p may have been raised by another group */            \
        const int3 c = coords_of(p_, w, h);                                                            \
        for (int k = 0; k < noffs; ++k) {                                                              \
            const int4 o = offs[k];                                                                    \
            if (!inside(c, o, w, h, d)) continue;                                                      \
            const uint q = p_ + (uint)o.w;                                                             \
            const uint jq = J[q]; /* a stale value is lower: only a filter */                          \
            if (jq >= v) continue;                                                                     \
            const uint iq = key_of(I[q]) ^ inv;                                                        \
            if (jq >= iq) continue;                                                                    \
            const uint nv = min(v, iq);                                                                \
            if (atomic_max(&J[q], nv) < nv) MLQ_QUEUE(q);                                              \
        }                                                                                              \
    } while (0)

__kernel void rec_queue(__global uint *J, __global const pix_t *I, uint inv, int w, int h, int d,
                        __constant int4 *offs, int noffs, __global const uint *seeds,
                        uint nseeds, __global uint *gq, uint cap, __global volatile uint *counters,
                        __global uint *gstats, __local uint *bq, uint bq_cap, __local uint *scan,
                        __local uint *tq, uint K, int variant, uint leave_rounds)
{
    __global volatile uint *Jv = (__global volatile uint *)J;
    MLQ_GROUP_ROUNDS(REC_VISIT)
}

/*
 * Megapixel (IWPP-MP) reconstruction. The image is cut into tiles of
 * TX x TY x TZ pixels (32 x 32 in 2D). A work-group takes a tile off a global
 * queue, copies it with a one-pixel halo into local memory (J and the keyed
 * mask; pixels outside the image get key 0 for both, so they neither raise
 * nor are raised), sweeps it along every axis in both directions until a
 * full round of sweeps changes nothing, writes the raised pixels back with
 * atomic_max and queues every neighbour tile that one of them can raise.
 *
 * The queue is a ring of qmask + 1 slots (a power of two, at least twice the
 * number of tiles); a tile is in it at most once (inq[t] is set while it
 * waits), so it never fills. ctrl: [0] head, [1] tail, [2] pending = tiles
 * queued or being processed (a work-group stops once it reads 0: nothing is
 * left and nothing can be queued any more), [3] tiles processed, [4] sweep
 * rounds. Work-groups only ever wait for groups that are running (a claimed
 * slot being written, or a pending tile being processed), so the loop needs
 * no guarantee that all groups are resident at once.
 *
 * All control flow around barriers is uniform: the tile id is broadcast
 * through local memory and every work-item runs the same loops.
 */
#define MP_EMPTY 0xffffffffu
#define MP_DONE 0xfffffffeu

__kernel void mp_init(__global uint *slots, __global uint *inq, uint ntiles, uint qcap)
{
    uint i = (uint)get_global_id(0);
    if (i < qcap) slots[i] = i < ntiles ? i : MP_EMPTY;
    if (i < ntiles) inq[i] = 1u;
}

inline uint mp_pop(__global volatile uint *slots, uint qmask, __global volatile uint *ctrl)
{
    for (;;) {
        uint h = ctrl[0];
        uint t = ctrl[1];
        if ((int)(t - h) > 0) {
            if (atomic_cmpxchg(&ctrl[0], h, h + 1u) == h) {
                uint v;
                do {
                    v = atomic_xchg(&slots[h & qmask], MP_EMPTY);
                } while (v == MP_EMPTY);
                return v;
            }
        } else if (atomic_add(&ctrl[2], 0u) == 0u) {
            return MP_DONE;
        }
    }
}

inline void mp_push(uint tile, __global volatile uint *slots, uint qmask,
                    __global volatile uint *inq, __global volatile uint *ctrl)
{
    if (atomic_xchg(&inq[tile], 1u) != 0u) return; /* already waiting */
    atomic_inc(&ctrl[2]);
    uint pos = atomic_inc(&ctrl[1]);
    /* the slot is free unless its previous occupant's consumer is still reading it */
    while (atomic_cmpxchg(&slots[pos & qmask], MP_EMPTY, tile) != MP_EMPTY)
        ;
}

/*
 * dims: TX, TY, TZ (tile), PX, PY (padded row and plane), zp (1 in 3D, 0 in 2D).
 * ntl: tiles along x, y, z. swmeta[s] = {axis, dir, first, count} into swoff
 * (the neighbours met before a pixel in that sweep, .w = local delta);
 * offs: the whole neighbourhood, .w = local delta.
 */
__kernel void mp_run(__global uint *J, __global const pix_t *I, uint inv, int w, int h, int d,
                     int4 dims, int zp, int4 ntl, __constant int4 *swmeta, int nsw,
                     __constant int4 *swoff, __constant int4 *offs, int noffs,
                     __global volatile uint *slots, uint qmask, __global volatile uint *inq,
                     __global volatile uint *ctrl, __local uint *lJ, __local uint *lM,
                     __local uchar *lch)
{
    __local uint ltile, lflag;
    const int TX = dims.x, TY = dims.y, TZ = dims.z, PX = TX + 2, PY = TY + 2;
    const int PZ = zp ? TZ + 2 : 1;
    const int npad = PX * PY * PZ, nin = TX * TY * TZ;
    const int lid = (int)get_local_id(0), L = (int)get_local_size(0);
    __global volatile uint *Jv = (__global volatile uint *)J;
    uint visits = 0, sweeps = 0;
    /* (every loop that holds a barrier tests its uniform condition at the top:
     * PoCL 3.1 mis-compiles a break between barriers) */
    if (lid == 0) {
        uint t = mp_pop(slots, qmask, ctrl);
        if (t != MP_DONE) atomic_xchg(&inq[t], 0u);
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        ltile = t;
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    uint tile = ltile;
    while (tile != MP_DONE) {
        const int tx = (int)(tile % (uint)ntl.x);
        const int ty = (int)((tile / (uint)ntl.x) % (uint)ntl.y);
        const int tz = (int)(tile / ((uint)ntl.x * (uint)ntl.y));
        const int ox = tx * TX - 1, oy = ty * TY - 1, oz = tz * TZ - zp;
        /* load the tile and its halo */
        for (int i = lid; i < npad; i += L) {
            int lx = i % PX, ly = (i / PX) % PY, lz = i / (PX * PY);
            int gx = ox + lx, gy = oy + ly, gz = oz + lz;
            uint jv = 0u, mv = 0u;
            if (gx >= 0 && gx < w && gy >= 0 && gy < h && gz >= 0 && gz < d) {
                uint g = (uint)gx + (uint)w * ((uint)gy + (uint)h * (uint)gz);
                jv = Jv[g];
                mv = key_of(I[g]) ^ inv;
            }
            lJ[i] = jv;
            lM[i] = mv;
        }
        for (int i = lid; i < nin; i += L) lch[i] = (uchar)0;
        barrier(CLK_LOCAL_MEM_FENCE);
        /* sweep until stable */
        uint again = 1u;
        while (again) {
            if (lid == 0) lflag = 0u;
            barrier(CLK_LOCAL_MEM_FENCE);
            uint any = 0u;
            for (int s = 0; s < nsw; ++s) {
                const int4 sm = swmeta[s];
                const int axis = sm.x, dir = sm.y, first = sm.z, cnt = sm.w;
                const int len = axis == 0 ? TX : (axis == 1 ? TY : TZ);
                const int la = axis == 0 ? TY : TX;
                const int nl = la * (axis == 2 ? TY : TZ);
                for (int t = 0; t < len; ++t) {
                    const int ca = dir > 0 ? t : len - 1 - t;
                    for (int li = lid; li < nl; li += L) {
                        int u = li % la, v2 = li / la, x, y, z;
                        if (axis == 0) {
                            x = ca; y = u; z = v2;
                        } else if (axis == 1) {
                            x = u; y = ca; z = v2;
                        } else {
                            x = u; y = v2; z = ca;
                        }
                        const int p = (x + 1) + PX * ((y + 1) + PY * (z + zp));
                        const uint m = lM[p], v = lJ[p];
                        if (v < m) {
                            uint best = v;
                            for (int k = 0; k < cnt; ++k) best = max(best, lJ[p + swoff[first + k].w]);
                            best = min(best, m);
                            if (best > v) {
                                lJ[p] = best;
                                lch[x + TX * (y + TY * z)] = (uchar)1;
                                any = 1u;
                            }
                        }
                    }
                    barrier(CLK_LOCAL_MEM_FENCE);
                }
            }
            if (any) lflag = 1u;
            barrier(CLK_LOCAL_MEM_FENCE);
            again = lflag;
            ++sweeps;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        /* write back the raised pixels */
        for (int i = lid; i < nin; i += L) {
            if (!lch[i]) continue;
            int x = i % TX, y = (i / TX) % TY, z = i / (TX * TY);
            int gx = ox + 1 + x, gy = oy + 1 + y, gz = oz + zp + z;
            uint g = (uint)gx + (uint)w * ((uint)gy + (uint)h * (uint)gz);
            atomic_max(&J[g], lJ[(x + 1) + PX * ((y + 1) + PY * (z + zp))]);
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        /* Which neighbour tiles can a raised border pixel raise? Each work-item
         * collects the directions (bit (dx+1) + 3 (dy+1) + 9 (dz+1)) for its
         * halo pixels and queues those tiles itself (queuing is idempotent). */
        uint needbits = 0u;
        for (int i = lid; i < npad; i += L) {
            int lx = i % PX, ly = (i / PX) % PY, lz = i / (PX * PY);
            int dx = lx == 0 ? -1 : (lx == PX - 1 ? 1 : 0);
            int dy = ly == 0 ? -1 : (ly == PY - 1 ? 1 : 0);
            int dz = zp ? (lz == 0 ? -1 : (lz == PZ - 1 ? 1 : 0)) : 0;
            if (dx == 0 && dy == 0 && dz == 0) continue; /* interior */
            const uint jq = lJ[i];
            if (jq >= lM[i]) continue; /* cannot be raised (or outside the image) */
            for (int k = 0; k < noffs; ++k) {
                int4 o = offs[k];
                int x = lx - 1 + o.x, y = ly - 1 + o.y, z = lz - zp + o.z;
                if (x < 0 || x >= TX || y < 0 || y >= TY || z < 0 || z >= TZ) continue;
                if (lch[x + TX * (y + TY * z)] && lJ[i + o.w] > jq) {
                    needbits |= 1u << ((dx + 1) + 3 * (dy + 1) + 9 * (dz + 1));
                    break;
                }
            }
        }
        if (needbits) mem_fence(CLK_GLOBAL_MEM_FENCE);
        for (int b = 0; b < 27; ++b) {
            if (!(needbits & (1u << b))) continue;
            int dx = b % 3 - 1, dy = (b / 3) % 3 - 1, dz = b / 9 - 1;
            uint nt = (uint)(tx + dx) + (uint)ntl.x * ((uint)(ty + dy) + (uint)ntl.y * (uint)(tz + dz));
            mp_push(nt, slots, qmask, inq, ctrl);
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        if (lid == 0) {
            ++visits;
            atomic_dec(&ctrl[2]);
            uint t = mp_pop(slots, qmask, ctrl);
            if (t != MP_DONE) atomic_xchg(&inq[t], 0u);
            mem_fence(CLK_GLOBAL_MEM_FENCE);
            ltile = t;
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        tile = ltile;
    }
    if (lid == 0) {
        atomic_add(&ctrl[3], visits);
        atomic_add(&ctrl[4], sweeps);
    }
}
