/* explain.c — the walk-through and the terminal heatmap (see explain.h).
 *
 * The walk-through reruns the sentence as one teacher-forced pass over its
 * own greedy output (the same numbers decoding produced, see
 * tests/test_model.c) so that every intermediate value is at hand in the
 * activations; scores before the softmax are recomputed from Q and K for
 * display, the same formula as model/attention.c (q·k · scale) but summed
 * in plain order rather than vec_dot's eight partial sums, so they can
 * differ from the model's in the last bits (far below the 3 decimals
 * shown). */
#include "explain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "../model/transformer.h"

/* ---- printing helpers ---------------------------------------------------- */

/* The first few values of a row: "[0.123, -0.456, 0.789, 0.012, …]". */
static void preview(FILE *out, const float *row, int n)
{
    int shown = n < 4 ? n : 4;
    fputc('[', out);
    for (int i = 0; i < shown; i++) fprintf(out, "%s%.3f", i ? ", " : "", row[i]);
    fprintf(out, "%s]", n > shown ? ", …" : "");
}

static void tokens_line(FILE *out, const Vocab *v, const int *ids, int n)
{
    for (int i = 0; i < n; i++) fprintf(out, "%s%s", i ? " | " : "", vocab_token(v, ids[i]));
}

/* Score of query i against key j for one head, before the softmax. */
static float score(const float *q, const float *k, int i, int j, int h, int D, int dk, float scale)
{
    float s = 0.0f;
    for (int c = 0; c < dk; c++) s += q[(size_t)i * D + h * dk + c] * k[(size_t)j * D + h * dk + c];
    return s * scale;
}

/* Variance of the raw scores q·k over every head and visible (query, key)
 * pair: the number behind dividing by √d_k.  With q and k entries of
 * variance ~1, q·k sums d_k products and has variance ~d_k; the softmax of
 * such large scores is nearly one-hot and its gradient nearly zero. */
static double raw_score_variance(const AttentionActs *a, int Tq, int Tk, bool causal, int D, int H)
{
    int dk = D / H;
    double sum = 0, sum_sq = 0;
    long n = 0;
    for (int h = 0; h < H; h++)
        for (int i = 0; i < Tq; i++)
            for (int j = 0; j < Tk && (!causal || j <= i); j++) {
                double s = score(a->q, a->k, i, j, h, D, dk, 1.0f);
                sum += s;
                sum_sq += s * s;
                n++;
            }
    double mean = sum / n;
    return sum_sq / n - mean * mean;
}

/* Head 0, query row 0: scores, then probabilities (masked keys shown). */
static void attention_row(FILE *out, const AttentionActs *a, const float *probs, int rows, int keys,
                          int row, bool causal, int D, int H, float scale)
{
    int dk = D / H;
    fprintf(out, "      head 1, query %d, scores QKᵀ·%s: [", row + 1, scale == 1.0f ? "1" : "1/√d_k");
    for (int j = 0; j < keys; j++) {
        if (causal && j > row) fprintf(out, "%s-inf", j ? ", " : "");
        else fprintf(out, "%s%.3f", j ? ", " : "", score(a->q, a->k, row, j, 0, D, dk, scale));
    }
    fprintf(out, "]\n      after softmax:                 [");
    double sum = 0;
    for (int j = 0; j < keys; j++) {
        fprintf(out, "%s%.3f", j ? ", " : "", probs[(size_t)row * keys + j]);
        sum += probs[(size_t)row * keys + j];
    }
    fprintf(out, "]  (sums to %.6f)\n", sum);
    if (causal) { /* the same row if the future were not hidden */
        float raw[4096], max = -INFINITY, total = 0.0f;
        int dk = D / H, n = keys < 4096 ? keys : 4096;
        for (int j = 0; j < n; j++) {
            raw[j] = score(a->q, a->k, row, j, 0, D, dk, scale);
            if (raw[j] > max) max = raw[j];
        }
        for (int j = 0; j < n; j++) total += raw[j] = expf(raw[j] - max);
        fprintf(out, "      without the mask it would be:  [");
        for (int j = 0; j < n; j++) fprintf(out, "%s%.3f", j ? ", " : "", raw[j] / total);
        fprintf(out, "]  (weight on future tokens the\n"
                     "            decoder must not see when it predicts them)\n");
    }
    (void)rows;
}

/* The steps of one multi-head attention, with shapes. */
static void explain_attention(FILE *out, const char *what, const AttentionActs *a,
                              const float *probs, int Tq, int Tk, bool causal, const char *q_from,
                              const char *kv_from, const ModelArch *arch)
{
    int D = arch->d_model, H = arch->heads, dk = D / H;
    float scale = arch->scale_attention ? 1.0f / sqrtf((float)dk) : 1.0f;
    fprintf(out, "    %s\n", what);
    fprintf(out, "      Q = %s·W_Qᵀ + b_Q   [%d, %d]   Q[1] = ", q_from, Tq, D);
    preview(out, a->q, D);
    fprintf(out, "\n      K = %s·W_Kᵀ + b_K   [%d, %d]   V = %s·W_Vᵀ + b_V   [%d, %d]\n", kv_from, Tk, D,
            kv_from, Tk, D);
    fprintf(out, "      split %d into %d heads of d_k = %d: Q, K, V become [%d, %d, %d], [%d, %d, %d]\n",
            D, H, dk, H, Tq, dk, H, Tk, dk);
    fprintf(out, "      scores = Q·Kᵀ%s   [%d, %d, %d]\n",
            arch->scale_attention ? " / √d_k" : " (not scaled: scale_attention is off)", H, Tq, Tk);
    if (causal)
        fprintf(out, "      mask: query i may not see keys after i: those scores become -inf, so their\n"
                     "            softmax weight is exactly 0 (the decoder cannot peek at the future)\n");
    else
        fprintf(out, "      mask: none — every query sees all %d keys\n", Tk);
    double var = raw_score_variance(a, Tq, Tk, causal, D, H);
    fprintf(out, "      variance of the scores over all heads and pairs: Q·Kᵀ %.2f, /√d_k %.2f\n", var,
                 var / dk);
    attention_row(out, a, probs, Tq, Tk, causal ? (Tq > 1 ? 1 : 0) : 0, causal, D, H, scale);
    fprintf(out, "      weights·V [%d, %d, %d] → concatenate heads [%d, %d] → output projection [%d, %d]\n",
            H, Tq, dk, Tq, D, Tq, D);
}

static void explain_sublayer_tail(FILE *out, const ModelArch *arch, int T, const float *out_row)
{
    fprintf(out, "    feed-forward: [%d, %d] → %s → [%d, %d]\n", T, arch->d_ff,
            activation_name(arch->activation), T, arch->d_model);
    fprintf(out, "    each sublayer adds its input back (residual) and is %s-normalised; layer output [%d, %d] = ",
            arch->norm_first ? "pre" : "post", T, arch->d_model);
    preview(out, out_row, arch->d_model);
    fputc('\n', out);
}

/* ---- the walk-through ------------------------------------------------------ */

void explain_print(FILE *out, const Translator *tr, const char *text, const SourceIds *src,
                   const Translation *t)
{
    const ModelArch *a = &tr->config.arch;
    int S = src->count, T = t->steps, D = a->d_model, H = a->heads;
    if (tr->config.random_init)
        fprintf(out, "NOTE: this model is untrained: its weights are random (seed %llu), so the numbers\n"
                     "show the computation, not a translation.\n\n",
                (unsigned long long)tr->config.random_seed);
    fprintf(out, "Model %s (%s): d_model %d, %d heads of d_k %d, %d encoder + %d decoder layers, d_ff %d\n\n",
            tr->config.name, tr->config.path, D, H, D / H, a->encoder_layers, a->decoder_layers, a->d_ff);

    /* A teacher-forced pass over the greedy output, keeping every value. */
    Activations acts;
    acts_alloc(&acts, a, acts_size_full(a, S, T, S > T ? S : T));
    OneBatch one;
    const Batch *b = transformer_one_batch(&one, src->ids, S, t->input_ids, T);
    transformer_encode(&acts, &tr->model, b);
    transformer_decode(&acts, &tr->model, b);

    fprintf(out, "1. Text → tokens: \"%s\" → ", text);
    tokens_line(out, tr->src_vocab, src->ids, S);
    fprintf(out, "   (%d tokens)\n", S);
    fprintf(out, "2. Tokens → ids: [");
    for (int i = 0; i < S; i++) fprintf(out, "%s%d", i ? ", " : "", src->ids[i]);
    fprintf(out, "]\n");
    fprintf(out, "3. X = embedding·√%d + positions   X: [%d, %d]   X[1] = ", D, S, D);
    preview(out, acts.src_x, D);
    fprintf(out, "\n\nEncoder (every source token looks at every source token)\n");
    for (int l = 0; l < a->encoder_layers; l++) {
        const EncoderLayerActs *e = &acts.encoder[l];
        fprintf(out, "  layer %d of %d\n", l + 1, a->encoder_layers);
        if (l == 0)
            explain_attention(out, "self-attention:", &e->self_attn, transformer_encoder_map(&acts, b, l, 0), S, S,
                              false, "X", "X", a);
        else
            fprintf(out, "    self-attention: Q, K, V [%d, %d] → %d heads → [%d, %d, %d] maps → [%d, %d]\n", S, D,
                    H, H, S, S, S, D);
        explain_sublayer_tail(out, a, S, e->out);
    }
    fprintf(out, "  final LayerNorm → memory M: [%d, %d] (the keys and values of cross-attention)\n\n", S, D);

    fprintf(out, "Decoder (reads <s> + its own output so far, one token per step)\n");
    fprintf(out, "  inputs: ");
    tokens_line(out, tr->tgt_vocab, t->input_ids, T);
    fprintf(out, "   Y = embedding·√%d + positions: [%d, %d]\n", D, T, D);
    for (int l = 0; l < a->decoder_layers; l++) {
        const DecoderLayerActs *d = &acts.decoder[l];
        fprintf(out, "  layer %d of %d\n", l + 1, a->decoder_layers);
        if (l == 0) {
            explain_attention(out, "masked self-attention:", &d->self_attn, transformer_decoder_map(&acts, b, l, 0), T,
                              T, true, "Y", "Y", a);
            explain_attention(out, "cross-attention (Q from the decoder, K and V from the encoder's memory M):",
                              &d->cross_attn, transformer_cross_map(&acts, b, l, 0), T, S, false, "Y", "M", a);
        } else {
            fprintf(out, "    masked self-attention [%d, %d, %d], cross-attention [%d, %d, %d]\n", H, T, T, H, T, S);
        }
        explain_sublayer_tail(out, a, T, d->out);
    }
    fprintf(out, "  final LayerNorm → output projection → logits: [%d, %d]\n\n", T, a->tgt_vocab);

    fprintf(out, "Output, step by step (the most probable token each time)\n");
    for (int i = 0; i < T; i++) {
        fprintf(out, "  step %d: reads %-8s → chooses %-10s p = %.3f   (then:", i + 1,
                vocab_token(tr->tgt_vocab, t->input_ids[i]), vocab_token(tr->tgt_vocab, t->output_ids[i]),
                exp(t->logprobs[i]));
        for (int k = 1; k < DECODE_TOP_K; k++) {
            int id = t->top_ids[(size_t)i * DECODE_TOP_K + k];
            if (id >= 0)
                fprintf(out, " %s %.3f", vocab_token(tr->tgt_vocab, id),
                        exp(t->top_logprobs[(size_t)i * DECODE_TOP_K + k]));
        }
        fprintf(out, ")\n");
    }
    acts_free(&acts);
}

/* ---- the terminal heatmap ---------------------------------------------------- */

int explain_parse_show(const char *text, ShowChoice *out, Error *err)
{
    static const char *names[] = {"encoder", "decoder", "cross"};
    memset(out, 0, sizeof *out);
    size_t n = strcspn(text, ":");
    for (int i = 0; i < 3; i++)
        if (strlen(names[i]) == n && strncmp(text, names[i], n) == 0) out->kind = (ShowKind)(i + 1);
    int layer = 1, head = 1;
    char extra;
    if (out->kind == SHOW_NONE || (text[n] == ':' && sscanf(text + n, ":%d:%d%c", &layer, &head, &extra) < 1) ||
        layer < 1 || head < 1)
        return error_set(err, "--show: expected encoder|decoder|cross[:LAYER[:HEAD]], got '%s'", text);
    if (text[n] == ':') sscanf(text + n, ":%d:%d", &layer, &head);
    out->layer = layer - 1;
    out->head = head - 1;
    return 0;
}

int explain_check_show(ShowChoice show, const ModelArch *a, const char *config_path, Error *err)
{
    const char *side = show.kind == SHOW_ENCODER ? "encoder" : "decoder";
    int layers = show.kind == SHOW_ENCODER ? a->encoder_layers : a->decoder_layers;
    if (show.kind != SHOW_NONE && show.layer >= layers)
        return error_set(err, "--show: layer %d does not exist: %s has %d %s layer%s", show.layer + 1,
                         config_path, layers, side, layers > 1 ? "s" : "");
    if (show.kind != SHOW_NONE && show.head >= a->heads)
        return error_set(err, "--show: head %d does not exist: %s has %d head%s", show.head + 1,
                         config_path, a->heads, a->heads > 1 ? "s" : "");
    return 0;
}

void explain_show(FILE *out, const Translator *tr, const Translation *t, ShowChoice show, bool color)
{
    const ModelArch *a = &tr->config.arch;
    int layers = show.kind == SHOW_ENCODER ? a->encoder_layers : a->decoder_layers;
    int layer = show.layer < layers ? show.layer : layers - 1, head = show.head < a->heads ? show.head : a->heads - 1;
    int S = t->src_len, T = t->steps, H = a->heads;
    int rows = show.kind == SHOW_ENCODER ? S : T, cols = show.kind == SHOW_DECODER ? T : S;
    const float *maps = show.kind == SHOW_ENCODER ? t->encoder_attn
                        : show.kind == SHOW_DECODER ? t->decoder_attn : t->cross_attn;
    const float *m = maps + ((size_t)layer * H + head) * rows * cols;
    const int *row_ids = show.kind == SHOW_ENCODER ? t->src_ids : t->input_ids;
    const int *col_ids = show.kind == SHOW_CROSS || show.kind == SHOW_ENCODER ? t->src_ids : t->input_ids;
    const Vocab *rv = show.kind == SHOW_ENCODER ? tr->src_vocab : tr->tgt_vocab;
    const Vocab *cv = show.kind == SHOW_DECODER ? tr->tgt_vocab : tr->src_vocab;
    const char *kind = show.kind == SHOW_ENCODER ? "encoder self-attention"
                       : show.kind == SHOW_DECODER ? "decoder masked self-attention" : "cross-attention";
    fprintf(out, "%s, layer %d, head %d (rows: queries, columns: keys; %s = more attention%s)\n", kind,
            layer + 1, head + 1, color ? "brighter" : "denser",
            show.kind == SHOW_DECODER ? "; · = masked future" : "");
    fprintf(out, "%12s", "");
    for (int j = 0; j < cols; j++) fprintf(out, " %-4.4s", vocab_token(cv, col_ids[j]));
    fputc('\n', out);
    static const char *shades[] = {" ", "░", "▒", "▓", "█"};
    for (int i = 0; i < rows; i++) {
        fprintf(out, "%11.11s ", vocab_token(rv, row_ids[i]));
        for (int j = 0; j < cols; j++) {
            float w = m[(size_t)i * cols + j];
            bool masked = show.kind == SHOW_DECODER && j > i;
            if (color && masked) fprintf(out, "\033[48;5;236m  ·  \033[0m");
            else if (color) /* grey ramp 232..255; dark text on the bright cells */
                fprintf(out, "\033[48;5;%dm\033[38;5;%dm%5.2f\033[0m", 232 + (int)(w * 23.0f + 0.5f),
                        w > 0.5f ? 16 : 255, w);
            else if (masked) fprintf(out, "  ·  ");
            else fprintf(out, " %s%s%s%s", shades[(int)(w * 4.0f + 0.5f)], shades[(int)(w * 4.0f + 0.5f)],
                         shades[(int)(w * 4.0f + 0.5f)], shades[(int)(w * 4.0f + 0.5f)]);
        }
        fputc('\n', out);
    }
}
