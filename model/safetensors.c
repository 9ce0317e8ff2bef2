/* safetensors.c — reading, validating and writing safetensors files.
 *
 * Reading keeps the file open and reads each tensor with one pread(2)
 * when it is converted, straight into the caller's float32 buffer (F16 and
 * BF16 are widened there in place, see safetensors_to_f32).  Widening, it
 * once mapped the file instead: a file truncated while a model loaded then
 * killed the process with SIGBUS; pread returns a short count instead,
 * which is an Error, and costs the same when every value is converted
 * anyway.  Inference on a float16 file converts nothing (model.h:
 * model_load_inference keeps its matrices float16): there reading meant
 * zeroing a 16 MB block and copying the file into it, 55% of the CPU time
 * of `translate` up to its first sentence (perf, issue 12), so it maps the
 * file (safetensors_map) and reads the embeddings in place, and the
 * matrices once, as it packs them for the products (gemm_f16.h), after the
 * header has been checked against the file's size.  The window for SIGBUS is then
 * a file truncated in place while translate runs; our own writers never do
 * that (they rename a new file over the old, which stays whole), and
 * app/translator.c turns it, and any change in place, into an error
 * (translator_weights_changed).  What a
 * mapping costs depends on how the kernel caches the file, not on us: a
 * file just written (git checkout, our writer) sits in 4 KiB pages, and
 * en-zh's 4,360 page mappings took ~1 ms to make and ~0.2 ms to undo at
 * exit; read from disk (Linux 6.18, ext4) it sits in large folios, and
 * the same took ~0.25 and ~0.03 ms (issue 12: load 1.7 -> 1.0 ms CPU).
 * madvise(MADV_HUGEPAGE) changed neither (cached 4 KiB pages stay so, and
 * a read from disk makes large folios without it).  Before
 * anything is handed out, every claim of the JSON header is checked
 * against the file (sizes, dtypes, shapes, offsets), so a truncated or
 * lying file is an Error, not a crash later in a kernel.
 *
 * Deliberate choices:
 *  - Gaps between tensors and trailing bytes after the last one are
 *    accepted (the reference reader rejects them); overlaps are not, since
 *    two tensors sharing bytes is always a broken writer.
 *  - JSON numbers in "shape" and "data_offsets" must be whole numbers in
 *    [0, 2^53] (cJSON stores numbers as doubles, so larger values would not
 *    be exact).  cJSON does not keep the number's text, so "4.0" or "4e0"
 *    pass as 4; fractions, negatives and huge values do not.
 *  - F32 and F16 are written; model_load widens F16 and BF16 to F32.
 *
 * This is the only file in model/ that includes cJSON. */
#include "safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

/* F16C widening (safetensors_to_f32) exists on x86-64 only, SIMD128
 * widening in WebAssembly; other CPUs run the scalar f16_to_f32 loop,
 * which gives the same floats. */
#if defined(__x86_64__) && defined(__GNUC__)
#define SAFETENSORS_F16C 1
#include <immintrin.h>
#else
#define SAFETENSORS_F16C 0
#endif
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

#include "../common/input_file.h"
#include "../common/output_file.h"
#include "../common/util.h"

/* F32 data is moved with memcpy, which keeps the file's byte order: that
 * is only right on a little-endian machine. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "safetensors.c assumes a little-endian host");

#define METADATA_KEY "__metadata__"
#define MAX_EXACT_INTEGER 9007199254740992.0 /* 2^53: doubles are exact up to here */

/* ------------------------------------------------------------------ dtypes */

/* Every dtype the format defines, so that a valid-but-unsupported one
 * ("I64") gets a different message from a typo ("F23"). */
static const char *const KNOWN_UNSUPPORTED[] = {
    "BOOL", "U8", "I8", "I16", "U16", "I32", "U32", "I64", "U64", "F64",
    "F8_E5M2", "F8_E4M3", "F8_E8M0", "F6_E2M3", "F6_E3M2", "F4", "C64",
};

static const char *dtype_name(Dtype d)
{
    switch (d) {
    case DTYPE_F32: return "F32";
    case DTYPE_F16: return "F16";
    case DTYPE_BF16: return "BF16";
    case DTYPE_I32: return "I32";
    }
    ASSERT(0);
}

static size_t dtype_size(Dtype d)
{
    return d == DTYPE_F32 || d == DTYPE_I32 ? 4 : 2;
}

/* 0 and *out set for F32/F16/BF16; otherwise an Error (no path prefix). */
static int parse_dtype(const char *tensor, const char *s, Dtype *out, Error *err)
{
    static const Dtype supported[] = {DTYPE_F32, DTYPE_F16, DTYPE_BF16};
    for (size_t i = 0; i < sizeof supported / sizeof supported[0]; i++) {
        if (strcmp(s, dtype_name(supported[i])) == 0) {
            *out = supported[i];
            return 0;
        }
    }
    for (size_t i = 0; i < sizeof KNOWN_UNSUPPORTED / sizeof KNOWN_UNSUPPORTED[0]; i++)
        if (strcmp(s, KNOWN_UNSUPPORTED[i]) == 0)
            return error_set(err, "tensor '%s': dtype %s is not supported (F32, F16, BF16)",
                             tensor, s);
    return error_set(err, "tensor '%s': unknown dtype '%s'", tensor, s);
}

/* ----------------------------------------------------------- header checks */

/* The 8-byte header length, little-endian whatever the host. */
static uint64_t read_u64_le(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* A JSON value that must be a whole number in [0, 2^53]. */
static int json_size(const cJSON *item, size_t *out)
{
    if (!cJSON_IsNumber(item)) return -1;
    double v = item->valuedouble;
    if (!isfinite(v) || v < 0 || v != floor(v) || v > MAX_EXACT_INTEGER || v > (double)SIZE_MAX)
        return -1;
    *out = (size_t)v;
    return 0;
}

/* "shape": array of at most SAFETENSORS_MAX_DIMS whole numbers; fills
 * t->ndim, t->shape and t->numel (product, checked for overflow). */
static int parse_shape(const cJSON *shape, SafeTensor *t, Error *err)
{
    if (!cJSON_IsArray(shape))
        return error_set(err, "tensor '%s': \"shape\" must be an array", t->name);
    int ndim = cJSON_GetArraySize(shape);
    if (ndim > SAFETENSORS_MAX_DIMS)
        return error_set(err, "tensor '%s': %d dimensions, at most %d are supported", t->name,
                         ndim, SAFETENSORS_MAX_DIMS);
    t->ndim = ndim;
    t->numel = 1;
    int i = 0;
    for (const cJSON *dim = shape->child; dim; dim = dim->next, i++) {
        if (json_size(dim, &t->shape[i]))
            return error_set(err, "tensor '%s': shape[%d] is not a non-negative integer",
                             t->name, i);
        if (t->shape[i] != 0 && t->numel > SIZE_MAX / t->shape[i])
            return error_set(err, "tensor '%s': shape product overflows", t->name);
        t->numel *= t->shape[i];
    }
    return 0;
}

/* One tensor entry: {"dtype": .., "shape": [..], "data_offsets": [b, e]}.
 * Extra fields are ignored.  The data area starts at file offset
 * `data_start` and holds data_size bytes. */
static int parse_tensor(const cJSON *entry, size_t data_start, size_t data_size,
                        SafeTensor *t, Error *err)
{
    const char *name = t->name;
    if (!cJSON_IsObject(entry))
        return error_set(err, "tensor '%s': entry is not a JSON object", name);

    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(entry, "dtype");
    if (!dtype) return error_set(err, "tensor '%s': missing \"dtype\"", name);
    if (!cJSON_IsString(dtype))
        return error_set(err, "tensor '%s': \"dtype\" must be a string", name);
    if (parse_dtype(name, dtype->valuestring, &t->dtype, err)) return -1;

    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(entry, "shape");
    if (!shape) return error_set(err, "tensor '%s': missing \"shape\"", name);
    if (parse_shape(shape, t, err)) return -1;

    const cJSON *offsets = cJSON_GetObjectItemCaseSensitive(entry, "data_offsets");
    if (!offsets) return error_set(err, "tensor '%s': missing \"data_offsets\"", name);
    size_t begin, end;
    if (!cJSON_IsArray(offsets) || cJSON_GetArraySize(offsets) != 2 ||
        json_size(offsets->child, &begin) || json_size(offsets->child->next, &end))
        return error_set(err, "tensor '%s': \"data_offsets\" must be [begin, end], "
                         "two non-negative integers", name);
    if (begin > end)
        return error_set(err, "tensor '%s': data_offsets begin %zu is after end %zu", name,
                         begin, end);

    size_t elem = dtype_size(t->dtype);
    if (t->numel > SIZE_MAX / elem)
        return error_set(err, "tensor '%s': shape product overflows", name);
    t->nbytes = t->numel * elem;
    if (end - begin != t->nbytes)
        return error_set(err, "tensor '%s': data_offsets span %zu bytes but %zu %s values "
                         "need %zu", name, end - begin, t->numel, dtype_name(t->dtype),
                         t->nbytes);
    if (end > data_size)
        return error_set(err, "tensor '%s': data_offsets end %zu is past the end of the "
                         "data (%zu bytes)", name, end, data_size);
    t->offset = data_start + begin;
    return 0;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* cJSON keeps every member of an object, duplicates included; a file with
 * two tensors of one name, or two values of one metadata key, is ambiguous
 * (readers disagree on which one wins), so refuse it.  `where` is "the
 * header" or "__metadata__". */
static int check_unique_keys(const cJSON *root, const char *where, Error *err)
{
    size_t n = (size_t)cJSON_GetArraySize(root), i = 0;
    const char **names = xcalloc(n, sizeof *names);
    for (const cJSON *item = root->child; item; item = item->next) names[i++] = item->string;
    qsort(names, n, sizeof *names, compare_names);
    int rc = 0;
    for (i = 1; i < n && rc == 0; i++)
        if (strcmp(names[i - 1], names[i]) == 0)
            rc = error_set(err, "'%s' appears twice in %s", names[i], where);
    free(names);
    return rc;
}

/* "__metadata__": an object of string -> string, copied into file->meta. */
static int parse_metadata(const cJSON *obj, SafeFile *file, Error *err)
{
    if (!cJSON_IsObject(obj))
        return error_set(err, "\"" METADATA_KEY "\" is not a JSON object");
    if (check_unique_keys(obj, METADATA_KEY, err)) return -1;
    file->meta = xcalloc((size_t)cJSON_GetArraySize(obj), sizeof *file->meta);
    for (const cJSON *item = obj->child; item; item = item->next) {
        if (!cJSON_IsString(item))
            return error_set(err, METADATA_KEY " value for '%s' is not a string", item->string);
        SafeMeta *m = &file->meta[file->meta_count++];
        m->key = xstrdup(item->string);
        m->value = xstrdup(item->valuestring);
    }
    return 0;
}

/* Order by start in the file, then by size and name for a stable result. */
static int compare_by_offset(const void *a, const void *b)
{
    const SafeTensor *x = a, *y = b;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    if (x->nbytes != y->nbytes) return x->nbytes < y->nbytes ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Sort by data offset and reject any two tensors sharing a byte.  Empty
 * tensors occupy no bytes and overlap nothing. */
static int sort_and_check_overlap(SafeFile *file, Error *err)
{
    qsort(file->tensors, file->count, sizeof *file->tensors, compare_by_offset);
    const SafeTensor *furthest = NULL; /* non-empty tensor reaching furthest so far */
    for (size_t i = 0; i < file->count; i++) {
        const SafeTensor *t = &file->tensors[i];
        if (t->nbytes == 0) continue;
        if (furthest && t->offset < furthest->offset + furthest->nbytes)
            return error_set(err, "tensors '%s' and '%s' overlap in the data area",
                             furthest->name, t->name);
        if (!furthest || t->offset + t->nbytes > furthest->offset + furthest->nbytes)
            furthest = t;
    }
    return 0;
}

/* cJSON turns "\u0000" into a NUL that ends the C string: "a\u0000b" would
 * pass as tensor "a".  No name or value of ours holds a NUL, so refuse the
 * escape anywhere in a string (a linear scan, before parsing).  The same
 * for a raw control byte (below 0x20), which JSON forbids in a string and
 * cJSON accepts: a raw NUL cut the name just the same, where Python's json
 * (tools/reference.py) refused the file. */
static int check_no_nul_escape(const char *header, size_t n, Error *err)
{
    bool in_string = false;
    for (size_t i = 0; i < n; i++) {
        if (header[i] == '"') {
            in_string = !in_string;
        } else if (in_string && (unsigned char)header[i] < 0x20) {
            return error_set(err, "a string in the header holds the control character 0x%02x at byte %zu "
                                  "(JSON allows it only escaped)", (unsigned char)header[i], i);
        } else if (in_string && header[i] == '\\') {
            if (i + 5 < n && header[i + 1] == 'u' && memcmp(header + i + 2, "0000", 4) == 0)
                return error_set(err, "a string in the header holds \\u0000 (a NUL "
                                 "character) at byte %zu", i);
            i++; /* skip the escaped character, e.g. \" */
        }
    }
    return 0;
}

/* Parse and check the JSON header (`header`, n bytes) and fill file's
 * tensors and metadata.  Messages have no path prefix yet. */
static int parse_header(const char *header, size_t n, size_t data_start,
                        size_t data_size, SafeFile *file, Error *err)
{
    if (check_no_nul_escape(header, n, err)) return -1;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(header, n, &end, 0);
    if (!root) {
        size_t at = end ? (size_t)(end - header) : 0;
        return error_set(err, "header is not valid JSON near byte %zu", at);
    }
    int rc = -1;
    /* The reference writer pads with spaces; anything else after the
     * object is garbage that cJSON would silently ignore. */
    for (const char *p = end; p < header + n; p++) {
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            error_set(err, "header is not valid JSON near byte %zu (text after the object)",
                      (size_t)(p - header));
            goto done;
        }
    }
    if (!cJSON_IsObject(root)) {
        error_set(err, "header is not a JSON object");
        goto done;
    }
    if (check_unique_keys(root, "the header", err)) goto done;

    file->tensors = xcalloc((size_t)cJSON_GetArraySize(root), sizeof *file->tensors);
    for (const cJSON *item = root->child; item; item = item->next) {
        if (strcmp(item->string, METADATA_KEY) == 0) {
            if (parse_metadata(item, file, err)) goto done;
            continue;
        }
        SafeTensor *t = &file->tensors[file->count++];
        t->name = xstrdup(item->string);
        if (parse_tensor(item, data_start, data_size, t, err)) goto done;
    }
    rc = sort_and_check_overlap(file, err);
done:
    cJSON_Delete(root);
    return rc;
}

/* ----------------------------------------------------------------- reading */

/* n bytes at `offset` of fd into buf: 0, or -1 with errno (0 when the file
 * ended first, i.e. it is shorter than it was: truncated under us). */
static int read_at(int fd, void *buf, size_t n, size_t offset)
{
    for (size_t done = 0; done < n;) {
        ssize_t got = pread(fd, (char *)buf + done, n - done, (off_t)(offset + done));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            if (got == 0) errno = 0;
            return -1;
        }
        done += (size_t)got;
    }
    return 0;
}

static const char *read_problem(void)
{
    return errno ? strerror(errno) : "the file ended early (truncated while loading?)";
}

bool safetensors_looks_like(const char *path)
{
    struct stat st;
    Error ignored = {{0}};
    int fd = input_file_open(path, 0, &st, &ignored); /* a regular file only */
    if (fd < 0) return false;
    unsigned char prefix[9];
    bool looks = read_at(fd, prefix, sizeof prefix, 0) == 0;
    close(fd);
    uint64_t n = looks ? read_u64_le(prefix) : 0;
    return looks && n >= 2 && n <= SAFETENSORS_MAX_HEADER && prefix[8] == '{';
}

int safetensors_open_limited(const char *path, size_t max_header, SafeFile *file, Error *err)
{
    ASSERT(path && file);
    SafeFile f = {.path = path};
    char *header = NULL;
    struct stat st;
    /* Only a regular file: a FIFO would block, a device never end. */
    f.fd = input_file_open(path, 0, &st, err);
    if (f.fd < 0) { /* the message names the path already */
        memset(file, 0, sizeof *file);
        return -1;
    }
    f.is_open = true;
    unsigned char prefix[8];
    if ((uintmax_t)st.st_size > SIZE_MAX) {
        error_set(err, "file is too large");
        goto fail;
    }
    f.file_size = (size_t)st.st_size;
    if (f.file_size == 0) {
        error_set(err, "file is empty (0 bytes), expected an 8-byte header length");
        goto fail;
    }
    if (f.file_size < 8) {
        error_set(err, "file is %zu bytes, too short for the 8-byte header length",
                  f.file_size);
        goto fail;
    }
    if (read_at(f.fd, prefix, 8, 0)) {
        error_set(err, "cannot read the header length: %s", read_problem());
        goto fail;
    }
    uint64_t n = read_u64_le(prefix);
    /* torch.save's files are zip archives (pickle inside): say what the
     * file is, not what its first bytes would mean as a length. */
    if (n > SAFETENSORS_MAX_HEADER && memcmp(prefix, "PK\x03\x04", 4) == 0) {
        error_set(err, "a zip archive (torch.save's .pt format?), not a safetensors file "
                  "(tools/reference.py's write_safetensors writes one)");
        goto fail;
    }
    if (n > SAFETENSORS_MAX_HEADER) {
        error_set(err, "header length %llu exceeds the limit of %u bytes",
                  (unsigned long long)n, SAFETENSORS_MAX_HEADER);
        goto fail;
    }
    if (n > max_header) {
        error_set(err, "header length %llu exceeds the %zu bytes its tensors and metadata can "
                  "need", (unsigned long long)n, max_header);
        goto fail;
    }
    if (n > f.file_size - 8) {
        error_set(err, "header length %llu is beyond the end of the file (size %zu)",
                  (unsigned long long)n, f.file_size);
        goto fail;
    }
    /* NUL-terminated, so no parser can read past the header. */
    header = xmalloc((size_t)n + 1);
    if (read_at(f.fd, header, (size_t)n, 8)) {
        error_set(err, "cannot read the header: %s", read_problem());
        goto fail;
    }
    header[n] = '\0';
    if (parse_header(header, (size_t)n, 8 + (size_t)n, f.file_size - 8 - (size_t)n, &f, err))
        goto fail;
    free(header);
    *file = f;
    return 0;

fail:
    free(header);
    safetensors_close(&f);
    error_prefix(err, path);
    memset(file, 0, sizeof *file);
    return -1;
}

int safetensors_open(const char *path, SafeFile *file, Error *err)
{
    return safetensors_open_limited(path, SAFETENSORS_MAX_HEADER, file, err);
}

void safetensors_close(SafeFile *file)
{
    if (!file) return;
    if (file->is_open) close(file->fd);
    for (size_t i = 0; i < file->count; i++) free(file->tensors[i].name);
    free(file->tensors);
    for (size_t i = 0; i < file->meta_count; i++) {
        free(file->meta[i].key);
        free(file->meta[i].value);
    }
    free(file->meta);
    memset(file, 0, sizeof *file);
}

const SafeTensor *safetensors_find(const SafeFile *file, const char *name)
{
    for (size_t i = 0; i < file->count; i++)
        if (strcmp(file->tensors[i].name, name) == 0) return &file->tensors[i];
    return NULL;
}

const char *safetensors_meta(const SafeFile *file, const char *key)
{
    for (size_t i = 0; i < file->meta_count; i++)
        if (strcmp(file->meta[i].key, key) == 0) return file->meta[i].value;
    return NULL;
}

/* -------------------------------------------------------------- converting */

static float f32_from_bits(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* IEEE 754 binary16 -> binary32, exact for every input: each half value
 * (subnormals included) is representable as a float. */
static float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    if (exp == 0) {
        /* zero or subnormal: mant * 2^-24, a normal float, exact */
        float mag = (float)mant * 0x1p-24f;
        uint32_t bits;
        memcpy(&bits, &mag, sizeof bits);
        return f32_from_bits(sign | bits);
    }
    if (exp == 31) /* inf, or NaN keeping its payload */
        return f32_from_bits(sign | 0x7f800000u | (mant << 13));
    /* rebias the exponent from 15 to 127 */
    return f32_from_bits(sign | ((exp + 112) << 23) | (mant << 13));
}

#if SAFETENSORS_F16C
/* The same conversion, 8 values per instruction (F16C, in every x86-64 CPU
 * with AVX2). Loading a float16 model is mostly this loop. */
__attribute__((target("f16c,avx")))
static size_t f16_to_f32_f16c(const unsigned char *p, float *out, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p + 2 * i))));
    return i;
}
#endif

#ifdef __wasm_simd128__
/* The same conversion in WebAssembly SIMD128, 8 values a step: the web
 * page (make web) widens its float16 models once at load, and there the
 * scalar loop, a branch per value, was most of opening a model (~100 ms
 * of CPU for en-zh's 8.8 M values, node --cpu-prof).  For each value,
 * as f16_to_f32 does: normal, the bits moved into place with the exponent
 * rebiased by adding 112 << 23; zero or subnormal (exponent 0), the
 * mantissa converted to float (exact, below 2^10) times 2^-24 (exact: a
 * power of two, and the result a normal float); inf or NaN (exponent 31),
 * the exponent's bits all set, the payload kept; then the sign.  Every
 * one of the 65,536 halves gives f16_to_f32's bits (tests/web_kernels.c,
 * run by test_web). */
static v128_t f16x4_to_f32(v128_t h)
{
    v128_t magnitude = wasm_v128_and(h, wasm_i32x4_splat(0x7fff));
    v128_t exponent = wasm_v128_and(h, wasm_i32x4_splat(0x7c00));
    v128_t moved = wasm_i32x4_shl(magnitude, 13);
    v128_t normal = wasm_i32x4_add(moved, wasm_i32x4_splat(112 << 23));
    v128_t small = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(magnitude), wasm_f32x4_splat(0x1p-24f));
    v128_t special = wasm_v128_or(moved, wasm_i32x4_splat(0x7f800000));
    v128_t r = wasm_v128_bitselect(small, normal, wasm_i32x4_eq(exponent, wasm_i32x4_splat(0)));
    r = wasm_v128_bitselect(special, r, wasm_i32x4_eq(exponent, wasm_i32x4_splat(0x7c00)));
    return wasm_v128_or(r, wasm_i32x4_shl(wasm_v128_and(h, wasm_i32x4_splat(0x8000)), 16));
}

/* Both halves of the 8 values are loaded before either is stored: the
 * in-place widening of safetensors_to_f32 needs that. */
static size_t f16_to_f32_simd128(const unsigned char *p, float *out, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        v128_t h = wasm_v128_load(p + 2 * i);
        v128_t lo = f16x4_to_f32(wasm_u32x4_extend_low_u16x8(h));
        v128_t hi = f16x4_to_f32(wasm_u32x4_extend_high_u16x8(h));
        wasm_v128_store(out + i, lo);
        wasm_v128_store(out + i + 4, hi);
    }
    return i;
}
#endif

void *safetensors_map(const SafeFile *file)
{
    if (!file->is_open || file->file_size == 0) return NULL;
    void *map = mmap(NULL, file->file_size, PROT_READ, MAP_PRIVATE, file->fd, 0);
    return map == MAP_FAILED ? NULL : map;
}

int safetensors_read_part(const SafeFile *file, const SafeTensor *t, size_t from, size_t n, void *out,
                          Error *err)
{
    ASSERT(from <= t->nbytes && n <= t->nbytes - from);
    if (read_at(file->fd, out, n, t->offset + from) == 0) return 0;
    return error_set(err, "%s: tensor '%s': cannot read: %s", file->path, t->name, read_problem());
}

int safetensors_read_raw(const SafeFile *file, const SafeTensor *t, void *out, Error *err)
{
    return safetensors_read_part(file, t, 0, t->nbytes, out, err);
}

int safetensors_to_f32(const SafeFile *file, const SafeTensor *t, float *out, Error *err)
{
    /* One read per tensor.  F32 lands where it belongs (little-endian host,
     * see top).  F16/BF16 values (2 bytes) are read into the upper half of
     * `out` (4 bytes each) and widened front to back, in place: value i is
     * read from byte 2n + 2i before float i is stored at byte 4i, and
     * 4i + 32 <= 2n + 2i + 16 whenever 8 values i..i+7 exist, so no store
     * reaches a value not yet read (also for the 8-wide F16C loop). */
    unsigned char *bytes = (unsigned char *)out;
    unsigned char *p = t->dtype == DTYPE_F32 ? bytes : bytes + 2 * t->numel;
    if (safetensors_read_raw(file, t, p, err)) return -1;
    if (t->dtype == DTYPE_F16) {
        /* Every CPU with AVX2 has F16C, and clang's __builtin_cpu_supports
         * does not know "f16c". */
#if SAFETENSORS_F16C
        size_t i = __builtin_cpu_supports("avx2") ? f16_to_f32_f16c(p, out, t->numel) : 0;
#elif defined(__wasm_simd128__)
        size_t i = f16_to_f32_simd128(p, out, t->numel);
#else
        size_t i = 0;
#endif
        for (; i < t->numel; i++)
            out[i] = f16_to_f32((uint16_t)(p[2 * i] | p[2 * i + 1] << 8));
    } else if (t->dtype == DTYPE_BF16) { /* bfloat16 is the high half of a float32 */
        for (size_t i = 0; i < t->numel; i++)
            out[i] = f32_from_bits((uint32_t)(p[2 * i] | p[2 * i + 1] << 8) << 16);
    }
    return 0;
}

/* ----------------------------------------------------------------- writing */

/* A JSON integer printed exactly (cJSON's double printing could choose
 * exponent form, which strict readers refuse as an offset). */
static cJSON *json_integer(size_t v)
{
    char text[32];
    snprintf(text, sizeof text, "%zu", v);
    return cJSON_CreateRaw(text);
}

/* The unpadded header JSON for `tensors` (free with cJSON_free), or NULL
 * with an Error (no path prefix) for duplicate names. */
static char *build_header(const SafeWriteTensor *tensors, size_t count, const SafeMeta *meta,
                          size_t meta_count, Error *err)
{
    cJSON *root = cJSON_CreateObject();
    char *text = NULL;
    if (meta_count > 0) {
        cJSON *m = cJSON_AddObjectToObject(root, METADATA_KEY);
        for (size_t i = 0; i < meta_count; i++) {
            ASSERT(meta[i].key && meta[i].value);
            if (cJSON_GetObjectItemCaseSensitive(m, meta[i].key)) {
                error_set(err, "metadata key '%s' appears twice", meta[i].key);
                goto done;
            }
            cJSON_AddStringToObject(m, meta[i].key, meta[i].value);
        }
    }
    size_t offset = 0;
    for (size_t i = 0; i < count; i++) {
        const SafeWriteTensor *t = &tensors[i];
        ASSERT(t->name && t->ndim >= 0 && t->ndim <= SAFETENSORS_MAX_DIMS);
        if (strcmp(t->name, METADATA_KEY) == 0 ||
            cJSON_GetObjectItemCaseSensitive(root, t->name)) {
            error_set(err, "tensor name '%s' is used twice", t->name);
            goto done;
        }
        size_t numel = 1;
        ASSERT(t->dtype == DTYPE_F32 || t->dtype == DTYPE_F16 || t->dtype == DTYPE_I32);
        cJSON *entry = cJSON_AddObjectToObject(root, t->name);
        cJSON_AddStringToObject(entry, "dtype", dtype_name(t->dtype));
        cJSON *shape = cJSON_AddArrayToObject(entry, "shape");
        for (int d = 0; d < t->ndim; d++) {
            ASSERT(t->shape[d] == 0 || numel <= SIZE_MAX / sizeof(float) / t->shape[d]);
            numel *= t->shape[d];
            cJSON_AddItemToArray(shape, json_integer(t->shape[d]));
        }
        ASSERT(t->data || numel == 0);
        cJSON *offsets = cJSON_AddArrayToObject(entry, "data_offsets");
        cJSON_AddItemToArray(offsets, json_integer(offset));
        offset += numel * dtype_size(t->dtype);
        cJSON_AddItemToArray(offsets, json_integer(offset));
    }
    text = cJSON_PrintUnformatted(root);
    ASSERT(text); /* only fails when out of memory */
done:
    cJSON_Delete(root);
    return text;
}

static int write_all(FILE *f, const void *data, size_t n)
{
    return n == 0 || fwrite(data, 1, n, f) == n ? 0 : -1;
}

/* float32 → float16 bits, round to nearest even; overflow becomes ±inf,
 * tiny values become subnormals or ±0, NaN stays NaN. */
static uint16_t f32_to_f16(float value)
{
    uint32_t x;
    memcpy(&x, &value, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t exp = (x >> 23) & 0xff, mant = x & 0x7fffff;
    if (exp == 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
    int e = (int)exp - 127 + 15;
    if (e >= 31) return sign | 0x7c00;
    if (e <= 0) {
        if (e < -10) return sign;
        mant |= 0x800000; /* the implicit 1, then shift into a subnormal */
        int shift = 14 - e;
        uint32_t half = mant >> shift, rest = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rest > mid || (rest == mid && (half & 1))) half++;
        return sign | (uint16_t)half;
    }
    uint32_t half = ((uint32_t)e << 10) | (mant >> 13), rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) half++; /* may carry into exp: correct */
    return sign | (uint16_t)half;
}

static int write_tensor(FILE *f, const SafeWriteTensor *t, size_t numel)
{
    /* floats are already little-endian on this host, see top */
    if (t->dtype == DTYPE_F32 || t->dtype == DTYPE_I32) return write_all(f, t->data, numel * 4);
    const float *x = t->data;
    uint16_t buf[4096];
    for (size_t i = 0; i < numel; i += 4096) {
        size_t n = numel - i < 4096 ? numel - i : 4096;
        for (size_t j = 0; j < n; j++) buf[j] = f32_to_f16(x[i + j]);
        if (write_all(f, buf, n * sizeof *buf)) return -1;
    }
    return 0;
}

/* Length, padded header and data to `f`; -1 with errno set on failure. */
static int write_contents(FILE *f, const char *json, const SafeWriteTensor *tensors,
                          size_t count)
{
    /* Pad with spaces so the data area starts on a multiple of 8. */
    size_t len = strlen(json), padded = (len + 7) / 8 * 8;
    unsigned char prefix[8];
    for (int i = 0; i < 8; i++) prefix[i] = (unsigned char)((uint64_t)padded >> (8 * i));
    if (write_all(f, prefix, 8) || write_all(f, json, len)) return -1;
    for (size_t i = len; i < padded; i++)
        if (fputc(' ', f) == EOF) return -1;
    for (size_t i = 0; i < count; i++) {
        size_t numel = 1;
        for (int d = 0; d < tensors[i].ndim; d++) numel *= tensors[i].shape[d];
        if (write_tensor(f, &tensors[i], numel)) return -1;
    }
    return 0;
}

int safetensors_write(const char *path, const SafeWriteTensor *tensors, size_t count,
                      const SafeMeta *meta, size_t meta_count, Error *err)
{
    char *json = build_header(tensors, count, meta, meta_count, err);
    if (!json) {
        error_prefix(err, path);
        return -1;
    }
    /* A crash never leaves a half-written file under `path`; a device or
     * FIFO is written directly (common/output_file.h). */
    int rc = -1;
    OutputFile *out = output_file_open(path, 0, err);
    if (out) {
        /* stdio errors are sticky: a failed write fails the commit, which
         * names its reason and keeps the old file */
        (void)write_contents(output_file_stream(out), json, tensors, count);
        rc = output_file_commit(out, err);
    }
    cJSON_free(json);
    return rc;
}

/* See safetensors.h. */
float safetensors_f16_to_f32_scalar(uint16_t h) { return f16_to_f32(h); }
