/* params.h — where every parameter lives, and the one list that names them.
 *
 * All parameters of a model sit in one flat float block (`Params.data`);
 * the structs below only point into it.  `params_describe` walks the model
 * in a fixed order and yields, for every tensor, its PyTorch name, shape and
 * location.  That single list drives loading, saving, random init, the
 * checkpoint and the tests: adding a tensor is one line there.
 *
 * Names and shapes are exactly those of
 *     torch.nn.Transformer(...).state_dict()   prefixed by "transformer."
 * plus src_embed.weight, tgt_embed.weight, generator.weight (absent when
 * tied to tgt_embed) and generator.bias — so the file loads into stock
 * PyTorch (tools/reference.py) with load_state_dict(strict=True).
 *
 * Inference on a float16 file keeps its matrices and embeddings float16
 * (params_alloc_half, model.h's model_load_inference): then each `*_f16`
 * field below is float16 bits and its float twin is NULL; only biases and
 * LayerNorms stay float32.  A matrix's points into `Params.panels`,
 * packed for the products (gemm_f16.h: 16 rows at a time, their values
 * side by side), and so does tgt_embed's when it is the generator too
 * (tied); an embedding's otherwise into `Params.half` or the mapped file,
 * row by row.
 * Otherwise (training, float32 files) every `*_f16` field is NULL.
 *
 * Dimension letters: D d_model, F d_ff, V vocabulary size. */
#ifndef TRANSLATE_PARAMS_H
#define TRANSLATE_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch.h"

/* A weight matrix quantised for inference with translate --int8
 * (params_quantize_int8, gemm_i8.h): row r's values are q[r·cols + c] ·
 * scale[r].  Both NULL when the model is not quantised. */
typedef struct {
    int8_t *q;
    float *scale;
} Int8Matrix;

typedef struct {
    float *in_proj_weight;  /* [3D, D]: rows 0..D-1 make Q, D..2D-1 K, 2D..3D-1 V */
    float *in_proj_bias;    /* [3D] */
    float *out_proj_weight; /* [D, D] */
    float *out_proj_bias;   /* [D] */
    uint16_t *in_proj_weight_f16, *out_proj_weight_f16; /* the same, float16, or NULL */
    Int8Matrix in_proj_weight_i8, out_proj_weight_i8;   /* the same, int8 (--int8), or NULL */
} AttentionParams;

typedef struct {
    float *weight;          /* [D] (gamma) */
    float *bias;            /* [D] (beta) */
} NormParams;

typedef struct {
    float *linear1_weight;  /* [F, D] */
    float *linear1_bias;    /* [F] */
    float *linear2_weight;  /* [D, F] */
    float *linear2_bias;    /* [D] */
    uint16_t *linear1_weight_f16, *linear2_weight_f16; /* the same, float16, or NULL */
    Int8Matrix linear1_weight_i8, linear2_weight_i8;   /* the same, int8 (--int8), or NULL */
} FeedForwardParams;

typedef struct {
    AttentionParams self_attn;
    FeedForwardParams ffn;
    NormParams norm1, norm2;
} EncoderLayerParams;

typedef struct {
    AttentionParams self_attn;   /* masked (causal) self-attention */
    AttentionParams cross_attn;  /* PyTorch calls it multihead_attn */
    FeedForwardParams ffn;
    NormParams norm1, norm2, norm3;
} DecoderLayerParams;

typedef struct {
    float *data;                 /* the flat block, `count` floats */
    size_t count;
    float *src_embed;            /* [V_src, D] */
    float *tgt_embed;            /* [V_tgt, D] */
    EncoderLayerParams *encoder; /* [L_enc] */
    NormParams encoder_norm;     /* final encoder LayerNorm */
    DecoderLayerParams *decoder; /* [L_dec] */
    NormParams decoder_norm;     /* final decoder LayerNorm */
    float *generator_weight;     /* [V_tgt, D]; == tgt_embed when tied */
    float *generator_bias;       /* [V_tgt] */
    /* float16 inference (see top): the blocks and the tensors in them */
    uint16_t *half;              /* a block of `half_count` float16 values, or NULL */
    size_t half_count;           /* float16 values of the embeddings (in `half` or in `map`) */
    void *map;                   /* or: the weights file mapped read-only, which the
                                    embeddings' `*_f16` fields point into (model.c), or NULL */
    size_t map_bytes;
    uint16_t *panels;            /* the matrices packed (gemm_f16_pack), `panels_count`
                                    values, or NULL */
    size_t panels_count;
    uint16_t *src_embed_f16;     /* row by row */
    uint16_t *tgt_embed_f16;     /* row by row, or packed when tied (ParamSpec.packed) */
    uint16_t *generator_weight_f16; /* packed; == tgt_embed_f16 when tied */
    /* int8 inference (--int8): the block holding every Int8Matrix's
     * values and scales (the float or float16 matrices stay, for
     * everything but the products), or NULL */
    void *int8;
    size_t int8_bytes;
    Int8Matrix generator_weight_i8; /* tgt_embed's when tied */
} Params;

/* What a tensor is, which decides how it starts (model.c) and whether
 * weight decay applies (optim.c). */
typedef enum {
    PARAM_EMBEDDING,   /* a token embedding table [V, D] */
    PARAM_MATRIX,      /* a weight matrix [out, in] */
    PARAM_BIAS,        /* a bias vector, or a LayerNorm's beta */
    PARAM_NORM_WEIGHT  /* a LayerNorm's gamma */
} ParamKind;

/* One parameter tensor as the descriptor list sees it. */
typedef struct {
    char name[96];
    int ndim;                    /* 1 or 2 */
    size_t shape[2];
    size_t numel;
    size_t offset;               /* floats from the start of the flat block */
    float **slot;                /* the Params field that points at it */
    uint16_t **half_slot;        /* its float16 twin (matrices and embeddings), else NULL */
    bool packed;                 /* that twin is packed (gemm_f16.h): the matrices, and
                                    tgt_embed when it is also the generator */
    Int8Matrix *int8_slot;       /* its int8 twin (the matrices a product reads: tgt_embed's
                                    is the generator's when tied), else NULL */
    float *data;                 /* where it is (after params_alloc) */
    ParamKind kind;
} ParamSpec;

/* The descriptor list for `arch` bound to `params`' fields, in file order.
 * Returns the count and a malloc'd array in *specs (caller frees). */
size_t params_describe(const ModelArch *arch, Params *params, ParamSpec **specs);

/* The descriptor list for `arch` bound to no Params (slot and data NULL):
 * names, shapes, kinds and offsets, without allocating the block. */
size_t params_layout(const ModelArch *arch, ParamSpec **specs);

/* How many floats params_alloc would allocate for `arch` (allocates
 * nothing large: lets a loader check a file can hold them first). */
size_t params_count(const ModelArch *arch);
/* How many tensors the descriptor list of `arch` has (allocates nothing
 * large). */
size_t params_tensor_count(const ModelArch *arch);

/* Allocate the flat block (zeroed) and point every field into it. */
void params_alloc(Params *params, const ModelArch *arch);
/* The float16 layout: every packed tensor (ParamSpec.packed) gets its
 * place in `panels` (gemm_f16_panels_size values, zeroed; its float field
 * NULL), every other one with a half_slot its place in `half` (half_count
 * values, zeroed), the others theirs in `data` (zeroed), each block in
 * descriptor order.  Without `with_block` there is no `half` block and
 * those half slots stay NULL: the caller points them into `map`.  The
 * caller fills the panels (gemm_f16_pack).  params_free frees the blocks and unmaps
 * `map`. */
void params_alloc_half(Params *params, const ModelArch *arch, bool with_block);
/* Give every tensor with an int8_slot its int8 twin (gemm_i8_quantize_row
 * row by row, from its float32 or float16 values), in one new block
 * (`int8`): the products then read the int8 matrices (translate --int8). */
void params_quantize_int8(Params *params, const ModelArch *arch);
void params_free(Params *params); /* NULL-safe, leaves it zeroed */

#endif
