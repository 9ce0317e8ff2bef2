/* test_number_words.c — the English number words and the values of
 * Chinese numeral runs (model/number_words.h), which the number rule
 * builds on: each function against tables worked out by hand. */
#include "testutil.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../model/number_words.h"

static const char *const WORD[NUMBER_WORDS] = {
    "zero",    "one",     "two",       "three",    "four",     "five",     "six",      "seven",
    "eight",   "nine",    "ten",       "eleven",   "twelve",   "thirteen", "fourteen", "fifteen",
    "sixteen", "seventeen", "eighteen", "nineteen", "twenty",  "thirty",   "forty",    "fifty",
    "sixty",   "seventy", "eighty",    "ninety",   "hundred",  "thousand", "million",  "billion"};

/* The words marked in allowed, in index order, space-separated. */
static void marked(const bool *allowed, char *out, size_t room)
{
    out[0] = '\0';
    for (int i = 0; i < NUMBER_WORDS; i++)
        if (allowed[i]) snprintf(out + strlen(out), room - strlen(out), "%s%s", out[0] ? " " : "", WORD[i]);
}

static void test_words_are_found_by_name(void **state)
{
    (void)state;
    for (int i = 0; i < NUMBER_WORDS; i++) assert_int_equal(number_words_index(WORD[i]), i);
    assert_int_equal(number_words_index("thousands"), 29);
    assert_int_equal(number_words_index("hundreds"), 28);
    assert_int_equal(number_words_index("tens"), 10);
    assert_int_equal(number_words_index("twentys"), -1); /* only hundred .. billion and ten take an s */
    assert_int_equal(number_words_index("tennis"), -1);
    assert_int_equal(number_words_index("Twenty"), -1); /* lower case: the vocabularies' folded pieces */
    assert_int_equal(number_words_index(""), -1);
    assert_true(number_words_contains("six") && number_words_contains("ty") && number_words_contains("teen"));
    assert_true(number_words_contains("s")); /* the plural's piece */
    assert_false(number_words_contains("cat") || number_words_contains("nis"));
    /* part of two words side by side (zero one, sixty seventy) is part of none */
    assert_false(number_words_contains("roon") || number_words_contains("ro o") ||
                 number_words_contains("tyseven") || number_words_contains("ty s"));
    assert_true(number_words_contains("billion") && number_words_contains("zero"));
    bool sixty[NUMBER_WORDS] = {[24] = true}, thousand[NUMBER_WORDS] = {[29] = true};
    assert_true(number_words_extends("six", sixty) && number_words_extends("sixt", sixty));
    assert_false(number_words_extends("sixty", sixty) || number_words_extends("seven", sixty));
    assert_true(number_words_extends("thousand", thousand)); /* thousands */
    assert_false(number_words_extends("thousands", thousand));
}

/* Every part of every word, plural and ordinal is a part of one: the
 * letter-pair filter in front of number_words_contains's search turns
 * nothing away that the search alone would find (the last pair of a word,
 * an ordinal's, a plural's "ds"), and nothing else gets through it. */
static void test_every_part_of_a_word_is_contained(void **state)
{
    (void)state;
    static const char *const OTHER[] = {
        "zeroth",     "first",      "second",     "third",      "fourth",     "fifth",       "sixth",
        "seventh",    "eighth",     "ninth",      "tenth",      "eleventh",   "twelfth",     "thirteenth",
        "fourteenth", "fifteenth",  "sixteenth",  "seventeenth", "eighteenth", "nineteenth", "twentieth",
        "thirtieth",  "fortieth",   "fiftieth",   "sixtieth",   "seventieth", "eightieth",   "ninetieth",
        "hundredth",  "thousandth", "millionth",  "billionth",  "hundreds",   "thousands",   "millions",
        "billions",   "tens"};
    enum { OTHERS = sizeof OTHER / sizeof *OTHER };
    for (int w = 0; w < NUMBER_WORDS + OTHERS; w++) {
        const char *word = w < NUMBER_WORDS ? WORD[w] : OTHER[w - NUMBER_WORDS];
        size_t n = strlen(word);
        for (size_t from = 0; from < n; from++)
            for (size_t to = from + 1; to <= n; to++) {
                char part[16];
                snprintf(part, sizeof part, "%.*s", (int)(to - from), word + from);
                if (!number_words_contains(part)) fail_msg("'%s' of '%s' is not contained", part, word);
            }
    }
    /* the byte token 0x00's piece, "", is part of every word */
    assert_true(number_words_contains(""));
    /* a pair that is in no word; pairs that are, in no one word (one, ##t);
     * the end of one word, a space and the start of the next; other bytes */
    assert_false(number_words_contains("tz") || number_words_contains("xs") || number_words_contains("onet") ||
                 number_words_contains("ns ") ||
                 number_words_contains(" ") || number_words_contains("e\xc3\xa9") || number_words_contains("\xc3") ||
                 number_words_contains("Six") || number_words_contains("six1"));
}

/* The words of each number's English readings (number_words_of). */
static void test_the_words_of_a_number(void **state)
{
    (void)state;
    static const struct {
        unsigned long long integer;
        const char *decimals, *words;
    } cases[] = {
        {0, "", "zero"},
        {7, "", "seven"},
        {12, "", "twelve"},
        {25, "", "five twenty"},
        {60, "", "sixty"},
        {512, "", "five twelve hundred"},
        {1005, "", "one five thousand"},
        {1990, "", "one nine nineteen ninety hundred thousand"},     /* and nineteen ninety */
        {2500, "", "two five twenty hundred thousand"},              /* and twenty-five hundred */
        {100000, "", "one hundred thousand"},
        {2400000, "", "two four hundred thousand million"},
        {3, "14", "one three four"},                                 /* three point one four */
        {1000000000000ULL, "", ""},                                  /* beyond: nothing */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        bool allowed[NUMBER_WORDS] = {false};
        char got[512];
        number_words_of(cases[c].integer, cases[c].decimals, allowed);
        marked(allowed, got, sizeof got);
        if (strcmp(got, cases[c].words) != 0)
            fail_msg("%llu.%s: expected \"%s\", got \"%s\"", cases[c].integer, cases[c].decimals, cases[c].words, got);
    }
}

/* Each number's English readings in order (number_words_readings), the
 * words joined by spaces, the readings by " / ". */
static void test_the_readings_of_a_number(void **state)
{
    (void)state;
    static const struct {
        unsigned long long integer;
        const char *decimals, *readings;
    } cases[] = {
        {0, "", "zero"},
        {25, "", "twenty five"},
        {100, "", "one hundred / hundred"},                                /* a hundred */
        {1990, "", "one thousand nine hundred ninety / thousand nine hundred ninety / "
                   "nineteen hundred ninety / nineteen ninety"},
        {1905, "", "one thousand nine hundred five / thousand nine hundred five / nineteen hundred five"},
        {2500, "", "two thousand five hundred / twenty five hundred"},  /* no "twenty five" for it */
        {100000, "", "one hundred thousand / hundred thousand"},
        {35000, "", "thirty five thousand"},
        {3, "14", "three point one four"},         /* never "three" alone: I have three apples for 3.5 */
        {100, "5", "one hundred point five / hundred point five"},
        {1000000000000ULL, "", ""},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        NumberReading r[NUMBER_READINGS];
        int count = number_words_readings(cases[c].integer, cases[c].decimals, r);
        char got[512] = "";
        for (int k = 0; k < count; k++)
            for (int i = 0; i < r[k].n; i++)
                snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? " " : k ? " / " : "",
                         r[k].word[i] == NUMBER_WORD_POINT ? "point" : WORD[(int)r[k].word[i]]);
        if (strcmp(got, cases[c].readings) != 0)
            fail_msg("%llu.%s: expected \"%s\", got \"%s\"", cases[c].integer, cases[c].decimals,
                     cases[c].readings, got);
    }
    /* which word may follow which in one cardinal (indices: 5 five, 19
     * nineteen, 20 twenty, 21 thirty, 27 ninety, 28 hundred, 29 thousand) */
    assert_true(number_words_may_follow(20, 5) && number_words_may_follow(5, 28) &&
                number_words_may_follow(28, 29) && number_words_may_follow(29, 28) &&
                number_words_may_follow(28, 20) && number_words_may_follow(19, 28));
    assert_false(number_words_may_follow(20, 21) || number_words_may_follow(19, 27) ||
                 number_words_may_follow(5, 6) || number_words_may_follow(0, 5) || number_words_may_follow(28, 28) ||
                 number_words_may_follow(20, 19));
    /* plurals and ordinals, which the rule reads beside the words */
    assert_true(number_words_plural("thousands") && number_words_plural("tens"));
    assert_false(number_words_plural("thousand") || number_words_plural("six") || number_words_plural("cats"));
    assert_true(number_words_contains("thousands") && number_words_contains("first") &&
                number_words_contains("ieth"));
    assert_true(number_words_is_ordinal("twelfth") && number_words_is_ordinal("twentieth") &&
                number_words_is_ordinal("first"));
    assert_false(number_words_is_ordinal("twelve") || number_words_is_ordinal("fir"));
    bool one[NUMBER_WORDS] = {[1] = true}, twenty[NUMBER_WORDS] = {[20] = true};
    assert_true(number_words_ordinal_extends("fir", one) && number_words_ordinal_extends("first", one));
    assert_false(number_words_ordinal_extends("sec", one) || number_words_ordinal_extends("fir", twenty));
    assert_true(number_words_ordinal_extends("twentie", twenty));
}

static void test_english_runs_have_values(void **state)
{
    (void)state;
    static const struct {
        int words[6], n;
        bool ok;
        unsigned long long value;
    } cases[] = {
        {{3}, 1, true, 3},
        {{20, 5}, 2, true, 25},           /* twenty five */
        {{2, 28, 5}, 3, true, 205},       /* two hundred (and) five */
        {{1, 28, 29}, 3, true, 100000},   /* one hundred thousand */
        {{28}, 1, true, 100},             /* (a) hundred */
        {{29}, 1, true, 1000},
        {{5, 30, 4, 28, 29}, 5, true, 5400000}, /* five million four hundred thousand */
        {{29, 31}, 2, false, 0},          /* a thousand billion: 10^12 */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        uint64_t value = 0;
        bool ok = number_words_english_value(cases[c].words, cases[c].n, &value);
        if (ok != cases[c].ok || (ok && value != cases[c].value))
            fail_msg("case %zu: expected %d %llu, got %d %llu", c, cases[c].ok, cases[c].value, ok,
                     (unsigned long long)value);
    }
}

static void test_chinese_runs_have_values(void **state)
{
    (void)state;
    static const struct {
        const char *run;
        bool ok;
        unsigned long long integer;
        const char *decimals, *digits; /* digits: as written, for a run read digit by digit */
    } cases[] = {
        {"二十九", true, 29, "", ""},
        {"十二", true, 12, "", ""},
        {"十", true, 10, "", ""},
        {"百", true, 100, "", ""},            /* 好几百's hundreds */
        {"十万", true, 100000, "", ""},
        {"10万", true, 100000, "", ""},
        {"4万7千", true, 47000, "", ""},
        {"2.5万", true, 25000, "", ""},
        {"1,000万", true, 10000000, "", ""},
        {"2亿284万", true, 202840000, "", ""},
        {"一亿二千万", true, 120000000, "", ""},
        {"两千五百", true, 2500, "", ""},
        {"一千零五", true, 1005, "", ""},
        {"一百五", true, 150, "", ""},        /* shortened: 一百五十 */
        {"两千五", true, 2500, "", ""},
        {"三万五", true, 35000, "", ""},
        {"一百零五", true, 105, "", ""},      /* after 零 no shortening */
        {"十五", true, 15, "", ""},           /* nor after 十 */
        {"一九九零", true, 1990, "", "1990"}, /* no magnitude: digit by digit */
        {"二零零八", true, 2008, "", "2008"},
        {"零一二", true, 12, "", "012"},      /* the leading zero kept as written */
        {"二零一九零零一", true, 2019001, "", "2019001"},
        {"三点一四", true, 3, "14", "3"},
        {"十二点五", true, 12, "5", ""},
        {"七八", false, 0, "", ""},            /* seven or eight */
        {"两三", false, 0, "", ""},
        {"十七八", false, 0, "", ""},          /* 17 or 18 */
        {"两三千", false, 0, "", ""},
        {"七八十", false, 0, "", ""},
        {"2.555百", false, 0, "", ""},         /* 255.5: no whole number */
        {"2.55百", true, 255, "", ""},
        {"三点", false, 0, "", ""},            /* nothing after the point */
        {"点", false, 0, "", ""},
        {"三点一点", false, 0, "", ""},
        {"一万亿", false, 0, "", ""},          /* 10^12 */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        uint64_t integer = 0;
        char decimals[64] = "x", digits[64] = "x";
        bool ok = number_words_chinese_value(cases[c].run, &integer, decimals, digits);
        if (ok != cases[c].ok || (ok && (integer != cases[c].integer || strcmp(decimals, cases[c].decimals) != 0 ||
                                         strcmp(digits, cases[c].digits) != 0)))
            fail_msg("%s: expected %d %llu.%s (%s), got %d %llu.%s (%s)", cases[c].run, cases[c].ok, cases[c].integer,
                     cases[c].decimals, cases[c].digits, ok, (unsigned long long)integer, decimals, digits);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_words_are_found_by_name),
        cmocka_unit_test(test_every_part_of_a_word_is_contained),
        cmocka_unit_test(test_the_words_of_a_number),
        cmocka_unit_test(test_the_readings_of_a_number),
        cmocka_unit_test(test_english_runs_have_values),
        cmocka_unit_test(test_chinese_runs_have_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
