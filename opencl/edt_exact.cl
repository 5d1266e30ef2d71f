/*
 * edt_exact.cl - passes C (rows) and B (3D columns) of the exact EDT with work that does not
 * depend on the picture: merged band envelopes (in the spirit of the parallel banding
 * algorithm), everything in local memory. Appended after edt.cl (uses RB_S, RB_PAD, env_hides);
 * the same method as cuda/edt.cu's em_line.
 *
 * One line (a row, or a column along y) of n sites:
 *   1. its f values (2D rows: the site row of each column as a ushort, f re-formed; 3D rows and
 *      columns: f as a double);
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
 *   5. each position x binary-searches E for its envelope site (the values along the envelope
 *      are unimodal at x) and forms d2 = f + ((x - p) * h)^2, the CPU's expression, so any true
 *      minimiser gives the CPU's distance.
 * Local memory per line (em_bytes in edt.c): sites (2D rows: 2 * RB_PAD(n) bytes, else
 * 8 * RB_PAD(n), rounded up to 8), E (2 n), prv, nxt, gF, gL (short, NB each), pre (ushort NB),
 * cs (ushort NC + 1), lo, hi (uchar NB), stk (uchar 32 NB), the whole rounded up to 16;
 * NB = ceil(n / 32), NC = ceil(NB / 8). n <= 65535; 2D rows also need h < 65535.
 */
#define EM_NONE 0xFFFF

typedef struct em_line {
    __local ushort *su, *E, *pre, *cs;
    __local double *sd;
    __local uchar *stk, *lo, *hi;
    __local short *prv, *nxt, *gF, *gL;
    int dbl, n, NB, NC, y;
    double hy, h, h2;
} em_line;

/* L's arrays in the area at base for a line of n sites; dbl: f stored as doubles */
inline void em_layout(em_line *L, __local uchar *base, int n, int dbl, int y, double hy, double h)
{
    L->dbl = dbl;
    L->n = n;
    L->NB = (n + RB_S - 1) / RB_S;
    L->NC = (L->NB + 7) / 8;
    L->y = y;
    L->hy = hy;
    L->h = h;
    L->h2 = h * h;
    const int sbytes = ((dbl ? 8 : 2) * RB_PAD(n) + 7) & ~7;
    L->sd = (__local double *)base;
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

inline int em_pos(const em_line *L, int b, int k) { return b * RB_S + L->stk[k * L->NB + b]; }

/* whether site p (between pp on its left and q on its right) is hidden: the CPU's test */
inline int em_hidden(const em_line *L, int pp, int p, int q)
{
    return env_hides(em_fp(L, q), q, em_fp(L, p), p, em_fp(L, pp), pp, L->h2);
}

/* step 2 for band b */
inline void em_build(const em_line *L, int b)
{
    const int NB = L->NB, l0 = b * RB_S, l1 = min(l0 + RB_S, L->n);
    __local uchar *stk = L->stk;
    int k = -1;
    for (int q = l0; q < l1; ++q) {
        if (em_fp(L, q) == INFINITY) continue;
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
    if (k >= L->lo[b] && k < L->hi[b]) L->E[L->pre[b] + k - L->lo[b]] = (ushort)(b * RB_S + L->stk[k * L->NB + b]);
}

/* step 5: the envelope site of position x (-1 if none), its d2 in *best */
inline int em_find(const em_line *L, int x, double *best)
{
    const int m = L->cs[L->NC];
    *best = INFINITY;
    if (m == 0) return -1;
    const double h = L->h;
    int a = 0, c = m - 1;
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
inline void em_solve(__local uchar *base, int line_bytes, int lines, int n, int dbl, int y, double hy,
                     double h)
{
    const int lid = (int)get_local_id(0), lsz = (int)get_local_size(0);
    em_line L;
    em_layout(&L, base, n, dbl, y, hy, h);
    const int NB = L.NB, NC = L.NC;
#define EM_AT(j) em_layout(&L, base + (j) * line_bytes, n, dbl, y, hy, h)
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
    for (int t = lid; t < lines * NB * RB_S; t += lsz) {
        EM_AT(t % lines);
        em_place(&L, t / lines);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#undef EM_AT
}

/* Pass C: one work-group per row (a loop over rows); is3: f from both site maps, as a double. */
__kernel void edt_rows_env(__global const int *ny, __global const int *nz, __global float *dist,
                           __global long *nearest, int want_nearest, int w, int h, uint rows,
                           double hx, double hy, double hz, int is3, __local double *arena)
{
    const int W = w;
    const int lid = (int)get_local_id(0), lsz = (int)get_local_size(0);
    __local uchar *base = (__local uchar *)arena;
    em_line L;
    for (uint row = (uint)get_group_id(0); row < rows; row += (uint)get_num_groups(0)) {
        const size_t rb = (size_t)row * (size_t)W;
        const int y = (int)(row % (uint)h), z = (int)(row / (uint)h);
        em_layout(&L, base, W, is3, y, hy, hx);
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
                L.sd[RB_PAD(x)] = f;
            } else {
                L.su[RB_PAD(x)] = cy == NO_SITE ? (ushort)EM_NONE : (ushort)cy;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        em_solve(base, 0, 1, W, is3, y, hy, hx);
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
                           int d, int TX, int line_bytes, double hy, double hz, __local double *arena)
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
            double f = INFINITY;
            if (c != NO_SITE) {
                const double tq = (double)(z - c) * hz;
                f = tq * tq;
            }
            ((__local double *)(sm + j * line_bytes))[RB_PAD(y)] = f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        em_solve(sm, line_bytes, tw, H, 1, 0, 0.0, hy);
        em_line L;
        for (int t = lid; t < tw * H; t += lsz) {
            const int j = t % tw, y = t / tw;
            em_layout(&L, sm + j * line_bytes, H, 1, 0, 0.0, hy);
            double best;
            const int bi = em_find(&L, y, &best);
            const size_t o = base + (size_t)y * (size_t)w + (size_t)j;
            ny2[o] = bi < 0 ? NO_SITE : bi;
            nz2[o] = bi < 0 ? NO_SITE : nz[base + (size_t)bi * (size_t)w + (size_t)j];
        }
    }
}
