/* train_log.h — the training log: a CSV row for every logged step and
 * every evaluation (train.log, or FILE.log.csv beside --out FILE),
 * flushed row by row, its header first; on --resume cut back to where
 * the checkpoint was written.  (Its columns: LOG_HEADER in train_log.c;
 * README says what they mean.) */
#ifndef TRANSLATE_TRAIN_LOG_H
#define TRANSLATE_TRAIN_LOG_H

#include "train_run.h"

/* The CSV log into r->log: a new one, or on --resume the old one cut back
 * to where the checkpoint was written (a killed run may have logged
 * further; the resumed run logs those steps again).  A regular file is
 * locked (flock) for the run, which keeps two runs from training into the
 * same files at once: the second is refused before it writes anything.
 * 0; EXIT_USAGE (locked, or a file that is not a training log) or
 * EXIT_WRITE after its message. */
int train_log_open(Run *r);
/* One CSV row: `event` ("step", "eval", "eval_average"), the run's step,
 * epoch and seconds, then the values given (NAN where they do not apply).
 * A row that cannot be written is an error (status 4): a log that
 * silently ends is worse than none.  0 (also without a log: r->log NULL),
 * or EXIT_WRITE after its message. */
int train_log_row(Run *r, const char *event, double loss, double loss_smooth, double lr, double tok_s,
                  double norm, double dloss, double bleu, double chrf);
/* The log's final close is its last write: checked.  0, or EXIT_WRITE
 * after its message. */
int train_log_close(Run *r);

#endif
