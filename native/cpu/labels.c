/*
 * cpu/labels.c - the CPU backend's labeling and marker-controlled watershed.
 *
 * Label: union-find where every root is the smallest index of its set, built in bands of
 * whole rows (2D) or planes (3D), one per thread, then joined across the bands' seams; roots
 * are numbered in raster order by a prefix sum over the bands. 32-bit indices below 2^32 - 1
 * pixels, 64-bit above (label_impl.h, compiled twice).
 *
 * Watershed (iwpp.h's definition; ws_common in the design notes):
 *   1. level L = reconstruction by erosion of (in at the markers, max elsewhere) over
 *      (in inside the mask, max outside), with this backend's own reconstruction;
 *   2. pixels inside the mask sorted by L; per level, the markers and the entry pixels
 *      (in = L, next to a reached pixel of a lower level; they take the label of the least
 *      such (L, D, label): the flood that arrived first)
 *      start at D = 0, and a breadth-first pass over the level's plateau gives every other
 *      pixel of the level its exact D and the smallest label among those at that D;
 *   3. the output (and the watershed lines) in one pass, written only once nothing can fail.
 */
#include "cpu/cpu.h"
#include "cpu/pool.h"
#include "dispatch.h"
#include "neighborhood.h"

#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Threads get at least this many pixels each (smaller images run sequentially). */
#define LAB_PX_PER_THREAD ((int64_t)1 << 19)

/* A pixel's value as a key with the equality of the values (F32: -0 is 0). */
static inline uint32_t lab_key(const void *in, iwpp_type t, int64_t i)
{
    if (t == IWPP_U8) return ((const uint8_t *)in)[i];
    if (t == IWPP_U16) return ((const uint16_t *)in)[i];
    uint32_t u;
    memcpy(&u, (const float *)in + i, sizeof u);
    return (u << 1) ? u : 0u;
}

/* An F32 value as a key with the order of the values (-0 and +0 equal). */
static inline uint32_t f32_order_key(float v)
{
    uint32_t u;
    if (v == 0.0f) v = 0.0f;
    memcpy(&u, &v, sizeof u);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

typedef struct lab_job {
    const void *in;
    iwpp_type type;
    int64_t w, h, d;
    int equal;
    int nprev;         /* neighbours met before the centre in raster order */
    int off[13][3];
    int64_t delta[13]; /* their index offsets */
} lab_job;

enum { WS_INSIDE = 1, WS_MARKER = 2, WS_ENTRY = 4, WS_BORDER = 8 };

/* Everything the flood reads and writes about a pixel, in one record: the flood's accesses
 * are scattered (a level's pixels lie all over the image), so one cache line per pixel. */
typedef struct ws_px {
    uint32_t level; /* order key of L */
    uint32_t lab;   /* 0 = not reached */
    uint32_t dist;  /* D, where lab != 0 */
    uint32_t flags; /* WS_* */
} ws_px;

typedef struct ws_job {
    int64_t w, h, d, n;
    int nn;
    int off[26][3];
    int64_t delta[26];
    ws_px *px;
    const void *markers;
    uint32_t (*marker_of)(const void *markers, int64_t i);
    int two_pass; /* levels need both 16-bit digits (F32) */
} ws_job;

/* Per worker scratch of the region sorts. */
#define WS_SMALL_SORT 2048
typedef struct ws_scratch {
    int64_t *count;        /* 65537 radix counts */
    uint64_t *keys, *keys2; /* WS_SMALL_SORT (level, position) keys each */
} ws_scratch;

/* Stable LSD radix of @p m keys on their high 32 bits, 8 bits a pass; passes whose digit is
 * the same for every key are skipped. Returns a or b, whichever holds the result. */
static uint64_t *ws_small_sort(uint64_t *a, uint64_t *b, int64_t m)
{
    for (int shift = 32; shift < 64; shift += 8) {
        int64_t count[257] = {0};
        for (int64_t j = 0; j < m; ++j) count[((a[j] >> shift) & 0xFF) + 1]++;
        if (count[((a[0] >> shift) & 0xFF) + 1] == m) continue;
        for (int k = 0; k < 256; ++k) count[k + 1] += count[k];
        for (int64_t j = 0; j < m; ++j) b[count[(a[j] >> shift) & 0xFF]++] = a[j];
        uint64_t *t = a;
        a = b;
        b = t;
    }
    return a;
}

/* The regions of the flood: connected components of the mask (independent of each other),
 * their pixels grouped in grp (raster order within a region). */
typedef struct ws_regions_job {
    const ws_job *J;
    void *grp, *srt;       /* IDX arrays of n */
    const int64_t *start;  /* region c: grp[start[c] .. start[c + 1]) */
    ws_scratch *scratch;   /* per worker */
} ws_regions_job;

static uint32_t marker_u16(const void *m, int64_t i) { return ((const uint16_t *)m)[i]; }
static uint32_t marker_u32(const void *m, int64_t i) { return ((const uint32_t *)m)[i]; }

static int cmp_idx_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}
static int cmp_idx_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

#define IDX uint32_t
#define ISUF u32
#include "cpu/label_impl.h"
#define IDX uint64_t
#define ISUF u64
#include "cpu/label_impl.h"

/* ---------------------------------------------------------------- label */

typedef struct lab_run {
    const lab_job *J;
    const int64_t *band_lo;
    int64_t *first; /* per band: labels before it (step 4), or its root count */
    void *par;
    void *out;
    int wide, u16, step;
} lab_run;

static void lab_bands(void *arg, int64_t b0, int64_t b1, int worker)
{
    (void)worker;
    const lab_run *R = arg;
    for (int64_t b = b0; b < b1; ++b) {
        const int64_t lo = R->band_lo[b], hi = R->band_lo[b + 1];
        if (R->wide) {
            uint64_t *par = R->par;
            if (R->step == 1) uf_band_u64(R->J, lo, hi, par);
            else if (R->step == 3) uf_flatten_u64(lo, hi, par), R->first[b] = uf_count_roots_u64(lo, hi, par);
            else if (R->step == 4) uf_write_roots_u64(lo, hi, R->first[b], par, R->out, R->u16);
            else uf_write_rest_u64(lo, hi, par, R->out, R->u16);
        } else {
            uint32_t *par = R->par;
            if (R->step == 1) uf_band_u32(R->J, lo, hi, par);
            else if (R->step == 3) uf_flatten_u32(lo, hi, par), R->first[b] = uf_count_roots_u32(lo, hi, par);
            else if (R->step == 4) uf_write_roots_u32(lo, hi, R->first[b], par, R->out, R->u16);
            else uf_write_rest_u32(lo, hi, par, R->out, R->u16);
        }
    }
}

static void lab_job_init(lab_job *J, const iwpp_buf *in, int connectivity, int equal)
{
    int off[26][3];
    const int nn = iwpp_neighbors(connectivity, in->d == 1, off);
    J->in = in->ptr;
    J->type = in->type;
    J->w = in->w, J->h = in->h, J->d = in->d;
    J->equal = equal;
    J->nprev = nn / 2;
    for (int k = 0; k < J->nprev; ++k) {
        memcpy(J->off[k], off[k], sizeof off[k]);
        J->delta[k] = off[k][0] + in->w * (off[k][1] + in->h * off[k][2]);
    }
}

iwpp_status iwpp_cpu_label(iwpp_context *ctx, const iwpp_buf *in, int connectivity, iwpp_label_mode mode,
                           iwpp_buf *labels, int64_t *count)
{
    const double t0 = iwpp_now_ms();
    const int64_t n = iwpp_buf_count(in), lines = in->d > 1 ? in->d : in->h, line = n / lines;
    const int wide = n >= (int64_t)UINT32_MAX;
    const int nt = iwpp_cpu_threads_for(ctx, n, LAB_PX_PER_THREAD);
    const int nb = (int)(nt < lines ? nt : lines);
    lab_job J;
    lab_job_init(&J, in, connectivity, mode == IWPP_LABEL_EQUAL);
    int64_t *band_lo = malloc((size_t)(2 * nb + 2) * sizeof *band_lo);
    void *par = malloc((size_t)(n ? n : 1) * (wide ? 8 : 4));
    if (!band_lo || !par) {
        free(band_lo);
        free(par);
        return iwpp_set_error(ctx, IWPP_ENOMEM, "out of host memory for the labeling of %lld pixels (%.1f MiB)",
                              (long long)n, (double)n * (wide ? 8 : 4) / 1048576.0);
    }
    int64_t *first = band_lo + nb + 1;
    for (int b = 0; b <= nb; ++b) band_lo[b] = lines * b / nb * line;
    lab_run R = {&J, band_lo, first, par, labels->ptr, wide, labels->type == IWPP_U16, 1};
    iwpp_par_for(nt, nb, 1, lab_bands, &R);
    iwpp_status st = wide ? uf_seams_u64(&J, band_lo, nb, par) : uf_seams_u32(&J, band_lo, nb, par);
    if (st) {
        free(band_lo);
        free(par);
        return iwpp_set_error(ctx, st, "out of host memory joining the bands of a labeling");
    }
    R.step = 3;
    iwpp_par_for(nt, nb, 1, lab_bands, &R);
    int64_t total = 0;
    for (int b = 0; b < nb; ++b) {
        const int64_t c = first[b];
        first[b] = total;
        total += c;
    }
    if (labels->type == IWPP_U16 && total > 65535) {
        free(band_lo);
        free(par);
        return iwpp_labels_overflow(ctx, total);
    }
    R.step = 4; /* nothing can fail from here: the output may be the caller's view */
    iwpp_par_for(nt, nb, 1, lab_bands, &R);
    R.step = 5;
    iwpp_par_for(nt, nb, 1, lab_bands, &R);
    free(band_lo);
    free(par);
    *count = total;
    strcpy(ctx->stats.variant, "union-find");
    ctx->stats.compute_ms = iwpp_now_ms() - t0;
    return IWPP_OK;
}

/* ---------------------------------------------------------------- watershed */

typedef struct ws_setup {
    const iwpp_buf *in, *markers, *mask;
    void *g, *m;          /* phase 1: mask and marker of the reconstruction (type of in) */
    ws_px *px;            /* phase 2 */
    int u16;
} ws_setup;

static inline int ws_marked(const ws_setup *S, int64_t i)
{
    return S->u16 ? ((const uint16_t *)S->markers->ptr)[i] != 0 : ((const uint32_t *)S->markers->ptr)[i] != 0;
}

/* g = in inside the mask, max outside; m = in at the markers inside the mask, max elsewhere. */
#define WS_PREPARE(T, TOP)                                                                     \
    do {                                                                                       \
        const T *f = S->in->ptr;                                                               \
        T *g = S->g, *m = S->m;                                                                \
        for (int64_t i = i0; i < i1; ++i) {                                                    \
            const int inside = !mk || mk[i];                                                   \
            g[i] = inside ? f[i] : (TOP);                                                      \
            m[i] = inside && ws_marked(S, i) ? f[i] : (TOP);                                   \
        }                                                                                      \
    } while (0)

static void ws_prepare_range(void *arg, int64_t i0, int64_t i1, int worker)
{
    (void)worker;
    const ws_setup *S = arg;
    const uint8_t *mk = S->mask ? S->mask->ptr : NULL;
    if (S->in->type == IWPP_U8) WS_PREPARE(uint8_t, UINT8_MAX);
    else if (S->in->type == IWPP_U16) WS_PREPARE(uint16_t, UINT16_MAX);
    else WS_PREPARE(float, INFINITY);
}

/* The flood's pixel records from L (in S->m), in rows (the border flag needs coordinates). */
#define WS_KEYS(T, KEY)                                                                        \
    do {                                                                                       \
        const T *f = S->in->ptr, *L = S->m;                                                    \
        for (int64_t x = 0, i = r * w; x < w; ++x, ++i) {                                      \
            const int inside = !mk || mk[i];                                                   \
            const uint32_t border = (edge_row || x == 0 || x == w - 1) ? WS_BORDER : 0;        \
            S->px[i].level = KEY(L[i]);                                                        \
            S->px[i].lab = 0;                                                                  \
            S->px[i].dist = 0;                                                                 \
            S->px[i].flags = (inside ? WS_INSIDE : 0) | (inside && ws_marked(S, i) ? WS_MARKER : 0) | \
                             (f[i] == L[i] ? WS_ENTRY : 0) | border;                           \
        }                                                                                      \
    } while (0)
#define WS_KEY_INT(v) ((uint32_t)(v))

static void ws_keys_rows(void *arg, int64_t r0, int64_t r1, int worker)
{
    (void)worker;
    const ws_setup *S = arg;
    const uint8_t *mk = S->mask ? S->mask->ptr : NULL;
    const int64_t w = S->in->w, h = S->in->h, d = S->in->d;
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t y = r % h, z = r / h;
        const int edge_row = y == 0 || y == h - 1 || (d > 1 && (z == 0 || z == d - 1));
        if (S->in->type == IWPP_U8) WS_KEYS(uint8_t, WS_KEY_INT);
        else if (S->in->type == IWPP_U16) WS_KEYS(uint16_t, WS_KEY_INT);
        else WS_KEYS(float, f32_order_key);
    }
}

static iwpp_status ws_nomem(iwpp_context *ctx, const iwpp_buf *in)
{
    return iwpp_set_error(ctx, IWPP_ENOMEM, "out of host memory for the levels of a watershed of a %lldx%lldx%lld image",
                          (long long)in->w, (long long)in->h, (long long)in->d);
}

/* Phase 1 and the pixel records: S->px allocated and filled. */
static iwpp_status ws_levels(iwpp_context *ctx, ws_setup *S, int connectivity)
{
    const iwpp_buf *in = S->in;
    const int64_t n = iwpp_buf_count(in);
    const size_t es = iwpp_type_size(in->type);
    const int nt = iwpp_cpu_threads_for(ctx, n, (int64_t)1 << 22);
    S->g = malloc((size_t)n * es + 1);
    S->m = malloc((size_t)n * es + 1);
    if (!S->g || !S->m) return ws_nomem(ctx, in);
    iwpp_par_for(nt, n, (int64_t)1 << 16, ws_prepare_range, S);
    iwpp_buf bm = {in->type, in->w, in->h, in->d, S->m, NULL}, bg = {in->type, in->w, in->h, in->d, S->g, NULL};
    iwpp_status st = iwpp_cpu_reconstruct(ctx, &bm, &bg, connectivity, IWPP_BY_EROSION);
    free(S->g);
    S->g = NULL;
    if (st) return st;
    if ((st = iwpp_progress_report(ctx, 0.5))) return st;
    S->px = malloc((size_t)n * sizeof *S->px + 16);
    if (!S->px) return ws_nomem(ctx, in);
    iwpp_par_for(nt, in->h * in->d, 64, ws_keys_rows, S);
    free(S->m);
    S->m = NULL;
    return IWPP_OK;
}

typedef struct ws_out {
    const ws_job *J;
    void *out;
    int u16, lines;
} ws_out;

/* The output rows [r0, r1): the label, or 0 on a watershed line (iwpp.h's rule). */
static void ws_out_rows(void *arg, int64_t r0, int64_t r1, int worker)
{
    (void)worker;
    const ws_out *O = arg;
    const ws_job *J = O->J;
    const ws_px *px = J->px;
    for (int64_t r = r0; r < r1; ++r)
        for (int64_t p = r * J->w; p < (r + 1) * J->w; ++p) {
            uint32_t v = px[p].lab;
            if (O->lines && v && !(px[p].flags & WS_MARKER)) {
                int64_t q[26];
                const int c = ws_nbs_u64(J, p, px[p].flags & WS_BORDER, q);
                for (int k = 0; k < c && v; ++k) {
                    const ws_px *a = &px[q[k]], *b = &px[p];
                    if (!a->lab || a->lab == b->lab) continue;
                    if (a->level < b->level ||
                        (a->level == b->level && (a->dist < b->dist || (a->dist == b->dist && a->lab < b->lab))))
                        v = 0;
                }
            }
            if (O->u16) ((uint16_t *)O->out)[p] = (uint16_t)v;
            else ((uint32_t *)O->out)[p] = v;
        }
}

static void ws_job_init(ws_job *J, const ws_setup *S, int connectivity)
{
    const iwpp_buf *in = S->in;
    J->w = in->w, J->h = in->h, J->d = in->d, J->n = iwpp_buf_count(in);
    J->nn = iwpp_neighbors(connectivity, in->d == 1, J->off);
    for (int k = 0; k < J->nn; ++k) J->delta[k] = J->off[k][0] + in->w * (J->off[k][1] + in->h * J->off[k][2]);
    J->px = S->px;
    J->markers = S->markers->ptr;
    J->marker_of = S->u16 ? marker_u16 : marker_u32;
    J->two_pass = in->type == IWPP_F32;
}

/* Counting and scattering of ws_group, by rows in parallel (atomic counters per region; the
 * order of a region's pixels does not change the flood's result). */
typedef struct ws_group_job {
    const ws_job *J;
    const uint32_t *comp; /* region + 1 per pixel; NULL = one region */
    _Atomic int64_t *pos;
    void *grp;
    int wide, scatter;
} ws_group_job;

static void ws_group_rows(void *arg, int64_t r0, int64_t r1, int worker)
{
    (void)worker;
    const ws_group_job *G = arg;
    const ws_px *px = G->J->px;
    for (int64_t i = r0 * G->J->w; i < r1 * G->J->w; ++i) {
        if (!(px[i].flags & WS_INSIDE)) continue;
        const int64_t c = G->comp ? G->comp[i] - 1 : 0;
        if (!G->scatter) {
            atomic_fetch_add_explicit(&G->pos[c + 1], 1, memory_order_relaxed);
            continue;
        }
        const int64_t at = atomic_fetch_add_explicit(&G->pos[c], 1, memory_order_relaxed);
        if (G->wide) ((uint64_t *)G->grp)[at] = (uint64_t)i;
        else ((uint32_t *)G->grp)[at] = (uint32_t)i;
    }
}

/* Group the pixels inside the mask by region into R->grp: the mask's connected components
 * (labelled with this backend's own labeling), or one region without a mask (or on images of
 * 2^32 pixels and more). Fills *nreg and R->start (the caller frees it). */
static iwpp_status ws_group(iwpp_context *ctx, const ws_setup *S, int connectivity, int wide, ws_regions_job *R,
                            int64_t *nreg)
{
    const ws_job *J = R->J;
    const int64_t n = J->n;
    const int nt = iwpp_cpu_threads_for(ctx, n, LAB_PX_PER_THREAD);
    int64_t K = 1;
    uint32_t *comp = NULL;
    iwpp_status st;
    if (S->mask && !wide) {
        comp = malloc((size_t)n * sizeof *comp + 4);
        iwpp_buf lb = {IWPP_U32, J->w, J->h, J->d, comp, NULL};
        if (!comp) return iwpp_set_error(ctx, IWPP_ENOMEM, "out of host memory for the regions of a watershed");
        if ((st = iwpp_cpu_label(ctx, S->mask, connectivity, IWPP_LABEL_BINARY, &lb, &K))) {
            free(comp);
            return st;
        }
    }
    int64_t *start = malloc(((size_t)K + 2) * sizeof *start);
    _Atomic int64_t *pos = malloc(((size_t)K + 2) * sizeof *pos);
    if (!start || !pos) {
        free(comp), free(start), free((void *)pos);
        return iwpp_set_error(ctx, IWPP_ENOMEM, "out of host memory for the regions of a watershed");
    }
    for (int64_t c = 0; c < K + 2; ++c) atomic_init(&pos[c], 0);
    ws_group_job G = {J, comp, pos, R->grp, wide, 0};
    iwpp_par_for(nt, J->h * J->d, 64, ws_group_rows, &G);
    start[0] = 0;
    for (int64_t c = 0; c < K; ++c) start[c + 1] = start[c] + atomic_load(&pos[c + 1]);
    for (int64_t c = 0; c < K; ++c) atomic_store(&pos[c], start[c]);
    G.scatter = 1;
    iwpp_par_for(nt, J->h * J->d, 64, ws_group_rows, &G);
    free(comp);
    free((void *)pos);
    R->start = start;
    *nreg = K;
    return IWPP_OK;
}

/* Phase 2 (regions in parallel) and the output, on the records of ws_levels. */
static iwpp_status ws_flood(iwpp_context *ctx, const ws_setup *S, ws_job *J, int connectivity, int lines,
                            iwpp_buf *labels)
{
    const int64_t n = J->n;
    const int wide = n >= (int64_t)UINT32_MAX;
    const size_t is = wide ? 8 : 4;
    const int nt = iwpp_cpu_threads_for(ctx, n, LAB_PX_PER_THREAD);
    ws_regions_job R = {J, malloc((size_t)n * is + 8), malloc((size_t)n * is + 8), NULL,
                        calloc((size_t)nt, sizeof(ws_scratch))};
    int64_t K = 0;
    iwpp_status st = IWPP_OK;
    int ok = R.grp && R.srt && R.scratch;
    for (int t = 0; ok && t < nt; ++t) {
        R.scratch[t].count = malloc(65537 * sizeof(int64_t));
        R.scratch[t].keys = malloc(2 * WS_SMALL_SORT * sizeof(uint64_t));
        R.scratch[t].keys2 = R.scratch[t].keys + WS_SMALL_SORT;
        ok = R.scratch[t].count && R.scratch[t].keys;
    }
    if (!ok)
        st = iwpp_set_error(ctx, IWPP_ENOMEM, "out of host memory for the flood of a watershed of %lld pixels",
                            (long long)n);
    if (!st && !(st = ws_group(ctx, S, connectivity, wide, &R, &K)) && !(st = iwpp_progress_report(ctx, 0.6)))
        iwpp_par_for(nt, K, 1, wide ? ws_regions_u64 : ws_regions_u32, &R);
    for (int t = 0; R.scratch && t < nt; ++t) free(R.scratch[t].count), free(R.scratch[t].keys);
    free(R.scratch), free(R.grp), free(R.srt), free((void *)R.start);
    if (st == IWPP_OK && !(st = iwpp_progress_report(ctx, 0.9))) {
        ws_out O = {J, labels->ptr, labels->type == IWPP_U16, lines};
        iwpp_par_for(iwpp_cpu_threads_for(ctx, n, (int64_t)1 << 20), J->h * J->d, 64, ws_out_rows, &O);
    }
    return st;
}

iwpp_status iwpp_cpu_watershed(iwpp_context *ctx, const iwpp_buf *in, const iwpp_buf *markers,
                               const iwpp_buf *mask, int connectivity, int lines, iwpp_buf *labels)
{
    const double t0 = iwpp_now_ms();
    ws_setup S = {in, markers, mask, NULL, NULL, NULL, markers->type == IWPP_U16};
    iwpp_status st = ws_levels(ctx, &S, connectivity);
    ws_job J;
    if (st == IWPP_OK) {
        ws_job_init(&J, &S, connectivity);
        st = ws_flood(ctx, &S, &J, connectivity, lines, labels);
    }
    free(S.g);
    free(S.m);
    free(S.px);
    if (st) return st;
    strcpy(ctx->stats.variant, "ordered-flood");
    ctx->stats.compute_ms = iwpp_now_ms() - t0;
    return IWPP_OK;
}
