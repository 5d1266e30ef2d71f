/*
 * ops/composed.c - operations built on reconstruction, written once on top of
 * the backend ops table. Each one uploads its input once, chains primitives on
 * backend-resident buffers, and downloads its result once.
 */
#include "dispatch.h"
#include "tiles.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* The type's lowest and highest values, as used by BORDER and FILL. */
static double type_min(iwpp_type t) { return t == IWPP_F32 ? -INFINITY : 0.0; }
static double type_max(iwpp_type t)
{
    return t == IWPP_U8 ? 255.0 : t == IWPP_U16 ? 65535.0 : INFINITY;
}

/* Checks shared by every composed op: in, out, sizes and connectivity. */
static iwpp_status check_in_out(iwpp_context *ctx, const iwpp_image *in, int conn, const iwpp_image *out,
                                unsigned out_types)
{
    iwpp_status st;
    if ((st = iwpp_check_image(ctx, in, "in", IWPP_TYPES_GRAY, 1)) ||
        (st = iwpp_check_image(ctx, out, "out", out_types, 0)) ||
        (st = iwpp_check_same(ctx, in, "in", out, "out", 0)) ||
        (st = iwpp_check_connectivity(ctx, conn, in)))
        return st;
    if (out_types != IWPP_TYPE_BIT(IWPP_U8) && out->type != in->type)
        return iwpp_set_error(ctx, IWPP_EINVAL, "out is %s but in is %s; out must have the type of in",
                              iwpp_type_name(out->type), iwpp_type_name(in->type));
    return IWPP_OK;
}

/* What a composed operation does between upload and download. */
typedef enum { FILL_HOLES, KILL_BORDERS, REG_MAX, REG_MIN, H_MAX, H_MIN, OPEN_REC, CLOSE_REC } composed_op;

/* Reconstruction of m under (over) f: on the backend's buffers, or, for a tiled call, on host
 * buffers through the tile scheduler. */
static iwpp_status recon(iwpp_context *ctx, int tiled, iwpp_buf *m, const iwpp_buf *f, int conn,
                         iwpp_morph_mode mode)
{
    iwpp_status st;
    if ((st = iwpp_progress_report(ctx, 0.2))) return st;
    if (!tiled) {
        st = ctx->ops->reconstruct(ctx, m, f, conn, mode);
    } else {
        /* the tile scheduler's fractions land in [0.2, 0.9] of the operation */
        iwpp_progress_span span;
        iwpp_progress_push(ctx, &span, 0.2, 0.9);
        iwpp_image J = iwpp_image_3d(m->ptr, m->type, m->w, m->h, m->d);
        iwpp_image I = iwpp_image_3d(f->ptr, f->type, f->w, f->h, f->d);
        st = iwpp_tiles_reconstruct(ctx, &J, &I, conn, mode);
        iwpp_progress_pop(ctx, &span);
    }
    return st ? st : iwpp_progress_report(ctx, 0.9);
}

/* @p steps unit erosions (dilations) of f into *m, in rounds that report progress in [0, 0.2]
 * between them; *m may come back as another buffer of the set (ping-pong). */
static iwpp_status unit_steps(iwpp_context *ctx, const iwpp_backend_ops *ops, iwpp_bufset *s, iwpp_buf **m,
                              const iwpp_buf *f, int conn, iwpp_morph_mode mode, int steps)
{
    enum { ROUNDS = 8 };
    const int per = steps < ROUNDS ? 1 : (steps + ROUNDS - 1) / ROUNDS;
    iwpp_status st;
    int done = steps < per ? steps : per;
    if ((st = ops->morph_unit(ctx, *m, f, conn, mode, done))) return st;
    if (done == steps) return iwpp_progress_report(ctx, 0.2);
    iwpp_buf *other = NULL;
    iwpp_image like = iwpp_image_3d(NULL, f->type, f->w, f->h, f->d);
    if ((st = iwpp_bufset_alloc(s, f->type, &like, &other))) return st;
    while (done < steps) {
        if ((st = iwpp_progress_report(ctx, 0.2 * done / steps))) return st;
        const int k = steps - done < per ? steps - done : per;
        if ((st = ops->morph_unit(ctx, other, *m, conn, mode, k))) return st;
        iwpp_buf *t = *m;
        *m = other;
        other = t;
        done += k;
    }
    return iwpp_progress_report(ctx, 0.2);
}

/* One attempt: on the device (tiled = 0), or in host memory with the pointwise steps on the CPU
 * and the reconstruction by tiles on the context's workers (tiled = 1). */
static iwpp_status run_composed_on(iwpp_context *ctx, int tiled, composed_op op, const iwpp_image *in,
                                   int conn, double scalar, int radius, iwpp_image *out)
{
    const iwpp_backend_ops *ops = tiled ? &iwpp_cpu_backend : ctx->ops;
    const iwpp_type t = in->type;
    iwpp_bufset s = {.ctx = ctx, .ops = tiled ? ops : NULL};
    iwpp_buf *f = NULL, *m = NULL, *r = NULL;
    iwpp_status st;
    if ((st = iwpp_progress_report(ctx, 0.0)) || (st = iwpp_bufset_input(&s, in, &f)) ||
        (st = iwpp_bufset_alloc(&s, t, in, &m)))
        goto done;

    switch (op) {
    case FILL_HOLES: /* marker: in on the border, the maximum inside; reconstruct by erosion */
        if (!(st = ops->pointwise(ctx, IWPP_PW_BORDER, m, f, NULL, type_max(t))))
            st = recon(ctx, tiled, m, f, conn, IWPP_BY_EROSION);
        r = m;
        break;
    case KILL_BORDERS: /* in - reconstruction by dilation from the border */
        if (!(st = ops->pointwise(ctx, IWPP_PW_BORDER, m, f, NULL, type_min(t))) &&
            !(st = recon(ctx, tiled, m, f, conn, IWPP_BY_DILATION)))
            st = ops->pointwise(ctx, IWPP_PW_SUB, m, f, m, 0);
        r = m;
        break;
    case REG_MAX:
    case REG_MIN: {
        /* A plateau is a maximum iff reconstructing (in - one step) under in leaves it below in.
         * Only a constant image has a maximum at the type's minimum: it is all maxima. */
        double lo, hi;
        if ((st = iwpp_bufset_alloc(&s, IWPP_U8, in, &r)) || (st = ops->minmax(ctx, f, &lo, &hi))) break;
        ctx->short_waves++; /* the waves of (in - one step) stop at each plateau's edge */
        if (lo == hi) {
            st = ops->pointwise(ctx, IWPP_PW_FILL, r, NULL, NULL, 255.0);
        } else if (op == REG_MAX) {
            if (!(st = ops->pointwise(ctx, IWPP_PW_STEP_DOWN, m, f, NULL, 0)) &&
                !(st = recon(ctx, tiled, m, f, conn, IWPP_BY_DILATION)))
                st = ops->pointwise(ctx, IWPP_PW_LESS, r, m, f, 0);
        } else {
            if (!(st = ops->pointwise(ctx, IWPP_PW_STEP_UP, m, f, NULL, 0)) &&
                !(st = recon(ctx, tiled, m, f, conn, IWPP_BY_EROSION)))
                st = ops->pointwise(ctx, IWPP_PW_GREATER, r, m, f, 0);
        }
        ctx->short_waves--;
        break;
    }
    case H_MAX:
    case H_MIN: {
        /* Integer types: h rounded half up; beyond the type's range it saturates the same way. */
        double h = (t == IWPP_F32) ? scalar : fmin(floor(scalar + 0.5), 65536.0);
        int dil = (op == H_MAX);
        if (!(st = ops->pointwise(ctx, dil ? IWPP_PW_SUB_SCALAR : IWPP_PW_ADD_SCALAR, m, f, NULL, h)))
            st = recon(ctx, tiled, m, f, conn, dil ? IWPP_BY_DILATION : IWPP_BY_EROSION);
        r = m;
        break;
    }
    case OPEN_REC:
    case CLOSE_REC: {
        int open = (op == OPEN_REC);
        /* After w+h+d unit steps every pixel has seen the whole image: more steps change
           nothing (radius 100000 on a 3x2 image was 100000 GPU launches). */
        const int64_t span = in->width + in->height + in->depth;
        const int steps = radius > span ? (int)span : radius;
        if (radius == 0) {
            st = ops->pointwise(ctx, IWPP_PW_COPY, m, f, NULL, 0);
        } else if (!(st = unit_steps(ctx, ops, &s, &m, f, conn, open ? IWPP_BY_EROSION : IWPP_BY_DILATION,
                                     steps))) {
            st = recon(ctx, tiled, m, f, conn, open ? IWPP_BY_DILATION : IWPP_BY_EROSION);
        }
        r = m;
        break;
    }
    }
    /* the last point where a cancel leaves out untouched */
    if (st == IWPP_OK && !(st = iwpp_progress_report(ctx, 0.95))) st = ops->download(ctx, r, out);
done:
    iwpp_bufset_free(&s);
    return st;
}

/* Kill borders on F32 with +inf or -inf: where a pixel equals its reconstruction at +-inf,
 * in - rec is inf - inf (NaN); like every pixel equal to its reconstruction, it becomes 0. */
static void zero_nan(iwpp_image *out)
{
    const int64_t sy = out->stride_y ? out->stride_y : out->width;
    const int64_t sz = out->stride_z ? out->stride_z : sy * out->height;
    for (int64_t z = 0; z < out->depth; ++z)
        for (int64_t y = 0; y < out->height; ++y) {
            float *row = (float *)out->data + z * sz + y * sy;
            for (int64_t x = 0; x < out->width; ++x)
                if (isnan(row[x])) row[x] = 0.0f;
        }
}

static iwpp_status run_composed(iwpp_context *ctx, composed_op op, const iwpp_image *in, int conn,
                                double scalar, int radius, iwpp_image *out)
{
    double t0 = iwpp_now_ms();
    memset(&ctx->stats, 0, sizeof ctx->stats);
    const iwpp_type t = in->type;
    int tiled = iwpp_tiles_needed(ctx, in->type, in);
    iwpp_status st = run_composed_on(ctx, tiled, op, in, conn, scalar, radius, out);
    /* the device ran out with the default budget (out is untouched): again, by tiles */
    if (st == IWPP_ENOMEM && !tiled && ctx->memory_limit == 0 && ctx->ops->kind != IWPP_BACKEND_CPU) {
        memset(&ctx->stats, 0, sizeof ctx->stats);
        ctx->message[0] = '\0';
        st = run_composed_on(ctx, 1, op, in, conn, scalar, radius, out);
    }
    if (st == IWPP_OK && op == KILL_BORDERS && t == IWPP_F32) zero_nan(out);
    if (st == IWPP_OK) {
        iwpp_progress_done(ctx);
        iwpp_end(ctx, t0);
    }
    return st;
}

#define SAME_TYPE_OUT IWPP_TYPES_GRAY
#define BINARY_OUT IWPP_TYPE_BIT(IWPP_U8)

iwpp_status iwpp_fill_holes(iwpp_context *ctx, const iwpp_image *in, int connectivity, iwpp_image *out)
{
    iwpp_status st = iwpp_begin(ctx);
    if (st || (st = check_in_out(ctx, in, connectivity, out, SAME_TYPE_OUT))) return st;
    return run_composed(ctx, FILL_HOLES, in, connectivity, 0, 0, out);
}

iwpp_status iwpp_kill_borders(iwpp_context *ctx, const iwpp_image *in, int connectivity, iwpp_image *out)
{
    iwpp_status st = iwpp_begin(ctx);
    if (st || (st = check_in_out(ctx, in, connectivity, out, SAME_TYPE_OUT))) return st;
    return run_composed(ctx, KILL_BORDERS, in, connectivity, 0, 0, out);
}

iwpp_status iwpp_regional_maxima(iwpp_context *ctx, const iwpp_image *in, int connectivity, iwpp_image *out)
{
    iwpp_status st = iwpp_begin(ctx);
    if (st || (st = check_in_out(ctx, in, connectivity, out, BINARY_OUT))) return st;
    return run_composed(ctx, REG_MAX, in, connectivity, 0, 0, out);
}

iwpp_status iwpp_regional_minima(iwpp_context *ctx, const iwpp_image *in, int connectivity, iwpp_image *out)
{
    iwpp_status st = iwpp_begin(ctx);
    if (st || (st = check_in_out(ctx, in, connectivity, out, BINARY_OUT))) return st;
    return run_composed(ctx, REG_MIN, in, connectivity, 0, 0, out);
}

static iwpp_status check_h(iwpp_context *ctx, double h, iwpp_type t)
{
    if (!(h >= 0.0) || !isfinite(h))
        return iwpp_set_error(ctx, IWPP_EINVAL, "h is %g; it must be a finite number of 0 or more", h);
    /* F32 works with (float)h: beyond FLT_MAX that is +inf, and +inf - +inf is NaN */
    if (t == IWPP_F32 && h > FLT_MAX)
        return iwpp_set_error(ctx, IWPP_EINVAL, "h is %g; for f32 images it must be at most %g (FLT_MAX)",
                              h, (double)FLT_MAX);
    return IWPP_OK;
}

iwpp_status iwpp_h_maxima(iwpp_context *ctx, const iwpp_image *in, double h, int connectivity,
                          iwpp_image *out)
{
    iwpp_status st = iwpp_begin(ctx);
    if (st || (st = check_in_out(ctx, in, connectivity, out, SAME_TYPE_OUT)) ||
        (st = check_h(ctx, h, in->type)))
        return st;
    return run_composed(ctx, H_MAX, in, connectivity, h, 0, out);
}

iwpp_status iwpp_h_minima(iwpp_context *ctx, const iwpp_image *in, double h, int connectivity,
                          iwpp_image *out)
{
    iwpp_status st = iwpp_begin(ctx);
    if (st || (st = check_in_out(ctx, in, connectivity, out, SAME_TYPE_OUT)) ||
        (st = check_h(ctx, h, in->type)))
        return st;
    return run_composed(ctx, H_MIN, in, connectivity, h, 0, out);
}

static iwpp_status check_radius(iwpp_context *ctx, int radius)
{
    if (radius < 0 || radius > 100000)
        return iwpp_set_error(ctx, IWPP_EINVAL, "radius is %d; use 0 to 100000 pixels", radius);
    return IWPP_OK;
}

iwpp_status iwpp_opening_by_reconstruction(iwpp_context *ctx, const iwpp_image *in, int radius,
                                           int connectivity, iwpp_image *out)
{
    iwpp_status st = iwpp_begin(ctx);
    if (st || (st = check_in_out(ctx, in, connectivity, out, SAME_TYPE_OUT)) ||
        (st = check_radius(ctx, radius)))
        return st;
    return run_composed(ctx, OPEN_REC, in, connectivity, 0, radius, out);
}

iwpp_status iwpp_closing_by_reconstruction(iwpp_context *ctx, const iwpp_image *in, int radius,
                                           int connectivity, iwpp_image *out)
{
    iwpp_status st = iwpp_begin(ctx);
    if (st || (st = check_in_out(ctx, in, connectivity, out, SAME_TYPE_OUT)) ||
        (st = check_radius(ctx, radius)))
        return st;
    return run_composed(ctx, CLOSE_REC, in, connectivity, 0, radius, out);
}
