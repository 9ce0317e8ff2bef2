/* decode.h — turning a source sentence into output tokens.
 *
 * Greedy decoding with a key/value cache: the source is encoded once (and
 * projected once to every decoder layer's cross-attention keys and values);
 * then each step feeds one token through the decoder, whose self-attention
 * keys and values of earlier steps are kept, not recomputed.  Every head's
 * attention map is collected on the way, as full matrices (the rows of all
 * steps stacked), so they equal a teacher-forced pass over the output, to
 * float rounding (tests/test_model.c checks that).
 *
 * The result is a Translation (translation.h).  Dimension letters: S source
 * tokens, T output tokens (steps), L layers, H heads, V target vocabulary,
 * K alternatives kept per step. */
#ifndef TRANSLATE_DECODE_H
#define TRANSLATE_DECODE_H

#include <stdbool.h>

#include "number_rule.h"
#include "transformer.h"
#include "translation.h"

/* Called after each decoding step, `step` (1-based) of at most `limit`,
 * by greedy decoding and beam search: a long translation can show how far
 * it is (the web page's worker, web/wasm_main.c).  It must not touch the
 * decoder. */
typedef void DecodeProgress(void *context, int step, int limit);

/* Everything greedy decoding needs between sentences (activations sized
 * for max_len), so a batch of lines reuses one allocation. */
typedef struct {
    const Model *model;
    Activations acts;
    DecodeProgress *progress;   /* NULL (decode_init's default): no calls */
    void *progress_context;
} Decoder;

void decode_init(Decoder *dec, const Model *model);
void decode_free(Decoder *dec); /* NULL-safe */

/* Output length limit for a source of S tokens: ratio·S + extra, at most
 * max_len. */
int decode_limit(const ModelArch *arch, int S, float ratio, int extra);

/* Rules on which tokens a step may choose, which greedy decoding and
 * every beam hypothesis apply alike (decode_ban).  Only the choice is
 * restricted: the log-probabilities recorded stay the model's (as in
 * Hugging Face's beam search, which applies its rules after the
 * log-softmax), and so do the scores, but for the one token a rule
 * raises rather than bans, the number rule's 负 (number_rule.h), which
 * beam search ranks with the logit it was given (beam.c; greedy's score,
 * beam_score, counts the model's).  A NULL DecodeRules is no rule. */
typedef struct {
    int no_repeat_ngram;       /* n >= 1: never complete an n-gram twice (decode_ban_repeats); 0: off */
    const NumberRule *numbers; /* not NULL: write the source's numbers, no others (number_rule.h) */
    const bool *src_spaced;    /* which source tokens came after white space (encode.h's spaced),
                                * packed as the call's src_ids; NULL: not known (number_rule.h) */
} DecodeRules;

/* Can `rules` ban anything?  And for source src[0..S-1]? */
bool decode_rules_on(const DecodeRules *rules);
bool decode_rules_apply(const DecodeRules *rules, const int *src, int S);

/* The src_spaced marks of the call's source that starts at token `first`
 * of its src_ids: what a decoder passes to decode_ban with that source
 * (NULL when not known). */
const bool *decode_rules_spaced(const DecodeRules *rules, int first);

/* logits[token] = -inf for every token `rules` bans after history[0..len-1]
 * (the output so far, <s> not included) for source src[0..S-1], spaced as
 * spaced[0..S-1] says (decode_rules_spaced; may be NULL); the number
 * rule's 负 may be raised (number_rule_ban). */
void decode_ban(const DecodeRules *rules, const int *src, const bool *spaced, int S, const int *history, int len,
                float *logits);

/* Greedy decoding of src_ids[S] (1 <= S <= max_len) for at most `limit`
 * steps under `rules` (NULL: none).  Fills *out (free with
 * translation_free); keeps logits if asked. */
void decode_greedy(Decoder *dec, const int *src_ids, int S, int limit, const DecodeRules *rules,
                   bool keep_logits, Translation *out);

/* A teacher-forced full pass: the decoder reads input_ids[T] all at once
 * (masked self-attention), as in training.  Fills the maps, logits and the
 * log-probabilities of output_ids[T]. */
void decode_teacher_forced(const Model *model, const int *src_ids, int S,
                           const int *input_ids, const int *output_ids, int T,
                           Translation *out);

/* The no-repeat-n-gram rule (Hugging Face's and CTranslate2's
 * no_repeat_ngram_size), part of decode_ban: every token that would
 * complete an n-gram (n >= 1) already present in history[0..len-1] gets
 * logits[token] = -inf.  n 0 changes nothing.  </s> is never in a history
 * (decoding stops there), so it always stays allowed. */
void decode_ban_repeats(const int *history, int len, int n, float *logits);

/* Pieces shared with beam search (beam.c). */
/* log Σ exp(logits[0..V-1]), so that logprob(i) = logits[i] - that. */
float decode_log_sum_exp(const float *logits, int V);
/* The K largest logits' ids (ties: lower id first), best first; -1 past V. */
void decode_top_k(const float *logits, int V, int K, int *ids);
/* One step's TRANSLATION_TOP_K most probable tokens: ids[K] and their
 * log-probabilities logprobs[K] (-inf past V); lse from decode_log_sum_exp. */
void decode_top_logprobs(const float *logits, int V, float lse, int *ids, float *logprobs);
/* The decoder self- and cross-attention maps of sequence b of `batch`
 * (rows 0..out->steps-1 of each [H, cap, ...] block) into out's dense
 * [L_dec, H, T, T] and [L_dec, H, T, S]. */
void decode_copy_target_maps(Translation *out, const Activations *acts, const Batch *batch, int b,
                             const ModelArch *arch);

/* Greedy decoding of `count` sentences at once, packed as in a Batch
 * (src_ids with src_start[count+1]), each with its own step limit: the
 * matrix products then work on `count` rows per step instead of one, which
 * is what makes scoring a whole dev set quick (rules as in
 * decode_greedy).  Only the tokens are kept:
 * outputs[b] receives up to limits[b] ids (ending with </s> if reached),
 * lengths[b] their number.  Same tokens as decode_greedy, sentence by
 * sentence. */
void decode_greedy_many(const Model *model, const int *src_ids, const int *src_start, int count,
                        const int *limits, const DecodeRules *rules, int **outputs, int *lengths);

/* The same in `work`, activations kept by the caller between calls (start
 * it zeroed; acts_free it at the end): grown when a call needs more, else
 * reused as it is.  Mini-batch after mini-batch, fresh activations were
 * fresh pages each time, zeroed by the kernel on first touch and unmapped
 * after (perf: a tenth of translating a file).  NULL: allocated for this
 * call.  finite (may be NULL) tells, finite[b], whether every step of
 * sentence b had logits whose log-softmax is finite at the chosen token:
 * no NaN, no +Inf, the chosen one not -Inf.  That is what makes
 * decode_greedy's log-probabilities finite, so a caller can refuse what it
 * would refuse. */
void decode_greedy_many_in(Activations *work, const Model *model, const int *src_ids,
                           const int *src_start, int count, const int *limits, const DecodeRules *rules,
                           int **outputs, int *lengths, bool *finite);

/* The most decode_greedy_many_in can need of `work` for up to `count`
 * sources, none longer than src_longest tokens: activations that hold it
 * (acts_reserve) are never grown by such a call. */
ActsSize decode_greedy_many_bound(const ModelArch *arch, int count, int src_longest);

#endif
