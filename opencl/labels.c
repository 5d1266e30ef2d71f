/*
 * labels.c - connected-component labeling and the marker-controlled watershed on OpenCL.
 * Kernels: label.cl, watershed.cl (one program per input pixel type). Definitions: iwpp.h.
 *
 * Labeling: union-find with the smallest index as every root (atomic_min), flattening, root
 * flags, an exclusive prefix sum of the flags in raster order (block scans, then the block sums
 * scanned the same way and added back), labels = rank of the root + 1.
 *
 * Watershed: levels by the backend's own reconstruction by erosion (reconstruct.c), then the
 * plateau distances and then the labels (an entry after a climb only from its lower neighbours
 * with the least (L, D)), each relaxed with a 32-bit atomic minimum from a list of changed
 * pixels (watershed.cl says why two passes), rounds enqueued in batches with the counts
 * on the device (as the Danielsson EDT in edt.c). 32-bit atomics only: any OpenCL 1.2 device.
 */
#include "ocl.h"

#include <stdio.h>
#include <string.h>

/* ---- kernel arguments: a list in the kernel's order, set in one call ---- */

typedef struct karg {
    size_t size;
    const void *value; /* NULL: local memory of `size` bytes */
} karg;

#define KA(v) {sizeof(v), &(v)}
#define KLOCAL(bytes) {(bytes), NULL}
#define KARGS(s, k, ...)                                                                           \
    set_args((s), (k), (const karg[]){__VA_ARGS__},                                                \
             (int)(sizeof((const karg[]){__VA_ARGS__}) / sizeof(karg)))

static cl_int set_args(iwpp_ocl *s, cl_kernel k, const karg *a, int n)
{
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < n && err == CL_SUCCESS; ++i)
        err = s->api->clSetKernelArg(k, (cl_uint)i, a[i].size, a[i].value);
    return err;
}

/* A fixed group size on CPU devices (PoCL compiles a kernel once per group size). */
static size_t flat_group(const iwpp_ocl *s) { return s->is_gpu ? 0 : 64; }

/* ------------------------------------------------------------------------ */
/* labeling                                                                 */

#define SCAN_ITEMS 8 /* as in label.cl */

typedef struct lab_job {
    iwpp_ocl *s;
    cl_kernel init, merge, flatten, block, add, write;
    cl_mem parent, rank, sums, offs;
    size_t L; /* scan work-group size */
    cl_uint n;
} lab_job;

/* Exclusive scan of data[doff .. doff + m) in place; the levels above go to j->sums from soff.
 * *total_at receives where in j->sums the sum of everything lands. */
static cl_int scan(lab_job *j, cl_mem data, cl_uint doff, cl_uint m, cl_uint soff, cl_uint *total_at)
{
    iwpp_ocl *s = j->s;
    const cl_uint B = (cl_uint)j->L * SCAN_ITEMS, nb = (m + B - 1) / B;
    cl_int err = KARGS(s, j->block, KA(data), KA(doff), KA(m), KA(j->sums), KA(soff),
                       KLOCAL(B * sizeof(cl_uint)), KLOCAL(j->L * sizeof(cl_uint)));
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, j->block, (size_t)nb * j->L, j->L);
    if (err != CL_SUCCESS || nb == 1) {
        *total_at = soff;
        return err;
    }
    if ((err = scan(j, j->sums, soff, nb, soff + nb, total_at)) != CL_SUCCESS) return err;
    err = KARGS(s, j->add, KA(data), KA(doff), KA(m), KA(j->sums), KA(soff), KA(B));
    return err == CL_SUCCESS ? iwpp_ocl_run1d(s, j->add, m, flat_group(s)) : err;
}

/* Words of j->sums that scan() uses for @p m values. */
static size_t scan_words(size_t m, size_t B)
{
    size_t words = 0;
    do {
        m = (m + B - 1) / B;
        words += m;
    } while (m > 1);
    return words;
}

static iwpp_status lab_kernels(iwpp_context *ctx, iwpp_type in_type, iwpp_type out_type, lab_job *j)
{
    const char *write = out_type == IWPP_U16 ? "lab_write_u16" : "lab_write_u32";
    iwpp_status st;
    if ((st = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_LABEL, in_type, "lab_init", &j->init)) ||
        (st = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_LABEL, in_type, "lab_merge", &j->merge)) ||
        (st = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_LABEL, in_type, "lab_flatten", &j->flatten)) ||
        (st = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_LABEL, in_type, "scan_block", &j->block)) ||
        (st = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_LABEL, in_type, "scan_add", &j->add)) ||
        (st = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_LABEL, in_type, write, &j->write)))
        return st;
    return IWPP_OK;
}

/* Union-find up to the flattened roots and their flags (in j->rank). */
static cl_int lab_roots(lab_job *j, const iwpp_buf *in, int noffs, iwpp_label_mode mode)
{
    iwpp_ocl *s = j->s;
    cl_mem mi = (cl_mem)in->ptr;
    const cl_int w = (cl_int)in->w, h = (cl_int)in->h, d = (cl_int)in->d, no = noffs;
    const cl_int equal = mode == IWPP_LABEL_EQUAL;
    const size_t lg = flat_group(s);
    cl_int err = KARGS(s, j->init, KA(mi), KA(j->parent), KA(j->n));
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, j->init, j->n, lg);
    if (err == CL_SUCCESS)
        err = KARGS(s, j->merge, KA(mi), KA(j->parent), KA(w), KA(h), KA(d), KA(j->offs), KA(no),
                    KA(equal), KA(j->n));
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, j->merge, j->n, lg);
    if (err == CL_SUCCESS) err = KARGS(s, j->flatten, KA(j->parent), KA(j->rank), KA(j->n));
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, j->flatten, j->n, lg);
    return err;
}

static void lab_free(lab_job *j)
{
    iwpp_ocl_release(j->s, j->parent);
    iwpp_ocl_release(j->s, j->rank);
    iwpp_ocl_release(j->s, j->sums);
    iwpp_ocl_release(j->s, j->offs);
}

iwpp_status iwpp_ocl_label(iwpp_context *ctx, const iwpp_buf *in, int connectivity,
                           iwpp_label_mode mode, iwpp_buf *labels, int64_t *count)
{
    iwpp_ocl *s = iwpp_ocl_state(ctx);
    const int64_t n64 = iwpp_buf_count(in);
    if (n64 > 0xfffffffeLL)
        return iwpp_set_error(ctx, IWPP_EUNSUPPORTED,
                              "OpenCL labeling handles at most 2^32-2 pixels per call (32-bit "
                              "indices), but the image has %lld; use the CPU backend",
                              (long long)n64);
    iwpp_ocl_timer_start(s);
    lab_job j;
    memset(&j, 0, sizeof j);
    j.s = s;
    j.n = (cl_uint)n64;
    iwpp_status st = lab_kernels(ctx, in->type, labels->type, &j);
    if (st) return st;
    j.L = iwpp_ocl_group_size(s, j.block, 256);
    int noffs = 0;
    if ((st = iwpp_ocl_offsets(ctx, connectivity, in, &j.offs, &noffs)) ||
        (st = iwpp_ocl_alloc(ctx, (size_t)j.n * 4, "the labeling parents", &j.parent)) ||
        (st = iwpp_ocl_alloc(ctx, (size_t)j.n * 4, "the labeling ranks", &j.rank)) ||
        (st = iwpp_ocl_alloc(ctx, scan_words(j.n, j.L * SCAN_ITEMS) * 4, "the scan sums", &j.sums)))
        goto done;
    cl_uint total_at = 0, total = 0;
    cl_int err = lab_roots(&j, in, noffs, mode);
    if (err == CL_SUCCESS) err = scan(&j, j.rank, 0, j.n, 0, &total_at);
    if (err == CL_SUCCESS)
        err = s->api->clEnqueueReadBuffer(s->queue, j.sums, CL_TRUE, (size_t)total_at * 4, 4, &total,
                                          0, NULL, NULL);
    if (err != CL_SUCCESS) {
        st = iwpp_ocl_fail(ctx, err, "the labeling kernels");
        goto done;
    }
    if (labels->type == IWPP_U16 && total > 65535) {
        st = iwpp_labels_overflow(ctx, total);
        goto done;
    }
    cl_mem ml = (cl_mem)labels->ptr;
    err = KARGS(s, j.write, KA(j.parent), KA(j.rank), KA(ml), KA(j.n));
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, j.write, j.n, flat_group(s));
    if (err == CL_SUCCESS) err = iwpp_ocl_finish(s);
    if (err != CL_SUCCESS) {
        st = iwpp_ocl_fail(ctx, err, "writing the labels");
        goto done;
    }
    *count = total;
    snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "%s", "ocl-union-find");
    ctx->stats.compute_ms = iwpp_ocl_timer_ms(s);
done:
    lab_free(&j);
    return st;
}

/* ------------------------------------------------------------------------ */
/* watershed                                                                */

typedef struct ws_job {
    iwpp_ocl *s;
    cl_kernel seed, init, list, round, write;
    cl_mem in, g, lev, cls, dist, lab, la, lb, mark, cnt, offs;
    cl_int w, h, d, noffs;
    cl_uint n;
    int64_t rounds, visited;
} ws_job;

static void ws_free(ws_job *j)
{
    cl_mem *m[] = {&j->g, &j->lev, &j->cls, &j->dist, &j->lab, &j->la, &j->lb, &j->mark, &j->cnt, &j->offs};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; ++i) {
        iwpp_ocl_release(j->s, *m[i]);
        *m[i] = NULL;
    }
}

static iwpp_status ws_kernels(iwpp_context *ctx, iwpp_type in_type, int wide, ws_job *j)
{
    iwpp_status st;
    if ((st = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_LABEL, in_type, wide ? "ws_seed_u32" : "ws_seed_u16",
                              &j->seed)) ||
        (st = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_LABEL, in_type, wide ? "ws_init_u32" : "ws_init_u16",
                              &j->init)) ||
        (st = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_LABEL, in_type, "ws_list_markers", &j->list)) ||
        (st = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_LABEL, in_type, "ws_round", &j->round)) ||
        (st = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_LABEL, in_type, wide ? "ws_write_u32" : "ws_write_u16",
                              &j->write)))
        return st;
    return IWPP_OK;
}

/* Phase 1: levels L = reconstruction by erosion of m over g (watershed.cl, ws_seed_*), in j->lev. */
static iwpp_status ws_levels(iwpp_context *ctx, ws_job *j, const iwpp_buf *in, const iwpp_buf *markers,
                             const iwpp_buf *mask, int connectivity)
{
    iwpp_ocl *s = j->s;
    const size_t bytes = (size_t)j->n * iwpp_type_size(in->type);
    iwpp_status st;
    if ((st = iwpp_ocl_alloc(ctx, bytes, "the watershed's reconstruction mask", &j->g)) ||
        (st = iwpp_ocl_alloc(ctx, bytes, "the watershed levels", &j->lev)) ||
        (st = iwpp_ocl_alloc(ctx, j->n, "the watershed pixel classes", &j->cls)))
        return st;
    cl_mem mm = (cl_mem)markers->ptr, mk = mask ? (cl_mem)mask->ptr : NULL;
    const cl_int has_mask = mask != NULL;
    cl_int err = KARGS(s, j->seed, KA(j->in), KA(mm), KA(mk), KA(has_mask), KA(j->g), KA(j->lev),
                       KA(j->cls), KA(j->n));
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, j->seed, j->n, flat_group(s));
    if (err != CL_SUCCESS) return iwpp_ocl_fail(ctx, err, "the watershed's level seeds");
    iwpp_buf g = {in->type, in->w, in->h, in->d, j->g, NULL, 0};
    iwpp_buf lev = {in->type, in->w, in->h, in->d, j->lev, NULL, 0};
    st = iwpp_ocl_reconstruct(ctx, &lev, &g, connectivity, IWPP_BY_EROSION);
    iwpp_ocl_release(s, j->g); /* not needed any more: room for the next phases */
    j->g = NULL;
    return st;
}

/* One relaxation phase (0: plateau distances, 1: labels) from the markers until no list is left. */
static cl_int ws_phase(ws_job *j, cl_int phase)
{
    iwpp_ocl *s = j->s;
    const cl_uint zero = 0, ones = 0xffffffffu;
    cl_int err = s->api->clEnqueueFillBuffer(s->queue, j->cnt, &zero, 4, 0, 6 * 4, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = s->api->clEnqueueFillBuffer(s->queue, j->mark, &ones, 4, 0, (size_t)j->n * 4, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = KARGS(s, j->list, KA(j->cls), KA(j->w), KA(j->h), KA(j->d), KA(j->offs), KA(j->noffs),
                    KA(j->la), KA(j->cnt), KA(j->n));
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, j->list, j->n, flat_group(s));
    cl_uint in_n = 0, round = 0;
    if (err == CL_SUCCESS)
        err = s->api->clEnqueueReadBuffer(s->queue, j->cnt, CL_TRUE, 0, 4, &in_n, 0, NULL, NULL);
    /* WS_BATCH rounds between reads of the counts; a round with an empty list does nothing */
    enum { WS_BATCH = 8 };
    const size_t lr = s->is_gpu ? 256 : 64;
    const size_t cap = (size_t)(s->compute_units > 0 ? s->compute_units : 1) * (s->is_gpu ? 2048 : 256);
    cl_uint c[6] = {0, 0, 0, 0, 0, 0};
    while (err == CL_SUCCESS && in_n > 0) {
        size_t gsz = in_n < 1024 ? 1024 : (size_t)in_n;
        if (gsz > cap) gsz = cap;
        for (int r = 0; r < WS_BATCH && err == CL_SUCCESS; ++r, ++round) {
            err = KARGS(s, j->round, KA(phase), KA(j->in), KA(j->lev), KA(j->cls), KA(j->dist), KA(j->lab),
                        KA(j->w), KA(j->h), KA(j->d), KA(j->offs), KA(j->noffs), KA(j->la), KA(j->lb),
                        KA(j->cnt), KA(j->mark), KA(round));
            if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, j->round, gsz, lr);
            cl_mem t = j->la;
            j->la = j->lb;
            j->lb = t;
        }
        if (err == CL_SUCCESS)
            err = s->api->clEnqueueReadBuffer(s->queue, j->cnt, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL);
        in_n = c[round % 3];
    }
    j->rounds += c[5];
    j->visited += (int64_t)c[3] + ((int64_t)c[4] << 32);
    return err;
}

/* Phases 2 and 3 and the labels (with lines if asked). */
static cl_int ws_flood(ws_job *j, const iwpp_buf *markers, int lines, iwpp_buf *labels)
{
    iwpp_ocl *s = j->s;
    cl_mem mm = (cl_mem)markers->ptr, ml = (cl_mem)labels->ptr;
    const cl_int ln = lines != 0;
    cl_int err = KARGS(s, j->init, KA(mm), KA(j->cls), KA(j->dist), KA(j->lab), KA(j->n));
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, j->init, j->n, flat_group(s));
    if (err == CL_SUCCESS) err = ws_phase(j, 0);
    if (err == CL_SUCCESS) err = ws_phase(j, 1);
    if (err == CL_SUCCESS)
        err = KARGS(s, j->write, KA(j->lev), KA(j->cls), KA(j->dist), KA(j->lab), KA(ln), KA(j->w),
                    KA(j->h), KA(j->d), KA(j->offs), KA(j->noffs), KA(ml), KA(j->n));
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, j->write, j->n, flat_group(s));
    if (err == CL_SUCCESS) err = iwpp_ocl_finish(s);
    return err;
}

iwpp_status iwpp_ocl_watershed(iwpp_context *ctx, const iwpp_buf *in, const iwpp_buf *markers,
                               const iwpp_buf *mask, int connectivity, int lines, iwpp_buf *labels)
{
    iwpp_ocl *s = iwpp_ocl_state(ctx);
    const int64_t n64 = iwpp_buf_count(in);
    if (n64 > 0x7fffffffLL) /* the reconstruction's limit */
        return iwpp_set_error(ctx, IWPP_EUNSUPPORTED,
                              "the OpenCL watershed handles at most 2^31-1 pixels per call, but the "
                              "image has %lld; use the CPU backend",
                              (long long)n64);
    iwpp_ocl_timer_start(s);
    ws_job j;
    memset(&j, 0, sizeof j);
    j.s = s;
    j.in = (cl_mem)in->ptr;
    j.n = (cl_uint)n64;
    j.w = (cl_int)in->w;
    j.h = (cl_int)in->h;
    j.d = (cl_int)in->d;
    int noffs = 0;
    iwpp_status st;
    if ((st = ws_kernels(ctx, in->type, labels->type == IWPP_U32, &j)) ||
        (st = ws_levels(ctx, &j, in, markers, mask, connectivity)) ||
        (st = iwpp_ocl_offsets(ctx, connectivity, in, &j.offs, &noffs)) ||
        (st = iwpp_ocl_alloc(ctx, (size_t)j.n * 4, "the watershed distances", &j.dist)) ||
        (st = iwpp_ocl_alloc(ctx, (size_t)j.n * 4, "the watershed labels", &j.lab)) ||
        (st = iwpp_ocl_alloc(ctx, (size_t)j.n * 4, "the watershed list", &j.la)) ||
        (st = iwpp_ocl_alloc(ctx, (size_t)j.n * 4, "the watershed list", &j.lb)) ||
        (st = iwpp_ocl_alloc(ctx, (size_t)j.n * 4, "the watershed marks", &j.mark)) ||
        (st = iwpp_ocl_alloc(ctx, 6 * 4, "the watershed counters", &j.cnt)))
        goto done;
    j.noffs = noffs;
    cl_int err = ws_flood(&j, markers, lines, labels);
    if (err != CL_SUCCESS) {
        st = iwpp_ocl_fail(ctx, err, "the watershed kernels");
        goto done;
    }
    snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "%s", "ocl-watershed/list");
    ctx->stats.rounds = j.rounds;
    ctx->stats.pixels_visited = j.visited;
    ctx->stats.overflow_reruns = 0;
    ctx->stats.compute_ms = iwpp_ocl_timer_ms(s);
done:
    ws_free(&j);
    return st;
}
