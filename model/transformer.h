/* transformer.h — the encoder–decoder of "Attention Is All You Need", laid
 * out exactly as torch.nn.Transformer computes it.
 *
 *   source ids ─ embed·√D + PE ─ [encoder layer × L_enc] ─ norm ─ memory [S, D]
 *   target ids ─ embed·√D + PE ─ [decoder layer × L_dec] ─ norm ─ generator ─ logits [T, V]
 *                                  (masked self-attention, cross-attention
 *                                   with Q from the decoder and K, V from
 *                                   memory, feed-forward)
 *
 * The two final norms are torch.nn.Transformer's: it ends each stack with
 * a LayerNorm, post-norm too, where the 2017 paper has none.
 *
 * Several sequences can be processed at once, packed one after the other
 * with no padding: rows src_start[b] .. src_start[b+1]-1 belong to source b.
 * Attention never crosses a sequence boundary, which is exactly what a
 * padding mask achieves in PyTorch, without computing the padded rows.
 *
 * Every intermediate value is kept in Activations (acts.h), but where a
 * set from acts_size_batched has the encoder layers share one layer's
 * buffers.  Dimension letters: see layers.h. */
#ifndef TRANSLATE_TRANSFORMER_H
#define TRANSLATE_TRANSFORMER_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/util.h"
#include "acts.h"
#include "arch.h"
#include "params.h"
#include "model.h"

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
    const int *src_of;    /* [B] the source whose memory target b attends to
                             (cross-attention), so several targets can share one
                             sentence's memory rows (beam hypotheses: beam.h);
                             NULL means source b */
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

/* Encoder: src_x, every encoder layer (in one layer's buffers, each over
 * the last, in a set from acts_size_batched), and memory (encoder_norm.out).
 * Also projects memory to each decoder layer's cross-attention K and V,
 * which stay fixed while the target grows. */
void transformer_encode(Activations *acts, const Model *model, const Batch *batch);

/* Decoder on the batch's target rows, then logits.  Requires
 * transformer_encode on the same batch first. */
void transformer_decode(Activations *acts, const Model *model, const Batch *batch);

/* Training.  `grad` is the gradient set of `acts` (acts_alloc with
 * acts_size_gradient of its size) and holds d(loss)/d(activation); the
 * caller zeroes it (acts_zero_gradient), then writes grad->logits
 * (cross_entropy_forward_backward, as the trainer does).  The
 * parameter gradients are ADDED to `grads` (params_alloc'd for the same
 * arch; zero it between steps).  Dropout masks are read from `acts`. */
void transformer_backward(Activations *grad, Params *grads, const Activations *acts,
                          const Model *model, const Batch *batch);

/* Where sequence b's attention maps of layer `layer` start in the packed
 * storage: a block [H, rows, stride] as AttentionShape (layers.h) lays it
 * out; rows and stride are the source length (encoder), the target's
 * capacity (tgt_cap: kv_capacity, or its length in a full pass) and, for
 * stride, the capacity (decoder) or the source length (cross). */
float *transformer_encoder_map(const Activations *acts, const Batch *batch, int layer, int b);
float *transformer_decoder_map(const Activations *acts, const Batch *batch, int layer, int b);
float *transformer_cross_map(const Activations *acts, const Batch *batch, int layer, int b);

#endif
