/* line.c — reading one bounded line (see line.h). */
#include "line.h"

#include <stdbool.h>

long line_read(FILE *in, char *buf, size_t max)
{
    size_t n = 0;
    int c;
    bool too_long = false;
    while ((c = getc(in)) != EOF && c != '\n') {
        if (n < max) buf[n++] = (char)c;
        else too_long = true;
    }
    if (c == EOF && n == 0 && !too_long) return LINE_EOF;
    if (n > 0 && buf[n - 1] == '\r') n--;
    buf[n] = '\0';
    return too_long ? LINE_TOO_LONG : (long)n;
}
