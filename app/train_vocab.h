/* train_vocab.h — train --vocab and --recase, and the vocabularies a run
 * builds when the config's files are missing: both counted from the
 * training data (train_data.h), each pair weighted as an epoch draws it,
 * written together or not at all. */
#ifndef TRANSLATE_TRAIN_VOCAB_H
#define TRANSLATE_TRAIN_VOCAB_H

#include <signal.h>
#include <stdbool.h>

#include "config.h"

/* Build both vocabularies from the data (data_path, or NULL for the
 * config's sources), or with `recasing` recompute the casings of the
 * existing ones (vocab_builder_recase).  0, or an exit status after its
 * message; EXIT_INTERRUPTED, unsaid and nothing written, when `*stop`
 * (NULL: never) was set by a signal while the data was read: the seconds
 * of counting and merging are not spent (those under way finish, and
 * their vocabularies are written). */
int train_vocab_build(const Config *cfg, const char *data_path, bool recasing, const volatile sig_atomic_t *stop);
/* Building the vocabularies writes the config's two vocabulary files.  A
 * model records the hashes of the vocabularies it was trained with and
 * refuses others, so replacing a file that exists would leave every model
 * trained with it unloadable (the shipped weights/ vocabularies are shared
 * by configs/experiments/ too): only --vocab --overwrite (`vocab_only`,
 * `overwrite`) does that, and never over a file that is not a vocabulary.
 * A training run builds them when one is missing, and so never over one
 * that exists.  0, or EXIT_USAGE after its message. */
int train_vocab_check_replace(const Config *cfg, bool vocab_only, bool overwrite);

#endif
