/* optim.h — AdamW and its learning-rate schedule.
 *
 * AdamW as torch.optim.AdamW (decoupled weight decay, bias-corrected
 * moments, eps added to the corrected second moment's square root), run
 * over the flat parameter block in one loop.  Weight decay applies to
 * matrices and embeddings only (ParamSpec.kind), not to biases and
 * LayerNorm parameters, as is usual for Transformers. */
#ifndef TRANSLATE_OPTIM_H
#define TRANSLATE_OPTIM_H

#include <stddef.h>

#include "../model/params.h"

typedef struct {
    float lr;            /* this step's learning rate */
    float beta1, beta2;  /* 0.9, 0.98 */
    float eps;           /* 1e-9 */
    float weight_decay;
} AdamWSettings;

typedef struct {
    size_t count;        /* parameters */
    float *m, *v;        /* [count] first and second moments */
    float *decay;        /* [count] 1 where weight decay applies, else 0 */
    long step;           /* updates done so far */
} AdamW;

void adamw_init(AdamW *opt, const ModelArch *arch);
void adamw_free(AdamW *opt); /* NULL-safe */

/* One update of params->data from grads->data (both `opt->count` floats). */
void adamw_update(AdamW *opt, Params *params, const Params *grads, const AdamWSettings *s);

/* Linear warm-up to `peak` over `warmup` steps, then decay with the inverse
 * square root of the step ("Attention Is All You Need" §5.3, with the peak
 * given directly).  step counts from 1. */
float lr_schedule(long step, float peak, int warmup);

/* Scale grads so their global L2 norm is at most max_norm (0: no clipping,
 * as torch.nn.utils.clip_grad_norm_).  Returns the norm before clipping. */
float clip_grad_norm(Params *grads, float max_norm);

#endif
