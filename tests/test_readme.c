/* test_readme.c — the README shows what the programs print today, and
 * quotes the model cards' figures as docs/models.md gives them.
 *
 * Every ``` block of README.md is read; a line "$ ./translate ARGS" that
 * is followed by output lines (up to the next "$ " line or the block's
 * end) is run, and its standard output must be those lines exactly.
 * Commands shown without output (--html, --explain) are not run.  Output
 * files named by --attention/--html/--logits/--hyps go to the test's temp
 * folder, not the repository.  And the licences are stated (LICENSE,
 * README, docs/models.md). */
#include "testutil.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_ARGS = 32 };

/* Split a shown command into words: spaces separate them, "..." quotes
 * (no escapes: the README's commands need none).  Writes into `buf`. */
static int split_words(const char *cmd, char *buf, const char *argv[MAX_ARGS])
{
    int n = 0;
    char *out = buf;
    const char *p = cmd;
    while (*p) {
        while (*p == ' ') p++;
        if (!*p) break;
        assert_true(n < MAX_ARGS - 1);
        argv[n++] = out;
        while (*p && *p != ' ') {
            if (*p == '"') {
                for (p++; *p && *p != '"'; p++) *out++ = *p;
                if (*p) p++;
            } else {
                *out++ = *p++;
            }
        }
        *out++ = '\0';
    }
    argv[n] = NULL;
    return n;
}

static bool is_output_option(const char *a)
{
    return !strcmp(a, "--attention") || !strcmp(a, "-a") || !strcmp(a, "--html") || !strcmp(a, "--logits") ||
           !strcmp(a, "--hyps");
}

/* Run one shown command; its stdout must be `want`. */
static void check_command(const char *cmd, const char *want)
{
    char buf[4096], paths[4][600];
    const char *argv[MAX_ARGS];
    assert_true(strlen(cmd) < sizeof buf);
    int n = split_words(cmd, buf, argv), outputs = 0;
    for (int i = 1; i + 1 < n; i++)
        if (is_output_option(argv[i]) && outputs < 4) {
            snprintf(paths[outputs], sizeof paths[0], "%s/%s", temp_dir(), argv[i + 1]);
            argv[++i] = paths[outputs++];
        }
    RunResult r = run_program(argv, NULL, 0);
    if (r.status != 0 || strcmp(r.out, want) != 0) {
        print_in_full(&r);
        fail_msg("README.md shows\n  $ %s\n%sbut the program printed (status %d)\n%s", cmd, want, r.status, r.out);
    }
    run_result_free(&r);
}

static void test_readme_examples_print_what_they_show(void **state)
{
    (void)state;
    size_t len;
    char *readme = read_file("README.md", &len);
    assert_non_null(readme);
    bool in_block = false;
    char cmd[4096] = "", want[8192] = "";
    int checked = 0;
    for (char *line = strtok(readme, "\n"); line; line = strtok(NULL, "\n")) {
        bool fence = strncmp(line, "```", 3) == 0, prompt = strncmp(line, "$ ", 2) == 0;
        if (in_block && (fence || prompt) && cmd[0]) {
            if (want[0]) { check_command(cmd, want); checked++; }
            cmd[0] = want[0] = '\0';
        }
        if (fence) { in_block = !in_block; continue; }
        if (!in_block) continue;
        if (prompt && strncmp(line + 2, "./translate ", 12) == 0) {
            snprintf(cmd, sizeof cmd, "%s", line + 2);
        } else if (cmd[0]) {
            strncat(want, line, sizeof want - strlen(want) - 2);
            strcat(want, "\n");
        }
    }
    free(readme);
    assert_true(checked >= 2); /* the quick start's two examples at least */
}

/* The text after `key` in s, up to (not including) any of `stops`, into out. */
static void text_after(const char *s, const char *key, const char *stops, char *out, size_t size)
{
    const char *p = strstr(s, key);
    if (!p) fail_msg("no '%s' found", key);
    p += strlen(key);
    size_t n = strcspn(p, stops);
    if (n >= size) n = size - 1;
    memcpy(out, p, n);
    out[n] = '\0';
}

static void test_readme_quotes_the_model_cards(void **state)
{
    (void)state;
    size_t len;
    char *readme = read_file("README.md", &len), *cards = read_file("docs/models.md", &len);
    assert_non_null(readme);
    assert_non_null(cards);
    /* docs/models.md: | **dev BLEU / chrF2, greedy** | **34.35 / 29.42** | **29.25 / 47.46** | */
    char row[1000], en_zh[32], zh_en[32];
    text_after(cards, "| **dev BLEU / chrF2, greedy** | **", "\n", row, sizeof row);
    text_after(row, "", " ", en_zh, sizeof en_zh);
    text_after(row, "| **", " ", zh_en, sizeof zh_en);
    for (char *c = readme; *c; c++) if (*c == '\n') *c = ' '; /* README wraps its lines anywhere */
    char want[200];
    snprintf(want, sizeof want, "dev BLEU %s (en→zh) and %s (zh→en) with greedy decoding", en_zh, zh_en);
    if (!strstr(readme, want)) fail_msg("README.md does not say '%s' (docs/models.md's figures)", want);
    /* training time: "| training time ... | 2,683 s (44.7 min), ... | 3,370 s (56.2 min), ..." */
    char time_row[300], a[16], b[16];
    text_after(cards, "| training time", "\n", time_row, sizeof time_row);
    text_after(time_row, "s (", " ", a, sizeof a);
    text_after(strstr(time_row, "s (") + 3, "s (", " ", b, sizeof b);
    snprintf(want, sizeof want, "in %.0f and %.0f minutes", atof(a), atof(b));
    if (!strstr(readme, want)) fail_msg("README.md does not say '%s' (docs/models.md: %s, %s min)", want, a, b);
    free(readme);
    free(cards);
}

/* Item 14 of issue 14: a licence for the code, and the data's and the
 * weights' stated where a user looks, agreeing with the data's own README. */
static void test_licences_are_stated(void **state)
{
    (void)state;
    size_t len;
    char *license = read_file("LICENSE", &len);
    assert_non_null(license);
    assert_true(strncmp(license, "MIT License\n\nCopyright (c) 2026 the translate authors\n", 54) == 0);
    free(license);
    const char *docs[] = {"README.md", "docs/models.md"};
    for (int i = 0; i < 2; i++) {
        char *text = read_file(docs[i], &len);
        assert_non_null(text);
        for (char *c = text; *c; c++) if (*c == '\n') *c = ' ';
        const char *needles[] = {"CC BY 2.0 F", "LICENSE", "attribution", "CC BY-SA 4.0"};
        for (int k = 0; k < 4; k++)
            if (!strstr(text, needles[k])) fail_msg("%s does not mention '%s'", docs[i], needles[k]);
        free(text);
    }
    const char *data = tatoeba_dir();
    if (!data) SKIP_TEST("data", "../shared/data/tatoeba-cmn-eng is not there");
    char path[600];
    snprintf(path, sizeof path, "%s/README.md", data);
    char *readme = read_file(path, &len);
    assert_non_null(readme);
    assert_non_null(strstr(readme, "Licence: CC-BY 2.0 (France)")); /* what our docs restate */
    free(readme);
}

/* docs/attention-questions.md's table of the three √d_k runs quotes their
 * committed logs: the dev loss and BLEU of the last eval row, and the mean
 * training loss of steps 310-350. */
static void test_scaling_table_quotes_the_logs(void **state)
{
    (void)state;
    const char *runs[][2] = {{"on", "| scores ÷ √d_k | "}, {"off", "| scores unscaled | "},
                             {"t5", "| unscaled, W_Q ÷ √d_k at init (T5) | "}};
    size_t len;
    char *doc = read_file("docs/attention-questions.md", &len);
    assert_non_null(doc);
    for (int i = 0; i < 3; i++) {
        char path[200];
        snprintf(path, sizeof path, "docs/training-logs/scaling-%s.csv", runs[i][0]);
        char *log = read_file(path, &len);
        assert_non_null(log);
        double dev_loss = 0, bleu = 0, sum = 0;
        int n = 0;
        for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n")) {
            long step;
            double loss, d, b;
            if (sscanf(line, "step,%ld,%*d,%lf", &step, &loss) == 2 && step >= 310 && step <= 350) {
                sum += loss;
                n++;
            }
            if (sscanf(line, "eval,%ld,%*d,nan,nan,nan,nan,%lf,%lf", &step, &d, &b) == 3) {
                dev_loss = d;
                bleu = b;
            }
        }
        free(log);
        assert_int_equal(n, 5);
        char want[200];
        snprintf(want, sizeof want, "%s%.2f | %.2f | ", runs[i][1], sum / n, dev_loss);
        const char *row = strstr(doc, want);
        if (!row) fail_msg("docs/attention-questions.md has no row starting '%s'", want);
        char score[32];
        snprintf(score, sizeof score, "%.2f", bleu);
        const char *end = strchr(row, '\n');
        const char *at = strstr(row + strlen(want), score);
        if (!at || at > end) fail_msg("its row for %s does not give BLEU %s", runs[i][0], score);
    }
    free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_readme_examples_print_what_they_show),
        cmocka_unit_test(test_readme_quotes_the_model_cards),
        cmocka_unit_test(test_licences_are_stated),
        cmocka_unit_test(test_scaling_table_quotes_the_logs),
    };
    return cmocka_run_group_tests_name("README", tests, NULL, NULL);
}
