/* exit_status.h — the exit statuses of translate and train, as README.md
 * documents them; the one place they are defined.  Functions in app/ that
 * can fail with one of them return an ExitStatus, and main() returns the
 * worst (highest) one met. */
#ifndef TRANSLATE_EXIT_STATUS_H
#define TRANSLATE_EXIT_STATUS_H

#include "../common/util.h"

typedef enum {
    EXIT_OK = 0,
    EXIT_INPUT = 1,         /* translate: a sentence could not be translated (bad text),
                               or standard input could not be read */
    EXIT_USAGE = 2,         /* usage or config error (train: also a refused resume or overwrite) */
    EXIT_DATA = 3,          /* a weights, vocabulary, data or checkpoint file is missing,
                               broken or disagrees with the config (train: also a loss
                               that became NaN or Inf) */
    EXIT_WRITE = 4,         /* an output file (or standard output) could not be written */
    EXIT_MEMORY = UTIL_EXIT_OUT_OF_MEMORY, /* out of memory: common/util.c exits with it */
    EXIT_INTERRUPTED = 130, /* train: stopped by SIGINT/SIGTERM/SIGHUP, checkpoint saved
                               (before the first step: none, said) */
} ExitStatus;

#endif
