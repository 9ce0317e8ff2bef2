/* dataset.h — a parallel corpus as token ids.
 *
 * Every line of the TSV is kept, with the ids of whatever text tokenised
 * (so an evaluation can score all of them), but only `usable` pairs — valid text, 1..max_len source tokens and
 * 1..max_len-1 target tokens (room for </s>) — are trained on (batches.h
 * groups them). */
#ifndef TRANSLATE_DATASET_H
#define TRANSLATE_DATASET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"
#include "../tokenizer/vocab.h"
#include "corpus.h"

typedef struct {
    size_t count;          /* lines */
    char **source_text;    /* [count] as in the file */
    char **target_text;
    int *line;             /* [count] 1-based line numbers */
    int *src_start;        /* [count+1] offsets into src_ids */
    int *src_ids;
    bool *src_spaced;      /* [as src_ids] came after white space (encode.h): for copy_numbers */
    int *tgt_start;        /* [count+1] offsets into tgt_ids (no <s>, no </s>) */
    int *tgt_ids;
    bool *usable;          /* [count] */
    size_t usable_count;
    size_t tokens;         /* source + target (+ </s>) tokens of the usable pairs */
    size_t unknown;        /* tokens that became <unk> */
} Dataset;

int dataset_load(Dataset *data, const char *path, int source_column, int target_column,
                 const Vocab *src_vocab, const Vocab *tgt_vocab, int max_len, Error *err);
/* The same from pairs already in memory (data/sources.h's pool): takes the
 * corpus' strings over and leaves it zeroed. */
void dataset_from_corpus(Dataset *data, Corpus *corpus, const Vocab *src_vocab,
                         const Vocab *tgt_vocab, int max_len);
void dataset_free(Dataset *data); /* NULL-safe */
/* A 64-bit hash of what training sees: every line's token ids and whether
 * it is usable (a checkpoint records it: its batch position means nothing
 * under other data). */
uint64_t dataset_hash(const Dataset *data);
/* Source (target: false) or target tokens of line i, without </s>. */
int dataset_length(const Dataset *data, size_t i, bool target);

#endif
