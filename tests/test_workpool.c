/*
 * test_workpool.c - the threads a context keeps for its tiled calls (native/workpool.c), no
 * backend: every job reaches each of its threads once and only its threads, jobs back to back
 * lose no call, the threads block the host's signals (a JVM's stay on its own threads) but not
 * a fault's, a forked child's jobs run, and freeing the pool ends its threads. Then through the public API: a tiled call leaves its threads
 * parked for the next one, and destroying the context ends them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "harness.h"
#include "workpool.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <dirent.h>
#endif
#ifndef _WIN32
#include <sys/wait.h>
#include <unistd.h>
#endif

typedef struct job {
    atomic_int calls;
    int blocked; /* every signal we test was blocked in the thread that ran it */
    atomic_int *total;
} job;

static void *count_call(void *arg)
{
    job *j = (job *)arg;
    atomic_fetch_add(&j->calls, 1);
    if (j->total) atomic_fetch_add(j->total, 1);
#ifndef _WIN32
    sigset_t cur;
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    /* the host's signals blocked; not those a fault raises (a crash reaches its handler) */
    j->blocked = sigismember(&cur, SIGINT) == 1 && sigismember(&cur, SIGQUIT) == 1 &&
                 sigismember(&cur, SIGUSR2) == 1 && sigismember(&cur, SIGTERM) == 1 &&
                 sigismember(&cur, SIGSEGV) == 0 && sigismember(&cur, SIGBUS) == 0 &&
                 sigismember(&cur, SIGFPE) == 0 && sigismember(&cur, SIGILL) == 0;
#else
    j->blocked = 1;
#endif
    return NULL;
}

/* Threads of this process (Linux; -1 elsewhere). */
static int process_threads(void)
{
#if defined(__linux__)
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') ++n;
    closedir(d);
    return n;
#else
    return -1;
#endif
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The thread count once it is @p want, or after 5 s of waiting for it: a joined thread can stay
 * listed a little while (qemu-user's threads do), a new one is listed at once. */
static int threads_settled(int want)
{
    int n = process_threads();
    for (int i = 0; i < 500 && n != want && n >= 0; ++i) {
        nap_ms(10);
        n = process_threads();
    }
    return n;
}

/* The thread count once it holds still for 20 ms (at most 5 s). */
static int threads_steady(void)
{
    int n = process_threads();
    for (int i = 0; i < 250 && n >= 0; ++i) {
        nap_ms(20);
        const int m = process_threads();
        if (m == n) break;
        n = m;
    }
    return n;
}

static void *nothing(void *arg) { return arg; }

static void test_jobs(void **state)
{
    (void)state;
    /* a thread made and ended first: a sanitizer's own thread starts with the first one */
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, nothing, NULL), 0);
    pthread_join(t, NULL);
    const int before = threads_steady();
    iwpp_workpool *pool = NULL;
    enum { N = 12 };
    job jobs[N];
    void *args[N];
    for (int i = 0; i < N; ++i) args[i] = &jobs[i];

    /* 12 threads, then 5 of them, then 12 again: each job's calls reach its own threads once */
    const int sizes[] = {N, 5, 1, N, 3};
    for (size_t r = 0; r < sizeof sizes / sizeof sizes[0]; ++r) {
        memset(jobs, 0, sizeof jobs);
        assert_int_equal(iwpp_workpool_ready(&pool, sizes[r]), N); /* (it keeps what it made) */
        assert_int_equal(iwpp_workpool_run(&pool, sizes[r], count_call, args), sizes[r]);
        iwpp_workpool_wait(pool);
        for (int i = 0; i < N; ++i) {
            assert_int_equal(atomic_load(&jobs[i].calls), i < sizes[r] ? 1 : 0);
            if (i < sizes[r]) assert_true(jobs[i].blocked);
        }
        assert_int_equal(iwpp_workpool_threads(pool), N);
    }
    if (before >= 0) assert_int_equal(threads_settled(before + N), before + N);

    /* back to back, without a wait between: a job waits for the one before (no call lost) */
    atomic_int total = 0;
    memset(jobs, 0, sizeof jobs);
    for (int i = 0; i < N; ++i) jobs[i].total = &total;
    for (int r = 0; r < 2000; ++r) iwpp_workpool_run(&pool, 1 + r % N, count_call, args);
    iwpp_workpool_wait(pool);
    int want = 0;
    for (int r = 0; r < 2000; ++r) want += 1 + r % N;
    assert_int_equal(atomic_load(&total), want);

#if !defined(_WIN32) && !defined(IWPP_TEST_UNDER_EMULATOR) && !defined(__SANITIZE_THREAD__)
    /* a forked child inherits the pool but none of its threads: its jobs still run (on a new
       pool), within 20 s, and freeing the parent's pool there neither hangs nor crashes (not
       under qemu-user, which aborts a threaded process's fork, nor ThreadSanitizer, which
       refuses threads after one) */
    fflush(NULL);
    const pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        alarm(20);
        iwpp_workpool *mine = pool;
        memset(jobs, 0, sizeof jobs);
        for (int i = 0; i < N; ++i) jobs[i].total = NULL;
        const int ran = iwpp_workpool_run(&mine, 4, count_call, args);
        iwpp_workpool_wait(mine);
        int ok = ran == 4 && mine != pool;
        for (int i = 0; i < 4; ++i) ok = ok && atomic_load(&jobs[i].calls) == 1;
        iwpp_workpool_free(mine);
        iwpp_workpool_free(pool);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
#endif
    iwpp_workpool_free(pool);
    if (before >= 0) assert_int_equal(threads_settled(before), before);
    iwpp_workpool_free(NULL);
    assert_int_equal(iwpp_workpool_threads(NULL), 0);
}

/* A tiled reconstruction's threads stay for the next call, and go with the context. */
static void test_tiled_calls_keep_threads(void **state)
{
    (void)state;
    const int64_t w = 300, h = 260;
    iwpp_context *ctx = NULL;
    assert_int_equal(iwpp_context_create(&ctx, IWPP_BACKEND_CPU), IWPP_OK);
    assert_int_equal(iwpp_context_set_threads(ctx, 2), IWPP_OK);
    uint8_t *I = malloc((size_t)(w * h)), *J = malloc((size_t)(w * h));
    assert_non_null(I);
    assert_non_null(J);
    iwpp_image mask = iwpp_image_2d(I, IWPP_U8, w, h), marker = iwpp_image_2d(J, IWPP_U8, w, h);
    for (int64_t i = 0; i < w * h; ++i) I[i] = (uint8_t)(40 + (i * 7919 % 200)), J[i] = 0;
    J[0] = 255;
    /* an in-memory call first: the process's other threads (OpenMP's) exist before we count */
    assert_int_equal(iwpp_reconstruct(ctx, &marker, &mask, 8, IWPP_BY_DILATION), IWPP_OK);
    const int before = threads_steady();
    assert_int_equal(iwpp_context_set_workers(ctx, "cpu*3"), IWPP_OK);
    for (int call = 0; call < 3; ++call) {
        memset(J, 0, (size_t)(w * h));
        J[0] = 255;
        assert_int_equal(iwpp_reconstruct(ctx, &marker, &mask, 8, IWPP_BY_DILATION), IWPP_OK);
        iwpp_stats st;
        assert_int_equal(iwpp_context_stats(ctx, &st), IWPP_OK);
        assert_true(st.tiles > 0);
        /* the same threads for every call: no more after the third than after the first */
        if (before >= 0) {
            static int after_first = -1;
            const int now = process_threads();
            assert_true(now > before);
            if (call == 0) after_first = now;
            assert_int_equal(now, after_first);
        }
    }
    iwpp_context_destroy(ctx);
    if (before >= 0) assert_true(threads_settled(before) <= before);
    free(J);
    free(I);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jobs),
        cmocka_unit_test(test_tiled_calls_keep_threads),
    };
    harness_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
