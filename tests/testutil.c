/* testutil.c — see testutil.h. */
#define _XOPEN_SOURCE 700 /* nftw, FTW_DEPTH */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../model/safetensors.h"

static void append(char **buf, size_t *len, size_t *cap, const char *data, size_t n)
{
    if (*len + n + 1 > *cap) {
        *cap = (*len + n + 1) * 2;
        *buf = realloc(*buf, *cap);
        if (!*buf) abort();
    }
    memcpy(*buf + *len, data, n);
    *len += n;
    (*buf)[*len] = '\0';
}

const char *test_program(const char *argv0)
{
    static char path[8][512];
    static int next;
    const char *dir = getenv("TEST_BIN_DIR");
    if (!dir || !*dir || strncmp(argv0, "./", 2) != 0 || strchr(argv0 + 2, '/')) return argv0;
    char *p = path[next++ % 8];
    snprintf(p, sizeof path[0], "%s/%s", dir, argv0 + 2);
    return p;
}

RunResult run_program(const char *const argv[], const char *input, size_t input_len)
{
    RunResult r = {0};
    int in[2], out[2], err[2];
    if (pipe(in) || pipe(out) || pipe(err)) abort();
    signal(SIGPIPE, SIG_IGN);
    pid_t pid = fork();
    if (pid < 0) abort();
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        close(in[0]); close(in[1]); close(out[0]); close(out[1]); close(err[0]); close(err[1]);
        execv(test_program(argv[0]), (char *const *)argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(in[0]); close(out[1]); close(err[1]);
    size_t out_cap = 0, err_cap = 0, written = 0;
    append(&r.out, &r.out_len, &out_cap, "", 0);
    append(&r.err, &r.err_len, &err_cap, "", 0);
    if (!input || input_len == 0) { close(in[1]); in[1] = -1; }
    int open_fds = 2;
    while (open_fds > 0 || in[1] >= 0) {
        struct pollfd fds[3] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}, {in[1], POLLOUT, 0}};
        nfds_t nfds = in[1] >= 0 ? 3 : 2;
        if (poll(fds, nfds, -1) < 0) { if (errno == EINTR) continue; abort(); }
        char buf[65536];
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
                ssize_t n = read(fds[i].fd, buf, sizeof buf);
                if (n > 0) {
                    if (i == 0) append(&r.out, &r.out_len, &out_cap, buf, (size_t)n);
                    else append(&r.err, &r.err_len, &err_cap, buf, (size_t)n);
                } else {
                    close(fds[i].fd);
                    if (i == 0) out[0] = -1; else err[0] = -1;
                    open_fds--;
                }
            }
        }
        if (in[1] >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t n = write(in[1], input + written, input_len - written);
            if (n > 0) written += (size_t)n;
            if (n < 0 || written == input_len) { close(in[1]); in[1] = -1; }
        }
        if (out[0] < 0 && err[0] < 0) break;
    }
    if (in[1] >= 0) close(in[1]);
    int status = 0;
    struct rusage usage = {0};
    wait4(pid, &status, 0, &usage);
    r.max_rss_kb = usage.ru_maxrss;
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
}

void run_result_free(RunResult *r)
{
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof *r);
}

void print_in_full(const RunResult *r)
{
    fflush(stdout);
    fwrite(r->out, 1, r->out_len, stdout);
    fflush(stdout);
    fwrite(r->err, 1, r->err_len, stderr);
}

int count_lines(const char *s)
{
    int n = 0;
    const char *p = s;
    for (; *p; p++)
        if (*p == '\n') n++;
    if (p > s && p[-1] != '\n') n++;
    return n;
}

int count_lines_without(const char *s, const char *skip)
{
    int n = 0;
    size_t skip_len = strlen(skip);
    for (const char *p = s; *p;) {
        size_t len = strcspn(p, "\n");
        bool found = false;
        for (size_t i = 0; !found && i + skip_len <= len; i++) found = memcmp(p + i, skip, skip_len) == 0;
        if (!found) n++;
        p += len + (p[len] == '\n');
    }
    return n;
}

/* cmocka's "[ RUN ]" lines reach tests/run_tests.sh's log (a file) as
 * each test starts, not a buffer later: its timeout names the test that
 * hung from them. */
__attribute__((constructor)) static void line_buffered_stdout(void) { setvbuf(stdout, NULL, _IOLBF, 0); }

static char temp_path[256];
static pid_t temp_owner;

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st; (void)flag; (void)ftw;
    return remove(path) == 0 ? 0 : -1;
}

/* on_exit: status 0 means every test passed (cmocka's main returns the
 * number of failures), so the folder is not needed any more. */
static void remove_temp_dir(int status, void *arg)
{
    (void)arg;
    if (getpid() != temp_owner) return; /* a forked child exiting */
    if (status != 0) {
        fprintf(stderr, "testutil: kept %s for debugging (exit status %d)\n", temp_path, status);
        return;
    }
    if (nftw(temp_path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "testutil: could not remove %s: %s\n", temp_path, strerror(errno));
}

const char *temp_dir(void)
{
    if (!temp_path[0]) {
        snprintf(temp_path, sizeof temp_path, "build/tests/tmp-%d", (int)getpid());
        mkdir("build", 0755);
        mkdir("build/tests", 0755);
        mkdir(temp_path, 0755);
        temp_owner = getpid();
        on_exit(remove_temp_dir, NULL);
    }
    return temp_path;
}

const char *temp_file(const char *name, const void *data, size_t len)
{
    static char paths[8][512];
    static int next;
    char *path = paths[next++ % 8];
    snprintf(path, 512, "%s/%s", temp_dir(), name);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (len && fwrite(data, 1, len, f) != len) abort();
    fclose(f);
    return path;
}

void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) fail_msg("%s: cannot write it", path);
}

void expect_file_is(const char *path, const char *text)
{
    char *now = read_file(path, NULL);
    if (!now || strcmp(now, text) != 0)
        fail_msg("%s: expected '%s', found '%s'", path, text, now ? now : "(missing)");
    free(now);
}

char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) append(&buf, &n, &cap, chunk, got);
    fclose(f);
    if (!buf) append(&buf, &n, &cap, "", 0);
    if (len) *len = n;
    return buf;
}

void assert_same_tensors(const char *a_path, const char *b_path, const char *const *keys,
                         size_t n_keys)
{
    SafeFile a, b;
    Error err = {{0}};
    if (safetensors_open(a_path, &a, &err) || safetensors_open(b_path, &b, &err))
        fail_msg("%s", err.message);
    assert_int_equal(a.count, b.count);
    for (size_t i = 0; i < a.count; i++) {
        const SafeTensor *t = safetensors_find(&b, a.tensors[i].name);
        assert_non_null(t);
        assert_int_equal(t->nbytes, a.tensors[i].nbytes);
        char *x = malloc(t->nbytes + 1), *y = malloc(t->nbytes + 1);
        assert_int_equal(safetensors_read_raw(&a, &a.tensors[i], x, &err), 0);
        assert_int_equal(safetensors_read_raw(&b, t, y, &err), 0);
        if (memcmp(x, y, t->nbytes) != 0)
            fail_msg("tensor %s differs between %s and %s", t->name, a_path, b_path);
        free(x);
        free(y);
    }
    for (size_t k = 0; k < n_keys; k++)
        assert_string_equal(safetensors_meta(&a, keys[k]), safetensors_meta(&b, keys[k]));
    safetensors_close(&a);
    safetensors_close(&b);
}

const char *tatoeba_dir(void)
{
    static const char *dir = "../shared/data/tatoeba-cmn-eng";
    const char *env = getenv("TATOEBA_DIR");
    if (env) dir = env;
    return access(dir, R_OK) == 0 ? dir : NULL;
}

int torch_available(void)
{
    static int known = -1;
    if (known < 0) {
        const char *argv[] = {PYTHON_WITH_TORCH, "-c", "import torch", NULL};
        RunResult r = run_program(argv, NULL, 0);
        known = r.status == 0;
        run_result_free(&r);
    }
    return known;
}

#define DIGITS_OF(n) #n
#define DIGITS(n) DIGITS_OF(n) /* a number macro's digits, as a string literal */

RunResult run_under_valgrind(const char *const argv[], const char *input, size_t input_len)
{
#ifdef __SANITIZE_ADDRESS__
    SKIP_TEST("asan", "valgrind cannot run a sanitized program");
#endif
    if (getenv("TEST_EMULATED")) SKIP_TEST("emulated", "valgrind cannot run the emulated program");
    static int installed = -1;
    if (installed < 0) {
        RunResult r = run_program((const char *[]){"/bin/sh", "-c", "command -v valgrind", NULL}, NULL, 0);
        installed = r.status == 0;
        run_result_free(&r);
    }
    if (!installed) SKIP_TEST("valgrind", "valgrind not installed (apt-get install valgrind)");
    /* sh finds valgrind on the PATH; "$@" is the program (test_program's:
     * TEST_BIN_DIR's, as make coverage sets it) and its arguments */
    const char *args[64] = {"/bin/sh", "-c",
                            "exec valgrind -q --leak-check=full --errors-for-leak-kinds=definite,possible "
                            "--error-exitcode=" DIGITS(VALGRIND_FOUND) " \"$@\"",
                            "sh", test_program(argv[0])};
    int n = 5;
    for (int i = 1; argv[i]; i++) {
        if (n == 63) abort();
        args[n++] = argv[i];
    }
    args[n] = NULL;
    return run_program(args, input, input_len);
}

const char *tiny_train_config(const char *dir_name, float label_smoothing, const char *train_extra,
                              char *path, size_t size)
{
    char dir[512], cwd[512], yaml[4096];
    if (!getcwd(cwd, sizeof cwd)) abort();
    snprintf(dir, sizeof dir, "%s/%s", temp_dir(), dir_name);
    mkdir(dir, 0755);
    snprintf(yaml, sizeof yaml,
             "name: %s\nsource_language: en\ntarget_language: zh\n"
             "model:\n  weights: model.safetensors\n  source_vocab: src.vocab\n  target_vocab: tgt.vocab\n"
             "architecture:\n  d_model: 32\n  heads: 2\n  encoder_layers: 2\n  decoder_layers: 2\n"
             "  d_ff: 64\n  activation: relu\n  norm: pre\n  max_len: 32\n  scale_attention: true\n"
             "  tied_output_embedding: true\n"
             "train:\n  train_data: %s/tests/data/tiny.tsv\n  dev_data: %s/tests/data/tiny.tsv\n"
             "  label_smoothing: %.2f\n  clip_norm: 1.0\n  log_steps: 1000\n%s",
             dir_name, cwd, cwd, (double)label_smoothing, train_extra);
    snprintf(path, size, "%s/config.yaml", dir);
    FILE *f = fopen(path, "w");
    if (!f) abort();
    fputs(yaml, f);
    fclose(f);
    return path;
}

const char *subword_tiny_config(const char *dir_name, char *path, size_t size)
{
    tiny_train_config(dir_name, 0.0f, "  source_vocab_size: 530\n  target_vocab_size: 530\n", path, size);
    const char *vocab[] = {"./train", "-q", path, "--vocab", NULL};
    const char *init[] = {"./translate", "-q", "-c", path, "--init-weights", NULL};
    const char *const *steps[] = {vocab, init};
    for (int i = 0; i < 2; i++) {
        RunResult r = run_program(steps[i], NULL, 0);
        if (r.status != 0) fail_msg("%s %s exited %d:\n%s", steps[i][0], path, r.status, r.err);
        run_result_free(&r);
    }
    return path;
}

void expect_in(const char *haystack, const char *needle)
{
    if (!strstr(haystack, needle)) fail_msg("expected '%s' in:\n%s", needle, haystack);
}

void expect_not_in(const char *haystack, const char *needle)
{
    if (strstr(haystack, needle)) fail_msg("did not expect '%s' in:\n%s", needle, haystack);
}

/* out written by write(...) or recased (write NULL), then committed. */
static int write_and_commit(VocabWriter *write, const VocabBuilder *b, const char *path, int max_size,
                            int min_count, Error *err)
{
    OutputFile *out = output_file_open(path, 0, err);
    if (!out) return -1;
    if (write ? write(b, out, max_size, min_count, err) : vocab_builder_recase(b, out, err)) {
        output_file_abort(out);
        return -1;
    }
    return output_file_commit(out, err);
}

int write_vocab_at(VocabWriter *write, const VocabBuilder *b, const char *path, int max_size, int min_count,
                   Error *err)
{
    return write_and_commit(write, b, path, max_size, min_count, err);
}

int recase_vocab_at(const VocabBuilder *b, const char *path, Error *err)
{
    return write_and_commit(NULL, b, path, 0, 0, err);
}
