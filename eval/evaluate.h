/* evaluate.h — translating a whole dev/test set and scoring it with corpus
 * BLEU and chrF2, as sacrebleu computes them (metrics.h): 13a
 * tokenisation for English output, sacrebleu's "zh" for Chinese.
 *
 * Every line counts: a source that cannot be translated (invalid text, or
 * longer than max_len) is scored as an empty hypothesis. */
#ifndef TRANSLATE_EVALUATE_H
#define TRANSLATE_EVALUATE_H

#include <stdio.h>

#include "../common/error.h"
#include "../data/dataset.h"
#include "../model/search.h"
#include "metrics.h"

typedef struct {
    double bleu, chrf;
    size_t sentences, skipped;
    double seconds;
} EvalScores;

/* Each sentence's own statistics, for comparing two systems sentence by
 * sentence (bootstrap.h): two arrays of data->count, in the Dataset's
 * order (the TSV's non-blank lines). */
typedef struct {
    BleuStats *bleu;
    ChrfStats *chrf;
} EvalSentences;

/* Room for n sentences' statistics (zeroed); eval_sentences_free frees
 * both arrays (NULL-safe, so a zeroed EvalSentences may be freed too). */
EvalSentences eval_sentences_new(size_t n);
void eval_sentences_free(EvalSentences *each);

/* Told after each chunk of sentences: `done` of `total` decoded. */
typedef void EvalProgress(void *context, size_t done, size_t total);

/* Decode every line of `data` with `model` as `decode` says (greedy, or
 * beam search when decode->beam > 1: search.h); write each hypothesis to
 * `hyps` and its statistics to `each` when they are not NULL; call
 * `progress` (when not NULL) as it goes. */
void evaluate(const Model *model, const Dataset *data, const Vocab *tgt_vocab,
              const SearchSettings *decode, const char *target_lang, FILE *hyps,
              EvalSentences *each, EvalProgress *progress, void *context, EvalScores *out);

/* Score translations made before: the regular file `path` holds one line
 * per sentence of `data`, in order (as --hyps writes them; an empty line is
 * an empty translation; out->skipped stays 0: nothing is left
 * untranslated by this run).  Fills out (seconds: the
 * reading) and, when not NULL, each.  0, or -1 with input_file.h's
 * messages (cannot open, a directory, not a regular file), "PATH:N: longer
 * than 65536 bytes", "PATH:N: NUL byte in line", "PATH:N: not valid UTF-8",
 * "PATH: read error: ..." or
 * "PATH: N lines, DATA_PATH has M sentences (its non-blank lines)", or
 * "PATH: reads as English in N of M lines, ..." when most of its lines
 * that read as a language (tokenizer_reads_as_han), among those whose
 * references read as target_lang, are not in target_lang. */
int evaluate_file(const char *path, const Dataset *data, const char *data_path,
                  const char *target_lang, EvalSentences *each, EvalScores *out, Error *err);

#endif
