/*
 * dispatch.c - the public entry points: contexts, backend choice, argument
 * checks, and the two primitive operations (reconstruction, distance
 * transform). Every argument is checked here once; backends trust them.
 *
 * Size: about 750 lines, mostly argument checks with their messages; they stay beside the entry
 * points they guard so that every check of a call can be read in one place.
 */
#include "dispatch.h"
#include "neighborhood.h"
#include "tiles.h"
#include "workpool.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h> /* sysconf: the host's free memory (iwpp_finish_on_host) */
#endif

/* ------------------------------------------------------------------------ */
/* backends                                                                  */

static const iwpp_backend_ops *backend_ops(iwpp_backend kind)
{
    switch (kind) {
    case IWPP_BACKEND_CPU: return &iwpp_cpu_backend;
#ifdef IWPP_HAVE_CUDA
    case IWPP_BACKEND_CUDA: return &iwpp_cuda_backend;
#endif
#ifdef IWPP_HAVE_OPENCL
    case IWPP_BACKEND_OPENCL: return &iwpp_opencl_backend;
#endif
    default: return NULL;
    }
}

static const char *not_built_reason(iwpp_backend kind)
{
    switch (kind) {
    case IWPP_BACKEND_CUDA:
        return "the CUDA backend is not in this build (nvcc was not found when it was built)";
    case IWPP_BACKEND_OPENCL:
        return "the OpenCL backend is not in this build (OpenCL headers were not found when it was built)";
    default: return "unknown backend";
    }
}

int iwpp_backend_available(iwpp_backend backend, char *reason, size_t reason_size)
{
    if (reason && reason_size) reason[0] = '\0';
    if (backend == IWPP_BACKEND_AUTO || backend == IWPP_BACKEND_CPU) return 1;
    const iwpp_backend_ops *ops = backend_ops(backend);
    if (!ops) {
        if (reason && reason_size) snprintf(reason, reason_size, "%s", not_built_reason(backend));
        return 0;
    }
    return ops->probe(reason, reason_size);
}

int iwpp_device_count(iwpp_backend backend)
{
    if (backend == IWPP_BACKEND_AUTO) backend = IWPP_BACKEND_CPU;
    const iwpp_backend_ops *ops = backend_ops(backend);
    if (!ops || !ops->probe(NULL, 0)) return 0;
    return ops->device_count();
}

iwpp_status iwpp_device_info_get(iwpp_backend backend, int index, iwpp_device_info *out)
{
    if (!out) return IWPP_EINVAL;
    if (backend == IWPP_BACKEND_AUTO) backend = IWPP_BACKEND_CPU;
    const iwpp_backend_ops *ops = backend_ops(backend);
    if (!ops || !ops->probe(NULL, 0)) return IWPP_EDEVICE;
    if (index < 0 || index >= ops->device_count()) return IWPP_EINVAL;
    return ops->device_info(index, out);
}

/* Open @p ops on ctx->device; on failure ctx->message says why. */
static iwpp_status open_backend(iwpp_context *ctx, const iwpp_backend_ops *ops)
{
    char reason[512];
    if (!ops->probe(reason, sizeof reason))
        return iwpp_set_error(ctx, IWPP_EDEVICE,
                              "the %s backend is unavailable: %s. The CPU backend (or auto) runs without it",
                              ops->kind == IWPP_BACKEND_CUDA     ? "CUDA"
                              : ops->kind == IWPP_BACKEND_OPENCL ? "OpenCL"
                                                                 : "CPU",
                              reason);
    int n = ops->device_count();
    if (ctx->device < 0 || ctx->device >= n)
        return iwpp_set_error(ctx, IWPP_EDEVICE,
                              "%s backend has %d device(s); device index %d does not exist", ops->name,
                              n, ctx->device);
    ctx->backend_state = NULL;
    iwpp_status st = ops->open(ctx);
    if (st == IWPP_OK) ctx->ops = ops;
    return st;
}

/* AUTO: CUDA if a device is present, else an OpenCL GPU, else the CPU. */
static iwpp_status resolve_auto(iwpp_context *ctx)
{
    const iwpp_backend_ops *cuda = backend_ops(IWPP_BACKEND_CUDA);
    if (cuda && cuda->probe(NULL, 0) && open_backend(ctx, cuda) == IWPP_OK) return IWPP_OK;
    const iwpp_backend_ops *ocl = backend_ops(IWPP_BACKEND_OPENCL);
    if (ocl && ocl->probe(NULL, 0)) {
        /* A device index set by the caller is honoured; index 0 means "the first GPU". */
        int n = ocl->device_count();
        int first = ctx->device > 0 ? ctx->device : 0, last = ctx->device > 0 ? ctx->device + 1 : n;
        for (int i = first; i < last && i < n; ++i) {
            iwpp_device_info info;
            if (ocl->device_info(i, &info) == IWPP_OK && info.is_gpu) {
                int saved = ctx->device;
                ctx->device = i;
                if (open_backend(ctx, ocl) == IWPP_OK) return IWPP_OK;
                ctx->device = saved;
            }
        }
    }
    ctx->message[0] = '\0';
    return open_backend(ctx, &iwpp_cpu_backend);
}

static void close_backend(iwpp_context *ctx)
{
    iwpp_tiles_release(ctx); /* tile buffers and worker contexts belong to the backend in use */
    if (ctx->ops && ctx->ops->close) ctx->ops->close(ctx);
    ctx->backend_state = NULL;
    ctx->ops = NULL;
}

/* (Re)open the requested backend; falls back to the CPU (keeping the message) on failure. */
static iwpp_status select_backend(iwpp_context *ctx)
{
    close_backend(ctx);
    ctx->message[0] = '\0';
    iwpp_status st;
    if (ctx->requested == IWPP_BACKEND_AUTO) {
        st = resolve_auto(ctx);
    } else {
        const iwpp_backend_ops *ops = backend_ops(ctx->requested);
        if (!ops)
            st = iwpp_set_error(ctx, IWPP_EDEVICE, "%s", not_built_reason(ctx->requested));
        else
            st = open_backend(ctx, ops);
    }
    if (st != IWPP_OK) {
        char keep[sizeof ctx->message];
        memcpy(keep, ctx->message, sizeof keep);
        iwpp_cpu_backend.open(ctx);
        ctx->ops = &iwpp_cpu_backend;
        memcpy(ctx->message, keep, sizeof keep);
    }
    return st;
}

/* ------------------------------------------------------------------------ */
/* contexts                                                                  */

iwpp_status iwpp_context_create(iwpp_context **out, iwpp_backend backend)
{
    if (!out) return IWPP_EINVAL;
    *out = NULL;
    iwpp_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return IWPP_ENOMEM;
    ctx->threads = 0;
    ctx->device = 0;
    ctx->tile_size = 256;
    ctx->queue_capacity = 0;
    ctx->algorithm = IWPP_ALGO_AUTO;
    ctx->queue_variant = IWPP_QUEUE_MULTILEVEL;
    iwpp_tune_from_env(ctx);
    *out = ctx;
    if (backend < IWPP_BACKEND_AUTO || backend > IWPP_BACKEND_OPENCL) {
        ctx->requested = IWPP_BACKEND_CPU;
        select_backend(ctx);
        return iwpp_set_error(ctx, IWPP_EINVAL, "unknown backend %d (use AUTO, CPU, CUDA or OPENCL)",
                              (int)backend);
    }
    ctx->requested = backend;
    return select_backend(ctx);
}

void iwpp_context_destroy(iwpp_context *ctx)
{
    if (!ctx) return;
    iwpp_tiles_release(ctx);
    iwpp_workpool_free(ctx->tile_pool);
    close_backend(ctx);
    free(ctx);
}

iwpp_status iwpp_context_set_threads(iwpp_context *ctx, int threads)
{
    if (!ctx) return IWPP_EINVAL;
    if (threads < 0 || threads > IWPP_MAX_THREADS)
        return iwpp_set_error(ctx, IWPP_EINVAL,
                              "threads is %d; use 0 (all cores) or a count from 1 to %d", threads,
                              IWPP_MAX_THREADS);
    ctx->threads = threads;
    return IWPP_OK;
}

iwpp_status iwpp_context_set_device(iwpp_context *ctx, int device)
{
    if (!ctx) return IWPP_EINVAL;
    if (device < 0)
        return iwpp_set_error(ctx, IWPP_EINVAL, "device index is %d; it must be 0 or more", device);
    int old = ctx->device;
    ctx->device = device;
    iwpp_status st = select_backend(ctx);
    if (st != IWPP_OK) {
        char keep[sizeof ctx->message];
        memcpy(keep, ctx->message, sizeof keep);
        ctx->device = old;
        select_backend(ctx);
        memcpy(ctx->message, keep, sizeof keep);
    }
    return st;
}

iwpp_status iwpp_context_set_tuning(iwpp_context *ctx, const char *key, const char *value)
{
    if (!ctx) return IWPP_EINVAL;
    iwpp_status st = iwpp_tune_set(ctx, key, value);
    if (st != IWPP_OK) return st;
    /* settings read when the backend opens: open it again (same backend, same device) */
    if (iwpp_tune_reopens(iwpp_tune_lookup(key)) && !strncmp(key, "cuda.", 5) && ctx->ops->kind == IWPP_BACKEND_CUDA)
        return select_backend(ctx);
    return IWPP_OK;
}

iwpp_status iwpp_context_set_tile_size(iwpp_context *ctx, int64_t tile)
{
    if (!ctx) return IWPP_EINVAL;
    if (tile < 4 || tile > (int64_t)1 << 20)
        return iwpp_set_error(ctx, IWPP_EINVAL, "tile size is %lld; use 4 to 1048576 pixels",
                              (long long)tile);
    ctx->tile_size = tile;
    return IWPP_OK;
}

iwpp_status iwpp_context_set_memory_limit(iwpp_context *ctx, uint64_t bytes)
{
    if (!ctx) return IWPP_EINVAL;
    /* a lower budget holds from now: what earlier calls kept on the device (tile buffers, worker
       contexts, the backend's work buffers) is given back, the next call takes what it needs */
    const int lower = bytes && (ctx->memory_limit == 0 || bytes < ctx->memory_limit);
    ctx->memory_limit = bytes; /* any size: tiny budgets give tiny tiles (tests use them) */
    if (lower) { /* (after the limit: a buffer given back is then pooled by the new one) */
        iwpp_tiles_release(ctx);
        if (ctx->ops && ctx->ops->scratch_trim) ctx->ops->scratch_trim(ctx, 0.0);
    }
    return IWPP_OK;
}

iwpp_status iwpp_context_set_workers(iwpp_context *ctx, const char *spec)
{
    if (!ctx) return IWPP_EINVAL;
    ctx->message[0] = '\0';
    return iwpp_workers_parse(ctx, spec);
}

iwpp_status iwpp_context_set_progress(iwpp_context *ctx, iwpp_progress_fn fn, void *user)
{
    if (!ctx) return IWPP_EINVAL;
    ctx->progress = fn;
    ctx->progress_user = user;
    return IWPP_OK;
}

static int progress_span_cb(void *user, double fraction)
{
    const iwpp_progress_span *s = user;
    double f = fraction < 0.0 ? 0.0 : fraction > 1.0 ? 1.0 : fraction;
    return s->fn(s->user, s->lo + f * (s->hi - s->lo));
}

void iwpp_progress_push(iwpp_context *ctx, iwpp_progress_span *span, double lo, double hi)
{
    span->fn = ctx->progress;
    span->user = ctx->progress_user;
    span->lo = lo;
    span->hi = hi;
    if (ctx->progress) { /* no listener: nothing to map */
        ctx->progress = progress_span_cb;
        ctx->progress_user = span;
    }
}

void iwpp_progress_pop(iwpp_context *ctx, const iwpp_progress_span *span)
{
    ctx->progress = span->fn;
    ctx->progress_user = span->user;
}

iwpp_status iwpp_progress_report(iwpp_context *ctx, double fraction)
{
    if (!ctx->progress) return IWPP_OK;
    if (ctx->progress(ctx->progress_user, fraction))
        return iwpp_set_error(ctx, IWPP_ECANCELED, "cancelled by the progress listener");
    return IWPP_OK;
}

void iwpp_progress_done(iwpp_context *ctx)
{
    if (ctx->progress) ctx->progress(ctx->progress_user, 1.0); /* the call is complete: no cancel now */
}

iwpp_status iwpp_context_set_queue_capacity(iwpp_context *ctx, int64_t capacity)
{
    if (!ctx) return IWPP_EINVAL;
    /* The backends size their queues as blocks x 2 x capacity items in 32-bit counts: a larger
       capacity would wrap there (a silently wrong result on OpenCL). */
    if (capacity < 0 || capacity > INT32_MAX)
        return iwpp_set_error(ctx, IWPP_EINVAL,
                              "queue capacity is %lld; use 0 (automatic) or a count from 1 to %ld",
                              (long long)capacity, (long)INT32_MAX);
    ctx->queue_capacity = capacity;
    return IWPP_OK;
}

iwpp_status iwpp_context_set_algorithm(iwpp_context *ctx, iwpp_algorithm algo)
{
    if (!ctx) return IWPP_EINVAL;
    if (algo < IWPP_ALGO_AUTO || algo > IWPP_ALGO_MEGAPIXEL)
        return iwpp_set_error(ctx, IWPP_EINVAL, "unknown algorithm %d", (int)algo);
    ctx->algorithm = algo;
    return IWPP_OK;
}

iwpp_status iwpp_context_set_queue_variant(iwpp_context *ctx, iwpp_queue_variant v)
{
    if (!ctx) return IWPP_EINVAL;
    if (v < IWPP_QUEUE_MULTILEVEL || v > IWPP_QUEUE_PREFIXSUM)
        return iwpp_set_error(ctx, IWPP_EINVAL, "unknown queue variant %d", (int)v);
    ctx->queue_variant = v;
    return IWPP_OK;
}

iwpp_backend iwpp_context_backend(const iwpp_context *ctx)
{
    return (ctx && ctx->ops) ? ctx->ops->kind : IWPP_BACKEND_CPU;
}

iwpp_status iwpp_context_stats(iwpp_context *ctx, iwpp_stats *out)
{
    if (!ctx) return IWPP_EINVAL;
    if (!out) return iwpp_set_error(ctx, IWPP_EINVAL, "stats output (out) is NULL");
    *out = ctx->stats;
    return IWPP_OK;
}

/* ------------------------------------------------------------------------ */
/* argument checks                                                           */

iwpp_status iwpp_begin(iwpp_context *ctx)
{
    if (!ctx) return IWPP_EINVAL;
    ctx->message[0] = '\0';
    return IWPP_OK;
}

void iwpp_end(iwpp_context *ctx, double t0)
{
    ctx->stats.backend = ctx->ops->kind;
    ctx->stats.total_ms = iwpp_now_ms() - t0;
    if (ctx->stats.compute_ms <= 0.0 || ctx->ops->kind == IWPP_BACKEND_CPU)
        ctx->stats.compute_ms = ctx->stats.total_ms;
}

static int64_t eff_stride_y(const iwpp_image *im) { return im->stride_y ? im->stride_y : im->width; }
static int64_t eff_stride_z(const iwpp_image *im)
{
    return im->stride_z ? im->stride_z : eff_stride_y(im) * im->height;
}

/* First pixel that is NaN (or, with @p also_inf, not finite). */
static int has_bad_float(const iwpp_image *im, int also_inf, int64_t *nx, int64_t *ny, int64_t *nz)
{
    const float *p = (const float *)im->data;
    int64_t sy = eff_stride_y(im), sz = eff_stride_z(im);
    for (int64_t z = 0; z < im->depth; ++z)
        for (int64_t y = 0; y < im->height; ++y) {
            const float *row = p + z * sz + y * sy;
            for (int64_t x = 0; x < im->width; ++x)
                if (isnan(row[x]) || (also_inf && isinf(row[x]))) {
                    *nx = x, *ny = y, *nz = z;
                    return 1;
                }
        }
    return 0;
}

iwpp_status iwpp_check_image(iwpp_context *ctx, const iwpp_image *im, const char *what,
                             unsigned types, int check_nan)
{
    if (!im) return iwpp_set_error(ctx, IWPP_EINVAL, "%s is NULL", what);
    if (!im->data) return iwpp_set_error(ctx, IWPP_EINVAL, "%s has no pixel data (data is NULL)", what);
    if (iwpp_type_size(im->type) == 0)
        return iwpp_set_error(ctx, IWPP_EINVAL, "%s has an unknown pixel type (%d)", what, (int)im->type);
    if (!(types & IWPP_TYPE_BIT(im->type))) {
        if (types == IWPP_TYPE_BIT(IWPP_F32))
            return iwpp_set_error(ctx, IWPP_EINVAL, "%s must be a 32-bit float (f32) image, not %s", what,
                                  iwpp_type_name(im->type));
        if (types == IWPP_TYPE_BIT(IWPP_U8))
            return iwpp_set_error(ctx, IWPP_EINVAL, "%s must be an 8-bit (u8) image, not %s", what,
                                  iwpp_type_name(im->type));
        if (types == IWPP_TYPE_BIT(IWPP_I64))
            return iwpp_set_error(ctx, IWPP_EINVAL, "%s must be a 64-bit integer (i64) image, not %s",
                                  what, iwpp_type_name(im->type));
        if (types == IWPP_TYPES_LABEL_OUT)
            return iwpp_set_error(ctx, IWPP_EINVAL, "%s must be a 16-bit (u16) or 32-bit (u32) label image, not %s",
                                  what, iwpp_type_name(im->type));
        if (types == IWPP_TYPES_LABEL_IN)
            return iwpp_set_error(ctx, IWPP_EINVAL, "%s must be a u8, u16 or u32 label image, not %s", what,
                                  iwpp_type_name(im->type));
        return iwpp_set_error(ctx, IWPP_EUNSUPPORTED,
                              "%s has pixel type %s; this operation takes u8, u16 or f32 images", what,
                              iwpp_type_name(im->type));
    }
    if (im->width <= 0 || im->height <= 0 || im->depth <= 0)
        return iwpp_set_error(ctx, IWPP_EINVAL,
                              "%s is %lldx%lldx%lld; width, height and depth must all be at least 1", what,
                              (long long)im->width, (long long)im->height, (long long)im->depth);
    const int64_t lim = INT64_MAX / 16;
    if (im->width > lim / im->height || im->width * im->height > lim / im->depth)
        return iwpp_set_error(ctx, IWPP_EINVAL, "%s is %lldx%lldx%lld: too many pixels", what,
                              (long long)im->width, (long long)im->height, (long long)im->depth);
    if (im->stride_y < 0 || im->stride_z < 0)
        return iwpp_set_error(ctx, IWPP_EINVAL,
                              "%s has a negative stride (stride_y %lld, stride_z %lld); use 0 for "
                              "contiguous or a positive count of elements",
                              what, (long long)im->stride_y, (long long)im->stride_z);
    /* Strides so large that the view's extent overflows 64 bits are refused before any use. */
    if ((im->stride_y && im->stride_y > lim / im->height) ||
        (im->stride_z && im->stride_z > lim / im->depth) ||
        (!im->stride_z && im->stride_y && im->stride_y * im->height > lim / im->depth))
        return iwpp_set_error(ctx, IWPP_EINVAL, "%s has strides (%lld, %lld) that span too much memory",
                              what, (long long)im->stride_y, (long long)im->stride_z);
    int64_t sy = eff_stride_y(im), sz = eff_stride_z(im);
    if (sy < im->width)
        return iwpp_set_error(ctx, IWPP_EINVAL, "%s has stride_y %lld, below its width %lld", what,
                              (long long)im->stride_y, (long long)im->width);
    if (im->depth > 1 && sz < sy * (im->height - 1) + im->width)
        return iwpp_set_error(ctx, IWPP_EINVAL,
                              "%s has stride_z %lld: slices of %lld rows with stride_y %lld overlap", what,
                              (long long)sz, (long long)im->height, (long long)sy);
    int64_t nx, ny, nz;
    if (check_nan && im->type == IWPP_F32 && has_bad_float(im, 0, &nx, &ny, &nz))
        return iwpp_set_error(ctx, IWPP_EINVAL, "%s contains NaN at x=%lld y=%lld z=%lld; replace NaN first",
                              what, (long long)nx, (long long)ny, (long long)nz);
    return IWPP_OK;
}

iwpp_status iwpp_check_finite(iwpp_context *ctx, const iwpp_image *im, const char *what)
{
    int64_t nx, ny, nz;
    if (im->type == IWPP_F32 && has_bad_float(im, 1, &nx, &ny, &nz))
        return iwpp_set_error(ctx, IWPP_EINVAL,
                              "%s is infinite at x=%lld y=%lld z=%lld; this operation needs finite values",
                              what, (long long)nx, (long long)ny, (long long)nz);
    return IWPP_OK;
}

iwpp_status iwpp_check_same(iwpp_context *ctx, const iwpp_image *a, const char *an,
                            const iwpp_image *b, const char *bn, int same_type)
{
    if (a->width != b->width || a->height != b->height || a->depth != b->depth)
        return iwpp_set_error(ctx, IWPP_EINVAL, "%s is %lldx%lldx%lld but %s is %lldx%lldx%lld", bn,
                              (long long)b->width, (long long)b->height, (long long)b->depth, an,
                              (long long)a->width, (long long)a->height, (long long)a->depth);
    if (same_type && a->type != b->type)
        return iwpp_set_error(ctx, IWPP_EINVAL, "%s is %s but %s is %s; both must have the same type", an,
                              iwpp_type_name(a->type), bn, iwpp_type_name(b->type));
    return IWPP_OK;
}

iwpp_status iwpp_check_connectivity(iwpp_context *ctx, int conn, const iwpp_image *im)
{
    if (iwpp_connectivity_valid(conn, im->depth)) return IWPP_OK;
    if (conn == 4 || conn == 8)
        return iwpp_set_error(ctx, IWPP_EINVAL,
                              "connectivity %d is for 2D images; this image has %lld slices: use 6, 18 or "
                              "26",
                              conn, (long long)im->depth);
    return iwpp_set_error(ctx, IWPP_EINVAL,
                          "connectivity %d is not valid: use 4 or 8 for 2D images, 6, 18 or 26 for 3D", conn);
}

/* ------------------------------------------------------------------------ */
/* buffer sets                                                               */

static const iwpp_backend_ops *bs_ops(const iwpp_bufset *s) { return s->ops ? s->ops : s->ctx->ops; }

static iwpp_buf *bufset_next(iwpp_bufset *s, iwpp_type type, const iwpp_image *like)
{
    if (s->n >= (int)(sizeof s->b / sizeof s->b[0])) return NULL;
    iwpp_buf *b = &s->b[s->n];
    memset(b, 0, sizeof *b);
    b->type = type;
    b->w = like->width;
    b->h = like->height;
    b->d = like->depth;
    return b;
}

iwpp_status iwpp_bufset_alloc(iwpp_bufset *s, iwpp_type type, const iwpp_image *like, iwpp_buf **out)
{
    iwpp_buf *b = bufset_next(s, type, like);
    if (!b) return iwpp_set_error(s->ctx, IWPP_EINTERNAL, "internal: too many buffers in one operation");
    iwpp_status st = bs_ops(s)->buf_alloc(s->ctx, b);
    if (st != IWPP_OK) return st;
    s->n++;
    *out = b;
    return IWPP_OK;
}

iwpp_status iwpp_bufset_input(iwpp_bufset *s, const iwpp_image *im, iwpp_buf **out)
{
    iwpp_context *ctx = s->ctx;
    iwpp_buf *b = bufset_next(s, im->type, im);
    if (!b) return iwpp_set_error(ctx, IWPP_EINTERNAL, "internal: too many buffers in one operation");
    if (bs_ops(s)->wrap && bs_ops(s)->wrap(ctx, b, im) == IWPP_OK) {
        s->n++;
        *out = b;
        return IWPP_OK;
    }
    memset(b, 0, sizeof *b);
    b->type = im->type;
    b->w = im->width;
    b->h = im->height;
    b->d = im->depth;
    iwpp_status st = bs_ops(s)->buf_alloc(ctx, b);
    if (st != IWPP_OK) return st;
    s->n++;
    *out = b;
    return bs_ops(s)->upload(ctx, b, im);
}

void iwpp_bufset_free(iwpp_bufset *s)
{
    for (int i = s->n - 1; i >= 0; --i) bs_ops(s)->buf_free(s->ctx, &s->b[i]);
    s->n = 0;
}

/* ------------------------------------------------------------------------ */
/* primitive operations                                                      */

static int views_overlap(const iwpp_image *a, const iwpp_image *b);

/* Reconstruction by tiles, which writes the marker while workers read the mask: a mask that
 * shares memory with the marker is copied first. */
static iwpp_status reconstruct_by_tiles(iwpp_context *ctx, iwpp_image *marker, const iwpp_image *mask,
                                        int connectivity, iwpp_morph_mode mode)
{
    if (!views_overlap(marker, mask)) return iwpp_tiles_reconstruct(ctx, marker, mask, connectivity, mode);
    void *copy = malloc((size_t)(mask->width * mask->height * mask->depth) * iwpp_type_size(mask->type));
    if (!copy) return iwpp_set_error(ctx, IWPP_ENOMEM, "out of host memory for a copy of the mask");
    iwpp_buf b = {mask->type, mask->width, mask->height, mask->depth, copy, NULL, 0};
    iwpp_image c = iwpp_image_3d(copy, mask->type, mask->width, mask->height, mask->depth);
    iwpp_status st = iwpp_cpu_backend.upload(ctx, &b, mask);
    if (st == IWPP_OK) st = iwpp_tiles_reconstruct(ctx, marker, &c, connectivity, mode);
    free(copy);
    return st;
}

/* Whether @p bytes more would leave at least as much physical memory free (so that the host's
 * finish, which adds the CPU's working memory to its copies, does not push the machine into swap
 * or the OOM killer); true where the system does not say. */
static int host_room(size_t bytes)
{
#if defined(_SC_AVPHYS_PAGES) && defined(_SC_PAGESIZE)
    const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) return (double)bytes * 2.0 <= (double)pages * (double)page;
#else
    (void)bytes;
#endif
    return 1;
}

iwpp_status iwpp_finish_on_host(iwpp_context *ctx, iwpp_buf *marker, const iwpp_buf *mask, int connectivity,
                                iwpp_morph_mode mode, int *done)
{
    *done = 0;
    const size_t bytes = (size_t)iwpp_buf_count(marker) * iwpp_type_size(marker->type);
    if (!host_room(2 * bytes)) return IWPP_OK;
    void *hm = malloc(bytes ? bytes : 1), *hk = malloc(bytes ? bytes : 1);
    iwpp_status st = IWPP_OK;
    if (hm && hk) {
        iwpp_buf bm = *marker, bk = *mask;
        bm.ptr = hm, bm.priv = NULL, bk.ptr = hk, bk.priv = NULL;
        iwpp_image im = iwpp_image_3d(hm, marker->type, marker->w, marker->h, marker->d);
        iwpp_image ik = iwpp_image_3d(hk, mask->type, mask->w, mask->h, mask->d);
        const iwpp_stats keep = ctx->stats; /* the CPU backend sets its own */
        if (!(st = ctx->ops->download(ctx, marker, &im)) && !(st = ctx->ops->download(ctx, mask, &ik))) {
            st = iwpp_cpu_backend.reconstruct(ctx, &bm, &bk, connectivity, mode);
            if (st == IWPP_ENOMEM) { /* the marker is as it was */
                ctx->message[0] = '\0';
                st = IWPP_OK;
            } else if (!st && !(st = ctx->ops->upload(ctx, marker, &im))) {
                *done = 1;
            }
        }
        ctx->stats = keep;
    }
    free(hm);
    free(hk);
    return st;
}

iwpp_status iwpp_reconstruct(iwpp_context *ctx, iwpp_image *marker_inout, const iwpp_image *mask,
                             int connectivity, iwpp_morph_mode mode)
{
    iwpp_status st = iwpp_begin(ctx);
    if (st) return st;
    if ((st = iwpp_check_image(ctx, marker_inout, "marker", IWPP_TYPES_GRAY, 1)) ||
        (st = iwpp_check_image(ctx, mask, "mask", IWPP_TYPES_GRAY, 1)) ||
        (st = iwpp_check_same(ctx, mask, "mask", marker_inout, "marker", 1)) ||
        (st = iwpp_check_connectivity(ctx, connectivity, mask)))
        return st;
    if (mode != IWPP_BY_DILATION && mode != IWPP_BY_EROSION)
        return iwpp_set_error(ctx, IWPP_EINVAL, "mode is %d; use IWPP_BY_DILATION or IWPP_BY_EROSION",
                              (int)mode);
    double t0 = iwpp_now_ms();
    memset(&ctx->stats, 0, sizeof ctx->stats);
    const iwpp_backend_ops *ops = ctx->ops;
    if (iwpp_tiles_needed(ctx, mask->type, mask)) {
        st = reconstruct_by_tiles(ctx, marker_inout, mask, connectivity, mode);
        if (st == IWPP_OK) iwpp_end(ctx, t0);
        return st;
    }
    /* Natural points of an in-memory call: its start, and before the result is written back
       (a cancel there leaves a device call's marker untouched). */
    if ((st = iwpp_progress_report(ctx, 0.0))) return st;
    if (ops->reconstruct_views) {
        st = ops->reconstruct_views(ctx, marker_inout, mask, connectivity, mode);
        if (st == IWPP_OK) iwpp_progress_done(ctx);
        if (st == IWPP_OK) iwpp_end(ctx, t0);
        if (st != IWPP_EUNSUPPORTED || ctx->message[0]) return st;
        memset(&ctx->stats, 0, sizeof ctx->stats);
    }
    iwpp_bufset s = {.ctx = ctx};
    iwpp_buf *mk = NULL, *ms = NULL;
    if (!(st = iwpp_bufset_input(&s, mask, &ms)) && !(st = iwpp_bufset_alloc(&s, mask->type, mask, &mk)) &&
        !(st = ops->upload(ctx, mk, marker_inout)) &&
        !(st = ops->pointwise(ctx, mode == IWPP_BY_DILATION ? IWPP_PW_MIN : IWPP_PW_MAX, mk, mk, ms, 0)) &&
        !(st = iwpp_progress_report(ctx, 0.1)) && !(st = ops->reconstruct(ctx, mk, ms, connectivity, mode)) &&
        !(st = iwpp_progress_report(ctx, 0.9)))
        st = ops->download(ctx, mk, marker_inout);
    if (st == IWPP_OK) iwpp_progress_done(ctx);
    iwpp_bufset_free(&s);
    /* The device ran out with the default budget: the marker is untouched, go by tiles. */
    if (st == IWPP_ENOMEM && ctx->memory_limit == 0 && ops->kind != IWPP_BACKEND_CPU) {
        memset(&ctx->stats, 0, sizeof ctx->stats);
        ctx->message[0] = '\0';
        iwpp_progress_span span; /* (0.1 was reported: the tiles' fractions go on from there) */
        iwpp_progress_push(ctx, &span, 0.1, 1.0);
        st = reconstruct_by_tiles(ctx, marker_inout, mask, connectivity, mode);
        iwpp_progress_pop(ctx, &span);
    }
    if (st == IWPP_OK) iwpp_end(ctx, t0);
    return st;
}

/* Byte range [lo, hi) that a (checked) view spans. */
static void view_span(const iwpp_image *im, uintptr_t *lo, uintptr_t *hi)
{
    const int64_t last = (im->depth - 1) * eff_stride_z(im) + (im->height - 1) * eff_stride_y(im) + im->width;
    *lo = (uintptr_t)im->data;
    *hi = *lo + (uintptr_t)last * iwpp_type_size(im->type);
}

int iwpp_views_overlap(const iwpp_image *a, const iwpp_image *b) { return views_overlap(a, b); }

static int views_overlap(const iwpp_image *a, const iwpp_image *b)
{
    if (!a || !b) return 0;
    uintptr_t alo, ahi, blo, bhi;
    view_span(a, &alo, &ahi);
    view_span(b, &blo, &bhi);
    return alo < bhi && blo < ahi;
}

/* An output of the distance transform: the caller's view itself when the backend can write it
 * directly (wrap_output: it then writes only once it can no longer fail) and the view shares
 * no memory with the other arguments @p o1, @p o2; else a backend buffer downloaded afterwards. */
iwpp_status iwpp_bufset_output(iwpp_bufset *s, iwpp_type type, const iwpp_image *im, const iwpp_image *o1,
                               const iwpp_image *o2, iwpp_buf **out)
{
    iwpp_context *ctx = s->ctx;
    if (ctx->ops->wrap_output && !views_overlap(im, o1) && !views_overlap(im, o2)) {
        iwpp_buf *b = bufset_next(s, type, im);
        if (!b) return iwpp_set_error(ctx, IWPP_EINTERNAL, "internal: too many buffers in one operation");
        if (ctx->ops->wrap_output(ctx, b, im) == IWPP_OK) {
            s->n++;
            *out = b;
            return IWPP_OK;
        }
    }
    return iwpp_bufset_alloc(s, type, im, out);
}

/* An EDT beyond the device's budget: exact by strips (or square tiles) with margins; Danielsson
 * is refused. Tiles write the outputs as they go, so an input that shares memory with an output
 * is copied first. */
static iwpp_status edt_by_tiles(iwpp_context *ctx, const iwpp_image *binary, iwpp_edt_method method,
                                const double sp[3], iwpp_image *dist_out, iwpp_image *nearest_out)
{
    if (method != IWPP_EDT_EXACT)
        return iwpp_set_error(ctx, IWPP_EUNSUPPORTED,
                              "the Danielsson EDT of a %lldx%lldx%lld image (about %.0f MiB of device memory) "
                              "does not fit the device's memory or the context's budget, and it does not run "
                              "by tiles; use the exact EDT (it does), a larger budget, or the CPU backend",
                              (long long)binary->width, (long long)binary->height, (long long)binary->depth,
                              (double)binary->width * (double)binary->height * (double)binary->depth *
                                  (iwpp_type_size(binary->type) + 20.0) / 1048576.0);
    if (!views_overlap(binary, dist_out) && !views_overlap(binary, nearest_out))
        return iwpp_tiles_edt(ctx, binary, sp, dist_out, nearest_out);
    const int64_t n = binary->width * binary->height * binary->depth;
    void *copy = malloc((size_t)n * iwpp_type_size(binary->type));
    if (!copy) return iwpp_set_error(ctx, IWPP_ENOMEM, "out of host memory for a copy of the EDT's input");
    iwpp_image c = iwpp_image_3d(copy, binary->type, binary->width, binary->height, binary->depth);
    iwpp_status st = iwpp_cpu_backend.upload(ctx, &(iwpp_buf){binary->type, binary->width, binary->height,
                                                               binary->depth, copy, NULL, 0},
                                             binary);
    if (st == IWPP_OK) st = iwpp_tiles_edt(ctx, &c, sp, dist_out, nearest_out);
    free(copy);
    return st;
}

/* The EDT's spacing (NULL = 1, 1, 1) checked and copied into @p sp (dispatch.h). */
iwpp_status iwpp_check_spacing(iwpp_context *ctx, const iwpp_image *binary, const double spacing[3], double sp[3])
{
    sp[0] = sp[1] = sp[2] = 1.0;
    if (spacing) {
        static const char axis[3] = {'x', 'y', 'z'};
        for (int i = 0; i < 3; ++i) {
            if (!(spacing[i] > 0.0) || !isfinite(spacing[i]))
                return iwpp_set_error(ctx, IWPP_EINVAL,
                                      "spacing along %c is %g; each pixel size must be a finite number "
                                      "above 0",
                                      axis[i], spacing[i]);
            /* The exact EDT's envelope multiplies two squared steps (h^4): below DBL_MIN that
               underflows and ties appear that are not ties (OpenCL lost nearest sites at 1e-100). */
            if (spacing[i] < 1e-75)
                return iwpp_set_error(ctx, IWPP_EINVAL,
                                      "spacing along %c is %g; pixel sizes below 1e-75 are not "
                                      "supported (rescale the units)",
                                      axis[i], spacing[i]);
            sp[i] = spacing[i];
        }
        /* Every distance must be a finite float: +inf means "no background at all". The
           diagonal bounds every distance; computed by axis so that nothing overflows. */
        const double ext[3] = {(double)binary->width * sp[0], (double)binary->height * sp[1],
                               (double)binary->depth * sp[2]};
        double big = fmax(ext[0], fmax(ext[1], ext[2]));
        double diag = big * sqrt((ext[0] / big) * (ext[0] / big) + (ext[1] / big) * (ext[1] / big) +
                                 (ext[2] / big) * (ext[2] / big));
        if (!(diag < (double)FLT_MAX))
            return iwpp_set_error(ctx, IWPP_EINVAL,
                                  "spacing (%g, %g, %g) is too large for a %lldx%lldx%lld image: "
                                  "distances would exceed the largest float (%g); rescale the "
                                  "units",
                                  sp[0], sp[1], sp[2], (long long)binary->width,
                                  (long long)binary->height, (long long)binary->depth,
                                  (double)FLT_MAX);
    }
    return IWPP_OK;
}

iwpp_status iwpp_distance_transform(iwpp_context *ctx, const iwpp_image *binary, iwpp_edt_method method,
                                    const double spacing[3], iwpp_image *dist_out, iwpp_image *nearest_out)
{
    iwpp_status st = iwpp_begin(ctx);
    if (st) return st;
    if ((st = iwpp_check_image(ctx, binary, "binary", IWPP_TYPES_GRAY, 1)) ||
        (st = iwpp_check_image(ctx, dist_out, "dist_out", IWPP_TYPE_BIT(IWPP_F32), 0)) ||
        (st = iwpp_check_same(ctx, binary, "binary", dist_out, "dist_out", 0)))
        return st;
    if (nearest_out &&
        ((st = iwpp_check_image(ctx, nearest_out, "nearest_out", IWPP_TYPE_BIT(IWPP_I64), 0)) ||
         (st = iwpp_check_same(ctx, binary, "binary", nearest_out, "nearest_out", 0))))
        return st;
    if (method != IWPP_EDT_EXACT && method != IWPP_EDT_DANIELSSON)
        return iwpp_set_error(ctx, IWPP_EINVAL,
                              "method is %d; use IWPP_EDT_EXACT or IWPP_EDT_DANIELSSON", (int)method);
    double sp[3];
    if ((st = iwpp_check_spacing(ctx, binary, spacing, sp))) return st;
    double t0 = iwpp_now_ms();
    memset(&ctx->stats, 0, sizeof ctx->stats);
    if (iwpp_tiles_edt_needed(ctx, binary, method, sp, nearest_out != NULL)) {
        st = edt_by_tiles(ctx, binary, method, sp, dist_out, nearest_out);
        if (st == IWPP_OK) iwpp_end(ctx, t0);
        return st;
    }
    if ((st = iwpp_progress_report(ctx, 0.0))) return st;
    const iwpp_backend_ops *ops = ctx->ops;
    if (ops->edt_views) {
        st = ops->edt_views(ctx, binary, method, sp, dist_out, nearest_out);
        if (st == IWPP_OK) iwpp_progress_done(ctx);
        if (st != IWPP_EUNSUPPORTED || ctx->message[0]) goto done;
        memset(&ctx->stats, 0, sizeof ctx->stats);
        st = IWPP_OK;
    }
    iwpp_bufset s = {.ctx = ctx};
    iwpp_buf *in = NULL, *dist = NULL, *near = NULL;
    /* download is a no-op for an output the backend wrote in place */
    if (!(st = iwpp_bufset_input(&s, binary, &in)) &&
        !(st = iwpp_bufset_output(&s, IWPP_F32, dist_out, binary, nearest_out, &dist)) &&
        !(st = nearest_out ? iwpp_bufset_output(&s, IWPP_I64, nearest_out, binary, dist_out, &near) : IWPP_OK) &&
        !(st = iwpp_progress_report(ctx, 0.1)) && !(st = ops->edt(ctx, in, method, sp, dist, near)) &&
        !(st = ops->download(ctx, dist, dist_out)))
        st = near ? ops->download(ctx, near, nearest_out) : IWPP_OK;
    if (st == IWPP_OK) iwpp_progress_done(ctx);
    iwpp_bufset_free(&s);
done:
    /* the device ran out with the default budget (the outputs are untouched): by tiles */
    if (st == IWPP_ENOMEM && ctx->memory_limit == 0 && ops->kind != IWPP_BACKEND_CPU) {
        memset(&ctx->stats, 0, sizeof ctx->stats);
        ctx->message[0] = '\0';
        iwpp_progress_span span; /* (0.1 was reported: the tiles' fractions go on from there) */
        iwpp_progress_push(ctx, &span, 0.1, 1.0);
        st = edt_by_tiles(ctx, binary, method, sp, dist_out, nearest_out);
        iwpp_progress_pop(ctx, &span);
    }
    if (st == IWPP_OK) iwpp_end(ctx, t0);
    return st;
}
