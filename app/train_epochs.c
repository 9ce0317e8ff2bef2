/* train_epochs.c — each epoch's batches (see train_epochs.h). */
#include "train_epochs.h"

void train_epochs_select(Run *r, int epoch)
{
    if (r->batches_epoch == epoch && r->batches.first) return;
    if (!r->resample && r->batches.first) return; /* every epoch is the same */
    batches_free(&r->batches);
    sources_epoch(&r->sources, r->cfg.train.seed, epoch, r->epoch_pairs);
    batches_build_from(&r->batches, &r->train, r->epoch_pairs, sources_epoch_size(&r->sources),
                       r->cfg.train.batch_tokens);
    r->batches_epoch = epoch;
    r->plan.batches = r->batches.count;
}

int train_epochs_draws(const Run *r)
{
    return r->resample ? r->cfg.train.epochs : 1;
}
