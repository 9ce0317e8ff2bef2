/* dataset.c — token ids and batches of a parallel corpus (see dataset.h). */
#include "dataset.h"

#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "../tokenizer/tokenizer.h"
#include "corpus.h"

/* A growing int array. */
typedef struct {
    int *data;
    size_t count, cap;
} IntList;

static void push(IntList *l, int x)
{
    if (l->count == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 4096;
        l->data = xrealloc(l->data, l->cap * sizeof(int));
    }
    l->data[l->count++] = x;
}

/* Append the ids of `text` to ids; returns the token count, -1 for text the
 * tokenizer rejects. */
static int encode(IntList *ids, const char *text, const Vocab *vocab, size_t *unknown)
{
    TokenList tokens;
    Error ignored;
    if (tokenize(text, strlen(text), &tokens, &ignored)) return -1;
    for (size_t i = 0; i < tokens.count; i++) {
        int id = vocab_id(vocab, tokens.folded[i]);
        *unknown += id == VOCAB_UNK;
        push(ids, id);
    }
    int n = (int)tokens.count;
    token_list_free(&tokens);
    return n;
}

int dataset_load(Dataset *d, const char *path, int source_column, int target_column,
                 const Vocab *src_vocab, const Vocab *tgt_vocab, int max_len, Error *err)
{
    memset(d, 0, sizeof *d);
    Corpus corpus;
    if (corpus_load(path, source_column, target_column, &corpus, err)) return -1;
    /* Take the strings over from the corpus. */
    d->count = corpus.count;
    d->source_text = corpus.source;
    d->target_text = corpus.target;
    d->line = corpus.line;
    d->src_start = xcalloc(d->count + 1, sizeof(int));
    d->tgt_start = xcalloc(d->count + 1, sizeof(int));
    d->usable = xcalloc(d->count, sizeof(bool));
    IntList src = {0}, tgt = {0};
    for (size_t i = 0; i < d->count; i++) {
        int S = encode(&src, d->source_text[i], src_vocab, &d->unknown);
        int T = encode(&tgt, d->target_text[i], tgt_vocab, &d->unknown);
        d->usable[i] = S >= 1 && S <= max_len && T >= 1 && T + 1 <= max_len;
        if (d->usable[i]) {
            d->usable_count++;
            d->tokens += (size_t)S + (size_t)T + 1;
        }
        d->src_start[i + 1] = (int)src.count;
        d->tgt_start[i + 1] = (int)tgt.count;
    }
    d->src_ids = src.data ? src.data : xcalloc(1, sizeof(int));
    d->tgt_ids = tgt.data ? tgt.data : xcalloc(1, sizeof(int));
    return 0;
}

void dataset_free(Dataset *d)
{
    if (!d) return;
    Corpus corpus = {d->count, d->source_text, d->target_text, d->line};
    corpus_free(&corpus);
    free(d->src_start);
    free(d->src_ids);
    free(d->tgt_start);
    free(d->tgt_ids);
    free(d->usable);
    memset(d, 0, sizeof *d);
}

/* ---- batches ------------------------------------------------------------ */

static const Dataset *sort_data; /* qsort has no context argument */

uint64_t dataset_hash(const Dataset *d)
{
    uint64_t h = fnv1a(14695981039346656037ULL, &d->count, sizeof d->count);
    h = fnv1a(h, d->usable, d->count * sizeof *d->usable);
    h = fnv1a(h, d->src_start, (d->count + 1) * sizeof *d->src_start);
    h = fnv1a(h, d->tgt_start, (d->count + 1) * sizeof *d->tgt_start);
    h = fnv1a(h, d->src_ids, (size_t)d->src_start[d->count] * sizeof *d->src_ids);
    return fnv1a(h, d->tgt_ids, (size_t)d->tgt_start[d->count] * sizeof *d->tgt_ids);
}

static int pair_len(const Dataset *d, int i, bool target)
{
    const int *start = target ? d->tgt_start : d->src_start;
    return start[i + 1] - start[i];
}

static int by_length(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    int dt = pair_len(sort_data, a, true) - pair_len(sort_data, b, true);
    if (dt) return dt;
    int ds = pair_len(sort_data, a, false) - pair_len(sort_data, b, false);
    return ds ? ds : a - b;
}

void batches_build(Batches *b, const Dataset *d, int batch_tokens)
{
    memset(b, 0, sizeof *b);
    b->pairs = xcalloc(d->usable_count ? d->usable_count : 1, sizeof(int));
    size_t n = 0;
    for (size_t i = 0; i < d->count; i++)
        if (d->usable[i]) b->pairs[n++] = (int)i;
    sort_data = d;
    qsort(b->pairs, n, sizeof(int), by_length);
    b->first = xcalloc(n + 1, sizeof(int));
    int src_rows = 0, tgt_rows = 0;
    for (size_t i = 0; i < n; i++) {
        int p = b->pairs[i];
        int S = pair_len(d, p, false), T = pair_len(d, p, true) + 1;
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
        int S = pair_len(d, p, false), T = pair_len(d, p, true);
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
