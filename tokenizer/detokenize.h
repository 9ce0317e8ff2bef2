/* detokenize.h — model tokens back to readable text.
 *
 * Chinese ("zh"): tokens joined without spaces but between two words of a
 * space-separated script ("iPhone 6"); ASCII punctuation that NFKC folded
 * from full-width forms is restored (, ? ! : ; ( ) → ，？！：；（）, and a
 * '.' → 。 but inside a number, 3.5, or an abbreviation, a.m.).
 * English ("en"): words separated by spaces, no space before closing
 * punctuation or after opening brackets/quotes; contractions (don ' t),
 * possessives, numbers (3 . 5, 1 , 000) and hyphenated words rejoined; each
 * word written in its usual casing from the vocabulary, `i` → `I`, and the
 * first letter of the sentence capitalised. */
#ifndef TRANSLATE_DETOKENIZE_H
#define TRANSLATE_DETOKENIZE_H

#include <stddef.h>

#include "vocab.h"

/* `tokens` are case-folded model tokens (specials already removed);
 * `cased` (may be NULL) gives each token's preferred casing.
 * `lang` is "en" or "zh" (anything else: tokens joined by spaces).
 * Returns a malloc'd NUL-terminated string the caller frees. */
char *detokenize(const char *const *tokens, const char *const *cased, size_t n,
                 const char *lang);

/* ids → text through a vocabulary, skipping special ids.  With a subword
 * vocabulary the pieces are first joined into words (a "##" piece or a
 * continuing byte token joins the word before it; bytes that make no valid
 * UTF-8 become U+FFFD), each word cased as vocab.h says, and the words go
 * through the rules above. */
char *detokenize_ids(const Vocab *vocab, const int *ids, size_t n, const char *lang);

/* Each Latin-letter word of `text` that `source` holds too, in other
 * letter case, takes the source's casing when that has a capital (in
 * place: ASCII letters only, so the length stays).  A word goes on past an
 * apostrophe (don't, O'Brien): it matches whole, or by the letters before
 * its apostrophe (kavelo's from Kavelo), never by those after it.  The vocabulary keeps
 * one casing per piece, so a name the model copied piece by piece comes
 * out as "iphone" or "kAVELO" when the user wrote "iPhone" or "Kavelo".
 * A source word in small letters gives nothing ("email" leaves "Email me."
 * alone).  In English output (`lang` "en") the short words English
 * writes itself are left alone, so that an acronym in the Chinese does not
 * recase them: "it" for IT, "us" for US, "a" and "I", "can" for CAN (the
 * list is in detokenize.c); a placeholder "X" is copied ("x" → "X"). */
void detokenize_source_casing(char *text, const char *source, const char *lang);

/* Numbers joined by a comma in `text` ("2,100": the detokeniser reads a
 * comma between numbers as a thousands separator) that the source wrote
 * apart: where both numbers stand alone in `source` and the joined one
 * does not ("我买了2个苹果，100个梨"), the comma is a list's again, ", " in
 * English, "，" in Chinese.  A number the source writes so (2,100; its
 * full-width digits and commas read as ASCII), or whose parts it does not
 * hold (一千 → 1,000), stays.  Returns text, or a new string in its
 * place (text freed). */
char *detokenize_source_numbers(char *text, const char *source, const char *lang);

/* What translating shows for output ids of a sentence whose source text is
 * `source`: detokenize_ids, then its casing and numbers as above.
 * malloc'd; the caller frees. */
char *detokenize_for_source(const Vocab *vocab, const int *ids, size_t n, const char *lang, const char *source);

/* How ids group into words, for display (the attention JSON, the
 * viewer's whole-word view): word_of[i] (room for n) gets the index of the
 * word id i belongs to.  In a subword vocabulary a "##" piece or continuing
 * byte token joins the word before it; in a word vocabulary every id is a
 * word; a special id (<s>, </s>, <unk>, <pad>) is always a word of its own.
 * Returns the number of words; with `words` (room for n, may be NULL) also
 * each word's case-folded text, its pieces joined (bytes that make no valid
 * UTF-8 as U+FFFD), malloc'd: the caller frees each. */
size_t detokenize_words(const Vocab *vocab, const int *ids, size_t n, size_t *word_of, char **words);

#endif
