/* bpe.h — learning subword pieces by byte-pair encoding (Sennrich et al.
 * 2016, "Neural Machine Translation of Rare Words with Subword Units"),
 * with WordPiece's spelling of the pieces.
 *
 * Input: every distinct token of the training text with its (weighted)
 * count.  A word (tokenizer_is_word) starts as its characters — the first
 * as itself, the others with the continuation mark "##" ("hai" → h ##a
 * ##i) — and the most frequent adjacent pair is merged, again and again,
 * never across words.  Other tokens (a Han/kana character, a punctuation
 * mark) are atomic: one piece, never merged.  A digit is never merged with
 * anything, so numbers stay digit by digit.
 *
 * Output: the pieces, most useful first: the atomic tokens and single
 * characters by count (ties by bytes), then each merge's result in the
 * order learned, until `budget` pieces.  Only tokenizer/vocab_builder.c calls it. */
#ifndef TRANSLATE_BPE_H
#define TRANSLATE_BPE_H

#include <stddef.h>

typedef struct {
    const char *token; /* case-folded, as the tokenizer made it */
    double count;
} BpeToken;

typedef struct {
    size_t count;
    char **piece;      /* [count] "shang", "##hai", "中", "." */
    double *freq;      /* [count] its count when it was added */
} BpePieces;

/* Learn at most `budget` pieces from tokens[0..n); a piece (or a pair to
 * merge) seen fewer than `min_count` times is left out.  Same input, same
 * output.  Free with bpe_pieces_free. */
void bpe_learn(const BpeToken *tokens, size_t n, size_t budget, double min_count, BpePieces *out);
void bpe_pieces_free(BpePieces *p); /* NULL-safe, leaves it zeroed */

/* The longest piece, in bytes without "##", that bpe_learn makes; longer
 * merges are not learned (a vocabulary line stays short, and the encoder's
 * longest-match search is bounded by it). */
#define BPE_MAX_PIECE_BYTES 64

#endif
