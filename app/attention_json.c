/* attention_json.c — building and writing the attention document (see
 * attention_json.h). */
#include "attention_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../common/output_file.h"
#include "../common/utf8.h"
#include "../common/util.h"
#include "../model/number_rule.h"
#include "../tokenizer/detokenize.h"
#include "version.h"

struct AttentionJson {
    cJSON *root;
    cJSON *sentences;       /* each sentence kept as its printed text (a raw item) */
    SearchSettings decode; /* the run's: whether copy_numbers acted on a sentence */
    ModelArch arch;        /* the maps' sizes */
};

/* A number with 7 significant digits: enough that every row still sums to
 * 1 within 1e-6, without printing the 17 digits of a float widened to
 * double.  Exact zeros (masked cells) stay "0". */
static cJSON *number(float x)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.7g", (double)x);
    return cJSON_CreateRaw(buf);
}

/* data[rows][cols] as nested arrays. */
static cJSON *matrix(const float *data, int rows, int cols)
{
    cJSON *m = cJSON_CreateArray();
    for (int i = 0; i < rows; i++) {
        cJSON *row = cJSON_CreateArray();
        for (int j = 0; j < cols; j++) cJSON_AddItemToArray(row, number(data[(size_t)i * cols + j]));
        cJSON_AddItemToArray(m, row);
    }
    return m;
}

/* [layers][heads][rows][cols] from a dense block. */
static cJSON *maps(const float *data, int layers, int heads, int rows, int cols)
{
    cJSON *all = cJSON_CreateArray();
    for (int l = 0; l < layers; l++) {
        cJSON *layer = cJSON_CreateArray();
        for (int h = 0; h < heads; h++)
            cJSON_AddItemToArray(layer, matrix(data + ((size_t)l * heads + h) * rows * cols, rows, cols));
        cJSON_AddItemToArray(all, layer);
    }
    return all;
}

/* {"tokens": [...], "ids": [...], "word_of": [...], "words": [...]} for ids
 * through a vocabulary: the tokens are the vocabulary's ("##hai" continues
 * a word, "<0xE9>" is a byte), and the words say how they join
 * (detokenize_words). */
static cJSON *token_list(const int *ids, int n, const Vocab *vocab)
{
    cJSON *obj = cJSON_CreateObject();
    cJSON *tokens = cJSON_AddArrayToObject(obj, "tokens");
    cJSON *id_list = cJSON_AddArrayToObject(obj, "ids");
    for (int i = 0; i < n; i++) {
        cJSON_AddItemToArray(tokens, cJSON_CreateString(vocab_token(vocab, ids[i])));
        cJSON_AddItemToArray(id_list, cJSON_CreateNumber(ids[i]));
    }
    size_t *word_of = xmalloc((n ? (size_t)n : 1) * sizeof *word_of);
    char **words = xmalloc((n ? (size_t)n : 1) * sizeof *words);
    size_t m = detokenize_words(vocab, ids, (size_t)n, word_of, words);
    cJSON *word_list = cJSON_AddArrayToObject(obj, "word_of");
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(word_list, cJSON_CreateNumber((double)word_of[i]));
    cJSON *word_text = cJSON_AddArrayToObject(obj, "words");
    for (size_t k = 0; k < m; k++) {
        cJSON_AddItemToArray(word_text, cJSON_CreateString(words[k]));
        free(words[k]);
    }
    free(words);
    free(word_of);
    return obj;
}

static cJSON *architecture(const Config *cfg, const ModelArch *a)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "name", cfg->name);
    /* paths are bytes, JSON is UTF-8: a name that is not was copied as it
     * was, and the document no longer parsed (json.load: UnicodeDecodeError) */
    const struct { const char *key, *path; } paths[] = {{"config_path", cfg->path},
                                                        {"weights_path", cfg->weights_path}};
    for (size_t i = 0; i < 2; i++) {
        char *text = utf8_copy_valid(paths[i].path);
        cJSON_AddStringToObject(m, paths[i].key, text);
        free(text);
    }
    cJSON_AddStringToObject(m, "source_language", cfg->source_lang);
    cJSON_AddStringToObject(m, "target_language", cfg->target_lang);
    cJSON_AddNumberToObject(m, "d_model", a->d_model);
    cJSON_AddNumberToObject(m, "heads", a->heads);
    cJSON_AddNumberToObject(m, "d_k", a->d_model / a->heads);
    cJSON_AddNumberToObject(m, "encoder_layers", a->encoder_layers);
    cJSON_AddNumberToObject(m, "decoder_layers", a->decoder_layers);
    cJSON_AddNumberToObject(m, "d_ff", a->d_ff);
    cJSON_AddStringToObject(m, "activation", arch_activation_name(a->activation));
    cJSON_AddStringToObject(m, "norm", a->norm_first ? "pre" : "post");
    cJSON_AddNumberToObject(m, "max_len", a->max_len);
    cJSON_AddBoolToObject(m, "scale_attention", a->scale_attention);
    cJSON_AddBoolToObject(m, "tied_output_embedding", a->tied_output);
    cJSON_AddNumberToObject(m, "source_vocab_size", a->src_vocab);
    cJSON_AddNumberToObject(m, "target_vocab_size", a->tgt_vocab);
    return m;
}

/* How the outputs were chosen: a reader who recomputes them (a plain
 * greedy loop, tools/reference.py) needs to know what else acted. */
static cJSON *decoding(const SearchSettings *d, bool int8)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddNumberToObject(m, "beam", d->beam);
    cJSON_AddItemToObject(m, "length_penalty", number(d->length_penalty));
    cJSON_AddBoolToObject(m, "copy_numbers", d->copy_numbers && d->numbers);
    cJSON_AddNumberToObject(m, "no_repeat_ngram", d->no_repeat_ngram);
    cJSON_AddBoolToObject(m, "int8", int8);
    return m;
}

AttentionJson *attention_json_new(const Config *cfg, bool int8)
{
    AttentionJson *doc = xcalloc(1, sizeof *doc);
    doc->decode = cfg->decode;
    doc->arch = cfg->arch;
    doc->root = cJSON_CreateObject();
    cJSON_AddStringToObject(doc->root, "format", "translate-attention");
    cJSON_AddStringToObject(doc->root, "format_version", "1.2");
    cJSON *producer = cJSON_AddObjectToObject(doc->root, "producer");
    cJSON_AddStringToObject(producer, "name", "translate");
    cJSON_AddStringToObject(producer, "version", TRANSLATE_VERSION);
    cJSON_AddItemToObject(doc->root, "model", architecture(cfg, &cfg->arch));
    cJSON_AddItemToObject(doc->root, "decoding", decoding(&cfg->decode, int8));
    cJSON *info = cJSON_AddObjectToObject(doc->root, "attention_info");
    cJSON_AddStringToObject(info, "values", "softmax_probabilities");
    cJSON *layout = cJSON_AddArrayToObject(info, "layout");
    const char *dims[] = {"layer", "head", "query", "key"};
    for (int i = 0; i < 4; i++) cJSON_AddItemToArray(layout, cJSON_CreateString(dims[i]));
    cJSON_AddStringToObject(info, "decoder_mask", "causal: cells with key > query are exactly 0");
    doc->sentences = cJSON_AddArrayToObject(doc->root, "sentences");
    return doc;
}

/* Sentence `s` as the text cJSON_Print gives it at its place in the
 * document (two levels down: each line after the first indented by two
 * more tabs), in one raw item; `s` is freed.  A tree keeps every number of
 * every map as a node of its own until the document is written: 1,000
 * dev sentences took 484 MB for 39 MB of JSON. */
static cJSON *printed(cJSON *s)
{
    char *text = cJSON_Print(s);
    ASSERT(text != NULL); /* out of memory: fatal, as in xmalloc */
    cJSON_Delete(s);
    size_t lines = 0, len = strlen(text);
    for (const char *p = text; (p = strchr(p, '\n')); p++) lines++;
    char *indented = xmalloc(len + 2 * lines + 1), *q = indented;
    for (const char *p = text; *p; p++) {
        *q++ = *p;
        if (*p == '\n') *q++ = '\t', *q++ = '\t';
    }
    *q = '\0';
    cJSON_free(text);
    cJSON *raw = cJSON_CreateRaw(indented);
    ASSERT(raw != NULL);
    free(indented);
    return raw;
}

void attention_json_add(AttentionJson *doc, int line, const char *text, const Translation *t,
                        const Vocab *src_vocab, const Vocab *tgt_vocab, const char *output_text)
{
    int Le = doc->arch.encoder_layers, Ld = doc->arch.decoder_layers, H = doc->arch.heads;
    int S = t->src_len, T = t->steps;

    cJSON *s = cJSON_CreateObject();
    cJSON_AddNumberToObject(s, "line", line);
    cJSON_AddStringToObject(s, "text", text);
    cJSON_AddItemToObject(s, "source", token_list(t->src_ids, S, src_vocab));
    cJSON_AddItemToObject(s, "decoder_input", token_list(t->input_ids, T, tgt_vocab));
    cJSON *out = token_list(t->output_ids, T, tgt_vocab);
    cJSON *logprobs = cJSON_AddArrayToObject(out, "logprobs");
    cJSON *alternatives = cJSON_AddArrayToObject(out, "top_k");
    for (int i = 0; i < T; i++) {
        cJSON_AddItemToArray(logprobs, number(t->logprobs[i]));
        cJSON *step = cJSON_CreateArray();
        for (int k = 0; k < TRANSLATION_TOP_K; k++) {
            int id = t->top_ids[(size_t)i * TRANSLATION_TOP_K + k];
            if (id < 0) continue;
            cJSON *alt = cJSON_CreateObject();
            cJSON_AddStringToObject(alt, "token", vocab_token(tgt_vocab, id));
            cJSON_AddNumberToObject(alt, "id", id);
            cJSON_AddItemToObject(alt, "logprob", number(t->top_logprobs[(size_t)i * TRANSLATION_TOP_K + k]));
            cJSON_AddItemToArray(step, alt);
        }
        cJSON_AddItemToArray(alternatives, step);
    }
    cJSON_AddBoolToObject(out, "finished", t->finished);
    const SearchSettings *d = &doc->decode;
    cJSON_AddBoolToObject(out, "copied_numbers",
                          d->copy_numbers && d->numbers && number_rule_applies(d->numbers, t->src_ids, S));
    cJSON_AddStringToObject(out, "text", output_text);
    cJSON_AddItemToObject(s, "output", out);
    cJSON_AddItemToObject(s, "encoder_attentions", maps(t->encoder_attn, Le, H, S, S));
    cJSON_AddItemToObject(s, "decoder_attentions", maps(t->decoder_attn, Ld, H, T, T));
    cJSON_AddItemToObject(s, "cross_attentions", maps(t->cross_attn, Ld, H, T, S));
    cJSON_AddItemToArray(doc->sentences, printed(s));
}

char *attention_json_print(const AttentionJson *doc)
{
    char *text = cJSON_PrintUnformatted(doc->root);
    ASSERT(text != NULL); /* out of memory: fatal, as in xmalloc */
    /* Copied so that callers free with free() whatever allocator cJSON was
     * given: they never need to include cJSON. */
    char *copy = xstrdup(text);
    cJSON_free(text);
    return copy;
}

typedef struct {
    const AttentionJson *const *docs;
    size_t n;
} Documents;

/* Each document pretty-printed with a final newline, one after another,
 * each printed only when its turn comes (a document's text is about the
 * file's size: never two at once). */
static void put_json(FILE *f, const void *context)
{
    const Documents *d = context;
    for (size_t i = 0; i < d->n; i++) {
        char *text = cJSON_Print(d->docs[i]->root);
        ASSERT(text != NULL); /* out of memory: fatal, as in xmalloc */
        fputs(text, f);
        fputc('\n', f);
        cJSON_free(text);
    }
}

int attention_json_write(const AttentionJson *const *docs, size_t n, const char *path, Error *err)
{
    Documents d = {docs, n};
    return output_file_write(path, OUTPUT_FILE_DASH, put_json, &d, err);
}

void attention_json_free(AttentionJson *doc)
{
    if (!doc) return;
    cJSON_Delete(doc->root);
    free(doc);
}
