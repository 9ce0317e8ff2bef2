/* number_words.c — see number_words.h. */
#include "number_words.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* The words and their ordinals, once: WORDS and ORDINALS list them,
 * JOINED holds them in one string, each after a space (" zero one two
 * ... billion"), with the plurals number_words_index reads. */
#define EACH_NUMBER_WORD(X)                                                                        \
    X("zero", "zeroth") X("one", "first") X("two", "second") X("three", "third")                   \
    X("four", "fourth") X("five", "fifth") X("six", "sixth") X("seven", "seventh")                 \
    X("eight", "eighth") X("nine", "ninth") X("ten", "tenth") X("eleven", "eleventh")              \
    X("twelve", "twelfth") X("thirteen", "thirteenth") X("fourteen", "fourteenth")                 \
    X("fifteen", "fifteenth") X("sixteen", "sixteenth") X("seventeen", "seventeenth")              \
    X("eighteen", "eighteenth") X("nineteen", "nineteenth") X("twenty", "twentieth")               \
    X("thirty", "thirtieth") X("forty", "fortieth") X("fifty", "fiftieth") X("sixty", "sixtieth")  \
    X("seventy", "seventieth") X("eighty", "eightieth") X("ninety", "ninetieth")                   \
    X("hundred", "hundredth") X("thousand", "thousandth") X("million", "millionth")                \
    X("billion", "billionth")
#define AS_WORD(word, ordinal) word,
#define AS_ORDINAL(word, ordinal) ordinal,
#define AFTER_A_SPACE(word, ordinal) " " word " " ordinal
static const char *const WORDS[NUMBER_WORDS] = {EACH_NUMBER_WORD(AS_WORD)};
static const char *const ORDINALS[NUMBER_WORDS] = {EACH_NUMBER_WORD(AS_ORDINAL)};
static const char JOINED[] = EACH_NUMBER_WORD(AFTER_A_SPACE) " hundreds thousands millions billions tens";
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

bool number_words_is_ordinal(const char *word)
{
    for (int i = 0; i < NUMBER_WORDS; i++)
        if (strcmp(word, ORDINALS[i]) == 0) return true;
    return false;
}

bool number_words_ordinal_extends(const char *prefix, const bool *allowed)
{
    size_t n = strlen(prefix);
    for (int i = 0; i < NUMBER_WORDS; i++)
        if (allowed[i] && strncmp(ORDINALS[i], prefix, n) == 0) return true;
    return false;
}

bool number_words_plural(const char *word)
{
    if (number_words_index(word) < 0) return false;
    for (int i = 0; i < NUMBER_WORDS; i++)
        if (strcmp(word, WORDS[i]) == 0) return false;
    return true;
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
        if (allowed && !allowed[i]) continue;
        if (goes_on(WORDS[i], prefix)) return true;
        /* the plurals number_words_index reads: hundreds .. billions, tens */
        char plural[16];
        if ((i >= HUNDRED || i == 10) && (snprintf(plural, sizeof plural, "%ss", WORDS[i]), goes_on(plural, prefix)))
            return true;
    }
    return false;
}

/* PAIR[a][b]: does byte b follow byte a inside one of JOINED's words?
 * Only ASCII: the words are lower-case letters. */
static bool PAIR[128][128];
static pthread_once_t pairs_once = PTHREAD_ONCE_INIT;

static void find_pairs(void)
{
    for (const char *p = JOINED; p[1]; p++)
        if (p[0] != ' ' && p[1] != ' ') PAIR[(unsigned char)p[0]][(unsigned char)p[1]] = true;
}

/* A piece with no space is part of a word (or an ordinal) exactly when it
 * is part of JOINED: one search instead of one per word (searching word
 * by word was 42% of the instructions of a start that translates nothing,
 * callgrind, en-zh).  translate asks this of every piece of the English
 * vocabulary at each start, and that one search was still ~190 us of
 * en-zh's 8,000 (24 ns a piece): so first each pair of neighbouring bytes
 * is looked up in PAIR, as every pair of a part of a word is a pair of
 * that word.  That turns away all but ~640 of the 8,000 (and any piece
 * with a space, whose pairs with it are in no word); the search decides
 * the rest. */
bool number_words_contains(const char *piece)
{
    pthread_once(&pairs_once, find_pairs);
    for (const unsigned char *p = (const unsigned char *)piece; p[0] && p[1]; p++)
        if (p[0] >= 128 || p[1] >= 128 || !PAIR[p[0]][p[1]]) return false;
    return !strchr(piece, ' ') && strstr(JOINED, piece); /* the plurals' pieces too: thousands, ##s */
}

/* Appends word k to a reading (room: NUMBER_READING_WORDS; a reading
 * longer than that, a number's long decimals, is cut there). */
static void say(NumberReading *r, int k)
{
    if (r->n < NUMBER_READING_WORDS) r->word[r->n++] = (signed char)k;
}

/* 0 < r < 100: twelve; twenty five. */
static void under_hundred(int r, NumberReading *out)
{
    if (r < 20) {
        say(out, r);
        return;
    }
    say(out, TENS + r / 10);
    if (r % 10) say(out, r % 10);
}

/* 0 < g < 1000: five hundred twelve. */
static void under_thousand(int g, NumberReading *out)
{
    if (g >= 100) {
        say(out, g / 100);
        say(out, HUNDRED);
    }
    if (g % 100) under_hundred(g % 100, out);
}

int number_words_readings(uint64_t integer, const char *decimals, NumberReading *out)
{
    if (integer >= 1000000000000u) return 0;
    int count = 0;
    NumberReading *standard = &out[count++];
    standard->n = 0;
    if (integer == 0) say(standard, 0);
    static const int scale[4] = {BILLION, MILLION, THOUSAND, -1};
    uint64_t unit = 1000000000u;
    for (int i = 0; i < 4; i++, unit /= 1000) {
        int g = (int)(integer / unit % 1000);
        if (g == 0) continue;
        under_thousand(g, standard);
        if (scale[i] >= 0) say(standard, scale[i]);
    }
    if (standard->n >= 2 && standard->word[0] == 1 && standard->word[1] >= HUNDRED) {
        /* a hundred, a thousand: "a" is no number word */
        out[count] = *standard;
        out[count].n--;
        memmove(out[count].word, out[count].word + 1, (size_t)out[count].n);
        count++;
    }
    if (integer >= 1100 && integer < 10000) { /* by hundreds: twenty-five hundred */
        NumberReading *by = &out[count++];
        by->n = 0;
        under_hundred((int)(integer / 100), by);
        say(by, HUNDRED);
        if (integer % 100) under_hundred((int)(integer % 100), by);
        if (integer % 100 >= 10) { /* nineteen ninety (1905 is no twenty five) */
            NumberReading *year = &out[count++];
            year->n = 0;
            under_hundred((int)(integer / 100), year);
            under_hundred((int)(integer % 100), year);
        }
    }
    /* three point one four: the integer alone would say another number
     * ("I have three apples." for 3.5) */
    for (int r = 0; decimals[0] && r < count; r++) {
        say(&out[r], NUMBER_WORD_POINT);
        for (const char *d = decimals; *d; d++) say(&out[r], *d - '0');
    }
    return count;
}

void number_words_of(uint64_t integer, const char *decimals, bool *allowed)
{
    NumberReading readings[NUMBER_READINGS];
    int count = number_words_readings(integer, decimals, readings);
    for (int r = 0; r < count; r++)
        for (int i = 0; i < readings[r].n; i++)
            if (readings[r].word[i] != NUMBER_WORD_POINT) allowed[readings[r].word[i]] = true;
}

bool number_words_may_follow(int before, int k)
{
    if (before == 0 || k == 0) return false;                      /* zero stands alone */
    if (before < TENS + 2) return k >= HUNDRED;                   /* five hundred, nineteen hundred */
    if (before < HUNDRED) return k < 10 || k >= HUNDRED;          /* twenty five, twenty thousand */
    return k < HUNDRED || k > before || before > HUNDRED;         /* hundred five, hundred thousand, thousand ... */
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
static const uint64_t LIMIT = 1000000000000u; /* 10^12 */

/* One item of a run: an ASCII digit group (its thousands commas skipped,
 * its point kept as a fraction: 2.5 is 25 / 10), a Han digit, or a
 * magnitude. */
typedef struct {
    enum { GROUP, DIGIT, MAGNITUDE } kind;
    uint64_t value;    /* the group's digits, the digit, or the magnitude */
    uint64_t fraction; /* 10^(the group's digits after its point) */
} Item;

/* The item at *p (before end), *p moved past it; false if none is. */
static bool next_item(const char **p, const char *end, Item *it)
{
    it->fraction = 1;
    if (**p >= '0' && **p <= '9') {
        it->kind = GROUP;
        it->value = 0;
        bool point = false;
        int digits = 0;
        for (; *p < end && ((**p >= '0' && **p <= '9') || **p == ',' || (**p == '.' && !point)); (*p)++) {
            if (**p == ',' || **p == '.') {
                point |= **p == '.';
                continue;
            }
            if (++digits > LIMIT_DIGITS) return false;
            it->value = it->value * 10 + (uint64_t)(**p - '0');
            if (point) it->fraction *= 10;
        }
        return true;
    }
    if (end - *p < HAN_BYTES) return false;
    int d = han_digit(*p);
    uint64_t m = han_magnitude(*p);
    *p += HAN_BYTES;
    it->kind = d >= 0 ? DIGIT : MAGNITUDE;
    it->value = d >= 0 ? (uint64_t)d : m;
    return d >= 0 || m != 0;
}

/* num / den · m, where that is a whole number below LIMIT. */
static bool times(uint64_t num, uint64_t den, uint64_t m, uint64_t *out)
{
    if (num >= LIMIT || m > LIMIT || (num * m) % den != 0 || num * m / den >= LIMIT) return false;
    *out = num * m / den;
    return true;
}

/* The integer part run[0..n-1], which has a magnitude: 二十九, 两千五百,
 * 一千零五, 4万7千, 2.5万 (25,000), 2亿284万, and 一百五 (150: a digit
 * after 百 千 万 亿 that ends the run counts in tens of it, but not after a
 * 零).  False for two digits side by side, which say "this or that" (十七八
 * 17 or 18, 两三千 2,000 or 3,000), and for a fraction that does not come
 * out whole. */
static bool read_with_magnitudes(const char *run, size_t n, uint64_t *value)
{
    uint64_t total = 0, myriads = 0, section = 0, pending = 0, fraction = 1, last_magnitude = 0;
    bool have_pending = false, zero_gap = false, digit_after_magnitude = false;
    Item it;
    for (const char *p = run, *end = run + n; p < end;) {
        if (!next_item(&p, end, &it)) return false;
        if (it.kind == DIGIT && it.value == 0) { /* 一千零五: 零 only marks a gap */
            if (have_pending) return false;
            zero_gap = true;
            continue;
        }
        if (it.kind != MAGNITUDE) {
            if (have_pending) return false; /* 七八: this or that */
            digit_after_magnitude = it.kind == DIGIT && last_magnitude >= 100 && !zero_gap;
            pending = it.value;
            fraction = it.fraction;
            have_pending = true;
            continue;
        }
        /* what the magnitude multiplies: the digits before it, or one */
        uint64_t num = have_pending ? pending : fraction, add;
        if (it.value < 10000) { /* 十 百 千 */
            if (!times(num, fraction, it.value, &add)) return false;
            section += add;
        } else if (it.value == 10000) { /* 万: all since the last 万 or 亿 */
            num = section * fraction + (have_pending ? pending : 0);
            if (!times(num ? num : fraction, fraction, 10000, &add)) return false;
            myriads += add;
            section = 0;
        } else { /* 亿: all so far */
            num = (total + myriads + section) * fraction + (have_pending ? pending : 0);
            if (!times(num ? num : fraction, fraction, 100000000, &add)) return false;
            total = add;
            myriads = section = 0;
        }
        pending = 0;
        fraction = 1;
        have_pending = zero_gap = false;
        last_magnitude = it.value;
        if (total + myriads + section >= LIMIT) return false;
    }
    if (have_pending && fraction != 1) return false; /* 3万2.5 */
    if (have_pending && digit_after_magnitude) pending *= last_magnitude / 10; /* 一百五 */
    *value = total + myriads + section + pending;
    return *value < LIMIT;
}

/* The integer part run[0..n-1], which has no magnitude, digit by digit
 * (一九九零, 二零零八, 2008, 0012; a group's point starts the decimals), into
 * digits (room n + 1; leading zeros kept) and decimals.  False for two Han
 * digits alone, which say "this or that" (七八 seven or eight, 两三). */
static bool read_digit_by_digit(const char *run, size_t n, char *digits, char *decimals)
{
    size_t k = 0, han = 0;
    bool zero = false;
    Item it;
    for (const char *p = run, *end = run + n; p < end;) {
        const char *start = p;
        if (!next_item(&p, end, &it) || it.kind == MAGNITUDE || decimals[0]) return false;
        if (it.kind == DIGIT) {
            digits[k++] = (char)('0' + it.value);
            han++;
            zero |= it.value == 0;
            continue;
        }
        size_t d = 0;
        bool after_point = false;
        for (const char *q = start; q < p; q++) { /* the group's digits as written */
            if (*q == ',' || *q == '.') {
                after_point |= *q == '.';
                continue;
            }
            if (after_point) decimals[d++] = *q;
            else digits[k++] = *q;
        }
        decimals[d] = '\0';
    }
    digits[k] = '\0';
    return k > 0 && k <= LIMIT_DIGITS && !(han == 2 && k == 2 && !zero);
}

bool number_words_chinese_value(const char *run, uint64_t *integer, char *decimals, char *digits)
{
    const char *point = strstr(run, "点");
    size_t whole = point ? (size_t)(point - run) : strlen(run);
    decimals[0] = digits[0] = '\0';
    bool magnitudes = false;
    for (size_t i = 0; i < whole; i += (unsigned char)run[i] < 0x80 ? 1 : HAN_BYTES)
        magnitudes |= (unsigned char)run[i] >= 0x80 && han_magnitude(run + i) != 0;
    if (magnitudes) {
        if (!read_with_magnitudes(run, whole, integer)) return false;
    } else {
        if (!read_digit_by_digit(run, whole, digits, decimals)) return false;
        *integer = 0;
        for (const char *d = digits; *d; d++) *integer = *integer * 10 + (uint64_t)(*d - '0');
    }
    if (point) { /* 三点一四: each digit after the point, one by one */
        if (decimals[0]) return false;
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
    return true;
}
