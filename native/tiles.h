/*
 * tiles.h - the tile scheduler (internal): reconstruction of images larger than a device's
 * memory budget, and of one image by several workers (GPUs and CPU threads) at once.
 * See tiles.c for the scheme.
 */
#ifndef IWPP_TILES_H
#define IWPP_TILES_H

#include "backend.h"

/** Parse a worker list ("gpu*2,cpu*4", "all-gpus,cpu", ...) into ctx (see iwpp.h). */
iwpp_status iwpp_workers_parse(iwpp_context *ctx, const char *spec);

/** Whether a reconstruction of images of @p type and sizes of @p like must run through
 *  tiles on @p ctx: a worker list is set, or its working set exceeds the memory budget. */
int iwpp_tiles_needed(iwpp_context *ctx, iwpp_type type, const iwpp_image *like);

/**
 * Reconstruction by tiles of host views: @p marker (in place; need not be clipped yet) under
 * @p mask. Arguments are checked. On failure the marker may hold a partial result: every
 * pixel between its clipped value and the final one.
 */
iwpp_status iwpp_tiles_reconstruct(iwpp_context *ctx, iwpp_image *marker, const iwpp_image *mask,
                                   int connectivity, iwpp_morph_mode mode);

/** Whether an EDT of @p binary exceeds ctx's device budget (GPU backends only; the exact method
 *  by the work buffers the backend says it takes, where it says). */
int iwpp_tiles_edt_needed(iwpp_context *ctx, const iwpp_image *binary, iwpp_edt_method method, const double sp[3],
                          int nearest);

/** Exact EDT beyond the budget (arguments checked, spacing resolved): strips of whole rows
 *  (planes) with margins over the call's GPU workers, else square tiles with margins on ctx's
 *  device, else the CPU in host memory when the margin a tile needs cannot fit. */
iwpp_status iwpp_tiles_edt(iwpp_context *ctx, const iwpp_image *binary, const double spacing[3],
                           iwpp_image *dist, iwpp_image *nearest);

/** Release the worker contexts a context keeps between tiled calls. */
void iwpp_tiles_release(iwpp_context *ctx);

#endif
