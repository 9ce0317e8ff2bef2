/* layernorm.c — layer normalisation over the last dimension, as
 * torch.nn.LayerNorm(D, eps=1e-5): biased variance, affine weight and bias.
 *
 * Row statistics are sums of D floats kept in 8 independent partial sums:
 * vectorisable without -ffast-math, and as accurate as PyTorch's own float
 * reductions (the parity tests hold to ~1e-6). */
#include <math.h>

#include "../common/util.h"
#include "clones.h"
#include "layers.h"
#include "parallel.h"
#include "vector.h"

#define LAYERNORM_EPS 1e-5f


/* Rows are split between threads (model/parallel.h), and in the backward
 * the weight and bias gradients, sums over rows, are split by columns
 * instead: each column still adds its rows in order, so no bit depends on
 * the split. */
typedef struct {
    float *out, *mean, *rstd;             /* forward */
    float *d_in, *d_weight, *d_bias;      /* backward */
    const float *in, *d_out, *weight, *bias;
    const float *row_mean, *row_rstd;     /* backward: the forward's statistics */
    int N, D;
} Norm;

CLONES static void forward_rows(void *ctx, int n0, int n1)
{
    const Norm *t = ctx;
    int D = t->D;
    for (int n = n0; n < n1; n++) {
        const float *x = t->in + (size_t)n * D;
        float *y = t->out + (size_t)n * D;
        float m = vec_sum(x, D) / (float)D;
        for (int i = 0; i < D; i++) y[i] = x[i] - m; /* centred, reused below */
        float var = vec_dot(y, y, D) / (float)D;
        float r = 1.0f / sqrtf(var + LAYERNORM_EPS);
        for (int i = 0; i < D; i++) y[i] = y[i] * r * t->weight[i] + t->bias[i];
        if (t->mean) t->mean[n] = m;
        if (t->rstd) t->rstd[n] = r;
    }
}

void layernorm_forward(float *out, float *mean, float *rstd, const float *in,
                       const float *weight, const float *bias, int N, int D)
{
    Norm t = {.out = out, .mean = mean, .rstd = rstd, .in = in, .weight = weight, .bias = bias,
              .N = N, .D = D};
    parallel_for(N, 3.0 * N * D, forward_rows, &t);
}

/* With x̂ = (x - mean)·rstd and y = x̂·w + b, per row of D:
 *     d_weight += d_out · x̂,   d_bias += d_out,
 *     g = d_out · w   (the gradient reaching x̂),
 *     d_in += rstd · (g - mean(g) - x̂ · mean(g · x̂)).
 * The two means are what the row's own mean and variance contribute: each
 * x_i also moves every other output of its row through them. */
enum { MAX_D = 8192 }; /* config.c caps d_model at 8192 */

CLONES static void backward_rows(void *ctx, int n0, int n1)
{
    const Norm *t = ctx;
    int D = t->D;
    float xhat[MAX_D], g[MAX_D];
    for (int n = n0; n < n1; n++) {
        const float *x = t->in + (size_t)n * D;      /* [D] */
        const float *dy = t->d_out + (size_t)n * D;  /* [D] */
        float *dx = t->d_in + (size_t)n * D;
        float m = t->row_mean[n], r = t->row_rstd[n];
        for (int i = 0; i < D; i++) {
            xhat[i] = (x[i] - m) * r;
            g[i] = dy[i] * t->weight[i];
        }
        float mean_g = vec_sum(g, D) / (float)D, mean_gx = vec_dot(g, xhat, D) / (float)D;
        for (int i = 0; i < D; i++) dx[i] += r * (g[i] - mean_g - xhat[i] * mean_gx);
    }
}

/* Columns i0 .. i1-1 of d_weight and d_bias, every row in order. */
enum { COLS = 16 };

CLONES static void backward_columns(void *ctx, size_t i0, size_t i1)
{
    const Norm *t = ctx;
    int D = t->D;
    float *dw = t->d_weight, *db = t->d_bias;
    for (int n = 0; n < t->N; n++) {
        const float *x = t->in + (size_t)n * D, *dy = t->d_out + (size_t)n * D;
        float m = t->row_mean[n], r = t->row_rstd[n];
        for (size_t i = i0; i < i1; i++) {
            dw[i] += dy[i] * ((x[i] - m) * r);
            db[i] += dy[i];
        }
    }
}

void layernorm_backward(float *d_in, float *d_weight, float *d_bias, const float *d_out,
                        const float *in, const float *mean, const float *rstd,
                        const float *weight, int N, int D)
{
    ASSERT(D <= MAX_D);
    Norm t = {.d_in = d_in, .d_weight = d_weight, .d_bias = d_bias, .in = in, .d_out = d_out,
              .weight = weight, .row_mean = mean, .row_rstd = rstd, .N = N, .D = D};
    parallel_for(N, 4.0 * N * D, backward_rows, &t);
    parallel_for_blocks((size_t)D, COLS, 3.0 * N * D, backward_columns, &t);
}
