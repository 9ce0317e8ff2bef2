/* test_config.c — the YAML config loader (app/config.c).
 *
 * The shipped configs load with the values they document; defaults and path
 * resolution work; and every kind of bad config is rejected with the exact
 * "file:line:col" of the offending key or value and a message naming it.
 * Bad configs are short YAML texts written to the test temp folder: parsing
 * stops at the first problem, so most need only the lines up to it. */
#include "testutil.h"

#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../app/config.h"

/* A minimal valid config, 18 lines; text appended to it starts at line 19. */
#define VALID_HEAD "name: t\nsource_language: en\ntarget_language: zh\n" /* 1-3 */
#define VALID_MODEL "model:\n  weights: w.st\n  source_vocab: s.vocab\n  target_vocab: t.vocab\n"
#define VALID_ARCH                                                                       \
    "architecture:\n  d_model: 16\n  heads: 2\n  encoder_layers: 1\n  decoder_layers: 1\n" \
    "  d_ff: 32\n  activation: relu\n  norm: post\n  max_len: 8\n"                         \
    "  scale_attention: true\n  tied_output_embedding: false\n" /* 8-18 */
#define VALID VALID_HEAD VALID_MODEL VALID_ARCH

/* Write `yaml` to a temp file and load it; the file's path goes to *path. */
static int load_text(const char *yaml, Config *cfg, Error *err, const char **path)
{
    *path = temp_file("config.yaml", yaml, strlen(yaml));
    return config_load(*path, cfg, err);
}

static bool is_zeroed(const Config *cfg)
{
    static const Config zero;
    return memcmp(cfg, &zero, sizeof zero) == 0;
}

/* ---- configs that load -------------------------------------------------- */

static void en_zh_config_loads_with_expected_values(void **state)
{
    (void)state;
    Config c;
    Error err = {""};
    assert_int_equal(config_load("configs/en-zh.yaml", &c, &err), 0);
    assert_string_equal(c.path, "configs/en-zh.yaml");
    assert_string_equal(c.name, "en-zh");
    assert_string_equal(c.source_lang, "en");
    assert_string_equal(c.target_lang, "zh");
    assert_string_equal(c.weights_path, "configs/../weights/en-zh.safetensors");
    assert_string_equal(c.source_vocab_path, "configs/../weights/en-zh.src.vocab");
    assert_string_equal(c.target_vocab_path, "configs/../weights/en-zh.tgt.vocab");
    assert_false(c.random_init); /* the shipped models are trained */
    assert_null(c.simplify_path); /* English sources: no table */
    const ModelArch *a = &c.arch;
    assert_int_equal(a->d_model, 256);
    assert_int_equal(a->heads, 4);
    assert_int_equal(a->encoder_layers, 3);
    assert_int_equal(a->decoder_layers, 3);
    assert_int_equal(a->d_ff, 1024);
    assert_int_equal(a->activation, ACTIVATION_RELU);
    assert_true(a->norm_first);
    assert_int_equal(a->max_len, 128);
    assert_true(a->scale_attention);
    assert_true(a->tied_output);
    assert_int_equal(a->src_vocab, 0); /* from the vocab file, later */
    assert_int_equal(a->tgt_vocab, 0);
    assert_int_equal(c.decode.beam, 4);
    /* measured on both dev sets; also the built-in default (the next test) */
    assert_true(c.decode.length_penalty == 1.0f && c.decode.max_output_ratio == 2.0f);
    assert_int_equal(c.decode.max_output_extra, 10);
    config_free(&c);
}

/* Every config the repository ships, the experiments' too, loads; and the
 * training data each names is there when the shared data is (a file under
 * build/ is made by make, e.g. make back-translation). */
static void every_config_in_the_repository_loads(void **state)
{
    (void)state;
    const char *dirs[] = {"configs", "configs/experiments"};
    int loaded = 0;
    for (int d = 0; d < 2; d++) {
        DIR *dir = opendir(dirs[d]);
        assert_non_null(dir);
        for (struct dirent *e; (e = readdir(dir));) {
            size_t len = strlen(e->d_name);
            if (len < 5 || strcmp(e->d_name + len - 5, ".yaml") != 0) continue;
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dirs[d], e->d_name);
            Config c;
            Error err = {""};
            if (config_load(path, &c, &err) != 0) fail_msg("%s: %s", path, err.message);
            loaded++;
            for (size_t i = 0; c.has_train && tatoeba_dir() && i < c.train.n_sources; i++) {
                const char *source = c.train.sources[i].path;
                if (source && !strstr(source, "/build/") && access(source, R_OK) != 0)
                    fail_msg("%s: train.sources[%zu]: %s is missing", path, i, source);
            }
            config_free(&c);
        }
        closedir(dir);
    }
    assert_true(loaded >= 8);
}

static void en_zh_train_section_loads(void **state)
{
    (void)state;
    Config c;
    Error err = {""};
    assert_int_equal(config_load("configs/en-zh.yaml", &c, &err), 0);
    const TrainConfig *t = &c.train;
    assert_true(c.has_train);
    /* the five sources, in order; the back-translated pairs and the
     * dictionary at modest weights */
    assert_null(t->train_path);
    assert_int_equal(t->n_sources, 5);
    static const char *const paths[] = {"../shared/data/tatoeba-cmn-eng/train.tsv",
                                        "../shared/data/tatoeba-cmn-eng-2025/train-additions.tsv",
                                        "../shared/data/wiktionary-examples/examples.tsv",
                                        "build/data/back-translated.tsv", "../shared/data/cc-cedict/entries.tsv"};
    for (size_t i = 0; i < 5; i++) {
        char want[200];
        snprintf(want, sizeof want, "configs/../%s", paths[i]);
        assert_string_equal(t->sources[i].path, want);
        assert_int_equal(t->sources[i].format, i == 4 ? SOURCE_CEDICT : SOURCE_TSV);
        assert_int_equal(t->sources[i].strip_notes, i == 2);
        assert_int_equal(t->sources[i].source_column, 0);
        assert_int_equal(t->sources[i].target_column, 1);
    }
    assert_true(t->sources[0].weight == 1.0f && t->sources[3].weight == 0.4f && t->sources[4].weight == 0.2f);
    assert_string_equal(t->simplify_path, "configs/../../shared/data/cc-cedict/entries.tsv");
    assert_true(t->max_length_ratio == 3.0f);
    assert_string_equal(t->dev_path, "configs/../../shared/data/tatoeba-cmn-eng/dev.tsv");
    assert_int_equal(t->source_column, 0);
    assert_int_equal(t->target_column, 1);
    assert_int_equal(t->source_vocab_size, 8000);
    assert_int_equal(t->batch_tokens, 2500);
    assert_true(t->learning_rate == 0.001f && t->label_smoothing == 0.1f);
    assert_int_equal(t->epochs, 30);
    assert_true(t->max_minutes == 115.0f && t->weights_f16);
    assert_int_equal(t->seed, 1);
    assert_string_equal(t->checkpoint_path, "configs/../weights/en-zh.ckpt");
    assert_string_equal(t->log_path, "configs/../weights/en-zh.log.csv");
    config_free(&c);
}

static void zh_en_config_mirrors_en_zh(void **state)
{
    (void)state;
    Config c;
    Error err = {""};
    assert_int_equal(config_load("configs/zh-en.yaml", &c, &err), 0);
    assert_string_equal(c.name, "zh-en");
    assert_string_equal(c.source_lang, "zh");
    assert_string_equal(c.target_lang, "en");
    assert_string_equal(c.weights_path, "configs/../weights/zh-en.safetensors");
    assert_string_equal(c.simplify_path, "configs/../weights/zh-simplify.tsv"); /* Traditional input */
    assert_int_equal(c.arch.d_model, 256);
    assert_int_equal(c.train.source_column, 1);
    assert_int_equal(c.train.target_column, 0);
    assert_int_equal(c.train.n_sources, 4); /* the same data, columns the other way round */
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(c.train.sources[i].source_column, 1);
        assert_int_equal(c.train.sources[i].target_column, 0);
    }
    assert_true(c.train.sources[3].format == SOURCE_CEDICT && c.train.sources[3].weight == 0.2f);
    assert_true(c.train.max_length_ratio == 3.0f && c.train.max_minutes == 115.0f);
    assert_non_null(c.train.simplify_path);
    config_free(&c);
}

static void tiny_config_loads_with_decoding_defaults(void **state)
{
    (void)state;
    Config c;
    Error err = {""};
    assert_int_equal(config_load("configs/tiny.yaml", &c, &err), 0);
    assert_string_equal(c.weights_path, "configs/../tests/data/tiny.safetensors");
    assert_string_equal(c.source_vocab_path, "configs/../tests/data/tiny.src.vocab");
    assert_string_equal(c.target_vocab_path, "configs/../tests/data/tiny.tgt.vocab");
    assert_true(c.random_init);
    assert_int_equal(c.random_seed, 7);
    assert_int_equal(c.arch.d_model, 16);
    assert_int_equal(c.arch.heads, 2);
    assert_int_equal(c.arch.encoder_layers, 2);
    assert_int_equal(c.arch.decoder_layers, 2);
    assert_int_equal(c.arch.d_ff, 32);
    assert_int_equal(c.arch.activation, ACTIVATION_GELU);
    assert_true(c.arch.norm_first);
    assert_int_equal(c.arch.max_len, 32);
    assert_int_equal(c.decode.beam, 1);
    assert_true(c.decode.length_penalty == 1.0f && c.decode.max_output_ratio == 2.0f);
    assert_int_equal(c.decode.max_output_extra, 10);
    assert_false(c.has_train);
    assert_null(c.train.train_path);
    config_free(&c);
}

static void random_init_is_off_without_a_seed(void **state)
{
    (void)state;
    Config c;
    Error err = {""};
    const char *path;
    assert_int_equal(load_text(VALID, &c, &err, &path), 0);
    assert_false(c.random_init);
    assert_false(c.arch.tied_output);
    config_free(&c);
}

static void paths_are_resolved_against_the_yaml_folder(void **state)
{
    (void)state;
    Config c;
    Error err = {""};
    const char *path;
    const char *yaml = VALID_HEAD VALID_ARCH
        "model:\n  weights: ../w.st\n  source_vocab: /abs/s.vocab\n  target_vocab: t.vocab\n";
    assert_int_equal(load_text(yaml, &c, &err, &path), 0);
    char want[512];
    snprintf(want, sizeof want, "%s/../w.st", temp_dir());
    assert_string_equal(c.weights_path, want);
    assert_string_equal(c.source_vocab_path, "/abs/s.vocab"); /* absolute: kept */
    snprintf(want, sizeof want, "%s/t.vocab", temp_dir());
    assert_string_equal(c.target_vocab_path, want);
    config_free(&c);
}

static void paths_beside_a_yaml_in_the_current_folder_are_kept(void **state)
{
    (void)state;
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof cwd));
    (void)temp_file("here.yaml", VALID, strlen(VALID));
    assert_int_equal(chdir(temp_dir()), 0);
    Config c;
    Error err = {""};
    int rc = config_load("here.yaml", &c, &err);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(rc, 0);
    assert_string_equal(c.weights_path, "w.st");
    config_free(&c);
}

static void train_defaults_are_applied(void **state)
{
    (void)state;
    Config c;
    Error err = {""};
    const char *path;
    assert_int_equal(load_text(VALID "train: {}\n", &c, &err, &path), 0);
    const TrainConfig *t = &c.train;
    char want[512];
    snprintf(want, sizeof want, "%s/../../shared/data/tatoeba-cmn-eng/train.tsv", temp_dir());
    assert_true(c.has_train);
    assert_string_equal(t->train_path, want);
    assert_int_equal(t->source_column, 0);
    assert_int_equal(t->target_column, 1);
    assert_int_equal(t->source_vocab_size, 8000);
    assert_int_equal(t->target_vocab_size, 8000);
    assert_int_equal(t->min_count, 1);
    assert_int_equal(t->vocabulary, VOCABULARY_SUBWORD);
    assert_int_equal(t->batch_tokens, 4096);
    assert_true(t->learning_rate == 0.001f && t->dropout == 0.1f && t->clip_norm == 1.0f);
    assert_true(t->label_smoothing == 0.1f && t->weight_decay == 0.0f);
    assert_int_equal(t->warmup_steps, 1000);
    assert_int_equal(t->epochs, 20);
    assert_int_equal(t->max_steps, 0);
    assert_int_equal(t->seed, 1);
    assert_int_equal(t->checkpoint_steps, 500);
    assert_int_equal(t->eval_epochs, 1);
    assert_int_equal(t->log_steps, 50);
    snprintf(want, sizeof want, "%s/w.st.ckpt", temp_dir());
    assert_string_equal(t->checkpoint_path, want);
    snprintf(want, sizeof want, "%s/w.st.log.csv", temp_dir());
    assert_string_equal(t->log_path, want);
    config_free(&c);
}

static void train_vocabulary_word_is_accepted(void **state)
{
    (void)state;
    Config c;
    Error err = {""};
    const char *path;
    assert_int_equal(load_text(VALID "train:\n  vocabulary: word\n", &c, &err, &path), 0);
    assert_int_equal(c.train.vocabulary, VOCABULARY_WORD);
    config_free(&c);
    assert_int_equal(load_text(VALID "train:\n  vocabulary: subword\n", &c, &err, &path), 0);
    assert_int_equal(c.train.vocabulary, VOCABULARY_SUBWORD);
    config_free(&c);
}

static void train_columns_default_from_the_languages(void **state)
{
    (void)state;
    static const struct {
        const char *yaml;
        int source, target;
    } cases[] = {
        {"name: t\nsource_language: zh\ntarget_language: en\n" VALID_MODEL VALID_ARCH
         "train: {}\n", 1, 0},
        {VALID "train:\n  source_column: 1\n", 1, 0},
        {VALID "train:\n  target_column: 0\n", 1, 0},
        {VALID "train:\n  source_column: 3\n  target_column: 2\n", 3, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Config c;
        Error err = {""};
        const char *path;
        assert_int_equal(load_text(cases[i].yaml, &c, &err, &path), 0);
        assert_int_equal(c.train.source_column, cases[i].source);
        assert_int_equal(c.train.target_column, cases[i].target);
        config_free(&c);
    }
}

/* train.sources: paths resolved, each source's defaults, columns from
 * the train: section unless given; train_data is one source. */
static void train_sources_load_with_defaults(void **state)
{
    (void)state;
    Config c;
    Error err = {""};
    const char *path;
    const char *yaml = "name: t\nsource_language: zh\ntarget_language: en\n" VALID_MODEL VALID_ARCH
                       "train:\n  sources:\n    - path: a.tsv\n    - path: /abs/b.tsv\n      weight: 2.5\n"
                       "      target_column: 2\n      strip_notes: true\n"
                       "    - {path: c.tsv, format: cedict, weight: 0.25}\n"
                       "    - {path: c.tsv, format: names, weight: 0.5}\n"
                       "    - format: numbers\n"
                       "  simplify_with: c.tsv\n  max_length_ratio: 2.5\n";
    if (load_text(yaml, &c, &err, &path)) fail_msg("%s", err.message);
    const TrainConfig *t = &c.train;
    char want[512];
    assert_null(t->train_path);
    assert_int_equal(t->n_sources, 5);
    assert_true(t->sources[3].format == SOURCE_NAMES && t->sources[3].weight == 0.5f);
    assert_true(t->sources[4].format == SOURCE_NUMBERS && t->sources[4].weight == 1.0f);
    assert_null(t->sources[4].path); /* numbers reads no file */
    snprintf(want, sizeof want, "%s/a.tsv", temp_dir());
    assert_string_equal(t->sources[0].path, want);
    assert_true(t->sources[0].format == SOURCE_TSV && t->sources[0].weight == 1.0f && !t->sources[0].strip_notes);
    assert_int_equal(t->sources[0].source_column, 1); /* zh → en: the train: section's */
    assert_int_equal(t->sources[0].target_column, 0);
    assert_string_equal(t->sources[1].path, "/abs/b.tsv");
    assert_true(t->sources[1].weight == 2.5f && t->sources[1].strip_notes);
    assert_int_equal(t->sources[1].source_column, 0); /* one given: the other of 0 and 1, as in train: */
    assert_int_equal(t->sources[1].target_column, 2);
    assert_true(t->sources[2].format == SOURCE_CEDICT && t->sources[2].weight == 0.25f);
    snprintf(want, sizeof want, "%s/c.tsv", temp_dir());
    assert_string_equal(t->simplify_path, want);
    assert_true(t->max_length_ratio == 2.5f);
    config_free(&c);

    /* train_data (or its default) is one TSV source, weight 1, no table */
    assert_int_equal(load_text(VALID "train:\n  train_data: x.tsv\n  source_column: 3\n", &c, &err, &path), 0);
    snprintf(want, sizeof want, "%s/x.tsv", temp_dir());
    assert_string_equal(c.train.train_path, want);
    assert_int_equal(c.train.n_sources, 1);
    assert_string_equal(c.train.sources[0].path, want);
    assert_true(c.train.sources[0].weight == 1.0f && c.train.sources[0].format == SOURCE_TSV);
    assert_int_equal(c.train.sources[0].source_column, 3);
    assert_int_equal(c.train.sources[0].target_column, 0); /* the train: section's */
    assert_null(c.train.simplify_path);
    assert_true(c.train.max_length_ratio == 0.0f);
    config_free(&c);

    /* a source's one column, the same as the train: section's: the
     * section's other column, not "the other of 0 and 1" (as the source
     * column was already; it read column 0) */
    assert_int_equal(load_text(VALID "train:\n  source_column: 2\n  target_column: 3\n  sources:\n"
                                     "    - path: a.tsv\n      target_column: 3\n    - path: b.tsv\n"
                                     "      source_column: 2\n", &c, &err, &path), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(c.train.sources[i].source_column, 2);
        assert_int_equal(c.train.sources[i].target_column, 3);
    }
    config_free(&c);
}

static void yaml_spellings_of_values_are_accepted(void **state)
{
    (void)state;
    Config c;
    Error err = {""};
    const char *path;
    const char *yaml = VALID_HEAD VALID_MODEL
        "architecture: {d_model: 16, heads: 2, encoder_layers: 1, decoder_layers: 1, d_ff: 32,\n"
        "  activation: gelu, norm: pre, max_len: 8,\n"
        "  scale_attention: no, tied_output_embedding: On}\n"
        "decoding:\n  beam: +4\n  length_penalty: 0\n  max_output_ratio: 1.5e0\n";
    assert_int_equal(load_text(yaml, &c, &err, &path), 0);
    assert_false(c.arch.scale_attention);
    assert_true(c.arch.tied_output);
    assert_int_equal(c.decode.beam, 4);
    assert_true(c.decode.length_penalty == 0.0f && c.decode.max_output_ratio == 1.5f);
    config_free(&c);
}

/* Seeds are uint64: every value up to 2^64 - 1, stored exactly. */
static void seeds_take_every_uint64(void **state)
{
    (void)state;
    Config c;
    Error err = {""};
    const char *path;
    const char *yaml = VALID_HEAD "model:\n  weights: w.st\n  source_vocab: s.vocab\n  target_vocab: t.vocab\n"
                       "  random_init_seed: 9223372036854775808\n" VALID_ARCH
                       "train:\n  seed: 18446744073709551615\n";
    if (load_text(yaml, &c, &err, &path)) fail_msg("%s", err.message);
    assert_true(c.random_seed == 9223372036854775808ULL);
    assert_true(c.train.seed == UINT64_MAX);
    config_free(&c);
}

static void config_free_is_null_safe_and_zeroes(void **state)
{
    (void)state;
    config_free(NULL);
    Config c;
    Error err = {""};
    assert_int_equal(config_load("configs/en-zh.yaml", &c, &err), 0);
    config_free(&c);
    assert_true(is_zeroed(&c));
    config_free(&c); /* twice is harmless */
}

/* ---- configs that are rejected ------------------------------------------ */

typedef struct {
    const char *yaml;
    const char *where;  /* "line:col" expected right after the file name */
    const char *phrase; /* expected somewhere in the message */
} BadCase;

/* Each case must fail with "<path>:<where>: ...<phrase>..." and leave the
 * Config zeroed. */
static void check_rejected(const BadCase *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        Config c;
        Error err = {""};
        const char *path;
        int rc = load_text(cases[i].yaml, &c, &err, &path);
        char prefix[600];
        snprintf(prefix, sizeof prefix, "%s:%s: ", path, cases[i].where);
        bool ok = rc == -1 && strncmp(err.message, prefix, strlen(prefix)) == 0 &&
                  strstr(err.message, cases[i].phrase) && is_zeroed(&c);
        if (!ok) {
            print_error("case %zu: want \"%s...%s\", got rc %d \"%s\"\n", i, prefix,
                        cases[i].phrase, rc, err.message);
            config_free(&c);
            fail();
        }
    }
}

#define CHECK_REJECTED(cases) check_rejected(cases, sizeof cases / sizeof cases[0])

static void bad_train_sources_are_rejected(void **state)
{
    (void)state;
#define SOURCES VALID "train:\n  sources:\n" /* the list's items start at line 21 */
    static const BadCase cases[] = {
        {VALID "train:\n  train_data: a.tsv\n  sources:\n    - path: b.tsv\n", "21:3",
         "train: sources and train_data are both given (train_data is the one-source shorthand"},
        {VALID "train:\n  sources: []\n", "20:12", "train.sources: expected at least one source"},
        {VALID "train:\n  sources: a.tsv\n", "20:12", "train.sources: expected a list of sources, got 'a.tsv'"},
        {SOURCES "    - a.tsv\n", "21:7", "train.sources[0]: expected a mapping (path, format, weight, ...), got 'a.tsv'"},
        {SOURCES "    - path: a.tsv\n    - weight: 0.5\n", "22:7", "train.sources[1]: missing required key 'path'"},
        {SOURCES "    - path: a.tsv\n      wieght: 1\n", "22:7", "unknown key 'wieght' in train.sources[0]"},
        {SOURCES "    - path: a.tsv\n      path: b.tsv\n", "22:7", "duplicate key 'path' in train.sources[0]"},
        {SOURCES "    - path: a.tsv\n      weight: 0\n", "22:15",
         "train.sources[0].weight: 0 is out of range (must be in (0, 100])"},
        {SOURCES "    - path: a.tsv\n      weight: 101\n", "22:15", "train.sources[0].weight: 101 is out of range"},
        {SOURCES "    - path: a.tsv\n      weight: lots\n", "22:15",
         "train.sources[0].weight: expected a number, got 'lots'"},
        {SOURCES "    - path: a.tsv\n      format: csv\n", "22:15",
         "train.sources[0].format: expected tsv, cedict, names or numbers, got 'csv'"},
        {SOURCES "    - path: ''\n", "21:13", "train.sources[0].path: expected a non-empty string"},
        {SOURCES "    - path: a.tsv\n      strip_notes: maybe\n", "22:20",
         "train.sources[0].strip_notes: expected true or false, got 'maybe'"},
        {SOURCES "    - path: a.tsv\n      source_column: 16\n", "22:22",
         "train.sources[0].source_column: 16 is out of range (must be in 0..15)"},
        {SOURCES "    - path: a.tsv\n    - path: d.tsv\n      format: cedict\n      target_column: 1\n", "24:7",
         "train.sources[1].target_column: not used with format cedict (its columns are fixed)"},
        {SOURCES "    - path: d.tsv\n      format: cedict\n      strip_notes: true\n", "23:7",
         "train.sources[0].strip_notes: not used with format cedict"},
        {SOURCES "    - path: d.tsv\n      format: names\n", "19:1",
         "train.sources[0]: format names takes the pairs of the tsv sources listed before it, and there is none"},
        {SOURCES "    - path: d.tsv\n      format: names\n      source_column: 0\n", "23:7",
         "train.sources[0].source_column: not used with format names (its columns are fixed)"},
        {SOURCES "    - format: numbers\n", "19:1",
         "train.sources[0]: format numbers takes the pairs of the tsv sources listed before it, and there is none"},
        {SOURCES "    - path: a.tsv\n    - format: numbers\n      path: a.tsv\n", "23:7",
         "train.sources[1].path: not used with format numbers (its pairs are those of the tsv sources above it)"},
        {SOURCES "    - path: a.tsv\n    - format: numbers\n      strip_notes: true\n", "23:7",
         "train.sources[1].strip_notes: not used with format numbers (its pairs are those of the tsv sources "
         "above it)"},
        {SOURCES "    - path: a.tsv\n    - format: cedict\n", "22:7", "train.sources[1]: missing required key 'path'"},
        {SOURCES "    - path: a.tsv\n      source_column: 1\n      target_column: 1\n", "19:1",
         "train.sources[0]: source_column and target_column are both 1"},
        {SOURCES "    - path: a.tsv\n      &x weight: 1\n", "22:7", "anchors (&x) are not supported"},
        {VALID "train:\n  max_length_ratio: 0.5\n", "20:3",
         "train.max_length_ratio: 0.5 would drop every pair (must be 0, off, or >= 1)"},
        {VALID "train:\n  max_length_ratio: -1\n", "20:21", "train.max_length_ratio: -1 is out of range (must be >= 0)"},
        /* past an int: the range said only ">= 1", which 99999999999 is */
        {VALID "train:\n  batch_tokens: 99999999999\n", "20:17",
         "train.batch_tokens: 99999999999 is out of range (must be in 1..2147483647)"},
        {VALID "train:\n  simplify_with: [a]\n", "20:18", "train.simplify_with: expected a single value, got a list"},
    };
#undef SOURCES
    CHECK_REJECTED(cases);
}

/* 64 sources fit train's fixed tables; a 65th is refused at its item
 * (accepted, it wrote one past the end of train --vocab's list of inputs). */
static void at_most_64_train_sources(void **state)
{
    (void)state;
    for (int n = 64; n <= 65; n++) {
        char *yaml = xmalloc(strlen(VALID) + 32 + (size_t)n * 24);
        char *p = yaml + sprintf(yaml, "%s", VALID "train:\n  sources:\n");
        for (int i = 0; i < n; i++) p += sprintf(p, "    - path: s%d.tsv\n", i);
        Config c;
        Error err = {""};
        const char *path;
        int rc = load_text(yaml, &c, &err, &path);
        if (n == 64) {
            if (rc != 0) fail_msg("64 sources: %s", err.message);
            assert_int_equal(c.train.n_sources, 64);
            config_free(&c);
        } else {
            assert_int_equal(rc, -1);
            expect_in(err.message, ":85:7: train.sources: more than 64 sources");
        }
        free(yaml);
    }
}

static void syntax_errors_name_line_and_column(void **state)
{
    (void)state;
    static const BadCase cases[] = {
        {"architecture: {d_model: 16, heads: 2\n", "2:1", "did not find expected ',' or '}'"},
        {"name: \"unterminated\n", "2:1", "unexpected end of stream"},
        {"name: t\nmodel:\n  weights: a\n   source_vocab: b\n", "4:16",
         "mapping values are not allowed"},
        {"name: t\nmodel:\n\tweights: a\n", "3:1", "cannot start any token"},
    };
    CHECK_REJECTED(cases);
}

static void unknown_keys_are_rejected_at_every_level(void **state)
{
    (void)state;
    static const BadCase cases[] = {
        {"nmae: t\n", "1:1", "unknown key 'nmae'"},
        {"model:\n  wieghts: w\n", "2:3", "unknown key 'wieghts' in model"},
        {"architecture:\n  d_model: 16\n  d_modle: 16\n", "3:3",
         "unknown key 'd_modle' in architecture"},
        {"decoding:\n  beams: 4\n", "2:3", "unknown key 'beams' in decoding"},
        {"train:\n  lr: 0.1\n", "2:3", "unknown key 'lr' in train"},
        {"? [a, b]\n: c\n", "1:3", "expected a key"},
    };
    CHECK_REJECTED(cases);
}

static void wrong_types_are_rejected(void **state)
{
    (void)state;
    static const BadCase cases[] = {
        {"architecture:\n  d_model: abc\n", "2:12",
         "architecture.d_model: expected an integer, got 'abc'"},
        {"architecture:\n  d_model: 16.0\n", "2:12", "expected an integer, got '16.0'"},
        {"architecture:\n  heads: 2x\n", "2:10", "expected an integer, got '2x'"},
        {"architecture:\n  d_model: \"16\"\n", "2:12", "got the quoted string '16'"},
        {"architecture:\n  d_model:\n", "2:11", "expected an integer, got an empty value"},
        {"architecture:\n  scale_attention: maybe\n", "2:20", "got 'maybe'"},
        {"architecture:\n  tied_output_embedding: 1\n", "2:26", "expected true or false"},
        {"decoding:\n  length_penalty: abc\n", "2:19", "length_penalty: expected a number"},
        {"decoding:\n  length_penalty: 40\n", "2:19", "decoding.length_penalty: 40 is out of range (must be in [0, 10])"},
        {"decoding:\n  length_penalty: nan\n", "2:19", "expected a finite number, got 'nan'"},
        {"train:\n  dropout: inf\n", "2:12", "expected a finite number"},
        {"name: [a, b]\n", "1:7", "name: expected a single value, got a list"},
        {"name: t\nmodel: w.st\n", "2:8", "model: expected a mapping, got 'w.st'"},
        {"architecture: [16, 2]\n", "1:15", "architecture: expected a mapping, got a list"},
        {"decoding:\n", "1:10", "decoding: expected a mapping, got an empty value"},
        {"name: ''\n", "1:7", "name: expected a non-empty string"},
        {"name: ~\n", "1:7", "name: expected a non-empty string, not YAML's null '~'"},
        {"name: t\nmodel:\n  weights: null\n", "3:12",
         "model.weights: expected a non-empty string, not YAML's null 'null'"},
        /* YAML 1.1's other spellings of null: a file named Null got a random model */
        {"name: t\nmodel:\n  weights: Null\n", "3:12", "not YAML's null 'Null'"},
        {"name: t\nmodel:\n  weights: NULL\n", "3:12", "not YAML's null 'NULL'"},
        /* YAML's \0 escape would end the C string: "x.safetensors\0.old" loaded x.safetensors */
        {"name: t\nmodel:\n  weights: \"x.safetensors\\0.old\"\n", "3:12",
         "model.weights: the value holds a NUL character"},
        {"name: t\narchitecture:\n  d_model: \"16\\0\"\n", "3:12", "the value holds a NUL character"},
    };
    CHECK_REJECTED(cases);
}

static void bad_choices_are_rejected(void **state)
{
    (void)state;
    static const BadCase cases[] = {
        {"source_language: fr\n", "1:18", "source_language: expected en or zh, got 'fr'"},
        {"target_language: EN\n", "1:18", "expected en or zh"},
        {"architecture:\n  activation: tanh\n", "2:15", "expected relu or gelu, got 'tanh'"},
        {"architecture:\n  norm: middle\n", "2:9", "expected post or pre, got 'middle'"},
        {"name: t\nsource_language: en\ntarget_language: en\n" VALID_MODEL VALID_ARCH, "3:1",
         "target_language: must differ from source_language"},
    };
    CHECK_REJECTED(cases);
}

static void out_of_range_values_are_rejected(void **state)
{
    (void)state;
    static const BadCase cases[] = {
        {"architecture:\n  d_model: 0\n", "2:12",
         "architecture.d_model: 0 is out of range (must be in 1..8192)"},
        {"architecture:\n  d_model: 8193\n", "2:12", "out of range"},
        {"architecture:\n  d_model: 99999999999999999999999\n", "2:12", "is too large"},
        {"architecture:\n  heads: 257\n", "2:10", "in 1..256"},
        {"architecture:\n  encoder_layers: -1\n", "2:19", "in 1..64"},
        {"architecture:\n  max_len: 1\n", "2:12", "in 2..4096"},
        {"model:\n  random_init_seed: -5\n", "2:21", "must be >= 0"},
        {"decoding:\n  beam: 65\n", "2:9", "decoding.beam: 65 is out of range"},
        {"decoding:\n  length_penalty: -0.5\n", "2:19", "must be in [0, 10]"},
        {"decoding:\n  max_output_ratio: 0\n", "2:21", "must be > 0"},
        {"decoding:\n  max_output_extra: -1\n", "2:21", "must be in 0..2147483647"},
        {"train:\n  source_column: 16\n", "2:18", "in 0..15"},
        {"train:\n  source_vocab_size: 4\n", "2:22", "must be in 5..2147483647"},
        {"train:\n  learning_rate: 0\n", "2:18", "must be > 0"},
        {"train:\n  learning_rate: 1e39\n", "2:18", "1e39 is too large"},
        {"train:\n  dropout: 1.0\n", "2:12", "must be in [0, 1)"},
        {"train:\n  label_smoothing: -0.1\n", "2:20", "must be in [0, 1)"},
        {"train:\n  weight_decay: -1\n", "2:17", "must be >= 0"},
        {"train:\n  clip_norm: -0.01\n", "2:14", "must be >= 0"},
        {"train:\n  epochs: 0\n", "2:11", "must be in 1..2147483647"},
        {"architecture:\n  d_model: 16\n  heads: 3\n  encoder_layers: 1\n  decoder_layers: 1\n"
         "  d_ff: 32\n  activation: relu\n  norm: post\n  max_len: 8\n"
         "  scale_attention: true\n  tied_output_embedding: true\n",
         "3:3", "d_model 16 is not divisible by heads 3"},
        {VALID "train:\n  source_column: 1\n  target_column: 1\n", "19:1",
         "source_column and target_column are both 1"},
    };
    CHECK_REJECTED(cases);
}

/* A number means what it says or is refused: no silent underflow to 0, no
 * hex, no leading zeros (YAML 1.1 reads 016 as octal 14), no wrap-around. */
static void numbers_are_read_as_written(void **state)
{
    (void)state;
    static const BadCase cases[] = {
        {"train:\n  learning_rate: 1e-50\n", "2:18", "learning_rate: 1e-50 is too small"},
        {"train:\n  weight_decay: 1e-40\n", "2:17", "1e-40 is too small"},
        {"train:\n  weight_decay: 1e-400\n", "2:17", "1e-400 is too small"},
        {"decoding:\n  length_penalty: 0x1p-2\n", "2:19", "hexadecimal numbers are not supported"},
        {"decoding:\n  length_penalty: -0X1\n", "2:19", "hexadecimal"},
        {"architecture:\n  d_model: 016\n", "2:12", "016: leading zeros are refused (YAML 1.1 reads it as octal)"},
        {"architecture:\n  d_model: +016\n", "2:12", "leading zeros"},
        {"decoding:\n  length_penalty: 01.5\n", "2:19", "leading zeros"},
        {"train:\n  seed: 18446744073709551616\n", "2:9", "18446744073709551616 is too large"},
        {"train:\n  seed: -1\n", "2:9", "must be >= 0"},
        {"model:\n  random_init_seed: 0x10\n", "2:21", "expected an integer"},
    };
    CHECK_REJECTED(cases);
}

/* A subword vocabulary needs room for pieces after its 4 specials and
 * 448 byte tokens: a config error, not a failure after reading the data
 * (a word vocabulary has no byte tokens: 200 is fine there). */
static void subword_vocabularies_need_room(void **state)
{
    (void)state;
    static const BadCase cases[] = {
        {VALID "train:\n  source_vocab_size: 452\n", "19:1", "a subword vocabulary needs a size above 452"},
        {VALID "train:\n  target_vocab_size: 200\n", "19:1", "target_vocab_size 200"},
    };
    CHECK_REJECTED(cases);
    Config c;
    Error err = {{0}};
    const char *path;
    assert_int_equal(load_text(VALID "train:\n  vocabulary: word\n  source_vocab_size: 200\n", &c, &err, &path), 0);
    config_free(&c);
    assert_int_equal(load_text(VALID "train:\n  source_vocab_size: 453\n", &c, &err, &path), 0);
    config_free(&c);
}

/* train writes three files; one name for two of them would make one
 * overwrite the other (the checkpoint over the model). */
static void train_outputs_must_differ(void **state)
{
    (void)state;
    static const BadCase cases[] = {
        {VALID "train:\n  checkpoint: w.st\n", "19:1", "train.checkpoint and model.weights are the same file"},
        /* the weights are written too (--init-weights --force, a seeded model) */
        {VALID_HEAD "model:\n  weights: s.vocab\n  source_vocab: s.vocab\n  target_vocab: t.vocab\n" VALID_ARCH,
         "5:3", "model.weights and model.source_vocab are the same file"},
        {VALID_HEAD "model:\n  weights: w\n  source_vocab: s\n  target_vocab: w\n" VALID_ARCH,
         "5:3", "model.weights and model.target_vocab are the same file"},
        /* load_text writes the config as config.yaml: these name it */
        {VALID_HEAD "model:\n  weights: config.yaml\n  source_vocab: s\n  target_vocab: t\n" VALID_ARCH,
         "5:3", "model.weights and the config itself are the same file"},
        {VALID_HEAD "model:\n  weights: w\n  source_vocab: s\n  target_vocab: ./config.yaml\n" VALID_ARCH,
         "7:3", "model.target_vocab and the config itself are the same file"},
        {VALID_HEAD "model:\n  weights: w\n  source_vocab: ./config.yaml\n  target_vocab: t\n" VALID_ARCH,
         "6:3", "model.source_vocab and the config itself are the same file"},
        {VALID "train:\n  log: w.st\n", "19:1", "train.log and model.weights are the same file"},
        {VALID "train:\n  checkpoint: x\n  log: x\n", "19:1", "train.log and train.checkpoint are the same file"},
        /* model.simplify: a file the weights may not overwrite, read for Chinese sources only */
        {"name: t\nsource_language: zh\ntarget_language: en\nmodel:\n  weights: w\n  source_vocab: s\n"
         "  target_vocab: t\n  simplify: w\n" VALID_ARCH,
         "5:3", "model.weights and model.simplify are the same file"},
        {VALID_HEAD "model:\n  weights: w\n  source_vocab: s\n  target_vocab: t\n  simplify: z.tsv\n" VALID_ARCH,
         "4:1", "model.simplify reads Chinese sources as Simplified: source_language is en"},
    };
    CHECK_REJECTED(cases);
}

static void missing_required_keys_point_at_the_mapping(void **state)
{
    (void)state;
    static const BadCase cases[] = {
        {"source_language: en\ntarget_language: zh\n" VALID_MODEL VALID_ARCH, "1:1",
         "missing required key 'name'"},
        {VALID_HEAD VALID_MODEL, "1:1", "missing required key 'architecture'"},
        {VALID_HEAD VALID_ARCH, "1:1", "missing required key 'model'"},
        {"model:\n  source_vocab: s\n  target_vocab: t\n", "2:3",
         "model: missing required key 'weights'"},
        {"architecture:\n  d_model: 16\n  encoder_layers: 1\n  decoder_layers: 1\n  d_ff: 32\n"
         "  activation: relu\n  norm: post\n  max_len: 8\n  scale_attention: true\n"
         "  tied_output_embedding: true\n",
         "2:3", "architecture: missing required key 'heads'"},
    };
    CHECK_REJECTED(cases);
}

static void document_shape_errors_are_rejected(void **state)
{
    (void)state;
    static const BadCase cases[] = {
        {"", "1:1", "empty file"},
        {"# only a comment\n", "2:1", "empty file"},
        {"- a\n- b\n", "1:1", "expected a mapping of settings, got a list"},
        {"hello\n", "1:1", "expected a mapping of settings, got 'hello'"},
        {VALID "---\nname: u\n", "19:1", "more than one document"},
        {"name: t\nname: u\n", "2:1", "duplicate key 'name'"},
        {"architecture:\n  heads: 2\n  heads: 2\n", "3:3", "duplicate key 'heads' in architecture"},
        {"name: &n t\n", "1:7", "anchors (&n) are not supported"},
        {"name: t\ntarget_language: *n\n", "2:18", "aliases (*n) are not supported"},
        {"name: !!str t\n", "1:7", "tags"},
    };
    CHECK_REJECTED(cases);
}

static void invalid_utf8_names_the_byte_offset(void **state)
{
    (void)state;
    Config c;
    Error err = {""};
    const char *path;
    assert_int_equal(load_text("name: \xff\n", &c, &err, &path), -1);
    char want[600];
    snprintf(want, sizeof want, "%s: byte 6: ", path);
    assert_memory_equal(err.message, want, strlen(want));
    assert_true(is_zeroed(&c));
}

static void missing_file_and_directory_are_reported(void **state)
{
    (void)state;
    Config c;
    Error err = {""};
    char path[600];
    snprintf(path, sizeof path, "%s/no-such.yaml", temp_dir());
    assert_int_equal(config_load(path, &c, &err), -1);
    char want[700];
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", path);
    assert_string_equal(err.message, want);
    assert_true(is_zeroed(&c));

    assert_int_equal(config_load(temp_dir(), &c, &err), -1);
    snprintf(want, sizeof want, "%s: is a directory", temp_dir());
    assert_string_equal(err.message, want);
    assert_true(is_zeroed(&c));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(en_zh_config_loads_with_expected_values),
        cmocka_unit_test(en_zh_train_section_loads),
        cmocka_unit_test(every_config_in_the_repository_loads),
        cmocka_unit_test(zh_en_config_mirrors_en_zh),
        cmocka_unit_test(tiny_config_loads_with_decoding_defaults),
        cmocka_unit_test(random_init_is_off_without_a_seed),
        cmocka_unit_test(paths_are_resolved_against_the_yaml_folder),
        cmocka_unit_test(paths_beside_a_yaml_in_the_current_folder_are_kept),
        cmocka_unit_test(train_defaults_are_applied),
        cmocka_unit_test(train_vocabulary_word_is_accepted),
        cmocka_unit_test(train_columns_default_from_the_languages),
        cmocka_unit_test(yaml_spellings_of_values_are_accepted),
        cmocka_unit_test(config_free_is_null_safe_and_zeroes),
        cmocka_unit_test(at_most_64_train_sources),
        cmocka_unit_test(syntax_errors_name_line_and_column),
        cmocka_unit_test(unknown_keys_are_rejected_at_every_level),
        cmocka_unit_test(wrong_types_are_rejected),
        cmocka_unit_test(bad_choices_are_rejected),
        cmocka_unit_test(out_of_range_values_are_rejected),
        cmocka_unit_test(numbers_are_read_as_written),
        cmocka_unit_test(train_outputs_must_differ),
        cmocka_unit_test(subword_vocabularies_need_room),
        cmocka_unit_test(seeds_take_every_uint64),
        cmocka_unit_test(missing_required_keys_point_at_the_mapping),
        cmocka_unit_test(document_shape_errors_are_rejected),
        cmocka_unit_test(invalid_utf8_names_the_byte_offset),
        cmocka_unit_test(missing_file_and_directory_are_reported),
        cmocka_unit_test(train_sources_load_with_defaults),
        cmocka_unit_test(bad_train_sources_are_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
