/*
 * pointwise.cl - pointwise primitives, unit erosion/dilation and min/max
 * reduction for one pixel type (see iwpp_pw_op in native/backend.h).
 */

#if IWPP_TK == 1
#define PIX_MAX 255
#elif IWPP_TK == 2
#define PIX_MAX 65535
#endif

/* Operation codes (same order as iwpp_pw_op). */
#define PW_COPY 0
#define PW_FILL 1
#define PW_MIN 2
#define PW_MAX 3
#define PW_SUB_SCALAR 4
#define PW_ADD_SCALAR 5
#define PW_STEP_DOWN 6
#define PW_STEP_UP 7
#define PW_SUB 8
#define PW_BORDER 9

/* dst = op(a, b, s). si: the integer scalar (already rounded and clamped on
 * the host) and sf: the float scalar, for the types they apply to. */
__kernel void pw_apply(__global pix_t *dst, __global const pix_t *a, __global const pix_t *b,
                       int op, int si, float sf, pix_t sv, uint n, int w, int h, int d)
{
    uint i = (uint)get_global_id(0);
    if (i >= n) return;
    pix_t r;
    switch (op) {
    case PW_COPY: r = a[i]; break;
    case PW_FILL: r = sv; break;
    case PW_MIN: { pix_t x = a[i], y = b[i]; r = (y < x) ? y : x; break; }
    case PW_MAX: { pix_t x = a[i], y = b[i]; r = (y > x) ? y : x; break; }
#if IWPP_TK == 3
    case PW_SUB_SCALAR: r = a[i] - sf; break;
    case PW_ADD_SCALAR: r = a[i] + sf; break;
    case PW_STEP_DOWN: r = nextafter(a[i], -INFINITY); break;
    case PW_STEP_UP: r = nextafter(a[i], INFINITY); break;
    case PW_SUB: r = a[i] - b[i]; break;
#else
    case PW_SUB_SCALAR: r = (pix_t)clamp((int)a[i] - si, 0, PIX_MAX); break;
    case PW_ADD_SCALAR: r = (pix_t)clamp((int)a[i] + si, 0, PIX_MAX); break;
    case PW_STEP_DOWN: r = (pix_t)max((int)a[i] - 1, 0); break;
    case PW_STEP_UP: r = (pix_t)min((int)a[i] + 1, PIX_MAX); break;
    case PW_SUB: r = (pix_t)max((int)a[i] - (int)b[i], 0); break;
#endif
    default: { /* PW_BORDER */
        int3 c = coords_of(i, w, h);
        int border = c.x == 0 || c.x == w - 1 || c.y == 0 || c.y == h - 1 ||
                     (d > 1 && (c.z == 0 || c.z == d - 1));
        r = border ? a[i] : sv;
        break;
    }
    }
    dst[i] = r;
}

/* dst (U8) = (greater ? a > b : a < b) ? 255 : 0 */
__kernel void pw_compare(__global uchar *dst, __global const pix_t *a, __global const pix_t *b,
                         int greater, uint n)
{
    uint i = (uint)get_global_id(0);
    if (i >= n) return;
    pix_t x = a[i], y = b[i];
    int t = greater ? (x > y) : (x < y);
    dst[i] = t ? (uchar)255 : (uchar)0;
}

/* One elementary dilation (erode = 0) or erosion (erode = 1) of src into dst
 * over the neighbours in offs (out-of-image neighbours ignored). */
__kernel void morph_step(__global pix_t *dst, __global const pix_t *src, int erode, int w, int h,
                         int d, __constant int4 *offs, int noffs, uint n)
{
    uint i = (uint)get_global_id(0);
    if (i >= n) return;
    int3 c = coords_of(i, w, h);
    pix_t r = src[i];
    for (int k = 0; k < noffs; ++k) {
        int4 o = offs[k];
        if (!inside(c, o, w, h, d)) continue;
        pix_t v = src[i + (uint)o.w];
        if (erode ? (v < r) : (v > r)) r = v;
    }
    dst[i] = r;
}

/* Per-group minimum and maximum (as order-preserving keys) into out[2g], out[2g+1]. */
__kernel void minmax_groups(__global const pix_t *a, uint n, __global uint *out,
                            __local uint *lmin, __local uint *lmax)
{
    uint lid = (uint)get_local_id(0), L = (uint)get_local_size(0);
    uint mn = 0xffffffffu, mx = 0u;
    for (uint i = (uint)get_global_id(0); i < n; i += (uint)get_global_size(0)) {
        uint k = key_of(a[i]);
        mn = min(mn, k);
        mx = max(mx, k);
    }
    lmin[lid] = mn;
    lmax[lid] = mx;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = L / 2; s > 0; s >>= 1) {
        if (lid < s) {
            lmin[lid] = min(lmin[lid], lmin[lid + s]);
            lmax[lid] = max(lmax[lid], lmax[lid + s]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        out[2 * get_group_id(0)] = lmin[0];
        out[2 * get_group_id(0) + 1] = lmax[0];
    }
}

/* Key <-> value conversions (reconstruction works on 32-bit keys). */
__kernel void to_keys(__global uint *dst, __global const pix_t *src, uint inv, uint n)
{
    uint i = (uint)get_global_id(0);
    if (i < n) dst[i] = key_of(src[i]) ^ inv;
}

__kernel void from_keys(__global pix_t *dst, __global const uint *src, uint inv, uint n)
{
    uint i = (uint)get_global_id(0);
    if (i < n) dst[i] = val_of(src[i] ^ inv);
}
