/* number_words.c — see number_words.h. */
#include "number_words.h"

#include <stdio.h>
#include <string.h>

static const char *const WORDS[NUMBER_WORDS] = {
    "zero",    "one",     "two",       "three",    "four",     "five",    "six",     "seven",
    "eight",   "nine",    "ten",       "eleven",   "twelve",   "thirteen", "fourteen", "fifteen",
    "sixteen", "seventeen", "eighteen", "nineteen", "twenty",   "thirty",  "forty",   "fifty",
    "sixty",   "seventy", "eighty",    "ninety",   "hundred",  "thousand", "million", "billion"};
enum { TENS = 18, HUNDRED = 28, THOUSAND, MILLION, BILLION }; /* TENS + 2 is twenty */

int number_words_index(const char *word)
{
    for (int i = 0; i < NUMBER_WORDS; i++)
        if (strcmp(word, WORDS[i]) == 0) return i;
    /* plurals: "thousands of", "tens of thousands" */
    size_t n = strlen(word);
    if (n < 2 || word[n - 1] != 's') return -1;
    for (int i = HUNDRED; i <= BILLION; i++)
        if (strlen(WORDS[i]) == n - 1 && strncmp(word, WORDS[i], n - 1) == 0) return i;
    return strcmp(word, "tens") == 0 ? 10 : -1;
}

/* Does `form` go on after `prefix`, beginning with it? */
static bool goes_on(const char *form, const char *prefix)
{
    size_t n = strlen(prefix);
    return strlen(form) > n && strncmp(form, prefix, n) == 0;
}

bool number_words_extends(const char *prefix, const bool *allowed)
{
    for (int i = 0; i < NUMBER_WORDS; i++) {
        if (!allowed[i]) continue;
        if (goes_on(WORDS[i], prefix)) return true;
        /* the plurals number_words_index reads: hundreds .. billions, tens */
        char plural[16];
        if ((i >= HUNDRED || i == 10) && (snprintf(plural, sizeof plural, "%ss", WORDS[i]), goes_on(plural, prefix)))
            return true;
    }
    return false;
}

bool number_words_contains(const char *piece)
{
    for (int i = 0; i < NUMBER_WORDS; i++)
        if (strstr(WORDS[i], piece) || (i >= HUNDRED && piece[0] == 's' && !piece[1])) return true;
    return false;
}

/* 0 < r < 100: twelve; twenty five. */
static void under_hundred(int r, bool *allowed)
{
    if (r < 20) {
        allowed[r] = true;
        return;
    }
    allowed[TENS + r / 10] = true;
    if (r % 10) allowed[r % 10] = true;
}

/* 0 < g < 1000: five hundred twelve. */
static void under_thousand(int g, bool *allowed)
{
    if (g >= 100) {
        allowed[g / 100] = allowed[HUNDRED] = true;
    }
    if (g % 100) under_hundred(g % 100, allowed);
}

void number_words_of(uint64_t integer, const char *decimals, bool *allowed)
{
    if (integer >= 1000000000000u) return;
    if (integer == 0) allowed[0] = true;
    static const int scale[4] = {BILLION, MILLION, THOUSAND, -1};
    uint64_t unit = 1000000000u;
    for (int i = 0; i < 4; i++, unit /= 1000) {
        int g = (int)(integer / unit % 1000);
        if (g == 0) continue;
        under_thousand(g, allowed);
        if (scale[i] >= 0) allowed[scale[i]] = true;
    }
    if (integer >= 1100 && integer < 10000) { /* by hundreds: twenty-five hundred, nineteen ninety */
        under_hundred((int)(integer / 100), allowed);
        allowed[HUNDRED] = true;
        if (integer % 100) under_hundred((int)(integer % 100), allowed);
    }
    for (const char *d = decimals; *d; d++) allowed[*d - '0'] = true;
}

bool number_words_english_value(const int *words, int n, uint64_t *value)
{
    uint64_t total = 0, current = 0, last_scale = 0;
    for (int i = 0; i < n; i++) {
        int k = words[i];
        if (k < 0 || k >= NUMBER_WORDS) return false;
        if (k < HUNDRED) {
            current += k < 20 ? (uint64_t)k : (uint64_t)(k - TENS) * 10;
        } else if (k == HUNDRED) {
            current = (current ? current : 1) * 100;
        } else {
            uint64_t scale = k == THOUSAND ? 1000u : k == MILLION ? 1000000u : 1000000000u;
            if (last_scale && scale > last_scale) /* a thousand billion: all of it times the larger */
                total = (total + current) * scale;
            else
                total += (current ? current : 1) * scale;
            current = 0;
            last_scale = scale;
        }
        if (total + current >= 1000000000000u) return false;
    }
    *value = total + current;
    return true;
}

/* ---- Chinese numerals ---------------------------------------------------------- */

enum { HAN_BYTES = 3 }; /* every character here is 3 bytes of UTF-8 */

/* The digit 0..9 a Han numeral reads, or -1. */
static int han_digit(const char *c)
{
    static const char *const DIGITS[10] = {"零", "一", "二", "三", "四", "五", "六", "七", "八", "九"};
    for (int d = 0; d < 10; d++)
        if (strncmp(c, DIGITS[d], HAN_BYTES) == 0) return d;
    if (strncmp(c, "两", HAN_BYTES) == 0) return 2;
    if (strncmp(c, "〇", HAN_BYTES) == 0) return 0;
    return -1;
}

/* 10, 100, 1000, 10^4, 10^8 for 十 百 千 万 亿, or 0. */
static uint64_t han_magnitude(const char *c)
{
    static const char *const UNITS[5] = {"十", "百", "千", "万", "亿"};
    static const uint64_t VALUES[5] = {10, 100, 1000, 10000, 100000000};
    for (int i = 0; i < 5; i++)
        if (strncmp(c, UNITS[i], HAN_BYTES) == 0) return VALUES[i];
    return 0;
}

enum { LIMIT_DIGITS = 12 };

bool number_words_chinese_value(const char *run, uint64_t *integer, char *decimals)
{
    const char *point = strstr(run, "点");
    size_t whole = point ? (size_t)(point - run) : strlen(run);
    decimals[0] = '\0';
    if (point) { /* 三点一四: each digit after the point read one by one */
        size_t k = 0;
        for (const char *p = point + HAN_BYTES; *p;) {
            int d = *p >= '0' && *p <= '9' ? *p - '0' : han_digit(p);
            if (d < 0 || k >= LIMIT_DIGITS * 2) return false;
            decimals[k++] = (char)('0' + d);
            p += *p >= '0' && *p <= '9' ? 1 : HAN_BYTES;
        }
        decimals[k] = '\0';
        if (k == 0) return false;
    }
    bool units = false;
    for (size_t i = 0; i < whole; i += (unsigned char)run[i] < 0x80 ? 1 : HAN_BYTES)
        units |= (unsigned char)run[i] >= 0x80 && han_magnitude(run + i) != 0;
    /* total: whole 亿s; myriads: whole 万s below them; section: below 万;
     * pending: the digits not yet given a unit */
    uint64_t total = 0, myriads = 0, section = 0, pending = 0, limit = 1000000000000u;
    bool have_pending = false;
    for (size_t i = 0; i < whole;) {
        if (run[i] >= '0' && run[i] <= '9') { /* a group of ASCII digits: 10万, 4万7千 */
            if (have_pending && units) return false;
            size_t n = 0;
            for (; i < whole && run[i] >= '0' && run[i] <= '9'; i++, n++) {
                if (n >= LIMIT_DIGITS) return false;
                pending = pending * 10 + (uint64_t)(run[i] - '0');
            }
            have_pending = true;
            continue;
        }
        int d = han_digit(run + i);
        uint64_t m = han_magnitude(run + i);
        i += HAN_BYTES;
        if (d >= 0) {
            if (!units) { /* 一九九零: digit after digit */
                if (pending >= limit / 10) return false;
                pending = pending * 10 + (uint64_t)d;
            } else {
                pending = (uint64_t)d;
            }
            have_pending = true;
        } else if (m == 0) {
            return false;
        } else if (m < 10000) { /* 十 百 千: 十二 is ten and two, 二十 two tens; 百 alone one hundred */
            section += (have_pending ? pending : 1) * m;
            pending = 0;
            have_pending = false;
        } else if (m == 10000) { /* 万: what came since the last 万 or 亿, times 10^4 */
            myriads += (section + pending > 0 ? section + pending : 1) * m;
            section = pending = 0;
            have_pending = false;
        } else { /* 亿: everything so far times 10^8 */
            total += (myriads + section + pending > 0 ? myriads + section + pending : 1) * m;
            myriads = section = pending = 0;
            have_pending = false;
        }
        if (total + myriads + section + pending >= limit) return false;
    }
    *integer = total + myriads + section + pending;
    return *integer < limit;
}
