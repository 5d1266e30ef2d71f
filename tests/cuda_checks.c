/*
 * cuda_checks.c - checks and quick timings of the CUDA backend on the GPU machine (a runner of
 * its own, not a CMocka test: bench/final_device.sh runs it under compute-sanitizer):
 *   iwpp_cuda_checks [size]       (default 8192)
 * Reconstruction by dilation of a smooth "tissue" U8 image (value noise, blobs of ~256 and
 * ~64 pixels) with marker = mask - 40, 8-connected, for each queue variant and the megapixel
 * algorithm; a random image for the AUTO rule; the exact and Danielsson EDT of a thresholded
 * copy. `iwpp_cuda_checks edt [n...]`: the exact EDT checks (edt_checks) and the EDT timings only
 * (`edt0`: the timings only). `iwpp_cuda_checks labels [n]`: labeling, watershed and distance
 * watershed on n x n (default 4096) and a 3D volume (label_checks).
 * Every GPU result is compared with the CPU backend's. Times are stats.compute_ms (GPU
 * time, transfers excluded) and stats.total_ms.
 */
#define _POSIX_C_SOURCE 200809L
#include "iwpp.h"
#include "backend.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

/* value noise: bilinear interpolation of a random lattice with cell size `cell` */
static double vnoise(int64_t x, int64_t y, int cell, uint32_t seed)
{
    int64_t cx = x / cell, cy = y / cell;
    double fx = (double)(x % cell) / cell, fy = (double)(y % cell) / cell;
    fx = fx * fx * (3 - 2 * fx);
    fy = fy * fy * (3 - 2 * fy);
    double v[4];
    for (int k = 0; k < 4; ++k) {
        uint32_t hx = (uint32_t)(cx + (k & 1)), hy = (uint32_t)(cy + (k >> 1));
        v[k] = (hash32(hx * 73856093u ^ hy * 19349663u ^ seed) & 0xFFFF) / 65535.0;
    }
    return (v[0] * (1 - fx) + v[1] * fx) * (1 - fy) + (v[2] * (1 - fx) + v[3] * fx) * fy;
}

static void tissue(uint8_t *im, int64_t n)
{
    for (int64_t y = 0; y < n; ++y)
        for (int64_t x = 0; x < n; ++x) {
            double v = 0.6 * vnoise(x, y, 256, 1) + 0.3 * vnoise(x, y, 64, 2) + 0.1 * vnoise(x, y, 16, 3);
            im[y * n + x] = (uint8_t)(v * 255.0);
        }
}

static void run_recon(iwpp_context *g, iwpp_context *c, const char *name, const uint8_t *mask, const uint8_t *ref,
                      int64_t n, uint8_t *work)
{
    for (size_t k = 0; k < (size_t)(n * n); ++k) work[k] = mask[k] > 40 ? (uint8_t)(mask[k] - 40) : 0;
    iwpp_image mk = iwpp_image_2d(work, IWPP_U8, n, n);
    iwpp_image ms = iwpp_image_2d((void *)mask, IWPP_U8, n, n);
    double best = 1e30;
    iwpp_stats s;
    memset(&s, 0, sizeof s);
    int ok = 1;
    for (int rep = 0; rep < 3; ++rep) {
        for (size_t k = 0; k < (size_t)(n * n); ++k) work[k] = mask[k] > 40 ? (uint8_t)(mask[k] - 40) : 0;
        iwpp_status st = iwpp_reconstruct(g, &mk, &ms, 8, IWPP_BY_DILATION);
        if (st != IWPP_OK) {
            printf("%-22s FAILED: %s\n", name, iwpp_error_message(g));
            return;
        }
        iwpp_context_stats(g, &s);
        if (s.compute_ms < best) best = s.compute_ms;
        if (ref && memcmp(work, ref, (size_t)(n * n)) != 0) ok = 0;
    }
    printf("%-22s %6lldx%-6lld compute %8.2f ms (best of 3)  total %8.2f ms  visited %11lld rounds %6lld "
           "reruns %lld  %s  [%s]\n",
           name, (long long)n, (long long)n, best, s.total_ms, (long long)s.pixels_visited, (long long)s.rounds,
           (long long)s.overflow_reruns, s.variant, ref ? (ok ? "== cpu" : "DIFFERS FROM CPU") : "");
    (void)c;
}

/* Small random cases of every type, mode, connectivity and algorithm against the CPU backend. */
static int check_small(iwpp_context *g, iwpp_context *c, int reverse, int quick)
{
    /* 2D widths of 4k (16-byte rows) and not, over several row segments (1024 px) and column
       bands (256 rows) of the 2D scans */
    static const int64_t sizes[][3] = {{1, 1, 1}, {1, 37, 1}, {45, 1, 1}, {33, 31, 1}, {100, 67, 1},
                                       {257, 129, 1}, {17, 9, 5}, {40, 33, 7}, {1, 1, 9}, {1100, 300, 1},
                                       {1027, 261, 1}, {6, 5, 1}};
    static const iwpp_type types[] = {IWPP_U8, IWPP_U16, IWPP_F32};
    int bad = 0, runs = 0, cpu_failed = 0;
    uint32_t seed = 7;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
        if (quick && si != 3 && si != 6) continue;
        const int64_t w = sizes[si][0], h = sizes[si][1], d = sizes[si][2], n = w * h * d;
        for (int ti = 0; ti < 3; ++ti) {
            if (quick && ti != 0) continue;
            const iwpp_type t = types[ti];
            const size_t es = iwpp_type_size(t);
            unsigned char *mask = malloc(n * es), *m1 = malloc(n * es), *m2 = malloc(n * es);
            /* mask: smooth-ish random levels; marker: sparse seeds */
            for (int64_t k = 0; k < n; ++k) {
                uint32_t r = hash32(seed++);
                double mv = (double)(r % 200) + 20.0, kv = (r >> 16) % 23 == 0 ? mv : (double)((r >> 8) % 30);
                if (t == IWPP_U8) { mask[k] = (uint8_t)mv; m1[k] = (uint8_t)kv; }
                else if (t == IWPP_U16) { ((uint16_t *)mask)[k] = (uint16_t)(mv * 250); ((uint16_t *)m1)[k] = (uint16_t)(kv * 250); }
                else { ((float *)mask)[k] = (float)(mv * 0.37); ((float *)m1)[k] = (float)(kv * 0.37); }
            }
            const int conns2[] = {4, 8}, conns3[] = {6, 18, 26};
            const int *conns = d > 1 ? conns3 : conns2;
            const int nc = d > 1 ? 3 : 2;
            for (int cj = 0; cj < nc; ++cj)
                for (int mode = 0; mode < 2; ++mode)
                    for (int alg = 0; alg < 6; ++alg) { /* 5: the one-pixel-a-thread 2D kernels */
                        const int ci = reverse ? nc - 1 - cj : cj;
                        unsigned char *ref = malloc(n * es);
                        memcpy(ref, m1, n * es);
                        if (mode == 1) /* erosion: marker above the mask */
                            for (int64_t k = 0; k < n; ++k) {
                                if (t == IWPP_U8) ref[k] = (uint8_t)(255 - ref[k]);
                                else if (t == IWPP_U16) ((uint16_t *)ref)[k] = (uint16_t)(65535 - ((uint16_t *)ref)[k]);
                                else ((float *)ref)[k] = 1000.0f - ((float *)ref)[k];
                            }
                        memcpy(m2, ref, n * es);
                        iwpp_image a = iwpp_image_3d(ref, t, w, h, d), b = iwpp_image_3d(m2, t, w, h, d),
                                   ms = iwpp_image_3d(mask, t, w, h, d);
                        iwpp_status cst = iwpp_reconstruct(c, &a, &ms, conns[ci], (iwpp_morph_mode)mode);
                        if (cst != IWPP_OK) { /* no reference: count it, compare nothing */
                            if (cpu_failed++ == 0) printf("CPU reference failed (%s); such cases are skipped\n",
                                                          iwpp_error_message(c));
                            free(ref);
                            continue;
                        }
                        iwpp_context_set_algorithm(g, alg == 3 ? IWPP_ALGO_MEGAPIXEL : IWPP_ALGO_QUEUE);
                        iwpp_context_set_queue_variant(g, alg == 1 ? IWPP_QUEUE_ATOMIC : alg == 2 ? IWPP_QUEUE_PREFIXSUM
                                                                                               : IWPP_QUEUE_MULTILEVEL);
                        iwpp_context_set_queue_capacity(g, alg == 4 ? 3 : 0);
                        iwpp_context_set_tuning(g, "cuda.rec_quads", alg == 5 ? "0" : NULL);
                        iwpp_status st = iwpp_reconstruct(g, &b, &ms, conns[ci], (iwpp_morph_mode)mode);
                        runs++;
                        if (st != IWPP_OK || memcmp(ref, m2, n * es) != 0) {
                            if (bad < 12) {
                                printf("MISMATCH %lldx%lldx%lld %s conn %d mode %d alg %d: %s\n", (long long)w,
                                       (long long)h, (long long)d, iwpp_type_name(t), conns[ci], mode, alg,
                                       st == IWPP_OK ? "values differ" : iwpp_error_message(g));
                                if (t == IWPP_U8 && bad < 3) {
                                    int shown = 0;
                                    for (int64_t k = 0; k < n && shown < 12; ++k)
                                        if (ref[k] != m2[k]) {
                                            printf("  [%lld] mask %d marker %d cpu %d gpu %d\n", (long long)k, mask[k],
                                                   mode ? 255 - m1[k] : m1[k], ref[k], m2[k]);
                                            shown++;
                                        }
                                }
                            }
                            bad++;
                        }
                        free(ref);
                    }
            /* EDT of the mask's low values, exact and Danielsson, with anisotropic spacing */
            {
                float *e1 = malloc(n * 4), *e2 = malloc(n * 4);
                int64_t *n1 = malloc(n * 8), *n2 = malloc(n * 8);
                unsigned char *bin = malloc(n * es);
                for (int64_t k = 0; k < n; ++k) {
                    int fg = hash32(seed++) % 7 != 0;
                    if (t == IWPP_U8) bin[k] = fg ? 200 : 0;
                    else if (t == IWPP_U16) ((uint16_t *)bin)[k] = fg ? 9 : 0;
                    else ((float *)bin)[k] = fg ? 0.5f : 0.0f;
                }
                const double sp[2][3] = {{1, 1, 1}, {0.7, 1.3, 2.1}};
                for (int s = 0; s < 2; ++s) {
                    iwpp_image bi = iwpp_image_3d(bin, t, w, h, d), o1 = iwpp_image_3d(e1, IWPP_F32, w, h, d),
                               o2 = iwpp_image_3d(e2, IWPP_F32, w, h, d), q1 = iwpp_image_3d(n1, IWPP_I64, w, h, d),
                               q2 = iwpp_image_3d(n2, IWPP_I64, w, h, d);
                    iwpp_distance_transform(c, &bi, IWPP_EDT_EXACT, sp[s], &o1, &q1);
                    iwpp_status st = iwpp_distance_transform(g, &bi, IWPP_EDT_EXACT, sp[s], &o2, &q2);
                    runs++;
                    if (st != IWPP_OK || memcmp(e1, e2, n * 4) != 0) {
                        printf("EDT MISMATCH %lldx%lldx%lld %s spacing %d: %s\n", (long long)w, (long long)h,
                               (long long)d, iwpp_type_name(t), s, st == IWPP_OK ? "values differ" : iwpp_error_message(g));
                        bad++;
                    }
                    st = iwpp_distance_transform(g, &bi, IWPP_EDT_DANIELSSON, sp[s], &o2, &q2);
                    runs++;
                    int below = 0;
                    for (int64_t k = 0; k < n; ++k) below += e2[k] < e1[k];
                    if (st != IWPP_OK || below) {
                        printf("DANIELSSON %lldx%lldx%lld %s spacing %d: %s (%d below exact)\n", (long long)w,
                               (long long)h, (long long)d, iwpp_type_name(t), s,
                               st == IWPP_OK ? "below exact" : iwpp_error_message(g), below);
                        bad++;
                    }
                }
                free(e1); free(e2); free(n1); free(n2); free(bin);
            }
            free(mask);
            free(m1);
            free(m2);
        }
    }
    iwpp_context_set_algorithm(g, IWPP_ALGO_AUTO);
    iwpp_context_set_queue_variant(g, IWPP_QUEUE_MULTILEVEL);
    iwpp_context_set_queue_capacity(g, 0);
    printf("small checks: %d runs, %d mismatches (%d cases skipped: CPU reference failed)\n", runs, bad, cpu_failed);
    return bad;
}

/* 1000 operations on one context, then 50 context create/destroy cycles: device memory in use
 * must not grow (the context's grow-only scratch is allocated by the first calls). */
static void leak_check(iwpp_context *g)
{
    const int64_t w = 300, h = 200;
    uint8_t *mk = malloc(w * h), *ms = malloc(w * h);
    float *dd = malloc(w * h * 4);
    for (int64_t k = 0; k < w * h; ++k) {
        ms[k] = (uint8_t)(hash32((uint32_t)k) & 0xFF);
        mk[k] = ms[k] / 2;
    }
    iwpp_image a = iwpp_image_2d(mk, IWPP_U8, w, h), b = iwpp_image_2d(ms, IWPP_U8, w, h),
               o = iwpp_image_2d(dd, IWPP_F32, w, h);
    size_t f0 = 0, f1 = 0, f2 = 0, tot = 0;
    iwpp_reconstruct(g, &a, &b, 8, IWPP_BY_DILATION);
    iwpp_distance_transform(g, &b, IWPP_EDT_EXACT, NULL, &o, NULL);
    cudaMemGetInfo(&f0, &tot);
    int fails = 0;
    for (int i = 0; i < 1000; ++i) {
        if (iwpp_reconstruct(g, &a, &b, (i & 1) ? 8 : 4, (i & 2) ? IWPP_BY_EROSION : IWPP_BY_DILATION) != IWPP_OK)
            fails++;
        if (i % 10 == 0 && iwpp_distance_transform(g, &b, (i & 4) ? IWPP_EDT_DANIELSSON : IWPP_EDT_EXACT, NULL, &o,
                                                   NULL) != IWPP_OK)
            fails++;
    }
    cudaMemGetInfo(&f1, &tot);
    for (int i = 0; i < 50; ++i) {
        iwpp_context *x = NULL;
        if (iwpp_context_create(&x, IWPP_BACKEND_CUDA) != IWPP_OK) fails++;
        if (iwpp_reconstruct(x, &a, &b, 8, IWPP_BY_DILATION) != IWPP_OK) fails++;
        iwpp_context_destroy(x);
    }
    cudaMemGetInfo(&f2, &tot);
    printf("leak check: 1100 calls, %d failed; device memory in use grew by %.1f MiB over 1000 calls and by %.1f "
           "MiB over 50 contexts\n",
           fails, ((double)f0 - (double)f1) / 1048576.0, ((double)f1 - (double)f2) / 1048576.0);
    free(mk);
    free(ms);
    free(dd);
}

/* Exact EDT against the CPU backend on many images (random densities, a single background pixel,
 * the outside of a disk, one background row, points on a circle, half background, none at all,
 * a parabola-shaped boundary; 2D and 3D; unit, anisotropic and random spacing): the distances
 * must be equal bit for bit, and every GPU nearest index must be a background pixel at exactly
 * that distance. Returns the number of failing cases. */
static uint32_t edt_rs = 12345u;
static double edt_u(void) { edt_rs = hash32(edt_rs + 0x9e3779b9u); return (double)edt_rs / 4294967296.0; }

static int edt_checks(iwpp_context *g, iwpp_context *c, int iters)
{
    int bad = 0, cases = 0;
    for (int it = 0; it < iters; ++it) {
        const int three = it % 4 == 3;
        int64_t w = 1 + (int64_t)(edt_u() * (it % 5 == 0 ? 2500 : 300)), h = 1 + (int64_t)(edt_u() * 200), d = 1;
        if (it % 17 == 0) { w = 8192 + (int64_t)(edt_u() * 40); h = 1 + (int64_t)(edt_u() * 6); }
        if (it % 23 == 0) { w = 24000 + (int64_t)(edt_u() * 9000); h = 2; } /* around the shared-memory limit */
        if (three) { w = 1 + (int64_t)(edt_u() * 70); h = 1 + (int64_t)(edt_u() * 60); d = 1 + (int64_t)(edt_u() * 40); }
        const int64_t n = w * h * d;
        const int kind = (int)(edt_u() * 8);
        uint8_t *im = malloc((size_t)n);
        memset(im, 255, (size_t)n);
        const double p = pow(10.0, -4.0 * edt_u());
        const double cx = edt_u() * w, cy = edt_u() * h, cz = edt_u() * d;
        const double R = edt_u() * (double)(w > h ? w : h);
        for (int64_t z = 0; z < d; ++z)
            for (int64_t y = 0; y < h; ++y)
                for (int64_t x = 0; x < w; ++x) {
                    const int64_t k = (z * h + y) * w + x;
                    int bg = 0;
                    switch (kind) {
                    case 0: bg = edt_u() < p; break;
                    case 2: bg = sqrt((x - cx) * (x - cx) + (y - cy) * (y - cy) + (z - cz) * (z - cz)) >= R; break;
                    case 3: bg = y == (int64_t)cy; break;
                    case 5: bg = edt_u() < 0.5; break;
                    case 7: bg = y == (int64_t)(0.01 * edt_u() * (x - cx) * (x - cx)); break;
                    default: break;
                    }
                    if (bg) im[k] = 0;
                }
        if (kind == 1) im[(size_t)(edt_u() * n) % (size_t)n] = 0;
        if (kind == 4)
            for (int k = 0; k < 400; ++k) {
                const double a = edt_u() * 6.2831853, r = R * 0.3;
                const int64_t x = (int64_t)lround(cx + r * cos(a)), y = (int64_t)lround(cy + r * sin(a)),
                              z = (int64_t)(edt_u() * d);
                if (x >= 0 && x < w && y >= 0 && y < h) im[(z * h + y) * w + x] = 0;
            }
        float *d1 = malloc((size_t)n * 4), *d2 = malloc((size_t)n * 4);
        int64_t *n1 = malloc((size_t)n * 8), *n2 = malloc((size_t)n * 8);
        static const double sps[][3] = {{1, 1, 1}, {0.7, 1.3, 2.1}, {1, 3, 1}, {2.5, 0.4, 1}, {1, 1.0000001, 1},
                                        {0.1, 0.1, 0.1}, {3, 1, 0.5}, {0.33, 0.77, 1.9}};
        for (int s = 0; s < 9; ++s) {
            double sp[3];
            if (s < 8) memcpy(sp, sps[s], sizeof sp);
            else for (int a = 0; a < 3; ++a) sp[a] = 0.05 + 5 * edt_u();
            iwpp_image bi = iwpp_image_3d(im, IWPP_U8, w, h, d), o1 = iwpp_image_3d(d1, IWPP_F32, w, h, d),
                       o2 = iwpp_image_3d(d2, IWPP_F32, w, h, d), q1 = iwpp_image_3d(n1, IWPP_I64, w, h, d),
                       q2 = iwpp_image_3d(n2, IWPP_I64, w, h, d);
            if (iwpp_distance_transform(c, &bi, IWPP_EDT_EXACT, sp, &o1, &q1) != IWPP_OK) continue;
            iwpp_status st = iwpp_distance_transform(g, &bi, IWPP_EDT_EXACT, sp, &o2, &q2);
            cases++;
            int64_t nd = 0, nn = 0, first = -1;
            if (st == IWPP_OK) {
                for (int64_t k = 0; k < n; ++k) {
                    if (memcmp(&d1[k], &d2[k], 4) != 0) {
                        if (first < 0) first = k;
                        nd++;
                    }
                    const int64_t q = n2[k];
                    if (q < 0 || q >= n) {
                        nn += !(q == -1 && d2[k] == INFINITY);
                        continue;
                    }
                    if (im[q] != 0) { nn++; continue; }
                    const double tz = (double)(k / (w * h) - q / (w * h)) * sp[2];
                    const double ty = (double)((k / w) % h - (q / w) % h) * sp[1];
                    const double tx = (double)(k % w - q % w) * sp[0];
                    if ((float)sqrt((tz * tz + ty * ty) + tx * tx) != d2[k]) nn++;
                }
            }
            if (st != IWPP_OK || nd || nn) {
                if (bad < 12)
                    printf("EDT CHECK FAILED kind %d %lldx%lldx%lld spacing (%g, %g, %g): %s, %lld distances differ "
                           "(first at %lld: cpu %.9g gpu %.9g), %lld bad nearest\n",
                           kind, (long long)w, (long long)h, (long long)d, sp[0], sp[1], sp[2],
                           st == IWPP_OK ? "ok" : iwpp_error_message(g), (long long)nd, (long long)first,
                           first >= 0 ? d1[first] : 0.0, first >= 0 ? d2[first] : 0.0, (long long)nn);
                bad++;
            }
        }
        free(im); free(d1); free(d2); free(n1); free(n2);
    }
    printf("edt checks: %d cases (2D and 3D, 9 spacings each), %d failed\n", cases, bad);
    return bad;
}

/* Exact (and Danielsson) EDT of a thresholded tissue image at n x n: GPU time against the CPU. */
static void edt_timing(iwpp_context *g, iwpp_context *c, int64_t n)
{
    size_t N = (size_t)(n * n);
    uint8_t *mask = malloc(N);
    float *d1 = malloc(N * 4), *d2 = malloc(N * 4);
    int64_t *q2 = malloc(N * 8);
    if (!mask || !d1 || !d2 || !q2) return;
    tissue(mask, n);
    for (size_t k = 0; k < N; ++k) mask[k] = mask[k] > 128 ? 255 : 0;
    iwpp_image bin = iwpp_image_2d(mask, IWPP_U8, n, n);
    iwpp_image o1 = iwpp_image_2d(d1, IWPP_F32, n, n), o2 = iwpp_image_2d(d2, IWPP_F32, n, n),
               nq = iwpp_image_2d(q2, IWPP_I64, n, n);
    const double sp1[3] = {1, 1, 1}, sp2[3] = {0.7, 1.3, 1};
    iwpp_stats cs;
    iwpp_status st;
    for (int sp = 0; sp < 3; ++sp) {
        const double *spc = sp == 1 ? sp2 : sp1;
        st = iwpp_distance_transform(c, &bin, IWPP_EDT_EXACT, spc, &o1, NULL);
        iwpp_context_stats(c, &cs);
        double best = 1e30;
        iwpp_stats s;
        memset(&s, 0, sizeof s);
        for (int rep = 0; rep < 5; ++rep) {
            if (iwpp_distance_transform(g, &bin, IWPP_EDT_EXACT, spc, &o2, sp == 2 ? &nq : NULL) != IWPP_OK) {
                printf("edt FAILED: %s\n", iwpp_error_message(g));
                break;
            }
            iwpp_context_stats(g, &s);
            if (s.compute_ms < best) best = s.compute_ms;
        }
        printf("edt exact %lldx%lld sp=%d%s compute %8.2f ms (best of 5) total %8.2f ms  cpu %8.1f ms  %s [%s]\n",
               (long long)n, (long long)n, sp == 1, sp == 2 ? " +nearest" : "         ", best, s.total_ms,
               cs.total_ms, st == IWPP_OK && memcmp(d1, d2, N * 4) == 0 ? "== cpu (bitwise)" : "DIFFERS FROM CPU",
               s.variant);
    }
    {
        iwpp_stats s;
        if (iwpp_distance_transform(g, &bin, IWPP_EDT_DANIELSSON, sp1, &o2, NULL) == IWPP_OK) {
            iwpp_context_stats(g, &s);
            iwpp_distance_transform(c, &bin, IWPP_EDT_EXACT, sp1, &o1, NULL);
            double maxerr = 0;
            size_t below = 0;
            for (size_t k = 0; k < N; ++k) {
                double e = (double)d2[k] - (double)d1[k];
                if (e < 0) below++;
                if (e > maxerr) maxerr = e;
            }
            printf("edt danielsson         compute %8.2f ms  visited %lld  max error %.4f px, %zu below exact\n",
                   s.compute_ms, (long long)s.pixels_visited, maxerr, below);
        } else {
            printf("danielsson FAILED: %s\n", iwpp_error_message(g));
        }
    }
    free(mask); free(d1); free(d2); free(q2);
}

/* ---- labeling and watershed: CUDA against the CPU backend on large images (label.cu, watershed.cu) ---- */

/* Run @p what on both contexts (the call fills @p out of either) and compare; prints the times. */
typedef iwpp_status (*lab_call)(iwpp_context *ctx, void *arg, iwpp_image *out);

static int lab_compare(iwpp_context *g, iwpp_context *c, const char *name, lab_call call, void *arg, int64_t w,
                       int64_t h, int64_t d)
{
    const size_t N = (size_t)(w * h * d);
    uint32_t *a = malloc(N * 4), *b = malloc(N * 4);
    if (!a || !b) return 1;
    iwpp_image ia = iwpp_image_3d(a, IWPP_U32, w, h, d), ib = iwpp_image_3d(b, IWPP_U32, w, h, d);
    iwpp_status sc = call(c, arg, &ia), sg = call(g, arg, &ib);
    sg = sg ? sg : call(g, arg, &ib); /* timed: the second run */
    iwpp_stats gs, cs;
    iwpp_context_stats(g, &gs);
    iwpp_context_stats(c, &cs);
    size_t diff = 0, first = 0;
    for (size_t k = 0; k < N; ++k)
        if (a[k] != b[k] && diff++ == 0) first = k;
    printf("%-34s cuda %s %.2f ms compute %.2f ms (%s, %lld rounds) | cpu %.1f ms | %zu differ%s", name,
           sg ? iwpp_error_message(g) : "ok", gs.total_ms, gs.compute_ms, gs.variant, (long long)gs.rounds, cs.total_ms,
           diff, sc ? " (cpu failed)" : "");
    if (diff) printf(" (first at %zu: cpu %u cuda %u)", first, a[first], b[first]);
    printf("\n");
    free(a);
    free(b);
    return sc || sg || diff;
}

typedef struct lab_arg {
    iwpp_image in, markers;
    const iwpp_image *mask;
    int conn, mode, lines;
} lab_arg;

static iwpp_status call_label(iwpp_context *ctx, void *p, iwpp_image *out)
{
    lab_arg *a = p;
    int64_t count = 0;
    return iwpp_label(ctx, &a->in, a->conn, (iwpp_label_mode)a->mode, out, &count);
}

static iwpp_status call_ws(iwpp_context *ctx, void *p, iwpp_image *out)
{
    lab_arg *a = p;
    return iwpp_watershed(ctx, &a->in, &a->markers, a->mask, a->conn, a->lines, out);
}

static iwpp_status call_dws(iwpp_context *ctx, void *p, iwpp_image *out)
{
    lab_arg *a = p;
    return iwpp_distance_watershed(ctx, &a->in, NULL, 2.0, a->conn, a->lines, out);
}

/* iwpp_cuda_checks labels [n]: tissue-like n x n images (label binary / equal, watershed with
 * and without lines, a constant image with one marker in a corner, distance watershed) and a
 * random 3D volume, each CUDA against CPU. */
static int label_checks(iwpp_context *g, iwpp_context *c, int64_t n)
{
    const size_t N = (size_t)(n * n);
    uint8_t *t = malloc(N), *bin = malloc(N), *q = malloc(N), *flat = malloc(N);
    uint32_t *mk = malloc(N * 4), *one = calloc(N, 4);
    if (!t || !bin || !q || !flat || !mk || !one) return 1;
    tissue(t, n);
    for (size_t k = 0; k < N; ++k) {
        bin[k] = t[k] > 128 ? 255 : 0;
        q[k] = (uint8_t)(t[k] / 32 + 1);
        flat[k] = 7;
    }
    int bad = 0;
    lab_arg a = {iwpp_image_2d(bin, IWPP_U8, n, n), iwpp_image_2d(mk, IWPP_U32, n, n), NULL, 8, 0, 0};
    bad |= lab_compare(g, c, "label binary 8", call_label, &a, n, n, 1);
    a.conn = 4;
    bad |= lab_compare(g, c, "label binary 4", call_label, &a, n, n, 1);
    a.in = iwpp_image_2d(q, IWPP_U8, n, n);
    a.mode = IWPP_LABEL_EQUAL;
    bad |= lab_compare(g, c, "label equal 8 (t/32)", call_label, &a, n, n, 1);
    /* markers: the components of t < 60 */
    for (size_t k = 0; k < N; ++k) q[k] = t[k] < 60 ? 1 : 0;
    iwpp_image qi = iwpp_image_2d(q, IWPP_U8, n, n), mki = iwpp_image_2d(mk, IWPP_U32, n, n);
    int64_t count = 0;
    if (iwpp_label(c, &qi, 8, IWPP_LABEL_BINARY, &mki, &count) != IWPP_OK) return 1;
    printf("watershed markers: %lld\n", (long long)count);
    a.in = iwpp_image_2d(t, IWPP_U8, n, n);
    a.mode = 0;
    a.conn = 8;
    bad |= lab_compare(g, c, "watershed tissue 8", call_ws, &a, n, n, 1);
    a.lines = 1;
    bad |= lab_compare(g, c, "watershed tissue 8 lines", call_ws, &a, n, n, 1);
    a.conn = 4;
    bad |= lab_compare(g, c, "watershed tissue 4 lines", call_ws, &a, n, n, 1);
    iwpp_image bmask = iwpp_image_2d(bin, IWPP_U8, n, n);
    a.mask = &bmask;
    bad |= lab_compare(g, c, "watershed tissue 4 lines, mask", call_ws, &a, n, n, 1);
    one[0] = 1; /* a plateau: D up to the image diameter */
    a.in = iwpp_image_2d(flat, IWPP_U8, n, n);
    a.markers = iwpp_image_2d(one, IWPP_U32, n, n);
    a.mask = NULL;
    a.lines = 0;
    a.conn = 8;
    bad |= lab_compare(g, c, "watershed flat, 1 corner marker", call_ws, &a, n, n, 1);
    a.in = iwpp_image_2d(bin, IWPP_U8, n, n);
    bad |= lab_compare(g, c, "distance watershed 8", call_dws, &a, n, n, 1);
    /* 3D: a random sparse volume (labels) and its distance watershed */
    const int64_t w = 192, h = 160, d = 48;
    uint8_t *v = malloc((size_t)(w * h * d));
    if (!v) return 1;
    for (int64_t k = 0; k < w * h * d; ++k) v[k] = (hash32((uint32_t)k * 2654435761u) & 3) ? 255 : 0;
    a.in = iwpp_image_3d(v, IWPP_U8, w, h, d);
    a.conn = 26;
    bad |= lab_compare(g, c, "label 3D binary 26", call_label, &a, w, h, d);
    a.conn = 6;
    bad |= lab_compare(g, c, "label 3D binary 6", call_label, &a, w, h, d);
    bad |= lab_compare(g, c, "distance watershed 3D 6", call_dws, &a, w, h, d);
    free(v);
    free(t);
    free(bin);
    free(q);
    free(flat);
    free(mk);
    free(one);
    printf("labels: %s\n", bad ? "FAILED" : "all equal");
    return bad;
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : 8192;
    char reason[256];
    if (!iwpp_backend_available(IWPP_BACKEND_CUDA, reason, sizeof reason)) {
        printf("CUDA unavailable: %s\n", reason);
        return 0;
    }
    iwpp_device_info info;
    iwpp_device_info_get(IWPP_BACKEND_CUDA, 0, &info);
    printf("device: %s (%d SMs, %.1f GiB)\n", info.name, info.compute_units, info.global_memory / 1073741824.0);
    iwpp_context *g = NULL, *c = NULL;
    if (iwpp_context_create(&g, IWPP_BACKEND_CUDA) != IWPP_OK || iwpp_context_create(&c, IWPP_BACKEND_CPU) != IWPP_OK) {
        printf("context: %s\n", g ? iwpp_error_message(g) : "?");
        return 1;
    }
    if (argc > 1 && (strcmp(argv[1], "edt") == 0 || strcmp(argv[1], "edt0") == 0)) {
        /* iwpp_cuda_checks edt [size...]: EDT checks and timings; edt0: the timings only */
        int bad = argv[1][3] == '0' ? 0 : edt_checks(g, c, 240);
        for (int a = 2; a < argc; ++a) edt_timing(g, c, atoll(argv[a]));
        iwpp_context_destroy(g);
        iwpp_context_destroy(c);
        return bad ? 1 : 0;
    }
    if (argc > 1 && strcmp(argv[1], "labels") == 0) {
        /* iwpp_cuda_checks labels [size]: labeling and watershed, CUDA against CPU */
        int bad = label_checks(g, c, argc > 2 ? atoll(argv[2]) : 4096);
        iwpp_context_destroy(g);
        iwpp_context_destroy(c);
        return bad ? 1 : 0;
    }
    if (n < 0) { /* sanitizer subset: the small checks once */
        int bad = check_small(g, c, 0, n == -2);
        iwpp_context_destroy(g);
        iwpp_context_destroy(c);
        return bad ? 1 : 0;
    }
    check_small(g, c, 0, n == -2);
    leak_check(g);
    { /* out of device memory: a 200000 x 200000 F32 buffer (149 GiB) */
        iwpp_buf big;
        memset(&big, 0, sizeof big);
        big.type = IWPP_F32;
        big.w = 200000;
        big.h = 200000;
        big.d = 1;
        iwpp_status st2 = g->ops->buf_alloc(g, &big);
        printf("huge buffer: %s: %s\n", iwpp_status_name(st2), iwpp_error_message(g));
        if (st2 == IWPP_OK) g->ops->buf_free(g, &big);
    }
    if (n <= 0) return 0;
    size_t N = (size_t)(n * n);
    uint8_t *mask = malloc(N), *ref = malloc(N), *work = malloc(N);
    if (!mask || !ref || !work) return 1;
    tissue(mask, n);
    /* CPU reference */
    for (size_t k = 0; k < N; ++k) ref[k] = mask[k] > 40 ? (uint8_t)(mask[k] - 40) : 0;
    iwpp_image mk = iwpp_image_2d(ref, IWPP_U8, n, n), ms = iwpp_image_2d(mask, IWPP_U8, n, n);
    iwpp_status st = iwpp_reconstruct(c, &mk, &ms, 8, IWPP_BY_DILATION);
    iwpp_stats cs;
    iwpp_context_stats(c, &cs);
    printf("cpu reference          %s %.1f ms (%s)\n", st == IWPP_OK ? "ok" : iwpp_error_message(c), cs.total_ms,
           cs.variant);
    const uint8_t *r = st == IWPP_OK ? ref : NULL;
    iwpp_context_set_algorithm(g, IWPP_ALGO_QUEUE);
    iwpp_context_set_queue_variant(g, IWPP_QUEUE_MULTILEVEL);
    run_recon(g, c, "tissue fh/multilevel", mask, r, n, work);
    {
        static const char *its[] = {"0", "1", "3", "4"};
        for (int k = 0; k < 4; ++k) {
            char nm[64];
            snprintf(nm, sizeof nm, "tissue fh raster=%s", its[k]);
            iwpp_context_set_tuning(g, "cuda.raster_iterations", its[k]);
            run_recon(g, c, nm, mask, r, n, work);
        }
        iwpp_context_set_tuning(g, "cuda.raster_iterations", NULL);
    }
    iwpp_context_set_queue_variant(g, IWPP_QUEUE_PREFIXSUM);
    run_recon(g, c, "tissue fh/prefixsum", mask, r, n, work);
    iwpp_context_set_queue_variant(g, IWPP_QUEUE_ATOMIC);
    run_recon(g, c, "tissue fh/atomic", mask, r, n, work);
    iwpp_context_set_queue_variant(g, IWPP_QUEUE_MULTILEVEL);
    iwpp_context_set_algorithm(g, IWPP_ALGO_MEGAPIXEL);
    run_recon(g, c, "tissue megapixel", mask, r, n, work);
    iwpp_context_set_algorithm(g, IWPP_ALGO_AUTO);
    run_recon(g, c, "tissue auto", mask, r, n, work);
    iwpp_context_set_queue_capacity(g, 4096);
    iwpp_context_set_algorithm(g, IWPP_ALGO_QUEUE);
    run_recon(g, c, "tissue fh cap=4096", mask, r, n, work);
    iwpp_context_set_queue_capacity(g, 0);

    /* random image: the megapixel variant's bad case */
    for (size_t k = 0; k < N; ++k) mask[k] = (uint8_t)(hash32((uint32_t)k * 2654435761u) & 0xFF);
    for (size_t k = 0; k < N; ++k) ref[k] = mask[k] > 40 ? (uint8_t)(mask[k] - 40) : 0;
    st = iwpp_reconstruct(c, &mk, &ms, 8, IWPP_BY_DILATION);
    r = st == IWPP_OK ? ref : NULL;
    iwpp_context_set_algorithm(g, IWPP_ALGO_QUEUE);
    run_recon(g, c, "random fh/multilevel", mask, r, n, work);
    iwpp_context_set_algorithm(g, IWPP_ALGO_MEGAPIXEL);
    run_recon(g, c, "random megapixel", mask, r, n, work);
    iwpp_context_set_algorithm(g, IWPP_ALGO_AUTO);

    edt_timing(g, c, n);
    iwpp_context_destroy(g);
    iwpp_context_destroy(c);
    free(mask);
    free(ref);
    free(work);
    return 0;
}
