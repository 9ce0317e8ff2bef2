/* attention_json.h — every head's attention maps as a JSON document.
 *
 * Schema "translate-attention" 1.2, documented in docs/attention-json.md.
 * Names and shapes follow Hugging Face's Seq2SeqLMOutput:
 *   encoder_attentions [layers][heads][src][src]
 *   decoder_attentions [layers][heads][tgt][tgt]   (future cells exactly 0)
 *   cross_attentions   [layers][heads][tgt][src]
 * with the token roles spelled out: source tokens, decoder *input* tokens
 * (<s> + output but the last: they label the decoder axes and the
 * cross-attention rows) and the output tokens.
 * Only attention_json.c, model/safetensors.c and web/wasm_main.c include
 * cJSON. */
#ifndef TRANSLATE_ATTENTION_JSON_H
#define TRANSLATE_ATTENTION_JSON_H

#include "../common/error.h"
#include "../model/decode.h"
#include "../tokenizer/vocab.h"
#include "config.h"

typedef struct AttentionJson AttentionJson;

/* Start a document for sentences translated with `cfg`'s model and
 * decoding (its number rule must outlive the document's last add), the
 * weights quantised to int8 when `int8` (translator_use_int8). */
AttentionJson *attention_json_new(const Config *cfg, bool int8);
/* Append one translated sentence (`text` as given, `output_text` the
 * detokenised result). */
void attention_json_add(AttentionJson *doc, int line, const char *text, const Translation *t,
                        const Vocab *src_vocab, const Vocab *tgt_vocab, const char *output_text);
/* The document as compact JSON text (one line); the caller frees it with
 * free().  Used to embed the document in the HTML viewer (html_report.h). */
char *attention_json_print(const AttentionJson *doc);
/* Write docs[0..n-1] to `path` ("-": stdout), one document after another,
 * through common/output_file.h: a regular file is replaced atomically, a
 * device or FIFO written directly.  One open for all of them: a FIFO
 * opened again for the second waited for a reader that had gone with the
 * first's end. */
int attention_json_write(const AttentionJson *const *docs, size_t n, const char *path, Error *err);
void attention_json_free(AttentionJson *doc); /* NULL-safe */

#endif
