/* pointwise.c - OpenCL pointwise primitives, unit erosion/dilation, min/max. */
#include "ocl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

iwpp_status iwpp_ocl_pointwise(iwpp_context *ctx, iwpp_pw_op op, iwpp_buf *dst, const iwpp_buf *a,
                               const iwpp_buf *b, double s)
{
    iwpp_ocl *st = iwpp_ocl_state(ctx);
    cl_uint n = (cl_uint)iwpp_buf_count(dst);
    cl_kernel k;
    iwpp_status rs;
    cl_int err = CL_SUCCESS;
    if (op == IWPP_PW_LESS || op == IWPP_PW_GREATER) {
        if ((rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_MAIN, a->type, "pw_compare", &k))) return rs;
        cl_int greater = op == IWPP_PW_GREATER;
        cl_mem md = (cl_mem)dst->ptr, ma = (cl_mem)a->ptr, mb = (cl_mem)b->ptr;
        iwpp_kargs ka = iwpp_kargs_of(st, k);
        ka_mem(&ka, md);
        ka_mem(&ka, ma);
        ka_mem(&ka, mb);
        ka_int(&ka, greater);
        ka_uint(&ka, n);
        err = ka.err;
        if (err == CL_SUCCESS) err = iwpp_ocl_run1d(st, k, n, 0);
        if (err != CL_SUCCESS) return iwpp_ocl_fail(ctx, err, "a comparison kernel");
        return IWPP_OK;
    }
    if ((rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_MAIN, dst->type, "pw_apply", &k))) return rs;
    /* Scalars: the integer one clamped far outside the pixel range (saturation gives the
     * same result), the float one rounded once, the typed one as the C cast (T)s. */
    double sc = s;
    if (!(sc > -16777216.0)) sc = -16777216.0;
    if (!(sc < 16777216.0)) sc = 16777216.0;
    cl_int si = (cl_int)sc;
    cl_float sf = (cl_float)s;
    cl_mem md = (cl_mem)dst->ptr;
    cl_mem ma = a ? (cl_mem)a->ptr : md;
    cl_mem mb = b ? (cl_mem)b->ptr : ma;
    cl_int opc = (cl_int)op;
    cl_int w = (cl_int)dst->w, h = (cl_int)dst->h, d = (cl_int)dst->d;
    iwpp_kargs ka = iwpp_kargs_of(st, k);
    ka_mem(&ka, md);
    ka_mem(&ka, ma);
    ka_mem(&ka, mb);
    ka_int(&ka, opc);
    ka_int(&ka, si);
    ka_float(&ka, sf);
    /* the typed scalar (pix_t) */
    if (dst->type == IWPP_U8) {
        const cl_uchar sv = (cl_uchar)(s < 0 ? 0 : (s > 255 ? 255 : s));
        ka_set(&ka, sizeof sv, &sv);
    } else if (dst->type == IWPP_U16) {
        const cl_ushort sv = (cl_ushort)(s < 0 ? 0 : (s > 65535 ? 65535 : s));
        ka_set(&ka, sizeof sv, &sv);
    } else {
        ka_float(&ka, sf);
    }
    ka_uint(&ka, n);
    ka_int(&ka, w);
    ka_int(&ka, h);
    ka_int(&ka, d);
    err = ka.err;
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(st, k, n, 0);
    if (err != CL_SUCCESS) return iwpp_ocl_fail(ctx, err, "a pointwise kernel");
    return IWPP_OK;
}

iwpp_status iwpp_ocl_morph_unit(iwpp_context *ctx, iwpp_buf *dst, const iwpp_buf *src,
                                int connectivity, iwpp_morph_mode mode, int iterations)
{
    iwpp_ocl *st = iwpp_ocl_state(ctx);
    if (iterations <= 0) return iwpp_ocl_pointwise(ctx, IWPP_PW_COPY, dst, src, NULL, 0);
    cl_kernel k;
    iwpp_status rs;
    if ((rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_MAIN, dst->type, "morph_step", &k))) return rs;
    cl_mem offs = NULL, tmp = NULL;
    int noffs = 0;
    if ((rs = iwpp_ocl_offsets(ctx, connectivity, dst, &offs, &noffs))) return rs;
    size_t bytes = (size_t)iwpp_buf_count(dst) * iwpp_type_size(dst->type);
    if (iterations > 1 && (rs = iwpp_ocl_alloc(ctx, bytes, "the erosion/dilation scratch image", &tmp))) {
        iwpp_ocl_release(st, offs);
        return rs;
    }
    cl_uint n = (cl_uint)iwpp_buf_count(dst);
    cl_int erode = mode == IWPP_BY_EROSION;
    cl_int w = (cl_int)dst->w, h = (cl_int)dst->h, d = (cl_int)dst->d, no = noffs;
    cl_int err = CL_SUCCESS;
    /* Ping-pong so that the last step writes dst. */
    cl_mem from = (cl_mem)src->ptr;
    for (int it = 0; it < iterations && err == CL_SUCCESS; ++it) {
        int left = iterations - 1 - it; /* steps after this one */
        cl_mem to = (left % 2 == 0) ? (cl_mem)dst->ptr : tmp;
        iwpp_kargs ka = iwpp_kargs_of(st, k);
        ka_mem(&ka, to);
        ka_mem(&ka, from);
        ka_int(&ka, erode);
        ka_int(&ka, w);
        ka_int(&ka, h);
        ka_int(&ka, d);
        ka_mem(&ka, offs);
        ka_int(&ka, no);
        ka_uint(&ka, n);
        err = ka.err;
        if (err == CL_SUCCESS) err = iwpp_ocl_run1d(st, k, n, 0);
        from = to;
    }
    if (err == CL_SUCCESS) err = st->api->clFinish(st->queue);
    iwpp_ocl_release(st, tmp);
    iwpp_ocl_release(st, offs);
    if (err != CL_SUCCESS) return iwpp_ocl_fail(ctx, err, "an erosion/dilation kernel");
    return IWPP_OK;
}

static double key_to_double(iwpp_type t, cl_uint key)
{
    if (t != IWPP_F32) return (double)key;
    cl_uint bits = (key & 0x80000000u) ? (key & 0x7fffffffu) : ~key;
    float f;
    memcpy(&f, &bits, sizeof f);
    return (double)f;
}

iwpp_status iwpp_ocl_minmax(iwpp_context *ctx, const iwpp_buf *a, double *min, double *max)
{
    iwpp_ocl *st = iwpp_ocl_state(ctx);
    cl_kernel k;
    iwpp_status rs;
    if ((rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_MAIN, a->type, "minmax_groups", &k))) return rs;
    size_t L = 1;
    size_t gs = iwpp_ocl_group_size(st, k, 256);
    while (L * 2 <= gs) L *= 2;
    cl_uint n = (cl_uint)iwpp_buf_count(a);
    size_t G = st->compute_units * 4;
    if (G > 1024) G = 1024;
    size_t need = (n + L - 1) / L;
    if (G > need) G = need;
    if (G == 0) G = 1;
    cl_mem out = NULL;
    if ((rs = iwpp_ocl_alloc(ctx, G * 2 * sizeof(cl_uint), "the min/max partial results", &out)))
        return rs;
    cl_int err = CL_SUCCESS;
    cl_mem ma = (cl_mem)a->ptr;
    iwpp_kargs ka = iwpp_kargs_of(st, k);
    ka_mem(&ka, ma);
    ka_uint(&ka, n);
    ka_mem(&ka, out);
    ka_local(&ka, L * sizeof(cl_uint));
    ka_local(&ka, L * sizeof(cl_uint));
    err = ka.err;
    size_t global = G * L;
    if (err == CL_SUCCESS)
        err = iwpp_ocl_enqueue(st, k, 1, &global, &L, NULL);
    cl_uint *part = malloc(G * 2 * sizeof(cl_uint));
    if (!part) {
        iwpp_ocl_release(st, out);
        return iwpp_set_error(ctx, IWPP_ENOMEM, "OpenCL min/max: out of host memory");
    }
    if (err == CL_SUCCESS)
        err = st->api->clEnqueueReadBuffer(st->queue, out, CL_TRUE, 0, G * 2 * sizeof(cl_uint), part,
                                           0, NULL, NULL);
    iwpp_ocl_release(st, out);
    if (err != CL_SUCCESS) {
        free(part);
        return iwpp_ocl_fail(ctx, err, "the min/max kernel");
    }
    cl_uint mn = 0xffffffffu, mx = 0;
    for (size_t g = 0; g < G; ++g) {
        if (part[2 * g] < mn) mn = part[2 * g];
        if (part[2 * g + 1] > mx) mx = part[2 * g + 1];
    }
    free(part);
    *min = key_to_double(a->type, mn);
    *max = key_to_double(a->type, mx);
    return IWPP_OK;
}
