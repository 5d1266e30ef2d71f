/*
 * test_label_tiles.cpp - the steps of the CUDA labeling and watershed (cuda/label_common.cuh,
 * cuda/watershed_tile.cuh) run on the host, so that CI without a GPU checks the code the CUDA
 * kernels run. LB_HOST makes one thread run every item of a phase in turn (a valid schedule).
 * Tiles are also shrunk (4x3, 4x3x2) so that small images span many tiles. The watershed's
 * rounds run their tiles in a shuffled order, and half of the tiles read the keys as they were
 * at the start of the round (the most a tile of a concurrent round can lag behind).
 *   label: tile pass and border pass over every tile (shuffled), then the roots numbered in
 *          raster order as label.cu's count/rank/final kernels do, == oracle_label;
 *   watershed: levels by oracle_reconstruct (by erosion, as watershed.cu asks the backend),
 *          keys, rounds, output == oracle_watershed (lines 0 and 1, with and without a mask);
 *          and oracle_watershed (lines 0) == a priority flood in (L, D, L_src, D_src, label)
 *          order.
 * Exit status 0 when all are equal.
 */
#define LB_HOST 1
#include "watershed_tile.cuh"
#include "label_runs.cuh"
#include "neighborhood.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <queue>
#include <random>
#include <tuple>
#include <vector>

extern "C" {
#include "oracle.h"
}

static std::mt19937_64 g_rng(17);
static int g_fails, g_runs;

/* the geometry make_geom (cuda/common.cuh) gives: the neighbourhood of native/neighborhood.h */
static geom make_geom_host(odims d, int conn)
{
    geom g;
    g.w = d.w;
    g.h = d.h;
    g.d = d.d;
    int o[26][3];
    g.n = iwpp_neighbors(conn, d.d == 1, o);
    for (int i = 0; i < g.n; ++i)
        for (int k = 0; k < 3; ++k) g.off[i][k] = (signed char)o[i][k];
    return g;
}

static std::vector<int64_t> shuffled(int64_t n)
{
    std::vector<int64_t> v((size_t)n);
    for (int64_t i = 0; i < n; ++i) v[(size_t)i] = i;
    std::shuffle(v.begin(), v.end(), g_rng);
    return v;
}

static void fail(const char *what, odims d, int conn, const char *extra)
{
    ++g_fails;
    if (g_fails <= 20)
        printf("FAIL: %s %lldx%lldx%lld conn=%d %s\n", what, (long long)d.w, (long long)d.h, (long long)d.d, conn,
               extra);
}

/* ------------------------------------------------------------------ labeling */

template <typename T, typename IdxT>
static int64_t host_label(const std::vector<T> &in, odims d, int conn, int equal, const lb_tiling &t,
                          std::vector<uint32_t> &out)
{
    const geom gb = lb_backward(make_geom_host(d, conn));
    const int64_t n = odims_count(d);
    std::vector<IdxT> P((size_t)n);
    std::vector<int> sp(LB_TILE);
    std::vector<T> sv(LB_TILE);
    for (int64_t tile : shuffled(t.ntiles)) lb_tile_pass<T, IdxT>(in.data(), P.data(), gb, t, equal, tile, sp.data(), sv.data());
    for (int64_t tile : shuffled(t.ntiles)) lb_border_pass<T, IdxT>(in.data(), P.data(), gb, t, equal, tile);
    out.assign((size_t)n, 0);
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i)
        if (P[(size_t)i] == (IdxT)i) out[(size_t)i] = (uint32_t)++count;
    for (int64_t i = 0; i < n; ++i) {
        IdxT p = P[(size_t)i];
        if (p == lb_none<IdxT>() || p == (IdxT)i) continue;
        while (P[(size_t)p] != p) p = P[(size_t)p];
        out[(size_t)i] = out[(size_t)p];
    }
    return count;
}

/* label.cu's path by row runs, kernel by kernel: each tile's runs (rows in a shuffled order, as
 * the lanes of a warp may go), the tile borders in a shuffled order (2D: the ring; 3D: segments
 * of the stored local roots, then the x faces), the walk to the roots, the ranks by band, and
 * the output both ways: from the stored local roots (U32 outputs) into @p out and, in 2D, from
 * the runs found again (U16 outputs) into @p again. Tiles are 32 x 32 (2D) or 32 x 4 x 8 (3D);
 * a tile row r is image row (ty * tyr + r % tyr, tz * tzr + r / tyr). */
struct host_runs_geo {
    odims d;
    int conn; /* 4, 8 (2D); 6, 18, 26 (3D) */
    int tyr, tzr, nrows;
    int64_t ntx, nty, ntz;
};

static host_runs_geo runs_geo(odims d, int conn)
{
    host_runs_geo g;
    g.d = d;
    const int n = lb_backward(make_geom_host(d, conn)).n;
    g.conn = d.d > 1 ? (n == 13 ? 26 : n == 9 ? 18 : 6) : (n == 4 ? 8 : 4);
    g.tyr = d.d > 1 ? 4 : LR_SIDE, g.tzr = d.d > 1 ? 8 : 1, g.nrows = d.d > 1 ? 4 : 1;
    g.ntx = (d.w + LR_SIDE - 1) / LR_SIDE, g.nty = (d.h + g.tyr - 1) / g.tyr, g.ntz = (d.d + g.tzr - 1) / g.tzr;
    return g;
}

struct host_runs_tile {
    int64_t tx, ty, tz;
    unsigned int F[LR_SIDE], S[LR_SIDE];
    int sp[LR_SIDE * LR_SIDE];
};

/* The image row of tile row @p r, or -1 past the image. */
static int64_t runs_row(const host_runs_geo &g, int64_t ty, int64_t tz, int r)
{
    const int64_t y = ty * g.tyr + r % g.tyr, z = tz * g.tzr + r / g.tyr;
    return y < g.d.h && z < g.d.d ? z * g.d.h + y : -1;
}

template <typename T>
static void host_tile_runs(const std::vector<T> &in, const host_runs_geo &g, int equal, host_runs_tile &tl)
{
    std::vector<T> sv(LR_SIDE * LR_SIDE);
    for (int r = 0; r < LR_SIDE; ++r) {
        const int64_t row = runs_row(g, tl.ty, tl.tz, r);
        unsigned int F = 0, J = 0;
        for (int x = 0; x < LR_SIDE; ++x) {
            const int64_t gx = tl.tx * LR_SIDE + x;
            const T v = gx < g.d.w && row >= 0 ? in[(size_t)(row * g.d.w + gx)] : (T)0;
            sv[(size_t)(r * LR_SIDE + x)] = v;
            if (lb_fg(v)) F |= 1u << x;
            if (x > 0 && lb_joined(sv[(size_t)(r * LR_SIDE + x - 1)], v, equal)) J |= 1u << x;
        }
        tl.F[r] = F, tl.S[r] = lr_starts(F, J);
        for (unsigned int m = tl.S[r]; m; m &= m - 1u) tl.sp[r * LR_SIDE + __builtin_ctz(m)] = r * LR_SIDE + __builtin_ctz(m);
    }
    for (int64_t r64 : shuffled(LR_SIDE)) {
        const int r = (int)r64, ly = r % g.tyr, lz = r / g.tyr, row = r * LR_SIDE;
        for (int k = 0; k < g.nrows; ++k) {
            const int reach = lr_reach(g.conn, k), ny = ly + lr_row_dy(k), nz = lz + lr_row_dz(k);
            if (reach < 0 || ny < 0 || ny >= g.tyr || nz < 0) continue;
            const int o = ny + g.tyr * nz, other = o * LR_SIDE;
            for (unsigned int m = tl.S[r]; m; m &= m - 1u) {
                const int a = __builtin_ctz(m);
                lr_touching(a, lr_run_end(tl.F[r], tl.S[r], a), tl.F[o], tl.S[o], reach == 1, [&](int su) {
                    if (!equal || sv[(size_t)(row + a)] == sv[(size_t)(other + su)]) lb_sunion(tl.sp, row + a, other + su);
                });
            }
        }
    }
    for (int r = 0; r < LR_SIDE; ++r)
        for (unsigned int m = tl.S[r]; m; m &= m - 1u) {
            const int li = r * LR_SIDE + __builtin_ctz(m);
            tl.sp[li] = lb_sfind(tl.sp, li);
        }
}

template <typename T>
static int64_t host_label_runs(const std::vector<T> &in, odims d, int conn, int equal, std::vector<uint32_t> &out,
                               std::vector<uint32_t> &again)
{
    const host_runs_geo g = runs_geo(d, conn);
    const bool d3 = d.d > 1, conn8 = g.conn == 8;
    const geom gb = lb_backward(make_geom_host(d, conn));
    const int64_t n = odims_count(d), rows = d.h * d.d, ntiles = g.ntx * g.nty * g.ntz;
    const int64_t nb = (rows + LR_SIDE - 1) / LR_SIDE;
    const uint32_t none = lb_none<uint32_t>();
    std::vector<uint32_t> G((size_t)n, 0xDEADBEEFu), ring((size_t)(ntiles * LR_RING)), rootmask((size_t)(rows * g.ntx));
    std::vector<uint32_t> segoff((size_t)(rows * g.ntx)), gmask((size_t)(rows * g.ntx)), store((size_t)n);
    std::vector<unsigned long long> bandoff((size_t)nb + 1, 0);
    auto tile_at = [&](int64_t tile, host_runs_tile &tl) {
        tl.tx = tile % g.ntx, tl.ty = tile / g.ntx % g.nty, tl.tz = tile / g.ntx / g.nty;
    };
    auto global = [&](int64_t tx, int64_t ty, int64_t tz, int li) {
        return (uint32_t)(runs_row(g, ty, tz, li / LR_SIDE) * d.w + tx * LR_SIDE + li % LR_SIDE);
    };
    auto pixel_root = [&](const host_runs_tile &tl, int r, int x) {
        return ((tl.F[r] >> x) & 1u) ? global(tl.tx, tl.ty, tl.tz, tl.sp[r * LR_SIDE + lr_start(tl.S[r], x)]) : none;
    };
    host_runs_tile tl;
    for (int64_t tile : shuffled(ntiles)) { /* run_local_kernel */
        tile_at(tile, tl);
        host_tile_runs<T>(in, g, equal, tl);
        uint32_t *rg = &ring[(size_t)(tile * LR_RING)];
        for (int r = 0; r < LR_SIDE; ++r) {
            const int64_t row = runs_row(g, tl.ty, tl.tz, r);
            unsigned int roots = 0;
            for (unsigned int m = tl.S[r]; m; m &= m - 1u) {
                const int a = __builtin_ctz(m);
                if (tl.sp[r * LR_SIDE + a] != r * LR_SIDE + a) continue;
                roots |= 1u << a;
                G[global(tl.tx, tl.ty, tl.tz, r * LR_SIDE + a)] = global(tl.tx, tl.ty, tl.tz, r * LR_SIDE + a);
            }
            if (row >= 0) rootmask[(size_t)(row * g.ntx + tl.tx)] = roots;
            if (!d3) {
                rg[LR_LEFT + r] = pixel_root(tl, r, 0);
                rg[LR_RIGHT + r] = pixel_root(tl, r, LR_SIDE - 1);
                rg[LR_TOP + r] = pixel_root(tl, 0, r);
                rg[LR_BOTTOM + r] = pixel_root(tl, LR_SIDE - 1, r);
            }
            for (int x = 0; x < LR_SIDE; ++x) {
                const int64_t gx = tl.tx * LR_SIDE + x;
                if (gx < d.w && row >= 0)
                    store[(size_t)(row * d.w + gx)] =
                        ((tl.F[r] >> x) & 1u) ? (uint32_t)tl.sp[r * LR_SIDE + lr_start(tl.S[r], x)] + 1u : 0u;
            }
        }
    }
    auto unite = [&](uint32_t p, uint32_t q) { lb_gunion(G.data(), p, q); };
    auto val = [&](int64_t x, int64_t y) { return in[(size_t)(y * d.w + x)]; };
    /* the root a stored pixel names: its tile from its coordinates */
    auto stored_root = [&](int64_t x, int64_t row) {
        const uint32_t v = store[(size_t)(row * d.w + x)];
        const int64_t y = row % d.h, z = row / d.h;
        return v ? global(x / LR_SIDE, y / g.tyr, z / g.tzr, (int)v - 1) : none;
    };
    for (int64_t tile : shuffled(ntiles)) { /* run_border_kernel (2D), run_border3_kernel (3D) */
        tile_at(tile, tl);
        const int64_t tx = tl.tx, ty = tl.ty, x0 = tx * LR_SIDE, y0 = ty * LR_SIDE;
        if (d3) {
            for (int r = 0; r < LR_SIDE; ++r) {
                const int ly = r % g.tyr, lz = r / g.tyr;
                const int64_t gy = ty * g.tyr + ly, gz = tl.tz * g.tzr + lz;
                if (gy >= d.h || gz >= d.d) continue;
                const int64_t row = gz * d.h + gy;
                uint32_t ra[LR_SIDE], rb[LR_SIDE];
                auto segments = [&](int64_t rw, uint32_t *roots, unsigned int &F, unsigned int &S) {
                    F = S = 0;
                    for (int x = 0; x < LR_SIDE; ++x) {
                        const int64_t gx = x0 + x;
                        roots[x] = gx < d.w ? stored_root(gx, rw) : none;
                        if (roots[x] == none) continue;
                        F |= 1u << x;
                        if (x == 0 || roots[x - 1] != roots[x]) S |= 1u << x;
                    }
                };
                unsigned int FA, SA;
                segments(row, ra, FA, SA);
                for (int k = 0; k < g.nrows; ++k) {
                    const int reach = lr_reach(g.conn, k), ny = ly + lr_row_dy(k), nz = lz + lr_row_dz(k);
                    if (reach < 0 || (ny >= 0 && ny < g.tyr && nz >= 0)) continue;
                    const int64_t qy = gy + lr_row_dy(k), qz = gz + lr_row_dz(k);
                    if (qy < 0 || qy >= d.h || qz < 0) continue;
                    unsigned int FB, SB;
                    segments(qz * d.h + qy, rb, FB, SB);
                    for (unsigned int m = SA; m; m &= m - 1u) {
                        const int a = __builtin_ctz(m);
                        lr_touching(a, lr_run_end(FA, SA, a), FB, SB, reach == 1, [&](int sb) {
                            if (!equal || val(x0 + a, row) == val(x0 + sb, qz * d.h + qy)) unite(ra[a], rb[sb]);
                        });
                    }
                }
                for (int lane = 0; lane < LR_SIDE; lane += LR_SIDE - 1) { /* the x faces */
                    const int64_t gx = x0 + lane;
                    if (gx >= d.w || ra[lane] == none) continue;
                    for (int k = 0; k < gb.n; ++k) {
                        const int dx = gb.off[k][0], dy = gb.off[k][1], dz = gb.off[k][2];
                        if (dx != (lane == 0 ? -1 : 1)) continue;
                        const int64_t qx = gx + dx, qy = gy + dy, qz = gz + dz;
                        if (qx < 0 || qx >= d.w || qy < 0 || qy >= d.h || qz < 0 || qz >= d.d) continue;
                        const uint32_t rq = stored_root(qx, qz * d.h + qy);
                        if (rq != none && (!equal || val(gx, row) == val(qx, qz * d.h + qy))) unite(ra[lane], rq);
                    }
                }
            }
            continue;
        }
        const uint32_t *a = &ring[(size_t)(tile * LR_RING)];
        for (int i = 0; i < LR_SIDE; ++i) {
            if (tx + 1 < g.ntx) {
                const uint32_t *b = a + LR_RING;
                lr_boundary_pairs(i, a + LR_RIGHT, b + LR_LEFT, conn8,
                    [&](int j) { return !equal || val(x0 + LR_SIDE, y0 + j) == val(x0 + LR_SIDE - 1, y0 + i); }, unite);
            }
            if (ty + 1 < g.nty) {
                const uint32_t *b = a + g.ntx * LR_RING;
                lr_boundary_pairs(i, a + LR_BOTTOM, b + LR_TOP, conn8,
                    [&](int j) { return !equal || val(x0 + j, y0 + LR_SIDE) == val(x0 + i, y0 + LR_SIDE - 1); }, unite);
                if (conn8 && i < 2) {
                    const int dx = i == 0 ? 1 : -1;
                    if ((dx > 0 && tx + 1 < g.ntx) || (dx < 0 && tx > 0)) {
                        const uint32_t *c = a + g.ntx * LR_RING + dx * LR_RING;
                        const uint32_t p = a[LR_BOTTOM + (dx > 0 ? LR_SIDE - 1 : 0)], q = c[LR_TOP + (dx > 0 ? 0 : LR_SIDE - 1)];
                        const int64_t px = x0 + (dx > 0 ? LR_SIDE - 1 : 0);
                        if (p != none && q != none && (!equal || val(px, y0 + LR_SIDE - 1) == val(px + dx, y0 + LR_SIDE)))
                            unite(p, q);
                    }
                }
            }
        }
    }
    for (int64_t s : shuffled(rows * g.ntx)) { /* run_flatten_kernel */
        unsigned int m = rootmask[(size_t)s], gm = 0;
        uint32_t last = none, last_root = 0;
        const int64_t y = s / g.ntx, x = (s % g.ntx) * LR_SIDE;
        for (; m; m &= m - 1u) {
            const int bit = __builtin_ctz(m);
            const uint32_t r = (uint32_t)(y * d.w + x + bit);
            uint32_t p = G[r];
            if (p == r) {
                gm |= 1u << bit;
                continue;
            }
            if (p != last) {
                last = p;
                while (G[p] != p) p = G[p];
                last_root = p;
            }
            G[r] = last_root;
        }
        gmask[(size_t)s] = gm;
    }
    for (int64_t band : shuffled(nb)) { /* run_rank_kernel */
        const int64_t s0 = band * LR_SIDE * g.ntx, s1 = std::min(band * LR_SIDE + LR_SIDE, rows) * g.ntx;
        uint32_t carry = 0;
        for (int64_t s = s0; s < s1; ++s) {
            segoff[(size_t)s] = carry;
            carry += (uint32_t)__builtin_popcount(gmask[(size_t)s]);
        }
        bandoff[(size_t)band + 1] = carry;
    }
    for (int64_t b = 0; b < nb; ++b) bandoff[(size_t)b + 1] += bandoff[(size_t)b];
    auto label = [&](const host_runs_tile &t, int li) {
        const uint32_t gr = G[global(t.tx, t.ty, t.tz, li)];
        const int64_t gy = gr / d.w, gx = gr % d.w, s = gy * g.ntx + gx / LR_SIDE;
        return (uint32_t)bandoff[(size_t)(gy / LR_SIDE)] + segoff[(size_t)s] +
               (uint32_t)__builtin_popcount(gmask[(size_t)s] & ((1u << (gx & 31)) - 1u)) + 1u;
    };
    out.assign((size_t)n, 0);
    again.assign((size_t)n, 0);
    std::vector<uint32_t> lab(LR_SIDE * LR_SIDE);
    for (int64_t tile : shuffled(ntiles)) { /* run_final_stored_kernel */
        tile_at(tile, tl);
        for (int r = 0; r < LR_SIDE; ++r) {
            const int64_t row = runs_row(g, tl.ty, tl.tz, r);
            if (row < 0) continue;
            for (unsigned int m = rootmask[(size_t)(row * g.ntx + tl.tx)]; m; m &= m - 1u)
                lab[(size_t)(r * LR_SIDE + __builtin_ctz(m))] = label(tl, r * LR_SIDE + __builtin_ctz(m));
        }
        for (int r = 0; r < LR_SIDE; ++r)
            for (int x = 0; x < LR_SIDE; ++x) {
                const int64_t gx = tl.tx * LR_SIDE + x, row = runs_row(g, tl.ty, tl.tz, r);
                if (gx >= d.w || row < 0) continue;
                const uint32_t v = store[(size_t)(row * d.w + gx)];
                out[(size_t)(row * d.w + gx)] = v ? lab[v - 1] : 0u;
            }
    }
    for (int64_t tile = 0; !d3 && tile < ntiles; ++tile) { /* run_final_kernel (U16, 2D) */
        tile_at(tile, tl);
        host_tile_runs<T>(in, g, equal, tl);
        for (int r = 0; r < LR_SIDE; ++r)
            for (unsigned int m = tl.S[r]; m; m &= m - 1u) {
                const int li = r * LR_SIDE + __builtin_ctz(m);
                if (tl.sp[li] == li) lab[(size_t)li] = label(tl, li);
            }
        for (int r = 0; r < LR_SIDE; ++r)
            for (int x = 0; x < LR_SIDE; ++x) {
                const int64_t gx = tl.tx * LR_SIDE + x, row = runs_row(g, tl.ty, tl.tz, r);
                if (gx >= d.w || row < 0 || !((tl.F[r] >> x) & 1u)) continue;
                again[(size_t)(row * d.w + gx)] = lab[(size_t)tl.sp[r * LR_SIDE + lr_start(tl.S[r], x)]];
            }
    }
    return (int64_t)bandoff[(size_t)nb];
}

template <typename T> static void check_label(const std::vector<double> &v, odims d, int conn, const lb_tiling &t)
{
    const int64_t n = odims_count(d);
    std::vector<T> in((size_t)n);
    for (int64_t i = 0; i < n; ++i) in[(size_t)i] = (T)v[(size_t)i];
    for (int equal = 0; equal < 2; ++equal) {
        std::vector<uint32_t> want((size_t)n), got32, got64;
        const int64_t c = oracle_label(v.data(), d, conn, equal, want.data());
        const int64_t c32 = host_label<T, uint32_t>(in, d, conn, equal, t, got32);
        const int64_t c64 = host_label<T, unsigned long long>(in, d, conn, equal, t, got64);
        g_runs += 2;
        if (c32 != c || got32 != want) fail("label (32-bit indices)", d, conn, equal ? "equal" : "binary");
        if (c64 != c || got64 != want) fail("label (64-bit indices)", d, conn, equal ? "equal" : "binary");
        std::vector<uint32_t> runs, again;
        const int64_t cr = host_label_runs<T>(in, d, conn, equal, runs, again);
        ++g_runs;
        if (cr != c || runs != want) fail("label (row runs, stored roots)", d, conn, equal ? "equal" : "binary");
        if (d.d == 1) {
            ++g_runs;
            if (again != want) fail("label (2D row runs, runs found again)", d, conn, equal ? "equal" : "binary");
        }
    }
}

/* ------------------------------------------------------------------ watershed */

template <typename T> static double type_max() { return 255.0; }
template <> double type_max<uint16_t>() { return 65535.0; }
template <> double type_max<float>() { return INFINITY; }

template <typename T>
static void host_watershed(const std::vector<double> &v, const std::vector<uint32_t> &mk, const double *mask, odims d,
                           int conn, int lines, const lb_tiling &t, std::vector<uint32_t> &out)
{
    const int64_t n = odims_count(d);
    const geom g = make_geom_host(d, conn);
    /* phase 1: levels, as watershed.cu's build_kernel + the backend's reconstruction by erosion */
    std::vector<double> gm((size_t)n), m((size_t)n);
    for (int64_t i = 0; i < n; ++i) {
        const bool inside = !mask || mask[i] != 0.0;
        gm[(size_t)i] = inside ? v[(size_t)i] : type_max<T>();
        m[(size_t)i] = inside && mk[(size_t)i] ? v[(size_t)i] : type_max<T>();
    }
    oracle_reconstruct(m.data(), gm.data(), d, conn, 1);
    std::vector<T> in((size_t)n), L((size_t)n);
    std::vector<uint8_t> mask8((size_t)n);
    for (int64_t i = 0; i < n; ++i) {
        in[(size_t)i] = (T)v[(size_t)i];
        L[(size_t)i] = (T)m[(size_t)i];
        mask8[(size_t)i] = mask && mask[i] == 0.0 ? 0 : 1;
    }
    /* phase 2 */
    std::vector<unsigned long long> K((size_t)n);
    std::vector<uint8_t> upd((size_t)n);
    std::vector<unsigned int> stamp((size_t)t.ntiles, 0u), q0((size_t)t.ntiles), q1((size_t)t.ntiles);
    unsigned int cnt[2] = {0, 0};
    unsigned long long pops = 0;
    ws_lists w = {{q0.data(), q1.data()}, cnt, stamp.data(), &pops};
    for (int64_t i = 0; i < n; ++i)
        ws_key_init<uint32_t>(i, mk.data(), mask ? mask8.data() : NULL, g, t, K.data(), upd.data(), stamp.data());
    for (int64_t i = 0; i < t.ntiles; ++i)
        if (stamp[(size_t)i] == 1u) w.q[0][cnt[0]++] = (unsigned int)i;
    static ws_smem<T> s;
    int from = 0;
    for (unsigned int round = 0; cnt[from] != 0; ++round, from = 1 - from) {
        if (round > 100000) {
            fail("watershed rounds do not settle", d, conn, "");
            break;
        }
        cnt[1 - from] = 0;
        const std::vector<unsigned long long> start = K;
        std::shuffle(w.q[from], w.q[from] + cnt[from], g_rng);
        for (unsigned int e = 0; e < cnt[from]; ++e) {
            const unsigned long long *Kr = (g_rng() & 1) ? start.data() : K.data();
            const unsigned int dirs = ws_tile<T>(s, Kr, K.data(), L.data(), in.data(), upd.data(), g, t, w.q[from][e]);
            if (dirs) ws_push(w, t, w.q[from][e], dirs, 1 - from, round + 2);
        }
    }
    /* phase 3 */
    out.assign((size_t)n, 0);
    for (int64_t i = 0; i < n; ++i) out[(size_t)i] = ws_out_label<T>(i, K.data(), L.data(), upd.data(), g, lines);
}

/* Meyer's priority flood in (L, D, L_src, D_src, label) order, L_src and D_src those of the
 * pixel that queued the item (markers fixed, no lines). */
static void priority_flood(const std::vector<double> &v, const std::vector<uint32_t> &mk, const double *mask, odims d,
                           int conn, std::vector<uint32_t> &out)
{
    typedef std::tuple<double, unsigned long long, double, unsigned long long, uint32_t, int64_t> item;
    std::priority_queue<item, std::vector<item>, std::greater<item>> pq;
    const geom g = make_geom_host(d, conn);
    const int64_t n = odims_count(d);
    std::vector<char> done((size_t)n, 0);
    auto inside = [&](int64_t i) { return !mask || mask[i] != 0.0; };
    out.assign((size_t)n, 0);
    for (int64_t i = 0; i < n; ++i)
        if (inside(i) && mk[(size_t)i]) pq.push(item(v[(size_t)i], 0, 0.0, 0, mk[(size_t)i], i));
    while (!pq.empty()) {
        const item e = pq.top();
        pq.pop();
        const int64_t p = std::get<5>(e);
        if (done[(size_t)p]) continue;
        done[(size_t)p] = 1;
        out[(size_t)p] = std::get<4>(e);
        const int64_t x = p % d.w, r = p / d.w, y = r % d.h, z = r / d.h;
        for (int k = 0; k < g.n; ++k) {
            const int64_t qx = x + g.off[k][0], qy = y + g.off[k][1], qz = z + g.off[k][2];
            if (qx < 0 || qy < 0 || qz < 0 || qx >= d.w || qy >= d.h || qz >= d.d) continue;
            const int64_t q = qx + d.w * (qy + d.h * qz);
            if (done[(size_t)q] || !inside(q) || mk[(size_t)q]) continue;
            const double lv = std::get<0>(e), iq = v[(size_t)q];
            const unsigned long long dv = std::get<1>(e);
            pq.push(item(iq > lv ? iq : lv, iq > lv ? 0 : dv + 1, lv, dv, std::get<4>(e), q));
        }
    }
}

template <typename T>
static void check_watershed(const std::vector<double> &v, const std::vector<uint32_t> &mk, const double *mask, odims d,
                            int conn, const lb_tiling &t)
{
    const int64_t n = odims_count(d);
    for (int lines = 0; lines < 2; ++lines) {
        std::vector<uint32_t> want((size_t)n), got;
        oracle_watershed(v.data(), mk.data(), mask, d, conn, lines, want.data());
        host_watershed<T>(v, mk, mask, d, conn, lines, t, got);
        ++g_runs;
        if (got != want) fail("watershed", d, conn, lines ? "lines" : "no lines");
        if (!lines) {
            std::vector<uint32_t> pf;
            priority_flood(v, mk, mask, d, conn, pf);
            ++g_runs;
            if (pf != want) fail("oracle_watershed != priority flood", d, conn, mask ? "mask" : "no mask");
        }
    }
}

/* ------------------------------------------------------------------ cases */

/* values: plateaus of few levels, sparse objects, or many levels; F32 gets -0.0 among its zeros */
static std::vector<double> gen_values(int64_t n, int style, bool f32)
{
    std::vector<double> v((size_t)n);
    const int levels = 1 + (int)(g_rng() % 4);
    for (int64_t i = 0; i < n; ++i) {
        double x = style == 0 ? (double)(g_rng() % levels)
                 : style == 1 ? (g_rng() % 5 == 0 ? 0.0 : 1.0 + (double)(g_rng() % 2))
                              : (double)(g_rng() % 50);
        if (f32 && x == 0.0 && (g_rng() & 1)) x = -0.0;
        v[(size_t)i] = x;
    }
    return v;
}

template <typename T> static void one_case(odims d, int conn, const lb_tiling &t, bool f32)
{
    const int64_t n = odims_count(d);
    const std::vector<double> v = gen_values(n, (int)(g_rng() % 3), f32);
    check_label<T>(v, d, conn, t);
    std::vector<uint32_t> mk((size_t)n, 0);
    const int markers = (int)(g_rng() % 12);
    for (int k = 0; k < markers; ++k) mk[(size_t)(g_rng() % (uint64_t)n)] = 1 + (uint32_t)(g_rng() % 5);
    std::vector<double> mask((size_t)n);
    for (int64_t i = 0; i < n; ++i) mask[(size_t)i] = g_rng() % 7 ? 1.0 : 0.0;
    check_watershed<T>(v, mk, NULL, d, conn, t);
    check_watershed<T>(v, mk, mask.data(), d, conn, t);
}

static void sweep(int iterations, int max_w, int max_h, int max_d, int real_tiles)
{
    static const int c2[2] = {4, 8}, c3[3] = {6, 18, 26};
    for (int it = 0; it < iterations; ++it) {
        const bool three = max_d > 1 && it % 2 == 0;
        odims d;
        d.w = 1 + (int64_t)(g_rng() % (uint64_t)max_w);
        d.h = 1 + (int64_t)(g_rng() % (uint64_t)max_h);
        d.d = three ? 1 + (int64_t)(g_rng() % (uint64_t)max_d) : 1;
        const int conn = three ? c3[g_rng() % 3] : c2[g_rng() % 2];
        geom g = make_geom_host(d, conn);
        const lb_tiling t = real_tiles ? lb_make_tiling(g) : lb_make_tiling_sized(g, 4, 3, 2);
        switch (it % 3) {
        case 0: one_case<uint8_t>(d, conn, t, false); break;
        case 1: one_case<uint16_t>(d, conn, t, false); break;
        default: one_case<float>(d, conn, t, true); break;
        }
    }
}

int main(void)
{
    sweep(600, 23, 19, 7, 0); /* small tiles: many tiles on small images */
    sweep(40, 90, 70, 1, 1);  /* the real 32x32 tiles */
    sweep(20, 40, 20, 19, 1); /* the real 16x8x8 tiles */
    sweep(30, 160, 100, 1, 1); /* 2D over several 32x32 tiles of the row-run path */
    sweep(24, 70, 13, 20, 1);  /* 3D over several 32x4x8 tiles of the row-run path */
    printf("%d comparisons, %d failures\n", g_runs, g_fails);
    return g_fails != 0;
}
