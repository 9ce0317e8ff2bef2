/* test_bad_input.c — the bad-input matrix, end to end: ./translate run as a
 * user runs it, fed every kind of broken text, config and weights file we
 * know of.  Each test checks the exit status, that stderr says what is
 * wrong and where in ONE line, and that nothing else is lost (the other
 * lines of a batch are translated, in order; the translation is printed
 * even when an output file cannot be written).
 *
 * tests/test_cli.c already covers: a bad UTF-8 byte in a batch, empty and
 * blank lines, 40 tokens > max_len, a 1 MB line (rejected), CRLF == LF,
 * an unknown word, a missing config, a config that is a directory, a YAML
 * syntax error, truncated weights, d_model disagreeing with the weights, and
 * an --attention path in a missing folder.  This file adds the rest. */
#include "testutil.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TINY "configs/tiny.yaml"
#define TINY_WEIGHTS "tests/data/tiny.safetensors"

static RunResult run(const char *const argv[], const char *input, size_t len)
{
    return run_program(argv, input, len);
}

/* The n-th line (0-based) of s, copied into buf. */
static const char *line_of(const char *s, int n, char *buf, size_t size)
{
    for (int i = 0; i < n && s; i++) {
        s = strchr(s, '\n');
        if (s) s++;
    }
    if (!s) return "(no such line)";
    snprintf(buf, size, "%.*s", (int)strcspn(s, "\n"), s);
    return buf;
}

/* What translate prints for one good sentence given alone. */
static char *translation_of(const char *text)
{
    const char *argv[] = {"./translate", "-q", "-c", TINY, text, NULL};
    RunResult r = run(argv, NULL, 0);
    assert_int_equal(r.status, 0);
    char *out = strdup(r.out);
    run_result_free(&r);
    return out;
}

/* ---- bad text, one sentence at a time ------------------------------------------- */

/* `input` (len bytes) as the only line of stdin: status 1, one stderr line
 * with `phrase`, and one empty stdout line standing in for it. */
static void expect_bad_line(const char *input, size_t len, const char *phrase)
{
    const char *argv[] = {"./translate", "-c", TINY, NULL};
    RunResult r = run(argv, input, len);
    assert_int_equal(r.status, 1);
    assert_string_equal(r.out, "\n");
    expect_in(r.err, phrase);
    assert_int_equal(count_lines(r.err), 1);
    run_result_free(&r);
}

static void test_overlong_utf8(void **state)
{
    (void)state;
    expect_bad_line("ab \xC0\xAF\n", 6, "line 1: invalid UTF-8 at byte 3"); /* '/' in two bytes */
    expect_bad_line("\xE0\x80\xAF\n", 4, "line 1: invalid UTF-8 at byte 0"); /* ... in three */
}

static void test_utf16_surrogate_in_utf8(void **state)
{
    (void)state;
    expect_bad_line("x \xED\xA0\x80 y\n", 8, "line 1: invalid UTF-8 at byte 2"); /* U+D800 */
}

static void test_truncated_utf8_sequence(void **state)
{
    (void)state;
    expect_bad_line("ends \xE6\x88\n", 8, "line 1: invalid UTF-8 at byte 5");   /* 我 cut short */
    expect_bad_line("\xE6\x88 mid\n", 7, "line 1: invalid UTF-8 at byte 0");
}

static void test_nul_byte_in_a_line(void **state)
{
    (void)state;
    expect_bad_line("I love\0 China.\n", 15, "line 1: NUL byte at byte 6");
    /* zh-en reads Traditional characters as Simplified, and 唻 (3 bytes)
     * becomes 𫫁 (4): the byte named is still the one the user wrote, not
     * the converted copy's (it said byte 12) */
    const char *argv[] = {"./translate", "-q", "-t", "1", "-c", "zh-en", NULL};
    RunResult r = run(argv, "唻唻唻\0x\n", 12);
    assert_int_equal(r.status, 1);
    expect_in(r.err, "line 1: NUL byte at byte 9");
    run_result_free(&r);
}

static void test_empty_stdin_is_no_work(void **state)
{
    (void)state;
    /* No line at all is not an error: nothing to translate, nothing printed. */
    const char *argv[] = {"./translate", "-c", TINY, NULL};
    RunResult r = run(argv, "", 0);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.out_len, 0);
    assert_int_equal(r.err_len, 0);
    run_result_free(&r);
}

/* A name holding a newline or a carriage return (a file name may) is said
 * on one line, the character as a space: raw, a "\r" let the rest of the
 * message overwrite its start on a terminal. */
static void test_a_name_with_a_line_break_is_said_on_one_line(void **state)
{
    (void)state;
    const char *names[] = {"no\rsuch.yaml", "no/such\r.yaml", "no\nsuch.yaml", "/tmp/no\nsuch/x.yaml"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        RunResult r = run((const char *[]){"./translate", "-c", names[i], "x", NULL}, NULL, 0);
        assert_int_equal(r.status, 2);
        assert_int_equal(count_lines(r.err), 1);
        if (strchr(r.err, '\r')) fail_msg("'%s': a raw CR in: %s", names[i], r.err);
        run_result_free(&r);
    }
    RunResult r = run((const char *[]){"./translate", "-c", TINY, "-i", "no\rsuch.txt", NULL}, NULL, 0);
    assert_int_equal(r.status, 1);
    assert_string_equal(r.err, "translate: no such.txt: cannot open: No such file or directory\n");
    run_result_free(&r);
    /* an option's value, or an option itself, in the command line's messages */
    const struct {
        const char *args[3], *want;
    } options[] = {
        {{"-b", "2\r", "hello"}, "translate: --beam: expected a number from 1 to 64, got '2 '\n"},
        {{"-o", "-x\ny", "hello"},
         "translate: -o/--output needs a file name, not the option-like '-x y' (a file of that name is ./-x y)\n"},
        {{"--x\ry", "hello"},
         "translate: unknown option --x y (try 'translate --help'; a sentence that starts with '-' goes after "
         "--: translate -- '-5 degrees')\n"},
    };
    for (size_t i = 0; i < sizeof options / sizeof *options; i++) {
        const char *argv[] = {"./translate", options[i].args[0], options[i].args[1], options[i].args[2], NULL};
        r = run(argv, NULL, 0);
        assert_int_equal(r.status, 2);
        assert_string_equal(r.err, options[i].want);
        run_result_free(&r);
    }
}

/* A config whose name holds a line break, naming a vocabulary that is not
 * there: the config's name goes before the vocabulary's message
 * (error_prefix), on the same one line. */
static void test_a_config_name_with_a_line_break_prefixes_one_line(void **state)
{
    (void)state;
    char cwd[512], dir[600], path[700], yaml[2048];
    if (!getcwd(cwd, sizeof cwd)) abort();
    snprintf(dir, sizeof dir, "%s/line-break", temp_dir());
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/my\nmodel.yaml", dir);
    char *tiny = read_file(TINY, NULL);
    assert_non_null(tiny);
    snprintf(yaml, sizeof yaml,
             "name: tiny\nsource_language: en\ntarget_language: zh\nmodel:\n"
             "  weights: %s/tests/data/tiny.safetensors\n  source_vocab: /nonexistent/src.vocab\n"
             "  target_vocab: %s/tests/data/tiny.tgt.vocab\n%s",
             cwd, cwd, strstr(tiny, "architecture:"));
    free(tiny);
    write_text(path, yaml);
    RunResult r = run((const char *[]){"./translate", "-c", path, "Hello.", NULL}, NULL, 0);
    assert_int_equal(r.status, 3);
    if (count_lines(r.err) != 1) fail_msg("%d lines: %s", count_lines(r.err), r.err);
    expect_in(r.err, "/my model.yaml: /nonexistent/src.vocab: cannot open");
    run_result_free(&r);
}

/* A message is said whole however long the name in it: cli_say wrote it
 * into an Error's 512 bytes, and a 600-byte name cut off the message's
 * end, the part that says what to do. */
static void test_a_long_name_leaves_the_message_whole(void **state)
{
    (void)state;
    char name[601];
    memset(name, 'x', 600);
    name[600] = '\0';
    RunResult r = run((const char *[]){"./translate", "-c", name, "x", NULL}, NULL, 0);
    assert_int_equal(r.status, 2);
    expect_in(r.err, "x: no such file, and no config of that name (translate --list-models lists them)\n");
    assert_int_equal(count_lines(r.err), 1);
    run_result_free(&r);
}

/* A file option's value that looks like an option is refused, and no file
 * of that name is made (-o --html wrote a file named --html). */
static void test_an_output_named_like_an_option_is_refused(void **state)
{
    (void)state;
    RunResult r = run((const char *[]){"./translate", "-q", "-c", TINY, "-o", "--html", "hello", NULL}, NULL, 0);
    int made = access("--html", F_OK) == 0;
    if (made) unlink("--html");
    assert_false(made);
    assert_int_equal(r.status, 2);
    expect_in(r.err, "-o/--output needs a file name, not the option-like '--html'");
    assert_string_equal(r.out, "");
    run_result_free(&r);
}

static void test_empty_and_blank_arguments(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "-c", TINY, "", " \t\xE3\x80\x80 ", NULL}; /* U+3000 too */
    RunResult r = run(argv, NULL, 0);
    assert_int_equal(r.status, 1);
    assert_string_equal(r.out, "\n\n");
    expect_in(r.err, "line 1: empty input");
    expect_in(r.err, "line 2: empty input");
    assert_int_equal(count_lines(r.err), 2);
    run_result_free(&r);
}

/* max_len is a hard limit on the source (32 tokens for tiny.yaml): a
 * longer sentence is an error, not silently cut (README: "Bad input"). */
static void test_max_len_is_a_hard_limit_on_tokens(void **state)
{
    (void)state;
    char text[400] = "";
    for (int i = 0; i < 32; i++) strcat(text, "love ");
    const char *argv[] = {"./translate", "-c", TINY, text, NULL};
    RunResult r = run(argv, NULL, 0);
    assert_int_equal(r.status, 0); /* exactly max_len: translated */
    assert_int_equal(count_lines(r.out), 1);
    run_result_free(&r);
    strcat(text, "love");
    r = run(argv, NULL, 0);
    assert_int_equal(r.status, 1);
    assert_string_equal(r.out, "\n");
    expect_in(r.err, "line 1: 33 tokens, more than max_len 32 of configs/tiny.yaml");
    assert_int_equal(count_lines(r.err), 1);
    run_result_free(&r);
}

static void test_only_unknown_words_still_translate(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "-c", TINY, "Zanzibar Xylophone", NULL};
    RunResult r = run(argv, NULL, 0);
    assert_int_equal(r.status, 0);
    assert_int_equal(count_lines(r.out), 1);
    expect_in(r.err, "line 1: note: 2 unknown words mapped to <unk>: 'Zanzibar', 'Xylophone'");
    assert_int_equal(count_lines_without(r.err, CUT_SHORT_NOTE), 1);
    run_result_free(&r);
}

static void test_crlf_without_final_newline(void **state)
{
    (void)state;
    char *want = translation_of("How are you?");
    const char *argv[] = {"./translate", "-q", "-c", TINY, NULL};
    RunResult r = run(argv, "How are you?\r", 13); /* last line, CR, no LF */
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, want);
    run_result_free(&r);
    free(want);
}

/* A 1 MB line is refused without being held: the peak memory of the run
 * stays within 64 MB of a run that translates one short line. */
static void test_megabyte_line_uses_bounded_memory(void **state)
{
    (void)state;
    size_t n = 1 << 20;
    char *input = malloc(n + 32);
    for (size_t i = 0; i < n; i++) input[i] = i % 2 ? ' ' : 'a'; /* 512k tokens if read whole */
    strcpy(input + n, "\nI love China.\n");
    const char *argv[] = {"./translate", "-c", TINY, NULL};
    RunResult base = run(argv, "I love China.\n", 14);
    RunResult r = run(argv, input, strlen(input));
    assert_int_equal(r.status, 1);
    assert_int_equal(count_lines(r.out), 2);
    char a[4096], b[4096];
    assert_string_equal(line_of(r.out, 1, a, sizeof a), line_of(base.out, 0, b, sizeof b));
    expect_in(r.err, "line 1: longer than 65536 bytes");
    assert_int_equal(count_lines_without(r.err, CUT_SHORT_NOTE), 1);
    if (r.max_rss_kb > base.max_rss_kb + 64 * 1024)
        fail_msg("peak RSS %ld KiB, baseline %ld KiB", r.max_rss_kb, base.max_rss_kb);
    /* the same line as the last one, without a newline */
    input[n] = '\0';
    RunResult last = run(argv, input, n);
    assert_int_equal(last.status, 1);
    assert_string_equal(last.out, "\n");
    assert_int_equal(count_lines(last.err), 1);
    free(input);
    run_result_free(&base);
    run_result_free(&r);
    run_result_free(&last);
}

/* ---- one batch, every kind of bad line among good ones ------------------------- */

static void test_batch_translates_every_good_line_in_order(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        size_t len;          /* 0: strlen */
        const char *error;   /* NULL: a good line */
    } lines[] = {
        {"I love China.", 0, NULL},
        {"\xC0\xAF overlong", 0, "invalid UTF-8 at byte 0"},
        {"How are you?", 0, NULL},
        {"x \xED\xA0\x80", 0, "invalid UTF-8 at byte 2"},
        {"cut \xE6\x88", 0, "invalid UTF-8 at byte 4"},
        {"I want to eat fish.", 0, NULL},
        {"nul\0byte", 8, "NUL byte at byte 3"},
        {"", 0, "empty input"},
        {" \t ", 0, "empty input"},
        {"How are you?\r", 0, NULL},
        {"love love love love love love love love love love love love love love love love "
         "love love love love love love love love love love love love love love love love love",
         0, "33 tokens, more than max_len 32"},
        {"I love China.", 0, NULL},
    };
    enum { N = sizeof lines / sizeof lines[0] };
    size_t cap = 100000, len = 0;
    char *input = malloc(cap);
    for (int i = 0; i < N; i++) {
        size_t n = lines[i].len ? lines[i].len : strlen(lines[i].text);
        memcpy(input + len, lines[i].text, n);
        len += n;
        input[len++] = '\n';
        if (i == 6) { /* and a line over the 65,536-byte limit */
            memset(input + len, 'a', 70000);
            len += 70000;
            input[len++] = '\n';
        }
    }
    const char *argv[] = {"./translate", "-c", TINY, NULL};
    RunResult r = run(argv, input, len);
    assert_int_equal(r.status, 1);
    assert_int_equal(count_lines(r.out), N + 1);
    int bad = 0;
    for (int i = 0, out_line = 0; i < N; i++, out_line++) {
        char got[4096], where[64];
        if (i == 7) { /* the long line came before this one */
            expect_in(r.err, "line 8: longer than 65536 bytes");
            assert_string_equal(line_of(r.out, out_line++, got, sizeof got), "");
            bad++;
        }
        line_of(r.out, out_line, got, sizeof got);
        if (lines[i].error) {
            assert_string_equal(got, "");
            snprintf(where, sizeof where, "line %d: ", out_line + 1);
            expect_in(r.err, where);
            expect_in(r.err, lines[i].error);
            bad++;
        } else {
            char *want = translation_of(lines[i].text[0] == 'H' ? "How are you?" : lines[i].text);
            want[strcspn(want, "\n")] = '\0';
            assert_string_equal(got, want);
            free(want);
        }
    }
    assert_int_equal(count_lines_without(r.err, CUT_SHORT_NOTE), bad); /* one line per bad input line */
    free(input);
    run_result_free(&r);
}

/* ---- broken configs ------------------------------------------------------------- */

/* The tiny config with absolute paths, the given weights file, and `arch`
 * as its architecture: section (NULL: tiny's own). */
static const char *config_with(const char *name, const char *weights, const char *arch)
{
    char cwd[512], yaml[4096];
    if (!getcwd(cwd, sizeof cwd)) abort();
    if (!arch)
        arch = "  d_model: 16\n  heads: 2\n  encoder_layers: 2\n  decoder_layers: 2\n  d_ff: 32\n"
               "  activation: gelu\n  norm: pre\n  max_len: 32\n  scale_attention: true\n"
               "  tied_output_embedding: true\n";
    snprintf(yaml, sizeof yaml,
             "name: broken\nsource_language: en\ntarget_language: zh\nmodel:\n"
             "  weights: %s%s%s\n  source_vocab: %s/tests/data/tiny.src.vocab\n"
             "  target_vocab: %s/tests/data/tiny.tgt.vocab\narchitecture:\n%s",
             weights[0] == '/' ? "" : cwd, weights[0] == '/' ? "" : "/", weights, cwd, cwd, arch);
    return temp_file(name, yaml, strlen(yaml));
}

/* Translating one sentence with `config` fails with `status`, one stderr
 * line holding every phrase, and no output: the model is opened before any
 * sentence is read (issue 14, item 6). */
static void expect_failure(const char *config, int status, const char *phrase, const char *phrase2)
{
    const char *argv[] = {"./translate", "-c", config, "I love China.", NULL};
    RunResult r = run(argv, NULL, 0);
    if (r.status != status) fail_msg("status %d, stderr: %s", r.status, r.err);
    expect_in(r.err, phrase);
    if (phrase2) expect_in(r.err, phrase2);
    assert_int_equal(count_lines(r.err), 1);
    assert_string_equal(r.out, "");
    run_result_free(&r);
}

static void test_config_value_of_the_wrong_type(void **state)
{
    (void)state;
    const char *c = config_with("type1.yaml", TINY_WEIGHTS,
                                "  d_model: sixteen\n  heads: 2\n  encoder_layers: 2\n  decoder_layers: 2\n"
                                "  d_ff: 32\n  activation: gelu\n  norm: pre\n  max_len: 32\n"
                                "  scale_attention: true\n  tied_output_embedding: true\n");
    char want[600];
    snprintf(want, sizeof want, "%s:9:12: architecture.d_model: expected an integer, got 'sixteen'", c);
    expect_failure(c, 2, want, NULL);
    c = config_with("type2.yaml", TINY_WEIGHTS,
                    "  d_model: 16\n  heads: 2\n  encoder_layers: 2\n  decoder_layers: 2\n"
                    "  d_ff: 32\n  activation: gelu\n  norm: pre\n  max_len: [32]\n"
                    "  scale_attention: yes please\n  tied_output_embedding: true\n");
    snprintf(want, sizeof want, "%s:16:12: architecture.max_len: expected an integer, got a list", c);
    expect_failure(c, 2, want, NULL);
}

static void test_config_unknown_key(void **state)
{
    (void)state;
    const char *c = config_with("unknown.yaml", TINY_WEIGHTS,
                                "  d_model: 16\n  heads: 2\n  colour: blue\n  encoder_layers: 2\n"
                                "  decoder_layers: 2\n  d_ff: 32\n  activation: gelu\n  norm: pre\n"
                                "  max_len: 32\n  scale_attention: true\n  tied_output_embedding: true\n");
    char want[600];
    snprintf(want, sizeof want, "%s:11:3: unknown key 'colour' in architecture", c);
    expect_failure(c, 2, want, NULL);
}

static void test_config_larger_than_a_megabyte(void **state)
{
    (void)state;
    size_t n = (1 << 20) + 100;
    char *yaml = malloc(n);
    memset(yaml, '#', n);
    for (size_t i = 80; i < n; i += 81) yaml[i] = '\n'; /* a megabyte of comments */
    const char *c = temp_file("big.yaml", yaml, n);
    free(yaml);
    expect_failure(c, 2, "big.yaml: 1048676 bytes, more than a config's limit of 1048576", NULL);
}

static void test_config_architecture_disagrees_with_weights(void **state)
{
    (void)state;
    const char *c = config_with("relu.yaml", TINY_WEIGHTS,
                                "  d_model: 16\n  heads: 2\n  encoder_layers: 2\n  decoder_layers: 2\n"
                                "  d_ff: 32\n  activation: relu\n  norm: pre\n  max_len: 32\n"
                                "  scale_attention: true\n  tied_output_embedding: true\n");
    expect_failure(c, 3, "tiny.safetensors: config disagrees with the weights: activation is relu "
                         "there but gelu in the file", NULL);
}

/* ---- broken weights files ------------------------------------------------------- */

/* The tiny model's file split into its JSON header and its data. */
typedef struct {
    char *bytes;
    size_t len;
    cJSON *header;
    const char *data;     /* after the header */
    size_t data_len;
} Weights;

static Weights tiny_weights(void)
{
    Weights w = {0};
    w.bytes = read_file(TINY_WEIGHTS, &w.len);
    assert_non_null(w.bytes);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = n << 8 | (unsigned char)w.bytes[i];
    w.header = cJSON_ParseWithLength(w.bytes + 8, (size_t)n);
    assert_non_null(w.header);
    w.data = w.bytes + 8 + n;
    w.data_len = w.len - 8 - (size_t)n;
    return w;
}

static void weights_free(Weights *w)
{
    cJSON_Delete(w->header);
    free(w->bytes);
}

/* Write 8-byte length + header + data as `name`; returns its path. */
static const char *write_weights(const char *name, uint64_t claimed_len, const char *header,
                                 const void *data, size_t data_len)
{
    size_t hlen = strlen(header), total = 8 + hlen + data_len;
    unsigned char *file = malloc(total);
    for (int i = 0; i < 8; i++) file[i] = (unsigned char)(claimed_len >> (8 * i));
    memcpy(file + 8, header, hlen);
    memcpy(file + 8 + hlen, data, data_len);
    const char *path = temp_file(name, file, total);
    free(file);
    return path;
}

/* Write the tiny weights with `w.header` (as edited) and `data`. */
static const char *write_edited(const char *name, const Weights *w, const void *data)
{
    char *json = cJSON_PrintUnformatted(w->header);
    const char *path = write_weights(name, strlen(json), json, data, w->data_len);
    free(json);
    return path;
}

/* A config naming `weights`, run: status 3, one line naming the file. */
static void expect_bad_weights(const char *weights, const char *phrase)
{
    char copy[512];
    snprintf(copy, sizeof copy, "%s", weights);
    const char *name = strrchr(copy, '/') + 1;
    expect_failure(config_with("weights.yaml", copy, NULL), 3, name, phrase);
}

static void test_weights_zero_length(void **state)
{
    (void)state;
    expect_bad_weights(temp_file("empty.safetensors", "", 0), "file is empty (0 bytes)");
}

static void test_weights_shorter_than_the_length_field(void **state)
{
    (void)state;
    expect_bad_weights(temp_file("short.safetensors", "\x10\0\0", 3), "file is 3 bytes, too short");
}

static void test_weights_header_length_beyond_the_file(void **state)
{
    (void)state;
    Weights w = tiny_weights();
    const char *p = write_weights("beyond.safetensors", w.len, "{}", "", 0);
    expect_bad_weights(p, "is beyond the end of the file");
    p = write_weights("huge.safetensors", (uint64_t)1 << 62, "{}", "", 0);
    expect_bad_weights(p, "exceeds the limit of 100000000 bytes");
    weights_free(&w);
}

static void test_weights_header_not_json(void **state)
{
    (void)state;
    const char *p = write_weights("notjson.safetensors", 11, "{\"a\": [1, 2", "", 0);
    expect_bad_weights(p, "header is not valid JSON near byte");
    p = write_weights("array.safetensors", 6, "[1, 2]", "", 0);
    expect_bad_weights(p, "header is not a JSON object");
}

/* An entry's data_offsets set to [begin, end]. */
static void set_offsets(cJSON *entry, double begin, double end)
{
    cJSON_ReplaceItemInObject(entry, "data_offsets", cJSON_CreateDoubleArray((double[]){begin, end}, 2));
}

static void test_weights_offsets_overlapping(void **state)
{
    (void)state;
    Weights w = tiny_weights();
    /* two tensors of one shape, the second moved onto the first */
    cJSON *a = cJSON_GetObjectItem(w.header, "transformer.encoder.norm.weight");
    cJSON *b = cJSON_GetObjectItem(w.header, "transformer.encoder.norm.bias");
    cJSON *offsets = cJSON_GetObjectItem(a, "data_offsets");
    set_offsets(b, cJSON_GetArrayItem(offsets, 0)->valuedouble + 4,
                cJSON_GetArrayItem(offsets, 1)->valuedouble + 4);
    expect_bad_weights(write_edited("overlap.safetensors", &w, w.data), "overlap in the data area");
    weights_free(&w);
}

static void test_weights_offsets_past_the_end(void **state)
{
    (void)state;
    Weights w = tiny_weights();
    cJSON *t = cJSON_GetObjectItem(w.header, "generator.bias");
    cJSON *offsets = cJSON_GetObjectItem(t, "data_offsets");
    double span = cJSON_GetArrayItem(offsets, 1)->valuedouble - cJSON_GetArrayItem(offsets, 0)->valuedouble;
    set_offsets(t, (double)w.data_len, (double)w.data_len + span);
    expect_bad_weights(write_edited("past.safetensors", &w, w.data),
                       "tensor 'generator.bias': data_offsets end");
    weights_free(&w);
}

static void test_weights_wrong_dtype(void **state)
{
    (void)state;
    Weights w = tiny_weights();
    cJSON *t = cJSON_GetObjectItem(w.header, "generator.bias");
    cJSON_ReplaceItemInObject(t, "dtype", cJSON_CreateString("I64"));
    expect_bad_weights(write_edited("dtype.safetensors", &w, w.data),
                       "tensor 'generator.bias': dtype I64 is not supported");
    cJSON_ReplaceItemInObject(t, "dtype", cJSON_CreateString("F23"));
    expect_bad_weights(write_edited("dtype2.safetensors", &w, w.data),
                       "tensor 'generator.bias': unknown dtype 'F23'");
    weights_free(&w);
}

static void test_weights_shape_product_overflow(void **state)
{
    (void)state;
    Weights w = tiny_weights();
    cJSON *t = cJSON_GetObjectItem(w.header, "generator.bias");
    double dims[] = {4294967296.0, 4294967296.0, 16};
    cJSON_ReplaceItemInObject(t, "shape", cJSON_CreateDoubleArray(dims, 3));
    expect_bad_weights(write_edited("overflow.safetensors", &w, w.data),
                       "tensor 'generator.bias': shape product overflows");
    weights_free(&w);
}

static void test_weights_missing_tensor(void **state)
{
    (void)state;
    Weights w = tiny_weights();
    cJSON_DeleteItemFromObject(w.header, "transformer.decoder.norm.bias");
    expect_bad_weights(write_edited("missing.safetensors", &w, w.data),
                       "missing tensor 'transformer.decoder.norm.bias'");
    weights_free(&w);
}

/* A non-finite float32 written over the first value of generator.bias. */
static void expect_refused_value(const char *name, float value, const char *phrase)
{
    Weights w = tiny_weights();
    cJSON *t = cJSON_GetObjectItem(w.header, "generator.bias");
    size_t at = (size_t)cJSON_GetArrayItem(cJSON_GetObjectItem(t, "data_offsets"), 0)->valuedouble;
    char *data = malloc(w.data_len);
    memcpy(data, w.data, w.data_len);
    memcpy(data + at, &value, sizeof value);
    expect_bad_weights(write_edited(name, &w, data), phrase);
    free(data);
    weights_free(&w);
}

static void test_weights_nan_or_inf_values(void **state)
{
    (void)state;
    expect_refused_value("nan.safetensors", NAN, "tensor 'generator.bias' holds NaN at index 0");
    expect_refused_value("inf.safetensors", -INFINITY, "tensor 'generator.bias' holds Inf at index 0");
}

/* The metadata claims the tiny architecture, the file is a few hundred
 * bytes: refused before allocating the model. */
static void test_weights_too_small_for_their_architecture(void **state)
{
    (void)state;
    Weights w = tiny_weights();
    cJSON *meta = cJSON_Duplicate(cJSON_GetObjectItem(w.header, "__metadata__"), 1);
    cJSON *h = cJSON_CreateObject();
    cJSON_AddItemToObject(h, "__metadata__", meta);
    char *json = cJSON_PrintUnformatted(h);
    expect_bad_weights(write_weights("small.safetensors", strlen(json), json, "", 0),
                       "cannot hold the");
    free(json);
    cJSON_Delete(h);
    weights_free(&w);
}

static void test_weights_path_is_a_directory(void **state)
{
    (void)state;
    expect_bad_weights(temp_dir(), "is a directory");
}

/* ---- training data (translate --eval) ------------------------------------------- */

static void expect_bad_tsv(const char *name, const char *tsv, size_t len, const char *phrase)
{
    const char *path = temp_file(name, tsv, len);
    const char *argv[] = {"./translate", "-c", TINY, "--eval", path, NULL};
    RunResult r = run(argv, NULL, 0);
    assert_int_equal(r.status, 1);
    expect_in(r.err, path);
    expect_in(r.err, phrase);
    assert_int_equal(count_lines(r.err), 1);
    assert_int_equal(r.out_len, 0);
    run_result_free(&r);
}

/* --eval scores a source it cannot translate as an empty translation, but
 * names it (file:line and why) and ends with status 1; an invalid or
 * empty reference is scored as it is and named too (an empty one, a
 * column lost, had lowered the scores unsaid). */
static void test_eval_names_what_it_cannot_translate(void **state)
{
    (void)state;
    static const char tsv[] = "I love China.\t我爱中国。\n\xff\xfe bad\t坏\nHello.\t\xff你好。\nHi.\t  \nBye.\t\n";
    const char *path = temp_file("eval-bad.tsv", tsv, sizeof tsv - 1);
    const char *argv[] = {"./translate", "-q", "-c", TINY, "--eval", path, NULL};
    RunResult r = run(argv, NULL, 0);
    assert_int_equal(r.status, 1);
    char want[700];
    snprintf(want, sizeof want, "%s:2: not translated (scored as empty): invalid UTF-8", path);
    expect_in(r.err, want);
    snprintf(want, sizeof want, "%s:3: the reference is not valid UTF-8", path);
    expect_in(r.err, want);
    snprintf(want, sizeof want, "%s:4: the reference is empty (scored against nothing)", path);
    expect_in(r.err, want);
    snprintf(want, sizeof want, "%s:5: the reference is empty (scored against nothing)", path);
    expect_in(r.err, want);
    assert_int_equal(count_lines(r.err), 4);
    expect_in(r.out, "5 sentences: BLEU");
    expect_in(r.out, "1 not translatable");
    run_result_free(&r);
}

/* A TSV the other way round (Chinese first) was translated from its
 * target column and scored BLEU 0.00, status 0: refused, status 1, the
 * layout said.  One line of the other language among the right ones is
 * scored (a name, an English word in a Chinese set). */
static void test_eval_of_swapped_columns_is_an_error(void **state)
{
    (void)state;
    static const char swapped[] = "我爱中国。\tI love China.\n你好。\tHello.\n";
    const char *path = temp_file("eval-swapped.tsv", swapped, sizeof swapped - 1);
    const char *argv[] = {"./translate", "-q", "-c", TINY, "--eval", path, NULL};
    RunResult r = run(argv, NULL, 0);
    assert_int_equal(r.status, 1);
    expect_in(r.err, "column 1, where --eval reads the English sources, reads as Chinese in 2 of 2 lines");
    assert_int_equal(count_lines(r.err), 1);
    assert_string_equal(r.out, "");
    run_result_free(&r);
    static const char mixed[] = "I love China.\t我爱中国。\n你好。\tHello.\nHello.\t你好。\n";
    path = temp_file("eval-mixed.tsv", mixed, sizeof mixed - 1);
    const char *scored[] = {"./translate", "-q", "-c", TINY, "--eval", path, NULL};
    r = run(scored, NULL, 0);
    assert_int_equal(r.status, 0);
    expect_in(r.out, "3 sentences: BLEU");
    run_result_free(&r);
}

/* A TSV with no pair (empty, or blank lines only) is status 1, said: it
 * printed "0 sentences: BLEU 0.00" with status 0, a score of nothing. */
static void test_eval_of_no_pairs_is_an_error(void **state)
{
    (void)state;
    const char *texts[] = {"", "\n\n  \n"};
    for (int i = 0; i < 2; i++) {
        const char *path = temp_file("eval-empty.tsv", texts[i], strlen(texts[i]));
        const char *argv[] = {"./translate", "-q", "-c", TINY, "--eval", path, NULL};
        RunResult r = run(argv, NULL, 0);
        if (r.status != 1) fail_msg("%s: status %d, stdout %s", i ? "blank" : "empty", r.status, r.out);
        expect_in(r.err, "no sentence pairs to score");
        assert_int_equal(count_lines(r.err), 1);
        assert_string_equal(r.out, "");
        run_result_free(&r);
    }
}

/* A source of exactly max_len tokens is translated by --eval as by a
 * line (one more is not): only what no line could take is "not
 * translatable". */
static void test_eval_translates_a_source_of_max_len_tokens(void **state)
{
    (void)state;
    char tsv[2][8192];
    for (int extra = 0; extra < 2; extra++) {
        char *p = tsv[extra];
        for (int i = 0; i < 32 + extra; i++) p += sprintf(p, "love ");
        sprintf(p - 1, "\t\xE6\x88\x91\n"); /* tiny's max_len is 32 */
        const char *path = temp_file(extra ? "max-len-33.tsv" : "max-len-32.tsv", tsv[extra], strlen(tsv[extra]));
        const char *argv[] = {"./translate", "-q", "-c", TINY, "--eval", path, NULL};
        RunResult r = run(argv, NULL, 0);
        assert_int_equal(r.status, extra);
        expect_in(r.out, extra ? "1 not translatable" : "0 not translatable");
        run_result_free(&r);
    }
}

static void test_tsv_with_a_nul_byte_or_a_huge_line(void **state)
{
    (void)state;
    expect_bad_tsv("nul.tsv", "I love China.\t\xe6\x88\x91\nI\0\t\xe6\x88\x91\n", 24,
                   "nul.tsv:2: NUL byte in line");
    size_t n = 100000;
    char *tsv = malloc(n);
    memset(tsv, 'a', n);
    tsv[10] = '\t';
    expect_bad_tsv("long.tsv", tsv, n, "long.tsv:1: longer than 65536 bytes");
    free(tsv);
    expect_bad_tsv("columns.tsv", "one column only\n", 16, "columns.tsv:1: expected at least 2");
}

/* ---- output files --------------------------------------------------------------- */

/* --attention or --html naming a directory, or a folder we may not write:
 * status 4, one line, the translation still printed, no temp file left. */
static void expect_unwritable_output(const char *flag, const char *path, const char *phrase)
{
    const char *argv[] = {"./translate", "-q", "-c", TINY, flag, path, "I love China.", NULL};
    RunResult r = run(argv, NULL, 0);
    assert_int_equal(r.status, 4);
    char *want = translation_of("I love China.");
    assert_string_equal(r.out, want);
    expect_in(r.err, path);
    expect_in(r.err, phrase);
    assert_int_equal(count_lines(r.err), 1);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    assert_int_not_equal(access(tmp, F_OK), 0);
    free(want);
    run_result_free(&r);
}

static void test_attention_path_is_a_directory(void **state)
{
    (void)state;
    expect_unwritable_output("--attention", temp_dir(), "cannot write: Is a directory");
}

static void test_html_path_is_a_directory_or_unwritable(void **state)
{
    (void)state;
    expect_unwritable_output("--html", temp_dir(), "cannot write: Is a directory");
    expect_unwritable_output("--html", "/nonexistent-dir/a.html", "cannot write: No such file");
    /* a file that is there and read-only (in a folder that takes no new
     * file either: its temporary's "No such file" came first, said to be
     * the temporary's, until read-only files were refused) */
    expect_unwritable_output("--html", "/proc/version", "cannot write: the file is read-only");
    if (geteuid() != 0) { /* root writes anywhere */
        char dir[600];
        snprintf(dir, sizeof dir, "%s/readonly", temp_dir());
        mkdir(dir, 0555);
        char path[700];
        snprintf(path, sizeof path, "%s/a.json", dir);
        expect_unwritable_output("--attention", path, "cannot write: Permission denied");
    }
}

int main(void)
{
    /* The tiny model is written on first use: make sure it exists before
     * tests copy it. */
    const char *init[] = {"./translate", "-q", "-c", TINY, "I", NULL};
    RunResult r = run(init, NULL, 0);
    run_result_free(&r);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overlong_utf8),
        cmocka_unit_test(test_utf16_surrogate_in_utf8),
        cmocka_unit_test(test_truncated_utf8_sequence),
        cmocka_unit_test(test_nul_byte_in_a_line),
        cmocka_unit_test(test_empty_stdin_is_no_work),
        cmocka_unit_test(test_empty_and_blank_arguments),
        cmocka_unit_test(test_max_len_is_a_hard_limit_on_tokens),
        cmocka_unit_test(test_only_unknown_words_still_translate),
        cmocka_unit_test(test_crlf_without_final_newline),
        cmocka_unit_test(test_megabyte_line_uses_bounded_memory),
        cmocka_unit_test(test_batch_translates_every_good_line_in_order),
        cmocka_unit_test(test_config_value_of_the_wrong_type),
        cmocka_unit_test(test_config_unknown_key),
        cmocka_unit_test(test_config_larger_than_a_megabyte),
        cmocka_unit_test(test_config_architecture_disagrees_with_weights),
        cmocka_unit_test(test_weights_zero_length),
        cmocka_unit_test(test_weights_shorter_than_the_length_field),
        cmocka_unit_test(test_weights_header_length_beyond_the_file),
        cmocka_unit_test(test_weights_header_not_json),
        cmocka_unit_test(test_weights_offsets_overlapping),
        cmocka_unit_test(test_weights_offsets_past_the_end),
        cmocka_unit_test(test_weights_wrong_dtype),
        cmocka_unit_test(test_weights_shape_product_overflow),
        cmocka_unit_test(test_weights_missing_tensor),
        cmocka_unit_test(test_weights_nan_or_inf_values),
        cmocka_unit_test(test_weights_too_small_for_their_architecture),
        cmocka_unit_test(test_weights_path_is_a_directory),
        cmocka_unit_test(test_eval_names_what_it_cannot_translate),
        cmocka_unit_test(test_eval_of_no_pairs_is_an_error),
        cmocka_unit_test(test_eval_of_swapped_columns_is_an_error),
        cmocka_unit_test(test_eval_translates_a_source_of_max_len_tokens),
        cmocka_unit_test(test_tsv_with_a_nul_byte_or_a_huge_line),
        cmocka_unit_test(test_attention_path_is_a_directory),
        cmocka_unit_test(test_a_name_with_a_line_break_is_said_on_one_line),
        cmocka_unit_test(test_a_config_name_with_a_line_break_prefixes_one_line),
        cmocka_unit_test(test_a_long_name_leaves_the_message_whole),
        cmocka_unit_test(test_an_output_named_like_an_option_is_refused),
        cmocka_unit_test(test_html_path_is_a_directory_or_unwritable),
    };
    return cmocka_run_group_tests_name("bad input, end to end", tests, NULL, NULL);
}
