/*
 * common.cuh - state, error handling and small device helpers shared by the
 * CUDA backend's .cu files (internal).
 */
#ifndef IWPP_CUDA_COMMON_CUH
#define IWPP_CUDA_COMMON_CUH

#include "cuda_backend.h"
#include "neighborhood.h"

#include <cuda_runtime.h>
#include <stdint.h>
#include <float.h>

/* Pinned staging of large transfers (device.cu): buffers, defaults (env overrides there; the
 * defaults are the best of the measurements in cuda/README.md). */
#define IWPP_CUDA_STAGE_BUFS 4 /* at most; stage_bufs of them are used */
#define IWPP_CUDA_STAGE_BUFS_DEFAULT 4 /* 3 before session 14: cuda/README.md, "Transfers" */
#define IWPP_CUDA_STAGE_CHUNK_DEFAULT ((size_t)16 << 20)
#define IWPP_CUDA_STAGE_MIN_DEFAULT ((size_t)2 << 20)
#define IWPP_CUDA_STAGE_THREADS_DEFAULT 16 /* at most the context's threads / the cores */

/* Per-context state (ctx->backend_state). One context is used by one host thread at a time;
 * every operation runs on the context's own stream. */
#define IWPP_CUDA_BANDS 16

struct cuda_state {
    int dev;
    cudaStream_t stream;
    cudaEvent_t ev0, ev1;
    int sms;                    /* multiprocessors */
    size_t smem_optin;          /* largest dynamic shared memory per block (opt-in) */
    char name[256];
    void *scratch;              /* grow-only device scratch arena, freed on close */
    size_t scratch_bytes;
    unsigned long long *dctr;   /* 64 device counters */
    unsigned long long *hctr;   /* their pinned host mirror */
    /* Pinned staging of large host<->device transfers (device.cu): IWPP_CUDA_STAGE_BUFS buffers of
     * stage_chunk bytes, allocated on the first transfer of at least stage_min bytes, freed on
     * close; stage_ev[i] marks the last copy that used buffer i. */
    void *stage[IWPP_CUDA_STAGE_BUFS];
    cudaEvent_t stage_ev[IWPP_CUDA_STAGE_BUFS];
    size_t stage_chunk;         /* bytes per buffer */
    size_t stage_min;           /* transfers below this go straight from/to the user's memory */
    int stage_threads;          /* host threads packing / unpacking a chunk */
    int stage_bufs;             /* buffers in the ring (2..IWPP_CUDA_STAGE_BUFS) */
    int stage_stream;           /* host copies with streaming stores (iwpp_stream_copy) */
    int stage_failed;           /* pinned allocation failed once: stay on the direct path */
    int host_finished;          /* the last reconstruction's long chains ran on the host */
    /* Image buffers come from the context's own stream-ordered pool, which keeps freed memory
     * for the next call (no cudaMalloc/cudaFree, no device-wide sync per call); NULL: plain
     * cudaMalloc (no pool support, or IWPP_CUDA_POOL=0). Released on close. */
    cudaMemPool_t pool;
    /* Whole calls that download while they compute (edt_exact.cu, iwpp_cuda_edt_views): a
     * second stream for the copies and an event per band of results; made on first use. */
    cudaStream_t copy_stream;
    cudaEvent_t band_ev[IWPP_CUDA_BANDS];
};

/* Bands of a result that become ready one after another: bytes [0, end[i]) of the device buffer
 * are final once ev[i] has completed (end[] ascending, the last = the whole buffer). */
struct cu_gates {
    int n;
    size_t end[IWPP_CUDA_BANDS];
    cudaEvent_t ev[IWPP_CUDA_BANDS];
};

/* device.cu: the copy stream and band events (made on first use). */
iwpp_status cu_bands_ready(iwpp_context *ctx);
/* A download whose staged chunks each wait for the gate that covers them, on the copy stream,
 * so that it overlaps the kernels still running on the context's stream; @p gates NULL = the
 * plain download. */
iwpp_status cu_download_gated(iwpp_context *ctx, const void *dev, iwpp_image *dst, const cu_gates *gates);
/* The upload of @p im as bits of "pixel != 0" (host-packed, iwpp_pack_nonzero) expanded on the
 * device to one U8 0/1 per pixel in @p dev_u8. cu_bits_upload_ok says whether it applies: a
 * contiguous view in pageable memory, large enough to be staged (with @p any_size, from 256 KiB:
 * the EDT tiles' regions, many a call), with the staging buffers at hand. */
bool cu_bits_upload_ok(iwpp_context *ctx, const iwpp_image *im, bool any_size);
iwpp_status cu_upload_nonzero(iwpp_context *ctx, uint8_t *dev_u8, const iwpp_image *im);
/* The timer's end event without waiting for it; cu_timer_read then waits and adds the time. */
iwpp_status cu_timer_mark(iwpp_context *ctx);
iwpp_status cu_timer_read(iwpp_context *ctx);


#define IWPP_CUDA_NCTR 64

static inline cuda_state *cu_state(iwpp_context *ctx) { return (cuda_state *)ctx->backend_state; }

/* Record a CUDA failure in ctx: ENOMEM for allocation failures, EDEVICE otherwise. */
iwpp_status cu_fail(iwpp_context *ctx, cudaError_t err, const char *what);

/* Evaluate a CUDA call; on failure record it and return the status from the enclosing function. */
#define CU_TRY(ctx, call, what)                                    \
    do {                                                           \
        cudaError_t e_ = (call);                                   \
        if (e_ != cudaSuccess) return cu_fail((ctx), e_, (what));  \
    } while (0)

/* Let kernel @p func take more than 48 KiB of dynamic shared memory. The attribute belongs to
 * the function, shared by every context and host thread, so it is always raised to the same
 * value, the most the device allows next to the kernel's static shared memory: a size set per
 * call could be lowered by another thread between our set and our launch. */
template <typename F> static inline cudaError_t cu_allow_smem(const cuda_state *st, F *func)
{
    cudaFuncAttributes a;
    cudaError_t e = cudaFuncGetAttributes(&a, func);
    if (e != cudaSuccess) return e;
    if (a.sharedSizeBytes >= st->smem_optin) return cudaErrorInvalidValue;
    return cudaFuncSetAttribute(func, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)(st->smem_optin - a.sharedSizeBytes));
}

/* Make the context's device current on this host thread. */
iwpp_status cu_enter(iwpp_context *ctx);
/* A device scratch area of at least @p bytes (grow-only; contents undefined). */
iwpp_status cu_scratch(iwpp_context *ctx, size_t bytes, void **out);
/* Device allocation with the "needed X MiB, Y MiB free" message on failure. */
iwpp_status cu_malloc(iwpp_context *ctx, void **p, size_t bytes, const char *what);
/* Start / stop the compute timer (events on the stream); stop syncs and adds to stats.compute_ms. */
iwpp_status cu_timer_start(iwpp_context *ctx);
iwpp_status cu_timer_stop(iwpp_context *ctx);
/* Launch-error check followed by a stream synchronisation. */
iwpp_status cu_sync(iwpp_context *ctx, const char *what);

/* Warp-aggregated append: every lane of a converged warp calls it; the lanes with @p act get
 * consecutive slots of *counter with one atomic per warp. Returns this lane's slot (meaningful
 * only where act). Used by the wavefront collects and the PREFIXSUM queue variant. */
template <typename C> __device__ __forceinline__ C warp_append_slot(bool act, C *counter)
{
    const unsigned ball = __ballot_sync(0xffffffffu, act);
    if (!ball) return 0;
    const unsigned lane = threadIdx.x & 31u;
    C base = 0;
    if (lane == 0) base = atomicAdd(counter, (C)__popc(ball));
    base = __shfl_sync(0xffffffffu, base, 0);
    return base + (C)__popc(ball & ((1u << lane) - 1u));
}

static inline unsigned cu_blocks(int64_t n, int threads, int cap)
{
    int64_t b = (n + threads - 1) / threads;
    if (b < 1) b = 1;
    if (b > cap) b = cap;
    return (unsigned)b;
}

/* ---- pixel type traits ---- */
template <typename T> struct pix;
template <> struct pix<uint8_t> {
    static __host__ __device__ __forceinline__ uint8_t lowest() { return 0; }
    static __host__ __device__ __forceinline__ uint8_t highest() { return 255; }
};
template <> struct pix<uint16_t> {
    static __host__ __device__ __forceinline__ uint16_t lowest() { return 0; }
    static __host__ __device__ __forceinline__ uint16_t highest() { return 65535; }
};
template <> struct pix<float> {
    static __host__ __device__ __forceinline__ float lowest() { return -INFINITY; }
    static __host__ __device__ __forceinline__ float highest() { return INFINITY; }
};

/* Ordering of a reconstruction: dilation raises values (max), erosion lowers them (min).
 * "ahead(a, b)": a would propagate over b. */
template <bool ERO> struct order {
    template <typename T> static __device__ __forceinline__ bool ahead(T a, T b) { return ERO ? (a < b) : (a > b); }
    template <typename T> static __device__ __forceinline__ T best(T a, T b) { return ahead(a, b) ? a : b; }
    template <typename T> static __device__ __forceinline__ T limit(T a, T bound) { return ahead(a, bound) ? bound : a; }
    template <typename T> static __device__ __forceinline__ T worst() { return ERO ? pix<T>::highest() : pix<T>::lowest(); }
    template <typename T> static __device__ __forceinline__ T top() { return ERO ? pix<T>::lowest() : pix<T>::highest(); }
};

/* Read through L2 only (values other blocks update with atomics during the kernel). */
__device__ __forceinline__ uint8_t ld_cg(const uint8_t *p) { return (uint8_t)__ldcg((const unsigned char *)p); }
__device__ __forceinline__ uint16_t ld_cg(const uint16_t *p) { return (uint16_t)__ldcg((const unsigned short *)p); }
__device__ __forceinline__ float ld_cg(const float *p) { return __ldcg(p); }

/* The 32-bit word that holds *p (buffers are padded to 16 bytes, so it never leaves the
 * allocation), and where in it *p lies. */
template <typename T> __device__ __forceinline__ unsigned int *word_of(T *p)
{
    return (unsigned int *)((uintptr_t)p & ~(uintptr_t)3);
}
template <typename T> __device__ __forceinline__ unsigned word_shift(const T *p)
{
    return sizeof(T) == 4 ? 0u : (unsigned)((uintptr_t)p & 3) * 8u;
}
template <typename T> __device__ __forceinline__ T from_word(unsigned int w, unsigned shift)
{
    if (sizeof(T) == 4) return __uint_as_float(w);
    return (T)((w >> shift) & (sizeof(T) == 1 ? 0xFFu : 0xFFFFu));
}
template <typename T> __device__ __forceinline__ unsigned int into_word(unsigned int w, unsigned shift, T v);
template <> __device__ __forceinline__ unsigned int into_word<uint8_t>(unsigned int w, unsigned shift, uint8_t v)
{
    return (w & ~(0xFFu << shift)) | ((unsigned int)v << shift);
}
template <> __device__ __forceinline__ unsigned int into_word<uint16_t>(unsigned int w, unsigned shift, uint16_t v)
{
    return (w & ~(0xFFFFu << shift)) | ((unsigned int)v << shift);
}
template <> __device__ __forceinline__ unsigned int into_word<float>(unsigned int, unsigned, float v)
{
    return __float_as_uint(v);
}

/* Atomically move *addr towards @p val (max for dilation, min for erosion), by compare-and-swap
 * on the 32-bit word that holds it, starting from @p old, a value of that word read earlier (a
 * stale one costs one more CAS; J only moves one way, so a value already at or past @p val in it
 * is at or past it now); returns the old value of *addr. */
template <bool ERO, typename T>
__device__ __forceinline__ T atomic_improve_from(T *addr, T val, unsigned int old)
{
    unsigned int *word = word_of(addr);
    const unsigned shift = word_shift(addr);
    for (;;) {
        const T ov = from_word<T>(old, shift);
        if (!order<ERO>::ahead(val, ov)) return ov;
        const unsigned int prev = atomicCAS(word, old, into_word<T>(old, shift, val));
        if (prev == old) return ov;
        old = prev;
    }
}

template <bool ERO, typename T> __device__ __forceinline__ T atomic_improve(T *addr, T val)
{
    return atomic_improve_from<ERO>(addr, val, __ldcg(word_of(addr)));
}

/* Image geometry and neighbourhood passed by value to kernels. */
struct geom {
    int64_t w, h, d;
    int n;                 /* number of neighbours */
    signed char off[26][3];
};

static inline geom make_geom(const iwpp_buf *b, int connectivity)
{
    geom g;
    g.w = b->w;
    g.h = b->h;
    g.d = b->d;
    int o[26][3];
    g.n = iwpp_neighbors(connectivity, b->d == 1, o);
    for (int i = 0; i < g.n; ++i)
        for (int k = 0; k < 3; ++k) g.off[i][k] = (signed char)o[i][k];
    return g;
}

/* Every pixel once, block by block over rows, so that x, y, z cost one 64-bit division per row
 * and not per pixel (the divisions were most of the wavefront collects' time: 2.1 ms for an
 * 8192^2 F32 image on the H100). Loops are uniform across the block and visit(p, x, y, z, valid)
 * is called by every thread together (valid = false past a row's end), so it may use warp-wide
 * operations. Rows narrower than the block are taken several at a time. */
template <typename Visit> __device__ __forceinline__ void for_each_pixel_by_rows(const geom &g, Visit visit)
{
    const int64_t rows = g.h * g.d, bw = blockDim.x;
    if (g.w >= bw) {
        for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
            const int64_t y = r % g.h, z = r / g.h;
            for (int64_t x0 = 0; x0 < g.w; x0 += bw) {
                const int64_t x = x0 + threadIdx.x;
                visit(r * g.w + x, x, y, z, x < g.w);
            }
        }
        return;
    }
    const int per = (int)(bw / g.w), lr = (int)threadIdx.x / (int)g.w;
    const int64_t x = (int64_t)threadIdx.x - (int64_t)lr * g.w;
    for (int64_t r0 = (int64_t)blockIdx.x * per; r0 < rows; r0 += (int64_t)gridDim.x * per) {
        const int64_t r = r0 + lr;
        const bool valid = lr < per && r < rows;
        visit(r * g.w + x, x, valid ? r % g.h : 0, valid ? r / g.h : 0, valid);
    }
}

#endif
