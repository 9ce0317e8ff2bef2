/* cli.h — what translate's and train's command lines share: a counted
 * option (--threads N, --beam N, ...) and the thread count it sets. */
#ifndef TRANSLATE_CLI_H
#define TRANSLATE_CLI_H

/* A whole number in 1..max for option `name` of program `prog`: 0 with
 * *out set, else -1 after "prog: name: expected a number from 1 to max,
 * got 'text'" on stderr. */
int cli_parse_count(const char *prog, const char *name, const char *text, int max, int *out);

/* Threads for the matrix products: `threads`, or every online core when 0
 * (--threads not given). */
void cli_set_threads(int threads);

#endif
