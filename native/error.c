/* error.c - status names, the per-context error message, clocks and thread counts. */
#define _GNU_SOURCE
#include "backend.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

iwpp_status iwpp_set_error(iwpp_context *ctx, iwpp_status status, const char *fmt, ...)
{
    if (ctx) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ctx->message, sizeof ctx->message, fmt, ap);
        va_end(ap);
    }
    return status;
}

const char *iwpp_error_message(const iwpp_context *ctx)
{
    if (!ctx) return "no context (NULL): create one with iwpp_context_create()";
    return ctx->message;
}

const char *iwpp_status_name(iwpp_status status)
{
    switch (status) {
    case IWPP_OK: return "IWPP_OK";
    case IWPP_EINVAL: return "IWPP_EINVAL (invalid argument)";
    case IWPP_ENOMEM: return "IWPP_ENOMEM (out of memory)";
    case IWPP_EDEVICE: return "IWPP_EDEVICE (backend or device unavailable)";
    case IWPP_EUNSUPPORTED: return "IWPP_EUNSUPPORTED (not supported)";
    case IWPP_EINTERNAL: return "IWPP_EINTERNAL (internal error)";
    case IWPP_ECANCELED: return "IWPP_ECANCELED (cancelled)";
    }
    return "unknown status";
}

double iwpp_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

int iwpp_cpu_threads(const iwpp_context *ctx)
{
    int t = ctx ? ctx->threads : 0;
    if (t > 0) return t;
    /* The cores this process may run on (taskset, cgroup cpusets), not all the machine's. */
    long n = 0;
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
#endif
#ifdef _OPENMP
    if (n < 1) n = omp_get_num_procs();
#endif
    if (n < 1) n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > IWPP_MAX_THREADS ? IWPP_MAX_THREADS : (int)n;
}
