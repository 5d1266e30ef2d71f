/* dispatch.h - argument checks and buffer staging shared by dispatch.c and ops/ (internal). */
#ifndef IWPP_DISPATCH_H
#define IWPP_DISPATCH_H

#include "backend.h"

/* Type masks for iwpp_check_image. */
#define IWPP_TYPES_GRAY ((1u << IWPP_U8) | (1u << IWPP_U16) | (1u << IWPP_F32))
#define IWPP_TYPE_BIT(t) (1u << (t))
/* Label images: outputs are U16 or U32; U8 is also read as labels (markers). */
#define IWPP_TYPES_LABEL_OUT ((1u << IWPP_U16) | (1u << IWPP_U32))
#define IWPP_TYPES_LABEL_IN ((1u << IWPP_U8) | (1u << IWPP_U16) | (1u << IWPP_U32))

/** Check a view: non-NULL, data, allowed type, sizes >= 1, strides, no overflow; F32 without NaN
 *  when @p check_nan. @p what names the argument in the message ("mask", "marker_inout"...). */
iwpp_status iwpp_check_image(iwpp_context *ctx, const iwpp_image *im, const char *what,
                             unsigned types, int check_nan);
/** F32 images: every value finite (for operations whose arithmetic meets inf - inf). */
iwpp_status iwpp_check_finite(iwpp_context *ctx, const iwpp_image *im, const char *what);
/** Same width/height/depth (and type, if @p same_type). */
iwpp_status iwpp_check_same(iwpp_context *ctx, const iwpp_image *a, const char *an,
                            const iwpp_image *b, const char *bn, int same_type);
/** 1 if the memory spans of two views overlap (then an output cannot be written in place of
 *  the other's buffer). */
int iwpp_views_overlap(const iwpp_image *a, const iwpp_image *b);
/** The spacing of a distance transform of @p binary (NULL = 1, 1, 1): each finite, at least
 *  1e-75, the image's diagonal below FLT_MAX; copied into @p sp. */
iwpp_status iwpp_check_spacing(iwpp_context *ctx, const iwpp_image *binary, const double spacing[3], double sp[3]);
/** Connectivity valid for the image's depth. */
iwpp_status iwpp_check_connectivity(iwpp_context *ctx, int conn, const iwpp_image *im);
/** Checks common to every call: ctx not NULL; resets the message (stats are reset once the
 *  arguments pass, so a refused call leaves the previous figures). */
iwpp_status iwpp_begin(iwpp_context *ctx);
/** Record total time and backend after a successful call. */
void iwpp_end(iwpp_context *ctx, double t0);

/** Progress at an operation's natural points (between its steps, on the calling thread):
 *  reports @p fraction of the current range to the context's listener; returns IWPP_ECANCELED
 *  (with a message) when the listener asks to stop, else IWPP_OK (also with no listener). */
iwpp_status iwpp_progress_report(iwpp_context *ctx, double fraction);
/** Reports 1 (done) to the listener, if any; a call that has finished is not cancelled. */
void iwpp_progress_done(iwpp_context *ctx);

/** A sub-range [lo, hi] of the fraction reported by the listener: while it is pushed, every
 *  report (iwpp_progress_report and the tile scheduler's) in [0, 1] lands in [lo, hi] of the
 *  enclosing range. Push and pop in pairs, on the stack of one call. */
typedef struct iwpp_progress_span {
    iwpp_progress_fn fn;
    void *user;
    double lo, hi;
} iwpp_progress_span;
void iwpp_progress_push(iwpp_context *ctx, iwpp_progress_span *span, double lo, double hi);
void iwpp_progress_pop(iwpp_context *ctx, const iwpp_progress_span *span);

/** A set of backend buffers freed together (at most 6). */
typedef struct iwpp_bufset {
    iwpp_context *ctx;
    const iwpp_backend_ops *ops; /* NULL = ctx->ops; the CPU's for host buffers of a tiled call */
    iwpp_buf b[6];
    int n;
} iwpp_bufset;

/** Allocate a buffer of @p type with the sizes of @p like. */
iwpp_status iwpp_bufset_alloc(iwpp_bufset *s, iwpp_type type, const iwpp_image *like, iwpp_buf **out);
/** A read-only buffer holding @p im: wrapped when the backend can, else allocated and uploaded. */
iwpp_status iwpp_bufset_input(iwpp_bufset *s, const iwpp_image *im, iwpp_buf **out);
/** An output buffer for the view @p im: the view itself where the backend can write straight
 *  into it (wrap_output) and it overlaps neither @p o1 nor @p o2 (NULL-safe), else allocated. */
iwpp_status iwpp_bufset_output(iwpp_bufset *s, iwpp_type type, const iwpp_image *im, const iwpp_image *o1,
                               const iwpp_image *o2, iwpp_buf **out);
void iwpp_bufset_free(iwpp_bufset *s);

#endif
