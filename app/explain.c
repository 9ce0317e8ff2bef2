/* explain.c — the walk-through and the terminal heatmap (see explain.h).
 *
 * The walk-through reruns the sentence as one teacher-forced pass over its
 * own output, greedy or beam search's best (the same numbers decoding
 * produced, see tests/test_model.c and tests/test_beam.c) so that every
 * intermediate value is at hand in the
 * activations; scores before the softmax are recomputed from Q and K for
 * display, the same formula as model/attention.c (q·k · scale) but summed
 * in plain order rather than vec_dot's eight partial sums, so they can
 * differ from the model's in the last bits (far below the 3 decimals
 * shown). */
#include "explain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../common/utf8.h"
#include "../common/util.h"
#include "../model/transformer.h"
#include "../tokenizer/detokenize.h"
#include "../tokenizer/tokenizer.h"

/* ---- printing helpers ---------------------------------------------------- */

/* The first few values of a row: "[0.123, -0.456, 0.789, 0.012, …]". */
static void preview(FILE *out, const float *row, int n)
{
    int shown = n < 4 ? n : 4;
    fputc('[', out);
    for (int i = 0; i < shown; i++) fprintf(out, "%s%.3f", i ? ", " : "", row[i]);
    fprintf(out, "%s]", n > shown ? ", …" : "");
}

/* `text` in exactly `columns` terminal columns: cut to fit (a Chinese
 * character takes two, tokenizer_fit_width) and padded with spaces, on the
 * left when `right` (right-aligned), else on the right. */
static void put_cell(FILE *out, const char *text, int columns, bool right)
{
    int width;
    size_t n = tokenizer_fit_width(text, strlen(text), columns, &width);
    if (right) fprintf(out, "%*s", columns - width, "");
    fwrite(text, 1, n, out);
    if (!right) fprintf(out, "%*s", columns - width, "");
}

/* Labels are the vocabulary's tokens as they are (but --show's column
 * labels, column_label); with a subword vocabulary this says how to read
 * them (tokenizer/vocab.h). */
#define PIECES_NOTE "a \"##\" piece continues the word before it, <0xXX> is one byte"

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
        float raw[ARCH_MAX_LEN], max = -INFINITY, total = 0.0f;
        int dk = D / H, n = keys; /* keys <= max_len */
        ASSERT(n <= ARCH_MAX_LEN);
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

/* The steps of one multi-head attention, with shapes.  q_from and kv_from
 * name what Q and K, V are computed from, as the formulas show it; `inputs`
 * (may be NULL) says what those names stand for. */
static void explain_attention(FILE *out, const char *what, const AttentionActs *a,
                              const float *probs, int Tq, int Tk, bool causal, const char *q_from,
                              const char *kv_from, const char *inputs, const ModelArch *arch)
{
    int D = arch->d_model, H = arch->heads, dk = D / H;
    float scale = arch->scale_attention ? 1.0f / sqrtf((float)dk) : 1.0f;
    fprintf(out, "    %s\n", what);
    if (inputs) fprintf(out, "      %s\n", inputs);
    fprintf(out, "      Q = %s·W_Qᵀ + b_Q   [%d, %d]   Q[1] = ", q_from, Tq, D);
    preview(out, a->q, D);
    fprintf(out, "\n      K = %s·W_Kᵀ + b_K   [%d, %d]   V = %s·W_Vᵀ + b_V   [%d, %d]\n", kv_from, Tk, D,
            kv_from, Tk, D);
    fprintf(out, "      split %d into %d head%s of d_k = %d: Q, K, V become [%d, %d, %d], [%d, %d, %d]\n",
            D, H, H > 1 ? "s" : "", dk, H, Tq, dk, H, Tk, dk);
    fprintf(out, "      scores = Q·Kᵀ%s   [%d, %d, %d]\n",
            arch->scale_attention ? " / √d_k" : " (not scaled: scale_attention is off)", H, Tq, Tk);
    if (causal)
        fprintf(out, "      mask: query i may not see keys after i: those scores become -inf, so their\n"
                     "            softmax weight is exactly 0 (the decoder cannot peek at the future)\n");
    else
        fprintf(out, "      mask: none — every query sees all %d keys\n", Tk);
    double var = raw_score_variance(a, Tq, Tk, causal, D, H);
    /* dividing a score by √d_k divides its variance by d_k */
    if (arch->scale_attention)
        fprintf(out, "      variance of the scores over all heads and %s: Q·Kᵀ %.2f, /√d_k %.2f (÷ d_k = %d)\n",
                causal ? "visible pairs" : "pairs", var, var / dk, dk);
    else
        fprintf(out, "      variance of the scores over all heads and %s: Q·Kᵀ %.2f, what the softmax sees "
                     "(not scaled)\n", causal ? "visible pairs" : "pairs", var);
    attention_row(out, a, probs, Tq, Tk, causal ? (Tq > 1 ? 1 : 0) : 0, causal, D, H, scale);
    fprintf(out, "      weights·V [%d, %d, %d] → concatenate heads [%d, %d] → output projection [%d, %d]\n",
            H, Tq, dk, Tq, D, Tq, D);
}

static void explain_sublayer_tail(FILE *out, const ModelArch *arch, int T, const float *out_row)
{
    fprintf(out, "    feed-forward: [%d, %d] → %s → [%d, %d]\n", T, arch->d_ff,
            arch_activation_name(arch->activation), T, arch->d_model);
    fprintf(out, "    each sublayer adds its input back (residual) and is %s-normalised; layer output [%d, %d] = ",
            arch->norm_first ? "pre" : "post", T, arch->d_model);
    preview(out, out_row, arch->d_model);
    fputc('\n', out);
}

/* ---- the walk-through ------------------------------------------------------ */

/* Which search produced the output, and what that means for the steps. */
static void steps_heading(FILE *out, const SearchSettings *d, const Translation *t, const bool *spaced)
{
    bool copies = d->copy_numbers && d->numbers && number_rule_applies(d->numbers, t->src_ids, t->src_len);
    if (d->beam > 1)
        fprintf(out, "Output, step by step: beam search (%d hypotheses, length penalty %g) produced it.\n"
                     "  It keeps the %d best-scoring partial translations at every step and returns the\n"
                     "  best-scoring one that ended with </s>; when the length limit stops it, those still\n"
                     "  unfinished compete too.\n"
                     "  So the token it kept need not be that step's most probable.\n",
                d->beam, d->length_penalty, d->beam);
    else
        fprintf(out, "Output, step by step: greedy decoding produced it (the most probable token each step%s).\n",
                d->no_repeat_ngram || copies ? ", unless banned" : "");
    if (d->no_repeat_ngram)
        fprintf(out, "  --no-repeat-ngram %d: a token that would repeat %d tokens already output is never kept.\n",
                d->no_repeat_ngram, d->no_repeat_ngram);
    if (copies) {
        fprintf(out, "  copy_numbers: the source has numbers, so a digit is kept only where it copies one\n"
                     "  of them, and a number ends only where it is whole; Chinese numerals and English\n"
                     "  number words likewise say only the source's values (model/number_rule.h has the\n"
                     "  details).\n");
        /* the one token the rule raises: kept at p = 0.000, rank 4424,
         * unexplained; said only where the source has a negative number,
         * as only there is 负 raised ("I have 3 apples." had it too) */
        bool raises = number_rule_reads_negative(d->numbers, t->src_ids, spaced, t->src_len);
        if (raises)
            fprintf(out, "  A negative number is written after its sign: where the model would begin one\n"
                         "  without it, 负 is kept first in its place, however improbable the model finds it.\n");
    }
    fprintf(out, "  Each step: the model's %d most probable next tokens after this translation's\n"
                 "  prefix, with their probabilities; * marks the token kept.\n", TRANSLATION_TOP_K);
}

/* The steps of `t`: what each read, its true top-k, and the token kept
 * (its rank counted in `logits` [T, V], the teacher-forced pass, when it
 * is not among the top-k). */
static void explain_steps(FILE *out, const Translator *tr, const Translation *t, const float *logits,
                          const bool *spaced)
{
    const Vocab *v = tr->tgt_vocab;
    int V = tr->config.arch.tgt_vocab;
    steps_heading(out, &tr->config.decode, t, spaced);
    int width = snprintf(NULL, 0, "%d", t->steps); /* the step numbers right-aligned, their rows too */
    for (int i = 0; i < t->steps; i++) {
        const int *top = t->top_ids + (size_t)i * TRANSLATION_TOP_K;
        const float *top_lp = t->top_logprobs + (size_t)i * TRANSLATION_TOP_K;
        int kept = t->output_ids[i], rank = 0;
        for (int k = 0; k < TRANSLATION_TOP_K && !rank; k++)
            if (top[k] == kept) rank = k + 1;
        if (!rank) { /* below the top-k: 1 + the tokens more probable */
            const float *row = logits + (size_t)i * V;
            rank = 1;
            for (int j = 0; j < V; j++) rank += row[j] > row[kept];
            if (rank <= TRANSLATION_TOP_K) rank = TRANSLATION_TOP_K + 1;
        }
        fprintf(out, "  step %*d: reads ", width, i + 1);
        put_cell(out, vocab_token(v, t->input_ids[i]), 8, false);
        fprintf(out, " → kept ");
        put_cell(out, vocab_token(v, kept), 8, false);
        fprintf(out, " p = %.3f, rank %d   top %d:", exp(t->logprobs[i]), rank, TRANSLATION_TOP_K);
        for (int k = 0; k < TRANSLATION_TOP_K; k++)
            if (top[k] >= 0)
                fprintf(out, "  %s%s %.3f", top[k] == kept ? "*" : "", vocab_token(v, top[k]), exp(top_lp[k]));
        if (rank > TRANSLATION_TOP_K) fprintf(out, "  … *%s %.3f", vocab_token(v, kept), exp(t->logprobs[i]));
        fputc('\n', out);
    }
    if (!t->finished)
        fprintf(out, "  (no </s> after %d steps: the length limit stopped it, so it may be cut short)\n",
                t->steps);
}


/* The user's text as typed, but for what would act on the terminal
 * instead of showing (tokenizer_is_hidden: controls, format characters
 * such as bidirectional overrides and zero-width marks, line separators)
 * as \\xNN (ASCII) or \\u{NNNN}; a
 * backslash or a double quote gets a backslash before it, so that a typed
 * backslash-x-1-B never reads as an escaped ESC, nor a quote as the end of
 * the text.  For the config's name and path too (explain.h). */
void explain_put_visible(FILE *out, const char *text)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t len = strlen(text);
    while (len) {
        int32_t cp;
        size_t k = utf8_decode(p, len, &cp);
        if (k == 0) { /* not UTF-8 (a config path may be anything): the byte */
            fprintf(out, "\\x%02X", *p);
            k = 1;
        } else if (*p == '\\' || *p == '"') {
            fprintf(out, "\\%c", *p);
        } else if (tokenizer_is_hidden(cp)) {
            fprintf(out, cp < 0x80 ? "\\x%02X" : "\\u{%04X}", (unsigned)cp);
        } else {
            fwrite(p, 1, k, out);
        }
        p += k;
        len -= k;
    }
}

void explain_print(FILE *out, const Translator *tr, const char *text, const SourceIds *src,
                   const Translation *t)
{
    const ModelArch *a = &tr->config.arch;
    int S = src->count, T = t->steps, D = a->d_model, H = a->heads;
    if (tr->config.random_init)
        fprintf(out, "NOTE: this model is untrained: its weights are random (seed %llu), so the numbers\n"
                     "show the computation, not a translation.\n\n",
                (unsigned long long)tr->config.random_seed);
    fprintf(out, "Model ");
    explain_put_visible(out, tr->config.name); /* the user's config: text like the sentence's */
    fprintf(out, " (");
    explain_put_visible(out, tr->config.path);
    fprintf(out, "): d_model %d, %d head%s of d_k %d, %d encoder + %d decoder layers, d_ff %d%s\n", D, H,
            H > 1 ? "s" : "", D / H, a->encoder_layers, a->decoder_layers, a->d_ff,
            tr->model.params.int8 ? "; the products read int8 weights (--int8)" : "");
    fprintf(out, "Rows, queries, heads, layers and steps are counted from 1 here: X[1] is X[0] in C and PyTorch.\n\n");

    /* One teacher-forced pass over the translation the search chose
     * (greedy's, or beam search's best), keeping every value. */
    Activations acts;
    acts_alloc(&acts, a, acts_size_full(a, S, T, S > T ? S : T));
    OneBatch one;
    const Batch *b = transformer_one_batch(&one, src->ids, S, t->input_ids, T);
    transformer_encode(&acts, &tr->model, b);
    transformer_decode(&acts, &tr->model, b);

    fprintf(out, "1. Text → tokens: \"");
    explain_put_visible(out, text);
    fprintf(out, "\" → ");
    tokens_line(out, tr->src_vocab, src->ids, S);
    if (vocab_is_subword(tr->src_vocab)) {
        size_t words = detokenize_words(tr->src_vocab, src->ids, (size_t)S, NULL, NULL);
        fprintf(out, "   (%d token%s of %zu word%s; " PIECES_NOTE ")\n", S, S == 1 ? "" : "s", words,
                words == 1 ? "" : "s");
    } else {
        fprintf(out, "   (%d token%s)\n", S, S == 1 ? "" : "s");
    }
    fprintf(out, "2. Tokens → ids: [");
    for (int i = 0; i < S; i++) fprintf(out, "%s%d", i ? ", " : "", src->ids[i]);
    fprintf(out, "]\n");
    fprintf(out, "3. X = embedding·√%d + positions   X: [%d, %d]   X[1] = ", D, S, D);
    preview(out, acts.src_x, D);
    fprintf(out, "\n\nEncoder (every source token looks at every source token)\n");
    for (int l = 0; l < a->encoder_layers; l++) {
        const EncoderLayerActs *e = &acts.encoder[l];
        fprintf(out, "  layer %d of %d\n", l + 1, a->encoder_layers);
        /* What each sublayer reads: pre-norm normalises a sublayer's
         * input, post-norm the sum after it (model/transformer.c). */
        bool pre = a->norm_first;
        if (l == 0)
            explain_attention(out, "self-attention:", &e->self_attn, transformer_encoder_map(&acts, b, l, 0), S, S,
                              false, pre ? "LN₁(X)" : "X", pre ? "LN₁(X)" : "X",
                              pre ? "(pre-norm: the sublayer reads LN₁(X), X through the layer's first LayerNorm)"
                                  : NULL, a);
        else
            fprintf(out, "    self-attention: Q, K, V [%d, %d] → %d head%s → [%d, %d, %d] maps → [%d, %d]\n", S, D,
                    H, H > 1 ? "s" : "", H, S, S, S, D);
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
            bool pre = a->norm_first; /* as in the encoder above */
            explain_attention(out, "masked self-attention:", &d->self_attn, transformer_decoder_map(&acts, b, l, 0), T,
                              T, true, pre ? "LN₁(Y)" : "Y", pre ? "LN₁(Y)" : "Y",
                              pre ? "(pre-norm: the sublayer reads LN₁(Y), Y through the layer's first LayerNorm)"
                                  : NULL, a);
            explain_attention(out, "cross-attention (Q from the decoder, K and V from the encoder's memory M):",
                              &d->cross_attn, transformer_cross_map(&acts, b, l, 0), T, S, false,
                              pre ? "LN₂(Y + A)" : "LN₁(Y + A)", "M",
                              pre ? "(A: the masked self-attention's output; Y + A, the residual sum, through "
                                    "the layer's second LayerNorm)"
                                  : "(A: the masked self-attention's output; Y + A, the residual sum, through "
                                    "the layer's first LayerNorm: post-norm)", a);
        } else {
            fprintf(out, "    masked self-attention [%d, %d, %d], cross-attention [%d, %d, %d]\n", H, T, T, H, T, S);
        }
        explain_sublayer_tail(out, a, T, d->out);
    }
    fprintf(out, "  final LayerNorm → output projection → logits: [%d, %d]\n\n", T, a->tgt_vocab);

    /* the source's spacing as the search read it (t's source is src's) */
    explain_steps(out, tr, t, acts.logits, t->src_len == src->count ? src->spaced : NULL);
    acts_free(&acts);
}

/* ---- the terminal heatmap ---------------------------------------------------- */

/* A layer or head number: 1 to 65536 in plain decimal digits, all of it
 * (sscanf's %d took "1x", " 2" and wrapped 4294967297 to 1). */
static bool parse_index(const char *text, size_t len, int *out)
{
    if (len < 1 || len > 5) return false;
    int v = 0;
    for (size_t i = 0; i < len; i++) {
        if (!ascii_is_digit(text[i])) return false;
        v = v * 10 + (text[i] - '0');
    }
    if (v < 1 || v > 65536) return false;
    *out = v;
    return true;
}

int explain_parse_show(const char *text, ShowChoice *out, Error *err)
{
    static const char *names[] = {"encoder", "decoder", "cross"};
    memset(out, 0, sizeof *out);
    size_t n = strcspn(text, ":");
    for (int i = 0; i < 3; i++)
        if (strlen(names[i]) == n && strncmp(text, names[i], n) == 0) out->kind = (ShowKind)(i + 1);
    int layer = 1, head = 1;
    bool ok = out->kind != SHOW_NONE;
    if (ok && text[n] == ':') { /* :LAYER or :LAYER:HEAD, nothing else */
        const char *l = text + n + 1;
        size_t ln = strcspn(l, ":");
        ok = parse_index(l, ln, &layer);
        if (ok && l[ln] == ':') ok = parse_index(l + ln + 1, strlen(l + ln + 1), &head);
    }
    if (!ok) return error_set(err, "--show: expected encoder|decoder|cross[:LAYER[:HEAD]], got '%s'", text);
    out->layer = layer - 1;
    out->head = head - 1;
    return 0;
}

bool explain_terminal_colour(void)
{
    const char *term = getenv("TERM"), *no_color = getenv("NO_COLOR");
    return isatty(STDOUT_FILENO) && term && *term && strcmp(term, "dumb") != 0 && !(no_color && *no_color);
}

int explain_terminal_width(void)
{
    const char *env = getenv("COLUMNS");
    char *end;
    long n = env && *env ? strtol(env, &end, 10) : 0;
    if (n > 0 && n <= 100000 && !*end) return (int)n;
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    return 80;
}

enum { ROW_LABEL = 11, CELL = 5 }; /* columns: a row's label, then " " + one cell per key */

/* What the shading means, in the cells' own drawing. */
static void show_legend(FILE *out, bool color, bool masked)
{
    static const char *shades[] = {" ", "░", "▒", "▓", "█"};
    static const char *ranges[] = {"< 0.125", "0.125-0.375", "0.375-0.625", "0.625-0.875", ">= 0.875"};
    fprintf(out, "legend:");
    if (color) {
        fprintf(out, " each cell prints its weight, on a grey from black (0) to white (1):");
        for (int i = 0; i <= 4; i++) {
            float w = (float)i / 4.0f;
            fprintf(out, " \033[48;5;%dm\033[38;5;%dm%5.2f\033[0m", 232 + (int)(w * 23.0f + 0.5f), w > 0.5f ? 16 : 255, w);
        }
    } else {
        for (int i = 0; i <= 4; i++)
            fprintf(out, "%s '%s%s%s%s' %s", i ? "," : "", shades[i], shades[i], shades[i], shades[i], ranges[i]);
    }
    fprintf(out, "%s\n", masked ? ", '  ·  ' masked future" : "");
}

/* A key's label in its CELL - 1 columns: the token, but a subword
 * vocabulary's byte token ("<0xF0>", "##<0x9F>": ids after the specials,
 * tokenizer/vocab.h) is written \xF0, which fits, where its first four
 * characters ("<0xF", "##<0") would not say which byte it is. */
static const char *column_label(const Vocab *v, int id, char buf[8])
{
    const char *token = vocab_token(v, id);
    if (vocab_is_subword(v) && id >= VOCAB_SPECIALS && id < VOCAB_SPECIALS + VOCAB_BYTE_TOKENS) {
        snprintf(buf, 8, "\\x%.2s", strchr(token, 'x') + 1);
        return buf;
    }
    return token;
}

/* Keys j0..j1-1 of the map m [rows, cols]: a header of key labels, then a
 * line per query.  Labels are cut and padded by display width. */
static void show_window(FILE *out, const float *m, int rows, int cols, int j0, int j1, const int *row_ids,
                        const Vocab *rv, const int *col_ids, const Vocab *cv, bool causal, bool color)
{
    static const char *shades[] = {" ", "░", "▒", "▓", "█"};
    fprintf(out, "%*s", ROW_LABEL + 1, "");
    for (int j = j0; j < j1; j++) {
        fputc(' ', out);
        char label[8];
        put_cell(out, column_label(cv, col_ids[j], label), CELL - 1, false);
    }
    fputc('\n', out);
    for (int i = 0; i < rows; i++) {
        put_cell(out, vocab_token(rv, row_ids[i]), ROW_LABEL, true);
        fputc(' ', out);
        for (int j = j0; j < j1; j++) {
            float w = m[(size_t)i * cols + j];
            bool masked = causal && j > i;
            const char *shade = shades[(int)(w * 4.0f + 0.5f)];
            if (color && masked) fprintf(out, "\033[48;5;236m  ·  \033[0m");
            else if (color) /* grey ramp 232..255; dark text on the bright cells */
                fprintf(out, "\033[48;5;%dm\033[38;5;%dm%5.2f\033[0m", 232 + (int)(w * 23.0f + 0.5f),
                        w > 0.5f ? 16 : 255, w);
            else if (masked) fprintf(out, "  ·  ");
            else fprintf(out, " %s%s%s%s", shade, shade, shade, shade);
        }
        fputc('\n', out);
    }
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

void explain_show(FILE *out, const Translator *tr, const Translation *t, ShowChoice show, bool color, int width)
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
    /* The note before the legend: the legend's line is the last before the
     * map, so a reader (or a script) finds the map right after it. */
    if (vocab_is_subword(rv) || vocab_is_subword(cv))
        fprintf(out, PIECES_NOTE "%s\n", vocab_is_subword(cv) ? " (\\xXX above a column)" : "");
    show_legend(out, color, show.kind == SHOW_DECODER);
    /* A map wider than the terminal is drawn in windows of the keys that
     * fit, one under the other, each with every row. */
    int fit = (width - ROW_LABEL - 1) / CELL;
    if (fit < 1) fit = 1;
    for (int j0 = 0; j0 < cols; j0 += fit) {
        int j1 = j0 + fit < cols ? j0 + fit : cols;
        if (cols > fit) fprintf(out, "keys %d-%d of %d:\n", j0 + 1, j1, cols);
        show_window(out, m, rows, cols, j0, j1, row_ids, rv, col_ids, cv, show.kind == SHOW_DECODER, color);
    }
}
