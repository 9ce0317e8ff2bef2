/* vocab_builder.c — building vocabulary files from training text: counting
 * tokens and their casings, then writing a word vocabulary or learning and
 * writing a subword one (see vocab.h for both formats).
 *
 * The builder keeps one entry per folded token with the counts of each
 * surface casing it was seen in, apart for sentence-initial occurrences; it
 * is only used offline (app/train.c's --vocab and --recase, tests), so it favours plainness over
 * memory.  The pieces are learned by tokenizer/bpe.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/output_file.h"
#include "../common/utf8.h"
#include "../common/util.h"
#include "bpe.h"
#include "tokenizer.h"
#include "vocab_impl.h"

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
    VocabTable index;   /* folded → entry */
};

static const char *builder_key(const void *owner, int i)
{
    return ((const VocabBuilder *)owner)->entry[i].folded;
}

VocabBuilder *vocab_builder_new(void)
{
    VocabBuilder *b = xcalloc(1, sizeof *b);
    vocab_table_alloc(&b->index, 1024);
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
    uint32_t hash = vocab_table_hash(folded, strlen(folded));
    size_t at = vocab_table_find(&b->index, folded, hash, builder_key, b);
    int index = b->index.slot[at].index;
    if (index < 0) {
        ASSERT(b->n < (size_t)INT32_MAX); /* the table holds int indices */
        if (b->n == b->cap) {
            b->cap = b->cap ? 2 * b->cap : 1024;
            b->entry = xrealloc(b->entry, b->cap * sizeof *b->entry);
        }
        index = (int)b->n++;
        b->entry[index] = (Entry){.folded = xstrdup(folded)};
        vocab_table_put(&b->index, at, index, hash);
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

/* Most frequent first; ties by the folded bytes, so the file does not
 * depend on the hash table's order.  (Counts are sums of the sources'
 * weights: with fractional ones, adding the same texts in another order
 * can change a count's last bit, and with it the order of two tokens of
 * the same count; train always adds them in the config's order.) */
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
        if (strcmp(token, vocab_special_tokens[i]) == 0) return 1;
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
        fprintf(f, "%s\t%s\t0\n", vocab_special_tokens[i], vocab_special_tokens[i]);
}

int vocab_builder_write(const VocabBuilder *b, OutputFile *out, int max_size, int min_count, Error *err)
{
    const char *path = output_file_name(out);
    if (max_size < VOCAB_SPECIALS)
        return error_set(err, "%s: vocabulary size %d is below the %d special tokens", path,
                         max_size, VOCAB_SPECIALS);
    const Entry **order = xmalloc((b->n ? b->n : 1) * sizeof *order);
    for (size_t i = 0; i < b->n; i++) order[i] = &b->entry[i];
    qsort(order, b->n, sizeof *order, by_count);
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
    return output_file_prepare(out, err);
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
            if (vocab_is_byte_id(v, ids[j])) continue;
            size_t to = ends[j], n = 0;
            if (from > 0) buf[n++] = '#', buf[n++] = '#';
            const char *src = e->folded;
            if (same_len && ((unsigned char)cased[from] & 0xC0) != 0x80 &&
                (to == len || ((unsigned char)cased[to] & 0xC0) != 0x80) &&
                utf8_valid(cased + from, to - from)) {
                memcpy(buf + n, cased + from, to - from);
                buf[n + to - from] = '\0';
                char *folded = tokenizer_fold(buf + n);
                if (strcmp(folded, vocab_token(v, ids[j]) + n) == 0) src = cased;
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

/* Inside longer words only; with no such occurrence, `cased`. */
static const char *piece_casing_in_word(const Votes *v, const char *cased)
{
    const char *c = most_votes(v->part, v->n_part, 0);
    return c ? c : cased;
}

static void free_casings(Casing *c, size_t n)
{
    for (size_t k = 0; k < n; k++) free(c[k].surface);
    free(c);
}

/* A subword vocabulary file of v's tokens, in id order, with `freq` as
 * their counts and their casings from the words b counted (vote_casings):
 * the one writer of vocab_builder_write_subword and vocab_builder_recase. */
static int write_pieces(const VocabBuilder *b, const Vocab *v, const double *freq, OutputFile *out,
                        Error *err)
{
    Votes *votes = xcalloc((size_t)vocab_size(v), sizeof *votes);
    size_t longest = 1;
    for (size_t i = 0; i < b->n; i++)
        if (strlen(b->entry[i].folded) > longest) longest = strlen(b->entry[i].folded);
    int *ids = xmalloc(longest * sizeof *ids);
    size_t *ends = xmalloc(longest * sizeof *ends);
    for (size_t i = 0; i < b->n; i++)
        if (!is_special(b->entry[i].folded)) vote_casings(v, &b->entry[i], votes, ids, ends);
    free(ids);
    free(ends);

    FILE *f = output_file_stream(out);
    write_specials(f);
    for (int id = VOCAB_SPECIALS; id < vocab_size(v); id++) {
        const char *cased = piece_casing(&votes[id], vocab_token(v, id));
        const char *in_word = piece_casing_in_word(&votes[id], cased);
        fprintf(f, "%s\t%s\t%.0f", vocab_token(v, id), cased, freq[id]);
        if (strcmp(in_word, cased) != 0) fprintf(f, "\t%s", in_word);
        fputc('\n', f);
    }
    int status = output_file_prepare(out, err);
    for (int id = 0; id < vocab_size(v); id++) {
        free_casings(votes[id].whole, votes[id].n_whole);
        free_casings(votes[id].part, votes[id].n_part);
    }
    free(votes);
    return status;
}

int vocab_builder_write_subword(const VocabBuilder *b, OutputFile *out, int max_size, int min_count,
                                Error *err)
{
    const char *path = output_file_name(out);
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
    Vocab *v = vocab_new((size_t)reserved + pieces.count);
    char name[16];
    for (int i = 0; i < VOCAB_SPECIALS; i++) vocab_add(v, vocab_special_tokens[i], vocab_special_tokens[i], NULL);
    for (int k = 0; k < VOCAB_BYTE_TOKENS; k++) {
        vocab_byte_token_name(name, sizeof name, k);
        vocab_add(v, name, name, NULL);
    }
    double *freq = xcalloc((size_t)reserved + pieces.count, sizeof *freq);
    for (size_t i = 0; i < pieces.count; i++) {
        if (strlen(pieces.piece[i]) > BPE_MAX_PIECE_BYTES + 2) continue; /* a junk token: its bytes */
        freq[vocab_size(v)] = pieces.freq[i];
        int added = vocab_add(v, pieces.piece[i], pieces.piece[i], NULL);
        ASSERT(added == 0); /* bpe_learn makes each piece once */
    }
    bpe_pieces_free(&pieces);
    vocab_finish(v);

    int status = write_pieces(b, v, freq, out, err);
    free(freq);
    vocab_free(v);
    return status;
}

int vocab_builder_recase(const VocabBuilder *b, OutputFile *out, Error *err)
{
    const char *path = output_file_name(out);
    Vocab *v = vocab_load(path, err);
    if (!v) return -1;
    int status = -1;
    if (!vocab_is_subword(v)) {
        error_set(err, "%s: not a subword vocabulary (a word vocabulary is rebuilt with its casing)", path);
    } else {
        double *freq = xmalloc((size_t)vocab_size(v) * sizeof *freq);
        for (int id = 0; id < vocab_size(v); id++) freq[id] = vocab_count(v, id);
        status = write_pieces(b, v, freq, out, err);
        free(freq);
    }
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
    vocab_table_free(&b->index);
    free(b);
}
