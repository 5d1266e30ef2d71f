/*
 * workpool.h - threads a context keeps for its tiled calls (internal; tiles.c).
 *
 * Starting a tile call's twenty-odd threads and ending them again cost the H100 machine about
 * 1 ms a call (each thread's own OpenMP team for its copies was made and torn down with it);
 * the pool's threads wait between calls instead, with every signal blocked (a JVM keeps its
 * signals on its own threads), and leave when the context is destroyed.
 */
#ifndef IWPP_WORKPOOL_H
#define IWPP_WORKPOOL_H

typedef struct iwpp_workpool iwpp_workpool;

/** Makes sure the pool (*pool, created when NULL) holds at least @p n threads; returns how many
 *  it holds (fewer than n where threads could not be started). */
int iwpp_workpool_ready(iwpp_workpool **pool, int n);

/**
 * Runs fn(args[i]) on thread i of *pool for i < the returned count, which is @p n unless
 * threads could not be started (then fewer, down to 0: the caller runs the rest its own way).
 * Creates the pool on first use (*pool NULL) and threads as needed. Returns at once; the
 * calls run until iwpp_workpool_wait. One job at a time per pool.
 */
int iwpp_workpool_run(iwpp_workpool **pool, int n, void *(*fn)(void *), void *const *args);

/** Waits until every call of the pool's current job has returned (none running: at once). */
void iwpp_workpool_wait(iwpp_workpool *pool);

/** Ends the pool's threads (after any job) and frees it; NULL is fine. */
void iwpp_workpool_free(iwpp_workpool *pool);

/** Threads the pool holds (tests). */
int iwpp_workpool_threads(const iwpp_workpool *pool);

#endif
