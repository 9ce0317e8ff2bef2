/* train_bench.c — training throughput of our Trainer on real batches, and
 * how close its matrix products come to the machine's GEMM ceiling.
 *
 *   train_bench [-t THREADS] [-s STEPS] [-w WARMUP] [-b BATCH_TOKENS]
 *               [-n CEILING_N] [--dump FILE] CONFIG DATA.tsv
 *
 * Builds the model CONFIG describes (vocabularies from its files, weights
 * freshly initialised as ./train does), packs the pairs of DATA.tsv into
 * batches of about BATCH_TOKENS source + target tokens exactly as ./train
 * does (data/batches.h), runs WARMUP steps, then times STEPS more: forward,
 * loss, backward, gradient clipping and AdamW, dropout on.  Batches are
 * taken in a shuffled order, wrapping around when there are fewer than
 * WARMUP + STEPS of them.
 *
 * It prints one line of key=value pairs (bench/run.sh reads it):
 *   tokens_per_s   source + target tokens (target incl. </s>) per second
 *   gemm_gflops    the FLOPs of the step's matrix products (counted
 *                  analytically below) per second of the whole step
 *   ceiling_gflops gemm_nt on one CEILING_N³ product, same threads: what
 *                  our kernel reaches when the shape is ideal
 *
 * --dump FILE writes what the PyTorch side (tools/bench_torch.py) needs to
 * repeat the run: the initial weights, every batch in the order run, the
 * source ids of every line of DATA.tsv (for the translation benchmark) and
 * the settings, as one safetensors file.
 *
 * Deliberately not here: any data-loading cost (batches are packed before
 * the clock starts, as they are cheap next to a step) and evaluation. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../app/config.h"
#include "../data/dataset.h"
#include "../data/packed_batch.h"
#include "../common/util.h"
#include "../model/gemm.h"
#include "../model/parallel.h"
#include "../training/trainer.h"
#include "../model/model.h"
#include "../tokenizer/vocab.h"

typedef struct {
    const char *config_path, *data_path, *dump_path;
    int threads, steps, warmup, batch_tokens, ceiling_n;
} Options;

/* ---- counting FLOPs ------------------------------------------------------- */

/* FLOPs of the matrix products (gemm_*) of one training step on a batch of
 * Ns source and Nt target rows.  Forward, per row:
 *   encoder layer: Q,K,V and output projections 4·D², feed-forward 2·D·F
 *   decoder layer: self-attention 4·D², cross-attention Q and output 2·D²
 *                  (its K and V, 2·D², are projected from the Ns memory
 *                  rows), feed-forward 2·D·F
 *   generator:     D·V
 * times 2 (a multiply and an add).  Backward does two products of the same
 * size for each forward one (to the input and to the weight), so a step is
 * 3× the forward.  The attention scores and weighted sums are vector loops,
 * not GEMMs, and are not counted (S, T ~ 10 here: a few percent). */
static double step_gemm_flops(const ModelArch *a, double Ns, double Nt)
{
    double D = a->d_model, F = a->d_ff, V = a->tgt_vocab;
    double enc = a->encoder_layers * Ns * (4 * D * D + 2 * D * F);
    double dec = a->decoder_layers * (Nt * (6 * D * D + 2 * D * F) + Ns * 2 * D * D);
    double gen = Nt * D * V;
    return 3.0 * 2.0 * (enc + dec + gen);
}

/* Best GF/s of gemm_nt on one n×n×n product, over repetitions lasting
 * about 0.5 s in all. */
static double gemm_ceiling(int n)
{
    size_t count = (size_t)n * (size_t)n;
    float *A = xmalloc(count * sizeof *A), *B = xmalloc(count * sizeof *B), *C = xmalloc(count * sizeof *C);
    Rng rng;
    rng_seed(&rng, 1);
    for (size_t i = 0; i < count; i++) {
        A[i] = rng_uniform(&rng) - 0.5f;
        B[i] = rng_uniform(&rng) - 0.5f;
    }
    double best = 0.0, spent = 0.0;
    gemm_nt(C, A, B, n, n, n, false); /* warm up: page in, start threads */
    for (int trial = 0; trial < 50 && spent < 0.5; trial++) {
        double t0 = util_now();
        gemm_nt(C, A, B, n, n, n, false);
        double dt = util_now() - t0;
        spent += dt;
        double rate = 2.0 * n * (double)n * n / dt / 1e9;
        if (rate > best) best = rate;
    }
    free(A);
    free(B);
    free(C);
    return best;
}

/* ---- the dump for PyTorch ------------------------------------------------- */

/* The ids as floats (exact below 2²⁴), as tools/reference.py reads batches. */
static float *as_floats(const int *ids, size_t n)
{
    float *f = xmalloc((n ? n : 1) * sizeof *f);
    for (size_t i = 0; i < n; i++) f[i] = (float)ids[i];
    return f;
}

/* Growing copies of the packed batches, in the order they were run. */
typedef struct {
    int *src, *tgt, *labels, *src_start, *tgt_start, *batch_first;
    size_t ns, nt, pairs, batches;
} Run;

static void run_add(Run *r, const PackedBatch *pb)
{
    int n = pb->batch.count, S = pb->src_start[n], T = pb->tgt_start[n];
    r->src = xrealloc(r->src, (r->ns + (size_t)S) * sizeof(int));
    r->tgt = xrealloc(r->tgt, (r->nt + (size_t)T) * sizeof(int));
    r->labels = xrealloc(r->labels, (r->nt + (size_t)T) * sizeof(int));
    r->src_start = xrealloc(r->src_start, (r->pairs + (size_t)n + 1) * sizeof(int));
    r->tgt_start = xrealloc(r->tgt_start, (r->pairs + (size_t)n + 1) * sizeof(int));
    r->batch_first = xrealloc(r->batch_first, (r->batches + 2) * sizeof(int));
    memcpy(r->src + r->ns, pb->src_ids, (size_t)S * sizeof(int));
    memcpy(r->tgt + r->nt, pb->tgt_ids, (size_t)T * sizeof(int));
    memcpy(r->labels + r->nt, pb->labels, (size_t)T * sizeof(int));
    for (int k = 0; k <= n; k++) { /* offsets into the whole run */
        r->src_start[r->pairs + (size_t)k] = (int)r->ns + pb->src_start[k];
        r->tgt_start[r->pairs + (size_t)k] = (int)r->nt + pb->tgt_start[k];
    }
    r->batch_first[r->batches] = (int)r->pairs;
    r->ns += (size_t)S;
    r->nt += (size_t)T;
    r->pairs += (size_t)n;
    r->batches++;
    r->batch_first[r->batches] = (int)r->pairs;
}

static void run_free(Run *r)
{
    free(r->src);
    free(r->tgt);
    free(r->labels);
    free(r->src_start);
    free(r->tgt_start);
    free(r->batch_first);
}

static SafeWriteTensor vector(const char *name, const float *data, size_t n)
{
    return (SafeWriteTensor){.name = name, .ndim = 1, .shape = {n}, .data = data};
}

/* Model (before any step) + batches + the data's source ids + settings. */
static int write_dump(const char *path, const Model *model, VocabHashes hashes, const Run *r,
                      const Dataset *data, const Config *cfg, const TrainConfig *t,
                      const Options *opt, Error *err)
{
    float *f[9] = {
        as_floats(r->src, r->ns),         as_floats(r->src_start, r->pairs + 1),
        as_floats(r->tgt, r->nt),         as_floats(r->labels, r->nt),
        as_floats(r->tgt_start, r->pairs + 1), as_floats(r->batch_first, r->batches + 1),
        as_floats(data->src_ids, (size_t)data->src_start[data->count]),
        as_floats(data->src_start, data->count + 1),
    };
    SafeWriteTensor extra[] = {
        vector("bench.src_ids", f[0], r->ns),          vector("bench.src_start", f[1], r->pairs + 1),
        vector("bench.tgt_ids", f[2], r->nt),          vector("bench.labels", f[3], r->nt),
        vector("bench.tgt_start", f[4], r->pairs + 1), vector("bench.batch_first", f[5], r->batches + 1),
        vector("bench.sentence_ids", f[6], (size_t)data->src_start[data->count]),
        vector("bench.sentence_start", f[7], data->count + 1),
    };
    char v[9][32];
    snprintf(v[0], sizeof v[0], "%g", (double)t->dropout);
    snprintf(v[1], sizeof v[1], "%g", (double)t->label_smoothing);
    snprintf(v[2], sizeof v[2], "%g", (double)t->learning_rate);
    snprintf(v[3], sizeof v[3], "%g", (double)t->weight_decay);
    snprintf(v[4], sizeof v[4], "%g", (double)t->clip_norm);
    snprintf(v[5], sizeof v[5], "%d", opt->warmup);
    snprintf(v[6], sizeof v[6], "%g", (double)cfg->decode.max_output_ratio);
    snprintf(v[7], sizeof v[7], "%d", cfg->decode.max_output_extra);
    snprintf(v[8], sizeof v[8], "%d", opt->steps);
    SafeMeta meta[] = {
        {"bench.dropout", v[0]},          {"bench.label_smoothing", v[1]},
        {"bench.lr", v[2]},               {"bench.weight_decay", v[3]},
        {"bench.clip_norm", v[4]},        {"bench.warmup_steps", v[5]},
        {"bench.max_output_ratio", v[6]}, {"bench.max_output_extra", v[7]},
        {"bench.steps", v[8]},            {"bench.beta1", "0.9"},
        {"bench.beta2", "0.98"},          {"bench.eps", "1e-9"},
    };
    int status = model_save_with(model, path, hashes, DTYPE_F32, extra, sizeof extra / sizeof *extra,
                                 meta, sizeof meta / sizeof *meta, err);
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) free(f[i]);
    return status;
}

/* ---- the run -------------------------------------------------------------- */

/* The train: section, or ./train's defaults for a config without one. */
static TrainConfig train_settings(const Config *cfg)
{
    if (cfg->has_train) return cfg->train;
    return (TrainConfig){.learning_rate = 1e-3f, .label_smoothing = 0.1f, .dropout = 0.1f,
                         .clip_norm = 1.0f, .seed = 1};
}

static int bench(const Options *opt)
{
    Config cfg;
    Error err = {{0}};
    Vocab *src_vocab = NULL, *tgt_vocab = NULL;
    Dataset data = {0};
    if (config_load(opt->config_path, &cfg, &err)) {
        fprintf(stderr, "train_bench: %s\n", err.message);
        return 2;
    }
    if (!(src_vocab = vocab_load(cfg.source_vocab_path, &err)) ||
        !(tgt_vocab = vocab_load(cfg.target_vocab_path, &err)) ||
        dataset_load(&data, opt->data_path, strcmp(cfg.source_lang, "en") == 0 ? 0 : 1,
                     strcmp(cfg.source_lang, "en") == 0 ? 1 : 0, src_vocab, tgt_vocab,
                     cfg.arch.max_len, &err)) {
        fprintf(stderr, "train_bench: %s\n", err.message);
        vocab_free(src_vocab);
        vocab_free(tgt_vocab);
        config_free(&cfg);
        return 3;
    }
    cfg.arch.src_vocab = vocab_size(src_vocab);
    cfg.arch.tgt_vocab = vocab_size(tgt_vocab);
    VocabHashes hashes = {vocab_hash(src_vocab), vocab_hash(tgt_vocab)};
    const TrainConfig t = train_settings(&cfg);
    int status = 0;

    Batches batches;
    batches_build(&batches, &data, opt->batch_tokens);
    if (batches.count == 0) {
        fprintf(stderr, "train_bench: %s: no usable sentence pairs\n", opt->data_path);
        status = 3;
        goto done_batches;
    }
    batches_shuffle(&batches, t.seed, 0);
    Model model;
    model_init_training(&model, &cfg.arch, t.seed, t.query_init);
    PackedBatch pb;
    packed_batch_init(&pb, batches.max_src_rows, batches.max_tgt_rows, batches.max_pairs);
    int total = opt->warmup + opt->steps;
    Run run = {0};
    for (int s = 0; s < total; s++) {
        packed_batch_fill(&pb, &data, &batches, batches.order[(size_t)s % batches.count], NULL);
        run_add(&run, &pb);
    }
    if (opt->dump_path &&
        write_dump(opt->dump_path, &model, hashes, &run, &data, &cfg, &t, opt, &err)) {
        fprintf(stderr, "train_bench: %s\n", err.message);
        status = 4;
    }

    double ceiling = gemm_ceiling(opt->ceiling_n);
    Trainer tr;
    trainer_init(&tr, &model, batches.max_src_rows, batches.max_tgt_rows, t.dropout,
                 t.label_smoothing, t.seed);
    AdamWSettings settings = {.lr = t.learning_rate, .beta1 = 0.9f, .beta2 = 0.98f, .eps = 1e-9f,
                              .weight_decay = t.weight_decay};
    double tokens = 0, flops = 0, start = 0, loss = 0;
    for (int s = 0; s < total && !status; s++) {
        if (s == opt->warmup) start = util_now();
        packed_batch_fill(&pb, &data, &batches, batches.order[(size_t)s % batches.count], NULL);
        loss = trainer_step(&tr, &pb.batch, pb.labels, true);
        trainer_update(&tr, &settings, t.clip_norm);
        if (s >= opt->warmup) {
            int n = pb.batch.count;
            tokens += pb.tokens;
            flops += step_gemm_flops(&tr.model.arch, pb.src_start[n], pb.tgt_start[n]);
        }
    }
    double seconds = util_now() - start;
    if (!status)
        printf("threads=%d kernel=%s steps=%d warmup=%d batches=%zu tokens=%.0f seconds=%.3f "
               "tokens_per_s=%.1f gemm_gflops=%.2f ceiling_n=%d ceiling_gflops=%.2f last_loss=%.4f\n",
               parallel_threads(), gemm_kernel_name(), opt->steps, opt->warmup, batches.count, tokens,
               seconds, tokens / seconds, flops / seconds / 1e9, opt->ceiling_n, ceiling, loss);
    trainer_free(&tr);
    run_free(&run);
    packed_batch_free(&pb);
done_batches:
    batches_free(&batches);
    dataset_free(&data);
    vocab_free(src_vocab);
    vocab_free(tgt_vocab);
    config_free(&cfg);
    return status;
}

static int parse_int(const char *name, const char *text, int min, int *out)
{
    char *end;
    long n = strtol(text, &end, 10);
    if (*end || end == text || n < min || n > 1000000) {
        fprintf(stderr, "train_bench: %s: expected a number from %d, got '%s'\n", name, min, text);
        return -1;
    }
    *out = (int)n;
    return 0;
}

int main(int argc, char **argv)
{
    Options opt = {.threads = 1, .steps = 5, .warmup = 2, .batch_tokens = 2500, .ceiling_n = 1024};
    static const struct option longs[] = {{"dump", required_argument, 0, 'd'}, {0, 0, 0, 0}};
    int c, bad = 0;
    while ((c = getopt_long(argc, argv, "t:s:w:b:n:", longs, NULL)) != -1) {
        switch (c) {
        case 't': bad |= parse_int("-t", optarg, 1, &opt.threads); break;
        case 's': bad |= parse_int("-s", optarg, 1, &opt.steps); break;
        case 'w': bad |= parse_int("-w", optarg, 0, &opt.warmup); break;
        case 'b': bad |= parse_int("-b", optarg, 1, &opt.batch_tokens); break;
        case 'n': bad |= parse_int("-n", optarg, 1, &opt.ceiling_n); break;
        case 'd': opt.dump_path = optarg; break;
        default: bad = 1;
        }
    }
    if (bad || optind != argc - 2) {
        fprintf(stderr, "usage: train_bench [-t THREADS] [-s STEPS] [-w WARMUP] [-b BATCH_TOKENS] "
                        "[-n CEILING_N] [--dump FILE] CONFIG DATA.tsv\n");
        return 2;
    }
    opt.config_path = argv[optind];
    opt.data_path = argv[optind + 1];
    parallel_set_threads(opt.threads);
    int status = bench(&opt);
    parallel_stop();
    return status;
}
