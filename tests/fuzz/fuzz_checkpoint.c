/* fuzz_checkpoint.c — arbitrary bytes as a training checkpoint (written to
 * a scratch file, then checkpoint_load into a trainer for a small model of
 * the tiny vocabularies, keeping 2 epoch snapshots).  A rejection is one
 * line naming the file; what is accepted is safe to train on: progress
 * numbers in range, optimizer moments and snapshots finite, second moments
 * >= 0, a run id of 16 hex digits or none. */
#include "fuzz.h"

#include <math.h>

#include "../../training/checkpoint.h"
#include "../../tokenizer/vocab.h"

/* Small, so a seed checkpoint is a few kilobytes and mutations reach the
 * tensor checks quickly; the seeds in corpus/checkpoint/ are of this shape. */
static ModelArch arch = {
    .d_model = 4, .heads = 1, .encoder_layers = 1, .decoder_layers = 1, .d_ff = 4,
    .activation = ACTIVATION_RELU, .norm_first = 1, .max_len = 8, .scale_attention = 1,
    .tied_output = 1,
};
static VocabHashes hashes;
static Trainer trainer;
static TrainProgress progress;

static void init_once(void)
{
    if (arch.src_vocab) return;
    Error err = {{0}};
    Vocab *src = vocab_load("tests/data/tiny.src.vocab", &err);
    Vocab *tgt = src ? vocab_load("tests/data/tiny.tgt.vocab", &err) : NULL;
    if (!tgt) {
        fprintf(stderr, "fuzz_checkpoint: %s (run from the repository root)\n", err.message);
        abort();
    }
    arch.src_vocab = vocab_size(src);
    arch.tgt_vocab = vocab_size(tgt);
    hashes = (VocabHashes){vocab_hash(src), vocab_hash(tgt)};
    vocab_free(src);
    vocab_free(tgt);
    Model model;
    model_init_training(&model, &arch, 1, QUERY_INIT_XAVIER);
    trainer_init(&trainer, &model, 8, 8, 0.1f, 0.1f, 1);
    snapshots_init(&progress.snapshots, 2, trainer.model.params.count);
    /* the trainer and snapshots live until exit, as in train */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init_once();
    const char *path = fuzz_scratch_file(".ckpt", data, size);
    Error err = {{0}};
    if (checkpoint_load(path, &trainer, hashes, &progress, &err)) {
        FUZZ_CHECK(fuzz_one_line(err.message));
        FUZZ_CHECK(strncmp(err.message, path, strlen(path)) == 0);
        return 0;
    }
    const TrainProgress *p = &progress;
    FUZZ_CHECK(trainer.opt.step >= 0 && p->epoch >= 0 && p->batch >= 0);
    FUZZ_CHECK(p->best_bleu == -1.0 || (p->best_bleu >= 0.0 && p->best_bleu <= 100.0));
    FUZZ_CHECK(isfinite(p->elapsed) && p->elapsed >= 0 && isfinite(p->tokens) && p->tokens >= 0);
    FUZZ_CHECK(p->log_bytes >= -1);
    FUZZ_CHECK(p->run_id[0] == '\0' ||
               (strlen(p->run_id) == CHECKPOINT_RUN_ID_LENGTH &&
                strspn(p->run_id, "0123456789abcdef") == CHECKPOINT_RUN_ID_LENGTH));
    FUZZ_CHECK(!p->plan.known || p->plan.batch_tokens >= 1);
    const Snapshots *s = &p->snapshots;
    FUZZ_CHECK(s->count >= 0 && s->count <= s->capacity && s->next >= 0 && s->next < s->capacity);
    for (size_t i = 0; i < trainer.opt.count; i++)
        FUZZ_CHECK(isfinite(trainer.opt.m[i]) && isfinite(trainer.opt.v[i]) && trainer.opt.v[i] >= 0.0f);
    for (size_t i = 0; i < trainer.model.params.count; i++) FUZZ_CHECK(isfinite(trainer.model.params.data[i]));
    for (size_t i = 0; i < (size_t)s->capacity * s->size; i++) FUZZ_CHECK(isfinite(s->data[i]));
    return 0;
}
