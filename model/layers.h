/* layers.h — the kernels every model computation is made of.
 *
 * One place to see them all.  Each works on row-major float arrays whose
 * shapes are given with the dimension letters:
 *     N rows (tokens, possibly of several sequences packed one after the
 *       other), D d_model, F d_ff, H heads, d_k = D / H,
 *     Tq / Tk query / key length of one sequence, V vocabulary.
 * Outputs come first, then values kept for a backward pass, then inputs and
 * weights, then sizes.  Training adds a `_backward` beside each `_forward`;
 * inference and training call the very same forward functions.
 *
 * Backward passes (llm.c's order): the gradients they produce first, then
 * the upstream gradient d_out, then the saved values and the forward's
 * inputs, then sizes.  They ACCUMULATE (+=) into every gradient, so a
 * value used twice sums its gradients; they never zero one (clearing is
 * the caller's: training/trainer.c, with acts_zero_gradient and
 * parallel_zero).  A few WRITE instead (their comments say so), each a
 * gradient with one producer (the logits', a block's output, the
 * feed-forward hidden layer, an attention's context), which then needs no
 * clearing.  A gradient buffer must not alias d_out. */
#ifndef TRANSLATE_LAYERS_H
#define TRANSLATE_LAYERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/util.h"
#include "arch.h"

/* out[N,O] = in[N,I] · weight[O,I]ᵀ + bias[O]   (torch.nn.functional.linear;
 * bias may be NULL). */
void linear_forward(float *out, const float *in, const float *weight, const float *bias,
                    int N, int I, int O);
/* The same with weight float16 (gemm_f16.h), for inference. */
void linear_forward_f16(float *out, const float *in, const uint16_t *weight, const float *bias,
                        int N, int I, int O);
/* The same with weight int8, row o times scale[o] (gemm_i8.h): --int8. */
void linear_forward_i8(float *out, const float *in, const int8_t *weight, const float *scale, const float *bias,
                       int N, int I, int O);
/* d_in[N,I] += d_out·W, d_weight[O,I] += d_outᵀ·in, d_bias[O] += Σ_n d_out;
 * any of the three may be NULL to skip it. */
void linear_backward(float *d_in, float *d_weight, float *d_bias, const float *d_out,
                     const float *in, const float *weight, int N, int I, int O);
/* The same, but d_in = d_out·W is WRITTEN, not added: for an input
 * gradient nothing else adds to, which then needs no clearing first. */
void linear_backward_writing_input(float *d_in, float *d_weight, float *d_bias, const float *d_out,
                                   const float *in, const float *weight, int N, int I, int O);

/* out[N,D] = (in - mean) / sqrt(var + 1e-5) * weight + bias, per row
 * (torch.nn.LayerNorm, biased variance).  mean[N] and rstd[N] (1/std) are
 * kept for backward; either may be NULL. */
void layernorm_forward(float *out, float *mean, float *rstd, const float *in,
                       const float *weight, const float *bias, int N, int D);
/* Gradients of in[N,D], weight[D], bias[D], from the mean[N] and rstd[N]
 * the forward kept. */
void layernorm_backward(float *d_in, float *d_weight, float *d_bias, const float *d_out,
                        const float *in, const float *mean, const float *rstd,
                        const float *weight, int N, int D);

/* out[n] = a[n] + b[n]. */
void residual_forward(float *out, const float *a, const float *b, size_t n);
/* d_a[n] += d_out[n], and d_b[n] = d_out[n] · mask[n], WRITTEN: b is a
 * block's output (attention's or the feed-forward layer's), nothing else
 * adds to its gradient, and mask holds the multipliers of the dropout the
 * block ended with (NULL: none), so the gradient goes through it here. */
void residual_backward(float *d_a, float *d_b, const float *d_out, const float *mask, size_t n);

/* out[n] = relu(in[n]) or gelu(in[n]) (exact, erf-based, as torch's default). */
void activation_forward(float *out, const float *in, size_t n, Activation act);
/* d_in[n] = d_out[n] · mask[n] · act'(in[n]), in the pre-activation input
 * (exact GELU derivative Φ(x) + x·φ(x)): the backward of the activation and
 * of the dropout after it (mask: dropout_forward's multipliers, or NULL
 * without dropout) in one pass.  It WRITES d_in, the feed-forward layer's
 * hidden gradient, which nothing else adds to; d_out is left as it was. */
void activation_backward(float *d_in, const float *d_out, const float *mask, const float *in,
                         size_t n, Activation act);

/* Inverted dropout, in place: each x[i] is zeroed with probability p, or
 * scaled by 1/(1-p) so the expected value is unchanged; mask[n] keeps the
 * multiplier of each element for the backward pass. */
void dropout_forward(float *x, float *mask, size_t n, float p, Rng *rng);
/* d_x[n] *= mask[n], in place (the gradient through the same multipliers). */
void dropout_backward(float *d_x, const float *mask, size_t n);

/* out[T,D] = table[ids[t]] * sqrt(D) + PE[first_pos + t]: token embedding
 * scaled as in "Attention Is All You Need" §3.4, plus the sinusoidal
 * position encoding of §3.5:
 *     PE[p, 2i] = sin(p / 10000^(2i/D)),  PE[p, 2i+1] = cos(p / 10000^(2i/D)). */
void embedding_forward(float *out, const int *ids, const float *table, int T, int D,
                       int first_pos);
/* The same with table float16 (inference; the same bits as on its
 * widened float32 copy), row by row or, when packed, in the panels of
 * gemm_f16.h (a tied output projection's). */
void embedding_forward_f16(float *out, const int *ids, const uint16_t *table, bool packed, int T, int D,
                           int first_pos);
/* d_table[ids[t]] += d_out[t] · sqrt(D) for t < T (repeated ids sum);
 * positions have no parameters. */
void embedding_backward(float *d_table, const float *d_out, const int *ids, int T, int D);

/* Which queries of one sequence an attention call computes, and where its
 * probabilities go.  The probability block of a sequence is [H, rows,
 * stride]; query i (position first + i) fills row first + i of each head. */
typedef struct {
    int first;   /* position of the first query */
    int count;   /* queries computed: rows of q and out */
    int keys;    /* keys available: rows of k and v */
    int rows;    /* rows per head in the probability block (>= first + count) */
    int stride;  /* floats per probability row (>= keys) */
} AttentionShape;

/* Scaled dot-product attention of one sequence, all heads:
 *     probs[h] = softmax(Q_h K_hᵀ · scale + mask)
 *     out[:, h*d_k:(h+1)*d_k] = probs[h] · V_h       [count, D]
 * where Q_h is columns h*d_k..(h+1)*d_k-1 of q[count, D] (likewise K_h, V_h
 * of k[keys, D], v[keys, D]): "splitting into heads" is a column range.
 * scale is 1/sqrt(d_k), or 1 without scaling.  With `causal`, the query at
 * position p sees keys 0..p only: the same rule serves a full masked pass
 * (first 0, count T) and one cached decoding step (first t, count 1).
 * Masked and unused probabilities (up to `stride`) are exactly 0. */
void attention_forward(float *out, float *probs, const float *q, const float *k,
                       const float *v, AttentionShape shape, int D, int H, float scale,
                       bool causal);
/* Gradients of q[count,D], k[keys,D], v[keys,D] from d_out[count,D] and
 * the probs the forward wrote, with the same shape, scale and mask. */
void attention_backward(float *d_q, float *d_k, float *d_v, const float *d_out,
                        const float *probs, const float *q, const float *k, const float *v,
                        AttentionShape shape, int D, int H, float scale, bool causal);

/* ---- loss (loss.c) ---- */

/* Mean cross-entropy of logits[N,V] against targets[N], as
 * torch.nn.CrossEntropyLoss(label_smoothing=smoothing, ignore_index=ignore_id):
 * target distribution (1-ε)·onehot + ε/V.  The mean is over the rows whose
 * target is not ignore_id (0 if there are none); losses[N] (may be NULL)
 * receives each row's loss, 0 for ignored rows. */
float cross_entropy_forward(float *losses, const float *logits, const int *targets, int N, int V,
                            float smoothing, int ignore_id);
/* d_logits[N,V] = d(mean loss)/d(logits), 0 on ignored rows.  It WRITES
 * rather than accumulates: it starts the backward pass. */
void cross_entropy_backward(float *d_logits, const float *logits, const int *targets, int N,
                            int V, float smoothing, int ignore_id);
/* Both: returns the mean loss and writes d_logits, with one exponential
 * per logit (the training step's version). */
float cross_entropy_forward_backward(float *d_logits, const float *logits, const int *targets,
                                     int N, int V, float smoothing, int ignore_id);

#endif
