/*
 * edt.c - Euclidean distance transforms on OpenCL (kernels: edt.cl).
 * Exact: the separable method of native/cpu/edt.c, bit for bit (double
 * precision, so the device needs cl_khr_fp64). Danielsson: IWPP propagation
 * of 32-bit nearest-background indices, one host-driven round per wave.
 */
#include "ocl.h"
#include "neighborhood.h"

#include <stdio.h>
#include <string.h>

static iwpp_status need_fp64(iwpp_context *ctx, iwpp_ocl *s)
{
    if (s->has_fp64) return IWPP_OK;
    return iwpp_set_error(ctx, IWPP_EUNSUPPORTED,
                          "OpenCL: %s has no double precision (cl_khr_fp64), which the distance "
                          "transform needs to give the same result as the other backends; use "
                          "the CPU backend for distance transforms",
                          s->name);
}

#define OUTER_SEG 64 /* pass A segment length (positions along the outer axis) */

/* Per-plane tiled transpose of a w x h x d image of 4- or 8-byte elements:
 * inverse = 0: [z][y][x] -> [z][x][y]; inverse = 1: back. */
static cl_int transpose(iwpp_ocl *s, cl_kernel k, cl_mem in, cl_mem out, cl_int w, cl_int h,
                        cl_int d, int inverse)
{
    cl_int err = CL_SUCCESS;
    IWPP_KARG(s, k, 0, in);
    IWPP_KARG(s, k, 1, out);
    IWPP_KARG(s, k, 2, w);
    IWPP_KARG(s, k, 3, h);
    if (err != CL_SUCCESS) return err;
    size_t ly = s->max_wg >= 256 ? 8 : 1;
    size_t a = inverse ? (size_t)h : (size_t)w, b = inverse ? (size_t)w : (size_t)h;
    size_t local[3] = {32, ly, 1};
    size_t global[3] = {(a + 31) / 32 * 32, (b + 31) / 32 * ly, (size_t)d};
    return s->api->clEnqueueNDRangeKernel(s->queue, k, 3, NULL, global, local, 0, NULL, NULL);
}

static iwpp_status edt_exact(iwpp_context *ctx, const iwpp_buf *bin, const double sp[3],
                             iwpp_buf *dist, iwpp_buf *nearest)
{
    iwpp_ocl *s = iwpp_ocl_state(ctx);
    const cl_int w = (cl_int)bin->w, h = (cl_int)bin->h, d = (cl_int)bin->d;
    const size_t n = (size_t)iwpp_buf_count(bin);
    cl_kernel k_outer, k_env, k_oseg, k_ocarry, k_oapply, k_tr, k_untr32, k_untr64;
    iwpp_status rs;
    if ((rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, "edt_outer", &k_outer)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, "edt_envelope", &k_env)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, "edt_outer_seg", &k_oseg)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, "edt_outer_carry", &k_ocarry)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, "edt_outer_apply", &k_oapply)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, "edt_transpose32", &k_tr)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, "edt_untranspose32", &k_untr32)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, "edt_untranspose64", &k_untr64)))
        return rs;
    /* Pass A: along the outer axis, line l of `count` planes of `len` pixels. */
    const cl_uint len = d > 1 ? (cl_uint)(w * h) : (cl_uint)w;
    const cl_int count = d > 1 ? d : h;
    const cl_int SEG = OUTER_SEG;
    const cl_uint nseg = (cl_uint)((count + SEG - 1) / SEG);
    /* Segmented pass A when the plain one would leave the device idle. */
    const int seg_a = nseg > 1 && len < (1u << 20);
    cl_mem ny = NULL, nz = NULL, ny2 = NULL, nz2 = NULL, v = NULL, fl = NULL, nyT = NULL,
           nearT = NULL;
    if ((rs = iwpp_ocl_alloc(ctx, n * 4, "the distance transform's site map", &ny)) ||
        (rs = iwpp_ocl_alloc(ctx, n * 4, "the distance transform's envelope scratch", &v)))
        goto done;
    if (d > 1 && ((rs = iwpp_ocl_alloc(ctx, n * 4, "the distance transform's z-site map", &nz)) ||
                  (rs = iwpp_ocl_alloc(ctx, n * 4, "the distance transform's y-site map", &ny2)) ||
                  (rs = iwpp_ocl_alloc(ctx, n * 4, "the distance transform's z-site map", &nz2))))
        goto done;
    if (d == 1 && (rs = iwpp_ocl_alloc(ctx, n * 4, "the distance transform's transposed map", &nyT)))
        goto done;
    if (nearest && (rs = iwpp_ocl_alloc(ctx, n * 8, "the transposed nearest-index map", &nearT)))
        goto done;
    if (seg_a && (rs = iwpp_ocl_alloc(ctx, (size_t)len * nseg * 8, "the distance transform's "
                                      "segment table", &fl)))
        goto done;
    cl_int err = CL_SUCCESS;
    cl_mem mb = (cl_mem)bin->ptr;
    {
        cl_mem out = d > 1 ? nz : ny;
        size_t lg = s->is_gpu ? 128 : 0;
        if (seg_a) {
            IWPP_KARG(s, k_oseg, 0, mb);
            IWPP_KARG(s, k_oseg, 1, fl);
            IWPP_KARG(s, k_oseg, 2, len);
            IWPP_KARG(s, k_oseg, 3, count);
            IWPP_KARG(s, k_oseg, 4, SEG);
            IWPP_KARG(s, k_oseg, 5, nseg);
            IWPP_KARG(s, k_ocarry, 0, fl);
            IWPP_KARG(s, k_ocarry, 1, len);
            IWPP_KARG(s, k_ocarry, 2, nseg);
            IWPP_KARG(s, k_oapply, 0, mb);
            IWPP_KARG(s, k_oapply, 1, fl);
            IWPP_KARG(s, k_oapply, 2, out);
            IWPP_KARG(s, k_oapply, 3, len);
            IWPP_KARG(s, k_oapply, 4, count);
            IWPP_KARG(s, k_oapply, 5, SEG);
            IWPP_KARG(s, k_oapply, 6, nseg);
            if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_oseg, (size_t)len * nseg, lg);
            if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_ocarry, len, lg);
            if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_oapply, (size_t)len * nseg, lg);
        } else {
            IWPP_KARG(s, k_outer, 0, mb);
            IWPP_KARG(s, k_outer, 1, out);
            IWPP_KARG(s, k_outer, 2, len);
            IWPP_KARG(s, k_outer, 3, count);
            if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_outer, len, s->is_gpu ? 64 : 0);
        }
    }
    cl_mem md = (cl_mem)dist->ptr;
    cl_int want = nearest != NULL;
    cl_double hx = sp[0], hy = sp[1], hz = sp[2];
    if (d > 1) {
        /* pass B (3D): along y, columns (x, z) are coalesced as they are: nz -> ny2, nz2 */
        cl_int pass = 1;
        IWPP_KARG(s, k_env, 0, pass);
        IWPP_KARG(s, k_env, 1, w);
        IWPP_KARG(s, k_env, 2, h);
        IWPP_KARG(s, k_env, 3, d);
        IWPP_KARG(s, k_env, 4, ny);
        IWPP_KARG(s, k_env, 5, nz);
        IWPP_KARG(s, k_env, 6, ny2);
        IWPP_KARG(s, k_env, 7, nz2);
        IWPP_KARG(s, k_env, 8, md);
        IWPP_KARG(s, k_env, 9, md);
        IWPP_KARG(s, k_env, 10, want);
        IWPP_KARG(s, k_env, 11, v);
        IWPP_KARG(s, k_env, 12, hx);
        IWPP_KARG(s, k_env, 13, hy);
        IWPP_KARG(s, k_env, 14, hz);
        if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_env, (size_t)w * d, s->is_gpu ? 64 : 0);
    }
    /* Pass C along x on transposed planes ([z][x][y]), so that neighbouring
     * work-items (neighbouring rows y) read and write neighbouring addresses;
     * the same operations in the same order as the CPU, only laid out apart. */
    cl_mem tny = d > 1 ? ny : nyT, tnz = d > 1 ? nz : nyT; /* transposed maps (ny, nz are free now) */
    cl_mem distT = d > 1 ? ny2 : ny;                       /* free once transposed */
    if (err == CL_SUCCESS) err = transpose(s, k_tr, d > 1 ? ny2 : ny, tny, w, h, d, 0);
    if (err == CL_SUCCESS && d > 1) err = transpose(s, k_tr, nz2, tnz, w, h, d, 0);
    if (err == CL_SUCCESS) {
        cl_int pass = 3;
        cl_mem mnT = nearT ? nearT : distT;
        IWPP_KARG(s, k_env, 0, pass);
        IWPP_KARG(s, k_env, 1, w);
        IWPP_KARG(s, k_env, 2, h);
        IWPP_KARG(s, k_env, 3, d);
        IWPP_KARG(s, k_env, 4, tny);
        IWPP_KARG(s, k_env, 5, tnz);
        IWPP_KARG(s, k_env, 6, tny);
        IWPP_KARG(s, k_env, 7, tnz);
        IWPP_KARG(s, k_env, 8, distT);
        IWPP_KARG(s, k_env, 9, mnT);
        IWPP_KARG(s, k_env, 10, want);
        IWPP_KARG(s, k_env, 11, v);
        IWPP_KARG(s, k_env, 12, hx);
        IWPP_KARG(s, k_env, 13, hy);
        IWPP_KARG(s, k_env, 14, hz);
        if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_env, (size_t)h * d, s->is_gpu ? 64 : 0);
    }
    if (err == CL_SUCCESS) err = transpose(s, k_untr32, distT, md, w, h, d, 1);
    if (err == CL_SUCCESS && nearest)
        err = transpose(s, k_untr64, nearT, (cl_mem)nearest->ptr, w, h, d, 1);
    if (err == CL_SUCCESS) err = s->api->clFinish(s->queue);
    if (err != CL_SUCCESS) rs = iwpp_ocl_fail(ctx, err, "the exact distance transform kernels");
    snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "%s", "ocl-edt-exact-separable");
    ctx->stats.pixels_visited = 0;
    ctx->stats.rounds = d > 1 ? 3 : (h > 1 ? 2 : 1);
done:
    iwpp_ocl_release(s, ny);
    iwpp_ocl_release(s, nz);
    iwpp_ocl_release(s, ny2);
    iwpp_ocl_release(s, nz2);
    iwpp_ocl_release(s, v);
    iwpp_ocl_release(s, fl);
    iwpp_ocl_release(s, nyT);
    iwpp_ocl_release(s, nearT);
    return rs;
}

static iwpp_status edt_danielsson(iwpp_context *ctx, const iwpp_buf *bin, const double sp[3],
                                  iwpp_buf *dist, iwpp_buf *nearest)
{
    iwpp_ocl *s = iwpp_ocl_state(ctx);
    const cl_int w = (cl_int)bin->w, h = (cl_int)bin->h, d = (cl_int)bin->d;
    const cl_uint n = (cl_uint)iwpp_buf_count(bin);
    cl_kernel k_init, k_round, k_final;
    iwpp_status rs;
    if ((rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, "edt_dan_init", &k_init)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, "edt_dan_round", &k_round)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, "edt_dan_final", &k_final)))
        return rs;
    cl_mem vr = NULL, la = NULL, lb = NULL, mark = NULL, cnt = NULL, offs = NULL;
    int noffs = 0;
    if ((rs = iwpp_ocl_offsets(ctx, 26, bin, &offs, &noffs)) ||
        (rs = iwpp_ocl_alloc(ctx, (size_t)n * 4, "the nearest-site map", &vr)) ||
        (rs = iwpp_ocl_alloc(ctx, (size_t)n * 4, "the propagation list", &la)) ||
        (rs = iwpp_ocl_alloc(ctx, (size_t)n * 4, "the propagation list", &lb)) ||
        (rs = iwpp_ocl_alloc(ctx, (size_t)n * 4, "the propagation marks", &mark)) ||
        (rs = iwpp_ocl_alloc(ctx, 2 * 4, "the propagation counters", &cnt)))
        goto done;
    cl_int err = CL_SUCCESS;
    const cl_uint zero = 0, ones = 0xffffffffu;
    cl_mem mb = (cl_mem)bin->ptr;
    const cl_int no = noffs;
    err = s->api->clEnqueueFillBuffer(s->queue, cnt, &zero, 4, 0, 8, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = s->api->clEnqueueFillBuffer(s->queue, mark, &ones, 4, 0, (size_t)n * 4, 0, NULL, NULL);
    IWPP_KARG(s, k_init, 0, mb);
    IWPP_KARG(s, k_init, 1, vr);
    IWPP_KARG(s, k_init, 2, w);
    IWPP_KARG(s, k_init, 3, h);
    IWPP_KARG(s, k_init, 4, d);
    IWPP_KARG(s, k_init, 5, offs);
    IWPP_KARG(s, k_init, 6, no);
    IWPP_KARG(s, k_init, 7, n);
    IWPP_KARG(s, k_init, 8, la);
    IWPP_KARG(s, k_init, 9, cnt);
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_init, n, 0);
    cl_uint in_n = 0;
    if (err == CL_SUCCESS)
        err = s->api->clEnqueueReadBuffer(s->queue, cnt, CL_TRUE, 0, 4, &in_n, 0, NULL, NULL);
    cl_double hx = sp[0], hy = sp[1], hz = sp[2];
    int64_t visited = 0, rounds = 0;
    cl_uint round = 0;
    while (err == CL_SUCCESS && in_n > 0) {
        visited += in_n;
        ++rounds;
        err = s->api->clEnqueueFillBuffer(s->queue, cnt, &zero, 4, 0, 4, 0, NULL, NULL);
        IWPP_KARG(s, k_round, 0, vr);
        IWPP_KARG(s, k_round, 1, w);
        IWPP_KARG(s, k_round, 2, h);
        IWPP_KARG(s, k_round, 3, d);
        IWPP_KARG(s, k_round, 4, offs);
        IWPP_KARG(s, k_round, 5, no);
        IWPP_KARG(s, k_round, 6, la);
        IWPP_KARG(s, k_round, 7, in_n);
        IWPP_KARG(s, k_round, 8, lb);
        IWPP_KARG(s, k_round, 9, cnt);
        IWPP_KARG(s, k_round, 10, mark);
        IWPP_KARG(s, k_round, 11, round);
        IWPP_KARG(s, k_round, 12, hx);
        IWPP_KARG(s, k_round, 13, hy);
        IWPP_KARG(s, k_round, 14, hz);
        if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_round, in_n, 0);
        in_n = 0;
        if (err == CL_SUCCESS)
            err = s->api->clEnqueueReadBuffer(s->queue, cnt, CL_TRUE, 0, 4, &in_n, 0, NULL, NULL);
        cl_mem t = la;
        la = lb;
        lb = t;
        ++round;
    }
    cl_mem md = (cl_mem)dist->ptr;
    cl_mem mn = nearest ? (cl_mem)nearest->ptr : md;
    cl_int want = nearest != NULL;
    IWPP_KARG(s, k_final, 0, vr);
    IWPP_KARG(s, k_final, 1, md);
    IWPP_KARG(s, k_final, 2, mn);
    IWPP_KARG(s, k_final, 3, want);
    IWPP_KARG(s, k_final, 4, w);
    IWPP_KARG(s, k_final, 5, h);
    IWPP_KARG(s, k_final, 6, n);
    IWPP_KARG(s, k_final, 7, hx);
    IWPP_KARG(s, k_final, 8, hy);
    IWPP_KARG(s, k_final, 9, hz);
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_final, n, 0);
    if (err == CL_SUCCESS) err = s->api->clFinish(s->queue);
    if (err != CL_SUCCESS) {
        rs = iwpp_ocl_fail(ctx, err, "the Danielsson distance transform kernels");
        goto done;
    }
    snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "%s", "ocl-edt-danielsson");
    ctx->stats.pixels_visited = visited;
    ctx->stats.rounds = rounds;
done:
    iwpp_ocl_release(s, vr);
    iwpp_ocl_release(s, la);
    iwpp_ocl_release(s, lb);
    iwpp_ocl_release(s, mark);
    iwpp_ocl_release(s, cnt);
    iwpp_ocl_release(s, offs);
    return rs;
}

iwpp_status iwpp_ocl_edt(iwpp_context *ctx, const iwpp_buf *binary, iwpp_edt_method method,
                         const double spacing[3], iwpp_buf *dist, iwpp_buf *nearest)
{
    iwpp_ocl *s = iwpp_ocl_state(ctx);
    iwpp_status rs = need_fp64(ctx, s);
    if (rs) return rs;
    const int64_t n = iwpp_buf_count(binary);
    if (n > 0x7fffffffLL)
        return iwpp_set_error(ctx, IWPP_EUNSUPPORTED,
                              "OpenCL distance transform handles at most 2^31-1 pixels per call, "
                              "but the image has %lld; use the CPU backend",
                              (long long)n);
    const double t0 = iwpp_now_ms();
    rs = method == IWPP_EDT_DANIELSSON ? edt_danielsson(ctx, binary, spacing, dist, nearest)
                                       : edt_exact(ctx, binary, spacing, dist, nearest);
    if (rs == IWPP_OK) ctx->stats.compute_ms = iwpp_now_ms() - t0;
    return rs;
}
