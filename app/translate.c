/* translate.c — the command line: text in, translation out.
 *
 *   translate [OPTIONS] [TEXT...]     one translation per TEXT argument, or
 *                                     one per stdin line when there is none
 *
 * Translations go to stdout, one line per input line and in the same order;
 * messages go to stderr.  A line that cannot be translated gets its error
 * on stderr and an empty output line, and the others are still translated.
 * Exit status: 0 all translated, 1 some line failed (or stdin could not be
 * read), 2 usage/config error, 3 model file error, 4 an output file or
 * stdout could not be written, 5 out of memory (see README.md).
 *
 * This file is the run: the session opened (its models, the input, the
 * outputs, each checked before any line is read), the input translated,
 * the outputs written at the end.  The options and --help are in
 * translate_options.c, the models in translate_session.c, translating the
 * lines one at a time or in batches in translate_input.c, --eval in
 * translate_eval.c, how an output is checked and committed in
 * translate_outputs.c. */
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/input_file.h"
#include "../common/output_file.h"
#include "../model/parallel.h"
#include "attention_json.h"
#include "cli.h"
#include "config_folders.h"
#include "html_report.h"
#include "translate_eval.h"
#include "translate_input.h"
#include "translate_options.h"
#include "translate_outputs.h"
#include "translate_session.h"
#include "translator.h"

/* ---- outputs never replace inputs ------------------------------------- */

/* Does `path` name what standard input reads (a file, or a pipe through
 * /dev/stdin)?  `regular`: only where that is a regular file (`< FILE`,
 * which has no name to compare). */
static bool names_standard_input(const char *path, bool regular)
{
    struct stat in, other;
    return fstat(STDIN_FILENO, &in) == 0 && (!regular || S_ISREG(in.st_mode)) && stat(path, &other) == 0 &&
           in.st_dev == other.st_dev && in.st_ino == other.st_ino;
}

/* Every file a session has read, in inputs[SESSION_INPUTS]: -i, and each
 * model's config, weights, vocabularies and table.  Returns how many. */
enum { SESSION_INPUTS = 1 + 2 * 5 };
static size_t session_inputs(const Session *s, const char **inputs)
{
    size_t n = 0;
    if (s->opt->input_path) inputs[n++] = s->opt->input_path;
    for (int i = 0; i < 2; i++) {
        inputs[n++] = s->model[i].path;
        if (!s->model[i].opened && !s->model[i].have_config) continue;
        const Config *c = s->model[i].opened ? &s->model[i].tr.config : &s->model[i].config;
        inputs[n++] = c->weights_path;
        inputs[n++] = c->source_vocab_path;
        inputs[n++] = c->target_vocab_path;
        if (c->simplify_path) inputs[n++] = c->simplify_path;
    }
    return n;
}

/* The same for every file a session has read. */
static int check_session_inputs(const Session *s, const char *option, const char *path, Error *err)
{
    if (s->reads_stdin && path && !cli_written_directly(path) && names_standard_input(path, true))
        return error_set(err, "%s: %s would overwrite standard input, an input of this run", path,
                         option);
    const char *inputs[SESSION_INPUTS];
    size_t n = session_inputs(s, inputs);
    return translate_outputs_check_not_an_input(option, path, inputs, n, err);
}

/* Does anything of this run go to standard output: the translations
 * (no -o, or -o - or /dev/stdout), or an output named so? */
static bool writes_standard_output(const TranslateOptions *o)
{
    if (!o->output_path) return true;
    const char *outs[] = {o->output_path, o->attention_path, o->html_path, o->logits_path};
    for (size_t i = 0; i < sizeof outs / sizeof *outs; i++)
        if (outs[i] && (strcmp(outs[i], "-") == 0 || output_file_standard_stream(outs[i]) >= 0)) return true;
    return false;
}

/* Every output against every file the session has read, before any line
 * is: checked only at the end (they still are, for a model opened on the
 * way), the translations had already gone to standard output when the
 * run was refused.  0, or EXIT_WRITE with the error printed. */
static ExitStatus check_outputs_early(const Session *s)
{
    const TranslateOptions *o = s->opt;
    /* the .zh-en file too: checked only when written, at the end, it let a
     * run replace -o and then exit 4 as refused */
    char *second = translate_options_second_attention_path(o);
    const char *outs[][2] = {{"-o", o->output_path}, {"--attention", o->attention_path},
                             {"--html", o->html_path}, {"--logits", o->logits_path}, {"--attention", second}};
    Error err = {{0}};
    ExitStatus status = EXIT_OK;
    const char *inputs[SESSION_INPUTS];
    if (writes_standard_output(o) &&
        translate_outputs_check_stdout(s->reads_stdin, inputs, session_inputs(s, inputs), &err)) {
        fprintf(stderr, "translate: %s\n", err.message);
        status = EXIT_WRITE;
    }
    for (size_t i = 0; i < sizeof outs / sizeof *outs && !status; i++)
        if (outs[i][1] && check_session_inputs(s, outs[i][0], outs[i][1], &err)) {
            fprintf(stderr, "translate: %s\n", err.message);
            status = EXIT_WRITE;
        }
    free(second);
    return status;
}

/* ---- the outputs at the end -------------------------------------------- */

/* An input without lines opens no model without -c (with -c it opened at
 * the start), nor does one whose every line was too long to read, and
 * --attention, --html and --logits were then not written at all: a file
 * of that name from an earlier run stayed, to pass for this run's.  The
 * default model opens as for an English line, so they are written, empty,
 * as they are with -c and as -o is.  Only after an input read to its end
 * (a run that stopped leaves them as they were), and not when a model
 * failed to open (its error is said). */
static ExitStatus open_model_for_outputs(Session *s, ExitStatus status)
{
    const TranslateOptions *o = s->opt;
    if (s->stopped || s->model[0].opened || s->model[1].opened || s->model[0].failed || s->model[1].failed) return status;
    if (!o->attention_path && !o->html_path && !o->logits_path) return status;
    Error err = {{0}};
    ExitStatus opening = EXIT_OK;
    if (!translate_session_model_for(s, "", 0, &opening, &err, stderr)) fprintf(stderr, "translate: %s\n", err.message);
    return cli_worse(status, opening);
}

/* --attention: one JSON file per translation direction. */
static ExitStatus write_attention(Session *s)
{
    if (!s->opt->attention_path) return EXIT_OK;
    char *second = translate_options_second_attention_path(s->opt);
    /* Text in both directions (no -c): the zh-en maps go beside, or, with
     * no second file, follow the en-zh ones in the same file. */
    const AttentionJson *docs[2];
    const char *paths[2];
    size_t n = 0;
    for (int i = 0; i < 2; i++)
        if (s->model[i].attention) {
            docs[n] = s->model[i].attention;
            paths[n++] = i == 1 && s->model[0].attention && second ? second : s->opt->attention_path;
        }
    ExitStatus result = EXIT_OK;
    for (size_t k = 0; k < n;) {
        /* the same pointer: the zh-en maps had no file of their own */
        size_t together = k + 1 < n && paths[k + 1] == paths[k] ? 2 : 1;
        Error err = {{0}};
        if (check_session_inputs(s, "--attention", paths[k], &err) ||
            attention_json_write(docs + k, together, paths[k], &err)) {
            fprintf(stderr, "translate: %s\n", err.message);
            result = EXIT_WRITE;
        } else if (!s->opt->quiet) {
            for (size_t j = 0; j < together; j++) cli_say("translate", "wrote attention maps to %s", paths[k]);
        }
        k += together;
    }
    free(second);
    return result;
}

/* --html: one page for both directions; its sentence picker spans them. */
static ExitStatus write_html(Session *s)
{
    const AttentionJson *docs[2];
    size_t n = 0;
    for (int i = 0; i < 2; i++)
        if (s->model[i].attention) docs[n++] = s->model[i].attention;
    if (!s->opt->html_path || n == 0) return EXIT_OK; /* no model opened: nothing to show */
    Error err = {{0}};
    if (check_session_inputs(s, "--html", s->opt->html_path, &err) ||
        html_report_write(docs, n, s->opt->html_path, &err)) {
        fprintf(stderr, "translate: %s\n", err.message);
        return EXIT_WRITE;
    }
    if (!s->opt->quiet) cli_say("translate", "wrote the attention viewer to %s", s->opt->html_path);
    return EXIT_OK;
}

/* --init-weights: a seeded random model for the config. */
static ExitStatus init_weights(const TranslateOptions *opt, const char *config_path)
{
    Translator tr;
    Error err = {{0}};
    ExitStatus st = translator_init_weights(&tr, config_path, opt->force, &err);
    if (st != EXIT_OK) {
        fprintf(stderr, "translate: %s\n", err.message);
        return st;
    }
    if (!opt->quiet)
        cli_say("translate", "wrote a random model (seed %llu) to %s",
                (unsigned long long)tr.config.random_seed, tr.config.weights_path);
    translator_close(&tr);
    return EXIT_OK;
}

/* ---- starting -------------------------------------------------------- */

/* -c NAME and --from/--to, resolved to a config path in *chosen (NULL: pick
 * by the text).  0, or -1 after a message (a usage error). */
static int choose_config(const TranslateOptions *opt, char **chosen)
{
    *chosen = NULL;
    if (opt->from || opt->to) {
        /* Two languages: one of --from and --to names the other. */
        const char *from = opt->from ? opt->from : strcmp(opt->to, "en") == 0 ? "zh" : "en";
        const char *to = opt->to ? opt->to : strcmp(from, "en") == 0 ? "zh" : "en";
        char name[32];
        snprintf(name, sizeof name, "%s-%s.yaml", from, to);
        *chosen = config_folders_default(name);
    } else if (opt->config_path && !(*chosen = config_folders_resolve(opt->config_path))) {
        struct stat st;
        bool folder = stat(opt->config_path, &st) == 0 && S_ISDIR(st.st_mode);
        cli_say("translate", "-c %s: %s, and no config of that name (translate --list-models lists them)",
                opt->config_path, folder ? "is a directory" : "no such file");
        return -1;
    }
    return 0;
}

/* Do the lines come from standard input: -i -, or no -i and no sentence
 * but "-"? */
static bool reads_standard_input(const TranslateOptions *opt, int n_texts, char **texts)
{
    if (opt->input_path) return strcmp(opt->input_path, "-") == 0;
    return n_texts == 0 || (n_texts == 1 && strcmp(texts[0], "-") == 0);
}

/* Is the config the lines' own source (`-c /dev/stdin` reading standard
 * input, or -i naming the config)?  The lines then were the YAML's, or,
 * from a pipe, none at all (the config had read them): a usage error. */
static bool config_is_the_input(const char *config, const TranslateOptions *opt, bool reads_stdin)
{
    if (reads_stdin) return names_standard_input(config, false);
    return opt->input_path && input_file_same(config, opt->input_path);
}

/* Where the lines come from: -i FILE, -i - or a lone TEXT '-' (stdin), no
 * TEXT (stdin), or the TEXT arguments (NULL).  *in_name names it. */
static ExitStatus open_input(const TranslateOptions *opt, int n_texts, char **texts, FILE **in,
                             const char **in_name)
{
    *in = NULL;
    *in_name = "standard input";
    if (reads_standard_input(opt, n_texts, texts)) {
        *in = stdin;
    } else if (opt->input_path) {
        /* Plain fopen, not input_file_fopen: a FIFO waits for its writer,
         * as standard input does (opened without waiting, it would read
         * as empty until one came). */
        struct stat st;
        if (!(*in = fopen(opt->input_path, "r"))) {
            cli_say("translate", "%s: cannot open: %s", opt->input_path, strerror(errno));
            return EXIT_INPUT;
        }
        if (fstat(fileno(*in), &st) == 0 && S_ISDIR(st.st_mode)) {
            cli_say("translate", "%s: is a directory", opt->input_path); /* as every input says */
            fclose(*in);
            *in = NULL;
            return EXIT_INPUT;
        }
        *in_name = opt->input_path;
    }
    return EXIT_OK;
}

/* Reading the lines from a terminal, say so once: with no sentence given,
 * translate waits for one, and where an option took the sentence for its
 * file (`translate -a "I love china"`) nothing said why until Ctrl-D,
 * when a file named after the sentence appeared.  The outputs the run
 * will write are named. */
static void say_reading_the_terminal(const TranslateOptions *opt)
{
    if (opt->quiet || !isatty(STDIN_FILENO)) return;
    char files[1024] = "", *second = translate_options_second_attention_path(opt);
    size_t at = 0;
    const char *outs[][2] = {{"-o", opt->output_path}, {"--attention", opt->attention_path},
                             {"--attention", second}, {"--html", opt->html_path}, {"--logits", opt->logits_path}};
    for (size_t i = 0; i < sizeof outs / sizeof *outs && at < sizeof files; i++)
        if (outs[i][1] && !cli_written_directly(outs[i][1])) /* a file, not "-" or a device */
            at += (size_t)snprintf(files + at, sizeof files - at, "%s %s writes '%s'", at ? "," : ";",
                                   outs[i][0], outs[i][1]);
    free(second);
    cli_say("translate", "reading the lines to translate from the terminal, one a line, until Ctrl-D%s",
            files);
}

/* -o FILE (not "-"): the translations go to a temporary file beside it
 * (common/output_file.h), committed at the end. */
static ExitStatus open_output(Session *s)
{
    const char *path = s->opt->output_path;
    if (!path || strcmp(path, "-") == 0) return EXIT_OK;
    Error err = {{0}};
    if (check_session_inputs(s, "-o", path, &err) ||
        !(s->out_file = output_file_open(path, 0, &err))) {
        fprintf(stderr, "translate: %s\n", err.message);
        return EXIT_WRITE;
    }
    s->out = output_file_stream(s->out_file);
    return EXIT_OK;
}

/* All that main does once the threads are set: the options' work, start
 * to end, with every file it opened closed (the workers are main's). */
static ExitStatus run(const TranslateOptions *opt, int n_texts, char **texts)
{
    char *chosen;
    bool by_file_name = !opt->config_path || opt->from || opt->to; /* config_folders_check_languages */
    if (choose_config(opt, &chosen)) return EXIT_USAGE;
    Session s = {.opt = opt, .one_model = chosen != NULL, .out = stdout, .logits_model = -1};
    s.model[0].path = chosen ? chosen : config_folders_default("en-zh.yaml");
    s.model[1].path = chosen ? NULL : config_folders_default("zh-en.yaml");
    if (opt->init_weights || opt->eval_path) {
        ExitStatus status = by_file_name ? config_folders_check_named(s.model[0].path) : EXIT_OK;
        if (status == EXIT_OK)
            status = opt->init_weights ? init_weights(opt, s.model[0].path)
                                       : translate_eval_run(opt, s.model[0].path);
        translate_session_close(&s);
        return translate_outputs_finish_stdout(status);
    }
    /* --logits goes to a temporary file (common/output_file.h), so a run
     * that fails to start leaves an existing file as it was. */
    FILE *in = NULL;
    const char *in_name;
    s.reads_stdin = reads_standard_input(opt, n_texts, texts);
    if (chosen && config_is_the_input(chosen, opt, s.reads_stdin)) {
        /* --from/--to chose it: named as the config it is */
        const char *option = opt->from || opt->to ? "--from/--to" : "-c";
        if (s.reads_stdin)
            cli_say("translate", "%s %s: the config and the lines to translate would both come from standard "
                    "input: give the lines another way (-i FILE, TEXT)", option, chosen);
        else
            cli_say("translate", "%s %s: the config is also -i's file of lines to translate (%s)", option, chosen,
                    opt->input_path);
        translate_session_close(&s);
        return EXIT_USAGE;
    }
    ExitStatus status = translate_session_start(&s);
    if (status == EXIT_OK) status = check_outputs_early(&s);
    if (status == EXIT_OK) status = open_input(opt, n_texts, texts, &in, &in_name);
    if (status == EXIT_OK) status = open_output(&s);
    if (status == EXIT_OK && in == stdin) say_reading_the_terminal(opt);
    if (status != EXIT_OK) {
        if (in && in != stdin) fclose(in);
        translate_session_close(&s);
        return translate_outputs_finish_stdout(status);
    }
    OutputFile *logits = NULL;
    Error err = {{0}};
    if (opt->logits_path && !(logits = output_file_open(opt->logits_path, OUTPUT_FILE_DASH, &err))) {
        fprintf(stderr, "translate: %s\n", err.message);
        output_file_abort(s.out_file);
        if (in && in != stdin) fclose(in);
        translate_session_close(&s);
        return EXIT_WRITE;
    }
    status = translate_input_all(&s, n_texts, texts, in, in_name, logits ? output_file_stream(logits) : NULL);
    status = open_model_for_outputs(&s, status);
    if (in && in != stdin) fclose(in);
    if (logits && !s.model[0].opened && !s.model[1].opened) {
        output_file_abort(logits); /* no model opened: nothing ran */
    } else if (logits) {
        bool refused = check_session_inputs(&s, "--logits", opt->logits_path, &err) != 0;
        status = cli_worse(status, translate_outputs_finish_file(logits, refused, s.stopped, &err));
    }
    if (s.out_file) {
        bool refused = check_session_inputs(&s, "-o", opt->output_path, &err) != 0;
        status = cli_worse(status, translate_outputs_finish_file(s.out_file, refused, s.stopped, &err));
    }
    if (!s.stopped) { /* the maps of a part of the input are not written either */
        status = cli_worse(status, write_attention(&s));
        status = cli_worse(status, write_html(&s));
    }
    translate_session_close(&s);
    return translate_outputs_finish_stdout(status);
}

int main(int argc, char **argv)
{
    cli_reserve_standard_fds();
    /* A file-size limit (ulimit -f) makes a write fail with EFBIG, which
     * is reported like a full disk (status 4), instead of killing us with
     * no word and a temporary file left behind. */
    signal(SIGXFSZ, SIG_IGN);
    /* Every sentence is flushed and checked on its own
     * (translate_outputs_stdout_failed), so the buffer's size changes
     * nothing a reader sees; a large one keeps
     * --help and most --explain walk-throughs in one write, so a failure
     * is seen by that flush with its errno (a write that fails inside a
     * printf leaves only the sticky error flag: "Input/output error"). */
    static char stdout_buffer[1 << 16];
    setvbuf(stdout, stdout_buffer, _IOFBF, sizeof stdout_buffer);
    TranslateOptions opt = {0};
    int parsed = translate_options_parse(argc, argv, &opt);
    if (parsed) return parsed > 0 ? translate_outputs_finish_stdout(EXIT_OK) : EXIT_USAGE; /* 1: --help, --version */
    if (opt.list_models) return translate_outputs_finish_stdout(config_folders_list());
    cli_set_threads(opt.threads);
    ExitStatus status = run(&opt, argc - optind, argv + optind);
    parallel_stop(); /* the workers cli_set_threads allowed, however run ended */
    return status;
}

