/* train_outputs.c — where train may write (see train_outputs.h). */
#include "train_outputs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/output_file.h"
#include "../model/model.h"
#include "../model/safetensors.h"
#include "cli.h"
#include "exit_status.h"

int train_outputs_finish_stdout(void)
{
    if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0) {
        fprintf(stderr, "train: standard output: cannot write: %s\n", strerror(errno ? errno : EIO));
        return EXIT_WRITE;
    }
    return EXIT_OK;
}

int train_outputs_make_parent_dirs(const char *path)
{
    char dir[4096];
    size_t n = strlen(path);
    if (n >= sizeof dir) return errno = ENAMETOOLONG, -1;
    memcpy(dir, path, n + 1);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 0;
    *slash = '\0';
    for (char *p = dir + 1; ; p++) {
        bool end = *p == '\0';
        if (end || *p == '/') {
            *p = '\0';
            if (mkdir(dir, 0777) != 0 && errno != EEXIST) return -1;
            if (end) return 0;
            *p = '/';
        }
    }
}

int train_outputs_make_dirs(const Config *cfg)
{
    const char *paths[] = {cfg->weights_path, cfg->source_vocab_path, cfg->target_vocab_path,
                           cfg->train.checkpoint_path, cfg->train.log_path};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
        if (train_outputs_make_parent_dirs(paths[i]) != 0) {
            cli_say("train", "%s: cannot create its folder: %s", paths[i], strerror(errno));
            return EXIT_WRITE;
        }
    return 0;
}

int train_outputs_weights_path_problem(const char *path, Error *err)
{
    size_t n = strlen(path);
    if (n && path[n - 1] == '/') {
        error_set(err, "%s names a folder: the weights need a file name", path);
        return EXIT_USAGE;
    }
    struct stat sb;
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) {
            error_set(err, "%s is a folder: name a file for the weights", path);
            return EXIT_USAGE;
        }
        /* A FIFO blocked the first save in open(2) for a reader, past
         * SIGTERM and Ctrl-C, the training lost; /dev/null took the model
         * and put the checkpoint and log beside it, in /dev. */
        if (!S_ISREG(sb.st_mode)) {
            error_set(err, "%s is not a regular file (%s): name a file for the weights", path,
                      S_ISFIFO(sb.st_mode) ? "a FIFO" : "a device or the like");
            return EXIT_USAGE;
        }
        /* read-only: said now, not at the first save; a write error (it
         * was status 2, where the checkpoint's was 4) */
        return output_file_check_writable(path, err) ? EXIT_WRITE : 0;
    }
    if (errno == ENOENT && lstat(path, &sb) == 0) { /* a symbolic link to nothing (common/output_file.h) */
        error_set(err, "%s is a link to nothing: name a file for the weights", path);
        return EXIT_USAGE;
    }
    if (errno == ENOENT) return 0;
    error_set(err, "%s: cannot write the weights there: %s", path, strerror(errno));
    return EXIT_WRITE;
}

int train_outputs_weights_not_replaceable(const char *path, const char *run_id, bool overwrite, Error *err)
{
    struct stat sb = {0};
    if (stat(path, &sb) != 0) return 0; /* nothing there (train_outputs_weights_path_problem has looked) */
    SafeFile f;
    Error ignored = {{0}};
    bool ours = false, model = false;
    /* Only a regular file can be a model (opening a FIFO could block);
     * train_outputs_weights_path_problem refuses anything else at the
     * start, so a device or a FIFO here was made since: written as it is
     * (common/output_file.h), and only with --overwrite. */
    bool regular = S_ISREG(sb.st_mode);
    if (!regular && overwrite) return 0;
    if (regular && safetensors_open(path, &f, &ignored) == 0) {
        const char *id = safetensors_meta(&f, "train_run");
        ours = run_id[0] && id && strcmp(id, run_id) == 0;
        safetensors_close(&f);
    }
    model = regular && model_file_replaceable(path); /* a broken one too; no checkpoint or export */
    if (ours || (overwrite && (model || sb.st_size == 0))) return 0;
    if (model || sb.st_size == 0 || !regular)
        return error_set(err, "%s exists and was not written by this training run: train into a new "
                              "file with --out FILE, or replace it with --overwrite", path);
    return error_set(err, "%s exists and is not a model (no safetensors file, or a checkpoint or an "
                          "export's): --overwrite replaces only models; train into a new file with --out FILE",
                     path);
}

int train_outputs_check_checkpoint(const char *path)
{
    struct stat sb;
    Error err = {{0}};
    if (stat(path, &sb) == 0) {
        if (!S_ISREG(sb.st_mode)) return 0;
    } else if (errno != ENOENT) { /* ENAMETOOLONG, EACCES, ENOTDIR */
        cli_say("train", "%s: cannot write the checkpoint there: %s", path, strerror(errno));
        return EXIT_WRITE;
    }
    OutputFile *probe = output_file_open(path, 0, &err);
    if (!probe) {
        fprintf(stderr, "train: %s\n", err.message);
        return EXIT_WRITE;
    }
    output_file_abort(probe);
    return 0;
}

int train_outputs_check_distinct(const Config *cfg, const TrainOptions *opt)
{
    const TrainConfig *t = &cfg->train;
    const char *outputs[] = {cfg->weights_path, t->checkpoint_path, t->log_path,
                             cfg->source_vocab_path, cfg->target_vocab_path};
    const char *roles[] = {"the weights", "the checkpoint", "the log", "the source vocabulary",
                           "the target vocabulary"};
    enum { N_OUT = 3, N_VOCAB = 2 }; /* outputs[N_OUT..] are the vocabularies */
    for (int i = 0; i < N_OUT; i++)
        for (int j = i + 1; j < N_OUT; j++)
            if (!cli_written_directly(outputs[i]) && cli_same_file(outputs[i], outputs[j])) {
                cli_say("train", "%s and %s are the same file", outputs[i], outputs[j]);
                return EXIT_USAGE;
            }
    const char *inputs[CONFIG_MAX_SOURCES + 5];
    size_t n = 0;
    inputs[n++] = cfg->path;
    inputs[n++] = t->dev_path;
    inputs[n++] = t->simplify_path;
    inputs[n++] = opt->init_path;
    inputs[n++] = opt->data_path;
    for (size_t k = 0; k < t->n_sources; k++) inputs[n++] = t->sources[k].path;
    for (int i = 0; i < N_OUT + N_VOCAB; i++) {
        if (cli_written_directly(outputs[i])) continue;
        /* the first three against the vocabularies and every input; a
         * vocabulary against every input but the vocabularies */
        for (int v = i < N_OUT ? N_OUT : N_OUT + N_VOCAB; v < N_OUT + N_VOCAB; v++)
            if (cli_same_file(outputs[i], outputs[v])) {
                cli_say("train", "%s (%s) would overwrite %s, an input of this run", outputs[i], roles[i], outputs[v]);
                return EXIT_USAGE;
            }
        for (size_t k = 0; k < n; k++)
            if (inputs[k] && cli_same_file(outputs[i], inputs[k])) {
                cli_say("train", "%s (%s) would overwrite %s, an input of this run%s", outputs[i],
                        roles[i], inputs[k], i < N_OUT ? ": write it elsewhere (--out FILE)" : "");
                return EXIT_USAGE;
            }
    }
    return 0;
}
