/* loss.c — the training loss: cross-entropy of the generator's logits
 * against the next target token, with label smoothing, as
 *     torch.nn.CrossEntropyLoss(label_smoothing=ε, ignore_index=ignore_id)
 * with its default mean reduction.
 *
 * For one row with logits z[V] and target t, log p = log_softmax(z) and the
 * target distribution is q = (1-ε)·onehot(t) + ε/V over all V classes (the
 * ignored id included, as torch does; the Annotated Transformer instead
 * gives the pad class no mass).  The row's loss is
 *     -Σ_c q_c log p_c = (1-ε)·(lse - z_t) + ε·(lse - mean(z)),
 * lse = log Σ_c exp z_c.  lse is computed as max + log Σ exp(z - max), so
 * large logits do not overflow; the exponentials and their sums (8 partial
 * sums in float, vector.h) are the vectorised loop of vector.c: over every
 * logit of every row, the largest activation there is, libm's expf was
 * most of a training step.
 *
 * Rows whose target is ignore_id (padding) contribute nothing, and the mean
 * divides by the number of the other rows, not by N: that is torch's "mean"
 * over non-ignored targets.  If every row is ignored torch returns NaN
 * (0/0); we return 0 with zero gradients, so an empty batch is harmless. */
#include <math.h>
#include <stdlib.h>

#include "../common/util.h"
#include "layers.h"
#include "parallel.h"
#include "vector.h"

/* The row's loss (1-ε)·(lse - z_t) + ε·(lse - mean(z)) (see the top). */
static double smoothed_loss(double lse, const float *z, int t, int V, float smoothing)
{
    double sum_z = vec_sum(z, V);
    return (1.0 - smoothing) * (lse - z[t]) + smoothing * (lse - sum_z / V);
}

/* Rows that count towards the mean. */
static int counted_rows(const int *targets, int N, int ignore_id)
{
    int count = 0;
    for (int n = 0; n < N; n++) count += targets[n] != ignore_id;
    return count;
}

float cross_entropy_forward(float *losses, const float *logits, const int *targets, int N, int V,
                            float smoothing, int ignore_id)
{
    double total = 0.0;
    for (int n = 0; n < N; n++) {
        const float *z = logits + (size_t)n * V;  /* [V] */
        int t = targets[n];
        double loss = 0.0;
        if (t != ignore_id) {
            ASSERT(t >= 0 && t < V);
            float max = vec_max(z, V);
            loss = smoothed_loss(max + log(vec_exp_sum(NULL, z, max, V)), z, t, V, smoothing);
        }
        if (losses) losses[n] = (float)loss;
        total += loss;
    }
    int count = counted_rows(targets, N, ignore_id);
    return count ? (float)(total / count) : 0.0f;
}

/* d(mean loss)/dz_c = (p_c - q_c) / count for a counted row, 0 for an
 * ignored one. */
void cross_entropy_backward(float *d_logits, const float *logits, const int *targets, int N,
                            int V, float smoothing, int ignore_id)
{
    cross_entropy_forward_backward(d_logits, logits, targets, N, V, smoothing, ignore_id);
}

/* Both at once, for the training step: the exponentials computed for the
 * log-sum-exp are kept in d_logits and turned into the gradient in place,
 * one exp per logit instead of three — over [N, V] logits, the largest
 * array of the step, that matters.  Rows are split between threads
 * (model/parallel.h); each row's loss goes to row_loss[n], and the losses
 * are added on the calling thread in row order, as one loop over the rows
 * would, so the bits do not depend on the split. */
typedef struct {
    float *d_logits;
    double *row_loss;  /* [N] */
    const float *logits;
    const int *targets;
    int V, ignore_id;
    float smoothing, scale;
} LossRows;

static void loss_rows(void *ctx, int n0, int n1)
{
    const LossRows *r = ctx;
    int V = r->V;
    float smoothing = r->smoothing, scale = r->scale;
    float q_other = smoothing / V, q_target = q_other + 1.0f - smoothing;
    for (int n = n0; n < n1; n++) {
        const float *z = r->logits + (size_t)n * V;  /* [V] */
        float *dz = r->d_logits + (size_t)n * V;
        int t = r->targets[n];
        r->row_loss[n] = 0.0;
        if (t == r->ignore_id) {
            for (int c = 0; c < V; c++) dz[c] = 0.0f;
            continue;
        }
        ASSERT(t >= 0 && t < V);
        float max = vec_max(z, V);
        double sum = vec_exp_sum(dz, z, max, V);
        r->row_loss[n] = smoothed_loss(max + log(sum), z, t, V, smoothing);
        float inv_sum = (float)(1.0 / sum);
        /* dz holds exp(z - max) (vec_exp_sum), so dz·inv_sum is softmax p_c:
         * the gradient is (p_c - q_c) / count, q_other for every class ... */
        for (int c = 0; c < V; c++) dz[c] = (dz[c] * inv_sum - q_other) * scale;
        dz[t] -= (q_target - q_other) * scale; /* ... and the target's larger share */
    }
}

float cross_entropy_forward_backward(float *d_logits, const float *logits, const int *targets,
                                     int N, int V, float smoothing, int ignore_id)
{
    int count = counted_rows(targets, N, ignore_id);
    LossRows r = {d_logits, xmalloc((N ? (size_t)N : 1) * sizeof(double)), logits, targets, V,
                  ignore_id, smoothing, count ? 1.0f / (float)count : 0.0f};
    parallel_for(N, 3.0 * N * V, loss_rows, &r);
    double total = 0.0;
    for (int n = 0; n < N; n++) total += r.row_loss[n];
    free(r.row_loss);
    return count ? (float)(total / count) : 0.0f;
}
