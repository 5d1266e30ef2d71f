/*
 * watershed.cl - the marker-controlled watershed (opencl/labels.c), after label.cl in the
 * labeling program (pix_t = the relief's type).
 *
 * Phase 1 (levels L) is the backend's reconstruction by erosion on the buffers ws_seed_* fills.
 * Phase 2 (ws_round, phase 0): the plateau distance D by a 32-bit atomic minimum, from a list of
 * changed pixels. (L, D) of a pixel only falls as its neighbours' fall, so the relaxation ends at
 * the least (L, D) whatever the order.
 * Phase 3 (ws_round, phase 1): labels by a 32-bit atomic minimum along the edges q -> p whose
 * candidate (max(L_q, in_p), in_p > L_q ? 0 : D_q + 1) equals p's final (L, D); at a climb
 * (D = 0) only from the lower neighbours with the least (L_q, D_q) (the flood that arrived
 * first, iwpp.h). Those edges raise (L, D) strictly, so the smallest label over them is unique;
 * one 64-bit (D, label) key relaxed in a single pass is not: after a strict climb (D = 0) a
 * label that q held only at a worse D would stay at p.
 * Classes: 0 = outside the mask, 1 = inside, 2 = a marker inside (D = 0 and its label, fixed).
 */
#define CLS_OUT 0
#define CLS_FREE 1
#define CLS_MARKER 2

#if IWPP_TK == 1
#define PIX_MAX ((pix_t)255)
#elif IWPP_TK == 2
#define PIX_MAX ((pix_t)65535)
#else
#define PIX_MAX ((pix_t)INFINITY)
#endif

/* Reconstruction inputs: mask g = in inside, the type's top outside; marker m = in on markers
 * inside the mask, the top elsewhere (m >= g: already clipped). */
#define WS_SEED(NAME, LT)                                                                          \
    __kernel void NAME(__global const pix_t *in, __global const LT *markers,                       \
                       __global const uchar *mask, int has_mask, __global pix_t *g,                \
                       __global pix_t *m, __global uchar *cls, uint n)                             \
    {                                                                                              \
        const uint p = (uint)get_global_id(0);                                                     \
        if (p >= n) return;                                                                        \
        const int in_mask = !has_mask || mask[p] != 0;                                             \
        const int marked = in_mask && markers[p] != 0;                                             \
        g[p] = in_mask ? in[p] : PIX_MAX;                                                          \
        m[p] = marked ? in[p] : PIX_MAX;                                                           \
        cls[p] = marked ? CLS_MARKER : (in_mask ? CLS_FREE : CLS_OUT);                             \
    }
WS_SEED(ws_seed_u16, ushort)
WS_SEED(ws_seed_u32, uint)

#define UNREACHED 0xffffffffu

/* Markers: D = 0 and their label; others unreached. */
#define WS_INIT(NAME, LT)                                                                          \
    __kernel void NAME(__global const LT *markers, __global const uchar *cls,                      \
                       __global uint *dist, __global uint *lab, uint n)                            \
    {                                                                                              \
        const uint p = (uint)get_global_id(0);                                                     \
        if (p >= n) return;                                                                        \
        const int marked = cls[p] == CLS_MARKER;                                                   \
        dist[p] = marked ? 0u : UNREACHED;                                                         \
        lab[p] = marked ? (uint)markers[p] : UNREACHED;                                            \
    }
WS_INIT(ws_init_u16, ushort)
WS_INIT(ws_init_u32, uint)

/* The first list of both phases: markers with a free neighbour (count in cnt[0]). */
__kernel void ws_list_markers(__global const uchar *cls, int w, int h, int d,
                              __constant int4 *offs, int noffs, __global uint *list,
                              __global volatile uint *cnt, uint n)
{
    const uint p = (uint)get_global_id(0);
    if (p >= n || cls[p] != CLS_MARKER) return;
    const int3 c = coords_of(p, w, h);
    for (int k = 0; k < noffs; ++k)
        if (inside(c, offs[k], w, h, d) && cls[p + (uint)offs[k].w] == CLS_FREE) {
            list[atomic_inc(cnt)] = p;
            return;
        }
}

/* Pixels one work-item follows itself, breadth first in a private ring, before it hands the rest
 * to the next round: a long plateau then costs about its length / WS_CHASE rounds instead of
 * its length (depth first, the chase set long detours that later waves had to undo). */
#define WS_RING 32
#define WS_CHASE 64

/* Lists p for the next round, once per round (mark holds the round that listed it). */
inline void ws_list(uint p, uint round, __global volatile uint *mark, __global uint *out_list,
                    __global volatile uint *out_n)
{
    if (atomic_xchg(&mark[p], round) != round) out_list[atomic_inc(out_n)] = p;
}

/* Whether q (level lq, final D dq) is among the first floods to reach p by a climb (in ip): no
 * reached neighbour of p below ip has a smaller (L, D). */
inline int ws_first_climb(uint p, pix_t ip, pix_t lq, uint dq, __global const pix_t *lev,
                          __global volatile uint *dist, int w, int h, int d, __constant int4 *offs,
                          int noffs)
{
    const int3 c = coords_of(p, w, h);
    for (int k = 0; k < noffs; ++k) {
        if (!inside(c, offs[k], w, h, d)) continue;
        const uint r = p + (uint)offs[k].w;
        const uint dr = dist[r];
        const pix_t lr = lev[r];
        if (dr == UNREACHED || !(lr < ip)) continue;
        if (lr < lq || (lr == lq && dr < dq)) return 0;
    }
    return 1;
}

/* From q to its free neighbours whose level q's flood reaches: phase 0 lowers their D, phase 1
 * their label where q's candidate D is their final D (after a climb: only the first floods). A
 * pixel lowered goes in the private ring, or on the next round's list when the ring is full. */
inline int ws_relax(int phase, uint q, __global const pix_t *in, __global const pix_t *lev,
                    __global const uchar *cls, __global volatile uint *dist,
                    __global volatile uint *lab, int w, int h, int d, __constant int4 *offs,
                    int noffs, uint *ring, uint head, uint tail, uint round,
                    __global volatile uint *mark, __global uint *out_list,
                    __global volatile uint *out_n)
{
    const pix_t lq = lev[q];
    const uint dq = dist[q], labq = lab[q];
    const int3 c = coords_of(q, w, h);
    for (int k = 0; k < noffs; ++k) {
        const int4 o = offs[k];
        if (!inside(c, o, w, h, d)) continue;
        const uint p = q + (uint)o.w;
        if (cls[p] != CLS_FREE) continue;
        const pix_t ip = in[p];
        const int climbs = ip > lq;
        if ((climbs ? ip : lq) != lev[p]) continue; /* reaches p only above p's level */
        const uint cand = climbs ? 0u : dq + 1u;
        if (phase == 0) {
            if (cand >= dist[p] || cand >= atomic_min(&dist[p], cand)) continue;
        } else {
            if (cand != dist[p] || labq >= lab[p]) continue;
            if (climbs && !ws_first_climb(p, ip, lq, dq, lev, dist, w, h, d, offs, noffs)) continue;
            if (labq >= atomic_min(&lab[p], labq)) continue;
        }
        if (tail - head < WS_RING) ring[tail++ % WS_RING] = p;
        else ws_list(p, round, mark, out_list, out_n);
    }
    return tail;
}

/* One round over the list. Counts stay on the device (as edt_dan_round): round r reads its
 * count from cnt[r % 3], appends to cnt[(r + 1) % 3] and zeroes cnt[(r + 2) % 3]; cnt[3..4]
 * add up the pixels taken (64-bit), cnt[5] the rounds that had work. */
__kernel void ws_round(int phase, __global const pix_t *in, __global const pix_t *lev,
                       __global const uchar *cls, __global volatile uint *dist,
                       __global volatile uint *lab, int w, int h, int d, __constant int4 *offs,
                       int noffs, __global const uint *in_list, __global uint *out_list,
                       __global volatile uint *cnt, __global volatile uint *mark, uint round)
{
    const uint in_n = cnt[round % 3];
    __global volatile uint *out_n = cnt + (round + 1) % 3;
    if (get_global_id(0) == 0) { /* one writer per round, rounds in order: plain stores */
        cnt[(round + 2) % 3] = 0;
        const uint lo = cnt[3], nlo = lo + in_n;
        cnt[3] = nlo;
        cnt[4] += nlo < lo;
        cnt[5] += in_n > 0;
    }
    uint ring[WS_RING];
    for (uint i = (uint)get_global_id(0); i < in_n; i += (uint)get_global_size(0)) {
        uint head = 0, tail = 1, chase = WS_CHASE;
        ring[0] = in_list[i];
        while (head != tail) {
            const uint q = ring[head++ % WS_RING];
            if (chase == 0) {
                ws_list(q, round, mark, out_list, out_n);
                continue;
            }
            --chase;
            tail = ws_relax(phase, q, in, lev, cls, dist, lab, w, h, d, offs, noffs, ring, head,
                            tail, round, mark, out_list, out_n);
        }
    }
}

/* Labels, 0 where unreached or outside; with lines, a free pixel next to another label with a
 * smaller (L, D, label) becomes 0. */
#define WS_WRITE(NAME, LT)                                                                         \
    __kernel void NAME(__global const pix_t *lev, __global const uchar *cls,                       \
                       __global const uint *dist, __global const uint *lab, int lines, int w,      \
                       int h, int d, __constant int4 *offs, int noffs, __global LT *labels,        \
                       uint n)                                                                     \
    {                                                                                              \
        const uint p = (uint)get_global_id(0);                                                     \
        if (p >= n) return;                                                                        \
        if (cls[p] == CLS_OUT || dist[p] == UNREACHED) {                                           \
            labels[p] = (LT)0;                                                                     \
            return;                                                                                \
        }                                                                                          \
        const uint v = lab[p];                                                                     \
        if (lines && cls[p] == CLS_FREE) {                                                         \
            const pix_t lp = lev[p];                                                               \
            const ulong kp = (ulong)dist[p] << 32 | v;                                             \
            const int3 c = coords_of(p, w, h);                                                     \
            for (int k = 0; k < noffs; ++k) {                                                      \
                if (!inside(c, offs[k], w, h, d)) continue;                                        \
                const uint q = p + (uint)offs[k].w;                                                \
                if (cls[q] == CLS_OUT || dist[q] == UNREACHED || lab[q] == v) continue;            \
                const pix_t lq = lev[q];                                                           \
                if (lq < lp || (lq == lp && ((ulong)dist[q] << 32 | lab[q]) < kp)) {               \
                    labels[p] = (LT)0;                                                             \
                    return;                                                                        \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        labels[p] = (LT)v;                                                                         \
    }
WS_WRITE(ws_write_u16, ushort)
WS_WRITE(ws_write_u32, uint)
