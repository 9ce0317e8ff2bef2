/* translator.c — opening a model and translating one sentence with it (see
 * translator.h). */
#include "translator.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/utf8.h"
#include "../common/util.h"
#include "../model/safetensors.h"
#include "../model/search.h"
#include "../model/model.h"
#include "../model/vector.h"
#include "../tokenizer/detokenize.h"
#include "../tokenizer/encode.h"

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* May --init-weights --force replace what is at `path`: nothing, an empty
 * file, a model (model_file_replaceable: a broken one too, no checkpoint), or a device
 * or FIFO (written as it is, common/output_file.h)?  Not notes, data or a
 * config that the config's `weights:` names by mistake: --force replaced
 * those with 36 MB of random weights, status 0, as train --overwrite
 * never did. */
static bool replaceable_by_weights(const char *path)
{
    struct stat st;
    return stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0 || model_file_replaceable(path);
}

/* Untrained demo configs name a seed: the first run writes the model.
 * model_save writes a temporary file and renames it over the path, so an
 * existing file is replaced only by a complete one. */
static ExitStatus create_random_weights(Translator *tr, VocabHashes hashes, Error *err)
{
    Model model;
    model_init_random(&model, &tr->config.arch, tr->config.random_seed);
    int status = model_save(&model, tr->config.weights_path, hashes, err);
    model_free(&model);
    if (status) return EXIT_DATA;
    tr->created_weights = true;
    return EXIT_OK;
}

/* The digit and separator tokens of both vocabularies, and a Chinese
 * target's numerals, for decoding's copy_numbers rule
 * (model/number_rule.h), which knows ids, not text. */
static NumberRule *number_rule_of(const Vocab *src, const Vocab *tgt, bool chinese_target)
{
    NumberRule *rule = number_rule_new(vocab_size(src), vocab_size(tgt));
    for (int side = 0; side < 2; side++) {
        const Vocab *v = side ? tgt : src;
        for (int id = 0; id < vocab_size(v); id++) {
            int continues;
            const char *piece = vocab_piece(v, id, VOCAB_FOLDED, &continues);
            /* ':' only on the target: a time's (7:05 for 七点零五分); a
             * source's 7:05 stays two numbers, 7点05分 being one way to say it */
            bool separator = (number_rule_is_separator(piece) || (side && number_rule_is_time_separator(piece))) &&
                             !continues;
            if (side && chinese_target && !continues && number_rule_is_numeral(piece))
                number_rule_set_numeral(rule, id, piece);
            if (!side && !chinese_target && !continues && number_rule_is_numeral(piece))
                number_rule_set_source_numeral(rule, id, piece);
            if (!side && !chinese_target && !continues && number_rule_is_minute_mark(piece))
                number_rule_set_source_minute_mark(rule, id);
            if (!side && !chinese_target && !continues && number_rule_is_duration_mark(piece))
                number_rule_set_source_duration_mark(rule, id);
            /* minus signs: an English source's -10 comes out 负10 (or -10, 零下10) */
            if (chinese_target && !continues && number_rule_is_sign(piece))
                (side ? number_rule_set_target_sign : number_rule_set_source_sign)(rule, id, piece);
            if (side != chinese_target) /* the English side's pieces */
                (side ? number_rule_set_target_piece : number_rule_set_source_piece)(rule, id, piece, continues);
            if (!number_rule_is_digits(piece) && !separator) continue;
            if (side) number_rule_set_target(rule, id, piece, continues);
            else number_rule_set_source(rule, id, piece, continues);
        }
    }
    return rule;
}

/* ---- mapped weights changed under us (translator.h) ---------------------- */

static const char CHANGED[] = "changed in place since it was loaded (its embeddings are read from its mapped pages), "
                              "so the model is not used again: replace a model by renaming a new file over it";

/* The mappings to watch for SIGBUS, each with its whole message ready:
 * the handler may only write(2) and _exit. */
enum { WATCH_SLOTS = 8 };
static struct {
    const char *volatile start; /* the mapping, or NULL: a free slot */
    size_t bytes;
    char message[PATH_MAX + sizeof CHANGED + 64];
    size_t length;
} watches[WATCH_SLOTS];

static void on_bus(int sig, siginfo_t *info, void *context)
{
    (void)context;
    const char *at = info->si_addr;
    for (int i = 0; info->si_code > 0 && i < WATCH_SLOTS; i++) /* a fault, not a kill(2) */
        if (watches[i].start && at >= watches[i].start && at < watches[i].start + watches[i].bytes) {
            ssize_t unused = write(STDERR_FILENO, watches[i].message, watches[i].length);
            (void)unused;
            _exit(EXIT_DATA);
        }
    signal(sig, SIG_DFL); /* not in a mapping of ours: a bug, which dies of it as it would */
    raise(sig);
}

/* After a load: a mapped model's file as it was (`before`, its stat from
 * just before it was opened: one renamed over it after the load is then
 * not taken for the mapped one; NULL when that failed), and its mapping in
 * the SIGBUS table (a slot while there is one; the check by stat needs
 * none). */
static void watch_weights(Translator *tr, const struct stat *before)
{
    const Params *p = &tr->model.params;
    memset(&tr->weights_seen, 0, sizeof tr->weights_seen);
    if (!p->map || !before) return;
    tr->weights_seen = *before;
    static bool installed;
    if (!installed) {
        struct sigaction sa = {.sa_sigaction = on_bus, .sa_flags = SA_SIGINFO};
        sigemptyset(&sa.sa_mask);
        installed = sigaction(SIGBUS, &sa, NULL) == 0;
    }
    for (int i = 0; i < WATCH_SLOTS && installed; i++) {
        if (watches[i].start) continue;
        int n = snprintf(watches[i].message, sizeof watches[i].message, "translate: %s: %s\n",
                         tr->config.weights_path, CHANGED);
        size_t room = sizeof watches[i].message - 1;
        watches[i].length = n < 0 ? 0 : (size_t)n < room ? (size_t)n : room;
        watches[i].bytes = p->map_bytes;
        watches[i].start = p->map; /* last: the handler reads a whole slot */
        tr->watch_slot = i + 1;
        return;
    }
}

bool translator_weights_changed(const Translator *tr, Error *err)
{
    const struct stat *seen = &tr->weights_seen;
    struct stat now;
    if (seen->st_ino == 0) return false;                                         /* read, not mapped */
    if (stat(tr->config.weights_path, &now) != 0) return false;                  /* gone: ours stays whole */
    if (now.st_dev != seen->st_dev || now.st_ino != seen->st_ino) return false;      /* replaced by a rename */
    if (now.st_size == seen->st_size && now.st_mtim.tv_sec == seen->st_mtim.tv_sec &&
        now.st_mtim.tv_nsec == seen->st_mtim.tv_nsec)
        return false;
    error_set(err, "%s: %s", tr->config.weights_path, CHANGED);
    return true;
}

/* A config that trains and records no measured scores (quick-train.yaml,
 * the experiments, a user's new one) names files its first ./train
 * writes: when one is not there, say so.  (A shipped model's config has
 * scores: its missing file is a missing file.) */
static void note_untrained(const Config *cfg, Error *err)
{
    const char *files[] = {cfg->source_vocab_path, cfg->target_vocab_path, cfg->weights_path};
    bool missing = false;
    for (int i = 0; i < 3; i++) missing |= !file_exists(files[i]);
    size_t used = strlen(err->message);
    if (cfg->has_train && !cfg->has_scores && missing && used < sizeof err->message)
        snprintf(err->message + used, sizeof err->message - used, " (not trained yet? ./train %s writes it)",
                 cfg->path);
}

/* The vocabularies and weights of the config already in tr->config;
 * `write_weights`: write a random model first, even over an existing file.
 * The status of a failed write is the caller's (`write_status`). */
static ExitStatus open_files(Translator *tr, bool write_weights, ExitStatus write_status, Error *err)
{
    Config *cfg = &tr->config;
    ExitStatus status = EXIT_DATA;
    tr->src_vocab = vocab_load(cfg->source_vocab_path, err);
    if (tr->src_vocab) tr->tgt_vocab = vocab_load(cfg->target_vocab_path, err);
    if (!tr->tgt_vocab) {
        error_prefix(err, cfg->path); /* which config led there */
        note_untrained(cfg, err);
        goto fail;
    }
    if (cfg->simplify_path && !(tr->simplifier = simplify_load_table(cfg->simplify_path, err))) {
        error_prefix(err, cfg->path);
        goto fail;
    }
    cfg->arch.src_vocab = vocab_size(tr->src_vocab);
    cfg->arch.tgt_vocab = vocab_size(tr->tgt_vocab);
    tr->numbers = number_rule_of(tr->src_vocab, tr->tgt_vocab, strcmp(cfg->target_lang, "zh") == 0);
    cfg->decode.numbers = tr->numbers;
    VocabHashes hashes = {vocab_hash(tr->src_vocab), vocab_hash(tr->tgt_vocab)};
    if (write_weights && create_random_weights(tr, hashes, err) != EXIT_OK) {
        status = write_status;
        goto fail;
    }
    struct stat before;
    bool seen = stat(cfg->weights_path, &before) == 0;
    if (model_load_inference(&tr->model, cfg->weights_path, &cfg->arch, hashes, err)) {
        /* The weights file's own message names it; say which config led there. */
        error_prefix(err, cfg->path); /* which config led there */
        note_untrained(cfg, err);
        goto fail;
    }
    decode_init(&tr->decoder, &tr->model);
    watch_weights(tr, seen ? &before : NULL);
    return EXIT_OK;
fail:
    translator_close(tr);
    return status;
}

ExitStatus translator_open(Translator *tr, const char *config_path, Error *err)
{
    Config config;
    if (config_load(config_path, &config, err)) {
        memset(tr, 0, sizeof *tr);
        return EXIT_USAGE;
    }
    return translator_open_config(tr, &config, err);
}

ExitStatus translator_open_config(Translator *tr, Config *config, Error *err)
{
    memset(tr, 0, sizeof *tr);
    tr->config = *config;
    memset(config, 0, sizeof *config);
    bool write = tr->config.random_init && !file_exists(tr->config.weights_path);
    return open_files(tr, write, EXIT_DATA, err);
}

ExitStatus translator_init_weights(Translator *tr, const char *config_path, bool overwrite, Error *err)
{
    memset(tr, 0, sizeof *tr);
    if (config_load(config_path, &tr->config, err)) return EXIT_USAGE;
    Config *cfg = &tr->config;
    if (!overwrite && file_exists(cfg->weights_path)) {
        error_set(err, "%s exists; add --force to overwrite it", cfg->weights_path);
        translator_close(tr);
        return EXIT_WRITE;
    }
    if (!replaceable_by_weights(cfg->weights_path)) {
        error_set(err, "%s exists and is not a model (no safetensors file, or a checkpoint or an export's): "
                  "--force replaces only models; name another file as the config's model.weights",
                  cfg->weights_path);
        translator_close(tr);
        return EXIT_WRITE;
    }
    if (!cfg->random_init) cfg->random_seed = TRANSLATOR_DEFAULT_SEED;
    return open_files(tr, true, EXIT_WRITE, err);
}

void translator_close(Translator *tr)
{
    if (!tr) return;
    if (tr->watch_slot) watches[tr->watch_slot - 1].start = NULL; /* before the unmapping */
    decode_free(&tr->decoder);
    search_workspace_free(&tr->batch_work);
    model_free(&tr->model);
    vocab_free(tr->src_vocab);
    vocab_free(tr->tgt_vocab);
    number_rule_free(tr->numbers);
    simplify_free(tr->simplifier);
    config_free(&tr->config);
    memset(tr, 0, sizeof *tr);
}

/* List an unknown token for the user's note: the first few, each cut
 * to NOTE_WORD_BYTES (at a character boundary) and marked "…", then ", …"
 * once the list is full.  A long word used to be left out, and a note with
 * only long words listed nothing at all. */
#define NOTE_WORD_BYTES 40
static void list_unknown(SourceIds *src, const char *surface)
{
    static const char ellipsis[] = "\xE2\x80\xA6"; /* U+2026 */
    char *list = src->unknown_list;
    size_t used = strlen(list), room = sizeof src->unknown_list - used;
    size_t len = strlen(surface);
    bool cut = len > NOTE_WORD_BYTES;
    if (cut) {
        len = NOTE_WORD_BYTES;
        while (len > 0 && ((unsigned char)surface[len] & 0xC0) == 0x80) len--; /* UTF-8 continuation */
    }
    /* ", '" + word + "…'" and, after it, room for a final ", …". */
    size_t need = 3 + len + (cut ? 3 : 0) + 1 + 5 + 1;
    if (need <= room)
        snprintf(list + used, room, "%s'%.*s%s'", used ? ", " : "", (int)len, surface, cut ? ellipsis : "");
    else if (used < 5 || strcmp(list + used - 5, ", \xE2\x80\xA6") != 0)
        snprintf(list + used, room, ", %s", ellipsis);
}

/* text[0..len) with its Traditional characters as Simplified (malloc'd,
 * its length in *out_len, the characters replaced in *changed), or NULL
 * for text the encoder will refuse (a NUL, invalid UTF-8): left as the
 * user wrote it, so that the byte its message names is theirs (176
 * characters grow from 3 bytes to 4: "NUL byte at byte 12" for byte 9). */
static char *simplified(const Simplifier *s, const char *text, size_t len, size_t *out_len, size_t *changed)
{
    *changed = 0;
    if (memchr(text, '\0', len) || !utf8_valid(text, len)) return NULL;
    char *copy = xmalloc(len + 1);
    memcpy(copy, text, len);
    copy[len] = '\0';
    char *out = simplify_text(s, copy, changed);
    free(copy);
    *out_len = strlen(out);
    return out;
}

ExitStatus translator_encode(const Translator *tr, const char *text, size_t len, SourceIds *src,
                           Error *err)
{
    memset(src, 0, sizeof *src);
    /* Traditional → Simplified as the training data was (model.simplify):
     * the model's vocabulary has the Simplified characters only, so 這 would
     * be bytes it never saw. */
    char *plain = NULL;
    if (tr->simplifier) {
        size_t changed;
        plain = simplified(tr->simplifier, text, len, &len, &changed);
        if (plain) text = plain;
        src->simplified = (int)changed;
    }
    Encoding e;
    if (encode_text(tr->src_vocab, text, len, &e, err)) {
        free(plain);
        return EXIT_INPUT;
    }
    int max_len = tr->config.arch.max_len;
    ExitStatus status = EXIT_INPUT;
    if (e.count == 0)
        error_set(err, "empty input (nothing to translate)");
    else if (e.count > (size_t)max_len)
        error_set(err, "%zu tokens, more than max_len %d of %s", e.count, max_len,
                  tr->config.path);
    else
        status = EXIT_OK;
    if (status == EXIT_OK) {
        src->count = (int)e.count;
        src->unknown = (int)e.unknown;
        src->ids = xmalloc(e.count * sizeof(int));
        src->spaced = xmalloc(e.count * sizeof(bool));
        memcpy(src->spaced, e.spaced, e.count * sizeof(bool));
        src->text = xmalloc(len + 1);
        memcpy(src->text, text, len);
        src->text[len] = '\0';
        for (size_t i = 0; i < e.count; i++) {
            src->ids[i] = e.ids[i];
            if (src->ids[i] == VOCAB_UNK) list_unknown(src, e.tokens.surface[e.token[i]]);
        }
    }
    encoding_free(&e);
    free(plain);
    return status;
}

void translator_source_ids_free(SourceIds *src)
{
    if (!src) return;
    free(src->ids);
    free(src->spaced);
    free(src->text);
    memset(src, 0, sizeof *src);
}

void translator_use_int8(Translator *tr)
{
    if (!tr->model.params.int8) params_quantize_int8(&tr->model.params, &tr->model.arch);
}

void translator_override_decoding(Translator *tr, int beam, int n_best, bool keep_logits,
                                  int no_repeat_ngram)
{
    SearchSettings *d = &tr->config.decode;
    d->no_repeat_ngram = no_repeat_ngram;
    if (beam) d->beam = beam;
    else if (d->beam < n_best) d->beam = n_best;
    if (keep_logits) d->beam = 1;
}

int translator_run(Translator *tr, const SourceIds *src, int n_best, bool keep_logits,
                   Translation *out, char **texts, float *scores)
{
    int n = search_translate(&tr->decoder, src->ids, src->spaced, src->count, &tr->config.decode, n_best,
                             keep_logits, out, scores);
    for (int i = 0; i < n; i++) {
        texts[i] = detokenize_for_source(tr->tgt_vocab, out[i].output_ids, (size_t)out[i].steps,
                                         tr->config.target_lang, src->text);
    }
    return n;
}

static ExitStatus not_finite(const Translator *tr, const char *where, Error *err);

void translator_run_many(Translator *tr, const SourceIds *srcs, int n, int mini_batch, char **texts,
                         ExitStatus *statuses, Error *errs, bool *cut)
{
    if (n < 1) return;
    const int **ids = xmalloc((size_t)n * sizeof *ids);
    const bool **spaced = xmalloc((size_t)n * sizeof *spaced);
    int *counts = xmalloc((size_t)n * sizeof *counts);
    int **outputs = xmalloc((size_t)n * sizeof *outputs);
    int *lengths = xmalloc((size_t)n * sizeof *lengths);
    bool *finite = xmalloc((size_t)n * sizeof *finite);
    for (int i = 0; i < n; i++) {
        ids[i] = srcs[i].ids;
        spaced[i] = srcs[i].spaced;
        counts[i] = srcs[i].count;
        outputs[i] = xmalloc((size_t)search_limit(&tr->model.arch, &tr->config.decode, counts[i]) * sizeof(int));
    }
    search_translate_batches(&tr->batch_work, &tr->model, ids, spaced, counts, n, mini_batch,
                             &tr->config.decode, outputs, lengths, finite);
    for (int i = 0; i < n; i++) {
        texts[i] = NULL;
        statuses[i] = EXIT_OK;
        cut[i] = lengths[i] == 0 || outputs[i][lengths[i] - 1] != TOKEN_EOS;
        if (finite[i]) {
            texts[i] = detokenize_for_source(tr->tgt_vocab, outputs[i], (size_t)lengths[i],
                                             tr->config.target_lang, srcs[i].text);
        } else
            statuses[i] = not_finite(tr, "the output log-probabilities", &errs[i]);
        free(outputs[i]);
    }
    free(finite);
    free(lengths);
    free(outputs);
    free(counts);
    free(spaced);
    free(ids);
}

ExitStatus translator_check_finite(const Translator *tr, const Translation *out, int n,
                                 const float *scores, bool maps, Error *err)
{
    const ModelArch *a = &tr->config.arch;
    const char *where = NULL;
    for (int i = 0; i < n && !where; i++)
        if (!isfinite(scores[i]) || !vec_all_finite(out[i].logprobs, (size_t)out[i].steps))
            where = "the output log-probabilities";
    const Translation *t = &out[0];
    size_t H = (size_t)a->heads, S = (size_t)t->src_len, T = (size_t)t->steps;
    if (!where && t->logits && !vec_all_finite(t->logits, T * (size_t)a->tgt_vocab)) where = "the logits";
    if (!where && maps) {
        if (!vec_all_finite(t->encoder_attn, (size_t)a->encoder_layers * H * S * S))
            where = "the encoder attention maps";
        else if (!vec_all_finite(t->decoder_attn, (size_t)a->decoder_layers * H * T * T))
            where = "the decoder attention maps";
        else if (!vec_all_finite(t->cross_attn, (size_t)a->decoder_layers * H * T * S))
            where = "the cross-attention maps";
        for (size_t k = 0; !where && k < T * TRANSLATION_TOP_K; k++)
            if (t->top_ids[k] >= 0 && !isfinite(t->top_logprobs[k])) where = "the top-k log-probabilities";
    }
    return where ? not_finite(tr, where, err) : EXIT_OK;
}

static ExitStatus not_finite(const Translator *tr, const char *where, Error *err)
{
    error_set(err, "the model computed NaN or Inf in %s (are the weights of %s too large?): not translated",
              where, tr->config.weights_path);
    return EXIT_INPUT;
}
