/*
 * edt_danielsson.cu - the Danielsson EDT on CUDA: paper 000 Alg. 6 on the multi-level queue
 * (mlqueue.cuh): every pixel holds its nearest background site packed in 64 bits (x, y, z: 21
 * bits each); a neighbour takes p's site if it is strictly closer, by a 64-bit atomicCAS retried
 * while it still is. 8-connected in 2D, 26 in 3D, as on the CPU; d2 is formed as on the CPU
 * (compiled with -fmad=false, as edt_exact.cu). Called from iwpp_cuda_edt (edt_exact.cu).
 */
#include "mlqueue.cuh"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

template <typename T> __device__ __forceinline__ bool is_bg(const T *p, int64_t i) { return p[i] == (T)0; }

#define SITE_NONE 0xFFFFFFFFFFFFFFFFull
#define SITE_BITS 21
#define SITE_MASK ((1ull << SITE_BITS) - 1)

__device__ __forceinline__ unsigned long long site_pack(int64_t x, int64_t y, int64_t z)
{
    return (unsigned long long)x | ((unsigned long long)y << SITE_BITS) | ((unsigned long long)z << (2 * SITE_BITS));
}

/* d2 exactly as native/cpu/edt.c's site_d2 */
__device__ __forceinline__ double site_d2(unsigned long long s, int64_t x, int64_t y, int64_t z, double hx, double hy,
                                          double hz)
{
    const int64_t sx = (int64_t)(s & SITE_MASK), sy = (int64_t)((s >> SITE_BITS) & SITE_MASK),
                  sz = (int64_t)((s >> (2 * SITE_BITS)) & SITE_MASK);
    const double tz = (double)(z - sz) * hz;
    const double ty = (double)(y - sy) * hy;
    const double tx = (double)(x - sx) * hx;
    return (tz * tz + ty * ty) + tx * tx;
}

template <typename T>
__global__ void dan_init(const T *in, unsigned long long *vr, int64_t w, int64_t h, int64_t n)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t x = i % w, r = i / w, y = r % h, z = r / h;
        vr[i] = in[i] == (T)0 ? site_pack(x, y, z) : SITE_NONE;
    }
}

template <typename IdxT> struct dan_op {
    unsigned long long *vr;
    geom g;
    double hx, hy, hz;
    struct item {
        int64_t x, y, z;
        unsigned long long s;
    };
    __device__ __forceinline__ int nbr() const { return g.n; }
    __device__ __forceinline__ bool load(IdxT p, item &it) const
    {
        const int64_t pp = (int64_t)p;
        it.x = pp % g.w;
        const int64_t r = pp / g.w;
        it.y = r % g.h;
        it.z = r / g.h;
        it.s = __ldcg(vr + pp);
        return it.s != SITE_NONE;
    }
    __device__ __forceinline__ bool visit(const item &it, int k, IdxT &q) const
    {
        const int64_t qx = it.x + g.off[k][0], qy = it.y + g.off[k][1], qz = it.z + g.off[k][2];
        if (qx < 0 || qx >= g.w || qy < 0 || qy >= g.h || qz < 0 || qz >= g.d) return false;
        const int64_t qi = qx + g.w * (qy + g.h * qz);
        q = (IdxT)qi;
        const double dn = site_d2(it.s, qx, qy, qz, hx, hy, hz);
        unsigned long long cur = __ldcg(vr + qi);
        for (;;) {
            if (cur == it.s) return false;
            if (cur != SITE_NONE && !(dn < site_d2(cur, qx, qy, qz, hx, hy, hz))) return false;
            const unsigned long long prev = atomicCAS(vr + qi, cur, it.s);
            if (prev == cur) return true;
            cur = prev;
        }
    }
};

/* wavefront: pixels with a site that some neighbour would take */
template <typename IdxT>
__global__ void dan_collect(const unsigned long long *vr, geom g, double hx, double hy, double hz, IdxT *out,
                            long long cap, unsigned long long *count)
{
    for_each_pixel_by_rows(g, [&](int64_t p, int64_t x, int64_t y, int64_t z, bool valid) {
        bool act = false;
        const unsigned long long s = valid ? vr[p] : SITE_NONE;
        for (int k = 0; k < g.n && !act && s != SITE_NONE; ++k) {
            const int64_t qx = x + g.off[k][0], qy = y + g.off[k][1], qz = z + g.off[k][2];
            if (qx < 0 || qx >= g.w || qy < 0 || qy >= g.h || qz < 0 || qz >= g.d) continue;
            const unsigned long long c = vr[qx + g.w * (qy + g.h * qz)];
            act = c != s && (c == SITE_NONE || site_d2(s, qx, qy, qz, hx, hy, hz) < site_d2(c, qx, qy, qz, hx, hy, hz));
        }
        const unsigned long long pos = warp_append_slot(act, count);
        if (act && (long long)pos < cap) out[pos] = (IdxT)p;
    });
}

__global__ void dan_final(const unsigned long long *vr, float *dist, int64_t *nearest, int64_t w, int64_t h, int64_t n,
                          double hx, double hy, double hz)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const unsigned long long s = vr[i];
        if (s == SITE_NONE) {
            dist[i] = INFINITY;
            if (nearest) nearest[i] = -1;
            continue;
        }
        const int64_t x = i % w, r = i / w, y = r % h, z = r / h;
        dist[i] = (float)sqrt(site_d2(s, x, y, z, hx, hy, hz));
        if (nearest) {
            const int64_t sx = (int64_t)(s & SITE_MASK), sy = (int64_t)((s >> SITE_BITS) & SITE_MASK),
                          sz = (int64_t)((s >> (2 * SITE_BITS)) & SITE_MASK);
            nearest[i] = sx + w * (sy + h * sz);
        }
    }
}

template <typename IdxT, int VARIANT>
static iwpp_status dan_queue(iwpp_context *ctx, unsigned long long *vr, const geom &g, const double sp[3],
                             char *work, size_t work_bytes)
{
    cuda_state *st = cu_state(ctx);
    cudaStream_t s = st->stream;
    const int64_t N = g.w * g.h * g.d;
    auto kern = mlq_kernel<dan_op<IdxT>, IdxT, VARIANT>;
    mlq_shape shape;
    iwpp_status es = mlq_shape_for<IdxT>(ctx, kern, VARIANT, g.n, &shape);
    if (es != IWPP_OK) return es;
    const int blocks = shape.blocks, threshold = shape.threshold;
    const size_t smem = shape.smem;
    /* work space: wavefront (N items) | block queues | per-block counters */
    const size_t init_bytes = ((size_t)N * sizeof(IdxT) + 255) & ~(size_t)255;
    const size_t gc_bytes = (size_t)blocks * sizeof(unsigned long long);
    long long cap;
    if (ctx->queue_capacity > 0) {
        cap = ctx->queue_capacity;
    } else {
        cap = (long long)((work_bytes - init_bytes - gc_bytes) / ((size_t)blocks * 2 * sizeof(IdxT)));
    }
    if (init_bytes + gc_bytes + (size_t)blocks * 2 * (size_t)cap * sizeof(IdxT) > work_bytes || cap < 1)
        return iwpp_set_error(ctx, IWPP_EINTERNAL, "internal: Danielsson work space too small");
    IdxT *init = (IdxT *)work;
    IdxT *gq = (IdxT *)(work + init_bytes);
    unsigned long long *gcount = (unsigned long long *)((char *)gq + (size_t)blocks * 2 * (size_t)cap * sizeof(IdxT));
    unsigned long long *ctr = st->dctr;
    dan_op<IdxT> op;
    op.vr = vr;
    op.g = g;
    op.hx = sp[0];
    op.hy = sp[1];
    op.hz = sp[2];
    for (int pass = 0;; ++pass) {
        CU_TRY(ctx, cudaMemsetAsync(ctr, 0, 8 * sizeof(unsigned long long), s), "clearing counters");
        dan_collect<IdxT><<<cu_blocks(N, 256, st->sms * 8), 256, 0, s>>>(vr, g, sp[0], sp[1], sp[2], init, N, ctr);
        CU_TRY(ctx, cudaMemcpyAsync(st->hctr, ctr, sizeof(unsigned long long), cudaMemcpyDeviceToHost, s),
               "reading the wavefront size");
        iwpp_status e = cu_sync(ctx, "collecting the wavefront");
        if (e != IWPP_OK) return e;
        const long long count = (long long)st->hctr[0];
        if (count == 0) break;
        if (pass > 0) ctx->stats.overflow_reruns++;
        bool overflowed = false;
        e = mlq_launch(ctx, kern, blocks, smem, op, init, count, gq, cap, threshold, ctr, gcount, gc_bytes,
                       &overflowed);
        if (e != IWPP_OK) return e;
        if (!overflowed) break;
    }
    return IWPP_OK;
}

template <typename IdxT>
static iwpp_status dan_variant(iwpp_context *ctx, unsigned long long *vr, const geom &g, const double sp[3],
                               char *work, size_t work_bytes)
{
    return mlq_by_variant(ctx, [&](auto v) { return dan_queue<IdxT, decltype(v)::value>(ctx, vr, g, sp, work, work_bytes); });
}

iwpp_status iwpp_cuda_edt_danielsson(iwpp_context *ctx, const iwpp_buf *bin, const double sp[3], iwpp_buf *dist,
                                  iwpp_buf *nearest)
{
    cuda_state *st = cu_state(ctx);
    cudaStream_t s = st->stream;
    const int64_t w = bin->w, h = bin->h, d = bin->d, n = w * h * d;
    if (w > (int64_t)SITE_MASK || h > (int64_t)SITE_MASK || d > (int64_t)SITE_MASK)
        return iwpp_set_error(ctx, IWPP_EUNSUPPORTED,
                              "Danielsson distance transform on CUDA: each side must be below %lld pixels; "
                              "use the exact method",
                              (long long)SITE_MASK);
    const geom g = make_geom(bin, 26);
    const int small = n < (int64_t)0xFFFFFFF0ll;
    const size_t isz = small ? 4 : 8;
    const size_t vr_bytes = ((size_t)n * 8 + 255) & ~(size_t)255;
    /* block queues: N/2 items in all (or the requested capacity), at least 4096 per block */
    const int blocks_max = st->sms * 4;
    long long cap = ctx->queue_capacity > 0 ? ctx->queue_capacity : n / (2 * blocks_max) + 4096;
    const size_t work_bytes = (((size_t)n * isz + 255) & ~(size_t)255) + (size_t)blocks_max * 2 * (size_t)cap * isz +
                              (size_t)blocks_max * 8 + 256;
    void *mem = NULL;
    iwpp_status e = cu_scratch(ctx, vr_bytes + work_bytes, &mem);
    if (e != IWPP_OK) return e;
    unsigned long long *vr = (unsigned long long *)mem;
    char *work = (char *)mem + vr_bytes;
    if ((e = cu_timer_start(ctx)) != IWPP_OK) return e;
    const unsigned nb = cu_blocks(n, 256, st->sms * 16);
    switch (bin->type) {
    case IWPP_U8: dan_init<uint8_t><<<nb, 256, 0, s>>>((const uint8_t *)bin->ptr, vr, w, h, n); break;
    case IWPP_U16: dan_init<uint16_t><<<nb, 256, 0, s>>>((const uint16_t *)bin->ptr, vr, w, h, n); break;
    default: dan_init<float><<<nb, 256, 0, s>>>((const float *)bin->ptr, vr, w, h, n); break;
    }
    e = small ? dan_variant<unsigned int>(ctx, vr, g, sp, work, work_bytes)
              : dan_variant<unsigned long long>(ctx, vr, g, sp, work, work_bytes);
    if (e != IWPP_OK) return e;
    dan_final<<<nb, 256, 0, s>>>(vr, (float *)dist->ptr, nearest ? (int64_t *)nearest->ptr : NULL, w, h, n, sp[0],
                                 sp[1], sp[2]);
    if ((e = cu_timer_stop(ctx)) != IWPP_OK) return e;
    snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "edt-danielsson/%s",
             ctx->queue_variant == IWPP_QUEUE_ATOMIC      ? "atomic"
             : ctx->queue_variant == IWPP_QUEUE_PREFIXSUM ? "prefixsum"
                                                          : "multilevel");
    return IWPP_OK;
}

