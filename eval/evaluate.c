/* evaluate.c — translate a data set and score it (see evaluate.h). */
#include "evaluate.h"

#include <stdlib.h>
#include <string.h>

#include "../common/input_file.h"
#include "../common/utf8.h"
#include "../common/util.h"

#include "../data/corpus.h"
#include "../model/search.h"
#include "metrics.h"
#include "../tokenizer/detokenize.h"
#include "../tokenizer/tokenizer.h"

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
    const bool *spaced[EVAL_CHUNK];
    int src_len[EVAL_CHUNK], *outputs[EVAL_CHUNK], lengths[EVAL_CHUNK];
    size_t line_of[EVAL_CHUNK];
    int count = 0, max_len = model->arch.max_len;
    for (size_t i = first; i < first + n; i++) {
        int S = data->src_start[i + 1] - data->src_start[i];
        hyps[i - first] = NULL;
        if (S < 1 || S > max_len) continue;
        src[count] = data->src_ids + data->src_start[i];
        spaced[count] = data->src_spaced + data->src_start[i];
        src_len[count] = S;
        outputs[count] = xmalloc((size_t)search_limit(&model->arch, decode, S) * sizeof(int));
        line_of[count++] = i - first;
    }
    search_translate_batches(work, model, src, spaced, src_len, count, EVAL_BATCH, decode, outputs, lengths,
                             NULL);
    for (int b = 0; b < count; b++) {
        hyps[line_of[b]] = detokenize_for_source(tgt_vocab, outputs[b], (size_t)lengths[b], target_lang,
                                                 data->source_text[first + line_of[b]]);
        free(outputs[b]);
    }
}

EvalSentences eval_sentences_new(size_t n)
{
    EvalSentences each = {xcalloc(n ? n : 1, sizeof *each.bleu), xcalloc(n ? n : 1, sizeof *each.chrf)};
    return each;
}

void eval_sentences_free(EvalSentences *each)
{
    free(each->bleu);
    free(each->chrf);
}

/* The statistics of line i's translation, into the corpus' sums and, when
 * wanted, the line's own slot: the one place both evaluate and
 * evaluate_file score a line. */
static void score_line(BleuStats *bleu, ChrfStats *chrf, EvalSentences *each, size_t i,
                       const char *hyp, const char *ref, MetricTokenize tok)
{
    BleuStats line_bleu = {0};
    ChrfStats line_chrf = {0};
    bleu_add(&line_bleu, hyp, ref, tok);
    chrf_add(&line_chrf, hyp, ref);
    bleu_merge(bleu, &line_bleu);
    chrf_merge(chrf, &line_chrf);
    if (each) {
        each->bleu[i] = line_bleu;
        each->chrf[i] = line_chrf;
    }
}

void evaluate(const Model *model, const Dataset *data, const Vocab *tgt_vocab,
              const SearchSettings *decode, const char *target_lang, FILE *hyps,
              EvalSentences *each, EvalProgress *progress, void *context, EvalScores *out)
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
            score_line(&bleu, &chrf, each, first + i, h, data->target_text[first + i], tok);
            if (hyps) fprintf(hyps, "%s\n", h);
            free(chunk[i]);
        }
        if (progress) progress(context, first + n, data->count);
    }
    search_workspace_free(&work);
    out->bleu = bleu_score(&bleu);
    out->chrf = chrf_score(&chrf);
    out->sentences = data->count;
    out->seconds = util_now() - start;
}

int evaluate_file(const char *path, const Dataset *data, const char *data_path,
                  const char *target_lang, EvalSentences *each, EvalScores *out, Error *err)
{
    double start = util_now();
    FILE *f = input_file_fopen(path, 0, err);
    if (!f) return -1;
    BleuStats bleu = {0};
    ChrfStats chrf = {0};
    MetricTokenize tok = metric_tokenize_for_lang(target_lang);
    char *line = xmalloc(CORPUS_MAX_LINE_BYTES + 1), *text;
    size_t count = 0, voted = 0, other = 0;
    bool zh = strcmp(target_lang, "zh") == 0;
    int status = 0, got;
    out->skipped = 0;
    while (!status && (got = corpus_next_line(f, path, count + 1, line, &text, err)) != 0) {
        if (got < 0)
            status = -1;
        else if (!utf8_valid(text, strlen(text))) /* not what --hyps writes: the wrong file */
            status = error_set(err, "%s:%zu: not valid UTF-8", path, count + 1);
        else if (count < data->count)
            score_line(&bleu, &chrf, each, count, text, data->target_text[count], tok);
        /* which language the line reads as (none: no vote), where its
         * reference reads as the target language: a reference may read as
         * the other ("iPhone 15 Pro Max上市了。", 3 Han characters and 3
         * words, the first Latin), and a translation as good as it is no
         * sign of the other direction (a 1-line TSV's was refused) */
        if (!status && count < data->count &&
            tokenizer_reads_as_han(data->target_text[count], strlen(data->target_text[count])) == zh) {
            int han = tokenizer_reads_as_han(text, strlen(text));
            voted += han >= 0;
            other += han >= 0 && (han == 1) != zh;
        }
        count += !status;
    }
    /* One translation per sentence, in order, or the pairing means nothing. */
    if (!status && count != data->count)
        status = error_set(err, "%s: %zu line%s, %s has %zu sentences (its non-blank lines)", path, count,
                           count == 1 ? "" : "s", data_path, data->count);
    /* In the other language, the translations of the other direction (the
     * zh-en model's --hyps of the same TSV, set beside an en-zh run): they
     * scored BLEU 0.10 and the run "measurably higher", status 0.  Refused
     * by the count that refuses --eval's swapped columns, over the lines
     * whose references read as the target language. */
    if (!status && other * 2 > voted)
        status = error_set(err, "%s: reads as %s in %zu of %zu lines, where this run's translations are %s: "
                                "the translations of the other direction?",
                           path, zh ? "English" : "Chinese", other, voted, zh ? "Chinese" : "English");
    free(line);
    fclose(f);
    out->bleu = bleu_score(&bleu);
    out->chrf = chrf_score(&chrf);
    out->sentences = data->count;
    out->seconds = util_now() - start;
    return status;
}
