/* test_tokenizer.c — splitting text into tokens: the script rules, NFKC,
 * case folding, offsets into the original bytes, and the exact byte offset
 * named for every kind of invalid UTF-8. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tokenizer/detokenize.h"
#include "../tokenizer/tokenizer.h"

/* Tokens of `text` joined with '|' (folded or surface forms). */
static char *joined(const TokenList *l, int surface)
{
    size_t n = 1;
    for (size_t i = 0; i < l->count; i++) n += strlen(l->folded[i]) + strlen(l->surface[i]) + 1;
    char *s = calloc(n, 1);
    for (size_t i = 0; i < l->count; i++) {
        if (i) strcat(s, "|");
        strcat(s, surface ? l->surface[i] : l->folded[i]);
    }
    return s;
}

typedef struct {
    const char *text;
    const char *folded;  /* tokens joined by '|' */
    const char *surface; /* NULL: same as folded */
} Case;

static const Case cases[] = {
    /* the two seed examples */
    {"我想吃酸菜鱼", "我|想|吃|酸|菜|鱼", NULL},
    {"I love china", "i|love|china", "I|love|china"},
    /* punctuation and symbols are single tokens */
    {"Don't", "don|'|t", "Don|'|t"},
    {"3.5", "3|.|5", NULL},
    {"well-known", "well|-|known", NULL},
    {"Hello, world!", "hello|,|world|!", "Hello|,|world|!"},
    {"$200 (10%)", "$|200|(|10|%|)", NULL},
    /* mixed scripts: Han and kana split off letters and digits */
    {"我有iPhone6很好。", "我|有|iphone6|很|好|。", "我|有|iPhone6|很|好|。"},
    {"一一丁", "一|一|丁", NULL}, /* U+4E00, the first of the Unified Ideographs */
    {"東京タワーへ行く", "東|京|タ|ワ|ー|へ|行|く", NULL},
    {"Tom说：“你好！”", "tom|说|:|“|你|好|!|”", "Tom|说|:|“|你|好|!|”"},
    /* NFKC: full-width forms, ligatures, compatibility characters */
    {"ＡＢＣ，１２３！", "abc|,|123|!", "ABC|,|123|!"},
    {"ﬁne ½ ㍻", "fine|1|⁄|2|平|成", NULL},
    /* a number that is no digit stands apart: 10² is not 102, 2½ not 21 */
    {"10² m³ 2½ ①", "10|2|m|3|2|1|⁄|2|1", NULL},
    {"ｶﾞｷﾞ", "ガ|ギ", NULL}, /* half-width kana + voiced mark compose */
    {"…", ".|.|.", NULL},
    /* other scripts make words; case folding is full Unicode folding */
    {"안녕하세요 세계", "안녕하세요|세계", NULL},
    {"Привет, МИР", "привет|,|мир", "Привет|,|МИР"},
    {"Straße", "strasse", "Straße"},
    /* combining marks stay with the character before them */
    {"cafe\xCC\x81 nai\xCC\x88ve", "café|naïve", NULL},
    {"x\xCC\xA3\xCC\x87", "\xE1\xBA\x8B\xCC\xA3", NULL}, /* NFC reorders: ẋ̣ */
    {"\xCC\x81" "a", "\xCC\x81|a", NULL},                 /* a lone mark is a token */
    /* emoji and symbols: one token each, variation selector kept */
    {"I \xE2\x9D\xA4\xEF\xB8\x8F you\xF0\x9F\x98\x80!", "i|\xE2\x9D\xA4\xEF\xB8\x8F|you|\xF0\x9F\x98\x80|!",
     "I|\xE2\x9D\xA4\xEF\xB8\x8F|you|\xF0\x9F\x98\x80|!"},
    {"1+1=2", "1|+|1|=|2", NULL},
    /* white space, zero-width space, soft hyphen */
    {"  a \t b\n\r c  ", "a|b|c", NULL},
    {"a\xE3\x80\x80" "b", "a|b", NULL},      /* ideographic space */
    {"a\xE2\x80\x8B" "b", "a|b", NULL},      /* zero-width space separates */
    {"co\xC2\xAD" "operate", "cooperate", NULL}, /* soft hyphen does not */
    {"", "", NULL},
    {" \t\n ", "", NULL},
};

static void test_tokenize_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TokenList l;
        Error err;
        if (tokenize(cases[i].text, strlen(cases[i].text), &l, &err) != 0)
            fail_msg("case %zu '%s': %s", i, cases[i].text, err.message);
        char *folded = joined(&l, 0), *surface = joined(&l, 1);
        const char *want_surface = cases[i].surface ? cases[i].surface : cases[i].folded;
        if (strcmp(folded, cases[i].folded) != 0 || strcmp(surface, want_surface) != 0)
            fail_msg("case %zu '%s': got %s / %s, want %s / %s", i, cases[i].text, folded,
                     surface, cases[i].folded, want_surface);
        free(folded);
        free(surface);
        token_list_free(&l);
    }
}

static void test_whitespace_only_gives_no_tokens(void **state)
{
    (void)state;
    TokenList l;
    assert_int_equal(tokenize("   ", 3, &l, NULL), 0);
    assert_int_equal(l.count, 0);
    token_list_free(&l);
    assert_int_equal(tokenize(NULL, 0, &l, NULL), 0);
    assert_int_equal(l.count, 0);
    token_list_free(&l);
}

static void test_length_not_nul_terminator_bounds_text(void **state)
{
    (void)state;
    TokenList l;
    assert_int_equal(tokenize("ab cd", 4, &l, NULL), 0);
    assert_int_equal(l.count, 2);
    assert_string_equal(l.folded[1], "c");
    token_list_free(&l);
}

/* Offsets point into the original bytes even where NFKC changed them. */
static void test_offsets_are_original_bytes(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        size_t offsets[6];
        size_t count;
    } cases[] = {
        {"I  love 中文", {0, 3, 8, 11}, 4},
        {"ＡＢ c", {0, 7}, 2},           /* full-width letters are 3 bytes each */
        {"ｶﾞx", {0, 6}, 2},              /* two input characters, one token */
        {"cafe\xCC\x81!", {0, 6}, 2},
        {"½", {0, 0, 0}, 3},             /* one character, three tokens */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TokenList l;
        assert_int_equal(tokenize(cases[i].text, strlen(cases[i].text), &l, NULL), 0);
        assert_int_equal(l.count, cases[i].count);
        for (size_t k = 0; k < l.count; k++) assert_int_equal(l.offset[k], cases[i].offsets[k]);
        token_list_free(&l);
    }
}

/* Which tokens came after white space (`spaced`): the tokens drop it, and
 * it is what tells the number 1,000 from the list "1, 000" and "1.2" from
 * "Question 1. 2" (model/number_rule.h).  A mark per token, '_' where
 * spaced. */
static void test_spaced_marks_white_space_before(void **state)
{
    (void)state;
    static const struct {
        const char *text, *marks;
    } cases[] = {
        {"1,000", "..."},
        {"110, 120", ".._"},
        {"110 ,120", "._."},
        {"Question 1. 2", "._._"},
        {"3.5", "..."},
        {"  lead", "_"},                          /* before the first token too */
        {"110\xEF\xBC\x8C" "120", "..."},           /* 110，120: Chinese writes no spaces */
        {"1\xE3\x80\x81" "2", "..."},               /* 1、2 */
        {"1,\xE3\x80\x80" "2", ".._"},              /* an ideographic space is white space */
        {"1,\xC2\xA0" "2", ".._"},                   /* so is a no-break space */
        {"a\xE2\x80\x8B" "b", "._"},                /* and a zero-width space (it separates) */
        {"co\xC2\xAD" "op 1", "._"},                /* a soft hyphen is none: one word */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TokenList l;
        assert_int_equal(tokenize(cases[i].text, strlen(cases[i].text), &l, NULL), 0);
        char got[16] = {0};
        for (size_t k = 0; k < l.count && k < sizeof got - 1; k++) got[k] = l.spaced[k] ? '_' : '.';
        if (strcmp(got, cases[i].marks) != 0)
            fail_msg("'%s': spaced %s, want %s", cases[i].text, got, cases[i].marks);
        token_list_free(&l);
    }
}

static void test_invalid_utf8_names_byte_offset(void **state)
{
    (void)state;
    static const struct {
        const char *bytes;
        size_t len;
        const char *message;
    } cases[] = {
        {"ab\xC0\x80", 4, "invalid UTF-8 at byte 2"},          /* overlong NUL */
        {"\xE0\x80\xAF", 3, "invalid UTF-8 at byte 0"},        /* overlong '/' */
        {"\xF0\x80\x80\xAF", 4, "invalid UTF-8 at byte 0"},    /* overlong, 4 bytes */
        {"a\xED\xA0\x80", 4, "invalid UTF-8 at byte 1"},       /* surrogate D800 */
        {"abcd\xE4\xBD", 6, "invalid UTF-8 at byte 4"},        /* truncated at end */
        {"\xE4\xBD" "a", 3, "invalid UTF-8 at byte 0"},        /* truncated mid-text */
        {"\x80", 1, "invalid UTF-8 at byte 0"},                /* lone continuation */
        {"xy\xF5\x80\x80\x80", 6, "invalid UTF-8 at byte 2"},  /* F5+ lead byte */
        {"hello\xFF", 6, "invalid UTF-8 at byte 5"},
        {"\xF4\x90\x80\x80", 4, "invalid UTF-8 at byte 0"},    /* above U+10FFFF */
        {"我\xE4", 4, "invalid UTF-8 at byte 3"},
        {"ab\0c", 4, "NUL byte at byte 2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TokenList l;
        Error err = {""};
        assert_int_equal(tokenize(cases[i].bytes, cases[i].len, &l, &err), -1);
        assert_string_equal(err.message, cases[i].message);
        assert_int_equal(l.count, 0);
        token_list_free(&l);
    }
}

static void test_largest_code_point_is_valid(void **state)
{
    (void)state;
    TokenList l;
    assert_int_equal(tokenize("\xF4\x8F\xBF\xBF", 4, &l, NULL), 0); /* U+10FFFF */
    assert_int_equal(l.count, 1);
    token_list_free(&l);
}

static void test_is_cjk(void **state)
{
    (void)state;
    assert_true(tokenizer_is_cjk(0x4E00));  /* 一 */
    assert_true(tokenizer_is_cjk(0x9C7C));  /* 鱼 */
    assert_true(tokenizer_is_cjk(0x20000)); /* extension B */
    assert_true(tokenizer_is_cjk(0x3042));  /* あ */
    assert_true(tokenizer_is_cjk(0x30AB));  /* カ */
    assert_true(tokenizer_is_cjk(0x3007));  /* 〇 */
    assert_false(tokenizer_is_cjk('a'));
    assert_false(tokenizer_is_cjk(0xAC00)); /* 가: Hangul is split like Latin */
    assert_false(tokenizer_is_cjk(0x3002)); /* 。 */
}

static void test_reads_as_han(void **state)
{
    (void)state; /* more mixed cases: tests/test_cli_models.c */
    assert_true(tokenizer_reads_as_han("我想吃酸菜鱼", strlen("我想吃酸菜鱼")));
    assert_false(tokenizer_reads_as_han("I love china", 12));
    assert_false(tokenizer_reads_as_han("I love 中国", strlen("I love 中国"))); /* a tie: the first letter */
    assert_int_equal(tokenizer_reads_as_han("", 0), -1); /* neither */
    assert_int_equal(tokenizer_reads_as_han("  ", 2), -1);
    assert_int_equal(tokenizer_reads_as_han("1990 !!!", 8), -1);
    assert_int_equal(tokenizer_reads_as_han("中\xFF", 4), -1);
}

static void test_free_is_null_safe_and_idempotent(void **state)
{
    (void)state;
    token_list_free(NULL);
    TokenList l;
    assert_int_equal(tokenize("a b", 3, &l, NULL), 0);
    token_list_free(&l);
    assert_null(l.folded);
    token_list_free(&l);
}


/* ---- Stream-Safe Text Format (UAX #15 §13) -----------------------------
 *
 * More than 30 non-starters (combining class != 0) in a row get a U+034F
 * COMBINING GRAPHEME JOINER before the 31st, so that normalising a line of
 * marks takes linear time.  Ordinary text never has such runs. */

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define CGJ "\xCD\x8F"
#define GRAVE "\xCC\x80"       /* U+0300, class 230 */
#define ACUTE "\xCC\x81"       /* U+0301, class 230 */
#define GRAVE_BELOW "\xCC\x96" /* U+0316, class 220: sorts before 230 */

/* `base` then `count` copies of `mark`: a malloc'd string. */
static char *repeated(const char *base, const char *mark, size_t count)
{
    size_t b = strlen(base), m = strlen(mark);
    char *s = malloc(b + count * m + 1);
    memcpy(s, base, b);
    for (size_t i = 0; i < count; i++) memcpy(s + b + i * m, mark, m);
    s[b + count * m] = '\0';
    return s;
}

static void assert_one_token(const char *text, const char *want)
{
    TokenList l;
    Error err = {{0}};
    assert_int_equal(tokenize(text, strlen(text), &l, &err), 0);
    assert_int_equal(l.count, 1);
    assert_string_equal(l.surface[0], want);
    assert_string_equal(l.folded[0], want);
    token_list_free(&l);
}

static void test_stream_safe_joiner_after_30_non_starters(void **state)
{
    (void)state;
    /* 30 marks: stream-safe already, unchanged. */
    char *thirty = repeated("x", GRAVE, 30);
    assert_one_token(thirty, thirty);
    /* 31: a CGJ before the 31st. */
    char *text = repeated("x", GRAVE, 31), *want = malloc(strlen(text) + 3);
    sprintf(want, "%s" CGJ GRAVE, thirty);
    assert_one_token(text, want);
    /* Written back, the token is itself (capitalised, as an English
     * sentence starts): the joiner is not cut off or mangled. */
    TokenList l;
    assert_int_equal(tokenize(text, strlen(text), &l, NULL), 0);
    char *back = detokenize((const char *const *)l.folded, (const char *const *)l.surface, 1, "en");
    assert_int_equal(back[0], 'X');
    assert_string_equal(back + 1, want + 1);
    free(back);
    token_list_free(&l);
    free(text);
    free(want);
    /* U+0344 decomposes to two non-starters (U+0308 U+0301): 29 + 2 > 30,
     * so the CGJ goes before it; NFKC then gives its decomposition. */
    char *base = repeated("x", GRAVE, 29);
    text = malloc(strlen(base) + 3);
    sprintf(text, "%s\xCD\x84", base);
    want = malloc(strlen(base) + 7);
    sprintf(want, "%s" CGJ "\xCC\x88\xCC\x81", base);
    assert_one_token(text, want);
    free(text);
    free(want);
    free(base);
    /* Canonical reordering stops at the CGJ: a class-220 mark after 30
     * class-230 ones stays after them (NFKC would move it first). */
    char *acutes = repeated("x", ACUTE, 30);
    text = malloc(strlen(acutes) + 3);
    sprintf(text, "%s" GRAVE_BELOW, acutes);
    want = malloc(strlen(acutes) + 5);
    sprintf(want, "%s" CGJ GRAVE_BELOW, acutes);
    assert_one_token(text, want);
    free(text);
    free(want);
    free(acutes);
    /* A starter resets the count: x + 20 marks, q + 20 marks is untouched
     * (neither composes with U+0300). */
    char *a = repeated("x", GRAVE, 20), *b = repeated("q", GRAVE, 20);
    text = malloc(strlen(a) + strlen(b) + 1);
    sprintf(text, "%s%s", a, b);
    assert_one_token(text, text);
    free(text);
    free(a);
    free(b);
    free(thirty);
}

/* Marks of every class from 240 down to 1, repeated: the worst order for
 * canonical reordering (each new mark sorts before all the others). */
static char *descending_marks(size_t bytes)
{
    static const char *const marks[] = {
        "\xCD\x85", "\xCC\x95", "\xCC\x81", GRAVE_BELOW, "\xCC\x9B", "\xCC\xA1", "\xCC\xB4",
    }; /* classes 240, 232, 230, 220, 216, 202, 1; two bytes each */
    char *s = malloc(bytes + 1);
    s[0] = 'x';
    size_t n = 1;
    for (size_t i = 0; n + 2 <= bytes; i++, n += 2) memcpy(s + n, marks[i % 7], 2);
    s[n] = '\0';
    return s;
}

static void test_long_runs_of_marks_take_linear_time(void **state)
{
    (void)state;
    /* A line as long as translate accepts (65,536 bytes), and a TEXT
     * argument as long as the kernel allows (128 KiB).  Before the
     * stream-safe step the first took seconds (quadratic reordering); the
     * bound is generous so that a loaded machine or a sanitizer build
     * still passes. */
    const size_t sizes[] = {65536, 128 * 1024};
    for (size_t k = 0; k < 2; k++) {
        char *text = descending_marks(sizes[k]);
        double t0 = now_seconds();
        TokenList l;
        Error err = {{0}};
        assert_int_equal(tokenize(text, strlen(text), &l, &err), 0);
        double took = now_seconds() - t0;
        assert_int_equal(l.count, 1);
        if (took > 1.0) fail_msg("%zu bytes of marks took %.2f s to tokenise", sizes[k], took);
        token_list_free(&l);
        free(text);
    }
}

/* What subword vocabularies ask of a token (tokenizer/vocab.h). */
static void test_words_digits_and_folding(void **state)
{
    (void)state;
    static const struct { const char *token; int word; } cases[] = {
        {"shanghai", 1}, {"1990", 1}, {"é", 1}, {"ωμέγα", 1}, {"中", 0}, {"の", 0}, {".", 0}, {"#", 0},
        {"☃", 0}, {"\xCC\x81", 0}, /* a lone combining mark is a token of its own */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (tokenizer_is_word(cases[i].token) != cases[i].word)
            fail_msg("tokenizer_is_word(\"%s\") is not %d", cases[i].token, cases[i].word);
    assert_true(tokenizer_is_digit('7'));
    assert_true(tokenizer_is_digit(0x0663)); /* ARABIC-INDIC DIGIT THREE */
    assert_false(tokenizer_is_digit('x'));
    assert_false(tokenizer_is_digit(0x00B2)); /* superscript two is No, not Nd */
    char *f = tokenizer_fold("Shanghai ẞ");
    assert_string_equal(f, "shanghai ss");
    free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_words_digits_and_folding),
        cmocka_unit_test(test_tokenize_table),
        cmocka_unit_test(test_whitespace_only_gives_no_tokens),
        cmocka_unit_test(test_length_not_nul_terminator_bounds_text),
        cmocka_unit_test(test_offsets_are_original_bytes),
        cmocka_unit_test(test_spaced_marks_white_space_before),
        cmocka_unit_test(test_invalid_utf8_names_byte_offset),
        cmocka_unit_test(test_largest_code_point_is_valid),
        cmocka_unit_test(test_is_cjk),
        cmocka_unit_test(test_reads_as_han),
        cmocka_unit_test(test_free_is_null_safe_and_idempotent),
        cmocka_unit_test(test_stream_safe_joiner_after_30_non_starters),
        cmocka_unit_test(test_long_runs_of_marks_take_linear_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
