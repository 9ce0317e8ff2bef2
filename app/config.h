/* config.h — one YAML file describes a model: its files, its shape, how to
 * decode with it and (optionally) how to train it.
 *
 * Paths inside the YAML are relative to the YAML file's own folder and are
 * stored here already resolved.  Every problem is reported as
 * "path:line:col: message" (line and column 1-based, from libyaml's marks).
 * Only app/config.c includes <yaml.h>.  See configs/en-zh.yaml for a
 * commented example of every key. */
#ifndef TRANSLATE_CONFIG_H
#define TRANSLATE_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "../common/error.h"
#include "../data/sources.h"
#include "../model/arch.h"
#include "../model/search.h"

/* What train --vocab builds (tokenizer/vocab.h): subword pieces (the
 * default, and the shipped models' kind), or whole words. */
typedef enum { VOCABULARY_SUBWORD, VOCABULARY_WORD } VocabularyKind;
/* train.sources holds at most this many sources. */
#define CONFIG_MAX_SOURCES 64

typedef struct {
    char *train_path;       /* train_data, the one-source shorthand: TSV, default
                               ../shared/data/tatoeba-cmn-eng/train.tsv; NULL when sources: is given */
    SourceSpec *sources;    /* [n_sources] >= 1 after loading: train.sources, or one TSV
                               source from train_path; columns resolved (never -1) */
    size_t n_sources;
    float max_length_ratio; /* drop pairs whose longer side has more times the tokens; 0 = off */
    char *simplify_path;    /* CC-CEDICT entries.tsv for Traditional → Simplified; NULL = none */
    char *dev_path;         /* TSV, default ../shared/data/tatoeba-cmn-eng/dev.tsv */
    int source_column;      /* 0-based TSV column of the source text */
    int target_column;      /* 0-based TSV column of the target text */
    int source_vocab_size;  /* vocabulary limits, specials included */
    int target_vocab_size;
    int min_count;          /* drop rarer words (pieces) from the vocabularies */
    VocabularyKind vocabulary; /* train.vocabulary: subword (default) or word */
    int batch_tokens;       /* source + target tokens per batch */
    float learning_rate;    /* peak learning rate */
    int warmup_steps;
    int epochs;             /* stop after this many epochs ... */
    int max_steps;          /* ... or this many steps (0 = no limit) */
    float max_minutes;      /* ... or when this much wall-clock time has passed (0 = no limit) */
    float label_smoothing;
    float dropout;
    float drop_final_punctuation; /* chance of training on a source without its final . ? ! 。 */
    float weight_decay;
    float clip_norm;        /* global gradient-norm clip; 0 = off */
    uint64_t seed;
    int checkpoint_steps;   /* write a checkpoint every N steps */
    int eval_epochs;        /* dev BLEU/chrF2 every N epochs */
    int log_steps;          /* log line every N steps */
    bool weights_f16;       /* write the trained weights as float16 (half the size) */
    int average_last;       /* also score the average of the last N epoch-end weights (0: off) */
    QueryInit query_init;   /* how W_Q starts: xavier, or t5 (√d_k smaller) */
    char *checkpoint_path;  /* resolved; default: <weights>.ckpt */
    char *log_path;         /* resolved; default: <weights>.log.csv */
} TrainConfig;

typedef struct {
    char *path;             /* the YAML file itself, as given */
    char *name;             /* e.g. "en-zh" */
    char source_lang[8];    /* "en" or "zh" */
    char target_lang[8];
    char *weights_path;     /* resolved safetensors path */
    char *source_vocab_path;
    char *target_vocab_path;
    char *simplify_path;    /* model.simplify: a Traditional → Simplified table for Chinese
                               sources (data/simplify.h); NULL = none */
    bool random_init;       /* weights missing → write a seeded random model */
    uint64_t random_seed;
    ModelArch arch;         /* src_vocab/tgt_vocab are 0 here: they come from the vocab files */
    SearchSettings decode;  /* the decoding: section; translate --beam overrides it once */
    bool has_scores;        /* a scores: section was present */
    struct {
        char *eval_path;    /* resolved TSV the scores were measured on */
        float bleu, chrf2;  /* what translate --eval printed (translate --list-models shows them) */
        int beam;           /* with this beam (1: greedy); 0: the decoding: section's */
    } scores;
    bool has_train;         /* a train: section was present */
    TrainConfig train;
} Config;

/* Parse and validate `path`.  On failure returns -1 with err =
 * "path:line:col: what" (unknown key, wrong type, missing field, out of
 * range, d_model not divisible by heads, YAML syntax error) or
 * "path: cannot open: reason".  On success `cfg` owns its strings. */
int config_load(const char *path, Config *cfg, Error *err);
void config_free(Config *cfg); /* NULL-safe; leaves cfg zeroed */

#endif
