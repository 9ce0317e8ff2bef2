/* train_data.h — what train reads to learn from: the config's
 * train.sources into one pool (data/sources.h), each source's counts said
 * on stderr, through train.simplify_with's Traditional → Simplified table
 * when the config names one.  Shared by the training run and the
 * vocabulary builder (train_vocab.h), so both read the same pairs. */
#ifndef TRANSLATE_TRAIN_DATA_H
#define TRANSLATE_TRAIN_DATA_H

#include "../data/simplify.h"
#include "../data/sources.h"
#include "config.h"

/* train.simplify_with's table into *out (NULL without one, free with
 * simplify_free); 0, or EXIT_DATA after its message. */
int train_data_open_simplifier(const Config *cfg, Simplifier **out);
/* The config's sources (or, for --vocab --data TSV, that one file) read
 * into one pool (data/sources.h), with a line per source on stderr;
 * `simplifier` (may be NULL) converts their Chinese to Simplified.  0
 * (free *sources with sources_free), or EXIT_DATA after its message. */
int train_data_load(const Config *cfg, const char *data_path, const Simplifier *simplifier, Sources *sources);
/* The training data in messages: its one file, or "train.sources". */
const char *train_data_name(const TrainConfig *t);

#endif
