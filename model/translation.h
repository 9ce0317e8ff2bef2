/* translation.h — what decoding one sentence produces: its tokens, their
 * log-probabilities and runners-up, and every attention map (decode.h,
 * beam.h fill it; the JSON, HTML and --explain writers read it).
 *
 * Dimension letters: S source tokens, T output tokens (steps), L layers,
 * H heads, V target vocabulary, K = TRANSLATION_TOP_K. */
#ifndef TRANSLATE_TRANSLATION_H
#define TRANSLATE_TRANSLATION_H

#include <stdbool.h>

#include "arch.h"

#define TRANSLATION_TOP_K 5 /* runners-up kept per step */

typedef struct {
    int src_len;            /* S */
    int *src_ids;           /* [S] */
    int steps;              /* T */
    int *input_ids;         /* [T] decoder inputs: <s> then output[0..T-2] */
    int *output_ids;        /* [T] the chosen tokens (the last is </s> when finished) */
    float *logprobs;        /* [T] natural-log probability of each chosen token */
    int *top_ids;           /* [T, K] the K most probable tokens of each step ... */
    float *top_logprobs;    /* [T, K] ... and their log-probabilities */
    bool finished;          /* stopped at </s> (false: stopped at the length limit) */
    float *encoder_attn;    /* [L_enc, H, S, S] */
    float *decoder_attn;    /* [L_dec, H, T, T], future cells exactly 0 */
    float *cross_attn;      /* [L_dec, H, T, S] */
    float *logits;          /* [T, V] when requested, else NULL */
} Translation;

/* Allocate *out for a source src_ids[S] (copied) and up to T steps, every
 * array zeroed (logits only if keep_logits); steps is left 0. */
void translation_init(Translation *out, const ModelArch *arch, const int *src_ids, int S, int T,
                      bool keep_logits);
void translation_free(Translation *t); /* NULL-safe, leaves it zeroed */

#endif
