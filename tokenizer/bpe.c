/* bpe.c — learning subword pieces (see bpe.h).
 *
 * The plain algorithm: keep every word type as an array of symbol ids, and
 * a table of the counts of all adjacent pairs.  Each merge picks the pair
 * with the highest count by a scan of the table, then rewrites the words
 * that hold it, taking their old pairs out of the table and putting their
 * new ones in.  That is O(merges × (symbols + pairs)); on the Tatoeba
 * English side (8,000 pieces) it takes about a second, so no heap or
 * pair → word index is kept (tests/test_subword.c measures it).
 *
 * Why WordPiece's "##" and not a word-end marker ("</w>") or a space
 * prefix ("▁"): the tokenizer already cuts words, so a piece needs only
 * say whether it starts one; "#" is always a punctuation token of its own,
 * so no word token can start with "##" and the mark is never ambiguous. */
#include "bpe.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/utf8.h"
#include "../common/util.h"
#include "tokenizer.h"
#include "vocab_impl.h" /* the string -> index table */

/* ---- Symbols: strings interned to ids ------------------------------------ */

typedef struct {
    char **str;        /* [n] "sh", "##ang", "中" */
    size_t *text_len;  /* [n] bytes without "##" */
    double *freq;      /* [n] occurrences as a symbol of the initial split */
    unsigned char *digit, *in_vocab;
    size_t n, cap;
    VocabTable ids;    /* str -> id */
} Symbols;

static const char *sym_key(const void *owner, int id) { return ((const Symbols *)owner)->str[id]; }

/* The id of `str`, added (freq 0) when new. */
static int sym_intern(Symbols *s, const char *str)
{
    uint32_t hash = vocab_table_hash(str, strlen(str));
    size_t at = vocab_table_find(&s->ids, str, hash, sym_key, s);
    if (s->ids.slot[at].index >= 0) return s->ids.slot[at].index;
    ASSERT(s->n < (size_t)INT32_MAX);
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->str = xrealloc(s->str, s->cap * sizeof *s->str);
        s->text_len = xrealloc(s->text_len, s->cap * sizeof *s->text_len);
        s->freq = xrealloc(s->freq, s->cap * sizeof *s->freq);
        s->digit = xrealloc(s->digit, s->cap);
        s->in_vocab = xrealloc(s->in_vocab, s->cap);
    }
    size_t id = s->n++;
    s->str[id] = xstrdup(str);
    s->text_len[id] = strlen(str) - (strncmp(str, "##", 2) == 0 ? 2 : 0);
    s->freq[id] = 0;
    s->digit[id] = s->in_vocab[id] = 0;
    vocab_table_put(&s->ids, at, (int)id, hash);
    return (int)id;
}

static void sym_free(Symbols *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->str[i]);
    free(s->str);
    free(s->text_len);
    free(s->freq);
    free(s->digit);
    free(s->in_vocab);
    vocab_table_free(&s->ids);
}

/* ---- Pairs: (left, right) → count ---------------------------------------- */

typedef struct {
    int *left, *right;  /* [n] */
    double *count;      /* [n]; a pair no longer seen keeps its row at 0 */
    size_t n, cap;
    int *slot;          /* hash table of rows, -1 empty */
    size_t mask;
} Pairs;

static uint64_t pair_key(int a, int b) { return (uint64_t)(uint32_t)a << 32 | (uint32_t)b; }

static size_t pair_find(const Pairs *p, int a, int b)
{
    uint64_t key = pair_key(a, b);
    size_t i = (size_t)fnv1a(FNV_OFFSET, &key, sizeof key) & p->mask;
    while (p->slot[i] >= 0 && (p->left[p->slot[i]] != a || p->right[p->slot[i]] != b))
        i = (i + 1) & p->mask;
    return i;
}

static void pair_rehash(Pairs *p, size_t capacity)
{
    free(p->slot);
    p->slot = xmalloc(capacity * sizeof *p->slot);
    for (size_t i = 0; i < capacity; i++) p->slot[i] = -1;
    p->mask = capacity - 1;
    for (size_t r = 0; r < p->n; r++) p->slot[pair_find(p, p->left[r], p->right[r])] = (int)r;
}

static void pair_add(Pairs *p, int a, int b, double count)
{
    size_t at = pair_find(p, a, b);
    if (p->slot[at] >= 0) {
        p->count[p->slot[at]] += count;
        return;
    }
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 4096;
        p->left = xrealloc(p->left, p->cap * sizeof *p->left);
        p->right = xrealloc(p->right, p->cap * sizeof *p->right);
        p->count = xrealloc(p->count, p->cap * sizeof *p->count);
    }
    p->left[p->n] = a;
    p->right[p->n] = b;
    p->count[p->n] = count;
    p->slot[at] = (int)p->n++;
    if (2 * p->n > p->mask + 1) pair_rehash(p, 2 * (p->mask + 1));
}

static void pairs_free(Pairs *p)
{
    free(p->left);
    free(p->right);
    free(p->count);
    free(p->slot);
}

/* ---- Words ------------------------------------------------------------------ */

typedef struct {
    int *sym;     /* [len] current segmentation */
    size_t len;
    double count;
} Word;

/* May a and b merge?  Never a digit, never a piece longer than the limit. */
static int mergeable(const Symbols *s, int a, int b)
{
    return !s->digit[a] && !s->digit[b] && s->text_len[a] + s->text_len[b] <= BPE_MAX_PIECE_BYTES;
}

/* Add (sign +1) or take out (-1) the pairs of one word. */
static void count_pairs(Pairs *p, const Symbols *s, const Word *w, double sign)
{
    for (size_t i = 0; i + 1 < w->len; i++)
        if (mergeable(s, w->sym[i], w->sym[i + 1])) pair_add(p, w->sym[i], w->sym[i + 1], sign * w->count);
}

/* Split a word token into its characters: "hai" → h ##a ##i. */
static Word split_word(Symbols *s, const char *token, double count)
{
    size_t n = strlen(token);
    Word w = {xmalloc(n * sizeof(int)), 0, count};
    char unit[2 + 4 + 1] = "##";
    for (size_t i = 0; i < n;) {
        int32_t cp;
        size_t k = utf8_decode((const unsigned char *)token + i, n - i, &cp);
        ASSERT(k > 0); /* tokens are valid UTF-8 */
        char *text = i == 0 ? unit + 2 : unit;
        memcpy(unit + 2, token + i, k);
        unit[2 + k] = '\0';
        int id = sym_intern(s, text);
        s->freq[id] += count;
        s->digit[id] = (unsigned char)tokenizer_is_digit(cp);
        w.sym[w.len++] = id;
        i += k;
    }
    return w;
}

/* ---- Learning ---------------------------------------------------------------- */

/* A symbol to sort: qsort has no context argument, so it carries its own. */
typedef struct {
    double freq;
    const char *str;
    int id;
} Ranked;

static int by_freq(const void *pa, const void *pb)
{
    const Ranked *a = pa, *b = pb;
    if (a->freq != b->freq) return a->freq > b->freq ? -1 : 1;
    return strcmp(a->str, b->str);
}

static void out_add(BpePieces *out, size_t *cap, Symbols *s, int id, double freq)
{
    if (out->count == *cap) {
        *cap = *cap ? 2 * *cap : 1024;
        out->piece = xrealloc(out->piece, *cap * sizeof *out->piece);
        out->freq = xrealloc(out->freq, *cap * sizeof *out->freq);
    }
    out->piece[out->count] = xstrdup(s->str[id]);
    out->freq[out->count++] = freq;
    s->in_vocab[id] = 1;
}

/* The row of the pair to merge next: highest count, ties by the pieces'
 * bytes (so the result does not depend on the table's order); -1 when none
 * reaches min_count. */
static long best_pair(const Pairs *p, const Symbols *s, double min_count)
{
    long best = -1;
    for (size_t r = 0; r < p->n; r++) {
        double c = p->count[r];
        if (c < min_count || c <= 0) continue;
        if (best >= 0) {
            double cb = p->count[best];
            if (c < cb) continue;
            if (c == cb) {
                int cmp = strcmp(s->str[p->left[r]], s->str[p->left[best]]);
                if (cmp == 0) cmp = strcmp(s->str[p->right[r]], s->str[p->right[best]]);
                if (cmp > 0) continue;
            }
        }
        best = (long)r;
    }
    return best;
}

/* Replace every (a, b) in w by ab; returns whether it held one. */
static int merge_in_word(Word *w, int a, int b, int ab)
{
    size_t j = 0;
    int changed = 0;
    for (size_t i = 0; i < w->len; i++) {
        if (i + 1 < w->len && w->sym[i] == a && w->sym[i + 1] == b) {
            w->sym[j++] = ab;
            i++;
            changed = 1;
        } else {
            w->sym[j++] = w->sym[i];
        }
    }
    w->len = j;
    return changed;
}

static int holds_pair(const Word *w, int a, int b)
{
    for (size_t i = 0; i + 1 < w->len; i++)
        if (w->sym[i] == a && w->sym[i + 1] == b) return 1;
    return 0;
}

void bpe_learn(const BpeToken *tokens, size_t n, size_t budget, double min_count, BpePieces *out)
{
    memset(out, 0, sizeof *out);
    size_t out_cap = 0;
    Symbols s = {0};
    vocab_table_alloc(&s.ids, 1024);
    Word *words = xmalloc((n ? n : 1) * sizeof *words);
    size_t n_words = 0;
    for (size_t i = 0; i < n; i++) {
        if (!tokenizer_is_word(tokens[i].token)) {
            int id = sym_intern(&s, tokens[i].token); /* before s.freq: it may move it */
            s.freq[id] += tokens[i].count;
            continue;
        }
        Word w = split_word(&s, tokens[i].token, tokens[i].count);
        if (w.len > 1) words[n_words++] = w;
        else free(w.sym);
    }

    /* The alphabet first: atomic tokens and characters, most frequent first. */
    Ranked *order = xmalloc((s.n ? s.n : 1) * sizeof *order);
    for (size_t i = 0; i < s.n; i++) order[i] = (Ranked){s.freq[i], s.str[i], (int)i};
    qsort(order, s.n, sizeof *order, by_freq);
    for (size_t i = 0; i < s.n && out->count < budget && order[i].freq >= min_count; i++)
        out_add(out, &out_cap, &s, order[i].id, order[i].freq);
    free(order);

    Pairs p = {0};
    pair_rehash(&p, 4096);
    for (size_t i = 0; i < n_words; i++) count_pairs(&p, &s, &words[i], +1);
    char *joined = xmalloc(2 * BPE_MAX_PIECE_BYTES + 3);
    while (out->count < budget) {
        long r = best_pair(&p, &s, min_count);
        if (r < 0) break;
        int a = p.left[r], b = p.right[r];
        double count = p.count[r];
        /* ab is a's text then b's without its "##": ##an + ##g → ##ang */
        strcpy(joined, s.str[a]);
        strcat(joined, s.str[b] + 2);
        int ab = sym_intern(&s, joined);
        s.digit[ab] = 0;
        if (!s.in_vocab[ab]) out_add(out, &out_cap, &s, ab, count);
        for (size_t i = 0; i < n_words; i++) {
            if (!holds_pair(&words[i], a, b)) continue;
            count_pairs(&p, &s, &words[i], -1);
            merge_in_word(&words[i], a, b, ab);
            count_pairs(&p, &s, &words[i], +1);
        }
        /* Gone from every word; rounding must not leave a crumb of it. */
        p.count[r] = 0;
    }
    free(joined);
    pairs_free(&p);
    for (size_t i = 0; i < n_words; i++) free(words[i].sym);
    free(words);
    sym_free(&s);
}

void bpe_pieces_free(BpePieces *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->count; i++) free(p->piece[i]);
    free(p->piece);
    free(p->freq);
    memset(p, 0, sizeof *p);
}
