/* search.c — greedy or beam search, picked in one place (see search.h). */
#include "search.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../common/util.h"
#include "beam.h"
#include "parallel.h"

int search_limit(const ModelArch *arch, const SearchSettings *set, int S)
{
    return decode_limit(arch, S, set->max_output_ratio, set->max_output_extra);
}

/* The rules of decoding that `set` asks for (decode.h), for sources
 * spaced as src_spaced says. */
static DecodeRules rules_of(const SearchSettings *set, const bool *src_spaced)
{
    return (DecodeRules){set->no_repeat_ngram, set->copy_numbers ? set->numbers : NULL, src_spaced};
}

int search_translate(Decoder *dec, const int *src_ids, const bool *src_spaced, int S, const SearchSettings *set,
                     int n_best, bool keep_logits, Translation *out, float *scores)
{
    int limit = search_limit(&dec->model->arch, set, S);
    DecodeRules rules = rules_of(set, src_spaced);
    if (set->beam == 1) {
        decode_greedy(dec, src_ids, S, limit, &rules, keep_logits, &out[0]);
        scores[0] = beam_score(&out[0], set->length_penalty);
        return 1;
    }
    BeamSettings beam = {set->beam, set->length_penalty, n_best > set->beam ? set->beam : n_best,
                         &rules, dec->progress, dec->progress_context};
    return beam_decode(dec->model, src_ids, S, limit, &beam, out, scores);
}

/* search_translate_many in `work` (activations kept by the caller between
 * calls: acts_fit; NULL, allocated for the call), with finite[b] (may be
 * NULL) false where sentence b's log-probabilities are not all finite. */
static void translate_many_in(Activations *work, const Model *model, const int *src_ids, const bool *src_spaced,
                              const int *src_start, int count, const SearchSettings *set, int **outputs,
                              int *lengths, bool *finite)
{
    if (count < 1) return;
    int *limits = xmalloc((size_t)count * sizeof(int));
    for (int b = 0; b < count; b++)
        limits[b] = search_limit(&model->arch, set, src_start[b + 1] - src_start[b]);
    DecodeRules rules = rules_of(set, src_spaced);
    if (set->beam <= 1) {
        decode_greedy_many_in(work, model, src_ids, src_start, count, limits, &rules, outputs,
                              lengths, finite);
    } else {
        /* All sentences' hypotheses together (beam_decode_many).  A score is
         * finite exactly when every log-probability of its tokens is: they
         * are <= 0 or NaN, and a sum of at most max_len finite ones is
         * finite, so this is what search_translate's callers check. */
        BeamSettings beam = {set->beam, set->length_penalty, 1, &rules, NULL, NULL};
        float *scores = xmalloc((size_t)count * sizeof(float));
        beam_decode_many(work, model, src_ids, src_start, count, limits, &beam, outputs, lengths, scores);
        for (int b = 0; finite && b < count; b++) finite[b] = isfinite(scores[b]);
        free(scores);
    }
    free(limits);
}

void search_translate_many(const Model *model, const int *src_ids, const bool *src_spaced, const int *src_start,
                           int count, const SearchSettings *set, int **outputs, int *lengths)
{
    translate_many_in(NULL, model, src_ids, src_spaced, src_start, count, set, outputs, lengths, NULL);
}

void search_workspace_free(SearchWorkspace *ws)
{
    if (!ws) return;
    for (int t = 0; t < ws->count; t++) acts_free(&ws->acts[t]);
    free(ws->acts);
    memset(ws, 0, sizeof *ws);
}

/* A source's length and place, sorted longest first (ties in input order). */
typedef struct {
    int length, index;
} ByLength;

static int longer_first(const void *a, const void *b)
{
    const ByLength *x = a, *y = b;
    return x->length != y->length ? y->length - x->length : x->index - y->index;
}

/* search_translate_batches' arguments, shared by its threads. */
typedef struct {
    SearchWorkspace *ws;
    const Model *model;
    const SearchSettings *set;
    const int *const *src;
    const bool *const *spaced; /* NULL: not known */
    const ByLength *order; /* [n]: the sources, longest first */
    int n, mini_batch;
    int **outputs, *lengths;
    bool *finite;
    atomic_int next_batch; /* the first mini-batch no thread has taken */
} BatchJob;

/* Thread t's part: take mini-batches until none is left.  Which thread
 * takes which changes from run to run; what each gives does not. */
static void decode_batches(void *ctx, int t0, int t1)
{
    BatchJob *job = ctx;
    const ModelArch *a = &job->model->arch;
    int mb = job->mini_batch;
    int *ids = xmalloc((size_t)mb * a->max_len * sizeof *ids);
    bool *spaced = job->spaced ? xmalloc((size_t)mb * a->max_len * sizeof *spaced) : NULL;
    int *start = xmalloc(((size_t)mb + 1) * sizeof *start);
    int **outputs = xmalloc((size_t)mb * sizeof *outputs);
    int *lengths = xmalloc((size_t)mb * sizeof *lengths);
    bool *finite = xmalloc((size_t)mb * sizeof *finite);
    for (int t = t0; t < t1; t++) {
        int first;
        while ((first = atomic_fetch_add(&job->next_batch, 1) * mb) < job->n) {
            int count = job->n - first < mb ? job->n - first : mb;
            start[0] = 0;
            for (int b = 0; b < count; b++) {
                const ByLength *s = &job->order[first + b];
                memcpy(ids + start[b], job->src[s->index], (size_t)s->length * sizeof *ids);
                if (spaced && job->spaced[s->index]) /* a NULL entry: not known, read as no spaces */
                    memcpy(spaced + start[b], job->spaced[s->index], (size_t)s->length * sizeof *spaced);
                else if (spaced)
                    memset(spaced + start[b], 0, (size_t)s->length * sizeof *spaced);
                start[b + 1] = start[b] + s->length;
                outputs[b] = job->outputs[s->index];
            }
            translate_many_in(&job->ws->acts[t], job->model, ids, spaced, start, count, job->set, outputs,
                              lengths, finite);
            for (int b = 0; b < count; b++) {
                int i = job->order[first + b].index;
                job->lengths[i] = lengths[b];
                if (job->finite) job->finite[i] = finite[b];
            }
        }
    }
    free(finite);
    free(lengths);
    free(outputs);
    free(start);
    free(spaced);
    free(ids);
}

/* Activations reserved for the largest mini-batch there can be, as long as
 * the threads' together are at most this many bytes (en-zh, mini-batches
 * of 32: greedy 187 MiB a thread, beam 4 103 MiB; greedy mini-batches of
 * 1,024, --mini-batch's limit, would take 6.3 GB a thread). */
#define RESERVE_MAX_BYTES ((size_t)1 << 30)

/* Is address space cheap here: 64-bit addresses, no limit on them
 * (ulimit -v) and no strict overcommit (vm.overcommit_memory = 2, where
 * every private mapping is charged in full)?  Then room reserved and never
 * touched costs nothing, and takes nothing from later allocations. */
static bool address_space_is_cheap(void)
{
    if (sizeof(void *) < 8) return false; /* WebAssembly's 4 GB hold everything the page has */
    struct rlimit limit;
    if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) return false;
    int mode = 0;
    FILE *f = fopen("/proc/sys/vm/overcommit_memory", "r");
    if (f) {
        if (fscanf(f, "%d", &mode) != 1) mode = 0;
        fclose(f);
    }
    return mode != 2;
}

/* Give every thread's set room for any mini-batch of `mini_batch` sources
 * (every one max_len tokens long), so none of them grows.  Growing frees
 * one block and allocates a larger one, whose pages the kernel maps and
 * zeroes again on first touch: with room only for what came so far, each
 * maxi-batch of a file whose first mini-batch was a little longer than any
 * before grew a block (1,000 en-zh dev lines, greedy, 2 threads: 10 blocks
 * of 67-108 MB, 59,000 page faults).  The room is address space, not
 * memory: only pages a mini-batch touches are ever mapped, and as the
 * layout no longer moves, they are the same pages each time (23,400 page
 * faults; peak RSS 112 MB against 114; with the encoder layers in one
 * set of buffers, acts_size_batched, 15,000 and 79 MB).  Best effort:
 * only where address space is cheap (under ulimit -v 400000 one thread's
 * room left the other thread's growth none, and a file that translated
 * without the reservation aborted), not above RESERVE_MAX_BYTES, and a
 * set whose allocation fails keeps growing as the mini-batches come. */
static void reserve(SearchWorkspace *ws, const Model *model, const SearchSettings *set, int mini_batch)
{
    const ModelArch *a = &model->arch;
    if (!address_space_is_cheap()) return;
    ActsSize most = set->beam <= 1 ? decode_greedy_many_bound(a, mini_batch, a->max_len)
                                   : beam_decode_many_bound(model, set->beam, mini_batch, a->max_len);
    if (acts_bytes(a, most) > RESERVE_MAX_BYTES / (size_t)ws->count) return;
    for (int t = 0; t < ws->count; t++) acts_reserve(&ws->acts[t], a, most);
}

void search_translate_batches(SearchWorkspace *ws, const Model *model, const int *const *src,
                              const bool *const *spaced, const int *src_len, int n, int mini_batch,
                              const SearchSettings *set, int **outputs, int *lengths, bool *finite)
{
    if (n < 1) return;
    ByLength *order = xmalloc((size_t)n * sizeof *order);
    for (int i = 0; i < n; i++) order[i] = (ByLength){src_len[i], i};
    qsort(order, (size_t)n, sizeof *order, longer_first);
    /* One part per thread; with a single mini-batch there is nothing to
     * share, and its products use the threads instead. */
    int batches = (n + mini_batch - 1) / mini_batch;
    int parts = batches < parallel_threads() ? batches : parallel_threads();
    /* the first call makes a set for every thread, and tries to reserve them */
    int sets = ws->reserve_tried ? parts : parallel_threads();
    if (ws->count < sets) {
        ws->acts = xrealloc(ws->acts, (size_t)sets * sizeof *ws->acts);
        memset(ws->acts + ws->count, 0, (size_t)(sets - ws->count) * sizeof *ws->acts);
        ws->count = sets;
    }
    if (!ws->reserve_tried) reserve(ws, model, set, mini_batch);
    ws->reserve_tried = true;
    BatchJob job = {ws, model, set, src, spaced, order, n, mini_batch, outputs, lengths, finite, 0};
    parallel_for(parts, (double)PARALLEL_MIN_WORK * batches, decode_batches, &job);
    free(order);
}
