/*
 * iwpp_bench - times IWPP operations on synthetic inputs, per backend and size.
 *
 * For every case (operation x type x size x connectivity) the sequential CPU
 * run (threads = 1) is measured first; its result is the reference every
 * other run is checked against (bit for bit; Danielsson EDT: never below the
 * exact distance) and its median time is the base of the speed-up columns.
 * A benchmark, not a test: it prints figures; a wrong result is printed as
 * MISMATCH and makes the exit status 2.
 *
 * Run with --help for the options.
 */
#define _POSIX_C_SOURCE 200809L
#include "imgio.h"
#include "iwpp.h"
#include "synth.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- operations --------------------------------------------------------------- */

enum op_kind { OP_REC_DIL, OP_REC_ERO, OP_REC_MAZE, OP_HMAX, OP_REGMAX, OP_OPEN_REC,
               OP_FILL, OP_KILL, OP_EDT_EXACT, OP_EDT_DAN };
enum input_kind { IN_TISSUE, IN_NUCLEI, IN_SPIRAL, IN_COUNT };
enum conn_rule { CONN_NONE, CONN_LIST, CONN_BG /* 4 / 6 */, CONN_FULL /* 8 / 26 */ };

typedef struct {
    const char *name;
    enum op_kind kind;
    enum input_kind input;
    int gray;      /* runs for every --types entry (else U8 only) */
    enum conn_rule conn;
    int variants;  /* GPU algorithm / queue variants are swept */
    const char *what;
} op_desc;

static const op_desc OPS[] = {
    {"rec-dil", OP_REC_DIL, IN_TISSUE, 1, CONN_LIST, 1, "reconstruction by dilation of tissue-h under tissue"},
    {"rec-ero", OP_REC_ERO, IN_TISSUE, 1, CONN_LIST, 1, "reconstruction by erosion of tissue+h over tissue"},
    {"rec-maze", OP_REC_MAZE, IN_SPIRAL, 0, CONN_LIST, 1, "reconstruction by dilation from one seed along a spiral corridor"},
    {"hmax", OP_HMAX, IN_TISSUE, 1, CONN_LIST, 0, "h-maxima of tissue"},
    {"regmax", OP_REGMAX, IN_TISSUE, 1, CONN_LIST, 0, "regional maxima of tissue"},
    {"open-rec", OP_OPEN_REC, IN_TISSUE, 1, CONN_LIST, 0, "opening by reconstruction of tissue (--radius)"},
    {"fill-holes", OP_FILL, IN_NUCLEI, 0, CONN_BG, 0, "fill holes of nuclei (background 4 / 6)"},
    {"kill-borders", OP_KILL, IN_NUCLEI, 0, CONN_FULL, 0, "kill borders of nuclei (8 / 26)"},
    {"edt-exact", OP_EDT_EXACT, IN_NUCLEI, 0, CONN_NONE, 0, "exact Euclidean distance transform of nuclei"},
    {"edt-dan", OP_EDT_DAN, IN_NUCLEI, 0, CONN_NONE, 0, "Danielsson (IWPP) distance transform of nuclei"},
};
#define N_OPS ((int)(sizeof OPS / sizeof OPS[0]))
static const char *DEFAULT_OPS = "rec-dil,rec-ero,hmax,regmax,fill-holes,kill-borders,edt-exact,edt-dan";
static const char *INPUT_NAME[IN_COUNT] = {"tissue", "nuclei", "spiral"};

/* ---- options -------------------------------------------------------------------- */

#define MAXL 32
typedef struct {
    int64_t w, h, d;
} size3;

typedef struct {
    int ops[N_OPS], n_ops;
    size3 sizes[MAXL];
    int n_sizes;
    iwpp_type types[4];
    int n_types;
    int backends[4]; /* CPU, CUDA, OPENCL flags by iwpp_backend value */
    int threads[MAXL], n_threads;
    int conns[MAXL], n_conns;
    int variants[8], n_variants;         /* CUDA: 0 ml, 1 atomic, 2 pf, 3 mp */
    int ocl_variants[8], n_ocl_variants; /* OpenCL */
    int reps, warmup;
    double budget_s, h;
    int radius;
    uint64_t seed;
    const char *csv, *dump;
    int cuda_device, opencl_device; /* -1: choose */
    int64_t tile, queue_capacity;
} options;

static const char *VARIANT_NAME[4] = {"ml", "atomic", "pf", "mp"};

static void usage(FILE *f)
{
    fprintf(f,
        "usage: iwpp_bench [options]\n"
        "  --ops LIST        operations, or 'all' (default %s)\n"
        "  --sizes LIST      N (NxN), WxH, WxHxD or N^3 (default 1024)\n"
        "  --types LIST      u8,u16,f32 for the gray (tissue) operations (default u8)\n"
        "  --backends LIST   cpu,cuda,opencl (default all three; missing ones are skipped)\n"
        "  --threads LIST    CPU thread counts (default 1,<cores>); 1 = sequential Fast Hybrid\n"
        "  --conn LIST       4,8 (2D); in 3D 4 means 6 and 8 means 26; 6,18,26 as such (default 8)\n"
        "  --variants LIST   CUDA reconstruction variants ml,atomic,pf,mp (default all four)\n"
        "                    ml/atomic/pf = QUEUE algorithm with MULTILEVEL/ATOMIC/PREFIXSUM queue,\n"
        "                    mp = MEGAPIXEL\n"
        "  --ocl-variants L  the same for OpenCL (default ml,mp)\n"
        "  --reps N          timed runs per case, median reported (default 5)\n"
        "  --warmup N        untimed runs before timing on GPU backends (default 1)\n"
        "  --budget S        stop repeating a case after S seconds of runs (default 60)\n"
        "  --h H             h of the tissue marker and h-maxima, 8-bit units (default 40)\n"
        "  --radius R        radius of opening by reconstruction (default 3)\n"
        "  --seed S          seed of the synthetic inputs (default 1)\n"
        "  --csv FILE        also write every row as CSV\n"
        "  --dump DIR        write inputs and sequential CPU results as .npy into DIR\n"
        "  --cuda-device N, --opencl-device N   device index (default 0 / first GPU)\n"
        "  --tile N          CPU tile size; --queue-capacity N GPU queue capacity\n"
        "Operations:\n", DEFAULT_OPS);
    for (int i = 0; i < N_OPS; ++i) fprintf(f, "  %-13s %s\n", OPS[i].name, OPS[i].what);
}

static int split(const char *s, char items[][64], int max)
{
    int n = 0;
    while (*s && n < max) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len > 0 && len < 64) {
            memcpy(items[n], s, len);
            items[n][len] = 0;
            ++n;
        }
        if (!e) break;
        s = e + 1;
    }
    return n;
}

static int parse_size(const char *s, size3 *out)
{
    long long a = 0, b = 0, c = 0;
    char tail[8];
    if (sscanf(s, "%lld^3%1s", &a, tail) == 1 && strstr(s, "^3")) {
        b = c = a;
    } else {
        int n = sscanf(s, "%lldx%lldx%lld%1s", &a, &b, &c, tail);
        if (n == 1) { b = a; c = 1; }
        else if (n == 2) c = 1;
        else if (n != 3) return -1;
    }
    if (a < 1 || b < 1 || c < 1) return -1;
    out->w = a;
    out->h = b;
    out->d = c;
    return 0;
}

static int parse_variant(const char *s)
{
    for (int i = 0; i < 4; ++i)
        if (!strcmp(s, VARIANT_NAME[i])) return i;
    return -1;
}

static int parse_options(int argc, char **argv, options *o)
{
    char items[MAXL][64];
    memset(o, 0, sizeof *o);
    o->reps = 5;
    o->warmup = 1;
    o->budget_s = 60;
    o->h = 40;
    o->radius = 3;
    o->seed = 1;
    o->cuda_device = -1;
    o->opencl_device = -1;
    const char *ops = DEFAULT_OPS, *sizes = "1024", *types = "u8", *backends = "cpu,cuda,opencl";
    const char *threads = NULL, *conns = "8", *variants = "ml,atomic,pf,mp", *ocl = "ml,mp";
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = NULL;
        char key[64];
        const char *eq = strchr(a, '=');
        if (eq && (size_t)(eq - a) < sizeof key) {
            memcpy(key, a, (size_t)(eq - a));
            key[eq - a] = 0;
            v = eq + 1;
        } else {
            snprintf(key, sizeof key, "%s", a);
        }
        if (!strcmp(key, "--help") || !strcmp(key, "-h")) {
            usage(stdout);
            exit(0);
        }
        if (!v) {
            if (i + 1 >= argc) {
                fprintf(stderr, "iwpp_bench: %s needs a value (see --help)\n", a);
                return -1;
            }
            v = argv[++i];
        }
        if (!strcmp(key, "--ops")) ops = v;
        else if (!strcmp(key, "--sizes")) sizes = v;
        else if (!strcmp(key, "--types")) types = v;
        else if (!strcmp(key, "--backends")) backends = v;
        else if (!strcmp(key, "--threads")) threads = v;
        else if (!strcmp(key, "--conn")) conns = v;
        else if (!strcmp(key, "--variants")) variants = v;
        else if (!strcmp(key, "--ocl-variants")) ocl = v;
        else if (!strcmp(key, "--reps") || !strcmp(key, "-r")) o->reps = atoi(v);
        else if (!strcmp(key, "--warmup")) o->warmup = atoi(v);
        else if (!strcmp(key, "--budget")) o->budget_s = atof(v);
        else if (!strcmp(key, "--h")) o->h = atof(v);
        else if (!strcmp(key, "--radius")) o->radius = atoi(v);
        else if (!strcmp(key, "--seed")) o->seed = strtoull(v, NULL, 10);
        else if (!strcmp(key, "--csv")) o->csv = v;
        else if (!strcmp(key, "--dump")) o->dump = v;
        else if (!strcmp(key, "--cuda-device")) o->cuda_device = atoi(v);
        else if (!strcmp(key, "--opencl-device")) o->opencl_device = atoi(v);
        else if (!strcmp(key, "--tile")) o->tile = atoll(v);
        else if (!strcmp(key, "--queue-capacity")) o->queue_capacity = atoll(v);
        else {
            fprintf(stderr, "iwpp_bench: unknown option %s (see --help)\n", a);
            return -1;
        }
    }
    if (o->reps < 1 || o->warmup < 0 || o->h < 0 || o->radius < 0) {
        fprintf(stderr, "iwpp_bench: --reps must be >= 1, --warmup, --h and --radius >= 0\n");
        return -1;
    }
    int n;
    if (!strcmp(ops, "all")) {
        for (int k = 0; k < N_OPS; ++k) o->ops[o->n_ops++] = k;
    } else {
        n = split(ops, items, MAXL);
        for (int i = 0; i < n; ++i) {
            int k;
            for (k = 0; k < N_OPS && strcmp(items[i], OPS[k].name); ++k) {}
            if (k == N_OPS) {
                fprintf(stderr, "iwpp_bench: unknown operation '%s' (see --help)\n", items[i]);
                return -1;
            }
            if (o->n_ops < N_OPS) o->ops[o->n_ops++] = k;
        }
    }
    n = split(sizes, items, MAXL);
    for (int i = 0; i < n; ++i)
        if (parse_size(items[i], &o->sizes[o->n_sizes++]) != 0) {
            fprintf(stderr, "iwpp_bench: bad size '%s' (N, WxH, WxHxD or N^3)\n", items[i]);
            return -1;
        }
    n = split(types, items, MAXL);
    for (int i = 0; i < n && o->n_types < 4; ++i) {
        if (!strcmp(items[i], "u8")) o->types[o->n_types++] = IWPP_U8;
        else if (!strcmp(items[i], "u16")) o->types[o->n_types++] = IWPP_U16;
        else if (!strcmp(items[i], "f32")) o->types[o->n_types++] = IWPP_F32;
        else {
            fprintf(stderr, "iwpp_bench: unknown type '%s' (u8, u16, f32)\n", items[i]);
            return -1;
        }
    }
    n = split(backends, items, MAXL);
    for (int i = 0; i < n; ++i) {
        if (!strcmp(items[i], "cpu")) o->backends[IWPP_BACKEND_CPU] = 1;
        else if (!strcmp(items[i], "cuda")) o->backends[IWPP_BACKEND_CUDA] = 1;
        else if (!strcmp(items[i], "opencl")) o->backends[IWPP_BACKEND_OPENCL] = 1;
        else {
            fprintf(stderr, "iwpp_bench: unknown backend '%s' (cpu, cuda, opencl)\n", items[i]);
            return -1;
        }
    }
    if (threads) {
        n = split(threads, items, MAXL);
        for (int i = 0; i < n; ++i) {
            int t = atoi(items[i]);
            if (t < 1) {
                fprintf(stderr, "iwpp_bench: bad thread count '%s'\n", items[i]);
                return -1;
            }
            o->threads[o->n_threads++] = t;
        }
    } else {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        o->threads[o->n_threads++] = 1;
        if (cores > 1) o->threads[o->n_threads++] = (int)cores;
    }
    n = split(conns, items, MAXL);
    for (int i = 0; i < n; ++i) {
        int c = atoi(items[i]);
        if (c != 4 && c != 8 && c != 6 && c != 18 && c != 26) {
            fprintf(stderr, "iwpp_bench: bad connectivity '%s' (4, 8, 6, 18, 26)\n", items[i]);
            return -1;
        }
        o->conns[o->n_conns++] = c;
    }
    n = split(variants, items, MAXL);
    for (int i = 0; i < n && o->n_variants < 8; ++i) {
        int v = parse_variant(items[i]);
        if (v < 0) {
            fprintf(stderr, "iwpp_bench: unknown variant '%s' (ml, atomic, pf, mp)\n", items[i]);
            return -1;
        }
        o->variants[o->n_variants++] = v;
    }
    n = split(ocl, items, MAXL);
    for (int i = 0; i < n && o->n_ocl_variants < 8; ++i) {
        int v = parse_variant(items[i]);
        if (v < 0) {
            fprintf(stderr, "iwpp_bench: unknown variant '%s' (ml, atomic, pf, mp)\n", items[i]);
            return -1;
        }
        o->ocl_variants[o->n_ocl_variants++] = v;
    }
    if (!o->n_ops || !o->n_sizes || !o->n_types || !o->n_conns) {
        fprintf(stderr, "iwpp_bench: empty --ops, --sizes, --types or --conn\n");
        return -1;
    }
    return 0;
}

/* ---- inputs ------------------------------------------------------------------------ */

typedef struct {
    int valid;
    iwpp_type type;
    size3 sz;
    void *img;       /* the input (tissue mask / nuclei / spiral) */
    void *marker_lo; /* tissue - h (saturating), or the spiral's seed */
    void *marker_hi; /* tissue + h (saturating) */
    int dumped;
} input_set;

static void input_free(input_set *s)
{
    free(s->img);
    free(s->marker_lo);
    free(s->marker_hi);
    memset(s, 0, sizeof *s);
}

static int64_t count3(size3 s) { return s.w * s.h * s.d; }

static void size_name(size3 s, char *buf, size_t n)
{
    if (s.d > 1)
        snprintf(buf, n, "%lldx%lldx%lld", (long long)s.w, (long long)s.h, (long long)s.d);
    else
        snprintf(buf, n, "%lldx%lld", (long long)s.w, (long long)s.h);
}

static int dump_image(const options *o, const char *name, void *data, iwpp_type t, size3 s)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.npy", o->dump, name);
    iwpp_image v = iwpp_image_3d(data, t, s.w, s.h, s.d);
    if (imgio_write_npy(path, &v) != 0) {
        fprintf(stderr, "iwpp_bench: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Make (or reuse) the input of @p kind, @p type and @p sz. Returns 0 or -1 (out of memory). */
static int input_get(input_set *cache, enum input_kind kind, iwpp_type type, size3 sz, const options *o)
{
    input_set *s = &cache[kind];
    if (s->valid && s->type == type && s->sz.w == sz.w && s->sz.h == sz.h && s->sz.d == sz.d) return 0;
    input_free(s);
    int64_t n = count3(sz);
    size_t es = iwpp_type_size(type);
    double t0 = synth_now_ms();
    s->img = malloc((size_t)n * es);
    s->marker_lo = malloc((size_t)n * es);
    if (kind == IN_TISSUE) s->marker_hi = malloc((size_t)n * es);
    if (!s->img || !s->marker_lo || (kind == IN_TISSUE && !s->marker_hi)) {
        input_free(s);
        return -1;
    }
    if (kind == IN_TISSUE) {
        synth_tissue(s->img, type, sz.w, sz.h, sz.d, o->seed);
        double h = synth_h_for_type(o->h, type);
        synth_sub_sat(s->marker_lo, s->img, type, n, h);
        synth_add_sat(s->marker_hi, s->img, type, n, h);
    } else if (kind == IN_NUCLEI) {
        if (synth_nuclei(s->img, sz.w, sz.h, sz.d, o->seed) != 0) {
            input_free(s);
            return -1;
        }
    } else {
        synth_spiral(s->img, sz.w, sz.h, sz.d);
        memset(s->marker_lo, 0, (size_t)n);
        ((uint8_t *)s->marker_lo)[0] = 255;
    }
    s->valid = 1;
    s->type = type;
    s->sz = sz;
    char sn[64];
    size_name(sz, sn, sizeof sn);
    fprintf(stderr, "# generated %s %s %s in %.0f ms\n", INPUT_NAME[kind], iwpp_type_name(type), sn,
            synth_now_ms() - t0);
    if (o->dump) {
        char name[256];
        snprintf(name, sizeof name, "in_%s_%s_%s", INPUT_NAME[kind], iwpp_type_name(type), sn);
        dump_image(o, name, s->img, type, sz);
        if (kind == IN_TISSUE) {
            snprintf(name, sizeof name, "in_%s_%s_%s_marker", INPUT_NAME[kind], iwpp_type_name(type), sn);
            dump_image(o, name, s->marker_lo, type, sz);
        }
    }
    return 0;
}

/* ---- backend configurations ------------------------------------------------------------ */

typedef struct {
    iwpp_backend be;
    int threads;          /* CPU */
    iwpp_algorithm algo;  /* GPU */
    iwpp_queue_variant qv;
    char label[24];       /* "cpu/t16", "cuda", "opencl" */
    char var[12];         /* "ml", "atomic", "pf", "mp", "-" */
} bconf;

static void conf_variant(bconf *c, int v)
{
    c->algo = v == 3 ? IWPP_ALGO_MEGAPIXEL : IWPP_ALGO_QUEUE;
    c->qv = v == 1 ? IWPP_QUEUE_ATOMIC : v == 2 ? IWPP_QUEUE_PREFIXSUM : IWPP_QUEUE_MULTILEVEL;
    snprintf(c->var, sizeof c->var, "%s", VARIANT_NAME[v]);
}

/* ---- running one operation ------------------------------------------------------------- */

typedef struct {
    iwpp_status st;
    double total_ms, compute_ms;
    int64_t visited, rounds, reruns;
    char impl[64];
} run_res;

typedef struct {
    const op_desc *op;
    iwpp_type type;
    size3 sz;
    int conn;
    input_set *in;
    iwpp_image out; /* the output (in/out marker for the reconstructions) */
} case_t;

static iwpp_type out_type(const case_t *c)
{
    switch (c->op->kind) {
    case OP_EDT_EXACT:
    case OP_EDT_DAN: return IWPP_F32;
    case OP_REGMAX: return IWPP_U8;
    default: return c->op->input == IN_TISSUE ? c->type : IWPP_U8;
    }
}

static run_res run_op(iwpp_context *ctx, case_t *c, const options *o)
{
    run_res r;
    memset(&r, 0, sizeof r);
    input_set *in = c->in;
    iwpp_image img = iwpp_image_3d(in->img, in->type, c->sz.w, c->sz.h, c->sz.d);
    size_t bytes = (size_t)count3(c->sz) * iwpp_type_size(in->type);
    if (c->op->kind == OP_REC_DIL || c->op->kind == OP_REC_MAZE)
        memcpy(c->out.data, in->marker_lo, bytes);
    else if (c->op->kind == OP_REC_ERO)
        memcpy(c->out.data, in->marker_hi, bytes);
    double t0 = synth_now_ms();
    switch (c->op->kind) {
    case OP_REC_DIL:
    case OP_REC_MAZE: r.st = iwpp_reconstruct(ctx, &c->out, &img, c->conn, IWPP_BY_DILATION); break;
    case OP_REC_ERO: r.st = iwpp_reconstruct(ctx, &c->out, &img, c->conn, IWPP_BY_EROSION); break;
    case OP_HMAX: r.st = iwpp_h_maxima(ctx, &img, synth_h_for_type(o->h, in->type), c->conn, &c->out); break;
    case OP_REGMAX: r.st = iwpp_regional_maxima(ctx, &img, c->conn, &c->out); break;
    case OP_OPEN_REC: r.st = iwpp_opening_by_reconstruction(ctx, &img, o->radius, c->conn, &c->out); break;
    case OP_FILL: r.st = iwpp_fill_holes(ctx, &img, c->conn, &c->out); break;
    case OP_KILL: r.st = iwpp_kill_borders(ctx, &img, c->conn, &c->out); break;
    case OP_EDT_EXACT: r.st = iwpp_distance_transform(ctx, &img, IWPP_EDT_EXACT, NULL, &c->out, NULL); break;
    case OP_EDT_DAN: r.st = iwpp_distance_transform(ctx, &img, IWPP_EDT_DANIELSSON, NULL, &c->out, NULL); break;
    }
    r.total_ms = synth_now_ms() - t0;
    if (r.st != IWPP_OK) {
        snprintf(r.impl, sizeof r.impl, "%s", iwpp_status_name(r.st));
        return r;
    }
    iwpp_stats s;
    if (iwpp_context_stats(ctx, &s) == IWPP_OK) {
        r.compute_ms = s.compute_ms;
        r.visited = s.pixels_visited;
        r.rounds = s.rounds;
        r.reruns = s.overflow_reruns;
        snprintf(r.impl, sizeof r.impl, "%s", s.variant[0] ? s.variant : "-");
    }
    return r;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct {
    int n;
    double total, total_min, total_max, compute;
    int64_t visited, rounds, reruns;
    char impl[64];
    iwpp_status st;
    char err[256];
} summary;

/* Warm up, then time up to o->reps runs (fewer once the budget is spent). */
static summary time_case(iwpp_context *ctx, case_t *c, const options *o, int warmup)
{
    summary s;
    memset(&s, 0, sizeof s);
    double tot[256], comp[256];
    int reps = o->reps < 256 ? o->reps : 256;
    for (int i = 0; i < warmup; ++i) {
        run_res r = run_op(ctx, c, o);
        if (r.st != IWPP_OK) {
            s.st = r.st;
            snprintf(s.err, sizeof s.err, "%s", iwpp_error_message(ctx));
            return s;
        }
    }
    double spent = 0;
    for (int i = 0; i < reps; ++i) {
        run_res r = run_op(ctx, c, o);
        if (r.st != IWPP_OK) {
            s.st = r.st;
            snprintf(s.err, sizeof s.err, "%s", iwpp_error_message(ctx));
            return s;
        }
        tot[s.n] = r.total_ms;
        comp[s.n] = r.compute_ms;
        s.n++;
        s.visited = r.visited;
        s.rounds = r.rounds;
        s.reruns = r.reruns;
        snprintf(s.impl, sizeof s.impl, "%s", r.impl);
        spent += r.total_ms;
        if (spent > o->budget_s * 1e3) break;
    }
    s.total_min = tot[0];
    s.total_max = tot[0];
    for (int i = 1; i < s.n; ++i) {
        if (tot[i] < s.total_min) s.total_min = tot[i];
        if (tot[i] > s.total_max) s.total_max = tot[i];
    }
    s.total = median(tot, s.n);
    s.compute = median(comp, s.n);
    return s;
}

/* ---- checking ------------------------------------------------------------------------------ */

/* Bit-for-bit comparison. Writes a verdict into @p buf; returns 1 on a mismatch. */
static int check_equal(const iwpp_image *got, const void *ref, char *buf, size_t n)
{
    size_t es = iwpp_type_size(got->type);
    int64_t count = got->width * got->height * got->depth;
    const unsigned char *a = got->data, *b = ref;
    if (memcmp(a, b, (size_t)count * es) == 0) {
        snprintf(buf, n, "ok");
        return 0;
    }
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < count; ++i)
        if (memcmp(a + i * es, b + i * es, es)) {
            if (first < 0) first = i;
            ++bad;
        }
    double gv = 0, rv = 0;
    switch (got->type) {
    case IWPP_U8: gv = a[first]; rv = b[first]; break;
    case IWPP_U16: gv = ((const uint16_t *)a)[first]; rv = ((const uint16_t *)b)[first]; break;
    case IWPP_F32: gv = ((const float *)a)[first]; rv = ((const float *)b)[first]; break;
    default: break;
    }
    int64_t x = first % got->width, y = (first / got->width) % got->height,
            z = first / (got->width * got->height);
    snprintf(buf, n, "MISMATCH %lld px differ, first (%lld,%lld,%lld) got %.9g want %.9g", (long long)bad,
             (long long)x, (long long)y, (long long)z, gv, rv);
    return 1;
}

/* Danielsson: never below the exact distance; report the largest excess. */
static int check_danielsson(const iwpp_image *got, const float *exact, char *buf, size_t n)
{
    int64_t count = got->width * got->height * got->depth;
    const float *g = got->data;
    int64_t below = 0, first = -1;
    double maxerr = 0;
    for (int64_t i = 0; i < count; ++i) {
        double e = (double)g[i] - (double)exact[i];
        if (isinf(exact[i]) && isinf(g[i])) continue;
        if (e < -1e-5 * (1.0 + exact[i]) || isnan(g[i])) {
            if (first < 0) first = i;
            ++below;
        } else if (e > maxerr) {
            maxerr = e;
        }
    }
    if (below) {
        snprintf(buf, n, "MISMATCH %lld px below the exact distance, first at index %lld (%.6g < %.6g)",
                 (long long)below, (long long)first, g[first], exact[first]);
        return 1;
    }
    snprintf(buf, n, "ok (max excess %.3g px)", maxerr);
    return 0;
}

/* ---- output ------------------------------------------------------------------------------------ */

static FILE *g_csv;
static int g_mismatches, g_failures;

static void print_header(void)
{
    printf("%-12s %-4s %-13s %4s %-9s %-6s %3s %10s %10s %9s %9s %7s %7s %5s  %-22s %s\n", "op", "type",
           "size", "conn", "backend", "var", "n", "total_ms", "comp_ms", "Mpx/s", "Mvis/s", "xseq", "xseq_c",
           "eff", "impl", "check");
    fflush(stdout);
}

static void fmt_num(char *buf, size_t n, double v, const char *fmt)
{
    if (v > 0 && isfinite(v))
        snprintf(buf, n, fmt, v);
    else
        snprintf(buf, n, "-");
}

static void print_row(const case_t *c, const bconf *b, const summary *s, double seq_ms, const char *check,
                      const char *device)
{
    char sn[64];
    size_name(c->sz, sn, sizeof sn);
    const char *type = iwpp_type_name(c->type);
    char conn[8];
    if (c->conn)
        snprintf(conn, sizeof conn, "%d", c->conn);
    else
        snprintf(conn, sizeof conn, "-");
    if (s->st != IWPP_OK) {
        printf("%-12s %-4s %-13s %4s %-9s %-6s %s %s: %s\n", c->op->name, type, sn, conn, b->label, b->var,
               s->st == IWPP_EUNSUPPORTED ? "SKIPPED" : "FAILED", iwpp_status_name(s->st), s->err);
        if (g_csv)
            fprintf(g_csv, "%s,%s,%s,%lld,%lld,%lld,%s,%s,%d,%s,0,,,,,%lld,,,,,,%s,,,,%s %s,\"%s\"\n",
                    c->op->name, INPUT_NAME[c->op->input], type, (long long)c->sz.w, (long long)c->sz.h,
                    (long long)c->sz.d, conn, b->label, b->threads, b->var, (long long)count3(c->sz),
                    iwpp_status_name(s->st), s->st == IWPP_EUNSUPPORTED ? "SKIPPED" : "FAILED",
                    iwpp_status_name(s->st), device);
        fflush(stdout);
        return;
    }
    double px = (double)count3(c->sz);
    double comp = s->compute > 0 ? s->compute : 0;
    char total[16], compbuf[16], mpx[16], mvis[16], xs[16], xsc[16], eff[16];
    fmt_num(total, sizeof total, s->total, "%.3f");
    fmt_num(compbuf, sizeof compbuf, comp, "%.3f");
    fmt_num(mpx, sizeof mpx, px / (s->total * 1e3), "%.1f");
    fmt_num(mvis, sizeof mvis, comp > 0 ? (double)s->visited / (comp * 1e3) : 0, "%.1f");
    fmt_num(xs, sizeof xs, seq_ms > 0 ? seq_ms / s->total : 0, "%.2f");
    fmt_num(xsc, sizeof xsc, seq_ms > 0 && comp > 0 ? seq_ms / comp : 0, "%.2f");
    double e = 0;
    if (b->be == IWPP_BACKEND_CPU && b->threads > 1 && seq_ms > 0) e = seq_ms / (s->total * b->threads);
    fmt_num(eff, sizeof eff, e, "%.2f");
    printf("%-12s %-4s %-13s %4s %-9s %-6s %3d %10s %10s %9s %9s %7s %7s %5s  %-22s %s\n", c->op->name, type,
           sn, conn, b->label, b->var, s->n, total, compbuf, mpx, mvis, xs, xsc, eff, s->impl, check);
    fflush(stdout);
    if (g_csv) {
        fprintf(g_csv,
                "%s,%s,%s,%lld,%lld,%lld,%s,%s,%d,%s,%d,%.4f,%.4f,%.4f,%.4f,%lld,%.3f,%lld,%.3f,%lld,%lld,%s,%.4f,%.4f,%.4f,\"%s\",\"%s\"\n",
                c->op->name, INPUT_NAME[c->op->input], type, (long long)c->sz.w, (long long)c->sz.h,
                (long long)c->sz.d, conn, b->label, b->threads, b->var, s->n, s->total, s->total_min,
                s->total_max, comp, (long long)count3(c->sz), px / (s->total * 1e3), (long long)s->visited,
                comp > 0 ? (double)s->visited / (comp * 1e3) : 0.0, (long long)s->rounds, (long long)s->reruns,
                s->impl, seq_ms > 0 ? seq_ms / s->total : 0.0, seq_ms > 0 && comp > 0 ? seq_ms / comp : 0.0, e,
                check, device);
        fflush(g_csv);
    }
}

/* ---- main ------------------------------------------------------------------------------------------- */

static int conn_for(const op_desc *op, int listed, int is3d)
{
    switch (op->conn) {
    case CONN_NONE: return 0;
    case CONN_BG: return is3d ? 6 : 4;
    case CONN_FULL: return is3d ? 26 : 8;
    case CONN_LIST:
    default:
        if (is3d) return listed == 4 ? 6 : listed == 8 ? 26 : listed;
        return (listed == 6 || listed == 4) ? 4 : 8;
    }
}

static iwpp_context *g_ctx[4];
static char g_devname[4][800];

static iwpp_context *context_for(iwpp_backend be, const options *o)
{
    if (g_ctx[be]) return g_ctx[be];
    iwpp_context *ctx = NULL;
    iwpp_status st = iwpp_context_create(&ctx, be);
    if (st != IWPP_OK) {
        fprintf(stderr, "# %s: cannot create a context: %s\n", iwpp_backend_name(be),
                ctx ? iwpp_error_message(ctx) : iwpp_status_name(st));
        iwpp_context_destroy(ctx);
        return NULL;
    }
    int dev = 0;
    if (be == IWPP_BACKEND_CUDA && o->cuda_device >= 0) dev = o->cuda_device;
    if (be == IWPP_BACKEND_OPENCL) {
        dev = o->opencl_device;
        if (dev < 0) { /* first GPU device, else 0 */
            dev = 0;
            int nd = iwpp_device_count(IWPP_BACKEND_OPENCL);
            for (int i = 0; i < nd; ++i) {
                iwpp_device_info di;
                if (iwpp_device_info_get(IWPP_BACKEND_OPENCL, i, &di) == IWPP_OK && di.is_gpu) {
                    dev = i;
                    break;
                }
            }
        }
    }
    if (dev != 0 && iwpp_context_set_device(ctx, dev) != IWPP_OK) {
        fprintf(stderr, "# %s: cannot use device %d: %s\n", iwpp_backend_name(be), dev, iwpp_error_message(ctx));
        iwpp_context_destroy(ctx);
        return NULL;
    }
    if (o->tile > 0) iwpp_context_set_tile_size(ctx, o->tile);
    if (o->queue_capacity > 0) iwpp_context_set_queue_capacity(ctx, o->queue_capacity);
    iwpp_device_info di;
    if (iwpp_device_info_get(be, dev, &di) == IWPP_OK)
        snprintf(g_devname[be], sizeof g_devname[be], "%s (%s, %d units, %.1f GiB)", di.name, di.platform,
                 di.compute_units, (double)di.global_memory / (1024.0 * 1024.0 * 1024.0));
    else
        snprintf(g_devname[be], sizeof g_devname[be], "%s device %d", iwpp_backend_name(be), dev);
    printf("# %-7s %s\n", iwpp_backend_name(be), g_devname[be]);
    g_ctx[be] = ctx;
    return ctx;
}

static void apply_conf(iwpp_context *ctx, const bconf *b)
{
    if (b->be == IWPP_BACKEND_CPU) {
        iwpp_context_set_threads(ctx, b->threads);
    } else {
        iwpp_context_set_algorithm(ctx, b->algo);
        iwpp_context_set_queue_variant(ctx, b->qv);
    }
}

int main(int argc, char **argv)
{
    options o;
    if (parse_options(argc, argv, &o) != 0) return 1;
    if (o.dump && mkdir(o.dump, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "iwpp_bench: cannot create %s: %s\n", o.dump, strerror(errno));
        return 1;
    }
    if (o.csv) {
        g_csv = fopen(o.csv, "w");
        if (!g_csv) {
            fprintf(stderr, "iwpp_bench: cannot write %s: %s\n", o.csv, strerror(errno));
            return 1;
        }
        fprintf(g_csv, "op,input,type,width,height,depth,conn,backend,threads,variant,reps,total_ms,total_ms_min,"
                       "total_ms_max,compute_ms,pixels,mpx_per_s,pixels_visited,mvisited_per_s,rounds,"
                       "overflow_reruns,impl,speedup_total,speedup_compute,efficiency,check,device\n");
    }
    printf("# iwpp_bench: IWPP %d.%d.%d, %ld online cores, h=%g, reps=%d, warmup(gpu)=%d, seed=%llu\n",
           IWPP_VERSION_MAJOR, IWPP_VERSION_MINOR, IWPP_VERSION_PATCH, sysconf(_SC_NPROCESSORS_ONLN), o.h,
           o.reps, o.warmup, (unsigned long long)o.seed);
    printf("# times: total_ms = wall time of the API call (transfers included), comp_ms = stats.compute_ms\n"
           "# (device-resident, transfers excluded; = total on the CPU); medians of n runs. xseq = cpu/t1 median\n"
           "# total / this total, xseq_c = cpu/t1 / comp_ms; eff = xseq / threads; Mvis/s = pixels_visited/comp.\n");

    /* Which backends run. The sequential CPU always runs: it is the reference. */
    int use[4] = {0, 1, 0, 0};
    for (int be = IWPP_BACKEND_CUDA; be <= IWPP_BACKEND_OPENCL; ++be) {
        if (!o.backends[be]) continue;
        char reason[512] = "";
        if (iwpp_backend_available((iwpp_backend)be, reason, sizeof reason)) {
            use[be] = 1;
        } else {
            printf("# %-7s not available: %s\n", iwpp_backend_name((iwpp_backend)be), reason);
        }
    }
    if (!context_for(IWPP_BACKEND_CPU, &o)) return 1;
    for (int be = IWPP_BACKEND_CUDA; be <= IWPP_BACKEND_OPENCL; ++be)
        if (use[be] && !context_for((iwpp_backend)be, &o)) use[be] = 0;

    input_set cache[IN_COUNT];
    memset(cache, 0, sizeof cache);
    float *exact_ref = NULL; /* exact EDT of the current nuclei, for the Danielsson check */
    size3 exact_sz = {0, 0, 0};
    print_header();

    for (int si = 0; si < o.n_sizes; ++si) {
        size3 sz = o.sizes[si];
        int is3d = sz.d > 1;
        for (int ti = 0; ti < o.n_types; ++ti) {
            for (int oi = 0; oi < o.n_ops; ++oi) {
                const op_desc *op = &OPS[o.ops[oi]];
                iwpp_type type = op->gray ? o.types[ti] : IWPP_U8;
                if (!op->gray && ti > 0) continue; /* binary inputs: once */
                int conns[MAXL], nc = 0;
                for (int k = 0; k < (op->conn == CONN_LIST ? o.n_conns : 1); ++k) {
                    int c = conn_for(op, o.conns[k], is3d);
                    int dup = 0;
                    for (int j = 0; j < nc; ++j) dup |= conns[j] == c;
                    if (!dup) conns[nc++] = c;
                }
                for (int ci = 0; ci < nc; ++ci) {
                    case_t c;
                    memset(&c, 0, sizeof c);
                    c.op = op;
                    c.type = type;
                    c.sz = sz;
                    c.conn = conns[ci];
                    if (input_get(cache, op->input, type, sz, &o) != 0) {
                        fprintf(stderr, "iwpp_bench: out of memory making the %s input\n", INPUT_NAME[op->input]);
                        g_failures++;
                        continue;
                    }
                    c.in = &cache[op->input];
                    iwpp_type ot = out_type(&c);
                    size_t obytes = (size_t)count3(sz) * iwpp_type_size(ot);
                    void *outbuf = malloc(obytes), *ref = malloc(obytes);
                    if (!outbuf || !ref) {
                        fprintf(stderr, "iwpp_bench: out of memory for the outputs of %s\n", op->name);
                        free(outbuf);
                        free(ref);
                        g_failures++;
                        continue;
                    }
                    memset(outbuf, 0, obytes);
                    c.out = iwpp_image_3d(outbuf, ot, sz.w, sz.h, sz.d);

                    /* Danielsson needs the exact EDT of the same input. */
                    if (op->kind == OP_EDT_DAN &&
                        (!exact_ref || exact_sz.w != sz.w || exact_sz.h != sz.h || exact_sz.d != sz.d)) {
                        free(exact_ref);
                        exact_ref = malloc(obytes);
                        iwpp_context *cc = g_ctx[IWPP_BACKEND_CPU];
                        iwpp_context_set_threads(cc, 0);
                        iwpp_image bin = iwpp_image_3d(c.in->img, IWPP_U8, sz.w, sz.h, sz.d);
                        iwpp_image ex = iwpp_image_3d(exact_ref, IWPP_F32, sz.w, sz.h, sz.d);
                        if (!exact_ref ||
                            iwpp_distance_transform(cc, &bin, IWPP_EDT_EXACT, NULL, &ex, NULL) != IWPP_OK) {
                            free(exact_ref);
                            exact_ref = NULL;
                        }
                        exact_sz = sz;
                    }

                    /* 1. the sequential CPU reference */
                    bconf seq = {IWPP_BACKEND_CPU, 1, IWPP_ALGO_AUTO, IWPP_QUEUE_MULTILEVEL, "cpu/t1", "-"};
                    int seq_timed = 0;
                    for (int k = 0; k < o.n_threads; ++k) seq_timed |= o.threads[k] == 1;
                    seq_timed &= o.backends[IWPP_BACKEND_CPU];
                    iwpp_context *cpu = g_ctx[IWPP_BACKEND_CPU];
                    apply_conf(cpu, &seq);
                    options o1 = o;
                    if (!seq_timed) o1.reps = 1;
                    summary ss = time_case(cpu, &c, &o1, 0);
                    char check[300];
                    int have_ref = ss.st == IWPP_OK;
                    double seq_ms = have_ref ? ss.total : 0;
                    if (!have_ref) { /* still time the other backends, unchecked */
                        g_failures++;
                        print_row(&c, &seq, &ss, 0, "", g_devname[IWPP_BACKEND_CPU]);
                    } else {
                    memcpy(ref, outbuf, obytes);
                    if (op->kind == OP_EDT_DAN && exact_ref) {
                        if (check_danielsson(&c.out, exact_ref, check, sizeof check)) g_mismatches++;
                    } else {
                        snprintf(check, sizeof check, "reference");
                    }
                    if (!seq_timed) strncat(check, " (untimed baseline)", sizeof check - strlen(check) - 1);
                    print_row(&c, &seq, &ss, seq_ms, check, g_devname[IWPP_BACKEND_CPU]);
                    if (o.dump) {
                        char name[256], sn[64], cs[16] = "";
                        size_name(sz, sn, sizeof sn);
                        if (c.conn) snprintf(cs, sizeof cs, "-c%d", c.conn);
                        snprintf(name, sizeof name, "out_%s%s_%s_%s_%s", op->name, cs, INPUT_NAME[op->input],
                                 iwpp_type_name(type), sn);
                        dump_image(&o, name, ref, ot, sz);
                    }
                    }

                    /* 2. every other configuration, checked against the reference */
                    bconf confs[64];
                    int ncf = 0;
                    if (o.backends[IWPP_BACKEND_CPU])
                        for (int k = 0; k < o.n_threads; ++k) {
                            if (o.threads[k] == 1) continue;
                            bconf b = {IWPP_BACKEND_CPU, o.threads[k], IWPP_ALGO_AUTO, IWPP_QUEUE_MULTILEVEL, "", "-"};
                            snprintf(b.label, sizeof b.label, "cpu/t%d", o.threads[k]);
                            confs[ncf++] = b;
                        }
                    for (int be = IWPP_BACKEND_CUDA; be <= IWPP_BACKEND_OPENCL; ++be) {
                        if (!use[be]) continue;
                        const int *vl = be == IWPP_BACKEND_CUDA ? o.variants : o.ocl_variants;
                        int nv = be == IWPP_BACKEND_CUDA ? o.n_variants : o.n_ocl_variants;
                        if (!op->variants) nv = 0;
                        bconf b = {(iwpp_backend)be, 0, IWPP_ALGO_AUTO, IWPP_QUEUE_MULTILEVEL, "", "auto"};
                        snprintf(b.label, sizeof b.label, "%s", iwpp_backend_name((iwpp_backend)be));
                        if (nv == 0) confs[ncf++] = b;
                        for (int k = 0; k < nv; ++k) {
                            conf_variant(&b, vl[k]);
                            confs[ncf++] = b;
                        }
                    }
                    for (int k = 0; k < ncf; ++k) {
                        iwpp_context *ctx = g_ctx[confs[k].be];
                        apply_conf(ctx, &confs[k]);
                        memset(outbuf, 0, obytes);
                        summary s = time_case(ctx, &c, &o, confs[k].be == IWPP_BACKEND_CPU ? 0 : o.warmup);
                        if (s.st != IWPP_OK) {
                            if (s.st != IWPP_EUNSUPPORTED) g_failures++;
                            print_row(&c, &confs[k], &s, seq_ms, "", g_devname[confs[k].be]);
                            continue;
                        }
                        int bad;
                        if (!have_ref && !(op->kind == OP_EDT_DAN && exact_ref)) {
                            bad = 0;
                            snprintf(check, sizeof check, "UNCHECKED (no CPU reference)");
                        } else if (op->kind == OP_EDT_DAN && exact_ref)
                            bad = check_danielsson(&c.out, exact_ref, check, sizeof check);
                        else
                            bad = check_equal(&c.out, ref, check, sizeof check);
                        if (bad) {
                            g_mismatches++;
                            fprintf(stderr, "\n*** MISMATCH *** %s %s %s conn %d on %s/%s: %s\n\n", op->name,
                                    iwpp_type_name(type), INPUT_NAME[op->input], c.conn, confs[k].label,
                                    confs[k].var, check);
                        }
                        print_row(&c, &confs[k], &s, seq_ms, check, g_devname[confs[k].be]);
                    }
                    free(outbuf);
                    free(ref);
                }
            }
        }
        for (int k = 0; k < IN_COUNT; ++k) input_free(&cache[k]);
    }
    free(exact_ref);
    for (int be = 0; be < 4; ++be) iwpp_context_destroy(g_ctx[be]);
    if (g_csv) fclose(g_csv);
    if (g_mismatches)
        printf("\n*** %d MISMATCH(ES) against the sequential CPU result: see the rows marked MISMATCH ***\n",
               g_mismatches);
    else
        printf("# every checked result equals the sequential CPU result%s\n",
               g_failures ? " (but some runs FAILED)" : "");
    if (g_failures) printf("# %d run(s) FAILED\n", g_failures);
    return g_mismatches ? 2 : 0;
}
