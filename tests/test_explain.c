/* test_explain.c — `translate --explain` and `--show` print the seed
 * walk-through with the shapes of the classic explanations: 我想吃酸菜鱼
 * is 6 tokens, X = [6, 768], 3 heads of 256. */
#include "testutil.h"

#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What `./translate -q -c CONFIG [FLAG] --explain TEXT` prints (status 0);
 * free it. */
static char *explained(const char *config, const char *flag, const char *text)
{
    const char *argv[] = {"./translate", "-q", "-c", config, "--explain", text, flag, NULL};
    RunResult r = run_program(argv, NULL, 0);
    if (r.status != 0) fail_msg("--explain exited %d: %s", r.status, r.err);
    char *out = r.out;
    r.out = NULL;
    run_result_free(&r);
    return out;
}

/* configs/tiny.yaml copied to `path` in a temporary folder, its paths
 * (relative to configs/) made absolute, with `name_line` (NULL: kept) as
 * its name: line and `extra` appended. */
static void write_tiny_copy(const char *path, const char *name_line, const char *extra)
{
    size_t len;
    char *yaml = read_file("configs/tiny.yaml", &len), cwd[512], *at;
    assert_non_null(yaml);
    assert_non_null(getcwd(cwd, sizeof cwd));
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (char *line = strtok(yaml, "\n"); line; line = strtok(NULL, "\n")) {
        if (name_line && strncmp(line, "name:", 5) == 0) fputs(name_line, f);
        else if ((at = strstr(line, "../"))) fprintf(f, "%.*s%s/%s", (int)(at - line), line, cwd, at + 3);
        else fputs(line, f);
        fputc('\n', f);
    }
    fputs(extra, f);
    assert_int_equal(fclose(f), 0);
    free(yaml);
}

static void test_seed_walkthrough_shapes(void **state)
{
    (void)state;
    char *out = explained("configs/seed-example.yaml", NULL, "我想吃酸菜鱼");
    expect_in(out, "this model is untrained");
    expect_in(out, "我 | 想 | 吃 | 酸 | 菜 | 鱼   (6 tokens");
    expect_in(out, "X: [6, 768]");
    expect_in(out, "split 768 into 3 heads of d_k = 256: Q, K, V become [3, 6, 256], [3, 6, 256]");
    expect_in(out, "scores = Q·Kᵀ / √d_k   [3, 6, 6]");
    expect_in(out, "mask: none");
    expect_in(out, "mask: query i may not see keys after i");
    expect_in(out, "cross-attention (Q from the decoder, K and V from the encoder's memory M)");
    expect_in(out, "K = M·W_Kᵀ + b_K   [6, 768]");
    expect_in(out, "(sums to 1.000000)");
    expect_in(out, "translation: ");
    /* post-norm: the sublayers read X and Y themselves; cross-attention's
     * Q the masked self-attention's residual sum, normalised */
    expect_in(out, "Q = X·W_Qᵀ + b_Q   [6, 768]");
    expect_in(out, "Q = LN₁(Y + A)·W_Qᵀ + b_Q");
    free(out);
}

/* Pre-norm (the shipped models, tiny.yaml): each formula names what the
 * sublayer really reads, its input through a LayerNorm (it said X and Y,
 * whose products are not the Q printed beside them). */
static void test_explain_names_the_normalised_inputs(void **state)
{
    (void)state;
    char *out = explained("configs/tiny.yaml", NULL, "I love China.");
    expect_in(out, "Q = LN₁(X)·W_Qᵀ + b_Q");
    expect_in(out, "V = LN₁(X)·W_Vᵀ + b_V");
    expect_in(out, "Q = LN₁(Y)·W_Qᵀ + b_Q");
    expect_in(out, "Q = LN₂(Y + A)·W_Qᵀ + b_Q");
    expect_in(out, "K = M·W_Kᵀ + b_K");
    /* the untrained model runs to its limit of 16 steps: their numbers
     * right-aligned, so the rows line up past step 9 */
    expect_in(out, "  step  1: reads ");
    expect_in(out, "  step 16: reads ");
    assert_null(strstr(out, "int8"));
    free(out);
    /* --int8: the numbers are those of the int8 weights, and it says so */
    out = explained("configs/tiny.yaml", "--int8", "I love China.");
    expect_in(out, "; the products read int8 weights (--int8)\n");
    free(out);
}

static void test_show_draws_one_head(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "-q", "-c", "configs/tiny.yaml", "--show", "decoder:2:1", "I love China.", NULL};
    RunResult r = run_program(argv, NULL, 0);
    assert_int_equal(r.status, 0);
    expect_in(r.out, "decoder masked self-attention, layer 2, head 1");
    expect_in(r.out, "· = masked future");
    run_result_free(&r);
    /* anything but KIND[:LAYER[:HEAD]] in plain digits is refused: junk
     * after a number, a third number, spaces, 0, numbers past int */
    static const char *const bad[] = {"sideways", "cross:1x", "cross:1:2junk", "cross:1:1:1", "cross: 2",
                                      "cross:0", "cross:", "cross:1:", "cross:4294967297",
                                      "encoder:1:99999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *argv_bad[] = {"./translate", "-c", "configs/tiny.yaml", "--show", bad[i], "x", NULL};
        r = run_program(argv_bad, NULL, 0);
        if (r.status != 2) fail_msg("--show %s: status %d", bad[i], r.status);
        expect_in(r.err, "--show: expected encoder|decoder|cross");
        run_result_free(&r);
    }
}

/* The text is echoed as typed, but an escape sequence, a bell or a
 * bidirectional override reaches the terminal as visible text. */
/* The masked self-attention's example row is query 2, which sees two
 * keys (query 1 sees only itself: the mask would show nothing), and the
 * variance of its scores counts every visible pair, each query's own key
 * included (the shipped en-zh model on "Cheer up.": 293.03 over Q·Kᵀ, /64
 * for /√d_k; without the diagonal 104.67). */
static void test_explain_shows_the_mask_at_work(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "-q", "-t", "1", "-b", "1", "-c", "configs/tiny.yaml", "--explain",
                          "hello world", NULL};
    RunResult r = run_program(argv, NULL, 0);
    assert_int_equal(r.status, 0);
    const char *masked = strstr(r.out, "mask: query i may not see keys after i");
    assert_non_null(masked);
    const char *row = strstr(masked, "head 1, query 2, scores");
    assert_non_null(row);
    float a, b;
    assert_int_equal(sscanf(strchr(row, '[') + 1, "%f, %f, -inf", &a, &b), 2);
    run_result_free(&r);
    const char *shipped[] = {"./translate", "-q", "-t", "1", "-c", "configs/en-zh.yaml", "--explain", "Cheer up.",
                             NULL};
    r = run_program(shipped, NULL, 0);
    assert_int_equal(r.status, 0);
    const char *pairs = strstr(r.out, "over all heads and visible pairs: Q\xC2\xB7K\xE1\xB5\x80 ");
    assert_non_null(pairs);
    double variance = atof(pairs + strlen("over all heads and visible pairs: Q\xC2\xB7K\xE1\xB5\x80 "));
    if (fabs(variance - 293.03) > 0.5) fail_msg("variance %g, not 293.03", variance);
    run_result_free(&r);
}

static void test_explain_shows_control_characters(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "-q", "-b", "1", "-c", "configs/tiny.yaml", "--explain",
                          "a\x1b[31mred\x07 b \xe2\x80\xae" "evil \xc2\x9b" "2J", NULL};
    RunResult r = run_program(argv, NULL, 0);
    assert_int_equal(r.status, 0);
    expect_in(r.out, "\"a\\x1B[31mred\\x07 b \\u{202E}evil \\u{009B}2J\"");
    assert_null(strchr(r.out, '\x1b'));
    assert_null(strchr(r.out, '\x07'));
    assert_null(strstr(r.out, "\xe2\x80\xae"));
    assert_null(strstr(r.out, "\xc2\x9b")); /* C1 CSI: an escape sequence to xterm */
    /* the untrained model never says </s>: the limit stopped it */
    expect_in(r.out, "the length limit stopped it, so it may be cut short)\n");
    expect_in(r.out, "over all heads and visible pairs"); /* the decoder's: its mask hides the rest */
    run_result_free(&r);

    /* Marks that do not show, a typed backslash, a quote. */
    const char *hidden[] = {"./translate", "-q", "-b", "1", "-c", "configs/tiny.yaml", "--explain",
                            "a\xe2\x80\x8b" "b\xe2\x80\xa8" "c\xef\xbb\xbf" "d \\x1B \"q\"", NULL};
    r = run_program(hidden, NULL, 0);
    assert_int_equal(r.status, 0);
    expect_in(r.out, "\"a\\u{200B}b\\u{2028}c\\u{FEFF}d \\\\x1B \\\"q\\\"\"");
    run_result_free(&r);

    /* The config's name is the user's text too. */
    char config[700];
    snprintf(config, sizeof config, "%s/escape.yaml", temp_dir());
    write_tiny_copy(config, "name: \"t\\e[2Jx\"", "");
    const char *named[] = {"./translate", "-q", "-b", "1", "-c", config, "--explain", "a", NULL};
    r = run_program(named, NULL, 0);
    if (r.status != 0) print_in_full(&r);
    assert_int_equal(r.status, 0);
    expect_in(r.out, "Model t\\x1B[2Jx (");
    assert_null(strchr(r.out, '\x1b'));
    run_result_free(&r);
}

/* The search's settings as the search used them: "%.2g" said a length
 * penalty of 1.25 as 1.2 and 1.05 as 1, the default's value. */
static void test_explain_names_the_length_penalty_used(void **state)
{
    (void)state;
    char config[700];
    snprintf(config, sizeof config, "%s/penalty.yaml", temp_dir());
    write_tiny_copy(config, NULL, "decoding:\n  beam: 4\n  length_penalty: 1.25\n");
    const char *argv[] = {"./translate", "-q", "-t", "1", "-c", config, "--explain", "I love China.", NULL};
    RunResult r = run_program(argv, NULL, 0);
    if (r.status != 0) print_in_full(&r);
    assert_int_equal(r.status, 0);
    expect_in(r.out, "beam search (4 hypotheses, length penalty 1.25) produced it");
    run_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_walkthrough_shapes),
        cmocka_unit_test(test_explain_names_the_normalised_inputs),
        cmocka_unit_test(test_show_draws_one_head),
        cmocka_unit_test(test_explain_shows_the_mask_at_work),
        cmocka_unit_test(test_explain_shows_control_characters),
        cmocka_unit_test(test_explain_names_the_length_penalty_used),
    };
    return cmocka_run_group_tests_name("explain", tests, NULL, NULL);
}
