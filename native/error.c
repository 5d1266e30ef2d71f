/* error.c - status names, the per-context error message and the clock. */
#define _GNU_SOURCE
#include "backend.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

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
