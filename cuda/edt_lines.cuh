/*
 * edt_lines.cuh - the exact EDT's lower envelope of parabolas, one thread per line, in integers:
 * the sequential stack method of the CPU's separable transform (a forward sweep keeps the sites
 * that are nearest somewhere and where each starts to be; a backward sweep reads the distances
 * off). edt_exact.cu runs it for 3D images with unit spacing (IWPP_CUDA_EDT_LINES), with the
 * passes in the order x, y, z: the 1D pass along the rows (edt_x1d), then the two envelope
 * passes along y and along z, where the threads of a warp take consecutive columns x and so read
 * and write consecutive words. Thousands of lines keep every SM busy; no shared memory, no
 * synchronisation, and the work per line is linear whatever the picture.
 * Kept in a header so that tests/test_edt_envelope.cpp runs this very code on the host.
 *
 * Exactness: with unit spacing every squared distance is an integer, so the minimum over the
 * sites is one number whatever the order of the passes, and (float)sqrt((double)d2) is the CPU's
 * distance bit for bit. The caller keeps w^2 + h^2 + d^2 < 2^31: every sum below fits an int.
 */
#ifndef IWPP_EDT_LINES_CUH
#define IWPP_EDT_LINES_CUH

#include <math.h>
#include <stdint.h>

#ifdef LN_HOST
#define LN_FN inline
#define LN_UNROLL
#define LN_ALIGN16 alignas(16)
#else
#define LN_FN __device__ __forceinline__
#define LN_UNROLL _Pragma("unroll")
#define LN_ALIGN16 __align__(16)
#endif

#define LN_INF 0x7FFFFFFF /* f of a position with no site */
#define LN_NONE 0xFFFF    /* pass X: no background on the row */
#define LN_AHEAD 4        /* f values loaded ahead of the forward sweep (memory-level parallelism) */

/* One stack entry: the site s, the first position t where it is nearest, and f(s). */
struct ln_entry {
    unsigned st; /* s | t << 16 */
    int f;
};

/* Two entries: one 16-byte move. */
struct LN_ALIGN16 ln_pair {
    ln_entry a, b;
};

/* The stack: the newest LN_WIN entries of each lane in shared memory (entry j of the lane at
 * win[(j % LN_WIN) * 32]), the older ones in global memory, moved four at a time: one 32-byte
 * sector. The warp's sectors are interleaved (chunk c of lane l at glob_warp + (c * 32 + l) * 4:
 * glob points at the lane's first one), so lanes at the same depth, as on pictures where every
 * line looks alike, move 1 KB at once, and lanes at different depths still move whole sectors.
 * Measured on the H100 at 512^3 (worst family / mean of 22): 4.58 / 2.77 ms; lanes owning
 * 128-byte lines, interleaved: 5.95 / 3.52; the first version (each lane's entries in one
 * stretch, a fixed number of lines per thread): 4.80 / 3.08. */
#define LN_WIN 8
#define LN_CHUNKS 128 /* entries between a lane's chunks: 32 lanes of 4 */
struct ln_stack {
    ln_entry *win, *glob;
    int depth, base; /* entries [0, depth); [base, depth) in the window; base % 4 == 0 */
    LN_FN void reset() { depth = base = 0; }
    LN_FN ln_entry &at(int j) const { return win[(j % LN_WIN) * 32]; }
    LN_FN void push(ln_entry e)
    {
        if (depth - base == LN_WIN) {
            ln_pair *g = (ln_pair *)(glob + (base >> 2) * LN_CHUNKS), p, q;
            p.a = at(base), p.b = at(base + 1), q.a = at(base + 2), q.b = at(base + 3);
            g[0] = p, g[1] = q;
            base += 4;
        }
        at(depth++) = e;
    }
    LN_FN ln_entry pop()
    {
        if (--depth < base) {
            base -= 4;
            const ln_pair *g = (const ln_pair *)(glob + (base >> 2) * LN_CHUNKS);
            const ln_pair p = g[0], q = g[1];
            at(base) = p.a, at(base + 1) = p.b, at(base + 2) = q.a, at(base + 3) = q.b;
        }
        return at(depth);
    }
};

/* The envelope of line L (n positions; L.f(u) = LN_INF where u holds no site), then for every
 * position x: L.put(x, site, d2) with d2 = f(site) + (x - site)^2 minimal, or L.none(x) if the
 * line has no site. The top entry stays in registers, the ones below in stk (room for n - 1).
 * Ties between sites keep the earlier one: any minimiser gives the same d2. */
template <class LINE> LN_FN void ln_solve(LINE &L, ln_stack &stk, int n)
{
    stk.reset();
    int k = -1, s = 0, t = 0, fs = 0; /* entries 0 .. k-1 in stk, entry k in (s, t, fs) */
    for (int u0 = 0; u0 < n; u0 += LN_AHEAD) {
        int fv[LN_AHEAD];
LN_UNROLL
        for (int i = 0; i < LN_AHEAD; ++i) fv[i] = u0 + i < n ? L.f(u0 + i) : LN_INF;
LN_UNROLL
        for (int i = 0; i < LN_AHEAD; ++i) {
            const int u = u0 + i, fu = fv[i];
            if (fu == LN_INF) continue;
            /* drop the sites that u beats where they start */
            while (k >= 0 && fs + (t - s) * (t - s) > fu + (t - u) * (t - u)) {
                if (--k >= 0) {
                    const ln_entry e = stk.pop();
                    s = (int)(e.st & 0xFFFF), t = (int)(e.st >> 16), fs = e.f;
                }
            }
            if (k < 0) {
                k = 0, s = u, t = 0, fs = fu;
                continue;
            }
            /* u is nearer than s from the first x past their crossing: the numerator is >= 0
             * because s is not beaten at t >= 0, so the division floors */
            const int from = (u * u - s * s + fu - fs) / (2 * (u - s)) + 1;
            if (from < n) {
                ln_entry e;
                e.st = (unsigned)s | (unsigned)t << 16, e.f = fs;
                stk.push(e);
                ++k, s = u, t = from, fs = fu;
            }
        }
    }
    for (int x = n - 1; x >= 0; --x) {
        if (k < 0) {
            L.none(x);
            continue;
        }
        L.put(x, s, fs + (x - s) * (x - s));
        if (x == t && --k >= 0) {
            const ln_entry e = stk.pop();
            s = (int)(e.st & 0xFFFF), t = (int)(e.st >> 16), fs = e.f;
        }
    }
}

/* Pass Y of a 3D image: the line of column x of slice z, along y (elements w apart from base).
 * f(y) = (x - sx)^2 with sx pass X's nearest background column on row (y, z); out: the squared
 * distance in the plane z (f2) and, for nearest indices, the site row (sy). */
struct ln_line_y {
    const uint16_t *sx;
    int *f2;
    uint16_t *sy; /* NULL: no nearest indices */
    int64_t base, w;
    int x;
    LN_FN int f(int u) const
    {
        const int c = sx[base + (int64_t)u * w];
        return c == LN_NONE ? LN_INF : (x - c) * (x - c);
    }
    LN_FN void put(int y, int site, int d2) const
    {
        f2[base + (int64_t)y * w] = d2;
        if (sy) sy[base + (int64_t)y * w] = (uint16_t)site;
    }
    LN_FN void none(int y) const
    {
        f2[base + (int64_t)y * w] = LN_INF;
        if (sy) sy[base + (int64_t)y * w] = LN_NONE;
    }
};

/* The last pass: a line along y (2D, f from sx) or along z (3D, f = f2), elements `step` apart
 * from base = the pixel (x, y) of the first plane; writes the distances and nearest indices.
 * 2D: sy NULL, f2 NULL; the site's column is sx of its row. 3D: the site's row is sy of the
 * site plane, its column sx of that row. */
struct ln_line_out {
    const uint16_t *sx, *sy;
    const int *f2;
    float *dist;
    int64_t *nearest;
    int64_t base, step, w, h;
    int x;
    LN_FN int f(int u) const
    {
        if (f2) return f2[base + (int64_t)u * step];
        const int c = sx[base + (int64_t)u * step];
        return c == LN_NONE ? LN_INF : (x - c) * (x - c);
    }
    LN_FN void put(int p, int site, int d2) const
    {
        const int64_t o = base + (int64_t)p * step;
        dist[o] = (float)sqrt((double)d2);
        if (nearest) {
            const int64_t plane = f2 ? (int64_t)site : 0, row = f2 ? (int64_t)sy[base + (int64_t)site * step] : site;
            const int64_t col = sx[(plane * h + row) * w + x];
            nearest[o] = col + w * (row + h * plane);
        }
    }
    LN_FN void none(int p) const
    {
        const int64_t o = base + (int64_t)p * step;
        dist[o] = INFINITY;
        if (nearest) nearest[o] = -1;
    }
};

#endif
