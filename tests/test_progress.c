/* test_progress.c — training/progress: the ETA honours every limit that
 * can end a run (epochs, max_steps, max_minutes), and the smoothed loss is
 * a bias-corrected moving average.  Cases computed by hand. */
#include "testutil.h"

#include <math.h>

#include "../training/progress.h"

/* 10 s for 20 steps this run: 0.5 s a step; 100 batches an epoch. */
static EtaInput base(void)
{
    return (EtaInput){.elapsed = 10, .steps_done = 20, .steps_this_run = 20, .seconds_this_run = 10,
                      .epoch = 0, .batch = 20, .batches_per_epoch = 100, .epochs = 3};
}

static void test_eta_counts_the_epochs_left(void **state)
{
    (void)state;
    EtaInput in = base();
    /* 3 * 100 - 20 = 280 steps at 0.5 s */
    assert_true(fabs(progress_eta_seconds(&in) - 140.0) < 1e-9);
    in.epoch = 2; in.batch = 90; /* the last epoch's last 10 batches */
    assert_true(fabs(progress_eta_seconds(&in) - 5.0) < 1e-9);
}

static void test_eta_honours_max_steps(void **state)
{
    (void)state;
    EtaInput in = base();
    in.max_steps = 50; /* 30 steps left, not 280 */
    assert_true(fabs(progress_eta_seconds(&in) - 15.0) < 1e-9);
    in.max_steps = 1000; /* further than the epochs: they end the run */
    assert_true(fabs(progress_eta_seconds(&in) - 140.0) < 1e-9);
    in.max_steps = 20; /* reached */
    assert_true(progress_eta_seconds(&in) == 0.0);
}

static void test_eta_honours_max_minutes(void **state)
{
    (void)state;
    /* The report of issue 14: an 80 s run (max_minutes) showed 18 minutes. */
    EtaInput in = base();
    in.max_minutes = 80.0 / 60.0; /* 70 s left of 80, before the 140 s the steps would take */
    assert_true(fabs(progress_eta_seconds(&in) - 70.0) < 1e-9);
    in.max_minutes = 10; /* 600 s: the steps end it first */
    assert_true(fabs(progress_eta_seconds(&in) - 140.0) < 1e-9);
    in.max_steps = 30; in.max_minutes = 80.0 / 60.0; /* both: the nearer one, 10 steps = 5 s */
    assert_true(fabs(progress_eta_seconds(&in) - 5.0) < 1e-9);
    in.max_steps = 0; in.elapsed = 100; /* past the limit: 0, never negative */
    assert_true(progress_eta_seconds(&in) == 0.0);
}

static void test_eta_after_resume_uses_this_runs_rate(void **state)
{
    (void)state;
    /* Resumed at step 200 after 1000 s; this run: 10 steps in 2 s. */
    EtaInput in = {.elapsed = 1002, .steps_done = 210, .steps_this_run = 10, .seconds_this_run = 2,
                   .epoch = 2, .batch = 10, .batches_per_epoch = 100, .epochs = 3, .max_steps = 260};
    assert_true(fabs(progress_eta_seconds(&in) - 10.0) < 1e-9); /* 50 steps at 0.2 s */
    in.steps_this_run = 0; /* nothing measured yet */
    assert_true(progress_eta_seconds(&in) < 0);
}

static void test_loss_average_is_bias_corrected(void **state)
{
    (void)state;
    LossAverage a;
    loss_average_init(&a, 0.9);
    assert_true(fabs(loss_average_add(&a, 5.0) - 5.0) < 1e-12); /* the first value, not 0.5 */
    /* (0.9 * (0.1 * 5) + 0.1 * 3) / (1 - 0.9²) */
    assert_true(fabs(loss_average_add(&a, 3.0) - (0.45 + 0.3) / 0.19) < 1e-12);
    LossAverage c;
    loss_average_init(&c, PROGRESS_SMOOTHING);
    for (int i = 0; i < 100; i++) assert_true(fabs(loss_average_add(&c, 2.5) - 2.5) < 1e-9); /* constant stays */
    /* noise averages out: alternating 2 and 4 stays within 0.1 of 3 */
    for (int i = 0; i < 200; i++) {
        double v = loss_average_add(&c, i % 2 ? 2.0 : 4.0);
        if (i > 100) assert_true(fabs(v - 3.0) < 0.1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eta_counts_the_epochs_left),
        cmocka_unit_test(test_eta_honours_max_steps),
        cmocka_unit_test(test_eta_honours_max_minutes),
        cmocka_unit_test(test_eta_after_resume_uses_this_runs_rate),
        cmocka_unit_test(test_loss_average_is_bias_corrected),
    };
    return cmocka_run_group_tests_name("training progress", tests, NULL, NULL);
}
