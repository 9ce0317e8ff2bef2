/* alignment.h — `translate --alignment`: which source token each output
 * token came from, read off cross-attention and printed as Marian prints
 * its word alignments.
 *
 * The weights are the mean of the last decoder layer's cross-attention
 * heads, row t (the step that produced output token t).  Marian reads one
 * head trained for it (guided alignment); our models have none, and the
 * mean of the last layer's heads is the map that lines words up best in
 * the shipped models (README's viewer figure).  Indices are 0-based
 * positions of the model's tokens, the source and output tokens
 * --attention lists: with a subword vocabulary (the shipped models) a word
 * can be several of them ("unbelievably" is unb ##el ##iev ##ably, a rare
 * character three byte tokens; --attention's word_of maps them to words),
 * and they are not the whitespace-separated words of the printed
 * translation; the final </s> has no index (it is not part of the
 * translation). */
#ifndef TRANSLATE_ALIGNMENT_H
#define TRANSLATE_ALIGNMENT_H

#include "../common/error.h"
#include "../model/translation.h"

typedef enum { ALIGNMENT_NONE, ALIGNMENT_HARD, ALIGNMENT_SOFT, ALIGNMENT_THRESHOLD } AlignmentKind;

typedef struct {
    AlignmentKind kind;
    float threshold; /* ALIGNMENT_THRESHOLD: pairs whose weight is above it, 0 < threshold < 1 */
} AlignmentChoice;

/* "hard" (or NULL: the option without a value), "soft", or a threshold
 * strictly between 0 and 1, as Marian's --alignment takes.  Returns 0, or
 * -1 with a message in err. */
int alignment_parse(const char *text, AlignmentChoice *out, Error *err);

/* The alignment of `t` (model `arch`), malloc'd:
 *   hard       "S-T S-T ...": for each output token T its most attended
 *              source token S, pairs sorted by S then T (Marian's order);
 *   threshold  the same, with every pair whose weight is above it;
 *   soft       one group per output token, space-separated, each the
 *              comma-separated weights of source tokens 0..S-1 ("0.912,0.050,...",
 *              3 decimals; a group sums to 1 up to rounding).
 * Empty when the translation has no tokens. */
char *alignment_format(const Translation *t, const ModelArch *arch, AlignmentChoice choice);

#endif
