/* tokenizer.h — text to tokens and back.
 *
 * Pipeline: validate UTF-8 → NFKC → split by script → (for modelling)
 * case-fold.  Every Han ideograph and kana character is one token; a run of
 * letters/digits (with their combining marks) of any other script is one
 * word; every punctuation or symbol character is its own token; white space
 * separates and is dropped; a number that is no decimal digit (², ½, ①)
 * stands apart, whatever NFKC makes of it ("10²" is 10|2, not 102).  So
 * "我想吃酸菜鱼" is 我|想|吃|酸|菜|鱼 and "I love china" is i|love|china.  Before NFKC the text is made stream-safe
 * (UAX #15): a U+034F goes before the 31st combining mark in a row, so the
 * time taken is linear in the length of any text.
 *
 * Only tokenizer/tokenizer.c includes utf8proc. */
#ifndef TRANSLATE_TOKENIZER_H
#define TRANSLATE_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"

/* Tokens of one text.  `folded[i]` is the case-folded form used by the
 * model; `surface[i]` is the same token NFKC-normalised but with its
 * original case (the vocabulary builder counts casings from it);
 * `offset[i]` is the byte offset in the input where the token starts;
 * `spaced[i]` says white space came between it and the token before (the
 * tokens themselves drop it: "1,000" and "1, 000" are the same three). */
typedef struct {
    size_t count;
    char **folded;
    char **surface;
    size_t *offset;
    bool *spaced;
} TokenList;

/* Tokenise `len` bytes of `text` (need not be NUL-terminated).
 * Fails (returns -1, fills err) on invalid UTF-8 naming the byte offset
 * ("invalid UTF-8 at byte 7"), and on a NUL byte.  Empty or white-space-only
 * text succeeds with count == 0 (callers decide whether that is an error).
 * On success *out owns its strings: free with token_list_free. */
int tokenize(const char *text, size_t len, TokenList *out, Error *err);
void token_list_free(TokenList *list); /* NULL-safe, leaves list zeroed */

/* Is this code point's token a "CJK" one (Han ideograph or kana)?  One
 * token each, in the tokenizer, CC-CEDICT's reader and the detokeniser. */
int tokenizer_is_cjk(int32_t codepoint);

/* Does this code point not show as itself, or act on the line around it:
 * a control (Unicode Cc: C0, DEL, C1), a format character (Cf: zero-width
 * marks, bidirectional overrides and isolates, the soft hyphen, the BOM,
 * tags) or a line or paragraph separator (Zl, Zp)?  What --explain shows
 * escaped. */
int tokenizer_is_hidden(int32_t codepoint);

/* Is this token (from tokenize) a word, a run of letters/digits that a
 * subword vocabulary may split (tokenizer/vocab.h)?  Han/kana characters,
 * punctuation and symbols are not: they stay whole.  Decided by the first
 * code point, which is what started the token. */
int tokenizer_is_word(const char *token);

/* Is this code point a decimal digit (Nd)?  Subword vocabularies keep every
 * digit a piece of its own, so numbers are copied digit by digit. */
int tokenizer_is_digit(int32_t codepoint);

/* The case-folded form of NFKC text (what tokenize puts in `folded`);
 * malloc'd, the caller frees.  The text must be valid UTF-8. */
char *tokenizer_fold(const char *text);

/* Does the text read as Chinese (1) rather than English (0)?  Letters
 * decide: each Han/kana character is one unit on the Chinese side, each
 * run of other letters (a word: "Google", "iPhone") one unit on the other;
 * digits, punctuation, symbols and spaces count for neither.  The side
 * with more units wins; a tie goes to the script of the first letter.  So
 * "我出生于1990年5月5日。" and "我在Google工作" are Chinese, "I love 中国"
 * is English.  -1 for text that reads as neither: invalid UTF-8, or no
 * letters at all (empty, spaces, digits, punctuation). */
int tokenizer_reads_as_han(const char *text, size_t len);

/* Terminal display width, for drawing token labels in columns: the
 * longest prefix of text[0..len) that fits in `columns` columns, by
 * wcwidth's rule (utf8proc_charwidth: 2 for Han, kana and other wide or
 * fullwidth characters, 0 for combining marks, else 1).  Returns its length
 * in bytes, never cutting a character, and sets *width to its columns.  An
 * invalid byte counts as one column. */
size_t tokenizer_fit_width(const char *text, size_t len, int columns, int *width);

#endif
