/* elementwise.c — the position-wise pieces: residual additions, the
 * feed-forward activation, and the input embedding with its positions. */
#include <math.h>
#include <stdint.h>

#include <string.h>

#include "gemm_f16.h"
#include "layers.h"

void residual_forward(float *out, const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = a[i] + b[i];
}

/* The sum passes its gradient unchanged to both branches.  d_a and d_b
 * must not alias d_out. */
void residual_backward(float *d_a, float *d_b, const float *d_out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        d_a[i] += d_out[i];
        d_b[i] += d_out[i];
    }
}

/* GELU as torch.nn.functional.gelu(approximate='none'): x·Φ(x). */
static float gelu(float x) { return 0.5f * x * (1.0f + erff(x * (float)M_SQRT1_2)); }

void activation_forward(float *out, const float *in, size_t n, Activation act)
{
    if (act == ACTIVATION_RELU)
        for (size_t i = 0; i < n; i++) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
    else
        for (size_t i = 0; i < n; i++) out[i] = gelu(in[i]);
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

/* in is the pre-activation value the forward read.  ReLU's derivative at
 * exactly 0 is taken as 0, as torch does. */
void activation_backward(float *d_in, const float *d_out, const float *in, size_t n,
                         Activation act)
{
    if (act == ACTIVATION_RELU)
        for (size_t i = 0; i < n; i++) {
            float g = d_out[i]; /* read unconditionally, so the loop vectorises */
            d_in[i] += in[i] > 0.0f ? g : 0.0f;
        }
    else
        for (size_t i = 0; i < n; i++) d_in[i] += d_out[i] * gelu_grad(in[i]);
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

void embedding_forward_f16(float *out, const int *ids, const uint16_t *table, int T, int D,
                           int first_pos)
{
    for (int t = 0; t < T; t++) gemm_f16_widen(out + (size_t)t * D, table + (size_t)ids[t] * D, (size_t)D);
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

void dropout_forward(float *x, float *mask, size_t n, float p, Rng *rng)
{
    /* Two decisions per 64-bit draw (24 bits each, as rng_uniform uses):
     * the generator is a visible share of a training step otherwise. */
    float keep = 1.0f / (1.0f - p);
    uint32_t threshold = (uint32_t)(p * (float)(1u << 24));
    for (size_t i = 0; i < n; i += 2) {
        uint64_t bits = rng_next(rng);
        mask[i] = (uint32_t)(bits >> 40) < threshold ? 0.0f : keep;
        if (i + 1 < n) mask[i + 1] = (uint32_t)((bits >> 16) & 0xffffff) < threshold ? 0.0f : keep;
    }
    for (size_t i = 0; i < n; i++) x[i] *= mask[i];
}

void dropout_backward(float *d_x, const float *mask, size_t n)
{
    for (size_t i = 0; i < n; i++) d_x[i] *= mask[i];
}
