/* test_reference.c — the model, beam search and AdamW against PyTorch's
 * numbers, on every machine: tests/data/reference/ holds what
 * tools/reference.py computed with stock torch.nn.Transformer,
 * torch.optim.AdamW and a plain beam search (`make fixtures` rewrites it;
 * see tests/data/README.md), so no Python is needed here.
 *
 * For each fixture model (pre-norm GELU tied, post-norm ReLU untied):
 *   - a teacher-forced pass: logits and every head's encoder, decoder and
 *     cross-attention maps;
 *   - beam_decode: the n-best token lists, finished flags and scores;
 *   - one training step: the loss and every gradient, then two AdamW
 *     updates from torch's gradients (so the update alone is compared).
 * Tolerances are absolute + relative; the largest difference is printed
 * for every comparison.  The live comparisons with PyTorch
 * (test_parity.c, test_train.c) stay: they cover other shapes and the
 * shipped models wherever torch is installed. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/beam.h"
#include "../model/decode.h"
#include "../model/safetensors.h"
#include "../training/trainer.h"
#include "../model/model.h"

#define FIXTURES "tests/data/reference"

/* ---- reading the fixtures ---------------------------------------------------- */

static void open_fixture(SafeFile *f, const char *model, const char *kind)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s%s.safetensors", FIXTURES, model, kind);
    Error err = {{0}};
    if (safetensors_open(path, f, &err)) fail_msg("%s (run `make fixtures`?)", err.message);
}

/* Tensor `name` as floats (caller frees); *n its element count. */
static float *floats(const SafeFile *f, const char *name, size_t *n)
{
    const SafeTensor *t = safetensors_find(f, name);
    if (!t) fail_msg("%s: no tensor '%s'", f->path, name);
    float *out = malloc((t->numel ? t->numel : 1) * sizeof(float));
    Error err = {{0}};
    if (safetensors_to_f32(f, t, out, &err)) fail_msg("%s", err.message);
    if (n) *n = t->numel;
    return out;
}

/* Token ids, stored as float32 (our reader knows float dtypes only). */
static int *ids(const SafeFile *f, const char *name, int *n)
{
    size_t count;
    float *v = floats(f, name, &count);
    int *out = malloc((count ? count : 1) * sizeof(int));
    for (size_t i = 0; i < count; i++) out[i] = (int)v[i];
    free(v);
    *n = (int)count;
    return out;
}

static double meta_number(const SafeFile *f, const char *key)
{
    const char *v = safetensors_meta(f, key);
    if (!v) fail_msg("%s: no metadata '%s'", f->path, key);
    return strtod(v, NULL);
}

/* The fixture model NAME.safetensors, its architecture read from its own
 * metadata (tools/reference.py is the one place that defines it). */
static void load_model(const char *name, Model *m)
{
    SafeFile f;
    open_fixture(&f, name, "");
    ModelArch a = {
        .d_model = (int)meta_number(&f, "d_model"), .heads = (int)meta_number(&f, "heads"),
        .encoder_layers = (int)meta_number(&f, "encoder_layers"),
        .decoder_layers = (int)meta_number(&f, "decoder_layers"), .d_ff = (int)meta_number(&f, "d_ff"),
        .activation = strcmp(safetensors_meta(&f, "activation"), "gelu") ? ACTIVATION_RELU : ACTIVATION_GELU,
        .norm_first = !strcmp(safetensors_meta(&f, "norm"), "pre"), .max_len = (int)meta_number(&f, "max_len"),
        .scale_attention = !strcmp(safetensors_meta(&f, "scale_attention"), "true"),
        .tied_output = !strcmp(safetensors_meta(&f, "tied_output_embedding"), "true"),
        .src_vocab = (int)meta_number(&f, "source_vocab_size"),
        .tgt_vocab = (int)meta_number(&f, "target_vocab_size")};
    char path[256];
    snprintf(path, sizeof path, "%s", f.path);
    safetensors_close(&f);
    Error err = {{0}};
    VocabHashes none = {0, 0};
    if (model_load(m, path, &a, none, &err)) fail_msg("%s", err.message);
}

/* ---- comparing ----------------------------------------------------------------- */

/* |ours - ref| <= atol + rtol·|ref| everywhere?  Prints the largest
 * difference, and the first element out of tolerance; counts a failure. */
static void compare(const char *what, const float *ours, const float *ref, size_t n, double atol,
                    double rtol, int *failures)
{
    double worst = 0;
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)ours[i] - (double)ref[i]);
        if (!(d <= worst)) worst = d; /* NaN counts as the worst */
        if (!(d <= atol + rtol * fabs((double)ref[i])) && bad++ == 0) first = i;
    }
    print_message("  %s %s: max |diff| %.2e over %zu values (tolerance %.0e + %.0e |ref|)\n",
                  bad ? "FAIL" : "ok  ", what, worst, n, atol, rtol);
    if (bad) {
        print_message("       %zu out of tolerance, first [%zu]: ours %.9g, PyTorch %.9g\n", bad, first,
                      (double)ours[first], (double)ref[first]);
        (*failures)++;
    }
}

static void finish(const char *what, int failures)
{
    if (failures) fail_msg("%s: %d comparisons with the PyTorch fixtures failed (see above)", what, failures);
}

/* ---- the forward pass ----------------------------------------------------------- */

static void check_forward(const char *name)
{
    Model m;
    load_model(name, &m);
    const ModelArch *a = &m.arch;
    SafeFile f;
    open_fixture(&f, name, ".forward");
    int cases = (int)meta_number(&f, "cases"), failures = 0;
    for (int c = 0; c < cases; c++) {
        char key[64], what[96];
        int S, T, T2;
        snprintf(key, sizeof key, "case.%d.src", c);
        int *src = ids(&f, key, &S);
        snprintf(key, sizeof key, "case.%d.input", c);
        int *input = ids(&f, key, &T);
        snprintf(key, sizeof key, "case.%d.output", c);
        int *output = ids(&f, key, &T2);
        assert_int_equal(T, T2);
        print_message("%s case %d: %d source tokens, %d target tokens\n", name, c, S, T);
        Translation t;
        decode_teacher_forced(&m, src, S, input, output, T, &t);
        static const char *const parts[] = {"logits", "encoder", "decoder", "cross"};
        const float *ours[] = {t.logits, t.encoder_attn, t.decoder_attn, t.cross_attn};
        size_t want[] = {(size_t)T * a->tgt_vocab, (size_t)a->encoder_layers * a->heads * S * S,
                         (size_t)a->decoder_layers * a->heads * T * T,
                         (size_t)a->decoder_layers * a->heads * T * S};
        for (int p = 0; p < 4; p++) {
            size_t n;
            snprintf(key, sizeof key, "case.%d.%s", c, parts[p]);
            float *ref = floats(&f, key, &n);
            assert_int_equal(n, want[p]);
            snprintf(what, sizeof what, "%s%s", parts[p], p ? " attention" : "");
            compare(what, ours[p], ref, n, 1e-4, 1e-4, &failures);
            free(ref);
        }
        translation_free(&t);
        free(src);
        free(input);
        free(output);
    }
    safetensors_close(&f);
    model_free(&m);
    finish(name, failures);
}

static void test_forward_pre_norm_gelu_tied(void **state) { (void)state; check_forward("pre"); }
static void test_forward_post_norm_relu_untied(void **state) { (void)state; check_forward("post"); }

/* ---- beam search ------------------------------------------------------------------- */

static void check_beam(const char *name)
{
    Model m;
    load_model(name, &m);
    SafeFile f;
    open_fixture(&f, name, ".beam");
    int cases = (int)meta_number(&f, "beam.cases"), failures = 0;
    for (int c = 0; c < cases; c++) {
        char key[64];
        int S, n_ref;
        snprintf(key, sizeof key, "beam.%d.beam", c);
        BeamSettings set = {.beam = (int)meta_number(&f, key)};
        snprintf(key, sizeof key, "beam.%d.n_best", c);
        set.n_best = (int)meta_number(&f, key);
        snprintf(key, sizeof key, "beam.%d.alpha", c);
        set.length_penalty = (float)meta_number(&f, key);
        snprintf(key, sizeof key, "beam.%d.limit", c);
        int limit = (int)meta_number(&f, key);
        snprintf(key, sizeof key, "beam.%d.src", c);
        int *src = ids(&f, key, &S);
        snprintf(key, sizeof key, "beam.%d.finished", c);
        int *finished = ids(&f, key, &n_ref);
        size_t ns;
        snprintf(key, sizeof key, "beam.%d.scores", c);
        float *ref_scores = floats(&f, key, &ns);
        print_message("%s beam case %d: beam %d, n-best %d, length penalty %g, limit %d\n", name, c,
                      set.beam, set.n_best, (double)set.length_penalty, limit);
        Translation out[64];
        float scores[64];
        int n = beam_decode(&m, src, S, limit, &set, out, scores);
        if (n != n_ref) {
            print_message("  FAIL %d hypotheses, PyTorch's search %d\n", n, n_ref);
            failures++;
        }
        for (int k = 0; k < n && k < n_ref; k++) {
            int T;
            snprintf(key, sizeof key, "beam.%d.hyp.%d", c, k);
            int *hyp = ids(&f, key, &T);
            bool same = out[k].steps == T && !memcmp(out[k].output_ids, hyp, (size_t)T * sizeof(int)) &&
                        out[k].finished == (finished[k] != 0);
            print_message("  %s #%d: %d tokens%s, score %.6f (PyTorch %.6f)\n", same ? "ok  " : "FAIL", k,
                          out[k].steps, out[k].finished ? "" : " (unfinished)", (double)scores[k],
                          (double)ref_scores[k]);
            if (!same) {
                print_message("       tokens differ: ours");
                for (int i = 0; i < out[k].steps; i++) print_message(" %d", out[k].output_ids[i]);
                print_message(", PyTorch");
                for (int i = 0; i < T; i++) print_message(" %d", hyp[i]);
                print_message("\n");
                failures++;
            }
            free(hyp);
        }
        if (n == n_ref) compare("scores", scores, ref_scores, (size_t)n, 1e-5, 1e-5, &failures);
        for (int k = 0; k < n; k++) translation_free(&out[k]);
        free(src);
        free(finished);
        free(ref_scores);
    }
    safetensors_close(&f);
    model_free(&m);
    finish(name, failures);
}

static void test_beam_pre_norm_gelu_tied(void **state) { (void)state; check_beam("pre"); }
static void test_beam_post_norm_relu_untied(void **state) { (void)state; check_beam("post"); }

/* ---- a training step and AdamW ------------------------------------------------------- */

/* Every parameter tensor of `p` against the fixture's PREFIX.NAME. */
static void compare_params(const SafeFile *f, const char *prefix, const ModelArch *a, Params *p,
                           double atol, double rtol, int *failures)
{
    ParamSpec *specs;
    size_t count = params_describe(a, p, &specs), total = 0;
    int before = *failures;
    double worst = 0;
    for (size_t s = 0; s < count; s++) {
        char key[160];
        size_t n;
        snprintf(key, sizeof key, "%s.%s", prefix, specs[s].name);
        float *ref = floats(f, key, &n);
        assert_int_equal(n, specs[s].numel);
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < n; i++) {
            double d = fabs((double)specs[s].data[i] - (double)ref[i]);
            if (!(d <= worst)) worst = d;
            if (!(d <= atol + rtol * fabs((double)ref[i])) && bad++ == 0) first = i;
        }
        if (bad) { /* one line per failing tensor; the passing ones are summed up below */
            print_message("  FAIL %s: %zu out of tolerance, first [%zu]: ours %.9g, PyTorch %.9g\n", key, bad,
                          first, (double)specs[s].data[first], (double)ref[first]);
            (*failures)++;
        }
        total += n;
        free(ref);
    }
    print_message("  %s %s: %zu tensors, %zu values, max |diff| %.2e (tolerance %.0e + %.0e |ref|)\n",
                  *failures > before ? "FAIL" : "ok  ", prefix, count, total, worst, atol, rtol);
    free(specs);
}

/* Overwrite p's tensors with the fixture's PREFIX.NAME. */
static void load_params(const SafeFile *f, const char *prefix, const ModelArch *a, Params *p)
{
    ParamSpec *specs;
    size_t count = params_describe(a, p, &specs);
    for (size_t s = 0; s < count; s++) {
        char key[160];
        size_t n;
        snprintf(key, sizeof key, "%s.%s", prefix, specs[s].name);
        float *ref = floats(f, key, &n);
        assert_int_equal(n, specs[s].numel);
        memcpy(specs[s].data, ref, n * sizeof(float));
        free(ref);
    }
    free(specs);
}

static void check_step(const char *name)
{
    Model m;
    load_model(name, &m);
    ModelArch a = m.arch;
    SafeFile f;
    open_fixture(&f, name, ".step");
    int Ns, Nt, Nl, ns, nt;
    int *src = ids(&f, "src_ids", &Ns), *src_start = ids(&f, "src_start", &ns);
    int *tgt = ids(&f, "tgt_ids", &Nt), *tgt_start = ids(&f, "tgt_start", &nt);
    int *labels = ids(&f, "labels", &Nl);
    assert_int_equal(Nt, Nl);
    assert_int_equal(ns, nt);
    Batch batch = {.count = ns - 1, .src_ids = src, .src_start = src_start, .tgt_ids = tgt, .tgt_start = tgt_start};
    Trainer tr;
    trainer_init(&tr, &m, Ns, Nt, 0.0f, (float)meta_number(&f, "label_smoothing"), 1);
    AdamWSettings s = {.lr = (float)meta_number(&f, "lr"), .beta1 = (float)meta_number(&f, "beta1"),
                       .beta2 = (float)meta_number(&f, "beta2"), .eps = (float)meta_number(&f, "eps"),
                       .weight_decay = (float)meta_number(&f, "weight_decay")};
    int failures = 0;
    for (int k = 1; k <= 2; k++) {
        char key[16];
        print_message("%s step %d:\n", name, k);
        if (k == 2) { /* start from torch's parameters, so only this step differs */
            snprintf(key, sizeof key, "after1");
            load_params(&f, key, &a, &tr.model.params);
        }
        float loss = trainer_step(&tr, &batch, labels, true);
        snprintf(key, sizeof key, "loss%d", k);
        float ref_loss = (float)meta_number(&f, key);
        compare("loss", &loss, &ref_loss, 1, 1e-5, 1e-5, &failures);
        snprintf(key, sizeof key, "grad%d", k);
        compare_params(&f, key, &a, &tr.grads, 1e-6, 1e-3, &failures);
        /* AdamW from torch's gradients: the update alone is compared */
        load_params(&f, key, &a, &tr.grads);
        trainer_update(&tr, &s, 0.0f);
        snprintf(key, sizeof key, "after%d", k);
        compare_params(&f, key, &a, &tr.model.params, 1e-6, 1e-5, &failures);
    }
    trainer_free(&tr);
    safetensors_close(&f);
    free(src);
    free(src_start);
    free(tgt);
    free(tgt_start);
    free(labels);
    finish(name, failures);
}

static void test_step_pre_norm_gelu_tied(void **state) { (void)state; check_step("pre"); }
static void test_step_post_norm_relu_untied(void **state) { (void)state; check_step("post"); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forward_pre_norm_gelu_tied),
        cmocka_unit_test(test_forward_post_norm_relu_untied),
        cmocka_unit_test(test_beam_pre_norm_gelu_tied),
        cmocka_unit_test(test_beam_post_norm_relu_untied),
        cmocka_unit_test(test_step_pre_norm_gelu_tied),
        cmocka_unit_test(test_step_post_norm_relu_untied),
    };
    return cmocka_run_group_tests_name("PyTorch fixtures (tests/data/reference)", tests, NULL, NULL);
}
