/* vocab.c — the vocabulary file: loading, lookup, hashing, building
 * (see vocab.h for the format).
 *
 * Lookup is an open-addressing hash table (linear probing, FNV-1a, at most
 * half full) from token to id, so tokenising a corpus costs O(1) per token.
 * The builder keeps one entry per folded token with the counts of each
 * surface casing it was seen in; it is only used offline (trainer, tests),
 * so it favours plainness over memory. */
#include "vocab.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/input_file.h"
#include "../common/line.h"
#include "../common/output_file.h"
#include "../common/utf8.h"
#include "../common/util.h"

#define VOCAB_MAX_LINES 10000000L
/* A longer line is an error (the builder never writes one: it skips such
 * tokens), so no vocabulary file makes us allocate more per line. */
#define VOCAB_MAX_LINE_BYTES 4096

static const char *const special_tokens[VOCAB_SPECIALS] = {"<pad>", "<unk>", "<s>", "</s>"};

/* ---- A string → index hash table, shared by Vocab and VocabBuilder ------
 *
 * The table stores indices into its owner's array of entries; `key_of`
 * gives the string of an index, so the strings are stored only once. */

typedef const char *(*KeyOf)(const void *owner, int index);

typedef struct {
    int *slot;       /* index of an entry, or -1 when empty */
    size_t mask;     /* capacity - 1; capacity is a power of two */
    size_t used;
} Table;

static void table_alloc(Table *t, size_t capacity)
{
    t->slot = xmalloc(capacity * sizeof *t->slot);
    for (size_t i = 0; i < capacity; i++) t->slot[i] = -1;
    t->mask = capacity - 1;
    t->used = 0;
}

/* The slot holding `key`, or the empty slot where it would go. */
static size_t table_find(const Table *t, const char *key, KeyOf key_of, const void *owner)
{
    size_t i = (size_t)fnv1a(FNV_OFFSET, key, strlen(key)) & t->mask;
    while (t->slot[i] >= 0 && strcmp(key_of(owner, t->slot[i]), key) != 0)
        i = (i + 1) & t->mask;
    return i;
}

/* Put `index` into the empty slot `at` (from table_find), doubling the
 * table when it becomes half full. */
static void table_put(Table *t, size_t at, int index, KeyOf key_of, const void *owner)
{
    t->slot[at] = index;
    if (++t->used * 2 <= t->mask + 1) return;
    Table bigger;
    table_alloc(&bigger, 2 * (t->mask + 1));
    for (size_t i = 0; i <= t->mask; i++)
        if (t->slot[i] >= 0)
            bigger.slot[table_find(&bigger, key_of(owner, t->slot[i]), key_of, owner)] = t->slot[i];
    bigger.used = t->used;
    free(t->slot);
    *t = bigger;
}

/* ---- Vocab ------------------------------------------------------------------ */

struct Vocab {
    int size;
    char **token;   /* [size] folded tokens; token[id] */
    char **cased;   /* [size] usual casing */
    Table index;    /* token → id */
    uint64_t hash;  /* see vocab_hash */
};

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
static int vocab_add(Vocab *v, size_t *cap, const char *token, const char *cased, Error *err)
{
    if (v->size < VOCAB_SPECIALS && strcmp(token, special_tokens[v->size]) != 0)
        return error_set(err, "expected '%s' (id %d), found '%s'", special_tokens[v->size],
                         v->size, token);
    size_t at = table_find(&v->index, token, vocab_key, v);
    if (v->index.slot[at] >= 0)
        return error_set(err, "duplicate token '%s' (also id %d)", token, v->index.slot[at]);
    if ((size_t)v->size == *cap) {
        *cap = *cap ? 2 * *cap : 1024;
        v->token = xrealloc(v->token, *cap * sizeof *v->token);
        v->cased = xrealloc(v->cased, *cap * sizeof *v->cased);
    }
    v->token[v->size] = xstrdup(token);
    v->cased[v->size] = xstrdup(cased);
    table_put(&v->index, at, v->size, vocab_key, v);
    v->size++;
    return 0;
}

Vocab *vocab_load(const char *path, Error *err)
{
    /* Only a regular file: a FIFO or /dev/zero would hang or flood us. */
    FILE *f = input_file_fopen(path, 0, err);
    if (!f) return NULL;
    Vocab *v = xcalloc(1, sizeof *v);
    table_alloc(&v->index, 1024);
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
                  special_tokens[v->size], v->size);
        goto fail;
    }
    /* The hash covers the token strings in id order, each with its NUL so
     * that "ab","c" and "a","bc" differ. */
    v->hash = FNV_OFFSET;
    for (int id = 0; id < v->size; id++)
        v->hash = fnv1a(v->hash, v->token[id], strlen(v->token[id]) + 1);
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
    int id = vocab->index.slot[table_find(&vocab->index, token, vocab_key, vocab)];
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

/* ---- VocabBuilder ------------------------------------------------------------ */

typedef struct {
    char *surface;
    long count;
} Casing;

typedef struct {
    char *folded;
    long count;
    Casing *casing;     /* every surface form seen, with its count */
    size_t n_casing;
} Entry;

struct VocabBuilder {
    Entry *entry;
    size_t n, cap;
    Table index;        /* folded → entry */
};

static const char *builder_key(const void *owner, int i)
{
    return ((const VocabBuilder *)owner)->entry[i].folded;
}

VocabBuilder *vocab_builder_new(void)
{
    VocabBuilder *b = xcalloc(1, sizeof *b);
    table_alloc(&b->index, 1024);
    return b;
}

void vocab_builder_add(VocabBuilder *b, const char *folded, const char *surface)
{
    /* The tokenizer never makes these; anything else would break the file. */
    ASSERT(folded[0] && !strpbrk(folded, "\t\n\r"));
    ASSERT(surface[0] && !strpbrk(surface, "\t\n\r"));
    size_t at = table_find(&b->index, folded, builder_key, b);
    int index = b->index.slot[at];
    if (index < 0) {
        ASSERT(b->n < (size_t)INT32_MAX); /* the table holds int indices */
        if (b->n == b->cap) {
            b->cap = b->cap ? 2 * b->cap : 1024;
            b->entry = xrealloc(b->entry, b->cap * sizeof *b->entry);
        }
        index = (int)b->n++;
        b->entry[index] = (Entry){.folded = xstrdup(folded)};
        table_put(&b->index, at, index, builder_key, b);
    }
    Entry *e = &b->entry[index];
    e->count++;
    /* Few words have more than three casings: a scan is fine here. */
    for (size_t i = 0; i < e->n_casing; i++)
        if (strcmp(e->casing[i].surface, surface) == 0) {
            e->casing[i].count++;
            return;
        }
    e->casing = xrealloc(e->casing, (e->n_casing + 1) * sizeof *e->casing);
    e->casing[e->n_casing++] = (Casing){xstrdup(surface), 1};
}

/* Most frequent first; ties by the folded bytes, so the file is the same
 * whatever order the texts were added in. */
static int by_count(const void *pa, const void *pb)
{
    const Entry *a = *(const Entry *const *)pa, *b = *(const Entry *const *)pb;
    if (a->count != b->count) return a->count > b->count ? -1 : 1;
    return strcmp(a->folded, b->folded);
}

/* The most frequent surface form (ties by bytes). */
static const char *usual_casing(const Entry *e)
{
    const Casing *best = &e->casing[0];
    for (size_t i = 1; i < e->n_casing; i++) {
        const Casing *c = &e->casing[i];
        if (c->count > best->count || (c->count == best->count && strcmp(c->surface, best->surface) < 0))
            best = c;
    }
    return best->surface;
}

static int is_special(const char *token)
{
    for (int i = 0; i < VOCAB_SPECIALS; i++)
        if (strcmp(token, special_tokens[i]) == 0) return 1;
    return 0;
}

int vocab_builder_write(const VocabBuilder *b, const char *path, int max_size, int min_count,
                        Error *err)
{
    if (max_size < VOCAB_SPECIALS)
        return error_set(err, "%s: vocabulary size %d is below the %d special tokens", path,
                         max_size, VOCAB_SPECIALS);
    const Entry **order = xmalloc(b->n * sizeof *order);
    for (size_t i = 0; i < b->n; i++) order[i] = &b->entry[i];
    qsort(order, b->n, sizeof *order, by_count);

    /* A crash never leaves a half-written vocabulary under the real name
     * (common/output_file.h). */
    OutputFile *out = output_file_open(path, 0, err);
    if (!out) {
        free(order);
        return -1;
    }
    FILE *f = output_file_stream(out);
    for (int i = 0; i < VOCAB_SPECIALS; i++)
        fprintf(f, "%s\t%s\t0\n", special_tokens[i], special_tokens[i]);
    int size = VOCAB_SPECIALS;
    for (size_t i = 0; i < b->n && size < max_size; i++) {
        if (order[i]->count < min_count) break; /* sorted: the rest are rarer */
        if (is_special(order[i]->folded)) continue;
        const char *cased = usual_casing(order[i]);
        /* a "word" thousands of bytes long is junk, and vocab_load would
         * refuse its line: leave it out (2 tabs + at most 20 digits) */
        if (strlen(order[i]->folded) + strlen(cased) + 22 > VOCAB_MAX_LINE_BYTES) continue;
        fprintf(f, "%s\t%s\t%ld\n", order[i]->folded, cased, order[i]->count);
        size++;
    }
    free(order);
    return output_file_commit(out, err);
}

void vocab_builder_free(VocabBuilder *b)
{
    if (!b) return;
    for (size_t i = 0; i < b->n; i++) {
        for (size_t k = 0; k < b->entry[i].n_casing; k++) free(b->entry[i].casing[k].surface);
        free(b->entry[i].casing);
        free(b->entry[i].folded);
    }
    free(b->entry);
    free(b->index.slot);
    free(b);
}
