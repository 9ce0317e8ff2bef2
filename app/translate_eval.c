/* translate_eval.c — translate --eval (see translate_eval.h). */
#include "translate_eval.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../common/utf8.h"
#include "../data/dataset.h"
#include "../eval/bootstrap.h"
#include "../eval/evaluate.h"
#include "../tokenizer/tokenizer.h"
#include "cli.h"
#include "translate_outputs.h"
#include "translator.h"

/* --compare: this run (B) against the file's translations (A), metric by
 * metric, with the paired bootstrap's 95% interval (eval/bootstrap.h). */
static void print_comparison(const char *path, const EvalScores *their_scores,
                             const EvalSentences *theirs, const EvalSentences *mine, size_t n)
{
    BootstrapResult bleu, chrf;
    bootstrap_bleu(theirs->bleu, mine->bleu, n, BOOTSTRAP_RESAMPLES, &bleu);
    bootstrap_chrf(theirs->chrf, mine->chrf, n, BOOTSTRAP_RESAMPLES, &chrf);
    printf("compared with %s (BLEU %.2f  chrF2 %.2f), paired bootstrap over %d resamples:\n", path,
           their_scores->bleu, their_scores->chrf, BOOTSTRAP_RESAMPLES);
    const struct { const char *name; const BootstrapResult *r; } rows[] = {{"BLEU ", &bleu}, {"chrF2", &chrf}};
    for (int i = 0; i < 2; i++)
        printf("  %s %+.2f, 95%% interval [%+.2f, %+.2f], this run higher in %d of %d: %s\n", rows[i].name,
               rows[i].r->difference, rows[i].r->low, rows[i].r->high, rows[i].r->b_higher,
               rows[i].r->resamples, bootstrap_verdict(rows[i].r));
}

/* The TSV's columns are English first, Chinese second (Tatoeba's
 * layout), whichever way the model translates.  A file the other way
 * round was translated from its target column and scored BLEU 0.00, status
 * 0: refused when most sources read as the other language (by the
 * same count that picks a model for a line: tokenizer_reads_as_han).
 * 0, or -1 said. */
static int check_columns(const char *path, const Corpus *pairs, int src_col, const char *source_lang)
{
    bool zh = strcmp(source_lang, "zh") == 0;
    size_t wrong = 0, read = 0;
    for (size_t i = 0; i < pairs->count; i++) {
        int han = tokenizer_reads_as_han(pairs->source[i], strlen(pairs->source[i]));
        if (han < 0) continue; /* no letter (numbers alone), or invalid: no vote */
        read++;
        wrong += (han == 1) != zh;
    }
    if (wrong * 2 <= read) return 0;
    cli_say("translate", "%s: column %d, where --eval reads the %s sources, reads as %s in %zu of %zu lines: "
                         "the TSV must have English in column 1 and Chinese in column 2 (Tatoeba's layout); "
                         "swap its columns",
            path, src_col + 1, zh ? "Chinese" : "English", zh ? "English" : "Chinese", wrong, read);
    return -1;
}

/* --eval's progress line on a terminal (a large set takes minutes). */
static void eval_progress(void *context, size_t done, size_t total)
{
    (void)context;
    fprintf(stderr, "\rtranslate: --eval: %zu of %zu sentences", done, total);
}

ExitStatus translate_eval_run(const TranslateOptions *opt, const char *config_path)
{
    Translator tr;
    Error err = {{0}};
    ExitStatus st = translator_open(&tr, config_path, &err);
    if (st != EXIT_OK) {
        fprintf(stderr, "translate: %s\n", err.message);
        return st;
    }
    /* --eval keeps each line's best translation only (-n and --logits
     * are refused with it: translate_options.c). */
    translator_override_decoding(&tr, opt->beam, 1, false, opt->no_repeat_ngram);
    if (opt->int8) translator_use_int8(&tr);
    int src_col = strcmp(tr.config.source_lang, "en") == 0 ? 0 : 1;
    Dataset data;
    Corpus pairs;
    if (corpus_load(opt->eval_path, src_col, 1 - src_col, &pairs, &err)) {
        fprintf(stderr, "translate: %s\n", err.message);
        translator_close(&tr);
        return EXIT_INPUT;
    }
    if (pairs.count == 0) { /* "0 sentences: BLEU 0.00", status 0, was no score of anything */
        cli_say("translate", "%s: no sentence pairs to score (empty or blank lines only)", opt->eval_path);
        corpus_free(&pairs);
        translator_close(&tr);
        return EXIT_INPUT;
    }
    if (check_columns(opt->eval_path, &pairs, src_col, tr.config.source_lang)) {
        corpus_free(&pairs);
        translator_close(&tr);
        return EXIT_INPUT;
    }
    /* The sources read as translating reads a line (model.simplify): the
     * set's Traditional characters as Simplified. */
    for (size_t i = 0; tr.simplifier && i < pairs.count; i++) simplify_in_place(tr.simplifier, &pairs.source[i]);
    dataset_from_corpus(&data, &pairs, tr.src_vocab, tr.tgt_vocab, tr.config.arch.max_len);
    /* A line that cannot be translated is scored as an empty translation,
     * as a system that failed on it would be; each is named here with its
     * reason, as batch mode names it, and the run ends with status 1.  An
     * invalid or empty reference is scored as it is, but said. */
    size_t untranslatable = 0;
    for (size_t i = 0; i < data.count; i++) {
        SourceIds src;
        Error why = {{0}};
        if (translator_encode(&tr, data.source_text[i], strlen(data.source_text[i]), &src, &why) != EXIT_OK) {
            cli_say("translate", "%s:%d: not translated (scored as empty): %s", opt->eval_path,
                    data.line[i], why.message);
            untranslatable++;
        }
        translator_source_ids_free(&src);
        const char *ref = data.target_text[i];
        if (!utf8_valid(ref, strlen(ref)))
            cli_say("translate", "%s:%d: the reference is not valid UTF-8 (scored as it is)",
                    opt->eval_path, data.line[i]);
        else if (!ref[strspn(ref, " ")]) /* a column lost: its scores came out low, unsaid */
            cli_say("translate", "%s:%d: the reference is empty (scored against nothing)", opt->eval_path,
                    data.line[i]);
    }
    /* --compare's file is read and scored first: a wrong one is an error
     * before the translating, not after. */
    EvalSentences theirs = {0}, mine = {0};
    EvalScores their_scores;
    if (opt->compare_path) {
        theirs = eval_sentences_new(data.count);
        mine = eval_sentences_new(data.count);
    }
    /* Written to a temporary file (common/output_file.h), committed only
     * after the whole set was translated; never over an input, which is
     * checked first, so a refusal costs no translating. */
    const char *inputs[] = {config_path, opt->eval_path, tr.config.weights_path, tr.config.source_vocab_path,
                            tr.config.target_vocab_path, tr.config.simplify_path, opt->compare_path};
    size_t n_inputs = sizeof inputs / sizeof *inputs; /* (NULL ones count as none) */
    OutputFile *hyps = NULL;
    if (translate_outputs_check_stdout(false, inputs, n_inputs, &err)) {
        fprintf(stderr, "translate: %s\n", err.message);
        st = EXIT_WRITE;
    } else if (opt->compare_path && evaluate_file(opt->compare_path, &data, opt->eval_path, tr.config.target_lang,
                                           &theirs, &their_scores, &err)) {
        fprintf(stderr, "translate: --compare %s\n", err.message);
        st = EXIT_INPUT;
    } else if (opt->hyps_path && (translate_outputs_check_not_an_input("--hyps", opt->hyps_path, inputs, n_inputs, &err) ||
                                  !(hyps = output_file_open(opt->hyps_path, OUTPUT_FILE_DASH, &err)))) {
        fprintf(stderr, "translate: %s\n", err.message);
        st = EXIT_WRITE;
    } else {
        EvalScores s;
        const SearchSettings decode = tr.config.decode;
        bool live = !opt->quiet && isatty(STDERR_FILENO); /* a redrawn line on a terminal only */
        evaluate(&tr.model, &data, tr.tgt_vocab, &decode, tr.config.target_lang,
                 hyps ? output_file_stream(hyps) : NULL, opt->compare_path ? &mine : NULL,
                 live ? eval_progress : NULL, NULL, &s);
        if (live) fputs("\r\033[K", stderr);
        /* every setting that changes the scores, so two lines never look alike */
        char how[128];
        int n = decode.beam > 1 ? snprintf(how, sizeof how, "beam %d, length penalty %g", decode.beam,
                                           (double)decode.length_penalty)
                                : snprintf(how, sizeof how, "greedy");
        if (decode.no_repeat_ngram)
            n += snprintf(how + n, sizeof how - (size_t)n, ", no-repeat-ngram %d", decode.no_repeat_ngram);
        if (opt->int8) snprintf(how + n, sizeof how - (size_t)n, ", int8 weights");
        printf("%s: %s, %zu sentence%s: BLEU %.2f  chrF2 %.2f  (%s; %.1f s, %zu not translatable)\n",
               opt->eval_path, tr.config.name, s.sentences, s.sentences == 1 ? "" : "s", s.bleu, s.chrf, how,
               s.seconds, s.skipped);
        if (opt->compare_path) print_comparison(opt->compare_path, &their_scores, &theirs, &mine, data.count);
        if (hyps) st = translate_outputs_finish_file(hyps, false, false, &err);
        if (untranslatable) st = cli_worse(st, EXIT_INPUT);
    }
    eval_sentences_free(&theirs);
    eval_sentences_free(&mine);
    dataset_free(&data);
    translator_close(&tr);
    return st;
}
