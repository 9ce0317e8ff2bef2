/* test_bench.c — `make bench`'s harness (bench/run.sh, bench/train_bench.c,
 * bench/gemm_bench.c, bench/decode_bench.c, tools/bench_torch.py) runs
 * every part and prints the whole table.
 *
 * The quick mode (tiny model, tiny data) runs once for the whole group;
 * the tests then read its table.  Speed is not checked — only that every
 * row is there, that our columns hold numbers, that the PyTorch and
 * OpenBLAS columns hold numbers when those are installed and say "skipped"
 * when they are not (never "failed"), and that every target has a verdict. */
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

/* Every row, whether our figure must be a number, and which reference its
 * fourth column holds (PyTorch, OpenBLAS or one of ours).  The scaling rows
 * are differences of two short timings that noise can make negative
 * (printed as n/a) in the quick mode, so only their presence is checked,
 * as for the decoder-step rows (a step of the tiny model is a few
 * microseconds, the difference of two decodings: on a loaded machine it
 * came out negative, n/a) and the CPU-time rows of files and start-up
 * (the shell's `times` and hyperfine count in clock ticks, and the quick
 * runs take a few of them);
 * the gemm-avx2-*, train-avx2-* and decode-bound-avx2 rows exist only on
 * AVX-512 CPUs, and train-1t-bound's figure needs a multiply-add peak,
 * which gemm_bench measures on x86 only. */
enum { REF_OURS, REF_TORCH, REF_BLAS };
static const struct {
    const char *id;
    bool ours_numeric;
    int reference;
} ROWS[] = {
    {"gemm-1t", true, REF_BLAS},      {"gemm-2t", true, REF_BLAS},
    {"train-1t", true, REF_TORCH},    {"train-2t", true, REF_TORCH},
    {"train-scale", true, REF_OURS},  {"decode-bound", false, REF_OURS},
    {"gemm-peak", true, REF_OURS},    {"train-1t-bound", false, REF_TORCH},
    {"decode-bound-cpu", false, REF_OURS},
    {"greedy", true, REF_TORCH},      {"beam4", true, REF_OURS},
    {"files", true, REF_OURS},        {"files-eval", true, REF_OURS},
    {"files-cpu", false, REF_OURS},   {"files-default", true, REF_OURS},
    {"latency", true, REF_TORCH},     {"startup", true, REF_OURS},
    {"startup-cpu", false, REF_OURS},
    {"rss-1", true, REF_OURS},        {"rss-batch", true, REF_OURS},
    {"scale-short", false, REF_OURS}, {"scale-mid", false, REF_OURS},
    {"scale-max", false, REF_OURS},
};

/* Rows with an issue target say "met" or "missed" (the others nothing). */
static const char *const VERDICT_ROWS[] = {"gemm-1t", "gemm-2t", "train-1t", "train-2t", "train-scale",
                                           "decode-bound", "decode-bound-cpu", "greedy", "files", "files-default", "startup",
                                           "rss-1"};

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
    assert_non_null(strstr(quick.out, "vector flags: "));
    assert_non_null(strstr(quick.out, "Our GEMM kernel: "));
    assert_non_null(strstr(quick.out, "OpenBLAS"));
    assert_non_null(strstr(quick.out, "GEMM per shape"));
}

/* The OpenBLAS the references use is named with its core type, or said to
 * be missing. */
static bool blas_installed(void)
{
    return strstr(quick.out, "OpenBLAS (the GEMM reference") != NULL;
}

static void test_header_names_the_blas(void **state)
{
    (void)state;
    if (blas_installed()) assert_non_null(strstr(quick.out, "detected core type "));
    else assert_non_null(strstr(quick.out, "OpenBLAS: not installed"));
    if (torch_available()) assert_non_null(strstr(quick.out, "BLAS it loaded (/proc/self/maps): /"));
}

static void test_targets_have_verdicts(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof VERDICT_ROWS / sizeof *VERDICT_ROWS; i++) {
        const char *v = cell(VERDICT_ROWS[i], 6);
        bool ok = v && (strncmp(v, "met", 3) == 0 || strncmp(v, "missed", 6) == 0 || strcmp(v, "—") == 0);
        if (!ok) fail_msg("row %s: verdict '%s'", VERDICT_ROWS[i], v ? v : "?");
    }
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

static void test_reference_columns_are_numbers_or_skipped(void **state)
{
    (void)state;
    bool torch = torch_available(), blas = blas_installed();
    for (size_t i = 0; i < sizeof ROWS / sizeof *ROWS; i++) {
        if (ROWS[i].reference == REF_OURS) continue;
        bool have = ROWS[i].reference == REF_TORCH ? torch : blas;
        const char *theirs = cell(ROWS[i].id, 3);
        if (have ? !is_number(theirs) : !strstr(theirs ? theirs : "", "skipped"))
            fail_msg("row %s: reference column is '%s' (%s %s)", ROWS[i].id, theirs ? theirs : "?",
                     ROWS[i].reference == REF_TORCH ? "torch" : "OpenBLAS", have ? "installed" : "not installed");
    }
}

static void test_gemm_bench_prints_every_key(void **state)
{
    (void)state;
    const char *argv[] = {"build/bench/gemm_bench", "--quick", "-V", "40", "-k", "generic", "-t", "1", NULL};
    RunResult r = run_program(argv, NULL, 0);
    assert_int_equal(r.status, 0);
    static const char *const KEYS[] = {"openblas=", "corename=", "gemm kernel=generic form=nt threads=1 ",
                                       "form=nn", "form=tn", "what=VxD_R32", " ours=", " openblas=",
                                       "peak kernel=generic threads=1 gflops=none"};
    for (size_t i = 0; i < sizeof KEYS / sizeof *KEYS; i++)
        if (!strstr(r.out, KEYS[i])) fail_msg("no '%s' in: %s", KEYS[i], r.out);
    run_result_free(&r);
}

/* Without OpenBLAS (here: BENCH_OPENBLAS naming a missing library) our
 * figures are still measured and the reference says none. */
static void test_gemm_bench_without_openblas(void **state)
{
    (void)state;
    const char *argv[] = {"build/bench/gemm_bench", "--quick", "-V", "40", "-k", "generic", "-t", "1", NULL};
    setenv("BENCH_OPENBLAS", "/nonexistent/libopenblas.so.0", 1);
    RunResult r = run_program(argv, NULL, 0);
    unsetenv("BENCH_OPENBLAS");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "openblas=none corename=none"));
    assert_non_null(strstr(r.out, " ours="));
    assert_null(strstr(r.out, "openblas=0"));
    run_result_free(&r);
}

/* decode_bench's keys, and TRANSLATE_GEMM forcing the kernel of a whole
 * program (model/gemm.h). */
static void test_decode_bench_prints_every_key_and_obeys_translate_gemm(void **state)
{
    (void)state;
    const char *argv[] = {"build/bench/decode_bench", "-n", "4", "configs/tiny.yaml", "tests/data/tiny.tsv", NULL};
    setenv("TRANSLATE_GEMM", "generic", 1);
    RunResult r = run_program(argv, NULL, 0);
    unsetenv("TRANSLATE_GEMM");
    if (r.status != 0) fail_msg("decode_bench exited %d: %s", r.status, r.err);
    static const char *const KEYS[] = {"kernel=generic ", "bytes_per_token=", "bandwidth_gbs=", "bound_ms=",
                                       "step_ms=", "token_ms=", "open_s=", "bound_fraction="};
    for (size_t i = 0; i < sizeof KEYS / sizeof *KEYS; i++)
        if (!strstr(r.out, KEYS[i])) fail_msg("no '%s' in: %s", KEYS[i], r.out);
    run_result_free(&r);
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
        cmocka_unit_test(test_header_names_the_blas),
        cmocka_unit_test(test_targets_have_verdicts),
        cmocka_unit_test(test_reference_columns_are_numbers_or_skipped),
        cmocka_unit_test(test_gemm_bench_prints_every_key),
        cmocka_unit_test(test_gemm_bench_without_openblas),
        cmocka_unit_test(test_decode_bench_prints_every_key_and_obeys_translate_gemm),
        cmocka_unit_test(test_train_bench_prints_every_key),
        cmocka_unit_test(test_train_bench_usage_error),
    };
    return cmocka_run_group_tests(tests, run_quick_bench, free_quick_bench);
}
