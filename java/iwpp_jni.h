/*
 * iwpp_jni.h - the glue shared by the JNI files (iwpp_jni.c: settings, contexts, progress,
 * pixel copies and queries; iwpp_jni_ops.c: the operations, one entry point per kind of
 * native/ops.def). Internal: these names are hidden in libiwpp_jni (only Java_* are exported).
 * The rules of the glue are at the top of iwpp_jni.c.
 */
#ifndef IWPP_JNI_H
#define IWPP_JNI_H

#include <jni.h>

#include "iwpp.h"

/* ------------------------------------------------------------ exceptions */

/** Throws for @p status: IllegalArgumentException (EINVAL), IwppCancelledException
 *  (ECANCELED) or IwppException; keeps an exception already pending. */
void throw_status(JNIEnv *env, iwpp_status status, const char *message);
void throw_fmt(JNIEnv *env, iwpp_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ------------------------------------------------------------ settings */

/** The settings of one call: which context, and what it may use. */
typedef struct call_settings {
    jint backend, device, threads;
    jlong memory_limit; /* bytes, 0 = the device's free memory */
    jstring workers;    /* NULL = the context's own device alone */
} call_settings;

/*
 * Each operation takes (backend, device, threads, memoryLimit, workers,
 * progress) first: the first five pick and set up the thread's context, the
 * listener is registered for this call only.
 */
#define SETTINGS_PARAMS                                                                            \
    jint backend, jint device, jint threads, jlong memory_limit, jstring workers, jobject progress
#define SETTINGS_INIT {backend, device, threads, memory_limit, workers}

/** Checks the settings without making a context: 0, or -1 with an exception pending. */
int check_settings(JNIEnv *env, const call_settings *cs);
/** The calling thread's context for these settings, or NULL with an exception pending. */
iwpp_context *context_for(JNIEnv *env, const call_settings *cs);

/* ------------------------------------------------------------ progress */

/** One call's listener (an iwpp.IwppNative.Progress), called back on this very thread. */
typedef struct progress_call {
    JNIEnv *env;
    jobject listener; /* NULL: none */
    jmethodID update;
    jthrowable thrown; /* what the listener threw (a local ref, valid until this JNI call returns) */
} progress_call;

int progress_begin(JNIEnv *env, iwpp_context *ctx, jobject listener, progress_call *p);
/** Unregisters the listener and turns @p st into an exception: 1 if the call failed. */
int progress_end(JNIEnv *env, iwpp_context *ctx, progress_call *p, iwpp_status st);

/** Start of a JNI call (resets the per-call timers); returns its start time for record_success. */
double call_start(JNIEnv *env);
/** After a successful call whose results are stored: keeps its figures for lastStats(). */
void record_success(JNIEnv *env, double t0);

/* ------------------------------------------------------------ images */

/** A contiguous native copy of an array of Java slices, and the slices it came from. */
typedef struct jimage {
    iwpp_image view;
    jsize slices;
    jobject *refs; /* global references to the checked slices: the only arrays touched */
    const char *what;
} jimage;

/* Sets of accepted pixel types for jimage_make (0 = JT_GRAY). */
#define JT(t) (1u << (t))
#define JT_GRAY (JT(IWPP_U8) | JT(IWPP_U16) | JT(IWPP_F32))
#define JT_LABEL_IN (JT(IWPP_U8) | JT(IWPP_U16) | JT(IWPP_U32))
#define JT_LABEL_OUT (JT(IWPP_U16) | JT(IWPP_U32))

/**
 * Holds and checks the slices of @p slices (all of one type in @p accept, each width*height
 * long, none null; as many as @p depth_of's if not NULL) and makes a contiguous native image,
 * with the pixels copied in when @p copy_in. Returns 0, or -1 with an exception pending and
 * nothing held.
 */
int jimage_make(JNIEnv *env, const char *what, jobjectArray slices, jint width, jint height,
                unsigned accept, const jimage *depth_of, int copy_in, jimage *out);
void jimage_free(JNIEnv *env, jimage *im);
/** Copies a native image back into its held slices: 0, or -1 with an exception pending. */
int jimage_store(JNIEnv *env, const jimage *im);

#endif
