/* batches.c — length-grouped batches of a data set, shuffled per epoch
 * (see batches.h). */
#include "batches.h"

#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

static const Dataset *sort_data; /* qsort has no context argument */

static int by_length(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    int dt = dataset_length(sort_data, a, true) - dataset_length(sort_data, b, true);
    if (dt) return dt;
    int ds = dataset_length(sort_data, a, false) - dataset_length(sort_data, b, false);
    return ds ? ds : a - b;
}

void batches_build(Batches *b, const Dataset *d, int batch_tokens)
{
    batches_build_from(b, d, NULL, d->count, batch_tokens);
}

void batches_build_from(Batches *b, const Dataset *d, const int *pairs, size_t count, int batch_tokens)
{
    memset(b, 0, sizeof *b);
    b->pairs = xcalloc(count ? count : 1, sizeof(int));
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        int p = pairs ? pairs[i] : (int)i;
        if (d->usable[p]) b->pairs[n++] = p;
    }
    sort_data = d;
    qsort(b->pairs, n, sizeof(int), by_length);
    b->first = xcalloc(n + 1, sizeof(int));
    int src_rows = 0, tgt_rows = 0;
    for (size_t i = 0; i < n; i++) {
        int p = b->pairs[i];
        int S = dataset_length(d, p, false), T = dataset_length(d, p, true) + 1;
        bool full = src_rows + tgt_rows + S + T > batch_tokens && src_rows + tgt_rows > 0;
        if (full) {
            b->first[++b->count] = (int)i;
            src_rows = tgt_rows = 0;
        }
        src_rows += S;
        tgt_rows += T;
        if (src_rows > b->max_src_rows) b->max_src_rows = src_rows;
        if (tgt_rows > b->max_tgt_rows) b->max_tgt_rows = tgt_rows;
    }
    if (n) b->first[++b->count] = (int)n;
    for (size_t i = 0; i < b->count; i++)
        if (b->first[i + 1] - b->first[i] > b->max_pairs) b->max_pairs = b->first[i + 1] - b->first[i];
    b->order = xcalloc(b->count ? b->count : 1, sizeof(int));
    for (size_t i = 0; i < b->count; i++) b->order[i] = (int)i;
}

void batches_shuffle(Batches *b, uint64_t seed, int epoch)
{
    Rng rng;
    rng_seed(&rng, seed * 1000003ULL + (uint64_t)epoch);
    for (size_t i = 0; i < b->count; i++) b->order[i] = (int)i;
    for (size_t i = b->count; i > 1; i--) { /* Fisher–Yates */
        size_t j = rng_next(&rng) % i;
        int t = b->order[i - 1];
        b->order[i - 1] = b->order[j];
        b->order[j] = t;
    }
}

void batches_free(Batches *b)
{
    if (!b) return;
    free(b->pairs);
    free(b->first);
    free(b->order);
    memset(b, 0, sizeof *b);
}
