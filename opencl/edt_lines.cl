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
#define LN_TILE 64    /* edt_ln_x: rows per group, and pixels per tile of a row */

/* Pass X: a group of LN_TILE work-items takes LN_TILE consecutive rows. Tiles of LN_TILE pixels
 * of those rows pass through local memory, loaded and stored a row segment at a time
 * (coalesced); each work-item sweeps its own row in them, left to right storing the last
 * background so far, then right to left choosing the nearer of that and the first background
 * to the right (ties: the left one). */
__kernel void edt_ln_x(__global const pix_t *in, __global ushort *sx, int w, uint rows)
{
    __local uchar bg[LN_TILE][LN_TILE + 1];
    __local ushort res[LN_TILE][LN_TILE + 1];
    const int li = (int)get_local_id(0);
    const uint r0 = (uint)get_group_id(0) * LN_TILE;
    const int mine = r0 + (uint)li < rows;
    int left = -1, right = -1;
    for (int pass = 0; pass < 2; ++pass) {
        const int tiles = (w + LN_TILE - 1) / LN_TILE;
        for (int ti = 0; ti < tiles; ++ti) {
            const int x0 = (pass == 0 ? ti : tiles - 1 - ti) * LN_TILE, tw = min(LN_TILE, w - x0);
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int r = 0; r < LN_TILE; ++r)
                if (r0 + (uint)r < rows && li < tw) {
                    const size_t o = (size_t)(r0 + (uint)r) * (size_t)w + (size_t)(x0 + li);
                    bg[r][li] = in[o] == (pix_t)0;
                    if (pass == 1) res[r][li] = sx[o];
                }
            barrier(CLK_LOCAL_MEM_FENCE);
            if (mine && pass == 0) {
                for (int j = 0; j < tw; ++j) {
                    if (bg[li][j]) left = x0 + j;
                    res[li][j] = (ushort)(left < 0 ? LN_NONE : left);
                }
            } else if (mine) {
                for (int j = tw - 1; j >= 0; --j) {
                    const int x = x0 + j, l = res[li][j];
                    if (bg[li][j]) right = x;
                    if (right >= 0 && (l == LN_NONE || right - x < x - l)) res[li][j] = (ushort)right;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int r = 0; r < LN_TILE; ++r)
                if (r0 + (uint)r < rows && li < tw) sx[(size_t)(r0 + (uint)r) * (size_t)w + (size_t)(x0 + li)] = res[r][li];
        }
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
