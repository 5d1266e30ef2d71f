/*
 * test_labels.h - what the two sources of the test_labels executable share: test_labels.c
 * (labeling, watershed, label passes, main) and test_labels_ops.c (the operations composed on
 * them: extended maxima/minima, impose minima, distance watershed; progress and cancel).
 */
#ifndef IWPP_TEST_LABELS_H
#define IWPP_TEST_LABELS_H

#include "harness.h"

extern const iwpp_type TYPES[3]; /* U8, U16, F32 */
extern const iwpp_type OUTS[2];  /* the label outputs: U16, U32 */
/* Whether the backend has the label / watershed op (probed once in main). */
extern int g_have_label, g_have_ws;
/* Skip the calling test with a message when the op is missing on this backend. */
void need_label(void);
void need_ws(void);

void test_extended_and_impose(void **state);
void test_distance_watershed(void **state);
void test_progress_and_cancel(void **state);

#endif
