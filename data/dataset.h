/* dataset.h — a parallel corpus as token ids, and its batches.
 *
 * Every line of the TSV is kept, with the ids of whatever text tokenised
 * (so an evaluation can score all of them), but only `usable` pairs — valid text, 1..max_len source tokens and
 * 1..max_len-1 target tokens (room for </s>) — are trained on.
 *
 * Batches group pairs of similar length (sorted by target, then source
 * length) up to a token budget, so little work is wasted on length
 * differences; their order is shuffled every epoch from (seed, epoch), so
 * an epoch's order can be recreated when training resumes. */
#ifndef TRANSLATE_DATASET_H
#define TRANSLATE_DATASET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"
#include "../model/transformer.h"
#include "../tokenizer/vocab.h"

typedef struct {
    size_t count;          /* lines */
    char **source_text;    /* [count] as in the file */
    char **target_text;
    int *line;             /* [count] 1-based line numbers */
    int *src_start;        /* [count+1] offsets into src_ids */
    int *src_ids;
    int *tgt_start;        /* [count+1] offsets into tgt_ids (no <s>, no </s>) */
    int *tgt_ids;
    bool *usable;          /* [count] */
    size_t usable_count;
    size_t tokens;         /* source + target (+ </s>) tokens of the usable pairs */
    size_t unknown;        /* tokens that became <unk> */
} Dataset;

int dataset_load(Dataset *data, const char *path, int source_column, int target_column,
                 const Vocab *src_vocab, const Vocab *tgt_vocab, int max_len, Error *err);
void dataset_free(Dataset *data); /* NULL-safe */
/* A 64-bit hash of what training sees: every line's token ids and whether
 * it is usable (a checkpoint records it: its batch position means nothing
 * under other data). */
uint64_t dataset_hash(const Dataset *data);

typedef struct {
    size_t count;          /* batches */
    int *pairs;            /* the usable pair indices, grouped batch after batch */
    int *first;            /* [count+1] batch b is pairs[first[b] .. first[b+1]-1] */
    int *order;            /* [count] this epoch's batch order */
    int max_src_rows, max_tgt_rows; /* the largest batch, for sizing activations */
    int max_pairs;         /* the most pairs in one batch */
} Batches;

void batches_build(Batches *batches, const Dataset *data, int batch_tokens);
/* The batch order of `epoch` (a permutation drawn from seed and epoch). */
void batches_shuffle(Batches *batches, uint64_t seed, int epoch);
void batches_free(Batches *batches); /* NULL-safe */

/* One batch packed for the model: source ids, decoder input (<s> + target)
 * and labels (target + </s>). */
typedef struct {
    Batch batch;
    int *src_ids, *src_start, *tgt_ids, *tgt_start, *labels;
    int tokens;            /* source + target tokens */
} PackedBatch;

/* Tatoeba's sentences nearly all end in . ? ! or 。, so a model trained on
 * them has never seen a source without one, and a bare "我想吃酸菜鱼" falls
 * outside everything it knows. Dropping the source's final punctuation from
 * a fraction of the pairs teaches it that the stop is optional on input;
 * targets keep theirs, so the translation still ends like a sentence. Which
 * pairs lose it is drawn from (seed, epoch, pair), so a resumed run drops
 * the same ones. */
typedef struct {
    float probability;            /* 0: off */
    uint64_t seed;
    int epoch;
    const bool *final_punctuation; /* [source vocabulary size]: ids that may be dropped */
} SourceNoise;

/* Buffers for batches of up to these many source/target tokens and pairs. */
void packed_batch_init(PackedBatch *pb, int src_rows, int tgt_rows, int pairs);
/* Pack batch number `b` (in build order, not epoch order); `noise` may be
 * NULL (dev batches, benchmarks). */
void packed_batch_fill(PackedBatch *pb, const Dataset *data, const Batches *batches, int b,
                       const SourceNoise *noise);
void packed_batch_free(PackedBatch *pb);

#endif
