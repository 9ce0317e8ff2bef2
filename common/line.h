/* line.h — reading one line of text with a bounded buffer.
 *
 * Every line-oriented reader (translate's standard input, the TSV corpus,
 * the vocabulary file) goes through line_read, so no input — however long
 * its lines, however many NUL bytes it holds — makes us allocate more than
 * the caller's fixed buffer.  A line longer than that is consumed to its
 * end and reported, never read whole. */
#ifndef TRANSLATE_LINE_H
#define TRANSLATE_LINE_H

#include <stdio.h>

enum { LINE_EOF = -1, LINE_TOO_LONG = -2 };

/* Read the next line of `in` into buf (room for max + 1 bytes), without its
 * "\n" or "\r\n", NUL-terminated.  Returns its length in bytes (NUL bytes
 * inside the line are kept and counted), LINE_EOF at the end of input, or
 * LINE_TOO_LONG for a line of more than `max` bytes (consumed up to and
 * including its "\n"; buf then holds its first bytes).  A last line without
 * "\n" is a line. */
long line_read(FILE *in, char *buf, size_t max);

#endif
