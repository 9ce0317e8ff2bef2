/* test_tool_scripts.c — the scripts in tools/ that have no test program of
 * their own.
 *
 * tools/plot_log.sh and tools/plot_compare.sh, the SVG plots of train's CSV
 * logs (docs/en-zh-training.svg and the like): a log with a loss
 * that is no finite number, or a huge one (a hand-edited or foreign CSV:
 * train's own checks every loss), is drawn without it, in bounded time and
 * size, as valid XML with no "nan" or "inf" coordinates; plot_compare's
 * one gridline per unit of loss had run without end for "inf", and drawn
 * 10^9 lines for a loss of 10^9.  A log that is not there is said so.
 *
 * tools/embed.sh (the viewer's files as C arrays) and
 * tools/number_fidelity.py (docs/models.md's number figures): their
 * errors name what is wrong. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define HEADER "event,step,epoch,loss,lr,tokens_per_s,grad_norm,dev_loss,dev_bleu,dev_chrf,seconds,loss_smooth\n"

/* The SVG a plot script printed (r.out), checked: finished, no NaN or
 * infinity written into it, and not large. */
static void expect_sane_svg(const RunResult *r, const char *what)
{
    if (r->status != 0) fail_msg("%s: status %d: %s", what, r->status, r->err);
    expect_in(r->out, "<svg");
    expect_in(r->out, "</svg>");
    assert_null(strstr(r->out, "nan"));
    assert_null(strstr(r->out, "inf"));
    if (r->out_len > 100000) fail_msg("%s: %zu bytes of SVG", what, r->out_len);
}

static void test_a_loss_that_is_no_finite_number_is_left_out(void **state)
{
    (void)state;
    static const char bad_log[] = HEADER "step,10,1,inf,1,1,1,nan,nan,nan,1,1\n"
                                         "step,20,1,5.5,1,1,1,nan,nan,nan,1,1\n"
                                         "eval,20,1,nan,1,1,1,inf,30,40,1,1\n";
    static const char huge_log[] = HEADER "step,10,1,1e9,1,1,1,nan,nan,nan,1,1\n";
    static const char step0_log[] = HEADER "step,0,1,3,1,1,1,nan,nan,nan,1,1\n";
    const char *bad = temp_file("bad-loss.csv", bad_log, strlen(bad_log));
    const char *huge = temp_file("huge-loss.csv", huge_log, strlen(huge_log));
    const char *step0 = temp_file("step0.csv", step0_log, strlen(step0_log));
    /* `timeout`: the old script never ended on these */
    const char *compare[] = {"/usr/bin/timeout", "20", "/bin/sh", "tools/plot_compare.sh", "T", "a|b", bad,
                             "c<", huge, "d", step0, NULL};
    RunResult r = run_program(compare, NULL, 0);
    expect_sane_svg(&r, "plot_compare.sh");
    expect_in(r.out, ">a|b<"); /* a label with "|" stays whole */
    expect_in(r.out, ">c&lt;<");
    run_result_free(&r);
    const char *logs[] = {bad, huge, step0};
    for (int i = 0; i < 3; i++) {
        const char *plot[] = {"/usr/bin/timeout", "20", "/bin/sh", "tools/plot_log.sh", logs[i], "T", NULL};
        r = run_program(plot, NULL, 0);
        expect_sane_svg(&r, logs[i]);
        run_result_free(&r);
    }
}

/* A log that is not there is said to be missing, not "not a training log"
 * (which sent the user looking at a file's content). */
static void test_a_missing_log_is_said_missing(void **state)
{
    (void)state;
    const char *log_argv[] = {"/bin/sh", "tools/plot_log.sh", "/nonexistent/run.csv", NULL};
    const char *compare_argv[] = {"/bin/sh", "tools/plot_compare.sh", "T", "a", "/nonexistent/run.csv", NULL};
    const char *const *argvs[] = {log_argv, compare_argv};
    for (int i = 0; i < 2; i++) {
        RunResult r = run_program(argvs[i], NULL, 0);
        assert_int_equal(r.status, 2);
        expect_in(r.err, "/nonexistent/run.csv: cannot read it");
        assert_int_equal(r.out_len, 0);
        run_result_free(&r);
    }
}

/* embed.sh with no FILE printed a C file of nothing, status 0 */
static void test_embed_without_files_is_a_usage_error(void **state)
{
    (void)state;
    RunResult r = run_program((const char *[]){"/bin/sh", "tools/embed.sh", NULL}, NULL, 0);
    assert_int_equal(r.status, 2);
    expect_in(r.err, "usage: embed.sh FILE...");
    assert_int_equal(r.out_len, 0);
    run_result_free(&r);
}

/* number_fidelity.py: bytes that are no UTF-8 are named with their file
 * and line (Python's codec message named neither); a dev set with CRLF
 * line ends reads as with LF. */
static void test_number_fidelity_names_what_is_not_utf8(void **state)
{
    (void)state;
    if (access(PYTHON_WITH_TORCH, X_OK) != 0)
        SKIP_TEST("torch", "%s not installed (tools/deps.sh --with-torch installs it)", PYTHON_WITH_TORCH);
    static const char dev_crlf[] = "I have 3 cats\t\xe6\x88\x91\xe6\x9c\x89" "3\r\nHi\tx\r\n";
    static const char bad_dev[] = "I have 3 cats\tx\nHi\xfe\tx\n";
    const char *dev = temp_file("numbers-crlf.tsv", dev_crlf, strlen(dev_crlf));
    const char *bad = temp_file("numbers-bad.tsv", bad_dev, strlen(bad_dev));
    const char *hyps = temp_file("numbers.hyps", "3\nhi\n", 5);
    const char *ok_argv[] = {PYTHON_WITH_TORCH, "tools/number_fidelity.py", dev, "0", hyps, NULL};
    RunResult r = run_program(ok_argv, NULL, 0);
    if (r.status != 0) fail_msg("number_fidelity.py exited %d: %s", r.status, r.err);
    expect_in(r.out, ": 1 sources with numbers; all of them written in 1,");
    run_result_free(&r);
    const char *bad_argv[] = {PYTHON_WITH_TORCH, "tools/number_fidelity.py", bad, "0", hyps, NULL};
    r = run_program(bad_argv, NULL, 0);
    assert_int_equal(r.status, 1);
    expect_in(r.err, "numbers-bad.tsv: line 2: not UTF-8 (byte 0xfe)");
    assert_null(strstr(r.err, "Traceback"));
    run_result_free(&r);
}

/* number_fidelity.py reads a scale word after digits as the scaled value:
 * "2.84 million" is 2840000 (with numerals and words it was 2.84 and a
 * million, digits only 2 and 84), 10万 is 100000 (digits only: 10), 3万4300
 * is 34300, and digits only reads 100,000 as 100000 (100 and 000); 5千克
 * is 5 kilograms, no 5000.  Translations that write each number the other
 * way keep them all and invent none (each counted lost and invented). */
static void test_number_fidelity_reads_scale_words(void **state)
{
    (void)state;
    if (access(PYTHON_WITH_TORCH, X_OK) != 0)
        SKIP_TEST("torch", "%s not installed (tools/deps.sh --with-torch installs it)", PYTHON_WITH_TORCH);
    static const char dev_tsv[] = "It cost 2.84 million yen.\t它花了284万日元。\n"
                                  "There are 100,000 people.\t有10万人。\n"
                                  "It is 34,300 square metres.\t它有3万4300平方米。\n"
                                  "It weighs 5 kilograms.\t它重5千克。\n";
    static const char zh[] = "它花了284万日元。\n有10万人。\n它有3万4300平方米。\n它重5千克。\n";
    static const char en[] = "It cost 2.84 million yen.\nThere are 100,000 people.\nIt is 34,300 square metres.\n"
                             "It weighs 5 kilograms.\n";
    const char *dev = temp_file("scales.tsv", dev_tsv, strlen(dev_tsv));
    const char *hyps[2] = {temp_file("scales-zh.hyps", zh, strlen(zh)), temp_file("scales-en.hyps", en, strlen(en))};
    for (int column = 0; column < 2; column++) { /* en-zh, then zh-en */
        const char *argv[] = {PYTHON_WITH_TORCH, "tools/number_fidelity.py", dev, column ? "1" : "0", hyps[column],
                              NULL};
        RunResult r = run_program(argv, NULL, 0);
        if (r.status != 0) fail_msg("number_fidelity.py exited %d: %s", r.status, r.err);
        expect_in(r.out, ": 4 sources with numbers; all of them written in 4, a number the source lacks in 0; "
                         "with numerals and words: 4 sources with numbers, all written in 4, one the source "
                         "lacks in 0\n");
        run_result_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_loss_that_is_no_finite_number_is_left_out),
        cmocka_unit_test(test_a_missing_log_is_said_missing),
        cmocka_unit_test(test_embed_without_files_is_a_usage_error),
        cmocka_unit_test(test_number_fidelity_names_what_is_not_utf8),
        cmocka_unit_test(test_number_fidelity_reads_scale_words),
    };
    return cmocka_run_group_tests_name("tool scripts", tests, NULL, NULL);
}
