/* optim.c — AdamW, the learning-rate schedule and gradient clipping (see
 * optim.h). */
#include "optim.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "../model/parallel.h"

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

/* Both loops over the flat parameter block (AdamW, the gradient norm) run
 * in parts of PART floats, split between threads (model/parallel.h).
 * AdamW's update of an element is its own; the squared norm is summed per
 * part, and the parts' sums added in part order on the calling thread, so
 * neither depends on the thread count. */
enum { PART = 1 << 14 };

typedef struct {
    float *p, *m, *v;
    const float *g, *decay;
    size_t count;
    float lr_wd, beta1, beta2, eps, step_size, c2_sqrt;
} AdamWStep;

static void adamw_range(void *ctx, size_t i0, size_t i1)
{
    const AdamWStep *a = ctx;
    float *p = a->p, *m = a->m, *v = a->v;
    const float *g = a->g, *decay = a->decay;
    /* The settings in locals: the compiler cannot tell that writing p[i]
     * leaves *a alone, and would reload them in every iteration instead of
     * vectorising the loop. */
    const float lr_wd = a->lr_wd, beta1 = a->beta1, beta2 = a->beta2, eps = a->eps;
    const float step_size = a->step_size, c2_sqrt = a->c2_sqrt;
    for (size_t i = i0; i < i1; i++) {
        p[i] *= 1.0f - lr_wd * decay[i];
        m[i] = beta1 * m[i] + (1.0f - beta1) * g[i];
        v[i] = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i];
        p[i] -= step_size * m[i] / (sqrtf(v[i]) / c2_sqrt + eps);
    }
}

void adamw_update(AdamW *opt, Params *params, const Params *grads, const AdamWSettings *s)
{
    ASSERT(params->count == opt->count && grads->count == opt->count);
    opt->step++;
    /* torch.optim.AdamW: p -= lr·wd·p; m, v moving averages; then
     * p -= lr · m̂ / (sqrt(v̂) + eps) with m̂ = m/(1-β1^t), v̂ = v/(1-β2^t). */
    double c1 = 1.0 - pow(s->beta1, (double)opt->step);
    double c2 = 1.0 - pow(s->beta2, (double)opt->step);
    AdamWStep a = {params->data, opt->m, opt->v, grads->data, opt->decay, opt->count,
                   s->lr * s->weight_decay, s->beta1, s->beta2, s->eps,
                   (float)(s->lr / c1), (float)sqrt(c2)};
    parallel_for_blocks(opt->count, PART, 5.0 * opt->count, adamw_range, &a);
}

float lr_schedule(long step, float peak, int warmup)
{
    if (step < 1) step = 1;
    if (warmup <= 0) return peak;
    if (step <= warmup) return peak * (float)step / (float)warmup;
    return peak * sqrtf((float)warmup / (float)step);
}

typedef struct {
    float *data;
    size_t count;
    double *sums;  /* [parts]: each part's sum of squares (norm_range) */
    float scale;   /* scale_range's factor */
} GradParts;

/* 8 partial sums in double per part: vectorisable, and exact enough for
 * 10⁷ terms. */
static void norm_range(void *ctx, size_t i0, size_t i1)
{
    const GradParts *gp = ctx;
    for (size_t start = i0; start < i1; start += PART) {
        const float *x = gp->data + start;
        size_t n = i1 - start < PART ? i1 - start : PART;
        double acc[8] = {0};
        size_t i = 0;
        for (; i + 8 <= n; i += 8)
            for (int j = 0; j < 8; j++) acc[j] += (double)x[i + j] * x[i + j];
        double sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        for (; i < n; i++) sum += (double)x[i] * x[i];
        gp->sums[start / PART] = sum;
    }
}

static void scale_range(void *ctx, size_t i0, size_t i1)
{
    const GradParts *gp = ctx;
    float *x = gp->data, scale = gp->scale;
    for (size_t i = i0; i < i1; i++) x[i] *= scale;
}

float clip_grad_norm(Params *grads, float max_norm)
{
    size_t parts = (grads->count + PART - 1) / PART;
    GradParts gp = {grads->data, grads->count, xmalloc((parts ? parts : 1) * sizeof(double)), 1.0f};
    parallel_for_blocks(grads->count, PART, (double)grads->count, norm_range, &gp);
    double sum = 0.0;
    for (size_t part = 0; part < parts; part++) sum += gp.sums[part];
    free(gp.sums);
    float norm = (float)sqrt(sum);
    if (max_norm > 0.0f && norm > max_norm) {
        /* torch adds 1e-6 to the norm before dividing */
        gp.scale = max_norm / (norm + 1e-6f);
        parallel_for_blocks(grads->count, PART, 2.0 * grads->count, scale_range, &gp);
    }
    return norm;
}
