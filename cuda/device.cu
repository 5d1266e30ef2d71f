/*
 * device.cu - CUDA backend: driver and device queries, per-context state, device buffers and
 * host<->device transfers of strided views (large ones through pinned staging buffers).
 *
 * Size: about 650 lines because the pinned staging pipeline (ring, chunk plan, copy threads) and
 * the buffers it fills are one piece of state; splitting it would spread that state over files.
 */
#include "common.cuh"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void stage_config(cuda_state *st, const iwpp_context *ctx);
static void stage_release(cuda_state *st);

static void put_reason(char *reason, size_t size, const char *fmt, const char *arg)
{
    if (reason && size) snprintf(reason, size, fmt, arg);
}

extern "C" int iwpp_cuda_probe(char *reason, size_t reason_size)
{
    if (reason && reason_size) reason[0] = '\0';
    /* cudart_static loads libcuda.so.1 itself; look for it first so that a machine without
     * the NVIDIA driver gets a clear reason. */
    void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!drv) {
        put_reason(reason, reason_size, "%s", "no NVIDIA driver found (libcuda.so.1 missing)");
        return 0;
    }
    dlclose(drv);
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        cudaGetLastError();
        if (e == cudaErrorNoDevice)
            put_reason(reason, reason_size, "%s", "no CUDA device found");
        else if (e == cudaErrorInsufficientDriver)
            put_reason(reason, reason_size,
                       "the NVIDIA driver is older than this build's CUDA runtime (%s); update the driver",
                       cudaGetErrorString(e));
        else
            put_reason(reason, reason_size, "no CUDA device usable (%s)", cudaGetErrorString(e));
        return 0;
    }
    if (n <= 0) {
        put_reason(reason, reason_size, "%s", "no CUDA device found");
        return 0;
    }
    return 1;
}

extern "C" int iwpp_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

extern "C" iwpp_status iwpp_cuda_device_info(int index, iwpp_device_info *out)
{
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, index) != cudaSuccess) {
        cudaGetLastError();
        return IWPP_EDEVICE;
    }
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", p.name);
    snprintf(out->platform, sizeof out->platform, "CUDA");
    out->global_memory = (uint64_t)p.totalGlobalMem;
    out->compute_units = p.multiProcessorCount;
    out->is_gpu = 1;
    return IWPP_OK;
}

iwpp_status cu_fail(iwpp_context *ctx, cudaError_t err, const char *what)
{
    cudaGetLastError(); /* clear a non-sticky error so the context stays usable */
    cuda_state *st = ctx ? cu_state(ctx) : NULL;
    const char *dev = st ? st->name : "the CUDA device";
    if (err == cudaErrorMemoryAllocation) {
        size_t fr = 0, tot = 0;
        cudaMemGetInfo(&fr, &tot);
        cudaGetLastError();
        return iwpp_set_error(ctx, IWPP_ENOMEM, "CUDA: out of device memory in %s (%.0f MiB free of %.0f MiB on %s)",
                              what, fr / 1048576.0, tot / 1048576.0, dev);
    }
    return iwpp_set_error(ctx, IWPP_EDEVICE, "CUDA: %s failed on %s: %s", what, dev, cudaGetErrorString(err));
}

static uint64_t pool_idle(cuda_state *st);

iwpp_status cu_malloc(iwpp_context *ctx, void **p, size_t bytes, const char *what)
{
    *p = NULL;
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 16);
    cuda_state *ps = cu_state(ctx);
    if (e == cudaErrorMemoryAllocation && pool_idle(ps) > 0) {
        /* the context's buffer pool holds idle memory: give it back, then try again */
        cudaGetLastError();
        cudaStreamSynchronize(ps->stream);
        cudaMemPoolTrimTo(ps->pool, 0);
        e = cudaMalloc(p, bytes ? bytes : 16);
    }
    if (e == cudaSuccess) return IWPP_OK;
    *p = NULL;
    cudaGetLastError();
    if (e == cudaErrorMemoryAllocation) {
        size_t fr = 0, tot = 0;
        cudaMemGetInfo(&fr, &tot);
        cudaGetLastError();
        cuda_state *st = cu_state(ctx);
        return iwpp_set_error(ctx, IWPP_ENOMEM,
                              "CUDA: %s needed %.1f MiB, %.1f MiB free on %s; use a smaller image or the CPU backend",
                              what, bytes / 1048576.0, fr / 1048576.0, st ? st->name : "the device");
    }
    return cu_fail(ctx, e, what);
}

/* Bytes the context's pool holds but no buffer uses (they are free for this context's calls). */
static uint64_t pool_idle(cuda_state *st)
{
    if (!st || !st->pool) return 0;
    uint64_t reserved = 0, used = 0;
    if (cudaMemPoolGetAttribute(st->pool, cudaMemPoolAttrReservedMemCurrent, &reserved) != cudaSuccess ||
        cudaMemPoolGetAttribute(st->pool, cudaMemPoolAttrUsedMemCurrent, &used) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return reserved > used ? (uint64_t)(reserved - used) : 0;
}

extern "C" uint64_t iwpp_cuda_mem_free(iwpp_context *ctx)
{
    size_t fr = 0, tot = 0;
    if (cu_enter(ctx) != IWPP_OK || cudaMemGetInfo(&fr, &tot) != cudaSuccess) {
        cudaGetLastError();
        ctx->message[0] = '\0';
        return 0;
    }
    return (uint64_t)fr + pool_idle(cu_state(ctx));
}

static void pool_open(cuda_state *st, const iwpp_context *ctx)
{
    int supported = 0;
    if (!iwpp_tune_int(ctx, IWPP_TUNE_CUDA_POOL, 1, 0, 1) || /* 0: plain cudaMalloc (measurements) */
        cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, st->dev) != cudaSuccess || !supported) {
        cudaGetLastError();
        return;
    }
    cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = st->dev;
    cudaMemPool_t pool = NULL;
    if (cudaMemPoolCreate(&pool, &props) != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    /* keep what was freed for the next call, up to a quarter of the device (the default gives
       everything back at every sync); beyond that, freed memory goes back at the next sync so
       other contexts and processes can have it */
    size_t fr = 0, tot = 0;
    if (cudaMemGetInfo(&fr, &tot) != cudaSuccess) {
        cudaGetLastError();
        cudaMemPoolDestroy(pool);
        return;
    }
    uint64_t keep = (uint64_t)tot / 4;
    if (cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess) {
        cudaGetLastError();
        cudaMemPoolDestroy(pool);
        return;
    }
    st->pool = pool;
}

iwpp_status cu_enter(iwpp_context *ctx)
{
    cuda_state *st = cu_state(ctx);
    if (!st) return iwpp_set_error(ctx, IWPP_EINTERNAL, "internal: CUDA context not open");
    CU_TRY(ctx, cudaSetDevice(st->dev), "selecting the device");
    return IWPP_OK;
}

iwpp_status cu_scratch(iwpp_context *ctx, size_t bytes, void **out)
{
    cuda_state *st = cu_state(ctx);
    /* (a tiled EDT's region caps what is kept: a larger work space of an earlier shape goes; the
       cap is set only around one EDT call, which takes its work space once, so no pointer of an
       earlier cu_scratch of the same call is freed here) */
    const bool over_cap = ctx->scratch_cap > 0 && st->scratch_bytes > ctx->scratch_cap && bytes < st->scratch_bytes;
    if (bytes > st->scratch_bytes || !st->scratch || over_cap) {
        if (st->scratch) cudaFree(st->scratch);
        st->scratch = NULL;
        st->scratch_bytes = 0;
        size_t want = bytes < ((size_t)1 << 20) ? ((size_t)1 << 20) : bytes;
        iwpp_status s = cu_malloc(ctx, &st->scratch, want, "work space");
        if (s != IWPP_OK) return s;
        st->scratch_bytes = want;
    }
    *out = st->scratch;
    return IWPP_OK;
}

/* The work space given back where it holds more than @p keep bytes (a call under a budget after
 * a larger one; native/tiles.c). */
extern "C" void iwpp_cuda_scratch_trim(iwpp_context *ctx, double keep)
{
    cuda_state *st = cu_state(ctx);
    if (!st || (double)(st->scratch ? st->scratch_bytes : 0) + (double)pool_idle(st) <= keep) return;
    if (cu_enter(ctx) != IWPP_OK) {
        ctx->message[0] = '\0';
        return;
    }
    if (st->scratch) cudaFree(st->scratch); /* (waits for the kernels that use it) */
    st->scratch = NULL;
    st->scratch_bytes = 0;
    if (st->pool) { /* and the pool's idle memory */
        cudaStreamSynchronize(st->stream);
        cudaMemPoolTrimTo(st->pool, 0);
    }
    cudaGetLastError();
}

iwpp_status cu_timer_start(iwpp_context *ctx)
{
    cuda_state *st = cu_state(ctx);
    CU_TRY(ctx, cudaEventRecord(st->ev0, st->stream), "recording a timer event");
    return IWPP_OK;
}

iwpp_status cu_timer_mark(iwpp_context *ctx)
{
    cuda_state *st = cu_state(ctx);
    CU_TRY(ctx, cudaGetLastError(), "launching a kernel");
    CU_TRY(ctx, cudaEventRecord(st->ev1, st->stream), "recording a timer event");
    return IWPP_OK;
}

iwpp_status cu_timer_read(iwpp_context *ctx)
{
    cuda_state *st = cu_state(ctx);
    CU_TRY(ctx, cudaEventSynchronize(st->ev1), "running the kernels");
    float ms = 0.0f;
    CU_TRY(ctx, cudaEventElapsedTime(&ms, st->ev0, st->ev1), "reading a timer");
    ctx->stats.compute_ms += ms;
    return IWPP_OK;
}

iwpp_status cu_timer_stop(iwpp_context *ctx)
{
    iwpp_status e = cu_timer_mark(ctx);
    return e != IWPP_OK ? e : cu_timer_read(ctx);
}

iwpp_status cu_bands_ready(iwpp_context *ctx)
{
    cuda_state *st = cu_state(ctx);
    if (!st->copy_stream)
        CU_TRY(ctx, cudaStreamCreateWithFlags(&st->copy_stream, cudaStreamNonBlocking), "creating a copy stream");
    for (int i = 0; i < IWPP_CUDA_BANDS; ++i)
        if (!st->band_ev[i])
            CU_TRY(ctx, cudaEventCreateWithFlags(&st->band_ev[i], cudaEventDisableTiming), "creating an event");
    return IWPP_OK;
}

iwpp_status cu_sync(iwpp_context *ctx, const char *what)
{
    cuda_state *st = cu_state(ctx);
    CU_TRY(ctx, cudaGetLastError(), what);
    CU_TRY(ctx, cudaStreamSynchronize(st->stream), what);
    return IWPP_OK;
}

extern "C" iwpp_status iwpp_cuda_open(iwpp_context *ctx)
{
    cuda_state *st = (cuda_state *)calloc(1, sizeof *st);
    if (!st) return iwpp_set_error(ctx, IWPP_ENOMEM, "out of host memory opening the CUDA backend");
    st->dev = ctx->device;
    stage_config(st, ctx);
    snprintf(st->name, sizeof st->name, "CUDA device %d", st->dev);
    ctx->backend_state = st;
    cudaDeviceProp p;
    cudaError_t e = cudaSetDevice(st->dev);
    if (e == cudaSuccess) e = cudaGetDeviceProperties(&p, st->dev);
    if (e == cudaSuccess) {
        snprintf(st->name, sizeof st->name, "%s", p.name);
        st->sms = p.multiProcessorCount;
        st->smem_optin = p.sharedMemPerBlockOptin;
        e = cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking);
    }
    if (e == cudaSuccess) e = cudaEventCreate(&st->ev0);
    if (e == cudaSuccess) e = cudaEventCreate(&st->ev1);
    if (e == cudaSuccess) e = cudaMalloc((void **)&st->dctr, IWPP_CUDA_NCTR * sizeof(unsigned long long));
    if (e == cudaSuccess) e = cudaMallocHost((void **)&st->hctr, IWPP_CUDA_NCTR * sizeof(unsigned long long));
    if (e == cudaSuccess) pool_open(st, ctx);
    if (e != cudaSuccess) {
        iwpp_status s = cu_fail(ctx, e, "opening the device");
        iwpp_cuda_close(ctx);
        return s;
    }
    return IWPP_OK;
}

extern "C" void iwpp_cuda_close(iwpp_context *ctx)
{
    cuda_state *st = cu_state(ctx);
    if (!st) return;
    cudaSetDevice(st->dev);
    if (st->stream) cudaStreamSynchronize(st->stream);
    stage_release(st);
    if (st->scratch) cudaFree(st->scratch);
    if (st->dctr) cudaFree(st->dctr);
    if (st->hctr) cudaFreeHost(st->hctr);
    if (st->pool) cudaMemPoolDestroy(st->pool); /* after the stream's last free (synchronized above) */
    if (st->ev0) cudaEventDestroy(st->ev0);
    if (st->ev1) cudaEventDestroy(st->ev1);
    for (int i = 0; i < IWPP_CUDA_BANDS; ++i)
        if (st->band_ev[i]) cudaEventDestroy(st->band_ev[i]);
    if (st->copy_stream) cudaStreamDestroy(st->copy_stream);
    if (st->stream) cudaStreamDestroy(st->stream);
    cudaGetLastError();
    free(st);
    ctx->backend_state = NULL;
}

/* ---- buffers ---- */

extern "C" iwpp_status iwpp_cuda_buf_alloc(iwpp_context *ctx, iwpp_buf *b)
{
    iwpp_status s = cu_enter(ctx);
    if (s != IWPP_OK) return s;
    size_t bytes = (size_t)iwpp_buf_count(b) * iwpp_type_size(b->type);
    /* Pad to 16 bytes: 32-bit atomics on U8/U16 words and vector loads never leave the block. */
    size_t padded = (bytes + 15) & ~(size_t)15;
    b->priv = NULL;
    cuda_state *st = cu_state(ctx);
    if (st->pool && !b->kept) {
        cudaError_t e = cudaMallocFromPoolAsync(&b->ptr, padded, st->pool, st->stream);
        if (e == cudaErrorMemoryAllocation) {
            /* the pool's idle blocks may be the wrong sizes: give them back, then try again */
            cudaGetLastError();
            cudaStreamSynchronize(st->stream);
            cudaMemPoolTrimTo(st->pool, 0);
            e = cudaMallocFromPoolAsync(&b->ptr, padded, st->pool, st->stream);
        }
        if (e == cudaSuccess) {
            b->priv = st->pool; /* marks a pool buffer for buf_free */
            return IWPP_OK;
        }
        b->ptr = NULL;
        cudaGetLastError();
        if (e != cudaErrorMemoryAllocation) return cu_fail(ctx, e, "allocating an image buffer");
        /* out of memory: the plain allocator's message (sizes, free memory) */
    }
    return cu_malloc(ctx, &b->ptr, padded, "an image buffer");
}

extern "C" void iwpp_cuda_buf_free(iwpp_context *ctx, iwpp_buf *b)
{
    if (!b || !b->ptr) return;
    cuda_state *st = cu_state(ctx);
    if (st) cudaSetDevice(st->dev);
    /* a pool buffer goes back to the pool in stream order (no device-wide sync) */
    if (st && b->priv && b->priv == (void *)st->pool && cudaFreeAsync(b->ptr, st->stream) == cudaSuccess) {
        b->ptr = NULL;
        b->priv = NULL;
        return;
    }
    cudaGetLastError();
    cudaFree(b->ptr);
    cudaGetLastError();
    b->ptr = NULL;
    b->priv = NULL;
}

/* ---- transfers ----
 *
 * A host view is a sequence of contiguous units (iwpp_host_layout, native/hostcopy.c: the whole
 * image, slices or rows, whichever the strides allow) that maps onto the contiguous device
 * buffer in order. Transfers below
 * stage_min bytes go straight from/to the user's (pageable) memory, one cudaMemcpy(2D)Async
 * per slice. Larger ones go through the context's pinned staging buffers in chunks of
 * stage_chunk bytes, double-buffered: while the DMA engine moves chunk k, the host packs chunk
 * k+1 into the other buffer (upload) or unpacks chunk k-1 from it (download), with
 * stage_threads host threads (OpenMP) splitting each chunk. An event per buffer marks the last
 * copy that used it. Tuning (measurements only): IWPP_CUDA_STAGE_MIN (bytes, K/M suffix, "off"),
 * IWPP_CUDA_STAGE_CHUNK, IWPP_CUDA_STAGE_THREADS, read when the context is opened. */

/* The staging settings (tuning keys cuda.stage_*), read before each large transfer: a change of
 * chunk size or ring length releases the ring (it is made again on first use). */
static void stage_config(cuda_state *st, const iwpp_context *ctx)
{
    /* at least 128 bytes: the bits upload packs 1024 pixels (128 bytes) a chunk at the least */
    const size_t chunk = iwpp_tune_bytes(ctx, IWPP_TUNE_CUDA_STAGE_CHUNK, IWPP_CUDA_STAGE_CHUNK_DEFAULT, 128, (size_t)1 << 30);
    const int bufs = (int)iwpp_tune_int(ctx, IWPP_TUNE_CUDA_STAGE_BUFS, IWPP_CUDA_STAGE_BUFS_DEFAULT, 2, IWPP_CUDA_STAGE_BUFS);
    if ((chunk != st->stage_chunk || bufs != st->stage_bufs) && st->stage[0]) {
        if (st->stream) cudaStreamSynchronize(st->stream);
        stage_release(st);
    }
    st->stage_chunk = chunk;
    st->stage_bufs = bufs;
    st->stage_min = iwpp_tune_bytes(ctx, IWPP_TUNE_CUDA_STAGE_MIN, IWPP_CUDA_STAGE_MIN_DEFAULT, 0, SIZE_MAX);
    st->stage_threads = (int)iwpp_tune_int(ctx, IWPP_TUNE_CUDA_STAGE_THREADS, IWPP_CUDA_STAGE_THREADS_DEFAULT, 1, 64);
    st->stage_stream = (int)iwpp_tune_int(ctx, IWPP_TUNE_CUDA_STAGE_NT, 1, 0, 1);
}

static void stage_release(cuda_state *st)
{
    for (int i = 0; i < IWPP_CUDA_STAGE_BUFS; ++i) {
        if (st->stage_ev[i]) cudaEventDestroy(st->stage_ev[i]);
        if (st->stage[i]) cudaFreeHost(st->stage[i]);
        st->stage_ev[i] = NULL;
        st->stage[i] = NULL;
    }
    cudaGetLastError();
}

/* The staging buffers, allocated on first use; 0 if pinned memory cannot be had (the transfer
 * then takes the direct path, which needs none). */
static int stage_ready(cuda_state *st)
{
    if (st->stage[st->stage_bufs - 1]) return 1;
    if (st->stage_failed) return 0;
    for (int i = 0; i < st->stage_bufs; ++i) {
        void *p = NULL;
        cudaEvent_t ev = NULL;
        if (cudaHostAlloc(&p, st->stage_chunk, cudaHostAllocDefault) != cudaSuccess) p = NULL;
        if (p && cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) != cudaSuccess) ev = NULL;
        if (!p || !ev) {
            if (p) cudaFreeHost(p);
            stage_release(st);
            st->stage_failed = 1;
            return 0;
        }
        st->stage[i] = p;
        st->stage_ev[i] = ev;
    }
    return 1;
}

/* A failure in the middle of a staged transfer: let queued copies finish (the buffers and the
 * user's memory must not be touched after the return), then record it. */
static iwpp_status stage_fail(iwpp_context *ctx, cudaError_t err, const char *what)
{
    cudaStreamSynchronize(cu_state(ctx)->stream);
    if (cu_state(ctx)->copy_stream) cudaStreamSynchronize(cu_state(ctx)->copy_stream);
    return cu_fail(ctx, err, what);
}

#define STAGE_TRY(ctx, call, what)                                   \
    do {                                                             \
        cudaError_t e_ = (call);                                     \
        if (e_ != cudaSuccess) return stage_fail((ctx), e_, (what)); \
    } while (0)

static iwpp_status transfer_staged(iwpp_context *ctx, char *dev, const iwpp_host_layout &L, size_t total, int to_device,
                                   const char *what, const cu_gates *gates)
{
    cuda_state *st = cu_state(ctx);
    const iwpp_chunk_plan plan = iwpp_chunk_plan_make(total, st->stage_chunk); /* native/hostcopy.c */
    const size_t nch = plan.n;
    const size_t NB = (size_t)st->stage_bufs;
    int nt = st->stage_threads;
    const int procs = iwpp_cpu_threads(ctx); /* the context's thread count, else the cores */
    if (procs > 0 && procs < nt) nt = procs;
    char *const *buf = (char *const *)st->stage;
    if (to_device) {
        for (size_t k = 0; k < nch; ++k) {
            const int i = (int)(k % NB);
            size_t a, b;
            iwpp_chunk_bounds(&plan, k, &a, &b);
            if (k >= NB) STAGE_TRY(ctx, cudaEventSynchronize(st->stage_ev[i]), what);
            iwpp_copy_range_par(&L, buf[i], a, b, 1, nt, st->stage_stream);
            STAGE_TRY(ctx, cudaMemcpyAsync(dev + a, buf[i], b - a, cudaMemcpyHostToDevice, st->stream), what);
            STAGE_TRY(ctx, cudaEventRecord(st->stage_ev[i], st->stream), what);
        }
    } else {
        /* queue the copy of chunk k, then unpack chunk k - (NB - 1) while the later ones run (the
         * buffer chunk k takes was unpacked in an earlier iteration) */
        const size_t lag = NB - 1;
        /* gated: each chunk waits on the copy stream for the first band that covers it */
        cudaStream_t cs = gates ? st->copy_stream : st->stream;
        int waited = -1;
        for (size_t k = 0; k < nch + lag; ++k) {
            if (k < nch) {
                const int i = (int)(k % NB);
                size_t a, b;
                iwpp_chunk_bounds(&plan, k, &a, &b);
                if (gates) {
                    int g = waited < 0 ? 0 : waited;
                    while (g < gates->n - 1 && gates->end[g] < b) ++g;
                    if (g != waited) STAGE_TRY(ctx, cudaStreamWaitEvent(cs, gates->ev[g], 0), what);
                    waited = g;
                }
                STAGE_TRY(ctx, cudaMemcpyAsync(buf[i], dev + a, b - a, cudaMemcpyDeviceToHost, cs), what);
                STAGE_TRY(ctx, cudaEventRecord(st->stage_ev[i], cs), what);
            }
            if (k >= lag) {
                const size_t j = k - lag;
                const int i = (int)(j % NB);
                size_t a, b;
                iwpp_chunk_bounds(&plan, j, &a, &b);
                STAGE_TRY(ctx, cudaEventSynchronize(st->stage_ev[i]), what);
                iwpp_copy_range_par(&L, buf[i], a, b, 0, nt, st->stage_stream);
            }
        }
    }
    CU_TRY(ctx, cudaStreamSynchronize(gates && !to_device ? st->copy_stream : st->stream), what);
    return IWPP_OK;
}

/* Copy between a (possibly strided) host view and a contiguous device buffer; a staged download
 * with @p gates overlaps the kernels that make it (cu_download_gated). */
static iwpp_status transfer(iwpp_context *ctx, void *dev, const iwpp_image *im, int to_device,
                            const cu_gates *gates = NULL)
{
    iwpp_status s = cu_enter(ctx);
    if (s != IWPP_OK) return s;
    cuda_state *st = cu_state(ctx);
    const size_t es = iwpp_type_size(im->type);
    const int64_t w = im->width, h = im->height, d = im->depth;
    const int64_t sy = im->stride_y ? im->stride_y : w;
    const int64_t sz = im->stride_z ? im->stride_z : sy * h;
    const size_t row = (size_t)w * es;
    const size_t total = row * (size_t)h * (size_t)d;
    const char *what = to_device ? "copying an image to the device" : "copying an image from the device";
    char *hbase = (char *)im->data;
    char *dbase = (char *)dev;
    const bool contiguous = sy == w && (d == 1 || sz == w * h);
    /* Page-locked host memory (the tile scheduler's scratch) goes straight to the DMA engine. */
    cudaPointerAttributes attr;
    bool pinned = cudaPointerGetAttributes(&attr, hbase) == cudaSuccess && attr.type == cudaMemoryTypeHost;
    cudaGetLastError();
    if (!pinned) stage_config(st, ctx);
    if (!pinned && total >= st->stage_min && total > 0 && stage_ready(st)) {
        const iwpp_host_layout L = iwpp_host_layout_of(im);
        return transfer_staged(ctx, dbase, L, total, to_device, what, gates);
    }
    if (contiguous) {
        if (to_device)
            CU_TRY(ctx, cudaMemcpyAsync(dbase, hbase, total, cudaMemcpyHostToDevice, st->stream), what);
        else
            CU_TRY(ctx, cudaMemcpyAsync(hbase, dbase, total, cudaMemcpyDeviceToHost, st->stream), what);
    } else {
        for (int64_t z = 0; z < d; ++z) {
            char *hp = hbase + (size_t)(z * sz) * es;
            char *dp = dbase + (size_t)(z * w * h) * es;
            if (to_device)
                CU_TRY(ctx, cudaMemcpy2DAsync(dp, row, hp, (size_t)sy * es, row, (size_t)h, cudaMemcpyHostToDevice,
                                              st->stream), what);
            else
                CU_TRY(ctx, cudaMemcpy2DAsync(hp, (size_t)sy * es, dp, row, row, (size_t)h, cudaMemcpyDeviceToHost,
                                              st->stream), what);
        }
    }
    CU_TRY(ctx, cudaStreamSynchronize(st->stream), what);
    return IWPP_OK;
}

extern "C" iwpp_status iwpp_cuda_upload(iwpp_context *ctx, iwpp_buf *dst, const iwpp_image *src)
{
    return transfer(ctx, dst->ptr, src, 1);
}

extern "C" void *iwpp_cuda_host_alloc(iwpp_context *ctx, size_t bytes)
{
    void *p = NULL;
    if (cu_enter(ctx) != IWPP_OK || cudaHostAlloc(&p, bytes ? bytes : 1, cudaHostAllocPortable) != cudaSuccess) {
        cudaGetLastError();
        ctx->message[0] = '\0';
        return NULL;
    }
    return p;
}

extern "C" void iwpp_cuda_host_free(iwpp_context *ctx, void *p)
{
    (void)ctx;
    if (p) cudaFreeHost(p);
    cudaGetLastError();
}

extern "C" iwpp_status iwpp_cuda_download(iwpp_context *ctx, const iwpp_buf *src, iwpp_image *dst)
{
    return transfer(ctx, src->ptr, dst, 0);
}

extern "C" iwpp_status iwpp_cuda_download_rows(iwpp_context *ctx, const iwpp_buf *src, int64_t row, iwpp_image *dst)
{
    const size_t es = iwpp_type_size(src->type);
    return transfer(ctx, (char *)src->ptr + (size_t)(row * src->w) * es, dst, 0);
}

iwpp_status cu_download_gated(iwpp_context *ctx, const void *dev, iwpp_image *dst, const cu_gates *gates)
{
    /* the direct path copies on the context's stream, after every kernel */
    return transfer(ctx, (void *)dev, dst, 0, gates);
}

/* ---- bits of "pixel != 0" ---- */

static bool view_contiguous(const iwpp_image *im)
{
    const int64_t sy = im->stride_y ? im->stride_y : im->width;
    const int64_t sz = im->stride_z ? im->stride_z : sy * im->height;
    return sy == im->width && (im->depth == 1 || sz == im->width * im->height);
}

bool cu_bits_upload_ok(iwpp_context *ctx, const iwpp_image *im, bool any_size)
{
    cuda_state *st = cu_state(ctx);
    const size_t total = (size_t)(im->width * im->height * im->depth) * iwpp_type_size(im->type);
    cudaPointerAttributes attr;
    const bool pinned = cudaPointerGetAttributes(&attr, im->data) == cudaSuccess && attr.type == cudaMemoryTypeHost;
    cudaGetLastError();
    if (pinned || !view_contiguous(im)) return false;
    stage_config(st, ctx);
    /* any_size: from 256 KiB (or the stage_min set below that), not tinier */
    const size_t min = any_size && st->stage_min > ((size_t)256 << 10) ? (size_t)256 << 10 : st->stage_min;
    return total >= min && total > 0 && stage_ready(st);
}

/* Thread per byte of bits: its eight pixels as 0/1. */
__global__ void bits_expand_kernel(const uint8_t *__restrict__ bits, uint8_t *__restrict__ out, int64_t n)
{
    const int64_t nb = (n + 7) / 8;
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < nb; k += (int64_t)gridDim.x * blockDim.x) {
        const unsigned m = bits[k];
        if (8 * k + 8 <= n) {
            uint2 v;
            v.x = (m & 1u) | (m >> 1 & 1u) << 8 | (m >> 2 & 1u) << 16 | (m >> 3 & 1u) << 24;
            v.y = (m >> 4 & 1u) | (m >> 5 & 1u) << 8 | (m >> 6 & 1u) << 16 | (m >> 7 & 1u) << 24;
            *(uint2 *)(out + 8 * k) = v;
        } else {
            for (int64_t j = 0; 8 * k + j < n; ++j) out[8 * k + j] = (uint8_t)(m >> j & 1u);
        }
    }
}

iwpp_status cu_upload_nonzero(iwpp_context *ctx, uint8_t *dev_u8, const iwpp_image *im)
{
    iwpp_status s = cu_enter(ctx);
    if (s != IWPP_OK) return s;
    cuda_state *st = cu_state(ctx);
    const char *what = "copying an image to the device";
    const int64_t n = im->width * im->height * im->depth;
    const size_t es = iwpp_type_size(im->type), nbytes = (size_t)(n + 7) / 8;
    iwpp_buf bits;
    memset(&bits, 0, sizeof bits);
    bits.type = IWPP_U8, bits.w = (int64_t)nbytes, bits.h = 1, bits.d = 1;
    if ((s = iwpp_cuda_buf_alloc(ctx, &bits)) != IWPP_OK) return s;
    const size_t E = iwpp_bits_chunk_pixels(st->stage_chunk); /* pixels a chunk */
    const size_t NB = (size_t)st->stage_bufs, nch = ((size_t)n + E - 1) / E;
    int nt = st->stage_threads;
    const int procs = iwpp_cpu_threads(ctx);
    if (procs > 0 && procs < nt) nt = procs;
    const char *src = (const char *)im->data;
    for (size_t k = 0; k < nch && s == IWPP_OK; ++k) {
        const int i = (int)(k % NB);
        const size_t e0 = k * E, e1 = e0 + E < (size_t)n ? e0 + E : (size_t)n;
        if (k >= NB) {
            const cudaError_t ce = cudaEventSynchronize(st->stage_ev[i]);
            if (ce != cudaSuccess) {
                s = stage_fail(ctx, ce, what);
                break;
            }
        }
        uint8_t *pin = (uint8_t *)st->stage[i];
        const size_t len = e1 - e0;
        iwpp_pack_nonzero_par(src + e0 * es, im->type, len, pin, nt);
        cudaError_t ce = cudaMemcpyAsync((char *)bits.ptr + e0 / 8, pin, (len + 7) / 8, cudaMemcpyHostToDevice, st->stream);
        if (ce == cudaSuccess) ce = cudaEventRecord(st->stage_ev[i], st->stream);
        if (ce != cudaSuccess) s = stage_fail(ctx, ce, what);
    }
    if (s == IWPP_OK) {
        bits_expand_kernel<<<cu_blocks((int64_t)nbytes, 256, st->sms * 16), 256, 0, st->stream>>>((const uint8_t *)bits.ptr,
                                                                                                dev_u8, n);
        cudaError_t ce = cudaGetLastError();
        if (ce != cudaSuccess) s = cu_fail(ctx, ce, what);
    }
    iwpp_cuda_buf_free(ctx, &bits); /* stream-ordered: after the expansion */
    /* the next transfer reuses the staging buffers from its first chunk on */
    if (s == IWPP_OK && cudaStreamSynchronize(st->stream) != cudaSuccess) s = cu_fail(ctx, cudaGetLastError(), what);
    return s;
}

/* ops->upload_nonzero (the EDT tiles' regions): cu_upload_nonzero where it applies, from 256 KiB
 * (H100, 8192^2 at 92 MB on 4 workers: regions of 1.6 MB went up whole as bytes, under the 2 MB
 * from which whole calls stage). */
extern "C" iwpp_status iwpp_cuda_upload_nonzero(iwpp_context *ctx, iwpp_buf *dst, const iwpp_image *im)
{
    if (dst->type != IWPP_U8 || iwpp_buf_count(dst) != im->width * im->height * im->depth) return IWPP_EUNSUPPORTED;
    iwpp_status s = cu_enter(ctx);
    if (s != IWPP_OK) return s;
    if (!cu_bits_upload_ok(ctx, im, true)) return IWPP_EUNSUPPORTED;
    return cu_upload_nonzero(ctx, (uint8_t *)dst->ptr, im);
}
