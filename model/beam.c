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
 * (beam_reorder below), so a slot's rows always describe its own path.
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
 * list unfinished, but only to fill it to n_best, after every hypothesis
 * that ended: a hypothesis cut off at the limit is no translation, yet its
 * score per token can beat one that ended (after 。 a run of cheap "…"
 * lowers the mean log-probability less and less), and it came out as
 * 九点以前的网站打工业。………………… where 九点以前的网站打工业。 had ended.
 *
 * The no-repeat-n-gram rule (decode_ban_repeats), when asked, removes
 * tokens from what a hypothesis may propose; their log-probabilities, the
 * top-5 recorded and the scores are the model's own.  The number rule
 * (number_rule.h) removes tokens too, and raises one: the minus sign it
 * has the output write where the model would begin a negative number
 * without it ranks with that number's first token's log-probability (the
 * log-probabilities and top-5 recorded stay the model's; the raw score,
 * and so an n-best line's SCORE, counts the raised one).
 *
 * Several sources at once: beam_decode_many, in beam_many.c (plain
 * output: no maps, top-5 or n-best list), with the same scoring, ranking,
 * stopping and slot moves (beam_impl.h, defined here).
 *
 * Not done here: coverage or repetition penalties, keeping logits. */
#include "beam.h"
#include "beam_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

enum { K = TRANSLATION_TOP_K };

/* A hypothesis that has left the beam (</s> or the length limit). */
typedef struct {
    Translation t;
    float score;   /* normalised */
    int arrival;   /* order of arrival: the earlier wins a tie */
} Ended;

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

float beam_normalise(float raw, int T, float alpha) { return raw / powf((float)T, alpha); }

float beam_score(const Translation *t, float length_penalty)
{
    float raw = 0.0f; /* summed in step order, as the search does */
    for (int i = 0; i < t->steps; i++) raw += t->logprobs[i];
    return beam_normalise(raw, t->steps, length_penalty);
}

/* Does a rank before b?  Higher raw score, then lower parent slot, then
 * lower token: a total order (no two candidates share parent and token),
 * so the kept list below does not depend on the order they come in.  A NaN
 * score (only an overflowing model makes one) ranks after every number. */
static bool ranks_before(const Candidate *a, const Candidate *b)
{
    bool a_nan = isnan(a->raw), b_nan = isnan(b->raw);
    if (a_nan != b_nan) return b_nan;
    if (!a_nan && a->raw != b->raw) return a->raw > b->raw;
    if (a->parent != b->parent) return a->parent < b->parent;
    return a->token < b->token;
}

/* Candidate c into the best `beam` so far, cand[0..*held-1], best first:
 * its place by bisection, the worst dropped when full.  The same list as
 * sorting every candidate and keeping the first `beam`, without sorting
 * the beam × width proposals of a step (a glibc merge sort per step, 8% of
 * a beam of 64 over a 64-token vocabulary). */
static void keep_best(Candidate *cand, int *held, int beam, Candidate c)
{
    if (*held == beam && !ranks_before(&c, &cand[beam - 1])) return;
    int lo = 0, hi = *held;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (ranks_before(&c, &cand[mid])) hi = mid;
        else lo = mid + 1;
    }
    int last = *held < beam ? *held : beam - 1; /* the last place that moves down, or is dropped */
    memmove(cand + lo + 1, cand + lo, (size_t)(last - lo) * sizeof *cand);
    cand[lo] = c;
    if (*held < beam) (*held)++;
}

/* ---- ranking one sentence's proposals (beam_decode and beam_decode_many) ---- */

void beam_ranker_init(Ranker *r, const BeamSettings *set, int V)
{
    r->beam = set->beam;
    r->width = set->beam < V ? set->beam : V;
    r->V = V;
    r->rules = decode_rules_on(set->rules) ? set->rules : NULL;
    r->cand = xmalloc((size_t)r->beam * sizeof *r->cand);
    r->ids = xmalloc((size_t)r->width * sizeof *r->ids);
    r->lse = xmalloc((size_t)r->beam * sizeof *r->lse);
    r->banned = r->rules ? xmalloc((size_t)V * sizeof *r->banned) : NULL;
}

void beam_ranker_free(Ranker *r)
{
    free(r->cand);
    free(r->ids);
    free(r->lse);
    free(r->banned);
}

/* See beam_impl.h.  The proposals of all hypotheses are ranked together
 * (ranks_before, keep_best). */
int beam_rank_candidates(Ranker *r, const float *logits, int live, const float *raw,
                         const int *histories, int cap, int t, const int *src, const bool *spaced, int S)
{
    int V = r->V, n = 0;
    for (int b = 0; b < live; b++) {
        const float *row = logits + (size_t)b * V;
        float lse = r->lse[b] = decode_log_sum_exp(row, V);
        /* ranking by logits within one hypothesis equals ranking by
         * log-probability, and keeps beam 1 identical to greedy's argmax;
         * under rules, among the tokens they allow */
        const float *allowed = row;
        if (decode_rules_apply(r->rules, src, S)) {
            memcpy(r->banned, row, (size_t)V * sizeof(float));
            decode_ban(r->rules, src, spaced, S, histories + (size_t)b * cap, t, r->banned);
            allowed = r->banned;
        }
        decode_top_k(allowed, V, r->width, r->ids);
        for (int k = 0; k < r->width; k++) {
            int id = r->ids[k];
            if (allowed != row && allowed[id] == -INFINITY && row[id] > -INFINITY) continue; /* banned */
            /* ranked by the model's own log-probability, but for a token a
             * rule raised to stand for one it banned (the number rule's 负
             * for the 十 of -10): it ranks as the token whose place it took,
             * else the hypothesis that writes the sign always loses to one
             * that drops the number; the log-probability kept is the model's */
            float lp = row[id] - lse, ranked = (allowed[id] > row[id] ? allowed[id] : row[id]) - lse;
            keep_best(r->cand, &n, r->beam, (Candidate){b, id, lp, raw[b] + ranked});
        }
    }
    return n;
}

/* Can none of `live` hypotheses with raw[live] scores after step t, at most
 * `limit` steps, still score above `bar`?  Its raw score can only fall
 * (log-probabilities are <= 0) and it would end with between t+2 and limit
 * tokens; raw / L^alpha is monotonic in L, so its best possible score is at
 * one of those two lengths.  (The caller checks t + 2 <= limit.) */
bool beam_none_can_beat(const float *raw, int live, int t, int limit, float alpha, float bar)
{
    for (int b = 0; b < live; b++) {
        float r = raw[b];
        if (fmaxf(beam_normalise(r, t + 2, alpha), beam_normalise(r, limit, alpha)) > bar) return false;
    }
    return true;
}

/* ---- moving hypotheses between slots ---------------------------------------- */

/* Slot j (< n) receives slot parent[j]'s data.  Every moving slot is staged
 * before any is written, because a slot can be both a parent and a child;
 * a slot that is its own parent stays put. */
void beam_reorder(SlotSpan s, const int *parent, int n, char *scratch)
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

/* Everything a slot holds after step t (rows 0..t) follows its parent. */
static void reorder_slots(Search *s, int t, int n)
{
    const ModelArch *a = &s->model->arch;
    size_t D = (size_t)a->d_model, cap = (size_t)s->cap, S = (size_t)s->S, rows = (size_t)t + 1;
    size_t f = sizeof(float), i = sizeof(int);
    int H = a->heads;
    for (int l = 0; l < a->decoder_layers; l++) {
        AttentionActs *sa = &s->acts.decoder[l].self_attn;
        beam_reorder(beam_span(sa->k, cap * D * f, 0, rows * D * f, 1), s->parent, n, s->scratch);
        beam_reorder(beam_span(sa->v, cap * D * f, 0, rows * D * f, 1), s->parent, n, s->scratch);
        beam_reorder(beam_span(transformer_decoder_map(&s->acts, &s->batch, l, 0), H * cap * cap * f,
                               cap * cap * f, rows * cap * f, H),
                     s->parent, n, s->scratch);
        beam_reorder(beam_span(transformer_cross_map(&s->acts, &s->batch, l, 0), H * cap * S * f, cap * S * f,
                               rows * S * f, H),
                     s->parent, n, s->scratch);
    }
    beam_reorder(beam_span(s->output_ids, cap * i, 0, rows * i, 1), s->parent, n, s->scratch);
    beam_reorder(beam_span(s->logprobs, cap * f, 0, rows * f, 1), s->parent, n, s->scratch);
    beam_reorder(beam_span(s->top_ids, cap * K * i, 0, rows * K * i, 1), s->parent, n, s->scratch);
    beam_reorder(beam_span(s->top_logprobs, cap * K * f, 0, rows * K * f, 1), s->parent, n, s->scratch);
    beam_reorder(beam_span(s->raw, f, 0, f, 1), s->parent, n, s->scratch);
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
    float score = beam_normalise(raw, T, s->alpha);
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

/* Ended before unfinished, then best first, the earlier arrival on a tie. */
static int by_score(const void *pa, const void *pb)
{
    const Ended *a = pa, *b = pb;
    if (a->t.finished != b->t.finished) return a->t.finished ? -1 : 1;
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
    beam_ranker_init(&s->rank, set, a->tgt_vocab);
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
    beam_ranker_free(&s->rank);
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
 * for the Translation, and rank the proposals (beam_rank_candidates).
 * Returns how many are kept (the first of s->rank.cand). */
static int expand(Search *s, int t)
{
    int V = s->model->arch.tgt_vocab;
    int kept = beam_rank_candidates(&s->rank, s->acts.logits, s->live, s->raw, s->output_ids, s->cap, t,
                                    s->src_ids, decode_rules_spaced(s->rank.rules, 0), s->S);
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
 * (beam_none_can_beat)? */
static bool settled(const Search *s, int t)
{
    if (s->live == 0) return true;
    if (s->n_ended < s->n_best || t + 2 > s->cap) return false;
    return beam_none_can_beat(s->raw, s->live, t, s->cap, s->alpha, nth_best_ended(s, s->n_best));
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
    /* At the length limit the live hypotheses, best first, fill the list
     * unfinished where fewer than n_best ended (see the top). */
    if (t == limit)
        for (int b = 0; b < s.live && s.n_ended < set->n_best; b++) offer(&s, b, limit, s.raw[b], false);

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
