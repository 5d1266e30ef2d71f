/*
 * watershed_tile.cuh - the steps of watershed.cu's phases 2 and 3 (internal), host-runnable as
 * label_common.cuh's are (LB_HOST: one host thread runs every item of a phase in turn), so that
 * tests/test_label_tiles.cpp checks them on the host.
 *
 * Keys K = D << 32 | label, smallest first; KEY_NONE = unreached. A pixel p inside the mask, not
 * a marker, is SET (not lowered) to the key of the least candidate its reached neighbours q give
 * it: (in(p) > L(q) ? 0 : D(q) + 1, L(q), D(q), label(q)), only where max(L(q), in(p)) == L(p)
 * (ws_better: after a climb the flood that arrived first wins). A climb (D = 0) passes on only
 * the label, so a neighbour whose key falls to a smaller D with another label can raise p's key:
 * keeping the least key ever seen would keep stale labels and depend on the order of updates.
 * Set this way, the keys settle level by level and, on a level, by increasing D, to the one
 * solution of these equations (the priority flood's result).
 */
#ifndef IWPP_CUDA_WATERSHED_TILE_CUH
#define IWPP_CUDA_WATERSHED_TILE_CUH

#include "label_common.cuh"

#define WS_HALO 1800 /* tile + halo cells: 18 x 10 x 10 (3D), 34 x 34 (2D) */
#define KEY_NONE 0xFFFFFFFFFFFFFFFFull

#ifdef LB_HOST
inline unsigned long long key_load(const unsigned long long *p) { return *p; }
inline void key_store(unsigned long long *p, unsigned long long v) { *p = v; }
#else
/* Keys are read by other blocks while their owner writes them: relaxed 64-bit accesses (never torn). */
__device__ __forceinline__ unsigned long long key_load(const unsigned long long *p)
{
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void key_store(unsigned long long *p, unsigned long long v)
{
    asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
#endif

/* The key p gets from q (KEY_NONE: none): level must equal L(p); D restarts after a climb. */
template <typename T> LB_HD unsigned long long ws_candidate(unsigned long long kq, T lq, T ip, T lp)
{
    if (kq == KEY_NONE) return KEY_NONE;
    const T lev = lq > ip ? lq : ip;
    if (!(lev == lp)) return KEY_NONE;
    unsigned long long d = 0;
    if (!(ip > lq)) {
        d = (kq >> 32) + 1;
        if (d > 0xFFFFFFFEull) d = 0xFFFFFFFEull; /* only on plateaus of more than 2^32 steps */
    }
    return (d << 32) | (kq & 0xFFFFFFFFull);
}

/* Whether candidate key @p v, from a neighbour of level @p lq and key @p kq, beats @p best, from a
 * neighbour of level @p bl and key @p kb: candidates at p's level compare as (D, L_q, D_q,
 * label). A step on the plateau has D_q = D - 1 and L_q = L(p), so L_q and D_q only decide
 * between climbs (D = 0): the flood that arrived first wins, then the smaller label. */
template <typename T>
LB_HD bool ws_better(unsigned long long v, T lq, unsigned long long kq, unsigned long long best, T bl,
                     unsigned long long kb)
{
    if (best == KEY_NONE || (v >> 32) != (best >> 32)) return v < best;
    if (!(lq == bl)) return lq < bl;
    if ((kq >> 32) != (kb >> 32)) return (kq >> 32) < (kb >> 32);
    return v < best;
}

/* The faces of its tile that pixel (lx, ly, lz) touches, as bits (dz+1)*9 + (dy+1)*3 + (dx+1) of
 * the neighbouring tiles that hold it in their halo. */
LB_HD unsigned int ws_face_bits(const lb_tiling &t, int lx, int ly, int lz)
{
    const int fx = lx == 0 ? -1 : (lx == t.tx - 1 ? 1 : 0);
    const int fy = ly == 0 ? -1 : (ly == t.ty - 1 ? 1 : 0);
    const int fz = t.tz == 1 ? 0 : (lz == 0 ? -1 : (lz == t.tz - 1 ? 1 : 0));
    unsigned int bits = 0;
    for (int ez = 0; ez <= (fz != 0); ++ez)
        for (int ey = 0; ey <= (fy != 0); ++ey)
            for (int ex = 0; ex <= (fx != 0); ++ex) {
                if (!ex && !ey && !ez) continue;
                bits |= 1u << ((ez * fz + 1) * 9 + (ey * fy + 1) * 3 + (ex * fx + 1));
            }
    return bits;
}

/* Tile lists of phase 2. */
struct ws_lists {
    unsigned int *q[2];       /* two lists of tiles, ntiles entries each */
    unsigned int *cnt;        /* their lengths */
    unsigned int *stamp;      /* per tile: the round of the last list it was put on */
    unsigned long long *pops; /* tiles processed */
};

/* Put the tiles of @p bits around tile @p tile on list @p to, each at most once per @p stamp. */
LB_FN void ws_push(const ws_lists &w, const lb_tiling &t, int64_t tile, unsigned int bits, int to, unsigned int stamp)
{
    const int64_t tz = tile / (t.ntx * t.nty), r = tile - tz * t.ntx * t.nty, ty = r / t.ntx, tx = r - ty * t.ntx;
    for (int b = 0; b < 27; ++b) {
        if (!(bits & (1u << b))) continue;
        const int64_t nx = tx + b % 3 - 1, ny = ty + (b / 3) % 3 - 1, nz = tz + b / 9 - 1;
        if (nx < 0 || nx >= t.ntx || ny < 0 || ny >= t.nty || nz < 0 || nz >= t.ntz) continue;
        const unsigned int nt = (unsigned int)(nx + t.ntx * (ny + t.nty * nz));
        if (lb_atomic_max(&w.stamp[nt], stamp) < stamp) w.q[to][lb_atomic_add(&w.cnt[to], 1u)] = nt;
    }
}

/* Pixel i's key and "may change" flag; a marker also stamps (1) its tile and the tiles around it
 * that hold it in their halo: the first list. */
template <typename LabT>
LB_FN void ws_key_init(int64_t i, const LabT *mk, const uint8_t *mask, const geom &g, const lb_tiling &t,
                       unsigned long long *K, uint8_t *upd, unsigned int *stamp)
{
    const bool inside = !mask || mask[i] != 0;
    const LabT lab = mk[i];
    const bool marker = inside && lab != 0;
    K[i] = marker ? (unsigned long long)lab : KEY_NONE;
    upd[i] = inside && !marker;
    if (!marker) return;
    const int64_t x = i % g.w, r = i / g.w, y = r % g.h, z = r / g.h;
    const int64_t tx = x / t.tx, ty = y / t.ty, tz = z / t.tz;
    const unsigned int bits =
        ws_face_bits(t, (int)(x - tx * t.tx), (int)(y - ty * t.ty), (int)(z - tz * t.tz)) | (1u << 13); /* 13: itself */
    for (int b = 0; b < 27; ++b) {
        if (!(bits & (1u << b))) continue;
        const int64_t nx = tx + b % 3 - 1, ny = ty + (b / 3) % 3 - 1, nz = tz + b / 9 - 1;
        if (nx < 0 || nx >= t.ntx || ny < 0 || ny >= t.nty || nz < 0 || nz >= t.ntz) continue;
        stamp[nx + t.ntx * (ny + t.nty * nz)] = 1u; /* the same value from every writer */
    }
}

/* Shared memory of one tile run: keys and levels of the tile and its halo; per own pixel the
 * next key, its in value, its halo cell and flags (1: may change, 2: changed in this run); per
 * cell two "a neighbour changed" flags (this step's and the next's). */
template <typename T> struct ws_smem {
    unsigned long long sk[WS_HALO];
    unsigned long long nk[LB_TILE];
    T sl[WS_HALO];
    T ip[LB_TILE];
    short cell[LB_TILE];
    unsigned char fl[LB_TILE];
    unsigned char dirty[2][WS_HALO];
    unsigned int dirs;
};

struct ws_halo {
    int sx, sy, sz, zo; /* cell (hx, hy, hz), hx in [-1, tx] etc. (hz = 0 only in 2D) */
};

LB_HD ws_halo ws_make_halo(const lb_tiling &t)
{
    ws_halo h;
    h.sx = t.tx + 2;
    h.sy = t.ty + 2;
    h.sz = t.tz > 1 ? t.tz + 2 : 1;
    h.zo = t.tz > 1 ? 1 : 0;
    return h;
}

/* Load the tile's keys and levels with its halo (cells beyond the image: unreached), and its own
 * pixels' in values and flags. @p Kr: where keys are read (watershed.cu: K itself). */
template <typename T>
LB_FN void ws_load(ws_smem<T> &s, const unsigned long long *Kr, const T *L, const T *in, const uint8_t *upd,
                   const geom &g, const lb_tiling &t, int64_t x0, int64_t y0, int64_t z0)
{
    const ws_halo hs = ws_make_halo(t);
    const int S = hs.sx * hs.sy * hs.sz, np = lb_tile_pixels(t);
    for (int h = LB_TID; h < S; h += LB_NTH) {
        const int hx = h % hs.sx, r = h / hs.sx, hy = r % hs.sy, hz = r / hs.sy;
        const int64_t x = x0 + hx - 1, y = y0 + hy - 1, z = z0 + hz - hs.zo;
        unsigned long long k = KEY_NONE;
        T l = (T)0;
        if (x >= 0 && x < g.w && y >= 0 && y < g.h && z >= 0 && z < g.d) {
            const int64_t i = x + g.w * (y + g.h * z);
            k = key_load(Kr + i);
            l = L[i];
        }
        s.sk[h] = k;
        s.sl[h] = l;
    }
    for (int li = LB_TID; li < np; li += LB_NTH) {
        int lx, ly, lz;
        lb_local(t, li, &lx, &ly, &lz);
        const int64_t x = x0 + lx, y = y0 + ly, z = z0 + lz;
        const bool img = x < g.w && y < g.h && z < g.d;
        const int64_t i = img ? x + g.w * (y + g.h * z) : 0;
        s.fl[li] = img && upd[i] ? 1 : 0;
        s.ip[li] = img ? in[i] : (T)0;
        const int c = (lx + 1) + hs.sx * ((ly + 1) + hs.sy * (lz + hs.zo));
        s.cell[li] = (short)c;
        s.dirty[0][c] = 1; /* the halo may have changed since the tile's last run */
    }
    if (LB_TID == 0) s.dirs = 0;
    LB_SYNC();
}

/* Jacobi steps until no own pixel changes: all new keys from the old ones, then all written. Only
 * pixels with a neighbour that changed in the previous step are evaluated again (at the first
 * step: all). */
template <typename T> LB_FN void ws_relax(ws_smem<T> &s, const geom &g, const lb_tiling &t)
{
    const ws_halo hs = ws_make_halo(t);
    const int np = lb_tile_pixels(t);
    int dh[26];
    for (int k = 0; k < g.n; ++k) dh[k] = g.off[k][0] + hs.sx * (g.off[k][1] + hs.sy * g.off[k][2]);
    for (int cur = 0;; cur ^= 1) {
        bool changed = false;
        for (int li = LB_TID; li < np; li += LB_NTH) {
            const int c = s.cell[li];
            const bool again = s.dirty[cur][c];
            s.dirty[cur ^ 1][c] = 0; /* no one sets the next flags before the barrier below */
            if (!(s.fl[li] & 1) || !again) continue;
            const T lp = s.sl[c];
            unsigned long long best = KEY_NONE, kb = KEY_NONE;
            T bl = lp;
            for (int k = 0; k < g.n; ++k) {
                const unsigned long long kq = s.sk[c + dh[k]];
                const T lq = s.sl[c + dh[k]];
                const unsigned long long v = ws_candidate(kq, lq, s.ip[li], lp);
                if (v != KEY_NONE && ws_better(v, lq, kq, best, bl, kb)) best = v, bl = lq, kb = kq;
            }
            s.nk[li] = best;
            if (best != s.sk[c]) changed = true;
        }
        LB_SYNC(); /* every read of this step is done */
        for (int li = LB_TID; li < np; li += LB_NTH) {
            const int c = s.cell[li];
            if (!(s.fl[li] & 1) || !s.dirty[cur][c] || s.nk[li] == s.sk[c]) continue;
            s.sk[c] = s.nk[li];
            s.fl[li] |= 2;
            for (int k = 0; k < g.n; ++k) s.dirty[cur ^ 1][c + dh[k]] = 1; /* same value from every writer */
        }
        if (!LB_SYNC_OR(changed)) break;
    }
}

/* Write back the changed pixels; returns the tiles to put on the next list (ws_face_bits). */
template <typename T>
LB_FN unsigned int ws_store(ws_smem<T> &s, unsigned long long *K, const geom &g, const lb_tiling &t, int64_t x0,
                            int64_t y0, int64_t z0)
{
    const int np = lb_tile_pixels(t);
    for (int li = LB_TID; li < np; li += LB_NTH) {
        if (!(s.fl[li] & 2)) continue;
        int lx, ly, lz;
        lb_local(t, li, &lx, &ly, &lz);
        key_store(K + (x0 + lx) + g.w * ((y0 + ly) + g.h * (z0 + lz)), s.sk[s.cell[li]]);
        const unsigned int f = ws_face_bits(t, lx, ly, lz);
        if (f) lb_atomic_or(&s.dirs, f);
    }
    LB_SYNC();
    const unsigned int dirs = s.dirs;
    LB_SYNC(); /* s is reused by the next tile */
    return dirs;
}

/* One tile run (every thread of the block calls it). */
template <typename T>
LB_FN unsigned int ws_tile(ws_smem<T> &s, const unsigned long long *Kr, unsigned long long *K, const T *L,
                           const T *in, const uint8_t *upd, const geom &g, const lb_tiling &t, int64_t tile)
{
    int64_t x0, y0, z0;
    lb_origin(t, tile, &x0, &y0, &z0);
    ws_load(s, Kr, L, in, upd, g, t, x0, y0, z0);
    ws_relax(s, g, t);
    return ws_store(s, K, g, t, x0, y0, z0);
}

/* Phase 3: the output label of pixel i (lines: a non-marker pixel next to another label with a
 * smaller (L, D, label) is 0). */
template <typename T>
LB_HD uint32_t ws_out_label(int64_t i, const unsigned long long *K, const T *L, const uint8_t *upd, const geom &g,
                            int lines)
{
    const unsigned long long kp = K[i];
    if (kp == KEY_NONE) return 0;
    const uint32_t lab = (uint32_t)kp;
    if (!lines || !upd[i]) return lab;
    const int64_t x = i % g.w, r = i / g.w, y = r % g.h, z = r / g.h;
    const T lp = L[i];
    for (int k = 0; k < g.n; ++k) {
        const int64_t qx = x + g.off[k][0], qy = y + g.off[k][1], qz = z + g.off[k][2];
        if (qx < 0 || qx >= g.w || qy < 0 || qy >= g.h || qz < 0 || qz >= g.d) continue;
        const int64_t q = qx + g.w * (qy + g.h * qz);
        const unsigned long long kq = K[q];
        if (kq == KEY_NONE || (uint32_t)kq == lab) continue;
        const T lq = L[q];
        if (lq < lp || (lq == lp && kq < kp)) return 0; /* (L, D, label) smaller */
    }
    return lab;
}

#endif
