/*
 * reconstruct.cu - morphological reconstruction on CUDA: FH_GPU (paper 000 Alg. 5, paper 004).
 *
 *  1. Parallel raster / anti-raster scans (a few iterations). A scan along an axis updates each
 *     pixel from the neighbours met before it along that axis (offsets with component -dir on
 *     that axis): rows (x) are scanned by one warp per row segment with a warp prefix scan of
 *     "clamp" functions (v -> min(max(v, a), b) composes associatively), columns (y) and
 *     pillars (z) by one thread per line segment, coalesced. Pixels only ever move towards the
 *     result, so racing reads of neighbours are harmless.
 *  2. The initial wavefront: every pixel p with a neighbour q (whole neighbourhood) such that
 *     J(q) < J(p) and J(q) < I(q) (dilation; mirrored for erosion).
 *  3. The queue phase (mlqueue.cuh): pop p, for each neighbour q with J(q) < J(p) != ... and
 *     I(q) != J(q), atomically raise J(q) to min(J(p), I(q)) and queue q if this call raised it.
 *     GBQ overflow: collect the wavefront again from the partial result and re-run.
 * ctx->algorithm == IWPP_ALGO_MEGAPIXEL runs the tile variant of megapixel.cu after step 1.
 */
#include "mlqueue.cuh"
#include "megapixel.cuh"
#include "reconstruct_2d.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Raster passes: 2 forward + backward iterations (see README for the measurements). */
#define RASTER_ITERATIONS 2
#define QUEUE_LEAVE_ROUNDS 2048 /* cuda.queue_leave: see mlq_ctl.leave_rounds */
#define QUEUE_HOST_LEAVES 2      /* cuda.queue_host: see host_finish */
#define SEG_X 1024
#define SEG_YZ 256

template <typename T> __device__ __forceinline__ T shfl_up_t(T v, int o)
{
    return (T)__shfl_up_sync(0xffffffffu, (unsigned)v, o);
}
template <> __device__ __forceinline__ float shfl_up_t<float>(float v, int o)
{
    return __shfl_up_sync(0xffffffffu, v, o);
}
template <typename T> __device__ __forceinline__ T shfl_t(T v, int l)
{
    return (T)__shfl_sync(0xffffffffu, (unsigned)v, l);
}
template <> __device__ __forceinline__ float shfl_t<float>(float v, int l)
{
    return __shfl_sync(0xffffffffu, v, l);
}

/* v moved towards a, then bounded by b (a already within b). */
template <bool ERO, typename T> __device__ __forceinline__ T clampo(T v, T a, T b)
{
    return order<ERO>::limit(order<ERO>::best(v, a), b);
}

/* One scan along x in direction dir: one warp per (row, segment). */
template <typename T, bool ERO>
__global__ void scan_x_kernel(T *J, const T *__restrict__ I, geom g, int dir, int64_t nseg)
{
    typedef order<ERO> O;
    const int64_t gw = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    const int64_t lines = g.h * g.d;
    if (gw >= lines * nseg) return; /* whole warp */
    const int64_t line = gw / nseg, seg = gw - line * nseg;
    const int64_t y = line % g.h, z = line / g.h;
    const int64_t x0 = seg * SEG_X;
    const int64_t x1 = x0 + SEG_X < g.w ? x0 + SEG_X : g.w;
    const int64_t base = line * g.w;
    T carry = O::template worst<T>();
    if (dir > 0 && x0 > 0) carry = J[base + x0 - 1];
    if (dir < 0 && x1 < g.w) carry = J[base + x1];
    const int64_t len = x1 - x0;
    for (int64_t c = 0; c < len; c += 32) {
        const int64_t t = c + lane;
        const bool valid = t < len;
        const int64_t x = dir > 0 ? x0 + t : x1 - 1 - t;
        T a = O::template worst<T>(), b = O::template top<T>(), jp = a;
        if (valid) {
            const int64_t p = base + x;
            jp = J[p];
            b = I[p];
            a = jp;
            if (g.d == 1 && y > 0 && y < g.h - 1 && x - dir >= 0 && x - dir < g.w) {
                /* 2D off the border: the diagonal predecessors (8-connected), no bounds to test */
                if (g.n == 8) a = O::best(O::best(a, J[p - dir - g.w]), J[p - dir + g.w]);
            } else {
                for (int k = 0; k < g.n; ++k) {
                    if (g.off[k][0] != -dir || (g.off[k][1] == 0 && g.off[k][2] == 0)) continue;
                    const int64_t qx = x + g.off[k][0], qy = y + g.off[k][1], qz = z + g.off[k][2];
                    if (qx < 0 || qx >= g.w || qy < 0 || qy >= g.h || qz < 0 || qz >= g.d) continue;
                    a = O::best(a, J[qx + g.w * (qy + g.h * qz)]);
                }
            }
            a = O::limit(a, b);
        }
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            T pa = shfl_up_t(a, o), pb = shfl_up_t(b, o);
            if (lane >= o) {
                T na = clampo<ERO>(pa, a, b), nb = clampo<ERO>(pb, a, b);
                a = na;
                b = nb;
            }
        }
        T v = clampo<ERO>(carry, a, b);
        if (valid && v != jp) J[base + x] = v;
        carry = shfl_t(v, 31);
    }
}

/* One scan along y (axis 1) or z (axis 2) in direction dir: one thread per (line, segment). */
template <typename T, bool ERO>
__global__ void scan_yz_kernel(T *J, const T *__restrict__ I, geom g, int axis, int dir, int64_t nseg)
{
    typedef order<ERO> O;
    const int64_t lines = axis == 1 ? g.w * g.d : g.w * g.h;
    const int64_t len = axis == 1 ? g.h : g.d;
    const int64_t step = axis == 1 ? g.w : g.w * g.h;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < lines * nseg;
         t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t line = t % lines, seg = t / lines;
        int64_t x, y, z, base;
        if (axis == 1) {
            x = line % g.w;
            z = line / g.w;
            y = 0;
            base = x + g.w * g.h * z;
        } else {
            x = line % g.w;
            y = line / g.w;
            z = 0;
            base = line;
        }
        const int64_t i0 = seg * SEG_YZ, i1 = i0 + SEG_YZ < len ? i0 + SEG_YZ : len;
        T carry = O::template worst<T>();
        if (dir > 0 && i0 > 0) carry = J[base + (i0 - 1) * step];
        if (dir < 0 && i1 < len) carry = J[base + i1 * step];
        for (int64_t s = 0; s < i1 - i0; ++s) {
            const int64_t i = dir > 0 ? i0 + s : i1 - 1 - s;
            const int64_t p = base + i * step;
            const T jp = J[p], ip = I[p];
            T a = jp;
            const int64_t cx = x, cy = axis == 1 ? i : y, cz = axis == 2 ? i : z;
            if (g.d == 1 && x > 0 && x < g.w - 1 && i - dir >= 0 && i - dir < len) {
                /* 2D off the border: the diagonal predecessors (8-connected), no bounds to test */
                if (g.n == 8) a = O::best(O::best(a, J[p - dir * step - 1]), J[p - dir * step + 1]);
            } else {
                for (int k = 0; k < g.n; ++k) {
                    if (g.off[k][axis] != -dir) continue;
                    const int o1 = g.off[k][0];
                    const int o2 = axis == 1 ? g.off[k][2] : g.off[k][1];
                    if (o1 == 0 && o2 == 0) continue; /* the in-line predecessor is the carry */
                    const int64_t qx = cx + g.off[k][0], qy = cy + g.off[k][1], qz = cz + g.off[k][2];
                    if (qx < 0 || qx >= g.w || qy < 0 || qy >= g.h || qz < 0 || qz >= g.d) continue;
                    a = O::best(a, J[qx + g.w * (qy + g.h * qz)]);
                }
            }
            a = O::limit(a, ip);
            const T v = clampo<ERO>(carry, a, ip);
            if (v != jp) J[p] = v;
            carry = v;
        }
    }
}

/* Initial wavefront: p with a neighbour q where J(q) is behind J(p) and behind I(q). */
template <typename T, bool ERO, typename IdxT>
__global__ void collect_kernel(const T *J, const T *__restrict__ I, geom g, IdxT *out, long long cap,
                               unsigned long long *count)
{
    typedef order<ERO> O;
    for_each_pixel_by_rows(g, [&](int64_t p, int64_t x, int64_t y, int64_t z, bool valid) {
        bool act = false;
        if (valid && g.d == 1 && x > 0 && y > 0 && x < g.w - 1 && y < g.h - 1) {
            /* a 2D pixel off the border (nearly all): no bounds to check, neighbours by offset, and
             * no early exit, so that the eight loads are in flight together */
            const T jp = J[p];
#pragma unroll
            for (int k = 0; k < 8; ++k)
                if (k < g.n) {
                    const int64_t q = p + g.off[k][0] + g.w * g.off[k][1];
                    const T jq = J[q];
                    act |= O::ahead(jp, jq) && O::ahead(I[q], jq);
                }
        } else if (valid) {
            const T jp = J[p];
            for (int k = 0; k < g.n && !act; ++k) {
                const int64_t qx = x + g.off[k][0], qy = y + g.off[k][1], qz = z + g.off[k][2];
                if (qx < 0 || qx >= g.w || qy < 0 || qy >= g.h || qz < 0 || qz >= g.d) continue;
                const int64_t q = qx + g.w * (qy + g.h * qz);
                const T jq = J[q];
                act = O::ahead(jp, jq) && O::ahead(I[q], jq);
            }
        }
        const unsigned long long pos = warp_append_slot(act, count);
        if (act && (long long)pos < cap) out[pos] = (IdxT)p;
    });
}

/* a[k] by selects, so that an array indexed by a k that is a constant where it matters (the
 * queue's unrolled neighbours) stays in registers where k is not (3D's further neighbours, which
 * never take the prefetched path) */
template <typename V> __device__ __forceinline__ V pick8(const V (&a)[8], int k)
{
    V r = a[0];
#pragma unroll
    for (int i = 1; i < 8; ++i) r = k == i ? a[i] : r;
    return r;
}

/* The propagation policy of reconstruction for mlq_kernel. A 2D 8-connected item loads its
 * neighbours' J and I together when it is taken (pre): a queue round is then one memory latency
 * for them instead of one or two per neighbour in turn (H100, 1536^2 tissue: the queue kernel
 * 0.63 -> 0.57 ms, the call 1.03 -> 0.94 ms; 8192^2 unchanged; 4-connected fill holes 4-8 %
 * slower, so not there). J is read as the 32-bit words that hold the neighbours, the first guess
 * of the compare-and-swap that raises one (one latency less per raised neighbour). A neighbour's
 * J read early can only be behind its current value, so a skip on it is still right, and a
 * stale guess only costs one more CAS. */
template <typename T, bool ERO, typename IdxT> struct recon_op {
    T *J;
    const T *I;
    geom g;
    bool pre;
    /* a 2D neighbourhood by constant index (H200, compute: rec-ero 8192^2 5.0 -> 4.7 ms, U16 and
       F32 4096^2 6-7 % less; the same unrolling made the Danielsson queue 5-10 % slower) */
    static constexpr int NBR_UNROLL = 8;
    struct item {
        IdxT p;
        int64_t x, y, z;
        T jp;
        unsigned int jw[8]; /* pre: the words holding the neighbours' J */
        T in[8];            /* pre: the neighbours' I */
        unsigned inside;    /* pre: bit k: neighbour k is in the image */
    };
    __device__ __forceinline__ int nbr() const { return g.n; }
    __device__ __forceinline__ bool load(IdxT p, item &it) const
    {
        it.p = p;
        if (g.d == 1) {
            const IdxT y = p / (IdxT)g.w;
            it.y = y;
            it.x = p - y * (IdxT)g.w;
            it.z = 0;
        } else {
            const IdxT wh = (IdxT)(g.w * g.h);
            const IdxT z = p / wh, r = p - z * wh, y = r / (IdxT)g.w;
            it.z = z;
            it.y = y;
            it.x = r - y * (IdxT)g.w;
        }
        if (pre) {
            /* every load unconditional (a clamped address, masked by it.inside): a load inside
               a branch is waited for where the branches join, one latency each */
            it.inside = 0;
#pragma unroll
            for (int k = 0; k < 8; ++k) {
                const int64_t ux = it.x + g.off[k][0], uy = it.y + g.off[k][1];
                const int64_t qx = min(max(ux, (int64_t)0), g.w - 1), qy = min(max(uy, (int64_t)0), g.h - 1);
                it.inside |= (unsigned)(qx == ux && qy == uy) << k;
                const int64_t q = qx + g.w * qy;
                it.jw[k] = __ldcg(word_of(J + q));
                it.in[k] = __ldg(I + q);
            }
            it.jp = ld_cg(J + p); /* in flight with the neighbours' loads */
        } else {
            it.jp = ld_cg(J + p);
        }
        return true;
    }
    __device__ __forceinline__ bool visit(const item &it, int k, IdxT &q) const
    {
        typedef order<ERO> O;
        if (pre) {
            if (!((it.inside >> k) & 1u)) return false;
            q = (IdxT)((int64_t)it.p + g.off[k][0] + g.w * g.off[k][1]);
            const unsigned int jw = pick8(it.jw, k);
            const T jq = from_word<T>(jw, word_shift(J + q));
            if (!O::ahead(it.jp, jq)) return false;
            const T iq = pick8(it.in, k);
            if (iq == jq) return false;
            const T nv = O::limit(it.jp, iq);
            return O::ahead(nv, atomic_improve_from<ERO>(J + q, nv, jw));
        }
        const int64_t qx = it.x + g.off[k][0], qy = it.y + g.off[k][1], qz = it.z + g.off[k][2];
        if (qx < 0 || qx >= g.w || qy < 0 || qy >= g.h || qz < 0 || qz >= g.d) return false;
        q = (IdxT)(qx + g.w * (qy + g.h * qz));
        const T jq = ld_cg(J + q);
        if (!O::ahead(it.jp, jq)) return false;
        const T iq = __ldg(I + q);
        if (iq == jq) return false;
        const T nv = O::limit(it.jp, iq);
        const T old = atomic_improve<ERO>(J + q, nv);
        return O::ahead(nv, old);
    }
};

static const char *variant_name(int v)
{
    return v == IWPP_QUEUE_ATOMIC ? "atomic" : v == IWPP_QUEUE_PREFIXSUM ? "prefixsum" : "multilevel";
}

/* 2D images take the kernels of reconstruct_2d.cuh: four pixels a thread, 16-byte loads where
 * rows start on 16-byte boundaries. */
static bool is_2d(const geom &g) { return g.d == 1 && (g.n == 4 || g.n == 8); }
static bool cu_tune_2d(const iwpp_context *ctx) { return iwpp_tune_int(ctx, IWPP_TUNE_CUDA_REC_QUADS, 1, 0, 1) != 0; }
static bool quads_aligned(const geom &g, const void *J, const void *I)
{
    return g.w % 4 == 0 && (uintptr_t)J % 16 == 0 && (uintptr_t)I % 16 == 0;
}

template <typename T, bool ERO, bool CONN8>
static void raster_scans_2d(cudaStream_t s, T *J, const T *I, const geom &g, int iterations)
{
    const bool vec = quads_aligned(g, J, I);
    const int64_t nsx = (g.w + SEG2_X - 1) / SEG2_X;
    const unsigned bx = cu_blocks(g.h * nsx * 32, 256, 1 << 30);
    const int64_t wpr = ((g.w + 3) / 4 + 31) / 32, segy = seg2_rows(g.w, g.h), nsy = (g.h + segy - 1) / segy;
    const unsigned by = cu_blocks(nsy * wpr * 32, 128, 1 << 30);
    for (int it = 0; it < iterations; ++it) {
        if (g.w > 1) scan_x2d_kernel<T, ERO, CONN8, 1><<<bx, 256, 0, s>>>(J, I, g.w, g.h, nsx, vec);
        if (g.h > 1) scan_y2d_kernel<T, ERO, CONN8, 1><<<by, 128, 0, s>>>(J, I, g.w, g.h, nsy, wpr, vec, segy);
        if (g.w > 1) scan_x2d_kernel<T, ERO, CONN8, -1><<<bx, 256, 0, s>>>(J, I, g.w, g.h, nsx, vec);
        if (g.h > 1) scan_y2d_kernel<T, ERO, CONN8, -1><<<by, 128, 0, s>>>(J, I, g.w, g.h, nsy, wpr, vec, segy);
    }
}

template <typename T, bool ERO>
static iwpp_status raster_scans(iwpp_context *ctx, T *J, const T *I, const geom &g, int iterations)
{
    cudaStream_t s = cu_state(ctx)->stream;
    if (is_2d(g) && cu_tune_2d(ctx)) {
        if (g.n == 8)
            raster_scans_2d<T, ERO, true>(s, J, I, g, iterations);
        else
            raster_scans_2d<T, ERO, false>(s, J, I, g, iterations);
        CU_TRY(ctx, cudaGetLastError(), "launching the raster scans");
        return IWPP_OK;
    }
    const int64_t nsx = (g.w + SEG_X - 1) / SEG_X;
    const int64_t warps = g.h * g.d * nsx;
    const unsigned bx = cu_blocks(warps * 32, 256, 1 << 30);
    const int64_t nsy = (g.h + SEG_YZ - 1) / SEG_YZ, nsz = (g.d + SEG_YZ - 1) / SEG_YZ;
    const unsigned by = cu_blocks(g.w * g.d * nsy, 128, 1 << 30);
    const unsigned bz = cu_blocks(g.w * g.h * nsz, 128, 1 << 30);
    for (int it = 0; it < iterations; ++it) {
        for (int dir = 1; dir >= -1; dir -= 2) {
            if (g.w > 1) scan_x_kernel<T, ERO><<<bx, 256, 0, s>>>(J, I, g, dir, nsx);
            if (g.h > 1) scan_yz_kernel<T, ERO><<<by, 128, 0, s>>>(J, I, g, 1, dir, nsy);
            if (g.d > 1) scan_yz_kernel<T, ERO><<<bz, 128, 0, s>>>(J, I, g, 2, dir, nsz);
        }
    }
    CU_TRY(ctx, cudaGetLastError(), "launching the raster scans");
    return IWPP_OK;
}

/* Long chains are a CPU's work: a GPU queue round moves a chain one pixel in a few
 * microseconds, a host queue in nanoseconds. After the queue's blocks left work behind
 * QUEUE_HOST_LEAVES times (the spread front did not finish it either), the image goes to the
 * host, the CPU backend finishes the reconstruction from the partial result (a marker between
 * the input and the result, so the result is the same), and it comes back: a one-pixel spiral
 * of 2048^2 8.8 s -> 0.10-0.13 s on an H200, a corner flood of 4096^2 slower (0.14 -> 0.22-0.27 s),
 * tissue never here (cuda/README.md, Reconstruction, item 5). *done = 0 where host memory is
 * short: the GPU goes on. */
static iwpp_status host_finish(iwpp_context *ctx, void *J, const void *I, iwpp_type type, const geom &g,
                               iwpp_morph_mode mode, int *done)
{
    iwpp_buf bj = {type, g.w, g.h, g.d, J, NULL, 0}, bi = {type, g.w, g.h, g.d, (void *)I, NULL, 0};
    return iwpp_finish_on_host(ctx, &bj, &bi, g.n, mode, done); /* native/dispatch.c */
}

template <typename T> static iwpp_type type_of() { return sizeof(T) == 1 ? IWPP_U8 : sizeof(T) == 2 ? IWPP_U16 : IWPP_F32; }

template <typename T, bool ERO, typename IdxT, int VARIANT>
static iwpp_status queue_phase(iwpp_context *ctx, T *J, const T *I, const geom &g)
{
    cuda_state *st = cu_state(ctx);
    cudaStream_t s = st->stream;
    const int64_t N = g.w * g.h * g.d;
    auto kern = mlq_kernel<recon_op<T, ERO, IdxT>, IdxT, VARIANT>;
    mlq_shape shape;
    iwpp_status es = mlq_shape_for<IdxT>(ctx, kern, VARIANT, g.n, &shape);
    if (es != IWPP_OK) return es;
    int blocks = shape.blocks; /* fewer where a tile worker's queue reserve is small (below) */
    const int threshold = shape.threshold;
    const size_t smem = shape.smem;

    /* initial wavefront buffer: grows when the collect count exceeds it */
    long long init_cap = N / 16 + 4096;
    if (init_cap > N + 32) init_cap = N + 32;
    unsigned long long *ctr = st->dctr;
    recon_op<T, ERO, IdxT> op;
    op.J = J;
    op.I = I;
    op.g = g;
    op.pre = g.d == 1 && g.n == 8 && iwpp_tune_int(ctx, IWPP_TUNE_CUDA_QUEUE_PREFETCH, 1, 0, 1) != 0;
    const unsigned cblocks = cu_blocks(N, 256, st->sms * 8);
    /* rounds after which a block still busy when nearly all others are done leaves (0: never) */
    const char *lv = iwpp_tune(ctx, IWPP_TUNE_CUDA_QUEUE_LEAVE);
    const long long leave_rounds =
        lv && !strcmp(lv, "off") ? 0 : iwpp_tune_int(ctx, IWPP_TUNE_CUDA_QUEUE_LEAVE, QUEUE_LEAVE_ROUNDS, 0, 1ll << 40);
    /* passes whose blocks left early before the host finishes (0: never) */
    const char *hv = iwpp_tune(ctx, IWPP_TUNE_CUDA_QUEUE_HOST);
    long long host_leaves =
        hv && !strcmp(hv, "off") ? 0 : iwpp_tune_int(ctx, IWPP_TUNE_CUDA_QUEUE_HOST, QUEUE_HOST_LEAVES, 0, 1ll << 40);
    long long leaves = 0;

    for (int pass = 0;; ++pass) {
        /* collect the wavefront */
        long long count = 0;
        IdxT *init = NULL, *gq = NULL;
        long long cap = 0;
        for (;;) {
            void *mem = NULL;
            iwpp_status e = cu_scratch(ctx, (size_t)init_cap * sizeof(IdxT), &mem);
            if (e != IWPP_OK) return e;
            init = (IdxT *)mem;
            CU_TRY(ctx, cudaMemsetAsync(ctr, 0, 8 * sizeof(unsigned long long), s), "clearing counters");
            if (is_2d(g) && cu_tune_2d(ctx)) {
                const int64_t wpr = ((g.w + 3) / 4 + 31) / 32;
                const unsigned b2 = cu_blocks(g.h * wpr * 32, 256, st->sms * 8);
                const bool vec = quads_aligned(g, J, I);
                if (g.n == 8)
                    collect2d_kernel<T, ERO, true, IdxT><<<b2, 256, 0, s>>>(J, I, g.w, g.h, wpr, vec, init, init_cap, ctr);
                else
                    collect2d_kernel<T, ERO, false, IdxT><<<b2, 256, 0, s>>>(J, I, g.w, g.h, wpr, vec, init, init_cap, ctr);
            } else {
                collect_kernel<T, ERO, IdxT><<<cblocks, 256, 0, s>>>(J, I, g, init, init_cap, ctr);
            }
            CU_TRY(ctx, cudaMemcpyAsync(st->hctr, ctr, sizeof(unsigned long long), cudaMemcpyDeviceToHost, s),
                   "reading the wavefront size");
            iwpp_status e2 = cu_sync(ctx, "collecting the wavefront");
            if (e2 != IWPP_OK) return e2;
            count = (long long)st->hctr[0];
            if (count <= init_cap) break;
            init_cap = count + count / 8 + 1024;
        }
        if (count == 0) break;
        if (pass > 0) ctx->stats.overflow_reruns++;

        /* global block queues */
        const long long per = (count + blocks - 1) / blocks;
        if (ctx->queue_capacity > 0) {
            cap = ctx->queue_capacity;
        } else {
            cap = 2 * per + 4096;
            if (cap < 32768) cap = 32768;
            if (cap > 2 * N + 1024) cap = 2 * N + 1024;
            const long long budget = (N * 2 > (64ll << 20) ? N * 2 : (64ll << 20)); /* items */
            while (cap > 4096 && (long long)blocks * 2 * cap > budget) cap /= 2;
            /* a tile worker's queues stay within its reserve of the budget (tiles.c); below 256
               entries a block, fewer blocks (as OpenCL's groups) */
            while (ctx->queue_bytes && (unsigned long long)blocks * 2 * cap * sizeof(IdxT) > ctx->queue_bytes) {
                if (cap > 256)
                    cap /= 2;
                else if (blocks > 8) /* (eight at least: a block leaves when all but an eighth are done) */
                    blocks = (blocks + 1) / 2 > 8 ? (blocks + 1) / 2 : 8;
                else
                    break;
            }
        }
        const size_t init_bytes = ((size_t)init_cap * sizeof(IdxT) + 255) & ~(size_t)255;
        const size_t gq_bytes = (size_t)blocks * 2 * (size_t)cap * sizeof(IdxT);
        const size_t gc_bytes = (size_t)blocks * sizeof(unsigned long long);
        {
            /* keep the collected wavefront: grow the arena while preserving it */
            cuda_state *cs = st;
            if (init_bytes + gq_bytes + gc_bytes > cs->scratch_bytes) {
                void *nm = NULL;
                iwpp_status e = cu_malloc(ctx, &nm, init_bytes + gq_bytes + gc_bytes, "the propagation queues");
                if (e != IWPP_OK) return e;
                CU_TRY(ctx, cudaMemcpyAsync(nm, cs->scratch, (size_t)count * sizeof(IdxT), cudaMemcpyDeviceToDevice, s),
                       "moving the wavefront");
                CU_TRY(ctx, cudaStreamSynchronize(s), "moving the wavefront");
                cudaFree(cs->scratch);
                cs->scratch = nm;
                cs->scratch_bytes = init_bytes + gq_bytes + gc_bytes;
            }
            init = (IdxT *)cs->scratch;
            gq = (IdxT *)((char *)cs->scratch + init_bytes);
        }
        unsigned long long *gcount = (unsigned long long *)((char *)gq + gq_bytes);
        bool overflowed = false;
        bool left = false;
        iwpp_status e = mlq_launch(ctx, kern, blocks, smem, op, init, count, gq, cap, threshold, ctr, gcount,
                                   gc_bytes, &overflowed, leave_rounds, &left);
        if (e != IWPP_OK) return e;
        if (!overflowed) break; /* no overflow: done */
        if (left && host_leaves > 0 && ++leaves >= host_leaves) {
            int done = 0;
            if ((e = host_finish(ctx, J, I, type_of<T>(), g, ERO ? IWPP_BY_EROSION : IWPP_BY_DILATION, &done)) != IWPP_OK)
                return e;
            if (done) {
                st->host_finished = 1;
                break;
            }
            host_leaves = 0; /* no room on the host: the GPU finishes, without asking again */
        }
        /* a queue dropped items or a block left a flood or a long chain behind (mlqueue.cuh):
           one raster iteration carries floods and straight runs across the image at once, then
           the next pass collects the front and spreads it over every block (the measurements
           in cuda/README.md were made so; with a small queue_capacity each overflow pays it) */
        if ((e = raster_scans<T, ERO>(ctx, J, I, g, 1)) != IWPP_OK) return e;
    }
    return IWPP_OK;
}

/* Raster iterations: RASTER_ITERATIONS, 1 for short waves (ctx->short_waves; H100, 8192^2:
 * regional maxima 8.1 -> 5.2 ms 8-connected, the distance watershed 42.8 -> 33.8 ms, while a
 * tissue reconstruction with h = 40 took 9.1 -> 18.1 ms), or the tuning key
 * cuda.raster_iterations (0..64). */
static int raster_iterations(const iwpp_context *ctx)
{
    return (int)iwpp_tune_int(ctx, IWPP_TUNE_CUDA_RASTER_ITERATIONS, ctx->short_waves > 0 ? 1 : RASTER_ITERATIONS,
                              0, 64);
}

template <typename T, bool ERO, typename IdxT>
static iwpp_status fh_gpu(iwpp_context *ctx, T *J, const T *I, const geom &g)
{
    iwpp_status e = raster_scans<T, ERO>(ctx, J, I, g, raster_iterations(ctx));
    if (e != IWPP_OK) return e;
    return mlq_by_variant(ctx, [&](auto v) { return queue_phase<T, ERO, IdxT, decltype(v)::value>(ctx, J, I, g); });
}

template <typename T, bool ERO>
static iwpp_status run_typed(iwpp_context *ctx, T *J, const T *I, const geom &g, int mega)
{
    if (mega) {
        iwpp_status e = raster_scans<T, ERO>(ctx, J, I, g, 1);
        if (e != IWPP_OK) return e;
        return megapixel_run<T, ERO>(ctx, J, I, g);
    }
    const int64_t N = g.w * g.h * g.d;
    if (N < (int64_t)0xFFFFFFF0ll) return fh_gpu<T, ERO, unsigned int>(ctx, J, I, g);
    return fh_gpu<T, ERO, unsigned long long>(ctx, J, I, g);
}

/* AUTO picks FH_GPU. Measured on an H100 (cuda/README.md, "Choosing the algorithm"): the
 * megapixel variant was 6-12x slower than FH_GPU on smooth tissue-like images and 14-17x slower
 * on random ones, at 4096^2 and 8192^2, U8, 8-connected; no input we measured favoured it. */
static int choose_megapixel(const iwpp_context *ctx)
{
    return ctx->algorithm == IWPP_ALGO_MEGAPIXEL;
}

extern "C" iwpp_status iwpp_cuda_reconstruct(iwpp_context *ctx, iwpp_buf *marker, const iwpp_buf *mask,
                                             int connectivity, iwpp_morph_mode mode)
{
    iwpp_status e = cu_enter(ctx);
    if (e != IWPP_OK) return e;
    const geom g = make_geom(marker, connectivity);
    const int mega = choose_megapixel(ctx);

    if ((e = cu_timer_start(ctx)) != IWPP_OK) return e;
    cu_state(ctx)->host_finished = 0;
    const int ero = mode == IWPP_BY_EROSION;
    switch (marker->type) {
    case IWPP_U8:
        e = ero ? run_typed<uint8_t, true>(ctx, (uint8_t *)marker->ptr, (const uint8_t *)mask->ptr, g, mega)
                : run_typed<uint8_t, false>(ctx, (uint8_t *)marker->ptr, (const uint8_t *)mask->ptr, g, mega);
        break;
    case IWPP_U16:
        e = ero ? run_typed<uint16_t, true>(ctx, (uint16_t *)marker->ptr, (const uint16_t *)mask->ptr, g, mega)
                : run_typed<uint16_t, false>(ctx, (uint16_t *)marker->ptr, (const uint16_t *)mask->ptr, g, mega);
        break;
    case IWPP_F32:
        e = ero ? run_typed<float, true>(ctx, (float *)marker->ptr, (const float *)mask->ptr, g, mega)
                : run_typed<float, false>(ctx, (float *)marker->ptr, (const float *)mask->ptr, g, mega);
        break;
    default:
        return iwpp_set_error(ctx, IWPP_EINTERNAL, "internal: reconstruction of type %s reached the CUDA backend",
                              iwpp_type_name(marker->type));
    }
    if (e != IWPP_OK) return e;
    if ((e = cu_timer_stop(ctx)) != IWPP_OK) return e;
    /* F32: every zero of the result is +0, as on the CPU (x + 0.0f turns -0 into +0 and leaves
       every other value, NaN and infinities included, as it is); which zero a pixel keeps would
       otherwise depend on the order of updates (streams, tiles, atomics) */
    if (marker->type == IWPP_F32 && (e = iwpp_cuda_pointwise(ctx, IWPP_PW_ADD_SCALAR, marker, marker, NULL, 0.0)) != IWPP_OK)
        return e;
    if (mega)
        snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "megapixel");
    else
        snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "fh-gpu/%s%s", variant_name(ctx->queue_variant),
                 cu_state(ctx)->host_finished ? ", long chains on the host" : "");
    return IWPP_OK;
}
