/* fuzz_numbers.c — decoding's copy_numbers rule (model/number_rule.h) on
 * any source, any output so far and any number to read.
 *
 * The rule runs on every step of every translation, on ids the user's text
 * chose, and its Chinese readings fill a fixed buffer (one read out of
 * bounds was found by review, not by a test: `1.2.3`).  What must hold:
 *   - whatever the source and the output so far, and whichever digit and
 *     separator tokens an earlier rule (no-repeat) banned first, a step
 *     keeps at least one token (the rule's promise: "some token is always
 *     left"), so greedy and beam search always have something to choose;
 *     what was banned stays banned, and a source without a number bans
 *     nothing more (the one logit the rule raises, a minus sign's, takes
 *     the highest logit it banned: with every logit 0 it stays 0);
 *   - number_rule_readings of any string of digits, points and commas
 *     fits its buffer, says as many readings as it writes, and writes
 *     only numerals and 点 (二 and 零, never 两 and 〇).
 * Two rules, as the translator makes them: English to Chinese (the
 * source's English pieces read for number words, the target's numerals
 * held to readings) and Chinese to English (the source's numerals read as
 * numbers, the target's English pieces held to their words: number_words.h).
 * The vocabularies are small and made here, the same on both sides: pieces
 * of one and several digits, starting a word or continuing one, both
 * separators, pieces of English number words, their plurals, ordinals and
 * joiners, a few other words, and every numeral.  The input's bytes choose the rule, the source's ids and
 * which came after a space, the output's ids, the tokens banned before the
 * rule, and the number to read. */
#include "fuzz.h"

#include <math.h>
#include <stdbool.h>

#include "../../model/number_rule.h"

typedef struct {
    const char *text;
    bool continues;
} Piece;

/* Both sides: these, then the numerals below. */
static const Piece PIECES[] = {
    {"the", false},   {"x", false},     {"0", false},    {"1", false},     {"2", false},    {"3", false},
    {"5", false},     {"9", false},     {"12", false},   {"1990", false},  {"0", true},     {"1", true},
    {"2", true},      {"5", true},      {"9", true},     {"00", true},     {"25", true},    {"000", true},
    {".", false},     {",", false},     {"元", false},   {"one", false},   {"two", false},  {"six", false},
    {"ten", false},   {"twelve", false}, {"twenty", false}, {"thousand", false}, {"hundred", false},
    {"-", false},     {"and", false},   {"ty", true},    {"teen", true},   {"s", true},     {"nis", true},
    {"of", false},    {"first", false}, {"second", false}, {"thousands", false}, {"th", true}, {"ieth", true},
    {":", false},     {"分", false},     {"负", false},   {"下", false},     {"钟", false},
};
enum { N_PIECES = sizeof PIECES / sizeof *PIECES };
static const char *const NUMERALS[] = {"零", "〇", "一", "二", "两", "三", "四", "五", "六", "七",
                                       "八", "九", "十", "百", "千", "万", "亿", "点"};
enum { N_NUMERALS = sizeof NUMERALS / sizeof *NUMERALS, VOCAB = N_PIECES + N_NUMERALS, TGT_VOCAB = VOCAB };
enum { MAX_SOURCE = 24, MAX_OUTPUT = 24, MAX_NUMBER = 64 };

/* As app/translator.c tells the rule about its vocabularies. */
static NumberRule *make_rule(bool chinese_target)
{
    NumberRule *rule = number_rule_new(VOCAB, VOCAB);
    for (int id = 0; id < N_PIECES; id++) {
        const Piece *p = &PIECES[id];
        bool separator = number_rule_is_separator(p->text) && !p->continues;
        bool time_separator = number_rule_is_time_separator(p->text) && !p->continues; /* the target's only */
        (chinese_target ? number_rule_set_source_piece : number_rule_set_target_piece)(rule, id, p->text,
                                                                                      p->continues);
        if (!chinese_target && number_rule_is_minute_mark(p->text)) number_rule_set_source_minute_mark(rule, id);
        if (!chinese_target && number_rule_is_duration_mark(p->text)) number_rule_set_source_duration_mark(rule, id);
        if (time_separator) number_rule_set_target(rule, id, p->text, p->continues);
        if (chinese_target && !p->continues && number_rule_is_sign(p->text)) { /* -10 read, 负 written */
            number_rule_set_source_sign(rule, id, p->text);
            number_rule_set_target_sign(rule, id, p->text);
        }
        if (!number_rule_is_digits(p->text) && !separator) continue;
        number_rule_set_source(rule, id, p->text, p->continues);
        number_rule_set_target(rule, id, p->text, p->continues);
    }
    for (int i = 0; i < N_NUMERALS; i++) {
        FUZZ_CHECK(number_rule_is_numeral(NUMERALS[i]));
        if (chinese_target) {
            number_rule_set_numeral(rule, N_PIECES + i, NUMERALS[i]);
            number_rule_set_source_piece(rule, N_PIECES + i, NUMERALS[i], false);
        } else {
            number_rule_set_source_numeral(rule, N_PIECES + i, NUMERALS[i]);
            number_rule_set_target_piece(rule, N_PIECES + i, NUMERALS[i], false);
        }
    }
    return rule;
}

/* A reading's characters are numerals (3 bytes each, 点 among them), with
 * every 2 written 二 and every 0 零 (number_rule.h). */
static bool only_numerals(const char *reading, size_t n)
{
    if (n == 0 || n % 3) return false;
    for (size_t i = 0; i < n; i += 3) {
        char c[4] = {reading[i], reading[i + 1], reading[i + 2], 0};
        if (!number_rule_is_numeral(c) || strcmp(c, "两") == 0 || strcmp(c, "〇") == 0) return false;
    }
    return true;
}

static void check_readings(const uint8_t *data, size_t size)
{
    static const char ALPHABET[] = "0123456789.,";
    char number[MAX_NUMBER];
    int n = (int)(size < MAX_NUMBER ? size : MAX_NUMBER);
    for (int i = 0; i < n; i++) number[i] = ALPHABET[data[i] % (sizeof ALPHABET - 1)];
    char out[NUMBER_RULE_READINGS_ROOM + 1];
    memset(out, 'X', sizeof out);
    int count = number_rule_readings(number, n, out);
    FUZZ_CHECK(count >= 0);
    size_t len = strnlen(out, NUMBER_RULE_READINGS_ROOM);
    FUZZ_CHECK(len < NUMBER_RULE_READINGS_ROOM && out[NUMBER_RULE_READINGS_ROOM] == 'X');
    int lines = 0;
    for (const char *line = out; *line; lines++) {
        const char *end = strchr(line, '\n');
        FUZZ_CHECK(end != NULL && only_numerals(line, (size_t)(end - line)));
        line = end + 1;
    }
    FUZZ_CHECK(lines == count);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static NumberRule *rules[2];
    if (!rules[0]) { /* kept for the process: the tables never change */
        rules[0] = make_rule(false);
        rules[1] = make_rule(true);
    }
    if (size < 5) return 0;
    const NumberRule *rule = rules[data[0] >> 7];
    int S = data[0] % (MAX_SOURCE + 1), len = data[1] % (MAX_OUTPUT + 1);
    uint32_t banned_before = data[2] | (uint32_t)data[3] << 8 | (uint32_t)data[4] << 16;
    data += 5, size -= 5;
    int src[MAX_SOURCE], history[MAX_OUTPUT];
    bool spaced[MAX_SOURCE];
    for (int i = 0; i < S; i++) {
        uint8_t b = i < (int)size ? data[i] : 0;
        src[i] = b % VOCAB;
        spaced[i] = b & 0x80;
    }
    for (int i = 0; i < len; i++) {
        size_t at = (size_t)S + (size_t)i;
        history[i] = at < size ? data[at] % TGT_VOCAB : 0;
    }
    size_t used = (size_t)S + (size_t)len;
    check_readings(used < size ? data + used : data, used < size ? size - used : 0);

    bool applies = number_rule_applies(rule, src, S);
    for (int marks = 0; marks < 2; marks++) {
        float before[TGT_VOCAB] = {0}, logits[TGT_VOCAB];
        for (int id = 0; id < N_PIECES && id < 24; id++) /* an earlier rule's bans: digits and separators only */
            if (banned_before >> id & 1 && (number_rule_is_digits(PIECES[id].text) ||
                                             number_rule_is_separator(PIECES[id].text)))
                before[id] = -INFINITY;
        memcpy(logits, before, sizeof logits);
        number_rule_ban(rule, src, marks ? spaced : NULL, S, history, len, logits);
        int left = 0;
        for (int id = 0; id < TGT_VOCAB; id++) {
            FUZZ_CHECK(logits[id] == 0 || logits[id] == -INFINITY);
            FUZZ_CHECK(before[id] == 0 || logits[id] == -INFINITY);
            FUZZ_CHECK(applies || logits[id] == before[id]);
            left += logits[id] == 0;
        }
        FUZZ_CHECK(left > 0);
    }
    return 0;
}
