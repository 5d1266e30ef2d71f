/*
 * cpu/label_impl.h - the CPU labeling, specialised on the index type (internal; included
 * only by cpu/labels.c, twice):
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

#undef L_CAT2
#undef L_CAT
#undef LFN
#undef L_NONE
#undef IDX
#undef ISUF
