/* transformer.h — the encoder–decoder of "Attention Is All You Need", laid
 * out exactly as torch.nn.Transformer computes it.
 *
 *   source ids ─ embed·√D + PE ─ [encoder layer × L_enc] ─ norm ─ memory [S, D]
 *   target ids ─ embed·√D + PE ─ [decoder layer × L_dec] ─ norm ─ generator ─ logits [T, V]
 *                                  (masked self-attention, cross-attention
 *                                   with Q from the decoder and K, V from
 *                                   memory, feed-forward)
 *
 * Several sequences can be processed at once, packed one after the other
 * with no padding: rows src_start[b] .. src_start[b+1]-1 belong to source b.
 * Attention never crosses a sequence boundary, which is exactly what a
 * padding mask achieves in PyTorch, without computing the padded rows.
 *
 * Every intermediate value is kept in Activations, both because the
 * attention maps are what this program is for and because training
 * (backward) needs them.  Dimension letters: see layers.h. */
#ifndef TRANSLATE_TRANSFORMER_H
#define TRANSLATE_TRANSFORMER_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/util.h"
#include "arch.h"
#include "params.h"
#include "weights.h"

/* A batch of sequences, packed (see above).  For decoding one step at a
 * time, each target sequence has one new row at position `tgt_pos`; its
 * earlier keys and values are already in the self-attention store. */
typedef struct {
    int count;            /* B */
    const int *src_ids;   /* [Ns] source token ids, packed */
    const int *src_start; /* [B+1] */
    const int *tgt_ids;   /* [Nt] decoder input ids (<s> + target[:-1]), packed */
    const int *tgt_start; /* [B+1] */
    int tgt_pos;          /* position of each target's first row: 0 = full pass */
    const int *kv_start;  /* [B] row of position 0 of target b in the self-attention
                             K/V store; NULL means tgt_start (a full pass) */
    int kv_capacity;      /* rows reserved per target in the K/V store and in the
                             decoder attention maps; 0 means each target's length */
} Batch;

/* A Batch of one sequence and the offsets it points at. */
typedef struct {
    Batch batch;
    int src_start[2], tgt_start[2];
} OneBatch;

/* one->batch set to source src_ids[S] and target tgt_ids[T] (T 0 and
 * tgt_ids NULL for encoding only), a full pass from position 0; the caller
 * may then set tgt_pos and kv_capacity for step decoding.  Returns
 * &one->batch, valid while *one is. */
Batch *transformer_one_batch(OneBatch *one, const int *src_ids, int S, const int *tgt_ids, int T);

typedef struct {
    float *q, *k, *v;     /* [Nq, D] queries; [Nk, D] keys and values (the K/V store
                             for decoder self-attention; memory-projected for cross) */
    float *probs;         /* per sequence [H, rows, keys], packed: the attention maps */
    float *context;       /* [Nq, D] probs·V, heads side by side */
    float *out;           /* [Nq, D] after the output projection (and dropout) */
    float *out_mask;      /* [Nq, D] dropout multipliers of out (training only) */
} AttentionActs;

typedef struct {
    float *out, *mean, *rstd; /* [N, D], [N], [N] */
} NormActs;

typedef struct {
    float *hidden_pre;    /* [N, F] linear1 output */
    float *hidden;        /* [N, F] after the activation (and dropout) */
    float *out;           /* [N, D] linear2 output (and dropout) */
    float *hidden_mask;   /* [N, F] dropout multipliers (training only) */
    float *out_mask;      /* [N, D] */
} FeedForwardActs;

typedef struct {
    AttentionActs self_attn;
    FeedForwardActs ffn;
    NormActs norm1, norm2;
    float *res1, *res2;   /* [N, D] residual sums */
    float *out;           /* [N, D] the layer's output (res2 or norm2.out) */
} EncoderLayerActs;

typedef struct {
    AttentionActs self_attn, cross_attn;
    FeedForwardActs ffn;
    NormActs norm1, norm2, norm3;
    float *res1, *res2, *res3;
    float *out;
} DecoderLayerActs;

/* How big the activation buffers are. */
typedef struct {
    int src_rows;         /* source tokens in a batch */
    int tgt_rows;         /* target rows computed per call */
    int kv_rows;          /* rows of the self-attention K/V store */
    size_t enc_probs;     /* floats of encoder attention maps per layer */
    size_t dec_probs;     /* ... decoder self-attention maps per layer */
    size_t cross_probs;   /* ... cross-attention maps per layer */
    bool dropout;         /* reserve dropout masks (training) */
} ActsSize;

typedef struct {
    ActsSize size;
    int heads;            /* H, to locate each sequence's maps */
    float *block;         /* everything below points into this one allocation */
    size_t block_size;    /* floats in block */
    float dropout;        /* probability of zeroing a value; 0 at inference */
    Rng *rng;             /* draws the dropout masks when dropout > 0 */
    float *src_x;         /* [Ns, D] embedded source (and dropout) */
    float *src_mask;      /* [Ns, D] its dropout multipliers */
    EncoderLayerActs *encoder;
    NormActs encoder_norm;/* .out is the memory [Ns, D] */
    float *tgt_x;         /* [Nt, D] embedded decoder input (and dropout) */
    float *tgt_mask;      /* [Nt, D] */
    DecoderLayerActs *decoder;
    NormActs decoder_norm;
    float *logits;        /* [Nt, V] */
} Activations;

/* The sizes needed for batches of up to `src_rows` source and `tgt_rows`
 * target tokens, no sequence longer than `longest`, processed whole
 * (training, teacher forcing). */
ActsSize acts_size_full(const ModelArch *arch, int src_rows, int tgt_rows, int longest);
/* The sizes for decoding `targets` sequences of up to `cap` tokens each,
 * one step at a time, over sources of `src_rows` tokens in all, none longer
 * than `src_longest` (the encoder maps are bounded as in acts_size_full). */
ActsSize acts_size_steps(const ModelArch *arch, int targets, int cap, int src_rows, int src_longest);

void acts_alloc(Activations *acts, const ModelArch *arch, ActsSize size);
void acts_free(Activations *acts); /* NULL-safe, leaves it zeroed */

/* Encoder: src_x, every encoder layer, and memory (encoder_norm.out).
 * Also projects memory to each decoder layer's cross-attention K and V,
 * which stay fixed while the target grows. */
void transformer_encode(Activations *acts, const Model *model, const Batch *batch);

/* Decoder on the batch's target rows, then logits.  Requires
 * transformer_encode on the same batch first. */
void transformer_decode(Activations *acts, const Model *model, const Batch *batch);

/* Training.  `grad` has the layout of `acts` (acts_alloc with the same
 * size) and holds d(loss)/d(activation); the caller zeroes it
 * (acts_zero), then writes grad->logits (cross_entropy_backward).  The
 * parameter gradients are ADDED to `grads` (params_alloc'd for the same
 * arch; zero it between steps).  Dropout masks are read from `acts`. */
void transformer_backward(Activations *grad, Params *grads, const Activations *acts,
                          const Model *model, const Batch *batch);
void acts_zero(Activations *acts);

/* Where sequence b's attention maps of layer `layer` start in the packed
 * storage: a block [H, rows, stride] as AttentionShape (layers.h) lays it
 * out; rows and stride are the source length (encoder), the target's
 * capacity (tgt_cap: kv_capacity, or its length in a full pass) and, for
 * stride, the capacity (decoder) or the source length (cross). */
float *acts_encoder_map(const Activations *acts, const Batch *batch, int layer, int b);
float *acts_decoder_map(const Activations *acts, const Batch *batch, int layer, int b);
float *acts_cross_map(const Activations *acts, const Batch *batch, int layer, int b);

#endif
