/* model.c — loading, saving and randomly initialising a Model (see
 * model.h).  The descriptor list from params.h drives all three. */
#include "model.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "gemm_f16.h"
#include "safetensors.h"
#include "vector.h"

/* ---- metadata: the architecture as strings ----------------------------- */

enum { META_COUNT = 16 };

typedef struct {
    char key[32];
    char value[32];
} MetaField;

/* The architecture and vocabulary hashes as metadata fields, in a fixed
 * order.  Returns the number of fields. */
static int describe_meta(const ModelArch *a, VocabHashes h, MetaField f[META_COUNT])
{
    int n = 0;
#define FIELD(k, ...) (snprintf(f[n].key, sizeof f[n].key, "%s", k), \
                       snprintf(f[n].value, sizeof f[n].value, __VA_ARGS__), n++)
    FIELD("format", "%s", MODEL_FORMAT);
    FIELD("format_version", "%s", MODEL_FORMAT_VERSION);
    FIELD("d_model", "%d", a->d_model);
    FIELD("heads", "%d", a->heads);
    FIELD("encoder_layers", "%d", a->encoder_layers);
    FIELD("decoder_layers", "%d", a->decoder_layers);
    FIELD("d_ff", "%d", a->d_ff);
    FIELD("activation", "%s", arch_activation_name(a->activation));
    FIELD("norm", "%s", a->norm_first ? "pre" : "post");
    FIELD("max_len", "%d", a->max_len);
    FIELD("scale_attention", "%s", a->scale_attention ? "true" : "false");
    FIELD("tied_output_embedding", "%s", a->tied_output ? "true" : "false");
    FIELD("source_vocab_size", "%d", a->src_vocab);
    FIELD("target_vocab_size", "%d", a->tgt_vocab);
    FIELD("source_vocab_hash", "%016" PRIx64, h.source);
    FIELD("target_vocab_hash", "%016" PRIx64, h.target);
#undef FIELD
    ASSERT(n == META_COUNT);
    return n;
}

/* Every field must be in the file and equal: the first difference is the
 * error, phrased so the user knows which side says what. */
static int check_meta(const SafeFile *file, const ModelArch *arch, VocabHashes hashes, Error *err)
{
    const char *path = file->path;
    MetaField want[META_COUNT];
    int n = describe_meta(arch, hashes, want);
    const char *format = safetensors_meta(file, "format");
    if (!format || strcmp(format, MODEL_FORMAT) != 0)
        return error_set(err, "%s: not a translate model: __metadata__ has no \"format\": \"%s\"",
                         path, MODEL_FORMAT);
    for (int i = 1; i < n; i++) {
        const char *have = safetensors_meta(file, want[i].key);
        if (!have)
            return error_set(err, "%s: __metadata__ has no \"%s\"", path, want[i].key);
        if (strcmp(have, want[i].value) == 0) continue;
        /* The format's version is this program's, not the config's. */
        if (strcmp(want[i].key, "format_version") == 0)
            return error_set(err, "%s: weights format version %s; this translate reads version %s (written by "
                                  "another version of translate?)",
                             path, have, want[i].value);
        /* The sizes and hashes come from the vocabulary files, not the
         * config's keys: said so, naming the config key of the file
         * (en-zh's config with zh-en's vocabulary said "config disagrees:
         * target_vocab_size is 4286", a key the config does not have). */
        if (!strstr(want[i].key, "vocab"))
            return error_set(err, "%s: config disagrees with the weights: %s is %s there but %s in the file",
                             path, want[i].key, want[i].value, have);
        const char *side = strncmp(want[i].key, "source", 6) == 0 ? "source" : "target";
        if (strstr(want[i].key, "size"))
            return error_set(err, "%s: the %s vocabulary (model.%s_vocab) disagrees with the weights: it has %s "
                                  "tokens, the weights were trained with %s",
                             path, side, side, want[i].value, have);
        return error_set(err, "%s: the %s vocabulary (model.%s_vocab) disagrees with the weights: as many "
                              "tokens, but not the ones they were trained with (hash %s, the weights' %s)",
                         path, side, side, want[i].value, have);
    }
    return 0;
}

/* ---- loading ------------------------------------------------------------- */

/* vec_all_finite on float16 bits: exponent all ones (0x7c00) is Inf or NaN.
 * The embeddings a float16 model keeps as stored go through it at each
 * start of translate (the matrices are checked as they are packed,
 * gemm_f16_pack); it was every matrix too (17.9 MB for en-zh), measured
 * so: compiled also for AVX2 and AVX-512,
 * where the same loop takes 16 or 32 values per instruction instead of 8
 * (x86-64's baseline SSE2).  Over en-zh's file, its pages already mapped,
 * side by side on a loaded Xeon: 2.4 ms (SSE2), 1.8 (AVX2), 1.45
 * (AVX-512); the same verdict, it is the same loop.  It is also the first
 * touch of the mapped pages, which a translation would otherwise pay for:
 * skipped (a hack, on an Intel Xeon, hyperfine, 60 runs each), the
 * empty-sentence run bench/run.sh counts as start-up took 4.3 ms instead
 * of 5.4, and ./translate "I love china" 11.4 ms either way. */
#define ALL_FINITE_F16_BODY                                                                        \
    {                                                                                              \
        uint16_t bad = 0;                                                                          \
        for (size_t i = 0; i < n; i++) bad |= (x[i] & 0x7c00u) == 0x7c00u;                         \
        return !bad;                                                                               \
    }
static bool all_finite_f16_plain(const uint16_t *x, size_t n) ALL_FINITE_F16_BODY
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) static bool all_finite_f16_avx2(const uint16_t *x, size_t n)
    ALL_FINITE_F16_BODY
__attribute__((target("avx512bw"))) static bool all_finite_f16_avx512(const uint16_t *x, size_t n)
    ALL_FINITE_F16_BODY
#endif

static bool all_finite_f16(const uint16_t *x, size_t n)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx512bw")) return all_finite_f16_avx512(x, n);
    if (__builtin_cpu_supports("avx2")) return all_finite_f16_avx2(x, n);
#endif
    return all_finite_f16_plain(x, n);
}

static int not_finite(const char *path, const ParamSpec *spec, size_t i, bool nan, Error *err)
{
    return error_set(err, "%s: tensor '%s' holds %s at index %zu", path, spec->name,
                     nan ? "NaN" : "Inf", i);
}

/* The first Inf or NaN of n float16 values (x[0] being value `first` of
 * the tensor), as an error; 0 if there is none. */
static int half_not_finite(const char *path, const ParamSpec *spec, const uint16_t *x, size_t first, size_t n,
                           Error *err)
{
    for (size_t i = 0; i < n; i++)
        if ((x[i] & 0x7c00u) == 0x7c00u) return not_finite(path, spec, first + i, x[i] & 0x3ffu, err);
    return 0;
}

/* Rows of a matrix read at a time to be packed: a whole number of panels,
 * ~64 KiB at K = 512. */
enum { PACK_ROWS = 4 * GEMM_F16_PANEL };

/* A packed tensor's values read from the file PACK_ROWS rows at a time
 * and packed into its panels (gemm_f16_pack, which also checks them).
 * Read, not taken from the mapping: packed, its values are copied anyway,
 * and a read fills no page tables (a file just written sits in 4 KiB
 * pages: 4,360 of them for en-zh cost ~1 ms to map, safetensors.c), and
 * leaves what it packs from in the cache. */
static int load_matrix_half(const SafeFile *file, const SafeTensor *t, const ParamSpec *spec, Error *err)
{
    int N = (int)spec->shape[0], K = (int)spec->shape[1], status = 0;
    uint16_t *rows = xmalloc((size_t)PACK_ROWS * (K + 1) * sizeof *rows);
    for (int j0 = 0; status == 0 && j0 < N; j0 += PACK_ROWS) {
        int n = N - j0 < PACK_ROWS ? N - j0 : PACK_ROWS;
        size_t first = (size_t)j0 * K, count = (size_t)n * K;
        status = safetensors_read_part(file, t, first * sizeof *rows, count * sizeof *rows, rows, err);
        if (status == 0 && !gemm_f16_pack(*spec->half_slot + first, rows, n, K))
            status = half_not_finite(file->path, spec, rows, first, count, err);
    }
    free(rows);
    return status;
}

/* Values checked at a time of a tensor read to be checked. */
enum { CHECK_VALUES = 1 << 15 };

/* A mapped tensor's values checked as read from the file, CHECK_VALUES at a
 * time, not through the mapping: the mapping is read only once translate
 * watches it (app/translator.c), so a file truncated while the model loads
 * is an Error, not a SIGBUS in the middle of the check; and only the
 * embedding rows a translation looks up are ever mapped into memory. */
static int check_half_read(const SafeFile *file, const SafeTensor *t, const ParamSpec *spec, Error *err)
{
    uint16_t *part = xmalloc(CHECK_VALUES * sizeof *part);
    int status = 0;
    for (size_t first = 0; status == 0 && first < spec->numel; first += CHECK_VALUES) {
        size_t n = spec->numel - first < CHECK_VALUES ? spec->numel - first : CHECK_VALUES;
        status = safetensors_read_part(file, t, first * sizeof *part, n * sizeof *part, part, err);
        if (status == 0 && !all_finite_f16(part, n)) status = half_not_finite(file->path, spec, part, first, n, err);
    }
    free(part);
    return status;
}

/* spec's float16 slot: packed (load_matrix_half), or pointed into the
 * mapped file (`map`) and checked as read (check_half_read), or read into
 * the block as stored (the file's tensor is F16) and checked there. */
static int load_half(const SafeFile *file, const SafeTensor *t, const ParamSpec *spec,
                     unsigned char *map, Error *err)
{
    if (spec->packed) return load_matrix_half(file, t, spec, err);
    if (map) {
        *spec->half_slot = (uint16_t *)(map + t->offset);
        return check_half_read(file, t, spec, err);
    }
    uint16_t *x = *spec->half_slot;
    if (safetensors_read_raw(file, t, x, err)) return -1;
    if (all_finite_f16(x, spec->numel)) return 0;
    return half_not_finite(file->path, spec, x, 0, spec->numel, err);
}

static int load_tensor(const SafeFile *file, const SafeTensor *t, const ParamSpec *spec,
                       bool half, unsigned char *map, Error *err)
{
    const char *path = file->path;
    bool shape_ok = t->ndim == spec->ndim;
    for (int d = 0; shape_ok && d < spec->ndim; d++) shape_ok = t->shape[d] == spec->shape[d];
    if (!shape_ok) {
        if (spec->ndim == 2)
            return error_set(err, "%s: tensor '%s' should have shape [%zu, %zu]", path, spec->name,
                             spec->shape[0], spec->shape[1]);
        return error_set(err, "%s: tensor '%s' should have shape [%zu]", path, spec->name,
                         spec->shape[0]);
    }
    if (half && spec->half_slot) return load_half(file, t, spec, map, err);
    if (safetensors_to_f32(file, t, spec->data, err)) return -1;
    if (vec_all_finite(spec->data, spec->numel)) return 0;
    for (size_t i = 0; i < spec->numel; i++)
        if (!isfinite(spec->data[i])) return not_finite(path, spec, i, isnan(spec->data[i]), err);
    return 0;
}

/* The tensor named `name`, the i-th of the descriptor list: looked for
 * first at place i, where our writer puts it (a file's tensors are sorted
 * by offset, and we write them in params.h's order), so that a load
 * compares ~100 names, not ~100 x 100 / 2 (1.5% of start-up, perf). */
static const SafeTensor *find_tensor(const SafeFile *file, size_t i, const char *name)
{
    if (i < file->count && strcmp(file->tensors[i].name, name) == 0) return &file->tensors[i];
    return safetensors_find(file, name);
}

/* Can `file` be kept float16: is every matrix and embedding of `arch` in
 * it an F16 tensor?  (A missing or misshapen one is reported by the load.)
 * *aligned: and does each start on an even byte, so that the mapped file
 * can be read as uint16_t in place (our writer aligns every tensor to 8)? */
static bool all_half(const SafeFile *file, const ModelArch *arch, bool *aligned)
{
    ParamSpec *specs;
    size_t n = params_layout(arch, &specs);
    bool half = true;
    *aligned = true;
    for (size_t i = 0; half && i < n; i++) {
        if (specs[i].kind != PARAM_MATRIX && specs[i].kind != PARAM_EMBEDDING) continue;
        const SafeTensor *t = find_tensor(file, i, specs[i].name);
        half = t && t->dtype == DTYPE_F16;
        if (half && t->offset % 2) *aligned = false;
    }
    free(specs);
    return half;
}

/* How a load keeps the matrices: widened to float32, float16 read into a
 * block, or float16 in the mapped file. */
typedef enum { KEEP_F32, KEEP_F16_READ, KEEP_F16_MAPPED } Keep;

/* model_load_from, keeping the matrices as `keep` says. */
static int load_from(Model *model, const SafeFile *file, const ModelArch *arch, VocabHashes hashes,
                     const char *const *extra_names, Keep keep, Error *err)
{
    bool half = keep != KEEP_F32;
    memset(model, 0, sizeof *model);
    const char *path = file->path;
    int status = check_meta(file, arch, hashes, err);
    ParamSpec *specs = NULL;
    size_t count = 0;
    /* Each parameter takes at least 2 bytes of the file (F16/BF16): a file
     * too small to hold the architecture its metadata claims is refused
     * before that much memory is allocated. */
    size_t needed = status == 0 ? params_count(arch) : 0;
    if (status == 0 && needed > file->file_size / 2)
        status = error_set(err, "%s: %zu bytes cannot hold the %zu parameters of this architecture",
                           path, file->file_size, needed);
    if (status == 0) {
        model->arch = *arch;
        if (half) params_alloc_half(&model->params, arch, keep == KEEP_F16_READ);
        else params_alloc(&model->params, arch);
        /* Mapped, the embeddings are read in the file's pages: no zeroed
         * block to fill, no copy (they were 55% of start-up's CPU time,
         * perf).  The matrices (and a tied tgt_embed) are read all the
         * same, to be packed (load_matrix_half). */
        unsigned char *map = keep == KEEP_F16_MAPPED ? safetensors_map(file) : NULL;
        if (keep == KEEP_F16_MAPPED && !map) { /* cannot map: read instead */
            params_free(&model->params);
            params_alloc_half(&model->params, arch, true);
        }
        model->params.map = map;
        model->params.map_bytes = map ? file->file_size : 0;
        count = params_describe(arch, &model->params, &specs);
        for (size_t i = 0; status == 0 && i < count; i++) {
            const SafeTensor *t = find_tensor(file, i, specs[i].name);
            status = t ? load_tensor(file, t, &specs[i], half, map, err)
                       : error_set(err, "%s: missing tensor '%s'", path, specs[i].name);
        }
    }
    /* Every tensor of the file must be one we know: anything else means
     * the file belongs to another model (e.g. untied vs tied output). */
    for (size_t i = 0; status == 0 && i < file->count; i++) {
        const char *name = file->tensors[i].name;
        bool extra = false;
        for (size_t k = 0; extra_names && extra_names[k] && !extra; k++)
            extra = strcmp(name, extra_names[k]) == 0;
        if (extra) continue;
        size_t j = i < count && strcmp(specs[i].name, name) == 0 ? i : 0; /* as find_tensor */
        while (j < count && strcmp(specs[j].name, name) != 0) j++;
        if (j == count)
            status = error_set(err, "%s: unexpected tensor '%s' (not part of this architecture)",
                               path, name);
    }
    free(specs);
    if (status) model_free(model);
    return status;
}

/* A header entry is ~150 bytes even for long names and huge shapes
 * ("transformer.decoder.layers.11.multihead_attn.out_proj.weight": {"dtype":
 * "F32", "shape": [8192, 8192], "data_offsets": [...]}); our metadata is
 * ~400 bytes.  The shipped models' headers are 11 KB for 97 tensors. */
#define HEADER_BYTES_PER_TENSOR 512
#define HEADER_BYTES_OF_METADATA 65536

size_t model_header_limit(const ModelArch *arch, size_t extra_tensors)
{
    return (params_tensor_count(arch) + extra_tensors) * HEADER_BYTES_PER_TENSOR +
           HEADER_BYTES_OF_METADATA;
}

int model_load_from(Model *model, const SafeFile *file, const ModelArch *arch,
                    VocabHashes hashes, const char *const *extra_names, Error *err)
{
    return load_from(model, file, arch, hashes, extra_names, KEEP_F32, err);
}

static int load_path(Model *model, const char *path, const ModelArch *arch, VocabHashes hashes,
                     bool inference, Error *err)
{
    memset(model, 0, sizeof *model);
    SafeFile file;
    if (safetensors_open_limited(path, model_header_limit(arch, 0), &file, err)) return -1;
    bool aligned;
    /* Float16 stays float16 only where a kernel multiplies it as it is
     * (F16C, gemm_f16.h).  Elsewhere (aarch64, WebAssembly) every product
     * would widen every weight again: in the web page that widening was
     * 45% of a translation's time (docs/web.md), so the weights are
     * widened once here instead, at twice the memory. */
    bool f16_kernel = strcmp(gemm_f16_kernel_name(), "generic") != 0;
    /* The packed matrices are addressed by rows as the file's (gemm_f16.h):
     * W_K and W_V start at rows D and 2D, which a panel boundary must be. */
    bool panels_fit = arch->d_model % GEMM_F16_PANEL == 0;
    Keep keep = !inference || !f16_kernel || !panels_fit || !all_half(&file, arch, &aligned) ? KEEP_F32
                : aligned                                      ? KEEP_F16_MAPPED
                                                               : KEEP_F16_READ;
    int status = load_from(model, &file, arch, hashes, NULL, keep, err);
    safetensors_close(&file);
    return status;
}

int model_load(Model *model, const char *path, const ModelArch *arch, VocabHashes hashes,
               Error *err)
{
    return load_path(model, path, arch, hashes, false, err);
}

int model_load_inference(Model *model, const char *path, const ModelArch *arch, VocabHashes hashes,
                         Error *err)
{
    return load_path(model, path, arch, hashes, true, err);
}

bool model_is_half(const Model *model) { return model->params.half_count > 0; }

bool model_file_replaceable(const char *path)
{
    if (!safetensors_looks_like(path)) return false;
    SafeFile f;
    Error ignored = {{0}};
    if (safetensors_open(path, &f, &ignored)) return true; /* a broken model */
    bool ours = !safetensors_meta(&f, "checkpoint") && !safetensors_meta(&f, "export_id");
    safetensors_close(&f);
    return ours;
}

/* ---- saving -------------------------------------------------------------- */

int model_save_with(const Model *model, const char *path, VocabHashes hashes, Dtype dtype,
                    const SafeWriteTensor *extra, size_t extra_count, const SafeMeta *extra_meta,
                    size_t extra_meta_count, Error *err)
{
    ASSERT(!model_is_half(model)); /* an inference-only model is never saved */
    Params params = model->params; /* a copy whose fields the descriptor may point at */
    ParamSpec *specs;
    size_t count = params_describe(&model->arch, &params, &specs);
    SafeWriteTensor *tensors = xcalloc(count + extra_count, sizeof *tensors);
    for (size_t i = 0; i < count; i++) {
        tensors[i].name = specs[i].name;
        tensors[i].ndim = specs[i].ndim;
        tensors[i].shape[0] = specs[i].shape[0];
        tensors[i].shape[1] = specs[i].shape[1];
        tensors[i].data = specs[i].data;
        tensors[i].dtype = dtype;
    }
    for (size_t i = 0; i < extra_count; i++) tensors[count + i] = extra[i];
    MetaField fields[META_COUNT];
    int n = describe_meta(&model->arch, hashes, fields);
    SafeMeta *meta = xcalloc((size_t)n + extra_meta_count, sizeof *meta);
    for (int i = 0; i < n; i++) {
        meta[i].key = fields[i].key;
        meta[i].value = fields[i].value;
    }
    for (size_t i = 0; i < extra_meta_count; i++) meta[n + i] = extra_meta[i];
    int status = safetensors_write(path, tensors, count + extra_count, meta,
                                   (size_t)n + extra_meta_count, err);
    free(meta);
    free(tensors);
    free(specs);
    return status;
}

int model_save(const Model *model, const char *path, VocabHashes hashes, Error *err)
{
    return model_save_with(model, path, hashes, DTYPE_F32, NULL, 0, NULL, 0, err);
}

/* ---- random initialisation ---------------------------------------------- */

static void fill_uniform(float *x, size_t n, float lo, float hi, Rng *rng)
{
    for (size_t i = 0; i < n; i++) x[i] = lo + (hi - lo) * rng_uniform(rng);
}

/* An attention's packed [3D, D] input projection: its first D rows make Q. */
static bool is_in_projection(const ParamSpec *s)
{
    const char *suffix = "in_proj_weight";
    size_t n = strlen(s->name), k = strlen(suffix);
    return s->kind == PARAM_MATRIX && n >= k && strcmp(s->name + n - k, suffix) == 0;
}

static void init(Model *model, const ModelArch *arch, uint64_t seed, bool for_training, QueryInit queries)
{
    memset(model, 0, sizeof *model);
    model->arch = *arch;
    params_alloc(&model->params, arch);
    ParamSpec *specs;
    size_t count = params_describe(arch, &model->params, &specs);
    Rng rng;
    rng_seed(&rng, seed);
    for (size_t i = 0; i < count; i++) {
        ParamSpec *s = &specs[i];
        switch (s->kind) {
        case PARAM_EMBEDDING: {
            float std = 1.0f / sqrtf((float)arch->d_model);
            for (size_t j = 0; j < s->numel; j++) s->data[j] = std * rng_normal(&rng);
            break;
        }
        case PARAM_MATRIX: {
            /* Xavier/Glorot uniform, as torch.nn.Transformer._reset_parameters. */
            float bound = sqrtf(6.0f / (float)(s->shape[0] + s->shape[1]));
            fill_uniform(s->data, s->numel, -bound, bound, &rng);
            if (queries == QUERY_INIT_T5 && is_in_projection(s)) {
                /* W_Q √d_k smaller: Var(q·k) shrinks by d_k, as ÷√d_k would
                 * do to the scores at step 0 (T5, Raffel et al. 2020). */
                float shrink = 1.0f / sqrtf((float)(arch->d_model / arch->heads));
                for (size_t j = 0; j < (size_t)arch->d_model * (size_t)arch->d_model; j++) s->data[j] *= shrink;
            }
            break;
        }
        case PARAM_NORM_WEIGHT:
            if (for_training)
                for (size_t j = 0; j < s->numel; j++) s->data[j] = 1.0f;
            else
                fill_uniform(s->data, s->numel, 0.9f, 1.1f, &rng);
            break;
        case PARAM_BIAS: /* training: 0, as params_alloc left them */
            if (!for_training) fill_uniform(s->data, s->numel, -0.1f, 0.1f, &rng);
            break;
        }
    }
    free(specs);
}

void model_init_random(Model *model, const ModelArch *arch, uint64_t seed)
{
    init(model, arch, seed, false, QUERY_INIT_XAVIER);
}

void model_init_training(Model *model, const ModelArch *arch, uint64_t seed, QueryInit queries)
{
    init(model, arch, seed, true, queries);
}

void model_free(Model *model)
{
    if (!model) return;
    params_free(&model->params);
    memset(model, 0, sizeof *model);
}
