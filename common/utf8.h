/* utf8.h — decoding (and encoding) UTF-8, the one copy: the tokenizer, the
 * vocabulary reader and the metrics all read text through it, so they
 * agree on what is well-formed.  Well-formed is RFC 3629's table: no overlong forms, no
 * surrogates, nothing above U+10FFFF, no truncated sequence.  (Normalising
 * and classifying characters is utf8proc's job, in tokenizer/tokenizer.c.) */
#ifndef TRANSLATE_UTF8_H
#define TRANSLATE_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decode the code point at s[0..len) (len >= 1) into *cp: returns its
 * length in bytes (1..4), or 0 when the bytes there are not well-formed
 * (*cp is then unspecified). */
size_t utf8_decode(const unsigned char *s, size_t len, int32_t *cp);

/* Write code point cp (at most U+10FFFF, not a surrogate) to out[0..4):
 * returns its length in bytes (1..4). */
size_t utf8_encode(int32_t cp, char *out);

/* Is all of s[0..len) well-formed UTF-8? */
bool utf8_valid(const char *s, size_t len);

/* A copy of the string s (free it) that is well-formed UTF-8: each byte
 * that begins no well-formed sequence becomes U+FFFD.  For text that must
 * be UTF-8 whatever it came from, such as a file name in a JSON document. */
char *utf8_copy_valid(const char *s);

/* The length of the UTF-8 byte-order mark s[0..len) starts with: 3, or 0
 * when it starts with none.  Editors on Windows put one before a file's
 * first line; the readers of TSV data, vocabularies and hypotheses skip it
 * there, as it is not part of the first word. */
size_t utf8_bom_length(const char *s, size_t len);

#endif
