/* search.c — greedy or beam search, picked in one place (see search.h). */
#include "search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "beam.h"

int search_limit(const ModelArch *arch, const SearchSettings *set, int S)
{
    return decode_limit(arch, S, set->max_output_ratio, set->max_output_extra);
}

int search_translate(Decoder *dec, const int *src_ids, int S, const SearchSettings *set, int n_best,
                     bool keep_logits, Translation *out, float *scores)
{
    int limit = search_limit(&dec->model->arch, set, S);
    if (set->beam == 1) {
        decode_greedy(dec, src_ids, S, limit, set->no_repeat_ngram, keep_logits, &out[0]);
        scores[0] = beam_score(&out[0], set->length_penalty);
        return 1;
    }
    BeamSettings beam = {set->beam, set->length_penalty, n_best > set->beam ? set->beam : n_best,
                         set->no_repeat_ngram, dec->progress, dec->progress_context};
    return beam_decode(dec->model, src_ids, S, limit, &beam, out, scores);
}

void search_translate_many(const Model *model, const int *src_ids, const int *src_start, int count,
                           const SearchSettings *set, int **outputs, int *lengths)
{
    search_translate_many_checked(model, src_ids, src_start, count, set, outputs, lengths, NULL);
}

void search_translate_many_checked(const Model *model, const int *src_ids, const int *src_start,
                                   int count, const SearchSettings *set, int **outputs, int *lengths,
                                   bool *finite)
{
    search_translate_many_in(NULL, model, src_ids, src_start, count, set, outputs, lengths, finite);
}

void search_translate_many_in(Activations *work, const Model *model, const int *src_ids,
                              const int *src_start, int count, const SearchSettings *set, int **outputs,
                              int *lengths, bool *finite)
{
    if (count < 1) return;
    int *limits = xmalloc((size_t)count * sizeof(int));
    for (int b = 0; b < count; b++)
        limits[b] = search_limit(&model->arch, set, src_start[b + 1] - src_start[b]);
    if (set->beam <= 1) {
        decode_greedy_many_in(work, model, src_ids, src_start, count, limits, set->no_repeat_ngram, outputs,
                              lengths, finite);
    } else {
        /* All sentences' hypotheses together (beam_decode_many).  A score is
         * finite exactly when every log-probability of its tokens is: they
         * are <= 0 or NaN, and a sum of at most max_len finite ones is
         * finite, so this is what search_translate's callers check. */
        BeamSettings beam = {set->beam, set->length_penalty, 1, set->no_repeat_ngram, NULL, NULL};
        float *scores = xmalloc((size_t)count * sizeof(float));
        beam_decode_many(work, model, src_ids, src_start, count, limits, &beam, outputs, lengths, scores);
        for (int b = 0; finite && b < count; b++) finite[b] = isfinite(scores[b]);
        free(scores);
    }
    free(limits);
}
