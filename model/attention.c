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

#include "layers.h"

/* Row-wise softmax over the first `len` entries of row; the rest are the
 * masked (future) positions and become exactly 0. */
static void softmax_prefix(float *row, int len, int total)
{
    float max = row[0];
    for (int j = 1; j < len; j++)
        if (row[j] > max) max = row[j];
    float sum = 0.0f;
    for (int j = 0; j < len; j++) {
        row[j] = expf(row[j] - max);
        sum += row[j];
    }
    float inv = 1.0f / sum;
    for (int j = 0; j < len; j++) row[j] *= inv;
    for (int j = len; j < total; j++) row[j] = 0.0f;
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
            int visible = causal ? shape.first + i + 1 : shape.keys;
            if (visible > shape.keys) visible = shape.keys;
            for (int j = 0; j < visible; j++) {
                const float *kj = k + (size_t)j * D + h * dk;
                float s = 0.0f;
                for (int c = 0; c < dk; c++) s += qi[c] * kj[c];
                p[j] = s * scale;
            }
            softmax_prefix(p, visible, shape.stride);
            float *oi = out + (size_t)i * D + h * dk;
            memset(oi, 0, (size_t)dk * sizeof *oi);
            for (int j = 0; j < visible; j++) {
                const float *vj = v + (size_t)j * D + h * dk;
                for (int c = 0; c < dk; c++) oi[c] += p[j] * vj[c];
            }
        }
    }
}

/* Backward of attention_forward, head by head and query by query, through
 * the probabilities the forward saved.  For one query row with visible
 * keys j (s = scores, p = softmax(s), o = Σ_j p_j v_j, g = d_out row):
 *     d_v[j] += p_j · g                       (o is linear in v)
 *     dp_j    = g · v_j
 *     ds_j    = p_j · (dp_j - Σ_l p_l dp_l)   (softmax's Jacobian)
 *     d_q    += scale · Σ_j ds_j k_j,   d_k[j] += scale · ds_j q
 * Masked keys (j >= visible) had p = 0 and no score: they get nothing.
 * dp_j is recomputed in the second pass rather than stored, so the kernel
 * needs no scratch memory. */
void attention_backward(float *d_q, float *d_k, float *d_v, const float *d_out,
                        const float *probs, const float *q, const float *k, const float *v,
                        AttentionShape shape, int D, int H, float scale, bool causal)
{
    int dk = D / H;
    for (int h = 0; h < H; h++) {
        for (int i = 0; i < shape.count; i++) {
            size_t qrow = (size_t)i * D + h * dk;  /* query i, head h: [dk] */
            const float *p = probs + ((size_t)h * shape.rows + shape.first + i) * shape.stride;
            const float *g = d_out + qrow;
            /* the keys this query saw, exactly as in attention_forward */
            int visible = causal ? shape.first + i + 1 : shape.keys;
            if (visible > shape.keys) visible = shape.keys;

            float p_dot_dp = 0.0f; /* Σ_l p_l dp_l */
            for (int j = 0; j < visible; j++) {
                size_t krow = (size_t)j * D + h * dk;
                float dp = 0.0f;
                for (int c = 0; c < dk; c++) {
                    dp += g[c] * v[krow + c];
                    d_v[krow + c] += p[j] * g[c];
                }
                p_dot_dp += p[j] * dp;
            }
            for (int j = 0; j < visible; j++) {
                size_t krow = (size_t)j * D + h * dk;
                float dp = 0.0f;
                for (int c = 0; c < dk; c++) dp += g[c] * v[krow + c];
                float ds = p[j] * (dp - p_dot_dp) * scale;
                for (int c = 0; c < dk; c++) {
                    d_q[qrow + c] += ds * k[krow + c];
                    d_k[krow + c] += ds * q[qrow + c];
                }
            }
        }
    }
}
