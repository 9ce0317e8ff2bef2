/* test_files.c — files that are not what they seem, and writes that fail.
 *
 * Output files (common/output_file.h): a FIFO or a device stays what it
 * is, a symbolic link is followed and stays a link, two writers of one path
 * never share a temporary file, a failed or aborted write leaves the old
 * file as it was, and an output never replaces an input of the run.
 * Input files (common/input_file.h): a FIFO, /dev/zero or a huge sparse
 * file never hangs a reader or is read whole.
 *
 * Device nodes are made with mknod in the test folder (as root; the test
 * is skipped otherwise), never by writing to /dev/null or /dev/full: the
 * old code renamed over its target, which as root replaces the system's
 * device. */
#include "testutil.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../data/corpus.h"
#include "../common/line.h"
#include "../common/utf8.h"
#include "../common/output_file.h"
#include "../model/safetensors.h"
#include "../tokenizer/vocab.h"

#define TINY "configs/tiny.yaml"

static const char *tmp_path(const char *name)
{
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", temp_dir(), name);
    return p;
}

/* path made absolute (a config resolves relative paths from its folder) */
static const char *absolute(const char *path)
{
    static char paths[4][1024];
    static int next;
    char cwd[512];
    if (!getcwd(cwd, sizeof cwd)) abort();
    char *p = paths[next++ % 4];
    snprintf(p, sizeof paths[0], "%s/%s", cwd, path);
    return p;
}

static mode_t kind_of(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return 0;
    return st.st_mode & S_IFMT;
}

static bool parses_as_json(const char *path)
{
    char *text = read_file(path, NULL);
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    bool ok = doc != NULL;
    cJSON_Delete(doc);
    free(text);
    return ok;
}

/* A character device like /dev/null (1,3) or /dev/full (1,7) under the
 * test folder; skips the test when mknod is not allowed. */
static const char *make_device(const char *name, unsigned minor)
{
    const char *path = tmp_path(name);
    unlink(path);
    if (mknod(path, S_IFCHR | 0666, makedev(1, minor)) != 0) {
        SKIP_TEST("root", "mknod %s: %s (needs root)", path, strerror(errno));
    }
    return path;
}

/* Does a temporary file of `name` (".name.translate-tmp.XXXXXX") remain in the folder? */
static bool temp_left_for(const char *name)
{
    char prefix[256];
    snprintf(prefix, sizeof prefix, ".%s.", name);
    DIR *d = opendir(temp_dir());
    bool found = false;
    for (struct dirent *e; d && (e = readdir(d));)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) found = true;
    if (d) closedir(d);
    return found;
}

/* ---- output files: FIFOs, devices, links ------------------------------------ */

/* A child that reads the FIFO to its end into `copy`; killed after 10 s. */
static pid_t read_fifo_in_child(const char *fifo, const char *copy)
{
    pid_t pid = fork();
    if (pid == 0) {
        alarm(10);
        int in = open(fifo, O_RDONLY);
        int out = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        char buf[65536];
        ssize_t n;
        while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)n) != n) _exit(1);
        _exit(in >= 0 && out >= 0 ? 0 : 1);
    }
    return pid;
}

static void test_attention_to_a_fifo_keeps_the_fifo(void **state)
{
    (void)state;
    const char *fifo = tmp_path("attn.fifo"), *copy = tmp_path("attn.fifo.copy");
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    pid_t reader = read_fifo_in_child(fifo, copy);
    const char *argv[] = {"./translate", "-q", "-c", TINY, "-a", fifo, "I love China.", NULL};
    RunResult r = run_program(argv, NULL, 0);
    mode_t kind = kind_of(fifo);
    if (kind != S_IFIFO) kill(reader, SIGKILL); /* it would wait for a writer forever */
    int status;
    waitpid(reader, &status, 0);
    assert_int_equal(r.status, 0);
    assert_int_equal(kind, S_IFIFO);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_true(parses_as_json(copy));
    run_result_free(&r);
}

static void test_outputs_to_a_device_keep_the_device(void **state)
{
    (void)state;
    const char *null = make_device("null", 3);
    const char *argv[] = {"./translate", "-q", "-c", TINY, "-a", null, "--html", null,
                          "--logits", null, "I love China.", NULL};
    RunResult r = run_program(argv, NULL, 0);
    assert_int_equal(r.status, 0);
    assert_int_equal(kind_of(null), S_IFCHR);
    run_result_free(&r);
    /* the vocabulary and weights writers go through the same helper */
    VocabBuilder *b = vocab_builder_new();
    Error err = {{0}};
    assert_int_equal(write_vocab_at(vocab_builder_write, b, null, 10, 1, &err), 0);
    vocab_builder_free(b);
    float x[2] = {1, 2};
    SafeWriteTensor t = {.name = "x", .ndim = 1, .shape = {2}, .data = x};
    assert_int_equal(safetensors_write(null, &t, 1, NULL, 0, &err), 0);
    assert_int_equal(kind_of(null), S_IFCHR);
}

/* README: status 4 and one line naming the file, for every output. */
static void test_outputs_to_a_full_device_are_status_4(void **state)
{
    (void)state;
    const char *full = make_device("full", 7);
    const char *options[] = {"--logits", "-a", "--html"};
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        const char *argv[] = {"./translate", "-q", "-c", TINY, options[i], full, "I love China.", NULL};
        RunResult r = run_program(argv, NULL, 0);
        if (r.status != 4) fail_msg("%s %s: status %d, stderr: %s", options[i], full, r.status, r.err);
        char want[600];
        snprintf(want, sizeof want, "%s: cannot write: No space left on device", full);
        expect_in(r.err, want);
        assert_int_equal(count_lines(r.err), 1);
        assert_int_equal(count_lines(r.out), 1); /* the translation is not lost */
        assert_int_equal(kind_of(full), S_IFCHR);
        run_result_free(&r);
    }
    const char *eval[] = {"./translate", "-q", "-c", TINY, "--eval", "tests/data/tiny.tsv",
                          "--hyps", full, NULL};
    RunResult r = run_program(eval, NULL, 0);
    assert_int_equal(r.status, 4);
    expect_in(r.err, "cannot write: No space left on device");
    assert_int_equal(kind_of(full), S_IFCHR);
    run_result_free(&r);
}

/* Megabytes into a full device, in writes of many sizes: every write is
 * refused, none may crash (the write function once returned -1 to stdio,
 * which fopencookie forbids, and an fwrite of a large block after a
 * failed flush copied past stdio's buffer), and commit reports it. */
static void fill_a_full_device(FILE *f, const void *context)
{
    (void)context;
    static char block[300000];
    memset(block, 'x', sizeof block);
    for (size_t size = 1; size <= sizeof block; size = size * 3 + 1)
        for (int i = 0; i < 4; i++) fwrite(block, 1, size, f);
}

static void test_large_writes_to_a_full_device_fail_cleanly(void **state)
{
    (void)state;
    const char *full = make_device("full-large", 7);
    Error err = {{0}};
    assert_int_equal(output_file_write(full, 0, fill_a_full_device, NULL, &err), -1);
    expect_in(err.message, "cannot write: No space left on device");
    /* the same through translate: the attention maps of 40 sentences are
     * megabytes of JSON */
    char input[4096] = "";
    for (int i = 0; i < 40; i++)
        snprintf(input + strlen(input), sizeof input - strlen(input), "This is sentence number %d.\n", i);
    const char *options[] = {"-a", "--html", "--logits"};
    for (size_t i = 0; i < sizeof options / sizeof *options; i++) {
        const char *argv[] = {"./translate", "-q", "-b", "1", "-c", TINY, options[i], full, NULL};
        RunResult r = run_program(argv, input, strlen(input));
        if (r.status != 4) fail_msg("%s %s: status %d, stderr: %s", options[i], full, r.status, r.err);
        expect_in(r.err, "cannot write: No space left on device");
        /* the maps are written at the end; the logits go out sentence by
         * sentence, and translating stops at the first that fails */
        assert_int_equal(count_lines(r.out), strcmp(options[i], "--logits") == 0 ? 1 : 40);
        run_result_free(&r);
    }
    assert_int_equal(kind_of(full), S_IFCHR);
}

static void test_a_symlink_is_followed_and_stays_a_link(void **state)
{
    (void)state;
    const char *real = temp_file("real.json", "old", 3), *link = tmp_path("link.json");
    unlink(link);
    assert_int_equal(symlink("real.json", link), 0);
    const char *argv[] = {"./translate", "-q", "-c", TINY, "-a", link, "I love China.", NULL};
    RunResult r = run_program(argv, NULL, 0);
    assert_int_equal(r.status, 0);
    assert_int_equal(kind_of(link), S_IFLNK);
    assert_int_equal(kind_of(real), S_IFREG);
    assert_true(parses_as_json(real));
    run_result_free(&r);

    /* A link to nothing: we do not guess where to create the file. */
    const char *dangling = tmp_path("dangling.json");
    unlink(dangling);
    assert_int_equal(symlink("no-such-target.json", dangling), 0);
    const char *argv2[] = {"./translate", "-q", "-c", TINY, "-a", dangling, "I love China.", NULL};
    r = run_program(argv2, NULL, 0);
    assert_int_equal(r.status, 4);
    expect_in(r.err, "dangling.json: cannot write: a symbolic link to a missing file");
    assert_int_equal(kind_of(dangling), S_IFLNK);
    run_result_free(&r);
}

/* An output that is the file standard output or error goes to (/dev/stdout
 * with `>> run.log`, or the log named itself) is written through that
 * descriptor, after what is there: replaced by a rename, the log lost its
 * earlier lines and the score line written after (status 0). */
static void test_an_output_that_is_standard_output_appends(void **state)
{
    (void)state;
    const char *log = temp_file("run.log", "earlier line\n", 13);
    const char *tsv = temp_file("pairs.tsv", "I love China.\t我爱中国。\n", strlen("I love China.\t我爱中国。\n"));
    static const char *const forms[] = {
        "exec ./translate -q -c %s --eval %s --hyps /dev/stdout >> %s",
        "exec ./translate -q -c %s --eval %s --hyps /dev/stderr 2>> %s",
        "exec ./translate -q -c %s --eval %s --hyps %3$s >> %3$s",
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char command[900];
        snprintf(command, sizeof command, forms[i], TINY, tsv, log);
        const char *argv[] = {"/bin/sh", "-c", command, NULL};
        RunResult r = run_program(argv, NULL, 0);
        if (r.status != 0) fail_msg("%s: status %d: %s", command, r.status, r.err);
        run_result_free(&r);
        size_t len;
        char *text = read_file(log, &len);
        if (strncmp(text, "earlier line\n", 13) != 0) fail_msg("%s: the log lost its first line:\n%s", command, text);
        if (i != 1 && !strstr(text, "BLEU")) fail_msg("%s: the score line is lost:\n%s", command, text);
        free(text);
    }
}

/* Two runs writing one path at the same time: both succeed, and what is
 * left is one complete document (they used to share PATH.tmp). */
static void test_two_concurrent_writers_leave_a_whole_file(void **state)
{
    (void)state;
    const char *path = tmp_path("shared.json");
    for (int round = 0; round < 4; round++) {
        pid_t pid[2];
        for (int k = 0; k < 2; k++) {
            pid[k] = fork();
            if (pid[k] == 0) {
                const char *argv[] = {"./translate", "-q", "-c", TINY, "-a", path,
                                      "I love China.", "How are you?", "It is raining today.",
                                      "She reads a book.", "We eat fish.", NULL};
                RunResult r = run_program(argv, NULL, 0);
                _exit(r.status);
            }
        }
        for (int k = 0; k < 2; k++) {
            int status;
            waitpid(pid[k], &status, 0);
            assert_true(WIFEXITED(status));
            assert_int_equal(WEXITSTATUS(status), 0);
        }
        assert_true(parses_as_json(path));
    }
    assert_false(temp_left_for("shared.json"));
}

/* Inside one writer's fill, a second writer of the same path runs to its
 * end: deterministic interleaving.  Both files are whole; the last commit
 * wins. */
static void fill_inner(FILE *f, const void *context)
{
    (void)context;
    fputs("{\"writer\": 2}\n", f);
}

static void fill_outer(FILE *f, const void *context)
{
    fputs("{\"writer\": ", f);
    Error err = {{0}};
    int *inner_status = (int *)context;
    *inner_status = output_file_write(tmp_path("nested.json"), 0, fill_inner, NULL, &err);
    fputs("1}\n", f);
}

static void test_nested_writers_never_share_a_temporary(void **state)
{
    (void)state;
    int inner = -1;
    Error err = {{0}};
    assert_int_equal(output_file_write(tmp_path("nested.json"), 0, fill_outer, &inner, &err), 0);
    assert_int_equal(inner, 0);
    expect_file_is(tmp_path("nested.json"), "{\"writer\": 1}\n");
    assert_false(temp_left_for("nested.json"));
}

static void test_abort_leaves_the_old_file_and_no_temporary(void **state)
{
    (void)state;
    const char *path = temp_file("kept.txt", "precious\n", 9);
    assert_int_equal(chmod(path, 0640), 0);
    Error err = {{0}};
    OutputFile *out = output_file_open(path, 0, &err);
    assert_non_null(out);
    fputs("half of it", output_file_stream(out));
    output_file_abort(out);
    expect_file_is(path, "precious\n");
    assert_false(temp_left_for("kept.txt"));
    /* a commit keeps the permission bits */
    out = output_file_open(path, 0, &err);
    assert_non_null(out);
    fputs("new\n", output_file_stream(out));
    assert_int_equal(output_file_commit(out, &err), 0);
    expect_file_is(path, "new\n");
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    /* a directory is refused, naming it */
    assert_null(output_file_open(temp_dir(), 0, &err));
    expect_in(err.message, "cannot write: Is a directory");
}

/* A file made read-only (chmod a-w) is not replaced: the rename needs only
 * the folder's permission, and -o, --logits or train replaced it (keeping
 * its mode 0444), even where `> FILE` could not write it. */
static void test_a_read_only_file_is_not_replaced(void **state)
{
    (void)state;
    const char *path = temp_file("read-only.txt", "precious\n", 9);
    assert_int_equal(chmod(path, 0444), 0);
    Error err = {{0}};
    assert_null(output_file_open(path, 0, &err));
    expect_in(err.message, "read-only.txt: cannot write: the file is read-only");
    expect_file_is(path, "precious\n");
    assert_false(temp_left_for("read-only.txt"));
    /* through translate: status 4, one line */
    const char *argv[] = {"./translate", "-q", "-c", TINY, "-o", path, "How are you?", NULL};
    RunResult r = run_program(argv, NULL, 0);
    if (r.status != 4) fail_msg("status %d, stderr: %s", r.status, r.err);
    expect_in(r.err, "the file is read-only");
    assert_int_equal(count_lines(r.err), 1);
    expect_file_is(path, "precious\n");
    run_result_free(&r);
    assert_int_equal(chmod(path, 0644), 0); /* and writable again, it is replaced */
    r = run_program(argv, NULL, 0);
    assert_int_equal(r.status, 0);
    run_result_free(&r);
}

/* A user's hidden file beside an output, named like a temporary one
 * (".out.txt.backup": a dot, the output's name, six letters), is the
 * user's: writing -o once removed it as a dead writer's leftover. */
static void test_a_users_file_beside_an_output_is_kept(void **state)
{
    (void)state;
    char out[600], backup[600];
    snprintf(out, sizeof out, "%s/out.txt", temp_dir());
    snprintf(backup, sizeof backup, "%s/.out.txt.backup", temp_dir());
    write_text(backup, "my precious backup\n");
    RunResult r = run_program((const char *[]){"./translate", "-q", "-c", "configs/tiny.yaml", "-o", out, "x", NULL},
                              NULL, 0);
    assert_int_equal(r.status, 0);
    run_result_free(&r);
    expect_file_is(backup, "my precious backup\n");
}

/* Writes that fail (RLIMIT_FSIZE: EFBIG after 1000 bytes) leave every old
 * output file as it was, and no temporary files.  The limit's signal,
 * SIGXFSZ, is translate's own to ignore (the parent leaves it at its
 * default): it killed translate with no word and a temporary file left. */
static void test_failed_writes_leave_the_old_files(void **state)
{
    (void)state;
    const char *logits = temp_file("old.logits", "precious\n", 9);
    const char *attn = temp_file("old.json", "{\"old\": 1}\n", 11);
    struct rlimit old, small = {1000, 1000};
    getrlimit(RLIMIT_FSIZE, &old);
    small.rlim_max = old.rlim_max;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    /* The logits fail at the first sentence, and translating stops: the
     * maps are not written at all.  Then the maps alone, which fail at the
     * end. */
    const char *both[] = {"./translate", "-q", "-c", TINY, "--logits", logits, "-a", attn,
                          "I love China.", "How are you?", NULL};
    const char *maps[] = {"./translate", "-q", "-c", TINY, "-a", attn, "I love China.", "How are you?", NULL};
    RunResult r = run_program(both, NULL, 0), r2 = run_program(maps, NULL, 0);
    setrlimit(RLIMIT_FSIZE, &old);
    assert_int_equal(r.status, 4);
    expect_in(r.err, "old.logits: cannot write: File too large");
    assert_int_equal(count_lines(r.err), 1);
    assert_int_equal(r2.status, 4);
    expect_in(r2.err, "old.json: cannot write: File too large");
    assert_null(strstr(r.err, ".old.")); /* never the temporary name */
    assert_null(strstr(r2.err, ".old."));
    expect_file_is(logits, "precious\n");
    expect_file_is(attn, "{\"old\": 1}\n");
    assert_false(temp_left_for("old.logits"));
    assert_false(temp_left_for("old.json"));
    run_result_free(&r);
    run_result_free(&r2);
}

/* ---- outputs are opened only once the run starts -------------------------------- */

static void test_a_config_error_keeps_the_old_logits(void **state)
{
    (void)state;
    const char *logits = temp_file("kept.logits", "precious\n", 9);
    const char *broken = temp_file("broken.yaml", "name: [unclosed\n", 16);
    const char *configs[] = {"no/such/config.yaml", broken};
    for (int i = 0; i < 2; i++) {
        const char *argv[] = {"./translate", "-c", configs[i], "--logits", logits, "x", NULL};
        RunResult r = run_program(argv, NULL, 0);
        assert_int_equal(r.status, 2);
        expect_file_is(logits, "precious\n");
        run_result_free(&r);
    }
    assert_false(temp_left_for("kept.logits"));
}

/* A config of the tiny model in the test folder, with its own weights. */
static const char *own_config(const char *name)
{
    char cwd[512], yaml[2048];
    if (!getcwd(cwd, sizeof cwd)) abort();
    snprintf(yaml, sizeof yaml,
             "name: own\nsource_language: en\ntarget_language: zh\nmodel:\n"
             "  weights: %s.safetensors\n  source_vocab: %s/tests/data/tiny.src.vocab\n"
             "  target_vocab: %s/tests/data/tiny.tgt.vocab\n  random_init_seed: 7\n"
             "architecture:\n  d_model: 16\n  heads: 2\n  encoder_layers: 2\n  decoder_layers: 2\n"
             "  d_ff: 32\n  activation: gelu\n  norm: pre\n  max_len: 32\n"
             "  scale_attention: true\n  tied_output_embedding: true\n",
             name, cwd, cwd);
    return temp_file(name, yaml, strlen(yaml));
}

static void test_an_output_never_replaces_an_input(void **state)
{
    (void)state;
    const char *config = own_config("own.yaml");
    char *yaml = read_file(config, NULL);
    const char *argv[] = {"./translate", "-q", "-c", config, "--logits", config, "I love China.", NULL};
    RunResult r = run_program(argv, NULL, 0);
    assert_int_equal(r.status, 4);
    expect_in(r.err, "--logits would overwrite");
    assert_int_equal(count_lines(r.err), 1);
    assert_int_equal(r.out_len, 0); /* refused before any line is translated */
    expect_file_is(config, yaml);
    run_result_free(&r);
    /* the weights and vocabularies are inputs too */
    size_t before_len, after_len;
    char *before = read_file(tmp_path("own.yaml.safetensors"), &before_len);
    assert_non_null(before);
    const char *argv2[] = {"./translate", "-q", "-c", config, "-a", tmp_path("own.yaml.safetensors"),
                           "I love China.", NULL};
    r = run_program(argv2, NULL, 0);
    assert_int_equal(r.status, 4);
    expect_in(r.err, "--attention would overwrite");
    assert_int_equal(r.out_len, 0);
    char *after = read_file(tmp_path("own.yaml.safetensors"), &after_len);
    assert_true(after && before_len == after_len && memcmp(before, after, before_len) == 0);
    run_result_free(&r);
    free(before);
    free(after);
    free(yaml);
    /* so is a Chinese source's Traditional -> Simplified table (model.simplify) */
    char cwd[512], zh_yaml[2048], table[600];
    if (!getcwd(cwd, sizeof cwd)) abort();
    snprintf(table, sizeof table, "%s", temp_file("simplify.tsv", "\xE9\x80\x99\t\xE8\xBF\x99\n", 8));
    snprintf(zh_yaml, sizeof zh_yaml,
             "name: own-zh\nsource_language: zh\ntarget_language: en\nmodel:\n"
             "  weights: own-zh.safetensors\n  source_vocab: %s/tests/data/tiny.src.vocab\n"
             "  target_vocab: %s/tests/data/tiny.tgt.vocab\n  random_init_seed: 7\n  simplify: simplify.tsv\n"
             "architecture:\n  d_model: 16\n  heads: 2\n  encoder_layers: 2\n  decoder_layers: 2\n"
             "  d_ff: 32\n  activation: gelu\n  norm: pre\n  max_len: 32\n"
             "  scale_attention: true\n  tied_output_embedding: true\n",
             cwd, cwd);
    const char *zh_config = temp_file("own-zh.yaml", zh_yaml, strlen(zh_yaml));
    const char *outputs[] = {"--logits", "-o", "-a", "--html"};
    for (size_t i = 0; i < sizeof outputs / sizeof *outputs; i++) {
        r = run_program((const char *[]){"./translate", "-q", "-c", zh_config, outputs[i], table, "\xE4\xBD\xA0",
                                         NULL},
                        NULL, 0);
        if (r.status != 4 || !strstr(r.err, "would overwrite"))
            fail_msg("%s TABLE: status %d, stderr: %s", outputs[i], r.status, r.err);
        expect_file_is(table, "\xE9\x80\x99\t\xE8\xBF\x99\n");
        run_result_free(&r);
    }
}

/* ---- input files that are not regular files ------------------------------------ */

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

/* Run a program under timeout(1): a reader that hangs is status 124. */
static RunResult run_bounded(const char *const argv[], const char *input, size_t len)
{
    const char *full[16] = {"/usr/bin/timeout", "-s", "KILL", "20", test_program(argv[0])};
    int n = 5;
    for (int i = 1; argv[i] && n < 15; i++) full[n++] = argv[i];
    full[n] = NULL;
    return run_program(full, input, len);
}

/* A translate config with the given weights and vocabulary paths. */
static const char *config_reading(const char *name, const char *weights, const char *src_vocab)
{
    char cwd[512], yaml[2048];
    if (!getcwd(cwd, sizeof cwd)) abort();
    snprintf(yaml, sizeof yaml,
             "name: reading\nsource_language: en\ntarget_language: zh\nmodel:\n"
             "  weights: %s\n  source_vocab: %s\n  target_vocab: %s/tests/data/tiny.tgt.vocab\n"
             "architecture:\n  d_model: 16\n  heads: 2\n  encoder_layers: 2\n  decoder_layers: 2\n"
             "  d_ff: 32\n  activation: gelu\n  norm: pre\n  max_len: 32\n"
             "  scale_attention: true\n  tied_output_embedding: true\n",
             weights, src_vocab, cwd);
    return temp_file(name, yaml, strlen(yaml));
}

static void expect_refused(const char *const argv[], int status, const char *phrase)
{
    RunResult r = run_bounded(argv, NULL, 0);
    if (r.status != status || !strstr(r.err, phrase))
        fail_msg("%s -c %s: status %d (want %d), stderr: %s (want '%s')", argv[0], argv[3],
                 r.status, status, r.err, phrase);
    run_result_free(&r);
}

static void test_weights_and_vocabularies_that_are_fifos_or_devices(void **state)
{
    (void)state;
    char cwd[512], weights[600], vocab[600];
    if (!getcwd(cwd, sizeof cwd)) abort();
    const char *fifo = tmp_path("input.fifo");
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    /* the tiny model's weights, written by its random init */
    const char *init[] = {"./translate", "-q", "-c", TINY, "x", NULL};
    RunResult r = run_program(init, NULL, 0);
    run_result_free(&r);
    snprintf(weights, sizeof weights, "%s/tests/data/tiny.safetensors", cwd);
    snprintf(vocab, sizeof vocab, "%s/tests/data/tiny.src.vocab", cwd);
    fifo = absolute(fifo);
    const char *cases[][3] = {
        {fifo, vocab, "is not a regular file (a FIFO)"},
        {"/dev/zero", vocab, "is not a regular file (a character device)"},
        {weights, fifo, "is not a regular file (a FIFO)"},
        {weights, "/dev/zero", "is not a regular file (a character device)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *config = config_reading("reading.yaml", cases[i][0], cases[i][1]);
        const char *argv[] = {"./translate", "-q", "-c", config, "I love China.", NULL};
        expect_refused(argv, 3, cases[i][2]);
    }
}

static void test_train_data_that_is_a_fifo_or_a_device(void **state)
{
    (void)state;
    const char *fifo = tmp_path("train.fifo");
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    const char *data[] = {absolute(fifo), "/dev/zero"};
    for (int i = 0; i < 2; i++) {
        char dir[600], yaml[2048];
        snprintf(dir, sizeof dir, "%s/train-input-%d", temp_dir(), i);
        mkdir(dir, 0755);
        snprintf(yaml, sizeof yaml,
                 "name: t\nsource_language: en\ntarget_language: zh\nmodel:\n"
                 "  weights: m.safetensors\n  source_vocab: s.vocab\n  target_vocab: t.vocab\n"
                 "architecture:\n  d_model: 16\n  heads: 2\n  encoder_layers: 1\n"
                 "  decoder_layers: 1\n  d_ff: 32\n  activation: relu\n  norm: pre\n"
                 "  max_len: 32\n  scale_attention: true\n  tied_output_embedding: true\n"
                 "train:\n  train_data: %s\n  dev_data: %s\n", data[i], data[i]);
        char name[64];
        snprintf(name, sizeof name, "train-input-%d/config.yaml", i);
        const char *config = temp_file(name, yaml, strlen(yaml));
        const char *args[] = {"./train", config, NULL};
        RunResult r = run_bounded(args, NULL, 0);
        if (r.status != 3 || !strstr(r.err, "is not a regular file"))
            fail_msg("train_data %s: status %d, stderr: %s", data[i], r.status, r.err);
        run_result_free(&r);
    }
}

/* A 4 GB sparse TSV (and vocabulary) whose first line never ends: the
 * error comes after 64 KiB of reading, not after 4 GB. */
static void test_a_huge_sparse_line_is_not_read_whole(void **state)
{
    (void)state;
    const char *big = tmp_path("sparse.tsv");
    int fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)4 << 30), 0);
    close(fd);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const char *argv[] = {"./translate", "-q", "-c", TINY, "--eval", big, NULL};
    RunResult r = run_bounded(argv, NULL, 0);
    double took = seconds_since(&t0);
    unlink(big);
    if (!strstr(r.err, "sparse.tsv:1: longer than 65536 bytes") || took > 3.0)
        fail_msg("status %d after %.1f s, stderr: %s", r.status, took, r.err);
    run_result_free(&r);

    Error err = {{0}};
    const char *sparse_vocab = tmp_path("sparse.vocab");
    fd = open(sparse_vocab, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_int_equal(ftruncate(fd, (off_t)4 << 30), 0);
    close(fd);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_null(vocab_load(sparse_vocab, &err));
    took = seconds_since(&t0);
    unlink(sparse_vocab);
    expect_in(err.message, "sparse.vocab:1: longer than 4096 bytes");
    if (took > 3.0) fail_msg("vocab_load took %.1f s", took);
}

/* `command` (a format naming the config file once) run by `shell`, with
 * `yaml` written to temp file `name`: translate must load it (status 0). */
static void config_through_shell(const char *shell, const char *command, const char *name, const char *yaml)
{
    char line[800];
    snprintf(line, sizeof line, command, temp_file(name, yaml, strlen(yaml)));
    RunResult r = run_bounded((const char *[]){shell, "-c", line, NULL}, NULL, 0);
    if (r.status != 0) fail_msg("%s: status %d: %s", line, r.status, r.err);
    run_result_free(&r);
}

/* A regular config one byte over the limit is refused by its size, before
 * any of it is read. */
static void test_a_config_one_byte_over_the_limit(void **state)
{
    (void)state;
    size_t n = (1u << 20) + 1;
    char *yaml = malloc(n);
    for (size_t i = 0; i < n; i++) yaml[i] = i % 64 == 63 ? '\n' : i % 64 == 0 ? '#' : 'x';
    const char *path = temp_file("big.yaml", yaml, n);
    free(yaml);
    const char *argv[] = {"./translate", "-c", path, "x", NULL};
    expect_refused(argv, 2, "big.yaml: 1048577 bytes, more than a config's limit of 1048576");
}

static void test_a_config_from_a_pipe_has_the_same_limit(void **state)
{
    (void)state;
    /* 2 MiB of YAML comments on standard input */
    size_t n = 2u << 20;
    char *yaml = malloc(n);
    for (size_t i = 0; i < n; i++) yaml[i] = i % 64 == 63 ? '\n' : i % 64 == 0 ? '#' : 'x';
    const char *argv[] = {"./translate", "-c", "/dev/stdin", "x", NULL};
    RunResult r = run_bounded(argv, yaml, n);
    free(yaml);
    assert_int_equal(r.status, 2);
    expect_in(r.err, "/dev/stdin: more than a config's limit of 1048576 bytes");
    run_result_free(&r);
    /* /dev/zero never ends; a FIFO without a writer is an empty config */
    const char *zero[] = {"./translate", "-c", "/dev/zero", "x", NULL};
    expect_refused(zero, 2, "/dev/zero: more than a config's limit of 1048576 bytes");
    const char *fifo = tmp_path("config.fifo");
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    const char *from_fifo[] = {"./translate", "-c", fifo, "x", NULL};
    r = run_bounded(from_fifo, NULL, 0);
    assert_int_equal(r.status, 2);
    run_result_free(&r);
    /* Its relative paths start from the working directory (the tests run
     * in the repository), not from /dev or /dev/fd. */
    size_t len;
    char *tiny = read_file("configs/tiny.yaml", &len), *from_here = malloc(len + 1), *w = from_here;
    for (const char *p = tiny; *p;) /* "../tests/data/" -> "tests/data/" */
        if (strncmp(p, "../tests/", 9) == 0) p += 3;
        else *w++ = *p++;
    *w = '\0';
    const char *piped[] = {"./translate", "-q", "-c", "/dev/stdin", "-o", "/dev/null", "hello", NULL};
    r = run_bounded(piped, from_here, strlen(from_here));
    if (r.status != 0) fail_msg("status %d: %s", r.status, r.err);
    run_result_free(&r);
    /* /proc's name of a descriptor too, a regular file's (a FIFO's has no
     * folder of its own anyway) */
    config_through_shell("/bin/sh", "exec ./translate -q -c /proc/self/fd/3 -o /dev/null hello 3< '%s'",
                         "by-proc.yaml", from_here);
    /* a pipe whose writer is slow (-c <(...)): read waiting for it, not
     * failing with EAGAIN as the non-blocking open would */
    config_through_shell("/bin/bash",
                         "exec ./translate -q -c /dev/fd/3 -o /dev/null hello 3< <(sleep 0.5; cat '%s')",
                         "slow.yaml", from_here);
    /* the same from a file redirected to standard input (a regular file
     * through /dev/stdin, not /dev's) */
    config_through_shell("/bin/sh", "exec ./translate -q -c /dev/stdin -o /dev/null hello < '%s'",
                         "from-here.yaml", from_here);
    free(tiny);
    free(from_here);
}

/* Only names of descriptors (/dev/stdin, /dev/fd/N, /proc/.../fd/N) read
 * paths from the working directory: a config kept as a file in /dev/shm
 * reads them from its own folder (it read the working directory's model,
 * or wrote one there with random_init_seed). */
static void test_a_config_in_dev_shm_reads_its_own_folder(void **state)
{
    (void)state;
    char dir[128];
    snprintf(dir, sizeof dir, "/dev/shm/translate-test-%d", (int)getpid());
    if (mkdir(dir, 0755) != 0) SKIP_TEST("shm", "mkdir %s: %s", dir, strerror(errno));
    const char *files[] = {"tiny.src.vocab", "tiny.tgt.vocab", "tiny.safetensors"};
    char from[256], to[256];
    for (int i = 0; i < 2; i++) {
        snprintf(from, sizeof from, "tests/data/%s", files[i]);
        snprintf(to, sizeof to, "%s/%s", dir, files[i]);
        size_t len;
        char *bytes = read_file(from, &len);
        FILE *f = fopen(to, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(bytes, 1, len, f), len);
        assert_int_equal(fclose(f), 0);
        free(bytes);
    }
    size_t len;
    char *tiny = read_file("configs/tiny.yaml", &len), *here = malloc(len + 1), *w = here;
    for (const char *p = tiny; *p;) /* "../tests/data/tiny.x" -> "tiny.x" */
        if (strncmp(p, "../tests/data/", 14) == 0) p += 14;
        else *w++ = *p++;
    *w = '\0';
    snprintf(to, sizeof to, "%s/tiny.yaml", dir);
    write_text(to, here);
    const char *argv[] = {"./translate", "-q", "-c", to, "-o", "/dev/null", "hello", NULL};
    RunResult r = run_bounded(argv, NULL, 0);
    snprintf(from, sizeof from, "%s/tiny.safetensors", dir); /* random_init_seed wrote it there */
    bool beside = access(from, F_OK) == 0;
    for (int i = 0; i < 3; i++) {
        snprintf(from, sizeof from, "%s/%s", dir, files[i]);
        unlink(from);
    }
    unlink(to);
    rmdir(dir);
    free(tiny);
    free(here);
    if (r.status != 0) fail_msg("status %d: %s", r.status, r.err);
    assert_true(beside);
    run_result_free(&r);
}

/* ---- weights files that change or lie ------------------------------------------- */

/* Truncated after its header was checked (as by a second process while a
 * model loads): an Error naming the file, never SIGBUS. */
static void test_weights_truncated_while_loading(void **state)
{
    (void)state;
    enum { N = 100000 };
    float *x = calloc(N, sizeof *x);
    SafeWriteTensor t = {.name = "x", .ndim = 1, .shape = {N}, .data = x};
    const char *path = tmp_path("shrinking.safetensors");
    Error err = {{0}};
    assert_int_equal(safetensors_write(path, &t, 1, NULL, 0, &err), 0);
    SafeFile f;
    assert_int_equal(safetensors_open(path, &f, &err), 0);
    assert_int_equal(truncate(path, 200), 0);
    assert_int_equal(safetensors_to_f32(&f, &f.tensors[0], x, &err), -1);
    expect_in(err.message, "shrinking.safetensors: tensor 'x': cannot read: the file ended early");
    safetensors_close(&f);
    free(x);
}

/* A header just under the 100 MB limit that is one long array of zeros
 * cost 4.26 GB and 26 s in cJSON; the model's header bound refuses it
 * before reading it.  (30 MB here: enough to be slow and big before.) */
static void test_a_huge_header_is_refused_before_parsing(void **state)
{
    (void)state;
    size_t n = 30u << 20;
    char *header = malloc(n + 8);
    const char *open_part = "{\"x\":{\"dtype\":\"F32\",\"data_offsets\":[0,0],\"shape\":[";
    size_t at = 8 + strlen(open_part);
    memcpy(header + 8, open_part, strlen(open_part));
    while (at < n + 8 - 4) {
        header[at++] = '0';
        header[at++] = ',';
    }
    memcpy(header + at - 1, "0]}}", 4);
    at += 3;
    for (; at < n + 8; at++) header[at] = ' ';
    for (int i = 0; i < 8; i++) header[i] = (char)((uint64_t)n >> (8 * i));
    const char *weights = temp_file("zeros.safetensors", header, n + 8);
    free(header);
    char cwd[512], vocab[600];
    if (!getcwd(cwd, sizeof cwd)) abort();
    snprintf(vocab, sizeof vocab, "%s/tests/data/tiny.src.vocab", cwd);
    const char *config = config_reading("zeros.yaml", absolute(weights), vocab);
    const char *argv[] = {"./translate", "-q", "-c", config, "x", NULL};
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    RunResult r = run_bounded(argv, NULL, 0);
    double took = seconds_since(&t0);
    unlink(weights);
    if (r.status != 3 || count_lines(r.err) != 1 || took > 2.0 || r.max_rss_kb > 200 * 1024)
        fail_msg("status %d, %.1f s, %ld MB, stderr: %s", r.status, took, r.max_rss_kb / 1024, r.err);
    expect_in(r.err, "zeros.safetensors: header length 31457280 exceeds the");
    run_result_free(&r);
}

static const char *write_header_file(const char *name, const char *json)
{
    size_t n = strlen(json);
    char *bytes = malloc(n + 8);
    for (int i = 0; i < 8; i++) bytes[i] = (char)((uint64_t)n >> (8 * i));
    memcpy(bytes + 8, json, n);
    const char *path = temp_file(name, bytes, n + 8);
    free(bytes);
    return path;
}

static void expect_header_refused(const char *json, const char *phrase)
{
    const char *path = write_header_file("lying.safetensors", json);
    SafeFile f;
    Error err = {{0}};
    if (safetensors_open(path, &f, &err) == 0) {
        safetensors_close(&f);
        fail_msg("accepted: %s", json);
    }
    expect_in(err.message, phrase);
}

static void test_nul_names_and_duplicate_metadata_are_refused(void **state)
{
    (void)state;
    expect_header_refused("{\"a\\u0000b\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}}",
                          "holds \\u0000 (a NUL character) at byte 3");
    expect_header_refused("{\"__metadata__\":{\"k\\u0000\":\"v\"}}", "holds \\u0000");
    /* a raw control byte (JSON allows it only escaped; cJSON took it, and a
     * raw NUL cut the name as \u0000 did) */
    expect_header_refused("{\"a\001b\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}}",
                          "holds the control character 0x01 at byte 3");
    expect_header_refused("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}",
                          "'k' appears twice in __metadata__");
    expect_header_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},"
                          "\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}}",
                          "'a' appears twice in the header");
    /* an escaped backslash before "u0000" is no NUL */
    const char *ok = write_header_file("ok.safetensors", "{\"__metadata__\":{\"k\":\"\\\\u0000\"}}");
    SafeFile f;
    Error err = {{0}};
    assert_int_equal(safetensors_open(ok, &f, &err), 0);
    assert_string_equal(safetensors_meta(&f, "k"), "\\u0000");
    safetensors_close(&f);
}

/* ---- line endings, byte-order marks -------------------------------------------- */

static void test_a_full_length_line_is_accepted_with_crlf_too(void **state)
{
    (void)state;
    enum { MAX = 16 };
    const char *text = "0123456789abcdef\r\n0123456789abcdef\n0123456789abcdefg\r\nx\ry\r";
    FILE *in = fmemopen((void *)text, strlen(text), "rb");
    char buf[MAX + 1];
    assert_int_equal(line_read(in, buf, MAX), MAX);
    assert_int_equal(line_read(in, buf, MAX), MAX);
    assert_int_equal(line_read(in, buf, MAX), LINE_TOO_LONG);
    assert_int_equal(line_read(in, buf, MAX), 3); /* a lone CR is kept, a final one is not */
    assert_memory_equal(buf, "x\ry", 4);
    assert_int_equal(line_read(in, buf, MAX), LINE_EOF);
    fclose(in);
    /* the same through translate's standard input: 65,536 bytes */
    size_t n = 65536;
    char *line = malloc(n + 2);
    memset(line, 'a', n);
    memcpy(line + n, "\r\n", 2);
    const char *argv[] = {"./translate", "-q", "-c", TINY, NULL};
    RunResult r = run_program(argv, line, n + 2);
    free(line);
    assert_null(strstr(r.err, "longer than"));
    run_result_free(&r);
}

/* A LineReader (common/line.h) hands out the lines line_read_or_stop reads
 * from the same bytes: CRLF, a lone CR, a final CR, NUL bytes, a last line
 * without "\n", lines of max bytes and one more, lines across its 64 KiB
 * reads; from a file, and from a pipe that delivers 7 bytes at a time. */
static void expect_same_lines(const char *what, const char *text, size_t len, size_t max, bool pipe_it)
{
    FILE *in = fmemopen((void *)text, len, "rb");
    int fd, fds[2] = {-1, -1};
    pid_t writer = -1;
    if (!pipe_it) {
        fd = open(temp_file("lines.txt", text, len), O_RDONLY);
    } else {
        assert_int_equal(pipe(fds), 0);
        fflush(NULL);
        writer = fork();
        assert_true(writer >= 0);
        if (writer == 0) {
            close(fds[0]);
            for (size_t at = 0; at < len; at += 7)
                if (write(fds[1], text + at, len - at < 7 ? len - at : 7) < 0) _exit(1);
            _exit(0);
        }
        close(fds[1]);
        fd = fds[0];
    }
    assert_true(fd >= 0);
    LineReader r;
    line_reader_init(&r, fd, max);
    char *want = malloc(max + 1), *got;
    for (int line = 1;; line++) {
        long a = line_read_or_stop(in, want, max), b = line_reader_next(&r, &got);
        if (a != b) fail_msg("%s: line %d: line_read_or_stop %ld, LineReader %ld", what, line, a, b);
        if (a < 0) break;
        if (memcmp(want, got, (size_t)a + 1) != 0) fail_msg("%s: line %d differs", what, line);
    }
    line_reader_free(&r);
    free(want);
    fclose(in);
    close(fd);
    if (writer > 0) waitpid(writer, NULL, 0);
}

static void test_a_line_reader_reads_what_line_read_reads(void **state)
{
    (void)state;
    static const char *const small[] = {
        "", "\n", "a", "a\n", "a\r", "a\r\n", "\r", "\r\n\r\n", "a\rb\n", "a\r\rb\r\r\n",
        "ab\n\ncd", "0123456789abcdef\r\n0123456789abcdef\n", "0123456789abcdefg\n", "0123456789abcdef\r",
        "0123456789abcdef\rx\n", "0123456789abcdefgh", "x\n0123456789abcdefghijklmnop\nmore\n",
    };
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++)
        for (int p = 0; p < 2; p++) expect_same_lines(small[i], small[i], strlen(small[i]), 16, p);
    static const char nul[] = "a\0b\nc\0\n";
    expect_same_lines("NUL bytes", nul, sizeof nul - 1, 16, false);
    /* Lines of MAX - 1, MAX and MAX + 1 bytes with each ending, placed so
     * that one ends, or its "\r\n" is split, where the reader's first
     * read (MAX + 2 + 64 KiB) ends. */
    enum { MAX = 4096, FIRST_READ = MAX + 2 + 65536 };
    char *text = malloc(2 * FIRST_READ);
    for (size_t edge = FIRST_READ - 3; edge <= FIRST_READ + 2; edge++)
        for (int extra = -1; extra <= 1; extra++)
            for (int ending = 0; ending < 3; ending++) {
                static const char *const endings[] = {"\n", "\r\n", "\r"};
                size_t n = 0, line = (size_t)(MAX + extra);
                while (n + 100 < edge - line) {
                    memset(text + n, 'f', 60);
                    text[n + 60] = '\n';
                    n += 61;
                }
                memset(text + n, 'p', edge - line - n - 1); /* the long line ends at `edge` */
                n = edge - line;
                text[n - 1] = '\n';
                memset(text + n, 'L', line);
                n += line;
                memcpy(text + n, endings[ending], strlen(endings[ending]));
                n += strlen(endings[ending]);
                memcpy(text + n, "tail\n", 5);
                char what[64];
                snprintf(what, sizeof what, "edge %zu, %zu bytes, ending %d", edge, line, ending);
                expect_same_lines(what, text, n + 5, MAX, false);
                expect_same_lines(what, text, n, MAX, false); /* the long line last */
                if (edge == FIRST_READ && extra == 0) expect_same_lines(what, text, n + 5, MAX, true);
            }
    free(text);
}

static void test_a_lone_cr_in_a_tsv_line_is_kept(void **state)
{
    (void)state;
    const char *tsv = temp_file("cr.tsv", "a\rb\tc\rd\r\ne\tf\n", 13);
    Corpus c;
    Error err = {{0}};
    assert_int_equal(corpus_load(tsv, 0, 1, &c, &err), 0);
    assert_int_equal(c.count, 2);
    assert_string_equal(c.source[0], "a\rb");
    assert_string_equal(c.target[0], "c\rd");
    assert_string_equal(c.source[1], "e");
    corpus_free(&c);
}

static void test_a_vocabulary_with_a_bom_loads(void **state)
{
    (void)state;
    const char *text = "\xEF\xBB\xBF<pad>\t<pad>\t0\n<unk>\t<unk>\t0\n<s>\t<s>\t0\n</s>\t</s>\t0\nhi\tHi\t3\n";
    const char *path = temp_file("bom.vocab", text, strlen(text));
    Error err = {{0}};
    Vocab *v = vocab_load(path, &err);
    if (!v) fail_msg("%s", err.message);
    assert_int_equal(vocab_size(v), 5);
    assert_int_equal(vocab_id(v, "hi"), 4);
    vocab_free(v);
}

/* A BOM is skipped before the first line only: later, the same bytes are
 * text (the tokenizer drops U+FEFF as a format character). */
static void test_a_tsv_with_a_bom_loads_its_first_line_whole(void **state)
{
    (void)state;
    assert_int_equal(utf8_bom_length("\xEF\xBB\xBFx", 4), 3);
    assert_int_equal(utf8_bom_length("\xEF\xBB\xBF", 3), 3);
    assert_int_equal(utf8_bom_length("\xEF\xBB", 2), 0);
    assert_int_equal(utf8_bom_length("x\xEF\xBB\xBF", 4), 0);
    assert_int_equal(utf8_bom_length("", 0), 0);
    const char *text = "\xEF\xBB\xBFhi\tHi\n\xEF\xBB\xBFyo\tYo\n";
    const char *tsv = temp_file("bom.tsv", text, strlen(text));
    Corpus c;
    Error err = {{0}};
    assert_int_equal(corpus_load(tsv, 0, 1, &c, &err), 0);
    assert_int_equal(c.count, 2);
    assert_string_equal(c.source[0], "hi");
    assert_string_equal(c.source[1], "\xEF\xBB\xBFyo");
    corpus_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attention_to_a_fifo_keeps_the_fifo),
        cmocka_unit_test(test_outputs_to_a_device_keep_the_device),
        cmocka_unit_test(test_outputs_to_a_full_device_are_status_4),
        cmocka_unit_test(test_large_writes_to_a_full_device_fail_cleanly),
        cmocka_unit_test(test_a_symlink_is_followed_and_stays_a_link),
        cmocka_unit_test(test_a_read_only_file_is_not_replaced),
        cmocka_unit_test(test_an_output_that_is_standard_output_appends),
        cmocka_unit_test(test_two_concurrent_writers_leave_a_whole_file),
        cmocka_unit_test(test_nested_writers_never_share_a_temporary),
        cmocka_unit_test(test_abort_leaves_the_old_file_and_no_temporary),
        cmocka_unit_test(test_a_users_file_beside_an_output_is_kept),
        cmocka_unit_test(test_failed_writes_leave_the_old_files),
        cmocka_unit_test(test_a_config_error_keeps_the_old_logits),
        cmocka_unit_test(test_an_output_never_replaces_an_input),
        cmocka_unit_test(test_weights_and_vocabularies_that_are_fifos_or_devices),
        cmocka_unit_test(test_train_data_that_is_a_fifo_or_a_device),
        cmocka_unit_test(test_a_huge_sparse_line_is_not_read_whole),
        cmocka_unit_test(test_a_config_one_byte_over_the_limit),
        cmocka_unit_test(test_a_config_from_a_pipe_has_the_same_limit),
        cmocka_unit_test(test_a_config_in_dev_shm_reads_its_own_folder),
        cmocka_unit_test(test_weights_truncated_while_loading),
        cmocka_unit_test(test_a_huge_header_is_refused_before_parsing),
        cmocka_unit_test(test_nul_names_and_duplicate_metadata_are_refused),
        cmocka_unit_test(test_a_full_length_line_is_accepted_with_crlf_too),
        cmocka_unit_test(test_a_line_reader_reads_what_line_read_reads),
        cmocka_unit_test(test_a_lone_cr_in_a_tsv_line_is_kept),
        cmocka_unit_test(test_a_vocabulary_with_a_bom_loads),
        cmocka_unit_test(test_a_tsv_with_a_bom_loads_its_first_line_whole),
    };
    return cmocka_run_group_tests_name("files", tests, NULL, NULL);
}
