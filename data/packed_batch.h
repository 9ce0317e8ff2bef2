/* packed_batch.h — one batch of batches.h packed as the model reads it
 * (a Batch, model/transformer.h), with the training-time source noise. */
#ifndef TRANSLATE_PACKED_BATCH_H
#define TRANSLATE_PACKED_BATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "../model/transformer.h"
#include "batches.h"

/* One batch packed for the model: source ids, decoder input (<s> + target)
 * and labels (target + </s>). */
typedef struct {
    Batch batch;
    int *src_ids, *src_start, *tgt_ids, *tgt_start, *labels;
    int tokens;            /* source tokens + decoder inputs (<s> + target) */
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
