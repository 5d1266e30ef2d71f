/*
 * reconstruct.c - morphological reconstruction on OpenCL. Kernels: reconstruct.cl.
 *
 * IWPP_ALGO_QUEUE (FH_GPU): 1 or 2 raster and anti-raster scans as
 * parallel segmented scans of clamp functions, then the queue phase with the
 * multi-level queue (private queues moved into the work-group queue with local
 * atomics: mlq_push), re-run from the partial result whenever a queue
 * overflowed.
 * IWPP_ALGO_MEGAPIXEL (IWPP-MP): megapixel.c.
 * Shape: rec_plan_make chooses every size from the device and the image (and names the path in
 * stats.variant); short runners launch the key conversions, the scans and the queue phase.
 *
 * AUTO rule: the queue algorithm, always. Measured on an NVIDIA H100 (OpenCL,
 * device-resident, U8, median of 4): tissue 8192^2 8-conn h=40: queue 12.0 ms,
 * megapixel 172 ms; random mask with 0.1% seeds 8192^2: queue 63.7 / 100 ms
 * (8-/4-conn), megapixel 461 / 444 ms; spiral maze 1024^2 4-conn: queue
 * 1431 ms, megapixel 1845 ms. On PoCL (CPU) the queue also won on every input
 * (256^2 tissue 39 vs 55 ms, random 95 vs 174 ms, maze 128^2 17 vs 94 ms).
 * Megapixel stays selectable for benchmarks.
 */
#include "ocl.h"
#include "neighborhood.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCAN_SEG_X 16 /* scan segment length along x (work-items of a row share cache lines) */
#define SCAN_SEG 32   /* scan segment length along y and z */
/* Raster + anti-raster iterations before the queue: 2 with 4/6-connectivity, 1 with 8/18/26.
 * H100, NVIDIA OpenCL, 8192^2 u8 tissue (bench rec-dil), comp_ms for 1 / 2 / 3 iterations:
 * 4-conn 15.4 / 10.3 / 11.2, 8-conn 11.3 / 14.0 / 18.6 (CUDA: 9.0 and 9.3 ms). */
#define SCAN_ITERATIONS_FACE 2   /* 4- and 6-connected (face neighbours only) */
#define SCAN_ITERATIONS_FULLNB 1 /* 8-, 18- and 26-connected */
/* Imbalance (as CUDA's, cuda/README.md): a group left behind by the others leaves after this
 * many rounds (ocl.queue_leave) and the front is spread again after a scan iteration; after
 * QUEUE_HOST_LEAVES such passes (ocl.queue_host) the CPU finishes from the partial result. */
#define QUEUE_LEAVE_ROUNDS 2048
#define QUEUE_HOST_LEAVES 2

/* What the plan chose for one call of the queue algorithm. */
typedef struct rec_plan {
    iwpp_ocl_mlq q;           /* the work-group queues (mlqueue.c) */
    size_t Ls;                /* seed work-group size */
    cl_uint seed_cap;         /* seed list capacity */
    int noffs, naxes, scan_its, connectivity;
    long long host_leaves;    /* passes with early leaves before the host finishes (0: never) */
} rec_plan;

typedef struct rec_job {
    iwpp_ocl *s;
    cl_mem J, offs, scan_offs[6], seeds, gq, counters, gstats, F;
    int nscan[6];
    int host_finished; /* the long chains ran on the host */
} rec_job;

enum { K_TO, K_FROM, K_SSEG, K_CARRY, K_APPLY, K_SEED, K_QUEUE, K_COUNT };
static const char *const rec_kernel_names[K_COUNT] = {"to_keys",        "from_keys", "rec_scan_seg", "rec_scan_carry",
                                                      "rec_scan_apply", "rec_seed",  "rec_queue"};

/* (J, seeds, gq, counters, gstats and F are the context's work buffers: kept for the next call) */
static void job_free(rec_job *j)
{
    iwpp_ocl_release(j->s, j->offs);
    for (int i = 0; i < 6; ++i) iwpp_ocl_release(j->s, j->scan_offs[i]);
}

/* Offsets of the previous slice along @p axis in direction @p dir, without the
 * in-line predecessor (the scan kernel carries that one in a register). */
static iwpp_status scan_offsets(iwpp_context *ctx, int conn, const iwpp_buf *like, int axis,
                                int dir, cl_mem *out, int *count)
{
    iwpp_ocl *s = iwpp_ocl_state(ctx);
    int off[26][3];
    int n = iwpp_neighbors(conn, like->d == 1, off);
    cl_int v[26 * 4];
    int m = 0;
    for (int i = 0; i < n; ++i) {
        if (off[i][axis] != -dir) continue;
        int others = 0;
        for (int a = 0; a < 3; ++a)
            if (a != axis && off[i][a] != 0) others = 1;
        if (!others) continue;
        v[4 * m + 0] = off[i][0];
        v[4 * m + 1] = off[i][1];
        v[4 * m + 2] = off[i][2];
        v[4 * m + 3] = (cl_int)(off[i][0] + like->w * (off[i][1] + like->h * off[i][2]));
        ++m;
    }
    *count = m;
    cl_int err = CL_SUCCESS;
    *out = s->api->clCreateBuffer(s->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                  sizeof(cl_int) * 4 * (size_t)(m > 0 ? m : 1), v, &err);
    if (err != CL_SUCCESS) return iwpp_ocl_fail(ctx, err, "creating a scan neighbour table");
    return IWPP_OK;
}

/* AUTO rule (see the comment at the top of the file). */
static int use_megapixel(iwpp_context *ctx, const iwpp_buf *marker)
{
    if (ctx->algorithm == IWPP_ALGO_MEGAPIXEL) return 1;
    (void)marker; /* AUTO: the queue algorithm on every input (see the top of the file) */
    return 0;
}

/* Every size of one call from the device's limits, the image and the context's settings. */
static iwpp_status rec_plan_make(iwpp_context *ctx, const iwpp_buf *marker, const cl_kernel k[K_COUNT],
                                 int noffs, rec_plan *p)
{
    iwpp_ocl *s = iwpp_ocl_state(ctx);
    const uint64_t n = (uint64_t)iwpp_buf_count(marker);
    memset(p, 0, sizeof *p);
    p->noffs = noffs;
    p->naxes = marker->d > 1 ? 3 : 2;
    p->Ls = iwpp_ocl_group_size(s, k[K_SEED], s->is_gpu ? 256 : 64);
    iwpp_status rs = iwpp_ocl_mlq_plan(ctx, k[K_QUEUE], noffs, n, "reconstruction", &p->q);
    if (rs) return rs;
    /* a tile worker's queues and seed list stay within its reserve of the budget (native/tiles.c,
       as CUDA's): smaller queues cost passes after an overflow, not the result; below 256 entries
       a group, fewer groups (NVIDIA's 528 groups at 256 entries took 1.6 MB, where a tile worker
       of a 6 MB budget shared by three has 0.2 MB; a region that small needs few groups) */
    while (ctx->queue_bytes && ctx->queue_capacity <= 0 && (uint64_t)p->q.cap * p->q.G * 3 * 4 > ctx->queue_bytes) {
        if (p->q.cap > 256)
            p->q.cap /= 2;
        else if (p->q.G > 2) /* (two at least: the imbalance rule compares a group with the others) */
            p->q.G = (p->q.G + 1) / 2;
        else
            break;
    }
    p->seed_cap = (cl_uint)((uint64_t)p->q.cap * p->q.G);
    /* raster + anti-raster iterations (tuning key ocl.rec_scans, 0..64) */
    p->scan_its = noffs == 2 * p->naxes ? SCAN_ITERATIONS_FACE : SCAN_ITERATIONS_FULLNB;
    p->scan_its = (int)iwpp_tune_int(ctx, IWPP_TUNE_OCL_REC_SCANS, p->scan_its, 0, 64);
    const char *lv = iwpp_tune(ctx, IWPP_TUNE_OCL_QUEUE_LEAVE), *hv = iwpp_tune(ctx, IWPP_TUNE_OCL_QUEUE_HOST);
    p->q.leave_rounds = lv && !strcmp(lv, "off")
                            ? 0
                            : (cl_uint)iwpp_tune_int(ctx, IWPP_TUNE_OCL_QUEUE_LEAVE, QUEUE_LEAVE_ROUNDS, 0, 1 << 30);
    p->host_leaves = hv && !strcmp(hv, "off") ? 0 : iwpp_tune_int(ctx, IWPP_TUNE_OCL_QUEUE_HOST, QUEUE_HOST_LEAVES, 0, 1 << 30);
    return IWPP_OK;
}

/* Scan scratch: the segment functions of the widest scan pass. */
static size_t scan_table_bytes(const iwpp_buf *marker, int naxes)
{
    const size_t n = (size_t)iwpp_buf_count(marker);
    size_t fmax = 0;
    for (int a = 0; a < naxes; ++a) {
        size_t len = a == 0 ? (size_t)marker->w : (a == 1 ? (size_t)marker->h : (size_t)marker->d);
        size_t B = a == 0 ? SCAN_SEG_X : SCAN_SEG;
        size_t f = n / len * ((len + B - 1) / B);
        if (f > fmax) fmax = f;
    }
    return fmax * 8;
}

static iwpp_status rec_alloc(iwpp_context *ctx, const rec_plan *p, const iwpp_buf *marker, int connectivity,
                             rec_job *j)
{
    const size_t n = (size_t)iwpp_buf_count(marker);
    iwpp_status rs;
    for (int a = 0; a < p->naxes; ++a)
        for (int di = 0; di < 2; ++di)
            if ((rs = scan_offsets(ctx, connectivity, marker, a, di ? -1 : 1, &j->scan_offs[2 * a + di],
                                   &j->nscan[2 * a + di])))
                return rs;
    /* work buffers kept in the context between calls (iwpp_ocl_scratch_set), as the EDT's: a call
       no longer creates and releases them (opencl/README.md, "Reconstruction") */
    const size_t bytes[6] = {n * 4, (size_t)p->seed_cap * 4, (size_t)p->q.cap * 2 * p->q.G * 4, (4 + p->q.G) * 4,
                             2 * p->q.G * 4, scan_table_bytes(marker, p->naxes)};
    static const char *const what[6] = {"the reconstruction working image", "the seed queue", "the per-group queues",
                                        "the queue counters", "the queue statistics", "the scan segment table"};
    cl_mem m[6];
    if ((rs = iwpp_ocl_scratch_set(ctx, 6, bytes, what, m)) != IWPP_OK) return rs;
    j->J = m[0], j->seeds = m[1], j->gq = m[2], j->counters = m[3], j->gstats = m[4], j->F = m[5];
    return IWPP_OK;
}

/* One scan pass's geometry: along @p axis in direction @p dir. */
typedef struct scan_pass {
    cl_int axis, dir, no, len, B, segmajor;
    cl_uint nlines, nseg;
    cl_mem offs;
} scan_pass;

/* The arguments every reconstruction kernel starts with: J, mask, inv, w, h, d. */
static void ka_image(iwpp_kargs *a, const rec_job *j, const iwpp_buf *m, cl_mem mask, cl_uint inv)
{
    ka_mem(a, j->J);
    ka_mem(a, mask);
    ka_uint(a, inv);
    ka_int(a, (cl_int)m->w);
    ka_int(a, (cl_int)m->h);
    ka_int(a, (cl_int)m->d);
}

static cl_int scan_args(iwpp_ocl *s, cl_kernel k, const rec_job *j, const iwpp_buf *m, cl_mem mask, cl_uint inv,
                        const scan_pass *q)
{
    iwpp_kargs a = iwpp_kargs_of(s, k);
    ka_image(&a, j, m, mask, inv);
    ka_int(&a, q->axis);
    ka_int(&a, q->dir);
    ka_mem(&a, q->offs);
    ka_int(&a, q->no);
    ka_uint(&a, q->nlines);
    ka_int(&a, q->len);
    ka_int(&a, q->B);
    ka_uint(&a, q->nseg);
    ka_int(&a, q->segmajor);
    ka_mem(&a, j->F);
    return a.err;
}

/* One pass: segment functions, carries along the segments, apply (reconstruct.cl). */
static cl_int run_scan_pass(iwpp_ocl *s, const cl_kernel k[K_COUNT], const rec_job *j, const iwpp_buf *m,
                            cl_mem mask, cl_uint inv, int a, int di)
{
    const size_t w = (size_t)m->w, h = (size_t)m->h, d = (size_t)m->d;
    scan_pass q;
    q.axis = a, q.dir = di ? -1 : 1, q.no = j->nscan[2 * a + di], q.offs = j->scan_offs[2 * a + di];
    q.nlines = (cl_uint)(a == 0 ? h * d : (a == 1 ? w * d : w * h));
    q.len = (cl_int)(a == 0 ? w : (a == 1 ? h : d));
    q.B = a == 0 ? SCAN_SEG_X : SCAN_SEG;
    q.nseg = (cl_uint)((q.len + q.B - 1) / q.B);
    q.segmajor = a == 0;
    const size_t items = (size_t)q.nlines * q.nseg, lg = s->is_gpu ? 128 : 0;
    cl_int err = scan_args(s, k[K_SSEG], j, m, mask, inv, &q);
    if (err == CL_SUCCESS) err = scan_args(s, k[K_APPLY], j, m, mask, inv, &q);
    iwpp_kargs c = iwpp_kargs_of(s, k[K_CARRY]);
    ka_uint(&c, q.nlines);
    ka_uint(&c, q.nseg);
    ka_mem(&c, j->F);
    if (err == CL_SUCCESS) err = c.err;
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k[K_SSEG], items, lg);
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k[K_CARRY], q.nlines, lg);
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k[K_APPLY], items, lg);
    return err;
}

/* Raster then anti-raster scans, one pass per axis, scan_its times. */
static cl_int run_scans(iwpp_ocl *s, const rec_plan *p, const cl_kernel k[K_COUNT], const rec_job *j,
                        const iwpp_buf *m, cl_mem mask, cl_uint inv)
{
    cl_int err = CL_SUCCESS;
    for (int it = 0; it < p->scan_its && err == CL_SUCCESS; ++it)
        for (int di = 0; di < 2 && err == CL_SUCCESS; ++di)
            for (int a = 0; a < p->naxes && err == CL_SUCCESS; ++a) err = run_scan_pass(s, k, j, m, mask, inv, a, di);
    return err;
}

static cl_int seed_args(iwpp_ocl *s, cl_kernel k, const rec_plan *p, const rec_job *j, const iwpp_buf *m,
                        cl_mem mask, cl_uint inv)
{
    iwpp_kargs a = iwpp_kargs_of(s, k);
    ka_image(&a, j, m, mask, inv);
    ka_mem(&a, j->offs);
    ka_int(&a, p->noffs);
    ka_uint(&a, (cl_uint)iwpp_buf_count(m));
    ka_mem(&a, j->seeds);
    ka_uint(&a, p->seed_cap);
    ka_mem(&a, j->counters);
    ka_local(&a, (p->Ls + 1) * sizeof(cl_uint));
    return a.err;
}

static cl_int queue_args(iwpp_ocl *s, cl_kernel k, const rec_plan *p, const rec_job *j, const iwpp_buf *m,
                         cl_mem mask, cl_uint inv, cl_uint nseeds)
{
    iwpp_kargs a = iwpp_kargs_of(s, k);
    ka_image(&a, j, m, mask, inv);
    ka_mem(&a, j->offs);
    ka_int(&a, p->noffs);
    iwpp_ocl_mlq_args(&a, &p->q, j->seeds, nseeds, j->gq, j->counters, j->gstats);
    return a.err;
}

/* The seeds of one round of the queue phase; *nseeds = 0 when nothing moves. */
static cl_int seed_round(iwpp_ocl *s, const rec_plan *p, const cl_kernel k[K_COUNT], const rec_job *j,
                         const iwpp_buf *m, cl_mem mask, cl_uint inv, cl_uint *host, cl_uint *nseeds)
{
    const cl_uint zero = 0;
    const cl_uint n = (cl_uint)iwpp_buf_count(m);
    cl_int err = s->api->clEnqueueFillBuffer(s->queue, j->counters, &zero, sizeof zero, 0, (4 + p->q.G) * 4, 0, NULL,
                                             NULL);
    if (err == CL_SUCCESS) err = seed_args(s, k[K_SEED], p, j, m, mask, inv);
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k[K_SEED], n, p->Ls);
    if (err == CL_SUCCESS)
        err = s->api->clEnqueueReadBuffer(s->queue, j->counters, CL_TRUE, 0, 2 * sizeof(cl_uint), host, 0, NULL, NULL);
    *nseeds = err == CL_SUCCESS ? (host[0] < p->seed_cap ? host[0] : p->seed_cap) : 0;
    return err;
}

/* Long chains are a CPU's work (as CUDA's host_finish, cuda/reconstruct.cu): the marker from
 * the working keys, the CPU backend's finish through the host (iwpp_finish_on_host, native/
 * dispatch.c), the result back into keys. *done = 0 where the host lacks the memory. */
static iwpp_status host_finish(iwpp_context *ctx, const rec_plan *p, const cl_kernel k[K_COUNT], const rec_job *j,
                               const iwpp_buf *m, const iwpp_buf *mask, cl_uint inv, int *done)
{
    iwpp_ocl *s = iwpp_ocl_state(ctx);
    const cl_uint n = (cl_uint)iwpp_buf_count(m);
    *done = 0;
    cl_int err = iwpp_ocl_keys(s, k[K_FROM], (cl_mem)m->ptr, j->J, inv, n);
    if (err != CL_SUCCESS) return iwpp_ocl_fail(ctx, err, "the reconstruction's partial result");
    iwpp_status rs = iwpp_finish_on_host(ctx, (iwpp_buf *)m, mask, p->connectivity,
                                         inv ? IWPP_BY_EROSION : IWPP_BY_DILATION, done);
    if (rs != IWPP_OK || !*done) return rs; /* not done: the keys are still the partial result */
    err = iwpp_ocl_keys(s, k[K_TO], j->J, (cl_mem)m->ptr, inv, n);
    return err == CL_SUCCESS ? IWPP_OK : iwpp_ocl_fail(ctx, err, "the reconstruction's result from the host");
}

/* The queue phase, re-run from the partial result after an overflow or an early leave (then
 * after one scan iteration, or finished on the host); adds to the stats. */
static iwpp_status run_queue(iwpp_context *ctx, const rec_plan *p, const cl_kernel k[K_COUNT], rec_job *j,
                             const iwpp_buf *m, const iwpp_buf *mask_buf, cl_uint inv)
{
    iwpp_ocl *s = iwpp_ocl_state(ctx);
    cl_mem mask = (cl_mem)mask_buf->ptr;
    cl_uint *host = malloc((2 + 2 * p->q.G) * sizeof(cl_uint));
    if (!host) return iwpp_set_error(ctx, IWPP_ENOMEM, "OpenCL reconstruction: out of host memory");
    cl_int err = CL_SUCCESS;
    long long leaves = 0, host_leaves = p->host_leaves;
    iwpp_status rs = IWPP_OK;
    for (;;) {
        cl_uint nseeds = 0;
        int overflow = 0, left = 0;
        if ((err = seed_round(s, p, k, j, m, mask, inv, host, &nseeds)) != CL_SUCCESS || nseeds == 0) break;
        err = queue_args(s, k[K_QUEUE], p, j, m, mask, inv, nseeds);
        if (err == CL_SUCCESS)
            err = iwpp_ocl_mlq_run(ctx, k[K_QUEUE], &p->q, j->counters, j->gstats, host, &overflow, &left);
        if (err != CL_SUCCESS || !overflow) break;
        ctx->stats.overflow_reruns++;
        if (!left) continue;
        if (host_leaves > 0 && ++leaves >= host_leaves) {
            int done = 0;
            if ((rs = host_finish(ctx, p, k, j, m, mask_buf, inv, &done)) != IWPP_OK || done) {
                j->host_finished = done;
                break;
            }
            host_leaves = 0; /* no room on the host: the device finishes, without asking again */
        }
        /* one scan iteration carries a flood along every line at once; the next pass collects
           the front and spreads it over every group */
        for (int di = 0; di < 2 && err == CL_SUCCESS; ++di)
            for (int a = 0; a < p->naxes && err == CL_SUCCESS; ++a) err = run_scan_pass(s, k, j, m, mask, inv, a, di);
        if (err != CL_SUCCESS) break;
    }
    free(host);
    if (rs != IWPP_OK) return rs;
    return err == CL_SUCCESS ? IWPP_OK : iwpp_ocl_fail(ctx, err, "the reconstruction queue phase");
}

static iwpp_status ocl_reconstruct(iwpp_context *ctx, iwpp_buf *marker, const iwpp_buf *mask, int connectivity,
                                   iwpp_morph_mode mode);

iwpp_status iwpp_ocl_reconstruct(iwpp_context *ctx, iwpp_buf *marker, const iwpp_buf *mask,
                                 int connectivity, iwpp_morph_mode mode)
{
    iwpp_status st = ocl_reconstruct(ctx, marker, mask, connectivity, mode);
    /* F32: every zero of the result is +0, as on the CPU (x + 0.0f turns -0 into +0 and leaves
       every other value as it is); which zero a pixel keeps would otherwise depend on the order
       of updates */
    if (st == IWPP_OK && marker->type == IWPP_F32)
        st = iwpp_ocl_pointwise(ctx, IWPP_PW_ADD_SCALAR, marker, marker, NULL, 0.0);
    return st;
}

/* FH_GPU: keys, scans, queue phase, values. */
static iwpp_status fh_run(iwpp_context *ctx, const rec_plan *p, const cl_kernel k[K_COUNT], rec_job *j,
                          iwpp_buf *marker, const iwpp_buf *mask, cl_uint inv)
{
    iwpp_ocl *s = iwpp_ocl_state(ctx);
    const cl_uint n = (cl_uint)iwpp_buf_count(marker);
    cl_mem mk = (cl_mem)marker->ptr, ms = (cl_mem)mask->ptr;
    cl_int err = iwpp_ocl_keys(s, k[K_TO], j->J, mk, inv, n);
    if (err == CL_SUCCESS) err = run_scans(s, p, k, j, marker, ms, inv);
    if (err != CL_SUCCESS) return iwpp_ocl_fail(ctx, err, "the reconstruction scans");
    iwpp_status rs = run_queue(ctx, p, k, j, marker, mask, inv);
    if (rs) return rs;
    err = iwpp_ocl_keys(s, k[K_FROM], mk, j->J, inv, n);
    if (err == CL_SUCCESS) err = iwpp_ocl_finish(s);
    return err == CL_SUCCESS ? IWPP_OK : iwpp_ocl_fail(ctx, err, "converting the reconstruction result");
}

static iwpp_status ocl_reconstruct(iwpp_context *ctx, iwpp_buf *marker, const iwpp_buf *mask, int connectivity,
                                   iwpp_morph_mode mode)
{
    const int64_t n64 = iwpp_buf_count(marker);
    if (n64 > 0x7fffffffLL)
        return iwpp_set_error(ctx, IWPP_EUNSUPPORTED,
                              "OpenCL reconstruction handles at most 2^31-1 pixels per call, but "
                              "the image has %lld; use the CPU backend (tiled) for larger images",
                              (long long)n64);
    iwpp_ocl_timer_start(iwpp_ocl_state(ctx));
    if (use_megapixel(ctx, marker)) return iwpp_ocl_megapixel(ctx, marker, mask, connectivity, mode);
    cl_kernel k[K_COUNT];
    iwpp_status rs;
    for (int i = 0; i < K_COUNT; ++i)
        if ((rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_MAIN, marker->type, rec_kernel_names[i], &k[i]))) return rs;
    rec_job j;
    memset(&j, 0, sizeof j);
    j.s = iwpp_ocl_state(ctx);
    int noffs = 0;
    rec_plan p;
    ctx->stats.pixels_visited = ctx->stats.rounds = ctx->stats.overflow_reruns = 0; /* run_queue adds */
    if (!(rs = iwpp_ocl_offsets(ctx, connectivity, marker, &j.offs, &noffs)) &&
        !(rs = rec_plan_make(ctx, marker, k, noffs, &p)) && !(rs = rec_alloc(ctx, &p, marker, connectivity, &j))) {
        p.connectivity = connectivity;
        rs = fh_run(ctx, &p, k, &j, marker, mask, mode == IWPP_BY_EROSION ? 0xffffffffu : 0u);
    }
    job_free(&j);
    if (rs) return rs;
    snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "ocl-fh/%s%s", p.q.vname,
             j.host_finished ? ", long chains on the host" : "");
    ctx->stats.compute_ms = iwpp_ocl_timer_ms(j.s);
    return IWPP_OK;
}
