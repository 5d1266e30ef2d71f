/*
 * label_common.cuh - tiles and pixel tests shared by label.cu and watershed.cu (internal).
 *
 * Both cut the image into tiles of LB_TILE pixels: 32x32 in 2D, 16x8x8 in 3D. A tile's local
 * index lx + tx*(ly + ty*lz) orders its pixels as the global raster order does.
 */
#ifndef IWPP_CUDA_LABEL_COMMON_CUH
#define IWPP_CUDA_LABEL_COMMON_CUH

#include "common.cuh"

#define LB_TILE 1024

struct lb_tiling {
    int tx, ty, tz;        /* tile sizes */
    int64_t ntx, nty, ntz; /* tiles along each axis */
    int64_t ntiles;
};

static inline lb_tiling lb_make_tiling(const geom &g)
{
    lb_tiling t;
    if (g.d > 1) {
        t.tx = 16;
        t.ty = 8;
        t.tz = 8;
    } else {
        t.tx = 32;
        t.ty = 32;
        t.tz = 1;
    }
    t.ntx = (g.w + t.tx - 1) / t.tx;
    t.nty = (g.h + t.ty - 1) / t.ty;
    t.ntz = (g.d + t.tz - 1) / t.tz;
    t.ntiles = t.ntx * t.nty * t.ntz;
    return t;
}

/* First pixel of tile @p tile. */
__device__ __forceinline__ void lb_origin(const lb_tiling &t, int64_t tile, int64_t *x0, int64_t *y0, int64_t *z0)
{
    const int64_t tz = tile / (t.ntx * t.nty), r = tile - tz * t.ntx * t.nty, ty = r / t.ntx;
    *x0 = (r - ty * t.ntx) * t.tx;
    *y0 = ty * t.ty;
    *z0 = tz * t.tz;
}

/* Tile of pixel (x, y, z). */
__device__ __forceinline__ int64_t lb_tile_of(const lb_tiling &t, int64_t x, int64_t y, int64_t z)
{
    return x / t.tx + t.ntx * (y / t.ty + t.nty * (z / t.tz));
}

/* Local coordinates of local index @p li. */
__device__ __forceinline__ void lb_local(const lb_tiling &t, int li, int *lx, int *ly, int *lz)
{
    *lx = li % t.tx;
    const int r = li / t.tx;
    *ly = r % t.ty;
    *lz = r / t.ty;
}

/* Foreground: nonzero (F32: -0.0 is zero, as in C). */
template <typename T> __device__ __forceinline__ bool lb_fg(T v) { return v != (T)0; }

/* Two neighbours are in one component: both nonzero and, in EQUAL mode, equal (F32 exactly). */
template <typename T> __device__ __forceinline__ bool lb_joined(T a, T b, int equal)
{
    return lb_fg(a) && lb_fg(b) && (!equal || a == b);
}

/* Background in the parent array (never a valid index: images have fewer pixels than this). */
template <typename IdxT> __host__ __device__ __forceinline__ IdxT lb_none() { return (IdxT)~(IdxT)0; }

#endif
