/* vocab.c — the vocabulary file: loading, lookup, hashing, encoding a
 * token into pieces, building (see vocab.h for the format).
 *
 * Lookup is an open-addressing hash table (linear probing, FNV-1a, at most
 * half full) from token to id, so tokenising a corpus costs O(1) per token.
 * The builder keeps one entry per folded token with the counts of each
 * surface casing it was seen in; it is only used offline (trainer, tests),
 * so it favours plainness over memory.  Subword pieces are learned by
 * tokenizer/bpe.c; what is here is how they are used and written. */
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
#include "bpe.h"
#include "tokenizer.h"

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

static void byte_token_name(char *buf, size_t size, int k)
{
    snprintf(buf, size, "%s<0x%02X>", k < BYTE_STARTS ? "" : "##", byte_of(k));
}

static int is_byte_id(const Vocab *v, int id)
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
static int vocab_add(Vocab *v, size_t *cap, const char *token, const char *cased, Error *err)
{
    if (v->size < VOCAB_SPECIALS && strcmp(token, special_tokens[v->size]) != 0)
        return error_set(err, "expected '%s' (id %d), found '%s'", special_tokens[v->size],
                         v->size, token);
    /* The first byte token after the specials makes it a subword
     * vocabulary, and then all 448 must follow in order. */
    if (v->size == VOCAB_SPECIALS && strcmp(token, "<0x00>") == 0) v->subword = 1;
    if (v->subword && v->size < VOCAB_SPECIALS + VOCAB_BYTE_TOKENS) {
        char want[16];
        byte_token_name(want, sizeof want, v->size - VOCAB_SPECIALS);
        if (strcmp(token, want) != 0)
            return error_set(err, "expected byte token '%s' (id %d), found '%s'", want, v->size, token);
    }
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

static Vocab *vocab_new(void)
{
    Vocab *v = xcalloc(1, sizeof *v);
    table_alloc(&v->index, 1024);
    return v;
}

/* What is derived from the token list once it is complete.  The hash
 * covers the token strings in id order, each with its NUL so that
 * "ab","c" and "a","bc" differ. */
static void vocab_finish(Vocab *v)
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
                  special_tokens[v->size], v->size);
        goto fail;
    }
    if (v->subword && v->size < VOCAB_SPECIALS + VOCAB_BYTE_TOKENS) {
        char want[16];
        byte_token_name(want, sizeof want, v->size - VOCAB_SPECIALS);
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

int vocab_is_subword(const Vocab *vocab) { return vocab->subword; }

/* The id of token[from..to) as a piece ("##" first when it continues a
 * word), or -1.  `key` has room for 2 + max_piece + 1 bytes. */
static int piece_id(const Vocab *v, const char *token, size_t from, size_t to, char *key)
{
    size_t k = 0;
    if (from > 0) key[k++] = '#', key[k++] = '#';
    memcpy(key + k, token + from, to - from);
    key[k + to - from] = '\0';
    int id = v->index.slot[table_find(&v->index, key, vocab_key, v)];
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
    if (is_byte_id(vocab, id)) {
        int k = id - VOCAB_SPECIALS;
        *continues = k >= BYTE_STARTS;
        return vocab->byte_text[byte_of(k)];
    }
    const char *t = cased ? vocab->cased[id] : vocab->token[id];
    *continues = vocab->subword && strncmp(vocab->token[id], "##", 2) == 0;
    if (*continues && strncmp(t, "##", 2) == 0) t += 2;
    return t;
}

/* ---- VocabBuilder ------------------------------------------------------------ */

typedef struct {
    char *surface;
    double other;       /* weighted count where not sentence-initial */
    double initial;     /* ... and where sentence-initial */
} Casing;

typedef struct {
    char *folded;
    double count;
    Casing *casing;     /* every surface form seen, with its counts */
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

/* Count `weight` more of `surface` in a list of casings.  Few tokens have
 * more than three casings: a scan is fine here. */
static void add_casing(Casing **casing, size_t *n, const char *surface, double weight, int initial)
{
    Casing *c = NULL;
    for (size_t i = 0; i < *n && !c; i++)
        if (strcmp((*casing)[i].surface, surface) == 0) c = &(*casing)[i];
    if (!c) {
        *casing = xrealloc(*casing, (*n + 1) * sizeof **casing);
        c = &(*casing)[(*n)++];
        *c = (Casing){xstrdup(surface), 0, 0};
    }
    *(initial ? &c->initial : &c->other) += weight;
}

static void builder_add(VocabBuilder *b, const char *folded, const char *surface, double weight,
                        int initial)
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
    e->count += weight;
    add_casing(&e->casing, &e->n_casing, surface, weight, initial);
}

void vocab_builder_add(VocabBuilder *b, const char *folded, const char *surface)
{
    builder_add(b, folded, surface, 1.0, 0);
}

/* Tokens that end a sentence, and quotes that may follow them before the
 * next sentence's first word (after NFKC: ！ is !, ？ is ?). */
static int is_stop(const char *t) { return strcmp(t, ".") == 0 || strcmp(t, "?") == 0 || strcmp(t, "!") == 0 || strcmp(t, "。") == 0; }

static int is_quote(const char *t)
{
    static const char *const quotes[] = {"\"", "'", "“", "”", "‘", "’", "«", "»", "「", "」", "『", "』"};
    for (size_t i = 0; i < sizeof quotes / sizeof quotes[0]; i++)
        if (strcmp(t, quotes[i]) == 0) return 1;
    return 0;
}

int vocab_builder_add_text(VocabBuilder *b, const char *text, size_t len, double weight, Error *err)
{
    ASSERT(weight > 0);
    TokenList tokens;
    if (tokenize(text, len, &tokens, err)) return -1;
    int initial = 1; /* the next word starts a sentence */
    for (size_t i = 0; i < tokens.count; i++) {
        const char *t = tokens.folded[i];
        builder_add(b, t, tokens.surface[i], weight, initial && tokenizer_is_word(t));
        if (is_stop(t)) initial = 1;
        else if (!is_quote(t)) initial = 0;
    }
    token_list_free(&tokens);
    return 0;
}

/* Most frequent first; ties by the folded bytes, so the file is the same
 * whatever order the texts were added in. */
static int by_count(const void *pa, const void *pb)
{
    const Entry *a = *(const Entry *const *)pa, *b = *(const Entry *const *)pb;
    if (a->count != b->count) return a->count > b->count ? -1 : 1;
    return strcmp(a->folded, b->folded);
}

/* The most frequent surface form (ties by bytes), counting the
 * sentence-initial occurrences only when there are no others. */
static const char *usual_casing(const Casing *casing, size_t n)
{
    int any_other = 0;
    for (size_t i = 0; i < n; i++) any_other |= casing[i].other > 0;
    const Casing *best = NULL;
    double best_count = 0;
    for (size_t i = 0; i < n; i++) {
        const Casing *c = &casing[i];
        double count = any_other ? c->other : c->initial;
        if (!best || count > best_count || (count == best_count && strcmp(c->surface, best->surface) < 0))
            best = c, best_count = count;
    }
    return best->surface;
}

static int is_special(const char *token)
{
    for (int i = 0; i < VOCAB_SPECIALS; i++)
        if (strcmp(token, special_tokens[i]) == 0) return 1;
    return 0;
}

/* Does a line of these fields fit (2 tabs + at most 20 digits)?  A "word"
 * thousands of bytes long is junk, and vocab_load would refuse its line. */
static int fits_line(const char *token, const char *cased)
{
    return strlen(token) + strlen(cased) + 22 <= VOCAB_MAX_LINE_BYTES;
}

static void write_specials(FILE *f)
{
    for (int i = 0; i < VOCAB_SPECIALS; i++)
        fprintf(f, "%s\t%s\t0\n", special_tokens[i], special_tokens[i]);
}

int vocab_builder_write(const VocabBuilder *b, const char *path, int max_size, int min_count,
                        Error *err)
{
    if (max_size < VOCAB_SPECIALS)
        return error_set(err, "%s: vocabulary size %d is below the %d special tokens", path,
                         max_size, VOCAB_SPECIALS);
    const Entry **order = xmalloc((b->n ? b->n : 1) * sizeof *order);
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
    write_specials(f);
    int size = VOCAB_SPECIALS;
    for (size_t i = 0; i < b->n && size < max_size; i++) {
        if (order[i]->count < min_count) break; /* sorted: the rest are rarer */
        if (is_special(order[i]->folded)) continue;
        const char *cased = usual_casing(order[i]->casing, order[i]->n_casing);
        if (!fits_line(order[i]->folded, cased)) continue;
        fprintf(f, "%s\t%s\t%.0f\n", order[i]->folded, cased, order[i]->count);
        size++;
    }
    free(order);
    return output_file_commit(out, err);
}

/* ---- Subword vocabularies ------------------------------------------------------ */

/* The casing votes for one piece.  Each word votes, with each of its
 * casings' counts, for the stretch of that casing the piece covers; the
 * stretch is used only when it folds back to the piece (a casing that
 * changes the word's length, like "ẞ" → "ss", cannot be cut at the piece's
 * bytes), else the piece's own letters.  Votes from words that are the
 * piece alone are kept apart from votes from longer words: "t" is lower
 * case even though "Tom" starts with it.  A sentence-initial capital votes
 * only for a piece that is the whole word: inside "She" it says nothing
 * about the piece "s", which many words share. */
typedef struct {
    Casing *whole, *part;
    size_t n_whole, n_part;
} Votes;

static void vote_casings(const Vocab *v, const Entry *e, Votes *votes, int *ids, size_t *ends)
{
    size_t len = strlen(e->folded);
    size_t k = vocab_encode_token(v, e->folded, ids, ends);
    char *buf = xmalloc(len + 3);
    for (size_t c = 0; c < e->n_casing; c++) {
        const Casing *cas = &e->casing[c];
        const char *cased = cas->surface;
        int same_len = strlen(cased) == len;
        for (size_t j = 0, from = 0; j < k; from = ends[j++]) {
            if (is_byte_id(v, ids[j])) continue;
            size_t to = ends[j], n = 0;
            if (from > 0) buf[n++] = '#', buf[n++] = '#';
            const char *src = e->folded;
            if (same_len && ((unsigned char)cased[from] & 0xC0) != 0x80 &&
                (to == len || ((unsigned char)cased[to] & 0xC0) != 0x80) &&
                utf8_valid(cased + from, to - from)) {
                memcpy(buf + n, cased + from, to - from);
                buf[n + to - from] = '\0';
                char *folded = tokenizer_fold(buf + n);
                if (strcmp(folded, v->token[ids[j]] + n) == 0) src = cased;
                free(folded);
            }
            memcpy(buf + n, src + from, to - from);
            buf[n + to - from] = '\0';
            Votes *pv = &votes[ids[j]];
            Casing **list = k == 1 ? &pv->whole : &pv->part;
            size_t *count = k == 1 ? &pv->n_whole : &pv->n_part;
            if (cas->other > 0) add_casing(list, count, buf, cas->other, 0);
            if (cas->initial > 0 && k == 1) add_casing(list, count, buf, cas->initial, 1);
        }
    }
    free(buf);
}

/* The casing with the most votes of one kind (ties by bytes), or NULL. */
static const char *most_votes(const Casing *c, size_t n, int initial)
{
    const Casing *best = NULL;
    for (size_t i = 0; i < n; i++) {
        double count = initial ? c[i].initial : c[i].other;
        double best_count = best ? (initial ? best->initial : best->other) : 0;
        if (count > 0 && (!best || count > best_count ||
                          (count == best_count && strcmp(c[i].surface, best->surface) < 0)))
            best = &c[i];
    }
    return best ? best->surface : NULL;
}

/* Non-initial occurrences before initial ones, and the piece as a word of
 * its own before the piece inside longer words. */
static const char *piece_casing(const Votes *v, const char *token)
{
    const char *c = most_votes(v->whole, v->n_whole, 0);
    if (!c) c = most_votes(v->part, v->n_part, 0);
    if (!c) c = most_votes(v->whole, v->n_whole, 1);
    return c ? c : token;
}

static void free_casings(Casing *c, size_t n)
{
    for (size_t k = 0; k < n; k++) free(c[k].surface);
    free(c);
}

int vocab_builder_write_subword(const VocabBuilder *b, const char *path, int max_size, int min_count,
                                Error *err)
{
    const int reserved = VOCAB_SPECIALS + VOCAB_BYTE_TOKENS;
    if (max_size <= reserved)
        return error_set(err, "%s: subword vocabulary size %d leaves no room for pieces after the %d "
                              "special and byte tokens", path, max_size, reserved);
    BpeToken *tokens = xmalloc((b->n ? b->n : 1) * sizeof *tokens);
    size_t n = 0;
    for (size_t i = 0; i < b->n; i++)
        if (!is_special(b->entry[i].folded)) tokens[n++] = (BpeToken){b->entry[i].folded, b->entry[i].count};
    BpePieces pieces;
    bpe_learn(tokens, n, (size_t)(max_size - reserved), min_count, &pieces);
    free(tokens);

    /* The vocabulary in memory, to encode each word with as the file's
     * reader will, for the casing votes. */
    Vocab *v = vocab_new();
    size_t cap = 0;
    char name[16];
    for (int i = 0; i < VOCAB_SPECIALS; i++) vocab_add(v, &cap, special_tokens[i], special_tokens[i], NULL);
    for (int k = 0; k < VOCAB_BYTE_TOKENS; k++) {
        byte_token_name(name, sizeof name, k);
        vocab_add(v, &cap, name, name, NULL);
    }
    double *freq = xcalloc((size_t)reserved + pieces.count, sizeof *freq);
    for (size_t i = 0; i < pieces.count; i++) {
        if (strlen(pieces.piece[i]) > BPE_MAX_PIECE_BYTES + 2) continue; /* a junk token: its bytes */
        freq[v->size] = pieces.freq[i];
        int added = vocab_add(v, &cap, pieces.piece[i], pieces.piece[i], NULL);
        ASSERT(added == 0); /* bpe_learn makes each piece once */
    }
    bpe_pieces_free(&pieces);
    vocab_finish(v);

    Votes *votes = xcalloc((size_t)v->size, sizeof *votes);
    size_t longest = 1;
    for (size_t i = 0; i < b->n; i++)
        if (strlen(b->entry[i].folded) > longest) longest = strlen(b->entry[i].folded);
    int *ids = xmalloc(longest * sizeof *ids);
    size_t *ends = xmalloc(longest * sizeof *ends);
    for (size_t i = 0; i < b->n; i++)
        if (!is_special(b->entry[i].folded)) vote_casings(v, &b->entry[i], votes, ids, ends);
    free(ids);
    free(ends);

    int status = -1;
    OutputFile *out = output_file_open(path, 0, err);
    if (out) {
        FILE *f = output_file_stream(out);
        write_specials(f);
        for (int id = VOCAB_SPECIALS; id < v->size; id++) {
            const char *cased = piece_casing(&votes[id], v->token[id]);
            fprintf(f, "%s\t%s\t%.0f\n", v->token[id], cased, freq[id]);
        }
        status = output_file_commit(out, err);
    }
    for (int id = 0; id < v->size; id++) {
        free_casings(votes[id].whole, votes[id].n_whole);
        free_casings(votes[id].part, votes[id].n_part);
    }
    free(votes);
    free(freq);
    vocab_free(v);
    return status;
}

void vocab_builder_free(VocabBuilder *b)
{
    if (!b) return;
    for (size_t i = 0; i < b->n; i++) {
        free_casings(b->entry[i].casing, b->entry[i].n_casing);
        free(b->entry[i].folded);
    }
    free(b->entry);
    free(b->index.slot);
    free(b);
}
