/*
 * edt_lines.cl - the exact EDT, one work-item per line, in integers (3D images with unit
 * spacing; 2D too where ocl.edt_lines=1): the method of cuda/edt_lines.cuh, which says why it is
 * exact. Passes in the order x, y, z, so that both envelope passes (edt_ln_y along y, edt_ln_out
 * along z) have neighbouring work-items on neighbouring columns x:
 *   X. edt_ln_x: the nearest background column on each row, as a ushort (LN_NONE: none);
 *   Y. edt_ln_y: the lower envelope of f(y') = (x - sx)^2 along each column of a slice: the
 *      squared distance in the slice (f2) and, for nearest indices, the site row (sy);
 *   Z. edt_ln_out: the envelope of f2 along z: distances and nearest indices (2D: along y, f from
 *      sx).
 * A line's envelope is the stack method of the CPU (a forward sweep keeps the sites that are
 * nearest somewhere and where each starts to be, a backward sweep reads the distances off); the
 * top entry in registers, the next LN_WIN in local memory, older ones spilled to global memory
 * four at a time (32 bytes), the sectors of 32 consecutive work-items interleaved.
 * The caller keeps w^2 + h^2 + d^2 < 2^31 (every sum fits an int) and lines of at most 65535.
 */
#define LN_INF 0x7FFFFFFF
#define LN_NONE 0xFFFF
#define LN_WIN 8
#define LN_CHUNKS 128 /* entries between a work-item's spilled chunks: 32 items of 4 */
#define LN_GROUP 64   /* work-items per group of edt_ln_y / edt_ln_out (their windows) */
#define LN_AHEAD 4    /* f values the forward sweep loads at once */

/* Pass X: G work-items per row (a work-group: one row or several). The row's background as bits, a word per run of 32 pixels
 * (the masks of CUDA's ballots), in local memory; then per word the last background before it
 * and the first after it (each work-item a range of words, carried in by a max and a min scan
 * over the group: log2(group) steps, not per segment of the row); then every pixel the nearer
 * of the last background at or before it and the first at or after it (ties: the left one), by
 * the bits of its own word and those two. Work-items take neighbouring words and pixels; rows
 * whose byte length is a multiple of 16 are read 16 bytes a load. Local memory: 3 words per
 * run of 32 pixels and 2 per work-item, for each row of the group. */
#if IWPP_TK == 1
#define LNX_V 16 /* pixels per 16-byte load */
#define LNX_Z(k, i) ((uint)(v.s##k == 0) << (i))
inline uint lnx_bits16(__global const pix_t *q)
{
    const uchar16 v = *(__global const uchar16 *)q;
    return LNX_Z(0, 0) | LNX_Z(1, 1) | LNX_Z(2, 2) | LNX_Z(3, 3) | LNX_Z(4, 4) | LNX_Z(5, 5) | LNX_Z(6, 6) |
           LNX_Z(7, 7) | LNX_Z(8, 8) | LNX_Z(9, 9) | LNX_Z(a, 10) | LNX_Z(b, 11) | LNX_Z(c, 12) | LNX_Z(d, 13) |
           LNX_Z(e, 14) | LNX_Z(f, 15);
}
#elif IWPP_TK == 2
#define LNX_V 8
#define LNX_Z(k, i) ((uint)(v.s##k == 0) << (i))
inline uint lnx_bits16(__global const pix_t *q)
{
    const ushort8 v = *(__global const ushort8 *)q;
    return LNX_Z(0, 0) | LNX_Z(1, 1) | LNX_Z(2, 2) | LNX_Z(3, 3) | LNX_Z(4, 4) | LNX_Z(5, 5) | LNX_Z(6, 6) |
           LNX_Z(7, 7);
}
#else
#define LNX_V 4
#define LNX_Z(k, i) ((uint)(v.s##k == 0.0f) << (i))
inline uint lnx_bits16(__global const pix_t *q)
{
    const float4 v = *(__global const float4 *)q;
    return LNX_Z(0, 0) | LNX_Z(1, 1) | LNX_Z(2, 2) | LNX_Z(3, 3);
}
#endif

/* the background bits of pixels 32c .. 32c + 31 of row p (0 past w) */
inline uint lnx_word(__global const pix_t *p, int c, int w, int vec)
{
    const int x0 = c * 32;
    uint m = 0;
    if (vec && x0 + 32 <= w) {
        for (int i = 0; i < 32; i += LNX_V) m |= lnx_bits16(p + x0 + i) << i;
    } else {
        for (int i = 0; i < 32 && x0 + i < w; ++i) m |= (uint)(p[x0 + i] == (pix_t)0) << i;
    }
    return m;
}

inline int lnx_ctz(uint m) { return 31 - (int)clz(m & (0u - m)); } /* m != 0; OpenCL 1.2 has no ctz */
inline int lnx_last(int c, uint m) { return c * 32 + 31 - (int)clz(m); } /* m != 0 */

__kernel void edt_ln_x(__global const pix_t *in, __global ushort *sx, int w, uint rows, int G, __local int *lm)
{
    /* G work-items a row, get_local_size(0) / G rows a group */
    const int li = (int)get_local_id(0) % G, slot = (int)get_local_id(0) / G;
    const uint row = (uint)get_group_id(0) * (uint)(get_local_size(0) / (size_t)G) + (uint)slot;
    const int valid = row < rows; /* the barriers are the whole group's */
    const int nc = (w + 31) / 32, per = (nc + G - 1) / G;
    __local uint *mask = (__local uint *)(lm + slot * (3 * nc + 2 * G));
    __local int *prv = (__local int *)(mask + nc), *nxt = prv + nc, *sl = nxt + nc, *sf = sl + G;
    __global const pix_t *p = in + (size_t)row * (size_t)w;
    const int vec = (w * (int)sizeof(pix_t)) % 16 == 0; /* every row 16-byte aligned */
    if (valid)
        for (int c = li; c < nc; c += G) mask[c] = lnx_word(p, c, w, vec);
    barrier(CLK_LOCAL_MEM_FENCE);
    /* this work-item's words [c0, c1): their last and first background, then scanned over the row's items */
    const int c0 = min(li * per, nc), c1 = valid ? min(c0 + per, nc) : c0;
    int last = -1, first = LN_INF;
    for (int c = c1 - 1; c >= c0; --c) {
        const uint m = mask[c];
        if (m) first = c * 32 + lnx_ctz(m), last = max(last, lnx_last(c, m));
    }
    sl[li] = last;
    sf[li] = first;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = 1; h < G; h <<= 1) {
        const int a = li >= h ? sl[li - h] : -1, b = li + h < G ? sf[li + h] : LN_INF;
        barrier(CLK_LOCAL_MEM_FENCE);
        sl[li] = max(sl[li], a);
        sf[li] = min(sf[li], b);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    int l = li > 0 ? sl[li - 1] : -1, r = li + 1 < G ? sf[li + 1] : LN_INF;
    for (int c = c0; c < c1; ++c) {
        const uint m = mask[c];
        prv[c] = l;
        if (m) l = lnx_last(c, m);
    }
    for (int c = c1 - 1; c >= c0; --c) {
        const uint m = mask[c];
        nxt[c] = r;
        if (m) r = c * 32 + lnx_ctz(m);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!valid) return;
    __global ushort *o = sx + (size_t)row * (size_t)w;
    for (int x = li; x < w; x += G) {
        const int c = x / 32, b = x % 32;
        const uint m = mask[c], lo = m & (0xFFFFFFFFu >> (31 - b)), hi = m & (0xFFFFFFFFu << b);
        const int left = lo ? lnx_last(c, lo) : prv[c], right = hi ? c * 32 + lnx_ctz(hi) : nxt[c];
        const int best = right != LN_INF && (left < 0 || right - x < x - left) ? right : left;
        o[x] = (ushort)(best < 0 ? LN_NONE : best);
    }
}

/* One line of an envelope pass: where f comes from and where the results go.
 * kind 0: pass Y (f from sx, out f2 and sy); 1: the last pass (f from f2 in 3D, from sx in 2D;
 * out the distances and nearest indices). */
typedef struct ln_line {
    __global const ushort *sx;
    __global const ushort *sy_in;
    __global const int *f2_in;
    __global int *f2;
    __global ushort *sy;
    __global float *dist;
    __global long *near;
    int kind, want, x, w, h;
    size_t base, step;
} ln_line;

inline int ln_f(const ln_line *L, int u)
{
    if (L->f2_in) return L->f2_in[L->base + (size_t)u * L->step];
    const int c = L->sx[L->base + (size_t)u * L->step];
    return c == LN_NONE ? LN_INF : (L->x - c) * (L->x - c);
}

/* (float)sqrt((double)d2), the CPU's distance, for an integer d2 >= 0: below 2^24 the correctly
 * rounded float square root gives the same bits (cuda/edt_colbands.cuh's cb_dist says why), but
 * OpenCL's float sqrt is correctly rounded only in programs built with
 * -cl-fp32-correctly-rounded-divide-sqrt, which the host adds (and IWPP_SQRT_CR) where the device
 * reports CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT. */
inline float ln_dist(int d2)
{
#ifdef IWPP_SQRT_CR
    if (d2 < (1 << 24)) return sqrt((float)d2);
#endif
    return (float)sqrt((double)d2);
}

/* position p gets site `site` at squared distance d2 (site < 0: the line has no site) */
inline void ln_put(const ln_line *L, int p, int site, int d2)
{
    const size_t o = L->base + (size_t)p * L->step;
    if (L->kind == 0) {
        L->f2[o] = site < 0 ? LN_INF : d2;
        if (L->want) L->sy[o] = (ushort)(site < 0 ? LN_NONE : site);
        return;
    }
    L->dist[o] = site < 0 ? INFINITY : ln_dist(d2);
    if (L->want) {
        long q = -1;
        if (site >= 0) {
            const long plane = L->f2_in ? site : 0;
            const long row = L->f2_in ? (long)L->sy_in[L->base + (size_t)site * L->step] : site;
            q = (long)L->sx[(size_t)((plane * L->h + row) * L->w + L->x)] + (long)L->w * (row + (long)L->h * plane);
        }
        L->near[o] = q;
    }
}

/* The stack below the top entry: [base, depth) in the window (entry j at win[(j % LN_WIN) *
 * LN_GROUP]), [0, base) in the item's chunks of glob. */
#define LN_AT(j) win[((j) % LN_WIN) * LN_GROUP]
inline void ln_push(__local int2 *win, __global int4 *glob, int *depth, int *base, int2 e)
{
    if (*depth - *base == LN_WIN) {
        __global int4 *g = glob + (*base >> 2) * (LN_CHUNKS / 2);
        const int b = *base;
        g[0] = (int4)(LN_AT(b), LN_AT(b + 1));
        g[1] = (int4)(LN_AT(b + 2), LN_AT(b + 3));
        *base += 4;
    }
    LN_AT(*depth) = e;
    ++*depth;
}
inline int2 ln_pop(__local int2 *win, __global const int4 *glob, int *depth, int *base)
{
    if (--*depth < *base) {
        *base -= 4;
        const int b = *base;
        const int4 p = glob[(b >> 2) * (LN_CHUNKS / 2)], q = glob[(b >> 2) * (LN_CHUNKS / 2) + 1];
        LN_AT(b) = p.xy, LN_AT(b + 1) = p.zw, LN_AT(b + 2) = q.xy, LN_AT(b + 3) = q.zw;
    }
    return LN_AT(*depth);
}

/* cuda/edt_lines.cuh's ln_solve: entries (s | t << 16, f(s)); ties keep the earlier site. */
void ln_solve(const ln_line *L, int n, __local int2 *win, __global int4 *glob)
{
    int depth = 0, base = 0, k = -1, s = 0, t = 0, fs = 0;
    for (int u0 = 0; u0 < n; u0 += LN_AHEAD) {
        int fv[LN_AHEAD]; /* loaded together (memory-level parallelism, as CUDA's) */
        for (int i = 0; i < LN_AHEAD; ++i) fv[i] = u0 + i < n ? ln_f(L, u0 + i) : LN_INF;
        for (int i = 0; i < LN_AHEAD; ++i) {
            const int u = u0 + i, fu = fv[i];
            if (fu == LN_INF) continue;
            while (k >= 0 && fs + (t - s) * (t - s) > fu + (t - u) * (t - u)) {
                if (--k >= 0) {
                    const int2 e = ln_pop(win, glob, &depth, &base);
                    s = e.x & 0xFFFF, t = (int)((uint)e.x >> 16), fs = e.y;
                }
            }
            if (k < 0) {
                k = 0, s = u, t = 0, fs = fu;
                continue;
            }
            const int from = (u * u - s * s + fu - fs) / (2 * (u - s)) + 1;
            if (from < n) {
                ln_push(win, glob, &depth, &base, (int2)((int)((uint)s | (uint)t << 16), fs));
                ++k, s = u, t = from, fs = fu;
            }
        }
    }
    for (int x = n - 1; x >= 0; --x) {
        if (k < 0) {
            ln_put(L, x, -1, 0);
            continue;
        }
        ln_put(L, x, s, fs + (x - s) * (x - s));
        if (x == t && --k >= 0) {
            const int2 e = ln_pop(win, glob, &depth, &base);
            s = e.x & 0xFFFF, t = (int)((uint)e.x >> 16), fs = e.y;
        }
    }
}

/* the work-item's window and its first spilled chunk (stk: cap entries per item, cap % 4 == 0) */
#define LN_BEGIN()                                                                                            \
    __local int2 wins[LN_WIN * LN_GROUP];                                                                     \
    const size_t gid = get_global_id(0), all = get_global_size(0);                                           \
    __local int2 *win = wins + get_local_id(0);                                                               \
    __global int4 *glob = (__global int4 *)(stk + (gid >> 5) * (size_t)cap * 32 + (gid & 31) * 4)

/* Pass Y (3D): one work-item per column x of a slice z, along y. */
__kernel void edt_ln_y(__global const ushort *sx, __global int *f2, __global ushort *sy, int want,
                       __global int2 *stk, int w, int h, int d, int cap)
{
    LN_BEGIN();
    ln_line L;
    L.sx = sx, L.sy_in = 0, L.f2_in = 0, L.f2 = f2, L.sy = sy, L.dist = 0, L.near = 0;
    L.kind = 0, L.want = want, L.w = w, L.h = h, L.step = (size_t)w;
    for (size_t line = gid; line < (size_t)w * (size_t)d; line += all) {
        L.x = (int)(line % (size_t)w);
        L.base = (line / (size_t)w) * (size_t)w * (size_t)h + (size_t)L.x;
        ln_solve(&L, h, win, glob);
    }
}

/* The last pass: one work-item per pixel (x, y) of a plane, along z (3D), or per column x,
 * along y (2D). */
__kernel void edt_ln_out(__global const ushort *sx, __global const ushort *sy, __global const int *f2,
                         __global float *dist, __global long *near, int want, __global int2 *stk, int w, int h,
                         int d, int cap)
{
    LN_BEGIN();
    const int is3 = d > 1;
    ln_line L;
    L.sx = sx, L.sy_in = sy, L.f2_in = is3 ? f2 : 0, L.f2 = 0, L.sy = 0, L.dist = dist, L.near = near;
    L.kind = 1, L.want = want, L.w = w, L.h = h, L.step = is3 ? (size_t)w * (size_t)h : (size_t)w;
    const size_t lines = is3 ? (size_t)w * (size_t)h : (size_t)w;
    for (size_t line = gid; line < lines; line += all) {
        L.x = (int)(line % (size_t)w);
        L.base = line;
        ln_solve(&L, is3 ? d : h, win, glob);
    }
}
