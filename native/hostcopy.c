/*
 * hostcopy.c - large host memory copies for staging (pinned <-> ordinary memory), and the
 * layout and chunking that CUDA's and OpenCL's staged transfers share.
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

iwpp_host_layout iwpp_host_layout_of(const iwpp_image *im)
{
    const size_t es = iwpp_type_size(im->type);
    const int64_t w = im->width, h = im->height, d = im->depth;
    const int64_t sy = im->stride_y ? im->stride_y : w;
    const int64_t sz = im->stride_z ? im->stride_z : sy * h;
    const size_t row = (size_t)w * es;
    iwpp_host_layout L;
    L.base = (char *)im->data;
    L.sstride = (size_t)sz * es;
    L.per_slice = 1;
    L.ustride = 0;
    if (sy == w && (d == 1 || sz == w * h))
        L.unit = row * (size_t)h * (size_t)d;
    else if (sy == w)
        L.unit = row * (size_t)h;
    else {
        L.unit = row;
        L.per_slice = h;
        L.ustride = (size_t)sy * es;
    }
    return L;
}

static char *unit_ptr(const iwpp_host_layout *L, int64_t u)
{
    const int64_t z = u / L->per_slice, r = u % L->per_slice;
    return L->base + (size_t)z * L->sstride + (size_t)r * L->ustride;
}

static void copy_range(const iwpp_host_layout *L, char *pin, size_t a, size_t b, int to_pin, int stream)
{
    int64_t u = (int64_t)(a / L->unit);
    size_t in = a % L->unit, off = a;
    while (off < b) {
        size_t n = L->unit - in;
        if (n > b - off) n = b - off;
        char *hp = unit_ptr(L, u) + in;
        char *dst = to_pin ? pin + (off - a) : hp;
        const char *src = to_pin ? hp : pin + (off - a);
        if (stream)
            iwpp_stream_copy(dst, src, n);
        else
            memcpy(dst, src, n);
        off += n;
        ++u;
        in = 0;
    }
}

void iwpp_copy_range_par(const iwpp_host_layout *L, char *pin, size_t a, size_t b, int to_pin, int nt, int stream)
{
    const size_t len = b - a, min_part = (size_t)256 << 10; /* parts of at least 256 KiB */
    if (nt > 1 && len / (size_t)nt < min_part) nt = (int)(len / min_part);
    if (nt <= 1) {
        copy_range(L, pin, a, b, to_pin, stream);
        return;
    }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static, 1)
#endif
    for (int t = 0; t < nt; ++t) {
        const size_t s = a + (len * (size_t)t / (size_t)nt & ~(size_t)63);
        const size_t e = t == nt - 1 ? b : a + (len * (size_t)(t + 1) / (size_t)nt & ~(size_t)63);
        copy_range(L, pin + (s - a), s, e, to_pin, stream);
    }
}

iwpp_chunk_plan iwpp_chunk_plan_make(size_t total, size_t C)
{
    iwpp_chunk_plan p;
    p.C = C;
    p.total = total;
    if (total < 4 * C || C < 64) {
        p.head = 0;
        p.mid = total;
        p.m = (total + C - 1) / C;
        p.n = p.m;
    } else {
        p.head = C / 8 + C / 4 + C / 2;
        p.mid = total - 2 * p.head;
        p.m = (p.mid + C - 1) / C;
        p.n = p.m + 6;
    }
    return p;
}

void iwpp_chunk_bounds(const iwpp_chunk_plan *p, size_t k, size_t *a, size_t *b)
{
    const size_t ramp[3] = {p->C / 8, p->C / 4, p->C / 2};
    if (p->head && k < 3) {
        *a = 0;
        for (size_t j = 0; j < k; ++j) *a += ramp[j];
        *b = *a + ramp[k];
    } else if (!p->head || k < 3 + p->m) {
        const size_t j = p->head ? k - 3 : k;
        *a = p->head + j * p->C;
        *b = *a + p->C < p->head + p->mid ? *a + p->C : p->head + p->mid;
    } else {
        const size_t j = k - 3 - p->m;
        *a = p->head + p->mid;
        for (size_t i = 0; i < j; ++i) *a += ramp[2 - i];
        *b = *a + ramp[2 - j];
    }
}

/* Bits of "pixel != 0" for n pixels of one type, eight to a byte, pixel 8k+j at bit j of byte k;
 * the last byte's unused bits are 0. The exact EDT's uploads send these instead of the pixels
 * (an eighth of a U8 image's bytes over the link): the distance transform reads nothing else. */
#ifdef IWPP_HAVE_STREAM_COPY
/* 16 pixels' "!= 0" as 16 bits */
static unsigned nz16_u8(const uint8_t *p)
{
    const __m128i z = _mm_setzero_si128();
    return ~(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)p), z)) & 0xFFFFu;
}
static unsigned nz16_u16(const uint16_t *p)
{
    const __m128i z = _mm_setzero_si128();
    __m128i a = _mm_cmpeq_epi16(_mm_loadu_si128((const __m128i *)p), z);
    __m128i b = _mm_cmpeq_epi16(_mm_loadu_si128((const __m128i *)(p + 8)), z);
    return ~(unsigned)_mm_movemask_epi8(_mm_packs_epi16(a, b)) & 0xFFFFu;
}
static unsigned nz16_f32(const float *p)
{
    const __m128 z = _mm_setzero_ps(); /* -0.0f == 0.0f: a zero, as on every backend */
    unsigned m = 0;
    for (int i = 0; i < 4; ++i) m |= (unsigned)_mm_movemask_ps(_mm_cmpneq_ps(_mm_loadu_ps(p + 4 * i), z)) << (4 * i);
    return m;
}
#endif

void iwpp_pack_nonzero(const void *src, iwpp_type type, size_t n, uint8_t *bits)
{
    size_t i = 0;
#ifdef IWPP_HAVE_STREAM_COPY
    for (; i + 16 <= n; i += 16) {
        unsigned m = type == IWPP_U8    ? nz16_u8((const uint8_t *)src + i)
                     : type == IWPP_U16 ? nz16_u16((const uint16_t *)src + i)
                                        : nz16_f32((const float *)src + i);
        bits[i / 8] = (uint8_t)m;
        bits[i / 8 + 1] = (uint8_t)(m >> 8);
    }
#endif
    for (; i < n; i += 8) {
        unsigned m = 0;
        for (size_t j = 0; j < 8 && i + j < n; ++j) {
            int nz = type == IWPP_U8    ? ((const uint8_t *)src)[i + j] != 0
                     : type == IWPP_U16 ? ((const uint16_t *)src)[i + j] != 0
                                        : ((const float *)src)[i + j] != 0.0f;
            m |= (unsigned)nz << j;
        }
        bits[i / 8] = (uint8_t)m;
    }
}

size_t iwpp_bits_chunk_pixels(size_t chunk_bytes)
{
    size_t E = chunk_bytes * 8;
    if (E > ((size_t)4 << 20)) E = (size_t)4 << 20;
    E &= ~(size_t)1023;
    return E < 1024 ? 1024 : E;
}

void iwpp_pack_nonzero_par(const void *src, iwpp_type type, size_t n, uint8_t *bits, int nt)
{
    int parts = (int)(n / ((size_t)256 << 10)); /* at least 256 Ki pixels a thread */
    if (parts > nt) parts = nt;
    if (parts < 1) parts = 1;
    const size_t es = iwpp_type_size(type);
#ifdef _OPENMP
#pragma omp parallel for num_threads(parts) schedule(static, 1) if (parts > 1)
#endif
    for (int t = 0; t < parts; ++t) {
        /* part boundaries on multiples of 128 pixels: whole bytes of bits, whole 16-pixel groups */
        const size_t a = n * (size_t)t / (size_t)parts & ~(size_t)127;
        const size_t b = t == parts - 1 ? n : n * (size_t)(t + 1) / (size_t)parts & ~(size_t)127;
        iwpp_pack_nonzero((const char *)src + a * es, type, b - a, bits + a / 8);
    }
}
