/* translate_options.c — translate's command line (see translate_options.h). */
#include "translate_options.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/output_file.h"
#include "../common/util.h"
#include "../model/parallel.h"
#include "cli.h"
#include "version.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: translate [OPTIONS] [TEXT...]\n"
            "Translate English to Chinese or Chinese to English with a small Transformer,\n"
            "and show what its attention heads do.\n"
            "\n"
            "Each TEXT is one sentence (one that starts with '-' goes after --:\n"
            "translate -- '-5 degrees is cold'); with no TEXT (or a lone '-'), every line of\n"
            "standard input is one.\n"
            "\n"
            "  -c, --config FILE     model config (default: configs/en-zh.yaml, or\n"
            "                        configs/zh-en.yaml for text that reads as Chinese:\n"
            "                        more Han characters than words in other letters)\n"
            "                        FILE may be a name (zh-en): configs/NAME.yaml\n"
            "      --from LANG, --to LANG  the model by language pair (en, zh); no short\n"
            "                        forms (-t is --threads); one is enough\n"
            "      --list-models     list the installed models: languages, size, scores\n"
            "  -i, --input FILE      translate each line of FILE ('-': standard input)\n"
            "  -o, --output FILE     write the translations to FILE ('-': standard output),\n"
            "                        replaced only at the end, each line flushed as decided;\n"
            "                        --explain's and --show's text goes with them\n"
            "  -a, --attention FILE  also write every head's attention maps as JSON\n"
            "                        (schema: docs/attention-json.md)\n"
            "      --html FILE       also write a self-contained HTML page that shows\n"
            "                        the attention maps (open it in any browser, offline)\n"
            "      --logits FILE     write the output logits as raw float32 [steps, vocab],\n"
            "                        sentence after sentence (for tools/reference.py);\n"
            "                        implies greedy decoding; one model's rows: without -c\n"
            "                        a line in the other language fails\n"
            "      --eval TSV        translate the source column of TSV (e.g. dev.tsv) and\n"
            "                        print corpus BLEU and chrF2 against its target column\n"
            "                        (English in column 1, Chinese in column 2)\n"
            "      --hyps FILE       with --eval: also write the translations to FILE\n"
            "      --compare FILE    with --eval: score FILE's translations of the same TSV\n"
            "                        (one line per sentence, as --hyps writes them) and say\n"
            "                        whether the difference is measurable (paired bootstrap)\n"
            "  -b, --beam N          beam search with N hypotheses, 1 to 64 (default: the\n"
            "                        config's decoding.beam; 1 is greedy)\n"
            "  -n, --n-best N        print the N best translations of each input as\n"
            "                        Moses/Marian n-best lines (N <= 64, and <= -b when\n"
            "                        given; else the beam widens to N if the config's is\n"
            "                        narrower):\n"
            "                        ID ||| TRANSLATION ||| F0= LOGPROB WordPenalty= -TOKENS\n"
            "                        ||| SCORE, ID counting inputs from 0, LOGPROB the sum of\n"
            "                        the tokens' and </s>'s, SCORE = LOGPROB / (TOKENS + 1)\n"
            "                        ^length_penalty (the beam's ranking; with -b 2 or more\n"
            "                        a minus sign that copy_numbers wrote counts there as\n"
            "                        the number's token, so SCORE is then not F0's)\n"
            "      --alignment[=hard|soft|T]  append ' ||| ' and the alignment read from\n"
            "                        cross-attention (mean of the last layer's heads):\n"
            "                        hard 'S-T ...' (each output token's most attended source\n"
            "                        token), T in (0,1) (every pair above it), or soft (each\n"
            "                        output token's weights, comma-separated); indices are\n"
            "                        0-based positions of the model's tokens as -a lists\n"
            "                        them (a word may be several subword pieces); with -n,\n"
            "                        a field before the features.  Spaced too: a hard, soft\n"
            "                        or number after it is its value (--alignment 1 is an\n"
            "                        error, not the text \"1\": --alignment -- 1)\n"
            "      --no-repeat-ngram N  no N tokens in a row occur twice in a translation\n"
            "                        (N 1 to 64; greedy, beam and --eval; HF/CTranslate2's\n"
            "                        no_repeat_ngram_size)\n"
            "      --explain         print every step of the computation for each sentence:\n"
            "                        tokens, ids, X = [S, d_model], Q/K/V, heads, scores,\n"
            "                        mask, softmax, cross-attention; then which search chose\n"
            "                        the output and, per step, the top 5 and the token kept\n"
            "      --show KIND[:LAYER[:HEAD]]  draw one head's map in the terminal;\n"
            "                        KIND is encoder, decoder or cross (layer, head from 1;\n"
            "                        left out: 1);\n"
            "                        wider than the terminal ($COLUMNS), in windows of keys;\n"
            "                        on a terminal in grey cells with their weights (not\n"
            "                        with TERM=dumb or NO_COLOR), elsewhere in ░▒▓█ blocks\n"
            "      --maxi-batch N    read up to N lines of input ahead (those already\n"
            "                        waiting: a client that sends a line and waits gets\n"
            "                        its reply), translate them sorted by length in\n"
            "                        mini-batches, write them in input order and flush,\n"
            "                        each line's notes on stderr with it\n"
            "                        (default 256, at most 65536; 1 when standard input\n"
            "                        is a terminal)\n"
            "                        batches need input from -i or standard input and\n"
            "                        plain output (no -n, --alignment, --attention,\n"
            "                        --html, --explain, --show, --logits)\n"
            "      --mini-batch N    sentences decoded together within one (default 32,\n"
            "                        at most 1024); beam search decodes at most 32 / beam\n"
            "                        of them a step\n"
            "      --int8            quantise the weight matrices to int8 when loading\n"
            "                        (one scale per row): a decoding step reads half the\n"
            "                        bytes of float16; translations can differ slightly\n"
            "  -t, --threads N       threads for matrix products and for a batch's\n"
            "                        mini-batches (default: the cores it may use; at most 64)\n"
            "      --init-weights    write a random model to the config's weights path and\n"
            "                        exit; seeded by its random_init_seed, else seed 1\n"
            "                        (refuses to overwrite without --force)\n"
            "      --force           with --init-weights: replace a model there (only once\n"
            "                        the new one is complete: a failed write leaves it\n"
            "                        intact; a file that is no model is never replaced)\n"
            "  -q, --quiet           no notes on stderr (errors are still printed)\n"
            "  -h, --help            this help\n"
            "  -V, --version         the version\n"
            "\n"
            "Exit status: 0 ok, 1 a sentence could not be translated or an input (standard\n"
            "input, -i FILE, the --eval TSV, the --compare file) could not be read, 2 usage\n"
            "or config error, 3 model file error, 4 an output file or standard output\n"
            "could not be written (translating stops there), or would replace an input,\n"
            "5 out of memory.\n");
}

bool translate_options_want_more_than_text(const TranslateOptions *o)
{
    return o->attention_path || o->html_path || o->logits_path || o->n_best_lines ||
           o->alignment.kind != ALIGNMENT_NONE || o->explain || o->show.kind != SHOW_NONE;
}

static bool is_language(const char *s) { return strcmp(s, "en") == 0 || strcmp(s, "zh") == 0; }

/* Options that would do nothing where they are given are refused, with
 * what they need: a user who wrote them expected them to act.  `texts`:
 * the TEXT arguments. */
static int check_combinations(const TranslateOptions *o, int n_texts, char *const *texts)
{
    const char *why = NULL;
    bool translating = !o->eval_path && !o->init_weights && !o->list_models;
    bool mixed_dash = false;
    /* TEXT arguments other than a lone '-' (standard input). */
    bool texts_given = n_texts > 1 || (n_texts == 1 && strcmp(texts[0], "-") != 0);
    bool one_at_a_time = translate_options_want_more_than_text(o);
    for (int i = 0; i < n_texts && n_texts > 1; i++) mixed_dash |= strcmp(texts[i], "-") == 0;
    if (mixed_dash) why = "'-' (standard input) cannot be mixed with TEXT arguments";
    else if (o->hyps_path && !o->eval_path) why = "--hyps needs --eval";
    else if ((o->eval_path && !strcmp(o->eval_path, "-")) || (o->compare_path && !strcmp(o->compare_path, "-")))
        why = "--eval and --compare read files: '-' (standard input) is not one";
    else if (o->compare_path && !o->eval_path) why = "--compare needs --eval";
    else if (o->force && !o->init_weights) why = "--force needs --init-weights";
    else if (n_texts && o->eval_path) why = "--eval reads its sentences from the TSV: no TEXT arguments";
    else if (n_texts && o->init_weights) why = "--init-weights translates nothing: no TEXT arguments";
    else if (o->eval_path && o->init_weights) why = "--init-weights scores nothing: not with --eval";
    else if (o->int8 && (o->init_weights || o->list_models))
        why = "--int8 is for translating and --eval (not --init-weights or --list-models)";
    else if (o->list_models && (n_texts || o->eval_path || o->init_weights || o->config_path || o->from || o->to))
        why = "--list-models takes no TEXT, --eval, --init-weights, -c, --from or --to";
    else if (!translating && (o->input_path || o->output_path))
        why = "-i and -o are for translating lines (--eval writes translations with --hyps)";
    else if (!translating && (one_at_a_time || o->maxi_batch || o->mini_batch))
        why = "-a, --html, --logits, -n, --alignment, --explain, --show, --maxi-batch and --mini-batch "
              "are for translating lines (not --eval, --init-weights or --list-models)";
    else if ((o->maxi_batch || o->mini_batch) && translating && (texts_given || one_at_a_time))
        why = texts_given ? "--maxi-batch and --mini-batch batch lines read from -i or standard input, "
                            "not TEXT arguments"
                          : "--maxi-batch and --mini-batch batch plain translations: -a, --html, --logits, -n, "
                            "--alignment, --explain and --show translate one line at a time";
    else if (o->maxi_batch == 1 && o->mini_batch)
        why = "--mini-batch needs --maxi-batch above 1 (--maxi-batch 1 translates one line at a time)";
    else if ((o->init_weights || o->list_models) && (o->beam || o->no_repeat_ngram))
        why = "-b and --no-repeat-ngram are for translating and --eval (not --init-weights or --list-models)";
    else if (o->input_path && n_texts) why = "-i FILE and TEXT arguments: give one";
    else if (o->config_path && (o->from || o->to)) why = "-c and --from/--to both choose the model: give one";
    else if ((o->from && !is_language(o->from)) || (o->to && !is_language(o->to)))
        why = "--from and --to take en or zh";
    else if (o->from && o->to && strcmp(o->from, o->to) == 0) why = "--from and --to are the same language";
    if (!why) return 0;
    fprintf(stderr, "translate: %s\n", why);
    return -1;
}

static int parse_options(int argc, char **argv, TranslateOptions *opt)
{
    enum { OPT_LOGITS = 256, OPT_INIT, OPT_FORCE, OPT_EVAL, OPT_HYPS, OPT_HTML, OPT_EXPLAIN, OPT_SHOW,
           OPT_ALIGNMENT, OPT_NO_REPEAT, OPT_FROM = 300, OPT_TO, OPT_LIST, OPT_MAXI, OPT_MINI,
           OPT_INT8, OPT_COMPARE };
    static const struct option longs[] = {
        {"config", required_argument, 0, 'c'},   {"attention", required_argument, 0, 'a'},
        {"logits", required_argument, 0, OPT_LOGITS}, {"init-weights", no_argument, 0, OPT_INIT},
        {"force", no_argument, 0, OPT_FORCE},    {"quiet", no_argument, 0, 'q'},
        {"eval", required_argument, 0, OPT_EVAL}, {"hyps", required_argument, 0, OPT_HYPS},
        {"compare", required_argument, 0, OPT_COMPARE},
        {"threads", required_argument, 0, 't'},  {"beam", required_argument, 0, 'b'},
        {"n-best", required_argument, 0, 'n'},   {"html", required_argument, 0, OPT_HTML},
        {"explain", no_argument, 0, OPT_EXPLAIN}, {"show", required_argument, 0, OPT_SHOW},
        {"help", no_argument, 0, 'h'},           {"version", no_argument, 0, 'V'},
        {"alignment", optional_argument, 0, OPT_ALIGNMENT}, {"no-repeat-ngram", required_argument, 0, OPT_NO_REPEAT},
        /* issue 14: --from/--to have no short forms: -t is --threads */
        {"from", required_argument, 0, OPT_FROM}, {"to", required_argument, 0, OPT_TO},
        {"input", required_argument, 0, 'i'},    {"output", required_argument, 0, 'o'},
        {"list-models", no_argument, 0, OPT_LIST},
        {"maxi-batch", required_argument, 0, OPT_MAXI}, {"mini-batch", required_argument, 0, OPT_MINI},
        {"int8", no_argument, 0, OPT_INT8},
        {0, 0, 0, 0}};
    int c;
    unsigned files_seen = 0; /* bit k: file_options[k] (below) was given */
    opterr = 0; /* its messages are ours: one line (cli_option_error) */
    while ((c = getopt_long(argc, argv, ":c:a:t:b:n:qhVi:o:", longs, NULL)) != -1) {
        switch (c) {
        case 'c': opt->config_path = optarg; break;
        case 'a': opt->attention_path = optarg; break;
        case OPT_HTML: opt->html_path = optarg; break;
        case OPT_EXPLAIN: opt->explain = true; break;
        case OPT_SHOW: {
            Error err = {{0}};
            if (explain_parse_show(optarg, &opt->show, &err)) {
                fprintf(stderr, "translate: %s\n", err.message);
                return -1;
            }
            break;
        }
        case OPT_LOGITS: opt->logits_path = optarg; break;
        case OPT_INIT: opt->init_weights = true; break;
        case OPT_FORCE: opt->force = true; break;
        case OPT_EVAL: opt->eval_path = optarg; break;
        case OPT_HYPS: opt->hyps_path = optarg; break;
        case OPT_COMPARE: opt->compare_path = optarg; break;
        case 't':
            if (cli_parse_count("translate", "--threads", optarg, PARALLEL_MAX_THREADS, &opt->threads)) return -1;
            break;
        case 'b':
            if (cli_parse_count("translate", "--beam", optarg, 64, &opt->beam)) return -1;
            break;
        case 'n':
            if (cli_parse_count("translate", "--n-best", optarg, 64, &opt->n_best)) return -1;
            opt->n_best_lines = true;
            break;
        case OPT_ALIGNMENT: {
            /* Marian's `--alignment soft` and `--alignment 0.5` forms too: a
             * following hard, soft or number is the value, not a sentence
             * (`--alignment 0.5` translated the text "0.5" and left standard
             * input unread), and a number outside (0, 1) is refused as the
             * value it was meant to be (`--alignment 1` did the same). */
            AlignmentChoice next;
            Error err = {{0}};
            if (!optarg && optind < argc &&
                (alignment_parse(argv[optind], &next, &err) == 0 || cli_plain_decimal(argv[optind])))
                optarg = argv[optind++];
            err = (Error){{0}};
            if (alignment_parse(optarg, &opt->alignment, &err)) {
                fprintf(stderr, "translate: %s\n", err.message);
                return -1;
            }
            break;
        }
        case OPT_NO_REPEAT:
            if (cli_parse_count("translate", "--no-repeat-ngram", optarg, 64, &opt->no_repeat_ngram)) return -1;
            break;
        case 'q': opt->quiet = true; break;
        case OPT_FROM:
        case OPT_TO: {
            /* twice with two languages, the last had won unsaid (`--from en --from zh`) */
            const char **lang = c == OPT_FROM ? &opt->from : &opt->to;
            if (*lang && strcmp(*lang, optarg) != 0) {
                fprintf(stderr, "translate: %s given twice (%s, then %s): one language\n",
                        c == OPT_FROM ? "--from" : "--to", *lang, optarg);
                return -1;
            }
            *lang = optarg;
            break;
        }
        case 'i': opt->input_path = optarg; break;
        case 'o': opt->output_path = optarg; break;
        case OPT_LIST: opt->list_models = true; break;
        case OPT_MAXI:
            if (cli_parse_count("translate", "--maxi-batch", optarg, 65536, &opt->maxi_batch)) return -1;
            break;
        case OPT_MINI:
            if (cli_parse_count("translate", "--mini-batch", optarg, 1024, &opt->mini_batch)) return -1;
            break;
        case OPT_INT8: opt->int8 = true; break;
        case 'h': usage(stdout); return 1;
        case 'V': printf("translate %s\n", TRANSLATE_VERSION); return 1;
        default:
            cli_option_error("translate", c, argv, true);
            return -1;
        }
        /* a file's name that is another option ("-o --html page.html") */
        static const struct {
            int option;
            const char *name;
        } file_options[] = {{'c', "-c"}, {'a', "-a/--attention"}, {OPT_HTML, "--html"}, {OPT_LOGITS, "--logits"},
                            {OPT_EVAL, "--eval"}, {OPT_HYPS, "--hyps"}, {OPT_COMPARE, "--compare"},
                            {'i', "-i/--input"}, {'o', "-o/--output"}};
        for (size_t k = 0; k < sizeof file_options / sizeof *file_options; k++) {
            if (c != file_options[k].option) continue;
            if (cli_file_value("translate", file_options[k].name, optarg)) return -1;
            if (!optarg[0]) { /* else found only after translating everything (-i '': ": cannot open") */
                fprintf(stderr, "translate: %s needs a file name, not ''\n", file_options[k].name);
                return -1;
            }
            /* given twice, the first was dropped unsaid: `-o a -o b` wrote b
             * alone, `-c A -c B` used B */
            if (files_seen & 1u << k) {
                fprintf(stderr, "translate: %s given twice: one file each\n", file_options[k].name);
                return -1;
            }
            files_seen |= 1u << k;
        }
    }
    if (!opt->n_best) opt->n_best = 1;
    if (opt->beam && opt->n_best > opt->beam) {
        fprintf(stderr, "translate: --n-best %d needs --beam %d or more\n", opt->n_best, opt->n_best);
        return -1;
    }
    if (opt->logits_path && (opt->beam > 1 || opt->n_best > 1)) {
        fprintf(stderr, "translate: --logits works with greedy decoding only (--beam 1%s)\n",
                opt->n_best > 1 ? ", so one translation: no --n-best" : "");
        return -1;
    }
    return check_combinations(opt, argc - optind, argv + optind);
}

char *translate_options_second_attention_path(const TranslateOptions *o)
{
    /* standard output, a device, a FIFO (its reader would miss the zh-en
     * maps), and /dev/stdout, whatever standard output is (a file: `-a
     * /dev/stdout > maps.json` wrote the zh-en maps to /dev/stdout.zh-en) */
    if (!o->attention_path || o->config_path || o->from || o->to || cli_written_directly(o->attention_path) ||
        output_file_standard_stream(o->attention_path) >= 0)
        return NULL;
    char *second = xmalloc(strlen(o->attention_path) + sizeof ".zh-en");
    sprintf(second, "%s.zh-en", o->attention_path);
    return second;
}

/* Two outputs of one run on one file would leave only the one committed
 * last (-o X -a X kept the JSON and lost the translations): refused, a
 * usage error.  Standard output or a device may be named more than once.
 * (An empty name is refused with the options, parse_options.) */
static int check_distinct_outputs(const TranslateOptions *o)
{
    char *second = translate_options_second_attention_path(o);
    const struct {
        const char *option, *path;
    } outs[] = {{"-o", o->output_path},     {"--attention", o->attention_path}, {"--html", o->html_path},
                {"--logits", o->logits_path}, {"--hyps", o->hyps_path}, {"--attention (its .zh-en file)", second}};
    enum { N = sizeof outs / sizeof *outs };
    int status = 0;
    for (int i = 0; i < N && !status; i++)
        for (int j = i + 1; j < N && !status; j++) {
            const char *a = outs[i].path, *b = outs[j].path;
            if (!a || !b || cli_written_directly(a) || cli_written_directly(b) || !cli_same_file(a, b)) continue;
            cli_say("translate", "%s and %s both name %s: each output needs a file of its own",
                    outs[i].option, outs[j].option, b);
            status = -1;
        }
    free(second);
    return status;
}

/* A document (-a's JSON, --html's page, --logits' floats) sent to standard
 * output must be all that goes there: `-a - "I love china" | jq` got the
 * translation's line before the JSON and could not parse it, and a page
 * saved from `--html - > page.html` began with the translation, which
 * put the browser in quirks mode and its offline guard (a <meta> in the
 * <head>) into the <body>, where it guards nothing.  The translations go
 * to standard output unless -o names a file, and --explain's and --show's
 * text goes with them (translate_input.c). */
static bool goes_to_standard_output(const char *path)
{
    /* /dev/stdout, or the file `>` opened, as output_file_open writes them */
    return strcmp(path, "-") == 0 || output_file_standard_stream(path) == STDOUT_FILENO;
}

static int check_one_document_on_stdout(const TranslateOptions *o)
{
    const struct {
        const char *option, *path;
    } documents[] = {{"-a", o->attention_path}, {"--html", o->html_path}, {"--logits", o->logits_path}};
    const char *text = NULL; /* what else writes there */
    if (!o->output_path || goes_to_standard_output(o->output_path))
        text = o->explain ? "--explain" : o->show.kind != SHOW_NONE ? "--show" : "the translations";
    bool translations = text != NULL; /* else text is another document */
    for (size_t i = 0; i < sizeof documents / sizeof *documents; i++) {
        if (!documents[i].path || !goes_to_standard_output(documents[i].path)) continue;
        if (text) {
            cli_say("translate", "%s %s and %s both go to standard output, where they could not be read apart: "
                                 "%s", documents[i].option, documents[i].path, text,
                    translations ? "give -o FILE for the translations (-o /dev/null when the document is "
                                   "all you need)"
                                 : "name a file for one of them");
            return -1;
        }
        text = documents[i].option;
    }
    return 0;
}

int translate_options_parse(int argc, char **argv, TranslateOptions *opt)
{
    int status = parse_options(argc, argv, opt);
    if (!status) status = check_distinct_outputs(opt);
    return status ? status : check_one_document_on_stdout(opt);
}
