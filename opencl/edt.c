/*
 * edt.c - Euclidean distance transforms on OpenCL (kernels: edt_exact.cl, edt_danielsson.cl).
 * Exact: the separable method of native/cpu/edt.c, bit for bit (double
 * precision, so the device needs cl_khr_fp64), with the passes of cuda/edt_exact.cu:
 * pass A in segments (2 kernels), pass B (3D) one work-group per tile of
 * columns in local memory, pass C one work-group per row in local memory
 * (1 kernel each); rows too wide for local memory: the banded method with its
 * band tables in global memory (2 kernels, a row over several work-groups);
 * columns too tall: one work-item per column. 2D: 3 or 4 kernels and one
 * clFinish per call; work buffers are kept between calls (iwpp_ocl_scratch).
 * Danielsson: IWPP propagation of 32-bit nearest-background indices, one
 * host-driven round per wave.
 */
#include "ocl.h"
#include "neighborhood.h"

#include <stdio.h>
#include <stdlib.h>
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

#define SEG_A 128 /* pass A segment length (planes along the outer axis) */
#define RB_S 32   /* pass C band and superband sizes: as in edt.cl */
#define RB_SB 32
#define RB_PAD(x) ((x) + ((x) >> 5))

/* Work buffers: kept between calls (iwpp_ocl_scratch) unless IWPP_OCL_EDT_FRESH=1 asks for fresh
 * ones (to measure what allocating them costs); fresh ones are released by the caller via *own. */
enum { W_SITES, W_SEG, W_NY2, W_NZ2, W_STACK, W_TMAP, W_TNEAR, W_WSTK };
/* The wide-row pass's band tables reuse the slots of the transposed one-work-item-per-row
 * fallback (tmap, tnear), which never runs in the same call; its stacks have their own slot,
 * since the 3D column fallback may hold W_STACK in the same call. */
enum { W_WMIN = W_TMAP, W_WCNT = W_TNEAR };
#define WB_BANDS 64 /* bands per work-group of edt_wide_build: as in edt.cl */
static iwpp_status work_buf(iwpp_context *ctx, int fresh, int slot, size_t bytes, const char *what,
                            cl_mem *out, cl_mem *own)
{
    if (!fresh) return iwpp_ocl_scratch(ctx, slot, bytes, what, out);
    iwpp_status rs = iwpp_ocl_alloc(ctx, bytes, what, out);
    *own = *out;
    return rs;
}

/* Local memory of one line of n sites for edt_rows_env / edt_cols_env (edt_exact.cl): sites (2D
 * rows: ushort rows, else double f, padded), E, prv, nxt, gF, gL, pre, cs, lo, hi, stk. */
#define EM_MAX 65535
static size_t em_bytes(size_t n, int dbl)
{
    const size_t nb = (n + RB_S - 1) / RB_S, nc = (nb + 7) / 8;
    const size_t sb = ((dbl ? 8 : 2) * (size_t)RB_PAD(n) + 7) & ~(size_t)7;
    return (sb + 2 * n + 2 * 4 * nb + 2 * nb + 2 * (nc + 1) + 2 * nb + RB_S * nb + 15) & ~(size_t)15;
}

/* The exact transform's path, chosen from the device's local memory and the image:
 * rows (pass C): merged band envelopes one work-group per row where a row fits in local memory
 * (ROWS_MERGED: 2D rows up to ~8900 pixels in 48 KiB, 3D ~4200; positions in 16 bits); else the
 * banded query with the band tables in local memory (ROWS_BANDED, kept for comparisons) or in
 * global memory with a row over several work-groups (ROWS_WIDE); one work-item per row on
 * transposed planes (ROWS_SERIAL) only where a group of WB_BANDS work-items cannot run.
 * Columns (pass B, 3D): tiles of TX columns, one work-group each, by merged envelopes
 * (COLS_MERGED) or the banded query (COLS_BANDED), TX a power of two up to 32 with the tile
 * within 48 KiB; else one work-item per column (COLS_SERIAL).
 * Knobs (measurements and tests): IWPP_OCL_EDT_ROWS = banded | wide | serial and
 * IWPP_OCL_EDT_COLS = banded | serial force a path; IWPP_OCL_EDT_LOCAL_MEM=N takes N bytes as
 * the local memory lines must fit in (so small images take the other paths). */
enum { ROWS_MERGED, ROWS_BANDED, ROWS_WIDE, ROWS_SERIAL };
enum { COLS_NONE, COLS_MERGED, COLS_BANDED, COLS_SERIAL };
typedef struct exact_plan {
    int rows, cols;
    size_t lm_row;  /* local memory of a merged row */
    size_t cb_line; /* local memory of one column of a tile */
    cl_int cb_tx;   /* columns per tile */
} exact_plan;

static void plan_exact(const iwpp_context *ctx, const iwpp_ocl *s, int wide_group_ok, cl_int w, cl_int h, cl_int d, exact_plan *P)
{
    const int is3 = d > 1;
    cl_ulong lmem = s->local_mem;
    const char *ev = iwpp_tune(ctx, IWPP_TUNE_OCL_EDT_LOCAL_MEM);
    if (ev && atol(ev) > 0 && (cl_ulong)atol(ev) < lmem) lmem = (cl_ulong)atol(ev);
    const char *rv = iwpp_tune(ctx, IWPP_TUNE_OCL_EDT_ROWS), *cv = iwpp_tune(ctx, IWPP_TUNE_OCL_EDT_COLS);
    const int want_banded = rv && !strcmp(rv, "banded"), want_wide = rv && !strcmp(rv, "wide"),
              want_serial = rv && !strcmp(rv, "serial");
    const size_t nb = ((size_t)w + RB_S - 1) / RB_S, nsb = (nb + RB_SB - 1) / RB_SB;
    const size_t lm_banded = (nb + nsb) * sizeof(cl_double) +
                             (size_t)RB_PAD((size_t)w) * (is3 ? sizeof(cl_double) : sizeof(cl_int)) + nb +
                             nb * RB_S;
    const size_t wb_bytes = (size_t)RB_PAD((size_t)(WB_BANDS * RB_S)) * sizeof(cl_double) +
                            (size_t)WB_BANDS * RB_S + (size_t)WB_BANDS * sizeof(cl_double);
    const int wide_ok = (cl_ulong)wb_bytes + 64 <= s->local_mem && wide_group_ok;
    P->lm_row = em_bytes((size_t)w, is3);
    if (!want_banded && !want_wide && !want_serial && w <= EM_MAX && (is3 || h < EM_MAX) &&
        (cl_ulong)P->lm_row + 64 <= lmem)
        P->rows = ROWS_MERGED;
    else if (!want_wide && !want_serial && (cl_ulong)lm_banded + 64 <= lmem)
        P->rows = ROWS_BANDED;
    else if (!want_serial && wide_ok)
        P->rows = ROWS_WIDE;
    else
        P->rows = ROWS_SERIAL;
    const size_t cnb = ((size_t)h + RB_S - 1) / RB_S, cnsb = (cnb + RB_SB - 1) / RB_SB;
    const size_t col_banded = (((size_t)h + 2 * cnb + cnsb) * sizeof(cl_double) + cnb + cnb * RB_S + 15) &
                              ~(size_t)15;
    const size_t col_merged = em_bytes((size_t)h, 1);
    const int cols_banded = cv && !strcmp(cv, "banded"), cols_serial = cv && !strcmp(cv, "serial");
    P->cols = COLS_NONE;
    P->cb_line = 0;
    P->cb_tx = 1;
    if (is3) {
        if (!cols_banded && !cols_serial && h <= EM_MAX && (cl_ulong)col_merged + 64 <= lmem) {
            P->cols = COLS_MERGED;
            P->cb_line = col_merged;
        } else if (!cols_serial && (cl_ulong)col_banded + 64 <= lmem) {
            P->cols = COLS_BANDED;
            P->cb_line = col_banded;
        } else {
            P->cols = COLS_SERIAL;
        }
    }
    if (P->cols == COLS_MERGED || P->cols == COLS_BANDED) {
        const size_t target = lmem < 48 * 1024 + 64 ? (size_t)lmem - 64 : 48 * 1024;
        while (P->cb_tx < 32 && (size_t)(P->cb_tx * 2) * P->cb_line <= target && P->cb_tx < w) P->cb_tx *= 2;
    }
}

static iwpp_status edt_exact(iwpp_context *ctx, const iwpp_buf *bin, const double sp[3],
                             iwpp_buf *dist, iwpp_buf *nearest)
{
    iwpp_ocl *s = iwpp_ocl_state(ctx);
    const cl_int w = (cl_int)bin->w, h = (cl_int)bin->h, d = (cl_int)bin->d;
    const size_t n = (size_t)iwpp_buf_count(bin);
    const int is3 = d > 1;
    cl_kernel k_a1, k_a2, k_rows, k_cols, k_env, k_tr, k_untr32, k_untr64, k_wb, k_wq, k_renv, k_cenv;
    iwpp_status rs;
    if ((rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, "edt_pass_a1", &k_a1)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, "edt_pass_a2", &k_a2)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, is3 ? "edt_rows3" : "edt_rows2",
                              &k_rows)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, "edt_cols", &k_cols)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, "edt_envelope", &k_env)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, "edt_transpose32", &k_tr)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, "edt_untranspose32", &k_untr32)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, "edt_untranspose64", &k_untr64)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, "edt_wide_build", &k_wb)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, "edt_wide_query", &k_wq)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, "edt_rows_env", &k_renv)) ||
        (rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, bin->type, "edt_cols_env", &k_cenv)))
        return rs;
    const char *ev = iwpp_tune(ctx, IWPP_TUNE_OCL_EDT_FRESH);
    const int fresh = ev && atoi(ev) == 1;

    const size_t wb_lf = (size_t)RB_PAD((size_t)(WB_BANDS * RB_S)) * sizeof(cl_double),
                 wb_lst = (size_t)WB_BANDS * RB_S, wb_lmin = (size_t)WB_BANDS * sizeof(cl_double);
    exact_plan P;
    plan_exact(ctx, s, iwpp_ocl_group_size(s, k_wb, WB_BANDS) == WB_BANDS, w, h, d, &P);
    const int rows_env = P.rows == ROWS_MERGED, rows_fast = P.rows == ROWS_BANDED, rows_wide = P.rows == ROWS_WIDE;
    const int cols_env = P.cols == COLS_MERGED, cols_fast = cols_env || P.cols == COLS_BANDED;
    const size_t nb = ((size_t)w + RB_S - 1) / RB_S, nsb = (nb + RB_SB - 1) / RB_SB;
    const size_t cb_line = P.cb_line, lm_env = P.lm_row;
    const cl_int cb_tx = P.cb_tx;
    const size_t lm_min = nb * sizeof(cl_double), lm_smin = nsb * sizeof(cl_double),
                 lm_f = (size_t)RB_PAD((size_t)w) * (is3 ? sizeof(cl_double) : sizeof(cl_int)),
                 lm_cnt = nb, lm_stk = nb * RB_S;

    /* Pass A: `count` planes of `len` lines, in segments of SEG_A planes. */
    const cl_uint len = is3 ? (cl_uint)(w * h) : (cl_uint)w;
    const cl_int count = is3 ? d : h;
    const cl_int SEG = SEG_A;
    const cl_uint nseg = (cl_uint)((count + SEG - 1) / SEG);
    cl_mem sites = NULL, seg = NULL, ny2 = NULL, nz2 = NULL, v = NULL, tmap = NULL, tnear = NULL;
    cl_mem own[8] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    if ((rs = work_buf(ctx, fresh, W_SITES, n * 4, "the distance transform's site map", &sites,
                       &own[0])) ||
        (rs = work_buf(ctx, fresh, W_SEG, (size_t)len * nseg * 8,
                       "the distance transform's segment table", &seg, &own[1])))
        goto done;
    if (is3 && ((rs = work_buf(ctx, fresh, W_NY2, n * 4, "the distance transform's y-site map",
                               &ny2, &own[2])) ||
                (rs = work_buf(ctx, fresh, W_NZ2, n * 4, "the distance transform's z-site map",
                               &nz2, &own[3]))))
        goto done;
    const size_t rows_n = (size_t)h * (size_t)d;
    cl_mem wcnt = NULL, wstk = NULL, wmin = NULL;
    if (rows_wide &&
        ((rs = work_buf(ctx, fresh, W_WSTK, rows_n * nb * RB_S, "the distance transform's band stacks",
                        &wstk, &own[7])) ||
         (rs = work_buf(ctx, fresh, W_WMIN, rows_n * (nb + nsb) * sizeof(cl_double),
                        "the distance transform's band minima", &wmin, &own[5])) ||
         (rs = work_buf(ctx, fresh, W_WCNT, rows_n * nb, "the distance transform's band counts",
                        &wcnt, &own[6]))))
        goto done;
    if (((is3 && !cols_fast) || (!rows_env && !rows_fast && !rows_wide)) && (rs = work_buf(ctx, fresh, W_STACK, n * 4,
                                              "the distance transform's envelope scratch", &v,
                                              &own[4])))
        goto done;
    if (!rows_env && !rows_fast && !rows_wide) {
        if ((rs = work_buf(ctx, fresh, W_TMAP, n * 4, "the distance transform's transposed map",
                           &tmap, &own[5])))
            goto done;
        if (nearest && (rs = work_buf(ctx, fresh, W_TNEAR, n * 8,
                                      "the transposed nearest-index map", &tnear, &own[6])))
            goto done;
    }
    cl_int err = CL_SUCCESS;
    cl_mem mb = (cl_mem)bin->ptr;
    /* fixed group sizes also on CPU devices: PoCL compiles a kernel once per group size */
    const size_t lg = s->is_gpu ? 128 : 64;
    /* pass A: in -> sites (ny in 2D, nz in 3D); the summaries are needed only with 2+ segments */
    IWPP_KARG(s, k_a1, 0, mb);
    IWPP_KARG(s, k_a1, 1, seg);
    IWPP_KARG(s, k_a1, 2, len);
    IWPP_KARG(s, k_a1, 3, count);
    IWPP_KARG(s, k_a1, 4, SEG);
    IWPP_KARG(s, k_a1, 5, nseg);
    IWPP_KARG(s, k_a2, 0, mb);
    IWPP_KARG(s, k_a2, 1, seg);
    IWPP_KARG(s, k_a2, 2, sites);
    IWPP_KARG(s, k_a2, 3, len);
    IWPP_KARG(s, k_a2, 4, count);
    IWPP_KARG(s, k_a2, 5, SEG);
    IWPP_KARG(s, k_a2, 6, nseg);
    if (err == CL_SUCCESS && nseg > 1) err = iwpp_ocl_run1d(s, k_a1, (size_t)len * nseg, lg);
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_a2, (size_t)len * nseg, lg);
    cl_mem md = (cl_mem)dist->ptr;
    cl_mem mn = nearest ? (cl_mem)nearest->ptr : md;
    cl_int want = nearest != NULL;
    cl_double hx = sp[0], hy = sp[1], hz = sp[2];
    cl_mem ny = sites, nz = sites;
    if (is3) {
        /* pass B (3D): along y: nz -> ny2, nz2 */
        if (cols_fast) {
            const cl_int lb = (cl_int)cb_line;
            if (cols_env) k_cols = k_cenv; /* the same arguments */
            const size_t lsz = iwpp_ocl_group_size(s, k_cols, s->is_gpu ? 256 : 64);
            const size_t tiles = ((size_t)w + (size_t)cb_tx - 1) / (size_t)cb_tx * (size_t)d;
            size_t groups = (size_t)s->compute_units * 64;
            if (groups > tiles) groups = tiles;
            IWPP_KARG(s, k_cols, 0, sites);
            IWPP_KARG(s, k_cols, 1, ny2);
            IWPP_KARG(s, k_cols, 2, nz2);
            IWPP_KARG(s, k_cols, 3, w);
            IWPP_KARG(s, k_cols, 4, h);
            IWPP_KARG(s, k_cols, 5, d);
            IWPP_KARG(s, k_cols, 6, cb_tx);
            IWPP_KARG(s, k_cols, 7, lb);
            IWPP_KARG(s, k_cols, 8, hy);
            IWPP_KARG(s, k_cols, 9, hz);
            IWPP_KLOCAL(s, k_cols, 10, (size_t)cb_tx * cb_line);
            if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_cols, groups * lsz, lsz);
        } else {
            /* one work-item per column (x, z) */
            cl_int pass = 1;
            IWPP_KARG(s, k_env, 0, pass);
            IWPP_KARG(s, k_env, 1, w);
            IWPP_KARG(s, k_env, 2, h);
            IWPP_KARG(s, k_env, 3, d);
            IWPP_KARG(s, k_env, 4, sites);
            IWPP_KARG(s, k_env, 5, sites);
            IWPP_KARG(s, k_env, 6, ny2);
            IWPP_KARG(s, k_env, 7, nz2);
            IWPP_KARG(s, k_env, 8, md);
            IWPP_KARG(s, k_env, 9, md);
            IWPP_KARG(s, k_env, 10, want);
            IWPP_KARG(s, k_env, 11, v);
            IWPP_KARG(s, k_env, 12, hx);
            IWPP_KARG(s, k_env, 13, hy);
            IWPP_KARG(s, k_env, 14, hz);
            if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_env, (size_t)w * d, 64);
        }
        ny = ny2;
        nz = nz2;
    }
    const cl_uint rows = (cl_uint)h * (cl_uint)d;
    if (rows_env) {
        /* pass C: merged band envelopes, one work-group per row (edt_exact.cl); on GPUs about 4
         * pixels a work-item, 64 to 512 (short 3D rows: more groups per compute unit) */
        size_t want_lsz = 64;
        while (s->is_gpu && want_lsz < 512 && want_lsz * 4 < (size_t)w) want_lsz *= 2;
        ev = iwpp_tune(ctx, IWPP_TUNE_OCL_EDT_ROW_THREADS);
        if (ev && atoi(ev) > 0) want_lsz = (size_t)atoi(ev);
        const size_t lsz = iwpp_ocl_group_size(s, k_renv, want_lsz);
        size_t groups = (size_t)s->compute_units * 64;
        if (groups > rows) groups = rows;
        const cl_int c3 = is3;
        int a = 0;
        IWPP_KARG(s, k_renv, a++, ny);
        IWPP_KARG(s, k_renv, a++, nz);
        IWPP_KARG(s, k_renv, a++, md);
        IWPP_KARG(s, k_renv, a++, mn);
        IWPP_KARG(s, k_renv, a++, want);
        IWPP_KARG(s, k_renv, a++, w);
        IWPP_KARG(s, k_renv, a++, h);
        IWPP_KARG(s, k_renv, a++, rows);
        IWPP_KARG(s, k_renv, a++, hx);
        IWPP_KARG(s, k_renv, a++, hy);
        IWPP_KARG(s, k_renv, a++, hz);
        IWPP_KARG(s, k_renv, a++, c3);
        IWPP_KLOCAL(s, k_renv, a++, lm_env);
        if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_renv, groups * lsz, lsz);
    } else if (rows_fast) {
        /* pass C: one work-group per row (a loop over rows when there are more rows than groups) */
        size_t want_lsz = s->is_gpu ? 512 : 64;
        ev = iwpp_tune(ctx, IWPP_TUNE_OCL_EDT_ROW_THREADS);
        if (ev && atoi(ev) > 0) want_lsz = (size_t)atoi(ev);
        const size_t wr = ((size_t)w + 31) / 32 * 32;
        if (want_lsz > wr) want_lsz = wr;
        const size_t lsz = iwpp_ocl_group_size(s, k_rows, want_lsz);
        size_t groups = (size_t)s->compute_units * 64;
        if (groups > rows) groups = rows;
        int a = 0;
        IWPP_KARG(s, k_rows, a++, ny);
        if (is3) IWPP_KARG(s, k_rows, a++, nz);
        IWPP_KARG(s, k_rows, a++, md);
        IWPP_KARG(s, k_rows, a++, mn);
        IWPP_KARG(s, k_rows, a++, want);
        IWPP_KARG(s, k_rows, a++, w);
        IWPP_KARG(s, k_rows, a++, h);
        IWPP_KARG(s, k_rows, a++, rows);
        IWPP_KARG(s, k_rows, a++, hx);
        IWPP_KARG(s, k_rows, a++, hy);
        if (is3) IWPP_KARG(s, k_rows, a++, hz);
        IWPP_KLOCAL(s, k_rows, a++, lm_min);
        IWPP_KLOCAL(s, k_rows, a++, lm_smin);
        IWPP_KLOCAL(s, k_rows, a++, lm_f);
        IWPP_KLOCAL(s, k_rows, a++, lm_cnt);
        IWPP_KLOCAL(s, k_rows, a++, lm_stk);
        if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_rows, groups * lsz, lsz);
    } else if (rows_wide) {
        /* pass C, band tables in global memory: build (WB_BANDS bands per group), then query
         * (one work-item per pixel, a row over several groups) */
        const cl_int c3 = is3;
        const size_t gpr = (nb + WB_BANDS - 1) / WB_BANDS;
        size_t groups = (size_t)s->compute_units * 256;
        if (groups > rows * gpr) groups = rows * gpr;
        int a = 0;
        IWPP_KARG(s, k_wb, a++, ny);
        IWPP_KARG(s, k_wb, a++, nz);
        IWPP_KARG(s, k_wb, a++, wcnt);
        IWPP_KARG(s, k_wb, a++, wstk);
        IWPP_KARG(s, k_wb, a++, wmin);
        IWPP_KARG(s, k_wb, a++, w);
        IWPP_KARG(s, k_wb, a++, h);
        IWPP_KARG(s, k_wb, a++, rows);
        IWPP_KARG(s, k_wb, a++, hx);
        IWPP_KARG(s, k_wb, a++, hy);
        IWPP_KARG(s, k_wb, a++, hz);
        IWPP_KARG(s, k_wb, a++, c3);
        IWPP_KLOCAL(s, k_wb, a++, wb_lf);
        IWPP_KLOCAL(s, k_wb, a++, wb_lst);
        IWPP_KLOCAL(s, k_wb, a++, wb_lmin);
        if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_wb, groups * WB_BANDS, WB_BANDS);
        size_t want_q = s->is_gpu ? 256 : 64;
        ev = iwpp_tune(ctx, IWPP_TUNE_OCL_EDT_WIDE_THREADS);
        if (ev && atoi(ev) > 0) want_q = (size_t)atoi(ev);
        const size_t lq = iwpp_ocl_group_size(s, k_wq, want_q);
        const size_t qpr = ((size_t)w + lq - 1) / lq;
        a = 0;
        IWPP_KARG(s, k_wq, a++, ny);
        IWPP_KARG(s, k_wq, a++, nz);
        IWPP_KARG(s, k_wq, a++, wcnt);
        IWPP_KARG(s, k_wq, a++, wstk);
        IWPP_KARG(s, k_wq, a++, wmin);
        IWPP_KARG(s, k_wq, a++, md);
        IWPP_KARG(s, k_wq, a++, mn);
        IWPP_KARG(s, k_wq, a++, want);
        IWPP_KARG(s, k_wq, a++, w);
        IWPP_KARG(s, k_wq, a++, h);
        IWPP_KARG(s, k_wq, a++, rows);
        IWPP_KARG(s, k_wq, a++, hx);
        IWPP_KARG(s, k_wq, a++, hy);
        IWPP_KARG(s, k_wq, a++, hz);
        IWPP_KARG(s, k_wq, a++, c3);
        if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_wq, (size_t)rows * qpr * lq, lq);
    } else {
        /* pass C along x on transposed planes ([z][x][y]), so that neighbouring work-items
         * (neighbouring rows y) read and write neighbouring addresses; the same operations in
         * the same order as the CPU, only laid out apart. */
        cl_mem tny = tmap, tnz = is3 ? sites : tmap; /* sites (nz) is free after pass B */
        cl_mem distT = is3 ? ny2 : sites;             /* free once transposed */
        if (err == CL_SUCCESS) err = transpose(s, k_tr, ny, tny, w, h, d, 0);
        if (err == CL_SUCCESS && is3) err = transpose(s, k_tr, nz2, tnz, w, h, d, 0);
        cl_int pass = 3;
        cl_mem mnT = tnear ? tnear : distT;
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
        if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_env, (size_t)h * d, 64);
        if (err == CL_SUCCESS) err = transpose(s, k_untr32, distT, md, w, h, d, 1);
        if (err == CL_SUCCESS && nearest)
            err = transpose(s, k_untr64, tnear, (cl_mem)nearest->ptr, w, h, d, 1);
    }
    if (err == CL_SUCCESS) err = s->api->clFinish(s->queue);
    if (err != CL_SUCCESS) {
        rs = iwpp_ocl_fail(ctx, err, "the exact distance transform kernels");
        goto done;
    }
    snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "ocl-edt-exact-separable%s%s",
             rows_env ? "/merged-rows" : rows_fast ? "/banded-rows" : (rows_wide ? "/banded-wide-rows" : ""),
             cols_env ? "/merged-cols" : cols_fast ? "/banded-cols" : "");
    ctx->stats.pixels_visited = 0;
    ctx->stats.rounds = is3 ? 3 : (h > 1 ? 2 : 1);
done:
    for (int i = 0; i < 8; ++i) iwpp_ocl_release(s, own[i]);
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
        (rs = iwpp_ocl_alloc(ctx, 6 * 4, "the propagation counters", &cnt)))
        goto done;
    cl_int err = CL_SUCCESS;
    const cl_uint zero = 0, ones = 0xffffffffu;
    cl_mem mb = (cl_mem)bin->ptr;
    const cl_int no = noffs;
    /* a fixed group size on CPU devices: PoCL compiles a kernel once per group size, and the
     * runtime's choice follows the (per-round) global size */
    const size_t lgd = s->is_gpu ? 0 : 64;
    err = s->api->clEnqueueFillBuffer(s->queue, cnt, &zero, 4, 0, 6 * 4, 0, NULL, NULL);
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
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_init, n, lgd);
    cl_uint in_n = 0;
    if (err == CL_SUCCESS)
        err = s->api->clEnqueueReadBuffer(s->queue, cnt, CL_TRUE, 0, 4, &in_n, 0, NULL, NULL);
    cl_double hx = sp[0], hy = sp[1], hz = sp[2];
    int64_t visited = 0, rounds = 0;
    cl_uint round = 0;
    /* Rounds go in batches of DAN_BATCH between reads of the counts (they stay on the device; a
     * round whose list is empty does nothing), so the host waits once per batch instead of once
     * per round. Each round covers its list with a grid-stride loop over at most `cap` items. */
    enum { DAN_BATCH = 8 };
    const size_t lr = s->is_gpu ? 256 : 64;
    const size_t cap = (size_t)(s->compute_units > 0 ? s->compute_units : 1) * (s->is_gpu ? 2048 : 256);
    while (err == CL_SUCCESS && in_n > 0) {
        size_t gsz = (size_t)in_n * 4;
        if (gsz < 4096) gsz = 4096;
        if (gsz > cap) gsz = cap;
        for (int r = 0; r < DAN_BATCH && err == CL_SUCCESS; ++r) {
            IWPP_KARG(s, k_round, 0, vr);
            IWPP_KARG(s, k_round, 1, w);
            IWPP_KARG(s, k_round, 2, h);
            IWPP_KARG(s, k_round, 3, d);
            IWPP_KARG(s, k_round, 4, offs);
            IWPP_KARG(s, k_round, 5, no);
            IWPP_KARG(s, k_round, 6, la);
            IWPP_KARG(s, k_round, 7, lb);
            IWPP_KARG(s, k_round, 8, cnt);
            IWPP_KARG(s, k_round, 9, mark);
            IWPP_KARG(s, k_round, 10, round);
            IWPP_KARG(s, k_round, 11, hx);
            IWPP_KARG(s, k_round, 12, hy);
            IWPP_KARG(s, k_round, 13, hz);
            if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_round, gsz, lr);
            cl_mem t = la;
            la = lb;
            lb = t;
            ++round;
        }
        cl_uint c[6] = {0, 0, 0, 0, 0, 0};
        if (err == CL_SUCCESS)
            err = s->api->clEnqueueReadBuffer(s->queue, cnt, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL);
        in_n = c[round % 3];
        visited = (int64_t)c[3] + ((int64_t)c[4] << 32);
        rounds = c[5];
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
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k_final, n, lgd);
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
