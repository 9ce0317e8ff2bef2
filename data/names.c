/* names.c — a name shared by both sides of a pair, replaced by random
 * Latin letters (see names.h). */
#include "names.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "cedict.h"
#include "corpus.h"

typedef struct {
    char *word;      /* "Boston" */
    char *headword;  /* "波士顿" */
} Name;

struct NameTable {
    Name *names;     /* sorted by word, so one word's headwords are adjacent */
    size_t count;
};

/* "Boston": a capital, then at least two small letters and nothing else. */
static bool is_name_word(const char *s, size_t len)
{
    if (len < 3 || !ascii_is_upper(s[0])) return false;
    for (size_t i = 1; i < len; i++)
        if (!ascii_is_lower(s[i])) return false;
    return true;
}

static void add(NameTable *t, size_t *cap, const char *word, size_t len, const char *headword)
{
    if (t->count == *cap) {
        *cap = *cap ? 2 * *cap : 1024;
        t->names = xrealloc(t->names, *cap * sizeof *t->names);
    }
    char *w = xmalloc(len + 1);
    memcpy(w, word, len);
    w[len] = '\0';
    t->names[t->count++] = (Name){w, xstrdup(headword)};
}

/* The names of one gloss: "Boston" or "Mary or Marie", else none. */
static void add_gloss(NameTable *t, size_t *cap, const char *gloss, const char *headword)
{
    const char *words[3];
    size_t lens[3], n = 0;
    for (const char *p = gloss; *p;) {
        const char *end = strchr(p, ' ');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (n == 3) return;
        words[n] = p;
        lens[n++] = len;
        p += len + (end != NULL);
    }
    bool one = n == 1 && is_name_word(words[0], lens[0]);
    bool two = n == 3 && is_name_word(words[0], lens[0]) && lens[1] == 2 && memcmp(words[1], "or", 2) == 0 &&
               is_name_word(words[2], lens[2]);
    if (one || two) add(t, cap, words[0], lens[0], headword);
    if (two) add(t, cap, words[2], lens[2], headword);
}

static int by_word(const void *a, const void *b)
{
    const Name *x = a, *y = b;
    int c = strcmp(x->word, y->word);
    return c ? c : strcmp(x->headword, y->headword);
}

NameTable *names_load(const char *path, Error *err)
{
    Corpus c; /* source: the simplified headword, target: the senses */
    if (corpus_load(path, CEDICT_SIMPLIFIED, CEDICT_SENSES, &c, err)) return NULL;
    NameTable *t = xcalloc(1, sizeof *t);
    size_t cap = 0;
    for (size_t i = 0; i < c.count; i++) {
        /* One Han character is too easily part of another word (肯 in 肯定);
         * a Han character takes 3 or 4 bytes, so two or more take over 4. */
        if (!cedict_headword_ok(c.source[i]) || strlen(c.source[i]) <= 4) continue;
        char *gloss;
        if (cedict_glosses(c.target[i], &gloss, 1) != 1) continue; /* the first usable sense only */
        add_gloss(t, &cap, gloss, c.source[i]);
        free(gloss);
    }
    corpus_free(&c);
    if (t->count) qsort(t->names, t->count, sizeof *t->names, by_word);
    return t;
}

void names_free(NameTable *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->count; i++) {
        free(t->names[i].word);
        free(t->names[i].headword);
    }
    free(t->names);
    free(t);
}

size_t names_count(const NameTable *t) { return t->count; }

/* The first entry of `word` (len bytes), or t->count if none. */
static size_t find(const NameTable *t, const char *word, size_t len)
{
    size_t lo = 0, hi = t->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strncmp(t->names[mid].word, word, len);
        if (c == 0 && t->names[mid].word[len]) c = 1; /* longer than word: after it */
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    bool found = lo < t->count && strncmp(t->names[lo].word, word, len) == 0 && !t->names[lo].word[len];
    return found ? lo : t->count;
}

/* How often `needle` occurs in `text`; *at: the first. */
static size_t occurrences(const char *text, const char *needle, size_t len, bool whole_word, const char **at)
{
    size_t n = 0;
    *at = NULL;
    for (const char *p = strstr(text, needle); p; p = strstr(p + len, needle)) {
        if (whole_word && ((p > text && ascii_is_letter(p[-1])) || ascii_is_letter(p[len]))) continue;
        if (!n) *at = p;
        n++;
    }
    return n;
}

/* A random word of Latin letters into out[16], in one of names.h's shapes.
 * Not "A" or "I" alone: those are English words. */
static void random_word(uint64_t seed, char *out)
{
    static const char consonants[] = "bcdfghjklmnprstvwz", vowels[] = "aeiou";
    Rng rng;
    rng_seed(&rng, seed);
    unsigned shape = (unsigned)(rng_next(&rng) % 10);
    size_t n = 0;
    if (shape < 3) { /* one capital */
        char c;
        do c = (char)('A' + rng_next(&rng) % 26); while (c == 'A' || c == 'I');
        out[n++] = c;
    } else if (shape < 5) { /* an acronym */
        size_t len = 2 + rng_next(&rng) % 3;
        while (n < len) out[n++] = (char)('A' + rng_next(&rng) % 26);
    } else { /* a name, after a small letter one time in five */
        if (shape == 9) out[n++] = vowels[rng_next(&rng) % 5];
        size_t start = n, len = 3 + rng_next(&rng) % 5;
        bool vowel = rng_next(&rng) % 3 == 0;
        for (size_t i = 0; i < len; i++, vowel = !vowel)
            out[n++] = vowel ? vowels[rng_next(&rng) % 5] : consonants[rng_next(&rng) % (sizeof consonants - 1)];
        out[start] = (char)(out[start] - 'a' + 'A');
    }
    out[n] = '\0';
}

/* text with [at, at+len) replaced by word, new. */
static char *replace(const char *text, const char *at, size_t len, const char *word)
{
    size_t before = (size_t)(at - text), w = strlen(word), rest = strlen(at + len);
    char *out = xmalloc(before + w + rest + 1);
    memcpy(out, text, before);
    memcpy(out + before, word, w);
    memcpy(out + before + w, at + len, rest + 1);
    return out;
}

bool names_to_latin(const NameTable *t, const char *en, const char *zh, char **en_out, char **zh_out)
{
    *en_out = *zh_out = NULL;
    for (const char *p = en; *p;) {
        if (!ascii_is_letter(*p)) {
            p++;
            continue;
        }
        size_t len = 0;
        while (ascii_is_letter(p[len])) len++;
        const char *word = p;
        p += len;
        size_t first = find(t, word, len);
        if (first == t->count) continue;
        const char *en_at, *zh_at;
        if (occurrences(en, t->names[first].word, len, true, &en_at) != 1) continue;
        for (size_t i = first; i < t->count && strcmp(t->names[i].word, t->names[first].word) == 0; i++) {
            const char *head = t->names[i].headword;
            size_t head_len = strlen(head);
            if (occurrences(zh, head, head_len, false, &zh_at) != 1) continue;
            char latin[16];
            random_word(fnv1a(fnv1a(FNV_OFFSET, en, strlen(en) + 1), zh, strlen(zh)), latin);
            *en_out = replace(en, en_at, len, latin);
            *zh_out = replace(zh, zh_at, head_len, latin);
            return true;
        }
    }
    return false;
}
