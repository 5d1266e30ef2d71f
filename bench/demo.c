/*
 * iwpp_demo - generates sample images, runs the main IWPP operations on them
 * and writes inputs and results as uncompressed TIFF files (8/16-bit gray,
 * 32-bit float; one file per image) that ImageJ/Fiji opens as they are.
 *
 *   iwpp_demo OUTDIR [--size N] [--backend auto|cpu|cuda|opencl] [--h H]
 */
#define _POSIX_C_SOURCE 200809L
#include "imgio.h"
#include "iwpp.h"
#include "synth.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *g_dir;
static int g_errors;

static void save(const char *name, void *data, iwpp_type t, int64_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.tif", g_dir, name);
    iwpp_image v = iwpp_image_2d(data, t, n, n);
    if (imgio_write_tiff(path, &v) != 0) {
        fprintf(stderr, "iwpp_demo: cannot write %s: %s\n", path, strerror(errno));
        g_errors++;
        return;
    }
    printf("  wrote %s\n", path);
}

/* Print what ran, or the error; returns 1 if the call succeeded. */
static int report(iwpp_context *ctx, iwpp_status st, const char *what)
{
    if (st != IWPP_OK) {
        fprintf(stderr, "iwpp_demo: %s failed (%s): %s\n", what, iwpp_status_name(st), iwpp_error_message(ctx));
        g_errors++;
        return 0;
    }
    iwpp_stats s;
    iwpp_context_stats(ctx, &s);
    printf("%-34s backend %-6s %-20s %9.2f ms (compute %.2f ms)\n", what, iwpp_backend_name(s.backend),
           s.variant[0] ? s.variant : "-", s.total_ms, s.compute_ms);
    return 1;
}

int main(int argc, char **argv)
{
    int64_t n = 1024;
    double h = 40;
    iwpp_backend be = IWPP_BACKEND_AUTO;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc) {
            n = atoll(argv[++i]);
        } else if (!strcmp(argv[i], "--h") && i + 1 < argc) {
            h = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
            const char *b = argv[++i];
            if (!strcmp(b, "auto")) be = IWPP_BACKEND_AUTO;
            else if (!strcmp(b, "cpu")) be = IWPP_BACKEND_CPU;
            else if (!strcmp(b, "cuda")) be = IWPP_BACKEND_CUDA;
            else if (!strcmp(b, "opencl")) be = IWPP_BACKEND_OPENCL;
            else {
                fprintf(stderr, "iwpp_demo: unknown backend '%s' (auto, cpu, cuda, opencl)\n", b);
                return 1;
            }
        } else if (argv[i][0] != '-' && !g_dir) {
            g_dir = argv[i];
        } else {
            fprintf(stderr, "usage: iwpp_demo OUTDIR [--size N] [--backend auto|cpu|cuda|opencl] [--h H]\n");
            return 1;
        }
    }
    if (!g_dir || n < 1 || n > 16384 || h < 0) {
        fprintf(stderr, "usage: iwpp_demo OUTDIR [--size N (1..16384)] [--backend auto|cpu|cuda|opencl] [--h H]\n");
        return 1;
    }
    if (mkdir(g_dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "iwpp_demo: cannot create %s: %s\n", g_dir, strerror(errno));
        return 1;
    }

    iwpp_context *ctx = NULL;
    iwpp_status st = iwpp_context_create(&ctx, be);
    if (!ctx) {
        fprintf(stderr, "iwpp_demo: cannot create a context: %s\n", iwpp_status_name(st));
        return 1;
    }
    if (st != IWPP_OK)
        printf("requested backend %s is not usable (%s); running on %s\n", iwpp_backend_name(be),
               iwpp_error_message(ctx), iwpp_backend_name(iwpp_context_backend(ctx)));
    iwpp_device_info di;
    iwpp_backend running = iwpp_context_backend(ctx);
    if (iwpp_device_info_get(running, 0, &di) == IWPP_OK)
        printf("backend: %s on %s (%s)\n", iwpp_backend_name(running), di.name, di.platform);
    else
        printf("backend: %s\n", iwpp_backend_name(running));

    size_t px = (size_t)(n * n);
    uint8_t *tissue = malloc(px), *marker = malloc(px), *u8a = malloc(px), *u8b = malloc(px);
    uint8_t *nuclei = malloc(px), *filled = malloc(px), *killed = malloc(px);
    uint16_t *t16 = malloc(px * 2), *m16 = malloc(px * 2);
    float *dist = malloc(px * sizeof(float));
    if (!tissue || !marker || !u8a || !u8b || !nuclei || !filled || !killed || !t16 || !m16 || !dist) {
        fprintf(stderr, "iwpp_demo: out of memory for %lldx%lld images\n", (long long)n, (long long)n);
        return 1;
    }

    /* tissue-like gray image: reconstruction, h-maxima, regional maxima */
    synth_tissue(tissue, IWPP_U8, n, n, 1, 1);
    synth_sub_sat(marker, tissue, IWPP_U8, (int64_t)px, h);
    save("tissue_u8", tissue, IWPP_U8, n);
    save("tissue_marker_u8", marker, IWPP_U8, n);
    iwpp_image vt = iwpp_image_2d(tissue, IWPP_U8, n, n);
    iwpp_image vm = iwpp_image_2d(marker, IWPP_U8, n, n);
    if (report(ctx, iwpp_reconstruct(ctx, &vm, &vt, 8, IWPP_BY_DILATION), "reconstruction (u8, 8-conn)"))
        save("reconstruction_u8", marker, IWPP_U8, n);
    iwpp_image va = iwpp_image_2d(u8a, IWPP_U8, n, n), vb = iwpp_image_2d(u8b, IWPP_U8, n, n);
    if (report(ctx, iwpp_h_maxima(ctx, &vt, h, 8, &va), "h-maxima (u8, 8-conn)"))
        save("hmaxima_u8", u8a, IWPP_U8, n);
    if (report(ctx, iwpp_regional_maxima(ctx, &vt, 8, &vb), "regional maxima of tissue (8-conn)"))
        save("regional_maxima_u8", u8b, IWPP_U8, n);
    if (report(ctx, iwpp_regional_maxima(ctx, &va, 8, &vb), "regional maxima of h-maxima"))
        save("extended_maxima_u8", u8b, IWPP_U8, n);

    /* the same at 16 bits */
    synth_tissue(t16, IWPP_U16, n, n, 1, 1);
    synth_sub_sat(m16, t16, IWPP_U16, (int64_t)px, synth_h_for_type(h, IWPP_U16));
    save("tissue_u16", t16, IWPP_U16, n);
    iwpp_image vt16 = iwpp_image_2d(t16, IWPP_U16, n, n), vm16 = iwpp_image_2d(m16, IWPP_U16, n, n);
    if (report(ctx, iwpp_reconstruct(ctx, &vm16, &vt16, 8, IWPP_BY_DILATION), "reconstruction (u16, 8-conn)"))
        save("reconstruction_u16", m16, IWPP_U16, n);

    /* nuclei-like binary image: fill holes, kill borders, distance transform */
    if (synth_nuclei(nuclei, n, n, 1, 1) != 0) {
        fprintf(stderr, "iwpp_demo: out of memory making the nuclei image\n");
        return 1;
    }
    save("nuclei_u8", nuclei, IWPP_U8, n);
    iwpp_image vn = iwpp_image_2d(nuclei, IWPP_U8, n, n);
    iwpp_image vf = iwpp_image_2d(filled, IWPP_U8, n, n), vk = iwpp_image_2d(killed, IWPP_U8, n, n);
    if (report(ctx, iwpp_fill_holes(ctx, &vn, 4, &vf), "fill holes (background 4-conn)"))
        save("fill_holes_u8", filled, IWPP_U8, n);
    if (report(ctx, iwpp_kill_borders(ctx, &vf, 8, &vk), "kill borders of filled (8-conn)"))
        save("kill_borders_u8", killed, IWPP_U8, n);
    iwpp_image vd = iwpp_image_2d(dist, IWPP_F32, n, n);
    if (report(ctx, iwpp_distance_transform(ctx, &vf, IWPP_EDT_EXACT, NULL, &vd, NULL), "exact EDT of filled"))
        save("edt_exact_f32", dist, IWPP_F32, n);
    if (report(ctx, iwpp_distance_transform(ctx, &vf, IWPP_EDT_DANIELSSON, NULL, &vd, NULL),
               "Danielsson EDT of filled"))
        save("edt_danielsson_f32", dist, IWPP_F32, n);

    iwpp_context_destroy(ctx);
    free(tissue); free(marker); free(u8a); free(u8b); free(nuclei); free(filled); free(killed);
    free(t16); free(m16); free(dist);
    if (g_errors) {
        printf("%d step(s) failed\n", g_errors);
        return 1;
    }
    printf("all images written to %s\n", g_dir);
    return 0;
}
