/* layernorm.c — layer normalisation over the last dimension, as
 * torch.nn.LayerNorm(D, eps=1e-5): biased variance, affine weight and bias.
 *
 * Row statistics are sums of D floats kept in 8 independent partial sums:
 * vectorisable without -ffast-math, and as accurate as PyTorch's own float
 * reductions (the parity tests hold to ~1e-6). */
#include <math.h>

#include "../common/util.h"
#include "layers.h"
#include "vector.h"

#define LAYERNORM_EPS 1e-5f


void layernorm_forward(float *out, float *mean, float *rstd, const float *in,
                       const float *weight, const float *bias, int N, int D)
{
    for (int n = 0; n < N; n++) {
        const float *x = in + (size_t)n * D;
        float *y = out + (size_t)n * D;
        float m = vec_sum(x, D) / (float)D;
        for (int i = 0; i < D; i++) y[i] = x[i] - m; /* centred, reused below */
        float var = vec_dot(y, y, D) / (float)D;
        float r = 1.0f / sqrtf(var + LAYERNORM_EPS);
        for (int i = 0; i < D; i++) y[i] = y[i] * r * weight[i] + bias[i];
        if (mean) mean[n] = m;
        if (rstd) rstd[n] = r;
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
    enum { MAX_D = 8192 }; /* config.c caps d_model at 8192 */
    float xhat[MAX_D], g[MAX_D];
    ASSERT(D <= MAX_D);
    for (int n = 0; n < N; n++) {
        const float *x = in + (size_t)n * D;      /* [D] */
        const float *dy = d_out + (size_t)n * D;  /* [D] */
        float *dx = d_in + (size_t)n * D;
        float m = mean[n], r = rstd[n];
        for (int i = 0; i < D; i++) {
            xhat[i] = (x[i] - m) * r;
            g[i] = dy[i] * weight[i];
        }
        float mean_g = vec_sum(g, D) / (float)D, mean_gx = vec_dot(g, xhat, D) / (float)D;
        for (int i = 0; i < D; i++) {
            dx[i] += r * (g[i] - mean_g - xhat[i] * mean_gx);
            d_weight[i] += dy[i] * xhat[i];
            d_bias[i] += dy[i];
        }
    }
}
