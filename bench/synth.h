/*
 * synth.h - deterministic synthetic inputs for the benchmark and the demo.
 *
 * Every generator is a pure function of (sizes, seed): the same call gives
 * the same bytes whatever the number of OpenMP threads, so a dump made on one
 * machine matches a regeneration on another.
 *
 *  - tissue: smooth gray "tissue" made of four octaves of value noise
 *    (blobs of ~256, 64, 16 px and a 4 px texture), 2D or 3D.
 *  - nuclei: binary 0/255 image of random disks (spheres in 3D), some pairs
 *    touching or overlapping, every fifth with a hole in its centre.
 *  - spiral: binary 0/255 image of a one-pixel corridor that winds from the
 *    border to the centre (walls one pixel thick): the longest possible
 *    propagation path for a seed at (0, 0). 3D: the same spiral on every slice.
 */
#ifndef IWPP_BENCH_SYNTH_H
#define IWPP_BENCH_SYNTH_H

#include "iwpp.h"

#include <stdint.h>

/** Write the tissue image into @p out (contiguous, type @p t: U8 0..255,
 *  U16 0..65535 or F32 0..255 unquantized). */
void synth_tissue(void *out, iwpp_type t, int64_t w, int64_t h, int64_t d, uint64_t seed);

/** Write the nuclei image (U8, 0 background / 255 foreground). Returns 0, or -1 if out of memory. */
int synth_nuclei(uint8_t *out, int64_t w, int64_t h, int64_t d, uint64_t seed);

/** Write the "histo" image (U8, 2D): a gray bright-field section of stained tissue: glass
 *  background near 238 with vignetting (about 30 levels darker in the corners) and grain,
 *  large ragged tissue areas with lumens, fibrous stroma with a patchy stain, and clusters of
 *  dark textured elliptical nuclei. Its bright background and stroma form regions that span
 *  the whole image, so a reconstruction (marker = image - h) propagates across many tiles, as on
 *  real sections. Returns 0, or -1 if out of memory. */
int synth_histo(uint8_t *out, int64_t w, int64_t h, uint64_t seed);

/** Write the spiral corridor image (U8, 0 wall / 255 corridor). (0,0,z) is the corridor's start. */
void synth_spiral(uint8_t *out, int64_t w, int64_t h, int64_t d);

/** out = in - s saturating at the type's minimum (F32: plain subtraction); out may be in. */
void synth_sub_sat(void *out, const void *in, iwpp_type t, int64_t n, double s);
/** out = in + s saturating at the type's maximum (F32: plain addition); out may be in. */
void synth_add_sat(void *out, const void *in, iwpp_type t, int64_t n, double s);

/** The h of the benchmark in the units of @p t: h for U8 and F32 (F32 tissue is on 0..255), h*257 for U16. */
double synth_h_for_type(double h, iwpp_type t);

/* EDT benchmark families (U8, 0 background / 255 foreground), deterministic in (sizes, seed):
 * nuclei; lines through the centre at 0, 1, 45 and 89 degrees (line0 ...), two crossing
 * diagonals (cross), the same picture on every slice in 3D; one-pixel circles (3D: shells) of
 * radius side/16, side/4, side/2 around the centre and of radius side around the corner
 * (ring_n16 ... ring_n1); a filled disk (ball) of radius side/2 (disk_n2); one background pixel
 * in the corner (corner); the first row / column (row, col; 3D: the planes y = 0, x = 0);
 * checkerboards of 1, 8, 64 pixel cells (checker1 ...); random background at densities
 * 1e-6 .. 0.5 (rand_1e-6 ...). */
/** Number of families; their names by index (NULL past the end). */
int synth_edt_family_count(void);
const char *synth_edt_family_name(int i);
/** Write family @p name into @p out (w*h*d bytes). Returns 0, or -1 (unknown name, out of memory). */
int synth_edt_family(uint8_t *out, const char *name, int64_t w, int64_t h, int64_t d, uint64_t seed);

/** Monotonic wall clock in milliseconds. */
double synth_now_ms(void);

#endif
