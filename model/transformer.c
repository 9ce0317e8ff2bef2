/* transformer.c — forward and backward passes of the encoder and decoder
 * (see transformer.h), one function per block, each a column of kernel
 * calls from layers.h, and each block's backward (training) right after
 * its forward, undoing it in reverse.  The three attentions are one block
 * (attention_block / _backward): they differ only in where their keys and
 * values come from (project_keys_values), and in where each sequence's
 * queries, keys, values and maps are and the causal flag
 * (sequence_attention). */
#include "transformer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "layers.h"
#include "parallel.h"

/* ---- batches ------------------------------------------------------------- */

Batch *transformer_one_batch(OneBatch *one, const int *src_ids, int S, const int *tgt_ids, int T)
{
    one->src_start[0] = 0;
    one->src_start[1] = S;
    one->tgt_start[0] = 0;
    one->tgt_start[1] = T;
    one->batch = (Batch){.count = 1, .src_ids = src_ids, .src_start = one->src_start,
                         .tgt_ids = tgt_ids, .tgt_start = one->tgt_start};
    return &one->batch;
}

/* ---- where each sequence's attention maps live ------------------------- */

static int src_len(const Batch *b, int i) { return b->src_start[i + 1] - b->src_start[i]; }
static int tgt_rows(const Batch *b, int i) { return b->tgt_start[i + 1] - b->tgt_start[i]; }

/* Rows reserved for target i: the store capacity when decoding step by
 * step, the target's own length in a full pass. */
static int tgt_cap(const Batch *b, int i) { return b->kv_capacity ? b->kv_capacity : tgt_rows(b, i); }

static int kv_start(const Batch *b, int i) { return b->kv_start ? b->kv_start[i] : b->tgt_start[i]; }

/* The source target i attends to (cross-attention). */
static int source_of(const Batch *b, int i) { return b->src_of ? b->src_of[i] : i; }

/* Offsets (in floats, within one layer) of sequence i's map blocks. */
static size_t encoder_map_offset(const Batch *b, int i, int H)
{
    size_t off = 0;
    for (int j = 0; j < i; j++) off += (size_t)H * src_len(b, j) * src_len(b, j);
    return off;
}

static size_t decoder_map_offset(const Batch *b, int i, int H)
{
    size_t off = 0;
    for (int j = 0; j < i; j++) off += (size_t)H * tgt_cap(b, j) * tgt_cap(b, j);
    return off;
}

static size_t cross_map_offset(const Batch *b, int i, int H)
{
    size_t off = 0;
    for (int j = 0; j < i; j++) off += (size_t)H * tgt_cap(b, j) * src_len(b, source_of(b, j));
    return off;
}

float *transformer_encoder_map(const Activations *a, const Batch *b, int layer, int i)
{
    ASSERT(!a->size.one_encoder_layer); /* its layers' maps are all the last one's */
    return a->encoder[layer].self_attn.probs + encoder_map_offset(b, i, a->heads);
}

float *transformer_decoder_map(const Activations *a, const Batch *b, int layer, int i)
{
    return a->decoder[layer].self_attn.probs + decoder_map_offset(b, i, a->heads);
}

float *transformer_cross_map(const Activations *a, const Batch *b, int layer, int i)
{
    return a->decoder[layer].cross_attn.probs + cross_map_offset(b, i, a->heads);
}

/* ---- the blocks ----------------------------------------------------------
 *
 * Each block's forward is followed by its backward, which undoes it in
 * reverse order.  `g` holds gradients with the layout of the activations
 * `a`: g->res1 is d(loss)/d(a->res1), and so on.  Kernels accumulate (+=),
 * so a value used twice (an input feeding both a sublayer and its
 * residual) simply receives both contributions. */

static float attention_scale(const ModelArch *arch)
{
    return arch->scale_attention ? 1.0f / sqrtf((float)(arch->d_model / arch->heads)) : 1.0f;
}

/* Dropout (training only) where torch.nn.Transformer's layers place it —
 * on every sublayer's output before its residual addition, and on the
 * feed-forward hidden layer — and, as the paper (§5.4) and
 * tools/reference.py's wrapper do, on the embeddings, which
 * nn.Transformer does not have.  (PyTorch also drops attention
 * probabilities; we keep them whole, so the maps stay exact.) */
typedef struct {
    float p;
    Rng *rng;
} Dropout;

static void maybe_dropout(float *x, float *mask, size_t n, Dropout drop)
{
    if (drop.p > 0.0f) dropout_forward(x, mask, n, drop.p, drop.rng);
}

static const float *norm_forward(NormActs *a, const NormParams *p, const float *x, int N, int D)
{
    layernorm_forward(a->out, a->mean, a->rstd, x, p->weight, p->bias, N, D);
    return a->out;
}

static void norm_backward(float *d_x, NormParams *dp, const float *d_out, const NormActs *a,
                          const NormParams *p, const float *x, int N, int D)
{
    layernorm_backward(d_x, dp->weight, dp->bias, d_out, x, a->mean, a->rstd, p->weight, N, D);
}

/* out[N,O] = x[N,I] · rows row0..row0+O-1 of a weight matrix ᵀ + bias,
 * through its int8 twin when the model has one (w8, --int8), else as the
 * model keeps it: float32 (w) or float16 (w16, inference on a float16
 * file: params.h; w is then NULL). */
static void linear(float *out, const float *x, const float *w, const uint16_t *w16, const Int8Matrix *w8,
                   size_t row0, const float *bias, int N, int I, int O)
{
    if (w8->q) linear_forward_i8(out, x, w8->q + row0 * I, w8->scale + row0, bias, N, I, O);
    else if (w16) linear_forward_f16(out, x, w16 + row0 * I, bias, N, I, O);
    else linear_forward(out, x, w + row0 * I, bias, N, I, O);
}

static void embed(float *out, const int *ids, const float *table, const uint16_t *table16, bool packed,
                  int T, int D, int first_pos)
{
    if (table16) embedding_forward_f16(out, ids, table16, packed, T, D, first_pos);
    else embedding_forward(out, ids, table, T, D, first_pos);
}

/* in_proj_weight stacks W_Q, W_K, W_V: row blocks 0, 1, 2 of [3D, D]. */
static void project(float *out, const float *x, const AttentionParams *p, int which, int N, int D)
{
    size_t off = (size_t)which * D;
    linear(out, x, p->in_proj_weight, p->in_proj_weight_f16, &p->in_proj_weight_i8, off, p->in_proj_bias + off,
           N, D, D);
}

static void project_backward(float *d_x, AttentionParams *dp, const float *d_out, const float *x,
                             const AttentionParams *p, int which, int N, int D)
{
    size_t off = (size_t)which * D;
    linear_backward(d_x, dp->in_proj_weight + off * D, dp->in_proj_bias + off, d_out, x,
                    p->in_proj_weight + off * D, N, D, D);
}

enum { PROJ_Q, PROJ_K, PROJ_V };

/* The output projection that follows the heads' concatenation. */
static void attention_output(AttentionActs *a, const AttentionParams *p, int N, int D, Dropout drop)
{
    linear(a->out, a->context, p->out_proj_weight, p->out_proj_weight_f16, &p->out_proj_weight_i8, 0,
           p->out_proj_bias, N, D, D);
    maybe_dropout(a->out, a->out_mask, (size_t)N * D, drop);
}

/* Through the output projection to d(context), from d(out) already
 * through the block's dropout (residual_backward applies its mask). */
static void attention_output_backward(AttentionActs *g, AttentionParams *dp, const AttentionActs *a,
                                      const AttentionParams *p, int N, int D)
{
    linear_backward_writing_input(g->context, dp->out_proj_weight, dp->out_proj_bias, g->out, a->context,
                                  p->out_proj_weight, N, D, D);
}

/* The three attentions differ only in where each sequence's queries, keys,
 * values and maps are, and in the causal mask: */
typedef enum { ENCODER_SELF, DECODER_SELF, CROSS } AttentionKind;

typedef struct {
    size_t q_row, kv_row;  /* first row of the sequence's queries; of its keys/values */
    size_t map;            /* floats from the layer's probs to its map block */
    AttentionShape shape;
    bool causal;
} SequenceAttention;

/* Sequence i's part of an attention of `kind` over batch b.
 *   encoder self: S queries over the S keys of its own source
 *   decoder self: the new target rows over the K/V store up to them (causal)
 *   cross:        the new target rows over the S keys of its source's memory
 * In a full pass (training) tgt_pos is 0, the store rows are the target
 * rows and tgt_cap is the target's length. */
static SequenceAttention sequence_attention(AttentionKind kind, const Batch *b, int i, int H)
{
    if (kind == ENCODER_SELF) { /* an encoder-only batch may have no target side */
        size_t src = (size_t)b->src_start[i];
        int S = src_len(b, i);
        return (SequenceAttention){src, src, encoder_map_offset(b, i, H), {0, S, S, S, S}, false};
    }
    size_t tgt = (size_t)b->tgt_start[i];
    int n = tgt_rows(b, i), pos = b->tgt_pos, cap = tgt_cap(b, i);
    if (kind == DECODER_SELF)
        return (SequenceAttention){tgt, (size_t)kv_start(b, i), decoder_map_offset(b, i, H),
                                   {pos, n, pos + n, cap, cap}, true};
    int source = source_of(b, i), S = src_len(b, source);
    return (SequenceAttention){tgt, (size_t)b->src_start[source], cross_map_offset(b, i, H),
                               {pos, n, S, cap, S}, false};
}

/* One attention over a batch, sequence by sequence: attention never
 * crosses a sequence boundary (the padding mask, see transformer.h).  The
 * sequences are split between threads (model/parallel.h): each writes only
 * its own rows, so the bits do not depend on the split. */
typedef struct {
    AttentionActs *w;        /* what the pass writes: a itself (forward) or its gradients */
    const AttentionActs *a;  /* the forward's values */
    AttentionKind kind;
    const Batch *b;
    const ModelArch *arch;
} Attend;

/* a->context from a->q, a->k, a->v for sequences i0 .. i1-1. */
static void attend_range(void *ctx, int i0, int i1)
{
    const Attend *t = ctx;
    const AttentionActs *a = t->a;
    int D = t->arch->d_model, H = t->arch->heads;
    for (int i = i0; i < i1; i++) {
        SequenceAttention s = sequence_attention(t->kind, t->b, i, H);
        size_t q = s.q_row * D, kv = s.kv_row * D;
        attention_forward(t->w->context + q, t->w->probs + s.map, a->q + q, a->k + kv, a->v + kv, s.shape,
                          D, H, attention_scale(t->arch), s.causal);
    }
}

/* d(context) in g to g->q, g->k, g->v for sequences i0 .. i1-1, with the
 * maps the forward kept. */
static void attend_backward_range(void *ctx, int i0, int i1)
{
    const Attend *t = ctx;
    AttentionActs *g = t->w;
    const AttentionActs *a = t->a;
    int D = t->arch->d_model, H = t->arch->heads;
    for (int i = i0; i < i1; i++) {
        SequenceAttention s = sequence_attention(t->kind, t->b, i, H);
        size_t q = s.q_row * D, kv = s.kv_row * D;
        attention_backward(g->q + q, g->k + kv, g->v + kv, g->context + q, a->probs + s.map, a->q + q,
                           a->k + kv, a->v + kv, s.shape, D, H, attention_scale(t->arch), s.causal);
    }
}

/* The multiply-adds of one attention pass: each query against each key it
 * sees (at most all of its sequence's), twice (scores, weighted sum). */
static double attend_work(const Attend *t)
{
    double work = 0.0;
    for (int i = 0; i < t->b->count; i++) {
        SequenceAttention s = sequence_attention(t->kind, t->b, i, t->arch->heads);
        work += 2.0 * s.shape.count * s.shape.keys * t->arch->d_model;
    }
    return work;
}

static void attend(AttentionActs *a, AttentionKind kind, const Batch *b, const ModelArch *arch)
{
    Attend t = {a, a, kind, b, arch};
    parallel_for(b->count, attend_work(&t), attend_range, &t);
}

/* Several targets reading one source (src_of) would add into the same
 * rows of g->k, g->v: that backward stays on one thread.  Training's
 * batches give each target its own source. */
static void attend_backward(AttentionActs *g, const AttentionActs *a, AttentionKind kind,
                            const Batch *b, const ModelArch *arch)
{
    Attend t = {g, a, kind, b, arch};
    if (b->src_of) attend_backward_range(&t, 0, b->count);
    else parallel_for(b->count, 2.0 * attend_work(&t), attend_backward_range, &t);
}

/* Rows of queries: the sources' for the encoder, the targets' otherwise. */
static int query_rows(AttentionKind kind, const Batch *b)
{
    return kind == ENCODER_SELF ? b->src_start[b->count] : b->tgt_start[b->count];
}

/* The keys and values of a self-attention: of every source row (encoder),
 * or of the new target rows, written into the K/V store at their positions
 * (decoder: earlier steps' rows are already there).  Cross-attention's are
 * the memory's, projected once in transformer_encode. */
static void project_keys_values(AttentionActs *a, const AttentionParams *p, const float *x,
                                AttentionKind kind, const Batch *b, int D)
{
    if (kind == ENCODER_SELF || (kind == DECODER_SELF && !b->kv_start && b->tgt_pos == 0)) {
        /* A full pass (the encoder; the decoder in training or teacher
         * forced): each row's key and value go to its own row, so one
         * product serves every sequence.  Per sequence, training's short
         * targets took the few-rows path on one thread (perf: 1.3% of a
         * step). */
        int N = query_rows(kind, b);
        project(a->k, x, p, PROJ_K, N, D);
        project(a->v, x, p, PROJ_V, N, D);
        return;
    }
    if (kind == DECODER_SELF && b->count > 1 && b->tgt_start[b->count] == b->count) {
        /* A decoding step of several sequences (a mini-batch, beam
         * hypotheses), one new row each: one product for all rows, K into
         * a->context and V into a->out (both written only later, by attend
         * and attention_output), then each row copied to its place in the
         * store.  One row at a time read the weights once per sequence
         * (perf: a third of a mini-batched step's products).  Each row's
         * sums are those it gets alone wherever gemm_f16.h promises it
         * (its AVX2 and AVX-512 kernels). */
        int N = b->count;
        project(a->context, x, p, PROJ_K, N, D);
        project(a->out, x, p, PROJ_V, N, D);
        for (int i = 0; i < N; i++) {
            size_t store = (size_t)(kv_start(b, i) + b->tgt_pos) * D;
            memcpy(a->k + store, a->context + (size_t)i * D, (size_t)D * sizeof(float));
            memcpy(a->v + store, a->out + (size_t)i * D, (size_t)D * sizeof(float));
        }
        return;
    }
    for (int i = 0; kind == DECODER_SELF && i < b->count; i++) {
        int n = tgt_rows(b, i);
        const float *xi = x + (size_t)b->tgt_start[i] * D;
        size_t store = (size_t)(kv_start(b, i) + b->tgt_pos) * D;
        project(a->k + store, xi, p, PROJ_K, n, D);
        project(a->v + store, xi, p, PROJ_V, n, D);
    }
}

/* One multi-head attention sublayer of `kind`, as nn.MultiheadAttention:
 * encoder self-attention (every source token attends to every source token
 * of its own sentence), decoder masked self-attention (each query sees its
 * own sequence up to its own position), or cross-attention (queries from
 * the decoder, keys and values from the encoder's output). */
static void attention_block(AttentionActs *a, const AttentionParams *p, const float *x, AttentionKind kind,
                            Dropout drop, const Batch *b, const ModelArch *arch)
{
    int D = arch->d_model, N = query_rows(kind, b);
    project(a->q, x, p, PROJ_Q, N, D);
    project_keys_values(a, p, x, kind, b, D);
    attend(a, kind, b, arch);
    attention_output(a, p, N, D, drop);
}

/* Training always runs full passes, so a self-attention's K/V store rows
 * are its input rows.  Cross-attention's d(keys) and d(values) stay in
 * g->k, g->v: they flow to memory once all decoder layers are done
 * (transformer_backward). */
static void attention_block_backward(AttentionActs *g, AttentionParams *dp, float *d_x,
                                     const AttentionActs *a, const AttentionParams *p, const float *x,
                                     AttentionKind kind, const Batch *b, const ModelArch *arch)
{
    int D = arch->d_model, N = query_rows(kind, b);
    attention_output_backward(g, dp, a, p, N, D);
    attend_backward(g, a, kind, b, arch);
    project_backward(d_x, dp, g->q, x, p, PROJ_Q, N, D);
    if (kind == CROSS) return;
    project_backward(d_x, dp, g->k, x, p, PROJ_K, N, D);
    project_backward(d_x, dp, g->v, x, p, PROJ_V, N, D);
}

/* position-wise feed-forward: linear2(dropout(activation(linear1(x)))) */
static void ffn_forward(FeedForwardActs *a, const FeedForwardParams *p, const float *x, int N,
                        const ModelArch *arch, Dropout drop)
{
    int D = arch->d_model, F = arch->d_ff;
    linear(a->hidden_pre, x, p->linear1_weight, p->linear1_weight_f16, &p->linear1_weight_i8, 0, p->linear1_bias,
           N, D, F);
    activation_forward(a->hidden, a->hidden_pre, (size_t)N * F, arch->activation);
    maybe_dropout(a->hidden, a->hidden_mask, (size_t)N * F, drop);
    linear(a->out, a->hidden, p->linear2_weight, p->linear2_weight_f16, &p->linear2_weight_i8, 0, p->linear2_bias,
           N, F, D);
    maybe_dropout(a->out, a->out_mask, (size_t)N * D, drop);
}

/* From d(out), already through the dropout after linear2 (as above). */
static void ffn_backward(FeedForwardActs *g, FeedForwardParams *dp, float *d_x,
                         const FeedForwardActs *a, const FeedForwardParams *p, const float *x, int N,
                         const ModelArch *arch)
{
    int D = arch->d_model, F = arch->d_ff;
    linear_backward_writing_input(g->hidden, dp->linear2_weight, dp->linear2_bias, g->out, a->hidden,
                                  p->linear2_weight, N, F, D);
    activation_backward(g->hidden_pre, g->hidden, a->hidden_mask, a->hidden_pre, (size_t)N * F,
                        arch->activation);
    linear_backward(d_x, dp->linear1_weight, dp->linear1_bias, g->hidden_pre, x, p->linear1_weight,
                    N, D, F);
}

/* One encoder layer, as torch.nn.TransformerEncoderLayer:
 *   post-norm: x = norm1(x + SA(x));        x = norm2(x + FF(x))
 *   pre-norm:  x = x + SA(norm1(x));        x = x + FF(norm2(x)) */
static void encoder_layer_forward(EncoderLayerActs *a, const EncoderLayerParams *p,
                                  const float *x, const Batch *b, const ModelArch *arch, Dropout drop)
{
    int N = b->src_start[b->count], D = arch->d_model;
    size_t n = (size_t)N * D;
    bool pre = arch->norm_first;

    attention_block(&a->self_attn, &p->self_attn, pre ? norm_forward(&a->norm1, &p->norm1, x, N, D) : x,
                    ENCODER_SELF, drop, b, arch);
    residual_forward(a->res1, x, a->self_attn.out, n);
    const float *h = pre ? a->res1 : norm_forward(&a->norm1, &p->norm1, a->res1, N, D);

    ffn_forward(&a->ffn, &p->ffn, pre ? norm_forward(&a->norm2, &p->norm2, h, N, D) : h, N, arch, drop);
    residual_forward(a->res2, h, a->ffn.out, n);
    a->out = pre ? a->res2 : (float *)norm_forward(&a->norm2, &p->norm2, a->res2, N, D);
}

/* Where the gradient of a layer's output lives (its `out` buffer). */
static float *encoder_out_grad(EncoderLayerActs *g, bool pre) { return pre ? g->res2 : g->norm2.out; }
static float *decoder_out_grad(DecoderLayerActs *g, bool pre) { return pre ? g->res3 : g->norm3.out; }

static void encoder_layer_backward(EncoderLayerActs *g, EncoderLayerParams *dp, float *d_x,
                                   const EncoderLayerActs *a, const EncoderLayerParams *p,
                                   const float *x, const Batch *b, const ModelArch *arch)
{
    int N = b->src_start[b->count], D = arch->d_model;
    size_t n = (size_t)N * D;
    if (arch->norm_first) {
        residual_backward(g->res1, g->ffn.out, g->res2, a->ffn.out_mask, n);
        ffn_backward(&g->ffn, &dp->ffn, g->norm2.out, &a->ffn, &p->ffn, a->norm2.out, N, arch);
        norm_backward(g->res1, &dp->norm2, g->norm2.out, &a->norm2, &p->norm2, a->res1, N, D);
        residual_backward(d_x, g->self_attn.out, g->res1, a->self_attn.out_mask, n);
        attention_block_backward(&g->self_attn, &dp->self_attn, g->norm1.out, &a->self_attn,
                                 &p->self_attn, a->norm1.out, ENCODER_SELF, b, arch);
        norm_backward(d_x, &dp->norm1, g->norm1.out, &a->norm1, &p->norm1, x, N, D);
    } else {
        norm_backward(g->res2, &dp->norm2, g->norm2.out, &a->norm2, &p->norm2, a->res2, N, D);
        residual_backward(g->norm1.out, g->ffn.out, g->res2, a->ffn.out_mask, n);
        ffn_backward(&g->ffn, &dp->ffn, g->norm1.out, &a->ffn, &p->ffn, a->norm1.out, N, arch);
        norm_backward(g->res1, &dp->norm1, g->norm1.out, &a->norm1, &p->norm1, a->res1, N, D);
        residual_backward(d_x, g->self_attn.out, g->res1, a->self_attn.out_mask, n);
        attention_block_backward(&g->self_attn, &dp->self_attn, d_x, &a->self_attn,
                                 &p->self_attn, x, ENCODER_SELF, b, arch);
    }
}

/* One decoder layer, as torch.nn.TransformerDecoderLayer:
 *   post-norm: x = norm1(x + SA(x)); x = norm2(x + CA(x, mem)); x = norm3(x + FF(x))
 *   pre-norm:  x = x + SA(norm1(x)); x = x + CA(norm2(x), mem); x = x + FF(norm3(x)) */
static void decoder_layer_forward(DecoderLayerActs *a, const DecoderLayerParams *p,
                                  const float *x, const Batch *b, const ModelArch *arch, Dropout drop)
{
    int N = b->tgt_start[b->count], D = arch->d_model;
    size_t n = (size_t)N * D;
    bool pre = arch->norm_first;

    attention_block(&a->self_attn, &p->self_attn, pre ? norm_forward(&a->norm1, &p->norm1, x, N, D) : x,
                    DECODER_SELF, drop, b, arch);
    residual_forward(a->res1, x, a->self_attn.out, n);
    const float *h1 = pre ? a->res1 : norm_forward(&a->norm1, &p->norm1, a->res1, N, D);

    attention_block(&a->cross_attn, &p->cross_attn, pre ? norm_forward(&a->norm2, &p->norm2, h1, N, D) : h1,
                    CROSS, drop, b, arch);
    residual_forward(a->res2, h1, a->cross_attn.out, n);
    const float *h2 = pre ? a->res2 : norm_forward(&a->norm2, &p->norm2, a->res2, N, D);

    ffn_forward(&a->ffn, &p->ffn, pre ? norm_forward(&a->norm3, &p->norm3, h2, N, D) : h2, N, arch, drop);
    residual_forward(a->res3, h2, a->ffn.out, n);
    a->out = pre ? a->res3 : (float *)norm_forward(&a->norm3, &p->norm3, a->res3, N, D);
}

static void decoder_layer_backward(DecoderLayerActs *g, DecoderLayerParams *dp, float *d_x,
                                   const DecoderLayerActs *a, const DecoderLayerParams *p,
                                   const float *x, const Batch *b, const ModelArch *arch)
{
    int N = b->tgt_start[b->count], D = arch->d_model;
    size_t n = (size_t)N * D;
    if (arch->norm_first) {
        residual_backward(g->res2, g->ffn.out, g->res3, a->ffn.out_mask, n);
        ffn_backward(&g->ffn, &dp->ffn, g->norm3.out, &a->ffn, &p->ffn, a->norm3.out, N, arch);
        norm_backward(g->res2, &dp->norm3, g->norm3.out, &a->norm3, &p->norm3, a->res2, N, D);
        residual_backward(g->res1, g->cross_attn.out, g->res2, a->cross_attn.out_mask, n);
        attention_block_backward(&g->cross_attn, &dp->cross_attn, g->norm2.out, &a->cross_attn,
                                 &p->cross_attn, a->norm2.out, CROSS, b, arch);
        norm_backward(g->res1, &dp->norm2, g->norm2.out, &a->norm2, &p->norm2, a->res1, N, D);
        residual_backward(d_x, g->self_attn.out, g->res1, a->self_attn.out_mask, n);
        attention_block_backward(&g->self_attn, &dp->self_attn, g->norm1.out, &a->self_attn,
                                 &p->self_attn, a->norm1.out, DECODER_SELF, b, arch);
        norm_backward(d_x, &dp->norm1, g->norm1.out, &a->norm1, &p->norm1, x, N, D);
    } else {
        norm_backward(g->res3, &dp->norm3, g->norm3.out, &a->norm3, &p->norm3, a->res3, N, D);
        residual_backward(g->norm2.out, g->ffn.out, g->res3, a->ffn.out_mask, n);
        ffn_backward(&g->ffn, &dp->ffn, g->norm2.out, &a->ffn, &p->ffn, a->norm2.out, N, arch);
        norm_backward(g->res2, &dp->norm2, g->norm2.out, &a->norm2, &p->norm2, a->res2, N, D);
        residual_backward(g->norm1.out, g->cross_attn.out, g->res2, a->cross_attn.out_mask, n);
        attention_block_backward(&g->cross_attn, &dp->cross_attn, g->norm1.out, &a->cross_attn,
                                 &p->cross_attn, a->norm1.out, CROSS, b, arch);
        norm_backward(g->res1, &dp->norm1, g->norm1.out, &a->norm1, &p->norm1, a->res1, N, D);
        residual_backward(d_x, g->self_attn.out, g->res1, a->self_attn.out_mask, n);
        attention_block_backward(&g->self_attn, &dp->self_attn, d_x, &a->self_attn,
                                 &p->self_attn, x, DECODER_SELF, b, arch);
    }
}

/* ---- the whole model ----------------------------------------------------- */

void transformer_encode(Activations *a, const Model *m, const Batch *b)
{
    const ModelArch *arch = &m->arch;
    int D = arch->d_model, N = b->src_start[b->count];
    ASSERT(N <= a->size.src_rows);
    for (int i = 0; i < b->count; i++)
        embed(a->src_x + (size_t)b->src_start[i] * D, b->src_ids + b->src_start[i], m->params.src_embed,
              m->params.src_embed_f16, false, src_len(b, i), D, 0);
    Dropout drop = {a->dropout, a->rng};
    maybe_dropout(a->src_x, a->src_mask, (size_t)N * D, drop);
    const float *x = a->src_x;
    for (int l = 0; l < arch->encoder_layers; l++) {
        encoder_layer_forward(&a->encoder[l], &m->params.encoder[l], x, b, arch, drop);
        x = a->encoder[l].out;
    }
    const float *memory = norm_forward(&a->encoder_norm, &m->params.encoder_norm, x, N, D);
    for (int l = 0; l < arch->decoder_layers; l++) {
        AttentionActs *ca = &a->decoder[l].cross_attn;
        project(ca->k, memory, &m->params.decoder[l].cross_attn, PROJ_K, N, D);
        project(ca->v, memory, &m->params.decoder[l].cross_attn, PROJ_V, N, D);
    }
}

void transformer_decode(Activations *a, const Model *m, const Batch *b)
{
    const ModelArch *arch = &m->arch;
    int D = arch->d_model, N = b->tgt_start[b->count];
    ASSERT(N <= a->size.tgt_rows);
    for (int i = 0; i < b->count; i++)
        embed(a->tgt_x + (size_t)b->tgt_start[i] * D, b->tgt_ids + b->tgt_start[i], m->params.tgt_embed,
              m->params.tgt_embed_f16, arch->tied_output, tgt_rows(b, i), D, b->tgt_pos);
    Dropout drop = {a->dropout, a->rng};
    maybe_dropout(a->tgt_x, a->tgt_mask, (size_t)N * D, drop);
    const float *x = a->tgt_x;
    for (int l = 0; l < arch->decoder_layers; l++) {
        decoder_layer_forward(&a->decoder[l], &m->params.decoder[l], x, b, arch, drop);
        x = a->decoder[l].out;
    }
    const float *y = norm_forward(&a->decoder_norm, &m->params.decoder_norm, x, N, D);
    /* With a tied output embedding generator_weight is tgt_embed: the
     * logits are y·Eᵀ, with no √D (that scaling is on the input side). */
    linear(a->logits, y, m->params.generator_weight, m->params.generator_weight_f16,
           &m->params.generator_weight_i8, 0,
           m->params.generator_bias, N, D, arch->tgt_vocab);
}

void transformer_backward(Activations *g, Params *dp, const Activations *a, const Model *m,
                          const Batch *b)
{
    const ModelArch *arch = &m->arch;
    const Params *P = &m->params;
    ASSERT(b->tgt_pos == 0 && b->kv_start == NULL);
    ASSERT(!P->half_count); /* a float16 inference model (model_load_inference) never trains */
    int D = arch->d_model, Ns = b->src_start[b->count], Nt = b->tgt_start[b->count];
    int Le = arch->encoder_layers, Ld = arch->decoder_layers;
    bool pre = arch->norm_first;

    /* generator and final decoder norm */
    linear_backward(g->decoder_norm.out, dp->generator_weight, dp->generator_bias, g->logits,
                    a->decoder_norm.out, P->generator_weight, Nt, D, arch->tgt_vocab);
    norm_backward(decoder_out_grad(&g->decoder[Ld - 1], pre), &dp->decoder_norm, g->decoder_norm.out,
                  &a->decoder_norm, &P->decoder_norm, a->decoder[Ld - 1].out, Nt, D);
    for (int l = Ld - 1; l >= 0; l--) {
        const float *x = l ? a->decoder[l - 1].out : a->tgt_x;
        float *d_x = l ? decoder_out_grad(&g->decoder[l - 1], pre) : g->tgt_x;
        decoder_layer_backward(&g->decoder[l], &dp->decoder[l], d_x, &a->decoder[l], &P->decoder[l],
                               x, b, arch);
    }
    if (a->tgt_mask) dropout_backward(g->tgt_x, a->tgt_mask, (size_t)Nt * D);
    for (int i = 0; i < b->count; i++)
        embedding_backward(dp->tgt_embed, g->tgt_x + (size_t)b->tgt_start[i] * D,
                           b->tgt_ids + b->tgt_start[i], tgt_rows(b, i), D);

    /* memory feeds every decoder layer's cross-attention keys and values */
    const float *memory = a->encoder_norm.out;
    for (int l = 0; l < Ld; l++) {
        const AttentionActs *gc = &g->decoder[l].cross_attn;
        project_backward(g->encoder_norm.out, &dp->decoder[l].cross_attn, gc->k, memory,
                         &P->decoder[l].cross_attn, PROJ_K, Ns, D);
        project_backward(g->encoder_norm.out, &dp->decoder[l].cross_attn, gc->v, memory,
                         &P->decoder[l].cross_attn, PROJ_V, Ns, D);
    }
    norm_backward(encoder_out_grad(&g->encoder[Le - 1], pre), &dp->encoder_norm, g->encoder_norm.out,
                  &a->encoder_norm, &P->encoder_norm, a->encoder[Le - 1].out, Ns, D);
    for (int l = Le - 1; l >= 0; l--) {
        const float *x = l ? a->encoder[l - 1].out : a->src_x;
        float *d_x = l ? encoder_out_grad(&g->encoder[l - 1], pre) : g->src_x;
        encoder_layer_backward(&g->encoder[l], &dp->encoder[l], d_x, &a->encoder[l], &P->encoder[l],
                               x, b, arch);
    }
    if (a->src_mask) dropout_backward(g->src_x, a->src_mask, (size_t)Ns * D);
    for (int i = 0; i < b->count; i++)
        embedding_backward(dp->src_embed, g->src_x + (size_t)b->src_start[i] * D,
                           b->src_ids + b->src_start[i], src_len(b, i), D);
}
