/* test_cli_output.c — ./translate's output in the formats other tools use
 * and its teaching output, driven as a user runs it (the shipped models):
 *
 *   -n N           Moses/Marian n-best lines, ids from 0;
 *   --alignment    Marian's hard, threshold and soft alignments;
 *   --no-repeat-ngram N  stops the loops (汤姆汤姆汤姆…), greedy and beam;
 *   --explain      names the search, shows each step's true top-k and marks
 *                  the token kept, under greedy and under beam search;
 *   --show         aligns Chinese labels by display width, windows a map
 *                  wider than the terminal, and has a legend. */
#include "testutil.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../tokenizer/tokenizer.h"

static RunResult run(const char *const argv[], const char *input)
{
    return run_program(argv, input, input ? strlen(input) : 0);
}

/* Line n (0-based) of s, copied into `buf`; NULL past the end. */
static const char *line_of(const char *s, int n, char *buf, size_t size)
{
    for (int i = 0; i < n && s; i++) {
        s = strchr(s, '\n');
        if (s) s++;
    }
    if (!s || !*s) return NULL;
    snprintf(buf, size, "%.*s", (int)strcspn(s, "\n"), s);
    return buf;
}

/* Split `line` (modified) at every " ||| " into fields[]; returns how many. */
static int split_fields(char *line, char **fields, int max)
{
    int n = 0;
    fields[n++] = line;
    for (char *p; n < max && (p = strstr(fields[n - 1], " ||| ")); ) {
        *p = '\0';
        fields[n++] = p + 5;
    }
    return n;
}

/* The stdout of translate with these arguments (status 0 required). */
static char *output_of(const char *const argv[])
{
    RunResult r = run(argv, NULL);
    if (r.status != 0) {
        print_in_full(&r);
        fail_msg("%s %s ...: status %d", argv[1], argv[2], r.status);
    }
    char *out = r.out;
    r.out = NULL;
    run_result_free(&r);
    return out;
}

/* ---- item 8: n-best lines ------------------------------------------------------ */

/* The shipped en-zh model with length_penalty 1.4 (its config has the
 * built-in 1.0, under which a penalty the scores ignored would not show),
 * in the temp folder. */
static const char *en_zh_penalty_config(void)
{
    static char path[1024];
    char cwd[512], yaml[2048];
    if (!getcwd(cwd, sizeof cwd)) abort();
    snprintf(yaml, sizeof yaml,
             "name: en-zh-penalty\nsource_language: en\ntarget_language: zh\n"
             "model:\n  weights: %s/weights/en-zh.safetensors\n"
             "  source_vocab: %s/weights/en-zh.src.vocab\n  target_vocab: %s/weights/en-zh.tgt.vocab\n"
             "architecture:\n  d_model: 256\n  heads: 4\n  encoder_layers: 3\n  decoder_layers: 3\n"
             "  d_ff: 1024\n  activation: relu\n  norm: pre\n  max_len: 128\n  scale_attention: true\n"
             "  tied_output_embedding: true\n"
             "decoding:\n  beam: 4\n  length_penalty: 1.4\n",
             cwd, cwd, cwd);
    snprintf(path, sizeof path, "%s", temp_file("en-zh-penalty.yaml", yaml, strlen(yaml)));
    return path;
}

static void test_n_best_lines_are_moses_format(void **state)
{
    (void)state;
    const char *config = en_zh_penalty_config();
    const char *plain[] = {"./translate", "-q", "-c", config, "I love china", "How are you?", NULL};
    const char *argv[] = {"./translate", "-q", "-c", config, "-n", "3", "I love china", "How are you?", NULL};
    char *best = output_of(plain), *out = output_of(argv);
    assert_int_equal(count_lines(out), 6);
    char buf[4096], want[4096];
    for (int i = 0; i < 6; i++) {
        char *f[8];
        line_of(out, i, buf, sizeof buf);
        assert_int_equal(split_fields(buf, f, 8), 4);
        assert_int_equal(atoi(f[0]), i / 3); /* 0-based input ids */
        if (i % 3 == 0) assert_string_equal(f[1], line_of(best, i / 3, want, sizeof want));
        float f0, score;
        int word_penalty;
        char extra;
        if (sscanf(f[2], "F0= %f WordPenalty= %d%c", &f0, &word_penalty, &extra) != 2)
            fail_msg("features '%s'", f[2]);
        score = strtof(f[3], NULL);
        /* length_penalty 1.4, so SCORE = F0 / (tokens + </s>)^1.4 */
        assert_true(word_penalty < 0 && f0 < 0);
        if (fabsf(score - f0 / powf((float)(1 - word_penalty), 1.4f)) > 1e-3f)
            fail_msg("line %d: score %g, F0 %g, WordPenalty %d", i, score, f0, word_penalty);
    }
    free(best);
    free(out);
}

static void test_n_best_ids_count_stdin_lines_from_zero(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "-q", "-n", "1", NULL};
    RunResult r = run(argv, "I love china\nHow are you?\n");
    assert_int_equal(r.status, 0);
    assert_int_equal(count_lines(r.out), 2);
    assert_true(strncmp(r.out, "0 ||| 我爱中国。 ||| F0= ", 22) == 0);
    char buf[4096];
    assert_true(strncmp(line_of(r.out, 1, buf, sizeof buf), "1 ||| ", 6) == 0);
    run_result_free(&r);
}

/* ---- item 8: alignments --------------------------------------------------------- */

enum { MAX_T = 64, MAX_S = 64 };

/* Soft alignment text → w[t][s]; returns the number of groups (tokens),
 * *S the weights per group. */
static int parse_soft(const char *text, float w[MAX_T][MAX_S], int *S)
{
    int T = 0;
    *S = 0;
    const char *p = text;
    while (*p && T < MAX_T) {
        int s = 0;
        for (;;) {
            char *end;
            w[T][s++] = strtof(p, &end);
            assert_true(end != p);
            p = end;
            if (*p != ',') break;
            p++;
        }
        if (*S && s != *S) fail_msg("group %d has %d weights, not %d: %s", T, s, *S, text);
        *S = s;
        T++;
        if (*p == ' ') p++;
    }
    return T;
}

static void test_alignment_hard_soft_and_threshold(void **state)
{
    (void)state;
    const char *soft_argv[] = {"./translate", "-q", "--alignment=soft", "I love china", NULL};
    const char *soft_spaced[] = {"./translate", "-q", "--alignment", "soft", "I love china", NULL};
    const char *hard_argv[] = {"./translate", "-q", "--alignment", "I love china", NULL};
    const char *half_argv[] = {"./translate", "-q", "--alignment=0.5", "I love china", NULL};
    /* and a threshold spaced, which translated the text "0.5" */
    const char *half_spaced[] = {"./translate", "-q", "--alignment", "0.5", "I love china", NULL};
    char *soft = output_of(soft_argv), *spaced = output_of(soft_spaced);
    char *hard = output_of(hard_argv), *half = output_of(half_argv), *half2 = output_of(half_spaced);
    assert_string_equal(soft, spaced); /* Marian's `--alignment soft` form */
    assert_string_equal(half, half2);
    assert_int_equal(count_lines(soft), 1);
    char *f[4];
    soft[strcspn(soft, "\n")] = '\0';
    assert_int_equal(split_fields(soft, f, 4), 2);
    assert_string_equal(f[0], "我爱中国。");
    static float w[MAX_T][MAX_S];
    int S, T = parse_soft(f[1], w, &S);
    assert_int_equal(T, 5); /* 我 爱 中 国 。: five tokens, </s> not counted */
    assert_int_equal(S, 3); /* i love china */
    for (int t = 0; t < T; t++) {
        float sum = 0.0f;
        for (int s = 0; s < S; s++) sum += w[t][s];
        if (fabsf(sum - 1.0f) > 0.01f) fail_msg("token %d: weights sum to %g", t, sum);
    }
    /* hard: each target token once, with its most attended source token,
     * sorted by source then target; threshold: exactly the pairs above it. */
    char *g[4];
    hard[strcspn(hard, "\n")] = '\0';
    assert_int_equal(split_fields(hard, g, 4), 2);
    assert_string_equal(g[0], "我爱中国。");
    int seen[MAX_T] = {0}, prev_s = -1, prev_t = -1, n = 0;
    for (const char *p = g[1]; *p; n++) {
        int s, t, used;
        assert_int_equal(sscanf(p, "%d-%d%n", &s, &t, &used), 2);
        assert_true(s >= 0 && s < S && t >= 0 && t < T);
        assert_true(s > prev_s || (s == prev_s && t > prev_t));
        for (int k = 0; k < S; k++) assert_true(w[t][k] <= w[t][s] + 1e-3f);
        seen[t]++;
        prev_s = s, prev_t = t;
        p += used;
        if (*p == ' ') p++;
    }
    for (int t = 0; t < T; t++) assert_int_equal(seen[t], 1);
    char *h[4];
    half[strcspn(half, "\n")] = '\0';
    assert_int_equal(split_fields(half, h, 4), 2);
    int above = 0;
    for (int t = 0; t < T; t++)
        for (int s = 0; s < S; s++) {
            char pair[32];
            snprintf(pair, sizeof pair, "%d-%d", s, t);
            bool listed = false;
            for (const char *p = h[1]; (p = strstr(p, pair)); p++)
                if ((p == h[1] || p[-1] == ' ') && (p[strlen(pair)] == ' ' || !p[strlen(pair)])) listed = true;
            if (w[t][s] > 0.51f && !listed) fail_msg("%s (weight %g) missing from '%s'", pair, w[t][s], h[1]);
            if (w[t][s] < 0.49f && listed) fail_msg("%s (weight %g) listed in '%s'", pair, w[t][s], h[1]);
            above += listed;
        }
    assert_true(above >= 1);
    /* the weights are the last decoder layer's cross-attention, its heads'
     * mean (README), as --attention dumps it */
    char json[512];
    snprintf(json, sizeof json, "%s/align.json", temp_dir());
    const char *dump_argv[] = {"./translate", "-q", "-a", json, "I love china", NULL};
    free(output_of(dump_argv));
    char *text = read_file(json, NULL);
    cJSON *doc = cJSON_Parse(text);
    assert_non_null(doc);
    const cJSON *cross = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "sentences"), 0),
                                             "cross_attentions");
    const cJSON *last = cJSON_GetArrayItem(cross, cJSON_GetArraySize(cross) - 1);
    int heads = cJSON_GetArraySize(last);
    for (int t = 0; t < T; t++)
        for (int s = 0; s < S; s++) {
            double mean = 0;
            for (int h = 0; h < heads; h++)
                mean += cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetArrayItem(last, h), t), s)->valuedouble;
            mean /= heads;
            if (fabs(mean - w[t][s]) > 0.0006) fail_msg("token %d, source %d: %g, not %g", t, s, w[t][s], mean);
        }
    cJSON_Delete(doc);
    free(text);
    free(soft);
    free(spaced);
    free(hard);
    free(half);
    free(half2);
}

static void test_alignment_in_n_best_lines(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "-q", "-b", "3", "-n", "2", "--alignment", "hard", "How are you?", NULL};
    char *out = output_of(argv), buf[4096];
    assert_int_equal(count_lines(out), 2);
    for (int i = 0; i < 2; i++) {
        char *f[8];
        line_of(out, i, buf, sizeof buf);
        assert_int_equal(split_fields(buf, f, 8), 5); /* ID ||| TEXT ||| ALIGNMENT ||| FEATURES ||| SCORE */
        assert_string_equal(f[0], "0");
        int s, t;
        assert_int_equal(sscanf(f[2], "%d-%d", &s, &t), 2);
        assert_true(strncmp(f[3], "F0= ", 4) == 0);
    }
    free(out);
}

static void test_bad_alignment_and_ngram_values_are_usage_errors(void **state)
{
    (void)state;
    static const char *const cases[][6] = {
        {"./translate", "--alignment=sideways", "x", NULL},
        {"./translate", "--alignment=1", "x", NULL},
        {"./translate", "--no-repeat-ngram", "0", "x", NULL},
        {"./translate", "--no-repeat-ngram", "two", "x", NULL},
        /* numbers as people write them: no hex, inf, spaces or signs */
        {"./translate", "--alignment=0x0.8p0", "x", NULL},
        {"./translate", "--alignment=inf", "x", NULL},
        {"./translate", "--alignment= 0.5", "x", NULL},
        {"./translate", "--no-repeat-ngram", " 2", "x", NULL},
        {"./translate", "--no-repeat-ngram", "+2", "x", NULL},
        /* a number spaced from --alignment is its value, in range or not:
         * `--alignment 1` translated the text "1" with hard alignments
         * (and, without TEXT, left standard input unread), status 0 */
        {"./translate", "--alignment", "1", NULL},
        {"./translate", "--alignment", "0", "x", NULL},
        {"./translate", "--alignment", "1.5", "x", NULL},
    };
    static const char *const messages[] = {"--alignment: expected hard, soft or a threshold",
                                           "--alignment: expected", "--no-repeat-ngram: expected a number",
                                           "--no-repeat-ngram: expected a number", "--alignment: expected",
                                           "--alignment: expected", "--alignment: expected",
                                           "--no-repeat-ngram: expected a number",
                                           "--no-repeat-ngram: expected a number",
                                           "--alignment: expected hard, soft or a threshold between 0 and 1, got '1'",
                                           "--alignment: expected", "--alignment: expected"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        RunResult r = run(cases[i], NULL);
        assert_int_equal(r.status, 2);
        expect_in(r.err, messages[i]);
        assert_int_equal(count_lines(r.err), 1);
        assert_int_equal(r.out_len, 0);
        run_result_free(&r);
    }
}

/* ---- item 8: no repeated n-grams ------------------------------------------------ */

/* Does the whitespace-separated text repeat a pair of words? */
static bool repeats_word_pair(const char *text)
{
    char words[64][64];
    int n = 0;
    for (const char *p = text; *p && n < 64;) {
        size_t len = strcspn(p, " \n");
        if (len) snprintf(words[n++], sizeof words[0], "%.*s", (int)len, p);
        p += len;
        while (*p == ' ' || *p == '\n') p++;
    }
    for (int i = 0; i + 1 < n; i++)
        for (int j = i + 1; j + 1 < n; j++)
            if (!strcmp(words[i], words[j]) && !strcmp(words[i + 1], words[j + 1])) return true;
    return false;
}

static void test_no_repeat_ngram_stops_loops_greedy_and_beam(void **state)
{
    (void)state;
    const char *beams[] = {"1", "4"};
    for (int b = 0; b < 2; b++) {
        /* zh-en: words; en-zh: characters (汤姆 is two tokens) */
        const char *zh_plain[] = {"./translate", "-q", "-c", "configs/zh-en.yaml", "-b", beams[b], "汤姆汤姆汤姆", NULL};
        const char *zh_rule[] = {"./translate", "-q", "-c", "configs/zh-en.yaml", "-b", beams[b],
                                 "--no-repeat-ngram", "2", "汤姆汤姆汤姆", NULL};
        const char *en_plain[] = {"./translate", "-q", "-b", beams[b], "Tom Tom Tom Tom", NULL};
        const char *en_rule[] = {"./translate", "-q", "-b", beams[b], "--no-repeat-ngram", "2", "Tom Tom Tom Tom", NULL};
        char *zp = output_of(zh_plain), *zr = output_of(zh_rule), *ep = output_of(en_plain), *er = output_of(en_rule);
        if (!repeats_word_pair(zp)) fail_msg("-b %s: '%s' does not loop: pick another example", beams[b], zp);
        if (repeats_word_pair(zr)) fail_msg("-b %s --no-repeat-ngram 2: '%s' repeats a pair", beams[b], zr);
        if (!strstr(ep, "汤姆汤姆")) fail_msg("-b %s: '%s' does not loop: pick another example", beams[b], ep);
        if (strstr(er, "汤姆汤姆")) fail_msg("-b %s --no-repeat-ngram 2: '%s' repeats 汤姆", beams[b], er);
        free(zp);
        free(zr);
        free(ep);
        free(er);
    }
}

/* --eval decodes in batches (greedy) or one by one (beam): under the rule
 * its hypotheses are what translating each line gives. */
static void test_eval_follows_the_no_repeat_rule(void **state)
{
    (void)state;
    static const char tsv[] = "Tom.\t汤姆汤姆汤姆\n"
                              "No.\t没有没有没有没有\n"
                              "I want to eat fish.\t我想吃鱼。\n";
    const char *path = temp_file("loops.tsv", tsv, sizeof tsv - 1);
    char hyps[512];
    snprintf(hyps, sizeof hyps, "%s/loops.hyps", temp_dir());
    const char *beams[] = {"1", "3"};
    for (int b = 0; b < 2; b++) {
        const char *eval[] = {"./translate", "-q", "-c", "configs/zh-en.yaml", "-b", beams[b], "--no-repeat-ngram", "2",
                              "--eval", path, "--hyps", hyps, NULL};
        const char *each[] = {"./translate", "-q", "-c", "configs/zh-en.yaml", "-b", beams[b], "--no-repeat-ngram", "2",
                              "汤姆汤姆汤姆", "没有没有没有没有", "我想吃鱼。", NULL};
        free(output_of(eval));
        char *want = output_of(each);
        size_t len;
        char *got = read_file(hyps, &len);
        assert_non_null(got);
        assert_string_equal(got, want);
        free(got);
        free(want);
    }
}

/* ---- item 9: --explain under greedy and beam search ------------------------------ */

/* Check every "  step N:" line of an --explain output: one '*' (the token
 * kept) among the top-k, or after it when ranked lower; returns how many
 * steps kept a token that was not the most probable. */
static int check_steps(const char *out)
{
    char buf[4096];
    int steps = 0, not_top = 0;
    for (int i = 0; line_of(out, i, buf, sizeof buf); i++) {
        if (strncmp(buf, "  step ", 7) != 0) continue;
        steps++;
        const char *top = strstr(buf, "top 5:");
        assert_non_null(top);
        int stars = 0;
        for (const char *p = top; (p = strchr(p, '*')); p++) stars++;
        if (stars != 1) fail_msg("%d marks in '%s'", stars, buf);
        int rank = 0;
        assert_non_null(strstr(buf, ", rank "));
        sscanf(strstr(buf, ", rank ") + 7, "%d", &rank);
        bool first = strncmp(top + strlen("top 5:  "), "*", 1) == 0;
        if ((rank == 1) != first) fail_msg("rank %d but the first is %smarked: '%s'", rank, first ? "" : "not ", buf);
        not_top += rank > 1;
    }
    assert_true(steps >= 2);
    return not_top;
}

static void test_explain_says_which_search_and_marks_the_kept_token(void **state)
{
    (void)state;
    /* "Cheer up." (the models of issue 13): greedy starts with 欢 (0.08);
     * beam search's best starts with 快 (0.045), the fourth most probable. */
    const char *greedy[] = {"./translate", "-q", "-b", "1", "--explain", "Cheer up.", NULL};
    const char *beam[] = {"./translate", "-q", "-b", "4", "--explain", "Cheer up.", NULL};
    const char *beam_plain[] = {"./translate", "-q", "-b", "4", "Cheer up.", NULL};
    char *g = output_of(greedy), *b = output_of(beam), *plain = output_of(beam_plain);
    expect_in(g, "greedy decoding produced it (the most probable token each step)");
    assert_int_equal(check_steps(g), 0);
    expect_in(b, "beam search (4 hypotheses, length penalty 1) produced it");
    expect_in(b, "need not be that step's most probable");
    if (strstr(b, "most probable token each")) fail_msg("beam output claims greedy's rule:\n%s", b);
    if (check_steps(b) < 1) fail_msg("beam search kept only top-1 tokens here:\n%s", b);
    char want[512];
    snprintf(want, sizeof want, "translation: %s", plain);
    expect_in(b, want); /* the walk-through is of the translation beam search printed */
    free(g);
    free(b);
    free(plain);
}

/* A kept token below the top 5 is shown with its rank among all the
 * step's logits: 1 + how many are strictly above it (--logits gives the
 * rows; tiny's vocabulary file gives its id).  The no-repeat rule makes
 * greedy keep such tokens. */
static void test_explain_ranks_a_token_below_the_top_5(void **state)
{
    (void)state;
    char logits[600];
    snprintf(logits, sizeof logits, "%s/ranks.logits", temp_dir());
    const char *argv[] = {"./translate", "-q", "-t", "1", "-c", "configs/tiny.yaml", "-b", "1", "--no-repeat-ngram",
                          "1", "--logits", logits, "--explain", "hello world how are you today my friend", NULL};
    char *out = output_of(argv);
    size_t bytes;
    float *rows = (float *)read_file(logits, &bytes);
    assert_non_null(rows);
    char *vocab = read_file("tests/data/tiny.tgt.vocab", NULL);
    enum { V = 64 }; /* tiny's target vocabulary */
    char buf[4096];
    int checked = 0;
    for (int i = 0; line_of(out, i, buf, sizeof buf); i++) {
        if (strncmp(buf, "  step ", 7) != 0 || !strstr(buf, "\xE2\x80\xA6 *")) continue; /* "… *": below the top 5 */
        int step = 0, rank = 0;
        char token[64];
        assert_int_equal(sscanf(buf, "  step %d:", &step), 1);
        assert_int_equal(sscanf(strstr(buf, "kept ") + 5, "%63s", token), 1);
        sscanf(strstr(buf, ", rank ") + 7, "%d", &rank);
        int id = 0;
        for (const char *line = vocab; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL, id++)
            if (strncmp(line, token, strlen(token)) == 0 && line[strlen(token)] == '\t') break;
        assert_true(id < V && (size_t)step * V * sizeof(float) <= bytes);
        const float *row = rows + (size_t)(step - 1) * V;
        int above = 0;
        for (int j = 0; j < V; j++) above += row[j] > row[id];
        if (rank != 1 + above) fail_msg("rank %d, but %d logits are above it: %s", rank, above, buf);
        checked++;
    }
    assert_true(checked >= 1);
    free(vocab);
    free(rows);
    free(out);
}

/* --show's blocks (no colour through a pipe) are the legend's bands of
 * the weights --attention writes: each cell's band is its weight × 4,
 * rounded (' ' below 0.125, ░ to 0.375, ▒ to 0.625, ▓ to 0.875, █
 * above).  Counted per row, so the labels' widths do not matter. */
static void test_show_shades_are_the_legends_bands(void **state)
{
    (void)state;
    char json[600];
    snprintf(json, sizeof json, "%s/shades.json", temp_dir());
    const char *argv[] = {"./translate", "-q", "-t", "1", "-c", "configs/en-zh.yaml", "--show", "cross", "-a", json,
                          "Cheer up.", NULL};
    char *out = output_of(argv);
    char *text = read_file(json, NULL);
    cJSON *doc = cJSON_Parse(text);
    assert_non_null(doc);
    const cJSON *s = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "sentences"), 0);
    const cJSON *map = cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(s, "cross_attentions"), 0), 0);
    int T = cJSON_GetArraySize(map), S = cJSON_GetArraySize(cJSON_GetArrayItem(map, 0));
    static const char *const block[] = {"\xE2\x96\x91", "\xE2\x96\x92", "\xE2\x96\x93", "\xE2\x96\x88"};
    const char *grid = strstr(out, "legend:");
    assert_non_null(grid);
    grid = strchr(strchr(grid, '\n') + 1, '\n') + 1; /* past the legend and the keys' labels */
    char row[1024];
    for (int t = 0; t < T; t++) {
        snprintf(row, sizeof row, "%.*s", (int)strcspn(grid, "\n"), grid);
        int want[5] = {0}, got[5] = {0};
        for (int k = 0; k < S; k++) {
            double w = cJSON_GetArrayItem(cJSON_GetArrayItem(map, t), k)->valuedouble;
            want[(int)(w * 4.0 + 0.5)]++;
        }
        for (int band = 1; band <= 4; band++)
            for (const char *p = row; (p = strstr(p, block[band - 1])); p += 3) got[band]++;
        for (int band = 1; band <= 4; band++)
            if (got[band] != 4 * want[band]) fail_msg("row %d '%s': %d cells of band %d, want %d", t, row,
                                                     got[band] / 4, band, want[band]);
        grid += strcspn(grid, "\n") + 1;
    }
    cJSON_Delete(doc);
    free(text);
    free(out);
}

static void test_explain_under_the_no_repeat_rule(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "-q", "-b", "1", "--no-repeat-ngram", "2", "--explain", "Tom Tom Tom Tom", NULL};
    char *out = output_of(argv);
    expect_in(out, "greedy decoding produced it (the most probable token each step, unless banned)");
    expect_in(out, "--no-repeat-ngram 2: a token that would repeat 2 tokens already output is never kept");
    if (check_steps(out) < 1) fail_msg("the rule banned nothing here:\n%s", out);
    free(out);
}

/* The shipped configs copy the source's numbers (decoding.copy_numbers):
 * the model alone turned this phone number into 1932年; --explain says why
 * a step kept what it kept, and only where the source has numbers. */
static void test_explain_under_copy_numbers(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "-q", "-b", "1", "--explain", "My phone number is 13912345678.", NULL};
    char *out = output_of(argv);
    expect_in(out, "greedy decoding produced it (the most probable token each step, unless banned)");
    expect_in(out, "copy_numbers: the source has numbers, so a digit is kept only where it copies one");
    expect_in(out, "13912345678");
    /* no negative number, so no 负 of the rule's: its note was here too */
    if (strstr(out, "负 is kept first"))
        fail_msg("a source without a negative number gets the note on the rule's 负:\n%s", out);
    free(out);
    /* the one token the rule raises, kept at p = 0.000: said why, greedy
     * and beam; not for a range (1990-2000), whose "-" is no sign */
    const char *negative[] = {"./translate", "-q", "-b", "1", "--explain", "It is -10 degrees today.", NULL};
    out = output_of(negative);
    expect_in(out, "负 is kept first in its place, however improbable the model finds it");
    expect_in(out, "kept 负");
    free(out);
    const char *beam[] = {"./translate", "-q", "--explain", "It is -10 degrees today.", NULL};
    out = output_of(beam);
    expect_in(out, "负 is kept first in its place, however improbable the model finds it");
    free(out);
    const char *range[] = {"./translate", "-q", "-b", "1", "--explain", "He lived there from 1990-2000.", NULL};
    out = output_of(range);
    expect_in(out, "copy_numbers: the source has numbers");
    if (strstr(out, "负 is kept first")) fail_msg("a range gets the note on the rule's 负:\n%s", out);
    free(out);
    const char *plain[] = {"./translate", "-q", "-b", "1", "--explain", "Cheer up.", NULL};
    out = output_of(plain);
    if (strstr(out, "copy_numbers")) fail_msg("a source without numbers gets the rule's note:\n%s", out);
    free(out);
}

/* A comma or point with a space after it parts two numbers (number_rule.h):
 * the list "110, 120" came out as 110，120 and "Question 1. 2" as 1.2,
 * numbers the source does not have.  Every path that decodes reads the
 * spaces: one sentence (greedy, beam), a batch of lines (after 8 longer
 * ones: not at the start of the mini-batch's sources, and beam 4's second
 * group of 8 sentences, beam_many.c) and --eval. */
static void test_copy_numbers_reads_the_spaces(void **state)
{
    (void)state;
    const char *question = "Question 1. 2 plus 2 is 4.", *list = "I bought 110, 120 and 130 apples.";
    const char *greedy[] = {"./translate", "-q", "-b", "1", question, NULL};
    char *out = output_of(greedy);
    expect_not_in(out, "1.2");
    free(out);
    const char *beam[] = {"./translate", "-q", "-b", "4", list, NULL};
    out = output_of(beam);
    expect_not_in(out, "110，120");
    free(out);
    char lines[2048] = "", buf[256];
    for (int i = 0; i < 8; i++) strcat(lines, "My phone number is 13912345678 and I live in Shanghai with my family.\n");
    strcat(lines, "Question 1. 2 plus 2 is 4.\nI bought 110, 120 and 130 apples.\n");
    for (int b = 1; b <= 4; b += 3) {
        const char *batch[] = {"./translate", "-q", "-b", b == 1 ? "1" : "4", NULL};
        RunResult r = run(batch, lines);
        assert_int_equal(r.status, 0);
        assert_int_equal(count_lines(r.out), 10);
        if (b == 1) expect_not_in(line_of(r.out, 8, buf, sizeof buf), "1.2");
        expect_not_in(line_of(r.out, 9, buf, sizeof buf), "110，120");
        run_result_free(&r);
    }
    static const char tsv[] = "My phone number is 13912345678 and I live in Shanghai with my family.\t-\n"
                              "Question 1. 2 plus 2 is 4.\t-\nI bought 110, 120 and 130 apples.\t-\n";
    const char *eval[] = {"./translate", "-q", "-b", "1", "--eval", temp_file("spaces.tsv", tsv, sizeof tsv - 1),
                          "--hyps", "-", NULL};
    RunResult e = run(eval, NULL);
    assert_int_equal(e.status, 0);
    expect_not_in(line_of(e.out, 1, buf, sizeof buf), "1.2");
    expect_not_in(line_of(e.out, 2, buf, sizeof buf), "110，120");
    run_result_free(&e);
}

/* A Chinese time, hour 点 minutes 分, is one number H:MM (number_rule.h):
 * the rule read 七点零五分 as the decimal 7.05 and made the output say it
 * ("seven point zero-five" greedy, "7.05 o'clock" beam 4), and 7点05分
 * came out "at 7." (the 7 alone a source number). */
static void test_copy_numbers_reads_a_time(void **state)
{
    (void)state;
    static const char *const beams[] = {"1", "4"}, *const times[] = {"火车七点零五分开。", "火车7点05分开。"};
    for (int b = 0; b < 2; b++)
        for (int t = 0; t < 2; t++) {
            const char *argv[] = {"./translate", "-q", "-c", "configs/zh-en.yaml", "-b", beams[b], times[t], NULL};
            char *out = output_of(argv);
            expect_in(out, "7:05");
            expect_not_in(out, "point");
            expect_not_in(out, "7.05");
            free(out);
        }
}

/* A negative number keeps its sign (number_rule.h): "It is -10 degrees
 * today." was 今天是10度。 (greedy and beam 4; the model alone drops the
 * sign too, having seen no negative number in training); the rule has it
 * write 负 where it would begin the number without one. */
static void test_copy_numbers_keeps_a_minus_sign(void **state)
{
    (void)state;
    static const char *const beams[] = {"1", "4"};
    static const char *const sentences[] = {"It is -10 degrees today.", "It was -20 degrees last night."};
    static const char *const signed_[] = {"负十", "负二十"}, *const bare[] = {"是10度", "是20度"};
    for (int b = 0; b < 2; b++)
        for (int t = 0; t < 2; t++) {
            const char *argv[] = {"./translate", "-q", "-c", "configs/en-zh.yaml", "-b", beams[b], "--", sentences[t],
                                  NULL};
            char *out = output_of(argv);
            expect_in(out, signed_[t]);
            expect_not_in(out, bare[t]);
            free(out);
        }
}

/* ---- item 10: --show ------------------------------------------------------------- */

/* Display columns of a UTF-8 line, with a table of our own (East Asian
 * wide ranges), independent of tokenizer_fit_width. */
static int columns_of(const char *s)
{
    int cols = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        unsigned cp = *p;
        int len = cp < 0x80 ? 1 : cp < 0xE0 ? 2 : cp < 0xF0 ? 3 : 4;
        if (len == 2) cp = (p[0] & 0x1Fu) << 6 | (p[1] & 0x3Fu);
        if (len == 3) cp = (p[0] & 0x0Fu) << 12 | (p[1] & 0x3Fu) << 6 | (p[2] & 0x3Fu);
        bool wide = (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) ||
                    (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
                    (cp >= 0xFF00 && cp <= 0xFF60) || (cp >= 0xFFE0 && cp <= 0xFFE6);
        cols += wide ? 2 : 1;
        p += len;
    }
    return cols;
}

static void test_display_width_rule(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int columns;
        size_t bytes;
        int width;
    } cases[] = {
        {"我想吃", 100, 9, 6}, {"我想吃", 5, 6, 4}, {"我想吃", 1, 0, 0}, {"china", 4, 4, 4},
        {"e\xcc\x81t\xc3\xa9", 2, 4, 2}, /* e + combining acute: one column */
        {"ＡＢ", 3, 3, 2},             /* fullwidth Latin */
        {"\xff" "ab", 2, 2, 2},          /* an invalid byte counts one column */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int width;
        size_t n = tokenizer_fit_width(cases[i].text, strlen(cases[i].text), cases[i].columns, &width);
        if (n != cases[i].bytes || width != cases[i].width)
            fail_msg("case %zu: %zu bytes, %d columns; expected %zu, %d", i, n, width, cases[i].bytes,
                     cases[i].width);
    }
}

/* The map lines of a --show output: after the legend, up to "translation:". */
static int map_lines(const char *out, char lines[][4096], int max)
{
    char buf[4096];
    int n = 0, i = 0;
    while (line_of(out, i, buf, sizeof buf) && strncmp(buf, "legend:", 7) != 0) i++;
    for (i++; line_of(out, i, buf, sizeof buf) && strncmp(buf, "translation:", 12) != 0 && n < max; i++)
        memcpy(lines[n++], buf, sizeof buf);
    return n;
}

static void test_show_aligns_chinese_labels_by_width(void **state)
{
    (void)state;
    setenv("COLUMNS", "200", 1);
    const char *kinds[] = {"cross", "encoder"};
    for (int k = 0; k < 2; k++) {
        const char *argv[] = {"./translate", "-q", "-c", "configs/zh-en.yaml", "--show", kinds[k], "我想吃酸菜鱼。", NULL};
        char *out = output_of(argv);
        expect_in(out, "legend: '    ' < 0.125, '░░░░' 0.125-0.375, '▒▒▒▒' 0.375-0.625");
        static char lines[64][4096];
        int n = map_lines(out, lines, 64);
        assert_true(n >= 8); /* the key labels, then a row per query */
        if (strstr(lines[0], "keys ")) fail_msg("windowed at 200 columns:\n%s", out);
        expect_in(lines[0], " 我   想   吃   酸   菜   鱼   。");
        for (int i = 0; i < n; i++)
            if (columns_of(lines[i]) != 12 + 5 * 7)
                fail_msg("line %d is %d columns, not %d:\n%s", i, columns_of(lines[i]), 12 + 5 * 7, out);
        if (k == 1) expect_in(lines[1], "         我  "); /* a Chinese row label, right-aligned in 11 */
        free(out);
    }
    unsetenv("COLUMNS");
}

static void test_show_windows_a_map_wider_than_the_terminal(void **state)
{
    (void)state;
    /* 16 source tokens at 40 columns: (40 - 12) / 5 = 5 keys a window. */
    const char *sentence = "Tom and Mary went to the store yesterday to buy some fish and some bread.";
    setenv("COLUMNS", "40", 1);
    const char *argv[] = {"./translate", "-q", "--show", "encoder", sentence, NULL};
    char *out = output_of(argv);
    static char lines[256][4096];
    int n = map_lines(out, lines, 256), windows = 0;
    for (int i = 0; i < n; i++) {
        if (columns_of(lines[i]) > 40) fail_msg("line %d is %d columns wide:\n%s", i, columns_of(lines[i]), out);
        windows += strncmp(lines[i], "keys ", 5) == 0;
    }
    expect_in(out, "keys 1-5 of 16:\n");
    expect_in(out, "keys 16-16 of 16:\n");
    assert_int_equal(windows, 4);
    assert_int_equal(n, 4 * (2 + 16)); /* each window: its title, the key labels, 16 rows */
    free(out);
    setenv("COLUMNS", "200", 1);
    out = output_of(argv);
    if (strstr(out, "keys ")) fail_msg("windowed at 200 columns:\n%s", out);
    free(out);
    unsetenv("COLUMNS");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_n_best_lines_are_moses_format),
        cmocka_unit_test(test_n_best_ids_count_stdin_lines_from_zero),
        cmocka_unit_test(test_alignment_hard_soft_and_threshold),
        cmocka_unit_test(test_alignment_in_n_best_lines),
        cmocka_unit_test(test_bad_alignment_and_ngram_values_are_usage_errors),
        cmocka_unit_test(test_no_repeat_ngram_stops_loops_greedy_and_beam),
        cmocka_unit_test(test_eval_follows_the_no_repeat_rule),
        cmocka_unit_test(test_explain_says_which_search_and_marks_the_kept_token),
        cmocka_unit_test(test_explain_ranks_a_token_below_the_top_5),
        cmocka_unit_test(test_show_shades_are_the_legends_bands),
        cmocka_unit_test(test_explain_under_the_no_repeat_rule),
        cmocka_unit_test(test_explain_under_copy_numbers),
        cmocka_unit_test(test_copy_numbers_reads_the_spaces),
        cmocka_unit_test(test_copy_numbers_reads_a_time),
        cmocka_unit_test(test_copy_numbers_keeps_a_minus_sign),
        cmocka_unit_test(test_display_width_rule),
        cmocka_unit_test(test_show_aligns_chinese_labels_by_width),
        cmocka_unit_test(test_show_windows_a_map_wider_than_the_terminal),
    };
    return cmocka_run_group_tests_name("cli_output", tests, NULL, NULL);
}
