/* sources.c — several training sources read into one filtered,
 * deduplicated pool, and each epoch's weighted draw from it (see
 * sources.h). */
#include "sources.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/util.h"
#include "../tokenizer/tokenizer.h"
#include "cedict.h"
#include "names.h"
#include "numbers.h"

/* ---- the set of pairs seen (deduplication) ------------------------------- */

/* Open addressing over 64-bit hashes; 0 marks an empty slot. */
typedef struct {
    uint64_t *slot;
    size_t cap, count;
} HashSet;

/* true if h was new (and is now in the set). */
static bool hash_set_add(HashSet *s, uint64_t h)
{
    if (!h) h = 1;
    if (2 * (s->count + 1) > s->cap) { /* grow at half full */
        HashSet bigger = {xcalloc(s->cap ? 2 * s->cap : 1024, sizeof(uint64_t)), s->cap ? 2 * s->cap : 1024, 0};
        for (size_t i = 0; i < s->cap; i++)
            if (s->slot[i]) hash_set_add(&bigger, s->slot[i]);
        free(s->slot);
        *s = bigger;
    }
    for (size_t i = h & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (s->slot[i] == h) return false;
        if (!s->slot[i]) {
            s->slot[i] = h;
            s->count++;
            return true;
        }
    }
}

/* ---- one pair ------------------------------------------------------------ */

/* Is the bracketed or parenthesised text [s, s+len) a note about the
 * sentence rather than words the English leaves implicit?  A label or
 * gloss ("slang", "lit. the body", "i.e. ...", "used as a warning"), or
 * anything with a non-ASCII character (Chinese, pinyin, quotation marks:
 * "(蘿蔔, radish)", "(tiānlǐ, “heavenly justice”)"). */
static bool is_note(const char *s, size_t len)
{
    static const char *const labels[] = {
        "lit", "i.e", "ie.", "e.g", "eg.", "cf.", "or ", "see ", "note", "literally", "figurative", "used ",
        "when used", "also ", "an example", "original", "slang", "rhyming", "sarcastic", "playful", "saying",
        "common saying", "a common", "said by", "internet", "spoken", "formal", "informal", "colloquial", "literary", "humorous", "jocular",
        "vulgar", "derogatory", "euphemis", "dialect", "archaic", "pun",
    };
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] >= 0x80) return true;
    for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++) {
        size_t n = strlen(labels[i]);
        if (len >= n && strncasecmp(s, labels[i], n) == 0 && (len == n || labels[i][n - 1] == ' ' ||
                                                             !ascii_is_letter(s[n])))
            return true;
    }
    return false;
}

/* Does nothing but spaces, punctuation and bracketed notes follow?  Only
 * then does a bracket after a stop come after the sentence's end: "[I]
 * wander! [I] wander!" keeps its second I. */
static bool nothing_but_notes(const char *s)
{
    int depth = 0;
    for (; *s; s++) {
        if (*s == '(' || *s == '[') depth++;
        else if ((*s == ')' || *s == ']') && depth) depth--;
        else if (!depth && (ascii_is_letter(*s) || (*s >= '0' && *s <= '9') || (unsigned char)*s >= 0x80))
            return false;
    }
    return true;
}

/* English text with the editors' notes handled (sources.h, step 2), new:
 * a note is dropped with its words, other brackets lose only the marks. */
static char *strip_notes(const char *text)
{
    size_t len = strlen(text), n = 0;
    char *out = xmalloc(len + 1);
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c != '(' && c != '[') {
            if (c != ')' && c != ']') out[n++] = c;
            continue;
        }
        char close = c == '(' ? ')' : ']';
        int depth = 1;
        size_t j = i + 1;
        for (; j < len && depth; j++) depth += (text[j] == c) - (text[j] == close);
        if (depth) continue; /* unbalanced: drop the mark, keep the rest */
        /* After the sentence's final punctuation it is a note whatever it
         * says ("... in the world. (English Revised Version)"). */
        size_t k = n;
        while (k && out[k - 1] == ' ') k--;
        bool after_end = k && strchr(".!?\"", out[k - 1]) && nothing_but_notes(text + j);
        if (after_end || is_note(text + i + 1, j - i - 2)) i = j - 1; /* the whole note, marks and all */
    }
    /* Tidy the gaps a removed note leaves: runs of spaces, a space before
     * punctuation or at either end. */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (out[i] == ' ' && (m == 0 || out[m - 1] == ' ')) continue;
        if (strchr(".,!?;:", out[i]) && m && out[m - 1] == ' ') m--;
        out[m++] = out[i];
    }
    while (m && out[m - 1] == ' ') m--;
    out[m] = '\0';
    return out;
}

/* The number of tokenizer tokens of text (-1 if it rejects it); their
 * case-folded forms are hashed into *h: the deduplication key of step 5. */
static long tokens_and_hash(const char *text, uint64_t *h)
{
    TokenList tokens;
    if (tokenize(text, strlen(text), &tokens, NULL)) return -1;
    for (size_t i = 0; i < tokens.count; i++) *h = fnv1a(*h, tokens.folded[i], strlen(tokens.folded[i]) + 1);
    long n = (long)tokens.count;
    token_list_free(&tokens);
    return n;
}

typedef struct {
    const SourcesSettings *set;
    Sources *out;
    HashSet seen;
    size_t cap;
} Builder;

/* Convert (step 3 of sources.h), filter (step 4) and deduplicate (step 5)
 * one pair, keeping it or counting why not.
 * Takes ownership of src and tgt. */
static void add_pair(Builder *b, size_t s, char *src, char *tgt, int line, bool dictionary, bool noted)
{
    const SourcesSettings *set = b->set;
    SourceCounts *c = &b->out->counts[s];
    c->read++;
    bool simplified = set->simplifier && simplify_in_place(set->simplifier, set->english_source ? &tgt : &src) > 0;
    uint64_t h = FNV_OFFSET;
    long S = tokens_and_hash(src, &h);
    h = fnv1a(h, "\t", 1);
    long T = tokens_and_hash(tgt, &h);
    long lo = S < T ? S : T, hi = S < T ? T : S;
    size_t *dropped = NULL;
    if (S <= 0 || T <= 0) dropped = &c->empty;
    else if (S > set->max_len || T + 1 > set->max_len) dropped = &c->too_long;
    else if (!dictionary && set->max_length_ratio > 0 && (double)hi > set->max_length_ratio * (double)lo)
        dropped = &c->ratio;
    else if (!hash_set_add(&b->seen, h)) dropped = &c->duplicates;
    if (dropped) {
        (*dropped)++;
        free(src);
        free(tgt);
        return;
    }
    Corpus *p = &b->out->pairs;
    if (p->count == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 4096;
        p->source = xrealloc(p->source, b->cap * sizeof *p->source);
        p->target = xrealloc(p->target, b->cap * sizeof *p->target);
        p->line = xrealloc(p->line, b->cap * sizeof *p->line);
        b->out->origin = xrealloc(b->out->origin, b->cap * sizeof *b->out->origin);
    }
    p->source[p->count] = src;
    p->target[p->count] = tgt;
    p->line[p->count] = line;
    b->out->origin[p->count++] = (int)s;
    c->kept++;
    c->notes += noted;
    c->simplified += simplified;
}

/* ---- the sources --------------------------------------------------------- */

static int load_tsv(Builder *b, size_t s, Error *err)
{
    const SourceSpec *spec = &b->set->specs[s];
    Corpus c;
    if (corpus_load(spec->path, spec->source_column, spec->target_column, &c, err)) return -1;
    for (size_t i = 0; i < c.count; i++) {
        bool noted = false;
        if (spec->strip_notes) {
            char **en = b->set->english_source ? &c.source[i] : &c.target[i];
            char *plain = strip_notes(*en);
            /* (a line without brackets can change too, its spaces tidied:
             * not a note) */
            noted = strpbrk(*en, "([") && strcmp(plain, *en) != 0;
            free(*en);
            *en = plain;
        }
        add_pair(b, s, c.source[i], c.target[i], c.line[i], false, noted);
        c.source[i] = c.target[i] = NULL; /* taken */
    }
    corpus_free(&c);
    return 0;
}

/* entries.tsv's headwords (the corpus' source) and senses (its target). */
static int load_cedict(Builder *b, size_t s, Error *err)
{
    Corpus c;
    if (corpus_load(b->set->specs[s].path, CEDICT_SIMPLIFIED, CEDICT_SENSES, &c, err)) return -1;
    for (size_t i = 0; i < c.count; i++) {
        if (!cedict_headword_ok(c.source[i])) continue;
        char *glosses[CEDICT_MAX_SENSES];
        size_t n = cedict_glosses(c.target[i], glosses, CEDICT_MAX_SENSES);
        for (size_t g = 0; g < n; g++) {
            char *zh = xstrdup(c.source[i]);
            if (b->set->english_source) add_pair(b, s, glosses[g], zh, c.line[i], true, false);
            else add_pair(b, s, zh, glosses[g], c.line[i], true, false);
        }
    }
    corpus_free(&c);
    return 0;
}

/* Pairs of the TSV sources before this one with a name, the name replaced
 * by Latin letters (names.h); a dictionary's pairs are glosses, not
 * sentences, and are left out. */
static int load_names(Builder *b, size_t s, Error *err)
{
    NameTable *names = names_load(b->set->specs[s].path, err);
    if (!names) return -1;
    Corpus *p = &b->out->pairs;
    size_t before = p->count;
    for (size_t i = 0; i < before; i++) {
        if (b->set->specs[b->out->origin[i]].format != SOURCE_TSV) continue;
        bool english_source = b->set->english_source;
        char *en, *zh;
        if (!names_to_latin(names, english_source ? p->source[i] : p->target[i],
                            english_source ? p->target[i] : p->source[i], &en, &zh))
            continue;
        add_pair(b, s, english_source ? en : zh, english_source ? zh : en, p->line[i], false, false);
    }
    names_free(names);
    return 0;
}

/* Copies of the pairs of the TSV sources before this one with numbers,
 * the numbers replaced by random ones (numbers.h). */
static void load_numbers(Builder *b, size_t s)
{
    Corpus *p = &b->out->pairs;
    size_t before = p->count;
    bool english_source = b->set->english_source;
    for (size_t i = 0; i < before; i++) {
        if (b->set->specs[b->out->origin[i]].format != SOURCE_TSV) continue;
        for (unsigned copy = 0; copy < NUMBERS_COPIES; copy++) {
            char *en, *zh;
            if (!numbers_to_random(english_source ? p->source[i] : p->target[i],
                                   english_source ? p->target[i] : p->source[i], copy, &en, &zh))
                break;
            add_pair(b, s, english_source ? en : zh, english_source ? zh : en, p->line[i], false, false);
        }
    }
}

int sources_load(const SourcesSettings *set, Sources *out, Error *err)
{
    memset(out, 0, sizeof *out);
    out->n_sources = set->count;
    out->counts = xcalloc(set->count ? set->count : 1, sizeof *out->counts);
    Builder b = {.set = set, .out = out};
    int status = 0;
    for (size_t s = 0; s < set->count && !status; s++) {
        out->counts[s].first = out->pairs.count;
        out->counts[s].weight = set->specs[s].weight;
        switch (set->specs[s].format) {
        case SOURCE_TSV: status = load_tsv(&b, s, err); break;
        case SOURCE_CEDICT: status = load_cedict(&b, s, err); break;
        case SOURCE_NAMES: status = load_names(&b, s, err); break;
        case SOURCE_NUMBERS: load_numbers(&b, s); break;
        }
    }
    free(b.seen.slot);
    if (status) sources_free(out);
    return status;
}

void sources_free(Sources *s)
{
    if (!s) return;
    corpus_free(&s->pairs);
    free(s->origin);
    free(s->counts);
    memset(s, 0, sizeof *s);
}

/* ---- sampling ------------------------------------------------------------ */

size_t sources_epoch_count(const Sources *s, size_t i)
{
    const SourceCounts *c = &s->counts[i];
    double w = c->weight, whole = floor(w);
    return (size_t)whole * c->kept + (size_t)llround((w - whole) * (double)c->kept);
}

size_t sources_epoch_size(const Sources *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_sources; i++) n += sources_epoch_count(s, i);
    return n;
}

void sources_epoch(const Sources *s, uint64_t seed, int epoch, int *out)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_sources; i++) {
        const SourceCounts *c = &s->counts[i];
        size_t whole = (size_t)floor(c->weight), part = sources_epoch_count(s, i) - whole * c->kept;
        for (size_t r = 0; r < whole; r++)
            for (size_t k = 0; k < c->kept; k++) out[n++] = (int)(c->first + k);
        if (!part) continue;
        /* A partial Fisher–Yates over the source's pairs: the first `part`
         * of a permutation drawn from (seed, epoch, source). */
        uint64_t key[3] = {seed, (uint64_t)epoch, (uint64_t)i};
        Rng rng;
        rng_seed(&rng, fnv1a(FNV_OFFSET, key, sizeof key));
        int *pick = out + n;
        int *all = xmalloc(c->kept * sizeof *all);
        for (size_t k = 0; k < c->kept; k++) all[k] = (int)(c->first + k);
        for (size_t k = 0; k < part; k++) {
            size_t j = k + rng_next(&rng) % (c->kept - k);
            int t = all[k];
            all[k] = all[j];
            all[j] = t;
            pick[k] = all[k];
        }
        free(all);
        n += part;
    }
    ASSERT(n == sources_epoch_size(s));
}

uint64_t sources_hash(const Sources *s)
{
    uint64_t h = fnv1a(FNV_OFFSET, &s->n_sources, sizeof s->n_sources);
    for (size_t i = 0; i < s->n_sources; i++) {
        const SourceCounts *c = &s->counts[i];
        h = fnv1a(h, &c->first, sizeof c->first);
        h = fnv1a(h, &c->kept, sizeof c->kept);
        h = fnv1a(h, &c->weight, sizeof c->weight);
    }
    return h;
}
