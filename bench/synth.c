/* synth.c - deterministic synthetic inputs (see synth.h). */
#define _POSIX_C_SOURCE 200809L
#include "synth.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

double synth_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
}

/* Uniform in [0, 1) from a lattice point of one octave. */
static float lattice01(uint64_t seed, int octave, int64_t ix, int64_t iy, int64_t iz)
{
    uint64_t x = mix64(seed + 0x9E3779B97F4A7C15ull * (uint64_t)(octave + 1));
    x = mix64(x ^ ((uint64_t)ix * 0xD1B54A32D192ED03ull));
    x = mix64(x ^ ((uint64_t)iy * 0xABC98388FB8FAC03ull));
    x = mix64(x ^ ((uint64_t)iz * 0x8CB92BA72F3D8DD7ull));
    return (float)(x >> 40) * (1.0f / 16777216.0f);
}

/* ---- tissue: value noise ---------------------------------------------- */

#define N_OCT 4
static const int oct_cell[N_OCT] = {256, 64, 16, 4};
static const float oct_amp[N_OCT] = {0.40f, 0.27f, 0.20f, 0.13f};
#define CONTRAST 1.7f
#define BLOB_AMP 0.25f

typedef struct {
    int s;          /* cell edge in pixels */
    int64_t nx, ny, nz;
    float *lat;     /* lattice values, nx*ny*nz */
    float *wt;      /* smoothstep weight of offset 0..s-1 inside a cell */
} octave_t;

static int octaves_make(octave_t *o, int64_t w, int64_t h, int64_t d, uint64_t seed)
{
    for (int k = 0; k < N_OCT; ++k) {
        int s = oct_cell[k];
        o[k].s = s;
        o[k].nx = w / s + 2;
        o[k].ny = h / s + 2;
        o[k].nz = d > 1 ? d / s + 2 : 1;
        int64_t n = o[k].nx * o[k].ny * o[k].nz;
        o[k].lat = malloc((size_t)n * sizeof(float));
        o[k].wt = malloc((size_t)s * sizeof(float));
        if (!o[k].lat || !o[k].wt) return -1;
        for (int i = 0; i < s; ++i) {
            float t = ((float)i + 0.5f) / (float)s;
            o[k].wt[i] = t * t * (3.0f - 2.0f * t);
        }
        int64_t nx = o[k].nx, ny = o[k].ny;
        float *lat = o[k].lat;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
        for (int64_t i = 0; i < n; ++i)
            lat[i] = lattice01(seed, k, i % nx, (i / nx) % ny, i / (nx * ny));
    }
    return 0;
}

static void octaves_free(octave_t *o)
{
    for (int k = 0; k < N_OCT; ++k) {
        free(o[k].lat);
        free(o[k].wt);
    }
}

void synth_tissue(void *out, iwpp_type t, int64_t w, int64_t h, int64_t d, uint64_t seed)
{
    octave_t o[N_OCT];
    memset(o, 0, sizeof o);
    if (octaves_make(o, w, h, d, seed) != 0) {
        octaves_free(o);
        memset(out, 0, (size_t)(w * h * d) * iwpp_type_size(t));
        return;
    }
    /* bright nuclei-like blobs (with nucleoli holes) on top of the texture */
    uint8_t *blobs = malloc((size_t)(w * h * d));
    if (blobs && synth_nuclei(blobs, w, h, d, seed + 7) != 0) {
        free(blobs);
        blobs = NULL;
    }
    int flat = d == 1;
    int64_t rows = h * d;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 16)
#endif
    for (int64_t r = 0; r < rows; ++r) {
        int64_t y = r % h, z = r / h;
        /* per octave: the two (or four) lattice rows around this pixel row and their weights */
        const float *row[N_OCT][4];
        float wy[N_OCT], wz[N_OCT];
        for (int k = 0; k < N_OCT; ++k) {
            int s = o[k].s;
            int64_t iy = y / s, iz = flat ? 0 : z / s;
            wy[k] = o[k].wt[y % s];
            wz[k] = flat ? 0.0f : o[k].wt[z % s];
            int64_t nx = o[k].nx, ny = o[k].ny;
            row[k][0] = o[k].lat + (iz * ny + iy) * nx;
            row[k][1] = o[k].lat + (iz * ny + iy + 1) * nx;
            row[k][2] = flat ? row[k][0] : o[k].lat + ((iz + 1) * ny + iy) * nx;
            row[k][3] = flat ? row[k][1] : o[k].lat + ((iz + 1) * ny + iy + 1) * nx;
        }
        for (int64_t x = 0; x < w; ++x) {
            float f = 0.0f;
            for (int k = 0; k < N_OCT; ++k) {
                int s = o[k].s;
                int64_t ix = x / s;
                float wx = o[k].wt[x % s];
                const float *const *rr = row[k];
                float a0 = rr[0][ix] + wx * (rr[0][ix + 1] - rr[0][ix]);
                float a1 = rr[1][ix] + wx * (rr[1][ix + 1] - rr[1][ix]);
                float v = a0 + wy[k] * (a1 - a0);
                if (!flat) {
                    float b0 = rr[2][ix] + wx * (rr[2][ix + 1] - rr[2][ix]);
                    float b1 = rr[3][ix] + wx * (rr[3][ix + 1] - rr[3][ix]);
                    float vb = b0 + wy[k] * (b1 - b0);
                    v = v + wz[k] * (vb - v);
                }
                f += oct_amp[k] * v;
            }
            if (blobs) f = f * (1.0f - BLOB_AMP) + (blobs[r * w + x] ? BLOB_AMP : 0.0f);
            f = (f - 0.5f) * CONTRAST + 0.5f;
            if (f < 0.0f) f = 0.0f;
            if (f > 1.0f) f = 1.0f;
            int64_t i = r * w + x;
            switch (t) {
            case IWPP_U8: ((uint8_t *)out)[i] = (uint8_t)(f * 255.0f + 0.5f); break;
            case IWPP_U16: ((uint16_t *)out)[i] = (uint16_t)(f * 65535.0f + 0.5f); break;
            case IWPP_F32: ((float *)out)[i] = f * 255.0f; break;
            default: break;
            }
        }
    }
    free(blobs);
    octaves_free(o);
}

/* ---- nuclei: disks / spheres ---------------------------------------------- */

typedef struct {
    double cx, cy, cz, r, hole; /* hole: radius of the central hole, 0 if none */
} blob_t;

typedef struct {
    uint64_t s;
} rng_t;

static double rng01(rng_t *g)
{
    g->s += 0x9E3779B97F4A7C15ull;
    return (double)(mix64(g->s) >> 11) * (1.0 / 9007199254740992.0);
}

/* Rows [y0, y1) of slice z: paint (value) the part of ball (cx,cy,cz,r) there. */
static void paint_ball(uint8_t *img, int64_t w, int64_t h, int64_t d, int64_t band0, int64_t band1,
                       double cx, double cy, double cz, double r, uint8_t value)
{
    /* A band is a range of rows (2D) or slices (3D). */
    int flat = d == 1;
    int64_t z0 = 0, z1 = 1, y0 = 0, y1 = h;
    if (flat) {
        y0 = (int64_t)ceil(cy - r);
        y1 = (int64_t)floor(cy + r) + 1;
        if (y0 < band0) y0 = band0;
        if (y1 > band1) y1 = band1;
    } else {
        z0 = (int64_t)ceil(cz - r);
        z1 = (int64_t)floor(cz + r) + 1;
        if (z0 < band0) z0 = band0;
        if (z1 > band1) z1 = band1;
    }
    for (int64_t z = z0; z < z1; ++z) {
        double dz = flat ? 0.0 : (double)z - cz;
        double rz2 = r * r - dz * dz;
        if (rz2 < 0) continue;
        double rz = sqrt(rz2);
        int64_t ya = flat ? y0 : (int64_t)ceil(cy - rz);
        int64_t yb = flat ? y1 : (int64_t)floor(cy + rz) + 1;
        if (ya < 0) ya = 0;
        if (yb > h) yb = h;
        for (int64_t y = ya; y < yb; ++y) {
            double dy = (double)y - cy;
            double q = rz2 - dy * dy;
            if (q < 0) continue;
            double half = sqrt(q);
            int64_t xa = (int64_t)ceil(cx - half), xb = (int64_t)floor(cx + half) + 1;
            if (xa < 0) xa = 0;
            if (xb > w) xb = w;
            if (xa < xb) memset(img + (z * h + y) * w + xa, value, (size_t)(xb - xa));
        }
    }
}

int synth_nuclei(uint8_t *out, int64_t w, int64_t h, int64_t d, uint64_t seed)
{
    int flat = d == 1;
    double rmin = flat ? 6.0 : 4.0, rmax = flat ? 16.0 : 10.0;
    double rmean = 0.5 * (rmin + rmax);
    double vol = flat ? M_PI * rmean * rmean : 4.0 / 3.0 * M_PI * rmean * rmean * rmean;
    double coverage = 0.20;
    int64_t n = (int64_t)(coverage * (double)(w * h * d) / vol) + 1;
    blob_t *b = malloc((size_t)n * sizeof *b);
    if (!b) return -1;
    rng_t g = {seed ^ 0x5DEECE66Dull};
    for (int64_t i = 0; i < n; ++i) {
        double r = rmin + (rmax - rmin) * rng01(&g);
        double cx = rng01(&g) * (double)w, cy = rng01(&g) * (double)h;
        double cz = flat ? 0.0 : rng01(&g) * (double)d;
        if (i % 4 == 1) { /* a sibling touching (or slightly overlapping) the previous blob */
            double dist = b[i - 1].r + r - 2.0 * rng01(&g);
            double a = 2.0 * M_PI * rng01(&g);
            double e = flat ? 0.0 : M_PI * (rng01(&g) - 0.5);
            cx = b[i - 1].cx + dist * cos(a) * cos(e);
            cy = b[i - 1].cy + dist * sin(a) * cos(e);
            cz = flat ? 0.0 : b[i - 1].cz + dist * sin(e);
        }
        b[i].cx = cx;
        b[i].cy = cy;
        b[i].cz = cz;
        b[i].r = r;
        b[i].hole = (i % 5 == 0) ? 0.35 * r : 0.0;
    }
    /* Bucket the blobs by bands of rows (2D) or slices (3D), so bands paint in parallel. */
    int64_t extent = flat ? h : d;
    int64_t band = flat ? 32 : 4;
    int64_t nb = (extent + band - 1) / band;
    int64_t *cnt = calloc((size_t)nb + 1, sizeof *cnt);
    if (!cnt) {
        free(b);
        return -1;
    }
    for (int64_t i = 0; i < n; ++i) {
        double c = flat ? b[i].cy : b[i].cz;
        int64_t lo = (int64_t)floor(c - b[i].r), hi = (int64_t)ceil(c + b[i].r);
        if (lo < 0) lo = 0;
        if (hi > extent - 1) hi = extent - 1;
        for (int64_t k = lo / band; lo <= hi && k <= hi / band; ++k) cnt[k + 1]++;
    }
    for (int64_t k = 0; k < nb; ++k) cnt[k + 1] += cnt[k];
    int64_t *idx = malloc((size_t)(cnt[nb] > 0 ? cnt[nb] : 1) * sizeof *idx);
    int64_t *fill = malloc((size_t)nb * sizeof *fill);
    if (!idx || !fill) {
        free(idx);
        free(fill);
        free(cnt);
        free(b);
        return -1;
    }
    memcpy(fill, cnt, (size_t)nb * sizeof *fill);
    for (int64_t i = 0; i < n; ++i) {
        double c = flat ? b[i].cy : b[i].cz;
        int64_t lo = (int64_t)floor(c - b[i].r), hi = (int64_t)ceil(c + b[i].r);
        if (lo < 0) lo = 0;
        if (hi > extent - 1) hi = extent - 1;
        for (int64_t k = lo / band; lo <= hi && k <= hi / band; ++k) idx[fill[k]++] = i;
    }
    memset(out, 0, (size_t)(w * h * d));
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1)
#endif
    for (int64_t k = 0; k < nb; ++k) {
        int64_t b0 = k * band, b1 = b0 + band < extent ? b0 + band : extent;
        for (int64_t j = cnt[k]; j < cnt[k + 1]; ++j) {
            const blob_t *p = &b[idx[j]];
            paint_ball(out, w, h, d, b0, b1, p->cx, p->cy, p->cz, p->r, 255);
        }
        /* holes after every disk of the band, so the result does not depend on order */
        for (int64_t j = cnt[k]; j < cnt[k + 1]; ++j) {
            const blob_t *p = &b[idx[j]];
            if (p->hole > 0) paint_ball(out, w, h, d, b0, b1, p->cx, p->cy, p->cz, p->hole, 0);
        }
    }
    free(fill);
    free(idx);
    free(cnt);
    free(b);
    return 0;
}

/* ---- spiral ---------------------------------------------------------------- */

static int spiral_free_cell(const uint8_t *m, int64_t w, int64_t h, int64_t x, int64_t y)
{
    return x >= 0 && y >= 0 && x < w && y < h && m[y * w + x] == 0;
}

static int spiral_can_move(const uint8_t *m, int64_t w, int64_t h, int64_t x, int64_t y, int dx,
                           int dy)
{
    int64_t nx = x + dx, ny = y + dy;
    if (!spiral_free_cell(m, w, h, nx, ny)) return 0;
    int64_t fx = nx + dx, fy = ny + dy;
    int outside = fx < 0 || fy < 0 || fx >= w || fy >= h;
    return outside || m[fy * w + fx] == 0; /* keep a one-pixel wall before visited corridor */
}

void synth_spiral(uint8_t *out, int64_t w, int64_t h, int64_t d)
{
    static const int dirs[4][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
    memset(out, 0, (size_t)(w * h * d));
    int64_t x = 0, y = 0;
    int k = 0;
    out[0] = 255;
    for (;;) {
        if (!spiral_can_move(out, w, h, x, y, dirs[k][0], dirs[k][1])) {
            int k2 = (k + 1) & 3;
            if (!spiral_can_move(out, w, h, x, y, dirs[k2][0], dirs[k2][1])) break;
            k = k2;
        }
        x += dirs[k][0];
        y += dirs[k][1];
        out[y * w + x] = 255;
    }
    for (int64_t z = 1; z < d; ++z) memcpy(out + z * w * h, out, (size_t)(w * h));
}

/* ---- pointwise helpers ----------------------------------------------------- */

double synth_h_for_type(double h, iwpp_type t)
{
    return t == IWPP_U16 ? h * 257.0 : h;
}

void synth_sub_sat(void *out, const void *in, iwpp_type t, int64_t n, double s)
{
    switch (t) {
    case IWPP_U8: {
        int v = (int)lround(s);
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
        for (int64_t i = 0; i < n; ++i) {
            int a = ((const uint8_t *)in)[i] - v;
            ((uint8_t *)out)[i] = (uint8_t)(a < 0 ? 0 : a > 255 ? 255 : a);
        }
        break;
    }
    case IWPP_U16: {
        long v = lround(s);
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
        for (int64_t i = 0; i < n; ++i) {
            long a = ((const uint16_t *)in)[i] - v;
            ((uint16_t *)out)[i] = (uint16_t)(a < 0 ? 0 : a > 65535 ? 65535 : a);
        }
        break;
    }
    case IWPP_F32: {
        float v = (float)s;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
        for (int64_t i = 0; i < n; ++i) ((float *)out)[i] = ((const float *)in)[i] - v;
        break;
    }
    default: break;
    }
}

void synth_add_sat(void *out, const void *in, iwpp_type t, int64_t n, double s)
{
    synth_sub_sat(out, in, t, n, -s);
}

/* ---- EDT families ------------------------------------------------------ */

static const char *const edt_families[] = {
    "nuclei",   "line0",     "line1",     "line45",    "line89",   "cross",     "ring_n16",
    "ring_n4",  "ring_n2",   "ring_n1",   "disk_n2",   "corner",   "row",       "col",
    "checker1", "checker8",  "checker64", "rand_1e-6", "rand_1e-4", "rand_1e-2", "rand_0.1",
    "rand_0.5"};

int synth_edt_family_count(void) { return (int)(sizeof edt_families / sizeof edt_families[0]); }

const char *synth_edt_family_name(int i)
{
    return i >= 0 && i < synth_edt_family_count() ? edt_families[i] : NULL;
}

/* background along the line through (cx, cy) at angle deg (degrees from the x axis), every slice */
static void edt_line(uint8_t *o, int64_t w, int64_t h, double deg)
{
    const double cx = (double)(w - 1) / 2.0, cy = (double)(h - 1) / 2.0;
    const double a = deg * M_PI / 180.0, c = cos(a), s = sin(a);
    if (fabs(s) <= fabs(c)) { /* shallow: one pixel per column */
        for (int64_t x = 0; x < w; ++x) {
            const int64_t y = (int64_t)floor(cy + (s / c) * ((double)x - cx) + 0.5);
            if (y >= 0 && y < h) o[y * w + x] = 0;
        }
    } else { /* steep: one pixel per row */
        for (int64_t y = 0; y < h; ++y) {
            const int64_t x = (int64_t)floor(cx + (c / s) * ((double)y - cy) + 0.5);
            if (x >= 0 && x < w) o[y * w + x] = 0;
        }
    }
}

int synth_edt_family(uint8_t *out, const char *name, int64_t w, int64_t h, int64_t d, uint64_t seed)
{
    const int64_t plane = w * h, n = plane * d;
    const int64_t side = w > h ? w : h;
    if (!strcmp(name, "nuclei")) return synth_nuclei(out, w, h, d, seed);
    memset(out, 255, (size_t)n);
    if (!strncmp(name, "line", 4) || !strcmp(name, "cross")) {
        /* the same picture on every slice (in 3D a sheet of background) */
        if (!strcmp(name, "cross")) {
            edt_line(out, w, h, 45.0);
            edt_line(out, w, h, -45.0);
        } else {
            char *end = NULL;
            const double deg = strtod(name + 4, &end);
            if (!end || *end) return -1;
            edt_line(out, w, h, deg);
        }
        for (int64_t z = 1; z < d; ++z) memcpy(out + z * plane, out, (size_t)plane);
        return 0;
    }
    if (!strncmp(name, "ring_n", 6) || !strcmp(name, "disk_n2")) {
        /* a one-pixel shell of radius side/k around the centre (k = 1: around the corner 0),
         * or a filled ball of radius side/2 */
        const int disk = name[0] == 'd';
        const int k = disk ? 2 : atoi(name + 6);
        if (k < 1) return -1;
        const int64_t r = side / k;
        const int64_t cx = k == 1 ? 0 : w / 2, cy = k == 1 ? 0 : h / 2, cz = k == 1 || d == 1 ? 0 : d / 2;
        const int64_t lo = (2 * r - 1) * (2 * r - 1), hi = (2 * r + 1) * (2 * r + 1);
        for (int64_t z = 0; z < d; ++z)
            for (int64_t y = 0; y < h; ++y)
                for (int64_t x = 0; x < w; ++x) {
                    const int64_t dx = x - cx, dy = y - cy, dz = z - cz;
                    const int64_t q = 4 * (dx * dx + dy * dy + dz * dz); /* (2 * distance)^2 */
                    if (disk ? q < hi : (q >= lo && q < hi)) out[(z * h + y) * w + x] = 0;
                }
        return 0;
    }
    if (!strcmp(name, "corner")) {
        out[0] = 0;
        return 0;
    }
    if (!strcmp(name, "row") || !strcmp(name, "col")) {
        /* the first row (3D: the plane y = 0) or the first column (3D: the plane x = 0) */
        for (int64_t z = 0; z < d; ++z)
            for (int64_t i = 0; i < (name[0] == 'r' ? w : h); ++i)
                out[z * plane + (name[0] == 'r' ? i : i * w)] = 0;
        return 0;
    }
    if (!strncmp(name, "checker", 7)) {
        const int64_t c = atoll(name + 7);
        if (c < 1) return -1;
        for (int64_t z = 0; z < d; ++z)
            for (int64_t y = 0; y < h; ++y)
                for (int64_t x = 0; x < w; ++x)
                    if (((x / c + y / c + z / c) & 1) == 0) out[(z * h + y) * w + x] = 0;
        return 0;
    }
    if (!strncmp(name, "rand_", 5)) {
        char *end = NULL;
        const double p = strtod(name + 5, &end);
        if (!end || *end || !(p > 0.0 && p <= 1.0)) return -1;
        /* pixel i is background when its hash, as a fraction of 2^53, is below p */
        const uint64_t cut = (uint64_t)(p * 9007199254740992.0);
        const uint64_t key = mix64(seed ^ 0x5EEDED7ull);
        for (int64_t i = 0; i < n; ++i)
            if ((mix64(key ^ ((uint64_t)i * 0x9E3779B97F4A7C15ull)) >> 11) < cut) out[i] = 0;
        return 0;
    }
    return -1;
}

/* ---- histo: a bright-field section of stained tissue, in gray ------------ */

/* Value noise of one octave at (x, y): smoothstep interpolation of lattice values, cell s px. */
static float histo_noise(uint64_t seed, int oct, int64_t x, int64_t y, int s)
{
    const int64_t ix = x / s, iy = y / s;
    float tx = ((float)(x - ix * s) + 0.5f) / (float)s, ty = ((float)(y - iy * s) + 0.5f) / (float)s;
    tx = tx * tx * (3.0f - 2.0f * tx);
    ty = ty * ty * (3.0f - 2.0f * ty);
    const float a = lattice01(seed, oct, ix, iy, 0), b = lattice01(seed, oct, ix + 1, iy, 0);
    const float c = lattice01(seed, oct, ix, iy + 1, 0), d = lattice01(seed, oct, ix + 1, iy + 1, 0);
    return (a + (b - a) * tx) + ((c + (d - c) * tx) - (a + (b - a) * tx)) * ty;
}

int synth_histo(uint8_t *out, int64_t w, int64_t h, uint64_t seed)
{
    /* The smooth fields on a coarse grid (every 8 px), bilinearly interpolated per pixel. */
    const int64_t G = 8, gw = w / G + 2, gh = h / G + 2;
    float *tissue = malloc((size_t)(gw * gh) * sizeof(float));
    float *stain = malloc((size_t)(gw * gh) * sizeof(float));
    float *fdir = malloc((size_t)(gw * gh) * sizeof(float));
    if (!tissue || !stain || !fdir) {
        free(tissue);
        free(stain);
        free(fdir);
        return -1;
    }
    const double cx = 0.45 * (double)w, cy = 0.55 * (double)h;
    const double rmax2 = (double)w * w + (double)h * h;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (int64_t gy = 0; gy < gh; ++gy)
        for (int64_t gx = 0; gx < gw; ++gx) {
            const int64_t x = gx * G, y = gy * G, i = gy * gw + gx;
            /* tissue where large-scale noise is high: big connected areas, lumens, a ragged edge */
            tissue[i] = 0.55f * histo_noise(seed, 10, x, y, 1024) + 0.30f * histo_noise(seed, 11, x, y, 256) +
                        0.15f * histo_noise(seed, 12, x, y, 64);
            stain[i] = histo_noise(seed, 13, x, y, 96);
            fdir[i] = (float)M_PI * 2.0f * histo_noise(seed, 14, x, y, 512);
        }
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (int64_t y = 0; y < h; ++y) {
        const int64_t gy = y / G;
        const float ty = ((float)(y - gy * G) + 0.5f) / (float)G;
        for (int64_t x = 0; x < w; ++x) {
            const int64_t gx = x / G, i = gy * gw + gx;
            const float tx = ((float)(x - gx * G) + 0.5f) / (float)G;
#define HBIL(F) ((F[i] + (F[i + 1] - F[i]) * tx) * (1.0f - ty) + (F[i + gw] + (F[i + gw + 1] - F[i + gw]) * tx) * ty)
            const float tv = HBIL(tissue), sv = HBIL(stain), dv = HBIL(fdir);
#undef HBIL
            /* illumination falls off towards the corners (vignetting): about 30 levels */
            const double r2 = ((double)x - cx) * ((double)x - cx) + ((double)y - cy) * ((double)y - cy);
            const float illum = 1.0f - 0.13f * (float)(r2 / rmax2 * 2.0);
            const uint64_t hsh = mix64(seed ^ (0x51ED2701ull + (uint64_t)(y * w + x) * 0x9E3779B97F4A7C15ull));
            const float grain = ((float)(hsh >> 40) * (1.0f / 16777216.0f) - 0.5f) * 6.0f;
            float v;
            /* soft edge between glass and tissue */
            const float edge = (tv - 0.42f) * 40.0f;
            const float tw = edge <= 0.0f ? 0.0f : edge >= 1.0f ? 1.0f : edge;
            /* stroma: fibres along a slowly turning direction, a patchy stain */
            const float u = (float)x * cosf(dv) + (float)y * sinf(dv);
            const float fib = 0.5f + 0.5f * sinf(u * 0.55f + 3.0f * histo_noise(seed, 15, x, y, 16));
            const float stroma = 185.0f - 45.0f * sv - 22.0f * fib;
            v = (1.0f - tw) * 238.0f + tw * stroma;
            v = v * illum + grain;
            out[y * w + x] = (uint8_t)(v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v + 0.5f);
        }
    }
    /* Nuclei: dark ellipses with chromatin texture, in clusters, only on tissue. */
    const int64_t cell = 20;
    for (int64_t cyi = 0; cyi < h / cell + 1; ++cyi)
        for (int64_t cxi = 0; cxi < w / cell + 1; ++cxi) {
            uint64_t r = mix64(seed * 0x2545F4914F6CDD1Dull ^ mix64((uint64_t)(cyi * 1000003 + cxi)));
            const int64_t nx = cxi * cell + (int64_t)(r % (uint64_t)cell);
            r = mix64(r);
            const int64_t ny = cyi * cell + (int64_t)(r % (uint64_t)cell);
            if (nx >= w || ny >= h) continue;
            const int64_t gi = (ny / G) * gw + nx / G;
            /* dense where the stain is strong, none on glass */
            const float dens = tissue[gi] < 0.44f ? 0.0f : 0.15f + 0.7f * stain[gi];
            r = mix64(r);
            if ((float)(r >> 40) * (1.0f / 16777216.0f) >= dens) continue;
            r = mix64(r);
            const double ra = 4.0 + (double)(r % 1000) / 1000.0 * 6.0;
            r = mix64(r);
            const double rb = ra * (0.55 + (double)(r % 1000) / 1000.0 * 0.4);
            r = mix64(r);
            const double th = (double)(r % 1000) / 1000.0 * M_PI;
            r = mix64(r);
            const double depth = 70.0 + (double)(r % 1000) / 1000.0 * 50.0;
            const double ct = cos(th), st = sin(th);
            const int64_t R = (int64_t)ra + 2;
            for (int64_t y = ny - R; y <= ny + R; ++y) {
                if (y < 0 || y >= h) continue;
                for (int64_t x = nx - R; x <= nx + R; ++x) {
                    if (x < 0 || x >= w) continue;
                    const double dx = (double)(x - nx), dy = (double)(y - ny);
                    const double a = (dx * ct + dy * st) / ra, b = (-dx * st + dy * ct) / rb;
                    const double q = sqrt(a * a + b * b);
                    if (q >= 1.15) continue;
                    /* darker rim, texture inside, a soft edge */
                    const double wgt = q <= 0.85 ? 1.0 : (1.15 - q) / 0.3;
                    const double chrom = 20.0 * (histo_noise(seed, 16, x, y, 3) - 0.5) - (q > 0.7 ? 12.0 : 0.0);
                    const double target = depth + chrom;
                    const double cur = out[y * w + x];
                    double nv = cur + (target - cur) * wgt;
                    if (nv < cur) out[y * w + x] = (uint8_t)(nv < 0.0 ? 0.0 : nv + 0.5);
                }
            }
        }
    free(tissue);
    free(stain);
    free(fdir);
    return 0;
}
