/*
 * tiles.c - the tile scheduler: reconstruction by tiles, for images beyond a device's memory
 * budget and for one image shared by several workers (GPUs, CPU threads).
 *
 * Scheme (paper 000 sec. 4, written for any backend through the ops table):
 *  - The image stays in host memory: the caller's marker J (worked on in place) and mask I.
 *    It is cut into a grid of tiles; a tile's region is the tile plus a one-pixel halo.
 *  - A worker takes the next queued tile, copies its region of J and I into host scratch,
 *    uploads both, clips J to I and reconstructs the region on its device with the backend's
 *    own in-memory algorithm (FH_GPU, Fast Hybrid ...), downloads it, and writes back the
 *    tile's interior (never the halo: that belongs to the neighbours).
 *  - If a pixel on the tile's outer frame changed, each neighbour whose halo holds it is
 *    queued again (or, if it is running now, re-queued when it ends). The call ends when no
 *    tile is queued or running: then every pixel is stable under the elementary geodesic
 *    dilation (erosion) across tile borders too, and J is the reconstruction, bit for bit.
 *    Every value written is between the clipped marker and the result (local reconstructions
 *    of values below the result stay below it), so the order of the tiles does not matter.
 *  - A tile that ran once runs again on the host (rerun_on_host): Vincent's queue seeded by the
 *    halo pixels that changed since, no transfers; one that pops for as long as a full run
 *    would take goes back to a device for a full run (a flood from a late neighbour).
 *  - No data race on J: a tile's interior is written only by the worker running it, and only
 *    the outer frame of an interior is read by others (as their halo); a tile's frame is
 *    written, and read as its neighbours' halos, under that tile's own lock (s->tl), the rest
 *    without a lock; the scheduler's lock guards only its queues and counters.
 *  - Workers are contexts of their own (kept in the caller's context between calls), each
 *    driven by one thread, a device worker by two (tiles.host_threads) that take turns on its
 *    device buffers: one copies its next tile in and its last one out while the other's tile is
 *    on the device. Several workers on one GPU use their own streams/queues, so one's copies
 *    overlap the others' kernels. The calling thread only reports progress and can cancel.
 *
 * Size: about 2000 lines: reconstruction and EDT by tiles share the worker pool, the tile
 * buffers and the budgets, which stay private (static) to this file; the EDT is the last third
 * ("exact EDT beyond the budget").
 */
#define _POSIX_C_SOURCE 200809L
#include "tiles.h"
#include "dispatch.h"
#include "neighborhood.h"
#include "workpool.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Host copies of large tiles use a few OpenMP threads (each worker its share of the cores). */
#ifdef _OPENMP
#define IWPP_TILES_PRAGMA(x) _Pragma(#x)
#define IWPP_TILES_OMP(x) IWPP_TILES_PRAGMA(x)
#else
#define IWPP_TILES_OMP(x)
#endif

/* A hint to fetch the cache line at address @p a (an integer: it may lie past the image, where a
 * prefetch does nothing). The host re-runs walk a tile's columns and its wavefronts, a new row of
 * J and of I for each pixel: one cache miss after another, unless fetched ahead. */
#if defined(__GNUC__) || defined(__clang__)
#define IWPP_PREFETCH(a) __builtin_prefetch((const void *)(uintptr_t)(a))
#else
#define IWPP_PREFETCH(a) ((void)(a))
#endif
#define SEED_AHEAD 8 /* rows: a halo column's pixels fetched ahead */

/* ------------------------------------------------------------------------ */
/* worker lists                                                             */

static int parse_count(const char **p, int *count)
{
    *count = 1;
    if (**p != '*') return 1;
    ++*p;
    char *end = NULL;
    long v = strtol(*p, &end, 10);
    if (end == *p || v < 1 || v > IWPP_MAX_WORKERS) return 0;
    *p = end;
    *count = (int)v;
    return 1;
}

static iwpp_status add_spec(iwpp_context *ctx, iwpp_worker_spec *out, int *n, iwpp_backend b, int dev,
                            int count)
{
    if (*n >= IWPP_MAX_WORKER_SPECS)
        return iwpp_set_error(ctx, IWPP_EINVAL, "worker list: more than %d items", IWPP_MAX_WORKER_SPECS);
    out[*n].backend = b;
    out[*n].device = dev;
    out[*n].count = count;
    ++*n;
    return IWPP_OK;
}

static int gpu_count(iwpp_backend b)
{
    int n = iwpp_device_count(b);
    if (b != IWPP_BACKEND_OPENCL) return n;
    int g = 0;
    for (int i = 0; i < n; ++i) {
        iwpp_device_info info;
        if (iwpp_device_info_get(b, i, &info) == IWPP_OK && info.is_gpu) ++g;
    }
    return g;
}

iwpp_status iwpp_workers_parse(iwpp_context *ctx, const char *spec)
{
    iwpp_worker_spec list[IWPP_MAX_WORKER_SPECS];
    int n = 0, total = 0;
    const char *p = spec ? spec : "";
    iwpp_status st;
    while (*p) {
        while (*p == ' ' || *p == ',') ++p;
        if (!*p) break;
        const char *item = p;
        size_t len = strcspn(p, ",* ");
        int count = 1, dev = 0;
        iwpp_backend b;
        if (len == 3 && strncmp(p, "gpu", 3) == 0) {
            b = ctx->ops->kind;
            dev = b == IWPP_BACKEND_CPU ? 0 : ctx->device;
            p += len;
        } else if (len == 3 && strncmp(p, "cpu", 3) == 0) {
            b = IWPP_BACKEND_CPU;
            p += len;
            if (*p != '*') count = iwpp_cpu_threads(ctx) < 64 ? iwpp_cpu_threads(ctx) : 64;
        } else if (len == 8 && strncmp(p, "all-gpus", 8) == 0) {
            p += len;
            if (!parse_count(&p, &count)) goto bad;
            iwpp_backend gb = gpu_count(IWPP_BACKEND_CUDA) > 0 ? IWPP_BACKEND_CUDA : IWPP_BACKEND_OPENCL;
            int ng = gpu_count(gb), added = 0, nd = iwpp_device_count(gb);
            for (int d = 0; d < nd && added < ng; ++d) {
                iwpp_device_info info;
                if (iwpp_device_info_get(gb, d, &info) != IWPP_OK || !info.is_gpu) continue;
                if ((st = add_spec(ctx, list, &n, gb, d, count))) return st;
                total += count;
                ++added;
            }
            if (added == 0)
                return iwpp_set_error(ctx, IWPP_EINVAL,
                                      "worker list \"%s\": \"all-gpus\" found no GPU (CUDA or OpenCL) on "
                                      "this machine; use \"cpu\"",
                                      spec);
            continue;
        } else if ((len > 5 && strncmp(p, "cuda:", 5) == 0) || (len > 7 && strncmp(p, "opencl:", 7) == 0)) {
            b = p[0] == 'c' ? IWPP_BACKEND_CUDA : IWPP_BACKEND_OPENCL;
            const char *d = p + (b == IWPP_BACKEND_CUDA ? 5 : 7);
            char *end = NULL;
            long v = strtol(d, &end, 10);
            if (end != p + len || v < 0 || v > 1024) goto bad;
            dev = (int)v;
            p += len;
            int nd = iwpp_device_count(b);
            if (dev >= nd)
                return iwpp_set_error(ctx, IWPP_EINVAL,
                                      "worker list \"%s\": %s device %d does not exist (%d found)", spec,
                                      iwpp_backend_name(b), dev, nd);
        } else {
            goto bad;
        }
        if (!parse_count(&p, &count)) goto bad;
        if (*p && *p != ',' && *p != ' ') goto bad;
        if ((st = add_spec(ctx, list, &n, b, dev, count))) return st;
        total += count;
        if (total > IWPP_MAX_WORKERS)
            return iwpp_set_error(ctx, IWPP_EINVAL, "worker list \"%s\" asks for more than %d workers", spec,
                                  IWPP_MAX_WORKERS);
        continue;
    bad:
        return iwpp_set_error(ctx, IWPP_EINVAL,
                              "worker list \"%s\": cannot read \"%.*s\"; use items such as gpu, gpu*2, "
                              "cuda:0, opencl:1, all-gpus, cpu, cpu*4, separated by commas",
                              spec, (int)strcspn(item, ","), item);
    }
    if (total > IWPP_MAX_WORKERS)
        return iwpp_set_error(ctx, IWPP_EINVAL, "worker list \"%s\" asks for more than %d workers", spec,
                              IWPP_MAX_WORKERS);
    iwpp_tiles_release(ctx);
    memcpy(ctx->workers, list, sizeof list[0] * (size_t)n);
    ctx->nworker_specs = n;
    return IWPP_OK;
}

/* ------------------------------------------------------------------------ */
/* budgets                                                                  */

/* Device bytes per pixel of an in-memory reconstruction on @p kind, beyond the marker and mask
 * buffers: CUDA's wavefront and block queues (about a quarter of a 4-byte index per pixel when
 * the raster scans did their work) and OpenCL's 32-bit working copy of J plus its queues. */
static double extra_bytes_per_pixel(iwpp_backend kind)
{
    switch (kind) {
    case IWPP_BACKEND_CUDA: return 4.5;
    case IWPP_BACKEND_OPENCL: return 8.5;
    default: return 0.0;
    }
}

static double recon_bytes(iwpp_backend kind, iwpp_type type, double pixels)
{
    /* devices: plus the queues' fixed part; the CPU's working set is the two images */
    return pixels * (2.0 * (double)iwpp_type_size(type) + extra_bytes_per_pixel(kind)) +
           (kind == IWPP_BACKEND_CPU ? 0.0 : (double)(64 << 20));
}

/* The budget of ctx's own device: the limit set, else the free memory (0 = none known). */
static double device_budget(iwpp_context *ctx)
{
    if (ctx->memory_limit) return (double)ctx->memory_limit;
    if (ctx->ops->kind == IWPP_BACKEND_CPU || !ctx->ops->mem_free) return 0.0;
    return (double)ctx->ops->mem_free(ctx);
}

/* With the default budget a call is tried in memory first and goes by tiles only if the device
 * runs out (dispatch.c): the estimates are upper bounds, and guessing wrong in that direction
 * made a 65536^2 EDT that fits run 5x slower by tiles on the H100. */
int iwpp_tiles_needed(iwpp_context *ctx, iwpp_type type, const iwpp_image *like)
{
    if (ctx->nworker_specs > 0) return 1;
    if (ctx->memory_limit == 0) return 0;
    double budget = device_budget(ctx);
    if (budget <= 0.0) return 0;
    double n = (double)like->width * (double)like->height * (double)like->depth;
    return recon_bytes(ctx->ops->kind, type, n) > budget;
}

/* ------------------------------------------------------------------------ */
/* the grid                                                                 */

typedef struct grid {
    int64_t dim[3];  /* image sizes */
    int64_t tsz[3];  /* tile sizes (interior) */
    int64_t cnt[3];  /* tiles along each axis */
    int64_t n;       /* tiles in all */
} grid;

/* Interior [lo, hi) and region (interior + halo, clipped) of tile k. */
static void tile_box(const grid *g, int64_t k, int64_t lo[3], int64_t hi[3], int64_t rlo[3], int64_t rhi[3])
{
    int64_t c[3] = {k % g->cnt[0], (k / g->cnt[0]) % g->cnt[1], k / (g->cnt[0] * g->cnt[1])};
    for (int a = 0; a < 3; ++a) {
        lo[a] = c[a] * g->tsz[a];
        hi[a] = lo[a] + g->tsz[a] < g->dim[a] ? lo[a] + g->tsz[a] : g->dim[a];
        rlo[a] = lo[a] > 0 ? lo[a] - 1 : 0;
        rhi[a] = hi[a] < g->dim[a] ? hi[a] + 1 : hi[a];
    }
}

/* Square (cube) tiles whose region has at most @p max_pixels pixels, grown along the axes the
 * image is short on (grid_make's fallback). */
static void grid_square(grid *g, double max_pixels, int dims)
{
    int64_t t[3] = {1, 1, 1};
    double left = max_pixels;
    /* smallest axis first: an axis shorter than the fair share takes all of itself */
    int order[3] = {0, 1, 2};
    for (int i = 0; i < dims; ++i)
        for (int j = i + 1; j < dims; ++j)
            if (g->dim[order[j]] < g->dim[order[i]]) {
                int x = order[i];
                order[i] = order[j];
                order[j] = x;
            }
    for (int i = 0; i < dims; ++i) {
        int a = order[i];
        double share = pow(left, 1.0 / (double)(dims - i)); /* region edge for this axis */
        int64_t e = (int64_t)floor(share) - 2;               /* minus the halo */
        if (e < 2) e = 2;
        if (e >= g->dim[a]) e = g->dim[a];
        t[a] = e;
        left /= (double)(e + 2);
        if (left < 1) left = 1;
    }
    for (int a = 0; a < 3; ++a) {
        if (a >= dims) t[a] = g->dim[a];
        g->tsz[a] = t[a];
        g->cnt[a] = (g->dim[a] + t[a] - 1) / t[a];
    }
}

/* Tile edge along an axis cut into c equal parts, and its region's edge (the halo where cut). */
static int64_t cut_edge(int64_t dim, int64_t c) { return (dim + c - 1) / c; }
static int64_t region_edge(int64_t dim, int64_t c) { return cut_edge(dim, c) + (c > 1 ? 2 : 0); }

/* Fewest cuts of the last axis (dim) such that a region of @p other pixels across it fits
 * @p max_pixels; 0 if none does. */
static int64_t last_axis_cuts(int64_t dim, double other, double max_pixels)
{
    if (other * (double)dim <= max_pixels) return 1;
    const double e = floor(max_pixels / other) - 2.0; /* the longest tile edge that fits */
    if (e < 2.0) return 0;
    int64_t c = (int64_t)ceil((double)dim / e);
    while (c > 1 && (double)region_edge(dim, c - 1) * other <= max_pixels) --c; /* (rounding) */
    while (c < dim && (double)region_edge(dim, c) * other > max_pixels) ++c;
    return (double)region_edge(dim, c) * other <= max_pixels ? c : 0;
}

/* Whether cuts c[] make tiles no more than twice as long as wide: the longest edge (an uncut
 * axis counts whole) against the shortest edge of a cut axis. */
static int grid_shapely(const int64_t dim[3], const int64_t c[3], int dims)
{
    int64_t lo = 0, hi = 0;
    for (int a = 0; a < dims; ++a) {
        const int64_t e = cut_edge(dim[a], c[a]);
        if (e > hi) hi = e;
        if (c[a] > 1 && (lo == 0 || e < lo)) lo = e;
    }
    return lo == 0 || hi <= 2 * lo;
}

/* Tiles for an image: the fewest (at least @p min_tiles) whose regions hold at most
 * @p max_pixels pixels, cut evenly along each axis and at most twice as long as wide; of equal
 * counts the smallest regions. (Square tiles of the largest size left a thin last column and
 * row: 8192^2 in 2362-pixel tiles made 4 x 4, where 3 x 4 of 2731 x 2048 fit as well.) */
static void grid_make(grid *g, const iwpp_image *im, double max_pixels, int64_t min_tiles)
{
    g->dim[0] = im->width, g->dim[1] = im->height, g->dim[2] = im->depth;
    const int dims = im->depth > 1 ? 3 : 2;
    if (max_pixels < 64) max_pixels = 64;
    if (min_tiles < 1) min_tiles = 1;
    int64_t best_n = 0, best_c[3] = {1, 1, 1};
    double best_px = 0.0;
    const int64_t c1max = dims == 3 ? g->dim[1] : 1;
    for (int64_t c0 = 1; c0 <= g->dim[0] && (best_n == 0 || c0 <= best_n); ++c0) {
        if (c0 > 1 && cut_edge(g->dim[0], c0) == cut_edge(g->dim[0], c0 - 1)) continue;
        for (int64_t c1 = 1; c1 <= c1max && (best_n == 0 || c0 * c1 <= best_n); ++c1) {
            if (c1 > 1 && cut_edge(g->dim[1], c1) == cut_edge(g->dim[1], c1 - 1)) continue;
            int64_t c[3] = {c0, c1, 1};
            const int last = dims - 1;
            double other = (double)region_edge(g->dim[0], c0);
            if (dims == 3) other *= (double)region_edge(g->dim[1], c1);
            int64_t cl = last_axis_cuts(g->dim[last], other, max_pixels);
            if (cl == 0) continue;
            const int64_t need = (min_tiles + c0 * c1 - 1) / (c0 * c1);
            if (cl < need) cl = need < g->dim[last] ? need : g->dim[last];
            c[last] = cl;
            if (!grid_shapely(g->dim, c, dims)) continue;
            const int64_t n = c[0] * c[1] * c[2];
            const double px = other * (double)region_edge(g->dim[last], cl);
            if (best_n == 0 || n < best_n || (n == best_n && px < best_px)) {
                best_n = n, best_px = px;
                memcpy(best_c, c, sizeof c);
            }
        }
    }
    if (best_n == 0) {
        grid_square(g, max_pixels, dims);
    } else {
        for (int a = 0; a < 3; ++a) {
            g->cnt[a] = best_c[a];
            g->tsz[a] = cut_edge(g->dim[a], best_c[a]);
        }
    }
    for (int a = 0; a < 3; ++a) g->cnt[a] = (g->dim[a] + g->tsz[a] - 1) / g->tsz[a];
    g->n = g->cnt[0] * g->cnt[1] * g->cnt[2];
}

/* ------------------------------------------------------------------------ */
/* the scheduler                                                            */

enum { T_IDLE = 0, T_QUEUED, T_RUNNING, T_RUNNING_DIRTY };

/* A tile's lock, 128 bytes apart from the next: neighbours take theirs side by side, and locks
 * sharing a cache line would pass it between cores at every frame write. */
typedef union tile_lock {
    pthread_mutex_t m;
    char pad[128];
} tile_lock;

typedef struct sched {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    grid g;
    iwpp_image J;       /* the caller's marker (in place) */
    const iwpp_image *I;
    size_t es;
    int64_t sy[2], sz[2]; /* effective strides of J, I */
    int conn;
    iwpp_morph_mode mode;
    unsigned char *state;
    int32_t *runs;
    unsigned char **halo; /* per tile: its halo's values at its last run (canonical order) */
    /* Frame versions: fver[FVER_STRIDE n + b] counts tile n's writes of frame pixels that its
       neighbour in direction b sees (bumped under n's lock, atomically: a re-run reads them
       without the locks first); seen[27 k + b] is the count of the neighbour in direction b
       (for its side facing k) when k last read its halo. A re-run locks and reads only the
       neighbours that wrote since: a side column is a cache line a row, and each lock it takes
       keeps up to eight other tiles from their halos. (Session 24's trace of the H100 machine
       at 8192^2 and 56 MB: the re-runs waited 9-15 ms a call, summed, for all eight
       neighbours' locks, 2-4 ms for those with news.) */
    uint32_t *fver, *seen;
#define FVER_STRIDE 32 /* counts per tile: 128 bytes, no cache line shared with a neighbour's */
    /* per tile: a tile's frame (the pixels its neighbours see in their halos) is written under
       its lock and read under it; s->lock guards the scheduler's state. (One lock for both
       made each re-run pop cost 0.2 -> 0.7 us with 3 -> 7 workers on the H100.) */
    tile_lock *tl;
    int tl_made;
    /* queued tiles: [0] full runs: never run yet, or handed over by a long re-run (a device's
       work), [1] to run again (host queue work);
       FIFOs of capacity g.n (a tile is queued at most once) */
    int64_t *ring[2];
    int64_t qhead[2], qcount[2];
    int gpu_workers;    /* > 0: CPU workers leave first runs to the devices */
    /* re-runs that grow long go to the backend's whole reconstruction (rerun_on_host): per tile,
       whether its next run is such a full run; the time and region pixels of full runs so far
       (of the devices', when there are devices), whose ratio prices a full run; tiles.rerun_pops
       (tests: a re-run gives up after that many pops; "off", -1 here: never) */
    unsigned char *full;
    double full_ms, full_px;
    int64_t pop_cap;
    int64_t full_reruns; /* re-runs that gave up for a full run */
    int running;
    int stop;           /* error or cancel: workers leave */
    iwpp_status st;
    char msg[1024];
    int64_t done;       /* tile runs finished */
    FILE *trace;        /* tiles.trace: a line per tile run (bench/tiles_trace.py reads them) */
    double t0;          /* the call's start (iwpp_now_ms) */
} sched;

typedef struct worker {
    sched *s;
    iwpp_context *ctx;
    iwpp_buf bj, bi;      /* device buffers of the largest region */
    unsigned char *hj, *hi; /* host scratch of the largest region: the marker's; the mask's
                               (device workers; NULL: the CPU reads the caller's array) */
    int copy_threads;        /* host threads for gather/scatter */
    int64_t tiles;
    int64_t up, down;
    double first_ms, rerun_ms; /* time in full runs (device: first runs, long re-runs) and host re-runs */
    int64_t rerun_pops;        /* pixels taken off re-run queues */
    int64_t overflows;         /* queue-overflow passes of its device's runs */
    /* A device worker may have more host threads (tiles.host_threads): each a worker of its own
       here (its host scratch, counters, thread) with twin_of set, sharing the first one's
       context and device buffers, which dev_lock (the first one's) gives to one at a time. */
    struct worker *twin_of;
    pthread_mutex_t dev_lock;
    double wait_ms;            /* of the current full run, waiting for dev_lock */
    double mark[5];            /* tiles.trace: the current full run's gathered, device held,
                                  uploaded (and clipped), reconstructed, downloaded times */
    double rmark[3];           /* tiles.trace: the current host re-run's neighbours locked, halo
                                  copied, seeds offered times */
    int64_t rseeds;            /* tiles.trace: the halo pixels that changed for it */
    char msg[1024];            /* an error of this thread ("" = see ctx->message) */
    int index; /* in the scheduler's list (tiles.trace) */
} worker;

static unsigned char *scratch_alloc(iwpp_context *c, size_t bytes, int *pinned)
{
    *pinned = 0;
    if (c->ops->host_alloc) {
        void *p = c->ops->host_alloc(c, bytes);
        if (p) {
            *pinned = 1;
            return p;
        }
    }
    return malloc(bytes ? bytes : 1);
}

static void scratch_free(iwpp_context *c, void *p, int pinned)
{
    if (!p) return;
    if (pinned && c && c->ops->host_free)
        c->ops->host_free(c, p);
    else if (!pinned)
        free(p);
    /* (pinned memory whose backend is gone: the backend's close released its allocations) */
}

static void queue_push(sched *s, int64_t k)
{
    const int q = s->runs[k] > 0 && !s->full[k];
    s->ring[q][(s->qhead[q] + s->qcount[q]) % s->g.n] = k;
    s->qcount[q]++;
    s->state[k] = T_QUEUED;
}

static int64_t queued(const sched *s) { return s->qcount[0] + s->qcount[1]; }

/* The queue worker @p w takes from next, or -1 if none suits it now. Devices take first runs
 * first (their raster scans are where a device beats the host); CPU workers, when there are
 * devices, take only re-runs: a first run of a large tile on one core would hold the call's end
 * (measured on the H100: 8 CPU workers beside the GPU made 32768^2 2x slower). */
static int pick_queue(const sched *s, const worker *w)
{
    const int cpu = w->ctx->ops->kind == IWPP_BACKEND_CPU;
    if (cpu && s->gpu_workers > 0) return s->qcount[1] > 0 ? 1 : -1;
    if (s->qcount[0] > 0) return 0;
    return s->qcount[1] > 0 ? 1 : -1;
}

/* A neighbour's halo changed: run it (again). Called under the lock. */
static void mark_dirty(sched *s, int64_t k)
{
    if (s->state[k] == T_IDLE)
        queue_push(s, k);
    else if (s->state[k] == T_RUNNING)
        s->state[k] = T_RUNNING_DIRTY;
}

static unsigned char *pix(const sched *s, int which, int64_t x, int64_t y, int64_t z)
{
    const iwpp_image *im = which ? s->I : &s->J;
    return (unsigned char *)im->data + (size_t)(x + y * s->sy[which] + z * s->sz[which]) * s->es;
}

/* Is row (y, z) of a region inside the tile's interior? */
static int interior_row(const int64_t lo[3], const int64_t hi[3], int64_t y, int64_t z)
{
    return y >= lo[1] && y < hi[1] && z >= lo[2] && z < hi[2];
}

/* The neighbour of tile k in direction b ((dx+1) + 3(dy+1) + 9(dz+1)), or -1 past the grid. */
static int64_t neighbour_at(const grid *g, int64_t k, int b)
{
    const int64_t n[3] = {k % g->cnt[0] + b % 3 - 1, (k / g->cnt[0]) % g->cnt[1] + (b / 3) % 3 - 1,
                          k / (g->cnt[0] * g->cnt[1]) + b / 9 - 1};
    if (b == 13 || n[0] < 0 || n[1] < 0 || n[2] < 0 || n[0] >= g->cnt[0] || n[1] >= g->cnt[1] || n[2] >= g->cnt[2])
        return -1;
    return n[0] + g->cnt[0] * (n[1] + g->cnt[1] * n[2]);
}

/* Under tile n's lock: it wrote frame pixels that the neighbours in directions @p dirs see. */
static void frame_written(sched *s, int64_t n, unsigned dirs)
{
    for (int b = 0; b < 27; ++b)
        if (dirs & (1u << b)) { /* (one writer, under its lock: no read-modify-write needed) */
            uint32_t *v = &s->fver[FVER_STRIDE * n + b];
            __atomic_store_n(v, __atomic_load_n(v, __ATOMIC_RELAXED) + 1u, __ATOMIC_RELAXED);
        }
}

/* Which of tile k's neighbours in directions @p dirs wrote the side k sees since k last read its
 * halo (bit b). Without their locks a hint (rerun_on_host); under them, with @p note, the counts
 * as read now are remembered with the halo read beside them. */
#define ALL_DIRS 0x7ffffffu
static unsigned halo_news(sched *s, int64_t k, unsigned dirs, int note)
{
    unsigned news = 0;
    for (int b = 0; b < 27; ++b) {
        const int64_t n = neighbour_at(&s->g, k, b);
        if (n < 0 || !(dirs & (1u << b))) continue;
        /* (k is in direction 26 - b from n) */
        const uint32_t v = __atomic_load_n(&s->fver[FVER_STRIDE * n + (26 - b)], __ATOMIC_RELAXED);
        if (v != s->seen[27 * k + b]) news |= 1u << b;
        if (note) s->seen[27 * k + b] = v;
    }
    return news;
}

/* Lock (@p on) or unlock the neighbours of tile k in directions @p dirs (ALL_DIRS: every tile
 * whose frame k's halo holds), in ascending index order: whoever takes several tile locks takes
 * them so, and whoever holds one tile lock takes no other (no deadlock). */
static void neighbour_locks(sched *s, int64_t k, unsigned dirs, int on)
{
    for (int b = 0; b < 27; ++b) {
        const int64_t n = neighbour_at(&s->g, k, b);
        if (n < 0 || !(dirs & (1u << b))) continue;
        if (on)
            pthread_mutex_lock(&s->tl[n].m);
        else
            pthread_mutex_unlock(&s->tl[n].m);
    }
}

/* Host threads for a copy of @p bytes: one per 512 KiB, at most the worker's share of the cores
 * (at 1/8 budgets a U8 tile is 2-3 MB: one thread copied it at 5.6 GB/s on the H200 machine,
 * a third of the whole tile run). */
static int copy_nt(const worker *w, size_t bytes)
{
    const size_t parts = bytes >> 19;
    return parts < 2 ? 1 : parts < (size_t)w->copy_threads ? (int)parts : w->copy_threads;
}

/* Gather the region of tile k: I (device workers: into their page-locked scratch, which
 * uploads at the link's speed) and the interior of J without a lock, J's halo (the neighbours'
 * frames) under the neighbours' locks. (Session 23 tried the other way, without gathers: J and
 * I page-locked in place for the call (cudaHostRegister) and each region sent up from them by
 * 2D DMA, the halo snapshot read back from the device: exact, but slower on the H100 machine,
 * 8192^2 at 56 MB 30.6-30.8 ms against 19.3-20.8 gathered, 16384^2 at 89 MB 86 against 55-59 ms:
 * locking 64 MB takes 1.9 ms and unlocking 1.3, on the call's critical path, more than the
 * gathers cost the workers.) */
static void gather(worker *w, int64_t k, const int64_t lo[3], const int64_t hi[3], const int64_t rlo[3],
                   const int64_t rhi[3])
{
    sched *s = w->s;
    const size_t es = s->es;
    const int64_t rw = rhi[0] - rlo[0], rh = rhi[1] - rlo[1], rows = rh * (rhi[2] - rlo[2]);
    unsigned char *const hmask = w->hi;
    const int nt = copy_nt(w, (size_t)rows * (size_t)rw * es * (hmask ? 2 : 1));
    (void)nt;
    IWPP_TILES_OMP(omp parallel for num_threads(nt) schedule(static))
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t y = rlo[1] + r % rh, z = rlo[2] + r / rh;
        size_t off = (size_t)r * (size_t)rw * es;
        if (interior_row(lo, hi, y, z))
            iwpp_stream_copy(w->hj + off + (size_t)(lo[0] - rlo[0]) * es, pix(s, 0, lo[0], y, z),
                             (size_t)(hi[0] - lo[0]) * es);
        if (hmask) iwpp_stream_copy(hmask + off, pix(s, 1, rlo[0], y, z), (size_t)rw * es);
    }
    neighbour_locks(s, k, ALL_DIRS, 1);
    halo_news(s, k, ALL_DIRS, 1); /* (the versions of the halo this run sees) */
    for (int64_t z = rlo[2]; z < rhi[2]; ++z)
        for (int64_t y = rlo[1]; y < rhi[1]; ++y) {
            size_t off = (size_t)((y - rlo[1]) + (z - rlo[2]) * rh) * (size_t)rw * es;
            if (!interior_row(lo, hi, y, z)) {
                memcpy(w->hj + off, pix(s, 0, rlo[0], y, z), (size_t)rw * es);
            } else {
                if (y + SEED_AHEAD < hi[1]) {
                    IWPP_PREFETCH(pix(s, 0, rlo[0], y + SEED_AHEAD, z));
                    IWPP_PREFETCH(pix(s, 0, rhi[0] - 1, y + SEED_AHEAD, z));
                }
                if (rlo[0] < lo[0]) memcpy(w->hj + off, pix(s, 0, rlo[0], y, z), es);
                if (rhi[0] > hi[0])
                    memcpy(w->hj + off + (size_t)(rhi[0] - 1 - rlo[0]) * es, pix(s, 0, rhi[0] - 1, y, z), es);
            }
        }
    neighbour_locks(s, k, ALL_DIRS, 0);
}

/* Is (y, z) an outer row of the interior (every pixel of it on the frame)? */
static int frame_row(const int64_t lo[3], const int64_t hi[3], int64_t y, int64_t z, int is3d)
{
    return y == lo[1] || y == hi[1] - 1 || (is3d && (z == lo[2] || z == hi[2] - 1));
}

/* Write back the interior's inside (not the frame): no other worker reads it. */
static void scatter_inside(worker *w, const int64_t lo[3], const int64_t hi[3], const int64_t rlo[3],
                           const int64_t rhi[3])
{
    sched *s = w->s;
    const size_t es = s->es;
    const int is3d = s->g.dim[2] > 1;
    const int64_t rw = rhi[0] - rlo[0], rh = rhi[1] - rlo[1];
    const int64_t ih = hi[1] - lo[1], rows = ih * (hi[2] - lo[2]);
    if (hi[0] - lo[0] <= 2) return;
    const int nt = copy_nt(w, (size_t)rows * (size_t)rw * es);
    (void)nt;
    IWPP_TILES_OMP(omp parallel for num_threads(nt) schedule(static))
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t y = lo[1] + r % ih, z = lo[2] + r / ih;
        if (frame_row(lo, hi, y, z, is3d)) continue;
        size_t off = (size_t)((y - rlo[1]) + (z - rlo[2]) * rh) * (size_t)rw * es;
        iwpp_stream_copy(pix(s, 0, lo[0] + 1, y, z), w->hj + off + (size_t)(lo[0] + 1 - rlo[0]) * es,
                         (size_t)(hi[0] - lo[0] - 2) * es);
    }
}

/* Directions (bit (dx+1) + 3(dy+1) + 9(dz+1)) whose neighbour tile sees pixel (x, y, z) of the
 * interior [lo, hi) in its halo. */
static unsigned pixel_dirs(const sched *s, const int64_t lo[3], const int64_t hi[3], int64_t x, int64_t y,
                           int64_t z)
{
    int64_t p[3] = {x, y, z};
    int opts[3][3], no[3];
    for (int a = 0; a < 3; ++a) {
        no[a] = 0;
        opts[a][no[a]++] = 0;
        if (p[a] == lo[a] && lo[a] > 0) opts[a][no[a]++] = -1;
        if (p[a] == hi[a] - 1 && hi[a] < s->g.dim[a]) opts[a][no[a]++] = 1;
    }
    unsigned m = 0;
    for (int i = 0; i < no[0]; ++i)
        for (int j = 0; j < no[1]; ++j)
            for (int k = 0; k < no[2]; ++k)
                if (opts[0][i] || opts[1][j] || opts[2][k])
                    m |= 1u << ((opts[0][i] + 1) + 3 * (opts[1][j] + 1) + 9 * (opts[2][k] + 1));
    return m;
}

/* Under the tile's lock: write back the interior's frame; returns the directions whose
 * neighbours must run again (a frame pixel they see changed). */
static unsigned scatter_frame(worker *w, const int64_t lo[3], const int64_t hi[3], const int64_t rlo[3],
                              const int64_t rhi[3])
{
    sched *s = w->s;
    const size_t es = s->es;
    const int is3d = s->g.dim[2] > 1;
    const int64_t rw = rhi[0] - rlo[0], rh = rhi[1] - rlo[1];
    unsigned dirs = 0;
    for (int64_t z = lo[2]; z < hi[2]; ++z)
        for (int64_t y = lo[1]; y < hi[1]; ++y) {
            const unsigned char *src = w->hj + (size_t)((y - rlo[1]) + (z - rlo[2]) * rh) * (size_t)rw * es;
            int whole = frame_row(lo, hi, y, z, is3d);
            for (int64_t x = lo[0]; x < hi[0]; ++x) {
                if (!whole && x != lo[0] && x != hi[0] - 1) {
                    x = hi[0] - 2; /* jump to the last pixel of the row */
                    continue;
                }
                unsigned char *dst = pix(s, 0, x, y, z);
                const unsigned char *v = src + (size_t)(x - rlo[0]) * es;
                if (memcmp(dst, v, es) != 0) {
                    memcpy(dst, v, es);
                    dirs |= pixel_dirs(s, lo, hi, x, y, z);
                }
            }
        }
    return dirs;
}

static void dirty_neighbours(sched *s, int64_t k, unsigned dirs)
{
    const grid *g = &s->g;
    int64_t c[3] = {k % g->cnt[0], (k / g->cnt[0]) % g->cnt[1], k / (g->cnt[0] * g->cnt[1])};
    for (int b = 0; b < 27; ++b) {
        if (!(dirs & (1u << b))) continue;
        int64_t n[3] = {c[0] + b % 3 - 1, c[1] + (b / 3) % 3 - 1, c[2] + b / 9 - 1};
        if (n[0] < 0 || n[1] < 0 || n[2] < 0 || n[0] >= g->cnt[0] || n[1] >= g->cnt[1] || n[2] >= g->cnt[2])
            continue;
        mark_dirty(s, n[0] + g->cnt[0] * (n[1] + g->cnt[1] * n[2]));
    }
}

/* run_region with the device to itself; an error's message goes to w->msg (a twin may use
 * the context next). */
static iwpp_status run_region_locked(worker *w, const int64_t rlo[3], const int64_t rhi[3])
{
    sched *s = w->s;
    iwpp_context *c = w->ctx;
    c->message[0] = '\0';
    const iwpp_backend_ops *ops = c->ops;
    const int64_t rw = rhi[0] - rlo[0], rh = rhi[1] - rlo[1], rd = rhi[2] - rlo[2];
    w->bj.w = w->bi.w = rw;
    w->bj.h = w->bi.h = rh;
    w->bj.d = w->bi.d = rd;
    iwpp_image hj = iwpp_image_3d(w->hj, s->J.type, rw, rh, rd);
    /* the mask: gathered into page-locked scratch on devices; on the CPU from the caller's array */
    iwpp_image hi = *s->I;
    if (w->hi) {
        hi = iwpp_image_3d(w->hi, s->I->type, rw, rh, rd);
    } else {
        hi.data = pix(s, 1, rlo[0], rlo[1], rlo[2]);
        hi.width = rw, hi.height = rh, hi.depth = rd;
        hi.stride_y = s->sy[1], hi.stride_z = s->sz[1];
    }
    iwpp_status st;
    const int64_t overflows = c->stats.overflow_reruns;
    w->mark[1] = iwpp_now_ms();
    if ((st = ops->upload(c, &w->bj, &hj)) || (st = ops->upload(c, &w->bi, &hi)) ||
        (st = ops->pointwise(c, s->mode == IWPP_BY_DILATION ? IWPP_PW_MIN : IWPP_PW_MAX, &w->bj, &w->bj, &w->bi,
                             0)) ||
        ((w->mark[2] = iwpp_now_ms()), (st = ops->reconstruct(c, &w->bj, &w->bi, s->conn, s->mode))) ||
        ((w->mark[3] = iwpp_now_ms()), (st = ops->download(c, &w->bj, &hj)))) {
        snprintf(w->msg, sizeof w->msg, "%s", c->message);
        return st;
    }
    w->mark[4] = iwpp_now_ms();
    w->overflows += c->stats.overflow_reruns - overflows;
    const int64_t bytes = rw * rh * rd * (int64_t)s->es;
    w->up += 2 * bytes;
    w->down += bytes;
    return IWPP_OK;
}

/* Reconstruct the region held in w->hj / w->hi on the worker's device, in place in w->hj
 * (the CPU backend: its own threads; a device worker's twin waits meanwhile). */
static iwpp_status run_region(worker *w, const int64_t rlo[3], const int64_t rhi[3])
{
    worker *owner = w->twin_of ? w->twin_of : w;
    const double t0 = iwpp_now_ms();
    pthread_mutex_lock(&owner->dev_lock);
    w->wait_ms += iwpp_now_ms() - t0;
    iwpp_status st = run_region_locked(w, rlo, rhi);
    pthread_mutex_unlock(&owner->dev_lock);
    return st;
}

/* ---- halos in canonical order: the region's rows outside the interior whole, and of the
 * interior's rows the pixel before and the pixel after it. halo_walk calls @p fn for each
 * run of consecutive halo pixels (x0, y, z, count) with the index of its first pixel. */
typedef void (*halo_fn)(void *user, int64_t index, int64_t x0, int64_t y, int64_t z, int64_t count);

static int64_t halo_walk(const int64_t lo[3], const int64_t hi[3], const int64_t rlo[3], const int64_t rhi[3],
                         halo_fn fn, void *user)
{
    int64_t i = 0;
    for (int64_t z = rlo[2]; z < rhi[2]; ++z)
        for (int64_t y = rlo[1]; y < rhi[1]; ++y) {
            if (!interior_row(lo, hi, y, z)) {
                if (fn) fn(user, i, rlo[0], y, z, rhi[0] - rlo[0]);
                i += rhi[0] - rlo[0];
                continue;
            }
            if (rlo[0] < lo[0]) {
                if (fn) fn(user, i, rlo[0], y, z, 1);
                ++i;
            }
            if (rhi[0] > hi[0]) {
                if (fn) fn(user, i, rhi[0] - 1, y, z, 1);
                ++i;
            }
        }
    return i;
}

typedef struct halo_copy {
    const sched *s;
    unsigned char *dst;
    const unsigned char *region; /* the region scratch */
    const int64_t *rlo, *rhi;
} halo_copy;

static void halo_copy_run(void *user, int64_t index, int64_t x0, int64_t y, int64_t z, int64_t count)
{
    halo_copy *c = user;
    const size_t es = c->s->es;
    const int64_t rw = c->rhi[0] - c->rlo[0], rh = c->rhi[1] - c->rlo[1];
    const unsigned char *src = c->region + (size_t)((x0 - c->rlo[0]) + rw * ((y - c->rlo[1]) + rh * (z - c->rlo[2]))) * es;
    memcpy(c->dst + (size_t)index * es, src, (size_t)count * es);
}

/* For a re-run, under the locks of the neighbours with news: the halo parts whose neighbour
 * wrote its frame since the last read (news), from J; the rest of dst already holds the last
 * read (snap), copied before the locks were taken. */
typedef struct halo_news_copy {
    const sched *s;
    unsigned char *dst;
    const int64_t *lo, *hi;
    unsigned news;
} halo_news_copy;

static void halo_news_copy_run(void *user, int64_t index, int64_t x0, int64_t y, int64_t z, int64_t count)
{
    halo_news_copy *c = user;
    const size_t es = c->s->es;
    const int dy = y < c->lo[1] ? -1 : y >= c->hi[1] ? 1 : 0, dz = z < c->lo[2] ? -1 : z >= c->hi[2] ? 1 : 0;
    if (count == 1 && !dy && !dz && y + SEED_AHEAD < c->hi[1])
        IWPP_PREFETCH(pix(c->s, 0, x0, y + SEED_AHEAD, z)); /* (a halo column) */
    /* a whole halo row spans up to three neighbours: before, over and after the interior */
    for (int64_t x = x0; x < x0 + count;) {
        const int dx = x < c->lo[0] ? -1 : x >= c->hi[0] ? 1 : 0;
        const int64_t end = dx < 0 ? c->lo[0] : dx == 0 ? c->hi[0] : x0 + count;
        const int64_t n = (end < x0 + count ? end : x0 + count) - x;
        const int64_t i = index + (x - x0);
        const int b = (dx + 1) + 3 * (dy + 1) + 9 * (dz + 1);
        if (c->news & (1u << b)) memcpy(c->dst + (size_t)i * es, pix(c->s, 0, x, y, z), (size_t)n * es);
        x += n;
    }
}

/* ---- re-runs: after its first run, a tile is a local fixpoint for the halo it saw; when a
 * neighbour raises (lowers) that halo, only what the new halo values reach can change. So a
 * re-run is Vincent's queue phase on the host, in place in J: seeded with the interior pixels
 * the new halo values improve, it touches only pixels that change. No transfers, and no second
 * full pass of the device's raster scans for a border change of a few pixels. */

typedef struct fifo {
    int64_t *v;
    int64_t cap, head, n; /* cap: 0 or a power of two */
} fifo;

static int fifo_push(fifo *f, int64_t x)
{
    if (f->n == f->cap) {
        int64_t nc = f->cap ? f->cap * 2 : 4096;
        int64_t *nv = malloc((size_t)nc * sizeof *nv);
        if (!nv) return 0;
        for (int64_t i = 0; i < f->n; ++i) nv[i] = f->v[(f->head + i) & (f->cap - 1)];
        free(f->v);
        f->v = nv;
        f->cap = nc;
        f->head = 0;
    }
    f->v[(f->head + f->n) & (f->cap - 1)] = x;
    f->n++;
    return 1;
}

static int64_t fifo_pop(fifo *f)
{
    int64_t x = f->v[f->head];
    f->head = (f->head + 1) & (f->cap - 1);
    f->n--;
    return x;
}

/* Value of the mask / marker pixel at p (x, y, z) as double: exact for u8, u16 and f32. */
static double load(const unsigned char *p, iwpp_type t)
{
    switch (t) {
    case IWPP_U8: return *p;
    case IWPP_U16: {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    default: {
        float v;
        memcpy(&v, p, 4);
        return v;
    }
    }
}

static void store(unsigned char *p, iwpp_type t, double v)
{
    switch (t) {
    case IWPP_U8: *p = (unsigned char)v; break;
    case IWPP_U16: {
        uint16_t x = (uint16_t)v;
        memcpy(p, &x, 2);
        break;
    }
    default: {
        float x = (float)v;
        memcpy(p, &x, 4);
        break;
    }
    }
}

typedef struct rerun {
    worker *w;
    int64_t k; /* the tile */
    const int64_t *lo, *hi;
    int noff;
    int off[26][3];
    int is3d;
    int dil;
    unsigned dirs; /* neighbours whose halo changed */
    int64_t pops;
    fifo q;
} rerun;

static int inside(const rerun *r, int64_t x, int64_t y, int64_t z)
{
    return x >= r->lo[0] && x < r->hi[0] && y >= r->lo[1] && y < r->hi[1] && z >= r->lo[2] && z < r->hi[2];
}

static int on_frame(const rerun *r, int64_t x, int64_t y, int64_t z)
{
    return x == r->lo[0] || x == r->hi[0] - 1 || frame_row(r->lo, r->hi, y, z, r->is3d);
}

/* Offer value v (already clipped by the source's own mask) to interior pixel (x, y, z): the
 * pixel takes min(v, I) (dilation) if that raises it, and is queued. Frame pixels are written
 * under the tile's lock (neighbours read them). */
static int offer(rerun *r, int64_t x, int64_t y, int64_t z, double v)
{
    sched *s = r->w->s;
    const iwpp_type t = s->J.type;
    double m = load(pix(s, 1, x, y, z), t);
    double nv = r->dil ? (v < m ? v : m) : (v > m ? v : m);
    unsigned char *jp = pix(s, 0, x, y, z);
    double cur = load(jp, t);
    if (r->dil ? !(cur < nv) : !(cur > nv)) return 1;
    if (on_frame(r, x, y, z)) {
        const unsigned dirs = pixel_dirs(s, r->lo, r->hi, x, y, z);
        pthread_mutex_lock(&s->tl[r->k].m);
        store(jp, t, nv);
        frame_written(s, r->k, dirs);
        pthread_mutex_unlock(&s->tl[r->k].m);
        r->dirs |= dirs;
    } else {
        store(jp, t, nv);
    }
    return fifo_push(&r->q, x + s->g.dim[0] * (y + s->g.dim[1] * z));
}

typedef struct seed_walk {
    rerun *r;
    const unsigned char *now;
    unsigned char *snap;
    int ok;
    int64_t seeds; /* changed halo pixels */
} seed_walk;

static void seed_changed(void *user, int64_t index, int64_t x0, int64_t y, int64_t z, int64_t count)
{
    seed_walk *sw = user;
    rerun *r = sw->r;
    const sched *s = r->w->s;
    const size_t es = s->es;
    if (count == 1 && y + SEED_AHEAD < r->hi[1]) {
        /* a column of the halo: its interior neighbours SEED_AHEAD rows on, in J and I */
        IWPP_PREFETCH(pix(s, 0, x0, y + SEED_AHEAD, z));
        IWPP_PREFETCH(pix(s, 1, x0, y + SEED_AHEAD, z));
    }
    for (int64_t j = 0; j < count && sw->ok; ++j) {
        const unsigned char *nv = sw->now + (size_t)(index + j) * es;
        unsigned char *old = sw->snap + (size_t)(index + j) * es;
        if (memcmp(nv, old, es) == 0) continue;
        memcpy(old, nv, es);
        sw->seeds++;
        const int64_t x = x0 + j;
        double v = load(nv, s->J.type), m = load(pix(s, 1, x, y, z), s->J.type);
        v = r->dil ? (v < m ? v : m) : (v > m ? v : m);
        for (int i = 0; i < r->noff && sw->ok; ++i) {
            int64_t qx = x + r->off[i][0], qy = y + r->off[i][1], qz = z + r->off[i][2];
            if (inside(r, qx, qy, qz)) sw->ok = offer(r, qx, qy, qz, v);
        }
    }
}

/* A popped pixel at least two pixels inside its tile's frame: every neighbour is in the
 * interior and off the frame, so no bounds checks, no lock, typed loads (the re-runs' cost is
 * these pops: 0.1 % of a 32768^2 tissue image took ~370 ms of worker time through the generic
 * offer). Same comparisons as offer(), so the same bits. */
typedef struct deep_nb {
    int n;
    int64_t oj[26], oi[26], op[26]; /* neighbour offsets in J, in I, in the queue's index */
} deep_nb;

#define IWPP_DEEP_POP(T, NAME)                                                                   \
    static int NAME(rerun *r, const deep_nb *d, unsigned char *jp, const unsigned char *ip, int64_t p) \
    {                                                                                            \
        T *J = (T *)jp;                                                                          \
        const T *I = (const T *)ip;                                                              \
        const T v = J[0];                                                                        \
        for (int n = 0; n < d->n; ++n) {                                                         \
            const T m = I[d->oi[n]];                                                             \
            const T nv = r->dil ? (v < m ? v : m) : (v > m ? v : m);                             \
            T *q = J + d->oj[n];                                                                 \
            if (r->dil ? *q < nv : *q > nv) {                                                    \
                *q = nv;                                                                         \
                if (!fifo_push(&r->q, p + d->op[n])) return 0;                                   \
            }                                                                                    \
        }                                                                                        \
        return 1;                                                                                \
    }
IWPP_DEEP_POP(uint8_t, deep_pop_u8)
IWPP_DEEP_POP(uint16_t, deep_pop_u16)
IWPP_DEEP_POP(float, deep_pop_f32)
#undef IWPP_DEEP_POP

#define QUEUE_AHEAD 8 /* items */
#define RERUN_OVER (1u << 30) /* rerun_on_host gave up: the tile wants a full run */

/*
 * The re-run of tile k (interior [lo, hi), region [rlo, rhi)); returns the directions whose
 * neighbours must run again, or IWPP_ENOMEM's flag (bit 31) when the queue could not grow.
 *
 * It gives up once it has popped for as long as a full run of the tile would take
 * (@p limit_ms, from the full runs so far; 0: no price yet), or after @p pop_cap pops (> 0),
 * leaving RERUN_OVER in its result: a flood that reaches a tile through a late neighbour (a
 * seed in the last corner of the image) would otherwise cross it pixel by pixel on one host
 * thread (6.2 pops a pixel of the image at 8192^2 on tissue), where a device's raster scans
 * sweep it in a few passes.
 * What the queue raised so far stays: J is still between the marker and the result, so the
 * full run gives the same fixpoint. Paying at most the full run's price before switching keeps
 * a re-run within twice the better of the two (the rent-or-buy bound), and the short re-runs
 * of ordinary images never reach it.
 */
static unsigned rerun_on_host(worker *w, int64_t k, const int64_t lo[3], const int64_t hi[3],
                              const int64_t rlo[3], const int64_t rhi[3], double limit_ms, int64_t pop_cap)
{
    const double t0 = iwpp_now_ms();
    sched *s = w->s;
    const iwpp_type t = s->J.type;
    rerun r;
    memset(&r, 0, sizeof r);
    r.w = w;
    r.k = k;
    r.lo = lo;
    r.hi = hi;
    r.is3d = s->g.dim[2] > 1;
    r.dil = s->mode == IWPP_BY_DILATION;
    r.noff = iwpp_neighbors(s->conn, !r.is3d, r.off);
    int ok = 1;
    /* seeds: the halo pixels that changed since this tile last ran (their neighbours' frames),
       clipped as the device clipped them, offered to their interior neighbours. Only the
       neighbours whose frames changed since (their versions, read without their locks) are
       locked and read; the rest of the halo is the last read's. A neighbour that writes after
       the versions were read marks this tile dirty when its run ends, so that write is read
       by the next re-run. */
    const unsigned peek = halo_news(s, k, ALL_DIRS, 0);
    if (!peek) { /* (its news were read by an earlier run) */
        w->rmark[0] = w->rmark[1] = w->rmark[2] = iwpp_now_ms();
        w->rseeds = 0;
        return 0;
    }
    const int64_t nh = halo_walk(lo, hi, rlo, rhi, NULL, NULL);
    unsigned char *now = malloc((size_t)(nh > 0 ? nh : 1) * s->es);
    if (!now) return 1u << 31;
    memcpy(now, s->halo[k], (size_t)nh * s->es);
    neighbour_locks(s, k, peek, 1);
    w->rmark[0] = iwpp_now_ms();
    halo_news_copy hc = {s, now, lo, hi, halo_news(s, k, peek, 1)};
    halo_walk(lo, hi, rlo, rhi, halo_news_copy_run, &hc);
    neighbour_locks(s, k, peek, 0);
    w->rmark[1] = iwpp_now_ms();
    seed_walk sw = {&r, now, s->halo[k], ok, 0};
    halo_walk(lo, hi, rlo, rhi, seed_changed, &sw);
    ok = sw.ok;
    w->rmark[2] = iwpp_now_ms();
    w->rseeds = sw.seeds;
    free(now);
    /* the queue phase inside the interior */
    const int64_t W = s->g.dim[0], H = s->g.dim[1];
    deep_nb d;
    d.n = r.noff;
    for (int i = 0; i < r.noff; ++i) {
        d.oj[i] = r.off[i][0] + r.off[i][1] * s->sy[0] + r.off[i][2] * s->sz[0];
        d.oi[i] = r.off[i][0] + r.off[i][1] * s->sy[1] + r.off[i][2] * s->sz[1];
        d.op[i] = r.off[i][0] + W * (r.off[i][1] + H * r.off[i][2]);
    }
    const int64_t dlo[3] = {lo[0] + 2, lo[1] + 2, r.is3d ? lo[2] + 2 : lo[2]};
    const int64_t dhi[3] = {hi[0] - 2, hi[1] - 2, r.is3d ? hi[2] - 2 : hi[2]};
    const int64_t WH = W * H;
    /* (dense J and I: an item's offset in them is its index, so it can be fetched ahead) */
    const int dense = s->sy[0] == W && s->sy[1] == W && s->sz[0] == WH && s->sz[1] == WH;
    const uintptr_t jb = (uintptr_t)s->J.data, ib = (uintptr_t)s->I->data, row = (uintptr_t)W * s->es;
    unsigned over = 0;
    while (ok && r.q.n > 0) {
        if (dense && r.q.n > QUEUE_AHEAD) {
            /* the rows around the item QUEUE_AHEAD places on, in J and I */
            const uintptr_t a = (uintptr_t)r.q.v[(r.q.head + QUEUE_AHEAD) & (r.q.cap - 1)] * s->es;
            IWPP_PREFETCH(jb + a - row);
            IWPP_PREFETCH(jb + a);
            IWPP_PREFETCH(jb + a + row);
            IWPP_PREFETCH(ib + a - row);
            IWPP_PREFETCH(ib + a);
            IWPP_PREFETCH(ib + a + row);
        }
        if (pop_cap > 0 ? r.pops >= pop_cap
                        : limit_ms > 0 && (r.pops & 1023) == 1023 && iwpp_now_ms() - t0 > limit_ms) {
            over = RERUN_OVER;
            break;
        }
        int64_t p = fifo_pop(&r.q);
        r.pops++;
        /* coordinates with as few 64-bit divisions as the dimensionality needs (one in 2D: a
           division is a good part of a pop's cost) */
        const int64_t z = r.is3d ? p / WH : 0, pz = p - z * WH, y = pz / W, x = pz - y * W;
        if (x >= dlo[0] && x < dhi[0] && y >= dlo[1] && y < dhi[1] && z >= dlo[2] && z < dhi[2]) {
            unsigned char *jp = pix(s, 0, x, y, z);
            const unsigned char *ip = pix(s, 1, x, y, z);
            ok = t == IWPP_U8    ? deep_pop_u8(&r, &d, jp, ip, p)
                 : t == IWPP_U16 ? deep_pop_u16(&r, &d, jp, ip, p)
                                 : deep_pop_f32(&r, &d, jp, ip, p);
            continue;
        }
        double v = load(pix(s, 0, x, y, z), t);
        for (int i = 0; i < r.noff && ok; ++i) {
            int64_t qx = x + r.off[i][0], qy = y + r.off[i][1], qz = z + r.off[i][2];
            if (inside(&r, qx, qy, qz)) ok = offer(&r, qx, qy, qz, v);
        }
    }
    free(r.q.v);
    w->rerun_pops += r.pops;
    return ok ? r.dirs | over : 1u << 31;
}

/* A full run of tile k on the worker's device: its region (the marker's current values, so a
 * tile that ran before takes its neighbours' news too) through the backend's reconstruction,
 * the interior written back; the halo it saw kept for later re-runs. */
static iwpp_status full_run(worker *w, int64_t k, const int64_t lo[3], const int64_t hi[3], const int64_t rlo[3],
                            const int64_t rhi[3])
{
    sched *s = w->s;
    gather(w, k, lo, hi, rlo, rhi);
    /* the halo this run sees: re-runs seed from what changed since */
    if (!s->halo[k]) {
        const int64_t nh = halo_walk(lo, hi, rlo, rhi, NULL, NULL);
        s->halo[k] = malloc((size_t)(nh > 0 ? nh : 1) * s->es);
        if (!s->halo[k]) {
            snprintf(w->msg, sizeof w->msg, "out of host memory for a tile's halo");
            return IWPP_ENOMEM;
        }
    }
    halo_copy hc = {s, s->halo[k], w->hj, rlo, rhi};
    halo_walk(lo, hi, rlo, rhi, halo_copy_run, &hc);
    w->mark[0] = iwpp_now_ms();
    iwpp_status st = run_region(w, rlo, rhi);
    if (st == IWPP_OK) scatter_inside(w, lo, hi, rlo, rhi);
    return st;
}

/* tiles.trace: one line per tile run, times in ms from the call's start: worker (its index;
 * twins follow the workers), tile, run (0 first), kind (full / host / host+full: a re-run handed
 * over), picked, host re-run end (= start of the full run), and for a full run: gathered, device
 * held, uploaded, reconstructed, downloaded, written back; then the re-run's pops, and for a
 * re-run the halo pixels that changed for it, when it held its neighbours' locks, had copied the
 * halo and had offered the changed pixels (its seeding; the rest is the queue). */
static void trace_line(sched *s, const worker *w, int64_t k, int host, int full, double t_pick, double t_full,
                       int64_t pops)
{
    const double z = s->t0, now = iwpp_now_ms();
    const char *kind = !full ? "host" : host ? "host+full" : "full";
    fprintf(s->trace, "tile %d %lld %lld %s %.3f %.3f", w->index, (long long)k, (long long)s->runs[k], kind,
            t_pick - z, t_full - z);
    if (full)
        fprintf(s->trace, " %.3f %.3f %.3f %.3f %.3f %.3f", w->mark[0] - z, w->mark[1] - z, w->mark[2] - z,
                w->mark[3] - z, w->mark[4] - z, now - z);
    else
        fprintf(s->trace, " - - - - - %.3f", now - z);
    fprintf(s->trace, " %lld", (long long)pops);
    if (host)
        fprintf(s->trace, " %lld %.3f %.3f %.3f\n", (long long)w->rseeds, w->rmark[0] - z, w->rmark[1] - z,
                w->rmark[2] - z);
    else
        fprintf(s->trace, " - - - -\n");
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    sched *s = w->s;
    const int cpu = w->ctx->ops->kind == IWPP_BACKEND_CPU;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        int q;
        while (!s->stop && (q = pick_queue(s, w)) < 0 && (queued(s) > 0 || s->running > 0))
            pthread_cond_wait(&s->cv, &s->lock);
        if (s->stop || (q = pick_queue(s, w)) < 0) break;
        int64_t k = s->ring[q][s->qhead[q]];
        s->qhead[q] = (s->qhead[q] + 1) % s->g.n;
        s->qcount[q]--;
        s->state[k] = T_RUNNING;
        s->running++;

        /* (gpu_workers changes, under the lock, when a device worker could not start) */
        const int gpus = s->gpu_workers > 0;
        /* whose full runs price the next ones: the devices', or everyone's without devices */
        const int prices = !cpu || !gpus;
        int full = s->runs[k] == 0 || s->full[k];
        s->full[k] = 0;
        int64_t lo[3], hi[3], rlo[3], rhi[3];
        tile_box(&s->g, k, lo, hi, rlo, rhi);
        const double region_px = (double)(rhi[0] - rlo[0]) * (double)(rhi[1] - rlo[1]) * (double)(rhi[2] - rlo[2]);
        const double limit_ms = s->full_px > 0 && s->pop_cap >= 0 ? s->full_ms / s->full_px * region_px : 0.0;
        pthread_mutex_unlock(&s->lock);

        iwpp_status st = IWPP_OK;
        unsigned dirs = 0;
        int hand_over = 0;
        double t0 = iwpp_now_ms();
        const double t_pick = t0;
        const int64_t pops0 = w->rerun_pops;
        const int host = !full; /* a host re-run first (it may hand over to a full run) */
        if (!full) {
            dirs = rerun_on_host(w, k, lo, hi, rlo, rhi, limit_ms, s->pop_cap);
            if (dirs & (1u << 31)) {
                st = IWPP_ENOMEM;
                snprintf(w->msg, sizeof w->msg, "out of host memory for a tile's propagation queue");
                dirs = 0;
            } else if (dirs & RERUN_OVER) {
                dirs &= ~RERUN_OVER; /* the frame pixels it changed still tell the neighbours */
                if (cpu && gpus)
                    hand_over = 1; /* a device does the full run */
                else
                    full = 1;
            }
            w->rerun_ms += iwpp_now_ms() - t0;
            t0 = iwpp_now_ms();
        }
        w->wait_ms = 0.0;
        if (full && st == IWPP_OK) {
            st = full_run(w, k, lo, hi, rlo, rhi);
            if (st == IWPP_OK) {
                pthread_mutex_lock(&s->tl[k].m);
                const unsigned fd = scatter_frame(w, lo, hi, rlo, rhi);
                frame_written(s, k, fd);
                pthread_mutex_unlock(&s->tl[k].m);
                dirs |= fd;
            }
        }
        /* (without the wait for a twin's device run: the price of a full run on its own) */
        const double full_ms = full ? iwpp_now_ms() - t0 - w->wait_ms : 0.0;
        w->first_ms += full_ms;

        pthread_mutex_lock(&s->lock);
        if (s->trace) trace_line(s, w, k, host, full, t_pick, t0, w->rerun_pops - pops0);
        s->running--;
        if (st != IWPP_OK) {
            if (!s->stop) {
                s->stop = 1;
                s->st = st;
                snprintf(s->msg, sizeof s->msg, "%s", w->msg[0] ? w->msg : w->ctx->message);
            }
        } else {
            if (full && prices) {
                s->full_ms += full_ms;
                s->full_px += region_px;
            }
            if (full && s->runs[k] > 0) s->full_reruns++;
            dirty_neighbours(s, k, dirs);
            s->runs[k]++; /* before a re-queue: it picks the re-run queue */
            if (hand_over) {
                s->full[k] = 1; /* queued for a device's full run (even if a neighbour dirtied it) */
                queue_push(s, k);
            } else if (s->state[k] == T_RUNNING_DIRTY) {
                queue_push(s, k);
            } else {
                s->state[k] = T_IDLE;
            }
            s->done++;
            w->tiles++;
        }
        pthread_cond_broadcast(&s->cv);
    }
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* worker contexts                                                          */

static void edt_res_free(iwpp_context *c);

static void res_free(iwpp_context *c)
{
    iwpp_tile_res *r = &c->tile_res;
    for (int t = 0; t < IWPP_TILE_HOST_THREADS; ++t)
        for (int i = 0; i < 2; ++i) {
            scratch_free(c, r->host[t][i], r->pinned[t][i]);
            r->host[t][i] = NULL;
            r->pinned[t][i] = 0;
        }
    for (int i = 0; i < 2; ++i)
        if (r->dev[i].ptr) c->ops->buf_free(c, &r->dev[i]);
    r->host_bytes = r->dev_bytes = 0;
}

/* Host scratch set @p t of the context's kept buffers (bytes r->host_bytes): the marker's
 * region; on devices the mask's too (the CPU backend reads it from the caller's array, and so
 * does a device thread that cannot have the second one). Whether the marker's is there. */
static int res_host(iwpp_context *c, int t)
{
    iwpp_tile_res *r = &c->tile_res;
    if (!r->host[t][0]) r->host[t][0] = scratch_alloc(c, r->host_bytes, &r->pinned[t][0]);
    if (r->host[t][0] && c->ops->kind != IWPP_BACKEND_CPU && !r->host[t][1])
        r->host[t][1] = scratch_alloc(c, r->host_bytes, &r->pinned[t][1]);
    return r->host[t][0] != NULL;
}

/* The worker's buffers for regions of @p bytes: the context's kept ones when they are large
 * enough and not more than twice that, else new ones (pinning memory costs about as much as
 * copying it, so a repeated call should not pay it again). @p twins[0..ntwins): more host
 * threads of the worker, each with host scratch of its own and the worker's device buffers
 * (ctx NULL: none, as when there is no host memory for its scratch). */
static iwpp_status res_get(iwpp_context *c, size_t bytes, worker *w, worker *const *twins, int ntwins)
{
    iwpp_tile_res *r = &c->tile_res;
    if (r->host_bytes < bytes || r->host_bytes > 2 * bytes || r->dev_bytes < bytes || r->dev_bytes > 2 * bytes) {
        res_free(c);
        r->host_bytes = bytes;
        if (!res_host(c, 0)) {
            res_free(c);
            return iwpp_set_error(c, IWPP_ENOMEM, "out of host memory for tile scratch (%.1f MiB)",
                                  (double)bytes / 1048576.0);
        }
        for (int i = 0; i < 2; ++i) {
            memset(&r->dev[i], 0, sizeof r->dev[i]);
            r->dev[i].type = IWPP_U8;
            r->dev[i].w = (int64_t)bytes;
            r->dev[i].h = r->dev[i].d = 1;
            r->dev[i].kept = 1;
            iwpp_status st = c->ops->buf_alloc(c, &r->dev[i]);
            if (st != IWPP_OK) {
                res_free(c);
                return st;
            }
        }
        r->dev_bytes = bytes;
    }
    w->hj = r->host[0][0];
    w->hi = r->host[0][1];
    w->bj = r->dev[0];
    w->bi = r->dev[1];
    for (int j = 0; j < ntwins && j + 1 < IWPP_TILE_HOST_THREADS && res_host(c, j + 1); ++j) {
        worker *t = twins[j];
        t->hj = r->host[j + 1][0];
        t->hi = r->host[j + 1][1];
        t->bj = w->bj;
        t->bi = w->bi;
        t->s = w->s;
        t->copy_threads = w->copy_threads;
        t->twin_of = w;
        t->ctx = c;
    }
    return IWPP_OK;
}

void iwpp_tiles_release(iwpp_context *ctx)
{
    if (ctx->ops) {
        res_free(ctx);
        edt_res_free(ctx);
    }
    for (int i = 0; i < ctx->ntile_ctx; ++i) iwpp_context_destroy(ctx->tile_ctx[i]);
    free(ctx->tile_ctx);
    ctx->tile_ctx = NULL;
    ctx->ntile_ctx = 0;
}

/* The worker list of a call: the context's list, or by default its own device alone (twice
 * on a GPU, so that one worker's copies overlap the other's kernels). */
static int effective_specs(iwpp_context *ctx, iwpp_worker_spec *out)
{
    if (ctx->nworker_specs > 0) {
        memcpy(out, ctx->workers, sizeof out[0] * (size_t)ctx->nworker_specs);
        return ctx->nworker_specs;
    }
    const int threads = iwpp_cpu_threads(ctx);
    out[0].backend = ctx->ops->kind;
    out[0].device = ctx->ops->kind == IWPP_BACKEND_CPU ? 0 : ctx->device;
    if (ctx->ops->kind == IWPP_BACKEND_CPU) {
        /* one single-threaded worker per thread, at most 64 (as the "cpu" item) */
        out[0].count = threads < 64 ? threads : 64;
        return 1;
    }
    /* A GPU: three streams (each worker with two host threads), so that one's copies overlap
     * the others' kernels, and a quarter of the cores (at most 4) as CPU workers, which take
     * only the host re-runs. Measured on the H100 (16 cores), whole calls with 2 GPU streams
     * alone -> this default: 32768^2 at 1/8 budget 387 -> 267 ms, 98304^2 at 16 GB 2194 ->
     * 1664 ms (bench/tiles_device.sh); H200, session 19: 32768^2 at 305 MB 169 ms with the
     * three GPU workers alone, 149 ms with the CPU workers beside them. Fewer than 8 cores:
     * no CPU workers (the staging copies need them). */
    out[0].count = 3;
    const int ncpu = threads / 4 < 4 ? threads / 4 : 4;
    if (ncpu < 2) return 1;
    out[1].backend = IWPP_BACKEND_CPU;
    out[1].device = 0;
    out[1].count = ncpu;
    return 2;
}

/* Contexts for @p n workers, made once and kept in ctx (the caller's own context is worker 0
 * where its device is the first item's: its kernels are built already). */
static iwpp_status worker_contexts(iwpp_context *ctx, const iwpp_worker_spec *sp, int nsp, iwpp_context **out,
                                   int *nout)
{
    int n = 0;
    for (int i = 0; i < nsp; ++i) n += sp[i].count;
    if (n > IWPP_MAX_WORKERS)
        return iwpp_set_error(ctx, IWPP_EINVAL, "%d tile workers; at most %d", n, IWPP_MAX_WORKERS);
    int ndev = 0;
    for (int i = 0; i < nsp; ++i) ndev += sp[i].backend != IWPP_BACKEND_CPU ? sp[i].count : 0;
    if (ndev < 1) ndev = 1;
    if (ctx->ntile_ctx != n) {
        iwpp_tiles_release(ctx);
        ctx->tile_ctx = calloc((size_t)n, sizeof *ctx->tile_ctx);
        if (!ctx->tile_ctx) return iwpp_set_error(ctx, IWPP_ENOMEM, "out of host memory for %d workers", n);
        ctx->ntile_ctx = n;
    }
    int k = 0;
    for (int i = 0; i < nsp; ++i)
        for (int j = 0; j < sp[i].count; ++j, ++k) {
            /* a CPU caller may run several threads: its workers are single-threaded contexts */
            int own = k == 0 && sp[i].backend == ctx->ops->kind && sp[i].backend != IWPP_BACKEND_CPU &&
                      sp[i].device == ctx->device;
            if (own) {
                out[k] = ctx;
                continue;
            }
            iwpp_context *c = ctx->tile_ctx[k];
            if (c && (c->ops->kind != sp[i].backend || c->device != sp[i].device)) {
                iwpp_context_destroy(c);
                c = ctx->tile_ctx[k] = NULL;
            }
            if (!c) {
                iwpp_status st = iwpp_context_create(&c, sp[i].backend);
                if (st == IWPP_OK && sp[i].device != 0) st = iwpp_context_set_device(c, sp[i].device);
                if (st != IWPP_OK) {
                    if (c)
                        iwpp_set_error(ctx, st, "tile worker %d (%s device %d): %s", k,
                                       iwpp_backend_name(sp[i].backend), sp[i].device, iwpp_error_message(c));
                    else
                        iwpp_set_error(ctx, st, "tile worker %d: out of host memory", k);
                    iwpp_context_destroy(c);
                    return st;
                }
                ctx->tile_ctx[k] = c;
            }
            /* no message of an earlier call (the ops' "EUNSUPPORTED without a message" tests
               read it); the caller's settings; one thread per CPU worker, the cores shared among
               the device workers (their host copies and the backend's staging use them) */
            c->message[0] = '\0';
            c->threads = sp[i].backend == IWPP_BACKEND_CPU ? 1 : (iwpp_cpu_threads(ctx) / ndev > 1 ? iwpp_cpu_threads(ctx) / ndev : 1);
            memcpy(c->tune, ctx->tune, sizeof c->tune); /* (cuda.pool stays as the environment set it) */
            c->algorithm = ctx->algorithm;
            c->queue_variant = ctx->queue_variant;
            c->queue_capacity = ctx->queue_capacity;
            c->tile_size = ctx->tile_size;
            out[k] = c;
        }
    *nout = n;
    return IWPP_OK;
}

/* Device bytes per pixel of a tile worker's region beyond its marker and mask. CUDA: the
 * collected wavefront (N/16 4-byte entries, room here to grow to N/8); its block queues come out
 * of the worker's queue reserve (queue_bytes), not per pixel. OpenCL: as in memory (its 32-bit
 * working copy of J and its queues). Before session 19 CUDA's tiles were sized with the
 * in-memory 4.5 B/px while their queues, at least 32768 entries a block, took about 46 MB a
 * worker beyond any budget: tiles were a third of what the budget allows, and the budget no
 * cap. */
static double tile_extra_bytes_per_pixel(iwpp_backend kind)
{
    return kind == IWPP_BACKEND_CUDA ? 0.5 : extra_bytes_per_pixel(kind);
}

/* Largest region (pixels) a worker on @p c may hold, from its device's budget shared by the
 * @p sharing workers on that device; 0 = no device limit. *queue_bytes: the part of the
 * worker's share set aside for its queues (0 = no limit). */
static double region_limit(iwpp_context *caller, iwpp_context *c, iwpp_type type, int sharing,
                           uint64_t *queue_bytes)
{
    double budget = 0.0;
    *queue_bytes = 0;
    if (c->ops->kind != IWPP_BACKEND_CPU || caller->ops->kind == IWPP_BACKEND_CPU) {
        uint64_t lim = caller->memory_limit;
        budget = lim ? (double)lim : (c->ops->mem_free && c->ops->kind != IWPP_BACKEND_CPU ? (double)c->ops->mem_free(c) : 0.0);
    }
    if (budget <= 0.0) return 0.0;
    /* keep a tenth aside for the backend's own small buffers and the allocator's rounding, and
       an eighth of the worker's share (at most 64 MiB) for its queues */
    double per = budget * 0.9 / (double)(sharing > 0 ? sharing : 1);
    const double reserve = fmin((double)(64 << 20), per / 8);
    per -= reserve;
    *queue_bytes = (uint64_t)reserve;
    double bpp = 2.0 * (double)iwpp_type_size(type) + tile_extra_bytes_per_pixel(c->ops->kind);
    return per / bpp;
}

/* ------------------------------------------------------------------------ */
/* the call                                                                 */

static double monotonic_ms(void) { return iwpp_now_ms(); }

/* Every -0 of an F32 view becomes +0. */
static void plus_zeros(iwpp_image *im)
{
    const int64_t sy = im->stride_y ? im->stride_y : im->width;
    const int64_t sz = im->stride_z ? im->stride_z : sy * im->height;
    for (int64_t z = 0; z < im->depth; ++z)
        for (int64_t y = 0; y < im->height; ++y) {
            float *row = (float *)im->data + z * sz + y * sy;
            for (int64_t x = 0; x < im->width; ++x)
                if (row[x] == 0.0f) row[x] = 0.0f;
        }
}

/* How many of the @p nw workers share worker k's device (CPU workers: the host). */
static int device_sharing(iwpp_context *const *wc, int nw, int k)
{
    int sharing = 0;
    for (int j = 0; j < nw; ++j) sharing += wc[j]->ops->kind == wc[k]->ops->kind && wc[j]->device == wc[k]->device;
    return sharing;
}

/* The plan: the largest region (pixels) of a tile, the smallest any worker's budget allows, and
 * *min_tiles: with several workers, four tiles for each that takes first runs, to balance them.
 * Sets *ngpu to the number of device workers and queue_bytes[k] to worker k's queue reserve.
 * (OpenCL workers once kept square tiles here against a PoCL 3.1 abort that the even grid made
 * likelier; the OpenCL backend now keeps PoCL before 7.0 to one queue of kernels in flight at a
 * time, iwpp_ocl_enqueue, which removes the cause.) */
static double tile_pixels_plan(iwpp_context *ctx, iwpp_context *const *wc, int nw, const iwpp_image *mask,
                               int *ngpu, uint64_t *queue_bytes, int64_t *min_tiles)
{
    double n_all = (double)mask->width * (double)mask->height * (double)mask->depth;
    double maxpix = 0.0;
    for (int k = 0; k < nw; ++k) {
        double lim = region_limit(ctx, wc[k], mask->type, device_sharing(wc, nw, k), &queue_bytes[k]);
        if (lim > 0 && (maxpix == 0 || lim < maxpix)) maxpix = lim;
    }
    *ngpu = 0;
    for (int k = 0; k < nw; ++k) *ngpu += wc[k]->ops->kind != IWPP_BACKEND_CPU;
    const int first_runners = *ngpu > 0 ? *ngpu : nw; /* who takes first runs (pick_queue) */
    *min_tiles = first_runners > 1 ? 4 * first_runners : 1;
    return maxpix == 0 ? n_all : maxpix;
}

/* The scheduler of one call: its grid and views (no allocation; sched_alloc makes its arrays). */
static void sched_setup(sched *s, iwpp_image *marker, const iwpp_image *mask, int conn, iwpp_morph_mode mode,
                        double maxpix, int64_t min_tiles, int ngpu)
{
    memset(s, 0, sizeof *s);
    grid_make(&s->g, mask, maxpix, min_tiles);
    s->J = *marker;
    s->I = mask;
    s->es = iwpp_type_size(mask->type);
    s->sy[0] = marker->stride_y ? marker->stride_y : marker->width;
    s->sz[0] = marker->stride_z ? marker->stride_z : s->sy[0] * marker->height;
    s->sy[1] = mask->stride_y ? mask->stride_y : mask->width;
    s->sz[1] = mask->stride_z ? mask->stride_z : s->sy[1] * mask->height;
    s->conn = conn;
    s->mode = mode;
    s->gpu_workers = ngpu;
}

/* The per-tile arrays: 0, or -1 when out of memory (sched_free frees what was made). */
static int sched_alloc(sched *s)
{
    const int64_t ntiles = s->g.n;
    s->state = calloc((size_t)ntiles, 1);
    s->runs = calloc((size_t)ntiles, sizeof *s->runs);
    s->halo = calloc((size_t)ntiles, sizeof *s->halo);
    s->full = calloc((size_t)ntiles, 1);
    s->ring[0] = malloc((size_t)ntiles * sizeof *s->ring[0]);
    s->ring[1] = malloc((size_t)ntiles * sizeof *s->ring[1]);
    s->tl = malloc((size_t)ntiles * sizeof *s->tl);
    s->fver = calloc((size_t)ntiles * FVER_STRIDE, sizeof *s->fver);
    s->seen = calloc((size_t)ntiles * 27, sizeof *s->seen);
    if (!s->state || !s->runs || !s->ring[0] || !s->ring[1] || !s->halo || !s->full || !s->tl || !s->fver ||
        !s->seen)
        return -1;
    for (int64_t k = 0; k < ntiles; ++k) pthread_mutex_init(&s->tl[k].m, NULL);
    s->tl_made = 1;
    return 0;
}

static void sched_free(sched *s)
{
    if (s->halo)
        for (int64_t k = 0; k < s->g.n; ++k) free(s->halo[k]);
    free(s->halo);
    free(s->fver);
    free(s->seen);
    free(s->state);
    free(s->full);
    free(s->runs);
    free(s->ring[0]);
    free(s->ring[1]);
    if (s->tl_made)
        for (int64_t k = 0; k < s->g.n; ++k) pthread_mutex_destroy(&s->tl[k].m);
    free(s->tl);
}

/* Every worker's buffers for regions of @p rmax pixels, before any tile runs: a failure here
 * leaves the marker untouched. */
/* The workers w[0..nw) of contexts wc, and worker k's further host threads (twins) w[j nw + k],
 * 0 < j < @p host_threads (ctx NULL: none): device workers', and with @p cpu_twins CPU
 * workers' too (tiles.host_threads set explicitly: the CPU backend's tiled tests run the twins
 * under ThreadSanitizer so). */
static iwpp_status workers_prepare(iwpp_context *ctx, sched *s, worker *w, iwpp_context *const *wc, int nw,
                                   int64_t rmax, int copy_threads, int host_threads, int cpu_twins)
{
    iwpp_status st = IWPP_OK;
    for (int k = 0; k < nw && st == IWPP_OK; ++k) {
        w[k].s = s;
        w[k].ctx = wc[k];
        /* host copies: the cores shared among the workers on devices; CPU workers copy alone */
        w[k].copy_threads = wc[k]->ops->kind == IWPP_BACKEND_CPU ? 1 : copy_threads;
        worker *twins[IWPP_TILE_HOST_THREADS];
        int ntwins = 0;
        for (int j = 1; j < host_threads && (cpu_twins || wc[k]->ops->kind != IWPP_BACKEND_CPU); ++j)
            twins[ntwins++] = &w[j * nw + k];
        st = res_get(wc[k], (size_t)rmax * s->es, &w[k], twins, ntwins);
        if (st != IWPP_OK && wc[k] != ctx)
            iwpp_set_error(ctx, st, "tile worker %d (%s): %s", k, wc[k]->ops->name, iwpp_error_message(wc[k]));
        w[k].bj.type = w[k].bi.type = s->I->type;
        for (int j = 0; j < ntwins; ++j) twins[j]->bj.type = twins[j]->bi.type = s->I->type;
    }
    return st;
}

/* The call's threads from the caller's pool: the workers, then the twins that have a context.
 * Where fewer threads start than there are workers, those that did take every tile (CPU
 * workers first runs too, when no device worker started); none: the call stops. */
static void workers_start(iwpp_context *ctx, sched *s, worker *w, iwpp_context *const *wc, int nw, int nthreads,
                          void **args)
{
    int n = 0;
    for (int k = 0; k < nthreads; ++k) {
        w[k].index = k;
        if (k < nw || w[k].ctx) args[n++] = &w[k];
    }
    const int ready = iwpp_workpool_ready(&ctx->tile_pool, n);
    if (ready < nw) {
        pthread_mutex_lock(&s->lock);
        if (ready == 0) {
            s->stop = 1;
            s->st = IWPP_ENOMEM;
            snprintf(s->msg, sizeof s->msg, "could not start a tile worker thread");
        }
        s->gpu_workers = 0;
        for (int j = 0; j < ready; ++j) s->gpu_workers += wc[j]->ops->kind != IWPP_BACKEND_CPU;
        pthread_mutex_unlock(&s->lock);
    }
    iwpp_workpool_run(&ctx->tile_pool, ready < n ? ready : n, worker_main, args);
}

/* Under @p lock: wait on @p cv for at most 50 ms. */
static void cond_wait_50ms(pthread_cond_t *cv, pthread_mutex_t *lock)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 50 * 1000000L;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(cv, lock, &ts);
}

/* Under @p lock, at most every 100 ms: fraction @p f to the context's listener (the lock
 * released while it runs); 1 when the listener asks to stop. */
static int progress_tick(iwpp_context *ctx, pthread_mutex_t *lock, double *last, double f)
{
    if (!ctx->progress || monotonic_ms() - *last < 100.0) return 0;
    pthread_mutex_unlock(lock);
    const int cancel = ctx->progress(ctx->progress_user, f);
    *last = monotonic_ms();
    pthread_mutex_lock(lock);
    return cancel;
}

/* The calling thread while the workers run: reports progress about every 100 ms and stops the
 * call when the listener cancels. Returns when no tile is queued or running, or on a stop. */
static void watch_progress(iwpp_context *ctx, sched *s)
{
    double best = 0.0, last = monotonic_ms();
    pthread_mutex_lock(&s->lock);
    while (!s->stop && (queued(s) > 0 || s->running > 0)) {
        cond_wait_50ms(&s->cv, &s->lock);
        if (!s->stop) {
            double f = (double)s->done / (double)(s->done + queued(s) + s->running);
            if (f > best) best = f;
            if (progress_tick(ctx, &s->lock, &last, best) && !s->stop) {
                s->stop = 1;
                s->st = IWPP_ECANCELED;
                snprintf(s->msg, sizeof s->msg, "cancelled after %lld of %lld tile runs", (long long)s->done,
                         (long long)(s->done + queued(s) + s->running));
                pthread_cond_broadcast(&s->cv);
            }
        }
    }
    pthread_mutex_unlock(&s->lock);
}

/* The figures of a finished tiled reconstruction, in ctx->stats. */
static void tiles_stats(iwpp_context *ctx, const sched *s, const worker *w, int nw, int nthreads)
{
    iwpp_stats *o = &ctx->stats;
    memset(o, 0, sizeof *o); /* worker 0 may be ctx itself: drop its last tile's figures */
    o->tiles = s->done;
    o->tile_grid = s->g.n;
    o->workers = nw;
    for (int64_t k = 0; k < s->g.n; ++k)
        if (s->runs[k] > o->tile_rounds) o->tile_rounds = s->runs[k];
    for (int k = 0; k < nthreads; ++k) { /* a twin's figures count for its worker */
        o->bytes_to_device += w[k].up;
        o->bytes_from_device += w[k].down;
        if (k % nw < 16) o->worker_tiles[k % nw] += w[k].tiles;
    }
    o->rounds = o->tile_rounds;
    double fms = 0, rms = 0;
    for (int k = 0; k < nthreads; ++k) {
        fms += w[k].first_ms;
        rms += w[k].rerun_ms;
        o->pixels_visited += w[k].rerun_pops;
        o->overflow_reruns += w[k].overflows;
    }
    /* worker time (summed over workers) in full runs (first runs and re-runs that gave up) and in
       host re-runs */
    snprintf(o->variant, sizeof o->variant, "tiles %lldx%lldx%lld, %d worker%s, %.0f+%.0f ms, %lld full re-run%s",
             (long long)s->g.tsz[0], (long long)s->g.tsz[1], (long long)s->g.tsz[2], nw, nw > 1 ? "s" : "",
             fms, rms, (long long)s->full_reruns, s->full_reruns == 1 ? "" : "s");
    o->compute_ms = 0.0;
}

/* Every tile queued for its first run, by anti-diagonals (tiles with equal x + y + z indices;
 * in each, by rows): a tile's left and upper neighbours are queued a diagonal earlier, so a
 * first run mostly sees their results in its halo and what they pushed across the border
 * needs no re-run, while the tiles running at once (the next ones) share at most corners.
 * (In raster order the workers ran a row's neighbouring tiles together, and each pushed what
 * the other needed back as re-runs.) */
static void first_runs_queue(sched *s)
{
    const int64_t *c = s->g.cnt;
    for (int64_t d = 0; d < c[0] + c[1] + c[2] - 2; ++d)
        for (int64_t z = 0; z < c[2] && z <= d; ++z)
            for (int64_t y = 0; y < c[1] && y <= d - z; ++y) {
                const int64_t x = d - z - y;
                if (x < c[0]) queue_push(s, x + c[0] * (y + c[1] * z));
            }
}

iwpp_status iwpp_tiles_reconstruct(iwpp_context *ctx, iwpp_image *marker, const iwpp_image *mask, int conn,
                                   iwpp_morph_mode mode)
{
    iwpp_worker_spec sp[IWPP_MAX_WORKER_SPECS];
    int nsp = effective_specs(ctx, sp);
    iwpp_context *wc[IWPP_MAX_WORKERS];
    int nw = 0;
    iwpp_status st = worker_contexts(ctx, sp, nsp, wc, &nw);
    if (st != IWPP_OK) return st;

    int ngpu = 0;
    uint64_t queue_bytes[IWPP_MAX_WORKERS];
    int64_t min_tiles = 1;
    const double maxpix = tile_pixels_plan(ctx, wc, nw, mask, &ngpu, queue_bytes, &min_tiles);
    sched s;
    sched_setup(&s, marker, mask, conn, mode, maxpix, min_tiles, ngpu);
    const char *cap = iwpp_tune(ctx, IWPP_TUNE_TILES_RERUN_POPS);
    s.pop_cap = cap && !strcmp(cap, "off") ? -1 : iwpp_tune_int(ctx, IWPP_TUNE_TILES_RERUN_POPS, 0, 0, INT64_MAX);
    const double n_all = (double)mask->width * (double)mask->height * (double)mask->depth;
    int64_t rmax = 1; /* the largest region: a tile and its halo */
    for (int a = 0; a < 3; ++a) rmax *= s.g.tsz[a] + (s.g.cnt[a] > 1 ? 2 : 0);
    if (rmax > n_all) rmax = (int64_t)n_all;
    int copy_threads = ngpu ? iwpp_cpu_threads(ctx) / ngpu : 1;
    if (copy_threads < 1) copy_threads = 1;
    copy_threads = (int)iwpp_tune_int(ctx, IWPP_TUNE_TILES_COPY_THREADS, copy_threads, 1, 256);
    const int host_threads =
        (int)iwpp_tune_int(ctx, IWPP_TUNE_TILES_HOST_THREADS, 2, 1, IWPP_TILE_HOST_THREADS);
    const int nthreads = host_threads * nw;

    /* w[0..nw): the workers; w[nw..nthreads): their twins (tiles.host_threads) */
    worker *w = calloc((size_t)(nthreads > 0 ? nthreads : 1), sizeof *w);
    void **args = calloc((size_t)(nthreads > 0 ? nthreads : 1), sizeof *args); /* the threads' */
    if (sched_alloc(&s) || !w || !args) {
        st = iwpp_set_error(ctx, IWPP_ENOMEM, "out of host memory for the tile scheduler (%lld tiles)",
                            (long long)s.g.n);
        goto out;
    }
    for (int k = 0; k < nthreads; ++k) pthread_mutex_init(&w[k].dev_lock, NULL);
    st = workers_prepare(ctx, &s, w, wc, nw, rmax, copy_threads, host_threads,
                         iwpp_tune(ctx, IWPP_TUNE_TILES_HOST_THREADS) != NULL);
    if (st != IWPP_OK) goto out_locks;

    pthread_mutex_init(&s.lock, NULL);
    pthread_cond_init(&s.cv, NULL);
    first_runs_queue(&s);
    s.t0 = iwpp_now_ms();
    /* (a path longer than a tuning value holds comes from the environment whole) */
    const char *trace = iwpp_tune(ctx, IWPP_TUNE_TILES_TRACE);
    if (!trace) trace = iwpp_env("IWPP_TILES_TRACE");
    if (trace) s.trace = !strcmp(trace, "stderr") ? stderr : fopen(trace, "a");
    if (s.trace)
        fprintf(s.trace, "tiles %lld %lld %lld grid %lld %lld %lld workers %d threads %d\n", (long long)s.g.tsz[0],
                (long long)s.g.tsz[1], (long long)s.g.tsz[2], (long long)s.g.cnt[0], (long long)s.g.cnt[1],
                (long long)s.g.cnt[2], nw, nthreads);
    for (int k = 0; k < nw; ++k) {
        wc[k]->device_share = wc[k]->ops->kind == IWPP_BACKEND_CPU ? 0 : device_sharing(wc, nw, k);
        wc[k]->queue_bytes = queue_bytes[k];
    }
    workers_start(ctx, &s, w, wc, nw, nthreads, args);
    watch_progress(ctx, &s);
    iwpp_workpool_wait(ctx->tile_pool);
    for (int k = 0; k < nw; ++k) wc[k]->device_share = 0, wc[k]->queue_bytes = 0;
    if (s.trace) {
        fprintf(s.trace, "end %.3f\n", iwpp_now_ms() - s.t0);
        if (s.trace != stderr) fclose(s.trace);
    }
    pthread_cond_destroy(&s.cv);
    pthread_mutex_destroy(&s.lock);
    if (s.st != IWPP_OK) {
        st = iwpp_set_error(ctx, s.st, "%s", s.msg[0] ? s.msg : "a tile worker failed");
    } else {
        if (ctx->progress) ctx->progress(ctx->progress_user, 1.0);
        tiles_stats(ctx, &s, w, nw, nthreads);
    }
    /* Every backend's reconstruction gives every F32 zero as +0 (the sign of a zero would
       otherwise depend on the order of updates: threads, tiles, streams); host re-runs can bring
       a -0 of the mask, so the tiled result gets the same rule. */
    if (st == IWPP_OK && marker->type == IWPP_F32) plus_zeros(marker);
out_locks:
    for (int k = 0; k < nthreads; ++k) pthread_mutex_destroy(&w[k].dev_lock);
out:
    free(w); /* the buffers stay with the worker contexts for the next call */
    free(args);
    sched_free(&s);
    return st;
}

/* ------------------------------------------------------------------------ */
/* exact EDT beyond the budget                                              */

/*
 * Overlapping tiles: the exact EDT of a tile's region (the tile plus a margin of R pixels) gives
 * pixel p the exact global distance whenever that distance is at most M(p), the distance from
 * p to the nearest pixel outside the region (every background pixel outside is at least that
 * far). The distance is the same minimum of the same squared sums, so the value is bit-identical
 * to the in-memory result (a nearest index may name another background pixel at the same
 * distance). A tile with pixels that fail the test runs again with a larger margin; if the
 * margin it needs does not fit the budget, the whole transform runs on the CPU in host memory.
 */

/* Device bytes per pixel of an in-memory exact EDT where the backend does not say what its work
 * buffers take: input, distances, nearest indices, and 8 bytes of work. */
static double edt_bytes_per_pixel(iwpp_type type) { return (double)iwpp_type_size(type) + 4.0 + 8.0 + 8.0; }

/* Device bytes of an exact EDT of a w x h x d image: its input, distances (and nearest indices)
 * and the work buffers the backend says it takes (measured on the H100: 8192^2 U8 in memory kept
 * 742 MB, 11.6 B/px, where the estimate above counts 21), else the estimate. */
static double edt_bytes(iwpp_context *ctx, iwpp_type type, int64_t w, int64_t h, int64_t d, const double sp[3],
                        int nearest)
{
    const double n = (double)w * (double)h * (double)d;
    const double work = ctx->ops->edt_scratch_bytes ? ctx->ops->edt_scratch_bytes(ctx, type, w, h, d, sp, nearest) : -1.0;
    if (work < 0) return n * edt_bytes_per_pixel(type);
    return n * ((double)iwpp_type_size(type) + 4.0 + (nearest ? 8.0 : 0.0)) + work; /* HUGE_VAL stays */
}

int iwpp_tiles_edt_needed(iwpp_context *ctx, const iwpp_image *binary, iwpp_edt_method method, const double sp[3],
                          int nearest)
{
    if (ctx->ops->kind == IWPP_BACKEND_CPU) return 0; /* host memory is the image's home */
    const double n = (double)binary->width * (double)binary->height * (double)binary->depth;
    if (ctx->memory_limit == 0) {
        /* in memory first (iwpp_tiles_needed), unless the backend cannot take the image in one
           call at all (OpenCL: 2^31 pixels), memory or not: its strips can */
        return method == IWPP_EDT_EXACT && n > (double)INT32_MAX && device_budget(ctx) > 0.0 &&
               isinf(edt_bytes(ctx, binary->type, binary->width, binary->height, binary->depth, sp, nearest));
    }
    double budget = device_budget(ctx);
    if (budget <= 0.0) return 0;
    const double need = method == IWPP_EDT_EXACT
                            ? edt_bytes(ctx, binary->type, binary->width, binary->height, binary->depth, sp, nearest)
                            : n * edt_bytes_per_pixel(binary->type);
    return need + (64 << 20) > budget;
}

/* Distance from (x, y, z) to the nearest pixel outside region [rlo, rhi) of an image of sizes dim. */
static double outside_margin(const int64_t p[3], const int64_t rlo[3], const int64_t rhi[3], const int64_t dim[3],
                             const double sp[3])
{
    double m = INFINITY;
    for (int a = 0; a < 3; ++a) {
        if (rlo[a] > 0) m = fmin(m, (double)(p[a] - rlo[a] + 1) * sp[a]);
        if (rhi[a] < dim[a]) m = fmin(m, (double)(rhi[a] - p[a]) * sp[a]);
    }
    return m;
}

static iwpp_status edt_on_cpu(iwpp_context *ctx, const iwpp_image *binary, const double sp[3], iwpp_image *dist,
                              iwpp_image *nearest)
{
    iwpp_context *c = NULL;
    iwpp_status st = iwpp_context_create(&c, IWPP_BACKEND_CPU);
    if (st == IWPP_OK) st = iwpp_context_set_threads(c, ctx->threads);
    if (st == IWPP_OK) st = iwpp_context_set_progress(c, ctx->progress, ctx->progress_user); /* and its cancel */
    if (st == IWPP_OK) st = iwpp_distance_transform(c, binary, IWPP_EDT_EXACT, sp, dist, nearest);
    if (st != IWPP_OK) iwpp_set_error(ctx, st, "%s", c ? iwpp_error_message(c) : "out of host memory");
    iwpp_context_destroy(c);
    return st;
}

/* One tiled EDT call: the plan (grid, first margin, largest region), the caller's views and the
 * buffers that hold the largest region so far. */
typedef struct edt_tiler {
    iwpp_context *ctx;
    const iwpp_image *binary;
    const double *sp;
    iwpp_image *dist, *nearest;
    int64_t dim[3];
    grid g;
    int64_t R;         /* first margin */
    double max_bytes;  /* device bytes a region's EDT may take */
    int64_t dsy[2], dsz[2], bsy, bsz; /* strides of dist, nearest; of binary */
    size_t es;
    int nt; /* host threads for the checks and copies */
    iwpp_buf bin, bd, bn; /* views of the context's kept buffers (edt_buffers_grow) */
    float *hd;
    int64_t *hn;
    int64_t cap;  /* region pixels the buffers hold */
    int64_t want; /* region pixels the plan expects (the buffers are made for at least that) */
    int64_t runs, up, down;
    int64_t bits; /* regions whose input went up as bits (ops->upload_nonzero) */
    double ms[4]; /* worker time in uploads, the device's EDT, the exactness checks, downloads (strips) */
    int fallback; /* the margin a tile needs does not fit: the CPU does it all */
    int oom;      /* ... because the device ran out (it has less free than the budget said) */
    struct edt_strips *sh; /* strips (below): the state the workers share; NULL for square tiles */
    struct edt_down *helper; /* strips: rows go down through it (edt_down_post); NULL: straight */
} edt_tiler;

/*
 * A strip worker's rows on their way to the caller: the device writes a strip's distances into
 * one of two page-locked slots (at the link's speed) and the worker goes on with its next strip,
 * while a helper thread copies the slot into the caller's dist. Before, the worker copied them
 * itself through the backend's staging, and its device sat idle meanwhile: the copies were
 * about half of a strip's time (H100, 8192^2 at 92 MB: 13-21 ms of 31-48 summed over three
 * workers).
 */
typedef struct edt_down {
    pthread_mutex_t m;
    pthread_cond_t cv;
    float *slot[2];
    int busy[2];          /* written by the device, not yet copied */
    iwpp_image out[2];    /* where each goes */
    int next;             /* the slot the worker fills next */
    int finish;           /* the worker has no more strips */
    int nt;               /* the helper's copy threads */
} edt_down;

/* Device bytes an EDT region may take under @p budget: a tenth kept aside for the backend's own
 * small buffers and the allocator's rounding, and an eighth (at most 64 MiB) as a reserve. */
static double edt_usable_bytes(double budget) { return budget * 0.9 - fmin((double)(64 << 20), budget / 8); }

/* The plan: regions of a quarter of what fits the budget, with a margin of an eighth of the
 * region's edge; and the views' strides. */
static void edt_plan(edt_tiler *e)
{
    const iwpp_image *binary = e->binary;
    const int64_t *dim = e->dim;
    const int dims = dim[2] > 1 ? 3 : 2;
    const double budget = device_budget(e->ctx);
    e->max_bytes = edt_usable_bytes(budget);
    const double edge = pow(e->max_bytes / edt_bytes_per_pixel(binary->type) / 4.0, 1.0 / dims);
    e->R = (int64_t)(edge / 8.0);
    if (e->R < 4) e->R = 4;
    int64_t t = (int64_t)edge - 2 * e->R;
    if (t < 4) t = 4;
    for (int a = 0; a < 3; ++a) {
        e->g.dim[a] = dim[a];
        e->g.tsz[a] = a < dims ? (t < dim[a] ? t : dim[a]) : dim[a];
        e->g.cnt[a] = (dim[a] + e->g.tsz[a] - 1) / e->g.tsz[a];
    }
    e->g.n = e->g.cnt[0] * e->g.cnt[1] * e->g.cnt[2];
    const iwpp_image *dist = e->dist, *nearest = e->nearest;
    e->dsy[0] = dist->stride_y ? dist->stride_y : dist->width;
    e->dsy[1] = nearest ? (nearest->stride_y ? nearest->stride_y : nearest->width) : 0;
    e->dsz[0] = dist->stride_z ? dist->stride_z : e->dsy[0] * dist->height;
    e->dsz[1] = nearest ? (nearest->stride_z ? nearest->stride_z : e->dsy[1] * nearest->height) : 0;
    e->bsy = binary->stride_y ? binary->stride_y : binary->width;
    e->bsz = binary->stride_z ? binary->stride_z : e->bsy * binary->height;
    e->es = iwpp_type_size(binary->type);
    e->nt = iwpp_cpu_threads(e->ctx);
}

/* The EDT region buffers a context keeps between calls (its tile_res). */
static void edt_regions_free(iwpp_context *c)
{
    iwpp_tile_res *r = &c->tile_res;
    for (int i = 0; i < 3; ++i)
        if (r->edt_dev[i].ptr) c->ops->buf_free(c, &r->edt_dev[i]);
    for (int i = 0; i < 2; ++i) scratch_free(c, r->edt_host[i], r->edt_pinned[i]);
    memset(r->edt_dev, 0, sizeof r->edt_dev);
    r->edt_host[0] = r->edt_host[1] = NULL;
    r->edt_cap = 0;
    r->edt_es = 0;
}

/* The strips' slots (edt_down; not while a helper may read them). */
static void edt_slots_free(iwpp_context *c)
{
    iwpp_tile_res *r = &c->tile_res;
    for (int i = 0; i < 2; ++i) scratch_free(c, r->edt_down[i], r->edt_down_pinned[i]);
    r->edt_down[0] = r->edt_down[1] = NULL;
    r->edt_down_bytes = 0;
}

/* All of them. */
static void edt_res_free(iwpp_context *c)
{
    edt_regions_free(c);
    edt_slots_free(c);
}

/* Buffers for regions of @p rn pixels (more than e->cap): the context's kept ones where they
 * hold them and are not more than a quarter larger (pinning memory costs about as much as copying
 * it, so a repeated call should not pay it again), else new ones. A device with less memory than
 * the budget said sets e->fallback instead of failing. */
static iwpp_status edt_buffers_grow(edt_tiler *e, int64_t rn)
{
    iwpp_context *ctx = e->ctx;
    const iwpp_backend_ops *ops = ctx->ops;
    iwpp_tile_res *r = &ctx->tile_res;
    iwpp_status st = IWPP_OK;
    const int has_near = r->edt_dev[2].ptr && r->edt_host[1];
    if (rn < e->want) rn = e->want;
    /* (kept buffers count against this call's budget too: not much more than it asks for, and no
       nearest indices it does not want) */
    if (r->edt_cap < rn || r->edt_cap > rn + rn / 4 || r->edt_es < e->es || (e->nearest != NULL) != has_near) {
        edt_regions_free(ctx);
        r->edt_host[0] = scratch_alloc(ctx, (size_t)rn * sizeof(float), &r->edt_pinned[0]);
        if (e->nearest) r->edt_host[1] = scratch_alloc(ctx, (size_t)rn * sizeof(int64_t), &r->edt_pinned[1]);
        r->edt_dev[0] = (iwpp_buf){e->binary->type, rn, 1, 1, NULL, NULL, 1};
        r->edt_dev[1] = (iwpp_buf){IWPP_F32, rn, 1, 1, NULL, NULL, 1};
        r->edt_dev[2] = (iwpp_buf){IWPP_I64, rn, 1, 1, NULL, NULL, 1};
        if (!r->edt_host[0] || (e->nearest && !r->edt_host[1]))
            st = iwpp_set_error(ctx, IWPP_ENOMEM, "out of host memory for EDT tiles");
        for (int i = 0; i < (e->nearest ? 3 : 2) && st == IWPP_OK; ++i) st = ops->buf_alloc(ctx, &r->edt_dev[i]);
        if (st != IWPP_OK) edt_regions_free(ctx);
        if (st == IWPP_ENOMEM) {
            /* the device has less than the budget said: the CPU does it all */
            ctx->message[0] = '\0';
            e->fallback = e->oom = 1;
            e->cap = 0;
            return IWPP_OK;
        }
        if (st != IWPP_OK) return st;
        r->edt_cap = rn;
        r->edt_es = e->es;
    }
    e->bin = r->edt_dev[0], e->bd = r->edt_dev[1], e->bn = r->edt_dev[2];
    e->bin.type = e->binary->type;
    e->hd = (float *)r->edt_host[0];
    e->hn = (int64_t *)r->edt_host[1];
    e->cap = r->edt_cap;
    return IWPP_OK;
}

/* The exact EDT of region [rlo, rhi) on the device, into e->hd (and e->hn). */
/* The exact EDT of region [rlo, rhi) on the device (left there: edt_fetch brings it back). */
static iwpp_status edt_region(edt_tiler *e, const int64_t rlo[3], const int64_t rhi[3])
{
    iwpp_context *ctx = e->ctx;
    const iwpp_backend_ops *ops = ctx->ops;
    const int64_t rw = rhi[0] - rlo[0], rh = rhi[1] - rlo[1], rd = rhi[2] - rlo[2];
    e->bin.w = e->bd.w = e->bn.w = rw;
    e->bin.h = e->bd.h = e->bn.h = rh;
    e->bin.d = e->bd.d = e->bn.d = rd;
    iwpp_image view = *e->binary; /* the region of the caller's input, in place (read only) */
    view.data = (unsigned char *)e->binary->data + (size_t)(rlo[0] + rlo[1] * e->bsy + rlo[2] * e->bsz) * e->es;
    view.width = rw, view.height = rh, view.depth = rd;
    view.stride_y = e->bsy, view.stride_z = e->bsz;
    /* the input goes up as bits of != 0 where the backend can (contiguous rows: strips), an
       eighth of a U8 region's bytes; the backend's EDT then reads U8 0/1 */
    iwpp_buf in = e->bin;
    in.type = IWPP_U8;
    const double t0 = iwpp_now_ms();
    ctx->message[0] = '\0'; /* (a worker context keeps what an earlier call left) */
    iwpp_status st = ops->upload_nonzero ? ops->upload_nonzero(ctx, &in, &view) : IWPP_EUNSUPPORTED;
    const int bits = st == IWPP_OK;
    /* not for this view, or no memory for the bits (the plain upload needs none): the bytes */
    if ((st == IWPP_EUNSUPPORTED && !ctx->message[0]) || st == IWPP_ENOMEM) {
        ctx->message[0] = '\0';
        in = e->bin;
        st = ops->upload(ctx, &in, &view);
    }
    if (st != IWPP_OK) return st;
    const double t1 = iwpp_now_ms();
    /* the work buffers the backend keeps may hold what the region buffers leave of the share
       (regions of other shapes take other buffers: they are given back first) */
    const double held = (double)e->cap * (double)(e->es + 4 + (e->nearest ? 8 : 0));
    ctx->scratch_cap = e->max_bytes > held + 1.0 ? (uint64_t)(e->max_bytes - held) : 1;
    st = ops->edt(ctx, &in, IWPP_EDT_EXACT, e->sp, &e->bd, e->nearest ? &e->bn : NULL);
    ctx->scratch_cap = 0;
    if (st != IWPP_OK) return st;
    e->ms[0] += t1 - t0;
    e->ms[1] += iwpp_now_ms() - t1;
    e->runs++;
    e->up += bits ? (rw * rh * rd + 7) / 8 : rw * rh * rd * (int64_t)e->es;
    e->bits += bits;
    return IWPP_OK;
}

/* A status of edt_region: where the backend ran out of device memory inside its EDT (its work
 * buffers: the device has less free than the budget said), the call goes on another way, as when
 * the region buffers do not fit (edt_buffers_grow): strips fall back to square tiles, square
 * tiles to the CPU; it does not fail with the output half written. */
static iwpp_status edt_out_of_memory(edt_tiler *e, iwpp_status st)
{
    if (st != IWPP_ENOMEM) return st;
    e->ctx->message[0] = '\0';
    e->fallback = e->oom = 1;
    return IWPP_OK;
}

/* Whether the EDT of region [rlo, rhi) fits the worker's budget: a region's bytes need not grow
 * with its size (the backend's plan changes with the shape: the column bands while
 * w^2 + h^2 < 2^31, the 3D lines up to 4096 planes), so every region is checked before it runs. */
static int edt_region_fits(const edt_tiler *e, const int64_t rlo[3], const int64_t rhi[3])
{
    const int64_t w = rhi[0] - rlo[0], h = rhi[1] - rlo[1], d = rhi[2] - rlo[2];
    double bytes = edt_bytes(e->ctx, e->binary->type, w, h, d, e->sp, e->nearest != NULL);
    /* region buffers made for a larger region stay while a thinner piece runs */
    const double px = (double)w * (double)h * (double)d;
    if ((double)e->cap > px) bytes += ((double)e->cap - px) * (double)(e->es + 4 + (e->nearest ? 8 : 0));
    return bytes <= e->max_bytes;
}

/* The region's distances (and nearest indices) into e->hd (e->hn). */
static iwpp_status edt_fetch(edt_tiler *e)
{
    iwpp_context *ctx = e->ctx;
    const iwpp_backend_ops *ops = ctx->ops;
    const int64_t rw = e->bd.w, rh = e->bd.h, rd = e->bd.d;
    iwpp_image vd = iwpp_image_3d(e->hd, IWPP_F32, rw, rh, rd), vn = iwpp_image_3d(e->hn, IWPP_I64, rw, rh, rd);
    iwpp_status st;
    const double t0 = iwpp_now_ms();
    if ((st = ops->download(ctx, &e->bd, &vd)) || (e->nearest && (st = ops->download(ctx, &e->bn, &vn))))
        return st;
    e->ms[3] += iwpp_now_ms() - t0;
    e->down += rw * rh * rd * (e->nearest ? 12 : 4);
    return IWPP_OK;
}

/* The strip rows @p out from the device into the worker's next free slot (waiting for the
 * helper to have copied what it held), handed to the helper. */
static iwpp_status edt_down_post(edt_tiler *e, int64_t first, const iwpp_image *out)
{
    edt_down *d = e->helper;
    const int i = d->next;
    pthread_mutex_lock(&d->m);
    while (d->busy[i]) pthread_cond_wait(&d->cv, &d->m);
    pthread_mutex_unlock(&d->m);
    iwpp_image pin = iwpp_image_3d(d->slot[i], IWPP_F32, out->width, out->height, out->depth);
    iwpp_status st = e->ctx->ops->download_rows(e->ctx, &e->bd, first, &pin);
    if (st != IWPP_OK) return st;
    pthread_mutex_lock(&d->m);
    d->out[i] = *out;
    d->busy[i] = 1;
    d->next = 1 - i;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->m);
    return IWPP_OK;
}

/* The helper: copies each slot the worker hands it into the caller's dist, in order, until the
 * worker finishes. */
static void edt_down_helper(edt_down *d)
{
    int i = 0;
    pthread_mutex_lock(&d->m);
    for (;;) {
        while (!d->busy[i] && !d->finish) pthread_cond_wait(&d->cv, &d->m);
        if (!d->busy[i]) break; /* finished, nothing left */
        const iwpp_image out = d->out[i];
        pthread_mutex_unlock(&d->m);
        const iwpp_host_layout L = iwpp_host_layout_of(&out);
        const size_t bytes = (size_t)out.width * (size_t)out.height * (size_t)out.depth * sizeof(float);
        iwpp_copy_range_par(&L, (char *)d->slot[i], 0, bytes, 0, d->nt, 1);
        pthread_mutex_lock(&d->m);
        d->busy[i] = 0;
        i = 1 - i;
        pthread_cond_broadcast(&d->cv);
    }
    pthread_mutex_unlock(&d->m);
}

/*
 * A strip's quick way out, without the host check: where the largest distance of the whole
 * region is within the margin of every strip row (the rows nearest the region's ends have the
 * least), every strip pixel is exact, and its rows go straight from the device into the caller's
 * dist. *done = 0: not taken (nearest indices asked for, a backend without download_rows or
 * minmax, a distance beyond the margin, a view it cannot write); the region is still on the
 * device for edt_fetch.
 */
static iwpp_status edt_strip_direct(edt_tiler *e, int a, const int64_t lo[3], const int64_t hi[3],
                                    const int64_t rlo[3], const int64_t rhi[3], int *done)
{
    iwpp_context *ctx = e->ctx;
    const iwpp_backend_ops *ops = ctx->ops;
    *done = 0;
    if (e->nearest || !ops->download_rows || !ops->minmax) return IWPP_OK;
    double m = INFINITY;
    if (rlo[a] > 0) m = fmin(m, (double)(lo[a] - rlo[a] + 1) * e->sp[a]);
    if (rhi[a] < e->dim[a]) m = fmin(m, (double)(rhi[a] - hi[a] + 1) * e->sp[a]);
    iwpp_status st;
    if (!isinf(m)) {
        double mn = 0.0, mx = 0.0;
        const double t0 = iwpp_now_ms();
        if ((st = ops->minmax(ctx, &e->bd, &mn, &mx)) != IWPP_OK) return st;
        e->ms[2] += iwpp_now_ms() - t0;
        if (!(mx * (1.0 + 1e-6) <= m)) return IWPP_OK;
    }
    iwpp_image out = *e->dist;
    const int64_t first = a == 2 ? (lo[2] - rlo[2]) * e->dim[1] : lo[1] - rlo[1];
    out.data = (float *)e->dist->data + (a == 2 ? lo[2] * e->dsz[0] : lo[1] * e->dsy[0]);
    out.height = a == 2 ? e->dim[1] : hi[1] - lo[1];
    out.depth = a == 2 ? hi[2] - lo[2] : 1;
    out.stride_y = e->dsy[0], out.stride_z = e->dsz[0];
    const double t0 = iwpp_now_ms();
    ctx->message[0] = '\0';
    st = e->helper ? edt_down_post(e, first, &out) : ops->download_rows(ctx, &e->bd, first, &out);
    if (st == IWPP_EUNSUPPORTED && !ctx->message[0]) return IWPP_OK;
    if (st != IWPP_OK) return st;
    e->ms[3] += iwpp_now_ms() - t0;
    e->down += (int64_t)out.width * out.height * out.depth * 4;
    *done = 1;
    return IWPP_OK;
}

/* Writes tile [lo, hi) of the region's result into the caller's dist (and nearest, with the
 * region's indices made global), and says whether every pixel of it is exact there (a margin of
 * one part in a million for the float rounding of the distance). One pass, row by row: a tile is
 * its own part of the output, so values that were not exact are written again when the tile runs
 * with a larger margin. The margin along y and z is the row's; along x it is
 * min(x - rlo + 1, rhi - x) steps, infinite on the image's own sides. */
static int edt_store_checked(const edt_tiler *e, const int64_t lo[3], const int64_t hi[3], const int64_t rlo[3],
                             const int64_t rhi[3])
{
    const int64_t *dim = e->dim;
    const double *sp = e->sp;
    const int64_t rw = rhi[0] - rlo[0], rh = rhi[1] - rlo[1], tw = hi[0] - lo[0];
    const int64_t ih = hi[1] - lo[1], rows = ih * (hi[2] - lo[2]);
    const int nt = e->nt;
    (void)nt;
    int ok = 1;
    IWPP_TILES_OMP(omp parallel for num_threads(nt) schedule(static) reduction(&& : ok))
    for (int64_t i = 0; i < rows; ++i) {
        const int64_t y = lo[1] + i % ih, z = lo[2] + i / ih;
        const int64_t p[3] = {lo[0], y, z};
        const int64_t xlo[3] = {0, rlo[1], rlo[2]}, xhi[3] = {dim[0], rhi[1], rhi[2]};
        const double row_m = outside_margin(p, xlo, xhi, dim, sp); /* y and z only */
        const int64_t src = (lo[0] - rlo[0]) + rw * ((y - rlo[1]) + rh * (z - rlo[2]));
        const float *d = e->hd + src;
        int row_ok = 1;
        if (rlo[0] == 0 && rhi[0] == dim[0]) {
            /* whole rows (strips): one margin for the row */
            float worst = 0.0f;
            for (int64_t x = 0; x < tw; ++x) worst = d[x] > worst ? d[x] : worst;
            row_ok = (double)worst * (1.0 + 1e-6) <= row_m;
        } else {
            const double left = rlo[0] > 0 ? sp[0] : INFINITY, right = rhi[0] < dim[0] ? sp[0] : INFINITY;
            for (int64_t x = lo[0]; x < hi[0]; ++x) {
                double m = fmin(row_m, fmin((double)(x - rlo[0] + 1) * left, (double)(rhi[0] - x) * right));
                row_ok &= (double)d[x - lo[0]] * (1.0 + 1e-6) <= m;
            }
        }
        ok = ok && row_ok;
        memcpy((float *)e->dist->data + lo[0] + y * e->dsy[0] + z * e->dsz[0], d, (size_t)tw * sizeof(float));
        if (!e->nearest) continue;
        int64_t *dn = (int64_t *)e->nearest->data + lo[0] + y * e->dsy[1] + z * e->dsz[1];
        for (int64_t x = 0; x < tw; ++x) {
            const int64_t li = e->hn[src + x];
            if (li < 0) {
                dn[x] = -1;
                continue;
            }
            const int64_t lx = li % rw, ly = (li / rw) % rh, lz = li / (rw * rh);
            dn[x] = (lx + rlo[0]) + dim[0] * ((ly + rlo[1]) + dim[1] * (lz + rlo[2]));
        }
    }
    return ok;
}

/* Tile @p k: its region with margins R, 2R, 4R ... until every pixel of the tile is exact, or
 * e->fallback when the margin it needs does not fit. */
static iwpp_status edt_tile(edt_tiler *e, int64_t k)
{
    int64_t lo[3], hi[3], rlo[3], rhi[3];
    tile_box(&e->g, k, lo, hi, rlo, rhi);
    /* margins of one physical width on every axis: r pixels along the finest axis, fewer along
       coarser ones (the same pixels on every axis sent anisotropic stacks to the CPU: a fine axis
       needs many, and the coarse ones grew with it until the region did not fit) */
    double fine = INFINITY;
    for (int a = 0; a < 3; ++a)
        if (e->dim[a] > 1) fine = fmin(fine, e->sp[a]);
    for (int64_t r = e->R;; r *= 2) {
        int64_t rn = 1;
        for (int a = 0; a < 3; ++a) {
            const int64_t ra = e->dim[a] > 1 ? (int64_t)ceil((double)r * fine / e->sp[a]) : 0;
            rlo[a] = lo[a] - ra > 0 ? lo[a] - ra : 0;
            rhi[a] = hi[a] + ra < e->dim[a] ? hi[a] + ra : e->dim[a];
            rn *= rhi[a] - rlo[a];
        }
        if (!edt_region_fits(e, rlo, rhi)) {
            e->fallback = 1; /* the margin this tile needs does not fit: the CPU does it all */
            return IWPP_OK;
        }
        iwpp_status st = rn > e->cap ? edt_buffers_grow(e, rn) : IWPP_OK;
        if (st != IWPP_OK || e->fallback) return st;
        if ((st = edt_region(e, rlo, rhi)) != IWPP_OK) return edt_out_of_memory(e, st);
        if ((st = edt_fetch(e)) != IWPP_OK) return st;
        if (edt_store_checked(e, lo, hi, rlo, rhi)) return IWPP_OK;
        /* else a larger margin */
    }
}

/*
 * Strips: where whole rows (2D) or planes (3D) fit, the tiles are strips across the outer axis
 * (y in 2D, z in 3D) and a region is a strip plus R rows (planes) on either side, so that only
 * the outer axis has margins: about 1 + 2R/t of the pixels run instead of the square tiles'
 * (1 + 2R/t)^2 or ^3. The device workers of the call (three streams on one GPU by default, as
 * the reconstruction's) each take the next strip. A strip whose region is not exact everywhere
 * runs again in thinner pieces with twice the margin, and that margin is where the next strips
 * start (a background far from most pixels is a property of the image, not of one strip).
 */
typedef struct edt_strips {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int axis;         /* the outer axis: 1 (2D) or 2 (3D) */
    int64_t t;        /* strip thickness */
    int64_t span;     /* rows (planes) a region may span (edt_strip_span) */
    int64_t count;    /* strips */
    int64_t next;     /* the next strip to take */
    int64_t done;     /* strips finished */
    int64_t R;        /* the margin to start with (grows) */
    int running;      /* worker threads still running */
    int stop;         /* an error, a cancel, or a margin beyond the budget */
    int fallback;
    iwpp_status st;
    char msg[512];
} edt_strips;

/* Rows (planes) a region may span: the most whose EDT takes at most the per-worker budget
 * (e->max_bytes), by bisection (a region's bytes grow with its rows); dim + 2 where the whole
 * axis fits. */
static int64_t edt_strip_span(const edt_tiler *e, int axis)
{
    const int64_t w = e->dim[0], h = axis == 2 ? e->dim[1] : 1;
    int64_t lo = 0, hi = e->dim[axis] + 2;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo + 1) / 2, rows = mid < e->dim[axis] ? mid : e->dim[axis];
        const double b = axis == 2 ? edt_bytes(e->ctx, e->binary->type, w, h, rows, e->sp, e->nearest != NULL)
                                   : edt_bytes(e->ctx, e->binary->type, w, rows, 1, e->sp, e->nearest != NULL);
        if (b <= e->max_bytes)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Strip k, in pieces of at most span - 2R rows with margins R, R doubling on a piece that is
 * not exact everywhere (e->fallback when even one row's margin does not fit). */
static iwpp_status edt_strip(edt_tiler *e, int64_t k, int64_t span)
{
    edt_strips *sh = e->sh;
    const int a = sh->axis;
    pthread_mutex_lock(&sh->lock);
    int64_t R = sh->R;
    pthread_mutex_unlock(&sh->lock);
    int64_t lo[3] = {0, 0, 0}, hi[3] = {e->dim[0], e->dim[1], e->dim[2]}, rlo[3] = {0, 0, 0},
            rhi[3] = {e->dim[0], e->dim[1], e->dim[2]};
    const int64_t end = (k + 1) * sh->t < e->dim[a] ? (k + 1) * sh->t : e->dim[a];
    for (int64_t pos = k * sh->t; pos < end;) {
        int64_t piece = span - 2 * R;
        if (piece < 1 || R >= e->dim[a] || (span >= e->dim[a] && piece * 4 < span)) {
            if (span < e->dim[a]) {
                e->fallback = 1; /* the margin this strip needs does not fit a worker's share */
                return IWPP_OK;
            }
            R = e->dim[a]; /* the whole axis fits (better than thin pieces): the whole image is exact */
            piece = end - pos;
        }
        if (piece > end - pos) piece = end - pos;
        for (;;) { /* thinner where this region's shape takes more than the worker's share */
            lo[a] = pos, hi[a] = pos + piece;
            rlo[a] = pos - R > 0 ? pos - R : 0;
            rhi[a] = pos + piece + R < e->dim[a] ? pos + piece + R : e->dim[a];
            if (edt_region_fits(e, rlo, rhi)) break;
            if (piece == 1) {
                e->fallback = 1;
                return IWPP_OK;
            }
            piece = (piece + 1) / 2;
        }
        const int64_t rn = (rhi[0] - rlo[0]) * (rhi[1] - rlo[1]) * (rhi[2] - rlo[2]);
        iwpp_status st = rn > e->cap ? edt_buffers_grow(e, rn) : IWPP_OK;
        if (st != IWPP_OK || e->fallback) return st;
        if ((st = edt_region(e, rlo, rhi)) != IWPP_OK) return edt_out_of_memory(e, st);
        int exact = 0;
        if ((st = edt_strip_direct(e, a, lo, hi, rlo, rhi, &exact)) != IWPP_OK) return st;
        if (!exact && (st = edt_fetch(e)) != IWPP_OK) return st;
        const double t0 = iwpp_now_ms();
        if (exact || edt_store_checked(e, lo, hi, rlo, rhi)) {
            pos += piece;
        } else {
            R *= 2;
            pthread_mutex_lock(&sh->lock);
            if (R > sh->R) sh->R = R;
            pthread_mutex_unlock(&sh->lock);
        }
        e->ms[2] += exact ? 0.0 : iwpp_now_ms() - t0;
    }
    return IWPP_OK;
}

static void *edt_strip_worker(void *arg)
{
    edt_tiler *e = (edt_tiler *)arg;
    edt_strips *sh = e->sh;
    const int64_t span = sh->span;
    for (;;) {
        pthread_mutex_lock(&sh->lock);
        const int64_t k = sh->stop ? sh->count : sh->next++;
        pthread_mutex_unlock(&sh->lock);
        if (k >= sh->count) break;
        iwpp_status st = edt_strip(e, k, span);
        pthread_mutex_lock(&sh->lock);
        sh->done++;
        if (st != IWPP_OK && !sh->stop) {
            sh->st = st;
            snprintf(sh->msg, sizeof sh->msg, "EDT strip worker (%s): %s", e->ctx->ops->name,
                     iwpp_error_message(e->ctx));
        }
        if (st != IWPP_OK || e->fallback) {
            sh->stop = 1;
            sh->fallback |= e->fallback;
        }
        pthread_cond_broadcast(&sh->cv);
        pthread_mutex_unlock(&sh->lock);
    }
    if (e->helper) { /* the helper copies what is left, then ends */
        pthread_mutex_lock(&e->helper->m);
        e->helper->finish = 1;
        pthread_cond_broadcast(&e->helper->cv);
        pthread_mutex_unlock(&e->helper->m);
    }
    pthread_mutex_lock(&sh->lock);
    sh->running--;
    pthread_cond_broadcast(&sh->cv);
    pthread_mutex_unlock(&sh->lock);
    return NULL;
}

/* A thread of the strips: a worker, or a worker's helper (edt_down). */
typedef struct edt_strip_job {
    edt_tiler *worker;
    edt_down *helper;
} edt_strip_job;

static void *edt_strip_thread(void *arg)
{
    const edt_strip_job *j = (const edt_strip_job *)arg;
    if (j->helper)
        edt_down_helper(j->helper);
    else
        edt_strip_worker(j->worker);
    return NULL;
}

/* Slots for worker @p e's strips of @p bytes each (kept with its context): e->helper set up on
 * @p d for strips under 16 MiB where the slots are page-locked (tiles.edt_helpers "1": any strip,
 * any memory; "0": never), else NULL. Larger strips move enough per copy for the worker's own
 * staging to keep the link busy, and there the helpers' copies only competed with the workers'
 * (H100, alternating with the build before: 8192^2 at 92 MB, strips of 6.5 MB, 12.9-14.6 ->
 * 8.5-8.9 ms, in memory 7.6-7.8; but 16384^2 at 358 MB, 30 MB, 30.6 -> 35.3 and 32768^2 at
 * 1432 MB, 143 MB, 132 -> 166 ms). */
static void edt_down_setup(edt_tiler *e, edt_down *d, size_t bytes, int nt)
{
    iwpp_context *c = e->ctx;
    iwpp_tile_res *r = &c->tile_res;
    const int mode = (int)iwpp_tune_int(c, IWPP_TUNE_TILES_EDT_HELPERS, -1, 0, 1); /* -1: by size */
    if (mode == 0 || (mode < 0 && bytes >= (size_t)16 << 20) || !c->ops->download_rows || e->nearest) return;
    if (r->edt_down_bytes < bytes || r->edt_down_bytes > bytes + bytes / 4 ||
        (mode < 0 && !(r->edt_down_pinned[0] && r->edt_down_pinned[1]))) {
        edt_slots_free(c);
        for (int i = 0; i < 2; ++i) r->edt_down[i] = scratch_alloc(c, bytes, &r->edt_down_pinned[i]);
        if (!r->edt_down[0] || !r->edt_down[1] ||
            (mode < 0 && !(r->edt_down_pinned[0] && r->edt_down_pinned[1]))) {
            edt_slots_free(c);
            return;
        }
        r->edt_down_bytes = bytes;
    }
    memset(d, 0, sizeof *d);
    if (pthread_mutex_init(&d->m, NULL)) return;
    if (pthread_cond_init(&d->cv, NULL)) {
        pthread_mutex_destroy(&d->m);
        return;
    }
    d->slot[0] = (float *)r->edt_down[0];
    d->slot[1] = (float *)r->edt_down[1];
    d->nt = nt;
    e->helper = d;
}

/* The calling thread while the strip workers run: progress about every 100 ms, and a cancel. */
static void edt_strips_watch(iwpp_context *ctx, edt_strips *sh)
{
    double last = monotonic_ms();
    pthread_mutex_lock(&sh->lock);
    while (sh->running > 0) {
        cond_wait_50ms(&sh->cv, &sh->lock);
        if (!sh->stop && progress_tick(ctx, &sh->lock, &last, (double)sh->done / (double)sh->count) &&
            !sh->stop) {
            sh->stop = 1;
            sh->st = IWPP_ECANCELED;
            snprintf(sh->msg, sizeof sh->msg, "cancelled after %lld of %lld EDT strips", (long long)sh->done,
                     (long long)sh->count);
        }
    }
    pthread_mutex_unlock(&sh->lock);
}

/* The device workers of the call: the context's worker list without its CPU items (a strip on
 * one core would hold the end of the call), or ctx alone. */
static int edt_workers(iwpp_context *ctx, iwpp_context **wc)
{
    iwpp_worker_spec sp[IWPP_MAX_WORKER_SPECS];
    iwpp_context *all[IWPP_MAX_WORKERS];
    int nsp = effective_specs(ctx, sp), n = 0, nw = 0;
    if (worker_contexts(ctx, sp, nsp, all, &n) != IWPP_OK) {
        ctx->message[0] = '\0';
        n = 0;
    }
    for (int k = 0; k < n; ++k)
        if (all[k]->ops->kind != IWPP_BACKEND_CPU) wc[nw++] = all[k];
    if (nw == 0) wc[nw++] = ctx;
    return nw;
}

/* Device bytes a region of worker @p c may take: the call's budget (the context's limit, else
 * what c's own device has free), less the reserve edt_plan keeps, shared by the @p sharing
 * workers on that device (as the reconstruction's region_limit). */
static double edt_worker_bytes(iwpp_context *ctx, iwpp_context *c, int sharing)
{
    const double budget = ctx->memory_limit ? (double)ctx->memory_limit : device_budget(c);
    return edt_usable_bytes(budget) / (sharing > 0 ? sharing : 1);
}

/* Strips over the workers; returns -1 where a row / plane with the first margins does not fit a
 * worker's share of the budget (nothing run), or a strip fell back (its runs and bytes added to
 * plan's): then square tiles run instead. */
static int edt_by_strips(iwpp_context *ctx, edt_tiler *plan, iwpp_status *out)
{
    iwpp_context *wc[IWPP_MAX_WORKERS];
    const int nw = edt_workers(ctx, wc);
    edt_strips sh;
    memset(&sh, 0, sizeof sh);
    sh.axis = plan->dim[2] > 1 ? 2 : 1;
    edt_tiler base = *plan;
    /* each worker's share of its own device (devices differ); the strips fit the smallest */
    double max_bytes[IWPP_MAX_WORKERS];
    int64_t span = -1;
    for (int k = 0; k < nw; ++k) {
        edt_tiler wk = *plan;
        wk.ctx = wc[k];
        wk.max_bytes = max_bytes[k] = edt_worker_bytes(ctx, wc[k], device_sharing(wc, nw, k));
        const int64_t sk = edt_strip_span(&wk, sh.axis);
        if (span < 0 || sk < span) span = sk;
    }
    sh.span = span;
    /* first margin: an eighth of the span, at most 32 (nuclei-like masks need less; the
       margin doubles where a strip needs more) */
    sh.R = span / 8 < 32 ? (span / 8 > 1 ? span / 8 : 1) : 32;
    if (span - 2 * sh.R < 4 && span < plan->dim[sh.axis]) return -1;
    /* strips of about span - 2R, at least two per worker when the image allows */
    sh.t = span - 2 * sh.R;
    const int64_t ext = plan->dim[sh.axis];
    if (sh.t * 2 * nw > ext) sh.t = (ext + 2 * nw - 1) / (2 * nw);
    if (sh.t < 1) sh.t = 1;
    sh.count = (ext + sh.t - 1) / sh.t;
    /* a multiple of the workers, so that none is left with the last strip alone (H100, 32768^2,
       2560 MB: 16 strips of 2096 rows on 3 workers took 154-172 ms, 31 of 1073 137-145) */
    if (sh.count > nw && sh.count % nw) {
        sh.t = (ext + (sh.count + nw - sh.count % nw) - 1) / (sh.count + nw - sh.count % nw);
        sh.count = (ext + sh.t - 1) / sh.t;
    }
    /* thinner strips can take more than the span did (edt_region_fits): then the span's own */
    {
        edt_tiler wk = *plan;
        const int64_t rows = sh.t + 2 * sh.R < ext ? sh.t + 2 * sh.R : ext;
        int fits = 1;
        for (int k = 0; k < nw && fits; ++k) {
            wk.ctx = wc[k], wk.max_bytes = max_bytes[k];
            int64_t rlo[3] = {0, 0, 0}, rhi[3] = {plan->dim[0], plan->dim[1], plan->dim[2]};
            rhi[sh.axis] = rows;
            fits = edt_region_fits(&wk, rlo, rhi);
        }
        if (!fits && span - 2 * sh.R > sh.t) {
            sh.t = span - 2 * sh.R;
            sh.count = (ext + sh.t - 1) / sh.t;
        }
    }
    base.want = (sh.t + 2 * sh.R < ext ? sh.t + 2 * sh.R : ext) * (plan->dim[0] * (sh.axis == 2 ? plan->dim[1] : 1));
    pthread_mutex_init(&sh.lock, NULL);
    pthread_cond_init(&sh.cv, NULL);
    edt_tiler *w = calloc((size_t)nw, sizeof *w);
    if (!w) {
        *out = iwpp_set_error(ctx, IWPP_ENOMEM, "out of host memory for the EDT strip workers");
        return 0;
    }
    const int nt = iwpp_cpu_threads(ctx) / nw > 1 ? iwpp_cpu_threads(ctx) / nw : 1;
    /* the caller's context is worker 0: while the strips run, its transfers' host threads are
       one worker's share of the cores, as the other workers' are (with every core, its staging
       team ran beside theirs: 26 threads on the H100 machine's 16 cores, 8192^2 at 1/8 of the
       working set 16.5-17.3 ms; capped at 4 a worker, 11.7) */
    const int own_threads = ctx->threads;
    for (int k = 0; k < nw; ++k)
        if (wc[k] == ctx && nw > 1) ctx->threads = nt;
    /* CUDA: strips of under 16 MiB of results stage through buffers of 4 MiB instead of a whole
       call's 16 MiB, unless the caller set the size (H100, one machine, alternating three times,
       every worker so: 8192^2 at 92 MB, strips of 6.5 MB, 16.2-16.8 ms -> 10.9-11.1; at 185 MB,
       14.7 MB, 9.1-10.6 -> 7.4-7.8; not for 16384^2 at 358 MB, 30 MB, 28.9 -> 37.2). Not the
       caller's own context: a change of size makes its staging buffers again (pinning 64 MiB
       each time a whole call follows a tiled one); the worker contexts only ever run tiles, and
       take the caller's settings again at the next call. (Session 23: this default, 12.2-13.8 ms
       at 92 MB, stays behind IWPP_CUDA_STAGE_CHUNK=4M set for the whole process, 10.9-12.1, and
       the caller's strips at 4 MiB too, its 16 MiB ring kept aside (12.7-13.9), did not close the gap,
       although every strip transfer then had the same chunk, ring and threads: the cause is not
       found.) */
    const double row_px = (double)plan->dim[0] * (double)(sh.axis == 2 ? plan->dim[1] : 1);
    /* (what comes down: a strip's distances, or with nearest indices its region's, 12 B/px) */
    const double down_bytes = plan->nearest ? (double)base.want * 12.0 : (double)sh.t * row_px * 4.0;
    if (!ctx->tune[IWPP_TUNE_CUDA_STAGE_CHUNK][0] && down_bytes < (double)(16 << 20))
        for (int k = 0; k < nw; ++k)
            if (wc[k] != ctx && wc[k]->ops->kind == IWPP_BACKEND_CUDA)
                snprintf(wc[k]->tune[IWPP_TUNE_CUDA_STAGE_CHUNK], sizeof wc[k]->tune[0], "4M");
    /* the workers first, then their helpers (edt_down); on the heap, not a JVM thread's stack */
    void **args = calloc((size_t)(2 * nw), sizeof *args);
    edt_strip_job *jobs = calloc((size_t)(2 * nw), sizeof *jobs);
    edt_down *downs = calloc((size_t)nw, sizeof *downs);
    if (!args || !jobs || !downs) {
        free(args);
        free(jobs);
        free(downs);
        free(w);
        ctx->threads = own_threads;
        pthread_cond_destroy(&sh.cv);
        pthread_mutex_destroy(&sh.lock);
        *out = iwpp_set_error(ctx, IWPP_ENOMEM, "out of host memory for the EDT strip workers");
        return 0;
    }
    const size_t strip_bytes = (size_t)sh.t * (size_t)row_px * sizeof(float);
    int nh = 0;
    for (int k = 0; k < nw; ++k) {
        w[k] = base;
        w[k].ctx = wc[k];
        w[k].max_bytes = max_bytes[k];
        w[k].sh = &sh;
        w[k].nt = nt;
        w[k].helper = NULL;
        jobs[k] = (edt_strip_job){&w[k], NULL};
        args[k] = &jobs[k];
    }
    /* helpers where their slots are had; then the threads (too few for the helpers: none, and
       the workers started take every strip) */
    for (int k = 0; k < nw; ++k) edt_down_setup(&w[k], &downs[k], strip_bytes, nt);
    for (int k = 0; k < nw; ++k) nh += w[k].helper != NULL;
    const int ready = iwpp_workpool_ready(&ctx->tile_pool, nw + nh);
    for (int k = 0, j = 0; k < nw; ++k) {
        if (!w[k].helper) continue;
        if (ready < nw + nh) {
            pthread_cond_destroy(&w[k].helper->cv);
            pthread_mutex_destroy(&w[k].helper->m);
            w[k].helper = NULL;
            continue;
        }
        jobs[nw + j] = (edt_strip_job){NULL, w[k].helper};
        args[nw + j] = &jobs[nw + j];
        ++j;
    }
    if (ready < nw + nh) nh = 0;
    const int started = ready < nw ? ready : nw;
    if (started == 0) {
        sh.stop = 1;
        sh.st = IWPP_ENOMEM;
        snprintf(sh.msg, sizeof sh.msg, "could not start an EDT strip worker thread");
    }
    sh.running = started;
    /* (every thread asked for exists: a worker with a helper never waits on one that is not there) */
    iwpp_workpool_run(&ctx->tile_pool, started + nh, edt_strip_thread, args);
    edt_strips_watch(ctx, &sh);
    iwpp_workpool_wait(ctx->tile_pool); /* (a worker leaves sh's lock after its last count; helpers copy) */
    for (int k = 0; k < nw; ++k)
        if (w[k].helper) {
            pthread_cond_destroy(&w[k].helper->cv);
            pthread_mutex_destroy(&w[k].helper->m);
        }
    int64_t runs = 0, up = 0, down = 0, bits = 0;
    double ms[4] = {0, 0, 0, 0};
    iwpp_stats *o = &ctx->stats;
    memset(o, 0, sizeof *o);
    for (int k = 0; k < started; ++k) {
        runs += w[k].runs, up += w[k].up, down += w[k].down, bits += w[k].bits;
        for (int i = 0; i < 4; ++i) ms[i] += w[k].ms[i];
        if (k < 16) o->worker_tiles[k] = w[k].runs;
    }
    ctx->threads = own_threads;
    free(w);
    free(args);
    free(jobs);
    free(downs);
    pthread_cond_destroy(&sh.cv);
    pthread_mutex_destroy(&sh.lock);
    if (sh.st != IWPP_OK) {
        *out = iwpp_set_error(ctx, sh.st, "%s", sh.msg);
        return 0;
    }
    if (sh.fallback) {
        /* a margin beyond a worker's share, or a device with less than its share: square tiles
           on ctx's whole budget, without the strips' region buffers */
        for (int k = 0; k < nw; ++k) edt_res_free(wc[k]);
        plan->runs += runs, plan->up += up, plan->down += down, plan->bits += bits;
        return -1;
    }
    o->tiles = runs;
    o->tile_grid = sh.count;
    o->workers = started;
    o->bytes_to_device = up;
    o->bytes_from_device = down;
    /* and the worker time (summed over workers) in uploads + the device's EDT + exactness checks +
       downloads: where a strip's time goes; "/helpers": edt_down */
    snprintf(o->variant, sizeof o->variant, "edt strips %lld %s x%d R%lld%s%s, %.0f+%.0f+%.0f+%.0f ms", (long long)sh.t,
             sh.axis == 2 ? "planes" : "rows", started, (long long)sh.R, bits == runs ? "/bits" : "",
             nh ? "/helpers" : "", ms[0], ms[1], ms[2], ms[3]);
    if (ctx->progress) ctx->progress(ctx->progress_user, 1.0);
    *out = IWPP_OK;
    return 0;
}

/* The EDT by strips, else square tiles, else on the CPU; with @p retry, square tiles that ran
 * the device out of memory return IWPP_ENOMEM instead of going to the CPU. */
static iwpp_status edt_by_tiles_ways(iwpp_context *ctx, const iwpp_image *binary, const double sp[3],
                                     iwpp_image *dist, iwpp_image *nearest, int retry)
{
    edt_tiler e;
    memset(&e, 0, sizeof e);
    e.ctx = ctx;
    e.binary = binary;
    e.sp = sp;
    e.dist = dist;
    e.nearest = nearest;
    e.dim[0] = binary->width, e.dim[1] = binary->height, e.dim[2] = binary->depth;
    edt_plan(&e);
    iwpp_status st = IWPP_OK;
    if (edt_by_strips(ctx, &e, &st) == 0) return st;
    /* square (cube) tiles, one at a time on ctx's whole budget: a row (plane) with margins is
       beyond a worker's share, or a strip needs a margin that is; progress and cancel as the
       strips' (about every 100 ms) */
    double last = monotonic_ms();
    for (int64_t k = 0; k < e.g.n && st == IWPP_OK && !e.fallback; ++k) {
        st = edt_tile(&e, k);
        if (st == IWPP_OK && ctx->progress && monotonic_ms() - last >= 100.0) {
            if (ctx->progress(ctx->progress_user, (double)(k + 1) / (double)e.g.n))
                st = iwpp_set_error(ctx, IWPP_ECANCELED, "cancelled after %lld of %lld EDT tiles", (long long)(k + 1),
                                    (long long)e.g.n);
            last = monotonic_ms();
        }
    }
    if (st != IWPP_OK) return st;
    if (e.fallback && e.oom && retry) return IWPP_ENOMEM;
    iwpp_stats *o = &ctx->stats;
    memset(o, 0, sizeof *o);
    if (e.fallback) {
        st = edt_on_cpu(ctx, binary, sp, dist, nearest);
        snprintf(o->variant, sizeof o->variant, "edt tiles: margin beyond the budget, CPU");
        return st;
    }
    if (ctx->progress) ctx->progress(ctx->progress_user, 1.0);
    o->tiles = e.runs;
    o->tile_grid = e.g.n;
    o->workers = 1;
    o->worker_tiles[0] = e.runs;
    o->bytes_to_device = e.up;
    o->bytes_from_device = e.down;
    snprintf(o->variant, sizeof o->variant, "edt tiles %lldx%lldx%lld, margin %lld%s", (long long)e.g.tsz[0],
             (long long)e.g.tsz[1], (long long)e.g.tsz[2], (long long)e.R, e.bits == e.runs ? "/bits" : "");
    return IWPP_OK;
}

/* The caller's listener while one tiled EDT runs: its ways (strips, square tiles, the CPU) each
 * count from 0, and one may follow another; the caller sees the largest fraction so far. */
typedef struct edt_progress {
    iwpp_progress_fn fn;
    void *user;
    double best;
} edt_progress;

static int edt_progress_forward(void *user, double f)
{
    edt_progress *p = user;
    if (f > p->best) p->best = f;
    return p->fn(p->user, p->best);
}

iwpp_status iwpp_tiles_edt(iwpp_context *ctx, const iwpp_image *binary, const double sp[3], iwpp_image *dist,
                           iwpp_image *nearest)
{
    edt_progress p = {ctx->progress, ctx->progress_user, 0.0};
    if (p.fn) ctx->progress = edt_progress_forward, ctx->progress_user = &p;
    /* a device that runs out has less free than the budget said (OpenCL only guesses what is
       free; other processes hold some): half the budget (an attempt that runs out fails at its
       first buffers), down to 1 MiB, before the CPU takes the whole call */
    const uint64_t limit = ctx->memory_limit;
    double budget = device_budget(ctx);
    iwpp_status st;
    for (;;) {
        const int retry = budget >= 2.0 * (1 << 20);
        st = edt_by_tiles_ways(ctx, binary, sp, dist, nearest, retry);
        if (st != IWPP_ENOMEM || !retry) break;
        ctx->message[0] = '\0';
        budget /= 2;
        ctx->memory_limit = (uint64_t)budget;
    }
    ctx->memory_limit = limit;
    ctx->progress = p.fn, ctx->progress_user = p.user;
    return st;
}
