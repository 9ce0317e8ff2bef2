/* alignment.c — see alignment.h. */
#include "alignment.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "cli.h"

int alignment_parse(const char *text, AlignmentChoice *out, Error *err)
{
    out->threshold = 0.0f;
    if (!text || strcmp(text, "hard") == 0) {
        out->kind = ALIGNMENT_HARD;
        return 0;
    }
    if (strcmp(text, "soft") == 0) {
        out->kind = ALIGNMENT_SOFT;
        return 0;
    }
    char *end;
    double x = strtod(text, &end);
    if (!cli_plain_decimal(text) || end == text || *end || !(x > 0.0 && x < 1.0))
        return error_set(err, "--alignment: expected hard, soft or a threshold between 0 and 1, got '%s'",
                         text);
    out->kind = ALIGNMENT_THRESHOLD;
    out->threshold = (float)x;
    return 0;
}

/* The mean over heads of the last decoder layer's cross-attention row t:
 * w[0..S-1]. */
static void mean_row(const Translation *t, const ModelArch *a, int row, float *w)
{
    int H = a->heads, S = t->src_len, T = t->steps;
    const float *layer = t->cross_attn + (size_t)(a->decoder_layers - 1) * H * T * S; /* [H, T, S] */
    for (int s = 0; s < S; s++) w[s] = 0.0f;
    for (int h = 0; h < H; h++)
        for (int s = 0; s < S; s++) w[s] += layer[((size_t)h * T + row) * S + s];
    for (int s = 0; s < S; s++) w[s] /= (float)H;
}

/* Pairs (source, target), two ints each, sorted by source then target. */
static int by_pair(const void *pa, const void *pb)
{
    const int *a = pa, *b = pb;
    return a[0] != b[0] ? a[0] - b[0] : a[1] - b[1];
}

char *alignment_format(const Translation *t, const ModelArch *a, AlignmentChoice choice)
{
    int S = t->src_len;
    int T = t->steps - (t->finished ? 1 : 0); /* the tokens of the translation, without </s> */
    float *w = xmalloc((size_t)S * sizeof *w);
    /* Enough for every weight or pair: "0.000," is 6 bytes, "1234-1234 " 10. */
    size_t cap = (size_t)(T > 0 ? T : 1) * (size_t)S * 24 + 1, len = 0;
    char *out = xmalloc(cap);
    int *pairs = xmalloc((size_t)(T > 0 ? T : 1) * (size_t)S * 2 * sizeof *pairs);
    int n = 0;
    out[0] = '\0';
    for (int row = 0; row < T; row++) {
        mean_row(t, a, row, w);
        if (choice.kind == ALIGNMENT_SOFT) {
            for (int s = 0; s < S; s++)
                len += (size_t)snprintf(out + len, cap - len, "%s%.3f", s ? "," : row ? " " : "", w[s]);
            continue;
        }
        int best = 0; /* the first of equal weights, as Marian's argmax */
        for (int s = 1; s < S; s++)
            if (w[s] > w[best]) best = s;
        for (int s = 0; s < S; s++)
            if (choice.kind == ALIGNMENT_HARD ? s == best : w[s] > choice.threshold) {
                pairs[2 * n] = s;
                pairs[2 * n + 1] = row;
                n++;
            }
    }
    qsort(pairs, (size_t)n, 2 * sizeof *pairs, by_pair);
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%d-%d", i ? " " : "", pairs[2 * i], pairs[2 * i + 1]);
    free(pairs);
    free(w);
    return out;
}
