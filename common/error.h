/* error.h — how bad input is reported: a message, never an exit.
 *
 * Library code (model/, tokenizer/, app/config.c) never prints and never
 * exits on bad input.  It fills an Error with one line that names what went
 * wrong and where ("path:line:col: ...", "byte 7: ...") and returns a
 * non-zero status; only the programs in app/ print it and choose the exit
 * status.  That keeps every rejection testable.  Bugs are different: they
 * are ASSERTs (common/util.h) and abort with file:line. */
#ifndef TRANSLATE_ERROR_H
#define TRANSLATE_ERROR_H

#include <stddef.h>

typedef struct {
    char message[512]; /* one line, no trailing newline; "" when no error */
} Error;

/* printf-style; safe with err == NULL (the message is then dropped).
 * Always returns -1 so callers can write `return error_set(err, ...)`. */
int error_set(Error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prefix the current message with "prefix: " (e.g. a file name). */
void error_prefix(Error *err, const char *prefix);

/* `text` made one line in place, each newline or carriage return a space:
 * a message must never break the caller's output format, and a file name
 * may hold either.  error_set and error_prefix do it to every Error;
 * app/cli.c's cli_say to a message of any length. */
void error_one_line(char *text);

#endif
