/*
 * stage_ring_probe.cu - how should pageable host memory travel to and from the GPU?
 *
 * Compares, in one process, ways to move an upload of 134 MB and a download of 268 MB (the
 * 8192^2 reconstruction's two U8 inputs and the EDT's F32 output) between ordinary (pageable)
 * host memory and the device:
 *   - pinned: cudaMemcpy from page-locked memory (the link's rate, not reachable from pageable);
 *   - direct: cudaMemcpy from pageable memory (the driver's own staging);
 *   - omp:    the library's staging before this probe: a ring of B pinned buffers of C bytes,
 *             each chunk split over T OpenMP threads (one fork/join per chunk);
 *   - lanes:  one parallel region per transfer; each of T threads owns its own stream, B small
 *             pinned buffers and every T-th chunk, so no thread waits for another and the
 *             buffers are small enough to stay in the CPU's last-level cache.
 * Build: nvcc -O3 -arch=sm_90 -Xcompiler -fopenmp bench/stage_ring_probe.cu native/hostcopy.c
 */
#include <cuda_runtime.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" void iwpp_stream_copy(void *dst, const void *src, size_t n);

static double now_ms()
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

#define CK(x)                                                                            \
    do {                                                                                 \
        cudaError_t e = (x);                                                             \
        if (e != cudaSuccess) {                                                          \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

static void copy_fn(void *d, const void *s, size_t n, int nt)
{
    if (nt)
        iwpp_stream_copy(d, s, n);
    else
        memcpy(d, s, n);
}

/* The old scheme: ring of B buffers of C bytes, each chunk split over T threads. */
static void omp_transfer(char *dev, char *host, size_t total, int up, int T, size_t C, int B, int nt,
                         std::vector<char *> &bufs, std::vector<cudaEvent_t> &evs, cudaStream_t s)
{
    const size_t nch = (total + C - 1) / C;
    auto par = [&](char *d, const char *src, size_t n) {
#pragma omp parallel for num_threads(T) schedule(static, 1)
        for (int t = 0; t < T; ++t) {
            size_t a = (n * t / T) & ~(size_t)63, b = t == T - 1 ? n : (n * (t + 1) / T) & ~(size_t)63;
            copy_fn(d + a, src + a, b - a, nt);
        }
    };
    if (up) {
        for (size_t k = 0; k < nch; ++k) {
            int i = (int)(k % B);
            size_t a = k * C, n = std::min(C, total - a);
            if (k >= (size_t)B) CK(cudaEventSynchronize(evs[i]));
            par(bufs[i], host + a, n);
            CK(cudaMemcpyAsync(dev + a, bufs[i], n, cudaMemcpyHostToDevice, s));
            CK(cudaEventRecord(evs[i], s));
        }
    } else {
        const size_t lag = B - 1;
        for (size_t k = 0; k < nch + lag; ++k) {
            if (k < nch) {
                int i = (int)(k % B);
                size_t a = k * C, n = std::min(C, total - a);
                CK(cudaMemcpyAsync(bufs[i], dev + a, n, cudaMemcpyDeviceToHost, s));
                CK(cudaEventRecord(evs[i], s));
            }
            if (k >= lag) {
                size_t j = k - lag;
                int i = (int)(j % B);
                size_t a = j * C, n = std::min(C, total - a);
                CK(cudaEventSynchronize(evs[i]));
                par(host + a, bufs[i], n);
            }
        }
    }
    CK(cudaStreamSynchronize(s));
}

struct lane {
    cudaStream_t s;
    std::vector<char *> buf;
    std::vector<cudaEvent_t> ev;
};

/* Lanes: thread t moves chunks t, t+T, t+2T, ... through its own B buffers and stream. */
static void lane_transfer(char *dev, char *host, size_t total, int up, int T, size_t C, int B, int nt,
                          std::vector<lane> &L)
{
    const size_t nch = (total + C - 1) / C;
#pragma omp parallel num_threads(T)
    {
        const int t = omp_get_thread_num();
        lane &me = L[t];
        if (up) {
            size_t it = 0;
            for (size_t k = t; k < nch; k += T, ++it) {
                int i = (int)(it % B);
                size_t a = k * C, n = std::min(C, total - a);
                if (it >= (size_t)B) CK(cudaEventSynchronize(me.ev[i]));
                copy_fn(me.buf[i], host + a, n, nt);
                CK(cudaMemcpyAsync(dev + a, me.buf[i], n, cudaMemcpyHostToDevice, me.s));
                CK(cudaEventRecord(me.ev[i], me.s));
            }
        } else {
            std::vector<size_t> mine;
            for (size_t k = t; k < nch; k += T) mine.push_back(k);
            const size_t m = mine.size();
            for (size_t j = 0; j < m + B; ++j) {
                if (j >= (size_t)B) { /* unpack the chunk that went into this buffer B issues ago */
                    size_t q = j - B;
                    int i = (int)(q % B);
                    size_t a = mine[q] * C, n = std::min(C, total - a);
                    CK(cudaEventSynchronize(me.ev[i]));
                    copy_fn(host + a, me.buf[i], n, 1);
                }
                if (j < m) {
                    int i = (int)(j % B);
                    size_t a = mine[j] * C, n = std::min(C, total - a);
                    CK(cudaMemcpyAsync(me.buf[i], dev + a, n, cudaMemcpyDeviceToHost, me.s));
                    CK(cudaEventRecord(me.ev[i], me.s));
                }
            }
        }
        CK(cudaStreamSynchronize(me.s));
    }
}

int main(int argc, char **argv)
{
    const size_t UP = (size_t)2 * 8192 * 8192, DOWN = (size_t)4 * 8192 * 8192;
    const int reps = argc > 1 ? atoi(argv[1]) : 5;
    char *dev, *pin;
    CK(cudaMalloc(&dev, DOWN));
    CK(cudaMallocHost(&pin, DOWN));
    char *host = (char *)malloc(DOWN);
    memset(host, 7, DOWN);
    memset(pin, 7, DOWN);
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    auto best = [&](auto fn) {
        double b = 1e30;
        for (int r = 0; r < reps; ++r) {
            double t0 = now_ms();
            fn();
            b = std::min(b, now_ms() - t0);
        }
        return b;
    };
    auto report = [&](const char *name, double up, double down) {
        printf("%-34s up %6.2f ms %5.1f GB/s   down %6.2f ms %5.1f GB/s\n", name, up, UP / up / 1e6, down,
               DOWN / down / 1e6);
        fflush(stdout);
    };
    report("pinned cudaMemcpy", best([&] { CK(cudaMemcpy(dev, pin, UP, cudaMemcpyHostToDevice)); }),
           best([&] { CK(cudaMemcpy(pin, dev, DOWN, cudaMemcpyDeviceToHost)); }));
    report("pageable cudaMemcpy", best([&] { CK(cudaMemcpy(dev, host, UP, cudaMemcpyHostToDevice)); }),
           best([&] { CK(cudaMemcpy(host, dev, DOWN, cudaMemcpyDeviceToHost)); }));
    /* old scheme */
    {
        const int T = 16, B = 3;
        const size_t C = 16 << 20;
        std::vector<char *> bufs(B);
        std::vector<cudaEvent_t> evs(B);
        for (int i = 0; i < B; ++i) {
            CK(cudaMallocHost(&bufs[i], C));
            memset(bufs[i], 0, C);
            CK(cudaEventCreateWithFlags(&evs[i], cudaEventDisableTiming));
        }
        report("omp T16 C16M B3 nt",
               best([&] { omp_transfer(dev, host, UP, 1, T, C, B, 1, bufs, evs, s); }),
               best([&] { omp_transfer(dev, host, DOWN, 0, T, C, B, 1, bufs, evs, s); }));
        for (int i = 0; i < B; ++i) {
            cudaFreeHost(bufs[i]);
            cudaEventDestroy(evs[i]);
        }
    }
    const int Ts[] = {4, 6, 8, 12, 16};
    const size_t Cs[] = {256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20};
    const int Bs[] = {2, 3};
    for (int T : Ts)
        for (size_t C : Cs)
            for (int B : Bs) {
                std::vector<lane> L(T);
                for (auto &l : L) {
                    CK(cudaStreamCreateWithFlags(&l.s, cudaStreamNonBlocking));
                    l.buf.resize(B);
                    l.ev.resize(B);
                    for (int i = 0; i < B; ++i) {
                        CK(cudaMallocHost(&l.buf[i], C));
                        memset(l.buf[i], 0, C);
                        CK(cudaEventCreateWithFlags(&l.ev[i], cudaEventDisableTiming));
                    }
                }
                for (int nt = 0; nt < 2; ++nt) {
                    char name[64];
                    snprintf(name, sizeof name, "lanes T%d C%zuK B%d up-%s", T, C >> 10, B, nt ? "nt" : "memcpy");
                    report(name, best([&] { lane_transfer(dev, host, UP, 1, T, C, B, nt, L); }),
                           best([&] { lane_transfer(dev, host, DOWN, 0, T, C, B, nt, L); }));
                }
                for (auto &l : L) {
                    for (int i = 0; i < B; ++i) {
                        cudaFreeHost(l.buf[i]);
                        cudaEventDestroy(l.ev[i]);
                    }
                    cudaStreamDestroy(l.s);
                }
            }
    /* a check that the lanes deliver the bytes */
    {
        for (size_t i = 0; i < DOWN; i += 4096) host[i] = (char)(i >> 12);
        std::vector<lane> L(8);
        for (auto &l : L) {
            CK(cudaStreamCreateWithFlags(&l.s, cudaStreamNonBlocking));
            l.buf.resize(2);
            l.ev.resize(2);
            for (int i = 0; i < 2; ++i) {
                CK(cudaMallocHost(&l.buf[i], 1 << 20));
                CK(cudaEventCreateWithFlags(&l.ev[i], cudaEventDisableTiming));
            }
        }
        lane_transfer(dev, host, DOWN, 1, 8, 1 << 20, 2, 0, L);
        memset(host, 0, DOWN);
        lane_transfer(dev, host, DOWN, 0, 8, 1 << 20, 2, 0, L);
        size_t bad = 0;
        for (size_t i = 0; i < DOWN; i += 4096) bad += host[i] != (char)(i >> 12);
        printf("round trip check: %zu bad pages\n", bad);
    }
    return 0;
}
