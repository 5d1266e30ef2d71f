/*
 * ops/watershed.c - operations built on reconstruction, labeling and the watershed, written
 * once on top of the backend ops table (as ops/composed.c): extended maxima / minima, impose
 * minima, and the distance-transform watershed. Definitions: native/include/iwpp.h.
 */
#include "dispatch.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double lowest(iwpp_type t) { return t == IWPP_F32 ? -INFINITY : 0.0; }
static double highest(iwpp_type t) { return t == IWPP_U8 ? 255.0 : t == IWPP_U16 ? 65535.0 : INFINITY; }

static iwpp_status check_h(iwpp_context *ctx, double h, iwpp_type t, const char *name)
{
    if (!(h >= 0.0) || !isfinite(h))
        return iwpp_set_error(ctx, IWPP_EINVAL, "%s is %g; it must be a finite number of 0 or more", name, h);
    if (t == IWPP_F32 && h > FLT_MAX) /* (float)h would be +inf, and inf - inf NaN */
        return iwpp_set_error(ctx, IWPP_EINVAL, "%s is %g; for f32 it must be at most %g (FLT_MAX)", name, h,
                              (double)FLT_MAX);
    return IWPP_OK;
}

/* m = h-maxima (maxima) or h-minima of f (as iwpp_h_maxima: integer h rounded half up). */
static iwpp_status h_extrema(iwpp_context *ctx, const iwpp_buf *f, iwpp_buf *m, double h, int conn, int maxima)
{
    const iwpp_backend_ops *ops = ctx->ops;
    const double hh = f->type == IWPP_F32 ? h : fmin(floor(h + 0.5), 65536.0);
    iwpp_status st = ops->pointwise(ctx, maxima ? IWPP_PW_SUB_SCALAR : IWPP_PW_ADD_SCALAR, m, f, NULL, hh);
    return st ? st : ops->reconstruct(ctx, m, f, conn, maxima ? IWPP_BY_DILATION : IWPP_BY_EROSION);
}

/* r (U8 0/255) = regional maxima (maxima) or minima of f; t is scratch of f's type. As
 * iwpp_regional_maxima: a plateau is a maximum iff reconstructing (f - one step) under f leaves
 * it below f; a constant image is all maxima. */
static iwpp_status regional_extrema(iwpp_context *ctx, const iwpp_buf *f, iwpp_buf *t, iwpp_buf *r, int conn,
                                    int maxima)
{
    const iwpp_backend_ops *ops = ctx->ops;
    double lo, hi;
    iwpp_status st = ops->minmax(ctx, f, &lo, &hi);
    if (st) return st;
    if (lo == hi) return ops->pointwise(ctx, IWPP_PW_FILL, r, NULL, NULL, 255.0);
    ctx->short_waves++; /* the waves of (f - one step) stop at each plateau's edge */
    if (!(st = ops->pointwise(ctx, maxima ? IWPP_PW_STEP_DOWN : IWPP_PW_STEP_UP, t, f, NULL, 0)))
        st = ops->reconstruct(ctx, t, f, conn, maxima ? IWPP_BY_DILATION : IWPP_BY_EROSION);
    ctx->short_waves--;
    if (st) return st;
    return ops->pointwise(ctx, maxima ? IWPP_PW_LESS : IWPP_PW_GREATER, r, t, f, 0);
}

static iwpp_status extended(iwpp_context *ctx, const iwpp_image *in, double h, int conn, iwpp_image *out, int maxima)
{
    iwpp_status st = iwpp_begin(ctx);
    if (st || (st = iwpp_check_image(ctx, in, "in", IWPP_TYPES_GRAY, 1)) ||
        (st = iwpp_check_image(ctx, out, "out", IWPP_TYPE_BIT(IWPP_U8), 0)) ||
        (st = iwpp_check_same(ctx, in, "in", out, "out", 0)) || (st = iwpp_check_connectivity(ctx, conn, in)) ||
        (st = check_h(ctx, h, in->type, "h")))
        return st;
    const double t0 = iwpp_now_ms();
    memset(&ctx->stats, 0, sizeof ctx->stats);
    if ((st = iwpp_progress_report(ctx, 0.0))) return st;
    iwpp_bufset s = {.ctx = ctx};
    iwpp_buf *f = NULL, *m = NULL, *t = NULL, *r = NULL;
    if (!(st = iwpp_bufset_input(&s, in, &f)) && !(st = iwpp_bufset_alloc(&s, in->type, in, &m)) &&
        !(st = iwpp_bufset_alloc(&s, in->type, in, &t)) &&
        !(st = iwpp_bufset_output(&s, IWPP_U8, out, in, NULL, &r)) &&
        !(st = h_extrema(ctx, f, m, h, conn, maxima)) && !(st = iwpp_progress_report(ctx, 0.5)) &&
        !(st = regional_extrema(ctx, m, t, r, conn, maxima))) /* r may be out: no cancel after it */
        st = ctx->ops->download(ctx, r, out);
    iwpp_bufset_free(&s);
    if (st) return st;
    iwpp_progress_done(ctx);
    iwpp_end(ctx, t0);
    return IWPP_OK;
}

iwpp_status iwpp_extended_maxima(iwpp_context *ctx, const iwpp_image *in, double h, int connectivity,
                                 iwpp_image *out)
{
    return extended(ctx, in, h, connectivity, out, 1);
}

iwpp_status iwpp_extended_minima(iwpp_context *ctx, const iwpp_image *in, double h, int connectivity,
                                 iwpp_image *out)
{
    return extended(ctx, in, h, connectivity, out, 0);
}

/* A contiguous host image of @p type: the lowest value where @p markers is nonzero, the highest
 * elsewhere. The caller frees ->data. */
static iwpp_status impose_marker(iwpp_context *ctx, const iwpp_image *markers, iwpp_type type, iwpp_image *out)
{
    const int64_t w = markers->width, h = markers->height, d = markers->depth;
    const int64_t sy = markers->stride_y ? markers->stride_y : w, sz = markers->stride_z ? markers->stride_z : sy * h;
    void *p = malloc((size_t)(w * h * d) * iwpp_type_size(type) + 1);
    if (!p) return iwpp_set_error(ctx, IWPP_ENOMEM, "out of host memory for the marker of impose_minima");
    *out = iwpp_image_3d(p, type, w, h, d);
    const double lo = lowest(type), hi = highest(type);
    for (int64_t z = 0, o = 0; z < d; ++z)
        for (int64_t y = 0; y < h; ++y)
            for (int64_t x = 0; x < w; ++x, ++o) {
                const int64_t i = z * sz + y * sy + x;
                int on;
                switch (markers->type) {
                case IWPP_U8: on = ((const uint8_t *)markers->data)[i] != 0; break;
                case IWPP_U16: on = ((const uint16_t *)markers->data)[i] != 0; break;
                default: on = ((const float *)markers->data)[i] != 0.0f; break;
                }
                if (type == IWPP_U8) ((uint8_t *)p)[o] = on ? 0 : 255;
                else if (type == IWPP_U16) ((uint16_t *)p)[o] = on ? 0 : 65535;
                else ((float *)p)[o] = (float)(on ? lo : hi);
            }
    return IWPP_OK;
}

iwpp_status iwpp_impose_minima(iwpp_context *ctx, const iwpp_image *in, const iwpp_image *markers, int connectivity,
                               iwpp_image *out)
{
    iwpp_status st = iwpp_begin(ctx);
    if (st || (st = iwpp_check_image(ctx, in, "in", IWPP_TYPES_GRAY, 1)) ||
        (st = iwpp_check_image(ctx, markers, "markers", IWPP_TYPES_GRAY, 1)) ||
        (st = iwpp_check_image(ctx, out, "out", IWPP_TYPE_BIT(in->type), 0)) ||
        (st = iwpp_check_same(ctx, in, "in", markers, "markers", 0)) ||
        (st = iwpp_check_same(ctx, in, "in", out, "out", 0)) || (st = iwpp_check_connectivity(ctx, connectivity, in)))
        return st;
    const double t0 = iwpp_now_ms();
    memset(&ctx->stats, 0, sizeof ctx->stats);
    if ((st = iwpp_progress_report(ctx, 0.0))) return st;
    iwpp_image mk;
    if ((st = impose_marker(ctx, markers, in->type, &mk))) return st;
    const iwpp_backend_ops *ops = ctx->ops;
    iwpp_bufset s = {.ctx = ctx};
    iwpp_buf *f = NULL, *m = NULL, *g = NULL;
    if (!(st = iwpp_bufset_input(&s, in, &f)) && !(st = iwpp_bufset_alloc(&s, in->type, in, &m)) &&
        !(st = iwpp_bufset_alloc(&s, in->type, in, &g)) && !(st = ops->upload(ctx, m, &mk)) &&
        !(st = ops->pointwise(ctx, IWPP_PW_STEP_UP, g, f, NULL, 0)) &&
        !(st = ops->pointwise(ctx, IWPP_PW_MIN, g, g, m, 0)) && !(st = iwpp_progress_report(ctx, 0.2)) &&
        !(st = ops->reconstruct(ctx, m, g, connectivity, IWPP_BY_EROSION)) &&
        !(st = iwpp_progress_report(ctx, 0.95)))
        st = ops->download(ctx, m, out);
    iwpp_bufset_free(&s);
    free(mk.data);
    if (st) return st;
    iwpp_progress_done(ctx);
    iwpp_end(ctx, t0);
    return IWPP_OK;
}

/* ---------------------------------------------------------------- distance watershed */

/* Markers: labels (of @p mk's type) of the regional maxima of the h-maxima of @p dist;
 * @p a, @p b F32 scratch, @p r U8 scratch. */
static iwpp_status dw_markers(iwpp_context *ctx, const iwpp_buf *dist, iwpp_buf *a, iwpp_buf *b, iwpp_buf *r,
                              double dynamic, int short_h, int conn, iwpp_buf *mk)
{
    int64_t count = 0;
    ctx->short_waves += short_h;
    iwpp_status st = h_extrema(ctx, dist, a, dynamic, conn, 1);
    ctx->short_waves -= short_h;
    if (st || (st = iwpp_progress_report(ctx, 0.4)) ||
        (st = regional_extrema(ctx, a, b, r, conn, 1)) || (st = iwpp_progress_report(ctx, 0.5)))
        return st;
    return ctx->ops->label(ctx, r, conn, IWPP_LABEL_BINARY, mk, &count);
}

/* The whole pipeline on backend buffers; the result downloaded into @p labels_out. */
static iwpp_status dw_run(iwpp_context *ctx, const iwpp_image *binary, const double sp[3], double dynamic,
                          int conn, int lines, iwpp_image *labels_out)
{
    const iwpp_backend_ops *ops = ctx->ops;
    iwpp_bufset s = {.ctx = ctx}, s2 = {.ctx = ctx};
    iwpp_buf *bin = NULL, *dist = NULL, *a = NULL, *b = NULL, *r = NULL, *mk = NULL, *lab = NULL;
    /* The distance climbs at most one pixel size per pixel, so the h-maxima's waves reach about
     * dynamic / (pixel size) pixels: short for the dynamics that split nuclei. */
    const double px = binary->depth > 1 ? fmin(sp[0], fmin(sp[1], sp[2])) : fmin(sp[0], sp[1]);
    const int short_h = dynamic <= 16.0 * px;
    iwpp_status st;
    if (!(st = iwpp_bufset_input(&s, binary, &bin)) && !(st = iwpp_bufset_alloc(&s, IWPP_F32, binary, &dist)) &&
        !(st = iwpp_bufset_alloc(&s, IWPP_F32, binary, &a)) && !(st = iwpp_bufset_alloc(&s, IWPP_F32, binary, &b)) &&
        !(st = iwpp_bufset_alloc(&s, IWPP_U8, binary, &r)) &&
        !(st = iwpp_bufset_alloc(&s2, labels_out->type, binary, &mk)) &&
        !(st = iwpp_bufset_output(&s2, labels_out->type, labels_out, binary, NULL, &lab)) &&
        !(st = ops->edt(ctx, bin, IWPP_EDT_EXACT, sp, dist, NULL)) && !(st = iwpp_progress_report(ctx, 0.2)) &&
        !(st = dw_markers(ctx, dist, a, b, r, dynamic, short_h, conn, mk)) &&
        /* relief -dist (0 - dist), inside the objects (dist > 0) */
        !(st = ops->pointwise(ctx, IWPP_PW_FILL, a, NULL, NULL, 0.0)) &&
        !(st = ops->pointwise(ctx, IWPP_PW_GREATER, r, dist, a, 0)) &&
        !(st = ops->pointwise(ctx, IWPP_PW_SUB, b, a, dist, 0)) && !(st = iwpp_progress_report(ctx, 0.6))) {
        /* the backend's own fractions land in [0.6, 0.95]; lab may be labels_out: no cancel after it */
        iwpp_progress_span span;
        iwpp_progress_push(ctx, &span, 0.6, 0.95);
        ctx->short_waves++; /* the levels of a smooth relief (-dist) from one marker per object */
        st = ops->watershed(ctx, b, mk, r, conn, lines, lab);
        ctx->short_waves--;
        iwpp_progress_pop(ctx, &span);
        if (!st) st = ops->download(ctx, lab, labels_out);
    }
    iwpp_bufset_free(&s2);
    iwpp_bufset_free(&s);
    return st;
}

iwpp_status iwpp_distance_watershed(iwpp_context *ctx, const iwpp_image *binary, const double spacing[3],
                                    double dynamic, int connectivity, int lines, iwpp_image *labels_out)
{
    iwpp_status st = iwpp_begin(ctx);
    if (st || (st = iwpp_check_image(ctx, binary, "binary", IWPP_TYPES_GRAY, 1)) ||
        (st = iwpp_check_image(ctx, labels_out, "labels_out", IWPP_TYPES_LABEL_OUT, 0)) ||
        (st = iwpp_check_same(ctx, binary, "binary", labels_out, "labels_out", 0)) ||
        (st = iwpp_check_connectivity(ctx, connectivity, binary)) ||
        (st = check_h(ctx, dynamic, IWPP_F32, "dynamic")))
        return st;
    double sp[3];
    if ((st = iwpp_check_spacing(ctx, binary, spacing, sp))) return st;
    if (!ctx->ops->label || !ctx->ops->watershed)
        return iwpp_set_error(ctx, IWPP_EUNSUPPORTED, "the distance watershed is not available on the %s backend",
                              ctx->ops->name);
    const double t0 = iwpp_now_ms();
    memset(&ctx->stats, 0, sizeof ctx->stats);
    if ((st = iwpp_progress_report(ctx, 0.0)) || (st = dw_run(ctx, binary, sp, dynamic, connectivity, lines, labels_out)))
        return st;
    strcpy(ctx->stats.variant, "edt+hmax+label+watershed");
    iwpp_progress_done(ctx);
    iwpp_end(ctx, t0);
    return IWPP_OK;
}
