/*
 * minigomp.c - a small OpenMP runtime with GCC's libgomp entry points, for the
 * libraries that ship in the plugin jar (IWPP_OPENMP_RUNTIME=minigomp).
 *
 * Why: GCC's libgomp.a is built as position-dependent code with local-exec TLS
 * and cannot go into a shared library, and libgomp.so.1 would be one more
 * system library (of a newer glibc) for the jar's libraries to need. The code
 * compiled with gcc -fopenmp calls only a handful of GOMP_* functions; this
 * file implements them over POSIX threads (winpthreads on Windows), so the
 * OpenMP parallelism is linked into the library itself.
 *
 * What is there: parallel regions (members from a pool of idle threads; a
 * region opened inside a team runs on one thread, as with nesting off),
 * barriers, single, critical (unnamed and named), atomic, worksharing loops
 * with dynamic, guided, runtime and static schedules (handed out in chunks
 * from a shared counter: every schedule gives each iteration to exactly one
 * thread, which is all that OpenMP promises for non-static schedules; gcc
 * inlines schedule(static) loops and does not call in here for them),
 * omp_get_thread_num/num_threads/max_threads/num_procs, omp_set_num_threads,
 * omp_in_parallel. A GOMP_* function the code starts to use and that is not
 * here makes the library's link fail (it is linked with --no-undefined).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <windows.h>
#else
#include <sched.h>
#include <unistd.h>
#endif

#define EXPORT /* visibility stays hidden: only this library's own objects call these */

enum { WS_SLOTS = 16 }; /* loops a thread may run ahead of the slowest one (nowait) */

typedef struct {
    long gen;  /* which loop of the region this slot holds (-1: none yet) */
    int done;  /* threads that have left that loop */
    unsigned long long n, chunk; /* iteration count, iterations per hand-out */
    unsigned long long next;     /* next iteration number to hand out (atomic) */
    unsigned long long start, incr; /* first value and step, as the loop's type bits */
} ws_slot;

typedef struct team {
    int nthreads;
    pthread_mutex_t lock;
    pthread_cond_t cond;     /* barrier and work-share slot hand-over */
    int barrier_count;
    unsigned long barrier_gen;
    unsigned long single_count; /* singles claimed so far (atomic) */
    ws_slot slots[WS_SLOTS];
    int finished; /* members done with the region */
    void (*fn)(void *);
    void *data;
} team;

typedef struct {
    team *t;
    int id;
    unsigned long singles; /* single constructs met so far */
    long ws_gen;           /* loops met so far */
    ws_slot *ws;           /* the loop this thread is in */
} thread_state;

static _Thread_local thread_state tls;
static int g_default_threads; /* omp_set_num_threads / OMP_NUM_THREADS; 0: not read yet */
static pthread_mutex_t g_atomic_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_critical_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_names_lock = PTHREAD_MUTEX_INITIALIZER;

EXPORT int omp_get_num_procs(void)
{
#ifdef _WIN32
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    return si.dwNumberOfProcessors > 0 ? (int)si.dwNumberOfProcessors : 1;
#else
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (n > INT_MAX ? INT_MAX : (int)n) : 1;
#endif
}

EXPORT int omp_get_max_threads(void)
{
    int d = __atomic_load_n(&g_default_threads, __ATOMIC_RELAXED);
    if (d > 0) return d;
    const char *env = getenv("OMP_NUM_THREADS");
    long v = env ? strtol(env, NULL, 10) : 0;
    d = v > 0 && v < 4096 ? (int)v : omp_get_num_procs();
    __atomic_store_n(&g_default_threads, d, __ATOMIC_RELAXED);
    return d;
}

EXPORT void omp_set_num_threads(int n)
{
    if (n > 0) __atomic_store_n(&g_default_threads, n, __ATOMIC_RELAXED);
}

EXPORT int omp_get_thread_num(void) { return tls.t ? tls.id : 0; }
EXPORT int omp_get_num_threads(void) { return tls.t ? tls.t->nthreads : 1; }
EXPORT int omp_in_parallel(void) { return tls.t && tls.t->nthreads > 1; }

/* ---------------------------------------------------------------- barrier */

static void team_barrier(team *t)
{
    if (t->nthreads == 1) return;
    pthread_mutex_lock(&t->lock);
    unsigned long gen = t->barrier_gen;
    if (++t->barrier_count == t->nthreads) {
        t->barrier_count = 0;
        t->barrier_gen++;
        pthread_cond_broadcast(&t->cond);
    } else {
        while (gen == t->barrier_gen) pthread_cond_wait(&t->cond, &t->lock);
    }
    pthread_mutex_unlock(&t->lock);
}

EXPORT void GOMP_barrier(void)
{
    if (tls.t) team_barrier(tls.t);
}

/* ------------------------------------------------------- parallel regions */

/* Team members come from a pool of idle threads (a new thread only when none is idle):
   starting a thread for every region cost about 5x libgomp's region overhead. */
typedef struct worker {
    pthread_cond_t wake;
    team *t; /* the job: NULL while idle */
    int id;
    struct worker *next_idle;
} worker;

enum { POOL_MAX_IDLE = 256 };
static pthread_mutex_t g_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static worker *g_idle;
static int g_nidle;

static void member_run(team *t, int id)
{
    tls.t = t;
    tls.id = id;
    tls.singles = 0;
    tls.ws_gen = 0;
    tls.ws = NULL;
    t->fn(t->data);
    tls.t = NULL;
    /* the last touch of the team: the master frees it once every member said so */
    pthread_mutex_lock(&t->lock);
    if (++t->finished == t->nthreads - 1) pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->lock);
}

static void *worker_main(void *p)
{
    worker *w = p;
    pthread_mutex_lock(&g_pool_lock);
    for (;;) {
        while (!w->t) pthread_cond_wait(&w->wake, &g_pool_lock);
        team *t = w->t;
        int id = w->id;
        pthread_mutex_unlock(&g_pool_lock);
        member_run(t, id);
        pthread_mutex_lock(&g_pool_lock);
        w->t = NULL;
        if (g_nidle >= POOL_MAX_IDLE) break;
        w->next_idle = g_idle;
        g_idle = w;
        g_nidle++;
    }
    pthread_mutex_unlock(&g_pool_lock);
    pthread_cond_destroy(&w->wake);
    free(w);
    return NULL;
}

#ifndef _WIN32
/* A child of fork() has none of the parent's pool threads: it starts an empty pool. */
static void pool_after_fork(void)
{
    g_idle = NULL;
    g_nidle = 0;
    pthread_mutex_init(&g_pool_lock, NULL);
}
static pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;
static void pool_register_fork(void) { pthread_atfork(NULL, NULL, pool_after_fork); }
#endif

/* An idle worker, or a new one; NULL if none can be had. Called with g_pool_lock held. */
static worker *pool_take(void)
{
    worker *w = g_idle;
    if (w) {
        g_idle = w->next_idle;
        g_nidle--;
        return w;
    }
    w = calloc(1, sizeof *w);
    if (!w) return NULL;
    pthread_cond_init(&w->wake, NULL);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)8 << 20); /* as Linux's default, everywhere */
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t th;
    int rc = pthread_create(&th, &attr, worker_main, w);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        pthread_cond_destroy(&w->wake);
        free(w);
        return NULL;
    }
    return w;
}

static void run_team(void (*fn)(void *), void *data, unsigned num_threads,
                     void (*setup)(team *, void *), void *setup_arg)
{
    int n = num_threads ? (int)num_threads : omp_get_max_threads();
    if (tls.t && tls.t->nthreads > 1) n = 1; /* nested region: one thread */
    if (n > 4096) n = 4096;
    thread_state saved = tls;

    team one;
    team *t = n > 1 ? calloc(1, sizeof *t) : NULL;
    if (!t) {
        memset(&one, 0, sizeof one); /* one thread (or out of memory): no allocation */
        t = &one;
        n = 1;
    }
    t->fn = fn;
    t->data = data;
    for (int i = 0; i < WS_SLOTS; ++i) t->slots[i].gen = -1;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->cond, NULL);
    if (setup) setup(t, setup_arg);

    if (n > 1) {
        /* Take the members first, so that the team's size is final (barriers count on
           it) before any of them starts; fewer threads than asked if no more can start. */
        worker *members[64], **m = members;
        if (n - 1 > 64 && !(m = malloc(sizeof *m * (size_t)(n - 1)))) n = 1;
        int got = 0;
#ifndef _WIN32
        pthread_once(&g_atfork_once, pool_register_fork);
#endif
        pthread_mutex_lock(&g_pool_lock);
        while (got < n - 1 && (m[got] = pool_take()) != NULL) got++;
        t->nthreads = got + 1;
        for (int i = 0; i < got; ++i) {
            m[i]->t = t;
            m[i]->id = i + 1;
            pthread_cond_signal(&m[i]->wake);
        }
        pthread_mutex_unlock(&g_pool_lock);
        if (m != members) free(m);
    } else {
        t->nthreads = 1;
    }

    tls.t = t;
    tls.id = 0;
    tls.singles = 0;
    tls.ws_gen = 0;
    tls.ws = NULL;
    fn(data);
    if (t->nthreads > 1) {
        pthread_mutex_lock(&t->lock);
        while (t->finished < t->nthreads - 1) pthread_cond_wait(&t->cond, &t->lock);
        pthread_mutex_unlock(&t->lock);
    }
    tls = saved;
    pthread_cond_destroy(&t->cond);
    pthread_mutex_destroy(&t->lock);
    if (t != &one) free(t);
}

EXPORT void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags)
{
    (void)flags;
    run_team(fn, data, num_threads, NULL, NULL);
}

/* ------------------------------------------------------------------ single */

EXPORT bool GOMP_single_start(void)
{
    team *t = tls.t;
    if (!t || t->nthreads == 1) return true;
    unsigned long mine = tls.singles++;
    return __atomic_compare_exchange_n(&t->single_count, &mine, mine + 1, false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
}

/* ---------------------------------------------------------------- critical */

EXPORT void GOMP_critical_start(void) { pthread_mutex_lock(&g_critical_lock); }
EXPORT void GOMP_critical_end(void) { pthread_mutex_unlock(&g_critical_lock); }
EXPORT void GOMP_atomic_start(void) { pthread_mutex_lock(&g_atomic_lock); }
EXPORT void GOMP_atomic_end(void) { pthread_mutex_unlock(&g_atomic_lock); }

/* A named critical section: gcc passes the address of a pointer-sized variable
   of that name (zero at first); it comes to hold the name's own mutex. */
static pthread_mutex_t *named_lock(void **pptr)
{
    pthread_mutex_t *m = __atomic_load_n((pthread_mutex_t **)pptr, __ATOMIC_ACQUIRE);
    if (m) return m;
    pthread_mutex_lock(&g_names_lock);
    m = *(pthread_mutex_t **)pptr;
    if (!m) {
        m = malloc(sizeof *m);
        if (m) {
            pthread_mutex_init(m, NULL);
            __atomic_store_n((pthread_mutex_t **)pptr, m, __ATOMIC_RELEASE);
        } else {
            m = &g_critical_lock; /* out of memory: one lock for all names */
        }
    }
    pthread_mutex_unlock(&g_names_lock);
    return m;
}

EXPORT void GOMP_critical_name_start(void **pptr) { pthread_mutex_lock(named_lock(pptr)); }
EXPORT void GOMP_critical_name_end(void **pptr) { pthread_mutex_unlock(named_lock(pptr)); }

/* ------------------------------------------------------ worksharing loops */

/* Each thread counts the loops it meets; the k-th loop of the region lives in
   slot k % WS_SLOTS. The first thread to meet it fills the slot, once the
   slot's previous loop has been left by every thread. */
static ws_slot *ws_enter(team *t, void (*fill)(ws_slot *, const void *), const void *arg)
{
    long k = tls.ws_gen++;
    ws_slot *s = &t->slots[k % WS_SLOTS];
    pthread_mutex_lock(&t->lock);
    while (s->gen != k) {
        if (s->gen < k && (s->gen < 0 || s->done == t->nthreads)) {
            fill(s, arg);
            s->gen = k;
            s->done = 0;
            break;
        }
        pthread_cond_wait(&t->cond, &t->lock);
    }
    pthread_mutex_unlock(&t->lock);
    tls.ws = s;
    return s;
}

static void ws_leave(bool wait)
{
    team *t = tls.t;
    if (!t) return;
    ws_slot *s = tls.ws;
    tls.ws = NULL;
    if (s) {
        pthread_mutex_lock(&t->lock);
        if (++s->done == t->nthreads) pthread_cond_broadcast(&t->cond);
        pthread_mutex_unlock(&t->lock);
    }
    if (wait) team_barrier(t);
}

/* A loop as gcc describes it, reduced to its iteration count; values of type long
   or unsigned long long are kept as 64-bit patterns (start + i * incr wraps right). */
typedef struct {
    unsigned long long n, start, incr, chunk;
} loop_desc;

static unsigned long long count_up(unsigned long long start, unsigned long long end,
                                   unsigned long long step)
{
    return end > start && step ? (end - start + step - 1) / step : 0;
}

static void fill_loop(ws_slot *s, const void *p)
{
    const loop_desc *l = p;
    s->n = l->n;
    s->start = l->start;
    s->incr = l->incr;
    s->chunk = l->chunk > 0 ? l->chunk : 1;
    s->next = 0;
}

/* The next chunk, as 64-bit patterns of [istart, iend). */
static bool next_chunk(unsigned long long *istart, unsigned long long *iend)
{
    /* Members of a `parallel for` region (GOMP_parallel_loop_*) find the loop
       already in slot 0 and call only *_next: their first call picks it up. */
    if (!tls.ws && tls.t && tls.ws_gen == 0 && tls.t->slots[0].gen == 0) {
        tls.ws_gen = 1;
        tls.ws = &tls.t->slots[0];
    }
    ws_slot *s = tls.ws;
    if (!s) return false;
    unsigned long long i0 = __atomic_fetch_add(&s->next, s->chunk, __ATOMIC_RELAXED);
    if (i0 >= s->n) return false;
    unsigned long long i1 = s->n - i0 > s->chunk ? i0 + s->chunk : s->n;
    *istart = s->start + i0 * s->incr;
    *iend = s->start + i1 * s->incr;
    return true;
}

static loop_desc long_desc(long start, long end, long incr, long chunk)
{
    typedef unsigned long long u;
    loop_desc l = {0, (u)start, (u)incr, chunk > 0 ? (u)chunk : 1};
    /* distances in unsigned arithmetic: a signed difference could overflow */
    if (incr > 0 && end > start) l.n = count_up(0, (u)end - (u)start, (u)incr);
    if (incr < 0 && end < start) l.n = count_up(0, (u)start - (u)end, 0 - (u)incr);
    return l;
}

static loop_desc ull_desc(bool up, unsigned long long start, unsigned long long end,
                          unsigned long long incr, unsigned long long chunk)
{
    loop_desc l = {0, start, incr, chunk > 0 ? chunk : 1};
    l.n = up ? count_up(start, end, incr) : count_up(end, start, 0 - incr);
    return l;
}

static void enter_loop(const loop_desc *l)
{
    if (!tls.t) {
        /* Orphaned loop outside any region: this thread is the whole team. */
        static _Thread_local team solo;
        solo.nthreads = 1;
        tls.t = &solo;
        for (int i = 0; i < WS_SLOTS; ++i) solo.slots[i].gen = -1;
        tls.ws_gen = 0;
        pthread_mutex_init(&solo.lock, NULL);
        pthread_cond_init(&solo.cond, NULL);
    }
    ws_enter(tls.t, fill_loop, l);
}

static bool next_long(long *istart, long *iend)
{
    unsigned long long a, b;
    if (!next_chunk(&a, &b)) return false;
    *istart = (long)a;
    *iend = (long)b;
    return true;
}

static bool start_long(long start, long end, long incr, long chunk, long *istart, long *iend)
{
    loop_desc l = long_desc(start, end, incr, chunk);
    enter_loop(&l);
    return next_long(istart, iend);
}

static bool start_ull(bool up, unsigned long long start, unsigned long long end,
                      unsigned long long incr, unsigned long long chunk, unsigned long long *istart,
                      unsigned long long *iend)
{
    loop_desc l = ull_desc(up, start, end, incr, chunk);
    enter_loop(&l);
    return next_chunk(istart, iend);
}

#define LONG_LOOP(kind)                                                                           \
    EXPORT bool GOMP_loop_##kind##_start(long start, long end, long incr, long chunk, long *istart, \
                                         long *iend)                                              \
    {                                                                                             \
        return start_long(start, end, incr, chunk, istart, iend);                                 \
    }                                                                                             \
    EXPORT bool GOMP_loop_##kind##_next(long *istart, long *iend) { return next_long(istart, iend); }
LONG_LOOP(dynamic)
LONG_LOOP(nonmonotonic_dynamic)
LONG_LOOP(guided)
LONG_LOOP(nonmonotonic_guided)
LONG_LOOP(static)
#undef LONG_LOOP

/* Loops whose variable is unsigned or wider than long (int64_t on Windows). */
#define ULL_LOOP(kind)                                                                            \
    EXPORT bool GOMP_loop_ull_##kind##_start(bool up, unsigned long long start,                   \
                                             unsigned long long end, unsigned long long incr,     \
                                             unsigned long long chunk, unsigned long long *istart, \
                                             unsigned long long *iend)                            \
    {                                                                                             \
        return start_ull(up, start, end, incr, chunk, istart, iend);                              \
    }                                                                                             \
    EXPORT bool GOMP_loop_ull_##kind##_next(unsigned long long *istart, unsigned long long *iend) \
    {                                                                                             \
        return next_chunk(istart, iend);                                                          \
    }
ULL_LOOP(dynamic)
ULL_LOOP(nonmonotonic_dynamic)
ULL_LOOP(guided)
ULL_LOOP(nonmonotonic_guided)
ULL_LOOP(static)
#undef ULL_LOOP

EXPORT bool GOMP_loop_runtime_start(long start, long end, long incr, long *istart, long *iend)
{
    return start_long(start, end, incr, 1, istart, iend);
}
EXPORT bool GOMP_loop_runtime_next(long *istart, long *iend) { return next_long(istart, iend); }
EXPORT bool GOMP_loop_maybe_nonmonotonic_runtime_start(long start, long end, long incr, long *istart,
                                                       long *iend)
{
    return start_long(start, end, incr, 1, istart, iend);
}
EXPORT bool GOMP_loop_maybe_nonmonotonic_runtime_next(long *istart, long *iend)
{
    return next_long(istart, iend);
}
EXPORT bool GOMP_loop_nonmonotonic_runtime_start(long start, long end, long incr, long *istart,
                                                 long *iend)
{
    return start_long(start, end, incr, 1, istart, iend);
}
EXPORT bool GOMP_loop_nonmonotonic_runtime_next(long *istart, long *iend)
{
    return next_long(istart, iend);
}

static void orphan_done(void)
{
    /* the solo team of an orphaned loop ends with its loop */
    if (tls.t && tls.t->fn == NULL && tls.t->nthreads == 1 && tls.ws == NULL) {
        pthread_cond_destroy(&tls.t->cond);
        pthread_mutex_destroy(&tls.t->lock);
        tls.t = NULL;
    }
}

EXPORT void GOMP_loop_end(void)
{
    ws_leave(true);
    orphan_done();
}
EXPORT void GOMP_loop_end_nowait(void)
{
    ws_leave(false);
    orphan_done();
}
EXPORT bool GOMP_loop_end_cancel(void)
{
    ws_leave(true);
    orphan_done();
    return false;
}

/* `#pragma omp parallel for schedule(dynamic|guided|runtime)`: gcc opens the
   region with its loop already set up; each member then calls only *_next. */
static void setup_par_loop(team *t, void *p)
{
    fill_loop(&t->slots[0], p);
    t->slots[0].gen = 0;
    t->slots[0].done = 0;
}

static void run_parallel_loop(void (*fn)(void *), void *data, unsigned num_threads, long start,
                              long end, long incr, long chunk)
{
    loop_desc l = long_desc(start, end, incr, chunk);
    run_team(fn, data, num_threads, setup_par_loop, &l);
}

#define PAR_LOOP(kind)                                                                             \
    EXPORT void GOMP_parallel_loop_##kind(void (*fn)(void *), void *data, unsigned num_threads,    \
                                          long start, long end, long incr, long chunk,             \
                                          unsigned flags)                                          \
    {                                                                                              \
        (void)flags;                                                                               \
        run_parallel_loop(fn, data, num_threads, start, end, incr, chunk);                         \
    }
PAR_LOOP(dynamic)
PAR_LOOP(nonmonotonic_dynamic)
PAR_LOOP(guided)
PAR_LOOP(nonmonotonic_guided)
PAR_LOOP(static)
#undef PAR_LOOP
EXPORT void GOMP_parallel_loop_runtime(void (*fn)(void *), void *data, unsigned num_threads,
                                       long start, long end, long incr, unsigned flags)
{
    (void)flags;
    run_parallel_loop(fn, data, num_threads, start, end, incr, 1);
}
