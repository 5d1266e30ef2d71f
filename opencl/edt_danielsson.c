/*
 * edt_danielsson.c - the Danielsson distance transform on OpenCL (kernels: edt_danielsson.cl):
 * IWPP propagation of 32-bit nearest-background indices, rounds of a list of changed pixels
 * (edt_dan_round) in batches between reads of the counts, then distances and indices from the
 * sites (edt_dan_final). Entry: edt.c. The CUDA version: cuda/edt_danielsson.cu.
 */
#include "ocl.h"

#include <stdio.h>
#include <string.h>

/* Rounds go in batches of DAN_BATCH between reads of the counts (they stay on the device; a round
 * whose list is empty does nothing), so the host waits once per batch instead of once per round. */
enum { DAN_BATCH = 8 };

typedef struct dan_call {
    iwpp_ocl *s;
    cl_int w, h, d, noffs;
    cl_uint n;
    cl_double hx, hy, hz;
    cl_mem vr, la, lb, mark, cnt, offs;
    int64_t visited, rounds;
} dan_call;

static iwpp_status dan_alloc(iwpp_context *ctx, const iwpp_buf *bin, dan_call *c)
{
    const size_t n4 = (size_t)c->n * 4;
    int noffs = 0;
    iwpp_status rs;
    if ((rs = iwpp_ocl_offsets(ctx, 26, bin, &c->offs, &noffs)) ||
        (rs = iwpp_ocl_alloc(ctx, n4, "the nearest-site map", &c->vr)) ||
        (rs = iwpp_ocl_alloc(ctx, n4, "the propagation list", &c->la)) ||
        (rs = iwpp_ocl_alloc(ctx, n4, "the propagation list", &c->lb)) ||
        (rs = iwpp_ocl_alloc(ctx, n4, "the propagation marks", &c->mark)) ||
        (rs = iwpp_ocl_alloc(ctx, 6 * 4, "the propagation counters", &c->cnt)))
        return rs;
    c->noffs = noffs;
    return IWPP_OK;
}

static void dan_free(dan_call *c)
{
    cl_mem all[] = {c->vr, c->la, c->lb, c->mark, c->cnt, c->offs};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) iwpp_ocl_release(c->s, all[i]);
}

/* Sites of the background, the first list (its length in *in_n). */
static cl_int dan_init(dan_call *c, cl_kernel k, cl_mem bin, size_t lg, cl_uint *in_n)
{
    iwpp_ocl *s = c->s;
    const cl_uint zero = 0, ones = 0xffffffffu;
    cl_int err = s->api->clEnqueueFillBuffer(s->queue, c->cnt, &zero, 4, 0, 6 * 4, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = s->api->clEnqueueFillBuffer(s->queue, c->mark, &ones, 4, 0, (size_t)c->n * 4, 0, NULL, NULL);
    iwpp_kargs a = iwpp_kargs_of(s, k);
    ka_mem(&a, bin);
    ka_mem(&a, c->vr);
    ka_int(&a, c->w);
    ka_int(&a, c->h);
    ka_int(&a, c->d);
    ka_mem(&a, c->offs);
    ka_int(&a, c->noffs);
    ka_uint(&a, c->n);
    ka_mem(&a, c->la);
    ka_mem(&a, c->cnt);
    if (err == CL_SUCCESS) err = a.err;
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k, c->n, lg);
    if (err == CL_SUCCESS) err = s->api->clEnqueueReadBuffer(s->queue, c->cnt, CL_TRUE, 0, 4, in_n, 0, NULL, NULL);
    return err;
}

static cl_int round_args(const dan_call *c, cl_kernel k, cl_uint round)
{
    iwpp_kargs a = iwpp_kargs_of(c->s, k);
    ka_mem(&a, c->vr);
    ka_int(&a, c->w);
    ka_int(&a, c->h);
    ka_int(&a, c->d);
    ka_mem(&a, c->offs);
    ka_int(&a, c->noffs);
    ka_mem(&a, c->la);
    ka_mem(&a, c->lb);
    ka_mem(&a, c->cnt);
    ka_mem(&a, c->mark);
    ka_uint(&a, round);
    ka_double(&a, c->hx);
    ka_double(&a, c->hy);
    ka_double(&a, c->hz);
    return a.err;
}

/* Rounds until a list is empty; each round covers its list with a grid-stride loop over at most
 * `cap` items. */
static cl_int dan_rounds(dan_call *c, cl_kernel k, cl_uint in_n)
{
    iwpp_ocl *s = c->s;
    const size_t lr = s->is_gpu ? 256 : 64;
    const size_t cap = (size_t)(s->compute_units > 0 ? s->compute_units : 1) * (s->is_gpu ? 2048 : 256);
    cl_uint round = 0;
    cl_int err = CL_SUCCESS;
    while (err == CL_SUCCESS && in_n > 0) {
        size_t gsz = (size_t)in_n * 4;
        if (gsz < 4096) gsz = 4096;
        if (gsz > cap) gsz = cap;
        for (int r = 0; r < DAN_BATCH && err == CL_SUCCESS; ++r) {
            err = round_args(c, k, round);
            if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k, gsz, lr);
            cl_mem t = c->la;
            c->la = c->lb;
            c->lb = t;
            ++round;
        }
        cl_uint cnt[6] = {0, 0, 0, 0, 0, 0};
        if (err == CL_SUCCESS) err = s->api->clEnqueueReadBuffer(s->queue, c->cnt, CL_TRUE, 0, sizeof cnt, cnt, 0, NULL, NULL);
        in_n = cnt[round % 3];
        c->visited = (int64_t)cnt[3] + ((int64_t)cnt[4] << 32);
        c->rounds = cnt[5];
    }
    return err;
}

static cl_int dan_final(const dan_call *c, cl_kernel k, cl_mem md, cl_mem mn, cl_int want, size_t lg)
{
    iwpp_kargs a = iwpp_kargs_of(c->s, k);
    ka_mem(&a, c->vr);
    ka_mem(&a, md);
    ka_mem(&a, mn);
    ka_int(&a, want);
    ka_int(&a, c->w);
    ka_int(&a, c->h);
    ka_uint(&a, c->n);
    ka_double(&a, c->hx);
    ka_double(&a, c->hy);
    ka_double(&a, c->hz);
    cl_int err = a.err;
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(c->s, k, c->n, lg);
    return err == CL_SUCCESS ? c->s->api->clFinish(c->s->queue) : err;
}

iwpp_status iwpp_ocl_edt_danielsson(iwpp_context *ctx, const iwpp_buf *bin, const double sp[3], iwpp_buf *dist,
                                    iwpp_buf *nearest)
{
    static const char *const names[3] = {"edt_dan_init", "edt_dan_round", "edt_dan_final"};
    cl_kernel k[3];
    iwpp_status rs;
    for (int i = 0; i < 3; ++i)
        if ((rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, names[i], &k[i]))) return rs;
    dan_call c;
    memset(&c, 0, sizeof c);
    c.s = iwpp_ocl_state(ctx);
    c.w = (cl_int)bin->w, c.h = (cl_int)bin->h, c.d = (cl_int)bin->d, c.n = (cl_uint)iwpp_buf_count(bin);
    c.hx = sp[0], c.hy = sp[1], c.hz = sp[2];
    /* a fixed group size on CPU devices: PoCL compiles a kernel once per group size, and the
     * runtime's choice follows the (per-round) global size */
    const size_t lg = c.s->is_gpu ? 0 : 64;
    if (!(rs = dan_alloc(ctx, bin, &c))) {
        cl_uint in_n = 0;
        cl_mem md = (cl_mem)dist->ptr, mn = nearest ? (cl_mem)nearest->ptr : md;
        cl_int err = dan_init(&c, k[0], (cl_mem)bin->ptr, lg, &in_n);
        if (err == CL_SUCCESS) err = dan_rounds(&c, k[1], in_n);
        if (err == CL_SUCCESS) err = dan_final(&c, k[2], md, mn, nearest != NULL, lg);
        if (err != CL_SUCCESS) rs = iwpp_ocl_fail(ctx, err, "the Danielsson distance transform kernels");
    }
    dan_free(&c);
    if (rs) return rs;
    snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "%s", "ocl-edt-danielsson");
    ctx->stats.pixels_visited = c.visited;
    ctx->stats.rounds = c.rounds;
    return IWPP_OK;
}
