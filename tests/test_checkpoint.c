/* test_checkpoint.c — training/checkpoint.c: a checkpoint restores what was
 * saved, and every value in it is validated as the config is: metadata
 * numbers strictly parsed and in range, optimizer moments and snapshots
 * finite, each rejection one "path: what" line.
 *
 * Each case saves a checkpoint of a tiny trainer, rewrites one metadata
 * value or one tensor element, and loads it back. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../training/checkpoint.h"
#include "../model/safetensors.h"

static const ModelArch arch = {
    .d_model = 8, .heads = 2, .encoder_layers = 1, .decoder_layers = 1, .d_ff = 16,
    .activation = ACTIVATION_RELU, .norm_first = true, .max_len = 16, .scale_attention = true,
    .tied_output = true, .src_vocab = 12, .tgt_vocab = 10,
};
static const VocabHashes hashes = {0x1111, 0x2222};

typedef struct {
    Trainer tr;
    TrainProgress p;
} State;

static void state_init(State *s, int snapshots)
{
    Model m;
    model_init_training(&m, &arch, 3, QUERY_INIT_XAVIER);
    trainer_init(&s->tr, &m, 16, 16, 0.1f, 0.1f, 3);
    memset(&s->p, 0, sizeof s->p);
    snapshots_init(&s->p.snapshots, snapshots, s->tr.model.params.count);
}

static void state_free(State *s)
{
    snapshots_free(&s->p.snapshots);
    trainer_free(&s->tr);
}

/* A checkpoint with some progress in it, at `path`. */
static void save_one(const char *path)
{
    State s;
    state_init(&s, 2);
    s.tr.opt.step = 7;
    for (size_t i = 0; i < s.tr.opt.count; i++) {
        s.tr.opt.m[i] = 0.001f * (float)(i % 13);
        s.tr.opt.v[i] = 0.0001f * (float)(i % 7);
    }
    snapshots_add(&s.p.snapshots, s.tr.model.params.data);
    snapshots_add(&s.p.snapshots, s.tr.model.params.data); /* full: count 2, the next slot 0 */
    s.p.epoch = 1;
    s.p.batch = 2;
    s.p.best_bleu = 12.5;
    s.p.elapsed = 3.25;
    s.p.tokens = 900;
    s.p.log_bytes = 400;
    s.p.scored_step = 7;
    s.p.dev_hash = 0x0123456789abcdefULL;
    memcpy(s.p.run_id, "0123456789abcdef", CHECKPOINT_RUN_ID_LENGTH + 1);
    s.p.plan = (BatchPlan){true, 0xfeed, 60, 5, 4};
    Error err = {{0}};
    if (checkpoint_save(path, &s.tr, hashes, &s.p, &err)) fail_msg("%s", err.message);
    state_free(&s);
}

/* Rewrite the file at path with metadata `key` set to `value` (NULL:
 * removed) and, when `tensor` is given, element `index` of it set to x. */
static void rewrite(const char *path, const char *key, const char *value, const char *tensor,
                    size_t index, float x)
{
    SafeFile f;
    Error err = {{0}};
    if (safetensors_open(path, &f, &err)) fail_msg("%s", err.message);
    SafeWriteTensor *t = calloc(f.count, sizeof *t);
    float **data = calloc(f.count, sizeof *data);
    for (size_t i = 0; i < f.count; i++) {
        const SafeTensor *st = &f.tensors[i];
        data[i] = malloc((st->numel ? st->numel : 1) * sizeof(float));
        if (safetensors_to_f32(&f, st, data[i], &err)) fail_msg("%s", err.message);
        if (tensor && strcmp(st->name, tensor) == 0) data[i][index] = x;
        t[i] = (SafeWriteTensor){.name = st->name, .ndim = st->ndim, .data = data[i]};
        memcpy(t[i].shape, st->shape, sizeof st->shape);
    }
    SafeMeta *meta = calloc(f.meta_count + 1, sizeof *meta);
    size_t n = 0;
    for (size_t i = 0; i < f.meta_count; i++)
        if (!key || strcmp(f.meta[i].key, key) != 0) meta[n++] = f.meta[i];
    if (key && value) meta[n++] = (SafeMeta){(char *)key, (char *)value};
    char tmp[700];
    snprintf(tmp, sizeof tmp, "%s.new", path);
    if (safetensors_write(tmp, t, f.count, meta, n, &err)) fail_msg("%s", err.message);
    for (size_t i = 0; i < f.count; i++) free(data[i]);
    free(data);
    free(t);
    free(meta);
    safetensors_close(&f);
    assert_int_equal(rename(tmp, path), 0);
}

static void test_restores_what_was_saved(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/good.ckpt", temp_dir());
    save_one(path);
    State s;
    state_init(&s, 2);
    Error err = {{0}};
    if (checkpoint_load(path, &s.tr, hashes, &s.p, &err)) fail_msg("%s", err.message);
    assert_int_equal(s.tr.opt.step, 7);
    assert_int_equal(s.p.epoch, 1);
    assert_int_equal(s.p.batch, 2);
    assert_true(s.p.best_bleu == 12.5);
    assert_int_equal(s.p.log_bytes, 400);
    assert_int_equal(s.p.scored_step, 7);
    assert_true(s.p.dev_hash == 0x0123456789abcdefULL);
    assert_string_equal(s.p.run_id, "0123456789abcdef");
    assert_true(s.p.plan.known);
    assert_int_equal(s.p.plan.data_hash, 0xfeed);
    assert_int_equal(s.p.plan.batch_tokens, 60);
    assert_int_equal(s.p.plan.seed, 5);
    assert_int_equal(s.p.plan.batches, 4);
    assert_int_equal(s.p.snapshots.count, 2);
    assert_int_equal(s.p.snapshots.next, 0);
    assert_true(s.p.elapsed == 3.25 && s.p.tokens == 900);
    assert_true(s.tr.opt.m[12] == 0.012f);
    state_free(&s);
    /* a log that could not tell its position (a pipe) saved log_bytes -1: it resumes */
    rewrite(path, "log_bytes", "-1", NULL, 0, 0);
    state_init(&s, 2);
    if (checkpoint_load(path, &s.tr, hashes, &s.p, &err)) fail_msg("log_bytes -1: %s", err.message);
    assert_int_equal(s.p.log_bytes, -1);
    state_free(&s);
}

/* The average of the epoch-end weights: over the snapshots taken (before
 * the ring is full, not over its slots), the oldest replaced once full. */
static void test_snapshots_average_the_last_ones(void **state)
{
    (void)state;
    Snapshots s;
    snapshots_init(&s, 3, 2);
    float a[2] = {1, 1}, b[2] = {3, 3}, c[2] = {5, 5}, d[2] = {7, 7}, avg[2];
    snapshots_add(&s, a);
    snapshots_add(&s, b);
    assert_int_equal(s.count, 2);
    snapshots_average(&s, avg);
    assert_true(avg[0] == 2 && avg[1] == 2);
    snapshots_add(&s, c);
    snapshots_add(&s, d); /* replaces a */
    assert_int_equal(s.count, 3);
    assert_int_equal(s.next, 1);
    snapshots_average(&s, avg);
    assert_true(avg[0] == 5 && avg[1] == 5);
    snapshots_free(&s);
}

/* A perfect dev score as older versions wrote it (exp(log 100) rounds up)
 * resumes, read as 100; a clearly larger one stays an error (below). */
static void test_a_perfect_score_rounded_above_100_resumes(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/perfect.ckpt", temp_dir());
    save_one(path);
    rewrite(path, "best_bleu", "100.00000000000004", NULL, 0, 0.0f);
    State s;
    state_init(&s, 2);
    Error err = {{0}};
    if (checkpoint_load(path, &s.tr, hashes, &s.p, &err)) fail_msg("%s", err.message);
    assert_true(s.p.best_bleu == 100.0);
    state_free(&s);
}

static void test_bad_values_are_refused(void **state)
{
    (void)state;
    static const struct {
        const char *key, *value, *tensor;
        size_t index;
        float x;
        const char *want;
    } cases[] = {
        {"step", "abc", NULL, 0, 0, "bad \"step\" in __metadata__: 'abc' (expected an integer >= 0)"},
        {"step", "-1", NULL, 0, 0, "bad \"step\""},
        {"step", "7 ", NULL, 0, 0, "bad \"step\""},
        {"step", "99999999999999999999", NULL, 0, 0, "bad \"step\""},
        {"step", "", NULL, 0, 0, "bad \"step\""},
        {"step", "-", NULL, 0, 0, "bad \"step\""},
        {"elapsed_tokens", "1-2 5", NULL, 0, 0, "bad \"elapsed_tokens\""},
        {"epoch", "+1", NULL, 0, 0, "bad \"epoch\""},
        {"batch", "-1", NULL, 0, 0, "bad \"batch\" in __metadata__: '-1'"},
        {"batch", "0x10", NULL, 0, 0, "bad \"batch\""},
        {"best_bleu", "inf", NULL, 0, 0, "bad \"best_bleu\" in __metadata__: 'inf'"},
        {"best_bleu", "nan", NULL, 0, 0, "bad \"best_bleu\""},
        {"best_bleu", "-0.5", NULL, 0, 0, "bad \"best_bleu\""},
        {"best_bleu", "101", NULL, 0, 0, "bad \"best_bleu\""},
        {"dropout_rng", "12", NULL, 0, 0, "bad \"dropout_rng\""},
        {"elapsed_tokens", "1 nan", NULL, 0, 0, "bad \"elapsed_tokens\""},
        {"elapsed_tokens", "1", NULL, 0, 0, "bad \"elapsed_tokens\""},
        {"elapsed_tokens", "-1 5", NULL, 0, 0, "bad \"elapsed_tokens\""},
        {"snapshots", "2 3 0", NULL, 0, 0, "bad \"snapshots\" in __metadata__: '2 3 0'"},
        {"snapshots", "2 1 2", NULL, 0, 0, "bad \"snapshots\""},
        {"snapshots", "2 -1 0", NULL, 0, 0, "bad \"snapshots\""},
        {"snapshots", "3 1 0", NULL, 0, 0, "the checkpoint keeps 3 epoch snapshots, the config asks for 2"},
        {"run_id", "short", NULL, 0, 0, "bad \"run_id\""},
        {"init_run", "short", NULL, 0, 0, "bad \"init_run\""},
        {"snapshots", "0 0 1", NULL, 0, 0, "bad \"snapshots\""},
        {"log_bytes", "-5", NULL, 0, 0, "bad \"log_bytes\""},
        {"scored_step", "x", NULL, 0, 0, "bad \"scored_step\""},
        {"dev_hash", "12", NULL, 0, 0, "bad \"dev_hash\""},
        {"batch_plan", "000000000000feed 60 5", NULL, 0, 0, "bad \"batch_plan\""},
        {"batch_plan", "000000000000feed 0 5 4", NULL, 0, 0, "bad \"batch_plan\""},
        {"checkpoint", "translate-checkpoint-0\n", NULL, 0, 0, "bad \"checkpoint\" in __metadata__: 'translate-checkpoint-0?'"},
        {"step", NULL, NULL, 0, 0, "not a checkpoint: no \"step\" in __metadata__"},
        {NULL, NULL, "optimizer.m", 5, NAN, "tensor 'optimizer.m': element 5 is nan"},
        {NULL, NULL, "optimizer.v", 3, INFINITY, "tensor 'optimizer.v': element 3 is inf"},
        {NULL, NULL, "optimizer.v", 4, -1.0f, "tensor 'optimizer.v': element 4 is -1, a second moment must be >= 0"},
        {NULL, NULL, "optimizer.snapshots", 9, NAN, "tensor 'optimizer.snapshots': element 9 is nan"},
    };
    char path[600];
    snprintf(path, sizeof path, "%s/bad.ckpt", temp_dir());
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        save_one(path);
        rewrite(path, cases[i].key, cases[i].value, cases[i].tensor, cases[i].index, cases[i].x);
        State s;
        state_init(&s, 2);
        Error err = {{0}};
        int rc = checkpoint_load(path, &s.tr, hashes, &s.p, &err);
        state_free(&s);
        if (rc == 0) fail_msg("case %zu (%s): accepted", i, cases[i].key ? cases[i].key : cases[i].tensor);
        if (!strstr(err.message, cases[i].want) || strncmp(err.message, path, strlen(path)) != 0 ||
            strchr(err.message, '\n'))
            fail_msg("case %zu: message '%s' does not say '%s'", i, err.message, cases[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_restores_what_was_saved),
        cmocka_unit_test(test_snapshots_average_the_last_ones),
        cmocka_unit_test(test_a_perfect_score_rounded_above_100_resumes),
        cmocka_unit_test(test_bad_values_are_refused),
    };
    return cmocka_run_group_tests_name("checkpoint", tests, NULL, NULL);
}
