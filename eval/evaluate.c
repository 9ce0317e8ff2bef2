/* evaluate.c — translate a data set and score it (see evaluate.h). */
#include "evaluate.h"

#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

#include "../model/search.h"
#include "metrics.h"
#include "../tokenizer/detokenize.h"

/* Sentences decoded together: enough rows for the matrix products to run
 * at full speed, few enough to keep the attention maps' memory small. */
enum { EVAL_BATCH = 64 };

/* Translate lines [first, first+n) of data, the translatable ones together,
 * in `work` (the activations, kept from chunk to chunk: fresh ones each
 * time cost ~230,000 page faults, 15% of --eval's time on the dev set);
 * hyps[i] receives a malloc'd translation or NULL. */
static void translate_chunk(Activations *work, const Model *model, const Dataset *data, size_t first, size_t n,
                            const Vocab *tgt_vocab, const SearchSettings *decode,
                            const char *target_lang, char **hyps)
{
    int ids[EVAL_BATCH * 128 + 1], src_start[EVAL_BATCH + 1] = {0};
    int *outputs[EVAL_BATCH], lengths[EVAL_BATCH];
    size_t line_of[EVAL_BATCH];
    int count = 0, max_len = model->arch.max_len;
    int *id_buf = max_len <= 128 ? ids : xmalloc((size_t)EVAL_BATCH * max_len * sizeof(int));
    for (size_t i = first; i < first + n; i++) {
        int S = data->src_start[i + 1] - data->src_start[i];
        hyps[i - first] = NULL;
        if (S < 1 || S > max_len) continue;
        memcpy(id_buf + src_start[count], data->src_ids + data->src_start[i], (size_t)S * sizeof(int));
        src_start[count + 1] = src_start[count] + S;
        outputs[count] = xmalloc((size_t)search_limit(&model->arch, decode, S) * sizeof(int));
        line_of[count++] = i - first;
    }
    search_translate_many_in(work, model, id_buf, src_start, count, decode, outputs, lengths, NULL);
    for (int b = 0; b < count; b++) {
        hyps[line_of[b]] = detokenize_ids(tgt_vocab, outputs[b], (size_t)lengths[b], target_lang);
        free(outputs[b]);
    }
    if (id_buf != ids) free(id_buf);
}

void evaluate(const Model *model, const Dataset *data, const Vocab *tgt_vocab,
              const SearchSettings *decode, const char *target_lang, FILE *hyps, EvalScores *out)
{
    double start = util_now();
    BleuStats bleu = {0};
    ChrfStats chrf = {0};
    MetricTokenize tok = metric_tokenize_for_lang(target_lang);
    out->skipped = 0;
    char *chunk[EVAL_BATCH];
    Activations work = {0};
    for (size_t first = 0; first < data->count; first += EVAL_BATCH) {
        size_t n = data->count - first < EVAL_BATCH ? data->count - first : EVAL_BATCH;
        translate_chunk(&work, model, data, first, n, tgt_vocab, decode, target_lang, chunk);
        for (size_t i = 0; i < n; i++) {
            const char *h = chunk[i] ? chunk[i] : "";
            out->skipped += chunk[i] == NULL;
            bleu_add(&bleu, h, data->target_text[first + i], tok);
            chrf_add(&chrf, h, data->target_text[first + i]);
            if (hyps) fprintf(hyps, "%s\n", h);
            free(chunk[i]);
        }
    }
    acts_free(&work);
    out->bleu = bleu_score(&bleu);
    out->chrf = chrf_score(&chrf);
    out->sentences = data->count;
    out->seconds = util_now() - start;
}
