/*
 * test_signals.c - the library leaves the host's signal handlers as it found them.
 *
 * A JVM (or any host) owns its SIGSEGV/SIGFPE/... handlers; an OpenCL runtime built on
 * LLVM (PoCL) replaces them when it loads and compiles. This installs a recognisable
 * handler for every catchable signal, then makes the library's first calls on each
 * backend (probes, AUTO, CPU, OpenCL: context, kernel build, an operation), and checks
 * after each step that every handler, flag set and mask is still the host's. Then it
 * raises SIGFPE and SIGUSR2 and checks that the host's handler ran.
 * Plain C (no CMocka): the first call in the process is what matters.
 */
#define _POSIX_C_SOURCE 200809L
#include "iwpp.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NSIG_CHECK 64

static volatile sig_atomic_t g_hits[NSIG_CHECK];

static void host_handler(int sig, siginfo_t *info, void *uc)
{
    (void)info;
    (void)uc;
    if (sig > 0 && sig < NSIG_CHECK) g_hits[sig]++;
}

static int catchable(int sig)
{
    return sig != SIGKILL && sig != SIGSTOP;
}

static struct sigaction g_host[NSIG_CHECK];
static int g_installed[NSIG_CHECK];

static void install_host_handlers(void)
{
    for (int s = 1; s < NSIG_CHECK; ++s) {
        if (!catchable(s)) continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = host_handler;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaddset(&sa.sa_mask, SIGUSR1); /* a recognisable mask */
        g_installed[s] = sigaction(s, &sa, NULL) == 0;
        if (g_installed[s]) sigaction(s, NULL, &g_host[s]);
    }
}

/* Number of signals whose disposition differs from the host's; names them. */
static int changed_handlers(const char *step)
{
    int bad = 0;
    for (int s = 1; s < NSIG_CHECK; ++s) {
        if (!g_installed[s]) continue;
        struct sigaction now;
        if (sigaction(s, NULL, &now) != 0) continue;
        int same = now.sa_sigaction == g_host[s].sa_sigaction && now.sa_flags == g_host[s].sa_flags &&
                   sigismember(&now.sa_mask, SIGUSR1) == 1;
        if (!same) {
            fprintf(stderr, "FAIL after %s: the handler of signal %d (%s) was changed\n", step, s,
                    strsignal(s));
            ++bad;
        }
    }
    return bad;
}

static int run_reconstruction(iwpp_context *ctx)
{
    enum { W = 37, H = 29 };
    static uint8_t marker[W * H], mask[W * H];
    for (int i = 0; i < W * H; ++i) {
        mask[i] = (uint8_t)(i * 7 % 251);
        marker[i] = i == 0 ? mask[0] : 0;
    }
    iwpp_image mk = iwpp_image_2d(marker, IWPP_U8, W, H), ms = iwpp_image_2d(mask, IWPP_U8, W, H);
    iwpp_status st = iwpp_reconstruct(ctx, &mk, &ms, 8, IWPP_BY_DILATION);
    if (st != IWPP_OK) fprintf(stderr, "reconstruction: %s\n", iwpp_error_message(ctx));
    float dist[W * H];
    iwpp_image d = iwpp_image_2d(dist, IWPP_F32, W, H);
    if (st == IWPP_OK) st = iwpp_distance_transform(ctx, &ms, IWPP_EDT_EXACT, NULL, &d, NULL);
    if (st != IWPP_OK) fprintf(stderr, "EDT: %s\n", iwpp_error_message(ctx));
    return st == IWPP_OK ? 0 : 1;
}

int main(void)
{
    install_host_handlers();
    int bad = 0, failed = 0;
    char reason[256];

    int ocl = iwpp_backend_available(IWPP_BACKEND_OPENCL, reason, sizeof reason);
    bad += changed_handlers("iwpp_backend_available(OPENCL)");
    iwpp_backend_available(IWPP_BACKEND_CUDA, reason, sizeof reason);
    bad += changed_handlers("iwpp_backend_available(CUDA)");
    int nocl = iwpp_device_count(IWPP_BACKEND_OPENCL);
    bad += changed_handlers("iwpp_device_count(OPENCL)");

    const iwpp_backend kinds[] = {IWPP_BACKEND_AUTO, IWPP_BACKEND_CPU, IWPP_BACKEND_OPENCL};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
        if (kinds[k] == IWPP_BACKEND_OPENCL && !ocl) {
            printf("OpenCL not usable here (%s): its step is skipped\n", reason);
            continue;
        }
        iwpp_context *ctx = NULL;
        iwpp_status st = iwpp_context_create(&ctx, kinds[k]);
        char step[96];
        snprintf(step, sizeof step, "creating a %s context", iwpp_backend_name(kinds[k]));
        bad += changed_handlers(step);
        if (st != IWPP_OK && kinds[k] != IWPP_BACKEND_AUTO) {
            fprintf(stderr, "%s: %s\n", step, iwpp_error_message(ctx));
            failed = 1;
        }
        failed |= run_reconstruction(ctx);
        snprintf(step, sizeof step, "the first operations on %s (kernels built)",
                 iwpp_backend_name(kinds[k]));
        bad += changed_handlers(step);
        iwpp_context_destroy(ctx);
        snprintf(step, sizeof step, "destroying the %s context", iwpp_backend_name(kinds[k]));
        bad += changed_handlers(step);
    }
    /* The host's handlers run when the signals come. */
    raise(SIGFPE);
    raise(SIGUSR2);
    raise(SIGSEGV);
    if (g_hits[SIGFPE] != 1 || g_hits[SIGUSR2] != 1 || g_hits[SIGSEGV] != 1) {
        fprintf(stderr, "FAIL: the host's handler did not see SIGFPE/SIGUSR2/SIGSEGV (%d %d %d)\n",
                (int)g_hits[SIGFPE], (int)g_hits[SIGUSR2], (int)g_hits[SIGSEGV]);
        ++bad;
    }
    printf("OpenCL devices: %d; handlers changed: %d; operations failed: %d\n", nocl, bad, failed);
    return bad || failed ? 1 : 0;
}
