/* checkpoint.h — everything needed to continue training exactly where it
 * stopped: the parameters, AdamW's moments and step, where in which epoch
 * training was, the dropout generator's state, and the best dev score.
 *
 * A checkpoint is a safetensors file: the model's tensors under their
 * usual names (so it also loads as a model), plus "optimizer.m" and
 * "optimizer.v" (flat, in parameter order), "optimizer.snapshots" (the
 * last epochs' weights kept for averaging) and the progress as metadata.
 * It is written to a temporary file, fsync'ed and renamed, so killing the
 * trainer at any moment leaves the previous checkpoint intact; the
 * temporary file such a kill leaves behind is removed by the next
 * checkpoint_save, before it writes (output_file_open). */
#ifndef TRANSLATE_CHECKPOINT_H
#define TRANSLATE_CHECKPOINT_H

#include <stdbool.h>
#include <stdint.h>

#include "../model/model.h"
#include "snapshots.h"
#include "trainer.h"

/* A training run's lineage: a random id drawn when a run starts from
 * scratch, kept in every checkpoint it (or a --resume of it) writes and in
 * the __metadata__ ("train_run") of every model it saves, so that train can
 * tell a model it wrote from one it must not replace. */
#define CHECKPOINT_RUN_ID_LENGTH 16 /* hex digits */

/* Is s a run id (CHECKPOINT_RUN_ID_LENGTH small hex digits)? */
bool checkpoint_is_run_id(const char *s);
/* A fresh run id: 64 random bits as hex (getrandom; without entropy, the
 * time and the process id). */
void checkpoint_new_run_id(char id[CHECKPOINT_RUN_ID_LENGTH + 1]);

/* What a batch position means: the checkpoint's epoch and batch index name
 * batches of the order that the training data, batch_tokens and seed make;
 * under other ones the same numbers name other batches. */
typedef struct {
    bool known;         /* false: a checkpoint from before this was recorded */
    uint64_t data_hash; /* of the training data: app/train.c mixes dataset_hash of the
                           pool with sources_hash (each source's range and weight) */
    int batch_tokens;
    uint64_t seed;
    size_t batches;     /* batches in the epoch under way (a source with a fractional
                           weight draws anew each epoch, so the count can change) */
} BatchPlan;

typedef struct {
    int epoch;          /* the epoch under way (0-based) */
    int batch;          /* batches of that epoch already done */
    double best_bleu;   /* best dev BLEU so far; -1 before the first evaluation */
    double elapsed;     /* seconds of training so far, over all runs */
    double tokens;      /* tokens trained on so far */
    Snapshots snapshots;/* epoch-end parameters for averaging */
    /* the lineage; "" in a checkpoint from before run ids */
    char run_id[CHECKPOINT_RUN_ID_LENGTH + 1];
    /* train --init: the run id (train_run) of the model it started from;
     * "" when it started from random weights or from a model without one */
    char init_run[CHECKPOINT_RUN_ID_LENGTH + 1];
    BatchPlan plan;     /* what epoch and batch refer to */
    long long log_bytes;/* the CSV log's length when the checkpoint was written; -1: unknown
                           (rows after it are logged again by a resumed run, so it cuts them) */
    long scored_step;   /* the step of the last dev BLEU; 0: none (a resumed run stopped
                           by its limit at once does not score, and log, that step again) */
    uint64_t dev_hash;  /* the dev data best_bleu was measured on; 0: not recorded */
} TrainProgress;

int checkpoint_save(const char *path, const Trainer *tr, VocabHashes hashes,
                    const TrainProgress *progress, Error *err);
/* Restore into a trainer already initialised for the same architecture
 * (and `progress->snapshots` initialised for the config's average_last).
 * Every value is validated: metadata numbers strictly parsed and in range,
 * optimizer moments and snapshots finite (the second moments >= 0), the
 * run id 16 hex digits.  Errors: "path: what".  On failure the trainer and
 * progress may be partly overwritten. */
int checkpoint_load(const char *path, Trainer *tr, VocabHashes hashes, TrainProgress *progress,
                    Error *err);

#endif
