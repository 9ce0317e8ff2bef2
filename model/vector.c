/* vector.c — see vector.h. */
#include "vector.h"

#include <stdint.h>
#include <string.h>

#include "../common/util.h"
#include "clones.h"

/* Compiled three times, for AVX-512, AVX2 and any x86-64 (the loader picks
 * one when the program starts): attention calls the row forms once per
 * (query, head) over its keys' rows of d_k = 64 floats, linear.c adds a
 * bias with vec_add row by row, and wider vectors do each row in fewer
 * instructions.  The results are the same bits on every CPU: the partial
 * sums are fixed by the code (see vector.h), and no multiply-add is fused
 * (GCC fuses none under -std=c11; clang would by default, and clones.h
 * turns that off for its builds: make fuzz, the web page). */
#if defined(__x86_64__) && defined(__clang__)
/* clang 14 gives target_clones' dispatcher the name "vec_dot.ifunc" and
 * never defines "vec_dot" itself, so no other file could link to it (make
 * fuzz failed so).  Under clang the clones are static, named *_clones, and
 * the plain functions at the end of the file jump to them: one jump more
 * per call, in clang builds only.  GCC's build is as it was. */
#define VECTOR_CLONES static CLONES
#define VECTOR_NAME(name) name##_clones
#define VECTOR_WRAPPERS 1
#define MASK_CLONES VECTOR_CLONES
#elif defined(__x86_64__) && defined(__GNUC__)
#define VECTOR_CLONES CLONES
#define VECTOR_NAME(name) name
/* vec_dropout_mask's 64-bit multiplies vectorise with AVX-512DQ's
 * vpmullq, which x86-64-v4 (every AVX-512 CPU since Skylake-SP) has; GCC
 * names no clone by that one feature. */
#define MASK_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define VECTOR_CLONES
#define MASK_CLONES
#define VECTOR_NAME(name) name
#endif

/* The partial sums' tree, then the tail past the last whole 8 (from i). */
static inline float dot_finish(const float acc[8], const float *a, const float *b, int i, int n)
{
    float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < n; i++) sum += a[i] * b[i];
    return sum;
}

/* vec_dot's sum, inlined into each clone of vec_dot and vec_dot_rows so
 * that both give the same bits. */
static inline float dot(const float *a, const float *b, int n)
{
    float acc[8] = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) acc[j] += a[i + j] * b[i + j];
    return dot_finish(acc, a, b, i, n);
}

VECTOR_CLONES float VECTOR_NAME(vec_dot)(const float *a, const float *b, int n) { return dot(a, b, n); }

/* One call for a query's keys instead of one per key, four rows at a time
 * so that four chains of partial sums run side by side (each row's sums
 * are still dot's, so the same bits).  On an AMD EPYC (Zen 5), 64-float
 * rows in L1: 3.4-3.8 ns a row as one vec_dot call each, 2.9-3.1 one row
 * at a time in this loop, 2.5-2.7 four at a time; the one-row axpy calls
 * took 4.1-4.8 ns a row, vec_axpy_rows 1.6-2.1.  In a file's greedy
 * translation (1,000 en-zh dev lines, 1 thread, 3 alternated perf runs
 * each) attention's share of the samples went 10.1% -> 9.2%: there the
 * keys' rows mostly come from L2 and L3. */
VECTOR_CLONES void VECTOR_NAME(vec_dot_rows)(float *out, const float *a, const float *rows, size_t stride,
                                               int count, int n)
{
    int j = 0;
    for (; j + 4 <= count; j += 4) {
        const float *r0 = rows + (size_t)j * stride, *r1 = r0 + stride, *r2 = r1 + stride, *r3 = r2 + stride;
        float acc0[8] = {0}, acc1[8] = {0}, acc2[8] = {0}, acc3[8] = {0};
        int i = 0;
        for (; i + 8 <= n; i += 8)
            for (int l = 0; l < 8; l++) {
                acc0[l] += a[i + l] * r0[i + l];
                acc1[l] += a[i + l] * r1[i + l];
                acc2[l] += a[i + l] * r2[i + l];
                acc3[l] += a[i + l] * r3[i + l];
            }
        out[j] = dot_finish(acc0, a, r0, i, n);
        out[j + 1] = dot_finish(acc1, a, r1, i, n);
        out[j + 2] = dot_finish(acc2, a, r2, i, n);
        out[j + 3] = dot_finish(acc3, a, r3, i, n);
    }
    for (; j < count; j++) out[j] = dot(a, rows + (size_t)j * stride, n);
}

VECTOR_CLONES float VECTOR_NAME(vec_sum)(const float *a, int n)
{
    float acc[8] = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) acc[j] += a[i + j];
    float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < n; i++) sum += a[i];
    return sum;
}

VECTOR_CLONES void VECTOR_NAME(vec_add)(float *y, const float *x, int n)
{
    for (int i = 0; i < n; i++) y[i] += x[i];
}

/* y is summed 16 floats at a time in registers over all the rows (one
 * vector with AVX-512), each element still in row order, so the bits are
 * those of adding the rows to y one at a time. */
VECTOR_CLONES void VECTOR_NAME(vec_axpy_rows)(float *y, const float *w, const float *rows, size_t stride,
                                                int count, int n)
{
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        float acc[16];
        memcpy(acc, y + i, sizeof acc);
        for (int j = 0; j < count; j++) {
            const float *row = rows + (size_t)j * stride + i;
            for (int l = 0; l < 16; l++) acc[l] += w[j] * row[l];
        }
        memcpy(y + i, acc, sizeof acc);
    }
    for (; i < n; i++)
        for (int j = 0; j < count; j++) y[i] += w[j] * rows[(size_t)j * stride + i];
}

VECTOR_CLONES void VECTOR_NAME(vec_axpy_each)(float *rows, size_t stride, const float *w, const float *x,
                                                int count, int n)
{
    for (int j = 0; j < count; j++) {
        float *row = rows + (size_t)j * stride;
        for (int i = 0; i < n; i++) row[i] += w[j] * x[i];
    }
}

VECTOR_CLONES float VECTOR_NAME(vec_max)(const float *a, int n)
{
    float acc[8];
    int i = 0;
    for (int j = 0; j < 8; j++) acc[j] = a[0];
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) acc[j] = a[i + j] > acc[j] ? a[i + j] : acc[j];
    float max = acc[0];
    for (int j = 1; j < 8; j++) max = acc[j] > max ? acc[j] : max;
    for (; i < n; i++) max = a[i] > max ? a[i] : max;
    return max;
}

/* e^x for x <= 0 by Cephes' expf: x = k·ln 2 + r with k = round(x / ln 2)
 * and |r| <= ln(2)/2, e^r by a degree-7 polynomial, 2^k put straight into
 * the float's exponent bits.  Only multiplies, adds and integer bit
 * operations, so it vectorises and gives the same bits in every clone.
 * Rounding uses the 1.5·2^23 trick (adding it leaves k in the low bits of
 * the mantissa) rather than a float-to-int conversion, which would be
 * undefined behaviour for a NaN.  Below -87 the result is 0; a NaN stays
 * NaN (the comparison below is false for it).
 *
 * Below -87 is handled with an all-ones mask on the bits, not with
 * `x < -87 ? ... : ...`: from the two choices GCC made two paths through
 * the function, and without AVX-512's masked instructions it would not
 * turn paths with float arithmetic on them into vector code (an operation
 * that may raise a floating-point exception may not run where the program
 * says it does not).  So the AVX2 and SSE2 clones of vec_exp_sum were
 * scalar; with the mask every clone is vector code, with the same bits
 * (all 2^32 inputs compared with the old form).  Over a row of 5,230
 * logits on an AMD EPYC (Zen 5): 2.76 -> 0.43 ns an exponential compiled
 * for AVX2, 0.69 -> 0.25 for AVX-512 (with vec_exp_sum's 16 at a time). */
static inline float exp_nonpositive(float x)
{
    const float magic = 12582912.0f;        /* 1.5 · 2^23 */
    const uint32_t minus_87 = 0xC2AE0000u;  /* -87.0f */
    uint32_t below = -(uint32_t)(x < -87.0f); /* all ones below -87, else 0 */
    uint32_t x_bits;
    memcpy(&x_bits, &x, sizeof x_bits);
    uint32_t clamped_bits = (x_bits & ~below) | (minus_87 & below);
    float clamped;
    memcpy(&clamped, &clamped_bits, sizeof clamped);
    float shifted = clamped * 1.44269504088896341f + magic;
    float k = shifted - magic;
    float r = clamped - k * 0.693359375f;   /* ln 2 in two parts: this one */
    r = r - k * -2.12194440e-4f;            /* is exact in float times k */
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    uint32_t bits;
    memcpy(&bits, &shifted, sizeof bits);
    bits = ((bits - 0x4B400000u + 127u) << 23) & ~below; /* 2^k (k + 127, the biased exponent), or 0 */
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

VECTOR_CLONES float VECTOR_NAME(vec_exp_sum)(float *out, const float *a, float shift, int n)
{
    float acc[8] = {0};
    int i = 0;
    /* 16 exponentials at a time into e (one AVX-512 vector, two AVX2
     * ones), then added to the 8 partial sums as two blocks of 8 in order,
     * as 8 at a time would: the same bits. */
    for (; i + 16 <= n; i += 16) {
        float e[16];
        for (int j = 0; j < 16; j++) e[j] = exp_nonpositive(a[i + j] - shift);
        for (int j = 0; j < 8; j++) acc[j] += e[j];
        for (int j = 0; j < 8; j++) acc[j] += e[8 + j];
        if (out) memcpy(out + i, e, sizeof e);
    }
    if (i + 8 <= n) {
        float e[8];
        for (int j = 0; j < 8; j++) e[j] = exp_nonpositive(a[i + j] - shift);
        for (int j = 0; j < 8; j++) acc[j] += e[j];
        if (out) memcpy(out + i, e, sizeof e);
        i += 8;
    }
    float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < n; i++) {
        float e = exp_nonpositive(a[i] - shift);
        if (out) out[i] = e;
        sum += e;
    }
    return sum;
}

/* Draw j is rng_next on the state j draws on: splitmix64's state only
 * counts (util.h), so the draws are independent iterations, and the loop
 * vectorises (8 draws per AVX-512 instruction; 9x the sequential draws,
 * measured on 2^20 floats). */
MASK_CLONES void VECTOR_NAME(vec_dropout_mask)(float *mask, size_t n, uint64_t state, float keep,
                                                 uint32_t threshold)
{
    size_t pairs = n / 2;
    for (size_t j = 0; j < pairs; j++) {
        Rng rng = {state + j * RNG_GAMMA};
        uint64_t bits = rng_next(&rng);
        mask[2 * j] = (uint32_t)(bits >> 40) < threshold ? 0.0f : keep;
        mask[2 * j + 1] = (uint32_t)((bits >> 16) & 0xffffff) < threshold ? 0.0f : keep;
    }
    if (n % 2) {
        Rng rng = {state + pairs * RNG_GAMMA};
        mask[n - 1] = (uint32_t)(rng_next(&rng) >> 40) < threshold ? 0.0f : keep;
    }
}

bool vec_all_finite(const float *x, size_t n)
{
    uint32_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, &x[i], sizeof bits);
        bad |= (bits & 0x7f800000u) == 0x7f800000u;
    }
    return !bad;
}

#ifdef VECTOR_WRAPPERS
float vec_dot(const float *a, const float *b, int n)
{
    return vec_dot_clones(a, b, n);
}

float vec_sum(const float *a, int n)
{
    return vec_sum_clones(a, n);
}

void vec_add(float *y, const float *x, int n)
{
    vec_add_clones(y, x, n);
}

void vec_dot_rows(float *out, const float *a, const float *rows, size_t stride, int count, int n)
{
    vec_dot_rows_clones(out, a, rows, stride, count, n);
}

void vec_axpy_rows(float *y, const float *w, const float *rows, size_t stride, int count, int n)
{
    vec_axpy_rows_clones(y, w, rows, stride, count, n);
}

void vec_axpy_each(float *rows, size_t stride, const float *w, const float *x, int count, int n)
{
    vec_axpy_each_clones(rows, stride, w, x, count, n);
}

float vec_max(const float *a, int n)
{
    return vec_max_clones(a, n);
}

float vec_exp_sum(float *out, const float *a, float shift, int n)
{
    return vec_exp_sum_clones(out, a, shift, n);
}

void vec_dropout_mask(float *mask, size_t n, uint64_t state, float keep, uint32_t threshold)
{
    vec_dropout_mask_clones(mask, n, state, keep, threshold);
}
#endif
