/* beam_impl.h — what model/beam.c (one sentence's beam, with its maps)
 * shares with model/beam_many.c (several sentences' beams in one batch)
 * and nothing else includes: the rules one step applies to one sentence —
 * scoring, ranking the proposals, the stopping test — and the move of a
 * hypothesis's rows into its new slot.  Both searches use these, so they
 * agree bit for bit (tests/test_beam_many.c).  The public contract is
 * beam.h. */
#ifndef TRANSLATE_BEAM_IMPL_H
#define TRANSLATE_BEAM_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "beam.h"

/* One proposed extension of a live hypothesis. */
typedef struct {
    int parent;    /* slot of the hypothesis it extends */
    int token;
    float logprob; /* of token */
    float raw;     /* the parent's raw score + logprob (a minus sign the number
                      rule raised: that of the token it stands for, beam.c) */
} Candidate;

/* What ranking needs besides the hypotheses: the rules and scratch space. */
typedef struct {
    int beam, width;  /* hypotheses kept; tokens proposed per hypothesis (<= V) */
    int V;
    const DecodeRules *rules; /* BeamSettings' (decode_ban); NULL: none */
    Candidate *cand;  /* [beam] the best proposals of a step, best first */
    int *ids;         /* [width] top_k's output */
    float *lse;       /* [beam] each hypothesis's log Σ exp(logits) of this step */
    float *banned;    /* [V] a row of logits under the rules, or NULL without them */
} Ranker;

/* A raw score (Σ logprob) of T tokens, length-normalised (beam.h). */
float beam_normalise(float raw, int T, float alpha);

void beam_ranker_init(Ranker *r, const BeamSettings *set, int V);
void beam_ranker_free(Ranker *r);

/* After step t, for `live` hypotheses of one sentence (source src[0..S-1],
 * spaced as decode_ban's),
 * with logits[live, V] (this step's rows), raw[live] scores and
 * histories[live, cap] (tokens 0..t-1 of each): log-softmax each row (into
 * r->lse), let each propose its `width` best tokens the rules allow, and
 * rank all proposals.  Returns how many are kept, the first of r->cand;
 * their parents are indices 0..live-1. */
int beam_rank_candidates(Ranker *r, const float *logits, int live, const float *raw,
                         const int *histories, int cap, int t, const int *src, const bool *spaced, int S);

/* Can none of `live` hypotheses with raw[live] scores after step t, at most
 * `limit` steps, still score above `bar`?  (The caller checks
 * t + 2 <= limit.) */
bool beam_none_can_beat(const float *raw, int live, int t, int limit, float alpha, float bar);

/* One per-slot array: slot b's data starts at base + b·stride (bytes) and
 * the part to move is `runs` runs of `len` bytes, `gap` apart (one run per
 * head for the attention maps, whose rows t+1.. are not written yet). */
typedef struct {
    void *base;
    size_t stride, gap, len;
    int runs;
} SlotSpan;

static inline SlotSpan beam_span(void *base, size_t stride, size_t gap, size_t len, int runs)
{
    return (SlotSpan){base, stride, gap, len, runs};
}

/* Slot j (< n) receives slot parent[j]'s data; `scratch` holds n slots'
 * part of s. */
void beam_reorder(SlotSpan s, const int *parent, int n, char *scratch);

#endif
