/* wasm_main.c — the engine of the web page (make web), compiled with emcc.
 *
 * The page's worker (web/worker.js) writes a model's files — its YAML
 * config, weights and vocabularies, embedded in the page — into
 * Emscripten's in-memory file system at the paths they have in the
 * repository (/configs/en-zh.yaml, /weights/en-zh.safetensors, ...), then
 * calls these entry points.  From there on it is the native program's own
 * code: config_load (libyaml), translator_open, translator_encode
 * (utf8proc), translator_run, attention_json_* (cJSON), explain_print.
 * Nothing the native program computes is done again in JavaScript.
 *
 * Deliberately not here: threads (the build has no -pthread, so the
 * products run on one thread, the default of model/parallel.h) and beam or
 * decoding options other than the config's: a sentence translates as
 * `translate -c CONFIG --attention FILE` translates it. */
#include <emscripten.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../app/attention_json.h"
#include "../app/explain.h"
#include "../app/translator.h"

enum { WEB_MODELS = 4 };
static Translator models[WEB_MODELS];
static int opened[WEB_MODELS];
static char *last_result; /* what web_translate returned last: freed by the next call */

/* The reply of one call, as JSON text: {"status": N, "error": "..."} plus
 * whatever `body` holds.  Owned by this file until the next call. */
static const char *reply(cJSON *body, ExitStatus status, const char *message)
{
    cJSON_AddNumberToObject(body, "status", status);
    if (message) cJSON_AddStringToObject(body, "error", message);
    free(last_result);
    last_result = cJSON_PrintUnformatted(body);
    cJSON_Delete(body);
    return last_result;
}

/* After each decoding step (model/decode.h's DecodeProgress): in the
 * page's worker, a message to the page, which shows "step 7 of at most
 * 30" while a long sentence translates; elsewhere (node) nothing. */
EM_JS(void, post_progress, (int step, int limit), {
    if (typeof WorkerGlobalScope !== 'undefined' && typeof postMessage === 'function')
        postMessage({type: 'progress', step: step, limit: limit});
});

static void on_step(void *context, int step, int limit)
{
    (void)context;
    post_progress(step, limit);
}

/* Open model `slot` from `config_path` (its files already written). */
EMSCRIPTEN_KEEPALIVE
const char *web_open(int slot, const char *config_path)
{
    if (slot < 0 || slot >= WEB_MODELS) return reply(cJSON_CreateObject(), EXIT_USAGE, "no such model slot");
    if (opened[slot]) translator_close(&models[slot]);
    opened[slot] = 0;
    Error err = {{0}};
    ExitStatus status = translator_open(&models[slot], config_path, &err);
    if (status != EXIT_OK) return reply(cJSON_CreateObject(), status, err.message);
    opened[slot] = 1;
    models[slot].decoder.progress = on_step;
    cJSON *body = cJSON_CreateObject();
    cJSON_AddStringToObject(body, "name", models[slot].config.name);
    return reply(body, EXIT_OK, NULL);
}

/* The text --explain prints for this sentence (explain_print into memory). */
static char *explained(const Translator *tr, const char *text, const SourceIds *src, const Translation *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    explain_print(f, tr, text, src, t);
    fclose(f);
    return buf;
}

/* Translate `text` with model `slot`: {"status": 0, "translation": "...",
 * "attention": <the document --attention writes, one sentence>,
 * "explain": "..." (with `explain`)}, or a status and the message the
 * native program prints for that line. */
EMSCRIPTEN_KEEPALIVE
const char *web_translate(int slot, const char *text, int explain)
{
    if (slot < 0 || slot >= WEB_MODELS || !opened[slot])
        return reply(cJSON_CreateObject(), EXIT_USAGE, "that model is not loaded");
    Translator *tr = &models[slot];
    Error err = {{0}};
    SourceIds src;
    memset(&src, 0, sizeof src);
    ExitStatus status = translator_encode(tr, text, strlen(text), &src, &err);
    if (status != EXIT_OK) {
        translator_source_ids_free(&src);
        return reply(cJSON_CreateObject(), status, err.message);
    }
    Translation t;
    char *translation = NULL;
    float score;
    int n = translator_run(tr, &src, 1, false, &t, &translation, &score);
    status = translator_check_finite(tr, &t, n, &score, true, &err);
    cJSON *body = cJSON_CreateObject();
    if (status == EXIT_OK) {
        cJSON_AddStringToObject(body, "translation", translation);
        AttentionJson *doc = attention_json_new(&tr->config, false);
        attention_json_add(doc, 1, text, &t, tr->src_vocab, tr->tgt_vocab, translation);
        char *json = attention_json_print(doc);
        cJSON_AddRawToObject(body, "attention", json);
        free(json);
        attention_json_free(doc);
        if (src.unknown) cJSON_AddStringToObject(body, "unknown", src.unknown_list);
        if (explain) {
            char *walk = explained(tr, text, &src, &t);
            if (walk) cJSON_AddStringToObject(body, "explain", walk);
            free(walk);
        }
    }
    free(translation);
    translation_free(&t);
    translator_source_ids_free(&src);
    return reply(body, status, status == EXIT_OK ? NULL : err.message);
}

/* Nothing runs at start: the worker calls the functions above. */
int main(void) { return 0; }
