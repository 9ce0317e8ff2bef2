/* train_export.c — train --export and --simplify-table (see train_export.h). */
#include "train_export.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/util.h"
#include "../data/simplify.h"
#include "cli.h"
#include "exit_status.h"
#include "export.h"
#include "train_epochs.h"
#include "train_outputs.h"

int train_export_check(const Config *cfg, const char *dir)
{
    Error err = {{0}};
    int status = export_check(dir, cfg, &err);
    if (status) fprintf(stderr, "train: %s\n", err.message);
    return status;
}

int train_export_data(Run *r, const AdamWSettings *adamw)
{
    const char *dir = r->opt->export_dir;
    char probe[4096];
    snprintf(probe, sizeof probe, "%s/.", dir);
    if (train_outputs_make_parent_dirs(probe) != 0) {
        cli_say("train", "%s: cannot create the folder: %s", dir, strerror(errno));
        return EXIT_WRITE;
    }
    char id[CHECKPOINT_RUN_ID_LENGTH + 1];
    checkpoint_new_run_id(id);
    /* Every epoch's batching when each draws its own pairs (a weight with
     * a fraction), moved out of r->batches one epoch at a time: one draw
     * for all epochs trained the same fraction of a source every epoch. */
    int epochs = train_epochs_draws(r);
    Batches *each = xcalloc((size_t)epochs, sizeof *each);
    size_t batches = 0;
    for (int e = 0; e < epochs; e++) {
        train_epochs_select(r, e);
        each[e] = r->batches;
        batches += each[e].count;
        r->batches = (Batches){0};
    }
    ExportInput in = {.cfg = &r->cfg, .train = &r->train, .dev = &r->dev, .batches = each, .epochs = epochs,
                      .draws_per_epoch = r->resample,
                      .dev_batches = &r->dev_batches, .final_punctuation = r->final_punctuation,
                      .init = &r->trainer.model, .hashes = r->hashes, .adamw = adamw, .export_id = id};
    Error err = {{0}};
    ExitStatus status = export_write(dir, &in, &err);
    for (int e = 0; e < epochs; e++) batches_free(&each[e]);
    free(each);
    if (status) {
        fprintf(stderr, "train: %s\n", err.message);
        return status;
    }
    if (epochs > 1)
        cli_say("train", "exported %zu training batches (%d epochs, each its own draw) and %zu dev batches "
                         "to %s", batches, epochs, r->dev_batches.count, dir);
    else
        cli_say("train", "exported %zu training and %zu dev batches to %s", batches, r->dev_batches.count, dir);
    return 0;
}

int train_export_simplify_table(const Config *cfg, const char *path, bool overwrite)
{
    const TrainConfig *t = &cfg->train;
    const char *from = t->simplify_path;
    if (!from) {
        cli_say("train", "%s: no train.simplify_with to build the table from", cfg->path);
        return EXIT_USAGE;
    }
    if (!cli_written_directly(path)) {
        const char *inputs[CONFIG_MAX_SOURCES + 8] = {from, cfg->path, cfg->weights_path, cfg->source_vocab_path,
                                                      cfg->target_vocab_path, t->checkpoint_path, t->log_path,
                                                      t->dev_path};
        size_t n = 8;
        for (size_t k = 0; k < t->n_sources; k++) inputs[n++] = t->sources[k].path;
        for (size_t i = 0; i < n; i++)
            if (inputs[i] && cli_same_file(path, inputs[i])) {
                cli_say("train", "%s would overwrite %s, a file of %s", path, inputs[i], cfg->path);
                return EXIT_USAGE;
            }
        struct stat sb;
        bool exists = stat(path, &sb) == 0;
        if (exists && !overwrite) {
            cli_say("train", "%s exists: replace it with --overwrite", path);
            return EXIT_USAGE;
        }
        /* (the config's own model.simplify is replaced whatever it holds:
         * translate's error for a broken one says to write it so) */
        bool own = cfg->simplify_path && cli_same_file(path, cfg->simplify_path);
        if (exists && !own && S_ISREG(sb.st_mode) && sb.st_size > 0) {
            Error not_table = {{0}};
            Simplifier *old = simplify_load_table(path, &not_table);
            if (!old) {
                cli_say("train", "%s exists and is not a simplify table (%s): --overwrite replaces "
                                 "only a table; name another file", path, not_table.message);
                return EXIT_USAGE;
            }
            simplify_free(old);
        }
    }
    Error err = {{0}};
    Simplifier *s = simplify_load(from, &err);
    if (!s) {
        fprintf(stderr, "train: %s\n", err.message);
        return EXIT_DATA;
    }
    if (simplify_size(s) == 0) { /* an empty table, status 0, that translate then refused */
        cli_say("train", "%s: no Traditional character with a Simplified form in it (train.simplify_with "
                         "names CC-CEDICT's entries: is it that file?); %s not written", from, path);
        simplify_free(s);
        return EXIT_DATA;
    }
    int status = simplify_save(s, path, &err) ? EXIT_WRITE : 0;
    if (status) fprintf(stderr, "train: %s\n", err.message);
    else cli_say("train", "%zu Traditional characters of %s in %s", simplify_size(s), from, path);
    simplify_free(s);
    return status;
}
