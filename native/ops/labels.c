/*
 * ops/labels.c - labeling and watershed: argument checks, type conversions between the
 * caller's label views and the backend's buffers, and the label operations that are plain
 * passes over a label image (remove border labels, size filter), which run on the host.
 *
 * Definitions: native/include/iwpp.h. Backend parts: ops->label and ops->watershed
 * (native/cpu/labels.c + cpu/watershed.c, cuda/label.cu + cuda/watershed.cu, opencl/labels.c).
 */
#include "dispatch.h"

#include <stdlib.h>
#include <string.h>

iwpp_status iwpp_labels_overflow(iwpp_context *ctx, int64_t count)
{
    return iwpp_set_error(ctx, IWPP_EINVAL,
                          "%lld labels do not fit in a 16-bit label image (at most 65535); use a "
                          "32-bit (u32) output",
                          (long long)count);
}

/* ---- strided access to label views ---- */

static int64_t sy_of(const iwpp_image *im) { return im->stride_y ? im->stride_y : im->width; }
static int64_t sz_of(const iwpp_image *im) { return im->stride_z ? im->stride_z : sy_of(im) * im->height; }

static uint32_t label_get(const iwpp_image *im, int64_t i)
{
    switch (im->type) {
    case IWPP_U8: return ((const uint8_t *)im->data)[i];
    case IWPP_U16: return ((const uint16_t *)im->data)[i];
    default: return ((const uint32_t *)im->data)[i];
    }
}

static void label_set(iwpp_image *im, int64_t i, uint32_t v)
{
    if (im->type == IWPP_U16)
        ((uint16_t *)im->data)[i] = (uint16_t)v;
    else if (im->type == IWPP_U8)
        ((uint8_t *)im->data)[i] = (uint8_t)v;
    else
        ((uint32_t *)im->data)[i] = v;
}

/* Largest label of a view. */
static uint32_t label_max(const iwpp_image *im)
{
    const int64_t sy = sy_of(im), sz = sz_of(im);
    uint32_t m = 0;
    for (int64_t z = 0; z < im->depth; ++z)
        for (int64_t y = 0; y < im->height; ++y) {
            const int64_t row = z * sz + y * sy;
            for (int64_t x = 0; x < im->width; ++x) {
                uint32_t v = label_get(im, row + x);
                if (v > m) m = v;
            }
        }
    return m;
}

/* A contiguous host copy of @p src converted to @p type (labels, or a 0/1 U8 mask when
 * @p as_mask). The caller frees *out. */
static iwpp_status host_convert(iwpp_context *ctx, const iwpp_image *src, iwpp_type type, int as_mask,
                                iwpp_image *out)
{
    const int64_t w = src->width, h = src->height, d = src->depth, sy = sy_of(src), sz = sz_of(src);
    const size_t bytes = (size_t)(w * h * d) * iwpp_type_size(type);
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        return iwpp_set_error(ctx, IWPP_ENOMEM, "out of host memory converting a %lldx%lldx%lld image (%zu bytes)",
                              (long long)w, (long long)h, (long long)d, bytes);
    *out = iwpp_image_3d(p, type, w, h, d);
    for (int64_t z = 0; z < d; ++z)
        for (int64_t y = 0; y < h; ++y) {
            const int64_t row = z * sz + y * sy, o = (z * h + y) * w;
            for (int64_t x = 0; x < w; ++x) {
                uint32_t v;
                if (as_mask) {
                    switch (src->type) {
                    case IWPP_U8: v = ((const uint8_t *)src->data)[row + x] != 0; break;
                    case IWPP_U16: v = ((const uint16_t *)src->data)[row + x] != 0; break;
                    default: v = ((const float *)src->data)[row + x] != 0.0f; break;
                    }
                } else {
                    v = label_get(src, row + x);
                }
                label_set(out, o + x, v);
            }
        }
    return IWPP_OK;
}

/* ------------------------------------------------------------------------ */

iwpp_status iwpp_label(iwpp_context *ctx, const iwpp_image *in, int connectivity, iwpp_label_mode mode,
                       iwpp_image *labels_out, int64_t *count_out)
{
    iwpp_status st = iwpp_begin(ctx);
    if (st) return st;
    if ((st = iwpp_check_image(ctx, in, "in", IWPP_TYPES_GRAY, 1)) ||
        (st = iwpp_check_image(ctx, labels_out, "labels_out", IWPP_TYPES_LABEL_OUT, 0)) ||
        (st = iwpp_check_same(ctx, in, "in", labels_out, "labels_out", 0)) ||
        (st = iwpp_check_connectivity(ctx, connectivity, in)))
        return st;
    if (mode != IWPP_LABEL_BINARY && mode != IWPP_LABEL_EQUAL)
        return iwpp_set_error(ctx, IWPP_EINVAL, "mode is %d; use IWPP_LABEL_BINARY or IWPP_LABEL_EQUAL",
                              (int)mode);
    const iwpp_backend_ops *ops = ctx->ops;
    if (!ops->label)
        return iwpp_set_error(ctx, IWPP_EUNSUPPORTED, "labeling is not available on the %s backend",
                              ops->name);
    double t0 = iwpp_now_ms();
    memset(&ctx->stats, 0, sizeof ctx->stats);
    if ((st = iwpp_progress_report(ctx, 0.0))) return st;
    iwpp_bufset s = {.ctx = ctx};
    iwpp_buf *bin = NULL, *lab = NULL;
    int64_t count = 0;
    if (!(st = iwpp_bufset_input(&s, in, &bin)) &&
        !(st = iwpp_bufset_output(&s, labels_out->type, labels_out, in, NULL, &lab)) &&
        !(st = iwpp_progress_report(ctx, 0.1)) &&
        !(st = ops->label(ctx, bin, connectivity, mode, lab, &count)))
        st = ops->download(ctx, lab, labels_out);
    iwpp_bufset_free(&s);
    if (st) return st;
    if (count_out) *count_out = count;
    iwpp_progress_done(ctx);
    iwpp_end(ctx, t0);
    return IWPP_OK;
}

/* The backend call of iwpp_watershed on checked views; @p mk has the type of @p out. */
static iwpp_status watershed_run(iwpp_context *ctx, const iwpp_image *in, const iwpp_image *mk,
                                 const iwpp_image *mask, int conn, int lines, iwpp_image *out)
{
    const iwpp_backend_ops *ops = ctx->ops;
    iwpp_bufset s = {.ctx = ctx};
    iwpp_buf *f = NULL, *m = NULL, *k = NULL, *lab = NULL;
    iwpp_status st;
    if (!(st = iwpp_bufset_input(&s, in, &f)) && !(st = iwpp_bufset_input(&s, mk, &m)) &&
        !(st = mask ? iwpp_bufset_input(&s, mask, &k) : IWPP_OK) &&
        !(st = iwpp_bufset_output(&s, out->type, out, mk, in, &lab)) &&
        !(st = iwpp_progress_report(ctx, 0.1)) &&
        !(st = ops->watershed(ctx, f, m, k, conn, lines ? 1 : 0, lab)))
        st = ops->download(ctx, lab, out);
    iwpp_bufset_free(&s);
    return st;
}

iwpp_status iwpp_watershed(iwpp_context *ctx, const iwpp_image *in, const iwpp_image *markers,
                           const iwpp_image *mask, int connectivity, int lines, iwpp_image *labels_out)
{
    iwpp_status st = iwpp_begin(ctx);
    if (st) return st;
    if ((st = iwpp_check_image(ctx, in, "in", IWPP_TYPES_GRAY, 1)) ||
        (st = iwpp_check_image(ctx, markers, "markers", IWPP_TYPES_LABEL_IN, 0)) ||
        (st = iwpp_check_image(ctx, labels_out, "labels_out", IWPP_TYPES_LABEL_OUT, 0)) ||
        (st = iwpp_check_same(ctx, in, "in", markers, "markers", 0)) ||
        (st = iwpp_check_same(ctx, in, "in", labels_out, "labels_out", 0)) ||
        (st = iwpp_check_connectivity(ctx, connectivity, in)))
        return st;
    if (mask && ((st = iwpp_check_image(ctx, mask, "mask", IWPP_TYPES_GRAY, 1)) ||
                 (st = iwpp_check_same(ctx, in, "in", mask, "mask", 0))))
        return st;
    if (!ctx->ops->watershed)
        return iwpp_set_error(ctx, IWPP_EUNSUPPORTED, "the watershed is not available on the %s backend",
                              ctx->ops->name);
    if (labels_out->type == IWPP_U16 && markers->type == IWPP_U32) {
        uint32_t top = label_max(markers);
        if (top > 65535) return iwpp_labels_overflow(ctx, top);
    }
    double t0 = iwpp_now_ms();
    memset(&ctx->stats, 0, sizeof ctx->stats);
    if ((st = iwpp_progress_report(ctx, 0.0))) return st;
    /* The backend takes markers of the output's type and a U8 mask: convert on the host where the
     * caller's views differ (labels_out may be the markers' own view: they are read first). */
    iwpp_image mk = *markers, mk_host = {0}, mask_host = {0};
    const iwpp_image *mask_use = mask;
    if (markers->type != labels_out->type || iwpp_views_overlap(markers, labels_out)) {
        if ((st = host_convert(ctx, markers, labels_out->type, 0, &mk_host))) return st;
        mk = mk_host;
    }
    if (mask && mask->type != IWPP_U8) {
        if ((st = host_convert(ctx, mask, IWPP_U8, 1, &mask_host))) {
            free(mk_host.data);
            return st;
        }
        mask_use = &mask_host;
    }
    st = watershed_run(ctx, in, &mk, mask_use, connectivity, lines, labels_out);
    free(mk_host.data);
    free(mask_host.data);
    if (st) return st;
    iwpp_progress_done(ctx);
    iwpp_end(ctx, t0);
    return IWPP_OK;
}

/* ------------------------------------------------------------------------ */
/* passes over a label image (host)                                          */

static iwpp_status check_label_in_out(iwpp_context *ctx, const iwpp_image *labels, const iwpp_image *out)
{
    iwpp_status st;
    if ((st = iwpp_check_image(ctx, labels, "labels", IWPP_TYPES_LABEL_IN, 0)) ||
        (st = iwpp_check_image(ctx, out, "out", IWPP_TYPES_LABEL_IN, 0)) ||
        (st = iwpp_check_same(ctx, labels, "labels", out, "out", 1)))
        return st;
    if (out->data != labels->data && iwpp_views_overlap(labels, out))
        return iwpp_set_error(ctx, IWPP_EINVAL, "out overlaps labels without being the same view");
    return IWPP_OK;
}

/* Where a label's entry lives in the per-label tables: the label itself while the labels are
 * dense (largest label at most a few times the pixel count), else its rank among the sorted
 * distinct labels, so that a U32 image holding label 4e9 needs no 4e9-entry table. */
typedef struct label_index {
    uint32_t *keys; /* sorted distinct labels; NULL = dense */
    int64_t size;   /* entries of a table */
} label_index;

static int cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static iwpp_status label_index_make(iwpp_context *ctx, const iwpp_image *im, label_index *li)
{
    const int64_t n = im->width * im->height * im->depth;
    const uint32_t top = label_max(im);
    li->keys = NULL;
    li->size = (int64_t)top + 1;
    if ((int64_t)top <= 4 * n + 65536) return IWPP_OK;
    uint32_t *k = malloc((size_t)n * sizeof *k);
    if (!k) return iwpp_set_error(ctx, IWPP_ENOMEM, "out of host memory for the labels of %lld pixels", (long long)n);
    const int64_t sy = sy_of(im), sz = sz_of(im);
    int64_t m = 0;
    for (int64_t z = 0; z < im->depth; ++z)
        for (int64_t y = 0; y < im->height; ++y)
            for (int64_t x = 0; x < im->width; ++x) k[m++] = label_get(im, z * sz + y * sy + x);
    qsort(k, (size_t)n, sizeof *k, cmp_u32);
    m = 0;
    for (int64_t i = 0; i < n; ++i)
        if (i == 0 || k[i] != k[m - 1]) k[m++] = k[i];
    li->keys = k;
    li->size = m;
    return IWPP_OK;
}

/* The table entry of label @p v (present in the image). */
static int64_t label_slot(const label_index *li, uint32_t v)
{
    if (!li->keys) return v;
    int64_t lo = 0, hi = li->size - 1;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (li->keys[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* A table of one byte per entry of @p li (calloc'ed); NULL and ENOMEM set when it cannot be had. */
static uint8_t *label_table(iwpp_context *ctx, const label_index *li)
{
    uint8_t *t = calloc((size_t)li->size, 1);
    if (!t) iwpp_set_error(ctx, IWPP_ENOMEM, "out of host memory for a table of %lld labels", (long long)li->size);
    return t;
}

/* out = labels with every label whose table entry is nonzero set to 0 (label 0 stays 0). */
static void apply_removal(const iwpp_image *labels, const label_index *li, const uint8_t *gone, iwpp_image *out)
{
    const int64_t sy = sy_of(labels), sz = sz_of(labels), oy = sy_of(out), oz = sz_of(out);
    for (int64_t z = 0; z < labels->depth; ++z)
        for (int64_t y = 0; y < labels->height; ++y)
            for (int64_t x = 0; x < labels->width; ++x) {
                uint32_t v = label_get(labels, z * sz + y * sy + x);
                label_set(out, z * oz + y * oy + x, v && gone[label_slot(li, v)] ? 0u : v);
            }
}

iwpp_status iwpp_remove_border_labels(iwpp_context *ctx, const iwpp_image *labels, iwpp_image *out)
{
    iwpp_status st = iwpp_begin(ctx);
    if (st || (st = check_label_in_out(ctx, labels, out))) return st;
    double t0 = iwpp_now_ms();
    memset(&ctx->stats, 0, sizeof ctx->stats);
    label_index li;
    if ((st = label_index_make(ctx, labels, &li))) return st;
    uint8_t *gone = label_table(ctx, &li);
    if (!gone) {
        free(li.keys);
        return IWPP_ENOMEM;
    }
    const int64_t w = labels->width, h = labels->height, d = labels->depth, sy = sy_of(labels),
                  sz = sz_of(labels);
    for (int64_t z = 0; z < d; ++z)
        for (int64_t y = 0; y < h; ++y) {
            const int edge_row = y == 0 || y == h - 1 || (d > 1 && (z == 0 || z == d - 1));
            const int64_t row = z * sz + y * sy;
            if (edge_row) {
                for (int64_t x = 0; x < w; ++x) gone[label_slot(&li, label_get(labels, row + x))] = 1;
            } else {
                gone[label_slot(&li, label_get(labels, row))] = 1;
                gone[label_slot(&li, label_get(labels, row + w - 1))] = 1;
            }
        }
    apply_removal(labels, &li, gone, out);
    free(gone);
    free(li.keys);
    iwpp_end(ctx, t0);
    return IWPP_OK;
}

iwpp_status iwpp_label_size_filter(iwpp_context *ctx, const iwpp_image *labels, int64_t min_pixels,
                                   int64_t max_pixels, iwpp_image *out)
{
    iwpp_status st = iwpp_begin(ctx);
    if (st || (st = check_label_in_out(ctx, labels, out))) return st;
    if (min_pixels < 0 || max_pixels < 0)
        return iwpp_set_error(ctx, IWPP_EINVAL, "min_pixels (%lld) and max_pixels (%lld) must be >= 0",
                              (long long)min_pixels, (long long)max_pixels);
    if (max_pixels > 0 && max_pixels < min_pixels)
        return iwpp_set_error(ctx, IWPP_EINVAL, "max_pixels (%lld) is below min_pixels (%lld)",
                              (long long)max_pixels, (long long)min_pixels);
    double t0 = iwpp_now_ms();
    memset(&ctx->stats, 0, sizeof ctx->stats);
    label_index li;
    if ((st = label_index_make(ctx, labels, &li))) return st;
    int64_t *size = calloc((size_t)li.size, sizeof *size);
    uint8_t *gone = size ? label_table(ctx, &li) : NULL;
    if (!gone) {
        free(size);
        free(li.keys);
        return iwpp_set_error(ctx, IWPP_ENOMEM, "out of host memory for the sizes of %lld labels",
                              (long long)li.size);
    }
    const int64_t sy = sy_of(labels), sz = sz_of(labels);
    for (int64_t z = 0; z < labels->depth; ++z)
        for (int64_t y = 0; y < labels->height; ++y)
            for (int64_t x = 0; x < labels->width; ++x)
                size[label_slot(&li, label_get(labels, z * sz + y * sy + x))]++;
    for (int64_t v = 0; v < li.size; ++v)
        gone[v] = size[v] > 0 && (size[v] < min_pixels || (max_pixels > 0 && size[v] > max_pixels));
    apply_removal(labels, &li, gone, out);
    free(size);
    free(gone);
    free(li.keys);
    iwpp_end(ctx, t0);
    return IWPP_OK;
}
