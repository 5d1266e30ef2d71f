/* workpool.c - threads a context keeps for its tiled calls (see workpool.h). */
#include "workpool.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#ifndef _WIN32
#include <unistd.h> /* getpid */
#endif

/* One thread's place: its index in the jobs, and the job it last saw. */
typedef struct pool_slot {
    iwpp_workpool *pool;
    int index;
    unsigned long seen;
} pool_slot;

struct iwpp_workpool {
    pthread_mutex_t m;
    pthread_cond_t go;   /* a new job, or quit */
    pthread_cond_t done; /* busy fell to 0 */
    pthread_t *th;
    pool_slot **slot;
    int n, cap;         /* threads started; room in th and slot */
    unsigned long job;  /* bumped for each job */
    void *(*fn)(void *);
    void *const *args;  /* the job's arguments (the caller's array, alive until the wait) */
    int njob;           /* threads 0 .. njob - 1 take part */
    int busy;           /* of those, the ones still in fn */
    int quit;
#ifndef _WIN32
    pid_t pid; /* the process whose threads these are (a forked child has none of them) */
#endif
};

static void *pool_main(void *arg)
{
    pool_slot *sl = (pool_slot *)arg;
    iwpp_workpool *p = sl->pool;
    pthread_mutex_lock(&p->m);
    for (;;) {
        while (!p->quit && p->job == sl->seen) pthread_cond_wait(&p->go, &p->m);
        if (p->quit) break;
        sl->seen = p->job;
        if (sl->index >= p->njob) continue;
        void *(*fn)(void *) = p->fn;
        void *a = p->args[sl->index];
        pthread_mutex_unlock(&p->m);
        fn(a);
        pthread_mutex_lock(&p->m);
        if (--p->busy == 0) pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->m);
    return NULL;
}

static iwpp_workpool *pool_new(void)
{
    iwpp_workpool *p = (iwpp_workpool *)calloc(1, sizeof *p);
    if (!p) return NULL;
    if (pthread_mutex_init(&p->m, NULL) != 0) {
        free(p);
        return NULL;
    }
    if (pthread_cond_init(&p->go, NULL) != 0) {
        pthread_mutex_destroy(&p->m);
        free(p);
        return NULL;
    }
    if (pthread_cond_init(&p->done, NULL) != 0) {
        pthread_cond_destroy(&p->go);
        pthread_mutex_destroy(&p->m);
        free(p);
        return NULL;
    }
#ifndef _WIN32
    p->pid = getpid();
#endif
    return p;
}

/* Whether *pool is a parent's, inherited through fork(): its threads are not in this process
 * (and its lock may have been held by one of them). Then it is left as it is (its memory is
 * not ours to reuse safely) and a new pool takes its place. */
static void pool_check_fork(iwpp_workpool **pool)
{
#ifndef _WIN32
    if (*pool && (*pool)->pid != getpid()) *pool = NULL;
#else
    (void)pool;
#endif
}

/* Under p->m: threads up to n (fewer where one cannot start). They start with every signal
 * blocked but those a fault raises (a crash still reaches the JVM's or a sanitizer's handler);
 * the threads they make (OpenMP teams for their copies) inherit that. */
static void pool_grow(iwpp_workpool *p, int n)
{
    if (n > p->cap) {
        pthread_t *th = (pthread_t *)realloc(p->th, (size_t)n * sizeof *th);
        if (th) p->th = th;
        pool_slot **sl = (pool_slot **)realloc(p->slot, (size_t)n * sizeof *sl);
        if (sl) p->slot = sl;
        if (!th || !sl) return;
        p->cap = n;
    }
#ifndef _WIN32
    sigset_t all, old;
    sigfillset(&all);
    static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; ++i) sigdelset(&all, faults[i]);
    const int masked = pthread_sigmask(SIG_SETMASK, &all, &old) == 0;
#endif
    while (p->n < n) {
        pool_slot *s = (pool_slot *)malloc(sizeof *s);
        if (!s) break;
        s->pool = p;
        s->index = p->n;
        s->seen = p->job; /* the next job is its first */
        if (pthread_create(&p->th[p->n], NULL, pool_main, s) != 0) {
            free(s);
            break;
        }
        p->slot[p->n++] = s;
    }
#ifndef _WIN32
    if (masked) pthread_sigmask(SIG_SETMASK, &old, NULL);
#endif
}

int iwpp_workpool_ready(iwpp_workpool **pool, int n)
{
    pool_check_fork(pool);
    if (!*pool && !(*pool = pool_new())) return 0;
    iwpp_workpool *p = *pool;
    pthread_mutex_lock(&p->m);
    pool_grow(p, n);
    const int have = p->n;
    pthread_mutex_unlock(&p->m);
    return have;
}

int iwpp_workpool_run(iwpp_workpool **pool, int n, void *(*fn)(void *), void *const *args)
{
    if (n <= 0) return 0;
    pool_check_fork(pool);
    if (!*pool && !(*pool = pool_new())) return 0;
    iwpp_workpool *p = *pool;
    pthread_mutex_lock(&p->m);
    while (p->busy > 0) pthread_cond_wait(&p->done, &p->m); /* (one job at a time) */
    pool_grow(p, n);
    p->fn = fn;
    p->args = args;
    p->njob = n < p->n ? n : p->n;
    p->busy = p->njob;
    p->job++;
    pthread_cond_broadcast(&p->go);
    const int started = p->njob;
    pthread_mutex_unlock(&p->m);
    return started;
}

void iwpp_workpool_wait(iwpp_workpool *p)
{
    if (!p) return;
#ifndef _WIN32
    if (p->pid != getpid()) return; /* a parent's: nothing of it runs here */
#endif
    pthread_mutex_lock(&p->m);
    while (p->busy > 0) pthread_cond_wait(&p->done, &p->m);
    pthread_mutex_unlock(&p->m);
}

void iwpp_workpool_free(iwpp_workpool *p)
{
    if (!p) return;
#ifndef _WIN32
    if (p->pid != getpid()) return; /* a parent's (fork): no thread to end, its lock not ours */
#endif
    iwpp_workpool_wait(p);
    pthread_mutex_lock(&p->m);
    p->quit = 1;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->m);
    for (int k = 0; k < p->n; ++k) {
        pthread_join(p->th[k], NULL);
        free(p->slot[k]);
    }
    free(p->th);
    free(p->slot);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->go);
    pthread_mutex_destroy(&p->m);
    free(p);
}

int iwpp_workpool_threads(const iwpp_workpool *p) { return p ? p->n : 0; }
