/* beam.c — beam search with per-hypothesis attention maps (see beam.h).
 *
 * The live hypotheses occupy "slots" 0..live-1 of one step-decoding batch:
 * slot b owns rows b·cap .. b·cap+cap-1 of every decoder layer's
 * self-attention K/V store and the [H, cap, cap] / [H, cap, S] blocks of
 * that sequence's self- and cross-attention maps (cap = limit).  Those
 * blocks double as the hypothesis's history: row t is written by step t.
 * Beside them each slot keeps its tokens, log-probabilities and top-5
 * alternatives so far.  After each step the survivors are moved into the
 * slots in rank order, every per-slot array copied from the parent's slot
 * (reorder below), so a slot's rows always describe its own path.
 *
 * Sharing one source among B targets: cross-attention finds sequence b's
 * memory keys/values at rows src_start[b].. of the projected memory, so the
 * source is encoded once (a batch of 1) and its projected keys/values are
 * copied to rows b·S.. for every other slot; decoding steps then use
 * src_start = {0, S, 2S, ...}.  The encoder runs once, only the copy is B×.
 *
 * Stopping rule: a candidate ending in </s> leaves the beam and joins the
 * ended list, which keeps the `beam` best by normalised score.  The search
 * stops when no hypothesis is live, or when the list holds the n_best
 * answers asked for and no live hypothesis can beat the n_best-th even in
 * the best case (its raw score can only fall; see settled): what is
 * returned is then final, though a longer search could still fill the rest
 * of the list.  Or after `limit` steps, when the live hypotheses join the
 * list unfinished.
 *
 * The no-repeat-n-gram rule (decode_ban_repeats), when asked, removes
 * tokens from what a hypothesis may propose; their log-probabilities, the
 * top-5 recorded and the scores are the model's own.
 *
 * Several sources at once: beam_decode_many, at the end (plain output:
 * no maps, top-5 or n-best list).
 *
 * Not done here: coverage or repetition penalties, keeping logits. */
#include "beam.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "gemm.h"
#include "gemm_f16.h"

enum { K = TRANSLATION_TOP_K };

/* One proposed extension of a live hypothesis. */
typedef struct {
    int parent;    /* slot of the hypothesis it extends */
    int token;
    float logprob; /* of token */
    float raw;     /* the parent's raw score + logprob */
} Candidate;

/* A hypothesis that has left the beam (</s> or the length limit). */
typedef struct {
    Translation t;
    float score;   /* normalised */
    int arrival;   /* order of arrival: the earlier wins a tie */
} Ended;

/* What ranking needs besides the hypotheses: the rules and scratch space. */
typedef struct {
    int beam, width;  /* hypotheses kept; tokens proposed per hypothesis (<= V) */
    int V;
    int no_repeat;    /* no_repeat_ngram (0: off) */
    Candidate *cand;  /* [beam·width] */
    int *ids;         /* [width] top_k's output */
    float *lse;       /* [beam] each hypothesis's log Σ exp(logits) of this step */
    float *banned;    /* [V] a row of logits under the no-repeat rule, or NULL */
} Ranker;

typedef struct {
    const Model *model;
    int beam;        /* hypotheses kept */
    int n_best;      /* how many of the ended list are returned */
    int S, cap;      /* source length; steps at most (rows per slot) */
    float alpha;     /* length penalty */
    const int *src_ids;
    Activations acts;
    Batch batch;                     /* the decoding steps' batch, count = live */
    int *src_start, *tgt_start;      /* [beam+1] */
    int *kv_start, *tokens, *parent; /* [beam]: K/V rows, next inputs, parent slots */
    int live;
    float *raw;                      /* [beam] Σ logprob of each slot's path */
    int *output_ids;                 /* [beam, cap] */
    float *logprobs;                 /* [beam, cap] */
    int *top_ids;                    /* [beam, cap, K] */
    float *top_logprobs;             /* [beam, cap, K] */
    float *encoder_attn;             /* [L_enc, H, S, S], shared by every hypothesis */
    Ranker rank;                     /* the candidates of each step */
    char *scratch;                   /* reorder's staging area */
    Ended *ended;                    /* [beam] the best so far, unsorted */
    int n_ended, arrivals;
} Search;

/* ---- scores (log-probabilities and top-k come from decode.c) --------------- */

static float normalise(float raw, int T, float alpha) { return raw / powf((float)T, alpha); }

float beam_score(const Translation *t, float length_penalty)
{
    float raw = 0.0f; /* summed in step order, as the search does */
    for (int i = 0; i < t->steps; i++) raw += t->logprobs[i];
    return normalise(raw, t->steps, length_penalty);
}

/* Best first: higher raw score, then lower parent slot, then lower token
 * (a total order, so qsort's instability cannot show). */
static int by_rank(const void *pa, const void *pb)
{
    const Candidate *a = pa, *b = pb;
    if (a->raw != b->raw) return a->raw > b->raw ? -1 : 1;
    if (a->parent != b->parent) return a->parent - b->parent;
    return a->token - b->token;
}

/* ---- ranking one sentence's proposals (beam_decode and beam_decode_many) ---- */

static void ranker_init(Ranker *r, const BeamSettings *set, int V)
{
    r->beam = set->beam;
    r->width = set->beam < V ? set->beam : V;
    r->V = V;
    r->no_repeat = set->no_repeat_ngram;
    r->cand = xmalloc((size_t)r->beam * r->width * sizeof *r->cand);
    r->ids = xmalloc((size_t)r->width * sizeof *r->ids);
    r->lse = xmalloc((size_t)r->beam * sizeof *r->lse);
    r->banned = r->no_repeat ? xmalloc((size_t)V * sizeof *r->banned) : NULL;
}

static void ranker_free(Ranker *r)
{
    free(r->cand);
    free(r->ids);
    free(r->lse);
    free(r->banned);
}

/* After step t, for `live` hypotheses of one sentence, with logits[live, V]
 * (this step's rows), raw[live] scores and histories[live, cap] (tokens
 * 0..t-1 of each): log-softmax each row (into r->lse), let each propose its
 * `width` best tokens, and rank all proposals (by_rank).  Returns how many
 * are kept, the first of r->cand; their parents are indices 0..live-1. */
static int rank_candidates(Ranker *r, const float *logits, int live, const float *raw,
                           const int *histories, int cap, int t)
{
    int V = r->V, n = 0;
    for (int b = 0; b < live; b++) {
        const float *row = logits + (size_t)b * V;
        float lse = r->lse[b] = decode_log_sum_exp(row, V);
        /* ranking by logits within one hypothesis equals ranking by
         * log-probability, and keeps beam 1 identical to greedy's argmax;
         * under the no-repeat rule, among the tokens it allows */
        const float *allowed = row;
        if (r->no_repeat) {
            memcpy(r->banned, row, (size_t)V * sizeof(float));
            decode_ban_repeats(histories + (size_t)b * cap, t, r->no_repeat, r->banned);
            allowed = r->banned;
        }
        decode_top_k(allowed, V, r->width, r->ids);
        for (int k = 0; k < r->width; k++) {
            int id = r->ids[k];
            if (r->no_repeat && allowed[id] == -INFINITY && row[id] > -INFINITY) continue; /* banned */
            float lp = row[id] - lse;
            r->cand[n++] = (Candidate){b, id, lp, raw[b] + lp};
        }
    }
    qsort(r->cand, (size_t)n, sizeof *r->cand, by_rank);
    return n < r->beam ? n : r->beam;
}

/* Can none of `live` hypotheses with raw[live] scores after step t, at most
 * `limit` steps, still score above `bar`?  Its raw score can only fall
 * (log-probabilities are <= 0) and it would end with between t+2 and limit
 * tokens; raw / L^alpha is monotonic in L, so its best possible score is at
 * one of those two lengths.  (The caller checks t + 2 <= limit.) */
static bool none_can_beat(const float *raw, int live, int t, int limit, float alpha, float bar)
{
    for (int b = 0; b < live; b++) {
        float r = raw[b];
        if (fmaxf(normalise(r, t + 2, alpha), normalise(r, limit, alpha)) > bar) return false;
    }
    return true;
}

/* ---- moving hypotheses between slots ---------------------------------------- */

/* One per-slot array: slot b's data starts at base + b·stride (bytes) and
 * the part to move is `runs` runs of `len` bytes, `gap` apart (one run per
 * head for the attention maps, whose rows t+1.. are not written yet). */
typedef struct {
    void *base;
    size_t stride, gap, len;
    int runs;
} SlotSpan;

/* Slot j (< n) receives slot parent[j]'s data.  Every moving slot is staged
 * before any is written, because a slot can be both a parent and a child;
 * a slot that is its own parent stays put. */
static void reorder(SlotSpan s, const int *parent, int n, char *scratch)
{
    char *base = s.base;
    for (int j = 0; j < n; j++)
        for (int r = 0; parent[j] != j && r < s.runs; r++)
            memcpy(scratch + ((size_t)j * s.runs + r) * s.len,
                   base + (size_t)parent[j] * s.stride + (size_t)r * s.gap, s.len);
    for (int j = 0; j < n; j++)
        for (int r = 0; parent[j] != j && r < s.runs; r++)
            memcpy(base + (size_t)j * s.stride + (size_t)r * s.gap,
                   scratch + ((size_t)j * s.runs + r) * s.len, s.len);
}

static SlotSpan span(void *base, size_t stride, size_t gap, size_t len, int runs)
{
    return (SlotSpan){base, stride, gap, len, runs};
}

/* Everything a slot holds after step t (rows 0..t) follows its parent. */
static void reorder_slots(Search *s, int t, int n)
{
    const ModelArch *a = &s->model->arch;
    size_t D = (size_t)a->d_model, cap = (size_t)s->cap, S = (size_t)s->S, rows = (size_t)t + 1;
    size_t f = sizeof(float), i = sizeof(int);
    int H = a->heads;
    for (int l = 0; l < a->decoder_layers; l++) {
        AttentionActs *sa = &s->acts.decoder[l].self_attn;
        reorder(span(sa->k, cap * D * f, 0, rows * D * f, 1), s->parent, n, s->scratch);
        reorder(span(sa->v, cap * D * f, 0, rows * D * f, 1), s->parent, n, s->scratch);
        reorder(span(transformer_decoder_map(&s->acts, &s->batch, l, 0), H * cap * cap * f, cap * cap * f,
                     rows * cap * f, H), s->parent, n, s->scratch);
        reorder(span(transformer_cross_map(&s->acts, &s->batch, l, 0), H * cap * S * f, cap * S * f,
                     rows * S * f, H), s->parent, n, s->scratch);
    }
    reorder(span(s->output_ids, cap * i, 0, rows * i, 1), s->parent, n, s->scratch);
    reorder(span(s->logprobs, cap * f, 0, rows * f, 1), s->parent, n, s->scratch);
    reorder(span(s->top_ids, cap * K * i, 0, rows * K * i, 1), s->parent, n, s->scratch);
    reorder(span(s->top_logprobs, cap * K * f, 0, rows * K * f, 1), s->parent, n, s->scratch);
    reorder(span(s->raw, f, 0, f, 1), s->parent, n, s->scratch);
}

/* ---- ended hypotheses -------------------------------------------------------- */

/* The Translation of slot b's first T steps. */
static void extract(const Search *s, int b, int T, bool finished, Translation *out)
{
    const ModelArch *a = &s->model->arch;
    size_t n = (size_t)T, row = (size_t)b * s->cap;
    translation_init(out, a, s->src_ids, s->S, T, false);
    out->steps = T;
    out->finished = finished;
    memcpy(out->output_ids, s->output_ids + row, n * sizeof(int));
    out->input_ids[0] = TOKEN_BOS; /* the decoder reads <s>, then the output shifted */
    memcpy(out->input_ids + 1, out->output_ids, (n - 1) * sizeof(int));
    memcpy(out->logprobs, s->logprobs + row, n * sizeof(float));
    memcpy(out->top_ids, s->top_ids + row * K, n * K * sizeof(int));
    memcpy(out->top_logprobs, s->top_logprobs + row * K, n * K * sizeof(float));
    memcpy(out->encoder_attn, s->encoder_attn,
           (size_t)a->encoder_layers * a->heads * s->S * s->S * sizeof(float));
    decode_copy_target_maps(out, &s->acts, &s->batch, b, a);
}

/* The worst kept: lowest score, the later arrival on a tie. */
static Ended *worst_ended(const Search *s)
{
    Ended *w = &s->ended[0];
    for (int i = 1; i < s->n_ended; i++) {
        Ended *e = &s->ended[i];
        if (e->score < w->score || (e->score == w->score && e->arrival > w->arrival)) w = e;
    }
    return w;
}

/* The n-th best score of the ended list (n <= n_ended). */
static float nth_best_ended(const Search *s, int n)
{
    float best[64]; /* config.c caps the beam at 64 */
    int k = 0;
    ASSERT(n >= 1 && n <= s->n_ended && n <= 64);
    for (int i = 0; i < s->n_ended; i++) { /* insertion into the n best, descending */
        float x = s->ended[i].score;
        int j = k < n ? k++ : n;
        while (j > 0 && best[j - 1] < x) {
            if (j < n) best[j] = best[j - 1];
            j--;
        }
        if (j < n) best[j] = x;
    }
    return best[n - 1];
}

/* Slot b's first T steps (raw score `raw`) leave the beam; kept if among
 * the `beam` best so far.  The Translation is built only when kept. */
static void offer(Search *s, int b, int T, float raw, bool finished)
{
    float score = normalise(raw, T, s->alpha);
    Ended *e;
    if (s->n_ended < s->beam) {
        e = &s->ended[s->n_ended++];
    } else {
        e = worst_ended(s);
        if (score <= e->score) return;
        translation_free(&e->t);
    }
    e->score = score;
    e->arrival = s->arrivals++;
    extract(s, b, T, finished, &e->t);
}

/* Best first, the earlier arrival on a tie. */
static int by_score(const void *pa, const void *pb)
{
    const Ended *a = pa, *b = pb;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    return a->arrival - b->arrival;
}

/* ---- the search -------------------------------------------------------------- */

static void search_init(Search *s, const Model *m, const int *src_ids, int S, int limit,
                        const BeamSettings *set)
{
    const ModelArch *a = &m->arch;
    int B = set->beam, H = a->heads, D = a->d_model;
    memset(s, 0, sizeof *s);
    s->model = m;
    s->beam = B;
    s->S = S;
    s->cap = limit;
    s->alpha = set->length_penalty;
    s->n_best = set->n_best;
    s->src_ids = src_ids;
    /* Source rows for B copies of the memory's keys/values (see the top);
     * only one copy is encoded, so the encoder maps get B× the room they
     * need (the rest is never written, so those pages are never touched). */
    acts_alloc(&s->acts, a, acts_size_steps(a, B, limit, B * S, S));

    size_t beams = (size_t)B, cap = (size_t)limit;
    s->src_start = xmalloc((beams + 1) * sizeof(int));
    s->tgt_start = xmalloc((beams + 1) * sizeof(int));
    s->kv_start = xmalloc(beams * sizeof(int));
    for (int i = 0; i <= B; i++) {
        s->src_start[i] = i * S;
        s->tgt_start[i] = i; /* one new row per hypothesis per step */
        if (i < B) s->kv_start[i] = i * limit;
    }
    s->tokens = xmalloc(beams * sizeof(int));
    s->parent = xmalloc(beams * sizeof(int));
    s->raw = xcalloc(beams, sizeof(float));
    s->output_ids = xcalloc(beams * cap, sizeof(int));
    s->logprobs = xcalloc(beams * cap, sizeof(float));
    s->top_ids = xcalloc(beams * cap * K, sizeof(int));
    s->top_logprobs = xcalloc(beams * cap * K, sizeof(float));
    s->encoder_attn = xmalloc((size_t)a->encoder_layers * H * S * S * sizeof(float));
    ranker_init(&s->rank, set, a->tgt_vocab);
    s->ended = xcalloc(beams, sizeof(Ended));
    /* The largest slot part reorder moves (bytes): K/V rows, a map block, or
     * the top-5 history. */
    size_t f = sizeof(float), per_slot = cap * (size_t)D * f;
    if ((size_t)H * cap * cap * f > per_slot) per_slot = (size_t)H * cap * cap * f;
    if ((size_t)H * cap * S * f > per_slot) per_slot = (size_t)H * cap * S * f;
    if (cap * K * sizeof(int) > per_slot) per_slot = cap * K * sizeof(int);
    s->scratch = xmalloc(beams * per_slot);

    /* transformer_decode reads only src_start of the source side (where
     * each sequence's memory rows are), so src_ids stays NULL. */
    s->batch = (Batch){.count = 1, .src_start = s->src_start, .tgt_ids = s->tokens,
                       .tgt_start = s->tgt_start, .kv_start = s->kv_start, .kv_capacity = limit};
    s->live = 1;
    s->tokens[0] = TOKEN_BOS;
}

static void search_free(Search *s)
{
    acts_free(&s->acts);
    for (int i = 0; i < s->n_ended; i++) translation_free(&s->ended[i].t);
    free(s->src_start);
    free(s->tgt_start);
    free(s->kv_start);
    free(s->tokens);
    free(s->parent);
    free(s->raw);
    free(s->output_ids);
    free(s->logprobs);
    free(s->top_ids);
    free(s->top_logprobs);
    free(s->encoder_attn);
    ranker_free(&s->rank);
    free(s->scratch);
    free(s->ended);
}

/* Encode the source once, keep its maps, and give every slot its own copy
 * of each decoder layer's cross-attention keys and values. */
static void encode(Search *s)
{
    const ModelArch *a = &s->model->arch;
    size_t S = (size_t)s->S, D = (size_t)a->d_model, H = (size_t)a->heads;
    OneBatch one;
    const Batch *source = transformer_one_batch(&one, s->src_ids, s->S, NULL, 0);
    transformer_encode(&s->acts, s->model, source);
    for (int l = 0; l < a->encoder_layers; l++)
        memcpy(s->encoder_attn + l * H * S * S, transformer_encoder_map(&s->acts, source, l, 0),
               H * S * S * sizeof(float));
    for (int l = 0; l < a->decoder_layers; l++) {
        AttentionActs *ca = &s->acts.decoder[l].cross_attn;
        for (int b = 1; b < s->beam; b++) {
            memcpy(ca->k + b * S * D, ca->k, S * D * sizeof(float));
            memcpy(ca->v + b * S * D, ca->v, S * D * sizeof(float));
        }
    }
}

/* After step t: log-softmax each live hypothesis's logits, note its top-5
 * for the Translation, and rank the proposals (rank_candidates).  Returns
 * how many are kept (the first of s->rank.cand). */
static int expand(Search *s, int t)
{
    int V = s->model->arch.tgt_vocab;
    int kept = rank_candidates(&s->rank, s->acts.logits, s->live, s->raw, s->output_ids, s->cap, t);
    for (int b = 0; b < s->live; b++) {
        size_t at = ((size_t)b * s->cap + t) * K;
        decode_top_logprobs(s->acts.logits + (size_t)b * V, V, s->rank.lse[b], s->top_ids + at,
                            s->top_logprobs + at);
    }
    return kept;
}

/* The kept candidates of step t take their places: those ending in </s>
 * leave the beam, the others become slots 0..live-1 in rank order. */
static void advance(Search *s, int t, int kept)
{
    int live = 0;
    for (int i = 0; i < kept; i++) {
        const Candidate *c = &s->rank.cand[i];
        if (c->token != TOKEN_EOS) {
            s->parent[live++] = c->parent;
            continue;
        }
        /* The parent's slot holds the path through step t; write the </s>
         * there (its children get their own token after reorder_slots). */
        size_t at = (size_t)c->parent * s->cap + t;
        s->output_ids[at] = c->token;
        s->logprobs[at] = c->logprob;
        offer(s, c->parent, t + 1, c->raw, true);
    }
    reorder_slots(s, t, live);
    live = 0;
    for (int i = 0; i < kept; i++) {
        const Candidate *c = &s->rank.cand[i];
        if (c->token == TOKEN_EOS) continue;
        size_t at = (size_t)live * s->cap + t;
        s->output_ids[at] = c->token;
        s->logprobs[at] = c->logprob;
        s->raw[live] = c->raw;
        s->tokens[live++] = c->token;
    }
    s->live = live;
}

/* After step t, can no live hypothesis still enter the ended list's n_best
 * (none_can_beat)? */
static bool settled(const Search *s, int t)
{
    if (s->live == 0) return true;
    if (s->n_ended < s->n_best || t + 2 > s->cap) return false;
    return none_can_beat(s->raw, s->live, t, s->cap, s->alpha, nth_best_ended(s, s->n_best));
}

int beam_decode(const Model *model, const int *src_ids, int S, int limit,
                const BeamSettings *set, Translation *out, float *scores)
{
    const ModelArch *a = &model->arch;
    ASSERT(S >= 1 && S <= a->max_len && limit >= 1 && limit <= a->max_len);
    ASSERT(set->beam >= 1 && set->n_best >= 1 && set->n_best <= set->beam);
    Search s;
    search_init(&s, model, src_ids, S, limit, set);
    encode(&s);
    int t = 0;
    for (; t < limit; t++) {
        s.batch.count = s.live;
        s.batch.tgt_pos = t;
        transformer_decode(&s.acts, model, &s.batch);
        advance(&s, t, expand(&s, t));
        if (set->progress) set->progress(set->progress_context, t + 1, limit);
        if (settled(&s, t)) break;
    }
    /* At the length limit the live hypotheses compete unfinished. */
    if (t == limit)
        for (int b = 0; b < s.live; b++) offer(&s, b, limit, s.raw[b], false);

    qsort(s.ended, (size_t)s.n_ended, sizeof *s.ended, by_score);
    int n = s.n_ended < set->n_best ? s.n_ended : set->n_best;
    for (int i = 0; i < n; i++) {
        out[i] = s.ended[i].t; /* moved: search_free must not free it */
        if (scores) scores[i] = s.ended[i].score;
        memset(&s.ended[i].t, 0, sizeof s.ended[i].t);
    }
    search_free(&s);
    return n;
}

/* ---- several sentences at once (beam_decode_many) ------------------------- *
 *
 * The live hypotheses of a group of sentences are the rows of one decoding
 * step, sentence by sentence, each sentence's in rank order: a step then
 * reads the weights once for all of them, not once per sentence.  (On the
 * float16 AVX-512 tiles that saves less than it seems: their cost per row
 * is flat from 4 rows on, which one sentence's beam of 4 already fills;
 * what goes is the per-sentence work around the products.)  Every row
 * attends to its own sentence's memory (Batch.src_of), so nothing of the
 * source is copied per hypothesis.  Slot j of sentence s (a hypothesis's
 * place between steps) owns the K/V store rows (s·beam + j)·cap.. and its
 * tokens in output_ids; after each step a sentence's survivors take slots
 * 0..live-1 in rank order, copied from their parents' slots (reorder), as
 * beam_decode does.  Each sentence is ranked (rank_candidates), ended and
 * stopped (none_can_beat) by beam_decode's rules.  With one answer wanted,
 * the ended list reduces to its best (the earlier on a tie): that is what
 * beam_decode returns and what its stopping rule compares against.
 *
 * The same bits as beam_decode need each product of a step to take the
 * kernel it takes for one sentence's hypotheses, whose rows do not depend
 * on each other: at most rows_alike() rows (gemm_f16.h's AVX-512 tiles for a
 * float16 model, gemm.h's small-M path for float32).  So a mini-batch is
 * decoded rows_alike() / beam sentences at a time, and each group's sources
 * are encoded in chunks of at most that many tokens (a longer sentence
 * alone, as it is encoded on its own). */

/* See above.  Where rows are not independent anyway (AVX2 pairs rows:
 * dot_rows_avx2 in gemm_f16.c), a sentence can, rarely, change a near-tied
 * choice beside others. */
static int rows_alike(const Model *m) { return model_is_half(m) ? GEMM_F16_SMALL_M_AVX512 : GEMM_SMALL_M; }

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
    int *src_start;    /* [group_size+1] the group's sources, from 0 */
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
    ranker_init(&g->rank, set, m->arch.tgt_vocab);
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
    ranker_free(&g->rank);
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
    float score = normalise(raw, T, g->alpha);
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
        reorder(span(sa->k + slot0 * cap * D, cap * D * f, 0, rows * D * f, 1), g->parent, n, g->scratch);
        reorder(span(sa->v + slot0 * cap * D, cap * D * f, 0, rows * D * f, 1), g->parent, n, g->scratch);
    }
    reorder(span(g->output_ids + slot0 * cap, cap * sizeof(int), 0, rows * sizeof(int), 1), g->parent, n,
            g->scratch);
}

/* After step t, sentence s as beam_decode's expand, advance and settled:
 * rank, end the </s> candidates, move the others into their slots, and
 * decide whether its answer is final. */
static void step_sentence(Group *g, int s, int t)
{
    int V = g->model->arch.tgt_vocab, beam = g->rank.beam, limit = g->limits[s];
    float *raw = g->raw + (size_t)s * beam;
    int *ids = g->output_ids + (size_t)s * beam * g->cap;
    int kept = rank_candidates(&g->rank, g->acts->logits + (size_t)g->first_row[s] * V, g->live[s], raw, ids,
                               g->cap, t);
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
                                 none_can_beat(raw, live, t, limit, g->alpha, g->scores[s]));
    if (!settled && t + 1 == limit) /* at the length limit the live ones compete unfinished */
        for (int b = 0; b < live; b++) offer_best(g, s, b, limit, raw[b]);
    g->done[s] = settled || t + 1 == limit;
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
    /* Cross-attention maps for up to `beam` rows per source: the memory is
     * shared, its maps are not (acts_size_steps counts one per source). */
    ActsSize need = acts_size_steps(a, count * beam, cap, g->src_start[count], longest);
    need.cross_probs *= (size_t)beam;
    acts_fit(g->acts, a, need);
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
    int group_size = rows_alike(model) / set->beam;
    if (group_size < 1) group_size = 1;
    if (group_size > count) group_size = count;
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
