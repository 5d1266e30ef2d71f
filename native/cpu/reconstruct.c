/*
 * cpu/reconstruct.c - morphological reconstruction on the CPU.
 *
 * Sequential: Vincent's Fast Hybrid algorithm. A raster scan propagates
 * from the N+ neighbours (those met before a pixel), an anti-raster scan from
 * the N- neighbours, and queues every pixel that can still raise one of its
 * N- neighbours; a FIFO phase then propagates from the queued pixels until the
 * queue is empty. The FIFO is kept per tile (long, contiguous strips) and
 * drained one tile at a time, so that the wavefront stays in cache instead of
 * sweeping the whole image once per generation.
 *
 * Parallel (more than one thread and more than one tile): the image is cut
 * into tiles (2D) or blocks (3D) that worker threads take from a queue on
 * demand. A tile's first run is Fast Hybrid on a private contiguous copy of
 * its pixels; later runs apply the messages its neighbours sent (their border
 * pixels that changed, with their values) and propagate inside the tile. No
 * rounds, no barriers, and no thread spins while it waits (see "the parallel
 * driver" below); the result is the unique reconstruction, hence bit for bit
 * the sequential one whatever the thread count and tile size.
 *
 * The default thread count (context threads = 0) is lowered for small images,
 * which run sequentially (RC_PX_PER_THREAD).
 *
 * Size: about 1150 lines: the sequential Fast Hybrid, its tiled FIFO and the parallel tile
 * scheduler share one typed, inlined inner loop per type (see reconstruct_impl.h).
 */
#include "cpu/cpu.h"
#include "neighborhood.h"

#include "cpu/pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define R_INLINE static inline __attribute__((always_inline))
#define R_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define R_INLINE static inline
#define R_UNLIKELY(x) (x)
#endif

/* Cache line size assumed for alignment and padding. */
#define RC_LINE 64

/* ---- geometry, neighbourhood, boxes ---------------------------------------------- */

typedef struct rc_geom {
    int64_t w, h, d;
    int64_t sy, sz;     /* strides of y and z in elements */
    double invw, invh;  /* 1/w and 1/h, to turn a linear index into coordinates */
    int flat;           /* depth 1: 2D neighbourhood, no z checks */
} rc_geom;

typedef struct rc_nbhd {
    int n, nh;          /* neighbours, and how many of them are N+ */
    int dx[26], dy[26], dz[26];
    int64_t off[26];    /* linear offsets */
} rc_nbhd;

/* Half-open box [x0, x1) x [y0, y1) x [z0, z1). */
typedef struct rc_box {
    int64_t x0, x1, y0, y1, z0, z1;
} rc_box;

R_INLINE int rc_in_box(const rc_box *b, int64_t x, int64_t y, int64_t z)
{
    return x >= b->x0 && x < b->x1 && y >= b->y0 && y < b->y1 && z >= b->z0 && z < b->z1;
}

R_INLINE int rc_in_image(const rc_geom *g, int64_t x, int64_t y, int64_t z)
{
    return x >= 0 && x < g->w && y >= 0 && y < g->h && z >= 0 && z < g->d;
}

/*
 * q = n / d and r = n % d for n >= 0. The quotient comes from a multiplication
 * by the rounded reciprocal inv in double precision (exact to within 1 for
 * indices far beyond 2^40), then one correction step makes it exact; this is
 * several times cheaper than a 64-bit integer division in the FIFO loop.
 */
R_INLINE void rc_divmod(int64_t n, int64_t d, double inv, int64_t *q, int64_t *r)
{
    int64_t qq = (int64_t)((double)n * inv);
    int64_t rr = n - qq * d;
    if (rr < 0) {
        --qq;
        rr += d;
    } else if (rr >= d) {
        ++qq;
        rr -= d;
    }
    *q = qq;
    *r = rr;
}

/* Coordinates of linear index p. */
R_INLINE void rc_coords(const rc_geom *g, int64_t p, int64_t *x, int64_t *y, int64_t *z)
{
    int64_t r;
    rc_divmod(p, g->w, g->invw, &r, x);
    if (g->flat) {
        *y = r;
        *z = 0;
        return;
    }
    rc_divmod(r, g->h, g->invh, z, y);
}

/* ---- tiles ---------------------------------------------------------------------- */

typedef struct rc_tiles {
    int64_t ex, ey, ez;  /* tile edges */
    int64_t nx, ny, nz;  /* tiles along each axis */
    int64_t count;
} rc_tiles;

/*
 * 2D tiles are tile x tile pixels. 3D blocks get about as many voxels as a 2D
 * tile has pixels (edge = cube root of tile^2, e.g. 40 for 256), so that a
 * volume still splits into enough blocks to keep every thread busy.
 */
static rc_tiles rc_make_tiles(const rc_geom *g, int64_t tile)
{
    rc_tiles t;
    if (tile < 1) tile = 256;
    if (!g->flat && tile > ((int64_t)1 << 24)) tile = (int64_t)1 << 24;
    int64_t e = tile;
    if (!g->flat) {
        int64_t area = tile * tile, c = 1;
        while ((c + 1) * (c + 1) * (c + 1) <= area && c < tile) ++c;
        e = c;
    }
    t.ex = e < g->w ? e : g->w;
    t.ey = e < g->h ? e : g->h;
    t.ez = g->flat ? 1 : (e < g->d ? e : g->d);
    t.nx = (g->w + t.ex - 1) / t.ex;
    t.ny = (g->h + t.ey - 1) / t.ey;
    t.nz = (g->d + t.ez - 1) / t.ez;
    t.count = t.nx * t.ny * t.nz;
    return t;
}

/*
 * Tiles of the sequential FIFO phase, chosen for cache locality only (any
 * tiling gives the same result). With the default tile of 256: rows of up to
 * 16384 pixels, about 2^17 pixels per tile in 2D (e.g. 8192 x 16) and about
 * 2^18 voxels per brick in 3D; they scale with the tile setting. Long
 * contiguous rows avoid the cache-set conflicts that square tiles of a
 * power-of-two-wide image suffer from.
 */
static rc_tiles rc_make_seq_tiles(const rc_geom *g, int64_t tile)
{
    rc_tiles t;
    if (tile < 1) tile = 256;
    if (tile > 4096) tile = 4096;
    const int64_t minrows = tile < 8 ? tile : 8;
    t.ex = g->w < 64 * tile ? g->w : 64 * tile;
    if (g->flat) {
        int64_t ey = 2 * tile * tile / t.ex;
        if (ey < minrows) ey = minrows;
        t.ey = ey < g->h ? ey : g->h;
        t.ez = 1;
    } else {
        int64_t area = 4 * tile * tile / t.ex, e = 1;
        while ((e + 1) * (e + 1) <= area) ++e;
        if (e < minrows) e = minrows;
        t.ey = e < g->h ? e : g->h;
        t.ez = e < g->d ? e : g->d;
    }
    t.nx = (g->w + t.ex - 1) / t.ex;
    t.ny = (g->h + t.ey - 1) / t.ey;
    t.nz = (g->d + t.ez - 1) / t.ez;
    t.count = t.nx * t.ny * t.nz;
    return t;
}

static rc_box rc_tile_box(const rc_geom *g, const rc_tiles *t, int64_t id)
{
    int64_t tx = id % t->nx, r = id / t->nx;
    int64_t ty = r % t->ny, tz = r / t->ny;
    rc_box b;
    b.x0 = tx * t->ex;
    b.x1 = b.x0 + t->ex < g->w ? b.x0 + t->ex : g->w;
    b.y0 = ty * t->ey;
    b.y1 = b.y0 + t->ey < g->h ? b.y0 + t->ey : g->h;
    b.z0 = tz * t->ez;
    b.z1 = b.z0 + t->ez < g->d ? b.z0 + t->ez : g->d;
    return b;
}

/* ---- growable FIFO ring buffer of linear indices ---------------------------------- */

typedef struct rc_fifo {
    int64_t *buf;
    int64_t cap;        /* a power of two, or 0 */
    int64_t head, count;
    int64_t min_cap;    /* first capacity (a power of two); 0 = RC_FIFO_MIN_CAP */
    int failed;         /* a grow failed: the result is incomplete, report ENOMEM */
    int64_t fail_bytes; /* what the failed allocation asked for */
} rc_fifo;

#define RC_FIFO_MIN_CAP ((int64_t)1 << 12)

static int rc_fifo_grow(rc_fifo *f)
{
    int64_t ncap = f->cap ? f->cap * 2 : (f->min_cap ? f->min_cap : RC_FIFO_MIN_CAP);
    if (ncap <= f->cap || (uint64_t)ncap > SIZE_MAX / sizeof(int64_t)) {
        f->failed = 1;
        f->fail_bytes = INT64_MAX;
        return -1;
    }
    int64_t *nb = (int64_t *)malloc((size_t)ncap * sizeof(int64_t));
    if (!nb) {
        f->failed = 1;
        f->fail_bytes = ncap * (int64_t)sizeof(int64_t);
        return -1;
    }
    /* Unroll the ring into the start of the new buffer. */
    for (int64_t k = 0; k < f->count; ++k) nb[k] = f->buf[(f->head + k) & (f->cap - 1)];
    free(f->buf);
    f->buf = nb;
    f->cap = ncap;
    f->head = 0;
    return 0;
}

/* Make room for at least @p n more items. 0 on success. */
static int rc_fifo_reserve(rc_fifo *f, int64_t n)
{
    while (f->cap - f->count < n)
        if (rc_fifo_grow(f)) return -1;
    return 0;
}

R_INLINE void rc_push(rc_fifo *f, int64_t v)
{
    if (R_UNLIKELY(f->count == f->cap) && rc_fifo_grow(f)) return;
    f->buf[(f->head + f->count) & (f->cap - 1)] = v;
    f->count++;
}

R_INLINE int64_t rc_pop(rc_fifo *f)
{
    int64_t v = f->buf[f->head];
    f->head = (f->head + 1) & (f->cap - 1);
    f->count--;
    return v;
}

static void rc_fifo_free(rc_fifo *f)
{
    free(f->buf);
    f->buf = NULL;
    f->cap = f->head = f->count = 0;
}

/* ---- per-tile queues of the sequential FIFO phase ---------------------------------- */

/*
 * The sequential FIFO phase keeps one queue per tile and drains one tile at a
 * time, so that its working set (a tile of marker and mask) stays in cache;
 * a pixel raised in another tile goes to that tile's queue, and the tile onto
 * a worklist. Any order of propagation reaches the same (unique) result.
 */
typedef struct rc_spill {
    const rc_tiles *t;
    rc_fifo *q;             /* one queue per tile */
    int64_t *work;          /* ring of waiting tiles, each at most once */
    int64_t whead, wcount;
    unsigned char *inlist;  /* whether a tile is in work */
} rc_spill;

static void rc_spill_push(rc_spill *sp, int64_t p, int64_t x, int64_t y, int64_t z)
{
    const rc_tiles *t = sp->t;
    const int64_t id = x / t->ex + t->nx * (y / t->ey + t->ny * (z / t->ez));
    rc_push(&sp->q[id], p);
    if (!sp->inlist[id]) {
        sp->inlist[id] = 1;
        int64_t at = sp->whead + sp->wcount;
        if (at >= t->count) at -= t->count;
        sp->work[at] = id;
        sp->wcount++;
    }
}

/* ---- growable vector of linear indices (a tile's changed border pixels) ------------ */

typedef struct rc_vec {
    int64_t *v;
    int64_t n, cap;
    int failed;
    int64_t fail_bytes;
} rc_vec;

static void rc_vec_grow_push(rc_vec *a, int64_t p)
{
    int64_t ncap = a->cap ? a->cap * 2 : 256;
    int64_t *nv = (int64_t *)realloc(a->v, (size_t)ncap * sizeof(int64_t));
    if (!nv) {
        a->failed = 1;
        a->fail_bytes = ncap * (int64_t)sizeof(int64_t);
        return;
    }
    a->v = nv;
    a->cap = ncap;
    a->v[a->n++] = p;
}

R_INLINE void rc_vec_push(rc_vec *a, int64_t p)
{
    if (R_UNLIKELY(a->n == a->cap)) {
        rc_vec_grow_push(a, p);
        return;
    }
    a->v[a->n++] = p;
}

/* ---- per-tile seed lists (border pixels raised by the exchange) -------------------- */

typedef struct rc_seeds {
    int64_t *idx;       /* linear indices of border pixels of the tile */
    void *val;          /* their new values (pixel type) */
    int64_t n, cap;
} rc_seeds;

static int rc_seeds_grow(rc_seeds *s, size_t elem)
{
    int64_t ncap = s->cap ? s->cap * 2 : 256;
    int64_t *ni = (int64_t *)realloc(s->idx, (size_t)ncap * sizeof(int64_t));
    if (!ni) return -1;
    s->idx = ni;
    void *nv = realloc(s->val, (size_t)ncap * elem);
    if (!nv) return -1;
    s->val = nv;
    s->cap = ncap;
    return 0;
}

/* Typed kernels, one table per (type, mode). */
typedef struct rc_kernels {
    int64_t (*fh)(void *J, const void *I, const rc_geom *g, const rc_nbhd *nb, const rc_box *b,
                  rc_fifo *f);
    int64_t (*msg_box)(void *J, const void *I, const rc_geom *g, const rc_nbhd *nb,
                       const rc_box *b, rc_fifo *f, const rc_seeds *m, rc_vec *outbox,
                       int64_t budget);
    void (*scans)(void *J, const void *I, const rc_geom *g, const rc_nbhd *nb, const rc_box *b,
                  rc_fifo *f);
    int64_t (*tile_queue)(void *J, const void *I, const rc_geom *g, const rc_nbhd *nb,
                          const rc_box *b, rc_fifo *f, rc_spill *sp);
    void (*clip_copy)(void *dst, const void *marker, const void *mask, int64_t n);
    double (*key_of)(const void *px);
    double (*box_key)(const void *J, const void *M, const void *I, const rc_geom *g,
                      const rc_box *b);
    void (*msg_local)(void *LJ, const void *LI, const rc_geom *g, const rc_nbhd *nb,
                      const rc_box *b, const rc_seeds *m);
} rc_kernels;

#define RT uint8_t
#define RSUF u8_dil
#define RDIL 1
#include "cpu/reconstruct_impl.h"
#define RT uint8_t
#define RSUF u8_ero
#define RDIL 0
#include "cpu/reconstruct_impl.h"
#define RT uint16_t
#define RSUF u16_dil
#define RDIL 1
#include "cpu/reconstruct_impl.h"
#define RT uint16_t
#define RSUF u16_ero
#define RDIL 0
#include "cpu/reconstruct_impl.h"
#define RT float
#define RSUF f32_dil
#define RDIL 1
#include "cpu/reconstruct_impl.h"
#define RT float
#define RSUF f32_ero
#define RDIL 0
#include "cpu/reconstruct_impl.h"

static const rc_kernels *rc_pick_kernels(iwpp_type type, iwpp_morph_mode mode)
{
    int dil = mode == IWPP_BY_DILATION;
    switch (type) {
    case IWPP_U8: return dil ? &kernels_u8_dil : &kernels_u8_ero;
    case IWPP_U16: return dil ? &kernels_u16_dil : &kernels_u16_ero;
    case IWPP_F32: return dil ? &kernels_f32_dil : &kernels_f32_ero;
    default: return NULL;
    }
}

/* ---- drivers -------------------------------------------------------------------- */

static iwpp_status rc_enomem(iwpp_context *ctx, int64_t bytes, const char *what)
{
    if (bytes == INT64_MAX)
        return iwpp_set_error(ctx, IWPP_ENOMEM,
                              "CPU reconstruction: the %s would exceed the address space; "
                              "use a smaller image",
                              what);
    return iwpp_set_error(ctx, IWPP_ENOMEM,
                          "CPU reconstruction: could not allocate %lld bytes for the %s; "
                          "free memory or use a smaller image",
                          (long long)bytes, what);
}

static iwpp_status rc_sequential(iwpp_context *ctx, const rc_kernels *kn, void *J, const void *I,
                                 const rc_geom *g, const rc_nbhd *nb, const rc_tiles *t)
{
    rc_fifo f = {0};
    const rc_box whole = {0, g->w, 0, g->h, 0, g->d};
    int64_t pops = 0, fail_bytes = 0;
    kn->scans(J, I, g, nb, &whole, &f);
    if (t->count == 1 || f.failed) {
        if (!f.failed) pops = kn->tile_queue(J, I, g, nb, &whole, &f, NULL);
        if (f.failed) fail_bytes = f.fail_bytes;
        rc_fifo_free(&f);
    } else {
        rc_spill sp;
        sp.t = t;
        sp.q = (rc_fifo *)calloc((size_t)t->count, sizeof(rc_fifo));
        sp.work = (int64_t *)malloc((size_t)t->count * sizeof(int64_t));
        sp.inlist = (unsigned char *)calloc((size_t)t->count, 1);
        sp.whead = sp.wcount = 0;
        if (!sp.q || !sp.work || !sp.inlist) {
            free(sp.q);
            free(sp.work);
            free(sp.inlist);
            rc_fifo_free(&f);
            return rc_enomem(ctx, t->count * (int64_t)(sizeof(rc_fifo) + sizeof(int64_t) + 1),
                             "per-tile queues");
        }
        for (int64_t k = 0; k < t->count; ++k) sp.q[k].min_cap = 256;
        /* Hand the pixels queued by the anti-raster scan to their tiles. */
        while (f.count > 0) {
            int64_t p = rc_pop(&f), x, y, z;
            rc_coords(g, p, &x, &y, &z);
            rc_spill_push(&sp, p, x, y, z);
        }
        rc_fifo_free(&f);
        while (sp.wcount > 0) {
            const int64_t id = sp.work[sp.whead];
            sp.whead = sp.whead + 1 == t->count ? 0 : sp.whead + 1;
            sp.wcount--;
            sp.inlist[id] = 0;
            const rc_box b = rc_tile_box(g, t, id);
            pops += kn->tile_queue(J, I, g, nb, &b, &sp.q[id], &sp);
            if (sp.q[id].failed) break;
        }
        for (int64_t k = 0; k < t->count; ++k) {
            if (sp.q[k].failed) fail_bytes = sp.q[k].fail_bytes;
            rc_fifo_free(&sp.q[k]);
        }
        free(sp.q);
        free(sp.work);
        free(sp.inlist);
    }
    if (fail_bytes) return rc_enomem(ctx, fail_bytes, "propagation queue");
    ctx->stats.pixels_visited = pops;
    ctx->stats.rounds = 1;
    strcpy(ctx->stats.variant, "fast-hybrid");
    return IWPP_OK;
}

/* A thread's private buffer for a tile's copy of marker and mask. */
typedef struct rc_scratch {
    unsigned char *buf;
    size_t cap;
} rc_scratch;

/*
 * Per-thread and per-tile state written by different threads lives one per
 * cache line: a FIFO's head and count are stored on every push and pop, and
 * neighbours sharing a line would bounce it between cores (at 16 threads this
 * cost round 0 about half of its speed).
 */
typedef struct { _Alignas(RC_LINE) rc_fifo v; } rc_fifo_line;
typedef struct { _Alignas(RC_LINE) rc_scratch v; } rc_scratch_line;
typedef struct { _Alignas(RC_LINE) rc_seeds v; } rc_seeds_line;
typedef struct { _Alignas(RC_LINE) rc_vec v; } rc_vec_line;

/* Zeroed array of n elements of a size that is a multiple of RC_LINE, line-aligned. */
static void *rc_calloc_lines(size_t n, size_t size)
{
    if (n == 0 || size > SIZE_MAX / n) return NULL;
    void *p = aligned_alloc(RC_LINE, n * size);
    if (p) memset(p, 0, n * size);
    return p;
}

/*
 * Fast Hybrid of tile b on a contiguous private copy of its marker and mask
 * (es bytes per pixel), then the marker copied back. Square tiles of a wide
 * image are rows far apart in memory (for a power-of-two width, all in the
 * same few cache sets); the copy keeps the whole propagation in cache.
 * With M (not NULL) the tile's marker is read from M and clipped by the mask
 * on the way in, and J is only written: J needs no earlier pass over it.
 * Messages msgs (may be NULL) are applied to the copy before Fast Hybrid.
 * Returns the pixels popped; on out-of-memory sets f->failed.
 */
static int64_t rc_fh_local(const rc_kernels *kn, size_t es, unsigned char *J,
                           const unsigned char *M, const unsigned char *I, const rc_geom *g,
                           const rc_nbhd *nb, const rc_box *b, rc_fifo *f, rc_scratch *sc,
                           const rc_seeds *msgs)
{
    const int64_t bw = b->x1 - b->x0, bh = b->y1 - b->y0, bd = b->z1 - b->z0;
    const int64_t n = bw * bh * bd;
    const size_t need = (size_t)n * es * 2;
    if (need > sc->cap) {
        unsigned char *nbuf = (unsigned char *)realloc(sc->buf, need);
        if (!nbuf) {
            f->failed = 1;
            f->fail_bytes = (int64_t)need;
            return 0;
        }
        sc->buf = nbuf;
        sc->cap = need;
    }
    unsigned char *LJ = sc->buf, *LI = sc->buf + (size_t)n * es;
    const size_t rowb = (size_t)bw * es;
    for (int64_t z = b->z0; z < b->z1; ++z)
        for (int64_t y = b->y0; y < b->y1; ++y) {
            const size_t src = (size_t)(z * g->sz + y * g->sy + b->x0) * es;
            const size_t dst = (size_t)(((z - b->z0) * bh + (y - b->y0)) * bw) * es;
            if (M)
                kn->clip_copy(LJ + dst, M + src, I + src, bw);
            else
                memcpy(LJ + dst, J + src, rowb);
            memcpy(LI + dst, I + src, rowb);
        }
    rc_geom lg;
    lg.w = bw;
    lg.h = bh;
    lg.d = bd;
    lg.sy = bw;
    lg.sz = bw * bh;
    lg.invw = 1.0 / (double)bw;
    lg.invh = 1.0 / (double)bh;
    lg.flat = g->flat;
    rc_nbhd lnb = *nb;
    for (int k = 0; k < lnb.n; ++k) lnb.off[k] = lnb.dx[k] + lnb.dy[k] * lg.sy + lnb.dz[k] * lg.sz;
    const rc_box lb = {0, bw, 0, bh, 0, bd};
    if (msgs && msgs->n) kn->msg_local(LJ, LI, g, nb, b, msgs);
    const int64_t pops = kn->fh(LJ, LI, &lg, &lnb, &lb, f);
    for (int64_t z = b->z0; z < b->z1; ++z)
        for (int64_t y = b->y0; y < b->y1; ++y) {
            const size_t dst = (size_t)(z * g->sz + y * g->sy + b->x0) * es;
            const size_t src = (size_t)(((z - b->z0) * bh + (y - b->y0)) * bw) * es;
            memcpy(J + dst, LJ + src, rowb);
        }
    return pops;
}

/* Tile id of the neighbour (dx, dy, dz) of tile k, or -1 outside the grid. */
static int64_t rc_tile_neighbor(const rc_tiles *t, int64_t k, int dx, int dy, int dz)
{
    int64_t tx = k % t->nx, r = k / t->nx;
    int64_t ty = r % t->ny, tz = r / t->ny;
    int64_t ux = tx + dx, uy = ty + dy, uz = tz + dz;
    if (ux < 0 || uy < 0 || uz < 0 || ux >= t->nx || uy >= t->ny || uz >= t->nz) return -1;
    return ux + t->nx * (uy + t->ny * uz);
}

/*
 * ---- the parallel driver: a demand-driven queue of tiles ----------------------------
 *
 * A tile is run by one worker at a time. Its first run is Fast Hybrid on its
 * own pixels (rc_fh_local); every run then applies the messages in its inbox
 * and runs the FIFO phase inside the tile. At the end of a run the worker
 * sends, to each neighbour tile, the tile's border pixels that changed (after
 * the first run: all of them) with their values, as messages (p, J(p)) in the
 * neighbour's inbox, and queues that neighbour if it is idle (or marks it to
 * run again if it is running). Nothing waits for a round: a tile runs as soon
 * as a worker is free and the tile has work, so a worker that gets less of the
 * CPU (other processes on the same cores) just runs fewer tiles, and a
 * propagation crossing many tiles flows on without a barrier per tile crossed.
 *
 * Only the worker running a tile reads or writes its pixels of J (a message
 * carries the value, the receiver reads only its own pixels and the mask), so
 * there are no data races. The result is the fixpoint of the dilation under
 * the mask: inside a tile the FIFO phase leaves no pixel that a neighbour can
 * raise; across tiles, the last value of every border pixel reaches the
 * neighbour tile as a message, and that tile runs again after receiving it.
 * Hence it is bit for bit the sequential result, whatever the thread count,
 * tile size and order in which tiles ran.
 */
enum { RC_IDLE, RC_QUEUED, RC_RUNNING, RC_RERUN };

typedef struct rc_tile {
    _Alignas(RC_LINE) pthread_mutex_t lock; /* guards inbox */
    rc_seeds inbox;  /* messages: pixels just outside this tile and their values */
    int state;       /* RC_*, guarded by the queue's lock */
    int started;     /* first run done; read and written by the tile's runner only */
    int64_t pos;     /* index in the heap while queued; guarded by the queue's lock */
    double key;      /* priority while queued; of the next run while running */
} rc_tile;

typedef struct rc_async {
    const rc_kernels *kn;
    size_t es;
    unsigned char *J;
    const unsigned char *M, *I;
    const rc_geom *g;
    const rc_nbhd *nb;
    const rc_tiles *t;
    rc_tile *tiles;
    pthread_mutex_t qlock;
    pthread_cond_t qcond;
    int64_t *heap;           /* queued tiles, a max-heap on their key (each at most once) */
    int64_t rcount;
    int64_t pending;         /* tiles queued or running */
    int abort;               /* out of memory somewhere: everybody stops */
    int64_t fail_bytes;
    int64_t pops, runs;
} rc_async;

/* Per-worker buffers. */
typedef struct rc_worker {
    rc_fifo f;
    rc_scratch sc;
    rc_seeds in;        /* the inbox taken from the tile being run */
    rc_vec outbox;      /* its border pixels that changed */
    rc_seeds out[27];   /* messages for the 26 (8 in 2D) neighbour tiles, by offset */
    double outkey[27];  /* the strongest of each */
    unsigned char *snap; /* the tile's border values when the run started */
    size_t snap_cap;
} rc_worker;

static int rc_seeds_append(rc_seeds *s, const int64_t *idx, const unsigned char *val, int64_t n,
                           size_t es)
{
    while (s->cap - s->n < n)
        if (rc_seeds_grow(s, es)) return -1;
    memcpy(s->idx + s->n, idx, (size_t)n * sizeof(int64_t));
    memcpy((unsigned char *)s->val + (size_t)s->n * es, val, (size_t)n * es);
    s->n += n;
    return 0;
}

/*
 * The ready tiles are taken strongest first: the key of a tile is the
 * strongest value it may spread (its clipped marker before its first run, the
 * strongest message since). Propagation from the brightest regions then
 * reaches a tile before the weaker ones do, and most tiles run once or twice
 * instead of once per wave passing by (a wave-by-wave order made a 2048^2
 * tissue image do twice the sequential work).
 */
static void rc_heap_up(rc_async *A, int64_t i)
{
    int64_t *h = A->heap;
    const int64_t k = h[i];
    const double key = A->tiles[k].key;
    while (i > 0) {
        const int64_t parent = (i - 1) / 2;
        if (!(A->tiles[h[parent]].key < key)) break;
        h[i] = h[parent];
        A->tiles[h[i]].pos = i;
        i = parent;
    }
    h[i] = k;
    A->tiles[k].pos = i;
}

static int64_t rc_heap_pop(rc_async *A)
{
    int64_t *h = A->heap;
    const int64_t top = h[0];
    const int64_t last = h[--A->rcount];
    const double key = A->tiles[last].key;
    int64_t i = 0;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= A->rcount) break;
        if (c + 1 < A->rcount && A->tiles[h[c + 1]].key > A->tiles[h[c]].key) ++c;
        if (!(A->tiles[h[c]].key > key)) break;
        h[i] = h[c];
        A->tiles[h[i]].pos = i;
        i = c;
    }
    if (A->rcount > 0) {
        h[i] = last;
        A->tiles[last].pos = i;
    }
    A->tiles[top].pos = -1;
    return top;
}

/* Queue tile k with priority key if it is idle, or raise its priority if it is
   queued, or have it run again if it is running. Under qlock. */
static void rc_wake_locked(rc_async *A, int64_t k, double key)
{
    rc_tile *T = &A->tiles[k];
    if (T->state == RC_IDLE) {
        T->state = RC_QUEUED;
        T->key = key;
        A->heap[A->rcount] = k;
        rc_heap_up(A, A->rcount++);
        A->pending++;
        pthread_cond_signal(&A->qcond);
    } else if (T->state == RC_QUEUED) {
        if (key > T->key) {
            T->key = key;
            rc_heap_up(A, T->pos);
        }
    } else {
        if (T->state == RC_RUNNING || key > T->key) T->key = key;
        T->state = RC_RERUN;
    }
}

static void rc_fail(rc_async *A, int64_t bytes)
{
    pthread_mutex_lock(&A->qlock);
    A->abort = 1;
    if (!A->fail_bytes) A->fail_bytes = bytes ? bytes : 1;
    pthread_cond_broadcast(&A->qcond);
    pthread_mutex_unlock(&A->qlock);
}

/* Stage border pixel p (x, y, z) of box b with its value for every neighbour tile next to it. */
static int rc_stage(rc_async *A, rc_worker *W, const rc_box *b, int64_t p, int64_t x, int64_t y,
                    int64_t z)
{
    const rc_geom *g = A->g;
    const rc_nbhd *nb = A->nb;
    unsigned mark = 0;
    for (int k = 0; k < nb->n; ++k) {
        const int64_t nx = x + nb->dx[k], ny = y + nb->dy[k], nz = z + nb->dz[k];
        if (!rc_in_image(g, nx, ny, nz) || rc_in_box(b, nx, ny, nz)) continue;
        const int ox = nx < b->x0 ? 0 : nx >= b->x1 ? 2 : 1;
        const int oy = ny < b->y0 ? 0 : ny >= b->y1 ? 2 : 1;
        const int oz = nz < b->z0 ? 0 : nz >= b->z1 ? 2 : 1;
        mark |= 1u << (ox + 3 * oy + 9 * oz);
    }
    while (mark) {
        const int o = __builtin_ctz(mark);
        mark &= mark - 1;
        rc_seeds *s = &W->out[o];
        if (s->n == s->cap && rc_seeds_grow(s, A->es)) return -1;
        s->idx[s->n] = p;
        const unsigned char *px = A->J + (size_t)p * A->es;
        memcpy((unsigned char *)s->val + (size_t)s->n * A->es, px, A->es);
        const double key = A->kn->key_of(px);
        if (s->n == 0 || key > W->outkey[o]) W->outkey[o] = key;
        s->n++;
    }
    return 0;
}

/*
 * Walk the border pixels of box b. mode 0: stage every one (after a tile's
 * first run); 1: copy their values into W->snap; 2: stage those whose value
 * differs from W->snap (after Fast Hybrid re-ran the tile). Returns 0, or -1
 * when a buffer could not grow.
 */
static int rc_border(rc_async *A, rc_worker *W, const rc_box *b, int mode)
{
    const rc_geom *g = A->g;
    const size_t es = A->es;
    if (mode == 1) {
        /* as many values as the walk below visits */
        const int64_t bw = b->x1 - b->x0, bh = b->y1 - b->y0, bd = b->z1 - b->z0;
        const int64_t inner = bw > 1 ? 2 : 1;
        int64_t most = 0;
        for (int64_t z = 0; z < bd; ++z) {
            const int zring = !g->flat && (z == 0 || z == bd - 1);
            most += zring ? bw * bh : (bh > 1 ? 2 * bw + (bh - 2) * inner : bw);
        }
        if ((size_t)most * es > W->snap_cap) {
            unsigned char *ns = (unsigned char *)realloc(W->snap, (size_t)most * es);
            if (!ns) return -1;
            W->snap = ns;
            W->snap_cap = (size_t)most * es;
        }
    }
    int64_t at = 0;
    for (int64_t z = b->z0; z < b->z1; ++z) {
        const int zring = !g->flat && (z == b->z0 || z == b->z1 - 1);
        for (int64_t y = b->y0; y < b->y1; ++y) {
            const int full = zring || y == b->y0 || y == b->y1 - 1;
            const int64_t row = z * g->sz + y * g->sy;
            const int64_t step = full ? 1 : (b->x1 - 1 - b->x0 > 0 ? b->x1 - 1 - b->x0 : 1);
            for (int64_t x = b->x0; x < b->x1; x += step, ++at) {
                const unsigned char *px = A->J + (size_t)(row + x) * es;
                if (mode == 1) {
                    memcpy(W->snap + (size_t)at * es, px, es);
                } else if (mode == 0 || memcmp(W->snap + (size_t)at * es, px, es) != 0) {
                    if (rc_stage(A, W, b, row + x, x, y, z)) return -1;
                }
            }
        }
    }
    return 0;
}

/* One run of tile k by worker W. Returns 0, or -1 on out-of-memory (recorded). */
static int rc_run_tile(rc_async *A, rc_worker *W, int64_t k)
{
    rc_tile *T = &A->tiles[k];
    const rc_box b = rc_tile_box(A->g, A->t, k);
    const int first = !T->started;
    /* Take the inbox, leaving the worker's empty buffer in its place. */
    pthread_mutex_lock(&T->lock);
    rc_seeds taken = T->inbox;
    T->inbox = W->in;
    pthread_mutex_unlock(&T->lock);
    W->in = taken;
    W->outbox.n = 0;
    int64_t pops = 0;
    int rescanned = 0;
    if (first) {
        /* Fast Hybrid on the tile's copy, from its marker and the messages so far. */
        W->f.count = 0;
        pops = rc_fh_local(A->kn, A->es, A->J, A->M, A->I, A->g, A->nb, &b, &W->f, &W->sc, &W->in);
        if (W->f.failed) {
            rc_fail(A, W->f.fail_bytes);
            return -1;
        }
        T->started = 1;
    } else if (W->in.n > 0) {
        /* Messages that raise much of the tile (a wave from a brighter region
           arriving) are cheaper to finish with Fast Hybrid's scans on a
           contiguous copy than pixel by pixel: the FIFO phase gets a budget of
           a quarter of the tile's pixels. */
        const int64_t area = (b.x1 - b.x0) * (b.y1 - b.y0) * (b.z1 - b.z0);
        if (rc_border(A, W, &b, 1)) {
            rc_fail(A, (int64_t)area * (int64_t)A->es);
            return -1;
        }
        W->f.count = 0;
        pops = A->kn->msg_box(A->J, A->I, A->g, A->nb, &b, &W->f, &W->in, &W->outbox, area / 4 + 64);
        if (!W->f.failed && !W->outbox.failed && W->f.count > 0) {
            W->f.count = 0;
            pops += rc_fh_local(A->kn, A->es, A->J, NULL, A->I, A->g, A->nb, &b, &W->f, &W->sc, NULL);
            rescanned = 1;
        }
        if (W->f.failed || W->outbox.failed) {
            rc_fail(A, W->f.failed ? W->f.fail_bytes : W->outbox.fail_bytes);
            return -1;
        }
    }
    W->in.n = 0;
    int err = 0;
    if (first) {
        err = rc_border(A, W, &b, 0);
    } else if (rescanned) {
        err = rc_border(A, W, &b, 2);
    } else {
        for (int64_t j = 0; j < W->outbox.n && !err; ++j) {
            const int64_t p = W->outbox.v[j];
            int64_t x, y, z;
            rc_coords(A->g, p, &x, &y, &z);
            err = rc_stage(A, W, &b, p, x, y, z);
        }
    }
    if (err) {
        rc_fail(A, (int64_t)(W->outbox.n + 256) * (int64_t)(sizeof(int64_t) + A->es));
        return -1;
    }
    /* Deliver: inbox first (under the tile's lock), then wake the tile. */
    const int tdim = A->g->flat ? 0 : 1;
    for (int oz = 1 - tdim; oz <= 1 + tdim; ++oz)
        for (int oy = 0; oy <= 2; ++oy)
            for (int ox = 0; ox <= 2; ++ox) {
                rc_seeds *s = &W->out[ox + 3 * oy + 9 * oz];
                if (s->n == 0) continue;
                const int64_t u = rc_tile_neighbor(A->t, k, ox - 1, oy - 1, oz - 1);
                rc_tile *U = &A->tiles[u];
                pthread_mutex_lock(&U->lock);
                err = rc_seeds_append(&U->inbox, s->idx, (const unsigned char *)s->val, s->n, A->es);
                pthread_mutex_unlock(&U->lock);
                if (err) {
                    rc_fail(A, (int64_t)(U->inbox.n + s->n) * 2 * (int64_t)(sizeof(int64_t) + A->es));
                    return -1;
                }
                s->n = 0;
                pthread_mutex_lock(&A->qlock);
                rc_wake_locked(A, u, W->outkey[ox + 3 * oy + 9 * oz]);
                pthread_mutex_unlock(&A->qlock);
            }
    if (pops) {
        pthread_mutex_lock(&A->qlock);
        A->pops += pops;
        pthread_mutex_unlock(&A->qlock);
    }
    return 0;
}

static void rc_async_worker(void *arg, int worker)
{
    rc_async *A = (rc_async *)arg;
    rc_worker W;
    memset(&W, 0, sizeof W);
    (void)worker;
    pthread_mutex_lock(&A->qlock);
    for (;;) {
        while (A->rcount == 0 && A->pending > 0 && !A->abort) pthread_cond_wait(&A->qcond, &A->qlock);
        if (A->abort || A->rcount == 0) break;
        const int64_t k = rc_heap_pop(A);
        A->tiles[k].state = RC_RUNNING;
        A->runs++;
        pthread_mutex_unlock(&A->qlock);
        const int err = rc_run_tile(A, &W, k);
        pthread_mutex_lock(&A->qlock);
        if (err) break;
        rc_tile *T = &A->tiles[k];
        if (T->state == RC_RERUN) {
            T->state = RC_IDLE;
            A->pending--;
            rc_wake_locked(A, k, T->key);
        } else {
            T->state = RC_IDLE;
            if (--A->pending == 0) pthread_cond_broadcast(&A->qcond);
        }
    }
    pthread_mutex_unlock(&A->qlock);
    rc_fifo_free(&W.f);
    free(W.sc.buf);
    free(W.in.idx);
    free(W.in.val);
    free(W.outbox.v);
    free(W.snap);
    for (int o = 0; o < 27; ++o) {
        free(W.out[o].idx);
        free(W.out[o].val);
    }
}

static void rc_key_tiles(void *arg, int64_t k0, int64_t k1, int worker)
{
    rc_async *A = (rc_async *)arg;
    (void)worker;
    for (int64_t k = k0; k < k1; ++k) {
        const rc_box b = rc_tile_box(A->g, A->t, k);
        A->tiles[k].key = A->kn->box_key(A->J, A->M, A->I, A->g, &b);
    }
}

/*
 * The parallel reconstruction of J under I. With M (not NULL), J is
 * uninitialised and M is the unclipped marker (read only): each tile's first
 * run clips it, so the image is not swept once more before the work starts.
 */
static iwpp_status rc_tiled(iwpp_context *ctx, const rc_kernels *kn, size_t es, void *J,
                            const void *M, const void *I, const rc_geom *g, const rc_nbhd *nb,
                            const rc_tiles *t, int nthreads)
{
    const int64_t nt = t->count;
    rc_async A;
    memset(&A, 0, sizeof A);
    A.kn = kn;
    A.es = es;
    A.J = (unsigned char *)J;
    A.M = (const unsigned char *)M;
    A.I = (const unsigned char *)I;
    A.g = g;
    A.nb = nb;
    A.t = t;
    A.tiles = (rc_tile *)rc_calloc_lines((size_t)nt, sizeof(rc_tile));
    A.heap = (int64_t *)malloc((size_t)nt * sizeof(int64_t));
    if (!A.tiles || !A.heap) {
        free(A.tiles);
        free(A.heap);
        return rc_enomem(ctx, nt * (int64_t)(sizeof(rc_tile) + sizeof(int64_t)), "tile bookkeeping");
    }
    if (nthreads > nt) nthreads = (int)nt;
    /* Every tile starts queued, keyed by the strongest value of its clipped marker. */
    iwpp_par_for(nthreads, nt, 4, rc_key_tiles, &A);
    pthread_mutex_init(&A.qlock, NULL);
    pthread_cond_init(&A.qcond, NULL);
    for (int64_t k = 0; k < nt; ++k) {
        pthread_mutex_init(&A.tiles[k].lock, NULL);
        A.tiles[k].state = RC_QUEUED;
        A.heap[k] = k;
        rc_heap_up(&A, k);
    }
    A.rcount = A.pending = nt;

    iwpp_par_run(nthreads, rc_async_worker, &A);

    pthread_cond_destroy(&A.qcond);
    pthread_mutex_destroy(&A.qlock);
    for (int64_t k = 0; k < nt; ++k) {
        pthread_mutex_destroy(&A.tiles[k].lock);
        free(A.tiles[k].inbox.idx);
        free(A.tiles[k].inbox.val);
    }
    free(A.tiles);
    free(A.heap);
    if (A.abort) return rc_enomem(ctx, A.fail_bytes, "tile queues and messages");
    ctx->stats.pixels_visited = A.pops;
    ctx->stats.rounds = A.runs;
    strcpy(ctx->stats.variant, "tiled-queue");
    return IWPP_OK;
}

/*
 * Pixels per thread below which the default thread count is lowered: a
 * 512 x 512 image (about 2 ms on one core) runs sequentially, where starting
 * threads and the tiles' extra work (a tile's first run, the messages) cost
 * more than a second core brings, above all when that core is busy with
 * another process.
 */
#define RC_PX_PER_THREAD ((int64_t)1 << 19)

/*
 * Tile edge of the parallel variant: the context's, made smaller (down to 64)
 * while the image has fewer than 8 tiles per thread, so that a worker slowed
 * down by other processes leaves tiles to the others instead of holding the
 * last big one.
 */
static int64_t rc_parallel_tile(const iwpp_context *ctx, const rc_geom *g, int nthreads)
{
    int64_t tile = ctx->tile_size > 0 ? ctx->tile_size : 256;
    while (tile > 64) {
        const rc_tiles t = rc_make_tiles(g, tile);
        if (t.count >= 8 * (int64_t)nthreads) break;
        tile /= 2;
    }
    return tile;
}

/*
 * F32: every zero of the result becomes +0. Which zero a pixel keeps where -0
 * and +0 meet depends on the order of propagation (they compare equal, and a
 * pixel only changes for a strictly stronger value), so without this the sign
 * of a zero could differ between thread counts and tile sizes; with it the
 * result is the same bit for bit whatever they are.
 */
static void rc_plus_zero_range(void *arg, int64_t i0, int64_t i1, int worker)
{
    float *v = (float *)arg;
    (void)worker;
    for (int64_t i = i0; i < i1; ++i) v[i] = v[i] == 0.0f ? 0.0f : v[i];
}

/* Geometry and neighbourhood of a w x h x d image; 0 if the connectivity is unknown. */
static int rc_setup(int64_t w, int64_t h, int64_t d, int connectivity, rc_geom *g, rc_nbhd *nb)
{
    g->w = w;
    g->h = h;
    g->d = d;
    g->sy = w;
    g->sz = w * h;
    g->invw = 1.0 / (double)w;
    g->invh = 1.0 / (double)h;
    g->flat = d == 1;
    int off[26][3];
    nb->n = iwpp_neighbors(connectivity, g->flat, off);
    nb->nh = nb->n / 2;
    for (int k = 0; k < nb->n; ++k) {
        nb->dx[k] = off[k][0];
        nb->dy[k] = off[k][1];
        nb->dz[k] = off[k][2];
        nb->off[k] = off[k][0] + off[k][1] * g->sy + off[k][2] * g->sz;
    }
    return nb->n;
}

/*
 * Reconstruction of J under I. With M (not NULL) J is uninitialised and
 * receives the result for the unclipped marker M; else J holds the clipped
 * marker and is reconstructed in place.
 */
static iwpp_status rc_run(iwpp_context *ctx, iwpp_type type, int64_t w, int64_t h, int64_t d,
                          void *J, const void *M, const void *I, int connectivity,
                          iwpp_morph_mode mode)
{
    const double t0 = iwpp_now_ms();
    const rc_kernels *kn = rc_pick_kernels(type, mode);
    if (!kn)
        return iwpp_set_error(ctx, IWPP_EINTERNAL,
                              "CPU reconstruction: pixel type %d reached the backend; "
                              "please report this",
                              (int)type);
    rc_geom g;
    rc_nbhd nb;
    if (!rc_setup(w, h, d, connectivity, &g, &nb))
        return iwpp_set_error(ctx, IWPP_EINTERNAL,
                              "CPU reconstruction: connectivity %d reached the backend; "
                              "please report this",
                              connectivity);
    const size_t es = iwpp_type_size(type);

    iwpp_status st;
    const int nthreads = iwpp_cpu_threads_for(ctx, w * h * d, RC_PX_PER_THREAD);
    rc_tiles tiles = rc_make_tiles(&g, rc_parallel_tile(ctx, &g, nthreads));
    if (nthreads > 1 && tiles.count > 1) {
        st = rc_tiled(ctx, kn, es, J, M, I, &g, &nb, &tiles, nthreads);
    } else {
        if (M) kn->clip_copy(J, M, I, w * h * d);
        rc_tiles seq = rc_make_seq_tiles(&g, ctx->tile_size);
        st = rc_sequential(ctx, kn, J, I, &g, &nb, &seq);
    }
    if (st != IWPP_OK) return st;
    if (type == IWPP_F32)
        iwpp_par_for(iwpp_cpu_threads_for(ctx, w * h * d, (int64_t)1 << 22), w * h * d,
                     (int64_t)1 << 16, rc_plus_zero_range, J);
    ctx->stats.overflow_reruns = 0;
    ctx->stats.compute_ms = iwpp_now_ms() - t0;
    return IWPP_OK;
}

iwpp_status iwpp_cpu_reconstruct(iwpp_context *ctx, iwpp_buf *marker, const iwpp_buf *mask,
                                 int connectivity, iwpp_morph_mode mode)
{
    return rc_run(ctx, marker->type, marker->w, marker->h, marker->d, marker->ptr, NULL, mask->ptr,
                  connectivity, mode);
}

static int rc_view_contiguous(const iwpp_image *im)
{
    const int64_t sy = im->stride_y ? im->stride_y : im->width;
    const int64_t sz = im->stride_z ? im->stride_z : sy * im->height;
    return sy == im->width && (im->depth == 1 || sz == sy * im->height);
}

/* Copy n bytes, in parallel for big images. */
typedef struct rc_copy_job {
    char *dst;
    const char *src;
} rc_copy_job;

static void rc_copy_range(void *arg, int64_t i0, int64_t i1, int worker)
{
    const rc_copy_job *c = (const rc_copy_job *)arg;
    (void)worker;
    memcpy(c->dst + i0, c->src + i0, (size_t)(i1 - i0));
}

static void rc_copy_out(const iwpp_context *ctx, void *dst, const void *src, size_t n)
{
    rc_copy_job c = {(char *)dst, (const char *)src};
    const int nt = iwpp_cpu_threads_for(ctx, (int64_t)n, (int64_t)8 << 20);
    iwpp_par_for(nt, (int64_t)n, (int64_t)1 << 20, rc_copy_range, &c);
}

iwpp_status iwpp_cpu_reconstruct_views(iwpp_context *ctx, iwpp_image *marker,
                                       const iwpp_image *mask, int connectivity,
                                       iwpp_morph_mode mode)
{
    if (!rc_view_contiguous(marker) || !rc_view_contiguous(mask)) return IWPP_EUNSUPPORTED;
    const int64_t n = marker->width * marker->height * marker->depth;
    const size_t bytes = (size_t)n * iwpp_type_size(marker->type);
    /* The result is built aside and copied into the marker only on success,
       so that a failure leaves the caller's marker as it was. Line-aligned:
       tiles written by different threads then share no cache line whenever the
       row and the tile width are multiples of 64 bytes (power-of-two sizes). */
    const size_t abytes = (bytes + RC_LINE - 1) / RC_LINE * RC_LINE;
    void *J = aligned_alloc(RC_LINE, abytes ? abytes : RC_LINE);
    if (!J)
        return iwpp_set_error(ctx, IWPP_ENOMEM,
                              "out of host memory: could not allocate %.1f MiB for the working copy "
                              "of the marker; free memory or use a smaller image",
                              (double)bytes / 1048576.0);
    iwpp_status st = rc_run(ctx, marker->type, marker->width, marker->height, marker->depth, J,
                            marker->data, mask->data, connectivity, mode);
    if (st == IWPP_OK) rc_copy_out(ctx, marker->data, J, bytes);
    free(J);
    return st;
}
