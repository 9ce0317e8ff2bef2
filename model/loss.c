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
 * lse = log Σ_c exp z_c.  lse is computed as max + log Σ exp(z - max) in
 * double, so large logits neither overflow nor lose the small terms.
 *
 * Rows whose target is ignore_id (padding) contribute nothing, and the mean
 * divides by the number of the other rows, not by N: that is torch's "mean"
 * over non-ignored targets.  If every row is ignored torch returns NaN
 * (0/0); we return 0 with zero gradients, so an empty batch is harmless. */
#include <math.h>

#include "../common/util.h"
#include "layers.h"

/* log Σ_c exp z[c], stably. */
static double log_sum_exp(const float *z, int V)
{
    float max = z[0];
    for (int c = 1; c < V; c++)
        if (z[c] > max) max = z[c];
    double sum = 0.0;
    /* expf, not exp: this loop runs over every logit of every row (the
     * largest activation there is), and float precision is plenty for
     * terms that are summed in double. */
    for (int c = 0; c < V; c++) sum += expf(z[c] - max);
    return max + log(sum);
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
            double lse = log_sum_exp(z, V), sum_z = 0.0;
            for (int c = 0; c < V; c++) sum_z += z[c];
            loss = (1.0 - smoothing) * (lse - z[t]) + smoothing * (lse - sum_z / V);
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
 * array of the step, that matters. */
float cross_entropy_forward_backward(float *d_logits, const float *logits, const int *targets,
                                     int N, int V, float smoothing, int ignore_id)
{
    int count = counted_rows(targets, N, ignore_id);
    float scale = count ? 1.0f / (float)count : 0.0f;
    float q_other = smoothing / V, q_target = q_other + 1.0f - smoothing;
    double total = 0.0;
    for (int n = 0; n < N; n++) {
        const float *z = logits + (size_t)n * V;  /* [V] */
        float *dz = d_logits + (size_t)n * V;
        int t = targets[n];
        if (t == ignore_id) {
            for (int c = 0; c < V; c++) dz[c] = 0.0f;
            continue;
        }
        ASSERT(t >= 0 && t < V);
        float max = z[0];
        for (int c = 1; c < V; c++)
            if (z[c] > max) max = z[c];
        double sum = 0.0, sum_z = 0.0;
        for (int c = 0; c < V; c++) {
            dz[c] = expf(z[c] - max);
            sum += dz[c];
            sum_z += z[c];
        }
        double lse = max + log(sum);
        total += (1.0 - smoothing) * (lse - z[t]) + smoothing * (lse - sum_z / V);
        float inv_sum = (float)(1.0 / sum);
        for (int c = 0; c < V; c++) dz[c] = (dz[c] * inv_sum - q_other) * scale;
        dz[t] -= (q_target - q_other) * scale;
    }
    return count ? (float)(total / count) : 0.0f;
}
