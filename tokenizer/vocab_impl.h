/* vocab_impl.h — what tokenizer/vocab.c shares with tokenizer/vocab_builder.c
 * and bpe.c, and nothing else includes: the string → index hash table they
 * use (bpe.c for its symbols), and
 * the calls that make a Vocab in memory (the subword writer encodes with
 * one before it writes the file).  The public contract is vocab.h. */
#ifndef TRANSLATE_VOCAB_IMPL_H
#define TRANSLATE_VOCAB_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "vocab.h"

/* A longer line is an error (the builder never writes one: it skips such
 * tokens), so no vocabulary file makes us allocate more per line. */
#define VOCAB_MAX_LINE_BYTES 4096

extern const char *const vocab_special_tokens[VOCAB_SPECIALS];

/* ---- A string → index hash table ------------------------------------------
 *
 * Open addressing (linear probing, at most half full).  The table
 * stores indices into its owner's array of entries; `key_of` gives the
 * string of an index, so the strings are stored only once.  Each slot
 * keeps its key's hash too: a probe compares strings only when the hashes
 * agree, and growing moves entries without reading their keys. */

typedef const char *(*VocabKeyOf)(const void *owner, int index);

typedef struct {
    int index;       /* of an entry, or -1 when empty */
    uint32_t hash;   /* vocab_table_hash of its key */
} VocabSlot;

typedef struct {
    VocabSlot *slot;
    size_t mask;     /* capacity - 1; capacity is a power of two */
    size_t used;
} VocabTable;

/* capacity: a power of two. */
void vocab_table_alloc(VocabTable *t, size_t capacity);
void vocab_table_free(VocabTable *t); /* leaves it zeroed */
/* The hash a key of `len` bytes is found by (not vocab_hash's FNV-1a). */
uint32_t vocab_table_hash(const char *key, size_t len);
/* The slot holding `key` (whose vocab_table_hash is `hash`), or the empty
 * slot where it would go. */
size_t vocab_table_find(const VocabTable *t, const char *key, uint32_t hash, VocabKeyOf key_of,
                        const void *owner);
/* Put `index` (its key's hash `hash`) into the empty slot `at` (from
 * vocab_table_find), doubling the table when it becomes half full. */
void vocab_table_put(VocabTable *t, size_t at, int index, uint32_t hash);

/* ---- A Vocab in memory ------------------------------------------------------ */

/* expected: how many ids it will probably hold (a hint for its first
 * allocations; 0 for a small default). */
Vocab *vocab_new(size_t expected);
/* Add the next id, checked as a file line is (specials, byte tokens in
 * order, no duplicate): 0, or -1 with a message without location.  The
 * strings are copied. */
int vocab_add(Vocab *v, const char *token, const char *cased, Error *err);
/* A token's count as its file gave it (0 for one added by vocab_add). */
double vocab_count(const Vocab *v, int id);
/* Once every token is in: what lookup needs (vocab_hash is kept up to
 * date as each token is added). */
void vocab_finish(Vocab *v);

/* Byte token k (0..VOCAB_BYTE_TOKENS-1) as written in the file. */
void vocab_byte_token_name(char *buf, size_t size, int k);
int vocab_is_byte_id(const Vocab *v, int id);

#endif
