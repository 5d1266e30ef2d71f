/*
 * cpu_probe - how this machine's cores scale, to read the CPU benchmark's
 * parallel efficiency against. For 1, 2, 4, ... threads it times
 *   compute: a dependent integer chain per thread (no memory traffic);
 *   cache:   sweeps over a private 256 KiB buffer per thread (L2-resident);
 *   memory:  a parallel copy of a 512 MiB array (DRAM bandwidth);
 * and prints each as a speed-up over one thread and an efficiency.
 * A benchmark helper, not a test.   cpu_probe [max_threads]
 */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double compute_s(int nt)
{
    volatile uint64_t sink = 0;
    double t0 = omp_get_wtime();
#pragma omp parallel num_threads(nt)
    {
        uint64_t x = 88172645463325252ull + (uint64_t)omp_get_thread_num();
        for (long i = 0; i < 200000000L; ++i) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        sink += x;
    }
    (void)sink;
    return omp_get_wtime() - t0;
}

static double cache_s(int nt)
{
    double t0 = omp_get_wtime();
    volatile uint64_t sink = 0;
#pragma omp parallel num_threads(nt)
    {
        const size_t n = 256 * 1024 / 8;
        uint64_t *b = (uint64_t *)calloc(n, 8), acc = 0;
        if (b) {
            for (int r = 0; r < 4000; ++r)
                for (size_t i = 0; i < n; ++i) {
                    acc += b[i];
                    b[i] = acc;
                }
            free(b);
        }
        sink += acc;
    }
    (void)sink;
    return omp_get_wtime() - t0;
}

static double memory_s(int nt, char *dst, const char *src, size_t n)
{
    double t0 = omp_get_wtime();
    for (int r = 0; r < 4; ++r) {
#pragma omp parallel for num_threads(nt) schedule(static)
        for (long c = 0; c < (long)(n >> 20); ++c) memcpy(dst + ((size_t)c << 20), src + ((size_t)c << 20), (size_t)1 << 20);
    }
    return omp_get_wtime() - t0;
}

int main(int argc, char **argv)
{
    int maxt = argc > 1 ? atoi(argv[1]) : omp_get_max_threads();
    if (maxt < 1) maxt = 1;
    const size_t n = (size_t)512 << 20;
    char *a = (char *)malloc(n), *b = (char *)malloc(n);
    if (!a || !b) return 1;
    memset(a, 1, n);
    memset(b, 2, n);
    double c1 = 0, k1 = 0, m1 = 0;
    printf("threads  compute(x, eff)     cache(x, eff)       memory GB/s (x, eff)\n");
    for (int t = 1, next; t <= maxt; t = next) {
        double c = compute_s(t), k = cache_s(t), m = memory_s(t, b, a, n);
        if (t == 1) {
            c1 = c;
            k1 = k;
            m1 = m;
        }
        /* Every thread does the same work in compute and cache: speed-up = t * t1 / tt. */
        printf("%7d  %5.2f  %4.2f        %5.2f  %4.2f        %6.1f (%5.2f  %4.2f)\n", t, t * c1 / c, c1 / c,
               t * k1 / k, k1 / k, 4.0 * 2 * n / m / 1e9, m1 / m, m1 / m / t);
        next = t * 2; /* 1, 2, 4, ... and maxt itself last */
        if (t < maxt && next > maxt) next = maxt;
    }
    free(a);
    free(b);
    return 0;
}
