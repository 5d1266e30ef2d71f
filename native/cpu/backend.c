/* cpu/backend.c - the CPU backend's ops table and its host buffers. */
#define _POSIX_C_SOURCE 200809L
#include "cpu/cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cpu_probe(char *reason, size_t n)
{
    if (reason && n) reason[0] = '\0';
    return 1;
}

static int cpu_device_count(void) { return 1; }

static iwpp_status cpu_device_info(int index, iwpp_device_info *out)
{
    if (index != 0) return iwpp_set_error(NULL, IWPP_EINVAL, "cpu has one device");
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "model name", 10) == 0) {
                const char *v = strchr(line, ':');
                if (v) {
                    v++;
                    while (*v == ' ') v++;
                    snprintf(out->name, sizeof out->name, "%s", v);
                    out->name[strcspn(out->name, "\n")] = '\0';
                }
                break;
            }
        }
        fclose(f);
    }
    snprintf(out->platform, sizeof out->platform, "CPU");
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    out->global_memory = (pages > 0 && psize > 0) ? (uint64_t)pages * (uint64_t)psize : 0;
    out->compute_units = iwpp_cpu_threads(NULL);
    out->is_gpu = 0;
    return IWPP_OK;
}

static iwpp_status cpu_open(iwpp_context *ctx)
{
    ctx->backend_state = NULL;
    return IWPP_OK;
}

static void cpu_close(iwpp_context *ctx) { ctx->backend_state = NULL; }

static iwpp_status cpu_buf_alloc(iwpp_context *ctx, iwpp_buf *b)
{
    size_t bytes = (size_t)iwpp_buf_count(b) * iwpp_type_size(b->type);
    b->priv = NULL;
    b->ptr = malloc(bytes ? bytes : 1);
    if (!b->ptr)
        return iwpp_set_error(ctx, IWPP_ENOMEM,
                              "out of host memory: could not allocate %.1f MiB for a %lldx%lldx%lld %s "
                              "image",
                              (double)bytes / 1048576.0, (long long)b->w, (long long)b->h,
                              (long long)b->d, iwpp_type_name(b->type));
    b->priv = b->ptr; /* owned: freed by buf_free */
    return IWPP_OK;
}

static void cpu_buf_free(iwpp_context *ctx, iwpp_buf *b)
{
    (void)ctx;
    free(b->priv); /* NULL for wrapped views */
    b->priv = NULL;
    b->ptr = NULL;
}

/* Row-by-row copy between a contiguous buffer and a strided view. */
static void copy_rows(const iwpp_buf *b, const iwpp_image *im, int to_buf)
{
    size_t es = iwpp_type_size(b->type);
    size_t row = (size_t)b->w * es;
    int64_t sy = im->stride_y ? im->stride_y : im->width;
    int64_t sz = im->stride_z ? im->stride_z : sy * im->height;
    char *base = (char *)b->ptr;
    char *view = (char *)im->data;
    int contiguous = (sy == b->w) && (b->d == 1 || sz == sy * b->h);
    if (contiguous) {
        size_t all = row * (size_t)b->h * (size_t)b->d;
        if (to_buf) memcpy(base, view, all);
        else memcpy(view, base, all);
        return;
    }
    for (int64_t z = 0; z < b->d; ++z)
        for (int64_t y = 0; y < b->h; ++y) {
            char *pb = base + ((size_t)(z * b->h + y)) * row;
            char *pv = view + (size_t)(z * sz + y * sy) * es;
            if (to_buf) memcpy(pb, pv, row);
            else memcpy(pv, pb, row);
        }
}

static iwpp_status cpu_upload(iwpp_context *ctx, iwpp_buf *dst, const iwpp_image *src)
{
    (void)ctx;
    copy_rows(dst, src, 1);
    return IWPP_OK;
}

static iwpp_status cpu_download(iwpp_context *ctx, const iwpp_buf *src, iwpp_image *dst)
{
    (void)ctx;
    if (src->ptr == dst->data) return IWPP_OK; /* wrapped: already there */
    copy_rows(src, dst, 0);
    return IWPP_OK;
}

static iwpp_status cpu_wrap(iwpp_context *ctx, iwpp_buf *b, const iwpp_image *im)
{
    (void)ctx;
    int64_t sy = im->stride_y ? im->stride_y : im->width;
    int64_t sz = im->stride_z ? im->stride_z : sy * im->height;
    if (sy != im->width || (im->depth > 1 && sz != sy * im->height)) return IWPP_EUNSUPPORTED;
    b->ptr = im->data;
    b->priv = NULL;
    return IWPP_OK;
}

const iwpp_backend_ops iwpp_cpu_backend = {
    .kind = IWPP_BACKEND_CPU,
    .name = "cpu",
    .probe = cpu_probe,
    .device_count = cpu_device_count,
    .device_info = cpu_device_info,
    .open = cpu_open,
    .close = cpu_close,
    .buf_alloc = cpu_buf_alloc,
    .buf_free = cpu_buf_free,
    .upload = cpu_upload,
    .download = cpu_download,
    .reconstruct = iwpp_cpu_reconstruct,
    .reconstruct_views = iwpp_cpu_reconstruct_views,
    .edt = iwpp_cpu_edt,
    .pointwise = iwpp_cpu_pointwise,
    .morph_unit = iwpp_cpu_morph_unit,
    .wrap = cpu_wrap,
    .minmax = iwpp_cpu_minmax,
    .wrap_output = cpu_wrap, /* cpu/edt.c, labels.c and watershed.c allocate all their scratch before their first write */
    .label = iwpp_cpu_label,
    .watershed = iwpp_cpu_watershed,
};
