/* train.c — training a model from its config.
 *
 *   train CONFIG              train (building the vocabularies first if
 *                             their files do not exist yet)
 *   train CONFIG --resume     continue from the config's checkpoint
 *   train CONFIG --vocab      only build the vocabularies (replacing files
 *                             that exist only with --overwrite: a model
 *                             trained with them would no longer load)
 *   train --init WEIGHTS CONFIG  start from these weights: fine-tuning
 *   train CONFIG --recase     only recompute the vocabularies' casings from
 *                             the data: same tokens, same ids, same model
 *   train --out FILE CONFIG   write the model to FILE (the checkpoint and
 *                             the log beside it), not the config's path
 *   train --max-steps N / --max-minutes M CONFIG
 *                             this run's limits instead of the config's
 *   train --export DIR CONFIG write the tokenised data, the initial model
 *                             and the settings for tools/train_torch.py
 *                             (app/export.h), and train nothing
 *
 * The training data is the config's train.sources (data/sources.h): read,
 * cleaned, filtered and deduplicated into one pool, with per-source counts
 * on stderr; each epoch trains on its weighted draw from the pool.
 * Each epoch: that draw's batches in a new shuffled order, dev loss at its end,
 * and every `eval_epochs` epochs dev BLEU and chrF2 from greedy decoding;
 * the best model by dev BLEU is written to the config's weights path.
 * A checkpoint (weights + optimizer + progress) is written every
 * `checkpoint_steps` steps and at every epoch's end; Ctrl-C (SIGINT),
 * SIGTERM or SIGHUP (the terminal closed) finishes the step under way,
 * writes one and exits (before the first step: finishes the part of the
 * opening under way, reading the data, building the vocabularies or
 * sizing the activations, and exits saying that nothing, or only the
 * vocabularies built, was saved); a reader of stderr that goes away
 * (SIGPIPE) only loses the messages.
 * A weights file that exists and was not written by this run's lineage
 * (checkpoint.h: the run id) is never replaced, unless --overwrite says so:
 * the config's path is usually a trained model someone wants to keep;
 * --overwrite replaces only a model (a safetensors file), never data or a
 * config named as the weights by mistake.
 * The options are parsed in train_options.c, the data read by
 * train_data.c, the vocabularies built by train_vocab.c, where the run
 * may write checked by train_outputs.c, each epoch's batches drawn by
 * train_epochs.c, the CSV log written by train_log.c, the dev set scored
 * by train_eval.c, and --export and --simplify-table done by
 * train_export.c (the run's state, which they share: train_run.h); this
 * file is the run: opened, trained, checkpointed and closed.
 * Exit status: 0 done, 2 usage or config error, 3 data or model file
 * error or the loss became NaN or Inf, 4 a file could not be written,
 * 5 out of memory, 130 interrupted (checkpoint saved, or before the first
 * step nothing but the vocabularies built). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/util.h"
#include "../model/model.h"
#include "../model/parallel.h"
#include "../data/corpus.h"
#include "../data/dataset.h"
#include "../data/simplify.h"
#include "../data/sources.h"
#include "../data/packed_batch.h"
#include "../training/checkpoint.h"
#include "../training/progress.h"
#include "cli.h"
#include "config.h"
#include "exit_status.h"
#include "train_data.h"
#include "train_epochs.h"
#include "train_eval.h"
#include "train_export.h"
#include "train_log.h"
#include "train_options.h"
#include "train_outputs.h"
#include "train_run.h"
#include "train_vocab.h"

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig) { stop_requested = sig; }

/* SIGINT, SIGTERM and SIGHUP (the terminal closed) ask the run to stop,
 * from its first read of the data on: a training step finishes and is
 * checkpointed (train_loop), and before the first step the part of the
 * opening under way finishes (stopped_before_training).  SIGINT even where
 * a shell's background job ignores it: kill -INT stops.  SIGHUP not where
 * the caller ignores it: `nohup ./train` must outlive the terminal. */
static void catch_stop_signals(void)
{
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    struct sigaction hangup;
    if (sigaction(SIGHUP, NULL, &hangup) == 0 && hangup.sa_handler != SIG_IGN) signal(SIGHUP, on_signal);
}

/* Before the first step there is no checkpoint to write: a signal stops
 * the run at the end of the part of its opening under way (reading the
 * data, building the vocabularies; sizing the activations stops between
 * two epochs' draws), and one line says what was saved: nothing, or the
 * vocabularies this run built (`built`: whole, and the next run uses
 * them).  Returns `status`, that part's, unless it succeeded (or was cut
 * short) and a signal came: then EXIT_INTERRUPTED.  (It died of the
 * signal, with no word.)  From start() on, which opens the log,
 * train_loop's stop takes over: the step under way, and a checkpoint. */
static int stopped_before_training(const Run *r, bool built, int status)
{
    if (!stop_requested || (status && status != EXIT_INTERRUPTED)) return status;
    if (built)
        cli_say("train", "interrupted before the first step: the vocabularies were saved (%s, %s), nothing else",
                r->cfg.source_vocab_path, r->cfg.target_vocab_path);
    else
        cli_say("train", "interrupted before the first step: nothing was saved%s",
                r->opt->resume ? " (the checkpoint is as it was)" : "");
    return EXIT_INTERRUPTED;
}

/* AdamW's constants ("Attention Is All You Need" §5.3); the learning rate
 * and weight decay come from the config.  --export passes them on. */
static const AdamWSettings ADAMW_BASE = {.beta1 = 0.9f, .beta2 = 0.98f, .eps = 1e-9f};

/* ---- opening the run: vocabularies, --init, data, trainer, checkpoint ---- */

static int max_int(int a, int b) { return a > b ? a : b; }

/* Activations are sized once, for the largest batch of any epoch the run
 * can reach: each epoch's draw groups differently.  Returns the maxima in
 * `most`.  That draws each of those epochs' batches (about 17 ms an epoch
 * for zh-en.yaml here), so a run of thousands of epochs (stopped by
 * max_minutes) waits a minute: on a terminal the wait shows.  Epochs past
 * max_steps' are not drawn: `epochs: 100000` with max_steps 2 waited
 * 10 s for its two steps, and epochs near INT_MAX hours.  A signal stops
 * it between two epochs (its maxima then partial: the run ends). */
static void largest_batches(Run *r, Batches *most, int *empty_epoch)
{
    *most = (Batches){0};
    *empty_epoch = -1;
    int epochs = train_epochs_draws(r);
    /* (not under --resume --force: the checkpoint's step then counts
     * another batching's batches, and its epoch may lie past the bound) */
    long max_steps = r->opt->force ? 0 : r->cfg.train.max_steps, batches = 0;
    if (!r->live && !r->opt->quiet && epochs >= 1000 && max_steps == 0) /* off a terminal, said once */
        cli_say("train", "sizing the activations: drawing each of %d epochs' batches (a source's weight has "
                         "a fraction: each epoch its own draw)", epochs);
    for (int e = 0; e < epochs && !(max_steps > 0 && batches >= max_steps) && !stop_requested; e++) {
        if (r->live && epochs >= 100 && e % 50 == 0)
            fprintf(stderr, "\rtrain: sizing the activations: epoch %d of %d's draw", e + 1, epochs);
        train_epochs_select(r, e);
        if (r->batches.count == 0 && *empty_epoch < 0) *empty_epoch = e;
        batches += (long)r->batches.count;
        most->max_src_rows = max_int(most->max_src_rows, r->batches.max_src_rows);
        most->max_tgt_rows = max_int(most->max_tgt_rows, r->batches.max_tgt_rows);
        most->max_pairs = max_int(most->max_pairs, r->batches.max_pairs);
    }
    if (r->live && epochs >= 100) fputs("\r\033[K", stderr);
    train_epochs_select(r, 0);
}

/* The vocabularies: their sizes complete the architecture, and their
 * hashes are what a model or checkpoint of this config must record. */
static int open_vocabularies(Run *r)
{
    Error err = {{0}};
    if (!(r->src_vocab = vocab_load(r->cfg.source_vocab_path, &err)) ||
        !(r->tgt_vocab = vocab_load(r->cfg.target_vocab_path, &err))) {
        fprintf(stderr, "train: %s\n", err.message);
        return EXIT_DATA;
    }
    r->cfg.arch.src_vocab = vocab_size(r->src_vocab);
    r->cfg.arch.tgt_vocab = vocab_size(r->tgt_vocab);
    r->hashes = (VocabHashes){vocab_hash(r->src_vocab), vocab_hash(r->tgt_vocab)};
    return 0;
}

/* --init's weights, checked against the config's architecture and
 * vocabularies before the seconds of reading the data rather than after.
 * Opened here rather than by model_load: its run id goes into every model
 * this run saves (train_init), so a fine-tuned model names the one it
 * started from. */
static int load_init(Run *r)
{
    Error err = {{0}};
    SafeFile f;
    int failed = safetensors_open_limited(r->opt->init_path, model_header_limit(&r->cfg.arch, 0), &f, &err);
    if (!failed) {
        failed = model_load_from(&r->init, &f, &r->cfg.arch, r->hashes, NULL, &err);
        const char *id = failed ? NULL : safetensors_meta(&f, "train_run");
        if (id && checkpoint_is_run_id(id)) memcpy(r->progress.init_run, id, CHECKPOINT_RUN_ID_LENGTH + 1);
        safetensors_close(&f);
    }
    if (failed) {
        fprintf(stderr, "train: --init: %s\n", err.message);
        return EXIT_DATA;
    }
    cli_say("train", "starting from the weights in %s (run %s)", r->opt->init_path,
            r->progress.init_run[0] ? r->progress.init_run : "unknown");
    return 0;
}

static int open_data(Run *r)
{
    Error err = {{0}};
    const TrainConfig *t = &r->cfg.train;
    int max_len = r->cfg.arch.max_len;
    Corpus dev;
    if (corpus_load(t->dev_path, t->source_column, t->target_column, &dev, &err)) {
        fprintf(stderr, "train: %s\n", err.message);
        return EXIT_DATA;
    }
    Simplifier *simplifier;
    int status = train_data_open_simplifier(&r->cfg, &simplifier);
    /* Chinese dev sources as translate reads them (model.simplify): the
     * references stay as written, as --eval scores them. */
    for (size_t i = 0; !status && simplifier && strcmp(r->cfg.source_lang, "zh") == 0 && i < dev.count; i++)
        simplify_in_place(simplifier, &dev.source[i]);
    dataset_from_corpus(&r->dev, &dev, r->src_vocab, r->tgt_vocab, max_len);
    if (!status) status = train_data_load(&r->cfg, NULL, simplifier, &r->sources);
    simplify_free(simplifier);
    if (status) return status;
    dataset_from_corpus(&r->train, &r->sources.pairs, r->src_vocab, r->tgt_vocab, max_len);
    for (size_t i = 0; i < r->sources.n_sources; i++)
        r->resample |= r->sources.counts[i].weight != floorf(r->sources.counts[i].weight);
    r->epoch_pairs = xcalloc(sources_epoch_size(&r->sources) + 1, sizeof(int));
    /* Nothing to learn from, or nothing to measure with: an error, not a
     * "done" after 0 steps that saves an untrained "best" model. */
    const char *none = !r->train.usable_count ? train_data_name(t) : !r->dev.usable_count ? t->dev_path : NULL;
    if (none) {
        cli_say("train", "%s: no usable pairs (%zu pairs with text; a pair needs valid text on both "
                         "sides, at most max_len %d tokens)",
                none, none == t->dev_path ? r->dev.count : r->train.count, max_len);
        return EXIT_DATA;
    }
    r->final_punctuation = xcalloc((size_t)r->cfg.arch.src_vocab, sizeof(bool));
    static const char *const stops[] = {".", "?", "!", "。"}; /* after NFKC: ！ is !, ？ is ? */
    for (size_t i = 0; i < sizeof stops / sizeof stops[0]; i++) {
        int id = vocab_id(r->src_vocab, stops[i]);
        if (id != VOCAB_UNK) r->final_punctuation[id] = true;
    }
    /* The data hash: the pool's token ids and each source's range and
     * weight, so a checkpoint's batch position is checked against both. */
    uint64_t sampling = sources_hash(&r->sources);
    r->plan = (BatchPlan){true, fnv1a(dataset_hash(&r->train), &sampling, sizeof sampling), t->batch_tokens,
                          t->seed, 0};
    Batches most;
    int empty;
    largest_batches(r, &most, &empty);
    if (stop_requested) return EXIT_INTERRUPTED; /* said by stopped_before_training */
    r->max_batch = most;
    /* Weights so small that an epoch draws no usable pair: it would train
     * nothing and score again the weights the epoch before scored (epoch 1:
     * the untrained ones, saved as the "best"). */
    if (empty >= 0) {
        cli_say("train", "%s: no usable pair in epoch %d's draw (%zu pairs an epoch of %zu usable): "
                         "raise a source's weight",
                train_data_name(t), empty + 1, sources_epoch_size(&r->sources), r->train.usable_count);
        return EXIT_DATA;
    }
    batches_build(&r->dev_batches, &r->dev, t->batch_tokens);
    size_t epoch_tokens = 0; /* source + target + </s> of epoch 1's draw */
    for (size_t i = 0; i < sources_epoch_size(&r->sources); i++) {
        int p = r->epoch_pairs[i];
        if (r->train.usable[p])
            epoch_tokens += (size_t)dataset_length(&r->train, (size_t)p, false) + dataset_length(&r->train, (size_t)p, true) + 1;
    }
    fprintf(stderr, "train: %zu pairs (%zu usable, %zu tokens, %zu <unk>); epoch 1: %zu pairs, %zu tokens "
                    "in %zu batches; dev %zu pairs",
            r->train.count, r->train.usable_count, r->train.tokens, r->train.unknown,
            sources_epoch_size(&r->sources), epoch_tokens, r->batches.count, r->dev.count);
    /* an unusable dev pair (invalid text, or longer than max_len) is left
     * out of the dev loss, and when its source is what the model cannot
     * take, scored as an empty translation, as translate --eval scores it:
     * said, since that lowers every dev BLEU and chrF2 */
    if (r->dev.usable_count < r->dev.count)
        fprintf(stderr, " (%zu not usable: invalid text or longer than max_len; left out of the dev loss, and "
                        "a source the model cannot take scores as an empty translation)",
                r->dev.count - r->dev.usable_count);
    fputc('\n', stderr);
    return 0;
}

static int open_trainer(Run *r)
{
    const TrainConfig *t = &r->cfg.train;
    if (!r->opt->init_path) model_init_training(&r->init, &r->cfg.arch, t->seed, t->query_init);
    int src_rows = max_int(r->max_batch.max_src_rows, r->dev_batches.max_src_rows);
    int tgt_rows = max_int(r->max_batch.max_tgt_rows, r->dev_batches.max_tgt_rows);
    trainer_init(&r->trainer, &r->init, src_rows, tgt_rows, t->dropout, t->label_smoothing, t->seed); /* moved */
    snapshots_init(&r->progress.snapshots, t->average_last, r->trainer.model.params.count);
    packed_batch_init(&r->packed, src_rows, tgt_rows, max_int(r->max_batch.max_pairs, r->dev_batches.max_pairs));
    return 0;
}

/* A checkpoint's epoch and batch index name batches of the order its data,
 * batch_tokens and seed made: under other ones they would silently name
 * other batches.  So a change is an error unless --force, and a batch
 * position beyond the epoch is one in any case. */
static int check_plan(Run *r)
{
    const BatchPlan *was = &r->progress.plan, *now = &r->plan;
    const char *path = r->cfg.train.checkpoint_path;
    char what[200] = "";
    if (!was->known)
        snprintf(what, sizeof what, "it does not record its training data and batching");
    else if (was->data_hash != now->data_hash)
        snprintf(what, sizeof what, "the training data (%s) differs from the data it was written with",
                 train_data_name(&r->cfg.train));
    else if (was->batch_tokens != now->batch_tokens)
        snprintf(what, sizeof what, "it was written with batch_tokens %d, the config says %d",
                 was->batch_tokens, now->batch_tokens);
    else if (was->seed != now->seed)
        snprintf(what, sizeof what, "it was written with seed %" PRIu64 ", the config says %" PRIu64,
                 was->seed, now->seed);
    else if (was->batches != now->batches)
        snprintf(what, sizeof what, "it was written for %zu batches in epoch %d, the data makes %zu",
                 was->batches, r->progress.epoch + 1, now->batches);
    if (what[0] && !r->opt->force) {
        cli_say("train", "%s: %s, so its batch position would name other batches "
                         "(resume with --force to continue anyway)", path, what);
        return EXIT_USAGE;
    }
    if (what[0]) {
        cli_say("train", "%s: %s; continuing (--force)", path, what);
        if ((size_t)r->progress.batch > r->batches.count) r->progress.batch = (int)r->batches.count;
    }
    if ((size_t)r->progress.batch > r->batches.count) {
        cli_say("train", "%s: batch %d is beyond the epoch's %zu batches", path, r->progress.batch, r->batches.count);
        return EXIT_DATA;
    }
    return 0;
}

/* The run's start: from scratch (a checkpoint there is refused: it would be
 * overwritten) or, with --resume, from the checkpoint, loaded and checked
 * against this run's data; then the run id, the weights path and the log. */
static int start(Run *r)
{
    const TrainConfig *t = &r->cfg.train;
    bool exists = access(t->checkpoint_path, F_OK) == 0;
    r->progress.best_bleu = -1.0;
    if (r->opt->resume) {
        Error err = {{0}};
        if (!exists) {
            cli_say("train", "%s: no checkpoint to resume from", t->checkpoint_path);
            return EXIT_DATA;
        }
        if (checkpoint_load(t->checkpoint_path, &r->trainer, r->hashes, &r->progress, &err)) {
            fprintf(stderr, "train: %s\n", err.message);
            return EXIT_DATA;
        }
        r->saved_step = r->trainer.opt.step;
        train_epochs_select(r, r->progress.epoch); /* the batches its position names */
        int status = check_plan(r);
        if (!status) status = train_eval_check_dev(r);
        if (status) return status;
        if (r->progress.epoch >= t->epochs)
            cli_say("train", "resuming from %s: all %d epochs are done (step %ld): nothing to train; "
                             "raise train.epochs in the config to go on",
                    t->checkpoint_path, t->epochs, r->trainer.opt.step);
        else
            cli_say("train", "resuming from %s: epoch %d, batch %d, step %ld", t->checkpoint_path,
                    r->progress.epoch + 1, r->progress.batch, r->trainer.opt.step);
        r->elapsed_before = r->progress.elapsed;
        /* The model is written only when an evaluation beats the best so
         * far; if the one that did is gone, the next evaluation writes one,
         * or the run could end naming a file that is not there. */
        if (r->progress.best_bleu >= 0 && access(r->cfg.weights_path, F_OK) != 0 && errno == ENOENT) {
            cli_say("train", "%s: the model written at dev BLEU %.2f is gone: the next evaluation "
                             "writes one, whatever its score", r->cfg.weights_path, r->progress.best_bleu);
            r->progress.best_bleu = -1.0;
            r->progress.scored_step = 0; /* even at the step it was scored at */
        }
    } else if (exists) {
        cli_say("train", "%s exists: continue with --resume, or delete it to start over", t->checkpoint_path);
        return EXIT_USAGE;
    }
    r->progress.plan = r->plan; /* what the checkpoints from here on record */
    r->progress.dev_hash = dataset_hash(&r->dev);
    if (!r->progress.run_id[0]) checkpoint_new_run_id(r->progress.run_id);
    Error err = {{0}};
    if (train_outputs_weights_not_replaceable(r->cfg.weights_path, r->progress.run_id, r->opt->overwrite,
                                              &err)) {
        fprintf(stderr, "train: %s\n", err.message);
        return EXIT_USAGE;
    }
    int status = train_outputs_check_checkpoint(t->checkpoint_path);
    return status ? status : train_log_open(r);
}

/* ---- training: steps, progress, checkpoints, epochs' ends ---------------- */

static int save_checkpoint(Run *r)
{
    Error err = {{0}};
    r->progress.elapsed = r->elapsed_before + util_now() - r->run_start; /* wall clock, evaluations included */
    r->progress.log_bytes = r->log ? (long long)ftello(r->log) : -1; /* flushed by train_log_row */
    if (checkpoint_save(r->cfg.train.checkpoint_path, &r->trainer, r->hashes, &r->progress, &err)) {
        fprintf(stderr, "%strain: %s\n", r->live ? "\n" : "", err.message);
        return EXIT_WRITE;
    }
    r->saved_step = r->trainer.opt.step;
    return 0;
}

static int end_of_epoch(Run *r)
{
    const TrainConfig *t = &r->cfg.train;
    int epoch = r->progress.epoch + 1;
    snapshots_add(&r->progress.snapshots, r->trainer.model.params.data);
    char when[32];
    snprintf(when, sizeof when, "epoch %d", epoch);
    int status = train_eval_dev(r, epoch % t->eval_epochs == 0 || epoch == t->epochs, when);
    if (status) return status;
    r->progress.epoch++;
    r->progress.batch = 0;
    train_epochs_select(r, r->progress.epoch); /* the checkpoint names the next epoch's batches */
    r->progress.plan = r->plan;
    return save_checkpoint(r);
}

/* "ETA 12 min" / "ETA 45 s" / "ETA ?" (no step timed yet), in a static buffer. */
static const char *eta_text(double seconds)
{
    static char text[32];
    if (seconds < 0) snprintf(text, sizeof text, "?");
    else if (seconds < 90) snprintf(text, sizeof text, "%.0f s", seconds);
    else snprintf(text, sizeof text, "%.0f min", seconds / 60.0);
    return text;
}

/* Returns 0, or EXIT_WRITE when the log row could not be written.  `smooth`
 * is the moving average of the loss (progress.h), shown instead of the
 * step's own loss, which the log keeps beside it. */
static int show_progress(Run *r, double loss, double smooth, double lr, double norm)
{
    double t = util_now();
    const TrainConfig *c = &r->cfg.train;
    bool due = r->trainer.opt.step % c->log_steps == 0;
    if (!due && !(r->live && t - r->last_log > 0.5)) return 0;
    double tok_s = r->tokens_since_log / (t - r->last_log + 1e-9);
    EtaInput eta = {
        .elapsed = r->progress.elapsed, .steps_done = r->trainer.opt.step,
        .steps_this_run = r->trainer.opt.step - r->steps_before, .seconds_this_run = t - r->run_start,
        .epoch = r->progress.epoch, .batch = r->progress.batch, .batches_per_epoch = (long)r->batches.count,
        .epochs = c->epochs, .max_steps = c->max_steps, .max_minutes = c->max_minutes,
    };
    if (due && train_log_row(r, "step", loss, smooth, lr, tok_s, norm, NAN, NAN, NAN)) return EXIT_WRITE;
    if (!r->opt->quiet && (r->live || due))
        fprintf(stderr, "%sepoch %d/%d  step %ld  batch %d/%zu  loss %.4f (smoothed)  %.0f tok/s  lr %.2e  ETA %s%s",
                r->live ? "\r\033[K" : "train: ", r->progress.epoch + 1, c->epochs, r->trainer.opt.step,
                r->progress.batch, r->batches.count, smooth, tok_s, lr, eta_text(progress_eta_seconds(&eta)),
                r->live ? "" : "\n");
    r->last_log = t;
    r->tokens_since_log = 0;
    return 0;
}

/* Runs `work` (an evaluation, a checkpoint save) outside the time tokens/s
 * is measured over: the start of the interval moves on by the seconds it
 * took.  Without this the first step row after each evaluation counted
 * the evaluation as training time (docs/training-logs before 2026-12-06:
 * about 6,100 tokens/s there against 7,500 around it). */
static int off_the_clock(Run *r, int (*work)(Run *))
{
    double start = util_now();
    int status = work(r);
    r->last_log += util_now() - start;
    return status;
}

static int train_loop(Run *r)
{
    const TrainConfig *t = &r->cfg.train;
    AdamWSettings s = ADAMW_BASE;
    s.weight_decay = t->weight_decay;
    r->last_log = util_now();
    r->steps_before = r->trainer.opt.step;
    loss_average_init(&r->smooth, PROGRESS_SMOOTHING);
    while (r->progress.epoch < t->epochs) {
        train_epochs_select(r, r->progress.epoch);
        r->progress.plan = r->plan;
        batches_shuffle(&r->batches, t->seed, r->progress.epoch);
        while ((size_t)r->progress.batch < r->batches.count) {
            double minutes = (r->elapsed_before + util_now() - r->run_start) / 60.0;
            bool out_of_steps = t->max_steps && r->trainer.opt.step >= t->max_steps;
            bool out_of_time = t->max_minutes > 0 && minutes >= t->max_minutes;
            if (out_of_steps || out_of_time) {
                /* Stopped mid-epoch: score what we have, keep a checkpoint
                 * (a later run with a larger limit can --resume).  At an
                 * epoch's start its end has just scored these weights: not
                 * twice (two log rows for one step). */
                const char *why = out_of_steps ? "max_steps reached" : "max_minutes reached";
                int status = 0;
                long scored = r->progress.scored_step; /* 0: none (a run stopped before its first step is scored) */
                if (scored == 0 || scored != r->trainer.opt.step) status = train_eval_dev(r, true, why);
                else if (!r->opt->quiet) fprintf(stderr, "train: %s at step %ld (scored above)\n", why, r->trainer.opt.step);
                return status ? status : save_checkpoint(r);
            }
            SourceNoise noise = {t->drop_final_punctuation, t->seed, r->progress.epoch, r->final_punctuation};
            packed_batch_fill(&r->packed, &r->train, &r->batches, r->batches.order[r->progress.batch], &noise);
            float loss = trainer_step(&r->trainer, &r->packed.batch, r->packed.labels, true);
            /* opt.step counts the updates done (adamw_update adds one), so
             * + 1 is the step about to be taken: its rate is set before the
             * update, where PyTorch's loop calls scheduler.step() after. */
            s.lr = lr_schedule(r->trainer.opt.step + 1, t->learning_rate, t->warmup_steps);
            float norm = trainer_update(&r->trainer, &s, t->clip_norm);
            r->progress.batch++;
            r->progress.tokens += r->packed.tokens;
            r->progress.elapsed = r->elapsed_before + util_now() - r->run_start;
            r->tokens_since_log += r->packed.tokens;
            double smooth = loss_average_add(&r->smooth, loss);
            if (show_progress(r, loss, smooth, s.lr, norm)) return EXIT_WRITE;
            if (!isfinite(loss)) {
                fprintf(stderr, "%strain: the loss became %s at step %ld: stopping (lower the learning rate and "
                                "start again: the last checkpoint may hold weights already diverging)\n",
                        r->live ? "\n" : "", train_eval_nonfinite_name(loss), r->trainer.opt.step);
                return EXIT_DATA;
            }
            if (r->trainer.opt.step % t->checkpoint_steps == 0) {
                int status = off_the_clock(r, save_checkpoint);
                if (status) return status;
            }
            if (stop_requested) {
                int status = save_checkpoint(r);
                if (!status) {
                    if (r->live) fputc('\n', stderr); /* after the progress line */
                    cli_say("train", "interrupted at step %ld: checkpoint saved to %s; continue with --resume",
                            r->trainer.opt.step, t->checkpoint_path);
                } else if (r->saved_step >= 0)
                    cli_say("train", "interrupted at step %ld, and its checkpoint could not be saved: "
                                     "--resume would go back to step %ld, the checkpoint %s holds",
                            r->trainer.opt.step, r->saved_step, t->checkpoint_path);
                else
                    cli_say("train", "interrupted at step %ld, and its checkpoint could not be saved: "
                                     "there is none to resume from", r->trainer.opt.step);
                return status ? status : EXIT_INTERRUPTED;
            }
        }
        int status = off_the_clock(r, end_of_epoch);
        if (status) return status;
    }
    /* Resumed with every epoch done: nothing trained, but a model whose
     * file is gone (start) is written again from these weights. */
    if (r->progress.best_bleu < 0) {
        int status = train_eval_dev(r, true, "all epochs done");
        return status ? status : save_checkpoint(r);
    }
    return 0;
}

/* ---- the run, start to end ----------------------------------------------- */

static void run_close(Run *r)
{
    if (r->log) fclose(r->log);
    snapshots_free(&r->progress.snapshots);
    packed_batch_free(&r->packed);
    free(r->final_punctuation);
    trainer_free(&r->trainer);
    model_free(&r->init); /* when a later error left it unmoved */
    batches_free(&r->batches);
    batches_free(&r->dev_batches);
    dataset_free(&r->train);
    dataset_free(&r->dev);
    free(r->epoch_pairs);
    sources_free(&r->sources);
    vocab_free(r->src_vocab);
    vocab_free(r->tgt_vocab);
    config_free(&r->cfg);
}

/* All that main does once the threads are set: the options' work, start
 * to end, with everything it opened closed (the workers are main's). */
static int run(const TrainOptions *opt)
{
    Run r = {.opt = opt, .live = isatty(2) && !opt->quiet, .saved_step = -1};
    Error err = {{0}};
    if (config_load(opt->config_path, &r.cfg, &err)) {
        fprintf(stderr, "train: %s\n", err.message);
        return EXIT_USAGE;
    }
    if (opt->out_path && *opt->out_path && r.cfg.has_train) {
        /* The checkpoint and the log follow the model: a config's own
         * checkpoint path would mix two runs' files. */
        TrainConfig *t = &r.cfg.train;
        free(r.cfg.weights_path);
        free(t->checkpoint_path);
        free(t->log_path);
        r.cfg.weights_path = xstrdup(opt->out_path);
        t->checkpoint_path = xmalloc(strlen(opt->out_path) + sizeof ".log.csv");
        t->log_path = xmalloc(strlen(opt->out_path) + sizeof ".log.csv");
        sprintf(t->checkpoint_path, "%s.ckpt", opt->out_path);
        sprintf(t->log_path, "%s.log.csv", opt->out_path);
    }
    /* Whatever --overwrite says, and before a folder is made for it. */
    int problem = r.cfg.has_train && !opt->vocab_only && !opt->recase && !opt->export_dir
                      ? train_outputs_weights_path_problem(r.cfg.weights_path, &err)
                      : 0;
    if (problem) {
        fprintf(stderr, "train: %s\n", err.message);
        config_free(&r.cfg);
        return problem;
    }
    if (r.cfg.has_train && opt->max_steps > 0) r.cfg.train.max_steps = opt->max_steps;
    if (r.cfg.has_train && opt->max_minutes > 0) r.cfg.train.max_minutes = (float)opt->max_minutes;
    bool training = !opt->vocab_only && !opt->recase && !opt->export_dir && !opt->simplify_table;
    if (training) catch_stop_signals();
    int status = 0;
    bool built = false; /* the vocabularies, by this run */
    if (!r.cfg.has_train) {
        cli_say("train", "%s: no train: section", r.cfg.path);
        status = EXIT_USAGE;
    } else if (opt->simplify_table) {
        status = train_export_simplify_table(&r.cfg, opt->simplify_table, opt->overwrite);
        config_free(&r.cfg);
        return status;
    } else if (opt->recase) {
        if (!(status = train_outputs_check_distinct(&r.cfg, opt)))
            status = train_vocab_build(&r.cfg, opt->data_path, true, NULL);
    } else if (!(status = train_outputs_check_distinct(&r.cfg, opt)) && !(status = train_outputs_make_dirs(&r.cfg)) &&
               (opt->vocab_only || access(r.cfg.source_vocab_path, F_OK) || access(r.cfg.target_vocab_path, F_OK))) {
        if (!(status = train_vocab_check_replace(&r.cfg, opt->vocab_only, opt->overwrite))) /* data_path NULL: */
            status = train_vocab_build(&r.cfg, opt->data_path, false, &stop_requested); /* the config's sources */
        built = !status;
    }
    if (training) status = stopped_before_training(&r, built, status);
    if (status || opt->vocab_only || opt->recase) {
        config_free(&r.cfg);
        return status;
    }
    status = open_vocabularies(&r);
    if (!status && opt->init_path) status = load_init(&r); /* before the seconds of reading the data */
    if (!status && opt->export_dir) status = train_export_check(&r.cfg, opt->export_dir); /* likewise */
    if (!status) status = stopped_before_training(&r, built, open_data(&r));
    if (!status) status = stopped_before_training(&r, built, open_trainer(&r));
    if (!status) status = opt->export_dir ? train_export_data(&r, &ADAMW_BASE) : start(&r);
    if (!status && !opt->export_dir) {
        r.run_start = util_now();
        status = train_loop(&r);
        if (!status) status = train_log_close(&r);
        if (!status)
            cli_say("train", "done: %ld steps, %.0f s (wall clock, evaluations included), "
                             "%.0f tokens/s, best dev BLEU %.2f; model in %s",
                    r.trainer.opt.step, r.progress.elapsed, r.progress.tokens / (r.progress.elapsed + 1e-9),
                    r.progress.best_bleu, r.cfg.weights_path);
    }
    run_close(&r);
    return status;
}

int main(int argc, char **argv)
{
    cli_reserve_standard_fds();
    /* Progress goes to stderr, often a pipe (| tee, | head): a reader that
     * goes away must not kill a run between its model and its checkpoint.
     * Such writes fail instead, which costs nothing but the messages. */
    signal(SIGPIPE, SIG_IGN);
    /* Likewise a file-size limit (ulimit -f): a save that passes it fails
     * with EFBIG, said and exit status 4 like a full disk, instead of
     * killing the run with no word and a temporary file left behind. */
    signal(SIGXFSZ, SIG_IGN);
    TrainOptions opt = {0};
    int parsed = train_options_parse(argc, argv, &opt);
    if (parsed) return parsed > 0 ? train_outputs_finish_stdout() : EXIT_USAGE; /* 1: --help, --version */
    cli_set_threads(opt.threads);
    int status = run(&opt);
    parallel_stop(); /* the workers cli_set_threads allowed, however run ended */
    return status;
}
