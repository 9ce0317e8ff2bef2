/* numbers.h — training pairs that teach copying numbers: a number both
 * sides of a pair share ("I was born in 1988." / 我生于1988年。) replaced
 * on both sides by one random number (… in 40271. / 我生于40271年。).
 *
 * Why: our sources have few numbers written in digits (about 400 pairs of
 * 59,000 share one), mostly years and prices, so the models learned those
 * numbers rather than how to copy one: "I was born in 1987." → 我出生于
 * 1978年。, "It costs 2500 yuan." → 它花250元。, a phone number → a date.
 * The vocabularies give every digit a token of its own, so a number the
 * model copies digit by digit always has the tokens it needs.
 *
 * A number is a run of ASCII digits, with commas between groups of three
 * ("1,000"): not beside a letter ("MP3", "4th"), and not part of a decimal,
 * a time, a date or a fraction (a '.', ':', '/' or '-' between two
 * digits).  A pair qualifies when every number of its English is one, and
 * its Chinese holds exactly the same numbers (commas aside: 1,000 and 1000
 * are one number), each once.
 *
 * Every number of the pair gets its own replacement, drawn from a hash of
 * the pair and the copy (so a resumed run sees the same data): half the
 * time as many digits as the number it replaces (a year stays four
 * digits), else 1 to 12 (phone numbers, prices); no leading zero.  Each
 * side keeps its own thousands commas: 1,000 / 1000 → 52,384 / 52384. */
#ifndef TRANSLATE_NUMBERS_H
#define TRANSLATE_NUMBERS_H

#include <stdbool.h>

/* How many copies of each pair a numbers source makes, each with other
 * numbers: a few hundred pairs, one copy each, would be too few to learn
 * from.  (A source's weight then samples or repeats them.) */
#define NUMBERS_COPIES 4

/* If the pair (english, chinese) qualifies, its copy number `copy` with
 * the numbers replaced (freshly allocated: free() both), and true; else
 * false and both NULL. */
bool numbers_to_random(const char *english, const char *chinese, unsigned copy, char **english_out,
                       char **chinese_out);

#endif
