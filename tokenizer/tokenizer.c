/* tokenizer.c — text to tokens: validate UTF-8, NFKC, split by script,
 * case-fold (see tokenizer.h).
 *
 * This is the only file that includes <utf8proc.h>; everything Unicode
 * (normalisation, categories, case folding) goes through it, so swapping
 * the library touches one file.  It does no sub-word splitting: that is
 * the vocabulary's job (tokenizer/vocab.c), on the words made here.
 *
 * Offsets.  Each token records the byte offset in the *original* input
 * where it starts, but tokens are cut from the NFKC text.  So we normalise
 * one "cluster" at a time — a character plus everything that NFKC might
 * compose with it (combining marks, Hangul vowel/final jamo) — and give
 * every normalised code point the offset of its cluster.  Normalising
 * cluster by cluster gives the same text as normalising the whole string,
 * because NFKC never composes or reorders across a starter. */
#include "tokenizer.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "../common/utf8.h"
#include "../common/util.h"

/* ---- Scripts ------------------------------------------------------------
 *
 * utf8proc has no script property, so Han and kana are code point ranges
 * (Unicode 15 Scripts.txt, rounded out to whole blocks):
 *   Han:  2E80–2FDF  CJK radicals supplement, Kangxi radicals
 *         3005–3007  々 〆 〇 (iteration mark, closing mark, ideographic zero)
 *         3021–3029, 3038–303B  Hangzhou numerals, more iteration marks
 *         3400–4DBF  extension A          4E00–9FFF  unified ideographs
 *         F900–FAFF  compatibility ideographs
 *         20000–2A6DF, 2A700–2EBEF, 30000–323AF  extensions B–H
 *         2F800–2FA1F  compatibility ideographs supplement
 *   Kana: 3040–309F hiragana, 30A0–30FF katakana (with ・ and ー),
 *         31F0–31FF katakana phonetic extensions, 32D0–32FE circled
 *         katakana, FF66–FF9F half-width katakana, 1B000–1B16F kana
 *         supplement and extended-A.
 * The full-width and circled forms become ordinary kana under NFKC; they
 * are listed so that tokenizer_reads_as_han, which looks at raw text, counts
 * them too.  Hangul is not here: Korean is written in words with spaces,
 * so it is split like Latin. */
static const struct {
    int32_t lo, hi;
} cjk_ranges[] = {
    {0x2E80, 0x2FDF},   {0x3005, 0x3007},   {0x3021, 0x3029},   {0x3038, 0x303B},
    {0x3040, 0x309F},   {0x30A0, 0x30FF},   {0x31F0, 0x31FF},   {0x32D0, 0x32FE},
    {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},   {0xF900, 0xFAFF},   {0xFF66, 0xFF9F},
    {0x1B000, 0x1B16F}, {0x20000, 0x2A6DF}, {0x2A700, 0x2EBEF}, {0x2F800, 0x2FA1F},
    {0x30000, 0x323AF},
};

int tokenizer_is_cjk(int32_t codepoint)
{
    for (size_t i = 0; i < sizeof cjk_ranges / sizeof cjk_ranges[0]; i++)
        if (codepoint >= cjk_ranges[i].lo && codepoint <= cjk_ranges[i].hi) return 1;
    return 0;
}

int tokenizer_is_hidden(int32_t codepoint)
{
    switch (utf8proc_category(codepoint)) {
    case UTF8PROC_CATEGORY_CC: case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_ZL: case UTF8PROC_CATEGORY_ZP:
        return 1;
    default:
        return 0;
    }
}

/* What a normalised code point does to tokenisation. */
typedef enum {
    CH_SPACE,  /* separates tokens and is dropped: Z*, controls, U+200B */
    CH_IGNORE, /* invisible format character (soft hyphen, ZWJ, BOM): dropped
                  without separating, so "co\u00ADoperate" stays one word */
    CH_MARK,   /* combining mark: belongs to the token before it */
    CH_WORD,   /* letter or digit of a space-separated script: runs */
    CH_SINGLE, /* Han, kana, punctuation, symbol, unassigned: alone */
} CharClass;

static CharClass char_class(int32_t cp)
{
    if (tokenizer_is_cjk(cp)) {
        /* The kana blocks hold two combining marks (U+3099, U+309A). */
        return utf8proc_category(cp) == UTF8PROC_CATEGORY_MN ? CH_MARK : CH_SINGLE;
    }
    switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
        return CH_WORD;
    case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
        return CH_MARK;
    case UTF8PROC_CATEGORY_ZS: case UTF8PROC_CATEGORY_ZL: case UTF8PROC_CATEGORY_ZP:
    case UTF8PROC_CATEGORY_CC:
        return CH_SPACE;
    case UTF8PROC_CATEGORY_CF:
        return cp == 0x200B ? CH_SPACE : CH_IGNORE; /* ZERO WIDTH SPACE is a space */
    default: /* P*, S*, private use, unassigned: a token of its own (a word
              * vocabulary without it reads <unk>; a subword one spells it
              * in byte tokens) */
        return CH_SINGLE;
    }
}

/* ---- UTF-8 --------------------------------------------------------------- */

/* Decode all of text into code points and their byte offsets (each array
 * len + 1 long).  Returns the count, or -1 with err filled. */
static long decode_all(const char *text, size_t len, int32_t *cps, size_t *offs, Error *err)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        if (s[i] == 0) return error_set(err, "NUL byte at byte %zu", i);
        size_t k = utf8_decode(s + i, len - i, &cps[n]);
        if (k == 0) return error_set(err, "invalid UTF-8 at byte %zu", i);
        offs[n++] = i;
        i += k;
    }
    offs[n] = len;
    return (long)n;
}

/* ---- Normalisation -------------------------------------------------------- */

/* What NFKD makes of one code point, as far as clusters and the stream-safe
 * limit below care.  `starts_cluster`: can NFKC never compose it with what
 * came before?  That is so unless its compatibility decomposition begins
 * with a combining mark (e.g. U+FF9E half-width voiced mark → U+3099) or a
 * Hangul vowel/final jamo (which compose into the syllable before them).
 * `leading`, `trailing`: non-starters (combining class != 0) before the
 * decomposition's first starter and after its last; both equal `length`
 * when it has no starter at all. */
typedef struct {
    int starts_cluster;
    int leading, trailing, length;
} Decomposed;

static Decomposed decomposed(int32_t cp)
{
    if (cp < 0x80) return (Decomposed){1, 0, 0, 1}; /* ASCII: its own starter */
    int32_t d[32];
    int last_boundclass = 0;
    utf8proc_ssize_t n = utf8proc_decompose_char(cp, d, 32, UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT,
                                                 &last_boundclass);
    ASSERT(n >= 1 && n <= 32); /* the longest decomposition is 18 */
    Decomposed r = {0, 0, 0, (int)n};
    while (r.leading < n && utf8proc_get_property(d[r.leading])->combining_class != 0) r.leading++;
    while (r.trailing < n && utf8proc_get_property(d[n - 1 - r.trailing])->combining_class != 0)
        r.trailing++;
    const utf8proc_property_t *p = utf8proc_get_property(d[0]);
    r.starts_cluster = p->combining_class == 0 && p->category != UTF8PROC_CATEGORY_MN &&
                       p->category != UTF8PROC_CATEGORY_MC && p->category != UTF8PROC_CATEGORY_ME &&
                       !(d[0] >= 0x1160 && d[0] <= 0x11FF);
    return r;
}

/* Stream-Safe Text Format (UAX #15, section 13): at most 30 non-starters in
 * a row, counted in NFKD; the Stream-Safe Text Process puts U+034F COMBINING
 * GRAPHEME JOINER (a starter that composes with nothing) before the code
 * point that would make it 31.  We apply it before normalising because
 * canonical reordering sorts a run of marks in time quadratic in its length
 * (a 64 KB line of mixed marks took seconds); with the joiner no sort is
 * longer than 30 + 18.  Ordinary text has no such runs and is unchanged. */
enum { STREAM_SAFE_MAX = 30 };
static const int32_t CGJ = 0x034F;

/* A growable array of code points. */
typedef struct {
    int32_t *cp;
    size_t n, cap;
} CodeBuf;

/* NFKC of the UTF-8 bytes s[0..len) into buf (replacing its contents). */
static void nfkc(const char *s, size_t len, CodeBuf *buf)
{
    /* As utf8proc_map does: COMPOSE makes decompose() decompose fully
     * (with canonical reordering), normalize_utf32() then composes. */
    const utf8proc_option_t opts = UTF8PROC_STABLE | UTF8PROC_COMPAT | UTF8PROC_COMPOSE;
    for (;;) {
        utf8proc_ssize_t n = utf8proc_decompose((const utf8proc_uint8_t *)s,
                                                (utf8proc_ssize_t)len, buf->cp,
                                                (utf8proc_ssize_t)buf->cap, opts);
        ASSERT(n >= 0); /* the input was validated */
        if ((size_t)n <= buf->cap) {
            n = utf8proc_normalize_utf32(buf->cp, n, opts);
            ASSERT(n >= 0);
            buf->n = (size_t)n;
            return;
        }
        buf->cap = (size_t)n;
        buf->cp = xrealloc(buf->cp, buf->cap * sizeof *buf->cp);
    }
}

/* ---- Building tokens ------------------------------------------------------- */

typedef struct {
    TokenList *list;
    size_t cap;
    char *cur;          /* UTF-8 of the token being built */
    size_t cur_len, cur_cap;
    size_t cur_offset;
    CharClass cur_kind; /* CH_SPACE when no token is open */
    bool space_seen;    /* white space since the last token ended */
} Builder;

/* The case-folded form of an NFKC token: utf8proc's full case folding,
 * then NFKC again (folding may decompose). */
static char *casefold(const char *s)
{
    utf8proc_uint8_t *out = NULL;
    utf8proc_ssize_t n = utf8proc_map((const utf8proc_uint8_t *)s, 0, &out,
                                      UTF8PROC_NULLTERM | UTF8PROC_STABLE |
                                          UTF8PROC_COMPOSE | UTF8PROC_COMPAT |
                                          UTF8PROC_CASEFOLD);
    ASSERT(n >= 0 && out); /* valid input; only fails when out of memory */
    char *copy = xstrdup((const char *)out);
    free(out); /* utf8proc allocates with malloc */
    return copy;
}

static void end_token(Builder *b)
{
    if (b->cur_kind == CH_SPACE) return;
    TokenList *l = b->list;
    if (l->count == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 16;
        l->folded = xrealloc(l->folded, b->cap * sizeof *l->folded);
        l->surface = xrealloc(l->surface, b->cap * sizeof *l->surface);
        l->offset = xrealloc(l->offset, b->cap * sizeof *l->offset);
        l->spaced = xrealloc(l->spaced, b->cap * sizeof *l->spaced);
    }
    b->cur[b->cur_len] = '\0';
    l->surface[l->count] = xstrdup(b->cur);
    l->folded[l->count] = casefold(b->cur);
    l->offset[l->count] = b->cur_offset;
    l->spaced[l->count] = b->space_seen;
    l->count++;
    b->space_seen = false;
    b->cur_len = 0;
    b->cur_kind = CH_SPACE;
}

static void append_cp(Builder *b, int32_t cp)
{
    if (b->cur_len + 5 > b->cur_cap) {
        b->cur_cap = 2 * b->cur_cap + 16;
        b->cur = xrealloc(b->cur, b->cur_cap);
    }
    b->cur_len += (size_t)utf8proc_encode_char(cp, (utf8proc_uint8_t *)b->cur + b->cur_len);
}

/* Feed one normalised code point that came from input byte `offset`. */
static void feed(Builder *b, int32_t cp, size_t offset)
{
    CharClass c = char_class(cp);
    if (c == CH_IGNORE) return;
    if (c == CH_SPACE) {
        end_token(b);
        b->space_seen = true;
        return;
    }
    /* A mark joins whatever token is open (a word, or a Han character or
     * emoji followed by a variation selector); a word letter joins a word. */
    int joins = (c == CH_MARK && b->cur_kind != CH_SPACE) ||
                (c == CH_WORD && b->cur_kind == CH_WORD);
    if (!joins) {
        end_token(b);
        b->cur_kind = c == CH_WORD ? CH_WORD : CH_SINGLE; /* a lone mark is single */
        b->cur_offset = offset;
    }
    append_cp(b, cp);
}

int tokenize(const char *text, size_t len, TokenList *out, Error *err)
{
    ASSERT(text || len == 0);
    memset(out, 0, sizeof *out);
    int32_t *cps = xmalloc((len + 1) * sizeof *cps);
    size_t *offs = xmalloc((len + 1) * sizeof *offs);
    long n = decode_all(text, len, cps, offs, err);
    if (n < 0) {
        free(cps);
        free(offs);
        return -1;
    }
    Builder b = {.list = out, .cur_kind = CH_SPACE};
    CodeBuf norm = {0};
    size_t run = 0; /* non-starters in a row, in NFKD, up to here */
    Decomposed d = n > 0 ? decomposed(cps[0]) : (Decomposed){0};
    for (size_t i = 0; i < (size_t)n;) {
        /* A cluster is cps[i..j): it ends before the next code point that
         * starts one, or before the one that needs a joiner first.  A joiner
         * is never needed at i: a cluster start has no leading non-starter,
         * and after a joiner the count starts again from 0. */
        size_t j = i;
        int joiner = 0;
        for (;;) {
            run = d.leading == d.length ? run + (size_t)d.length : (size_t)d.trailing;
            if (++j == (size_t)n) break;
            d = decomposed(cps[j]);
            if (d.starts_cluster) break;
            if (run + (size_t)d.leading > STREAM_SAFE_MAX) {
                joiner = 1;
                run = 0;
                break;
            }
        }
        /* A number that is not a decimal digit (Unicode's "No": ², ½, ①)
         * stands apart: NFKC makes it digits, which would join the number
         * before it, "10²" read as 102 and "2½" as 21 (and copy_numbers
         * would then write that number). */
        bool apart = utf8proc_category(cps[i]) == UTF8PROC_CATEGORY_NO;
        if (apart) end_token(&b);
        nfkc(text + offs[i], offs[j] - offs[i], &norm);
        for (size_t k = 0; k < norm.n; k++) feed(&b, norm.cp[k], offs[i]);
        if (apart) end_token(&b);
        /* The joiner is a mark, so it joins the open token (whose case
         * folding then also sorts no run longer than 30); a token never
         * starts with one. */
        if (joiner && b.cur_kind != CH_SPACE) feed(&b, CGJ, offs[j]);
        i = j;
    }
    end_token(&b);
    free(norm.cp);
    free(b.cur);
    free(cps);
    free(offs);
    return 0;
}

int tokenizer_is_word(const char *token)
{
    int32_t cp;
    size_t n = utf8_decode((const unsigned char *)token, strlen(token), &cp);
    return n > 0 && !tokenizer_is_cjk(cp) && char_class(cp) == CH_WORD;
}

int tokenizer_is_digit(int32_t codepoint)
{
    return utf8proc_category(codepoint) == UTF8PROC_CATEGORY_ND;
}

char *tokenizer_fold(const char *text) { return casefold(text); }

void token_list_free(TokenList *list)
{
    if (!list) return;
    for (size_t i = 0; i < list->count; i++) {
        free(list->folded[i]);
        free(list->surface[i]);
    }
    free(list->folded);
    free(list->surface);
    free(list->offset);
    free(list->spaced);
    memset(list, 0, sizeof *list);
}

/* Counting a Latin word once, not per letter, is what keeps an embedded
 * name ("我在Google工作": 4 Han characters, 1 word) from outvoting the
 * sentence around it; a Han character is roughly a word's worth of
 * meaning.  Digits are not letters ("1990年5月5日"). */
int tokenizer_reads_as_han(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t han = 0, words = 0;
    int first = -1;      /* 1 Han, 0 other letters: the tie-break */
    bool in_word = false;
    for (size_t i = 0; i < len;) {
        int32_t cp;
        size_t k = utf8_decode(s + i, len - i, &cp);
        if (k == 0) return -1;
        i += k;
        utf8proc_category_t cat = utf8proc_category(cp);
        bool letter = cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO;
        bool mark = cat >= UTF8PROC_CATEGORY_MN && cat <= UTF8PROC_CATEGORY_ME;
        if (letter && tokenizer_is_cjk(cp)) {
            han++;
            in_word = false;
            if (first < 0) first = 1;
        } else if (letter) {
            if (!in_word) words++;
            in_word = true;
            if (first < 0) first = 0;
        } else if (!mark) {
            in_word = false; /* a combining mark stays inside its word */
        }
    }
    if (first < 0) return -1; /* no letter */
    return han != words ? han > words : first == 1;
}

size_t tokenizer_fit_width(const char *text, size_t len, int columns, int *width)
{
    size_t at = 0;
    int used = 0;
    while (at < len) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t n = utf8proc_iterate((const utf8proc_uint8_t *)text + at, (utf8proc_ssize_t)(len - at), &cp);
        int w = n > 0 ? utf8proc_charwidth(cp) : 1;
        if (n <= 0) n = 1;
        if (w < 0) w = 0;
        if (used + w > columns) break;
        used += w;
        at += (size_t)n;
    }
    *width = used;
    return at;
}
