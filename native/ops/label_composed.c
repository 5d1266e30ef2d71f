/*
 * ops/label_composed.c - the label operations built from other public calls: extended
 * maxima/minima (h-maxima then regional maxima), impose minima (one reconstruction by
 * erosion) and the distance-transform watershed (EDT, extended maxima, labeling, watershed).
 *
 * Written on the public API, on host buffers: each step is one library call on the context's
 * backend, so every backend gives the bits its steps give (and those are equal everywhere).
 * Progress: each step's fractions land in its own share of [0, 1].
 * Definitions: native/include/iwpp.h.
 */
#include "dispatch.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int64_t sy_of(const iwpp_image *im) { return im->stride_y ? im->stride_y : im->width; }
static int64_t sz_of(const iwpp_image *im) { return im->stride_z ? im->stride_z : sy_of(im) * im->height; }

/* A contiguous host image like @p like (sizes) of @p type, zeroed; ENOMEM set on failure. */
static iwpp_status host_image(iwpp_context *ctx, iwpp_type type, const iwpp_image *like, iwpp_image *out)
{
    const size_t n = (size_t)(like->width * like->height * like->depth);
    void *p = calloc(n ? n : 1, iwpp_type_size(type));
    if (!p)
        return iwpp_set_error(ctx, IWPP_ENOMEM, "out of host memory for a %lldx%lldx%lld %s work image",
                              (long long)like->width, (long long)like->height, (long long)like->depth,
                              iwpp_type_name(type));
    *out = iwpp_image_3d(p, type, like->width, like->height, like->depth);
    return IWPP_OK;
}

/* Pixel @p i (element index) of a gray view as a double (exact for U8, U16, F32). */
static double gray_get(const iwpp_image *im, int64_t i)
{
    switch (im->type) {
    case IWPP_U8: return ((const uint8_t *)im->data)[i];
    case IWPP_U16: return ((const uint16_t *)im->data)[i];
    default: return ((const float *)im->data)[i];
    }
}

/* One step of a composed call: its progress lands in [lo, hi]; a failed step keeps its message. */
#define STEP(ctx, lo, hi, call)                                                                    \
    do {                                                                                           \
        iwpp_progress_span span_;                                                                  \
        iwpp_progress_push((ctx), &span_, (lo), (hi));                                             \
        st = (call);                                                                               \
        iwpp_progress_pop((ctx), &span_);                                                          \
    } while (0)

/* ------------------------------------------------------------ extended extrema */

static iwpp_status extended(iwpp_context *ctx, const iwpp_image *in, double h, int conn, int maxima,
                            iwpp_image *out)
{
    iwpp_status st = iwpp_begin(ctx);
    if (st || (st = iwpp_check_image(ctx, in, "in", IWPP_TYPES_GRAY, 1)) ||
        (st = iwpp_check_image(ctx, out, "out", IWPP_TYPE_BIT(IWPP_U8), 0)) ||
        (st = iwpp_check_same(ctx, in, "in", out, "out", 0)) ||
        (st = iwpp_check_connectivity(ctx, conn, in)))
        return st;
    double t0 = iwpp_now_ms();
    iwpp_image hx;
    if ((st = host_image(ctx, in->type, in, &hx))) return st;
    /* h is checked by iwpp_h_maxima/minima (finite, >= 0, fits f32) */
    STEP(ctx, 0.0, 0.6, maxima ? iwpp_h_maxima(ctx, in, h, conn, &hx) : iwpp_h_minima(ctx, in, h, conn, &hx));
    if (!st) STEP(ctx, 0.6, 1.0, maxima ? iwpp_regional_maxima(ctx, &hx, conn, out)
                                        : iwpp_regional_minima(ctx, &hx, conn, out));
    free(hx.data);
    if (st) return st;
    iwpp_progress_done(ctx);
    iwpp_end(ctx, t0);
    return IWPP_OK;
}

iwpp_status iwpp_extended_maxima(iwpp_context *ctx, const iwpp_image *in, double h, int connectivity,
                                 iwpp_image *out)
{
    return extended(ctx, in, h, connectivity, 1, out);
}

iwpp_status iwpp_extended_minima(iwpp_context *ctx, const iwpp_image *in, double h, int connectivity,
                                 iwpp_image *out)
{
    return extended(ctx, in, h, connectivity, 0, out);
}

/* ------------------------------------------------------------ impose minima */

/* m (marker: lowest value on markers, highest elsewhere) and g = min(m, in stepped up). */
static void impose_inputs(const iwpp_image *in, const iwpp_image *markers, iwpp_image *m, iwpp_image *g)
{
    const iwpp_type t = in->type;
    const double lo = t == IWPP_F32 ? -INFINITY : 0.0;
    const double hi = t == IWPP_U8 ? 255.0 : t == IWPP_U16 ? 65535.0 : INFINITY;
    int64_t k = 0;
    for (int64_t z = 0; z < in->depth; ++z)
        for (int64_t y = 0; y < in->height; ++y)
            for (int64_t x = 0; x < in->width; ++x, ++k) {
                const double v = gray_get(in, z * sz_of(in) + y * sy_of(in) + x);
                const int marked = gray_get(markers, z * sz_of(markers) + y * sy_of(markers) + x) != 0.0;
                double up = t == IWPP_F32 ? (double)nextafterf((float)v, INFINITY) : fmin(v + 1.0, hi);
                const double mv = marked ? lo : hi, gv = fmin(mv, up);
                if (t == IWPP_U8) {
                    ((uint8_t *)m->data)[k] = (uint8_t)mv;
                    ((uint8_t *)g->data)[k] = (uint8_t)gv;
                } else if (t == IWPP_U16) {
                    ((uint16_t *)m->data)[k] = (uint16_t)mv;
                    ((uint16_t *)g->data)[k] = (uint16_t)gv;
                } else {
                    ((float *)m->data)[k] = (float)mv;
                    ((float *)g->data)[k] = (float)gv;
                }
            }
}

/* Copies the contiguous @p src into the (maybe strided) view @p out of the same type. */
static void copy_to_view(const iwpp_image *src, iwpp_image *out)
{
    const size_t es = iwpp_type_size(src->type), row = (size_t)src->width * es;
    for (int64_t z = 0; z < src->depth; ++z)
        for (int64_t y = 0; y < src->height; ++y)
            memcpy((char *)out->data + (size_t)(z * sz_of(out) + y * sy_of(out)) * es,
                   (const char *)src->data + (size_t)((z * src->height + y) * src->width) * es, row);
}

iwpp_status iwpp_impose_minima(iwpp_context *ctx, const iwpp_image *in, const iwpp_image *markers,
                               int connectivity, iwpp_image *out)
{
    iwpp_status st = iwpp_begin(ctx);
    if (st || (st = iwpp_check_image(ctx, in, "in", IWPP_TYPES_GRAY, 1)) ||
        (st = iwpp_check_image(ctx, markers, "markers", IWPP_TYPES_GRAY, 0)) ||
        (st = iwpp_check_image(ctx, out, "out", IWPP_TYPES_GRAY, 0)) ||
        (st = iwpp_check_same(ctx, in, "in", markers, "markers", 0)) ||
        (st = iwpp_check_same(ctx, in, "in", out, "out", 1)) ||
        (st = iwpp_check_connectivity(ctx, connectivity, in)))
        return st;
    double t0 = iwpp_now_ms();
    iwpp_image m, g;
    if ((st = host_image(ctx, in->type, in, &m))) return st;
    if ((st = host_image(ctx, in->type, in, &g))) {
        free(m.data);
        return st;
    }
    impose_inputs(in, markers, &m, &g); /* both read before out (which may be in) is written */
    STEP(ctx, 0.0, 1.0, iwpp_reconstruct(ctx, &m, &g, connectivity, IWPP_BY_EROSION));
    if (!st) copy_to_view(&m, out);
    free(m.data);
    free(g.data);
    if (st) return st;
    iwpp_progress_done(ctx);
    iwpp_end(ctx, t0);
    return IWPP_OK;
}

/* ------------------------------------------------------------ distance watershed */

/* The steps of iwpp_distance_watershed on checked arguments; @p dist, @p ext, @p mk: work images. */
static iwpp_status distance_watershed_steps(iwpp_context *ctx, const iwpp_image *binary,
                                            const double spacing[3], double dynamic, int conn,
                                            int lines, iwpp_image *dist, iwpp_image *ext,
                                            iwpp_image *mk, iwpp_image *out)
{
    iwpp_status st;
    STEP(ctx, 0.0, 0.2, iwpp_distance_transform(ctx, binary, IWPP_EDT_EXACT, spacing, dist, NULL));
    if (st) return st;
    /* no zero pixel at all: every distance is +inf; one finite plateau makes it one object */
    float *d = dist->data;
    const int64_t n = dist->width * dist->height * dist->depth;
    for (int64_t i = 0; i < n; ++i)
        if (d[i] > FLT_MAX) d[i] = FLT_MAX;
    STEP(ctx, 0.2, 0.5, iwpp_extended_maxima(ctx, dist, dynamic, conn, ext));
    if (st) return st;
    STEP(ctx, 0.5, 0.6, iwpp_label(ctx, ext, conn, IWPP_LABEL_BINARY, mk, NULL));
    if (st) return st;
    for (int64_t i = 0; i < n; ++i) d[i] = -d[i]; /* basins at the objects' centres */
    STEP(ctx, 0.6, 1.0, iwpp_watershed(ctx, dist, mk, binary, conn, lines, out));
    return st;
}

iwpp_status iwpp_distance_watershed(iwpp_context *ctx, const iwpp_image *binary, const double spacing[3],
                                    double dynamic, int connectivity, int lines, iwpp_image *labels_out)
{
    iwpp_status st = iwpp_begin(ctx);
    if (st || (st = iwpp_check_image(ctx, binary, "binary", IWPP_TYPES_GRAY, 1)) ||
        (st = iwpp_check_image(ctx, labels_out, "labels_out", IWPP_TYPES_LABEL_OUT, 0)) ||
        (st = iwpp_check_same(ctx, binary, "binary", labels_out, "labels_out", 0)) ||
        (st = iwpp_check_connectivity(ctx, connectivity, binary)))
        return st;
    if (!(dynamic >= 0.0) || dynamic > FLT_MAX)
        return iwpp_set_error(ctx, IWPP_EINVAL,
                              "dynamic is %g; it must be a finite number of 0 or more (in the units of "
                              "spacing)", dynamic);
    if (iwpp_views_overlap(binary, labels_out))
        return iwpp_set_error(ctx, IWPP_EINVAL, "labels_out overlaps binary; give it a buffer of its own");
    double t0 = iwpp_now_ms();
    iwpp_image dist = {0}, ext = {0}, mk = {0};
    if (!(st = host_image(ctx, IWPP_F32, binary, &dist)) && !(st = host_image(ctx, IWPP_U8, binary, &ext)) &&
        !(st = host_image(ctx, IWPP_U32, binary, &mk)))
        st = distance_watershed_steps(ctx, binary, spacing, dynamic, connectivity, lines, &dist, &ext, &mk,
                                      labels_out);
    free(dist.data);
    free(ext.data);
    free(mk.data);
    if (st) return st;
    iwpp_progress_done(ctx);
    iwpp_end(ctx, t0);
    return IWPP_OK;
}
