/*
 * cpu/labels.c - the CPU backend's labeling (the watershed: cpu/watershed.c).
 *
 * Label: union-find where every root is the smallest index of its set, built in bands of
 * whole rows (2D) or planes (3D), one per thread, then joined across the bands' seams; roots
 * are numbered in raster order by a prefix sum over the bands. 32-bit indices below 2^32 - 1
 * pixels, 64-bit above (label_impl.h, compiled twice).
 */
#include "cpu/cpu.h"
#include "cpu/pool.h"
#include "dispatch.h"
#include "neighborhood.h"

#include <stdlib.h>
#include <string.h>

/* Threads get at least this many pixels each (smaller images run sequentially). */
#define LAB_PX_PER_THREAD ((int64_t)1 << 19)

/* A pixel's value as a key with the equality of the values (F32: -0 is 0). */
static inline uint32_t lab_key(const void *in, iwpp_type t, int64_t i)
{
    if (t == IWPP_U8) return ((const uint8_t *)in)[i];
    if (t == IWPP_U16) return ((const uint16_t *)in)[i];
    uint32_t u;
    memcpy(&u, (const float *)in + i, sizeof u);
    return (u << 1) ? u : 0u;
}

typedef struct lab_job {
    const void *in;
    iwpp_type type;
    int64_t w, h, d;
    int equal;
    int nprev;         /* neighbours met before the centre in raster order */
    int off[13][3];
    int64_t delta[13]; /* their index offsets */
} lab_job;

static int cmp_idx_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}
static int cmp_idx_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

#define IDX uint32_t
#define ISUF u32
#include "cpu/label_impl.h"
#define IDX uint64_t
#define ISUF u64
#include "cpu/label_impl.h"

/* ---------------------------------------------------------------- label */

typedef struct lab_run {
    const lab_job *J;
    const int64_t *band_lo;
    int64_t *first; /* per band: labels before it (step 4), or its root count */
    void *par;
    void *out;
    int wide, u16, step;
} lab_run;

static void lab_bands(void *arg, int64_t b0, int64_t b1, int worker)
{
    (void)worker;
    const lab_run *R = arg;
    for (int64_t b = b0; b < b1; ++b) {
        const int64_t lo = R->band_lo[b], hi = R->band_lo[b + 1];
        if (R->wide) {
            uint64_t *par = R->par;
            if (R->step == 1) uf_band_u64(R->J, lo, hi, par);
            else if (R->step == 3) uf_flatten_u64(lo, hi, par), R->first[b] = uf_count_roots_u64(lo, hi, par);
            else if (R->step == 4) uf_write_roots_u64(lo, hi, R->first[b], par, R->out, R->u16);
            else uf_write_rest_u64(lo, hi, par, R->out, R->u16);
        } else {
            uint32_t *par = R->par;
            if (R->step == 1) uf_band_u32(R->J, lo, hi, par);
            else if (R->step == 3) uf_flatten_u32(lo, hi, par), R->first[b] = uf_count_roots_u32(lo, hi, par);
            else if (R->step == 4) uf_write_roots_u32(lo, hi, R->first[b], par, R->out, R->u16);
            else uf_write_rest_u32(lo, hi, par, R->out, R->u16);
        }
    }
}

static void lab_job_init(lab_job *J, const iwpp_buf *in, int connectivity, int equal)
{
    int off[26][3];
    const int nn = iwpp_neighbors(connectivity, in->d == 1, off);
    J->in = in->ptr;
    J->type = in->type;
    J->w = in->w, J->h = in->h, J->d = in->d;
    J->equal = equal;
    J->nprev = nn / 2;
    for (int k = 0; k < J->nprev; ++k) {
        memcpy(J->off[k], off[k], sizeof off[k]);
        J->delta[k] = off[k][0] + in->w * (off[k][1] + in->h * off[k][2]);
    }
}

iwpp_status iwpp_cpu_label(iwpp_context *ctx, const iwpp_buf *in, int connectivity, iwpp_label_mode mode,
                           iwpp_buf *labels, int64_t *count)
{
    const double t0 = iwpp_now_ms();
    const int64_t n = iwpp_buf_count(in), lines = in->d > 1 ? in->d : in->h, line = n / lines;
    const int wide = n >= (int64_t)UINT32_MAX;
    const int nt = iwpp_cpu_threads_for(ctx, n, LAB_PX_PER_THREAD);
    const int nb = (int)(nt < lines ? nt : lines);
    lab_job J;
    lab_job_init(&J, in, connectivity, mode == IWPP_LABEL_EQUAL);
    int64_t *band_lo = malloc((size_t)(2 * nb + 2) * sizeof *band_lo);
    void *par = malloc((size_t)(n ? n : 1) * (wide ? 8 : 4));
    if (!band_lo || !par) {
        free(band_lo);
        free(par);
        return iwpp_set_error(ctx, IWPP_ENOMEM, "out of host memory for the labeling of %lld pixels (%.1f MiB)",
                              (long long)n, (double)n * (wide ? 8 : 4) / 1048576.0);
    }
    int64_t *first = band_lo + nb + 1;
    for (int b = 0; b <= nb; ++b) band_lo[b] = lines * b / nb * line;
    lab_run R = {&J, band_lo, first, par, labels->ptr, wide, labels->type == IWPP_U16, 1};
    iwpp_par_for(nt, nb, 1, lab_bands, &R);
    iwpp_status st = wide ? uf_seams_u64(&J, band_lo, nb, par) : uf_seams_u32(&J, band_lo, nb, par);
    if (st) {
        free(band_lo);
        free(par);
        return iwpp_set_error(ctx, st, "out of host memory joining the bands of a labeling");
    }
    R.step = 3;
    iwpp_par_for(nt, nb, 1, lab_bands, &R);
    int64_t total = 0;
    for (int b = 0; b < nb; ++b) {
        const int64_t c = first[b];
        first[b] = total;
        total += c;
    }
    if (labels->type == IWPP_U16 && total > 65535) {
        free(band_lo);
        free(par);
        return iwpp_labels_overflow(ctx, total);
    }
    R.step = 4; /* nothing can fail from here: the output may be the caller's view */
    iwpp_par_for(nt, nb, 1, lab_bands, &R);
    R.step = 5;
    iwpp_par_for(nt, nb, 1, lab_bands, &R);
    free(band_lo);
    free(par);
    *count = total;
    strcpy(ctx->stats.variant, "union-find");
    ctx->stats.compute_ms = iwpp_now_ms() - t0;
    return IWPP_OK;
}
