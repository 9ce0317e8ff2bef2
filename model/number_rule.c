/* number_rule.c — see number_rule.h. */
#include "number_rule.h"

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "number_words.h"

enum { MAX_DIGITS = 15 };
enum { WORD_ROOM = 16 }; /* the longest number word or ordinal, "seventeenth", and its 0, with room */
enum { READING_WORDS = NUMBER_WORD_POINT + 1 }; /* the words a reading holds: the number words and "point" */

/* One vocabulary's digit and separator tokens. */
typedef struct {
    int V;
    char (*digits)[MAX_DIGITS + 1]; /* [V] "" for a token that is not digits */
    bool *continues;                /* [V] */
    char *separator;                /* [V] '.' or ',', or 0 */
    int *ids, count;                /* the digit tokens, in id order */
    int *sep_ids, sep_count;        /* the separator tokens */
} Side;

/* One English vocabulary's pieces that may be part of a number word (the
 * words of number_words.h, "-" and "and" between them), and which pieces
 * continue the word before them. */
typedef struct {
    int V;
    char (*piece)[WORD_ROOM]; /* [V] "" for a piece of no number word */
    bool *continues;          /* [V] every piece's */
    int count;                /* the pieces with text */
    int *whole_ids, whole_count; /* of those, the ones that begin a word and are a number word (six) */
    int *cont_ids, cont_count;   /* and the ones that continue a word (##ty) */
} Words;

struct NumberRule {
    Side source, target;
    const char **numeral;        /* [target V] the Chinese numeral a token is, as readings write
                                    it (两 as 二, 〇 as 零), or NULL */
    int *numeral_ids, numeral_count;
    bool *alone_a_word;          /* [target V] 一 and 两: alone, a word as often as a number */
    /* An English side's number words (number_words.h), and a Chinese
     * source's numerals for an English target */
    Words source_words, target_words;
    const char **source_numeral; /* [source V] the numeral a source token is, as read, or NULL */
    int source_numeral_count;
    bool *source_minute_mark;    /* [source V] 分: a time's minutes end with it (七点零五分) */
    bool *source_duration_mark;  /* [source V] 钟: 分钟 is minutes that passed (二点五分钟), no time */
    /* Minus signs (number_rule_set_source_sign, _target_sign) */
    bool *source_minus;          /* [source V] "-" */
    signed char *target_sign;    /* [target V] SIGN_MINUS ("-"), SIGN_FU (负), SIGN_AFTER_ZERO (零下's 下), or 0 */
    int sign_id;                 /* the target's 负, which the rule writes for a negative number, or -1 */
};

enum { SIGN_MINUS = 1, SIGN_FU, SIGN_AFTER_ZERO };

/* What a number begun after the output so far may be (signed_at): no
 * negative one (no sign before it); any ("-" and 零下 come before positive
 * numbers too: the range 3-5, 零下10度 for "10 degrees below zero"); only
 * a negative one (负, which says it: 负 and 2000 for "-5 ... 2000" would
 * flip the sign of the 2000). */
typedef enum { UNSIGNED, SIGNED, NEGATIVE } Sign;

static void side_init(Side *s, int V)
{
    s->V = V;
    s->digits = xcalloc((size_t)V, sizeof *s->digits);
    s->continues = xcalloc((size_t)V, sizeof *s->continues);
    s->separator = xcalloc((size_t)V, sizeof *s->separator);
    s->ids = xmalloc((size_t)V * sizeof *s->ids);
    s->sep_ids = xmalloc((size_t)V * sizeof *s->sep_ids);
    s->count = s->sep_count = 0;
}

static void words_init(Words *w, int V)
{
    w->V = V;
    w->piece = xcalloc((size_t)V, sizeof *w->piece);
    w->continues = xcalloc((size_t)V, sizeof *w->continues);
    w->whole_ids = xmalloc((size_t)V * sizeof *w->whole_ids);
    w->cont_ids = xmalloc((size_t)V * sizeof *w->cont_ids);
    w->count = w->whole_count = w->cont_count = 0;
}

static void words_free(Words *w)
{
    free(w->piece);
    free(w->continues);
    free(w->whole_ids);
    free(w->cont_ids);
}

static void side_free(Side *s)
{
    free(s->digits);
    free(s->continues);
    free(s->separator);
    free(s->ids);
    free(s->sep_ids);
}

NumberRule *number_rule_new(int src_vocab, int tgt_vocab)
{
    NumberRule *r = xmalloc(sizeof *r);
    side_init(&r->source, src_vocab);
    side_init(&r->target, tgt_vocab);
    r->numeral = xcalloc((size_t)tgt_vocab, sizeof *r->numeral);
    r->numeral_ids = xmalloc((size_t)tgt_vocab * sizeof *r->numeral_ids);
    r->numeral_count = 0;
    r->alone_a_word = xcalloc((size_t)tgt_vocab, sizeof *r->alone_a_word);
    r->source_numeral = xcalloc((size_t)src_vocab, sizeof *r->source_numeral);
    r->source_numeral_count = 0;
    r->source_minute_mark = xcalloc((size_t)src_vocab, sizeof *r->source_minute_mark);
    r->source_duration_mark = xcalloc((size_t)src_vocab, sizeof *r->source_duration_mark);
    r->source_minus = xcalloc((size_t)src_vocab, sizeof *r->source_minus);
    r->target_sign = xcalloc((size_t)tgt_vocab, sizeof *r->target_sign);
    r->sign_id = -1;
    words_init(&r->source_words, src_vocab);
    words_init(&r->target_words, tgt_vocab);
    return r;
}

void number_rule_free(NumberRule *rule)
{
    if (!rule) return;
    side_free(&rule->source);
    side_free(&rule->target);
    free(rule->numeral);
    free(rule->numeral_ids);
    free(rule->alone_a_word);
    free(rule->source_numeral);
    free(rule->source_minute_mark);
    free(rule->source_duration_mark);
    free(rule->source_minus);
    free(rule->target_sign);
    words_free(&rule->source_words);
    words_free(&rule->target_words);
    free(rule);
}

/* Is `text` the string `word`?  The first bytes are compared here, and
 * strcmp is called only when they agree: translate asks the predicates
 * below of every piece of both vocabularies at each start (number_rule_of
 * in app/translator.c, ~13,000 pieces for en-zh), and a call to strcmp
 * for each of them was ~20% of that loop (perf). */
static inline bool is_word(const char *text, const char *word)
{
    return text[0] == word[0] && strcmp(text, word) == 0;
}

bool number_rule_is_digits(const char *text)
{
    /* no strlen first: most pieces stop at their first byte here (a strlen
     * of each was 7% of number_rule_of, perf) */
    size_t n = 0;
    while (n <= MAX_DIGITS && text[n] >= '0' && text[n] <= '9') n++;
    return n >= 1 && n <= MAX_DIGITS && text[n] == '\0';
}

bool number_rule_is_separator(const char *text)
{
    return text[0] && !text[1] && strchr(".,", text[0]);
}

bool number_rule_is_time_separator(const char *text)
{
    return is_word(text, ":");
}

bool number_rule_is_minute_mark(const char *text)
{
    return is_word(text, "分");
}

bool number_rule_is_duration_mark(const char *text)
{
    return is_word(text, "钟");
}

static void side_set(Side *s, int id, const char *text, bool continues)
{
    ASSERT(id >= 0 && id < s->V);
    if (number_rule_is_separator(text) || number_rule_is_time_separator(text)) {
        if (!s->separator[id]) s->sep_ids[s->sep_count++] = id;
        s->separator[id] = text[0];
        return;
    }
    ASSERT(number_rule_is_digits(text));
    if (!s->digits[id][0]) s->ids[s->count++] = id;
    strcpy(s->digits[id], text);
    s->continues[id] = continues;
}

void number_rule_set_source(NumberRule *rule, int id, const char *text, bool continues)
{
    ASSERT(!number_rule_is_time_separator(text)); /* a source's 7:05 is two numbers (7点05分) */
    side_set(&rule->source, id, text, continues);
}

void number_rule_set_target(NumberRule *rule, int id, const char *text, bool continues)
{
    side_set(&rule->target, id, text, continues);
}

void number_rule_set_source_minute_mark(NumberRule *rule, int id)
{
    ASSERT(id >= 0 && id < rule->source.V);
    rule->source_minute_mark[id] = true;
}

void number_rule_set_source_duration_mark(NumberRule *rule, int id)
{
    ASSERT(id >= 0 && id < rule->source.V);
    rule->source_duration_mark[id] = true;
}

bool number_rule_is_sign(const char *text)
{
    return is_word(text, "-") || is_word(text, "负") || is_word(text, "下");
}

void number_rule_set_source_sign(NumberRule *rule, int id, const char *text)
{
    ASSERT(id >= 0 && id < rule->source.V && number_rule_is_sign(text));
    rule->source_minus[id] = strcmp(text, "-") == 0; /* an English source's: 负 and 下 are Chinese */
}

void number_rule_set_target_sign(NumberRule *rule, int id, const char *text)
{
    ASSERT(id >= 0 && id < rule->target.V && number_rule_is_sign(text));
    rule->target_sign[id] = strcmp(text, "下") == 0 ? SIGN_AFTER_ZERO : strcmp(text, "负") == 0 ? SIGN_FU : SIGN_MINUS;
    if (strcmp(text, "负") == 0) rule->sign_id = id;
}

/* ---- Chinese numerals ---------------------------------------------------------- */

/* Every Han character is 3 bytes of UTF-8, so a run's length in characters
 * is its bytes / 3. */
enum { HAN_BYTES = 3 };
static const char *const HAN_DIGIT[10] = {"零", "一", "二", "三", "四", "五", "六", "七", "八", "九"};
static const char MAGNITUDES[] = "十百千万亿";
static const char POINT[] = "点";

/* The numeral `text` as readings write it, or NULL for any other text.
 * translate asks this of every piece of a Chinese vocabulary at each
 * start, most of them one character long: compared as 3 bytes, which the
 * compiler does inline, instead of through strcmp (60,000 calls, 10% of
 * the instructions of a start that translates nothing, callgrind). */
static const char *numeral_as_read(const char *text)
{
    if (strlen(text) != HAN_BYTES) return NULL;
    if (memcmp(text, "两", HAN_BYTES) == 0) return HAN_DIGIT[2];
    if (memcmp(text, "〇", HAN_BYTES) == 0) return HAN_DIGIT[0];
    if (memcmp(text, POINT, HAN_BYTES) == 0) return POINT;
    for (int d = 0; d < 10; d++)
        if (memcmp(text, HAN_DIGIT[d], HAN_BYTES) == 0) return HAN_DIGIT[d];
    for (int i = 0; MAGNITUDES[i]; i += HAN_BYTES)
        if (memcmp(text, MAGNITUDES + i, HAN_BYTES) == 0) return MAGNITUDES + i;
    return NULL;
}

static bool is_magnitude(const char *numeral)
{
    return numeral >= MAGNITUDES && numeral < MAGNITUDES + sizeof MAGNITUDES - 1;
}

bool number_rule_is_numeral(const char *text)
{
    return numeral_as_read(text) != NULL;
}

void number_rule_set_numeral(NumberRule *rule, int id, const char *text)
{
    const char *as_read = numeral_as_read(text);
    ASSERT(id >= 0 && id < rule->target.V && as_read);
    if (!rule->numeral[id]) rule->numeral_ids[rule->numeral_count++] = id;
    rule->numeral[id] = as_read;
    rule->alone_a_word[id] = strcmp(text, "一") == 0 || strcmp(text, "两") == 0;
}

void number_rule_set_source_numeral(NumberRule *rule, int id, const char *text)
{
    const char *as_read = numeral_as_read(text);
    ASSERT(id >= 0 && id < rule->source.V && as_read);
    if (!rule->source_numeral[id]) rule->source_numeral_count++;
    rule->source_numeral[id] = as_read;
}

/* A word between the number words of one number: twenty - five, two
 * hundred and five, tens of thousands. */
static bool is_joiner(const char *word)
{
    return is_word(word, "-") || is_word(word, "and") || is_word(word, "of");
}

/* The "point" of a decimal (three point one four): part of a run of
 * number words where a reading has it (NUMBER_WORD_POINT), unlike a
 * joiner, which no reading holds. */
static bool is_point(const char *word)
{
    return is_word(word, "point");
}

/* The index of `word` in a reading: a number word's (number_words_index),
 * NUMBER_WORD_POINT for "point", or -1. */
static int reading_word(const char *word)
{
    return is_point(word) ? NUMBER_WORD_POINT : number_words_index(word);
}

static void words_set(Words *w, int id, const char *text, bool continues)
{
    ASSERT(id >= 0 && id < w->V);
    w->continues[id] = continues;
    bool joiner = !continues && (is_joiner(text) || is_point(text));
    /* the length last: most pieces are none of these, and a strlen of
     * each was 4% of number_rule_of (perf) */
    if (!(joiner || number_words_contains(text)) || strlen(text) >= WORD_ROOM) return;
    if (w->piece[id][0]) return; /* told twice */
    strcpy(w->piece[id], text);
    w->count++;
    if (continues) w->cont_ids[w->cont_count++] = id;
    else if (number_words_index(text) >= 0) w->whole_ids[w->whole_count++] = id;
}

void number_rule_set_source_piece(NumberRule *rule, int id, const char *text, bool continues)
{
    words_set(&rule->source_words, id, text, continues);
}

void number_rule_set_target_piece(NumberRule *rule, int id, const char *text, bool continues)
{
    words_set(&rule->target_words, id, text, continues);
}

static void put(char *out, size_t *at, const char *s, size_t n)
{
    memcpy(out + *at, s, n);
    *at += n;
}

static void put_han(char *out, size_t *at, const char *han)
{
    put(out, at, han, HAN_BYTES);
}

/* 0 < g < 10000 in the standard form: 五百一十二, 一千零五, 一千零五十. */
static void read_group(int g, char *out, size_t *at)
{
    const char *unit[4] = {MAGNITUDES + 2 * HAN_BYTES, MAGNITUDES + HAN_BYTES, MAGNITUDES, NULL}; /* 千 百 十 */
    int d[4] = {g / 1000, g / 100 % 10, g / 10 % 10, g % 10};
    bool started = false, gap = false;
    for (int i = 0; i < 4; i++) {
        if (d[i] == 0) {
            gap = started; /* a zero inside is read 零, once, before the next digit */
            continue;
        }
        if (gap) put_han(out, at, HAN_DIGIT[0]);
        put_han(out, at, HAN_DIGIT[d[i]]);
        if (unit[i]) put_han(out, at, unit[i]);
        started = true;
        gap = false;
    }
}

/* v < 10^12 in the standard form, by groups of four digits: 两万五千
 * (written 二万五千), 一万零五百, 一亿零五; 十二, not 一十二, where it begins
 * with a 1 ten. */
static void read_integer(uint64_t v, char *out, size_t *at)
{
    if (v == 0) {
        put_han(out, at, HAN_DIGIT[0]);
        return;
    }
    const char *magnitude[3] = {MAGNITUDES + 4 * HAN_BYTES, MAGNITUDES + 3 * HAN_BYTES, NULL}; /* 亿 万 */
    int g[3] = {(int)(v / 100000000), (int)(v / 10000 % 10000), (int)(v % 10000)};
    size_t first = *at;
    bool started = false, gap = false;
    for (int i = 0; i < 3; i++) {
        if (g[i] == 0) {
            gap = started;
            continue;
        }
        if (started && (gap || g[i] < 1000)) put_han(out, at, HAN_DIGIT[0]);
        read_group(g[i], out, at);
        if (magnitude[i]) put_han(out, at, magnitude[i]);
        started = true;
        gap = false;
    }
    if (*at - first >= 2 * HAN_BYTES && memcmp(out + first, "一十", 2 * HAN_BYTES) == 0) {
        memmove(out + first, out + first + HAN_BYTES, *at - first - HAN_BYTES);
        *at -= HAN_BYTES;
    }
}

int number_rule_readings(const char *number, int n, char *out)
{
    uint64_t v = 0;
    int int_digits = 0, frac_digits = 0, i = 0;
    for (; i < n && number[i] != '.'; i++)
        if (number[i] != ',') {
            v = v * 10 + (uint64_t)(number[i] - '0');
            int_digits++;
        }
    if (i < n) frac_digits = n - i - 1;
    out[0] = 0;
    if (int_digits < 1 || int_digits > 12 || frac_digits > 20) return 0;
    /* The source joins "1.2.3", "192.168.0.1" and "1.234,567" into one
     * number too (source_numbers): no Chinese reading says them, and a
     * separator after the point is no digit to read. */
    for (int k = i + 1; k < n; k++)
        if (number[k] < '0' || number[k] > '9') return 0;
    size_t at = 0;
    read_integer(v, out, &at);
    if (i < n) {
        put_han(out, &at, POINT);
        for (i++; i < n; i++) put_han(out, &at, HAN_DIGIT[number[i] - '0']);
    }
    out[at++] = '\n';
    out[at] = 0;
    if (n != 4 || int_digits != 4) return 1;
    for (i = 0; i < 4; i++) put_han(out, &at, HAN_DIGIT[number[i] - '0']); /* a year: 一九九零 */
    out[at++] = '\n';
    out[at] = 0;
    return 2;
}

/* Token `id`'s digits ("" for any other token). */
static const char *digits_of(const Side *s, int id)
{
    return id >= 0 && id < s->V ? s->digits[id] : "";
}

static char separator_of(const Side *s, int id)
{
    return id >= 0 && id < s->V ? s->separator[id] : 0;
}

/* The source's numbers as it wrote them, separators and all: number k is
 * text + start[k], len[k] chars. */
typedef struct {
    char *text;
    int *start, *len;
    int *src_from, *src_to; /* [count] a digit number's tokens, src[from..to-1]; -1 for the others */
    int *twin;              /* [count] the same number written another way (284万, 二百八十四万), or -1 */
    int count;
    bool *used;   /* [count] the output has written it */
    int text_used; /* bytes of text taken */
    int in_digits; /* numbers 0..in_digits-1 may be written in digits; the
                      rest, an English source's words, only in numerals */
    bool *negative; /* [count] a minus sign before it in the source (-10): written only after one */
    bool any_negative; /* some source number is negative: a 负 may be the rule's (signed_at) */
} Pool;

/* The digits of the run of digit tokens at ids[i] (the first any digit
 * token, the rest "##" ones) appended at text + *at; returns the index
 * after it and adds its digits to *digits. */
static int run_of(const Side *s, const int *ids, int n, int i, char *text, int *at, int *digits)
{
    do {
        const char *d = digits_of(s, ids[i]);
        size_t m = strlen(d);
        memcpy(text + *at, d, m);
        *at += (int)m;
        *digits += (int)m;
        i++;
    } while (i < n && digits_of(s, ids[i])[0] && s->continues[ids[i]]);
    return i;
}

/* Did the text write the separator src[i] (between digits) with no white
 * space before or after it?  The ids do not show it: "1,000" and the list
 * "1, 000" are the same tokens, and so are "1.2" and "Question 1. 2".  In
 * English a comma or point followed (or preceded) by a space is
 * punctuation, never inside a number.  Without `spaced`, every separator
 * may join, as the ids alone allow. */
static bool written_tight(const bool *spaced, int i)
{
    return !spaced || (!spaced[i] && !spaced[i + 1]);
}

/* Is ids[i], the first digit token of a number, right after a minus sign
 * (minus[]): a "-" that begins a word (the first token, or white space
 * before it) with none between it and the digits: "-10", "It is -10
 * degrees"; not the range 1990-2000, COVID-19, nor "5 - 3".  Without
 * `spaced`, a "-" that no digit comes right before. */
static bool minus_before(const Side *s, const bool *minus, const int *ids, const bool *spaced, int i)
{
    if (i < 1 || ids[i - 1] < 0 || ids[i - 1] >= s->V || !minus[ids[i - 1]]) return false;
    if (spaced) return !spaced[i] && (i == 1 || spaced[i - 1]);
    return i == 1 || !digits_of(s, ids[i - 2])[0];
}

/* Fills `pool` (text room: n · (MAX_DIGITS + 1); start and len n) with
 * the numbers of src[0..n-1], each marked negative where a minus sign
 * comes before it (minus_before; minus NULL: none is).  A separator joins the runs around it where
 * it reads as part of one number: written between them with no space
 * (written_tight: not "110, 120", "Question 1. 2"), "." after at most 3
 * digits (1.5, 30.2, not "1990.5"), "," between at most 3 digits and
 * exactly 3 (1,000, not "1,2"). */
static void source_numbers(const Side *s, const bool *minus, const int *ids, const bool *spaced, int n, Pool *pool)
{
    int at = 0;
    pool->count = 0;
    for (int i = 0; i < n;) {
        if (!digits_of(s, ids[i])[0]) {
            i++;
            continue;
        }
        int k = pool->count++, first = at, left = 0; /* left: the digits before the separator */
        pool->src_from[k] = i;
        pool->twin[k] = -1;
        pool->negative[k] = minus && minus_before(s, minus, ids, spaced, i);
        i = run_of(s, ids, n, i, pool->text, &at, &left);
        while (i + 1 < n && separator_of(s, ids[i]) && digits_of(s, ids[i + 1])[0] && left <= 3 &&
               written_tight(spaced, i)) {
            char sep = separator_of(s, ids[i]);
            int mark = at, right = 0;
            pool->text[at++] = sep;
            int next = run_of(s, ids, n, i + 1, pool->text, &at, &right);
            if (sep == ',' && right != 3) {
                at = mark;
                break;
            }
            i = next;
            left = right;
        }
        pool->start[k] = first;
        pool->len[k] = at - first;
        pool->src_to[k] = i;
    }
    pool->text_used = at;
}

/* Does number k read p[0..n-1] (`whole`), or begin with it? */
static bool number_is(const Pool *pool, int k, const char *p, int n, bool whole)
{
    return (whole ? pool->len[k] == n : pool->len[k] >= n) && memcmp(pool->text + pool->start[k], p, (size_t)n) == 0;
}

/* May number k be written by a number begun where `sign` says (Sign)? */
static bool sign_fits(const Pool *pool, int k, Sign sign)
{
    return sign == SIGNED || (sign == NEGATIVE) == pool->negative[k];
}

/* The first unused number that reads p[0..n-1], or -1 (digits: the
 * numbers said in words are not among them); after a sign, a negative
 * one first. */
static int unused_equal(const Pool *pool, const char *p, int n, Sign sign)
{
    for (int pass = sign != UNSIGNED ? 0 : 1; pass < 2; pass++)
        for (int k = 0; k < pool->in_digits; k++)
            if (!pool->used[k] && (pass == 1 || pool->negative[k]) && sign_fits(pool, k, sign) &&
                number_is(pool, k, p, n, true))
                return k;
    return -1;
}

/* Does an unused number other than `except` that a number begun after a
 * sign (or not: `sign`) may write begin with p[0..n-1]? */
static bool unused_prefix(const Pool *pool, const char *p, int n, int except, Sign sign)
{
    for (int k = 0; k < pool->in_digits; k++)
        if (k != except && !pool->used[k] && sign_fits(pool, k, sign) && number_is(pool, k, p, n, false)) return true;
    return false;
}

/* The English readings of the source's numbers (number_words_readings),
 * for an English target, each the reading of one source number (its
 * owner): a number the output has written in words or digits is used up,
 * and its readings with it.  Owners 0..pool_owners-1 are the pool's
 * numbers; a run of numerals read again (source_numeral_words) is the
 * pool's number of its value where the pool has one not yet taken (一百零五
 * is both the pool's 105 and a run of numerals: one number), else a number
 * of its own (a lone 三). */
typedef struct {
    NumberReading *at;
    int *owner;      /* [count] */
    int count, room;
    bool *used;      /* [owners] */
    bool *taken;     /* [pool_owners] a run of numerals is that number */
    int owners, pool_owners;
} Readings;

static bool reading_equal(const NumberReading *a, const NumberReading *b)
{
    return a->n == b->n && memcmp(a->word, b->word, (size_t)a->n) == 0;
}

/* The pool's number whose first (standard) reading is x, not yet taken by
 * a run of numerals, or a new owner. */
static int owner_of(Readings *rs, const NumberReading *x)
{
    for (int r = 0; r < rs->count; r++) {
        int o = rs->owner[r];
        bool first = r == 0 || rs->owner[r - 1] != o;
        if (first && o < rs->pool_owners && !rs->taken[o] && reading_equal(&rs->at[r], x)) {
            rs->taken[o] = true;
            return o;
        }
    }
    return rs->owners++;
}

/* Room in rs for one number's readings more. */
static void readings_room(Readings *rs)
{
    if (rs->count + NUMBER_READINGS > rs->room) {
        rs->room = 2 * rs->room + NUMBER_READINGS;
        rs->at = xrealloc(rs->at, (size_t)rs->room * sizeof *rs->at);
        rs->owner = xrealloc(rs->owner, (size_t)rs->room * sizeof *rs->owner);
    }
}

/* Adds the readings of integer.decimals as number `owner` (-1: owner_of). */
static void readings_add(Readings *rs, uint64_t integer, const char *decimals, int owner)
{
    if (!rs) return;
    readings_room(rs);
    int first = rs->count, n = number_words_readings(integer, decimals, rs->at + first);
    if (n == 0) return;
    if (owner < 0) owner = owner_of(rs, &rs->at[first]);
    for (int r = first; r < first + n; r++) rs->owner[r] = owner;
    rs->count += n;
}

/* Adds the reading of the time hour:minute as number `owner`: the hour's
 * words and the minutes' ("seven fifteen" for 7:15, "seven" for 7:00).
 * None for minutes 1 to 9: English says 7:05 "seven oh five", and "oh" is
 * no number word, while "seven five" and "seven zero five" are no time;
 * such a time is written in digits only. */
static void readings_add_time(Readings *rs, int hour, int minute, int owner)
{
    if (minute > 0 && minute < 10) return;
    NumberReading h[NUMBER_READINGS], m[NUMBER_READINGS];
    if (number_words_readings((uint64_t)hour, "", h) < 1) return;
    if (minute > 0 && (number_words_readings((uint64_t)minute, "", m) < 1 || h[0].n + m[0].n > NUMBER_READING_WORDS))
        return;
    readings_room(rs);
    NumberReading *x = &rs->at[rs->count];
    *x = h[0];
    if (minute > 0) {
        memcpy(x->word + x->n, m[0].word, (size_t)m[0].n);
        x->n += m[0].n;
    }
    rs->owner[rs->count++] = owner;
}

static bool source_numeral_words(const NumberRule *rule, const int *src, int S, Readings *rs, bool *unread);
static int add_word_numbers(const NumberRule *rule, const int *src, int S, Pool *pool);

bool number_rule_reads_negative(const NumberRule *rule, const int *src, const bool *spaced, int S)
{
    if (rule->sign_id < 0) return false; /* signs read only where written (number_rule_ban) */
    /* as source_numbers marks them: a number's first digit token right
     * after its minus sign */
    for (int i = 0; i < S; i++)
        if (digits_of(&rule->source, src[i])[0] && minus_before(&rule->source, rule->source_minus, src, spaced, i))
            return true;
    return false;
}

bool number_rule_applies(const NumberRule *rule, const int *src, int S)
{
    for (int i = 0; i < S; i++)
        if (digits_of(&rule->source, src[i])[0]) return true;
    if (rule->source_words.count > 0 && add_word_numbers(rule, src, S, NULL) > 0) return true;
    bool unread;
    return rule->target_words.count > 0 && rule->source_numeral_count > 0 &&
           source_numeral_words(rule, src, S, NULL, &unread);
}

/* Where the output stands: outside a number, in one that ends with a
 * digit, or after a separator that may continue it (p, n chars). */
typedef enum { OUTSIDE, IN_DIGITS, AFTER_SEPARATOR } Place;

typedef struct {
    Place place;
    char *p;
    int n;
    Sign sign; /* what it may be, by the sign right before it (signed_at) */
} Output;

/* Does the output ids[0..i-1] end with a minus sign, "-", 负 or 零下, and
 * so what may a number begun at ids[i] be (Sign)?  After 负 only a
 * negative one where the source has one; else the 负 is the model's own,
 * its number the source's (负五 for "negative 5", which the rule reads as
 * 5: it was 负限度, the 五 banned), and any may follow it. */
static Sign signed_at(const NumberRule *rule, const Pool *pool, const int *ids, int i)
{
    const Side *t = &rule->target;
    int last = i > 0 ? ids[i - 1] : -1, before = i > 1 ? ids[i - 2] : -1;
    if (last < 0 || last >= t->V) return UNSIGNED;
    if (rule->target_sign[last] == SIGN_FU) return pool->any_negative ? NEGATIVE : SIGNED; /* else the model's own */
    bool sign = rule->target_sign[last] == SIGN_MINUS ||
                (rule->target_sign[last] == SIGN_AFTER_ZERO && before >= 0 && before < t->V &&
                 rule->numeral[before] == HAN_DIGIT[0]);
    return sign ? SIGNED : UNSIGNED;
}

/* The output wrote number k: it is used up, in either of its forms. */
static void pool_use(Pool *pool, int k)
{
    pool->used[k] = true;
    if (pool->twin[k] >= 0) pool->used[pool->twin[k]] = true;
}

/* The number being written ends: it uses up the source number it reads
 * (the separator after it, if any, was punctuation, not part of it). */
static void finish(Pool *pool, Output *o)
{
    if (o->place == OUTSIDE) return;
    int n = o->place == AFTER_SEPARATOR ? o->n - 1 : o->n;
    int k = unused_equal(pool, o->p, n, o->sign);
    if (k >= 0) pool_use(pool, k);
    o->place = OUTSIDE;
    o->n = 0;
}

/* Does text[0..n-1] hold a Han character (a 万 or 亿 after digits)? */
static bool holds_han(const char *text, int n)
{
    for (int i = 0; i < n; i++)
        if ((unsigned char)text[i] >= 0x80) return true;
    return false;
}

/* Does target token `id`, a 万 or 亿, go on with the digits being
 * written toward an unused source number (284万 for "2.84 million")? */
static bool magnitude_goes_on(const NumberRule *rule, const Pool *pool, const Output *o, int id)
{
    const char *c = id >= 0 && id < rule->target.V ? rule->numeral[id] : NULL;
    if (!c || !is_magnitude(c) || o->place != IN_DIGITS) return false;
    memcpy(o->p + o->n, c, HAN_BYTES); /* room: a token's worth after the last */
    return unused_prefix(pool, o->p, o->n + HAN_BYTES, -1, o->sign);
}

/* Reads the output so far as the ban below wrote it: a separator, a
 * digit or a 万 亿 continues the number being written only where an
 * unused source number begins with the result. */
static Output output_numbers(const NumberRule *rule, const int *ids, int n, Pool *pool, char *text)
{
    const Side *t = &rule->target;
    Output o = {OUTSIDE, text, 0, UNSIGNED};
    for (int i = 0; i < n; i++) {
        if (magnitude_goes_on(rule, pool, &o, ids[i])) {
            o.n += HAN_BYTES;
            continue;
        }
        const char *d = digits_of(t, ids[i]);
        char sep = separator_of(t, ids[i]);
        int m = (int)strlen(d);
        if (m) {
            memcpy(o.p + o.n, d, (size_t)m);
            bool goes_on = (o.place == IN_DIGITS && t->continues[ids[i]]) ||
                           (o.place == AFTER_SEPARATOR && unused_prefix(pool, o.p, o.n + m, -1, o.sign));
            if (!goes_on) {
                finish(pool, &o);
                memcpy(o.p, d, (size_t)m);
                o.sign = signed_at(rule, pool, ids, i);
            }
            o.n += m;
            o.place = IN_DIGITS;
        } else if (sep && o.place == IN_DIGITS && (o.p[o.n] = sep, unused_prefix(pool, o.p, o.n + 1, -1, o.sign))) {
            o.n++;
            o.place = AFTER_SEPARATOR;
        } else {
            finish(pool, &o);
        }
    }
    return o;
}

/* Does an unused source number have a reading (readings: number k's at
 * k * NUMBER_RULE_READINGS_ROOM, ended by a 0) that begins with run[0..n-1]
 * (`whole`: that is run[0..n-1]), a negative one only for a run begun
 * after a sign (`sign`)?  Its index, or -1. */
static int reading_of(const Pool *pool, const char *readings, const char *run, size_t n, bool whole, Sign sign)
{
    for (int k = 0; k < pool->count; k++) {
        if (pool->used[k] || !sign_fits(pool, k, sign)) continue;
        for (const char *r = readings + (size_t)k * NUMBER_RULE_READINGS_ROOM; *r; r = strchr(r, '\n') + 1) {
            size_t m = (size_t)(strchr(r, '\n') - r);
            if ((whole ? m == n : m >= n) && memcmp(r, run, n) == 0) return k;
        }
    }
    return -1;
}

/* Reads the output's runs of numerals as the ban below let them be
 * written: 点 joins a run only where a reading goes on with it, else it is
 * a word of its own; a run that ends reading a whole unused number uses it
 * up, those of two numerals or a magnitude when `lone` is false, the lone
 * ones (五, 第二's 二: maybe words) when it is true, so that the digits
 * are checked between the two (五十 uses up the 50 of "50 dollars", 第二
 * "second" not the 2 of 2:30).  Returns the length in bytes of the run
 * the output ends with, left in run (room: HAN_BYTES · (len + 1));
 * *a_number says whether that run is a number rather than maybe a word:
 * two numerals or more, or one that is not 一 or 两 (一起, 两个); *sign
 * what the sign right before it lets it be (signed_at): only a run after
 * one reads a negative number. */
static size_t output_run(const NumberRule *rule, const int *ids, int len, Pool *pool, const char *readings, char *run,
                         bool *a_number, Sign *sign, bool lone)
{
    size_t n = 0;
    bool magnitude = false;
    *a_number = false;
    *sign = UNSIGNED;
    for (int i = 0; i < len; i++) {
        const char *c = ids[i] >= 0 && ids[i] < rule->target.V ? rule->numeral[ids[i]] : NULL;
        if (c) {
            memcpy(run + n, c, HAN_BYTES);
            if (n == 0) *sign = signed_at(rule, pool, ids, i);
            if (c != POINT || (n > 0 && reading_of(pool, readings, run, n + HAN_BYTES, false, *sign) >= 0)) {
                *a_number = n > 0 || !rule->alone_a_word[ids[i]];
                magnitude |= is_magnitude(c);
                n += HAN_BYTES;
                continue;
            }
        }
        int k = n > 0 ? reading_of(pool, readings, run, n, true, *sign) : -1;
        bool sure = n >= 2 * HAN_BYTES || magnitude;
        if (k >= 0 && sure != lone) /* the run read number k whole */
            pool_use(pool, k);
        n = 0;
        magnitude = false;
    }
    if (n == 0) {
        *a_number = false;
        *sign = UNSIGNED;
    }
    return n;
}

/* The output's numerals as output_run reads them, and the readings of the
 * source's numbers: what ban_numerals works from. */
typedef struct {
    char *readings; /* number k's at k · NUMBER_RULE_READINGS_ROOM */
    char *run;      /* the run the output ends with, n bytes (room: one numeral more) */
    size_t n;
    bool a_number;
    Sign sign;            /* what the run may be, by the sign before it */
    Sign here;            /* what a run begun now may be */
    float *raise;         /* the highest logit of a numeral banned for writing a
                             negative number without its sign (ban_digits) */
    const Output *digits; /* the output's digits: a 万 亿 may go on with them (284万) */
} Numerals;

static void numerals_read(const NumberRule *rule, Pool *pool, const int *history, int len, Numerals *numerals)
{
    numerals->readings = xmalloc((size_t)pool->count * NUMBER_RULE_READINGS_ROOM);
    for (int k = 0; k < pool->count; k++) {
        char *r = numerals->readings + (size_t)k * NUMBER_RULE_READINGS_ROOM;
        r[0] = 0; /* 284万 reads as its twin, 二百八十四万, does */
        if (!holds_han(pool->text + pool->start[k], pool->len[k]))
            number_rule_readings(pool->text + pool->start[k], pool->len[k], r);
    }
    numerals->run = xmalloc((size_t)(len + 1) * HAN_BYTES);
    numerals->n = output_run(rule, history, len, pool, numerals->readings, numerals->run, &numerals->a_number,
                             &numerals->sign, false);
}

/* Bans each numeral that would make the output's run of numerals no
 * prefix of a reading of an unused source number, once the run is checked
 * (number_rule.h): it holds two characters, or a 十 百 千 万 亿.  A lone
 * 一 .. 九 may begin a run (一起, 第一, 五月), and 点 is free wherever it
 * may be a word.  A run that is a number (output_run) but no whole reading
 * yet must go on (三十 is no reading of 36.5, nor 五 of 512), as a number
 * of digits must: every other token is banned, unless no numeral can go on
 * (no reading begins so, or an earlier rule banned the ones that would).
 * A negative number's reading may begin only after a minus sign: a
 * numeral that would begin one without it (but a lone 一 or 两, words as
 * often) is banned, and its logit offered to the sign (numerals->raise);
 * after a sign, even a lone numeral begins a reading or is banned. */
static void ban_numerals(const NumberRule *rule, const Pool *pool, const Numerals *numerals, float *logits)
{
    const char *readings = numerals->readings;
    char *run = numerals->run;
    size_t n = numerals->n;
    Sign sign = n > 0 ? numerals->sign : numerals->here;
    bool must_go_on = numerals->a_number && reading_of(pool, readings, run, n, true, sign) < 0;
    bool *goes_on = must_go_on ? xcalloc((size_t)rule->target.V, sizeof *goes_on) : NULL;
    int going_on = 0;
    for (int j = 0; j < rule->numeral_count; j++) {
        int id = rule->numeral_ids[j];
        const char *c = rule->numeral[id];
        memcpy(run + n, c, HAN_BYTES);
        bool prefix = reading_of(pool, readings, run, n + HAN_BYTES, false, sign) >= 0;
        /* 点 where no reading goes on with it is a word, never banned; nor
         * a 万 亿 that goes on with digits (284万) */
        bool with_digits = numerals->digits && magnitude_goes_on(rule, pool, numerals->digits, id);
        bool unsigned_negative = !prefix && n == 0 && sign == UNSIGNED && c != POINT && !with_digits &&
                                 !rule->alone_a_word[id] &&
                                 reading_of(pool, readings, run, HAN_BYTES, false, NEGATIVE) >= 0;
        if (unsigned_negative && logits[id] > *numerals->raise) *numerals->raise = logits[id];
        /* right after a sign a lone numeral is a number too (负二 is no word) */
        if (!prefix && c != POINT && !with_digits && (n > 0 || is_magnitude(c) || unsigned_negative || sign != UNSIGNED))
            logits[id] = -INFINITY;
        if (must_go_on && prefix && logits[id] > -INFINITY) {
            goes_on[id] = true;
            going_on++;
        }
    }
    if (going_on > 0)
        for (int id = 0; id < rule->target.V; id++)
            if (!goes_on[id]) logits[id] = -INFINITY;
    free(goes_on);
}

/* ---- English number words (number_words.h) ---------------------------------- */

/* The run of Chinese numerals (and digits among them: 10万) that begins
 * at src[i], if any, into run (as read: 两 as 二, room: its tokens ·
 * (MAX_DIGITS + HAN_BYTES) + 1): returns the index after it (i itself
 * where none begins).  *sure: the run is surely a number, two tokens or
 * more or a 十 百 千 万 亿 (a lone 三 may be a word: 星期三, 三明治);
 * *numerals: it holds a numeral, not only digits.  点 joins a run only
 * before a digit: 三点一四, but 4点半 is 4 and a word. */
static int numeral_run(const NumberRule *rule, const int *src, int S, int i, char *run, bool *sure, bool *numerals)
{
    const Side *s = &rule->source;
    size_t n = 0;
    int first = i;
    bool magnitude = false;
    *numerals = false;
    for (; i < S; i++) {
        const char *c = src[i] >= 0 && src[i] < s->V ? rule->source_numeral[src[i]] : NULL;
        const char *d = digits_of(s, src[i]);
        char sep[2] = {separator_of(s, src[i]), 0};
        if (c == POINT) {
            const char *next = i + 1 < S && src[i + 1] >= 0 && src[i + 1] < s->V ? rule->source_numeral[src[i + 1]] : NULL;
            bool digit_next = i + 1 < S && (digits_of(s, src[i + 1])[0] || (next && next != POINT && !is_magnitude(next)));
            if (n == 0 || !digit_next) break;
        } else if (sep[0]) { /* 2.5万, 1,000万: a point or comma between digit tokens */
            if (!(i > first && digits_of(s, src[i - 1])[0] && i + 1 < S && digits_of(s, src[i + 1])[0])) break;
            d = sep;
        }
        if (!c && !d[0]) break;
        size_t m = c ? HAN_BYTES : strlen(d);
        memcpy(run + n, c ? c : d, m);
        n += m;
        magnitude |= c && is_magnitude(c);
        *numerals |= c != NULL;
    }
    run[n] = '\0';
    *sure = i - first >= 2 || magnitude;
    return i;
}

/* Does a time, hour 点 minutes 分 (七点零五分, 7点05分, 十二点三十分),
 * begin at src[i]?  Returns the index after its 分 and sets *hour and
 * *minute, or returns i.  Without the 分, N点M stays what numeral_run
 * reads (三点一四 is 3.14; 2点20 may be 2.20 or a time, as ever), as
 * with 分钟 (二点五分钟 is 2.5 minutes, no time).
 * *score: its minutes are one figure, 1 to 9, with no 零 before it
 * (七点五分, 7点5分), which says a score as often as a time: 7.5 points
 * (他得了七点五分。) or 7:05. */
static int time_at(const NumberRule *rule, const int *src, int S, int i, int *hour, int *minute, bool *score)
{
    const Side *s = &rule->source;
    enum { PART = 64 }; /* a part is a few numerals or digits: 二十三, 05 */
    int at = i, value[2] = {0, 0};
    for (int part = 0; part < 2; part++) {
        char text[PART + 1], decimals[PART + 1], digits[PART + 1];
        size_t n = 0;
        for (; at < S && src[at] >= 0 && src[at] < s->V; at++) {
            const char *c = rule->source_numeral[src[at]], *d = digits_of(s, src[at]);
            if (c == POINT || (!c && !d[0])) break;
            size_t m = c ? HAN_BYTES : strlen(d);
            if (n + m > PART) return i;
            memcpy(text + n, c ? c : d, m);
            n += m;
        }
        text[n] = '\0';
        bool marked = at < S && src[at] >= 0 && src[at] < s->V &&
                      (part == 0 ? rule->source_numeral[src[at]] == POINT : rule->source_minute_mark[src[at]]);
        uint64_t v;
        if (n == 0 || !marked || !number_words_chinese_value(text, &v, decimals, digits) || decimals[0] ||
            v > (part == 0 ? 24u : 59u))
            return i;
        value[part] = (int)v;
        at++;
        /* 分钟: a duration, 二点五分钟 2.5 minutes (what numeral_run reads) */
        if (part == 1 && at < S && src[at] >= 0 && src[at] < s->V && rule->source_duration_mark[src[at]]) return i;
        if (part == 1) *score = v >= 1 && v <= 9 && (n == 1 || n == HAN_BYTES); /* 5, 五: no 0, 零 */
    }
    *hour = value[0];
    *minute = value[1];
    return at;
}

/* Adds to rs (NULL: none) the English readings of the source's runs of
 * numerals (numeral_run) and returns whether one of them is surely a
 * number; *unread: a run of two tokens or more says no one number (两三,
 * 十七八: this or that). */
static bool source_numeral_words(const NumberRule *rule, const int *src, int S, Readings *rs, bool *unread)
{
    size_t room = (size_t)S * (MAX_DIGITS + HAN_BYTES) + 1;
    char *run = xmalloc(room), *decimals = xmalloc(room), *digits = xmalloc(room);
    bool any_sure = false;
    *unread = false;
    for (int i = 0; i < S;) {
        bool sure, numerals;
        int hour, minute;
        bool score;
        int after_time = time_at(rule, src, S, i, &hour, &minute, &score);
        if (after_time > i) { /* a time: the pool's (add_numeral_numbers), read there */
            any_sure = true;
            i = after_time;
            continue;
        }
        int next = numeral_run(rule, src, S, i, run, &sure, &numerals);
        uint64_t value;
        if (next > i && number_words_chinese_value(run, &value, decimals, digits)) {
            readings_add(rs, value, decimals, -1);
            any_sure |= sure;
        } else if (next > i + 1) {
            *unread = true; /* 两三 "two or three", 十七八: no one number */
        }
        i = next > i ? next : i + 1;
    }
    free(digits);
    free(decimals);
    free(run);
    return any_sure;
}

/* Adds to rs the readings of the pool's numbers (digits as the source
 * wrote them: 2,500, 1.5). */
static void pool_readings(const Pool *pool, Readings *rs)
{
    for (int k = 0; k < pool->count; k++) {
        const char *p = pool->text + pool->start[k];
        uint64_t value = 0;
        char decimals[MAX_DIGITS + 1] = "";
        int i = 0, n = pool->len[k], digits = 0, hour, minute;
        if (memchr(p, ':', (size_t)n)) { /* a time, H:MM (add_numeral_numbers); the next number's text follows */
            char time[8] = "";
            memcpy(time, p, (size_t)(n < 7 ? n : 7));
            if (sscanf(time, "%d:%d", &hour, &minute) == 2) readings_add_time(rs, hour, minute, k);
            continue;
        }
        for (; i < n && p[i] != '.'; i++)
            if (p[i] != ',' && digits++ < 12) value = value * 10 + (uint64_t)(p[i] - '0');
        if (digits > 12) continue;
        int k2 = 0;
        for (i++; i < n && k2 < MAX_DIGITS && p[i] >= '0' && p[i] <= '9'; i++) decimals[k2++] = p[i];
        decimals[k2] = '\0';
        readings_add(rs, value, decimals, k);
    }
}

/* The word that ends at ids[end - 1] (its first piece one that does not
 * continue), if every piece of it may be part of a number word, into word
 * (WORD_ROOM bytes); else false.  *start: where it begins. */
static bool word_ending_at(const Words *w, const int *ids, int end, char *word, int *start)
{
    int i = end;
    while (i > 0 && ids[i - 1] >= 0 && ids[i - 1] < w->V && w->continues[ids[i - 1]]) i--;
    if (i > 0) i--; /* the piece that began the word */
    *start = i;
    size_t n = 0;
    word[0] = '\0';
    for (; i < end; i++) {
        if (ids[i] < 0 || ids[i] >= w->V) return false;
        const char *p = w->piece[ids[i]];
        size_t m = strlen(p);
        if (m == 0 || n + m >= WORD_ROOM) return false;
        memcpy(word + n, p, m + 1);
        n += m;
    }
    return n > 0;
}

/* ---- an English target's runs of number words ---------------------------- */

/* Does a reading of an unused number begin with run[0..n-1] (whole: is
 * one)?  A lone "one" is always whole (the red one). */
static bool run_reads(const Readings *rs, const int *run, int n, bool whole)
{
    if (whole && n == 1 && run[0] == 1) return true;
    for (int r = 0; r < rs->count; r++) {
        const NumberReading *x = &rs->at[r];
        if (rs->used[rs->owner[r]] || x->n < n || (whole && x->n != n)) continue;
        int i = 0;
        while (i < n && x->word[i] == run[i]) i++;
        if (i == n) return true;
    }
    return false;
}

/* Is reading x the words run[0..n-1]? */
static bool reading_is(const NumberReading *x, const int *run, int n)
{
    if (x->n != n) return false;
    for (int i = 0; i < n; i++)
        if (x->word[i] != run[i]) return false;
    return true;
}

/* The first unused number that run[0..n-1] reads whole, or -1; a lone
 * "one" reads none (maybe a pronoun, as a lone 一 may be a word). */
static int run_owner(const Readings *rs, const int *run, int n)
{
    if (n == 0 || (n == 1 && run[0] == 1)) return -1;
    for (int r = 0; r < rs->count; r++)
        if (!rs->used[rs->owner[r]] && reading_is(&rs->at[r], run, n)) return rs->owner[r];
    return -1;
}

/* A run is free to end, or to be followed by a new number, where it is
 * empty or reads a whole number. */
static bool run_free(const Readings *rs, const int *run, int n)
{
    return n == 0 || run_reads(rs, run, n, true);
}

/* The run run[0..n-1] ends: it uses up the number it reads whole. */
static void run_end(Readings *rs, const int *run, int n)
{
    int o = run_owner(rs, run, n);
    if (o >= 0) rs->used[o] = true;
}

/* The number word whose ordinal `word` is (fifth: five), or -1. */
static int ordinal_index(const char *word)
{
    if (!number_words_is_ordinal(word)) return -1;
    for (int k = 0; k < NUMBER_WORDS; k++) {
        bool only[NUMBER_WORDS] = {false};
        only[k] = true;
        if (number_words_ordinal_extends(word, only)) return k; /* no ordinal begins another */
    }
    return -1;
}

/* The run run[0..n-1] (room: n + 1) ends with `word`, no number word: an
 * ordinal that ends a reading with it uses up that number (twenty-first;
 * a lone "fifth" is free), else the run uses up the one it reads. */
static void run_end_with(Readings *rs, int *run, int n, const char *word)
{
    int k = n > 0 ? ordinal_index(word) : -1;
    if (k >= 0) {
        run[n] = k;
        if (run_owner(rs, run, n + 1) >= 0) n++;
    }
    run_end(rs, run, n);
}

/* Marks in next[READING_WORDS] the words that may follow run[0..n-1]: the
 * next word of every reading of an unused number it begins, and the first
 * word of every such reading where it is free (a new number may begin),
 * but the number it reads whole: a new run ends it, and it is used up. */
static void next_words(const Readings *rs, const int *run, int n, bool *next)
{
    memset(next, 0, READING_WORDS * sizeof *next);
    bool fresh = run_free(rs, run, n);
    int ending = fresh ? run_owner(rs, run, n) : -1;
    for (int r = 0; r < rs->count; r++) {
        const NumberReading *x = &rs->at[r];
        if (rs->used[rs->owner[r]]) continue;
        if (fresh && x->n > 0 && rs->owner[r] != ending) next[x->word[0]] = true;
        if (x->n <= n) continue;
        int i = 0;
        while (i < n && x->word[i] == run[i]) i++;
        if (i == n) next[x->word[n]] = true;
    }
}

/* Marks in ends[NUMBER_WORDS] the words of next[] that, after run[0..n-1]
 * (room: n + 1), read a whole number: those whose ordinal may end it.
 * None after a "point": no ordinal ends a decimal (three point fifth). */
static void ending_words(const Readings *rs, int *run, int n, const bool *next, bool *ends)
{
    bool decimal = false;
    for (int i = 0; i < n; i++) decimal |= run[i] == NUMBER_WORD_POINT;
    for (int k = 0; k < NUMBER_WORDS; k++) {
        run[n] = k;
        ends[k] = !decimal && next[k] && run_reads(rs, run, n + 1, true);
    }
}

/* The run after number word k: run[0..*n-1] and k where a reading begins
 * so; else the run ends (using up the number it reads) and k alone
 * begins the next, where the run was free to end and a reading of an
 * unused number begins with k; else none (a word that came in free, a
 * lone "one", holds nothing after it). */
static void run_step(Readings *rs, int *run, int *n, int k)
{
    run[*n] = k;
    if (run_reads(rs, run, *n + 1, false)) {
        (*n)++;
        return;
    }
    bool fresh = run_free(rs, run, *n);
    run_end(rs, run, *n);
    run[0] = k;
    *n = fresh && run_reads(rs, run, 1, false) ? 1 : 0;
}

/* Reads the output's words history[0..end-1] as the ban below let them be
 * written, from the first: a run of number words (joiners between them:
 * twenty - five) goes on while a reading of an unused number does, and
 * ends, using up the number it reads whole, where a word that is neither
 * follows or a number word begins a new run.  Returns the length of the
 * run still open at `end`, left in run (room: end words). */
static int words_read(const Words *w, Readings *rs, const int *history, int end, int *run)
{
    char word[WORD_ROOM];
    int n = 0;
    for (int i = 0, start; i < end;) {
        int next = i + 1;
        while (next < end && history[next] >= 0 && history[next] < w->V && w->continues[history[next]]) next++;
        bool known = word_ending_at(w, history, next, word, &start) && start == i;
        int k = known ? reading_word(word) : -1;
        if (k >= 0) {
            run_step(rs, run, &n, k);
        } else if (!(known && is_joiner(word))) {
            if (known) run_end_with(rs, run, n, word);
            else run_end(rs, run, n);
            n = 0;
        }
        i = next;
    }
    return n;
}

/* Is `word` a plural that may not stand where it would, after a run of
 * `before` words (ends: ending_words)?  A plural of thousand .. billion
 * must end the run ("thousands" for 1,000, never "a thousands of two
 * hundred" for 1,200); tens and hundreds may only begin one, to go on
 * with "of" (tens of thousands, never "two hundreds of fifty"). */
static bool vague_plural(const char *word, const bool *ends, int before)
{
    int k = number_words_index(word);
    if (!number_words_plural(word)) return false;
    return k > number_words_index("hundred") ? !ends[k] : before > 0;
}

/* English target: holds the output's number words to the readings of the
 * source's numbers (number_rule.h), in order: a run of number words
 * (joiners between them) may only go on as a reading of one goes on
 * ("five thousand" is no reading of 三万五千, nor "twenty" of 十二), and
 * ends only where it reads a whole one ("thirty" for 三万五千 may not end),
 * or with an ordinal that does (twenty-first for 21).  A piece may begin
 * or continue a word only toward a word that may come next (six for
 * sixty); where the output's word is a number word that may not come
 * there, only a piece that continues it toward one may follow, unless
 * none can.  "one" is free (the red one) but where a run must go on. */
static void ban_number_words(const NumberRule *rule, Readings *rs, const int *history, int len, float *logits)
{
    const Words *w = &rule->target_words;
    char word[WORD_ROOM] = "", with[2 * WORD_ROOM];
    int start = len;
    bool in_word = len > 0 && word_ending_at(w, history, len, word, &start);
    int index = in_word ? number_words_index(word) : -1;
    /* the run before the output's last word, and after it where it ends
     * there (its next piece begins a word); the runs that ended before
     * have used up their numbers */
    int *run = xmalloc(((size_t)len + 1) * sizeof *run);
    int n = words_read(w, rs, history, in_word ? start : len, run);
    if (!in_word) n = 0; /* the last word, no number word, ended the run */
    int after = n;
    bool allowed[READING_WORDS], allowed_next[READING_WORDS];
    next_words(rs, run, n, allowed);
    /* a word begun inside a run that must go on ("four hu" of 455) */
    bool partial = in_word && index < 0 && !is_joiner(word) && !number_words_is_ordinal(word) &&
                   !run_free(rs, run, n) && number_words_extends(word, allowed);
    /* the words whose ordinal ends the run where the last word stands
     * (fourth for 4, not for 455) and after it (twenty-first) */
    bool ends_here[NUMBER_WORDS], ends_next[NUMBER_WORDS];
    ending_words(rs, run, n, allowed, ends_here);
    bool point = in_word && is_point(word);
    if (index >= 0 || point) {
        run_step(rs, run, &after, point ? NUMBER_WORD_POINT : index);
    } else if (!(in_word && is_joiner(word))) {
        if (!number_words_extends(word, NULL)) run_end_with(rs, run, n, word); /* no "si" that may become six */
        after = 0;
    }
    next_words(rs, run, after, allowed_next);
    bool may_end = run_free(rs, run, after);
    ending_words(rs, run, after, allowed_next, ends_next);
    free(run);
    /* where the run must go on, the words that go on with it (not "one"
     * unless a reading goes on with one) */
    bool going[READING_WORDS];
    memcpy(going, allowed_next, sizeof going);
    allowed[1] = allowed_next[1] = true; /* else "one" is free (the red one), but for a run that must go on */
    /* The word must go on where, piece by piece, it was a number word no
     * source number says (nine beside 2,019,001) and is not one that a
     * source number says yet, though it can still become one (nineteen):
     * "ninet" may not end either. */
    bool was_disallowed = false;
    char prefix[WORD_ROOM] = "";
    for (int i = start; in_word && i < len; i++) {
        strcat(prefix, w->piece[history[i]]); /* fits: word_ending_at checked the whole */
        int k = number_words_index(prefix);
        was_disallowed |= k >= 0 && !allowed[k];
    }
    bool must_go_on = was_disallowed && !(index >= 0 && allowed[index]) && number_words_extends(word, allowed);
    bool *goes_on = must_go_on ? xcalloc((size_t)w->V, sizeof *goes_on) : NULL;
    int going_on = 0;
    /* A word that begins as a number word that may not come next (twenty
     * for 十二), unless one that may goes on from it (six for sixty). */
    for (int j = 0; j < w->whole_count; j++) {
        int id = w->whole_ids[j], k = number_words_index(w->piece[id]);
        if (!allowed_next[k] && !number_words_extends(w->piece[id], allowed_next)) logits[id] = -INFINITY;
        if (vague_plural(w->piece[id], ends_next, after)) logits[id] = -INFINITY;
    }
    /* A piece that would make the word so far such a word; only where the
     * word so far may still become a number word at all (most words may
     * not: a few hundred pieces need not be tried at every step). */
    for (int j = 0; in_word && number_words_extends(word, NULL) && j < w->cont_count; j++) {
        int id = w->cont_ids[j];
        snprintf(with, sizeof with, "%s%s", word, w->piece[id]);
        int k = number_words_index(with);
        bool toward = number_words_extends(with, allowed);
        if ((k >= 0 && !allowed[k] && !toward) || vague_plural(with, ends_here, n)) logits[id] = -INFINITY;
        /* where it must go on: only toward an allowed word (seven: ##ty for seventy, not ##s) */
        if (must_go_on && ((k >= 0 && allowed[k]) || toward) && logits[id] > -INFINITY) {
            goes_on[id] = true;
            going_on++;
        }
    }
    if (going_on > 0)
        for (int id = 0; id < w->V; id++)
            if (!goes_on[id]) logits[id] = -INFINITY;
    free(goes_on);
    /* A run that reads no whole number yet goes on ("thirty" of 三万五千
     * may not end): its last number word may only go on toward one that
     * may stand there (not seventy##boards), and a new word may only be a
     * number word that goes on with the run, or begin one or its ordinal
     * (twenty - first), or one joiner; unless none of those is left. */
    if ((may_end && !partial) || going_on > 0) return;
    bool *goes = xcalloc((size_t)w->V, sizeof *goes);
    bool after_joiner = in_word && (is_joiner(word) || point);
    /* a joiner only where a number word may follow it: "three-" for 3.5
     * (only "point" goes on) let any word follow */
    bool word_next = false;
    for (int k = 0; k < NUMBER_WORDS; k++) word_next |= going[k];
    int left = 0;
    for (int id = 0; id < w->V; id++) {
        const char *p = w->piece[id];
        if (!p[0]) continue;
        if (w->continues[id]) {
            if (index < 0 && !partial) continue; /* after a joiner: no piece goes on with it */
            snprintf(with, sizeof with, "%s%s", word, p);
            int k = number_words_index(with);
            goes[id] = (k >= 0 && allowed[k] && !vague_plural(with, ends_here, n)) ||
                       number_words_extends(with, allowed) || number_words_ordinal_extends(with, ends_here);
        } else if (!partial) {
            int k = number_words_index(p);
            /* "and" only after a hundred .. billion, "of" after a plural:
             * two hundred and five, tens of thousands; never eighty and
             * four, eighty of four */
            bool joins = is_joiner(p) && !after_joiner && word_next &&
                         (strcmp(p, "of") != 0 || (number_words_plural(word) && index <= number_words_index("hundred"))) &&
                         (strcmp(p, "and") != 0 || index >= number_words_index("hundred"));
            /* "point" where a reading has it next (three point five for 3.5) */
            bool decimal_point = is_point(p) && !after_joiner && going[NUMBER_WORD_POINT];
            goes[id] = joins || decimal_point || (k >= 0 && going[k] && !vague_plural(p, ends_next, after)) ||
                       number_words_extends(p, going) || number_words_ordinal_extends(p, ends_next);
        }
        left += goes[id] && logits[id] > -INFINITY;
    }
    if (left > 0)
        for (int id = 0; id < w->V; id++)
            if (!goes[id]) logits[id] = -INFINITY;
    free(goes);
}

/* Adds a number of `value` (and `decimals`, "" for none) to the pool, as
 * its digits, with thousands commas from 10,000 (10万: 100,000), or as
 * `as_written` where that is not "". */
static void pool_add(Pool *pool, uint64_t value, const char *decimals, const char *as_written)
{
    char digits[32], *text = pool->text + pool->text_used;
    int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)value), k = 0;
    if (as_written[0]) { /* a code read digit by digit: 二零一九零零一 is 2019001, not 2,019,001 */
        n = (int)strlen(as_written);
        memcpy(text, as_written, (size_t)n);
        k = n;
    }
    for (int j = 0; j < n && !as_written[0]; j++) {
        if (value >= 10000 && j > 0 && (n - j) % 3 == 0) text[k++] = ',';
        text[k++] = digits[j];
    }
    if (decimals[0]) k += sprintf(text + k, ".%s", decimals);
    pool->start[pool->count] = pool->text_used;
    pool->len[pool->count] = k;
    pool->src_from[pool->count] = pool->src_to[pool->count] = pool->twin[pool->count] = -1;
    pool->negative[pool->count] = false;
    pool->used[pool->count++] = false;
    pool->text_used += k;
}

/* Takes number k out of the pool: a digit number that was only part of a
 * larger one (the 40 of "40 million", the 10 of 10万). */
static void pool_remove(Pool *pool, int k)
{
    for (int j = k; j + 1 < pool->count; j++) {
        pool->start[j] = pool->start[j + 1];
        pool->len[j] = pool->len[j + 1];
        pool->src_from[j] = pool->src_from[j + 1];
        pool->src_to[j] = pool->src_to[j + 1];
        pool->twin[j] = pool->twin[j + 1];
        pool->used[j] = pool->used[j + 1];
        pool->negative[j] = pool->negative[j + 1];
    }
    pool->count--;
    for (int j = 0; j < pool->count; j++)
        if (pool->twin[j] > k) pool->twin[j]--;
    if (k < pool->in_digits) pool->in_digits--;
}

/* The digit number of the source that ends right before src[end] (its
 * last token src[end - 1]), or -1. */
static int digit_number_ending_at(const Pool *pool, int end)
{
    for (int k = 0; k < pool->count; k++)
        if (pool->src_from[k] >= 0 && pool->src_to[k] == end) return k;
    return -1;
}

/* Number k's value (its commas skipped: 1.5, 2,500) as num / den; false
 * for more than 12 digits or a second point (1.2.3). */
static bool pool_value(const Pool *pool, int k, uint64_t *num, uint64_t *den)
{
    const char *p = pool->text + pool->start[k];
    int digits = 0;
    bool point = false;
    *num = 0;
    *den = 1;
    for (int i = 0; i < pool->len[k]; i++) {
        if (p[i] == ',') continue;
        if (p[i] == '.') {
            if (point) return false;
            point = true;
            continue;
        }
        if (++digits > 12) return false;
        *num = *num * 10 + (uint64_t)(p[i] - '0');
        if (point) *den *= 10;
    }
    return true;
}

/* Adds `value` to `pool` (NULL: only counts it); returns 1. */
static int add_value(Pool *pool, uint64_t value)
{
    if (pool) pool_add(pool, value, "", "");
    return 1;
}

/* Rewrites digit number k as `value` in digits and the largest of 万 亿
 * it holds (2.84 million: 284万; 8.2 billion: 82亿; 12.5亿), as Chinese
 * writes a large number; false (k untouched) below 10,000. */
static bool pool_rewrite_with_magnitude(Pool *pool, int k, uint64_t value)
{
    uint64_t unit = value >= 100000000u ? 100000000u : value >= 10000u ? 10000u : 0;
    if (!unit) return false;
    char *text = pool->text + pool->text_used;
    int n = sprintf(text, "%llu", (unsigned long long)(value / unit));
    if (value % unit) { /* the rest as decimals, without trailing zeros */
        n += sprintf(text + n, ".%0*llu", unit == 10000u ? 4 : 8, (unsigned long long)(value % unit));
        while (text[n - 1] == '0') n--;
    }
    memcpy(text + n, MAGNITUDES + (unit == 10000u ? 3 : 4) * HAN_BYTES, HAN_BYTES); /* 万 亿 */
    n += HAN_BYTES;
    pool->start[k] = pool->text_used;
    pool->len[k] = n;
    pool->src_from[k] = pool->src_to[k] = -1;
    pool->text_used += n;
    return true;
}

/* Adds the value of the run of number words words[0..n-1] to `pool`
 * (NULL: only counts it) and returns 1, or 0 where the run says none; a
 * run of scale words right after a digit number multiplies it and takes
 * its place (1.5 billion: 1,500,000,000, 十五亿; "40 million" is
 * 40,000,000, 四千万, never a 40: the digits alone would say 40 dollars). */
static int add_words_value(Pool *pool, const int *words, int n, int first, bool digit_forms)
{
    uint64_t value, num, den;
    if (n == 0 || !number_words_english_value(words, n, &value)) return 0;
    bool scales = true;
    for (int i = 0; i < n; i++) scales &= words[i] >= number_words_index("hundred");
    int k = scales && pool ? digit_number_ending_at(pool, first) : -1;
    if (k >= 0 && pool_value(pool, k, &num, &den)) {
        if (!(value <= 1000000000000u / (num ? num : 1) && num * value % den == 0 && num * value / den < 1000000000000u))
            return 0;
        value = num * value / den;
        /* for a Chinese target, written in digits and 万 亿 too (284万,
         * the number's twin); else the digits leave */
        if (digit_forms && pool_rewrite_with_magnitude(pool, k, value)) {
            pool->twin[k] = pool->count;
            add_value(pool, value);
            pool->twin[pool->count - 1] = k;
            pool->negative[pool->count - 1] = pool->negative[k]; /* -2.84 million: -284万 */
            return 1;
        }
        pool_remove(pool, k);
    } else if (n == 1 && words[0] == 1) {
        return 0; /* a lone "one" is a pronoun as often (the red one), and its 一 is free anyway */
    }
    return add_value(pool, value);
}

/* English source: adds to `pool` (NULL: only counts them) the value of
 * each run of number words (three; twenty - five; two hundred and five;
 * words that make no one cardinal are two runs: twenty | thirty, and
 * nineteen | ninety also the year 1990) and returns how many.  They hold the numerals as digit numbers do
 * ("seventy minutes" 七十分钟, no longer 七分钟), and beside a digit number
 * the numerals that say them stay free: "Three boys ate 30 apples." keeps
 * its 三个男孩 where 三 would otherwise have to go on to 三十, "ten o'clock
 * and 2 eggs" its 十点.  In numerals only: they are not the source's
 * digits (a "3" for "three" stays banned). */
static int add_word_numbers(const NumberRule *rule, const int *src, int S, Pool *pool)
{
    const Words *w = &rule->source_words;
    int *words = xmalloc((size_t)S * sizeof *words), n = 0, first = 0, added = 0;
    bool vague = false; /* thousands of, tens of thousands: no one number */
    int year = -1;      /* nineteen ninety: the first half's 19, where the run is a year's second half */
    int hundred = number_words_index("hundred");
    char word[WORD_ROOM];
    for (int i = 0, end; i <= S; i = end) {
        int k = -1;
        bool known = false;
        end = i + 1;
        if (i < S) { /* the word src[i..end-1]: a piece and those that continue it */
            while (end < S && src[end] >= 0 && src[end] < w->V && w->continues[src[end]]) end++;
            int start;
            known = word_ending_at(w, src, end, word, &start) && start == i;
            k = known ? number_words_index(word) : -1;
        }
        if (k >= 0 && (n == 0 || number_words_may_follow(words[n - 1], k))) {
            if (n == 0) first = i;
            words[n++] = k;
            vague |= number_words_plural(word);
            continue;
        }
        /* twenty - five; two hundred and five (never "twenty and thirty") */
        if (n > 0 && known && (strcmp(word, "-") == 0 || (strcmp(word, "and") == 0 && words[n - 1] >= hundred)))
            continue;
        /* the run ends here: its number, and a year's where it is the
         * second half of one (nineteen | ninety) */
        uint64_t value;
        bool two_digits = n > 0 && number_words_english_value(words, n, &value) && value >= 10 && value < 100;
        if (!vague) added += add_words_value(pool, words, n, first, rule->numeral_count > 0);
        if (!vague && year >= 0 && two_digits) added += add_value(pool, (uint64_t)year * 100 + value);
        /* a run that a number word ends (nineteen | ninety) may be a year's first half */
        year = k >= 0 && two_digits && value > 10 && k >= 10 && k < hundred ? (int)value : -1;
        n = 0;
        vague = false;
        if (k >= 0) { /* it begins the next run */
            first = i;
            words[n++] = k;
            vague = number_words_plural(word);
        }
    }
    free(words);
    return added;
}

/* Does src[from..to-1] hold a 十 百 千 万 亿? */
static bool holds_magnitude(const NumberRule *rule, const int *src, int from, int to)
{
    for (int i = from; i < to; i++)
        if (src[i] >= 0 && src[i] < rule->source.V && rule->source_numeral[src[i]] &&
            is_magnitude(rule->source_numeral[src[i]]))
            return true;
    return false;
}

/* Takes out of the pool the source's digit numbers within src[from..to-1]:
 * only part of a larger number there (10万, 7点05分). */
static void remove_digits_within(Pool *pool, int from, int to)
{
    for (int k = pool->count - 1; k >= 0; k--)
        if (pool->src_from[k] >= from && pool->src_to[k] <= to) pool_remove(pool, k);
}

/* Chinese source, English target: adds to the pool each run of the
 * source's numerals (and digits) that is surely a number and holds a
 * numeral (numeral_run), as the digits of its value: the output may write
 * 十五 as 15 and no other number (12 for 十二, never 20).  The digits of a
 * run with a magnitude are only part of its number, and leave the pool:
 * 10万 is 100,000, never a 10 ("There are ten" for 10万人), 4万7千 47,000,
 * never a 4 and a 7.  (Digits around a 点 stay: 3点5 may be 3.5 or 3:05.) */
static void add_numeral_numbers(const NumberRule *rule, const int *src, int S, Pool *pool)
{
    size_t room = (size_t)S * (MAX_DIGITS + HAN_BYTES) + 1;
    char *run = xmalloc(room), *decimals = xmalloc(room), *digits = xmalloc(room);
    for (int i = 0; i < S;) {
        bool sure, numerals;
        int hour, minute;
        bool score;
        int after_time = time_at(rule, src, S, i, &hour, &minute, &score);
        if (after_time > i) { /* one number, H:MM; its digits (7点05分) only part of it */
            char time[16];
            snprintf(time, sizeof time, "%d:%02d", hour, minute);
            remove_digits_within(pool, i, after_time);
            pool_add(pool, 0, "", time);
            if (score) { /* 七点五分: or 7.5 (points), the same number written another way */
                char tenths[2] = {(char)('0' + minute), '\0'};
                int t = pool->count - 1;
                pool_add(pool, (uint64_t)hour, tenths, "");
                pool->twin[t] = pool->count - 1;
                pool->twin[pool->count - 1] = t;
            }
            i = after_time;
            continue;
        }
        int next = numeral_run(rule, src, S, i, run, &sure, &numerals);
        uint64_t value;
        if (next > i && sure && numerals && number_words_chinese_value(run, &value, decimals, digits)) {
            if (holds_magnitude(rule, src, i, next)) remove_digits_within(pool, i, next);
            pool_add(pool, value, decimals, digits);
        }
        i = next > i ? next : i + 1;
    }
    free(digits);
    free(decimals);
    free(run);
}

/* The digit rule (number_rule.h) for a source with numbers in `pool`,
 * out_text room for the output's digits; and, for a Chinese target, its
 * numerals. */
static void ban_digits(const NumberRule *rule, Pool *pool, const int *history, int len, char *out_text, float *logits)
{
    const Side *tgt = &rule->target;
    /* The numerals first: a number the output wrote in numerals is used up
     * for its digits too (五十人付了50美元 wrote 50 twice); a lone numeral,
     * maybe a word, after them (output_run). */
    Numerals numerals = {0};
    if (rule->numeral_count > 0) numerals_read(rule, pool, history, len, &numerals);
    Output o = output_numbers(rule, history, len, pool, out_text);
    /* Where the number being written may end: it reads a whole unused
     * source number (after a separator: without it, the separator then
     * punctuation). */
    int end_n = o.place == AFTER_SEPARATOR ? o.n - 1 : o.n;
    int complete = o.place == OUTSIDE ? -1 : unused_equal(pool, o.p, end_n, o.sign);
    bool may_end = o.place == OUTSIDE || complete >= 0;
    int allowed = 0;
    /* A number begun now begins after a minus sign or not; one that would
     * write a negative number without it is banned, and the highest logit
     * of those goes to the sign (负) instead: where the model would begin
     * -10 as 10 or 十, it writes 负 first (number_rule.h). */
    Sign here = signed_at(rule, pool, history, len);
    float raise = -INFINITY;
    /* Digit tokens: continue the number, or (where it may end) begin a new one. */
    for (int j = 0; j < tgt->count; j++) {
        int id = tgt->ids[j];
        const char *d = tgt->digits[id];
        int m = (int)strlen(d);
        bool ok = false;
        if ((o.place == IN_DIGITS && tgt->continues[id]) || o.place == AFTER_SEPARATOR) {
            memcpy(o.p + o.n, d, (size_t)m); /* room: the token after the last */
            ok = unused_prefix(pool, o.p, o.n + m, -1, o.sign);
        }
        if (!ok && !(o.place == IN_DIGITS && tgt->continues[id])) {
            ok = may_end && unused_prefix(pool, d, m, complete, here);
            if (!ok && may_end && here == UNSIGNED && unused_prefix(pool, d, m, complete, NEGATIVE) && logits[id] > raise)
                raise = logits[id];
        }
        if (!ok) logits[id] = -INFINITY;
        else if (logits[id] > -INFINITY) allowed++; /* not banned by a rule before this one either */
    }
    /* Separators: continue the number where a source number goes on with
     * one ("1." of 1.5), or follow it as punctuation where it may end. */
    for (int j = 0; j < tgt->sep_count; j++) {
        int id = tgt->sep_ids[j];
        bool continues = o.place == IN_DIGITS &&
                         (o.p[o.n] = tgt->separator[id], unused_prefix(pool, o.p, o.n + 1, -1, o.sign));
        if (continues && logits[id] > -INFINITY) allowed++;
        if (!continues && !may_end) logits[id] = -INFINITY;
    }
    /* 万 and 亿: continue the number where a source number goes on so (284万) */
    for (int j = 0; j < rule->numeral_count; j++)
        allowed += magnitude_goes_on(rule, pool, &o, rule->numeral_ids[j]) && logits[rule->numeral_ids[j]] > -INFINITY;
    /* Every other token ends the number: only as a whole source number,
     * unless no digit or separator can go on, here or by an earlier rule
     * (number_rule.h). */
    if (!may_end && allowed > 0)
        for (int id = 0; id < tgt->V; id++)
            if (!tgt->digits[id][0] && !tgt->separator[id] && !magnitude_goes_on(rule, pool, &o, id))
                logits[id] = -INFINITY;
    /* Chinese numerals: only with a source number's value. */
    if (rule->numeral_count > 0) {
        /* the lone numerals' uses, after the digits' */
        numerals.n = output_run(rule, history, len, pool, numerals.readings, numerals.run, &numerals.a_number,
                                &numerals.sign, true);
        numerals.digits = &o;
        numerals.here = here;
        numerals.raise = &raise;
        ban_numerals(rule, pool, &numerals, logits);
    }
    int sign = rule->sign_id;
    if (sign >= 0 && raise > logits[sign] && logits[sign] > -INFINITY) logits[sign] = raise;
    free(numerals.run);
    free(numerals.readings);
    /* for the number words after this: a word ends the number being
     * written, so it uses up the source number it reads (105 then "one
     * hundred and five" is 105 twice) */
    if (complete >= 0) pool_use(pool, complete);
}

/* For an English target: the readings of the source's numbers, in digits
 * (pool) or Chinese numerals, each its number's (Readings), into rs (free
 * with readings_free); false where the source's words are not ours to
 * hold: "this or that" (两三). */
static bool source_readings(const NumberRule *rule, const int *src, int S, const Pool *pool, Readings *rs)
{
    rs->owners = rs->pool_owners = pool->count;
    rs->taken = xcalloc((size_t)pool->count + 1, sizeof *rs->taken);
    rs->used = xcalloc((size_t)pool->count + (size_t)S + 1, sizeof *rs->used); /* one number a run at most */
    pool_readings(pool, rs);
    bool unread = false;
    if (rule->source_numeral_count > 0) source_numeral_words(rule, src, S, rs, &unread); /* the lone ones too */
    return !unread;
}

static void readings_free(Readings *rs)
{
    free(rs->at);
    free(rs->owner);
    free(rs->used);
    free(rs->taken);
}

/* The numbers the output's words have used up, as a digit written next
 * would find them: that digit ends the run the output is in too ("one
 * hundred and five" then 105 is 105 twice).  Marks them used in the pool
 * and in by_words[pool->count], and leaves rs as it was (ban_number_words
 * reads the words again, after the digits). */
static void words_use_pool(const NumberRule *rule, Readings *rs, Pool *pool, const int *history, int len,
                           bool *by_words)
{
    int *run = xmalloc(((size_t)len + 1) * sizeof *run);
    run_end(rs, run, words_read(&rule->target_words, rs, history, len, run));
    for (int k = 0; k < pool->count; k++)
        if (rs->used[k]) pool_use(pool, k);
    memcpy(by_words, pool->used, (size_t)pool->count * sizeof *by_words);
    memset(rs->used, 0, (size_t)rs->owners * sizeof *rs->used);
    free(run);
}

void number_rule_ban(const NumberRule *rule, const int *src, const bool *spaced, int S, const int *history,
                     int len, float *logits)
{
    const Side *tgt = &rule->target;
    if (S < 1) return;
    /* Everything is worked out again from the source and the output at
     * every step, for every hypothesis: no state to carry, reorder or get
     * wrong between greedy, beam and batched decoding, for a few hundred
     * bytes of parsing next to a decoder step's millions of products.
     * Room for every token's digits or separator on either side, plus one
     * token more; and for the source's numbers, one a token and a year's
     * (nineteen | ninety: 19, 90 and 1990) one more for two tokens. */
    int most = (S > len ? S : len) + 1, numbers = 2 * most;
    size_t room = (size_t)most * (MAX_DIGITS + 1);
    char *src_text = xmalloc((size_t)numbers * (MAX_DIGITS + 1)), *out_text = xmalloc(room + MAX_DIGITS + 1);
    int *offsets = xmalloc((size_t)numbers * 5 * sizeof *offsets);
    bool *used = xcalloc((size_t)numbers, sizeof *used), *negative = xcalloc((size_t)numbers, sizeof *negative);
    Pool pool = {src_text, offsets, offsets + numbers, offsets + 2 * numbers, offsets + 3 * numbers,
                 offsets + 4 * numbers, 0, used, 0, 0, negative, false};
    /* Signs are read where the rule can write one (a target's 负) */
    source_numbers(&rule->source, rule->sign_id >= 0 ? rule->source_minus : NULL, src, spaced, S, &pool);
    for (int k = 0; k < pool.count; k++) pool.any_negative |= pool.negative[k];
    if (rule->target_words.count > 0 && rule->source_numeral_count > 0) add_numeral_numbers(rule, src, S, &pool);
    pool.in_digits = pool.count;
    if (rule->source_words.count > 0) add_word_numbers(rule, src, S, &pool);
    /* For an English target, its number words and digits use up the same
     * numbers: the words before the digits, the digits (the number they
     * are writing too) before the ban on words. */
    Readings rs = {0};
    bool words = rule->target_words.count > 0 && pool.count > 0 && source_readings(rule, src, S, &pool, &rs);
    bool *by_words = words ? xcalloc((size_t)pool.count, sizeof *by_words) : NULL;
    if (words) words_use_pool(rule, &rs, &pool, history, len, by_words);
    if (pool.count > 0 && tgt->count > 0) ban_digits(rule, &pool, history, len, out_text, logits);
    if (words) {
        for (int k = 0; k < pool.count; k++) rs.used[k] = pool.used[k] && !by_words[k];
        ban_number_words(rule, &rs, history, len, logits);
    }
    free(by_words);
    readings_free(&rs);
    free(used);
    free(negative);
    free(offsets);
    free(out_text);
    free(src_text);
}
