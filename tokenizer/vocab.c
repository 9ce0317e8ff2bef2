/* vocab.c — the vocabulary file: loading, lookup, hashing, encoding a
 * token into pieces (see vocab.h for the format; building a vocabulary is
 * tokenizer/vocab_builder.c).
 *
 * Lookup is an open-addressing hash table (linear probing, at most half
 * full) from token to id, so tokenising a corpus costs O(1) per token.
 *
 * Loading runs at every start of translate (two files of 5,000-8,000
 * lines), so it reads 64 KiB at a time (common/line.h's LineReader),
 * checks each line in one pass, and copies its strings into one block:
 * en-zh's two took 4.2 ms before (issue 12's profile), most of it getc,
 * two mallocs per id and rehashing as the table grew; 1.6 ms of CPU
 * after, on the same machine loaded (4.3 ms before, loaded; 3.7x fewer
 * instructions, callgrind). */
#include "vocab.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    for (size_t i = 0; i < capacity; i++) t->slot[i].index = -1;
    t->mask = capacity - 1;
    t->used = 0;
}

void vocab_table_free(VocabTable *t)
{
    free(t->slot);
    memset(t, 0, sizeof *t);
}

uint32_t vocab_table_hash(const char *key, size_t len)
{
    /* Eight bytes per multiply (FNV-1a's one per byte was a sixth of a
     * vocabulary's load, perf), the length mixed in; then the high bits
     * folded into the low ones that pick the slot (MurmurHash3's
     * finaliser).  Only this table sees it: the
     * vocabulary's own hash (vocab_hash) is FNV-1a, as recorded in weights. */
    const uint64_t k = 0xff51afd7ed558ccdULL;
    const unsigned char *p = (const unsigned char *)key;
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ len, w;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        memcpy(&w, p + i, 8);
        h = (h ^ w) * k;
        h ^= h >> 32;
    }
    /* The last 1-7 bytes in one word without a byte-wise copy (whose
     * stores a wider load cannot take from: a stall per key): two 4-byte
     * loads that may overlap, or the first, middle and last byte. */
    size_t n = len - i;
    if (n >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, p + i, 4);
        memcpy(&hi, p + len - 4, 4);
        w = (uint64_t)hi << 32 | lo;
    } else {
        w = n ? (uint64_t)p[i] << 16 | (uint64_t)p[i + n / 2] << 8 | p[len - 1] : 0;
    }
    if (n) h = (h ^ w) * k;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return (uint32_t)h;
}

size_t vocab_table_find(const VocabTable *t, const char *key, uint32_t hash, VocabKeyOf key_of,
                        const void *owner)
{
    size_t i = hash & t->mask;
    while (t->slot[i].index >= 0 &&
           (t->slot[i].hash != hash || strcmp(key_of(owner, t->slot[i].index), key) != 0))
        i = (i + 1) & t->mask;
    return i;
}

void vocab_table_put(VocabTable *t, size_t at, int index, uint32_t hash)
{
    t->slot[at] = (VocabSlot){index, hash};
    if (++t->used * 2 <= t->mask + 1) return;
    /* Twice the slots, each entry moved by its stored hash: no key is
     * read or hashed again.  The same places as inserting them anew. */
    VocabTable bigger;
    vocab_table_alloc(&bigger, 2 * (t->mask + 1));
    for (size_t i = 0; i <= t->mask; i++) {
        if (t->slot[i].index < 0) continue;
        size_t j = t->slot[i].hash & bigger.mask;
        while (bigger.slot[j].index >= 0) j = (j + 1) & bigger.mask;
        bigger.slot[j] = t->slot[i];
    }
    bigger.used = t->used;
    vocab_table_free(t);
    *t = bigger;
}

/* ---- Vocab ------------------------------------------------------------------ */

/* Where an id's strings are in Vocab.text: its folded token at `token`,
 * its usual casing at `cased`, right after the token's NUL (so the token
 * is cased - token - 1 bytes long), and its casing inside longer words at
 * `in_word` (the same string as `cased` when the file gives none). */
typedef struct {
    size_t token, cased, in_word;
    double count;   /* the file's count (0 for vocab_add's tokens) */
} Entry;

struct Vocab {
    int size;
    Entry *entry;   /* [size] */
    size_t cap;     /* room in entry */
    /* Every token and casing, NUL-terminated, in id order: one block, not
     * two mallocs per id at load and two frees at exit. */
    char *text;
    size_t text_len, text_cap;
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
    /* snprintf("%s<0x%02X>") without snprintf: a subword vocabulary's load
     * checks 448 of these, and snprintf was a tenth of its instructions. */
    static const char hex[] = "0123456789ABCDEF";
    char name[11];
    size_t n = 0;
    if (k >= BYTE_STARTS) name[n++] = '#', name[n++] = '#';
    int b = byte_of(k);
    memcpy(name + n, "<0x", 3);
    n += 3;
    name[n++] = hex[b >> 4];
    name[n++] = hex[b & 15];
    name[n++] = '>';
    name[n] = '\0';
    ASSERT(size > 0);
    if (n >= size) n = size - 1;
    memcpy(buf, name, n);
    buf[n] = '\0';
}

int vocab_is_byte_id(const Vocab *v, int id)
{
    return v->subword && id >= VOCAB_SPECIALS && id < VOCAB_SPECIALS + VOCAB_BYTE_TOKENS;
}

static const char *token_of(const Vocab *v, int id) { return v->text + v->entry[id].token; }
static const char *cased_of(const Vocab *v, int id) { return v->text + v->entry[id].cased; }
static const char *in_word_of(const Vocab *v, int id) { return v->text + v->entry[id].in_word; }
static size_t length_of(const Vocab *v, int id) { return v->entry[id].cased - v->entry[id].token - 1; }

static const char *vocab_key(const void *owner, int id) { return token_of(owner, id); }

/* A file line's strings, split in place (in_word NULL when absent). */
typedef struct {
    char *token, *cased, *in_word;
    size_t token_len, cased_len, in_word_len;
    double count;
} Fields;

/* 0x80 in each byte of w that is 0, nothing elsewhere: exact, unlike the
 * shorter (w - 0x01..) & ~w & 0x80.. whose borrow can mark the byte after
 * a zero (Hacker's Delight 6-1).  Bytes are in memory order (little-endian
 * host, as safetensors.c asserts), so the lowest mark is the first byte. */
static uint64_t zero_bytes(uint64_t w)
{
    const uint64_t low7 = 0x7f7f7f7f7f7f7f7fULL;
    return ~(((w & low7) + low7) | w | low7);
}

/* Check one "token<TAB>cased<TAB>count[<TAB>in_word]" line (newline
 * already removed) and split it in place.  One pass finds the tabs and
 * says whether the line is plain ASCII without NUL (then it needs no UTF-8
 * decoding); the checks and their order are those of a strchr/strspn per
 * field.  Returns 0, or -1 with a message without location. */
static int parse_line(char *line, size_t len, Fields *f, Error *err)
{
    size_t tab[4] = {len, len, len, len};
    int tabs = 0;
    /* Eight bytes a step (a line is ~16 bytes): a byte at a time, with a
     * branch per byte on the tabs, this loop was ~20% of loading en-zh's
     * two vocabularies, warm; now they load ~6% faster (720 -> 676 us,
     * best of 300, page faults aside). */
    uint64_t high = 0, nul = 0;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, line + i, 8);
        high |= w;
        nul |= zero_bytes(w);
        for (uint64_t t = zero_bytes(w ^ 0x0909090909090909ULL); t && tabs < 4; t &= t - 1)
            tab[tabs++] = i + (size_t)__builtin_ctzll(t) / 8;
    }
    for (; i < len; i++) {
        unsigned char c = (unsigned char)line[i];
        high |= c;
        nul |= c == 0;
        if (c == '\t' && tabs < 4) tab[tabs++] = i;
    }
    if (nul) return error_set(err, "NUL byte in line");
    if ((high & 0x8080808080808080ULL) && !utf8_valid(line, len)) return error_set(err, "invalid UTF-8");
    if (tabs != 2 && tabs != 3)
        return error_set(err, "expected 3 or 4 tab-separated fields: token, cased, count[, cased in a word]");
    line[tab[0]] = line[tab[1]] = '\0';
    if (tabs == 3) line[tab[2]] = '\0';
    *f = (Fields){line, line + tab[0] + 1, NULL, tab[0], tab[1] - tab[0] - 1, 0, 0};
    const char *count = line + tab[1] + 1;
    size_t count_len = tab[2] - tab[1] - 1;
    if (tabs == 3) {
        f->in_word = line + tab[2] + 1;
        f->in_word_len = len - tab[2] - 1;
    }
    if (!f->token_len) return error_set(err, "empty token");
    if (!f->cased_len) return error_set(err, "empty cased form for '%s'", f->token);
    if (f->in_word && !f->in_word_len)
        return error_set(err, "empty cased-in-a-word form for '%s'", f->token);
    size_t digits = 0;
    while (digits < count_len && count[digits] >= '0' && count[digits] <= '9') digits++;
    if (!count_len || digits != count_len)
        return error_set(err, "count '%s' is not a non-negative integer", count);
    /* Counts are whole numbers a double holds exactly (train --recase
     * writes them back). */
    for (size_t i = 0; i < count_len; i++) f->count = 10 * f->count + (count[i] - '0');
    if (f->count > 9007199254740992.0) return error_set(err, "count '%s' is larger than 2^53", count);
    return 0;
}

/* Check and add the next id, `token` (token_len bytes) with `cased` and,
 * unless NULL, `in_word`. */
static int add_entry(Vocab *v, const char *token, size_t token_len, const char *cased, size_t cased_len,
                     const char *in_word, size_t in_word_len, double count, Error *err)
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
    uint32_t hash = vocab_table_hash(token, token_len);
    size_t at = vocab_table_find(&v->index, token, hash, vocab_key, v);
    if (v->index.slot[at].index >= 0)
        return error_set(err, "duplicate token '%s' (also id %d)", token, v->index.slot[at].index);
    ASSERT(v->size < INT32_MAX); /* the table holds int ids (VOCAB_MAX_LINES is far below) */
    if ((size_t)v->size == v->cap) {
        v->cap *= 2; /* vocab_new made it > 0 */
        v->entry = xrealloc(v->entry, v->cap * sizeof *v->entry);
    }
    size_t need = token_len + cased_len + 2 + (in_word ? in_word_len + 1 : 0);
    if (v->text_cap - v->text_len < need) {
        while (v->text_cap - v->text_len < need) v->text_cap *= 2;
        v->text = xrealloc(v->text, v->text_cap);
    }
    Entry *e = &v->entry[v->size];
    e->token = v->text_len;
    e->cased = e->token + token_len + 1;
    memcpy(v->text + e->token, token, token_len + 1);
    memcpy(v->text + e->cased, cased, cased_len + 1);
    e->count = count;
    e->in_word = e->cased;
    if (in_word) {
        e->in_word = e->cased + cased_len + 1;
        memcpy(v->text + e->in_word, in_word, in_word_len + 1);
    }
    v->text_len += need;
    vocab_table_put(&v->index, at, v->size, hash);
    /* vocab_hash: the token with its NUL, so that "ab","c" and "a","bc"
     * differ.  Here, not in a loop of its own at the end: FNV-1a is one
     * chain of multiplies (4 cycles a byte), which here runs beside the
     * parsing of the next lines; alone it was ~10% of a load (perf). */
    v->hash = fnv1a(v->hash, v->text + e->token, token_len + 1);
    v->size++;
    return 0;
}

int vocab_add(Vocab *v, const char *token, const char *cased, Error *err)
{
    return add_entry(v, token, strlen(token), cased, strlen(cased), NULL, 0, 0, err);
}

/* The next power of two >= n (n <= SIZE_MAX / 2). */
static size_t pow2_at_least(size_t n)
{
    size_t p = 1;
    while (p < n) p *= 2;
    return p;
}

Vocab *vocab_new(size_t expected)
{
    /* Room for `expected` ids from the start, so that nothing grows while
     * a file loads; a hint too large only costs memory, so it is capped
     * (beyond that, everything still doubles as it fills). */
    enum { MIN_EXPECTED = 512, MAX_EXPECTED = 1 << 16, BYTES_PER_ID = 12 };
    if (expected < MIN_EXPECTED) expected = MIN_EXPECTED;
    if (expected > MAX_EXPECTED) expected = MAX_EXPECTED;
    Vocab *v = xcalloc(1, sizeof *v);
    v->hash = FNV_OFFSET;
    vocab_table_alloc(&v->index, pow2_at_least(2 * expected));
    v->cap = expected;
    v->entry = xmalloc(v->cap * sizeof *v->entry);
    v->text_cap = expected * BYTES_PER_ID;
    v->text = xmalloc(v->text_cap);
    return v;
}

/* What is derived from the token list once it is complete (the hash is
 * add_entry's). */
void vocab_finish(Vocab *v)
{
    for (int b = 0; b < 256; b++) v->byte_text[b][0] = (char)b, v->byte_text[b][1] = '\0';
    v->max_piece = 0;
    for (int id = VOCAB_SPECIALS + (v->subword ? VOCAB_BYTE_TOKENS : 0); id < v->size; id++) {
        size_t n = length_of(v, id);
        if (strncmp(token_of(v, id), "##", 2) == 0) n -= 2;
        if (n > v->max_piece) v->max_piece = n;
    }
}

Vocab *vocab_load(const char *path, Error *err)
{
    /* Only a regular file: a FIFO or /dev/zero would hang or flood us. */
    struct stat st;
    int fd = input_file_open(path, 0, &st, err);
    if (fd < 0) return NULL;
    /* Our files have 11-17 bytes a line ("the\tthe\t48213\n", "中\t中\t734\n"). */
    Vocab *v = vocab_new((size_t)st.st_size / 12);
    LineReader in;
    line_reader_init(&in, fd, VOCAB_MAX_LINE_BYTES);
    char *text;
    long got;
    long lineno = 0;
    Error line_err;
    while ((got = line_reader_next(&in, &text)) != LINE_EOF) {
        if (got == LINE_READ_ERROR) {
            error_set(err, "%s: cannot read: %s", path, strerror(errno));
            goto fail;
        }
        if (++lineno > VOCAB_MAX_LINES) {
            error_set(err, "%s: more than %ld lines", path, VOCAB_MAX_LINES);
            goto fail;
        }
        if (got == LINE_TOO_LONG) {
            error_set(err, "%s:%ld: longer than %d bytes", path, lineno, VOCAB_MAX_LINE_BYTES);
            goto fail;
        }
        size_t len = (size_t)got;
        if (lineno == 1) {
            size_t bom = utf8_bom_length(text, len);
            text += bom;
            len -= bom;
        }
        if (v->size == 0 && text[0] == '#') continue;
        Fields f = {0};
        if (parse_line(text, len, &f, &line_err) < 0 ||
            add_entry(v, f.token, f.token_len, f.cased, f.cased_len, f.in_word, f.in_word_len, f.count,
                      &line_err) < 0) {
            error_set(err, "%s:%ld: %s", path, lineno, line_err.message);
            goto fail;
        }
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
    line_reader_free(&in);
    close(fd);
    return v;

fail:
    line_reader_free(&in);
    close(fd);
    vocab_free(v);
    return NULL;
}

void vocab_free(Vocab *vocab)
{
    if (!vocab) return;
    free(vocab->entry);
    free(vocab->text);
    vocab_table_free(&vocab->index);
    free(vocab);
}

int vocab_size(const Vocab *vocab) { return vocab->size; }

int vocab_id(const Vocab *vocab, const char *token)
{
    uint32_t hash = vocab_table_hash(token, strlen(token));
    int id = vocab->index.slot[vocab_table_find(&vocab->index, token, hash, vocab_key, vocab)].index;
    return id >= 0 ? id : VOCAB_UNK;
}

const char *vocab_token(const Vocab *vocab, int id)
{
    ASSERT(id >= 0 && id < vocab->size);
    return token_of(vocab, id);
}

const char *vocab_cased(const Vocab *vocab, int id)
{
    ASSERT(id >= 0 && id < vocab->size);
    return cased_of(vocab, id);
}

uint64_t vocab_hash(const Vocab *vocab) { return vocab->hash; }

double vocab_count(const Vocab *vocab, int id)
{
    ASSERT(id >= 0 && id < vocab->size);
    return vocab->entry[id].count;
}

int vocab_is_subword(const Vocab *vocab) { return vocab->subword; }

/* The id of token[from..to) as a piece ("##" first when it continues a
 * word), or -1.  `key` has room for 2 + max_piece + 1 bytes. */
static int piece_id(const Vocab *v, const char *token, size_t from, size_t to, char *key)
{
    size_t k = 0;
    if (from > 0) key[k++] = '#', key[k++] = '#';
    memcpy(key + k, token + from, to - from);
    key[k + to - from] = '\0';
    uint32_t hash = vocab_table_hash(key, k + to - from);
    int id = v->index.slot[vocab_table_find(&v->index, key, hash, vocab_key, v)].index;
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

const char *vocab_piece(const Vocab *vocab, int id, VocabForm form, int *continues)
{
    ASSERT(id >= 0 && id < vocab->size);
    if (vocab_is_byte_id(vocab, id)) {
        int k = id - VOCAB_SPECIALS;
        *continues = k >= BYTE_STARTS;
        return vocab->byte_text[byte_of(k)];
    }
    const char *t = form == VOCAB_FOLDED ? token_of(vocab, id)
                  : form == VOCAB_CASED  ? cased_of(vocab, id)
                                         : in_word_of(vocab, id);
    *continues = vocab->subword && strncmp(token_of(vocab, id), "##", 2) == 0;
    if (*continues && strncmp(t, "##", 2) == 0) t += 2;
    return t;
}
