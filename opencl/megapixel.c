/*
 * megapixel.c - IWPP-MP reconstruction on OpenCL (kernels mp_init, mp_run in reconstruct.cl):
 * 32 x 32 tiles (16 x 16 x 8 in 3D) swept in local memory until stable, a global queue of
 * tiles, atomic write-back that re-queues the neighbour tiles a raised border pixel can raise.
 * Chosen only by IWPP_ALGO_MEGAPIXEL (reconstruct.c says why AUTO never picks it).
 * The CUDA version: cuda/megapixel.cuh.
 */
#include "ocl.h"
#include "neighborhood.h"

#include <stdio.h>
#include <string.h>

/* What the plan chose: tile shape, tiles, queue size, neighbour tables in tile coordinates. */
typedef struct mp_plan {
    cl_int TX, TY, TZ, zp;
    size_t npad, L, G;
    cl_int4 ntl;
    cl_uint ntiles, qcap;
    cl_int offs[26 * 4], swoff[6 * 9 * 4], swmeta[6 * 4];
    int no, nsw;
} mp_plan;

typedef struct mp_bufs {
    cl_mem J, slots, inq, ctrl, offs, swoff, swmeta;
} mp_bufs;

static uint32_t next_pow2(uint64_t v)
{
    uint64_t p = 1;
    while (p < v) p <<= 1;
    return (uint32_t)p;
}

/* Neighbour offsets in padded-tile coordinates, and per sweep (axis, direction) the offsets met
 * before the centre. */
static void mp_tables(mp_plan *p, int connectivity, int flat)
{
    int off[26][3];
    const cl_int PX = p->TX + 2, PY = p->TY + 2;
    p->no = iwpp_neighbors(connectivity, flat, off);
    for (int i = 0; i < p->no; ++i) {
        p->offs[4 * i + 0] = off[i][0];
        p->offs[4 * i + 1] = off[i][1];
        p->offs[4 * i + 2] = off[i][2];
        p->offs[4 * i + 3] = off[i][0] + PX * (off[i][1] + PY * off[i][2]);
    }
    int nso = 0;
    p->nsw = 0;
    const int naxes = flat ? 2 : 3;
    for (int di = 0; di < 2; ++di)
        for (int a = 0; a < naxes; ++a) {
            const int dir = di ? -1 : 1, first = nso;
            for (int i = 0; i < p->no; ++i) {
                if (off[i][a] != -dir) continue;
                for (int c = 0; c < 4; ++c) p->swoff[4 * nso + c] = p->offs[4 * i + c];
                ++nso;
            }
            cl_int *m = &p->swmeta[4 * p->nsw++];
            m[0] = a, m[1] = dir, m[2] = first, m[3] = nso - first;
        }
}

/* Tile shape from the device's local memory, tile grid, queue size, work-groups. */
static iwpp_status mp_plan_make(iwpp_context *ctx, const iwpp_buf *marker, int connectivity, cl_kernel k_run,
                                mp_plan *p)
{
    iwpp_ocl *s = iwpp_ocl_state(ctx);
    const int flat = marker->d == 1;
    memset(p, 0, sizeof *p);
    p->TX = flat ? 32 : 16, p->TY = flat ? 32 : 16, p->TZ = flat ? 1 : 8, p->zp = flat ? 0 : 1;
    for (;;) {
        size_t npad = (size_t)(p->TX + 2) * (p->TY + 2) * (p->TZ + 2 * p->zp);
        size_t bytes = npad * 8 + (size_t)p->TX * p->TY * p->TZ + 256;
        if (bytes <= s->local_mem || (p->TX <= 4 && p->TY <= 4 && p->TZ <= 2)) break;
        if (p->TZ > 2) p->TZ /= 2;
        else if (p->TX >= p->TY) p->TX /= 2;
        else p->TY /= 2;
    }
    p->npad = (size_t)(p->TX + 2) * (p->TY + 2) * (p->TZ + 2 * p->zp);
    if (p->npad * 8 + (size_t)p->TX * p->TY * p->TZ + 256 > s->local_mem)
        return iwpp_set_error(ctx, IWPP_EUNSUPPORTED,
                              "OpenCL: %s has only %llu bytes of local memory, too little for the "
                              "megapixel reconstruction; use IWPP_ALGO_QUEUE or the CPU backend",
                              s->name, (unsigned long long)s->local_mem);
    p->L = iwpp_ocl_group_size(s, k_run, flat ? 32 : 64);
    p->ntl.s[0] = (cl_int)((marker->w + p->TX - 1) / p->TX);
    p->ntl.s[1] = (cl_int)((marker->h + p->TY - 1) / p->TY);
    p->ntl.s[2] = (cl_int)((marker->d + p->TZ - 1) / p->TZ);
    const uint64_t ntiles = (uint64_t)p->ntl.s[0] * p->ntl.s[1] * p->ntl.s[2];
    p->ntiles = (cl_uint)ntiles;
    p->qcap = next_pow2(ntiles * 2 < 64 ? 64 : ntiles * 2);
    /* persistent work-groups: enough to fill the device, never more than the tiles */
    p->G = (size_t)s->compute_units * (s->is_gpu ? 16 : 1);
    if (p->G > p->ntiles) p->G = p->ntiles;
    if (p->G < 1) p->G = 1;
    mp_tables(p, connectivity, flat);
    return IWPP_OK;
}

static iwpp_status mp_alloc(iwpp_context *ctx, const mp_plan *p, cl_uint n, mp_bufs *b)
{
    iwpp_ocl *s = iwpp_ocl_state(ctx);
    cl_int err = CL_SUCCESS;
    const cl_mem_flags ro = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR;
    b->offs = s->api->clCreateBuffer(s->context, ro, sizeof p->offs, (void *)p->offs, &err);
    if (err == CL_SUCCESS) b->swoff = s->api->clCreateBuffer(s->context, ro, sizeof p->swoff, (void *)p->swoff, &err);
    if (err == CL_SUCCESS)
        b->swmeta = s->api->clCreateBuffer(s->context, ro, sizeof p->swmeta, (void *)p->swmeta, &err);
    if (err != CL_SUCCESS) return iwpp_ocl_fail(ctx, err, "creating the megapixel neighbour tables");
    iwpp_status rs;
    if ((rs = iwpp_ocl_alloc(ctx, (size_t)n * 4, "the reconstruction working image", &b->J)) ||
        (rs = iwpp_ocl_alloc(ctx, (size_t)p->qcap * 4, "the tile queue", &b->slots)) ||
        (rs = iwpp_ocl_alloc(ctx, (size_t)p->ntiles * 4, "the tile flags", &b->inq)) ||
        (rs = iwpp_ocl_alloc(ctx, 8 * 4, "the tile queue counters", &b->ctrl)))
        return rs;
    return IWPP_OK;
}

static void mp_free(iwpp_ocl *s, mp_bufs *b)
{
    cl_mem all[] = {b->J, b->slots, b->inq, b->ctrl, b->offs, b->swoff, b->swmeta};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) iwpp_ocl_release(s, all[i]);
}

static cl_int mp_run_args(iwpp_ocl *s, cl_kernel k, const mp_plan *p, const mp_bufs *b, cl_mem mask, cl_uint inv,
                          const iwpp_buf *marker)
{
    iwpp_kargs a = iwpp_kargs_of(s, k);
    cl_int4 dims = {{p->TX, p->TY, p->TZ, 0}};
    ka_mem(&a, b->J);
    ka_mem(&a, mask);
    ka_uint(&a, inv);
    ka_int(&a, (cl_int)marker->w);
    ka_int(&a, (cl_int)marker->h);
    ka_int(&a, (cl_int)marker->d);
    ka_int4(&a, dims);
    ka_int(&a, p->zp);
    ka_int4(&a, p->ntl);
    ka_mem(&a, b->swmeta);
    ka_int(&a, p->nsw);
    ka_mem(&a, b->swoff);
    ka_mem(&a, b->offs);
    ka_int(&a, p->no);
    ka_mem(&a, b->slots);
    ka_uint(&a, p->qcap - 1);
    ka_mem(&a, b->inq);
    ka_mem(&a, b->ctrl);
    ka_local(&a, p->npad * 4);
    ka_local(&a, p->npad * 4);
    ka_local(&a, (size_t)p->TX * p->TY * p->TZ);
    return a.err;
}

/* Keys in, the persistent tile kernel, keys out; c0 receives the queue counters. */
static cl_int mp_launch(iwpp_context *ctx, const mp_plan *p, const mp_bufs *b, iwpp_buf *marker,
                        const iwpp_buf *mask, cl_uint inv, const cl_kernel k[4], cl_uint c0[8])
{
    iwpp_ocl *s = iwpp_ocl_state(ctx);
    const cl_uint n = (cl_uint)iwpp_buf_count(marker);
    memset(c0, 0, 8 * sizeof(cl_uint));
    c0[1] = c0[2] = p->ntiles;
    cl_int err = s->api->clEnqueueWriteBuffer(s->queue, b->ctrl, CL_FALSE, 0, 8 * sizeof(cl_uint), c0, 0, NULL, NULL);
    if (err == CL_SUCCESS) err = iwpp_ocl_keys(s, k[0], b->J, (cl_mem)marker->ptr, inv, n);
    const cl_kernel k_init = k[2], k_run = k[3];
    iwpp_kargs a = iwpp_kargs_of(s, k_init);
    ka_mem(&a, b->slots);
    ka_mem(&a, b->inq);
    ka_uint(&a, p->ntiles);
    ka_uint(&a, p->qcap);
    if (err == CL_SUCCESS) err = a.err;
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_init, p->qcap, 0);
    if (err == CL_SUCCESS) err = mp_run_args(s, k_run, p, b, (cl_mem)mask->ptr, inv, marker);
    size_t global = p->G * p->L, L = p->L;
    if (err == CL_SUCCESS) err = iwpp_ocl_enqueue(s, k_run, 1, &global, &L, NULL);
    if (err == CL_SUCCESS) err = iwpp_ocl_keys(s, k[1], (cl_mem)marker->ptr, b->J, inv, n);
    if (err == CL_SUCCESS)
        err = s->api->clEnqueueReadBuffer(s->queue, b->ctrl, CL_TRUE, 0, 8 * sizeof(cl_uint), c0, 0, NULL, NULL);
    return err;
}

iwpp_status iwpp_ocl_megapixel(iwpp_context *ctx, iwpp_buf *marker, const iwpp_buf *mask, int connectivity,
                               iwpp_morph_mode mode)
{
    iwpp_ocl *s = iwpp_ocl_state(ctx);
    static const char *const names[4] = {"to_keys", "from_keys", "mp_init", "mp_run"};
    cl_kernel k[4];
    iwpp_status rs;
    for (int i = 0; i < 4; ++i)
        if ((rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_MAIN, marker->type, names[i], &k[i]))) return rs;
    mp_plan p;
    if ((rs = mp_plan_make(ctx, marker, connectivity, k[3], &p))) return rs;
    mp_bufs b;
    memset(&b, 0, sizeof b);
    cl_uint c0[8];
    const cl_uint inv = mode == IWPP_BY_EROSION ? 0xffffffffu : 0u;
    if (!(rs = mp_alloc(ctx, &p, (cl_uint)iwpp_buf_count(marker), &b))) {
        cl_int err = mp_launch(ctx, &p, &b, marker, mask, inv, k, c0);
        if (err != CL_SUCCESS) rs = iwpp_ocl_fail(ctx, err, "the megapixel reconstruction kernels");
    }
    mp_free(s, &b);
    if (rs) return rs;
    snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "ocl-megapixel/%dx%dx%d", (int)p.TX, (int)p.TY,
             (int)p.TZ);
    ctx->stats.pixels_visited = (int64_t)c0[3] * p.TX * p.TY * p.TZ;
    ctx->stats.rounds = c0[4];
    ctx->stats.overflow_reruns = 0;
    ctx->stats.compute_ms = iwpp_ocl_timer_ms(s);
    return IWPP_OK;
}
