/*
 * cpu/pool.h - worker threads of the CPU backend (internal).
 *
 * Plain POSIX threads started for one call and joined at its end. A worker
 * that waits sleeps on a condition variable or in join; nothing spins, so a
 * call that shares its cores with other processes loses no time to waiting
 * threads that burn the cores the working ones need (OpenMP's default wait
 * policy spins, and can only be changed through the environment). Work is
 * handed out on demand (an atomic counter, or a queue), so a worker that gets
 * less of the CPU than the others simply takes fewer items.
 */
#ifndef IWPP_CPU_POOL_H
#define IWPP_CPU_POOL_H

#include "backend.h"

#include <stdint.h>

/* fn(arg, worker) on up to nworkers threads, the caller being worker 0; every
   worker index is below nworkers. Returns how many workers ran (1 when no
   thread could be started: fn must not depend on the count for correctness). */
typedef void (*iwpp_par_fn)(void *arg, int worker);
int iwpp_par_run(int nworkers, iwpp_par_fn fn, void *arg);

/* fn(arg, i0, i1, worker) over [0, n) in chunks of `chunk` items taken on demand. */
typedef void (*iwpp_par_range_fn)(void *arg, int64_t i0, int64_t i1, int worker);
void iwpp_par_for(int nworkers, int64_t n, int64_t chunk, iwpp_par_range_fn fn, void *arg);

/*
 * Threads for a call doing `work` units (pixels, usually) when each thread
 * should have at least `per_thread` of them: an explicit thread count set on
 * the context is obeyed as it is; the default (0) is the cores this process
 * may run on, but no more than work / per_thread and at least 1, so that
 * small images run sequentially.
 */
int iwpp_cpu_threads_for(const iwpp_context *ctx, int64_t work, int64_t per_thread);

#endif
