/*
 * tiles_bench.c - whole calls from host memory, in memory and through the tile scheduler.
 *
 * For each size: a tissue image (U8, the benchmark's synthetic texture) as mask, mask - h as
 * marker (--marker corner: one seed in the image's last corner instead, whose flood every tile
 * but the last must take in a re-run: the scheduler's worst case; --marker spiral: the mask a
 * one-pixel spiral corridor, the seed at its outer end); then, timed as a whole call (host arrays in ordinary memory, transfers included):
 *   - the in-memory reconstruction on the chosen backend (the reference result);
 *   - the same with each --limits budget (tiles forced when the working set exceeds it);
 *   - the same with each --workers list (several workers on one image);
 * each checked bit for bit against the reference. With --edt, the exact EDT of a nuclei
 * mask too. With CUDA, the link's bandwidth from pageable and from pinned memory first.
 *
 *   tiles_bench --backend cuda --sizes 8192,32768 --limits 16G,1G --workers "gpu*2,cpu*4" --reps 3
 */
#define _POSIX_C_SOURCE 200809L
#include "iwpp.h"
#include "synth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#ifdef IWPP_HAVE_CUDA
#include <cuda_runtime_api.h>
/* the staging copy of the library (native/hostcopy.c, internal), measured beside memcpy */
void iwpp_stream_copy(void *dst, const void *src, size_t n);
#endif

static uint64_t parse_bytes(const char *s)
{
    char *end = NULL;
    double v = strtod(s, &end);
    switch (end && *end ? *end : ' ') {
    case 'k': case 'K': v *= 1024.0; break;
    case 'm': case 'M': v *= 1048576.0; break;
    case 'g': case 'G': v *= 1073741824.0; break;
    default: break;
    }
    return (uint64_t)v;
}

/* --huge: the host arrays on transparent huge pages (madvise before the first touch; Debian and
 * Ubuntu default to THP "madvise", so ordinary malloc'd arrays get 4 KiB pages). A tile's rows
 * of a wide image are a page each: with 4 KiB pages every row of a tile is a TLB miss. */
static int g_huge;

static void *host_alloc(size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (g_huge) {
        const size_t al = (size_t)2 << 20, n = (bytes + al - 1) / al * al;
        void *p = aligned_alloc(al, n);
        if (p) madvise(p, n, MADV_HUGEPAGE);
        return p;
    }
#endif
    return malloc(bytes);
}

/* Split a comma list (in place); returns the count. */
static int split(char *s, char **out, int max)
{
    int n = 0;
    for (char *t = strtok(s, ","); t && n < max; t = strtok(NULL, ",")) out[n++] = t;
    return n;
}

/* The link's page-locked rates (bytes per ms), measured by bandwidth(): a whole call from
 * ordinary memory cannot beat (bytes up / up rate) + (bytes down / down rate) + compute. */
static double g_up_rate, g_down_rate;

static void print_floor(const char *label, double whole_ms, double compute_ms, double up_bytes, double down_bytes)
{
    if (!(g_up_rate > 0 && g_down_rate > 0)) return;
    const double floor_ms = up_bytes / g_up_rate + down_bytes / g_down_rate + compute_ms;
    printf("  %-28s link floor %.1f ms (%.0f MB up, %.0f MB down at the pinned rates + compute): whole call %.2fx the floor\n",
           label, floor_ms, up_bytes / 1e6, down_bytes / 1e6, whole_ms / floor_ms);
}

#ifdef IWPP_HAVE_CUDA
typedef void (*copy_fn)(void *, const void *, size_t);
static void memcpy_fn(void *d, const void *s, size_t n) { memcpy(d, s, n); }

/* Milliseconds for @p fn to copy @p bytes from @p src to @p dst, split over @p nt threads. */
static double par_copy(copy_fn fn, void *dst, const void *src, size_t bytes, int nt)
{
    double t0 = synth_now_ms();
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static, 1)
#endif
    for (int t = 0; t < nt; ++t) {
        size_t a = bytes / (size_t)nt * (size_t)t, b = t == nt - 1 ? bytes : bytes / (size_t)nt * (size_t)(t + 1);
        fn((char *)dst + a, (const char *)src + a, b - a);
    }
    return synth_now_ms() - t0;
}
#endif

static void bandwidth(void)
{
#ifdef IWPP_HAVE_CUDA
    const size_t bytes = (size_t)1 << 30;
    void *dev = NULL, *pinned = NULL, *pageable = malloc(bytes);
    if (cudaMalloc(&dev, bytes) != cudaSuccess || cudaMallocHost(&pinned, bytes) != cudaSuccess || !pageable) {
        printf("bandwidth: could not allocate 1 GiB buffers\n");
        cudaGetLastError();
        return;
    }
    memset(pageable, 1, bytes);
    memset(pinned, 1, bytes);
    struct {
        const char *name;
        void *host;
    } kinds[2] = {{"pageable", pageable}, {"pinned", pinned}};
    for (int k = 0; k < 2; ++k) {
        double best_up = 1e30, best_down = 1e30;
        for (int r = 0; r < 3; ++r) {
            double t0 = synth_now_ms();
            cudaMemcpy(dev, kinds[k].host, bytes, cudaMemcpyHostToDevice);
            double t1 = synth_now_ms();
            cudaMemcpy(kinds[k].host, dev, bytes, cudaMemcpyDeviceToHost);
            double t2 = synth_now_ms();
            if (t1 - t0 < best_up) best_up = t1 - t0;
            if (t2 - t1 < best_down) best_down = t2 - t1;
        }
        printf("bandwidth %-8s host->device %6.1f GB/s   device->host %6.1f GB/s   (1 GiB, best of 3)\n",
               kinds[k].name, bytes / best_up / 1e6, bytes / best_down / 1e6);
        if (k == 1) {
            g_up_rate = bytes / best_up;
            g_down_rate = bytes / best_down;
        }
    }
    /* What the staging copies can reach: host copies between ordinary and pinned memory with
     * several threads (the whole-call path copies through pinned chunks on the host's cores),
     * by memcpy and by the library's streaming-store copy. */
    static const struct {
        const char *name;
        copy_fn fn;
    } copies[2] = {{"memcpy", memcpy_fn}, {"stream", iwpp_stream_copy}};
    for (int nt = 1; nt <= 32; nt *= 2)
        for (int c = 0; c < 2; ++c) {
            double best_in = 1e30, best_out = 1e30;
            for (int r = 0; r < 3; ++r) {
                double t_in = par_copy(copies[c].fn, pinned, pageable, bytes, nt);
                double t_out = par_copy(copies[c].fn, pageable, pinned, bytes, nt);
                if (t_in < best_in) best_in = t_in;
                if (t_out < best_out) best_out = t_out;
            }
            printf("host %-6s %2d threads: ordinary->pinned %6.1f GB/s   pinned->ordinary %6.1f GB/s\n",
                   copies[c].name, nt, bytes / best_in / 1e6, bytes / best_out / 1e6);
        }
    cudaFree(dev);
    cudaFreeHost(pinned);
    free(pageable);
#endif
}

typedef struct run_cfg {
    const char *label;
    uint64_t limit;
    const char *workers;
    const char *stage; /* "threads,chunk,buffers,nt" of the CUDA staging, NULL: the defaults */
} run_cfg;

/* The CUDA backend reads its staging settings when a context opens: set them (or go back to
 * the defaults) before creating one. */
static void apply_stage(const char *spec)
{
    static const char *const names[4] = {"IWPP_CUDA_STAGE_THREADS", "IWPP_CUDA_STAGE_CHUNK", "IWPP_CUDA_STAGE_BUFS",
                                         "IWPP_CUDA_STAGE_NT"};
    static char initial[4][64];
    static int saved[4], have_saved;
    if (!have_saved) { /* NULL goes back to what the environment said when the bench started */
        for (int i = 0; i < 4; ++i) {
            const char *e = getenv(names[i]);
            saved[i] = e != NULL;
            snprintf(initial[i], sizeof initial[i], "%s", e ? e : "");
        }
        have_saved = 1;
    }
    char buf[64] = "";
    if (spec) snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL, *t = spec ? strtok_r(buf, ",", &save) : NULL;
    for (int i = 0; i < 4; ++i) {
        if (t && *t)
            setenv(names[i], t, 1);
        else if (saved[i])
            setenv(names[i], initial[i], 1);
        else
            unsetenv(names[i]);
        t = t ? strtok_r(NULL, ",", &save) : NULL;
    }
}

/* Device memory in use (MB; -1 where unknown): before a context and after its calls, whose
 * buffers (tile workers' included) stay with it, the difference is what the calls kept. */
static double device_used_mb(iwpp_backend be)
{
#ifdef IWPP_HAVE_CUDA
    size_t fr = 0, tot = 0;
    if (be == IWPP_BACKEND_CUDA && cudaMemGetInfo(&fr, &tot) == cudaSuccess) return (double)(tot - fr) / 1048576.0;
#else
    (void)be;
#endif
    return -1.0;
}

/* Median-of-reps whole call; the result of the last run stays in @p work. *held_mb: the device
 * memory the context kept after its calls (-1: unknown). */
static int time_rec(iwpp_backend be, int device, const run_cfg *c, const uint8_t *marker, const uint8_t *mask,
                    uint8_t *work, int64_t w, int64_t h, int reps, double *ms, iwpp_stats *stats, double *held_mb)
{
    iwpp_context *ctx = NULL;
    apply_stage(c->stage);
    const double used0 = device_used_mb(be);
    if (iwpp_context_create(&ctx, be) != IWPP_OK || (device && iwpp_context_set_device(ctx, device)) ||
        iwpp_context_set_memory_limit(ctx, c->limit) ||
        (c->workers && iwpp_context_set_workers(ctx, c->workers))) {
        printf("  %-28s setup failed: %s\n", c->label, ctx ? iwpp_error_message(ctx) : "no context");
        iwpp_context_destroy(ctx);
        return 0;
    }
    double t[16];
    int n = 0;
    for (int r = 0; r < reps + 1 && r < 16; ++r) { /* +1: the first call builds kernels, pins nothing */
        memcpy(work, marker, (size_t)(w * h));
        iwpp_image mk = iwpp_image_2d(work, IWPP_U8, w, h), ms = iwpp_image_2d((void *)mask, IWPP_U8, w, h);
        double t0 = synth_now_ms();
        iwpp_status st = iwpp_reconstruct(ctx, &mk, &ms, 8, IWPP_BY_DILATION);
        double t1 = synth_now_ms();
        if (st != IWPP_OK) {
            printf("  %-28s failed: %s\n", c->label, iwpp_error_message(ctx));
            iwpp_context_destroy(ctx);
            return 0;
        }
        if (r > 0) t[n++] = t1 - t0;
    }
    for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j)
            if (t[j] < t[i]) {
                double x = t[i];
                t[i] = t[j];
                t[j] = x;
            }
    *ms = t[n / 2];
    iwpp_context_stats(ctx, stats);
    const double used1 = device_used_mb(be);
    *held_mb = used0 >= 0 && used1 >= 0 ? used1 - used0 : -1.0;
    iwpp_context_destroy(ctx);
    return 1;
}

int main(int argc, char **argv)
{
    const char *backend = "cuda";
    char sizes[256] = "8192", limits[256] = "", workers[512] = "", stages[256] = "";
    int bw = 1;
    int reps = 3, device = 0, do_edt = 0, edt_only = 0;
    const char *marker_kind = "tissue";
    uint64_t wlimit = 0; /* budget of the --workers runs */
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--backend") && v) backend = v, ++i;
        else if (!strcmp(a, "--sizes") && v) snprintf(sizes, sizeof sizes, "%s", v), ++i;
        else if (!strcmp(a, "--limits") && v) snprintf(limits, sizeof limits, "%s", v), ++i;
        else if (!strcmp(a, "--workers") && v) snprintf(workers, sizeof workers, "%s", v), ++i;
        else if (!strcmp(a, "--reps") && v) reps = atoi(v), ++i;
        else if (!strcmp(a, "--wlimit") && v) wlimit = parse_bytes(v), ++i;
        else if (!strcmp(a, "--device") && v) device = atoi(v), ++i;
        else if (!strcmp(a, "--marker") && v && (!strcmp(v, "tissue") || !strcmp(v, "corner") || !strcmp(v, "spiral"))) marker_kind = v, ++i;
        else if (!strcmp(a, "--stage") && v) snprintf(stages, sizeof stages, "%s", v), ++i;
        else if (!strcmp(a, "--no-bandwidth")) bw = 0;
        else if (!strcmp(a, "--huge")) g_huge = 1;
        else if (!strcmp(a, "--edt")) do_edt = 1;
        else if (!strcmp(a, "--edt-only")) do_edt = edt_only = 1;
        else {
            fprintf(stderr,
                    "usage: tiles_bench [--backend cpu|cuda|opencl] [--sizes N,...] [--limits 16G,1G]\n"
                    "                   [--workers \"gpu*2;gpu,cpu*8\"] (lists separated by ';')\n"
                    "                   [--edt-only] [--wlimit BYTES (budget of the --workers runs)] [--reps N] [--device D] [--edt]\n"
                    "                   [--stage \"threads,chunk,buffers,nt;...\"] (CUDA staging of extra in-memory runs; nt: 1 streaming stores, 0 memcpy)\n"
                    "                   [--no-bandwidth] [--marker tissue|corner|spiral]\n"
                    "                   [--huge] (host arrays on transparent huge pages)\n");
            return 1;
        }
    }
    if (reps < 1) reps = 1;
    if (reps > 15) reps = 15;
    iwpp_backend be = !strcmp(backend, "cpu") ? IWPP_BACKEND_CPU
                      : !strcmp(backend, "opencl") ? IWPP_BACKEND_OPENCL
                                                   : IWPP_BACKEND_CUDA;
    if (be == IWPP_BACKEND_CUDA && bw) bandwidth();

    char *sz[16], *lim[16], *wk[16], *stg[16];
    int nsz = split(sizes, sz, 16), nlim = split(limits, lim, 16), nwk = 0, nst = 0;
    for (char *t = strtok(workers, ";"); t && nwk < 16; t = strtok(NULL, ";")) wk[nwk++] = t;
    for (char *t = strtok(stages, ";"); t && nst < 16; t = strtok(NULL, ";")) stg[nst++] = t;

    for (int s = 0; s < nsz; ++s) {
        int64_t n = atoll(sz[s]);
        int64_t px = n * n;
        uint8_t *mask = host_alloc((size_t)px), *marker = host_alloc((size_t)px), *ref = host_alloc((size_t)px),
                *work = host_alloc((size_t)px);
        if (!mask || !marker || !ref || !work) {
            printf("%lld^2: out of host memory\n", (long long)n);
            return 1;
        }
        double g0 = synth_now_ms();
        if (!edt_only) {
            synth_tissue(mask, IWPP_U8, n, n, 1, 1);
            if (!strcmp(marker_kind, "spiral")) {
                /* the mask a one-pixel spiral corridor, the seed at its outer end: a path of about
                   half the pixels that winds through every tile again and again */
                synth_spiral(mask, n, n, 1);
                memset(marker, 0, (size_t)px);
                marker[0] = 255;
            } else if (!strcmp(marker_kind, "corner")) {
                /* one seed in the last corner the tiles' first runs reach: the flood crosses every tile */
                memset(marker, 0, (size_t)px);
                marker[px - 1] = mask[px - 1] = 255;
            } else {
                synth_sub_sat(marker, mask, IWPP_U8, px, 40);
            }
        }
        printf("\n== %lldx%lld U8 tissue, marker %s, 8-connected reconstruction by dilation, %s (inputs made in %.1f s)\n",
               (long long)n, (long long)n, !strcmp(marker_kind, "corner")   ? "a seed in the last corner"
               : !strcmp(marker_kind, "spiral") ? "a seed at the end of a spiral corridor (mask)"
                                                : "mask - 40",
               backend, (synth_now_ms() - g0) / 1000);
        printf("  %-28s %10s %10s %8s %7s %7s %9s %9s  %s\n", "case", "whole_ms", "compute", "ratio", "tiles",
               "rounds", "GB_up", "GB_down", "variant / check");
        run_cfg cfgs[40];
        int nc = 0;
        cfgs[nc++] = (run_cfg){"in memory (default budget)", 0, NULL, NULL};
        static char labels[40][96];
        for (int i = 0; i < nst && nc < 40; ++i) {
            snprintf(labels[nc], sizeof labels[nc], "in memory, stage %s", stg[i]);
            cfgs[nc] = (run_cfg){labels[nc], 0, NULL, stg[i]};
            nc++;
        }
        for (int i = 0; i < nlim && nc < 40; ++i) {
            snprintf(labels[nc], sizeof labels[nc], "budget %s", lim[i]);
            cfgs[nc] = (run_cfg){labels[nc], parse_bytes(lim[i]), NULL, NULL};
            nc++;
        }
        for (int i = 0; i < nwk && nc < 40; ++i) {
            snprintf(labels[nc], sizeof labels[nc], "workers %s%s", wk[i], wlimit ? " +budget" : "");
            cfgs[nc] = (run_cfg){labels[nc], wlimit, wk[i], NULL};
            nc++;
        }
        double base = 0;
        int have_ref = 0;
        for (int c = 0; c < nc && !edt_only; ++c) {
            double ms = 0;
            iwpp_stats st;
            memset(&st, 0, sizeof st);
            double held = -1;
            if (!time_rec(be, device, &cfgs[c], marker, mask, work, n, n, reps, &ms, &st, &held)) continue;
            const char *check = "reference";
            if (!have_ref) {
                memcpy(ref, work, (size_t)px);
                have_ref = 1;
                base = ms;
            } else {
                int64_t bad = 0;
                for (int64_t i = 0; i < px; ++i) bad += ref[i] != work[i];
                check = bad ? "MISMATCH" : "exact";
                if (bad) printf("  *** %lld pixels differ from the reference\n", (long long)bad);
            }
            printf("  %-28s %10.1f %10.1f %8.2f %7lld %7lld %9.2f %9.2f  %s / %s\n", cfgs[c].label, ms,
                   st.compute_ms, base > 0 ? ms / base : 0.0, (long long)st.tiles, (long long)st.tile_rounds,
                   st.bytes_to_device / 1e9, st.bytes_from_device / 1e9, st.variant, check);
            if (st.tiles == 0 && !cfgs[c].workers) print_floor("", ms, st.compute_ms, 2.0 * (double)px, (double)px);
            if (st.tiles > 0)
                printf("  %-28s re-run queue pops: %lld (%.2f%% of the pixels), queue overflow passes: %lld\n", "",
                       (long long)st.pixels_visited, 100.0 * (double)st.pixels_visited / (double)px,
                       (long long)st.overflow_reruns);
            if (held >= 0) printf("  %-28s device memory the context kept: %.0f MB\n", "", held);
            if (st.workers > 1) {
                printf("  %-28s tile runs per worker:", "");
                for (int k = 0; k < st.workers && k < 16; ++k) printf(" %lld", (long long)st.worker_tiles[k]);
                printf("\n");
            }
        }
        if (do_edt) {
            /* exact EDT of a nuclei mask: in memory, then with each budget (tiles), compared */
            uint8_t *bin = mask; /* reuse */
            float *dist = host_alloc((size_t)px * sizeof(float)), *dref = host_alloc((size_t)px * sizeof(float));
            if (dist && dref && synth_nuclei(bin, n, n, 1, 1) == 0) {
                for (int c = -1; c < nlim + nst + nwk; ++c) {
                    iwpp_context *ctx = NULL;
                    const char *stage = c >= nlim && c < nlim + nst ? stg[c - nlim] : NULL;
                    const char *wl = c >= nlim + nst ? wk[c - nlim - nst] : NULL;
                    char label[96];
                    snprintf(label, sizeof label, "%s%s%s", c < 0 ? "exact EDT, in memory" : wl ? "EDT workers " : stage ? "EDT in memory, stage " : lim[c],
                             stage ? stage : "", wl ? wl : "");
                    apply_stage(stage);
                    const double used0 = device_used_mb(be);
                    iwpp_context_create(&ctx, be);
                    if (device) iwpp_context_set_device(ctx, device);
                    if (c >= 0 && c < nlim) iwpp_context_set_memory_limit(ctx, parse_bytes(lim[c]));
                    if (wl) { /* the workers lists with the --wlimit budget */
                        iwpp_context_set_memory_limit(ctx, wlimit);
                        iwpp_context_set_workers(ctx, wl);
                    }
                    double best = 1e30;
                    iwpp_stats st;
                    int okrun = 1;
                    for (int r = 0; r < reps + 1 && okrun; ++r) {
                        iwpp_image b = iwpp_image_2d(bin, IWPP_U8, n, n), d = iwpp_image_2d(dist, IWPP_F32, n, n);
                        double t0 = synth_now_ms();
                        iwpp_status e = iwpp_distance_transform(ctx, &b, IWPP_EDT_EXACT, NULL, &d, NULL);
                        double t1 = synth_now_ms();
                        if (e != IWPP_OK) {
                            printf("  exact EDT failed: %s\n", iwpp_error_message(ctx));
                            okrun = 0;
                        }
                        if (r > 0 && t1 - t0 < best) best = t1 - t0;
                    }
                    iwpp_context_stats(ctx, &st);
                    const double used1 = device_used_mb(be);
                    const char *check = "reference";
                    if (c < 0) {
                        memcpy(dref, dist, (size_t)px * sizeof(float));
                    } else {
                        check = memcmp(dref, dist, (size_t)px * sizeof(float)) ? "MISMATCH" : "exact";
                    }
                    if (okrun)
                        printf("  %-28s %10.1f %10.1f %8s %7lld %7s %9.2f %9.2f  %s / %s\n",
                               label, best, st.compute_ms, "",
                               (long long)st.tiles, "", st.bytes_to_device / 1e9, st.bytes_from_device / 1e9,
                               st.variant, check);
                    /* "/bits": the input went up as bits of != 0 (an eighth of its bytes) */
                    if (okrun && st.tiles == 0)
                        print_floor("", best, st.compute_ms, strstr(st.variant, "/bits") ? px / 8.0 : (double)px,
                                    4.0 * (double)px);
                    if (okrun && used0 >= 0 && used1 >= 0)
                        printf("  %-28s device memory the context kept: %.0f MB\n", "", used1 - used0);
                    iwpp_context_destroy(ctx);
                }
            }
            free(dist);
            free(dref);
        }
        free(mask);
        free(marker);
        free(ref);
        free(work);
    }
    return 0;
}
