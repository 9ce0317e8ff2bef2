/* batches.h — the usable pairs of a Dataset in batches.
 *
 * Batches group pairs of similar length (sorted by target, then source
 * length) up to a token budget, so little work is wasted on length
 * differences; their order is shuffled every epoch from (seed, epoch), so
 * an epoch's order can be recreated when training resumes. */
#ifndef TRANSLATE_BATCHES_H
#define TRANSLATE_BATCHES_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"

typedef struct {
    size_t count;          /* batches */
    int *pairs;            /* the usable pair indices, grouped batch after batch */
    int *first;            /* [count+1] batch b is pairs[first[b] .. first[b+1]-1] */
    int *order;            /* [count] this epoch's batch order */
    int max_src_rows, max_tgt_rows; /* the most source tokens, and decoder inputs (<s> +
                                       target), of any batch, each maximum taken on
                                       its own: one activation row per token */
    int max_pairs;         /* the most pairs in one batch */
} Batches;

void batches_build(Batches *batches, const Dataset *data, int batch_tokens);
/* The same over pairs[0..count) only (indices into data, repeats allowed:
 * an epoch's weighted draw, data/sources.h); NULL pairs: 0..count-1.
 * Unusable pairs are left out. */
void batches_build_from(Batches *batches, const Dataset *data, const int *pairs, size_t count,
                        int batch_tokens);
/* The batch order of `epoch` (a permutation drawn from seed and epoch). */
void batches_shuffle(Batches *batches, uint64_t seed, int epoch);
void batches_free(Batches *batches); /* NULL-safe */

#endif
