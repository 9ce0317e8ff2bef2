/* beam_many.c — beam search for several sentences at once
 * (beam_decode_many, see beam.h): plain output; no maps, no top-5, no
 * n-best list.  One sentence's beam with its maps is beam.c; both apply the same
 * rules to each sentence (beam_impl.h).
 *
 * The live hypotheses of a group of sentences are the rows of one decoding
 * step, sentence by sentence, each sentence's in rank order: a step then
 * reads the weights once for all of them, not once per sentence, and the
 * float16 tiles convert each weight once for up to 12 rows with AVX-512,
 * 6 with AVX2 (gemm_f16.c): one sentence's beam of 4 fills a third or two
 * thirds of one.  Every row
 * attends to its own sentence's memory (Batch.src_of), so nothing of the
 * source is copied per hypothesis.  Slot j of sentence s (a hypothesis's
 * place between steps) owns the K/V store rows (s·beam + j)·cap.. and its
 * tokens in output_ids; after each step a sentence's survivors take slots
 * 0..live-1 in rank order, copied from their parents' slots
 * (beam_reorder), as beam_decode does.  Each sentence is ranked
 * (beam_rank_candidates), ended and stopped (beam_none_can_beat) by
 * beam_decode's rules.  With one answer wanted, the ended list reduces to
 * its best (the earlier on a tie): that is what beam_decode returns and
 * what its stopping rule compares against.
 *
 * The same bits as beam_decode need each product of a step to take the
 * kernel it takes for one sentence's hypotheses, whose rows do not depend
 * on each other: at most rows_alike() rows (gemm_i8.h's small-M kernels with
 * --int8, gemm.h's small-M path for float32; gemm_f16.h's rows never
 * depend on each other, and its one-thread limit is the group).  So a mini-batch is
 * decoded rows_alike() / beam sentences at a time, and each group's sources
 * are encoded in chunks of at most that many tokens (a longer sentence
 * alone, as it is encoded on its own). */
#include "beam.h"

#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "beam_impl.h"
#include "gemm.h"
#include "gemm_f16.h"
#include "gemm_i8.h"

/* See above: up to this many rows a product's rows are independent. */
static int rows_alike(const Model *m)
{
    if (m->params.int8) return GEMM_I8_SMALL_M;
    return model_is_half(m) ? GEMM_F16_SMALL_M : GEMM_SMALL_M;
}

typedef struct {
    const Model *model;
    Activations *acts;
    Ranker rank;
    float alpha;
    int group_size;    /* sentences decoded together */
    /* the group being decoded */
    int count, cap;    /* its sentences; rows per slot (its longest limit) */
    const int *limits; /* [count] */
    int **outputs;     /* [count] the best ended so far (see beam.h) */
    int *lengths;      /* [count] its tokens, 0 while none has ended */
    float *scores;     /* [count] its score */
    const int *src_ids; /* the group's sources, sentence s at src_ids + src_start[s] */
    int *src_start;    /* [group_size+1] the group's sources, from 0 */
    int src_first;     /* where the group's sources start in the call's (decode_rules_spaced) */
    int *live;         /* [group_size] hypotheses still extending */
    bool *done;        /* [group_size] answer final */
    int *first_row;    /* [group_size] its first row in this step */
    /* per slot, s·beam + j */
    float *raw;        /* [group_size·beam] Σ logprob of each slot's path */
    int *output_ids;   /* [group_size·beam, cap] */
    int *next;         /* [group_size·beam] the token it feeds next */
    /* per row of a step */
    int *tokens, *tgt_start, *kv_start, *src_of; /* [rows], tgt_start [rows+1] */
    int *parent;       /* [beam] */
    char *scratch;     /* reorder's staging: beam slots of K/V rows */
    int *chunk_first;  /* [group_size+1] encode_group's: each chunk's first sentence */
    int *chunk_start;  /* [group_size+1] encode_group's: a chunk's sources, from 0 */
    Batch batch;
} Group;

static void group_init(Group *g, const Model *m, const BeamSettings *set, int group_size, int cap,
                       Activations *acts)
{
    memset(g, 0, sizeof *g);
    size_t B = (size_t)set->beam, n = (size_t)group_size, slots = n * B;
    g->model = m;
    g->acts = acts;
    beam_ranker_init(&g->rank, set, m->arch.tgt_vocab);
    g->alpha = set->length_penalty;
    g->group_size = group_size;
    g->src_start = xmalloc((n + 1) * sizeof(int));
    g->live = xmalloc(n * sizeof(int));
    g->done = xmalloc(n * sizeof(bool));
    g->first_row = xmalloc(n * sizeof(int));
    g->raw = xmalloc(slots * sizeof(float));
    g->output_ids = xmalloc(slots * (size_t)cap * sizeof(int));
    g->next = xmalloc(slots * sizeof(int));
    g->tokens = xmalloc(slots * sizeof(int));
    g->tgt_start = xmalloc((slots + 1) * sizeof(int));
    g->kv_start = xmalloc(slots * sizeof(int));
    g->src_of = xmalloc(slots * sizeof(int));
    g->parent = xmalloc(B * sizeof(int));
    g->scratch = xmalloc(B * (size_t)cap * m->arch.d_model * sizeof(float));
    g->chunk_first = xmalloc((n + 1) * sizeof(int));
    g->chunk_start = xmalloc((n + 1) * sizeof(int));
}

static void group_free(Group *g)
{
    beam_ranker_free(&g->rank);
    free(g->src_start);
    free(g->live);
    free(g->done);
    free(g->first_row);
    free(g->raw);
    free(g->output_ids);
    free(g->next);
    free(g->tokens);
    free(g->tgt_start);
    free(g->kv_start);
    free(g->src_of);
    free(g->parent);
    free(g->scratch);
    free(g->chunk_first);
    free(g->chunk_start);
}

/* The group's sources src_ids[src_start[count]] (g->src_start) encoded in
 * chunks of at most `rows` tokens (see the top), the last chunk first: a
 * chunk's memory keys/values land in rows 0.. of every decoder layer's
 * cross-attention and move up to its place, above all the rows the chunks
 * before it (encoded next) write. */
static void encode_group(Group *g, const int *src_ids, int rows)
{
    const ModelArch *a = &g->model->arch;
    const int *start = g->src_start;
    size_t D = (size_t)a->d_model;
    int chunks = 0;
    for (int b = 0; b < g->count; chunks++) { /* cut front to back: chunk c is sentences first[c].. */
        g->chunk_first[chunks] = b;
        int n = start[b + 1] - start[b];
        for (b++; b < g->count && n + start[b + 1] - start[b] <= rows; b++) n += start[b + 1] - start[b];
    }
    g->chunk_first[chunks] = g->count;
    for (int c = chunks - 1; c >= 0; c--) {
        int first = g->chunk_first[c], end = g->chunk_first[c + 1], at = start[first];
        for (int b = first; b <= end; b++) g->chunk_start[b - first] = start[b] - at;
        Batch chunk = {.count = end - first, .src_ids = src_ids + at, .src_start = g->chunk_start};
        transformer_encode(g->acts, g->model, &chunk);
        size_t n = (size_t)(start[end] - at) * D;
        for (int l = 0; at > 0 && l < a->decoder_layers; l++) {
            AttentionActs *ca = &g->acts->decoder[l].cross_attn;
            memmove(ca->k + (size_t)at * D, ca->k, n * sizeof(float));
            memmove(ca->v + (size_t)at * D, ca->v, n * sizeof(float));
        }
    }
}

/* Slot b of sentence s, T tokens (raw score `raw`), leaves the beam: the
 * sentence's answer if better than the best so far (a tie keeps the
 * earlier, as beam_decode's ended list does). */
static void offer_best(Group *g, int s, int b, int T, float raw)
{
    float score = beam_normalise(raw, T, g->alpha);
    if (g->lengths[s] > 0 && !(score > g->scores[s])) return;
    memcpy(g->outputs[s], g->output_ids + ((size_t)s * g->rank.beam + b) * g->cap, (size_t)T * sizeof(int));
    g->lengths[s] = T;
    g->scores[s] = score;
}

/* Sentence s's slots 0..n-1 take their parents' K/V rows and tokens
 * through step t (g->parent). */
static void reorder_sentence(Group *g, int s, int t, int n)
{
    const ModelArch *a = &g->model->arch;
    size_t D = (size_t)a->d_model, cap = (size_t)g->cap, rows = (size_t)t + 1, f = sizeof(float);
    size_t slot0 = (size_t)s * g->rank.beam;
    for (int l = 0; l < a->decoder_layers; l++) {
        AttentionActs *sa = &g->acts->decoder[l].self_attn;
        beam_reorder(beam_span(sa->k + slot0 * cap * D, cap * D * f, 0, rows * D * f, 1), g->parent, n,
                     g->scratch);
        beam_reorder(beam_span(sa->v + slot0 * cap * D, cap * D * f, 0, rows * D * f, 1), g->parent, n,
                     g->scratch);
    }
    beam_reorder(beam_span(g->output_ids + slot0 * cap, cap * sizeof(int), 0, rows * sizeof(int), 1),
                 g->parent, n, g->scratch);
}

/* After step t, sentence s as beam_decode's expand, advance and settled:
 * rank, end the </s> candidates, move the others into their slots, and
 * decide whether its answer is final. */
static void step_sentence(Group *g, int s, int t)
{
    int V = g->model->arch.tgt_vocab, beam = g->rank.beam, limit = g->limits[s];
    float *raw = g->raw + (size_t)s * beam;
    int *ids = g->output_ids + (size_t)s * beam * g->cap;
    int kept = beam_rank_candidates(&g->rank, g->acts->logits + (size_t)g->first_row[s] * V, g->live[s], raw,
                                    ids, g->cap, t, g->src_ids + g->src_start[s],
                                    decode_rules_spaced(g->rank.rules, g->src_first + g->src_start[s]),
                                    g->src_start[s + 1] - g->src_start[s]);
    int live = 0;
    for (int i = 0; i < kept; i++) {
        const Candidate *c = &g->rank.cand[i];
        if (c->token != TOKEN_EOS) {
            g->parent[live++] = c->parent;
            continue;
        }
        ids[(size_t)c->parent * g->cap + t] = c->token;
        offer_best(g, s, c->parent, t + 1, c->raw);
    }
    reorder_sentence(g, s, t, live);
    live = 0;
    for (int i = 0; i < kept; i++) {
        const Candidate *c = &g->rank.cand[i];
        if (c->token == TOKEN_EOS) continue;
        ids[(size_t)live * g->cap + t] = c->token;
        raw[live] = c->raw;
        g->next[(size_t)s * beam + live++] = c->token;
    }
    g->live[s] = live;
    bool settled = live == 0 || (g->lengths[s] > 0 && t + 2 <= limit &&
                                 beam_none_can_beat(raw, live, t, limit, g->alpha, g->scores[s]));
    if (!settled && t + 1 == limit && g->lengths[s] == 0) /* at the limit, unfinished only if none ended (beam.c) */
        for (int b = 0; b < live; b++) offer_best(g, s, b, limit, raw[b]);
    g->done[s] = settled || t + 1 == limit;
}

/* The activations of a group of `count` sources (src_rows tokens in all,
 * none longer than src_longest), `beam` hypotheses each, for up to `cap`
 * steps.  Cross-attention maps for up to `beam` rows per source: the
 * memory is shared, its maps are not (acts_size_steps counts one per
 * source). */
static ActsSize group_need(const ModelArch *a, int count, int beam, int cap, int src_rows, int src_longest)
{
    ActsSize need = acts_size_batched(acts_size_steps(a, count * beam, cap, src_rows, src_longest));
    need.cross_probs *= (size_t)beam;
    return need;
}

/* Sentences src_start[0..count] (of src_ids) with limits[count], answers
 * into outputs, lengths, scores (all [count]). */
static void group_run(Group *g, const int *src_ids, const int *src_start, int count, const int *limits,
                      int **outputs, int *lengths, float *scores)
{
    const ModelArch *a = &g->model->arch;
    int beam = g->rank.beam, longest = 0, cap = 0;
    g->count = count;
    g->limits = limits;
    g->outputs = outputs;
    g->lengths = lengths;
    g->scores = scores;
    g->src_ids = src_ids + src_start[0];
    g->src_first = src_start[0];
    for (int s = 0; s <= count; s++) g->src_start[s] = src_start[s] - src_start[0];
    for (int s = 0; s < count; s++) {
        int S = src_start[s + 1] - src_start[s];
        if (S > longest) longest = S;
        if (limits[s] > cap) cap = limits[s];
        lengths[s] = 0;
        g->live[s] = 1;
        g->done[s] = false;
        g->raw[(size_t)s * beam] = 0.0f;
        g->next[(size_t)s * beam] = TOKEN_BOS;
    }
    g->cap = cap;
    acts_fit(g->acts, a, group_need(a, count, beam, cap, g->src_start[count], longest));
    encode_group(g, src_ids + src_start[0], rows_alike(g->model));
    g->batch = (Batch){.src_start = g->src_start, .tgt_ids = g->tokens, .tgt_start = g->tgt_start,
                       .kv_start = g->kv_start, .kv_capacity = cap, .src_of = g->src_of};
    for (int t = 0;; t++) {
        int rows = 0;
        g->tgt_start[0] = 0;
        for (int s = 0; s < count; s++) {
            if (g->done[s]) continue;
            g->first_row[s] = rows;
            for (int j = 0; j < g->live[s]; j++, rows++) {
                int slot = s * beam + j;
                g->tokens[rows] = g->next[slot];
                g->kv_start[rows] = slot * cap;
                g->src_of[rows] = s;
                g->tgt_start[rows + 1] = rows + 1;
            }
        }
        if (rows == 0) break;
        g->batch.count = rows;
        g->batch.tgt_pos = t;
        transformer_decode(g->acts, g->model, &g->batch);
        for (int s = 0; s < count; s++)
            if (!g->done[s]) step_sentence(g, s, t);
    }
}

/* Sentences a group decodes at once (at most count). */
static int group_size_of(const Model *model, int beam, int count)
{
    int size = rows_alike(model) / beam;
    if (size < 1) size = 1;
    return size > count ? count : size;
}

ActsSize beam_decode_many_bound(const Model *model, int beam, int count, int src_longest)
{
    int n = group_size_of(model, beam, count);
    return group_need(&model->arch, n, beam, model->arch.max_len, n * src_longest, src_longest);
}

void beam_decode_many(Activations *work, const Model *model, const int *src_ids, const int *src_start,
                      int count, const int *limits, const BeamSettings *set, int **outputs, int *lengths,
                      float *scores)
{
    const ModelArch *a = &model->arch;
    ASSERT(set->beam >= 1);
    int cap = 1;
    for (int b = 0; b < count; b++) {
        int S = src_start[b + 1] - src_start[b];
        ASSERT(S >= 1 && S <= a->max_len && limits[b] >= 1 && limits[b] <= a->max_len);
        if (limits[b] > cap) cap = limits[b];
    }
    if (count < 1) return;
    int group_size = group_size_of(model, set->beam, count);
    float *own_scores = scores ? NULL : xmalloc((size_t)count * sizeof(float));
    Activations local = {0};
    Group g;
    group_init(&g, model, set, group_size, cap, work ? work : &local);
    for (int first = 0; first < count; first += group_size) {
        int n = count - first < group_size ? count - first : group_size;
        group_run(&g, src_ids, src_start + first, n, limits + first, outputs + first, lengths + first,
                  (scores ? scores : own_scores) + first);
    }
    group_free(&g);
    acts_free(&local);
    free(own_scores);
}
