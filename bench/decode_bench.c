/* decode_bench.c — greedy batch-1 decoding against its memory-bandwidth
 * bound (issue 12's third target: ours ≥ 0.7× the bound).
 *
 *   decode_bench [-n SENTENCES] [-t THREADS] CONFIG DATA.tsv
 *
 * Each greedy step feeds one token through the decoder and the output
 * projection, so it reads every decoder weight that acts on the new token
 * (self-attention Q/K/V/out, cross-attention Q and out, feed-forward,
 * LayerNorms, biases; not cross-attention K/V, projected once per sentence
 * from the encoder's output) and the whole generator [V, D] + bias, once.
 * Those bytes, as stored in memory for inference, divided by the read
 * bandwidth one thread reaches on a buffer of that size, are the time a
 * step cannot beat:
 *   bound per token = bytes_per_token / bandwidth.
 * The bytes are as the model holds them: a float16 file's matrices and
 * embeddings stay float16 for inference (model_load_inference), 2 bytes
 * each, its biases and LayerNorms float32, 4; a float32 file's all 4.
 *
 * Bandwidth: vec_sum (model/vector.h, the best vector width this CPU runs,
 * 8 partial sums) over a buffer of exactly bytes_per_token, one thread, the
 * best of repeated passes lasting about 0.3 s in all: the same working set,
 * read the same way, that a step streams.
 *
 * Ours: decode_greedy (what `translate -b 1` runs) on SENTENCES evenly
 * spaced lines of DATA.tsv (default all), one at a time.  Each sentence is
 * decoded twice: with its usual step limit (T steps) and with a limit of 1
 * (the encoder, the cross-attention K/V and one step); the difference over
 * T-1 is the time of a step without the once-per-sentence work, summed over
 * all sentences.  step_ms is compared with the bound; token_ms (whole
 * decode_greedy time over all output tokens, encoder included) is printed
 * too.  Load time is not included in either.  cpu_step_ms is the same
 * difference in this thread's CPU time (what the step costs when other
 * processes share the cores; the bandwidth, a best pass, is in effect
 * unshared), and cpu_bound_fraction the bound over it.
 *
 * Output: one line of key=value pairs (bench/run.sh reads it). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../app/translator.h"
#include "../common/util.h"
#include "../data/dataset.h"
#include "../model/decode.h"
#include "../model/gemm.h"
#include "../model/parallel.h"
#include "../model/vector.h"

/* Weights one greedy step reads (see the top of the file): the matrix
 * and embedding values in *matrix, the bias and LayerNorm values in *vector. */
static void weights_per_step(const ModelArch *a, double *matrix, double *vector)
{
    double D = a->d_model, F = a->d_ff, V = a->tgt_vocab, L = a->decoder_layers;
    /* self-attention Q/K/V and out; cross-attention Q and out (K, V once
     * per sentence); the feed-forward's two */
    *matrix = L * (3 * D * D + D * D + D * D + D * D + F * D + D * F)
              + D /* the new token's embedding row */ + V * D /* generator */;
    *vector = L * (3 * D + D + D + D + F + D + 3 * 2 * D) + 2 * D /* final norm */
              + V /* generator bias */;
}

/* This thread's CPU seconds: on a machine shared with other work, wall
 * time counts the time other processes ran; the bandwidth is a best pass,
 * in effect an unshared one, so the step is compared in CPU time too. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Best GB/s of vec_sum over `bytes` (one thread). */
static volatile float sink; /* keeps the sums from being optimised away */

static double read_bandwidth(size_t bytes)
{
    size_t n = bytes / sizeof(float);
    float *buf = xmalloc(n * sizeof *buf);
    for (size_t i = 0; i < n; i++) buf[i] = (float)(i & 1023) * 1e-3f;
    double best = 0, spent = 0;
    float total = 0;
    for (int pass = 0; pass < 2000 && (spent < 0.3 || pass < 5); pass++) {
        double t0 = util_now();
        for (size_t i = 0; i < n; i += 1u << 30) /* vec_sum takes an int count */
            total += vec_sum(buf + i, (int)(n - i < (1u << 30) ? n - i : 1u << 30));
        double dt = util_now() - t0;
        if (pass > 0) { /* the first pass pages the buffer in */
            spent += dt;
            if ((double)bytes / dt / 1e9 > best) best = (double)bytes / dt / 1e9;
        }
    }
    sink = total;
    free(buf);
    return best;
}

static int bench(const char *config_path, const char *data_path, int limit_sentences)
{
    Translator tr;
    Error err = {{0}};
    double t0 = util_now();
    if (translator_open(&tr, config_path, &err) != EXIT_OK) {
        fprintf(stderr, "decode_bench: %s\n", err.message);
        return 3;
    }
    double open_s = util_now() - t0;
    const ModelArch *arch = &tr.model.arch;
    Dataset data = {0};
    bool en = strcmp(tr.config.source_lang, "en") == 0;
    if (dataset_load(&data, data_path, en ? 0 : 1, en ? 1 : 0, tr.src_vocab, tr.tgt_vocab,
                     arch->max_len, &err)) {
        fprintf(stderr, "decode_bench: %s\n", err.message);
        translator_close(&tr);
        return 3;
    }
    double matrix, vector;
    weights_per_step(arch, &matrix, &vector);
    double weights = matrix + vector;
    double bytes = matrix * (model_is_half(&tr.model) ? 2 : 4) + vector * sizeof(float);
    double gbs = read_bandwidth((size_t)bytes);
    double bound_s = bytes / (gbs * 1e9);

    size_t count = data.count, n = limit_sentences > 0 && (size_t)limit_sentences < count
                                        ? (size_t)limit_sentences : count;
    double full_s = 0, step_s = 0, cpu_step_s = 0;
    long tokens = 0, steps = 0, sentences = 0;
    const SearchSettings *set = &tr.config.decode;
    for (size_t j = 0; j < n; j++) {
        size_t i = j * count / n; /* evenly spaced: data files may be sorted by length */
        int S = data.src_start[i + 1] - data.src_start[i];
        if (S < 1 || S > arch->max_len) continue;
        const int *src = data.src_ids + data.src_start[i];
        int limit = decode_limit(arch, S, set->max_output_ratio, set->max_output_extra);
        Translation out = {0}, one = {0};
        double a = util_now(), ca = cpu_now();
        decode_greedy(&tr.decoder, src, S, limit, NULL, false, &out);
        double b = util_now(), cb = cpu_now();
        decode_greedy(&tr.decoder, src, S, 1, NULL, false, &one);
        double c = util_now(), cc = cpu_now();
        full_s += b - a;
        tokens += out.steps;
        if (out.steps > 1) {
            step_s += (b - a) - (c - b);
            cpu_step_s += (cb - ca) - (cc - cb);
            steps += out.steps - 1;
        }
        sentences++;
        translation_free(&out);
        translation_free(&one);
    }
    if (sentences == 0 || tokens == 0) {
        fprintf(stderr, "decode_bench: %s: no usable sentences\n", data_path);
        dataset_free(&data);
        translator_close(&tr);
        return 3;
    }
    double step_ms = steps ? 1000 * step_s / steps : 0;
    double cpu_step_ms = steps ? 1000 * cpu_step_s / steps : 0;
    printf("kernel=%s weights=%s threads=%d sentences=%ld output_tokens=%ld weights_per_token=%.0f "
           "bytes_per_token=%.0f bandwidth_gbs=%.2f bound_ms=%.5f step_ms=%.5f token_ms=%.5f "
           "sentences_per_s=%.2f open_s=%.4f bound_fraction=%.3f cpu_step_ms=%.5f cpu_bound_fraction=%.3f\n",
           gemm_kernel_name(), model_is_half(&tr.model) ? "f16" : "f32", parallel_threads(), sentences, tokens, weights, bytes, gbs,
           1000 * bound_s, step_ms, 1000 * full_s / tokens, sentences / full_s, open_s,
           step_ms > 0 ? 1000 * bound_s / step_ms : 0.0, cpu_step_ms,
           cpu_step_ms > 0 ? 1000 * bound_s / cpu_step_ms : 0.0);
    dataset_free(&data);
    translator_close(&tr);
    return 0;
}

int main(int argc, char **argv)
{
    int c, sentences = 0, threads = 1;
    bool bad_option = false;
    while (!bad_option && (c = getopt(argc, argv, "n:t:")) != -1) {
        switch (c) {
        case 'n': sentences = atoi(optarg); break;
        case 't': threads = atoi(optarg); break;
        default: bad_option = true; /* getopt has said which */
        }
    }
    if (bad_option || optind != argc - 2 || sentences < 0 || threads < 1) {
        fprintf(stderr, "usage: decode_bench [-n SENTENCES] [-t THREADS] CONFIG DATA.tsv\n");
        return 2;
    }
    parallel_set_threads(threads);
    int status = bench(argv[optind], argv[optind + 1], sentences);
    parallel_stop();
    return status;
}
