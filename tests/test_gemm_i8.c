/* test_gemm_i8.c — the int8-weight products of translate --int8
 * (model/gemm_i8.h) against the plain loops, the per-row quantisation, and
 * the shipped model quantised: each kernel (AVX-512, AVX2 forced, the
 * generic path forced) in turn, on odd shapes (M across the small-kernel
 * limit, N not a multiple of the tiles, K with a tail past 8 and 16). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "../model/gemm.h"
#include "../model/gemm_f16.h"
#include "../model/gemm_i8.h"
#include "../model/model.h"

static const char *const KERNELS[] = {"avx512", "avx2", "generic"};

/* Force kernel k; false (and nothing forced) when this CPU lacks it. */
static bool force(size_t k)
{
    if (gemm_force_kernel(KERNELS[k]) && strcmp(gemm_i8_kernel_name(), KERNELS[k]) == 0) return true;
    gemm_force_kernel(NULL);
    return false;
}

static void random_matrix(int8_t *q, float *scale, int N, int K, Rng *rng)
{
    for (int i = 0; i < N * K; i++) q[i] = (int8_t)(rng_uniform(rng) * 255.0f - 127.0f);
    for (int j = 0; j < N; j++) scale[j] = 0.001f + 0.02f * rng_uniform(rng);
}

/* gemm_i8_nt against the double-summed reference on M×N×K. */
static void check_shape(int M, int N, int K, Rng *rng)
{
    float *A = malloc((size_t)M * K * sizeof *A), *C = malloc((size_t)M * N * sizeof *C);
    float *R = malloc((size_t)M * N * sizeof *R), *scale = malloc((size_t)N * sizeof *scale);
    int8_t *q = malloc((size_t)N * K);
    for (int i = 0; i < M * K; i++) A[i] = 2.0f * rng_uniform(rng) - 1.0f;
    random_matrix(q, scale, N, K, rng);
    gemm_i8_nt(C, A, q, scale, M, N, K);
    gemm_i8_nt_reference(R, A, q, scale, M, N, K);
    for (int i = 0; i < M * N; i++) {
        /* float sums of K products of up to 127 in size, times the scale */
        float tol = 1e-5f * (float)K * 127.0f * scale[i % N] + 1e-5f * fabsf(R[i]);
        if (!(fabsf(C[i] - R[i]) <= tol))
            fail_msg("%s M=%d N=%d K=%d: C[%d] = %.9g, reference %.9g", gemm_i8_kernel_name(), M, N, K, i,
                     C[i], R[i]);
    }
    free(A), free(C), free(R), free(scale), free(q);
}

static void test_products_match_the_reference(void **state)
{
    (void)state;
    static const int Ms[] = {1, 2, 3, 4, 5, 9, 32, 33, 70};
    static const int Ns[] = {1, 5, 8, 12, 17, 30};
    static const int Ks[] = {1, 7, 8, 9, 16, 17, 43, 256};
    for (size_t k = 0; k < sizeof KERNELS / sizeof *KERNELS; k++) {
        if (!force(k)) continue;
        Rng rng;
        rng_seed(&rng, 7);
        for (size_t m = 0; m < sizeof Ms / sizeof *Ms; m++)
            for (size_t n = 0; n < sizeof Ns / sizeof *Ns; n++)
                for (size_t kk = 0; kk < sizeof Ks / sizeof *Ks; kk++) check_shape(Ms[m], Ns[n], Ks[kk], &rng);
        /* large M on a matrix widened in several blocks (2^18 / K rows each) */
        check_shape(40, 1100, 256, &rng);
    }
    gemm_force_kernel(NULL);
}

/* A row's results do not depend on the rows beside it (a sentence in a
 * batch or a beam gets the bits it gets alone): up to GEMM_I8_SMALL_M
 * rows at once equal each row by itself, bit for bit, on every kernel;
 * on the generic one, more rows too (gemm_i8.h). */
static void test_rows_are_independent(void **state)
{
    (void)state;
    enum { MAX_M = 70 };
    static const int Ms[] = {2, 3, 4, 5, 13, GEMM_I8_SMALL_M, GEMM_I8_SMALL_M + 1, MAX_M};
    enum { N = 27, K = 43 }; /* N: 3 tiles of 8 and 3 rows past them */
    Rng rng;
    rng_seed(&rng, 3);
    float A[MAX_M * K], C[MAX_M * N], one[N], scale[N];
    int8_t q[N * K];
    for (int i = 0; i < MAX_M * K; i++) A[i] = 2.0f * rng_uniform(&rng) - 1.0f;
    random_matrix(q, scale, N, K, &rng);
    for (size_t k = 0; k < sizeof KERNELS / sizeof *KERNELS; k++) {
        if (!force(k)) continue;
        for (size_t m = 0; m < sizeof Ms / sizeof *Ms; m++) {
            if (Ms[m] > GEMM_I8_SMALL_M && strcmp(KERNELS[k], "generic") != 0) continue;
            gemm_i8_nt(C, A, q, scale, Ms[m], N, K);
            for (int i = 0; i < Ms[m]; i++) {
                gemm_i8_nt(one, A + i * K, q, scale, 1, N, K);
                if (memcmp(one, C + i * N, sizeof one) != 0)
                    fail_msg("%s, %d rows: row %d differs from itself alone", KERNELS[k], Ms[m], i);
            }
        }
    }
    gemm_force_kernel(NULL);
}

/* Each row gets its own scale: its largest value becomes ±127 and every
 * value comes back within half a step; a zero row stays zero. */
static void test_quantize_row(void **state)
{
    (void)state;
    enum { K = 50 };
    float w[K], zero[K] = {0};
    int8_t q[K];
    Rng rng;
    rng_seed(&rng, 5);
    for (int k = 0; k < K; k++) w[k] = 0.3f * (2.0f * rng_uniform(&rng) - 1.0f);
    w[17] = -0.75f; /* the largest */
    float s = gemm_i8_quantize_row(q, w, K);
    assert_true(fabsf(s - 0.75f / 127.0f) < 1e-9f);
    assert_int_equal(q[17], -127);
    for (int k = 0; k < K; k++) assert_true(fabsf((float)q[k] * s - w[k]) <= 0.5f * s * 1.0001f);
    assert_true(gemm_i8_quantize_row(q, zero, K) == 0.0f);
    for (int k = 0; k < K; k++) assert_int_equal(q[k], 0);
}

/* --int8 quantises every matrix the products read, the output projection
 * too when it is the target embedding (tied, as both shipped models): its
 * rows quantised as gemm_i8_quantize_row quantises them (left in float16,
 * the logits came from the table --int8 was to replace). */
static void test_a_tied_output_projection_is_quantised_too(void **state)
{
    (void)state;
    ModelArch a = {.d_model = 8, .heads = 2, .encoder_layers = 1, .decoder_layers = 1, .d_ff = 16,
                   .activation = ACTIVATION_RELU, .norm_first = true, .max_len = 16, .scale_attention = true,
                   .tied_output = true, .src_vocab = 12, .tgt_vocab = 10};
    Model m;
    model_init_random(&m, &a, 3);
    params_quantize_int8(&m.params, &a);
    const Int8Matrix *g = &m.params.generator_weight_i8;
    assert_non_null(g->q);
    assert_non_null(g->scale);
    int8_t q[8];
    for (int r = 0; r < a.tgt_vocab; r++) {
        float s = gemm_i8_quantize_row(q, m.params.tgt_embed + (size_t)r * 8, 8);
        assert_true(s == g->scale[r]);
        assert_memory_equal(q, g->q + (size_t)r * 8, 8);
    }
    model_free(&m);
}

/* The shipped model with --int8: the same translation of a plain
 * sentence as float16, and mini-batches of 2 short lines (within
 * GEMM_I8_SMALL_M rows: the same bits) give what one line at a time
 * gives.  Then the options --int8 does nothing with are refused. */
static void test_int8_translates_like_float16(void **state)
{
    (void)state;
    const char *const f16[] = {"./translate", "-q", "-c", "configs/en-zh.yaml", "I love china", NULL};
    const char *const i8[] = {"./translate", "-q", "--int8", "-c", "configs/en-zh.yaml", "I love china", NULL};
    RunResult a = run_program(f16, NULL, 0), b = run_program(i8, NULL, 0);
    assert_int_equal(a.status, 0);
    assert_int_equal(b.status, 0);
    assert_string_equal(a.out, b.out);
    run_result_free(&a);
    run_result_free(&b);
    /* ...from int8 weights, whose logits differ from float16's: --int8 acts */
    char logits[2][600];
    for (int i = 0; i < 2; i++) {
        snprintf(logits[i], sizeof logits[i], "%s/logits-%d.bin", temp_dir(), i);
        const char *argv[] = {"./translate", "-q", "-b", "1", "-c", "configs/en-zh.yaml", "--logits", logits[i],
                              i ? "--int8" : "I love china", i ? "I love china" : NULL, NULL};
        RunResult r = run_program(argv, NULL, 0);
        assert_int_equal(r.status, 0);
        run_result_free(&r);
    }
    size_t len0, len1;
    char *l0 = read_file(logits[0], &len0), *l1 = read_file(logits[1], &len1);
    assert_true(l0 && l1 && len0 == len1 && len0 > 0);
    if (memcmp(l0, l1, len0) == 0) fail_msg("--int8 gave float16's logits bit for bit");
    free(l0);
    free(l1);
    static const char input[] = "Good morning.\nTom is reading a very long book about the history of the world.\n"
                                "How are you?\nI love China.\nIt is raining today, so we will stay home.\n";
    const char *const line[] = {"./translate", "-q", "--int8", "-c", "configs/en-zh.yaml", "--maxi-batch", "1",
                                NULL};
    const char *const batch[] = {"./translate", "-q", "--int8", "-c", "configs/en-zh.yaml", "--mini-batch", "2",
                                 NULL};
    a = run_program(line, input, sizeof input - 1);
    b = run_program(batch, input, sizeof input - 1);
    assert_int_equal(a.status, 0);
    assert_int_equal(count_lines(a.out), 5);
    assert_string_equal(a.out, b.out);
    run_result_free(&a);
    run_result_free(&b);
    const char *const init[] = {"./translate", "--int8", "--init-weights", "-c", "configs/en-zh.yaml", NULL};
    const char *const list[] = {"./translate", "--int8", "--list-models", NULL};
    const char *const *refused[] = {init, list};
    for (int i = 0; i < 2; i++) {
        RunResult r = run_program(refused[i], NULL, 0);
        assert_int_equal(r.status, 2); /* EXIT_USAGE */
        expect_in(r.err, "--int8 is for translating");
        assert_int_equal(count_lines(r.err), 1);
        run_result_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_products_match_the_reference),
        cmocka_unit_test(test_rows_are_independent),
        cmocka_unit_test(test_quantize_row),
        cmocka_unit_test(test_a_tied_output_projection_is_quantised_too),
        cmocka_unit_test(test_int8_translates_like_float16),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
