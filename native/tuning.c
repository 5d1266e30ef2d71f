/*
 * tuning.c - the backends' tuning settings, kept in the context.
 *
 * The defaults are the measured best (figures in each backend's README); a setting exists to
 * measure alternatives or to work around a device. The environment is read here and only
 * here (iwpp_env for the few variables that are folders, not settings), the settings once,
 * when a context is created: variable IWPP_<KEY> with the key in upper case and
 * '.' as '_' (cuda.stage_chunk <- IWPP_CUDA_STAGE_CHUNK). iwpp_context_set_tuning overrides it.
 */
#include "backend.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keep in the order of iwpp_tune_key (backend.h). */
static const struct {
    const char *key;
    int reopen; /* read when the backend opens: a change reopens it */
} k_table[IWPP_TUNE_COUNT] = {
    {"cuda.stage_min", 1},     {"cuda.stage_chunk", 1},       {"cuda.stage_threads", 1},
    {"cuda.stage_bufs", 1},    {"cuda.stage_nt", 1},          {"cuda.pool", 1},
    {"cuda.raster_iterations", 0}, {"cuda.edt_wide", 0},      {"cuda.edt_col_tile", 0},
    {"cuda.edt_row_threads", 0},   {"cuda.edt_rows", 0},      {"cuda.edt_cols", 0},
    {"cuda.label_runs", 0},    {"cuda.rec_quads", 0},
    {"cuda.edt_lines", 0},     {"cuda.dan_switch", 0},        {"cuda.edt_bands", 0},
    {"cuda.queue_share", 0},   {"cuda.queue_leave", 0},       {"cuda.queue_host", 0},
    {"ocl.rec_scans", 0},
    {"ocl.edt_fresh", 0},      {"ocl.edt_local_mem", 0},      {"ocl.edt_rows", 0},
    {"ocl.edt_cols", 0},       {"ocl.edt_row_threads", 0},    {"ocl.edt_wide_threads", 0},
    {"ocl.edt_lines", 0},      {"ocl.dan_switch", 0},         {"ocl.queue_groups", 0},
    {"ocl.queue_tq", 0},       {"ocl.edt_bands", 0},        {"ocl.profile", 1},
    {"ocl.stage", 0},          {"ocl.stage_chunk", 0},        {"ocl.dan_linear", 0},
    {"ocl.queue_leave", 0},    {"ocl.queue_host", 0},
    {"cuda.queue_prefetch", 0},
    {"tiles.rerun_pops", 0},   {"tiles.host_threads", 0},     {"tiles.copy_threads", 0},
    {"tiles.trace", 0},        {"tiles.edt_helpers", 0},
    {"cuda.dan_tiles", 0},     {"ocl.dan_tiles", 0},
};

static void env_name(const char *key, char *out, size_t size)
{
    size_t n = (size_t)snprintf(out, size, "IWPP_");
    for (const char *p = key; *p && n + 1 < size; ++p) out[n++] = *p == '.' ? '_' : (char)toupper((unsigned char)*p);
    out[n] = '\0';
}

static void put(iwpp_context *ctx, int k, const char *value)
{
    snprintf(ctx->tune[k], sizeof ctx->tune[k], "%s", value ? value : "");
}

/* (a value longer than the slot is not taken: cut short it would mean something else, as
 * iwpp_context_set_tuning refuses it) */
void iwpp_tune_from_env(iwpp_context *ctx)
{
    for (int k = 0; k < IWPP_TUNE_COUNT; ++k) {
        char name[64];
        env_name(k_table[k].key, name, sizeof name);
        const char *v = getenv(name);
        put(ctx, k, v && strlen(v) < sizeof ctx->tune[k] ? v : NULL);
    }
}

/* The environment variables that are not tuning keys (a folder: the OpenCL program cache,
 * IWPP_CL_CACHE, and the user's XDG_CACHE_HOME / HOME it defaults to; IWPP_TILES_TRACE's file
 * when its path is too long for a tuning value) are read here too, so that every getenv of the
 * library is in this file. */
const char *iwpp_env(const char *name) { return getenv(name); }

int iwpp_tune_lookup(const char *key)
{
    for (int k = 0; key && k < IWPP_TUNE_COUNT; ++k)
        if (!strcmp(key, k_table[k].key)) return k;
    return -1;
}

int iwpp_tune_reopens(int k) { return k >= 0 && k < IWPP_TUNE_COUNT && k_table[k].reopen; }

const char *iwpp_tune(const iwpp_context *ctx, iwpp_tune_key k)
{
    if (!ctx || k < 0 || k >= IWPP_TUNE_COUNT || !ctx->tune[k][0]) return NULL;
    return ctx->tune[k];
}

iwpp_status iwpp_tune_set(iwpp_context *ctx, const char *key, const char *value)
{
    const int k = iwpp_tune_lookup(key);
    if (k < 0) {
        char list[512] = "";
        size_t n = 0;
        for (int i = 0; i < IWPP_TUNE_COUNT && n < sizeof list; ++i)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", k_table[i].key);
        return iwpp_set_error(ctx, IWPP_EINVAL, "unknown tuning key \"%s\"; the keys are: %s", key ? key : "(null)",
                              list);
    }
    if (value && strlen(value) >= sizeof ctx->tune[k])
        return iwpp_set_error(ctx, IWPP_EINVAL, "tuning value for %s is too long (at most %d characters)", key,
                              (int)sizeof ctx->tune[k] - 1);
    put(ctx, k, value);
    return IWPP_OK;
}

long long iwpp_tune_int(const iwpp_context *ctx, iwpp_tune_key k, long long dflt, long long lo, long long hi)
{
    const char *e = iwpp_tune(ctx, k);
    if (!e) return dflt;
    char *end = NULL;
    long long v = strtoll(e, &end, 10);
    if (end == e || *end) return dflt;
    return v < lo ? lo : v > hi ? hi : v;
}

size_t iwpp_tune_bytes(const iwpp_context *ctx, iwpp_tune_key k, size_t dflt, size_t lo, size_t hi)
{
    const char *e = iwpp_tune(ctx, k);
    if (!e) return dflt;
    if (!strcmp(e, "off")) return hi;
    char *end = NULL;
    double v = strtod(e, &end);
    if (end == e || !(v >= 0)) return dflt;
    if (*end == 'k' || *end == 'K') v *= 1024.0;
    if (*end == 'm' || *end == 'M') v *= 1048576.0;
    if (*end == 'g' || *end == 'G') v *= 1073741824.0;
    if (v < (double)lo) return lo;
    if (v >= (double)hi) return hi;
    return (size_t)v;
}
