/* translation.c — a Translation's life cycle (see translation.h). */
#include "translation.h"

#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

void translation_init(Translation *out, const ModelArch *a, const int *src, int S, int T, bool keep_logits)
{
    memset(out, 0, sizeof *out);
    size_t H = (size_t)a->heads;
    out->src_len = S;
    out->src_ids = xmalloc((size_t)S * sizeof(int));
    memcpy(out->src_ids, src, (size_t)S * sizeof(int));
    out->input_ids = xcalloc((size_t)T, sizeof(int));
    out->output_ids = xcalloc((size_t)T, sizeof(int));
    out->logprobs = xcalloc((size_t)T, sizeof(float));
    out->top_ids = xcalloc((size_t)T * TRANSLATION_TOP_K, sizeof(int));
    out->top_logprobs = xcalloc((size_t)T * TRANSLATION_TOP_K, sizeof(float));
    out->encoder_attn = xcalloc((size_t)a->encoder_layers * H * S * S, sizeof(float));
    out->decoder_attn = xcalloc((size_t)a->decoder_layers * H * T * T, sizeof(float));
    out->cross_attn = xcalloc((size_t)a->decoder_layers * H * T * S, sizeof(float));
    if (keep_logits) out->logits = xcalloc((size_t)T * a->tgt_vocab, sizeof(float));
}

void translation_free(Translation *t)
{
    if (!t) return;
    free(t->src_ids);
    free(t->input_ids);
    free(t->output_ids);
    free(t->logprobs);
    free(t->top_ids);
    free(t->top_logprobs);
    free(t->encoder_attn);
    free(t->decoder_attn);
    free(t->cross_attn);
    free(t->logits);
    memset(t, 0, sizeof *t);
}
