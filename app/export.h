/* export.h — what a PyTorch training run needs, written by `train --export
 * DIR CONFIG` (tools/train_torch.py reads it; docs/scale-out.md).
 *
 * The data are tokenised here, by our tokenizer, and batched here, by
 * data/batches.c, so that Python never re-implements either: the ids
 * a PyTorch run trains on are exactly the ones the C trainer would.  DIR
 * receives
 *   data.safetensors  I32 tensors, for each of "train" and "dev":
 *                       PART.src_ids, PART.tgt_ids   every line's ids, concatenated
 *                                                    (no <s>, no </s>)
 *                       PART.src_start, PART.tgt_start [lines+1]: line i is
 *                                                    ids[start[i] .. start[i+1]-1]
 *                       PART.usable [lines]          1: trained on (dataset.h)
 *                       PART.batch_pairs [pairs]     line numbers (0-based), batch after batch
 *                       PART.batch_first [batches+1] batch b is batch_pairs[first[b] .. first[b+1]-1]
 *                       PART.epoch_first [epochs+1]  epoch e's batches are epoch_first[e] ..
 *                                                    epoch_first[e+1]-1
 *                     train holds one batching per epoch when a source's
 *                     weight has a fraction (each epoch draws its own pairs,
 *                     data/sources.h), else one for every epoch; dev one
 *                     and source.final_punctuation (the source ids that
 *                     train.drop_final_punctuation may drop); __metadata__:
 *                     "format": "translate-export", "format_version": "2",
 *                     the config's name, languages and data paths, every
 *                     train: and decoding: setting the PyTorch run uses, the
 *                     AdamW constants (docs/scale-out.md lists them),
 *                     "draws_per_epoch", "export_id" and, for a config
 *                     with a model.simplify table, "simplify"
 *   init.safetensors  the model the C trainer would start from (its seed),
 *                     in our weights format (model.h), with the same
 *                     "export_id": each file is replaced on its own, so an
 *                     export that failed half way (a full disk, a kill) over
 *                     an earlier one leaves files of both, which
 *                     train_torch.py then refuses instead of training on
 *                     the old token ids with the new vocabularies
 *   source.vocab, target.vocab  copies of the config's vocabularies
 *   simplify.tsv      a copy of the config's model.simplify table (a
 *                     Chinese source's Traditional → Simplified table;
 *                     train_torch.py copies it beside the weights it writes)
 * A DIR that exists must be empty or an earlier export (its
 * data.safetensors is one, or, for an export that failed half way, its
 * init.safetensors is one: what else a run put beside it stays): any
 * other folder is refused, since it might hold files of these names that
 * are someone else's.  Each file is replaced atomically (output_file.h). */
#ifndef TRANSLATE_EXPORT_H
#define TRANSLATE_EXPORT_H

#include <stdbool.h>

#include "../common/error.h"
#include "../data/batches.h"
#include "../data/dataset.h"
#include "../model/model.h"
#include "../training/optim.h"
#include "config.h"
#include "exit_status.h"

/* Everything train has loaded by the time it would start training. */
typedef struct {
    const Config *cfg;
    const Dataset *train, *dev;
    const Batches *batches;        /* [epochs]: each epoch's batching (see the top) */
    int epochs;
    bool draws_per_epoch;          /* a source's weight has a fraction: each epoch its own draw */
    const Batches *dev_batches;
    const bool *final_punctuation; /* [source vocabulary size] */
    const Model *init;             /* the initial weights */
    VocabHashes hashes;
    const AdamWSettings *adamw;    /* beta1, beta2, eps (lr and weight decay come from cfg) */
    const char *export_id;         /* this export's, in both safetensors files (see the top) */
} ExportInput;

/* Before the data are read (seconds, or minutes for many epochs): EXIT_OK
 * when `dir` is new, empty or an earlier export, and the config's
 * model.simplify (if any) is a table translate can read; else an Error
 * and EXIT_USAGE (the folder) or EXIT_DATA (the table). */
ExitStatus export_check(const char *dir, const Config *cfg, Error *err);

/* Write the export into `dir` (which must exist: train creates it).
 * EXIT_OK, or with an Error: EXIT_USAGE (a folder refused, "DIR: ..."),
 * EXIT_DATA (a vocabulary unreadable), EXIT_WRITE ("FILE: cannot write: ..."). */
ExitStatus export_write(const char *dir, const ExportInput *in, Error *err);

#endif
