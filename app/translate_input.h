/* translate_input.h — the input translated: each TEXT argument, or each
 * line of a file or standard input, one at a time or read ahead in
 * maxi-batches (issue 12), each line's translation (or, when it fails, its
 * error on stderr and an empty line) written in input order and flushed,
 * its notes and errors on stderr with it, in the same order either way.
 * Lines that cannot be read whole are said and skipped, never stored. */
#ifndef TRANSLATE_TRANSLATE_INPUT_H
#define TRANSLATE_TRANSLATE_INPUT_H

#include <stdio.h>

#include "exit_status.h"
#include "translate_session.h"

/* Each TEXT argument (when `in` is NULL), else each line of `in` (`in_name`
 * in messages), until the input ends or an output fails (s->stopped).
 * `logits`: --logits's stream, or NULL.  The worst line's status. */
ExitStatus translate_input_all(Session *s, int n_texts, char **texts, FILE *in, const char *in_name,
                               FILE *logits);

#endif
