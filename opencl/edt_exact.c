/*
 * edt_exact.c - the exact Euclidean distance transform on OpenCL (kernels: edt_exact.cl). Entry:
 * edt.c. Exact: the separable method of native/cpu/edt.c, bit for bit (double
 * precision, so the device needs cl_khr_fp64), with the passes of cuda/edt_exact.cu:
 * pass A in segments (2 kernels), pass B (3D) one work-group per tile of
 * columns in local memory, pass C one work-group per row in local memory
 * (1 kernel each); rows too wide for local memory: the banded method with its
 * band tables in global memory (2 kernels, a row over several work-groups);
 * columns too tall: one work-item per column. 2D: 3 or 4 kernels and one
 * clFinish per call; work buffers are kept between calls (iwpp_ocl_scratch).
 * Shape: plan_exact chooses the row and column paths from the device's local memory and the
 * image (named in stats.variant); exact_needs lists the work buffers those paths need (exact_alloc
 * takes them, iwpp_ocl_edt_scratch_bytes sums them for the EDT tiles); short
 * runners (run_pass_a, run_cols, run_rows_*) set each kernel's arguments and launch it.
 */
#include "ocl.h"
#include "neighborhood.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per-plane tiled transpose of a w x h x d image of 4- or 8-byte elements:
 * inverse = 0: [z][y][x] -> [z][x][y]; inverse = 1: back. */
static cl_int transpose(iwpp_ocl *s, cl_kernel k, cl_mem in, cl_mem out, cl_int w, cl_int h,
                        cl_int d, int inverse)
{
    iwpp_kargs ka = iwpp_kargs_of(s, k);
    ka_mem(&ka, in);
    ka_mem(&ka, out);
    ka_int(&ka, w);
    ka_int(&ka, h);
    if (ka.err != CL_SUCCESS) return ka.err;
    size_t ly = s->max_wg >= 256 ? 8 : 1;
    size_t a = inverse ? (size_t)h : (size_t)w, b = inverse ? (size_t)w : (size_t)h;
    size_t local[3] = {32, ly, 1};
    size_t global[3] = {(a + 31) / 32 * 32, (b + 31) / 32 * ly, (size_t)d};
    return iwpp_ocl_enqueue(s, k, 3, global, local, NULL);
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
#define EM_S 16 /* sites per band of the merged envelopes: as in edt_exact.cl */
static size_t em_bytes(size_t n, int dbl)
{
    const size_t nb = (n + EM_S - 1) / EM_S, nc = (nb + 7) / 8;
    const size_t sb = ((dbl ? 8 : 2) * (size_t)RB_PAD(n) + 7) & ~(size_t)7;
    return (sb + 2 * n + 2 * 4 * nb + 2 * nb + 2 * (nc + 1) + 2 * nb + EM_S * nb + 15) & ~(size_t)15;
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
    int lines;      /* the lines path (edt_lines.cl): passes x, y, z, one work-item per line */
    cl_int ln_cap;  /* its stack depth per work-item: the longest envelope line, a multiple of 4 */
    size_t ln_items;
    int colbands;   /* 2D with intv: column bands (edt_colbands.cl) */
    cl_int cb_k, cb_l, cb_lc; /* bands of a column, rows of a band, rows of a colour segment */
    size_t cb_mgroup;         /* work-items a group of edt_cb_merge */
} exact_plan;

/* The lines path (ocl.edt_lines: unset = 3D images, 1 = 2D too, 0 = never) wherever the
 * integers apply (intv), the envelope lines are at most LN_MAX_LEN long and no other path is
 * asked for; its work-items: about 1024 per compute unit on GPUs (64 on CPUs), fewer where the
 * lines are fewer or the stacks would pass LN_STACK_BYTES. */
#define LN_MAX_LEN 4096
#define LN_STACK_BYTES ((size_t)1 << 30)
static void plan_lines(const iwpp_context *ctx, const iwpp_ocl *s, int intv, cl_int w, cl_int h, cl_int d,
                       exact_plan *P)
{
    const long long want = iwpp_tune_int(ctx, IWPP_TUNE_OCL_EDT_LINES, -1, 0, 1);
    const int other = iwpp_tune(ctx, IWPP_TUNE_OCL_EDT_ROWS) || iwpp_tune(ctx, IWPP_TUNE_OCL_EDT_COLS) ||
                      iwpp_tune(ctx, IWPP_TUNE_OCL_EDT_LOCAL_MEM);
    const size_t cap = d > 1 ? (size_t)(h > d ? h : d) : (size_t)h;
    const size_t lines = d > 1 ? (size_t)w * (size_t)(h > d ? h : d) : (size_t)w;
    P->lines = intv && want != 0 && (d > 1 || want == 1) && cap <= LN_MAX_LEN && !other;
    P->ln_cap = (cl_int)((cap + 3) & ~(size_t)3);
    /* a work-item a line up to 2048 a compute unit (1024 left most work-items two lines at
       512^3, the second round a quarter full: 0.2-0.3 ms more on the H100) */
    size_t t = (lines + 63) / 64 * 64, most = (size_t)s->compute_units * (s->is_gpu ? 2048 : 64);
    if (t > most) t = most;
    if (t > LN_STACK_BYTES / ((size_t)P->ln_cap * 8)) t = LN_STACK_BYTES / ((size_t)P->ln_cap * 8);
    P->ln_items = t < 64 ? 64 : t / 64 * 64;
}

/* Column bands (ocl.edt_bands: unset = K from the image, "K" or "K,R", 0 = never) for 2D images
 * where the integers apply and no other path is asked for, as cuda/edt_exact.cu's plan_colbands:
 * K = 4096 work-items a compute unit / w bands on GPUs (64 on CPU devices), colour segments of 32
 * rows. */
#define CB_MAXK 64 /* as in edt_colbands.cl */
#define CB_SECTOR 8
#define CB_MCOLS 8    /* edt_cb_merge: columns a group, */
#define CB_MGROUP 256 /* work-items a group (a multiple of CB_MCOLS; 32 slots a column) */
static void plan_colbands(const iwpp_context *ctx, const iwpp_ocl *s, int intv, cl_int w, cl_int h, cl_int d,
                          exact_plan *P)
{
    const char *v = iwpp_tune(ctx, IWPP_TUNE_OCL_EDT_BANDS);
    long long k = -1, lc = -1;
    if (v) {
        char *end = NULL;
        k = strtoll(v, &end, 10);
        if (end && *end == ',') lc = strtoll(end + 1, NULL, 10);
    }
    const int other = iwpp_tune(ctx, IWPP_TUNE_OCL_EDT_ROWS) || iwpp_tune(ctx, IWPP_TUNE_OCL_EDT_COLS) ||
                      iwpp_tune(ctx, IWPP_TUNE_OCL_EDT_LOCAL_MEM);
    P->colbands = d == 1 && intv && !P->lines && k != 0 && !other;
    if (!P->colbands) return;
    if (k < 0) {
        k = ((long long)s->compute_units * (s->is_gpu ? 4096 : 64) + w - 1) / w;
        if (k > h / CB_SECTOR) k = h / CB_SECTOR; /* bands of a whole sector of rows, as on CUDA */
    }
    if (k > CB_MAXK) k = CB_MAXK;
    if (k > h) k = h;
    if (k < 1) k = 1;
    P->cb_l = (cl_int)((h + k - 1) / k);
    P->cb_k = (cl_int)((h + P->cb_l - 1) / P->cb_l);
    P->cb_lc = lc > 0 ? (cl_int)(lc < h ? lc : h) : (h < 32 ? h : 32);
}

static void plan_exact(const iwpp_context *ctx, const iwpp_ocl *s, int wide_group_ok, int intv, cl_int w, cl_int h,
                       cl_int d, exact_plan *P)
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
    plan_lines(ctx, s, intv, w, h, d, P);
    plan_colbands(ctx, s, intv, w, h, d, P);
}

/* The kernels of the exact transform, looked up once per call (cached by the backend). */
enum {
    KX_A1, KX_A2, KX_ROWS, KX_COLS, KX_ENV, KX_TR, KX_UNTR32, KX_UNTR64, KX_WB, KX_WQ, KX_RENV, KX_CENV,
    KX_LX, KX_LY, KX_LOUT, KX_CBH, KX_CBM, KX_CBC, KX_COUNT
};

static iwpp_status exact_kernels(iwpp_context *ctx, iwpp_type type, int is3, cl_kernel k[KX_COUNT])
{
    const char *const names[KX_COUNT] = {"edt_pass_a1",       "edt_pass_a2",       is3 ? "edt_rows3" : "edt_rows2",
                                         "edt_cols",          "edt_envelope",      "edt_transpose32",
                                         "edt_untranspose32", "edt_untranspose64", "edt_wide_build",
                                         "edt_wide_query",    "edt_rows_env",      "edt_cols_env",
                                         "edt_ln_x",          "edt_ln_y",          "edt_ln_out",
                                         "edt_cb_hull",       "edt_cb_merge",      "edt_cb_colour"};
    iwpp_status rs;
    for (int i = 0; i < KX_COUNT; ++i)
        if ((rs = iwpp_ocl_kernel(ctx, IWPP_OCL_PROG_EDT, type, names[i], &k[i]))) return rs;
    return IWPP_OK;
}

/* One call of the exact transform: sizes, spacing, outputs and work buffers. */
typedef struct exact_call {
    iwpp_ocl *s;
    cl_int w, h, d, is3, want;
    cl_int intv; /* merged envelopes in integers: unit spacing, w^2 + h^2 + d^2 < 2^31 (edt_exact.cl) */
    cl_uint rows;
    cl_double hx, hy, hz;
    cl_mem bin, md, mn;                                      /* input, distances, nearest (or md) */
    cl_mem sites, seg, ny2, nz2, v, tmap, tnear, wcnt, wstk, wmin; /* work buffers */
    cl_mem own[8];                                           /* fresh buffers this call releases */
} exact_call;

/* One work buffer a call needs: its slot, size and name, and where it goes. At most NEEDS_MAX a
 * call (3D wide rows with serial columns take 8). */
#define NEEDS_MAX 10
typedef struct work_need {
    int slot;
    size_t bytes;
    const char *what;
    cl_mem *out, *own;
} work_need;

/* The work buffers the plan's paths need, in the order they are taken; returns how many. */
static int exact_needs(const exact_plan *P, exact_call *c, cl_uint len, cl_uint nseg, work_need nd[NEEDS_MAX])
{
    const size_t n = (size_t)c->w * c->h * c->d, rows_n = (size_t)c->h * c->d;
    const size_t nb = ((size_t)c->w + RB_S - 1) / RB_S, nsb = (nb + RB_SB - 1) / RB_SB;
    const int serial_rows = P->rows == ROWS_SERIAL;
    int m = 0;
#define NEED(SLOT, BYTES, WHAT, OUT, OWN) (nd[m++] = (work_need){SLOT, BYTES, WHAT, OUT, OWN})
    if (P->colbands) { /* sx (ushort) in the site map, the bands' entries E and ranges R */
        const size_t e_bytes = (size_t)4 * CB_SECTOR * (size_t)P->cb_k * (size_t)((P->cb_l + CB_SECTOR - 1) / CB_SECTOR) *
                               (size_t)c->w;
        NEED(W_SITES, n * 2, "the distance transform's site map", &c->sites, &c->own[0]);
        NEED(W_NY2, e_bytes, "the distance transform's band envelopes", &c->ny2, &c->own[2]);
        NEED(W_NZ2, (size_t)4 * (size_t)P->cb_k * (size_t)c->w, "the distance transform's band ranges", &c->nz2,
             &c->own[3]);
        return m;
    }
    if (P->lines) { /* sx (ushort) in the site map, f2 and sy (ushort) in the 3D maps, the stacks */
        NEED(W_SITES, n * 4, "the distance transform's site map", &c->sites, &c->own[0]);
        if (c->is3) {
            NEED(W_NY2, n * 4, "the distance transform's plane map", &c->ny2, &c->own[2]);
            NEED(W_NZ2, n * 4, "the distance transform's site rows", &c->nz2, &c->own[3]);
        }
        NEED(W_STACK, P->ln_items * (size_t)P->ln_cap * 8, "the distance transform's stacks", &c->v, &c->own[4]);
        return m;
    }
    NEED(W_SITES, n * 4, "the distance transform's site map", &c->sites, &c->own[0]);
    NEED(W_SEG, (size_t)len * nseg * 8, "the distance transform's segment table", &c->seg, &c->own[1]);
    if (c->is3) {
        NEED(W_NY2, n * 4, "the distance transform's y-site map", &c->ny2, &c->own[2]);
        NEED(W_NZ2, n * 4, "the distance transform's z-site map", &c->nz2, &c->own[3]);
    }
    if (P->rows == ROWS_WIDE) {
        NEED(W_WSTK, rows_n * nb * RB_S, "the distance transform's band stacks", &c->wstk, &c->own[7]);
        NEED(W_WMIN, rows_n * (nb + nsb) * sizeof(cl_double), "the distance transform's band minima", &c->wmin,
             &c->own[5]);
        NEED(W_WCNT, rows_n * nb, "the distance transform's band counts", &c->wcnt, &c->own[6]);
    }
    if ((c->is3 && P->cols == COLS_SERIAL) || serial_rows)
        NEED(W_STACK, n * 4, "the distance transform's envelope scratch", &c->v, &c->own[4]);
    if (serial_rows) {
        NEED(W_TMAP, n * 4, "the distance transform's transposed map", &c->tmap, &c->own[5]);
        if (c->want) NEED(W_TNEAR, n * 8, "the transposed nearest-index map", &c->tnear, &c->own[6]);
    }
#undef NEED
    return m;
}

/* Work buffers the plan's paths need (kept between calls unless ocl.edt_fresh = 1). */
static iwpp_status exact_alloc(iwpp_context *ctx, const exact_plan *P, exact_call *c, cl_uint len, cl_uint nseg)
{
    const char *ev = iwpp_tune(ctx, IWPP_TUNE_OCL_EDT_FRESH);
    const int fresh = ev && atoi(ev) == 1;
    work_need nd[NEEDS_MAX];
    const int m = exact_needs(P, c, len, nseg, nd);
    if (!fresh && ctx->scratch_cap > 0) {
        /* slots only grow: where this call's with those kept from calls of other shapes would
           hold more than a tiled call's region may, every slot is given back first */
        iwpp_ocl *s = iwpp_ocl_state(ctx);
        size_t after[IWPP_OCL_NSCRATCH];
        double total = 0;
        for (int i = 0; i < IWPP_OCL_NSCRATCH; ++i) after[i] = s->scratch_bytes[i];
        for (int i = 0; i < m; ++i)
            if (nd[i].bytes > after[nd[i].slot]) after[nd[i].slot] = nd[i].bytes;
        for (int i = 0; i < IWPP_OCL_NSCRATCH; ++i) total += (double)after[i];
        if (total > (double)ctx->scratch_cap) iwpp_ocl_scratch_drop(s);
    }
    iwpp_status rs = IWPP_OK;
    for (int i = 0; i < m && rs == IWPP_OK; ++i)
        rs = work_buf(ctx, fresh, nd[i].slot, nd[i].bytes, nd[i].what, nd[i].out, nd[i].own);
    return rs;
}

/* Pass A: in -> sites (ny in 2D, nz in 3D), `count` planes of `len` lines in segments of SEG_A
 * planes; the segment summaries (a1) are needed only with 2+ segments. */
static cl_int run_pass_a(const exact_call *c, const cl_kernel k[KX_COUNT], cl_uint len, cl_uint nseg, size_t lg)
{
    const cl_int count = c->is3 ? c->d : c->h;
    iwpp_kargs a1 = iwpp_kargs_of(c->s, k[KX_A1]), a2 = iwpp_kargs_of(c->s, k[KX_A2]);
    ka_mem(&a1, c->bin);
    ka_mem(&a1, c->seg);
    ka_uint(&a1, len);
    ka_int(&a1, count);
    ka_int(&a1, SEG_A);
    ka_uint(&a1, nseg);
    ka_mem(&a2, c->bin);
    ka_mem(&a2, c->seg);
    ka_mem(&a2, c->sites);
    ka_uint(&a2, len);
    ka_int(&a2, count);
    ka_int(&a2, SEG_A);
    ka_uint(&a2, nseg);
    cl_int err = a1.err != CL_SUCCESS ? a1.err : a2.err;
    if (err == CL_SUCCESS && nseg > 1) err = iwpp_ocl_run1d(c->s, k[KX_A1], (size_t)len * nseg, lg);
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(c->s, k[KX_A2], (size_t)len * nseg, lg);
    return err;
}

/* edt_envelope (one work-item per line): pass 1 = columns (x, z), pass 3 = transposed rows. */
static cl_int envelope_args(const exact_call *c, cl_kernel k, cl_int pass, cl_mem ny_in, cl_mem nz_in, cl_mem ny_out,
                            cl_mem nz_out, cl_mem dist, cl_mem near)
{
    iwpp_kargs a = iwpp_kargs_of(c->s, k);
    ka_int(&a, pass);
    ka_int(&a, c->w);
    ka_int(&a, c->h);
    ka_int(&a, c->d);
    ka_mem(&a, ny_in);
    ka_mem(&a, nz_in);
    ka_mem(&a, ny_out);
    ka_mem(&a, nz_out);
    ka_mem(&a, dist);
    ka_mem(&a, near);
    ka_int(&a, c->want);
    ka_mem(&a, c->v);
    ka_double(&a, c->hx);
    ka_double(&a, c->hy);
    ka_double(&a, c->hz);
    return a.err;
}

/* Pass B (3D), along y: nz -> ny2, nz2; tiles of cb_tx columns per work-group, or one work-item
 * per column. */
static cl_int run_cols(const exact_call *c, const exact_plan *P, const cl_kernel k[KX_COUNT])
{
    iwpp_ocl *s = c->s;
    if (P->cols == COLS_SERIAL) {
        cl_int err = envelope_args(c, k[KX_ENV], 1, c->sites, c->sites, c->ny2, c->nz2, c->md, c->md);
        return err != CL_SUCCESS ? err : iwpp_ocl_run1d(s, k[KX_ENV], (size_t)c->w * c->d, 64);
    }
    const cl_kernel kc = P->cols == COLS_MERGED ? k[KX_CENV] : k[KX_COLS]; /* the same arguments (+ intv) */
    const size_t lsz = iwpp_ocl_group_size(s, kc, s->is_gpu ? 256 : 64);
    const size_t tiles = ((size_t)c->w + (size_t)P->cb_tx - 1) / (size_t)P->cb_tx * (size_t)c->d;
    size_t groups = (size_t)s->compute_units * 64;
    if (groups > tiles) groups = tiles;
    iwpp_kargs a = iwpp_kargs_of(s, kc);
    ka_mem(&a, c->sites);
    ka_mem(&a, c->ny2);
    ka_mem(&a, c->nz2);
    ka_int(&a, c->w);
    ka_int(&a, c->h);
    ka_int(&a, c->d);
    ka_int(&a, P->cb_tx);
    ka_int(&a, (cl_int)P->cb_line);
    ka_double(&a, c->hy);
    ka_double(&a, c->hz);
    if (P->cols == COLS_MERGED) ka_int(&a, c->intv);
    ka_local(&a, (size_t)P->cb_tx * P->cb_line);
    return a.err != CL_SUCCESS ? a.err : iwpp_ocl_run1d(s, kc, groups * lsz, lsz);
}

/* Work-items per row from the tuning key ocl.edt_row_threads, else @p dflt. */
static size_t row_threads(const iwpp_context *ctx, iwpp_tune_key key, size_t dflt)
{
    const char *ev = iwpp_tune(ctx, key);
    return ev && atoi(ev) > 0 ? (size_t)atoi(ev) : dflt;
}

/* Pass C, merged band envelopes, one work-group per row: on GPUs about 4 pixels a work-item,
 * 64 to 512 (short 3D rows: more groups per compute unit). */
static cl_int run_rows_merged(const iwpp_context *ctx, const exact_call *c, const exact_plan *P, cl_kernel k,
                              cl_mem ny, cl_mem nz)
{
    iwpp_ocl *s = c->s;
    size_t want = 64;
    while (s->is_gpu && want < 512 && want * 4 < (size_t)c->w) want *= 2;
    const size_t lsz = iwpp_ocl_group_size(s, k, row_threads(ctx, IWPP_TUNE_OCL_EDT_ROW_THREADS, want));
    size_t groups = (size_t)s->compute_units * 64;
    if (groups > c->rows) groups = c->rows;
    iwpp_kargs a = iwpp_kargs_of(s, k);
    ka_mem(&a, ny);
    ka_mem(&a, nz);
    ka_mem(&a, c->md);
    ka_mem(&a, c->mn);
    ka_int(&a, c->want);
    ka_int(&a, c->w);
    ka_int(&a, c->h);
    ka_uint(&a, c->rows);
    ka_double(&a, c->hx);
    ka_double(&a, c->hy);
    ka_double(&a, c->hz);
    ka_int(&a, c->is3);
    ka_int(&a, c->intv);
    ka_local(&a, P->lm_row);
    return a.err != CL_SUCCESS ? a.err : iwpp_ocl_run1d(s, k, groups * lsz, lsz);
}

/* Pass C, banded query with the band tables in local memory, one work-group per row. */
static cl_int run_rows_banded(const iwpp_context *ctx, const exact_call *c, cl_kernel k, cl_mem ny, cl_mem nz)
{
    iwpp_ocl *s = c->s;
    const size_t nb = ((size_t)c->w + RB_S - 1) / RB_S, nsb = (nb + RB_SB - 1) / RB_SB;
    size_t want = row_threads(ctx, IWPP_TUNE_OCL_EDT_ROW_THREADS, s->is_gpu ? 512 : 64);
    const size_t wr = ((size_t)c->w + 31) / 32 * 32;
    const size_t lsz = iwpp_ocl_group_size(s, k, want > wr ? wr : want);
    size_t groups = (size_t)s->compute_units * 64;
    if (groups > c->rows) groups = c->rows;
    iwpp_kargs a = iwpp_kargs_of(s, k);
    ka_mem(&a, ny);
    if (c->is3) ka_mem(&a, nz);
    ka_mem(&a, c->md);
    ka_mem(&a, c->mn);
    ka_int(&a, c->want);
    ka_int(&a, c->w);
    ka_int(&a, c->h);
    ka_uint(&a, c->rows);
    ka_double(&a, c->hx);
    ka_double(&a, c->hy);
    if (c->is3) ka_double(&a, c->hz);
    ka_local(&a, nb * sizeof(cl_double));
    ka_local(&a, nsb * sizeof(cl_double));
    ka_local(&a, (size_t)RB_PAD((size_t)c->w) * (c->is3 ? sizeof(cl_double) : sizeof(cl_int)));
    ka_local(&a, nb);
    ka_local(&a, nb * RB_S);
    return a.err != CL_SUCCESS ? a.err : iwpp_ocl_run1d(s, k, groups * lsz, lsz);
}

/* Pass C with the band tables in global memory: build (WB_BANDS bands per group), then query
 * (one work-item per pixel, a row over several groups). */
static cl_int run_rows_wide(const iwpp_context *ctx, const exact_call *c, const cl_kernel k[KX_COUNT], cl_mem ny,
                            cl_mem nz)
{
    iwpp_ocl *s = c->s;
    const size_t nb = ((size_t)c->w + RB_S - 1) / RB_S, gpr = (nb + WB_BANDS - 1) / WB_BANDS;
    size_t groups = (size_t)s->compute_units * 256;
    if (groups > c->rows * gpr) groups = c->rows * gpr;
    iwpp_kargs b = iwpp_kargs_of(s, k[KX_WB]);
    ka_mem(&b, ny);
    ka_mem(&b, nz);
    ka_mem(&b, c->wcnt);
    ka_mem(&b, c->wstk);
    ka_mem(&b, c->wmin);
    ka_int(&b, c->w);
    ka_int(&b, c->h);
    ka_uint(&b, c->rows);
    ka_double(&b, c->hx);
    ka_double(&b, c->hy);
    ka_double(&b, c->hz);
    ka_int(&b, c->is3);
    ka_local(&b, (size_t)RB_PAD((size_t)(WB_BANDS * RB_S)) * sizeof(cl_double));
    ka_local(&b, (size_t)WB_BANDS * RB_S);
    ka_local(&b, (size_t)WB_BANDS * sizeof(cl_double));
    cl_int err = b.err;
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k[KX_WB], groups * WB_BANDS, WB_BANDS);
    const size_t lq = iwpp_ocl_group_size(s, k[KX_WQ], row_threads(ctx, IWPP_TUNE_OCL_EDT_WIDE_THREADS, s->is_gpu ? 256 : 64));
    const size_t qpr = ((size_t)c->w + lq - 1) / lq;
    iwpp_kargs q = iwpp_kargs_of(s, k[KX_WQ]);
    ka_mem(&q, ny);
    ka_mem(&q, nz);
    ka_mem(&q, c->wcnt);
    ka_mem(&q, c->wstk);
    ka_mem(&q, c->wmin);
    ka_mem(&q, c->md);
    ka_mem(&q, c->mn);
    ka_int(&q, c->want);
    ka_int(&q, c->w);
    ka_int(&q, c->h);
    ka_uint(&q, c->rows);
    ka_double(&q, c->hx);
    ka_double(&q, c->hy);
    ka_double(&q, c->hz);
    ka_int(&q, c->is3);
    if (err == CL_SUCCESS) err = q.err;
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k[KX_WQ], (size_t)c->rows * qpr * lq, lq);
    return err;
}

/* Pass C along x on transposed planes ([z][x][y]), so that neighbouring work-items (neighbouring
 * rows y) read and write neighbouring addresses; the same operations in the same order as the
 * CPU, only laid out apart. */
static cl_int run_rows_serial(const exact_call *c, const cl_kernel k[KX_COUNT], cl_mem ny)
{
    iwpp_ocl *s = c->s;
    cl_mem tny = c->tmap, tnz = c->is3 ? c->sites : c->tmap; /* sites (nz) is free after pass B */
    cl_mem distT = c->is3 ? c->ny2 : c->sites;                /* free once transposed */
    cl_int err = transpose(s, k[KX_TR], ny, tny, c->w, c->h, c->d, 0);
    if (err == CL_SUCCESS && c->is3) err = transpose(s, k[KX_TR], c->nz2, tnz, c->w, c->h, c->d, 0);
    if (err == CL_SUCCESS)
        err = envelope_args(c, k[KX_ENV], 3, tny, tnz, tny, tnz, distT, c->tnear ? c->tnear : distT);
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k[KX_ENV], (size_t)c->h * c->d, 64);
    if (err == CL_SUCCESS) err = transpose(s, k[KX_UNTR32], distT, c->md, c->w, c->h, c->d, 1);
    if (err == CL_SUCCESS && c->want) err = transpose(s, k[KX_UNTR64], c->tnear, c->mn, c->w, c->h, c->d, 1);
    return err;
}

/* Pass X (edt_lines.cl's edt_ln_x) in groups of 128 work-items: 32 a row for rows up to 2048
 * pixels (four rows a group), else 128 (one); local memory 3 words per run of 32 pixels and 2
 * per work-item, for each row. */
#define LNX_GROUP 128
static cl_int lnx_row_items(cl_int w) { return w <= 2048 ? 32 : LNX_GROUP; }
static size_t lnx_local_bytes(cl_int w)
{
    const cl_int g = lnx_row_items(w);
    return (size_t)(LNX_GROUP / g) * (3 * (size_t)((w + 31) / 32) + 2 * (size_t)g) * sizeof(cl_int);
}

static cl_int run_pass_x(const exact_call *c, cl_kernel k)
{
    const cl_int g = lnx_row_items(c->w);
    const size_t rpg = LNX_GROUP / (size_t)g;
    iwpp_kargs x = iwpp_kargs_of(c->s, k);
    ka_mem(&x, c->bin);
    ka_mem(&x, c->sites);
    ka_int(&x, c->w);
    ka_uint(&x, c->rows);
    ka_int(&x, g);
    ka_local(&x, lnx_local_bytes(c->w));
    const cl_int err = x.err != CL_SUCCESS ? x.err : iwpp_ocl_run1d(c->s, k, (c->rows + rpg - 1) / rpg * LNX_GROUP, LNX_GROUP);
    /* submitted now, so that the device starts on it while the host enqueues the later passes */
    return err == CL_SUCCESS ? c->s->api->clFlush(c->s->queue) : err;
}

/* The lines path: edt_ln_x (sites), then (3D) edt_ln_y (ny2: f2, nz2: sy), then edt_ln_out. */
static cl_int run_lines(const exact_call *c, const exact_plan *P, const cl_kernel k[KX_COUNT])
{
    iwpp_ocl *s = c->s;
    cl_mem f2 = c->is3 ? c->ny2 : c->sites, sy = c->is3 ? c->nz2 : c->sites;
    iwpp_kargs y = iwpp_kargs_of(s, k[KX_LY]), o = iwpp_kargs_of(s, k[KX_LOUT]);
    ka_mem(&y, c->sites);
    ka_mem(&y, f2);
    ka_mem(&y, sy);
    ka_int(&y, c->want);
    ka_mem(&y, c->v);
    ka_int(&y, c->w);
    ka_int(&y, c->h);
    ka_int(&y, c->d);
    ka_int(&y, P->ln_cap);
    ka_mem(&o, c->sites);
    ka_mem(&o, sy);
    ka_mem(&o, f2);
    ka_mem(&o, c->md);
    ka_mem(&o, c->mn);
    ka_int(&o, c->want);
    ka_mem(&o, c->v);
    ka_int(&o, c->w);
    ka_int(&o, c->h);
    ka_int(&o, c->d);
    ka_int(&o, P->ln_cap);
    cl_int err = y.err != CL_SUCCESS ? y.err : o.err;
    if (err == CL_SUCCESS) err = run_pass_x(c, k[KX_LX]);
    if (err == CL_SUCCESS && c->is3) err = iwpp_ocl_run1d(s, k[KX_LY], P->ln_items, 64);
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k[KX_LOUT], P->ln_items, 64);
    return err;
}

/* The column bands: edt_ln_x (sx in sites), edt_cb_hull, edt_cb_merge a level at a time (E in
 * ny2, R in nz2), edt_cb_colour over every row. */
static cl_int run_colbands(const exact_call *c, const exact_plan *P, const cl_kernel k[KX_COUNT])
{
    iwpp_ocl *s = c->s;
    const cl_int L = P->cb_l, K = P->cb_k, lc = P->cb_lc, y0 = 0, y1 = c->h;
    iwpp_kargs hl = iwpp_kargs_of(s, k[KX_CBH]), co = iwpp_kargs_of(s, k[KX_CBC]);
    ka_mem(&hl, c->sites);
    ka_mem(&hl, c->ny2);
    ka_mem(&hl, c->nz2);
    ka_int(&hl, c->w);
    ka_int(&hl, c->h);
    ka_int(&hl, L);
    ka_int(&hl, K);
    ka_mem(&co, c->ny2);
    ka_mem(&co, c->nz2);
    ka_mem(&co, c->md);
    ka_mem(&co, c->mn);
    ka_int(&co, c->want);
    ka_int(&co, c->w);
    ka_int(&co, c->h);
    ka_int(&co, L);
    ka_int(&co, K);
    ka_int(&co, lc);
    ka_int(&co, y0);
    ka_int(&co, y1);
    cl_int err = hl.err != CL_SUCCESS ? hl.err : co.err;
    /* groups of 64 (edt_colbands.cl's CB_GROUP) */
    if (err == CL_SUCCESS) err = run_pass_x(c, k[KX_LX]);
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k[KX_CBH], (size_t)c->w * (size_t)K, 64);
    if (err == CL_SUCCESS && K > 1) { /* every level in one launch: CB_MCOLS columns a group */
        iwpp_kargs m = iwpp_kargs_of(s, k[KX_CBM]);
        ka_mem(&m, c->ny2);
        ka_mem(&m, c->nz2);
        ka_int(&m, c->w);
        ka_int(&m, L);
        ka_int(&m, K);
        const size_t g = P->cb_mgroup;
        err = m.err != CL_SUCCESS ? m.err : iwpp_ocl_run1d(s, k[KX_CBM], ((size_t)c->w + CB_MCOLS - 1) / CB_MCOLS * g, g);
    }
    const size_t segs = (size_t)((y1 + lc - 1) / lc - y0 / lc);
    if (err == CL_SUCCESS) err = iwpp_ocl_run1d(s, k[KX_CBC], (size_t)c->w * segs, 64);
    return err;
}

static cl_int run_exact(const iwpp_context *ctx, const exact_call *c, const exact_plan *P, const cl_kernel k[KX_COUNT],
                        cl_uint len, cl_uint nseg)
{
    if (P->colbands) {
        const cl_int err = run_colbands(c, P, k);
        return err == CL_SUCCESS ? iwpp_ocl_finish(c->s) : err;
    }
    if (P->lines) {
        const cl_int err = run_lines(c, P, k);
        return err == CL_SUCCESS ? iwpp_ocl_finish(c->s) : err;
    }
    /* fixed group sizes also on CPU devices: PoCL compiles a kernel once per group size */
    cl_int err = run_pass_a(c, k, len, nseg, c->s->is_gpu ? 128 : 64);
    cl_mem ny = c->sites, nz = c->sites;
    if (c->is3) {
        if (err == CL_SUCCESS) err = run_cols(c, P, k);
        ny = c->ny2, nz = c->nz2;
    }
    if (err != CL_SUCCESS) return err;
    switch (P->rows) {
    case ROWS_MERGED: err = run_rows_merged(ctx, c, P, k[KX_RENV], ny, nz); break;
    case ROWS_BANDED: err = run_rows_banded(ctx, c, k[KX_ROWS], ny, nz); break;
    case ROWS_WIDE: err = run_rows_wide(ctx, c, k, ny, nz); break;
    default: err = run_rows_serial(c, k, ny); break;
    }
    return err == CL_SUCCESS ? iwpp_ocl_finish(c->s) : err;
}

/* A call's sizes and spacing in c, its kernels and its plan (the paths the device can take). */
static iwpp_status exact_prepare(iwpp_context *ctx, iwpp_type type, int64_t w, int64_t h, int64_t d,
                                 const double sp[3], int want, exact_call *c, exact_plan *P, cl_kernel k[KX_COUNT])
{
    iwpp_ocl *s = iwpp_ocl_state(ctx);
    memset(c, 0, sizeof *c);
    c->s = s;
    c->w = (cl_int)w, c->h = (cl_int)h, c->d = (cl_int)d, c->is3 = c->d > 1, c->want = want;
    c->rows = (cl_uint)c->h * (cl_uint)c->d;
    c->hx = sp[0], c->hy = sp[1], c->hz = sp[2];
    c->intv = sp[0] == 1.0 && sp[1] == 1.0 && sp[2] == 1.0 &&
              (int64_t)c->w * c->w + (int64_t)c->h * c->h + (int64_t)c->d * c->d < ((int64_t)1 << 31);
    iwpp_status rs = exact_kernels(ctx, type, c->is3, k);
    if (rs) return rs;
    plan_exact(ctx, s, iwpp_ocl_group_size(s, k[KX_WB], WB_BANDS) == WB_BANDS, c->intv, c->w, c->h, c->d, P);
    /* both run pass X's groups; the lines path needs its groups of 64 (local windows), the column
     * bands theirs (the hull's local windows) */
    const int pass_x_ok = iwpp_ocl_group_size(s, k[KX_LX], LNX_GROUP) == LNX_GROUP && lnx_local_bytes(c->w) <= s->local_mem;
    if (P->lines && (!pass_x_ok || iwpp_ocl_group_size(s, k[KX_LY], 64) != 64 || iwpp_ocl_group_size(s, k[KX_LOUT], 64) != 64))
        P->lines = 0;
    P->cb_mgroup = iwpp_ocl_group_size(s, k[KX_CBM], CB_MGROUP) / CB_MCOLS * CB_MCOLS; /* fewer slots loop */
    if (P->colbands && (!pass_x_ok || iwpp_ocl_group_size(s, k[KX_CBH], 64) != 64 || P->cb_mgroup == 0 ||
                        iwpp_ocl_group_size(s, k[KX_CBC], 64) != 64))
        P->colbands = 0;
    return IWPP_OK;
}

/* The work buffers an exact EDT of these sizes takes (the EDT tiles size their regions by it;
 * native/tiles.c); HUGE_VAL for a shape no call can take (more than 2^31 - 1 pixels: edt.c),
 * -1 where it is not known (the program does not build). */
double iwpp_ocl_edt_scratch_bytes(iwpp_context *ctx, iwpp_type type, int64_t w, int64_t h, int64_t d,
                                  const double sp[3], int nearest)
{
    exact_call c;
    exact_plan P;
    cl_kernel k[KX_COUNT];
    if ((double)w * (double)h * (double)d > (double)INT32_MAX) return HUGE_VAL;
    if (exact_prepare(ctx, type, w, h, d, sp, nearest, &c, &P, k) != IWPP_OK) {
        ctx->message[0] = '\0';
        return -1.0;
    }
    const cl_uint len = c.is3 ? (cl_uint)((int64_t)c.w * c.h) : (cl_uint)c.w;
    const cl_uint nseg = (cl_uint)(((c.is3 ? c.d : c.h) + SEG_A - 1) / SEG_A);
    work_need nd[NEEDS_MAX];
    const int m = exact_needs(&P, &c, len, nseg, nd);
    double bytes = 0;
    for (int i = 0; i < m; ++i) bytes += (double)nd[i].bytes;
    return bytes;
}

iwpp_status iwpp_ocl_edt_exact(iwpp_context *ctx, const iwpp_buf *bin, const double sp[3], iwpp_buf *dist,
                               iwpp_buf *nearest)
{
    iwpp_ocl *s = iwpp_ocl_state(ctx);
    exact_call c;
    exact_plan P;
    cl_kernel k[KX_COUNT];
    iwpp_status rs = exact_prepare(ctx, bin->type, bin->w, bin->h, bin->d, sp, nearest != NULL, &c, &P, k);
    if (rs) return rs;
    c.bin = (cl_mem)bin->ptr, c.md = (cl_mem)dist->ptr, c.mn = nearest ? (cl_mem)nearest->ptr : c.md;
    const cl_uint len = c.is3 ? (cl_uint)((int64_t)c.w * c.h) : (cl_uint)c.w;
    const cl_uint nseg = (cl_uint)(((c.is3 ? c.d : c.h) + SEG_A - 1) / SEG_A);
    if (!(rs = exact_alloc(ctx, &P, &c, len, nseg))) {
        cl_int err = run_exact(ctx, &c, &P, k, len, nseg);
        if (err != CL_SUCCESS) rs = iwpp_ocl_fail(ctx, err, "the exact distance transform kernels");
    }
    for (int i = 0; i < 8; ++i) iwpp_ocl_release(s, c.own[i]);
    if (rs) return rs;
    static const char *const rows_name[] = {"/merged-rows", "/banded-rows", "/banded-wide-rows", ""};
    static const char *const cols_name[] = {"", "/merged-cols", "/banded-cols", ""};
    if (P.colbands)
        snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "ocl-edt-exact-colbands/int");
    else if (P.lines)
        snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "ocl-edt-exact-lines/int");
    else
        snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "ocl-edt-exact-separable%s%s%s", rows_name[P.rows],
                 cols_name[P.cols], c.intv && (P.rows == ROWS_MERGED || P.cols == COLS_MERGED) ? "/int" : "");
    ctx->stats.pixels_visited = 0;
    ctx->stats.rounds = c.is3 ? 3 : (c.h > 1 ? 2 : 1);
    return IWPP_OK;
}
