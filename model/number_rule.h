/* number_rule.h — the number-copying rule of decoding: a translation writes
 * the source's numbers as the source wrote them, digit for digit, and no
 * others.
 *
 * Without it the models garble numbers they rarely saw in training
 * ("My phone number is 13912345678." → 我的电话号码是1932年的。): digits
 * are tokens like any other, and the model picks each by how likely it
 * looks, not by what the source said.  The rule is a ban, applied to a
 * step's logits before the choice (greedy's argmax, beam search's
 * ranking), like the no-repeat rule (decode.h):
 *
 *   - A number is a run of digit tokens (a token whose text is ASCII
 *     digits, a byte token of one included: 1990 is 1 ##9 ##9 ##0), each
 *     after the first continuing its word (the "##"); a digit token that
 *     starts a word, or follows a token that is not a digit, starts a new
 *     number.  NFKC has made full-width digits ASCII.
 *   - When the source holds no number, the rule bans nothing: "two" may
 *     still become 2 or 两.
 *   - Otherwise every number of the output must be one of the source's
 *     numbers, each used at most as often as the source has it: a number
 *     may only begin with a digit token that begins an unused source
 *     number, continue with one that keeps it a prefix of one, and end
 *     (any other token, </s> included) only where it equals one.  The
 *     numbers of the output before the current one use up theirs in
 *     output order (the first unused equal one).
 *   - A separator joins the runs of digits around it into one number
 *     where the source wrote it with no white space before or after it,
 *     "." after at most 3 digits (1.5, 30.2; not 1990.5), "," between at
 *     most 3 digits and exactly 3 (2,500, 1,234,567; not the list 1,2).
 *     A comma or point with a space before or after it is punctuation
 *     (English puts one after it), so "110, 120" and "Question 1. 2 plus
 *     2" hold two numbers each.  Chinese writes no spaces: 、 is no
 *     separator ("110、120" is two numbers), and NFKC has made the
 *     full-width ones ASCII, so ４．８ and 1，290 join (JEC Basic's dev
 *     set writes its thousands so, and no list of numbers with "，"),
 *     as does "110，120" by the 3-digit reading, "1，20" not.  The tokens
 *     drop the spaces ("110, 120" and "110,120" are the same ids), so the
 *     encoder marks each token that came after white space (`spaced`,
 *     encode.h); without the marks (NULL) every separator may join as far
 *     as the ids show, "110, 120" then reading as 110,120.  A time is two
 *     numbers, so 7:45 may come out as 7点45分.  Such a number comes out
 *     with its separators as the source wrote them, so 1.5 never as "1 5"
 *     or 15, 2,500 never as 2500.  A separator the source number does not
 *     have there is punctuation after a whole number ("I have 5." →
 *     我有5。).
 *   - Chinese output may also write a source number in numerals, but
 *     only with its value (number_rule_set_numeral; the translator sets
 *     them for a Chinese target only): a run of numeral characters (零 〇
 *     一 二 两 三 ... 九 十 百 千 万 亿) may only go on as a prefix of a
 *     reading (number_rule_readings) of an unused source number, checked
 *     once the run holds two characters or a 十 百 千 万 亿 (so 1,000 is
 *     not 一万, 130 not 十三, 3.14 not 三十四), while a single 一 二 ... 九
 *     may begin one or be a word (一起, 一个, 第一, 五月).  Such a run ends
 *     only where it reads a whole unused number, as digits do: 三十 is
 *     no end for 36.5, nor 五 for 512 (五号 was its translation), so once
 *     a run of two, a magnitude, or a lone 二 .. 九 (or 零) that begins a
 *     reading is written, only the numerals that go on with it may follow.  一 and
 *     两 alone are too often words for that (一起, 两个 for "two": "two
 *     kids aged 25" keeps its 两个); a lone 三 of 星期三 beside a 30 is
 *     not (星期三十个人: the rule cannot tell Wednesday from 30).  点 joins
 *     a run only where a decimal reading goes on with it (三点一四);
 *     anywhere else it is a word of its own, never banned (一点儿, 七点
 *     o'clock).  A run that ends reading a whole unused number uses it
 *     up.
 *   - Number words (number_words.h).  An English source's runs of
 *     number words (three; twenty-five; two hundred and five) are numbers
 *     too, with a digit number beside them or not, whose Chinese readings
 *     the output may write, in numerals only ("a ninety-year history" is
 *     九十年, no longer 九年): "Three boys ate 30 apples." keeps 三个男孩 where its
 *     三 would otherwise have to go on to 三十, and "ten o'clock and 2 eggs"
 *     its 十点; scale words after a digit number multiply it and take
 *     its place ("1.5 billion" is 1,500,000,000: 十五亿, never 十亿 beside
 *     a 1.5; "40 million dollars" is 四千万, never 40美元); from 10,000
 *     such a number may also be written in digits and the largest 万 or
 *     亿 it holds, as Chinese writes it (4000万, 15亿, 284万 for "2.84
 *     million"): the digits then go on only with that 万 or 亿, and the
 *     two forms are one number, used up by either.  A lone
 *     "one" is no number here (the red one).  For an
 *     English target, a Chinese source's runs of numerals, digits among
 *     them (十五, 10万, 4万7千, 三点一四), are its numbers: one that is
 *     surely a number (two tokens or more, or a 十 百 千 万 亿; a lone 三 may
 *     be 星期三's) may be written in digits, with thousands commas from
 *     10,000 (十五 15, 10万 100,000), and makes the rule apply; the
 *     digits of a run with a 十 百 千 万 亿 are no number of their own
 *     (10万 is never a 10, nor "ten"; 4万7千 never a 4 and a 7); and every
 *     English number word of the output (zero .. nineteen, twenty ..
 *     ninety, hundred .. billion and their plurals; "one" free but where
 *     a run must go on)
 *     goes in the order of a reading of an unused source number, lone
 *     numerals' too (number_words_readings: 十二 twelve, never twenty; 三 three;
 *     三万五千 thirty-five thousand, never "five thousand"; 3.5 three point
 *     five, never "three" alone): a run of number words (with "-", "and"
 *     after a hundred .. billion, "of" after a plural between them, where
 *     a number word may follow: two hundred and five, tens of thousands;
 *     and "point" where a reading has it) may begin only as a reading
 *     begins, go on only as one goes on, and, once it reads no whole
 *     number, end only where it does: "thirty" for 三万五千 must go on, as
 *     a run of numerals must, with a number word, one joiner, "point", or
 *     an ordinal that ends the reading (twenty-first for 二十一, never
 *     after a point), unless none of those is left.  A plural of thousand ..
 *     billion must end its run (thousands for 千), tens and hundreds may
 *     only begin one (tens of thousands).  A piece that would make
 *     such a word of another value is banned, unless a word that may
 *     come there goes on from it (six for sixty), and then the word must
 *     go on toward it.  A run of numerals that says "this or that"
 *     (两三 two or three, 十七八) is no one number: where the source has
 *     one, the words are left free.  An English source's plurals
 *     (thousands of, tens of thousands) say no one number either, and
 *     its words that make no one cardinal are two numbers ("twenty and
 *     thirty" 20 and 30; "nineteen ninety" 19 and 90, and the year
 *     1990).
 *   - For an English target, a Chinese source's time, an hour and
 *     minutes between 点 and 分 (七点零五分, 7点05分, 十二点三十分; hour
 *     0..24, minutes 0..59; not 分钟, minutes that passed: 二点五分钟 is
 *     2.5 minutes), is one number, H:MM, never the decimal its
 *     点 would make (七点零五 alone is 7.05 as ever): it is written 7:05
 *     (the target's ":" joins it, as "." joins 1.5) or, with minutes 0 or
 *     10 to 59, in words, the hour's then the minutes' (seven fifteen;
 *     English says 7:05 "seven oh five", and "oh" is no number word, so
 *     that one is digits only).  Its digits (7 and 05 of 7点05分) are no
 *     numbers of their own, as 10万's 10 is none: "at 7." no longer drops
 *     the minutes, nor "at five" the hour.  But minutes of one figure, 1
 *     to 9, with no 零 (七点五分, 7点5分) say a score as often as a time
 *     (他得了七点五分。 "He got 7.5."): that one is 7:05 or 7.5, one
 *     number written either way (used up by either).
 *   - A minus sign, for a Chinese target (number_rule_set_source_sign,
 *     _target_sign): an English source's number right after a "-" that
 *     begins a word, with nothing between them (-10, "It is -10 degrees";
 *     not the range 1990-2000, COVID-19, nor "5 - 3"; without `spaced`, a
 *     "-" that no digit comes right before) is negative.  The output may
 *     write it, in digits or numerals, only right after a sign, 负, "-" or
 *     零下; where it would begin it without one (the digits or numerals
 *     that would begin it, but a lone 一 or 两, words as often), those are
 *     banned and 负 takes the highest of their logits, the one token the
 *     rule raises rather than bans: "It is -10 degrees today." was
 *     今天是10度。 (the model alone too: its training data holds no negative
 *     number, so it gives a sign next to no probability, and a ban alone
 *     made 今天是华盛行。 of it), now 今天是负十度。.  Beam search scores the
 *     raised 负 as the token whose place it took (beam.c).  Any number may
 *     follow "-" or 零下 (零下10度 for "10 degrees below zero"; the range
 *     3-5); after 负 only a negative one, and a lone numeral there too must
 *     begin its reading ("-5 is less than 1990-2000." was 负二零零零...,
 *     the sign on the 2000), where the source has one: else the 负 is the
 *     model's own, and any of its numbers may follow ("The temperature is
 *     negative 5 degrees." 体温是负五度。, not 负限度。).
 *     Not held: an English target (the model writes no sign it could be
 *     held to: "-" came out glued, It's-10, and "minus" in pieces), a
 *     Chinese source's 负 and 零下, an English source's "minus ten", nor the
 *     order of -10 and 10 ("From -10 to 10 degrees." 从10度到负10度。).
 *   - A number written as a run of two numerals or more is used up for
 *     the digits too (五十 then 50 is 50 twice); a lone numeral, maybe a
 *     word, is not (第二 "second" beside 2:30).
 *   - For an English target, number words are used up as digits are:
 *     a run of number words that ends (a word that is neither a number
 *     word nor a joiner follows, or a number word that begins a new run)
 *     uses up the source number it reads whole, for its words and its
 *     digits alike, and digits use theirs up for the words: 一百零五 once
 *     is "one hundred and five" or 105 once, never "one hundred and five
 *     hundred and five", nor 3575 in words and then in digits.  A source
 *     number read both as a run of numerals and as digits (一百零五 105,
 *     ３５７５, ３万４３００ 34,300) is one number.  A new number may
 *     begin right after a whole one ("two thirty" for 2点30分: two
 *     numbers), only not the one it ends.  An ordinal that ends a run's
 *     reading uses it up (twenty-first for 二十一); a lone "one" or
 *     ordinal (the red one, second) uses up nothing.  A digit or word
 *     written next ends the run or digit number in progress, so a word
 *     right after 105 may not read 105 again, nor a digit right after
 *     "twelve" write 12.  The output's words are read before its
 *     digits: a number either wrote is used up for both.
 *   - Where no digit token (no numeral) may continue the current number
 *     (a vocabulary that lacks a digit piece it needs, or an earlier rule
 *     of decode_ban banned the one it needs: --no-repeat-ngram 2 on 1000),
 *     it may end where it is, so that some token is always left.
 *
 * The rule is a function of the source (its ids, and which came after
 * white space) and the output so far, nothing else, so greedy decoding and
 * every beam hypothesis apply it the same way and a sentence gets the same
 * tokens alone or in a batch.  The tables of which tokens are digits,
 * numerals and word pieces come from the vocabularies (app/translator.c),
 * which the model layer does not read. */
#ifndef TRANSLATE_NUMBER_RULE_H
#define TRANSLATE_NUMBER_RULE_H

#include <stdbool.h>

typedef struct NumberRule NumberRule;

/* A rule for a model with these vocabulary sizes, knowing no digit token
 * yet.  Free with number_rule_free. */
NumberRule *number_rule_new(int src_vocab, int tgt_vocab);
void number_rule_free(NumberRule *rule); /* NULL-safe */

/* Token `id` of the source (target) vocabulary is the digits `text` (1 to
 * 15 of '0'..'9'), continuing the word before it when `continues`, or the
 * separator `text` ("." or ","; for the target ":" too, a time's: a piece
 * that starts a word).  Ids never set are neither. */
void number_rule_set_source(NumberRule *rule, int id, const char *text, bool continues);
void number_rule_set_target(NumberRule *rule, int id, const char *text, bool continues);

/* Is `text` the ":" of a time (7:05)?  A separator of the target only
 * (number_rule_set_target): a Chinese source's time (七点零五分) is written
 * H:MM.  Is `text` 分, which ends a Chinese time's minutes?  Source token
 * `id` is that 分 (set for an English target). */
bool number_rule_is_time_separator(const char *text);
bool number_rule_is_minute_mark(const char *text);
void number_rule_set_source_minute_mark(NumberRule *rule, int id);
/* Is `text` 钟, which after 分 makes 分钟, minutes of time that passed:
 * 二点五分钟 is 2.5 minutes, no time?  Source token `id` is that 钟. */
bool number_rule_is_duration_mark(const char *text);
void number_rule_set_source_duration_mark(NumberRule *rule, int id);

/* Is `text` a piece of a minus sign: "-", 负, or 零下's 下?  Source token
 * `id` is one (only an English source's "-" is read: -10); target token
 * `id` is one (set for a Chinese target: its 负 is the sign the rule has
 * the output write for a negative number). */
bool number_rule_is_sign(const char *text);
void number_rule_set_source_sign(NumberRule *rule, int id, const char *text);
void number_rule_set_target_sign(NumberRule *rule, int id, const char *text);

/* Target token `id` is the Chinese numeral `text`, one of the characters
 * number_rule_is_numeral accepts (a piece that starts a word). */
void number_rule_set_numeral(NumberRule *rule, int id, const char *text);
bool number_rule_is_numeral(const char *text);

/* Source token `id` is the Chinese numeral `text` (number_rule_is_numeral;
 * set for an English target).  Source (target) token `id` is the piece
 * `text` (without "##"), continuing the word before it when `continues`:
 * set for every piece of an English source (target), the rule keeps those
 * that may be part of a number word (number_words.h). */
void number_rule_set_source_numeral(NumberRule *rule, int id, const char *text);
void number_rule_set_source_piece(NumberRule *rule, int id, const char *text, bool continues);
void number_rule_set_target_piece(NumberRule *rule, int id, const char *text, bool continues);

/* Writes to out (NUMBER_RULE_READINGS_ROOM bytes) the Chinese readings of
 * the source number number[0..n-1] (digits, with "." and "," as the rule
 * joins them: "2,500", "3.14"), each ended by '\n', all by a 0, and
 * returns how many:
 * the standard reading (一百三十, 两千五百 as 二千五百, 一千零五, 十二,
 * 三点一四), and for a 4-digit integer its digits one by one too (1990:
 * 一九九零).  Every 2 is written 二 and every 0 零: the rule reads the
 * output's 两 and 〇 as them.  0 readings for an integer part of more than
 * 12 digits, a decimal part of more than 20, or one that is not all
 * digits (1.2.3, 192.168.0.1, 1.234,567: the source joins them too). */
enum { NUMBER_RULE_READINGS_ROOM = 512 };
int number_rule_readings(const char *number, int n, char *out);

/* Does `text` (a vocabulary piece, without the "##") consist of 1 to 15
 * ASCII digits?  Is it one of the separators "." and ","?  What the
 * callers of the two above test first. */
bool number_rule_is_digits(const char *text);
bool number_rule_is_separator(const char *text);

/* Does source src[0..S-1] hold a number, so that the rule can ban
 * anything at all? */
bool number_rule_applies(const NumberRule *rule, const int *src, int S);
/* Does source src[0..S-1] (spaced as for number_rule_ban; may be NULL)
 * hold a negative number ("-10"), so that the rule may raise 负 for it,
 * the one token it raises rather than bans (a Chinese target only)?  Only
 * then does it: "I have 3 apples." never gets a 负 of the rule's. */
bool number_rule_reads_negative(const NumberRule *rule, const int *src, const bool *spaced, int S);

/* Set to -INFINITY every logit (logits[tgt_vocab]) of a token the rule
 * bans after output history[0..len-1], for source src[0..S-1], and raise
 * the target's 负 to the best logit of those banned for beginning a
 * negative number without its sign (above: a minus sign);
 * spaced[0..S-1] (may be NULL: not known) says which source tokens came
 * after white space (Encoding's spaced, encode.h). */
void number_rule_ban(const NumberRule *rule, const int *src, const bool *spaced, int S, const int *history,
                     int len, float *logits);

#endif
