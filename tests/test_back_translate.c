/* test_back_translate.c — tools/back_translate.sh, the script behind `make
 * back-translation` (issue 13): the pairs it writes (English from the
 * model, the Chinese sentence unchanged, in order), and failures that leave
 * the output as it was.
 *
 * The model is configs/tiny.yaml (random weights, written on first use):
 * what it says does not matter here, only that each sentence gets one
 * line.  $DATA points to a folder holding a three-sentence stand-in for
 * tatoeba-cmn-mono/sentences.tsv. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MONO "我想吃酸菜鱼\t#1\n北京是中国的首都。\t#2\n你好。\t#3\n"

/* A folder with tatoeba-cmn-mono/sentences.tsv (MONO) in it. */
static const char *data_dir(void)
{
    static char dir[600];
    snprintf(dir, sizeof dir, "%s/data", temp_dir());
    char mono[700];
    snprintf(mono, sizeof mono, "%s/tatoeba-cmn-mono", dir);
    mkdir(dir, 0755);
    mkdir(mono, 0755);
    strcat(mono, "/sentences.tsv");
    FILE *f = fopen(mono, "w");
    assert_non_null(f);
    fputs(MONO, f);
    assert_int_equal(fclose(f), 0);
    return dir;
}

static RunResult back_translate(const char *const extra[], const char *data, const char *translate)
{
    const char *argv[16] = {"/bin/sh", "tools/back_translate.sh"};
    int n = 2;
    for (int i = 0; extra[i]; i++) argv[n++] = extra[i];
    argv[n] = NULL;
    setenv("DATA", data, 1);
    setenv("TRANSLATE", translate, 1);
    RunResult r = run_program(argv, NULL, 0);
    unsetenv("DATA");
    unsetenv("TRANSLATE");
    return r;
}

static void test_one_pair_per_sentence_chinese_unchanged(void **state)
{
    (void)state;
    char out[700];
    snprintf(out, sizeof out, "%s/bt/pairs.tsv", temp_dir()); /* bt/ does not exist yet */
    const char *args[] = {"--config", "configs/tiny.yaml", out, NULL};
    RunResult r = back_translate(args, data_dir(), test_program("./translate"));
    if (r.status != 0) {
        print_in_full(&r);
        fail_msg("back_translate.sh exited %d", r.status);
    }
    expect_in(r.err, "translating 3 sentences with configs/tiny.yaml");
    expect_in(r.err, "pairs.tsv: 3 pairs in ");
    size_t len;
    char *text = read_file(out, &len);
    assert_non_null(text);
    assert_int_equal(count_lines(text), 3);
    static const char *const chinese[] = {"我想吃酸菜鱼", "北京是中国的首都。", "你好。"};
    char *line = text;
    for (int i = 0; i < 3; i++) {
        char *end = strchr(line, '\n');
        assert_non_null(end);
        *end = '\0';
        char *tab = strchr(line, '\t');
        if (!tab || strchr(tab + 1, '\t')) fail_msg("line %d is not English<TAB>Chinese: %s", i + 1, line);
        assert_string_equal(tab + 1, chinese[i]);
        line = end + 1;
    }
    free(text);
    run_result_free(&r);
    /* the mode a new file gets, not mktemp's 0600 */
    mode_t mask = umask(0);
    umask(mask);
    struct stat st;
    assert_int_equal(stat(out, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0666 & ~mask);
}

/* OUT may not be a folder, nor a file the run reads: the sentences, the
 * config, the model's files, the program. */
static void test_out_never_replaces_an_input(void **state)
{
    (void)state;
    const char *data = data_dir();
    char mono[700], folder[700];
    snprintf(mono, sizeof mono, "%s/tatoeba-cmn-mono/sentences.tsv", data);
    snprintf(folder, sizeof folder, "%s/tatoeba-cmn-mono", data);
    const char *outs[] = {folder, mono, "configs/tiny.yaml", "tests/data/tiny.safetensors"};
    const char *says[] = {"is a folder", "an input of this run", "an input of this run", "an input of this run"};
    for (int i = 0; i < 4; i++) {
        const char *args[] = {"--config", "configs/tiny.yaml", outs[i], NULL};
        RunResult r = back_translate(args, data, test_program("./translate"));
        if (r.status != 2) fail_msg("OUT %s: status %d: %s", outs[i], r.status, r.err);
        expect_in(r.err, says[i]);
        run_result_free(&r);
    }
    size_t len;
    char *text = read_file(mono, &len);
    assert_string_equal(text, MONO);
    free(text);
    /* nor the program it runs (OUT=translate made ./translate a TSV): a
     * stand-in, so that a failure replaces no real program */
    const char *program = "#!/bin/sh\nexit 1\n";
    const char *fake = temp_file("fake-translate", program, strlen(program));
    assert_int_equal(chmod(fake, 0755), 0);
    const char *args[] = {"--config", "configs/tiny.yaml", fake, NULL};
    RunResult r = back_translate(args, data, fake);
    if (r.status != 2) fail_msg("OUT the program: status %d: %s", r.status, r.err);
    expect_in(r.err, "an input of this run");
    run_result_free(&r);
    expect_file_is(fake, program);
}

/* A translate that fails, or loses a line: exit 1, and the file already at
 * OUT is left as it was (no partial file, no temporary beside it). */
static void test_a_failed_translation_leaves_the_output_alone(void **state)
{
    (void)state;
    const char *out = temp_file("kept.tsv", "old\tpairs\n", 10);
    const char *failing = temp_file("failing.sh", "#!/bin/sh\ncat > /dev/null\nexit 3\n", 32);
    const char *short_by_one = temp_file("short.sh", "#!/bin/sh\nhead -n 2\n", 20);
    chmod(failing, 0755);
    chmod(short_by_one, 0755);
    const char *args[] = {"--config", "configs/tiny.yaml", out, NULL};
    RunResult r = back_translate(args, data_dir(), failing);
    assert_int_equal(r.status, 1);
    expect_in(r.err, "failed");
    run_result_free(&r);
    r = back_translate(args, data_dir(), short_by_one);
    assert_int_equal(r.status, 1);
    expect_in(r.err, "2 translations for 3 sentences");
    run_result_free(&r);
    size_t len;
    char *text = read_file(out, &len);
    assert_string_equal(text, "old\tpairs\n");
    free(text);
    char cmd[900];
    snprintf(cmd, sizeof cmd, "ls %s.* 2>/dev/null | grep -q .", out);
    assert_int_not_equal(system(cmd), 0); /* no temporary left beside it */
}

static void test_usage_errors_exit_2(void **state)
{
    (void)state;
    const char *unknown[] = {"--bogus", NULL};
    RunResult r = back_translate(unknown, data_dir(), test_program("./translate"));
    assert_int_equal(r.status, 2);
    expect_in(r.err, "unknown option --bogus");
    run_result_free(&r);
    const char *args[] = {"--config", "configs/tiny.yaml", NULL};
    r = back_translate(args, "/nonexistent", test_program("./translate"));
    assert_int_equal(r.status, 2);
    expect_in(r.err, "/nonexistent/tatoeba-cmn-mono/sentences.tsv: not readable");
    run_result_free(&r);
    const char *no_commit[] = {"--model-commit", "0000000000000000000000000000000000000000", NULL};
    r = back_translate(no_commit, data_dir(), test_program("./translate"));
    assert_int_equal(r.status, 2);
    expect_in(r.err, "not in git");
    run_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_pair_per_sentence_chinese_unchanged),
        cmocka_unit_test(test_a_failed_translation_leaves_the_output_alone),
        cmocka_unit_test(test_usage_errors_exit_2),
        cmocka_unit_test(test_out_never_replaces_an_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
