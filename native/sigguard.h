/* sigguard.h - put the process's signal handlers back after a call into a runtime that
 * replaces them (PoCL/LLVM). Internal; see sigguard.c for why. */
#ifndef IWPP_SIGGUARD_H
#define IWPP_SIGGUARD_H

#ifdef __cplusplus
extern "C" {
#endif

/** Before a call that may enter the OpenCL runtime (nests; thread-safe). */
void iwpp_signals_enter(void);
/** After it: every signal disposition changed since the outermost enter is restored. */
void iwpp_signals_leave(void);
/** How many dispositions have been restored in this process (for tests and logs). */
int iwpp_signals_restored(void);

#ifdef __cplusplus
}
#endif

#endif
