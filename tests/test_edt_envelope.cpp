/*
 * test_edt_envelope.cpp - the CUDA exact EDT's line solver (cuda/edt_envelope.cuh: merged band
 * envelopes) run on the host, so that CI without a GPU checks the code the CUDA kernels run.
 * EM_HOST makes one thread run every item of a phase in turn (a valid schedule: the items of a
 * phase touch disjoint data). Each benchmark family (bench/synth.c), 2D and 3D, unit and dyadic
 * spacings: pass A as on the CPU, pass B (3D) and pass C through em_solve / find exactly as
 * edt_cols_env and edt_rows_env do, then every distance bit for bit against brute force
 * (((dz hz)^2 + (dy hy)^2) + (dx hx)^2 in double, rounded once to float) and every nearest site
 * a background pixel at exactly that distance. Exit status 0 when all are equal.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#define EM_HOST 1
#define NO_SITE (-1)
#define RB_S 32
#define RB_PAD(x) ((x) + ((x) >> 5))
#include "edt_envelope.cuh"
#define LN_HOST 1
#include "edt_lines.cuh"
#include "edt_colbands.cuh"

extern "C" {
#include "synth.h"
/* synth.c's only use of the library: the family generator never calls it */
size_t iwpp_type_size(iwpp_type t) { return t == IWPP_U8 ? 1 : t == IWPP_U16 ? 2 : t == IWPP_I64 ? 8 : 4; }
}

static std::vector<double> g_smem;

/* pass A along the outer axis: the nearest background plane, ties to the smaller index */
static void pass_a(const uint8_t *in, int64_t len, int64_t count, int32_t *out)
{
    for (int64_t l = 0; l < len; ++l) {
        int32_t up = NO_SITE;
        for (int64_t k = 0; k < count; ++k) {
            if (in[k * len + l] == 0) up = (int32_t)k;
            out[k * len + l] = up;
        }
        int32_t down = NO_SITE;
        for (int64_t k = count - 1; k >= 0; --k) {
            const int32_t cur = out[k * len + l];
            if (cur == k) down = (int32_t)k;
            if (down != NO_SITE && (cur == NO_SITE || down - k < k - cur)) out[k * len + l] = down;
        }
    }
}

/* edt_cols_env for every column (x, z): ny2, nz2 from nz */
template <bool INTV>
static void pass_b(const int32_t *nz, int32_t *ny2, int32_t *nz2, int64_t w, int64_t h, int64_t d, double hy, double hz)
{
    unsigned char *sm = (unsigned char *)g_smem.data();
    for (int64_t z = 0; z < d; ++z)
        for (int64_t x = 0; x < w; ++x) {
            const int64_t base = z * w * h + x;
            typedef typename em_line<true, INTV>::V V;
            V *sf = (V *)sm;
            for (int64_t y = 0; y < h; ++y) {
                const int32_t c = nz[base + y * w];
                sf[RB_PAD(y)] = c == NO_SITE ? em_inf(V()) : em_sq((int)(z - c), hz, V());
            }
            em_solve<true, INTV>(sm, 0, 1, (int)h, 0.0, hy, 0);
            em_line<true, INTV> L;
            L.layout(sm, (int)h);
            L.h = hy;
            for (int64_t y = 0; y < h; ++y) {
                V best;
                const int bi = L.find((int)y, best);
                ny2[base + y * w] = bi < 0 ? NO_SITE : bi;
                nz2[base + y * w] = bi < 0 ? NO_SITE : nz[base + (int64_t)bi * w];
            }
        }
}

/* edt_rows_env for every row */
template <bool IS3, bool INTV>
static void pass_c(const int32_t *ny, const int32_t *nz, float *dist, int64_t *nearest, int64_t w, int64_t h,
                   int64_t rows, double hx, double hy, double hz)
{
    unsigned char *sm = (unsigned char *)g_smem.data();
    em_line<IS3, INTV> L;
    typedef typename em_line<IS3, INTV>::V V;
    L.layout(sm, (int)w);
    L.hy = hy;
    L.h = hx;
    L.h2 = hx * hx;
    for (int64_t row = 0; row < rows; ++row) {
        const int64_t rb = row * w;
        const int y = (int)(row % h), z = (int)(row / h);
        L.y = y;
        for (int64_t x = 0; x < w; ++x) {
            const int32_t cy = ny[rb + x];
            if (IS3) {
                V f = em_inf(V());
                if (cy != NO_SITE) f = em_sq(z - nz[rb + x], hz, V()) + em_sq(y - cy, hy, V());
                L.sv[RB_PAD(x)] = f;
            } else {
                L.su[RB_PAD(x)] = cy == NO_SITE ? (uint16_t)EM_NONE : (uint16_t)cy;
            }
        }
        em_solve<IS3, INTV>(sm, 0, 1, (int)w, hy, hx, y);
        for (int64_t x = 0; x < w; ++x) {
            V best;
            const int bi = L.find((int)x, best);
            dist[rb + x] = bi < 0 ? INFINITY : (float)sqrt((double)best);
            if (bi < 0) {
                nearest[rb + x] = -1;
            } else {
                const int64_t sy = IS3 ? (int64_t)ny[rb + bi] : (int64_t)L.su[RB_PAD(bi)];
                const int64_t sz = IS3 ? (int64_t)nz[rb + bi] : 0;
                nearest[rb + x] = (int64_t)bi + w * (sy + h * sz);
            }
        }
    }
}

/* edt_x1d: each pixel's nearest background column on its row (ties: the left one), LN_NONE */
static void nearest_columns(const uint8_t *in, uint16_t *sx, int64_t w, int64_t rows)
{
    for (int64_t row = 0; row < rows; ++row) {
        const uint8_t *p = in + row * w;
        for (int64_t x = 0; x < w; ++x) {
            int64_t l = x, r = x;
            while (l >= 0 && p[l] != 0) --l;
            while (r < w && p[r] != 0) ++r;
            int best = l >= 0 ? (int)l : LN_NONE;
            if (r < w && (l < 0 || r - x < x - l)) best = (int)r;
            sx[(size_t)(row * w + x)] = (uint16_t)best;
        }
    }
}

/* The column bands of edt_exact.cu (2D, unit spacing): bands of L rows, colour segments of lc
 * rows; the phases in the kernels' order (every item of a phase touches its own column's data). */
static void colbands_path(const uint8_t *in, float *dist, int64_t *nearest, int64_t w, int64_t h, int L, int lc)
{
    std::vector<uint16_t> sx((size_t)(w * h));
    nearest_columns(in, sx.data(), w, h);
    cb_grid G;
    G.K = (int)((h + L - 1) / L);
    std::vector<uint32_t> E((size_t)(G.K * CB_CHUNKS(L) * CB_SECTOR * w)), R((size_t)(G.K * w));
    G.sx = sx.data(), G.E = E.data(), G.R = R.data(), G.w = w, G.h = (int)h, G.L = L;
    uint32_t win[CB_WIN];
    for (int b = 0; b < G.K; ++b)
        for (int x = 0; x < (int)w; ++x) cb_hull(G, x, b, win, 1);
    for (int l = 0; (1 << l) < G.K; ++l)
        for (int i = 0; i < G.K; ++i) {
            int b0, bm, b1;
            if (!cb_pair(G, l, i, &b0, &bm, &b1)) break;
            for (int x = 0; x < (int)w; ++x) cb_merge_pair(G, x, b0, bm, b1);
        }
    for (int y0 = 0; y0 < (int)h; y0 += lc)
        for (int x = 0; x < (int)w; ++x) {
            cb_out o;
            o.dist = dist, o.nearest = nearest, o.w = w, o.x = x;
            cb_colour(G, o, x, y0, y0 + lc < (int)h ? y0 + lc : (int)h);
        }
}

/* The lines path of edt_exact.cu (unit spacing): edt_x1d's nearest background column on each
 * row (ties: the left one), then ln_solve along y (3D: edt_lines_y, then along z) as the kernels
 * run it, one line after another with a stride-1 stack. */
static void lines_path(const uint8_t *in, float *dist, int64_t *nearest, int64_t w, int64_t h, int64_t d)
{
    const int64_t n = w * h * d;
    std::vector<uint16_t> sx((size_t)n), sy((size_t)n);
    std::vector<int> f2((size_t)n);
    /* the kernels' stack: a window of LN_WIN entries (lane 0 of 32), the rest spilled in sectors */
    std::vector<ln_pair> room(((size_t)(h > d ? h : d) / 4 + 1) * LN_CHUNKS / 2), win(LN_WIN * 16);
    ln_stack stk;
    stk.win = &win[0].a;
    stk.glob = &room[0].a;
    nearest_columns(in, sx.data(), w, h * d);
    if (d > 1)
        for (int64_t line = 0; line < w * d; ++line) {
            ln_line_y L;
            L.sx = sx.data(), L.f2 = f2.data(), L.sy = sy.data(), L.w = w, L.x = (int)(line % w);
            L.base = (line / w) * w * h + L.x;
            ln_solve(L, stk, (int)h);
        }
    for (int64_t line = 0; line < (d > 1 ? w * h : w); ++line) {
        ln_line_out L;
        L.sx = sx.data(), L.sy = sy.data(), L.f2 = d > 1 ? f2.data() : NULL, L.dist = dist, L.nearest = nearest;
        L.base = line, L.step = d > 1 ? w * h : w, L.w = w, L.h = h, L.x = (int)(line % w);
        ln_solve(L, stk, (int)(d > 1 ? d : h));
    }
}

static double d2_of(int64_t a, int64_t b, int64_t w, int64_t h, const double *sp)
{
    const double tx = (double)(a % w - b % w) * sp[0];
    const double ty = (double)((a / w) % h - (b / w) % h) * sp[1];
    const double tz = (double)(a / (w * h) - b / (w * h)) * sp[2];
    return (tz * tz + ty * ty) + tx * tx;
}

/* the family fam, or (fam NULL) random background of density p; intv: the integer arithmetic
 * (unit spacing only, as edt_exact.cu chooses it); lines: the lines path instead (unit spacing) */
static int run(const char *fam, int64_t w, int64_t h, int64_t d, const double *sp, bool intv, double p = 0.0,
               uint64_t seed = 0, bool lines = false, int cb_l = 0, int cb_lc = 0)
{
    const int64_t n = w * h * d;
    std::vector<uint8_t> img((size_t)n);
    std::vector<int32_t> s1((size_t)n), ny2((size_t)n), nz2((size_t)n);
    std::vector<float> dist((size_t)n);
    std::vector<int64_t> near((size_t)n);
    char label[64];
    if (!fam) {
        uint64_t r = seed * 0x9E3779B97F4A7C15ull + 1;
        for (int64_t i = 0; i < n; ++i) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            img[(size_t)i] = (double)(r >> 11) * (1.0 / 9007199254740992.0) < p ? 0 : 255;
        }
        snprintf(label, sizeof label, "random p=%g seed=%llu", p, (unsigned long long)seed);
        fam = label;
    } else if (synth_edt_family(img.data(), fam, w, h, d, 7) != 0) {
        printf("FAIL: family %s could not be made\n", fam);
        return 1;
    }
    g_smem.assign(em_bytes(w > h ? w : h, true) / sizeof(double) + 8, 0.0);
    if (cb_l > 0) {
        colbands_path(img.data(), dist.data(), near.data(), w, h, cb_l, cb_lc);
    } else if (lines) {
        lines_path(img.data(), dist.data(), near.data(), w, h, d);
    } else if (d == 1) {
        pass_a(img.data(), w, h, s1.data());
        if (intv)
            pass_c<false, true>(s1.data(), NULL, dist.data(), near.data(), w, h, h, sp[0], sp[1], sp[2]);
        else
            pass_c<false, false>(s1.data(), NULL, dist.data(), near.data(), w, h, h, sp[0], sp[1], sp[2]);
    } else {
        pass_a(img.data(), w * h, d, s1.data());
        if (intv) {
            pass_b<true>(s1.data(), ny2.data(), nz2.data(), w, h, d, sp[1], sp[2]);
            pass_c<true, true>(ny2.data(), nz2.data(), dist.data(), near.data(), w, h, h * d, sp[0], sp[1], sp[2]);
        } else {
            pass_b<false>(s1.data(), ny2.data(), nz2.data(), w, h, d, sp[1], sp[2]);
            pass_c<true, false>(ny2.data(), nz2.data(), dist.data(), near.data(), w, h, h * d, sp[0], sp[1], sp[2]);
        }
    }
    std::vector<int64_t> bg;
    std::vector<int32_t> bx, by, bz; /* coordinates of the background pixels */
    for (int64_t i = 0; i < n; ++i)
        if (img[(size_t)i] == 0) {
            bg.push_back(i);
            bx.push_back((int32_t)(i % w));
            by.push_back((int32_t)((i / w) % h));
            bz.push_back((int32_t)(i / (w * h)));
        }
    for (int64_t i = 0; i < n; ++i) {
        const int32_t x = (int32_t)(i % w), y = (int32_t)((i / w) % h), z = (int32_t)(i / (w * h));
        double best = INFINITY;
        for (size_t k = 0; k < bg.size(); ++k) {
            const double tx = (double)(x - bx[k]) * sp[0], ty = (double)(y - by[k]) * sp[1],
                         tz = (double)(z - bz[k]) * sp[2];
            const double v = (tz * tz + ty * ty) + tx * tx; /* d2_of's expression */
            if (v < best) best = v;
        }
        const float want = (float)sqrt(best);
        const int64_t q = near[(size_t)i];
        const char *why = NULL;
        if (memcmp(&want, &dist[(size_t)i], sizeof want) != 0)
            why = "distance differs";
        else if (bg.empty() ? q != -1 : (q < 0 || q >= n || img[(size_t)q] != 0 || (float)sqrt(d2_of(i, q, w, h, sp)) != want))
            why = "nearest is not a background pixel at that distance";
        if (why) {
            printf("FAIL: %s%s %lldx%lldx%lld spacing (%g,%g,%g) bands %d/%d: pixel %lld: %s (got %.9g nearest %lld, want %.9g)\n", fam,
                   cb_l ? " (column bands)" : lines ? " (lines path)" : intv ? " (integer arithmetic)" : "",
                   (long long)w, (long long)h, (long long)d, sp[0], sp[1], sp[2], cb_l, cb_lc, (long long)i, why,
                   (double)dist[(size_t)i], (long long)q, (double)want);
            return 1;
        }
    }
    return 0;
}

int main(void)
{
    static const double sps[3][3] = {{1, 1, 1}, {0.5, 2.0, 1.25}, {1.25, 0.75, 3.0}};
    static const int64_t sizes[][3] = {{200, 60, 1}, {1100, 5, 1}, {2100, 2, 1}, {37, 70, 1}, {24, 40, 12}, {70, 9, 5}};
    int fails = 0, cases = 0;
    /* unit spacing runs both arithmetics; the others the double one */
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si)
        for (int f = 0; f < synth_edt_family_count(); ++f) {
            const double *sp = sps[(si + (size_t)f) % 3];
            for (int iv = 0; iv < (sp == sps[0] ? 2 : 1); ++iv, ++cases)
                fails += run(synth_edt_family_name(f), sizes[si][0], sizes[si][1], sizes[si][2], sp, iv == 1);
            /* the lines path takes unit spacing only */
            ++cases;
            fails += run(synth_edt_family_name(f), sizes[si][0], sizes[si][1], sizes[si][2], sps[0], true, 0.0, 0, true);
            /* the column bands take 2D with unit spacing: bands of every length from one row */
            if (sizes[si][2] == 1)
                for (int L : {1, 2, 3, 7, 16, 1000}) {
                    const int lmin = (int)((sizes[si][1] + CB_MAXK - 1) / CB_MAXK), l = L < lmin ? lmin : L;
                    ++cases;
                    fails += run(synth_edt_family_name(f), sizes[si][0], sizes[si][1], 1, sps[0], true, 0.0, 0, false, l,
                                 1 + (L * 5 + f) % 9);
                }
        }
    /* random backgrounds: envelopes of every length, bands emptied by merges at every level */
    static const int64_t rsizes[][3] = {{400, 30, 1}, {1500, 6, 1}, {3000, 3, 1}, {24, 30, 12}};
    static const double dens[] = {0.0005, 0.003, 0.02, 0.1, 0.4};
    uint64_t seed = 100;
    for (size_t si = 0; si < sizeof rsizes / sizeof rsizes[0]; ++si)
        for (size_t k = 0; k < sizeof dens / sizeof dens[0]; ++k, ++seed) {
            const double *sp = sps[(si + k) % 3];
            for (int iv = 0; iv < (sp == sps[0] ? 2 : 1); ++iv, ++cases)
                fails += run(NULL, rsizes[si][0], rsizes[si][1], rsizes[si][2], sp, iv == 1, dens[k], seed);
            ++cases;
            fails += run(NULL, rsizes[si][0], rsizes[si][1], rsizes[si][2], sps[0], true, dens[k], seed, true);
            if (rsizes[si][2] == 1)
                for (int L : {1, 2, 5, 13}) {
                    const int lmin = (int)((rsizes[si][1] + CB_MAXK - 1) / CB_MAXK), l = L < lmin ? lmin : L;
                    ++cases;
                    fails += run(NULL, rsizes[si][0], rsizes[si][1], 1, sps[0], true, dens[k], seed, false, l, 1 + L % 4);
                }
        }
    /* cb_dist: the float square root below 2^24 is the CPU's (float)sqrt((double)d2), every d2 */
    ++cases;
    for (int d2 = 0; d2 < (1 << 24); ++d2) {
        const float a = cb_dist(d2), b = (float)sqrt((double)d2);
        if (memcmp(&a, &b, sizeof a) != 0) {
            printf("FAIL: cb_dist(%d) = %.9g, (float)sqrt((double)d2) = %.9g\n", d2, (double)a, (double)b);
            ++fails;
            break;
        }
    }
    printf("%d of %d cases exact\n", cases - fails, cases);
    return fails ? 1 : 0;
}
