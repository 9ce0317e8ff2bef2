/* number_words.h — the English words that say a number, and the value of
 * a run of Chinese numerals: what the number rule (number_rule.h) needs to
 * hold an English translation's number words to a Chinese source's
 * numbers (十二岁 is "twelve", never "twenty").
 *
 * The words are the 32 of English cardinals: zero .. nineteen, twenty ..
 * ninety, hundred, thousand, million, billion (and hundreds, thousands,
 * millions, billions, tens, read as their singular).  Ordinals (first,
 * twelfth), "dozen", "half" and "a" are not among them: the rule leaves
 * them free. */
#ifndef TRANSLATE_NUMBER_WORDS_H
#define TRANSLATE_NUMBER_WORDS_H

#include <stdbool.h>
#include <stdint.h>

enum { NUMBER_WORDS = 32 };

/* Which of the 32 words `word` (lower case) is: 0..19 for zero ..
 * nineteen, 20..27 for twenty .. ninety, 28..31 for hundred, thousand,
 * million, billion; a plural of hundred .. billion, and "tens", as the
 * singular; -1 for any other text. */
int number_words_index(const char *word);

/* Is `word` the ordinal of one of the words (first, twelfth)? */
bool number_words_is_ordinal(const char *word);

/* Does the ordinal of one of the words marked in allowed[NUMBER_WORDS]
 * (first, twelfth, twentieth, hundredth) begin with `prefix`, or is it
 * `prefix`?  The last word of "twenty-first" says the number's one. */
bool number_words_ordinal_extends(const char *prefix, const bool *allowed);

/* Is `word` one of the plurals number_words_index reads (thousands,
 * tens)?  A source's "thousands of" says no one number. */
bool number_words_plural(const char *word);

/* Is `piece` (a vocabulary piece, without its "##") part of one of the
 * words, their plurals or their ordinals (six, ##ty, ##s, fir)? */
bool number_words_contains(const char *piece);

/* Does one of the words (or plurals) marked in allowed[NUMBER_WORDS] (NULL:
 * any of them) begin with `prefix` and go on after it (six for sixty)? */
bool number_words_extends(const char *prefix, const bool *allowed);

/* An English reading of a number: the indices of its words in order
 * (number_words_index), "-" and "and" left out, NUMBER_WORD_POINT for the
 * "point" of a decimal (no number word: nothing else reads it). */
enum { NUMBER_READING_WORDS = 32, NUMBER_READINGS = 5, NUMBER_WORD_POINT = NUMBER_WORDS };
typedef struct {
    int n;
    signed char word[NUMBER_READING_WORDS];
} NumberReading;

/* Writes to out (room: NUMBER_READINGS) the English readings of the
 * number `integer`.`decimals` (decimals: its digits after the point, ""
 * for none) and returns how many: the standard one (25 twenty five,
 * 100,000 one hundred thousand, 2,400,000 two million four hundred
 * thousand), it without its first "one" before a hundred .. billion (a
 * hundred thousand), for 1,100 to 9,999 also by hundreds (2,500 twenty
 * five hundred, 1990 nineteen hundred ninety and nineteen ninety), each
 * followed, for a decimal, by NUMBER_WORD_POINT and its digits one by one
 * (3.14: three point one four; "three" alone is no reading of it).  None
 * for an integer of 10^12 or more. */
int number_words_readings(uint64_t integer, const char *decimals, NumberReading *out);

/* Marks in allowed[NUMBER_WORDS] every word an English reading of the
 * number `integer`.`decimals` uses (decimals: its digits after the point,
 * "" for none): the standard one (25 twenty five, 100,000 one hundred
 * thousand, 2,400,000 two million four hundred thousand), for 1,100 to
 * 9,999 also by hundreds (2,500 twenty-five hundred, 1990 nineteen
 * ninety), and each decimal digit's word (3.14 three point one four).
 * Nothing is marked for an integer of 10^12 or more. */
void number_words_of(uint64_t integer, const char *decimals, bool *allowed);

/* May word k follow word `before` (indices) in one English cardinal?
 * twenty five, five hundred, hundred thousand yes; twenty thirty,
 * nineteen ninety (a year: two numbers here), five six, zero five no. */
bool number_words_may_follow(int before, int k);

/* The value of words[0..n-1] (indices as number_words_index gives them),
 * a run of English number words: three 3, twenty five 25, two hundred
 * five 205, one hundred thousand 100,000, hundred 100.  False for one
 * of 10^12 or more. */
bool number_words_english_value(const int *words, int n, uint64_t *value);

/* The value of `run`, a run of Chinese numerals (零 〇 一 二 两 ... 九 十 百
 * 千 万 亿, 点 between the integer and its decimals) and ASCII digits (with
 * thousands commas and a point) as a Chinese text writes them: 二十九 29,
 * 十万 100,000, 10万 100,000, 4万7千 47,000, 2.5万 25,000, 2亿284万
 * 202,840,000, 一百五 150 (and 两千五 2,500: a digit that ends the run
 * right after 百 千 万 亿 counts in tens of it), 三点一四 3.14, and
 * 一九九零 1990, 0012 (digit by digit where no 十 百 千 万 亿 is: then
 * digits, room the run's length + 1, gets them as written, leading zeros
 * kept; "" otherwise).  Fills *integer and decimals (room: the run's
 * length + 1) and returns true; a magnitude with no digit before it
 * counts one of it (百 100, 好几百's "hundreds").  False for a run that
 * says no one number: two digits side by side for "this or that" (七八,
 * 两三, 十七八, 两三千), 10^12 or more, nothing after 点. */
bool number_words_chinese_value(const char *run, uint64_t *integer, char *decimals, char *digits);

#endif
