/*
 * pointwise.cu - pointwise primitives, unit erosion/dilation and min/max on CUDA.
 * Semantics are those of backend.h and match native/cpu/pointwise.c bit for bit.
 */
#include "common.cuh"

#include <math.h>
#include <stdlib.h>

/* Integer scalars as the CPU backend takes them: nearest integer (halves away from zero) of s
 * clamped to +-2^31; FILL/BORDER clamp it to the type's range; SUB/ADD_SCALAR work in 32-bit
 * integers with the scalar clamped to +-(max+1), then clamp to the range. F32: a -/+ (float)s. */
static int64_t round_scalar(double s)
{
    if (!(s > -2147483648.0)) return INT32_MIN;
    if (s > 2147483647.0) return INT32_MAX;
    return (int64_t)llround(s);
}

template <typename T> __device__ __forceinline__ T clamp_int(int32_t t)
{
    const int32_t hi = (int32_t)pix<T>::highest();
    return (T)(t < 0 ? 0 : (t > hi ? hi : t));
}
template <typename T> __device__ __forceinline__ T pw_add_scalar(T a, int32_t k, float) { return clamp_int<T>((int32_t)a + k); }
template <> __device__ __forceinline__ float pw_add_scalar<float>(float a, int32_t, float fs) { return a + fs; }
template <typename T> __device__ __forceinline__ T pw_sub_scalar(T a, int32_t k, float) { return clamp_int<T>((int32_t)a - k); }
template <> __device__ __forceinline__ float pw_sub_scalar<float>(float a, int32_t, float fs) { return a - fs; }

/* nextafterf towards -inf / +inf on the bits, as the CPU does (denormals kept). */
__device__ __forceinline__ float next_down_f(float x)
{
    unsigned u = __float_as_uint(x);
    u = (x > 0.0f) ? u - 1u : u + 1u;
    float r = (x == 0.0f) ? -0x1p-149f : __uint_as_float(u);
    return (x == -INFINITY) ? x : r;
}
__device__ __forceinline__ float next_up_f(float x)
{
    unsigned u = __float_as_uint(x);
    u = (x > 0.0f) ? u + 1u : u - 1u;
    float r = (x == 0.0f) ? 0x1p-149f : __uint_as_float(u);
    return (x == INFINITY) ? x : r;
}
template <typename T> __device__ __forceinline__ T step_down(T a) { return (T)(a - (a > 0)); }
template <> __device__ __forceinline__ float step_down<float>(float a) { return next_down_f(a); }
template <typename T> __device__ __forceinline__ T step_up(T a) { return (T)(a + (a < pix<T>::highest())); }
template <> __device__ __forceinline__ float step_up<float>(float a) { return next_up_f(a); }
template <typename T> __device__ __forceinline__ T sub_sat(T a, T b) { return clamp_int<T>((int32_t)a - (int32_t)b); }
template <> __device__ __forceinline__ float sub_sat<float>(float a, float b) { return a - b; }

template <typename T>
__global__ void pw_kernel(int op, T *dst, const T *a, const T *b, int32_t k, float fs, T sv, int64_t w, int64_t h, int64_t d)
{
    const int64_t n = w * h * d;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        T r;
        switch (op) {
        case IWPP_PW_COPY: r = a[i]; break;
        case IWPP_PW_FILL: r = sv; break;
        case IWPP_PW_MIN: { T x = a[i], y = b[i]; r = x < y ? x : y; } break;
        case IWPP_PW_MAX: { T x = a[i], y = b[i]; r = x > y ? x : y; } break;
        case IWPP_PW_SUB_SCALAR: r = pw_sub_scalar<T>(a[i], k, fs); break;
        case IWPP_PW_ADD_SCALAR: r = pw_add_scalar<T>(a[i], k, fs); break;
        case IWPP_PW_STEP_DOWN: r = step_down<T>(a[i]); break;
        case IWPP_PW_STEP_UP: r = step_up<T>(a[i]); break;
        case IWPP_PW_SUB: r = sub_sat<T>(a[i], b[i]); break;
        default: { /* IWPP_PW_BORDER */
            const int64_t x = i % w, rr = i / w, y = rr % h, z = rr / h;
            const bool border = x == 0 || x == w - 1 || y == 0 || y == h - 1 || (d > 1 && (z == 0 || z == d - 1));
            r = border ? a[i] : sv;
        }
        }
        dst[i] = r;
    }
}

template <typename T>
__global__ void cmp_kernel(int greater, uint8_t *dst, const T *a, const T *b, int64_t n)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const T x = a[i], y = b[i];
        dst[i] = (greater ? (x > y) : (x < y)) ? 255 : 0;
    }
}

template <typename T>
static void launch_pw(cudaStream_t st, int sms, iwpp_pw_op op, iwpp_buf *dst, const iwpp_buf *a, const iwpp_buf *b,
                      double s)
{
    const int64_t n = iwpp_buf_count(dst);
    const unsigned blocks = cu_blocks(n, 256, sms * 16);
    if (op == IWPP_PW_LESS || op == IWPP_PW_GREATER) {
        cmp_kernel<T><<<blocks, 256, 0, st>>>(op == IWPP_PW_GREATER, (uint8_t *)dst->ptr, (const T *)a->ptr,
                                             (const T *)b->ptr, n);
        return;
    }
    /* the scalar, prepared on the host exactly as native/cpu/pointwise.c does */
    const int64_t si = round_scalar(s);
    const int64_t tmax = sizeof(T) == 1 ? 255 : 65535;
    const int32_t k = (int32_t)(si < -(tmax + 1) ? -(tmax + 1) : si > tmax + 1 ? tmax + 1 : si);
    const float fs = (float)s;
    T sv;
    if (sizeof(T) == 4)
        sv = (T)fs;
    else
        sv = (T)(si < 0 ? 0 : (si > tmax ? tmax : si));
    pw_kernel<T><<<blocks, 256, 0, st>>>((int)op, (T *)dst->ptr, a ? (const T *)a->ptr : NULL,
                                         b ? (const T *)b->ptr : NULL, k, fs, sv, dst->w, dst->h, dst->d);
}

extern "C" iwpp_status iwpp_cuda_pointwise(iwpp_context *ctx, iwpp_pw_op op, iwpp_buf *dst, const iwpp_buf *a,
                                           const iwpp_buf *b, double s)
{
    iwpp_status e = cu_enter(ctx);
    if (e != IWPP_OK) return e;
    cuda_state *st = cu_state(ctx);
    if ((e = cu_timer_start(ctx)) != IWPP_OK) return e;
    /* the element type: of the inputs for comparisons, of dst otherwise */
    const iwpp_type t = (op == IWPP_PW_LESS || op == IWPP_PW_GREATER) ? a->type : dst->type;
    switch (t) {
    case IWPP_U8: launch_pw<uint8_t>(st->stream, st->sms, op, dst, a, b, s); break;
    case IWPP_U16: launch_pw<uint16_t>(st->stream, st->sms, op, dst, a, b, s); break;
    case IWPP_F32: launch_pw<float>(st->stream, st->sms, op, dst, a, b, s); break;
    default:
        return iwpp_set_error(ctx, IWPP_EINTERNAL, "internal: pointwise operation on type %s reached the CUDA backend",
                              iwpp_type_name(t));
    }
    return cu_timer_stop(ctx);
}

/* ---- unit erosion / dilation ---- */

template <bool ERO, typename T> __device__ __forceinline__ T unit_pick(T v, T y) { return order<ERO>::best(v, y); }
template <> __device__ __forceinline__ float unit_pick<true, float>(float x, float y)
{
    float m = (y < x) ? y : x;
    return (y == x && signbit(y)) ? y : m;
}
template <> __device__ __forceinline__ float unit_pick<false, float>(float x, float y)
{
    float m = (y > x) ? y : x;
    return (y == x && !signbit(y)) ? y : m;
}

template <typename T, bool ERO>
__global__ void unit_kernel(T *dst, const T *__restrict__ src, geom g)
{
    const int64_t n = g.w * g.h * g.d;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t x = i % g.w, r = i / g.w, y = r % g.h, z = r / g.h;
        T v = src[i];
        for (int k = 0; k < g.n; ++k) {
            const int64_t qx = x + g.off[k][0], qy = y + g.off[k][1], qz = z + g.off[k][2];
            if (qx < 0 || qx >= g.w || qy < 0 || qy >= g.h || qz < 0 || qz >= g.d) continue;
            v = unit_pick<ERO>(v, src[qx + g.w * (qy + g.h * qz)]);
        }
        dst[i] = v;
    }
}

template <typename T>
static void launch_unit(cudaStream_t st, int sms, T *dst, const T *src, const geom &g, int ero)
{
    const unsigned blocks = cu_blocks(g.w * g.h * g.d, 256, sms * 16);
    if (ero)
        unit_kernel<T, true><<<blocks, 256, 0, st>>>(dst, src, g);
    else
        unit_kernel<T, false><<<blocks, 256, 0, st>>>(dst, src, g);
}

extern "C" iwpp_status iwpp_cuda_morph_unit(iwpp_context *ctx, iwpp_buf *dst, const iwpp_buf *src, int connectivity,
                                            iwpp_morph_mode mode, int iterations)
{
    iwpp_status e = cu_enter(ctx);
    if (e != IWPP_OK) return e;
    cuda_state *st = cu_state(ctx);
    const geom g = make_geom(src, connectivity);
    const size_t es = iwpp_type_size(src->type);
    const size_t bytes = (size_t)iwpp_buf_count(src) * es;
    if (iterations <= 0) {
        CU_TRY(ctx, cudaMemcpyAsync(dst->ptr, src->ptr, bytes, cudaMemcpyDeviceToDevice, st->stream), "copying");
        return cu_sync(ctx, "copying");
    }
    void *tmp = NULL;
    if (iterations > 1 && (e = cu_scratch(ctx, bytes, &tmp)) != IWPP_OK) return e;
    if ((e = cu_timer_start(ctx)) != IWPP_OK) return e;
    /* ping-pong so that the last iteration writes dst */
    const void *from = src->ptr;
    for (int it = 0; it < iterations; ++it) {
        void *to = ((iterations - 1 - it) % 2 == 0) ? dst->ptr : tmp;
        const int ero = mode == IWPP_BY_EROSION;
        switch (src->type) {
        case IWPP_U8: launch_unit<uint8_t>(st->stream, st->sms, (uint8_t *)to, (const uint8_t *)from, g, ero); break;
        case IWPP_U16: launch_unit<uint16_t>(st->stream, st->sms, (uint16_t *)to, (const uint16_t *)from, g, ero); break;
        case IWPP_F32: launch_unit<float>(st->stream, st->sms, (float *)to, (const float *)from, g, ero); break;
        default:
            return iwpp_set_error(ctx, IWPP_EINTERNAL, "internal: erosion of type %s reached the CUDA backend",
                                  iwpp_type_name(src->type));
        }
        from = to;
    }
    return cu_timer_stop(ctx);
}

/* ---- min / max ---- */

template <typename T>
__global__ void minmax_kernel(const T *a, int64_t n, T *part)
{
    T lo = pix<T>::highest(), hi = pix<T>::lowest();
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const T v = a[i];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    __shared__ T slo[256], shi[256];
    slo[threadIdx.x] = lo;
    shi[threadIdx.x] = hi;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) {
            slo[threadIdx.x] = slo[threadIdx.x + s] < slo[threadIdx.x] ? slo[threadIdx.x + s] : slo[threadIdx.x];
            shi[threadIdx.x] = shi[threadIdx.x + s] > shi[threadIdx.x] ? shi[threadIdx.x + s] : shi[threadIdx.x];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        part[2 * blockIdx.x] = slo[0];
        part[2 * blockIdx.x + 1] = shi[0];
    }
}

template <typename T>
static iwpp_status run_minmax(iwpp_context *ctx, const iwpp_buf *a, double *mn, double *mx)
{
    cuda_state *st = cu_state(ctx);
    const int64_t n = iwpp_buf_count(a);
    const unsigned blocks = cu_blocks(n, 256, 1024);
    void *part = NULL;
    iwpp_status e = cu_scratch(ctx, 2 * blocks * sizeof(T), &part);
    if (e != IWPP_OK) return e;
    if ((e = cu_timer_start(ctx)) != IWPP_OK) return e;
    minmax_kernel<T><<<blocks, 256, 0, st->stream>>>((const T *)a->ptr, n, (T *)part);
    T host[2 * 1024];
    CU_TRY(ctx, cudaMemcpyAsync(host, part, 2 * blocks * sizeof(T), cudaMemcpyDeviceToHost, st->stream),
           "reading the minimum and maximum");
    if ((e = cu_timer_stop(ctx)) != IWPP_OK) return e;
    T lo = host[0], hi = host[1];
    for (unsigned i = 1; i < blocks; ++i) {
        if (host[2 * i] < lo) lo = host[2 * i];
        if (host[2 * i + 1] > hi) hi = host[2 * i + 1];
    }
    *mn = (double)lo;
    *mx = (double)hi;
    return IWPP_OK;
}

extern "C" iwpp_status iwpp_cuda_minmax(iwpp_context *ctx, const iwpp_buf *a, double *min, double *max)
{
    iwpp_status e = cu_enter(ctx);
    if (e != IWPP_OK) return e;
    switch (a->type) {
    case IWPP_U8: return run_minmax<uint8_t>(ctx, a, min, max);
    case IWPP_U16: return run_minmax<uint16_t>(ctx, a, min, max);
    case IWPP_F32: return run_minmax<float>(ctx, a, min, max);
    default:
        return iwpp_set_error(ctx, IWPP_EINTERNAL, "internal: min/max of type %s reached the CUDA backend",
                              iwpp_type_name(a->type));
    }
}
