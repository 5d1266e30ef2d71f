/*
 * cpu/watershed.c - the CPU backend's marker-controlled watershed (iwpp.h's definition).
 *
 * One priority flood per region (a connected set of mask pixels holding a marker), without
 * the reconstruction or a global sort. From a marker pixel met in raster order, the region is
 * searched by runs along rows (its pixels, keys and markers read row by row), its distinct
 * values ranked (a hash of the keys, a radix sort when there are many), then flooded while it
 * is in cache: levels in increasing rank, each with a bucket of as many slots as the region has
 * pixels of that value, and each level as breadth-first layers (D = 0: the bucket, that is
 * the level's markers and the pixels climbed into it; then D = 1, 2, ...). A pixel's label is
 * written when it is reached and lowered by its reaching layer only.
 *
 * Why this is the definition: the candidate (L, D) a neighbour q offers p is
 * (max(L_q, in_p), in_p > L_q ? 0 : D_q + 1), strictly above (L_q, D_q) and non-decreasing in
 * (L_q, D_q); pixels leave in non-decreasing (L, D) (a climb goes to the bucket of a higher
 * level, a plateau step to the next layer), so the first neighbour to reach p offers p's least
 * (L, D): it is final when p is reached (Dijkstra), and p enters the queue once. Among the
 * neighbours offering that (L, D), iwpp.h's tuple takes the least (L_q, D_q), then the least
 * label: after a climb every layer before p's reaching one offered none (else it would have
 * reached p), and the later ones have a larger (L_q, D_q); after a plateau step (L_q, D_q) =
 * (L_p, D_p - 1) is that one layer. So p keeps the smallest label of the layer that reached it:
 * each layer stamps the pixels it reaches, and only a pixel with the current stamp takes a
 * smaller label. Markers are fixed at (in, 0). Regions never meet, so their order is free.
 *
 * With 3 threads or more the mask's components (this backend's labeling) are flooded in
 * parallel. The labels go straight into the output (all scratch is allocated before); the
 * watershed lines, if asked, are a pass over the final labels, levels and distances.
 */
#define _GNU_SOURCE /* madvise, MADV_HUGEPAGE */
#include "cpu/cpu.h"
#include "cpu/pool.h"
#include "dispatch.h"
#include "neighborhood.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

enum { WS_FIXED = 1, WS_FIRST_STAMP = 2 }; /* stamps below the flag bits; 0 = not searched */

typedef struct ws_job {
    const void *in;
    iwpp_type type;
    const uint8_t *mask; /* NULL = everywhere */
    const void *markers;
    void *out;
    int u16; /* markers and out: U16 (else U32) */
    int64_t w, h, d, n;
    int nn;
    int off[26][3];
    int64_t delta[26];
    int nrows;
    int rows[8][4]; /* rows holding neighbours: dy, dz, least and largest dx */
    uint32_t *lev, *dist; /* per pixel, for the lines only (else NULL) */
} ws_job;

/* A pixel's value as a key with the order of the values (F32: -0 and +0 equal). */
static inline uint32_t ws_key(const ws_job *J, int64_t i)
{
    if (J->type == IWPP_U8) return ((const uint8_t *)J->in)[i];
    if (J->type == IWPP_U16) return ((const uint16_t *)J->in)[i];
    float v = ((const float *)J->in)[i];
    uint32_t u;
    if (v == 0.0f) v = 0.0f;
    memcpy(&u, &v, sizeof u);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

static inline uint32_t ws_marker(const ws_job *J, int64_t i)
{
    return J->u16 ? ((const uint16_t *)J->markers)[i] : ((const uint32_t *)J->markers)[i];
}

static inline uint32_t ws_label_of(const void *out, int u16, int64_t i)
{
    return u16 ? ((const uint16_t *)out)[i] : ((const uint32_t *)out)[i];
}

static inline void ws_label_to(void *out, int u16, int64_t i, uint32_t v)
{
    if (u16) ((uint16_t *)out)[i] = (uint16_t)v;
    else ((uint32_t *)out)[i] = v;
}

static inline uint32_t ws_get_label(const ws_job *J, int64_t i) { return ws_label_of(J->out, J->u16, i); }

static inline void ws_set_label(const ws_job *J, int64_t i, uint32_t v) { ws_label_to(J->out, J->u16, i, v); }

/* Zeroed memory for the stamps. On Linux in huge pages where the system offers them: the
 * stamps are first touched region by region, and a fault per 4 KiB page cost more than the
 * flood of its pixels. */
static void *ws_zalloc(size_t bytes, size_t *mapped)
{
    *mapped = 0;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes >= ((size_t)8 << 20)) {
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED) {
            madvise(p, bytes, MADV_HUGEPAGE);
            *mapped = bytes;
            return p;
        }
    }
#endif
    return calloc(bytes, 1);
}

static void ws_zfree(void *p, size_t mapped)
{
    (void)mapped;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (mapped) {
        munmap(p, mapped);
        return;
    }
#endif
    free(p);
}

/* The first pixel in [p, end) with a marker (end if none), a word at a time: markers are
 * sparse. */
static int64_t ws_next_marker(const ws_job *J, int64_t p, int64_t end)
{
    if (J->u16) {
        const uint16_t *m = J->markers;
        for (uint64_t v = 0, u = 0; p + 8 <= end; p += 8) {
            memcpy(&v, m + p, 8);
            memcpy(&u, m + p + 4, 8);
            if (v | u) break;
        }
        while (p < end && !m[p]) ++p;
    } else {
        const uint32_t *m = J->markers;
        for (uint64_t v = 0, u = 0; p + 4 <= end; p += 4) {
            memcpy(&v, m + p, 8);
            memcpy(&u, m + p + 2, 8);
            if (v | u) break;
        }
        while (p < end && !m[p]) ++p;
    }
    return p;
}

/* Row base's span [a - 1, b + 1] of the arrays a run's search reads next: fetched while the
 * runs queued before are searched, rather than missed there one row at a time. */
static inline void ws_prefetch_span(const ws_job *J, const void *st, size_t ss, int64_t base, int64_t a, int64_t b)
{
    const size_t es = J->type == IWPP_U8 ? 1 : J->type == IWPP_U16 ? 2 : 4, ls = J->u16 ? 2 : 4;
    const int64_t i0 = base + (a > 0 ? a - 1 : 0), i1 = base + (b < J->w - 1 ? b + 1 : b);
    for (int64_t i = i0; i <= i1 + 15; i += 16) {
        const int64_t k = i < i1 ? i : i1;
        __builtin_prefetch((const char *)J->in + (size_t)k * es);
        __builtin_prefetch((const char *)J->markers + (size_t)k * ls);
        __builtin_prefetch((const char *)st + (size_t)k * ss);
        if (J->mask) __builtin_prefetch(J->mask + k);
    }
}

/* The distinct keys of a region, when it has at most half as many as the table's size
 * (usual: tens of levels per nucleus): ranking them costs a probe per pixel, not a sort. */
#define WS_HASH_BITS 13
#define WS_HASH_SIZE (1u << WS_HASH_BITS)
typedef struct ws_hash {
    uint32_t key[WS_HASH_SIZE], cnt[WS_HASH_SIZE], rank[WS_HASH_SIZE]; /* cnt 0: empty slot */
    uint32_t used[WS_HASH_SIZE / 2];
    uint64_t order[WS_HASH_SIZE / 2]; /* key << 32 | slot */
} ws_hash;

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void ws_order_keys(uint64_t *v, uint32_t n) { qsort(v, n, sizeof *v, cmp_u64); }

#define IDX uint32_t
#define ISUF u32
#include "cpu/watershed_impl.h"
#define IDX uint64_t
#define ISUF u64
#include "cpu/watershed_impl.h"

typedef struct ws_init {
    const ws_job *J;
    void *st;
    int wide;
} ws_init;

/* Rows [r0, r1): output 0, the border flag on the image's border pixels (the stamps come
 * zeroed). */
static void ws_init_rows(void *arg, int64_t r0, int64_t r1, int worker)
{
    (void)worker;
    const ws_init *I = arg;
    const ws_job *J = I->J;
    const int64_t w = J->w;
    memset((char *)J->out + r0 * w * (J->u16 ? 2 : 4), 0, (size_t)((r1 - r0) * w * (J->u16 ? 2 : 4)));
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t y = r % J->h, z = r / J->h;
        const int edge = y == 0 || y == J->h - 1 || (J->d > 1 && (z == 0 || z == J->d - 1));
        for (int64_t x = 0; x < w; x = edge || x == w - 1 ? x + 1 : w - 1) {
            if (I->wide) ((uint64_t *)I->st)[r * w + x] = (uint64_t)1 << 63;
            else ((uint32_t *)I->st)[r * w + x] = (uint32_t)1 << 31;
        }
    }
}

/* (L, D, label) of a before that of b (both labelled). */
static inline int ws_before(const ws_job *J, int64_t a, int64_t b)
{
    if (J->lev[a] != J->lev[b]) return J->lev[a] < J->lev[b];
    if (J->dist[a] != J->dist[b]) return J->dist[a] < J->dist[b];
    return ws_get_label(J, a) < ws_get_label(J, b);
}

typedef struct ws_lines {
    const ws_job *J;
    uint8_t *line;   /* 1: becomes 0 */
    const void *st;  /* the stamps, for their border flag */
    int pass, wide;
} ws_lines;

/* Pass 0: flag the non-marker pixels with a neighbour of another label and a smaller
 * (L, D, label) (iwpp.h's lines rule, on the final labels); pass 1: zero them. */
static void ws_lines_rows(void *arg, int64_t r0, int64_t r1, int worker)
{
    (void)worker;
    const ws_lines *Ls = arg;
    const ws_job *J = Ls->J;
    for (int64_t p = r0 * J->w; p < r1 * J->w; ++p) {
        if (Ls->pass) {
            if (Ls->line[p]) ws_set_label(J, p, 0);
            continue;
        }
        const uint32_t v = ws_get_label(J, p);
        Ls->line[p] = 0;
        if (!v || ws_marker(J, p)) continue; /* labelled: inside the mask */
        uint64_t q[26];
        const int border = Ls->wide ? ((const uint64_t *)Ls->st)[p] >> 63 : ((const uint32_t *)Ls->st)[p] >> 31;
        const int c = ws_nbs_u64(J, (uint64_t)p, border, q);
        for (int k = 0; k < c && !Ls->line[p]; ++k) {
            const int64_t r = (int64_t)q[k];
            const uint32_t u = ws_get_label(J, r);
            if (u && u != v && ws_before(J, r, p)) Ls->line[p] = 1;
        }
    }
}

static void ws_job_init(ws_job *J, const iwpp_buf *in, const iwpp_buf *markers, const iwpp_buf *mask,
                        int connectivity, iwpp_buf *labels)
{
    memset(J, 0, sizeof *J);
    J->in = in->ptr;
    J->type = in->type;
    J->mask = mask ? mask->ptr : NULL;
    J->markers = markers->ptr;
    J->out = labels->ptr;
    J->u16 = labels->type == IWPP_U16;
    J->w = in->w, J->h = in->h, J->d = in->d, J->n = iwpp_buf_count(in);
    J->nn = iwpp_neighbors(connectivity, in->d == 1, J->off);
    for (int k = 0; k < J->nn; ++k) J->delta[k] = J->off[k][0] + in->w * (J->off[k][1] + in->h * J->off[k][2]);
    for (int k = 0; k < J->nn; ++k) {
        const int dx = J->off[k][0], dy = J->off[k][1], dz = J->off[k][2];
        if (!dy && !dz) continue; /* the same row: its run */
        int j = 0;
        while (j < J->nrows && (J->rows[j][0] != dy || J->rows[j][1] != dz)) ++j;
        if (j == J->nrows) J->rows[j][0] = dy, J->rows[j][1] = dz, J->rows[j][2] = J->rows[j][3] = dx, ++J->nrows;
        J->rows[j][2] = dx < J->rows[j][2] ? dx : J->rows[j][2];
        J->rows[j][3] = dx > J->rows[j][3] ? dx : J->rows[j][3];
    }
}

/* A worker's scratch: the seven arrays of ws_scr (each of cap + 1 entries, touched only a
 * region's worth at a time) and the hash table. */
typedef struct ws_mem {
    void *a[7];
    ws_hash *hash;
} ws_mem;

static int ws_mem_alloc(ws_mem *M, int wide, int64_t cap)
{
    const size_t is = wide ? 8 : 4;
    int ok = (M->hash = calloc(1, sizeof *M->hash)) != NULL;
    for (int k = 0; k < 7; ++k) ok &= (M->a[k] = malloc((size_t)(cap + 1) * (k == 3 ? 4 : is))) != NULL;
    return ok;
}

static void ws_mem_free(ws_mem *M)
{
    for (int k = 0; k < 7; ++k) free(M->a[k]);
    free(M->hash);
}

static ws_scr_u32 ws_scr32(const ws_mem *M, int64_t cap)
{
    ws_scr_u32 S = {M->a[0], M->a[1], M->a[2], M->a[3], M->a[4], M->a[5], M->a[6], M->hash, (uint32_t)cap};
    return S;
}

/* Threads flood whole regions: the mask's components (labelled first), each claimed by the
 * worker that meets one of its markers first; a region larger than a worker's scratch is left
 * to the sequential pass that follows. */
#define WS_PAR_THREADS 3
typedef struct ws_par {
    const ws_job *J;
    uint32_t *st;
    const ws_mem *mem; /* per worker */
    int64_t cap;
    const uint32_t *comp;
    _Atomic unsigned char *claimed; /* per component */
} ws_par;

static void ws_par_rows(void *arg, int64_t r0, int64_t r1, int worker)
{
    const ws_par *P = arg;
    const ws_job *J = P->J;
    ws_scr_u32 S = ws_scr32(&P->mem[worker], P->cap);
    const int64_t end = r1 * J->w;
    for (int64_t p = ws_next_marker(J, r0 * J->w, end); p < end; p = ws_next_marker(J, p + 1, end)) {
        if (!J->mask[p]) continue;
        _Atomic unsigned char *c = &P->claimed[P->comp[p] - 1];
        if (atomic_load_explicit(c, memory_order_relaxed) || atomic_exchange_explicit(c, 1, memory_order_relaxed))
            continue;
        const uint32_t m = ws_region_u32(J, P->st, &S, (uint32_t)p);
        if (m) ws_flood_u32(J, P->st, &S, ws_levels_u32(J, P->st, &S, m));
    }
}

/* The mask's components into P->comp and the claims (before anything is written). */
static iwpp_status ws_par_prepare(iwpp_context *ctx, const iwpp_buf *mask, int connectivity, ws_par *P)
{
    const int64_t n = iwpp_buf_count(mask);
    uint32_t *comp = malloc((size_t)n * 4 + 4);
    iwpp_buf lb = {IWPP_U32, mask->w, mask->h, mask->d, comp, NULL, 0};
    int64_t K = 0;
    iwpp_status st = comp ? iwpp_cpu_label(ctx, mask, connectivity, IWPP_LABEL_BINARY, &lb, &K) : IWPP_ENOMEM;
    P->comp = comp;
    if (!st && !(P->claimed = calloc((size_t)K + 1, 1))) st = IWPP_ENOMEM;
    if (st == IWPP_ENOMEM) iwpp_set_error(ctx, st, "out of host memory for the regions of a watershed");
    return st;
}

static void ws_flood_all(const ws_job *J, void *st, int wide, ws_mem *mem, ws_par *P, int nt)
{
    if (wide) {
        ws_scr_u64 S = {mem[0].a[0], mem[0].a[1], mem[0].a[2], mem[0].a[3], mem[0].a[4], mem[0].a[5], mem[0].a[6],
                        mem[0].hash, (uint64_t)J->n};
        ws_all_u64(J, st, &S, 0, J->n);
        return;
    }
    if (P) iwpp_par_for(nt, J->h * J->d, 16, ws_par_rows, P);
    ws_scr_u32 S = ws_scr32(&mem[0], J->n);
    ws_all_u32(J, st, &S, 0, J->n); /* the regions left (all without threads) */
}

iwpp_status iwpp_cpu_watershed(iwpp_context *ctx, const iwpp_buf *in, const iwpp_buf *markers,
                               const iwpp_buf *mask, int connectivity, int lines, iwpp_buf *labels)
{
    const double t0 = iwpp_now_ms();
    ws_job J;
    ws_job_init(&J, in, markers, mask, connectivity, labels);
    const int64_t n = J.n;
    const int wide = n >= ((int64_t)1 << 30) - 8; /* stamps and ranks below the two flag bits */
    const int nt = iwpp_cpu_threads_for(ctx, n, (int64_t)1 << 20);
    const int par = !wide && mask && nt >= WS_PAR_THREADS, nw = par ? nt : 1;
    ws_par P = {&J, NULL, NULL, n / (4 * nt) > (1 << 16) ? n / (4 * nt) : (1 << 16), NULL, NULL};
    iwpp_status status = par ? ws_par_prepare(ctx, mask, connectivity, &P) : IWPP_OK;
    size_t st_mapped;
    void *st = ws_zalloc(((size_t)n + 1) * (wide ? 8 : 4), &st_mapped);
    ws_mem *mem = calloc((size_t)nw, sizeof *mem);
    int ok = st && mem;
    for (int w = 0; ok && w < nw; ++w) ok = ws_mem_alloc(&mem[w], wide, w ? P.cap : n);
    uint8_t *line = NULL;
    if (lines) {
        ok &= (J.lev = malloc((size_t)n * 4 + 4)) != NULL;
        ok &= (J.dist = malloc((size_t)n * 4 + 4)) != NULL;
        ok &= (line = malloc((size_t)n + 1)) != NULL;
    }
    if (!status && !ok)
        status = iwpp_set_error(ctx, IWPP_ENOMEM, "out of host memory for the flood of a watershed of %lld pixels",
                                (long long)n);
    if (!status) status = iwpp_progress_report(ctx, 0.2); /* the last chance to cancel: the output is next */
    if (!status) {
        ws_init I = {&J, st, wide};
        iwpp_par_for(nt, J.h * J.d, 64, ws_init_rows, &I);
        P.st = st, P.mem = mem;
        ws_flood_all(&J, st, wide, mem, par ? &P : NULL, nt);
        if (lines) {
            ws_lines Ls = {&J, line, st, 0, wide};
            iwpp_par_for(nt, J.h * J.d, 64, ws_lines_rows, &Ls);
            Ls.pass = 1;
            iwpp_par_for(nt, J.h * J.d, 64, ws_lines_rows, &Ls);
        }
    }
    for (int w = 0; mem && w < nw; ++w) ws_mem_free(&mem[w]);
    free(mem);
    free((void *)P.comp);
    free((void *)P.claimed);
    ws_zfree(st, st_mapped);
    free(J.lev);
    free(J.dist);
    free(line);
    if (status) return status;
    strcpy(ctx->stats.variant, par ? "priority-flood/regions" : "priority-flood");
    ctx->stats.compute_ms = iwpp_now_ms() - t0;
    return IWPP_OK;
}
