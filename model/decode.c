/* decode.c — greedy decoding with a key/value cache (see decode.h). */
#include "decode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "vector.h"

void decode_init(Decoder *dec, const Model *model)
{
    const ModelArch *a = &model->arch;
    dec->model = model;
    dec->progress = NULL;
    dec->progress_context = NULL;
    acts_alloc(&dec->acts, a, acts_size_steps(a, 1, a->max_len, a->max_len, a->max_len));
}

void decode_free(Decoder *dec)
{
    if (!dec) return;
    acts_free(&dec->acts);
    dec->model = NULL;
}

int decode_limit(const ModelArch *arch, int S, float ratio, int extra)
{
    double limit = ceil((double)ratio * S) + extra;
    if (limit > arch->max_len) limit = arch->max_len;
    return limit < 1 ? 1 : (int)limit;
}

/* log-softmax of one row of logits, evaluated only where asked: returns
 * log Σ exp(logits) so that logprob(i) = logits[i] - that.  The same sum
 * as the loss's and the attention softmax's (vector.h: float, 8 partial
 * sums, our own vectorised e^x): libm's double exp() per logit, 8,000 a
 * step per hypothesis, was 6-9% of greedy and beam-4 decoding (perf) and
 * as much of a batch-1 step.  The float sum's rounding (about 1e-6 of the
 * log-probabilities) is far below what any test or the scores printed
 * resolve.  A NaN or +Inf logit still makes the result NaN. */
float decode_log_sum_exp(const float *logits, int V)
{
    float max = vec_max(logits, V);
    return max + logf(vec_exp_sum(NULL, logits, max, V));
}

/* The K largest logits (ties: lower id first), best first.  Once K are
 * held, a logit enters only if above the K-th (`kth`, kept in a register),
 * and blocks of 16 with none above it are skipped in one vectorised test:
 * re-reading logits[ids[K-1]] for every logit made the plain insertion
 * loop one dependent load per logit.  A logit that enters finds its place
 * by bisection: the list is best first, so "beats the one held there" is
 * false and then true along it, and the first place it beats is where the
 * old scan from the end stopped — the same ids, in log K compares instead
 * of up to K (a beam as wide as the vocabulary makes every logit enter).
 * Rows with a NaN are the exception: a NaN breaks that order, so they may
 * come out in another order than the scan gave.  No answer depends on it:
 * such a row's log Σ exp is NaN, so every log-probability taken from it is
 * NaN (greedy's recorded ones fail the finite check; beam.c ranks NaN
 * scores after every number). */
void decode_top_k(const float *logits, int V, int K, int *ids)
{
    int held = 0;
    float kth = 0.0f;
    for (int i = 0; i < V; i++) {
        if (held == K) {
            if (i % 16 == 0 && i + 16 <= V) {
                int hit = 0;
                for (int j = 0; j < 16; j++) hit |= logits[i + j] > kth;
                if (!hit) {
                    i += 15;
                    continue;
                }
            }
            if (!(logits[i] > kth)) continue;
        }
        int lo = 0, hi = held; /* the first place whose logit logits[i] beats, or held */
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (logits[i] > logits[ids[mid]]) hi = mid;
            else lo = mid + 1;
        }
        int last = held < K ? held : K - 1; /* the last place that moves down, or is dropped */
        memmove(ids + lo + 1, ids + lo, (size_t)(last - lo) * sizeof *ids);
        ids[lo] = i;
        if (held < K) held++;
        if (held == K) kth = logits[ids[K - 1]];
    }
    for (int k = held; k < K; k++) ids[k] = -1;
}

/* The first index of the largest logit: the greedy choice.  The plain
 * loop (one compare and a dependent index per logit, not vectorised) was
 * a few % of a step over 8,000 logits; vec_max finds the value in vector
 * registers and a second pass (vectorised compares, from L1) its first
 * index.  Same answer: NaNs never win the loop's `>`, and with a NaN at
 * index 0 nothing beats it, so any row with a NaN in front, or a NaN
 * maximum, takes the loop itself. */
static int argmax(const float *logits, int V)
{
    float max = vec_max(logits, V);
    int best = 0;
    if (max == max && logits[0] == logits[0]) {
        for (; best + 16 <= V; best += 16) { /* blocks of 16 compares, then the one */
            int hit = 0;
            for (int j = 0; j < 16; j++) hit |= logits[best + j] == max;
            if (hit) break;
        }
        while (logits[best] != max) best++; /* max is one of them: ends */
        return best;
    }
    for (int i = 1; i < V; i++)
        if (logits[i] > logits[best]) best = i;
    return best;
}

void decode_ban_repeats(const int *history, int len, int n, float *logits)
{
    if (n < 1 || len < n - 1) return;
    /* The n-1 last tokens are the prefix an n-gram ending now would have;
     * each earlier occurrence of that prefix bans the token that followed
     * it.  O(len·n) per step: outputs are at most max_len tokens. */
    const int *prefix = history + len - (n - 1);
    for (int i = 0; i + n - 1 < len; i++)
        if (memcmp(history + i, prefix, (size_t)(n - 1) * sizeof *history) == 0)
            logits[history[i + n - 1]] = -INFINITY;
}

bool decode_rules_on(const DecodeRules *rules)
{
    return rules && (rules->no_repeat_ngram >= 1 || rules->numbers);
}

bool decode_rules_apply(const DecodeRules *rules, const int *src, int S)
{
    return rules && (rules->no_repeat_ngram >= 1 ||
                     (rules->numbers && number_rule_applies(rules->numbers, src, S)));
}

const bool *decode_rules_spaced(const DecodeRules *rules, int first)
{
    return rules && rules->src_spaced ? rules->src_spaced + first : NULL;
}

void decode_ban(const DecodeRules *rules, const int *src, const bool *spaced, int S, const int *history, int len,
                float *logits)
{
    if (!rules) return;
    decode_ban_repeats(history, len, rules->no_repeat_ngram, logits);
    /* Last: it looks at what the others left (number_rule.h) */
    if (rules->numbers) number_rule_ban(rules->numbers, src, spaced, S, history, len, logits);
}

/* The greedy choice after history[0..len-1] for source src[0..S-1]
 * (spaced as decode_ban's) under `rules`: argmax of the logits with the
 * banned tokens removed (scratch[V] holds the copy; without rules the
 * logits are read as they are, so the choice is the plain argmax, bit for
 * bit). */
static int choose(const float *logits, int V, const DecodeRules *rules, const int *src, const bool *spaced, int S,
                  const int *history, int len, float *scratch)
{
    if (!decode_rules_apply(rules, src, S)) return argmax(logits, V); /* no copy of the row */
    memcpy(scratch, logits, (size_t)V * sizeof *scratch);
    decode_ban(rules, src, spaced, S, history, len, scratch);
    return argmax(scratch, V);
}

void decode_top_logprobs(const float *logits, int V, float lse, int *ids, float *logprobs)
{
    decode_top_k(logits, V, TRANSLATION_TOP_K, ids);
    for (int k = 0; k < TRANSLATION_TOP_K; k++) logprobs[k] = ids[k] >= 0 ? logits[ids[k]] - lse : -INFINITY;
}

static void record_step(Translation *out, int t, const float *logits, int V, int chosen)
{
    float lse = decode_log_sum_exp(logits, V);
    out->output_ids[t] = chosen;
    out->logprobs[t] = logits[chosen] - lse;
    decode_top_logprobs(logits, V, lse, out->top_ids + (size_t)t * TRANSLATION_TOP_K,
                        out->top_logprobs + (size_t)t * TRANSLATION_TOP_K);
}

/* Copy the [H, rows, stride] blocks of the activations into the dense
 * [H, T, cols] layout of a Translation (only the first T rows and `cols`
 * columns are meaningful). */
static void copy_map(float *dst, const float *src, int H, int T, int cols, int rows, int stride)
{
    for (int h = 0; h < H; h++)
        for (int i = 0; i < T; i++)
            memcpy(dst + ((size_t)h * T + i) * cols, src + ((size_t)h * rows + i) * stride,
                   (size_t)cols * sizeof(float));
}

void decode_copy_target_maps(Translation *out, const Activations *acts, const Batch *batch, int b,
                             const ModelArch *a)
{
    int H = a->heads, S = out->src_len, T = out->steps;
    int cap = batch->kv_capacity ? batch->kv_capacity : T; /* rows reserved per target */
    for (int l = 0; l < a->decoder_layers; l++) {
        copy_map(out->decoder_attn + (size_t)l * H * T * T, transformer_decoder_map(acts, batch, l, b), H, T, T,
                 cap, cap);
        copy_map(out->cross_attn + (size_t)l * H * T * S, transformer_cross_map(acts, batch, l, b), H, T, S, cap,
                 S);
    }
}

/* Every map of the only sequence of `batch` into `out`. */
static void collect_maps(Translation *out, const Activations *acts, const Batch *batch, const ModelArch *a)
{
    size_t block = (size_t)a->heads * out->src_len * out->src_len; /* [H, S, S] */
    for (int l = 0; l < a->encoder_layers; l++)
        memcpy(out->encoder_attn + l * block, transformer_encoder_map(acts, batch, l, 0), block * sizeof(float));
    decode_copy_target_maps(out, acts, batch, 0, a);
}

void decode_greedy(Decoder *dec, const int *src_ids, int S, int limit, const DecodeRules *rules,
                   bool keep_logits, Translation *out)
{
    const Model *m = dec->model;
    const ModelArch *a = &m->arch;
    ASSERT(S >= 1 && S <= a->max_len && limit >= 1 && limit <= a->max_len);
    translation_init(out, a, src_ids, S, limit, keep_logits);
    float *scratch = decode_rules_on(rules) ? xmalloc((size_t)a->tgt_vocab * sizeof(float)) : NULL;

    /* One new row per step at position t; its keys and values go to row t
     * of the store (kv_start NULL: target 0 starts at row 0). */
    OneBatch one;
    int token = TOKEN_BOS;
    Batch *batch = transformer_one_batch(&one, src_ids, S, &token, 1);
    batch->kv_capacity = a->max_len;
    transformer_encode(&dec->acts, m, batch);
    for (int t = 0; t < limit; t++) {
        batch->tgt_pos = t;
        out->input_ids[t] = token;
        transformer_decode(&dec->acts, m, batch);
        const float *logits = dec->acts.logits; /* [1, V]: this step's row */
        int best = choose(logits, a->tgt_vocab, rules, src_ids, decode_rules_spaced(rules, 0), S, out->output_ids,
                          t, scratch);
        record_step(out, t, logits, a->tgt_vocab, best);
        if (dec->progress) dec->progress(dec->progress_context, t + 1, limit);
        if (out->logits) memcpy(out->logits + (size_t)t * a->tgt_vocab, logits, (size_t)a->tgt_vocab * sizeof(float));
        out->steps = t + 1;
        token = best;
        if (best == TOKEN_EOS) {
            out->finished = true;
            break;
        }
    }
    collect_maps(out, &dec->acts, batch, a);
    free(scratch);
}

void decode_teacher_forced(const Model *m, const int *src_ids, int S, const int *input_ids,
                           const int *output_ids, int T, Translation *out)
{
    const ModelArch *a = &m->arch;
    ASSERT(S >= 1 && S <= a->max_len && T >= 1 && T <= a->max_len);
    translation_init(out, a, src_ids, S, T, true);
    Activations acts;
    acts_alloc(&acts, a, acts_size_full(a, S, T, S > T ? S : T));
    OneBatch one;
    const Batch *batch = transformer_one_batch(&one, src_ids, S, input_ids, T);
    transformer_encode(&acts, m, batch);
    transformer_decode(&acts, m, batch);
    out->steps = T;
    memcpy(out->input_ids, input_ids, (size_t)T * sizeof(int));
    memcpy(out->logits, acts.logits, (size_t)T * a->tgt_vocab * sizeof(float));
    for (int t = 0; t < T; t++)
        record_step(out, t, acts.logits + (size_t)t * a->tgt_vocab, a->tgt_vocab, output_ids[t]);
    out->finished = output_ids[T - 1] == TOKEN_EOS;
    collect_maps(out, &acts, batch, a);
    acts_free(&acts);
}

/* Is logits[V]'s log-softmax finite at `chosen` (see decode.h)?  On the
 * bits: exponent all ones is NaN or Inf, and only -Inf is allowed. */
static bool step_finite(const float *logits, int V, int chosen)
{
    uint32_t bad = 0;
    for (int i = 0; i < V; i++) {
        uint32_t bits;
        memcpy(&bits, &logits[i], sizeof bits);
        bad |= (bits & 0x7f800000u) == 0x7f800000u && bits != 0xff800000u;
    }
    return !bad && isfinite(logits[chosen]);
}

void decode_greedy_many(const Model *m, const int *src_ids, const int *src_start, int count,
                        const int *limits, const DecodeRules *rules, int **outputs, int *lengths)
{
    decode_greedy_many_in(NULL, m, src_ids, src_start, count, limits, rules, outputs, lengths, NULL);
}

/* The activations decode_greedy_many_in needs for `count` sources of
 * src_rows tokens in all, none longer than src_longest: each sentence's
 * keys and values are max_len rows apart; no maps are shown. */
static ActsSize many_need(const ModelArch *arch, int count, int src_rows, int src_longest)
{
    return acts_size_batched(acts_size_steps(arch, count, arch->max_len, src_rows, src_longest));
}

ActsSize decode_greedy_many_bound(const ModelArch *arch, int count, int src_longest)
{
    return many_need(arch, count, count * src_longest, src_longest);
}

void decode_greedy_many_in(Activations *work, const Model *m, const int *src_ids, const int *src_start,
                           int count, const int *limits, const DecodeRules *rules, int **outputs, int *lengths,
                           bool *finite)
{
    const ModelArch *a = &m->arch;
    int cap = a->max_len, Ns = src_start[count], longest = 0, steps = 0, D = a->d_model;
    for (int b = 0; b < count; b++) {
        int S = src_start[b + 1] - src_start[b];
        ASSERT(S >= 1 && S <= cap && limits[b] >= 1 && limits[b] <= cap);
        if (S > longest) longest = S;
        if (limits[b] > steps) steps = limits[b];
        lengths[b] = 0;
        if (finite) finite[b] = true;
    }
    Activations local = {0}, *acts = work ? work : &local;
    acts_fit(acts, a, many_need(a, count, Ns, longest));
    int *tokens = xcalloc((size_t)count, sizeof(int)), *tgt_start = xcalloc((size_t)count + 1, sizeof(int));
    int *kv_start = xcalloc((size_t)count, sizeof(int)), *live_src = xcalloc((size_t)count + 1, sizeof(int));
    int *sentence = xcalloc((size_t)count, sizeof(int)); /* live row j decodes sentence[j] */
    float *scratch = decode_rules_on(rules) ? xmalloc((size_t)a->tgt_vocab * sizeof(float)) : NULL;
    for (int b = 0; b < count; b++) {
        tokens[b] = TOKEN_BOS;
        tgt_start[b + 1] = b + 1;
        kv_start[b] = b * cap;
        sentence[b] = b;
        live_src[b + 1] = src_start[b + 1];
    }
    Batch batch = {.count = count, .src_ids = src_ids, .src_start = src_start, .tgt_ids = tokens,
                   .tgt_start = tgt_start, .kv_start = kv_start, .kv_capacity = cap};
    transformer_encode(acts, m, &batch);
    batch.src_start = live_src; /* the live sentences' memory rows, packed (below) */
    int live = count;
    for (int t = 0; t < steps && live > 0; t++) {
        batch.tgt_pos = t;
        batch.count = live;
        transformer_decode(acts, m, &batch);
        /* A finished sentence leaves the batch: the live ones keep their
         * order and their K/V store rows (kv_start), and their
         * cross-attention keys and values move down to stay packed (each
         * layer's [S, D] pairs, a few KB), so the steps compute only live
         * rows.  Computing finished rows and ignoring them was most of a
         * sorted mini-batch's work: output lengths vary more than source
         * lengths.  Where the products' rows do not depend on each other
         * (gemm_f16.h), the tokens are those of each sentence alone. */
        int kept = 0;
        for (int j = 0; j < live; j++) {
            int b = sentence[j];
            const float *logits = acts->logits + (size_t)j * a->tgt_vocab;
            int best = choose(logits, a->tgt_vocab, rules, src_ids + src_start[b],
                              decode_rules_spaced(rules, src_start[b]), src_start[b + 1] - src_start[b], outputs[b],
                              lengths[b], scratch);
            if (finite && finite[b]) finite[b] = step_finite(logits, a->tgt_vocab, best);
            outputs[b][lengths[b]++] = best;
            if (best == TOKEN_EOS || lengths[b] == limits[b]) continue;
            int S = src_start[b + 1] - src_start[b];
            if (kept != j) {
                size_t from = (size_t)live_src[j] * D, to = (size_t)live_src[kept] * D, n = (size_t)S * D;
                for (int l = 0; l < a->decoder_layers; l++) {
                    AttentionActs *ca = &acts->decoder[l].cross_attn;
                    memmove(ca->k + to, ca->k + from, n * sizeof(float));
                    memmove(ca->v + to, ca->v + from, n * sizeof(float));
                }
            }
            sentence[kept] = b;
            tokens[kept] = best;
            kv_start[kept] = kv_start[j];
            live_src[kept + 1] = live_src[kept] + S;
            kept++;
        }
        live = kept;
    }
    free(scratch);
    free(sentence);
    free(live_src);
    free(kv_start);
    free(tgt_start);
    free(tokens);
    acts_free(&local);
}
