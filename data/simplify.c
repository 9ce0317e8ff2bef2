/* simplify.c — a Traditional → Simplified character table from CC-CEDICT
 * (see simplify.h). */
#include "simplify.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../common/input_file.h"
#include "../common/output_file.h"
#include "../common/utf8.h"
#include "../common/util.h"
#include "cedict.h"
#include "corpus.h"

typedef struct {
    int32_t from, to;
} Mapping;

struct Simplifier {
    size_t count;
    Mapping *map; /* [count] sorted by `from` */
};

/* One vote: traditional `t` written `s`, first seen as vote number `seq`. */
typedef struct {
    int32_t t, s;
    size_t seq;
} Vote;

static int by_char(const void *pa, const void *pb)
{
    const Vote *a = pa, *b = pb;
    if (a->t != b->t) return a->t < b->t ? -1 : 1;
    if (a->s != b->s) return a->s < b->s ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The code points of `text` into cps (at most `max`); the count, or -1 when
 * it is not valid UTF-8 or longer than max. */
static long code_points(const char *text, int32_t *cps, size_t max)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t len = strlen(text), n = 0;
    for (size_t i = 0; i < len;) {
        size_t k = utf8_decode(p + i, len - i, &cps[n]);
        if (!k || ++n > max) return -1;
        i += k;
    }
    return (long)n;
}

static int by_code_point(const void *pa, const void *pb)
{
    int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
    return (a > b) - (a < b);
}

static bool contains(const int32_t *set, size_t n, int32_t cp)
{
    return bsearch(&cp, set, n, sizeof *set, by_code_point) != NULL;
}

/* A growing array of T. */
#define PUSH(array, count, cap, value)                                       \
    do {                                                                     \
        if ((count) == (cap)) (array) = xrealloc((array), ((cap) = 2 * (cap) + 64) * sizeof *(array)); \
        (array)[(count)++] = (value);                                        \
    } while (0)

Simplifier *simplify_load(const char *path, Error *err)
{
    Corpus c;
    if (corpus_load(path, CEDICT_SIMPLIFIED, CEDICT_TRADITIONAL, &c, err)) return NULL; /* source, target */
    size_t n = 0, cap = 0, n_changed = 0, cap_changed = 0, n_self = 0, cap_self = 0;
    Vote *votes = NULL;
    int32_t *changed = NULL, *self = NULL; /* single-character entries: t where t != s; every s */
    enum { MAX_WORD = 64 };
    int32_t s[MAX_WORD], t[MAX_WORD];
    for (size_t i = 0; i < c.count; i++) {
        long ns = code_points(c.source[i], s, MAX_WORD), nt = code_points(c.target[i], t, MAX_WORD);
        if (ns <= 0 || ns != nt) continue; /* not aligned: no votes */
        if (ns == 1 && s[0] != t[0]) PUSH(changed, n_changed, cap_changed, t[0]);
        if (ns == 1) PUSH(self, n_self, cap_self, s[0]); /* s[0] is a Simplified character */
        for (long k = 0; k < ns; k++) {
            /* s[k] written in Simplified is a vote for it staying itself;
             * t[k] != s[k] is a vote for converting t[k]. */
            /* The vote's number is read before PUSH increments n: inside
             * the macro's one expression that read would be unsequenced. */
            size_t seq = n;
            PUSH(votes, n, cap, ((Vote){s[k], s[k], seq}));
            seq = n;
            if (t[k] != s[k]) PUSH(votes, n, cap, ((Vote){t[k], s[k], seq}));
        }
    }
    corpus_free(&c);
    /* qsort's array must not be NULL even when empty: a table with no
     * character (refused below) has none of the three. */
    if (n) qsort(votes, n, sizeof *votes, by_char);
    if (n_changed) qsort(changed, n_changed, sizeof *changed, by_code_point);
    if (n_self) qsort(self, n_self, sizeof *self, by_code_point);
    Simplifier *sp = xcalloc(1, sizeof *sp);
    sp->map = xmalloc((n ? n : 1) * sizeof *sp->map);
    /* Per traditional character: runs of equal (t, s); the longest run wins,
     * a tie going to t itself, else to the run whose first vote came first. */
    for (size_t i = 0; i < n;) {
        int32_t from = votes[i].t, best = from;
        size_t best_count = 0, best_seq = 0, j = i;
        while (j < n && votes[j].t == from) {
            size_t k = j;
            while (k < n && votes[k].t == from && votes[k].s == votes[j].s) k++;
            size_t count = k - j, seq = votes[j].seq; /* sorted: the run's first vote */
            bool wins = count > best_count || (count == best_count && best != from &&
                                               (votes[j].s == from || seq < best_seq));
            if (wins) {
                best_count = count;
                best_seq = seq;
                best = votes[j].s;
            }
            j = k;
        }
        if (best != from && contains(changed, n_changed, from) && !contains(self, n_self, from))
            sp->map[sp->count++] = (Mapping){from, best};
        i = j;
    }
    free(votes);
    free(changed);
    free(self);
    return sp;
}

void simplify_free(Simplifier *s)
{
    if (!s) return;
    free(s->map);
    free(s);
}

size_t simplify_size(const Simplifier *s) { return s->count; }

int32_t simplify_char(const Simplifier *s, int32_t cp)
{
    size_t lo = 0, hi = s->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->map[mid].from == cp) return s->map[mid].to;
        if (s->map[mid].from < cp) lo = mid + 1;
        else hi = mid;
    }
    return cp;
}

static void put_table(FILE *out, const void *context)
{
    const Simplifier *s = context;
    char from[4], to[4];
    for (size_t i = 0; i < s->count; i++) {
        size_t nf = utf8_encode(s->map[i].from, from), nt = utf8_encode(s->map[i].to, to);
        fprintf(out, "%.*s\t%.*s\n", (int)nt, to, (int)nf, from); /* checked by the commit */
    }
}

int simplify_save(const Simplifier *s, const char *path, Error *err)
{
    return output_file_write(path, 0, put_table, s, err);
}

size_t simplify_in_place(const Simplifier *s, char **text)
{
    size_t changed;
    char *simple = simplify_text(s, *text, &changed);
    free(*text);
    *text = simple;
    return changed;
}

static int by_from(const void *pa, const void *pb)
{
    const Mapping *a = pa, *b = pb;
    return (a->from > b->from) - (a->from < b->from);
}

Simplifier *simplify_load_table(const char *path, Error *err)
{
    size_t len;
    char *text = input_file_read_all(path, 0, 1 << 20, "a simplify table's", &len, err);
    if (!text) return NULL;
    Simplifier *sp = xcalloc(1, sizeof *sp);
    size_t cap = 0;
    const unsigned char *p = (const unsigned char *)text, *end = p + len;
    p += utf8_bom_length(text, len); /* as every reader of ours skips it */
    for (int line = 1; p < end; line++) {
        int32_t to = 0, from = 0;
        size_t a = utf8_decode(p, (size_t)(end - p), &to), b = 0;
        if (a && p + a < end && p[a] == '\t') b = utf8_decode(p + a + 1, (size_t)(end - p - a - 1), &from);
        /* both characters outside ASCII: a table maps Chinese ones */
        const unsigned char *next = b && to >= 0x80 && from >= 0x80 ? p + a + 1 + b : NULL;
        if (next && next < end && *next == '\r') next++;
        if (!next || (next < end && *next != '\n')) {
            error_set(err, "%s:%d: expected a Simplified character, a tab and a Traditional one (write the "
                           "table with train --simplify-table)", path, line);
            free(text);
            simplify_free(sp);
            return NULL;
        }
        PUSH(sp->map, sp->count, cap, ((Mapping){from, to}));
        p = next + (next < end);
    }
    free(text);
    if (!sp->count) {
        error_set(err, "%s: no characters in it (write the table with train --simplify-table)", path);
        simplify_free(sp);
        return NULL;
    }
    qsort(sp->map, sp->count, sizeof *sp->map, by_from);
    for (size_t i = 1; i < sp->count; i++)
        if (sp->map[i].from == sp->map[i - 1].from) {
            error_set(err, "%s: U+%04X is listed twice", path, (unsigned)sp->map[i].from);
            simplify_free(sp);
            return NULL;
        }
    return sp;
}

char *simplify_text(const Simplifier *s, const char *text, size_t *changed)
{
    size_t len = strlen(text), n = 0, count = 0;
    const unsigned char *p = (const unsigned char *)text;
    char *out = xmalloc(4 * len + 1); /* each replaced character is at most 4 bytes */
    for (size_t i = 0; i < len;) {
        int32_t cp;
        size_t k = utf8_decode(p + i, len - i, &cp);
        if (!k) { /* invalid: unchanged, for the tokenizer to reject */
            free(out);
            if (changed) *changed = 0;
            return xstrdup(text);
        }
        int32_t to = simplify_char(s, cp);
        if (to != cp) {
            n += utf8_encode(to, out + n);
            count++;
        } else {
            memcpy(out + n, text + i, k);
            n += k;
        }
        i += k;
    }
    out[n] = '\0';
    if (changed) *changed = count;
    return out;
}
