/* layernorm.c — layer normalisation over the last dimension, as
 * torch.nn.LayerNorm(D, eps=1e-5): biased variance, affine weight and bias.
 * Statistics are accumulated in double so that long rows do not lose
 * precision; the result is rounded to float once.  The backward pass does
 * its row sums in double for the same reason. */
#include <math.h>

#include "layers.h"

#define LAYERNORM_EPS 1e-5

void layernorm_forward(float *out, float *mean, float *rstd, const float *in,
                       const float *weight, const float *bias, int N, int D)
{
    for (int n = 0; n < N; n++) {
        const float *x = in + (size_t)n * D;
        float *y = out + (size_t)n * D;
        double sum = 0.0;
        for (int i = 0; i < D; i++) sum += x[i];
        double m = sum / D;
        double var = 0.0;
        for (int i = 0; i < D; i++) var += (x[i] - m) * (x[i] - m);
        double r = 1.0 / sqrt(var / D + LAYERNORM_EPS);
        for (int i = 0; i < D; i++) y[i] = (float)((x[i] - m) * r) * weight[i] + bias[i];
        if (mean) mean[n] = (float)m;
        if (rstd) rstd[n] = (float)r;
    }
}

/* With x̂ = (x - mean)·rstd and y = x̂·w + b, per row of D:
 *     d_weight += d_out · x̂,   d_bias += d_out,
 *     g = d_out · w   (the gradient reaching x̂),
 *     d_in += rstd · (g - mean(g) - x̂ · mean(g · x̂)).
 * The two means are what the row's own mean and variance contribute: each
 * x_i also moves every other output of its row through them. */
void layernorm_backward(float *d_in, float *d_weight, float *d_bias, const float *d_out,
                        const float *in, const float *mean, const float *rstd,
                        const float *weight, int N, int D)
{
    for (int n = 0; n < N; n++) {
        const float *x = in + (size_t)n * D;      /* [D] */
        const float *dy = d_out + (size_t)n * D;  /* [D] */
        float *dx = d_in + (size_t)n * D;
        double m = mean[n], r = rstd[n];
        double sum_g = 0.0, sum_gx = 0.0;
        for (int i = 0; i < D; i++) {
            double xhat = (x[i] - m) * r, g = (double)dy[i] * weight[i];
            sum_g += g;
            sum_gx += g * xhat;
        }
        double mean_g = sum_g / D, mean_gx = sum_gx / D;
        for (int i = 0; i < D; i++) {
            double xhat = (x[i] - m) * r, g = (double)dy[i] * weight[i];
            dx[i] += (float)(r * (g - mean_g - xhat * mean_gx));
            d_weight[i] += (float)(dy[i] * xhat);
            d_bias[i] += dy[i];
        }
    }
}
