/* train_run.h — the state of one training run: the config, the
 * vocabularies, the data and its batches, the trainer, the progress a
 * checkpoint keeps, the log and the clocks.  train.c opens it, trains and
 * closes it; the modules that do one part of the run's work read and write
 * it (train_epochs.h, train_log.h, train_eval.h, train_export.h).  Only a
 * type: no functions of its own. */
#ifndef TRANSLATE_TRAIN_RUN_H
#define TRANSLATE_TRAIN_RUN_H

#include <stdbool.h>
#include <stdio.h>

#include "../data/batches.h"
#include "../data/dataset.h"
#include "../data/packed_batch.h"
#include "../data/sources.h"
#include "../model/model.h"
#include "../tokenizer/vocab.h"
#include "../training/checkpoint.h"
#include "../training/progress.h"
#include "../training/trainer.h"
#include "config.h"
#include "train_options.h"

typedef struct {
    const TrainOptions *opt;
    Config cfg;
    Vocab *src_vocab, *tgt_vocab;
    VocabHashes hashes;
    Sources sources;       /* the training pool's sources (its pairs moved to `train`) */
    Dataset train, dev;
    int *epoch_pairs;      /* [sources_epoch_size] this epoch's draw from the pool */
    bool resample;         /* a source's weight has a fraction: each epoch draws anew */
    int batches_epoch;     /* the epoch `batches` was built for */
    Batches batches, dev_batches;
    Batches max_batch;     /* only its max_* fields: the largest batch of any epoch */
    PackedBatch packed;
    Model init;            /* --init's weights, loaded before the data; moved into `trainer` */
    bool *final_punctuation; /* [source vocabulary]: for train.drop_final_punctuation */
    Trainer trainer;
    TrainProgress progress;
    BatchPlan plan;        /* this run's data and batching (checkpoint.h) */
    FILE *log;
    bool live;             /* a terminal: redraw one progress line */
    double run_start;      /* when this run started, and ... */
    double elapsed_before; /* ... the seconds earlier runs (before --resume) took */
    double last_log;       /* when the tokens/s being measured started (off_the_clock) */
    double tokens_since_log;
    long steps_before;     /* the step this run started at (0, or the checkpoint's) */
    long saved_step;       /* the step of the checkpoint on disk: -1 none (what --resume would go back to) */
    LossAverage smooth;    /* the training loss's moving average (progress.h) */
} Run;

#endif
