/*
 * edt.c - Euclidean distance transforms on OpenCL: the entry that checks what every method needs
 * and picks the method. Exact: edt_exact.c (+ edt_exact.cl); Danielsson: edt_danielsson.c
 * (+ edt_danielsson.cl).
 */
#include "ocl.h"

static iwpp_status need_fp64(iwpp_context *ctx, iwpp_ocl *s)
{
    if (s->has_fp64) return IWPP_OK;
    return iwpp_set_error(ctx, IWPP_EUNSUPPORTED,
                          "OpenCL: %s has no double precision (cl_khr_fp64), which the distance "
                          "transform needs to give the same result as the other backends; use "
                          "the CPU backend for distance transforms",
                          s->name);
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
    iwpp_ocl_timer_start(s);
    rs = method == IWPP_EDT_DANIELSSON ? iwpp_ocl_edt_danielsson(ctx, binary, spacing, dist, nearest)
                                       : iwpp_ocl_edt_exact(ctx, binary, spacing, dist, nearest);
    if (rs == IWPP_OK) ctx->stats.compute_ms = iwpp_ocl_timer_ms(s);
    return rs;
}
