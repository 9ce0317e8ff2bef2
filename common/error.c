/* error.c — filling an Error (see error.h). */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void error_one_line(char *text)
{
    for (char *p = text; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
}

int error_set(Error *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        error_one_line(err->message);
    }
    return -1;
}

void error_prefix(Error *err, const char *prefix)
{
    if (!err) return;
    /* Compose in a larger buffer, then keep what fits: long paths may
     * truncate the tail of the message, never overflow it. */
    char joined[2 * sizeof err->message];
    snprintf(joined, sizeof joined, "%.500s: %.510s", prefix, err->message);
    error_one_line(joined);
    memcpy(err->message, joined, sizeof err->message - 1);
    err->message[sizeof err->message - 1] = '\0';
}
