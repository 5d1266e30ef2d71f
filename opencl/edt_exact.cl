/*
 * edt_exact.cl - the exact Euclidean distance transform (built with cl_khr_fp64; the
 * Danielsson method is in edt_danielsson.cl, appended after this file).
 *
 * Exact: the separable method of native/cpu/edt.c with the same double-precision operations in
 * the same order (FP_CONTRACT OFF: nothing is fused), so the distances and nearest indices equal
 * the CPU's bit for bit. The passes follow cuda/edt_exact.cu:
 *   A. along the outer axis (y in 2D, z in 3D): nearest background on the line, one work-item
 *      per (line, segment of SEG planes), coalesced: edt_pass_a1 records each segment's first
 *      and last background plane, edt_pass_a2 sweeps its segment forward and backward with the
 *      nearest background above and below taken from those summaries;
 *   B. (3D) along y, C. along x: wherever a line fits in local memory, merged band envelopes
 *      (edt_cols_env, one work-group per tile of up to 32 columns; edt_rows_env, one work-group
 *      per row; at the end of this file): the same work whatever the picture. The older kernels
 *      remain for lines that do not fit and for comparisons (IWPP_OCL_EDT_ROWS/COLS=banded):
 *      B. edt_cols, banded envelopes in local memory with a per-pixel query over the bands that
 *      can still hold a closer site; columns too tall for local memory: one work-item per
 *      (x, z) column (edt_envelope, pass 1), the stack of parabolas in a line-interleaved global
 *      scratch (entry k of line l at k * nlines + l), an intersection re-formed from the two
 *      parabolas when needed (same operations, same value) instead of being stored;
 *      C. edt_rows2 / edt_rows3, the same banded query on rows (see the comment above rb_build);
 *      rows too wide for local memory: the banded method with its band tables in global memory,
 *      a row over several work-groups (edt_wide_build, then edt_wide_query); only where a
 *      64-item group cannot run, one work-item per row on planes transposed to [z][x][y]
 *      (edt_transpose32, edt_envelope pass 3, then edt_untranspose32/64).
 * 3D images with unit spacing take the lines path instead (edt_lines.cl, appended after
 * edt_danielsson.cl): passes x, y, z, one work-item per line, in integers.
 *
 * Size: about 1150 lines: every kernel of the exact transform in one program, because OpenCL
 * builds a program per source and the passes share their envelope helpers.
 */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF

#define NO_SITE (-1)

/* ---- pass A ------------------------------------------------------------ */
/*
 * `count` planes of `len` contiguous lines (2D: len = w, count = h; 3D: len = w*h, count = d):
 * out[k*len + l] = the nearest k' with in[k'*len + l] background (ties: the smaller k', as the
 * CPU's sweeps), or NO_SITE. Work-item t: line t % len, segment t / len of SEG planes.
 * fl[t] = (first, last) background plane of the segment, NO_SITE if none.
 */
/* The input sent as bits of "!= 0" (backend.c's upload_nonzero: pixel 8k+j at bit j of byte k)
 * as one uchar 0/1 per pixel: the transform reads nothing else. */
__kernel void edt_bits_expand(__global const uchar *bits, __global uchar *out, ulong n)
{
    const ulong k = get_global_id(0);
    if (8 * k >= n) return;
    const uint m = bits[k];
    if (8 * k + 8 <= n) {
        vstore8((uchar8)((uchar)(m & 1u), (uchar)(m >> 1 & 1u), (uchar)(m >> 2 & 1u), (uchar)(m >> 3 & 1u),
                         (uchar)(m >> 4 & 1u), (uchar)(m >> 5 & 1u), (uchar)(m >> 6 & 1u), (uchar)(m >> 7 & 1u)),
                0, out + 8 * k);
        return;
    }
    for (ulong j = 0; 8 * k + j < n; ++j) out[8 * k + j] = (uchar)(m >> j & 1u);
}

__kernel void edt_pass_a1(__global const pix_t *in, __global int2 *fl, uint len, int count,
                          int SEG, uint nseg)
{
    uint t = (uint)get_global_id(0);
    if (t >= len * nseg) return;
    uint l = t % len, sg = t / len;
    int k0 = (int)sg * SEG, k1 = min(k0 + SEG, count);
    int first = NO_SITE, last = NO_SITE;
    for (int k = k0; k < k1; ++k)
        if (in[(size_t)k * len + l] == (pix_t)0) {
            if (first == NO_SITE) first = k;
            last = k;
        }
    fl[t] = (int2)(first, last);
}

/* The sweeps of segment t / len of line t % len; the background planes beyond the segment come
 * from the nearest segments above and below that have one (fl is unused when nseg == 1). */
__kernel void edt_pass_a2(__global const pix_t *in, __global const int2 *fl, __global int *out,
                          uint len, int count, int SEG, uint nseg)
{
    uint t = (uint)get_global_id(0);
    if (t >= len * nseg) return;
    uint l = t % len, sg = t / len;
    int k0 = (int)sg * SEG, k1 = min(k0 + SEG, count);
    int up = NO_SITE, down = NO_SITE;
    for (uint s = sg; s-- > 0 && up == NO_SITE;) up = fl[(size_t)s * len + l].y;
    for (uint s = sg + 1; s < nseg && down == NO_SITE; ++s) down = fl[(size_t)s * len + l].x;
    for (int k = k0; k < k1; ++k) {
        size_t i = (size_t)k * len + l;
        if (in[i] == (pix_t)0) up = k;
        out[i] = up;
    }
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

/* ---- one work-item per line: pass B, and pass C's fallback --------------- */
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
/* Whether site q's parabola (value fq) hides site p on the lower envelope, p's predecessor
 * there being pp: q overtakes p no later than p overtook pp. The CPU's expression, operation
 * for operation (native/cpu/edt.c), so that every backend keeps the same sites. */
inline int env_hides(double fq, int q, double fp, int p, double fpp, int pp, double h2)
{
    const double num = (fq - fp) + h2 * (double)((long)(q - p) * (long)(q + p));
    const double den = 2.0 * h2 * (double)(q - p);
    const double zn = (fp - fpp) + h2 * (double)((long)(p - pp) * (long)(p + pp));
    const double zd = 2.0 * h2 * (double)(p - pp);
    return !(num * zd > zn * den);
}

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
            const int pp = v[(size_t)(k - 1) * nlines + line];
            if (!env_hides(fq, q, f_at(L, p), p, f_at(L, pp), pp, h2)) break;
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

/* ---- pass C, one work-group per row ------------------------------------- */
/*
 * The row's f values (the squared distance to each column's site, formed as on the CPU) sit in
 * local memory: in 2D as the site's row cy (f = ((y - cy) * hy)^2 is re-formed when needed, which
 * halves the bytes so that rows of ~9000 pixels fit in 48 KiB), in 3D as the double f itself.
 * The row is cut into bands of RB_S sites; each work-item builds the lower envelope of a band's
 * parabolas (Felzenszwalb-Huttenlocher, the CPU's intersection test, keeping only the sites'
 * offsets in the band: the intersections are re-formed from f). Then every pixel x queries its
 * own band's envelope and the bands beside it, outwards, while a band can still hold a closer
 * site: a band whose smallest f plus the squared gap to x (rounded as d2 itself is, and rounding
 * is monotone) is not below the best d2 so far is skipped, and so are whole superbands of RB_SB
 * bands; a side's scan stops once the squared gap alone reaches the best d2. Each candidate's d2
 * is f[p] + ((x - p) * hx)^2, the CPU's expression, and the smallest is kept: the CPU's envelope
 * gives the exact minimum of the same expression whenever the arithmetic is exact (unit spacing,
 * for example), so the distances are equal bit for bit.
 * Local layout (separate arguments): bmin[NB], smin[NSB] (doubles), the f values with one padding
 * word after every RB_S (so that the work-items building their bands read distinct banks),
 * cnt[NB], and the stacks interleaved: entry k of band b at stk[k * NB + b].
 */
#define RB_S 32
#define RB_SB 32
#define RB_PAD(x) ((x) + ((x) >> 5))

/* f of column p: is3 selects the stored double (3D) or the stored site row (2D). */
inline double rb_f(__local const int *si, __local const double *sd, const int is3, int p, int y,
                   double hy)
{
    if (is3) return sd[RB_PAD(p)];
    const int cy = si[RB_PAD(p)];
    if (cy == NO_SITE) return INFINITY;
    const double ty = (double)(y - cy) * hy;
    return ty * ty;
}

inline double rb_eval(__local const int *si, __local const double *sd, const int is3, int p,
                      int x, int y, double hx, double hy)
{
    const double t = (double)(x - p) * hx;
    return rb_f(si, sd, is3, p, y, hy) + t * t;
}

/* Envelope of the finite f[q], lo <= q < hi: offsets q - lo into st[k * ss]; returns their
 * count, *mn = the smallest f (INFINITY if none). */
inline int rb_build(__local const int *si, __local const double *sd, const int is3, int lo, int hi,
                    int y, double hy, double h2, __local uchar *st, int ss, double *mn)
{
    int k = -1;
    double m = INFINITY;
    for (int q = lo; q < hi; ++q) {
        const double fq = rb_f(si, sd, is3, q, y, hy);
        if (fq == INFINITY) continue;
        m = fq < m ? fq : m;
        while (k >= 1) {
            const int p = lo + st[k * ss], pp = lo + st[(k - 1) * ss];
            const double fp = rb_f(si, sd, is3, p, y, hy), fpp = rb_f(si, sd, is3, pp, y, hy);
            if (!env_hides(fq, q, fp, p, fpp, pp, h2)) break;
            --k;
        }
        ++k;
        st[k * ss] = (uchar)(q - lo);
    }
    *mn = m;
    return k + 1;
}

/* Band b's envelope at x (its values along the stack are unimodal): improves *best, *bi. */
inline void rb_query(__local const int *si, __local const double *sd, const int is3,
                     __local const uchar *stk, __local const uchar *cnt, int NB, int b, int x,
                     int y, double hx, double hy, double *best, int *bi)
{
    const int m = cnt[b];
    if (m == 0) return;
    __local const uchar *st = stk + b;
    const int lo = b * RB_S;
    int a = 0, c = m - 1;
    while (a < c) {
        const int mid = (a + c) >> 1;
        const double g0 = rb_eval(si, sd, is3, lo + st[mid * NB], x, y, hx, hy);
        const double g1 = rb_eval(si, sd, is3, lo + st[(mid + 1) * NB], x, y, hx, hy);
        if (g1 < g0)
            a = mid + 1;
        else
            c = mid;
    }
    const int p = lo + st[a * NB];
    const double g = rb_eval(si, sd, is3, p, x, y, hx, hy);
    if (g < *best) {
        *best = g;
        *bi = p;
    }
}

/* Nearest site of pixel x of the line: d2 in *best, the site's position in *bi (-1 if none). */
inline void rb_pixel(__local const int *si, __local const double *sd, const int is3,
                     __local const double *bmin, __local const double *smin,
                     __local const uchar *cnt, __local const uchar *stk, int NB, int x, int y,
                     double hx, double hy, double *best, int *bi)
{
    *best = INFINITY;
    *bi = -1;
    const int b0 = x / RB_S;
    rb_query(si, sd, is3, stk, cnt, NB, b0, x, y, hx, hy, best, bi);
    for (int b = b0 - 1; b >= 0;) {
        const double t = (double)(x - (b * RB_S + RB_S - 1)) * hx;
        const double t2 = t * t;
        if (!(t2 < *best)) break;
        if ((b % RB_SB) == RB_SB - 1 && !(smin[b / RB_SB] + t2 < *best)) {
            b -= RB_SB;
            continue;
        }
        if (bmin[b] + t2 < *best) rb_query(si, sd, is3, stk, cnt, NB, b, x, y, hx, hy, best, bi);
        --b;
    }
    for (int b = b0 + 1; b < NB;) {
        const double t = (double)(b * RB_S - x) * hx;
        const double t2 = t * t;
        if (!(t2 < *best)) break;
        if ((b % RB_SB) == 0 && !(smin[b / RB_SB] + t2 < *best)) {
            b += RB_SB;
            continue;
        }
        if (bmin[b] + t2 < *best) rb_query(si, sd, is3, stk, cnt, NB, b, x, y, hx, hy, best, bi);
        ++b;
    }
}

inline void rows_body(__global const int *ny, __global const int *nz, __global float *dist,
                      __global long *nearest, int want_nearest, int w, int h, uint rows,
                      double hx, double hy, double hz, __local double *bmin,
                      __local double *smin, __local int *si, __local double *sd,
                      __local uchar *cnt, __local uchar *stk, const int is3)
{
    const int W = w, NB = (W + RB_S - 1) / RB_S, NSB = (NB + RB_SB - 1) / RB_SB;
    const int lid = (int)get_local_id(0), lsz = (int)get_local_size(0);
    const double h2 = hx * hx;
    for (uint row = (uint)get_group_id(0); row < rows; row += (uint)get_num_groups(0)) {
        const size_t base = (size_t)row * (size_t)W;
        const int y = (int)(row % (uint)h), z = (int)(row / (uint)h);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int x = lid; x < W; x += lsz) {
            const int cy = ny[base + x];
            if (is3) {
                double f = INFINITY;
                if (cy != NO_SITE) {
                    const double tz = (double)(z - nz[base + x]) * hz;
                    const double ty = (double)(y - cy) * hy;
                    f = tz * tz + ty * ty;
                }
                sd[RB_PAD(x)] = f;
            } else {
                si[RB_PAD(x)] = cy;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int b = lid; b < NB; b += lsz) {
            const int lo = b * RB_S, hi = min(lo + RB_S, W);
            double mn;
            cnt[b] = (uchar)rb_build(si, sd, is3, lo, hi, y, hy, h2, stk + b, NB, &mn);
            bmin[b] = mn;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int s = lid; s < NSB; s += lsz) {
            double m = INFINITY;
            const int e = min((s + 1) * RB_SB, NB);
            for (int b = s * RB_SB; b < e; ++b) m = bmin[b] < m ? bmin[b] : m;
            smin[s] = m;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int x = lid; x < W; x += lsz) {
            double best;
            int bi;
            rb_pixel(si, sd, is3, bmin, smin, cnt, stk, NB, x, y, hx, hy, &best, &bi);
            dist[base + x] = (float)sqrt(best);
            if (want_nearest) {
                if (bi < 0) {
                    nearest[base + x] = -1;
                } else {
                    const long sy = is3 ? (long)ny[base + bi] : (long)si[RB_PAD(bi)];
                    const long sz = is3 ? (long)nz[base + bi] : 0;
                    nearest[base + x] = (long)bi + (long)W * (sy + (long)h * sz);
                }
            }
        }
    }
}

/* 2D rows: si holds the site rows (sd unused, give it 8 bytes). */
__kernel void edt_rows2(__global const int *ny, __global float *dist, __global long *nearest,
                        int want_nearest, int w, int h, uint rows, double hx, double hy,
                        __local double *bmin, __local double *smin, __local int *si,
                        __local uchar *cnt, __local uchar *stk)
{
    rows_body(ny, ny, dist, nearest, want_nearest, w, h, rows, hx, hy, 0.0, bmin, smin, si,
              bmin, cnt, stk, 0);
}

/* 3D rows (y, z) of the maps ny, nz: sd holds f. */
__kernel void edt_rows3(__global const int *ny, __global const int *nz, __global float *dist,
                        __global long *nearest, int want_nearest, int w, int h, uint rows,
                        double hx, double hy, double hz, __local double *bmin,
                        __local double *smin, __local double *sd, __local uchar *cnt,
                        __local uchar *stk)
{
    rows_body(ny, nz, dist, nearest, want_nearest, w, h, rows, hx, hy, hz, bmin, smin,
              (__local int *)sd, sd, cnt, stk, 1);
}

/* ---- pass C for rows too wide for local memory --------------------------- */
/*
 * The banded method of rows_body with the band tables in global memory, a row split over
 * several work-groups and two kernels:
 *   edt_wide_build: one work-group of WB_BANDS work-items per WB_BANDS consecutive bands of a
 *     row; the group's f values go to local memory (coalesced loads), each work-item builds its
 *     band's envelope exactly as rb_build does (absolute positions, so the same intersection
 *     arithmetic), then the group writes the band's site count, stack (offsets within the band)
 *     and smallest f, and the smallest f of each of its superbands (WB_BANDS is a multiple of
 *     RB_SB, so a superband never straddles two groups);
 *   edt_wide_query: one work-item per pixel, rb_pixel's scan over its own band and the bands
 *     beside it that can still hold a closer site, reading f from the site maps (re-formed with
 *     the operations rows_body uses to store it, so the same value) and the band tables from
 *     global memory.
 * Tables of row r (NB bands, NSB superbands): wcnt[r*NB + b], wstk[(r*NB + b)*RB_S + k],
 * wmin[r*NB + b], and the superband minima at wmin[rows*NB + r*NSB + s].
 */
#define WB_BANDS 64

__kernel void edt_wide_build(__global const int *ny, __global const int *nz, __global uchar *wcnt,
                             __global uchar *wstk, __global double *wmin, int w, int h, uint rows,
                             double hx, double hy, double hz, int is3, __local double *lf,
                             __local uchar *lst, __local double *lmin)
{
    const int W = w, NB = (W + RB_S - 1) / RB_S, NSB = (NB + RB_SB - 1) / RB_SB;
    const int gpr = (NB + WB_BANDS - 1) / WB_BANDS;
    const int lid = (int)get_local_id(0);
    const double h2 = hx * hx;
    __local int *li = (__local int *)lf;
    __local double *ld = lf;
    const ulong items = (ulong)rows * (ulong)gpr;
    for (ulong t = get_group_id(0); t < items; t += get_num_groups(0)) {
        const uint row = (uint)(t / (ulong)gpr);
        const int chunk = (int)(t % (ulong)gpr);
        const int b0 = chunk * WB_BANDS, x0 = b0 * RB_S, x1 = min(x0 + WB_BANDS * RB_S, W);
        const size_t base = (size_t)row * (size_t)W;
        const int y = (int)(row % (uint)h), z = (int)(row / (uint)h);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int x = x0 + lid; x < x1; x += WB_BANDS) {
            const int cy = ny[base + x];
            if (is3) {
                double f = INFINITY;
                if (cy != NO_SITE) {
                    const double tz = (double)(z - nz[base + x]) * hz;
                    const double ty = (double)(y - cy) * hy;
                    f = tz * tz + ty * ty;
                }
                ld[RB_PAD(x - x0)] = f;
            } else {
                li[RB_PAD(x - x0)] = cy;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const int b = b0 + lid;
        int m = 0;
        double mn = INFINITY;
        if (b < NB) {
            /* rb_build over absolute positions lo .. hi-1, f read at local index q - x0 */
            const int lo = b * RB_S, hi = min(lo + RB_S, W);
            __local uchar *st = lst + lid;
            int k = -1;
            for (int q = lo; q < hi; ++q) {
                const double fq = rb_f(li, ld, is3, q - x0, y, hy);
                if (fq == INFINITY) continue;
                mn = fq < mn ? fq : mn;
                while (k >= 1) {
                    const int p = lo + st[k * WB_BANDS], pp = lo + st[(k - 1) * WB_BANDS];
                    const double fp = rb_f(li, ld, is3, p - x0, y, hy);
                    const double fpp = rb_f(li, ld, is3, pp - x0, y, hy);
                    if (!env_hides(fq, q, fp, p, fpp, pp, h2)) break;
                    --k;
                }
                ++k;
                st[k * WB_BANDS] = (uchar)(q - lo);
            }
            m = k + 1;
            const size_t gb = (size_t)row * (size_t)NB + (size_t)b;
            wcnt[gb] = (uchar)m;
            wmin[gb] = mn;
        }
        lmin[lid] = mn;
        barrier(CLK_LOCAL_MEM_FENCE);
        /* stacks out, RB_S bytes per band, consecutive work-items on consecutive bytes */
        const int nbh = min(WB_BANDS, NB - b0);
        __global uchar *gst = wstk + ((size_t)row * (size_t)NB + (size_t)b0) * RB_S;
        for (int i = lid; i < nbh * RB_S; i += WB_BANDS)
            gst[i] = lst[(i % RB_S) * WB_BANDS + i / RB_S];
        if (lid < WB_BANDS / RB_SB) {
            const int sb = b0 / RB_SB + lid;
            if (sb < NSB) {
                double sm = INFINITY;
                for (int j = lid * RB_SB; j < (lid + 1) * RB_SB; ++j)
                    sm = lmin[j] < sm ? lmin[j] : sm;
                wmin[(size_t)rows * (size_t)NB + (size_t)row * (size_t)NSB + (size_t)sb] = sm;
            }
        }
    }
}

/* f of column p of the row at `base` (rows_body's stored value, re-formed). */
inline double wq_f(__global const int *ny, __global const int *nz, const int is3, size_t base,
                   int p, int y, int z, double hy, double hz)
{
    const int cy = ny[base + p];
    if (cy == NO_SITE) return INFINITY;
    const double ty = (double)(y - cy) * hy;
    if (is3) {
        const double tz = (double)(z - nz[base + p]) * hz;
        return tz * tz + ty * ty;
    }
    return ty * ty;
}

inline void wq_band(__global const int *ny, __global const int *nz, const int is3, size_t base,
                    __global const uchar *wcnt, __global const uchar *wstk, size_t rb, int b,
                    int x, int y, int z, double hx, double hy, double hz, double *best, int *bi)
{
    const int m = wcnt[rb + (size_t)b];
    if (m == 0) return;
    __global const uchar *st = wstk + (rb + (size_t)b) * RB_S;
    const int lo = b * RB_S;
    int a = 0, c = m - 1;
    while (a < c) {
        const int mid = (a + c) >> 1;
        const int p0 = lo + st[mid], p1 = lo + st[mid + 1];
        const double t0 = (double)(x - p0) * hx, t1 = (double)(x - p1) * hx;
        const double g0 = wq_f(ny, nz, is3, base, p0, y, z, hy, hz) + t0 * t0;
        const double g1 = wq_f(ny, nz, is3, base, p1, y, z, hy, hz) + t1 * t1;
        if (g1 < g0)
            a = mid + 1;
        else
            c = mid;
    }
    const int p = lo + st[a];
    const double t = (double)(x - p) * hx;
    const double g = wq_f(ny, nz, is3, base, p, y, z, hy, hz) + t * t;
    if (g < *best) {
        *best = g;
        *bi = p;
    }
}

__kernel void edt_wide_query(__global const int *ny, __global const int *nz,
                             __global const uchar *wcnt, __global const uchar *wstk,
                             __global const double *wmin, __global float *dist,
                             __global long *nearest, int want_nearest, int w, int h, uint rows,
                             double hx, double hy, double hz, int is3)
{
    const int W = w, NB = (W + RB_S - 1) / RB_S, NSB = (NB + RB_SB - 1) / RB_SB;
    const int lsz = (int)get_local_size(0), gpr = (W + lsz - 1) / lsz;
    const uint row = (uint)(get_group_id(0) / (size_t)gpr);
    const int x = (int)(get_group_id(0) % (size_t)gpr) * lsz + (int)get_local_id(0);
    if (row >= rows || x >= W) return;
    const size_t base = (size_t)row * (size_t)W, rb = (size_t)row * (size_t)NB;
    __global const double *bmin = wmin + rb;
    __global const double *smin = wmin + (size_t)rows * (size_t)NB + (size_t)row * (size_t)NSB;
    const int y = (int)(row % (uint)h), z = (int)(row / (uint)h);
    double best = INFINITY;
    int bi = -1;
    const int b0 = x / RB_S;
    wq_band(ny, nz, is3, base, wcnt, wstk, rb, b0, x, y, z, hx, hy, hz, &best, &bi);
    for (int b = b0 - 1; b >= 0;) {
        const double t = (double)(x - (b * RB_S + RB_S - 1)) * hx;
        const double t2 = t * t;
        if (!(t2 < best)) break;
        if ((b % RB_SB) == RB_SB - 1 && !(smin[b / RB_SB] + t2 < best)) {
            b -= RB_SB;
            continue;
        }
        if (bmin[b] + t2 < best)
            wq_band(ny, nz, is3, base, wcnt, wstk, rb, b, x, y, z, hx, hy, hz, &best, &bi);
        --b;
    }
    for (int b = b0 + 1; b < NB;) {
        const double t = (double)(b * RB_S - x) * hx;
        const double t2 = t * t;
        if (!(t2 < best)) break;
        if ((b % RB_SB) == 0 && !(smin[b / RB_SB] + t2 < best)) {
            b += RB_SB;
            continue;
        }
        if (bmin[b] + t2 < best)
            wq_band(ny, nz, is3, base, wcnt, wstk, rb, b, x, y, z, hx, hy, hz, &best, &bi);
        ++b;
    }
    dist[base + x] = (float)sqrt(best);
    if (want_nearest) {
        if (bi < 0) {
            nearest[base + x] = -1;
        } else {
            const long sy = (long)ny[base + bi];
            const long sz = is3 ? (long)nz[base + bi] : 0;
            nearest[base + x] = (long)bi + (long)W * (sy + (long)h * sz);
        }
    }
}

/* ---- pass B (3D, along y), one work-group per tile of columns ------------ */
/*
 * One work-group per tile of TX consecutive columns (x0 .. x0+TX-1) of a slice z: the TX lines
 * of h pixels along y are solved together with the banded envelopes of pass C (is3 mode: f
 * stored as double), each line with its own local area of line_bytes (f, band minima,
 * superband minima, counts, stacks, laid out as for the rows). Loads and stores touch TX
 * consecutive words of an image row at a time. A line's f is its column's squared z distance
 * ((z - sz) * hz)^2, and each pixel y takes a site p minimising f[p] + ((y - p) * hy)^2, the
 * expression of the CPU's pass B; pass C forms tz^2 + ty^2 from the chosen site with the same
 * operations in the same order, so any minimiser (ties) gives pass C the same value.
 */
#define CB_SF(j) ((__local double *)(sm + (size_t)(j) * (size_t)line_bytes))
#define CB_BMIN(j) (CB_SF(j) + H + NB)
#define CB_SMIN(j) (CB_BMIN(j) + NB)
#define CB_CNT(j) ((__local uchar *)(CB_SMIN(j) + NSB))
#define CB_STK(j) (CB_CNT(j) + NB)
__kernel void edt_cols(__global const int *nz, __global int *ny2, __global int *nz2, int w, int h,
                       int d, int TX, int line_bytes, double hy, double hz,
                       __local double *arena)
{
    const int H = h, NB = (H + RB_S - 1) / RB_S, NSB = (NB + RB_SB - 1) / RB_SB;
    const int lid = (int)get_local_id(0), lsz = (int)get_local_size(0);
    const uint ntx = ((uint)w + (uint)TX - 1) / (uint)TX, tiles = ntx * (uint)d;
    const double h2 = hy * hy;
    __local uchar *const sm = (__local uchar *)arena;
    for (uint tile = (uint)get_group_id(0); tile < tiles; tile += (uint)get_num_groups(0)) {
        const int z = (int)(tile / ntx), x0 = (int)(tile % ntx) * TX;
        const int tw = min(w - x0, TX);
        const size_t base = (size_t)z * (size_t)w * (size_t)h + (size_t)x0; /* pixel (x0, 0, z) */
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int t = lid; t < tw * H; t += lsz) {
            const int j = t % tw, y = t / tw;
            const int c = nz[base + (size_t)y * (size_t)w + (size_t)j];
            double f = INFINITY;
            if (c != NO_SITE) {
                const double tz = (double)(z - c) * hz;
                f = tz * tz;
            }
            CB_SF(j)[RB_PAD(y)] = f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int t = lid; t < tw * NB; t += lsz) {
            const int j = t % tw, b = t / tw;
            const int lo = b * RB_S, hi = min(lo + RB_S, H);
            __local double *sf = CB_SF(j);
            double mn;
            CB_CNT(j)[b] = (uchar)rb_build((__local const int *)sf, sf, 1, lo, hi, 0, 0.0, h2,
                                           CB_STK(j) + b, NB, &mn);
            CB_BMIN(j)[b] = mn;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int t = lid; t < tw * NSB; t += lsz) {
            const int j = t % tw, sb = t / tw;
            __local const double *bmin = CB_BMIN(j);
            double m = INFINITY;
            const int e = min((sb + 1) * RB_SB, NB);
            for (int b = sb * RB_SB; b < e; ++b) m = bmin[b] < m ? bmin[b] : m;
            CB_SMIN(j)[sb] = m;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int t = lid; t < tw * H; t += lsz) {
            const int j = t % tw, y = t / tw;
            __local const double *sf = CB_SF(j);
            double best;
            int bi;
            rb_pixel((__local const int *)sf, sf, 1, CB_BMIN(j), CB_SMIN(j), CB_CNT(j), CB_STK(j),
                     NB, y, 0, hy, 0.0, &best, &bi);
            const size_t o = base + (size_t)y * (size_t)w + (size_t)j;
            ny2[o] = bi < 0 ? NO_SITE : bi;
            nz2[o] = bi < 0 ? NO_SITE : nz[base + (size_t)bi * (size_t)w + (size_t)j];
        }
    }
}
#undef CB_SF
#undef CB_BMIN
#undef CB_SMIN
#undef CB_CNT
#undef CB_STK

/* ---- passes C (rows) and B (3D columns) with work that does not depend on the picture ----
 * Merged band envelopes (in the spirit of the parallel banding algorithm), everything in local
 * memory; the same method as cuda/edt_exact.cu's em_line. This is the path plan_exact (edt.c)
 * takes wherever a line fits in local memory; the kernels above remain for longer lines.
 *
 * One line (a row, or a column along y) of n sites:
 *   1. its f values (2D rows: the site row of each column as a ushort, f re-formed; 3D rows and
 *      columns: f as a double);
 *   2. each band of EM_S sites: its lower envelope (the CPU's intersection test), kept as a
 *      stack of offsets; a band's live entries are a range [lo, hi) of that stack;
 *   3. log2(bands) levels of merges: neighbouring groups of bands are joined by their bridge (the
 *      lower common tangent in the lifted space, where each parabola is a point): the left
 *      group loses a suffix of its envelope and the right one a prefix, so every band keeps a
 *      contiguous range, and the bands of a group are chained (prv/nxt) past emptied ones.
 *      Finding the bridge walks both ends; a whole band is dropped with one test (the test
 *      "hidden" is monotone along a convex chain) and otherwise a binary search inside the band
 *      finds the new end, so a merge costs O(bands dropped + log EM_S) whatever the picture;
 *   4. the surviving sites are compacted into E[0..m) (prefix sum of the bands' counts);
 *   5. each position x binary-searches E for its envelope site (the values along the envelope
 *      are unimodal at x) and forms d2 = f + ((x - p) * h)^2, the CPU's expression, so any true
 *      minimiser gives the CPU's distance.
 * Local memory per line (em_bytes in edt.c): sites (2D rows: 2 * RB_PAD(n) bytes, else
 * 8 * RB_PAD(n), rounded up to 8), E (2 n), prv, nxt, gF, gL (short, NB each), pre (ushort NB),
 * cs (ushort NC + 1), lo, hi (uchar NB), stk (uchar 32 NB), the whole rounded up to 16;
 * NB = ceil(n / 32), NC = ceil(NB / 8). n <= 65535; 2D rows also need h < 65535.
 */
#define EM_NONE 0xFFFF
#define EM_S 16 /* sites per band (stack offsets are uchar); edt_exact.c's em_bytes uses the same */

typedef struct em_line {
    __local ushort *su, *E, *pre, *cs;
    __local double *sd;
    __local uchar *stk, *lo, *hi;
    __local short *prv, *nxt, *gF, *gL;
    __local int *si;
    int dbl, intv, n, NB, NC, y;
    double hy, h, h2;
} em_line;

/* L's arrays in the area at base for a line of n sites; dbl: f stored (as a double, or as an
 * int with intv); intv: unit spacing, integer arithmetic (cuda/edt_envelope.cuh says why it
 * decides as the CPU's doubles do) */
inline void em_layout(em_line *L, __local uchar *base, int n, int dbl, int intv, int y, double hy, double h)
{
    L->dbl = dbl;
    L->intv = intv;
    L->n = n;
    L->NB = (n + EM_S - 1) / EM_S;
    L->NC = (L->NB + 7) / 8;
    L->y = y;
    L->hy = hy;
    L->h = h;
    L->h2 = h * h;
    const int sbytes = ((dbl ? 8 : 2) * RB_PAD(n) + 7) & ~7;
    L->sd = (__local double *)base;
    L->si = (__local int *)base;
    L->su = (__local ushort *)base;
    L->E = (__local ushort *)(base + sbytes);
    L->prv = (__local short *)(L->E + n);
    L->nxt = L->prv + L->NB;
    L->gF = L->nxt + L->NB;
    L->gL = L->gF + L->NB;
    L->pre = (__local ushort *)(L->gL + L->NB);
    L->cs = L->pre + L->NB;
    L->lo = (__local uchar *)(L->cs + L->NC + 1);
    L->hi = L->lo + L->NB;
    L->stk = L->hi + L->NB;
}

inline double em_fp(const em_line *L, int p)
{
    if (L->dbl) return L->sd[RB_PAD(p)];
    const ushort c = L->su[RB_PAD(p)];
    if (c == EM_NONE) return INFINITY;
    const double t = (double)(L->y - (int)c) * L->hy;
    return t * t;
}

/* f of site p in integers (intv); EM_INF_I when p has none */
#define EM_INF_I 0x7FFFFFFF
inline int em_fi(const em_line *L, int p)
{
    if (L->dbl) return L->si[RB_PAD(p)];
    const ushort c = L->su[RB_PAD(p)];
    if (c == EM_NONE) return EM_INF_I;
    const int t = L->y - (int)c;
    return t * t;
}

inline int em_has(const em_line *L, int p) { return L->intv ? em_fi(L, p) != EM_INF_I : em_fp(L, p) != INFINITY; }

inline int em_pos(const em_line *L, int b, int k) { return b * EM_S + L->stk[k * L->NB + b]; }

/* whether site p (between pp on its left and q on its right) is hidden: the CPU's test */
inline int em_hidden(const em_line *L, int pp, int p, int q)
{
    if (L->intv) {
        const int fq = em_fi(L, q), fp = em_fi(L, p), fpp = em_fi(L, pp);
        /* each numerator fits an int when w^2 + h^2 + d^2 < 2^31 (intv): only the cross products
         * need 64 bits (cuda/edt_envelope.cuh's em_hidden) */
        const int num = (fq - fp) + (q - p) * (q + p), den = 2 * (q - p);
        const int zn = (fp - fpp) + (p - pp) * (p + pp), zd = 2 * (p - pp);
        return !((long)num * zd > (long)zn * den);
    }
    return env_hides(em_fp(L, q), q, em_fp(L, p), p, em_fp(L, pp), pp, L->h2);
}

/* step 2 for band b */
inline void em_build(const em_line *L, int b)
{
    const int NB = L->NB, l0 = b * EM_S, l1 = min(l0 + EM_S, L->n);
    __local uchar *stk = L->stk;
    int k = -1;
    for (int q = l0; q < l1; ++q) {
        if (!em_has(L, q)) continue;
        while (k >= 1 && em_hidden(L, l0 + stk[(k - 1) * NB + b], l0 + stk[k * NB + b], q)) --k;
        ++k;
        stk[k * NB + b] = (uchar)(q - l0);
    }
    L->lo[b] = 0;
    L->hi[b] = (uchar)(k + 1);
    L->gF[b] = L->gL[b] = (short)(k >= 0 ? b : -1);
}

/* Drops the suffix of the left group (last band *ab, first band fa) hidden behind site q.
 * Returns whether anything went. */
inline int em_pop_left(const em_line *L, int fa, int *ab, int q)
{
    int changed = 0;
    for (;;) {
        const int b = *ab, l = L->lo[b], e = L->hi[b];
        if (b != fa) {
            const int pb = L->prv[b];
            if (em_hidden(L, em_pos(L, pb, L->hi[pb] - 1), em_pos(L, b, l), q)) {
                L->hi[b] = (uchar)l; /* the whole band is behind q */
                *ab = pb;
                changed = 1;
                continue;
            }
        }
        /* entry l stays: the first hidden entry in (l, e) */
        int a = l + 1, c = e;
        while (a < c) {
            const int mid = (a + c) >> 1;
            if (em_hidden(L, em_pos(L, b, mid - 1), em_pos(L, b, mid), q))
                c = mid;
            else
                a = mid + 1;
        }
        if (a < e) {
            L->hi[b] = (uchar)a;
            changed = 1;
        }
        return changed;
    }
}

/* Drops the prefix of the right group (first band *bb, last band lb) hidden behind site p. */
inline int em_pop_right(const em_line *L, int lb, int *bb, int p)
{
    int changed = 0;
    for (;;) {
        const int b = *bb, l = L->lo[b], e = L->hi[b];
        if (b != lb) {
            const int nb = L->nxt[b];
            if (em_hidden(L, p, em_pos(L, b, e - 1), em_pos(L, nb, L->lo[nb]))) {
                L->lo[b] = (uchar)e;
                *bb = nb;
                changed = 1;
                continue;
            }
        }
        /* entry e - 1 stays: the first entry in [l, e - 1) that is not hidden */
        int a = l, c = e - 1;
        while (a < c) {
            const int mid = (a + c) >> 1;
            if (em_hidden(L, p, em_pos(L, b, mid), em_pos(L, b, mid + 1)))
                a = mid + 1;
            else
                c = mid;
        }
        if (a > l) {
            L->lo[b] = (uchar)a;
            changed = 1;
        }
        return changed;
    }
}

/* step 3: joins the groups starting at bands bl and br (first/last nonempty bands in gF/gL) */
inline void em_merge(const em_line *L, int bl, int br)
{
    __local short *gF = L->gF, *gL = L->gL;
    const int fr = gF[br];
    if (fr < 0) return;
    const int fl = gF[bl];
    if (fl < 0) {
        gF[bl] = (short)fr;
        gL[bl] = gL[br];
        return;
    }
    int ab = gL[bl], bb = fr;
    const int lr = gL[br];
    for (;;) {
        int ch = em_pop_left(L, fl, &ab, em_pos(L, bb, L->lo[bb]));
        ch |= em_pop_right(L, lr, &bb, em_pos(L, ab, L->hi[ab] - 1));
        if (!ch) break;
    }
    L->nxt[ab] = (short)bb;
    L->prv[bb] = (short)ab;
    gL[bl] = (short)lr;
}

/* step 4: live entries of chunk t (8 bands); the chunks' scan (one work-item); the bands'
 * offsets; entry (band t % NB, stack slot t / NB) into E */
inline void em_chunk_sum(const em_line *L, int t)
{
    int sum = 0;
    for (int b = t * 8; b < min(t * 8 + 8, L->NB); ++b) sum += L->hi[b] - L->lo[b];
    L->cs[t] = (ushort)sum;
}

inline void em_chunk_scan(const em_line *L)
{
    int run = 0;
    for (int t = 0; t < L->NC; ++t) {
        const int c = L->cs[t];
        L->cs[t] = (ushort)run;
        run += c;
    }
    L->cs[L->NC] = (ushort)run;
}

inline void em_band_offsets(const em_line *L, int t)
{
    int run = L->cs[t];
    for (int b = t * 8; b < min(t * 8 + 8, L->NB); ++b) {
        L->pre[b] = (ushort)run;
        run += L->hi[b] - L->lo[b];
    }
}

inline void em_place(const em_line *L, int t)
{
    const int b = t % L->NB, k = t / L->NB;
    if (k >= L->lo[b] && k < L->hi[b]) L->E[L->pre[b] + k - L->lo[b]] = (ushort)(b * EM_S + L->stk[k * L->NB + b]);
}

/* step 5: the envelope site of position x (-1 if none), its d2 in *best (as a double; exact
 * integers with intv) */
inline int em_find(const em_line *L, int x, double *best)
{
    const int m = L->cs[L->NC];
    *best = INFINITY;
    if (m == 0) return -1;
    int a = 0, c = m - 1;
    if (L->intv) {
        while (a < c) {
            const int mid = (a + c) >> 1;
            const int p0 = L->E[mid], p1 = L->E[mid + 1];
            if (em_fi(L, p1) + (x - p1) * (x - p1) < em_fi(L, p0) + (x - p0) * (x - p0))
                a = mid + 1;
            else
                c = mid;
        }
        const int p = L->E[a];
        *best = (double)(em_fi(L, p) + (x - p) * (x - p));
        return p;
    }
    const double h = L->h;
    while (a < c) {
        const int mid = (a + c) >> 1;
        const int p0 = L->E[mid], p1 = L->E[mid + 1];
        const double t0 = (double)(x - p0) * h, t1 = (double)(x - p1) * h;
        if (em_fp(L, p1) + t1 * t1 < em_fp(L, p0) + t0 * t0)
            a = mid + 1;
        else
            c = mid;
    }
    const int p = L->E[a];
    const double t = (double)(x - p) * h;
    *best = em_fp(L, p) + t * t;
    return p;
}

/* Steps 2-4 for the `lines` lines of a work-group (line j at base + j * line_bytes, f loaded),
 * work-items spread over (line, item) pairs with the line fastest. */
inline void em_solve(__local uchar *base, int line_bytes, int lines, int n, int dbl, int intv, int y,
                     double hy, double h)
{
    const int lid = (int)get_local_id(0), lsz = (int)get_local_size(0);
    em_line L;
    em_layout(&L, base, n, dbl, intv, y, hy, h);
    const int NB = L.NB, NC = L.NC;
#define EM_AT(j) em_layout(&L, base + (j) * line_bytes, n, dbl, intv, y, hy, h)
    for (int t = lid; t < lines * NB; t += lsz) {
        EM_AT(t % lines);
        em_build(&L, t / lines);
    }
    for (int s = 1; s < NB; s <<= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        const int pairs = (NB - s + 2 * s - 1) / (2 * s);
        for (int t = lid; t < lines * pairs; t += lsz) {
            const int bl = (t / lines) * 2 * s;
            EM_AT(t % lines);
            em_merge(&L, bl, bl + s);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int t = lid; t < lines * NC; t += lsz) {
        EM_AT(t % lines);
        em_chunk_sum(&L, t / lines);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int t = lid; t < lines; t += lsz) {
        EM_AT(t);
        em_chunk_scan(&L);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int t = lid; t < lines * NC; t += lsz) {
        EM_AT(t % lines);
        em_band_offsets(&L, t / lines);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int t = lid; t < lines * NB * EM_S; t += lsz) {
        EM_AT(t % lines);
        em_place(&L, t / lines);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#undef EM_AT
}

/* Pass C: one work-group per row (a loop over rows); is3: f from both site maps, as a double. */
__kernel void edt_rows_env(__global const int *ny, __global const int *nz, __global float *dist,
                           __global long *nearest, int want_nearest, int w, int h, uint rows,
                           double hx, double hy, double hz, int is3, int intv, __local double *arena)
{
    const int W = w;
    const int lid = (int)get_local_id(0), lsz = (int)get_local_size(0);
    __local uchar *base = (__local uchar *)arena;
    em_line L;
    for (uint row = (uint)get_group_id(0); row < rows; row += (uint)get_num_groups(0)) {
        const size_t rb = (size_t)row * (size_t)W;
        const int y = (int)(row % (uint)h), z = (int)(row / (uint)h);
        em_layout(&L, base, W, is3, intv, y, hy, hx);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int x = lid; x < W; x += lsz) {
            const int cy = ny[rb + x];
            if (is3 && intv) {
                const int tz = z - nz[rb + x], ty = y - cy;
                L.si[RB_PAD(x)] = cy == NO_SITE ? EM_INF_I : tz * tz + ty * ty;
            } else if (is3) {
                double f = INFINITY;
                if (cy != NO_SITE) {
                    const double tz = (double)(z - nz[rb + x]) * hz;
                    const double ty = (double)(y - cy) * hy;
                    f = tz * tz + ty * ty;
                }
                L.sd[RB_PAD(x)] = f;
            } else {
                L.su[RB_PAD(x)] = cy == NO_SITE ? (ushort)EM_NONE : (ushort)cy;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        em_solve(base, 0, 1, W, is3, intv, y, hy, hx);
        for (int x = lid; x < W; x += lsz) {
            double best;
            const int bi = em_find(&L, x, &best);
            dist[rb + x] = (float)sqrt(best);
            if (want_nearest) {
                if (bi < 0) {
                    nearest[rb + x] = -1;
                } else {
                    const long sy = is3 ? (long)ny[rb + bi] : (long)L.su[RB_PAD(bi)];
                    const long sz = is3 ? (long)nz[rb + bi] : 0;
                    nearest[rb + x] = (long)bi + (long)W * (sy + (long)h * sz);
                }
            }
        }
    }
}

/* Pass B (3D, along y): one work-group per tile of TX consecutive columns of a slice z, each
 * column a line of h with f = ((z - sz) * hz)^2 (double) in its own area of line_bytes; loads and
 * stores touch TX consecutive words of an image row. Pixel y takes the envelope site p minimising
 * f[p] + ((y - p) * hy)^2, the CPU's pass B expression; pass C forms tz^2 + ty^2 from it. */
__kernel void edt_cols_env(__global const int *nz, __global int *ny2, __global int *nz2, int w, int h,
                           int d, int TX, int line_bytes, double hy, double hz, int intv, __local double *arena)
{
    const int H = h;
    const int lid = (int)get_local_id(0), lsz = (int)get_local_size(0);
    const uint ntx = ((uint)w + (uint)TX - 1) / (uint)TX, tiles = ntx * (uint)d;
    __local uchar *const sm = (__local uchar *)arena;
    for (uint tile = (uint)get_group_id(0); tile < tiles; tile += (uint)get_num_groups(0)) {
        const int z = (int)(tile / ntx), x0 = (int)(tile % ntx) * TX;
        const int tw = min(w - x0, TX);
        const size_t base = (size_t)z * (size_t)w * (size_t)h + (size_t)x0;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int t = lid; t < tw * H; t += lsz) {
            const int j = t % tw, y = t / tw;
            const int c = nz[base + (size_t)y * (size_t)w + (size_t)j];
            if (intv) {
                ((__local int *)(sm + j * line_bytes))[RB_PAD(y)] = c == NO_SITE ? EM_INF_I : (z - c) * (z - c);
            } else {
                double f = INFINITY;
                if (c != NO_SITE) {
                    const double tq = (double)(z - c) * hz;
                    f = tq * tq;
                }
                ((__local double *)(sm + j * line_bytes))[RB_PAD(y)] = f;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        em_solve(sm, line_bytes, tw, H, 1, intv, 0, 0.0, hy);
        em_line L;
        for (int t = lid; t < tw * H; t += lsz) {
            const int j = t % tw, y = t / tw;
            em_layout(&L, sm + j * line_bytes, H, 1, intv, 0, 0.0, hy);
            double best;
            const int bi = em_find(&L, y, &best);
            const size_t o = base + (size_t)y * (size_t)w + (size_t)j;
            ny2[o] = bi < 0 ? NO_SITE : bi;
            nz2[o] = bi < 0 ? NO_SITE : nz[base + (size_t)bi * (size_t)w + (size_t)j];
        }
    }
}
