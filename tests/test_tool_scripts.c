/* test_plot_scripts.c — tools/plot_log.sh and tools/plot_compare.sh, the
 * SVG plots of train's CSV logs (docs/en-zh-training.svg and the like): a log with a loss
 * that is no finite number, or a huge one (a hand-edited or foreign CSV:
 * train's own checks every loss), is drawn without it, in bounded time and
 * size, as valid XML with no "nan" or "inf" coordinates; plot_compare's
 * one gridline per unit of loss had run without end for "inf", and drawn
 * 10^9 lines for a loss of 10^9. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_loss_that_is_no_finite_number_is_left_out),
    };
    return cmocka_run_group_tests_name("plot scripts", tests, NULL, NULL);
}
