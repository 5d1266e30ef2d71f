/*
 * edt_colbands.cl - the exact EDT of a 2D image with unit spacing by column bands: the method
 * of cuda/edt_colbands.cuh, which says why it is exact and how the three passes share the work.
 * After pass X (edt_ln_x: each pixel's nearest background column, sx):
 *   edt_cb_hull   one work-item per (column, band of L rows): the band's sites as a lower hull
 *                 of the lifted points (p, p^2 + f), f = (x - sx)^2, a stack in E;
 *   edt_cb_merge  one work-item per (column, pair of groups of 2^l bands), every level l in
 *                 one launch: the bridge of the two envelopes (a suffix of the left one, a
 *                 prefix of the right one dropped), each step a binary search;
 *   edt_cb_colour one work-item per (column, segment of lc rows) of rows [y0, y1): the envelope
 *                 site nearest the segment's first row, then a walk down both.
 * E: entry j of band b of column x at E[((b * CB_CHUNKS(L) + j / 8) * w + x) * 8 + j % 8] (a
 * work-item's entries a 32-byte sector at a time); R[b * w + x] = lo | hi << 16, the band's
 * surviving entries. The caller keeps w^2 + h^2 < 2^31.
 */
#define CB_MAXK 64
#define CB_SECTOR 8
#define CB_WIN 16
#define CB_GROUP 64 /* work-items per group of edt_cb_hull (their windows) */
#define CB_AHEAD_X 4 /* sites the hull reads at once */
#define CB_CHUNKS(L) (((L) + CB_SECTOR - 1) / CB_SECTOR)

typedef struct {
    int p, c, f, Y;
} cb_pt;

inline __global uint *cb_ent(__global uint *E, int L, int w, int b, int j, int x)
{
    return E + ((((size_t)b * (size_t)CB_CHUNKS(L) + (size_t)(j / CB_SECTOR)) * (size_t)w + (size_t)x) * CB_SECTOR +
                (size_t)(j % CB_SECTOR));
}

inline cb_pt cb_unpack(uint e, int x)
{
    cb_pt q;
    q.p = (int)(e & 0xFFFFu), q.c = (int)(e >> 16), q.f = (x - q.c) * (x - q.c), q.Y = q.p * q.p + q.f;
    return q;
}

inline cb_pt cb_at(__global uint *E, int L, int w, int b, int j, int x) { return cb_unpack(*cb_ent(E, L, w, b, j, x), x); }

inline int cb_lo(__global const uint *R, int w, int b, int x) { return (int)(R[(size_t)b * (size_t)w + (size_t)x] & 0xFFFFu); }
inline int cb_hi(__global const uint *R, int w, int b, int x) { return (int)(R[(size_t)b * (size_t)w + (size_t)x] >> 16); }

/* b strictly below the segment from a to u (a.p < b.p < u.p) */
inline int cb_below(cb_pt a, cb_pt b, cb_pt u)
{
    return (long)(b.p - a.p) * ((long)u.Y - a.Y) > (long)(u.p - a.p) * ((long)b.Y - a.Y);
}

inline int cb_d2(cb_pt q, int y) { return q.f + (y - q.p) * (y - q.p); }

inline void cb_sector_out(__global uint *E, int L, int w, int b, int j0, int x, __local const uint *win)
{
    uint8 v;
    v.s0 = win[((j0 + 0) % CB_WIN) * CB_GROUP], v.s1 = win[((j0 + 1) % CB_WIN) * CB_GROUP];
    v.s2 = win[((j0 + 2) % CB_WIN) * CB_GROUP], v.s3 = win[((j0 + 3) % CB_WIN) * CB_GROUP];
    v.s4 = win[((j0 + 4) % CB_WIN) * CB_GROUP], v.s5 = win[((j0 + 5) % CB_WIN) * CB_GROUP];
    v.s6 = win[((j0 + 6) % CB_WIN) * CB_GROUP], v.s7 = win[((j0 + 7) % CB_WIN) * CB_GROUP];
    vstore8(v, 0, cb_ent(E, L, w, b, j0, x));
}

/* 1. cuda/edt_colbands.cuh's cb_hull: top two in registers, a window of CB_WIN in local memory,
 * whole sectors to and from E. */
__kernel void edt_cb_hull(__global const ushort *sx, __global uint *E, __global uint *R, int w, int h, int L, int K)
{
    __local uint wins[CB_WIN * CB_GROUP];
    __local uint *win = wins + get_local_id(0);
    for (size_t t = get_global_id(0); t < (size_t)w * (size_t)K; t += get_global_size(0)) {
        const int x = (int)(t % (size_t)w), b = (int)(t / (size_t)w);
        const int p0 = b * L, p1 = min(p0 + L, h);
        int depth = 0, wlo = 0;
        cb_pt top = {0, 0, 0, 0}, sec = top;
        for (int q0 = p0; q0 < p1; q0 += CB_AHEAD_X) {
          int cvs[CB_AHEAD_X]; /* loaded together (memory-level parallelism) */
          for (int i = 0; i < CB_AHEAD_X; ++i) cvs[i] = q0 + i < p1 ? sx[(size_t)(q0 + i) * (size_t)w + (size_t)x] : LN_NONE;
          for (int i = 0; i < CB_AHEAD_X; ++i) {
            const int cv = cvs[i], p = q0 + i;
            if (cv == LN_NONE) continue;
            cb_pt u;
            u.p = p, u.c = cv, u.f = (x - cv) * (x - cv), u.Y = p * p + u.f;
            while (depth >= 2 && !cb_below(sec, top, u)) {
                top = sec;
                if (--depth >= 2) {
                    const int j = depth - 2;
                    if (j < wlo) { /* the sector under the window back */
                        wlo -= CB_SECTOR;
                        const uint8 v = vload8(0, cb_ent(E, L, w, b, wlo, x));
                        win[((wlo + 0) % CB_WIN) * CB_GROUP] = v.s0, win[((wlo + 1) % CB_WIN) * CB_GROUP] = v.s1;
                        win[((wlo + 2) % CB_WIN) * CB_GROUP] = v.s2, win[((wlo + 3) % CB_WIN) * CB_GROUP] = v.s3;
                        win[((wlo + 4) % CB_WIN) * CB_GROUP] = v.s4, win[((wlo + 5) % CB_WIN) * CB_GROUP] = v.s5;
                        win[((wlo + 6) % CB_WIN) * CB_GROUP] = v.s6, win[((wlo + 7) % CB_WIN) * CB_GROUP] = v.s7;
                    }
                    sec = cb_unpack(win[(j % CB_WIN) * CB_GROUP], x);
                }
            }
            if (depth - wlo == CB_WIN) { /* the window's oldest sector to E */
                cb_sector_out(E, L, w, b, wlo, x, win);
                wlo += CB_SECTOR;
            }
            win[(depth % CB_WIN) * CB_GROUP] = (uint)p | (uint)cv << 16;
            if (depth >= 1) sec = top;
            top = u;
            ++depth;
          }
        }
        for (int j0 = wlo; j0 < depth; j0 += CB_SECTOR) cb_sector_out(E, L, w, b, j0, x, win);
        R[(size_t)b * (size_t)w + (size_t)x] = (uint)depth << 16;
    }
}

/* 2. cuda/edt_colbands.cuh's cb_merge_pair: pair i of level l of column x. */
inline void cb_merge_pair(__global uint *E, __global uint *R, int w, int L, int K, int l, int x, int i)
{
    const int b0 = i << (l + 1), bm = b0 + (1 << l), b1 = min(bm + (1 << l), K);
    if (bm >= K) return;
    int lo[CB_MAXK], hi[CB_MAXK];
    for (int b = b0; b < b1; ++b) lo[b - b0] = cb_lo(R, w, b, x), hi[b - b0] = cb_hi(R, w, b, x);
    const int n = b1 - b0;
    int ca = bm - b0, cb = bm - b0;
    while (--ca >= 0 && hi[ca] <= lo[ca]) {
    }
    while (cb < n && hi[cb] <= lo[cb]) ++cb;
    if (ca < 0 || cb >= n) return;
    int ia = hi[ca] - 1, jb = lo[cb], moved = 1;
    while (moved) {
        moved = 0;
        const cb_pt B = cb_at(E, L, w, b0 + cb, jb, x);
        for (;;) { /* the left part's tail that B hides */
            const int first = lo[ca];
            int pc = ca;
            while (--pc >= 0 && hi[pc] <= lo[pc]) {
            }
            if (ia == first && pc < 0) break;
            const cb_pt A = cb_at(E, L, w, b0 + ca, ia, x);
            const cb_pt P = ia > first ? cb_at(E, L, w, b0 + ca, ia - 1, x) : cb_at(E, L, w, b0 + pc, hi[pc] - 1, x);
            if (cb_below(P, A, B)) break;
            moved = 1;
            if (ia == first ||
                (pc >= 0 && !cb_below(cb_at(E, L, w, b0 + pc, hi[pc] - 1, x), cb_at(E, L, w, b0 + ca, first, x), B))) {
                hi[ca] = lo[ca];
                ca = pc, ia = hi[ca] - 1;
                continue;
            }
            int ok = first, bad = ia;
            while (bad - ok > 1) {
                const int m = (ok + bad) >> 1;
                if (cb_below(cb_at(E, L, w, b0 + ca, m - 1, x), cb_at(E, L, w, b0 + ca, m, x), B))
                    ok = m;
                else
                    bad = m;
            }
            ia = ok;
            break;
        }
        const cb_pt A = cb_at(E, L, w, b0 + ca, ia, x);
        for (;;) { /* the right part's head that A hides */
            const int last = hi[cb] - 1;
            int nb = cb;
            while (++nb < n && hi[nb] <= lo[nb]) {
            }
            if (jb == last && nb >= n) break;
            const cb_pt Bj = cb_at(E, L, w, b0 + cb, jb, x);
            const cb_pt N = jb < last ? cb_at(E, L, w, b0 + cb, jb + 1, x) : cb_at(E, L, w, b0 + nb, lo[nb], x);
            if (cb_below(A, Bj, N)) break;
            moved = 1;
            if (jb == last ||
                (nb < n && !cb_below(A, cb_at(E, L, w, b0 + cb, last, x), cb_at(E, L, w, b0 + nb, lo[nb], x)))) {
                lo[cb] = hi[cb];
                cb = nb, jb = lo[cb];
                continue;
            }
            int ok = jb, bad = last;
            while (bad - ok > 1) {
                const int m = (ok + bad) >> 1;
                if (cb_below(A, cb_at(E, L, w, b0 + cb, m, x), cb_at(E, L, w, b0 + cb, m + 1, x)))
                    bad = m;
                else
                    ok = m;
            }
            jb = bad;
            break;
        }
    }
    hi[ca] = ia + 1;
    lo[cb] = jb;
    for (int b = b0; b < b1; ++b) R[(size_t)b * (size_t)w + (size_t)x] = (uint)lo[b - b0] | (uint)hi[b - b0] << 16;
}

/* All levels of the merge tree in one launch: a group takes CB_MCOLS neighbouring columns, its
 * work-items the pairs of a level (32 slots: K <= 64), a barrier between levels (a level reads
 * the ranges R the level before wrote, in the same column). Five launches fewer than one a
 * level: on NVIDIA's OpenCL each launch of these short kernels cost about 10 us. */
#define CB_MCOLS 8
#define CB_MGROUP 256 /* CB_MCOLS columns x 32 pair slots */
__kernel void edt_cb_merge(__global uint *E, __global uint *R, int w, int L, int K)
{
    const int li = (int)get_local_id(0), slots = (int)get_local_size(0) / CB_MCOLS;
    const int x = (int)get_group_id(0) * CB_MCOLS + li % CB_MCOLS, slot = li / CB_MCOLS;
    for (int l = 0; (1 << l) < K; ++l) {
        const int pairs = ((K - 1) >> (l + 1)) + 1;
        if (x < w)
            for (int i = slot; i < pairs; i += slots) cb_merge_pair(E, R, w, L, K, l, x, i);
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
}

inline int cb_next_band(__global const uint *R, int w, int K, int b, int x)
{
    while (++b < K && cb_hi(R, w, b, x) <= cb_lo(R, w, b, x)) {
    }
    return b < K ? b : -1;
}

inline int cb_prev_band(__global const uint *R, int w, int b, int x)
{
    while (--b >= 0 && cb_hi(R, w, b, x) <= cb_lo(R, w, b, x)) {
    }
    return b;
}

inline void cb_put(__global float *dist, __global long *near, int want, int w, int x, int y, cb_pt q)
{
    const size_t o = (size_t)y * (size_t)w + (size_t)x;
    dist[o] = ln_dist(cb_d2(q, y));
    if (want) near[o] = (long)q.c + (long)w * (long)q.p;
}

/* 3. cuda/edt_colbands.cuh's cb_colour for every (column, segment of lc rows) of rows [y0, y1). */
__kernel void edt_cb_colour(__global uint *E, __global const uint *R, __global float *dist, __global long *near,
                            int want, int w, int h, int L, int K, int lc, int y0, int y1)
{
    const int s0 = y0 / lc, segs = (y1 + lc - 1) / lc - s0;
    for (size_t t = get_global_id(0); t < (size_t)w * (size_t)segs; t += get_global_size(0)) {
        const int x = (int)(t % (size_t)w), sg = s0 + (int)(t / (size_t)w);
        const int ya = max(sg * lc, y0), yb = min(sg * lc + lc, y1);
        int c = min(ya / L, K - 1);
        if (cb_hi(R, w, c, x) <= cb_lo(R, w, c, x)) {
            const int pc = cb_prev_band(R, w, c, x);
            c = pc >= 0 ? pc : cb_next_band(R, w, K, c, x);
        }
        if (c < 0) {
            for (int y = ya; y < yb; ++y) {
                dist[(size_t)y * (size_t)w + (size_t)x] = INFINITY;
                if (want) near[(size_t)y * (size_t)w + (size_t)x] = -1;
            }
            continue;
        }
        for (;;) { /* forward while the entry after band c's last is as near at ya */
            const int nc = cb_next_band(R, w, K, c, x);
            if (nc < 0 || cb_d2(cb_at(E, L, w, nc, cb_lo(R, w, nc, x), x), ya) >
                              cb_d2(cb_at(E, L, w, c, cb_hi(R, w, c, x) - 1, x), ya))
                break;
            c = nc;
        }
        for (;;) { /* backward while the band before is not beyond */
            const int pc = cb_prev_band(R, w, c, x);
            if (pc < 0 || cb_d2(cb_at(E, L, w, c, cb_lo(R, w, c, x), x), ya) <=
                              cb_d2(cb_at(E, L, w, pc, cb_hi(R, w, pc, x) - 1, x), ya))
                break;
            c = pc;
        }
        int lft = cb_lo(R, w, c, x), rgt = cb_hi(R, w, c, x) - 1;
        while (lft < rgt) {
            const int m = (lft + rgt) >> 1;
            if (cb_d2(cb_at(E, L, w, c, m + 1, x), ya) <= cb_d2(cb_at(E, L, w, c, m, x), ya))
                lft = m + 1;
            else
                rgt = m;
        }
        /* the walk: cur, then the entries after it read to the end of their sector at once
         * (q[0 .. qn), then entries [ni, chi) of band c, then the later bands; q shifts, so that it
         * stays in registers) */
        cb_pt cur = cb_at(E, L, w, c, lft, x);
        uint q[CB_SECTOR];
        int ni = lft + 1, chi = cb_hi(R, w, c, x), qn = 0;
        for (int i = 0; i < CB_SECTOR; ++i) q[i] = 0u;
        for (int y = ya; y < yb; ++y) {
            for (;;) {
                if (qn == 0) {
                    if (ni >= chi) {
                        if (c < 0 || (c = cb_next_band(R, w, K, c, x)) < 0) break;
                        ni = cb_lo(R, w, c, x), chi = cb_hi(R, w, c, x);
                    }
                    const int end = min(ni - ni % CB_SECTOR + CB_SECTOR, chi);
                    __global const uint *src = cb_ent(E, L, w, c, ni, x);
                    qn = end - ni;
                    for (int i = 0; i < CB_SECTOR; ++i)
                        if (i < qn) q[i] = src[i];
                    ni = end;
                }
                const cb_pt nx = cb_unpack(q[0], x);
                if (cb_d2(nx, y) > cb_d2(cur, y)) break;
                cur = nx;
                for (int i = 0; i + 1 < CB_SECTOR; ++i) q[i] = q[i + 1];
                --qn;
            }
            cb_put(dist, near, want, w, x, y, cur);
        }
    }
}
