/* translate_input.c — the input translated, line by line or in batches
 * (see translate_input.h). */
#include "translate_input.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/line.h"
#include "../common/util.h"
#include "alignment.h"
#include "cli.h"
#include "explain.h"
#include "translate_outputs.h"

#define MAX_LINE_BYTES 65536 /* longer input lines are said and skipped, never stored whole */

/* ---- one sentence ------------------------------------------------------ */

/* The translations of input `id` (0-based) as plain lines or n-best lines,
 * with their alignments when asked (Marian's formats).  F0 is the raw
 * Σ log p of the tokens and </s>; WordPenalty minus the tokens (Moses's
 * sign); SCORE the length-normalised score the beam ranked by. */
static void print_translations(FILE *out, const TranslateOptions *opt, const Translator *tr, int id,
                               const Translation *t, char *const *texts, const float *scores, int n)
{
    for (int i = 0; i < (opt->n_best_lines ? n : 1); i++) {
        char *align = opt->alignment.kind != ALIGNMENT_NONE
                          ? alignment_format(&t[i], &tr->config.arch, opt->alignment) : NULL;
        if (opt->n_best_lines) {
            float raw = 0.0f; /* in step order, as beam_score sums */
            for (int k = 0; k < t[i].steps; k++) raw += t[i].logprobs[k];
            fprintf(out, "%d ||| %s%s%s ||| F0= %.4f WordPenalty= %d ||| %.4f\n", id, texts[i],
                    align ? " ||| " : "", align ? align : "", raw, -(t[i].steps - (t[i].finished ? 1 : 0)),
                    scores[i]);
        } else {
            fprintf(out, "%s%s%s\n", texts[i], align ? " ||| " : "", align ? align : "");
        }
        free(align);
    }
}

/* The model for a line and its source ids, the first step of translating
 * it: NULL, with the line's error said, when there is no model or the
 * text cannot be encoded (*status says why); else the notes on unknown
 * words and Traditional characters are said.  `say`: where (stderr, or a
 * batch's held-back messages of the line).  Both ways of translating (one
 * line, a batch) share it, so a line gets the same messages either way. */
static Translator *encode_line(Session *s, const char *text, size_t len, int line, SourceIds *src,
                               ExitStatus *status, FILE *say)
{
    Error err = {{0}};
    *status = EXIT_OK;
    memset(src, 0, sizeof *src);
    Translator *tr = translate_session_model_for(s, text, len, status, &err, say);
    if (tr) *status = translator_encode(tr, text, len, src, &err);
    if (*status != EXIT_OK) {
        fprintf(say, "translate: line %d: %s\n", line, err.message);
        translator_source_ids_free(src);
        return NULL;
    }
    if (src->unknown && !s->opt->quiet)
        fprintf(say, "translate: line %d: note: %d unknown word%s mapped to <unk>: %s\n", line,
                src->unknown, src->unknown > 1 ? "s" : "", src->unknown_list);
    if (src->simplified && !s->opt->quiet)
        fprintf(say, "translate: line %d: note: %d Traditional character%s read as Simplified\n", line,
                src->simplified, src->simplified > 1 ? "s" : "");
    return tr;
}

/* A translation that stopped at the length limit rather than at </s> may
 * be cut short (an input under max_len tokens can still need more than
 * max_len in the other language): said, or the user takes it for whole. */
static void note_cut_short(const Session *s, const Translator *tr, int line, int steps)
{
    if (!s->opt->quiet)
        fprintf(stderr, "translate: line %d: note: the translation stopped at the length limit (%d tokens%s): "
                "it may be cut short\n", line, steps,
                steps == tr->config.arch.max_len ? ", the model's max_len"
                                                 : ": the config's max_output_ratio x source tokens + max_output_extra");
}

/* An empty translation (the model ended it at once, or wrote only special
 * tokens) looks like the empty line of an input that failed: said, so a
 * script can tell them apart by stderr (status 0 all the same). */
static void note_empty(const Session *s, int line)
{
    if (!s->opt->quiet)
        fprintf(stderr, "translate: line %d: note: the model ended the translation at once: it is empty\n", line);
}

/* Translate one line; prints the translation (or an empty line) and returns
 * a status.  `line` numbers messages (1-based). */
static ExitStatus translate_one(Session *s, const char *text, size_t len, int line, FILE *logits)
{
    Error err = {{0}};
    ExitStatus status;
    SourceIds src;
    int which = translate_session_model_index(s, text, len);
    if (logits && s->logits_model >= 0 && s->logits_model != which) {
        /* Without -c each line picks its model; --logits is one [steps,
         * vocab] stream, which rows of another width would make unreadable.
         * Refused before the other model is opened (its maps would be
         * written, empty). */
        cli_say("translate", "line %d: --logits holds %s's rows (%d wide): this line reads as %s, "
                "for %s, whose rows are another width (translate each language with its own -c)",
                line, s->model[!which].tr.config.name, s->model[!which].tr.config.arch.tgt_vocab,
                which ? "Chinese" : "English", s->model[which].path);
        fputc('\n', s->out);
        return EXIT_INPUT;
    }
    Translator *tr = encode_line(s, text, len, line, &src, &status, stderr);
    if (!tr) {
        fputc('\n', s->out);
        return status;
    }
    if (logits) s->logits_model = which;
    enum { MAX_N = 64 };
    Translation t[MAX_N];
    char *texts[MAX_N];
    float scores[MAX_N];
    int n = translator_run(tr, &src, s->opt->n_best, logits != NULL, t, texts, scores);
    bool maps = s->opt->explain || s->opt->show.kind != SHOW_NONE || s->model[which].attention ||
                s->opt->alignment.kind != ALIGNMENT_NONE;
    status = translator_check_finite(tr, t, n, scores, maps, &err);
    if (status != EXIT_OK) {
        fprintf(stderr, "translate: line %d: %s\n", line, err.message);
        fputc('\n', s->out);
        goto done;
    }
    if (s->opt->explain) explain_print(s->out, tr, text, &src, &t[0]);
    if (s->opt->show.kind != SHOW_NONE)
        explain_show(s->out, tr, &t[0], s->opt->show, s->out == stdout && explain_terminal_colour(),
                     explain_terminal_width());
    if (s->opt->explain || s->opt->show.kind != SHOW_NONE) /* n-best lines start with their ID */
        fputs(s->opt->n_best_lines ? "translations:\n" : "translation: ", s->out);
    print_translations(s->out, s->opt, tr, line - 1, t, texts, scores, n);
    if (!t[0].finished) note_cut_short(s, tr, line, t[0].steps);
    else if (!texts[0][0]) note_empty(s, line);
    if (logits && t[0].logits)
        fwrite(t[0].logits, sizeof(float), (size_t)t[0].steps * tr->config.arch.tgt_vocab, logits);
    if (s->model[which].attention)
        attention_json_add(s->model[which].attention, line, text, &t[0], tr->src_vocab, tr->tgt_vocab, texts[0]);
done:
    for (int i = 0; i < n; i++) {
        free(texts[i]);
        translation_free(&t[i]);
    }
    translator_source_ids_free(&src);
    return status;
}

/* Has writing the translations (or the --logits stream, when given)
 * failed?  Each line is flushed as soon as it is decided (issue 14): a
 * client that sends one line and waits for one reply must get it, the
 * empty line of a failed input too.  A failed file's error is reported by
 * its commit (translate_outputs_finish_file).  Marks the session stopped
 * when it has. */
static bool stop_if_output_failed(Session *s, FILE *logits)
{
    bool failed = s->out == stdout ? translate_outputs_stdout_failed() : fflush(s->out) != 0 || ferror(s->out);
    if (!failed && logits && logits != stdout) failed = fflush(logits) != 0 || ferror(logits);
    if (failed) s->stopped = true;
    return failed;
}

/* ---- reading lines ------------------------------------------------------ */

/* A directory, a closed descriptor, an I/O error (errno `error`): what
 * was read of the line is not a whole line, and the rest is lost.  Said
 * once; the run stops (*result EXIT_INPUT). */
static void say_unreadable(Session *s, const char *in_name, int error, ExitStatus *result)
{
    cli_say("translate", "%s: cannot read: %s", in_name, strerror(error ? error : EIO));
    *result = cli_worse(*result, EXIT_INPUT);
    s->stopped = true;
}

/* The next line of `in` into buf: its length; LINE_TOO_LONG once byte
 * MAX_LINE_BYTES + 1 is read (the caller says so, answers the line, then
 * calls skip_rest: so even a line that never ends is said at once); or
 * LINE_EOF at the end of input or when reading failed, *read_error then
 * errno (else left 0), for the caller to say once the lines read before
 * are answered: a batch's messages on them come first, in line order. */
static long next_line(FILE *in, char *buf, int *read_error)
{
    long n = line_read_or_stop(in, buf, MAX_LINE_BYTES);
    if (!ferror(in)) return n;
    *read_error = errno ? errno : EIO;
    return LINE_EOF;
}

static void say_too_long(FILE *say, int line)
{
    fprintf(say, "translate: line %d: longer than %d bytes: not translated\n", line, MAX_LINE_BYTES);
}

/* Read past the end of the over-long line just answered; false when
 * reading failed (said). */
static bool skip_rest(Session *s, FILE *in, const char *in_name, ExitStatus *result)
{
    line_skip_rest(in);
    if (!ferror(in)) return true;
    say_unreadable(s, in_name, errno, result);
    return false;
}

/* ---- many lines at once (issue 12) ------------------------------------ */

/* Can the lines of `in` be read ahead and translated in batches?  Only
 * for plain output (translate_options_want_more_than_text) and when asked:
 * --maxi-batch above 1, or by default when `in` is not a terminal
 * (someone typing a line waits for its answer). */
static bool batched(const Session *s, FILE *in)
{
    const TranslateOptions *o = s->opt;
    int maxi = o->maxi_batch ? o->maxi_batch : isatty(fileno(in)) ? 1 : TRANSLATE_MAXI_BATCH;
    return maxi > 1 && !translate_options_want_more_than_text(o);
}

/* One line of a maxi-batch. */
typedef struct {
    Translator *tr;         /* NULL: not translatable, its error held back */
    SourceIds src;
    ExitStatus status;
    char *held;             /* what encoding it said (malloc'd, may be NULL),
                               said when it is written */
    char *text;             /* the translation (malloc'd), or NULL */
    bool cut;               /* it stopped at the length limit */
    Error err;              /* when translating it failed */
} BatchLine;

/* Encode line `line` of a maxi-batch, with the messages one line at a
 * time gives it (a too-long line's error, else encode_line's, the note on
 * the model it opens among them), but held back in l->held: the lines
 * before it are not written yet, and their notes on their translations
 * (cut short, empty) come first, as they do one line at a time. */
static void encode_held_back(Session *s, const char *text, long len, int line, BatchLine *l)
{
    size_t size;
    FILE *held = open_memstream(&l->held, &size);
    FILE *say = held ? held : stderr; /* no memory for it: said now, out of place rather than lost */
    if (len == LINE_TOO_LONG) {
        say_too_long(say, line);
        l->status = EXIT_INPUT;
    } else {
        l->tr = encode_line(s, text, (size_t)len, line, &l->src, &l->status, say);
    }
    if (held) fclose(held);
}

/* Translate the n lines buf[0..n-1] (numbered from first_line): encode
 * each in input order (its messages held back), decode each model's lines
 * together (translator_run_many), then write every line's result in input
 * order, each line's messages on stderr with it (standard output flushed
 * before them), in the order one line at a time says them: those of its
 * encoding, then those of its translation.  Every line's are said, whatever became of the
 * others. */
static ExitStatus translate_batch(Session *s, char **buf, const long *lens, int n, int first_line)
{
    ExitStatus result = EXIT_OK;
    BatchLine *lines = xcalloc((size_t)n, sizeof *lines);
    for (int i = 0; i < n; i++) encode_held_back(s, buf[i], lens[i], first_line + i, &lines[i]);
    int mini = s->opt->mini_batch ? s->opt->mini_batch : TRANSLATE_MINI_BATCH;
    SourceIds *srcs = xcalloc((size_t)n, sizeof *srcs);
    char **texts = xcalloc((size_t)n, sizeof *texts);
    ExitStatus *statuses = xcalloc((size_t)n, sizeof *statuses);
    Error *errs = xcalloc((size_t)n, sizeof *errs);
    int *index = xcalloc((size_t)n, sizeof *index);
    bool *cut = xcalloc((size_t)n, sizeof *cut);
    for (int m = 0; m < 2; m++) {
        int count = 0;
        for (int i = 0; i < n; i++)
            if (lines[i].tr == &s->model[m].tr) {
                index[count] = i;
                srcs[count++] = lines[i].src;
            }
        translator_run_many(&s->model[m].tr, srcs, count, mini, texts, statuses, errs, cut);
        for (int k = 0; k < count; k++) {
            BatchLine *l = &lines[index[k]];
            l->text = texts[k];
            l->status = statuses[k];
            l->err = errs[k];
            l->cut = cut[k];
        }
    }
    bool failed = false;
    for (int i = 0; i < n; i++) {
        BatchLine *l = &lines[i];
        /* The output holds the lines before this one unflushed: a line with
         * messages sends them first, so that with both streams in one log
         * (2>&1, or -o /dev/stdout) its messages come with it, as one line
         * at a time gives them, not all of a batch's before its first line.
         * Once that write fails the run stops there, as one line at a time
         * does (stop_if_output_failed). */
        bool says = (l->held && l->held[0]) || (l->tr && l->status != EXIT_OK) || l->cut ||
                    (l->tr && l->text && !l->text[0]);
        if (!failed && says) failed = stop_if_output_failed(s, NULL);
        if (failed) {
            free(l->text);
            free(l->held);
            translator_source_ids_free(&l->src);
            continue;
        }
        if (l->held) fputs(l->held, stderr);
        if (l->tr && l->status != EXIT_OK)
            fprintf(stderr, "translate: line %d: %s\n", first_line + i, l->err.message);
        else if (l->cut)
            note_cut_short(s, l->tr, first_line + i,
                           search_limit(&l->tr->model.arch, &l->tr->config.decode, l->src.count));
        else if (l->tr && l->text && !l->text[0])
            note_empty(s, first_line + i);
        fprintf(s->out, "%s\n", l->text ? l->text : "");
        result = cli_worse(result, l->status);
        free(l->text);
        free(l->held);
        translator_source_ids_free(&l->src);
    }
    free(cut);
    free(index);
    free(errs);
    free(statuses);
    free(texts);
    free(srcs);
    free(lines);
    return result;
}

/* Would reading `in` now return at once (data waiting, its end, or an
 * error), rather than wait for a writer?  A maxi-batch takes only lines
 * that are already there: a client that sends one line down a pipe and
 * waits for its reply gets it (issue 14), while a file fills whole
 * batches.  (Lines stdio has buffered but the descriptor no longer
 * shows only end a batch early.) */
static bool input_waiting(FILE *in)
{
    struct pollfd p = {.fd = fileno(in), .events = POLLIN};
    return poll(&p, 1, 0) == 1;
}

/* The lines of `in` read a maxi-batch at a time, until the input ends,
 * cannot be read (what was read before is still translated, and its
 * messages come before that error's), or the output fails.  An over-long
 * line ends its batch, so that its message comes in line order before the
 * rest of it is read. */
static ExitStatus translate_batches(Session *s, FILE *in, const char *in_name)
{
    int maxi = s->opt->maxi_batch ? s->opt->maxi_batch : TRANSLATE_MAXI_BATCH;
    char *scratch = xmalloc(MAX_LINE_BYTES + 1);
    char **buf = xcalloc((size_t)maxi, sizeof *buf); /* each line copied at its length */
    long *lens = xcalloc((size_t)maxi, sizeof *lens);
    ExitStatus result = EXIT_OK;
    int read_error = 0;
    bool more = true;
    for (int first = 1; more;) {
        int n = 0;
        bool too_long = false;
        while (!too_long && n < maxi && (n == 0 || input_waiting(in))) {
            lens[n] = next_line(in, scratch, &read_error);
            if (lens[n] == LINE_EOF) {
                more = false;
                break;
            }
            too_long = lens[n] == LINE_TOO_LONG;
            size_t bytes = lens[n] >= 0 ? (size_t)lens[n] : 0;
            buf[n] = xmalloc(bytes + 1);
            memcpy(buf[n], scratch, bytes);
            buf[n][bytes] = '\0';
            n++;
        }
        if (n > 0) result = cli_worse(result, translate_batch(s, buf, lens, n, first));
        for (int i = 0; i < n; i++) {
            free(buf[i]);
            buf[i] = NULL;
        }
        first += n;
        if (stop_if_output_failed(s, NULL)) {
            result = cli_worse(result, EXIT_WRITE);
            break;
        }
        if (too_long && !skip_rest(s, in, in_name, &result)) break;
    }
    if (read_error) say_unreadable(s, in_name, read_error, &result);
    free(lens);
    free(buf);
    free(scratch);
    return result;
}

ExitStatus translate_input_all(Session *s, int n_texts, char **texts, FILE *in, const char *in_name,
                               FILE *logits)
{
    ExitStatus result = EXIT_OK;
    if (!in) {
        for (int i = 0; i < n_texts; i++) {
            result = cli_worse(result, translate_one(s, texts[i], strlen(texts[i]), i + 1, logits));
            if (stop_if_output_failed(s, logits)) return cli_worse(result, EXIT_WRITE);
        }
        return result;
    }
    if (batched(s, in)) return translate_batches(s, in, in_name);
    char *buf = xmalloc(MAX_LINE_BYTES + 1);
    int read_error = 0;
    long n;
    for (int line = 1; (n = next_line(in, buf, &read_error)) != LINE_EOF; line++) {
        if (n == LINE_TOO_LONG) {
            say_too_long(stderr, line);
            fputc('\n', s->out);
            result = cli_worse(result, EXIT_INPUT);
        } else {
            result = cli_worse(result, translate_one(s, buf, (size_t)n, line, logits));
        }
        if (stop_if_output_failed(s, logits)) {
            result = cli_worse(result, EXIT_WRITE);
            break;
        }
        if (n == LINE_TOO_LONG && !skip_rest(s, in, in_name, &result)) break;
    }
    if (read_error) say_unreadable(s, in_name, read_error, &result);
    free(buf);
    return result;
}
