/* translate_eval.h — translate --eval TSV: translate a parallel file's
 * source column with one model and print corpus BLEU and chrF2 against
 * its target column; --hyps keeps the translations, --compare scores
 * another system's and says whether the difference is measurable. */
#ifndef TRANSLATE_TRANSLATE_EVAL_H
#define TRANSLATE_TRANSLATE_EVAL_H

#include "exit_status.h"
#include "translate_options.h"

/* Score opt->eval_path with the model of `config_path` (the options'
 * decoding overrides applied).  Prints the scores on stdout and every
 * problem on stderr; EXIT_OK, or the status of the worst problem (a line
 * that could not be translated is scored as empty and gives EXIT_INPUT). */
ExitStatus translate_eval_run(const TranslateOptions *opt, const char *config_path);

#endif
