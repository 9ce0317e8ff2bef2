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
#include "gemm_i8.h"
#include "layers.h"
#include "parallel.h"
#include "vector.h"

/* The bias loops are split between threads (model/parallel.h): adding it
 * by rows; its gradient, a sum over rows, by columns, each column adding
 * its rows in order, so the bits do not depend on the split. */
typedef struct {
    float *out;          /* add_bias: [N,O]; bias_grad: d_bias [O] */
    const float *in;     /* add_bias: the bias [O]; bias_grad: d_out [N,O] */
    int N, O;
} Bias;

static void add_bias_rows(void *ctx, int n0, int n1)
{
    const Bias *b = ctx;
    for (int n = n0; n < n1; n++) vec_add(b->out + (size_t)n * b->O, b->in, b->O);
}

static void add_bias(float *out, const float *bias, int N, int O)
{
    if (bias) parallel_for(N, 2.0 * N * O, add_bias_rows, &(Bias){out, bias, N, O});
}

/* Columns o0 .. o1-1 of d_bias. */
enum { COLS = 64 };

static void bias_grad_columns(void *ctx, size_t o0, size_t o1)
{
    const Bias *b = ctx;
    for (int n = 0; n < b->N; n++) vec_add(b->out + o0, b->in + (size_t)n * b->O + o0, (int)(o1 - o0));
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

void linear_forward_i8(float *out, const float *in, const int8_t *weight, const float *scale, const float *bias,
                       int N, int I, int O)
{
    gemm_i8_nt(out, in, weight, scale, N, O, I);
    add_bias(out, bias, N, O);
}

static void backward(float *d_in, bool add_to_d_in, float *d_weight, float *d_bias, const float *d_out,
                     const float *in, const float *weight, int N, int I, int O)
{
    if (d_in) gemm_nn(d_in, d_out, weight, N, I, O, add_to_d_in); /* d_out · W */
    if (d_weight) gemm_tn(d_weight, d_out, in, O, I, N, true);    /* d_outᵀ · in */
    if (d_bias)
        parallel_for_blocks((size_t)O, COLS, (double)N * O, bias_grad_columns, &(Bias){d_bias, d_out, N, O});
}

void linear_backward(float *d_in, float *d_weight, float *d_bias, const float *d_out,
                     const float *in, const float *weight, int N, int I, int O)
{
    backward(d_in, true, d_weight, d_bias, d_out, in, weight, N, I, O);
}

void linear_backward_writing_input(float *d_in, float *d_weight, float *d_bias, const float *d_out,
                                   const float *in, const float *weight, int N, int I, int O)
{
    backward(d_in, false, d_weight, d_bias, d_out, in, weight, N, I, O);
}
