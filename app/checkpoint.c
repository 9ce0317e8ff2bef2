/* checkpoint.c — saving and restoring training state (see checkpoint.h). */
#include "checkpoint.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

#define CHECKPOINT_FORMAT "translate-checkpoint-1"

void snapshots_init(Snapshots *s, int capacity, size_t size)
{
    memset(s, 0, sizeof *s);
    s->capacity = capacity;
    s->size = size;
    if (capacity > 0) s->data = xcalloc((size_t)capacity * size, sizeof(float));
}

void snapshots_free(Snapshots *s)
{
    if (!s) return;
    free(s->data);
    memset(s, 0, sizeof *s);
}

void snapshots_add(Snapshots *s, const float *params)
{
    if (s->capacity == 0) return;
    memcpy(s->data + (size_t)s->next * s->size, params, s->size * sizeof(float));
    s->next = (s->next + 1) % s->capacity;
    if (s->count < s->capacity) s->count++;
}

void snapshots_average(const Snapshots *s, float *out)
{
    ASSERT(s->count >= 1);
    for (size_t i = 0; i < s->size; i++) {
        double sum = 0.0;
        for (int k = 0; k < s->count; k++) sum += s->data[(size_t)k * s->size + i];
        out[i] = (float)(sum / s->count);
    }
}

int checkpoint_save(const char *path, const Trainer *tr, VocabHashes hashes,
                    const TrainProgress *p, Error *err)
{
    const Snapshots *snap = &p->snapshots;
    SafeWriteTensor extra[3] = {{"optimizer.m", 1, {tr->opt.count}, tr->opt.m, DTYPE_F32},
                                {"optimizer.v", 1, {tr->opt.count}, tr->opt.v, DTYPE_F32},
                                {"optimizer.snapshots", 2, {(size_t)snap->capacity, snap->size},
                                 snap->data, DTYPE_F32}};
    char values[10][64];
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
    SafeMeta meta[10] = {{"checkpoint", values[0]}, {"step", values[1]},
                        {"epoch", values[2]},      {"batch", values[3]},
                        {"dropout_rng", values[4]}, {"best_bleu", values[5]},
                        {"elapsed_tokens", values[6]}, {"snapshots", values[7]},
                        {"run_id", values[8]}, {"log_bytes", values[9]}};
    return model_save_with(&tr->model, path, hashes, DTYPE_F32, extra, snap->capacity ? 3 : 2,
                           meta, 10, err);
}

/* A metadata value, or an error naming the missing key. */
static const char *need(const SafeFile *f, const char *key, Error *err)
{
    const char *v = safetensors_meta(f, key);
    if (!v) error_set(err, "%s: not a checkpoint: no \"%s\" in __metadata__", f->path, key);
    return v;
}

/* A float tensor of exactly `count` elements into out. */
static int read_floats(const SafeFile *f, const char *name, float *out, size_t count, Error *err)
{
    const SafeTensor *t = safetensors_find(f, name);
    if (!t || t->numel != count)
        return error_set(err, "%s: tensor '%s' missing or not of %zu elements", f->path, name, count);
    safetensors_to_f32(t, out);
    return 0;
}

int checkpoint_load(const char *path, Trainer *tr, VocabHashes hashes, TrainProgress *p, Error *err)
{
    SafeFile f;
    if (safetensors_open(path, &f, err)) return -1;
    Model saved;
    int status = -1;
    const char *format = need(&f, "checkpoint", err), *step, *epoch, *batch, *rng, *best, *et;
    if (format && strcmp(format, CHECKPOINT_FORMAT) != 0) {
        error_set(err, "%s: checkpoint format %s, expected %s", path, format, CHECKPOINT_FORMAT);
        format = NULL;
    }
    if (!format || !(step = need(&f, "step", err)) || !(epoch = need(&f, "epoch", err)) ||
        !(batch = need(&f, "batch", err)) || !(rng = need(&f, "dropout_rng", err)) ||
        !(best = need(&f, "best_bleu", err)) || !(et = need(&f, "elapsed_tokens", err)))
        goto done;
    if (model_load_from(&saved, &f, &tr->model.arch, hashes, "optimizer.", err)) goto done;
    memcpy(tr->model.params.data, saved.params.data, saved.params.count * sizeof(float));
    model_free(&saved);
    if (read_floats(&f, "optimizer.m", tr->opt.m, tr->opt.count, err) ||
        read_floats(&f, "optimizer.v", tr->opt.v, tr->opt.count, err))
        goto done;
    tr->opt.step = strtol(step, NULL, 10);
    tr->dropout_rng.state = strtoull(rng, NULL, 16);
    p->epoch = (int)strtol(epoch, NULL, 10);
    p->batch = (int)strtol(batch, NULL, 10);
    p->best_bleu = strtod(best, NULL);
    if (sscanf(et, "%lf %lf", &p->elapsed, &p->tokens) != 2) {
        error_set(err, "%s: bad \"elapsed_tokens\" in __metadata__", path);
        goto done;
    }
    /* The snapshots: the config decides how many are kept; a checkpoint
     * written with another number cannot continue the same averaging. */
    Snapshots *snap = &p->snapshots;
    const char *sn = safetensors_meta(&f, "snapshots");
    int capacity = 0, count = 0, next = 0;
    if (sn && sscanf(sn, "%d %d %d", &capacity, &count, &next) != 3) capacity = -1;
    if (capacity != snap->capacity || count < 0 || count > capacity || next < 0 ||
        (capacity && next >= capacity)) {
        error_set(err, "%s: the checkpoint keeps %d epoch snapshots, the config asks for %d "
                       "(train.average_last)", path, capacity, snap->capacity);
        goto done;
    }
    if (capacity) {
        if (read_floats(&f, "optimizer.snapshots", snap->data, (size_t)capacity * snap->size, err))
            goto done;
        snap->count = count;
        snap->next = next;
    }
    /* No run id (a checkpoint from before them): the run goes on under a
     * new one, so a model already on disk counts as someone else's. */
    const char *id = safetensors_meta(&f, "run_id");
    p->run_id[0] = '\0';
    if (id && (strlen(id) != RUN_ID_LENGTH || strspn(id, "0123456789abcdef") != RUN_ID_LENGTH)) {
        error_set(err, "%s: bad \"run_id\" in __metadata__: expected %d hex digits", path, RUN_ID_LENGTH);
        goto done;
    }
    if (id) memcpy(p->run_id, id, RUN_ID_LENGTH + 1);
    const char *lb = safetensors_meta(&f, "log_bytes");
    p->log_bytes = lb ? strtoll(lb, NULL, 10) : -1;
    status = 0;
done:
    safetensors_close(&f);
    return status;
}
