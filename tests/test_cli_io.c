/* test_cli_io.c — ./translate when its surroundings fail: a standard output
 * that is full, closed or gone, a standard input that cannot be read, a
 * weights file that cannot be written, a model whose numbers overflow.
 * Each case checks that nothing is lost silently: the documented status,
 * one stderr line naming what failed, and no destroyed file.
 *
 * The programs run with their file descriptors set up by run_with() below
 * (run_program in testutil.c always gives them pipes). */
#define _XOPEN_SOURCE 700 /* posix_openpt and its kin, for a terminal */
#include "testutil.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include "../common/utf8.h"

#define TINY "configs/tiny.yaml"
#define TINY_WEIGHTS "tests/data/tiny.safetensors"
#define CLOSED (-1)

/* Run argv with fd 0 = in_fd and fd 1 = out_fd (CLOSED: closed), SIGPIPE
 * ignored (so a write to a pipe without reader fails with EPIPE instead of
 * killing the program) and, when fsize > 0, a file size limit of fsize
 * bytes (writes beyond it fail with EFBIG: a full disk even for root).
 * Returns the status; stderr goes to r.err. */
static RunResult run_with(const char *const argv[], int in_fd, int out_fd, long fsize)
{
    RunResult r = {0};
    int err[2];
    if (pipe(err)) abort();
    pid_t pid = fork();
    if (pid < 0) abort();
    if (pid == 0) {
        if (in_fd == CLOSED) close(0);
        else if (in_fd != 0) dup2(in_fd, 0);
        if (out_fd == CLOSED) close(1);
        else if (out_fd != 1) dup2(out_fd, 1);
        dup2(err[1], 2);
        close(err[0]);
        close(err[1]);
        signal(SIGPIPE, SIG_IGN);
        signal(SIGXFSZ, SIG_IGN);
        if (fsize > 0) {
            struct rlimit lim = {(rlim_t)fsize, (rlim_t)fsize};
            setrlimit(RLIMIT_FSIZE, &lim);
        }
        execv(test_program(argv[0]), (char *const *)argv);
        _exit(127);
    }
    close(err[1]);
    size_t cap = 1 << 16;
    r.err = calloc(1, cap);
    r.out = calloc(1, 1);
    ssize_t n;
    while ((n = read(err[0], r.err + r.err_len, cap - 1 - r.err_len)) > 0) {
        r.err_len += (size_t)n;
        if (r.err_len + 1 == cap) {
            r.err = realloc(r.err, cap *= 2);
            if (!r.err) abort();
        }
    }
    r.err[r.err_len] = '\0';
    close(err[0]);
    int status;
    waitpid(pid, &status, 0);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
}

static int open_or_die(const char *path, int flags)
{
    int fd = open(path, flags);
    if (fd < 0) fail_msg("cannot open %s: %s", path, strerror(errno));
    return fd;
}

/* The tiny weights exist once any run of tiny.yaml (random_init_seed 7)
 * has written them. */
static void make_tiny_weights(void)
{
    if (access(TINY_WEIGHTS, R_OK) == 0) return;
    const char *argv[] = {"./translate", "-q", "-c", TINY, "x", NULL};
    RunResult r = run_program(argv, NULL, 0);
    run_result_free(&r);
}

/* ---- standard output: full, closed, gone ---------------------------------- */

/* Every way translate writes to stdout, as argv after "./translate". */
static const char *const stdout_writers[][9] = {
    {"-q", "-c", TINY, "How are you?", NULL},
    {"-q", "-c", TINY, "-b", "2", "-n", "2", "How are you?", NULL},
    {"-q", "-c", TINY, "--explain", "How are you?", NULL},
    {"-q", "-c", TINY, "--show", "cross", "How are you?", NULL},
    {"-q", "-c", TINY, "--eval", "tests/data/tiny.tsv", NULL},
    /* --hyps - is not flushed line by line: its failure was said twice */
    {"-q", "-c", TINY, "--eval", "tests/data/tiny.tsv", "--hyps", "-", NULL},
    {"-q", "-c", TINY, "-o", "-", "How are you?", NULL},
    /* "-" is stdout's descriptor, its failure said once; logits longer
     * than the stream's buffer, so that they fail before the translation */
    {"-q", "-c", TINY, "--logits", "-", "-o", "/dev/null",
     "How are you? How are you? How are you? How are you? How are you? How are you?", NULL},
    {"--help", NULL},
    {"--version", NULL},
};

/* Each writer with stdout = out_fd: status 4 and one line naming
 * standard output. */
static void expect_stdout_error(int out_fd, const char *reason)
{
    make_tiny_weights();
    int in = open_or_die("/dev/null", O_RDONLY);
    for (size_t i = 0; i < sizeof stdout_writers / sizeof stdout_writers[0]; i++) {
        const char *argv[10] = {"./translate"};
        for (int j = 0; stdout_writers[i][j]; j++) argv[j + 1] = stdout_writers[i][j];
        RunResult r = run_with(argv, in, out_fd, 0);
        if (r.status != 4)
            fail_msg("translate %s ...: status %d, stderr: %s", argv[1], r.status, r.err);
        expect_in(r.err, "standard output");
        expect_in(r.err, reason);
        assert_int_equal(count_lines(r.err), 1);
        run_result_free(&r);
    }
    close(in);
}

static void test_stdout_on_a_full_device_is_an_error(void **state)
{
    (void)state;
    int full = open_or_die("/dev/full", O_WRONLY);
    expect_stdout_error(full, "No space left on device");
    close(full);
}

static void test_closed_stdout_is_an_error(void **state)
{
    (void)state;
    expect_stdout_error(CLOSED, "Bad file descriptor");
    /* but not for an output named /dev/null: a closed standard output is
     * /dev/null opened read-only, and -o /dev/null was written through it
     * ("/dev/null: cannot write: Bad file descriptor", status 4) */
    int in = open_or_die("/dev/null", O_RDONLY);
    const char *argv[] = {"./translate", "-q", "-c", TINY, "-o", "/dev/null", "How are you?", NULL};
    RunResult r = run_with(argv, in, CLOSED, 0);
    if (r.status != 0) fail_msg("-o /dev/null with standard output closed: status %d: %s", r.status, r.err);
    run_result_free(&r);
    /* while /dev/stdout, the descriptor itself, still fails (taken as a
     * device, the translations went into /dev/null, status 0) */
    const char *named[] = {"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"};
    for (int i = 0; i < 3; i++) {
        const char *to_stdout[] = {"./translate", "-q", "-c", TINY, "-o", named[i], "How are you?", NULL};
        r = run_with(to_stdout, in, CLOSED, 0);
        if (r.status != 4) fail_msg("-o %s with standard output closed: status %d: %s", named[i], r.status, r.err);
        expect_in(r.err, "Bad file descriptor");
        run_result_free(&r);
    }
    close(in);
}

/* A reader that went away (SIGPIPE ignored): translate stops at once rather
 * than translating the 5,000 lines for nobody; the last line, invalid
 * UTF-8, would be reported on stderr if it got that far. */
static void test_stdout_reader_gone_stops_translating(void **state)
{
    (void)state;
    make_tiny_weights();
    char path[512];
    snprintf(path, sizeof path, "%s/5000-lines.txt", temp_dir());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 5000; i++) fputs("How are you?\n", f);
    fputs("bad \xff\n", f);
    fclose(f);
    int in = open_or_die(path, O_RDONLY);
    int out[2];
    if (pipe(out)) abort();
    close(out[0]);
    const char *argv[] = {"./translate", "-q", "-c", TINY, NULL};
    RunResult r = run_with(argv, in, out[1], 0);
    close(out[1]);
    close(in);
    assert_int_equal(r.status, 4);
    expect_in(r.err, "standard output");
    expect_in(r.err, "Broken pipe");
    expect_not_in(r.err, "line 5001");
    assert_int_equal(count_lines(r.err), 1);
    run_result_free(&r);
}

/* ---- standard input that cannot be read ------------------------------------ */

/* Both ways of reading standard input: maxi-batches (the default when it
 * is not a terminal) and one line at a time (--maxi-batch 1). */
static void expect_stdin_error(int in_fd, const char *reason)
{
    make_tiny_weights();
    const char *batched[] = {"./translate", "-q", "-c", TINY, NULL};
    const char *line_at_a_time[] = {"./translate", "-q", "-c", TINY, "--maxi-batch", "1", NULL};
    const char **argvs[] = {batched, line_at_a_time};
    for (int i = 0; i < 2; i++) {
        int out = open_or_die("/dev/null", O_WRONLY);
        RunResult r = run_with(argvs[i], in_fd, out, 0);
        close(out);
        if (r.status != 1) fail_msg("%s: status %d, stderr: %s", i ? "--maxi-batch 1" : "batched", r.status, r.err);
        expect_in(r.err, "standard input: cannot read");
        expect_in(r.err, reason);
        assert_int_equal(count_lines(r.err), 1);
        run_result_free(&r);
    }
}

static void test_stdin_that_is_a_directory_is_an_error(void **state)
{
    (void)state;
    int dir = open_or_die("/", O_RDONLY);
    expect_stdin_error(dir, "Is a directory");
    close(dir);
}

static void test_closed_stdin_is_an_error(void **state)
{
    (void)state;
    expect_stdin_error(CLOSED, "Bad file descriptor");
}

/* Standard input that fails after two lines (a socket whose other end
 * closed with a byte unread: ECONNRESET once the lines are read): both
 * are translated, with their notes (the untrained model's cut-short
 * ones), and the error comes after them, in maxi-batches as one line at
 * a time: a batch said it as it read it, before its lines' notes. */
static void test_stdin_failing_after_lines_is_said_after_their_notes(void **state)
{
    (void)state;
    make_tiny_weights();
    const char *batched[] = {"./translate", "-c", TINY, NULL};
    const char *line_at_a_time[] = {"./translate", "-c", TINY, "--maxi-batch", "1", NULL};
    const char **argvs[] = {batched, line_at_a_time};
    for (int i = 0; i < 2; i++) {
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair)) abort();
        if (write(pair[0], "How are you?\nI love China.\n", 27) != 27 || write(pair[1], "x", 1) != 1) abort();
        close(pair[0]);
        int out = open_or_die("/dev/null", O_WRONLY);
        RunResult r = run_with(argvs[i], pair[1], out, 0);
        close(out);
        close(pair[1]);
        const char *what = i ? "--maxi-batch 1" : "batched";
        if (r.status != 1) fail_msg("%s: status %d, stderr: %s", what, r.status, r.err);
        expect_in(r.err, "translate: line 2: " CUT_SHORT_NOTE);
        const char *error = strstr(r.err, "translate: standard input: cannot read: Connection reset by peer\n");
        if (!error || error[strcspn(error, "\n") + 1] != '\0')
            fail_msg("%s: the read error is not said last:\n%s", what, r.err);
        run_result_free(&r);
    }
}

/* ---- a run that stops early replaces no output file ----------------------- */

/* "old\n" in a fresh file `name`; its path in path[4096]. */
static void old_file(char *path, const char *name) { snprintf(path, 4096, "%s", temp_file(name, "old\n", 4)); }

static void expect_old(const char *path)
{
    size_t len;
    char *text = read_file(path, &len);
    assert_non_null(text);
    if (strcmp(text, "old\n") != 0) fail_msg("%s was replaced (%zu bytes): the run had stopped", path, len);
    free(text);
}

/* Two lines and a bad third, which stderr would name had translating gone on. */
static int two_lines_and_a_bad_one(void)
{
    return open_or_die(temp_file("two-and-bad.txt", "How are you?\nHow are you?\nbad \xff\n", 32), O_RDONLY);
}

/* Standard output fails at the first line: translating stops there, and
 * -a, --html and --logits keep their old contents instead of that line's. */
static void test_outputs_stay_as_they_were_when_stdout_fails(void **state)
{
    (void)state;
    make_tiny_weights();
    char path[3][4096];
    old_file(path[0], "stop-maps.json");
    old_file(path[1], "stop-page.html");
    old_file(path[2], "stop.logits");
    const char *argv[] = {"./translate", "-q", "-c", TINY, "-a", path[0], "--html", path[1], "--logits", path[2], NULL};
    int in = two_lines_and_a_bad_one(), full = open_or_die("/dev/full", O_WRONLY);
    RunResult r = run_with(argv, in, full, 0);
    close(in);
    close(full);
    if (r.status != 4) fail_msg("status %d, stderr: %s", r.status, r.err);
    expect_in(r.err, "standard output: cannot write");
    expect_not_in(r.err, "line 3");
    assert_int_equal(count_lines(r.err), 1);
    for (int i = 0; i < 3; i++) expect_old(path[i]);
    run_result_free(&r);
}

/* A --logits write that fails stops translating, as -o's would, and -o
 * keeps its old contents. */
static void test_failed_logits_write_stops_and_keeps_the_output_file(void **state)
{
    (void)state;
    make_tiny_weights();
    char out[4096];
    old_file(out, "stop.out");
    const char *argv[] = {"./translate", "-q", "-c", TINY, "--logits", "/dev/full", "-o", out, NULL};
    int in = two_lines_and_a_bad_one(), null = open_or_die("/dev/null", O_WRONLY);
    RunResult r = run_with(argv, in, null, 0);
    close(in);
    close(null);
    if (r.status != 4) fail_msg("status %d, stderr: %s", r.status, r.err);
    expect_in(r.err, "/dev/full: cannot write");
    expect_not_in(r.err, "line 3");
    assert_int_equal(count_lines(r.err), 1);
    expect_old(out);
    run_result_free(&r);
}

/* Standard input left non-blocking by the program that started us (a pipe
 * whose line comes 0.3 s later): translate waits for the line rather than
 * fail with EAGAIN and drop it, one line at a time and in batches. */
static void test_a_non_blocking_stdin_waits_for_its_lines(void **state)
{
    (void)state;
    make_tiny_weights();
    const char *maxi[] = {"1", "8"};
    for (int m = 0; m < 2; m++) {
        int p[2];
        if (pipe(p)) abort();
        fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
        pid_t writer = fork();
        if (writer == 0) {
            close(p[0]);
            usleep(300 * 1000);
            if (write(p[1], "How are you?\nHow are you?\n", 26) != 26) _exit(1);
            _exit(0);
        }
        close(p[1]);
        char out_path[4096];
        snprintf(out_path, sizeof out_path, "%s", temp_file("non-blocking.out", "", 0));
        int out = open_or_die(out_path, O_WRONLY | O_TRUNC);
        const char *argv[] = {"./translate", "-q", "-c", TINY, "--maxi-batch", maxi[m], NULL};
        RunResult r = run_with(argv, p[0], out, 0);
        close(p[0]);
        close(out);
        waitpid(writer, NULL, 0);
        if (r.status != 0) fail_msg("--maxi-batch %s: status %d, stderr: %s", maxi[m], r.status, r.err);
        size_t len;
        char *text = read_file(out_path, &len);
        assert_non_null(text);
        assert_int_equal(count_lines(text), 2);
        free(text);
        run_result_free(&r);
    }
}

/* A translation that reached the length limit, not </s>, says so (it may
 * be cut short): every line of the untrained tiny model, one line at a
 * time and in a batch, each note naming its line; nothing with -q; none
 * for the shipped model's translation that ends. */
static void test_a_translation_cut_at_the_length_limit_says_so(void **state)
{
    (void)state;
    make_tiny_weights();
    const char *input = "How are you?\nHow are you?\nHow are you?\n";
    const char *modes[][4] = {{"--maxi-batch", "1", NULL}, {"--maxi-batch", "8", NULL},
                              {"--maxi-batch", "8", "-q", NULL}};
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
        const char *argv[] = {"./translate", "-c", TINY, modes[m][0], modes[m][1], modes[m][2], NULL};
        RunResult r = run_program(argv, input, strlen(input));
        assert_int_equal(r.status, 0);
        assert_int_equal(count_lines(r.out), 3);
        bool quiet = modes[m][2] != NULL;
        assert_int_equal(count_lines(r.err) - count_lines_without(r.err, CUT_SHORT_NOTE), quiet ? 0 : 3);
        if (!quiet) {
            expect_in(r.err, "line 1: " CUT_SHORT_NOTE " (18 tokens: the config's max_output_ratio x source");
            expect_in(r.err, "line 3: " CUT_SHORT_NOTE);
        }
        run_result_free(&r);
    }
    const char *shipped[] = {"./translate", "-t", "1", "I love china", NULL};
    RunResult r = run_program(shipped, NULL, 0);
    assert_int_equal(r.status, 0);
    expect_not_in(r.err, CUT_SHORT_NOTE);
    run_result_free(&r);
    const char *batched[] = {"./translate", "-t", "1", "--maxi-batch", "8", NULL}; /* the same, batched */
    r = run_program(batched, "I love china\nHow are you?\n", 26);
    assert_int_equal(r.status, 0);
    assert_int_equal(count_lines(r.out), 2);
    expect_not_in(r.err, CUT_SHORT_NOTE);
    run_result_free(&r);
    /* a sentence longer in Chinese than max_len allows: cut at 128 */
    const char *longer[] = {"./translate", "-t", "1", "-b", "1",
        "Yesterday my brother and I went to the old market near the river to buy fresh fish, vegetables, "
        "rice, tea and some fruit for our grandmother, who lives alone in a small house on the hill behind "
        "the school, and after we had finished shopping we walked slowly back home through the park, "
        "talking about our plans for the summer holiday, our friends at school, the books we had read, the "
        "films we wanted to see, and the long trip to Beijing that our parents had promised us.", NULL};
    r = run_program(longer, NULL, 0);
    assert_int_equal(r.status, 0);
    expect_in(r.err, "line 1: " CUT_SHORT_NOTE " (128 tokens, the model's max_len): it may be cut short");
    run_result_free(&r);
}

/* Standard input read from a file (`< FILE`, `-i -`) is an input of the
 * run like -i FILE: no output may replace it (the translations of a file
 * written over the file itself). */
static void test_an_output_never_replaces_the_file_on_stdin(void **state)
{
    (void)state;
    make_tiny_weights();
    const char *text = "How are you?\n";
    const char *path = temp_file("on-stdin.txt", text, strlen(text));
    const char *options[][2] = {{"-o", NULL}, {"--logits", NULL}, {"--attention", NULL},
                                {"--html", NULL}, {"-o", "-i"}};
    for (size_t i = 0; i < sizeof options / sizeof *options; i++) {
        const char *argv[] = {"./translate", "-q", "-c", TINY, options[i][0], path,
                              options[i][1], options[i][1] ? "-" : NULL, NULL};
        int in = open_or_die(path, O_RDONLY), out = open_or_die("/dev/null", O_WRONLY);
        RunResult r = run_with(argv, in, out, 0);
        close(in);
        close(out);
        if (r.status != 4) fail_msg("%s FILE < FILE: status %d, stderr: %s", options[i][0], r.status, r.err);
        expect_in(r.err, "would overwrite standard input");
        assert_int_equal(count_lines(r.err), 1);
        expect_file_is(path, text);
        run_result_free(&r);
    }
}

/* A copy of configs/tiny.yaml in the temporary folder, its paths made
 * absolute (so that it can live anywhere); *text receives its contents
 * (free it). */
static const char *tiny_config_copy(const char *name, char **text)
{
    size_t len;
    char *tiny = read_file(TINY, &len), cwd[4096];
    assert_non_null(tiny);
    assert_non_null(getcwd(cwd, sizeof cwd));
    char *config = malloc(len + 8 * strlen(cwd) + 1), *at = config;
    assert_non_null(config);
    for (const char *p = tiny; *p;)
        if (strncmp(p, "../tests/", 9) == 0) {
            at += sprintf(at, "%s/tests/", cwd);
            p += 9;
        } else {
            *at++ = *p++;
        }
    *at = '\0';
    free(tiny);
    *text = config;
    return temp_file(name, config, strlen(config));
}

/* Standard output appended to a file the run reads: the translations
 * went back into the lines to translate, without end (the file grew until
 * the disk was full), or into the config.  Refused before a line is read,
 * the file as it was. */
static void test_standard_output_is_never_an_input(void **state)
{
    (void)state;
    make_tiny_weights();
    const char *text = "How are you?\nI love china\n";
    const char *path = temp_file("appended.txt", text, strlen(text));
    const char *tsv_text = "How are you?\t你好吗？\n";
    const char *tsv = temp_file("appended.tsv", tsv_text, strlen(tsv_text));
    const char *from_stdin[] = {"./translate", "-q", "-c", TINY, NULL};
    const char *one_at_a_time[] = {"./translate", "-q", "-c", TINY, "--maxi-batch", "1", NULL};
    const char *from_file[] = {"./translate", "-q", "-c", TINY, "-i", path, NULL};
    const char *eval[] = {"./translate", "-q", "-c", TINY, "--eval", tsv, NULL};
    const struct { const char **argv; const char *appended, *says; } runs[] = {
        {from_stdin, path, "standard output is the file standard input reads"},
        {one_at_a_time, path, "standard output is the file standard input reads"},
        {from_file, path, "an input of this run"},
        {eval, tsv, "an input of this run"},
    };
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        const char *expected = runs[i].appended == path ? text : tsv_text;
        int in = open_or_die(path, O_RDONLY), out = open_or_die(runs[i].appended, O_WRONLY | O_APPEND);
        RunResult r = run_with(runs[i].argv, in, out, 0);
        close(in);
        close(out);
        if (r.status != 4) fail_msg("run %zu: status %d, stderr: %s", i, r.status, r.err);
        expect_in(r.err, runs[i].says);
        assert_int_equal(count_lines(r.err), 1);
        expect_file_is(runs[i].appended, expected);
        run_result_free(&r);
    }
    /* with -o FILE nothing goes to standard output: no refusal */
    char other[700];
    snprintf(other, sizeof other, "%s/appended.out", temp_dir());
    const char *to_file[] = {"./translate", "-q", "-c", TINY, "-o", other, NULL};
    int in = open_or_die(path, O_RDONLY), appended = open_or_die(path, O_WRONLY | O_APPEND);
    RunResult ok = run_with(to_file, in, appended, 0);
    close(in);
    close(appended);
    if (ok.status != 0) fail_msg("-o FILE: status %d, stderr: %s", ok.status, ok.err);
    expect_file_is(path, text);
    run_result_free(&ok);
    /* the config itself: a copy (a failure would append to it) */
    char *config;
    const char *copy = tiny_config_copy("appended.yaml", &config);
    const char *one[] = {"./translate", "-q", "-c", copy, "How are you?", NULL};
    int out = open_or_die(copy, O_WRONLY | O_APPEND);
    RunResult r = run_with(one, CLOSED, out, 0);
    close(out);
    if (r.status != 4) fail_msg("config: status %d, stderr: %s", r.status, r.err);
    expect_in(r.err, "an input of this run");
    expect_file_is(copy, config);
    run_result_free(&r);
    free(config);
}

/* -c /dev/stdin while the lines come from standard input too: the YAML's
 * lines were translated (from a file), or none at all (from a pipe, which
 * the config had read to its end), and the run said nothing. */
static void test_the_config_and_the_lines_never_share_standard_input(void **state)
{
    (void)state;
    make_tiny_weights();
    char *config;
    const char *copy = tiny_config_copy("from-stdin.yaml", &config);
    const char *argv[] = {"./translate", "-q", "-c", "/dev/stdin", NULL};
    const char *dash[] = {"./translate", "-q", "-c", "/dev/stdin", "-i", "-", NULL};
    const char *same_file[] = {"./translate", "-q", "-c", copy, "-i", copy, NULL};
    for (int i = 0; i < 5; i++) {
        int in;
        if (i < 2) {
            in = open_or_die(copy, O_RDONLY);
        } else {
            int p[2];
            assert_int_equal(pipe(p), 0);
            assert_int_equal(write(p[1], config, strlen(config)), (ssize_t)strlen(config));
            close(p[1]);
            in = p[0];
        }
        const char **run = i == 4 ? same_file : i % 2 ? dash : argv;
        const char *out_path = temp_file("from-stdin.out", "", 0);
        int out = open_or_die(out_path, O_WRONLY | O_TRUNC);
        RunResult r = run_with(run, in, out, 0);
        close(in);
        close(out);
        if (r.status != 2) fail_msg("run %d: status %d, stdout: %s, stderr: %s", i, r.status, r.out, r.err);
        expect_in(r.err, i == 4 ? "the config is also -i's file" : "would both come from standard input");
        assert_int_equal(count_lines(r.err), 1);
        expect_file_is(out_path, "");
        run_result_free(&r);
    }
    /* a config from another pipe, or -c /dev/stdin with the lines as
     * arguments, is as before */
    int in = open_or_die(copy, O_RDONLY), out = open_or_die("/dev/null", O_WRONLY);
    const char *texts[] = {"./translate", "-q", "-c", "/dev/stdin", "How are you?", NULL};
    RunResult r = run_with(texts, in, out, 0);
    close(in);
    close(out);
    if (r.status != 0) fail_msg("TEXT: status %d, stderr: %s", r.status, r.err);
    run_result_free(&r);
    free(config);
}

/* With no sentence given and a terminal on standard input, translate
 * waits for lines: it says so, naming the files it will write, so that a
 * sentence an option took for its file name (`-a "I love china"`) is seen
 * at once, not as a file of that name after Ctrl-D.  Run on a
 * pseudo-terminal: one line, then Ctrl-D. */
static void test_reading_a_terminal_says_so(void **state)
{
    (void)state;
    make_tiny_weights();
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    assert_true(master >= 0);
    assert_int_equal(grantpt(master), 0);
    assert_int_equal(unlockpt(master), 0);
    const char *terminal = ptsname(master);
    assert_non_null(terminal);
    char sentence_file[700];
    snprintf(sentence_file, sizeof sentence_file, "%s/I love china", temp_dir());
    int err[2];
    assert_int_equal(pipe(err), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setsid();
        int slave = open(terminal, O_RDWR);
        int null = open("/dev/null", O_WRONLY);
        if (slave < 0 || null < 0) _exit(127);
        dup2(slave, 0);
        dup2(null, 1);
        dup2(err[1], 2);
        close(err[0]);
        const char *argv[] = {"./translate", "-c", TINY, "-a", sentence_file, NULL};
        execv(test_program(argv[0]), (char *const *)argv);
        _exit(127);
    }
    close(err[1]);
    assert_int_equal(write(master, "How are you?\n\004", 14), 14);
    char said[8192] = "";
    size_t len = 0;
    for (ssize_t n; len + 1 < sizeof said && (n = read(err[0], said + len, sizeof said - 1 - len)) > 0;)
        len += (size_t)n;
    said[len] = '\0';
    close(err[0]);
    int status;
    waitpid(pid, &status, 0);
    close(master);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail_msg("status %d, stderr: %s", status, said);
    expect_in(said, "reading the lines to translate from the terminal");
    expect_in(said, "--attention writes '");
    expect_in(said, "I love china'");
    /* not on a pipe or with -q: nothing to wait for there */
    const char *quiet[] = {"./translate", "-q", "-c", TINY, NULL};
    RunResult r = run_program(quiet, "How are you?\n", 0);
    expect_not_in(r.err, "terminal");
    run_result_free(&r);
}

/* Standard input that cannot be read: -o keeps its old contents, in
 * maxi-batches and one line at a time. */
static void test_unreadable_stdin_keeps_the_output_file(void **state)
{
    (void)state;
    make_tiny_weights();
    char out[4096];
    old_file(out, "unread.out");
    const char *batched[] = {"./translate", "-q", "-c", TINY, "-o", out, NULL};
    const char *line_at_a_time[] = {"./translate", "-q", "-c", TINY, "-o", out, "--maxi-batch", "1", NULL};
    const char **argvs[] = {batched, line_at_a_time};
    int dir = open_or_die("/", O_RDONLY);
    for (int i = 0; i < 2; i++) {
        RunResult r = run_with(argvs[i], dir, CLOSED, 0);
        if (r.status != 1) fail_msg("%s: status %d, stderr: %s", i ? "--maxi-batch 1" : "batched", r.status, r.err);
        expect_in(r.err, "standard input: cannot read");
        assert_int_equal(count_lines(r.err), 1);
        expect_old(out);
        run_result_free(&r);
    }
    close(dir);
}

/* The four outputs of a run on `input` that translated no line: written,
 * empty, over "old\n"; the run's status `status`. */
static void expect_outputs_written_empty(const char *input, size_t input_len, int status)
{
    const char *old = "old\n";
    char path[4][4096];
    const char *names[4] = {"old-maps.json", "old-page.html", "old.logits", "old.out"};
    for (int i = 0; i < 4; i++) snprintf(path[i], sizeof path[i], "%s", temp_file(names[i], old, 4));
    const char *argv[] = {"./translate", "-q", "-a", path[0], "--html", path[1], "--logits", path[2],
                          "-o", path[3], NULL};
    RunResult r = run_program(argv, input, input_len);
    if (r.status != status) print_in_full(&r);
    assert_int_equal(r.status, status);
    size_t len;
    char *text = read_file(path[0], &len);
    assert_non_null(text);
    cJSON *doc = cJSON_Parse(text);
    assert_non_null(doc);
    assert_string_equal(cJSON_GetObjectItem(doc, "format")->valuestring, "translate-attention");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "model"), "name")->valuestring, "en-zh");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "sentences")), 0);
    cJSON_Delete(doc);
    free(text);
    assert_non_null(text = read_file(path[1], &len));
    assert_non_null(strstr(text, "<html"));
    free(text);
    assert_non_null(text = read_file(path[2], &len));
    assert_int_equal(len, 0);
    free(text);
    assert_non_null(text = read_file(path[3], &len)); /* -o: the empty line of each input line */
    assert_int_equal(len, input_len ? 1 : 0);
    free(text);
    run_result_free(&r);
}

/* An input without lines, without -c (no model opened for a line):
 * --attention, --html and --logits are written empty, as with -c and as
 * -o is, never left from an earlier run to pass for this one's. */
static void test_outputs_of_an_input_without_lines_are_written_empty(void **state)
{
    (void)state;
    expect_outputs_written_empty("", 0, 0);
}

/* So are those of an input whose only line is too long to read (no model
 * opened for it): the earlier run's files stayed. */
static void test_outputs_of_an_input_of_one_unreadable_line_are_written_empty(void **state)
{
    (void)state;
    size_t n = 70000;
    char *input = malloc(n + 1);
    memset(input, 'a', n);
    input[n] = '\n';
    expect_outputs_written_empty(input, n + 1, 1);
    free(input);
}

/* ---- --init-weights never destroys the old file ---------------------------- */

static void copy_file(const char *from, const char *to)
{
    size_t len;
    char *data = read_file(from, &len);
    assert_non_null(data);
    FILE *f = fopen(to, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    free(data);
}

/* A copy of the shipped en-zh config and its files in DIR/configs and
 * DIR/weights (the config's ../weights/ paths then point at the copies);
 * writes the config's path into `config`. */
static void copy_shipped_model(const char *name, bool with_weights, char *config, size_t size)
{
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/%s", temp_dir(), name);
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/configs", dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/weights", dir);
    mkdir(path, 0755);
    const char *files[] = {"en-zh.src.vocab", "en-zh.tgt.vocab", "en-zh.safetensors"};
    for (int i = 0; i < (with_weights ? 3 : 2); i++) {
        char from[256];
        snprintf(from, sizeof from, "weights/%s", files[i]);
        snprintf(path, sizeof path, "%s/weights/%s", dir, files[i]);
        copy_file(from, path);
    }
    snprintf(path, sizeof path, "%s/weights/en-zh.safetensors", dir);
    if (!with_weights) unlink(path);
    snprintf(config, size, "%s/configs/en-zh.yaml", dir);
    copy_file("configs/en-zh.yaml", config);
}

/* Remove what copy_shipped_model made (30 MB of weights each time). */
static void remove_copy(const char *config)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%.*s", (int)(strlen(config) - strlen("/configs/en-zh.yaml")), config);
    const char *rm[] = {"/bin/rm", "-rf", dir, NULL};
    RunResult r = run_program(rm, NULL, 0);
    run_result_free(&r);
}

static bool same_file(const char *a, const char *b)
{
    size_t la, lb;
    char *x = read_file(a, &la), *y = read_file(b, &lb);
    bool same = x && y && la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void test_init_weights_force_replaces_the_file_only_when_complete(void **state)
{
    (void)state;
    char config[600], weights[700], folder[700];
    copy_shipped_model("init-force", true, config, sizeof config);
    snprintf(weights, sizeof weights, "%.*s/weights/en-zh.safetensors",
             (int)(strlen(config) - strlen("/configs/en-zh.yaml")), config);
    snprintf(folder, sizeof folder, "%.*s", (int)(strlen(weights) - strlen("/en-zh.safetensors")), weights);
    const char *argv[] = {"./translate", "-c", config, "--init-weights", "--force", NULL};
    /* A disk that fills up after 1 MB: the write fails, the old file stays. */
    int in = open_or_die("/dev/null", O_RDONLY), out = open_or_die("/dev/null", O_WRONLY);
    RunResult r = run_with(argv, in, out, 1 << 20);
    if (r.status != 4) fail_msg("status %d, stderr: %s", r.status, r.err);
    expect_in(r.err, "en-zh.safetensors: cannot write");
    assert_int_equal(count_lines(r.err), 1);
    assert_true(same_file(weights, "weights/en-zh.safetensors"));
    assert_int_equal(count_entries(folder), 3); /* no temporary file left */
    run_result_free(&r);
    /* With room: replaced by the default seed's model, which then loads. */
    r = run_with(argv, in, out, 0);
    if (r.status != 0) fail_msg("status %d, stderr: %s", r.status, r.err);
    expect_in(r.err, "seed 1");
    assert_false(same_file(weights, "weights/en-zh.safetensors"));
    assert_int_equal(count_entries(folder), 3);
    run_result_free(&r);
    close(in);
    close(out);
    const char *use[] = {"./translate", "-q", "-c", config, "How are you?", NULL};
    r = run_program(use, NULL, 0);
    assert_int_equal(r.status, 0);
    assert_int_equal(count_lines(r.out), 1);
    run_result_free(&r);
    remove_copy(config);
}

/* --force replaces a model, never what the config's weights: names by
 * mistake (notes, data, another config): it did, with status 0. */
static void test_init_weights_force_replaces_only_a_model(void **state)
{
    (void)state;
    char config[600], weights[700];
    copy_shipped_model("init-not-a-model", false, config, sizeof config);
    snprintf(weights, sizeof weights, "%.*s/weights/en-zh.safetensors",
             (int)(strlen(config) - strlen("/configs/en-zh.yaml")), config);
    const char *notes = "my notes\tmeine Notizen\n";
    write_text(weights, notes);
    const char *argv[] = {"./translate", "-c", config, "--init-weights", "--force", NULL};
    RunResult r = run_program(argv, NULL, 0);
    if (r.status != 4) fail_msg("status %d, stderr: %s", r.status, r.err);
    expect_in(r.err, "is not a model");
    assert_int_equal(count_lines(r.err), 1);
    expect_file_is(weights, notes);
    run_result_free(&r);
    /* an empty file is replaced, as a missing one is written */
    write_text(weights, "");
    r = run_program(argv, NULL, 0);
    if (r.status != 0) fail_msg("empty: status %d, stderr: %s", r.status, r.err);
    run_result_free(&r);
    /* and so is a model cut short (it loads no more, but is a model) */
    assert_int_equal(truncate(weights, 300), 0);
    r = run_program(argv, NULL, 0);
    if (r.status != 0) fail_msg("cut model: status %d, stderr: %s", r.status, r.err);
    run_result_free(&r);
    remove_copy(config);
}

/* Without random_init_seed (the shipped configs), --init-weights uses the
 * documented default seed 1: the same file every time. */
static void test_init_weights_without_a_seed_uses_the_default(void **state)
{
    (void)state;
    char config[600], weights[700], first[800];
    copy_shipped_model("init-default", false, config, sizeof config);
    snprintf(weights, sizeof weights, "%.*s/weights/en-zh.safetensors",
             (int)(strlen(config) - strlen("/configs/en-zh.yaml")), config);
    const char *argv[] = {"./translate", "-c", config, "--init-weights", NULL};
    RunResult r = run_program(argv, NULL, 0);
    if (r.status != 0) fail_msg("status %d, stderr: %s", r.status, r.err);
    expect_in(r.err, "seed 1");
    run_result_free(&r);
    snprintf(first, sizeof first, "%s.first", weights);
    copy_file(weights, first);
    r = run_program(argv, NULL, 0); /* exists: refused without --force */
    assert_int_equal(r.status, 4);
    expect_in(r.err, "exists; add --force");
    run_result_free(&r);
    const char *again[] = {"./translate", "-c", config, "--init-weights", "--force", NULL};
    r = run_program(again, NULL, 0);
    assert_int_equal(r.status, 0);
    assert_true(same_file(weights, first));
    run_result_free(&r);
    remove_copy(config);
}

/* ---- a model whose numbers overflow ------------------------------------------ */

/* The tiny model with every element of LayerNorm weight `tensor` set to
 * 3e38: finite, so the weights load, but the activations overflow to Inf
 * and then NaN.  Returns the path of a config that uses it. */
static const char *huge_row_config(const char *tensor, int row, const char *name);

static const char *huge_weight_config(const char *tensor, const char *name)
{
    return huge_row_config(tensor, -1, name);
}

/* The same with only row `row` of the tensor (d_model 16 floats) huge:
 * only the sentences that use that row overflow. */
static const char *huge_row_config(const char *tensor, int row, const char *name)
{
    make_tiny_weights();
    size_t len;
    char *bytes = read_file(TINY_WEIGHTS, &len);
    assert_non_null(bytes);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = n << 8 | (unsigned char)bytes[i];
    cJSON *header = cJSON_ParseWithLength(bytes + 8, (size_t)n);
    const cJSON *offsets = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(header, tensor), "data_offsets");
    assert_non_null(offsets);
    size_t begin = (size_t)cJSON_GetArrayItem(offsets, 0)->valuedouble;
    size_t end = (size_t)cJSON_GetArrayItem(offsets, 1)->valuedouble;
    float huge = 3e38f;
    if (row >= 0) {
        begin += (size_t)row * 16 * sizeof huge;
        end = begin + 16 * sizeof huge;
    }
    for (size_t at = begin; at < end; at += sizeof huge) memcpy(bytes + 8 + n + at, &huge, sizeof huge);
    cJSON_Delete(header);
    char weights[256], cwd[512], yaml[4096];
    snprintf(weights, sizeof weights, "%s.safetensors", name);
    snprintf(weights, sizeof weights, "%s", temp_file(weights, bytes, len));
    free(bytes);
    if (!getcwd(cwd, sizeof cwd)) abort();
    snprintf(yaml, sizeof yaml,
             "name: huge\nsource_language: en\ntarget_language: zh\nmodel:\n"
             "  weights: %s/%s\n  source_vocab: %s/tests/data/tiny.src.vocab\n"
             "  target_vocab: %s/tests/data/tiny.tgt.vocab\narchitecture:\n"
             "  d_model: 16\n  heads: 2\n  encoder_layers: 2\n  decoder_layers: 2\n  d_ff: 32\n"
             "  activation: gelu\n  norm: pre\n  max_len: 32\n  scale_attention: true\n"
             "  tied_output_embedding: true\n",
             cwd, weights, cwd, cwd);
    snprintf(weights, sizeof weights, "%s.yaml", name);
    return temp_file(weights, yaml, strlen(yaml));
}

/* The number of sentences in a JSON attention document (-1: it does not
 * parse), `len` bytes of it at `text`. */
static int sentences_in(const char *text, size_t len)
{
    cJSON *doc = cJSON_ParseWithLength(text, len);
    int n = doc ? cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "sentences")) : -1;
    cJSON_Delete(doc);
    return n;
}

/* Each way of translating one sentence with an overflowing model: the
 * sentence fails (status 1, one stderr line naming it, an empty output
 * line) before anything of it is written. */
static void test_overflowing_model_fails_the_sentence(void **state)
{
    (void)state;
    const char *configs[] = {huge_weight_config("transformer.encoder.layers.0.norm1.weight", "huge-enc"),
                             huge_weight_config("transformer.decoder.norm.weight", "huge-dec")};
    char attention[512], html[512], logits[512];
    snprintf(attention, sizeof attention, "%s/huge.json", temp_dir());
    snprintf(html, sizeof html, "%s/huge.html", temp_dir());
    snprintf(logits, sizeof logits, "%s/huge.logits", temp_dir());
    for (int c = 0; c < 2; c++) {
        const char *const ways[][9] = {
            {"How are you?", NULL},
            {"-b", "3", "How are you?", NULL},
            {"-b", "3", "-n", "2", "How are you?", NULL},
            {"--explain", "How are you?", NULL},
            {"--show", "cross", "How are you?", NULL},
            {"--attention", attention, "--html", html, "How are you?", NULL},
            {"--logits", logits, "How are you?", NULL},
        };
        unlink(attention);
        unlink(html);
        for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++) {
            const char *argv[12] = {"./translate", "-q", "-c", configs[c]};
            for (int j = 0; ways[w][j]; j++) argv[j + 4] = ways[w][j];
            RunResult r = run_program(argv, NULL, 0);
            if (r.status != 1) fail_msg("%s %s: status %d, stdout '%s'", configs[c], ways[w][0], r.status, r.out);
            assert_string_equal(r.out, "\n");
            expect_in(r.err, "line 1: ");
            expect_in(r.err, "NaN or Inf");
            assert_int_equal(count_lines(r.err), 1);
            run_result_free(&r);
        }
        /* The documents still parse, and hold no sentence. */
        char *text = read_file(attention, NULL);
        assert_non_null(text);
        assert_int_equal(sentences_in(text, strlen(text)), 0);
        free(text);
        text = read_file(html, NULL);
        assert_non_null(text);
        const char *open = "<script type=\"application/json\" class=\"attention-data\">";
        const char *json = strstr(text, open);
        assert_non_null(json);
        json += strlen(open);
        assert_int_equal(sentences_in(json, (size_t)(strstr(json, "</script>") - json)), 0);
        free(text);
        size_t n = 1;
        free(read_file(logits, &n));
        assert_int_equal(n, 0);
    }
}

/* A batch: every line fails the same way, none is lost; read ahead in
 * mini-batches (greedy or beam: issue 12) or one line at a time alike. */
static void test_overflowing_model_keeps_one_line_per_input(void **state)
{
    (void)state;
    const char *config = huge_weight_config("transformer.encoder.layers.0.norm1.weight", "huge-batch");
    const char *const ways[][5] = {{NULL}, {"-b", "1", NULL}, {"--maxi-batch", "1", NULL},
                                   {"-b", "1", "--mini-batch", "1", NULL}, {"-b", "3", NULL}};
    for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++) {
        const char *argv[10] = {"./translate", "-q", "-c", config};
        for (int j = 0; ways[w][j]; j++) argv[j + 4] = ways[w][j];
        const char *input = "How are you?\nI love China.\n";
        RunResult r = run_program(argv, input, strlen(input));
        assert_int_equal(r.status, 1);
        assert_string_equal(r.out, "\n\n");
        expect_in(r.err, "line 1: ");
        expect_in(r.err, "line 2: ");
        expect_in(r.err, "NaN or Inf");
        assert_int_equal(count_lines(r.err), 2);
        run_result_free(&r);
    }
}

/* A mini-batch whose sentences overflow one by one: only the lines that
 * use the poisoned embedding row ("china", id 17 in tiny's vocabulary)
 * fail, each said, status 1 (each sentence took the mini-batch's first
 * sentence's flag: the lines came out empty, status 0, or the good ones
 * failed). */
static void test_only_the_lines_that_overflow_fail(void **state)
{
    (void)state;
    const char *config = huge_row_config("src_embed.weight", 17, "huge-china");
    const char *input = "I love china.\nHow are you?\nGood morning.\nchina is big.\nI love you.\n";
    const char *const ways[][3] = {{"-b", "1", NULL}, {"-b", "3", NULL}, {"--maxi-batch", "1", NULL}};
    for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++) {
        const char *argv[10] = {"./translate", "-q", "-c", config, ways[w][0], ways[w][1], NULL};
        RunResult r = run_program(argv, input, strlen(input));
        assert_int_equal(r.status, 1);
        assert_int_equal(count_lines(r.out), 5);
        expect_in(r.err, "line 1: ");
        expect_in(r.err, "line 4: ");
        assert_int_equal(count_lines(r.err), 2);
        run_result_free(&r);
    }
}

/* "-" names the standard streams, not a file: -i - -o - reads one and
 * writes the other (compared as a file named "-", it was refused as an
 * output over an input). */
static void test_dash_in_and_dash_out(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "-q", "-c", TINY, "-i", "-", "-o", "-", NULL};
    RunResult r = run_program(argv, "hello\nworld\n", 12);
    assert_int_equal(r.status, 0);
    assert_int_equal(count_lines(r.out), 2);
    assert_string_equal(r.err, "");
    run_result_free(&r);
}

/* ---- the unknown-word note ---------------------------------------------------- */

/* A word too long for the note is shown cut short with "…", never left
 * out (the list used to be empty); a list too long ends with "…". */
static void test_unknown_word_note_never_shows_an_empty_list(void **state)
{
    (void)state;
    make_tiny_weights();
    char word[301];
    for (int i = 0; i < 300; i++) word[i] = (char)('a' + i % 7);
    word[300] = '\0';
    const char *argv[] = {"./translate", "-c", TINY, word, NULL};
    RunResult r = run_program(argv, NULL, 0);
    assert_int_equal(r.status, 0);
    expect_in(r.err, "line 1: note: 1 unknown word mapped to <unk>: 'abcdefgabcdefgabcdef");
    expect_in(r.err, "\xE2\x80\xA6'\n"); /* …' */
    assert_int_equal(count_lines_without(r.err, CUT_SHORT_NOTE), 1);
    run_result_free(&r);
    /* 2-byte characters after one byte: the 40-byte cut would fall inside
     * one, so it falls before it (the note stays valid UTF-8). */
    char wide[602] = "a";
    for (int i = 0; i < 150; i++) strcat(wide, "\xC3\xA9\xC3\xB8"); /* éø */
    const char *argv2[] = {"./translate", "-c", TINY, wide, NULL};
    r = run_program(argv2, NULL, 0);
    assert_int_equal(r.status, 0);
    expect_in(r.err, "<unk>: 'a\xC3\xA9\xC3\xB8");
    expect_in(r.err, "\xE2\x80\xA6'\n");
    assert_true(utf8_valid(r.err, strlen(r.err)));
    run_result_free(&r);
    char many[1024] = "";
    for (int i = 0; i < 30; i++) {
        char w[32];
        snprintf(w, sizeof w, "%szqxwvk%02d", i ? " " : "", i);
        strcat(many, w);
    }
    const char *argv3[] = {"./translate", "-c", TINY, many, NULL};
    r = run_program(argv3, NULL, 0);
    assert_int_equal(r.status, 0);
    expect_in(r.err, "30 unknown words mapped to <unk>: 'zqxwvk00', 'zqxwvk01'");
    expect_in(r.err, ", \xE2\x80\xA6\n");
    assert_int_equal(count_lines_without(r.err, CUT_SHORT_NOTE), 1);
    run_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stdout_on_a_full_device_is_an_error),
        cmocka_unit_test(test_closed_stdout_is_an_error),
        cmocka_unit_test(test_stdout_reader_gone_stops_translating),
        cmocka_unit_test(test_stdin_that_is_a_directory_is_an_error),
        cmocka_unit_test(test_closed_stdin_is_an_error),
        cmocka_unit_test(test_stdin_failing_after_lines_is_said_after_their_notes),
        cmocka_unit_test(test_init_weights_force_replaces_the_file_only_when_complete),
        cmocka_unit_test(test_init_weights_force_replaces_only_a_model),
        cmocka_unit_test(test_init_weights_without_a_seed_uses_the_default),
        cmocka_unit_test(test_overflowing_model_fails_the_sentence),
        cmocka_unit_test(test_overflowing_model_keeps_one_line_per_input),
        cmocka_unit_test(test_dash_in_and_dash_out),
        cmocka_unit_test(test_only_the_lines_that_overflow_fail),
        cmocka_unit_test(test_unknown_word_note_never_shows_an_empty_list),
        cmocka_unit_test(test_outputs_of_an_input_without_lines_are_written_empty),
        cmocka_unit_test(test_outputs_of_an_input_of_one_unreadable_line_are_written_empty),
        cmocka_unit_test(test_outputs_stay_as_they_were_when_stdout_fails),
        cmocka_unit_test(test_failed_logits_write_stops_and_keeps_the_output_file),
        cmocka_unit_test(test_unreadable_stdin_keeps_the_output_file),
        cmocka_unit_test(test_an_output_never_replaces_the_file_on_stdin),
        cmocka_unit_test(test_standard_output_is_never_an_input),
        cmocka_unit_test(test_the_config_and_the_lines_never_share_standard_input),
        cmocka_unit_test(test_reading_a_terminal_says_so),
        cmocka_unit_test(test_a_translation_cut_at_the_length_limit_says_so),
        cmocka_unit_test(test_a_non_blocking_stdin_waits_for_its_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
