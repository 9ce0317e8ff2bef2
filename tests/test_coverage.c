/* test_coverage.c — what `make coverage` found no other test reaching
 * (docs/coverage.md lists what is still unreached, and why): float16
 * writing with its rounding edges, the thread-count getter, beam search
 * over a data set, weights whose tensor has the wrong shape, metadata
 * written twice, "-" as an output, a block device as an input, and
 * `train --help`.  Each checks a result, not only that the line ran. */
#define _GNU_SOURCE /* sched_setaffinity, CPU_COUNT */
#include "testutil.h"

#include <sched.h>

#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/input_file.h"
#include "../common/output_file.h"
#include "../model/beam.h"
#include "../model/gemm.h"
#include "../app/cli.h"
#include "../model/parallel.h"
#include "../model/safetensors.h"
#include "../model/search.h"
#include "../training/checkpoint.h" /* model_init_training, model_save, model_load */

/* float32 values and the float16 bits they must be written as (round to
 * nearest, ties to even; IEEE 754-2008 binary16). */
static void test_float16_writing_rounds_to_nearest_even(void **state)
{
    (void)state;
    const struct { float in; uint16_t bits; } cases[] = {
        {1.0f, 0x3c00},
        {-2.0f, 0xc000},
        {0.0f, 0x0000},
        {-0.0f, 0x8000},
        {65504.0f, 0x7bff},              /* the largest half */
        {65519.0f, 0x7bff},              /* below the midpoint to 65536: stays */
        {65520.0f, 0x7c00},              /* the midpoint, ties to even: +inf */
        {1e6f, 0x7c00},                  /* overflow */
        {-1e6f, 0xfc00},
        {INFINITY, 0x7c00},
        {-INFINITY, 0xfc00},
        {1.0f + 0x1p-11f, 0x3c00},       /* a tie: to the even 1.0 */
        {1.0f + 3 * 0x1p-11f, 0x3c02},   /* a tie: to the even 1 + 2^-9 */
        {1.0f + 0x1p-11f + 0x1p-20f, 0x3c01}, /* just above the tie: up */
        {0x1p-14f, 0x0400},              /* the smallest normal */
        {0x1p-24f, 0x0001},              /* the smallest subnormal */
        {0x1p-25f, 0x0000},              /* half of it, a tie: to the even 0 */
        {3 * 0x1p-25f, 0x0002},          /* 1.5 of it, a tie: to the even 2 */
        {0x1p-25f + 0x1p-35f, 0x0001},   /* just above the tie: up */
        {0x1p-26f, 0x0000},
        {-1e-10f, 0x8000},               /* far below: a signed zero */
        {0x1.ffcp-15f, 0x0400},          /* rounds up out of the subnormals */
    };
    size_t n = sizeof cases / sizeof *cases;
    float in[32], back[32];
    for (size_t i = 0; i < n; i++) in[i] = cases[i].in;
    in[n] = NAN;
    SafeWriteTensor t = {.name = "x", .ndim = 1, .shape = {n + 1}, .data = in, .dtype = DTYPE_F16};
    char path[400];
    snprintf(path, sizeof path, "%s/f16.safetensors", temp_dir());
    Error err = {{0}};
    if (safetensors_write(path, &t, 1, NULL, 0, &err)) fail_msg("%s", err.message);
    SafeFile f;
    if (safetensors_open(path, &f, &err)) fail_msg("%s", err.message);
    const SafeTensor *st = safetensors_find(&f, "x");
    assert_non_null(st);
    assert_int_equal(st->dtype, DTYPE_F16);
    uint16_t bits[32];
    if (safetensors_read_raw(&f, st, bits, &err)) fail_msg("%s", err.message);
    for (size_t i = 0; i < n; i++)
        if (bits[i] != cases[i].bits)
            fail_msg("%a: written as 0x%04x, expected 0x%04x", (double)cases[i].in, bits[i], cases[i].bits);
    assert_true((bits[n] & 0x7c00) == 0x7c00 && (bits[n] & 0x3ff) != 0); /* NaN stays NaN */
    if (safetensors_to_f32(&f, st, back, &err)) fail_msg("%s", err.message);
    assert_true(back[0] == 1.0f && isnan(back[n]));
    safetensors_close(&f);
}

static void test_parallel_threads_reads_back_what_was_set(void **state)
{
    (void)state;
    int before = parallel_threads();
    parallel_set_threads(3);
    assert_int_equal(parallel_threads(), 3);
    parallel_set_threads(0); /* at least one */
    assert_int_equal(parallel_threads(), 1);
    parallel_set_threads(before);
}

/* Without -t, as many threads as cores the process may use: pinned to
 * one (taskset -c 0, a container's CPU set), one thread, not the
 * machine's count (a second thread on one core made training a third
 * slower). */
static void test_default_threads_are_the_usable_cores(void **state)
{
    (void)state;
    int before = parallel_threads();
    cpu_set_t all, one;
    assert_int_equal(sched_getaffinity(0, sizeof all, &all), 0);
    int first = 0;
    while (!CPU_ISSET(first, &all)) first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
    cli_set_threads(0);
    int pinned = parallel_threads();
    assert_int_equal(sched_setaffinity(0, sizeof all, &all), 0);
    cli_set_threads(0);
    int free_to_move = parallel_threads();
    parallel_set_threads(before);
    assert_int_equal(pinned, 1);
    assert_int_equal(free_to_move, CPU_COUNT(&all) < 64 ? CPU_COUNT(&all) : 64);
}

static const ModelArch arch = {
    .d_model = 8, .heads = 2, .encoder_layers = 1, .decoder_layers = 1, .d_ff = 16,
    .activation = ACTIVATION_RELU, .norm_first = true, .max_len = 16, .scale_attention = true,
    .tied_output = true, .src_vocab = 12, .tgt_vocab = 10,
};

/* search_translate_many with a beam: each sentence as beam_decode gives it alone. */
static void test_beam_search_over_a_data_set(void **state)
{
    (void)state;
    Model m;
    model_init_random(&m, &arch, 5);
    const int src[] = {4, 5, 6, 2, 7, 8, 2, 9, 4, 5, 10, 11, 2};
    const int start[] = {0, 4, 7, 13};
    SearchSettings set = {.beam = 3, .length_penalty = 0.6f, .max_output_ratio = 1.5f,
                          .max_output_extra = 3};
    int out_buf[3][16], *outputs[3] = {out_buf[0], out_buf[1], out_buf[2]}, lengths[3];
    search_translate_many(&m, src, NULL, start, 3, &set, outputs, lengths);
    search_translate_many(&m, src, NULL, start, 0, &set, outputs, lengths); /* none: nothing happens */
    BeamSettings beam = {3, 0.6f, 1, NULL, NULL, NULL};
    for (int b = 0; b < 3; b++) {
        int S = start[b + 1] - start[b];
        Translation t;
        beam_decode(&m, src + start[b], S, search_limit(&arch, &set, S), &beam, &t, NULL);
        assert_int_equal(lengths[b], t.steps);
        assert_memory_equal(outputs[b], t.output_ids, (size_t)t.steps * sizeof(int));
        translation_free(&t);
    }
    model_free(&m);
}

/* Rewrite path with tensor `name` given another shape of as many elements
 * (ndim 0: left out). */
static void reshape_tensor(const char *path, const char *name, int ndim, const size_t *shape)
{
    SafeFile f;
    Error err = {{0}};
    if (safetensors_open(path, &f, &err)) fail_msg("%s", err.message);
    SafeWriteTensor *t = calloc(f.count, sizeof *t);
    float **data = calloc(f.count, sizeof *data);
    size_t kept = 0;
    for (size_t i = 0; i < f.count; i++) {
        const SafeTensor *st = &f.tensors[i];
        data[i] = malloc((st->numel ? st->numel : 1) * sizeof(float));
        if (safetensors_to_f32(&f, st, data[i], &err)) fail_msg("%s", err.message);
        bool named = strcmp(st->name, name) == 0;
        if (named && ndim == 0) continue;
        SafeWriteTensor *w = &t[kept++];
        *w = (SafeWriteTensor){.name = st->name, .ndim = st->ndim, .data = data[i]};
        memcpy(w->shape, st->shape, sizeof st->shape);
        if (named) {
            w->ndim = ndim;
            memcpy(w->shape, shape, (size_t)ndim * sizeof *shape);
        }
    }
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.new", path);
    if (safetensors_write(tmp, t, kept, f.meta, f.meta_count, &err)) fail_msg("%s", err.message);
    for (size_t i = 0; i < f.count; i++) free(data[i]);
    free(data);
    free(t);
    safetensors_close(&f);
    assert_int_equal(rename(tmp, path), 0);
}

static void test_a_tensor_of_the_wrong_shape_is_named(void **state)
{
    (void)state;
    const struct { const char *tensor; int ndim; size_t shape[2]; const char *message; } cases[] = {
        {"transformer.encoder.layers.0.linear1.weight", 2, {8, 16},
         "tensor 'transformer.encoder.layers.0.linear1.weight' should have shape [16, 8]"},
        {"transformer.encoder.layers.0.linear1.bias", 2, {4, 4},
         "tensor 'transformer.encoder.layers.0.linear1.bias' should have shape [16]"},
    };
    VocabHashes hashes = {1, 2};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[400];
        snprintf(path, sizeof path, "%s/shape%zu.safetensors", temp_dir(), i);
        Model m;
        model_init_random(&m, &arch, 7);
        Error err = {{0}};
        if (model_save(&m, path, hashes, &err)) fail_msg("%s", err.message);
        model_free(&m);
        reshape_tensor(path, cases[i].tensor, cases[i].ndim, cases[i].shape);
        assert_int_equal(model_load(&m, path, &arch, hashes, &err), -1);
        if (!strstr(err.message, cases[i].message)) fail_msg("got: %s", err.message);
        model_free(&m);
    }
}

/* A checkpoint without its optimizer moments, or with moments of another
 * size, is refused by name. */
static void test_a_checkpoint_without_its_optimizer_state(void **state)
{
    (void)state;
    const char *names[] = {"optimizer.m", "optimizer.v"};
    for (int i = 0; i < 2; i++) {
        char path[400];
        snprintf(path, sizeof path, "%s/no-moments.ckpt", temp_dir());
        Model m;
        model_init_training(&m, &arch, 3, QUERY_INIT_XAVIER);
        Trainer tr;
        trainer_init(&tr, &m, 16, 16, 0.1f, 0.1f, 3);
        TrainProgress p;
        memset(&p, 0, sizeof p);
        snapshots_init(&p.snapshots, 0, tr.model.params.count);
        memcpy(p.run_id, "0123456789abcdef", CHECKPOINT_RUN_ID_LENGTH + 1);
        VocabHashes hashes = {1, 2};
        Error err = {{0}};
        if (checkpoint_save(path, &tr, hashes, &p, &err)) fail_msg("%s", err.message);
        reshape_tensor(path, names[i], 0, NULL);
        assert_int_equal(checkpoint_load(path, &tr, hashes, &p, &err), -1);
        char expected[100];
        snprintf(expected, sizeof expected, "tensor '%s' missing or not of %zu elements", names[i],
                 tr.opt.count);
        if (!strstr(err.message, expected)) fail_msg("got: %s", err.message);
        snapshots_free(&p.snapshots);
        trainer_free(&tr);
    }
}

static void test_metadata_written_twice_is_refused(void **state)
{
    (void)state;
    float x = 1;
    SafeWriteTensor t = {.name = "x", .ndim = 1, .shape = {1}, .data = &x};
    SafeMeta meta[] = {{"a", "1"}, {"b", "2"}, {"a", "3"}};
    char path[400];
    snprintf(path, sizeof path, "%s/twice.safetensors", temp_dir());
    Error err = {{0}};
    assert_int_equal(safetensors_write(path, &t, 1, meta, 3, &err), -1);
    assert_non_null(strstr(err.message, "metadata key 'a' appears twice"));
    assert_int_equal(access(path, F_OK), -1); /* nothing written */
}

static void put_hello(FILE *f, const void *context)
{
    fputs(context, f);
}

/* "-" with OUTPUT_FILE_DASH is standard output, flushed and left open. */
static void test_dash_is_standard_output(void **state)
{
    (void)state;
    char path[400];
    snprintf(path, sizeof path, "%s/stdout.txt", temp_dir());
    fflush(stdout);
    int saved = dup(1), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 1);
    close(fd);
    Error err = {{0}};
    int rc = output_file_write("-", OUTPUT_FILE_DASH, put_hello, "to stdout\n", &err);
    int still_open = fcntl(1, F_GETFD) >= 0;
    dup2(saved, 1);
    close(saved);
    assert_int_equal(rc, 0);
    assert_true(still_open);
    size_t len;
    char *text = read_file(path, &len);
    assert_string_equal(text, "to stdout\n");
    free(text);
    /* without the flag, "-" is a file of that name */
    char dash[400];
    snprintf(dash, sizeof dash, "%s/-", temp_dir());
    assert_int_equal(output_file_write(dash, 0, put_hello, "a file\n", &err), 0);
    text = read_file(dash, &len);
    assert_string_equal(text, "a file\n");
    free(text);
}

/* A folder where no file can be made: the error names the path. */
static void test_an_uncreatable_output_is_an_error(void **state)
{
    (void)state;
    Error err = {{0}};
    assert_null(output_file_open("/proc/self/no-such-file", 0, &err));
    assert_non_null(strstr(err.message, "/proc/self/no-such-file: cannot write: "));
}

static void test_a_block_device_is_not_an_input(void **state)
{
    (void)state;
    const char *dev = "/dev/loop0";
    struct stat st;
    if (stat(dev, &st) != 0 || !S_ISBLK(st.st_mode)) SKIP_TEST("root", "no block device /dev/loop0");
    Error err = {{0}};
    int fd = input_file_open(dev, 0, &st, &err);
    if (fd >= 0) close(fd);
    if (fd < 0 && strstr(err.message, "cannot open")) SKIP_TEST("root", "cannot open /dev/loop0: %s", err.message);
    assert_int_equal(fd, -1);
    assert_non_null(strstr(err.message, "/dev/loop0: is not a regular file (a block device)"));
}

static void test_train_help(void **state)
{
    (void)state;
    const char *argv[] = {"./train", "--help", NULL};
    RunResult r = run_program(argv, NULL, 0);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "Usage: train"));
    assert_string_equal(r.err, "");
    run_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float16_writing_rounds_to_nearest_even),
        cmocka_unit_test(test_parallel_threads_reads_back_what_was_set),
        cmocka_unit_test(test_default_threads_are_the_usable_cores),
        cmocka_unit_test(test_beam_search_over_a_data_set),
        cmocka_unit_test(test_a_tensor_of_the_wrong_shape_is_named),
        cmocka_unit_test(test_a_checkpoint_without_its_optimizer_state),
        cmocka_unit_test(test_metadata_written_twice_is_refused),
        cmocka_unit_test(test_dash_is_standard_output),
        cmocka_unit_test(test_an_uncreatable_output_is_an_error),
        cmocka_unit_test(test_a_block_device_is_not_an_input),
        cmocka_unit_test(test_train_help),
    };
    return cmocka_run_group_tests_name("reached for coverage", tests, NULL, NULL);
}
