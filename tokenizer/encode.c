/* encode.c — text to model ids (see encode.h). */
#include "encode.h"

#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

int encode_text(const Vocab *vocab, const char *text, size_t len, Encoding *out, Error *err)
{
    memset(out, 0, sizeof *out);
    if (tokenize(text, len, &out->tokens, err)) return -1;
    const TokenList *t = &out->tokens;
    /* never more pieces than bytes, and at least one per token */
    size_t cap = 0, longest = 1;
    for (size_t i = 0; i < t->count; i++) {
        size_t n = strlen(t->folded[i]);
        cap += n;
        if (n > longest) longest = n;
    }
    out->ids = xmalloc((cap ? cap : 1) * sizeof *out->ids);
    out->token = xmalloc((cap ? cap : 1) * sizeof *out->token);
    out->offset = xmalloc((cap ? cap : 1) * sizeof *out->offset);
    out->spaced = xmalloc((cap ? cap : 1) * sizeof *out->spaced);
    size_t *ends = xmalloc(longest * sizeof *ends);
    for (size_t i = 0; i < t->count; i++) {
        size_t k = vocab_encode_token(vocab, t->folded[i], out->ids + out->count, ends);
        /* A piece's offset in the input: where its bytes start, when the
         * input holds the token as it was folded from, byte for byte, and
         * folding kept its length (ASCII, most text); otherwise, when NFKC
         * or folding changed it, its token's. */
        size_t n = strlen(t->surface[i]);
        int exact = strlen(t->folded[i]) == n && t->offset[i] + n <= len &&
                    memcmp(text + t->offset[i], t->surface[i], n) == 0;
        for (size_t j = 0; j < k; j++) {
            size_t at = out->count + j;
            out->token[at] = i;
            out->offset[at] = t->offset[i] + (exact && j ? ends[j - 1] : 0);
            out->spaced[at] = j == 0 && t->spaced[i]; /* a word's later pieces run on from the first */
            out->unknown += out->ids[at] == VOCAB_UNK;
        }
        out->count += k;
    }
    free(ends);
    return 0;
}

void encoding_free(Encoding *e)
{
    if (!e) return;
    free(e->ids);
    free(e->token);
    free(e->offset);
    free(e->spaced);
    token_list_free(&e->tokens);
    memset(e, 0, sizeof *e);
}
