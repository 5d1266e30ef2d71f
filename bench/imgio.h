/*
 * imgio.h - minimal writers for the benchmark and the demo:
 * NumPy .npy (format 1.0) and uncompressed baseline TIFF (one page per slice).
 */
#ifndef IWPP_BENCH_IMGIO_H
#define IWPP_BENCH_IMGIO_H

#include "iwpp.h"

/**
 * Write a contiguous image as .npy with shape (h, w) or (d, h, w).
 * Types U8 (|u1), U16 (<u2), F32 (<f4), I64 (<i8), U32 (<u4). Returns 0, or -1 (errno set).
 */
int imgio_write_npy(const char *path, const iwpp_image *img);

/**
 * Write a contiguous U8, U16 or F32 image as an uncompressed little-endian
 * TIFF, gray (BlackIsZero), one strip per page and one page per slice.
 * Returns 0, or -1 (errno set; images of 4 GiB or more are refused).
 */
int imgio_write_tiff(const char *path, const iwpp_image *img);

#endif
