/* oracle.c - definitional references; see oracle.h. Independent of native/. */
#include "oracle.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void *xalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) abort(); /* test code: an oracle without memory cannot answer */
    return p;
}

int oracle_neighbors(int conn, int off[26][3])
{
    int n = 0;
    if (conn != 4 && conn != 8 && conn != 6 && conn != 18 && conn != 26) return 0;
    for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
                int changed = (dx != 0) + (dy != 0) + (dz != 0);
                if (changed == 0) continue;
                int in;
                if (conn == 4) in = dz == 0 && changed == 1;
                else if (conn == 8) in = dz == 0;
                else if (conn == 6) in = changed == 1;
                else if (conn == 18) in = changed <= 2;
                else in = 1;
                if (in) {
                    off[n][0] = dx;
                    off[n][1] = dy;
                    off[n][2] = dz;
                    ++n;
                }
            }
    return n;
}

/* One elementary dilation (or erosion) of src into dst over the neighbourhood
 * plus the centre, out-of-image neighbours ignored. */
static void elementary(const double *src, double *dst, odims d, int conn, int erode)
{
    int off[26][3];
    int n = oracle_neighbors(conn, off);
    for (int64_t z = 0; z < d.d; ++z)
        for (int64_t y = 0; y < d.h; ++y)
            for (int64_t x = 0; x < d.w; ++x) {
                int64_t p = x + d.w * (y + d.h * z);
                double v = src[p];
                for (int k = 0; k < n; ++k) {
                    int64_t qx = x + off[k][0], qy = y + off[k][1], qz = z + off[k][2];
                    if (qx < 0 || qy < 0 || qz < 0 || qx >= d.w || qy >= d.h || qz >= d.d) continue;
                    double q = src[qx + d.w * (qy + d.h * qz)];
                    if (erode ? q < v : q > v) v = q;
                }
                dst[p] = v;
            }
}

int64_t oracle_reconstruct(double *marker, const double *mask, odims d, int conn, int by_erosion)
{
    int64_t n = odims_count(d);
    for (int64_t i = 0; i < n; ++i) {
        if (by_erosion ? marker[i] < mask[i] : marker[i] > mask[i]) marker[i] = mask[i];
    }
    double *next = xalloc((size_t)n * sizeof(double));
    int64_t sweeps = 0;
    for (;;) {
        elementary(marker, next, d, conn, by_erosion);
        int changed = 0;
        for (int64_t i = 0; i < n; ++i) {
            double v = next[i];
            if (by_erosion ? v < mask[i] : v > mask[i]) v = mask[i];
            if (v != marker[i]) {
                marker[i] = v;
                changed = 1;
            }
        }
        ++sweeps;
        if (!changed) break;
    }
    free(next);
    return sweeps;
}

double oracle_index_distance(int64_t a, int64_t b, odims d, const double spacing[3])
{
    int64_t ax = a % d.w, ay = (a / d.w) % d.h, az = a / (d.w * d.h);
    int64_t bx = b % d.w, by = (b / d.w) % d.h, bz = b / (d.w * d.h);
    double dx = (double)(ax - bx) * spacing[0];
    double dy = (double)(ay - by) * spacing[1];
    double dz = (double)(az - bz) * spacing[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* Squared distance in the order the API documents: ((dz*hz)^2 + (dy*hy)^2) + (dx*hx)^2, in double. */
static double index_d2(int64_t a, int64_t b, odims d, const double spacing[3])
{
    int64_t ax = a % d.w, ay = (a / d.w) % d.h, az = a / (d.w * d.h);
    int64_t bx = b % d.w, by = (b / d.w) % d.h, bz = b / (d.w * d.h);
    double dx = (double)(ax - bx) * spacing[0];
    double dy = (double)(ay - by) * spacing[1];
    double dz = (double)(az - bz) * spacing[2];
    return (dz * dz + dy * dy) + dx * dx;
}

/* Length of the neighbour-step path from b to a that takes 3-axis diagonal steps,
 * then 2-axis diagonal steps, then straight steps (an upper bound of Danielsson). */
static double step_path_length(int64_t a, int64_t b, odims d, const double spacing[3])
{
    int64_t ax = a % d.w, ay = (a / d.w) % d.h, az = a / (d.w * d.h);
    int64_t bx = b % d.w, by = (b / d.w) % d.h, bz = b / (d.w * d.h);
    double n[3] = {(double)llabs(ax - bx), (double)llabs(ay - by), (double)llabs(az - bz)};
    double h[3] = {spacing[0], spacing[1], spacing[2]};
    for (int i = 0; i < 3; ++i) /* sort by step count, descending, with their spacings */
        for (int j = i + 1; j < 3; ++j)
            if (n[j] > n[i]) {
                double t = n[i]; n[i] = n[j]; n[j] = t;
                t = h[i]; h[i] = h[j]; h[j] = t;
            }
    return (n[0] - n[1]) * h[0] + (n[1] - n[2]) * sqrt(h[0] * h[0] + h[1] * h[1]) +
           n[2] * sqrt(h[0] * h[0] + h[1] * h[1] + h[2] * h[2]);
}

/* For every pixel, the minimum of metric(pixel, b) over all background pixels b
 * (0 on background, +inf if there is none). */
static void min_over_background(const double *binary, odims d, const double spacing[3],
                                double (*metric)(int64_t, int64_t, odims, const double *),
                                double *out)
{
    int64_t n = odims_count(d);
    int64_t *bg = xalloc((size_t)n * sizeof(int64_t));
    int64_t nbg = 0;
    for (int64_t i = 0; i < n; ++i)
        if (binary[i] == 0) bg[nbg++] = i;
    for (int64_t i = 0; i < n; ++i) {
        double best = binary[i] == 0 ? 0.0 : INFINITY;
        for (int64_t k = 0; binary[i] != 0 && k < nbg; ++k) {
            double e = metric(i, bg[k], d, spacing);
            if (e < best) best = e;
        }
        out[i] = best;
    }
    free(bg);
}

void oracle_danielsson_bound(const double *binary, odims d, const double spacing[3], double *bound)
{
    min_over_background(binary, d, spacing, step_path_length, bound);
}

void oracle_edt(const double *binary, odims d, const double spacing[3], float *dist)
{
    int64_t n = odims_count(d);
    double *d2 = xalloc((size_t)n * sizeof(double));
    min_over_background(binary, d, spacing, index_d2, d2);
    for (int64_t i = 0; i < n; ++i) dist[i] = (float)sqrt(d2[i]);
    free(d2);
}

double oracle_type_max(iwpp_type t)
{
    switch (t) {
    case IWPP_U8: return 255.0;
    case IWPP_U16: return 65535.0;
    default: return FLT_MAX;
    }
}

double oracle_type_min(iwpp_type t)
{
    return t == IWPP_F32 ? -FLT_MAX : 0.0;
}

int oracle_on_border(odims d, int64_t x, int64_t y, int64_t z)
{
    if (x == 0 || y == 0 || x == d.w - 1 || y == d.h - 1) return 1;
    return d.d > 1 && (z == 0 || z == d.d - 1);
}

static void border_marker(const double *in, odims d, double inside, double *marker)
{
    for (int64_t z = 0; z < d.d; ++z)
        for (int64_t y = 0; y < d.h; ++y)
            for (int64_t x = 0; x < d.w; ++x) {
                int64_t p = x + d.w * (y + d.h * z);
                marker[p] = oracle_on_border(d, x, y, z) ? in[p] : inside;
            }
}

void oracle_fill_holes(const double *in, odims d, iwpp_type t, int conn, double *out)
{
    border_marker(in, d, oracle_type_max(t), out);
    oracle_reconstruct(out, in, d, conn, 1);
}

void oracle_kill_borders(const double *in, odims d, iwpp_type t, int conn, double *out)
{
    int64_t n = odims_count(d);
    /* F32: the marker is -inf inside (the lowest float), so a region walled off by -inf keeps
       -inf as its reconstruction and comes out +inf */
    border_marker(in, d, t == IWPP_F32 ? -INFINITY : oracle_type_min(t), out);
    oracle_reconstruct(out, in, d, conn, 0);
    for (int64_t i = 0; i < n; ++i) {
        if (t == IWPP_F32) {
            /* IEEE single precision: FLT_MAX - -FLT_MAX is +inf (no saturation for F32); a pixel
               equal to its reconstruction is 0, also at +-inf (where inf - inf has no value) */
            float v = (float)in[i] == (float)out[i] ? 0.0f : (float)in[i] - (float)out[i];
            out[i] = (double)v;
        }
        else out[i] = in[i] - out[i]; /* rec <= in, never negative */
    }
}

void oracle_regional_extrema(const double *in, odims d, int conn, int maxima, double *out)
{
    int off[26][3];
    int nn = oracle_neighbors(conn, off);
    int64_t n = odims_count(d);
    int64_t *label = xalloc((size_t)n * sizeof(int64_t));
    int64_t *stack = xalloc((size_t)n * sizeof(int64_t));
    int64_t *members = xalloc((size_t)n * sizeof(int64_t));
    for (int64_t i = 0; i < n; ++i) label[i] = -1;
    for (int64_t seed = 0; seed < n; ++seed) {
        if (label[seed] >= 0) continue;
        /* flood the plateau of seed */
        int64_t top = 0, count = 0;
        int extremum = 1;
        label[seed] = seed;
        stack[top++] = seed;
        while (top > 0) {
            int64_t p = stack[--top];
            members[count++] = p;
            int64_t x = p % d.w, y = (p / d.w) % d.h, z = p / (d.w * d.h);
            for (int k = 0; k < nn; ++k) {
                int64_t qx = x + off[k][0], qy = y + off[k][1], qz = z + off[k][2];
                if (qx < 0 || qy < 0 || qz < 0 || qx >= d.w || qy >= d.h || qz >= d.d) continue;
                int64_t q = qx + d.w * (qy + d.h * qz);
                if (in[q] == in[p]) {
                    if (label[q] < 0) {
                        label[q] = seed;
                        stack[top++] = q;
                    }
                } else if (maxima ? in[q] > in[p] : in[q] < in[p]) {
                    extremum = 0;
                }
            }
        }
        for (int64_t k = 0; k < count; ++k) out[members[k]] = extremum ? 255.0 : 0.0;
    }
    free(label);
    free(stack);
    free(members);
}

void oracle_hextrema(const double *in, odims d, iwpp_type t, double h, int conn, int maxima,
                     double *out)
{
    int64_t n = odims_count(d);
    double tmax = oracle_type_max(t);
    if (t == IWPP_F32) {
        float hf = (float)h;
        for (int64_t i = 0; i < n; ++i) {
            float v = (float)in[i];
            float s = maxima ? v - hf : v + hf; /* IEEE single precision, may reach +-inf */
            out[i] = (double)s;
        }
    } else {
        double hi = floor(h + 0.5);
        for (int64_t i = 0; i < n; ++i) {
            double s = maxima ? in[i] - hi : in[i] + hi;
            if (s < 0) s = 0;
            if (s > tmax) s = tmax;
            out[i] = s;
        }
    }
    oracle_reconstruct(out, in, d, conn, !maxima);
}

void oracle_open_close(const double *in, odims d, int radius, int conn, int opening, double *out)
{
    int64_t n = odims_count(d);
    double *tmp = xalloc((size_t)n * sizeof(double));
    memcpy(out, in, (size_t)n * sizeof(double));
    for (int r = 0; r < radius; ++r) {
        elementary(out, tmp, d, conn, opening);
        memcpy(out, tmp, (size_t)n * sizeof(double));
    }
    free(tmp);
    oracle_reconstruct(out, in, d, conn, !opening);
}

/* In-image neighbour q of p = (x, y, z) along offset k, or -1. */
static int64_t neighbor_at(odims d, int64_t x, int64_t y, int64_t z, const int off[3])
{
    int64_t qx = x + off[0], qy = y + off[1], qz = z + off[2];
    if (qx < 0 || qy < 0 || qz < 0 || qx >= d.w || qy >= d.h || qz >= d.d) return -1;
    return qx + d.w * (qy + d.h * qz);
}

int64_t oracle_label(const double *in, odims d, int conn, int equal, uint32_t *out)
{
    int off[26][3];
    const int nn = oracle_neighbors(conn, off);
    const int64_t n = odims_count(d);
    int64_t *root = xalloc((size_t)n * sizeof *root);
    for (int64_t i = 0; i < n; ++i) root[i] = in[i] != 0.0 ? i : -1;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int64_t z = 0; z < d.d; ++z)
            for (int64_t y = 0; y < d.h; ++y)
                for (int64_t x = 0; x < d.w; ++x) {
                    const int64_t p = x + d.w * (y + d.h * z);
                    if (root[p] < 0) continue;
                    for (int k = 0; k < nn; ++k) {
                        const int64_t q = neighbor_at(d, x, y, z, off[k]);
                        if (q < 0 || root[q] < 0 || (equal && in[q] != in[p])) continue;
                        if (root[q] < root[p]) root[p] = root[q], changed = 1;
                    }
                }
    }
    /* a component's smallest index is its first pixel in raster order */
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i) {
        if (root[i] < 0) out[i] = 0;
        else if (root[i] == i) out[i] = (uint32_t)++count;
        else out[i] = out[root[i]];
    }
    free(root);
    return count;
}

/* (L, D, label) of the watershed, compared lexicographically, and (L, D) of the neighbour the
 * label came from (the tie rule at climbs). */
typedef struct wcost {
    double level;
    int64_t steps;
    uint32_t label; /* 0 = not reached */
    double src_level;
    int64_t src_steps;
} wcost;

static int wcost_less(wcost a, wcost b)
{
    if (a.level != b.level) return a.level < b.level;
    if (a.steps != b.steps) return a.steps < b.steps;
    return a.label < b.label;
}

/* Candidates compare as (L, D, L_src, D_src, label): at a climb entry the flood that arrived
 * first wins. */
static int wcand_less(wcost a, wcost b)
{
    if (a.level != b.level) return a.level < b.level;
    if (a.steps != b.steps) return a.steps < b.steps;
    if (a.src_level != b.src_level) return a.src_level < b.src_level;
    if (a.src_steps != b.src_steps) return a.src_steps < b.src_steps;
    return a.label < b.label;
}

/* The least candidate p's reached neighbours offer from their current states. */
static wcost ws_recompute(const double *in, const wcost *c, odims d, int off[][3], int nn, int64_t x,
                          int64_t y, int64_t z)
{
    const int64_t p = x + d.w * (y + d.h * z);
    wcost best = {in[p], 0, 0, 0.0, 0};
    for (int k = 0; k < nn; ++k) {
        const int64_t q = neighbor_at(d, x, y, z, off[k]);
        if (q < 0 || c[q].label == 0) continue;
        const int climb = in[p] > c[q].level;
        const wcost cand = {climb ? in[p] : c[q].level, climb ? 0 : c[q].steps + 1, c[q].label, c[q].level,
                            c[q].steps};
        if (best.label == 0 || wcand_less(cand, best)) best = cand;
    }
    return best;
}

void oracle_watershed(const double *in, const uint32_t *markers, const double *mask, odims d, int conn,
                      int lines, uint32_t *out)
{
    int off[26][3];
    const int nn = oracle_neighbors(conn, off);
    const int64_t n = odims_count(d);
    wcost *c = xalloc((size_t)n * sizeof *c);
    char *fixed = xalloc((size_t)n);
    for (int64_t i = 0; i < n; ++i) {
        const int inside = !mask || mask[i] != 0.0;
        fixed[i] = inside && markers[i] != 0;
        c[i] = (wcost){in[i], 0, fixed[i] ? markers[i] : 0, 0.0, 0};
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (int64_t z = 0; z < d.d; ++z)
            for (int64_t y = 0; y < d.h; ++y)
                for (int64_t x = 0; x < d.w; ++x) {
                    const int64_t p = x + d.w * (y + d.h * z);
                    if (fixed[p] || (mask && mask[p] == 0.0)) continue;
                    /* recomputed from the neighbours' current states, not kept as a minimum
                     * over their past ones: a neighbour's earlier, worse state may carry a
                     * label that wins after a strict climb (both give (in_p, 0)) */
                    const wcost best = ws_recompute(in, c, d, off, nn, x, y, z);
                    if (best.label != c[p].label || best.level != c[p].level || best.steps != c[p].steps)
                        c[p] = best, changed = 1;
                }
    }
    for (int64_t z = 0; z < d.d; ++z)
        for (int64_t y = 0; y < d.h; ++y)
            for (int64_t x = 0; x < d.w; ++x) {
                const int64_t p = x + d.w * (y + d.h * z);
                uint32_t v = c[p].label;
                if (lines && v != 0 && !fixed[p])
                    for (int k = 0; k < nn; ++k) {
                        const int64_t q = neighbor_at(d, x, y, z, off[k]);
                        if (q >= 0 && c[q].label != 0 && c[q].label != c[p].label && wcost_less(c[q], c[p]))
                            v = 0;
                    }
                out[p] = v;
            }
    free(c);
    free(fixed);
}
