/* line.h — reading one line of text with a bounded buffer.
 *
 * Every line-oriented reader (translate's standard input, the TSV corpus,
 * the vocabulary file) goes through line_read, line_read_or_stop or a
 * LineReader, so no input — however long its lines, however many NUL
 * bytes it holds — makes us allocate more than a fixed buffer.  A line
 * longer than that is reported, never stored whole.  All three end lines
 * alike (below). */
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
/* The same, but LINE_TOO_LONG is returned as soon as byte max + 1 is read,
 * without reading the rest of the line — a 1 GB line costs max + 1 bytes
 * of reading, not 1 GB: for readers that give up at the first over-long
 * line (a file, not a stream of independent lines), or that say so before
 * line_skip_rest reads on (a line that never ends, /dev/zero, would keep
 * line_read silent for ever). */
long line_read_or_stop(FILE *in, char *buf, size_t max);
/* Read and drop the rest of the line line_read_or_stop found too long, up
 * to and including its "\n", so the next read starts the next line.
 * ferror(in) then says whether reading failed. */
void line_skip_rest(FILE *in);

/* line_read_or_stop's lines from a file descriptor, handed out in place:
 * one read(2) per 64 KiB instead of a locked getc per byte, and no copy.
 * The vocabulary reader uses it (two files of ~10,000 lines at every
 * start of translate: getc was a third of their load time, perf). */
typedef struct {
    int fd;             /* borrowed: the caller opens and closes it */
    size_t max;         /* longest line accepted, in bytes */
    char *buf;          /* [cap + 1]: unread bytes are buf[start..end) */
    size_t cap, start, end;
    int eof;            /* read(2) returned 0 */
} LineReader;

enum { LINE_READ_ERROR = -3 }; /* read(2) failed: errno says why */

void line_reader_init(LineReader *r, int fd, size_t max);
/* The next line, as line_read_or_stop returns it: *line points at it in
 * the reader's buffer, NUL-terminated, valid until the next call; the
 * length, LINE_EOF, LINE_TOO_LONG (found without reading more than max + 2
 * bytes of the line; the reader is then of no further use) or
 * LINE_READ_ERROR. */
long line_reader_next(LineReader *r, char **line);
void line_reader_free(LineReader *r); /* NULL-safe; does not close fd */

#endif
