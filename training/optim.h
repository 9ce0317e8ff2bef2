/* optim.h — AdamW and its learning-rate schedule.
 *
 * AdamW as torch.optim.AdamW (decoupled weight decay, bias-corrected
 * moments, eps added to the corrected second moment's square root), run
 * over the flat parameter block in one loop.  Weight decay applies to
 * matrices and embeddings only (ParamSpec.kind), not to biases and
 * LayerNorm parameters, as is usual for Transformers. */
#ifndef TRANSLATE_OPTIM_H
#define TRANSLATE_OPTIM_H

#include <stdbool.h>
#include <stddef.h>

#include "../model/params.h"

typedef struct {
    float lr;            /* this step's learning rate */
    float beta1, beta2;  /* 0.9, 0.98 */
    float eps;           /* 1e-9 */
    float weight_decay;
} AdamWSettings;

/* A stretch of the flat parameter block under one weight-decay rule. */
typedef struct {
    size_t start, end;   /* floats [start, end) */
    bool decays;
} AdamWRun;

typedef struct {
    size_t count;        /* parameters */
    float *m, *v;        /* [count] first and second moments */
    AdamWRun *runs;      /* the block, in order, in stretches of one rule */
    size_t run_count;
    long step;           /* updates done so far */
} AdamW;

void adamw_init(AdamW *opt, const ModelArch *arch);
void adamw_free(AdamW *opt); /* NULL-safe */

/* One update of params->data from grads->data (both `opt->count` floats),
 * each gradient multiplied by grad_scale as it is read (clip_factor; 1:
 * as they are), so that clipping takes no pass over the block of its own. */
void adamw_update(AdamW *opt, Params *params, const Params *grads, float grad_scale,
                  const AdamWSettings *s);

/* Linear warm-up to `peak` over `warmup` steps, then decay with the inverse
 * square root of the step ("Attention Is All You Need" §5.3, with the peak
 * given directly): peak · min(step / warmup, √(warmup / step)).  step
 * counts from 1.  warmup 0 is a constant `peak`: no warm-up, and no decay
 * either (the decay is measured in warm-ups). */
float lr_schedule(long step, float peak, int warmup);

/* Gradient clipping as torch.nn.utils.clip_grad_norm_, in two parts: the
 * global L2 norm of grads, and the factor that scales a gradient of that
 * norm down to max_norm: max_norm / (norm + 1e-6) above it, else 1 (and 1
 * when max_norm is 0: no clipping).  adamw_update applies the factor. */
float grad_norm(const Params *grads);
float clip_factor(float norm, float max_norm);

#endif
