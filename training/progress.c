/* progress.c — ETA and smoothed loss for train's progress line (see
 * progress.h).  The ETA used to count only the epochs left, so a run
 * that max_steps or max_minutes would end after 80 s showed 18 minutes. */
#include "progress.h"

double progress_eta_seconds(const EtaInput *in)
{
    if (in->steps_this_run <= 0 || in->seconds_this_run <= 0) return -1.0;
    double per_step = in->seconds_this_run / (double)in->steps_this_run;
    double steps_left = (double)(in->epochs - in->epoch) * (double)in->batches_per_epoch - (double)in->batch;
    if (in->max_steps > 0 && (double)(in->max_steps - in->steps_done) < steps_left)
        steps_left = (double)(in->max_steps - in->steps_done);
    if (steps_left < 0) steps_left = 0;
    double eta = steps_left * per_step;
    if (in->max_minutes > 0) {
        double time_left = in->max_minutes * 60.0 - in->elapsed;
        if (time_left < eta) eta = time_left > 0 ? time_left : 0;
    }
    return eta;
}

void loss_average_init(LossAverage *a, double beta)
{
    *a = (LossAverage){.beta = beta, .average = 0.0, .beta_power = 1.0};
}

double loss_average_add(LossAverage *a, double loss)
{
    a->average = a->beta * a->average + (1.0 - a->beta) * loss;
    a->beta_power *= a->beta;
    return a->average / (1.0 - a->beta_power);
}
