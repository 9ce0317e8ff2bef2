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
/* Lines translated per call (sorted by length within, EVAL_BATCH at a
 * time, the mini-batches shared between the threads), then scored. */
enum { EVAL_CHUNK = 16 * EVAL_BATCH };

/* Translate lines [first, first+n) of data, the translatable ones together,
 * in `work` (the activations, kept from chunk to chunk: fresh ones each
 * time cost ~230,000 page faults, 15% of --eval's time on the dev set);
 * hyps[i] receives a malloc'd translation or NULL. */
static void translate_chunk(SearchWorkspace *work, const Model *model, const Dataset *data, size_t first,
                            size_t n, const Vocab *tgt_vocab, const SearchSettings *decode,
                            const char *target_lang, char **hyps)
{
    const int *src[EVAL_CHUNK];
    int src_len[EVAL_CHUNK], *outputs[EVAL_CHUNK], lengths[EVAL_CHUNK];
    size_t line_of[EVAL_CHUNK];
    int count = 0, max_len = model->arch.max_len;
    for (size_t i = first; i < first + n; i++) {
        int S = data->src_start[i + 1] - data->src_start[i];
        hyps[i - first] = NULL;
        if (S < 1 || S > max_len) continue;
        src[count] = data->src_ids + data->src_start[i];
        src_len[count] = S;
        outputs[count] = xmalloc((size_t)search_limit(&model->arch, decode, S) * sizeof(int));
        line_of[count++] = i - first;
    }
    search_translate_batches(work, model, src, src_len, count, EVAL_BATCH, decode, outputs, lengths, NULL);
    for (int b = 0; b < count; b++) {
        hyps[line_of[b]] = detokenize_ids(tgt_vocab, outputs[b], (size_t)lengths[b], target_lang);
        detokenize_source_casing(hyps[line_of[b]], data->source_text[first + line_of[b]], target_lang);
        free(outputs[b]);
    }
}

void evaluate(const Model *model, const Dataset *data, const Vocab *tgt_vocab,
              const SearchSettings *decode, const char *target_lang, FILE *hyps, EvalScores *out)
{
    double start = util_now();
    BleuStats bleu = {0};
    ChrfStats chrf = {0};
    MetricTokenize tok = metric_tokenize_for_lang(target_lang);
    out->skipped = 0;
    char *chunk[EVAL_CHUNK];
    SearchWorkspace work = {0};
    for (size_t first = 0; first < data->count; first += EVAL_CHUNK) {
        size_t n = data->count - first < EVAL_CHUNK ? data->count - first : EVAL_CHUNK;
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
    search_workspace_free(&work);
    out->bleu = bleu_score(&bleu);
    out->chrf = chrf_score(&chrf);
    out->sentences = data->count;
    out->seconds = util_now() - start;
}
