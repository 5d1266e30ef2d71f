/*
 * hostcopy.c - large host memory copies for staging (pinned <-> ordinary memory).
 *
 * A plain memcpy of a few MiB per thread writes with ordinary stores: each destination line is
 * first read into the cache (read-for-ownership), so a copy moves three bytes over the memory
 * bus for every two it delivers. The staging copies of host<->device transfers are never read
 * back soon by the CPU, so they use non-temporal (streaming) stores, which skip that read.
 * Measured on the H100 machine's host (16 cores): bench/tiles_bench prints both.
 */
#include "backend.h"

#include <stdint.h>
#include <string.h>

#if defined(__SSE2__) && !defined(IWPP_NO_STREAM_COPY)
#include <emmintrin.h>
#define IWPP_HAVE_STREAM_COPY 1
#endif

void iwpp_stream_copy(void *dst, const void *src, size_t n)
{
#ifdef IWPP_HAVE_STREAM_COPY
    if (n < 4096) {
        memcpy(dst, src, n);
        return;
    }
    char *d = (char *)dst;
    const char *s = (const char *)src;
    /* head: up to the first 16-byte boundary of the destination (streaming stores need it) */
    size_t head = (size_t)(-(uintptr_t)d & 15);
    memcpy(d, s, head);
    d += head;
    s += head;
    n -= head;
    size_t body = n & ~(size_t)63;
    for (size_t i = 0; i < body; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(s + i + 48));
        _mm_stream_si128((__m128i *)(d + i), a);
        _mm_stream_si128((__m128i *)(d + i + 16), b);
        _mm_stream_si128((__m128i *)(d + i + 32), c);
        _mm_stream_si128((__m128i *)(d + i + 48), e);
    }
    memcpy(d + body, s + body, n - body);
    /* streaming stores are weakly ordered: make them visible before the DMA or the caller reads */
    _mm_sfence();
#else
    memcpy(dst, src, n);
#endif
}
