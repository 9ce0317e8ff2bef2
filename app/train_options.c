/* train_options.c — train's command line (see train_options.h). */
#include "train_options.h"

#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../model/parallel.h"
#include "cli.h"
#include "version.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: train [--out FILE] [--init WEIGHTS | --resume [--force]] [--max-steps N]\n"
            "             [--max-minutes M] CONFIG\n"
            "             [--overwrite] [--vocab [--data TSV]] [--recase [--data TSV]]\n"
            "       train --export DIR [--max-steps N] CONFIG\n"
            "       train --simplify-table FILE [--overwrite] CONFIG\n"
            "Train the model CONFIG describes on its train: data.\n"
            "\n"
            "      --out FILE    write the model to FILE instead of the config's weights path;\n"
            "                    the checkpoint and the log go beside it (FILE.ckpt, FILE.log.csv)\n"
            "      --overwrite   replace a weights file that this training run did not write;\n"
            "                    with --vocab, vocabulary files that exist\n"
            "      --init WEIGHTS  start from these weights (a model of this config's architecture\n"
            "                    and vocabularies) instead of random ones: fine-tuning; the\n"
            "                    learning rate warms up again and the optimizer starts afresh\n"
            "      --resume      continue from the config's checkpoint\n"
            "      --force       with --resume: continue although the training data, batch_tokens\n"
            "                    or seed changed since the checkpoint (its batch position then\n"
            "                    names other batches)\n"
            "      --max-steps N stop after N steps (instead of the config's train.max_steps)\n"
            "      --max-minutes M  stop after M minutes of training, a fraction allowed\n"
            "                    (instead of train.max_minutes); the dev scores come after\n"
            "      --vocab       only build the vocabularies (from --data TSV if given); files\n"
            "                    that exist are replaced only with --overwrite\n"
            "      --recase      only recompute the casings of the config's subword vocabularies\n"
            "                    from its data (or --data TSV): their tokens, ids and counts stay,\n"
            "                    so the model still loads\n"
            "      --export DIR  train nothing: write the tokenised data, the initial model and\n"
            "                    the settings to DIR for tools/train_torch.py (docs/scale-out.md)\n"
            "      --simplify-table FILE  train nothing: write the Traditional -> Simplified table\n"
            "                    of train.simplify_with to FILE (about 30 KB), which a config's\n"
            "                    model.simplify reads to translate Traditional input; a file\n"
            "                    that exists is replaced only with --overwrite, and only a\n"
            "                    table (or the config's own model.simplify); never a file\n"
            "                    the config names otherwise\n"
            "  -t, --threads N   threads for a training step (default: the cores it may use; at most 64)\n"
            "  -q, --quiet       no progress line\n"
            "  -h, --help        this help\n"
            "  -V, --version     the version\n"
            "\n"
            "The best model by dev BLEU is written to the config's weights path (or FILE); a\n"
            "weights file there that this run (or the run it resumes) did not write is\n"
            "refused unless --overwrite (which replaces only a model: a safetensors file).\n"
            "A CSV log of every logged value goes to the config's train.log path (or\n"
            "FILE.log.csv); a run holds a lock on it until it ends.\n"
            "Exit status: 0 done, 2 usage or config error, 3 data or model file error or\n"
            "the loss became NaN or Inf, 4 write error, 5 out of memory, 130 interrupted\n"
            "(a checkpoint was saved: use --resume; before the first step, none is, and\n"
            "only vocabularies the run built are kept).\n");
}

int train_options_parse(int argc, char **argv, TrainOptions *opt)
{
    static const struct option longs[] = {
        {"resume", no_argument, 0, 'r'}, {"vocab", no_argument, 0, 'v'},
        {"data", required_argument, 0, 'd'}, {"quiet", no_argument, 0, 'q'},
        {"threads", required_argument, 0, 't'}, {"out", required_argument, 0, 'o'},
        {"overwrite", no_argument, 0, 'w'}, {"force", no_argument, 0, 'f'},
        {"max-steps", required_argument, 0, 'S'}, {"max-minutes", required_argument, 0, 'M'},
        {"export", required_argument, 0, 'e'}, {"recase", no_argument, 0, 'c'},
        {"init", required_argument, 0, 'i'}, {"simplify-table", required_argument, 0, 's'},
        {"help", no_argument, 0, 'h'}, {"version", no_argument, 0, 'V'}, {0, 0, 0, 0}};
    int c;
    opterr = 0; /* its messages are ours: one line (cli_option_error) */
    while ((c = getopt_long(argc, argv, ":t:qhV", longs, NULL)) != -1) {
        switch (c) {
        case 'r': opt->resume = true; break;
        case 'v': opt->vocab_only = true; break;
        case 'c': opt->recase = true; break;
        case 'd': opt->data_path = optarg; break;
        case 'o': opt->out_path = optarg; break;
        case 'i': opt->init_path = optarg; break;
        case 'e': opt->export_dir = optarg; break;
        case 's': opt->simplify_table = optarg; break;
        case 'w': opt->overwrite = true; break;
        case 'f': opt->force = true; break;
        case 'q': opt->quiet = true; break;
        case 'S':
            if (cli_parse_count("train", "--max-steps", optarg, INT_MAX, &opt->max_steps)) return -1;
            break;
        case 'M': {
            char *end;
            errno = 0;
            opt->max_minutes = strtod(optarg, &end);
            if (!cli_plain_decimal(optarg) || errno || end == optarg || *end || !(opt->max_minutes > 0) ||
                !isfinite(opt->max_minutes)) {
                cli_say("train", "--max-minutes: expected a positive number of minutes, not '%s'", optarg);
                return -1;
            }
            /* kept as a float (train.max_minutes): 1e-300 became 0, no limit at all */
            if ((float)opt->max_minutes < FLT_MIN) {
                cli_say("train", "--max-minutes: %s is too small (a float's smallest is %g)", optarg, (double)FLT_MIN);
                return -1;
            }
            break;
        }
        case 't':
            if (cli_parse_count("train", "--threads", optarg, PARALLEL_MAX_THREADS, &opt->threads)) return -1;
            break;
        case 'h': usage(stdout); return 1;
        case 'V': printf("train %s\n", TRANSLATE_VERSION); return 1;
        default: cli_option_error("train", c, argv, false); return -1;
        }
    }
    /* an empty name is a slip (an unset shell variable), never a file: said
     * as such, before the checks of which options go together */
    const struct { const char *name, *value; } files[] = {
        {"--out", opt->out_path}, {"--init", opt->init_path}, {"--data", opt->data_path},
        {"--export", opt->export_dir}, {"--simplify-table", opt->simplify_table}};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        if (files[i].value && !*files[i].value) {
            fprintf(stderr, "train: %s: expected a %s name, not ''\n", files[i].name,
                    files[i].value == opt->export_dir ? "folder" : "file");
            return -1;
        }
    if (opt->simplify_table && (opt->resume || opt->vocab_only || opt->recase ||
                                opt->export_dir || opt->init_path || opt->out_path || opt->data_path ||
                                opt->max_steps > 0 || opt->max_minutes > 0)) {
        fprintf(stderr, "train: --simplify-table FILE goes alone (with --overwrite at most) (try 'train --help')\n");
        return -1;
    }
    if (opt->force && !opt->resume) {
        fprintf(stderr, "train: --force goes with --resume (try 'train --help')\n");
        return -1;
    }
    if (opt->init_path && (opt->resume || opt->vocab_only || opt->recase || opt->export_dir)) {
        fprintf(stderr, "train: --init WEIGHTS starts a new run: not with --resume, --vocab, --recase or "
                        "--export (try 'train --help')\n");
        return -1;
    }
    if (opt->export_dir && (opt->resume || opt->vocab_only || opt->out_path ||
                            opt->overwrite || opt->max_minutes > 0)) {
        fprintf(stderr, "train: --export DIR goes alone (with --max-steps at most) (try 'train --help')\n");
        return -1;
    }
    if (opt->recase && (opt->vocab_only || opt->resume || opt->export_dir || opt->out_path ||
                        opt->overwrite || opt->max_steps > 0 || opt->max_minutes > 0)) {
        fprintf(stderr, "train: --recase goes alone (with --data TSV at most) (try 'train --help')\n");
        return -1;
    }
    if (opt->vocab_only && (opt->resume || opt->out_path || opt->max_steps > 0 || opt->max_minutes > 0)) {
        fprintf(stderr, "train: --vocab only builds the vocabularies: not with --resume, --out, --max-steps "
                        "or --max-minutes (try 'train --help')\n");
        return -1;
    }
    if (opt->data_path && !opt->vocab_only && !opt->recase) {
        fprintf(stderr, "train: --data TSV goes with --vocab or --recase (training reads the config's "
                        "sources) (try 'train --help')\n");
        return -1;
    }
    if (optind != argc - 1) {
        fprintf(stderr, "train: expected one CONFIG (try 'train --help')\n");
        return -1;
    }
    opt->config_path = argv[optind];
    return 0;
}
