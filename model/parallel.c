/* parallel.c — see parallel.h.
 *
 * Worker threads, started on the first threaded call and kept: starting a
 * thread per call cost ~20 µs (pthread_create + join, measured here),
 * comparable to a whole 4M-multiply-add product on two threads, and each
 * new thread would fault in fresh memory for its buffers (gemm.c's packing
 * buffer lives with its thread).  A worker sleeps on `wake` (after a spin
 * of at most 50 µs, spin_while: no longer, as the machine's other cores may
 * be busy with other work), runs the range it is given, and waits again.
 * parallel_stop ends and joins them; the program's main calls it before
 * it returns, and parallel_set_threads when the count changes.  The pool
 * itself holds nothing to free: its locks and arrays are static, ready
 * for workers to be started again.  `busy` lets one caller at a time use
 * the workers: a second thread calling meanwhile, or a worker's fn
 * calling parallel_for, runs its loop alone (same bits, as ever).
 *
 * Deliberately not here: work stealing or chunks smaller than a thread's
 * share.  The step's loops are even enough, and a fixed split keeps a
 * loop's cost predictable. */
#include "parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "../common/util.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <xmmintrin.h> /* _mm_stream_ps: SSE, in every x86-64 */
#endif

typedef struct {
    ParallelFn *fn;
    void *ctx;
    int i0, i1;
} Job;

static int n_threads = 1;
static bool force_split; /* parallel_force_split */

static struct {
    pthread_mutex_t lock; /* guards the fields below */
    pthread_cond_t wake, done;
    pthread_mutex_t busy;
    pthread_t ids[PARALLEL_MAX_THREADS];
    unsigned long born[PARALLEL_MAX_THREADS]; /* round when worker t started */
    int started;                     /* workers 1..started are running */
    Job jobs[PARALLEL_MAX_THREADS];  /* jobs[t] for worker t (1..) */
    int active;                      /* workers 1..active have a job this round */
    /* Atomic so a thread can spin on them unlocked (spin_while); written
     * under the lock only. */
    _Atomic unsigned long round;     /* incremented per threaded call */
    _Atomic unsigned long pending;   /* jobs of this round not finished */
    bool stop;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER,
          .done = PTHREAD_COND_INITIALIZER, .busy = PTHREAD_MUTEX_INITIALIZER};

/* Spin, for at most SPIN_SECONDS, while *value is `x` (equal) or is not
 * (!equal): the worker waiting for the next round, the caller for the
 * workers to finish this one.  A training step calls parallel_for hundreds
 * of times back to back, and sleeping on the condition variables between
 * them cost a futex wake-up each way, the worker starting its part late:
 * train_bench -t 2 -s 10 made 9-11k context switches, 2k with the spin.
 * Bounded, so idle workers still sleep (the machine's other cores may be
 * busy with other work). */
#define SPIN_SECONDS 50e-6

static void spin_while(_Atomic unsigned long *value, unsigned long x, bool equal)
{
    double end = util_now() + SPIN_SECONDS;
    for (unsigned i = 1; (*value == x) == equal; i++)
        if (i % 64 == 0 && util_now() > end) break;
}

static void *worker_main(void *arg)
{
    int me = (int)(intptr_t)arg;
    pthread_mutex_lock(&pool.lock);
    unsigned long seen = pool.born[me]; /* its first job is in the next round */
    for (;;) {
        if (pool.round == seen && !pool.stop) {
            pthread_mutex_unlock(&pool.lock);
            spin_while(&pool.round, seen, true);
            pthread_mutex_lock(&pool.lock);
        }
        while (pool.round == seen && !pool.stop) pthread_cond_wait(&pool.wake, &pool.lock);
        if (pool.stop) break;
        seen = pool.round;
        if (me > pool.active) continue;
        Job job = pool.jobs[me];
        pthread_mutex_unlock(&pool.lock);
        job.fn(job.ctx, job.i0, job.i1);
        pthread_mutex_lock(&pool.lock);
        if (--pool.pending == 0) pthread_cond_signal(&pool.done);
    }
    pthread_mutex_unlock(&pool.lock);
    return NULL;
}

/* Workers 1..want-1 running (fewer if threads cannot be started); returns
 * how many threads, the caller included, can take a part. */
static int pool_start(int want)
{
    pthread_mutex_lock(&pool.lock);
    while (pool.started < want - 1) {
        int t = pool.started + 1;
        pool.born[t] = pool.round;
        if (pthread_create(&pool.ids[t], NULL, worker_main, (void *)(intptr_t)t) != 0) break;
        pool.started = t;
    }
    int n = pool.started + 1;
    pthread_mutex_unlock(&pool.lock);
    return n < want ? n : want;
}

void parallel_stop(void)
{
    pthread_mutex_lock(&pool.lock);
    pool.stop = true;
    pthread_cond_broadcast(&pool.wake);
    int started = pool.started;
    pthread_mutex_unlock(&pool.lock);
    for (int t = 1; t <= started; t++) pthread_join(pool.ids[t], NULL);
    pthread_mutex_lock(&pool.lock);
    pool.started = 0;
    pool.stop = false;
    pthread_mutex_unlock(&pool.lock);
}

void parallel_set_threads(int n)
{
    n = n < 1 ? 1 : n > PARALLEL_MAX_THREADS ? PARALLEL_MAX_THREADS : n;
    if (n != n_threads) parallel_stop(); /* restarted, as many as needed, by the next call */
    n_threads = n;
}

int parallel_threads(void) { return n_threads; }

void parallel_force_split(bool on) { force_split = on; }

/* If a thread cannot be started its part is never made: the parts are cut
 * for the threads that run (slower, same bits). */
void parallel_for(int n, double work, ParallelFn *fn, void *ctx)
{
    int parts = n_threads < n ? n_threads : n;
    if (work < PARALLEL_MIN_WORK && !force_split) parts = 1;
    if (parts > 1 && pthread_mutex_trylock(&pool.busy) != 0) parts = 1; /* the workers are taken */
    if (parts <= 1) {
        if (n > 0) fn(ctx, 0, n);
        return;
    }
    parts = pool_start(parts);
    pthread_mutex_lock(&pool.lock);
    for (int t = 1; t < parts; t++)
        pool.jobs[t] = (Job){fn, ctx, (int)((int64_t)n * t / parts), (int)((int64_t)n * (t + 1) / parts)};
    pool.active = parts - 1;
    pool.pending = parts - 1;
    pool.round++;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);
    fn(ctx, 0, (int)((int64_t)n / parts));
    spin_while(&pool.pending, 0, false);
    pthread_mutex_lock(&pool.lock);
    while (pool.pending > 0) pthread_cond_wait(&pool.done, &pool.lock);
    pthread_mutex_unlock(&pool.lock);
    pthread_mutex_unlock(&pool.busy);
}

typedef struct {
    ParallelRangeFn *fn;
    void *ctx;
    size_t n, block;
} Blocks;

/* Blocks b0 .. b1-1 as the items they hold. */
static void blocks_run(void *ctx, int b0, int b1)
{
    const Blocks *b = ctx;
    size_t i0 = (size_t)b0 * b->block, i1 = (size_t)b1 * b->block;
    b->fn(b->ctx, i0, i1 < b->n ? i1 : b->n);
}

void parallel_for_blocks(size_t n, size_t block, double work, ParallelRangeFn *fn, void *ctx)
{
    size_t blocks = (n + block - 1) / block;
    ASSERT(blocks <= INT32_MAX);
    parallel_for((int)blocks, work, blocks_run, &(Blocks){fn, ctx, n, block});
}

/* Cleared in blocks of ZERO_BLOCK floats (a float's bits are 0 whoever
 * writes them). */
enum { ZERO_BLOCK = 1 << 16 };

/* Buffers of at least ZERO_STREAM_BYTES are cleared on x86-64 with
 * non-temporal stores (SSE's, which every x86-64 has).  What parallel_zero
 * clears is a training step's gradients: for train_bench's batches 82 MB
 * of activation gradients (179 MB when the figures below were measured)
 * and the parameters' 36 MB, far more than the caches, and an ordinary
 * store first reads each line it writes (memset did: it ran at 7.5 GB/s).  Streamed, a line
 * goes to memory without being read, and the first accumulation into it
 * reads it from memory as it had to anyway.  On an Intel Xeon
 * (train_bench, en-zh, 1 thread, 5 alternated runs): median 5,777 ->
 * 5,921 tokens/s; 2 threads 10,768 -> 11,000.  A smaller buffer might
 * still be in the caches when it is next read, where memset leaves it and
 * streaming would not.  The fence makes the stores visible before
 * parallel_for reports the range done. */
enum { ZERO_STREAM_BYTES = 16 << 20 };

static void zero_range(void *x, size_t i0, size_t i1)
{
    memset((float *)x + i0, 0, (i1 - i0) * sizeof(float));
}

static void zero_range_streamed(void *x, size_t i0, size_t i1)
{
    float *p = (float *)x + i0;
    size_t n = i1 - i0, i = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    /* up to the first 16-byte boundary as memset, then 4 floats a store */
    i = ((16 - ((uintptr_t)p & 15)) & 15) / sizeof *p;
    if (i > n) i = n;
    memset(p, 0, i * sizeof *p);
    for (; i + 4 <= n; i += 4) _mm_stream_ps(p + i, _mm_setzero_ps());
    _mm_sfence();
#endif
    memset(p + i, 0, (n - i) * sizeof *p);
}

void parallel_zero(float *x, size_t n)
{
    bool streamed = n >= ZERO_STREAM_BYTES / sizeof *x;
    parallel_for_blocks(n, ZERO_BLOCK, (double)n, streamed ? zero_range_streamed : zero_range, x);
}
