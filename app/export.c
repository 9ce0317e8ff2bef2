/* export.c — the data and settings of a config for tools/train_torch.py
 * (see export.h). */
#include "export.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/input_file.h"
#include "../common/output_file.h"
#include "../common/token_ids.h"
#include "../common/util.h"
#include "../data/simplify.h"
#include "../model/safetensors.h"

#define EXPORT_FORMAT "translate-export"
#define EXPORT_FORMAT_VERSION "2"
#define EXPORT_DATA "data.safetensors"
#define VOCAB_LIMIT (1u << 30) /* a vocabulary file larger than this is not one */

_Static_assert(sizeof(int) == sizeof(int32_t), "Dataset and Batches ids are written as I32");

/* The config's model.simplify table, when it has one: a zh source reads its
 * Traditional characters as Simplified, as the training data was (a
 * train_torch.py model without it turned 這個問題很難。 into nonsense). */
#define EXPORT_SIMPLIFY "simplify.tsv"
static const char *const FILES[] = {"init.safetensors", "source.vocab", "target.vocab", EXPORT_SIMPLIFY,
                                    EXPORT_DATA};

/* Whether `path` begins as our writer begins an export: its metadata is
 * the header's first key and "format" the metadata's first.  A FIFO or a
 * device of that name is not one (input_file_fopen: never blocks). */
static bool is_export(const char *path)
{
    static const char start[] = "{\"__metadata__\":{\"format\":\"" EXPORT_FORMAT "\"";
    char buf[8 + sizeof start];
    Error err = {{0}};
    FILE *f = input_file_fopen(path, 0, &err);
    if (!f) return false;
    bool ok = fread(buf, 1, sizeof buf - 1, f) == sizeof buf - 1 && memcmp(buf + 8, start, sizeof start - 1) == 0;
    fclose(f);
    return ok;
}

/* Whether `path` is the init.safetensors of an export of ours: a model
 * with an "export_id".  It is written first, so a folder holding it and no
 * data.safetensors is an export that failed half way (a full disk, a
 * table that could not be read), which a new export may finish; it had
 * been refused as someone else's folder, so the user could not retry. */
static bool is_export_init(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) return false;
    SafeFile f;
    Error ignored = {{0}};
    if (safetensors_open(path, &f, &ignored) != 0) return false;
    const char *id = safetensors_meta(&f, "export_id");
    bool ours = id && *id;
    safetensors_close(&f);
    return ours;
}

/* 0 when `dir` is empty or holds an earlier export, whole or torn
 * (whatever else a training run put beside it, e.g. train_torch.py's
 * default output); else an Error: a folder of someone else's might hold
 * files of our names. */
static int check_dir(const char *dir, Error *err)
{
    DIR *d = opendir(dir);
    if (!d && errno == ENOENT) return 0; /* (export_check, before train creates it) */
    if (!d) return error_set(err, "%s: cannot open the folder: %s", dir, strerror(errno));
    const char *stranger = NULL;
    char first[256] = "";
    struct dirent *e;
    while (!stranger && (e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(first, sizeof first, "%s", e->d_name);
            stranger = first;
        }
    closedir(d);
    if (!stranger) return 0;
    size_t n = strlen(dir) + 32;
    char *path = xmalloc(n);
    snprintf(path, n, "%s/%s", dir, EXPORT_DATA);
    bool earlier = is_export(path);
    snprintf(path, n, "%s/%s", dir, FILES[0]);
    earlier = earlier || is_export_init(path);
    free(path);
    if (!earlier)
        return error_set(err, "%s: not empty (%s) and not an earlier export (no %s of ours): export into an "
                              "empty or new folder", dir, stranger, EXPORT_DATA);
    /* An export writes regular files only.  One of its names as a link
     * would be followed (common/output_file.h), and a link to the
     * training data or the config replaced it. */
    for (size_t i = 0; i < sizeof FILES / sizeof *FILES; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, FILES[i]);
        if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
            return error_set(err, "%s: not a file of an earlier export (a link, a folder or a device): export "
                                  "into an empty or new folder", path);
    }
    return 0;
}

/* ---- data.safetensors ---------------------------------------------------- */

enum { PART_TENSORS = 8, MAX_TENSORS = 2 * PART_TENSORS + 1, MAX_META = 48 };

typedef struct {
    SafeWriteTensor t[MAX_TENSORS];
    char names[MAX_TENSORS][40];
    size_t count;
    int32_t *owned[MAX_TENSORS]; /* the arrays converted here, freed by data_free */
    size_t owned_count;
    SafeMeta meta[MAX_META];
    char keys[MAX_META][40], values[MAX_META][4096];
    size_t meta_count;
} DataFile;

static void add_ints(DataFile *f, const char *part, const char *name, const int32_t *ints, size_t n)
{
    ASSERT(f->count < MAX_TENSORS);
    size_t i = f->count++;
    snprintf(f->names[i], sizeof f->names[i], "%s.%s", part, name);
    f->t[i] = (SafeWriteTensor){.name = f->names[i], .ndim = 1, .shape = {n}, .dtype = DTYPE_I32, .data = ints};
}

/* A converted array: add_ints of memory freed with the file. */
static int32_t *owned_ints(DataFile *f, size_t n)
{
    ASSERT(f->owned_count < MAX_TENSORS);
    return f->owned[f->owned_count++] = xcalloc(n ? n : 1, sizeof(int32_t));
}

/* A part's lines, and its batchings b[0..epochs-1] one after the other. */
static void add_part(DataFile *f, const char *part, const Dataset *d, const Batches *b, int epochs)
{
    size_t n = d->count;
    add_ints(f, part, "src_ids", d->src_ids, (size_t)d->src_start[n]);
    add_ints(f, part, "src_start", d->src_start, n + 1);
    add_ints(f, part, "tgt_ids", d->tgt_ids, (size_t)d->tgt_start[n]);
    add_ints(f, part, "tgt_start", d->tgt_start, n + 1);
    int32_t *usable = owned_ints(f, n);
    for (size_t i = 0; i < n; i++) usable[i] = d->usable[i];
    add_ints(f, part, "usable", usable, n);
    size_t pairs = 0, batches = 0;
    for (int e = 0; e < epochs; e++) {
        pairs += (size_t)b[e].first[b[e].count];
        batches += b[e].count;
    }
    int32_t *all_pairs = owned_ints(f, pairs), *first = owned_ints(f, batches + 1);
    int32_t *epoch_first = owned_ints(f, (size_t)epochs + 1);
    size_t at_pair = 0, at_batch = 0;
    for (int e = 0; e < epochs; e++) {
        epoch_first[e] = (int32_t)at_batch;
        size_t n_pairs = (size_t)b[e].first[b[e].count];
        memcpy(all_pairs + at_pair, b[e].pairs, n_pairs * sizeof *all_pairs);
        for (size_t k = 0; k < b[e].count; k++) first[at_batch + k] = (int32_t)(at_pair + (size_t)b[e].first[k]);
        at_pair += n_pairs;
        at_batch += b[e].count;
    }
    epoch_first[epochs] = (int32_t)at_batch;
    first[batches] = (int32_t)at_pair;
    add_ints(f, part, "batch_pairs", all_pairs, pairs);
    add_ints(f, part, "batch_first", first, batches + 1);
    add_ints(f, part, "epoch_first", epoch_first, (size_t)epochs + 1);
}

static void add_meta(DataFile *f, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add_meta(DataFile *f, const char *key, const char *fmt, ...)
{
    ASSERT(f->meta_count < MAX_META);
    size_t i = f->meta_count++;
    snprintf(f->keys[i], sizeof f->keys[i], "%s", key);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->values[i], sizeof f->values[i], fmt, ap);
    va_end(ap);
    f->meta[i] = (SafeMeta){f->keys[i], f->values[i]};
}

/* train_data: the training files, as the config names them (`sources:`
 * gives several, comma-separated, each with its weight; a numbers source
 * has no file), for the record: the pairs themselves are in the tensors. */
static void add_sources(DataFile *f, const TrainConfig *t)
{
    if (t->train_path) {
        add_meta(f, "train_data", "%s", t->train_path);
        return;
    }
    char list[4096] = "";
    size_t used = 0;
    for (size_t i = 0; i < t->n_sources && used < sizeof list; i++) {
        const SourceSpec *s = &t->sources[i];
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s (weight %g)", i ? ", " : "",
                                 s->path ? s->path : "numbers", (double)s->weight);
    }
    add_meta(f, "train_data", "%s", list);
}

/* The settings a PyTorch run reads, under the config's own key names
 * (floats with 9 significant digits: they read back as the same float). */
static void add_settings(DataFile *f, const ExportInput *in)
{
    const Config *c = in->cfg;
    const TrainConfig *t = &c->train;
    add_meta(f, "format", "%s", EXPORT_FORMAT);
    add_meta(f, "format_version", "%s", EXPORT_FORMAT_VERSION);
    add_meta(f, "name", "%s", c->name);
    add_meta(f, "source_language", "%s", c->source_lang);
    add_meta(f, "target_language", "%s", c->target_lang);
    add_sources(f, t);
    add_meta(f, "dev_data", "%s", t->dev_path);
    add_meta(f, "pad_id", "%d", TOKEN_PAD);
    add_meta(f, "bos_id", "%d", TOKEN_BOS);
    add_meta(f, "eos_id", "%d", TOKEN_EOS);
    add_meta(f, "batch_tokens", "%d", t->batch_tokens);
    add_meta(f, "learning_rate", "%.9g", (double)t->learning_rate);
    add_meta(f, "warmup_steps", "%d", t->warmup_steps);
    add_meta(f, "epochs", "%d", t->epochs);
    add_meta(f, "max_steps", "%d", t->max_steps);
    add_meta(f, "label_smoothing", "%.9g", (double)t->label_smoothing);
    add_meta(f, "dropout", "%.9g", (double)t->dropout);
    add_meta(f, "drop_final_punctuation", "%.9g", (double)t->drop_final_punctuation);
    add_meta(f, "weight_decay", "%.9g", (double)t->weight_decay);
    add_meta(f, "clip_norm", "%.9g", (double)t->clip_norm);
    add_meta(f, "seed", "%" PRIu64, t->seed);
    add_meta(f, "checkpoint_steps", "%d", t->checkpoint_steps);
    add_meta(f, "weights_f16", "%s", t->weights_f16 ? "true" : "false");
    add_meta(f, "beta1", "%.9g", (double)in->adamw->beta1);
    add_meta(f, "beta2", "%.9g", (double)in->adamw->beta2);
    add_meta(f, "eps", "%.9g", (double)in->adamw->eps);
    add_meta(f, "beam", "%d", c->decode.beam);
    add_meta(f, "length_penalty", "%.9g", (double)c->decode.length_penalty);
    add_meta(f, "max_output_ratio", "%.9g", (double)c->decode.max_output_ratio);
    add_meta(f, "max_output_extra", "%d", c->decode.max_output_extra);
    add_meta(f, "copy_numbers", "%s", c->decode.copy_numbers ? "true" : "false");
    if (c->simplify_path) add_meta(f, "simplify", "%s", EXPORT_SIMPLIFY);
    /* whether each epoch of the export has its own draw: train_torch.py
     * must not train more epochs than it holds then, whatever their count */
    add_meta(f, "draws_per_epoch", "%s", in->draws_per_epoch ? "true" : "false");
    add_meta(f, "export_id", "%s", in->export_id);
}

static void data_free(DataFile *f)
{
    for (size_t i = 0; i < f->owned_count; i++) free(f->owned[i]);
    free(f);
}

static int write_data(const char *path, const ExportInput *in, Error *err)
{
    DataFile *f = xcalloc(1, sizeof *f);
    add_part(f, "train", in->train, in->batches, in->epochs);
    add_part(f, "dev", in->dev, in->dev_batches, 1);
    int V = in->init->arch.src_vocab, n = 0;
    int32_t *stops = owned_ints(f, (size_t)V);
    for (int id = 0; id < V; id++)
        if (in->final_punctuation[id]) stops[n++] = id;
    add_ints(f, "source", "final_punctuation", stops, (size_t)n);
    add_settings(f, in);
    int status = safetensors_write(path, f->t, f->count, f->meta, f->meta_count, err);
    data_free(f);
    return status;
}

/* ---- the rest -------------------------------------------------------------- */

typedef struct {
    const char *bytes;
    size_t len;
} Bytes;

static void fill_bytes(FILE *out, const void *context)
{
    const Bytes *b = context;
    fwrite(b->bytes, 1, b->len, out); /* checked by the commit */
}

static ExitStatus copy_file(const char *from, const char *to, const char *what, Error *err)
{
    size_t len;
    char *bytes = input_file_read_all(from, 0, VOCAB_LIMIT, what, &len, err);
    if (!bytes) return EXIT_DATA;
    Bytes b = {bytes, len};
    int status = output_file_write(to, 0, fill_bytes, &b, err);
    free(bytes);
    return status ? EXIT_WRITE : EXIT_OK;
}

ExitStatus export_check(const char *dir, const Config *cfg, Error *err)
{
    if (check_dir(dir, err)) return EXIT_USAGE;
    if (cfg->simplify_path) { /* copied as it is: a broken one failed only in translate, after training */
        Error why = {{0}};
        Simplifier *table = simplify_load_table(cfg->simplify_path, &why);
        if (!table) {
            error_set(err, "model.simplify: %s", why.message);
            return EXIT_DATA;
        }
        simplify_free(table);
    }
    return EXIT_OK;
}

ExitStatus export_write(const char *dir, const ExportInput *in, Error *err)
{
    if (check_dir(dir, err)) return EXIT_USAGE;
    size_t n = strlen(dir) + 32;
    char *path = xmalloc(n);
    /* in FILES' order: data.safetensors, which train_torch.py opens first, last */
    snprintf(path, n, "%s/%s", dir, FILES[0]);
    char id_value[64];
    snprintf(id_value, sizeof id_value, "%s", in->export_id);
    SafeMeta id = {"export_id", id_value};
    ExitStatus status = model_save_with(in->init, path, in->hashes, DTYPE_F32, NULL, 0, &id, 1, err);
    if (status) status = EXIT_WRITE;
    snprintf(path, n, "%s/%s", dir, FILES[1]);
    if (!status) status = copy_file(in->cfg->source_vocab_path, path, "a vocabulary's", err);
    snprintf(path, n, "%s/%s", dir, FILES[2]);
    if (!status) status = copy_file(in->cfg->target_vocab_path, path, "a vocabulary's", err);
    snprintf(path, n, "%s/%s", dir, FILES[3]);
    if (!status && in->cfg->simplify_path)
        status = copy_file(in->cfg->simplify_path, path, "a simplify table's", err);
    snprintf(path, n, "%s/%s", dir, FILES[4]);
    if (!status && write_data(path, in, err)) status = EXIT_WRITE;
    free(path);
    return status;
}
