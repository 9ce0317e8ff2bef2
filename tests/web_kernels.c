/* web_kernels.c — the WebAssembly SIMD128 kernels against the plain code.
 *
 * make web compiles this with emcc, beside the engine, into
 * build/web/web_kernels.js; tests/test_web.c runs it under node.  The
 * SIMD128 code exists only in WebAssembly, so no native test can reach
 * it:
 *   - gemm_nt (model/gemm.c's generic_dots) against gemm_nt_reference,
 *     within test_gemm's tolerance, 1e-5 · K · max|A| · max|B| (+ 1e-6 ·
 *     max|C₀| when accumulating), on shapes that hit every edge of its
 *     4 × 2 tiles and the K mod 4 tail, and the model's own;
 *   - what gemm.h promises beyond accuracy: a row's bits do not depend on
 *     the other rows (each row alone gives the same), nor on N;
 *   - safetensors_to_f32's SIMD128 widening of float16: every one of the
 *     65,536 halves, read from a file, gives f16_to_f32's bits.
 * Plain C, no cmocka (not compiled for WebAssembly): each failure is
 * printed, and the exit status is the number of failed checks (capped).
 * Not test_*.c, so the native test runner does not build it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "../model/gemm.h"
#include "../model/safetensors.h"

static int failures, checks;

static void check(int ok, const char *what)
{
    checks++;
    if (!ok) {
        failures++;
        printf("FAIL %s\n", what);
    }
}

typedef struct {
    int m, n, k;
} Shape;

/* test_gemm's shapes plus every M of a decoding step (1..9 rows against
 * the 4-row tiles) and odd N against the 2-column tiles. */
static const Shape SHAPES[] = {
    {1, 1, 1},      {1, 1, 7},     {2, 3, 1},       {7, 13, 29},    {13, 7, 29},   {12, 32, 256},
    {11, 31, 257},  {25, 33, 513}, {97, 5, 300},    {5, 97, 300},   {1, 1024, 256}, {1, 256, 1024},
    {3, 7000, 31},  {33, 7000, 256}, {4, 2858, 256}, {2, 17, 35},   {17, 33, 7},   {33, 17, 17},
    {7, 33, 1},     {1, 17, 33},   {49, 65, 263},   {33, 1, 17},    {4, 5230, 256}, {4, 256, 1024},
    {5, 9, 6},      {6, 3, 5},     {8, 7, 4},       {9, 11, 3},     {3, 5, 2},
};

static float *random_matrix(size_t n, float scale, Rng *rng)
{
    float *x = xmalloc((n ? n : 1) * sizeof *x);
    for (size_t i = 0; i < n; i++) x[i] = scale * (2.0f * rng_uniform(rng) - 1.0f);
    return x;
}

static float max_abs(const float *x, size_t n)
{
    float m = 0.0f;
    for (size_t i = 0; i < n; i++) m = fmaxf(m, fabsf(x[i]));
    return m;
}

static void check_shape(Shape s, uint64_t seed)
{
    Rng rng;
    rng_seed(&rng, seed);
    size_t mk = (size_t)s.m * s.k, nk = (size_t)s.n * s.k, mn = (size_t)s.m * s.n;
    float *a = random_matrix(mk, 1.0f, &rng), *b = random_matrix(nk, 3.0f, &rng);
    float *c0 = random_matrix(mn, 10.0f, &rng);
    float tol = 1e-5f * (float)s.k * max_abs(a, mk) * max_abs(b, nk);
    float *got = xmalloc(mn * sizeof *got), *want = xmalloc(mn * sizeof *want);
    char what[160];
    for (int accumulate = 0; accumulate <= 1; accumulate++) {
        memcpy(got, c0, mn * sizeof *got);
        memcpy(want, c0, mn * sizeof *want);
        gemm_nt(got, a, b, s.m, s.n, s.k, accumulate);
        gemm_nt_reference(want, a, b, s.m, s.n, s.k, accumulate);
        float limit = accumulate ? tol + 1e-6f * max_abs(c0, mn) : tol;
        size_t worst = 0;
        for (size_t i = 0; i < mn; i++)
            if (!(fabsf(got[i] - want[i]) <= fabsf(got[worst] - want[worst]))) worst = i;
        snprintf(what, sizeof what, "gemm_nt %dx%dx%d accumulate %d: C[%zu] = %.9g, reference %.9g (tolerance %g)",
                 s.m, s.n, s.k, accumulate, worst, (double)got[worst], (double)want[worst], (double)limit);
        check(fabsf(got[worst] - want[worst]) <= limit, what);
    }
    /* Each row alone, and the first column alone: the same bits. */
    gemm_nt(got, a, b, s.m, s.n, s.k, false);
    float *row = xmalloc((size_t)s.n * sizeof *row);
    for (int i = 0; i < s.m; i++) {
        gemm_nt(row, a + (size_t)i * s.k, b, 1, s.n, s.k, false);
        snprintf(what, sizeof what, "gemm_nt %dx%dx%d: row %d alone has other bits", s.m, s.n, s.k, i);
        check(memcmp(row, got + (size_t)i * s.n, (size_t)s.n * sizeof *row) == 0, what);
    }
    for (int i = 0; i < s.m; i++) {
        gemm_nt(row, a + (size_t)i * s.k, b, 1, 1, s.k, false);
        snprintf(what, sizeof what, "gemm_nt %dx%dx%d: C[%d,0] with N = 1 has other bits", s.m, s.n, s.k, i);
        check(memcmp(row, got + (size_t)i * s.n, sizeof *row) == 0, what);
    }
    free(row);
    free(got);
    free(want);
    free(a);
    free(b);
    free(c0);
}

/* A safetensors file holding one F16 tensor of all 65,536 bit patterns
 * (one value more, so the 8-wide loop also leaves a scalar tail). */
static void check_widening(void)
{
    enum { COUNT = 65536 + 1 };
    const char *path = "/web-kernels-f16.safetensors";
    char header[128];
    int len = snprintf(header, sizeof header, "{\"x\":{\"dtype\":\"F16\",\"shape\":[%d],\"data_offsets\":[0,%d]}}",
                       COUNT, 2 * COUNT);
    FILE *f = fopen(path, "wb");
    check(f != NULL, "cannot write the float16 file");
    if (!f) return;
    unsigned char size[8] = {(unsigned char)len};
    fwrite(size, 1, 8, f);
    fwrite(header, 1, (size_t)len, f);
    for (int i = 0; i < COUNT; i++) {
        unsigned char h[2] = {(unsigned char)(i & 0xff), (unsigned char)((i >> 8) & 0xff)};
        fwrite(h, 1, 2, f);
    }
    fclose(f);
    SafeFile file;
    Error err = {{0}};
    if (safetensors_open(path, &file, &err)) {
        check(0, err.message);
        return;
    }
    float *out = xmalloc(COUNT * sizeof *out);
    check(safetensors_to_f32(&file, safetensors_find(&file, "x"), out, &err) == 0, "cannot read the float16 tensor");
    int wrong = 0;
    for (int i = 0; i < COUNT; i++) {
        float want = safetensors_f16_to_f32_scalar((uint16_t)i);
        if (memcmp(&out[i], &want, sizeof want) != 0 && wrong++ < 5)
            printf("  half 0x%04x: %.9g (SIMD128), %.9g (f16_to_f32)\n", i & 0xffff, (double)out[i], (double)want);
    }
    char what[96];
    snprintf(what, sizeof what, "float16 widening: %d of %d values with other bits", wrong, COUNT);
    check(wrong == 0, what);
    free(out);
    safetensors_close(&file);
}

int main(void)
{
    for (size_t i = 0; i < sizeof SHAPES / sizeof *SHAPES; i++) check_shape(SHAPES[i], 100 + i);
    check_widening();
    printf("%d checks, %d failed (gemm kernel: %s)\n", checks, failures, gemm_kernel_name());
    return failures > 100 ? 100 : failures;
}
