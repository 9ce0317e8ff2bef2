/* acts.h — the activations: every intermediate value of one forward pass,
 * carved from one allocation, sized for the largest batch a caller will
 * run (transformer.h computes them; training keeps a second set for their
 * gradients, the same buffers at the same rows but for those backward only
 * reads: acts_size_gradient).
 *
 * They are kept, not overwritten layer by layer, both because the
 * attention maps are what this program is for and because backward
 * needs them (but for mini-batched decoding: acts_size_batched).
 * Dimension letters: see layers.h; Nq / Nk query / key rows. */
#ifndef TRANSLATE_ACTS_H
#define TRANSLATE_ACTS_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/util.h"
#include "arch.h"

typedef struct {
    float *q, *k, *v;     /* [Nq, D] queries; [Nk, D] keys and values (the K/V store
                             for decoder self-attention; memory-projected for cross) */
    float *probs;         /* per sequence [H, rows, stride] (layers.h's AttentionShape;
                             stride >= keys, the unused end 0), packed: the attention maps */
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
    bool gradient;        /* a gradient set (acts_size_gradient) */
    bool one_encoder_layer; /* every encoder layer in the same buffers (acts_size_batched) */
} ActsSize;

typedef struct {
    ActsSize size;
    int heads;            /* H, to locate each sequence's maps */
    void *allocation;     /* what holds block (owned; block is its first cache line) */
    float *block;         /* everything below points into this one block */
    size_t block_size;    /* floats in block */
    float dropout;        /* probability of zeroing a value; 0 at inference */
    Rng *rng;             /* draws the dropout masks when dropout > 0 */
    float *src_x;         /* [Ns, D] embedded source (and dropout) */
    float *src_mask;      /* [Ns, D] its dropout multipliers (0 or 1/(1-p); no attention mask) */
    EncoderLayerActs *encoder;
    NormActs encoder_norm;/* .out is the memory [Ns, D] */
    float *tgt_x;         /* [Nt, D] embedded decoder input (and dropout) */
    float *tgt_mask;      /* [Nt, D] likewise (PyTorch's tgt_mask is the causal mask: not this) */
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
/* `size` for decoding that shows no attention maps (mini-batches of plain
 * output: decode_greedy_many, beam_decode_many): the encoder layers share
 * one layer's buffers, each writing over the one before, since only the
 * encoder's output is read afterwards.  Each layer reads its input (the
 * buffer it will write its own output to) only before it writes that
 * output.  Translating en-zh's 1,000 dev sentences from a file (greedy,
 * mini-batches of 32, 2 threads): 15,000 page faults instead of 23,600,
 * 3% less CPU time, peak RSS 79 MB instead of 113. */
ActsSize acts_size_batched(ActsSize size);
/* The sizes of the gradient set for activations of `size` (training): the
 * same buffers at the same rows, but for what backward reads from the
 * activations themselves and never writes as a gradient (the attention
 * maps, the dropout masks, LayerNorm's mean and rstd), which it leaves
 * NULL.  For en-zh's batches of 2,500 tokens (train_bench's: room for
 * 1,121 source and 1,485 target rows) that is 81 of 291 MB; and of the
 * set's 210 MB a step clears 82 (acts_zero_gradient: not the gradients
 * backward writes whole), where it once cleared 179. */
ActsSize acts_size_gradient(ActsSize size);

void acts_alloc(Activations *acts, const ModelArch *arch, ActsSize size);
size_t acts_bytes(const ModelArch *arch, ActsSize size); /* what acts_alloc would allocate */
/* acts_fit without the growth margin and without giving up: `work` kept
 * when it can hold `size`, else reallocated to exactly `size`; when that
 * cannot be had (calloc fails: an address-space limit, strict
 * overcommit), left as it was and false returned.  For room asked for in
 * advance, which nothing needs yet. */
bool acts_reserve(Activations *work, const ModelArch *arch, ActsSize size);
void acts_free(Activations *acts); /* NULL-safe, leaves it zeroed */
/* `work` (zeroed, or from an earlier call) able to hold `need`, kept as it
 * is when it already can: decoding one mini-batch after another reuses one
 * allocation instead of fresh pages each time.  The caller acts_frees it. */
void acts_fit(Activations *work, const ModelArch *arch, ActsSize need);
/* A gradient set ready for the next backward pass: every value 0 but the
 * gradients written whole before they are read (layers.h's WRITES): the
 * logits', whose Nt rows of the batch the loss writes
 * (cross_entropy_forward_backward; backward reads no other row of it), each
 * block's output (attention's and the feed-forward layer's), each
 * attention's context and each feed-forward hidden layer.  Every other
 * gradient is accumulated into. */
void acts_zero_gradient(Activations *grad);

#endif
