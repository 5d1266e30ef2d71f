/*
 * edt_danielsson.cu - the Danielsson EDT on CUDA: IWPP propagation of nearest-background sites
 * (paper 000 Alg. 6). Every pixel holds its nearest background site packed in 64 bits (x, y, z:
 * 21 bits each); a pixel takes a neighbour's site when it is strictly closer. 8-connected in 2D,
 * 26 in 3D, as on the CPU; d2 is formed as on the CPU (compiled with -fmad=false, as
 * edt_exact.cu). Two schedules of that propagation (cuda.dan_tiles):
 *  - by tiles (the default; dan_by_tiles): rounds over lists of tiles, each relaxed in shared
 *    memory until it no longer changes, its changed border listing its neighbours for the next
 *    round (the steps of opencl/edt_danielsson.cl's edt_dan_tiles, which says why);
 *  - pixel by pixel on the multi-level queue (mlqueue.cuh; cuda.dan_tiles=0): global rounds
 *    (dan_round) while the front is smaller than cuda.dan_switch items per block, then the block
 *    queues; a neighbour takes p's site by a 64-bit atomicCAS retried while it is still closer.
 * Called from iwpp_cuda_edt (edt_exact.cu).
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

/* Sites (a background pixel is its own, others have none) and the first wavefront in one pass:
 * the background pixels with a foreground neighbour, which is what dan_collect would find in that
 * state, without its second pass over the image. */
template <typename T, typename IdxT>
__global__ void dan_init(const T *in, unsigned long long *vr, geom g, IdxT *out, unsigned long long *count)
{
    for_each_pixel_by_rows(g, [&](int64_t p, int64_t x, int64_t y, int64_t z, bool valid) {
        const bool bg = valid && in[p] == (T)0;
        if (valid) vr[p] = bg ? site_pack(x, y, z) : SITE_NONE;
        bool act = false;
        for (int k = 0; k < g.n && bg && !act; ++k) {
            const int64_t qx = x + g.off[k][0], qy = y + g.off[k][1], qz = z + g.off[k][2];
            if (qx < 0 || qx >= g.w || qy < 0 || qy >= g.h || qz < 0 || qz >= g.d) continue;
            act = in[qx + g.w * (qy + g.h * qz)] != (T)0;
        }
        const unsigned long long pos = warp_append_slot(act, count);
        if (act) out[pos] = (IdxT)p;
    });
}

template <typename IdxT>
static void launch_init(cudaStream_t s, const iwpp_buf *bin, unsigned long long *vr, const geom &g, IdxT *out,
                        unsigned long long *count, unsigned blocks)
{
    switch (bin->type) {
    case IWPP_U8: dan_init<uint8_t, IdxT><<<blocks, 256, 0, s>>>((const uint8_t *)bin->ptr, vr, g, out, count); break;
    case IWPP_U16: dan_init<uint16_t, IdxT><<<blocks, 256, 0, s>>>((const uint16_t *)bin->ptr, vr, g, out, count); break;
    default: dan_init<float, IdxT><<<blocks, 256, 0, s>>>((const float *)bin->ptr, vr, g, out, count); break;
    }
}

template <typename IdxT> struct dan_op {
    unsigned long long *vr;
    geom g;
    double hx, hy, hz;
    static constexpr int NBR_UNROLL = 0; /* unrolled, 5-10 % slower (H200, 1536^2-8192^2) */
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

/* One global round, while the front is small (the block queues keep the territory of their
 * share of the seeds, so with fewer seeds than blocks most blocks would sit idle while one floods
 * the image): every listed pixel offers its site to its neighbours, and one that takes it is
 * listed for the next round, once per round (mark[q] = round). The counts stay on the device:
 * round r reads its count from cnt[r % 3], appends to cnt[(r + 1) % 3] and clears cnt[(r + 2) % 3]
 * (round r - 1's input); cnt[3] adds up the items, cnt[4] the rounds that had work. A list holds
 * `cap` items: a pixel that does not fit keeps its new site but is not listed, and cnt[5] says so
 * (the caller then collects the wavefront from the whole image, as after a queue overflow). */
template <typename IdxT>
__global__ void dan_round(dan_op<IdxT> op, const IdxT *in, IdxT *out, unsigned long long *cnt, unsigned *mark,
                          unsigned round, unsigned long long cap)
{
    const unsigned long long n = min(cnt[round % 3], cap);
    unsigned long long *out_n = cnt + (round + 1) % 3;
    if (blockIdx.x == 0 && threadIdx.x == 0) { /* one writer, rounds in stream order */
        cnt[(round + 2) % 3] = 0;
        cnt[3] += n;
        cnt[4] += n > 0;
    }
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        typename dan_op<IdxT>::item it;
        if (!op.load(in[i], it)) continue;
        for (int k = 0; k < op.nbr(); ++k) {
            IdxT q = 0;
            if (!op.visit(it, k, q) || atomicExch(mark + q, round) == round) continue;
            const unsigned long long pos = atomicAdd(out_n, 1ull);
            if (pos < cap)
                out[pos] = q;
            else
                cnt[5] = 1;
        }
    }
}

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

/* ---- by tiles (the default; opencl/edt_danielsson.cl's edt_dan_tiles is the same) ---- */
#define DAN_PPI 4         /* tile pixels per thread, at most (iwpp_dan_tile_shape) */
#define DAN_TILE_BATCH 16 /* rounds between reads of the count */
#define DAN_TILE_SIDE 32  /* 2D tile side by default (cuda.dan_tiles) */
#define DAN_TILE_THREADS 256

struct dan_tiling {
    int lg[3]; /* a tile's sides, log2 */
    int nt[3]; /* tiles per axis */
};

/* Bit (dx + 1) + 3 (dy + 1) + 9 (dz + 1) for each neighbouring tile that sees tile pixel (lx, ly, lz). */
__device__ __forceinline__ int dan_border_bits(int lx, int ly, int lz, int tx, int ty, int tz, int zh)
{
    int bits = 0;
    for (int dz = -zh; dz <= zh; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
                const bool ok = (dx == 0 || lx == (dx < 0 ? 0 : tx - 1)) && (dy == 0 || ly == (dy < 0 ? 0 : ty - 1)) &&
                                (dz == 0 || lz == (dz < 0 ? 0 : tz - 1));
                if (ok && (dx | dy | dz)) bits |= 1 << ((dx + 1) + 3 * (dy + 1) + 9 * (dz + 1));
            }
    return bits;
}

/* One round: counts in cnt[round % 3] (in), cnt[(round + 1) % 3] (out); cnt[3] tiles taken,
 * cnt[4] rounds that had work. dense: round 0, every tile, sites made from the binary image. */
template <typename T>
__global__ void __launch_bounds__(DAN_TILE_THREADS)
    dan_tiles(const T *in, unsigned long long *vr, geom g, dan_tiling tl, const unsigned *in_list, unsigned *out_list,
              unsigned long long *cnt, unsigned *mark, unsigned round, int dense, double hx, double hy, double hz)
{
    extern __shared__ unsigned long long ls[];
    __shared__ volatile int lv[4 + 26];
    const unsigned lid = threadIdx.x, L = blockDim.x;
    const int lgx = tl.lg[0], lgy = tl.lg[1], lgz = tl.lg[2];
    const int tx = 1 << lgx, ty = 1 << lgy, tz = 1 << lgz, zh = g.d > 1;
    const int HX = tx + 2, HY = ty + 2, HZ = tz + 2 * zh;
    const unsigned nh = (unsigned)(HX * HY * HZ), npix = (unsigned)(tx * ty * tz);
    const unsigned ntx = (unsigned)tl.nt[0], nty = (unsigned)tl.nt[1], ntz = (unsigned)tl.nt[2];
    const unsigned n_in = dense ? ntx * nty * ntz : (unsigned)cnt[round % 3];
    unsigned long long *out_n = cnt + (round + 1) % 3;
    if (blockIdx.x == 0 && lid == 0) { /* one writer, rounds in stream order */
        cnt[(round + 2) % 3] = 0;
        cnt[3] += n_in;
        cnt[4] += n_in > 0;
    }
    if ((int)lid < g.n) lv[4 + lid] = g.off[lid][0] + HX * (g.off[lid][1] + HY * g.off[lid][2]);
    for (unsigned ti = blockIdx.x; ti < n_in; ti += gridDim.x) {
        const unsigned t = dense ? ti : in_list[ti];
        const int bx = (int)(t % ntx), br = (int)(t / ntx), by = br % (int)nty, bz = br / (int)nty;
        const int64_t ox = (int64_t)bx << lgx, oy = (int64_t)by << lgy, oz = (int64_t)bz << lgz;
        for (unsigned j = lid; j < nh; j += L) { /* the tile and its frame */
            const int fr = (int)(j / (unsigned)HX);
            const int64_t x = ox + (int)(j % (unsigned)HX) - 1, y = oy + fr % HY - 1, z = oz + fr / HY - zh;
            unsigned long long s = SITE_NONE;
            if (x >= 0 && x < g.w && y >= 0 && y < g.h && z >= 0 && z < g.d) {
                const int64_t p = x + g.w * (y + g.h * z);
                s = !dense ? __ldcg(vr + p) : is_bg(in, p) ? site_pack(x, y, z) : SITE_NONE;
            }
            ls[j] = s;
        }
        if (lid == 0) lv[0] = lv[3] = 0;
        __syncthreads();
        unsigned long long s0[DAN_PPI]; /* each own pixel's site as loaded */
        int li[DAN_PPI];                 /* its place in ls; -1: none (past the tile or the image) */
        int64_t px[DAN_PPI], py[DAN_PPI], pz[DAN_PPI];
#pragma unroll
        for (int m = 0; m < DAN_PPI; ++m) {
            const unsigned i = lid + (unsigned)m * L;
            const int lx = (int)(i & (unsigned)(tx - 1)), ly = (int)((i >> lgx) & (unsigned)(ty - 1)),
                      lz = (int)(i >> (lgx + lgy));
            px[m] = ox + lx, py[m] = oy + ly, pz[m] = oz + lz;
            li[m] = i < npix && px[m] < g.w && py[m] < g.h && pz[m] < g.d ? (lx + 1) + HX * ((ly + 1) + HY * (lz + zh)) : -1;
            s0[m] = li[m] >= 0 ? ls[li[m]] : SITE_NONE;
        }
        /* relax until a step changes nothing; step k's flag is lv[k % 3], cleared in step k - 1 */
        for (unsigned k = 0;; ++k) {
            if (lid == 0) lv[(k + 1) % 3] = 0;
            bool any = false;
#pragma unroll
            for (int m = 0; m < DAN_PPI; ++m) {
                if (li[m] < 0) continue;
                const unsigned long long s = ls[li[m]];
                unsigned long long best = s;
                double bd = s == SITE_NONE ? INFINITY : site_d2(s, px[m], py[m], pz[m], hx, hy, hz);
                for (int q = 0; q < g.n; ++q) {
                    const unsigned long long t = ls[li[m] + lv[4 + q]];
                    if (t == SITE_NONE || t == best) continue;
                    const double dt = site_d2(t, px[m], py[m], pz[m], hx, hy, hz);
                    if (dt < bd) best = t, bd = dt;
                }
                if (best != s) ls[li[m]] = best, any = true;
            }
            if (any) lv[k % 3] = 1;
            __syncthreads();
            if (!lv[k % 3]) break;
        }
#pragma unroll
        for (int m = 0; m < DAN_PPI; ++m) { /* changed pixels back; which neighbours see them */
            if (li[m] < 0) continue;
            const unsigned long long s = ls[li[m]];
            if (dense || s != s0[m]) vr[px[m] + g.w * (py[m] + g.h * pz[m])] = s;
            if (s != s0[m]) {
                const int bits = dan_border_bits((int)(px[m] - ox), (int)(py[m] - oy), (int)(pz[m] - oz), tx, ty, tz, zh);
                if (bits) atomicOr((int *)&lv[3], bits);
            }
        }
        __syncthreads();
        const int seen = lv[3];
        if (lid < 27u && ((seen >> lid) & 1)) {
            const int nx = bx + (int)(lid % 3u) - 1, ny = by + (int)(lid / 3u % 3u) - 1, nz = bz + (int)(lid / 9u) - 1;
            if (nx >= 0 && nx < (int)ntx && ny >= 0 && ny < (int)nty && nz >= 0 && nz < (int)ntz) {
                const unsigned nt = (unsigned)nx + ntx * ((unsigned)ny + nty * (unsigned)nz);
                if (atomicExch(mark + nt, round) != round) out_list[atomicAdd(out_n, 1ull)] = nt;
            }
        }
        __syncthreads(); /* ls and lv are the next tile's */
    }
}

/* Rounds of dan_tiles until no tile is listed (round 0: every tile). lists: two of ntiles each;
 * mark: ntiles words. */
static iwpp_status dan_by_tiles(iwpp_context *ctx, const iwpp_buf *bin, unsigned long long *vr, const geom &g,
                                const double sp[3], const dan_tiling &tl, unsigned *lists[2], unsigned *mark)
{
    cuda_state *st = cu_state(ctx);
    cudaStream_t s = st->stream;
    unsigned long long *cnt = st->dctr + 16, *hcnt = st->hctr + 16;
    const unsigned ntiles = (unsigned)tl.nt[0] * (unsigned)tl.nt[1] * (unsigned)tl.nt[2];
    const int zh = g.d > 1;
    const size_t smem = (size_t)((1 << tl.lg[0]) + 2) * (size_t)((1 << tl.lg[1]) + 2) *
                        (size_t)((1 << tl.lg[2]) + 2 * zh) * sizeof(unsigned long long);
    const unsigned blocks = ntiles < (unsigned)st->sms * 8 ? ntiles : (unsigned)st->sms * 8;
    CU_TRY(ctx, cudaMemsetAsync(mark, 0xFF, (size_t)ntiles * sizeof(unsigned), s), "clearing the tile marks");
    CU_TRY(ctx, cudaMemsetAsync(cnt, 0, 5 * sizeof(unsigned long long), s), "clearing the tile counters");
    unsigned round = 0;
    for (bool more = true; more;) {
        for (int r = 0; r < DAN_TILE_BATCH; ++r, ++round) {
            const unsigned *in_list = lists[(round + 1) & 1];
            unsigned *out_list = lists[round & 1];
            switch (bin->type) {
            case IWPP_U8:
                dan_tiles<uint8_t><<<blocks, DAN_TILE_THREADS, smem, s>>>((const uint8_t *)bin->ptr, vr, g, tl, in_list,
                                                                        out_list, cnt, mark, round, round == 0, sp[0],
                                                                        sp[1], sp[2]);
                break;
            case IWPP_U16:
                dan_tiles<uint16_t><<<blocks, DAN_TILE_THREADS, smem, s>>>((const uint16_t *)bin->ptr, vr, g, tl, in_list,
                                                                         out_list, cnt, mark, round, round == 0, sp[0],
                                                                         sp[1], sp[2]);
                break;
            default:
                dan_tiles<float><<<blocks, DAN_TILE_THREADS, smem, s>>>((const float *)bin->ptr, vr, g, tl, in_list,
                                                                      out_list, cnt, mark, round, round == 0, sp[0],
                                                                      sp[1], sp[2]);
                break;
            }
        }
        CU_TRY(ctx, cudaMemcpyAsync(hcnt, cnt, 5 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, s),
               "reading the tile counts");
        iwpp_status e = cu_sync(ctx, "propagating by tiles");
        if (e != IWPP_OK) return e;
        more = hcnt[round % 3] > 0;
    }
    ctx->stats.pixels_visited += (int64_t)hcnt[3] << (tl.lg[0] + tl.lg[1] + tl.lg[2]);
    ctx->stats.rounds += (int64_t)hcnt[4];
    return IWPP_OK;
}

#define DAN_BATCH 8 /* rounds between reads of the count */
/* Front size, in items per queue block, below which global rounds run first (cuda.dan_switch):
 * with 4 the 4096^2 corner pixel took 29 ms instead of 383 (cuda/README.md). */
#define DAN_SWITCH 4

/* Items in each of the global rounds' two lists. A batch of rounds can grow a front of `until`
 * items by about 64 times in 2D (8 rounds of rings around each item) and more in 3D; past the
 * lists the rounds stop and the wavefront is collected, so this bounds memory, not correctness.
 * A set queue capacity bounds them too (the tests' way to make them overflow). */
static inline long long dan_list_items(const iwpp_context *ctx, int64_t n, long long until)
{
    if (until <= 0) return 0;
    long long cap = 64 * until + 65536;
    if (ctx->queue_capacity > 0 && ctx->queue_capacity < cap) cap = ctx->queue_capacity;
    return cap < n ? cap : (long long)n;
}

/* Global rounds from the `count` items at `list` while the front stays under `until` items;
 * *list and *count become the front left, or *overflowed says a list was too small (the front is
 * then in the sites, not in a list). mark: n words (the distance output, written last). */
template <typename IdxT>
static iwpp_status dan_rounds(iwpp_context *ctx, const dan_op<IdxT> &op, IdxT *lists[2], long long list_items,
                              unsigned *mark, int64_t n, long long until, const IdxT **list, long long *count,
                              bool *overflowed)
{
    cuda_state *st = cu_state(ctx);
    cudaStream_t s = st->stream;
    unsigned long long *cnt = st->dctr + 16, *hcnt = st->hctr + 16;
    CU_TRY(ctx, cudaMemsetAsync(mark, 0xFF, (size_t)n * sizeof(unsigned), s), "clearing the round marks");
    CU_TRY(ctx, cudaMemsetAsync(cnt, 0, 6 * sizeof(unsigned long long), s), "clearing the round counters");
    hcnt[0] = (unsigned long long)*count;
    CU_TRY(ctx, cudaMemcpyAsync(cnt, hcnt, sizeof(unsigned long long), cudaMemcpyHostToDevice, s), "setting the count");
    const unsigned blocks = (unsigned)st->sms * 2;
    unsigned round = 0;
    *overflowed = false;
    while (*count > 0 && *count < until && !*overflowed) {
        for (int r = 0; r < DAN_BATCH; ++r, ++round) {
            dan_round<IdxT><<<blocks, 256, 0, s>>>(op, round == 0 ? *list : lists[(round - 1) & 1], lists[round & 1], cnt,
                                                  mark, round, (unsigned long long)list_items);
        }
        CU_TRY(ctx, cudaMemcpyAsync(hcnt, cnt, 6 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, s),
               "reading the round counts");
        iwpp_status e = cu_sync(ctx, "propagating in rounds");
        if (e != IWPP_OK) return e;
        *count = (long long)hcnt[round % 3];
        *overflowed = hcnt[5] != 0;
    }
    if (round > 0) {
        *list = lists[(round - 1) & 1];
        ctx->stats.pixels_visited += (int64_t)hcnt[3];
        ctx->stats.rounds += (int64_t)hcnt[4];
    }
    return IWPP_OK;
}

template <typename IdxT, int VARIANT>
static iwpp_status dan_queue(iwpp_context *ctx, const iwpp_buf *bin, unsigned long long *vr, const geom &g,
                             const double sp[3], long long per_block, char *work, size_t work_bytes, unsigned *mark)
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
    /* work space: wavefront (N items) | the rounds' two lists | block queues | per-block counters */
    const long long until = per_block * blocks;
    const long long list_items = dan_list_items(ctx, N, until);
    const size_t init_bytes = ((size_t)N * sizeof(IdxT) + 255) & ~(size_t)255;
    const size_t list_bytes = ((size_t)list_items * sizeof(IdxT) + 255) & ~(size_t)255;
    const size_t gc_bytes = (size_t)blocks * sizeof(unsigned long long);
    const size_t fixed = init_bytes + 2 * list_bytes + gc_bytes;
    long long cap;
    if (ctx->queue_capacity > 0) {
        cap = ctx->queue_capacity;
    } else {
        cap = work_bytes > fixed ? (long long)((work_bytes - fixed) / ((size_t)blocks * 2 * sizeof(IdxT))) : 0;
    }
    if (fixed + (size_t)blocks * 2 * (size_t)cap * sizeof(IdxT) > work_bytes || cap < 1)
        return iwpp_set_error(ctx, IWPP_EINTERNAL, "internal: Danielsson work space too small");
    IdxT *init = (IdxT *)work;
    IdxT *lists[2] = {(IdxT *)(work + init_bytes), (IdxT *)(work + init_bytes + list_bytes)};
    IdxT *gq = (IdxT *)(work + init_bytes + 2 * list_bytes);
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
        const unsigned nb = cu_blocks(N, 256, st->sms * 8);
        if (pass == 0)
            launch_init<IdxT>(s, bin, vr, g, init, ctr, nb);
        else
            dan_collect<IdxT><<<nb, 256, 0, s>>>(vr, g, sp[0], sp[1], sp[2], init, N, ctr);
        CU_TRY(ctx, cudaMemcpyAsync(st->hctr, ctr, sizeof(unsigned long long), cudaMemcpyDeviceToHost, s),
               "reading the wavefront size");
        iwpp_status e = cu_sync(ctx, "collecting the wavefront");
        if (e != IWPP_OK) return e;
        long long count = (long long)st->hctr[0];
        if (count == 0) break;
        if (pass > 0) ctx->stats.overflow_reruns++;
        const IdxT *seeds = init;
        bool overflowed = false;
        if (pass == 0 && count < until) {
            e = dan_rounds<IdxT>(ctx, op, lists, list_items, mark, N, until, &seeds, &count, &overflowed);
            if (e != IWPP_OK) return e;
            if (overflowed) continue; /* collect the wavefront the lists could not hold */
            if (count == 0) break;
        }
        e = mlq_launch(ctx, kern, blocks, smem, op, seeds, count, gq, cap, threshold, ctr, gcount, gc_bytes,
                       &overflowed);
        if (e != IWPP_OK) return e;
        if (!overflowed) break;
    }
    return IWPP_OK;
}

template <typename IdxT>
static iwpp_status dan_variant(iwpp_context *ctx, const iwpp_buf *bin, unsigned long long *vr, const geom &g,
                               const double sp[3], long long per_block, char *work, size_t work_bytes, unsigned *mark)
{
    return mlq_by_variant(ctx, [&](auto v) {
        return dan_queue<IdxT, decltype(v)::value>(ctx, bin, vr, g, sp, per_block, work, work_bytes, mark);
    });
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
    const size_t vr_bytes = ((size_t)n * 8 + 255) & ~(size_t)255;
    const int side = (int)iwpp_tune_int(ctx, IWPP_TUNE_CUDA_DAN_TILES, DAN_TILE_SIDE, 0, 32);
    dan_tiling tl;
    size_t tile_bytes = 0;
    if (side > 0) {
        iwpp_dan_tile_shape(d, side, DAN_TILE_THREADS, tl.lg);
        const int64_t dims[3] = {w, h, d};
        for (int i = 0; i < 3; ++i) tl.nt[i] = (int)((dims[i] + (1 << tl.lg[i]) - 1) >> tl.lg[i]);
        tile_bytes = ((size_t)tl.nt[0] * (size_t)tl.nt[1] * (size_t)tl.nt[2] * sizeof(unsigned) + 255) & ~(size_t)255;
    }
    const int small = n < (int64_t)0xFFFFFFF0ll;
    const size_t isz = small ? 4 : 8;
    /* block queues: N/2 items in all (or the requested capacity), at least 4096 per block */
    const int blocks_max = st->sms * 4;
    long long cap = ctx->queue_capacity > 0 ? ctx->queue_capacity : n / (2 * blocks_max) + 4096;
    const long long per_block = iwpp_tune_int(ctx, IWPP_TUNE_CUDA_DAN_SWITCH, DAN_SWITCH, 0, 1LL << 20);
    const size_t work_bytes =
        side > 0 ? 2 * tile_bytes
                 : (((size_t)n * isz + 255) & ~(size_t)255) + (size_t)blocks_max * 2 * (size_t)cap * isz +
                       2 * (((size_t)dan_list_items(ctx, n, per_block * blocks_max) * isz + 255) & ~(size_t)255) +
                       (size_t)blocks_max * 8 + 256;
    void *mem = NULL;
    iwpp_status e = cu_scratch(ctx, vr_bytes + work_bytes, &mem);
    if (e != IWPP_OK) return e;
    unsigned long long *vr = (unsigned long long *)mem;
    char *work = (char *)mem + vr_bytes;
    if ((e = cu_timer_start(ctx)) != IWPP_OK) return e;
    unsigned *mark = (unsigned *)dist->ptr; /* the rounds' marks, until dan_final writes the distances */
    if (side > 0) {
        unsigned *lists[2] = {(unsigned *)work, (unsigned *)(work + tile_bytes)};
        e = dan_by_tiles(ctx, bin, vr, g, sp, tl, lists, mark);
    } else {
        e = small ? dan_variant<unsigned int>(ctx, bin, vr, g, sp, per_block, work, work_bytes, mark)
                  : dan_variant<unsigned long long>(ctx, bin, vr, g, sp, per_block, work, work_bytes, mark);
    }
    if (e != IWPP_OK) return e;
    dan_final<<<cu_blocks(n, 256, st->sms * 16), 256, 0, s>>>(
        vr, (float *)dist->ptr, nearest ? (int64_t *)nearest->ptr : NULL, w, h, n, sp[0], sp[1], sp[2]);
    if ((e = cu_timer_stop(ctx)) != IWPP_OK) return e;
    if (side > 0)
        snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "edt-danielsson/tiles-%dx%dx%d", 1 << tl.lg[0],
                 1 << tl.lg[1], 1 << tl.lg[2]);
    else
        snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "edt-danielsson/%s",
                 ctx->queue_variant == IWPP_QUEUE_ATOMIC      ? "atomic"
                 : ctx->queue_variant == IWPP_QUEUE_PREFIXSUM ? "prefixsum"
                                                              : "multilevel");
    return IWPP_OK;
}
