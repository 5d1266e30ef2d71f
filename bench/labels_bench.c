/*
 * labels_bench.c - times iwpp_label, iwpp_watershed and iwpp_distance_watershed on synthetic
 * nuclei (bench/synth.c) through the public API, and can dump the inputs and results as .npy
 * so that bench/compare_labels.py times scikit-image (and CuPy) on the very same data.
 *
 *   labels_bench [--backend cpu|cuda|opencl] [--threads N] [--sizes 4096,8192,512x3]
 *                [--reps N] [--dynamic H] [--dump DIR] [--cases label,watershed,dws]
 *                [--families rand_0.5,checker1,spiral,...]
 *
 * Cases per size (2D: connectivity 8, 3D: 26; outputs U32):
 *   label      components of the nuclei mask (0/255);
 *   watershed  relief = -EDT of the nuclei, markers = labelled extended maxima of the EDT
 *              (h = --dynamic), mask = the nuclei; the markers are made once, untimed;
 *   dws        iwpp_distance_watershed of the nuclei mask (EDT, markers and watershed).
 * Every case prints total_ms (the call, transfers included) and compute_ms (iwpp_stats), as
 * medians of --reps runs after one warm-up run. With --dump DIR the files of each size are
 * DIR/<size>_{binary,relief,markers,label,watershed,dws}.npy and DIR/<size>_times.txt.
 * --families times the label case on more inputs after the cases (the worst case matters, not the
 * nuclei alone): DIR/<size>_fam-<name>_{binary,label}.npy.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imgio.h"
#include "iwpp.h"
#include "synth.h"

typedef struct options {
    iwpp_backend backend;
    int threads, reps;
    double dynamic;
    const char *sizes, *dump;
    const char *cases; /* comma-separated case names; NULL = all (e.g. one case under ncu) */
    const char *families; /* label only: more binary inputs (synth_edt_family names, "spiral") */
} options;

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef enum { C_LABEL, C_WATERSHED, C_DWS } case_kind;
static const char *CASE_NAMES[3] = {"label", "watershed", "dws"};

typedef struct bench_data {
    iwpp_image bin, relief, markers, out;
    int conn;
    double dynamic;
} bench_data;

static iwpp_status run_once(iwpp_context *ctx, case_kind k, bench_data *b)
{
    int64_t count = 0;
    switch (k) {
    case C_LABEL: return iwpp_label(ctx, &b->bin, b->conn, IWPP_LABEL_BINARY, &b->out, &count);
    case C_WATERSHED: return iwpp_watershed(ctx, &b->relief, &b->markers, &b->bin, b->conn, 0, &b->out);
    default: return iwpp_distance_watershed(ctx, &b->bin, NULL, b->dynamic, b->conn, 0, &b->out);
    }
}

/* One warm-up, then reps timed runs; medians into total/compute. Returns the status. */
static iwpp_status time_case(iwpp_context *ctx, case_kind k, bench_data *b, int reps, double *total, double *compute,
                             char *variant, size_t vn)
{
    double *t = malloc(2 * (size_t)reps * sizeof *t);
    if (!t) return IWPP_ENOMEM;
    iwpp_status st = run_once(ctx, k, b);
    for (int r = 0; r < reps && st == IWPP_OK; ++r) {
        iwpp_stats s;
        if ((st = run_once(ctx, k, b)) || (st = iwpp_context_stats(ctx, &s))) break;
        t[r] = s.total_ms;
        t[reps + r] = s.compute_ms;
        snprintf(variant, vn, "%s", s.variant[0] ? s.variant : "-");
    }
    if (st == IWPP_OK) {
        *total = median(t, reps);
        *compute = median(t + reps, reps);
    }
    free(t);
    return st;
}

/* Markers (labelled extended maxima of the EDT), the relief (-EDT): made once, untimed. */
static iwpp_status make_watershed_inputs(iwpp_context *ctx, bench_data *b, int64_t w, int64_t h, int64_t d)
{
    const int64_t n = w * h * d;
    float *dist = b->relief.data;
    uint8_t *em = malloc((size_t)n);
    if (!em) return IWPP_ENOMEM;
    iwpp_image emax = iwpp_image_3d(em, IWPP_U8, w, h, d);
    iwpp_status st = iwpp_distance_transform(ctx, &b->bin, IWPP_EDT_EXACT, NULL, &b->relief, NULL);
    if (!st) st = iwpp_extended_maxima(ctx, &b->relief, b->dynamic, b->conn, &emax);
    if (!st) st = iwpp_label(ctx, &emax, b->conn, IWPP_LABEL_BINARY, &b->markers, NULL);
    for (int64_t i = 0; i < n && !st; ++i) dist[i] = 0.0f - dist[i];
    free(em);
    return st;
}

static void dump(const options *o, const char *tag, const char *what, const iwpp_image *im)
{
    if (!o->dump) return;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s_%s.npy", o->dump, tag, what);
    if (imgio_write_npy(path, im) != 0) fprintf(stderr, "labels_bench: cannot write %s: %s\n", path, strerror(errno));
}

/* The label case on each of --families (2D and 3D alike): foreground 255 except the family's
 * background pixels, so the worst case shows, not only the nuclei. Dumps <tag>_fam-<name>_binary.npy
 * for the CuPy comparison; the nuclei mask of the other cases is overwritten. */
static int bench_families(iwpp_context *ctx, const options *o, bench_data *b, const char *tag)
{
    int fails = 0;
    uint8_t *bin = b->bin.data;
    for (const char *at = o->families; *at;) { /* not strtok: main's loop over the sizes uses it */
        const size_t len = strcspn(at, ",");
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), at);
        at += len + (at[len] == ',');
        if (!strcmp(name, "spiral")) synth_spiral(bin, b->bin.width, b->bin.height, b->bin.depth);
        else if (synth_edt_family(bin, name, b->bin.width, b->bin.height, b->bin.depth, 12345) != 0) {
            fprintf(stderr, "labels_bench: unknown family %s\n", name);
            ++fails;
            continue;
        }
        double total = 0, compute = 0;
        char variant[64] = "-", what[96];
        const iwpp_status st = time_case(ctx, C_LABEL, b, o->reps, &total, &compute, variant, sizeof variant);
        if (st) {
            printf("%-12s %-16s %-7s FAILED: %s\n", tag, name, iwpp_backend_name(o->backend), iwpp_error_message(ctx));
            ++fails;
            continue;
        }
        printf("%-12s label:%-10s %-7s total_ms %10.2f  compute_ms %10.2f  %s\n", tag, name,
               iwpp_backend_name(o->backend), total, compute, variant);
        snprintf(what, sizeof what, "fam-%s_binary", name);
        dump(o, tag, what, &b->bin);
        snprintf(what, sizeof what, "fam-%s_label", name);
        dump(o, tag, what, &b->out);
    }
    return fails;
}

static int bench_size(iwpp_context *ctx, const options *o, int64_t w, int64_t h, int64_t d)
{
    const int64_t n = w * h * d;
    char tag[64];
    if (d > 1) snprintf(tag, sizeof tag, "%lldx%lldx%lld", (long long)w, (long long)h, (long long)d);
    else snprintf(tag, sizeof tag, "%lldx%lld", (long long)w, (long long)h);
    bench_data b;
    void *pb = malloc((size_t)n), *pr = malloc((size_t)n * 4), *pm = malloc((size_t)n * 4), *po = malloc((size_t)n * 4);
    if (!pb || !pr || !pm || !po || synth_nuclei(pb, w, h, d, 17) != 0) {
        fprintf(stderr, "labels_bench: out of memory for %s\n", tag);
        free(pb), free(pr), free(pm), free(po);
        return 1;
    }
    b.bin = iwpp_image_3d(pb, IWPP_U8, w, h, d);
    b.relief = iwpp_image_3d(pr, IWPP_F32, w, h, d);
    b.markers = iwpp_image_3d(pm, IWPP_U32, w, h, d);
    b.out = iwpp_image_3d(po, IWPP_U32, w, h, d);
    b.conn = d > 1 ? 26 : 8;
    b.dynamic = o->dynamic;
    iwpp_status st = make_watershed_inputs(ctx, &b, w, h, d);
    if (st) {
        fprintf(stderr, "labels_bench: %s: inputs: %s\n", tag, iwpp_error_message(ctx));
        free(pb), free(pr), free(pm), free(po);
        return 1;
    }
    dump(o, tag, "binary", &b.bin), dump(o, tag, "relief", &b.relief), dump(o, tag, "markers", &b.markers);
    FILE *times = NULL;
    if (o->dump) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s_times.txt", o->dump, tag);
        times = fopen(path, "w");
    }
    int fails = 0;
    for (int k = 0; k < 3; ++k) {
        if (o->cases && !strstr(o->cases, CASE_NAMES[k])) continue;
        double total = 0, compute = 0;
        char variant[64] = "-";
        st = time_case(ctx, (case_kind)k, &b, o->reps, &total, &compute, variant, sizeof variant);
        if (st) {
            printf("%-12s %-10s %-7s FAILED: %s\n", tag, CASE_NAMES[k], iwpp_backend_name(o->backend), iwpp_error_message(ctx));
            ++fails;
            continue;
        }
        printf("%-12s %-10s %-7s total_ms %10.2f  compute_ms %10.2f  %s\n", tag, CASE_NAMES[k],
               iwpp_backend_name(o->backend), total, compute, variant);
        if (times) fprintf(times, "%s %s %.3f %.3f\n", CASE_NAMES[k], iwpp_backend_name(o->backend), total, compute);
        dump(o, tag, CASE_NAMES[k], &b.out);
    }
    if (times) fclose(times);
    if (o->families) fails += bench_families(ctx, o, &b, tag);
    free(pb), free(pr), free(pm), free(po);
    return fails;
}

static int parse_args(int argc, char **argv, options *o)
{
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !v) return 1;
        ++i;
        if (!strcmp(a, "--backend")) {
            if (!strcmp(v, "cpu")) o->backend = IWPP_BACKEND_CPU;
            else if (!strcmp(v, "cuda")) o->backend = IWPP_BACKEND_CUDA;
            else if (!strcmp(v, "opencl")) o->backend = IWPP_BACKEND_OPENCL;
            else return 1;
        } else if (!strcmp(a, "--threads")) o->threads = atoi(v);
        else if (!strcmp(a, "--reps")) o->reps = atoi(v) > 0 ? atoi(v) : 1;
        else if (!strcmp(a, "--dynamic")) o->dynamic = atof(v);
        else if (!strcmp(a, "--sizes")) o->sizes = v;
        else if (!strcmp(a, "--dump")) o->dump = v;
        else if (!strcmp(a, "--cases")) o->cases = v;
        else if (!strcmp(a, "--families")) o->families = v;
        else return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    options o = {IWPP_BACKEND_CPU, 0, 5, 1.0, "4096,8192,512x3", NULL, NULL, NULL};
    if (parse_args(argc, argv, &o)) {
        fprintf(stderr, "usage: labels_bench [--backend cpu|cuda|opencl] [--threads N] [--sizes 4096,8192,512x3]\n"
                        "                    [--reps N] [--dynamic H] [--dump DIR] [--cases label,watershed,dws]\n"
                        "                    [--families rand_0.5,checker1,spiral,...] (label on more inputs)\n"
                        "  a size is S (S x S) or Sx3 (S x S x S)\n");
        return 2;
    }
    iwpp_context *ctx = NULL;
    if (iwpp_context_create(&ctx, o.backend) != IWPP_OK) {
        fprintf(stderr, "labels_bench: backend %s: %s\n", iwpp_backend_name(o.backend), ctx ? iwpp_error_message(ctx) : "");
        iwpp_context_destroy(ctx);
        return 1;
    }
    if (o.threads > 0) iwpp_context_set_threads(ctx, o.threads);
    printf("# labels_bench: backend %s, threads %d (0 = automatic), reps %d (medians), dynamic %g\n",
           iwpp_backend_name(o.backend), o.threads, o.reps, o.dynamic);
    char list[256];
    snprintf(list, sizeof list, "%s", o.sizes);
    int fails = 0;
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        const int64_t s = atoll(tok);
        const int cube = strstr(tok, "x3") != NULL;
        if (s <= 0) continue;
        fails += bench_size(ctx, &o, s, s, cube ? s : 1);
    }
    iwpp_context_destroy(ctx);
    return fails ? 1 : 0;
}
