/* train_outputs.h — where train may write: the folders its outputs need
 * made, the weights path checked before training (a folder, a link to
 * nothing, a file this run must not replace), its outputs kept apart from
 * each other and from its inputs, and --help's standard output checked.
 * (Writing each file is its owner's job: common/output_file.h, the
 * checkpoint, the log.  Translate's counterpart is translate_outputs.h.) */
#ifndef TRANSLATE_TRAIN_OUTPUTS_H
#define TRANSLATE_TRAIN_OUTPUTS_H

#include <stdbool.h>

#include "../common/error.h"
#include "config.h"
#include "train_options.h"

/* --help and --version: their one write checked (a full disk, a closed
 * descriptor) as every other output is.  EXIT_OK, or EXIT_WRITE after
 * its message. */
int train_outputs_finish_stdout(void);

/* Create the folders `path` is in, as `mkdir -p` would: a config may put
 * its model in a folder nothing has made yet (configs/quick-train.yaml:
 * build/quick-train/).  0, or -1 with errno set. */
int train_outputs_make_parent_dirs(const char *path);
/* The folders of every file a run writes (weights, vocabularies,
 * checkpoint, log).  0, or EXIT_WRITE after its message. */
int train_outputs_make_dirs(const Config *cfg);

/* 0 when a model can be written at the weights path at all, whatever
 * --overwrite says: found before training, not at its first save.  Else
 * an exit status, with err saying why: EXIT_USAGE for a path that names
 * no file a model could be (a folder, a FIFO or a device, a link to
 * nothing), EXIT_WRITE for one that cannot be written (a read-only file;
 * a path stat(2) refuses, as under a file or too long): a write that
 * fails, as the checkpoint's (train_outputs_check_checkpoint). */
int train_outputs_weights_path_problem(const char *path, Error *err);
/* 0 when train may write the weights `path`: no file is there, or the one
 * there names this run's lineage (`run_id`, "" for none yet) in its
 * __metadata__, or (`overwrite`) it is an empty file or a safetensors
 * file (safetensors_looks_like: a broken one too): --overwrite is for an earlier run's model, never for data, a
 * config or a vocabulary named as the weights by mistake (`--out
 * notes.tsv --overwrite` replaced the notes with weights).  Else -1 and a
 * message that says how to go on. */
int train_outputs_weights_not_replaceable(const char *path, const char *run_id, bool overwrite, Error *err);

/* 0 when the checkpoint `path` can be written: a temporary file is made
 * beside it and removed, as its first save will (common/output_file.h).
 * The first save comes after checkpoint_steps steps, 500 by default: a
 * name longer than the folder takes, or a folder that takes no new file,
 * was found only then.  A path that is not a regular file (a FIFO, a
 * device) is left to that save.  Else EXIT_WRITE after its message. */
int train_outputs_check_checkpoint(const char *path);

/* What train writes must be three files (the config loader refuses two
 * under one name; here also another spelling, a link) and none of them a
 * file the run reads: `--overwrite --out CONFIG` replaced the config
 * with the weights, and `log: VOCAB` a vocabulary with the log, whatever
 * --overwrite says (it is for an earlier run's weights).  The
 * vocabularies are read by training and written by --vocab and
 * --recase: the other outputs may not be them, and they may not be any
 * other input (source_vocab: DATA.tsv and --vocab --overwrite replaced
 * the data).  0, or EXIT_USAGE after its message. */
int train_outputs_check_distinct(const Config *cfg, const TrainOptions *opt);

#endif
