/* attention.c — scaled dot-product attention over all heads of one
 * sequence (see layers.h for the contract).
 *
 * The classic picture: X [T, D] is projected to Q, K, V [T, D] (done by the
 * caller with linear_forward); "splitting into H heads" is reading columns
 * h*d_k .. (h+1)*d_k-1; each head computes softmax(Q_h K_hᵀ/√d_k) V_h, and
 * "concatenating the heads" is writing the result back into the same
 * columns of out.  No data is moved to split or concatenate. */
#include <math.h>
#include <string.h>

#include "../common/util.h"
#include "layers.h"
#include "vector.h"

/* Row-wise softmax over the first `len` entries of row; the rest are the
 * masked (future) positions and become exactly 0.  Keys past `len` are
 * never scored: a softmax over the visible prefix, the rest 0, is exactly
 * what adding -inf to the masked scores gives (layers.h's "+ mask";
 * docs/attention-questions.md). */
static void softmax_prefix(float *row, int len, int total)
{
    float sum = vec_exp_sum(row, row, vec_max(row, len), len);
    float inv = 1.0f / sum;
    for (int j = 0; j < len; j++) row[j] *= inv;
    for (int j = len; j < total; j++) row[j] = 0.0f;
}

/* Keys query i of the shape may see. */
static int visible_keys(AttentionShape shape, int i, bool causal)
{
    int visible = causal ? shape.first + i + 1 : shape.keys;
    return visible < shape.keys ? visible : shape.keys;
}

void attention_forward(float *out, float *probs, const float *q, const float *k,
                       const float *v, AttentionShape shape, int D, int H, float scale,
                       bool causal)
{
    int dk = D / H;
    for (int h = 0; h < H; h++) {
        for (int i = 0; i < shape.count; i++) {
            const float *qi = q + (size_t)i * D + h * dk;
            float *p = probs + ((size_t)h * shape.rows + shape.first + i) * shape.stride;
            int visible = visible_keys(shape, i, causal);
            vec_dot_rows(p, qi, k + h * dk, (size_t)D, visible, dk); /* p_j = q_i · k_j */
            for (int j = 0; j < visible; j++) p[j] *= scale;
            softmax_prefix(p, visible, shape.stride);
            float *oi = out + (size_t)i * D + h * dk;
            memset(oi, 0, (size_t)dk * sizeof *oi);
            vec_axpy_rows(oi, p, v + h * dk, (size_t)D, visible, dk); /* o_i = Σ_j p_j v_j */
        }
    }
}

/* With s = scores, p = softmax(s), o = Σ_j p_j v_j, for one query:
 *     dp_j = d_o · v_j                     d_v_j += p_j d_o
 *     ds_j = p_j (dp_j - Σ_l p_l dp_l)     (the softmax Jacobian)
 *     d_q  += scale Σ_j ds_j k_j           d_k_j += scale ds_j q
 * Masked keys have p_j = 0 and receive nothing. */
void attention_backward(float *d_q, float *d_k, float *d_v, const float *d_out,
                        const float *probs, const float *q, const float *k, const float *v,
                        AttentionShape shape, int D, int H, float scale, bool causal)
{
    float dp[ARCH_MAX_LEN]; /* dp_j, then ds_j in its place (keys <= max_len) */
    ASSERT(shape.keys <= ARCH_MAX_LEN);
    int dk = D / H;
    for (int h = 0; h < H; h++) {
        for (int i = 0; i < shape.count; i++) {
            size_t qrow = (size_t)i * D + h * dk;  /* query i, head h: [dk] */
            const float *p = probs + ((size_t)h * shape.rows + shape.first + i) * shape.stride;
            const float *g = d_out + qrow;
            int visible = visible_keys(shape, i, causal);
            vec_dot_rows(dp, g, v + h * dk, (size_t)D, visible, dk);  /* dp_j = d_o · v_j */
            vec_axpy_each(d_v + h * dk, (size_t)D, p, g, visible, dk); /* d_v_j += p_j d_o */
            float p_dot_dp = 0.0f; /* Σ_l p_l dp_l */
            for (int j = 0; j < visible; j++) p_dot_dp += p[j] * dp[j];
            float *ds = dp;
            for (int j = 0; j < visible; j++) ds[j] = p[j] * (dp[j] - p_dot_dp) * scale;
            vec_axpy_rows(d_q + qrow, ds, k + h * dk, (size_t)D, visible, dk);  /* d_q += Σ_j ds_j k_j */
            vec_axpy_each(d_k + h * dk, (size_t)D, ds, q + qrow, visible, dk); /* d_k_j += ds_j q */
        }
    }
}
