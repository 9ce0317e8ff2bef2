/* train_epochs.h — each epoch's batches: its weighted draw from the
 * training pool (data/sources.h), grouped into batches (data/batches.h).
 * When a source's weight has a fraction each epoch draws anew; else one
 * draw serves every epoch and is built once. */
#ifndef TRANSLATE_TRAIN_EPOCHS_H
#define TRANSLATE_TRAIN_EPOCHS_H

#include "train_run.h"

/* r->batches for epoch `epoch` (0-based): its weighted draw from the pool
 * (data/sources.h), grouped; r->plan.batches follows.  Nothing is rebuilt
 * when r->batches already is that epoch's. */
void train_epochs_select(Run *r, int epoch);
/* How many epochs draw batches of their own: every one when a source's
 * weight has a fraction (each draws anew), else one draw serves all. */
int train_epochs_draws(const Run *r);

#endif
