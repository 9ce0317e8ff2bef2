/* test_beam_scores.c — beam search scores pinned to numbers worked out by
 * hand, for several length penalties.
 *
 * The model: every weight zero except the output bias, so the logits are
 * that bias at every step, whatever the source and the prefix, and each
 * token's log-probability is fixed: p(</s>) = 0.37, p(w) = 0.6 for the one
 * word w = id 4, 0.01 for each of <pad>, <unk>, <s>.  With a beam of 2 the
 * search is then easy to follow: after each step the two best extensions
 * of the single live hypothesis w^k are w^(k+1) and w^k </s> (anything
 * else is 60 times less likely), so the ended hypotheses are
 *     w^k </s>   score (k·ln 0.6 + ln 0.37) / (k+1)^alpha   (T = k+1 tokens)
 * and, at the length limit L, w^L unfinished, score L·ln 0.6 / L^alpha,
 * which is returned only where fewer than n_best ended, after them.
 *   ln 0.6  = -0.5108256237659907      ln 0.37 = -0.9942522733438669
 * model/beam.h: score = Σ log p / T^alpha, T counting the final </s>. */
#include "testutil.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "../model/beam.h"
#include "../model/beam_impl.h"
#include "../model/model.h"

enum { W = 4, V = 5 };

static void fixed_logits_model(Model *m)
{
    ModelArch a = {.d_model = 4, .heads = 1, .encoder_layers = 1, .decoder_layers = 1, .d_ff = 4,
                   .activation = ACTIVATION_RELU, .norm_first = true, .max_len = 8,
                   .scale_attention = true, .tied_output = false, .src_vocab = V, .tgt_vocab = V};
    model_init_random(m, &a, 1);
    memset(m->params.data, 0, m->params.count * sizeof(float));
    static const double p[V] = {0.01, 0.01, 0.01, 0.37, 0.6}; /* <pad> <unk> <s> </s> w */
    for (int i = 0; i < V; i++) m->params.generator_bias[i] = (float)log(p[i]);
}

typedef struct {
    float alpha;
    int limit;
    struct {
        int T;          /* tokens: w^(T-1) </s>, or w^T when unfinished */
        bool finished;
        double score;   /* worked out by hand, see the top */
    } best[2];
} Case;

static const Case cases[] = {
    /* alpha 0, the raw sum: </s> at once (-0.994) beats w </s> (-1.505),
     * which beats w w w unfinished (-1.532). */
    {0.0f, 3, {{1, true, -0.9942522733438669}, {2, true, -1.5050778971098575}}},
    /* alpha 1, the mean: longer is better, but w w w unfinished (ln 0.6 =
     * -0.5108) is no answer where two ended: w w </s> = (2 ln 0.6 +
     * ln 0.37) / 3 = -0.6720, then w </s> = -0.7525. */
    {1.0f, 3, {{3, true, -0.6719678402919494}, {2, true, -0.7525389485549288}}},
    /* alpha 0.6, limit 4: w </s> = (ln 0.6 + ln 0.37) / 2^0.6 = -0.99298
     * just ahead of </s> alone, -0.99425 (w^4 unfinished, -0.8894, would
     * have beaten both). */
    {0.6f, 4, {{2, true, -0.9929810957829447}, {1, true, -0.9942522733438669}}},
    /* alpha 1, limit 1: only </s> ended (-0.9943); w unfinished, though
     * better per token (-0.5108), fills the list after it. */
    {1.0f, 1, {{1, true, -0.9942522733438669}, {1, false, -0.5108256237659907}}},
};

static void test_scores_of_a_fixed_distribution_match_hand_computed_values(void **state)
{
    (void)state;
    Model m;
    fixed_logits_model(&m);
    const int src[] = {4, 4, 4};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        BeamSettings set = {.beam = 2, .length_penalty = cases[c].alpha, .n_best = 2};
        Translation out[2];
        float scores[2];
        int n = beam_decode(&m, src, 3, cases[c].limit, &set, out, scores);
        assert_int_equal(n, 2);
        for (int k = 0; k < 2; k++) {
            double want = cases[c].best[k].score;
            print_message("alpha %.1f, limit %d, #%d: %d tokens%s, score %.7f, by hand %.7f\n",
                          (double)cases[c].alpha, cases[c].limit, k, out[k].steps,
                          out[k].finished ? "" : " (unfinished)", (double)scores[k], want);
            assert_int_equal(out[k].steps, cases[c].best[k].T);
            assert_int_equal(out[k].finished, cases[c].best[k].finished);
            for (int t = 0; t < out[k].steps; t++)
                assert_int_equal(out[k].output_ids[t], out[k].finished && t == out[k].steps - 1 ? TOKEN_EOS : W);
            if (!(fabs(scores[k] - want) <= 1e-5 + 1e-5 * fabs(want)))
                fail_msg("alpha %g #%d: score %.7f, by hand %.7f", (double)cases[c].alpha, k, (double)scores[k], want);
            /* beam_score recomputes it from the kept log-probabilities */
            assert_true(fabs(beam_score(&out[k], cases[c].alpha) - want) <= 1e-5 + 1e-5 * fabs(want));
            translation_free(&out[k]);
        }
    }
    model_free(&m);
}

static void test_beam_score_of_given_log_probabilities(void **state)
{
    (void)state;
    float logprobs[3] = {-0.5f, -1.25f, -0.75f}; /* Σ = -2.5, T = 3 */
    Translation t = {.steps = 3, .logprobs = logprobs};
    static const struct {
        float alpha;
        double score;
    } table[] = {
        {0.0f, -2.5},                  /* -2.5 / 1 */
        {0.6f, -1.2932046449294665},   /* -2.5 / 3^0.6 = -2.5 / 1.9331820 */
        {1.0f, -0.8333333333333334},   /* -2.5 / 3 */
        {2.0f, -0.2777777777777778},   /* -2.5 / 9 */
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        double got = beam_score(&t, table[i].alpha);
        print_message("alpha %.1f: %.7f, by hand %.7f\n", (double)table[i].alpha, got, table[i].score);
        if (!(fabs(got - table[i].score) <= 1e-6 + 1e-6 * fabs(table[i].score)))
            fail_msg("alpha %g: beam_score %.7f, by hand %.7f", (double)table[i].alpha, got, table[i].score);
    }
}

/* beam_rank_candidates keeps the `beam` best proposals without sorting
 * them all: the kept list must be exactly the first `beam` of every
 * proposal sorted by its definition (raw score, then parent, then token).
 * Logits from a few values and equal parent scores make ties of all three
 * kinds. */
static int by_definition(const void *pa, const void *pb)
{
    const Candidate *a = pa, *b = pb;
    if (a->raw != b->raw) return a->raw > b->raw ? -1 : 1;
    if (a->parent != b->parent) return a->parent - b->parent;
    return a->token - b->token;
}

static void test_kept_proposals_are_the_best_of_all_sorted(void **state)
{
    (void)state;
    enum { MAX_BEAM = 12, MAX_V = 40 };
    float logits[MAX_BEAM * MAX_V], raw[MAX_BEAM];
    int histories[MAX_BEAM];
    Candidate all[MAX_BEAM * MAX_V];
    Rng rng;
    rng_seed(&rng, 5);
    for (int trial = 0; trial < 300; trial++) {
        int beam = 1 + (int)(rng_next(&rng) % MAX_BEAM), V = 2 + (int)(rng_next(&rng) % (MAX_V - 1));
        int live = 1 + (int)(rng_next(&rng) % (uint64_t)beam), values = 1 + trial % 5;
        for (int b = 0; b < live; b++) {
            raw[b] = -(float)(rng_next(&rng) % 3);
            for (int i = 0; i < V; i++) logits[b * V + i] = (float)(rng_next(&rng) % (uint64_t)values);
        }
        BeamSettings set = {.beam = beam, .n_best = 1, .length_penalty = 1.0f};
        Ranker r;
        beam_ranker_init(&r, &set, V);
        int kept = beam_rank_candidates(&r, logits, live, raw, histories, 1, 0, NULL, NULL, 0);
        /* every proposal: each hypothesis's `width` best tokens */
        int n = 0, *ids = xmalloc((size_t)r.width * sizeof *ids);
        for (int b = 0; b < live; b++) {
            decode_top_k(logits + b * V, V, r.width, ids);
            for (int k = 0; k < r.width; k++) {
                float lp = logits[b * V + ids[k]] - r.lse[b];
                all[n++] = (Candidate){b, ids[k], lp, raw[b] + lp};
            }
        }
        qsort(all, (size_t)n, sizeof *all, by_definition);
        assert_int_equal(kept, n < beam ? n : beam);
        for (int i = 0; i < kept; i++) {
            assert_int_equal(r.cand[i].parent, all[i].parent);
            assert_int_equal(r.cand[i].token, all[i].token);
            assert_true(r.cand[i].raw == all[i].raw);
        }
        free(ids);
        beam_ranker_free(&r);
    }
}

/* A hypothesis whose score overflowed (NaN) ranks after every finite
 * one: the beam keeps the finite proposals first. */
static void test_a_nan_score_ranks_last(void **state)
{
    (void)state;
    enum { V = 4 };
    float logits[2 * V] = {0}, raw[2] = {NAN, -1.0f};
    int histories[2] = {0};
    BeamSettings set = {.beam = 2, .n_best = 1, .length_penalty = 1.0f};
    Ranker r;
    beam_ranker_init(&r, &set, V);
    int kept = beam_rank_candidates(&r, logits, 2, raw, histories, 1, 0, NULL, NULL, 0);
    assert_true(kept >= 1);
    assert_int_equal(r.cand[0].parent, 1);
    beam_ranker_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scores_of_a_fixed_distribution_match_hand_computed_values),
        cmocka_unit_test(test_beam_score_of_given_log_probabilities),
        cmocka_unit_test(test_kept_proposals_are_the_best_of_all_sorted),
        cmocka_unit_test(test_a_nan_score_ranks_last),
    };
    return cmocka_run_group_tests_name("beam scores by hand", tests, NULL, NULL);
}
