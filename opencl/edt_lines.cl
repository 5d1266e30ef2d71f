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
#define LNX_G 128     /* edt_ln_x: work-items per row (4 pixels each: segments of 512) */
#define LNX_SEGS 128  /* edt_ln_x: most segments of a row (rows up to 65536) */


/* Pass X: a group of LNX_G work-items takes one row, in segments of 4 LNX_G pixels (each
 * work-item 4 neighbouring ones). In a segment, the last background up to each work-item's
 * pixels (a max scan from the left) and the first from them on (a min scan from the right) are
 * scans over the group in local memory, with the rows' earlier (later) segments carried in: for
 * rows longer than one segment, a first sweep keeps each segment's first and last background.
 * Each pixel takes the nearer of the two (ties: the left one). One read of the row (two when
 * it is longer than a segment), one write: OpenCL 1.2 has no ballots (CUDA's pass X). */
inline void lnx_bounds(__global const pix_t *p, int x0, int w, int *first, int *last, int bg[4])
{
    *first = LN_INF, *last = -1;
    for (int j = 0; j < 4; ++j) {
        const int x = x0 + j;
        bg[j] = x < w && p[x] == (pix_t)0;
        if (bg[j]) {
            *first = min(*first, x);
            *last = x;
        }
    }
}

__kernel void edt_ln_x(__global const pix_t *in, __global ushort *sx, int w, uint rows)
{
    __local int sa[LNX_G], sb[LNX_G];
    __local int seg_first[LNX_SEGS], seg_last[LNX_SEGS];
    const int li = (int)get_local_id(0);
    const uint row = (uint)get_group_id(0);
    if (row >= rows) return; /* the whole group */
    __global const pix_t *p = in + (size_t)row * (size_t)w;
    __global ushort *o = sx + (size_t)row * (size_t)w;
    const int S = 4 * LNX_G, nseg = (w + S - 1) / S;
    int bg[4], first, last;
    if (nseg > 1) {
        for (int s = 0; s < nseg; ++s) {
            lnx_bounds(p, s * S + 4 * li, w, &first, &last, bg);
            sa[li] = last;
            sb[li] = first;
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int h = LNX_G / 2; h > 0; h >>= 1) {
                if (li < h) {
                    sa[li] = max(sa[li], sa[li + h]);
                    sb[li] = min(sb[li], sb[li + h]);
                }
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            if (li == 0) {
                seg_last[s] = sa[0];
                seg_first[s] = sb[0];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    int carry_l = -1;
    for (int s = 0; s < nseg; ++s) {
        int carry_r = LN_INF;
        for (int t = s + 1; t < nseg && carry_r == LN_INF; ++t) carry_r = seg_first[t];
        const int x0 = s * S + 4 * li;
        lnx_bounds(p, x0, w, &first, &last, bg);
        sa[li] = last;
        sb[li] = first;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int h = 1; h < LNX_G; h <<= 1) {
            const int a = li >= h ? sa[li - h] : -1, b = li + h < LNX_G ? sb[li + h] : LN_INF;
            barrier(CLK_LOCAL_MEM_FENCE);
            sa[li] = max(sa[li], a);
            sb[li] = min(sb[li], b);
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        int left = max(carry_l, li > 0 ? sa[li - 1] : -1);
        int right[4];
        int r = min(carry_r, li + 1 < LNX_G ? sb[li + 1] : LN_INF);
        for (int j = 3; j >= 0; --j) {
            if (bg[j]) r = x0 + j;
            right[j] = r;
        }
        for (int j = 0; j < 4; ++j) {
            const int x = x0 + j;
            if (bg[j]) left = x;
            const int rr = right[j];
            const int c = rr != LN_INF && (left < 0 || rr - x < x - left) ? rr : left;
            if (x < w) o[x] = (ushort)(c < 0 ? LN_NONE : c);
        }
        carry_l = max(carry_l, sa[LNX_G - 1]);
        barrier(CLK_LOCAL_MEM_FENCE); /* sa, sb are the next segment's */
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

/* position p gets site `site` at squared distance d2 (site < 0: the line has no site) */
inline void ln_put(const ln_line *L, int p, int site, int d2)
{
    const size_t o = L->base + (size_t)p * L->step;
    if (L->kind == 0) {
        L->f2[o] = site < 0 ? LN_INF : d2;
        if (L->want) L->sy[o] = (ushort)(site < 0 ? LN_NONE : site);
        return;
    }
    L->dist[o] = site < 0 ? INFINITY : (float)sqrt((double)d2);
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
    for (int u = 0; u < n; ++u) {
        const int fu = ln_f(L, u);
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
