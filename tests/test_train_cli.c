/* test_train_cli.c — ./train end to end: a tiny model memorises 16 pairs
 * and then translates each of them exactly; a run stopped mid-epoch and
 * resumed ends with the very same weights as an uninterrupted one. */
#include "testutil.h"

#include <dirent.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../model/safetensors.h"
#include "../tokenizer/vocab.h"

/* The tiny model's config (testutil.c), without label smoothing, in a
 * static buffer: valid until the next call. */
static const char *write_config(const char *dir_name, const char *extra_train)
{
    static char path[600];
    return tiny_train_config(dir_name, 0.0f, extra_train, path, sizeof path);
}

/* In the config file at `config`, the line that begins with `start`
 * becomes `line` (with its newline): the testutil config fixes its keys,
 * and a key may appear only once. */
static void replace_config_line(const char *config, const char *start, const char *line)
{
    size_t len;
    char *yaml = read_file(config, &len);
    char *at = strstr(yaml, start);
    assert_non_null(at);
    FILE *f = fopen(config, "w");
    assert_non_null(f);
    fprintf(f, "%.*s%s%s", (int)(at - yaml), yaml, line, strchr(at, '\n') + 1);
    assert_int_equal(fclose(f), 0);
    free(yaml);
}

/* ./train -q -t 1 CONFIG [FLAGS...]: its status must be want_status;
 * returns its stderr (free it). */
static char *run_train_args(const char *config, const char *const *flags, int want_status)
{
    const char *argv[16] = {"./train", "-q", "-t", "1", config};
    int n = 5;
    for (; flags && *flags && n < 15; flags++) argv[n++] = *flags;
    argv[n] = NULL;
    RunResult r = run_program(argv, NULL, 0);
    if (r.status != want_status) fail_msg("train %s exited %d, not %d:\n%s", config, r.status, want_status, r.err);
    char *err = r.err;
    r.err = NULL;
    run_result_free(&r);
    return err;
}

static void run_train(const char *config, const char *flag, int want_status)
{
    const char *flags[] = {flag, NULL};
    free(run_train_args(config, flags, want_status));
}

/* "<temp dir>/<dir>/<name>" in a static buffer (one of four). */
static const char *in_dir(const char *dir, const char *name)
{
    static char paths[4][700];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, sizeof paths[0], "%s/%s/%s", temp_dir(), dir, name);
    return p;
}

static bool file_exists(const char *path) { return access(path, F_OK) == 0; }

static void test_tiny_model_memorises_sixteen_pairs(void **state)
{
    (void)state;
    const char *config = write_config("overfit",
                                      "  batch_tokens: 1000\n  learning_rate: 0.003\n  warmup_steps: 20\n"
                                      "  epochs: 200\n  dropout: 0.0\n  seed: 3\n  eval_epochs: 200\n");
    run_train(config, NULL, 0);
    size_t len;
    char *tsv = read_file("tests/data/tiny.tsv", &len);
    char sources[4096] = "", targets[4096] = "";
    for (char *line = strtok(tsv, "\n"); line; line = strtok(NULL, "\n")) {
        char *tab = strchr(line, '\t'), *tab2 = strchr(tab + 1, '\t');
        strncat(sources, line, (size_t)(tab - line));
        strcat(sources, "\n");
        strncat(targets, tab + 1, (size_t)(tab2 - tab - 1));
        strcat(targets, "\n");
    }
    const char *argv[] = {"./translate", "-q", "-c", config, NULL};
    RunResult r = run_program(argv, sources, strlen(sources));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, targets);
    run_result_free(&r);
    free(tsv);
}

/* The parameters and optimizer state of a checkpoint, byte for byte. */
static void assert_same_checkpoint(const char *a_path, const char *b_path)
{
    const char *keys[] = {"step", "epoch", "batch", "dropout_rng"};
    assert_same_tensors(a_path, b_path, keys, 4);
}

static void test_resumed_run_equals_uninterrupted_run(void **state)
{
    (void)state;
    /* Small batches, so an epoch has several and the stop falls mid-epoch;
     * dropout on, so the generator's state must be restored too. */
    const char *common = "  batch_tokens: 60\n  learning_rate: 0.002\n  warmup_steps: 5\n  epochs: 3\n"
                         "  dropout: 0.1\n  seed: 5\n  checkpoint_steps: 4\n  average_last: 2\n";
    char whole[600], stopped[600], resumed[600], ckpt_whole[700], ckpt_resumed[700];
    snprintf(whole, sizeof whole, "%s", write_config("whole", common));
    char stop_train[512];
    snprintf(stop_train, sizeof stop_train, "%s  max_steps: 7\n", common);
    snprintf(stopped, sizeof stopped, "%s", write_config("resumed", stop_train));
    run_train(whole, NULL, 0);
    run_train(stopped, NULL, 0); /* stops at step 7, mid-epoch, with a checkpoint */
    snprintf(resumed, sizeof resumed, "%s", write_config("resumed", common));
    run_train(resumed, "--resume", 0);
    snprintf(ckpt_whole, sizeof ckpt_whole, "%s/whole/model.safetensors.ckpt", temp_dir());
    snprintf(ckpt_resumed, sizeof ckpt_resumed, "%s/resumed/model.safetensors.ckpt", temp_dir());
    assert_same_checkpoint(ckpt_whole, ckpt_resumed);
}

/* The tiny config with train.sources instead of train_data: tiny.tsv,
 * sources-extra.tsv at `weight` and the CC-CEDICT sample at 0.5, Chinese
 * simplified with the sample's table (data/sources.h; the counts are
 * tests/test_sources.c's). */
static const char *write_sources_config(const char *dir_name, const char *weight, const char *extra_train)
{
    const char *config = write_config(dir_name, extra_train);
    size_t len;
    char *yaml = read_file(config, &len), cwd[512], sources[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    char *td = strstr(yaml, "  train_data:"), *rest = strstr(td, "  dev_data:");
    snprintf(sources, sizeof sources,
             "  sources:\n    - path: %s/tests/data/tiny.tsv\n    - path: %s/tests/data/sources-extra.tsv\n"
             "      weight: %s\n      strip_notes: true\n    - path: %s/tests/data/cedict-mini.tsv\n"
             "      format: cedict\n      weight: 0.5\n  simplify_with: %s/tests/data/cedict-mini.tsv\n"
             "  max_length_ratio: 3\n",
             cwd, cwd, weight, cwd, cwd);
    FILE *f = fopen(config, "w");
    assert_non_null(f);
    fprintf(f, "%.*s%s%s", (int)(td - yaml), yaml, sources, rest);
    fclose(f);
    free(yaml);
    return config;
}

/* train --vocab and train say per source what was read, kept and dropped. */
static void test_sources_are_counted_on_stderr(void **state)
{
    (void)state;
    char *err = run_train_args(write_sources_config("counted", "2.5", "  epochs: 1\n"),
                               (const char *[]){"--vocab", NULL}, 0);
    expect_in(err, "train: Traditional → Simplified: 6 characters from ");
    expect_in(err, "tests/data/tiny.tsv: 16 read, 16 kept (weight 1: 16 an epoch), 0 duplicates, 0 filtered "
                   "(0 empty or invalid, 0 too long, 0 length ratio); 0 simplified, 0 with brackets handled\n");
    expect_in(err, "tests/data/sources-extra.tsv: 11 read, 7 kept (weight 2.5: 18 an epoch), 2 duplicates, "
                   "2 filtered (1 empty or invalid, 0 too long, 1 length ratio); 1 simplified, 3 with brackets handled\n");
    expect_in(err, "tests/data/cedict-mini.tsv (cedict): 19 read, 19 kept (weight 0.5: 10 an epoch), 0 duplicates, 0 filtered");
    expect_in(err, "train: 42 pairs from 3 sources, 44 an epoch [");
    expect_in(err, "train: vocabularies from 42 pairs: ");
    free(err);
    err = run_train_args(write_sources_config("counted", "2.5", "  epochs: 1\n  max_steps: 1\n"), NULL, 0);
    expect_in(err, "tests/data/sources-extra.tsv: 11 read, 7 kept (weight 2.5: 18 an epoch)");
    expect_in(err, "train: 42 pairs (42 usable, ");
    expect_in(err, "epoch 1: 44 pairs, "); /* sources-extra 2.5 times */
    free(err);
}

/* A source at a fractional weight draws anew each epoch; a run stopped
 * mid-epoch and resumed still ends with the uninterrupted run's weights,
 * and a changed weight is a changed plan. */
static void test_weighted_sources_resume_exactly(void **state)
{
    (void)state;
    const char *common = "  batch_tokens: 60\n  learning_rate: 0.002\n  warmup_steps: 5\n  epochs: 3\n"
                         "  dropout: 0.1\n  seed: 5\n  checkpoint_steps: 4\n";
    char stop[512], ckpt_whole[700], ckpt_resumed[700];
    snprintf(stop, sizeof stop, "%s  max_steps: 9\n", common);
    run_train(write_sources_config("sources-whole", "0.5", common), NULL, 0);
    run_train(write_sources_config("sources-resumed", "0.5", stop), NULL, 0);
    run_train(write_sources_config("sources-resumed", "0.5", common), "--resume", 0);
    snprintf(ckpt_whole, sizeof ckpt_whole, "%s/sources-whole/model.safetensors.ckpt", temp_dir());
    snprintf(ckpt_resumed, sizeof ckpt_resumed, "%s/sources-resumed/model.safetensors.ckpt", temp_dir());
    assert_same_checkpoint(ckpt_whole, ckpt_resumed);
    /* another weight: another draw, so the checkpoint's position means nothing */
    char *err = run_train_args(write_sources_config("sources-resumed", "0.75", common),
                               (const char *[]){"--resume", NULL}, 2);
    expect_in(err, "the training data (train.sources) differs from the data it was written with");
    free(err);
}

/* Epochs past what max_steps reaches are not drawn to size the
 * activations: `epochs: 2000000000` with a weight that has a fraction
 * (each epoch its own draw) and max_steps 2 ran for hours, silent off a
 * terminal, before its first step. */
static void test_max_steps_bounds_the_epochs_drawn(void **state)
{
    (void)state;
    const char *config = write_sources_config("sources-many-epochs", "0.5",
                                              "  batch_tokens: 60\n  epochs: 2000000000\n  max_steps: 2\n");
    const char *argv[] = {"/usr/bin/timeout", "60", "./train", "-q", "-t", "1", config, NULL};
    RunResult r = run_program(argv, NULL, 0);
    if (r.status != 0) fail_msg("train exited %d (124: still drawing after 60 s):\n%s", r.status, r.err);
    run_result_free(&r);
    assert_true(file_exists(in_dir("sources-many-epochs", "model.safetensors")));
}

static void test_existing_checkpoint_needs_resume(void **state)
{
    (void)state;
    const char *config = write_config("again", "  batch_tokens: 1000\n  epochs: 1\n");
    run_train(config, NULL, 0);
    const char *argv[] = {"./train", "-q", config, NULL};
    RunResult r = run_program(argv, NULL, 0);
    assert_int_equal(r.status, 2);
    if (!strstr(r.err, "exists: continue with --resume")) fail_msg("unexpected message: %s", r.err);
    run_result_free(&r);
}

/* Each line of train's stderr is a message of its own: it starts with
 * "train: ", and no carriage return lets its end overwrite its start. */
static void expect_one_line_each(const char *err)
{
    if (strchr(err, '\r')) fail_msg("a raw CR in:\n%s", err);
    for (const char *line = err; *line;) {
        const char *end = strchr(line, '\n');
        if (strncmp(line, "train: ", 7) != 0 || !end) fail_msg("a message broken across lines in:\n%s", err);
        line = end + 1;
    }
}

/* A file name may hold a newline or a carriage return: the messages that
 * name it say it on one line, the character as a space (as translate's do,
 * cli_say), whether the run trains, refuses or resumes.  Raw, the "done"
 * and "exists" lines broke in two. */
static void test_names_with_line_breaks_are_said_on_one_line(void **state)
{
    (void)state;
    const char *config = write_config("line breaks", "  batch_tokens: 1000\n  epochs: 1\n");
    char out[700], said[700], linked[700];
    snprintf(out, sizeof out, "%s", in_dir("line breaks", "a\nb\rc.safetensors"));
    snprintf(said, sizeof said, "%s", in_dir("line breaks", "a b c.safetensors"));
    const char *flags[] = {"--out", out, NULL};
    char *err = run_train_args(config, flags, 0);
    expect_one_line_each(err);
    char want[800];
    snprintf(want, sizeof want, "; model in %s\n", said);
    expect_in(err, want);
    free(err);
    err = run_train_args(config, flags, 2); /* its checkpoint exists */
    expect_one_line_each(err);
    snprintf(want, sizeof want, "train: %s.ckpt exists: continue with --resume", said);
    expect_in(err, want);
    free(err);
    err = run_train_args(config, (const char *[]){"--out", out, "--resume", NULL}, 0);
    expect_one_line_each(err);
    snprintf(want, sizeof want, "train: resuming from %s.ckpt: all 1 epochs are done", said);
    expect_in(err, want);
    free(err);
    /* the config's own name, and an option's value */
    snprintf(linked, sizeof linked, "%s", in_dir("line breaks", "con\nfig\r.yaml"));
    assert_int_equal(symlink("config.yaml", linked), 0);
    err = run_train_args(linked, (const char *[]){"--simplify-table", "table.tsv", NULL}, 2);
    expect_one_line_each(err);
    expect_in(err, "con fig .yaml: no train.simplify_with to build the table from\n");
    free(err);
    err = run_train_args(config, (const char *[]){"--max-minutes", "1\r\n", NULL}, 2);
    assert_string_equal(err, "train: --max-minutes: expected a positive number of minutes, not '1  '\n");
    free(err);
    err = run_train_args(config, (const char *[]){"--max-steps", "1\n2", NULL}, 2);
    assert_string_equal(err, "train: --max-steps: expected a number from 1 to 2147483647, got '1 2'\n");
    free(err);
    err = run_train_args(config, (const char *[]){"--out\rx", NULL}, 2);
    assert_string_equal(err, "train: unknown option --out x (try 'train --help')\n");
    free(err);
}

/* Ctrl-C: the step under way finishes, a checkpoint is written, the exit
 * status is 130, and --resume carries on from there. */
static void test_interrupt_saves_a_checkpoint(void **state)
{
    (void)state;
    const char *config = write_config("interrupted", "  batch_tokens: 60\n  epochs: 100000\n  dropout: 0.1\n"
                                                     "  checkpoint_steps: 100000\n  eval_epochs: 100000\n");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 2);
        execl(test_program("./train"), "./train", "-q", "-t", "1", config, (char *)NULL);
        _exit(127);
    }
    usleep(1500 * 1000); /* long enough to be well into training */
    kill(pid, SIGINT);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 130);
    char ckpt[700];
    snprintf(ckpt, sizeof ckpt, "%s/interrupted/model.safetensors.ckpt", temp_dir());
    SafeFile f;
    Error err = {{0}};
    assert_int_equal(safetensors_open(ckpt, &f, &err), 0);
    long step = strtol(safetensors_meta(&f, "step"), NULL, 10);
    safetensors_close(&f);
    assert_true(step > 0);
    /* and it continues: one more short run to a max_steps just past it */
    char more[256];
    snprintf(more, sizeof more, "  batch_tokens: 60\n  epochs: 100000\n  dropout: 0.1\n  max_steps: %ld\n"
                                "  checkpoint_steps: 100000\n  eval_epochs: 100000\n", step + 3);
    run_train(write_config("interrupted", more), "--resume", 0);
    assert_int_equal(safetensors_open(ckpt, &f, &err), 0);
    assert_int_equal(strtol(safetensors_meta(&f, "step"), NULL, 10), step + 3);
    safetensors_close(&f);
}

/* A signal whose checkpoint cannot be saved (a file-size limit, ulimit -f,
 * as a full disk) says so and exits 4: "checkpoint saved ...; continue with
 * --resume" was printed whatever the save returned.  The limit's signal
 * (SIGXFSZ) is train's to ignore: it killed the run with no word. */
static void test_interrupt_whose_save_fails_says_so(void **state)
{
    (void)state;
    const char *config = write_config("interrupted-full", "  batch_tokens: 60\n  epochs: 100000\n"
                                                          "  checkpoint_steps: 100000\n  eval_epochs: 100000\n");
    /* an epoch long enough that the signal comes before its end's checkpoint */
    char data[700], line[800];
    snprintf(data, sizeof data, "%s", in_dir("interrupted-full", "long.tsv"));
    FILE *f = fopen(data, "w");
    assert_non_null(f);
    for (int i = 1; i <= 100000; i++) fprintf(f, "I have %d apples.\t我有%d个苹果。\n", i, i);
    assert_int_equal(fclose(f), 0);
    snprintf(line, sizeof line, "  train_data: long.tsv\n"); /* beside the config */
    replace_config_line(config, "  train_data:", line);
    free(run_train_args(config, (const char *[]){"--vocab", NULL}, 0));
    int err_pipe[2];
    assert_int_equal(pipe(err_pipe), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(err_pipe[1], 2);
        close(err_pipe[0]);
        close(err_pipe[1]);
        struct rlimit lim = {8192, 8192}; /* the log fits; the checkpoint does not */
        setrlimit(RLIMIT_FSIZE, &lim);
        execl(test_program("./train"), "./train", "-q", "-t", "1", config, (char *)NULL);
        _exit(127);
    }
    close(err_pipe[1]);
    /* into training: its log is opened just before the first step (an
     * epoch here takes seconds, and its end saves a checkpoint) */
    const char *log = in_dir("interrupted-full", "model.safetensors.log.csv");
    for (int waited = 0; access(log, F_OK) != 0 && waited < 600; waited++) usleep(50 * 1000);
    usleep(300 * 1000);
    kill(pid, SIGINT);
    char err[4096] = "";
    size_t len = 0;
    ssize_t n;
    while (len + 1 < sizeof err && (n = read(err_pipe[0], err + len, sizeof err - 1 - len)) > 0) len += (size_t)n;
    err[len] = '\0';
    close(err_pipe[0]);
    int status;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status)) fail_msg("killed by signal %d: %s", WTERMSIG(status), err);
    assert_int_equal(WEXITSTATUS(status), 4);
    expect_in(err, "model.safetensors.ckpt: cannot write: File too large");
    expect_in(err, "its checkpoint could not be saved: there is none to resume from");
    if (strstr(err, "checkpoint saved")) fail_msg("said saved: %s", err);
}

/* ./train -t 1 CONFIG, its stderr read until `cue` is in it, then sent
 * SIGINT; returns all it wrote on stderr (free it) once it has ended, after
 * failing unless it exited with status 130.  60 s for each wait. */
static char *interrupt_at(const char *config, const char *cue)
{
    int err_pipe[2];
    assert_int_equal(pipe(err_pipe), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(err_pipe[1], 2);
        close(err_pipe[0]);
        close(err_pipe[1]);
        signal(SIGINT, SIG_DFL); /* as from a terminal (run_tests.sh's background job ignores it) */
        execl(test_program("./train"), "./train", "-t", "1", config, (char *)NULL);
        _exit(127);
    }
    close(err_pipe[1]);
    size_t size = 1 << 16, len = 0;
    char *err = malloc(size);
    err[0] = '\0';
    bool sent = false;
    struct pollfd p = {err_pipe[0], POLLIN, 0};
    for (;;) {
        if (poll(&p, 1, 60 * 1000) != 1) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            fail_msg("train wrote nothing for 60 s (%s): %s", sent ? "after SIGINT" : "no cue", err);
        }
        ssize_t n = read(err_pipe[0], err + len, size - 1 - len);
        if (n <= 0) break;
        len += (size_t)n;
        err[len] = '\0';
        if (!sent && strstr(err, cue)) {
            kill(pid, SIGINT);
            sent = true;
        }
    }
    close(err_pipe[0]);
    int status;
    waitpid(pid, &status, 0);
    if (!sent) fail_msg("train ended before '%s': %s", cue, err);
    if (!WIFEXITED(status)) fail_msg("train died of signal %d with: %s", WTERMSIG(status), err);
    if (WEXITSTATUS(status) != 130) fail_msg("train exited %d, not 130: %s", WEXITSTATUS(status), err);
    return err;
}

/* Ctrl-C before the first step (here while the activations are sized: a
 * fractional weight and many epochs make it draw each epoch's batches, for
 * hours) stops the run there with a line that says what was saved, status
 * 130: it died of the signal, no word on stderr.  The vocabularies the run
 * has built are saved (whole: the next run uses them); nothing else is. */
static void test_interrupt_before_the_first_step_says_so(void **state)
{
    (void)state;
    const char *config = write_config("interrupted-early", "  batch_tokens: 60\n  epochs: 2000000000\n");
    char cwd[512], line[1200];
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(line, sizeof line, "  sources:\n    - path: %s/tests/data/tiny.tsv\n      weight: 0.5\n", cwd);
    replace_config_line(config, "  train_data:", line);
    char want[2000];
    snprintf(want, sizeof want, "\ntrain: interrupted before the first step: the vocabularies were saved (%s, %s), "
                                "nothing else\n", in_dir("interrupted-early", "src.vocab"),
             in_dir("interrupted-early", "tgt.vocab"));
    const char *cue = "sizing the activations";
    for (int run = 0; run < 2; run++) { /* the second with the vocabularies the first built */
        char *err = interrupt_at(config, cue);
        const char *said = run == 0 ? want : "\ntrain: interrupted before the first step: nothing was saved\n";
        size_t n = strlen(err), m = strlen(said);
        if (n < m || strcmp(err + n - m, said) != 0) fail_msg("expected it to end with '%s':\n%s", said + 1, err);
        free(err);
        assert_true(file_exists(in_dir("interrupted-early", "src.vocab")));
        assert_true(file_exists(in_dir("interrupted-early", "tgt.vocab")));
        const char *none[] = {"model.safetensors", "model.safetensors.ckpt", "model.safetensors.log.csv"};
        for (size_t k = 0; k < sizeof none / sizeof none[0]; k++)
            if (file_exists(in_dir("interrupted-early", none[k]))) fail_msg("%s was written", none[k]);
    }
}

/* translate with a training config not yet trained names the config and
 * says what writes the missing file. */
static void test_translate_before_training_says_so(void **state)
{
    (void)state;
    const char *config = write_config("untrained", "");
    RunResult r = run_program((const char *[]){"./translate", "-c", config, "hello", NULL}, NULL, 0);
    assert_int_equal(r.status, 3);
    expect_in(r.err, "untrained/config.yaml: ");
    expect_in(r.err, "src.vocab: cannot open");
    expect_in(r.err, "(not trained yet? ./train ");
    run_result_free(&r);
    /* one whose scores were measured was trained: its file went missing */
    FILE *f = fopen(config, "a");
    fputs("scores:\n  eval_data: x.tsv\n  bleu: 12.5\n  chrf2: 30\n", f);
    fclose(f);
    r = run_program((const char *[]){"./translate", "-c", config, "hello", NULL}, NULL, 0);
    assert_int_equal(r.status, 3);
    expect_in(r.err, "src.vocab: cannot open");
    expect_not_in(r.err, "not trained yet");
    run_result_free(&r);
}

/* Until train (process pid) is into training, its handlers set and its
 * first messages written: the log's first step row (log_steps 50 in the
 * test below: 0.1 s natively and 3 s under qemu-aarch64 on an AMD EPYC,
 * Zen 3, where the tiny configs' 1000 took 57 s, and 60 s or more on a
 * busier host), not a guess at how long start-up takes.  If it never
 * comes, train is killed before the test fails, so that it does not go on
 * training beside the rest of the suite (one did for over 20 minutes). */
static void wait_for_a_step_row(const char *log, pid_t pid)
{
    for (int waited = 0; waited < 60000; waited += 20) {
        size_t len;
        char *text = read_file(log, &len);
        bool stepping = text && strstr(text, "\nstep,");
        free(text);
        if (stepping) return;
        if (waitpid(pid, NULL, WNOHANG) == pid) fail_msg("train ended before training");
        usleep(20 * 1000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    fail_msg("no step row in %s within 60 s", log);
}

/* A reader of train's stderr that went away (`2>&1 | head`) costs the
 * messages, not the run (SIGPIPE killed it, possibly between its model and
 * its checkpoint); a closed terminal (SIGHUP) stops it as Ctrl-C does. */
static void test_hangup_and_a_gone_reader_keep_the_run(void **state)
{
    (void)state;
    const char *config = write_config("hangup", "  batch_tokens: 60\n  epochs: 100000\n  dropout: 0.1\n"
                                                "  checkpoint_steps: 100000\n  eval_epochs: 100000\n");
    replace_config_line(config, "  log_steps: 1000\n", "  log_steps: 50\n");
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    close(fds[0]); /* the reader is gone before the first message */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        signal(SIGPIPE, SIG_DFL);
        signal(SIGHUP, SIG_DFL); /* were the tests run under nohup */
        execl(test_program("./train"), "./train", "-t", "1", config, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    const char *log = in_dir("hangup", "model.safetensors.log.csv");
    wait_for_a_step_row(log, pid);
    kill(pid, SIGHUP);
    int status;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status)) fail_msg("train died of signal %d", WTERMSIG(status));
    assert_int_equal(WEXITSTATUS(status), 130);
    char ckpt[700];
    snprintf(ckpt, sizeof ckpt, "%s/hangup/model.safetensors.ckpt", temp_dir());
    SafeFile f;
    Error err = {{0}};
    assert_int_equal(safetensors_open(ckpt, &f, &err), 0);
    assert_true(strtol(safetensors_meta(&f, "step"), NULL, 10) > 0);
    safetensors_close(&f);
    /* Under nohup (SIGHUP ignored by the caller) it goes on; Ctrl-C stops it. */
    remove(ckpt);
    remove(in_dir("hangup", "model.safetensors.log.csv"));
    remove(in_dir("hangup", "model.safetensors"));
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 2);
        signal(SIGHUP, SIG_IGN);
        execl(test_program("./train"), "./train", "-t", "1", config, (char *)NULL);
        _exit(127);
    }
    wait_for_a_step_row(log, pid);
    kill(pid, SIGHUP);
    usleep(300 * 1000);
    assert_int_equal(waitpid(pid, &status, WNOHANG), 0); /* still training */
    kill(pid, SIGINT);
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 130);
}

/* Standard error closed by the caller (`2>&-`) is never the log's
 * descriptor: train's messages went into the CSV log, 33 lines of them.
 * And --help to a full disk is a write error, not status 0. */
static void test_closed_stderr_stays_out_of_the_log(void **state)
{
    (void)state;
    const char *config = write_config("closed-stderr", "  batch_tokens: 1000\n  epochs: 1\n");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(2);
        execl(test_program("./train"), "./train", "-t", "1", config, (char *)NULL);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    size_t len;
    char *log = read_file(in_dir("closed-stderr", "model.safetensors.log.csv"), &len);
    assert_non_null(log);
    assert_null(strstr(log, "train:"));
    assert_int_equal(strncmp(log, "event,step,", 11), 0);
    free(log);
    if (access("/dev/full", W_OK) == 0) {
        RunResult r = run_program((const char *[]){"./train", "--help", NULL}, NULL, 0);
        run_result_free(&r);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            int full = open("/dev/full", O_WRONLY);
            dup2(full, 1);
            execl(test_program("./train"), "./train", "--help", (char *)NULL);
            _exit(127);
        }
        waitpid(pid, &status, 0);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 4);
    }
}

/* A weights file train did not write (here: bytes standing for a trained
 * model) is never replaced: train refuses before training, status 2, and
 * the file is byte for byte what it was.  --overwrite replaces it; --out
 * trains into another file, with the checkpoint and the log beside it. */
static void test_existing_weights_are_not_replaced(void **state)
{
    (void)state;
    const char *settings = "  batch_tokens: 1000\n  epochs: 1\n";
    const char *config = write_config("guard", settings);
    static const char precious[] = "a trained model that took 56 minutes";
    char weights[700], out[700];
    snprintf(weights, sizeof weights, "%s", in_dir("guard", "model.safetensors"));
    FILE *f = fopen(weights, "wb");
    assert_non_null(f);
    fputs(precious, f);
    assert_int_equal(fclose(f), 0);

    char *err = run_train_args(config, NULL, 2);
    if (!strstr(err, "model.safetensors exists and is not a model"))
        fail_msg("unexpected message: %s", err);
    free(err);
    size_t len;
    char *now = read_file(weights, &len);
    assert_int_equal(len, strlen(precious));
    assert_memory_equal(now, precious, len);
    free(now);
    assert_false(file_exists(in_dir("guard", "model.safetensors.ckpt"))); /* nothing started */

    /* --out: a new file, and the checkpoint and log go beside it */
    snprintf(out, sizeof out, "%s", in_dir("guard", "mine.safetensors"));
    const char *out_flags[] = {"--out", out, NULL};
    free(run_train_args(config, out_flags, 0));
    assert_true(file_exists(out));
    assert_true(file_exists(in_dir("guard", "mine.safetensors.ckpt")));
    assert_true(file_exists(in_dir("guard", "mine.safetensors.log.csv")));
    const char *out_resume[] = {"--out", out, "--resume", NULL}; /* its own lineage: fine */
    free(run_train_args(config, out_resume, 0));
    now = read_file(weights, &len);
    assert_memory_equal(now, precious, strlen(precious));
    free(now);
    /* --out naming a file this run did not write is refused just the same */
    const char *onto_flags[] = {"--out", weights, NULL};
    free(run_train_args(config, onto_flags, 2));
    now = read_file(weights, &len);
    assert_memory_equal(now, precious, strlen(precious));
    free(now);

    /* --overwrite replaces only a model: not this text (nor data or a
     * config named as the weights by mistake) */
    const char *over[] = {"--overwrite", NULL};
    err = run_train_args(config, over, 2);
    expect_in(err, "model.safetensors exists and is not a model (no safetensors file");
    free(err);
    now = read_file(weights, &len);
    assert_memory_equal(now, precious, strlen(precious));
    free(now);
    /* another run's model: replaced, by one translate can load */
    size_t model_len;
    char *model = read_file(out, &model_len);
    f = fopen(weights, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(model, 1, model_len, f), model_len);
    assert_int_equal(fclose(f), 0);
    free(model);
    free(run_train_args(config, over, 0));
    const char *argv[] = {"./translate", "-q", "-c", config, "a", NULL};
    RunResult r = run_program(argv, NULL, 0);
    if (r.status != 0) fail_msg("translate after --overwrite exited %d: %s", r.status, r.err);
    run_result_free(&r);
    /* a model cut short is still a model: --overwrite replaces it */
    model = read_file(weights, &model_len);
    f = fopen(weights, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(model, 1, 200, f), 200);
    assert_int_equal(fclose(f), 0);
    free(model);
    assert_int_equal(unlink(in_dir("guard", "model.safetensors.ckpt")), 0); /* else "exists: --resume" */
    free(run_train_args(config, over, 0));
    r = run_program(argv, NULL, 0);
    if (r.status != 0) fail_msg("translate after --overwrite of a cut model exited %d: %s", r.status, r.err);
    run_result_free(&r);
    /* made read-only (chmod a-w): refused before training, not at the
     * first save after an epoch, and kept; a file that cannot be written,
     * status 4 (it was 2, a usage error, where a read-only checkpoint's
     * is 4: test_unwritable_checkpoint_is_found_before_training) */
    assert_int_equal(chmod(weights, 0444), 0);
    char *kept = read_file(weights, &model_len);
    assert_int_equal(unlink(in_dir("guard", "model.safetensors.ckpt")), 0); /* else "exists: --resume" */
    err = run_train_args(config, over, 4);
    expect_in(err, "model.safetensors: cannot write: the file is read-only");
    expect_not_in(err, "epoch");
    free(err);
    assert_false(file_exists(in_dir("guard", "model.safetensors.ckpt"))); /* nothing started */
    size_t kept_len;
    now = read_file(weights, &kept_len);
    assert_int_equal(kept_len, model_len);
    assert_memory_equal(now, kept, kept_len);
    free(now);
    free(kept);
    assert_int_equal(chmod(weights, 0644), 0);
    /* another run's checkpoint named as the weights is no model either:
     * --overwrite replaced it, that run's resumable state lost */
    char ckpt[700];
    snprintf(ckpt, sizeof ckpt, "%s", in_dir("guard", "mine.safetensors.ckpt"));
    kept = read_file(ckpt, &model_len);
    assert_non_null(kept);
    err = run_train_args(config, (const char *[]){"--overwrite", "--out", ckpt, NULL}, 2);
    expect_in(err, "is not a model (no safetensors file, or a checkpoint");
    free(err);
    now = read_file(ckpt, &kept_len);
    assert_int_equal(kept_len, model_len);
    assert_memory_equal(now, kept, kept_len);
    free(now);
    free(kept);
}

/* A resumed run may replace the model its own lineage wrote, but not a
 * file that was put there since. */
static void test_resume_refuses_a_foreign_model(void **state)
{
    (void)state;
    const char *config = write_config("lineage", "  batch_tokens: 60\n  epochs: 3\n  max_steps: 3\n");
    run_train(config, NULL, 0); /* writes the model at max_steps, and a checkpoint */
    char weights[700];
    snprintf(weights, sizeof weights, "%s", in_dir("lineage", "model.safetensors"));
    assert_true(file_exists(weights));
    run_train(write_config("lineage", "  batch_tokens: 60\n  epochs: 3\n  max_steps: 6\n"), "--resume", 0);
    /* another run's model in its place */
    const char *theirs = write_config("lineage-other", "  batch_tokens: 60\n  epochs: 1\n  max_steps: 2\n");
    run_train(theirs, NULL, 0);
    assert_int_equal(rename(in_dir("lineage-other", "model.safetensors"), weights), 0);
    size_t before_len, after_len;
    char *before = read_file(weights, &before_len);
    config = write_config("lineage", "  batch_tokens: 60\n  epochs: 3\n  max_steps: 9\n");
    char *err = run_train_args(config, (const char *[]){"--resume", NULL}, 2);
    if (!strstr(err, "was not written by this training run")) fail_msg("unexpected message: %s", err);
    free(err);
    char *after = read_file(weights, &after_len);
    assert_int_equal(before_len, after_len);
    assert_memory_equal(before, after, before_len);
    free(before);
    free(after);
    free(run_train_args(config, (const char *[]){"--resume", "--overwrite", NULL}, 0));
}

/* The __metadata__ value `key` of a safetensors file ("" when absent), new. */
static char *model_meta(const char *path, const char *key)
{
    SafeFile f;
    Error err = {{0}};
    if (safetensors_open(path, &f, &err)) fail_msg("%s", err.message);
    const char *v = safetensors_meta(&f, key);
    char *copy = strdup(v ? v : "");
    safetensors_close(&f);
    return copy;
}

/* --init starts from the weights given: at a learning rate of almost 0 the
 * first dev loss is the given model's, not a random one's.  A model of
 * another shape is refused (3), and so is --init with --resume (2). */
static void test_init_starts_from_given_weights(void **state)
{
    (void)state;
    const char *base = write_config("init-base", "  batch_tokens: 60\n  learning_rate: 0.003\n  warmup_steps: 0\n"
                                                 "  epochs: 1\n  max_steps: 6\n");
    char *base_err = run_train_args(base, NULL, 0);
    const char *loss = strstr(base_err, "dev loss ");
    assert_non_null(loss);
    char base_loss[32];
    snprintf(base_loss, sizeof base_loss, "%.15s", loss); /* "dev loss 4.1234" */
    char given[700];
    snprintf(given, sizeof given, "%s", in_dir("init-base", "model.safetensors"));

    const char *tuned = write_config("init-tuned", "  batch_tokens: 60\n  learning_rate: 0.0000001\n"
                                                   "  warmup_steps: 0\n  epochs: 1\n  max_steps: 1\n");
    char *err = run_train_args(tuned, (const char *[]){"--init", given, NULL}, 0);
    expect_in(err, "starting from the weights in");
    expect_in(err, base_loss);
    free(err);
    /* the model and the checkpoint name the run the start came from, and a
     * --resume keeps naming it */
    char base_run[32], *meta;
    meta = model_meta(given, "train_run");
    snprintf(base_run, sizeof base_run, "%s", meta);
    free(meta);
    assert_int_equal(strlen(base_run), 16);
    meta = model_meta(in_dir("init-tuned", "model.safetensors"), "train_init");
    assert_string_equal(meta, base_run);
    free(meta);
    meta = model_meta(in_dir("init-tuned", "model.safetensors.ckpt"), "init_run");
    assert_string_equal(meta, base_run);
    free(meta);
    free(run_train_args(write_config("init-tuned", "  batch_tokens: 60\n  learning_rate: 0.0000001\n"
                                                   "  warmup_steps: 0\n  epochs: 1\n  max_steps: 2\n"),
                        (const char *[]){"--resume", NULL}, 0));
    meta = model_meta(in_dir("init-tuned", "model.safetensors.ckpt"), "step");
    assert_string_equal(meta, "2"); /* the checkpoint the resumed run wrote ... */
    free(meta);
    meta = model_meta(in_dir("init-tuned", "model.safetensors.ckpt"), "init_run");
    assert_string_equal(meta, base_run); /* ... still names the start */
    free(meta);
    const char *fresh = write_config("init-fresh", "  batch_tokens: 60\n  learning_rate: 0.0000001\n"
                                                   "  warmup_steps: 0\n  epochs: 1\n  max_steps: 1\n");
    err = run_train_args(fresh, NULL, 0);
    assert_null(strstr(err, base_loss)); /* without --init: a random model's loss */
    free(err);
    free(base_err);

    /* weights that load, then a dev set that does not: status 3, and the
     * model loaded first is freed on that path too (the ASan build checks) */
    const char *nodata = write_config("init-nodata", "  batch_tokens: 60\n  epochs: 1\n  max_steps: 1\n");
    replace_config_line(nodata, "  dev_data: ", "  dev_data: missing.tsv\n");
    err = run_train_args(nodata, (const char *[]){"--init", given, NULL}, 3);
    expect_in(err, "starting from the weights in");
    expect_in(err, "missing.tsv");
    free(err);

    /* the tiny config with d_ff 64 → 32: the tensors disagree */
    replace_config_line(tuned, "  d_ff: 64\n", "  d_ff: 32\n");
    remove(in_dir("init-tuned", "model.safetensors.ckpt"));
    remove(in_dir("init-tuned", "model.safetensors"));
    err = run_train_args(tuned, (const char *[]){"--init", given, NULL}, 3);
    expect_in(err, "train: --init: ");
    expect_in(err, given);
    assert_null(strstr(err, " pairs from ")); /* refused before reading the data, not after */
    free(err);
    err = run_train_args(tuned, (const char *[]){"--init", in_dir("init-base", "missing.safetensors"), NULL}, 3);
    expect_in(err, "missing.safetensors");
    free(err);
    err = run_train_args(tuned, (const char *[]){"--init", given, "--resume", NULL}, 2);
    expect_in(err, "--init WEIGHTS starts a new run");
    free(err);
}

/* Options that could not act as given are refused, status 2, before any
 * data is read: a time limit of 0 minutes, --init or --overwrite with
 * --export (which trains nothing), an empty --out (ignored, it trained
 * into the config's own weights path) or any other empty file name (said
 * as a wrong combination of options). */
static void test_options_that_cannot_act_are_refused(void **state)
{
    (void)state;
    const char *config = write_config("refused", "  batch_tokens: 60\n  epochs: 1\n");
    const char *dir = in_dir("refused", "export");
    const struct {
        const char *args[5], *want;
    } cases[] = {
        {{"--max-minutes", "0"}, "--max-minutes: expected a positive number of minutes, not '0'"},
        /* kept as a float: 1e-300 became 0, no limit at all */
        {{"--max-minutes", "1e-300"}, "--max-minutes: 1e-300 is too small"},
        {{"--init", "x.safetensors", "--export", dir}, "--init WEIGHTS starts a new run"},
        {{"--export", dir, "--overwrite"}, "--export DIR goes alone"},
        {{"--out", ""}, "train: --out: expected a file name, not ''"},
        /* each file option: the empty name said as such, not as a wrong combination */
        {{"--init", ""}, "train: --init: expected a file name, not ''"},
        {{"--export", ""}, "train: --export: expected a folder name, not ''"},
        {{"--simplify-table", ""}, "train: --simplify-table: expected a file name, not ''"},
        {{"--vocab", "--data", ""}, "train: --data: expected a file name, not ''"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *err = run_train_args(config, cases[i].args, 2);
        expect_in(err, cases[i].want);
        assert_null(strstr(err, " pairs from ")); /* before reading the data */
        free(err);
    }
    assert_false(file_exists(dir));
    assert_false(file_exists(in_dir("refused", "model.safetensors")));
}

/* What a run records and says: the last epoch is scored even when
 * eval_epochs does not divide the epochs (5 epochs, every 2nd: epoch 5's
 * weights were never scored), the average of the last 2 epochs is a
 * score (from 2 snapshots, not 3) and only at a scored epoch (epoch 3 printed
 * and logged "average ...: BLEU nan"), a resumed run whose log was removed
 * starts the new log with its header, and dev pairs left out of the dev
 * loss are said. */
static void test_what_a_run_records_and_says(void **state)
{
    (void)state;
    const char *config = write_config("records", "  batch_tokens: 60\n  epochs: 5\n  eval_epochs: 2\n"
                                                 "  average_last: 2\n");
    char *said = run_train_args(config, NULL, 0);
    /* and each line said: epochs 1 and 3, unscored, say no average */
    expect_in(said, "train: epoch 4: dev loss ");
    expect_in(said, "; average of last 2 epochs: BLEU ");
    expect_not_in(said, "nan");
    free(said);
    char *log = read_file(in_dir("records", "model.safetensors.log.csv"), NULL);
    assert_non_null(log);
    /* each scored row: its dev BLEU and chrF2 are numbers, not nan */
    int last = 0, averages = 0;
    for (const char *p = log; (p = strchr(p, '\n')) && p[1]; p++) {
        char row[256];
        snprintf(row, sizeof row, "%.*s", (int)strcspn(p + 1, "\n"), p + 1);
        bool average = strncmp(row, "eval_average,", 13) == 0;
        if (strncmp(row, "eval,20,5,", 10) != 0 && !average) continue;
        if (!strstr(row, ",0.000,0.000,")) fail_msg("a scored row without its scores: %s", row);
        last += !average;
        averages += average;
    }
    assert_int_equal(last, 1);
    assert_int_equal(averages, 3); /* epochs 2, 4 and 5 */
    free(log);
    /* --resume with the log removed: a new log, header first */
    remove(in_dir("records", "model.safetensors.log.csv"));
    replace_config_line(config, "  epochs: 5\n", "  epochs: 6\n");
    free(run_train_args(config, (const char *[]){"--resume", NULL}, 0));
    log = read_file(in_dir("records", "model.safetensors.log.csv"), NULL);
    assert_non_null(log);
    assert_true(strncmp(log, "event,step,epoch,", 17) == 0);
    free(log);
    /* the dev set with a pair over max_len (32 tokens) */
    size_t len;
    char *tiny = read_file("tests/data/tiny.tsv", &len), *with_long = malloc(len + 512), dev[700];
    strcpy(with_long, tiny);
    for (int i = 0; i < 40; i++) strcat(with_long, "word ");
    strcat(with_long, "\t\xE5\xAD\x97\n");
    free(tiny);
    const char *noted = write_config("records-dev", "  batch_tokens: 60\n  epochs: 1\n  max_steps: 1\n");
    write_text(in_dir("records-dev", "dev-long.tsv"), with_long);
    free(with_long);
    snprintf(dev, sizeof dev, "  dev_data: dev-long.tsv\n");
    replace_config_line(noted, "  dev_data: ", dev);
    RunResult r = run_program((const char *[]){"./train", "-t", "1", noted, NULL}, NULL, 0);
    if (r.status != 0) fail_msg("status %d: %s", r.status, r.err);
    expect_in(r.err, "dev 17 pairs (1 not usable: invalid text or longer than max_len");
    run_result_free(&r);
    /* a vocabulary saved with a BOM (vocab_load reads it) is a vocabulary
     * --vocab --overwrite may replace */
    char *vocab = read_file(in_dir("records-dev", "src.vocab"), &len), *bom = malloc(len + 4);
    memcpy(bom, "\xEF\xBB\xBF", 3);
    memcpy(bom + 3, vocab, len);
    bom[len + 3] = '\0';
    write_text(in_dir("records-dev", "src.vocab"), bom);
    free(vocab);
    free(bom);
    free(run_train_args(noted, (const char *[]){"--vocab", "--overwrite", NULL}, 0));
}

/* The tiny config in `dir` with its vocabularies built, and src.vocab
 * then changed as a rebuild would undo: its path in *path, and its
 * contents (free them) and length. */
static char *vocabularies_changed(const char *dir, const char **config, const char **path, size_t *len)
{
    *config = write_config(dir, "  epochs: 1\n");
    free(run_train_args(*config, (const char *[]){"--vocab", NULL}, 0));
    *path = in_dir(dir, "src.vocab");
    FILE *f = fopen(*path, "a");
    assert_non_null(f);
    fputs("zzz\tzzz\t1\n", f);
    assert_int_equal(fclose(f), 0);
    return read_file(*path, len);
}

/* Vocabulary files that exist are not replaced without --overwrite (a
 * model trained with them would no longer load): status 2, files as they
 * were; with --overwrite they are rebuilt. */
static void test_vocab_keeps_existing_vocabularies(void **state)
{
    (void)state;
    const char *config, *path;
    size_t before_len, after_len;
    char *before = vocabularies_changed("vocab-kept", &config, &path, &before_len);
    char *err = run_train_args(config, (const char *[]){"--vocab", NULL}, 2);
    expect_in(err, "src.vocab exists: building the vocabularies would replace it");
    free(err);
    char *after = read_file(path, &after_len);
    assert_int_equal(before_len, after_len);
    assert_memory_equal(before, after, before_len);
    free(after);
    /* one file missing: building both would replace the other, and a
     * training run's --overwrite (meant for the weights) does not */
    assert_int_equal(remove(in_dir("vocab-kept", "tgt.vocab")), 0);
    for (int overwrite = 0; overwrite < 2; overwrite++) {
        err = run_train_args(config, (const char *[]){overwrite ? "--overwrite" : NULL, NULL}, 2);
        expect_in(err, "tgt.vocab is missing but ");
        expect_in(err, "src.vocab exists");
        free(err);
    }
    free(run_train_args(config, (const char *[]){"--vocab", "--overwrite", NULL}, 0));
    after = read_file(path, &after_len);
    assert_true(after_len != before_len);
    free(after);
    free(before);
}

/* The two vocabularies are replaced together or not at all: a target that
 * cannot be written (/dev/full) leaves the source one as it was.  The
 * source was replaced first, and every model trained with the old pair
 * no longer loaded. */
static void test_vocab_pair_is_replaced_together(void **state)
{
    (void)state;
    const char *config, *src;
    size_t before_len, after_len;
    char *before = vocabularies_changed("vocab-pair", &config, &src, &before_len);
    /* the second file cannot be written: /proc takes no new file, even
     * from root (/dev/full did this before a vocabulary had to be a
     * regular file) */
    replace_config_line(config, "  target_vocab:", "  target_vocab: /proc/tgt.vocab\n");
    char *err = run_train_args(config, (const char *[]){"--vocab", "--overwrite", NULL}, 4);
    expect_in(err, "/proc/tgt.vocab: cannot write: ");
    expect_in(err, "(neither vocabulary was replaced)");
    free(err);
    char *after = read_file(src, &after_len);
    assert_int_equal(before_len, after_len);
    assert_memory_equal(before, after, before_len);
    free(before);
    free(after);
    char dir[700];
    snprintf(dir, sizeof dir, "%s/vocab-pair", temp_dir());
    DIR *d = opendir(dir); /* and no temporary file of it is left */
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));)
        if (strncmp(e->d_name, ".src.vocab.", 11) == 0) fail_msg("left behind: %s", e->d_name);
    closedir(d);
}

/* The log is written in place, so it is checked: a file that is not a
 * training log is never replaced, whatever --overwrite says; an earlier
 * run's log, its checkpoint and model gone (a run killed before its first
 * checkpoint), is. */
static void test_the_log_replaces_only_a_log(void **state)
{
    (void)state;
    const char *config = write_config("log-guard", "  epochs: 1\n  log: kept.safetensors\n");
    const char *kept = in_dir("log-guard", "kept.safetensors");
    write_text(kept, "precious"); /* a model someone keeps, named by mistake */
    for (int overwrite = 0; overwrite < 2; overwrite++) {
        char *err = run_train_args(config, (const char *[]){overwrite ? "--overwrite" : NULL, NULL}, 2);
        expect_in(err, "kept.safetensors (the log) exists and is not a training log");
        free(err);
        expect_file_is(kept, "precious");
        assert_false(file_exists(in_dir("log-guard", "model.safetensors")));
    }
    /* an earlier run's log, its model and checkpoint deleted */
    const char *again = write_config("log-again", "  epochs: 1\n");
    run_train(again, NULL, 0);
    assert_int_equal(remove(in_dir("log-again", "model.safetensors")), 0);
    assert_int_equal(remove(in_dir("log-again", "model.safetensors.ckpt")), 0);
    run_train(again, NULL, 0);
    /* but another run's log, its checkpoint beside it, named as this run's
     * train.log: refused, not emptied (its run's --resume had then logged
     * after this run's rows) */
    char *theirs = realpath(in_dir("log-again", "model.safetensors.log.csv"), NULL);
    assert_non_null(theirs);
    size_t before_len, after_len;
    char *before = read_file(theirs, &before_len);
    char extra[900];
    snprintf(extra, sizeof extra, "  epochs: 1\n  log: %s\n", theirs);
    char *err = run_train_args(write_config("log-theirs", extra), NULL, 2);
    expect_in(err, "(the log) is the log of the run whose checkpoint is");
    free(err);
    char *after = read_file(theirs, &after_len);
    assert_int_equal(after_len, before_len);
    assert_memory_equal(after, before, before_len);
    free(after);
    free(before);
    free(theirs);
}

/* A run holds a lock on its log: a second run into the same files is
 * refused before it writes anything. */
static void test_a_second_run_into_the_same_files_is_refused(void **state)
{
    (void)state;
    const char *config = write_config("locked", "  epochs: 1\n");
    const char *log = in_dir("locked", "model.safetensors.log.csv");
    int fd = open(log, O_RDWR | O_CREAT, 0644);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX), 0); /* as a run going on would */
    char *err = run_train_args(config, NULL, 2);
    expect_in(err, "(the log) is locked by a training run still going");
    free(err);
    assert_false(file_exists(in_dir("locked", "model.safetensors")));
    assert_false(file_exists(in_dir("locked", "model.safetensors.ckpt")));
    close(fd); /* the lock goes with it */
    run_train(config, NULL, 0);
}

/* Building the vocabularies writes two files: one file named for both is
 * refused, and --overwrite replaces only vocabularies. */
static void test_vocab_building_refuses_what_it_would_destroy(void **state)
{
    (void)state;
    const char *config = write_config("vocab-one-file", "  epochs: 1\n");
    replace_config_line(config, "  target_vocab:", "  target_vocab: src.vocab\n");
    char *err = run_train_args(config, (const char *[]){"--vocab", "--overwrite", NULL}, 2);
    expect_in(err, "source_vocab and target_vocab are the same file");
    free(err);
    assert_false(file_exists(in_dir("vocab-one-file", "src.vocab")));

    config = write_config("vocab-not-one", "  epochs: 1\n");
    replace_config_line(config, "  source_vocab:", "  source_vocab: kept.safetensors\n");
    const char *kept = in_dir("vocab-not-one", "kept.safetensors");
    write_text(kept, "precious"); /* a model someone keeps, named by mistake */
    err = run_train_args(config, (const char *[]){"--vocab", "--overwrite", NULL}, 2);
    expect_in(err, "kept.safetensors exists and is not a vocabulary");
    free(err);
    expect_file_is(kept, "precious");

    /* a device or a FIFO: no reader takes one (/dev/null took the source
     * vocabulary, status 0, and the target one was replaced alone; a FIFO
     * blocked until Ctrl-C) */
    config = write_config("vocab-device", "  epochs: 1\n");
    const char *fifo = in_dir("vocab-device", "fifo.vocab");
    assert_int_equal(mkfifo(fifo, 0644), 0);
    const char *lines[] = {"  source_vocab: /dev/null\n", "  source_vocab: fifo.vocab\n"};
    for (int i = 0; i < 2; i++) {
        replace_config_line(config, "  source_vocab:", lines[i]);
        err = run_train_args(config, (const char *[]){"--vocab", "--overwrite", NULL}, 2);
        expect_in(err, i ? "fifo.vocab is not a regular file (a FIFO)" : "/dev/null is not a regular file");
        free(err);
        assert_false(file_exists(in_dir("vocab-device", "tgt.vocab")));
    }
}

/* A resumed run writes the model only when it beats the best dev BLEU so
 * far; when that model has been removed, the next evaluation writes one
 * (here the same score: without the reset, none would be written and the
 * run would end naming a file that is not there). */
static void test_resume_without_its_model_writes_one(void **state)
{
    (void)state;
    const char *config = write_config("resume-no-model", "  epochs: 3\n  max_steps: 2\n  batch_tokens: 60\n");
    run_train(config, NULL, 0);
    assert_int_equal(remove(in_dir("resume-no-model", "model.safetensors")), 0);
    char *err = run_train_args(config, (const char *[]){"--resume", NULL}, 0);
    expect_in(err, "model.safetensors: the model written at dev BLEU ");
    expect_in(err, "is gone: the next evaluation writes one");
    free(err);
    assert_true(file_exists(in_dir("resume-no-model", "model.safetensors")));
}

/* A weights path that names a folder (status 2), or lies under a file (4:
 * it cannot be written). */
static void test_weights_path_that_cannot_be_a_file(void **state)
{
    (void)state;
    const char *config = write_config("folder-out", "  epochs: 1\n");
    char out[700];
    snprintf(out, sizeof out, "%s/", in_dir("folder-out", "zz"));
    char *err = run_train_args(config, (const char *[]){"--out", out, NULL}, 2);
    expect_in(err, "names a folder: the weights need a file name");
    free(err);
    assert_false(file_exists(in_dir("folder-out", "zz")));
    snprintf(out, sizeof out, "%s/model.safetensors", config); /* under config.yaml, a file: */
    err = run_train_args(config, (const char *[]){"--out", out, NULL}, 4); /* as for the checkpoint */
    expect_in(err, "cannot write the weights there: Not a directory");
    free(err);
    /* a folder, a link to nothing and a FIFO: refused before training,
     * --overwrite or not, and no log left beside them (a FIFO blocked the
     * first save in open(2), past SIGTERM, the training lost) */
    const char *dir = in_dir("folder-out", "dir"), *link = in_dir("folder-out", "dangling");
    const char *fifo = in_dir("folder-out", "fifo.safetensors");
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(symlink("nowhere/model.safetensors", link), 0);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    const char *paths[] = {dir, link, fifo}, *whats[] = {"is a folder", "is a link to nothing", "(a FIFO)"};
    for (int i = 0; i < 3; i++) {
        snprintf(out, sizeof out, "%s", paths[i]);
        err = run_train_args(config, (const char *[]){"--overwrite", "--out", out, NULL}, 2);
        expect_in(err, whats[i]);
        free(err);
        snprintf(out, sizeof out, "%s.log.csv", paths[i]);
        assert_false(file_exists(out));
    }
}

/* The checkpoint's path is tried before training (a temporary file made
 * and removed beside it): a name longer than the folder takes, or a folder
 * that takes no new file, was found at the first save, after
 * checkpoint_steps steps of training and a model written. */
static void test_unwritable_checkpoint_is_found_before_training(void **state)
{
    (void)state;
    char name[257], extra[400];
    memset(name, 'c', 256);
    name[256] = '\0';
    const char *paths[] = {name, "/proc/self/x.ckpt"};
    const char *whats[] = {"File name too long", "cannot write"};
    for (int i = 0; i < 2; i++) {
        snprintf(extra, sizeof extra, "  epochs: 1\n  checkpoint_steps: 2\n  checkpoint: %s\n", paths[i]);
        const char *config = write_config(i ? "ckpt-proc" : "ckpt-long", extra);
        char *err = run_train_args(config, (const char *[]){"--max-steps", "4", NULL}, 4);
        expect_in(err, whats[i]);
        if (strstr(err, "dev loss")) fail_msg("trained before finding the checkpoint unwritable:\n%s", err);
        free(err);
        assert_false(file_exists(in_dir(i ? "ckpt-proc" : "ckpt-long", "model.safetensors")));
    }
    /* a read-only checkpoint (chmod a-w), resumed: the same status as a
     * read-only weights file (test_existing_weights_are_not_replaced) */
    const char *config = write_config("ckpt-read-only", "  epochs: 2\n");
    run_train(config, "--vocab", 0);
    free(run_train_args(config, (const char *[]){"--max-steps", "1", NULL}, 0));
    const char *ckpt = in_dir("ckpt-read-only", "model.safetensors.ckpt");
    assert_int_equal(chmod(ckpt, 0444), 0);
    char *err = run_train_args(config, (const char *[]){"--resume", "--max-steps", "2", NULL}, 4);
    expect_in(err, "model.safetensors.ckpt: cannot write: the file is read-only");
    free(err);
    assert_int_equal(chmod(ckpt, 0644), 0);
}

/* The tiny config with `log_steps: 1000` replaced by `log_steps` (the
 * testutil config fixes it, and a key may appear only once). */
static const char *write_config_logging(const char *dir_name, const char *extra_train, const char *log_steps)
{
    const char *config = write_config(dir_name, extra_train);
    char line[64];
    snprintf(line, sizeof line, "  log_steps: %s\n", log_steps);
    replace_config_line(config, "  log_steps: 1000\n", line);
    return config;
}

/* Training on nothing is an error naming the file (status 3), not a
 * "done" after 0 steps with an untrained "best" model; so is a dev set
 * without a usable pair ("dev loss 0.0000" before). */
static void test_empty_corpus_is_an_error(void **state)
{
    (void)state;
    static const struct { const char *name, *train, *dev, *which; } cases[] = {
        {"empty-train", "", NULL, "train.tsv"},
        {"blank-train", "\n\n\t\n \t \n\n", NULL, "train.tsv"},
        {"unusable-train", "\tno source\nno target\t\n", NULL, "train.tsv"},
        {"empty-dev", NULL, "", "dev.tsv"},
    };
    size_t tsv_len;
    char *tiny = read_file("tests/data/tiny.tsv", &tsv_len);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char train[700], dev[700];
        snprintf(train, sizeof train, "%s", temp_file("train.tsv", cases[i].train ? cases[i].train : tiny,
                                                    cases[i].train ? strlen(cases[i].train) : tsv_len));
        snprintf(dev, sizeof dev, "%s", temp_file("dev.tsv", cases[i].dev ? cases[i].dev : tiny,
                                                cases[i].dev ? strlen(cases[i].dev) : tsv_len));
        char cwd[512];
        assert_non_null(getcwd(cwd, sizeof cwd));
        /* the vocabularies come from the real data: only the corpus under test is empty */
        const char *config = write_config(cases[i].name, "  epochs: 1\n");
        const char *vocab_flags[] = {"--vocab", NULL};
        free(run_train_args(config, vocab_flags, 0));
        /* the same folder, now with the data under test (tiny_train_config
         * already names train_data, so write the whole config again) */
        size_t len;
        char *yaml = read_file(config, &len);
        char *td = strstr(yaml, "  train_data:");
        char *rest = strstr(td, "  label_smoothing:");
        FILE *f = fopen(config, "w");
        assert_non_null(f);
        fprintf(f, "%.*s  train_data: %s/%s\n  dev_data: %s/%s\n%s", (int)(td - yaml), yaml, cwd, train, cwd, dev, rest);
        assert_int_equal(fclose(f), 0);
        free(yaml);
        char *err = run_train_args(config, NULL, 3);
        if (!strstr(err, cases[i].which) || !strstr(err, "no usable pairs"))
            fail_msg("%s: unexpected message: %s", cases[i].name, err);
        free(err);
        assert_false(file_exists(in_dir(cases[i].name, "model.safetensors")));
    }
    free(tiny);
    /* no vocabularies yet: they are not built from nothing either */
    char empty[700], yaml[1600];
    snprintf(empty, sizeof empty, "%s", temp_file("train.tsv", "", 0));
    const char *config = write_config("empty-vocab", "  epochs: 1\n");
    size_t len;
    char *text = read_file(config, &len);
    char *td = strstr(text, "  train_data:"), *rest = strstr(td, "  dev_data:");
    snprintf(yaml, sizeof yaml, "%.*s  train_data: %s/%s\n%s", (int)(td - text), text,
             getcwd((char[512]){0}, 512), empty, rest);
    free(text);
    temp_file("empty-vocab/config.yaml", yaml, strlen(yaml));
    char *err = run_train_args(config, NULL, 3);
    if (!strstr(err, "train.tsv: no pairs to build the vocabularies from")) fail_msg("unexpected message: %s", err);
    free(err);
    assert_false(file_exists(in_dir("empty-vocab", "src.vocab")));
}

/* train --vocab builds subword vocabularies unless train.vocabulary says
 * word; the word ones are today's format, one whole token per entry. */
/* Weights so small that no epoch draws a pair: an error before training,
 * not a "done" after 0 steps with an untrained model saved as the best. */
static void test_no_pair_in_an_epoch_is_an_error(void **state)
{
    (void)state;
    const char *config = write_config("tiny-weight", "  epochs: 2\n");
    const char *vocab_flags[] = {"--vocab", NULL};
    free(run_train_args(config, vocab_flags, 0));
    char cwd[512], line[1200];
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(line, sizeof line, "  sources:\n    - path: %s/tests/data/tiny.tsv\n      weight: 0.0001\n", cwd);
    replace_config_line(config, "  train_data:", line);
    char *err = run_train_args(config, NULL, 3);
    expect_in(err, "no usable pair in epoch 1's draw (0 pairs an epoch of 16 usable)");
    free(err);
    assert_false(file_exists(in_dir("tiny-weight", "model.safetensors")));
    /* its vocabularies would hold no word (counts are weighted): said */
    const char *again[] = {"--vocab", "--overwrite", NULL};
    err = run_train_args(config, again, 0);
    expect_in(err, "src.vocab holds no word");
    expect_in(err, "tgt.vocab holds no word");
    free(err);
}

/* Weights that overflow make the dev loss NaN: the run stops (status 3)
 * rather than score the weights and save them as the best so far. */
static void test_a_nan_dev_loss_saves_nothing(void **state)
{
    (void)state;
    const char *config = write_config("nan-dev", "  learning_rate: 1e30\n  warmup_steps: 0\n");
    replace_config_line(config, "  clip_norm: 1.0", "  clip_norm: 0\n");
    const char *vocab_flags[] = {"--vocab", NULL};
    free(run_train_args(config, vocab_flags, 0));
    const char *flags[] = {"--max-steps", "1", NULL};
    char *err = run_train_args(config, flags, 3);
    expect_in(err, "the dev loss became");
    free(err);
    assert_false(file_exists(in_dir("nan-dev", "model.safetensors")));
}

/* max_steps reached at an epoch's end: the weights the epoch's end just
 * scored are not scored again (it wrote two eval rows for one step). */
static void test_max_steps_at_an_epochs_end_scores_once(void **state)
{
    (void)state;
    const char *config = write_config("steps-at-end", "  batch_tokens: 1000\n  epochs: 3\n");
    const char *vocab_flags[] = {"--vocab", NULL};
    free(run_train_args(config, vocab_flags, 0));
    const char *flags[] = {"--max-steps", "1", NULL}; /* 16 pairs, 177 tokens: one batch an epoch */
    free(run_train_args(config, flags, 0));
    size_t len;
    char *log = read_file(in_dir("steps-at-end", "model.safetensors.log.csv"), &len);
    assert_non_null(log);
    int evals = 0;
    for (const char *p = log; (p = strstr(p, "\neval,")); p++) evals++;
    assert_int_equal(evals, 1);
    free(log);
}

/* train --simplify-table FILE: train.simplify_with's table, as a config's
 * model.simplify reads it; an existing file only with --overwrite, never
 * an input; a config without simplify_with, or whose simplify_with has no
 * character to convert, has none to write. */
static void test_simplify_table(void **state)
{
    (void)state;
    char cwd[512], extra[700];
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(extra, sizeof extra, "  simplify_with: %s/tests/data/cedict-mini.tsv\n", cwd);
    const char *config = write_config("simplify", extra);
    char table[700];
    snprintf(table, sizeof table, "%s", in_dir("simplify", "zh.tsv"));
    char *err = run_train_args(config, (const char *[]){"--simplify-table", table, NULL}, 0);
    expect_in(err, "6 Traditional characters of ");
    free(err);
    size_t len;
    char *text = read_file(table, &len);
    expect_in(text, "个\t個\n");
    free(text);
    err = run_train_args(config, (const char *[]){"--simplify-table", table, NULL}, 2);
    expect_in(err, "zh.tsv exists: replace it with --overwrite");
    free(err);
    free(run_train_args(config, (const char *[]){"--simplify-table", table, "--overwrite", NULL}, 0));
    /* never one of the config's own files, nor a file that is not a table,
     * whatever --overwrite says (src.vocab was replaced, and the model
     * trained with it no longer loaded) */
    free(run_train_args(config, (const char *[]){"--vocab", NULL}, 0));
    const char *own[] = {config, in_dir("simplify", "src.vocab"), in_dir("simplify", "tgt.vocab"),
                         in_dir("simplify", "model.safetensors")};
    for (int i = 0; i < 4; i++) {
        err = run_train_args(config, (const char *[]){"--simplify-table", own[i], "--overwrite", NULL}, 2);
        expect_in(err, "would overwrite ");
        free(err);
    }
    const char *notes = in_dir("simplify", "notes.tsv");
    write_text(notes, "hello\t你好\n");
    err = run_train_args(config, (const char *[]){"--simplify-table", notes, "--overwrite", NULL}, 2);
    expect_in(err, "notes.tsv exists and is not a simplify table");
    free(err);
    expect_file_is(notes, "hello\t你好\n");
    text = read_file(in_dir("simplify", "src.vocab"), &len);
    expect_in(text, "<pad>");
    free(text);
    err = run_train_args(config, (const char *[]){"--simplify-table", table, "--vocab", NULL}, 2);
    expect_in(err, "--simplify-table FILE goes alone");
    free(err);
    err = run_train_args(write_config("no-simplify", ""), (const char *[]){"--simplify-table", table, NULL}, 2);
    expect_in(err, "no train.simplify_with to build the table from");
    free(err);
    /* simplify_with naming no CC-CEDICT file (the training data): no
     * character to convert, an error, nothing written (an empty table,
     * status 0, that translate then refused) */
    snprintf(extra, sizeof extra, "  simplify_with: %s/tests/data/tiny.tsv\n", cwd);
    const char *wrong = write_config("simplify-wrong", extra);
    const char *empty_table = in_dir("simplify-wrong", "zh.tsv");
    err = run_train_args(wrong, (const char *[]){"--simplify-table", empty_table, NULL}, 3);
    expect_in(err, "tiny.tsv: no Traditional character with a Simplified form in it");
    free(err);
    assert_false(file_exists(empty_table));
}

/* The dev loss and BLEU of a zh -> en run of one step on `dev`, its
 * Chinese converted by cedict-mini's table (simplify_with), as "LOSS,BLEU". */
static char *one_step_dev_scores(const char *name, const char *dev)
{
    char cwd[512], extra[700];
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(extra, sizeof extra, "  simplify_with: %s/tests/data/cedict-mini.tsv\n  source_column: 1\n"
                                  "  target_column: 0\n", cwd);
    const char *config = write_config(name, extra);
    replace_config_line(config, "source_language:", "source_language: zh\n");
    replace_config_line(config, "target_language:", "target_language: en\n");
    char line[800];
    snprintf(line, sizeof line, "  dev_data: %s/%s\n", cwd, dev);
    replace_config_line(config, "  dev_data:", line);
    free(run_train_args(config, (const char *[]){"--max-steps", "1", NULL}, 0));
    size_t len;
    char *log = read_file(in_dir(name, "model.safetensors.log.csv"), &len);
    assert_non_null(log);
    char *row = strstr(log, "\neval,");
    assert_non_null(row);
    char *scores = strdup(row + 1);
    free(log);
    return scores;
}

/* A zh -> en dev set is read as translate reads Chinese (model.simplify):
 * its Traditional characters as Simplified, so the dev scores that pick the
 * model are those --eval gives.  The same lines with 們 for 们 score the same. */
static void test_dev_sources_are_simplified(void **state)
{
    (void)state;
    size_t len;
    char *tiny = read_file("tests/data/tiny.tsv", &len), *trad = malloc(len + 1), *o = trad;
    assert_non_null(trad);
    for (const char *p = tiny; *p;) /* 们 (E4 BB AC) -> 們 (E5 80 91) */
        if (strncmp(p, "\xe4\xbb\xac", 3) == 0) {
            memcpy(o, "\xe5\x80\x91", 3);
            o += 3, p += 3;
        } else {
            *o++ = *p++;
        }
    *o = '\0';
    assert_non_null(strstr(trad, "\xe5\x80\x91"));
    const char *plain = temp_file("dev-plain.tsv", tiny, len), *traditional = temp_file("dev-trad.tsv", trad, len);
    char *a = one_step_dev_scores("dev-plain", plain), *b = one_step_dev_scores("dev-trad", traditional);
    /* event,step,epoch,loss,lr,tokens_per_s,grad_norm,dev_loss,dev_bleu,dev_chrf,elapsed,...:
     * the three dev fields (not the elapsed seconds after them, which
     * differed under qemu: 0.3 against 0.2) */
    const char *da = a, *db = b;
    for (int i = 0; i < 7; i++) da = strchr(da, ',') + 1, db = strchr(db, ',') + 1;
    size_t three = 0;
    for (int i = 0; i < 3; i++) three += strcspn(da + three, ",\n") + 1;
    if (strncmp(da, db, three) != 0) fail_msg("dev scores differ:\n  %s  %s", a, b);
    free(a);
    free(b);
    free(tiny);
    free(trad);
}

/* Column `col` (0-based) of a CSV line, as a number. */
static double csv_number(const char *line, int col)
{
    for (int i = 0; i < col; i++) line = strchr(line, ',') + 1;
    return strtod(line, NULL);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The tokens/s of the step row after an evaluation leaves the evaluation
 * out: a dev set 150 times the training data takes far longer to score
 * than a step, and the row after it was about that much slower. */
static void test_tokens_per_second_leave_evaluations_out(void **state)
{
    (void)state;
    const char *config = write_config_logging("toks", "  batch_tokens: 40\n  epochs: 4\n", "1");
    size_t len;
    char *tiny = read_file("tests/data/tiny.tsv", &len), *dev = malloc(len * 150 + 1);
    assert_non_null(dev);
    for (int i = 0; i < 150; i++) memcpy(dev + (size_t)i * len, tiny, len);
    char cwd[512], line[1200];
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(line, sizeof line, "  dev_data: %s/%s\n", cwd, temp_file("big-dev.tsv", dev, len * 150));
    replace_config_line(config, "  dev_data:", line);
    free(tiny);
    free(dev);
    const char *vocab_flags[] = {"--vocab", NULL};
    free(run_train_args(config, vocab_flags, 0));
    free(run_train_args(config, NULL, 0));
    char *log = read_file(in_dir("toks", "model.safetensors.log.csv"), &len);
    assert_non_null(log);
    double plain[64], after_eval[8]; /* tokens_per_s (column 5) of step rows */
    int n_plain = 0, n_after = 0;
    bool eval_before = false;
    for (char *p = strchr(log, '\n') + 1; *p; p = strchr(p, '\n') + 1) {
        if (strncmp(p, "step,", 5) == 0) {
            if (eval_before && n_after < 8) after_eval[n_after++] = csv_number(p, 5);
            else if (!eval_before && n_plain < 64) plain[n_plain++] = csv_number(p, 5);
            eval_before = false;
        } else if (strncmp(p, "eval", 4) == 0) {
            eval_before = true;
        }
    }
    free(log);
    assert_true(n_plain >= 8);
    assert_true(n_after >= 3); /* after epochs 1-3 */
    qsort(plain, (size_t)n_plain, sizeof plain[0], compare_doubles);
    double median = plain[n_plain / 2], best = 0;
    /* The best of the rows after evaluations: the bug slowed every one of
     * them (~1/1000 of the median), a busy machine slows one now and then
     * (a step is ~0.2 ms), and a step after an evaluation starts with
     * colder caches (0.4-0.7 of the median, idle). */
    for (int i = 0; i < n_after; i++) best = after_eval[i] > best ? after_eval[i] : best;
    if (best < median / 10)
        fail_msg("tokens/s after evaluations: at best %.0f, against a median of %.0f", best, median);
}

static int count_evals(const char *dir)
{
    size_t len;
    char *log = read_file(in_dir(dir, "model.safetensors.log.csv"), &len);
    assert_non_null(log);
    int evals = 0;
    for (const char *p = log; (p = strstr(p, "\neval,")); p++) evals++;
    free(log);
    return evals;
}

/* Resuming a run already at its limit, or with every epoch done, trains
 * nothing and scores nothing again (each such resume added an eval row);
 * it says so; a model whose file is gone is written again; and dev data
 * other than the one the best BLEU was measured on is refused, or with
 * --force the best is forgotten. */
static void test_resume_of_a_finished_run(void **state)
{
    (void)state;
    const char *config = write_config("finished", "  batch_tokens: 1000\n  epochs: 3\n");
    char path[700];
    snprintf(path, sizeof path, "%s", config);
    const char *two[] = {"--max-steps", "2", NULL}, *resume_two[] = {"--resume", "--max-steps", "2", NULL};
    free(run_train_args(path, two, 0));
    int evals = count_evals("finished");
    free(run_train_args(path, resume_two, 0));
    assert_int_equal(count_evals("finished"), evals);
    const char *resume[] = {"--resume", NULL};
    free(run_train_args(path, resume, 0)); /* to the end of epoch 3 */
    evals = count_evals("finished");
    const char *resume_more[] = {"--resume", "--max-steps", "1000", NULL};
    RunResult r = run_program((const char *[]){"./train", "-t", "1", "--resume", "--max-steps", "1000", path, NULL},
                              NULL, 0);
    assert_int_equal(r.status, 0);
    expect_in(r.err, "all 3 epochs are done (step 3): nothing to train");
    run_result_free(&r);
    assert_int_equal(count_evals("finished"), evals);
    remove(in_dir("finished", "model.safetensors"));
    free(run_train_args(path, resume_more, 0));
    assert_int_equal(access(in_dir("finished", "model.safetensors"), F_OK), 0);
    /* other dev data: a copy of the config naming tiny.tsv's first 8 lines */
    size_t len;
    char *yaml = read_file(path, &len), *tsv = read_file("tests/data/tiny.tsv", &len);
    char *cut = tsv;
    for (int i = 0; i < 8 && cut; i++) cut = strchr(cut, '\n') ? strchr(cut, '\n') + 1 : NULL;
    if (cut) *cut = '\0';
    const char *dev = in_dir("finished", "dev8.tsv");
    write_text(dev, tsv);
    char *at = strstr(yaml, "  dev_data: ");
    assert_non_null(at);
    char *end = strchr(at, '\n');
    FILE *f = fopen(path, "w");
    fprintf(f, "%.*s  dev_data: dev8.tsv%s", (int)(at - yaml), yaml, end); /* beside the config */
    fclose(f);
    free(yaml);
    free(tsv);
    r = run_program((const char *[]){"./train", "-q", "-t", "1", "--resume", path, NULL}, NULL, 0);
    assert_int_equal(r.status, 2);
    expect_in(r.err, "dev8.tsv) differs from the one its best dev BLEU");
    run_result_free(&r);
    r = run_program((const char *[]){"./train", "-t", "1", "--resume", "--force", path, NULL}, NULL, 0);
    assert_int_equal(r.status, 0);
    expect_in(r.err, "the next evaluation's model is written");
    expect_in(r.err, "all epochs done: dev loss");
    run_result_free(&r);
    free(run_train_args(path, resume, 0)); /* the checkpoint now records the new dev data */
}

static void test_vocabulary_kinds(void **state)
{
    (void)state;
    const char *kinds[] = {"", "  vocabulary: subword\n", "  vocabulary: word\n"};
    const char *dirs[] = {"vocab-default", "vocab-subword", "vocab-word"};
    for (int k = 0; k < 3; k++) {
        const char *config = write_config(dirs[k], kinds[k]);
        const char *vocab_flags[] = {"--vocab", NULL};
        free(run_train_args(config, vocab_flags, 0));
        Error err;
        Vocab *v = vocab_load(in_dir(dirs[k], "src.vocab"), &err);
        if (!v) fail_msg("%s", err.message);
        assert_int_equal(vocab_is_subword(v), k < 2);
        vocab_free(v);
    }
}

/* train --recase rewrites the config's subword vocabularies' casings from
 * its data and keeps their tokens (the hash a model records) and counts;
 * it goes alone, and a word vocabulary has nothing to recase. */
static void test_recase_keeps_the_vocabularies_tokens(void **state)
{
    (void)state;
    const char *config = write_config("recase", "");
    free(run_train_args(config, (const char *[]){"--vocab", NULL}, 0));
    Error err;
    Vocab *before = vocab_load(in_dir("recase", "tgt.vocab"), &err);
    if (!before) fail_msg("%s", err.message);
    char *out = run_train_args(config, (const char *[]){"--recase", NULL}, 0);
    expect_in(out, "train: casings from 16 pairs: ");
    free(out);
    Vocab *after = vocab_load(in_dir("recase", "tgt.vocab"), &err);
    if (!after) fail_msg("%s", err.message);
    assert_true(vocab_hash(after) == vocab_hash(before));
    assert_false(file_exists(in_dir("recase", "model.safetensors"))); /* nothing trained */
    vocab_free(before);
    vocab_free(after);
    out = run_train_args(config, (const char *[]){"--recase", "--resume", NULL}, 2);
    expect_in(out, "train: --recase goes alone");
    free(out);
    /* --vocab trains nothing either: the training options are refused, not ignored */
    const char *with_vocab[][3] = {{"--resume"}, {"--out", "x.safetensors"}, {"--max-steps", "3"},
                                   {"--max-minutes", "1"}};
    for (size_t i = 0; i < sizeof with_vocab / sizeof *with_vocab; i++) {
        out = run_train_args(config,
                             (const char *[]){"--vocab", "--overwrite", with_vocab[i][0], with_vocab[i][1], NULL},
                             2);
        expect_in(out, "train: --vocab only builds the vocabularies: not with --resume");
        free(out);
    }
    const char *word = write_config("recase-word", "  vocabulary: word\n");
    free(run_train_args(word, (const char *[]){"--vocab", NULL}, 0));
    out = run_train_args(word, (const char *[]){"--recase", NULL}, 3);
    expect_in(out, "src.vocab: --recase needs a subword vocabulary");
    free(out);
}

/* A log that cannot be written is an error (status 4, one line naming
 * it), not an empty file and status 0. */
static void test_log_write_error(void **state)
{
    (void)state;
    if (access("/dev/full", W_OK) != 0) {
        print_message("skipped: no /dev/full\n");
        return;
    }
    const char *config = write_config("full-log", "  batch_tokens: 1000\n  epochs: 1\n  log: /dev/full\n");
    char *err = run_train_args(config, NULL, 4);
    if (!strstr(err, "train: /dev/full: cannot write")) fail_msg("unexpected message: %s", err);
    free(err);
}

/* Its worker threads are joined before train returns: valgrind counted
 * 288 bytes "possibly lost" (a thread's own memory) for each one left
 * running.  One step of the tiny model on 2 threads: its products with
 * the output layer are split between them. */
static void test_workers_are_joined_before_exit(void **state)
{
    (void)state;
    const char *config = write_config("joined", "");
    const char *argv[] = {"./train", "-q", "-t", "2", config, "--max-steps", "1", NULL};
    RunResult r = run_under_valgrind(argv, NULL, 0);
    if (r.status != 0) print_in_full(&r);
    assert_int_equal(r.status, 0);
    expect_in(r.err, "train: done: 1 steps");
    run_result_free(&r);
}

/* Nothing train writes may be a file it reads, --overwrite or not: the
 * config, a vocabulary, the data (each checked byte for byte after), and
 * --data only goes with --vocab or --recase. */
static void test_outputs_never_replace_the_runs_inputs(void **state)
{
    (void)state;
    const char *config = write_config("own-inputs", "  batch_tokens: 1000\n  epochs: 1\n");
    char cfg[700], data[700], src_vocab[700];
    snprintf(cfg, sizeof cfg, "%s", config);
    snprintf(data, sizeof data, "%s", in_dir("own-inputs", "data.tsv"));
    snprintf(src_vocab, sizeof src_vocab, "%s", in_dir("own-inputs", "src.vocab"));
    /* the config trains on a copy of the data in its own folder */
    size_t len;
    char *tsv = read_file("tests/data/tiny.tsv", &len), *yaml = read_file(cfg, NULL);
    FILE *f = fopen(data, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(tsv, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    char *at = strstr(yaml, "  train_data: ");
    assert_non_null(at);
    f = fopen(cfg, "w");
    assert_non_null(f);
    fprintf(f, "%.*s  train_data: data.tsv\n%s", (int)(at - yaml), yaml, strchr(at, '\n') + 1);
    assert_int_equal(fclose(f), 0);
    free(yaml);
    run_train(cfg, "--vocab", 0);
    char *before_cfg = read_file(cfg, NULL), *before_vocab = read_file(src_vocab, NULL);
    char spelled[800]; /* another spelling of data.tsv */
    snprintf(spelled, sizeof spelled, "%s/../own-inputs/./data.tsv", in_dir("own-inputs", ""));
    const char *onto[][4] = {{"--overwrite", "--out", cfg, NULL}, {"--overwrite", "--out", src_vocab, NULL},
                             {"--overwrite", "--out", data, NULL}, {"--overwrite", "--out", spelled, NULL}};
    for (size_t i = 0; i < sizeof onto / sizeof *onto; i++) {
        char *err = run_train_args(cfg, onto[i], 2);
        if (!strstr(err, "an input of this run")) fail_msg("--out %s: unexpected message: %s", onto[i][2], err);
        free(err);
    }
    /* the log onto the source vocabulary, named in the config */
    yaml = read_file(cfg, NULL);
    f = fopen(cfg, "w");
    assert_non_null(f);
    fprintf(f, "%s  log: src.vocab\n", yaml);
    assert_int_equal(fclose(f), 0);
    free(yaml);
    char *err = run_train_args(cfg, NULL, 2);
    if (!strstr(err, "(the log) would overwrite")) fail_msg("unexpected message: %s", err);
    free(err);
    char *after_vocab = read_file(src_vocab, NULL), *after_data = read_file(data, &len);
    assert_string_equal(after_vocab, before_vocab);
    assert_memory_equal(after_data, tsv, len);
    free(after_vocab);
    free(after_data);
    free(before_vocab);
    char *now_cfg = read_file(cfg, NULL);
    assert_true(strncmp(now_cfg, before_cfg, strlen(before_cfg)) == 0); /* only the log: line added */
    free(now_cfg);
    free(before_cfg);
    /* a vocabulary naming the data: --vocab --overwrite would replace it */
    yaml = read_file(cfg, NULL);
    at = strstr(yaml, "  log: src.vocab\n");
    assert_non_null(at);
    *at = '\0';
    char *model_vocab = strstr(yaml, "  source_vocab: src.vocab\n");
    assert_non_null(model_vocab);
    f = fopen(cfg, "w");
    assert_non_null(f);
    fprintf(f, "%.*s  source_vocab: data.tsv\n%s", (int)(model_vocab - yaml), yaml,
            model_vocab + strlen("  source_vocab: src.vocab\n"));
    assert_int_equal(fclose(f), 0);
    free(yaml);
    const char *vocab_over[] = {"--vocab", "--overwrite", NULL};
    err = run_train_args(cfg, vocab_over, 2);
    if (!strstr(err, "(the source vocabulary) would overwrite")) fail_msg("unexpected message: %s", err);
    free(err);
    after_data = read_file(data, &len);
    assert_memory_equal(after_data, tsv, len);
    free(after_data);
    free(tsv);
    const char *data_flags[] = {"--data", "tests/data/tiny.tsv", NULL};
    err = run_train_args(config, data_flags, 2);
    if (!strstr(err, "--data TSV goes with --vocab or --recase")) fail_msg("unexpected message: %s", err);
    free(err);
}

/* A run killed after logging past its last checkpoint leaves rows that
 * the resumed run logs again: they are cut off on resume, so every step
 * is in the log once. */
static void test_resume_truncates_the_log(void **state)
{
    (void)state;
    const char *common = "  batch_tokens: 60\n  epochs: 2\n  dropout: 0.0\n  seed: 5\n  checkpoint_steps: 3\n";
    char stop[256];
    snprintf(stop, sizeof stop, "%s  max_steps: 5\n", common);
    run_train(write_config_logging("logcut", stop, "1"), NULL, 0); /* checkpoint at step 5 */
    /* what a killed run would have logged after that checkpoint */
    FILE *f = fopen(in_dir("logcut", "model.safetensors.log.csv"), "a");
    assert_non_null(f);
    fputs("step,6,0,123.456789,1.0e-03,1,1,nan,nan,nan,nan,1.0\nstep,7,0,123.456789,1.0e-03,1,1,nan,nan,nan,nan,1.0\n", f);
    assert_int_equal(fclose(f), 0);
    run_train(write_config_logging("logcut", common, "1"), "--resume", 0);
    size_t len;
    char *log = read_file(in_dir("logcut", "model.safetensors.log.csv"), &len);
    if (strstr(log, "123.456789")) fail_msg("rows from after the checkpoint kept:\n%s", log);
    long expect = 1;
    for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "step,", 5) != 0) continue;
        long step = strtol(line + 5, NULL, 10);
        if (step != expect) fail_msg("log row for step %ld where step %ld was due", step, expect);
        expect++;
    }
    assert_true(expect > 6);
    free(log);
    /* a log cut since the checkpoint (mid-row): refused, not appended to
     * (a torn "stepstep,7,..." row and lost rows, unsaid), and kept */
    const char *path = in_dir("logcut", "model.safetensors.log.csv");
    assert_int_equal(truncate(path, 300), 0);
    char before[400];
    f = fopen(path, "rb");
    assert_non_null(f);
    size_t got = fread(before, 1, sizeof before, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(got, 300);
    char *err = run_train_args(write_config_logging("logcut", common, "1"), (const char *[]){"--resume", NULL}, 2);
    expect_in(err, "shorter than the");
    expect_in(err, "move it away");
    free(err);
    log = read_file(path, &len);
    assert_int_equal(len, 300);
    assert_memory_equal(log, before, 300);
    free(log);
}

/* The checkpoint's batch position means batches of its data, batch_tokens
 * and seed: resuming under other ones is an error unless --resume --force. */
static void test_changed_batching_needs_force(void **state)
{
    (void)state;
    run_train(write_config("replan", "  batch_tokens: 60\n  epochs: 3\n  seed: 5\n  max_steps: 3\n"), NULL, 0);
    static const struct { const char *train, *phrase; } cases[] = {
        {"  batch_tokens: 100\n  epochs: 3\n  seed: 5\n", "written with batch_tokens 60, the config says 100"},
        {"  batch_tokens: 60\n  epochs: 3\n  seed: 6\n", "written with seed 5, the config says 6"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *err = run_train_args(write_config("replan", cases[i].train), (const char *[]){"--resume", NULL}, 2);
        if (!strstr(err, cases[i].phrase) || !strstr(err, "--force")) fail_msg("unexpected message: %s", err);
        free(err);
    }
    /* other data: the same TSV less its last line */
    size_t len;
    char *tsv = read_file("tests/data/tiny.tsv", &len);
    *strrchr(tsv, '\n') = '\0';
    *(strrchr(tsv, '\n') + 1) = '\0';
    char data[700], yaml[2048], cwd[512];
    snprintf(data, sizeof data, "%s", temp_file("replan.tsv", tsv, strlen(tsv)));
    free(tsv);
    const char *config = write_config("replan", "  batch_tokens: 60\n  epochs: 3\n  seed: 5\n");
    char *text = read_file(config, &len);
    char *td = strstr(text, "  train_data:"), *rest = strstr(td, "  dev_data:");
    snprintf(yaml, sizeof yaml, "%.*s  train_data: %s/%s\n%s", (int)(td - text), text,
             getcwd(cwd, sizeof cwd), data, rest);
    free(text);
    temp_file("replan/config.yaml", yaml, strlen(yaml));
    char *err = run_train_args(config, (const char *[]){"--resume", NULL}, 2);
    if (!strstr(err, "replan.tsv) differs from the data it was written with")) fail_msg("unexpected message: %s", err);
    free(err);
    /* --force: on it goes, and says so */
    err = run_train_args(config, (const char *[]){"--resume", "--force", NULL}, 0);
    if (!strstr(err, "continuing (--force)")) fail_msg("unexpected message: %s", err);
    free(err);
    free(run_train_args(config, (const char *[]){"--force", NULL}, 2)); /* --force alone is a usage error */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiny_model_memorises_sixteen_pairs),
        cmocka_unit_test(test_resumed_run_equals_uninterrupted_run),
        cmocka_unit_test(test_existing_checkpoint_needs_resume),
        cmocka_unit_test(test_names_with_line_breaks_are_said_on_one_line),
        cmocka_unit_test(test_interrupt_saves_a_checkpoint),
        cmocka_unit_test(test_interrupt_whose_save_fails_says_so),
        cmocka_unit_test(test_interrupt_before_the_first_step_says_so),
        cmocka_unit_test(test_translate_before_training_says_so),
        cmocka_unit_test(test_hangup_and_a_gone_reader_keep_the_run),
        cmocka_unit_test(test_closed_stderr_stays_out_of_the_log),
        cmocka_unit_test(test_existing_weights_are_not_replaced),
        cmocka_unit_test(test_resume_refuses_a_foreign_model),
        cmocka_unit_test(test_init_starts_from_given_weights),
        cmocka_unit_test(test_vocab_keeps_existing_vocabularies),
        cmocka_unit_test(test_vocab_pair_is_replaced_together),
        cmocka_unit_test(test_empty_corpus_is_an_error),
        cmocka_unit_test(test_vocabulary_kinds),
        cmocka_unit_test(test_recase_keeps_the_vocabularies_tokens),
        cmocka_unit_test(test_options_that_cannot_act_are_refused),
        cmocka_unit_test(test_what_a_run_records_and_says),
        cmocka_unit_test(test_log_write_error),
        cmocka_unit_test(test_workers_are_joined_before_exit),
        cmocka_unit_test(test_outputs_never_replace_the_runs_inputs),
        cmocka_unit_test(test_resume_truncates_the_log),
        cmocka_unit_test(test_changed_batching_needs_force),
        cmocka_unit_test(test_sources_are_counted_on_stderr),
        cmocka_unit_test(test_weighted_sources_resume_exactly),
        cmocka_unit_test(test_max_steps_bounds_the_epochs_drawn),
        cmocka_unit_test(test_the_log_replaces_only_a_log),
        cmocka_unit_test(test_a_second_run_into_the_same_files_is_refused),
        cmocka_unit_test(test_vocab_building_refuses_what_it_would_destroy),
        cmocka_unit_test(test_resume_without_its_model_writes_one),
        cmocka_unit_test(test_weights_path_that_cannot_be_a_file),
        cmocka_unit_test(test_unwritable_checkpoint_is_found_before_training),
        cmocka_unit_test(test_no_pair_in_an_epoch_is_an_error),
        cmocka_unit_test(test_a_nan_dev_loss_saves_nothing),
        cmocka_unit_test(test_resume_of_a_finished_run),
        cmocka_unit_test(test_max_steps_at_an_epochs_end_scores_once),
        cmocka_unit_test(test_tokens_per_second_leave_evaluations_out),
        cmocka_unit_test(test_simplify_table),
        cmocka_unit_test(test_dev_sources_are_simplified),
    };
    return cmocka_run_group_tests_name("train command line", tests, NULL, NULL);
}
