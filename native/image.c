/* image.c - pixel types and image views. */
#include "iwpp.h"

size_t iwpp_type_size(iwpp_type type)
{
    switch (type) {
    case IWPP_U8: return 1;
    case IWPP_U16: return 2;
    case IWPP_F32: return 4;
    case IWPP_I64: return 8;
    case IWPP_U32: return 4;
    }
    return 0;
}

const char *iwpp_type_name(iwpp_type type)
{
    switch (type) {
    case IWPP_U8: return "u8";
    case IWPP_U16: return "u16";
    case IWPP_F32: return "f32";
    case IWPP_I64: return "i64";
    case IWPP_U32: return "u32";
    }
    return "unknown";
}

iwpp_image iwpp_image_2d(void *data, iwpp_type type, int64_t width, int64_t height)
{
    return iwpp_image_3d(data, type, width, height, 1);
}

iwpp_image iwpp_image_3d(void *data, iwpp_type type, int64_t width, int64_t height, int64_t depth)
{
    iwpp_image im;
    im.data = data;
    im.type = type;
    im.width = width;
    im.height = height;
    im.depth = depth;
    im.stride_y = width;
    /* No multiplication that can overflow: oversized views keep stride 0 ("contiguous") and
       are refused by every operation's size check ("too many pixels"). */
    im.stride_z = (width > 0 && height > 0 && width <= INT64_MAX / height) ? width * height : 0;
    return im;
}

const char *iwpp_backend_name(iwpp_backend backend)
{
    switch (backend) {
    case IWPP_BACKEND_AUTO: return "auto";
    case IWPP_BACKEND_CPU: return "cpu";
    case IWPP_BACKEND_CUDA: return "cuda";
    case IWPP_BACKEND_OPENCL: return "opencl";
    }
    return "unknown";
}
