/*
 * sigguard.c - keep the host process's signal handlers while a third-party runtime runs.
 *
 * Why: PoCL (and any OpenCL driver built on LLVM) installs process-wide handlers for
 * SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGUSR2 ... the first time it loads or compiles. Inside a
 * JVM those replace the JVM's own: Java's integer division by zero stops throwing, and the
 * JVM's safepoint polls (deliberate SIGSEGVs) kill the process. LLVM installs its handlers
 * once per process (it never re-registers), so putting the host's back after each call
 * into the runtime removes them for good.
 *
 * How: calls that may enter the runtime are bracketed by iwpp_signals_enter/leave. The
 * first of a set of overlapping calls records every signal's disposition; each leave puts
 * back any that changed since. A shared record (not a per-thread one) is needed: a call that
 * began after the runtime changed a handler must not record the runtime's handler as the
 * one to restore.
 */
#define _POSIX_C_SOURCE 200809L
#include "sigguard.h"

#if defined(_WIN32)

void iwpp_signals_enter(void) {}
void iwpp_signals_leave(void) {}
int iwpp_signals_restored(void) { return 0; }

#else

#include <pthread.h>
#include <signal.h>
#include <string.h>

/* The standard signals 1..31 (Linux, macOS): LLVM and the JVM use only these, and each one
 * checked costs a system call on every guarded call (about 0.3 us each). */
#define IWPP_NSIG 32

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_depth;                         /* calls inside the guard now */
static struct sigaction g_saved[IWPP_NSIG]; /* dispositions when the first of them began */
static unsigned char g_have[IWPP_NSIG];     /* 1 where sigaction could read the signal */
static int g_restored;                      /* how many dispositions were put back, ever */

static int guarded(int sig) { return sig != SIGKILL && sig != SIGSTOP; }

/* Same handler, flags and mask? (sa_handler and sa_sigaction share storage.) */
static int same_action(const struct sigaction *a, const struct sigaction *b)
{
    if (a->sa_flags != b->sa_flags) return 0;
    if (a->sa_flags & SA_SIGINFO) {
        if (a->sa_sigaction != b->sa_sigaction) return 0;
    } else if (a->sa_handler != b->sa_handler) {
        return 0;
    }
    for (int s = 1; s < IWPP_NSIG; ++s)
        if (guarded(s) && sigismember(&a->sa_mask, s) != sigismember(&b->sa_mask, s)) return 0;
    return 1;
}

void iwpp_signals_enter(void)
{
    pthread_mutex_lock(&g_lock);
    if (g_depth++ == 0)
        for (int s = 1; s < IWPP_NSIG; ++s)
            g_have[s] = guarded(s) && sigaction(s, NULL, &g_saved[s]) == 0;
    pthread_mutex_unlock(&g_lock);
}

void iwpp_signals_leave(void)
{
    pthread_mutex_lock(&g_lock);
    for (int s = 1; s < IWPP_NSIG; ++s) {
        struct sigaction now;
        if (!g_have[s] || sigaction(s, NULL, &now) != 0) continue;
        if (!same_action(&now, &g_saved[s]) && sigaction(s, &g_saved[s], NULL) == 0) ++g_restored;
    }
    if (g_depth > 0) --g_depth;
    pthread_mutex_unlock(&g_lock);
}

int iwpp_signals_restored(void)
{
    pthread_mutex_lock(&g_lock);
    int n = g_restored;
    pthread_mutex_unlock(&g_lock);
    return n;
}

#endif
