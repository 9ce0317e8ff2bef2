/* line.c — reading one bounded line (see line.h). */
#include "line.h"

#include <stdbool.h>

/* A line ends at "\n", at "\r\n", or at the end of input (a "\r" just
 * before the end counts as part of the ending, as before a "\n"); a lone
 * "\r" inside a line is kept.  The ending is never counted against `max`,
 * so a line of exactly max bytes is accepted with either ending. */
static long read_line(FILE *in, char *buf, size_t max, bool stop_when_too_long)
{
    size_t n = 0;
    int c;
    bool too_long = false, any = false;
    while ((c = getc(in)) != EOF) {
        any = true;
        if (c == '\n') break;
        if (c == '\r') {
            int next = getc(in);
            if (next == '\n' || next == EOF) break;
            ungetc(next, in);
        }
        if (n < max) {
            buf[n++] = (char)c;
        } else {
            too_long = true;
            if (stop_when_too_long) break;
        }
    }
    if (!any) return LINE_EOF;
    buf[n] = '\0';
    return too_long ? LINE_TOO_LONG : (long)n;
}

long line_read(FILE *in, char *buf, size_t max)
{
    return read_line(in, buf, max, false);
}

long line_read_or_stop(FILE *in, char *buf, size_t max)
{
    return read_line(in, buf, max, true);
}
