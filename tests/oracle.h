/*
 * oracle.h - definitional reference implementations for the tests.
 *
 * Written from the definitions in native/include/iwpp.h, independently of
 * native/: no call into the library and no shared helper (not even
 * neighborhood.h). Slow on purpose: each function is the definition, made
 * into a loop, and nothing else.
 *
 * Images are contiguous arrays of double, pixel (x,y,z) at x + w*(y + h*z).
 * Values of U8, U16 and F32 images are held exactly in a double. The type
 * only matters for saturation, rounding of h and float arithmetic.
 */
#ifndef IWPP_TEST_ORACLE_H
#define IWPP_TEST_ORACLE_H

#include <stdint.h>

#include "iwpp.h" /* for iwpp_type only */

typedef struct odims {
    int64_t w, h, d;
} odims;

static inline int64_t odims_count(odims d) { return d.w * d.h * d.d; }

/**
 * Neighbour offsets of @p conn (4, 8, 6, 18, 26) from the definition:
 * 4/6: one coordinate differs by 1; 18: one or two; 8/26: any (the z offset
 * is 0 for 4 and 8). On an image of depth 1 the z neighbours fall outside,
 * so 6 acts as 4 and 18/26 as 8 without special handling.
 * Returns the number of offsets, 0 for an unknown connectivity.
 */
int oracle_neighbors(int conn, int off[26][3]);

/**
 * Reconstruction by dilation (by_erosion = 0) or erosion: @p marker is first
 * clipped to @p mask (min for dilation, max for erosion), then elementary
 * geodesic dilations (max over centre and neighbours, then min with the
 * mask; dually for erosion) are applied to the whole image at once until
 * nothing changes. Result in @p marker. Returns the number of sweeps.
 */
int64_t oracle_reconstruct(double *marker, const double *mask, odims d, int conn, int by_erosion);

/**
 * Brute force Euclidean distance transform: for every foreground pixel
 * (nonzero) the minimum over all background pixels of
 * sqrt(sum((delta_i * spacing_i)^2)) in double, then converted to float;
 * 0 on background; +INFINITY everywhere if there is no background.
 */
void oracle_edt(const double *binary, odims d, const double spacing[3], float *dist);
/** Danielsson's provable upper bound per pixel: the shortest neighbour-step path (8/26
 *  neighbours, spacing-weighted) from any background pixel; 0 on background. */
void oracle_danielsson_bound(const double *binary, odims d, const double spacing[3], double *bound);

/** Distance in double between linear indices @p a and @p b (x + w*(y + h*z)). */
double oracle_index_distance(int64_t a, int64_t b, odims d, const double spacing[3]);

/** The type's largest / smallest value (F32: FLT_MAX / -FLT_MAX). */
double oracle_type_max(iwpp_type t);
double oracle_type_min(iwpp_type t);

/** 1 if (x,y,z) is on the image border (x, y at their ends; z too if depth > 1). */
int oracle_on_border(odims d, int64_t x, int64_t y, int64_t z);

/** Fill holes: reconstruction by erosion over @p in of (in on the border, type max inside). */
void oracle_fill_holes(const double *in, odims d, iwpp_type t, int conn, double *out);
/** Kill borders: in - reconstruction by dilation under @p in of (in on the border, type min
 *  inside); F32 subtraction in IEEE single precision (FLT_MAX - -FLT_MAX = +inf). */
void oracle_kill_borders(const double *in, odims d, iwpp_type t, int conn, double *out);

/**
 * Regional maxima (maxima = 1) or minima by flood fill of plateaus: a
 * plateau (connected set of equal values, @p conn) is a maximum iff no pixel
 * of it has a neighbour with a higher value. 255 on extrema, 0 elsewhere.
 */
void oracle_regional_extrema(const double *in, odims d, int conn, int maxima, double *out);

/**
 * H-maxima (maxima = 1): reconstruction by dilation of sat(in - h) under in;
 * h-minima: reconstruction by erosion of sat(in + h) over in. For U8/U16,
 * h is rounded to the nearest integer and the result saturates at the type's
 * range; for F32 the shift is in - (float)h in single precision.
 */
void oracle_hextrema(const double *in, odims d, iwpp_type t, double h, int conn, int maxima,
                     double *out);

/**
 * Opening (opening = 1) by reconstruction: @p radius elementary erosions
 * (min over the centre and the in-image neighbours of @p conn), then
 * reconstruction by dilation under @p in. Closing: the dual.
 */
void oracle_open_close(const double *in, odims d, int radius, int conn, int opening,
                       double *out);

/**
 * Connected-component labeling (iwpp_label): pixels != 0 join their neighbours of @p conn that
 * are != 0 (equal = 0) or != 0 and equal (equal = 1); by repeated min-propagation of the pixel
 * index, then numbered 1, 2, ... in raster order of each component's first pixel. Labels in
 * @p out (0 on background); returns the number of components.
 */
int64_t oracle_label(const double *in, odims d, int conn, int equal, uint32_t *out);

/**
 * Marker-controlled watershed (iwpp_watershed), straight from the definition: every pixel holds
 * (L, D, label); marker pixels inside the mask start at (in, 0, marker) and keep it; sweeps
 * recompute every other pixel inside the mask from its reached neighbours' current states q as
 *   (max(L_q, in_p), in_p > L_q ? 0 : D_q + 1, label_q), lexicographic minimum,
 * until nothing changes (a recomputation, not a minimum with the pixel's earlier state: a
 * neighbour's earlier, worse state must not leave its label behind). @p mask may be NULL (everywhere). With @p lines, a non-marker pixel
 * is then set to 0 where a neighbour has another nonzero label and a smaller (L, D, label).
 */
void oracle_watershed(const double *in, const uint32_t *markers, const double *mask, odims d, int conn,
                      int lines, uint32_t *out);

#endif
