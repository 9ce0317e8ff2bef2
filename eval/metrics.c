/* metrics.c — corpus BLEU and chrF2 as sacrebleu 2.x computes them.
 *
 * In pipeline order:
 *   1. UTF-8 decoding and the two Unicode predicates sacrebleu relies on
 *      (Python's str.isspace, TokenizerZh's table of CJK ranges).
 *   2. The BLEU tokenisers: 13a's tag and entity clean-up, zh's spacing of
 *      CJK characters, and the regex pass both share (sacrebleu's
 *      TokenizerRegexp), written as explicit scanners.
 *   3. N-gram overlap of two sequences of integer ids, shared by BLEU (ids
 *      are interned word tokens) and chrF (ids are code points).
 *   4. The statistics and the scores.
 *
 * Deliberately not here: lowercasing, several references per sentence,
 * effective-order BLEU, other smoothing methods, chrF++ word n-grams and
 * the other sacrebleu tokenisers.  The project only reports the defaults,
 * and every extra knob would be one more way to disagree with sacrebleu.
 *
 * The fixtures in shared/data/metric-fixtures hold figures computed by
 * sacrebleu itself; tests/test_metrics.c checks we reproduce them. */
#include "metrics.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/utf8.h"
#include "../common/util.h"

/* ---- 1. UTF-8 and Unicode predicates ---------------------------------- */

/* Ids for bytes that do not start a well-formed UTF-8 sequence: one past
 * the largest code point, so they never equal a real character. */
#define INVALID_BYTE_BASE 0x110000u

/* Decode the character starting at s[0] (n >= 1 bytes available) into *cp
 * and return its length in bytes.  A malformed sequence (bad lead byte,
 * truncated, overlong, surrogate, beyond U+10FFFF: common/utf8.h) yields
 * its first byte as a character of its own, so callers always make
 * progress. */
static size_t decode_char(const unsigned char *s, size_t n, uint32_t *cp)
{
    int32_t c;
    size_t len = utf8_decode(s, n, &c);
    if (len == 0) {
        *cp = INVALID_BYTE_BASE + s[0];
        return 1;
    }
    *cp = (uint32_t)c;
    return len;
}

/* Python's str.isspace(): what str.split() and str.strip() remove, and so
 * what sacrebleu treats as a word boundary (BLEU) or drops (chrF). */
static bool is_py_space(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 ||
           c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* TokenizerZh's _UCODE_RANGES.  sacrebleu compares one-character Python
 * strings against these bounds, and two of its entries are written as
 * '\u20000'..'\u2a6d6' and '\u2f800'..'\u2fa1d': in Python '\u20000' is
 * U+2000 followed by '0', so the comparison really admits U+2001..U+2A6D
 * (general punctuation such as curly quotes, dashes and the ellipsis,
 * arrows, maths, ...) and U+2F81..U+2FA1, not Extension B and the
 * compatibility supplement.  We reproduce what sacrebleu does. */
static const struct {
    uint32_t lo, hi;
} cjk_ranges[] = {
    {0x3400, 0x4DB5}, {0x4E00, 0x9FA5}, {0x9FA6, 0x9FBB}, {0xF900, 0xFA2D},
    {0xFA30, 0xFA6A}, {0xFA70, 0xFAD9}, {0x2001, 0x2A6D}, {0x2F81, 0x2FA1},
    {0xFF00, 0xFFEF}, {0x2E80, 0x2EFF}, {0x3000, 0x303F}, {0x31C0, 0x31EF},
    {0x2F00, 0x2FDF}, {0x2FF0, 0x2FFF}, {0x3100, 0x312F}, {0x31A0, 0x31BF},
    {0xFE10, 0xFE1F}, {0xFE30, 0xFE4F}, {0x2600, 0x26FF}, {0x2700, 0x27BF},
    {0x3200, 0x32FF}, {0x3300, 0x33FF},
};

static bool is_zh_char(uint32_t c)
{
    for (size_t i = 0; i < sizeof cjk_ranges / sizeof cjk_ranges[0]; i++)
        if (c >= cjk_ranges[i].lo && c <= cjk_ranges[i].hi) return true;
    return false;
}

/* ---- 2. Tokenisers ------------------------------------------------------ */

/* Growable byte strings are common/util.h's StrBuf. */

static void buf_putc(StrBuf *b, char c) { strbuf_add(b, &c, 1); }

/* Each stage reads `in` and rewrites `out` from scratch. */
static void buf_clear(StrBuf *b)
{
    b->len = 0;
    strbuf_add(b, "", 0);
}

static void buf_swap(StrBuf *a, StrBuf *b)
{
    StrBuf t = *a;
    *a = *b;
    *b = t;
}

/* The span s[*start, *end) without leading (if `left`) and trailing Python
 * whitespace: BLEU rstrip()s every sentence, TokenizerZh also strip()s. */
static void py_strip(const char *s, size_t n, bool left, size_t *start, size_t *end)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, first = n, last = 0;
    while (i < n) {
        uint32_t c;
        size_t len = decode_char(u + i, n - i, &c);
        if (!is_py_space(c)) {
            if (first == n) first = i;
            last = i + len;
        }
        i += len;
    }
    *start = left && first < n ? first : 0;
    *end = last;
}

/* Python's str.replace(from, to): non-overlapping, left to right. */
static void replace_all(const StrBuf *in, StrBuf *out, const char *from, const char *to)
{
    size_t nf = strlen(from), nt = strlen(to);
    buf_clear(out);
    for (size_t i = 0; i < in->len;) {
        if (in->len - i >= nf && memcmp(in->s + i, from, nf) == 0) {
            strbuf_add(out, to, nt);
            i += nf;
        } else {
            buf_putc(out, in->s[i++]);
        }
    }
}

/* TokenizerZh: " c " around every character of the CJK table. */
static void space_zh_chars(const StrBuf *in, StrBuf *out)
{
    const unsigned char *u = (const unsigned char *)in->s;
    buf_clear(out);
    for (size_t i = 0; i < in->len;) {
        uint32_t c;
        size_t len = decode_char(u + i, in->len - i, &c);
        bool zh = is_zh_char(c);
        if (zh) buf_putc(out, ' ');
        strbuf_add(out, in->s + i, len);
        if (zh) buf_putc(out, ' ');
        i += len;
    }
}

/* The four TokenizerRegexp substitutions.  Every pattern is one or two
 * single characters and re.sub takes non-overlapping matches left to right,
 * so each becomes a scan that either rewrites a match and jumps past it or
 * copies one byte.  Scanning bytes rather than code points gives the same
 * output: the patterns' literal characters are ASCII, which never occur
 * inside a multi-byte UTF-8 sequence, and a "[^0-9]" next to an ASCII
 * punctuation mark is always the adjacent byte of the neighbouring
 * character, copied through unchanged. */

/* r'([\{-\~\[-\` -\&\(-\+\:-\@\/])' -> r' \1 ': ASCII punctuation (and the
 * space) except apostrophe, comma, hyphen and period. */
static bool is_13a_punct(unsigned char c)
{
    return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
           (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static bool is_period_comma(unsigned char c) { return c == '.' || c == ','; }

static void split_punct(const StrBuf *in, StrBuf *out)
{
    buf_clear(out);
    for (size_t i = 0; i < in->len; i++) {
        unsigned char c = (unsigned char)in->s[i];
        if (is_13a_punct(c)) {
            char rep[3] = {' ', (char)c, ' '};
            strbuf_add(out, rep, 3);
        } else {
            buf_putc(out, (char)c);
        }
    }
}

/* r'([^0-9])([\.,])' -> r'\1 \2 ': period/comma not after a digit. */
static void split_period_comma_after(const StrBuf *in, StrBuf *out)
{
    const unsigned char *u = (const unsigned char *)in->s;
    buf_clear(out);
    for (size_t i = 0; i < in->len;) {
        if (i + 1 < in->len && !is_digit(u[i]) && is_period_comma(u[i + 1])) {
            char rep[4] = {(char)u[i], ' ', (char)u[i + 1], ' '};
            strbuf_add(out, rep, 4);
            i += 2;
        } else {
            buf_putc(out, (char)u[i++]);
        }
    }
}

/* r'([\.,])([^0-9])' -> r' \1 \2': period/comma not before a digit. */
static void split_period_comma_before(const StrBuf *in, StrBuf *out)
{
    const unsigned char *u = (const unsigned char *)in->s;
    buf_clear(out);
    for (size_t i = 0; i < in->len;) {
        if (i + 1 < in->len && is_period_comma(u[i]) && !is_digit(u[i + 1])) {
            char rep[4] = {' ', (char)u[i], ' ', (char)u[i + 1]};
            strbuf_add(out, rep, 4);
            i += 2;
        } else {
            buf_putc(out, (char)u[i++]);
        }
    }
}

/* r'([0-9])(-)' -> r'\1 \2 ': a dash after a digit ("1990-2000"). */
static void split_dash_after_digit(const StrBuf *in, StrBuf *out)
{
    const unsigned char *u = (const unsigned char *)in->s;
    buf_clear(out);
    for (size_t i = 0; i < in->len;) {
        if (i + 1 < in->len && is_digit(u[i]) && u[i + 1] == '-') {
            char rep[4] = {(char)u[i], ' ', '-', ' '};
            strbuf_add(out, rep, 4);
            i += 2;
        } else {
            buf_putc(out, (char)u[i++]);
        }
    }
}

/* ' '.join(line.split()): words separated by exactly one space. */
static void collapse_space(const StrBuf *in, StrBuf *out)
{
    const unsigned char *u = (const unsigned char *)in->s;
    bool pending = false; /* whitespace seen since the last word */
    buf_clear(out);
    for (size_t i = 0; i < in->len;) {
        uint32_t c;
        size_t len = decode_char(u + i, in->len - i, &c);
        if (is_py_space(c)) {
            pending = true;
        } else {
            if (pending && out->len > 0) buf_putc(out, ' ');
            pending = false;
            strbuf_add(out, in->s + i, len);
        }
        i += len;
    }
}

/* Tokenizer13a's language-independent part, in sacrebleu's order (which
 * matters: "&amp;lt;" becomes "&lt;" and then "<"). */
static const char *const clean_13a[][2] = {
    {"<skipped>", ""}, {"-\n", ""},   {"\n", " "},  {"&quot;", "\""},
    {"&amp;", "&"},    {"&lt;", "<"}, {"&gt;", ">"},
};

MetricTokenize metric_tokenize_for_lang(const char *lang)
{
    return lang && strcmp(lang, "zh") == 0 ? METRIC_TOKENIZE_ZH : METRIC_TOKENIZE_13A;
}

char *metric_tokenize(const char *text, MetricTokenize tok)
{
    StrBuf cur = {0}, tmp = {0};
    size_t start, end;

    /* BLEU's _preprocess_segment rstrip()s; TokenizerZh strip()s again. */
    py_strip(text, strlen(text), tok == METRIC_TOKENIZE_ZH, &start, &end);
    strbuf_add(&cur, text + start, end - start);

    if (tok == METRIC_TOKENIZE_ZH) {
        space_zh_chars(&cur, &tmp);
        buf_swap(&cur, &tmp);
    } else {
        for (size_t i = 0; i < sizeof clean_13a / sizeof clean_13a[0]; i++) {
            replace_all(&cur, &tmp, clean_13a[i][0], clean_13a[i][1]);
            buf_swap(&cur, &tmp);
        }
        /* 13a pads the line so the regexes see a boundary at both ends. */
        buf_clear(&tmp);
        buf_putc(&tmp, ' ');
        strbuf_add(&tmp, cur.s, cur.len);
        buf_putc(&tmp, ' ');
        buf_swap(&cur, &tmp);
    }

    void (*const stages[])(const StrBuf *, StrBuf *) = {
        split_punct, split_period_comma_after, split_period_comma_before,
        split_dash_after_digit, collapse_space,
    };
    for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++) {
        stages[i](&cur, &tmp);
        buf_swap(&cur, &tmp);
    }
    free(tmp.s);
    return cur.s;
}

/* ---- 3. N-gram overlap ---------------------------------------------------- */

/* One n-gram: n ids starting at `start`, from the hypothesis or reference. */
typedef struct {
    const uint32_t *start;
    size_t n;
    bool is_ref;
} Gram;

static int gram_cmp(const void *pa, const void *pb)
{
    const Gram *a = pa, *b = pb;
    for (size_t i = 0; i < a->n; i++)
        if (a->start[i] != b->start[i]) return a->start[i] < b->start[i] ? -1 : 1;
    return 0;
}

static size_t gram_count(size_t len, size_t n) { return len >= n ? len - n + 1 : 0; }

/* The clipped overlap of the order-n n-grams of hyp[0..nh) and
 * ref[0..nr): the sum over distinct n-grams g of
 * min(count of g in hyp, count of g in ref), as Counter & Counter gives.
 * Sorting both lists together puts equal n-grams next to each other. */
static size_t ngram_matches(const uint32_t *hyp, size_t nh, const uint32_t *ref, size_t nr,
                            size_t n)
{
    size_t gh = gram_count(nh, n), gr = gram_count(nr, n), total = gh + gr, match = 0;
    if (gh == 0 || gr == 0) return 0;

    Gram *grams = xmalloc(total * sizeof *grams);
    for (size_t i = 0; i < gh; i++) grams[i] = (Gram){hyp + i, n, false};
    for (size_t i = 0; i < gr; i++) grams[gh + i] = (Gram){ref + i, n, true};
    qsort(grams, total, sizeof *grams, gram_cmp);

    for (size_t i = 0; i < total;) {
        size_t in_hyp = 0, in_ref = 0, j = i;
        for (; j < total && gram_cmp(&grams[i], &grams[j]) == 0; j++) {
            if (grams[j].is_ref) in_ref++;
            else in_hyp++;
        }
        match += in_hyp < in_ref ? in_hyp : in_ref;
        i = j;
    }
    free(grams);
    return match;
}

/* ---- 4a. BLEU -------------------------------------------------------------- */

/* A token of a tokenised sentence; `pos` is its index in the joint
 * hypothesis-then-reference sequence. */
typedef struct {
    const char *s;
    size_t len, pos;
} Token;

static size_t count_tokens(const char *s)
{
    if (!*s) return 0;
    size_t n = 1;
    for (; *s; s++) n += *s == ' ';
    return n;
}

/* Append the single-space separated tokens of s to out[*count...]. */
static void collect_tokens(const char *s, Token *out, size_t *count)
{
    while (*s) {
        const char *space = strchr(s, ' ');
        size_t len = space ? (size_t)(space - s) : strlen(s);
        out[*count] = (Token){s, len, *count};
        (*count)++;
        s += len + (space != NULL);
    }
}

static int token_cmp(const void *pa, const void *pb)
{
    const Token *a = pa, *b = pb;
    int c = memcmp(a->s, b->s, a->len < b->len ? a->len : b->len);
    if (c) return c;
    return (a->len > b->len) - (a->len < b->len);
}

/* Give equal tokens equal ids: ids[tok.pos] for every token. */
static void intern_tokens(Token *toks, size_t n, uint32_t *ids)
{
    qsort(toks, n, sizeof *toks, token_cmp);
    uint32_t id = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && token_cmp(&toks[i - 1], &toks[i]) != 0) id++;
        ids[toks[i].pos] = id;
    }
}

void bleu_add(BleuStats *stats, const char *hyp, const char *ref, MetricTokenize tok)
{
    char *h = metric_tokenize(hyp, tok), *r = metric_tokenize(ref, tok);
    size_t nh = count_tokens(h), nr = count_tokens(r), count = 0;
    Token *toks = xmalloc((nh + nr) * sizeof *toks);
    uint32_t *ids = xmalloc((nh + nr) * sizeof *ids);

    collect_tokens(h, toks, &count);
    collect_tokens(r, toks, &count);
    ASSERT(count == nh + nr);
    intern_tokens(toks, count, ids);

    /* With one reference, the "closest reference length" is its length. */
    stats->hyp_len += nh;
    stats->ref_len += nr;
    for (size_t n = 1; n <= BLEU_MAX_ORDER; n++) {
        stats->total[n - 1] += gram_count(nh, n);
        stats->correct[n - 1] += ngram_matches(ids, nh, ids + nh, nr, n);
    }
    free(ids);
    free(toks);
    free(h);
    free(r);
}

void bleu_merge(BleuStats *into, const BleuStats *from)
{
    into->hyp_len += from->hyp_len;
    into->ref_len += from->ref_len;
    for (size_t n = 0; n < BLEU_MAX_ORDER; n++) {
        into->correct[n] += from->correct[n];
        into->total[n] += from->total[n];
    }
}

/* sacrebleu BLEU.compute_bleu with smooth_method 'exp' (mteval's NIST
 * smoothing: the k-th order with no match counts as 1 / (2^k * total)). */
double bleu_score(const BleuStats *stats)
{
    bool any_match = false;
    for (size_t n = 0; n < BLEU_MAX_ORDER; n++) any_match |= stats->correct[n] > 0;
    if (!any_match) return 0.0; /* sacrebleu's early stop (its issue #141) */

    double bp = 1.0;
    if (stats->hyp_len < stats->ref_len)
        bp = exp(1.0 - (double)stats->ref_len / (double)stats->hyp_len);

    double smooth = 1.0, log_sum = 0.0;
    for (size_t n = 0; n < BLEU_MAX_ORDER; n++) {
        /* sacrebleu stops at an order with no n-grams and takes log(0) as
         * -9999999999 for it and the rest: the score underflows to 0. */
        if (stats->total[n] == 0) return 0.0;
        double precision;
        if (stats->correct[n] == 0) {
            smooth *= 2.0;
            precision = 100.0 / (smooth * (double)stats->total[n]);
        } else {
            precision = 100.0 * (double)stats->correct[n] / (double)stats->total[n];
        }
        log_sum += log(precision);
    }
    /* Every precision 100 gives exp(4·log 100 / 4) = 100.00000000000004:
     * capped, so that a perfect score is 100, no more (train's checkpoint
     * refused to resume from a best score above 100 it had written). */
    double score = bp * exp(log_sum / BLEU_MAX_ORDER);
    return score < 100.0 ? score : 100.0;
}

/* ---- 4b. chrF -------------------------------------------------------------- */

/* The characters of s with all whitespace removed, as code point ids
 * (''.join(line.split()) in sacrebleu).  Sets *n; caller frees. */
static uint32_t *chars_without_space(const char *s, size_t *n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t len = strlen(s);
    uint32_t *out = xmalloc((len ? len : 1) * sizeof *out); /* <= one per byte */
    *n = 0;
    for (size_t i = 0; i < len;) {
        uint32_t c;
        i += decode_char(u + i, len - i, &c);
        if (!is_py_space(c)) out[(*n)++] = c;
    }
    return out;
}

void chrf_add(ChrfStats *stats, const char *hyp, const char *ref)
{
    size_t nh, nr;
    uint32_t *h = chars_without_space(hyp, &nh), *r = chars_without_space(ref, &nr);
    for (size_t n = 1; n <= CHRF_ORDER; n++) {
        size_t gr = gram_count(nr, n);
        /* sacrebleu counts no hypothesis n-grams of an order the reference
         * is too short to have ("don't count hits if no reference exists").
         * It matters at corpus level, where these sums meet. */
        stats->hyp[n - 1] += gr ? gram_count(nh, n) : 0;
        stats->ref[n - 1] += gr;
        stats->match[n - 1] += ngram_matches(h, nh, r, nr, n);
    }
    free(h);
    free(r);
}

void chrf_merge(ChrfStats *into, const ChrfStats *from)
{
    for (size_t n = 0; n < CHRF_ORDER; n++) {
        into->hyp[n] += from->hyp[n];
        into->ref[n] += from->ref[n];
        into->match[n] += from->match[n];
    }
}

/* sacrebleu CHRF._compute_f_score without eps smoothing: precision and
 * recall are averaged over the orders where both sides have n-grams, then
 * combined as F_beta = (1 + b^2) P R / (b^2 P + R). */
double chrf_score(const ChrfStats *stats)
{
    double precision = 0.0, recall = 0.0;
    size_t effective_order = 0;
    for (size_t n = 0; n < CHRF_ORDER; n++) {
        if (stats->hyp[n] > 0 && stats->ref[n] > 0) {
            precision += (double)stats->match[n] / (double)stats->hyp[n];
            recall += (double)stats->match[n] / (double)stats->ref[n];
            effective_order++;
        }
    }
    if (effective_order == 0) return 0.0;
    precision /= (double)effective_order;
    recall /= (double)effective_order;
    if (precision + recall == 0.0) return 0.0;

    const double beta2 = (double)CHRF_BETA * CHRF_BETA;
    return 100.0 * (1.0 + beta2) * precision * recall / (beta2 * precision + recall);
}
