/*
 * edt_exact.cl - pass C of the exact EDT (along x) whose work does not depend on the picture:
 * merged band envelopes (in the spirit of the parallel banding algorithm), one work-group per
 * row, everything in local memory. Appended after edt.cl (uses RB_S, RB_PAD, env_hides).
 *
 *   1. the row's f values (2D: the site row of each column as a ushort, f re-formed; 3D: f);
 *   2. each band of RB_S sites: its lower envelope (the CPU's intersection test), kept as a
 *      stack of offsets; a band's live entries are a range [lo, hi) of that stack;
 *   3. log2(bands) levels of merges: neighbouring groups of bands are joined by their bridge (the
 *      lower common tangent in the lifted space, where each parabola is a point): the left
 *      group loses a suffix of its envelope and the right one a prefix, so every band keeps a
 *      contiguous range, and the bands of a group are chained (prv/nxt) past emptied ones.
 *      Finding the bridge walks both ends; a whole band is dropped with one test (the test
 *      "hidden" is monotone along a convex chain) and otherwise a binary search inside the band
 *      finds the new end, so a merge costs O(bands dropped + log RB_S) whatever the picture;
 *   4. the surviving sites are compacted into E[0..m) (prefix sum of the bands' counts);
 *   5. each pixel x binary-searches E for its envelope site (the values along the envelope are
 *      unimodal at x) and forms d2 = f + ((x - p) * hx)^2, the CPU's expression, so any true
 *      minimiser gives the CPU's distance.
 * Local memory per row of W pixels (NB = ceil(W / 32) bands, NC = ceil(NB / 8)):
 *   sites (2D: 2 * RB_PAD(W) bytes, 3D: 8 * RB_PAD(W), rounded up to 8), E (2 W), prv, nxt,
 *   gF, gL (short, NB each), pre (ushort NB), cs (ushort NC + 1), lo, hi (uchar NB),
 *   stk (uchar 32 NB). W <= 65535; 2D also needs h < 65535 (site rows in a ushort).
 */
#define EM_NONE 0xFFFF

inline double em_f(__local const ushort *su, __local const double *sd, const int is3, int p, int y,
                   double hy)
{
    if (is3) return sd[RB_PAD(p)];
    const ushort c = su[RB_PAD(p)];
    if (c == EM_NONE) return INFINITY;
    const double t = (double)(y - (int)c) * hy;
    return t * t;
}

typedef struct em_line {
    __local const ushort *su;
    __local const double *sd;
    __local uchar *stk, *lo, *hi;
    __local short *prv, *nxt;
    int is3, NB, y;
    double hy, h2;
} em_line;

inline int em_pos(const em_line *L, int b, int k) { return b * RB_S + L->stk[k * L->NB + b]; }
inline double em_fp(const em_line *L, int p) { return em_f(L->su, L->sd, L->is3, p, L->y, L->hy); }

/* whether site p (between pp on its left and q on its right) is hidden: the CPU's test */
inline int em_hidden(const em_line *L, int pp, int p, int q)
{
    return env_hides(em_fp(L, q), q, em_fp(L, p), p, em_fp(L, pp), pp, L->h2);
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

/* Joins the groups starting at bands bl and br (their first/last nonempty bands in gF/gL). */
inline void em_merge(const em_line *L, __local short *gF, __local short *gL, int bl, int br)
{
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

__kernel void edt_rows_env(__global const int *ny, __global const int *nz, __global float *dist,
                           __global long *nearest, int want_nearest, int w, int h, uint rows,
                           double hx, double hy, double hz, int is3, __local double *arena)
{
    const int W = w, NB = (W + RB_S - 1) / RB_S, NC = (NB + 7) / 8;
    const int lid = (int)get_local_id(0), lsz = (int)get_local_size(0);
    const int sbytes = ((is3 ? 8 : 2) * RB_PAD(W) + 7) & ~7;
    __local uchar *base8 = (__local uchar *)arena;
    __local ushort *su = (__local ushort *)arena;
    __local ushort *E = (__local ushort *)(base8 + sbytes);
    __local short *prv = (__local short *)(E + W), *nxt = prv + NB, *gF = nxt + NB, *gL = gF + NB;
    __local ushort *pre = (__local ushort *)(gL + NB), *cs = pre + NB;
    __local uchar *lo = (__local uchar *)(cs + NC + 1), *hi = lo + NB, *stk = hi + NB;
    em_line L;
    L.su = su;
    L.sd = arena;
    L.stk = stk;
    L.lo = lo;
    L.hi = hi;
    L.prv = prv;
    L.nxt = nxt;
    L.is3 = is3;
    L.NB = NB;
    L.hy = hy;
    L.h2 = hx * hx;
    for (uint row = (uint)get_group_id(0); row < rows; row += (uint)get_num_groups(0)) {
        const size_t rb = (size_t)row * (size_t)W;
        const int y = (int)(row % (uint)h), z = (int)(row / (uint)h);
        L.y = y;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int x = lid; x < W; x += lsz) {
            const int cy = ny[rb + x];
            if (is3) {
                double f = INFINITY;
                if (cy != NO_SITE) {
                    const double tz = (double)(z - nz[rb + x]) * hz;
                    const double ty = (double)(y - cy) * hy;
                    f = tz * tz + ty * ty;
                }
                arena[RB_PAD(x)] = f;
            } else {
                su[RB_PAD(x)] = cy == NO_SITE ? (ushort)EM_NONE : (ushort)cy;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int b = lid; b < NB; b += lsz) {
            const int l0 = b * RB_S, l1 = min(l0 + RB_S, W);
            int k = -1;
            for (int q = l0; q < l1; ++q) {
                if (em_fp(&L, q) == INFINITY) continue;
                while (k >= 1 && em_hidden(&L, l0 + stk[(k - 1) * NB + b], l0 + stk[k * NB + b], q)) --k;
                ++k;
                stk[k * NB + b] = (uchar)(q - l0);
            }
            lo[b] = 0;
            hi[b] = (uchar)(k + 1);
            gF[b] = gL[b] = (short)(k >= 0 ? b : -1);
        }
        for (int s = 1; s < NB; s <<= 1) {
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int t = lid; t * 2 * s + s < NB; t += lsz) em_merge(&L, gF, gL, t * 2 * s, t * 2 * s + s);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* compaction: chunk sums, their scan (one work-item), then each chunk's bands */
        for (int t = lid; t < NC; t += lsz) {
            int sum = 0;
            for (int b = t * 8; b < min(t * 8 + 8, NB); ++b) sum += hi[b] - lo[b];
            cs[t] = (ushort)sum;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0) {
            int run = 0;
            for (int t = 0; t < NC; ++t) {
                const int c = cs[t];
                cs[t] = (ushort)run;
                run += c;
            }
            cs[NC] = (ushort)run;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int t = lid; t < NC; t += lsz) {
            int run = cs[t];
            for (int b = t * 8; b < min(t * 8 + 8, NB); ++b) {
                pre[b] = (ushort)run;
                run += hi[b] - lo[b];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int t = lid; t < NB * RB_S; t += lsz) {
            const int b = t % NB, k = t / NB;
            if (k >= lo[b] && k < hi[b]) E[pre[b] + k - lo[b]] = (ushort)(b * RB_S + stk[k * NB + b]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const int m = cs[NC];
        for (int x = lid; x < W; x += lsz) {
            double best = INFINITY;
            int bi = -1;
            if (m > 0) {
                int a = 0, c = m - 1;
                while (a < c) {
                    const int mid = (a + c) >> 1;
                    const int p0 = E[mid], p1 = E[mid + 1];
                    const double t0 = (double)(x - p0) * hx, t1 = (double)(x - p1) * hx;
                    if (em_fp(&L, p1) + t1 * t1 < em_fp(&L, p0) + t0 * t0)
                        a = mid + 1;
                    else
                        c = mid;
                }
                bi = E[a];
                const double t = (double)(x - bi) * hx;
                best = em_fp(&L, bi) + t * t;
            }
            dist[rb + x] = (float)sqrt(best);
            if (want_nearest) {
                if (bi < 0) {
                    nearest[rb + x] = -1;
                } else {
                    const long sy = is3 ? (long)ny[rb + bi] : (long)su[RB_PAD(bi)];
                    const long sz = is3 ? (long)nz[rb + bi] : 0;
                    nearest[rb + x] = (long)bi + (long)W * (sy + (long)h * sz);
                }
            }
        }
    }
}
