/* test_detokenize.c — writing tokens back as text: rule tables for English
 * and Chinese, ids through a vocabulary, and the exact-match rate on the
 * Tatoeba dev set with a perfect casing oracle. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tokenizer/detokenize.h"
#include "../tokenizer/tokenizer.h"
#include "../tokenizer/vocab.h"

/* Tokenise `text` and detokenise its folded tokens, with the surface forms
 * as casing when `oracle` is set.  The caller frees the result. */
static char *round_trip(const char *text, const char *lang, int oracle)
{
    TokenList l;
    Error err;
    if (tokenize(text, strlen(text), &l, &err) != 0) fail_msg("%s: %s", text, err.message);
    char *out = detokenize((const char *const *)l.folded,
                           oracle ? (const char *const *)l.surface : NULL, l.count, lang);
    token_list_free(&l);
    return out;
}

typedef struct {
    const char *input; /* tokenised, then detokenised without casing */
    const char *want;
} Case;

static void check_cases(const Case *cases, size_t n, const char *lang)
{
    for (size_t i = 0; i < n; i++) {
        char *got = round_trip(cases[i].input, lang, 0);
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("%s %zu: '%s' -> '%s', want '%s'", lang, i, cases[i].input, got,
                     cases[i].want);
        free(got);
    }
}

static void test_english_rules(void **state)
{
    (void)state;
    static const Case cases[] = {
        {"i love china", "I love china"},
        {"don ' t go", "Don't go"},
        {"tom ' s dog", "Tom's dog"},
        {"i ' m here , i ' ll stay , i ' ve seen , i ' d go", "I'm here, I'll stay, I've seen, I'd go"},
        {"it costs 3 . 5 or 1 , 000 at 10 : 30", "It costs 3.5 or 1,000 at 10:30"},
        {"a well - known man", "A well-known man"},
        {"it is $ 200 ( or 10 % ) .", "It is $200 (or 10%)."},
        {"he said , \" hello ! \" then left .", "He said, \"Hello!\" then left."},
        {"the students ' room", "The students' room"},
        {"at six o ' clock ?", "At six o'clock?"},
        {"wait ... what ?", "Wait... what?"},
        {"stop . go now !", "Stop. Go now!"},
        {"\" yes , \" she said .", "\"Yes,\" she said."},
        {"[ see : here ; there ]", "[See: here; there]"},
        {"born on april 3 , 1950 .", "Born on april 3, 1950."},
        {"at 2 : 30 p . m . tomorrow", "At 2:30 p.m. tomorrow"},
        {"mr . and mrs . smith", "Mr. and mrs. smith"},
        {"ask dr . jones or st . john", "Ask dr. jones or st. john"},
        {"he said : \" hello . \"", "He said: \"Hello.\""},
        {"the answer is \" no . \"", "The answer is \"no.\""},
        {"\" are you ok ? \" \" yes . \"", "\"Are you ok?\" \"Yes.\""},
        {"", ""},
    };
    check_cases(cases, sizeof cases / sizeof cases[0], "en");
}

static void test_english_uses_casing(void **state)
{
    (void)state;
    const char *tok[] = {"where", "is", "tom", "'", "s", "iphone", "?"};
    const char *cased[] = {"where", "is", "Tom", "'", "s", "iPhone", "?"};
    char *got = detokenize(tok, cased, 7, "en");
    assert_string_equal(got, "Where is Tom's iPhone?");
    free(got);
}

static void test_chinese_rules(void **state)
{
    (void)state;
    static const Case cases[] = {
        {"我想吃酸菜鱼", "我想吃酸菜鱼"},
        {"你好 , 汤姆 !", "你好，汤姆！"},
        {"你是谁?", "你是谁？"},
        {"他说: \"走吧.\"", "他说：“走吧。”"},
        {"我有 iPhone 6 (新的).", "我有iphone 6（新的）。"},
        {"一杯 café latte 和 Привет мир", "一杯café latte和привет мир"}, /* not ASCII, still apart */
        {"它重 3.5 公斤, 价格 1,000 元.", "它重3.5公斤，价格1,000元。"},
        {"十点 10:30 到", "十点10:30到"},
        {"好;", "好；"},
        {"我不知道…… 也许…", "我不知道……也许…"},
        {"美国 (U.S.) 下午 3 p.m.", "美国（u.s.）下午3 p.m."},
        {"", ""},
    };
    check_cases(cases, sizeof cases / sizeof cases[0], "zh");
}

/* A word that already holds a separator (the model wrote the first comma
 * of 1,234,567,890 as a byte token, grouped into the word "1,234"): the
 * number goes on, no list comma (it came out 1,234，567,890). */
static void test_chinese_number_after_a_byte_token_separator(void **state)
{
    (void)state;
    const char *tok[] = {"1,234", ",", "567", ",", "890", "元", "."};
    char *got = detokenize(tok, NULL, 7, "zh");
    assert_string_equal(got, "1,234,567,890元。");
    free(got);
    const char *list[] = {"a1", ",", "b2"}; /* letters on either side: still the list comma */
    got = detokenize(list, NULL, 3, "zh");
    assert_string_equal(got, "a1，b2");
    free(got);
    /* a word the model began with a numeral and went on with digits (二
     * ##5 ##5 . 2 ##0) ends in a number all the same: 二55.20, not 二55。20 */
    const char *after_numeral[] = {"今天是", "二55", ".", "20", "度", "."};
    got = detokenize(after_numeral, NULL, 6, "zh");
    assert_string_equal(got, "今天是二55.20度。");
    free(got);
    const char *mp3[] = {"mp3", ".", "5", "分钟"}; /* a word ending in a digit is no number: a full stop */
    got = detokenize(mp3, NULL, 4, "zh");
    assert_string_equal(got, "mp3。5分钟");
    free(got);
}

static void test_other_language_joins_with_spaces(void **state)
{
    (void)state;
    const char *tok[] = {"a", ",", "b"};
    char *got = detokenize(tok, NULL, 3, "xx");
    assert_string_equal(got, "a , b");
    free(got);
}

static void test_ids_skip_specials_and_use_cased(void **state)
{
    (void)state;
    static const char text[] = "<pad>\t<pad>\t0\n<unk>\t<unk>\t0\n<s>\t<s>\t0\n</s>\t</s>\t0\n"
                               "tom\tTom\t5\nis\tis\t4\nhere\there\t3\n.\t.\t9\n";
    Error err;
    Vocab *v = vocab_load(temp_file("ids.vocab", text, sizeof text - 1), &err);
    assert_non_null(v);
    const int ids[] = {VOCAB_BOS, 4, 5, 6, 7, VOCAB_EOS, VOCAB_PAD};
    char *got = detokenize_ids(v, ids, 7, "en");
    assert_string_equal(got, "Tom is here.");
    free(got);
    vocab_free(v);
}

/* Byte tokens make text, never control characters: C0 (a newline would be
 * two output lines), DEL, C1 (NEL; CSI starts a terminal's escape) and
 * U+2028/2029 are left out, invalid bytes become U+FFFD. */
static void test_byte_tokens_make_no_control_characters(void **state)
{
    (void)state;
    Error err;
    Vocab *v = vocab_load("weights/en-zh.tgt.vocab", &err); /* the shipped one: all byte tokens */
    if (!v) fail_msg("%s", err.message);
    assert_true(vocab_is_subword(v));
    /* a <0x0A> a <0xC2>##<0x85> a <0xC2>##<0x9B> a <0xE2>##<0x80>##<0xA8> a <0xFF> */
    const char *tokens[] = {"a", "<0x0A>", "a", "<0xC2>", "##<0x85>", "a", "<0xC2>", "##<0x9B>", "a",
                            "<0xE2>", "##<0x80>", "##<0xA8>", "a", "<0xFF>"};
    enum { N = sizeof tokens / sizeof *tokens };
    int ids[N];
    for (int i = 0; i < N; i++)
        if ((ids[i] = vocab_id(v, tokens[i])) < 0) fail_msg("no %s in the vocabulary", tokens[i]);
    for (int k = 0; k < 2; k++) {
        char *got = detokenize_ids(v, ids, N, k ? "zh" : "en");
        for (const unsigned char *p = (const unsigned char *)got; *p; p++)
            if (*p < 0x20 || *p == 0x7F || (p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) ||
                (p[0] == 0xE2 && p[1] == 0x80 && (p[2] == 0xA8 || p[2] == 0xA9)))
                fail_msg("a control character or line separator in '%s'", got);
        if (!strstr(got, "\xEF\xBF\xBD")) fail_msg("no U+FFFD for the lone 0xFF in '%s'", got);
        free(got);
    }
    vocab_free(v);
}

/* ---- Tatoeba dev: how often do we reproduce the reference exactly? ------ */

typedef struct {
    int lines, en_exact, zh_exact;
} DevRates;

/* For each dev pair, tokenise each side, detokenise with the surface forms
 * as casing and compare with the reference as written.  English references
 * are ASCII apart from a rare ’, so they equal their NFKC form; Chinese ones
 * keep their original (often full-width) punctuation, which is what the
 * detokeniser must restore. */
static DevRates measure_dev(const char *path)
{
    DevRates r = {0};
    size_t len;
    char *data = read_file(path, &len);
    if (!data) fail_msg("cannot read %s", path);
    char *p = data;
    if (strncmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3; /* BOM */
    while (*p) {
        char *eol = strchr(p, '\n');
        if (eol) *eol = '\0';
        char *tab1 = strchr(p, '\t');
        char *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
        if (tab1 && tab2) {
            *tab1 = *tab2 = '\0';
            const char *refs[2] = {p, tab1 + 1}, *langs[2] = {"en", "zh"};
            for (int k = 0; k < 2; k++) {
                char *got = round_trip(refs[k], langs[k], 1);
                int same = strcmp(got, refs[k]) == 0;
                if (k == 0) r.en_exact += same;
                else r.zh_exact += same;
                free(got);
            }
            r.lines++;
        }
        if (!eol) break;
        p = eol + 1;
    }
    free(data);
    return r;
}

static void test_tatoeba_dev_exact_match(void **state)
{
    (void)state;
    const char *dir = tatoeba_dir();
    if (!dir) SKIP_TEST("data", "no Tatoeba data at ../shared/data/tatoeba-cmn-eng (or $TATOEBA_DIR)");
    char path[512];
    snprintf(path, sizeof path, "%s/dev.tsv", dir);
    DevRates r = measure_dev(path);
    assert_true(r.lines > 0);
    double en = 100.0 * r.en_exact / r.lines, zh = 100.0 * r.zh_exact / r.lines;
    printf("detokenize on %s (%d pairs, casing oracle): en %.1f%% exact, zh %.1f%% exact\n",
           path, r.lines, en, zh);
    /* Measured: en 100.0%, zh 96.1%.  Nearly every Chinese miss is a
     * reference typed with ASCII "?" or "," (or a stray space); after NFKC
     * those are the same tokens as the usual full-width forms, which is
     * what we restore, so no rule can get them right. */
    assert_true(en >= 99.5);
    assert_true(zh >= 95.5);
}

/* A Latin word the source holds takes the source's casing when that has a
 * capital, in any output language; in English output not the short words
 * English writes itself ("a", "I", "it", "us"). */
static void test_source_casing(void **state)
{
    (void)state;
    static const struct { const char *text, *source, *lang, *want; } cases[] = {
        {"我买了一个iphone。", "I bought an iPhone.", "zh", "我买了一个iPhone。"},
        {"kAVELO是我的朋友。", "Kavelo is my friend.", "zh", "Kavelo是我的朋友。"},
        {"他不在乎x。", "He doesn't care about X.", "zh", "他不在乎X。"},
        {"Ibm and ibm.", "我在IBM工作。", "en", "IBM and IBM."},
        {"I have a plan a.", "我有A计划。", "en", "I have a plan a."},     /* "a" is a word */
        {"I think x is good.", "我觉得X不错。", "en", "I think X is good."},
        {"I think i is good.", "我觉得I不错。", "en", "I think i is good."},
        {"It is an IT company. It works.", "他在IT公司工作。", "en", "It is an IT company. It works."},
        {"He lives with us.", "他和我们住在US。", "en", "He lives with us."},
        {"Email me.", "给我发email。", "en", "Email me."},       /* a small-letter source gives nothing */
        {"Iphone is new.", "iPhone是新的。", "en", "iPhone is new."},
        {"I ate an apple.", "我吃了一个苹果。", "en", "I ate an apple."},  /* nothing to copy */
        {"ibm2 x", "IBM", "zh", "IBM2 x"},
        /* after an apostrophe a word goes on: the t of don't is not T恤's T,
         * the s of Tom's not S码's, the o of o'clock not O'Brien's O */
        {"I don't know what t is.", "我不知道T是什么意思。", "en", "I don't know what T is."},
        {"This is Tom's book, not s's.", "这是汤姆的书，不是S的。", "en", "This is Tom's book, not S's."},
        {"I'm Tom.", "我要M码，我是汤姆。", "en", "I'm Tom."},
        {"Mr o'brien says it is seven o'clock.", "O'Brien先生说现在是七点钟。", "en",
         "Mr O'Brien says it is seven o'clock."},
        {"o’brien is here.", "O'Brien在这里。", "en", "O’Brien is here."},  /* either apostrophe */
        {"kavelo's bike", "Kavelo的自行车", "en", "Kavelo's bike"},        /* a head takes its word's */
        {"o'brien's house", "O'Brien在这里", "en", "O'Brien's house"},      /* the longest part */
        {"", "IBM", "zh", ""},
        /* nor the common words an acronym may spell: "CAN you see?" before */
        {"This is a serial line, can you see?", "这是CAN总线，你能看见吗？", "en",
         "This is a serial line, can you see?"},
        {"Who says so? Not now.", "WHO说NOT NOW。", "en", "Who says so? Not now."},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *text = strdup(cases[i].text);
        detokenize_source_casing(text, cases[i].source, cases[i].lang);
        assert_string_equal(text, cases[i].want);
        free(text);
    }
}

/* A comma the detokeniser read as a thousands separator between two
 * numbers the source wrote apart goes back to a list's; what the source
 * writes so, or whose parts it does not hold, stays. */
static void test_source_numbers(void **state)
{
    (void)state;
    static const struct { const char *text, *source, *lang, *want; } cases[] = {
        {"I bought 2,100 apples.", "我买了2个苹果，100个梨。", "en", "I bought 2, 100 apples."},
        {"我买了2,100个苹果。", "I bought 2 apples and 100 pears.", "zh", "我买了2，100个苹果。"},
        {"This city has 2,500 people.", "这个城市有2,500人。", "en", "This city has 2,500 people."},
        {"这个城市有2,500人。", "The city has 2,500 people.", "zh", "这个城市有2,500人。"},
        {"It has 2,500 people.", "它有２，５００人。", "en", "It has 2,500 people."}, /* full width */
        {"I have 1,000 yuan.", "我有一千块钱。", "en", "I have 1,000 yuan."},     /* not the source's parts */
        {"I am 25 and have 1,000 yuan.", "我25岁，有一千块钱。", "en", "I am 25 and have 1,000 yuan."},
        {"1,2,3 and 1,000,000", "1、2、3 和 1,000,000", "en", "1, 2, 3 and 1,000,000"},
        {"3.5 and 10:30", "3.5 10:30", "en", "3.5 and 10:30"},
        {"1,5 kilos", "1.5公斤", "en", "1,5 kilos"},            /* 1.5 holds neither 1 nor 5 */
        {"no,2,100 apples", "2个苹果，100个梨", "en", "no,2, 100 apples"}, /* a word's comma first */
        {"", "2 100", "en", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *text = detokenize_source_numbers(strdup(cases[i].text), cases[i].source, cases[i].lang);
        if (strcmp(text, cases[i].want) != 0)
            fail_msg("'%s' from '%s': '%s', expected '%s'", cases[i].text, cases[i].source, text, cases[i].want);
        free(text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_english_rules),
        cmocka_unit_test(test_english_uses_casing),
        cmocka_unit_test(test_chinese_rules),
        cmocka_unit_test(test_chinese_number_after_a_byte_token_separator),
        cmocka_unit_test(test_other_language_joins_with_spaces),
        cmocka_unit_test(test_ids_skip_specials_and_use_cased),
        cmocka_unit_test(test_source_casing),
        cmocka_unit_test(test_source_numbers),
        cmocka_unit_test(test_byte_tokens_make_no_control_characters),
        cmocka_unit_test(test_tatoeba_dev_exact_match),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
