/* line.h — reading one line of text with a bounded buffer.
 *
 * Every line-oriented reader (translate's standard input, the TSV corpus,
 * the vocabulary file) goes through line_read or line_read_or_stop, so no
 * input — however long its lines, however many NUL bytes it holds — makes
 * us allocate more than the caller's fixed buffer.  A line longer than that
 * is reported, never read whole. */
#ifndef TRANSLATE_LINE_H
#define TRANSLATE_LINE_H

#include <stdio.h>

enum { LINE_EOF = -1, LINE_TOO_LONG = -2 };

/* Read the next line of `in` into buf (room for max + 1 bytes), without its
 * "\n" or "\r\n" (which do not count against max; a lone "\r" inside the
 * line is kept), NUL-terminated.  Returns its length in bytes (NUL bytes
 * inside the line are kept and counted), LINE_EOF at the end of input, or
 * LINE_TOO_LONG for a line of more than `max` bytes (consumed up to and
 * including its "\n"; buf then holds its first bytes).  A last line without
 * "\n" is a line. */
long line_read(FILE *in, char *buf, size_t max);
/* The same for readers that give up at the first over-long line (a file,
 * not a stream of independent lines): LINE_TOO_LONG is returned as soon as
 * byte max + 1 is read, without reading the rest of the line — a 1 GB line
 * costs max + 1 bytes of reading, not 1 GB. */
long line_read_or_stop(FILE *in, char *buf, size_t max);

#endif
