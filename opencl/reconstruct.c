/*
 * reconstruct.c - morphological reconstruction on OpenCL. Kernels: reconstruct.cl.
 *
 * IWPP_ALGO_QUEUE (FH_GPU): 1 or 2 raster and anti-raster scans as
 * parallel segmented scans of clamp functions, then the queue phase with the
 * multi-level queue (private queues moved into the work-group queue with local
 * atomics: mlq_push), re-run from the partial result whenever a queue
 * overflowed.
 * IWPP_ALGO_MEGAPIXEL (IWPP-MP): 32 x 32 tiles (16 x 16 x 8 in 3D) swept in
 * local memory until stable, a global queue of tiles, atomic write-back that
 * re-queues the neighbour tiles a raised border pixel can raise.
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

#define TQ_CAP 32 /* private queue entries per work-item (multi-level variant) */
#define SCAN_SEG_X 16 /* scan segment length along x (work-items of a row share cache lines) */
#define SCAN_SEG 32   /* scan segment length along y and z */
/* Raster + anti-raster iterations before the queue: 2 with 4/6-connectivity, 1 with 8/18/26.
 * H100, NVIDIA OpenCL, 8192^2 u8 tissue (bench rec-dil), comp_ms for 1 / 2 / 3 iterations:
 * 4-conn 15.4 / 10.3 / 11.2, 8-conn 11.3 / 14.0 / 18.6 (CUDA: 9.0 and 9.3 ms). */
#define SCAN_ITERATIONS_FACE 2   /* 4- and 6-connected (face neighbours only) */
#define SCAN_ITERATIONS_FULLNB 1 /* 8-, 18- and 26-connected */

typedef struct rec_job {
    iwpp_ocl *s;
    cl_mem J, mask, offs, scan_offs[6], seeds, gq, counters, gstats, F;
    int nscan[6];
} rec_job;

static void job_free(rec_job *j)
{
    iwpp_ocl_release(j->s, j->J);
    iwpp_ocl_release(j->s, j->offs);
    for (int i = 0; i < 6; ++i) iwpp_ocl_release(j->s, j->scan_offs[i]);
    iwpp_ocl_release(j->s, j->seeds);
    iwpp_ocl_release(j->s, j->gq);
    iwpp_ocl_release(j->s, j->counters);
    iwpp_ocl_release(j->s, j->gstats);
    iwpp_ocl_release(j->s, j->F);
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

/* ------------------------------------------------------------------------ */
/* megapixel (IWPP-MP): tiles in local memory, a global queue of tiles      */

static uint32_t next_pow2(uint64_t v)
{
    uint64_t p = 1;
    while (p < v) p <<= 1;
    return (uint32_t)p;
}

static iwpp_status mp_reconstruct(iwpp_context *ctx, iwpp_buf *marker, const iwpp_buf *mask,
                                  int connectivity, iwpp_morph_mode mode, double t0)
{
    iwpp_ocl *s = iwpp_ocl_state(ctx);
    const cl_uint n = (cl_uint)iwpp_buf_count(marker);
    const iwpp_type type = marker->type;
    const int flat = marker->d == 1;
    cl_kernel k_to, k_from, k_init, k_run;
    iwpp_status rs;
    if ((rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_MAIN, type, "to_keys", &k_to)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_MAIN, type, "from_keys", &k_from)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_MAIN, type, "mp_init", &k_init)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_MAIN, type, "mp_run", &k_run)))
        return rs;
    /* Tile shape: 32 x 32 in 2D, 16 x 16 x 8 in 3D (smaller if local memory is short). */
    cl_int TX = 32, TY = 32, TZ = 1, zp = 0;
    if (!flat) {
        TX = 16;
        TY = 16;
        TZ = 8;
        zp = 1;
    }
    size_t L = flat ? 32 : 64;
    for (;;) {
        size_t npad = (size_t)(TX + 2) * (TY + 2) * (TZ + 2 * zp);
        size_t bytes = npad * 8 + (size_t)TX * TY * TZ + 256;
        if (bytes <= s->local_mem || (TX <= 4 && TY <= 4 && TZ <= 2)) break;
        if (TZ > 2) TZ /= 2;
        else if (TX >= TY) TX /= 2;
        else TY /= 2;
    }
    const size_t npad = (size_t)(TX + 2) * (TY + 2) * (TZ + 2 * zp);
    const size_t lbytes = npad * 8 + (size_t)TX * TY * TZ;
    if (lbytes + 256 > s->local_mem)
        return iwpp_set_error(ctx, IWPP_EUNSUPPORTED,
                              "OpenCL: %s has only %llu bytes of local memory, too little for the "
                              "megapixel reconstruction; use IWPP_ALGO_QUEUE or the CPU backend",
                              s->name, (unsigned long long)s->local_mem);
    L = iwpp_ocl_group_size(s, k_run, L);
    const cl_int PX = TX + 2, PY = TY + 2;
    cl_int4 ntl;
    ntl.s[0] = (cl_int)((marker->w + TX - 1) / TX);
    ntl.s[1] = (cl_int)((marker->h + TY - 1) / TY);
    ntl.s[2] = (cl_int)((marker->d + TZ - 1) / TZ);
    ntl.s[3] = 0;
    const uint64_t ntiles64 = (uint64_t)ntl.s[0] * ntl.s[1] * ntl.s[2];
    const cl_uint ntiles = (cl_uint)ntiles64;
    const cl_uint qcap = next_pow2(ntiles64 * 2 < 64 ? 64 : ntiles64 * 2), qmask = qcap - 1;

    /* neighbour tables in local-tile coordinates */
    int off[26][3];
    const int no = iwpp_neighbors(connectivity, flat, off);
    cl_int offs[26 * 4], swoff[6 * 9 * 4], swmeta[6 * 4];
    for (int i = 0; i < no; ++i) {
        offs[4 * i + 0] = off[i][0];
        offs[4 * i + 1] = off[i][1];
        offs[4 * i + 2] = off[i][2];
        offs[4 * i + 3] = off[i][0] + PX * (off[i][1] + PY * off[i][2]);
    }
    int nsw = 0, nso = 0;
    const int naxes = flat ? 2 : 3;
    for (int di = 0; di < 2; ++di)
        for (int a = 0; a < naxes; ++a) {
            int dir = di ? -1 : 1, first = nso;
            for (int i = 0; i < no; ++i) {
                if (off[i][a] != -dir) continue;
                for (int c = 0; c < 4; ++c) swoff[4 * nso + c] = offs[4 * i + c];
                ++nso;
            }
            swmeta[4 * nsw + 0] = a;
            swmeta[4 * nsw + 1] = dir;
            swmeta[4 * nsw + 2] = first;
            swmeta[4 * nsw + 3] = nso - first;
            ++nsw;
        }
    cl_mem J = NULL, slots = NULL, inq = NULL, ctrl = NULL, m_offs = NULL, m_swoff = NULL,
           m_swmeta = NULL;
    cl_int err = CL_SUCCESS;
    m_offs = s->api->clCreateBuffer(s->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                    sizeof offs, offs, &err);
    if (err == CL_SUCCESS)
        m_swoff = s->api->clCreateBuffer(s->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                         sizeof swoff, swoff, &err);
    if (err == CL_SUCCESS)
        m_swmeta = s->api->clCreateBuffer(s->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                          sizeof swmeta, swmeta, &err);
    if (err != CL_SUCCESS) {
        rs = iwpp_ocl_fail(ctx, err, "creating the megapixel neighbour tables");
        goto done;
    }
    if ((rs = iwpp_ocl_alloc(ctx, (size_t)n * 4, "the reconstruction working image", &J)) ||
        (rs = iwpp_ocl_alloc(ctx, (size_t)qcap * 4, "the tile queue", &slots)) ||
        (rs = iwpp_ocl_alloc(ctx, (size_t)ntiles * 4, "the tile flags", &inq)) ||
        (rs = iwpp_ocl_alloc(ctx, 8 * 4, "the tile queue counters", &ctrl)))
        goto done;
    const cl_uint inv = mode == IWPP_BY_EROSION ? 0xffffffffu : 0u;
    const cl_int w = (cl_int)marker->w, h = (cl_int)marker->h, d = (cl_int)marker->d;
    cl_mem mk = (cl_mem)marker->ptr, ms = (cl_mem)mask->ptr;
    cl_uint c0[8] = {0, ntiles, ntiles, 0, 0, 0, 0, 0};
    err = s->api->clEnqueueWriteBuffer(s->queue, ctrl, CL_FALSE, 0, sizeof c0, c0, 0, NULL, NULL);
    IWPP_KARG(s, k_to, 0, J);
    IWPP_KARG(s, k_to, 1, mk);
    IWPP_KARG(s, k_to, 2, inv);
    IWPP_KARG(s, k_to, 3, n);
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_to, n, 0);
    IWPP_KARG(s, k_init, 0, slots);
    IWPP_KARG(s, k_init, 1, inq);
    IWPP_KARG(s, k_init, 2, ntiles);
    IWPP_KARG(s, k_init, 3, qcap);
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_init, qcap, 0);
    cl_int4 dims;
    dims.s[0] = TX;
    dims.s[1] = TY;
    dims.s[2] = TZ;
    dims.s[3] = 0;
    const cl_int c_nsw = nsw, c_no = no;
    IWPP_KARG(s, k_run, 0, J);
    IWPP_KARG(s, k_run, 1, ms);
    IWPP_KARG(s, k_run, 2, inv);
    IWPP_KARG(s, k_run, 3, w);
    IWPP_KARG(s, k_run, 4, h);
    IWPP_KARG(s, k_run, 5, d);
    IWPP_KARG(s, k_run, 6, dims);
    IWPP_KARG(s, k_run, 7, zp);
    IWPP_KARG(s, k_run, 8, ntl);
    IWPP_KARG(s, k_run, 9, m_swmeta);
    IWPP_KARG(s, k_run, 10, c_nsw);
    IWPP_KARG(s, k_run, 11, m_swoff);
    IWPP_KARG(s, k_run, 12, m_offs);
    IWPP_KARG(s, k_run, 13, c_no);
    IWPP_KARG(s, k_run, 14, slots);
    IWPP_KARG(s, k_run, 15, qmask);
    IWPP_KARG(s, k_run, 16, inq);
    IWPP_KARG(s, k_run, 17, ctrl);
    IWPP_KLOCAL(s, k_run, 18, npad * 4);
    IWPP_KLOCAL(s, k_run, 19, npad * 4);
    IWPP_KLOCAL(s, k_run, 20, (size_t)TX * TY * TZ);
    /* Persistent work-groups: enough to fill the device, never more than the tiles. */
    size_t G = (size_t)s->compute_units * (s->is_gpu ? 16 : 1);
    if (G > ntiles) G = ntiles;
    if (G < 1) G = 1;
    size_t global = G * L;
    if (err == CL_SUCCESS)
        err = s->api->clEnqueueNDRangeKernel(s->queue, k_run, 1, NULL, &global, &L, 0, NULL, NULL);
    IWPP_KARG(s, k_from, 0, mk);
    IWPP_KARG(s, k_from, 1, J);
    IWPP_KARG(s, k_from, 2, inv);
    IWPP_KARG(s, k_from, 3, n);
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_from, n, 0);
    if (err == CL_SUCCESS)
        err = s->api->clEnqueueReadBuffer(s->queue, ctrl, CL_TRUE, 0, sizeof c0, c0, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        rs = iwpp_ocl_fail(ctx, err, "the megapixel reconstruction kernels");
        goto done;
    }
    snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "ocl-megapixel/%dx%dx%d", (int)TX,
             (int)TY, (int)TZ);
    ctx->stats.pixels_visited = (int64_t)c0[3] * TX * TY * TZ;
    ctx->stats.rounds = c0[4];
    ctx->stats.overflow_reruns = 0;
    ctx->stats.compute_ms = iwpp_now_ms() - t0;
    rs = IWPP_OK;
done:
    iwpp_ocl_release(s, J);
    iwpp_ocl_release(s, slots);
    iwpp_ocl_release(s, inq);
    iwpp_ocl_release(s, ctrl);
    iwpp_ocl_release(s, m_offs);
    iwpp_ocl_release(s, m_swoff);
    iwpp_ocl_release(s, m_swmeta);
    return rs;
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

static iwpp_status ocl_reconstruct(iwpp_context *ctx, iwpp_buf *marker, const iwpp_buf *mask, int connectivity,
                                   iwpp_morph_mode mode)
{
    iwpp_ocl *s = iwpp_ocl_state(ctx);
    const int64_t n64 = iwpp_buf_count(marker);
    if (n64 > 0x7fffffffLL)
        return iwpp_set_error(ctx, IWPP_EUNSUPPORTED,
                              "OpenCL reconstruction handles at most 2^31-1 pixels per call, but "
                              "the image has %lld; use the CPU backend (tiled) for larger images",
                              (long long)n64);
    const double t0 = iwpp_now_ms();
    if (use_megapixel(ctx, marker)) return mp_reconstruct(ctx, marker, mask, connectivity, mode, t0);
    const cl_uint n = (cl_uint)n64;
    const iwpp_type type = marker->type;
    cl_kernel k_to, k_from, k_sseg, k_carry, k_apply, k_seed, k_queue;
    iwpp_status rs;
    if ((rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_MAIN, type, "to_keys", &k_to)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_MAIN, type, "from_keys", &k_from)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_MAIN, type, "rec_scan_seg", &k_sseg)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_MAIN, type, "rec_scan_carry", &k_carry)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_MAIN, type, "rec_scan_apply", &k_apply)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_MAIN, type, "rec_seed", &k_seed)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_MAIN, type, "rec_queue", &k_queue)))
        return rs;

    rec_job j;
    memset(&j, 0, sizeof j);
    j.s = s;
    const int naxes = marker->d > 1 ? 3 : 2;
    int noffs = 0;
    if ((rs = iwpp_ocl_offsets(ctx, connectivity, marker, &j.offs, &noffs))) goto done;
    for (int a = 0; a < naxes; ++a)
        for (int di = 0; di < 2; ++di)
            if ((rs = scan_offsets(ctx, connectivity, marker, a, di ? -1 : 1, &j.scan_offs[2 * a + di],
                                   &j.nscan[2 * a + di])))
                goto done;

    /* Launch geometry from the device. */
    size_t L = iwpp_ocl_group_size(s, k_queue, s->is_gpu ? 256 : 64);
    size_t Ls = iwpp_ocl_group_size(s, k_seed, s->is_gpu ? 256 : 64);
    size_t G = (size_t)s->compute_units * (s->is_gpu ? 8 : 2);
    if (G < 1) G = 1;
    if (G > 4096) G = 4096;
    cl_uint K = 1;
    cl_int variant = 0;
    const char *vname = "ocl-fh/multilevel";
    if (ctx->queue_variant == IWPP_QUEUE_ATOMIC) {
        variant = 1;
        vname = "ocl-fh/atomic";
    } else if (ctx->queue_variant == IWPP_QUEUE_PREFIXSUM) {
        variant = 2;
        vname = "ocl-fh/prefixsum";
    } else {
        K = noffs > 0 ? (cl_uint)(TQ_CAP / noffs) : 1;
        if (K < 1) K = 1;
    }
    /* Local memory: private queues (L * K * noffs words), the scan (L), the
     * work-group queue (bq_cap, at most 2048 and at least 256). */
    const cl_ulong lwords = s->local_mem / sizeof(cl_uint) - 64;
    size_t tq_words = L * K * (size_t)(noffs > 0 ? noffs : 1);
    while (K > 1 && tq_words + L + 256 > lwords) {
        --K;
        tq_words = L * K * (size_t)(noffs > 0 ? noffs : 1);
    }
    if (tq_words + L + 256 > lwords) {
        rs = iwpp_set_error(ctx, IWPP_EUNSUPPORTED,
                            "OpenCL: %s has only %llu bytes of local memory; the reconstruction "
                            "queue needs %llu; use the CPU backend",
                            s->name, (unsigned long long)s->local_mem,
                            (unsigned long long)((tq_words + L + 256 + 64) * 4));
        goto done;
    }
    cl_uint bq_cap = 2048;
    if ((cl_ulong)bq_cap + L + tq_words > lwords) bq_cap = (cl_uint)(lwords - L - tq_words);
    /* Queue capacity per group (each group has an in and an out half). */
    uint64_t cap64;
    if (ctx->queue_capacity > 0) {
        cap64 = (uint64_t)ctx->queue_capacity;
    } else {
        uint64_t total = (uint64_t)n < (1u << 25) ? (uint64_t)n : (1u << 25);
        cap64 = total / G;
        if (cap64 < 4096) cap64 = 4096;
    }
    if (cap64 * G * 2 > 0x7fffffffULL) cap64 = 0x7fffffffULL / (G * 2);
    const cl_uint cap = (cl_uint)cap64;
    const cl_uint seed_cap = (cl_uint)(cap64 * G);

    if ((rs = iwpp_ocl_alloc(ctx, (size_t)n * 4, "the reconstruction working image", &j.J)) ||
        (rs = iwpp_ocl_alloc(ctx, (size_t)seed_cap * 4, "the seed queue", &j.seeds)) ||
        (rs = iwpp_ocl_alloc(ctx, (size_t)cap * 2 * G * 4, "the per-group queues", &j.gq)) ||
        (rs = iwpp_ocl_alloc(ctx, (2 + G) * 4, "the queue counters", &j.counters)) ||
        (rs = iwpp_ocl_alloc(ctx, 2 * G * 4, "the queue statistics", &j.gstats)))
        goto done;
    {
        /* segment functions of the widest scan pass */
        size_t fmax = 0;
        for (int a = 0; a < naxes; ++a) {
            size_t len = a == 0 ? (size_t)marker->w : (a == 1 ? (size_t)marker->h : (size_t)marker->d);
            size_t B = a == 0 ? SCAN_SEG_X : SCAN_SEG;
            size_t f = (size_t)n / len * ((len + B - 1) / B);
            if (f > fmax) fmax = f;
        }
        if ((rs = iwpp_ocl_alloc(ctx, fmax * 8, "the scan segment table", &j.F))) goto done;
    }

    cl_int err = CL_SUCCESS;
    const cl_uint inv = mode == IWPP_BY_EROSION ? 0xffffffffu : 0u;
    const cl_int w = (cl_int)marker->w, h = (cl_int)marker->h, d = (cl_int)marker->d;
    cl_mem mk = (cl_mem)marker->ptr, ms = (cl_mem)mask->ptr;

    /* keys */
    IWPP_KARG(s, k_to, 0, j.J);
    IWPP_KARG(s, k_to, 1, mk);
    IWPP_KARG(s, k_to, 2, inv);
    IWPP_KARG(s, k_to, 3, n);
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_to, n, 0);

    /* raster then anti-raster scans, one pass per axis, each a parallel scan
     * (segment functions, carries along the segments, apply; reconstruct.cl); SCAN_ITERATIONS_*
     * forward + backward iterations (tuning key ocl.rec_scans, 0..64) */
    int scan_its = noffs == 2 * naxes ? SCAN_ITERATIONS_FACE : SCAN_ITERATIONS_FULLNB;
    scan_its = (int)iwpp_tune_int(ctx, IWPP_TUNE_OCL_REC_SCANS, scan_its, 0, 64);
    for (int it = 0; it < scan_its && err == CL_SUCCESS; ++it) {
        for (int di = 0; di < 2 && err == CL_SUCCESS; ++di)
            for (int a = 0; a < naxes && err == CL_SUCCESS; ++a) {
                cl_int axis = a, dir = di ? -1 : 1, no = j.nscan[2 * a + di];
                cl_uint nlines = (cl_uint)(a == 0 ? (size_t)h * d : (a == 1 ? (size_t)w * d : (size_t)w * h));
                cl_int len = a == 0 ? w : (a == 1 ? h : d);
                cl_int B = a == 0 ? SCAN_SEG_X : SCAN_SEG;
                cl_uint nseg = (cl_uint)((len + B - 1) / B);
                cl_int segmajor = a == 0;
                size_t items = (size_t)nlines * nseg;
                for (int kk = 0; kk < 2; ++kk) {
                    cl_kernel k = kk ? k_apply : k_sseg;
                    IWPP_KARG(s, k, 0, j.J);
                    IWPP_KARG(s, k, 1, ms);
                    IWPP_KARG(s, k, 2, inv);
                    IWPP_KARG(s, k, 3, w);
                    IWPP_KARG(s, k, 4, h);
                    IWPP_KARG(s, k, 5, d);
                    IWPP_KARG(s, k, 6, axis);
                    IWPP_KARG(s, k, 7, dir);
                    IWPP_KARG(s, k, 8, j.scan_offs[2 * a + di]);
                    IWPP_KARG(s, k, 9, no);
                    IWPP_KARG(s, k, 10, nlines);
                    IWPP_KARG(s, k, 11, len);
                    IWPP_KARG(s, k, 12, B);
                    IWPP_KARG(s, k, 13, nseg);
                    IWPP_KARG(s, k, 14, segmajor);
                    IWPP_KARG(s, k, 15, j.F);
                }
                IWPP_KARG(s, k_carry, 0, nlines);
                IWPP_KARG(s, k_carry, 1, nseg);
                IWPP_KARG(s, k_carry, 2, j.F);
                size_t lg = s->is_gpu ? 128 : 0;
                if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_sseg, items, lg);
                if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_carry, nlines, lg);
                if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_apply, items, lg);
            }
    }
    if (err != CL_SUCCESS) {
        rs = iwpp_ocl_fail(ctx, err, "the reconstruction scans");
        goto done;
    }

    /* queue phase, re-run from the partial result after an overflow */
    int64_t visited = 0, rounds = 0, reruns = 0;
    cl_uint *host = malloc((2 + 2 * G) * sizeof(cl_uint));
    if (!host) {
        rs = iwpp_set_error(ctx, IWPP_ENOMEM, "OpenCL reconstruction: out of host memory");
        goto done;
    }
    const cl_int no = noffs;
    for (;;) {
        const cl_uint zero = 0;
        err = s->api->clEnqueueFillBuffer(s->queue, j.counters, &zero, sizeof zero, 0, (2 + G) * 4, 0,
                                          NULL, NULL);
        IWPP_KARG(s, k_seed, 0, j.J);
        IWPP_KARG(s, k_seed, 1, ms);
        IWPP_KARG(s, k_seed, 2, inv);
        IWPP_KARG(s, k_seed, 3, w);
        IWPP_KARG(s, k_seed, 4, h);
        IWPP_KARG(s, k_seed, 5, d);
        IWPP_KARG(s, k_seed, 6, j.offs);
        IWPP_KARG(s, k_seed, 7, no);
        IWPP_KARG(s, k_seed, 8, n);
        IWPP_KARG(s, k_seed, 9, j.seeds);
        IWPP_KARG(s, k_seed, 10, seed_cap);
        IWPP_KARG(s, k_seed, 11, j.counters);
        IWPP_KLOCAL(s, k_seed, 12, (Ls + 1) * sizeof(cl_uint));
        if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_seed, n, Ls);
        if (err == CL_SUCCESS)
            err = s->api->clEnqueueReadBuffer(s->queue, j.counters, CL_TRUE, 0, 2 * sizeof(cl_uint),
                                              host, 0, NULL, NULL);
        if (err != CL_SUCCESS) break;
        cl_uint nseeds = host[0] < seed_cap ? host[0] : seed_cap;
        if (nseeds == 0) break;
        IWPP_KARG(s, k_queue, 0, j.J);
        IWPP_KARG(s, k_queue, 1, ms);
        IWPP_KARG(s, k_queue, 2, inv);
        IWPP_KARG(s, k_queue, 3, w);
        IWPP_KARG(s, k_queue, 4, h);
        IWPP_KARG(s, k_queue, 5, d);
        IWPP_KARG(s, k_queue, 6, j.offs);
        IWPP_KARG(s, k_queue, 7, no);
        IWPP_KARG(s, k_queue, 8, j.seeds);
        IWPP_KARG(s, k_queue, 9, nseeds);
        IWPP_KARG(s, k_queue, 10, j.gq);
        IWPP_KARG(s, k_queue, 11, cap);
        IWPP_KARG(s, k_queue, 12, j.counters);
        IWPP_KARG(s, k_queue, 13, j.gstats);
        IWPP_KLOCAL(s, k_queue, 14, bq_cap * sizeof(cl_uint));
        IWPP_KARG(s, k_queue, 15, bq_cap);
        IWPP_KLOCAL(s, k_queue, 16, (L + 1) * sizeof(cl_uint));
        IWPP_KLOCAL(s, k_queue, 17, tq_words * sizeof(cl_uint));
        IWPP_KARG(s, k_queue, 18, K);
        IWPP_KARG(s, k_queue, 19, variant);
        size_t global = G * L;
        if (err == CL_SUCCESS)
            err = s->api->clEnqueueNDRangeKernel(s->queue, k_queue, 1, NULL, &global, &L, 0, NULL,
                                                 NULL);
        if (err == CL_SUCCESS)
            err = s->api->clEnqueueReadBuffer(s->queue, j.counters, CL_TRUE, 0, 2 * sizeof(cl_uint),
                                              host, 0, NULL, NULL);
        if (err == CL_SUCCESS)
            err = s->api->clEnqueueReadBuffer(s->queue, j.gstats, CL_TRUE, 0, 2 * G * sizeof(cl_uint),
                                              host + 2, 0, NULL, NULL);
        if (err != CL_SUCCESS) break;
        int64_t rmax = 0;
        for (size_t g = 0; g < G; ++g) {
            visited += host[2 + 2 * g];
            if ((int64_t)host[3 + 2 * g] > rmax) rmax = host[3 + 2 * g];
        }
        rounds += rmax;
        if (!host[1]) break;
        ++reruns;
    }
    free(host);
    if (err != CL_SUCCESS) {
        rs = iwpp_ocl_fail(ctx, err, "the reconstruction queue phase");
        goto done;
    }

    IWPP_KARG(s, k_from, 0, mk);
    IWPP_KARG(s, k_from, 1, j.J);
    IWPP_KARG(s, k_from, 2, inv);
    IWPP_KARG(s, k_from, 3, n);
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_from, n, 0);
    if (err == CL_SUCCESS) err = s->api->clFinish(s->queue);
    if (err != CL_SUCCESS) {
        rs = iwpp_ocl_fail(ctx, err, "converting the reconstruction result");
        goto done;
    }
    snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "%s", vname);
    ctx->stats.pixels_visited = visited;
    ctx->stats.rounds = rounds;
    ctx->stats.overflow_reruns = reruns;
    ctx->stats.compute_ms = iwpp_now_ms() - t0;
    rs = IWPP_OK;
done:
    job_free(&j);
    return rs;
}
