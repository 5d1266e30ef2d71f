/*
 * test_openmp.c - the OpenMP constructs the library uses, against the runtime it is linked
 * with: the compiler's libgomp in the normal build, native/compat/minigomp.c in the builds
 * that go into the jar (IWPP_OPENMP_RUNTIME=minigomp; the cross suites run this under qemu
 * and wine). Each loop iteration must run exactly once, whatever the schedule, loop type,
 * direction and team size; single runs once, critical and atomic serialise, regions opened
 * from several threads at once keep their own teams.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>
#include <omp.h>

enum { N = 20011 };

/* Runs the constructs on a team of nt threads; returns the number of wrong counts. */
static long run_constructs(int nt)
{
    int *hit = calloc(N, sizeof *hit);
    if (!hit) return -1;
    long singles = 0, crit = 0, sizes = 0, bad = 0;
#pragma omp parallel num_threads(nt)
    {
#pragma omp for schedule(dynamic, 7) nowait
        for (int i = 0; i < N; i++) __atomic_fetch_add(&hit[i], 1, __ATOMIC_RELAXED);
#pragma omp for schedule(dynamic, 3)
        for (int i = N - 1; i >= 0; i -= 2) __atomic_fetch_add(&hit[i], 1, __ATOMIC_RELAXED);
#pragma omp for schedule(guided) nowait
        for (int64_t i = 0; i < N; i += 3) __atomic_fetch_add(&hit[i], 1, __ATOMIC_RELAXED);
#pragma omp for schedule(dynamic, 5) nowait
        for (unsigned long long i = 1; i < N; i += 4) __atomic_fetch_add(&hit[i], 1, __ATOMIC_RELAXED);
#pragma omp for schedule(dynamic, 2)
        for (int64_t i = N - 1; i > 0; i -= 5) __atomic_fetch_add(&hit[i], 1, __ATOMIC_RELAXED);
#pragma omp single
        singles++;
#pragma omp critical(iwpp_test_name)
        crit++;
#pragma omp atomic
        sizes += omp_get_num_threads();
        /* more loops than a runtime may keep in flight, each without a barrier */
        for (int r = 0; r < 40; r++) {
#pragma omp for schedule(dynamic, 16) nowait
            for (int i = 0; i < 1000; i++) __atomic_fetch_add(&hit[i], 1, __ATOMIC_RELAXED);
        }
#pragma omp barrier
        /* a nested region runs (with nesting off: one thread) */
#pragma omp parallel num_threads(2)
        {
#pragma omp atomic
            crit += 1000;
        }
    }
#pragma omp parallel for schedule(dynamic, 5) num_threads(nt)
    for (int i = 0; i < N; i++) __atomic_fetch_add(&hit[i], 1, __ATOMIC_RELAXED);
    for (int i = 0; i < N; i++) {
        int want = 2 + ((N - 1 - i) % 2 == 0) + (i % 3 == 0) + (i % 4 == 1) +
                   (i > 0 && (N - 1 - i) % 5 == 0) + (i < 1000 ? 40 : 0);
        if (hit[i] != want) bad++;
    }
    free(hit);
    if (singles != 1) bad++;
    /* nested regions: one thread each unless the runtime nests (libgomp's default does not) */
    if (crit % 1000 != nt || crit / 1000 < nt) bad++;
    if (sizes != (long)nt * nt) bad++;
    return bad;
}

static void test_team_sizes(void **state)
{
    (void)state;
    for (int nt = 1; nt <= 7; nt++) assert_int_equal(run_constructs(nt), 0);
}

static void *other_thread(void *p)
{
    long bad = 0;
    for (int k = 0; k < 10; k++) bad += run_constructs(3);
    *(long *)p = bad;
    return NULL;
}

static void test_concurrent_regions(void **state)
{
    (void)state;
    pthread_t t[2];
    long bad[2] = {-1, -1};
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&t[i], NULL, other_thread, &bad[i]), 0);
    long mine = run_constructs(2);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    assert_int_equal(mine, 0);
    assert_int_equal(bad[0], 0);
    assert_int_equal(bad[1], 0);
}

static void test_queries(void **state)
{
    (void)state;
    assert_true(omp_get_num_procs() >= 1);
    assert_true(omp_get_max_threads() >= 1);
    assert_int_equal(omp_get_thread_num(), 0);
    assert_int_equal(omp_get_num_threads(), 1);
    int seen[4] = {0, 0, 0, 0};
#pragma omp parallel num_threads(4)
    {
        int id = omp_get_thread_num();
        if (id >= 0 && id < 4) __atomic_fetch_add(&seen[id], 1, __ATOMIC_RELAXED);
    }
    for (int i = 0; i < 4; i++) assert_int_equal(seen[i], 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queries),
        cmocka_unit_test(test_team_sizes),
        cmocka_unit_test(test_concurrent_regions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
