/*
 * mlqueue.c - the host side of the work-group queues (mlqueue.cl's MLQ_GROUP_ROUNDS): the plan
 * (variant, private queue depth, local memory split, capacity), the queue kernel's trailing
 * arguments, and one run with its statistics. Used by reconstruct.c and edt_danielsson.c; the
 * CUDA counterpart is cuda/mlqueue.cuh.
 */
#include "ocl.h"

/* Measured on the H100 with NVIDIA's OpenCL (8192², compute ms, one run, .device script d3 of
 * session 10): the Danielsson EDT on nuclei / ring_n1 / line1 / rand_1e-2 / checker8 / rand_0.5
 * took 6.28 / 86.8 / 54.3 / 13.1 / 14.5 / 17.7 with 8 groups per unit and 32 private entries
 * (the earlier sizes), 6.11 / 81.3 / 41.2 / 10.4 / 12.9 / 15.8 with 4 and 8, the best of the nine
 * pairs of {2, 4, 8} x {8, 16, 32}; the U8 reconstruction (4- / 8-connected) moved within its
 * run-to-run spread (11.0 / 12.7 against 10.1 / 12.0 ms). */
#define TQ_CAP 8 /* private queue entries per work-item on GPUs (multi-level variant; ocl.queue_tq) */
#define GROUPS_PER_CU 4 /* queue work-groups per compute unit on GPUs (ocl.queue_groups) */
/* CPU devices (PoCL) keep the earlier sizes: 2 groups per unit, 32 private entries. */

iwpp_status iwpp_ocl_mlq_plan(iwpp_context *ctx, cl_kernel k, int noffs, uint64_t n, const char *what,
                              iwpp_ocl_mlq *q)
{
    iwpp_ocl *s = iwpp_ocl_state(ctx);
    const int nb = noffs > 0 ? noffs : 1;
    q->L = iwpp_ocl_group_size(s, k, s->is_gpu ? 256 : 64);
    q->G = (size_t)s->compute_units *
           (size_t)iwpp_tune_int(ctx, IWPP_TUNE_OCL_QUEUE_GROUPS, s->is_gpu ? GROUPS_PER_CU : 2, 1, 64);
    if (q->G < 1) q->G = 1;
    if (q->G > 4096) q->G = 4096;
    q->K = 1, q->variant = 0, q->vname = "multilevel";
    q->leave_rounds = 0;
    if (ctx->queue_variant == IWPP_QUEUE_ATOMIC) {
        q->variant = 1, q->vname = "atomic";
    } else if (ctx->queue_variant == IWPP_QUEUE_PREFIXSUM) {
        q->variant = 2, q->vname = "prefixsum";
    } else {
        q->K = (cl_uint)(iwpp_tune_int(ctx, IWPP_TUNE_OCL_QUEUE_TQ, s->is_gpu ? TQ_CAP : 32, 1, 1024) / nb);
        if (q->K < 1) q->K = 1;
    }
    /* Local memory: private queues (L * K * noffs words), the scan (L), the work-group queue
     * (bq_cap, at most 2048 and at least 256). */
    const cl_ulong lwords = s->local_mem / sizeof(cl_uint) - 64;
    q->tq_words = q->L * q->K * (size_t)nb;
    while (q->K > 1 && q->tq_words + q->L + 256 > lwords) q->tq_words = q->L * --q->K * (size_t)nb;
    if (q->tq_words + q->L + 256 > lwords)
        return iwpp_set_error(ctx, IWPP_EUNSUPPORTED,
                              "OpenCL: %s has only %llu bytes of local memory; the %s queue needs %llu; "
                              "use the CPU backend",
                              s->name, (unsigned long long)s->local_mem, what,
                              (unsigned long long)((q->tq_words + q->L + 256 + 64) * 4));
    q->bq_cap = 2048;
    if ((cl_ulong)q->bq_cap + q->L + q->tq_words > lwords) q->bq_cap = (cl_uint)(lwords - q->L - q->tq_words);
    /* queue capacity per group (each group has an in and an out half) */
    uint64_t cap64 = (uint64_t)ctx->queue_capacity;
    if (ctx->queue_capacity <= 0) {
        cap64 = (n < (1u << 25) ? n : (1u << 25)) / q->G;
        if (cap64 < 4096) cap64 = 4096;
    }
    if (cap64 * q->G * 2 > 0x7fffffffULL) cap64 = 0x7fffffffULL / (q->G * 2);
    q->cap = (cl_uint)cap64;
    return IWPP_OK;
}

void iwpp_ocl_mlq_args(iwpp_kargs *a, const iwpp_ocl_mlq *q, cl_mem seeds, cl_uint nseeds, cl_mem gq,
                       cl_mem counters, cl_mem gstats)
{
    ka_mem(a, seeds);
    ka_uint(a, nseeds);
    ka_mem(a, gq);
    ka_uint(a, q->cap);
    ka_mem(a, counters);
    ka_mem(a, gstats);
    ka_local(a, q->bq_cap * sizeof(cl_uint));
    ka_uint(a, q->bq_cap);
    ka_local(a, (q->L + 1) * sizeof(cl_uint));
    ka_local(a, q->tq_words * sizeof(cl_uint));
    ka_uint(a, q->K);
    ka_int(a, q->variant);
    ka_uint(a, q->leave_rounds);
}

cl_int iwpp_ocl_mlq_run(iwpp_context *ctx, cl_kernel k, const iwpp_ocl_mlq *q, cl_mem counters, cl_mem gstats,
                        cl_uint *host, int *overflow, int *left)
{
    iwpp_ocl *s = iwpp_ocl_state(ctx);
    cl_int err = iwpp_ocl_run1d(s, k, q->G * q->L, q->L); /* (timed there under ocl.profile) */
    if (err == CL_SUCCESS)
        err = s->api->clEnqueueReadBuffer(s->queue, counters, CL_TRUE, 0, 2 * sizeof(cl_uint), host, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = s->api->clEnqueueReadBuffer(s->queue, gstats, CL_TRUE, 0, 2 * q->G * sizeof(cl_uint), host + 2, 0,
                                          NULL, NULL);
    if (err != CL_SUCCESS) return err;
    int64_t rmax = 0;
    for (size_t g = 0; g < q->G; ++g) {
        ctx->stats.pixels_visited += host[2 + 2 * g];
        if ((int64_t)host[3 + 2 * g] > rmax) rmax = host[3 + 2 * g];
    }
    ctx->stats.rounds += rmax;
    *overflow = host[1] != 0;
    if (left) {
        cl_uint n_left = 0;
        if (q->leave_rounds > 0 && *overflow)
            err = s->api->clEnqueueReadBuffer(s->queue, counters, CL_TRUE, (3 + q->G) * sizeof(cl_uint),
                                              sizeof(cl_uint), &n_left, 0, NULL, NULL);
        *left = n_left != 0;
    }
    return err;
}
