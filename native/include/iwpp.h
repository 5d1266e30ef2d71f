/*
 * iwpp.h - the whole public C API of the IWPP library.
 *
 * Irregular wavefront propagation (IWPP) image operations: morphological
 * reconstruction, Euclidean distance transforms and the operations built on
 * them, on the CPU (sequential and OpenMP), CUDA and OpenCL.
 *
 * Conventions
 *  - Every call takes the context first and its outputs last, and returns an
 *    iwpp_status. On any status other than IWPP_OK, iwpp_error_message(ctx)
 *    holds one sentence a person can act on, and no output has been written
 *    (one exception: a GPU that fails while the result is being copied back,
 *    IWPP_EDEVICE, may leave part of an output written).
 *  - Images are views (iwpp_image): the library never owns or frees them.
 *    An input is never modified; only iwpp_reconstruct works in place, on its
 *    marker, and says so.
 *  - Sizes are 64-bit: a 100K x 100K image (10^10 pixels) is a valid view.
 *  - Nothing in the library aborts, exits or asserts on user input.
 *  - One context may be used by one thread at a time; use one context per
 *    thread for concurrent calls.
 *
 * C99.
 */
#ifndef IWPP_H
#define IWPP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#  define IWPP_API __declspec(dllexport)
#else
#  define IWPP_API __attribute__((visibility("default")))
#endif

#define IWPP_VERSION_MAJOR 0
#define IWPP_VERSION_MINOR 1
#define IWPP_VERSION_PATCH 0

/** Status codes. Every function returns one of these. */
typedef enum iwpp_status {
    IWPP_OK = 0,
    IWPP_EINVAL = 1,       /**< an argument is wrong: NULL, sizes, types, connectivity ... */
    IWPP_ENOMEM = 2,       /**< host or device memory exhausted; the message says how much */
    IWPP_EDEVICE = 3,      /**< the requested backend or device is unavailable or failed */
    IWPP_EUNSUPPORTED = 4, /**< a valid request this build or backend cannot do */
    IWPP_EINTERNAL = 5,    /**< a bug: please report the message */
    IWPP_ECANCELED = 6     /**< the progress callback asked to stop (iwpp_context_set_progress) */
} iwpp_status;

/** Pixel types. */
typedef enum iwpp_type {
    IWPP_U8 = 1,  /**< uint8_t */
    IWPP_U16 = 2, /**< uint16_t */
    IWPP_F32 = 3, /**< float (NaN is rejected with IWPP_EINVAL) */
    IWPP_I64 = 4, /**< int64_t: only for the nearest-background index output */
    IWPP_U32 = 5  /**< uint32_t: only for label images (iwpp_label, iwpp_watershed, ...) */
} iwpp_type;

/** Size in bytes of one pixel of @p type, 0 for an unknown type. */
IWPP_API size_t iwpp_type_size(iwpp_type type);
/** "u8", "u16", "f32", "i64", "u32" or "unknown". */
IWPP_API const char *iwpp_type_name(iwpp_type type);

/**
 * An image view. Pixel (x, y, z) lives at
 *   ((T *)data)[x + y * stride_y + z * stride_z]
 * Strides are in elements (not bytes). A stride of 0 means "contiguous":
 * stride_y = width, stride_z = stride_y * height. depth is 1 for a 2D image.
 */
typedef struct iwpp_image {
    void *data;
    iwpp_type type;
    int64_t width;
    int64_t height;
    int64_t depth;
    int64_t stride_y;
    int64_t stride_z;
} iwpp_image;

/** A contiguous 2D view. Sizes whose product overflows 64 bits give a view that every
 *  operation refuses with IWPP_EINVAL ("too many pixels"). */
IWPP_API iwpp_image iwpp_image_2d(void *data, iwpp_type type, int64_t width, int64_t height);
/** A contiguous 3D view (overflowing sizes: as iwpp_image_2d). */
IWPP_API iwpp_image iwpp_image_3d(void *data, iwpp_type type, int64_t width, int64_t height,
                                  int64_t depth);

/** Backends. AUTO picks CUDA if a device is present, else an OpenCL GPU, else the CPU. */
typedef enum iwpp_backend {
    IWPP_BACKEND_AUTO = 0,
    IWPP_BACKEND_CPU = 1,
    IWPP_BACKEND_CUDA = 2,
    IWPP_BACKEND_OPENCL = 3
} iwpp_backend;

/** "auto", "cpu", "cuda", "opencl". */
IWPP_API const char *iwpp_backend_name(iwpp_backend backend);

/**
 * Whether @p backend is compiled in and has a usable device.
 * Returns 1 if usable, 0 if not; when not, @p reason (if not NULL) receives
 * why, e.g. "CUDA: no NVIDIA driver found (libcuda.so.1 missing)".
 */
IWPP_API int iwpp_backend_available(iwpp_backend backend, char *reason, size_t reason_size);

/** A compute device of a backend, for a chooser dialog. */
typedef struct iwpp_device_info {
    char name[256];           /**< e.g. "NVIDIA H100 80GB HBM3" or "pthread-Intel(R) Xeon(R)" */
    char platform[128];       /**< OpenCL platform name, "CUDA" or "CPU" */
    uint64_t global_memory;   /**< bytes */
    int compute_units;        /**< SMs, compute units or cores */
    int is_gpu;               /**< 1 for a GPU, 0 for a CPU device */
} iwpp_device_info;

/** Number of devices of @p backend (0 if unavailable). The CPU backend has 1. */
IWPP_API int iwpp_device_count(iwpp_backend backend);
/** Fill @p out for device @p index of @p backend. */
IWPP_API iwpp_status iwpp_device_info_get(iwpp_backend backend, int index, iwpp_device_info *out);

/** Reconstruction algorithm on GPU backends (ignored by the CPU). */
typedef enum iwpp_algorithm {
    IWPP_ALGO_AUTO = 0,      /**< chosen by a documented rule (see README) */
    IWPP_ALGO_QUEUE = 1,     /**< FH_GPU: raster scans, then the multi-level queue */
    IWPP_ALGO_MEGAPIXEL = 2  /**< IWPP-MP: 32x32 tiles in shared memory, queue of tiles */
} iwpp_algorithm;

/** Queue variant of the GPU queue phase (for benchmarks; default MULTILEVEL). What each level
 *  costs depends on the hardware, so the variants exist to be measured (bench/README.md).
 *  CUDA: as below. OpenCL: MULTILEVEL and PREFIXSUM both reserve room in the work-group queue
 *  with one local atomic per work-item (a work-group prefix sum's barriers cost more than it
 *  saved); PREFIXSUM holds one item per work-item and step instead of a private queue. */
typedef enum iwpp_queue_variant {
    IWPP_QUEUE_MULTILEVEL = 0, /**< per-thread queue + block queue (warp prefix sum) + global */
    IWPP_QUEUE_ATOMIC = 1,     /**< one global atomic per enqueued item */
    IWPP_QUEUE_PREFIXSUM = 2   /**< block queue (block prefix sum), no per-thread queue */
} iwpp_queue_variant;

/** Opaque context: backend choice, settings, last error. */
typedef struct iwpp_context iwpp_context;

/**
 * Create a context for @p backend.
 * On IWPP_OK, *out is a ready context. If the requested backend is not
 * usable, returns IWPP_EDEVICE and *out is still a valid context (on the CPU)
 * whose iwpp_error_message() says why; destroy it or use it for the CPU.
 * Returns IWPP_ENOMEM (and *out = NULL) only if the context itself cannot be
 * allocated.
 */
IWPP_API iwpp_status iwpp_context_create(iwpp_context **out, iwpp_backend backend);
/** Release a context and all device resources it holds, and end the threads it keeps for its
 *  tiled calls (they wait, with the host's signals blocked, between calls). NULL is fine. */
IWPP_API void iwpp_context_destroy(iwpp_context *ctx);

/** Largest CPU thread count a context accepts (more threads than this only cost memory). */
#define IWPP_MAX_THREADS 1024
/** CPU threads: 0 = automatic (default), 1 = sequential, at most IWPP_MAX_THREADS
 *  (a larger count is IWPP_EINVAL). Automatic: the cores this process may run on (its
 *  affinity mask, capped at IWPP_MAX_THREADS), but fewer for small images, which run
 *  sequentially (reconstruction and exact EDT: one thread per 2^19 pixels; pointwise steps
 *  stay sequential below 2^25 pixels). An explicit count is used as it is. The CPU's worker
 *  threads sleep while they wait (no spinning), so sharing the cores with other processes
 *  costs no more than the work they lose to them. */
IWPP_API iwpp_status iwpp_context_set_threads(iwpp_context *ctx, int threads);
/** Device index within the backend (default 0). Re-opens the backend. */
IWPP_API iwpp_status iwpp_context_set_device(iwpp_context *ctx, int device);
/** Tile edge in pixels for tiled variants (CPU threads, tile scheduler); default 256. */
IWPP_API iwpp_status iwpp_context_set_tile_size(iwpp_context *ctx, int64_t tile);
/** Capacity (items) of each GPU global block queue; 0 = automatic, at most INT32_MAX (more is
 *  IWPP_EINVAL). Small values force overflow re-runs. */
IWPP_API iwpp_status iwpp_context_set_queue_capacity(iwpp_context *ctx, int64_t capacity);
/** GPU reconstruction algorithm (default AUTO). */
IWPP_API iwpp_status iwpp_context_set_algorithm(iwpp_context *ctx, iwpp_algorithm algo);
/** GPU queue variant (default MULTILEVEL). */
IWPP_API iwpp_status iwpp_context_set_queue_variant(iwpp_context *ctx, iwpp_queue_variant v);

/**
 * Device memory one call may use, in bytes (default 0 = what the device has free now).
 * A reconstruction (or an operation built on it) whose working set exceeds the budget runs
 * through tiles instead of failing: the image stays in host memory, and tiles of it (with a
 * one-pixel halo) are reconstructed on the device and re-run until no tile border changes.
 * Results are bit-identical to the in-memory path. The working set is estimated per backend
 * (about 2 images plus the propagation queues; README "Tiles"). With the default budget, a
 * call that fits is tried in memory first and falls back to tiles if the device runs out.
 * An exact EDT beyond the budget runs by strips of whole rows (planes in 3D) with margins,
 * on the GPU workers of iwpp_context_set_workers (three streams by default), or by square
 * tiles where a row does not fit; distances are bit-identical to the in-memory ones. Strips
 * are as tall as the budget holds, counted by what a region takes on the device: input,
 * distances (and indices) and the backend's work buffers for that shape. The
 * Danielsson EDT beyond the budget is IWPP_EUNSUPPORTED.
 * The budget counts what a call holds on the device, kept from earlier calls or new: setting a
 * lower one gives back the buffers this context kept (the next call allocates what it needs).
 * On the CPU backend the default means "no limit" (host memory is the image's home).
 */
IWPP_API iwpp_status iwpp_context_set_memory_limit(iwpp_context *ctx, uint64_t bytes);

/**
 * Tuning settings of the backends, for measurements and for devices that need another choice;
 * the defaults are the measured best (each backend's README gives the figures). @p value NULL
 * or "" returns a key to its default. Keys:
 *   cuda.stage_min, cuda.stage_chunk (bytes, K/M/G suffix, at least 128; "off"),
 *   cuda.stage_threads, cuda.stage_bufs (2-4), cuda.stage_nt (0: memcpy instead of streaming stores),
 *   cuda.pool (0: cudaMalloc per buffer; takes effect when the device is opened again, which
 *   this call does), cuda.raster_iterations, cuda.edt_wide, cuda.edt_col_tile,
 *   cuda.edt_row_threads, cuda.edt_rows, cuda.edt_cols, cuda.label_runs (0: labeling by pixel
 *   tiles instead of row runs), cuda.rec_quads (0: 2D reconstruction scans and wavefront
 *   collection one pixel a thread instead of four), cuda.edt_lines (exact EDT with unit spacing,
 *   one thread per line: unset = 3D images, 1 = 2D too, 0 = never), cuda.edt_bands (exact EDT of a
 *   2D image with unit spacing by column bands: "K" or "K,R", K bands of each column, colour
 *   segments of R rows; 0 = the merged rows instead), cuda.dan_switch (Danielsson
 *   EDT: front size, in items per queue block, below which global rounds run before the block
 *   queues; default 4, 0 = queues from the start), cuda.queue_share (0: a tile worker's
 *   queue phase takes every resident block even where other workers share the device; default 1:
 *   its share of them), cuda.queue_leave (rounds after which a block of the reconstruction's
 *   queue phase still busy when 7/8 of the blocks have finished leaves, and the front is spread
 *   again after a raster iteration; a 32nd of that with 16 items a thread; default 2048, 0 or
 *   "off": never), cuda.queue_host (passes in which blocks left early before the image goes to
 *   the host and the CPU finishes the reconstruction, where the host has the memory; default 2,
 *   0 or "off": never), ocl.rec_scans,
 *   ocl.edt_fresh, ocl.edt_local_mem, ocl.edt_rows, ocl.edt_cols, ocl.edt_row_threads,
 *   ocl.edt_wide_threads, ocl.edt_lines (as cuda.edt_lines), ocl.dan_switch (as cuda.dan_switch,
 *   per work-group; default 4), ocl.queue_groups (work-groups of the queue phase per
 *   compute unit; GPUs 4, CPU devices 2), ocl.queue_tq (private queue entries per work-item;
 *   GPUs 8, CPU devices 32), ocl.edt_bands (as cuda.edt_bands), ocl.profile (1: time every
 *   kernel with OpenCL's profiling events, waiting for each, and print the sums per kernel name
 *   to stderr when the context is destroyed; for benchmarks only), ocl.stage (transfers of at
 *   least this many bytes go through page-locked staging buffers; GPUs 2M, CPU devices "off"),
 *   ocl.stage_chunk (bytes of each of the four staging buffers, at least 128; default 16M),
 *   ocl.dan_linear (1: the Danielsson EDT's sites as linear indices even where packed
 *   coordinates fit; tests), ocl.queue_leave, ocl.queue_host (as cuda.queue_leave and
 *   cuda.queue_host, for the work-groups of the OpenCL reconstruction's queue phase),
 *   cuda.queue_prefetch (0: a 2D 8-connected reconstruction's queue reads each neighbour when
 *   it visits it instead of all of them when it takes the pixel; default 1),
 *   tiles.rerun_pops (a tiled reconstruction's host re-run of a tile gives up for a full run of
 *   the tile on a device after this many queue pops; default: once it has taken as long as a
 *   full run would; "off": never), tiles.host_threads (host threads per device tile worker, 1
 *   to 4: with more than one, each copies its next tile in and its last one out while another's
 *   tile is on the device; default 2; set, it applies to CPU tile workers too),
 *   tiles.copy_threads (threads each host thread of a device tile worker copies its tiles in
 *   and out with; default: the cores shared among the device workers), tiles.trace (a file,
 *   or "stderr": a tiled reconstruction appends a line per tile run with the times of its
 *   phases; bench/tiles_trace.py sums them; IWPP_TILES_TRACE may hold a longer path),
 *   tiles.edt_helpers (the exact EDT's strips: a helper thread per worker copies each strip's
 *   distances into the output while the worker goes on; default: for strips under 16 MiB where
 *   the backend has page-locked memory for them (CUDA); "0": never; "1": any strip, with
 *   ordinary memory too), cuda.dan_tiles and ocl.dan_tiles (the Danielsson EDT on the GPU: the
 *   side of its tiles, a power of two up to 64 (3D: cubes of at most 8); 0: pixel by pixel
 *   through the global rounds and the block / work-group queues instead; default 64 in 2D, 0 in
 *   3D).
 * A new context takes each key from the environment variable IWPP_<KEY> (upper case, '.' as
 * '_': cuda.stage_chunk <- IWPP_CUDA_STAGE_CHUNK); the library reads the environment nowhere
 * else. Tile workers take their caller's settings. Unknown keys and values longer than 31
 * characters are IWPP_EINVAL (from the environment, such values are not taken); unreadable
 * values mean the default.
 */
IWPP_API iwpp_status iwpp_context_set_tuning(iwpp_context *ctx, const char *key, const char *value);

/**
 * Workers that share the tiles of one reconstruction (paper 000's demand-driven scheduler).
 * @p spec is a comma-separated list; each item is one of
 *   "gpu"          this context's own device (on a CPU context: one CPU worker)
 *   "cuda:D"       CUDA device D          "opencl:D"  OpenCL device D
 *   "all-gpus"     every CUDA device, or if there is none every OpenCL GPU
 *   "cpu"          CPU workers, one tile each, as many as the context's CPU threads
 * optionally followed by "*N" (N workers of that kind, e.g. "gpu*2" = two streams on one
 * GPU, "cpu*6"). NULL or "" = this context's backend alone, tiles only when the budget asks;
 * such tiles then go to three streams on the context's GPU plus, with 8 or more CPU threads,
 * a quarter of them (at most 4) as CPU workers for the host re-runs (on a CPU context: one
 * worker per thread).
 * With a list set, every reconstruction runs through tiles handed to whichever worker is
 * free. Unknown items, devices that do not exist and more than 256 workers are IWPP_EINVAL.
 */
IWPP_API iwpp_status iwpp_context_set_workers(iwpp_context *ctx, const char *spec);

/**
 * Progress: @p fn(@p user, fraction done in [0, 1]) is called from the calling thread, about
 * every 100 ms during a tiled call (the fraction of tile runs done) and at the natural points of
 * a call in memory (its start, before and after the device work, between an opening's erosion
 * rounds, before the result is written back; 1 when it is done). Fractions never decrease
 * within one call. A nonzero return stops the call, which then returns IWPP_ECANCELED; in
 * memory the output is then untouched (a cancelled tiled reconstruction may leave its marker
 * partly reconstructed). The final 1 cannot cancel.
 */
typedef int (*iwpp_progress_fn)(void *user, double fraction);
IWPP_API iwpp_status iwpp_context_set_progress(iwpp_context *ctx, iwpp_progress_fn fn, void *user);

/** The backend this context runs on (never AUTO). */
IWPP_API iwpp_backend iwpp_context_backend(const iwpp_context *ctx);
/** The message of the last failed call on @p ctx ("" if none). Never NULL. */
IWPP_API const char *iwpp_error_message(const iwpp_context *ctx);
/** Short text for a status code. */
IWPP_API const char *iwpp_status_name(iwpp_status status);

/** Figures of the last successful operation on a context (for benchmarks and logs). */
typedef struct iwpp_stats {
    iwpp_backend backend;    /**< backend that ran */
    double total_ms;         /**< wall time of the call, transfers included */
    double compute_ms;       /**< time without host<->device transfers (= total_ms on the CPU) */
    int64_t pixels_visited;  /**< items taken off propagation queues (0 if not counted) */
    int64_t rounds;          /**< queue rounds / tile sweeps / border exchanges */
    int64_t overflow_reruns; /**< GPU queue-overflow re-runs */
    char variant[64];        /**< e.g. "fast-hybrid", "tiled-queue", "fh-gpu/multilevel", "megapixel" */
    /* tiled calls (iwpp_context_set_memory_limit / set_workers); 0 otherwise */
    int64_t tiles;              /**< tile runs (a tile re-run after its halo changed counts again) */
    int64_t tile_grid;          /**< tiles the image was cut into */
    int64_t tile_rounds;        /**< most runs of any one tile */
    int64_t bytes_to_device;    /**< bytes copied host -> device */
    int64_t bytes_from_device;  /**< bytes copied device -> host */
    int workers;                /**< workers that took part */
    int64_t worker_tiles[16];   /**< tile runs per worker (the first 16 workers) */
} iwpp_stats;

/** Copy the figures of the last successful operation into @p out. */
IWPP_API iwpp_status iwpp_context_stats(iwpp_context *ctx, iwpp_stats *out);

/** Reconstruction mode. */
typedef enum iwpp_morph_mode {
    IWPP_BY_DILATION = 0,
    IWPP_BY_EROSION = 1
} iwpp_morph_mode;

/**
 * Morphological reconstruction of @p marker_inout under (dilation) or over
 * (erosion) @p mask, IN PLACE in @p marker_inout.
 *
 * Clipping: as MATLAB's imreconstruct does, the marker is first clipped to
 * the mask: min(marker, mask) for dilation, max(marker, mask) for erosion.
 * A marker above the mask is therefore not an error.
 *
 * @param connectivity 4 or 8 for 2D images (depth 1); 6, 18 or 26 for 3D.
 *        6/18/26 are also accepted on a single slice (6 then acts as 4, 18
 *        and 26 as 8); 4 or 8 on an image with depth > 1 is IWPP_EINVAL.
 * Marker and mask must have the same type (U8, U16 or F32) and sizes.
 * The result equals the definition (iterated elementary geodesic dilation or
 * erosion until stability) bit for bit on every backend.
 */
IWPP_API iwpp_status iwpp_reconstruct(iwpp_context *ctx, iwpp_image *marker_inout,
                                      const iwpp_image *mask, int connectivity,
                                      iwpp_morph_mode mode);

/** Distance transform methods. */
typedef enum iwpp_edt_method {
    IWPP_EDT_EXACT = 0,     /**< exact Euclidean distance (separable, linear time) */
    IWPP_EDT_DANIELSSON = 1 /**< vector propagation of nearest-background coordinates (IWPP);
                                 never below the exact distance; error bound in the README */
} iwpp_edt_method;

/**
 * Euclidean distance transform: for every foreground pixel (nonzero in
 * @p binary, any type U8/U16/F32) the distance to the nearest background
 * pixel (zero), in the units of @p spacing; 0 on background pixels.
 *
 * @param dist_out    F32 image of the same sizes.
 * @param nearest_out NULL, or an I64 image of the same sizes that receives the
 *                    linear index x + y*width + z*width*height of the nearest
 *                    background pixel (ties: any of the nearest).
 * @param spacing     pixel size along x, y, z (NULL = 1, 1, 1); each finite and at least
 *                    1e-75 (so that products of squared steps stay normal doubles), and
 *                    small enough that the image's diagonal (width*sx, height*sy, depth*sz) is below FLT_MAX
 *                    (so that every distance is a finite float); else IWPP_EINVAL.
 * If the image has no background pixel at all, every distance is +INFINITY and
 * every nearest index is -1 (and only then).
 */
IWPP_API iwpp_status iwpp_distance_transform(iwpp_context *ctx, const iwpp_image *binary,
                                             iwpp_edt_method method, const double spacing[3],
                                             iwpp_image *dist_out, iwpp_image *nearest_out);

/*
 * Operations built on reconstruction. For each: @p in is U8, U16 or F32, 2D or
 * 3D; connectivity as for iwpp_reconstruct; @p out has the sizes of @p in and
 * may be the very same view as @p in (then the call works in place).
 * Binary images (0 / one nonzero value) are gray images with two levels, and
 * the gray definitions below reduce to the binary ones.
 */

/**
 * Fill holes: raise every region of low values that does not reach the image
 * border to the lowest level that surrounds it (reconstruction by erosion of a
 * marker that equals @p in on the border and the type's maximum inside).
 * On a binary image: background not connected to the border becomes
 * foreground. @p connectivity is the connectivity of the BACKGROUND paths
 * (ImageJ and MATLAB use 4 in 2D, 6 in 3D). @p out has the type of @p in.
 */
IWPP_API iwpp_status iwpp_fill_holes(iwpp_context *ctx, const iwpp_image *in, int connectivity,
                                     iwpp_image *out);

/**
 * Kill borders: in minus its reconstruction by dilation from the border
 * (marker = in on the border, the type's minimum inside), as MATLAB's
 * imclearborder. On a binary image: foreground objects touching the border
 * are removed. @p out has the type of @p in. F32 input may hold +inf and -inf
 * (the marker is -inf inside): a pixel equal to its reconstruction is 0, also at
 * +-inf; a pixel cut off from the border by -inf comes out +inf.
 */
IWPP_API iwpp_status iwpp_kill_borders(iwpp_context *ctx, const iwpp_image *in, int connectivity,
                                       iwpp_image *out);

/**
 * Regional maxima: connected plateaus whose whole outer boundary is strictly
 * lower. @p out is U8: 255 on regional maxima, 0 elsewhere. A constant image
 * is one plateau with no boundary and is all maxima (as MATLAB).
 */
IWPP_API iwpp_status iwpp_regional_maxima(iwpp_context *ctx, const iwpp_image *in,
                                          int connectivity, iwpp_image *out);
/** Regional minima: as iwpp_regional_maxima with "higher". @p out is U8 0/255. */
IWPP_API iwpp_status iwpp_regional_minima(iwpp_context *ctx, const iwpp_image *in,
                                          int connectivity, iwpp_image *out);

/**
 * H-maxima transform: reconstruction by dilation of (in - h) under in
 * (MATLAB imhmax, ITK HMaximaImageFilter): every maximum of height <= h is
 * flattened. For U8/U16, h is rounded to the nearest integer (halves up) and
 * in - h saturates at 0; for F32, in - (float)h in single precision. h >= 0 (F32: at most
 * FLT_MAX, else IWPP_EINVAL). @p out has the type of @p in.
 */
IWPP_API iwpp_status iwpp_h_maxima(iwpp_context *ctx, const iwpp_image *in, double h,
                                   int connectivity, iwpp_image *out);
/** H-minima: reconstruction by erosion of (in + h) over in (saturating at the type's maximum). */
IWPP_API iwpp_status iwpp_h_minima(iwpp_context *ctx, const iwpp_image *in, double h,
                                   int connectivity, iwpp_image *out);

/**
 * Opening by reconstruction: reconstruction by dilation, under @p in, of the
 * erosion of @p in by the structuring element made of @p radius steps of the
 * elementary neighbourhood of @p connectivity (4: diamond, 8: square,
 * 6: octahedron, 18: cuboctahedron, 26: cube; edge pixels replicate).
 * radius >= 0 (0 returns @p in).
 */
IWPP_API iwpp_status iwpp_opening_by_reconstruction(iwpp_context *ctx, const iwpp_image *in,
                                                    int radius, int connectivity,
                                                    iwpp_image *out);
/** Closing by reconstruction: the dual (dilation by the element, then reconstruction by erosion). */
IWPP_API iwpp_status iwpp_closing_by_reconstruction(iwpp_context *ctx, const iwpp_image *in,
                                                    int radius, int connectivity,
                                                    iwpp_image *out);

/* ---------------------------------------------------------------------------------------
 * Labels and watershed (native/ops/labels.c).
 *
 * A label image is U16 or U32 (U8 is also read as markers): 0 = no label, 1..N = objects.
 * Outputs may be U16 or U32; a result whose largest label does not fit in U16 is refused
 * with IWPP_EINVAL and the output is left untouched. Every backend gives the same bits.
 * --------------------------------------------------------------------------------------- */

/** What joins two neighbouring pixels in iwpp_label. Pixels equal to 0 are never labelled. */
typedef enum iwpp_label_mode {
    IWPP_LABEL_BINARY = 0, /**< both nonzero (any values) */
    IWPP_LABEL_EQUAL = 1   /**< both nonzero and equal (a gray or label image split by value) */
} iwpp_label_mode;

/**
 * Connected-component labeling: the connected sets of nonzero pixels of @p in (U8, U16 or F32;
 * F32 NaN is refused), joined as @p mode says, under @p connectivity (as iwpp_reconstruct).
 * Labels are numbered in raster order of each component's first pixel (smallest index
 * x + w*(y + h*z)): the component met first is 1, the next 2, ... (as MATLAB bwlabel and
 * scikit-image label). @p labels_out: U16 or U32, sizes of @p in. @p count_out (may be NULL)
 * receives the number of components.
 */
IWPP_API iwpp_status iwpp_label(iwpp_context *ctx, const iwpp_image *in, int connectivity,
                                iwpp_label_mode mode, iwpp_image *labels_out, int64_t *count_out);

/**
 * Marker-controlled watershed of the relief @p in (U8, U16 or F32, no NaN) from the labels of
 * @p markers (U8, U16 or U32; 0 = no marker), inside @p mask (any gray type, nonzero = inside;
 * NULL = the whole image), with neighbours of @p connectivity (as iwpp_reconstruct).
 *
 * The result is unique. Every pixel p inside the mask that some marker reaches by a path inside
 * the mask gets a cost (L, D) and a label, compared lexicographically as (L, D, label):
 *   L = the least, over such paths, of the highest value of @p in along the path (the flooding
 *       level at which p is reached);
 *   D = the number of steps on that level's plateau since the flood last climbed strictly;
 * precisely, p takes the least, over its neighbours q inside the mask that are reached, of
 *   (max(L_q, in_p), in_p > L_q ? 0 : D_q + 1, L_q, D_q, label_q)
 * from q's own final (L, D, label): the first two are p's (L, D), the last its label (a label
 * that reaches q only at a worse cost does not count at p). Off a climb every winner has
 * (L_q, D_q) = (L_p, D_p - 1), so the smallest label among them wins. Where p is entered by a
 * strict climb (in_p > L_q, D = 0), it takes the label of its lower neighbour with the least
 * (L_q, D_q, label_q): the flood that arrived first, as in Meyer's priority flood, not merely
 * the smallest label among its lower neighbours. Marker pixels inside the mask keep their label
 * and cost (in(p), 0). This is the priority flood of Meyer's algorithm with plateaus split by
 * geodesic distance; it differs from scikit-image's watershed and MorphoLibJ only where floods
 * tie at the same (L, D, L_q, D_q) (they break that tie by queue order, this by the smaller
 * label).
 * Pixels outside the mask and pixels no marker reaches are 0. Markers outside the mask are
 * ignored.
 *
 * @param lines 0: regions touch. 1: watershed lines: a non-marker pixel becomes 0 when it has
 *        a neighbour with a different nonzero label whose (L, D, label) is smaller than its own;
 *        the remaining regions are then separated under @p connectivity.
 * @param labels_out U16 or U32, sizes of @p in; may be the same view as @p markers.
 */
IWPP_API iwpp_status iwpp_watershed(iwpp_context *ctx, const iwpp_image *in,
                                    const iwpp_image *markers, const iwpp_image *mask,
                                    int connectivity, int lines, iwpp_image *labels_out);

/**
 * Distance-transform watershed of a binary image (nonzero = object): exact EDT with
 * @p spacing (as iwpp_distance_transform); markers = the extended maxima of the distance with
 * dynamic @p dynamic (regional maxima of its h-maxima, h = dynamic, in the units of spacing),
 * labelled under @p connectivity; then iwpp_watershed of the negated distance from those
 * markers inside the objects. Splits touching round objects. An object whose largest distance is
 * at most @p dynamic has no marker (the h-maxima flatten it to the background) and comes out 0,
 * unless no object is higher than @p dynamic: then the h-maxima are constant, every pixel is a
 * maximum, and every object comes out as label 1. Lower @p dynamic to keep small objects.
 * @p labels_out: U16 or U32.
 */
IWPP_API iwpp_status iwpp_distance_watershed(iwpp_context *ctx, const iwpp_image *binary,
                                             const double spacing[3], double dynamic,
                                             int connectivity, int lines,
                                             iwpp_image *labels_out);

/** Extended maxima: regional maxima of iwpp_h_maxima(in, h) (MATLAB imextendedmax): maxima
 *  whose dynamic exceeds h. @p out is U8 0/255. */
IWPP_API iwpp_status iwpp_extended_maxima(iwpp_context *ctx, const iwpp_image *in, double h,
                                          int connectivity, iwpp_image *out);
/** Extended minima: regional minima of iwpp_h_minima(in, h). @p out is U8 0/255. */
IWPP_API iwpp_status iwpp_extended_minima(iwpp_context *ctx, const iwpp_image *in, double h,
                                          int connectivity, iwpp_image *out);

/**
 * Impose minima (MATLAB imimposemin): the reconstruction by erosion of m over
 * min(m, in stepped up), where m is the type's lowest value where @p markers is nonzero and its
 * highest elsewhere (F32: -inf and +inf), and "stepped up" is +1 for integers (saturating) and the next float up for
 * F32. The only regional minima left are the markers. @p markers: any gray type, sizes of @p in;
 * @p out has the type of @p in (may be the view @p in).
 */
IWPP_API iwpp_status iwpp_impose_minima(iwpp_context *ctx, const iwpp_image *in,
                                        const iwpp_image *markers, int connectivity,
                                        iwpp_image *out);

/** Remove border labels: every label that has a pixel on the image border (x, y at their
 *  ends; z too in 3D) becomes 0; other labels keep their values. @p labels: U8, U16 or U32;
 *  @p out the same type (may be the same view). */
IWPP_API iwpp_status iwpp_remove_border_labels(iwpp_context *ctx, const iwpp_image *labels,
                                               iwpp_image *out);

/** Label size filter: every label with fewer than @p min_pixels or (if @p max_pixels > 0) more
 *  than @p max_pixels pixels becomes 0; others keep their values. Types as
 *  iwpp_remove_border_labels. */
IWPP_API iwpp_status iwpp_label_size_filter(iwpp_context *ctx, const iwpp_image *labels,
                                            int64_t min_pixels, int64_t max_pixels,
                                            iwpp_image *out);

#ifdef __cplusplus
}
#endif

#endif /* IWPP_H */
