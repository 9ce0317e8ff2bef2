/* detokenize.c — model tokens back to readable text (see detokenize.h).
 *
 * The tokenizer drops white space and case, so writing text back is a set
 * of rules about where spaces go and which characters to restore.  The
 * rules below were tuned on the Tatoeba dev set (tests/test_detokenize.c
 * measures them): with perfect casing they reproduce the references
 * exactly for the rates quoted there.  They are deliberately simple
 * lookups on neighbouring tokens; no language model, no sentence splitter.
 *
 * Everything here works on the tokens' bytes: tokens are valid UTF-8 from
 * the tokenizer, and the only Unicode property needed (is this Han/kana?)
 * comes from tokenizer_is_cjk. */
#include "detokenize.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/utf8.h"
#include "../common/util.h"
#include "tokenizer.h"

/* ---- A growing output string (common/util.h's StrBuf) ---------------------- */

static void str_add(StrBuf *o, const char *s) { strbuf_add(o, s, strlen(s)); }

/* ---- What a token is ----------------------------------------------------- */

/* First code point of a token (vocabulary tokens are valid UTF-8; for
 * anything else, its first byte). */
static int32_t first_codepoint(const char *t)
{
    const unsigned char *s = (const unsigned char *)t;
    int32_t cp;
    return utf8_decode(s, strlen(t), &cp) ? cp : s[0];
}

/* Non-ASCII punctuation and symbols that survive NFKC and matter for
 * spacing.  Any other non-ASCII token that is not Han/kana is a word. */
static const char *const opening_marks[] = {"“", "‘", "«", "¿", "¡", "「", "『", "《", "【", "〈", NULL};
static const char *const closing_marks[] = {"”", "’", "»", "。", "、", "」", "』", "》", "】", "〉",
                                            "…", NULL};
static const char *const other_marks[] = {"–", "—", "·", "•", "°", "€", "£", "¥", "×", "÷", NULL};

static int in_list(const char *t, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(t, *list) == 0) return 1;
    return 0;
}

/* A word: starts with an ASCII letter or digit, or is non-ASCII text that
 * is neither Han/kana nor one of the marks above. */
static int is_word(const char *t)
{
    unsigned char c = (unsigned char)t[0];
    if (c < 0x80) return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
    return !tokenizer_is_cjk(first_codepoint(t)) && !in_list(t, opening_marks) &&
           !in_list(t, closing_marks) && !in_list(t, other_marks);
}

/* A word of a space-separated script (Latin, Cyrillic, Hangul...: not Han
 * or kana, not punctuation), which Chinese output keeps apart from the
 * next one: "iPhone 6", "Café Latte". */
static int is_latin(const char *t)
{
    return tokenizer_is_word(t) && !tokenizer_is_cjk(first_codepoint(t));
}

/* A single ASCII letter, as in the parts of "a.m." */
static int is_letter(const char *t)
{
    return t[0] && !t[1] && (t[0] | 0x20) >= 'a' && (t[0] | 0x20) <= 'z';
}

static int is_number(const char *t)
{
    return t[0] && strspn(t, "0123456789") == strlen(t);
}

/* Is the separator between two numbers: digits after it, and before it
 * digits with separators among them ("1,234": a word holds a separator the
 * model wrote as a byte token, 1 <0x2C> ##2 ##3 ##4)?  Not "MP3" before
 * it: "MP3. 5 minutes" ends a sentence. */
static int digits_around(const char *prev, const char *next)
{
    return strspn(prev, "0123456789") > 0 && strspn(prev, "0123456789,.:") == strlen(prev) &&
           strspn(next, "0123456789") > 0;
}

static int is_one_of(const char *t, const char *chars)
{
    return t[0] && !t[1] && strchr(chars, t[0]);
}

/* ---- English ---------------------------------------------------------------- */

/* Word endings written after an apostrophe without spaces: don't, Tom's,
 * I'm, we'll, I've, I'd, you're. */
static int is_contraction_tail(const char *t)
{
    static const char *const tails[] = {"t", "s", "m", "ll", "ve", "d", "re", NULL};
    return in_list(t, tails);
}

/* Does the token at i glue to both neighbours ("don't", "well-known",
 * "3.5", "1,000", "10:30", "o'clock")? */
static int glues(const char *const *tok, size_t n, size_t i)
{
    if (i == 0 || i + 1 >= n) return 0;
    const char *prev = tok[i - 1], *t = tok[i], *next = tok[i + 1];
    if (is_one_of(t, "'") || strcmp(t, "’") == 0)
        return is_word(prev) && is_word(next) &&
               (is_contraction_tail(next) || strcmp(prev, "o") == 0);
    if (is_one_of(t, "-")) return is_word(prev) && is_word(next);
    if (is_one_of(t, ".:") && is_number(prev) && is_number(next)) return 1;
    if (is_one_of(t, ",") && is_number(prev) && is_number(next)) /* 1,000 but not "3, 1950" */
        return strlen(next) == 3;
    if (is_one_of(t, ".")) return is_letter(prev) && is_letter(next); /* a.m., U.S. */
    return 0;
}

/* Is the '.' at i part of a letter abbreviation: "a.m.", "U.S."? */
static int in_abbreviation(const char *const *tok, size_t n, size_t i)
{
    if (i > 0 && i + 1 < n && is_letter(tok[i - 1]) && is_letter(tok[i + 1])) return 1;
    return i >= 2 && is_letter(tok[i - 1]) && is_one_of(tok[i - 2], ".") &&
           in_abbreviation(tok, n, i - 2);
}

/* Does the token at i end a sentence, so that the next word is
 * capitalised?  A '.' does not in "...", 3.5, nor after an abbreviation
 * ("Mr. and Mrs.", "p.m."). */
static int ends_sentence(const char *const *tok, size_t n, size_t i)
{
    static const char *const abbreviations[] = {"mr", "mrs", "ms", "dr", "st", "jr", "vs", "etc", NULL};
    if (!is_one_of(tok[i], ".")) return is_one_of(tok[i], "!?");
    if (glues(tok, n, i) || in_abbreviation(tok, n, i)) return 0;
    if (i + 1 < n && is_one_of(tok[i + 1], ".")) return 0;
    return i == 0 || !(is_one_of(tok[i - 1], ".") || in_list(tok[i - 1], abbreviations));
}

/* Is the apostrophe at i closing a plural possessive ("the students' room")? */
static int closes_possessive(const char *const *tok, size_t i)
{
    if (i == 0 || !is_word(tok[i - 1])) return 0;
    size_t n = strlen(tok[i - 1]);
    return tok[i - 1][n - 1] == 's';
}

/* English: a space between tokens unless a rule above glues them; casing
 * from `cased`, then "I" and sentence starts capitalised. */
static char *detok_en(const char *const *tok, const char *const *cased, size_t n)
{
    StrBuf out = {0};
    str_add(&out, "");
    int quote_open = 0;     /* inside "..." */
    int no_space_next = 1;  /* the previous token wants the next one attached */
    int capitalise = 1;     /* the next word starts a sentence */
    for (size_t i = 0; i < n; i++) {
        const char *t = tok[i];
        int space_before = !no_space_next;
        no_space_next = 0;
        if (is_one_of(t, "\"")) {
            quote_open = !quote_open;
            /* A quotation after a comma, a colon or another quotation is a
             * sentence; after a word ("the answer is "no."") it is not. */
            if (quote_open) no_space_next = 1, capitalise |= i > 0 && is_one_of(tok[i - 1], ",:\"");
            else space_before = 0, capitalise = 0; /* "Hi!" he said. */
        } else if (is_one_of(t, ",.!?;:)]}%") || in_list(t, closing_marks)) {
            space_before = 0;
        } else if (is_one_of(t, "([{$") || in_list(t, opening_marks)) {
            no_space_next = 1;
        } else if (is_one_of(t, "'")) {
            if (closes_possessive(tok, i)) space_before = 0;
        }
        if (glues(tok, n, i)) space_before = 0, no_space_next = 1;

        const char *word = cased && cased[i] ? cased[i] : t;
        if (strcmp(t, "i") == 0) word = "I";
        if (space_before) str_add(&out, " ");
        size_t at = out.len;
        str_add(&out, word);
        if (is_word(t)) {
            if (capitalise && out.s[at] >= 'a' && out.s[at] <= 'z') out.s[at] -= 'a' - 'A';
            capitalise = 0;
        } else if (ends_sentence(tok, n, i)) {
            capitalise = 1;
        }
    }
    return out.s;
}

/* ---- Chinese ---------------------------------------------------------------- */

/* ASCII punctuation restored to its full-width form (NFKC made it ASCII). */
static const char *full_width(const char *t)
{
    static const char *const map[][2] = {
        {",", "，"}, {"?", "？"}, {"!", "！"}, {":", "："}, {";", "；"}, {"(", "（"}, {")", "）"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(t, map[i][0]) == 0) return map[i][1];
    return NULL;
}

/* The word `t` past the Han characters (any non-ASCII) it begins with:
 * a word the model began with a numeral and went on with digits (二 ##5
 * ##5 is the word 二55) still ends in the number 55, and a point after it
 * is a decimal point, not a full stop (二55.20, not 二55。20). */
static const char *after_han(const char *t)
{
    while ((unsigned char)*t >= 0x80) t++;
    return t;
}

/* Chinese text has no spaces; the ASCII punctuation NFKC produced from
 * full-width forms is written full-width again, except inside numbers. */
static char *detok_zh(const char *const *tok, const char *const *cased, size_t n)
{
    StrBuf out = {0};
    str_add(&out, "");
    int quote_open = 0;
    for (size_t i = 0; i < n; i++) {
        const char *t = tok[i];
        const char *prev = i > 0 ? tok[i - 1] : "";
        const char *next = i + 1 < n ? tok[i + 1] : "";
        const char *word = cased && cased[i] ? cased[i] : t;
        if (is_latin(prev) && is_latin(t)) str_add(&out, " "); /* "iPhone 6" */
        if (is_one_of(t, "\"")) {
            quote_open = !quote_open;
            word = quote_open ? "“" : "”";
        } else if (is_one_of(t, ".") && is_one_of(next, ".")) {
            /* NFKC turned each "…" into "...": write a run of dots back as
             * ellipses ("……" is six dots). */
            size_t run = 1;
            while (i + run < n && is_one_of(tok[i + run], ".")) run++;
            for (size_t k = 0; k < (run + 2) / 3; k++) str_add(&out, "…");
            i += run - 1;
            continue;
        } else if (is_one_of(t, ".")) {
            /* A full stop, but 3.5 and a.m. keep their dot. */
            if (!digits_around(after_han(prev), next) && !in_abbreviation(tok, n, i)) word = "。";
        } else if (full_width(t) && !(is_one_of(t, ",:") && digits_around(after_han(prev), next))) {
            word = full_width(t); /* but 1,000 and 10:30 (and 1,234,567 after "1,234") */
        }
        str_add(&out, word);
    }
    return out.s;
}

/* ---- Public ------------------------------------------------------------------ */

char *detokenize(const char *const *tokens, const char *const *cased, size_t n, const char *lang)
{
    if (strcmp(lang, "en") == 0) return detok_en(tokens, cased, n);
    if (strcmp(lang, "zh") == 0) return detok_zh(tokens, cased, n);
    StrBuf out = {0};
    str_add(&out, "");
    for (size_t i = 0; i < n; i++) {
        if (i) str_add(&out, " ");
        str_add(&out, cased && cased[i] ? cased[i] : tokens[i]);
    }
    return out.s;
}

/* Append s[0..n) to o, each invalid UTF-8 sequence as U+FFFD: byte
 * tokens joined in an order no text has must still make valid text.  And
 * without control characters: a model may write the byte token <0x0A>,
 * and a translation with a newline in it would be two lines of output for
 * one of input (a tab or a CR would garble TSV and terminal output too);
 * nor C1 controls (NEL, U+0085, and CSI, U+009B, to a terminal) or the
 * line and paragraph separators (U+2028, U+2029), line ends to some
 * readers. */
static void str_add_valid(StrBuf *o, const char *s, size_t n)
{
    char *copy = xmalloc(n + 1);
    for (size_t i = 0; i < n;) {
        int32_t cp;
        size_t k = utf8_decode((const unsigned char *)s + i, n - i, &cp);
        if (k == 0) {
            str_add(o, "\xEF\xBF\xBD");
            i++;
            continue;
        }
        if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029) {
            i += k;
            continue;
        }
        memcpy(copy, s + i, k);
        copy[k] = '\0';
        str_add(o, copy);
        i += k;
    }
    free(copy);
}

/* A word being joined from its pieces. */
typedef struct {
    StrBuf folded;   /* raw bytes of the pieces */
    StrBuf cased;    /* of their cased forms (the word's, if it is one piece) */
    StrBuf in_word;  /* of their casings inside longer words */
    size_t pieces;
} Joined;

static void joined_free(Joined *w)
{
    free(w->folded.s);
    free(w->cased.s);
    free(w->in_word.s);
}

/* Group ids into words: each piece that does not continue a word starts
 * one.  Special ids are left out, or with `keep_specials` each is a word of
 * its own (for display).  w has room for n; word_of (may be NULL) gets each
 * id's word.  Returns the number of words. */
static size_t group_pieces(const Vocab *vocab, const int *ids, size_t n, int keep_specials,
                           Joined *w, size_t *word_of)
{
    size_t m = 0;
    int alone = 0; /* the word before is a special: nothing joins it */
    for (size_t i = 0; i < n; i++) {
        ASSERT(ids[i] >= 0 && ids[i] < vocab_size(vocab));
        int special = ids[i] < VOCAB_SPECIALS;
        if (special && !keep_specials) continue;
        int continues, ignored;
        const char *piece = vocab_piece(vocab, ids[i], VOCAB_FOLDED, &continues);
        if (!continues || m == 0 || alone || special) {
            w[m] = (Joined){{0}, {0}, {0}, 0};
            str_add(&w[m].folded, "");
            str_add(&w[m].cased, "");
            str_add(&w[m].in_word, "");
            m++;
        }
        alone = special;
        str_add(&w[m - 1].folded, piece);
        str_add(&w[m - 1].cased, vocab_piece(vocab, ids[i], VOCAB_CASED, &ignored));
        str_add(&w[m - 1].in_word, vocab_piece(vocab, ids[i], VOCAB_CASED_IN_WORD, &ignored));
        w[m - 1].pieces++;
        if (word_of) word_of[i] = m - 1;
    }
    return m;
}

/* Subword ids → words, each cased: a one-piece word in that piece's
 * casing; a longer one in the casing of the whole word when that is a
 * token of its own, else in its pieces' casings inside words joined
 * (vocab.h).  tok and cased have room for n; returns the count. */
static size_t join_pieces(const Vocab *vocab, const int *ids, size_t n, char **tok, char **cased)
{
    Joined *w = xcalloc(n ? n : 1, sizeof *w);
    size_t m = group_pieces(vocab, ids, n, 0, w, NULL);
    size_t words = 0;
    for (size_t i = 0; i < m; i++) {
        StrBuf t = {0}, c = {0};
        str_add(&t, "");
        str_add(&c, "");
        str_add_valid(&t, w[i].folded.s, w[i].folded.len);
        int whole = w[i].pieces > 1 ? vocab_id(vocab, t.s) : VOCAB_UNK;
        if (whole >= VOCAB_SPECIALS) str_add(&c, vocab_cased(vocab, whole));
        else if (w[i].pieces > 1) str_add_valid(&c, w[i].in_word.s, w[i].in_word.len);
        else str_add_valid(&c, w[i].cased.s, w[i].cased.len);
        joined_free(&w[i]);
        if (!t.s[0]) { /* only <0x00>: nothing to write */
            free(t.s);
            free(c.s);
            continue;
        }
        tok[words] = t.s;
        cased[words++] = c.s;
    }
    free(w);
    return words;
}

/* English words of one or two letters that are also acronyms or letters a
 * Chinese sentence may hold (IT, US, AM, PM, OK, A, I...), and common
 * three-letter ones (CAN, WHO, NOW): English output writes them as words
 * of its own. */
static bool short_english_word(const char *w, size_t len)
{
    /* and the common ones an acronym in the Chinese may spell: CAN, WHO,
     * NOW made "CAN you see?", where the model's "can" is the verb far
     * more often than a copied acronym */
    static const char *const words[] = {"a",   "i",   "am",  "an",  "as",  "at",  "be",  "by",  "do",  "go",
                                        "he",  "if",  "in",  "is",  "it",  "me",  "my",  "no",  "of",  "ok",
                                        "on",  "or",  "pm",  "so",  "to",  "up",  "us",  "we",  "all", "and",
                                        "are", "but", "can", "for", "has", "how", "may", "new", "not", "now",
                                        "one", "out", "the", "was", "who", "why", "yes", "you"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strlen(words[i]) == len && strncasecmp(words[i], w, len) == 0) return true;
    return false;
}

static bool has_capital(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] >= 'A' && s[i] <= 'Z') return true;
    return false;
}

/* The bytes of the apostrophe at s (' or ’), or 0. */
static size_t apostrophe_at(const char *s)
{
    return *s == '\'' ? 1 : strncmp(s, "’", 3) == 0 ? 3 : 0;
}

/* The word at s: ASCII letters, and more joined to them by apostrophes
 * (don't, O'Brien, Tom's); its length in bytes, and in *head that of its
 * letters before the first apostrophe. */
static size_t word_at(const char *s, size_t *head)
{
    size_t n = 0, a;
    while (ascii_is_letter(s[n])) n++;
    *head = n;
    while ((a = apostrophe_at(s + n)) && ascii_is_letter(s[n + a])) {
        n += a;
        while (ascii_is_letter(s[n])) n++;
    }
    return n;
}

/* The length of w[0..n) before its last apostrophe; 0 when it has none
 * (a word starts with a letter). */
static size_t before_last_apostrophe(const char *w, size_t n)
{
    size_t last = 0;
    for (size_t i = 0; i < n; i++)
        if (apostrophe_at(w + i)) last = i;
    return last;
}

/* Do a[0..an) and b[0..bn) hold the same letters, in any case, with
 * apostrophes (of either kind) in the same places? */
static bool same_word(const char *a, size_t an, const char *b, size_t bn)
{
    size_t i = 0, j = 0;
    while (i < an && j < bn) {
        size_t x = apostrophe_at(a + i), y = apostrophe_at(b + j);
        if (x || y) {
            if (!x || !y) return false;
            i += x;
            j += y;
        } else if (ascii_to_lower(a[i++]) != ascii_to_lower(b[j++])) {
            return false;
        }
    }
    return i == an && j == bn;
}

/* The source's casing for the word w[0..len), copied letter by letter
 * from a source word of the same letters and apostrophes; false when the
 * source has no such word with a capital. */
static bool recase_from(char *w, size_t len, const char *source)
{
    for (const char *s = source; *s;) {
        if (!ascii_is_letter(*s)) {
            s++;
            continue;
        }
        size_t head, n = word_at(s, &head);
        if (same_word(w, len, s, n) && has_capital(s, n)) {
            for (size_t i = 0, j = 0; i < len;) {
                size_t a = apostrophe_at(w + i);
                if (a) {
                    i += a;
                    j += apostrophe_at(s + j);
                } else {
                    w[i++] = s[j++];
                }
            }
            return true;
        }
        s += n;
    }
    return false;
}

void detokenize_source_casing(char *text, const char *source, const char *lang)
{
    bool english = strcmp(lang, "en") == 0;
    for (char *w = text; *w;) {
        if (!ascii_is_letter(*w)) {
            w++;
            continue;
        }
        /* The whole word (O'Brien), else its longest part before an
         * apostrophe that the source holds (o'brien's from O'Brien,
         * kavelo's from Kavelo); never what follows an apostrophe alone:
         * the t of don't is not the T of T恤, nor the o of o'clock the O of
         * O'Brien. */
        size_t head, len = word_at(w, &head);
        if (!(english && short_english_word(w, head)))
            for (size_t n = len; n > 0 && !recase_from(w, n, source); n = before_last_apostrophe(w, n)) continue;
        w += len;
    }
}

/* `source` with full-width digits and commas (Chinese text's) as ASCII:
 * malloc'd. */
static char *ascii_numbers(const char *source)
{
    size_t len = strlen(source);
    char *out = xmalloc(len + 1), *o = out;
    for (size_t i = 0; i < len;) {
        int32_t cp;
        size_t k = utf8_decode((const unsigned char *)source + i, len - i, &cp);
        if (k == 0) { /* not UTF-8: the byte as it is */
            k = 1;
            cp = -1;
        }
        if (cp >= 0xFF10 && cp <= 0xFF19) { /* ０-９ */
            *o++ = (char)('0' + (cp - 0xFF10));
        } else if (cp == 0xFF0C) { /* ， */
            *o++ = ',';
        } else {
            memcpy(o, source + i, k);
            o += k;
        }
        i += k;
    }
    *o = '\0';
    return out;
}

/* Is c a comma or point that joins the digits around it into one number
 * (1,000; 3.5)? */
static bool joins_digits(char c) { return c == ',' || c == '.'; }

/* Does `source` (ascii_numbers') hold s[0..n) (digits and commas) as a
 * whole number: no digit before it, no digit after it, and no comma or
 * point joining it to one (so 1.5 holds neither 1 nor 5)? */
static bool holds_number(const char *source, const char *s, size_t n)
{
    for (const char *at = source; *at; at++) {
        if (strncmp(at, s, n) != 0) continue;
        bool starts = at == source || !(ascii_is_digit(at[-1]) || (joins_digits(at[-1]) && at - 1 > source &&
                                                                      ascii_is_digit(at[-2])));
        const char *end = at + n;
        bool ends = !ascii_is_digit(*end) && !(joins_digits(*end) && ascii_is_digit(end[1]));
        if (starts && ends) return true;
    }
    return false;
}

/* Does text hold a comma between two digits? */
static bool has_grouped_number(const char *text)
{
    for (const char *c = strchr(text, ','); c; c = strchr(c + 1, ','))
        if (c > text && ascii_is_digit(c[-1]) && ascii_is_digit(c[1])) return true;
    return false;
}

char *detokenize_source_numbers(char *text, const char *source, const char *lang)
{
    if (!has_grouped_number(text)) return text; /* nearly every translation */
    char *src = ascii_numbers(source);
    const char *list_comma = strcmp(lang, "zh") == 0 ? "，" : ", ";
    StrBuf out = {0};
    str_add(&out, "");
    bool changed = false;
    for (const char *t = text; *t;) {
        /* a run of digit groups joined by commas, not inside a longer run */
        if (!ascii_is_digit(*t) ||
            (t > text && (ascii_is_digit(t[-1]) || (t[-1] == ',' && t - 1 > text && ascii_is_digit(t[-2]))))) {
            strbuf_add(&out, t++, 1);
            continue;
        }
        size_t n = 0, groups = 1;
        while (ascii_is_digit(t[n])) n++;
        while (t[n] == ',' && ascii_is_digit(t[n + 1])) {
            n++;
            groups++;
            while (ascii_is_digit(t[n])) n++;
        }
        bool whole = groups == 1 || holds_number(src, t, n);
        for (size_t i = 0; i < n;) {
            size_t g = i;
            while (g < n && ascii_is_digit(t[g])) g++;
            strbuf_add(&out, t + i, g - i);
            if (g == n) break;
            /* the comma after this group: a list's when both sides stand
             * alone in the source */
            size_t h = g + 1;
            while (h < n && ascii_is_digit(t[h])) h++;
            bool apart = !whole && holds_number(src, t + i, g - i) && holds_number(src, t + g + 1, h - g - 1);
            str_add(&out, apart ? list_comma : ",");
            changed |= apart;
            i = g + 1;
        }
        t += n;
    }
    free(src);
    if (!changed) {
        free(out.s);
        return text;
    }
    free(text);
    return out.s;
}

char *detokenize_for_source(const Vocab *vocab, const int *ids, size_t n, const char *lang, const char *source)
{
    char *text = detokenize_ids(vocab, ids, n, lang);
    detokenize_source_casing(text, source, lang);
    return detokenize_source_numbers(text, source, lang);
}

size_t detokenize_words(const Vocab *vocab, const int *ids, size_t n, size_t *word_of, char **words)
{
    Joined *w = xcalloc(n ? n : 1, sizeof *w);
    size_t m = group_pieces(vocab, ids, n, 1, w, word_of);
    for (size_t i = 0; i < m; i++) {
        if (words) {
            StrBuf t = {0};
            str_add(&t, "");
            str_add_valid(&t, w[i].folded.s, w[i].folded.len);
            words[i] = t.s;
        }
        joined_free(&w[i]);
    }
    free(w);
    return m;
}

char *detokenize_ids(const Vocab *vocab, const int *ids, size_t n, const char *lang)
{
    char **tok = xmalloc((n ? n : 1) * sizeof *tok);
    char **cased = xmalloc((n ? n : 1) * sizeof *cased);
    size_t m = 0;
    int subword = vocab_is_subword(vocab);
    if (subword) {
        m = join_pieces(vocab, ids, n, tok, cased);
    } else {
        for (size_t i = 0; i < n; i++) {
            ASSERT(ids[i] >= 0 && ids[i] < vocab_size(vocab));
            if (ids[i] < VOCAB_SPECIALS) continue;
            tok[m] = (char *)vocab_token(vocab, ids[i]);
            cased[m] = (char *)vocab_cased(vocab, ids[i]);
            m++;
        }
    }
    char *text = detokenize((const char *const *)tok, (const char *const *)cased, m, lang);
    if (subword)
        for (size_t i = 0; i < m; i++) free(tok[i]), free(cased[i]);
    free(tok);
    free(cased);
    return text;
}
