/* train.c — building a model from a parallel corpus.
 *
 *   train --vocab CONFIG     build the source and target vocabularies from
 *                            the config's train: data and write them where
 *                            the config's model: section says
 *
 * The vocabularies are the first stage of training: every word of the
 * training data, tokenised exactly as translate tokenises its input, most
 * frequent first, each with its most frequent casing (for writing English).
 * Exit status: 0 ok, 2 usage or config error, 3 data error, 4 write error. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tokenizer/tokenizer.h"
#include "../tokenizer/vocab.h"
#include "config.h"
#include "corpus.h"
#include "version.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: train --vocab CONFIG [--data TSV]\n"
            "Build the vocabularies of a model from its training data.\n"
            "\n"
            "      --vocab       build the vocabularies named in CONFIG's model: section\n"
            "                    from CONFIG's train: data (tokenised as translate does)\n"
            "      --data TSV    read this TSV instead of the config's train_data\n"
            "  -h, --help        this help\n"
            "  -V, --version     the version\n"
            "\n"
            "Exit status: 0 ok, 2 usage or config error, 3 data error, 4 write error.\n");
}

/* Count every token of one column of the corpus. */
static int count_column(VocabBuilder *b, char *const *texts, const int *lines, size_t n,
                        const char *path, Error *err)
{
    for (size_t i = 0; i < n; i++) {
        TokenList tokens;
        if (tokenize(texts[i], strlen(texts[i]), &tokens, err)) {
            char where[600];
            snprintf(where, sizeof where, "%s:%d", path, lines[i]);
            error_prefix(err, where);
            return -1;
        }
        for (size_t t = 0; t < tokens.count; t++)
            vocab_builder_add(b, tokens.folded[t], tokens.surface[t]);
        token_list_free(&tokens);
    }
    return 0;
}

static int build_vocab(const Config *cfg, const char *data_path)
{
    Error err = {{0}};
    Corpus corpus;
    const TrainConfig *t = &cfg->train;
    if (corpus_load(data_path, t->source_column, t->target_column, &corpus, &err)) {
        fprintf(stderr, "train: %s\n", err.message);
        return 3;
    }
    int status = 0;
    VocabBuilder *src = vocab_builder_new(), *tgt = vocab_builder_new();
    if (count_column(src, corpus.source, corpus.line, corpus.count, data_path, &err) ||
        count_column(tgt, corpus.target, corpus.line, corpus.count, data_path, &err)) {
        status = 3;
    } else if (vocab_builder_write(src, cfg->source_vocab_path, t->source_vocab_size, t->min_count, &err) ||
               vocab_builder_write(tgt, cfg->target_vocab_path, t->target_vocab_size, t->min_count, &err)) {
        status = 4;
    }
    if (status)
        fprintf(stderr, "train: %s\n", err.message);
    else
        fprintf(stderr, "train: %zu sentence pairs from %s: wrote %s and %s\n", corpus.count,
                data_path, cfg->source_vocab_path, cfg->target_vocab_path);
    vocab_builder_free(src);
    vocab_builder_free(tgt);
    corpus_free(&corpus);
    return status;
}

int main(int argc, char **argv)
{
    static const struct option longs[] = {{"vocab", no_argument, 0, 'v'},
                                          {"data", required_argument, 0, 'd'},
                                          {"help", no_argument, 0, 'h'},
                                          {"version", no_argument, 0, 'V'},
                                          {0, 0, 0, 0}};
    bool vocab = false;
    const char *data = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "hV", longs, NULL)) != -1) {
        switch (c) {
        case 'v': vocab = true; break;
        case 'd': data = optarg; break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("train %s\n", TRANSLATE_VERSION); return 0;
        default: fprintf(stderr, "train: try 'train --help'\n"); return 2;
        }
    }
    if (!vocab || optind != argc - 1) {
        fprintf(stderr, "train: %s\n", vocab ? "expected one CONFIG" :
                        "only --vocab is available so far (see 'train --help')");
        return 2;
    }
    Config cfg;
    Error err = {{0}};
    if (config_load(argv[optind], &cfg, &err)) {
        fprintf(stderr, "train: %s\n", err.message);
        return 2;
    }
    int status;
    if (!cfg.has_train && !data) {
        fprintf(stderr, "train: %s: no train: section (or give --data TSV)\n", cfg.path);
        status = 2;
    } else {
        if (!cfg.has_train) { /* defaults for a config made only for inference */
            cfg.train.source_column = strcmp(cfg.source_lang, "en") == 0 ? 0 : 1;
            cfg.train.target_column = 1 - cfg.train.source_column;
            cfg.train.source_vocab_size = cfg.train.target_vocab_size = 8000;
            cfg.train.min_count = 1;
        }
        status = build_vocab(&cfg, data ? data : cfg.train.train_path);
    }
    config_free(&cfg);
    return status;
}
