/*
 * megapixel.cuh - the IWPP-MP ("megapixel") reconstruction (paper 003).
 *
 * The image is cut into 32x32 tiles (one slice thick in 3D). A persistent kernel of one-warp
 * blocks takes tiles from a global queue; for each it loads the tile plus a one-pixel halo
 * (and the slices above and below in 3D) of marker and mask into shared memory, sweeps the tile
 * left->right, right->left, top->bottom and bottom->top (one lane per row or column, __syncwarp
 * between steps, so shared memory is race-free) until nothing changes, and writes back:
 * interior pixels with an atomic max (min for erosion); halo pixels get the value the tile
 * propagates to them, also atomically, and the tile that owns a halo pixel it raised is queued
 * again. A per-tile "queued" flag keeps each tile at most once in the queue; a pending counter
 * (queued or being processed: the paper's active-block counter) tells the blocks when to stop.
 */
#ifndef IWPP_CUDA_MEGAPIXEL_CUH
#define IWPP_CUDA_MEGAPIXEL_CUH

#include "common.cuh"

#define MP_T 32
#define MP_S 34
#define MP_EMPTY 0xFFFFFFFFu

struct mp_ctl {
    unsigned int *ring;
    unsigned int *flags;
    unsigned long long cap;
    unsigned long long *head, *tail, *pending, *pops, *pixels;
};

__device__ __forceinline__ void mp_enqueue(const mp_ctl &c, unsigned int t)
{
    if (atomicExch(&c.flags[t], 1u) != 0u) return;
    atomicAdd(c.pending, 1ull);
    unsigned long long pos = atomicAdd(c.tail, 1ull) % c.cap;
    volatile unsigned int *slot = c.ring + pos;
    while (*slot != MP_EMPTY) __nanosleep(64);
    __threadfence();
    atomicExch(&c.ring[pos], t);
}

__global__ void mp_init_kernel(mp_ctl c, unsigned long long ntiles)
{
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < c.cap;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        c.ring[i] = i < ntiles ? (unsigned int)i : MP_EMPTY;
        if (i < ntiles) c.flags[i] = 1u;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *c.head = 0;
        *c.tail = ntiles;
        *c.pending = ntiles;
        *c.pops = 0;
        *c.pixels = 0;
    }
}

/* P = 1 (2D) or 3 (3D: the slices above and below are read-only halo). */
template <typename T, bool ERO, int P>
__global__ void __launch_bounds__(32) mp_kernel(T *J, const T *__restrict__ I, geom g, mp_ctl c)
{
    typedef order<ERO> O;
    __shared__ T sJ[P][MP_S][MP_S + 1];
    __shared__ T sI[P][MP_S][MP_S + 1];
    const int lane = threadIdx.x;
    const int C = P == 3 ? 1 : 0; /* the central plane */
    const int64_t ntx = (g.w + MP_T - 1) / MP_T, nty = (g.h + MP_T - 1) / MP_T;
    const T worst = O::template worst<T>();
    unsigned long long pops = 0, pixels = 0;

    for (;;) {
        /* take a tile (lane 0), or stop when nothing is queued or being processed */
        unsigned int tile = MP_EMPTY;
        int stop = 0;
        if (lane == 0) {
            for (;;) {
                unsigned long long h = *(volatile unsigned long long *)c.head;
                unsigned long long tl = *(volatile unsigned long long *)c.tail;
                if (h < tl) {
                    if (atomicCAS(c.head, h, h + 1) == h) {
                        volatile unsigned int *slot = c.ring + (h % c.cap);
                        unsigned int v;
                        while ((v = *slot) == MP_EMPTY) __nanosleep(32);
                        *slot = MP_EMPTY;
                        __threadfence();
                        atomicExch(&c.flags[v], 0u);
                        tile = v;
                        break;
                    }
                    continue;
                }
                if (*(volatile unsigned long long *)c.pending == 0) {
                    stop = 1;
                    break;
                }
                __nanosleep(128);
            }
        }
        stop = __shfl_sync(0xffffffffu, stop, 0);
        if (stop) break;
        tile = __shfl_sync(0xffffffffu, tile, 0);
        __threadfence();
        ++pops;

        const int64_t tz = tile / (ntx * nty), r = tile - tz * ntx * nty, ty = r / ntx, tx = r - ty * ntx;
        const int64_t x0 = tx * MP_T, y0 = ty * MP_T;
        const int tw = (int)(g.w - x0 < MP_T ? g.w - x0 : MP_T);
        const int th = (int)(g.h - y0 < MP_T ? g.h - y0 : MP_T);
        pixels += (unsigned long long)(tw * th);

        /* load tile + halo; cells outside the image never propagate */
        for (int idx = lane; idx < P * MP_S * MP_S; idx += 32) {
            const int pl = idx / (MP_S * MP_S), rem = idx - pl * MP_S * MP_S;
            const int ly = rem / MP_S - 1, lx = rem % MP_S - 1;
            const int64_t gx = x0 + lx, gy = y0 + ly, gz = tz + (P == 3 ? pl - 1 : 0);
            T vj = worst, vi = worst;
            if (gx >= 0 && gx < g.w && gy >= 0 && gy < g.h && gz >= 0 && gz < g.d && lx <= tw && ly <= th) {
                const int64_t gi = gx + g.w * (gy + g.h * gz);
                vj = ld_cg(J + gi);
                vi = __ldg(I + gi);
            }
            sJ[pl][ly + 1][lx + 1] = vj;
            sI[pl][ly + 1][lx + 1] = vi;
        }
        __syncwarp();

        /* pure-z neighbours (3D): the halo slices do not change, one application suffices */
        if (P == 3) {
            for (int idx = lane; idx < tw * th; idx += 32) {
                const int ly = idx / tw, lx = idx - ly * tw;
                T a = sJ[C][ly + 1][lx + 1];
                for (int k = 0; k < g.n; ++k)
                    if (g.off[k][0] == 0 && g.off[k][1] == 0)
                        a = O::best(a, sJ[C + g.off[k][2]][ly + 1][lx + 1]);
                sJ[C][ly + 1][lx + 1] = O::limit(a, sI[C][ly + 1][lx + 1]);
            }
            __syncwarp();
        }

        /* sweeps until stable */
        for (;;) {
            bool changed = false;
            for (int sweep = 0; sweep < 4; ++sweep) {
                const bool alongx = sweep < 2;
                const int dir = (sweep & 1) ? -1 : 1;
                const int len = alongx ? tw : th;
                const int across = alongx ? th : tw;
                for (int s = 0; s < len; ++s) {
                    const int i = dir > 0 ? s : len - 1 - s;
                    if (lane < across) {
                        const int lx = alongx ? i : lane, ly = alongx ? lane : i;
                        T a = sJ[C][ly + 1][lx + 1];
                        const T cur = a;
                        for (int k = 0; k < g.n; ++k) {
                            const int ox = g.off[k][0], oy = g.off[k][1];
                            if ((alongx ? ox : oy) != -dir) continue;
                            a = O::best(a, sJ[C + (P == 3 ? g.off[k][2] : 0)][ly + 1 + oy][lx + 1 + ox]);
                        }
                        a = O::limit(a, sI[C][ly + 1][lx + 1]);
                        if (O::ahead(a, cur)) {
                            sJ[C][ly + 1][lx + 1] = a;
                            changed = true;
                        }
                    }
                    __syncwarp();
                }
            }
            if (!__any_sync(0xffffffffu, changed)) break;
        }

        /* write back the interior */
        for (int idx = lane; idx < tw * th; idx += 32) {
            const int ly = idx / tw, lx = idx - ly * tw;
            const T v = sJ[C][ly + 1][lx + 1];
            const int64_t gi = (x0 + lx) + g.w * ((y0 + ly) + g.h * tz);
            if (O::ahead(v, ld_cg(J + gi))) atomic_improve<ERO>(J + gi, v);
        }
        /* halo: what the tile propagates to each outside neighbour; re-queue its tile */
        for (int idx = lane; idx < P * MP_S * MP_S; idx += 32) {
            const int pl = idx / (MP_S * MP_S), rem = idx - pl * MP_S * MP_S;
            const int ly = rem / MP_S - 1, lx = rem % MP_S - 1;
            const bool inside = pl == C && lx >= 0 && lx < tw && ly >= 0 && ly < th;
            if (inside || lx < -1 || ly < -1 || lx > tw || ly > th) continue;
            const int64_t gx = x0 + lx, gy = y0 + ly, gz = tz + (P == 3 ? pl - 1 : 0);
            if (gx < 0 || gx >= g.w || gy < 0 || gy >= g.h || gz < 0 || gz >= g.d) continue;
            T cand = worst;
            for (int k = 0; k < g.n; ++k) {
                const int nx = lx + g.off[k][0], ny = ly + g.off[k][1];
                const int npl = pl + (P == 3 ? g.off[k][2] : 0);
                if (npl != C || nx < 0 || nx >= tw || ny < 0 || ny >= th) continue;
                cand = O::best(cand, sJ[C][ny + 1][nx + 1]);
            }
            cand = O::limit(cand, sI[pl][ly + 1][lx + 1]);
            if (!O::ahead(cand, sJ[pl][ly + 1][lx + 1])) continue;
            const int64_t gi = gx + g.w * (gy + g.h * gz);
            const T old = atomic_improve<ERO>(J + gi, cand);
            if (O::ahead(cand, old)) {
                __threadfence();
                mp_enqueue(c, (unsigned int)(gz * ntx * nty + (gy / MP_T) * ntx + gx / MP_T));
            }
        }
        __syncwarp();
        __threadfence();
        if (lane == 0) atomicAdd(c.pending, (unsigned long long)-1ll);
    }
    if (lane == 0) {
        atomicAdd(c.pops, pops);
        atomicAdd(c.pixels, pixels);
    }
}

template <typename T, bool ERO>
static iwpp_status megapixel_run(iwpp_context *ctx, T *J, const T *I, const geom &g)
{
    cuda_state *st = cu_state(ctx);
    cudaStream_t s = st->stream;
    const unsigned long long ntx = (g.w + MP_T - 1) / MP_T, nty = (g.h + MP_T - 1) / MP_T;
    const unsigned long long ntiles = ntx * nty * (unsigned long long)g.d;
    if (ntiles >= 0xFFFFFFF0ull)
        return iwpp_set_error(ctx, IWPP_EUNSUPPORTED,
                              "megapixel reconstruction handles at most 2^32 tiles; use the queue algorithm");
    mp_ctl c;
    c.cap = 2 * ntiles + 1;
    void *mem = NULL;
    iwpp_status e = cu_scratch(ctx, (size_t)(c.cap + ntiles) * sizeof(unsigned int), &mem);
    if (e != IWPP_OK) return e;
    c.ring = (unsigned int *)mem;
    c.flags = c.ring + c.cap;
    c.head = st->dctr + 10;
    c.tail = st->dctr + 11;
    c.pending = st->dctr + 12;
    c.pops = st->dctr + 13;
    c.pixels = st->dctr + 14;
    mp_init_kernel<<<cu_blocks((int64_t)c.cap, 256, 4096), 256, 0, s>>>(c, ntiles);
    int occ = 0;
    if (g.d > 1) {
        CU_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, mp_kernel<T, ERO, 3>, 32, 0), "sizing");
        mp_kernel<T, ERO, 3><<<st->sms * (occ > 0 ? occ : 1), 32, 0, s>>>(J, I, g, c);
    } else {
        CU_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, mp_kernel<T, ERO, 1>, 32, 0), "sizing");
        mp_kernel<T, ERO, 1><<<st->sms * (occ > 0 ? occ : 1), 32, 0, s>>>(J, I, g, c);
    }
    CU_TRY(ctx, cudaMemcpyAsync(st->hctr, st->dctr + 13, 2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, s),
           "reading the tile counters");
    e = cu_sync(ctx, "running the megapixel kernel");
    if (e != IWPP_OK) return e;
    ctx->stats.rounds += (int64_t)st->hctr[0];
    ctx->stats.pixels_visited += (int64_t)st->hctr[1];
    return IWPP_OK;
}

#endif
