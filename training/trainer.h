/* trainer.h — one training step: forward, loss, backward, update.
 *
 * A Trainer owns everything a step needs: the model, the gradients of its
 * parameters (same flat layout), the optimizer state, and two activation
 * blocks (values and their gradients) sized for the largest batch.  It
 * knows nothing of files or data sets: app/train.c feeds it batches. */
#ifndef TRANSLATE_TRAINER_H
#define TRANSLATE_TRAINER_H

#include "optim.h"
#include "../model/transformer.h"

typedef struct {
    Model model;
    Params grads;
    AdamW opt;
    Activations acts, grad_acts;
    Rng dropout_rng;
    float label_smoothing;
} Trainer;

/* `model` is moved into the trainer (the caller must not free it).
 * Batches may hold up to src_rows / tgt_rows tokens, no sequence longer
 * than arch.max_len. */
void trainer_init(Trainer *tr, Model *model, int src_rows, int tgt_rows, float dropout,
                  float label_smoothing, uint64_t seed);
void trainer_free(Trainer *tr); /* NULL-safe */

/* Forward and backward on `batch` with target labels[Nt] (the decoder
 * input shifted by one: target tokens then </s>).  Leaves the parameter
 * gradients in tr->grads (zeroed first) and returns the mean loss.
 * `train` false: no dropout and no backward (dev loss). */
float trainer_step(Trainer *tr, const Batch *batch, const int *labels, bool train);

/* Apply AdamW to the gradients clipped to clip_norm (0: no clipping).
 * The clipping is a factor AdamW applies as it reads each gradient:
 * tr->grads stay as backward left them.  Returns the gradient norm before
 * clipping. */
float trainer_update(Trainer *tr, const AdamWSettings *settings, float clip_norm);

#endif
