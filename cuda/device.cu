/*
 * device.cu - CUDA backend: driver and device queries, per-context state, device buffers and
 * host<->device transfers of strided views.
 */
#include "common.cuh"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

iwpp_status cu_malloc(iwpp_context *ctx, void **p, size_t bytes, const char *what)
{
    *p = NULL;
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 16);
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
    if (bytes > st->scratch_bytes || !st->scratch) {
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

iwpp_status cu_timer_start(iwpp_context *ctx)
{
    cuda_state *st = cu_state(ctx);
    CU_TRY(ctx, cudaEventRecord(st->ev0, st->stream), "recording a timer event");
    return IWPP_OK;
}

iwpp_status cu_timer_stop(iwpp_context *ctx)
{
    cuda_state *st = cu_state(ctx);
    CU_TRY(ctx, cudaGetLastError(), "launching a kernel");
    CU_TRY(ctx, cudaEventRecord(st->ev1, st->stream), "recording a timer event");
    CU_TRY(ctx, cudaEventSynchronize(st->ev1), "running the kernels");
    float ms = 0.0f;
    CU_TRY(ctx, cudaEventElapsedTime(&ms, st->ev0, st->ev1), "reading a timer");
    ctx->stats.compute_ms += ms;
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
    if (st->scratch) cudaFree(st->scratch);
    if (st->dctr) cudaFree(st->dctr);
    if (st->hctr) cudaFreeHost(st->hctr);
    if (st->ev0) cudaEventDestroy(st->ev0);
    if (st->ev1) cudaEventDestroy(st->ev1);
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
    size_t bytes = (size_t)iwpp_buf_count(b) * cu_type_size(b->type);
    /* Pad to 16 bytes: 32-bit atomics on U8/U16 words and vector loads never leave the block. */
    size_t padded = (bytes + 15) & ~(size_t)15;
    b->priv = NULL;
    return cu_malloc(ctx, &b->ptr, padded, "an image buffer");
}

extern "C" void iwpp_cuda_buf_free(iwpp_context *ctx, iwpp_buf *b)
{
    if (!b || !b->ptr) return;
    cuda_state *st = cu_state(ctx);
    if (st) cudaSetDevice(st->dev);
    cudaFree(b->ptr);
    cudaGetLastError();
    b->ptr = NULL;
}

/* Copy between a (possibly strided) host view and a contiguous device buffer. */
static iwpp_status transfer(iwpp_context *ctx, void *dev, const iwpp_image *im, int to_device)
{
    iwpp_status s = cu_enter(ctx);
    if (s != IWPP_OK) return s;
    cuda_state *st = cu_state(ctx);
    const size_t es = cu_type_size(im->type);
    const int64_t w = im->width, h = im->height, d = im->depth;
    const int64_t sy = im->stride_y ? im->stride_y : w;
    const int64_t sz = im->stride_z ? im->stride_z : sy * h;
    const size_t row = (size_t)w * es;
    const char *what = to_device ? "copying an image to the device" : "copying an image from the device";
    char *hbase = (char *)im->data;
    char *dbase = (char *)dev;
    if (sy == w && (d == 1 || sz == w * h)) {
        size_t bytes = row * (size_t)h * (size_t)d;
        if (to_device)
            CU_TRY(ctx, cudaMemcpyAsync(dbase, hbase, bytes, cudaMemcpyHostToDevice, st->stream), what);
        else
            CU_TRY(ctx, cudaMemcpyAsync(hbase, dbase, bytes, cudaMemcpyDeviceToHost, st->stream), what);
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

extern "C" iwpp_status iwpp_cuda_download(iwpp_context *ctx, const iwpp_buf *src, iwpp_image *dst)
{
    return transfer(ctx, src->ptr, dst, 0);
}
