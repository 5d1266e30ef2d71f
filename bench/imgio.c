/* imgio.c - .npy and TIFF writers (see imgio.h). */
#include "imgio.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int is_little_endian(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

int imgio_write_npy(const char *path, const iwpp_image *img)
{
    const char *descr;
    switch (img->type) {
    case IWPP_U8: descr = "|u1"; break;
    case IWPP_U16: descr = "<u2"; break;
    case IWPP_F32: descr = "<f4"; break;
    case IWPP_I64: descr = "<i8"; break;
    case IWPP_U32: descr = "<u4"; break;
    default: errno = EINVAL; return -1;
    }
    if (!is_little_endian()) {
        errno = ENOTSUP;
        return -1;
    }
    char dict[256];
    int n;
    if (img->depth > 1)
        n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%lld, %lld, %lld), }",
                     descr, (long long)img->depth, (long long)img->height, (long long)img->width);
    else
        n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%lld, %lld), }",
                     descr, (long long)img->height, (long long)img->width);
    /* magic(6) + version(2) + header length(2) + dict + padding + '\n', total a multiple of 64 */
    size_t total = 10 + (size_t)n + 1;
    size_t padded = (total + 63) / 64 * 64;
    size_t hlen = padded - 10;
    unsigned char head[512];
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    head[8] = (unsigned char)(hlen & 0xff);
    head[9] = (unsigned char)(hlen >> 8);
    memcpy(head + 10, dict, (size_t)n);
    memset(head + 10 + n, ' ', padded - 10 - (size_t)n - 1);
    head[padded - 1] = '\n';
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t bytes = (size_t)(img->width * img->height * img->depth) * iwpp_type_size(img->type);
    int ok = fwrite(head, 1, padded, f) == padded && fwrite(img->data, 1, bytes, f) == bytes;
    if (fclose(f) != 0) ok = 0;
    return ok ? 0 : -1;
}

static void put16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)(v & 0xff);
    p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; ++i) p[i] = (unsigned char)((v >> (8 * i)) & 0xff);
}

enum { TIFF_SHORT = 3, TIFF_LONG = 4, TIFF_RATIONAL = 5 };
#define TIFF_NTAGS 13

static unsigned char *tiff_entry(unsigned char *p, uint16_t tag, uint16_t type, uint32_t value)
{
    put16(p, tag);
    put16(p + 2, type);
    put32(p + 4, 1);
    memset(p + 8, 0, 4);
    if (type == TIFF_SHORT)
        put16(p + 8, (uint16_t)value);
    else
        put32(p + 8, value);
    return p + 12;
}

int imgio_write_tiff(const char *path, const iwpp_image *img)
{
    unsigned bits, format;
    switch (img->type) {
    case IWPP_U8: bits = 8; format = 1; break;
    case IWPP_U16: bits = 16; format = 1; break;
    case IWPP_F32: bits = 32; format = 3; break;
    default: errno = EINVAL; return -1;
    }
    const uint64_t page_bytes = (uint64_t)img->width * (uint64_t)img->height * (bits / 8);
    const uint64_t ifd_bytes = 2 + TIFF_NTAGS * 12 + 4 + 16; /* entries, next offset, two rationals */
    const uint64_t page_total = ifd_bytes + ((page_bytes + 15) / 16) * 16;
    if (8 + page_total * (uint64_t)img->depth >= 0xFFFFFFF0ull || img->width > 0xFFFFFFFFll ||
        img->height > 0xFFFFFFFFll) {
        errno = EFBIG;
        return -1;
    }
    if (!is_little_endian()) {
        errno = ENOTSUP;
        return -1;
    }
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    unsigned char head[8] = {'I', 'I', 42, 0, 8, 0, 0, 0};
    int ok = fwrite(head, 1, 8, f) == 8;
    const unsigned char zeros[16] = {0};
    for (int64_t z = 0; ok && z < img->depth; ++z) {
        uint32_t ifd = (uint32_t)(8 + page_total * (uint64_t)z);
        uint32_t rat = ifd + 2 + TIFF_NTAGS * 12 + 4;
        uint32_t data = rat + 16;
        uint32_t next = z + 1 < img->depth ? (uint32_t)(ifd + page_total) : 0;
        unsigned char blk[2 + TIFF_NTAGS * 12 + 4 + 16];
        unsigned char *p = blk;
        put16(p, TIFF_NTAGS);
        p += 2;
        p = tiff_entry(p, 256, TIFF_LONG, (uint32_t)img->width);   /* ImageWidth */
        p = tiff_entry(p, 257, TIFF_LONG, (uint32_t)img->height);  /* ImageLength */
        p = tiff_entry(p, 258, TIFF_SHORT, bits);                  /* BitsPerSample */
        p = tiff_entry(p, 259, TIFF_SHORT, 1);                     /* Compression: none */
        p = tiff_entry(p, 262, TIFF_SHORT, 1);                     /* Photometric: BlackIsZero */
        p = tiff_entry(p, 273, TIFF_LONG, data);                   /* StripOffsets */
        p = tiff_entry(p, 277, TIFF_SHORT, 1);                     /* SamplesPerPixel */
        p = tiff_entry(p, 278, TIFF_LONG, (uint32_t)img->height);  /* RowsPerStrip */
        p = tiff_entry(p, 279, TIFF_LONG, (uint32_t)page_bytes);   /* StripByteCounts */
        p = tiff_entry(p, 282, TIFF_RATIONAL, rat);                /* XResolution */
        p = tiff_entry(p, 283, TIFF_RATIONAL, rat + 8);            /* YResolution */
        p = tiff_entry(p, 296, TIFF_SHORT, 1);                     /* ResolutionUnit: none */
        p = tiff_entry(p, 339, TIFF_SHORT, format);                /* SampleFormat */
        put32(p, next);
        p += 4;
        put32(p, 1); put32(p + 4, 1); put32(p + 8, 1); put32(p + 12, 1); /* 1/1 pixels per unit */
        ok = fwrite(blk, 1, sizeof blk, f) == sizeof blk;
        const unsigned char *src = (const unsigned char *)img->data + page_bytes * (uint64_t)z;
        ok = ok && fwrite(src, 1, (size_t)page_bytes, f) == page_bytes;
        size_t pad = (size_t)(((page_bytes + 15) / 16) * 16 - page_bytes);
        ok = ok && fwrite(zeros, 1, pad, f) == pad;
    }
    if (fclose(f) != 0) ok = 0;
    return ok ? 0 : -1;
}
