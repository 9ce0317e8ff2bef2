/* test_cli_beam.c — `-b/--beam` and `-n/--n-best` driven through
 * ./translate, as a user runs them (README, Usage):
 *   - `-n N -b B` prints N lines per input in the Moses/Marian format,
 *     `ID ||| TRANSLATION ||| FEATURES ||| SCORE`, ID counting the inputs
 *     from 0, scores descending within each input;
 *   - without -n the plain best translation is printed, the first of the
 *     n-best list;
 *   - `-b 1` is greedy decoding, also over a config whose own beam is 4;
 *   - `-n` alone widens the config's beam to N;
 *   - values out of range, not numbers, or `-n` above `-b` are usage
 *     errors: status 2, one line on stderr, nothing on stdout. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TINY "configs/tiny.yaml"

static RunResult translate(const char *const extra[], const char *config)
{
    const char *argv[32] = {"./translate", "-q", "-c", config};
    int n = 4;
    for (int i = 0; extra[i]; i++) argv[n++] = extra[i];
    argv[n] = NULL;
    RunResult r = run_program(argv, NULL, 0);
    return r;
}

/* Checks every line of an n-best listing: `n` lines per input for `inputs`
 * inputs, in the Moses/Marian format `ID ||| TRANSLATION ||| FEATURES |||
 * SCORE` with 0-based input ids, scores descending.  Fills first[i] with
 * input i's best translation (caller frees). */
static void check_n_best(const char *out, int inputs, int n, char **first)
{
    assert_int_equal(count_lines(out), inputs * n);
    const char *p = out;
    for (int in = 0; in < inputs; in++) {
        double previous = 0;
        for (int k = 0; k < n; k++) {
            size_t len = strcspn(p, "\n");
            char line[4096];
            snprintf(line, sizeof line, "%.*s", (int)len, p);
            p += len + (p[len] == '\n');
            char *a = strstr(line, " ||| "), *b = a ? strstr(a + 5, " ||| ") : NULL;
            char *c = b ? strstr(b + 5, " ||| ") : NULL;
            if (!a || !b || !c) fail_msg("not 'ID ||| TRANSLATION ||| FEATURES ||| SCORE': '%s'", line);
            *a = *b = *c = '\0';
            if (atoi(line) != in) fail_msg("input id %s, expected %d", line, in);
            if (strncmp(b + 5, "F0= ", 4) != 0) fail_msg("features '%s' do not start with 'F0= '", b + 5);
            char *end;
            double score = strtod(c + 5, &end);
            if (*end || end == c + 5 || score > 0) fail_msg("bad score '%s' (a log-probability, <= 0)", c + 5);
            if (k > 0 && score > previous) fail_msg("input %d: score %g after %g: not descending", in, score, previous);
            previous = score;
            if (k == 0) first[in] = strdup(a + 5);
        }
    }
}

static void test_n_best_prints_n_lines_per_input_with_scores_descending(void **state)
{
    (void)state;
    const char *extra[] = {"-n", "3", "-b", "3", "I love China.", "How are you?", NULL};
    RunResult r = translate(extra, TINY);
    print_message("%s", r.out);
    assert_int_equal(r.status, 0);
    char *best[2];
    check_n_best(r.out, 2, 3, best);
    /* without -n, the same beam prints just the best, plain */
    const char *plain[] = {"-b", "3", "I love China.", "How are you?", NULL};
    RunResult p = translate(plain, TINY);
    assert_int_equal(p.status, 0);
    char expected[8192];
    snprintf(expected, sizeof expected, "%s\n%s\n", best[0], best[1]);
    assert_string_equal(p.out, expected);
    free(best[0]);
    free(best[1]);
    run_result_free(&p);
    run_result_free(&r);
}

static void test_n_best_alone_widens_the_beam(void **state)
{
    (void)state;
    const char *alone[] = {"-n", "4", "I love China.", NULL};
    const char *with_b[] = {"-n", "4", "-b", "4", "I love China.", NULL};
    RunResult a = translate(alone, TINY), b = translate(with_b, TINY);
    assert_int_equal(a.status, 0);
    char *best;
    check_n_best(a.out, 1, 4, &best);
    assert_string_equal(a.out, b.out);
    free(best);
    run_result_free(&a);
    run_result_free(&b);
}

/* tiny.yaml with `decoding: beam: 4` added, in the temp folder. */
static const char *beam4_config(void)
{
    static char path[1024];
    char cwd[512], yaml[2048];
    if (!getcwd(cwd, sizeof cwd)) abort();
    snprintf(yaml, sizeof yaml,
             "name: tiny-beam4\nsource_language: en\ntarget_language: zh\n"
             "model:\n  weights: %s/tests/data/tiny.safetensors\n"
             "  source_vocab: %s/tests/data/tiny.src.vocab\n  target_vocab: %s/tests/data/tiny.tgt.vocab\n"
             "  random_init_seed: 7\n"
             "architecture:\n  d_model: 16\n  heads: 2\n  encoder_layers: 2\n  decoder_layers: 2\n"
             "  d_ff: 32\n  activation: gelu\n  norm: pre\n  max_len: 32\n  scale_attention: true\n"
             "  tied_output_embedding: true\n"
             "decoding:\n  beam: 4\n  length_penalty: 1.0\n",
             cwd, cwd, cwd);
    snprintf(path, sizeof path, "%s", temp_file("tiny-beam4.yaml", yaml, strlen(yaml)));
    return path;
}

static void test_beam_one_is_greedy_even_over_a_config_beam(void **state)
{
    (void)state;
    /* tiny.yaml has no decoding: section, so its beam is 1: greedy */
    const char *greedy[] = {"I love China.", "How are you?", "Tom's dog is big.", NULL};
    const char *b1[] = {"-b", "1", "I love China.", "How are you?", "Tom's dog is big.", NULL};
    RunResult g = translate(greedy, TINY);
    assert_int_equal(g.status, 0);
    assert_int_equal(count_lines(g.out), 3);
    /* the first run (any test) writes tiny.safetensors; then the beam-4 config reads it */
    const char *beam4 = beam4_config();
    RunResult one = translate(b1, beam4), four = translate(greedy, beam4);
    assert_int_equal(one.status, 0);
    assert_int_equal(four.status, 0);
    print_message("greedy:\n%sbeam 4 (the config's):\n%s", g.out, four.out);
    assert_string_equal(one.out, g.out);
    /* and the config's beam is used without -b: this random model's beam-4
     * translations differ from greedy's (were they equal, the check above
     * would not show that -b overrides the config) */
    assert_string_not_equal(four.out, g.out);
    run_result_free(&g);
    run_result_free(&one);
    run_result_free(&four);
}

/* Beam search stops early only when no live hypothesis could still win:
 * bounded by its score at the length limit, not only at its next length
 * (with a length penalty, a longer translation's normalised score can
 * rise).  Stopped too soon, the shipped model writes "He just arrived."
 * as 他刚到。; searched on, as 他刚才到了。, the better-scored one. */
static void test_beam_search_stops_only_when_nothing_can_win(void **state)
{
    (void)state;
    const char *argv[] = {"-b", "4", "He just arrived.", NULL};
    RunResult r = translate(argv, "configs/en-zh.yaml");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "他刚才到了。\n");
    run_result_free(&r);
}

/* Greedy's one best has the SCORE beam search would give it: the
 * log-probability over (tokens + 1)^length_penalty (en-zh's is 1), not
 * the raw log-probability. */
static void test_greedy_n_best_score_is_length_normalised(void **state)
{
    (void)state;
    const char *argv[] = {"-b", "1", "-n", "1", "I love China and its people.", NULL};
    RunResult r = translate(argv, "configs/en-zh.yaml");
    assert_int_equal(r.status, 0);
    const char *f0 = strstr(r.out, "F0= ");
    assert_non_null(f0);
    double logprob = 0, score = 0;
    int tokens = 0;
    assert_int_equal(sscanf(f0, "F0= %lf WordPenalty= -%d ||| %lf", &logprob, &tokens, &score), 3);
    if (fabs(score - logprob / (tokens + 1)) > 1e-3 || fabs(score - logprob) < 1e-3)
        fail_msg("SCORE %g, F0 %g, %d tokens: %s", score, logprob, tokens, r.out);
    run_result_free(&r);
}

static void test_invalid_beam_and_n_best_values_are_usage_errors(void **state)
{
    (void)state;
    static const char *const bad[][5] = {
        {"-b", "0"},  {"-b", "-1"}, {"-b", "65"},  {"-b", "abc"}, {"-b", "3x"}, {"-b", ""},
        {"--beam", "0"}, {"-n", "0"}, {"-n", "65"}, {"-n", "two"}, {"--n-best", "-2"},
        {"-n", "3", "-b", "2"}, {"-b", "2", "--logits", "-"}, {"-n", "2", "--logits", "-"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *extra[8];
        int n = 0;
        for (int k = 0; k < 5 && bad[i][k]; k++) extra[n++] = bad[i][k];
        extra[n++] = "I love China.";
        extra[n] = NULL;
        RunResult r = translate(extra, TINY);
        print_message("%s %s %s %s: status %d: %s", bad[i][0], bad[i][1], bad[i][2] ? bad[i][2] : "",
                      bad[i][3] ? bad[i][3] : "", r.status, r.err);
        if (r.status != 2) fail_msg("%s %s: status %d, expected 2", bad[i][0], bad[i][1], r.status);
        assert_string_equal(r.out, "");
        assert_int_equal(count_lines(r.err), 1);
        run_result_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_n_best_prints_n_lines_per_input_with_scores_descending),
        cmocka_unit_test(test_n_best_alone_widens_the_beam),
        cmocka_unit_test(test_beam_one_is_greedy_even_over_a_config_beam),
        cmocka_unit_test(test_beam_search_stops_only_when_nothing_can_win),
        cmocka_unit_test(test_greedy_n_best_score_is_length_normalised),
        cmocka_unit_test(test_invalid_beam_and_n_best_values_are_usage_errors),
    };
    return cmocka_run_group_tests_name("translate -b / -n", tests, NULL, NULL);
}
