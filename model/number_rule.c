/* number_rule.c — see number_rule.h. */
#include "number_rule.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

enum { MAX_DIGITS = 15 };

/* One vocabulary's digit tokens. */
typedef struct {
    int V;
    char (*digits)[MAX_DIGITS + 1]; /* [V] "" for a token that is not digits */
    bool *continues;                /* [V] */
    int *ids, count;                /* the digit tokens, in id order */
} Side;

struct NumberRule {
    Side source, target;
};

static void side_init(Side *s, int V)
{
    s->V = V;
    s->digits = xcalloc((size_t)V, sizeof *s->digits);
    s->continues = xcalloc((size_t)V, sizeof *s->continues);
    s->ids = xmalloc((size_t)V * sizeof *s->ids);
    s->count = 0;
}

static void side_free(Side *s)
{
    free(s->digits);
    free(s->continues);
    free(s->ids);
}

NumberRule *number_rule_new(int src_vocab, int tgt_vocab)
{
    NumberRule *r = xmalloc(sizeof *r);
    side_init(&r->source, src_vocab);
    side_init(&r->target, tgt_vocab);
    return r;
}

void number_rule_free(NumberRule *rule)
{
    if (!rule) return;
    side_free(&rule->source);
    side_free(&rule->target);
    free(rule);
}

bool number_rule_is_digits(const char *text)
{
    size_t n = strlen(text);
    if (n < 1 || n > MAX_DIGITS) return false;
    for (size_t i = 0; i < n; i++)
        if (text[i] < '0' || text[i] > '9') return false;
    return true;
}

static void side_set(Side *s, int id, const char *digits, bool continues)
{
    ASSERT(id >= 0 && id < s->V && number_rule_is_digits(digits));
    if (!s->digits[id][0]) s->ids[s->count++] = id;
    strcpy(s->digits[id], digits);
    s->continues[id] = continues;
}

void number_rule_set_source(NumberRule *rule, int id, const char *digits, bool continues)
{
    side_set(&rule->source, id, digits, continues);
}

void number_rule_set_target(NumberRule *rule, int id, const char *digits, bool continues)
{
    side_set(&rule->target, id, digits, continues);
}

/* The numbers of ids[0..n-1]: number k is text + start[k], len[k] digits
 * (text has room for n · MAX_DIGITS).  Returns their count; *open tells
 * whether the last token is a digit token (the last number may go on). */
static int numbers_of(const Side *s, const int *ids, int n, char *text, int *start, int *len, bool *open)
{
    int count = 0, at = 0;
    bool in_number = false;
    for (int i = 0; i < n; i++) {
        int id = ids[i];
        const char *d = id >= 0 && id < s->V ? s->digits[id] : "";
        if (!d[0]) {
            in_number = false;
            continue;
        }
        if (!in_number || !s->continues[id]) { /* a new number */
            start[count] = at;
            len[count++] = 0;
        }
        size_t m = strlen(d);
        memcpy(text + at, d, m);
        at += (int)m;
        len[count - 1] += (int)m;
        in_number = true;
    }
    *open = in_number;
    return count;
}

/* The source's numbers, and which of them the output has used. */
typedef struct {
    const char *text;
    const int *start, *len;
    int count;
    bool *used;
} Pool;

/* The first unused number equal to p[0..n-1], or -1. */
static int unused_equal(const Pool *pool, const char *p, int n)
{
    for (int k = 0; k < pool->count; k++)
        if (!pool->used[k] && pool->len[k] == n && memcmp(pool->text + pool->start[k], p, (size_t)n) == 0)
            return k;
    return -1;
}

/* Is p[0..n-1] the beginning of an unused number other than `except`? */
static bool unused_prefix(const Pool *pool, const char *p, int n, int except)
{
    for (int k = 0; k < pool->count; k++)
        if (k != except && !pool->used[k] && pool->len[k] >= n &&
            memcmp(pool->text + pool->start[k], p, (size_t)n) == 0)
            return true;
    return false;
}

bool number_rule_applies(const NumberRule *rule, const int *src, int S)
{
    for (int i = 0; i < S; i++)
        if (src[i] >= 0 && src[i] < rule->source.V && rule->source.digits[src[i]][0]) return true;
    return false;
}

void number_rule_ban(const NumberRule *rule, const int *src, int S, const int *history, int len,
                     float *logits)
{
    const Side *tgt = &rule->target;
    if (S < 1 || tgt->count == 0) return;
    /* Everything is worked out again from the source and the output at
     * every step, for every hypothesis: no state to carry, reorder or get
     * wrong between greedy, beam and batched decoding, for a few hundred
     * bytes of parsing next to a decoder step's millions of products.
     * Room for every token's digits on either side, plus one token more. */
    int most = (S > len ? S : len) + 1;
    char *src_text = xmalloc((size_t)most * MAX_DIGITS), *out_text = xmalloc((size_t)most * MAX_DIGITS);
    int *offsets = xmalloc((size_t)most * 4 * sizeof *offsets);
    int *src_start = offsets, *src_len = offsets + most, *out_start = offsets + 2 * most,
        *out_len = offsets + 3 * most;
    bool *used = xcalloc((size_t)most, sizeof *used);
    bool open; /* the output ends inside a number, which may go on */
    int src_count = numbers_of(&rule->source, src, S, src_text, src_start, src_len, &open);
    Pool pool = {src_text, src_start, src_len, src_count, used};
    if (src_count == 0) goto done; /* nothing to copy: the rule is off */
    int out_count = numbers_of(tgt, history, len, out_text, out_start, out_len, &open);
    /* The finished numbers use up theirs; the open one (if any) is p. */
    int finished = open ? out_count - 1 : out_count;
    for (int i = 0; i < finished; i++) {
        int k = unused_equal(&pool, out_text + out_start[i], out_len[i]);
        if (k >= 0) used[k] = true;
    }
    char *p = open ? out_text + out_start[out_count - 1] : out_text;
    int n = open ? out_len[out_count - 1] : 0;
    int complete = open ? unused_equal(&pool, p, n) : -1; /* the number p would end as */
    bool may_end = !open || complete >= 0;
    /* Digit tokens: continue p, or (where p may end) begin a new number. */
    int allowed = 0;
    for (int j = 0; j < tgt->count; j++) {
        int id = tgt->ids[j];
        const char *d = tgt->digits[id];
        int m = (int)strlen(d);
        bool ok;
        if (open && tgt->continues[id]) {
            memcpy(p + n, d, (size_t)m); /* room: the token after the last */
            ok = unused_prefix(&pool, p, n + m, -1);
        } else
            ok = may_end && unused_prefix(&pool, d, m, complete);
        if (!ok) logits[id] = -INFINITY;
        else if (logits[id] > -INFINITY) allowed++; /* not banned by a rule before this one either */
    }
    /* Every other token ends p: only as a whole source number, unless no
     * digit token can go on, here or by an earlier rule (number_rule.h). */
    if (!may_end && allowed > 0)
        for (int id = 0; id < tgt->V; id++)
            if (!tgt->digits[id][0]) logits[id] = -INFINITY;
done:
    free(used);
    free(offsets);
    free(out_text);
    free(src_text);
}
