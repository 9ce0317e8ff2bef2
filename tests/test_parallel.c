/* test_parallel.c — model/parallel: the worker threads are started by the
 * first loop that needs them, ended by parallel_stop (every one of them
 * has exited, and freed what it held, when it returns), and started again
 * by the next loop; through every start and stop a loop's results keep
 * the one-thread bits.
 *
 * What a worker holds is seen as gemm.c holds its packing buffer: a
 * thread-specific value whose destructor runs as the thread exits.  Here
 * the destructor counts the workers that ended. */
#include "testutil.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "../model/parallel.h"

enum { N = 64 }; /* indices per loop: every thread's part is non-empty */

static pthread_t caller;       /* the thread that calls parallel_for */
static pthread_key_t held;     /* a worker's "buffer": set at its first range */
static atomic_int workers_began, workers_ended;

static void worker_ended(void *unused)
{
    (void)unused;
    atomic_fetch_add(&workers_ended, 1);
}

/* out[i] from i alone, by operations whose rounding matters (so a range
 * computed twice, or not at all, shows). */
static void fill_range(void *ctx, int i0, int i1)
{
    float *out = ctx;
    if (!pthread_equal(pthread_self(), caller) && !pthread_getspecific(held)) {
        pthread_setspecific(held, &held); /* any non-NULL: the destructor runs */
        atomic_fetch_add(&workers_began, 1);
    }
    for (int i = i0; i < i1; i++) out[i] = sqrtf((float)i + 0.1f) / 3.0f + (float)i * 1e-3f;
}

static void fill(float *out)
{
    for (int i = 0; i < N; i++) out[i] = NAN;
    parallel_for(N, (double)PARALLEL_MIN_WORK, fill_range, out);
}

static void test_stop_ends_every_worker_and_the_next_loop_starts_them_again(void **state)
{
    (void)state;
    caller = pthread_self();
    assert_int_equal(pthread_key_create(&held, worker_ended), 0);
    float want[N], got[N];
    parallel_set_threads(1);
    fill(want);
    parallel_stop(); /* none started: nothing to do */
    assert_int_equal(atomic_load(&workers_began), 0);
    static const int counts[] = {2, 3, 2};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        parallel_set_threads(counts[c]);
        for (int round = 0; round < 5; round++) {
            int began = atomic_load(&workers_began);
            for (int loop = 0; loop < 3; loop++) { /* kept between loops: started once a round */
                fill(got);
                assert_memory_equal(got, want, sizeof got);
            }
            assert_int_equal(atomic_load(&workers_began) - began, counts[c] - 1);
            parallel_stop();
            /* joined: each worker's destructor has run, none still exiting */
            assert_int_equal(atomic_load(&workers_ended), atomic_load(&workers_began));
        }
    }
    parallel_stop(); /* twice in a row: the second finds none */
    parallel_set_threads(1);
    assert_int_equal(atomic_load(&workers_ended), atomic_load(&workers_began));
    pthread_key_delete(held);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stop_ends_every_worker_and_the_next_loop_starts_them_again),
    };
    return cmocka_run_group_tests_name("parallel", tests, NULL, NULL);
}
