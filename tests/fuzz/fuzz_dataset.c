/* fuzz_dataset.c — arbitrary bytes as training data: a TSV (written to a
 * scratch file) read by corpus_load, then dataset_load with the tiny
 * vocabularies, batched and packed as the trainer does.  The first input
 * byte also picks the batch token budget, so batching sees odd sizes. */
#include "fuzz.h"

#include "../../data/corpus.h"
#include "../../data/dataset.h"
#include "../../data/packed_batch.h"

static const Vocab *src_vocab, *tgt_vocab;

static void load_vocabs(void)
{
    if (src_vocab) return;
    Error err = {{0}};
    src_vocab = vocab_load("tests/data/tiny.src.vocab", &err);
    tgt_vocab = vocab_load("tests/data/tiny.tgt.vocab", &err);
    if (!src_vocab || !tgt_vocab) {
        fprintf(stderr, "fuzz_dataset: %s (run from the repository root)\n", err.message);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load_vocabs();
    const char *path = fuzz_scratch_file(".tsv", data, size);
    Corpus corpus;
    Error err = {{0}};
    if (corpus_load(path, 0, 1, &corpus, &err)) {
        FUZZ_CHECK(fuzz_one_line(err.message));
        return 0;
    }
    corpus_free(&corpus);
    Dataset d;
    enum { MAX_LEN = 32 };
    FUZZ_CHECK(dataset_load(&d, path, 0, 1, src_vocab, tgt_vocab, MAX_LEN, &err) == 0);
    for (size_t i = 0; i < d.count; i++) {
        FUZZ_CHECK(d.src_start[i] <= d.src_start[i + 1] && d.tgt_start[i] <= d.tgt_start[i + 1]);
        if (!d.usable[i]) continue;
        int S = d.src_start[i + 1] - d.src_start[i], T = d.tgt_start[i + 1] - d.tgt_start[i];
        FUZZ_CHECK(S >= 1 && S <= MAX_LEN && T >= 1 && T + 1 <= MAX_LEN);
    }
    int budget = 1 + (size ? data[0] : 0);
    Batches b;
    batches_build(&b, &d, budget);
    batches_shuffle(&b, 1, 0);
    PackedBatch pb;
    packed_batch_init(&pb, b.max_src_rows, b.max_tgt_rows, b.max_pairs);
    for (size_t k = 0; k < b.count; k++) packed_batch_fill(&pb, &d, &b, b.order[k], NULL);
    packed_batch_free(&pb);
    batches_free(&b);
    dataset_free(&d);
    return 0;
}
