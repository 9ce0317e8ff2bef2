/* error.c — filling an Error (see error.h). */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int error_set(Error *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        /* One line: a message must never break the caller's output format. */
        for (char *p = err->message; *p; p++)
            if (*p == '\n' || *p == '\r') *p = ' ';
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
    for (char *p = joined; *p; p++) /* one line, as error_set keeps it */
        if (*p == '\n' || *p == '\r') *p = ' ';
    memcpy(err->message, joined, sizeof err->message - 1);
    err->message[sizeof err->message - 1] = '\0';
}
