/* train_eval.h — the dev set during training: its loss, its BLEU and
 * chrF2 from greedy decoding (of the weights and of the average of the
 * last epochs), the best model so far written to the weights path, and on
 * --resume the check that the best score so far was measured on this dev
 * data.  Each evaluation is a line on stderr and a row of the log. */
#ifndef TRANSLATE_TRAIN_EVAL_H
#define TRANSLATE_TRAIN_EVAL_H

#include <stdbool.h>

#include "train_run.h"

/* Dev loss, and (when `score`) dev BLEU/chrF2 of the current weights and of
 * the average of the last epoch-end snapshots; the best model is kept.
 * `when` begins the line ("epoch 3", "max_steps reached").  0; EXIT_DATA
 * when the dev loss is not finite (nothing scored or saved); EXIT_WRITE
 * when the model or the log row could not be written. */
int train_eval_dev(Run *r, bool score, const char *when);
/* The best dev BLEU so far is only comparable on the dev data it was
 * measured on: on --resume, other dev data is refused, as other training
 * data is (train.c's check_plan), or with --force the best so far is
 * forgotten.  0, or EXIT_USAGE after its message. */
int train_eval_check_dev(Run *r);
/* "NaN", "Inf" or "-Inf" for a loss that is not finite (printf's %f
 * writes "-nan"). */
const char *train_eval_nonfinite_name(double x);

#endif
