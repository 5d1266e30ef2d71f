/*
 * edt_envelope.cuh - the line solver of the exact EDT's merged band envelopes (edt_exact.cu's
 * edt_rows_env and edt_cols_env). Kept in a header so that tests/test_edt_envelope.cpp can run
 * the very same code on the host (EM_HOST: one thread runs every item of a phase in turn, which
 * is a valid schedule since the items of a phase touch disjoint data). Needs RB_PAD.
 */
#ifndef IWPP_EDT_ENVELOPE_CUH
#define IWPP_EDT_ENVELOPE_CUH

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <type_traits>

#ifdef EM_HOST
#define EM_FN inline
#define EM_DEV inline
#define EM_SYNC()
#define EM_TID 0
#define EM_NTH 1
#else
#define EM_FN __device__ __forceinline__
#define EM_DEV __device__
#define EM_SYNC() __syncthreads()
#define EM_TID ((int)threadIdx.x)
#define EM_NTH ((int)blockDim.x)
#endif

/* ---- Pass C (and pass B in 3D) by merged band envelopes: work independent of the picture ----
 * The method of opencl/edt_exact.cl, one line (a row, or a column along y) in shared memory:
 *   1. the line's f (2D rows: the site row of each column as a uint16, f re-formed; 3D rows and
 *      columns: f itself);
 *   2. each band of EM_S sites: its lower envelope (the CPU's intersection test), a stack of
 *      offsets of which a range [lo, hi) is live;
 *   3. log2(bands) levels of merges: neighbouring groups of bands are joined by their bridge
 *      (lower common tangent, each parabola a point of the lifted space); the left group loses
 *      a suffix, the right one a prefix, so each band keeps a contiguous range and the bands of
 *      a group are chained (prv/nxt) past emptied ones. A whole band goes with one test ("hidden"
 *      is monotone along a convex chain), else a binary search inside the band finds the end:
 *      a merge costs O(bands dropped + log EM_S) whatever the picture;
 *   4. the surviving sites are compacted into E[0..m);
 *   5. each envelope site k > 0 gets B[k], the first position where it beats site k - 1 (the
 *      comparison of step 6, so B is the envelope's partition of the line as step 6 would see it);
 *   6. each pixel x takes the site k with the largest B[k] <= x (a search over integers) and forms
 *      d2 = f + ((x - p) * h)^2, the CPU's expression: any true minimiser gives its distance.
 * Arithmetic (INTV): doubles in the CPU's order for any spacing; with unit spacing every value
 * the CPU forms is an integer below 2^53, exact in double, so the same comparisons in integers
 * (int f and d2, 64-bit products) decide the same way, without the int-to-double conversions
 * that dominate the double path (the caller keeps w^2 + h^2 + d^2 < 2^31).
 * Shared memory per line (em_bytes): f (uint16 site rows, or f as double / int), E and B (2 n
 * each), prv, nxt, gF, gL (int16 NB each), pre (uint16 NB), cs (uint16 NC + 1), lo, hi (uint8
 * NB), stk (uint8 32 NB); n <= 65535, and for 2D rows h < 65535. */
#define EM_NONE 0xFFFF
#ifndef EM_S
#define EM_S 16 /* sites per band (stack offsets are uint8); 16 measured faster than 32 on the H100 (cuda/README.md) */
#endif
#define EM_MAX 65535

static inline size_t em_bytes(int64_t n, bool stored, bool intv = false)
{
    const size_t nb = (size_t)((n + EM_S - 1) / EM_S), nc = (nb + 7) / 8;
    const size_t fb = stored ? (intv ? 4 : 8) : 2;
    const size_t sb = (fb * (size_t)RB_PAD(n) + 7) & ~(size_t)7;
    return ((sb + 4 * (size_t)n + 2 * 4 * nb + 2 * nb + 2 * (nc + 1) + 2 * nb + EM_S * nb) + 15) & ~(size_t)15;
}

/* The two arithmetics: f and d2 of a site (V), the intersection test and the boundary. */
EM_FN double em_inf(double) { return INFINITY; }
EM_FN int em_inf(int) { return 0x7FFFFFFF; }
EM_FN double em_sq(int t, double h, double) { const double u = (double)t * h; return u * u; }
EM_FN int em_sq(int t, double, int) { return t * t; }
/* whether p (between pp on its left and q on its right) is hidden: the CPU's test */
EM_FN bool em_hidden(double fpp, double fp, double fq, int pp, int p, int q, double h2)
{
    const double num = (fq - fp) + h2 * (double)((int64_t)(q - p) * (q + p));
    const double den = 2.0 * h2 * (double)(q - p);
    const double zn = (fp - fpp) + h2 * (double)((int64_t)(p - pp) * (p + pp));
    const double zd = 2.0 * h2 * (double)(p - pp);
    return !(num * zd > zn * den);
}
/* Integers: every f is at most the squared extent of the other axes and q^2 - p^2 below the
 * line's, so with w^2 + h^2 + d^2 < 2^31 (the callers' condition for INTV) each numerator fits an
 * int and only the two cross products need 64 bits (one wide multiply each). */
EM_FN bool em_hidden(int fpp, int fp, int fq, int pp, int p, int q, double)
{
    const int num = (fq - fp) + (q - p) * (q + p), den = 2 * (q - p);
    const int zn = (fp - fpp) + (p - pp) * (p + pp), zd = 2 * (p - pp);
    return !((int64_t)num * zd > (int64_t)zn * den);
}

/* STORED: f held as V (3D), else as uint16 site rows with f = ((y - row) * hy)^2 (2D rows).
 * INTV: integer arithmetic (unit spacing), else double. */
template <bool STORED, bool INTV = false> struct em_line {
    typedef typename std::conditional<INTV, int, double>::type V;
    uint16_t *su, *E, *B, *pre, *cs;
    V *sv;
    unsigned char *stk, *lo, *hi;
    int16_t *prv, *nxt, *gF, *gL;
    int n, NB, NC, y;
    double hy, h, h2;
    EM_FN void layout(void *base, int len)
    {
        n = len;
        NB = (n + EM_S - 1) / EM_S;
        NC = (NB + 7) / 8;
        const int sbytes = ((STORED ? (int)sizeof(V) : 2) * RB_PAD(n) + 7) & ~7;
        sv = (V *)base;
        su = (uint16_t *)base;
        E = (uint16_t *)((unsigned char *)base + sbytes);
        B = E + n;
        prv = (int16_t *)(B + n);
        nxt = prv + NB;
        gF = nxt + NB;
        gL = gF + NB;
        pre = (uint16_t *)(gL + NB);
        cs = pre + NB;
        lo = (unsigned char *)(cs + NC + 1);
        hi = lo + NB;
        stk = hi + NB;
    }
    EM_FN V f(int p) const
    {
        if (STORED) return sv[RB_PAD(p)];
        const uint16_t c = su[RB_PAD(p)];
        if (c == EM_NONE) return em_inf(V());
        return em_sq(y - (int)c, hy, V());
    }
    /* d2 of site p at x: the CPU's f + ((x - p) * h)^2 */
    EM_FN V g(int p, int x) const { return f(p) + em_sq(x - p, h, V()); }
    EM_FN int pos(int b, int k) const { return b * EM_S + stk[k * NB + b]; }
    EM_FN bool hidden(int pp, int p, int q) const { return em_hidden(f(pp), f(p), f(q), pp, p, q, h2); }
    /* step 2 for band b */
    EM_DEV void build(int b) const
    {
        const int l0 = b * EM_S, l1 = l0 + EM_S < n ? l0 + EM_S : n;
        int k = -1;
        for (int q = l0; q < l1; ++q) {
            if (f(q) == em_inf(V())) continue;
            while (k >= 1 && hidden(l0 + stk[(k - 1) * NB + b], l0 + stk[k * NB + b], q)) --k;
            ++k;
            stk[k * NB + b] = (unsigned char)(q - l0);
        }
        lo[b] = 0;
        hi[b] = (unsigned char)(k + 1);
        gF[b] = gL[b] = (int16_t)(k >= 0 ? b : -1);
    }
    /* drops the suffix of the left group (last band ab, first band fa) hidden behind q */
    EM_DEV bool pop_left(int fa, int &ab, int q) const
    {
        bool changed = false;
        for (;;) {
            const int b = ab, l = lo[b], e = hi[b];
            if (b != fa) {
                const int pb = prv[b];
                if (hidden(pos(pb, hi[pb] - 1), pos(b, l), q)) {
                    hi[b] = (unsigned char)l;
                    ab = pb;
                    changed = true;
                    continue;
                }
            }
            int a = l + 1, c = e;
            while (a < c) {
                const int mid = (a + c) >> 1;
                if (hidden(pos(b, mid - 1), pos(b, mid), q))
                    c = mid;
                else
                    a = mid + 1;
            }
            if (a < e) {
                hi[b] = (unsigned char)a;
                changed = true;
            }
            return changed;
        }
    }
    /* drops the prefix of the right group (first band bb, last band lb) hidden behind p */
    EM_DEV bool pop_right(int lb, int &bb, int p) const
    {
        bool changed = false;
        for (;;) {
            const int b = bb, l = lo[b], e = hi[b];
            if (b != lb) {
                const int nb = nxt[b];
                if (hidden(p, pos(b, e - 1), pos(nb, lo[nb]))) {
                    lo[b] = (unsigned char)e;
                    bb = nb;
                    changed = true;
                    continue;
                }
            }
            int a = l, c = e - 1;
            while (a < c) {
                const int mid = (a + c) >> 1;
                if (hidden(p, pos(b, mid), pos(b, mid + 1)))
                    a = mid + 1;
                else
                    c = mid;
            }
            if (a > l) {
                lo[b] = (unsigned char)a;
                changed = true;
            }
            return changed;
        }
    }
    /* step 3: joins the groups starting at bands bl and br */
    EM_DEV void merge(int bl, int br) const
    {
        const int fr = gF[br];
        if (fr < 0) return;
        const int fl = gF[bl];
        if (fl < 0) {
            gF[bl] = (int16_t)fr;
            gL[bl] = gL[br];
            return;
        }
        int ab = gL[bl], bb = fr;
        const int lr = gL[br];
        for (;;) {
            bool ch = pop_left(fl, ab, pos(bb, lo[bb]));
            ch |= pop_right(lr, bb, pos(ab, hi[ab] - 1));
            if (!ch) break;
        }
        nxt[ab] = (int16_t)bb;
        prv[bb] = (int16_t)ab;
        gL[bl] = (int16_t)lr;
    }
    /* step 4: live entries of chunk t of 8 bands; the chunks' scan (one thread); the bands'
     * offsets; entry (band t % NB, stack slot t / NB) into E */
    EM_DEV void chunk_sum(int t) const
    {
        int sum = 0;
        const int e = t * 8 + 8 < NB ? t * 8 + 8 : NB;
        for (int b = t * 8; b < e; ++b) sum += hi[b] - lo[b];
        cs[t] = (uint16_t)sum;
    }
    EM_DEV void chunk_scan() const
    {
        int run = 0;
        for (int t = 0; t < NC; ++t) {
            const int c = cs[t];
            cs[t] = (uint16_t)run;
            run += c;
        }
        cs[NC] = (uint16_t)run;
    }
    EM_DEV void band_offsets(int t) const
    {
        int run = cs[t];
        const int e = t * 8 + 8 < NB ? t * 8 + 8 : NB;
        for (int b = t * 8; b < e; ++b) {
            pre[b] = (uint16_t)run;
            run += hi[b] - lo[b];
        }
    }
    EM_DEV void place(int t) const
    {
        const int b = t % NB, k = t / NB;
        if (k >= lo[b] && k < hi[b]) E[pre[b] + k - lo[b]] = (uint16_t)(b * EM_S + stk[k * NB + b]);
    }
    /* step 5: B[k], the first position x (0..n) where site E[k] beats E[k - 1] */
    EM_DEV void bound(int k) const
    {
        if (k == 0) {
            B[0] = 0;
            return;
        }
        const int a = E[k - 1], b = E[k];
        int x;
        if (INTV) {
            /* g(b, x) < g(a, x)  <=>  2 (b - a) x > f(b) - f(a) + (b - a)(b + a), in int as em_hidden */
            const int num = (int)f(b) - (int)f(a) + (b - a) * (b + a), den = 2 * (b - a);
            const int fl = num >= 0 ? num / den : -((-num + den - 1) / den);
            x = fl + 1 < 0 ? 0 : fl + 1 > n ? n : fl + 1;
        } else {
            /* the exact crossing as a first guess, then the comparison itself decides */
            const double z = ((double)(f(b) - f(a)) / h2 + (double)((int64_t)(b - a) * (b + a))) / (2.0 * (double)(b - a));
            x = !(z > -1.0) ? 0 : z >= (double)n ? n : (int)floor(z) + 1;
            while (x > 0 && g(b, x - 1) < g(a, x - 1)) --x;
            while (x < n && !(g(b, x) < g(a, x))) ++x;
        }
        B[k] = (uint16_t)x;
    }
    /* step 6: the envelope site of position x (-1 if none) and its d2 */
    EM_FN int find(int x, V &best) const
    {
        const int m = cs[NC];
        best = em_inf(V());
        if (m == 0) return -1;
        int a = 0, c = m - 1;
        while (a < c) {
            const int mid = (a + c + 1) >> 1;
            if (B[mid] <= x)
                a = mid;
            else
                c = mid - 1;
        }
        const int p = E[a];
        best = g(p, x);
        return p;
    }
};

/* Steps 2-5 for the `lines` lines of a block (line j at base + j * line_bytes), threads spread
 * over (line, item) pairs with the line index fastest. */
template <bool STORED, bool INTV> EM_DEV void em_solve(unsigned char *base, int64_t line_bytes, int lines, int n,
                                                       double hy, double h, int y)
{
    em_line<STORED, INTV> L;
    L.layout(base, n);
    const int NB = L.NB, NC = L.NC, tid = EM_TID, nth = EM_NTH;
#define EM_AT(j) (L.layout(base + (int64_t)(j) * line_bytes, n), L.y = y, L.hy = hy, L.h = h, L.h2 = h * h, L)
    for (int t = tid; t < lines * NB; t += nth) EM_AT(t % lines).build(t / lines);
    for (int s = 1; s < NB; s <<= 1) {
        EM_SYNC();
        const int pairs = (NB - s + 2 * s - 1) / (2 * s);
        for (int t = tid; t < lines * pairs; t += nth) {
            const int bl = (t / lines) * 2 * s;
            EM_AT(t % lines).merge(bl, bl + s);
        }
    }
    EM_SYNC();
    for (int t = tid; t < lines * NC; t += nth) EM_AT(t % lines).chunk_sum(t / lines);
    EM_SYNC();
    for (int t = tid; t < lines; t += nth) EM_AT(t).chunk_scan();
    EM_SYNC();
    for (int t = tid; t < lines * NC; t += nth) EM_AT(t % lines).band_offsets(t / lines);
    EM_SYNC();
    for (int t = tid; t < lines * NB * EM_S; t += nth) EM_AT(t % lines).place(t / lines);
    EM_SYNC();
    for (int t = tid; t < lines * n; t += nth) {
        const int j = t % lines, k = t / lines;
        if (k < EM_AT(j).cs[NC]) L.bound(k);
    }
    EM_SYNC();
#undef EM_AT
}

#endif
