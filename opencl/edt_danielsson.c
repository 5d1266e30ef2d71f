/*
 * edt_danielsson.c - the Danielsson distance transform on OpenCL (kernels: edt_danielsson.cl):
 * IWPP propagation of nearest-background sites. Two schedules of it (ocl.dan_tiles):
 *  - by tiles (the default in 2D; dan_by_tiles): rounds over lists of tiles, each relaxed in local
 *    memory until it no longer changes, its changed border listing its neighbours;
 *  - pixel by pixel (ocl.dan_tiles=0; dan_by_queue): while the front is small, global rounds
 *    over one list (edt_dan_round, in batches between reads of the count); once it holds
 *    ocl.dan_switch items per work-group, the work-group queues of mlqueue.cl (edt_dan_queue,
 *    as the reconstruction's), re-seeded from the partial result after an overflow (edt_dan_seed).
 * Then distances and indices from the sites (edt_dan_final). Entry: edt.c. The CUDA version:
 * cuda/edt_danielsson.cu.
 */
#include "ocl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rounds go in batches of DAN_BATCH between reads of the counts (they stay on the device; a round
 * whose list is empty does nothing), so the host waits once per batch instead of once per round. */
enum { DAN_BATCH = 8 };
/* Front size, in items per work-group, from which the work-group queues take over (ocl.dan_switch).
 * A group's queue keeps the territory of its share of the seeds, so with fewer seeds than groups
 * most groups would sit idle while one floods the image (a single background pixel). */
#define DAN_SWITCH 4

/* The tiles' rounds go in batches of DAN_TILE_BATCH between reads of the count; the 2D tile side
 * by default (ocl.dan_tiles: the side, a power of two up to 64; 0 for the queues, the default in
 * 3D, where they were faster: opencl/README.md). */
enum { DAN_TILE_BATCH = 16, DAN_TILE_SIDE = 64 };

enum { K_INIT, K_SEED, K_ROUND, K_QUEUE, K_TILES, K_FINAL, K_COUNT };
static const char *const dan_kernel_names[K_COUNT] = {"edt_dan_init",  "edt_dan_seed",  "edt_dan_round",
                                                      "edt_dan_queue", "edt_dan_tiles", "edt_dan_final"};

typedef struct dan_call {
    iwpp_ocl *s;
    cl_kernel k[K_COUNT];
    cl_int w, h, d, sy, sz, noffs;
    cl_int lgs, nt[3]; /* by tiles: a tile's side (log2), tiles per axis */
    cl_uint n;
    cl_double hx, hy, hz;
    iwpp_ocl_mlq q;
    cl_mem vr, la, lb, mark, cnt, offs, gq, qcnt, gstats;
    cl_uint *host; /* 2 + 2 G words: the queue's counters and statistics */
} dan_call;

static int bits_for(int64_t v)
{
    int b = 0;
    while (b < 62 && ((int64_t)1 << b) <= v) ++b;
    return b;
}

/* Packed sites where x, y, z fit in 31 bits (sy > 0), else linear indices (sy = 0; also with
 * ocl.dan_linear=1, so that tests reach that path without images of 2^31 pixels). */
static void dan_packing(const iwpp_context *ctx, dan_call *c)
{
    const int bx = bits_for(c->w - 1) > 0 ? bits_for(c->w - 1) : 1, by = bits_for(c->h - 1), bz = bits_for(c->d - 1);
    c->sy = c->sz = 0;
    if (bx + by + bz <= 31 && !iwpp_tune_int(ctx, IWPP_TUNE_OCL_DAN_LINEAR, 0, 0, 1)) c->sy = bx, c->sz = bx + by;
}

static iwpp_status dan_alloc(iwpp_context *ctx, dan_call *c)
{
    const size_t n4 = (size_t)c->n * 4;
    iwpp_status rs;
    if ((rs = iwpp_ocl_mlq_plan(ctx, c->k[K_QUEUE], c->noffs, c->n, "Danielsson distance transform", &c->q)))
        return rs;
    /* the context's work buffers, kept between calls (as CUDA's scratch; opencl/README.md) */
    const size_t bytes[8] = {n4, n4, n4, n4, 6 * 4, (size_t)c->q.cap * 2 * c->q.G * 4, (2 + c->q.G) * 4, 2 * c->q.G * 4};
    static const char *const what[8] = {"the nearest-site map", "the propagation list", "the propagation list",
                                        "the propagation marks", "the propagation counters", "the per-group queues",
                                        "the queue counters", "the queue statistics"};
    cl_mem m[8];
    if ((rs = iwpp_ocl_scratch_set(ctx, 8, bytes, what, m)) != IWPP_OK) return rs;
    c->vr = m[0], c->la = m[1], c->lb = m[2], c->mark = m[3], c->cnt = m[4], c->gq = m[5], c->qcnt = m[6],
    c->gstats = m[7];
    c->host = (cl_uint *)malloc((2 + 2 * c->q.G) * sizeof(cl_uint));
    if (!c->host) return iwpp_set_error(ctx, IWPP_ENOMEM, "OpenCL Danielsson distance transform: out of host memory");
    return IWPP_OK;
}

static void dan_free(dan_call *c)
{
    iwpp_ocl_release(c->s, c->offs); /* (the rest are the context's work buffers) */
    free(c->host);
}

/* vr, w, h, d, sy, sz: the arguments most kernels start with. */
static void ka_sites(iwpp_kargs *a, const dan_call *c)
{
    ka_mem(a, c->vr);
    ka_int(a, c->w);
    ka_int(a, c->h);
    ka_int(a, c->d);
    ka_int(a, c->sy);
    ka_int(a, c->sz);
}

static void ka_spacing(iwpp_kargs *a, const dan_call *c)
{
    ka_double(a, c->hx);
    ka_double(a, c->hy);
    ka_double(a, c->hz);
}

/* Sites of the background, the first list (its length in *in_n). */
static cl_int dan_init(dan_call *c, cl_mem bin, size_t lg, cl_uint *in_n)
{
    iwpp_ocl *s = c->s;
    const cl_uint zero = 0, ones = 0xffffffffu;
    cl_int err = s->api->clEnqueueFillBuffer(s->queue, c->cnt, &zero, 4, 0, 6 * 4, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = s->api->clEnqueueFillBuffer(s->queue, c->mark, &ones, 4, 0, (size_t)c->n * 4, 0, NULL, NULL);
    iwpp_kargs a = iwpp_kargs_of(s, c->k[K_INIT]);
    ka_mem(&a, bin);
    ka_sites(&a, c);
    ka_mem(&a, c->offs);
    ka_int(&a, c->noffs);
    ka_uint(&a, c->n);
    ka_mem(&a, c->la);
    ka_mem(&a, c->cnt);
    ka_local(&a, 2 * sizeof(cl_uint));
    if (err == CL_SUCCESS) err = a.err;
    const size_t lgs = lg ? lg : iwpp_ocl_group_size(s, c->k[K_INIT], 256); /* one global atomic per group */
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, c->k[K_INIT], c->n, lgs);
    if (err == CL_SUCCESS) err = s->api->clEnqueueReadBuffer(s->queue, c->cnt, CL_TRUE, 0, 4, in_n, 0, NULL, NULL);
    return err;
}

/* Global rounds while the list holds fewer than `until` items (or until it is empty); the list
 * left is c->la, its length *in_n. */
static cl_int dan_rounds(iwpp_context *ctx, dan_call *c, cl_uint *in_n, cl_uint until)
{
    iwpp_ocl *s = c->s;
    cl_kernel k = c->k[K_ROUND];
    const size_t lr = s->is_gpu ? 256 : 64;
    const size_t cap = (size_t)(s->compute_units > 0 ? s->compute_units : 1) * (s->is_gpu ? 2048 : 256);
    cl_uint round = 0;
    cl_int err = CL_SUCCESS;
    cl_uint cnt[6] = {0, 0, 0, 0, 0, 0};
    while (err == CL_SUCCESS && *in_n > 0 && *in_n < until) {
        size_t gsz = (size_t)*in_n * 4;
        if (gsz < 4096) gsz = 4096;
        if (gsz > cap) gsz = cap;
        for (int r = 0; r < DAN_BATCH && err == CL_SUCCESS; ++r) {
            iwpp_kargs a = iwpp_kargs_of(s, k);
            ka_sites(&a, c);
            ka_mem(&a, c->offs);
            ka_int(&a, c->noffs);
            ka_mem(&a, c->la);
            ka_mem(&a, c->lb);
            ka_mem(&a, c->cnt);
            ka_mem(&a, c->mark);
            ka_uint(&a, round);
            ka_spacing(&a, c);
            err = a.err;
            if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k, gsz, lr);
            cl_mem t = c->la;
            c->la = c->lb;
            c->lb = t;
            ++round;
        }
        if (err == CL_SUCCESS) err = s->api->clEnqueueReadBuffer(s->queue, c->cnt, CL_TRUE, 0, sizeof cnt, cnt, 0, NULL, NULL);
        *in_n = cnt[round % 3];
    }
    ctx->stats.pixels_visited += (int64_t)cnt[3] + ((int64_t)cnt[4] << 32);
    ctx->stats.rounds += cnt[5];
    return err;
}

/* After an overflow: the pixels whose site a neighbour would still take, listed in c->la. */
static cl_int dan_reseed(dan_call *c, size_t lg, cl_uint *in_n)
{
    iwpp_ocl *s = c->s;
    const cl_uint zero = 0;
    cl_int err = s->api->clEnqueueFillBuffer(s->queue, c->qcnt, &zero, 4, 0, (2 + c->q.G) * 4, 0, NULL, NULL);
    iwpp_kargs a = iwpp_kargs_of(s, c->k[K_SEED]);
    ka_sites(&a, c);
    ka_mem(&a, c->offs);
    ka_int(&a, c->noffs);
    ka_uint(&a, c->n);
    ka_mem(&a, c->la);
    ka_mem(&a, c->qcnt);
    ka_spacing(&a, c);
    ka_local(&a, 2 * sizeof(cl_uint));
    if (err == CL_SUCCESS) err = a.err;
    const size_t lgs = lg ? lg : iwpp_ocl_group_size(s, c->k[K_SEED], 256); /* one global atomic per group */
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, c->k[K_SEED], c->n, lgs);
    if (err == CL_SUCCESS) err = s->api->clEnqueueReadBuffer(s->queue, c->qcnt, CL_TRUE, 0, 4, in_n, 0, NULL, NULL);
    return err;
}

/* The work-group queues from the list in c->la, re-seeded after each overflow. */
static cl_int dan_queues(iwpp_context *ctx, dan_call *c, size_t lg, cl_uint in_n)
{
    iwpp_ocl *s = c->s;
    const cl_uint zero = 0;
    cl_int err = s->api->clEnqueueFillBuffer(s->queue, c->qcnt, &zero, 4, 0, (2 + c->q.G) * 4, 0, NULL, NULL);
    while (err == CL_SUCCESS && in_n > 0) {
        int overflow = 0;
        iwpp_kargs a = iwpp_kargs_of(s, c->k[K_QUEUE]);
        ka_sites(&a, c);
        ka_mem(&a, c->offs);
        ka_int(&a, c->noffs);
        ka_spacing(&a, c);
        iwpp_ocl_mlq_args(&a, &c->q, c->la, in_n, c->gq, c->qcnt, c->gstats);
        err = a.err;
        if (err == CL_SUCCESS) err = iwpp_ocl_mlq_run(ctx, c->k[K_QUEUE], &c->q, c->qcnt, c->gstats, c->host, &overflow, NULL);
        if (err != CL_SUCCESS || !overflow) break;
        ctx->stats.overflow_reruns++;
        err = dan_reseed(c, lg, &in_n);
    }
    return err;
}

static cl_int dan_final(const dan_call *c, cl_mem md, cl_mem mn, cl_int want, size_t lg)
{
    iwpp_kargs a = iwpp_kargs_of(c->s, c->k[K_FINAL]);
    ka_mem(&a, c->vr);
    ka_mem(&a, md);
    ka_mem(&a, mn);
    ka_int(&a, want);
    ka_int(&a, c->w);
    ka_int(&a, c->h);
    ka_int(&a, c->sy);
    ka_int(&a, c->sz);
    ka_uint(&a, c->n);
    ka_spacing(&a, c);
    cl_int err = a.err;
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(c->s, c->k[K_FINAL], c->n, lg);
    return err == CL_SUCCESS ? iwpp_ocl_finish(c->s) : err;
}

/* ---- by tiles ---- */

/* Sites in a tile's local copy: the tile, its frame and a pad column (as edt_dan_tiles's HX, HY, HZ). */
static size_t dan_tile_frame(int lgs, int zh)
{
    const size_t side = (size_t)1 << lgs;
    return (side + 3) * (side + 2) * (zh ? side + 2 : 1);
}

/* Rounds of edt_dan_tiles until no tile is listed: round 0 takes every tile and makes the sites
 * from the binary image; the list of round r + 1 holds the tiles that round r's changes reach. */
static cl_int dan_tile_rounds(iwpp_context *ctx, dan_call *c, cl_mem bin, size_t lg)
{
    iwpp_ocl *s = c->s;
    const cl_uint ntiles = (cl_uint)c->nt[0] * (cl_uint)c->nt[1] * (cl_uint)c->nt[2];
    const int zh = c->d > 1, side = 1 << c->lgs;
    const size_t nh = dan_tile_frame(c->lgs, zh), npix = (size_t)side * (size_t)side * (size_t)(zh ? side : 1);
    size_t groups = (size_t)(s->compute_units > 0 ? s->compute_units : 1) * (s->is_gpu ? 16 : 2);
    if (groups > ntiles) groups = ntiles;
    const cl_uint zero = 0, ones = 0xffffffffu;
    cl_int err = s->api->clEnqueueFillBuffer(s->queue, c->cnt, &zero, 4, 0, 6 * 4, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = s->api->clEnqueueFillBuffer(s->queue, c->mark, &ones, 4, 0, (size_t)ntiles * 4, 0, NULL, NULL);
    cl_uint cnt[6] = {0, 0, 0, 0, 0, 0}, round = 0;
    for (int more = 1; err == CL_SUCCESS && more;) {
        for (int r = 0; r < DAN_TILE_BATCH && err == CL_SUCCESS; ++r, ++round) {
            iwpp_kargs a = iwpp_kargs_of(s, c->k[K_TILES]);
            ka_mem(&a, bin);
            ka_sites(&a, c);
            ka_int(&a, c->lgs);
            for (int i = 0; i < 3; ++i) ka_int(&a, c->nt[i]);
            ka_mem(&a, c->la);
            ka_mem(&a, c->lb);
            ka_mem(&a, c->cnt);
            ka_mem(&a, c->mark);
            ka_uint(&a, round);
            ka_int(&a, round == 0);
            ka_int(&a, c->hx == 1.0 && c->hy == 1.0 && c->hz == 1.0);
            ka_spacing(&a, c);
            ka_local(&a, nh * sizeof(cl_uint));
            ka_local(&a, npix);
            ka_local(&a, 4 * sizeof(cl_int));
            err = a.err;
            if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, c->k[K_TILES], groups * lg, lg);
            cl_mem t = c->la;
            c->la = c->lb;
            c->lb = t;
        }
        if (err == CL_SUCCESS) err = s->api->clEnqueueReadBuffer(s->queue, c->cnt, CL_TRUE, 0, sizeof cnt, cnt, 0, NULL, NULL);
        more = cnt[round % 3] > 0;
    }
    ctx->stats.pixels_visited += ((int64_t)cnt[3] + ((int64_t)cnt[4] << 32)) * (int64_t)npix;
    ctx->stats.rounds += cnt[5];
    return err;
}

/* Tiles of side `side` (3D: cubes, iwpp_dan_tile_side), work-groups of 2 side^(dim - 1) items. */
static iwpp_status dan_by_tiles(iwpp_context *ctx, dan_call *c, cl_mem bin, int side, int *ran)
{
    iwpp_ocl *s = c->s;
    *ran = 0;
    c->lgs = iwpp_dan_tile_side(c->d, side, (int)iwpp_ocl_group_size(s, c->k[K_TILES], 1024));
    while (c->lgs >= 2 && s->local_mem > 0 &&
           dan_tile_frame(c->lgs, c->d > 1) * 4 + ((size_t)1 << (c->lgs * (c->d > 1 ? 3 : 2))) + 64 > s->local_mem)
        --c->lgs; /* a device with little local memory: smaller tiles */
    if (c->lgs < 2) return IWPP_OK; /* work-groups too small for tiles of 4: the queues instead */
    const size_t lg = (size_t)2 << (c->lgs * (c->d > 1 ? 2 : 1));
    const int64_t dims[3] = {c->w, c->h, c->d};
    for (int i = 0; i < 3; ++i) c->nt[i] = (cl_int)((dims[i] + (1 << c->lgs) - 1) >> c->lgs);
    const size_t ntiles = (size_t)c->nt[0] * (size_t)c->nt[1] * (size_t)c->nt[2];
    const size_t bytes[5] = {(size_t)c->n * 4, ntiles * 4, ntiles * 4, ntiles * 4, 6 * 4};
    static const char *const what[5] = {"the nearest-site map", "the tile list", "the tile list", "the tile marks",
                                        "the tile counters"};
    cl_mem m[5];
    iwpp_status rs = iwpp_ocl_scratch_set(ctx, 5, bytes, what, m);
    if (rs != IWPP_OK) return rs;
    c->vr = m[0], c->la = m[1], c->lb = m[2], c->mark = m[3], c->cnt = m[4];
    *ran = 1;
    const cl_int err = dan_tile_rounds(ctx, c, bin, lg);
    return err == CL_SUCCESS ? IWPP_OK : iwpp_ocl_fail(ctx, err, "the Danielsson distance transform by tiles");
}

/* ---- pixel by pixel: global rounds, then the work-group queues ---- */

static iwpp_status dan_by_queue(iwpp_context *ctx, dan_call *c, cl_mem bin, size_t lg)
{
    iwpp_status rs = dan_alloc(ctx, c);
    if (rs != IWPP_OK) return rs;
    const long long per_group = iwpp_tune_int(ctx, IWPP_TUNE_OCL_DAN_SWITCH, DAN_SWITCH, 0, 1LL << 20);
    const uint64_t until64 = (uint64_t)per_group * c->q.G;
    const cl_uint until = until64 > 0xffffffffu ? 0xffffffffu : (cl_uint)until64;
    cl_uint in_n = 0;
    cl_int err = dan_init(c, bin, lg, &in_n);
    if (err == CL_SUCCESS) err = dan_rounds(ctx, c, &in_n, until);
    if (err == CL_SUCCESS) err = dan_queues(ctx, c, lg, in_n);
    return err == CL_SUCCESS ? IWPP_OK : iwpp_ocl_fail(ctx, err, "the Danielsson distance transform kernels");
}

iwpp_status iwpp_ocl_edt_danielsson(iwpp_context *ctx, const iwpp_buf *bin, const double sp[3], iwpp_buf *dist,
                                    iwpp_buf *nearest)
{
    dan_call c;
    memset(&c, 0, sizeof c);
    iwpp_status rs;
    for (int i = 0; i < K_COUNT; ++i)
        if ((rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, dan_kernel_names[i], &c.k[i]))) return rs;
    c.s = iwpp_ocl_state(ctx);
    c.w = (cl_int)bin->w, c.h = (cl_int)bin->h, c.d = (cl_int)bin->d, c.n = (cl_uint)iwpp_buf_count(bin);
    c.hx = sp[0], c.hy = sp[1], c.hz = sp[2];
    dan_packing(ctx, &c);
    /* a fixed group size on CPU devices: PoCL compiles a kernel once per group size, and the
     * runtime's choice follows the (per-round) global size */
    const size_t lg = c.s->is_gpu ? 0 : 64;
    ctx->stats.pixels_visited = ctx->stats.rounds = ctx->stats.overflow_reruns = 0; /* the phases add */
    const int side = (int)iwpp_tune_int(ctx, IWPP_TUNE_OCL_DAN_TILES, c.d > 1 ? 0 : DAN_TILE_SIDE, 0, 64);
    int tiled = 0;
    if (side > 0) rs = dan_by_tiles(ctx, &c, (cl_mem)bin->ptr, side, &tiled);
    if (!rs && !tiled) rs = iwpp_ocl_offsets(ctx, 26, bin, &c.offs, &c.noffs);
    if (!rs) {
        if (!tiled) rs = dan_by_queue(ctx, &c, (cl_mem)bin->ptr, lg);
        if (!rs) {
            const cl_int err = dan_final(&c, (cl_mem)dist->ptr, nearest ? (cl_mem)nearest->ptr : (cl_mem)dist->ptr,
                                         nearest != NULL, lg);
            if (err != CL_SUCCESS) rs = iwpp_ocl_fail(ctx, err, "the Danielsson distances");
        }
    }
    dan_free(&c);
    if (rs) return rs;
    if (tiled)
        snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "ocl-edt-danielsson/tiles-%dx%dx%d", 1 << c.lgs,
                 1 << c.lgs, c.d > 1 ? 1 << c.lgs : 1);
    else
        snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "ocl-edt-danielsson/%s", c.q.vname);
    return IWPP_OK;
}
