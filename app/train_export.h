/* train_export.h — train's two commands that train nothing and write a
 * file for another program: --export DIR, the run's data, batches and
 * initial model for tools/train_torch.py (the format: export.h), and
 * --simplify-table FILE, train.simplify_with's Traditional → Simplified
 * table for translate (a config's model.simplify). */
#ifndef TRANSLATE_TRAIN_EXPORT_H
#define TRANSLATE_TRAIN_EXPORT_H

#include <stdbool.h>

#include "../training/optim.h"
#include "config.h"
#include "train_run.h"

/* --export, before the data are read: the folder is new, empty or an
 * earlier export, and the config's model.simplify a table (export.h:
 * export_check).  0, or an exit status after its message. */
int train_export_check(const Config *cfg, const char *dir);
/* --export: what train has loaded (the data, every epoch's batches, the
 * model it would start from) and `adamw`, the AdamW constants the C
 * trainer uses, written to r->opt->export_dir (made if missing) for
 * tools/train_torch.py.  Moves r->batches out epoch by epoch.  0, or an
 * exit status after its message. */
int train_export_data(Run *r, const AdamWSettings *adamw);
/* --simplify-table FILE: train.simplify_with's table, written compact for
 * translating (data/simplify.h; a config's model.simplify reads it).
 * FILE may not be any file the config names but its own model.simplify
 * (the table it rewrites), and --overwrite replaces only a table:
 * `--simplify-table src.vocab --overwrite` replaced the config's
 * vocabulary, and its model no longer loaded.  0, or an exit status
 * after its message. */
int train_export_simplify_table(const Config *cfg, const char *path, bool overwrite);

#endif
