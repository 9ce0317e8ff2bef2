/* evaluate.h — translating a whole dev/test set and scoring it with corpus
 * BLEU and chrF2, as sacrebleu computes them (metrics.h): 13a
 * tokenisation for English output, sacrebleu's "zh" for Chinese.
 *
 * Every line counts: a source that cannot be translated (invalid text, or
 * longer than max_len) is scored as an empty hypothesis. */
#ifndef TRANSLATE_EVALUATE_H
#define TRANSLATE_EVALUATE_H

#include <stdio.h>

#include "../data/dataset.h"
#include "../model/search.h"

typedef struct {
    double bleu, chrf;
    size_t sentences, skipped;
    double seconds;
} EvalScores;

/* Decode every line of `data` with `model` as `decode` says (greedy, or
 * beam search when decode->beam > 1: search.h); write each hypothesis to
 * `hyps` when it is not NULL. */
void evaluate(const Model *model, const Dataset *data, const Vocab *tgt_vocab,
              const SearchSettings *decode, const char *target_lang, FILE *hyps, EvalScores *out);

#endif
