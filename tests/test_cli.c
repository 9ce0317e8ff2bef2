/* test_cli.c — ./translate end to end, as a user runs it: what it prints,
 * where, and with which exit status, for good and bad input. */
#include "testutil.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/utf8.h"

#define TINY "configs/tiny.yaml"

static RunResult run(const char *const argv[], const char *input)
{
    return run_program(argv, input, input ? strlen(input) : 0);
}

/* The n-th line (0-based) of s, copied into a static buffer. */
static const char *line_of(const char *s, int n)
{
    static char buf[4096];
    for (int i = 0; i < n && s; i++) {
        s = strchr(s, '\n');
        if (s) s++;
    }
    if (!s) return NULL;
    size_t len = strcspn(s, "\n");
    snprintf(buf, sizeof buf, "%.*s", (int)len, s);
    return buf;
}

/* ---- usage ---------------------------------------------------------------- */

static void test_help_and_version(void **state)
{
    (void)state;
    const char *help[] = {"./translate", "--help", NULL};
    RunResult r = run(help, NULL);
    assert_int_equal(r.status, 0);
    expect_in(r.out, "Usage: translate");
    expect_in(r.out, "--attention");
    /* `--alignment 1` is refused, not translated (ac3eb36): --help showed
     * only --alignment[=...], so the spaced value was README's alone */
    expect_in(r.out, "Spaced too: a hard, soft");
    run_result_free(&r);
    const char *version[] = {"./translate", "-V", NULL};
    r = run(version, NULL);
    assert_int_equal(r.status, 0);
    expect_in(r.out, "translate 0.");
    run_result_free(&r);
}

static void test_unknown_option_is_usage_error(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "--frobnicate", "x", NULL};
    RunResult r = run(argv, NULL);
    assert_int_equal(r.status, 2);
    expect_in(r.err, "--help");
    assert_int_equal(r.out_len, 0);
    run_result_free(&r);
}

/* --threads takes 1 to 64, the pool's limit, in both programs: 65 is a
 * usage error (up to 256 were taken and 64 run, quietly). */
static void test_threads_beyond_the_pool_are_refused(void **state)
{
    (void)state;
    const char *const programs[][6] = {{"./translate", "-t", "65", "x", NULL},
                                       {"./train", "-t", "65", "configs/tiny.yaml", NULL}};
    for (int i = 0; i < 2; i++) {
        RunResult r = run(programs[i], NULL);
        assert_int_equal(r.status, 2);
        expect_in(r.err, "--threads: expected a number from 1 to 64, got '65'");
        run_result_free(&r);
    }
}

/* Its worker threads are joined before translate returns: valgrind
 * counted 288 bytes "possibly lost" (a thread's own memory) for each one
 * left running.  Two lines in mini-batches of one on 2 threads: each
 * thread takes a mini-batch whatever the model's size (model/search.c),
 * so the worker starts. */
static void test_workers_are_joined_before_exit(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "-q", "-c", TINY, "-t", "2", "--mini-batch", "1", NULL};
    RunResult r = run_under_valgrind(argv, "I\nlove\n", 7);
    if (r.status != 0) print_in_full(&r);
    assert_int_equal(r.status, 0);
    assert_int_equal(count_lines(r.out), 2);
    run_result_free(&r);
}

/* ---- translating ------------------------------------------------------------ */

static void test_one_line_per_argument(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "-c", TINY, "I love China.", "How are you?", NULL};
    RunResult r = run(argv, NULL);
    assert_int_equal(r.status, 0);
    assert_int_equal(count_lines(r.out), 2);
    assert_true(strlen(line_of(r.out, 0)) > 0);
    run_result_free(&r);
}

static void test_batch_keeps_order_and_survives_a_bad_line(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "-c", TINY, NULL};
    RunResult good = run(argv, "I love China.\nHow are you?\n");
    RunResult r = run(argv, "I love China.\nbad \xC3\x28 byte\nHow are you?\n");
    assert_int_equal(r.status, 1);
    assert_int_equal(count_lines(r.out), 3);
    char first[4096];
    snprintf(first, sizeof first, "%s", line_of(good.out, 0));
    assert_string_equal(line_of(r.out, 0), first);
    assert_string_equal(line_of(r.out, 1), "");
    assert_string_equal(line_of(r.out, 2), line_of(good.out, 1));
    expect_in(r.err, "line 2: invalid UTF-8 at byte 4");
    run_result_free(&good);
    run_result_free(&r);
}

static void test_empty_and_blank_lines_are_errors(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "-c", TINY, NULL};
    RunResult r = run(argv, "\n   \t \nI love China.\n");
    assert_int_equal(r.status, 1);
    assert_int_equal(count_lines(r.out), 3);
    expect_in(r.err, "line 1: empty input");
    expect_in(r.err, "line 2: empty input");
    assert_true(strlen(line_of(r.out, 2)) > 0);
    run_result_free(&r);
}

static void test_input_longer_than_max_len(void **state)
{
    (void)state;
    char text[400] = "";
    for (int i = 0; i < 40; i++) strcat(text, "love ");
    const char *argv[] = {"./translate", "-c", TINY, text, NULL};
    RunResult r = run(argv, NULL);
    assert_int_equal(r.status, 1);
    expect_in(r.err, "40 tokens, more than max_len 32");
    run_result_free(&r);
}

static void test_very_long_line_is_rejected_not_read_whole(void **state)
{
    (void)state;
    size_t n = 1 << 20;
    char *input = malloc(n + 32);
    memset(input, 'a', n);
    strcpy(input + n, "\nI love China.\n");
    const char *argv[] = {"./translate", "-c", TINY, NULL};
    RunResult r = run(argv, input);
    assert_int_equal(r.status, 1);
    assert_int_equal(count_lines(r.out), 2);
    expect_in(r.err, "line 1: longer than 65536 bytes");
    assert_true(strlen(line_of(r.out, 1)) > 0);
    free(input);
    run_result_free(&r);
}

static void test_crlf_input_is_the_same_as_lf(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "-c", TINY, NULL};
    RunResult lf = run(argv, "I love China.\nHow are you?\n");
    RunResult crlf = run(argv, "I love China.\r\nHow are you?\r\n");
    assert_int_equal(crlf.status, 0);
    assert_string_equal(lf.out, crlf.out);
    run_result_free(&lf);
    run_result_free(&crlf);
}

static void test_unknown_words_are_reported_not_dropped(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "-c", TINY, "I love Zanzibar", NULL};
    RunResult r = run(argv, NULL);
    assert_int_equal(r.status, 0);
    expect_in(r.err, "1 unknown word mapped to <unk>: 'Zanzibar'");
    run_result_free(&r);
}

static void test_han_text_picks_the_zh_en_model(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "我想吃酸菜鱼", NULL};
    RunResult r = run(argv, NULL);
    assert_int_equal(r.status, 0);
    expect_in(r.err, "zh-en.yaml (input reads as Chinese)");
    run_result_free(&r);
}

/* ---- the shipped models --------------------------------------------------------- */

/* Traditional Chinese reads as Simplified (zh-en's model.simplify), said in
 * a note: 這是我的電腦。 was bytes the model never saw ("It's me that I'm a
 * river in my tail.").  Batched or a line at a time. */
static void test_traditional_input_reads_as_simplified(void **state)
{
    (void)state;
    const char *simplified[] = {"./translate", "-c", "zh-en", "这是我的电脑。", NULL};
    const char *traditional[] = {"./translate", "-c", "zh-en", "這是我的電腦。", NULL};
    RunResult want = run(simplified, NULL), got = run(traditional, NULL);
    assert_int_equal(got.status, 0);
    assert_string_equal(got.out, want.out);
    expect_in(got.err, "line 1: note: 3 Traditional characters read as Simplified\n");
    assert_null(strstr(want.err, "Traditional"));
    const char *piped[] = {"./translate", "-c", "zh-en", NULL};
    RunResult batch = run(piped, "這是我的電腦。\n這是我的電腦。\n");
    assert_int_equal(batch.status, 0);
    expect_in(batch.err, "line 2: note: 3 Traditional characters read as Simplified\n");
    run_result_free(&want);
    run_result_free(&got);
    run_result_free(&batch);
    /* --eval reads its sources the same way (it scored them as they were) */
    static const char pairs[] = "This is my computer.\t這是我的電腦。\n";
    const char *eval[] = {"./translate", "-q", "-c", "zh-en", "--eval", temp_file("trad.tsv", pairs, sizeof pairs - 1),
                          "--hyps", "-", NULL};
    RunResult e = run(eval, NULL);
    assert_int_equal(e.status, 0);
    expect_in(e.out, "BLEU 100.00  chrF2 100.00");
    run_result_free(&e);
}

static void test_shipped_en_zh_translates_the_seed_example(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "-q", "I love china", NULL};
    RunResult r = run(argv, NULL);
    assert_int_equal(r.status, 0);
    if (strcmp(r.out, "我爱中国\n") != 0 && strcmp(r.out, "我爱中国。\n") != 0)
        fail_msg("expected 我爱中国(。), got %s", r.out);
    run_result_free(&r);
}

static void test_shipped_zh_en_translates_the_seed_example(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "-q", "-c", "configs/zh-en.yaml", "我想吃酸菜鱼", NULL};
    RunResult r = run(argv, NULL);
    assert_int_equal(r.status, 0);
    if (strncmp(r.out, "I want to eat", 13) != 0) fail_msg("expected 'I want to eat ...', got %s", r.out);
    /* Fluent: one sentence, ending in a full stop, and no word twice (the
     * models trained without train.drop_final_punctuation said "I want to
     * eat fish fish for the fish."). */
    size_t len = strlen(r.out);
    if (len < 2 || strcmp(r.out + len - 2, ".\n") != 0) fail_msg("expected one sentence ending in '.', got %s", r.out);
    char words[16][32];
    int n = 0;
    for (const char *p = r.out; *p && n < 16;) {
        size_t w = strcspn(p, " .\n");
        if (w > 0 && w < sizeof words[0]) {
            memcpy(words[n], p, w);
            words[n][w] = '\0';
            for (int i = 0; i < n; i++)
                if (strcmp(words[i], words[n]) == 0) fail_msg("'%s' twice in %s", words[n], r.out);
            n++;
        }
        p += w + (p[w] != '\0');
    }
    run_result_free(&r);
}

/* ---- the attention JSON --------------------------------------------------------- */

static const cJSON *get(const cJSON *obj, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!item) fail_msg("JSON has no '%s'", key);
    return item;
}

/* maps is [layers][heads][rows][cols]; rows are distributions. */
static void check_maps(const cJSON *maps, int layers, int heads, int rows, int cols, bool causal)
{
    assert_int_equal(cJSON_GetArraySize(maps), layers);
    const cJSON *layer, *head, *row;
    cJSON_ArrayForEach(layer, maps) {
        assert_int_equal(cJSON_GetArraySize(layer), heads);
        cJSON_ArrayForEach(head, layer) {
            assert_int_equal(cJSON_GetArraySize(head), rows);
            int i = 0;
            cJSON_ArrayForEach(row, head) {
                assert_int_equal(cJSON_GetArraySize(row), cols);
                double sum = 0;
                for (int j = 0; j < cols; j++) {
                    double v = cJSON_GetArrayItem(row, j)->valuedouble;
                    sum += v;
                    if (causal && j > i) assert_true(v == 0.0);
                }
                assert_true(fabs(sum - 1.0) < 1e-5);
                i++;
            }
        }
    }
}

/* File names are bytes, JSON is UTF-8: a config in a folder whose name is
 * not UTF-8 gave a document json.load refused (UnicodeDecodeError); its
 * paths now say U+FFFD for such a byte. */
static void test_attention_json_is_utf8_whatever_the_paths(void **state)
{
    (void)state;
    char dir[512], link[600], cwd[512], target[600], config[700], path[512];
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(dir, sizeof dir, "%s/bad\xff\xfe name", temp_dir());
    mkdir(dir, 0755);
    snprintf(link, sizeof link, "%s/configs", dir);
    snprintf(target, sizeof target, "%s/configs", cwd);
    unlink(link);
    assert_int_equal(symlink(target, link), 0);
    snprintf(config, sizeof config, "%s/tiny.yaml", link);
    snprintf(path, sizeof path, "%s/utf8.json", temp_dir());
    const char *argv[] = {"./translate", "-q", "-c", config, "--attention", path, "I love China.", NULL};
    RunResult r = run(argv, NULL);
    if (r.status != 0) fail_msg("status %d: %s", r.status, r.err);
    size_t len;
    char *text = read_file(path, &len);
    assert_non_null(text);
    assert_true(utf8_valid(text, len));
    cJSON *doc = cJSON_Parse(text);
    assert_non_null(doc);
    expect_in(get(get(doc, "model"), "config_path")->valuestring, "/bad\xEF\xBF\xBD\xEF\xBF\xBD name/configs/");
    expect_in(get(get(doc, "model"), "weights_path")->valuestring, "/bad\xEF\xBF\xBD\xEF\xBF\xBD name/configs/");
    cJSON_Delete(doc);
    free(text);
    run_result_free(&r);
}

static void test_attention_json_shapes_and_token_roles(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/attn.json", temp_dir());
    const char *argv[] = {"./translate", "-c", "configs/zh-en.yaml", "--attention", path, "我想吃酸菜鱼", NULL};
    RunResult r = run(argv, NULL);
    assert_int_equal(r.status, 0);
    char *text = read_file(path, NULL);
    assert_non_null(text);
    cJSON *doc = cJSON_Parse(text);
    assert_non_null(doc);
    assert_string_equal(get(doc, "format")->valuestring, "translate-attention");
    const cJSON *model = get(doc, "model");
    int Le = get(model, "encoder_layers")->valueint, Ld = get(model, "decoder_layers")->valueint;
    int H = get(model, "heads")->valueint;
    assert_string_equal(get(model, "config_path")->valuestring, "configs/zh-en.yaml");
    const cJSON *s = cJSON_GetArrayItem(get(doc, "sentences"), 0);
    const cJSON *src = get(get(s, "source"), "tokens");
    assert_int_equal(cJSON_GetArraySize(src), 6); /* 我|想|吃|酸|菜|鱼 */
    assert_string_equal(cJSON_GetArrayItem(src, 0)->valuestring, "我");
    /* a word vocabulary: every token is a word of its own */
    const cJSON *word_of = get(get(s, "source"), "word_of"), *words = get(get(s, "source"), "words");
    assert_int_equal(cJSON_GetArraySize(words), 6);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(cJSON_GetArrayItem(word_of, i)->valueint, i);
        assert_string_equal(cJSON_GetArrayItem(words, i)->valuestring, cJSON_GetArrayItem(src, i)->valuestring);
    }
    const cJSON *in = get(get(s, "decoder_input"), "tokens"), *out = get(get(s, "output"), "tokens");
    int T = cJSON_GetArraySize(out);
    assert_int_equal(cJSON_GetArraySize(in), T);
    assert_string_equal(cJSON_GetArrayItem(in, 0)->valuestring, "<s>");
    for (int t = 1; t < T; t++)
        assert_string_equal(cJSON_GetArrayItem(in, t)->valuestring, cJSON_GetArrayItem(out, t - 1)->valuestring);
    check_maps(get(s, "encoder_attentions"), Le, H, 6, 6, false);
    check_maps(get(s, "decoder_attentions"), Ld, H, T, T, true);
    check_maps(get(s, "cross_attentions"), Ld, H, T, 6, false);
    cJSON_Delete(doc);
    free(text);
    run_result_free(&r);
}

/* The dump's own fields say what happened, each from its source: the
 * input line (counted from 1), d_k = d_model / heads, whether the number
 * rule acted, whether the model ended the translation, and the greedy
 * step's alternatives with their own log-probabilities. */
static cJSON *attention_of(const char *config, const char *input)
{
    char path[512];
    snprintf(path, sizeof path, "%s/fields.json", temp_dir());
    const char *argv[] = {"./translate", "-q", "-b", "1", "-c", config, "-a", path, NULL};
    RunResult r = run(argv, input);
    run_result_free(&r);
    char *text = read_file(path, NULL);
    assert_non_null(text);
    cJSON *doc = cJSON_Parse(text);
    assert_non_null(doc);
    free(text);
    return doc;
}

static void test_attention_json_fields_say_what_happened(void **state)
{
    (void)state;
    cJSON *doc = attention_of("configs/en-zh.yaml", "I love China.\nI have 3 cats.\n");
    const cJSON *model = get(doc, "model");
    assert_int_equal(get(model, "d_k")->valueint, get(model, "d_model")->valueint / get(model, "heads")->valueint);
    const cJSON *sentences = get(doc, "sentences");
    assert_int_equal(cJSON_GetArraySize(sentences), 2);
    for (int k = 0; k < 2; k++) {
        const cJSON *s = cJSON_GetArrayItem(sentences, k), *out = get(s, "output");
        assert_int_equal(get(s, "line")->valueint, k + 1);
        assert_true(cJSON_IsTrue(get(out, "finished")));
        /* "I have 3 cats.": the rule made sure of the 3; "I love China.": nothing to copy */
        assert_true(k == 1 ? cJSON_IsTrue(get(out, "copied_numbers")) : cJSON_IsFalse(get(out, "copied_numbers")));
        const cJSON *logprobs = get(out, "logprobs"), *top_k = get(out, "top_k");
        assert_int_equal(cJSON_GetArraySize(top_k), cJSON_GetArraySize(logprobs));
        for (int t = 0; t < cJSON_GetArraySize(top_k); t++) {
            const cJSON *alts = cJSON_GetArrayItem(top_k, t);
            double chosen = cJSON_GetArrayItem(logprobs, t)->valuedouble;
            double first = get(cJSON_GetArrayItem(alts, 0), "logprob")->valuedouble;
            double second = get(cJSON_GetArrayItem(alts, 1), "logprob")->valuedouble;
            assert_true(fabs(first - chosen) < 1e-6); /* greedy takes the most likely */
            assert_true(second < first);
        }
    }
    cJSON_Delete(doc);
    /* tiny's random weights never write </s>: stopped at the length limit */
    doc = attention_of("configs/tiny.yaml", "I love China.\n");
    assert_true(cJSON_IsFalse(get(get(cJSON_GetArrayItem(get(doc, "sentences"), 0), "output"), "finished")));
    cJSON_Delete(doc);
}

/* One map per layer of each stack: a model of 3 encoder layers and 1
 * decoder layer (random weights, written on first use) has 3 encoder maps
 * and 1 decoder and 1 cross map, each of `heads` heads; every test model
 * else has equal stacks, where the two counts swapped went unseen (and
 * read 3 decoder layers' maps out of 1). */
static void test_attention_json_has_a_map_per_layer_of_each_stack(void **state)
{
    (void)state;
    char cwd[512], yaml[2048], weights[600];
    if (!getcwd(cwd, sizeof cwd)) abort();
    snprintf(weights, sizeof weights, "%s/%s/three-one.safetensors", cwd, temp_dir());
    snprintf(yaml, sizeof yaml,
             "name: three-one\nsource_language: en\ntarget_language: zh\nmodel:\n"
             "  weights: %s\n  source_vocab: %s/tests/data/tiny.src.vocab\n"
             "  target_vocab: %s/tests/data/tiny.tgt.vocab\n  random_init_seed: 7\narchitecture:\n"
             "  d_model: 16\n  heads: 2\n  encoder_layers: 3\n  decoder_layers: 1\n  d_ff: 32\n"
             "  activation: gelu\n  norm: pre\n  max_len: 32\n  scale_attention: true\n"
             "  tied_output_embedding: true\n",
             weights, cwd, cwd);
    cJSON *doc = attention_of(temp_file("three-one.yaml", yaml, strlen(yaml)), "I love China.\n");
    const cJSON *model = get(doc, "model");
    assert_int_equal(get(model, "encoder_layers")->valueint, 3);
    assert_int_equal(get(model, "decoder_layers")->valueint, 1);
    const cJSON *s = cJSON_GetArrayItem(get(doc, "sentences"), 0);
    static const struct {
        const char *key;
        int layers;
    } stacks[] = {{"encoder_attentions", 3}, {"decoder_attentions", 1}, {"cross_attentions", 1}};
    for (size_t i = 0; i < 3; i++) {
        const cJSON *layers = get(s, stacks[i].key);
        if (cJSON_GetArraySize(layers) != stacks[i].layers)
            fail_msg("%s: %d layers, wanted %d", stacks[i].key, cJSON_GetArraySize(layers), stacks[i].layers);
        for (int l = 0; l < stacks[i].layers; l++)
            assert_int_equal(cJSON_GetArraySize(cJSON_GetArrayItem(layers, l)), 2); /* heads */
    }
    cJSON_Delete(doc);
}

/* The file is the document as cJSON_Print gives it, indented the same
 * all the way down: the sentences, printed one at a time as they come
 * (attention_json.c), line up with the rest. */
static void test_attention_json_is_printed_as_one_document(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/printed.json", temp_dir());
    RunResult r = run((const char *[]){"./translate", "-q", "-c", TINY, "-a", path, NULL}, "hello\nI love China.\n");
    assert_int_equal(r.status, 0);
    run_result_free(&r);
    size_t len;
    char *text = read_file(path, &len);
    assert_non_null(text);
    cJSON *doc = cJSON_Parse(text);
    assert_non_null(doc);
    char *again = cJSON_Print(doc);
    assert_true(len > 0 && text[len - 1] == '\n');
    text[len - 1] = '\0';
    if (strcmp(text, again) != 0) {
        size_t at = 0;
        while (text[at] == again[at]) at++;
        fail_msg("the file differs from its document printed again at byte %zu: ...%.60s", at, text + at);
    }
    cJSON_free(again);
    cJSON_Delete(doc);
    free(text);
}

static void test_unwritable_attention_path(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "-c", TINY, "-a", "/nonexistent-dir/a.json", "I love China.", NULL};
    RunResult r = run(argv, NULL);
    assert_int_equal(r.status, 4);
    assert_int_equal(count_lines(r.out), 1); /* the translation is not lost */
    expect_in(r.err, "/nonexistent-dir/a.json: cannot write");
    assert_int_equal(count_lines_without(r.err, CUT_SHORT_NOTE), 1);
    run_result_free(&r);
}

/* ---- broken configs and weights ------------------------------------------------- */

/* A copy of the tiny config with absolute vocabulary paths and the given
 * weights path and d_model. */
static const char *config_with(const char *name, const char *weights, int d_model)
{
    char cwd[512], yaml[2048];
    if (!getcwd(cwd, sizeof cwd)) abort();
    snprintf(yaml, sizeof yaml,
             "name: broken\nsource_language: en\ntarget_language: zh\nmodel:\n"
             "  weights: %s\n  source_vocab: %s/tests/data/tiny.src.vocab\n"
             "  target_vocab: %s/tests/data/tiny.tgt.vocab\narchitecture:\n"
             "  d_model: %d\n  heads: 2\n  encoder_layers: 2\n  decoder_layers: 2\n  d_ff: 32\n"
             "  activation: gelu\n  norm: pre\n  max_len: 32\n  scale_attention: true\n"
             "  tied_output_embedding: true\n",
             weights, cwd, cwd, d_model);
    return temp_file(name, yaml, strlen(yaml));
}

static void expect_failure(const char *config, int status, const char *phrase)
{
    const char *argv[] = {"./translate", "-c", config, "I love China.", NULL};
    RunResult r = run(argv, NULL);
    assert_int_equal(r.status, status);
    expect_in(r.err, phrase);
    assert_int_equal(count_lines(r.err), 1);
    assert_string_equal(r.out, ""); /* the model is opened before any line (issue 14, item 6) */
    run_result_free(&r);
}

static void test_missing_config(void **state)
{
    (void)state;
    expect_failure("no/such.yaml", 2, "no/such.yaml: cannot open");
}

static void test_config_that_is_a_directory(void **state)
{
    (void)state;
    expect_failure("configs", 2, "configs: is a directory");
}

static void test_yaml_syntax_error_names_line_and_column(void **state)
{
    (void)state;
    const char *yaml = "name: x\narchitecture: {d_model: 4\n";
    const char *path = temp_file("syntax.yaml", yaml, strlen(yaml));
    char want[600];
    snprintf(want, sizeof want, "%s:3:1:", path);
    expect_failure(path, 2, want);
}

static void test_truncated_weights(void **state)
{
    (void)state;
    size_t len;
    char *good = read_file("tests/data/tiny.safetensors", &len);
    assert_non_null(good);
    const char *weights = temp_file("truncated.safetensors", good, len / 2);
    char copy[512];
    snprintf(copy, sizeof copy, "%s", weights);
    expect_failure(config_with("truncated.yaml", copy, 16), 3, "truncated.safetensors");
    free(good);
}

static void test_config_disagreeing_with_weights(void **state)
{
    (void)state;
    char cwd[512], weights[700];
    if (!getcwd(cwd, sizeof cwd)) abort();
    snprintf(weights, sizeof weights, "%s/tests/data/tiny.safetensors", cwd);
    expect_failure(config_with("disagree.yaml", weights, 32), 3, "d_model is 32 there but 16 in the file");
}

int main(void)
{
    /* The tiny model is written on first use: make sure it exists before
     * tests copy it. */
    const char *init[] = {"./translate", "-q", "-c", TINY, "I", NULL};
    RunResult r = run(init, NULL);
    run_result_free(&r);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_and_version),
        cmocka_unit_test(test_unknown_option_is_usage_error),
        cmocka_unit_test(test_threads_beyond_the_pool_are_refused),
        cmocka_unit_test(test_workers_are_joined_before_exit),
        cmocka_unit_test(test_one_line_per_argument),
        cmocka_unit_test(test_batch_keeps_order_and_survives_a_bad_line),
        cmocka_unit_test(test_empty_and_blank_lines_are_errors),
        cmocka_unit_test(test_input_longer_than_max_len),
        cmocka_unit_test(test_very_long_line_is_rejected_not_read_whole),
        cmocka_unit_test(test_crlf_input_is_the_same_as_lf),
        cmocka_unit_test(test_unknown_words_are_reported_not_dropped),
        cmocka_unit_test(test_han_text_picks_the_zh_en_model),
        cmocka_unit_test(test_traditional_input_reads_as_simplified),
        cmocka_unit_test(test_shipped_en_zh_translates_the_seed_example),
        cmocka_unit_test(test_shipped_zh_en_translates_the_seed_example),
        cmocka_unit_test(test_attention_json_shapes_and_token_roles),
        cmocka_unit_test(test_attention_json_is_utf8_whatever_the_paths),
        cmocka_unit_test(test_attention_json_fields_say_what_happened),
        cmocka_unit_test(test_attention_json_has_a_map_per_layer_of_each_stack),
        cmocka_unit_test(test_attention_json_is_printed_as_one_document),
        cmocka_unit_test(test_unwritable_attention_path),
        cmocka_unit_test(test_missing_config),
        cmocka_unit_test(test_config_that_is_a_directory),
        cmocka_unit_test(test_yaml_syntax_error_names_line_and_column),
        cmocka_unit_test(test_truncated_weights),
        cmocka_unit_test(test_config_disagreeing_with_weights),
    };
    return cmocka_run_group_tests_name("translate command line", tests, NULL, NULL);
}
