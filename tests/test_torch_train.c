/* test_torch_train.c — train --export and tools/train_torch.py (issue 15,
 * docs/scale-out.md).
 *
 * Without torch: the export holds exactly the ids our tokenizer and
 * data/batches.c give the tiny data, and refuses a folder of someone
 * else's.  With Debian's python3-torch (skipped, saying so, without it):
 *  - one step on 1 process accumulating 2 batches equals one step on 2
 *    processes (DDP, gloo, rendezvous on 127.0.0.1) within 1e-6 relative;
 *  - one PyTorch step equals one step of ./train from the same export: the
 *    loss within 1e-5 and the updated weights within 1e-6, the tolerances
 *    of tools/reference.py's step check (see one_step_matches_c_trainer
 *    for the elements Adam's first step cannot compare);
 *  - a run stopped and resumed from its checkpoint ends bit for bit where
 *    an uninterrupted one does (dropout and source noise on);
 *  - torchrun --nproc_per_node 2 trains the tiny model 50 steps, and
 *    ./translate runs the result: it translates, its --attention JSON and
 *    logits pass reference.py's parity check. */
#include "testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <poll.h>
#include <unistd.h>

#include "../data/batches.h"
#include "../data/dataset.h"
#include "../model/safetensors.h"
#include "../tokenizer/vocab.h"

/* temp_dir()/a/b in one of eight static buffers. */
static const char *path_in(const char *dir, const char *name)
{
    static char paths[8][700];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s%s%s", temp_dir(), dir, name ? "/" : "", name ? name : "");
    return p;
}

/* A config of the tiny model (d_model 32, 2 + 2 layers) trained on
 * tests/data/tiny.tsv (16 pairs) in temp_dir()/dir; `extra` is appended to
 * its train: section.  Returns its path (static). */
static const char *write_config(const char *dir, const char *extra)
{
    static char path[700];
    char cwd[512], yaml[4096];
    if (!getcwd(cwd, sizeof cwd)) abort();
    mkdir(path_in(dir, NULL), 0755);
    snprintf(yaml, sizeof yaml,
             "name: %s\nsource_language: en\ntarget_language: zh\n"
             "model:\n  weights: model.safetensors\n  source_vocab: src.vocab\n  target_vocab: tgt.vocab\n"
             "architecture:\n  d_model: 32\n  heads: 2\n  encoder_layers: 2\n  decoder_layers: 2\n"
             "  d_ff: 64\n  activation: relu\n  norm: pre\n  max_len: 32\n  scale_attention: true\n"
             "  tied_output_embedding: true\n"
             "train:\n  train_data: %s/tests/data/tiny.tsv\n  dev_data: %s/tests/data/tiny.tsv\n"
             "  label_smoothing: 0.1\n  clip_norm: 1.0\n  seed: 3\n%s",
             dir, cwd, cwd, extra);
    snprintf(path, sizeof path, "%s", path_in(dir, "config.yaml"));
    FILE *f = fopen(path, "w");
    if (!f) abort();
    fputs(yaml, f);
    fclose(f);
    return path;
}

/* Run argv; fail unless it exits `want`.  Returns its stderr (free it). */
static char *run_expect(const char *const *argv, int want)
{
    RunResult r = run_program(argv, NULL, 0);
    if (r.status != want) {
        print_in_full(&r);
        fail_msg("%s %s exited %d, not %d: its output is above", argv[0], argv[1], r.status, want);
    }
    char *err = r.err;
    r.err = NULL;
    run_result_free(&r);
    return err;
}

static void export_to(const char *config, const char *dir)
{
    const char *argv[] = {"./train", "-q", "--export", dir, config, NULL};
    free(run_expect(argv, 0));
}

/* tools/train_torch.py EXPORT ARGS... on one process (plain python) or on
 * `procs` under torchrun, its rendezvous on a free port of 127.0.0.1; it
 * must exit `want`.  Returns its stderr (free it). */
static char *train_torch_status(int procs, const char *export_dir, const char *const *args, int want)
{
    const char *argv[40];
    int n = 0;
    char nproc[32], port[32], logs[700];
    argv[n++] = PYTHON_WITH_TORCH;
    if (procs > 0) {
        /* A free port: bound by the kernel's choice, then released for the rendezvous. */
        int s = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof a;
        if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) || getsockname(s, (struct sockaddr *)&a, &len))
            fail_msg("no free port on 127.0.0.1");
        close(s);
        snprintf(nproc, sizeof nproc, "--nproc_per_node=%d", procs);
        snprintf(port, sizeof port, "--master_port=%d", ntohs(a.sin_port));
        snprintf(logs, sizeof logs, "--log_dir=%s", path_in("torchrun-logs", NULL));
        /* -r 2 -t 2: stderr through torchrun's log files to ours.  Debian's
         * torch 1.13 under Python 3.11 cannot start workers with the
         * default -r 0 (docs/scale-out.md). */
        const char *launch[] = {"-m", "torch.distributed.run", nproc, "--master_addr=127.0.0.1", port,
                                "--monitor_interval=0.2", "-r", "2", "-t", "2", logs};
        for (size_t i = 0; i < sizeof launch / sizeof launch[0]; i++) argv[n++] = launch[i];
    }
    argv[n++] = "tools/train_torch.py";
    argv[n++] = export_dir;
    for (; *args && n < 38; args++) argv[n++] = *args;
    argv[n] = NULL;
    return run_expect(argv, want);
}

static void train_torch(int procs, const char *export_dir, const char *const *args)
{
    free(train_torch_status(procs, export_dir, args, 0));
}

/* Tensor `name` of an open file as float32 (malloc'd); *n its size. */
static float *tensor(const SafeFile *f, const char *name, size_t *n)
{
    const SafeTensor *t = safetensors_find(f, name);
    if (!t) fail_msg("%s: no tensor '%s'", f->path, name);
    float *x = malloc(t->numel * sizeof(float) + 1);
    Error err = {{0}};
    if (safetensors_to_f32(f, t, x, &err)) fail_msg("%s", err.message);
    *n = t->numel;
    return x;
}

static SafeFile open_file(const char *path)
{
    SafeFile f;
    Error err = {{0}};
    if (safetensors_open(path, &f, &err)) fail_msg("%s", err.message);
    return f;
}

/* ---- the export (no torch needed) ------------------------------------------- */

/* The I32 tensor `name` of an export's data.safetensors must hold `n` ids
 * equal to want[]: found through its header entry as our writer spells it. */
/* The I32 tensor `name` of an export's data.safetensors (file[len]): its
 * values, and their count in *n. */
static const int *export_ints(const char *file, size_t len, const char *name, size_t *n)
{
    char key[128];
    snprintf(key, sizeof key, "\"%s\":{\"dtype\":\"I32\",\"shape\":[", name);
    const char *at = strstr(file + 8, key);
    if (!at) fail_msg("no header entry %s...", key);
    size_t begin, end, header;
    memcpy(&header, file, 8);
    assert_int_equal(sscanf(at + strlen(key), "%zu],\"data_offsets\":[%zu,%zu", n, &begin, &end), 3);
    assert_int_equal(end - begin, *n * 4);
    assert_true(8 + header + end <= len);
    return (const int *)(file + 8 + header + begin);
}

static void expect_ids(const char *file, size_t len, const char *name, const int *want, size_t n)
{
    size_t count;
    const int *ids = export_ints(file, len, name, &count);
    assert_int_equal(count, n);
    if (memcmp(ids, want, n * 4) != 0) fail_msg("%s: other ids than our Dataset's", name);
}

static int by_value(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static void test_export_holds_our_tokens_and_batches(void **state)
{
    (void)state;
    const char *config = write_config("export", "  batch_tokens: 60\n  dropout: 0.3\n");
    /* a dev set of its own: tiny.tsv's first 8 lines */
    char *tiny = read_file("tests/data/tiny.tsv", NULL), *cut = tiny;
    for (int i = 0; i < 8; i++) cut = strchr(cut, '\n') + 1;
    *cut = '\0';
    write_text(path_in("export", "dev8.tsv"), tiny);
    free(tiny);
    char *yaml = read_file(config, NULL), *dev_line = strstr(yaml, "  dev_data: ");
    assert_non_null(dev_line);
    FILE *cf = fopen(config, "w");
    fprintf(cf, "%.*s  dev_data: dev8.tsv\n%s", (int)(dev_line - yaml), yaml, strchr(dev_line, '\n') + 1);
    fclose(cf);
    free(yaml);
    const char *dir = path_in("export", "out");
    export_to(config, dir);
    size_t len;
    char *file = read_file(path_in("export", "out/data.safetensors"), &len);
    assert_non_null(file);
    const char *header = file + 8; /* after the length; the metadata comes before any data */
    expect_in(header, "\"format\":\"translate-export\",\"format_version\":\"2\"");
    expect_in(header, "\"batch_tokens\":\"60\"");
    expect_in(header, "\"label_smoothing\":\"0.100000001\"");
    expect_in(header, "\"dropout\":\"0.300000012\"");
    expect_in(header, "\"beta2\":\"0.980000019\"");
    expect_in(header, "\"copy_numbers\":\"false\""); /* the decoding: settings too */
    /* The ids are what the C trainer reads: the tiny data through our
     * tokenizer and the exported vocabulary, batched by data/batches.c. */
    Error err = {{0}};
    Vocab *src = vocab_load(path_in("export", "out/source.vocab"), &err);
    Vocab *tgt = vocab_load(path_in("export", "out/target.vocab"), &err);
    assert_non_null(src);
    assert_non_null(tgt);
    Dataset d;
    assert_int_equal(dataset_load(&d, "tests/data/tiny.tsv", 0, 1, src, tgt, 32, &err), 0);
    Batches b;
    batches_build(&b, &d, 60);
    assert_true(b.count > 2);
    expect_ids(file, len, "train.src_ids", d.src_ids, (size_t)d.src_start[d.count]);
    expect_ids(file, len, "train.src_start", d.src_start, d.count + 1);
    expect_ids(file, len, "train.tgt_ids", d.tgt_ids, (size_t)d.tgt_start[d.count]);
    Dataset dev;
    assert_int_equal(dataset_load(&dev, path_in("export", "dev8.tsv"), 0, 1, src, tgt, 32, &err), 0);
    assert_int_equal(dev.count, 8);
    expect_ids(file, len, "dev.src_ids", dev.src_ids, (size_t)dev.src_start[dev.count]);
    expect_ids(file, len, "dev.tgt_start", dev.tgt_start, dev.count + 1);
    dataset_free(&dev);
    expect_ids(file, len, "train.batch_pairs", b.pairs, d.usable_count);
    expect_ids(file, len, "train.batch_first", b.first, b.count + 1);
    int one_batching[2] = {0, (int)b.count}; /* no weight with a fraction: one for every epoch */
    expect_ids(file, len, "train.epoch_first", one_batching, 2);
    /* tiny.tsv's sources end in . ? or !: their ids, ascending */
    int stops[3] = {vocab_id(src, "."), vocab_id(src, "?"), vocab_id(src, "!")};
    qsort(stops, 3, sizeof stops[0], by_value);
    expect_ids(file, len, "source.final_punctuation", stops, 3);
    batches_free(&b);
    dataset_free(&d);
    vocab_free(src);
    vocab_free(tgt);
    free(file);
    /* The initial model is a model of ours, for those vocabularies. */
    SafeFile init = open_file(path_in("export", "out/init.safetensors"));
    assert_string_equal(safetensors_meta(&init, "format"), "translate-model");
    assert_string_equal(safetensors_meta(&init, "d_model"), "32");
    safetensors_close(&init);
    /* Again into the same folder, where a training run has put its model
     * too: the export replaced, the rest left alone. */
    FILE *f = fopen(path_in("export", "out/model.safetensors"), "w");
    fputs("a run's model\n", f);
    fclose(f);
    export_to(config, dir);
    char *model = read_file(path_in("export", "out/model.safetensors"), &len);
    assert_string_equal(model, "a run's model\n");
    free(model);
}

/* A source weighted 0.5 draws another half of its pairs every epoch: the
 * export holds each epoch's batching (it held epoch 1's, which
 * train_torch.py then trained every epoch), and train_torch.py refuses
 * more epochs than it holds draws for. */
/* A config of the tiny model whose one source is tiny.tsv at weight 0.5,
 * trained `epochs` epochs, in temp_dir()/dir (static path). */
static const char *half_weight_config(const char *dir, int epochs)
{
    char cwd[512], extra[800];
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(extra, sizeof extra, "  epochs: %d\n  sources:\n    - path: %s/tests/data/tiny.tsv\n      weight: 0.5\n",
             epochs, cwd);
    const char *config = write_config(dir, extra);
    size_t len;
    char *yaml = read_file(config, &len);
    char *at = strstr(yaml, "  train_data: "), *rest = strchr(at, '\n') + 1;
    memmove(at, rest, strlen(rest) + 1); /* sources: instead */
    FILE *f = fopen(config, "w");
    assert_non_null(f);
    fputs(yaml, f);
    assert_int_equal(fclose(f), 0);
    free(yaml);
    return config;
}

static void test_export_holds_every_epochs_draw(void **state)
{
    (void)state;
    size_t len;
    export_to(half_weight_config("export-draws", 3), path_in("export-draws", "out"));
    char *file = read_file(path_in("export-draws", "out/data.safetensors"), &len);
    assert_non_null(file);
    size_t n_epochs, n_first, n_pairs;
    const int *epoch_first = export_ints(file, len, "train.epoch_first", &n_epochs);
    const int *first = export_ints(file, len, "train.batch_first", &n_first);
    const int *pairs = export_ints(file, len, "train.batch_pairs", &n_pairs);
    assert_int_equal(n_epochs, 4);
    assert_int_equal(epoch_first[3], (int)n_first - 1);
    bool seen[3][16] = {{false}}; /* each epoch's pairs of tiny.tsv's 16 */
    int drawn[3] = {0};
    for (int e = 0; e < 3; e++)
        for (int k = first[epoch_first[e]]; k < first[epoch_first[e + 1]]; k++) {
            assert_true(pairs[k] >= 0 && pairs[k] < 16);
            drawn[e] += !seen[e][pairs[k]];
            seen[e][pairs[k]] = true;
        }
    assert_int_equal(first[n_first - 1], (int)n_pairs);
    for (int e = 0; e < 3; e++) assert_int_equal(drawn[e], 8); /* half of 16, each once */
    assert_true(memcmp(seen[0], seen[1], sizeof seen[0]) != 0 || memcmp(seen[1], seen[2], sizeof seen[0]) != 0);
    free(file);
    if (!torch_available()) return;
    const char *more[] = {"--epochs", "4", NULL};
    char *err = train_torch_status(0, path_in("export-draws", "out"), more, 2);
    expect_in(err, "the export holds the draws of its weighted sources for 3 epochs: export again");
    free(err);
    /* one epoch's draw is one draw too, not a batching for every epoch */
    export_to(half_weight_config("export-one-draw", 1), path_in("export-one-draw", "out"));
    const char *two[] = {"--epochs", "2", NULL};
    err = train_torch_status(0, path_in("export-one-draw", "out"), two, 2);
    expect_in(err, "the export holds the draws of its weighted sources for 1 epoch: export again");
    free(err);
}

/* A config with `sources:` records its files, each with its weight, as
 * train_data (it recorded "(null)": the one-file key is unset then). */
static void test_export_records_the_sources(void **state)
{
    (void)state;
    const char *config = write_config("export-sources", "");
    size_t len;
    char *yaml = read_file(config, &len), cwd[512];
    assert_non_null(getcwd(cwd, sizeof cwd));
    char *at = strstr(yaml, "  train_data: "), *rest = strchr(at, '\n') + 1;
    FILE *f = fopen(config, "w");
    assert_non_null(f);
    fprintf(f, "%.*s  sources:\n    - path: %s/tests/data/tiny.tsv\n      weight: 2\n"
               "    - format: numbers\n      weight: 0.5\n%s", (int)(at - yaml), yaml, cwd, rest);
    assert_int_equal(fclose(f), 0);
    free(yaml);
    export_to(config, path_in("export-sources", "out"));
    char *file = read_file(path_in("export-sources", "out/data.safetensors"), &len), want[700];
    assert_non_null(file);
    snprintf(want, sizeof want, "\"train_data\":\"%s/tests/data/tiny.tsv (weight 2), numbers (weight 0.5)\"", cwd);
    expect_in(file + 8, want); /* the header, after its length */
    free(file);
}

static void test_export_refuses_a_foreign_folder_and_other_options(void **state)
{
    (void)state;
    const char *config = write_config("export-refused", "");
    const char *dir = path_in("export-refused", "mine");
    mkdir(dir, 0755);
    FILE *f = fopen(path_in("export-refused", "mine/notes.txt"), "w");
    fputs("keep me\n", f);
    fclose(f);
    const char *argv[] = {"./train", "-q", "--export", dir, config, NULL};
    char *err = run_expect(argv, 2);
    expect_in(err, "not empty (notes.txt) and not an earlier export");
    free(err);
    size_t len;
    char *notes = read_file(path_in("export-refused", "mine/notes.txt"), &len);
    assert_string_equal(notes, "keep me\n");
    free(notes);
    assert_int_not_equal(access(path_in("export-refused", "mine/data.safetensors"), F_OK), 0);
    /* A FIFO where the export's data goes is not an earlier export: it is
     * refused, and reading it never blocks (fopen on it waited forever). */
    const char *fifo_dir = path_in("export-refused", "fifo");
    mkdir(fifo_dir, 0755);
    assert_int_equal(mkfifo(path_in("export-refused", "fifo/data.safetensors"), 0644), 0);
    const char *onto_fifo[] = {"./train", "-q", "--export", fifo_dir, config, NULL};
    err = run_expect(onto_fifo, 2);
    expect_in(err, "not empty (data.safetensors) and not an earlier export");
    free(err);
    const char *resume[] = {"./train", "--export", dir, "--resume", config, NULL};
    err = run_expect(resume, 2);
    expect_in(err, "--export DIR goes alone");
    free(err);
    /* An earlier export whose vocabulary is now a link to the config: an
     * export writes its own files, never through a link (the config, or
     * the training data, was replaced so). */
    const char *earlier = path_in("export-refused", "earlier");
    const char *again[] = {"./train", "-q", "--export", earlier, config, NULL};
    free(run_expect(again, 0));
    char *yaml = read_file(config, &len);
    const char *vocab = path_in("export-refused", "earlier/source.vocab");
    assert_int_equal(unlink(vocab), 0);
    char absolute[PATH_MAX];
    assert_non_null(realpath(config, absolute));
    assert_int_equal(symlink(absolute, vocab), 0);
    err = run_expect(again, 2);
    expect_in(err, "not a file of an earlier export");
    free(err);
    char *now = read_file(config, NULL);
    assert_string_equal(now, yaml);
    free(now);
    free(yaml);
}

/* An export that failed half way (its init.safetensors written, no
 * data.safetensors: a full disk, a kill) can be done again into the same
 * folder; it had been refused as a stranger's folder, which the user
 * could not get past but by deleting it.  A config whose model.simplify
 * is no table is refused before anything is read or written (it was
 * found after the data, three files written; a broken one was copied). */
static void test_a_torn_export_can_be_exported_again(void **state)
{
    (void)state;
    /* zh -> en: model.simplify reads a Chinese source */
    const char *config = write_config("export-torn", "  source_column: 1\n  target_column: 0\n");
    const char *dir = path_in("export-torn", "out");
    export_to(config, dir);
    assert_int_equal(unlink(path_in("export-torn", "out/data.safetensors")), 0);
    export_to(config, dir);
    assert_int_equal(access(path_in("export-torn", "out/data.safetensors"), F_OK), 0);

    size_t len;
    char *yaml = read_file(config, &len), *at = strstr(yaml, "  target_vocab: tgt.vocab\n");
    assert_non_null(at);
    memcpy(strstr(yaml, "source_language: en"), "source_language: zh", 19);
    memcpy(strstr(yaml, "target_language: zh"), "target_language: en", 19);
    at += strlen("  target_vocab: tgt.vocab\n");
    const char *tables[] = {"missing.tsv", "notes.tsv"};
    FILE *f = fopen(path_in("export-torn", "notes.tsv"), "w");
    fputs("hello\tworld\n", f);
    fclose(f);
    for (int i = 0; i < 2; i++) {
        f = fopen(config, "w");
        fprintf(f, "%.*s  simplify: %s\n%s", (int)(at - yaml), yaml, tables[i], at);
        assert_int_equal(fclose(f), 0);
        const char *fresh = path_in("export-torn", i ? "fresh2" : "fresh1");
        const char *argv[] = {"./train", "--export", fresh, config, NULL};
        char *err = run_expect(argv, 3);
        expect_in(err, "model.simplify: ");
        expect_in(err, tables[i]);
        assert_null(strstr(err, " pairs")); /* before the data */
        free(err);
        assert_int_not_equal(access(fresh, F_OK), 0);
    }
    free(yaml);
}

/* ---- PyTorch ------------------------------------------------------------------ */

/* Adam's first step moves a weight by about ±lr whatever its gradient: one
 * whose gradient is within 1e-4 of its tensor's largest (reference.py's
 * gradient tolerance) moves on a rounding error's sign, so it says nothing
 * about the arithmetic.  The largest |g[j]| of a tensor, for that test. */
static float largest_magnitude(const float *g, size_t n)
{
    float max = 0;
    for (size_t j = 0; j < n; j++) max = g[j] > max ? g[j] : -g[j] > max ? -g[j] : max;
    return max;
}

static bool gradient_determined(float g, float largest)
{
    return g > 1e-4f * largest || -g > 1e-4f * largest;
}

/* Per tensor, max |a - b| / max |b|, over the tensors of `b_path` (and
 * their grad.NAME when the files have them); fails above `tol`.  A weight
 * whose gradient in b is within 1e-4 of its tensor's largest was moved by
 * Adam's first step by about ±lr on the sign of a rounding error (see
 * test_one_step_matches_the_c_trainer below): those elements are only held
 * to |diff| <= 2 lr.  Two processes that all-reduce their gradients and one
 * that accumulates them round differently; on an AMD EPYC the key biases'
 * (true gradient 0) noise happened to agree, on an Intel Xeon it did not. */
static void expect_close(const char *a_path, const char *b_path, double tol, double lr)
{
    SafeFile a = open_file(a_path), b = open_file(b_path);
    double worst = 0;
    size_t undetermined = 0, compared = 0;
    for (size_t i = 0; i < b.count; i++) {
        const char *name = b.tensors[i].name;
        char grad_name[200];
        snprintf(grad_name, sizeof grad_name, "grad.%s", name);
        size_t n, m, k = 0;
        float *x = tensor(&a, name, &n), *y = tensor(&b, name, &m), *g = NULL;
        assert_int_equal(n, m);
        if (strncmp(name, "grad.", 5) != 0 && safetensors_find(&b, grad_name)) {
            g = tensor(&b, grad_name, &k);
            assert_int_equal(k, n);
        }
        float gmax = g ? largest_magnitude(g, n) : 0;
        double diff = 0, scale = 1e-30;
        for (size_t j = 0; j < n; j++) {
            double d = x[j] > y[j] ? x[j] - y[j] : y[j] - x[j];
            if (g && !gradient_determined(g[j], gmax)) {
                if (!(d <= 2 * lr + 1e-6))
                    fail_msg("%s[%zu]: %.8f and %.8f differ by more than 2 lr (gradient %.3e of at most %.3e)",
                             name, j, x[j], y[j], g[j], gmax);
                undetermined += !(g[j] == 0 && d == 0); /* else a row no token used */
                continue;
            }
            compared += g != NULL;
            if (d > diff) diff = d;
            if (y[j] > scale) scale = y[j];
            if (-y[j] > scale) scale = -y[j];
        }
        if (diff / scale > worst) worst = diff / scale;
        if (diff / scale > tol)
            fail_msg("%s: max |diff| / max |value| %.2e > %.0e between %s and %s", name, diff / scale, tol, a_path,
                     b_path);
        free(x);
        free(y);
        free(g);
    }
    print_message("%zu tensors, worst relative difference %.2e; %zu weights compared, %zu with a gradient "
                  "within 1e-4 of 0 held to 2 lr\n", b.count, worst, compared, undetermined);
    assert_true(undetermined < compared / 50);
    safetensors_close(&a);
    safetensors_close(&b);
}

/* The loss of step 1 in a train log (log_steps 1). */
static double logged_loss(const char *log_path)
{
    size_t len;
    char *log = read_file(log_path, &len);
    assert_non_null(log);
    const char *row = strstr(log, "\nstep,1,");
    if (!row) fail_msg("no step 1 in %s", log_path);
    double loss;
    assert_int_equal(sscanf(row, "\nstep,1,%*d,%lf", &loss), 1);
    free(log);
    return loss;
}

/* ./train and train_torch.py each take one step, on the whole tiny data as
 * one batch, from the export's initial weights.  The losses must agree
 * within 1e-5 and the updated weights within 1e-6 (reference.py's step
 * tolerances).  Adam's first update is lr * g / (|g| + eps), about ±lr
 * whatever |g|: an element whose gradient is within reference.py's gradient
 * tolerance of zero (1e-4 of its tensor's largest) moves by ±lr on a
 * rounding error's sign.  The key biases are all such: softmax ignores a
 * constant added to every score, so their true gradient is exactly 0.
 * Those elements are only held to |diff| <= 2 lr. */
static void test_one_step_matches_the_c_trainer(void **state)
{
    (void)state;
    SKIP_WITHOUT_TORCH();
    const char *config = write_config("vs-c", "  batch_tokens: 100000\n  dropout: 0\n  warmup_steps: 4\n"
                                              "  log_steps: 1\n  max_steps: 1\n");
    const char *dir = path_in("vs-c", "export");
    export_to(config, dir);
    const char *c_train[] = {"./train", "-q", "-t", "1", config, NULL};
    free(run_expect(c_train, 0));
    const char *step = path_in("vs-c", "torch.step.safetensors");
    const char *args[] = {"-q", "--out", path_in("vs-c", "torch.safetensors"), "--dump-step", step, NULL};
    train_torch(0, dir, args);
    SafeFile ours = open_file(path_in("vs-c", "model.safetensors")), theirs = open_file(step);
    double loss = strtod(safetensors_meta(&theirs, "loss"), NULL);
    double c_loss = logged_loss(path_in("vs-c", "model.safetensors.log.csv"));
    print_message("loss: C %.6f, PyTorch %.7f\n", c_loss, loss);
    assert_true(c_loss - loss < 1e-5 && loss - c_loss < 1e-5);
    const double lr = 1e-3 / 4; /* the learning rate's default peak, step 1 of warmup 4 */
    size_t compared = 0, undetermined = 0, unused = 0;
    double worst = 0;
    for (size_t i = 0; i < ours.count; i++) {
        const char *name = ours.tensors[i].name;
        char grad_name[200];
        snprintf(grad_name, sizeof grad_name, "grad.%s", name);
        size_t n, m, k;
        float *c = tensor(&ours, name, &n), *t = tensor(&theirs, name, &m), *g = tensor(&theirs, grad_name, &k);
        assert_int_equal(n, m);
        assert_int_equal(n, k);
        float gmax = largest_magnitude(g, n);
        for (size_t j = 0; j < n; j++) {
            double d = c[j] > t[j] ? c[j] - t[j] : t[j] - c[j];
            bool determined = gradient_determined(g[j], gmax);
            if (!(d <= (determined ? 1e-6 : 2 * lr + 1e-6)))
                fail_msg("%s[%zu]: C %.8f, PyTorch %.8f (gradient %.3e of at most %.3e)", name, j, c[j], t[j],
                         g[j], gmax);
            if (determined && d > worst) worst = d;
            compared += determined;
            /* An exactly zero gradient is a row no token of the batch used
             * (a subword vocabulary's 448 byte tokens, mostly): Adam leaves
             * it alone on both sides, so it says nothing about rounding. */
            unused += !determined && g[j] == 0 && d == 0;
            undetermined += !determined && !(g[j] == 0 && d == 0);
        }
        free(c);
        free(t);
        free(g);
    }
    print_message("updated weights: %zu within 1e-6 (worst %.2e), %zu with a gradient within 1e-4 of 0, "
                  "%zu unused (gradient 0, unchanged on both sides)\n",
                  compared, worst, undetermined, unused);
    assert_true(undetermined < compared / 50);
    safetensors_close(&ours);
    safetensors_close(&theirs);
}

static void test_resume_continues_exactly(void **state)
{
    (void)state;
    SKIP_WITHOUT_TORCH();
    const char *config = write_config("resume", "  batch_tokens: 60\n  dropout: 0.1\n  drop_final_punctuation: 0.5\n");
    const char *dir = path_in("resume", "export");
    export_to(config, dir);
    const char *straight[] = {"-q", "--max-steps", "6", "--out", path_in("resume", "straight.safetensors"), NULL};
    train_torch(0, dir, straight);
    /* stopped at step 3, in the middle of the first epoch (4 batches) */
    const char *part[] = {"-q", "--max-steps", "3", "--out", path_in("resume", "resumed.safetensors"), NULL};
    train_torch(0, dir, part);
    const char *rest[] = {"-q", "--max-steps", "6", "--resume", "--out", path_in("resume", "resumed.safetensors"), NULL};
    train_torch(0, dir, rest);
    const char *keys[] = {"train_steps", "source_vocab_hash"};
    assert_same_tensors(path_in("resume", "straight.safetensors"), path_in("resume", "resumed.safetensors"), keys, 2);
    /* Two batches a step: the checkpoint's position would name other batches. */
    const char *other[] = {"--max-steps", "8", "--accum", "2", "--resume", "--out",
                           path_in("resume", "resumed.safetensors"), NULL};
    char *err = train_torch_status(0, dir, other, 2);
    expect_in(err, "written with group 1, this run has 2");
    free(err);
    /* The folder exported again from a config of another architecture
     * (the same shapes, post-norm): its checkpoint is refused, not trained
     * on as the other model (a traceback where the shapes differed). */
    size_t len;
    char *yaml = read_file(config, &len);
    char *norm = strstr(yaml, "norm: pre");
    assert_non_null(norm);
    memcpy(norm, "norm: pos", 9);
    FILE *f = fopen(config, "w");
    fprintf(f, "%.*st%s", (int)(norm - yaml) + 9, yaml, norm + 9);
    assert_int_equal(fclose(f), 0);
    free(yaml);
    export_to(config, dir);
    const char *again[] = {"--max-steps", "6", "--resume", "--out", path_in("resume", "resumed.safetensors"), NULL};
    err = train_torch_status(0, dir, again, 2);
    expect_in(err, "written for another architecture than this export's (norm pre -> post)");
    assert_null(strstr(err, "Traceback"));
    free(err);
}

/* SIGINT ends a run with status 130, its checkpoint saved, also when the
 * run started with SIGINT ignored, as a shell starts a background job
 * (`... &`): Python then leaves it ignored unless the script handles it,
 * and the run went on to its end. */
static void test_sigint_stops_a_run_started_in_the_background(void **state)
{
    (void)state;
    SKIP_WITHOUT_TORCH();
    const char *config = write_config("sigint", "  batch_tokens: 60\n  epochs: 100000\n");
    const char *dir = path_in("sigint", "export");
    export_to(config, dir);
    int err[2];
    if (pipe(err)) abort();
    pid_t pid = fork();
    if (pid < 0) abort();
    if (pid == 0) {
        signal(SIGINT, SIG_IGN);
        dup2(err[1], 2);
        close(err[0]);
        close(err[1]);
        execl(PYTHON_WITH_TORCH, PYTHON_WITH_TORCH, "tools/train_torch.py", dir, "--out",
              path_in("sigint", "model.safetensors"), (char *)NULL);
        _exit(127);
    }
    close(err[1]);
    /* its first progress line: the handlers are in place, training runs */
    char text[8192] = "";
    size_t n = 0;
    while (!strstr(text, "train_torch: ") && n + 1 < sizeof text) {
        struct pollfd p = {err[0], POLLIN, 0};
        if (poll(&p, 1, 60000) != 1) break;
        ssize_t got = read(err[0], text + n, sizeof text - 1 - n);
        if (got <= 0) break;
        n += (size_t)got;
        text[n] = '\0';
    }
    kill(pid, SIGINT);
    int status = -1;
    for (int waited = 0; waited < 600 && waitpid(pid, &status, WNOHANG) == 0; waited++) usleep(100000);
    if (waitpid(pid, &status, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        fail_msg("still training 60 s after SIGINT; stderr: %s", text);
    }
    while (n + 1 < sizeof text) {
        ssize_t got = read(err[0], text + n, sizeof text - 1 - n);
        if (got <= 0) break;
        n += (size_t)got;
        text[n] = '\0';
    }
    close(err[0]);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 130) fail_msg("status %d; stderr: %s", status, text);
    expect_in(text, "train_torch: interrupted");
}

/* What train_torch.py refuses before it trains, each in one line with its
 * status and no traceback: files beside WEIGHTS that are not its own, a
 * folder as WEIGHTS, an export that is missing, torn or mixed. */
static void test_train_torch_refuses_before_training(void **state)
{
    (void)state;
    SKIP_WITHOUT_TORCH();
    char config[700], dir[700], other_dir[700];
    snprintf(config, sizeof config, "%s", write_config("refuse", "  batch_tokens: 60\n"));
    snprintf(dir, sizeof dir, "%s", path_in("refuse", "export")); /* (path_in's buffers rotate) */
    export_to(config, dir);

    /* WEIGHTS' YAML, a vocabulary or a checkpoint beside it */
    const char *beside[] = {"mine.yaml", "mine.src.vocab", "mine.safetensors.ckpt.pt"};
    for (int i = 0; i < 3; i++) {
        write_text(path_in("refuse", beside[i]), "keep\n");
        const char *args[] = {"-q", "--max-steps", "1", "--out", path_in("refuse", "mine.safetensors"), NULL};
        char *err = train_torch_status(0, dir, args, 2);
        expect_in(err, beside[i]);
        expect_in(err, "exists (written beside");
        assert_null(strstr(err, "Traceback"));
        free(err);
        expect_file_is(path_in("refuse", beside[i]), "keep\n");
        remove(path_in("refuse", beside[i]));
    }
    /* a YAML of the user's is never replaced, --overwrite or not */
    write_text(path_in("refuse", "mine.yaml"), "keep\n");
    const char *over[] = {"-q", "--max-steps", "1", "--overwrite", "--out", path_in("refuse", "mine.safetensors"), NULL};
    char *err = train_torch_status(0, dir, over, 2);
    expect_in(err, "is not a config train_torch.py wrote");
    free(err);
    expect_file_is(path_in("refuse", "mine.yaml"), "keep\n");
    remove(path_in("refuse", "mine.yaml"));
    /* nor notes or a config named --out itself: --overwrite replaces a
     * model only (they became models, status 0) */
    write_text(path_in("refuse", "notes.txt"), "keep\n");
    const char *onto_notes[] = {"-q", "--max-steps", "1", "--overwrite", "--out", path_in("refuse", "notes.txt"), NULL};
    err = train_torch_status(0, dir, onto_notes, 2);
    expect_in(err, "notes.txt exists and is not a model");
    assert_null(strstr(err, "Traceback"));
    free(err);
    expect_file_is(path_in("refuse", "notes.txt"), "keep\n");
    /* a folder */
    const char *folder[] = {"-q", "--out", path_in("refuse", "export"), NULL};
    err = train_torch_status(0, dir, folder, 2);
    expect_in(err, "names a folder");
    free(err);
    /* no export: no folder made for it */
    const char *none[] = {"-q", NULL};
    err = train_torch_status(0, path_in("refuse", "nothing"), none, 3);
    expect_in(err, "no export there");
    free(err);
    assert_int_not_equal(access(path_in("refuse", "nothing"), F_OK), 0);

    /* another config's vocabulary in the export: found before training */
    const char *other = write_config("refuse-other", "  batch_tokens: 60\n  target_vocab_size: 500\n");
    snprintf(other_dir, sizeof other_dir, "%s", path_in("refuse-other", "export"));
    export_to(other, other_dir);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cp %s/target.vocab %s/target.vocab", other_dir, dir);
    assert_int_equal(system(cmd), 0);
    const char *args[] = {"-q", "--max-steps", "1", "--out", path_in("refuse", "mixed.safetensors"), NULL};
    err = train_torch_status(0, dir, args, 3);
    expect_in(err, "target.vocab: not the vocabulary");
    assert_null(strstr(err, "Traceback"));
    free(err);
    assert_int_not_equal(access(path_in("refuse", "mixed.safetensors"), F_OK), 0);
    /* another export's init.safetensors beside this one's data (an export
     * that failed half way over an earlier one), with the same vocabularies */
    export_to(config, dir);
    snprintf(cmd, sizeof cmd, "cp %s/data.safetensors %s/old-data", dir, dir);
    assert_int_equal(system(cmd), 0);
    export_to(config, dir);
    snprintf(cmd, sizeof cmd, "mv %s/old-data %s/data.safetensors", dir, dir);
    assert_int_equal(system(cmd), 0);
    err = train_torch_status(0, dir, args, 3);
    expect_in(err, "are not of one export (a torn or mixed export");
    assert_null(strstr(err, "Traceback"));
    free(err);
    /* a torn data file */
    export_to(config, dir);
    snprintf(cmd, sizeof cmd, "head -c 3000 %s/data.safetensors > %s/torn && mv %s/torn %s/data.safetensors", dir,
             dir, dir, dir);
    assert_int_equal(system(cmd), 0);
    err = train_torch_status(0, dir, args, 3);
    expect_in(err, "data.safetensors: ");
    assert_null(strstr(err, "Traceback"));
    free(err);
}

/* A full disk at the first checkpoint: status 4 and one line, no
 * traceback or abort, no temporary left. */
static void test_train_torch_full_disk_is_status_4(void **state)
{
    (void)state;
    SKIP_WITHOUT_TORCH();
    const char *config = write_config("full", "  batch_tokens: 60\n");
    const char *dir = path_in("full", "export");
    export_to(config, dir);
    struct rlimit old, small = {20000, 20000};
    getrlimit(RLIMIT_FSIZE, &old);
    small.rlim_max = old.rlim_max;
    signal(SIGXFSZ, SIG_IGN); /* inherited: the child gets EFBIG, not a signal */
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    const char *argv[] = {PYTHON_WITH_TORCH, "tools/train_torch.py", dir, "-q", "--max-steps", "1", "--out",
                          path_in("full", "model.safetensors"), NULL};
    RunResult r = run_program(argv, NULL, 0);
    setrlimit(RLIMIT_FSIZE, &old); /* before anything can fail */
    signal(SIGXFSZ, SIG_DFL);
    if (r.status != 4) print_in_full(&r);
    assert_int_equal(r.status, 4);
    expect_in(r.err, "cannot write: File too large");
    assert_null(strstr(r.err, "Traceback"));
    run_result_free(&r);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "ls -a %s | grep -q '\\.tmp$'", path_in("full", NULL));
    assert_int_not_equal(system(cmd), 0);
}

/* One torchrun run (its start costs seconds) for two checks: its first
 * step against one process accumulating the same two batches, and its
 * model after 50 steps in ./translate. */
static void test_torchrun_two_processes_equal_one_and_translate_runs_the_model(void **state)
{
    (void)state;
    SKIP_WITHOUT_TORCH();
    const char *config = write_config("e2e", "  batch_tokens: 60\n  learning_rate: 0.005\n  warmup_steps: 10\n"
                                             "  dropout: 0\n  epochs: 100\n");
    const char *dir = path_in("e2e", "export");
    export_to(config, dir);
    const char *weights = path_in("e2e", "out/tiny.safetensors"); /* out/ made by train_torch.py */
    const char *two[] = {"-q", "--max-steps", "50", "--out", weights, "--dump-step",
                         path_in("e2e", "two.step.safetensors"), NULL};
    train_torch(2, dir, two);
    const char *one[] = {"-q", "--accum", "2", "--max-steps", "1", "--out", path_in("e2e", "one.safetensors"),
                         "--dump-step", path_in("e2e", "one.step.safetensors"), NULL};
    train_torch(0, dir, one);
    /* the gradients (grad.NAME) and the updated weights of step 1 */
    const double lr = 0.005 / 10; /* learning_rate above, step 1 of warmup 10 */
    expect_close(path_in("e2e", "two.step.safetensors"), path_in("e2e", "one.step.safetensors"), 1e-6, lr);

    const char *yaml = path_in("e2e", "out/tiny.yaml");
    size_t yaml_len;
    char *written = read_file(yaml, &yaml_len);
    assert_non_null(written);
    expect_in(written, "decoding:\n  beam: 1\n"); /* the export's decoding: settings, copy_numbers among them */
    expect_in(written, "  copy_numbers: false\n");
    free(written);
    char json[700], logits[700];
    snprintf(json, sizeof json, "%s", path_in("e2e", "attention.json"));
    snprintf(logits, sizeof logits, "%s", path_in("e2e", "logits.bin"));
    const char *translate[] = {"./translate", "-q", "-c", yaml, "--attention", json, "--logits", logits,
                               "I love China.", "Tom is here.", NULL};
    RunResult t = run_program(translate, NULL, 0);
    if (t.status != 0) fail_msg("translate -c %s exited %d: %s", yaml, t.status, t.err);
    assert_int_equal(count_lines(t.out), 2);
    run_result_free(&t);
    size_t len;
    char *maps = read_file(json, &len);
    assert_non_null(maps);
    expect_in(maps, "\"cross_attentions\"");
    free(maps);
    const char *reference[] = {PYTHON_WITH_TORCH, "tools/reference.py", "check", json, logits, NULL};
    RunResult r = run_program(reference, NULL, 0);
    print_in_full(&r);
    if (r.status != 0) fail_msg("reference.py check exited %d: its whole report is above", r.status);
    run_result_free(&r);
}

/* A zh source's config reads its Traditional characters through
 * model.simplify: the export carries the table, and train_torch.py's YAML
 * names its copy (without it, a model trained so read 這個問題很難。 as
 * bytes it never saw, and wrote nonsense).  Its values are quoted: a name
 * with ": " or " #" made a YAML translate refused after training. */
static void test_the_simplify_table_goes_with_the_model(void **state)
{
    (void)state;
    const char *config = write_config("zh-simplify", "  source_column: 1\n  target_column: 0\n  epochs: 1\n");
    write_text(path_in("zh-simplify", "table.tsv"), "个\t個\n们\t們\n");
    size_t len;
    char *yaml = read_file(config, &len), *edited = malloc(len + 200);
    char *model = strstr(yaml, "model:\n"), *rest = model + strlen("model:\n");
    snprintf(edited, len + 200, "%.*s", (int)(model - yaml), yaml);
    strcat(edited, "model:\n  simplify: table.tsv\n");
    strcat(edited, rest);
    char *from = strstr(edited, "name: zh-simplify\nsource_language: en\ntarget_language: zh\n");
    assert_non_null(from);
    static const char zh_en[] = "name: zh-simplify\nsource_language: zh\ntarget_language: en\n";
    memcpy(from, zh_en, strlen(zh_en));
    write_text(config, edited);
    free(yaml);
    free(edited);
    const char *dir = path_in("zh-simplify", "export");
    export_to(config, dir);
    expect_file_is(path_in("zh-simplify", "export/simplify.tsv"), "个\t個\n们\t們\n");
    /* a Chinese source's final 。 is one drop_final_punctuation may drop */
    size_t bytes, n;
    char *file = read_file(path_in("zh-simplify", "export/data.safetensors"), &bytes);
    Error err = {{0}};
    Vocab *src = vocab_load(path_in("zh-simplify", "export/source.vocab"), &err);
    assert_non_null(src);
    const int *stops = export_ints(file, bytes, "source.final_punctuation", &n);
    bool full_stop = false;
    for (size_t i = 0; i < n; i++) full_stop |= stops[i] == vocab_id(src, "\xE3\x80\x82"); /* 。 */
    assert_true(full_stop);
    vocab_free(src);
    free(file);
    SKIP_WITHOUT_TORCH(); /* the rest trains with PyTorch */
    /* (a name with ": ", " #" and a line break: the YAML holds each as text;
     * the line break had ended its first line's comment, the rest a key) */
    const char *weights = path_in("zh-simplify", "out/a: b\nx #2.safetensors");
    const char *args[] = {"-q", "--max-steps", "1", "--out", weights, NULL};
    train_torch(0, dir, args);
    const char *out_yaml = path_in("zh-simplify", "out/a: b\nx #2.yaml");
    char *written = read_file(out_yaml, &len);
    assert_non_null(written);
    expect_in(written, "  simplify: \"a: b\\nx #2.simplify.tsv\"\n");
    free(written);
    const char *argv[] = {"./translate", "-t", "1", "-c", out_yaml, "我們", NULL};
    RunResult r = run_program(argv, NULL, 0);
    if (r.status != 0) fail_msg("translate -c %s exited %d: %s", out_yaml, r.status, r.err);
    expect_in(r.err, "1 Traditional character read as Simplified");
    run_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_export_holds_our_tokens_and_batches),
        cmocka_unit_test(test_the_simplify_table_goes_with_the_model),
        cmocka_unit_test(test_export_records_the_sources),
        cmocka_unit_test(test_export_holds_every_epochs_draw),
        cmocka_unit_test(test_export_refuses_a_foreign_folder_and_other_options),
        cmocka_unit_test(test_a_torn_export_can_be_exported_again),
        cmocka_unit_test(test_one_step_matches_the_c_trainer),
        cmocka_unit_test(test_resume_continues_exactly),
        cmocka_unit_test(test_sigint_stops_a_run_started_in_the_background),
        cmocka_unit_test(test_train_torch_refuses_before_training),
        cmocka_unit_test(test_train_torch_full_disk_is_status_4),
        cmocka_unit_test(test_torchrun_two_processes_equal_one_and_translate_runs_the_model),
    };
    return cmocka_run_group_tests_name("PyTorch training (train --export, tools/train_torch.py)", tests, NULL, NULL);
}
