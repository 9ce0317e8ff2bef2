/* testutil.h — what the cmocka tests share: running our programs as a user
 * would, temporary files, and finding the shared data.
 *
 * Every test file includes this first; it pulls in cmocka in the order
 * cmocka requires. */
#ifndef TRANSLATE_TESTUTIL_H
#define TRANSLATE_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* Result of running a command. */
typedef struct {
    int status;     /* exit status, or 128 + signal number if killed */
    char *out;      /* everything written to stdout (NUL-terminated) */
    size_t out_len;
    char *err;      /* everything written to stderr */
    size_t err_len;
    long max_rss_kb; /* the child's peak resident set size, KiB (getrusage) */
} RunResult;

/* Run argv (argv[0] is looked up relative to the repository root when it
 * contains a '/', e.g. "./translate"), feeding `input` (may be NULL: empty
 * stdin; input_len bytes) on stdin.  Tests run from the repository root. */
RunResult run_program(const char *const argv[], const char *input, size_t input_len);
/* The file to execute for argv[0]: "./translate" and "./train" become
 * $TEST_BIN_DIR/translate and $TEST_BIN_DIR/train when that is set (make
 * asan runs the suite against sanitized builds that way); else argv0. */
const char *test_program(const char *argv0);
void run_result_free(RunResult *r);

/* Print a program's whole output, stdout's to stdout and stderr's to
 * stderr, before a test fails on it: cmocka's print_message and fail_msg
 * cut a message at 1,023 characters (a long report would show only its
 * first "ok" lines). */
void print_in_full(const RunResult *r);

/* Number of lines in s (a final line without '\n' counts). */
int count_lines(const char *s);
/* The same, leaving out the lines that contain `skip`. */
int count_lines_without(const char *s, const char *skip);
/* translate's note on a translation that stopped at the length limit,
 * which an untrained model (configs/tiny.yaml) gives for every line. */
#define CUT_SHORT_NOTE "note: the translation stopped at the length limit"

/* Write `len` bytes to a fresh file under the test temp folder and return
 * its path (static buffer rotation: valid until 8 more calls). */
const char *temp_file(const char *name, const void *data, size_t len);
/* The test temp folder, build/tests/tmp-PID (created once).  It is removed
 * when the program exits with status 0 (every test passed) and kept,
 * named on stderr, for debugging when it exits otherwise. */
const char *temp_dir(void);

/* Fail the test unless `needle` occurs in `haystack`, showing both. */
void expect_in(const char *haystack, const char *needle);
/* ... and that it does not. */
void expect_not_in(const char *haystack, const char *needle);

/* Read a whole file (NULL if unreadable); *len receives its size. */
char *read_file(const char *path, size_t *len);

/* Write `text` to `path` (replacing it), failing the test if it cannot. */
void write_text(const char *path, const char *text);

/* Fail the test unless the file at `path` holds exactly `text`: a file a
 * run must have left as it was. */
void expect_file_is(const char *path, const char *text);

/* Skip the running test, saying why: prints "skipped [TAG]: REASON" (a
 * printf format) and calls cmocka's skip().  tests/run_tests.sh lists
 * every skip with its reason, and counts it as a failure when TAG is in
 * $TRANSLATE_REQUIRE (.ci/run requires "torch browser data fuzz root web").
 * Tags in use: torch, browser, web (the WebAssembly page), data (files
 * outside the repository), fuzz (clang), root (mknod), cpu (kernels the
 * CPU lacks), asan and emulated (what an ASan build or qemu cannot run),
 * valgrind (not installed).
 * Every skip() in tests/ goes through this. */
#define SKIP_TEST(tag, ...)                                                                        \
    do {                                                                                           \
        print_message("skipped [" tag "]: " __VA_ARGS__);                                          \
        print_message("\n");                                                                       \
        skip();                                                                                    \
    } while (0)

/* Fail unless the safetensors files a and b hold the same tensors, byte
 * for byte (bit-identical weights, optimizer state, snapshots), and equal
 * values for the metadata keys[0..n_keys-1]. */
void assert_same_tensors(const char *a_path, const char *b_path, const char *const *keys,
                         size_t n_keys);

/* Debian's python3 with PyTorch, for the reference comparisons. */
#define PYTHON_WITH_TORCH "/usr/bin/python3"
/* Is `import torch` possible there?  (Asked once.) */
int torch_available(void);
/* In a test: skip it, saying why, when torch is not available. */
#define SKIP_WITHOUT_TORCH()                                                                       \
    do {                                                                                           \
        if (!torch_available())                                                                    \
            SKIP_TEST("torch", "python3-torch not installed (apt-get install python3-torch)");      \
    } while (0)

/* The status of run_under_valgrind's program when memcheck found an error
 * or a block "definitely" or "possibly" lost. */
#define VALGRIND_FOUND 99
/* argv (as run_program takes it) run under valgrind's memcheck, which
 * reports on stderr; the test is skipped where valgrind is not installed
 * or cannot run the program (a sanitizer build, an emulated one).  About
 * 50 times slower: keep the run tiny. */
RunResult run_under_valgrind(const char *const argv[], const char *input, size_t input_len);

/* Write the config of the tiny training model (d_model 32, 2+2 layers,
 * trained and evaluated on tests/data/tiny.tsv) into its own folder
 * `dir_name` under the test temp dir; `train_extra` is appended to its
 * train: section.  Returns `path` (size bytes), the YAML file's path. */
const char *tiny_train_config(const char *dir_name, float label_smoothing, const char *train_extra,
                              char *path, size_t size);

/* The tiny training model with subword vocabularies (learned by
 * `train --vocab` from tests/data/tiny.tsv, 530 entries each: the
 * characters and a few merges, so longer words split) and random weights
 * (`translate --init-weights`), in its own folder `dir_name`.  Returns
 * `path`, the config's path; fails the test when a step fails. */
const char *subword_tiny_config(const char *dir_name, char *path, size_t size);

/* Path of the Tatoeba data folder, or NULL when it is not there
 * (tests that need it skip). */
const char *tatoeba_dir(void);

/* A vocabulary file written at `path` by one of tokenizer/vocab.h's
 * writers (vocab_builder_write or _write_subword): opened, written and
 * committed as one.  0, or -1 with err (nothing written). */
#include "../tokenizer/vocab.h"
typedef int VocabWriter(const VocabBuilder *b, OutputFile *out, int max_size, int min_count, Error *err);
int write_vocab_at(VocabWriter *write, const VocabBuilder *b, const char *path, int max_size, int min_count,
                   Error *err);
/* The same for vocab_builder_recase: the vocabulary at `path` recased. */
int recase_vocab_at(const VocabBuilder *b, const char *path, Error *err);

#endif
