/* cpu.h - entry points of the CPU backend's operation files (internal). */
#ifndef IWPP_CPU_H
#define IWPP_CPU_H

#include "backend.h"

/* cpu/reconstruct.c: Fast Hybrid (threads == 1) or OpenMP tile-parallel (threads > 1). */
iwpp_status iwpp_cpu_reconstruct(iwpp_context *ctx, iwpp_buf *marker, const iwpp_buf *mask,
                                 int connectivity, iwpp_morph_mode mode);
/* The same on host views (contiguous; else IWPP_EUNSUPPORTED, no message): clips the
   marker while working and writes it once, at the end (see backend.h reconstruct_views). */
iwpp_status iwpp_cpu_reconstruct_views(iwpp_context *ctx, iwpp_image *marker,
                                       const iwpp_image *mask, int connectivity,
                                       iwpp_morph_mode mode);
/* cpu/edt.c: exact separable EDT, or Danielsson by queue propagation. */
iwpp_status iwpp_cpu_edt(iwpp_context *ctx, const iwpp_buf *binary, iwpp_edt_method method,
                         const double spacing[3], iwpp_buf *dist, iwpp_buf *nearest);
/* cpu/pointwise.c: pointwise primitives, unit erosion/dilation, min/max. */
iwpp_status iwpp_cpu_pointwise(iwpp_context *ctx, iwpp_pw_op op, iwpp_buf *dst,
                               const iwpp_buf *a, const iwpp_buf *b, double s);
iwpp_status iwpp_cpu_morph_unit(iwpp_context *ctx, iwpp_buf *dst, const iwpp_buf *src,
                                int connectivity, iwpp_morph_mode mode, int iterations);
iwpp_status iwpp_cpu_minmax(iwpp_context *ctx, const iwpp_buf *a, double *min, double *max);

/* cpu/labels.c: union-find labeling. cpu/watershed.c: priority flood per region. */
iwpp_status iwpp_cpu_label(iwpp_context *ctx, const iwpp_buf *in, int connectivity, iwpp_label_mode mode,
                           iwpp_buf *labels, int64_t *count);
iwpp_status iwpp_cpu_watershed(iwpp_context *ctx, const iwpp_buf *in, const iwpp_buf *markers,
                               const iwpp_buf *mask, int connectivity, int lines, iwpp_buf *labels);

#endif
