/* test_beam_many.c — beam search over several sentences at once
 * (beam_decode_many, model/beam_many.c) against beam_decode sentence by
 * sentence: the same tokens and the same scores, bit for bit.
 *
 * That holds wherever a product gives each row the bits it gets whatever
 * rows are beside it, which beam_decode_many relies on (it keeps each
 * product within those kernels' row counts):
 *   - a float32 model: gemm_nt's small-M path, on every kernel (gemm.h);
 *   - a float16 model kept float16: every row count (gemm_f16.h), the
 *     AVX2 and AVX-512 kernels both checked on an AVX-512 machine (AVX2
 *     forced); on a CPU without them the shipped model is checked on the
 *     generic kernel (widened at load, rows independent).
 * Sentences of different lengths: some end at different steps, one stops
 * at its length limit, one is longer than an encoder chunk (encoded alone),
 * and there are more sentences than one group holds.  Also: the bounds on
 * the activations a call can need (greedy and beam) hold. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../app/translator.h"
#include "../model/beam.h"
#include "../model/gemm.h"
#include "../model/gemm_f16.h"
#include "../model/model.h"
#include "../tokenizer/vocab.h"

enum { MAX_SENTENCES = 16 };

typedef struct {
    int count;
    int src_ids[MAX_SENTENCES * 128];
    bool src_spaced[MAX_SENTENCES * 128]; /* the encoder's marks (number_rule.h), packed the same */
    int src_start[MAX_SENTENCES + 1];
    int limits[MAX_SENTENCES];
} Sentences;

/* What the checks below saw, so a case can prove it exercised something. */
typedef struct {
    int lengths_changed; /* neighbours whose outputs differ in length */
    int at_limit;        /* answers that stopped at the limit without </s> */
} Seen;

/* beam_decode_many on `in` equals beam_decode on each sentence alone (the
 * rules' src_spaced, when set, are in->src_spaced: the call's and then
 * each sentence's own). */
static Seen check_equal(const Model *m, const Sentences *in, BeamSettings set)
{
    const DecodeRules *together = set.rules;
    DecodeRules alone = together ? *together : (DecodeRules){0};
    Seen seen = {0, 0};
    int *outputs[MAX_SENTENCES], lengths[MAX_SENTENCES];
    float scores[MAX_SENTENCES];
    for (int b = 0; b < in->count; b++) outputs[b] = malloc((size_t)in->limits[b] * sizeof(int));
    Activations work = {0}; /* reused by a second call, as translate does mini-batch after mini-batch */
    for (int call = 0; call < 2; call++) {
        set.rules = together;
        beam_decode_many(&work, m, in->src_ids, in->src_start, in->count, in->limits, &set, outputs, lengths,
                         scores);
        for (int b = 0; b < in->count; b++) {
            Translation t;
            float score;
            set.n_best = 1;
            int S = in->src_start[b + 1] - in->src_start[b];
            alone.src_spaced = decode_rules_spaced(together, in->src_start[b]);
            set.rules = together ? &alone : NULL;
            assert_int_equal(beam_decode(m, in->src_ids + in->src_start[b], S, in->limits[b], &set, &t, &score), 1);
            if (lengths[b] != t.steps || memcmp(outputs[b], t.output_ids, (size_t)t.steps * sizeof(int)) != 0 ||
                memcmp(&scores[b], &score, sizeof score) != 0)
                fail_msg("beam %d, alpha %g, no_repeat %d, numbers %s, sentence %d (S %d, limit %d): %d tokens "
                         "scored %a together, %d scored %a alone",
                         set.beam, set.length_penalty, set.rules ? set.rules->no_repeat_ngram : 0,
                         set.rules && set.rules->numbers ? "copied" : "free", b, S, in->limits[b], lengths[b],
                         scores[b], t.steps, score);
            seen.lengths_changed += b > 0 && lengths[b] != lengths[b - 1];
            seen.at_limit += !t.finished;
            translation_free(&t);
        }
    }
    acts_free(&work);
    for (int b = 0; b < in->count; b++) free(outputs[b]);
    return seen;
}

/* Every beam width, length penalty and no-repeat setting asked for. */
static Seen check_settings(const Model *m, const Sentences *in)
{
    static const int beams[] = {4, 2, 3};
    static const float alphas[] = {1.0f, 0.0f, 1.4f};
    static const int no_repeats[] = {0, 2, 1};
    Seen all = {0, 0};
    for (size_t i = 0; i < sizeof beams / sizeof *beams; i++)
        for (size_t j = 0; j < sizeof no_repeats / sizeof *no_repeats; j++) {
            DecodeRules rules = {no_repeats[j], NULL, NULL};
            BeamSettings set = {beams[i], alphas[i], 1, &rules, NULL, NULL};
            Seen s = check_equal(m, in, set);
            all.lengths_changed += s.lengths_changed;
            all.at_limit += s.at_limit;
        }
    return all;
}

static void expect_meaningful(Seen seen)
{
    if (seen.lengths_changed < 3) fail_msg("only %d length changes: the test proves little", seen.lengths_changed);
    if (seen.at_limit < 1) fail_msg("no answer stopped at its limit");
}

/* ---- a small random float32 model ------------------------------------------ */

static ModelArch tiny_arch(bool pre)
{
    ModelArch a = {.d_model = 16, .heads = 2, .encoder_layers = 2, .decoder_layers = 2,
                   .d_ff = 24, .activation = ACTIVATION_GELU, .norm_first = pre, .max_len = 24,
                   .scale_attention = true, .tied_output = false, .src_vocab = 30, .tgt_vocab = 24};
    return a;
}

/* 14 random sources of 1 to 20 tokens (one group holds 16 / beam rows'
 * worth; 17+ tokens exceed an encoder chunk), limits from 1 to max_len. */
static void random_sentences(Sentences *in, uint64_t seed, const ModelArch *a)
{
    Rng rng;
    rng_seed(&rng, seed);
    in->count = 14;
    in->src_start[0] = 0;
    for (int b = 0; b < in->count; b++) {
        int S = b == 3 ? 20 : 1 + (int)(rng_uniform(&rng) * 12.0f);
        for (int i = 0; i < S; i++) in->src_ids[in->src_start[b] + i] = 4 + (int)(rng_uniform(&rng) * 26.0f) % 26;
        in->src_start[b + 1] = in->src_start[b] + S;
        in->limits[b] = b == 5 ? 2 : 3 + (b * 7) % (a->max_len - 2);
    }
}

static void test_float32_model_equals_one_by_one(void **state)
{
    (void)state;
    Seen all = {0, 0};
    for (int pre = 0; pre < 2; pre++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            ModelArch a = tiny_arch(pre);
            Model m;
            model_init_random(&m, &a, seed);
            Sentences in;
            random_sentences(&in, seed + 10, &a);
            Seen s = check_settings(&m, &in);
            all.lengths_changed += s.lengths_changed;
            all.at_limit += s.at_limit;
            model_free(&m);
        }
    expect_meaningful(all);
}

/* decode_greedy_many_bound and beam_decode_many_bound: activations fitted
 * to them once hold every call on that many sources of at most that
 * length (search_translate_batches reserves them so a file's mini-batches
 * never reallocate): a call on the longest sources there can be, with
 * the longest limits, leaves the block where it was. */
static void test_activation_bounds_are_never_outgrown(void **state)
{
    (void)state;
    ModelArch a = tiny_arch(true);
    Model m;
    model_init_random(&m, &a, 4);
    for (int count = 1; count <= MAX_SENTENCES; count += 5)
        for (int beam = 1; beam <= 4; beam++) {
            Sentences in = {.count = count};
            for (int b = 0; b < count; b++) {
                for (int i = 0; i < a.max_len; i++) in.src_ids[b * a.max_len + i] = 4 + (b + i) % 26;
                in.src_start[b + 1] = (b + 1) * a.max_len;
                in.limits[b] = a.max_len;
            }
            ActsSize most = beam == 1 ? decode_greedy_many_bound(&a, count, a.max_len)
                                      : beam_decode_many_bound(&m, beam, count, a.max_len);
            Activations work = {0};
            acts_fit(&work, &a, most);
            float *block = work.block;
            size_t size = work.block_size;
            int *outputs[MAX_SENTENCES], lengths[MAX_SENTENCES];
            for (int b = 0; b < count; b++) outputs[b] = malloc((size_t)a.max_len * sizeof(int));
            if (beam == 1) {
                decode_greedy_many_in(&work, &m, in.src_ids, in.src_start, count, in.limits, NULL, outputs, lengths,
                                      NULL);
            } else {
                BeamSettings set = {beam, 1.0f, 1, NULL, NULL, NULL};
                beam_decode_many(&work, &m, in.src_ids, in.src_start, count, in.limits, &set, outputs, lengths,
                                 NULL);
            }
            if (work.block != block || work.block_size != size)
                fail_msg("%d sources of %d tokens, beam %d: the activations grew from %zu floats to %zu", count,
                         a.max_len, beam, size, work.block_size);
            assert_int_equal(acts_bytes(&a, most), size * sizeof(float));
            for (int b = 0; b < count; b++) free(outputs[b]);
            acts_free(&work);
        }
    model_free(&m);
}

/* The generic kernel too (rows independent for any count). */
static void test_float32_model_on_the_generic_kernel(void **state)
{
    (void)state;
    assert_true(gemm_force_kernel("generic"));
    ModelArch a = tiny_arch(false);
    Model m;
    model_init_random(&m, &a, 2);
    Sentences in;
    random_sentences(&in, 5, &a);
    BeamSettings set = {4, 1.0f, 1, NULL, NULL, NULL};
    check_equal(&m, &in, set);
    model_free(&m);
    gemm_force_kernel(NULL);
}

/* ---- the shipped en-zh model ------------------------------------------------ */

static const char *const english[] = {
    "I love China.",
    "Tom is reading a very long book about the history of the world, and he will not stop until he has read "
    "every single page of it, even if it takes him the whole summer and most of the autumn.",
    "How are you?",
    "Yes.",
    "It is raining today, so we will stay at home and watch a film.",
    "My father works in a hospital.",
    "Where is the station?",
    "She bought three apples and a loaf of bread at the market this morning.",
    "Thank you very much.",
    "Could you tell me how to get to the nearest post office?",
    "Hello.",
    "We should have left earlier.",
    "My phone number is 13912345678.",
    "The meeting is at 3:30 on May 21, and 2,500 people will come.",
    "I bought 110, 120 and 130 apples.",
};
enum { N_ENGLISH = sizeof english / sizeof *english };

/* The sentences through the config's tokenizer, with its limits; one
 * sentence gets a limit of 3, so that it stops there. */
static void shipped_sentences(const Translator *tr, Sentences *in)
{
    in->count = N_ENGLISH;
    in->src_start[0] = 0;
    for (int b = 0; b < N_ENGLISH; b++) {
        SourceIds src;
        Error err = {{0}};
        assert_int_equal(translator_encode(tr, english[b], strlen(english[b]), &src, &err), EXIT_OK);
        memcpy(in->src_ids + in->src_start[b], src.ids, (size_t)src.count * sizeof(int));
        memcpy(in->src_spaced + in->src_start[b], src.spaced, (size_t)src.count * sizeof(bool));
        in->src_start[b + 1] = in->src_start[b] + src.count;
        in->limits[b] = b == 4 ? 3 : search_limit(&tr->model.arch, &tr->config.decode, src.count);
        translator_source_ids_free(&src);
    }
    assert_true(in->src_start[2] - in->src_start[1] > GEMM_F16_SMALL_M); /* an encoder chunk alone */
}

static void check_shipped(const char *kernel)
{
    if (kernel) assert_true(gemm_force_kernel(kernel));
    Translator tr;
    Error err = {{0}};
    assert_int_equal(translator_open(&tr, "configs/en-zh.yaml", &err), EXIT_OK);
    Sentences in;
    shipped_sentences(&tr, &in);
    Seen all = {0, 0};
    static const int beams[] = {4, 2};
    for (int i = 0; i < 2; i++)
        for (int rule = 0; rule < 3; rule++) { /* none, no-repeat 2, numbers copied */
            DecodeRules rules = {rule == 1 ? 2 : 0, rule == 2 ? tr.numbers : NULL, rule == 2 ? in.src_spaced : NULL};
            BeamSettings set = {beams[i], 1.4f, 1, &rules, NULL, NULL};
            Seen s = check_equal(&tr.model, &in, set);
            all.lengths_changed += s.lengths_changed;
            all.at_limit += s.at_limit;
        }
    expect_meaningful(all);
    translator_close(&tr);
    if (kernel) gemm_force_kernel(NULL);
}

static void test_shipped_model_equals_one_by_one(void **state)
{
    (void)state;
    /* make test-aarch64: 12 sentences × 4 searches × 2 ways of the real
     * model through qemu and the generic kernels took over 5 minutes of
     * CI's 20; the float32 models above check that kernel there. */
    if (getenv("TEST_EMULATED")) SKIP_TEST("emulated", "the shipped model's searches under an emulator are too slow");
    if (strcmp(gemm_f16_kernel_name(), "generic") == 0) {
        check_shipped("generic");
        return;
    }
    check_shipped(NULL); /* float16 kept, this CPU's tiles */
    if (strcmp(gemm_f16_kernel_name(), "avx512") == 0) check_shipped("avx2"); /* and the AVX2 ones */
}

/* search_translate_batches with marks for some sources and NULL for
 * others (not known): a NULL entry reads as no spaces, as spaced NULL
 * does for all of them; it was copied from, and crashed. */
static void test_batches_take_a_null_marks_entry(void **state)
{
    (void)state;
    if (getenv("TEST_EMULATED")) SKIP_TEST("emulated", "the shipped model's searches under an emulator are too slow");
    Translator tr;
    Error err = {{0}};
    assert_int_equal(translator_open(&tr, "configs/en-zh.yaml", &err), EXIT_OK);
    Sentences in;
    shipped_sentences(&tr, &in);
    const int *src[N_ENGLISH];
    const bool *none[N_ENGLISH] = {NULL};
    int len[N_ENGLISH], *unknown[N_ENGLISH], *partly[N_ENGLISH], unknown_len[N_ENGLISH], partly_len[N_ENGLISH];
    for (int b = 0; b < N_ENGLISH; b++) {
        src[b] = in.src_ids + in.src_start[b];
        len[b] = in.src_start[b + 1] - in.src_start[b];
        unknown[b] = malloc((size_t)tr.model.arch.max_len * sizeof(int));
        partly[b] = malloc((size_t)tr.model.arch.max_len * sizeof(int));
    }
    SearchSettings set = tr.config.decode;
    set.beam = 1;
    SearchWorkspace ws = {0};
    search_translate_batches(&ws, &tr.model, src, NULL, len, N_ENGLISH, 4, &set, unknown, unknown_len, NULL);
    search_translate_batches(&ws, &tr.model, src, none, len, N_ENGLISH, 4, &set, partly, partly_len, NULL);
    for (int b = 0; b < N_ENGLISH; b++) {
        assert_int_equal(unknown_len[b], partly_len[b]);
        assert_memory_equal(unknown[b], partly[b], (size_t)unknown_len[b] * sizeof(int));
        free(unknown[b]);
        free(partly[b]);
    }
    search_workspace_free(&ws);
    translator_close(&tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float32_model_equals_one_by_one),
        cmocka_unit_test(test_float32_model_on_the_generic_kernel),
        cmocka_unit_test(test_activation_bounds_are_never_outgrown),
        cmocka_unit_test(test_shipped_model_equals_one_by_one),
        cmocka_unit_test(test_batches_take_a_null_marks_entry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
