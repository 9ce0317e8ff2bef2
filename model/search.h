/* search.h — how to decode, and the one call that does it: greedy decoding
 * (decode.h) when the beam is 1, beam search (beam.h) otherwise.
 *
 * SearchSettings is the config's `decoding:` section (app/config.h embeds
 * it); translate's --beam overrides it once, when the config is opened, and
 * everything that decodes reads the result from here: translating a line
 * (search_translate) and a file's or a data set's lines together
 * (search_translate_batches). */
#ifndef TRANSLATE_SEARCH_H
#define TRANSLATE_SEARCH_H

#include <stdbool.h>

#include "decode.h"

typedef struct {
    int beam;               /* beam width; 1 = greedy */
    float length_penalty;   /* beam scores are divided by length^alpha */
    float max_output_ratio; /* output limit = ratio * source tokens + extra, */
    int max_output_extra;   /*   capped at arch.max_len */
    int no_repeat_ngram;    /* n >= 1: never complete an n-gram twice (decode_ban_repeats); 0: off.
                             * Not a config key: translate's --no-repeat-ngram sets it. */
    bool copy_numbers;      /* the output's numbers are the source's (number_rule.h) */
    const NumberRule *numbers; /* the digit tokens copy_numbers needs, from the vocabularies:
                             * not a config key, app/translator.c sets it; NULL: no copying */
} SearchSettings;

/* The output length limit for a source of S tokens (decode_limit). */
int search_limit(const ModelArch *arch, const SearchSettings *set, int S);

/* Translate src_ids[S] (1 <= S <= max_len; src_spaced[S], may be NULL:
 * which came after white space, encode.h): greedy with `dec` when
 * set->beam is 1 (keeping the logits if asked), else beam search; either
 * calls dec->progress after each step.  Fills
 * out[0..n-1] best first (free each with translation_free) and scores[0..n-1]
 * (beam_score of each); returns n, 1 <= n <= min(n_best, beam). */
int search_translate(Decoder *dec, const int *src_ids, const bool *src_spaced, int S, const SearchSettings *set,
                     int n_best, bool keep_logits, Translation *out, float *scores);

/* Translate `count` sources packed as in a Batch (src_ids with
 * src_start[count+1]; src_spaced, may be NULL, packed the same), keeping
 * only the best translation's tokens:
 * outputs[b] receives up to search_limit ids, lengths[b] their number.
 * Greedy decodes them all at once (decode_greedy_many), beam search all
 * their hypotheses together (beam_decode_many). */
void search_translate_many(const Model *model, const int *src_ids, const bool *src_spaced, const int *src_start,
                           int count, const SearchSettings *set, int **outputs, int *lengths);

/* Activations for search_translate_batches, one set per thread, kept by
 * the caller from one call to the next (fresh ones cost page faults).
 * The first call gives each room for the largest mini-batch there can be
 * (address space, mapped only where used), so it is not reallocated
 * after; but not where that room is more than search.c's
 * RESERVE_MAX_BYTES, where address space is limited (32-bit, ulimit -v,
 * strict overcommit), or when it cannot be had: then a set grows when a
 * mini-batch needs more.  Start zeroed; free with
 * search_workspace_free. */
typedef struct {
    Activations *acts; /* [count] */
    int count;
    bool reserve_tried; /* room for the largest mini-batch was asked for (search.c) */
} SearchWorkspace;
void search_workspace_free(SearchWorkspace *ws); /* NULL-safe, leaves it zeroed */

/* Translate n sources (src[i]: src_len[i] ids, 1 <= src_len[i] <= max_len;
 * spaced[i] their src_spaced; spaced, or an entry of it, NULL when not
 * known) as search_translate_many does, a file's worth at a time: sorted by
 * length (longest first), cut into mini-batches of `mini_batch`, and the
 * mini-batches shared out between the threads (parallel_set_threads), each
 * taking the next one not yet taken and decoding it alone in its own
 * activations.  outputs[i] (room for search_limit ids), lengths[i] and
 * finite[i] (may be NULL; false where search_translate's log-probabilities
 * of source i would not all be finite) are source i's, in input order.
 *
 * The bits do not depend on the thread count nor on which thread takes a
 * mini-batch: the mini-batches are the same, and a mini-batch's products
 * give the same bits on one thread as split between several (parallel.h). */
void search_translate_batches(SearchWorkspace *ws, const Model *model, const int *const *src,
                              const bool *const *spaced, const int *src_len, int n, int mini_batch,
                              const SearchSettings *set, int **outputs, int *lengths, bool *finite);

#endif
