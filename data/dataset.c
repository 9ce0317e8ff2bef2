/* dataset.c — a parallel corpus as token ids (see dataset.h). */
#include "dataset.h"

#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "../tokenizer/encode.h"
#include "corpus.h"

/* A growing int array, with a bool beside each (`spaced`, when asked). */
typedef struct {
    int *data;
    bool *spaced;
    size_t count, cap;
} IntList;

static void push(IntList *l, int x, bool spaced, bool keep_spaced)
{
    if (l->count == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 4096;
        l->data = xrealloc(l->data, l->cap * sizeof(int));
        if (keep_spaced) l->spaced = xrealloc(l->spaced, l->cap * sizeof(bool));
    }
    if (keep_spaced) l->spaced[l->count] = spaced;
    l->data[l->count++] = x;
}

/* Append the ids of `text` to ids (and their Encoding spaced marks when
 * `keep_spaced`); returns the id count, -1 for text the tokenizer
 * rejects. */
static int encode(IntList *ids, bool keep_spaced, const char *text, const Vocab *vocab, size_t *unknown)
{
    Encoding e;
    Error ignored;
    if (encode_text(vocab, text, strlen(text), &e, &ignored)) return -1;
    for (size_t i = 0; i < e.count; i++) push(ids, e.ids[i], e.spaced[i], keep_spaced);
    *unknown += e.unknown;
    int n = (int)e.count;
    encoding_free(&e);
    return n;
}

int dataset_load(Dataset *d, const char *path, int source_column, int target_column,
                 const Vocab *src_vocab, const Vocab *tgt_vocab, int max_len, Error *err)
{
    memset(d, 0, sizeof *d);
    Corpus corpus;
    if (corpus_load(path, source_column, target_column, &corpus, err)) return -1;
    dataset_from_corpus(d, &corpus, src_vocab, tgt_vocab, max_len);
    return 0;
}

void dataset_from_corpus(Dataset *d, Corpus *corpus, const Vocab *src_vocab, const Vocab *tgt_vocab,
                         int max_len)
{
    memset(d, 0, sizeof *d);
    /* Take the strings over from the corpus. */
    d->count = corpus->count;
    d->source_text = corpus->source;
    d->target_text = corpus->target;
    d->line = corpus->line;
    memset(corpus, 0, sizeof *corpus);
    d->src_start = xcalloc(d->count + 1, sizeof(int));
    d->tgt_start = xcalloc(d->count + 1, sizeof(int));
    d->usable = xcalloc(d->count, sizeof(bool));
    IntList src = {0}, tgt = {0};
    for (size_t i = 0; i < d->count; i++) {
        int S = encode(&src, true, d->source_text[i], src_vocab, &d->unknown);
        int T = encode(&tgt, false, d->target_text[i], tgt_vocab, &d->unknown);
        d->usable[i] = S >= 1 && S <= max_len && T >= 1 && T + 1 <= max_len;
        if (d->usable[i]) {
            d->usable_count++;
            d->tokens += (size_t)S + (size_t)T + 1;
        }
        d->src_start[i + 1] = (int)src.count;
        d->tgt_start[i + 1] = (int)tgt.count;
    }
    d->src_ids = src.data ? src.data : xcalloc(1, sizeof(int));
    d->src_spaced = src.spaced ? src.spaced : xcalloc(1, sizeof(bool));
    d->tgt_ids = tgt.data ? tgt.data : xcalloc(1, sizeof(int));
}

void dataset_free(Dataset *d)
{
    if (!d) return;
    Corpus corpus = {d->count, d->source_text, d->target_text, d->line};
    corpus_free(&corpus);
    free(d->src_start);
    free(d->src_ids);
    free(d->src_spaced);
    free(d->tgt_start);
    free(d->tgt_ids);
    free(d->usable);
    memset(d, 0, sizeof *d);
}

uint64_t dataset_hash(const Dataset *d)
{
    uint64_t h = fnv1a(FNV_OFFSET_STANDARD, &d->count, sizeof d->count);
    h = fnv1a(h, d->usable, d->count * sizeof *d->usable);
    h = fnv1a(h, d->src_start, (d->count + 1) * sizeof *d->src_start);
    h = fnv1a(h, d->tgt_start, (d->count + 1) * sizeof *d->tgt_start);
    h = fnv1a(h, d->src_ids, (size_t)d->src_start[d->count] * sizeof *d->src_ids);
    return fnv1a(h, d->tgt_ids, (size_t)d->tgt_start[d->count] * sizeof *d->tgt_ids);
}

int dataset_length(const Dataset *d, size_t i, bool target)
{
    const int *start = target ? d->tgt_start : d->src_start;
    return start[i + 1] - start[i];
}
