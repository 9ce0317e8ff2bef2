/* gemm_i8.c — products with an int8 weight matrix (see gemm_i8.h).
 *
 * On the x86 small-M path each element is a float sum in 16 (AVX-512) or
 * 8 (AVX2) lanes, in k order, reduced at the end and times its row's
 * scale; which of the path's kernels computes it never changes that, so
 * within GEMM_I8_SMALL_M rows a row of A gets the same bits whatever rows
 * are beside it.  One row of A (a batch-1 decoding step) takes 8 rows of
 * q at a time, 8 independent chains (what keeps both FMA units busy, as
 * gemm_f16.c's one-row tiles once found), the int8 values sign-extended and
 * converted in registers, the next 8 rows fetched meanwhile: q is read
 * once, at a quarter of float32's bytes.  Several rows (a beam, a
 * mini-batch) convert each 16 values once for ROWS_AVX512 (6) rows of A
 * (AVX-512), or each 8 once for ROWS_AVX2 (3) rows of A (AVX2: 16
 * registers), 4 rows of q at a time;
 * the next group of rows of A converts them again, from L1.  (AVX2 once
 * widened the 4 rows of q into a float buffer first, which the groups
 * then read: on an AMD EPYC (Zen 3), --int8 beam 4 on 300 en-zh dev lines
 * one at a time took 7.0-7.2 s of CPU, 5.0-5.2 s in registers; batched,
 * 4.9-5.1 s against 4.5-4.6 s; the same translations.) */
#include "gemm_i8.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "gemm.h"
#include "gemm_f16.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define GEMM_I8_X86 1
#include <immintrin.h>
#else
#define GEMM_I8_X86 0
#endif

/* Rows of q one tile covers. */
#define TILE_ROWS 8
/* Rows of A that share each converted value of q on the several-row paths
 * (rows_body_avx512, rows_body_avx2). */
enum { ROWS_AVX512 = 6, ROWS_AVX2 = 3 };

void gemm_i8_nt_reference(float *C, const float *A, const int8_t *q, const float *scale, int M, int N,
                          int K)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double sum = 0.0;
            for (int k = 0; k < K; k++) sum += (double)A[(size_t)i * K + k] * q[(size_t)j * K + k];
            C[(size_t)i * N + j] = (float)(sum * scale[j]);
        }
}

float gemm_i8_quantize_row(int8_t *q, const float *w, int K)
{
    float amax = 0.0f;
    for (int k = 0; k < K; k++) amax = fmaxf(amax, fabsf(w[k]));
    if (amax == 0.0f) {
        memset(q, 0, (size_t)K);
        return 0.0f;
    }
    float scale = amax / 127.0f;
    for (int k = 0; k < K; k++) {
        long v = lrintf(w[k] / scale);
        q[k] = (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
    }
    return scale;
}

/* ---- the x86 kernels ------------------------------------------------------ */

#if GEMM_I8_X86
/* Columns j0..N-1 of C by plain loops, each element in k order: the rows
 * of q past the last whole tile on the x86 small-M path. */
static void plain_columns(float *C, const float *A, const int8_t *q, const float *scale, int M, int N, int K,
                          int j0)
{
    for (int i = 0; i < M; i++)
        for (int j = j0; j < N; j++) {
            const float *a = A + (size_t)i * K;
            const int8_t *b = q + (size_t)j * K;
            float sum = 0.0f;
            for (int k = 0; k < K; k++) sum += a[k] * (float)b[k];
            C[(size_t)i * N + j] = sum * scale[j];
        }
}

/* 16 (AVX-512) or 8 (AVX2) int8 values as floats: sign-extended, then
 * converted (exact). */
__attribute__((target("avx512f"), always_inline))
static inline __m512 widen16(const int8_t *p)
{
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)p)));
}
__attribute__((target("avx2"), always_inline))
static inline __m256 widen8(const int8_t *p)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p)));
}

/* Ask for bytes p .. p+n-1 in the cache (the next rows of q). */
static void fetch(const int8_t *p, size_t n)
{
    for (size_t o = 0; o < n; o += 64) _mm_prefetch((const char *)p + o, _MM_HINT_T0);
}

/* c[0..TILE_ROWS-1] = scale · (a · rows 0..TILE_ROWS-1 of q), the k tail
 * (K not a multiple of the vector width) added after the vector sums; the
 * int8 values widened in registers.  With `next`, the tile after this one
 * is fetched into the cache on the way. */
__attribute__((target("avx512f")))
static void tile_avx512(float *c, const float *a, const int8_t *q, const float *scale, const int8_t *next, int K)
{
    __m512 acc[TILE_ROWS];
#pragma GCC unroll 8
    for (int r = 0; r < TILE_ROWS; r++) acc[r] = _mm512_setzero_ps();
    int k = 0;
    for (; k + 16 <= K; k += 16) {
        __m512 av = _mm512_loadu_ps(a + k);
        if (next && (k & 63) == 0)
#pragma GCC unroll 8
            for (int r = 0; r < TILE_ROWS; r++) _mm_prefetch((const char *)next + (size_t)r * K + k, _MM_HINT_T0);
#pragma GCC unroll 8
        for (int r = 0; r < TILE_ROWS; r++) {
            __m512 b = widen16(q + (size_t)r * K + k);
            acc[r] = _mm512_fmadd_ps(av, b, acc[r]);
        }
    }
    for (int r = 0; r < TILE_ROWS; r++) {
        float sum = _mm512_reduce_add_ps(acc[r]);
        for (int t = k; t < K; t++) sum += a[t] * (float)q[(size_t)r * K + t];
        c[r] = sum * scale[r];
    }
}

/* The horizontal sum of 8 lanes, always in this tree. */
__attribute__((target("avx2"), always_inline))
static inline float hsum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* tile_avx512 in 8 lanes. */
__attribute__((target("avx2,fma")))
static void tile_avx2(float *c, const float *a, const int8_t *q, const float *scale, const int8_t *next, int K)
{
    __m256 acc[TILE_ROWS];
#pragma GCC unroll 8
    for (int r = 0; r < TILE_ROWS; r++) acc[r] = _mm256_setzero_ps();
    int k = 0;
    for (; k + 8 <= K; k += 8) {
        __m256 av = _mm256_loadu_ps(a + k);
        if (next && (k & 63) == 0)
#pragma GCC unroll 8
            for (int r = 0; r < TILE_ROWS; r++) _mm_prefetch((const char *)next + (size_t)r * K + k, _MM_HINT_T0);
#pragma GCC unroll 8
        for (int r = 0; r < TILE_ROWS; r++) {
            __m256 b = widen8(q + (size_t)r * K + k);
            acc[r] = _mm256_fmadd_ps(av, b, acc[r]);
        }
    }
    for (int r = 0; r < TILE_ROWS; r++) {
        float sum = hsum8(acc[r]);
        for (int t = k; t < K; t++) sum += a[t] * (float)q[(size_t)r * K + t];
        c[r] = sum * scale[r];
    }
}

/* R rows of A (1 to ROWS_AVX2) against 4 rows of q, each 8 values widened in
 * registers once for all R: R · 4 sums, each the one tile_avx2 makes (8
 * lanes in k order, hsum8), so an element's bits are the same in either
 * kernel.  (16 registers: 12 sums, 3 rows of A, one of q.) */
__attribute__((target("avx2,fma"), always_inline))
static inline void rows_body_avx2(float *c, size_t ldc, const float *a, const int8_t *q, const float *scale,
                                  const int R, int K)
{
    __m256 acc[ROWS_AVX2][4];
#pragma GCC unroll 3
    for (int i = 0; i < R; i++)
#pragma GCC unroll 4
        for (int r = 0; r < 4; r++) acc[i][r] = _mm256_setzero_ps();
    int k = 0;
    for (; k + 8 <= K; k += 8) {
        __m256 av[ROWS_AVX2];
#pragma GCC unroll 3
        for (int i = 0; i < R; i++) av[i] = _mm256_loadu_ps(a + (size_t)i * K + k);
#pragma GCC unroll 4
        for (int r = 0; r < 4; r++) {
            __m256 b = widen8(q + (size_t)r * K + k);
#pragma GCC unroll 3
            for (int i = 0; i < R; i++) acc[i][r] = _mm256_fmadd_ps(av[i], b, acc[i][r]);
        }
    }
    for (int i = 0; i < R; i++)
        for (int r = 0; r < 4; r++) {
            float sum = hsum8(acc[i][r]);
            for (int t = k; t < K; t++) sum += a[(size_t)i * K + t] * (float)q[(size_t)r * K + t];
            c[(size_t)i * ldc + r] = sum * scale[r];
        }
}

__attribute__((target("avx2,fma")))
static void rows_avx2(float *c, size_t ldc, const float *a, const int8_t *q, const float *scale, int R, int K)
{
    if (R >= ROWS_AVX2) rows_body_avx2(c, ldc, a, q, scale, ROWS_AVX2, K);
    else if (R == 2) rows_body_avx2(c, ldc, a, q, scale, 2, K);
    else rows_body_avx2(c, ldc, a, q, scale, 1, K);
}

/* R rows of A (1 to ROWS_AVX512) against 4 rows of q, each 16 values of
 * q widened in registers once for all R: R · 4 sums, each the one
 * tile_avx512 makes (16 lanes in k order, then reduced alike), so an
 * element's bits are the same in either kernel.  24 sums, 6 rows of A and
 * one of q fill 31 of the 32 registers; 4 rows at a time (16 sums), 1,000
 * en-zh dev lines mini-batched on 1 thread (Intel Xeon, CPU time, best of
 * 3 alternated runs) took 1.29 s greedy and 4.59 s with beam 4, 6 rows
 * 1.22 and 4.33 s, the same translations. */
__attribute__((target("avx512f"), always_inline))
static inline void rows_body_avx512(float *c, size_t ldc, const float *a, const int8_t *q, const float *scale,
                                    const int R, int K)
{
    __m512 acc[ROWS_AVX512][4];
#pragma GCC unroll 6
    for (int i = 0; i < R; i++)
#pragma GCC unroll 4
        for (int r = 0; r < 4; r++) acc[i][r] = _mm512_setzero_ps();
    int k = 0;
    for (; k + 16 <= K; k += 16) {
        __m512 av[ROWS_AVX512];
#pragma GCC unroll 6
        for (int i = 0; i < R; i++) av[i] = _mm512_loadu_ps(a + (size_t)i * K + k);
#pragma GCC unroll 4
        for (int r = 0; r < 4; r++) {
            __m512 b = widen16(q + (size_t)r * K + k);
#pragma GCC unroll 6
            for (int i = 0; i < R; i++) acc[i][r] = _mm512_fmadd_ps(av[i], b, acc[i][r]);
        }
    }
    for (int i = 0; i < R; i++)
        for (int r = 0; r < 4; r++) {
            float sum = _mm512_reduce_add_ps(acc[i][r]);
            for (int t = k; t < K; t++) sum += a[(size_t)i * K + t] * (float)q[(size_t)r * K + t];
            c[(size_t)i * ldc + r] = sum * scale[r];
        }
}

__attribute__((target("avx512f")))
static void rows_avx512(float *c, size_t ldc, const float *a, const int8_t *q, const float *scale, int R, int K)
{
    if (R >= ROWS_AVX512) rows_body_avx512(c, ldc, a, q, scale, ROWS_AVX512, K);
    else if (R == 5) rows_body_avx512(c, ldc, a, q, scale, 5, K);
    else if (R == 4) rows_body_avx512(c, ldc, a, q, scale, 4, K);
    else if (R == 3) rows_body_avx512(c, ldc, a, q, scale, 3, K);
    else if (R == 2) rows_body_avx512(c, ldc, a, q, scale, 2, K);
    else rows_body_avx512(c, ldc, a, q, scale, 1, K);
}

/* out[0..n-1] = in[0..n-1] as floats (exact), 8 at a time. */
__attribute__((target("avx2")))
static size_t widen_avx2(float *out, const int8_t *in, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, widen8(in + i));
    return i;
}

static bool use_vector_kernels(void)
{
    return strcmp(gemm_i8_kernel_name(), "generic") != 0;
}
#endif

/* out[0..n-1] = in[0..n-1] as floats (exact: small integers). */
static void widen(float *out, const int8_t *in, size_t n)
{
    size_t i = 0;
#if GEMM_I8_X86
    if (use_vector_kernels()) i = widen_avx2(out, in, n);
#endif
    for (; i < n; i++) out[i] = (float)in[i];
}

#if GEMM_I8_X86
/* All of C, down q once, fetching ahead.
 *   - One row of A (a batch-1 decoding step): TILE_ROWS rows of q at a
 *     time, widened in registers.
 *   - More rows (a beam, a mini-batch), AVX-512: 4 rows of q at a time,
 *     widened in registers once per 6 rows of A (rows_avx512); AVX2: 4
 *     rows of q, which the rows of A pass over 3 at a time, widened in
 *     registers once per group (rows_avx2).
 * An element's bits depend on its row of q alone (inside the last whole
 * tile, the same sum whichever kernel; past it, plain_columns), never on M. */
static void dot_rows(bool avx512, float *C, const float *A, const int8_t *q, const float *scale, int M, int N,
                     int K)
{
    int whole = N - N % TILE_ROWS;
    if (M == 1) {
        for (int j = 0; j < whole; j += TILE_ROWS) {
            const int8_t *tile = q + (size_t)j * K;
            const int8_t *next = j + 2 * TILE_ROWS <= whole ? tile + (size_t)TILE_ROWS * K : NULL;
            if (avx512) tile_avx512(C + j, A, tile, scale + j, next, K);
            else tile_avx2(C + j, A, tile, scale + j, next, K);
        }
    } else if (avx512) {
        for (int j = 0; j < whole; j += 4) {
            const int8_t *tile = q + (size_t)j * K;
            if (j + 8 <= whole)
                fetch(tile + (size_t)4 * K, (size_t)4 * K);
            for (int i = 0; i < M; i += ROWS_AVX512)
                rows_avx512(C + (size_t)i * N + j, (size_t)N, A + (size_t)i * K, tile, scale + j, M - i, K);
        }
    } else {
        for (int j = 0; j < whole; j += 4) {
            const int8_t *tile = q + (size_t)j * K;
            if (j + 8 <= whole)
                fetch(tile + (size_t)4 * K, (size_t)4 * K);
            for (int i = 0; i < M; i += ROWS_AVX2)
                rows_avx2(C + (size_t)i * N + j, (size_t)N, A + (size_t)i * K, tile, scale + j, M - i, K);
        }
    }
    plain_columns(C, A, q, scale, M, N, K, whole);
}
#endif

/* ---- choosing and the large-M path ------------------------------------------ */

const char *gemm_i8_kernel_name(void)
{
    return gemm_f16_kernel_name();
}

/* gemm_nt_widened's view of an int8 matrix (its values, not yet scaled). */
static void widen_rows(float *out, const void *q, size_t first, size_t count, int K)
{
    widen(out, (const int8_t *)q + first * (size_t)K, count * (size_t)K);
}

void gemm_i8_nt(float *C, const float *A, const int8_t *q, const float *scale, int M, int N, int K)
{
    if (M <= 0 || N <= 0) return;
#if GEMM_I8_X86
    if (M <= GEMM_I8_SMALL_M && use_vector_kernels()) {
        dot_rows(strcmp(gemm_i8_kernel_name(), "avx512") == 0, C, A, q, scale, M, N, K);
        return;
    }
#endif
    /* Large M, or no x86 kernel: q widened a block of rows at a time
     * (exactly: small integers) and multiplied by gemm_nt (on the plain C
     * path its kernel sums each element in k order whatever M), then each
     * column times its row's scale. */
    gemm_nt_widened(C, A, q, widen_rows, M, N, K);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) C[(size_t)i * N + j] *= scale[j];
}
