/* cpu/pool.c - worker threads of the CPU backend (see pool.h). */
#define _GNU_SOURCE
#include "cpu/pool.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef struct par_start {
    iwpp_par_fn fn;
    void *arg;
    int worker;
} par_start;

static void *par_main(void *p)
{
    const par_start *s = (const par_start *)p;
    s->fn(s->arg, s->worker);
    return NULL;
}

int iwpp_par_run(int nworkers, iwpp_par_fn fn, void *arg)
{
    if (nworkers <= 1) {
        fn(arg, 0);
        return 1;
    }
    pthread_t *tid = (pthread_t *)malloc((size_t)nworkers * sizeof(pthread_t));
    par_start *st = (par_start *)malloc((size_t)nworkers * sizeof(par_start));
    int started = 1;
    if (tid && st) {
        /* Workers start with every signal blocked but a fault's: the host (a JVM)
           keeps its signals on its own threads, and a crash still reaches its handler.
           (Windows has no POSIX signals to route.) */
#ifndef _WIN32
        sigset_t all, old;
        sigfillset(&all);
        static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};
        for (size_t i = 0; i < sizeof faults / sizeof faults[0]; ++i) sigdelset(&all, faults[i]);
        int masked = pthread_sigmask(SIG_SETMASK, &all, &old) == 0;
#endif
        for (int k = 1; k < nworkers; ++k) {
            st[k].fn = fn;
            st[k].arg = arg;
            st[k].worker = k;
            if (pthread_create(&tid[k], NULL, par_main, &st[k]) != 0) break;
            started = k + 1;
        }
#ifndef _WIN32
        if (masked) pthread_sigmask(SIG_SETMASK, &old, NULL);
#endif
    }
    fn(arg, 0);
    for (int k = 1; k < started; ++k) pthread_join(tid[k], NULL);
    free(tid);
    free(st);
    return started;
}

typedef struct par_loop {
    _Atomic int64_t next;
    int64_t n, chunk;
    iwpp_par_range_fn fn;
    void *arg;
} par_loop;

static void par_loop_worker(void *p, int worker)
{
    par_loop *L = (par_loop *)p;
    for (;;) {
        const int64_t i0 = atomic_fetch_add_explicit(&L->next, L->chunk, memory_order_relaxed);
        if (i0 >= L->n) break;
        const int64_t i1 = L->n - i0 < L->chunk ? L->n : i0 + L->chunk;
        L->fn(L->arg, i0, i1, worker);
    }
}

void iwpp_par_for(int nworkers, int64_t n, int64_t chunk, iwpp_par_range_fn fn, void *arg)
{
    if (n <= 0) return;
    if (chunk < 1) chunk = 1;
    const int64_t items = (n + chunk - 1) / chunk;
    if (nworkers > items) nworkers = (int)items;
    if (nworkers <= 1) {
        fn(arg, 0, n, 0);
        return;
    }
    par_loop L;
    atomic_init(&L.next, 0);
    L.n = n;
    L.chunk = chunk;
    L.fn = fn;
    L.arg = arg;
    iwpp_par_run(nworkers, par_loop_worker, &L);
}

/*
 * Tasks of other processes (and other threads of this one) running or
 * waiting for a core right now: the fourth field of /proc/loadavg ("7/350":
 * 7 runnable) less the caller itself; -1 where it cannot be read. When the
 * machine has more cores online than this process may use, the count is
 * scaled down to its share of them.
 */
static int others_runnable(int usable)
{
#if defined(__linux__)
    int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buf[128];
    const ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = '\0';
    /* "0.52 0.58 0.59 7/350 12345" */
    const char *p = buf;
    for (int field = 0; field < 3; ++field) {
        p = strchr(p, ' ');
        if (!p) return -1;
        ++p;
    }
    char *end;
    const long running = strtol(p, &end, 10);
    if (end == p || *end != '/' || running < 1) return -1;
    long others = running - 1;
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online > usable && usable > 0) others = (others * usable + online / 2) / online;
    return others > 1000000 ? 1000000 : (int)others;
#else
    (void)usable; /* no /proc/loadavg: count nobody */
    return -1;
#endif
}

int iwpp_cpu_threads(const iwpp_context *ctx)
{
    int t = ctx ? ctx->threads : 0;
    if (t > 0) return t;
    /* The cores this process may run on (taskset, cgroup cpusets), not all the machine's. */
    long n = 0;
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
#endif
#ifdef _OPENMP
    if (n < 1) n = omp_get_num_procs();
#endif
    if (n < 1) n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > IWPP_MAX_THREADS ? IWPP_MAX_THREADS : (int)n;
}

int iwpp_cpu_threads_for(const iwpp_context *ctx, int64_t work, int64_t per_thread)
{
    int t = iwpp_cpu_threads(ctx);
    if (ctx && ctx->threads > 0) return t;
    if (per_thread < 1) per_thread = 1;
    const int64_t fit = work / per_thread;
    if (fit < t) t = fit < 1 ? 1 : (int)fit;
    if (t > 1) {
        /* Only the cores nobody else wants: where other tasks already keep the cores busy,
           more threads of ours get little more of the CPU (the kernel shares it between
           sessions, not threads, when autogroup is on, as on most desktops) but still do
           the parallel variant's extra work, and one thread is the safer choice. */
        const int others = others_runnable(iwpp_cpu_threads(ctx));
        if (others > 0) t = t - others > 1 ? t - others : 1;
    }
    return t;
}
