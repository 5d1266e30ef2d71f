/*
 * cuda_backend.h - entry points of the CUDA backend (internal).
 * Defined in the .cu files with C linkage; cuda/backend.c assembles the ops table.
 */
#ifndef IWPP_CUDA_BACKEND_H
#define IWPP_CUDA_BACKEND_H

#include "backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* device.cu: driver/device queries, context state, buffers and transfers */
int iwpp_cuda_probe(char *reason, size_t reason_size);
int iwpp_cuda_device_count(void);
iwpp_status iwpp_cuda_device_info(int index, iwpp_device_info *out);
iwpp_status iwpp_cuda_open(iwpp_context *ctx);
void iwpp_cuda_close(iwpp_context *ctx);
iwpp_status iwpp_cuda_buf_alloc(iwpp_context *ctx, iwpp_buf *b);
void iwpp_cuda_buf_free(iwpp_context *ctx, iwpp_buf *b);
uint64_t iwpp_cuda_mem_free(iwpp_context *ctx);
void *iwpp_cuda_host_alloc(iwpp_context *ctx, size_t bytes);
void iwpp_cuda_host_free(iwpp_context *ctx, void *p);
iwpp_status iwpp_cuda_upload(iwpp_context *ctx, iwpp_buf *dst, const iwpp_image *src);
iwpp_status iwpp_cuda_download(iwpp_context *ctx, const iwpp_buf *src, iwpp_image *dst);
iwpp_status iwpp_cuda_download_rows(iwpp_context *ctx, const iwpp_buf *src, int64_t row, iwpp_image *dst);
iwpp_status iwpp_cuda_upload_nonzero(iwpp_context *ctx, iwpp_buf *dst, const iwpp_image *im);

/* pointwise.cu */
iwpp_status iwpp_cuda_pointwise(iwpp_context *ctx, iwpp_pw_op op, iwpp_buf *dst, const iwpp_buf *a,
                                const iwpp_buf *b, double s);
iwpp_status iwpp_cuda_morph_unit(iwpp_context *ctx, iwpp_buf *dst, const iwpp_buf *src,
                                 int connectivity, iwpp_morph_mode mode, int iterations);
iwpp_status iwpp_cuda_minmax(iwpp_context *ctx, const iwpp_buf *a, double *min, double *max);

/* reconstruct.cu (FH_GPU) and megapixel.cu (IWPP-MP) */
iwpp_status iwpp_cuda_reconstruct(iwpp_context *ctx, iwpp_buf *marker, const iwpp_buf *mask,
                                  int connectivity, iwpp_morph_mode mode);

/* edt_exact.cu (the Danielsson method: edt_danielsson.cu) */
iwpp_status iwpp_cuda_edt(iwpp_context *ctx, const iwpp_buf *binary, iwpp_edt_method method,
                          const double spacing[3], iwpp_buf *dist, iwpp_buf *nearest);
iwpp_status iwpp_cuda_edt_views(iwpp_context *ctx, const iwpp_image *binary, iwpp_edt_method method,
                                const double spacing[3], iwpp_image *dist_out, iwpp_image *nearest_out);
void iwpp_cuda_scratch_trim(iwpp_context *ctx, double keep);
double iwpp_cuda_edt_scratch_bytes(iwpp_context *ctx, iwpp_type type, int64_t w, int64_t h, int64_t d,
                                   const double spacing[3], int nearest);

/* label.cu (union-find) and watershed.cu */
iwpp_status iwpp_cuda_label(iwpp_context *ctx, const iwpp_buf *in, int connectivity, iwpp_label_mode mode,
                            iwpp_buf *labels, int64_t *count);
iwpp_status iwpp_cuda_watershed(iwpp_context *ctx, const iwpp_buf *in, const iwpp_buf *markers,
                                const iwpp_buf *mask, int connectivity, int lines, iwpp_buf *labels);

#ifdef __cplusplus
}
#endif

#endif
