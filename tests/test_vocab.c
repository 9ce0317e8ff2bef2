/* test_vocab.c — vocabulary files: loading and lookup, every rejection with
 * its path:line, the builder's order and casing, and the hash. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "../tokenizer/tokenizer.h"
#include "../tokenizer/vocab.h"
#include "../tokenizer/vocab_impl.h"

#define SPECIALS "<pad>\t<pad>\t0\n<unk>\t<unk>\t0\n<s>\t<s>\t0\n</s>\t</s>\t0\n"

static Vocab *load_text(const char *name, const char *text, Error *err)
{
    return vocab_load(temp_file(name, text, strlen(text)), err);
}

static void test_load_and_lookup(void **state)
{
    (void)state;
    Error err;
    Vocab *v = load_text("a.vocab", "# a comment\n" SPECIALS "the\tthe\t10\ntom\tTom\t5\n中\t中\t3\n",
                         &err);
    assert_non_null(v);
    assert_int_equal(vocab_size(v), 7);
    assert_int_equal(vocab_id(v, "<pad>"), VOCAB_PAD);
    assert_int_equal(vocab_id(v, "</s>"), VOCAB_EOS);
    assert_int_equal(vocab_id(v, "the"), 4);
    assert_int_equal(vocab_id(v, "tom"), 5);
    assert_int_equal(vocab_id(v, "中"), 6);
    assert_string_equal(vocab_token(v, 5), "tom");
    assert_string_equal(vocab_cased(v, 5), "Tom");
    vocab_free(v);
}

/* The optional fourth field: a piece's casing inside longer words, which
 * only vocab_piece's VOCAB_CASED_IN_WORD gives (the same as the casing
 * when absent); and each line's count. */
static void test_casing_in_a_word_and_counts(void **state)
{
    (void)state;
    Error err;
    Vocab *v = load_text("in-word.vocab", SPECIALS "st\tSt\t7\tst\r\nthe\tthe\t10\n", &err);
    assert_non_null(v);
    int st = vocab_id(v, "st"), the = vocab_id(v, "the"), continues;
    assert_string_equal(vocab_cased(v, st), "St");
    assert_string_equal(vocab_piece(v, st, VOCAB_CASED, &continues), "St");
    assert_string_equal(vocab_piece(v, st, VOCAB_CASED_IN_WORD, &continues), "st");
    assert_string_equal(vocab_piece(v, st, VOCAB_FOLDED, &continues), "st");
    assert_string_equal(vocab_piece(v, the, VOCAB_CASED_IN_WORD, &continues), "the");
    assert_true(vocab_count(v, st) == 7 && vocab_count(v, the) == 10 && vocab_count(v, VOCAB_PAD) == 0);
    vocab_free(v);
}

static void test_unknown_token_is_unk(void **state)
{
    (void)state;
    Vocab *v = load_text("b.vocab", SPECIALS "the\tthe\t10\n", NULL);
    assert_non_null(v);
    assert_int_equal(vocab_id(v, "cat"), VOCAB_UNK);
    assert_int_equal(vocab_id(v, "The"), VOCAB_UNK); /* lookup is of folded tokens */
    assert_int_equal(vocab_id(v, ""), VOCAB_UNK);
    vocab_free(v);
}

static void test_crlf_lines_are_accepted(void **state)
{
    (void)state;
    Vocab *v = load_text("crlf.vocab",
                         "<pad>\t<pad>\t0\r\n<unk>\t<unk>\t0\r\n<s>\t<s>\t0\r\n</s>\t</s>\t0\r\n"
                         "a\tA\t1\r\n", NULL);
    assert_non_null(v);
    assert_int_equal(vocab_id(v, "a"), 4);
    assert_string_equal(vocab_cased(v, 4), "A");
    vocab_free(v);
}

static void test_missing_file(void **state)
{
    (void)state;
    Error err;
    assert_null(vocab_load("no/such/file.vocab", &err));
    assert_string_equal(err.message, "no/such/file.vocab: cannot open: No such file or directory");
}

/* Each malformed file is rejected with "path:line: message". */
#define FIELDS "expected 3 or 4 tab-separated fields: token, cased, count[, cased in a word]"

static void test_malformed_files(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *message; /* after "path:" */
    } cases[] = {
        {"<pad>\t<pad>\t0\n<s>\t<s>\t0\n", "2: expected '<unk>' (id 1), found '<s>'"},
        {"# c\n<unk>\t<unk>\t0\n", "2: expected '<pad>' (id 0), found '<unk>'"},
        {"<pad>\t<pad>\t0\n<unk>\t<unk>\t0\n", "3: expected '<s>' (id 2), found end of file"},
        {"<pad>\t<pad>\t0\n<unk>\t<unk>\t0\n<s>\t<s>\t0\nthe\tthe\t1\n", "4: expected '</s>' (id 3), found 'the'"},
        {SPECIALS "the\tthe\t1\ncat\tcat\t1\nthe\tThe\t1\n", "7: duplicate token 'the' (also id 4)"},
        {SPECIALS "the\tthe\n", "5: " FIELDS},
        {SPECIALS "the\n", "5: " FIELDS},
        {SPECIALS "the\tthe\t1\tx\ty\n", "5: " FIELDS},
        {SPECIALS "a\ta\t1\n\n", "6: " FIELDS},
        {SPECIALS "x\tx\t1\t\n", "5: empty cased-in-a-word form for 'x'"},
        {SPECIALS "x\tx\t1x\tX\n", "5: count '1x' is not a non-negative integer"},
        {SPECIALS "x\tx\t90071992547409920\n", "5: count '90071992547409920' is larger than 2^53"},
        {SPECIALS "\tx\t1\n", "5: empty token"},
        {SPECIALS "x\t\t1\n", "5: empty cased form for 'x'"},
        {SPECIALS "x\tx\t-1\n", "5: count '-1' is not a non-negative integer"},
        {SPECIALS "x\tx\t\n", "5: count '' is not a non-negative integer"},
        {SPECIALS "ok\tok\t1\nb\xC0\x80\tb\t1\n", "6: invalid UTF-8"},
        {SPECIALS "\xED\xA0\x80\tx\t1\n", "5: invalid UTF-8"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Error err = {""};
        const char *path = temp_file("bad.vocab", cases[i].text, strlen(cases[i].text));
        Vocab *v = vocab_load(path, &err);
        char want[600];
        snprintf(want, sizeof want, "%s:%s", path, cases[i].message);
        if (v || strcmp(err.message, want) != 0)
            fail_msg("case %zu: got '%s', want '%s'", i, v ? "(loaded)" : err.message, want);
    }
}

/* The line scan reads 8 bytes a step, then the rest one by one: fields,
 * and each rejection, wherever the tabs, a NUL or a non-ASCII byte fall
 * (in a step or in the rest, at either end of a step). */
static void test_fields_at_every_offset(void **state)
{
    (void)state;
    static const char letters[] = "abcdefghijklmnopqrstuvwxyz";
    char text[4096], token[32], cased[32], in_word[32], message[600];
    for (int t = 1; t <= 17; t++) {
        for (int c = 1; c <= 17; c++) {
            for (int w = 0; w <= 9; w++) {
                memcpy(token, letters, (size_t)t), token[t] = '\0';
                memcpy(cased, "ABCDEFGHIJKLMNOPQ", (size_t)c), cased[c] = '\0';
                memcpy(in_word, "zyxwvutsr", (size_t)w), in_word[w] = '\0';
                snprintf(text, sizeof text, SPECIALS "%s\t%s\t%d%s%s\n", token, cased, 10 * t + c,
                         w ? "\t" : "", in_word);
                Error err = {""};
                Vocab *v = load_text("offsets.vocab", text, &err);
                if (!v) fail_msg("t=%d c=%d w=%d: %s", t, c, w, err.message);
                int continues;
                assert_int_equal(vocab_id(v, token), 4);
                assert_string_equal(vocab_cased(v, 4), cased);
                assert_string_equal(vocab_piece(v, 4, VOCAB_CASED_IN_WORD, &continues), w ? in_word : cased);
                assert_true(vocab_count(v, 4) == 10 * t + c);
                vocab_free(v);
            }
        }
    }
    static const struct {
        const char *line; /* after SPECIALS, "\n" appended */
        size_t len;       /* holds a NUL: its length */
        const char *message;
    } bad[] = {
        {"abcdefgh\tabcdefgh\t1\tx\ty", 0, FIELDS},
        {"abcdefg\tb\tc\td\t1", 0, FIELDS},
        {"a\tb\t1\tx\tyyyyyyyy", 0, FIELDS}, /* four tabs in one step */
        {"abcdefgh\t\tb\t1", 0, "empty cased form for 'abcdefgh'"},
        {"abcdefghijklmnop\tx", 0, FIELDS},
        {"abcdefgh\0ij\tx\t1", 15, "NUL byte in line"},
        {"abcdefghijklmno\tx\t1\0", 20, "NUL byte in line"},
        {"abcdefgh\xC0\x80\tx\t1", 0, "invalid UTF-8"},
        {"abcdefgh\tx\t1\xFF", 0, "invalid UTF-8"},
        {"abcdefg\xE4\tx\t1", 0, "invalid UTF-8"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t len = bad[i].len ? bad[i].len : strlen(bad[i].line);
        size_t n = strlen(SPECIALS);
        memcpy(text, SPECIALS, n);
        memcpy(text + n, bad[i].line, len);
        text[n + len] = '\n';
        Error err = {""};
        const char *path = temp_file("bad-offsets.vocab", text, n + len + 1);
        Vocab *v = vocab_load(path, &err);
        snprintf(message, sizeof message, "%s:5: %s", path, bad[i].message);
        if (v || strcmp(err.message, message) != 0)
            fail_msg("case %zu: got '%s', want '%s'", i, v ? "(loaded)" : err.message, message);
    }
}

static void test_nul_byte_in_line_is_rejected(void **state)
{
    (void)state;
    static const char text[] = SPECIALS "a\0b\ta\t1\n";
    Error err;
    const char *path = temp_file("nul.vocab", text, sizeof text - 1);
    assert_null(vocab_load(path, &err));
    assert_non_null(strstr(err.message, ":5: NUL byte in line"));
}

static void test_more_than_ten_million_lines_is_rejected(void **state)
{
    (void)state;
    size_t n = 10000001; /* comment lines: cheap to write, legal until the limit */
    char *text = malloc(2 * n);
    for (size_t i = 0; i < n; i++) text[2 * i] = '#', text[2 * i + 1] = '\n';
    Error err;
    const char *path = temp_file("huge.vocab", text, 2 * n);
    free(text);
    assert_null(vocab_load(path, &err));
    assert_non_null(strstr(err.message, ": more than 10000000 lines"));
    remove(path);
}

static void test_lookup_of_many_tokens(void **state)
{
    (void)state;
    /* Enough tokens to grow the hash table several times. */
    VocabBuilder *b = vocab_builder_new();
    char word[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(word, sizeof word, "w%d", i);
        for (int k = 0; k <= i % 3; k++) vocab_builder_add(b, word, word);
    }
    const char *path = temp_file("many.vocab", "", 0);
    Error err;
    assert_int_equal(write_vocab_at(vocab_builder_write, b, path, 100000, 1, &err), 0);
    vocab_builder_free(b);
    Vocab *v = vocab_load(path, &err);
    assert_non_null(v);
    assert_int_equal(vocab_size(v), 5004);
    for (int id = VOCAB_SPECIALS; id < vocab_size(v); id++)
        assert_int_equal(vocab_id(v, vocab_token(v, id)), id);
    vocab_free(v);
}

static void test_builder_round_trip(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "The cat sat.", "The dog sat.", "THE END.", "Tom saw the cat.", "Tom's cat.",
    };
    VocabBuilder *b = vocab_builder_new();
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        TokenList l;
        assert_int_equal(tokenize(texts[i], strlen(texts[i]), &l, NULL), 0);
        for (size_t k = 0; k < l.count; k++) vocab_builder_add(b, l.folded[k], l.surface[k]);
        token_list_free(&l);
    }
    const char *path = temp_file("built.vocab", "", 0);
    Error err;
    /* .: 5, the: 4 (The ×2, THE, the), cat: 3, sat: 2, tom: 2; the rest once */
    assert_int_equal(write_vocab_at(vocab_builder_write, b, path, 9, 2, &err), 0);
    vocab_builder_free(b);
    size_t len;
    char *text = read_file(path, &len);
    assert_string_equal(text, SPECIALS ".\t.\t5\nthe\tThe\t4\ncat\tcat\t3\nsat\tsat\t2\ntom\tTom\t2\n");
    free(text);
    Vocab *v = vocab_load(path, &err);
    assert_non_null(v);
    assert_int_equal(vocab_id(v, "the"), 5);
    assert_string_equal(vocab_cased(v, 5), "The");
    vocab_free(v);
    /* The temporary file was renamed away. */
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    assert_null(read_file(tmp, NULL));
}

static void test_builder_respects_max_size(void **state)
{
    (void)state;
    VocabBuilder *b = vocab_builder_new();
    vocab_builder_add(b, "b", "b");
    vocab_builder_add(b, "a", "a");
    vocab_builder_add(b, "c", "c");
    vocab_builder_add(b, "c", "C");
    const char *path = temp_file("small.vocab", "", 0);
    Error err;
    assert_int_equal(write_vocab_at(vocab_builder_write, b, path, 6, 1, &err), 0);
    char *text = read_file(path, NULL);
    /* c first (2), then the tie a/b by bytes; "C" < "c" breaks the casing tie. */
    assert_string_equal(text, SPECIALS "c\tC\t2\na\ta\t1\n");
    free(text);
    assert_int_equal(write_vocab_at(vocab_builder_write, b, path, 3, 1, &err), -1);
    assert_non_null(strstr(err.message, "below the 4 special tokens"));
    vocab_builder_free(b);
}

static void test_builder_write_error_names_path(void **state)
{
    (void)state;
    VocabBuilder *b = vocab_builder_new();
    Error err;
    assert_int_equal(write_vocab_at(vocab_builder_write, b, "no/such/dir/x.vocab", 10, 1, &err), -1);
    /* the user's path, never the temporary file's (tests/test_files.c) */
    assert_string_equal(err.message, "no/such/dir/x.vocab: cannot write: No such file or directory");
    vocab_builder_free(b);
    vocab_builder_free(NULL);
    vocab_free(NULL);
}

/* Three letters and digits for each i < 62^3. */
static void short_token(char out[4], int i)
{
    static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    out[0] = alphabet[i / (62 * 62)], out[1] = alphabet[i / 62 % 62], out[2] = alphabet[i % 62], out[3] = '\0';
}

/* n tokens of three characters after the specials, each with `cased`;
 * a duplicate of id 4 appended when `duplicate`.  Loaded, and checked. */
static void expect_loads(int n, const char *cased, int duplicate)
{
    size_t cap = strlen(SPECIALS) + (size_t)(n + 1) * (strlen(cased) + 8) + 1;
    char *text = malloc(cap), token[4];
    size_t len = (size_t)snprintf(text, cap, "%s", SPECIALS);
    for (int i = 0; i < n + duplicate; i++) {
        short_token(token, i < n ? i : 0);
        len += (size_t)snprintf(text + len, cap - len, "%s\t%s\t0\n", token, cased);
    }
    Error err = {{0}};
    Vocab *v = vocab_load(temp_file("many.vocab", text, len), &err);
    free(text);
    if (duplicate) {
        assert_null(v);
        char want[64];
        snprintf(want, sizeof want, ":%d: duplicate token '000' (also id 4)", VOCAB_SPECIALS + n + 1);
        expect_in(err.message, want);
        return;
    }
    if (!v) fail_msg("%s", err.message);
    assert_int_equal(vocab_size(v), VOCAB_SPECIALS + n);
    for (int i = 0; i < n; i++) {
        short_token(token, i);
        if (vocab_id(v, token) != VOCAB_SPECIALS + i) fail_msg("'%s' is id %d", token, vocab_id(v, token));
        if (strcmp(vocab_cased(v, VOCAB_SPECIALS + i), cased) != 0) fail_msg("id %d: cased form", i);
    }
    assert_string_equal(vocab_token(v, VOCAB_UNK), "<unk>");
    vocab_free(v);
}

/* The loader sizes its table, ids and strings from the file's size (12
 * bytes a line, capped at 65,536 lines): shorter lines make the table
 * and the ids grow while loading, longer ones in a larger file the
 * strings; and a line far past the first 64 KiB read keeps its number. */
static void test_a_vocabulary_larger_than_its_size_suggests(void **state)
{
    (void)state;
    expect_loads(90000, "A", 0);                      /* 8 bytes a line */
    expect_loads(45000, "ABCDEFGHIJKLMNOPQRSTUVWX", 0); /* 31 bytes a line, 1.4 MB */
    expect_loads(90000, "A", 1);
}

/* The byte tokens' names are "<0xXX>" for the 192 bytes that can start a
 * character, then "##<0xXX>" for all 256 (vocab.h); built without
 * snprintf, checked here against it, and cut like it to a short buffer. */
static void test_byte_token_names(void **state)
{
    (void)state;
    char got[16], want[16];
    for (int k = 0; k < VOCAB_BYTE_TOKENS; k++) {
        int b = k < 192 ? (k < 128 ? k : k + 64) : k - 192;
        snprintf(want, sizeof want, "%s<0x%02X>", k < 192 ? "" : "##", b);
        vocab_byte_token_name(got, sizeof got, k);
        assert_string_equal(got, want);
    }
    vocab_byte_token_name(got, 5, 200);
    assert_string_equal(got, "##<0");
}

/* The hash is FNV-1a over the tokens in id order, each NUL-terminated; it
 * ignores casing and counts, and must never change for the same tokens
 * (weights files record it). */
static void test_hash_is_stable(void **state)
{
    (void)state;
    Vocab *a = load_text("h1.vocab", SPECIALS "the\tthe\t10\ncat\tcat\t5\n", NULL);
    Vocab *b = load_text("h2.vocab", SPECIALS "the\tThe\t99\ncat\tCAT\t1\n", NULL);
    Vocab *c = load_text("h3.vocab", SPECIALS "cat\tcat\t10\nthe\tthe\t5\n", NULL);
    Vocab *d = load_text("h4.vocab", SPECIALS "thecat\tthecat\t10\n", NULL);
    assert_true(a && b && c && d);
    static const char bytes[] = "<pad>\0<unk>\0<s>\0</s>\0the\0cat"; /* + final NUL */
    assert_true(vocab_hash(a) == fnv1a(FNV_OFFSET, bytes, sizeof bytes));
    assert_true(vocab_hash(a) == 0xbe2d15c7b1ba2adeULL); /* recorded once; never changes */
    assert_true(vocab_hash(a) == vocab_hash(b));
    assert_true(vocab_hash(a) != vocab_hash(c));
    assert_true(vocab_hash(a) != vocab_hash(d));
    vocab_free(a);
    vocab_free(b);
    vocab_free(c);
    vocab_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_and_lookup),
        cmocka_unit_test(test_casing_in_a_word_and_counts),
        cmocka_unit_test(test_unknown_token_is_unk),
        cmocka_unit_test(test_crlf_lines_are_accepted),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_malformed_files),
        cmocka_unit_test(test_fields_at_every_offset),
        cmocka_unit_test(test_nul_byte_in_line_is_rejected),
        cmocka_unit_test(test_more_than_ten_million_lines_is_rejected),
        cmocka_unit_test(test_lookup_of_many_tokens),
        cmocka_unit_test(test_builder_round_trip),
        cmocka_unit_test(test_builder_respects_max_size),
        cmocka_unit_test(test_builder_write_error_names_path),
        cmocka_unit_test(test_hash_is_stable),
        cmocka_unit_test(test_a_vocabulary_larger_than_its_size_suggests),
        cmocka_unit_test(test_byte_token_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
