/* train_eval.c — the dev set during training (see train_eval.h). */
#include "train_eval.h"

#include <math.h>
#include <stdio.h>

#include "../common/util.h"
#include "../eval/evaluate.h"
#include "cli.h"
#include "exit_status.h"
#include "train_log.h"
#include "train_outputs.h"

/* Mean loss over the dev set (teacher forcing, no dropout), weighted by
 * target tokens. */
static double dev_loss(Run *r)
{
    double sum = 0, tokens = 0;
    for (size_t b = 0; b < r->dev_batches.count; b++) {
        packed_batch_fill(&r->packed, &r->dev, &r->dev_batches, (int)b, NULL);
        int Nt = r->packed.tgt_start[r->packed.batch.count];
        sum += (double)trainer_step(&r->trainer, &r->packed.batch, r->packed.labels, false) * Nt;
        tokens += Nt;
    }
    return tokens ? sum / tokens : 0.0;
}

/* Dev BLEU/chrF2 of `model`; writes it to the weights path when it beats
 * the best so far.  Returns 0 or EXIT_WRITE; *improved says whether it won. */
static int score_model(Run *r, const Model *model, double *bleu, double *chrf, bool *improved)
{
    /* Greedy, whatever the config's decoding.beam, and without its
     * copy_numbers rule: the score that picks the model must not depend on
     * how it will be decoded later, and beam search would make each
     * evaluation several times slower. */
    SearchSettings greedy = r->cfg.decode;
    greedy.beam = 1;
    greedy.copy_numbers = false;
    EvalScores s;
    evaluate(model, &r->dev, r->tgt_vocab, &greedy, r->cfg.target_lang, NULL, NULL, NULL, NULL, &s);
    *bleu = s.bleu;
    *chrf = s.chrf;
    *improved = s.bleu > r->progress.best_bleu;
    if (!*improved) return 0;
    r->progress.best_bleu = s.bleu;
    Error err = {{0}};
    Dtype dtype = r->cfg.train.weights_f16 ? DTYPE_F16 : DTYPE_F32;
    SafeMeta lineage[2] = {{"train_run", r->progress.run_id}, {"train_init", r->progress.init_run}};
    /* Checked again just before writing: a file put there since the start
     * is no more ours than one that was there before. */
    if (train_outputs_weights_not_replaceable(r->cfg.weights_path, r->progress.run_id, r->opt->overwrite,
                                              &err)) {
        fprintf(stderr, "%strain: %s\n", r->live ? "\n" : "", err.message);
        return EXIT_WRITE;
    }
    if (model_save_with(model, r->cfg.weights_path, r->hashes, dtype, NULL, 0, lineage,
                        r->progress.init_run[0] ? 2 : 1, &err)) {
        fprintf(stderr, "%strain: %s\n", r->live ? "\n" : "", err.message);
        return EXIT_WRITE;
    }
    return 0;
}

int train_eval_dev(Run *r, bool score, const char *when)
{
    double dloss = dev_loss(r), bleu = NAN, chrf = NAN, avg_bleu = NAN, avg_chrf = NAN;
    bool improved = false, avg_improved = false;
    if (!isfinite(dloss)) { /* the weights overflowed: never scored, never saved as "best" */
        fprintf(stderr, "%strain: %s: the dev loss became %s at step %ld: stopping (lower the learning "
                        "rate?)\n", r->live ? "\n" : "", when, train_eval_nonfinite_name(dloss), r->trainer.opt.step);
        return EXIT_DATA;
    }
    const Snapshots *snap = &r->progress.snapshots;
    /* the average of the last epochs is scored when the epoch is: an
     * unscored epoch printed and logged it as "BLEU nan" */
    bool average = score && snap->count >= 2;
    if (score && score_model(r, &r->trainer.model, &bleu, &chrf, &improved)) return EXIT_WRITE;
    if (score) r->progress.scored_step = r->trainer.opt.step;
    if (average) {
        Model average = r->trainer.model; /* same arch, parameters pointing at a copy */
        params_alloc(&average.params, &average.arch);
        snapshots_average(snap, average.params.data);
        int status = score_model(r, &average, &avg_bleu, &avg_chrf, &avg_improved);
        params_free(&average.params);
        if (status) return status;
    }
    r->progress.elapsed = r->elapsed_before + util_now() - r->run_start;
    fprintf(stderr, "%strain: %s: dev loss %.4f", r->live ? "\r\033[K" : "", when, dloss);
    if (score) fprintf(stderr, ", dev BLEU %.2f, chrF2 %.2f%s", bleu, chrf, improved ? " (best so far: saved)" : "");
    if (average)
        fprintf(stderr, "; average of last %d epochs: BLEU %.2f, chrF2 %.2f%s", snap->count, avg_bleu,
                avg_chrf, avg_improved ? " (best so far: saved)" : "");
    fprintf(stderr, "  [%.0f s]\n", r->progress.elapsed);
    if (train_log_row(r, "eval", NAN, NAN, NAN, NAN, NAN, dloss, bleu, chrf)) return EXIT_WRITE;
    if (average && train_log_row(r, "eval_average", NAN, NAN, NAN, NAN, NAN, NAN, avg_bleu, avg_chrf))
        return EXIT_WRITE;
    return 0;
}

int train_eval_check_dev(Run *r)
{
    const char *path = r->cfg.train.checkpoint_path;
    if (!r->progress.dev_hash || r->progress.dev_hash == dataset_hash(&r->dev) || r->progress.best_bleu < 0)
        return 0;
    if (!r->opt->force) {
        cli_say("train", "%s: the dev data (%s) differs from the one its best dev BLEU (%.2f) was "
                         "measured on, so scores would be compared across two sets (resume with --force: "
                         "the best so far is then forgotten)",
                path, r->cfg.train.dev_path, r->progress.best_bleu);
        return EXIT_USAGE;
    }
    cli_say("train", "%s: the dev data (%s) differs from the one its best dev BLEU (%.2f) was measured "
                     "on; continuing (--force): the next evaluation's model is written, whatever its score",
            path, r->cfg.train.dev_path, r->progress.best_bleu);
    r->progress.best_bleu = -1.0;
    r->progress.scored_step = 0;
    return 0;
}

const char *train_eval_nonfinite_name(double x)
{
    return isnan(x) ? "NaN" : x > 0 ? "Inf" : "-Inf";
}
