/* linear.c — the one matrix multiplication the model needs:
 *     out[N,O] = in[N,I] · weight[O,I]ᵀ + bias[O]
 * weight is in PyTorch's [out_features, in_features] layout, so each output
 * is a dot product of two contiguous rows.
 *
 * linear_forward/backward run on the blocked, vectorised kernels of
 * model/gemm.c, which tests/test_gemm.c checks against gemm.c's plain
 * loops; tests/test_layers.c checks these two by finite differences. */
#include "gemm.h"
#include "gemm_f16.h"
#include "layers.h"

static void add_bias(float *out, const float *bias, int N, int O)
{
    if (bias)
        for (int n = 0; n < N; n++) {
            float *y = out + (size_t)n * O;
            for (int o = 0; o < O; o++) y[o] += bias[o];
        }
}

void linear_forward(float *out, const float *in, const float *weight, const float *bias,
                    int N, int I, int O)
{
    gemm_nt(out, in, weight, N, O, I, false);
    add_bias(out, bias, N, O);
}

void linear_forward_f16(float *out, const float *in, const uint16_t *weight, const float *bias,
                        int N, int I, int O)
{
    gemm_f16_nt(out, in, weight, N, O, I);
    add_bias(out, bias, N, O);
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
