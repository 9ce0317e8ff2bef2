/* test_decode_rules.c — the rules on which tokens decoding may choose
 * (decode.h's DecodeRules): the no-repeat-n-gram rule (decode_ban_repeats)
 * and the number-copying rule (model/number_rule.h), and their use by
 * greedy decoding, batched greedy decoding and beam search.
 *
 * What is checked: each rule bans exactly the tokens it describes (tables
 * of cases; the number rule's on a made-up vocabulary: no source number,
 * beginning, continuing and ending a number, numbers used up, a number
 * that is also the beginning of another, a vocabulary that cannot finish
 * one), and the two together always leave a token; random models that
 * break a rule without it (V = 24 tokens, so repeats and digits are
 * common) obey it with it, greedy and beam alike;
 * the log-probabilities recorded under a rule are still the model's own (a
 * teacher-forced pass over the same tokens gives them); beam 1 under a
 * rule is greedy under it, bit for bit; batched greedy decoding (--eval's)
 * gives the same tokens as one sentence at a time; and n 0 changes
 * nothing. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/beam.h"
#include "../model/model.h"
#include "../model/number_rule.h"

/* ---- the no-repeat rule (decode_ban_repeats) ------------------------------------ */

static void test_bans_the_tokens_that_complete_a_seen_ngram(void **state)
{
    (void)state;
    enum { V = 10 };
    static const struct {
        int history[8], len, n;
        int banned[V]; /* 1 = banned */
    } cases[] = {
        {{5, 6, 5}, 3, 2, {[6] = 1}},                 /* 5 6 seen, ends in 5: no second 6 */
        {{1, 2, 3, 1, 2}, 5, 3, {[3] = 1}},           /* 1 2 3 seen, ends in 1 2 */
        {{1, 2, 3, 1, 2}, 5, 2, {[3] = 1}},           /* ends in 2: 2 3 seen */
        {{4, 4}, 2, 2, {[4] = 1}},                    /* 4 4 4 would repeat 4 4 */
        {{7, 8, 9}, 3, 1, {[7] = 1, [8] = 1, [9] = 1}}, /* n 1: no token twice */
        {{1, 2, 3}, 3, 2, {0}},                       /* 3 never seen before the end */
        {{1, 2}, 2, 4, {0}},                          /* history shorter than n-1 */
        {{3, 1, 3, 2, 3}, 5, 2, {[1] = 1, [2] = 1}},  /* 3 was followed by 1 and by 2 */
        {{1, 2, 3}, 3, 0, {0}},                       /* n 0: off */
        {{0}, 0, 1, {0}},                             /* nothing output yet */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        float logits[V];
        for (int i = 0; i < V; i++) logits[i] = (float)i * 0.5f;
        decode_ban_repeats(cases[c].history, cases[c].len, cases[c].n, logits);
        for (int i = 0; i < V; i++) {
            bool banned = logits[i] == -INFINITY;
            if (banned != (cases[c].banned[i] == 1))
                fail_msg("case %zu: token %d is %sbanned", c, i, banned ? "" : "not ");
            if (!banned && logits[i] != (float)i * 0.5f) fail_msg("case %zu: token %d changed", c, i);
        }
    }
}

/* ---- the number rule (model/number_rule.h), on a made-up vocabulary --------------- */

/* Target ids: 0..3 the specials, 4 "cat", 5 ".", then the digits 0..9 as
 * word starts (6..15) and as "##" continuations (16..25).  The source
 * vocabulary is the same. */
enum { MADE_UP_V = 26, WORD = 6, CONT = 16, CAT = 4, DOT = 5 };

/* A rule over V tokens whose digits 0..9 are ids word.. (word starts) and
 * cont.. ("##"), on both sides; without the target's ##2 unless
 * `with_continuations`. */
static NumberRule *digits_rule(int V, int word, int cont, bool with_continuations)
{
    NumberRule *r = number_rule_new(V, V);
    for (int d = 0; d < 10; d++) {
        char text[2] = {(char)('0' + d), 0};
        number_rule_set_source(r, word + d, text, false);
        number_rule_set_source(r, cont + d, text, true);
        number_rule_set_target(r, word + d, text, false);
        if (with_continuations || d != 2) number_rule_set_target(r, cont + d, text, true);
    }
    return r;
}

static NumberRule *made_up_rule(bool with_continuations)
{
    return digits_rule(MADE_UP_V, WORD, CONT, with_continuations);
}

/* The tokens (V of them, at most 32) allowed after `history` for `src`
 * (spaced as `spaced` says, NULL: not known), as a string: one letter a
 * token, '.' banned, 'x' allowed. */
static void allowed_spaced(const NumberRule *r, int V, const int *src, const bool *spaced, int S,
                           const int *history, int len, char *out)
{
    float logits[32];
    for (int i = 0; i < V; i++) logits[i] = 0.0f;
    number_rule_ban(r, src, spaced, S, history, len, logits);
    for (int i = 0; i < V; i++) out[i] = logits[i] == -INFINITY ? '.' : 'x';
    out[V] = 0;
}

static void allowed_of(const NumberRule *r, int V, const int *src, int S, const int *history, int len, char *out)
{
    allowed_spaced(r, V, src, NULL, S, history, len, out);
}

static void allowed(const NumberRule *r, const int *src, int S, const int *history, int len, char out[MADE_UP_V + 1])
{
    allowed_of(r, MADE_UP_V, src, S, history, len, out);
}

static void test_number_rule_bans_what_its_header_says(void **state)
{
    (void)state;
    /* sources: "cat 1 ##9 ##8 ##8 ." (1988), "5 cat 5" (5 twice), "1 cat 1 ##2" (1 and 12),
     * "cat ." (no number), "1 ##2" (12) */
    static const int src_1988[] = {CAT, WORD + 1, CONT + 9, CONT + 8, CONT + 8, DOT};
    static const int src_55[] = {WORD + 5, CAT, WORD + 5};
    static const int src_1_12[] = {WORD + 1, CAT, WORD + 1, CONT + 2};
    static const int src_none[] = {CAT, DOT};
    static const int src_12[] = {WORD + 1, CONT + 2};
    /* Expected: the 6 others (specials, cat, .), the 10 word-start digits
     * and the 10 "##" digits, each 'x' allowed or '.' banned. */
    static const char X6[] = "xxxxxx", B6[] = "......", X10[] = "xxxxxxxxxx", B10[] = "..........";
    static const char ONE[] = ".x........", FIVE[] = ".....x....", TWO[] = "..x.......";
    static const struct {
        const char *what;
        const int *src;
        int S, history[6], len;
        bool continuations; /* the target vocabulary has ##2 */
        const char *others, *words, *continued;
    } cases[] = {
        {"no source number: nothing banned", src_none, 2, {0}, 0, true, X6, X10, X10},
        {"no source number, after digits: nothing banned", src_none, 2, {WORD + 3, CONT + 4}, 2, true, X6, X10,
         X10},
        {"start: a number may only begin with 1", src_1988, 6, {0}, 0, true, X6, ONE, ONE},
        {"after 1: only ##9, nothing ends it", src_1988, 6, {WORD + 1}, 1, true, B6, B10, ".........x"},
        {"after 1 ##9 ##8: only ##8", src_1988, 6, {WORD + 1, CONT + 9, CONT + 8}, 3, true, B6, B10,
         "........x."},
        {"after 1988: it may end, no digit follows", src_1988, 6, {CAT, WORD + 1, CONT + 9, CONT + 8, CONT + 8},
         5, true, X6, B10, B10},
        {"1988 used up: no digit at all", src_1988, 6, {WORD + 1, CONT + 9, CONT + 8, CONT + 8, CAT}, 5, true, X6,
         B10, B10},
        {"5 twice: after one 5, another may begin", src_55, 3, {WORD + 5, CAT}, 2, true, X6, FIVE, FIVE},
        {"5 twice: after both, none", src_55, 3, {WORD + 5, CAT, WORD + 5, DOT}, 4, true, X6, B10, B10},
        {"5 twice: right after a 5, a new 5 may begin, but not ##5 (55)", src_55, 3, {WORD + 5}, 1, true, X6,
         FIVE, B10},
        {"1 and 12: after 1, it may end, go on to 12, or a new 1 begin", src_1_12, 4, {WORD + 1}, 1, true, X6,
         ONE, TWO},
        {"1 and 12: after 12, the 1 is left", src_1_12, 4, {WORD + 1, CONT + 2, CAT}, 3, true, X6, ONE, ONE},
        {"a continuing digit after a word begins a number", src_12, 2, {CAT}, 1, true, X6, ONE, ONE},
        {"no ##2 in the vocabulary (so it is a word): 1 may end rather than stall", src_12, 2, {WORD + 1}, 1,
         false, X6, B10, TWO},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        NumberRule *r = made_up_rule(cases[c].continuations);
        assert_int_equal(number_rule_applies(r, cases[c].src, cases[c].S), cases[c].src != src_none);
        char got[MADE_UP_V + 1], expect[MADE_UP_V + 1];
        allowed(r, cases[c].src, cases[c].S, cases[c].history, cases[c].len, got);
        snprintf(expect, sizeof expect, "%s%s%s", cases[c].others, cases[c].words, cases[c].continued);
        if (strcmp(got, expect) != 0)
            fail_msg("%s:\n  expected %s\n  got      %s", cases[c].what, expect, got);
        number_rule_free(r);
    }
}

/* The Chinese readings of source numbers (number_rule_readings): the
 * standard form, 二 for every 2 and 零 for every 0, a 4-digit integer's
 * digits one by one too. */
static void test_number_rule_reads_numbers_in_chinese(void **state)
{
    (void)state;
    static const struct {
        const char *number;
        int count;
        const char *readings;
    } cases[] = {
        {"3", 1, "三\n"},
        {"2", 1, "二\n"},
        {"0", 1, "零\n"},
        {"10", 1, "十\n"},
        {"12", 1, "十二\n"},
        {"25", 1, "二十五\n"},
        {"110", 1, "一百一十\n"},
        {"130", 1, "一百三十\n"},
        {"512", 1, "五百一十二\n"},
        {"1,000", 1, "一千\n"},
        {"1,005", 1, "一千零五\n"},
        {"1,050", 1, "一千零五十\n"},
        {"2,500", 1, "二千五百\n"},
        {"10,005", 1, "一万零五\n"},
        {"10,500", 1, "一万零五百\n"},
        {"25,000", 1, "二万五千\n"},
        {"100,000", 1, "十万\n"},
        {"100,000,005", 1, "一亿零五\n"},
        {"1990", 2, "一千九百九十\n一九九零\n"},
        {"2008", 2, "二千零八\n二零零八\n"},
        {"3.14", 1, "三点一四\n"},
        {"0.5", 1, "零点五\n"},
        {"1,234.5", 1, "一千二百三十四点五\n"},
        {"999999999999", 1, "九千九百九十九亿九千九百九十九万九千九百九十九\n"},
        {"1234567890123", 0, ""}, /* more than 12 digits: none */
        /* joined as one number by the source's reading, said by no
         * reading: none (a separator after the point was read as a digit,
         * outside the table of digits) */
        {"1.2.3", 0, ""},
        {"192.168.0.1", 0, ""},
        {"1.234,567", 0, ""},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char out[NUMBER_RULE_READINGS_ROOM];
        memset(out, 'x', sizeof out);
        int count = number_rule_readings(cases[c].number, (int)strlen(cases[c].number), out);
        if (count != cases[c].count || strcmp(out, cases[c].readings) != 0)
            fail_msg("%s: expected %d \"%s\", got %d \"%s\"", cases[c].number, cases[c].count, cases[c].readings,
                     count, out);
    }
    assert_true(number_rule_is_numeral("两") && number_rule_is_numeral("〇") && number_rule_is_numeral("亿"));
    assert_true(number_rule_is_numeral("点"));
    assert_false(number_rule_is_numeral("个") || number_rule_is_numeral("一个") || number_rule_is_numeral("1"));
}

/* The made-up vocabulary and its digits, with the Chinese numerals 一 二
 * 两 十 千 万 点 as ids 26..32. */
enum { NUMERALS_V = 33, HAN_ONE = 26, HAN_TWO, HAN_LIANG, HAN_TEN, HAN_THOUSAND, HAN_MYRIAD, HAN_POINT };

/* Which of the seven numerals are allowed after `history` for `src`, as
 * in allowed(): 'x' allowed, '.' banned. */
static void numerals_allowed(const NumberRule *r, const int *src, int S, const int *history, int len, char out[8])
{
    float logits[NUMERALS_V] = {0};
    number_rule_ban(r, src, NULL, S, history, len, logits);
    for (int i = 0; i < 7; i++) out[i] = logits[HAN_ONE + i] == -INFINITY ? '.' : 'x';
    out[7] = 0;
}

/* A Chinese target's numerals go on only as a prefix of a reading of an
 * unused source number, once the run holds two of them or a magnitude
 * (number_rule.h): 1000 is not 一万, but 一 and 两 alone stay words. */
static void test_number_rule_bans_numerals_of_another_value(void **state)
{
    (void)state;
    static const char *const han[7] = {"一", "二", "两", "十", "千", "万", "点"};
    NumberRule *r = digits_rule(NUMERALS_V, WORD, CONT, true);
    NumberRule *no_numerals = digits_rule(NUMERALS_V, WORD, CONT, true); /* as for an English target */
    number_rule_set_source(r, DOT, ".", false);
    for (int i = 0; i < 7; i++) number_rule_set_numeral(r, HAN_ONE + i, han[i]);
    /* sources: "1 ##0 ##0 ##0 cat 2" (1000 and 2), "1 . 1" (1.1) */
    static const int src_1000_2[] = {WORD + 1, CONT, CONT, CONT, CAT, WORD + 2};
    static const int src_decimal[] = {WORD + 1, DOT, WORD + 1};
    static const struct {
        const char *what;
        const int *src;
        int S, history[5], len;
        const char *expect; /* 一 二 两 十 千 万 点 */
    } cases[] = {
        {"start: single digits free, magnitudes only where a reading begins so", src_1000_2, 6, {0}, 0, "xxx...x"},
        {"after 一: only 一千 (not 一万), or 点", src_1000_2, 6, {HAN_ONE}, 1, "....x.x"},
        {"after 一千: it is whole, nothing goes on", src_1000_2, 6, {HAN_ONE, HAN_THOUSAND}, 2, "......x"},
        {"after 两 (read 二, for 2): nothing goes on", src_1000_2, 6, {HAN_LIANG}, 1, "......x"},
        {"1000 used up as 一千: 一 alone free, no 一千 again", src_1000_2, 6,
         {HAN_ONE, HAN_THOUSAND, CAT, HAN_ONE}, 4, "......x"},
        {"1000 used up as 1000: no 一千", src_1000_2, 6, {WORD + 1, CONT, CONT, CONT, HAN_ONE}, 5, "......x"},
        {"a 点 no reading goes on with ends the run: 一 free again", src_1000_2, 6, {HAN_ONE, HAN_POINT}, 2,
         "xxx...x"},
        {"1.1: after 一点, only 一 (the run must go on: no 点)", src_decimal, 3, {HAN_ONE, HAN_POINT}, 2, "x......"},
        {"1.1: after 一点一, nothing", src_decimal, 3, {HAN_ONE, HAN_POINT, HAN_ONE}, 3, "......x"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char got[8];
        numerals_allowed(r, cases[c].src, cases[c].S, cases[c].history, cases[c].len, got);
        if (strcmp(got, cases[c].expect) != 0)
            fail_msg("%s:\n  expected %s\n  got      %s", cases[c].what, cases[c].expect, got);
        numerals_allowed(no_numerals, cases[c].src, cases[c].S, cases[c].history, cases[c].len, got);
        if (strcmp(got, "xxxxxxx") != 0) fail_msg("%s, no numerals set: got %s", cases[c].what, got);
    }
    number_rule_free(no_numerals);
    number_rule_free(r);
}

/* A minus sign (number_rule.h): an English source's -10 ("-" with white
 * space before it, none after) is written in Chinese only after 负, "-"
 * or 零下; where the output would begin it without one (10, 十), those are
 * banned and 负 takes the highest of their logits.  After 负 only a
 * negative number may begin (a positive one would come out negative).  It was 今天是10度。 for
 * "It is -10 degrees today.".  The range 1-2 and "5 - 3" hold no
 * negative number; a rule with no 负 to write (an English target) reads
 * no sign. */
enum { SIGN_V = 37, MINUS = 33, FU = 34, LING = 35, XIA = 36 };

static NumberRule *sign_rule(bool with_signs)
{
    static const char *const han[7] = {"一", "二", "两", "十", "千", "万", "点"};
    NumberRule *r = digits_rule(SIGN_V, WORD, CONT, true);
    for (int i = 0; i < 7; i++) number_rule_set_numeral(r, HAN_ONE + i, han[i]);
    number_rule_set_numeral(r, LING, "零");
    if (!with_signs) return r;
    number_rule_set_source_sign(r, MINUS, "-");
    number_rule_set_target_sign(r, MINUS, "-");
    number_rule_set_target_sign(r, FU, "负");
    number_rule_set_target_sign(r, XIA, "下");
    return r;
}

/* The logits after `history`, from 0 but 1: 5, 十: 3, 负: -2, "-": -1. */
static void sign_logits(const NumberRule *r, const int *src, const bool *spaced, int S, const int *history, int len,
                        float logits[SIGN_V])
{
    for (int i = 0; i < SIGN_V; i++) logits[i] = 0.0f;
    logits[WORD + 1] = 5.0f;
    logits[HAN_TEN] = 3.0f;
    logits[FU] = -2.0f;
    logits[MINUS] = -1.0f;
    number_rule_ban(r, src, spaced, S, history, len, logits);
}

static void test_number_rule_holds_a_minus_sign(void **state)
{
    (void)state;
    NumberRule *r = sign_rule(true), *no_sign = sign_rule(false);
    /* "cat -10", "1-2" (a range), "5 - 3" */
    static const int minus_10[] = {CAT, MINUS, WORD + 1, CONT + 0}, range[] = {WORD + 1, MINUS, WORD + 2},
                     spaced_out[] = {WORD + 5, MINUS, WORD + 3}, ten[] = {WORD + 1, CONT + 0};
    static const bool minus_10_spaced[] = {false, true, false, false}, range_spaced[] = {false, false, false},
                      spaced_out_spaced[] = {false, true, true};
    float l[SIGN_V];
    /* at the start: neither 1 nor 十 may begin -10; 负 takes the 1's logit */
    sign_logits(r, minus_10, minus_10_spaced, 4, NULL, 0, l);
    assert_true(l[WORD + 1] == -INFINITY && l[HAN_TEN] == -INFINITY);
    assert_true(l[FU] == 5.0f && l[MINUS] == -1.0f);
    /* after 负, "-" or 零下 the number may begin, and 负 is no longer raised */
    static const int after[3][2] = {{FU}, {MINUS}, {LING, XIA}};
    for (int a = 0; a < 3; a++) {
        sign_logits(r, minus_10, minus_10_spaced, 4, after[a], a == 2 ? 2 : 1, l);
        if (l[WORD + 1] != 5.0f || l[HAN_TEN] != 3.0f || l[FU] != -2.0f)
            fail_msg("after sign %d: 1 %g, 十 %g, 负 %g", a, (double)l[WORD + 1], (double)l[HAN_TEN], (double)l[FU]);
    }
    /* 零 alone leaves 下 free (零下 is a sign), and after 负1 only ##0 goes on */
    sign_logits(r, minus_10, minus_10_spaced, 4, (const int[]){LING}, 1, l);
    assert_true(l[XIA] == 0.0f);
    sign_logits(r, minus_10, minus_10_spaced, 4, (const int[]){FU, WORD + 1}, 2, l);
    assert_true(l[CONT + 0] == 0.0f && l[CAT] == -INFINITY);
    /* -10 written: used up, no 1 again, nothing raised */
    sign_logits(r, minus_10, minus_10_spaced, 4, (const int[]){FU, WORD + 1, CONT + 0, CAT}, 4, l);
    assert_true(l[WORD + 1] == -INFINITY && l[FU] == -2.0f);
    /* "cat -10 cat 2": after 负 only the negative one (负 and 2 would
     * flip the 2), no lone 二 either; after "-" either (a range) */
    static const int minus_10_2[] = {CAT, MINUS, WORD + 1, CONT + 0, CAT, WORD + 2};
    static const bool minus_10_2_spaced[] = {false, true, false, false, true, true};
    sign_logits(r, minus_10_2, minus_10_2_spaced, 6, (const int[]){FU}, 1, l);
    assert_true(l[WORD + 1] == 5.0f && l[WORD + 2] == -INFINITY && l[HAN_TWO] == -INFINITY);
    sign_logits(r, minus_10_2, minus_10_2_spaced, 6, (const int[]){MINUS}, 1, l);
    assert_true(l[WORD + 1] == 5.0f && l[WORD + 2] == 0.0f);
    sign_logits(r, minus_10_2, minus_10_2_spaced, 6, NULL, 0, l); /* unsigned: the 2, not the 1 */
    assert_true(l[WORD + 1] == -INFINITY && l[WORD + 2] == 0.0f && l[HAN_TWO] == 0.0f && l[FU] == 5.0f);
    /* no negative number: a range, a spaced minus, a plain 10 */
    sign_logits(r, range, range_spaced, 3, NULL, 0, l);
    assert_true(l[WORD + 1] == 5.0f && l[WORD + 2] == 0.0f && l[FU] == -2.0f);
    sign_logits(r, range, NULL, 3, NULL, 0, l);
    assert_true(l[WORD + 2] == 0.0f);
    sign_logits(r, spaced_out, spaced_out_spaced, 3, NULL, 0, l);
    assert_true(l[WORD + 3] == 0.0f && l[FU] == -2.0f);
    sign_logits(r, ten, NULL, 2, NULL, 0, l);
    assert_true(l[WORD + 1] == 5.0f && l[HAN_TEN] == 3.0f && l[FU] == -2.0f);
    /* no negative number in the source: a 负 the model wrote itself (for
     * "negative 5": 体温是负五度。, which came out 体温是负限度。 when only
     * a negative number could follow 负) goes on with any of its numbers */
    sign_logits(r, ten, NULL, 2, (const int[]){FU}, 1, l);
    if (l[WORD + 1] != 5.0f || l[HAN_TEN] != 3.0f)
        fail_msg("after 负 with no negative number: 1 %g, 十 %g", (double)l[WORD + 1], (double)l[HAN_TEN]);
    /* no 负 to write: the sign is not read, -10 is 10 as before */
    sign_logits(no_sign, minus_10, minus_10_spaced, 4, NULL, 0, l);
    assert_true(l[WORD + 1] == 5.0f && l[HAN_TEN] == 3.0f);
    number_rule_free(no_sign);
    number_rule_free(r);
}

/* A run of numerals that is a number but no whole reading yet must go on,
 * as a number of digits must (number_rule.h): after 十 for 12 only 二 (or
 * 两), never 十 and a word (the 三十 of 36.5, the 五号 of 512 were such
 * ends); a lone 二 is a number, a lone 一 or 两 maybe a word; unless
 * nothing can go on, here or by an earlier rule. */
static void test_number_rule_makes_a_numeral_run_go_on(void **state)
{
    (void)state;
    static const char *const han[7] = {"一", "二", "两", "十", "千", "万", "点"};
    NumberRule *r = digits_rule(NUMERALS_V, WORD, CONT, true);
    number_rule_set_source(r, DOT, ".", false);
    for (int i = 0; i < 7; i++) number_rule_set_numeral(r, HAN_ONE + i, han[i]);
    static const int src_12[] = {CAT, WORD + 1, CONT + 2};        /* "cat 12" */
    static const int src_10_12[] = {WORD + 1, CONT + 0, WORD + 1, CONT + 2}; /* "10 12" */
    static const int src_25[] = {WORD + 2, CONT + 5};             /* 二十五: no 五 in the vocabulary */
    static const int src_decimal[] = {WORD + 1, DOT, WORD + 1};   /* 1.1 */
    static const struct {
        const char *what;
        const int *src;
        int S, history[3], len;
        int pre_banned; /* banned by an earlier rule, or -1 */
        int allowed[2], n_allowed; /* the only tokens allowed; n_allowed -1: no token but numerals banned */
    } cases[] = {
        {"12, after 十: 二 or 两 only", src_12, 3, {HAN_TEN}, 1, -1, {HAN_TWO, HAN_LIANG}, 2},
        {"1.1, after 一点: 一 only", src_decimal, 3, {HAN_ONE, HAN_POINT}, 2, -1, {HAN_ONE}, 1},
        {"10 and 12, after 十: whole (10), so it may end", src_10_12, 4, {HAN_TEN}, 1, -1, {0}, -1},
        {"25, after 两十: no 五 to go on with, so it may end", src_25, 2, {HAN_LIANG, HAN_TEN}, 2, -1, {0}, -1},
        {"12, after 十, 二 banned before: 两 only", src_12, 3, {HAN_TEN}, 1, HAN_TWO, {HAN_LIANG}, 1},
        {"12, after a lone 一: maybe a word (一起), it may end", src_12, 3, {HAN_ONE}, 1, -1, {0}, -1},
        {"25, after a lone 二: a number, 十 only", src_25, 2, {HAN_TWO}, 1, -1, {HAN_TEN}, 1},
        {"25, after a lone 两: maybe a word (两个), it may end", src_25, 2, {HAN_LIANG}, 1, -1, {0}, -1},
        {"1.1, after a lone 二: no reading begins so, it may end", src_decimal, 3, {HAN_TWO}, 1, -1, {0}, -1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        float logits[NUMERALS_V] = {0};
        if (cases[c].pre_banned >= 0) logits[cases[c].pre_banned] = -INFINITY;
        number_rule_ban(r, cases[c].src, NULL, cases[c].S, cases[c].history, cases[c].len, logits);
        for (int id = 0; id < NUMERALS_V; id++) {
            bool allowed = cases[c].n_allowed < 0;
            for (int a = 0; a < cases[c].n_allowed; a++) allowed |= cases[c].allowed[a] == id;
            /* where it may end, the digits and the numerals are the other
             * tests' (the digit rule's, the numerals' prefix) */
            if ((cases[c].n_allowed < 0 && id >= WORD) || id == cases[c].pre_banned) continue;
            if ((logits[id] > -INFINITY) != allowed)
                fail_msg("%s: token %d is %sbanned", cases[c].what, id, allowed ? "" : "not ");
        }
    }
    /* an earlier rule banned both: nothing can go on, so nothing more is banned */
    float logits[NUMERALS_V] = {0};
    logits[HAN_TWO] = logits[HAN_LIANG] = -INFINITY;
    number_rule_ban(r, src_12, NULL, 3, (const int[]){HAN_TEN}, 1, logits);
    assert_true(logits[CAT] == 0 && logits[0] == 0 && logits[WORD + 1] == 0);
    number_rule_free(r);
}

/* An English source's number words (number_words.h), with digits beside
 * them or not: the numerals that say them stay free ("Three boys ate 30 apples." keeps
 * 三个男孩; "ten o'clock and 2 eggs" its 十点), in numerals only (no "2"
 * for "two"); and a number written in numerals is used up for its digits
 * too (五十 then 50 was 50 twice), but not by a lone numeral, maybe a word
 * (第二 "second" beside 2:30).  The vocabulary of the numeral tests,
 * its source ids 26..32 taken for two twenty ten - five and one. */
static void test_number_rule_reads_english_number_words(void **state)
{
    (void)state;
    enum { S_TWO = 26, S_TWENTY, S_TEN, S_DASH, S_FIVE, S_THOUSAND, S_ONE };
    static const char *const han[7] = {"一", "二", "两", "十", "千", "万", "点"};
    static const char *const words[7] = {"two", "twenty", "ten", "-", "five", "thousand", "one"};
    NumberRule *r = digits_rule(NUMERALS_V, WORD, CONT, true);
    for (int i = 0; i < 7; i++) number_rule_set_numeral(r, HAN_ONE + i, han[i]);
    for (int id = 0; id < NUMERALS_V; id++) {
        char digit[2] = {(char)('0' + (id - WORD) % 10), 0};
        const char *text = id >= S_TWO ? words[id - S_TWO] : id == CAT ? "cat" : id >= WORD ? digit : "<x>";
        number_rule_set_source_piece(r, id, text, id >= CONT && id < CONT + 10);
    }
    static const int two_20[] = {S_TWO, CAT, WORD + 2, CONT + 0}, only_20[] = {CAT, WORD + 2, CONT + 0},
                     ten_2[] = {S_TEN, CAT, WORD + 2}, only_2[] = {CAT, WORD + 2},
                     two_30[] = {S_TWO, CAT, WORD + 3, CONT + 0}, twenty_3[] = {S_TWENTY, CAT, WORD + 3},
                     twenty_five_3[] = {S_TWENTY, S_DASH, S_FIVE, CAT, WORD + 3},
                     two_thousand[] = {WORD + 2, S_THOUSAND, CAT, WORD + 3},
                     twenty_thousand[] = {WORD + 2, CONT + 0, S_THOUSAND, CAT},
                     twenty_alone[] = {S_TWENTY, CAT}, one_alone[] = {S_ONE, CAT};
    static const struct {
        const char *what;
        const int *src;
        int S, history[4], len, id;
        bool allowed;
    } cases[] = {
        {"two and 20: after 二 (two) a word may follow", two_20, 4, {HAN_TWO}, 1, CAT, true},
        {"20 alone: after 二 only 十", only_20, 3, {HAN_TWO}, 1, CAT, false},
        {"ten and 2: 十 may begin", ten_2, 3, {0}, 0, HAN_TEN, true},
        {"ten and 2: after 十 a word may follow", ten_2, 3, {HAN_TEN}, 1, CAT, true},
        {"2 alone: no 十", only_2, 2, {0}, 0, HAN_TEN, false},
        {"two and 30: no digit 2 for two", two_30, 4, {0}, 0, WORD + 2, false},
        {"two and 30: the digit 3 of 30", two_30, 4, {0}, 0, WORD + 3, true},
        {"twenty and 3: 二十 is whole", twenty_3, 3, {HAN_TWO, HAN_TEN}, 2, CAT, true},
        {"twenty-five and 3: 二十 must go on (to 五, not in the vocabulary: so it may end)", twenty_five_3, 5,
         {HAN_TWO, HAN_TEN}, 2, CAT, true},
        {"twenty-five and 3: 二十 is no end of 25 while 十 could go on (二十十 is none either)", twenty_five_3, 5,
         {HAN_TWO, HAN_TEN}, 2, HAN_TEN, false},
        {"20 written 二十: no digit 2 after it", only_20, 3, {HAN_TWO, HAN_TEN, CAT}, 3, WORD + 2, false},
        {"a lone 二 (第二, second) uses up no 2 for the digits", only_2, 2, {HAN_TWO, CAT}, 2, WORD + 2, true},
        {"2 thousand: 二千 (2,000), not a thousand beside a 2", two_thousand, 4, {HAN_TWO}, 1, HAN_THOUSAND, true},
        /* the 2 of "2 thousand" is no number of its own ("40 million
         * dollars" came out 40美元) */
        {"2 thousand: 二 must go on to 二千", two_thousand, 4, {HAN_TWO}, 1, CAT, false},
        {"2 thousand: no digit 2", two_thousand, 4, {0}, 0, WORD + 2, false},
        {"2 thousand: the digit 3 beside it", two_thousand, 4, {0}, 0, WORD + 3, true},
        /* from 10,000, in digits and 万 亿 too, as Chinese writes them
         * ("2.84 million yen" 284万日元) */
        {"20 thousand: 2 may begin 2万", twenty_thousand, 4, {0}, 0, WORD + 2, true},
        {"20 thousand: after 2, 万", twenty_thousand, 4, {WORD + 2}, 1, HAN_MYRIAD, true},
        {"20 thousand: after 2, no end", twenty_thousand, 4, {WORD + 2}, 1, CAT, false},
        {"20 thousand: after 2, no 20", twenty_thousand, 4, {WORD + 2}, 1, CONT + 0, false},
        {"20 thousand: 2万 is whole", twenty_thousand, 4, {WORD + 2, HAN_MYRIAD}, 2, CAT, true},
        {"20 thousand: 2万 uses up 二万", twenty_thousand, 4, {WORD + 2, HAN_MYRIAD, CAT, HAN_TWO}, 4, HAN_MYRIAD,
         false},
        {"20 thousand: 二万 uses up 2万", twenty_thousand, 4, {HAN_TWO, HAN_MYRIAD, CAT}, 3, WORD + 2, false},
        {"20 thousand: or 二万", twenty_thousand, 4, {HAN_TWO}, 1, HAN_MYRIAD, true},
        /* words with no digit number beside them hold the numerals all the
         * same ("ninety-year history" was 九年, "seventy minutes" 七分钟) */
        {"twenty alone: 二 may begin", twenty_alone, 2, {0}, 0, HAN_TWO, true},
        {"twenty alone: 十 (10) may not begin", twenty_alone, 2, {0}, 0, HAN_TEN, false},
        {"twenty alone: after 二十 a word may follow", twenty_alone, 2, {HAN_TWO, HAN_TEN}, 2, CAT, true},
        {"twenty alone: 二十 is no prefix of another number (二十千)", twenty_alone, 2, {HAN_TWO, HAN_TEN}, 2,
         HAN_THOUSAND, false},
        {"twenty alone: no digit 2 for twenty", twenty_alone, 2, {0}, 0, WORD + 2, false},
        {"a lone one: no number, 十 is free", one_alone, 2, {0}, 0, HAN_TEN, true},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        float logits[NUMERALS_V] = {0};
        number_rule_ban(r, cases[c].src, NULL, cases[c].S, cases[c].history, cases[c].len, logits);
        if ((logits[cases[c].id] > -INFINITY) != cases[c].allowed)
            fail_msg("%s: token %d is %sbanned", cases[c].what, cases[c].id, cases[c].allowed ? "" : "not ");
    }
    assert_true(number_rule_applies(r, twenty_alone, 2));
    assert_false(number_rule_applies(r, one_alone, 2));
    number_rule_free(r);
}

/* ---- English number words (model/number_words.h) ---------------------------------- */

/* A Chinese source and an English target, made up: ids 0..3 the specials,
 * 4 "cat", 5..14 the digits as word starts, 15..24 as "##" digits, both
 * sides; then the source's numerals 十 二 五 六 三 万 (25..30) and the
 * target's pieces twelve twenty two six ##ty ##teen ten ##nis fifteen
 * fifty one thousand hundred - ##s si ##x and of second th ##ousand
 * hundredth (25..47); 百 千 (31, 32) are source numerals too; 48 is the
 * source's 点 and the target's "point"; 49 the source's 分 and the
 * target's ":"; 50 the source's 钟 (分钟) and the target's "clock". */
enum { ZH_EN_V = 51, ZW = 5, ZC = 15, ZH_TEN = 25, ZH_TWO, ZH_FIVE, ZH_SIX, ZH_THREE, ZH_MYRIAD, ZH_HUNDRED,
       ZH_THOUSAND, ZH_POINT = 48, ZH_MINUTE = 49, EN_COLON = 49, ZH_CLOCK = 50 };
enum { EN_TWELVE = 25, EN_TWENTY, EN_TWO, EN_SIX, EN_TY, EN_TEEN, EN_TEN, EN_NIS, EN_FIFTEEN, EN_FIFTY, EN_ONE,
       EN_THOUSAND, EN_HUNDRED, EN_DASH, EN_S, EN_SI, EN_X, EN_AND, EN_OF, EN_SECOND, EN_TH, EN_OUSAND,
       EN_HUNDREDTH, EN_POINT };

static NumberRule *zh_en_rule(void)
{
    NumberRule *r = number_rule_new(ZH_EN_V, ZH_EN_V);
    static const char *const han[8] = {"十", "二", "五", "六", "三", "万", "百", "千"};
    static const char *const pieces[ZH_EN_V] = {
        "<pad>", "<unk>", "<s>", "</s>", "cat", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9",
        "0", "1", "2", "3", "4", "5", "6", "7", "8", "9",
        "twelve", "twenty", "two", "six", "ty", "teen", "ten", "nis", "fifteen", "fifty", "one", "thousand",
        "hundred", "-", "s", "si", "x", "and", "of", "second", "th", "ousand", "hundredth", "point", ":", "clock"};
    for (int d = 0; d < 10; d++) {
        char text[2] = {(char)('0' + d), 0};
        number_rule_set_source(r, ZW + d, text, false);
        number_rule_set_source(r, ZC + d, text, true);
        number_rule_set_target(r, ZW + d, text, false);
        number_rule_set_target(r, ZC + d, text, true);
    }
    for (int i = 0; i < 8; i++) number_rule_set_source_numeral(r, ZH_TEN + i, han[i]);
    number_rule_set_source_numeral(r, ZH_POINT, "点");
    number_rule_set_source_minute_mark(r, ZH_MINUTE);
    number_rule_set_source_duration_mark(r, ZH_CLOCK);
    number_rule_set_target(r, EN_COLON, ":", false);
    for (int id = 0; id < ZH_EN_V; id++) {
        bool continues = (id >= ZC && id < ZC + 10) || id == EN_TY || id == EN_TEEN || id == EN_NIS || id == EN_S ||
                         id == EN_X || id == EN_OUSAND;
        number_rule_set_target_piece(r, id, pieces[id], continues);
    }
    return r;
}

/* Is each of ids[0..n-1] allowed ('x') or banned ('.') after `history`?
 * As a string, one character an id. */
static void these_allowed(const NumberRule *r, const int *src, int S, const int *history, int len, const int *ids,
                          int n, char *out)
{
    float logits[ZH_EN_V] = {0};
    number_rule_ban(r, src, NULL, S, history, len, logits);
    for (int i = 0; i < n; i++) out[i] = logits[ids[i]] == -INFINITY ? '.' : 'x';
    out[n] = 0;
}

/* English number words (and digits) only with a Chinese source number's
 * value: 十二 is twelve or 12, never twenty, two or 20; a word that an
 * allowed one goes on from may begin (six for 六十's sixty) but must go
 * on; a source whose only numeral is a lone 三 (星期三) bans nothing. */
static void test_number_rule_holds_english_number_words(void **state)
{
    (void)state;
    NumberRule *r = zh_en_rule();
    static const int ids[] = {EN_TWELVE, EN_TWENTY, EN_TWO, EN_SIX, EN_TY, EN_TEEN, EN_TEN, EN_NIS, EN_FIFTEEN,
                              EN_FIFTY, EN_ONE, EN_THOUSAND, EN_HUNDRED, EN_S, CAT, 3 /* </s> */, ZW + 1, ZW + 2,
                              ZW + 5};
    enum { N = sizeof ids / sizeof *ids };
    static const int src_12[] = {ZH_TEN, ZH_TWO}, src_60[] = {ZH_SIX, ZH_TEN}, src_15[] = {ZH_TEN, ZH_FIVE},
                     src_lone[] = {ZH_THREE, CAT}, src_10[] = {ZH_TEN}, src_2myriad[] = {ZW + 2, ZH_MYRIAD};
    static const struct {
        const char *what;
        const int *src;
        int S, history[2], len;
        const char *expect; /* twelve twenty two six ##ty ##teen ten ##nis fifteen fifty one thousand hundred
                               ##s cat </s> 1 2 5 */
    } cases[] = {
        {"十二: twelve or 12 only", src_12, 2, {0}, 0, "x...xx.x..x..xxxx.."},
        {"六十: six may begin sixty", src_60, 2, {0}, 0, "...xxx.x..x..xxx..."},
        {"六十, after six: only a piece that goes on toward sixty (##ty; not ##teen, ##nis, ##s)", src_60, 2,
         {EN_SIX}, 1, "....x.............."},
        {"六十, after sixty: whole, and used up (no six for a second sixty)", src_60, 2, {EN_SIX, EN_TY}, 2,
         "....xx.x..x..xxx..."},
        {"十五: fifteen, not fifty; 15, not 5", src_15, 2, {0}, 0, "....xx.xx.x..xxxx.."},
        {"a lone 三: no number for sure, nothing banned", src_lone, 2, {0}, 0, "xxxxxxxxxxxxxxxxxxx"},
        {"十, after ten: tennis or tens, but no second ten, nor 10 (a word or digit ends it: used up)", src_10, 1,
         {EN_TEN}, 1, "....xx.x..x..xxx..."},
        {"2万: twenty thousand or 20,000, no two (its 2 is part of 20,000); no thousand first", src_2myriad, 2,
         {0}, 0, ".x..xx.x..x..xxx.x."},
        {"2万, after twenty thousand: thousands too, and whole; used up, so no second twenty, nor 20,000", src_2myriad,
         2, {EN_TWENTY, EN_THOUSAND}, 2, "....xx.x..x..xxx..."},
        {"2万, after the digit 2: it goes on to 20,000 (no end, no word)", src_2myriad, 2, {ZW + 2}, 1,
         "..................."},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char got[N + 1];
        these_allowed(r, cases[c].src, cases[c].S, cases[c].history, cases[c].len, ids, N, got);
        if (strcmp(got, cases[c].expect) != 0)
            fail_msg("%s:\n  expected %s\n  got      %s", cases[c].what, cases[c].expect, got);
    }
    assert_true(number_rule_applies(r, src_12, 2));
    assert_false(number_rule_applies(r, src_lone, 2));
    /* 六十, after si: ##x makes six, no word of 60 but one sixty goes on from */
    float after_si[ZH_EN_V] = {0};
    number_rule_ban(r, src_60, NULL, 2, (const int[]){EN_SI}, 1, after_si);
    assert_true(after_si[EN_X] == 0);
    /* 二三 "two or three" beside a 10: no one number, so the words are left free */
    static const int this_or_that[] = {ZH_TWO, ZH_THREE, CAT, ZW + 1, ZC + 0};
    float logits[ZH_EN_V] = {0};
    number_rule_ban(r, this_or_that, NULL, 5, NULL, 0, logits);
    assert_true(logits[EN_TWO] == 0 && logits[EN_TWENTY] == 0);
    /* 二二二二二, a code read digit by digit: 22222 as written, no comma */
    static const int code[] = {ZH_TWO, ZH_TWO, ZH_TWO, ZH_TWO, ZH_TWO};
    static const int written[] = {ZW + 2, ZC + 2};
    memset(logits, 0, sizeof logits);
    number_rule_ban(r, code, NULL, 5, written, 2, logits);
    assert_true(logits[ZC + 2] == 0);
    number_rule_free(r);
}

/* The words in the order of a reading (number_rule.h): 二万 is "twenty
 * thousand", so neither "two" nor "thousand" may begin it, and "twenty"
 * may not end it (twenty cats for 20,000): only "thousand" or one joiner
 * may follow, and no piece that makes twenty another word; 二十二 may end
 * "twenty-second"; "of" joins only after a plural (tens of thousands for
 * 万), "and" only after a hundred .. billion. */
static void test_number_rule_orders_english_number_words(void **state)
{
    (void)state;
    NumberRule *r = zh_en_rule();
    static const int ids[] = {EN_TWENTY, EN_TWO, EN_THOUSAND, EN_TEN, EN_ONE, EN_DASH, EN_AND, EN_OF, EN_SECOND,
                              EN_S, EN_X, CAT, 3 /* </s> */};
    enum { N = sizeof ids / sizeof *ids };
    static const int src_20000[] = {ZH_TWO, ZH_MYRIAD}, src_22[] = {ZH_TWO, ZH_TEN, ZH_TWO},
                     src_10000[] = {ZH_MYRIAD, CAT}, src_2_10000[] = {ZH_TWO, CAT, ZH_MYRIAD},
                     src_250[] = {ZH_TWO, ZH_HUNDRED, ZH_FIVE}, src_1200[] = {ZH_THOUSAND, ZH_TWO};
    static const struct {
        const char *what;
        const int *src;
        int S, history[3], len;
        const char *expect; /* twenty two thousand ten one - and of second ##s ##x cat </s> */
    } cases[] = {
        {"二万: twenty may begin, not two or thousand", src_20000, 2, {0}, 0, "x...xxxxxxxxx"},
        {"二万, after twenty: thousand or a joiner, nothing else", src_20000, 2, {EN_TWENTY}, 1, "..x..x......."},
        {"二万, after twenty -: thousand only", src_20000, 2, {EN_TWENTY, EN_DASH}, 2, "..x.........."},
        {"二万, after twenty thousand: whole, and used up (no second twenty)", src_20000, 2, {EN_TWENTY, EN_THOUSAND},
         2, "....xxxxxxxxx"},
        {"二十二, after twenty -: two or its ordinal", src_22, 3, {EN_TWENTY, EN_DASH}, 2, ".x......x...."},
        {"万, after ten: thousand, a dash, ##s; no of, no and", src_10000, 2, {EN_TEN}, 1, "..x..x...x..."},
        {"万, after tens: of too", src_10000, 2, {EN_TEN, EN_S}, 2, "..x..x.x....."},
        {"二 and 万, after ten: ten is not whole because two is one word long", src_2_10000, 3, {EN_TEN}, 1,
         "..x..x...x..."},
        {"二百五, after two hundred: fifty, a dash, and", src_250, 3, {EN_TWO, EN_HUNDRED}, 2, ".....xx......"},
        {"千二, after thousand: two, a dash or and, no thousands (a thousands of two hundred)", src_1200, 2,
         {EN_THOUSAND}, 1, ".x...xx......"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char got[N + 1];
        these_allowed(r, cases[c].src, cases[c].S, cases[c].history, cases[c].len, ids, N, got);
        if (strcmp(got, cases[c].expect) != 0)
            fail_msg("%s:\n  expected %s\n  got      %s", cases[c].what, cases[c].expect, got);
    }
    /* 二百五, after two: an ordinal ends the run only where it ends the
     * reading (two hundredth is no 250) */
    float after_two[ZH_EN_V] = {0};
    number_rule_ban(r, src_250, NULL, 3, (const int[]){EN_TWO}, 1, after_two);
    assert_true(after_two[EN_HUNDRED] == 0 && after_two[EN_HUNDREDTH] == -INFINITY);
    /* 二万, after twenty th: the word begun goes on toward thousand, nothing else */
    float logits[ZH_EN_V] = {0};
    number_rule_ban(r, src_20000, NULL, 2, (const int[]){EN_TWENTY, EN_TH}, 2, logits);
    assert_true(logits[EN_OUSAND] == 0 && logits[CAT] == -INFINITY && logits[EN_X] == -INFINITY &&
                logits[3] == -INFINITY);
    /* 二万, after twenty, where an earlier rule banned thousand and every
     * joiner: nothing that goes on is left, so nothing more is banned */
    memset(logits, 0, sizeof logits);
    logits[EN_THOUSAND] = logits[EN_DASH] = logits[EN_AND] = logits[EN_OF] = logits[EN_TH] = -INFINITY;
    number_rule_ban(r, src_20000, NULL, 2, (const int[]){EN_TWENTY}, 1, logits);
    assert_true(logits[CAT] == 0 && logits[3] == 0);
    number_rule_free(r);
}

/* A decimal in words (number_rule.h): 二点二 is "two point two", and
 * "two" alone is no reading of it ("I have three apples." for 3.5): after
 * "two" only "point" goes on, no joiner (two-in), no other word. */
static void test_number_rule_reads_a_decimal_in_words(void **state)
{
    (void)state;
    NumberRule *r = zh_en_rule();
    static const int ids[] = {EN_TWO, EN_TWENTY, EN_POINT, EN_DASH, EN_AND, EN_SECOND, CAT, 3 /* </s> */};
    enum { N = sizeof ids / sizeof *ids };
    static const int src_2_2[] = {ZH_TWO, ZH_POINT, ZH_TWO, CAT}, src_2_and_2_2[] = {ZH_TWO, CAT, ZH_TWO, ZH_POINT,
                                                                                      ZH_TWO};
    static const struct {
        const char *what;
        const int *src;
        int S, history[3], len;
        const char *expect; /* two twenty point - and second cat </s> */
    } cases[] = {
        {"二点二: two may begin, not twenty; no run is open, the rest is free", src_2_2, 4, {0}, 0, "x.xxxxxx"},
        {"二点二, after two: point only", src_2_2, 4, {EN_TWO}, 1, "..x....."},
        {"二点二, after two point: two only", src_2_2, 4, {EN_TWO, EN_POINT}, 2, "x......."},
        {"二点二, after two point two: whole, and used up (no second two)", src_2_2, 4, {EN_TWO, EN_POINT, EN_TWO}, 3,
         "..xxxxxx"},
        {"二 and 二点二, after two: whole (the 2), free", src_2_and_2_2, 5, {EN_TWO}, 1, "x.xxxxxx"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char got[N + 1];
        these_allowed(r, cases[c].src, cases[c].S, cases[c].history, cases[c].len, ids, N, got);
        if (strcmp(got, cases[c].expect) != 0)
            fail_msg("%s:\n  expected %s\n  got      %s", cases[c].what, cases[c].expect, got);
    }
    number_rule_free(r);
}

/* A number the output has said in words is used up, as its digits are
 * (number_rule.h): 百 once is "one hundred" once, never "one hundred
 * hundred" (一百零五个人来了。 was "One hundred and five hundred and five
 * people came."); 十二 once is "twelve" or 12, not both, in either order,
 * nor right after each other; twice, twice; an ordinal that ends a
 * reading uses it up too (twenty-second), a lone "second" does not; and a
 * new number may still follow a whole one at once (2点20, "two twenty"). */
static void test_number_rule_uses_up_english_number_words(void **state)
{
    (void)state;
    NumberRule *r = zh_en_rule();
    static const int ids[] = {EN_TWELVE, EN_TWENTY, EN_TWO, EN_HUNDRED, EN_ONE, CAT, 3 /* </s> */, ZW + 1, ZW + 2};
    enum { N = sizeof ids / sizeof *ids };
    static const int src_100[] = {ZH_HUNDRED, CAT}, src_12[] = {ZH_TEN, ZH_TWO, CAT},
                     src_12_twice[] = {ZH_TEN, ZH_TWO, CAT, ZH_TEN, ZH_TWO}, src_22[] = {ZH_TWO, ZH_TEN, ZH_TWO},
                     src_time[] = {ZW + 2, ZH_POINT, ZW + 2, ZC + 0};
    static const struct {
        const char *what;
        const int *src;
        int S, history[5], len;
        const char *expect; /* twelve twenty two hundred one cat </s> 1 2 */
    } cases[] = {
        {"百, after one hundred: no second hundred", src_100, 2, {EN_ONE, EN_HUNDRED}, 2, "....xxx.."},
        {"百, after one hundred cat: no hundred, no 100", src_100, 2, {EN_ONE, EN_HUNDRED, CAT}, 3, "....xxx.."},
        {"十二, after twelve cat: no twelve, no 12", src_12, 3, {EN_TWELVE, CAT}, 2, "....xxx.."},
        {"十二, after 12 cat: no twelve", src_12, 3, {ZW + 1, ZC + 2, CAT}, 3, "....xxx.."},
        {"十二, right after 12: no twelve", src_12, 3, {ZW + 1, ZC + 2}, 2, "....xxx.."},
        {"十二, right after twelve: no 12", src_12, 3, {EN_TWELVE}, 1, "....xxx.."},
        {"十二 twice, after twelve cat: the other twelve or 12", src_12_twice, 5, {EN_TWELVE, CAT}, 2, "x...xxxx."},
        {"十二 twice, after twelve cat 12 cat: none", src_12_twice, 5, {EN_TWELVE, CAT, ZW + 1, ZC + 2, CAT}, 5,
         "....xxx.."},
        {"二十二, after twenty-second cat: no twenty", src_22, 3, {EN_TWENTY, EN_DASH, EN_SECOND, CAT}, 4,
         "....xxx.."},
        {"二十二, after a lone second: twenty-two still", src_22, 3, {EN_SECOND, CAT}, 2, ".x..xxx.x"},
        {"2点20, after two: twenty may begin the 20 (two numbers, a time; two the 2.20)", src_time, 4, {EN_TWO}, 1,
         ".xx.xxx.x"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char got[N + 1];
        these_allowed(r, cases[c].src, cases[c].S, cases[c].history, cases[c].len, ids, N, got);
        if (strcmp(got, cases[c].expect) != 0)
            fail_msg("%s:\n  expected %s\n  got      %s", cases[c].what, cases[c].expect, got);
    }
    number_rule_free(r);
}

/* A time, hour 点 minutes 分 (number_rule.h), is one number H:MM, no
 * decimal: 火车七点零五分开。 was "seven point zero-five" (greedy) and
 * "7.05 o'clock" (beam 4).  二点十五分 is 2:15 or "two fifteen": the 2
 * must go on with ":", "two" with "fifteen", never "point" (2.15); the
 * 15 alone is none of its numbers.  二点零五分 is 2:05 in digits only
 * (English says "two oh five"; "oh" is no number word), and 2点05分 too,
 * its digits 2 and 05 only part of it.  Without the 分, 二点十五 stays as
 * it was. */
static void test_number_rule_reads_a_time(void **state)
{
    (void)state;
    NumberRule *r = zh_en_rule();
    static const int ids[] = {EN_TWO, EN_FIFTEEN, EN_POINT, EN_COLON, CAT, 3 /* </s> */, ZW + 0, ZW + 1, ZW + 2,
                              ZC + 5};
    enum { N = sizeof ids / sizeof *ids };
    static const int t_2_15[] = {ZH_TWO, ZH_POINT, ZH_TEN, ZH_FIVE, ZH_MINUTE, CAT},
                     t_2_05[] = {ZH_TWO, ZH_POINT, ZW + 0, ZH_FIVE, ZH_MINUTE},
                     d_2_05[] = {ZW + 2, ZH_POINT, ZW + 0, ZC + 5, ZH_MINUTE};
    static const struct {
        const char *what;
        const int *src;
        int S, history[4], len;
        const char *expect; /* two fifteen point : cat </s> 0 1 2 ##5 */
    } cases[] = {
        {"二点十五分: two or 2 may begin it, not fifteen nor 1", t_2_15, 6, {0}, 0, "x.xxxx..x."},
        {"二点十五分, after two: fifteen only (no point)", t_2_15, 6, {EN_TWO}, 1, ".x........"},
        {"二点十五分, after 2: \":\" only (no point, no end)", t_2_15, 6, {ZW + 2}, 1, "...x......"},
        {"二点十五分, after 2: : the 1 of 15", t_2_15, 6, {ZW + 2, EN_COLON}, 2, ".......x.."},
        {"二点十五分, after two fifteen: whole, used up", t_2_15, 6, {EN_TWO, EN_FIFTEEN}, 2, "..xxxx...."},
        {"二点零五分: 2 only, no two", t_2_05, 5, {0}, 0, "..xxxx..x."},
        {"二点零五分, after 2: : 0", t_2_05, 5, {ZW + 2, EN_COLON}, 2, "......x..."},
        {"2点05分: 2 may not end there (the 2 is the hour of 2:05)", d_2_05, 5, {ZW + 2}, 1, "...x......"},
        {"2点05分, after 2:0: ##5", d_2_05, 5, {ZW + 2, EN_COLON, ZW + 0}, 3, ".........x"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char got[N + 1];
        these_allowed(r, cases[c].src, cases[c].S, cases[c].history, cases[c].len, ids, N, got);
        if (strcmp(got, cases[c].expect) != 0)
            fail_msg("%s:\n  expected %s\n  got      %s", cases[c].what, cases[c].expect, got);
    }
    /* 二点六分 with one figure after 点 and no 零 is a time or a score
     * (七点五分, 7.5 points: 他得了七点五分。 came out "He got at 7:05."
     * where it was "He got 7.5."): 2:06 or 2.6, "two point six" too,
     * used up in either form */
    static const int t_2_6[] = {ZH_TWO, ZH_POINT, ZH_SIX, ZH_MINUTE, CAT};
    static const int ids_2_6[] = {EN_TWO, EN_SIX, EN_POINT, EN_COLON, CAT, ZW + 2, ZW + 6};
    static const struct {
        const char *what;
        int history[4], len;
        const char *expect; /* two six point : cat 2 6 */
    } score_cases[] = {
        {"二点六分: two or 2 may begin it", {0}, 0, "x.xxxx."},
        {"二点六分, after two: point (2.6)", {EN_TWO}, 1, "..x...."},
        {"二点六分, after two point: six", {EN_TWO, EN_POINT}, 2, ".x....."},
        {"二点六分, after 2: \":\" (2:06)", {ZW + 2}, 1, "...x..."},
        {"二点六分, after two point six: used up, no 2:06 after it", {EN_TWO, EN_POINT, EN_SIX}, 3, "..xxx.."},
    };
    for (size_t c = 0; c < sizeof score_cases / sizeof *score_cases; c++) {
        char got[8];
        these_allowed(r, t_2_6, 5, score_cases[c].history, score_cases[c].len, ids_2_6, 7, got);
        if (strcmp(got, score_cases[c].expect) != 0)
            fail_msg("%s:\n  expected %s\n  got      %s", score_cases[c].what, score_cases[c].expect, got);
    }
    /* 分钟 is minutes that passed, no time: 二点十五分钟 is 2.15 minutes
     * (等了二点五分钟。 "Wait ... 2:05", 他跑了七点零五分钟。 "at 7:05"):
     * after two, "point" may go on */
    static const int duration[] = {ZH_TWO, ZH_POINT, ZH_TEN, ZH_FIVE, ZH_MINUTE, ZH_CLOCK};
    float after_two[ZH_EN_V] = {0};
    number_rule_ban(r, duration, NULL, 6, (const int[]){EN_TWO}, 1, after_two);
    if (after_two[EN_POINT] != 0) fail_msg("二点十五分钟: \"point\" banned after two, as in a time");
    /* without the 分, 二点十五 is what it was: after two, "point" may go on */
    static const int no_mark[] = {ZH_TWO, ZH_POINT, ZH_TEN, ZH_FIVE, CAT};
    float logits[ZH_EN_V] = {0};
    number_rule_ban(r, no_mark, NULL, 5, (const int[]){EN_TWO}, 1, logits);
    assert_true(logits[CAT] == 0 || logits[EN_POINT] == 0);
    number_rule_free(r);
}

/* An English source's number words that are no one cardinal are two
 * numbers: "twenty and thirty" is 20 and 30 (not 50: 二十 may end), as is
 * "twenty and five" ("and" joins after a hundred .. billion only),
 * "nineteen ninety" 19, 90 and the year 1990 (一九九零 may be written). */
static void test_number_rule_splits_english_runs(void **state)
{
    (void)state;
    enum { V = 17 };
    NumberRule *r = number_rule_new(V, V);
    number_rule_set_target(r, 16, "1", false); /* a digit: the rule holds numerals beside digits */
    static const char *const src_pieces[V] = {"<pad>", "<unk>", "<s>", "</s>", "twenty", "and", "thirty",
                                              "nineteen", "ninety", "cat", "five", "", "", "", "", "", ""};
    static const char *const han[5] = {"一", "二", "九", "十", "五"};
    for (int id = 4; id <= 10; id++) number_rule_set_source_piece(r, id, src_pieces[id], false);
    for (int i = 0; i < 5; i++) number_rule_set_numeral(r, 11 + i, han[i]);
    enum { CAT_ID = 9, ONE = 11, TWO, NINE, TEN, FIVE };
    static const int twenty_and_thirty[] = {4, 5, 6, CAT_ID}, nineteen_ninety[] = {7, 8, CAT_ID},
                     twenty_and_five[] = {4, 5, 10, CAT_ID};
    float logits[V] = {0};
    number_rule_ban(r, twenty_and_thirty, NULL, 4, (const int[]){TWO, TEN}, 2, logits);
    assert_true(logits[CAT_ID] == 0); /* 二十 is whole */
    memset(logits, 0, sizeof logits);
    number_rule_ban(r, twenty_and_thirty, NULL, 4, (const int[]){FIVE}, 1, logits);
    assert_true(logits[TEN] == -INFINITY); /* 五十 is no number of it (20 + 30 was one) */
    memset(logits, 0, sizeof logits);
    number_rule_ban(r, twenty_and_five, NULL, 4, (const int[]){TWO, TEN}, 2, logits);
    assert_true(logits[CAT_ID] == 0); /* "and" joins after a hundred only: 20 and 5, not 25 */
    memset(logits, 0, sizeof logits);
    number_rule_ban(r, nineteen_ninety, NULL, 3, (const int[]){ONE}, 1, logits);
    assert_true(logits[NINE] == 0); /* 一九 goes on toward 一九九零 */
    memset(logits, 0, sizeof logits);
    number_rule_ban(r, nineteen_ninety, NULL, 3, (const int[]){NINE, TEN}, 2, logits);
    assert_true(logits[CAT_ID] == 0); /* 九十 is whole */
    /* nineteen ninety eight times over: three numbers for every two
     * tokens (19, 90, 1990), more than one a token (the pool once had room
     * for one a token, and the fuzzer wrote past it: make asan's replay) */
    int years[16];
    for (int i = 0; i < 16; i++) years[i] = i % 2 ? 8 : 7;
    memset(logits, 0, sizeof logits);
    number_rule_ban(r, years, NULL, 16, (const int[]){NINE, TEN}, 2, logits);
    assert_true(logits[CAT_ID] == 0);
    number_rule_free(r);
}

/* An English source's plurals say no one number: "thousands of cats"
 * holds nothing (成千上万 stays free), "thousand cats" holds 1,000. */
static void test_number_rule_leaves_an_english_plural_free(void **state)
{
    (void)state;
    NumberRule *r = number_rule_new(8, 8);
    static const char *const pieces[8] = {"<pad>", "<unk>", "<s>", "</s>", "thousand", "s", "of", "cat"};
    for (int id = 0; id < 8; id++) number_rule_set_source_piece(r, id, pieces[id], id == 5);
    static const int thousands[] = {4, 5, 6, 7}, thousand[] = {4, 7};
    assert_false(number_rule_applies(r, thousands, 4));
    assert_true(number_rule_applies(r, thousand, 2));
    number_rule_free(r);
}

/* Separators join digits into one number (number_rule.h): the made-up
 * vocabulary with "." (5) and "," (6) registered as separators, the
 * digits at 7.. and ##digits at 17.. */
enum { SEP_V = 27, SEP_WORD = 7, SEP_CONT = 17, COMMA = 6 };

static void test_number_rule_joins_across_separators(void **state)
{
    (void)state;
    NumberRule *r = digits_rule(SEP_V, SEP_WORD, SEP_CONT, true);
    for (int side = 0; side < 2; side++) {
        (side ? number_rule_set_target : number_rule_set_source)(r, DOT, ".", false);
        (side ? number_rule_set_target : number_rule_set_source)(r, COMMA, ",", false);
    }
    static const int src_1_5[] = {CAT, SEP_WORD + 1, DOT, SEP_WORD + 5, DOT}; /* "cat 1.5." */
    static const int src_1000[] = {SEP_WORD + 1, COMMA, SEP_WORD + 0, SEP_CONT + 0, SEP_CONT + 0}; /* 1,000 */
    static const int src_list[] = {SEP_WORD + 1, COMMA, SEP_WORD + 2}; /* "1, 2": two numbers */
    static const int src_100_5[] = {SEP_WORD + 1, SEP_CONT + 0, SEP_CONT + 0, DOT, SEP_WORD + 5}; /* 100.5 */
    static const int src_years[] = {SEP_WORD + 1, SEP_CONT + 9, SEP_CONT + 9, SEP_CONT + 0, DOT, SEP_WORD + 2,
                                    SEP_CONT + 0, SEP_CONT + 0, SEP_CONT + 0}; /* "in 1990. 2000 people": two */
    /* Expected: specials, cat, "." and ","; word digits; ##digits */
    static const char X7[] = "xxxxxxx", B7[] = ".......", B10[] = "..........";
    static const struct {
        const char *what;
        const int *src;
        int S, history[5], len;
        const char *others, *words, *continued;
    } cases[] = {
        {"1.5: after 1 only the dot goes on (never \"1 5\" or 15)", src_1_5, 5, {SEP_WORD + 1}, 1, ".....x.", B10, B10},
        {"1.5: after 1. only a 5", src_1_5, 5, {SEP_WORD + 1, DOT}, 2, B7, ".....x....", ".....x...."},
        {"1.5: whole, it may end, a dot or comma after it punctuation", src_1_5, 5, {SEP_WORD + 1, DOT, SEP_WORD + 5},
         3, X7, B10, B10},
        {"1,000: after 1 only the comma (never 1000, nor 1 then anything)", src_1000, 5, {SEP_WORD + 1}, 1,
         "......x", B10, B10},
        {"1,000: after 1, only a 0", src_1000, 5, {SEP_WORD + 1, COMMA}, 2, B7, "x.........", "x........."},
        {"100.5: three digits before the dot join too: after 100 only the dot", src_100_5, 5,
         {SEP_WORD + 1, SEP_CONT + 0, SEP_CONT + 0}, 3, ".....x.", B10, B10},
        {"1990. 2000: a dot after 4 digits ends a sentence, not a number: 1990 may end", src_years, 9,
         {SEP_WORD + 1, SEP_CONT + 9, SEP_CONT + 9, SEP_CONT + 0}, 4, X7, "..x.......", B10},
        {"1, 2 is a list: after 1 it may end, or 2 begin", src_list, 3, {SEP_WORD + 1}, 1, X7, "..x.......",
         B10},
        {"1, 2: after \"1,\" the comma was punctuation: 2 begins", src_list, 3, {SEP_WORD + 1, COMMA}, 2, X7,
         "..x.......", "..x......."},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char got[SEP_V + 1], expect[SEP_V + 1];
        allowed_of(r, SEP_V, cases[c].src, cases[c].S, cases[c].history, cases[c].len, got);
        snprintf(expect, sizeof expect, "%s%s%s", cases[c].others, cases[c].words, cases[c].continued);
        if (strcmp(got, expect) != 0) fail_msg("%s:\n  expected %s\n  got      %s", cases[c].what, expect, got);
    }
    assert_true(number_rule_is_separator(".") && number_rule_is_separator(","));
    assert_false(number_rule_is_separator(":") || number_rule_is_separator("..") || number_rule_is_separator(""));
    number_rule_free(r);
}

/* Both rules: --no-repeat-ngram 2 on 1000 bans the ##0 that 1 ##0 ##0
 * needs next; the number rule then lets the number end (every digit
 * banned, every other token left), rather than banning all of them. */
static void test_both_rules_leave_a_token(void **state)
{
    (void)state;
    NumberRule *r = made_up_rule(true);
    static const int src[] = {WORD + 1, CONT + 0, CONT + 0, CONT + 0};
    static const int history[] = {WORD + 1, CONT + 0, CONT + 0};
    DecodeRules rules = {.no_repeat_ngram = 2, .numbers = r};
    float logits[MADE_UP_V];
    for (int i = 0; i < MADE_UP_V; i++) logits[i] = 0.0f;
    decode_ban(&rules, src, NULL, 4, history, 3, logits);
    for (int i = 0; i < MADE_UP_V; i++)
        if ((logits[i] == -INFINITY) != (i >= WORD))
            fail_msg("token %d is %sbanned", i, logits[i] == -INFINITY ? "" : "not ");
    number_rule_free(r);
}

/* The same with a separator: no-repeat 2 banned the ". 6" the number
 * rule would go on with, so the number may end (a token is left), and a
 * number that ended at its separator-as-punctuation ("1." then a word)
 * is used up: the source's one other 1 may not be written a second
 * time. */
static void test_separators_under_both_rules(void **state)
{
    (void)state;
    NumberRule *r = digits_rule(SEP_V, SEP_WORD, SEP_CONT, true);
    for (int side = 0; side < 2; side++) {
        (side ? number_rule_set_target : number_rule_set_source)(r, DOT, ".", false);
        (side ? number_rule_set_target : number_rule_set_source)(r, COMMA, ",", false);
    }
    static const int src[] = {SEP_WORD + 1, DOT, SEP_WORD + 5, SEP_WORD + 1, DOT, SEP_WORD + 6}; /* 1.5 1.6 */
    static const int history[] = {SEP_WORD + 1, DOT, SEP_WORD + 5, SEP_WORD + 1};
    DecodeRules rules = {.no_repeat_ngram = 2, .numbers = r};
    float logits[SEP_V];
    for (int i = 0; i < SEP_V; i++) logits[i] = 0.0f;
    decode_ban(&rules, src, NULL, 6, history, 4, logits);
    int left = 0;
    for (int i = 0; i < SEP_V; i++) left += logits[i] > -INFINITY;
    assert_true(left >= 1);
    static const int src2[] = {SEP_WORD + 1, DOT, SEP_WORD + 5, SEP_WORD + 1}; /* "1.5 1" */
    static const int used[] = {SEP_WORD + 1, DOT, CAT, SEP_WORD + 1};      /* "1. cat 1" */
    char got[SEP_V + 1];
    allowed_of(r, SEP_V, src2, 4, used, 4, got);
    if (got[CAT] != '.') fail_msg("after \"1. cat 1\" a word may follow: %s", got);
    number_rule_free(r);
}

/* What the text showed and the ids do not (number_rule.h): a separator
 * with white space after it (or before it) is punctuation between two
 * numbers; written tight between digits it joins them.  The same ids
 * read both ways, by the spaced marks (encode.h's; 1: white space came
 * before the token). */
static void test_number_rule_reads_where_the_text_had_spaces(void **state)
{
    (void)state;
    NumberRule *r = digits_rule(SEP_V, SEP_WORD, SEP_CONT, true);
    for (int side = 0; side < 2; side++) {
        (side ? number_rule_set_target : number_rule_set_source)(r, DOT, ".", false);
        (side ? number_rule_set_target : number_rule_set_source)(r, COMMA, ",", false);
    }
    /* "110, 120" / "110,120" / "110 ,120": 1 ##1 ##0 , 1 ##2 ##0 */
    static const int src_list[] = {SEP_WORD + 1, SEP_CONT + 1, SEP_CONT + 0, COMMA, SEP_WORD + 1, SEP_CONT + 2,
                                   SEP_CONT + 0};
    static const bool list_spaced[] = {0, 0, 0, 0, 1, 0, 0};  /* "110, 120" */
    static const bool list_written[] = {0, 0, 0, 0, 0, 0, 0}; /* "110,120" (and Chinese "110，120") */
    static const bool list_before[] = {0, 0, 0, 1, 0, 0, 0};  /* "110 ,120" */
    /* "Question 1. 2 plus 2": cat 1 . 2 cat 2 */
    static const int src_question[] = {CAT, SEP_WORD + 1, DOT, SEP_WORD + 2, CAT, SEP_WORD + 2};
    static const bool question_spaced[] = {0, 1, 0, 1, 1, 1};
    static const bool question_written[] = {0, 1, 0, 0, 1, 1}; /* "Question 1.2 plus 2" */
    static const int history_110[] = {SEP_WORD + 1, SEP_CONT + 1, SEP_CONT + 0};
    static const char X7[] = "xxxxxxx", B7[] = ".......", B10[] = "..........";
    const struct { /* not static: the histories are compound literals */
        const char *what;
        const int *src;
        const bool *spaced;
        int S;
        const int *history;
        int len;
        const char *others, *words, *continued;
    } cases[] = {
        {"110, 120: after 110 it may end, a comma after it punctuation; 120 may begin", src_list, list_spaced, 7,
         history_110, 3, X7, ".x........", B10},
        {"110, 120: after \"110,\" the comma was punctuation: 120 begins", src_list, list_spaced, 7,
         (const int[]){SEP_WORD + 1, SEP_CONT + 1, SEP_CONT + 0, COMMA}, 4, X7, ".x........", ".x........"},
        {"110, 120: 120 written too, nothing is left", src_list, list_spaced, 7,
         (const int[]){SEP_WORD + 1, SEP_CONT + 1, SEP_CONT + 0, COMMA, SEP_WORD + 1, SEP_CONT + 2, SEP_CONT + 0},
         7, X7, B10, B10},
        {"110, 120: after 1, either goes on (120 may come first), nothing ends it", src_list, list_spaced, 7,
         (const int[]){SEP_WORD + 1}, 1, B7, B10, ".xx......."},
        {"110 ,120: a space before the comma parts them too", src_list, list_before, 7, history_110, 3, X7,
         ".x........", B10},
        {"110,120 as written: one number, after 110 only the comma", src_list, list_written, 7, history_110, 3,
         "......x", B10, B10},
        {"110,120 with the spaces not known: one number", src_list, NULL, 7, history_110, 3, "......x", B10, B10},
        {"Question 1. 2: after 1 it may end; 2 may begin", src_question, question_spaced, 6,
         (const int[]){SEP_WORD + 1}, 1, X7, "..x.......", B10},
        {"Question 1. 2: both 2s may be written", src_question, question_spaced, 6,
         (const int[]){SEP_WORD + 1, DOT, CAT, SEP_WORD + 2, CAT}, 5, X7, "..x.......", "..x......."},
        {"Question 1.2 as written: after 1 only the dot", src_question, question_written, 6,
         (const int[]){SEP_WORD + 1}, 1, ".....x.", B10, B10},
        {"Question 1.2 as written: after 1. only the 2", src_question, question_written, 6,
         (const int[]){SEP_WORD + 1, DOT}, 2, B7, "..x.......", "..x......."},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char got[SEP_V + 1], expect[SEP_V + 1];
        allowed_spaced(r, SEP_V, cases[c].src, cases[c].spaced, cases[c].S, cases[c].history, cases[c].len, got);
        snprintf(expect, sizeof expect, "%s%s%s", cases[c].others, cases[c].words, cases[c].continued);
        if (strcmp(got, expect) != 0) fail_msg("%s:\n  expected %s\n  got      %s", cases[c].what, expect, got);
    }
    /* the Chinese list marks are not separators: "110、120" is two numbers whatever the spaces */
    assert_false(number_rule_is_separator("\xe3\x80\x81") || number_rule_is_separator("\xef\xbc\x8c"));
    number_rule_free(r);
}

static void test_is_digits(void **state)
{
    (void)state;
    assert_true(number_rule_is_digits("0"));
    assert_true(number_rule_is_digits("123456789012345"));
    assert_false(number_rule_is_digits("1234567890123456")); /* longer than a piece may be */
    assert_false(number_rule_is_digits(""));
    assert_false(number_rule_is_digits("1a"));
    assert_false(number_rule_is_digits("\xef\xbc\x91")); /* full-width 1: NFKC made it ASCII before */
}

/* ---- decoding under the no-repeat rule -------------------------------------------- */

enum { V_SRC = 30, V_TGT = 24, S = 5, LIMIT = 20 };
static const int source[S] = {5, 9, 12, 7, 3};

static ModelArch tiny_arch(void)
{
    return (ModelArch){.d_model = 16, .heads = 2, .encoder_layers = 2, .decoder_layers = 2, .d_ff = 24,
                       .activation = ACTIVATION_RELU, .norm_first = false, .max_len = 24,
                       .scale_attention = true, .tied_output = false, .src_vocab = V_SRC, .tgt_vocab = V_TGT};
}

/* Does ids[0..len-1] hold some n-gram twice? */
static bool repeats_ngram(const int *ids, int len, int n)
{
    for (int i = 0; i + n <= len; i++)
        for (int j = i + 1; j + n <= len; j++)
            if (memcmp(ids + i, ids + j, (size_t)n * sizeof *ids) == 0) return true;
    return false;
}

/* The recorded log-probabilities are the model's: a teacher-forced pass
 * over the same source and tokens gives them. */
static void expect_models_own_logprobs(const Model *m, const Translation *t)
{
    Translation tf;
    decode_teacher_forced(m, t->src_ids, t->src_len, t->input_ids, t->output_ids, t->steps, &tf);
    for (int i = 0; i < t->steps; i++)
        if (fabsf(tf.logprobs[i] - t->logprobs[i]) > 1e-5f)
            fail_msg("step %d: logprob %g, teacher-forced %g", i, t->logprobs[i], tf.logprobs[i]);
    translation_free(&tf);
}

/* Beam 1 under `rules` is greedy decoding under them, bit for bit. */
static void expect_beam1_is_greedy(const Model *m, const DecodeRules *rules, const Translation *greedy)
{
    Translation beam1;
    BeamSettings one = {.beam = 1, .length_penalty = 1.0f, .n_best = 1, .rules = rules};
    assert_int_equal(beam_decode(m, greedy->src_ids, greedy->src_len, LIMIT, &one, &beam1, NULL), 1);
    assert_int_equal(beam1.steps, greedy->steps);
    assert_memory_equal(beam1.output_ids, greedy->output_ids, (size_t)greedy->steps * sizeof(int));
    assert_memory_equal(beam1.logprobs, greedy->logprobs, (size_t)greedy->steps * sizeof(float));
    translation_free(&beam1);
}

static void test_greedy_and_beam_never_repeat_an_ngram(void **state)
{
    (void)state;
    ModelArch a = tiny_arch();
    int looped = 0; /* seeds whose plain greedy output repeats a bigram */
    for (uint64_t seed = 1; seed <= 12; seed++) {
        Model m;
        model_init_random(&m, &a, seed);
        Decoder dec;
        decode_init(&dec, &m);
        Translation plain;
        decode_greedy(&dec, source, S, LIMIT, NULL, false, &plain);
        looped += repeats_ngram(plain.output_ids, plain.steps, 2);
        for (int n = 1; n <= 3; n++) {
            Translation greedy, beam4[4];
            DecodeRules rules = {.no_repeat_ngram = n};
            decode_greedy(&dec, source, S, LIMIT, &rules, false, &greedy);
            if (repeats_ngram(greedy.output_ids, greedy.steps, n))
                fail_msg("seed %d, n %d: greedy repeats an n-gram", (int)seed, n);
            expect_models_own_logprobs(&m, &greedy);

            expect_beam1_is_greedy(&m, &rules, &greedy);

            BeamSettings four = {.beam = 4, .length_penalty = 1.0f, .n_best = 4, .rules = &rules};
            int got = beam_decode(&m, source, S, LIMIT, &four, beam4, NULL);
            assert_true(got >= 1);
            for (int i = 0; i < got; i++) {
                if (repeats_ngram(beam4[i].output_ids, beam4[i].steps, n))
                    fail_msg("seed %d, n %d: beam hypothesis %d repeats an n-gram", (int)seed, n, i);
                expect_models_own_logprobs(&m, &beam4[i]);
                translation_free(&beam4[i]);
            }
            translation_free(&greedy);
        }
        translation_free(&plain);
        decode_free(&dec);
        model_free(&m);
    }
    if (looped < 3) fail_msg("only %d of 12 random models loop without the rule: the test proves little", looped);
}

/* Three sources packed as a Batch (src_start[3]), decoded together under
 * `rules` and one by one: the same tokens. */
static void expect_batch_as_alone(const Model *m, const int *src_ids, const int *src_start,
                                  const DecodeRules *rules)
{
    const int limits[] = {LIMIT, 9, LIMIT};
    Decoder dec;
    decode_init(&dec, m);
    int out[3][LIMIT], lengths[3];
    int *outputs[3] = {out[0], out[1], out[2]};
    decode_greedy_many(m, src_ids, src_start, 3, limits, rules, outputs, lengths);
    for (int b = 0; b < 3; b++) {
        Translation t;
        decode_greedy(&dec, src_ids + src_start[b], src_start[b + 1] - src_start[b], limits[b], rules, false, &t);
        assert_int_equal(lengths[b], t.steps);
        assert_memory_equal(out[b], t.output_ids, (size_t)t.steps * sizeof(int));
        translation_free(&t);
    }
    decode_free(&dec);
}

static void test_batched_greedy_follows_the_rule_too(void **state)
{
    (void)state;
    ModelArch a = tiny_arch();
    Model m;
    model_init_random(&m, &a, 3);
    static const int src_ids[] = {5, 9, 12, 7, 3, 4, 4, 8, 2, 11, 6, 6, 6};
    static const int src_start[] = {0, 5, 9, 13};
    for (int n = 0; n <= 2; n++) expect_batch_as_alone(&m, src_ids, src_start, &(DecodeRules){.no_repeat_ngram = n});
    model_free(&m);
}

/* ---- decoding under the number rule ----------------------------------------------- */

/* Random models over a vocabulary of 24 tokens of which 10 are digits
 * (tokens 4..8 the word-start digits 1..5, 9..13 the "##" ones), so that
 * without the rule their outputs are full of numbers the source does not
 * have. */
enum { FIRST_DIGIT = 4 };

static NumberRule *tiny_rule(void)
{
    NumberRule *r = number_rule_new(V_SRC, V_TGT);
    for (int d = 1; d <= 5; d++) {
        char text[2] = {(char)('0' + d), 0};
        number_rule_set_source(r, FIRST_DIGIT + d - 1, text, false);
        number_rule_set_source(r, FIRST_DIGIT + 4 + d, text, true);
        number_rule_set_target(r, FIRST_DIGIT + d - 1, text, false);
        number_rule_set_target(r, FIRST_DIGIT + 4 + d, text, true);
    }
    return r;
}

/* "123" (4 ##2 ##3) and "3" between words. */
enum { NUMBER_S = 6 };
static const int number_source[NUMBER_S] = {20, 4, 10, 11, 21, 6};

/* The rule checked from outside: the output's numbers, in order, each one
 * of the source's ("123", "3") not yet used, and the last, where the
 * output stopped at its limit inside it, the beginning of one.  A number
 * is written here as its digits, one char each. */
static bool obeys(const int *ids, int len, bool finished)
{
    const char *unused[2] = {"123", "3"};
    char number[LIMIT + 1];
    int n = 0;
    for (int i = 0; i <= len; i++) {
        int id = i < len ? ids[i] : -1;
        bool digit = id >= FIRST_DIGIT && id < FIRST_DIGIT + 10, continues = digit && id >= FIRST_DIGIT + 5;
        if (n > 0 && (!digit || !continues)) { /* the number before ends here */
            number[n] = 0;
            bool at_limit = i == len && !finished;
            int k = 0;
            while (k < 2 && !(unused[k] && (at_limit ? strncmp(unused[k], number, (size_t)n) == 0
                                                     : strcmp(unused[k], number) == 0)))
                k++;
            if (k == 2) return false;
            unused[k] = NULL;
            n = 0;
        }
        if (digit) number[n++] = (char)('1' + (id - FIRST_DIGIT) % 5);
    }
    return true;
}

static void test_greedy_and_beam_obey_the_number_rule(void **state)
{
    (void)state;
    ModelArch a = tiny_arch();
    NumberRule *numbers = tiny_rule();
    DecodeRules rules = {.numbers = numbers};
    int broken = 0, with_numbers = 0; /* seeds whose plain greedy output breaks the rule; outputs with numbers */
    for (uint64_t seed = 1; seed <= 12; seed++) {
        Model m;
        model_init_random(&m, &a, seed);
        Decoder dec;
        decode_init(&dec, &m);
        Translation plain, greedy, beam4[4];
        decode_greedy(&dec, number_source, NUMBER_S, LIMIT, NULL, false, &plain);
        broken += !obeys(plain.output_ids, plain.steps, plain.finished);
        decode_greedy(&dec, number_source, NUMBER_S, LIMIT, &rules, false, &greedy);
        if (!obeys(greedy.output_ids, greedy.steps, greedy.finished))
            fail_msg("seed %d: greedy breaks the rule", (int)seed);
        expect_models_own_logprobs(&m, &greedy);
        for (int i = 0; i < greedy.steps; i++)
            with_numbers += greedy.output_ids[i] >= FIRST_DIGIT && greedy.output_ids[i] < FIRST_DIGIT + 10;

        expect_beam1_is_greedy(&m, &rules, &greedy);

        BeamSettings four = {.beam = 4, .length_penalty = 1.0f, .n_best = 4, .rules = &rules};
        int got = beam_decode(&m, number_source, NUMBER_S, LIMIT, &four, beam4, NULL);
        assert_true(got >= 1);
        for (int i = 0; i < got; i++) {
            if (!obeys(beam4[i].output_ids, beam4[i].steps, beam4[i].finished))
                fail_msg("seed %d: beam hypothesis %d breaks the rule", (int)seed, i);
            expect_models_own_logprobs(&m, &beam4[i]);
            translation_free(&beam4[i]);
        }
        translation_free(&greedy);
        translation_free(&plain);
        decode_free(&dec);
        model_free(&m);
    }
    if (broken < 3) fail_msg("only %d of 12 random models break the rule without it: the test proves little", broken);
    if (with_numbers < 3) fail_msg("only %d digits written under the rule: the test proves little", with_numbers);
    number_rule_free(numbers);
}

static void test_batched_greedy_obeys_the_number_rule_too(void **state)
{
    (void)state;
    ModelArch a = tiny_arch();
    NumberRule *numbers = tiny_rule();
    Model m;
    model_init_random(&m, &a, 3);
    /* numbers 123 and 3; 1 and 5; none */
    static const int src_ids[] = {20, 4, 10, 11, 21, 6, 3, 4, 8, 2, 20, 21, 22};
    static const int src_start[] = {0, 6, 10, 13};
    expect_batch_as_alone(&m, src_ids, src_start, &(DecodeRules){.numbers = numbers});
    model_free(&m);
    number_rule_free(numbers);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bans_the_tokens_that_complete_a_seen_ngram),
        cmocka_unit_test(test_number_rule_bans_what_its_header_says),
        cmocka_unit_test(test_number_rule_joins_across_separators),
        cmocka_unit_test(test_number_rule_reads_numbers_in_chinese),
        cmocka_unit_test(test_number_rule_bans_numerals_of_another_value),
        cmocka_unit_test(test_number_rule_makes_a_numeral_run_go_on),
        cmocka_unit_test(test_number_rule_holds_english_number_words),
        cmocka_unit_test(test_number_rule_orders_english_number_words),
        cmocka_unit_test(test_number_rule_reads_a_decimal_in_words),
        cmocka_unit_test(test_number_rule_uses_up_english_number_words),
        cmocka_unit_test(test_number_rule_leaves_an_english_plural_free),
        cmocka_unit_test(test_number_rule_splits_english_runs),
        cmocka_unit_test(test_number_rule_reads_english_number_words),
        cmocka_unit_test(test_both_rules_leave_a_token),
        cmocka_unit_test(test_separators_under_both_rules),
        cmocka_unit_test(test_number_rule_reads_where_the_text_had_spaces),
        cmocka_unit_test(test_number_rule_reads_a_time),
        cmocka_unit_test(test_number_rule_holds_a_minus_sign),
        cmocka_unit_test(test_is_digits),
        cmocka_unit_test(test_greedy_and_beam_never_repeat_an_ngram),
        cmocka_unit_test(test_batched_greedy_follows_the_rule_too),
        cmocka_unit_test(test_greedy_and_beam_obey_the_number_rule),
        cmocka_unit_test(test_batched_greedy_obeys_the_number_rule_too),
    };
    return cmocka_run_group_tests_name("decode_rules", tests, NULL, NULL);
}
