/* sources.h — the training data of `train`: several parallel sources (TSV
 * sentence pairs, CC-CEDICT glosses), each with a sampling weight, read,
 * cleaned, filtered and deduplicated into one pool of text pairs, and the
 * pool indices each epoch trains on.
 *
 * Per pair, in this order (a pair dropped by one step is counted there
 * only):
 *   1. read: a TSV line's two columns, one CEDICT gloss (cedict.h), or
 *      for a names source one pair of the sentence sources before it that
 *      has a name, the name replaced by Latin letters (names.h), or for
 *      a numbers source one copy of such a pair that has numbers, the
 *      numbers replaced by random ones (numbers.h);
 *   2. editors' notes handled, for a source with strip_notes (Wiktionary),
 *      on the English side only.  The editors bracket two things: words
 *      the English needs but the Chinese leaves implicit ("[their]",
 *      "(speak)", "(to the destination)"), which lose only the marks, so
 *      the sentence reads right; and notes about the sentence, dropped
 *      with their words: a label or gloss ("(slang)", "[lit. the body]",
 *      "(i.e. ...)", "(used as a warning)", data/sources.c lists them),
 *      anything with a non-ASCII character (Chinese, pinyin, quotation
 *      marks: "(蘿蔔, radish)"), and anything after the sentence's final
 *      punctuation ("... glory. (English Revised Version)"; not a bracket
 *      after a stop that words follow: "[I] wander! [I] wander!").  Rows are
 *      kept: dropping all 365 would lose 6% of the source for a note, and
 *      a note the rules miss ("(chess)") costs a word, not a sentence;
 *   3. the Chinese side converted to Simplified (simplify.h), when a table
 *      is given: every source, so one character is one token however its
 *      source wrote it;
 *   4. filtered: "empty" (a side with no tokens, or text the tokenizer
 *      rejects), "too long" (more than max_len source tokens or max_len - 1
 *      target tokens, counted with the tokenizer: words, where a subword
 *      vocabulary may need more ids, so the data set (dataset.h) may still
 *      find a kept pair too long, and its "usable" count is the last word), "ratio"
 *      (the longer side has more than max_length_ratio times the tokens of
 *      the shorter: a misaligned pair or a note in one language; off at 0,
 *      and never applied to dictionary pairs, where 1 or 2 tokens a side
 *      make any ratio noise: "to be" ↔ 是 is 2.0, and "pickled cabbage" ↔
 *      酸菜 is normal);
 *   5. deduplicated over all sources, first occurrence wins (sources in
 *      config order): two pairs are the same when both sides' case-folded
 *      NFKC tokens are (tokenizer.h), so "Hi." and "hi ." are one pair.
 *      Compared by a 64-bit hash of those tokens: with ~200,000 pairs the
 *      chance of one false duplicate is about 1e-9.
 *
 * Sampling: epoch e trains on, from each source of n kept pairs and weight
 * w, floor(w) copies of all n plus round((w - floor(w)) × n) of them drawn
 * without replacement from (seed, epoch, source index): so a source at 0.3
 * shows a different 30% every epoch, and the same epoch always draws the
 * same pairs (a resumed run sees the same batches). */
#ifndef TRANSLATE_SOURCES_H
#define TRANSLATE_SOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"
#include "corpus.h"
#include "simplify.h"

typedef enum {
    SOURCE_TSV,
    SOURCE_CEDICT,
    SOURCE_NAMES,  /* the pairs of the sources before it with a name, the name
                      replaced by Latin letters; path: the CC-CEDICT file
                      with the names (data/names.h) */
    SOURCE_NUMBERS, /* the pairs of the sources before it with numbers, the
                      numbers replaced by random ones; no path (data/numbers.h) */
} SourceFormat;

/* One source as the config gives it. */
typedef struct {
    char *path;             /* NULL for SOURCE_NUMBERS */
    SourceFormat format;
    float weight;           /* > 0: the share of its pairs used per epoch; > 1 repeats */
    int source_column;      /* TSV only: 0-based columns */
    int target_column;
    bool strip_notes;       /* editors' notes on the English side (step 2 above) */
} SourceSpec;

typedef struct {
    const SourceSpec *specs;
    size_t count;
    bool english_source;    /* source language en: target is Chinese (which side to
                               simplify and strip notes from; a gloss is the English side) */
    const Simplifier *simplifier; /* NULL: no conversion */
    int max_len;
    float max_length_ratio; /* 0: off */
} SourcesSettings;

/* What happened to one source's pairs. */
typedef struct {
    size_t read;            /* lines (TSV) or glosses (CEDICT) read */
    size_t empty, too_long, ratio, duplicates; /* dropped, by reason */
    size_t kept;            /* in the pool */
    size_t simplified;      /* kept pairs whose Chinese side the table changed */
    size_t notes;           /* kept pairs whose English brackets were handled (step 2):
                               marks removed around implicit words, or a note dropped */
    size_t first;           /* index of its first pair in the pool */
    float weight;
} SourceCounts;

typedef struct {
    Corpus pairs;           /* the pool, source after source; pairs.line: line in its file.
                               train hands it to dataset_from_corpus, which leaves it
                               empty: sources_epoch's indices then index that Dataset */
    int *origin;            /* [pairs.count] which source each pair came from */
    size_t n_sources;
    SourceCounts *counts;   /* [n_sources] */
} Sources;

/* Read every source.  Errors: the first file that cannot be read, as
 * "path:line: what" (corpus.h). */
int sources_load(const SourcesSettings *settings, Sources *sources, Error *err);
void sources_free(Sources *sources); /* NULL-safe, leaves it zeroed */
/* Pairs of source i in one epoch (the counts above), and of all sources. */
size_t sources_epoch_count(const Sources *sources, size_t i);
size_t sources_epoch_size(const Sources *sources);
/* The pool indices epoch `epoch` trains on, into out[sources_epoch_size]
 * (source after source: floor(weight) whole passes over its pairs, then
 * the drawn part; batches sort them anyway). */
void sources_epoch(const Sources *sources, uint64_t seed, int epoch, int *out);
/* A hash of the sampling (each source's range of the pool and weight): the
 * checkpoint's data hash mixes it with the pool's token ids. */
uint64_t sources_hash(const Sources *sources);

#endif
