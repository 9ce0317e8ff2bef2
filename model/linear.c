/* linear.c — the one matrix multiplication the model needs:
 *     out[N,O] = in[N,I] · weight[O,I]ᵀ + bias[O]
 * weight is in PyTorch's [out_features, in_features] layout, so each output
 * is a dot product of two contiguous rows.
 *
 * linear_forward/backward run on the blocked, vectorised kernels of
 * model/gemm.c.  The plain loops below them (the _reference functions) are
 * what those kernels are tested against (tests/test_layers.c). */
#include "gemm.h"
#include "layers.h"
#include "vector.h"

void linear_forward(float *out, const float *in, const float *weight, const float *bias,
                    int N, int I, int O)
{
    gemm_nt(out, in, weight, N, O, I, false);
    if (bias)
        for (int n = 0; n < N; n++) {
            float *y = out + (size_t)n * O;
            for (int o = 0; o < O; o++) y[o] += bias[o];
        }
}

void linear_backward(float *d_in, float *d_weight, float *d_bias, const float *d_out,
                     const float *in, const float *weight, int N, int I, int O)
{
    if (d_in) gemm_nn(d_in, d_out, weight, N, I, O, true);        /* d_out · W */
    if (d_weight) gemm_tn(d_weight, d_out, in, O, I, N, true);    /* d_outᵀ · in */
    if (d_bias)
        for (int n = 0; n < N; n++) {
            const float *dy = d_out + (size_t)n * O;
            for (int o = 0; o < O; o++) d_bias[o] += dy[o];
        }
}

/* ---- the plain reference loops ----------------------------------------- */


void linear_forward_reference(float *out, const float *in, const float *weight, const float *bias,
                              int N, int I, int O)
{
    for (int n = 0; n < N; n++) {
        const float *x = in + (size_t)n * I;
        float *y = out + (size_t)n * O;
        for (int o = 0; o < O; o++)
            y[o] = vec_dot(x, weight + (size_t)o * I, I) + (bias ? bias[o] : 0.0f);
    }
}

/* The three gradients of out = in · Wᵀ + b, each a sum over the dimension
 * the forward contracted or broadcast:
 *     d_in[n,i]     += Σ_o d_out[n,o] · weight[o,i]      d_out · W
 *     d_weight[o,i] += Σ_n d_out[n,o] · in[n,i]          d_outᵀ · in
 *     d_bias[o]     += Σ_n d_out[n,o]                     (bias broadcast over rows) */
void linear_backward_reference(float *d_in, float *d_weight, float *d_bias, const float *d_out,
                               const float *in, const float *weight, int N, int I, int O)
{
    for (int n = 0; n < N; n++) {
        const float *dy = d_out + (size_t)n * O;  /* [O] */
        const float *x = in + (size_t)n * I;      /* [I] */
        float *dx = d_in ? d_in + (size_t)n * I : NULL;
        for (int o = 0; o < O; o++) {
            const float *w = weight + (size_t)o * I;  /* row o of W: [I] */
            float g = dy[o];
            if (dx)
                for (int i = 0; i < I; i++) dx[i] += g * w[i];
            if (d_weight) {
                float *dw = d_weight + (size_t)o * I;
                for (int i = 0; i < I; i++) dw[i] += g * x[i];
            }
            if (d_bias) d_bias[o] += g;
        }
    }
}
