/*
 * edt_families.c - the exact EDT on every input family of bench/synth.c (synth_edt_family), on
 * each backend asked for, checked bit for bit against the CPU backend, with the worst family per
 * size and backend (the bars are about the worst case, not the mean).
 *
 *   edt_families --sizes 1024,8192,16384,256^3,512^3 --backends cuda,opencl [--families all|a,b]
 *                [--reps 5] [--threads 16] [--csv FILE] [--dump DIR] [--dump-out-max PIXELS]
 *                [--spacing hx,hy,hz] [--nearest] [--no-check] [--method exact|danielsson]
 *
 * GPU times are iwpp_stats.compute_ms (device-resident: no host<->device transfers), the median
 * of --reps runs after one warm-up run; total_ms is the whole call. --dump DIR writes each input
 * as in_<family>_<size>.npy (and, for images of at most --dump-out-max pixels, the first GPU
 * backend's distances as out_<family>_<size>.npy) for bench/compare.py --families DIR, which
 * times CuPy on the same inputs and checks the outputs against SciPy / CuPy.
 * --method danielsson times the Danielsson method instead; its check is then its documented bound
 * (never below the CPU's exact distance, at most 1.0824x it in 2D and 1.1281x in 3D with unit
 * spacing; README.md), and the check column gives the largest excess in pixels.
 * Exit status: 0, 1 on a mismatch or a failed call, 2 on bad arguments.
 */
#define _POSIX_C_SOURCE 200809L
#include "imgio.h"
#include "iwpp.h"
#include "synth.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_SIZES 16
#define MAX_FAM 64
#define MAX_BACK 4

typedef struct size3 {
    int64_t w, h, d;
} size3;

static int parse_size(const char *s, size3 *o)
{
    char *end = NULL;
    long long a = strtoll(s, &end, 10);
    if (a <= 0) return -1;
    o->w = o->h = a;
    o->d = 1;
    if (*end == '^' && end[1] == '3' && end[2] == 0) {
        o->d = a;
        return 0;
    }
    if (*end == 'x') {
        long long b = strtoll(end + 1, &end, 10);
        if (b <= 0) return -1;
        o->h = b;
        if (*end == 'x') {
            long long c = strtoll(end + 1, &end, 10);
            if (c <= 0) return -1;
            o->d = c;
        }
    }
    return *end ? -1 : 0;
}

static void size_str(size3 s, char *buf, size_t n)
{
    if (s.d > 1 && s.w == s.h && s.h == s.d)
        snprintf(buf, n, "%lld^3", (long long)s.w);
    else if (s.d > 1)
        snprintf(buf, n, "%lldx%lldx%lld", (long long)s.w, (long long)s.h, (long long)s.d);
    else if (s.w == s.h)
        snprintf(buf, n, "%lld", (long long)s.w);
    else
        snprintf(buf, n, "%lldx%lld", (long long)s.w, (long long)s.h);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int split(char *s, char **out, int max)
{
    int n = 0;
    for (char *t = strtok(s, ","); t && n < max; t = strtok(NULL, ",")) out[n++] = t;
    return n;
}

/* Pixels where the Danielsson distance is below the exact one or above ratio times it (a float
 * rounding of slack allowed); *chk becomes the largest excess in pixels, or "BOUND". */
static int64_t dan_outside_bound(const float *out, const float *ref, int64_t n, double ratio, const char **chk,
                                 char *buf, size_t len)
{
    int64_t bad = 0;
    double worst = 0;
    for (int64_t i = 0; i < n; ++i) {
        const double e = (double)ref[i], g = (double)out[i];
        if (e == g) continue;
        if (!(g > e) || g > e * ratio * (1 + 1e-6)) ++bad;
        else if (g - e > worst) worst = g - e;
    }
    snprintf(buf, len, "+%.3f", worst);
    *chk = bad ? "BOUND" : buf;
    return bad;
}

static void usage(void)
{
    fprintf(stderr, "usage: edt_families --sizes 1024,8192,256^3 [--backends cuda,opencl,cpu] "
                    "[--families all|name,...] [--reps N] [--threads N] [--csv FILE] [--dump DIR] "
                    "[--dump-out-max PIXELS] [--spacing hx,hy,hz] [--nearest] [--no-check] [--method exact|danielsson] [--queue multilevel|atomic|prefixsum] [--stats]\n"
                    "  --stats: also print the last run's items visited, rounds and overflow re-runs\nfamilies:");
    for (int i = 0; i < synth_edt_family_count(); ++i) fprintf(stderr, " %s", synth_edt_family_name(i));
    fprintf(stderr, "\n");
}

int main(int argc, char **argv)
{
    char sizes_arg[512] = "1024", back_arg[128] = "cuda,opencl", fam_arg[1024] = "all";
    const char *csv_path = NULL, *dump = NULL;
    int reps = 5, threads = 0, check = 1, want_nearest = 0, show_stats = 0;
    long long dump_out_max = 4096LL * 4096LL;
    double spacing[3] = {1, 1, 1};
    const double *sp = NULL; /* NULL: unit spacing */
    iwpp_edt_method method = IWPP_EDT_EXACT;
    int queue = -1; /* --queue: the Danielsson queue's variant (default: the library's) */
    for (int i = 1; i < argc; ++i) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(k, "--no-check")) { check = 0; continue; }
        if (!strcmp(k, "--nearest")) { want_nearest = 1; continue; }
        if (!strcmp(k, "--stats")) { show_stats = 1; continue; }
        if (!v) { usage(); return 2; }
        ++i;
        if (!strcmp(k, "--sizes")) snprintf(sizes_arg, sizeof sizes_arg, "%s", v);
        else if (!strcmp(k, "--backends")) snprintf(back_arg, sizeof back_arg, "%s", v);
        else if (!strcmp(k, "--families")) snprintf(fam_arg, sizeof fam_arg, "%s", v);
        else if (!strcmp(k, "--reps")) reps = atoi(v);
        else if (!strcmp(k, "--threads")) threads = atoi(v);
        else if (!strcmp(k, "--csv")) csv_path = v;
        else if (!strcmp(k, "--dump")) dump = v;
        else if (!strcmp(k, "--dump-out-max")) dump_out_max = atoll(v);
        else if (!strcmp(k, "--queue")) {
            if (!strcmp(v, "multilevel")) queue = IWPP_QUEUE_MULTILEVEL;
            else if (!strcmp(v, "atomic")) queue = IWPP_QUEUE_ATOMIC;
            else if (!strcmp(v, "prefixsum")) queue = IWPP_QUEUE_PREFIXSUM;
            else { usage(); return 2; }
        }
        else if (!strcmp(k, "--method")) {
            if (!strcmp(v, "exact")) method = IWPP_EDT_EXACT;
            else if (!strcmp(v, "danielsson")) method = IWPP_EDT_DANIELSSON;
            else { usage(); return 2; }
        }
        else if (!strcmp(k, "--spacing")) {
            if (sscanf(v, "%lf,%lf,%lf", &spacing[0], &spacing[1], &spacing[2]) != 3) { usage(); return 2; }
            sp = spacing;
        }
        else { usage(); return 2; }
    }
    if (reps < 1) reps = 1;
    char *sz_tok[MAX_SIZES], *bk_tok[MAX_BACK], *fm_tok[MAX_FAM];
    const int nsizes = split(sizes_arg, sz_tok, MAX_SIZES), nback = split(back_arg, bk_tok, MAX_BACK);
    size3 sizes[MAX_SIZES];
    for (int i = 0; i < nsizes; ++i)
        if (parse_size(sz_tok[i], &sizes[i])) {
            fprintf(stderr, "edt_families: bad size %s\n", sz_tok[i]);
            return 2;
        }
    const char *fams[MAX_FAM];
    int nfam = 0;
    if (!strcmp(fam_arg, "all")) {
        for (int i = 0; i < synth_edt_family_count() && nfam < MAX_FAM; ++i) fams[nfam++] = synth_edt_family_name(i);
    } else {
        nfam = split(fam_arg, fm_tok, MAX_FAM);
        for (int i = 0; i < nfam; ++i) fams[i] = fm_tok[i];
    }
    iwpp_backend backs[MAX_BACK];
    iwpp_context *ctxs[MAX_BACK];
    int nb = 0;
    for (int i = 0; i < nback; ++i) {
        iwpp_backend b = !strcmp(bk_tok[i], "cuda") ? IWPP_BACKEND_CUDA
                         : !strcmp(bk_tok[i], "opencl") ? IWPP_BACKEND_OPENCL
                         : !strcmp(bk_tok[i], "cpu") ? IWPP_BACKEND_CPU : (iwpp_backend)-1;
        char why[256] = "";
        if ((int)b < 0) {
            fprintf(stderr, "edt_families: unknown backend %s\n", bk_tok[i]);
            return 2;
        }
        if (!iwpp_backend_available(b, why, sizeof why)) {
            fprintf(stderr, "edt_families: %s not available (%s): skipped\n", bk_tok[i], why);
            continue;
        }
        if (iwpp_context_create(&ctxs[nb], b) != IWPP_OK) {
            fprintf(stderr, "edt_families: %s: %s\n", bk_tok[i], iwpp_error_message(ctxs[nb]));
            iwpp_context_destroy(ctxs[nb]);
            continue;
        }
        if (b == IWPP_BACKEND_CPU && threads > 0) iwpp_context_set_threads(ctxs[nb], threads);
        if (queue >= 0) iwpp_context_set_queue_variant(ctxs[nb], (iwpp_queue_variant)queue);
        iwpp_device_info di;
        if (b != IWPP_BACKEND_CPU && iwpp_device_info_get(b, 0, &di) == IWPP_OK)
            printf("# %s device 0: %s\n", bk_tok[i], di.name);
        backs[nb++] = b;
    }
    iwpp_context *ref_ctx = NULL;
    if (check) {
        if (iwpp_context_create(&ref_ctx, IWPP_BACKEND_CPU) != IWPP_OK) {
            fprintf(stderr, "edt_families: CPU reference: %s\n", iwpp_error_message(ref_ctx));
            return 1;
        }
        if (threads > 0) iwpp_context_set_threads(ref_ctx, threads);
    }
    if (dump && mkdir(dump, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "edt_families: cannot create %s: %s\n", dump, strerror(errno));
        return 2;
    }
    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    if (csv_path && !csv) {
        fprintf(stderr, "edt_families: cannot write %s: %s\n", csv_path, strerror(errno));
        return 2;
    }
    if (csv) fprintf(csv, "size,family,backend,variant,compute_ms,total_ms,min_compute_ms,reps,check,visited,rounds,reruns\n");
    printf("%-10s %-10s %-7s %10s %10s %10s  %-8s %s\n", "size", "family", "backend", "comp_ms", "min_ms",
           "total_ms", "check", "variant");
    int failures = 0;
    double *times = (double *)malloc((size_t)reps * sizeof(double));
    double *walls = (double *)malloc((size_t)reps * sizeof(double));
    for (int si = 0; si < nsizes; ++si) {
        const size3 s = sizes[si];
        const int64_t n = s.w * s.h * s.d;
        char sn[64];
        size_str(s, sn, sizeof sn);
        uint8_t *img = (uint8_t *)malloc((size_t)n);
        float *ref = (float *)malloc((size_t)n * sizeof(float));
        float *out = (float *)malloc((size_t)n * sizeof(float));
        int64_t *near = want_nearest ? (int64_t *)malloc((size_t)n * sizeof(int64_t)) : NULL;
        if (!img || !ref || !out || (want_nearest && !near) || !times || !walls) {
            fprintf(stderr, "edt_families: out of memory at %s\n", sn);
            return 1;
        }
        double worst[MAX_BACK], sum[MAX_BACK];
        const char *worst_f[MAX_BACK];
        for (int b = 0; b < nb; ++b) {
            worst[b] = -1;
            sum[b] = 0;
            worst_f[b] = "-";
        }
        for (int fi = 0; fi < nfam; ++fi) {
            if (synth_edt_family(img, fams[fi], s.w, s.h, s.d, 12345) != 0) {
                fprintf(stderr, "edt_families: unknown family %s (or out of memory)\n", fams[fi]);
                return 2;
            }
            iwpp_image bin = s.d > 1 ? iwpp_image_3d(img, IWPP_U8, s.w, s.h, s.d) : iwpp_image_2d(img, IWPP_U8, s.w, s.h);
            iwpp_image vd = s.d > 1 ? iwpp_image_3d(out, IWPP_F32, s.w, s.h, s.d) : iwpp_image_2d(out, IWPP_F32, s.w, s.h);
            iwpp_image vr = s.d > 1 ? iwpp_image_3d(ref, IWPP_F32, s.w, s.h, s.d) : iwpp_image_2d(ref, IWPP_F32, s.w, s.h);
            iwpp_image vn = s.d > 1 ? iwpp_image_3d(near, IWPP_I64, s.w, s.h, s.d) : iwpp_image_2d(near, IWPP_I64, s.w, s.h);
            char path[1024];
            if (dump) {
                snprintf(path, sizeof path, "%s/in_%s_%s.npy", dump, fams[fi], sn);
                if (imgio_write_npy(path, &bin) != 0) fprintf(stderr, "edt_families: cannot write %s\n", path);
            }
            if (check && iwpp_distance_transform(ref_ctx, &bin, IWPP_EDT_EXACT, sp, &vr, NULL) != IWPP_OK) {
                fprintf(stderr, "edt_families: CPU reference %s %s: %s\n", sn, fams[fi], iwpp_error_message(ref_ctx));
                ++failures;
                continue;
            }
            int dumped_out = 0;
            for (int b = 0; b < nb; ++b) {
                iwpp_context *c = ctxs[b];
                iwpp_stats st;
                memset(&st, 0, sizeof st);
                int ok = 1;
                for (int r = -1; r < reps && ok; ++r) {
                    const double t0 = synth_now_ms();
                    if (iwpp_distance_transform(c, &bin, method, sp, &vd, near ? &vn : NULL) != IWPP_OK) {
                        fprintf(stderr, "edt_families: %s %s %s: %s\n", sn, fams[fi], iwpp_backend_name(backs[b]),
                                iwpp_error_message(c));
                        ok = 0;
                        break;
                    }
                    const double t1 = synth_now_ms();
                    iwpp_context_stats(c, &st);
                    if (r >= 0) {
                        times[r] = st.compute_ms;
                        walls[r] = t1 - t0;
                    }
                }
                if (!ok) {
                    ++failures;
                    continue;
                }
                const char *chk = "-";
                char excess[32];
                if (check && method == IWPP_EDT_EXACT) {
                    int64_t bad = 0;
                    for (int64_t i = 0; i < n; ++i) bad += memcmp(&out[i], &ref[i], sizeof(float)) != 0;
                    chk = bad ? "MISMATCH" : "exact";
                    if (bad) {
                        ++failures;
                        fprintf(stderr, "edt_families: %s %s %s: %lld pixels differ from the CPU\n", sn, fams[fi],
                                iwpp_backend_name(backs[b]), (long long)bad);
                    }
                } else if (check) {
                    const int64_t bad = dan_outside_bound(out, ref, n, s.d > 1 ? 1.1281 : 1.0824, &chk, excess,
                                                          sizeof excess);
                    if (bad) {
                        ++failures;
                        fprintf(stderr, "edt_families: %s %s %s: %lld pixels outside the Danielsson bound\n", sn,
                                fams[fi], iwpp_backend_name(backs[b]), (long long)bad);
                    }
                }
                if (dump && !dumped_out && backs[b] != IWPP_BACKEND_CPU && n <= dump_out_max) {
                    snprintf(path, sizeof path, "%s/out_%s_%s.npy", dump, fams[fi], sn);
                    if (imgio_write_npy(path, &vd) != 0) fprintf(stderr, "edt_families: cannot write %s\n", path);
                    dumped_out = 1;
                }
                double tmin = times[0];
                for (int r = 1; r < reps; ++r) tmin = times[r] < tmin ? times[r] : tmin;
                qsort(times, (size_t)reps, sizeof(double), cmp_double);
                qsort(walls, (size_t)reps, sizeof(double), cmp_double);
                const double med = times[reps / 2], wmed = walls[reps / 2];
                printf("%-10s %-10s %-7s %10.3f %10.3f %10.3f  %-8s %s", sn, fams[fi],
                       iwpp_backend_name(backs[b]), med, tmin, wmed, chk, st.variant);
                if (show_stats)
                    printf("  visited %lld rounds %lld reruns %lld", (long long)st.pixels_visited,
                           (long long)st.rounds, (long long)st.overflow_reruns);
                printf("\n");
                fflush(stdout);
                if (csv)
                    fprintf(csv, "%s,%s,%s,%s,%.4f,%.4f,%.4f,%d,%s,%lld,%lld,%lld\n", sn, fams[fi],
                            iwpp_backend_name(backs[b]), st.variant, med, wmed, tmin, reps, chk,
                            (long long)st.pixels_visited, (long long)st.rounds, (long long)st.overflow_reruns);
                sum[b] += med;
                if (med > worst[b]) {
                    worst[b] = med;
                    worst_f[b] = fams[fi];
                }
            }
        }
        for (int b = 0; b < nb; ++b)
            if (worst[b] >= 0)
                printf("== %s %s: worst %.3f ms (%s), mean %.3f ms over %d families\n", sn,
                       iwpp_backend_name(backs[b]), worst[b], worst_f[b], sum[b] / nfam, nfam);
        free(img);
        free(ref);
        free(out);
        free(near);
    }
    free(times);
    free(walls);
    if (csv) fclose(csv);
    for (int b = 0; b < nb; ++b) iwpp_context_destroy(ctxs[b]);
    iwpp_context_destroy(ref_ctx);
    if (failures) printf("FAILURES: %d\n", failures);
    return failures ? 1 : 0;
}
