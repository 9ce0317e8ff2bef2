/* vocab.h — token ↔ id, plus each word's usual casing.
 *
 * File format (UTF-8 text, one token per line, id = line number - 1):
 *     token <TAB> cased <TAB> count
 * `token` is the case-folded form the model sees, `cased` the casing it
 * most often had in the training data (used when writing English), `count`
 * its training frequency.  The first four lines are always
 *     <pad> <unk> <s> </s>
 * (ids 0..3).  A line starting with '#' before the first token is a
 * comment.  Tokens never contain TAB or newline (the tokenizer never makes
 * one).  A line may hold at most 4096 bytes; the builder leaves out longer
 * tokens. */
#ifndef TRANSLATE_VOCAB_H
#define TRANSLATE_VOCAB_H

#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"
#include "../common/token_ids.h"

/* <pad>, <s> and </s> are the model's (common/token_ids.h); <unk> is ours. */
enum { VOCAB_PAD = TOKEN_PAD, VOCAB_UNK = 1, VOCAB_BOS = TOKEN_BOS, VOCAB_EOS = TOKEN_EOS, VOCAB_SPECIALS = 4 };

typedef struct Vocab Vocab;

/* Load a vocabulary file.  Errors name path:line ("x.vocab:12: duplicate
 * token 'the'"), a missing/unreadable file, or bad specials. */
Vocab *vocab_load(const char *path, Error *err);
void vocab_free(Vocab *vocab); /* NULL-safe */

int vocab_size(const Vocab *vocab);
/* id of a case-folded token, or VOCAB_UNK when absent. */
int vocab_id(const Vocab *vocab, const char *token);
/* The folded token / its usual casing for an id in [0, size). */
const char *vocab_token(const Vocab *vocab, int id);
const char *vocab_cased(const Vocab *vocab, int id);
/* A stable hash of the token list (not counts, not casing): recorded in the
 * weights file so a model is never run with the wrong vocabulary. */
uint64_t vocab_hash(const Vocab *vocab);

/* Building a vocabulary from tokenised text (the trainer and tests use it):
 * add every token of every text, then write the `max_size - 4` most frequent
 * (ties broken by token bytes) with at least `min_count` occurrences. */
typedef struct VocabBuilder VocabBuilder;
VocabBuilder *vocab_builder_new(void);
void vocab_builder_add(VocabBuilder *b, const char *folded, const char *surface);
int vocab_builder_write(const VocabBuilder *b, const char *path, int max_size,
                        int min_count, Error *err);
void vocab_builder_free(VocabBuilder *b); /* NULL-safe */

#endif
