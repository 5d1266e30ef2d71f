/*
 * cpu/watershed_impl.h - the CPU watershed's flood, specialised on the index type (internal;
 * included only by cpu/watershed.c, twice):
 *   IDX   uint32_t (images below 2^30 - 8 pixels) or uint64_t; also the type of the stamps,
 *         whose top bit flags the image border and next bit a searched pixel's level rank
 *   ISUF  a suffix token naming the specialisation
 *
 * The scratch arrays are contiguous and reused region after region, so the small regions of
 * a typical mask stay in cache (linked lists through the image were slower: every step a
 * scattered dependent load).
 */

#define W_CAT2(a, b) a##_##b
#define W_CAT(a, b) W_CAT2(a, b)
#define WFN(name) W_CAT(name, ISUF)
#define W_BORDER ((IDX)1 << (sizeof(IDX) * 8 - 1))
#define W_RANK ((IDX)1 << (sizeof(IDX) * 8 - 2)) /* searched, not reached: W_RANK | level rank */
#define W_STAMP(s) ((s) & ~W_BORDER)

/* Scratch of capacity cap each (only a region's worth is touched). */
typedef struct WFN(ws_scr) {
    IDX *rq;       /* the region's pixels, then the plateau layers of a level */
    IDX *ia, *ib;  /* the runs' rows and first x while searching; then a sort's indices */
    uint32_t *kx;  /* the keys of the region's pixels, then their hash slots or ranks */
    IDX *bq;       /* the runs' last x; then level buckets: a level's climbs and markers */
    IDX *lo, *fi;  /* per level: bucket start and fill (n + 1) */
    ws_hash *H;    /* the distinct keys of a region that has few */
    IDX cap;       /* regions larger than this are left (to a pass with more room) */
} WFN(ws_scr);

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

/* The run of row ri through x (inside the mask, not searched; so is all of its run: a searched
 * pixel next to it in the row would have taken x with its run) searched: its pixels appended
 * to rq with their keys in kx, its markers fixed with their labels, the others W_RANK; the run
 * (row, first, last) to the run list (ia, ib, bq). Returns its last x, or -1 (and touches
 * nothing) when the region would outgrow the scratch. */
static int64_t WFN(ws_run)(const ws_job *J, IDX *st, WFN(ws_scr) *S, IDX *m, IDX *nr, int64_t ri, int64_t x)
{
    const int64_t base = ri * J->w;
    int64_t a = x, b = x;
    if (J->mask) {
        while (a > 0 && J->mask[base + a - 1]) --a;
        while (b < J->w - 1 && J->mask[base + b + 1]) ++b;
    } else {
        a = 0, b = J->w - 1;
    }
    if ((int64_t)*m + (b - a + 1) > (int64_t)S->cap) return -1;
    for (int64_t i = base + a; i <= base + b; ++i) {
        const uint32_t mk = ws_marker(J, i);
        if (mk) st[i] = (st[i] & W_BORDER) | WS_FIXED, ws_set_label(J, i, mk);
        else st[i] |= W_RANK;
        S->kx[*m] = ws_key(J, i);
        S->rq[(*m)++] = (IDX)i;
    }
    S->ia[*nr] = (IDX)ri, S->ib[*nr] = (IDX)a, S->bq[*nr] = (IDX)b, ++*nr;
    const int64_t y = ri % J->h, z = ri / J->h;
    for (int k = 0; k < J->nrows; ++k) {
        const int64_t y2 = y + J->rows[k][0], z2 = z + J->rows[k][1];
        if (y2 < 0 || y2 >= J->h || z2 < 0 || z2 >= J->d) continue;
        ws_prefetch_span(J, st, sizeof(IDX), (y2 + J->h * z2) * J->w, a, b);
    }
    return b;
}

/* The region of s (the pixels inside the mask connected to it) into rq, by runs: each run
 * found scans, in every row that holds neighbours of it, the span its pixels reach (reads
 * along rows, not scattered). Returns the region's size, or 0 when it does not fit in the
 * scratch (its pixels are then as they were). */
static IDX WFN(ws_region)(const ws_job *J, IDX *st, WFN(ws_scr) *S, IDX s)
{
    IDX m = 0, nr = 0;
    int64_t x = WFN(ws_run)(J, st, S, &m, &nr, (int64_t)s / J->w, (int64_t)s % J->w);
    for (IDX t = 0; t < nr && x >= 0; ++t) {
        const int64_t ri = (int64_t)S->ia[t], x0 = (int64_t)S->ib[t], x1 = (int64_t)S->bq[t];
        const int64_t y = ri % J->h, z = ri / J->h;
        for (int k = 0; k < J->nrows && x >= 0; ++k) {
            const int64_t y2 = y + J->rows[k][0], z2 = z + J->rows[k][1];
            if (y2 < 0 || y2 >= J->h || z2 < 0 || z2 >= J->d) continue;
            const int64_t r2 = y2 + J->h * z2, base = r2 * J->w;
            const int64_t lo = x0 + J->rows[k][2] < 0 ? 0 : x0 + J->rows[k][2];
            const int64_t hi = x1 + J->rows[k][3] >= J->w ? J->w - 1 : x1 + J->rows[k][3];
            for (x = lo; x <= hi; ++x) {
                if ((J->mask && !J->mask[base + x]) || W_STAMP(st[base + x])) continue;
                if ((x = WFN(ws_run)(J, st, S, &m, &nr, r2, x)) < 0) break;
            }
        }
    }
    if (x >= 0) return m;
    for (IDX j = 0; j < m; ++j) st[S->rq[j]] &= W_BORDER, ws_set_label(J, (int64_t)S->rq[j], 0);
    return 0;
}

/* LSD radix of the local indices 0..m-1 by key, 8 bits a pass, passes whose digit is the same
 * for every key skipped. Returns the array holding the result (ia or ib). */
static IDX *WFN(ws_sort)(WFN(ws_scr) *S, IDX m)
{
    IDX *a = S->ia, *b = S->ib;
    const uint32_t *kx = S->kx;
    for (IDX j = 0; j < m; ++j) a[j] = j;
    for (int shift = 0; shift < 32; shift += 8) {
        IDX count[257] = {0};
        for (IDX j = 0; j < m; ++j) count[((kx[j] >> shift) & 0xFF) + 1]++;
        if (count[((kx[0] >> shift) & 0xFF) + 1] == m) continue;
        for (int k = 0; k < 256; ++k) count[k + 1] += count[k];
        for (IDX j = 0; j < m; ++j) b[count[(kx[a[j]] >> shift) & 0xFF]++] = a[j];
        IDX *t = a;
        a = b;
        b = t;
    }
    return a;
}

/* Ranks of the region's distinct keys (kx) through the hash table: kx[j] becomes the slot of
 * pixel j's key, rank[slot] its rank; lo and fi per rank. Returns the number of levels, or 0
 * when the region has more distinct keys than the table takes (kx is then spoilt: sort). */
static IDX WFN(ws_hash_levels)(WFN(ws_scr) *S, IDX m)
{
    ws_hash *T = S->H;
    uint32_t nd = 0;
    for (IDX j = 0; j < m; ++j) {
        const uint32_t k = S->kx[j];
        uint32_t h = (k * 0x9E3779B1u) >> (32 - WS_HASH_BITS);
        while (T->cnt[h] && T->key[h] != k) h = (h + 1) & (WS_HASH_SIZE - 1);
        if (!T->cnt[h]) {
            if (nd == WS_HASH_SIZE / 2) { /* too many: clear and let the caller sort */
                for (uint32_t t = 0; t < nd; ++t) T->cnt[T->used[t]] = 0;
                return 0;
            }
            T->key[h] = k, T->used[nd++] = h;
        }
        T->cnt[h]++;
        S->kx[j] = h;
    }
    for (uint32_t t = 0; t < nd; ++t) T->order[t] = (uint64_t)T->key[T->used[t]] << 32 | T->used[t];
    ws_order_keys(T->order, nd);
    IDX at = 0;
    for (uint32_t r = 0; r < nd; ++r) {
        const uint32_t h = (uint32_t)T->order[r];
        T->rank[h] = r;
        S->lo[r] = S->fi[r] = at;
        at += T->cnt[h];
        T->cnt[h] = 0;
    }
    return nd;
}

/* Ranks by sorting the keys: kx[j] = the rank of pixel j's key; fills lo and fi. */
static IDX WFN(ws_sort_levels)(const ws_job *J, WFN(ws_scr) *S, IDX m)
{
    for (IDX j = 0; j < m; ++j) S->kx[j] = ws_key(J, (int64_t)S->rq[j]);
    const IDX *o = WFN(ws_sort)(S, m);
    IDX nl = 0;
    uint32_t prev = 0;
    for (IDX t = 0; t < m; ++t) {
        const IDX j = o[t];
        const uint32_t k = S->kx[j];
        if (t == 0 || k != prev) prev = k, S->lo[nl] = S->fi[nl] = t, ++nl;
        S->kx[j] = (uint32_t)(nl - 1); /* read before, never read again */
    }
    return nl;
}

/* The region's levels (distinct keys, ranked 0..nl-1): every pixel not fixed gets W_RANK |
 * its rank, each level a bucket of as many slots as it has pixels (each is pushed at most once,
 * into its own level), the markers go to their buckets. Returns nl. */
static IDX WFN(ws_levels)(const ws_job *J, IDX *st, WFN(ws_scr) *S, IDX m)
{
    IDX nl = WFN(ws_hash_levels)(S, m);
    const uint32_t *rank = nl ? S->H->rank : NULL;
    if (!nl) nl = WFN(ws_sort_levels)(J, S, m);
    for (IDX j = 0; j < m; ++j) {
        const IDX p = S->rq[j], rk = rank ? rank[S->kx[j]] : S->kx[j];
        if (W_STAMP(st[p]) == WS_FIXED) S->bq[S->fi[rk]++] = p;
        else st[p] |= rk;
    }
    return nl;
}

/* The pixels q[a, b) of one layer (level rank lv, distance dist, stamp g) reach their
 * unreached neighbours (whose (L, D) is then final: a climb gives (in, 0) in the bucket of
 * their level, a plateau step (lv, dist + 1) in the next layer, rq[*end]) and give their label
 * to those reached by this same layer when it is smaller (the ties of the rule). */
static inline void WFN(ws_layer)(const ws_job *J, IDX *st, WFN(ws_scr) *S, const IDX *q, IDX a, IDX b,
                                 IDX *endp, IDX lv, uint32_t dist, IDX g, const int u16)
{
    IDX end = *endp, *rq = S->rq, *bq = S->bq, *fi = S->fi;
    const int nn = J->nn;
    for (IDX t = a; t < b; ++t) {
        const IDX p = q[t];
        const uint32_t lab = ws_label_of(J->out, u16, (int64_t)p);
        if (J->lev) J->lev[p] = (uint32_t)lv, J->dist[p] = dist;
        IDX nb[26];
        const int border = (st[p] & W_BORDER) != 0;
        const int c = border ? WFN(ws_nbs)(J, p, 1, nb) : nn;
        for (int k = 0; k < c; ++k) {
            const IDX r = border ? nb[k] : (IDX)((int64_t)p + J->delta[k]), s = st[r], v = W_STAMP(s);
            if (v & W_RANK) {
                const IDX rk = v & ~W_RANK, up = rk > lv; /* climb: its level's bucket */
                st[r] = (s & W_BORDER) | g;
                ws_label_to(J->out, u16, (int64_t)r, lab);
                *(up ? &bq[fi[rk]] : &rq[end]) = r; /* no branch: climbs and steps interleave */
                fi[rk] += up;
                end += 1 - up;
            } else if (v == g && lab < ws_label_of(J->out, u16, (int64_t)r)) {
                ws_label_to(J->out, u16, (int64_t)r, lab);
            }
        }
    }
    *endp = end;
}

/* The flood of one region: levels in increasing order, each level's layers in increasing
 * distance, every layer with its own stamp. u16: the label type, constant in each caller. */
static inline void WFN(ws_flood_t)(const ws_job *J, IDX *st, WFN(ws_scr) *S, IDX nl, const int u16)
{
    IDX g = WS_FIRST_STAMP;
    for (IDX lv = 0; lv < nl; ++lv) {
        if (S->fi[lv] == S->lo[lv]) continue; /* no pixel floods at this level */
        IDX end = 0;
        WFN(ws_layer)(J, st, S, S->bq, S->lo[lv], S->fi[lv], &end, lv, 0, g++, u16);
        for (IDX a = 0, dist = 1; a < end; ++dist) {
            const IDX b = end;
            WFN(ws_layer)(J, st, S, S->rq, a, b, &end, lv, (uint32_t)dist, g++, u16);
            a = b;
        }
    }
}

static void WFN(ws_flood)(const ws_job *J, IDX *st, WFN(ws_scr) *S, IDX nl)
{
    if (J->u16) WFN(ws_flood_t)(J, st, S, nl, 1);
    else WFN(ws_flood_t)(J, st, S, nl, 0);
}

/* Every region not yet flooded that holds a marker in [p0, p1), in raster order of its first
 * marker pixel there. */
static void WFN(ws_all)(const ws_job *J, IDX *st, WFN(ws_scr) *S, int64_t p0, int64_t p1)
{
    for (int64_t p = ws_next_marker(J, p0, p1); p < p1; p = ws_next_marker(J, p + 1, p1)) {
        if (W_STAMP(st[p]) || (J->mask && !J->mask[p])) continue;
        const IDX m = WFN(ws_region)(J, st, S, (IDX)p);
        if (m) WFN(ws_flood)(J, st, S, WFN(ws_levels)(J, st, S, m));
    }
}

#undef W_CAT2
#undef W_CAT
#undef WFN
#undef W_BORDER
#undef W_RANK
#undef W_STAMP
#undef IDX
#undef ISUF
