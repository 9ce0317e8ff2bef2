/* gemm_f16.c — see gemm_f16.h.
 *
 * A tile of C is R rows of A by W panels (16·W outputs), its R·W vectors
 * of sums in registers; per k it widens W vectors of 16 weights (one per
 * panel, read in address order), broadcasts R values of A and does R·W
 * fused multiply-adds.  So a widened value serves R rows, and there is
 * nothing to add up at the end: each lane of an accumulator is one output.
 *   - AVX-512: up to 12 rows × 2 panels (24 accumulators, 2 widened
 *     vectors, 1 broadcast: 27 of the 32 registers); one row of A (a
 *     batch-1 decoding step) takes 8 panels, 8 independent chains, which
 *     is what keeps both FMA units busy (a fused multiply-add's result is
 *     ready 4 cycles after it starts, and a core starts two a cycle).
 *   - AVX2: 6 rows × 1 panel (12 accumulators of 8 lanes, of the 16
 *     registers); one row takes 4 panels (8 chains).
 *   - generic (no F16C, or TRANSLATE_GEMM=generic): plain C, fmaf in the
 *     same order, so the same bits as the x86 kernels (model.c keeps
 *     float16 only where an x86 kernel runs; this path serves tests).
 *
 * Why panels: the kernels this replaced read B row-major, as the file
 * stores it, and summed each output as 16 partial sums along k, added up
 * at the end of each tile.  On an Intel Xeon (family 6 model 167, 1
 * thread, best of 30 timings) 32 rows × 1024 × 256 ran at 137 GF/s, the
 * adding up a third of a tile's time at K = 256; as panels, 192 GF/s
 * (8 rows: 117 -> 184; 4 rows × 5230 × 256, beam 4's output projection:
 * 88 -> 124); the same shapes as one row: 1024 outputs 63 -> 75, 5230
 * outputs 42 -> 38.  A file translated in mini-batches spent 54%
 * (greedy) and 78% (beam 4) of its time in them.  The price is the
 * packing, at load (gemm_f16_pack): the matrices are read from the
 * file into a block of their own at each start (model.c: 14 MB for
 * en-zh; start-up with an empty sentence 5.1 -> 6.7-7.0 ms, hyperfine,
 * 2 x 80 and 150 runs alternated against bd12f89 on the Intel Xeon, the
 * system time 1.4-1.8 -> 3.8-4.3 ms: most of it the kernel clearing the
 * fresh pages, and the copy itself), and a
 * tied output projection's embedding lookups read a row across its panel.
 *
 * Streaming B: a batch-1 step reads every weight once from L3 or memory;
 * a row's tile fetches the panels FETCH_AHEAD (16) panels on from its
 * own (_mm_prefetch, spread over its k loop) while it computes.
 * decode_bench on an Intel Xeon (family 6 model 167), 400 dev sentences,
 * ms per decoder step, 3 runs each: AVX-512 (8-panel tiles) fetching the
 * next tile's panels 0.33, 16 on 0.29-0.32, 24 on 0.28-0.32, 40 on
 * 0.31-0.33, the replaced kernels 0.29-0.33; AVX2 (4-panel tiles) 8 on
 * 0.342, 16 on 0.312-0.313, 24 on 0.317-0.318, the replaced 0.319.
 *
 * Threads: only for more than GEMM_F16_SMALL_M rows (a long sentence's or
 * a mini-batch's encoder), by blocks of panels, each thread all rows of
 * its panels; rows of A in blocks of ROW_BLOCK so those a tile re-reads
 * stay in L2.  A batch-1 step's products are tens of microseconds each,
 * about what waking a worker costs; a mini-batch's were tried split
 * between 2 threads (AMD EPYC Zen 4): a file's greedy decoding took 5%
 * less wall time and 20% more CPU, and a single sentence with beam 4 paid
 * for starting the worker (12 -> 18 ms). */
#include "gemm_f16.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "gemm.h"
#include "parallel.h"
#include "safetensors.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define GEMM_F16_X86 1
#include <immintrin.h>
#else
#define GEMM_F16_X86 0
#endif

enum { P = GEMM_F16_PANEL };

size_t gemm_f16_panels_size(int N, int K) { return (size_t)(N + P - 1) / P * P * (size_t)K; }

/* ---- packing ------------------------------------------------------------- */

static bool is_finite_f16(uint16_t x) { return (x & 0x7c00u) != 0x7c00u; }

/* Values k0.. of a panel (rows j0..j0+15 of B, those below N; zeros past
 * it), one at a time. */
static bool pack_plain(uint16_t *panel, const uint16_t *B, int j0, int k0, int N, int K)
{
    bool finite = true;
    for (int k = k0; k < K; k++)
        for (int l = 0; l < P; l++) {
            uint16_t x = j0 + l < N ? B[(size_t)(j0 + l) * K + k] : 0;
            finite &= is_finite_f16(x);
            panel[(size_t)k * P + l] = x;
        }
    return finite;
}

#if GEMM_F16_X86
/* A whole panel, 8 values of k at a time: 16 rows × 8 values transposed in
 * registers (rows j0..j0+7 in the low 128 bits, j0+8.. in the high; three
 * levels of interleaving, 16-, 32- and 64-bit, give the 8 vectors of
 * values k, k+1, ... of all 16 rows), checked for Inf/NaN on the way. */
__attribute__((target("avx2")))
static int pack_avx2(uint16_t *panel, const uint16_t *B, int j0, int K, bool *finite)
{
    const uint16_t *lo = B + (size_t)j0 * K, *hi = lo + (size_t)8 * K;
    const __m256i exponent = _mm256_set1_epi16(0x7c00);
    __m256i bad = _mm256_setzero_si256();
    int k = 0;
    for (; k + 8 <= K; k += 8) {
        __m256i a[8], t[8], u[8];
#pragma GCC unroll 8
        for (int l = 0; l < 8; l++) {
            a[l] = _mm256_inserti128_si256(
                _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(lo + (size_t)l * K + k))),
                _mm_loadu_si128((const __m128i *)(hi + (size_t)l * K + k)), 1);
            bad = _mm256_or_si256(bad, _mm256_cmpeq_epi16(_mm256_and_si256(a[l], exponent), exponent));
        }
#pragma GCC unroll 4
        for (int l = 0; l < 4; l++) {
            t[l] = _mm256_unpacklo_epi16(a[2 * l], a[2 * l + 1]);     /* k..k+3 of rows 2l, 2l+1 */
            t[l + 4] = _mm256_unpackhi_epi16(a[2 * l], a[2 * l + 1]); /* k+4..k+7 */
        }
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++) /* h = 0: k..k+3, 1: k+4..k+7 */
#pragma GCC unroll 2
            for (int l = 0; l < 2; l++) {
                u[4 * h + l] = _mm256_unpacklo_epi32(t[4 * h + 2 * l], t[4 * h + 2 * l + 1]);
                u[4 * h + l + 2] = _mm256_unpackhi_epi32(t[4 * h + 2 * l], t[4 * h + 2 * l + 1]);
            }
        /* u[4h + 0]: rows 0-3, values k+4h, k+4h+1; u[4h + 1]: rows 4-7, the same;
         * u[4h + 2], u[4h + 3]: values k+4h+2, k+4h+3 */
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++)
#pragma GCC unroll 2
            for (int q = 0; q < 2; q++) {
                __m256i r = u[4 * h + 2 * q], s = u[4 * h + 2 * q + 1];
                _mm256_storeu_si256((__m256i *)(panel + (size_t)(k + 4 * h + 2 * q) * P),
                                    _mm256_unpacklo_epi64(r, s));
                _mm256_storeu_si256((__m256i *)(panel + (size_t)(k + 4 * h + 2 * q + 1) * P),
                                    _mm256_unpackhi_epi64(r, s));
            }
    }
    *finite = _mm256_testz_si256(bad, bad);
    return k;
}
#endif

static bool have_f16c(void);

bool gemm_f16_pack(uint16_t *panels, const uint16_t *B, int N, int K)
{
    bool finite = true;
    for (int j0 = 0; j0 < N; j0 += P) {
        uint16_t *panel = panels + (size_t)j0 * K;
        int k = 0;
#if GEMM_F16_X86
        bool ok = true;
        if (j0 + P <= N && have_f16c()) k = pack_avx2(panel, B, j0, K, &ok);
        finite &= ok;
#endif
        finite &= pack_plain(panel, B, j0, k, N, K);
    }
    return finite;
}

/* The row's values, 16 apart, gathered a block at a time and widened as a
 * row-major row is (gemm_f16_widen): a tied embedding's lookup runs for
 * every row of every decoding step. */
void gemm_f16_panel_row(float *out, const uint16_t *panels, int j, int K)
{
    const uint16_t *panel = panels + (size_t)(j / P * P) * K + j % P;
    uint16_t row[256];
    for (int k0 = 0; k0 < K; k0 += 256) {
        int n = K - k0 < 256 ? K - k0 : 256;
        for (int k = 0; k < n; k++) row[k] = panel[(size_t)(k0 + k) * P];
        gemm_f16_widen(out + k0, row, (size_t)n);
    }
}

/* ---- the plain path ------------------------------------------------------ */

void gemm_f16_nt_reference(float *C, const float *A, const uint16_t *B, int M, int N, int K)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double sum = 0.0;
            for (int k = 0; k < K; k++)
                sum += (double)A[(size_t)i * K + k] *
                       safetensors_f16_to_f32_scalar(B[(size_t)j * K + k]);
            C[(size_t)i * N + j] = (float)sum;
        }
}

/* Rows i0..i1-1 of C, panels p0..p1-1, each panel widened once; each
 * output one chain of fmaf, k ascending from zero, as the x86 kernels. */
static void tiles_generic(float *C, const float *A, const uint16_t *panels, int i0, int i1, int p0, int p1,
                          int N, int K)
{
    float *w = xmalloc((size_t)P * (K + 1) * sizeof *w), acc[P];
    for (int p = p0; p < p1; p++) {
        gemm_f16_widen(w, panels + (size_t)p * P * K, (size_t)P * K);
        int cols = N - p * P < P ? N - p * P : P;
        for (int i = i0; i < i1; i++) {
            const float *a = A + (size_t)i * K;
            for (int l = 0; l < P; l++) acc[l] = 0.0f;
            for (int k = 0; k < K; k++)
                for (int l = 0; l < P; l++) acc[l] = fmaf(a[k], w[(size_t)k * P + l], acc[l]);
            memcpy(C + (size_t)i * N + (size_t)p * P, acc, (size_t)cols * sizeof *acc);
        }
    }
    free(w);
}

/* ---- the x86 kernels (F16C + AVX2 + FMA, or AVX-512) ---------------------- */

#if GEMM_F16_X86
static bool have_f16c(void)
{
    /* Every CPU with AVX2 has F16C, and clang's __builtin_cpu_supports
     * does not know "f16c" (as safetensors.c). */
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

/* Fetches [*from, end) into the cache, `step` bytes (whole lines) per call:
 * the next tile's panels, spread over this tile's k loop. */
static inline void fetch_ahead(const char **from, const char *end, size_t step)
{
    for (size_t o = 0; o < step && *from < end; o += 64, *from += 64) _mm_prefetch(*from, _MM_HINT_T0);
}

static size_t fetch_step(const char *from, const char *end, int K)
{
    return from && K > 0 ? ((size_t)(end - from) / (size_t)K + 63) & ~(size_t)63 : 0;
}

/* Rows of A in an AVX-512 tile of more than one row (see the top). */
enum { ROWS_AVX512 = 12, PANELS_AVX512 = 2, ROW_PANELS_AVX512 = 8 };

/* An R×W tile (R rows of A from a, lda apart; W panels from b) into c (ldc
 * apart; cols outputs, the rest of the last panel padding).  R and W are
 * constants after inlining (the switches below), so the accumulators stay
 * in registers.  [pf, pf_end): bytes to fetch into the cache meanwhile. */
__attribute__((target("avx512f,fma,f16c"), always_inline))
static inline void tile_body_avx512(float *c, size_t ldc, const float *a, size_t lda, const uint16_t *b,
                                    int cols, const char *pf, const char *pf_end, int R, int W, int K)
{
    __m512 acc[ROWS_AVX512][ROW_PANELS_AVX512];
#pragma GCC unroll 12
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int w = 0; w < W; w++) acc[r][w] = _mm512_setzero_ps();
    size_t pf_step = fetch_step(pf, pf_end, K);
    for (int k = 0; k < K; k++) {
        if (pf) fetch_ahead(&pf, pf_end, pf_step);
        __m512 x[ROW_PANELS_AVX512];
#pragma GCC unroll 8
        for (int w = 0; w < W; w++)
            x[w] = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(b + ((size_t)w * K + k) * P)));
#pragma GCC unroll 12
        for (int r = 0; r < R; r++) {
            __m512 v = _mm512_set1_ps(a[(size_t)r * lda + k]);
#pragma GCC unroll 8
            for (int w = 0; w < W; w++) acc[r][w] = _mm512_fmadd_ps(v, x[w], acc[r][w]);
        }
    }
#pragma GCC unroll 12
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int w = 0; w < W; w++) {
            int n = cols - w * P;
            float *out = c + (size_t)r * ldc + (size_t)w * P;
            if (n >= P) _mm512_storeu_ps(out, acc[r][w]);
            else if (n > 0) _mm512_mask_storeu_ps(out, (__mmask16)((1u << n) - 1), acc[r][w]);
        }
}

#define ROW_CASE(W) \
    case W: tile_body_avx512(c, 0, a, 0, b, cols, pf, pf_end, 1, W, K); break;

/* One row of A against W <= 8 panels. */
__attribute__((target("avx512f,fma,f16c")))
static void row_tile_avx512(float *c, const float *a, const uint16_t *b, int cols, const char *pf,
                            const char *pf_end, int W, int K)
{
    switch (W) {
    ROW_CASE(1) ROW_CASE(2) ROW_CASE(3) ROW_CASE(4) ROW_CASE(5) ROW_CASE(6) ROW_CASE(7) ROW_CASE(8)
    default: ASSERT(0);
    }
}
#undef ROW_CASE

#define TILE_CASE(R) \
    case R: tile_body_avx512(c, ldc, a, (size_t)K, b, cols, NULL, NULL, R, PANELS_AVX512, K); break;

/* R <= 12 rows of A against PANELS_AVX512 panels, both of which exist
 * (tiles() gives an odd last panel one-panel tiles instead; the second
 * panel's rows past N are the padding, read but never stored). */
__attribute__((target("avx512f,fma,f16c")))
static void tile_avx512(float *c, size_t ldc, const float *a, const uint16_t *b, int cols, int R, int K)
{
    switch (R) {
    TILE_CASE(1) TILE_CASE(2) TILE_CASE(3) TILE_CASE(4) TILE_CASE(5) TILE_CASE(6)
    TILE_CASE(7) TILE_CASE(8) TILE_CASE(9) TILE_CASE(10) TILE_CASE(11) TILE_CASE(12)
    default: ASSERT(0);
    }
}
#undef TILE_CASE

/* The AVX2 kernels: a panel is two vectors of 8. */
enum { ROWS_AVX2 = 6, ROW_PANELS_AVX2 = 4 };

__attribute__((target("avx2,fma,f16c"), always_inline))
static inline void tile_body_avx2(float *c, size_t ldc, const float *a, size_t lda, const uint16_t *b,
                                  int cols, const char *pf, const char *pf_end, int R, int W, int K)
{
    __m256 acc[ROWS_AVX2][2 * ROW_PANELS_AVX2];
#pragma GCC unroll 6
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int h = 0; h < 2 * W; h++) acc[r][h] = _mm256_setzero_ps();
    size_t pf_step = fetch_step(pf, pf_end, K);
    for (int k = 0; k < K; k++) {
        if (pf) fetch_ahead(&pf, pf_end, pf_step);
        __m256 x[2 * ROW_PANELS_AVX2];
#pragma GCC unroll 8
        for (int h = 0; h < 2 * W; h++)
            x[h] = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b + ((size_t)(h / 2) * K + k) * P + 8 * (h % 2))));
#pragma GCC unroll 6
        for (int r = 0; r < R; r++) {
            __m256 v = _mm256_set1_ps(a[(size_t)r * lda + k]);
#pragma GCC unroll 8
            for (int h = 0; h < 2 * W; h++) acc[r][h] = _mm256_fmadd_ps(v, x[h], acc[r][h]);
        }
    }
    float last[8];
#pragma GCC unroll 6
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int h = 0; h < 2 * W; h++) {
            int n = cols - h * 8;
            float *out = c + (size_t)r * ldc + (size_t)h * 8;
            if (n >= 8) _mm256_storeu_ps(out, acc[r][h]);
            else if (n > 0) {
                _mm256_storeu_ps(last, acc[r][h]);
                memcpy(out, last, (size_t)n * sizeof *last);
            }
        }
}

#define ROW_CASE(W) \
    case W: tile_body_avx2(c, 0, a, 0, b, cols, pf, pf_end, 1, W, K); break;

__attribute__((target("avx2,fma,f16c")))
static void row_tile_avx2(float *c, const float *a, const uint16_t *b, int cols, const char *pf,
                          const char *pf_end, int W, int K)
{
    switch (W) {
    ROW_CASE(1) ROW_CASE(2) ROW_CASE(3) ROW_CASE(4)
    default: ASSERT(0);
    }
}
#undef ROW_CASE

#define TILE_CASE(R) \
    case R: tile_body_avx2(c, ldc, a, (size_t)K, b, cols, NULL, NULL, R, 1, K); break;

__attribute__((target("avx2,fma,f16c")))
static void tile_avx2(float *c, size_t ldc, const float *a, const uint16_t *b, int cols, int R, int K)
{
    switch (R) {
    TILE_CASE(1) TILE_CASE(2) TILE_CASE(3) TILE_CASE(4) TILE_CASE(5) TILE_CASE(6)
    default: ASSERT(0);
    }
}
#undef TILE_CASE

__attribute__((target("avx2,fma,f16c")))
static size_t widen_f16c(float *out, const uint16_t *in, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(in + i))));
    return i;
}
#else
static bool have_f16c(void) { return false; }
#endif

/* ---- choosing ------------------------------------------------------------ */

typedef enum { KERNEL_GENERIC, KERNEL_AVX2, KERNEL_AVX512 } Kernel;

/* AVX-512 when gemm.c uses it: TRANSLATE_GEMM=avx2 then forces the AVX2
 * path here too, so the bench can time both on one machine. */
static Kernel kernel(void)
{
    const char *name = gemm_kernel_name();
    if (!have_f16c() || strcmp(name, "generic") == 0) return KERNEL_GENERIC;
#if GEMM_F16_X86
    if (__builtin_cpu_supports("avx512f") && strcmp(name, "avx512") == 0) return KERNEL_AVX512;
#endif
    return KERNEL_AVX2;
}

const char *gemm_f16_kernel_name(void)
{
    Kernel k = kernel();
    return k == KERNEL_AVX512 ? "avx512" : k == KERNEL_AVX2 ? "avx2" : "generic";
}

void gemm_f16_widen(float *out, const uint16_t *in, size_t n)
{
    size_t i = 0;
#if GEMM_F16_X86
    if (have_f16c()) i = widen_f16c(out, in, n);
#endif
    for (; i < n; i++) out[i] = safetensors_f16_to_f32_scalar(in[i]);
}

/* ---- the product ----------------------------------------------------------- */

/* Rows of A a tile re-reads for each of its panels, kept in L2 (K = 1024:
 * 384 KiB). */
enum { ROW_BLOCK = 96 };

typedef struct {
    float *C;
    const float *A;
    const uint16_t *panels;
    int M, N, K;
    Kernel kernel;
} Product;

/* How far ahead of its first panel a one-row tile fetches (see the top):
 * as many panels as it has, FETCH_AHEAD on. */
enum { FETCH_AHEAD = 16 };

/* One row of A against panels p0..p1-1: ROW_PANELS at a time, each tile
 * fetching ahead. */
static void one_row(const Product *pr, int p0, int p1)
{
    int K = pr->K;
#if GEMM_F16_X86
    int width = pr->kernel == KERNEL_AVX512 ? ROW_PANELS_AVX512 : ROW_PANELS_AVX2;
    for (int p = p0; p < p1; p += width) {
        int W = p1 - p < width ? p1 - p : width, cols = pr->N - p * P;
        const uint16_t *b = pr->panels + (size_t)p * P * K;
        int next = p + FETCH_AHEAD, next_end = next + width < p1 ? next + width : p1;
        const char *pf = next < p1 ? (const char *)(pr->panels + (size_t)next * P * K) : NULL;
        const char *pf_end = (const char *)(pr->panels + (size_t)next_end * P * K);
        if (pr->kernel == KERNEL_AVX512) row_tile_avx512(pr->C + (size_t)p * P, pr->A, b, cols, pf, pf_end, W, K);
        else row_tile_avx2(pr->C + (size_t)p * P, pr->A, b, cols, pf, pf_end, W, K);
    }
#else
    (void)K, (void)p0, (void)p1;
    ASSERT(0);
#endif
}

/* Rows i0..i1-1 of A against panels p0..p1-1. */
static void tiles(const Product *pr, int i0, int i1, int p0, int p1)
{
    int N = pr->N, K = pr->K;
#if GEMM_F16_X86
    if (pr->kernel != KERNEL_GENERIC) {
        bool wide = pr->kernel == KERNEL_AVX512;
        int rows = wide ? ROWS_AVX512 : ROWS_AVX2, width = wide ? PANELS_AVX512 : 1;
        for (int p = p0; p < p1; p += width)
            /* the rows in tiles of sizes as equal as can be (8 rows as 4 + 4,
             * not 6 + 2: a short tile widens its panels for few rows) */
            for (int i = i0, left = (i1 - i0 + rows - 1) / rows, R; i < i1; i += R, left--) {
                R = (i1 - i + left - 1) / left;
                float *c = pr->C + (size_t)i * N + (size_t)p * P;
                const float *a = pr->A + (size_t)i * K;
                const uint16_t *b = pr->panels + (size_t)p * P * K;
                int cols = N - p * P;
                if (wide && p + 1 == p1) {
                    /* an odd last panel: one panel's tile, as a row's */
                    for (int r = 0; r < R; r++)
                        row_tile_avx512(c + (size_t)r * N, a + (size_t)r * K, b, cols, NULL, NULL, 1, K);
                } else if (wide) tile_avx512(c, (size_t)N, a, b, cols, R, K);
                else tile_avx2(c, (size_t)N, a, b, cols, R, K);
            }
        return;
    }
#endif
    tiles_generic(pr->C, pr->A, pr->panels, i0, i1, p0, p1, N, K);
}

/* Panels p0..p1-1 for every row of A, ROW_BLOCK rows at a time. */
static void panels_run(void *ctx, size_t p0, size_t p1)
{
    const Product *pr = ctx;
    if (pr->M == 1 && pr->kernel != KERNEL_GENERIC) {
        one_row(pr, (int)p0, (int)p1);
        return;
    }
    for (int i = 0; i < pr->M; i += ROW_BLOCK)
        tiles(pr, i, pr->M - i < ROW_BLOCK ? pr->M : i + ROW_BLOCK, (int)p0, (int)p1);
}

void gemm_f16_nt(float *C, const float *A, const uint16_t *panels, int M, int N, int K)
{
    if (M <= 0 || N <= 0) return;
    Product pr = {C, A, panels, M, N, K, kernel()};
    size_t count = (size_t)(N + P - 1) / P;
    if (M <= GEMM_F16_SMALL_M) {
        panels_run(&pr, 0, count);
        return;
    }
    /* blocks of 2 panels: an AVX-512 tile's pair never straddles threads */
    double work = (double)M * N * K * ((double)PARALLEL_MIN_WORK / GEMM_THREAD_MIN_FMAS);
    parallel_for_blocks(count, 2, work, panels_run, &pr);
}
