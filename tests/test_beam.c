/* test_beam.c — beam search (model/beam.c) on small random models.
 *
 * Random models give no meaningful translations, but they are exactly
 * reproducible, and the seeds below were picked so that the hypotheses
 * have several tokens, some ending in </s> and some at the length limit.
 * What is checked: beam 1 is greedy decoding bit for bit; every n-best
 * hypothesis's maps and log-probabilities equal a teacher-forced pass over
 * its own tokens (so the K/V and map rows followed the right parents); the
 * n-best list is sorted, distinct and scored as beam_score says; a beam of
 * 4 never loses to greedy on these models; and a beam as wide as the
 * vocabulary finds the best of all outputs of up to 2 tokens. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/beam.h"
#include "../model/search.h"
#include "../model/model.h"
#include "../tokenizer/vocab.h"

enum { V_TGT = 24 };

static ModelArch tiny_arch(bool pre)
{
    ModelArch a = {.d_model = 16, .heads = 2, .encoder_layers = 2, .decoder_layers = 2,
                   .d_ff = 24, .activation = ACTIVATION_GELU, .norm_first = pre, .max_len = 24,
                   .scale_attention = true, .tied_output = false, .src_vocab = 30,
                   .tgt_vocab = V_TGT};
    return a;
}

static const int source[] = {5, 9, 12, 7, 3};
enum { S = 5, LIMIT = 12 };

/* A random model and the source decoded with it. */
typedef struct {
    bool pre;
    uint64_t seed;
} Case;

static const Case cases[] = {
    {false, 1},  /* greedy stops at </s> after 4 tokens; beam mixes ended and unfinished */
    {false, 2},  /* every hypothesis reaches the limit */
    {false, 18}, /* ended hypotheses of 5 and 9 tokens */
    {false, 30}, /* all four end in </s>, one exactly at the limit */
    {true, 1},   /* pre-norm: four ended hypotheses of different lengths */
    {true, 9},
    {true, 29},
    {true, 25},  /* greedy emits </s> at once */
};
enum { N_CASES = sizeof cases / sizeof cases[0] };

static void expect_near(const float *got, const float *want, size_t n, float tol, const char *what)
{
    float worst = 0.0f;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        float d = fabsf(got[i] - want[i]);
        if (d > worst || isnan(d)) worst = d, at = i;
    }
    if (!(worst <= tol))
        fail_msg("%s: max |difference| %g at %zu (%g vs %g), tolerance %g", what, worst, at,
                 got[at], want[at], tol);
}

static int beam_of(const Model *m, int beam, float alpha, int n_best, int limit, Translation *out,
                   float *scores)
{
    BeamSettings s = {.beam = beam, .length_penalty = alpha, .n_best = n_best};
    return beam_decode(m, source, S, limit, &s, out, scores);
}

/* ---- beam 1 is greedy -------------------------------------------------------- */

static void expect_same_translation(const Translation *a, const Translation *b, const ModelArch *arch)
{
    size_t T = (size_t)a->steps, H = (size_t)arch->heads, Ld = (size_t)arch->decoder_layers;
    assert_int_equal(a->steps, b->steps);
    assert_int_equal(a->finished, b->finished);
    assert_memory_equal(a->input_ids, b->input_ids, T * sizeof(int));
    assert_memory_equal(a->output_ids, b->output_ids, T * sizeof(int));
    assert_memory_equal(a->logprobs, b->logprobs, T * sizeof(float));
    assert_memory_equal(a->top_ids, b->top_ids, T * TRANSLATION_TOP_K * sizeof(int));
    assert_memory_equal(a->top_logprobs, b->top_logprobs, T * TRANSLATION_TOP_K * sizeof(float));
    assert_memory_equal(a->encoder_attn, b->encoder_attn,
                        (size_t)arch->encoder_layers * H * S * S * sizeof(float));
    assert_memory_equal(a->decoder_attn, b->decoder_attn, Ld * H * T * T * sizeof(float));
    assert_memory_equal(a->cross_attn, b->cross_attn, Ld * H * T * S * sizeof(float));
}

static void test_beam_one_is_greedy_bit_for_bit(void **state)
{
    (void)state;
    for (int c = 0; c < N_CASES; c++) {
        ModelArch a = tiny_arch(cases[c].pre);
        Model m;
        model_init_random(&m, &a, cases[c].seed);
        Decoder dec;
        decode_init(&dec, &m);
        Translation greedy, beam;
        decode_greedy(&dec, source, S, LIMIT, NULL, false, &greedy);
        float score;
        assert_int_equal(beam_of(&m, 1, 1.0f, 1, LIMIT, &beam, &score), 1);
        expect_same_translation(&beam, &greedy, &a);
        assert_true(score == beam_score(&greedy, 1.0f));
        translation_free(&beam);
        translation_free(&greedy);
        decode_free(&dec);
        model_free(&m);
    }
}

/* ---- progress ------------------------------------------------------------------ */

typedef struct {
    int calls, last, limit;
} Steps;

static void count_step(void *context, int step, int limit)
{
    Steps *s = context;
    if (step != s->last + 1) fail_msg("step %d after step %d", step, s->last);
    s->calls++;
    s->last = step;
    s->limit = limit;
}

/* search_translate calls the decoder's progress hook once per step, in
 * order, greedy or beam; without a hook, nothing changes. */
static void test_progress_is_called_once_per_step(void **state)
{
    (void)state;
    ModelArch a = tiny_arch(true);
    Model m;
    model_init_random(&m, &a, 3);
    Decoder dec;
    decode_init(&dec, &m);
    for (int beam = 1; beam <= 4; beam += 3) {
        SearchSettings set = {.beam = beam, .length_penalty = 1.0f, .max_output_ratio = 2.0f,
                              .max_output_extra = 4};
        Translation plain, watched;
        float score;
        dec.progress = NULL;
        search_translate(&dec, source, NULL, S, &set, 1, false, &plain, &score);
        Steps steps = {0};
        dec.progress = count_step;
        dec.progress_context = &steps;
        search_translate(&dec, source, NULL, S, &set, 1, false, &watched, &score);
        assert_int_equal(steps.limit, search_limit(&a, &set, S));
        if (beam == 1) assert_int_equal(steps.calls, watched.steps);
        else assert_true(steps.calls >= 1 && steps.calls <= steps.limit);
        assert_int_equal(plain.steps, watched.steps);
        assert_memory_equal(plain.output_ids, watched.output_ids, (size_t)plain.steps * sizeof(int));
        translation_free(&plain);
        translation_free(&watched);
    }
    decode_free(&dec);
    model_free(&m);
}

/* ---- each hypothesis carries its own path's maps ----------------------------- */

static void expect_teacher_forced_equal(const Model *m, const Translation *t)
{
    const ModelArch *a = &m->arch;
    size_t T = (size_t)t->steps, H = (size_t)a->heads, Ld = (size_t)a->decoder_layers;
    Translation tf;
    decode_teacher_forced(m, source, S, t->input_ids, t->output_ids, t->steps, &tf);
    assert_int_equal(tf.finished, t->finished);
    assert_memory_equal(t->top_ids, tf.top_ids, T * TRANSLATION_TOP_K * sizeof(int));
    expect_near(t->logprobs, tf.logprobs, T, 1e-5f, "logprobs");
    expect_near(t->top_logprobs, tf.top_logprobs, T * TRANSLATION_TOP_K, 1e-5f, "top_logprobs");
    expect_near(t->encoder_attn, tf.encoder_attn, (size_t)a->encoder_layers * H * S * S, 1e-5f,
                "encoder_attn");
    expect_near(t->decoder_attn, tf.decoder_attn, Ld * H * T * T, 1e-5f, "decoder_attn");
    expect_near(t->cross_attn, tf.cross_attn, Ld * H * T * S, 1e-5f, "cross_attn");
    translation_free(&tf);
}

static void test_every_hypothesis_has_its_own_paths_maps(void **state)
{
    (void)state;
    for (int c = 0; c < N_CASES; c++) {
        ModelArch a = tiny_arch(cases[c].pre);
        Model m;
        model_init_random(&m, &a, cases[c].seed);
        Translation out[4];
        int n = beam_of(&m, 4, 1.0f, 4, LIMIT, out, NULL);
        assert_int_equal(n, 4);
        for (int i = 0; i < n; i++) {
            const Translation *t = &out[i];
            assert_int_equal(t->input_ids[0], VOCAB_BOS);
            assert_int_equal(t->finished, t->output_ids[t->steps - 1] == VOCAB_EOS);
            if (!t->finished) assert_int_equal(t->steps, LIMIT);
            expect_teacher_forced_equal(&m, t);
            translation_free(&out[i]);
        }
        model_free(&m);
    }
}

/* ---- the n-best list ------------------------------------------------------------ */

static bool same_tokens(const Translation *a, const Translation *b)
{
    return a->steps == b->steps &&
           memcmp(a->output_ids, b->output_ids, (size_t)a->steps * sizeof(int)) == 0;
}

static void test_n_best_is_sorted_distinct_and_scored(void **state)
{
    (void)state;
    static const float alphas[] = {0.0f, 0.6f, 1.0f};
    for (int c = 0; c < N_CASES; c++) {
        ModelArch a = tiny_arch(cases[c].pre);
        Model m;
        model_init_random(&m, &a, cases[c].seed);
        for (size_t k = 0; k < sizeof alphas / sizeof alphas[0]; k++) {
            Translation out[6];
            float scores[6];
            int n = beam_of(&m, 6, alphas[k], 5, LIMIT, out, scores);
            assert_int_equal(n, 5);
            for (int i = 0; i < n; i++) {
                assert_true(scores[i] == beam_score(&out[i], alphas[k]));
                if (i > 0 && out[i].finished && !out[i - 1].finished)
                    fail_msg("case %d: %d ended, after %d unfinished", c, i, i - 1);
                if (i > 0 && out[i].finished == out[i - 1].finished && scores[i] > scores[i - 1])
                    fail_msg("case %d: score %d (%g) above score %d (%g)", c, i, scores[i], i - 1,
                             scores[i - 1]);
                for (int j = 0; j < i; j++) assert_false(same_tokens(&out[i], &out[j]));
            }
            for (int i = 0; i < n; i++) translation_free(&out[i]);
        }
        model_free(&m);
    }
}

/* Asking for fewer answers stops the search as soon as those are final
 * (beam.c, settled): they must be exactly the first of the full list. */
static void test_fewer_wanted_is_a_prefix(void **state)
{
    (void)state;
    static const float alphas[] = {0.0f, 1.0f};
    for (int c = 0; c < N_CASES; c++)
        for (size_t al = 0; al < sizeof alphas / sizeof *alphas; al++) {
            ModelArch a = tiny_arch(cases[c].pre);
            Model m;
            model_init_random(&m, &a, cases[c].seed);
            Translation all[4], few[3];
            float s_all[4], s_few[3];
            assert_int_equal(beam_of(&m, 4, alphas[al], 4, LIMIT, all, s_all), 4);
            for (int n = 1; n <= 3; n++) {
                assert_int_equal(beam_of(&m, 4, alphas[al], n, LIMIT, few, s_few), n);
                for (int i = 0; i < n; i++) {
                    assert_true(same_tokens(&all[i], &few[i]));
                    assert_true(s_all[i] == s_few[i]);
                    translation_free(&few[i]);
                }
            }
            for (int i = 0; i < 4; i++) translation_free(&all[i]);
            model_free(&m);
        }
}

/* ---- search quality ------------------------------------------------------------- */

/* Not a theorem (greedy's path can be pruned early), but it holds on these
 * models; a failure after a change is worth a look. */
static void test_beam_of_four_beats_or_ties_greedy(void **state)
{
    (void)state;
    static const float alphas[] = {0.0f, 1.0f};
    for (int c = 0; c < N_CASES; c++) {
        ModelArch a = tiny_arch(cases[c].pre);
        Model m;
        model_init_random(&m, &a, cases[c].seed);
        Decoder dec;
        decode_init(&dec, &m);
        Translation greedy;
        decode_greedy(&dec, source, S, LIMIT, NULL, false, &greedy);
        for (size_t k = 0; k < sizeof alphas / sizeof alphas[0]; k++) {
            Translation best;
            float score;
            assert_int_equal(beam_of(&m, 4, alphas[k], 1, LIMIT, &best, &score), 1);
            float g = beam_score(&greedy, alphas[k]);
            if (score < g)
                fail_msg("case %d, alpha %g: beam 4 scores %g, greedy %g", c, alphas[k], score, g);
            translation_free(&best);
        }
        translation_free(&greedy);
        decode_free(&dec);
        model_free(&m);
    }
}

/* Score of output tokens out[0..T-1] by a teacher-forced pass. */
static float forced_score(const Model *m, const int *out, int T, float alpha)
{
    int in[2] = {VOCAB_BOS, out[0]};
    Translation tf;
    decode_teacher_forced(m, source, S, in, out, T, &tf);
    float score = beam_score(&tf, alpha);
    translation_free(&tf);
    return score;
}

/* With limit 2 and a beam of V·V, every first token survives and every
 * second step is kept, so the search must find the best of all outputs
 * that end: </s> alone, or a token and </s> (</s> alone always ends, and
 * an output cut off at the limit never beats one that ended: beam.c). */
static void test_wide_beam_finds_best_of_all_short_outputs(void **state)
{
    (void)state;
    static const float alphas[] = {0.0f, 1.0f};
    for (int c = 0; c < N_CASES; c++) {
        ModelArch a = tiny_arch(cases[c].pre);
        Model m;
        model_init_random(&m, &a, cases[c].seed);
        for (size_t k = 0; k < sizeof alphas / sizeof alphas[0]; k++) {
            int eos[1] = {VOCAB_EOS};
            float best = forced_score(&m, eos, 1, alphas[k]);
            for (int w1 = 0; w1 < V_TGT; w1++)
                if (w1 != VOCAB_EOS) {
                    int out[2] = {w1, VOCAB_EOS};
                    float s = forced_score(&m, out, 2, alphas[k]);
                    if (s > best) best = s;
                }
            Translation t;
            float score;
            assert_int_equal(beam_of(&m, V_TGT * V_TGT, alphas[k], 1, 2, &t, &score), 1);
            if (fabsf(score - best) > 1e-5f)
                fail_msg("case %d, alpha %g: beam found %g, exhaustive search %g", c, alphas[k],
                         score, best);
            translation_free(&t);
        }
        model_free(&m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_beam_one_is_greedy_bit_for_bit),
        cmocka_unit_test(test_every_hypothesis_has_its_own_paths_maps),
        cmocka_unit_test(test_n_best_is_sorted_distinct_and_scored),
        cmocka_unit_test(test_fewer_wanted_is_a_prefix),
        cmocka_unit_test(test_beam_of_four_beats_or_ties_greedy),
        cmocka_unit_test(test_wide_beam_finds_best_of_all_short_outputs),
        cmocka_unit_test(test_progress_is_called_once_per_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
