/* optim.c — AdamW, the learning-rate schedule and gradient clipping (see
 * optim.h). */
#include "optim.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

void adamw_init(AdamW *opt, const ModelArch *arch)
{
    memset(opt, 0, sizeof *opt);
    opt->count = params_count(arch);
    opt->m = xcalloc(opt->count, sizeof(float));
    opt->v = xcalloc(opt->count, sizeof(float));
    opt->decay = xcalloc(opt->count, sizeof(float));
    ParamSpec *specs;
    size_t n = params_layout(arch, &specs);
    for (size_t i = 0; i < n; i++) {
        bool decays = specs[i].kind == PARAM_MATRIX || specs[i].kind == PARAM_EMBEDDING;
        for (size_t j = 0; j < specs[i].numel; j++) opt->decay[specs[i].offset + j] = decays ? 1.0f : 0.0f;
    }
    free(specs);
}

void adamw_free(AdamW *opt)
{
    if (!opt) return;
    free(opt->m);
    free(opt->v);
    free(opt->decay);
    memset(opt, 0, sizeof *opt);
}

void adamw_update(AdamW *opt, Params *params, const Params *grads, const AdamWSettings *s)
{
    ASSERT(params->count == opt->count && grads->count == opt->count);
    opt->step++;
    /* torch.optim.AdamW: p -= lr·wd·p; m, v moving averages; then
     * p -= lr · m̂ / (sqrt(v̂) + eps) with m̂ = m/(1-β1^t), v̂ = v/(1-β2^t). */
    double c1 = 1.0 - pow(s->beta1, (double)opt->step);
    double c2 = 1.0 - pow(s->beta2, (double)opt->step);
    float step_size = (float)(s->lr / c1);
    float c2_sqrt = (float)sqrt(c2);
    float *p = params->data, *m = opt->m, *v = opt->v;
    const float *g = grads->data, *decay = opt->decay;
    /* The settings in locals: the compiler cannot tell that writing p[i]
     * leaves *s alone, and would reload them in every iteration instead of
     * vectorising the loop. */
    const float lr_wd = s->lr * s->weight_decay, beta1 = s->beta1, beta2 = s->beta2, eps = s->eps;
    for (size_t i = 0; i < opt->count; i++) {
        p[i] *= 1.0f - lr_wd * decay[i];
        m[i] = beta1 * m[i] + (1.0f - beta1) * g[i];
        v[i] = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i];
        p[i] -= step_size * m[i] / (sqrtf(v[i]) / c2_sqrt + eps);
    }
}

float lr_schedule(long step, float peak, int warmup)
{
    if (step < 1) step = 1;
    if (warmup <= 0) return peak;
    if (step <= warmup) return peak * (float)step / (float)warmup;
    return peak * sqrtf((float)warmup / (float)step);
}

float clip_grad_norm(Params *grads, float max_norm)
{
    /* 8 partial sums in double: vectorisable, and exact enough for 10⁷ terms */
    double acc[8] = {0};
    size_t i = 0, n = grads->count;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) acc[j] += (double)grads->data[i + j] * grads->data[i + j];
    double sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < n; i++) sum += (double)grads->data[i] * grads->data[i];
    float norm = (float)sqrt(sum);
    if (max_norm > 0.0f && norm > max_norm) {
        /* torch adds 1e-6 to the norm before dividing */
        float scale = max_norm / (norm + 1e-6f);
        for (size_t i = 0; i < grads->count; i++) grads->data[i] *= scale;
    }
    return norm;
}
