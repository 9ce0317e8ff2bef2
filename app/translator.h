/* translator.h — a model ready to translate: its config, vocabularies,
 * weights and decoder, opened together and freed together.
 *
 * This is the layer between the command line (app/translate.c) and the
 * engine (tokenizer/, model/): text in, text and attention maps out, every
 * failure returned as a status with a one-line message. */
#ifndef TRANSLATE_TRANSLATOR_H
#define TRANSLATE_TRANSLATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "../common/error.h"
#include "../data/simplify.h"
#include "../model/decode.h"
#include "../tokenizer/vocab.h"
#include "config.h"
#include "exit_status.h"

typedef struct {
    Config config;
    Vocab *src_vocab, *tgt_vocab;
    Model model;
    Decoder decoder;
    SearchWorkspace batch_work; /* translator_run_many's activations, kept from one call to the next */
    NumberRule *numbers;    /* the vocabularies' digit tokens (config.decode.numbers points here) */
    Simplifier *simplifier; /* model.simplify's table, or NULL: Chinese sources as Simplified */
    bool created_weights;   /* the weights were just written by random init */
    struct stat weights_seen; /* the weights file when a mapped model was loaded (see
                                 translator_weights_changed); st_ino 0: read, not mapped */
    int watch_slot;         /* its place in translator.c's SIGBUS table + 1; 0: none */
} Translator;

/* Load config, vocabularies and weights (writing a seeded random model
 * first when the config asks for it and the file is absent). */
ExitStatus translator_open(Translator *tr, const char *config_path, Error *err);
/* The same for a config already loaded (config_load), which it takes
 * over: *config is left zeroed, and freed with tr (also on failure). */
ExitStatus translator_open_config(Translator *tr, Config *config, Error *err);
void translator_close(Translator *tr); /* NULL-safe, leaves it zeroed */

/* A float16 model's embeddings are its file's pages, mapped, not copied
 * (model/safetensors.c; its matrices are copied at load, packed).  Rewritten in place while we run (cp over it),
 * the file would change the model under us; truncated, reading a page
 * past its new end raises SIGBUS.  So: has the file been changed in place
 * (same file, other size or modification time) since it was loaded?  Then
 * true, with "PATH: changed in place since it was loaded ...": the model
 * is not to be used again (translate fails the lines that need it, status
 * 3).  A file replaced by a rename, as train and every writer of ours do,
 * leaves the mapped one whole: false.  And a SIGBUS inside such a mapping
 * (the file truncated mid-sentence) exits at once with the same message
 * and status 3, instead of dying of the signal with nothing said. */
bool translator_weights_changed(const Translator *tr, Error *err);

/* The seed of --init-weights when the config names no random_init_seed. */
#define TRANSLATOR_DEFAULT_SEED 1

/* --init-weights: write a random model seeded by the config's
 * random_init_seed (else TRANSLATOR_DEFAULT_SEED) to its weights path, then
 * open it like translator_open.  An existing file is refused unless
 * `overwrite`, and is never removed first: the new file is written under a
 * temporary name and renamed over it once complete, so a failed write
 * leaves the old one as it was.  EXIT_WRITE when the file exists (without
 * `overwrite`) or cannot be written. */
ExitStatus translator_init_weights(Translator *tr, const char *config_path, bool overwrite, Error *err);

/* translate --int8: from now on the products read the weight matrices
 * quantised to int8, one scale per row (params_quantize_int8, gemm_i8.h).
 * The float16 or float32 weights stay for everything else. */
void translator_use_int8(Translator *tr);

/* Text tokenised and mapped to ids, with what a user should be told. */
typedef struct {
    int count;
    int *ids;               /* [count] */
    bool *spaced;           /* [count] came after white space (encode.h): for copy_numbers */
    char *text;             /* the text itself: a word the model copies takes its casing */
    int unknown;            /* how many tokens were not in the vocabulary */
    int simplified;         /* how many Traditional characters model.simplify replaced */
    char unknown_list[256]; /* the first few of them, quoted (long ones cut, "…"), for a note */
} SourceIds;

/* Tokenise `len` bytes of text for this model's source vocabulary (its
 * Traditional characters read as Simplified first, with model.simplify).
 * EXIT_INPUT on invalid UTF-8 ("invalid UTF-8 at byte 7"), empty text, or more
 * tokens than max_len. */
ExitStatus translator_encode(const Translator *tr, const char *text, size_t len, SourceIds *src,
                           Error *err);
void translator_source_ids_free(SourceIds *src);

/* The command line's say over the config's decoding: section, applied
 * once after opening; everything after reads tr->config.decode.  The beam
 * becomes `beam` when it is not 0, else at least `n_best`; 1 with
 * `keep_logits` (the logits are those of greedy decoding).  The
 * no-repeat-n-gram size becomes `no_repeat_ngram` (0: off). */
void translator_override_decoding(Translator *tr, int beam, int n_best, bool keep_logits,
                                  int no_repeat_ngram);

/* Translate encoded text as tr->config.decode says (model/search.h):
 * greedy when its beam is 1, else beam search.  Fills out[0..n-1] (maps,
 * tokens; free each with translation_free), texts[0..n-1] (detokenised,
 * malloc'd) and scores[0..n-1] (length-normalised log-probabilities, see
 * model/beam.h), best first, and returns n (1 <= n <= n_best).  The logits
 * are kept with `keep_logits` (greedy only). */
int translator_run(Translator *tr, const SourceIds *src, int n_best, bool keep_logits,
                   Translation *out, char **texts, float *scores);

/* Translate n encoded sources (a maxi-batch of one model's lines) as
 * tr->config.decode says, keeping only the best translation's text:
 * sorted by length and decoded `mini_batch` at a time, the mini-batches
 * shared out between the threads (search_translate_batches), so that
 * sentences decoded together have similar lengths.  texts[i] receives source i's malloc'd
 * translation, or NULL with errs[i] set (EXIT_INPUT, the message
 * translator_check_finite gives) when its log-probabilities are not
 * finite; statuses[i] is EXIT_OK or that; cut[i] is true when the
 * translation stopped at the length limit, not at </s> (as
 * Translation.finished false). */
void translator_run_many(Translator *tr, const SourceIds *srcs, int n, int mini_batch, char **texts,
                         ExitStatus *statuses, Error *errs, bool *cut);

/* Is everything that will be shown of out[0..n-1] finite?  Finite but huge
 * weights (3e38) pass the load check and overflow at run time, and a NaN
 * would be printed as an empty translation or as "-nan" in the attention
 * JSON.  Checked: the scores and chosen tokens' log-probabilities (a NaN or
 * +Inf logit makes its step's log-sum-exp, hence those, non-finite), the
 * logits when kept, and with `maps` the best translation's attention maps
 * and top-k log-probabilities: one pass over what is written.  EXIT_INPUT with
 * "the model computed NaN or Inf in ..." when not. */
ExitStatus translator_check_finite(const Translator *tr, const Translation *out, int n,
                                 const float *scores, bool maps, Error *err);

#endif
