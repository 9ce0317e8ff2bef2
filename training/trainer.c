/* trainer.c — one training step (see trainer.h). */
#include "trainer.h"

#include <string.h>

#include "../model/layers.h"
#include "../model/parallel.h"

void trainer_init(Trainer *tr, Model *model, int src_rows, int tgt_rows, float dropout,
                  float label_smoothing, uint64_t seed)
{
    memset(tr, 0, sizeof *tr);
    tr->model = *model;
    memset(model, 0, sizeof *model);
    const ModelArch *a = &tr->model.arch;
    params_alloc(&tr->grads, a);
    adamw_init(&tr->opt, a);
    ActsSize size = acts_size_full(a, src_rows, tgt_rows, a->max_len);
    size.dropout = dropout > 0.0f;
    acts_alloc(&tr->acts, a, size);
    acts_alloc(&tr->grad_acts, a, acts_size_gradient(size));
    tr->acts.dropout = dropout;
    rng_seed(&tr->dropout_rng, seed ^ 0x64726f706f7574ULL); /* "dropout" */
    tr->acts.rng = &tr->dropout_rng;
    tr->label_smoothing = label_smoothing;
}

void trainer_free(Trainer *tr)
{
    if (!tr) return;
    acts_free(&tr->acts);
    acts_free(&tr->grad_acts);
    adamw_free(&tr->opt);
    params_free(&tr->grads);
    params_free(&tr->model.params);
    memset(tr, 0, sizeof *tr);
}

float trainer_step(Trainer *tr, const Batch *batch, const int *labels, bool train)
{
    const ModelArch *a = &tr->model.arch;
    int Nt = batch->tgt_start[batch->count];
    float dropout = tr->acts.dropout;
    if (!train) tr->acts.dropout = 0.0f;
    transformer_encode(&tr->acts, &tr->model, batch);
    transformer_decode(&tr->acts, &tr->model, batch);
    tr->acts.dropout = dropout;
    /* Batches are packed, so no row is padding; TOKEN_PAD never appears as
     * a label and ignoring it changes nothing. */
    if (!train)
        return cross_entropy_forward(NULL, tr->acts.logits, labels, Nt, a->tgt_vocab,
                                     tr->label_smoothing, TOKEN_PAD);
    acts_zero_gradient(&tr->grad_acts);
    parallel_zero(tr->grads.data, tr->grads.count);
    float loss = cross_entropy_forward_backward(tr->grad_acts.logits, tr->acts.logits, labels, Nt,
                                                a->tgt_vocab, tr->label_smoothing, TOKEN_PAD);
    transformer_backward(&tr->grad_acts, &tr->grads, &tr->acts, &tr->model, batch);
    return loss;
}

float trainer_update(Trainer *tr, const AdamWSettings *settings, float clip_norm)
{
    float norm = grad_norm(&tr->grads);
    adamw_update(&tr->opt, &tr->model.params, &tr->grads, clip_factor(norm, clip_norm), settings);
    return norm;
}
