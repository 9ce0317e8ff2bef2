/* test_safetensors.c — the safetensors reader and writer.
 *
 * A write -> open round trip; hand-built F16/BF16/F32 files widened
 * bit-exactly; and a table of broken files, each built byte by byte and
 * run as its own test, that must be refused with a message naming the
 * file and the problem. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../model/safetensors.h"

/* ---------------------------------------------------------------- helpers */

/* A file of: 8-byte little-endian length of `header`, `header`, then
 * `data_len` bytes of `data` (zeros when data is NULL). */
static const char *make_file(const char *name, const char *header, const void *data,
                             size_t data_len)
{
    size_t n = strlen(header), total = 8 + n + data_len;
    unsigned char *bytes = calloc(total, 1);
    assert_non_null(bytes);
    for (int i = 0; i < 8; i++) bytes[i] = (unsigned char)((uint64_t)n >> (8 * i));
    memcpy(bytes + 8, header, n);
    if (data) memcpy(bytes + 8 + n, data, data_len);
    const char *path = temp_file(name, bytes, total);
    free(bytes);
    return path;
}

static void assert_open_fails(const char *path, const char *phrase)
{
    SafeFile file;
    memset(&file, 0xab, sizeof file); /* must come back zeroed */
    Error err = {{0}};
    int rc = safetensors_open(path, &file, &err);
    if (rc == 0 || strncmp(err.message, path, strlen(path)) != 0 ||
        !strstr(err.message, phrase)) {
        print_error("open(%s) returned %d, message \"%s\"; wanted the path and \"%s\"\n",
                    path, rc, err.message, phrase);
        if (rc == 0) safetensors_close(&file);
        fail();
    }
    assert_false(file.is_open);
    assert_null(file.tensors);
    assert_null(file.meta);
    assert_int_equal(file.count, 0);
}

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static int tmp_exists(const char *path)
{
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    return access(tmp, F_OK) == 0;
}

/* ------------------------------------------------------------- round trip */

static const float MATRIX[2][3] = {{1, -2, 3.5f}, {0, 1e-30f, -7}};
static const float VECTOR[5] = {0.25f, 0.5f, 0.75f, 1, 1.25f}; /* odd: 20 bytes */
static const float SCALAR = 42;

static const char *write_sample(Error *err)
{
    const SafeWriteTensor tensors[] = {
        {"encoder.w", 2, {2, 3}, &MATRIX[0][0], DTYPE_F32},
        {"encoder.b", 1, {5}, VECTOR, DTYPE_F32},
        {"scale", 0, {0}, &SCALAR, DTYPE_F32},
    };
    const SafeMeta meta[] = {{"format", "translate-1"}, {"arch", "{\"d_model\": 8}"}};
    static char path[512];
    snprintf(path, sizeof path, "%s/sample.safetensors", temp_dir());
    return safetensors_write(path, tensors, 3, meta, 2, err) ? NULL : path;
}

static void test_round_trip_values_and_shapes(void **state)
{
    (void)state;
    Error err = {{0}};
    const char *path = write_sample(&err);
    assert_non_null(path);
    assert_false(tmp_exists(path));

    SafeFile file;
    assert_int_equal(safetensors_open(path, &file, &err), 0);
    assert_int_equal(file.count, 3);

    const SafeTensor *w = safetensors_find(&file, "encoder.w");
    assert_non_null(w);
    assert_int_equal(w->dtype, DTYPE_F32);
    assert_int_equal(w->ndim, 2);
    assert_int_equal(w->shape[0], 2);
    assert_int_equal(w->shape[1], 3);
    assert_int_equal(w->numel, 6);
    float got[6];
    assert_int_equal(safetensors_to_f32(&file, w, got, &err), 0);
    assert_memory_equal(got, MATRIX, sizeof MATRIX);

    const SafeTensor *b = safetensors_find(&file, "encoder.b");
    assert_non_null(b);
    assert_int_equal(b->numel, 5);
    assert_int_equal(safetensors_to_f32(&file, b, got, &err), 0);
    assert_memory_equal(got, VECTOR, sizeof VECTOR);

    const SafeTensor *s = safetensors_find(&file, "scale");
    assert_non_null(s);
    assert_int_equal(s->ndim, 0);
    assert_int_equal(s->numel, 1);
    assert_int_equal(safetensors_to_f32(&file, s, got, &err), 0);
    assert_true(got[0] == SCALAR);

    assert_null(safetensors_find(&file, "missing"));
    safetensors_close(&file);
}

static void test_round_trip_metadata(void **state)
{
    (void)state;
    Error err = {{0}};
    const char *path = write_sample(&err);
    assert_non_null(path);
    SafeFile file;
    assert_int_equal(safetensors_open(path, &file, &err), 0);
    assert_int_equal(file.meta_count, 2);
    assert_string_equal(safetensors_meta(&file, "format"), "translate-1");
    assert_string_equal(safetensors_meta(&file, "arch"), "{\"d_model\": 8}");
    assert_null(safetensors_meta(&file, "missing"));
    safetensors_close(&file);
}

/* The header is padded so the data area starts on a multiple of 8, with
 * "__metadata__" first and tensors laid out contiguously in the given
 * order (the reference reader refuses gaps). */
static void test_written_layout(void **state)
{
    (void)state;
    Error err = {{0}};
    const char *path = write_sample(&err);
    assert_non_null(path);
    size_t len;
    char *bytes = read_file(path, &len);
    assert_non_null(bytes);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = (n << 8) | (unsigned char)bytes[i];
    assert_int_equal((8 + n) % 8, 0);
    assert_int_equal(len, 8 + n + (6 + 5 + 1) * sizeof(float));
    assert_memory_equal(bytes + 8, "{\"__metadata__\":", 16);
    assert_true(bytes[8 + n - 1] == '}' || bytes[8 + n - 1] == ' ');
    free(bytes);

    SafeFile file;
    assert_int_equal(safetensors_open(path, &file, &err), 0);
    size_t data = 8 + n;
    assert_int_equal(safetensors_find(&file, "encoder.w")->offset, data);
    assert_int_equal(safetensors_find(&file, "encoder.b")->offset, data + 24);
    assert_int_equal(safetensors_find(&file, "scale")->offset, data + 44);
    /* tensors come back sorted by offset */
    assert_string_equal(file.tensors[0].name, "encoder.w");
    assert_string_equal(file.tensors[2].name, "scale");
    safetensors_close(&file);
}

static void test_write_without_tensors_or_metadata(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/empty.safetensors", temp_dir());
    Error err = {{0}};
    assert_int_equal(safetensors_write(path, NULL, 0, NULL, 0, &err), 0);
    SafeFile file;
    assert_int_equal(safetensors_open(path, &file, &err), 0);
    assert_int_equal(file.count, 0);
    assert_int_equal(file.meta_count, 0);
    safetensors_close(&file);
}

static void test_write_replaces_existing_file(void **state)
{
    (void)state;
    const char *path = temp_file("replace.safetensors", "old junk", 8);
    const float one = 1;
    const SafeWriteTensor t = {"x", 1, {1}, &one, DTYPE_F32};
    Error err = {{0}};
    assert_int_equal(safetensors_write(path, &t, 1, NULL, 0, &err), 0);
    SafeFile file;
    assert_int_equal(safetensors_open(path, &file, &err), 0);
    assert_int_equal(file.count, 1);
    safetensors_close(&file);
}

static void test_write_refuses_duplicate_names(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/dup.safetensors", temp_dir());
    const float v = 1;
    const SafeWriteTensor t[] = {{"x", 1, {1}, &v, DTYPE_F32}, {"x", 1, {1}, &v, DTYPE_F32}};
    Error err = {{0}};
    assert_int_not_equal(safetensors_write(path, t, 2, NULL, 0, &err), 0);
    assert_non_null(strstr(err.message, "'x' is used twice"));
    assert_int_equal(access(path, F_OK), -1);
    assert_false(tmp_exists(path));
}

static void test_write_refuses_unwritable_path(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/no-such-folder/w.safetensors", temp_dir());
    const float v = 1;
    const SafeWriteTensor t = {"x", 1, {1}, &v, DTYPE_F32};
    Error err = {{0}};
    assert_int_not_equal(safetensors_write(path, &t, 1, NULL, 0, &err), 0);
    assert_non_null(strstr(err.message, path));
    assert_non_null(strstr(err.message, "cannot write: No such file or directory"));
    assert_false(tmp_exists(path));
}

static void test_close_accepts_null_and_zeroed(void **state)
{
    (void)state;
    safetensors_close(NULL);
    SafeFile file = {0};
    safetensors_close(&file);
    safetensors_close(&file);
}

/* ------------------------------------------------------ F16, BF16 widening */

/* Half-precision bit patterns and the float32 bit patterns they widen to. */
static const struct { uint16_t in; uint32_t out; } F16_CASES[] = {
    {0x3c00, 0x3f800000}, /* 1.0 */
    {0xc000, 0xc0000000}, /* -2.0 */
    {0x7bff, 0x477fe000}, /* 65504, largest finite */
    {0x3555, 0x3eaaa000}, /* 0.333251953125 */
    {0x0400, 0x38800000}, /* 2^-14, smallest normal */
    {0x0001, 0x33800000}, /* 2^-24, smallest subnormal */
    {0x03ff, 0x387fc000}, /* largest subnormal, 1023 * 2^-24 */
    {0x8001, 0xb3800000}, /* -2^-24 */
    {0x0000, 0x00000000}, /* +0 */
    {0x8000, 0x80000000}, /* -0 */
    {0x7c00, 0x7f800000}, /* +inf */
    {0xfc00, 0xff800000}, /* -inf */
    {0x7e00, 0x7fc00000}, /* quiet NaN */
};
static const struct { uint16_t in; uint32_t out; } BF16_CASES[] = {
    {0x3f80, 0x3f800000}, /* 1.0 */
    {0xc040, 0xc0400000}, /* -3.0 */
    {0x0001, 0x00010000}, /* subnormal */
    {0x8000, 0x80000000}, /* -0 */
    {0x7f80, 0x7f800000}, /* +inf */
    {0xff80, 0xff800000}, /* -inf */
    {0x7fc0, 0x7fc00000}, /* NaN */
};
#define N_F16 (sizeof F16_CASES / sizeof F16_CASES[0])
#define N_BF16 (sizeof BF16_CASES / sizeof BF16_CASES[0])

/* Header of odd length, so the data area (and every tensor) starts at an
 * odd address: the reader must not assume alignment. */
static const char *make_half_file(void)
{
    char header[512];
    size_t f16_end = 2 * N_F16, bf16_end = f16_end + 2 * N_BF16, f32_end = bf16_end + 8;
    snprintf(header, sizeof header,
             "{\"h\":{\"dtype\":\"F16\",\"shape\":[%zu],\"data_offsets\":[0,%zu]},"
             "\"b\":{\"dtype\":\"BF16\",\"shape\":[%zu],\"data_offsets\":[%zu,%zu]},"
             "\"f\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[%zu,%zu],\"x\":1}}",
             N_F16, f16_end, N_BF16, f16_end, bf16_end, bf16_end, f32_end);
    if (strlen(header) % 2 == 0) strcat(header, " ");
    unsigned char data[256];
    size_t k = 0;
    for (size_t i = 0; i < N_F16; i++) {
        data[k++] = F16_CASES[i].in & 0xff;
        data[k++] = F16_CASES[i].in >> 8;
    }
    for (size_t i = 0; i < N_BF16; i++) {
        data[k++] = BF16_CASES[i].in & 0xff;
        data[k++] = BF16_CASES[i].in >> 8;
    }
    const float f32[2] = {1.5f, -2.25f};
    memcpy(data + k, f32, sizeof f32);
    k += sizeof f32;
    return make_file("half.safetensors", header, data, k);
}

static void test_f16_widens_exactly(void **state)
{
    (void)state;
    SafeFile file;
    Error err = {{0}};
    assert_int_equal(safetensors_open(make_half_file(), &file, &err), 0);
    const SafeTensor *h = safetensors_find(&file, "h");
    assert_non_null(h);
    assert_int_equal(h->dtype, DTYPE_F16);
    assert_int_equal(h->offset % 2, 1);
    float out[N_F16];
    assert_int_equal(safetensors_to_f32(&file, h, out, &err), 0);
    for (size_t i = 0; i < N_F16; i++) {
        if (bits_of(out[i]) != F16_CASES[i].out)
            print_error("f16 0x%04x -> 0x%08x, want 0x%08x\n", F16_CASES[i].in,
                        bits_of(out[i]), F16_CASES[i].out);
        assert_int_equal(bits_of(out[i]), F16_CASES[i].out);
    }
    assert_true(isnan(out[N_F16 - 1]));
    assert_true(signbit(out[9]) && out[9] == 0);
    safetensors_close(&file);
}

/* Every one of the 65,536 half values, through the 8-at-a-time F16C path
 * and its scalar tail alike, against the definition: exact for numbers,
 * NaN stays NaN with its sign (the hardware may quiet a signalling NaN). */
static void test_every_f16_value_widens_exactly(void **state)
{
    (void)state;
    enum { N = 65536 };
    char header[128];
    snprintf(header, sizeof header, "{\"h\":{\"dtype\":\"F16\",\"shape\":[%d],\"data_offsets\":[0,%d]}}",
             N, 2 * N);
    if (strlen(header) % 2 == 0) strcat(header, " "); /* unaligned again */
    unsigned char *data = malloc(2 * N);
    for (int i = 0; i < N; i++) {
        data[2 * i] = (unsigned char)(i & 0xff);
        data[2 * i + 1] = (unsigned char)(i >> 8);
    }
    SafeFile file;
    Error err = {{0}};
    assert_int_equal(safetensors_open(make_file("all-f16.safetensors", header, data, 2 * N), &file, &err), 0);
    float *out = malloc(N * sizeof *out);
    assert_int_equal(safetensors_to_f32(&file, safetensors_find(&file, "h"), out, &err), 0);
    for (int i = 0; i < N; i++) {
        int sign = i >> 15, exp = (i >> 10) & 0x1f, mant = i & 0x3ff;
        double magnitude = exp == 0 ? ldexp(mant, -24) : ldexp(1024 + mant, exp - 25);
        if (exp == 31 && mant) {
            assert_true(isnan(out[i]));
        } else {
            float want = (float)(exp == 31 ? INFINITY : magnitude);
            want = sign ? -want : want;
            if (bits_of(out[i]) != bits_of(want)) print_error("f16 0x%04x -> %a, want %a\n", i, out[i], want);
            assert_int_equal(bits_of(out[i]), bits_of(want));
        }
        assert_int_equal(!!signbit(out[i]), sign);
    }
    free(out);
    free(data);
    safetensors_close(&file);
}

static void test_bf16_widens_exactly(void **state)
{
    (void)state;
    SafeFile file;
    Error err = {{0}};
    assert_int_equal(safetensors_open(make_half_file(), &file, &err), 0);
    const SafeTensor *b = safetensors_find(&file, "b");
    assert_non_null(b);
    assert_int_equal(b->dtype, DTYPE_BF16);
    float out[N_BF16];
    assert_int_equal(safetensors_to_f32(&file, b, out, &err), 0);
    for (size_t i = 0; i < N_BF16; i++) assert_int_equal(bits_of(out[i]), BF16_CASES[i].out);
    assert_true(isnan(out[N_BF16 - 1]));
    safetensors_close(&file);
}

static void test_unaligned_f32_loads(void **state)
{
    (void)state;
    SafeFile file;
    Error err = {{0}};
    assert_int_equal(safetensors_open(make_half_file(), &file, &err), 0);
    const SafeTensor *f = safetensors_find(&file, "f");
    assert_non_null(f);
    assert_int_not_equal(f->offset % 4, 0);
    float out[2];
    assert_int_equal(safetensors_to_f32(&file, f, out, &err), 0);
    assert_true(out[0] == 1.5f && out[1] == -2.25f);
    safetensors_close(&file);
}

/* ----------------------------------------------------------- broken files */

typedef struct {
    const char *name;
    const char *header;   /* JSON header; NULL: the file is `raw` */
    size_t data_len;      /* zero bytes after the header */
    const char *raw;      /* whole file, raw_len bytes */
    size_t raw_len;
    const char *phrase;   /* must appear in the message */
} BrokenFile;

#define T(body) "{\"w\":{" body "}}"
static const BrokenFile BROKEN[] = {
    {"empty file", NULL, 0, "", 0, "file is empty (0 bytes)"},
    {"5-byte file", NULL, 0, "\1\2\3\4\5", 5, "file is 5 bytes, too short"},
    {"header length beyond file", NULL, 0, "\x64\0\0\0\0\0\0\0{}", 10,
     "header length 100 is beyond the end of the file (size 10)"},
    /* past the end by less than the 8 bytes of the length itself */
    {"header length just beyond file", NULL, 0, "\x0c\0\0\0\0\0\0\0{}  ", 12,
     "header length 12 is beyond the end of the file (size 12)"},
    {"header length 2^63", NULL, 0, "\0\0\0\0\0\0\0\x80{}", 10, "exceeds the limit"},
    {"torch.save's zip", NULL, 0, "PK\x03\x04\x14\0\0\0\x08\0", 10, "a zip archive (torch.save's .pt format?)"},
    {"header not JSON", "{\"w\": ", 0, NULL, 0, "header is not valid JSON near byte"},
    {"text after the header object", "{} x", 0, NULL, 0, "header is not valid JSON near byte 3"},
    {"header is a JSON array", "[1, 2]", 0, NULL, 0, "header is not a JSON object"},
    {"tensor entry not an object", "{\"w\": 3}", 0, NULL, 0,
     "tensor 'w': entry is not a JSON object"},
    {"missing dtype", T("\"shape\":[1],\"data_offsets\":[0,4]"), 4, NULL, 0,
     "tensor 'w': missing \"dtype\""},
    {"missing shape", T("\"dtype\":\"F32\",\"data_offsets\":[0,4]"), 4, NULL, 0,
     "tensor 'w': missing \"shape\""},
    {"missing data_offsets", T("\"dtype\":\"F32\",\"shape\":[1]"), 4, NULL, 0,
     "tensor 'w': missing \"data_offsets\""},
    {"dtype not a string", T("\"dtype\":32,\"shape\":[1],\"data_offsets\":[0,4]"), 4, NULL, 0,
     "\"dtype\" must be a string"},
    {"unknown dtype", T("\"dtype\":\"F23\",\"shape\":[1],\"data_offsets\":[0,4]"), 4, NULL, 0,
     "tensor 'w': unknown dtype 'F23'"},
    {"unsupported dtype I64", T("\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]"), 8,
     NULL, 0, "tensor 'w': dtype I64 is not supported (F32, F16, BF16)"},
    {"shape not an array", T("\"dtype\":\"F32\",\"shape\":4,\"data_offsets\":[0,16]"), 16,
     NULL, 0, "\"shape\" must be an array"},
    {"negative dim", T("\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]"), 4, NULL, 0,
     "shape[0] is not a non-negative integer"},
    {"fractional dim", T("\"dtype\":\"F32\",\"shape\":[2,1.5],\"data_offsets\":[0,12]"), 12,
     NULL, 0, "shape[1] is not a non-negative integer"},
    {"dim above 2^53", T("\"dtype\":\"F32\",\"shape\":[18014398509481984],"
                         "\"data_offsets\":[0,4]"), 4, NULL, 0,
     "shape[0] is not a non-negative integer"},
    {"too many dims", T("\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],"
                        "\"data_offsets\":[0,4]"), 4, NULL, 0, "9 dimensions, at most 8"},
    {"shape product overflow", T("\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,16],"
                                 "\"data_offsets\":[0,4]"), 4, NULL, 0,
     "tensor 'w': shape product overflows"},
    {"byte size overflow", T("\"dtype\":\"F32\",\"shape\":[2147483648,2147483648,2],"
                             "\"data_offsets\":[0,4]"), 4, NULL, 0,
     "tensor 'w': shape product overflows"},
    {"byte size mismatch", T("\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]"), 4,
     NULL, 0, "data_offsets span 4 bytes but 2 F32 values need 8"},
    {"offsets past end", T("\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]"), 4, NULL,
     0, "data_offsets end 8 is past the end of the data (4 bytes)"},
    {"offsets one byte past end", T("\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[0,6]"), 5,
     NULL, 0, "data_offsets end 6 is past the end of the data (5 bytes)"},
    {"begin after end", T("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]"), 8, NULL,
     0, "data_offsets begin 8 is after end 4"},
    {"offsets not a pair", T("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4]"), 8, NULL,
     0, "\"data_offsets\" must be [begin, end]"},
    {"fractional offset", T("\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0.5,4.5]"), 8,
     NULL, 0, "\"data_offsets\" must be [begin, end]"},
    {"overlapping tensors",
     "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
     "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12, NULL, 0,
     "tensors 'a' and 'b' overlap"},
    {"tensor inside another",
     "{\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]},"
     "\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 16, NULL, 0,
     "tensors 'a' and 'b' overlap"},
    {"duplicate names",
     "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
     "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, NULL, 0,
     "'a' appears twice"},
    {"metadata value not a string", "{\"__metadata__\":{\"k\":1}}", 0, NULL, 0,
     "__metadata__ value for 'k' is not a string"},
    {"metadata not an object", "{\"__metadata__\":[\"k\"]}", 0, NULL, 0,
     "\"__metadata__\" is not a JSON object"},
};
#undef T
#define N_BROKEN (sizeof BROKEN / sizeof BROKEN[0])

static void test_broken_file(void **state)
{
    const BrokenFile *c = *state;
    const char *path = c->header ? make_file("broken.safetensors", c->header, NULL, c->data_len)
                                 : temp_file("broken.safetensors", c->raw, c->raw_len);
    assert_open_fails(path, c->phrase);
}

static void test_directory_is_refused(void **state)
{
    (void)state;
    assert_open_fails(temp_dir(), "is a directory");
}

static void test_missing_file_is_refused(void **state)
{
    (void)state;
    assert_open_fails("tests/no-such-file.safetensors",
                      "cannot open: No such file or directory");
}

/* Gaps between tensors and trailing bytes are accepted (documented choice),
 * and so are empty tensors sharing an offset. */
static void test_gaps_and_empty_tensors_accepted(void **state)
{
    (void)state;
    const char *path = make_file("gaps.safetensors",
                                 "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]},"
                                 "\"e\":{\"dtype\":\"F16\",\"shape\":[0,3],\"data_offsets\":[4,4]},"
                                 "\"z\":{\"dtype\":\"F16\",\"shape\":[0],\"data_offsets\":[4,4]}}",
                                 NULL, 16);
    SafeFile file;
    Error err = {{0}};
    assert_int_equal(safetensors_open(path, &file, &err), 0);
    assert_int_equal(file.count, 3);
    assert_int_equal(safetensors_find(&file, "e")->numel, 0);
    safetensors_close(&file);
}

int main(void)
{
    static const struct CMUnitTest fixed[] = {
        cmocka_unit_test(test_round_trip_values_and_shapes),
        cmocka_unit_test(test_round_trip_metadata),
        cmocka_unit_test(test_written_layout),
        cmocka_unit_test(test_write_without_tensors_or_metadata),
        cmocka_unit_test(test_write_replaces_existing_file),
        cmocka_unit_test(test_write_refuses_duplicate_names),
        cmocka_unit_test(test_write_refuses_unwritable_path),
        cmocka_unit_test(test_close_accepts_null_and_zeroed),
        cmocka_unit_test(test_f16_widens_exactly),
        cmocka_unit_test(test_every_f16_value_widens_exactly),
        cmocka_unit_test(test_bf16_widens_exactly),
        cmocka_unit_test(test_unaligned_f32_loads),
        cmocka_unit_test(test_directory_is_refused),
        cmocka_unit_test(test_missing_file_is_refused),
        cmocka_unit_test(test_gaps_and_empty_tensors_accepted),
    };
    enum { N_FIXED = sizeof fixed / sizeof fixed[0] };
    /* One named test per broken file, so a failure says which one. */
    struct CMUnitTest tests[N_FIXED + N_BROKEN];
    memcpy(tests, fixed, sizeof fixed);
    for (size_t i = 0; i < N_BROKEN; i++) {
        struct CMUnitTest t = cmocka_unit_test_prestate(test_broken_file, (void *)&BROKEN[i]);
        t.name = BROKEN[i].name;
        tests[N_FIXED + i] = t;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
