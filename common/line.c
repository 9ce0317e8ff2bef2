/* line.c — reading one bounded line (see line.h). */
#include "line.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* getc, but a descriptor left non-blocking by whoever started us (a
 * pipe from a program that set O_NONBLOCK on its end) waits for its data
 * instead of failing with EAGAIN: its lines are not lost.  The flag
 * belongs to the open file, shared with that program, so it is not
 * cleared. */
static int get_byte(FILE *in)
{
    for (;;) {
        errno = 0;
        int c = getc(in);
        if (c != EOF || !ferror(in) || (errno != EAGAIN && errno != EWOULDBLOCK)) return c;
        struct pollfd p = {.fd = fileno(in), .events = POLLIN};
        if (poll(&p, 1, -1) < 0 && errno != EINTR) return EOF; /* ferror(in) still says so */
        clearerr(in);
    }
}

/* A line ends at "\n", at "\r\n", or at the end of input (a "\r" just
 * before the end counts as part of the ending, as before a "\n"); a lone
 * "\r" inside a line is kept.  The ending is never counted against `max`,
 * so a line of exactly max bytes is accepted with either ending. */
long line_read_or_stop(FILE *in, char *buf, size_t max)
{
    size_t n = 0;
    int c;
    bool any = false;
    while ((c = get_byte(in)) != EOF) {
        any = true;
        if (c == '\n') break;
        if (c == '\r') {
            int next = get_byte(in);
            if (next == '\n' || next == EOF) break;
            ungetc(next, in);
        }
        if (n == max) {
            buf[n] = '\0';
            return LINE_TOO_LONG;
        }
        buf[n++] = (char)c;
    }
    if (!any) return LINE_EOF;
    buf[n] = '\0';
    return (long)n;
}

void line_skip_rest(FILE *in)
{
    int c;
    while ((c = get_byte(in)) != EOF && c != '\n') continue;
}

long line_read(FILE *in, char *buf, size_t max)
{
    long n = line_read_or_stop(in, buf, max);
    if (n == LINE_TOO_LONG) line_skip_rest(in);
    return n;
}

/* ---- LineReader -------------------------------------------------------- */

enum { READ_BYTES = 1 << 16 };

void line_reader_init(LineReader *r, int fd, size_t max)
{
    /* Room for a whole line with its "\r\n" and a read after it. */
    r->fd = fd;
    r->max = max;
    r->cap = max + 2 + READ_BYTES;
    r->buf = xmalloc(r->cap + 1);
    r->start = r->end = 0;
    r->eof = 0;
}

/* buf[start..start+n) is a line (its "\n" excluded, if it had one) and
 * `next` where the one after it starts: drop a final "\r" as line_read
 * does (before "\n" or at the end of input), then hand it out. */
static long hand_out(LineReader *r, size_t n, size_t next, char **line)
{
    char *p = r->buf + r->start;
    r->start = next;
    if (n > 0 && p[n - 1] == '\r') n--;
    if (n > r->max) return LINE_TOO_LONG;
    p[n] = '\0';
    *line = p;
    return (long)n;
}

long line_reader_next(LineReader *r, char **line)
{
    for (;;) {
        size_t have = r->end - r->start;
        char *nl = memchr(r->buf + r->start, '\n', have);
        if (nl) {
            size_t n = (size_t)(nl - (r->buf + r->start));
            return hand_out(r, n, r->start + n + 1, line);
        }
        if (r->eof) return have ? hand_out(r, have, r->end, line) : LINE_EOF;
        /* No "\n" yet.  max + 2 bytes without one are more than max bytes
         * of line, whatever ending follows (only the last can be its "\r"). */
        if (have >= r->max + 2) return LINE_TOO_LONG;
        memmove(r->buf, r->buf + r->start, have);
        r->start = 0;
        r->end = have;
        ssize_t got;
        do got = read(r->fd, r->buf + r->end, r->cap - r->end);
        while (got < 0 && errno == EINTR);
        if (got < 0) return LINE_READ_ERROR;
        if (got == 0) r->eof = 1;
        r->end += (size_t)got;
    }
}

void line_reader_free(LineReader *r)
{
    if (!r) return;
    free(r->buf);
    r->buf = NULL;
}
