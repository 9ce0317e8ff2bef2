/* beam.h — beam search: the `beam` most probable partial translations are
 * kept at every step instead of greedy's single one, and the n best
 * finished ones are returned, each with its own attention maps.
 *
 * The hypotheses run as one batch of `beam` target sequences over the same
 * source (or, beam_decode_many, of several sources' beams): the source is encoded once, every step feeds each live
 * hypothesis's last token through the decoder with the key/value cache of
 * decode.h, and when the survivors of a step descend from other
 * hypotheses, their cached keys/values and attention-map rows are copied
 * along, so each returned Translation holds exactly the maps of the tokens
 * it consists of (equal to a teacher-forced pass over them, to float
 * rounding; see
 * tests/test_beam.c).
 *
 * Scores are length-normalised log-probabilities:
 *     score = Σ_t logprob_t / T^length_penalty
 * where T counts the output tokens including the final </s> (the plain
 * T^α of Marian and fairseq, not GNMT's ((5 + T) / 6)^α). */
#ifndef TRANSLATE_BEAM_H
#define TRANSLATE_BEAM_H

#include "decode.h"

typedef struct {
    int beam;             /* hypotheses kept per step, >= 1 (1 is greedy) */
    float length_penalty; /* alpha >= 0 in the score above (0: raw sum) */
    int n_best;           /* translations wanted, 1 <= n_best <= beam */
    const DecodeRules *rules; /* what no hypothesis may choose (decode_ban); NULL: no rule */
    DecodeProgress *progress; /* called after each step (decode.h); NULL: not */
    void *progress_context;
} BeamSettings;

/* The score above of a Translation's tokens (t->logprobs[0..steps-1]). */
float beam_score(const Translation *t, float length_penalty);

/* Beam search over src_ids[S] (1 <= S <= max_len) for at most `limit`
 * (1..max_len) steps.  Fills out[0..n-1] best first and, when `scores` is
 * not NULL, scores[0..n-1] (beam_score of each); returns n, 1 <= n <=
 * n_best.  A hypothesis that reached `limit` without </s> is returned
 * (finished = false) only where fewer than n_best ended, after them.  The caller frees each out[i] with
 * translation_free; logits are not kept (out[i].logits is NULL).  With
 * beam 1 the result is bitwise that of decode_greedy. */
int beam_decode(const Model *model, const int *src_ids, int S, int limit,
                const BeamSettings *settings, Translation *out, float *scores);

/* Beam search over `count` sources packed as in a Batch (src_ids with
 * src_start[count+1]), sentence b for at most limits[b] steps, keeping
 * only each one's best translation (n_best and progress are not read):
 * outputs[b] (room for limits[b] ids) receives its tokens, ending with </s>
 * when finished, lengths[b] their number and, when scores is not NULL,
 * scores[b] its beam_score.  The hypotheses of several sentences decode as
 * one batch, so a step reads the weights once for all of them.  The tokens
 * and scores are beam_decode's, sentence by sentence, wherever a product
 * gives a row the same bits whatever rows are beside it (gemm_f16.h's AVX2
 * and AVX-512 kernels, and the generic one).  `work`:
 * activations kept by the caller between calls (acts_fit; start it zeroed,
 * acts_free it at the end); NULL: allocated for this call. */
void beam_decode_many(Activations *work, const Model *model, const int *src_ids, const int *src_start,
                      int count, const int *limits, const BeamSettings *settings, int **outputs,
                      int *lengths, float *scores);

/* The most beam_decode_many can need of `work` for up to `count` sources,
 * none longer than src_longest tokens, `beam` hypotheses each:
 * activations that hold it (acts_reserve) are never grown by such a call. */
ActsSize beam_decode_many_bound(const Model *model, int beam, int count, int src_longest);

#endif
