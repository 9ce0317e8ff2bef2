/* optim.c — AdamW, the learning-rate schedule and gradient clipping (see
 * optim.h). */
#include "optim.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "../model/clones.h"
#include "../model/parallel.h"

void adamw_init(AdamW *opt, const ModelArch *arch)
{
    memset(opt, 0, sizeof *opt);
    opt->count = params_count(arch);
    opt->m = xcalloc(opt->count, sizeof(float));
    opt->v = xcalloc(opt->count, sizeof(float));
    /* One rule per tensor, neighbours with the same rule merged (en-zh:
     * 60 runs for 97 tensors), instead of a float per parameter (an array
     * as big as the model, read at every update: 36 MB).  With a tied
     * output embedding the generator's weight is tgt_embed, one tensor
     * that decays once, as torch's named_parameters() lists a shared
     * parameter once. */
    ParamSpec *specs;
    size_t n = params_layout(arch, &specs);
    opt->runs = xcalloc(n ? n : 1, sizeof *opt->runs);
    for (size_t i = 0; i < n; i++) {
        bool decays = specs[i].kind == PARAM_MATRIX || specs[i].kind == PARAM_EMBEDDING;
        size_t end = specs[i].offset + specs[i].numel;
        AdamWRun *last = opt->run_count ? &opt->runs[opt->run_count - 1] : NULL;
        ASSERT(specs[i].offset == (last ? last->end : 0)); /* the layout leaves no gaps */
        if (last && last->decays == decays) last->end = end;
        else opt->runs[opt->run_count++] = (AdamWRun){specs[i].offset, end, decays};
    }
    ASSERT(opt->run_count == 0 || opt->runs[opt->run_count - 1].end == opt->count);
    free(specs);
}

void adamw_free(AdamW *opt)
{
    if (!opt) return;
    free(opt->m);
    free(opt->v);
    free(opt->runs);
    memset(opt, 0, sizeof *opt);
}

/* An update streams the parameters, their gradients and both moments
 * (36 MB each for en-zh): memory-bound.  So nothing else takes a pass of
 * its own: clipping's factor is applied as AdamW reads each gradient, and
 * weight decay is a rule per stretch of the block, not a float per
 * parameter.  (perf of a 1-thread step on an Intel Xeon before: AdamW
 * 3.1%, the clipping pass 0.4%, zeroing 6.1%; train_bench -t 1 went 3,899
 * -> 4,104 tokens/s with this and acts.h's gradient set together, 3
 * alternated runs each, the same bits.)
 *
 * Both loops over the flat parameter block (AdamW, the gradient norm) run
 * in parts of PART floats, split between threads (model/parallel.h).
 * AdamW's update of an element is its own; the squared norm is summed per
 * part, and the parts' sums added in part order on the calling thread, so
 * neither depends on the thread count. */
enum { PART = 1 << 14 };

typedef struct {
    float *p, *m, *v;
    const float *g;
    const AdamWRun *runs;
    size_t run_count;
    float grad_scale, lr_wd, beta1, beta2, eps, step_size, c2_sqrt;
} AdamWStep;

/* Elements i0..i1-1, all under one rule: p shrinks by `shrink` (weight
 * decay: 1 - lr·wd, or exactly 1), then the Adam step. */
CLONES static void adamw_stretch(const AdamWStep *a, size_t i0, size_t i1, float shrink)
{
    float *p = a->p, *m = a->m, *v = a->v;
    const float *g = a->g;
    /* The settings in locals: the compiler cannot tell that writing p[i]
     * leaves *a alone, and would reload them in every iteration instead of
     * vectorising the loop. */
    const float grad_scale = a->grad_scale, beta1 = a->beta1, beta2 = a->beta2, eps = a->eps;
    const float step_size = a->step_size, c2_sqrt = a->c2_sqrt;
    for (size_t i = i0; i < i1; i++) {
        float gi = g[i] * grad_scale;
        p[i] *= shrink;
        m[i] = beta1 * m[i] + (1.0f - beta1) * gi;
        v[i] = beta2 * v[i] + (1.0f - beta2) * gi * gi;
        /* the bias corrections folded into two numbers: step_size is
         * lr / (1 - beta1^t), and sqrt(v) / c2_sqrt is sqrt(v-hat), with eps
         * added after the correction, as torch.optim.AdamW does */
        p[i] -= step_size * m[i] / (sqrtf(v[i]) / c2_sqrt + eps);
    }
}

static void adamw_range(void *ctx, size_t i0, size_t i1)
{
    const AdamWStep *a = ctx;
    for (size_t r = 0; r < a->run_count; r++) {
        const AdamWRun *run = &a->runs[r];
        size_t lo = run->start > i0 ? run->start : i0, hi = run->end < i1 ? run->end : i1;
        if (lo < hi) adamw_stretch(a, lo, hi, run->decays ? 1.0f - a->lr_wd : 1.0f);
    }
}

void adamw_update(AdamW *opt, Params *params, const Params *grads, float grad_scale,
                  const AdamWSettings *s)
{
    ASSERT(params->count == opt->count && grads->count == opt->count);
    opt->step++;
    /* torch.optim.AdamW: p -= lr·wd·p; m, v moving averages; then
     * p -= lr · m̂ / (sqrt(v̂) + eps) with m̂ = m/(1-β1^t), v̂ = v/(1-β2^t). */
    double c1 = 1.0 - pow(s->beta1, (double)opt->step);
    double c2 = 1.0 - pow(s->beta2, (double)opt->step);
    AdamWStep a = {params->data, opt->m, opt->v, grads->data, opt->runs, opt->run_count, grad_scale,
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
    const float *data;
    double *sums;  /* [parts]: each part's sum of squares (norm_range) */
} GradParts;

/* 8 partial sums in double per part: vectorisable, and exact enough for
 * 10⁷ terms. */
CLONES static void norm_range(void *ctx, size_t i0, size_t i1)
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

float grad_norm(const Params *grads)
{
    size_t parts = (grads->count + PART - 1) / PART;
    GradParts gp = {grads->data, xmalloc((parts ? parts : 1) * sizeof(double))};
    parallel_for_blocks(grads->count, PART, (double)grads->count, norm_range, &gp);
    double sum = 0.0;
    for (size_t part = 0; part < parts; part++) sum += gp.sums[part];
    free(gp.sums);
    return (float)sqrt(sum);
}

float clip_factor(float norm, float max_norm)
{
    /* torch adds 1e-6 to the norm before dividing */
    if (max_norm > 0.0f && norm > max_norm) return max_norm / (norm + 1e-6f);
    return 1.0f;
}
