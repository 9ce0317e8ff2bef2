/* train_vocab.c — building and recasing the vocabularies (see train_vocab.h). */
#include "train_vocab.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/output_file.h"
#include "../common/utf8.h"
#include "../tokenizer/vocab.h"
#include "cli.h"
#include "exit_status.h"
#include "train_data.h"

/* Count one text's tokens, each `weight` times (its source's sampling
 * weight, so the vocabulary sees the sources in the shares an epoch
 * does): the one place the vocabulary builder is fed. */
static int vocab_count(VocabBuilder *b, const char *text, double weight, Error *err)
{
    return vocab_builder_add_text(b, text, strlen(text), weight, err);
}

/* Both vocabularies from every pair of the pool, each weighted by its
 * source's weight. */
static int count_pairs(VocabBuilder *src, VocabBuilder *tgt, const Sources *sources, Error *err)
{
    const Corpus *p = &sources->pairs;
    for (size_t i = 0; i < p->count; i++) {
        double w = sources->counts[sources->origin[i]].weight;
        if (vocab_count(src, p->source[i], w, err) || vocab_count(tgt, p->target[i], w, err)) return -1;
    }
    return 0;
}

/* Is `path` a subword vocabulary (for --recase)?  0, or EXIT_DATA with a
 * message. */
static int check_subword(const char *path)
{
    Error err = {{0}};
    Vocab *v = vocab_load(path, &err);
    int status = 0;
    if (!v) {
        fprintf(stderr, "train: %s\n", err.message);
        status = EXIT_DATA;
    } else if (!vocab_is_subword(v)) {
        cli_say("train", "%s: --recase needs a subword vocabulary (rebuild a word one with --vocab)", path);
        status = EXIT_DATA;
    }
    vocab_free(v);
    return status;
}

/* A vocabulary just written that holds nothing but its specials (and
 * byte tokens): no word was counted min_count times, as when a source's
 * weight is tiny (counts are weighted).  Training with it would spell every
 * word in bytes or <unk>: said, not silently built. */
static void note_no_words(const char *path, int min_count)
{
    Error err = {{0}};
    Vocab *v = vocab_load(path, &err);
    if (!v) return;
    int builtin = VOCAB_SPECIALS + (vocab_is_subword(v) ? VOCAB_BYTE_TOKENS : 0);
    if (vocab_size(v) <= builtin)
        cli_say("train", "note: %s holds no word: none was counted min_count (%d) times, and "
                         "counts are weighted (a source's weight too small?)", path, min_count);
    vocab_free(v);
}

/* Both vocabularies of the config, written from src and tgt (or recased),
 * replaced together or not at all: a model records the hashes of both, so
 * a new source vocabulary beside the old target one (the target's write
 * failed on a full disk) broke every model trained with the old pair.
 * Each is written to its temporary file and prepared; only then are both
 * renamed.  0 or EXIT_WRITE, said. */
static int write_vocab_pair(const Config *cfg, const VocabBuilder *src, const VocabBuilder *tgt, bool recasing)
{
    const TrainConfig *t = &cfg->train;
    const char *paths[2] = {cfg->source_vocab_path, cfg->target_vocab_path};
    const VocabBuilder *from[2] = {src, tgt};
    const int sizes[2] = {t->source_vocab_size, t->target_vocab_size};
    int (*write)(const VocabBuilder *, OutputFile *, int, int, Error *) =
        t->vocabulary == VOCABULARY_WORD ? vocab_builder_write : vocab_builder_write_subword;
    OutputFile *out[2] = {NULL, NULL};
    Error err = {{0}};
    int failed = 0;
    for (int i = 0; i < 2 && !failed; i++) {
        out[i] = output_file_open(paths[i], 0, &err);
        failed = !out[i] || (recasing ? vocab_builder_recase(from[i], out[i], &err)
                                      : write(from[i], out[i], sizes[i], t->min_count, &err));
    }
    if (failed) output_file_abort(out[0]);
    if (failed || output_file_commit(out[0], &err)) { /* (commit frees out[0] either way) */
        output_file_abort(out[1]);
        fprintf(stderr, "train: %s (neither vocabulary was replaced)\n", err.message);
        return EXIT_WRITE;
    }
    if (output_file_commit(out[1], &err)) { /* only its rename could fail: not seen */
        cli_say("train", "%s, after %s was replaced: build both again", err.message, paths[0]);
        return EXIT_WRITE;
    }
    return 0;
}

int train_vocab_build(const Config *cfg, const char *data_path, bool recasing, const volatile sig_atomic_t *stop)
{
    Error err = {{0}};
    const TrainConfig *t = &cfg->train;
    /* Reading one file for both sides is fine; writing both into it would
     * keep only the target's, and the source's hash would be wrong. */
    if (!cli_written_directly(cfg->source_vocab_path) &&
        cli_same_file(cfg->source_vocab_path, cfg->target_vocab_path)) {
        cli_say("train", "source_vocab and target_vocab are the same file (%s): building them "
                         "writes two vocabularies, so each needs a file of its own", cfg->source_vocab_path);
        return EXIT_USAGE;
    }
    if (recasing) {
        int bad = check_subword(cfg->source_vocab_path);
        if (bad || (bad = check_subword(cfg->target_vocab_path))) return bad;
    }
    Sources sources;
    Simplifier *simplifier;
    int status = train_data_open_simplifier(cfg, &simplifier);
    if (status) return status;
    status = train_data_load(cfg, data_path, simplifier, &sources);
    simplify_free(simplifier);
    if (!status && !sources.pairs.count) { /* vocabularies of specials only would train nothing */
        cli_say("train", "%s: no pairs to build the vocabularies from", data_path ? data_path : train_data_name(t));
        status = EXIT_DATA;
    }
    if (!status && stop && *stop) status = EXIT_INTERRUPTED;
    if (status) {
        sources_free(&sources);
        return status;
    }
    VocabBuilder *src = vocab_builder_new(), *tgt = vocab_builder_new();
    if (count_pairs(src, tgt, &sources, &err)) {
        status = EXIT_DATA; /* (the pool holds only text that tokenised: a bug if reached) */
        fprintf(stderr, "train: %s\n", err.message);
    } else {
        status = write_vocab_pair(cfg, src, tgt, recasing);
    }
    if (!status)
        cli_say("train", "%s from %zu pairs: %s, %s", recasing ? "casings" : "vocabularies",
                sources.pairs.count, cfg->source_vocab_path, cfg->target_vocab_path);
    if (!status && !recasing) {
        note_no_words(cfg->source_vocab_path, t->min_count);
        note_no_words(cfg->target_vocab_path, t->min_count);
    }
    vocab_builder_free(src);
    vocab_builder_free(tgt);
    sources_free(&sources);
    return status;
}

/* Is `path` a regular file with something in it that is not a vocabulary
 * (whose first line, after '#' comments, is "<pad>" and its fields)?  A
 * model, data, a config named as a vocabulary by mistake: --overwrite is
 * for vocabularies, never for them. */
static bool is_other_file(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return false;
    FILE *f = fopen(path, "rb");
    if (!f) return false; /* building will say why it cannot write it */
    char line[64];
    bool vocabulary = false, first = true;
    while (fgets(line, sizeof line, f)) {
        const char *p = line;
        if (first) p += utf8_bom_length(p, strlen(p)); /* as vocab_load allows */
        first = false;
        if (p[0] == '#') { /* a comment: skip the rest of its line */
            while (!strchr(line, '\n') && fgets(line, sizeof line, f)) continue;
            continue;
        }
        vocabulary = strncmp(p, "<pad>", 5) == 0 && strchr("\t\r\n", p[5]);
        break;
    }
    fclose(f);
    return !vocabulary;
}

int train_vocab_check_replace(const Config *cfg, bool vocab_only, bool overwrite)
{
    const char *paths[] = {cfg->source_vocab_path, cfg->target_vocab_path};
    for (int i = 0; i < 2; i++) {
        if (access(paths[i], F_OK) != 0) continue;
        /* Every reader wants a regular file: /dev/null took one vocabulary
         * (status 0, the other replaced alone) and a FIFO blocked the build
         * until Ctrl-C. */
        struct stat st;
        if (stat(paths[i], &st) == 0 && !S_ISREG(st.st_mode)) {
            cli_say("train", "%s is not a regular file (%s): a vocabulary must be a file translate can read; "
                             "name a file in the config", paths[i],
                    S_ISDIR(st.st_mode) ? "a folder" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a device or the like");
            return EXIT_USAGE;
        }
        if (vocab_only && overwrite && !is_other_file(paths[i])) continue;
        if (vocab_only && overwrite) {
            cli_say("train", "%s exists and is not a vocabulary (its first line is not <pad>): "
                             "--overwrite replaces only vocabularies; name another file in the config",
                    paths[i]);
            return EXIT_USAGE;
        }
        if (vocab_only)
            cli_say("train", "%s exists: building the vocabularies would replace it, and the models "
                             "trained with it would no longer load; name new files in a copy of the config, "
                             "or replace it with --vocab --overwrite", paths[i]);
        else
            cli_say("train", "%s is missing but %s exists: building both would replace it, and the "
                             "models trained with it would no longer load; restore %s, or, if it never was (a build "
                             "stopped between the two files), build both with --vocab --overwrite",
                    paths[1 - i], paths[i], paths[1 - i]);
        return EXIT_USAGE;
    }
    return 0;
}
