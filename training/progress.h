/* progress.h — the numbers train's progress line and log show: how long
 * the run still has (honouring every limit that can end it), and the
 * training loss smoothed so that its trend can be read.
 *
 * Pure arithmetic, no clock and no printing: app/train.c feeds it, and
 * tests/test_progress.c checks it by hand-computed cases. */
#ifndef TRANSLATE_PROGRESS_H
#define TRANSLATE_PROGRESS_H

/* Where a run stands, and the limits that can end it (train: epochs,
 * max_steps, max_minutes; 0 = no such limit for the last two). */
typedef struct {
    double elapsed;        /* seconds trained so far, over all runs (--resume included) */
    long steps_done;       /* optimizer steps so far, over all runs */
    long steps_this_run;   /* of which this process made (its rate is the one measured) */
    double seconds_this_run;
    int epoch;             /* the epoch under way, 0-based */
    long batch;            /* batches of that epoch done */
    long batches_per_epoch;
    int epochs;
    long max_steps;
    double max_minutes;
} EtaInput;

/* Seconds until the first limit ends the run: the steps left before the
 * last epoch's end or max_steps, whichever comes first, at this run's
 * seconds per step so far, and never past max_minutes.  Evaluations that
 * are still to come are not counted.  Negative when this run has made no
 * step yet (nothing to measure a rate by). */
double progress_eta_seconds(const EtaInput *in);

/* An exponential moving average of the training loss, bias-corrected as
 * Adam corrects its moments (so the first values are not pulled towards
 * 0): after n values, sum_i (1-β)β^(n-i) x_i / (1 - β^n).  It restarts
 * at a --resume (it is not in the checkpoint). */
typedef struct {
    double beta;           /* weight of the past, e.g. PROGRESS_SMOOTHING */
    double average;        /* the uncorrected average */
    double beta_power;     /* β^n */
} LossAverage;

#define PROGRESS_SMOOTHING 0.95 /* ~20 steps: a batch's loss varies with its sentences' length */

void loss_average_init(LossAverage *a, double beta);
/* Add one step's loss; returns the smoothed loss including it. */
double loss_average_add(LossAverage *a, double loss);

#endif
