/* packed_batch.c — one batch as the model reads it (see packed_batch.h). */
#include "packed_batch.h"

#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

void packed_batch_init(PackedBatch *pb, int src_rows, int tgt_rows, int pairs)
{
    memset(pb, 0, sizeof *pb);
    pb->src_ids = xcalloc((size_t)src_rows + 1, sizeof(int));
    pb->tgt_ids = xcalloc((size_t)tgt_rows + 1, sizeof(int));
    pb->labels = xcalloc((size_t)tgt_rows + 1, sizeof(int));
    pb->src_start = xcalloc((size_t)pairs + 1, sizeof(int));
    pb->tgt_start = xcalloc((size_t)pairs + 1, sizeof(int));
}

/* Whether pair `p` is trained this epoch without its final punctuation. */
static bool drops_final_punctuation(const SourceNoise *noise, const Dataset *d, int p, int S)
{
    if (!noise || noise->probability <= 0 || S < 2) return false; /* never empty a source */
    if (!noise->final_punctuation[d->src_ids[d->src_start[p] + S - 1]]) return false;
    Rng rng;
    rng_seed(&rng, (noise->seed * 1000003ULL + (uint64_t)noise->epoch) * 2654435761ULL + (uint64_t)p);
    return rng_uniform(&rng) < noise->probability;
}

void packed_batch_fill(PackedBatch *pb, const Dataset *d, const Batches *b, int index,
                       const SourceNoise *noise)
{
    int n = b->first[index + 1] - b->first[index];
    int s = 0, t = 0;
    for (int k = 0; k < n; k++) {
        int p = b->pairs[b->first[index] + k];
        int S = dataset_length(d, p, false), T = dataset_length(d, p, true);
        if (drops_final_punctuation(noise, d, p, S)) S--;
        memcpy(pb->src_ids + s, d->src_ids + d->src_start[p], (size_t)S * sizeof(int));
        pb->tgt_ids[t] = VOCAB_BOS;
        memcpy(pb->tgt_ids + t + 1, d->tgt_ids + d->tgt_start[p], (size_t)T * sizeof(int));
        memcpy(pb->labels + t, d->tgt_ids + d->tgt_start[p], (size_t)T * sizeof(int));
        pb->labels[t + T] = VOCAB_EOS;
        pb->src_start[k] = s;
        pb->tgt_start[k] = t;
        s += S;
        t += T + 1;
    }
    pb->src_start[n] = s;
    pb->tgt_start[n] = t;
    pb->tokens = s + t;
    pb->batch = (Batch){.count = n, .src_ids = pb->src_ids, .src_start = pb->src_start,
                        .tgt_ids = pb->tgt_ids, .tgt_start = pb->tgt_start};
}

void packed_batch_free(PackedBatch *pb)
{
    if (!pb) return;
    free(pb->src_ids);
    free(pb->tgt_ids);
    free(pb->labels);
    free(pb->src_start);
    free(pb->tgt_start);
    memset(pb, 0, sizeof *pb);
}
