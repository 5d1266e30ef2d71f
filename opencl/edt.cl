/*
 * edt.cl - Euclidean distance transforms (built with cl_khr_fp64).
 *
 * Exact: the separable method of native/cpu/edt.c, one work-item per image
 * line, with the same double-precision operations in the same order, so the
 * distances and nearest indices equal the CPU's bit for bit:
 *   A. along the outer axis (y in 2D, z in 3D): nearest background on the
 *      line by a forward then a backward sweep (edt_outer);
 *   B. (3D) along y: lower envelope of parabolas per column (edt_envelope, pass 1);
 *   C. along x: lower envelope per row, then the outputs (edt_envelope, pass 2).
 * The envelope's stack of parabolas lives in a scratch array laid out
 * line-interleaved (entry k of line l at k * nlines + l) so that neighbouring
 * work-items touch neighbouring addresses. The intersection abscissa of two
 * stacked parabolas is recomputed from them when needed (same operations,
 * same value) instead of being stored.
 *
 * Danielsson: IWPP propagation of nearest-background indices with a 32-bit
 * compare-and-swap (edt_dan_*), rounds driven by the host.
 */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF

#define NO_SITE (-1)

/* ---- pass A ------------------------------------------------------------ */
/* Line l (0 <= l < len) of `count` planes of `len` pixels: out[k*len + l]. */
__kernel void edt_outer(__global const pix_t *in, __global int *out, uint len, int count)
{
    uint l = (uint)get_global_id(0);
    if (l >= len) return;
    int prev = NO_SITE;
    for (int k = 0; k < count; ++k) {
        size_t i = (size_t)k * len + l;
        int v = (in[i] == (pix_t)0) ? k : prev;
        out[i] = v;
        prev = v;
    }
    int below = out[(size_t)(count - 1) * len + l];
    for (int k = count - 2; k >= 0; --k) {
        size_t i = (size_t)k * len + l;
        int cur = out[i], cand = below;
        int take = (cand != NO_SITE) & ((cur == NO_SITE) | (cand - k < k - cur));
        int r = take ? cand : cur;
        out[i] = r;
        below = r;
    }
}

/*
 * Pass A in parallel, for planes of few long lines (2D: len = width lines of
 * `count` = height pixels). The sequential sweeps above give, for pixel k,
 * "up" = the last background position <= k and "down" = the first >= k, and
 * keep up unless down is strictly closer. Lines are cut into segments of SEG
 * positions: edt_outer_seg finds each segment's first and last background
 * position, edt_outer_carry the last one before and the first one after each
 * segment, edt_outer_apply the result. Work-item g: line g % len, segment g / len.
 */
__kernel void edt_outer_seg(__global const pix_t *in, __global int2 *fl, uint len, int count,
                            int SEG, uint nseg)
{
    uint g = (uint)get_global_id(0);
    if (g >= len * nseg) return;
    uint l = g % len, sg = g / len;
    int k0 = (int)sg * SEG, k1 = min(k0 + SEG, count);
    int first = NO_SITE, last = NO_SITE;
    for (int k = k0; k < k1; ++k)
        if (in[(size_t)k * len + l] == (pix_t)0) {
            if (first == NO_SITE) first = k;
            last = k;
        }
    fl[(size_t)sg * len + l] = (int2)(first, last);
}

/* In place: .x = last background before the segment, .y = first after it. */
__kernel void edt_outer_carry(__global int2 *fl, uint len, uint nseg)
{
    uint l = (uint)get_global_id(0);
    if (l >= len) return;
    int up = NO_SITE;
    for (uint sg = 0; sg < nseg; ++sg) {
        size_t i = (size_t)sg * len + l;
        int2 f = fl[i];
        fl[i] = (int2)(up, f.x); /* .y temporarily: this segment's first */
        if (f.y != NO_SITE) up = f.y;
    }
    int down = NO_SITE;
    for (uint sg = nseg; sg-- > 0;) {
        size_t i = (size_t)sg * len + l;
        int2 f = fl[i];
        int first = f.y;
        fl[i] = (int2)(f.x, down);
        if (first != NO_SITE) down = first;
    }
}

__kernel void edt_outer_apply(__global const pix_t *in, __global const int2 *fl,
                              __global int *out, uint len, int count, int SEG, uint nseg)
{
    uint g = (uint)get_global_id(0);
    if (g >= len * nseg) return;
    uint l = g % len, sg = g / len;
    int k0 = (int)sg * SEG, k1 = min(k0 + SEG, count);
    int2 c = fl[(size_t)sg * len + l];
    int up = c.x;
    for (int k = k0; k < k1; ++k) {
        size_t i = (size_t)k * len + l;
        if (in[i] == (pix_t)0) up = k;
        out[i] = up;
    }
    int down = c.y;
    for (int k = k1 - 1; k >= k0; --k) {
        size_t i = (size_t)k * len + l;
        int cur = out[i];
        if (cur == k) down = k; /* a background pixel */
        int take = (down != NO_SITE) & ((cur == NO_SITE) | (down - k < k - cur));
        if (take) out[i] = down;
    }
}

/* Per plane z: out[z][x][y] = in[z][y][x] (w x h planes), 32 x 32 tiles through local memory. */
#define TR_T 32
__kernel void edt_transpose32(__global const uint *in, __global uint *out, int w, int h)
{
    __local uint tile[TR_T][TR_T + 1];
    int lx = (int)get_local_id(0), ly = (int)get_local_id(1);
    int bx = (int)get_group_id(0) * TR_T, by = (int)get_group_id(1) * TR_T;
    size_t plane = (size_t)get_global_id(2) * (size_t)w * (size_t)h;
    for (int r = ly; r < TR_T; r += (int)get_local_size(1)) {
        int x = bx + lx, y = by + r;
        if (x < w && y < h) tile[r][lx] = in[plane + (size_t)y * w + x];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int r = ly; r < TR_T; r += (int)get_local_size(1)) {
        int y = by + lx, x = bx + r;
        if (x < w && y < h) out[plane + (size_t)x * h + y] = tile[lx][r];
    }
}

/* The inverse direction for the outputs: out[z][y][x] = in[z][x][y], for 32- and 64-bit maps. */
#define EDT_UNTRANSPOSE(NAME, T)                                                              \
    __kernel void NAME(__global const T *in, __global T *out, int w, int h)                   \
    {                                                                                         \
        __local T tile[TR_T][TR_T + 1];                                                       \
        int lx = (int)get_local_id(0), ly = (int)get_local_id(1);                             \
        int by = (int)get_group_id(0) * TR_T, bx = (int)get_group_id(1) * TR_T;              \
        size_t plane = (size_t)get_global_id(2) * (size_t)w * (size_t)h;                      \
        for (int r = ly; r < TR_T; r += (int)get_local_size(1)) {                             \
            int y = by + lx, x = bx + r;                                                      \
            if (x < w && y < h) tile[r][lx] = in[plane + (size_t)x * h + y];                  \
        }                                                                                     \
        barrier(CLK_LOCAL_MEM_FENCE);                                                         \
        for (int r = ly; r < TR_T; r += (int)get_local_size(1)) {                             \
            int x = bx + lx, y = by + r;                                                      \
            if (x < w && y < h) out[plane + (size_t)y * w + x] = tile[lx][r];                 \
        }                                                                                     \
    }
EDT_UNTRANSPOSE(edt_untranspose32, uint)
EDT_UNTRANSPOSE(edt_untranspose64, ulong)
#undef EDT_UNTRANSPOSE

/* ---- passes B and C ----------------------------------------------------- */
/*
 * f of site s on a line: pass 1 (3D, along y of column (x, z)):
 *   ((z - nz[s]) * hb)^2; pass 2 in 2D (row y): ((y - ny[s]) * ha)^2;
 *   pass 2 in 3D (row (y, z)): ((z - nz[s]) * hb)^2 + ((y - ny[s]) * ha)^2.
 * sa/sb: the site maps read at base + s * step.
 */
typedef struct line_ctx {
    __global const int *sa; /* ny (pass 2) or nz (pass 1) */
    __global const int *sb; /* nz (pass 2, 3D) or NULL */
    size_t base;
    size_t step;
    int ca, cb;
    double ha, hb;
} line_ctx;

inline double f_at(const line_ctx *L, int s)
{
    size_t i = L->base + (size_t)s * L->step;
    int a = L->sa[i];
    if (a == NO_SITE) return INFINITY;
    double ta = (double)(L->ca - a) * L->ha;
    if (L->sb) {
        double tb = (double)(L->cb - L->sb[i]) * L->hb;
        return tb * tb + ta * ta;
    }
    return ta * ta;
}

/* Builds the envelope of line `line` (n pixels) in v; returns the top index or -1. */
inline int envelope_build(const line_ctx *L, int n, double h, __global int *v, size_t nlines,
                          size_t line)
{
    const double h2 = h * h;
    int k = -1;
    for (int q = 0; q < n; ++q) {
        const double fq = f_at(L, q);
        if (fq == INFINITY) continue;
        while (k >= 0) {
            if (k == 0) break;
            const int p = v[(size_t)k * nlines + line];
            double num = (fq - f_at(L, p)) + h2 * (double)((long)(q - p) * (long)(q + p));
            double den = 2.0 * h2 * (double)(q - p);
            /* the abscissa where p overtook its predecessor pp */
            const int pp = v[(size_t)(k - 1) * nlines + line];
            double zn = (f_at(L, p) - f_at(L, pp)) + h2 * (double)((long)(p - pp) * (long)(p + pp));
            double zd = 2.0 * h2 * (double)(p - pp);
            if (num * zd > zn * den) break;
            --k;
        }
        ++k;
        v[(size_t)k * nlines + line] = q;
    }
    return k;
}

/*
 * pass 1 (3D, lines = columns (x, z), n = h): ny_out, nz_out from nz.
 * pass 2 (lines = rows (y, z), n = w): dist and (if want_nearest) nearest from ny (and nz).
 */
__kernel void edt_envelope(int pass, int w, int h, int d, __global const int *ny,
                           __global const int *nz, __global int *ny_out, __global int *nz_out,
                           __global float *dist, __global long *nearest, int want_nearest,
                           __global int *v, double hx, double hy, double hz)
{
    size_t line = get_global_id(0);
    line_ctx L;
    int n;
    double hs;
    size_t nlines;
    if (pass == 1) {
        nlines = (size_t)w * (size_t)d;
        if (line >= nlines) return;
        int x = (int)(line % (size_t)w), z = (int)(line / (size_t)w);
        L.sa = nz;
        L.sb = 0;
        L.base = (size_t)x + (size_t)w * (size_t)h * (size_t)z;
        L.step = (size_t)w;
        L.ca = z;
        L.cb = 0;
        L.ha = hz;
        L.hb = 0.0;
        n = h;
        hs = hy;
    } else {
        nlines = (size_t)h * (size_t)d;
        if (line >= nlines) return;
        int y = (int)(line % (size_t)h), z = (int)(line / (size_t)h);
        L.sa = ny;
        L.sb = d > 1 ? nz : 0;
        if (pass == 3) { /* maps and outputs transposed per plane: [z][x][y] */
            L.base = (size_t)z * (size_t)w * (size_t)h + (size_t)y;
            L.step = (size_t)h;
        } else {
            L.base = (size_t)w * line;
            L.step = 1;
        }
        L.ca = y;
        L.cb = z;
        L.ha = hy;
        L.hb = hz;
        n = w;
        hs = hx;
    }
    const int top = envelope_build(&L, n, hs, v, nlines, line);
    if (top < 0) {
        for (int i = 0; i < n; ++i) {
            size_t o = L.base + (size_t)i * L.step;
            if (pass == 1) {
                ny_out[o] = NO_SITE;
                nz_out[o] = NO_SITE;
            } else {
                dist[o] = INFINITY;
                if (want_nearest) nearest[o] = -1;
            }
        }
        return;
    }
    int k = 0;
    int p = v[line];
    double fp = f_at(&L, p);
    for (int i = 0; i < n; ++i) {
        double t = (double)(i - p) * hs;
        double cur = fp + t * t;
        while (k < top) {
            const int pn = v[(size_t)(k + 1) * nlines + line];
            double tn = (double)(i - pn) * hs;
            double fpn = f_at(&L, pn);
            double nxt = fpn + tn * tn;
            if (nxt > cur) break;
            ++k;
            p = pn;
            fp = fpn;
            cur = nxt;
        }
        size_t o = L.base + (size_t)i * L.step;
        size_t s = L.base + (size_t)p * L.step;
        if (pass == 1) {
            ny_out[o] = p;
            nz_out[o] = nz[s];
        } else {
            dist[o] = (float)sqrt(cur);
            if (want_nearest) {
                long sz = d > 1 ? (long)nz[s] : 0;
                nearest[o] = (long)p + (long)w * ((long)ny[s] + (long)h * sz);
            }
        }
    }
}

/* ---- Danielsson by propagation ------------------------------------------ */
#define NO_INDEX 0xffffffffu

inline double site_d2(uint s, int3 c, int w, int h, double hx, double hy, double hz)
{
    int3 sc = coords_of(s, w, h);
    double tz = (double)(c.z - sc.z) * hz;
    double ty = (double)(c.y - sc.y) * hy;
    double tx = (double)(c.x - sc.x) * hx;
    return (tz * tz + ty * ty) + tx * tx;
}

/* Sites: background pixels are their own site, others none; contour pixels seed the list. */
__kernel void edt_dan_init(__global const pix_t *in, __global uint *vr, int w, int h, int d,
                           __constant int4 *offs, int noffs, uint n, __global uint *list,
                           __global volatile uint *count)
{
    uint p = (uint)get_global_id(0);
    if (p >= n) return;
    int bg = in[p] == (pix_t)0;
    vr[p] = bg ? p : NO_INDEX;
    if (!bg) return;
    int3 c = coords_of(p, w, h);
    for (int k = 0; k < noffs; ++k) {
        int4 o = offs[k];
        if (inside(c, o, w, h, d) && in[p + (uint)o.w] != (pix_t)0) {
            list[atomic_inc(count)] = p;
            return;
        }
    }
}

/* One round: every listed pixel offers its site to its neighbours; a
 * neighbour that takes it (strictly closer, by compare-and-swap) is listed for
 * the next round, at most once per round (mark holds the round number). */
__kernel void edt_dan_round(__global uint *vr, int w, int h, int d, __constant int4 *offs,
                            int noffs, __global const uint *in_list, uint in_n,
                            __global uint *out_list, __global volatile uint *out_n,
                            __global volatile uint *mark, uint round, double hx, double hy,
                            double hz)
{
    uint i = (uint)get_global_id(0);
    if (i >= in_n) return;
    uint p = in_list[i];
    uint s = ((__global volatile uint *)vr)[p];
    int3 c = coords_of(p, w, h);
    for (int k = 0; k < noffs; ++k) {
        int4 o = offs[k];
        if (!inside(c, o, w, h, d)) continue;
        uint q = p + (uint)o.w;
        int3 cq = c + o.xyz;
        double dn = site_d2(s, cq, w, h, hx, hy, hz);
        uint cur = ((__global volatile uint *)vr)[q];
        while (cur == NO_INDEX || dn < site_d2(cur, cq, w, h, hx, hy, hz)) {
            uint old = atomic_cmpxchg((__global volatile uint *)&vr[q], cur, s);
            if (old == cur) {
                if (atomic_xchg(&mark[q], round) != round) out_list[atomic_inc(out_n)] = q;
                break;
            }
            cur = old;
        }
    }
}

/* Distances (same arithmetic as the exact method) and nearest indices from the sites. */
__kernel void edt_dan_final(__global const uint *vr, __global float *dist, __global long *nearest,
                            int want_nearest, int w, int h, uint n, double hx, double hy, double hz)
{
    uint p = (uint)get_global_id(0);
    if (p >= n) return;
    uint s = vr[p];
    if (s == NO_INDEX) {
        dist[p] = INFINITY;
        if (want_nearest) nearest[p] = -1;
        return;
    }
    dist[p] = (float)sqrt(site_d2(s, coords_of(p, w, h), w, h, hx, hy, hz));
    if (want_nearest) nearest[p] = (long)s;
}
