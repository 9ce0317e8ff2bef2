/* cli.h — what translate's and train's command lines share: a counted
 * option (--threads N, --beam N, ...), the thread count it sets, whether
 * two paths name one file (an output must not be another output or an
 * input of the run), the standard streams a caller left closed, and the
 * worse of two exit statuses. */
#ifndef TRANSLATE_CLI_H
#define TRANSLATE_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "exit_status.h"

/* A whole number in 1..max for option `name` of program `prog`: 0 with
 * *out set, else -1 after "prog: name: expected a number from 1 to max,
 * got 'text'" on stderr. */
int cli_parse_count(const char *prog, const char *name, const char *text, int max, int *out);

/* The value of option `name` that names a file: 0, or -1 and a usage
 * error on stderr when it looks like an option ("-o --html page.html"
 * wrote a file called --html and translated "page.html").  "-" alone is
 * standard input or output; a file whose name starts with '-' is ./-x. */
int cli_file_value(const char *prog, const char *name, const char *value);

/* getopt_long's error (it runs with opterr 0 and a ':' first in its
 * short options): one line, "unknown option -x" or "option --x needs a
 * value", and where to look.  A sentence that starts with '-' ("-5 degrees
 * is cold") reads as options: the line says it goes after "--". */
void cli_option_error(const char *prog, int c, char *const *argv, bool takes_text);

/* Is `text` a decimal number as people write one ("90", "0.5", ".5",
 * "1e-2"): digits with at most one point and an exponent — no sign,
 * space, hexadecimal, inf or nan, which strtod would take too?  (The
 * config loader refuses those too but a sign, which YAML allows and its
 * ranges then judge: "+32" is 32.) */
bool cli_plain_decimal(const char *text);

/* A descriptor 0-2 left closed by the caller (`<&-`, `>&-`, `2>&-`) would
 * be handed to the next file opened: translations could land in an
 * --attention file, train's messages in its CSV log.  Each is reserved
 * with /dev/null opened the other way round, so that using it fails with
 * EBADF exactly as the closed one would, and the checks report it.  The
 * first thing main does. */
void cli_reserve_standard_fds(void);

/* Threads for the matrix products: `threads`, or every online core when 0
 * (--threads not given). */
void cli_set_threads(int threads);

/* "PROG: MESSAGE" and a newline on stderr, MESSAGE made one line as
 * error_set makes it (a file name may hold a newline or a CR), and never
 * cut short, however long. */
void cli_say(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same on `to`: translate's batches hold a line's messages back until
 * the lines before it are written (translate_input.c). */
void cli_say_to(FILE *to, const char *prog, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Do a and b name one file: the same text, one existing file (links
 * followed), or one name in one folder ("x" and "./x"; a link to a file
 * not there yet followed to that name), so that a file one output is
 * about to create counts too? */
bool cli_same_file(const char *a, const char *b);

/* Is `path` standard output ("-"), or a device or FIFO, which an output is
 * written into, never replaced (common/output_file.h)?  Several outputs may
 * go there (/dev/null), where one file would keep only the last. */
bool cli_written_directly(const char *path);
/* The worse of two exit statuses: the higher, which main() returns when a
 * run met several (a line that failed, then an output that did). */
ExitStatus cli_worse(ExitStatus a, ExitStatus b);

#endif
