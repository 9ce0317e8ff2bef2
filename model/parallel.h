/* parallel.h — the one pool of worker threads the model's kernels share:
 * matrix products (gemm.c) and the loops of a training step around them
 * (attention, the loss, LayerNorm, the elementwise layers, AdamW).
 *
 * The promise every caller keeps: results do not depend on the thread
 * count.  parallel_for only decides which indices a thread runs, so each
 * fn must compute every output of an index range by the same operations
 * whatever the range (outputs of different indices disjoint, no sums
 * across indices whose order would follow the split). */
#ifndef TRANSLATE_PARALLEL_H
#define TRANSLATE_PARALLEL_H

#include <stdbool.h>
#include <stddef.h>

/* Runs indices i0 .. i1-1 of a loop; ctx is the caller's. */
typedef void ParallelFn(void *ctx, int i0, int i1);

/* Below this much work (floats touched by a loop, or multiply-adds) a loop
 * stays on the calling thread: waking a worker and waiting for it costs
 * tens of microseconds, what a loop over ~10⁵ floats takes. */
#define PARALLEL_MIN_WORK (1 << 18)

/* fn(ctx, i0, i1) over [0, n), split into one contiguous range per thread
 * (part t of p is [n·t/p, n·(t+1)/p)), the calling thread taking part 0,
 * and returns when all are done.  `work` is the loop's size in the units
 * of PARALLEL_MIN_WORK.  Runs fn(ctx, 0, n) on the calling thread alone
 * when work is below that, n ≤ 1, one thread is set, or another caller
 * (or an enclosing parallel_for) has the workers. */
void parallel_for(int n, double work, ParallelFn *fn, void *ctx);

/* Runs items i0 .. i1-1 of a loop over n items; ctx is the caller's. */
typedef void ParallelRangeFn(void *ctx, size_t i0, size_t i1);

/* fn(ctx, i0, i1) over [0, n) cut into fixed blocks of `block` items, each
 * thread taking whole blocks: every range starts at a multiple of block
 * (and ends at one, or at n) whatever the thread count, so what a loop
 * does per block (a partial sum, a place in a random stream) never depends
 * on it.  `work` as for parallel_for. */
void parallel_for_blocks(size_t n, size_t block, double work, ParallelRangeFn *fn, void *ctx);

/* x[0 .. n-1] = 0, split between threads when large: a training step
 * clears its gradients (~10⁷ floats) every time.  From 16 MB on, with
 * stores that bypass the caches (parallel.c says why): the values are then
 * in memory, not in the caches, when they are next read. */
void parallel_zero(float *x, size_t n);

/* More than this many threads are never started: --threads' limit. */
enum { PARALLEL_MAX_THREADS = 64 };

/* How many threads parallel_for may use (default 1; values below 1 mean 1,
 * above PARALLEL_MAX_THREADS mean that).  The other threads are started by the first call that
 * needs them and then kept, asleep between calls, until parallel_stop
 * stops them (as a change of the count here does).  Set it before calls
 * start, not while another thread is inside parallel_for. */
void parallel_set_threads(int n);
int parallel_threads(void);

/* Stops the worker threads, if any were started: wakes them to exit and
 * joins them, so each has freed what it held (gemm.c's packing buffer,
 * its stack) when this returns.  The count stays as set: a later call
 * that needs workers starts them again.  A program that sets a count
 * calls this before main returns, whatever the way out (app/translate.c
 * and app/train.c: main runs the work, then this).  Not while another
 * thread is inside parallel_for. */
void parallel_stop(void);

/* For tests: with true, every loop of n ≥ 2 is split whatever its work
 * (so a small model takes the threaded paths a large one does). */
void parallel_force_split(bool on);

#endif
