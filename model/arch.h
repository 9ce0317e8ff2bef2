/* arch.h — the shape of a model: everything needed to lay out its tensors.
 *
 * Filled from the YAML config (app/config.c) and checked against the
 * `__metadata__` of the weights file (model/model.c).  Vocabulary sizes
 * come from the vocabulary files, not from the YAML. */
#ifndef TRANSLATE_ARCH_H
#define TRANSLATE_ARCH_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/token_ids.h" /* TOKEN_PAD, TOKEN_BOS, TOKEN_EOS */

typedef enum { ACTIVATION_RELU, ACTIVATION_GELU } Activation;

/* The longest max_len a config may give: attention's backward pass and
 * --explain keep a row of scores on the stack. */
enum { ARCH_MAX_LEN = 4096 };

typedef struct {
    int d_model;          /* D: width of every token vector */
    int heads;            /* H: attention heads; D % H == 0, d_k = D / H */
    int encoder_layers;   /* L_enc */
    int decoder_layers;   /* L_dec */
    int d_ff;             /* F: hidden width of the feed-forward block */
    Activation activation;
    bool norm_first;      /* true: pre-norm (x + f(norm(x))); false: post-norm */
    int max_len;          /* longest source or target sequence, in tokens (2..ARCH_MAX_LEN) */
    bool scale_attention; /* divide scores by sqrt(d_k) (the paper; T5 does not) */
    bool tied_output;     /* generator.weight is tgt_embed.weight */
    int src_vocab;        /* V_src, from the source vocabulary file */
    int tgt_vocab;        /* V_tgt, from the target vocabulary file */
} ModelArch;

const char *arch_activation_name(Activation a); /* "relu" / "gelu" */

/* How the query projections (the first D rows of every in_proj_weight)
 * start.  QUERY_INIT_T5 divides them by sqrt(d_k) after the Xavier draw:
 * T5's way of keeping Q·Kᵀ's variance near 1 without dividing the scores
 * (docs/attention-questions.md).  The random draws are the same either way.
 * Only training's initialisation reads it (model.c): it is not part of
 * the architecture, and weights files do not record it. */
typedef enum { QUERY_INIT_XAVIER, QUERY_INIT_T5 } QueryInit;

#endif
