/* test_train.c — a whole training step: the model's gradients against
 * finite differences and against PyTorch autograd, AdamW against
 * torch.optim.AdamW, and the same bits on 1, 2 and 3 threads. */
#include "testutil.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/parallel.h"
#include "../model/safetensors.h"
#include "../training/optim.h"
#include "../training/trainer.h"
#include "../model/model.h"
#include "../tokenizer/vocab.h"


static ModelArch small_arch(bool pre)
{
    ModelArch a = {.d_model = 16, .heads = 4, .encoder_layers = 2, .decoder_layers = 2,
                   .d_ff = 24, .activation = ACTIVATION_GELU,
                   .norm_first = pre, .max_len = 16, .scale_attention = true,
                   .tied_output = !pre, .src_vocab = 23, .tgt_vocab = 19};
    return a;
}

/* Two sentences, packed: 5 + 3 source tokens, 4 + 6 target tokens. */
static const int src[] = {4, 9, 13, 22, 7, 5, 6, 8};
static int src_start[] = {0, 5, 8};
static const int tgt[] = {2, 5, 11, 17, 2, 6, 7, 8, 9, 10};
static const int labels[] = {5, 11, 17, 3, 6, 7, 8, 9, 10, 3};
static int tgt_start[] = {0, 4, 10};
static const Batch batch = {.count = 2, .src_ids = src, .src_start = src_start,
                            .tgt_ids = tgt, .tgt_start = tgt_start};

static void make_trainer(Trainer *tr, bool pre, float smoothing, Activation act, float dropout)
{
    ModelArch a = small_arch(pre);
    a.activation = act;
    Model m;
    model_init_random(&m, &a, pre ? 31 : 32);
    trainer_init(tr, &m, 8, 10, dropout, smoothing, 1);
}

/* The loss: without dropout, the evaluation's forward pass; with it, a
 * training step's from the same generator state, so every evaluation
 * draws the same masks (the loss is then a smooth function of the
 * weights).  The step's gradients go into tr->grads, which the caller has
 * copied. */
static double loss_at(Trainer *tr, const Rng *masks)
{
    if (!masks) return trainer_step(tr, &batch, labels, false);
    tr->dropout_rng = *masks;
    return trainer_step(tr, &batch, labels, true);
}

static double central_difference(Trainer *tr, const Rng *masks, float *p, float eps)
{
    float saved = *p;
    *p = saved + eps;
    double up = loss_at(tr, masks);
    *p = saved - eps;
    double down = loss_at(tr, masks);
    *p = saved;
    return (up - down) / (2.0 * eps);
}

/* Central differences of the loss for a few entries of every tensor; with
 * dropout, under one fixed set of masks (every dropout of the model: the
 * embeddings', each block's output, the feed-forward hidden layer). */
static void check_finite_differences(bool pre, float dropout)
{
    Trainer tr;
    /* GELU: ReLU's kink at 0 makes finite differences lie near it (ReLU is
     * checked by the PyTorch comparison below and in test_layers.c). */
    make_trainer(&tr, pre, 0.1f, ACTIVATION_GELU, dropout);
    Rng masks = tr.dropout_rng;
    trainer_step(&tr, &batch, labels, true);
    ParamSpec *specs;
    size_t n = params_describe(&tr.model.arch, &tr.model.params, &specs);
    float *analytic = xmalloc(tr.grads.count * sizeof *analytic);
    memcpy(analytic, tr.grads.data, tr.grads.count * sizeof *analytic);
    Rng rng;
    rng_seed(&rng, 5);
    double worst = 0;
    for (size_t s = 0; s < n; s++) {
        for (int k = 0; k < 3; k++) {
            size_t i = rng_next(&rng) % specs[s].numel;
            float *p = specs[s].data + i;
            float grad = analytic[p - tr.model.params.data];
            /* Richardson: two step sizes cancel the h² error term, so the
             * step can stay large enough for float32 rounding not to matter. */
            const Rng *m = dropout > 0.0f ? &masks : NULL;
            double numeric = (4.0 * central_difference(&tr, m, p, 5e-3f) - central_difference(&tr, m, p, 1e-2f)) / 3.0;
            double err = fabs(numeric - grad) / (fabs(numeric) + 1e-2);
            if (err > worst) worst = err;
            if (err > 2e-2)
                fail_msg("%s[%zu]: backward %.6g, finite difference %.6g", specs[s].name, i, grad, numeric);
        }
    }
    print_message("%s-norm model%s: worst relative error %.2e over %zu tensors\n", pre ? "pre" : "post",
                  dropout > 0.0f ? ", dropout" : "", worst, n);
    free(analytic);
    free(specs);
    trainer_free(&tr);
}

/* The gradients backward WRITES (acts.c carves them where no step clears)
 * need no clearing: a step over a gradient set full of NaNs, and a step
 * on a short batch after steps on a longer one (stale rows), give the
 * parameter gradients of a fresh trainer, bit for bit, with dropout on,
 * both norms and both activations, on 1 to 3 threads. */
static void test_written_gradients_need_no_clearing(void **state)
{
    (void)state;
    static const int long_src[] = {4, 9, 13, 22, 7, 5, 6, 8, 3, 10, 11, 12, 14};
    static int long_src_start[] = {0, 5, 8, 13};
    static const int long_tgt[] = {2, 5, 11, 17, 2, 6, 7, 8, 9, 10, 2, 4, 5, 6, 7};
    static const int long_labels[] = {5, 11, 17, 3, 6, 7, 8, 9, 10, 3, 4, 5, 6, 7, 3};
    static int long_tgt_start[] = {0, 4, 10, 15};
    static const Batch longer = {.count = 3, .src_ids = long_src, .src_start = long_src_start,
                                 .tgt_ids = long_tgt, .tgt_start = long_tgt_start};
    for (int setup = 0; setup < 4; setup++) {
        bool pre = setup & 1;
        Activation act = setup & 2 ? ACTIVATION_GELU : ACTIVATION_RELU;
        for (int threads = 1; threads <= 3; threads++) {
            parallel_set_threads(threads);
            parallel_force_split(true);
            Trainer fresh, nan, stale;
            ModelArch a = small_arch(pre);
            a.activation = act;
            Model m;
            model_init_random(&m, &a, 41);
            trainer_init(&fresh, &m, 13, 15, 0.3f, 0.1f, 7);
            model_init_random(&m, &a, 41);
            trainer_init(&nan, &m, 13, 15, 0.3f, 0.1f, 7);
            model_init_random(&m, &a, 41);
            trainer_init(&stale, &m, 13, 15, 0.3f, 0.1f, 7);
            Rng masks = fresh.dropout_rng;
            trainer_step(&fresh, &batch, labels, true);
            float *block = nan.grad_acts.block;
            for (size_t i = 0; i < nan.grad_acts.block_size; i++) block[i] = NAN;
            trainer_step(&nan, &batch, labels, true);
            trainer_step(&stale, &longer, long_labels, true);
            trainer_step(&stale, &longer, long_labels, true);
            stale.dropout_rng = masks;
            trainer_step(&stale, &batch, labels, true);
            parallel_force_split(false);
            parallel_set_threads(1);
            size_t bytes = fresh.grads.count * sizeof(float);
            if (memcmp(nan.grads.data, fresh.grads.data, bytes) != 0)
                fail_msg("%s-norm, %s, %d threads: NaNs in the gradient set reach the parameter gradients",
                         pre ? "pre" : "post", act == ACTIVATION_GELU ? "gelu" : "relu", threads);
            if (memcmp(stale.grads.data, fresh.grads.data, bytes) != 0)
                fail_msg("%s-norm, %s, %d threads: a longer batch's rows change the next step's gradients",
                         pre ? "pre" : "post", act == ACTIVATION_GELU ? "gelu" : "relu", threads);
            trainer_free(&fresh);
            trainer_free(&nan);
            trainer_free(&stale);
        }
    }
}

static void test_gradients_match_finite_differences_post_norm(void **state)
{
    (void)state;
    check_finite_differences(false, 0.0f);
    check_finite_differences(false, 0.3f);
}

static void test_gradients_match_finite_differences_pre_norm(void **state)
{
    (void)state;
    check_finite_differences(true, 0.0f);
    check_finite_differences(true, 0.3f);
}

/* ---- against PyTorch ----------------------------------------------------- */


static void ints_tensor(SafeWriteTensor *t, const char *name, const int *ids, size_t n, float *buf)
{
    for (size_t i = 0; i < n; i++) buf[i] = (float)ids[i];
    *t = (SafeWriteTensor){name, 1, {n}, buf, DTYPE_F32};
}

static const char *tmp_path(char *buf, const char *name)
{
    snprintf(buf, 512, "%s/%s", temp_dir(), name);
    return buf;
}

static void check_step_against_pytorch(bool pre)
{
    SKIP_WITHOUT_TORCH();
    char model_path[512], batch_path[512], grads_path[512], after_path[512];
    Trainer tr;
    make_trainer(&tr, pre, 0.1f, pre ? ACTIVATION_GELU : ACTIVATION_RELU, 0.0f);
    Error err = {{0}};
    VocabHashes none = {0, 0};
    assert_int_equal(model_save(&tr.model, tmp_path(model_path, "step-model.safetensors"), none, &err), 0);
    float loss = trainer_step(&tr, &batch, labels, true);
    Model grads = {tr.model.arch, tr.grads};
    assert_int_equal(model_save(&grads, tmp_path(grads_path, "step-grads.safetensors"), none, &err), 0);
    AdamWSettings s = {.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.98f, .eps = 1e-9f, .weight_decay = 0.01f};
    trainer_update(&tr, &s, 0.0f);
    assert_int_equal(model_save(&tr.model, tmp_path(after_path, "step-after.safetensors"), none, &err), 0);

    float buf[5][16];
    SafeWriteTensor t[5];
    ints_tensor(&t[0], "src_ids", src, 8, buf[0]);
    ints_tensor(&t[1], "src_start", src_start, 3, buf[1]);
    ints_tensor(&t[2], "tgt_ids", tgt, 10, buf[2]);
    ints_tensor(&t[3], "tgt_start", tgt_start, 3, buf[3]);
    ints_tensor(&t[4], "labels", labels, 10, buf[4]);
    char values[7][32];
    const char *keys[7] = {"label_smoothing", "loss", "lr", "beta1", "beta2", "eps", "weight_decay"};
    double nums[7] = {0.1, loss, s.lr, s.beta1, s.beta2, s.eps, s.weight_decay};
    SafeMeta meta[7];
    for (int i = 0; i < 7; i++) {
        snprintf(values[i], sizeof values[i], "%.9g", nums[i]);
        meta[i] = (SafeMeta){(char *)keys[i], values[i]};
    }
    assert_int_equal(safetensors_write(tmp_path(batch_path, "step-batch.safetensors"), t, 5, meta, 7, &err), 0);
    trainer_free(&tr);

    const char *argv[] = {PYTHON_WITH_TORCH, "tools/reference.py", "step", model_path, batch_path, grads_path, after_path, NULL};
    RunResult r = run_program(argv, NULL, 0);
    print_in_full(&r);
    if (r.status != 0) fail_msg("reference.py step exited %d: its whole report is above", r.status);
    run_result_free(&r);
}

static void test_step_matches_pytorch_post_norm_tied(void **state)
{
    (void)state;
    check_step_against_pytorch(false);
}

static void test_step_matches_pytorch_pre_norm_untied(void **state)
{
    (void)state;
    check_step_against_pytorch(true);
}

/* ---- the same bits on any thread count ------------------------------------ */

/* Large enough that parallel_for has several parts everywhere: 8 sentences
 * (the attention), ~80 rows of 64 and 256 floats (the elementwise loops'
 * 4096-float parts, LayerNorm's and the bias gradient's columns), ~200k
 * parameters (AdamW and the norm's 16384-float parts). */
enum { DET_SENTENCES = 8, DET_MAX_ROWS = 128, DET_STEPS = 3 };

typedef struct {
    int src[DET_MAX_ROWS], tgt[DET_MAX_ROWS], labels[DET_MAX_ROWS];
    int src_start[DET_SENTENCES + 1], tgt_start[DET_SENTENCES + 1];
    Batch batch;
} DetBatch;

static void det_batch(DetBatch *d, const ModelArch *a)
{
    Rng rng;
    rng_seed(&rng, 7);
    d->src_start[0] = d->tgt_start[0] = 0;
    for (int i = 0; i < DET_SENTENCES; i++) {
        int S = 3 + (int)(rng_next(&rng) % 12), T = 2 + (int)(rng_next(&rng) % 13);
        d->src_start[i + 1] = d->src_start[i] + S;
        d->tgt_start[i + 1] = d->tgt_start[i] + T;
        for (int j = d->src_start[i]; j < d->src_start[i + 1]; j++)
            d->src[j] = VOCAB_SPECIALS + (int)(rng_next(&rng) % (uint64_t)(a->src_vocab - VOCAB_SPECIALS));
        for (int j = d->tgt_start[i]; j < d->tgt_start[i + 1]; j++)
            d->tgt[j] = VOCAB_SPECIALS + (int)(rng_next(&rng) % (uint64_t)(a->tgt_vocab - VOCAB_SPECIALS));
        for (int j = d->tgt_start[i]; j < d->tgt_start[i + 1]; j++) /* the next token, then </s> */
            d->labels[j] = j + 1 < d->tgt_start[i + 1] ? d->tgt[j + 1] : VOCAB_EOS;
    }
    d->batch = (Batch){.count = DET_SENTENCES, .src_ids = d->src, .src_start = d->src_start,
                       .tgt_ids = d->tgt, .tgt_start = d->tgt_start};
}

/* DET_STEPS steps (dropout, label smoothing, clipping, AdamW) on `threads`
 * threads with every loop split: the weights afterwards (the caller frees
 * them) and the losses. */
static float *train_on_threads(int threads, bool pre, float losses[DET_STEPS], size_t *count)
{
    ModelArch a = {.d_model = 64, .heads = 4, .encoder_layers = 2, .decoder_layers = 2,
                   .d_ff = 256, .activation = pre ? ACTIVATION_GELU : ACTIVATION_RELU,
                   .norm_first = pre, .max_len = 16, .scale_attention = true,
                   .tied_output = !pre, .src_vocab = 211, .tgt_vocab = 197};
    DetBatch d;
    det_batch(&d, &a);
    parallel_set_threads(threads);
    parallel_force_split(true);
    Model m;
    model_init_random(&m, &a, 5);
    Trainer tr;
    trainer_init(&tr, &m, DET_MAX_ROWS, DET_MAX_ROWS, 0.1f, 0.1f, 9);
    AdamWSettings s = {.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.98f, .eps = 1e-9f, .weight_decay = 0.01f};
    for (int step = 0; step < DET_STEPS; step++) {
        losses[step] = trainer_step(&tr, &d.batch, d.labels, true);
        trainer_update(&tr, &s, 0.5f); /* small enough to clip */
    }
    parallel_force_split(false);
    parallel_set_threads(1);
    *count = tr.model.params.count;
    float *weights = xmalloc(*count * sizeof *weights);
    memcpy(weights, tr.model.params.data, *count * sizeof *weights);
    trainer_free(&tr);
    return weights;
}

static void check_same_bits_on_any_threads(bool pre)
{
    float want_losses[DET_STEPS];
    size_t count, n;
    float *want = train_on_threads(1, pre, want_losses, &count);
    for (int threads = 2; threads <= 3; threads++) {
        float losses[DET_STEPS];
        float *got = train_on_threads(threads, pre, losses, &n);
        assert_int_equal(n, count);
        for (int step = 0; step < DET_STEPS; step++)
            if (memcmp(&losses[step], &want_losses[step], sizeof(float)) != 0)
                fail_msg("%d threads: step %d's loss %.9g, on 1 thread %.9g", threads, step,
                         losses[step], want_losses[step]);
        for (size_t i = 0; i < count; i++)
            if (memcmp(&got[i], &want[i], sizeof(float)) != 0)
                fail_msg("%d threads: weight %zu is %.9g after %d steps, on 1 thread %.9g", threads,
                         i, got[i], DET_STEPS, want[i]);
        free(got);
    }
    free(want);
}

static void test_same_bits_on_any_threads_post_norm(void **state)
{
    (void)state;
    check_same_bits_on_any_threads(false);
}

static void test_same_bits_on_any_threads_pre_norm(void **state)
{
    (void)state;
    check_same_bits_on_any_threads(true);
}

/* The schedule at hand-computed points: linear warm-up to the peak, then
 * peak·sqrt(warmup/step). */
static void test_learning_rate_schedule(void **state)
{
    (void)state;
    assert_float_equal(lr_schedule(1, 1.0f, 4), 0.25f, 1e-7f);
    assert_float_equal(lr_schedule(2, 1.0f, 4), 0.5f, 1e-7f);
    assert_float_equal(lr_schedule(4, 1.0f, 4), 1.0f, 1e-7f);
    assert_float_equal(lr_schedule(16, 1.0f, 4), 0.5f, 1e-7f);
    assert_float_equal(lr_schedule(100, 2.0f, 25), 1.0f, 1e-7f);
    assert_float_equal(lr_schedule(7, 3.0f, 0), 3.0f, 0.0f);
}

/* Clipping as torch.nn.utils.clip_grad_norm_: the norm before clipping,
 * and gradients above max_norm scaled by max_norm/(norm+1e-6) — just above
 * it too, not only far above; adamw_update applies the factor to each
 * gradient it reads. */
static void test_gradient_clipping(void **state)
{
    (void)state;
    float data[11] = {3, 4};
    Params g = {0};
    g.data = data;
    g.count = 11;
    assert_float_equal(grad_norm(&g), 5.0f, 1e-6f);
    assert_float_equal(clip_factor(5.0f, 10.0f), 1.0f, 0.0f); /* below: unchanged */
    assert_float_equal(clip_factor(5.0f, 4.0f), 4.0f / (5.0f + 1e-6f), 0.0f); /* between max and 2·max */
    assert_float_equal(clip_factor(5.0f, 0.0f), 1.0f, 0.0f); /* 0: no clipping */
    data[10] = 12; /* the tail after the 8-wide partial sums counts too */
    assert_float_equal(grad_norm(&g), 13.0f, 1e-5f);
    assert_float_equal(data[10], 12.0f, 0.0f); /* the gradients themselves stay */
}

/* The optimizer tests' model (every parameter kind, tied output) and
 * settings (weight decay on, so the decaying stretches differ). */
static const ModelArch OPTIM_ARCH = {.d_model = 8, .heads = 2, .encoder_layers = 1, .decoder_layers = 1,
                                     .d_ff = 16, .activation = ACTIVATION_RELU, .max_len = 8,
                                     .scale_attention = true, .tied_output = true, .src_vocab = 11,
                                     .tgt_vocab = 13};
static const AdamWSettings OPTIM_SETTINGS = {.lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.98f, .eps = 1e-9f,
                                             .weight_decay = 0.1f};

/* adamw_update with a gradient scale s is adamw_update on the gradients
 * times s: the same bits (clipping's factor, applied as they are read). */
static void test_adamw_grad_scale(void **state)
{
    (void)state;
    ModelArch a = OPTIM_ARCH;
    AdamWSettings s = OPTIM_SETTINGS;
    Params p1, p2, g1, g2;
    params_alloc(&p1, &a);
    params_alloc(&p2, &a);
    params_alloc(&g1, &a);
    params_alloc(&g2, &a);
    Rng rng;
    rng_seed(&rng, 3);
    for (size_t i = 0; i < p1.count; i++) {
        p1.data[i] = p2.data[i] = rng_normal(&rng);
        g1.data[i] = rng_normal(&rng);
        g2.data[i] = g1.data[i] * 0.37f;
    }
    AdamW o1, o2;
    adamw_init(&o1, &a);
    adamw_init(&o2, &a);
    for (int step = 0; step < 3; step++) {
        adamw_update(&o1, &p1, &g1, 0.37f, &s);
        adamw_update(&o2, &p2, &g2, 1.0f, &s);
    }
    assert_memory_equal(p1.data, p2.data, p1.count * sizeof *p1.data);
    assert_memory_equal(o1.m, o2.m, p1.count * sizeof *o1.m);
    /* weight decay shrank the matrices but not the biases: a zero gradient
     * leaves a bias as it was and moves a matrix towards 0 */
    memset(g1.data, 0, g1.count * sizeof *g1.data);
    AdamW o3;
    adamw_init(&o3, &a);
    memcpy(p2.data, p1.data, p1.count * sizeof *p1.data);
    adamw_update(&o3, &p1, &g1, 1.0f, &s);
    ParamSpec *specs;
    size_t n = params_layout(&a, &specs);
    int matrices = 0, others = 0;
    for (size_t t = 0; t < n; t++) {
        bool decays = specs[t].kind == PARAM_MATRIX || specs[t].kind == PARAM_EMBEDDING;
        for (size_t i = specs[t].offset; i < specs[t].offset + specs[t].numel; i++) {
            if (decays) assert_float_equal(p1.data[i], p2.data[i] * (1.0f - 1e-2f * 0.1f), 0.0f);
            else assert_float_equal(p1.data[i], p2.data[i], 0.0f);
        }
        decays ? matrices++ : others++;
    }
    assert_true(matrices > 0 && others > 0);
    free(specs);
    adamw_free(&o1);
    adamw_free(&o2);
    adamw_free(&o3);
    params_free(&p1);
    params_free(&p2);
    params_free(&g1);
    params_free(&g2);
}

/* trainer_update clips: two updates, the first with gradients far above
 * clip_norm, the second below it, give the weights of AdamW fed the
 * gradients times clip_factor, and not those of AdamW unclipped (Adam's
 * first step alone would not tell: it is blind to the gradients' scale). */
static void test_update_clips(void **state)
{
    (void)state;
    ModelArch a = OPTIM_ARCH;
    AdamWSettings s = OPTIM_SETTINGS;
    Model m;
    model_init_random(&m, &a, 7);
    Trainer tr;
    trainer_init(&tr, &m, 8, 8, 0.0f, 0.0f, 1);
    size_t n = tr.model.params.count;
    Params clipped, unclipped, g;
    params_alloc(&clipped, &a);
    params_alloc(&unclipped, &a);
    params_alloc(&g, &a);
    memcpy(clipped.data, tr.model.params.data, n * sizeof *g.data);
    memcpy(unclipped.data, tr.model.params.data, n * sizeof *g.data);
    AdamW o1, o2;
    adamw_init(&o1, &a);
    adamw_init(&o2, &a);
    Rng rng;
    rng_seed(&rng, 11);
    const float clip = 1.0f, size[2] = {10.0f, 1e-3f};
    for (int step = 0; step < 2; step++) {
        for (size_t i = 0; i < n; i++) g.data[i] = size[step] * rng_normal(&rng);
        memcpy(tr.grads.data, g.data, n * sizeof *g.data);
        float norm = trainer_update(&tr, &s, clip);
        assert_float_equal(norm, grad_norm(&g), 0.0f);
        assert_true(step == 0 ? norm > clip : norm < clip);
        adamw_update(&o1, &clipped, &g, clip_factor(norm, clip), &s);
        adamw_update(&o2, &unclipped, &g, 1.0f, &s);
    }
    assert_memory_equal(tr.model.params.data, clipped.data, n * sizeof *g.data);
    assert_memory_not_equal(tr.model.params.data, unclipped.data, n * sizeof *g.data);
    adamw_free(&o1);
    adamw_free(&o2);
    params_free(&clipped);
    params_free(&unclipped);
    params_free(&g);
    trainer_free(&tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_learning_rate_schedule),
        cmocka_unit_test(test_gradient_clipping),
        cmocka_unit_test(test_adamw_grad_scale),
        cmocka_unit_test(test_update_clips),
        cmocka_unit_test(test_written_gradients_need_no_clearing),
        cmocka_unit_test(test_gradients_match_finite_differences_post_norm),
        cmocka_unit_test(test_gradients_match_finite_differences_pre_norm),
        cmocka_unit_test(test_step_matches_pytorch_post_norm_tied),
        cmocka_unit_test(test_step_matches_pytorch_pre_norm_untied),
        cmocka_unit_test(test_same_bits_on_any_threads_post_norm),
        cmocka_unit_test(test_same_bits_on_any_threads_pre_norm),
    };
    return cmocka_run_group_tests_name("training step", tests, NULL, NULL);
}
