/* vocab.c — the vocabulary file: loading, lookup, hashing, encoding a
 * token into pieces (see vocab.h for the format; building a vocabulary is
 * tokenizer/vocab_builder.c).
 *
 * Lookup is an open-addressing hash table (linear probing, FNV-1a, at most
 * half full) from token to id, so tokenising a corpus costs O(1) per token. */
#include "vocab.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/input_file.h"
#include "../common/line.h"
#include "../common/utf8.h"
#include "../common/util.h"
#include "tokenizer.h"
#include "vocab_impl.h"

#define VOCAB_MAX_LINES 10000000L

const char *const vocab_special_tokens[VOCAB_SPECIALS] = {"<pad>", "<unk>", "<s>", "</s>"};

/* ---- The hash table (vocab_impl.h) -------------------------------------- */

void vocab_table_alloc(VocabTable *t, size_t capacity)
{
    t->slot = xmalloc(capacity * sizeof *t->slot);
    for (size_t i = 0; i < capacity; i++) t->slot[i] = -1;
    t->mask = capacity - 1;
    t->used = 0;
}

size_t vocab_table_find(const VocabTable *t, const char *key, VocabKeyOf key_of, const void *owner)
{
    size_t i = (size_t)fnv1a(FNV_OFFSET, key, strlen(key)) & t->mask;
    while (t->slot[i] >= 0 && strcmp(key_of(owner, t->slot[i]), key) != 0)
        i = (i + 1) & t->mask;
    return i;
}

void vocab_table_put(VocabTable *t, size_t at, int index, VocabKeyOf key_of, const void *owner)
{
    t->slot[at] = index;
    if (++t->used * 2 <= t->mask + 1) return;
    VocabTable bigger;
    vocab_table_alloc(&bigger, 2 * (t->mask + 1));
    for (size_t i = 0; i <= t->mask; i++)
        if (t->slot[i] >= 0)
            bigger.slot[vocab_table_find(&bigger, key_of(owner, t->slot[i]), key_of, owner)] = t->slot[i];
    bigger.used = t->used;
    free(t->slot);
    *t = bigger;
}

/* ---- Vocab ------------------------------------------------------------------ */

struct Vocab {
    int size;
    char **token;   /* [size] folded tokens; token[id] */
    char **cased;   /* [size] usual casing */
    VocabTable index; /* token → id */
    uint64_t hash;  /* see vocab_hash */
    int subword;    /* ids 4..451 are the byte tokens (vocab.h) */
    size_t max_piece;          /* longest piece in bytes, without "##" */
    char byte_text[256][2];    /* what each byte token stands for */
};

/* ---- Byte tokens ---------------------------------------------------------
 *
 * Byte token k (id VOCAB_SPECIALS + k): k < 192 is "<0xXX>" for the k-th
 * byte that can start a UTF-8 character (00..7F, C0..FF); the others are
 * "##<0xXX>" for byte k - 192.  A continuation byte (80..BF) never starts a
 * token, so it has no starting form. */
enum { BYTE_STARTS = 192 };

static int byte_of(int k) { return k < BYTE_STARTS ? (k < 128 ? k : k + 64) : k - BYTE_STARTS; }

static int byte_id(int byte, int continues)
{
    if (continues) return VOCAB_SPECIALS + BYTE_STARTS + byte;
    ASSERT((byte & 0xC0) != 0x80);
    return VOCAB_SPECIALS + (byte < 128 ? byte : byte - 64);
}

void vocab_byte_token_name(char *buf, size_t size, int k)
{
    snprintf(buf, size, "%s<0x%02X>", k < BYTE_STARTS ? "" : "##", byte_of(k));
}

int vocab_is_byte_id(const Vocab *v, int id)
{
    return v->subword && id >= VOCAB_SPECIALS && id < VOCAB_SPECIALS + VOCAB_BYTE_TOKENS;
}

static const char *vocab_key(const void *owner, int id)
{
    return ((const Vocab *)owner)->token[id];
}

/* Check one "token<TAB>cased<TAB>count" line (newline already removed) and
 * split it in place.  Returns 0, or -1 with a message without location. */
static int parse_line(char *line, size_t len, char **token, char **cased, Error *err)
{
    if (memchr(line, '\0', len)) return error_set(err, "NUL byte in line");
    if (!utf8_valid(line, len)) return error_set(err, "invalid UTF-8");
    char *tab1 = strchr(line, '\t');
    char *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
    if (!tab2 || strchr(tab2 + 1, '\t'))
        return error_set(err, "expected 3 tab-separated fields: token, cased, count");
    *tab1 = *tab2 = '\0';
    *token = line;
    *cased = tab1 + 1;
    const char *count = tab2 + 1;
    if (!**token) return error_set(err, "empty token");
    if (!**cased) return error_set(err, "empty cased form for '%s'", *token);
    if (!*count || strspn(count, "0123456789") != strlen(count))
        return error_set(err, "count '%s' is not a non-negative integer", count);
    return 0;
}

/* Check and add one parsed line as the next id. */
int vocab_add(Vocab *v, size_t *cap, const char *token, const char *cased, Error *err)
{
    if (v->size < VOCAB_SPECIALS && strcmp(token, vocab_special_tokens[v->size]) != 0)
        return error_set(err, "expected '%s' (id %d), found '%s'", vocab_special_tokens[v->size],
                         v->size, token);
    /* The first byte token after the specials makes it a subword
     * vocabulary, and then all 448 must follow in order. */
    if (v->size == VOCAB_SPECIALS && strcmp(token, "<0x00>") == 0) v->subword = 1;
    if (v->subword && v->size < VOCAB_SPECIALS + VOCAB_BYTE_TOKENS) {
        char want[16];
        vocab_byte_token_name(want, sizeof want, v->size - VOCAB_SPECIALS);
        if (strcmp(token, want) != 0)
            return error_set(err, "expected byte token '%s' (id %d), found '%s'", want, v->size, token);
    }
    size_t at = vocab_table_find(&v->index, token, vocab_key, v);
    if (v->index.slot[at] >= 0)
        return error_set(err, "duplicate token '%s' (also id %d)", token, v->index.slot[at]);
    if ((size_t)v->size == *cap) {
        *cap = *cap ? 2 * *cap : 1024;
        v->token = xrealloc(v->token, *cap * sizeof *v->token);
        v->cased = xrealloc(v->cased, *cap * sizeof *v->cased);
    }
    v->token[v->size] = xstrdup(token);
    v->cased[v->size] = xstrdup(cased);
    vocab_table_put(&v->index, at, v->size, vocab_key, v);
    v->size++;
    return 0;
}

Vocab *vocab_new(void)
{
    Vocab *v = xcalloc(1, sizeof *v);
    vocab_table_alloc(&v->index, 1024);
    return v;
}

/* What is derived from the token list once it is complete.  The hash
 * covers the token strings in id order, each with its NUL so that
 * "ab","c" and "a","bc" differ. */
void vocab_finish(Vocab *v)
{
    v->hash = FNV_OFFSET;
    for (int id = 0; id < v->size; id++)
        v->hash = fnv1a(v->hash, v->token[id], strlen(v->token[id]) + 1);
    for (int b = 0; b < 256; b++) v->byte_text[b][0] = (char)b, v->byte_text[b][1] = '\0';
    v->max_piece = 0;
    for (int id = VOCAB_SPECIALS + (v->subword ? VOCAB_BYTE_TOKENS : 0); id < v->size; id++) {
        size_t n = strlen(v->token[id]);
        if (strncmp(v->token[id], "##", 2) == 0) n -= 2;
        if (n > v->max_piece) v->max_piece = n;
    }
}

Vocab *vocab_load(const char *path, Error *err)
{
    /* Only a regular file: a FIFO or /dev/zero would hang or flood us. */
    FILE *f = input_file_fopen(path, 0, err);
    if (!f) return NULL;
    Vocab *v = vocab_new();
    size_t cap = 0;
    char *line = xmalloc(VOCAB_MAX_LINE_BYTES + 1);
    long got;
    long lineno = 0;
    Error line_err;
    while ((got = line_read_or_stop(f, line, VOCAB_MAX_LINE_BYTES)) != LINE_EOF) {
        if (++lineno > VOCAB_MAX_LINES) {
            error_set(err, "%s: more than %ld lines", path, VOCAB_MAX_LINES);
            goto fail;
        }
        if (got == LINE_TOO_LONG) {
            error_set(err, "%s:%ld: longer than %d bytes", path, lineno, VOCAB_MAX_LINE_BYTES);
            goto fail;
        }
        size_t len = (size_t)got;
        char *text = line;
        /* A byte-order mark (editors on Windows add one) is not part of
         * the first token. */
        if (lineno == 1 && len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
            text += 3;
            len -= 3;
        }
        if (v->size == 0 && text[0] == '#') continue;
        char *token = NULL, *cased = NULL;
        if (parse_line(text, len, &token, &cased, &line_err) < 0 ||
            vocab_add(v, &cap, token, cased, &line_err) < 0) {
            error_set(err, "%s:%ld: %s", path, lineno, line_err.message);
            goto fail;
        }
    }
    if (ferror(f)) {
        error_set(err, "%s: cannot read: %s", path, strerror(errno));
        goto fail;
    }
    if (v->size < VOCAB_SPECIALS) {
        error_set(err, "%s:%ld: expected '%s' (id %d), found end of file", path, lineno + 1,
                  vocab_special_tokens[v->size], v->size);
        goto fail;
    }
    if (v->subword && v->size < VOCAB_SPECIALS + VOCAB_BYTE_TOKENS) {
        char want[16];
        vocab_byte_token_name(want, sizeof want, v->size - VOCAB_SPECIALS);
        error_set(err, "%s:%ld: expected byte token '%s' (id %d), found end of file", path, lineno + 1,
                  want, v->size);
        goto fail;
    }
    vocab_finish(v);
    free(line);
    fclose(f);
    return v;

fail:
    free(line);
    fclose(f);
    vocab_free(v);
    return NULL;
}

void vocab_free(Vocab *vocab)
{
    if (!vocab) return;
    for (int i = 0; i < vocab->size; i++) {
        free(vocab->token[i]);
        free(vocab->cased[i]);
    }
    free(vocab->token);
    free(vocab->cased);
    free(vocab->index.slot);
    free(vocab);
}

int vocab_size(const Vocab *vocab) { return vocab->size; }

int vocab_id(const Vocab *vocab, const char *token)
{
    int id = vocab->index.slot[vocab_table_find(&vocab->index, token, vocab_key, vocab)];
    return id >= 0 ? id : VOCAB_UNK;
}

const char *vocab_token(const Vocab *vocab, int id)
{
    ASSERT(id >= 0 && id < vocab->size);
    return vocab->token[id];
}

const char *vocab_cased(const Vocab *vocab, int id)
{
    ASSERT(id >= 0 && id < vocab->size);
    return vocab->cased[id];
}

uint64_t vocab_hash(const Vocab *vocab) { return vocab->hash; }

int vocab_is_subword(const Vocab *vocab) { return vocab->subword; }

/* The id of token[from..to) as a piece ("##" first when it continues a
 * word), or -1.  `key` has room for 2 + max_piece + 1 bytes. */
static int piece_id(const Vocab *v, const char *token, size_t from, size_t to, char *key)
{
    size_t k = 0;
    if (from > 0) key[k++] = '#', key[k++] = '#';
    memcpy(key + k, token + from, to - from);
    key[k + to - from] = '\0';
    int id = v->index.slot[vocab_table_find(&v->index, key, vocab_key, v)];
    /* a text token is never a special or byte token, but a piece looked
     * up here must not be one either */
    return id >= VOCAB_SPECIALS + VOCAB_BYTE_TOKENS ? id : -1;
}

/* The bytes of token[from..to) as byte tokens. */
static size_t put_bytes(const char *token, size_t from, size_t to, int *ids, size_t *ends)
{
    size_t n = 0;
    for (size_t i = from; i < to; i++) {
        ids[n] = byte_id((unsigned char)token[i], i > 0);
        ends[n++] = i + 1;
    }
    return n;
}

size_t vocab_encode_token(const Vocab *v, const char *token, int *ids, size_t *ends)
{
    size_t len = strlen(token);
    ASSERT(len > 0);
    if (!v->subword) {
        ids[0] = vocab_id(v, token);
        ends[0] = len;
        return 1;
    }
    char *key = xmalloc(v->max_piece + 3);
    size_t n = 0;
    if (!tokenizer_is_word(token)) {
        /* Han/kana, punctuation: whole, or its bytes */
        int id = len <= v->max_piece ? piece_id(v, token, 0, len, key) : -1;
        if (id >= 0) ids[n] = id, ends[n++] = len;
        else n = put_bytes(token, 0, len, ids, ends);
        free(key);
        return n;
    }
    /* Greedy longest match first (WordPiece): the longest piece at each
     * point, ends tried only at character boundaries. */
    for (size_t at = 0; at < len;) {
        size_t end = at + v->max_piece < len ? at + v->max_piece : len;
        int id = -1;
        for (; end > at; end--) {
            if (end < len && ((unsigned char)token[end] & 0xC0) == 0x80) continue;
            if ((id = piece_id(v, token, at, end, key)) >= 0) break;
        }
        if (id >= 0) {
            ids[n] = id;
            ends[n++] = end;
            at = end;
            continue;
        }
        /* No piece for this character: its bytes. */
        int32_t cp;
        size_t k = utf8_decode((const unsigned char *)token + at, len - at, &cp);
        ASSERT(k > 0); /* tokens are valid UTF-8 */
        n += put_bytes(token, at, at + k, ids + n, ends + n);
        at += k;
    }
    free(key);
    return n;
}

const char *vocab_piece(const Vocab *vocab, int id, int cased, int *continues)
{
    ASSERT(id >= 0 && id < vocab->size);
    if (vocab_is_byte_id(vocab, id)) {
        int k = id - VOCAB_SPECIALS;
        *continues = k >= BYTE_STARTS;
        return vocab->byte_text[byte_of(k)];
    }
    const char *t = cased ? vocab->cased[id] : vocab->token[id];
    *continues = vocab->subword && strncmp(vocab->token[id], "##", 2) == 0;
    if (*continues && strncmp(t, "##", 2) == 0) t += 2;
    return t;
}
