/*
 * edt_colbands.cuh - the exact EDT of a 2D image with unit spacing by column bands (issue 12):
 * pass X along the rows (edt_x1d: each pixel's nearest background column, sx), then along each
 * column the lower envelope of the parabolas f(p) + (y - p)^2, f(p) = (x - sx(p))^2, cut into
 * K bands of L rows so that W * K threads share the work (one thread per column, 8192 of them at
 * 8192^2, left the GPU idle: 2.88 ms against 2.34 for the merged rows):
 *   1. cb_hull, one thread per (column, band): the band's sites as a lower convex hull of the
 *      lifted points (p, p^2 + f) (a site on no hull is nearest nowhere), a stack kept in E;
 *   2. cb_merge_pair, one thread per (column, pair of groups of bands), a tree of log2(K) levels:
 *      joining two hulls separated along the column keeps a prefix of the left one and a suffix
 *      of the right one, found by the bridge walk whose steps are binary searches (hidden-ness is
 *      monotone along a convex chain), a whole band dropped with one test: O(bands + log L);
 *   3. cb_colour, one thread per (column, segment of LC rows): the envelope site nearest the
 *      segment's first row (a search over bands, then inside one), then a walk down the segment
 *      and the envelope together; d2 = f + (y - p)^2 in integers, the distance cb_dist(d2).
 * Exact as the lines path (edt_lines.cuh): every squared distance is an integer, so any
 * minimiser gives the CPU's distance. The caller keeps w^2 + h^2 < 2^31, so every p^2 + f fits
 * an int; cross products are 64-bit. The threads of a warp take consecutive columns: sx, R and
 * dist are laid out [row][column], so lanes at the same row touch consecutive words; E by sectors
 * of each thread (below).
 * Kept in a header so that tests/test_edt_envelope.cpp runs this very code on the host.
 */
#ifndef IWPP_EDT_COLBANDS_CUH
#define IWPP_EDT_COLBANDS_CUH

#include "edt_lines.cuh"

#define CB_MAXK 64 /* bands of a column at most (the merge keeps a group's ranges in registers) */
#define CB_AHEAD 8 /* entries the colour walk reads at once: a sector of E */

/* A site of column x: row p, column c (sx), f = (x - c)^2, Y = p^2 + f (the lifted point). */
struct cb_pt {
    int p, c, f, Y;
};

/* The bands of one image: E holds band b's hull of column x, entry j in sectors of 8 (32 bytes):
 * E[((b * L8 + j / 8) * w + x) * 8 + j % 8], L8 = CB_CHUNKS(L), so that a thread moves its
 * entries a whole sector at a time however far its neighbours' depths are from its own (in
 * [band][row][column] order, lanes at different depths touch 4 bytes of 32 each: the hull took
 * 0.67-0.88 ms at 8192^2 on random and checkerboard pictures, bound by the L2's throughput);
 * R[b * w + x] = lo | hi << 16, the band's entries that survive (after the merge). */
#define CB_SECTOR 8
#define CB_CHUNKS(L) (((L) + CB_SECTOR - 1) / CB_SECTOR)
struct cb_grid {
    const uint16_t *sx;
    uint32_t *E, *R;
    int64_t w;
    int h, L, K;
    LN_FN uint32_t *ent(int b, int j, int x) const
    {
        return E + (((int64_t)b * CB_CHUNKS(L) + j / CB_SECTOR) * w + x) * CB_SECTOR + j % CB_SECTOR;
    }
    LN_FN cb_pt at(int b, int j, int x) const
    {
        const uint32_t e = *ent(b, j, x);
        cb_pt q;
        q.p = (int)(e & 0xFFFF), q.c = (int)(e >> 16), q.f = (x - q.c) * (x - q.c), q.Y = q.p * q.p + q.f;
        return q;
    }
    LN_FN int lo(int b, int x) const { return (int)(R[(int64_t)b * w + x] & 0xFFFF); }
    LN_FN int hi(int b, int x) const { return (int)(R[(int64_t)b * w + x] >> 16); }
};

/* One sector of E (32-byte aligned) in or out: two 16-byte moves on the GPU. */
LN_FN void cb_load8(const uint32_t *src, uint32_t *v)
{
#ifdef LN_HOST
    for (int k = 0; k < CB_SECTOR; ++k) v[k] = src[k];
#else
    const uint4 a = ((const uint4 *)src)[0], c = ((const uint4 *)src)[1];
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = c.x, v[5] = c.y, v[6] = c.z, v[7] = c.w;
#endif
}
LN_FN void cb_store8(uint32_t *dst, const uint32_t *v)
{
#ifdef LN_HOST
    for (int k = 0; k < CB_SECTOR; ++k) dst[k] = v[k];
#else
    ((uint4 *)dst)[0] = make_uint4(v[0], v[1], v[2], v[3]);
    ((uint4 *)dst)[1] = make_uint4(v[4], v[5], v[6], v[7]);
#endif
}

/* b strictly below the segment from a to u (a.p < b.p < u.p): b is on the hull of the three */
LN_FN bool cb_below(const cb_pt &a, const cb_pt &b, const cb_pt &u)
{
    return (long long)(b.p - a.p) * ((long long)u.Y - a.Y) > (long long)(u.p - a.p) * ((long long)b.Y - a.Y);
}

/* the squared distance from (x, y) to the site q */
LN_FN int cb_d2(const cb_pt &q, int y) { return q.f + (y - q.p) * (y - q.p); }

/* 1. The hull of band b of column x: a stack whose top two stay in registers and whose newest
 * entries stay in a window of CB_WIN (shared memory on the GPU: entry j at win[(j % CB_WIN) *
 * ws]); a full window sends its oldest sector to E, and a pop below the window reads the sector
 * under it back. On random pictures most sites are pushed and popped again within the window and
 * never reach global memory; on checkerboards the runs of pops past the window (a run of sites
 * off the parabola at each square) wait on memory once a sector. */
#define CB_WIN (2 * CB_SECTOR)
LN_FN void cb_sector_out(const cb_grid &G, int x, int b, int j0, const uint32_t *win, int ws)
{
    uint32_t v[CB_SECTOR];
LN_UNROLL
    for (int k = 0; k < CB_SECTOR; ++k) v[k] = win[((j0 + k) % CB_WIN) * ws];
    cb_store8(G.ent(b, j0, x), v);
}
LN_FN void cb_hull(const cb_grid &G, int x, int b, uint32_t *win, int ws)
{
    const int p0 = b * G.L, p1 = p0 + G.L < G.h ? p0 + G.L : G.h;
    int depth = 0, wlo = 0; /* entries [0, wlo) are in E, [wlo, depth) in the window; wlo % 8 == 0 */
    cb_pt top, sec;
    top.p = top.c = top.f = top.Y = 0, sec = top;
    for (int q0 = p0; q0 < p1; q0 += LN_AHEAD) {
        int cv[LN_AHEAD];
LN_UNROLL
        for (int i = 0; i < LN_AHEAD; ++i) cv[i] = q0 + i < p1 ? (int)G.sx[(int64_t)(q0 + i) * G.w + x] : LN_NONE;
LN_UNROLL
        for (int i = 0; i < LN_AHEAD; ++i) {
            if (cv[i] == LN_NONE) continue;
            cb_pt u;
            u.p = q0 + i, u.c = cv[i], u.f = (x - u.c) * (x - u.c), u.Y = u.p * u.p + u.f;
            while (depth >= 2 && !cb_below(sec, top, u)) {
                top = sec;
                if (--depth >= 2) {
                    const int j = depth - 2;
                    if (j < wlo) { /* j is the last entry of the sector under the window */
                        wlo -= CB_SECTOR;
                        uint32_t v[CB_SECTOR];
                        cb_load8(G.ent(b, wlo, x), v);
LN_UNROLL
                        for (int k = 0; k < CB_SECTOR; ++k) win[((wlo + k) % CB_WIN) * ws] = v[k];
                    }
                    const uint32_t e = win[(j % CB_WIN) * ws];
                    sec.p = (int)(e & 0xFFFF), sec.c = (int)(e >> 16), sec.f = (x - sec.c) * (x - sec.c);
                    sec.Y = sec.p * sec.p + sec.f;
                }
            }
            if (depth - wlo == CB_WIN) { /* the window is full: its oldest sector to E */
                cb_sector_out(G, x, b, wlo, win, ws);
                wlo += CB_SECTOR;
            }
            win[(depth % CB_WIN) * ws] = (uint32_t)u.p | (uint32_t)u.c << 16;
            if (depth >= 1) sec = top;
            top = u;
            ++depth;
        }
    }
    for (int j0 = wlo; j0 < depth; j0 += CB_SECTOR) cb_sector_out(G, x, b, j0, win, ws); /* past depth: unread */
    G.R[(int64_t)b * G.w + x] = (uint32_t)depth << 16;
}

/* 2. The bands of column x joined in a tree: cb_merge_pair joins bands [b0, bm), already one
 * envelope, with [bm, b1), another; every pair of a level at once. The left part (its last
 * survivor A: entry ia of band ca) loses the entries that the right part's first survivor B
 * (entry jb of band cb) hides, a suffix; the right part loses the entries that A hides, a prefix;
 * until neither moves. Each is a binary search (hidden-ness is monotone along a convex chain)
 * after whole bands dropped with one test each. Ranges in lo/hi, indexed from b0. */
LN_FN void cb_merge_pair(const cb_grid &G, int x, int b0, int bm, int b1)
{
    int lo[CB_MAXK], hi[CB_MAXK];
    for (int b = b0; b < b1; ++b) lo[b - b0] = G.lo(b, x), hi[b - b0] = G.hi(b, x);
    int ca = bm - b0, cb = bm - b0;
    const int n = b1 - b0;
    while (--ca >= 0 && hi[ca] <= lo[ca]) {
    }
    while (cb < n && hi[cb] <= lo[cb]) ++cb;
    if (ca < 0 || cb >= n) return;
    int ia = hi[ca] - 1, jb = lo[cb];
    for (bool moved = true; moved;) {
        moved = false;
        const cb_pt B = G.at(b0 + cb, jb, x);
        /* the left part's tail that B hides: hidden(i) = entry i not below (entry i-1, B), true on
         * a suffix; the first entry stays */
        for (;;) {
            const int first = lo[ca];
            int pc = ca; /* the band before ca with entries */
            while (--pc >= 0 && hi[pc] <= lo[pc]) {
            }
            if (ia == first && pc < 0) break;
            const cb_pt A = G.at(b0 + ca, ia, x);
            if (cb_below(ia > first ? G.at(b0 + ca, ia - 1, x) : G.at(b0 + pc, hi[pc] - 1, x), A, B)) break;
            moved = true;
            if (ia == first || (pc >= 0 && !cb_below(G.at(b0 + pc, hi[pc] - 1, x), G.at(b0 + ca, first, x), B))) {
                hi[ca] = lo[ca]; /* the band's whole range is hidden; pc has entries */
                ca = pc, ia = hi[ca] - 1;
                continue;
            }
            int ok = first, bad = ia; /* entry `first` is not hidden (or has nothing before it) */
            while (bad - ok > 1) {
                const int m = (ok + bad) >> 1;
                if (cb_below(G.at(b0 + ca, m - 1, x), G.at(b0 + ca, m, x), B))
                    ok = m;
                else
                    bad = m;
            }
            ia = ok;
            break;
        }
        /* the right part's head that A hides: adv(j) = entry j not below (A, entry j+1), true on
         * a prefix; the last entry stays */
        const cb_pt A = G.at(b0 + ca, ia, x);
        for (;;) {
            const int last = hi[cb] - 1;
            int nb = cb; /* the band after cb with entries */
            while (++nb < n && hi[nb] <= lo[nb]) {
            }
            if (jb == last && nb >= n) break;
            const cb_pt Bj = G.at(b0 + cb, jb, x);
            if (cb_below(A, Bj, jb < last ? G.at(b0 + cb, jb + 1, x) : G.at(b0 + nb, lo[nb], x))) break;
            moved = true;
            if (jb == last || (nb < n && !cb_below(A, G.at(b0 + cb, last, x), G.at(b0 + nb, lo[nb], x)))) {
                lo[cb] = hi[cb]; /* the band's whole range is hidden; nb has entries */
                cb = nb, jb = lo[cb];
                continue;
            }
            int ok = jb, bad = last; /* entry `last` is not hidden (or has nothing after it) */
            while (bad - ok > 1) {
                const int m = (ok + bad) >> 1;
                if (cb_below(A, G.at(b0 + cb, m, x), G.at(b0 + cb, m + 1, x)))
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
    for (int b = b0; b < b1; ++b) G.R[(int64_t)b * G.w + x] = (uint32_t)lo[b - b0] | (uint32_t)hi[b - b0] << 16;
}

/* The pair of level l (groups of 2^l bands) that item i joins: false if it has no right part. */
LN_FN bool cb_pair(const cb_grid &G, int l, int i, int *b0, int *bm, int *b1)
{
    *b0 = i << (l + 1), *bm = *b0 + (1 << l), *b1 = *bm + (1 << l) < G.K ? *bm + (1 << l) : G.K;
    return *bm < G.K;
}

/* The next nonempty band after b, or -1 (after the merge, from R). */
LN_FN int cb_next_band(const cb_grid &G, int b, int x)
{
    while (++b < G.K && G.hi(b, x) <= G.lo(b, x)) {
    }
    return b < G.K ? b : -1;
}

/* 3. Rows [y0, y1) of column x: dist, nearest (may be NULL). OUT: put(y, site, d2), none(y). */
template <class OUT> LN_FN void cb_colour(const cb_grid &G, const OUT &out, int x, int y0, int y1)
{
    /* the envelope's band that holds the site nearest row y0: beyond(c) = the entry after band
     * c's last is at least as near at y0 (true on a prefix of the nonempty bands); start from the
     * band of row y0 */
    int c = y0 / G.L;
    if (c >= G.K) c = G.K - 1;
    if (G.hi(c, x) <= G.lo(c, x)) {
        int pc = c;
        while (--pc >= 0 && G.hi(pc, x) <= G.lo(pc, x)) {
        }
        c = pc >= 0 ? pc : cb_next_band(G, c, x);
    }
    if (c < 0) {
        for (int y = y0; y < y1; ++y) out.none(y);
        return;
    }
    for (;;) { /* forward while beyond(c) */
        const int nc = cb_next_band(G, c, x);
        if (nc < 0 || cb_d2(G.at(nc, G.lo(nc, x), x), y0) > cb_d2(G.at(c, G.hi(c, x) - 1, x), y0)) break;
        c = nc;
    }
    for (;;) { /* backward while the band before is not beyond */
        int pc = c;
        while (--pc >= 0 && G.hi(pc, x) <= G.lo(pc, x)) {
        }
        if (pc < 0 || cb_d2(G.at(c, G.lo(c, x), x), y0) <= cb_d2(G.at(pc, G.hi(pc, x) - 1, x), y0)) break;
        c = pc;
    }
    /* inside band c: the first entry that the next one does not beat at y0 */
    int l = G.lo(c, x), r = G.hi(c, x) - 1;
    while (l < r) {
        const int m = (l + r) >> 1;
        if (cb_d2(G.at(c, m + 1, x), y0) <= cb_d2(G.at(c, m, x), y0))
            l = m + 1;
        else
            r = m;
    }
    /* the walk: cur, then the entries after it, read to the end of their sector of E at once
     * (q[0 .. qn) next, then entries [ni, chi) of band c not yet read, then the later bands) */
    cb_pt cur = G.at(c, l, x);
    uint32_t q[CB_AHEAD];
LN_UNROLL
    for (int i = 0; i < CB_AHEAD; ++i) q[i] = 0u;
    int ni = l + 1, chi = G.hi(c, x), qn = 0;
    for (int y = y0; y < y1; ++y) {
        for (;;) {
            if (qn == 0) { /* refill from band c, or the next band with entries */
                if (ni >= chi) {
                    if (c < 0 || (c = cb_next_band(G, c, x)) < 0) break; /* no entry after cur */
                    ni = G.lo(c, x), chi = G.hi(c, x);
                }
                const int end = ni - ni % CB_SECTOR + CB_SECTOR < chi ? ni - ni % CB_SECTOR + CB_SECTOR : chi;
                const uint32_t *src = G.ent(c, ni, x);
                qn = end - ni;
LN_UNROLL
                for (int i = 0; i < CB_AHEAD; ++i)
                    if (i < qn) q[i] = src[i];
                ni = end;
            }
            cb_pt nx;
            nx.p = (int)(q[0] & 0xFFFF), nx.c = (int)(q[0] >> 16), nx.f = (x - nx.c) * (x - nx.c);
            if (nx.f + (y - nx.p) * (y - nx.p) > cb_d2(cur, y)) break;
            cur = nx;
LN_UNROLL
            for (int i = 0; i + 1 < CB_AHEAD; ++i) q[i] = q[i + 1];
            --qn;
        }
        out.put(y, cur.p, cur.c, cb_d2(cur, y));
    }
}

/* (float)sqrt((double)d2), the CPU's distance, for an integer d2 >= 0: below 2^24 the float
 * square root gives the same bits (d2 is exact in float, and the double square root never lands
 * on a midpoint between two floats: a midpoint m of [2^11, 2^12) is k 2^-13, so d2 - m^2, if not
 * 0, is at least 2^-26, more than the 2^-28 a double rounding to m would need; d2 = m^2 gives m
 * both ways). Single precision is what the colour pass spends its instructions on. */
LN_FN float cb_dist(int d2) { return d2 < (1 << 24) ? sqrtf((float)d2) : (float)sqrt((double)d2); }

/* cb_colour's output: the distances (and nearest indices) of column x. */
struct cb_out {
    float *dist;
    int64_t *nearest;
    int64_t w;
    int x;
    LN_FN void put(int y, int p, int c, int d2) const
    {
        const int64_t o = (int64_t)y * w + x;
        dist[o] = cb_dist(d2);
        if (nearest) nearest[o] = (int64_t)c + w * (int64_t)p;
    }
    LN_FN void none(int y) const
    {
        const int64_t o = (int64_t)y * w + x;
        dist[o] = INFINITY;
        if (nearest) nearest[o] = -1;
    }
};

#endif
