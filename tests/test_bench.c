/* test_bench.c — `make bench`'s harness (bench/run.sh, bench/train_bench.c,
 * tools/bench_torch.py) runs every part and prints the whole table.
 *
 * The quick mode (tiny model, tiny data) runs once for the whole group;
 * the tests then read its table.  Speed is not checked — only that every
 * row is there, that our columns hold numbers, and that the PyTorch
 * columns hold numbers when torch is installed and say "skipped" when it
 * is not (never "failed"). */
#include "testutil.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static RunResult quick; /* the output of `sh bench/run.sh --quick` */

static int run_quick_bench(void **state)
{
    (void)state;
    const char *argv[] = {"/bin/sh", "bench/run.sh", "--quick", NULL};
    quick = run_program(argv, NULL, 0);
    return 0;
}

static int free_quick_bench(void **state)
{
    (void)state;
    run_result_free(&quick);
    return 0;
}

/* Cell `column` (0 = the row id) of the table row `id`, copied into a
 * static buffer with the spaces around it trimmed; NULL if no such row. */
static const char *cell(const char *id, int column)
{
    static char buf[512];
    char key[64];
    snprintf(key, sizeof key, "\n| %s |", id);
    const char *p = strstr(quick.out, key);
    if (!p) return NULL;
    p += 2; /* past "\n|" */
    for (int c = 0; c < column; c++) {
        p = strchr(p, '|');
        if (!p) return NULL;
        p++;
    }
    while (*p == ' ') p++;
    size_t len = strcspn(p, "|\n");
    while (len > 0 && p[len - 1] == ' ') len--;
    snprintf(buf, sizeof buf, "%.*s", (int)len, p);
    return buf;
}

static bool is_number(const char *s)
{
    char *end;
    if (!s || !*s) return false;
    strtod(s, &end);
    return end != s && (*end == '\0' || *end == ' ');
}

/* Every row, and whether our figure must be a number.  The scaling rows
 * are differences of two short timings that noise can make negative
 * (printed as n/a) in the quick mode, so only their presence is checked. */
static const struct {
    const char *id;
    bool ours_numeric, has_pytorch;
} ROWS[] = {
    {"train-1t", true, true},  {"train-2t", true, true},   {"gemm-1t", true, false},
    {"gemm-2t", true, false},  {"blas-1t", true, true},    {"blas-2t", true, true},
    {"greedy", true, true},     {"beam4", true, false},
    {"latency", true, true},   {"rss-1", true, false},     {"rss-batch", true, false},
    {"scale-short", false, false}, {"scale-mid", false, false}, {"scale-max", false, false},
};

static void test_quick_run_exits_zero(void **state)
{
    (void)state;
    if (quick.status != 0) fail_msg("bench/run.sh --quick exited %d:\n%s\n%s", quick.status, quick.out, quick.err);
    assert_null(strstr(quick.err, "failed"));
}

static void test_header_names_date_cpu_and_mode(void **state)
{
    (void)state;
    assert_non_null(strstr(quick.out, "# make bench — "));
    assert_non_null(strstr(quick.out, "CPU: "));
    assert_non_null(strstr(quick.out, "QUICK MODE"));
    assert_non_null(strstr(quick.out, "| row | measure | ours |"));
}

static void test_table_has_every_row(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ROWS / sizeof *ROWS; i++)
        if (!cell(ROWS[i].id, 0)) fail_msg("no row '%s' in:\n%s", ROWS[i].id, quick.out);
}

static void test_our_columns_are_numbers(void **state)
{
    (void)state;
    bool have_time = access("/usr/bin/time", X_OK) == 0;
    for (size_t i = 0; i < sizeof ROWS / sizeof *ROWS; i++) {
        if (!ROWS[i].ours_numeric) continue;
        if (strncmp(ROWS[i].id, "rss", 3) == 0 && !have_time) continue;
        const char *ours = cell(ROWS[i].id, 2);
        if (!is_number(ours)) fail_msg("row %s: ours is '%s', not a number", ROWS[i].id, ours ? ours : "?");
    }
}

static void test_pytorch_columns_are_numbers_or_skipped(void **state)
{
    (void)state;
    bool torch = torch_available();
    for (size_t i = 0; i < sizeof ROWS / sizeof *ROWS; i++) {
        if (!ROWS[i].has_pytorch) continue;
        const char *theirs = cell(ROWS[i].id, 3);
        if (torch ? !is_number(theirs) : !strstr(theirs ? theirs : "", "skipped"))
            fail_msg("row %s: PyTorch column is '%s' (torch %s)", ROWS[i].id, theirs ? theirs : "?",
                     torch ? "installed" : "not installed");
    }
}

static void test_train_bench_prints_every_key(void **state)
{
    (void)state;
    const char *argv[] = {"build/bench/train_bench", "-s", "1", "-w", "0", "-b", "60", "-n", "32",
                          "configs/tiny.yaml", "tests/data/tiny.tsv", NULL};
    RunResult r = run_program(argv, NULL, 0);
    assert_int_equal(r.status, 0);
    static const char *const KEYS[] = {"threads=1 ", "tokens_per_s=", "gemm_gflops=", "ceiling_gflops=",
                                       "last_loss="};
    for (size_t i = 0; i < sizeof KEYS / sizeof *KEYS; i++)
        if (!strstr(r.out, KEYS[i])) fail_msg("no '%s' in: %s", KEYS[i], r.out);
    run_result_free(&r);
}

static void test_train_bench_usage_error(void **state)
{
    (void)state;
    const char *argv[] = {"build/bench/train_bench", "-s", "zero", "configs/tiny.yaml", NULL};
    RunResult r = run_program(argv, NULL, 0);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "usage: train_bench"));
    run_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quick_run_exits_zero),
        cmocka_unit_test(test_header_names_date_cpu_and_mode),
        cmocka_unit_test(test_table_has_every_row),
        cmocka_unit_test(test_our_columns_are_numbers),
        cmocka_unit_test(test_pytorch_columns_are_numbers_or_skipped),
        cmocka_unit_test(test_train_bench_prints_every_key),
        cmocka_unit_test(test_train_bench_usage_error),
    };
    return cmocka_run_group_tests(tests, run_quick_bench, free_quick_bench);
}
