/* test_no_repeat.c — the no-repeat-n-gram rule (model/decode.c's
 * decode_ban_repeats) and its use by greedy decoding, batched greedy
 * decoding and beam search.
 *
 * What is checked: the rule bans exactly the tokens that would complete an
 * n-gram already in the history (a table of cases); random models that
 * loop without it (V = 24 tokens, so repeats are common) never repeat an
 * n-gram with it, greedy and beam alike; the log-probabilities recorded
 * under the rule are still the model's own (a teacher-forced pass over the
 * same tokens gives them); beam 1 under the rule is greedy under the rule,
 * bit for bit; batched greedy decoding (--eval's) gives the same tokens as
 * one sentence at a time; and n 0 changes nothing. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../model/beam.h"
#include "../model/model.h"

/* ---- the rule ------------------------------------------------------------------ */

static void test_bans_the_tokens_that_complete_a_seen_ngram(void **state)
{
    (void)state;
    enum { V = 10 };
    static const struct {
        int history[8], len, n;
        int banned[V]; /* 1 = banned */
    } cases[] = {
        {{5, 6, 5}, 3, 2, {[6] = 1}},                 /* 5 6 seen, ends in 5: no second 6 */
        {{1, 2, 3, 1, 2}, 5, 3, {[3] = 1}},           /* 1 2 3 seen, ends in 1 2 */
        {{1, 2, 3, 1, 2}, 5, 2, {[3] = 1}},           /* ends in 2: 2 3 seen */
        {{4, 4}, 2, 2, {[4] = 1}},                    /* 4 4 4 would repeat 4 4 */
        {{7, 8, 9}, 3, 1, {[7] = 1, [8] = 1, [9] = 1}}, /* n 1: no token twice */
        {{1, 2, 3}, 3, 2, {0}},                       /* 3 never seen before the end */
        {{1, 2}, 2, 4, {0}},                          /* history shorter than n-1 */
        {{3, 1, 3, 2, 3}, 5, 2, {[1] = 1, [2] = 1}},  /* 3 was followed by 1 and by 2 */
        {{1, 2, 3}, 3, 0, {0}},                       /* n 0: off */
        {{0}, 0, 1, {0}},                             /* nothing output yet */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        float logits[V];
        for (int i = 0; i < V; i++) logits[i] = (float)i * 0.5f;
        decode_ban_repeats(cases[c].history, cases[c].len, cases[c].n, logits);
        for (int i = 0; i < V; i++) {
            bool banned = logits[i] == -INFINITY;
            if (banned != (cases[c].banned[i] == 1))
                fail_msg("case %zu: token %d is %sbanned", c, i, banned ? "" : "not ");
            if (!banned && logits[i] != (float)i * 0.5f) fail_msg("case %zu: token %d changed", c, i);
        }
    }
}

/* ---- decoding under it ------------------------------------------------------------ */

enum { V_TGT = 24, S = 5, LIMIT = 20 };
static const int source[S] = {5, 9, 12, 7, 3};

static ModelArch tiny_arch(void)
{
    return (ModelArch){.d_model = 16, .heads = 2, .encoder_layers = 2, .decoder_layers = 2, .d_ff = 24,
                       .activation = ACTIVATION_RELU, .norm_first = false, .max_len = 24,
                       .scale_attention = true, .tied_output = false, .src_vocab = 30, .tgt_vocab = V_TGT};
}

/* Does ids[0..len-1] hold some n-gram twice? */
static bool repeats_ngram(const int *ids, int len, int n)
{
    for (int i = 0; i + n <= len; i++)
        for (int j = i + 1; j + n <= len; j++)
            if (memcmp(ids + i, ids + j, (size_t)n * sizeof *ids) == 0) return true;
    return false;
}

/* The recorded log-probabilities are the model's: a teacher-forced pass
 * over the same tokens gives them. */
static void expect_models_own_logprobs(const Model *m, const Translation *t)
{
    Translation tf;
    decode_teacher_forced(m, source, S, t->input_ids, t->output_ids, t->steps, &tf);
    for (int i = 0; i < t->steps; i++)
        if (fabsf(tf.logprobs[i] - t->logprobs[i]) > 1e-5f)
            fail_msg("step %d: logprob %g, teacher-forced %g", i, t->logprobs[i], tf.logprobs[i]);
    translation_free(&tf);
}

static void test_greedy_and_beam_never_repeat_an_ngram(void **state)
{
    (void)state;
    ModelArch a = tiny_arch();
    int looped = 0; /* seeds whose plain greedy output repeats a bigram */
    for (uint64_t seed = 1; seed <= 12; seed++) {
        Model m;
        model_init_random(&m, &a, seed);
        Decoder dec;
        decode_init(&dec, &m);
        Translation plain;
        decode_greedy(&dec, source, S, LIMIT, 0, false, &plain);
        looped += repeats_ngram(plain.output_ids, plain.steps, 2);
        for (int n = 1; n <= 3; n++) {
            Translation greedy, beam1, beam4[4];
            decode_greedy(&dec, source, S, LIMIT, n, false, &greedy);
            if (repeats_ngram(greedy.output_ids, greedy.steps, n))
                fail_msg("seed %d, n %d: greedy repeats an n-gram", (int)seed, n);
            expect_models_own_logprobs(&m, &greedy);

            BeamSettings one = {.beam = 1, .length_penalty = 1.0f, .n_best = 1, .no_repeat_ngram = n};
            assert_int_equal(beam_decode(&m, source, S, LIMIT, &one, &beam1, NULL), 1);
            assert_int_equal(beam1.steps, greedy.steps);
            assert_memory_equal(beam1.output_ids, greedy.output_ids, (size_t)greedy.steps * sizeof(int));
            assert_memory_equal(beam1.logprobs, greedy.logprobs, (size_t)greedy.steps * sizeof(float));

            BeamSettings four = {.beam = 4, .length_penalty = 1.0f, .n_best = 4, .no_repeat_ngram = n};
            int got = beam_decode(&m, source, S, LIMIT, &four, beam4, NULL);
            assert_true(got >= 1);
            for (int i = 0; i < got; i++) {
                if (repeats_ngram(beam4[i].output_ids, beam4[i].steps, n))
                    fail_msg("seed %d, n %d: beam hypothesis %d repeats an n-gram", (int)seed, n, i);
                expect_models_own_logprobs(&m, &beam4[i]);
                translation_free(&beam4[i]);
            }
            translation_free(&beam1);
            translation_free(&greedy);
        }
        translation_free(&plain);
        decode_free(&dec);
        model_free(&m);
    }
    if (looped < 3) fail_msg("only %d of 12 random models loop without the rule: the test proves little", looped);
}

static void test_batched_greedy_follows_the_rule_too(void **state)
{
    (void)state;
    ModelArch a = tiny_arch();
    Model m;
    model_init_random(&m, &a, 3);
    Decoder dec;
    decode_init(&dec, &m);
    /* Three sources packed as a Batch, decoded together and one by one. */
    static const int src_ids[] = {5, 9, 12, 7, 3, 4, 4, 8, 2, 11, 6, 6, 6};
    static const int src_start[] = {0, 5, 9, 13};
    const int limits[] = {LIMIT, 9, LIMIT};
    for (int n = 0; n <= 2; n++) {
        int out[3][LIMIT], lengths[3];
        int *outputs[3] = {out[0], out[1], out[2]};
        decode_greedy_many(&m, src_ids, src_start, 3, limits, n, outputs, lengths);
        for (int b = 0; b < 3; b++) {
            Translation t;
            decode_greedy(&dec, src_ids + src_start[b], src_start[b + 1] - src_start[b], limits[b], n, false, &t);
            assert_int_equal(lengths[b], t.steps);
            assert_memory_equal(out[b], t.output_ids, (size_t)t.steps * sizeof(int));
            translation_free(&t);
        }
    }
    decode_free(&dec);
    model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bans_the_tokens_that_complete_a_seen_ngram),
        cmocka_unit_test(test_greedy_and_beam_never_repeat_an_ngram),
        cmocka_unit_test(test_batched_greedy_follows_the_rule_too),
    };
    return cmocka_run_group_tests_name("no_repeat", tests, NULL, NULL);
}
