/*
 * cpu/label_impl.h - the CPU labeling and the watershed's ordered flood, specialised on the
 * index type (internal; included only by cpu/labels.c, twice):
 *   IDX   uint32_t (images below 2^32 - 1 pixels: half the memory) or uint64_t
 *   ISUF  a suffix token naming the specialisation
 * Pixel values reach this code as uint32_t keys (labels.c: lab_key) whose order and equality
 * are those of the values, so nothing here depends on the pixel type.
 */

#define L_CAT2(a, b) a##_##b
#define L_CAT(a, b) L_CAT2(a, b)
#define LFN(name) L_CAT(name, ISUF)
#define L_NONE ((IDX)~(IDX)0)

/* ---------------------------------------------------------------- union-find labeling */

/* Root of @p i with path halving (parents only ever point to smaller indices). */
static inline IDX LFN(uf_find)(IDX *par, IDX i)
{
    while (par[i] != i) {
        par[i] = par[par[i]];
        i = par[i];
    }
    return i;
}

/* Step 1 on band [lo, hi): union every foreground pixel with its joined neighbours met before
 * it in raster order inside the band. Roots are the smallest index of their set. */
static void LFN(uf_band)(const lab_job *J, int64_t lo, int64_t hi, IDX *par)
{
    const int64_t w = J->w, h = J->h;
    for (int64_t i = lo, xr = 0, y = (lo / w) % h, z = lo / (w * h); i < hi; ++i) {
        if (xr == w) { /* next row: coordinates without divisions */
            xr = 0;
            if (++y == h) y = 0, ++z;
        }
        const int64_t x = xr++;
        const uint32_t k = lab_key(J->in, J->type, i);
        if (!k) {
            par[i] = L_NONE;
            continue;
        }
        par[i] = (IDX)i;
        IDX ri = (IDX)i; /* the root of i's set, kept across its neighbours */
        const int inner = x > 0 && x < w - 1 && y > 0 && y < h - 1 && (J->d == 1 || z > 0);
        for (int n = 0; n < J->nprev; ++n) {
            if (!inner) {
                const int64_t qx = x + J->off[n][0], qy = y + J->off[n][1], qz = z + J->off[n][2];
                if (qx < 0 || qx >= w || qy < 0 || qy >= h || qz < 0) continue;
            }
            const int64_t q = i + J->delta[n];
            if (q < lo || par[q] == L_NONE) continue;
            if (J->equal && lab_key(J->in, J->type, q) != k) continue;
            const IDX rq = LFN(uf_find)(par, (IDX)q);
            if (rq < ri) par[ri] = rq, ri = rq;
            else if (ri < rq) par[rq] = ri;
        }
    }
}

/* Root without compression (step 2 must not point non-roots across bands). */
static inline IDX LFN(uf_root)(const IDX *par, IDX i)
{
    while (par[i] != i) i = par[i];
    return i;
}

/* Step 2 (sequential): join the first line of each band with the band before; every root that
 * gets a parent is recorded in @p moved (sorted ascending afterwards) and then pointed at its
 * final root, in increasing order (a root only ever moves under a smaller one). */
static iwpp_status LFN(uf_seams)(const lab_job *J, const int64_t *band_lo, int nb, IDX *par)
{
    const int64_t w = J->w, h = J->h, line = J->d > 1 ? w * h : w;
    IDX *moved = NULL;
    size_t nm = 0, cap = 0;
    for (int b = 1; b < nb; ++b) {
        const int64_t lo = band_lo[b];
        for (int64_t i = lo; i < lo + line && i < band_lo[b + 1]; ++i) {
            if (par[i] == L_NONE) continue;
            const uint32_t k = lab_key(J->in, J->type, i);
            const int64_t x = i % w, y = (i / w) % h, z = i / (w * h);
            for (int n = 0; n < J->nprev; ++n) {
                const int64_t qx = x + J->off[n][0], qy = y + J->off[n][1], qz = z + J->off[n][2];
                if (qx < 0 || qx >= w || qy < 0 || qy >= h || qz < 0) continue;
                const int64_t q = i + J->delta[n];
                if (q >= lo || par[q] == L_NONE) continue;
                if (J->equal && lab_key(J->in, J->type, q) != k) continue;
                IDX a = LFN(uf_root)(par, (IDX)i), c = LFN(uf_root)(par, (IDX)q);
                if (a == c) continue;
                if (c > a) {
                    IDX t = a;
                    a = c;
                    c = t;
                }
                if (nm == cap) {
                    cap = cap ? 2 * cap : 1024;
                    IDX *m2 = realloc(moved, cap * sizeof *m2);
                    if (!m2) {
                        free(moved);
                        return IWPP_ENOMEM;
                    }
                    moved = m2;
                }
                par[a] = c; /* the larger root under the smaller */
                moved[nm++] = a;
            }
        }
    }
    if (nm) qsort(moved, nm, sizeof *moved, LFN(cmp_idx));
    for (size_t m = 0; m < nm; ++m) par[moved[m]] = par[par[moved[m]]];
    free(moved);
    return IWPP_OK;
}

/* Step 3 on a band: every pixel's parent becomes its final root (raster order: the parent,
 * smaller, is final already; roots moved in step 2 are final and point outside the band). */
static void LFN(uf_flatten)(int64_t lo, int64_t hi, IDX *par)
{
    for (int64_t i = lo; i < hi; ++i) {
        const IDX p = par[i];
        if (p == L_NONE || p == (IDX)i || (int64_t)p < lo) continue;
        par[i] = par[p];
    }
}

static int64_t LFN(uf_count_roots)(int64_t lo, int64_t hi, const IDX *par)
{
    int64_t c = 0;
    for (int64_t i = lo; i < hi; ++i) c += par[i] == (IDX)i;
    return c;
}

/* Step 4a: the roots of a band take labels first + 1, first + 2, ... in raster order. */
static void LFN(uf_write_roots)(int64_t lo, int64_t hi, int64_t first, const IDX *par, void *out, int u16)
{
    uint32_t v = (uint32_t)first;
    for (int64_t i = lo; i < hi; ++i)
        if (par[i] == (IDX)i) {
            ++v;
            if (u16) ((uint16_t *)out)[i] = (uint16_t)v;
            else ((uint32_t *)out)[i] = v;
        }
}

/* Step 4b: every other pixel takes its root's label (written in 4a), background 0. */
static void LFN(uf_write_rest)(int64_t lo, int64_t hi, const IDX *par, void *out, int u16)
{
    for (int64_t i = lo; i < hi; ++i) {
        const IDX p = par[i];
        if (p == (IDX)i) continue;
        if (u16) ((uint16_t *)out)[i] = p == L_NONE ? 0 : ((uint16_t *)out)[p];
        else ((uint32_t *)out)[i] = p == L_NONE ? 0 : ((uint32_t *)out)[p];
    }
}

/* ---------------------------------------------------------------- watershed flood */

/* Sort @p list (m pixels, raster order) by level key, stably: small lists through unique
 * 64-bit keys (level, position) and qsort, larger ones by LSD radix with 16-bit digits (one
 * pass for U8 and U16 levels, two for F32). Returns out or tmp, whichever holds the result. */
static IDX *LFN(ws_sort)(const ws_job *J, const IDX *list, int64_t m, IDX *out, IDX *tmp, ws_scratch *w)
{
    const ws_px *px = J->px;
    if (m <= WS_SMALL_SORT) {
        for (int64_t j = 0; j < m; ++j) w->keys[j] = (uint64_t)px[list[j]].level << 32 | (uint64_t)j;
        const uint64_t *k = ws_small_sort(w->keys, w->keys2, m);
        for (int64_t j = 0; j < m; ++j) out[j] = list[k[j] & 0xFFFFFFFFu];
        return out;
    }
    int64_t *count = w->count;
    memset(count, 0, 65537 * sizeof *count);
    for (int64_t j = 0; j < m; ++j) count[(px[list[j]].level & 0xFFFF) + 1]++;
    for (int k = 0; k < 65536; ++k) count[k + 1] += count[k];
    for (int64_t j = 0; j < m; ++j) out[count[px[list[j]].level & 0xFFFF]++] = list[j];
    if (!J->two_pass) return out;
    memset(count, 0, 65537 * sizeof *count);
    for (int64_t j = 0; j < m; ++j) count[(px[out[j]].level >> 16) + 1]++;
    for (int k = 0; k < 65536; ++k) count[k + 1] += count[k];
    for (int64_t j = 0; j < m; ++j) tmp[count[px[out[j]].level >> 16]++] = out[j];
    return tmp;
}

/* The neighbours of p into q[] (those inside the image); returns their count. Pixels off the
 * image border need no coordinates. */
static inline int LFN(ws_nbs)(const ws_job *J, int64_t p, int border, int64_t *q)
{
    if (!border) {
        for (int n = 0; n < J->nn; ++n) q[n] = p + J->delta[n];
        return J->nn;
    }
    const int64_t x = p % J->w, y = (p / J->w) % J->h, z = p / (J->w * J->h);
    int c = 0;
    for (int n = 0; n < J->nn; ++n) {
        const int64_t qx = x + J->off[n][0], qy = y + J->off[n][1], qz = z + J->off[n][2];
        if (qx >= 0 && qy >= 0 && qz >= 0 && qx < J->w && qy < J->h && qz < J->d) q[c++] = p + J->delta[n];
    }
    return c;
}

/* Source of level lv at p (not yet reached): a marker (its own label) or an entry pixel
 * (in = L) next to reached pixels of lower levels, at D = 0. An entry takes the label of the
 * flood that arrived first: its lower neighbour with the least (level, D, label). */
static inline uint32_t LFN(ws_source_label)(const ws_job *J, int64_t p, uint32_t lv)
{
    ws_px *px = J->px;
    const uint32_t f = px[p].flags;
    if (f & WS_MARKER) return J->marker_of(J->markers, p);
    if (!(f & WS_ENTRY)) return 0;
    int64_t q[26];
    const int c = LFN(ws_nbs)(J, p, f & WS_BORDER, q);
    const ws_px *best = NULL;
    for (int k = 0; k < c; ++k) {
        const ws_px *r = &px[q[k]];
        if (!r->lab || r->level >= lv) continue;
        if (!best || r->level < best->level ||
            (r->level == best->level && (r->dist < best->dist || (r->dist == best->dist && r->lab < best->lab))))
            best = r;
    }
    return best ? best->lab : 0;
}

/* Breadth-first pass over the plateau of level lv from the queued sources: a pixel takes
 * D(q) + 1 from the first layer that reaches it and the smallest label of that layer. */
static void LFN(ws_bfs)(const ws_job *J, uint32_t lv, IDX *queue, int64_t nq)
{
    ws_px *px = J->px;
    for (int64_t head = 0; head < nq; ++head) {
        const int64_t p = (int64_t)queue[head];
        const uint32_t dq = px[p].dist + 1, lq = px[p].lab;
        int64_t q[26];
        const int c = LFN(ws_nbs)(J, p, px[p].flags & WS_BORDER, q);
        for (int k = 0; k < c; ++k) {
            ws_px *r = &px[q[k]];
            if (r->level != lv || (r->flags & (WS_INSIDE | WS_MARKER)) != WS_INSIDE) continue;
            if (!r->lab) {
                r->lab = lq;
                r->dist = dq;
                queue[nq++] = (IDX)q[k];
            } else if (r->dist == dq && lq < r->lab) {
                r->lab = lq; /* still queued: its layer comes after p's */
            }
        }
    }
}

/* Phase 2 on one region (pixels sorted by level): levels in increasing order; each level's
 * sources, then its plateau pass. @p queue has room for m pixels. */
static void LFN(ws_flood)(const ws_job *J, const IDX *order, IDX *queue, int64_t m)
{
    ws_px *px = J->px;
    for (int64_t a = 0; a < m;) {
        const uint32_t lv = px[order[a]].level;
        int64_t nq = 0, b = a;
        for (; b < m && px[order[b]].level == lv; ++b) {
            const int64_t p = (int64_t)order[b];
            const uint32_t l = LFN(ws_source_label)(J, p, lv);
            if (l) {
                px[p].lab = l;
                px[p].dist = 0;
                queue[nq++] = (IDX)p;
            }
        }
        LFN(ws_bfs)(J, lv, queue, nq);
        a = b;
    }
}

/* Regions [c0, c1) of the job (each independent of the others): sort, then flood. */
static void LFN(ws_regions)(void *arg, int64_t c0, int64_t c1, int worker)
{
    const ws_regions_job *R = arg;
    const ws_job *J = R->J;
    IDX *grp = R->grp, *srt = R->srt;
    for (int64_t c = c0; c < c1; ++c) {
        const int64_t a = R->start[c], m = R->start[c + 1] - a;
        int marked = 0; /* a region without a marker is never reached */
        for (int64_t j = 0; j < m && !marked; ++j) marked = (J->px[grp[a + j]].flags & WS_MARKER) != 0;
        if (!marked) continue;
        IDX *sorted = LFN(ws_sort)(J, grp + a, m, srt + a, grp + a, &R->scratch[worker]);
        LFN(ws_flood)(J, sorted, sorted == srt + a ? grp + a : srt + a, m);
    }
}

#undef L_CAT2
#undef L_CAT
#undef LFN
#undef L_NONE
#undef IDX
#undef ISUF
