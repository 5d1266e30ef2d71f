/* backend.c - the CUDA backend's ops table (the functions live in the .cu files). */
#include "cuda_backend.h"

const iwpp_backend_ops iwpp_cuda_backend = {
    .kind = IWPP_BACKEND_CUDA,
    .name = "cuda",
    .probe = iwpp_cuda_probe,
    .device_count = iwpp_cuda_device_count,
    .device_info = iwpp_cuda_device_info,
    .open = iwpp_cuda_open,
    .close = iwpp_cuda_close,
    .buf_alloc = iwpp_cuda_buf_alloc,
    .buf_free = iwpp_cuda_buf_free,
    .upload = iwpp_cuda_upload,
    .download = iwpp_cuda_download,
    .download_rows = iwpp_cuda_download_rows,
    .reconstruct = iwpp_cuda_reconstruct,
    .edt = iwpp_cuda_edt,
    .edt_views = iwpp_cuda_edt_views,
    .pointwise = iwpp_cuda_pointwise,
    .morph_unit = iwpp_cuda_morph_unit,
    .wrap = NULL,
    .minmax = iwpp_cuda_minmax,
    .mem_free = iwpp_cuda_mem_free,
    .host_alloc = iwpp_cuda_host_alloc,
    .host_free = iwpp_cuda_host_free,
    .label = iwpp_cuda_label,
    .watershed = iwpp_cuda_watershed,
};
