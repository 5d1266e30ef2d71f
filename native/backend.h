/*
 * backend.h - the interface every backend (cpu, cuda, opencl) implements.
 * Internal: not installed, not part of the public API.
 *
 * dispatch.c checks every argument once, then works only through an ops
 * table. Backends therefore trust their arguments: sizes match, types are
 * supported, connectivity is valid for the dimensionality.
 *
 * Buffers (iwpp_buf) are backend-resident, contiguous images: host memory for
 * the CPU, device memory for CUDA, a cl_mem for OpenCL. Composed operations
 * (native/ops/) upload once, chain primitives on buffers, download once.
 */
#ifndef IWPP_BACKEND_H
#define IWPP_BACKEND_H

#include "iwpp.h"

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A contiguous backend-resident image. Pixel (x,y,z) is element x + w*(y + h*z). */
typedef struct iwpp_buf {
    iwpp_type type;
    int64_t w, h, d;
    void *ptr;  /**< host pointer (cpu), device pointer (cuda), cl_mem (opencl) */
    void *priv; /**< backend-private */
    int kept;   /**< set before buf_alloc: the buffer is kept between calls (tile regions), so
                     CUDA allocates it exactly instead of from its pool, which maps memory in
                     chunks larger than a small budget's share */
} iwpp_buf;

static inline int64_t iwpp_buf_count(const iwpp_buf *b) { return b->w * b->h * b->d; }

/* The Danielsson EDT by tiles on the GPUs (cuda/edt_danielsson.cu, opencl/edt_danielsson.c): log2
 * of the tile side, for a side of at most `side` (2D; 3D cubes: at most 8) whose work-group of
 * 2 side^(dim - 1) items (the two directions of a sweep, a plane each) is at most `group`. */
static inline int iwpp_dan_tile_side(int64_t d, int side, int group)
{
    int l = 0;
    while ((2 << l) <= side && l < 6) ++l;
    if (d > 1 && l > 3) l = 3;
    while (l > 0 && ((int64_t)2 << (l * (d > 1 ? 2 : 1))) > group) --l;
    return l;
}

/**
 * Pointwise primitives (dst may alias a or b). "sat" = saturate to the type's range.
 * Arithmetic is defined so that every backend gives the same bits:
 *  - integers: exact in 64-bit, then saturated; the scalar s is already an integer;
 *  - F32: single precision, a - (float)s / a + (float)s / a - b, IEEE round to nearest.
 */
typedef enum iwpp_pw_op {
    IWPP_PW_COPY,        /**< dst = a */
    IWPP_PW_FILL,        /**< dst = (T)s                                  (a, b unused) */
    IWPP_PW_MIN,         /**< dst = min(a, b) */
    IWPP_PW_MAX,         /**< dst = max(a, b) */
    IWPP_PW_SUB_SCALAR,  /**< dst = sat(a - s); s already rounded for integer types */
    IWPP_PW_ADD_SCALAR,  /**< dst = sat(a + s) */
    IWPP_PW_STEP_DOWN,   /**< dst = sat(a - 1) for integers, nextafterf(a, -inf) for F32 */
    IWPP_PW_STEP_UP,     /**< dst = sat(a + 1) for integers, nextafterf(a, +inf) for F32 */
    IWPP_PW_SUB,         /**< dst = sat(a - b) */
    IWPP_PW_BORDER,      /**< dst = a on the border (x, y at their ends; z too if d > 1), else (T)s */
    IWPP_PW_LESS,        /**< dst (U8) = a < b ? 255 : 0 */
    IWPP_PW_GREATER      /**< dst (U8) = a > b ? 255 : 0 */
} iwpp_pw_op;

typedef struct iwpp_backend_ops {
    iwpp_backend kind;
    const char *name;

    /* ---- process-wide queries (no context) ---- */
    /** 1 if usable; else 0 and a reason in @p reason. */
    int (*probe)(char *reason, size_t reason_size);
    int (*device_count)(void);
    iwpp_status (*device_info)(int index, iwpp_device_info *out);

    /* ---- per context ---- */
    /** Open device ctx->device; store backend state in ctx->backend_state. Set the error on failure. */
    iwpp_status (*open)(iwpp_context *ctx);
    /** Release ctx->backend_state (may be NULL). */
    void (*close)(iwpp_context *ctx);

    /** Allocate b->ptr for b->type, b->w, b->h, b->d (already set). ENOMEM with sizes in the message. */
    iwpp_status (*buf_alloc)(iwpp_context *ctx, iwpp_buf *b);
    /** Free b->ptr (NULL-safe) and set it to NULL. */
    void (*buf_free)(iwpp_context *ctx, iwpp_buf *b);
    /** Copy a (possibly strided) host view into a buffer of the same type and sizes. */
    iwpp_status (*upload)(iwpp_context *ctx, iwpp_buf *dst, const iwpp_image *src);
    /** Copy a buffer into a (possibly strided) host view of the same type and sizes. */
    iwpp_status (*download)(iwpp_context *ctx, const iwpp_buf *src, iwpp_image *dst);

    /** Reconstruction in place in @p marker; marker is already clipped to the mask. */
    iwpp_status (*reconstruct)(iwpp_context *ctx, iwpp_buf *marker, const iwpp_buf *mask,
                               int connectivity, iwpp_morph_mode mode);
    /** Distance transform: dist F32; nearest I64 or NULL; spacing never NULL. */
    iwpp_status (*edt)(iwpp_context *ctx, const iwpp_buf *binary, iwpp_edt_method method,
                       const double spacing[3], iwpp_buf *dist, iwpp_buf *nearest);
    /** Pointwise primitive; see iwpp_pw_op. b may be NULL where unused. */
    iwpp_status (*pointwise)(iwpp_context *ctx, iwpp_pw_op op, iwpp_buf *dst, const iwpp_buf *a,
                             const iwpp_buf *b, double s);
    /** @p iterations elementary erosions (IWPP_BY_EROSION) or dilations of src into dst
     *  (dst != src) with the unit neighbourhood of @p connectivity; out-of-image ignored. */
    iwpp_status (*morph_unit)(iwpp_context *ctx, iwpp_buf *dst, const iwpp_buf *src,
                              int connectivity, iwpp_morph_mode mode, int iterations);
    /** Optional (may be NULL): make @p b use the host view @p im directly, without a copy,
     *  if the backend can (the CPU, for contiguous views). Returns IWPP_OK if it did, any
     *  other status (no message set) if not. Only used for read-only inputs. */
    iwpp_status (*wrap)(iwpp_context *ctx, iwpp_buf *b, const iwpp_image *im);
    /** Optional (may be NULL): the whole of iwpp_reconstruct on the caller's views (arguments
     *  checked), for a backend that needs no staging buffers: the CPU clips the marker while it
     *  copies tiles and writes the marker once, on success. IWPP_EUNSUPPORTED with no message
     *  set means "not for these views": the generic buffer path runs instead. */
    iwpp_status (*reconstruct_views)(iwpp_context *ctx, iwpp_image *marker_inout,
                                     const iwpp_image *mask, int connectivity,
                                     iwpp_morph_mode mode);
    /** Optional (may be NULL): the whole of iwpp_distance_transform on the caller's views
     *  (arguments checked, spacing resolved), for a backend that overlaps its transfers with its
     *  kernels (CUDA: the input up as bits, the distances down by bands while the rest computes).
     *  IWPP_EUNSUPPORTED with no message set: the generic buffer path runs instead. */
    iwpp_status (*edt_views)(iwpp_context *ctx, const iwpp_image *binary, iwpp_edt_method method,
                             const double spacing[3], iwpp_image *dist_out, iwpp_image *nearest_out);
    /** Optional (may be NULL): as download, of the pixels of @p src from the start of its row
     *  @p row (rows counted over every plane: y + h z) on, as many as @p dst holds, which is
     *  whole rows (planes) of src's width (height). IWPP_EUNSUPPORTED with no message set:
     *  not for this view (the caller downloads the whole buffer instead). */
    iwpp_status (*download_rows)(iwpp_context *ctx, const iwpp_buf *src, int64_t row, iwpp_image *dst);
    /** Optional (may be NULL): as upload into the U8 buffer @p dst (of @p im's pixel count),
     *  but what goes up is "pixel != 0" as bits (an eighth of a U8 image's bytes) and dst gets
     *  0/1: the exact EDT reads nothing else (the EDT tiles' regions). IWPP_EUNSUPPORTED with
     *  no message set: not for this view (a strided or page-locked one; ops->upload instead). */
    iwpp_status (*upload_nonzero)(iwpp_context *ctx, iwpp_buf *dst, const iwpp_image *im);
    /** Global minimum and maximum of a buffer. */
    iwpp_status (*minmax)(iwpp_context *ctx, const iwpp_buf *a, double *min, double *max);
    /** Optional (may be NULL): as wrap, but for the outputs of edt (dist, nearest), which the
     *  backend's edt then writes straight into the caller's view. A backend that sets it must
     *  write nothing to those outputs before its edt can no longer fail (all scratch allocated
     *  first), so that a failed call leaves them untouched. dispatch.c never passes a view
     *  that overlaps another argument of the call. */
    iwpp_status (*wrap_output)(iwpp_context *ctx, iwpp_buf *b, const iwpp_image *im);
    /** Optional (may be NULL = unknown): device bytes the exact EDT of a w x h x d image of
     *  @p type with this spacing (and nearest indices or not) takes beside its input and
     *  outputs (its work buffers), so that EDT tiles are sized by what they take, not by an
     *  estimate; negative: unknown; HUGE_VAL: no call of the backend takes this shape (OpenCL:
     *  2^31 pixels), so an image of it goes by tiles whatever the budget. */
    double (*edt_scratch_bytes)(iwpp_context *ctx, iwpp_type type, int64_t w, int64_t h, int64_t d,
                                const double spacing[3], int nearest);
    /** Optional (may be NULL): gives back the work buffers the backend keeps between calls
     *  (OpenCL's scratch slots and idle image buffers, CUDA's work space and its pool's idle
     *  memory) where together they hold more than @p keep bytes, so that a call under a budget
     *  does not carry what an earlier, larger call kept. */
    void (*scratch_trim)(iwpp_context *ctx, double keep);
    /** Optional (may be NULL = no limit known): device memory free now, in bytes. */
    uint64_t (*mem_free)(iwpp_context *ctx);
    /** Optional (may be NULL = plain malloc/free): host memory the backend copies from and to
     *  fastest (CUDA: page-locked); NULL if it cannot be had. */
    void *(*host_alloc)(iwpp_context *ctx, size_t bytes);
    void (*host_free)(iwpp_context *ctx, void *p);

    /* ---- labels (native/ops/labels.c); NULL = IWPP_EUNSUPPORTED on this backend ---- */
    /** Connected components of @p in (U8/U16/F32) into @p labels (U16 or U32), numbered in
     *  raster order of each component's first pixel (iwpp_label). *count = components. A U16
     *  @p labels that cannot hold the count: return iwpp_labels_overflow() and write nothing. */
    iwpp_status (*label)(iwpp_context *ctx, const iwpp_buf *in, int connectivity,
                         iwpp_label_mode mode, iwpp_buf *labels, int64_t *count);
    /** Marker-controlled watershed (iwpp_watershed) of @p in (U8/U16/F32) from @p markers into
     *  @p labels (both U16 or both U32, never the same buffer); @p mask U8 (nonzero = inside)
     *  or NULL = everywhere. Markers outside the mask are the backend's to ignore. */
    iwpp_status (*watershed)(iwpp_context *ctx, const iwpp_buf *in, const iwpp_buf *markers,
                             const iwpp_buf *mask, int connectivity, int lines, iwpp_buf *labels);
} iwpp_backend_ops;

/** The error for @p count labels that do not fit in a U16 output (labels.c). */
iwpp_status iwpp_labels_overflow(iwpp_context *ctx, int64_t count);

/** One entry of a context's worker list (iwpp_context_set_workers; native/tiles.c). */
typedef struct iwpp_worker_spec {
    iwpp_backend backend; /**< CPU, CUDA or OPENCL (never AUTO) */
    int device;           /**< device index within the backend (0 for the CPU) */
    int count;            /**< workers of this kind (CPU: threads, one tile each) */
} iwpp_worker_spec;

#define IWPP_MAX_WORKER_SPECS 16
#define IWPP_MAX_WORKERS 256

/** Tile buffers a context keeps between tiled calls (native/tiles.c): a host scratch region
 *  for the marker and, on devices, one for the mask (page-locked where the backend offers it),
 *  and two device regions. */
#define IWPP_TILE_HOST_THREADS 4 /* most host threads of one device tile worker (tiles.host_threads) */
typedef struct iwpp_tile_res {
    void *host[IWPP_TILE_HOST_THREADS][2]; /* per host thread of the worker: the marker's region;
                                              the mask's (devices only) */
    int pinned[IWPP_TILE_HOST_THREADS][2];
    size_t host_bytes;
    iwpp_buf dev[2];
    size_t dev_bytes;
    /* the tiled exact EDT's region buffers: device input (edt_es bytes a pixel), distances,
       nearest indices; host distances and indices; for regions of edt_cap pixels */
    iwpp_buf edt_dev[3];
    void *edt_host[2];
    int edt_pinned[2];
    void *edt_down[2]; /* the strips' distances on their way to the caller (tiles.c, edt_down) */
    int edt_down_pinned[2];
    size_t edt_down_bytes;
    int64_t edt_cap;
    size_t edt_es;
} iwpp_tile_res;

/** Tuning settings (native/tuning.c): the keys of iwpp_context_set_tuning, in table order. */
typedef enum iwpp_tune_key {
    IWPP_TUNE_CUDA_STAGE_MIN,
    IWPP_TUNE_CUDA_STAGE_CHUNK,
    IWPP_TUNE_CUDA_STAGE_THREADS,
    IWPP_TUNE_CUDA_STAGE_BUFS,
    IWPP_TUNE_CUDA_STAGE_NT,
    IWPP_TUNE_CUDA_POOL,
    IWPP_TUNE_CUDA_RASTER_ITERATIONS,
    IWPP_TUNE_CUDA_EDT_WIDE,
    IWPP_TUNE_CUDA_EDT_COL_TILE,
    IWPP_TUNE_CUDA_EDT_ROW_THREADS,
    IWPP_TUNE_CUDA_EDT_ROWS,
    IWPP_TUNE_CUDA_EDT_COLS,
    IWPP_TUNE_CUDA_LABEL_RUNS,
    IWPP_TUNE_CUDA_REC_QUADS,
    IWPP_TUNE_CUDA_EDT_LINES,
    IWPP_TUNE_CUDA_DAN_SWITCH,
    IWPP_TUNE_CUDA_EDT_BANDS,
    IWPP_TUNE_CUDA_QUEUE_SHARE,
    IWPP_TUNE_CUDA_QUEUE_LEAVE,
    IWPP_TUNE_CUDA_QUEUE_HOST,
    IWPP_TUNE_OCL_REC_SCANS,
    IWPP_TUNE_OCL_EDT_FRESH,
    IWPP_TUNE_OCL_EDT_LOCAL_MEM,
    IWPP_TUNE_OCL_EDT_ROWS,
    IWPP_TUNE_OCL_EDT_COLS,
    IWPP_TUNE_OCL_EDT_ROW_THREADS,
    IWPP_TUNE_OCL_EDT_WIDE_THREADS,
    IWPP_TUNE_OCL_EDT_LINES,
    IWPP_TUNE_OCL_DAN_SWITCH,
    IWPP_TUNE_OCL_QUEUE_GROUPS,
    IWPP_TUNE_OCL_QUEUE_TQ,
    IWPP_TUNE_OCL_EDT_BANDS,
    IWPP_TUNE_OCL_PROFILE,
    IWPP_TUNE_OCL_STAGE,
    IWPP_TUNE_OCL_STAGE_CHUNK,
    IWPP_TUNE_OCL_DAN_LINEAR,
    IWPP_TUNE_OCL_QUEUE_LEAVE,
    IWPP_TUNE_OCL_QUEUE_HOST,
    IWPP_TUNE_CUDA_QUEUE_PREFETCH,
    IWPP_TUNE_TILES_RERUN_POPS,
    IWPP_TUNE_TILES_HOST_THREADS,
    IWPP_TUNE_TILES_COPY_THREADS,
    IWPP_TUNE_TILES_TRACE,
    IWPP_TUNE_TILES_EDT_HELPERS,
    IWPP_TUNE_CUDA_DAN_TILES,
    IWPP_TUNE_OCL_DAN_TILES,
    IWPP_TUNE_COUNT
} iwpp_tune_key;

struct iwpp_context {
    iwpp_backend requested;         /* what the caller asked for */
    const iwpp_backend_ops *ops;    /* the backend in use (never NULL after create) */
    void *backend_state;            /* owned by ops */
    int threads;                    /* 0 = all cores */
    int device;
    int64_t tile_size;
    int64_t queue_capacity;         /* 0 = automatic */
    iwpp_algorithm algorithm;
    iwpp_queue_variant queue_variant;
    uint64_t memory_limit;          /* device bytes one call may use; 0 = the device's free memory */
    iwpp_worker_spec workers[IWPP_MAX_WORKER_SPECS]; /* tile workers; none = this backend alone */
    int nworker_specs;
    struct iwpp_context **tile_ctx; /* worker contexts kept between tiled calls (tiles.c) */
    int ntile_ctx;
    struct iwpp_workpool *tile_pool; /* the threads of its tiled calls, kept between them */
    iwpp_tile_res tile_res;         /* this context's own tile buffers (as a worker) */
    iwpp_progress_fn progress;      /* NULL = none */
    void *progress_user;
    char tune[IWPP_TUNE_COUNT][32]; /* tuning settings ("" = default), see native/tuning.c */
    int short_waves;                /* > 0 while a composed op runs reconstructions whose waves stay
                                       short (regional extrema, the distance watershed): the CUDA
                                       plan then takes one raster iteration instead of two */
    int device_share;               /* during a tiled call: the tile workers on this context's
                                       device (> 1: CUDA's queue kernel takes its share of the
                                       resident blocks, so that the workers' kernels run side by
                                       side); 0 otherwise */
    uint64_t scratch_cap;           /* during a tiled EDT's region: the device bytes the work
                                       buffers the backend keeps between calls may hold at once
                                       (more are given back before a call allocates); 0 = no cap */
    uint64_t queue_bytes;           /* during a tiled call: the device bytes this worker's queue
                                       phase may give its block queues (CUDA halves their capacity
                                       until they fit; an overflow costs a pass, not the result);
                                       0 = no limit */
    iwpp_stats stats;               /* filled by the last successful op (backends add their parts) */
    char message[1024];
};

/** Record @p status with a printf-style message in ctx and return it. ctx may be NULL. */
iwpp_status iwpp_set_error(iwpp_context *ctx, iwpp_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/** Effective number of CPU threads for ctx (resolves 0 to the core count). */
int iwpp_cpu_threads(const iwpp_context *ctx);

/* Tuning settings (native/tuning.c). iwpp_tune: the value, NULL for the default. The parsers
 * return @p dflt for a missing or unreadable value and clamp to [lo, hi]; bytes take a K/M/G
 * suffix and "off" (= hi). */
void iwpp_tune_from_env(iwpp_context *ctx);
const char *iwpp_env(const char *name); /* getenv, kept in tuning.c with the settings' reads */
int iwpp_tune_lookup(const char *key);
int iwpp_tune_reopens(int key);
iwpp_status iwpp_tune_set(iwpp_context *ctx, const char *key, const char *value);
const char *iwpp_tune(const iwpp_context *ctx, iwpp_tune_key k);
long long iwpp_tune_int(const iwpp_context *ctx, iwpp_tune_key k, long long dflt, long long lo, long long hi);
size_t iwpp_tune_bytes(const iwpp_context *ctx, iwpp_tune_key k, size_t dflt, size_t lo, size_t hi);

/** memcpy for large staging copies (native/hostcopy.c): streaming stores where the CPU has
 *  them, so the destination is not read first; visible to other threads and DMA on return. */
void iwpp_stream_copy(void *dst, const void *src, size_t n);

/** A host view as a sequence of contiguous units (the whole image, slices or rows, whichever its
 *  strides allow) that maps in order onto a contiguous device buffer (native/hostcopy.c): the
 *  staging transfers of the GPU backends copy device-order byte ranges of it. */
typedef struct iwpp_host_layout {
    char *base;
    size_t unit;       /* bytes of one contiguous unit */
    int64_t per_slice; /* units per slice: h (rows) or 1 (slices / the whole image) */
    size_t ustride;    /* bytes between the units of a slice */
    size_t sstride;    /* bytes between slices */
} iwpp_host_layout;
iwpp_host_layout iwpp_host_layout_of(const iwpp_image *im);
/** Copy device-order bytes [a, b) of the view to (@p to_pin) or from staging memory @p pin (byte a
 *  at pin[0]) with up to @p nt host threads; @p stream: streaming stores (iwpp_stream_copy). */
void iwpp_copy_range_par(const iwpp_host_layout *L, char *pin, size_t a, size_t b, int to_pin, int nt, int stream);

/** The chunks of a staged transfer of @p total bytes through buffers of C bytes: C each, except
 *  that a transfer of at least 4 C starts with C/8, C/4, C/2 and ends with C/2, C/4, C/8 (nothing
 *  overlaps the first host copy of an upload or the last of a download, so small chunks there
 *  shorten the pipeline's fill and drain). n chunks; iwpp_chunk_bounds gives chunk k's [a, b). */
typedef struct iwpp_chunk_plan {
    size_t C, total, head, mid, m, n;
} iwpp_chunk_plan;
iwpp_chunk_plan iwpp_chunk_plan_make(size_t total, size_t C);
void iwpp_chunk_bounds(const iwpp_chunk_plan *p, size_t k, size_t *a, size_t *b);

/** Bits of "pixel != 0" (native/hostcopy.c) for @p n pixels of @p type (U8, U16 or F32) at
 *  @p src: pixel 8k+j at bit j of byte k, ceil(n/8) bytes; unused bits of the last byte are 0. */
void iwpp_pack_nonzero(const void *src, iwpp_type type, size_t n, uint8_t *bits);
/** iwpp_pack_nonzero with up to @p nt host threads (OpenMP; parts of at least 256 Ki pixels). */
void iwpp_pack_nonzero_par(const void *src, iwpp_type type, size_t n, uint8_t *bits, int nt);
/** Pixels a chunk of a staged bits upload packs: a multiple of 1024 (whole bytes for every
 *  thread's part) whose bits fill at most @p chunk_bytes (at least 128), and at most 4 Mi. */
size_t iwpp_bits_chunk_pixels(size_t chunk_bytes);

/** Monotonic clock in milliseconds. */
double iwpp_now_ms(void);

/** A GPU reconstruction's long chains finished on the host (native/dispatch.c; CUDA and OpenCL
 *  call it when their queue's blocks keep leaving work behind): @p marker and @p mask (buffers of
 *  ctx's backend; the marker a partial result, between the input and the result) go to the host,
 *  the CPU backend reconstructs from them with ctx's threads, and the result goes back into
 *  @p marker. *done = 0, and IWPP_OK, where the host lacks the memory (two copies need twice
 *  their size free; the CPU's own ENOMEM): the marker is then as it was. Keeps ctx's stats. */
iwpp_status iwpp_finish_on_host(iwpp_context *ctx, iwpp_buf *marker, const iwpp_buf *mask, int connectivity,
                                iwpp_morph_mode mode, int *done);

/* The built backends. */
extern const iwpp_backend_ops iwpp_cpu_backend;
#ifdef IWPP_HAVE_CUDA
extern const iwpp_backend_ops iwpp_cuda_backend;
#endif
#ifdef IWPP_HAVE_OPENCL
extern const iwpp_backend_ops iwpp_opencl_backend;
#endif

#ifdef __cplusplus
}
#endif

#endif /* IWPP_BACKEND_H */
