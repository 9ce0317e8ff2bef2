/* test_dataset.c — packing training batches, and the one kind of noise the
 * trainer adds to them: a source sometimes trained without its final
 * punctuation (train.drop_final_punctuation). */
#include "testutil.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../data/corpus.h"
#include "../data/dataset.h"
#include "../data/packed_batch.h"

typedef struct {
    Vocab *src, *tgt;
    Dataset data;
    Batches batches;
    PackedBatch plain, noisy;
    bool *final_punctuation;
} Fixture;

static int setup(void **state)
{
    Fixture *f = calloc(1, sizeof *f);
    Error err = {{0}};
    f->src = vocab_load("tests/data/tiny.src.vocab", &err);
    f->tgt = vocab_load("tests/data/tiny.tgt.vocab", &err);
    assert_non_null(f->src);
    assert_non_null(f->tgt);
    assert_int_equal(dataset_load(&f->data, "tests/data/tiny.tsv", 0, 1, f->src, f->tgt, 32, &err), 0);
    batches_build(&f->batches, &f->data, 40);
    packed_batch_init(&f->plain, f->batches.max_src_rows, f->batches.max_tgt_rows, f->batches.max_pairs);
    packed_batch_init(&f->noisy, f->batches.max_src_rows, f->batches.max_tgt_rows, f->batches.max_pairs);
    f->final_punctuation = calloc((size_t)vocab_size(f->src), sizeof(bool));
    f->final_punctuation[vocab_id(f->src, ".")] = true;
    f->final_punctuation[vocab_id(f->src, "?")] = true;
    f->final_punctuation[vocab_id(f->src, "!")] = true;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    Fixture *f = *state;
    packed_batch_free(&f->plain);
    packed_batch_free(&f->noisy);
    batches_free(&f->batches);
    dataset_free(&f->data);
    vocab_free(f->src);
    vocab_free(f->tgt);
    free(f->final_punctuation);
    free(f);
    return 0;
}

/* Pairs dropped from batch b of `noisy` compared with `plain`, checking that
 * a dropped pair lost exactly its last source token, which was punctuation,
 * and that nothing else changed. */
static int dropped_in(const Fixture *f, const PackedBatch *plain, const PackedBatch *noisy)
{
    int dropped = 0;
    assert_int_equal(plain->batch.count, noisy->batch.count);
    for (int k = 0; k < plain->batch.count; k++) {
        int s0 = plain->src_start[k], S = plain->src_start[k + 1] - s0;
        int n0 = noisy->src_start[k], N = noisy->src_start[k + 1] - n0;
        assert_true(N == S || N == S - 1);
        assert_memory_equal(plain->src_ids + s0, noisy->src_ids + n0, (size_t)N * sizeof(int));
        if (N == S - 1) {
            assert_true(f->final_punctuation[plain->src_ids[s0 + S - 1]]);
            dropped++;
        }
    }
    int Nt = plain->tgt_start[plain->batch.count];
    assert_int_equal(noisy->tgt_start[noisy->batch.count], Nt);
    assert_memory_equal(plain->tgt_ids, noisy->tgt_ids, (size_t)Nt * sizeof(int));
    assert_memory_equal(plain->labels, noisy->labels, (size_t)Nt * sizeof(int));
    assert_int_equal(noisy->tokens, plain->tokens - dropped);
    return dropped;
}

static int dropped_in_epoch(Fixture *f, float probability, uint64_t seed, int epoch)
{
    SourceNoise noise = {probability, seed, epoch, f->final_punctuation};
    int dropped = 0;
    for (size_t b = 0; b < f->batches.count; b++) {
        packed_batch_fill(&f->plain, &f->data, &f->batches, (int)b, NULL);
        packed_batch_fill(&f->noisy, &f->data, &f->batches, (int)b, &noise);
        dropped += dropped_in(f, &f->plain, &f->noisy);
    }
    return dropped;
}

static void test_every_source_ending_in_punctuation_loses_it_at_probability_one(void **state)
{
    /* All 16 sources of tiny.tsv end in . ? or ! */
    assert_int_equal(dropped_in_epoch(*state, 1.0f, 1, 0), 16);
}

static void test_probability_zero_changes_nothing(void **state)
{
    assert_int_equal(dropped_in_epoch(*state, 0.0f, 1, 0), 0);
}

static void test_dropping_is_a_function_of_seed_epoch_and_pair(void **state)
{
    Fixture *f = *state;
    /* The same (seed, epoch) drops the same pairs, so --resume recreates a
     * half-done epoch exactly; other epochs draw other pairs. */
    int first = dropped_in_epoch(f, 0.5f, 7, 3);
    assert_int_equal(dropped_in_epoch(f, 0.5f, 7, 3), first);
    assert_true(first > 0 && first < 16);
    bool differs = false;
    SourceNoise a = {0.5f, 7, 3, f->final_punctuation}, b = {0.5f, 7, 4, f->final_punctuation};
    for (size_t k = 0; k < f->batches.count; k++) {
        packed_batch_fill(&f->plain, &f->data, &f->batches, (int)k, &a);
        packed_batch_fill(&f->noisy, &f->data, &f->batches, (int)k, &b);
        if (f->plain.tokens != f->noisy.tokens ||
            memcmp(f->plain.src_start, f->noisy.src_start, (size_t)(f->plain.batch.count + 1) * sizeof(int)))
            differs = true;
    }
    assert_true(differs);
}

static void test_a_source_of_one_token_is_never_emptied(void **state)
{
    Fixture *f = *state;
    /* tiny.tsv's shortest source has 4 tokens, so this needs its own data:
     * one-token.tsv has three one-token sources and one of two tokens. */
    Dataset d;
    Batches b;
    PackedBatch pb;
    Error err = {{0}};
    assert_int_equal(dataset_load(&d, "tests/data/one-token.tsv", 0, 1, f->src, f->tgt, 32, &err), 0);
    batches_build(&b, &d, 40);
    packed_batch_init(&pb, b.max_src_rows, b.max_tgt_rows, b.max_pairs);
    /* Mark every id droppable: a one-token source must still keep its token. */
    memset(f->final_punctuation, 1, (size_t)vocab_size(f->src) * sizeof(bool));
    SourceNoise noise = {1.0f, 1, 0, f->final_punctuation};
    int ones = 0, shortened = 0;
    for (size_t k = 0; k < b.count; k++) {
        packed_batch_fill(&pb, &d, &b, (int)k, &noise);
        for (int i = 0; i < pb.batch.count; i++) {
            int p = b.pairs[b.first[k] + i], S = d.src_start[p + 1] - d.src_start[p];
            int kept = pb.src_start[i + 1] - pb.src_start[i];
            assert_true(S == 1 || S == 2);
            if (S == 1) ones++, assert_int_equal(kept, 1);
            else shortened++, assert_int_equal(kept, 1); /* the noise is on: two tokens lose one */
        }
    }
    assert_int_equal(ones, 3);
    assert_int_equal(shortened, 1);
    packed_batch_free(&pb);
    batches_free(&b);
    dataset_free(&d);
}

/* max_len bounds the target with its <s> (or </s>): a target of exactly
 * max_len tokens does not fit, one of max_len - 1 does. */
static void test_a_target_of_max_len_tokens_is_unusable(void **state)
{
    Fixture *f = *state;
    int longest = 0;
    for (size_t i = 0; i < f->data.count; i++) {
        int T = f->data.tgt_start[i + 1] - f->data.tgt_start[i];
        if (T > longest) longest = T;
    }
    assert_true(longest >= 2);
    Dataset d;
    Error err = {{0}};
    int max_len = longest; /* only the longest targets are cut */
    assert_int_equal(dataset_load(&d, "tests/data/tiny.tsv", 0, 1, f->src, f->tgt, max_len, &err), 0);
    int at_limit = 0;
    for (size_t i = 0; i < d.count; i++) {
        int S = d.src_start[i + 1] - d.src_start[i], T = d.tgt_start[i + 1] - d.tgt_start[i];
        if (T == longest) at_limit++, assert_false(d.usable[i]);
        else if (S <= max_len && T >= 1 && S >= 1) assert_true(d.usable[i]);
    }
    assert_true(at_limit >= 1);
    dataset_free(&d);
}

/* ...and a source of exactly max_len tokens does (it needs no </s>), as
 * --eval and the data sources count it; its tokens are counted with the
 * target's </s>: the summary's data tokens are the epoch's. */
static void test_a_source_of_max_len_tokens_is_usable(void **state)
{
    Fixture *f = *state;
    size_t tokens = 0;
    int longest = 0;
    for (size_t i = 0; i < f->data.count; i++) {
        int S = dataset_length(&f->data, i, false), T = dataset_length(&f->data, i, true);
        if (f->data.usable[i]) tokens += (size_t)(S + T + 1);
        if (T < S && S > longest) longest = S; /* a limit only this source reaches */
    }
    assert_true(longest >= 1);
    assert_int_equal(f->data.tokens, tokens);
    Dataset d;
    Error err = {{0}};
    assert_int_equal(dataset_load(&d, "tests/data/tiny.tsv", 0, 1, f->src, f->tgt, longest, &err), 0);
    int at_limit = 0;
    for (size_t i = 0; i < d.count; i++)
        if (dataset_length(&d, i, false) == longest && dataset_length(&d, i, true) < longest)
            at_limit++, assert_true(d.usable[i]);
    assert_true(at_limit >= 1);
    dataset_free(&d);
}

/* Batches: sorted by target length, each as full as the budget allows
 * (one more pair would pass it; exactly at it still fits), none empty even
 * when every pair alone is over the budget, and shuffled differently each
 * epoch. */
static void test_batches_are_full_sorted_and_shuffled_per_epoch(void **state)
{
    Fixture *f = *state;
    const Dataset *d = &f->data;
    for (int budget = 1; budget <= 60; budget++) {
        Batches b;
        batches_build(&b, d, budget);
        int pairs = 0;
        for (size_t k = 0; k < b.count; k++) {
            int used = 0, n = b.first[k + 1] - b.first[k];
            assert_true(n >= 1);
            for (int i = b.first[k]; i < b.first[k + 1]; i++) {
                int p = b.pairs[i];
                used += dataset_length(d, p, false) + dataset_length(d, p, true) + 1;
                if (i > 0) assert_true(dataset_length(d, b.pairs[i - 1], true) <= dataset_length(d, p, true));
                pairs++;
            }
            assert_true(n == 1 || used <= budget);
            if (k + 1 < b.count) {
                int next = b.pairs[b.first[k + 1]];
                assert_true(used + dataset_length(d, next, false) + dataset_length(d, next, true) + 1 > budget);
            }
        }
        assert_int_equal(pairs, (int)d->usable_count);
        batches_free(&b);
    }
    Batches b;
    batches_build(&b, d, 20);
    assert_true(b.count >= 5);
    int *first = malloc(b.count * sizeof *first);
    batches_shuffle(&b, 1, 0);
    memcpy(first, b.order, b.count * sizeof *first);
    batches_shuffle(&b, 1, 1);
    assert_true(memcmp(first, b.order, b.count * sizeof *first) != 0);
    free(first);
    batches_free(&b);
}

/* Words missing from the vocabulary are counted (the trainer reports them). */
static void test_unknown_words_are_counted(void **state)
{
    Fixture *f = *state;
    assert_int_equal(f->data.unknown, 0); /* tiny.tsv is its vocabularies' source */
    static const char tsv[] = "I love zzqx.\t我爱中国。\nqqzv xxwy\t我\n";
    const char *path = temp_file("unknown.tsv", tsv, strlen(tsv));
    Dataset d;
    Error err = {{0}};
    assert_int_equal(dataset_load(&d, path, 0, 1, f->src, f->tgt, 32, &err), 0);
    assert_int_equal(d.unknown, 3);
    dataset_free(&d);
}

/* Blank lines, empty or of spaces alone, are not sentences: skipped
 * (a line of spaces stopped --eval with "expected at least 2 columns"),
 * and the line numbers stay the file's. */
static void test_blank_lines_are_skipped(void **state)
{
    (void)state;
    const char *tsv = "Good.\t好。\n   \n\nEnd.\t结束。\n  \n";
    const char *path = temp_file("blank.tsv", tsv, strlen(tsv));
    Corpus c;
    Error err = {{0}};
    if (corpus_load(path, 0, 1, &c, &err)) fail_msg("%s", err.message);
    assert_int_equal(c.count, 2);
    assert_string_equal(c.source[1], "End.");
    assert_int_equal(c.line[1], 4);
    corpus_free(&c);
}

/* An epoch's draw (data/sources.h) in batches: every drawn index once per
 * draw, repeats kept, unusable pairs left out; dataset_from_corpus makes
 * the same ids as dataset_load and takes the corpus over. */
static void test_batches_from_a_draw_keep_repeats_and_skip_unusable(void **state)
{
    Fixture *f = *state;
    Corpus corpus;
    Error err = {{0}};
    assert_int_equal(corpus_load("tests/data/tiny.tsv", 0, 1, &corpus, &err), 0);
    Dataset d;
    dataset_from_corpus(&d, &corpus, f->src, f->tgt, 32);
    assert_int_equal(corpus.count, 0); /* taken over */
    assert_int_equal(dataset_hash(&d), dataset_hash(&f->data));
    d.usable[3] = false; /* as if too long */
    int draw[] = {0, 0, 3, 5, 5, 5, 15};
    Batches b;
    batches_build_from(&b, &d, draw, 7, 40);
    int seen[16] = {0}, total = 0;
    for (size_t k = 0; k < b.count; k++)
        for (int i = b.first[k]; i < b.first[k + 1]; i++) seen[b.pairs[i]]++, total++;
    assert_int_equal(total, 6);
    assert_int_equal(seen[0], 2);
    assert_int_equal(seen[3], 0);
    assert_int_equal(seen[5], 3);
    assert_int_equal(seen[15], 1);
    batches_free(&b);
    dataset_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_source_ending_in_punctuation_loses_it_at_probability_one,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_probability_zero_changes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_source_of_max_len_tokens_is_usable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batches_are_full_sorted_and_shuffled_per_epoch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dropping_is_a_function_of_seed_epoch_and_pair, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_source_of_one_token_is_never_emptied, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_target_of_max_len_tokens_is_unusable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_words_are_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batches_from_a_draw_keep_repeats_and_skip_unusable, setup, teardown),
        cmocka_unit_test(test_blank_lines_are_skipped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
