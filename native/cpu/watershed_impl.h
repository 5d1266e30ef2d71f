/*
 * cpu/watershed_impl.h - the CPU watershed's priority flood, specialised on the index type
 * (internal; included only by cpu/watershed.c, twice):
 *   IDX   uint32_t (images below 2^31 - 8 pixels) or uint64_t; also the type of the stamps,
 *         whose top bit flags the image border
 *   ISUF  a suffix token naming the specialisation
 *
 * Every list (region search, plateau layers, heap buckets) is threaded through one link per
 * pixel (nx): a pixel is in at most one list at a time, so nothing is allocated while the
 * output is being written.
 */

#define W_CAT2(a, b) a##_##b
#define W_CAT(a, b) W_CAT2(a, b)
#define WFN(name) W_CAT(name, ISUF)
#define W_NIL ((IDX)~(IDX)0)
#define W_BORDER ((IDX)1 << (sizeof(IDX) * 8 - 1))
#define W_STAMP(s) ((s) & ~W_BORDER)

typedef struct WFN(wsq) {
    IDX head, tail; /* empty: head == W_NIL (tail is then stale) */
} WFN(wsq);

/* Monotone priority queue of pixels keyed by their value's order key (a radix heap): bucket 0
 * holds the keys equal to last, bucket b > 0 those whose highest bit differing from last is
 * b - 1. Keys pushed are never below last, so a pixel moves down at most 32 times. */
typedef struct WFN(ws_heap) {
    uint32_t last;
    uint64_t used; /* bit b: bucket b is not empty */
    WFN(wsq) b[33];
} WFN(ws_heap);

static inline void WFN(q_push)(IDX *nx, WFN(wsq) *q, IDX p)
{
    nx[p] = W_NIL;
    if (q->head == W_NIL) q->head = p;
    else nx[q->tail] = p;
    q->tail = p;
}

static inline IDX WFN(q_pop)(const IDX *nx, WFN(wsq) *q)
{
    const IDX p = q->head;
    q->head = nx[p];
    return p;
}

static inline void WFN(heap_push)(IDX *nx, WFN(ws_heap) *H, uint32_t k, IDX p)
{
    const int b = ws_bucket(k, H->last);
    WFN(q_push)(nx, &H->b[b], p);
    H->used |= (uint64_t)1 << b;
}

/* Moves every pending pixel of the least key into *layer (H not empty); returns that key. */
static uint32_t WFN(heap_level)(const ws_job *J, IDX *nx, WFN(ws_heap) *H, WFN(wsq) *layer)
{
    if (!(H->used & 1)) {
        const int b = ws_ctz64(H->used);
        const IDX first = H->b[b].head;
        H->b[b].head = W_NIL;
        H->used &= ~((uint64_t)1 << b);
        uint32_t m = UINT32_MAX;
        for (IDX p = first; p != W_NIL; p = nx[p]) {
            const uint32_t k = ws_key(J, (int64_t)p);
            m = k < m ? k : m;
        }
        H->last = m;
        for (IDX p = first; p != W_NIL;) {
            const IDX next = nx[p];
            WFN(heap_push)(nx, H, ws_key(J, (int64_t)p), p);
            p = next;
        }
    }
    *layer = H->b[0];
    H->b[0].head = W_NIL;
    H->used &= ~(uint64_t)1;
    return H->last;
}

/* The neighbours of p inside the image into q[]; returns their count. Only pixels flagged as
 * on the border need coordinates. */
static inline int WFN(ws_nbs)(const ws_job *J, IDX p, int border, IDX *q)
{
    if (!border) {
        for (int k = 0; k < J->nn; ++k) q[k] = (IDX)((int64_t)p + J->delta[k]);
        return J->nn;
    }
    const int64_t x = (int64_t)p % J->w, y = ((int64_t)p / J->w) % J->h, z = (int64_t)p / (J->w * J->h);
    int c = 0;
    for (int k = 0; k < J->nn; ++k) {
        const int64_t qx = x + J->off[k][0], qy = y + J->off[k][1], qz = z + J->off[k][2];
        if (qx >= 0 && qy >= 0 && qz >= 0 && qx < J->w && qy < J->h && qz < J->d)
            q[c++] = (IDX)((int64_t)p + J->delta[k]);
    }
    return c;
}

/* The region of marker pixel s: every pixel inside the mask connected to s becomes INSIDE;
 * its markers become FIXED with their labels, pushed at their own level. */
static void WFN(ws_region)(const ws_job *J, IDX *st, IDX *nx, WFN(ws_heap) *H, IDX s)
{
    WFN(wsq) q = {W_NIL, W_NIL};
    st[s] |= WS_INSIDE;
    WFN(q_push)(nx, &q, s);
    while (q.head != W_NIL) {
        const IDX p = WFN(q_pop)(nx, &q); /* off the list: free to join the heap */
        const uint32_t m = ws_marker(J, (int64_t)p);
        if (m) {
            st[p] = (st[p] & W_BORDER) | WS_FIXED;
            ws_set_label(J, (int64_t)p, m);
            WFN(heap_push)(nx, H, ws_key(J, (int64_t)p), p);
        }
        IDX q26[26];
        const int c = WFN(ws_nbs)(J, p, (st[p] & W_BORDER) != 0, q26);
        for (int k = 0; k < c; ++k) {
            const IDX r = q26[k];
            if (W_STAMP(st[r]) || (J->mask && !J->mask[r])) continue;
            st[r] |= WS_INSIDE;
            WFN(q_push)(nx, &q, r);
        }
    }
}

/* One plateau layer (level lv, distance dist, stamp g): every pixel p of it reaches its INSIDE
 * neighbours (their (L, D) is final: a climb gives (in, 0), a plateau (lv, dist + 1)) and gives
 * its label to those reached by this same layer when it is smaller (ties of the rule). */
static void WFN(ws_layer)(const ws_job *J, IDX *st, IDX *nx, WFN(ws_heap) *H, WFN(wsq) *layer,
                          WFN(wsq) *next, uint32_t lv, uint32_t dist, IDX g)
{
    while (layer->head != W_NIL) {
        const IDX p = WFN(q_pop)(nx, layer);
        const uint32_t lab = ws_get_label(J, (int64_t)p);
        if (J->lev) J->lev[p] = lv, J->dist[p] = dist;
        IDX q26[26];
        const int c = WFN(ws_nbs)(J, p, (st[p] & W_BORDER) != 0, q26);
        for (int k = 0; k < c; ++k) {
            const IDX r = q26[k], s = st[r];
            if (W_STAMP(s) == WS_INSIDE) {
                st[r] = (s & W_BORDER) | g;
                ws_set_label(J, (int64_t)r, lab);
                const uint32_t kr = ws_key(J, (int64_t)r);
                if (kr > lv) WFN(heap_push)(nx, H, kr, r);
                else WFN(q_push)(nx, next, r);
            } else if (W_STAMP(s) == g && lab < ws_get_label(J, (int64_t)r)) {
                ws_set_label(J, (int64_t)r, lab);
            }
        }
    }
}

/* The flood of one region from its markers (in H): levels in increasing order, each level's
 * layers in increasing distance; every layer gets its own stamp. */
static void WFN(ws_flood)(const ws_job *J, IDX *st, IDX *nx, WFN(ws_heap) *H)
{
    IDX g = WS_FIRST_STAMP;
    while (H->used) {
        WFN(wsq) layer;
        const uint32_t lv = WFN(heap_level)(J, nx, H, &layer);
        for (uint32_t dist = 0; layer.head != W_NIL; ++dist, ++g) {
            WFN(wsq) next = {W_NIL, W_NIL};
            WFN(ws_layer)(J, st, nx, H, &layer, &next, lv, dist, g);
            layer = next;
        }
    }
}

/* Every region that holds a marker, in raster order of its first marker pixel. */
static void WFN(ws_all)(const ws_job *J, IDX *st, IDX *nx)
{
    WFN(ws_heap) H;
    for (int b = 0; b < 33; ++b) H.b[b].head = H.b[b].tail = W_NIL;
    for (int64_t p = 0; p < J->n; ++p) {
        if (!ws_marker(J, p) || W_STAMP(st[p]) || (J->mask && !J->mask[p])) continue;
        H.last = 0;
        H.used = 0;
        WFN(ws_region)(J, st, nx, &H, (IDX)p);
        WFN(ws_flood)(J, st, nx, &H);
    }
}

#undef W_CAT2
#undef W_CAT
#undef WFN
#undef W_NIL
#undef W_BORDER
#undef W_STAMP
#undef IDX
#undef ISUF
