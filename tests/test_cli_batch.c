/* test_cli_batch.c — standard input read ahead and translated in
 * length-sorted mini-batches (issue 12, --maxi-batch / --mini-batch):
 * the same output lines, messages and exit status as one line at a time,
 * in input order, bad lines keeping their place and their one-line error. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lines of every kind: long and short (the sort moves them), an empty one,
 * invalid UTF-8, one over the 65,536-byte limit, Chinese among English
 * (without -c it goes to the other model), a repeated one. */
static char *mixed_input(size_t *len)
{
    static const char *const lines[] = {
        "I love China.", "Tom is reading a very long book about the history of the world.", "",
        "How are you?", "bad \xff byte", NULL /* the long line */, "我想吃酸菜鱼", "Good morning.",
        "I love China.", "It is raining today, so we will stay at home and watch a film.", "Yes."};
    size_t cap = 70000 + 4096, n = 0;
    char *s = malloc(cap);
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        if (lines[i]) {
            n += (size_t)sprintf(s + n, "%s\n", lines[i]);
        } else {
            memset(s + n, 'a', 66000);
            n += 66000;
            s[n++] = '\n';
        }
    }
    s[n] = '\0';
    *len = n;
    return s;
}

/* argv + the extra arguments, on `input`: the result. */
static RunResult run_with(const char *const *base, const char *const *extra, const char *input, size_t len)
{
    const char *argv[24];
    int n = 0;
    for (; base[n]; n++) argv[n] = base[n];
    for (int i = 0; extra && extra[i]; i++) argv[n++] = extra[i];
    argv[n] = NULL;
    return run_program(argv, input, len);
}

static void expect_same(const RunResult *a, const RunResult *b, const char *what)
{
    if (a->status != b->status || strcmp(a->out, b->out) != 0 || strcmp(a->err, b->err) != 0) {
        print_in_full(a);
        print_in_full(b);
        fail_msg("%s: batched and one line at a time differ (status %d / %d)", what, a->status, b->status);
    }
}

/* Greedy: every batch shape gives what one line at a time gives. */
static void check_same_as_line_at_a_time(const char *const *base)
{
    size_t len;
    char *input = mixed_input(&len);
    const char *const line[] = {"--maxi-batch", "1", NULL};
    RunResult want = run_with(base, line, input, len);
    assert_int_equal(want.status, 1); /* the bad lines */
    assert_int_equal(count_lines(want.out), 11);
    const char *const shapes[][5] = {{NULL},
                                     {"--maxi-batch", "3", NULL},
                                     {"--maxi-batch", "2", "--mini-batch", "1", NULL},
                                     {"--mini-batch", "4", NULL},
                                     {"--maxi-batch", "64", "--mini-batch", "64", NULL},
                                     /* mini-batches shared out between threads, more than the cores */
                                     {"--mini-batch", "2", "-t", "3", NULL}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        RunResult got = run_with(base, shapes[i], input, len);
        expect_same(&got, &want, shapes[i][0] ? shapes[i][0] : "default");
        run_result_free(&got);
    }
    run_result_free(&want);
    free(input);
}

static void test_greedy_batches_equal_line_at_a_time(void **state)
{
    (void)state;
    const char *const base[] = {"./translate", "-b", "1", "-c", "configs/en-zh.yaml", NULL};
    check_same_as_line_at_a_time(base);
}

/* Without -c each line picks its model: both models' batches, one order. */
static void test_two_models_keep_input_order(void **state)
{
    (void)state;
    const char *const base[] = {"./translate", "-q", "-b", "1", NULL};
    check_same_as_line_at_a_time(base);
}

/* Beam search is batched too (every sentence's hypotheses in one batch:
 * beam_decode_many). */
static void test_beam_batches_equal_line_at_a_time(void **state)
{
    (void)state;
    const char *const base[] = {"./translate", "-q", "-b", "2", "-c", "configs/en-zh.yaml", NULL};
    check_same_as_line_at_a_time(base);
}

/* Column `column` (1 source, 2 target) of the first `n` lines of the dev
 * set, into a file; NULL without the data. */
static const char *dev_lines(int column, int n, const char *name)
{
    if (!tatoeba_dir()) return NULL;
    char path[512];
    snprintf(path, sizeof path, "%s/dev.tsv", tatoeba_dir());
    size_t len;
    char *tsv = read_file(path, &len);
    assert_non_null(tsv);
    char *out = malloc(len + 1), *o = out;
    const char *line = tsv;
    for (int i = 0; i < n && *line; i++) {
        const char *end = strchr(line, '\n'), *tab = strchr(line, '\t');
        if (!end) end = line + strlen(line);
        const char *from = column == 1 ? line : tab + 1, *to = column == 1 ? tab : end;
        assert_true(tab && tab < end);
        memcpy(o, from, (size_t)(to - from));
        o += to - from;
        *o++ = '\n';
        line = *end ? end + 1 : end;
    }
    const char *file = temp_file(name, out, (size_t)(o - out));
    free(out);
    free(tsv);
    return file;
}

#ifdef __SANITIZE_ADDRESS__
enum { DEV_LINES = 40 }; /* make asan: 800 sanitized beam-4 translations outlast a test's 900 s */
#else
enum { DEV_LINES = 200 };
#endif

/* DEV_LINES dev sentences from a file with beam 4, both directions: the
 * file's mini-batches (every sentence's hypotheses decoded together, the
 * mini-batches shared between 2 threads) give the output of one line at a
 * time, line for line.  Exact where the products' rows do not depend on
 * each other (the AVX-512, AVX2 and generic kernels: beam.h). */
static void test_beam_four_on_dev_lines_equals_line_at_a_time(void **state)
{
    (void)state;
    if (getenv("TEST_EMULATED")) SKIP_TEST("emulated", "800 beam-4 translations under an emulator are too slow");
    static const char *const configs[] = {"configs/en-zh.yaml", "configs/zh-en.yaml"};
    for (int c = 0; c < 2; c++) {
        const char *file = dev_lines(c + 1, DEV_LINES, c ? "dev.zh" : "dev.en");
        if (!file) SKIP_TEST("data", "the Tatoeba data is not there");
        const char *const batched[] = {"./translate", "-q", "-b", "4", "-t", "2", "-c", configs[c], "-i", file,
                                       NULL};
        const char *const line[] = {"./translate", "-q", "-b", "4", "-c", configs[c], "-i", file,
                                    "--maxi-batch", "1", NULL};
        RunResult got = run_program(batched, NULL, 0), want = run_program(line, NULL, 0);
        assert_int_equal(want.status, 0);
        assert_int_equal(count_lines(want.out), DEV_LINES);
        expect_same(&got, &want, configs[c]);
        run_result_free(&got);
        run_result_free(&want);
    }
}

/* A file's first mini-batches ask for room for the largest mini-batch
 * there can be, every thread's (model/search.c: 187 MiB a thread for
 * en-zh, greedy), but only where address space is unlimited: under
 * `ulimit -v 420000`, 300 dev lines on 2 threads translate, the same
 * lines, as the sets grow with the mini-batches (~320 MB were needed
 * when this test was written; since acts_size_batched they translate
 * under `ulimit -v 180000`).  Reserving anyway, one thread's room fits and the other
 * thread's growth has none: it aborted, at 460 MB and below. */
static void test_a_file_translates_under_an_address_space_limit(void **state)
{
    (void)state;
#ifdef __SANITIZE_ADDRESS__
    SKIP_TEST("asan", "the sanitizer's shadow memory needs terabytes of address space");
#endif
    if (getenv("TEST_EMULATED")) SKIP_TEST("emulated", "an emulator reserves the guest's address space itself");
    const char *file = dev_lines(1, 300, "dev300.en");
    if (!file) SKIP_TEST("data", "the Tatoeba data is not there");
    char command[1024];
    snprintf(command, sizeof command,
             "ulimit -v 420000 && exec ./translate -q -b 1 -t 2 -c configs/en-zh.yaml -i '%s'", file);
    const char *const limited[] = {"/bin/sh", "-c", command, NULL};
    const char *const free_run[] = {"./translate", "-q", "-b", "1", "-t", "2", "-c", "configs/en-zh.yaml",
                                    "-i", file, NULL};
    RunResult got = run_program(limited, NULL, 0), want = run_program(free_run, NULL, 0);
    assert_int_equal(want.status, 0);
    expect_same(&got, &want, "under ulimit -v 420000");
    run_result_free(&got);
    run_result_free(&want);
}

/* Out of memory is a one-line message and status 5, for translate and
 * train alike: it was abort()'s SIGABRT, status 134 and a core. */
static void test_out_of_memory_is_status_5(void **state)
{
    (void)state;
#ifdef __SANITIZE_ADDRESS__
    SKIP_TEST("asan", "the sanitizer's shadow memory needs terabytes of address space");
#endif
    if (getenv("TEST_EMULATED")) SKIP_TEST("emulated", "an emulator reserves the guest's address space itself");
    const char *const small[] = {"/bin/sh", "-c",
                                 "ulimit -v 20000 && exec ./translate -q -c configs/en-zh.yaml 'I love china'",
                                 NULL};
    RunResult r = run_program(small, NULL, 0);
    assert_int_equal(r.status, 5);
    expect_in(r.err, "translate: out of memory allocating ");
    assert_int_equal(count_lines(r.err), 1);
    assert_int_equal(r.out_len, 0);
    run_result_free(&r);
}

/* What a batch cannot give (n-best lines, alignments) still works on
 * standard input, one line at a time. */
static void test_rich_output_reads_line_at_a_time(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "-q", "-b", "2", "-n", "2", "-c", "configs/en-zh.yaml", NULL};
    const char *input = "I love China.\nHow are you?\n";
    RunResult r = run_program(argv, input, strlen(input));
    assert_int_equal(r.status, 0);
    assert_int_equal(count_lines(r.out), 4);
    expect_in(r.out, "1 ||| ");
    run_result_free(&r);
}

static void test_help_documents_the_batches(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "--help", NULL};
    RunResult r = run_program(argv, NULL, 0);
    assert_int_equal(r.status, 0);
    expect_in(r.out, "--maxi-batch N");
    expect_in(r.out, "--mini-batch N");
    expect_in(r.out, "terminal");
    run_result_free(&r);
}

static void test_bad_batch_sizes_are_usage_errors(void **state)
{
    (void)state;
    const char *const bad[][3] = {{"--maxi-batch", "0"}, {"--mini-batch", "0"}, {"--mini-batch", "x"},
                                  {"--maxi-batch", "-3"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *argv[] = {"./translate", "-c", "configs/en-zh.yaml", bad[i][0], bad[i][1], NULL};
        RunResult r = run_program(argv, "Hi.\n", 4);
        assert_int_equal(r.status, 2);
        expect_in(r.err, bad[i][0]);
        assert_int_equal(count_lines(r.err), 1);
        run_result_free(&r);
    }
}

/* --maxi-batch and --mini-batch act only on lines read and translated
 * for their text: with sentences on the command line, or with an output
 * that translates one line at a time, they would do nothing. */
static void test_batch_sizes_that_would_do_nothing_are_usage_errors(void **state)
{
    (void)state;
    const char *const cases[][6] = {
        {"--mini-batch", "4", "Hi.", NULL, NULL, "not TEXT arguments"},
        {"--maxi-batch", "8", "Hi.", "Bye.", NULL, "not TEXT arguments"},
        {"--maxi-batch", "8", "-n", "2", NULL, "-n, --alignment, --explain and --show translate one line at a time"},
        {"--mini-batch", "2", "-a", "/dev/null", NULL, "translate one line at a time"},
        {"--mini-batch", "2", "--explain", NULL, NULL, "translate one line at a time"},
        {"--maxi-batch", "1", "--mini-batch", "4", NULL, "--mini-batch needs --maxi-batch above 1"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *argv[] = {"./translate", "-c", "configs/en-zh.yaml", cases[i][0], cases[i][1], cases[i][2],
                              cases[i][3], cases[i][4], NULL};
        RunResult r = run_program(argv, "Hi.\n", 4);
        assert_int_equal(r.status, 2);
        expect_in(r.err, cases[i][5]);
        assert_int_equal(count_lines(r.err), 1);
        assert_string_equal(r.out, "");
        run_result_free(&r);
    }
    /* '-' is standard input: batched as without it */
    const char *argv[] = {"./translate", "-q", "-c", "configs/en-zh.yaml", "--mini-batch", "2", "-", NULL};
    RunResult r = run_program(argv, "I love China.\n", 14);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "我爱中国。\n");
    run_result_free(&r);
}

/* An empty translation (the shipped en-zh model, greedy, ends "_" at
 * once) is said on stderr, batched or not: else it looked like the empty
 * line of an input that failed, status 0 and nothing said. */
static void test_an_empty_translation_is_said(void **state)
{
    (void)state;
    const char *const base[] = {"./translate", "-b", "1", "-c", "configs/en-zh.yaml", NULL};
    const char *const line[] = {"--maxi-batch", "1", NULL};
    for (int batch = 0; batch < 2; batch++) {
        RunResult r = run_with(base, batch ? NULL : line, "_\nI love China.\n", 16);
        assert_int_equal(r.status, 0);
        assert_int_equal(r.out[0], '\n');
        expect_in(r.err, "translate: line 1: note: the model ended the translation at once: it is empty\n");
        assert_null(strstr(r.err, "line 2: note"));
        run_result_free(&r);
    }
}

/* The "translate: line N:" numbers of stderr's lines never go down: a
 * line's notes and errors come together, in line order. */
static void expect_lines_in_order(const char *err)
{
    int last = 0;
    for (const char *at = err; (at = strstr(at, "translate: line ")) != NULL; at++) {
        int line = atoi(at + strlen("translate: line "));
        if (line < last) fail_msg("line %d's message after line %d's:\n%s", line, last, err);
        last = line;
    }
}

/* Each line's notes and errors on stderr come with it, in line order, as
 * one line at a time gives them, the note on opening a model too: a
 * maxi-batch said its lines' notes on reading (Traditional characters,
 * <unk>, a line that cannot be encoded) as it encoded them, and those on
 * its translations (cut short, empty) as it wrote them, so line 3's
 * cut-short note came after line 6's.  With -c zh-en, and without -c, an
 * English line's empty translation among them. */
static void test_notes_come_in_line_order(void **state)
{
    (void)state;
    static const char input[] = "I love China.\n_\n哈哈哈哈哈哈哈哈哈哈哈哈\n這是我的電腦。\nbad \xff byte\n"
                                "我愛中國。\n哈哈哈哈哈哈哈哈哈哈哈哈哈\n";
    const char *const bases[][6] = {{"./translate", "-b", "1", "-c", "configs/zh-en.yaml", NULL},
                                    {"./translate", "-b", "1", NULL}};
    const char *const line[] = {"--maxi-batch", "1", NULL};
    const char *const shapes[][5] = {{NULL}, {"--maxi-batch", "3", NULL}, {"--mini-batch", "1", NULL}};
    for (size_t b = 0; b < sizeof bases / sizeof *bases; b++) {
        RunResult want = run_with(bases[b], line, input, strlen(input));
        assert_int_equal(want.status, 1); /* the bad byte */
        expect_in(want.err, "translate: line 3: note: the translation stopped at the length limit");
        expect_in(want.err, "translate: line 4: note: 3 Traditional characters read as Simplified\n");
        expect_in(want.err, "translate: line 5: invalid UTF-8");
        expect_lines_in_order(want.err);
        if (b == 1) {
            expect_in(want.err, "translate: line 2: note: the model ended the translation at once: it is empty\n"
                                "translate: note: using ");
        }
        for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
            RunResult got = run_with(bases[b], shapes[i], input, strlen(input));
            expect_same(&got, &want, shapes[i][0] ? shapes[i][0] : "default");
            run_result_free(&got);
        }
        run_result_free(&want);
    }
}

/* With both streams in one log (2>&1), each line's messages come with it,
 * as one line at a time gives them: a maxi-batch wrote all its lines'
 * messages first and its lines after (standard output is flushed once a
 * batch), so a log of a file read "line 5: invalid UTF-8" before line 1's
 * translation. */
static void test_messages_come_with_their_lines_in_one_log(void **state)
{
    (void)state;
    static const char input[] = "I love China.\n_\n哈哈哈哈哈哈哈哈哈哈哈哈\n這是我的電腦。\nbad \xff byte\n"
                                "\nGood morning.\n";
    const char *program = test_program("./translate");
    /* one line at a time, batched, batched into -o /dev/stdout (a stream
     * of its own on the same descriptor) */
    for (int models = 0; models < 2; models++) {
        RunResult got[3];
        for (int way = 0; way < 3; way++) {
            const char *argv[12] = {"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1", program, "-b", "1"};
            int n = 6;
            if (models == 0) {
                argv[n++] = "-c";
                argv[n++] = "configs/zh-en.yaml";
            }
            argv[n++] = way == 0 ? "--maxi-batch" : way == 1 ? "--mini-batch" : "-o";
            argv[n++] = way == 0 ? "1" : way == 1 ? "2" : "/dev/stdout";
            argv[n] = NULL;
            got[way] = run_program(argv, input, strlen(input));
            assert_int_equal(got[way].status, 1); /* the bad byte */
        }
        expect_in(got[0].out, "translate: line 5: invalid UTF-8");
        for (int way = 1; way < 3; way++)
            if (strcmp(got[way].out, got[0].out) != 0) {
                print_in_full(&got[0]);
                print_in_full(&got[way]);
                fail_msg("%s and one line at a time differ in one log", way == 1 ? "batched" : "-o /dev/stdout");
            }
        for (int way = 0; way < 3; way++) run_result_free(&got[way]);
    }
}

/* Nothing read is lost at the end: a last line without '\n', and more
 * lines than one maxi-batch holds. */
static void test_every_line_is_answered(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "-q", "-b", "1", "--maxi-batch", "4", "--mini-batch", "3",
                          "-c", "configs/en-zh.yaml", NULL};
    char input[2048] = "";
    for (int i = 0; i < 13; i++) strcat(input, i % 3 ? "Good morning.\n" : "I love China.\n");
    strcat(input, "Yes.");
    RunResult r = run_program(argv, input, strlen(input));
    assert_int_equal(r.status, 0);
    assert_int_equal(count_lines(r.out), 14);
    assert_int_equal(strncmp(r.out, "我爱中国。\n", strlen("我爱中国。\n")), 0);
    run_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_greedy_batches_equal_line_at_a_time),
        cmocka_unit_test(test_two_models_keep_input_order),
        cmocka_unit_test(test_beam_batches_equal_line_at_a_time),
        cmocka_unit_test(test_beam_four_on_dev_lines_equals_line_at_a_time),
        cmocka_unit_test(test_a_file_translates_under_an_address_space_limit),
        cmocka_unit_test(test_out_of_memory_is_status_5),
        cmocka_unit_test(test_rich_output_reads_line_at_a_time),
        cmocka_unit_test(test_help_documents_the_batches),
        cmocka_unit_test(test_bad_batch_sizes_are_usage_errors),
        cmocka_unit_test(test_batch_sizes_that_would_do_nothing_are_usage_errors),
        cmocka_unit_test(test_an_empty_translation_is_said),
        cmocka_unit_test(test_every_line_is_answered),
        cmocka_unit_test(test_notes_come_in_line_order),
        cmocka_unit_test(test_messages_come_with_their_lines_in_one_log),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
