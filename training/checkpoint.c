/* checkpoint.c — saving and restoring training state (see checkpoint.h). */
#include "checkpoint.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <unistd.h>

#include "../common/util.h"

#define CHECKPOINT_FORMAT "translate-checkpoint-1"

/* The tensors a checkpoint holds beside the model's.  (The snapshots are
 * "optimizer.snapshots" for the checkpoints already written, although
 * they are not the optimizer's: model_load_from takes these names, not a
 * prefix, so the name is kept only for them.) */
static const char *const OPTIMIZER_TENSORS[] = {"optimizer.m", "optimizer.v", "optimizer.snapshots",
                                                NULL};

int checkpoint_save(const char *path, const Trainer *tr, VocabHashes hashes,
                    const TrainProgress *p, Error *err)
{
    const Snapshots *snap = &p->snapshots;
    SafeWriteTensor extra[3] = {{"optimizer.m", 1, {tr->opt.count}, tr->opt.m, DTYPE_F32},
                                {"optimizer.v", 1, {tr->opt.count}, tr->opt.v, DTYPE_F32},
                                {"optimizer.snapshots", 2, {(size_t)snap->capacity, snap->size},
                                 snap->data, DTYPE_F32}};
    char values[14][96];
    snprintf(values[0], sizeof values[0], "%s", CHECKPOINT_FORMAT);
    snprintf(values[1], sizeof values[1], "%ld", tr->opt.step);
    snprintf(values[2], sizeof values[2], "%d", p->epoch);
    snprintf(values[3], sizeof values[3], "%d", p->batch);
    snprintf(values[4], sizeof values[4], "%016" PRIx64, tr->dropout_rng.state);
    snprintf(values[5], sizeof values[5], "%.17g", p->best_bleu);
    snprintf(values[6], sizeof values[6], "%.17g %.17g", p->elapsed, p->tokens);
    snprintf(values[7], sizeof values[7], "%d %d %d", snap->capacity, snap->count, snap->next);
    snprintf(values[8], sizeof values[8], "%s", p->run_id);
    snprintf(values[9], sizeof values[9], "%lld", p->log_bytes);
    snprintf(values[10], sizeof values[10], "%016" PRIx64 " %d %" PRIu64 " %zu", p->plan.data_hash,
             p->plan.batch_tokens, p->plan.seed, p->plan.batches);
    SafeMeta meta[14] = {{"checkpoint", values[0]}, {"step", values[1]},
                        {"epoch", values[2]},      {"batch", values[3]},
                        {"dropout_rng", values[4]}, {"best_bleu", values[5]},
                        {"elapsed_tokens", values[6]}, {"snapshots", values[7]},
                        {"run_id", values[8]}, {"log_bytes", values[9]}};
    size_t n_meta = 10;
    if (p->plan.known) meta[n_meta++] = (SafeMeta){"batch_plan", values[10]};
    snprintf(values[11], sizeof values[11], "%s", p->init_run);
    if (p->init_run[0]) meta[n_meta++] = (SafeMeta){"init_run", values[11]};
    snprintf(values[12], sizeof values[12], "%ld", p->scored_step);
    meta[n_meta++] = (SafeMeta){"scored_step", values[12]};
    snprintf(values[13], sizeof values[13], "%016" PRIx64, p->dev_hash);
    if (p->dev_hash) meta[n_meta++] = (SafeMeta){"dev_hash", values[13]};
    /* A trainer killed while writing a checkpoint leaves its temporary
     * file (a full checkpoint); the next save clears it before writing its
     * own (output_file_open), so kills and resumes never pile them up. */
    return model_save_with(&tr->model, path, hashes, DTYPE_F32, extra, snap->capacity ? 3 : 2, meta, n_meta,
                           err);
}

/* ---- reading: every value checked, as the config is ------------------- */

/* A metadata value, or an error naming the missing key. */
static const char *need(const SafeFile *f, const char *key, Error *err)
{
    const char *v = safetensors_meta(f, key);
    if (!v) error_set(err, "%s: not a checkpoint: no \"%s\" in __metadata__", f->path, key);
    return v;
}

bool checkpoint_is_run_id(const char *s)
{
    return strlen(s) == CHECKPOINT_RUN_ID_LENGTH && strspn(s, "0123456789abcdef") == CHECKPOINT_RUN_ID_LENGTH;
}

void checkpoint_new_run_id(char id[CHECKPOINT_RUN_ID_LENGTH + 1])
{
    uint64_t bits;
    if (getrandom(&bits, sizeof bits, 0) != (ssize_t)sizeof bits) { /* no entropy: time and pid */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t seed[3] = {(uint64_t)ts.tv_sec, (uint64_t)ts.tv_nsec, (uint64_t)getpid()};
        bits = fnv1a(FNV_OFFSET_STANDARD, seed, sizeof seed);
    }
    snprintf(id, CHECKPOINT_RUN_ID_LENGTH + 1, "%016" PRIx64, bits);
}

/* "path: bad "key" in __metadata__: 'value' (expected ...)", the value
 * cut short and with control characters shown as '?', so it stays one line. */
static int bad(const SafeFile *f, const char *key, const char *value, const char *expected, Error *err)
{
    char shown[41];
    size_t n = 0;
    for (; value[n] && n < sizeof shown - 1; n++)
        shown[n] = (unsigned char)value[n] < 0x20 || value[n] == 0x7f ? '?' : value[n];
    shown[n] = '\0';
    return error_set(err, "%s: bad \"%s\" in __metadata__: '%s%s' (expected %s)", f->path, key, shown,
                     value[n] ? "..." : "", expected);
}

/* The next space-separated field of *s (at most `size` - 1 bytes), or
 * false when there is none or it is too long. */
static bool next_field(const char **s, char *out, size_t size)
{
    size_t n = strcspn(*s, " ");
    if (n == 0 || n >= size) return false;
    memcpy(out, *s, n);
    out[n] = '\0';
    *s += n + ((*s)[n] == ' ');
    return true;
}

/* Strict numbers: all of s, decimal digits (an optional '-' for signed
 * ones), no spaces, no '+', no hex, in range; strtol alone reads "abc" as 0. */
static bool parse_signed(const char *s, long long lo, long long hi, long long *out)
{
    const char *digits = s + (s[0] == '-');
    if (!*digits || strspn(digits, "0123456789") != strlen(digits)) return false;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno || v < lo || v > hi) return false;
    *out = v;
    return true;
}

static bool parse_unsigned(const char *s, uint64_t *out)
{
    if (!*s || strspn(s, "0123456789") != strlen(s)) return false;
    errno = 0;
    *out = strtoull(s, NULL, 10);
    return errno == 0;
}

static bool parse_hex64(const char *s, uint64_t *out)
{
    if (strlen(s) != 16 || strspn(s, "0123456789abcdef") != 16) return false;
    *out = strtoull(s, NULL, 16);
    return true;
}

/* A finite decimal number >= lo (no "inf", "nan" or hex). */
static bool parse_real(const char *s, double lo, double *out)
{
    if (!*s || strspn(s, "0123456789.eE+-") != strlen(s)) return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno || !isfinite(v) || v < lo) return false;
    *out = v;
    return true;
}

/* The progress metadata into tr and p; the first bad value is the error. */
static int read_progress(const SafeFile *f, Trainer *tr, TrainProgress *p, Error *err)
{
    const char *v;
    long long n;
    uint64_t u;
    char field[32];
    if (!(v = need(f, "step", err))) return -1;
    if (!parse_signed(v, 0, LONG_MAX, &n)) return bad(f, "step", v, "an integer >= 0", err);
    tr->opt.step = (long)n;
    if (!(v = need(f, "epoch", err))) return -1;
    if (!parse_signed(v, 0, INT_MAX, &n)) return bad(f, "epoch", v, "an integer >= 0", err);
    p->epoch = (int)n;
    if (!(v = need(f, "batch", err))) return -1;
    if (!parse_signed(v, 0, INT_MAX, &n)) return bad(f, "batch", v, "an integer >= 0", err);
    p->batch = (int)n;
    if (!(v = need(f, "dropout_rng", err))) return -1;
    if (!parse_hex64(v, &u)) return bad(f, "dropout_rng", v, "16 hex digits", err);
    tr->dropout_rng.state = u;
    if (!(v = need(f, "best_bleu", err))) return -1;
    /* Before bleu_score was capped, a perfect dev score was written as
     * 100.00000000000004: such a checkpoint resumes, its score read as 100. */
    if (!parse_real(v, -1.0, &p->best_bleu) || p->best_bleu > 100.0 + 1e-9 ||
        (p->best_bleu < 0.0 && p->best_bleu != -1.0))
        return bad(f, "best_bleu", v, "a BLEU score from 0 to 100, or -1 before the first one", err);
    if (p->best_bleu > 100.0) p->best_bleu = 100.0;
    if (!(v = need(f, "elapsed_tokens", err))) return -1;
    const char *rest = v;
    if (!next_field(&rest, field, sizeof field) || !parse_real(field, 0.0, &p->elapsed) ||
        !next_field(&rest, field, sizeof field) || !parse_real(field, 0.0, &p->tokens) || *rest)
        return bad(f, "elapsed_tokens", v, "seconds and tokens, two numbers >= 0", err);
    /* No run id (a checkpoint from before them): the run goes on under a
     * new one, so a model already on disk counts as someone else's. */
    p->run_id[0] = '\0';
    if ((v = safetensors_meta(f, "run_id"))) {
        if (!checkpoint_is_run_id(v)) return bad(f, "run_id", v, "16 hex digits", err);
        memcpy(p->run_id, v, CHECKPOINT_RUN_ID_LENGTH + 1);
    }
    p->init_run[0] = '\0';
    if ((v = safetensors_meta(f, "init_run"))) {
        if (!checkpoint_is_run_id(v)) return bad(f, "init_run", v, "16 hex digits", err);
        memcpy(p->init_run, v, CHECKPOINT_RUN_ID_LENGTH + 1);
    }
    /* Both optional: a checkpoint from before them reads as "none". */
    p->scored_step = 0;
    if ((v = safetensors_meta(f, "scored_step"))) {
        if (!parse_signed(v, 0, LONG_MAX, &n)) return bad(f, "scored_step", v, "an integer >= 0", err);
        p->scored_step = (long)n;
    }
    p->dev_hash = 0;
    if ((v = safetensors_meta(f, "dev_hash")) && !parse_hex64(v, &p->dev_hash))
        return bad(f, "dev_hash", v, "16 hex digits", err);
    p->log_bytes = -1;
    if ((v = safetensors_meta(f, "log_bytes")) && !parse_signed(v, -1, LLONG_MAX, &p->log_bytes))
        return bad(f, "log_bytes", v, "an integer >= -1", err);
    p->plan = (BatchPlan){0};
    if ((v = safetensors_meta(f, "batch_plan"))) {
        rest = v;
        uint64_t batches;
        if (!next_field(&rest, field, sizeof field) || !parse_hex64(field, &p->plan.data_hash) ||
            !next_field(&rest, field, sizeof field) || !parse_signed(field, 1, INT_MAX, &n) ||
            !next_field(&rest, field, sizeof field) || !parse_unsigned(field, &p->plan.seed) ||
            !next_field(&rest, field, sizeof field) || !parse_unsigned(field, &batches) ||
            batches > SIZE_MAX || *rest)
            return bad(f, "batch_plan", v, "a data hash, batch_tokens, seed and batch count", err);
        p->plan.known = true;
        p->plan.batch_tokens = (int)n;
        p->plan.batches = (size_t)batches;
    }
    return 0;
}

/* A float tensor of exactly `count` elements into out, every value finite
 * (and >= 0 when `non_negative`: AdamW's second moments are squares). */
static int read_floats(const SafeFile *f, const char *name, float *out, size_t count,
                       bool non_negative, Error *err)
{
    const SafeTensor *t = safetensors_find(f, name);
    if (!t || t->numel != count)
        return error_set(err, "%s: tensor '%s' missing or not of %zu elements", f->path, name, count);
    if (safetensors_to_f32(f, t, out, err)) return -1;
    for (size_t i = 0; i < count; i++) {
        if (!isfinite(out[i]))
            return error_set(err, "%s: tensor '%s': element %zu is %f", f->path, name, i, (double)out[i]);
        if (non_negative && out[i] < 0.0f)
            return error_set(err, "%s: tensor '%s': element %zu is %g, a second moment must be >= 0",
                             f->path, name, i, (double)out[i]);
    }
    return 0;
}

/* The snapshots: the config decides how many are kept; a checkpoint
 * written with another number cannot continue the same averaging. */
static int read_snapshots(const SafeFile *f, Snapshots *snap, Error *err)
{
    const char *v = safetensors_meta(f, "snapshots");
    long long capacity = 0, count = 0, next = 0;
    char field[32];
    const char *rest = v;
    if (v && (!next_field(&rest, field, sizeof field) || !parse_signed(field, 0, INT_MAX, &capacity) ||
              !next_field(&rest, field, sizeof field) || !parse_signed(field, 0, capacity, &count) ||
              !next_field(&rest, field, sizeof field) || !parse_signed(field, 0, INT_MAX, &next) ||
              *rest || (capacity && next >= capacity) || (!capacity && next)))
        return bad(f, "snapshots", v, "capacity, count <= capacity, next slot < capacity", err);
    if (capacity != snap->capacity)
        return error_set(err, "%s: the checkpoint keeps %lld epoch snapshots, the config asks for %d "
                              "(train.average_last)", f->path, capacity, snap->capacity);
    if (capacity) {
        if (read_floats(f, "optimizer.snapshots", snap->data, (size_t)capacity * snap->size, false, err))
            return -1;
        snap->count = (int)count;
        snap->next = (int)next;
    }
    return 0;
}

int checkpoint_load(const char *path, Trainer *tr, VocabHashes hashes, TrainProgress *p, Error *err)
{
    SafeFile f;
    /* the model's tensors and the optimizer's (m, v, snapshots) */
    if (safetensors_open_limited(path, model_header_limit(&tr->model.arch, 3), &f, err)) return -1;
    Model saved;
    int status = -1;
    const char *format = need(&f, "checkpoint", err);
    if (format && strcmp(format, CHECKPOINT_FORMAT) != 0) {
        bad(&f, "checkpoint", format, CHECKPOINT_FORMAT, err);
        format = NULL;
    }
    if (!format || read_progress(&f, tr, p, err)) goto done;
    if (model_load_from(&saved, &f, &tr->model.arch, hashes, OPTIMIZER_TENSORS, err)) goto done;
    memcpy(tr->model.params.data, saved.params.data, saved.params.count * sizeof(float));
    model_free(&saved);
    if (read_floats(&f, "optimizer.m", tr->opt.m, tr->opt.count, false, err) ||
        read_floats(&f, "optimizer.v", tr->opt.v, tr->opt.count, true, err) ||
        read_snapshots(&f, &p->snapshots, err))
        goto done;
    status = 0;
done:
    safetensors_close(&f);
    return status;
}
