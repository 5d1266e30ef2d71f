/* ocl.h - state and helpers shared by the OpenCL backend's host files (internal). */
#ifndef IWPP_OCL_H
#define IWPP_OCL_H

#include "backend.h"
#include "loader.h"

/* Programs: each is built once per device and pixel type in a process, on first use
 * (backend.c, shared_program); kernels are created per context. */
enum {
    IWPP_OCL_PROG_MAIN = 0, /* pointwise, morph_unit, minmax, reconstruction */
    IWPP_OCL_PROG_EDT = 1,  /* distance transforms (needs cl_khr_fp64) */
    IWPP_OCL_PROG_LABEL = 2, /* labeling and the watershed (label.cl, watershed.cl) */
    IWPP_OCL_NPROG = 3
};
#define IWPP_OCL_NTYPES 4 /* indexed by iwpp_type (U8, U16, F32; I64 unused) */
#define IWPP_OCL_MAX_KERNELS 48
#define IWPP_OCL_NSCRATCH 8 /* work buffers kept between calls (iwpp_ocl_scratch) */
#define IWPP_OCL_NPOOL 4     /* freed image buffers kept for the next call's images (ocl_buf_alloc) */
#define IWPP_OCL_STAGE_BUFS 4                    /* page-locked staging buffers (as CUDA's) */
#define IWPP_OCL_STAGE_CHUNK ((size_t)16 << 20) /* bytes each (ocl.stage_chunk) */
#define IWPP_OCL_STAGE_MIN ((size_t)2 << 20)    /* smaller transfers go straight (ocl.stage) */
#define IWPP_OCL_STAGE_THREADS 16               /* host threads packing a chunk, at most the context's */

typedef struct iwpp_ocl_program {
    cl_program prog; /* the process-wide program (one reference held here) */
    int nk;
    const char *names[IWPP_OCL_MAX_KERNELS];
    cl_kernel kernels[IWPP_OCL_MAX_KERNELS];
} iwpp_ocl_program;

typedef struct iwpp_ocl {
    const iwpp_ocl_api *api;
    cl_platform_id platform;
    cl_device_id device;
    int dev_index;           /* index in the process-wide device list */
    cl_context context;      /* shared by every context on this device (one reference each) */
    cl_command_queue queue;
    int is_gpu;
    cl_uint compute_units;
    size_t max_wg;           /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
    cl_ulong local_mem;      /* bytes */
    cl_ulong max_alloc;      /* CL_DEVICE_MAX_MEM_ALLOC_SIZE */
    cl_ulong global_mem;
    int has_fp64;
    int has_int64_atomics;
    int sqrt_cr; /* single-precision sqrt correctly rounded when built with -cl-fp32-correctly-rounded-divide-sqrt */
    int launch_alone; /* one queue at a time runs kernels (PoCL before 7.0: iwpp_ocl_enqueue) */
    int nv_ptx;       /* NVIDIA's OpenCL: programs may hold inline PTX (-DIWPP_NV_PTX=1) */
    char name[256];
    cl_event timer_ev, timer_end; /* iwpp_ocl_timer_start's and iwpp_ocl_timer_mark's markers */
    double timer_t0;
    /* ocl.profile: every kernel waited for and timed, the sums printed at close */
    int profile;
    int nprof;
    struct {
        char kernel[48];
        long calls;
        double ms;
    } prof[32];
    iwpp_ocl_program progs[IWPP_OCL_NPROG][IWPP_OCL_NTYPES];
    cl_mem scratch[IWPP_OCL_NSCRATCH];
    size_t scratch_bytes[IWPP_OCL_NSCRATCH];
    cl_mem pool[IWPP_OCL_NPOOL]; /* oldest first */
    size_t pool_bytes[IWPP_OCL_NPOOL];
    int stage_state; /* 0: not made yet, 1: ready, -1: could not be made */
    size_t stage_chunk;
    cl_mem stage_mem[IWPP_OCL_STAGE_BUFS];
    void *stage_ptr[IWPP_OCL_STAGE_BUFS]; /* mapped for the context's lifetime */
} iwpp_ocl;

static inline iwpp_ocl *iwpp_ocl_state(iwpp_context *ctx) { return (iwpp_ocl *)ctx->backend_state; }

/** Kernel @p name of program @p prog for pixel type @p type (built on first use). */
iwpp_status iwpp_ocl_kernel(iwpp_context *ctx, int prog, iwpp_type type, const char *name,
                            cl_kernel *out);
/** Set the error for a failed OpenCL call @p what (ENOMEM for allocation failures). */
iwpp_status iwpp_ocl_fail(iwpp_context *ctx, cl_int err, const char *what);
/** Enqueue kernel @p k over @p dims dimensions (@p local may be NULL; @p ev, if not NULL, gets
 *  its event). Every kernel launch goes through here: where the device is PoCL's CPU device
 *  before 7.0 (launch_alone), only one context at a time has kernels in flight (backend.c). */
cl_int iwpp_ocl_enqueue(iwpp_ocl *s, cl_kernel k, cl_uint dims, const size_t *global, const size_t *local,
                        cl_event *ev);
/** Enqueue a 1D range of at least @p n work-items in groups of @p local (0 = the runtime's choice on
 *  a GPU, 64 on a CPU device); the kernel must ignore items past its range. */
cl_int iwpp_ocl_run1d(iwpp_ocl *s, cl_kernel k, size_t n, size_t local);
/** A call's compute time as CUDA's events give it: start marks the queue before the call's first
 *  command, mark right after its last one (iwpp_ocl_finish: mark, then clFinish); ms returns the
 *  device time between the two marks (marking first if nothing did), or the host's wall time
 *  where the device gives no profiling stamps. */
void iwpp_ocl_timer_start(iwpp_ocl *s);
void iwpp_ocl_timer_mark(iwpp_ocl *s);
cl_int iwpp_ocl_finish(iwpp_ocl *s);
double iwpp_ocl_timer_ms(iwpp_ocl *s);
/** Allocate a device buffer of @p bytes; ENOMEM with the size in the message. */
iwpp_status iwpp_ocl_alloc(iwpp_context *ctx, size_t bytes, const char *what, cl_mem *out);
/** Work buffer @p slot (0 <= slot < IWPP_OCL_NSCRATCH) of at least @p bytes, kept between calls
 *  and grown when too small; released with the context (not by the caller). */
iwpp_status iwpp_ocl_scratch(iwpp_context *ctx, int slot, size_t bytes, const char *what,
                             cl_mem *out);
/** Release a cl_mem (NULL-safe). */
void iwpp_ocl_release(iwpp_ocl *s, cl_mem m);
/** Gives back every kept work buffer (iwpp_ocl_scratch); returns whether any was held. Only
 *  where no buffer taken from a slot is still in use. */
int iwpp_ocl_scratch_drop(iwpp_ocl *s);
/** Work buffers of slots 0..n-1 (iwpp_ocl_scratch), bytes[i] each, into out[i]; where they do
 *  not fit, every kept buffer goes back and they are taken once more, fresh. */
iwpp_status iwpp_ocl_scratch_set(iwpp_context *ctx, int n, const size_t *bytes, const char *const *what,
                                 cl_mem *out);
/** Work-group size for kernel @p k: a multiple of its preferred multiple, at most @p want. */
size_t iwpp_ocl_group_size(iwpp_ocl *s, cl_kernel k, size_t want);

/* Kernel arguments in signature order: each setter takes the C type of its parameter, so the
 * size is right by construction, and the position is the running count (no hand-numbered
 * indices). The first error is kept in a->err. Each kernel has one short function that sets all
 * of its arguments through these, next to the code that launches it. */
typedef struct iwpp_kargs {
    iwpp_ocl *s;
    cl_kernel k;
    cl_uint next;
    cl_int err;
} iwpp_kargs;
static inline iwpp_kargs iwpp_kargs_of(iwpp_ocl *s, cl_kernel k)
{
    iwpp_kargs a = {s, k, 0, CL_SUCCESS};
    return a;
}
static inline void ka_set(iwpp_kargs *a, size_t bytes, const void *v)
{
    if (a->err == CL_SUCCESS) a->err = a->s->api->clSetKernelArg(a->k, a->next, bytes, v);
    a->next++;
}
static inline void ka_mem(iwpp_kargs *a, cl_mem m) { ka_set(a, sizeof m, &m); }
static inline void ka_int(iwpp_kargs *a, cl_int v) { ka_set(a, sizeof v, &v); }
static inline void ka_uint(iwpp_kargs *a, cl_uint v) { ka_set(a, sizeof v, &v); }
static inline void ka_long(iwpp_kargs *a, cl_long v) { ka_set(a, sizeof v, &v); }
static inline void ka_ulong(iwpp_kargs *a, cl_ulong v) { ka_set(a, sizeof v, &v); }
static inline void ka_float(iwpp_kargs *a, cl_float v) { ka_set(a, sizeof v, &v); }
static inline void ka_double(iwpp_kargs *a, cl_double v) { ka_set(a, sizeof v, &v); }
static inline void ka_int4(iwpp_kargs *a, cl_int4 v) { ka_set(a, sizeof v, &v); }
/* A __local buffer of @p bytes. */
static inline void ka_local(iwpp_kargs *a, size_t bytes) { ka_set(a, bytes, NULL); }

/* to_keys / from_keys (pointwise.cl) of @p n pixels: dst, src, inv, n. */
static inline cl_int iwpp_ocl_keys(iwpp_ocl *s, cl_kernel k, cl_mem dst, cl_mem src, cl_uint inv, cl_uint n)
{
    iwpp_kargs a = iwpp_kargs_of(s, k);
    ka_mem(&a, dst);
    ka_mem(&a, src);
    ka_uint(&a, inv);
    ka_uint(&a, n);
    return a.err != CL_SUCCESS ? a.err : iwpp_ocl_run1d(s, k, n, 0);
}

/* The work-group queues of mlqueue.cl's MLQ_GROUP_ROUNDS (host side: mlqueue.c), shared by the
 * reconstruction and the Danielsson EDT. */
typedef struct iwpp_ocl_mlq {
    size_t L, G;        /* work-group size, work-groups */
    cl_uint K;          /* private queue entries per neighbour (multi-level) */
    cl_int variant;     /* 0 multi-level, 1 atomic, 2 prefix-sum (the kernels' switch) */
    const char *vname;  /* "multilevel", "atomic", "prefixsum" */
    size_t tq_words;    /* private queue words in local memory */
    cl_uint bq_cap;     /* work-group queue entries */
    cl_uint cap;        /* per-group global queue capacity (an in and an out half each) */
    cl_uint leave_rounds; /* > 0: groups left behind by the others leave (mlqueue.cl); the
                             counters then need 4 + G words. 0 from iwpp_ocl_mlq_plan */
} iwpp_ocl_mlq;
/** Sizes the queues for kernel @p k, @p noffs neighbours and an image of @p n pixels, from the
 *  device and the context's queue settings; @p what names the operation in errors. */
iwpp_status iwpp_ocl_mlq_plan(iwpp_context *ctx, cl_kernel k, int noffs, uint64_t n, const char *what,
                              iwpp_ocl_mlq *q);
/** Sets the queue kernel's trailing arguments, seeds .. variant (MLQ_GROUP_ROUNDS's names). */
void iwpp_ocl_mlq_args(iwpp_kargs *a, const iwpp_ocl_mlq *q, cl_mem seeds, cl_uint nseeds, cl_mem gq,
                       cl_mem counters, cl_mem gstats);
/** Runs queue kernel @p k (its arguments set) and waits: adds the items taken and the largest
 *  group's rounds to ctx's stats; *overflow = a queue overflowed or a group left early
 *  (counters[1]); *left (may be NULL) = a group left early. host: scratch of 2 + 2 G words. */
cl_int iwpp_ocl_mlq_run(iwpp_context *ctx, cl_kernel k, const iwpp_ocl_mlq *q, cl_mem counters, cl_mem gstats,
                        cl_uint *host, int *overflow, int *left);

/* Operation files. */
/** The two distance transforms (edt_exact.c, edt_danielsson.c; entry iwpp_ocl_edt in edt.c). */
iwpp_status iwpp_ocl_edt_exact(iwpp_context *ctx, const iwpp_buf *bin, const double sp[3], iwpp_buf *dist,
                               iwpp_buf *nearest);
double iwpp_ocl_edt_scratch_bytes(iwpp_context *ctx, iwpp_type type, int64_t w, int64_t h, int64_t d,
                                  const double sp[3], int nearest);
iwpp_status iwpp_ocl_edt_danielsson(iwpp_context *ctx, const iwpp_buf *bin, const double sp[3], iwpp_buf *dist,
                                    iwpp_buf *nearest);
/** IWPP-MP reconstruction (megapixel.c); the caller started the timer (iwpp_ocl_timer_start). */
iwpp_status iwpp_ocl_megapixel(iwpp_context *ctx, iwpp_buf *marker, const iwpp_buf *mask, int connectivity,
                               iwpp_morph_mode mode);
iwpp_status iwpp_ocl_pointwise(iwpp_context *ctx, iwpp_pw_op op, iwpp_buf *dst, const iwpp_buf *a,
                               const iwpp_buf *b, double s);
iwpp_status iwpp_ocl_morph_unit(iwpp_context *ctx, iwpp_buf *dst, const iwpp_buf *src,
                                int connectivity, iwpp_morph_mode mode, int iterations);
iwpp_status iwpp_ocl_minmax(iwpp_context *ctx, const iwpp_buf *a, double *min, double *max);
iwpp_status iwpp_ocl_reconstruct(iwpp_context *ctx, iwpp_buf *marker, const iwpp_buf *mask,
                                 int connectivity, iwpp_morph_mode mode);
iwpp_status iwpp_ocl_edt(iwpp_context *ctx, const iwpp_buf *binary, iwpp_edt_method method,
                         const double spacing[3], iwpp_buf *dist, iwpp_buf *nearest);
iwpp_status iwpp_ocl_label(iwpp_context *ctx, const iwpp_buf *in, int connectivity,
                           iwpp_label_mode mode, iwpp_buf *labels, int64_t *count);
iwpp_status iwpp_ocl_watershed(iwpp_context *ctx, const iwpp_buf *in, const iwpp_buf *markers,
                               const iwpp_buf *mask, int connectivity, int lines,
                               iwpp_buf *labels);

/* Neighbour offsets as int4 {dx, dy, dz, linear delta} in a small read-only buffer. */
iwpp_status iwpp_ocl_offsets(iwpp_context *ctx, int connectivity, const iwpp_buf *like,
                             cl_mem *out, int *count);

#endif
