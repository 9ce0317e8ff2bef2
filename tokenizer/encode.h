/* encode.h — text to model ids: the one place where text becomes ids
 * (data/dataset.c for training, app/translator.c for translating).
 *
 * tokenize() cuts the text into tokens, then each token becomes one id
 * (word vocabulary) or one or more pieces (subword vocabulary), as
 * vocab_encode_token says (vocab.h). */
#ifndef TRANSLATE_ENCODE_H
#define TRANSLATE_ENCODE_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/error.h"
#include "tokenizer.h"
#include "vocab.h"

typedef struct {
    size_t count;
    int *ids;           /* [count] */
    size_t *token;      /* [count] the token of `tokens` each id came from */
    size_t *offset;     /* [count] byte offset in the input where the id's text starts */
    bool *spaced;       /* [count] white space came before the id's text (tokens.spaced; a
                         * word's later pieces never): what tells "1,000" from the list
                         * "1, 000" (the copy_numbers rule, model/number_rule.h) */
    size_t unknown;     /* how many ids are VOCAB_UNK (word vocabularies only) */
    TokenList tokens;   /* the text's tokens: tokens.surface[token[i]] for a label or note */
} Encoding;

/* Encode `len` bytes of `text` (need not be NUL-terminated) with `vocab`.
 * Fails like tokenize (invalid UTF-8, NUL byte: -1 with err, *out empty);
 * empty text gives count 0.  Free with encoding_free. */
int encode_text(const Vocab *vocab, const char *text, size_t len, Encoding *out, Error *err);
void encoding_free(Encoding *e); /* NULL-safe, leaves it zeroed */

#endif
