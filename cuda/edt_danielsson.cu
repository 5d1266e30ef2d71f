/*
 * edt_danielsson.cu - the Danielsson EDT on CUDA: IWPP propagation of nearest-background sites
 * (paper 000 Alg. 6). Every pixel holds its nearest background site packed in 64 bits (x, y, z:
 * 21 bits each); a pixel takes a neighbour's site when it is strictly closer. 8-connected in 2D,
 * 26 in 3D, as on the CPU; d2 is formed as on the CPU (compiled with -fmad=false, as
 * edt_exact.cu). Two schedules of that propagation (cuda.dan_tiles):
 *  - by tiles (the default in 2D; dan_by_tiles): rounds over lists of tiles, each relaxed in shared
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

/* ---- by tiles (the default in 2D; opencl/edt_danielsson.cl's edt_dan_tiles is the same and says why) ---- */
#define DAN_TILE_BATCH 16 /* rounds between reads of the count */
#define DAN_TILE_SIDE 64  /* 2D tile side by default (cuda.dan_tiles; 3D: the queue by default) */

struct dan_tiling {
    int lgs;   /* a tile's side, log2 */
    int nt[3]; /* tiles per axis */
};

/* d2 of site s at (x, y, z); intd (unit spacing): from integer differences, exact and equal to
 * site_d2's there (sides below 2^21) */
__device__ __forceinline__ double dan_d2(unsigned long long s, int64_t x, int64_t y, int64_t z, double hx, double hy,
                                         double hz, int intd)
{
    if (intd) {
        const int64_t dx = x - (int64_t)(s & SITE_MASK), dy = y - (int64_t)((s >> SITE_BITS) & SITE_MASK),
                      dz = z - (int64_t)((s >> (2 * SITE_BITS)) & SITE_MASK);
        return (double)(dx * dx + dy * dy + dz * dz);
    }
    return site_d2(s, x, y, z, hx, hy, hz);
}

/* One round: counts in cnt[round % 3] (in), cnt[(round + 1) % 3] (out); cnt[3] tiles taken,
 * cnt[4] rounds that had work. dense: round 0, every tile, sites made from the binary image.
 * Shared memory: the sites of the tile and its frame (nh), then a changed byte per tile pixel.
 * Block: 2 S^(dim - 1) threads. */
template <typename T>
__global__ void dan_tiles(const T *in, unsigned long long *vr, geom g, dan_tiling tl, const unsigned *in_list,
                          unsigned *out_list, unsigned long long *cnt, unsigned *mark, unsigned round, int dense,
                          int intd, double hx, double hy, double hz)
{
    extern __shared__ unsigned long long ls[];
    __shared__ volatile int lv[4];
    const int lid = (int)threadIdx.x, L = (int)blockDim.x;
    const int lgs = tl.lgs, S = 1 << lgs, zh = g.d > 1;
    const int HX = S + 3, HY = S + 2, HZ = zh ? S + 2 : 1; /* rows of an odd length: columns on distinct banks */
    const int nh = HX * HY * HZ, npix = zh ? S * S * S : S * S, P = L / 2;
    unsigned char *chg = (unsigned char *)(ls + nh);
    const unsigned ntx = (unsigned)tl.nt[0], nty = (unsigned)tl.nt[1], ntz = (unsigned)tl.nt[2];
    const unsigned n_in = dense ? ntx * nty * ntz : (unsigned)cnt[round % 3];
    unsigned long long *out_n = cnt + (round + 1) % 3;
    if (blockIdx.x == 0 && lid == 0) { /* one writer, rounds in stream order */
        cnt[(round + 2) % 3] = 0;
        cnt[3] += n_in;
        cnt[4] += n_in > 0;
    }
    for (unsigned ti = blockIdx.x; ti < n_in; ti += gridDim.x) {
        const unsigned t = dense ? ti : in_list[ti];
        const int bx = (int)(t % ntx), br = (int)(t / ntx), by = br % (int)nty, bz = br / (int)nty;
        const int64_t ox = (int64_t)bx << lgs, oy = (int64_t)by << lgs, oz = zh ? (int64_t)bz << lgs : 0;
        for (int j = lid; j < nh; j += L) { /* the tile and its frame */
            const int fr = j / HX;
            const int64_t x = ox + j % HX - 1, y = oy + fr % HY - 1, z = oz + fr / HY - zh;
            unsigned long long s = SITE_NONE;
            if (x >= 0 && x < g.w && y >= 0 && y < g.h && z >= 0 && z < g.d) {
                const int64_t p = x + g.w * (y + g.h * z);
                s = !dense ? __ldcg(vr + p) : is_bg(in, p) ? site_pack(x, y, z) : SITE_NONE;
            }
            ls[j] = s;
        }
        for (int i = lid; i < npix; i += L) chg[i] = 0;
        if (lid == 0) lv[0] = lv[1] = lv[2] = lv[3] = 0;
        __syncthreads();
        /* only the outer ring of a listed tile can change first (as in edt_dan_tiles) */
        if (!dense) {
            bool any = false;
            for (int i = lid; i < npix; i += L) {
                const int lx = i & (S - 1), ly = (i >> lgs) & (S - 1), lz = i >> (2 * lgs);
                const int64_t px = ox + lx, py = oy + ly, pz = oz + lz;
                if (px >= g.w || py >= g.h || pz >= g.d ||
                    !(lx == 0 || lx == S - 1 || ly == 0 || ly == S - 1 || (zh && (lz == 0 || lz == S - 1))))
                    continue;
                const int li = (lx + 1) + HX * ((ly + 1) + HY * (lz + zh));
                const unsigned long long s = ls[li];
                double bd = s == SITE_NONE ? INFINITY : dan_d2(s, px, py, pz, hx, hy, hz, intd);
                unsigned long long best = s;
                for (int dz = -zh; dz <= zh && bd > 0.0; ++dz)
                    for (int dy = -1; dy <= 1; ++dy)
                        for (int dx = -1; dx <= 1; ++dx) {
                            const unsigned long long q = ls[li + dx + HX * (dy + HY * dz)];
                            if (q == SITE_NONE || q == best) continue;
                            const double dq = dan_d2(q, px, py, pz, hx, hy, hz, intd);
                            if (dq < bd) best = q, bd = dq;
                        }
                if (best != s) ls[li] = best, chg[i] = 1, any = true;
            }
            if (any) lv[2] = 1;
            __syncthreads();
            if (!lv[2]) lv[1] = -1; /* no sweep (read by all after the next barrier) */
            __syncthreads();
        }
        /* sweeps until one changes nothing; sweep k's flag is lv[k % 3], cleared in sweep k - 1 */
        const int dir = lid < P ? 1 : -1, u = lid % P % S, v = lid % P / S; /* this thread's place in a plane */
        for (unsigned k = 0; lv[1] != -1; ++k) {
            if (lid == 0) lv[(k + 1) % 3] = 0;
            bool any = false;
            for (int ax = 0; ax < 2 + zh; ++ax) {
                const int a = ax == 0 ? 1 : ax == 1 ? 0 : 2; /* rows (y) first, then columns, then z */
                const int au = a == 0 ? 1 : 0, av = a == 2 ? 1 : 2; /* the plane's axes */
                const int sa = a == 0 ? 1 : a == 1 ? HX : HX * HY, su = au == 0 ? 1 : HX, sv = av == 1 ? HX : HX * HY;
                for (int step = 0; step < S; ++step) {
                    int l3[3];
                    l3[a] = dir > 0 ? step : S - 1 - step;
                    l3[au] = u;
                    l3[av] = v;
                    const int64_t px = ox + l3[0], py = oy + l3[1], pz = oz + l3[2];
                    if (px < g.w && py < g.h && pz < g.d) {
                        const int li = (l3[0] + 1) + HX * ((l3[1] + 1) + HY * (l3[2] + zh));
                        const unsigned long long s = ls[li];
                        double bd = s == SITE_NONE ? INFINITY : dan_d2(s, px, py, pz, hx, hy, hz, intd);
                        unsigned long long best = s;
                        const int back = li - dir * sa;
                        for (int dv = -zh; dv <= zh && bd > 0.0; ++dv)
                            for (int du = -1; du <= 1; ++du) {
                                const unsigned long long q = ls[back + du * su + dv * sv];
                                if (q == SITE_NONE || q == best) continue;
                                const double dq = dan_d2(q, px, py, pz, hx, hy, hz, intd);
                                if (dq < bd) best = q, bd = dq;
                            }
                        if (best != s) {
                            ls[li] = best;
                            chg[l3[0] + S * (l3[1] + S * l3[2])] = 1;
                            any = true;
                        }
                    }
                    __syncthreads();
                }
            }
            if (any) lv[k % 3] = 1;
            __syncthreads();
            if (!lv[k % 3]) break;
        }
        for (int i = lid; i < npix; i += L) { /* changed pixels back; the neighbouring tiles to list */
            const int lx = i & (S - 1), ly = (i >> lgs) & (S - 1), lz = i >> (2 * lgs);
            const int64_t px = ox + lx, py = oy + ly, pz = oz + lz;
            if (px >= g.w || py >= g.h || pz >= g.d || !(dense || chg[i])) continue;
            const int li = (lx + 1) + HX * ((ly + 1) + HY * (lz + zh));
            const unsigned long long s = ls[li];
            vr[px + g.w * (py + g.h * pz)] = s;
            if (!chg[i] || !(lx == 0 || lx == S - 1 || ly == 0 || ly == S - 1 || (zh && (lz == 0 || lz == S - 1))))
                continue;
            int bits = 0;
            for (int dz = -zh; dz <= zh; ++dz)
                for (int dy = -1; dy <= 1; ++dy)
                    for (int dx = -1; dx <= 1; ++dx) {
                        const int tdx = lx + dx < 0 ? -1 : lx + dx >= S, tdy = ly + dy < 0 ? -1 : ly + dy >= S,
                                  tdz = lz + dz < 0 ? -1 : lz + dz >= S;
                        const int64_t qx = px + dx, qy = py + dy, qz = pz + dz;
                        if (!(tdx | tdy | tdz) || qx < 0 || qx >= g.w || qy < 0 || qy >= g.h || qz < 0 || qz >= g.d)
                            continue;
                        const double ds = dan_d2(s, qx, qy, qz, hx, hy, hz, intd);
                        const unsigned long long f = ls[li + dx + HX * (dy + HY * dz)];
                        if (f != SITE_NONE && !(ds < dan_d2(f, qx, qy, qz, hx, hy, hz, intd))) continue;
                        if (!dense) { /* the frame may have improved since it was read */
                            const unsigned long long gq = __ldcg(vr + qx + g.w * (qy + g.h * qz));
                            if (gq != SITE_NONE && !(ds < dan_d2(gq, qx, qy, qz, hx, hy, hz, intd))) continue;
                        }
                        bits |= 1 << ((tdx + 1) + 3 * (tdy + 1) + 9 * (tdz + 1));
                    }
            if (bits) atomicOr((int *)&lv[3], bits);
        }
        __syncthreads();
        const int seen = lv[3];
        for (int b = lid; b < 27; b += L) { /* (a block of 2 x 8 threads in 2D) */
            const int nx = bx + b % 3 - 1, ny = by + b / 3 % 3 - 1, nz = bz + b / 9 - 1;
            if (((seen >> b) & 1) && nx >= 0 && nx < (int)ntx && ny >= 0 && ny < (int)nty && nz >= 0 && nz < (int)ntz) {
                const unsigned nt = (unsigned)nx + ntx * ((unsigned)ny + nty * (unsigned)nz);
                if (atomicExch(mark + nt, round) != round) out_list[atomicAdd(out_n, 1ull)] = nt;
            }
        }
        __syncthreads(); /* ls, chg and lv are the next tile's */
    }
}

/* Round `round` of dan_tiles for the binary image's pixel type (round 0: dense). */
static void launch_tiles(cudaStream_t s, unsigned blocks, unsigned threads, size_t smem, const iwpp_buf *bin,
                         unsigned long long *vr, const geom &g, const dan_tiling &tl, unsigned *lists[2],
                         unsigned long long *cnt, unsigned *mark, unsigned round, int intd, const double sp[3])
{
    const unsigned *in_list = lists[(round + 1) & 1];
    unsigned *out_list = lists[round & 1];
    const int dense = round == 0;
#define DAN_TILES_LAUNCH(T)                                                                                   \
    dan_tiles<T><<<blocks, threads, smem, s>>>((const T *)bin->ptr, vr, g, tl, in_list, out_list, cnt, mark, \
                                               round, dense, intd, sp[0], sp[1], sp[2])
    switch (bin->type) {
    case IWPP_U8: DAN_TILES_LAUNCH(uint8_t); break;
    case IWPP_U16: DAN_TILES_LAUNCH(uint16_t); break;
    default: DAN_TILES_LAUNCH(float); break;
    }
#undef DAN_TILES_LAUNCH
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
    const int zh = g.d > 1, side = 1 << tl.lgs;
    const size_t nh = (size_t)(side + 3) * (size_t)(side + 2) * (size_t)(zh ? side + 2 : 1); /* as the kernel's */
    const size_t npix = (size_t)side * (size_t)side * (size_t)(zh ? side : 1);
    const size_t smem = nh * sizeof(unsigned long long) + npix;
    const unsigned threads = 2u << (tl.lgs * (zh ? 2 : 1));
    const unsigned blocks = ntiles < (unsigned)st->sms * 16 ? ntiles : (unsigned)st->sms * 16;
    const int intd = sp[0] == 1.0 && sp[1] == 1.0 && sp[2] == 1.0;
    CU_TRY(ctx, cudaMemsetAsync(mark, 0xFF, (size_t)ntiles * sizeof(unsigned), s), "clearing the tile marks");
    CU_TRY(ctx, cudaMemsetAsync(cnt, 0, 5 * sizeof(unsigned long long), s), "clearing the tile counters");
    unsigned round = 0;
    for (bool more = true; more;) {
        for (int r = 0; r < DAN_TILE_BATCH; ++r, ++round)
            launch_tiles(s, blocks, threads, smem, bin, vr, g, tl, lists, cnt, mark, round, intd, sp);
        CU_TRY(ctx, cudaMemcpyAsync(hcnt, cnt, 5 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, s),
               "reading the tile counts");
        iwpp_status e = cu_sync(ctx, "propagating by tiles");
        if (e != IWPP_OK) return e;
        more = hcnt[round % 3] > 0;
    }
    ctx->stats.pixels_visited += (int64_t)hcnt[3] * (int64_t)npix;
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
    const int side = (int)iwpp_tune_int(ctx, IWPP_TUNE_CUDA_DAN_TILES, d > 1 ? 0 : DAN_TILE_SIDE, 0, 64);
    dan_tiling tl;
    size_t tile_bytes = 0;
    if (side > 0) {
        tl.lgs = iwpp_dan_tile_side(d, side, 1024);
        const int64_t dims[3] = {w, h, d};
        for (int i = 0; i < 3; ++i) tl.nt[i] = (int)((dims[i] + (1 << tl.lgs) - 1) >> tl.lgs);
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
        snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "edt-danielsson/tiles-%dx%dx%d", 1 << tl.lgs,
                 1 << tl.lgs, d > 1 ? 1 << tl.lgs : 1);
    else
        snprintf(ctx->stats.variant, sizeof ctx->stats.variant, "edt-danielsson/%s",
                 ctx->queue_variant == IWPP_QUEUE_ATOMIC      ? "atomic"
                 : ctx->queue_variant == IWPP_QUEUE_PREFIXSUM ? "prefixsum"
                                                              : "multilevel");
    return IWPP_OK;
}
