/* elementwise.c — the position-wise pieces: residual additions, the
 * feed-forward activation, dropout, and the input embedding with its
 * positions.
 *
 * The loops over whole activations (residuals, activation, dropout) are
 * split between threads (model/parallel.h) in blocks of PART floats: each
 * element's arithmetic is the same whoever runs it, and dropout's mask
 * takes draw i/2 of its generator for element i however the loop is cut
 * (rng_skip), so the bits never depend on the thread count.  The
 * embeddings stay on the calling thread: T·D floats, a small share. */
#include <math.h>
#include <stdint.h>

#include <string.h>

#include "clones.h"
#include "gemm_f16.h"
#include "layers.h"
#include "parallel.h"
#include "vector.h"

/* ---- loops over whole activations, split between threads -------------- */

/* Floats per block of parallel_for_blocks: even (dropout's two decisions
 * per draw), and large enough that a block is worth handing out. */
enum { PART = 4096 };

/* One elementwise loop: `range` runs elements i0 .. i1-1 of it. */
typedef struct Pointwise Pointwise;
struct Pointwise {
    void (*range)(const Pointwise *w, size_t i0, size_t i1);
    float *out, *out2;
    const float *a, *b, *c;
    size_t n;
    Activation act;
    float keep;          /* dropout: the scale of a kept element */
    uint32_t threshold;  /* dropout: a 24-bit draw below it drops */
    Rng rng;             /* dropout: the generator before this loop's draws */
};

static void pointwise_range(void *ctx, size_t i0, size_t i1)
{
    const Pointwise *w = ctx;
    w->range(w, i0, i1);
}

/* `streams`: arrays the loop reads or writes, to weigh its work. */
static void pointwise_run(const Pointwise *w, int streams)
{
    parallel_for_blocks(w->n, PART, (double)w->n * streams, pointwise_range, (void *)w);
}

CLONES static void residual_range(const Pointwise *w, size_t i0, size_t i1)
{
    for (size_t i = i0; i < i1; i++) w->out[i] = w->a[i] + w->b[i];
}

void residual_forward(float *out, const float *a, const float *b, size_t n)
{
    pointwise_run(&(Pointwise){.range = residual_range, .out = out, .a = a, .b = b, .n = n}, 3);
}

/* Here out is d_a, out2 d_b, a d_out and b the mask (residual_backward). */
CLONES static void residual_backward_range(const Pointwise *w, size_t i0, size_t i1)
{
    const float *mask = w->b;
    if (mask)
        for (size_t i = i0; i < i1; i++) {
            w->out[i] += w->a[i];
            w->out2[i] = w->a[i] * mask[i];
        }
    else
        for (size_t i = i0; i < i1; i++) {
            w->out[i] += w->a[i];
            w->out2[i] = w->a[i];
        }
}

/* The sum passes its gradient unchanged to both branches, the block's
 * through its dropout: one pass, where clearing d_b, adding to it and
 * multiplying it by the mask in place took three.  d_a and d_b must not
 * alias d_out. */
void residual_backward(float *d_a, float *d_b, const float *d_out, const float *mask, size_t n)
{
    Pointwise w = {.range = residual_backward_range, .out = d_a, .out2 = d_b, .a = d_out, .b = mask, .n = n};
    pointwise_run(&w, mask ? 4 : 3);
}

/* GELU as torch.nn.functional.gelu(approximate='none'): x·Φ(x). */
static float gelu(float x) { return 0.5f * x * (1.0f + erff(x * (float)M_SQRT1_2)); }

CLONES static void activation_range(const Pointwise *w, size_t i0, size_t i1)
{
    float *out = w->out;
    const float *in = w->a;
    if (w->act == ACTIVATION_RELU)
        for (size_t i = i0; i < i1; i++) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
    else
        for (size_t i = i0; i < i1; i++) out[i] = gelu(in[i]);
}

void activation_forward(float *out, const float *in, size_t n, Activation act)
{
    pointwise_run(&(Pointwise){.range = activation_range, .out = out, .a = in, .n = n, .act = act}, 2);
}

/* d/dx [x·Φ(x)] = Φ(x) + x·φ(x), φ(x) = exp(-x²/2)/√(2π) the normal
 * density: the exact derivative, as torch's gelu backward with
 * approximate='none'. */
static float gelu_grad(float x)
{
    float cdf = 0.5f * (1.0f + erff(x * (float)M_SQRT1_2));
    float pdf = expf(-0.5f * x * x) * (float)(0.5 * M_2_SQRTPI * M_SQRT1_2); /* 1/√(2π) */
    return cdf + x * pdf;
}

/* a is d_out, b the pre-activation value the forward read, c the dropout
 * multipliers or NULL.  d_out · mask is rounded first, as dropout_backward
 * would have left it in place, so the bits are those of the two passes
 * this one replaced but for the sign of a zero (they added to a cleared
 * +0, which turns −0 into +0; the weights trained either way came out
 * byte for byte the same).
 * ReLU's derivative at exactly 0 is taken as 0, as torch does. */
CLONES static void activation_backward_range(const Pointwise *w, size_t i0, size_t i1)
{
    float *d_in = w->out;
    const float *d_out = w->a, *in = w->b, *mask = w->c;
    if (w->act == ACTIVATION_RELU) {
        if (mask)
            /* Where in <= 0 (or is NaN) this multiplies 0 by the
             * multiplier (0 or 1/(1 - p)): +0, as choosing 0 gave.
             * Choosing between d_out · mask and 0 instead left the
             * multiply inside the branch, where GCC may not make it
             * unconditional (it could trap), and the AVX2 build of the
             * loop stayed scalar: 4.6% of a one-thread training step on an
             * AMD EPYC (Zen 3), 0.6% now (perf; train_bench 3,464 -> 3,667
             * tokens/s, the same bits). */
            for (size_t i = i0; i < i1; i++) d_in[i] = (in[i] > 0.0f ? d_out[i] : 0.0f) * mask[i];
        else
            for (size_t i = i0; i < i1; i++) d_in[i] = in[i] > 0.0f ? d_out[i] : 0.0f;
    } else if (mask)
        for (size_t i = i0; i < i1; i++) d_in[i] = d_out[i] * mask[i] * gelu_grad(in[i]);
    else
        for (size_t i = i0; i < i1; i++) d_in[i] = d_out[i] * gelu_grad(in[i]);
}

/* The feed-forward hidden layer's gradient, written: clearing it and
 * adding to it, and a separate pass through the dropout mask, each read or
 * wrote N·F floats (up to about 1,500 × 1,024 a layer in en-zh's batches:
 * one side's rows of a 2,500-token batch). */
void activation_backward(float *d_in, const float *d_out, const float *mask, const float *in,
                         size_t n, Activation act)
{
    Pointwise w = {.range = activation_backward_range, .out = d_in, .a = d_out, .b = in, .c = mask,
                   .n = n, .act = act};
    pointwise_run(&w, mask ? 4 : 3);
}

/* out[T,D], holding the T embedding rows, becomes row·sqrt(D) + PE in
 * place: the one copy of the scaling and the position encoding, whatever
 * the table's type. */
static void scale_and_add_positions(float *out, int T, int D, int first_pos)
{
    float scale = sqrtf((float)D);
    for (int t = 0; t < T; t++) {
        float *y = out + (size_t)t * D;
        double pos = first_pos + t;
        for (int i = 0; i < D; i += 2) {
            /* The frequency 10000^(-i/D), computed as the Annotated
             * Transformer and tools/reference.py do: exp(i · -ln(10000)/D). */
            float freq = expf((float)i * -(logf(10000.0f) / (float)D));
            float angle = (float)pos * freq;
            y[i] = y[i] * scale + sinf(angle);
            if (i + 1 < D) y[i + 1] = y[i + 1] * scale + cosf(angle);
        }
    }
}

void embedding_forward(float *out, const int *ids, const float *table, int T, int D,
                       int first_pos)
{
    for (int t = 0; t < T; t++)
        memcpy(out + (size_t)t * D, table + (size_t)ids[t] * D, (size_t)D * sizeof *out);
    scale_and_add_positions(out, T, D, first_pos);
}

void embedding_forward_f16(float *out, const int *ids, const uint16_t *table, bool packed, int T, int D,
                           int first_pos)
{
    for (int t = 0; t < T; t++)
        if (packed) gemm_f16_panel_row(out + (size_t)t * D, table, ids[t], D);
        else gemm_f16_widen(out + (size_t)t * D, table + (size_t)ids[t] * D, (size_t)D);
    scale_and_add_positions(out, T, D, first_pos);
}

/* Only the table has parameters (the positions are fixed sinusoids): row
 * ids[t] of d_table[V,D] receives sqrt(D) · d_out[t].  A token that occurs
 * several times sums the gradients of all its occurrences. */
void embedding_backward(float *d_table, const float *d_out, const int *ids, int T, int D)
{
    float scale = sqrtf((float)D); /* the same rounding as the forward */
    for (int t = 0; t < T; t++) {
        float *row = d_table + (size_t)ids[t] * D;
        const float *dy = d_out + (size_t)t * D;
        for (int i = 0; i < D; i++) row[i] += dy[i] * scale;
    }
}

/* Two decisions per 64-bit draw (24 bits each, as rng_uniform uses): the
 * generator is a visible share of a training step otherwise.  Elements
 * 2j and 2j+1 take draw j after w->rng, wherever the range starts (i0 is
 * a multiple of PART, so even). */
CLONES static void dropout_range(const Pointwise *w, size_t i0, size_t i1)
{
    Rng rng = w->rng;
    rng_skip(&rng, i0 / 2);
    vec_dropout_mask(w->out2 + i0, i1 - i0, rng.state, w->keep, w->threshold);
    for (size_t i = i0; i < i1; i++) w->out[i] *= w->out2[i];
}

void dropout_forward(float *x, float *mask, size_t n, float p, Rng *rng)
{
    Pointwise w = {.range = dropout_range, .out = x, .out2 = mask, .n = n,
                   .keep = 1.0f / (1.0f - p), .threshold = (uint32_t)(p * (float)(1u << 24)),
                   .rng = *rng};
    pointwise_run(&w, 2);
    rng_skip(rng, (n + 1) / 2); /* the draws the loop took */
}

CLONES static void dropout_backward_range(const Pointwise *w, size_t i0, size_t i1)
{
    for (size_t i = i0; i < i1; i++) w->out[i] *= w->a[i];
}

void dropout_backward(float *d_x, const float *mask, size_t n)
{
    pointwise_run(&(Pointwise){.range = dropout_backward_range, .out = d_x, .a = mask, .n = n}, 2);
}
