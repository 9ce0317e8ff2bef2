/* test_gemm_f16.c — the float16-weight products (model/gemm_f16.h) against
 * the plain loops, the packing into panels, and a float16 model kept
 * float16 (model_load_inference) against the same file widened to float32.
 *
 * Shapes are odd on purpose: M across the tile heights (12 rows with
 * AVX-512, 6 with AVX2) and the one-thread limit, N not a multiple of a
 * panel (16) or of a tile's panels, K not a multiple of 8 (the packing's
 * tail), each kernel (AVX-512, AVX2 forced, the generic path forced) in
 * turn. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/decode.h"
#include "../model/gemm.h"
#include "../model/gemm_f16.h"
#include "../model/model.h"
#include "../model/parallel.h"
#include "../model/params.h"
#include "../model/safetensors.h"

/* A random float16 in about [-2, 2] (finite: exponent below 31). */
static uint16_t random_half(Rng *rng)
{
    uint16_t sign = rng_uniform(rng) < 0.5f ? 0x8000 : 0;
    uint16_t exp = (uint16_t)(1 + (int)(rng_uniform(rng) * 15.0f)); /* 2^-14 .. 2^0 */
    uint16_t mant = (uint16_t)(rng_uniform(rng) * 1023.0f);
    return sign | (uint16_t)(exp << 10) | mant;
}

/* B[N,K] packed into new panels (free them). */
static uint16_t *packed(const uint16_t *B, int N, int K)
{
    uint16_t *panels = malloc(gemm_f16_panels_size(N, K) * sizeof *panels);
    assert_true(gemm_f16_pack(panels, B, N, K));
    return panels;
}

/* gemm_f16_nt against the double-summed reference on M×N×K, with the
 * tolerance of test_gemm (float sums of K products). */
static void check_shape(int M, int N, int K, Rng *rng)
{
    float *A = malloc((size_t)M * K * sizeof *A), *C = malloc((size_t)M * N * sizeof *C);
    float *R = malloc((size_t)M * N * sizeof *R);
    uint16_t *B = malloc((size_t)N * K * sizeof *B);
    for (int i = 0; i < M * K; i++) A[i] = 2.0f * rng_uniform(rng) - 1.0f;
    for (int i = 0; i < N * K; i++) B[i] = random_half(rng);
    uint16_t *panels = packed(B, N, K);
    gemm_f16_nt(C, A, panels, M, N, K);
    gemm_f16_nt_reference(R, A, B, M, N, K);
    for (int i = 0; i < M * N; i++) {
        float tol = 1e-5f * (float)K + 1e-4f * fabsf(R[i]);
        if (!(fabsf(C[i] - R[i]) <= tol))
            fail_msg("%s M=%d N=%d K=%d: C[%d] = %.9g, reference %.9g", gemm_f16_kernel_name(), M, N,
                     K, i, C[i], R[i]);
    }
    free(A), free(B), free(C), free(R), free(panels);
}

static void check_all_shapes(void)
{
    static const int Ms[] = {1, 2, 3, 7, 8, 13, 32, 33};
    static const int Ns[] = {1, 3, 16, 17, 33, 150};
    static const int Ks[] = {1, 7, 8, 9, 16, 17, 33, 256};
    Rng rng;
    rng_seed(&rng, 12);
    for (size_t m = 0; m < sizeof Ms / sizeof *Ms; m++)
        for (size_t n = 0; n < sizeof Ns / sizeof *Ns; n++)
            for (size_t k = 0; k < sizeof Ks / sizeof *Ks; k++) check_shape(Ms[m], Ns[n], Ks[k], &rng);
    /* More rows than a block of them (96), over an odd number of panels */
    check_shape(100, 300, 256, &rng);
}

static void test_products_match_the_reference(void **state)
{
    (void)state;
    check_all_shapes();
}

/* A row's results do not depend on the rows beside it (so a sentence in a
 * batch gets the bits it gets alone): 2 to 7, 13, GEMM_F16_SMALL_M and 100
 * rows at once (every height of the AVX-512 and AVX2 tiles, and the
 * threads' path) equal each row by itself, bit for bit, with every kernel,
 * over 19 rows of B (a panel and a short one), 32 (a pair of panels) and
 * 140 (8 panels and a short one: a one-row tile of 8 panels and one of 1,
 * and an odd last panel for the tiles of several rows). */
static void test_rows_are_independent(void **state)
{
    (void)state;
    static const char *const kernels[] = {"avx512", "avx2", "generic"};
    static const int Ms[] = {2, 3, 4, 5, 6, 7, 13, GEMM_F16_SMALL_M, 100};
    static const int Ns[] = {19, 32, 140};
    enum { M_MAX = 100, N_MAX = 140, K = 43 }; /* K: a tail past 8 and 16 */
    Rng rng;
    rng_seed(&rng, 3);
    static float A[M_MAX * K], C[M_MAX * N_MAX], one[N_MAX];
    static uint16_t B[N_MAX * K];
    for (int i = 0; i < M_MAX * K; i++) A[i] = 2.0f * rng_uniform(&rng) - 1.0f;
    for (int i = 0; i < N_MAX * K; i++) B[i] = random_half(&rng);
    parallel_set_threads(2);
    for (size_t k = 0; k < sizeof kernels / sizeof *kernels; k++) {
        if (!gemm_force_kernel(kernels[k]) || strcmp(gemm_f16_kernel_name(), kernels[k]) != 0) continue;
        for (size_t n = 0; n < sizeof Ns / sizeof *Ns; n++)
            for (size_t m = 0; m < sizeof Ms / sizeof *Ms; m++) {
                int N = Ns[n];
                uint16_t *panels = packed(B, N, K);
                gemm_f16_nt(C, A, panels, Ms[m], N, K);
                for (int i = 0; i < Ms[m]; i++) {
                    gemm_f16_nt(one, A + i * K, panels, 1, N, K);
                    if (memcmp(one, C + i * N, (size_t)N * sizeof *one) != 0)
                        fail_msg("%s, %d rows × %d: row %d differs from itself alone", kernels[k], Ms[m], N,
                                 i);
                }
                free(panels);
            }
    }
    parallel_set_threads(1);
    gemm_force_kernel(NULL);
}

/* The order of summation, exactly (gemm_f16.h): each output is one chain
 * of fused multiply-adds, k ascending, from zero.  Every kernel (AVX-512,
 * AVX2 forced, the generic path forced) and every tile shape (one row's 8
 * panels, 12 or 6 rows' tiles, the short ones at the edges) gets those
 * bits, so a change of that order shows here, not as a translation that
 * differs in the last digit of its score. */
static float chain_sum(const float *a, const uint16_t *b, int K)
{
    float sum = 0.0f;
    for (int k = 0; k < K; k++) sum = fmaf(a[k], safetensors_f16_to_f32_scalar(b[k]), sum);
    return sum;
}

static void test_every_kernel_sums_in_the_documented_order(void **state)
{
    (void)state;
    static const char *const kernels[] = {"avx512", "avx2", "generic"};
    enum { N = 300, K = 2 * 16 * 16 + 5 };
    static const int Ms[] = {1, 2, 5, 6, 7, 12, 13};
    static const int Ns[] = {140, N}; /* 9 panels (an odd last one), 19 (one-row tiles fetching ahead) */
    Rng rng;
    rng_seed(&rng, 5);
    static float A[13 * K], C[13 * N];
    static uint16_t B[N * K];
    for (int i = 0; i < 13 * K; i++) A[i] = 2.0f * rng_uniform(&rng) - 1.0f;
    for (int i = 0; i < N * K; i++) B[i] = random_half(&rng);
    int checked = 0;
    for (size_t n = 0; n < sizeof Ns / sizeof *Ns; n++) {
        uint16_t *panels = packed(B, Ns[n], K);
        for (size_t k = 0; k < sizeof kernels / sizeof *kernels; k++) {
            if (!gemm_force_kernel(kernels[k]) || strcmp(gemm_f16_kernel_name(), kernels[k]) != 0) continue;
            checked++;
            for (size_t m = 0; m < sizeof Ms / sizeof *Ms; m++) {
                gemm_f16_nt(C, A, panels, Ms[m], Ns[n], K);
                for (int i = 0; i < Ms[m]; i++)
                    for (int j = 0; j < Ns[n]; j++) {
                        float want = chain_sum(A + (size_t)i * K, B + (size_t)j * K, K);
                        if (memcmp(&want, &C[i * Ns[n] + j], sizeof want) != 0)
                            fail_msg("%s M=%d N=%d: C[%d][%d] = %.9g, the documented order gives %.9g", kernels[k],
                                     Ms[m], Ns[n], i, j, C[i * Ns[n] + j], want);
                    }
            }
        }
        free(panels);
    }
    assert_true(checked >= 2); /* the generic path at least */
    gemm_force_kernel(NULL);
}

/* Packing: each row comes back exactly (gemm_f16_panel_row), past the
 * last whole panel too, whether the 8-at-a-time path or the tail packed
 * it; the padding is zeros; an Inf or a NaN anywhere is reported. */
static void test_packing_keeps_every_value_and_finds_non_finite_ones(void **state)
{
    (void)state;
    static const int Ns[] = {1, 15, 16, 17, 48, 150};
    static const int Ks[] = {1, 7, 8, 9, 43, 256};
    Rng rng;
    rng_seed(&rng, 8);
    static uint16_t B[150 * 256];
    static float row[256];
    for (int i = 0; i < 150 * 256; i++) B[i] = random_half(&rng);
    for (size_t n = 0; n < sizeof Ns / sizeof *Ns; n++)
        for (size_t k = 0; k < sizeof Ks / sizeof *Ks; k++) {
            int N = Ns[n], K = Ks[k];
            uint16_t *panels = packed(B, N, K);
            for (int j = 0; j < N; j++) {
                gemm_f16_panel_row(row, panels, j, K);
                for (int c = 0; c < K; c++)
                    if (row[c] != safetensors_f16_to_f32_scalar(B[(size_t)j * K + c]))
                        fail_msg("N=%d K=%d: row %d value %d came back as %.9g", N, K, j, c, row[c]);
            }
            const uint16_t *last = panels + (size_t)(N / 16 * 16) * K; /* a short panel, if any */
            for (int c = 0; N % 16 && c < K; c++)
                for (int l = N % 16; l < 16; l++)
                    if (last[(size_t)c * 16 + l] != 0) fail_msg("N=%d K=%d: padding row %d is not zero", N, K, l);
            /* an Inf, then a NaN, in the last row of the last whole panel
             * (the vector path when it is one) and in the last row */
            int rows[] = {N / 16 * 16 - 1, N - 1};
            for (int r = 0; r < 2; r++) {
                if (rows[r] < 0) continue;
                size_t at = (size_t)rows[r] * K + (size_t)K - 1;
                uint16_t keep = B[at];
                static const uint16_t bad[] = {0x7c00, 0xfe01};
                for (int b = 0; b < 2; b++) {
                    B[at] = bad[b];
                    if (gemm_f16_pack(panels, B, N, K))
                        fail_msg("N=%d K=%d: 0x%04x at row %d not reported", N, K, bad[b], rows[r]);
                }
                B[at] = keep;
            }
            free(panels);
        }
}

/* On an AVX-512 machine the AVX2 tiles are checked too, forced. */
static void test_avx2_path_matches_the_reference(void **state)
{
    (void)state;
    if (!gemm_force_kernel("avx2")) {
        gemm_force_kernel(NULL);
        return; /* no AVX2 here: the generic test covers it */
    }
    check_all_shapes();
    gemm_force_kernel(NULL);
}

static void test_generic_path_matches_the_reference(void **state)
{
    (void)state;
    assert_true(gemm_force_kernel("generic"));
    assert_string_equal(gemm_f16_kernel_name(), "generic");
    check_all_shapes();
    gemm_force_kernel(NULL);
}

/* A product with a vocabulary-sized, uneven B gives the same bits on 1, 2
 * and 3 threads, with each kernel: up to GEMM_F16_SMALL_M rows (one thread
 * whatever the count) and more, split between the threads by panels. */
static void test_products_give_the_same_bits_on_any_thread_count(void **state)
{
    (void)state;
    static const char *const kernels[] = {"avx512", "avx2", "generic"};
    static const int Ms[] = {1, 4, 8, 32, 33, 64};
    enum { N_MAX = 5231, K = 264 };
    Rng rng;
    rng_seed(&rng, 16);
    float *A = malloc((size_t)64 * K * sizeof *A);
    uint16_t *B = malloc((size_t)N_MAX * K * sizeof *B);
    float *one = malloc((size_t)64 * N_MAX * sizeof *one), *many = malloc((size_t)64 * N_MAX * sizeof *many);
    for (int i = 0; i < 64 * K; i++) A[i] = 2.0f * rng_uniform(&rng) - 1.0f;
    for (int i = 0; i < N_MAX * K; i++) B[i] = random_half(&rng);
    uint16_t *panels = packed(B, N_MAX, K);
    for (size_t k = 0; k < sizeof kernels / sizeof *kernels; k++) {
        if (!gemm_force_kernel(kernels[k])) continue;
        /* the generic path's fmaf is a call per output and value on x86:
         * the first 531 rows of B (34 panels) split between threads alike */
        int N = strcmp(kernels[k], "generic") == 0 ? 531 : N_MAX;
        for (size_t m = 0; m < sizeof Ms / sizeof *Ms; m++) {
            parallel_set_threads(1);
            gemm_f16_nt(one, A, panels, Ms[m], N, K);
            for (int threads = 2; threads <= 3; threads++) {
                parallel_set_threads(threads);
                gemm_f16_nt(many, A, panels, Ms[m], N, K);
                if (memcmp(one, many, (size_t)Ms[m] * N * sizeof *one) != 0)
                    fail_msg("%s M=%d: %d threads differ from one", gemm_f16_kernel_name(), Ms[m], threads);
            }
        }
    }
    parallel_set_threads(1);
    gemm_force_kernel(NULL);
    free(A), free(B), free(one), free(many), free(panels);
}

/* K = 0: C is zeros, as gemm_nt gives, with every kernel; one row over
 * more panels than two one-row tiles (whose panels it would fetch ahead,
 * spread over a k loop that never runs: a division by zero before) and
 * several rows. */
static void test_empty_inner_dimension_gives_zeros(void **state)
{
    (void)state;
    static const char *const kernels[] = {"avx512", "avx2", "generic"};
    enum { N = 300 };
    static float A[13], C[13 * N];
    static const uint16_t panels[1];
    for (size_t k = 0; k < sizeof kernels / sizeof *kernels; k++) {
        if (!gemm_force_kernel(kernels[k])) continue;
        for (int M = 1; M <= 13; M += 12) {
            for (int i = 0; i < M * N; i++) C[i] = 1.0f;
            gemm_f16_nt(C, A, panels, M, N, 0);
            for (int i = 0; i < M * N; i++)
                if (C[i] != 0.0f) fail_msg("%s M=%d K=0: C[%d] = %g", gemm_f16_kernel_name(), M, i, C[i]);
        }
    }
    gemm_force_kernel(NULL);
}

/* Widening is exact: every one of the 65,536 float16 values, through the
 * fast path (8 at a time) and its tail, equals the scalar conversion. */
static void test_widen_is_exact(void **state)
{
    (void)state;
    uint16_t *h = malloc(65536 * sizeof *h);
    float *f = malloc(65536 * sizeof *f);
    for (int i = 0; i < 65536; i++) h[i] = (uint16_t)i;
    gemm_f16_widen(f, h, 65533); /* a length with a tail */
    for (int i = 0; i < 65533; i++) {
        float want = safetensors_f16_to_f32_scalar(h[i]);
        if (memcmp(&f[i], &want, sizeof want) != 0 && !(isnan(f[i]) && isnan(want)))
            fail_msg("0x%04x widened to %a, expected %a", i, f[i], want);
    }
    free(h), free(f);
}

/* ---- a float16 model kept float16 ----------------------------------------- */

static const VocabHashes hashes = {0x1234, 0x5678};

static ModelArch small_arch(bool tied)
{
    ModelArch a = {.d_model = 32, .heads = 4, .encoder_layers = 2, .decoder_layers = 2,
                   .d_ff = 40, .activation = ACTIVATION_RELU, .norm_first = true, .max_len = 24,
                   .scale_attention = true, .tied_output = tied, .src_vocab = 37, .tgt_vocab = 29};
    return a;
}

static const char *saved_f16(const ModelArch *a, const char *name)
{
    Model m;
    model_init_random(&m, a, 5);
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", temp_dir(), name);
    Error err = {{0}};
    assert_int_equal(model_save_with(&m, path, hashes, DTYPE_F16, NULL, 0, NULL, 0, &err), 0);
    model_free(&m);
    return path;
}

/* The same file loaded both ways decodes to the same tokens, with logits
 * equal to summation-order rounding; the float16 one holds no float32
 * matrices. */
static void check_same_decoding(bool tied)
{
    ModelArch a = small_arch(tied);
    const char *path = saved_f16(&a, tied ? "tied16.safetensors" : "untied16.safetensors");
    Model wide, half;
    Error err = {{0}};
    assert_int_equal(model_load(&wide, path, &a, hashes, &err), 0);
    assert_int_equal(model_load_inference(&half, path, &a, hashes, &err), 0);
    assert_false(model_is_half(&wide));
    if (strcmp(gemm_f16_kernel_name(), "generic") == 0) {
        /* No float16 kernel (aarch64): the weights are widened at load. */
        assert_false(model_is_half(&half));
    } else {
        assert_true(model_is_half(&half));
        assert_null(half.params.src_embed);
        assert_null(half.params.decoder[0].ffn.linear1_weight);
        assert_non_null(half.params.decoder[0].ffn.linear1_bias);
        /* the matrices packed, the embeddings as stored, the rest float32 */
        size_t matrices = (size_t)a.encoder_layers * (4 * 32 * 32 + 2 * 40 * 32) +
                          (size_t)a.decoder_layers * (8 * 32 * 32 + 2 * 40 * 32) + (size_t)a.tgt_vocab * 32;
        assert_int_equal(half.params.half_count + half.params.count + matrices, wide.params.count);
        assert_true(half.params.panels_count >= matrices);
        assert_ptr_equal(half.params.generator_weight_f16,
                         tied ? half.params.tgt_embed_f16 : half.params.panels + half.params.panels_count -
                                                                 gemm_f16_panels_size(a.tgt_vocab, 32));
    }
    Decoder dw, dh;
    decode_init(&dw, &wide);
    decode_init(&dh, &half);
    const int srcs[][6] = {{5, 9, 3, 2}, {7, 7, 7, 11, 30, 2}, {4, 2}};
    const int lens[] = {4, 6, 2};
    for (int s = 0; s < 3; s++) {
        Translation tw, th;
        decode_greedy(&dw, srcs[s], lens[s], 12, NULL, true, &tw);
        decode_greedy(&dh, srcs[s], lens[s], 12, NULL, true, &th);
        assert_int_equal(tw.steps, th.steps);
        assert_memory_equal(tw.output_ids, th.output_ids, (size_t)tw.steps * sizeof(int));
        for (int i = 0; i < tw.steps * a.tgt_vocab; i++)
            if (fabsf(tw.logits[i] - th.logits[i]) > 1e-4f + 1e-4f * fabsf(tw.logits[i]))
                fail_msg("sentence %d logit %d: float32 %.9g, float16 kept %.9g", s, i, tw.logits[i],
                         th.logits[i]);
        translation_free(&tw);
        translation_free(&th);
    }
    decode_free(&dw);
    decode_free(&dh);
    model_free(&wide);
    model_free(&half);
}

/* Where products have no float16 kernel (the generic path: aarch64,
 * WebAssembly), an inference model is widened at load, once, rather than
 * kept float16 and widened by every product; it decodes as before. */
static void test_generic_path_widens_at_load(void **state)
{
    (void)state;
    assert_true(gemm_force_kernel("generic"));
    check_same_decoding(true);
    ModelArch a = small_arch(false);
    const char *path = saved_f16(&a, "generic16.safetensors");
    Model m;
    Error err = {{0}};
    assert_int_equal(model_load_inference(&m, path, &a, hashes, &err), 0);
    assert_false(model_is_half(&m));
    assert_non_null(m.params.src_embed);
    model_free(&m);
    gemm_force_kernel(NULL);
    if (strcmp(gemm_f16_kernel_name(), "generic") != 0) {
        assert_int_equal(model_load_inference(&m, path, &a, hashes, &err), 0);
        assert_true(model_is_half(&m));
        model_free(&m);
    }
}

static void test_kept_half_decodes_as_widened_tied(void **state)
{
    (void)state;
    check_same_decoding(true);
}

static void test_kept_half_decodes_as_widened_untied(void **state)
{
    (void)state;
    check_same_decoding(false);
}

/* A float32 file loads for inference exactly as model_load does. */
/* A mini-batch decoded together (decode_greedy_many) gives each sentence
 * the tokens it gets alone, while sentences leave the batch at different
 * steps (their limits differ, some reach </s>) and the live ones are
 * packed again: the products' rows are independent, so the logits of
 * every step are the same bits and so are the tokens.  12 sentences: a
 * whole AVX-512 tile of rows and a short one. */
static void check_batch_against_each_alone(void)
{
    ModelArch a = small_arch(true);
    const char *path = saved_f16(&a, "batch16.safetensors");
    Model half;
    Error err = {{0}};
    assert_int_equal(model_load_inference(&half, path, &a, hashes, &err), 0);
    Decoder dec;
    decode_init(&dec, &half);
    enum { N = 12 };
    int src_ids[N * 8], src_start[N + 1] = {0}, limits[N];
    Rng rng;
    rng_seed(&rng, 21);
    for (int b = 0; b < N; b++) {
        int S = 1 + b % 7;
        for (int i = 0; i < S; i++) src_ids[src_start[b] + i] = 4 + (int)(rng_uniform(&rng) * 33.0f) % 33;
        src_start[b + 1] = src_start[b] + S;
        limits[b] = 1 + (b * 5) % a.max_len;
    }
    int out[N][24], lengths[N], *outputs[N];
    for (int b = 0; b < N; b++) outputs[b] = out[b];
    decode_greedy_many(&half, src_ids, src_start, N, limits, NULL, outputs, lengths);
    int ended_apart = 0;
    for (int b = 0; b < N; b++) {
        Translation t;
        decode_greedy(&dec, src_ids + src_start[b], src_start[b + 1] - src_start[b], limits[b], NULL, false, &t);
        assert_int_equal(lengths[b], t.steps);
        assert_memory_equal(out[b], t.output_ids, (size_t)t.steps * sizeof(int));
        ended_apart += b > 0 && lengths[b] != lengths[b - 1];
        translation_free(&t);
    }
    if (ended_apart < 3) fail_msg("only %d length changes in the batch: the test proves little", ended_apart);
    decode_free(&dec);
    model_free(&half);
}

static void test_batch_whose_sentences_end_apart_equals_each_alone(void **state)
{
    (void)state;
    static const char *const kernels[] = {"avx512", "avx2"}; /* generic: widened at load */
    for (size_t k = 0; k < sizeof kernels / sizeof *kernels; k++)
        if (gemm_force_kernel(kernels[k]) && strcmp(gemm_f16_kernel_name(), kernels[k]) == 0)
            check_batch_against_each_alone();
    gemm_force_kernel(NULL);
}

/* The packed matrices are addressed by rows as the file's, so W_K and W_V
 * (rows D and 2D of in_proj_weight) must start on a panel: a d_model that
 * is not a multiple of 16 is widened at load, and decodes the same. */
static void test_d_model_off_the_panels_is_widened(void **state)
{
    (void)state;
    ModelArch a = small_arch(true);
    a.d_model = 24, a.heads = 3;
    const char *path = saved_f16(&a, "d24.safetensors");
    Model m;
    Error err = {{0}};
    assert_int_equal(model_load_inference(&m, path, &a, hashes, &err), 0);
    assert_false(model_is_half(&m));
    assert_null(m.params.panels);
    assert_non_null(m.params.decoder[0].self_attn.in_proj_weight);
    model_free(&m);
}

static void test_float32_file_stays_float32(void **state)
{
    (void)state;
    ModelArch a = small_arch(true);
    Model m, again;
    model_init_random(&m, &a, 5);
    char path[512];
    snprintf(path, sizeof path, "%s/f32.safetensors", temp_dir());
    Error err = {{0}};
    assert_int_equal(model_save(&m, path, hashes, &err), 0);
    assert_int_equal(model_load_inference(&again, path, &a, hashes, &err), 0);
    assert_false(model_is_half(&again));
    assert_memory_equal(again.params.data, m.params.data, m.params.count * sizeof(float));
    model_free(&m);
    model_free(&again);
}

/* A NaN or Inf in a float16 matrix is refused with its tensor and index,
 * as the float32 check does: in the first rows a load reads to pack, and
 * past them (row 70 of in_proj_weight's 96, read in the second go); and in
 * an embedding, which stays mapped but is checked as read. */
static void test_nan_in_half_matrix_is_refused(void **state)
{
    (void)state;
    ModelArch a = small_arch(true);
    const char *path = saved_f16(&a, "nan16.safetensors");
    static const struct {
        const char *tensor;
        size_t index;
    } cases[] = {{"transformer.decoder.layers.1.linear2.weight", 7},
                 {"transformer.encoder.layers.0.self_attn.in_proj_weight", 70 * 32 + 5},
                 {"src_embed.weight", 37 * 32 - 1}}; /* mapped, checked as read: its last value */
    size_t len;
    unsigned char *bytes = (unsigned char *)read_file(path, &len);
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        SafeFile f;
        Error err = {{0}};
        assert_int_equal(safetensors_open(path, &f, &err), 0);
        const SafeTensor *t = safetensors_find(&f, cases[c].tensor);
        assert_non_null(t);
        size_t offset = t->offset + 2 * cases[c].index;
        safetensors_close(&f);
        static const uint16_t bad[] = {0x7e00, 0xfc00}; /* NaN, -Inf */
        static const char *const what[] = {"NaN", "Inf"};
        unsigned char keep[2] = {bytes[offset], bytes[offset + 1]};
        for (int i = 0; i < 2; i++) {
            bytes[offset] = (unsigned char)(bad[i] & 0xff);
            bytes[offset + 1] = (unsigned char)(bad[i] >> 8);
            const char *broken = temp_file("broken16.safetensors", bytes, len);
            Model m;
            assert_int_not_equal(model_load_inference(&m, broken, &a, hashes, &err), 0);
            char want[160];
            snprintf(want, sizeof want, "tensor '%s' holds %s at index %zu", cases[c].tensor, what[i],
                     cases[c].index);
            expect_in(err.message, want);
            assert_int_equal(m.params.half_count, 0);
            assert_null(m.params.map);
        }
        bytes[offset] = keep[0], bytes[offset + 1] = keep[1];
    }
    free(bytes);
}

/* A load reads each matrix PACK_ROWS (64) rows at a time and packs them at
 * their place (model.c): the panels are those of the whole matrix packed
 * at once, the last panel's padding included, for 83 rows (a whole read,
 * then a panel and a short one: the tied embedding and the untied
 * generator) and 96, 44 and 32 (one read or two, each whole panels, or a
 * short last panel). */
static void test_load_packs_each_matrix_as_a_whole(void **state)
{
    (void)state;
    if (strcmp(gemm_f16_kernel_name(), "generic") == 0) return; /* widened at load: test_generic_path_widens_at_load */
    for (int tied = 0; tied < 2; tied++) {
        ModelArch a = small_arch(tied);
        a.tgt_vocab = 83;
        a.d_ff = 44;
        const char *path = saved_f16(&a, "packs16.safetensors");
        Model m;
        Error err = {{0}};
        assert_int_equal(model_load_inference(&m, path, &a, hashes, &err), 0);
        assert_true(model_is_half(&m));
        SafeFile f;
        assert_int_equal(safetensors_open(path, &f, &err), 0);
        ParamSpec *specs;
        size_t n = params_describe(&a, &m.params, &specs), checked = 0;
        for (size_t i = 0; i < n; i++) {
            if (!specs[i].packed) continue;
            int N = (int)specs[i].shape[0], K = (int)specs[i].shape[1];
            const SafeTensor *t = safetensors_find(&f, specs[i].name);
            assert_non_null(t);
            uint16_t *B = malloc((size_t)N * K * sizeof *B);
            uint16_t *want = malloc(gemm_f16_panels_size(N, K) * sizeof *want);
            assert_int_equal(safetensors_read_raw(&f, t, B, &err), 0);
            assert_true(gemm_f16_pack(want, B, N, K));
            if (memcmp(want, *specs[i].half_slot, gemm_f16_panels_size(N, K) * sizeof *want) != 0)
                fail_msg("%s (%d x %d): packed at load unlike the whole matrix", specs[i].name, N, K);
            checked += N == 83;
            free(B);
            free(want);
        }
        assert_int_equal(checked, 1); /* the tied embedding, or the generator */
        free(specs);
        safetensors_close(&f);
        model_free(&m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_products_match_the_reference),
        cmocka_unit_test(test_rows_are_independent),
        cmocka_unit_test(test_every_kernel_sums_in_the_documented_order),
        cmocka_unit_test(test_packing_keeps_every_value_and_finds_non_finite_ones),
        cmocka_unit_test(test_avx2_path_matches_the_reference),
        cmocka_unit_test(test_generic_path_matches_the_reference),
        cmocka_unit_test(test_products_give_the_same_bits_on_any_thread_count),
        cmocka_unit_test(test_widen_is_exact),
        cmocka_unit_test(test_empty_inner_dimension_gives_zeros),
        cmocka_unit_test(test_kept_half_decodes_as_widened_tied),
        cmocka_unit_test(test_generic_path_widens_at_load),
        cmocka_unit_test(test_kept_half_decodes_as_widened_untied),
        cmocka_unit_test(test_batch_whose_sentences_end_apart_equals_each_alone),
        cmocka_unit_test(test_d_model_off_the_panels_is_widened),
        cmocka_unit_test(test_float32_file_stays_float32),
        cmocka_unit_test(test_nan_in_half_matrix_is_refused),
        cmocka_unit_test(test_load_packs_each_matrix_as_a_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
