/* test_model.c — the model: its tensor list, weights files, and decoding.
 *
 * The PyTorch comparison lives in test_parity.c; these tests need no
 * Python: they check the model against itself (cached decoding against a
 * teacher-forced pass, packed batches against single sentences) and the
 * weights loader against files that lie. */
#include "testutil.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "../model/decode.h"
#include "../model/gemm_f16.h"
#include "../model/safetensors.h"
#include "../model/model.h"
#include "../tokenizer/vocab.h"

static ModelArch tiny_arch(bool pre, bool tied)
{
    ModelArch a = {.d_model = 16, .heads = 2, .encoder_layers = 2, .decoder_layers = 3,
                   .d_ff = 24, .activation = ACTIVATION_GELU, .norm_first = pre, .max_len = 24,
                   .scale_attention = true, .tied_output = tied, .src_vocab = 30, .tgt_vocab = 20};
    return a;
}

static const VocabHashes hashes = {0x1234, 0x5678};

/* ---- the parameter blocks ------------------------------------------------- */

/* big_calloc (common/util.h) holds every Params block: zeroed, 64-byte
 * aligned at least, freed by big_free with its size, whether it is under
 * a huge page (malloc'd) or not (mapped on its own). */
static void test_big_blocks_are_zeroed_and_aligned(void **state)
{
    (void)state;
    static const size_t counts[] = {1, 31000, (2u << 20) / 4 - 1, (2u << 20) / 4, (5u << 20) / 4 + 3};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        float *p = big_calloc(counts[i], sizeof(float));
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 64, 0);
        for (size_t k = 0; k < counts[i]; k++)
            if (p[k] != 0.0f) fail_msg("%zu floats: element %zu is not zero", counts[i], k);
        p[counts[i] - 1] = 1.0f; /* writable to the end */
        big_free(p, counts[i], sizeof(float));
    }
    assert_null(big_calloc(0, sizeof(float)));
    big_free(NULL, 10, sizeof(float));
}

/* ---- the tensor list ------------------------------------------------------ */

static void test_param_names_follow_pytorch(void **state)
{
    (void)state;
    ModelArch a = tiny_arch(false, false);
    Params p;
    params_alloc(&p, &a);
    ParamSpec *specs;
    size_t n = params_describe(&a, &p, &specs);
    /* 2 embeddings; per encoder layer 4 attention + 4 ffn + 4 norm; final
     * norm; per decoder layer 8 attention + 4 + 6; final norm; generator. */
    assert_int_equal(n, 2 + 2 * 12 + 2 + 3 * 18 + 2 + 2);
    assert_string_equal(specs[0].name, "src_embed.weight");
    assert_string_equal(specs[2].name, "transformer.encoder.layers.0.self_attn.in_proj_weight");
    assert_int_equal(specs[2].shape[0], 48);
    assert_int_equal(specs[2].shape[1], 16);
    assert_string_equal(specs[n - 1].name, "generator.bias");
    assert_string_equal(specs[n - 2].name, "generator.weight");
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += specs[i].numel;
    assert_int_equal(total, p.count);
    bool found_cross = false;
    for (size_t i = 0; i < n; i++)
        found_cross |= strcmp(specs[i].name, "transformer.decoder.layers.2.multihead_attn.out_proj.bias") == 0;
    assert_true(found_cross);
    free(specs);
    params_free(&p);
}

static void test_tied_output_has_no_generator_weight(void **state)
{
    (void)state;
    ModelArch a = tiny_arch(true, true);
    Params p;
    params_alloc(&p, &a);
    ParamSpec *specs;
    size_t n = params_describe(&a, &p, &specs);
    for (size_t i = 0; i < n; i++) assert_string_not_equal(specs[i].name, "generator.weight");
    assert_ptr_equal(p.generator_weight, p.tgt_embed);
    free(specs);
    params_free(&p);
}

/* ---- weights files -------------------------------------------------------- */

static const char *saved_model(const ModelArch *a, const char *name)
{
    Model m;
    model_init_random(&m, a, 3);
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", temp_dir(), name);
    Error err = {{0}};
    assert_int_equal(model_save(&m, path, hashes, &err), 0);
    model_free(&m);
    return path;
}

static void test_save_load_round_trip(void **state)
{
    (void)state;
    ModelArch a = tiny_arch(false, false);
    const char *path = saved_model(&a, "round.safetensors");
    Model m, again;
    model_init_random(&m, &a, 3);
    Error err = {{0}};
    assert_int_equal(model_load(&again, path, &a, hashes, &err), 0);
    assert_int_equal(again.params.count, m.params.count);
    assert_memory_equal(again.params.data, m.params.data, m.params.count * sizeof(float));
    model_free(&m);
    model_free(&again);
}

static void expect_load_error(const ModelArch *a, VocabHashes h, const char *path, const char *phrase)
{
    Model m;
    Error err = {{0}};
    assert_int_not_equal(model_load(&m, path, a, h, &err), 0);
    if (!strstr(err.message, phrase)) fail_msg("message '%s' lacks '%s'", err.message, phrase);
    assert_null(m.params.data);
}

/* A safetensors file whose "format" is another program's is not a model. */
static void test_other_format_is_refused(void **state)
{
    (void)state;
    ModelArch a = tiny_arch(false, false);
    const char *path = saved_model(&a, "format.safetensors");
    size_t len;
    char *bytes = read_file(path, &len);
    assert_non_null(bytes);
    const char *want = "\"" MODEL_FORMAT "\"";
    char *at = NULL;
    for (size_t i = 0; i + strlen(want) <= len && !at; i++)
        if (memcmp(bytes + i, want, strlen(want)) == 0) at = bytes + i;
    assert_non_null(at);
    at[1] = 'T'; /* "Translate-model": same length, so the header stays valid */
    const char *other = temp_file("other-format.safetensors", bytes, len);
    free(bytes);
    expect_load_error(&a, hashes, other, "not a translate model");
}

/* Training starts from torch.nn.Transformer's initialisation: every weight
 * matrix Xavier-uniform, inside ±sqrt(6/(fan_in+fan_out)) and reaching
 * close to both ends. */
static void test_training_init_is_xavier_uniform(void **state)
{
    (void)state;
    ModelArch a = tiny_arch(false, false);
    Model m;
    model_init_training(&m, &a, 7, QUERY_INIT_XAVIER);
    ParamSpec *specs;
    size_t n = params_describe(&a, &m.params, &specs);
    int matrices = 0;
    for (size_t i = 0; i < n; i++) {
        if (specs[i].kind != PARAM_MATRIX) continue;
        matrices++;
        float bound = sqrtf(6.0f / (float)(specs[i].shape[0] + specs[i].shape[1]));
        float lo = 0.0f, hi = 0.0f;
        for (size_t j = 0; j < specs[i].numel; j++) {
            if (specs[i].data[j] < lo) lo = specs[i].data[j];
            if (specs[i].data[j] > hi) hi = specs[i].data[j];
        }
        if (lo < -bound || hi > bound || lo > -0.8f * bound || hi < 0.8f * bound)
            fail_msg("%s: values in [%g, %g], want within and near ±%g", specs[i].name, (double)lo,
                     (double)hi, (double)bound);
    }
    assert_true(matrices > 10);
    free(specs);
    model_free(&m);
}

static void test_config_disagreeing_with_weights(void **state)
{
    (void)state;
    ModelArch a = tiny_arch(false, false);
    const char *path = saved_model(&a, "disagree.safetensors");
    ModelArch wrong = a;
    wrong.d_model = 32;
    expect_load_error(&wrong, hashes, path, "d_model is 32 there but 16 in the file");
    wrong = a;
    wrong.norm_first = true;
    expect_load_error(&wrong, hashes, path, "norm is pre there but post in the file");
    wrong = a;
    wrong.tgt_vocab = 21;
    /* the vocabulary's size and hash are the vocabulary file's, not a
     * config key's: said so */
    expect_load_error(&wrong, hashes, path,
                      "the target vocabulary (model.target_vocab) disagrees with the weights: it has 21 tokens");
    VocabHashes other = {hashes.source, 99};
    expect_load_error(&a, other, path,
                      "the target vocabulary (model.target_vocab) disagrees with the weights: as many tokens, but "
                      "not the ones");
}

/* Copy a weights file, leaving out tensor `skip` and/or adding a tensor
 * named `extra`, and with metadata `key` set to `value` when key is given. */
static const char *edited_copy_meta(const char *from, const char *name, const char *skip, const char *extra,
                                    const char *key, const char *value)
{
    SafeFile f;
    Error err = {{0}};
    assert_int_equal(safetensors_open(from, &f, &err), 0);
    SafeWriteTensor *t = calloc(f.count + 1, sizeof *t);
    float **data = calloc(f.count + 1, sizeof *data);
    size_t n = 0;
    for (size_t i = 0; i < f.count; i++) {
        if (skip && strcmp(f.tensors[i].name, skip) == 0) continue;
        data[n] = malloc(f.tensors[i].numel * sizeof(float) + 1);
        assert_int_equal(safetensors_to_f32(&f, &f.tensors[i], data[n], &err), 0);
        t[n] = (SafeWriteTensor){f.tensors[i].name, f.tensors[i].ndim, {0}, data[n], DTYPE_F32};
        memcpy(t[n].shape, f.tensors[i].shape, sizeof t[n].shape);
        n++;
    }
    static float one = 1.0f;
    if (extra) t[n++] = (SafeWriteTensor){extra, 1, {1}, &one, DTYPE_F32};
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", temp_dir(), name);
    SafeMeta *meta = calloc(f.meta_count + 1, sizeof *meta);
    for (size_t i = 0; i < f.meta_count; i++) {
        meta[i] = f.meta[i];
        if (key && strcmp(meta[i].key, key) == 0) meta[i].value = (char *)value;
    }
    assert_int_equal(safetensors_write(path, t, n, meta, f.meta_count, &err), 0);
    free(meta);
    for (size_t i = 0; i < f.count + 1; i++) free(data[i]);
    free(data);
    free(t);
    safetensors_close(&f);
    return path;
}

static const char *edited_copy(const char *from, const char *name, const char *skip, const char *extra)
{
    return edited_copy_meta(from, name, skip, extra, NULL, NULL);
}

/* Weights of another format version are this program's limit, not the
 * config's (the message said "config disagrees ... format_version", a key
 * no config has). */
static void test_another_format_version_is_refused(void **state)
{
    (void)state;
    ModelArch a = tiny_arch(false, true);
    char good[512];
    snprintf(good, sizeof good, "%s", saved_model(&a, "version.safetensors"));
    expect_load_error(&a, hashes, edited_copy_meta(good, "version2.safetensors", NULL, NULL, "format_version", "2"),
                      "weights format version 2; this translate reads version 1");
}

static void test_missing_and_unexpected_tensors(void **state)
{
    (void)state;
    ModelArch a = tiny_arch(false, true);
    char good[512];
    snprintf(good, sizeof good, "%s", saved_model(&a, "complete.safetensors"));
    expect_load_error(&a, hashes, edited_copy(good, "missing.safetensors", "transformer.decoder.norm.bias", NULL),
                      "missing tensor 'transformer.decoder.norm.bias'");
    expect_load_error(&a, hashes, edited_copy(good, "extra.safetensors", NULL, "generator.weight"),
                      "unexpected tensor 'generator.weight'");
}

static void test_nan_in_weights_is_rejected(void **state)
{
    (void)state;
    ModelArch a = tiny_arch(true, true);
    Model m;
    model_init_random(&m, &a, 5);
    m.params.decoder[1].ffn.linear1_bias[3] = NAN;
    char path[512];
    snprintf(path, sizeof path, "%s/nan.safetensors", temp_dir());
    Error err = {{0}};
    assert_int_equal(model_save(&m, path, hashes, &err), 0);
    model_free(&m);
    expect_load_error(&a, hashes, path, "transformer.decoder.layers.1.linear1.bias' holds NaN at index 3");
}

/* A float16 model for inference keeps its matrices float16 (model.h),
 * checked as they are packed (gemm_f16_pack; the embeddings by a
 * vectorised scan): one Inf or NaN anywhere in a matrix — first value,
 * inside or at the edge of a 16-, 32- or 64-byte block, last value — is
 * refused with its index, and the largest finite half (0x7bff) is not.
 * d_model a multiple of 16, or the file is widened at load and only the
 * float32 check runs (model.c, load_path); d_ff = 44 gives linear2 rows
 * of 44 values (a tail past the 8-at-a-time packing) and linear1 a short
 * last panel. */
static void test_inf_or_nan_in_a_float16_matrix_is_rejected(void **state)
{
    (void)state;
    ModelArch a = tiny_arch(true, true);
    a.d_model = 32, a.heads = 2, a.d_ff = 44; /* in_proj_weight: 96 x 32 = 3,072 halves */
    Model m;
    model_init_random(&m, &a, 7);
    char path[512];
    snprintf(path, sizeof path, "%s/half.safetensors", temp_dir());
    Error err = {{0}};
    assert_int_equal(model_save_with(&m, path, hashes, DTYPE_F16, NULL, 0, NULL, 0, &err), 0);
    model_free(&m);
    size_t len;
    unsigned char *good = (unsigned char *)read_file(path, &len);
    Model kept;
    assert_int_equal(model_load_inference(&kept, path, &a, hashes, &err), 0);
    if (strcmp(gemm_f16_kernel_name(), "generic") != 0) assert_true(model_is_half(&kept));
    model_free(&kept);
    SafeFile f;
    assert_int_equal(safetensors_open(path, &f, &err), 0);
    static const char *const names[] = {"transformer.decoder.layers.2.multihead_attn.in_proj_weight",
                                        "tgt_embed.weight", "transformer.encoder.layers.0.linear2.weight"};
    static const uint16_t values[] = {0x7c00, 0xfc00, 0x7e00, 0xfc01, 0x7bff};
    char bad_path[600];
    snprintf(bad_path, sizeof bad_path, "%s/half-bad.safetensors", temp_dir());
    int checked = 0;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const SafeTensor *t = safetensors_find(&f, names[k]);
        assert_non_null(t);
        assert_int_equal(t->dtype, DTYPE_F16);
        size_t at[] = {0, 7, 8, 15, 16, 31, 32, 63, 64, t->numel / 2 + 1, t->numel - 33, t->numel - 1};
        for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
            for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
                unsigned char *bytes = malloc(len);
                memcpy(bytes, good, len);
                bytes[t->offset + 2 * at[i]] = (unsigned char)(values[v] & 0xff);
                bytes[t->offset + 2 * at[i] + 1] = (unsigned char)(values[v] >> 8);
                FILE *out = fopen(bad_path, "wb");
                assert_int_equal(fwrite(bytes, 1, len, out), len);
                fclose(out);
                free(bytes);
                Model loaded;
                Error e = {{0}};
                int status = model_load_inference(&loaded, bad_path, &a, hashes, &e);
                checked++;
                if (values[v] == 0x7bff) {
                    if (status != 0) fail_msg("%s[%zu] = 0x7bff refused: %s", names[k], at[i], e.message);
                    model_free(&loaded);
                    continue;
                }
                char want[200];
                snprintf(want, sizeof want, "tensor '%s' holds %s at index %zu", names[k],
                         values[v] & 0x3ff ? "NaN" : "Inf", at[i]);
                if (status == 0 || !strstr(e.message, want))
                    fail_msg("%s[%zu] = 0x%04x: got '%s', want '%s'", names[k], at[i], values[v],
                             status ? e.message : "(loaded)", want);
            }
    }
    safetensors_close(&f);
    free(good);
    print_message("%d files checked\n", checked);
}

/* ---- decoding -------------------------------------------------------------- */

static void assert_close_floats(const float *a, const float *b, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (!(fabsf(a[i] - b[i]) <= 1e-5f * (1.0f + fabsf(b[i]))))
            fail_msg("%s differs at %zu: %.9g vs %.9g", what, i, a[i], b[i]);
}

/* The maps and logits of cached step-by-step decoding must be those of one
 * teacher-forced pass over the same output: the same up to float rounding,
 * since a decoding step's one-row products sum in another order than the
 * teacher-forced pass's tall ones (model/gemm.c). */
static void check_cached_equals_teacher_forced(bool pre)
{
    ModelArch a = tiny_arch(pre, !pre);
    Model m;
    model_init_random(&m, &a, pre ? 21 : 22);
    Decoder dec;
    decode_init(&dec, &m);
    const int src[] = {5, 9, 4, 17, 6, 8, 29};
    Translation greedy, forced;
    decode_greedy(&dec, src, 7, 12, NULL, true, &greedy);
    int T = greedy.steps, H = a.heads, S = 7;
    decode_teacher_forced(&m, src, 7, greedy.input_ids, greedy.output_ids, T, &forced);
    assert_close_floats(greedy.logits, forced.logits, (size_t)T * a.tgt_vocab, "logits");
    assert_close_floats(greedy.encoder_attn, forced.encoder_attn, (size_t)a.encoder_layers * H * S * S, "encoder maps");
    assert_close_floats(greedy.decoder_attn, forced.decoder_attn, (size_t)a.decoder_layers * H * T * T, "decoder maps");
    assert_close_floats(greedy.cross_attn, forced.cross_attn, (size_t)a.decoder_layers * H * T * S, "cross maps");
    assert_close_floats(greedy.logprobs, forced.logprobs, (size_t)T, "logprobs");
    translation_free(&greedy);
    translation_free(&forced);
    decode_free(&dec);
    model_free(&m);
}

static void test_cached_decoding_equals_teacher_forcing_post(void **state)
{
    (void)state;
    check_cached_equals_teacher_forced(false);
}

static void test_cached_decoding_equals_teacher_forcing_pre(void **state)
{
    (void)state;
    check_cached_equals_teacher_forced(true);
}

/* Equal logits: greedy decoding takes the lowest id, as torch.argmax does
 * (a zero generator makes every logit 0, so each step picks id 0). */
static void test_greedy_ties_go_to_the_lowest_id(void **state)
{
    (void)state;
    ModelArch a = tiny_arch(false, false);
    Model m;
    model_init_random(&m, &a, 8);
    memset(m.params.generator_weight, 0, (size_t)a.tgt_vocab * a.d_model * sizeof(float));
    memset(m.params.generator_bias, 0, (size_t)a.tgt_vocab * sizeof(float));
    Decoder dec;
    decode_init(&dec, &m);
    const int src[] = {7, 8, 9, 10};
    Translation t;
    decode_greedy(&dec, src, 4, 3, NULL, false, &t);
    assert_int_equal(t.steps, 3);
    for (int i = 0; i < t.steps; i++) assert_int_equal(t.output_ids[i], 0);
    translation_free(&t);
    decode_free(&dec);
    model_free(&m);
}

/* decode_top_k against its definition: ids sorted by logit, best first,
 * ties to the lower id, -1 past V.  Rows with many ties (logits from a
 * few values) and -inf (banned tokens), K from 1 to past V: a beam as
 * wide as the vocabulary asks for every id. */
static const float *top_k_row;
static int by_logit_then_id(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    if (top_k_row[a] != top_k_row[b]) return top_k_row[a] > top_k_row[b] ? -1 : 1;
    return a - b;
}

static void test_top_k_is_the_best_first_and_ties_to_the_lower_id(void **state)
{
    (void)state;
    enum { MAX_V = 100 };
    float row[MAX_V];
    int want[MAX_V], got[MAX_V + 3];
    Rng rng;
    rng_seed(&rng, 11);
    for (int trial = 0; trial < 400; trial++) {
        int V = 1 + (int)(rng_next(&rng) % MAX_V), values = 1 + trial % 7;
        for (int i = 0; i < V; i++) {
            row[i] = (float)(rng_next(&rng) % (uint64_t)values) - 3.0f;
            if (trial % 5 == 0) row[i] = rng_normal(&rng);
            if (rng_next(&rng) % 9 == 0) row[i] = -INFINITY;
        }
        for (int i = 0; i < V; i++) want[i] = i;
        top_k_row = row;
        qsort(want, (size_t)V, sizeof *want, by_logit_then_id);
        int K = 1 + (int)(rng_next(&rng) % (uint64_t)(V + 3));
        decode_top_k(row, V, K, got);
        for (int k = 0; k < K; k++) assert_int_equal(got[k], k < V ? want[k] : -1);
    }
}

static void test_maps_are_distributions_and_causal(void **state)
{
    (void)state;
    ModelArch a = tiny_arch(false, true);
    Model m;
    model_init_random(&m, &a, 8);
    Decoder dec;
    decode_init(&dec, &m);
    const int src[] = {7, 8, 9, 10};
    Translation t;
    decode_greedy(&dec, src, 4, 9, NULL, false, &t);
    int T = t.steps, S = 4, H = a.heads;
    for (int l = 0; l < a.decoder_layers; l++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < T; i++) {
                const float *dr = t.decoder_attn + (((size_t)l * H + h) * T + i) * T;
                const float *cr = t.cross_attn + (((size_t)l * H + h) * T + i) * S;
                double ds = 0, cs = 0;
                for (int j = 0; j < T; j++) {
                    ds += dr[j];
                    if (j > i) assert_true(dr[j] == 0.0f); /* the future, masked */
                }
                for (int j = 0; j < S; j++) cs += cr[j];
                assert_true(fabs(ds - 1) < 1e-5 && fabs(cs - 1) < 1e-5);
            }
    assert_null(t.logits);
    translation_free(&t);
    decode_free(&dec);
    model_free(&m);
}

/* Two sentences packed into one batch give the same results as each
 * sentence alone: attention never crosses a sequence boundary. */
static void test_packed_batch_equals_single_sentences(void **state)
{
    (void)state;
    ModelArch a = tiny_arch(true, false);
    Model m;
    model_init_random(&m, &a, 9);
    const int src[] = {4, 5, 6, 7, 8, 9, 10, 11}; /* 3 + 5 tokens */
    const int tgt[] = {2, 6, 7, 8, 2, 9, 10};      /* 4 + 3 tokens */
    int src_start[] = {0, 3, 8}, tgt_start[] = {0, 4, 7};
    Batch both = {.count = 2, .src_ids = src, .src_start = src_start, .tgt_ids = tgt, .tgt_start = tgt_start};
    Activations acts;
    acts_alloc(&acts, &a, acts_size_full(&a, 8, 7, 5));
    transformer_encode(&acts, &m, &both);
    transformer_decode(&acts, &m, &both);
    Translation first, second;
    const int out1[] = {6, 7, 8, 3}, out2[] = {9, 10, 3};
    decode_teacher_forced(&m, src, 3, tgt, out1, 4, &first);
    decode_teacher_forced(&m, src + 3, 5, tgt + 4, out2, 3, &second);
    size_t V = (size_t)a.tgt_vocab;
    for (size_t i = 0; i < 4 * V; i++) assert_float_equal(acts.logits[i], first.logits[i], 1e-6);
    for (size_t i = 0; i < 3 * V; i++) assert_float_equal(acts.logits[4 * V + i], second.logits[i], 1e-6);
    const float *cross = transformer_cross_map(&acts, &both, 1, 1); /* [H, 3, 5] of sentence 2 */
    for (size_t i = 0; i < (size_t)a.heads * 3 * 5; i++)
        assert_float_equal(cross[i], second.cross_attn[(size_t)a.heads * 3 * 5 + i], 1e-6);
    translation_free(&first);
    translation_free(&second);
    acts_free(&acts);
    model_free(&m);
}

/* Mini-batched decoding's activations (acts_size_batched) give every
 * encoder layer the same buffers, each writing over the one before: the
 * memory and the cross-attention keys and values it leaves are those of
 * separate buffers, bit for bit, with the norm after each block and
 * before it. */
/* Every activation buffer starts on a 64-byte line, after buffers of one
 * float per row (a layer norm's mean and rstd) too: the kernels' 16-float
 * loads along a row would otherwise each straddle two lines. */
static void test_activation_buffers_start_on_cache_lines(void **state)
{
    (void)state;
    ModelArch a = tiny_arch(false, false);
    Activations acts;
    acts_alloc(&acts, &a, acts_size_full(&a, 7, 5, 7)); /* 7 and 5 rows: the means shift what follows */
    const float *buffers[] = {acts.block, acts.src_x, acts.encoder[0].norm1.mean, acts.encoder[0].norm1.rstd,
                              acts.encoder[0].norm2.out, acts.encoder[1].self_attn.q, acts.encoder_norm.out,
                              acts.tgt_x, acts.decoder[0].norm3.rstd, acts.decoder[2].res3, acts.logits};
    for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; i++)
        if ((uintptr_t)buffers[i] % 64) fail_msg("buffer %zu starts %zu bytes into a line", i, (size_t)((uintptr_t)buffers[i] % 64));
    acts_free(&acts);
}

static void test_batched_encoder_layers_share_buffers(void **state)
{
    (void)state;
    for (int pre = 0; pre < 2; pre++) {
        ModelArch a = tiny_arch(pre, false);
        a.encoder_layers = 3;
        Model m;
        model_init_random(&m, &a, 11);
        const int src[] = {4, 5, 6, 7, 8, 9, 10, 11}; /* 3 + 5 tokens */
        int src_start[] = {0, 3, 8};
        Batch b = {.count = 2, .src_ids = src, .src_start = src_start};
        ActsSize size = acts_size_steps(&a, 2, a.max_len, 8, 5);
        Activations apart, shared;
        acts_alloc(&apart, &a, size);
        acts_alloc(&shared, &a, acts_size_batched(size));
        assert_true(acts_bytes(&a, acts_size_batched(size)) < acts_bytes(&a, size));
        for (int l = 1; l < a.encoder_layers; l++) {
            assert_ptr_equal(shared.encoder[l].res2, shared.encoder[0].res2);
            assert_ptr_not_equal(apart.encoder[l].res2, apart.encoder[0].res2);
        }
        transformer_encode(&apart, &m, &b);
        transformer_encode(&shared, &m, &b);
        size_t n = 8 * (size_t)a.d_model;
        assert_memory_equal(shared.encoder_norm.out, apart.encoder_norm.out, n * sizeof(float));
        for (int l = 0; l < a.decoder_layers; l++) {
            assert_memory_equal(shared.decoder[l].cross_attn.k, apart.decoder[l].cross_attn.k, n * sizeof(float));
            assert_memory_equal(shared.decoder[l].cross_attn.v, apart.decoder[l].cross_attn.v, n * sizeof(float));
        }
        /* a shared set grown to the same sizes without the sharing is
         * carved anew, each layer apart; the other way it is kept */
        acts_fit(&shared, &a, size);
        assert_ptr_not_equal(shared.encoder[1].res2, shared.encoder[0].res2);
        float *kept = apart.block;
        acts_fit(&apart, &a, acts_size_batched(size));
        assert_ptr_equal(apart.block, kept);
        acts_free(&apart);
        acts_free(&shared);
        model_free(&m);
    }
}

static void test_decode_limit(void **state)
{
    (void)state;
    ModelArch a = tiny_arch(false, false);
    assert_int_equal(decode_limit(&a, 3, 2.0f, 10), 16);
    assert_int_equal(decode_limit(&a, 20, 2.0f, 10), 24); /* capped at max_len */
    assert_int_equal(decode_limit(&a, 1, 0.1f, 0), 1);
    /* a fraction rounds up: 0.5 x 7 tokens allow 4, 1.5 x 3 allow 5 */
    assert_int_equal(decode_limit(&a, 7, 0.5f, 0), 4);
    assert_int_equal(decode_limit(&a, 3, 1.5f, 0), 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_big_blocks_are_zeroed_and_aligned),
        cmocka_unit_test(test_param_names_follow_pytorch),
        cmocka_unit_test(test_tied_output_has_no_generator_weight),
        cmocka_unit_test(test_save_load_round_trip),
        cmocka_unit_test(test_config_disagreeing_with_weights),
        cmocka_unit_test(test_other_format_is_refused),
        cmocka_unit_test(test_greedy_ties_go_to_the_lowest_id),
        cmocka_unit_test(test_top_k_is_the_best_first_and_ties_to_the_lower_id),
        cmocka_unit_test(test_training_init_is_xavier_uniform),
        cmocka_unit_test(test_missing_and_unexpected_tensors),
        cmocka_unit_test(test_another_format_version_is_refused),
        cmocka_unit_test(test_nan_in_weights_is_rejected),
        cmocka_unit_test(test_inf_or_nan_in_a_float16_matrix_is_rejected),
        cmocka_unit_test(test_cached_decoding_equals_teacher_forcing_post),
        cmocka_unit_test(test_cached_decoding_equals_teacher_forcing_pre),
        cmocka_unit_test(test_maps_are_distributions_and_causal),
        cmocka_unit_test(test_packed_batch_equals_single_sentences),
        cmocka_unit_test(test_activation_buffers_start_on_cache_lines),
        cmocka_unit_test(test_batched_encoder_layers_share_buffers),
        cmocka_unit_test(test_decode_limit),
    };
    return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}
