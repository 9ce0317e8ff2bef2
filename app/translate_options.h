/* translate_options.h — translate's command line: its options as one
 * struct, --help, and the combinations refused before anything runs
 * (an option that would do nothing where it is given; two outputs on one
 * file). */
#ifndef TRANSLATE_TRANSLATE_OPTIONS_H
#define TRANSLATE_TRANSLATE_OPTIONS_H

#include <stdbool.h>

#include "alignment.h"
#include "explain.h"

typedef struct {
    const char *config_path;   /* -c; NULL: pick by the text's script */
    const char *attention_path;
    const char *html_path;     /* --html: the offline attention viewer */
    bool explain;              /* --explain: the step-by-step walk-through */
    ShowChoice show;           /* --show: one head's map in the terminal */
    const char *logits_path;
    const char *eval_path;     /* --eval: a TSV to translate and score */
    const char *hyps_path;     /* --hyps: where --eval writes its translations */
    const char *compare_path;  /* --compare: another system's translations of the --eval TSV */
    int threads;
    int beam, n_best;          /* --beam (0: the config's), --n-best (1) */
    bool init_weights, force, quiet;
    /* Output like Marian's: */
    bool n_best_lines;         /* -n given: 'ID ||| TRANSLATION ||| FEATURES ||| SCORE' lines */
    AlignmentChoice alignment; /* --alignment */
    int no_repeat_ngram;       /* --no-repeat-ngram (0: off) */
    /* issue 14: choosing the model, and where the lines come from and go */
    const char *from, *to;     /* --from/--to: the model by language pair */
    const char *input_path;    /* -i; NULL: the TEXT arguments, else stdin */
    const char *output_path;   /* -o; NULL (or "-"): stdout */
    bool list_models;          /* --list-models */
    /* issue 12: lines read ahead, sorted by length, decoded together */
    int maxi_batch;            /* --maxi-batch (0: TRANSLATE_MAXI_BATCH, or 1 on a terminal) */
    int mini_batch;            /* --mini-batch (0: TRANSLATE_MINI_BATCH) */
    bool int8;                 /* --int8: the products read int8 matrices */
} TranslateOptions;

/* Marian's defaults are 100 mini-batches of 64 sentences; ours are smaller
 * because each maxi-batch's output waits for its last line. */
enum { TRANSLATE_MAXI_BATCH = 256, TRANSLATE_MINI_BATCH = 32 }; /* the defaults */

/* Fill *opt from argv (zeroed by the caller); the TEXT arguments start at
 * getopt's optind.  0; -1 after a usage error's message on stderr; 1 when
 * --help or --version was printed on stdout (nothing else to do). */
int translate_options_parse(int argc, char **argv, TranslateOptions *opt);
/* Does an output need more of each line than its best translation's text
 * (maps, logits, the n best, alignments, explanations)?  Then lines are
 * translated one at a time: a batch keeps only that text. */
bool translate_options_want_more_than_text(const TranslateOptions *o);
/* --attention FILE also writes FILE.zh-en when lines of both languages go
 * through the two default models: never when -c, --from or --to chooses
 * one model, nor when FILE is standard output, a device (/dev/null) or a
 * FIFO, where the zh-en document follows the en-zh one ("-a -" wrote a
 * file named "-.zh-en").  That second name (malloc'd), or NULL. */
char *translate_options_second_attention_path(const TranslateOptions *o);

#endif
