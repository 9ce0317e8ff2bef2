/* cli.c — see cli.h. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../model/parallel.h"

int cli_parse_count(const char *prog, const char *name, const char *text, int max, int *out)
{
    char *end;
    long n = strtol(text, &end, 10);
    if (*end || end == text || n < 1 || n > max) {
        fprintf(stderr, "%s: %s: expected a number from 1 to %d, got '%s'\n", prog, name, max, text);
        return -1;
    }
    *out = (int)n;
    return 0;
}

void cli_set_threads(int threads)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    parallel_set_threads(threads ? threads : (cores > 0 ? (int)cores : 1));
}
