/* train_options.h — train's command line: its options as one struct,
 * --help, and the combinations refused before anything is read (an
 * option that would do nothing with the others given). */
#ifndef TRANSLATE_TRAIN_OPTIONS_H
#define TRANSLATE_TRAIN_OPTIONS_H

#include <stdbool.h>

typedef struct {
    const char *config_path, *data_path, *out_path, *export_dir;
    const char *init_path;  /* --init: the weights to start from (NULL: random) */
    int threads;
    int max_steps;          /* --max-steps: replaces train.max_steps when > 0 */
    double max_minutes;     /* --max-minutes: replaces train.max_minutes when > 0 */
    bool resume, vocab_only, recase, quiet, overwrite, force;
    const char *simplify_table; /* --simplify-table FILE */
} TrainOptions;

/* Fill *opt from argv (zeroed by the caller).  0; -1 after a usage
 * error's message on stderr; 1 when --help or --version was printed on
 * stdout (nothing else to do). */
int train_options_parse(int argc, char **argv, TrainOptions *opt);

#endif
