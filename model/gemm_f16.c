/* gemm_f16.c — see gemm_f16.h.
 *
 * The small-M kernels (up to GEMM_F16_SMALL_M rows of A) are dot
 * products.  AVX2 (dot_rows_avx2): 8 rows of B against one row of A
 * (tile1_avx2), converted in registers: per 8 values of k they load 8 × 8
 * float16 of B, widen them with vcvtph2ps and do 8 fused multiply-adds
 * into as many vector accumulators, summed horizontally at the end; B is
 * read once, sequentially, and A (a few KB) stays in L1, so a batch-1
 * decoding step reads 2 bytes per weight.  More rows take 3 rows of B at
 * a time, which the rows of A pass over 4 at a time (rows_avx2), each
 * group converting them again in registers from L1, each conversion
 * serving the group's 4 rows.  (They were widened once into a float buffer
 * instead, which the groups then read: on an AMD EPYC (Zen 3), beam 4 on
 * 300 en-zh dev lines one at a time took 6.6-7.0 s of CPU, 4.2-4.7 s in
 * registers; mini-batched, 3.4-3.5 s against 3.0-3.1 s; greedy batched,
 * 0.90-0.94 s against 0.81-0.95 s; the same translations.)
 *
 * With AVX-512 (where gemm.c runs it) tile_avx512 does the same with
 * 16-wide conversions, up to 6 rows of A × 4 of B or 1 × 8, converting B
 * in registers for every group of 6 rows of A too.  (More than 4 rows
 * once went over 4 rows of B widened into an L1 buffer: on an AMD EPYC
 * (Zen 5), 1,000 en-zh dev lines mini-batched on 1 thread took 4.22-4.44 s
 * of CPU with beam 4 and 1.07-1.15 s greedy, against 3.36-3.56 and
 * 0.90-1.06 s in registers: 4 alternated runs each, the same
 * translations.)
 * Either way a whole mini-batch of sentences goes without the packing of B
 * that the gemm_nt path pays on every call, and every element is summed
 * in an order that does not depend on the other rows or on its tile.
 *
 * Streaming B: a batch-1 step reads every weight once from L3 or memory,
 * in tiles of 8 interleaved rows, which the hardware prefetcher follows
 * poorly; each tile fetches the next tile's rows in address order
 * (_mm_prefetch) while it computes.  decode_bench on an Intel Xeon, CPU
 * time: 0.47x -> 0.70x the bandwidth bound (AVX-512), 0.45x -> 0.62x
 * (AVX2, then 4 rows a tile), fetching two tiles ahead; on an AMD EPYC
 * (Zen 4), 1,500 sentences in 3 rounds, one tile ahead measured best:
 * 0.63-0.83x (AVX-512) and 0.69-0.82x (AVX2), against 0.62-0.74x and
 * 0.60-0.74x two tiles ahead, 0.54-0.68x four, 0.22-0.34x without; the
 * same bits whatever the distance.
 *
 * Deliberately not here: threads for the small kernels.  A batch-1
 * step's products are tens of microseconds each, about what waking a
 * worker costs; a mini-batch's (32 rows × d_ff or the vocabulary) were
 * tried split between 2 threads by rows of B (parallel_for): a file's
 * greedy decoding took 5% less wall time and 20% more CPU (1,000 dev
 * lines, AMD EPYC Zen 4), and a single sentence with beam 4 paid for
 * starting the worker (12 -> 18 ms).  Nor accumulation into C (inference
 * never accumulates).  Nor a second, tiled copy of the decoder's matrices
 * (each 8 rows' values k..k+7 side by side, so tile1_avx2's 8 streams
 * become one, read in address order; same bits): on an AMD EPYC (Zen 3,
 * KVM) one row of A against en-zh's decoder and output projection ran
 * 1.4x faster in a micro-benchmark (median of 60 interleaved rounds,
 * 0.29 against 0.41 ms), yet translating 300 dev lines one at a time took
 * more CPU time, not less (8 alternated runs: 2.07-2.18 s plain,
 * 2.25-3.27 s tiled; 6 more: 2.03-2.34 plain, 2.11-2.87 tiled, 2.50-3.23
 * tiled in 4 KiB pages instead of huge ones),
 * and the copy cost start-up time and 9 MB. */
#include "gemm_f16.h"

#include <string.h>

#include "../common/util.h"
#include "gemm.h"
#include "safetensors.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define GEMM_F16_X86 1
#include <immintrin.h>
#else
#define GEMM_F16_X86 0
#endif

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

/* ---- the x86 kernels (F16C + AVX2 + FMA) -------------------------------- */

#if GEMM_F16_X86
static bool have_f16c(void)
{
    /* Every CPU with AVX2 has F16C, and clang's __builtin_cpu_supports
     * does not know "f16c" (as safetensors.c). */
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

__attribute__((target("avx2,fma,f16c"), always_inline))
static inline __m256 widen8(const uint16_t *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

__attribute__((target("avx2,fma,f16c"), always_inline))
static inline float hsum(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* The horizontal sums of 8 vectors at once, lane i the sum of v[i], each
 * added in hsum's tree (lanes l + (l + 4), then l + (l + 2), then the last
 * two), so the bits are those of 8 hsum calls; each level's shuffles serve
 * two vectors at once: 22 instructions instead of ~50. */
__attribute__((target("avx2"), always_inline))
static inline __m256 reduce8_avx2(const __m256 v[8])
{
    __m256 w[4], p[2];
    /* w[m]: v[2m]'s lanes l + (l + 4), l < 4, then v[2m + 1]'s */
#pragma GCC unroll 4
    for (int m = 0; m < 4; m++)
        w[m] = _mm256_add_ps(_mm256_permute2f128_ps(v[2 * m], v[2 * m + 1], 0x20),
                             _mm256_permute2f128_ps(v[2 * m], v[2 * m + 1], 0x31));
    /* p[h]: per 128-bit half, two vectors' (l + (l + 2)), l < 2 */
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++)
        p[h] = _mm256_add_ps(_mm256_shuffle_ps(w[2 * h], w[2 * h + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm256_shuffle_ps(w[2 * h], w[2 * h + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    /* the sums of v[0], v[2], v[4], v[6], v[1], v[3], v[5], v[7]; then in order */
    __m256 r = _mm256_add_ps(_mm256_shuffle_ps(p[0], p[1], _MM_SHUFFLE(2, 0, 2, 0)),
                             _mm256_shuffle_ps(p[0], p[1], _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm256_permutevar8x32_ps(r, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* The k tail (K not a multiple of 8) of one dot product, and the store. */
static void finish(float *c, float sum, const float *a, const uint16_t *b, int k, int K)
{
    for (; k < K; k++) sum += a[k] * safetensors_f16_to_f32_scalar(b[k]);
    *c = sum;
}

/* Rows of B a tile of one row of A (tile1_avx2) covers: 8 independent
 * sums.  A fused multiply-add's result is ready 4 cycles after it starts
 * and a core starts two a cycle, so 8 chains are what keeps both FMA units
 * busy; with 4 chains (as rows_avx2 then had for each row), one row of A ran at
 * half the speed (decode_bench, AMD EPYC Zen 4: 0.35x the bandwidth
 * bound). */
#define TILE1_ROWS 8

/* Rows of B ahead of the current ones that a product with one row of A
 * fetches into the cache (as tile_body_avx512's `pf`): the next tile's. */
#define PREFETCH_ROWS_AVX2 TILE1_ROWS

/* C[i, j..j+nb-1] (nb <= TILE1_ROWS) for one row a of A.  Named
 * accumulators, not an array: GCC keeps those in registers (an indexed
 * array went to memory and cost 40 times the time).  A short tile repeats
 * row j.  Each sum is its own chain, k ascending 8 at a time, then hsum's
 * tree (reduce8_avx2): the tile's width does not change a result's bits.  The
 * TILE1_ROWS rows PREFETCH_ROWS_AVX2 ahead (those below N) are fetched into
 * the cache, in address order, spread over the k loop: a batch-1 step reads
 * B from L3 or memory once, and 8 interleaved streams leave the hardware
 * prefetcher behind. */
__attribute__((target("avx2,fma,f16c")))
static void tile1_avx2(float *c, const float *a, const uint16_t *B, int j, int nb, int N, int K)
{
    const uint16_t *b[TILE1_ROWS];
    for (int q = 0; q < TILE1_ROWS; q++) b[q] = B + (size_t)(j + (q < nb ? q : 0)) * K;
    const uint16_t *b0 = b[0], *b1 = b[1], *b2 = b[2], *b3 = b[3], *b4 = b[4], *b5 = b[5], *b6 = b[6],
                   *b7 = b[7];
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
    const char *pf = NULL, *pf_end = NULL;
    size_t pf_step = 0;
    int ahead = j + PREFETCH_ROWS_AVX2, rows = N - ahead < TILE1_ROWS ? N - ahead : TILE1_ROWS;
    if (rows > 0 && K >= 8) {
        pf = (const char *)(B + (size_t)ahead * K);
        pf_end = pf + (size_t)rows * K * sizeof *B;
        pf_step = (((size_t)(pf_end - pf) / (size_t)(K / 8)) + 63) & ~(size_t)63;
    }
    int k = 0;
    for (; k + 8 <= K; k += 8) {
        if (pf)
            for (size_t o = 0; o < pf_step && pf < pf_end; o += 64, pf += 64) _mm_prefetch(pf, _MM_HINT_T0);
        __m256 x = _mm256_loadu_ps(a + k);
        s0 = _mm256_fmadd_ps(x, widen8(b0 + k), s0);
        s1 = _mm256_fmadd_ps(x, widen8(b1 + k), s1);
        s2 = _mm256_fmadd_ps(x, widen8(b2 + k), s2);
        s3 = _mm256_fmadd_ps(x, widen8(b3 + k), s3);
        s4 = _mm256_fmadd_ps(x, widen8(b4 + k), s4);
        s5 = _mm256_fmadd_ps(x, widen8(b5 + k), s5);
        s6 = _mm256_fmadd_ps(x, widen8(b6 + k), s6);
        s7 = _mm256_fmadd_ps(x, widen8(b7 + k), s7);
    }
    __m256 s[TILE1_ROWS] = {s0, s1, s2, s3, s4, s5, s6, s7};
    float sum[TILE1_ROWS];
    _mm256_storeu_ps(sum, reduce8_avx2(s));
    for (int q = 0; q < nb; q++) finish(c + q, sum[q], a, b[q], k, K);
}

/* Rows of A and of B in an AVX2 tile of more than one row of A.  Each
 * value of B is widened once (vcvtph2ps, which on Intel takes a slot of
 * the ports that also multiply) for ROWS_AVX2 rows of A, whose values come
 * straight from L1 as the multiply-adds' memory operands: 12 accumulators
 * and one widened vector of the 16 registers.  3 × 4, with the 3 rows of
 * A in registers, widened each value for 3 rows only: on an Intel Xeon
 * (AVX2 forced; 1 thread, best of 30 timings), M × 5230 × 256 went
 * 65 -> 83 GF/s for 4 rows (a beam of 4), 76 -> 86 for 8, 81 -> 88 for 32.
 * 5 × 2 gave 74, 86 and 94: better on a full mini-batch, worse on a beam
 * of 4 translating one sentence at a time, which is what an interactive
 * user waits for. */
enum { ROWS_AVX2 = 4, COLS_AVX2 = 3 };

/* R <= ROWS_AVX2 rows of A (C rows c, c + ldc, ...) against nb <= COLS_AVX2
 * rows of B from b (row stride K), widened in registers: each B value
 * widened once serves every row.  Every element is the chain of
 * tile1_avx2 (k ascending 8 at a time, hsum, the tail), so a row's results
 * do not depend on the rows beside it or on the tile it was in.  R is a
 * constant after inlining, so the accumulators stay in registers. */
__attribute__((target("avx2,fma,f16c"), always_inline))
static inline void rows_body_avx2(float *c, size_t ldc, const float *a, const uint16_t *b, int R, int nb,
                                  int K)
{
    const uint16_t *bq[COLS_AVX2];
    for (int q = 0; q < COLS_AVX2; q++) bq[q] = b + (size_t)(q < nb ? q : 0) * K;
    __m256 acc[ROWS_AVX2][COLS_AVX2];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 3
        for (int q = 0; q < COLS_AVX2; q++) acc[r][q] = _mm256_setzero_ps();
    int k = 0;
    for (; k + 8 <= K; k += 8) {
#pragma GCC unroll 3
        for (int q = 0; q < COLS_AVX2; q++) {
            __m256 w = widen8(bq[q] + k);
#pragma GCC unroll 4
            for (int r = 0; r < R; r++)
                acc[r][q] = _mm256_fmadd_ps(_mm256_loadu_ps(a + (size_t)r * K + k), w, acc[r][q]);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 3
        for (int q = 0; q < COLS_AVX2; q++)
            if (q < nb) finish(c + (size_t)r * ldc + q, hsum(acc[r][q]), a + (size_t)r * K, bq[q], k, K);
}

/* R (1 to ROWS_AVX2) rows of A against rows j.. of B. */
__attribute__((target("avx2,fma,f16c")))
static void rows_avx2(float *c, int N, const float *a, const uint16_t *b, int R, int nb, int K)
{
    switch (R) {
    case 1: rows_body_avx2(c, (size_t)N, a, b, 1, nb, K); break;
    case 2: rows_body_avx2(c, (size_t)N, a, b, 2, nb, K); break;
    case 3: rows_body_avx2(c, (size_t)N, a, b, 3, nb, K); break;
    default: rows_body_avx2(c, (size_t)N, a, b, 4, nb, K); break;
    }
}

/* AVX-512, one row of A (a batch-1 decoding step): 8 rows of B at a
 * time, 16 values per conversion, 8 independent sums in 32 registers —
 * twice the loads in flight of the AVX2 tile, which is what streaming B
 * from L3 or memory needs. */
__attribute__((target("avx512f,fma,f16c"), always_inline))
static inline __m512 widen16(const uint16_t *p)
{
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}

/* The horizontal sums of 16 vectors at once, in lane i the sum of v[i].
 * Each sum is added in the tree of _mm512_reduce_add_ps (GCC's: lanes
 * l and l + 8, then l and l + 4, l and l + 2, l and l + 1), so the bits
 * are those of 16 separate reductions with GCC; but each level's shuffles serve two
 * vectors' halves at once: 45 instructions instead of ~130, most of them
 * shuffles on the port that also runs one of the two FMA units.  (A tile
 * of K = 256 does 16 steps of R·C FMAs: the separate reductions had cost
 * about a third of its time.) */
__attribute__((target("avx512f"), always_inline))
static inline __m512 reduce16_avx512(const __m512 v[16])
{
    __m512 s[8], t[4], u[2];
    /* s[j]: v[2j]'s lanes l + (l + 8) for l < 8, then v[2j + 1]'s */
#pragma GCC unroll 8
    for (int j = 0; j < 8; j++)
        s[j] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * j], v[2 * j + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm512_shuffle_f32x4(v[2 * j], v[2 * j + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    /* t[m]: quarter q holds v[4m + q]'s l + (l + 4), l < 4 */
#pragma GCC unroll 4
    for (int m = 0; m < 4; m++)
        t[m] = _mm512_add_ps(_mm512_shuffle_f32x4(s[2 * m], s[2 * m + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                             _mm512_shuffle_f32x4(s[2 * m], s[2 * m + 1], _MM_SHUFFLE(3, 1, 3, 1)));
    /* u[h]: quarter q holds v[8h + q]'s l + (l + 2), l < 2, then v[8h + 4 + q]'s */
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++)
        u[h] = _mm512_add_ps(_mm512_shuffle_ps(t[2 * h], t[2 * h + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm512_shuffle_ps(t[2 * h], t[2 * h + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    /* lane 4q + j: the sum of v[4j + q]; then transposed to lane i: v[i] */
    __m512 w = _mm512_add_ps(_mm512_shuffle_ps(u[0], u[1], _MM_SHUFFLE(2, 0, 2, 0)),
                             _mm512_shuffle_ps(u[0], u[1], _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), w);
}

/* Rows of A in an AVX-512 tile of more than one row of A (against 4 rows
 * of B): each value of B widened (vcvtph2ps, which on Intel takes a slot
 * of both ports that multiply) serves 6 rows, and the 24 accumulators, 6
 * rows of A and the widened vector fill 31 of the 32 registers.  On an
 * Intel Xeon (1 thread, best of 30 timings), M × 5230 × 256 went 124 -> 136
 * GF/s for 16 and for 32 rows, 115 -> 132 for 10; 8 rows × 3 ran out of
 * registers (83). */
enum { ROWS_AVX512 = 6 };

/* An R×C tile of C (R <= ROWS_AVX512 rows of A, C <= 8 rows of B, R·C <=
 * 24): one accumulator per element, k ascending 16 at a time, then reduced
 * and the tail added.  Every element gets that same sequence whatever R
 * and C, so a row's results never depend on the rows beside it: a sentence
 * decoded alone and inside a batch give the same bits.  R and C are
 * constants after inlining (the switches below), so the accumulators stay
 * in the 32 vector registers.
 *
 * pf, when not NULL, is the start of the bytes to fetch into the cache
 * while this tile runs (pf_bytes of them, spread over its k loop): the
 * next tiles' rows of B, which a batch-1 step streams from L3 or memory
 * once.  Fetched in address order, ahead of the loads, they arrive
 * sooner than the hardware prefetcher brings C interleaved streams. */
__attribute__((target("avx512f,fma,f16c"), always_inline))
static inline void tile_body_avx512(float *c, size_t ldc, const float *a, const uint16_t *b,
                                    const char *pf, size_t pf_bytes,
                                    int R, int C, int K)
{
    __m512 acc[ROWS_AVX512][8];
#pragma GCC unroll 6
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int q = 0; q < C; q++) acc[r][q] = _mm512_setzero_ps();
    int k = 0;
    /* bytes to fetch per 16 values of k, whole cache lines */
    size_t pf_step = pf ? ((pf_bytes / (size_t)(K / 16 > 0 ? K / 16 : 1)) + 63) & ~(size_t)63 : 0;
    const char *pf_end = pf ? pf + pf_bytes : NULL;
    for (; k + 16 <= K; k += 16) {
        if (pf)
            for (size_t o = 0; o < pf_step && pf < pf_end; o += 64, pf += 64) _mm_prefetch(pf, _MM_HINT_T0);
        __m512 x[ROWS_AVX512];
#pragma GCC unroll 6
        for (int r = 0; r < R; r++) x[r] = _mm512_loadu_ps(a + (size_t)r * K + k);
#pragma GCC unroll 8
        for (int q = 0; q < C; q++) {
            __m512 w = widen16(b + (size_t)q * K + k);
#pragma GCC unroll 6
            for (int r = 0; r < R; r++) acc[r][q] = _mm512_fmadd_ps(x[r], w, acc[r][q]);
        }
    }
    /* Every tile, short ones at the edges too, through the one tree
     * (whatever the compiler's _mm512_reduce_add_ps does): a row's bits
     * never depend on the tile it was in. */
    __m512 v[32];
    float sum[32];
#pragma GCC unroll 32
    for (int i = 0; i < 32; i++) v[i] = i < R * C ? acc[i / C][i % C] : _mm512_setzero_ps();
    _mm512_storeu_ps(sum, reduce16_avx512(v));
    if (R * C > 16) _mm512_storeu_ps(sum + 16, reduce16_avx512(v + 16));
#pragma GCC unroll 6
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int q = 0; q < C; q++)
            finish(c + (size_t)r * ldc + q, sum[r * C + q], a + (size_t)r * K, b + (size_t)q * K, k, K);
}

/* One row of A against C <= 8 rows of B converted in registers, fetching
 * ahead as `pf` says: a batch-1 decoding step. */
#define ROW_CASE(C) \
    case C: tile_body_avx512(c, 0, a, b, pf, pf_bytes, 1, C, K); break;

__attribute__((target("avx512f,fma,f16c")))
static void row_tile_avx512(float *c, const float *a, const uint16_t *b, const char *pf, size_t pf_bytes,
                            int C, int K)
{
    switch (C) {
    ROW_CASE(1) ROW_CASE(2) ROW_CASE(3) ROW_CASE(4) ROW_CASE(5) ROW_CASE(6) ROW_CASE(7) ROW_CASE(8)
    default: ASSERT(0);
    }
}
#undef ROW_CASE

/* R <= ROWS_AVX512 rows of A against C <= 4 rows of B converted in
 * registers, fetching ahead as `pf` says. */
#define TILE_CASE(R, C) \
    case R * 16 + C: tile_body_avx512(c, ldc, a, b, pf, pf_bytes, R, C, K); break;

__attribute__((target("avx512f,fma,f16c")))
static void tile_avx512(float *c, size_t ldc, const float *a, const uint16_t *b, const char *pf,
                        size_t pf_bytes, int R, int C, int K)
{
    switch (R * 16 + C) {
    TILE_CASE(1, 1) TILE_CASE(1, 2) TILE_CASE(1, 3) TILE_CASE(1, 4)
    TILE_CASE(2, 1) TILE_CASE(2, 2) TILE_CASE(2, 3) TILE_CASE(2, 4)
    TILE_CASE(3, 1) TILE_CASE(3, 2) TILE_CASE(3, 3) TILE_CASE(3, 4)
    TILE_CASE(4, 1) TILE_CASE(4, 2) TILE_CASE(4, 3) TILE_CASE(4, 4)
    TILE_CASE(5, 1) TILE_CASE(5, 2) TILE_CASE(5, 3) TILE_CASE(5, 4)
    TILE_CASE(6, 1) TILE_CASE(6, 2) TILE_CASE(6, 3) TILE_CASE(6, 4)
    default: ASSERT(0);
    }
}
#undef TILE_CASE

/* How far ahead (in tiles of rows of B) a product fetches B (the top of
 * the file says how it was chosen). */
#define PREFETCH_TILES 1

/* The bytes of the rows of B `width` · PREFETCH_TILES rows after row j
 * (width of them, those below N): where a tile at row j fetches. */
static size_t ahead(const uint16_t *B, int j, int width, int N, int K, const char **from)
{
    size_t row_bytes = (size_t)K * sizeof *B, end = (size_t)N * row_bytes;
    size_t at = (size_t)(j + width * PREFETCH_TILES) * row_bytes, bytes = (size_t)width * row_bytes;
    *from = at < end ? (const char *)B + at : NULL;
    return at >= end ? 0 : at + bytes > end ? end - at : bytes;
}

/* All of C through AVX-512 tiles, fetching the rows of B they will need
 * PREFETCH_TILES tiles later: B is streamed from L3 or memory once per
 * product.
 *   - One row of A (a batch-1 decoding step) takes 8 rows of B at a time,
 *     8 loads in flight.
 *   - More rows (beam hypotheses, a mini-batch) take 4 rows of B at a
 *     time, which the rows of A pass over ROWS_AVX512 at a time, each
 *     group converting them again in registers from L1 (the first group
 *     also fetches the next 4 rows of B). */
static void dot_rows_avx512(float *C, const float *A, const uint16_t *B, int M, int N, int K)
{
    int width = M == 1 ? 8 : 4;
    for (int j = 0; j < N; j += width) {
        int cols = N - j < width ? N - j : width;
        const char *pf;
        size_t bytes = ahead(B, j, width, N, K, &pf);
        if (M == 1) {
            row_tile_avx512(C + j, A, B + (size_t)j * K, pf, bytes, cols, K);
            continue;
        }
        for (int i = 0; i < M; i += ROWS_AVX512)
            tile_avx512(C + (size_t)i * N + j, (size_t)N, A + (size_t)i * K, B + (size_t)j * K,
                        i ? NULL : pf, i ? 0 : bytes, M - i < ROWS_AVX512 ? M - i : ROWS_AVX512, cols, K);
    }
}

/* All of C through the AVX2 tiles.
 *   - One row of A (a batch-1 decoding step): 8 rows of B at a time,
 *     converted in registers (tile1_avx2), fetching ahead.
 *   - More rows (a beam, a mini-batch, a short sentence's encoder):
 *     COLS_AVX2 rows of B at a time, the next ones fetched ahead, which the
 *     rows of A pass over ROWS_AVX2 at a time (rows_avx2): B read from
 *     memory once per product.
 * Every element is summed by the same chain whichever tile it is in, so a
 * row's results do not depend on the other rows of A. */
static void dot_rows_avx2(float *C, const float *A, const uint16_t *B, int M, int N, int K)
{
    if (M == 1) {
        for (int j = 0; j < N; j += TILE1_ROWS)
            tile1_avx2(C + j, A, B, j, N - j < TILE1_ROWS ? N - j : TILE1_ROWS, N, K);
        return;
    }
    const char *pf;
    for (int j = 0; j < N; j += COLS_AVX2) {
        int nb = N - j < COLS_AVX2 ? N - j : COLS_AVX2;
        size_t bytes = ahead(B, j, COLS_AVX2, N, K, &pf);
        for (size_t o = 0; o < bytes; o += 64) _mm_prefetch(pf + o, _MM_HINT_T0);
        for (int i = 0; i < M; i += ROWS_AVX2)
            rows_avx2(C + (size_t)i * N + j, N, A + (size_t)i * K, B + (size_t)j * K,
                      M - i < ROWS_AVX2 ? M - i : ROWS_AVX2, nb, K);
    }
}

__attribute__((target("avx2,fma,f16c")))
static size_t widen_f16c(float *out, const uint16_t *in, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, widen8(in + i));
    return i;
}
#endif

/* ---- choosing --------------------------------------------------------------- */

static bool use_avx2(void)
{
#if GEMM_F16_X86
    return have_f16c() && strcmp(gemm_kernel_name(), "generic") != 0;
#else
    return false;
#endif
}

/* AVX-512 when gemm.c uses it: TRANSLATE_GEMM=avx2 then forces the AVX2
 * path here too, so the bench can time both on one machine. */
static bool use_avx512(void)
{
#if GEMM_F16_X86
    return use_avx2() && __builtin_cpu_supports("avx512f") && strcmp(gemm_kernel_name(), "avx512") == 0;
#else
    return false;
#endif
}

const char *gemm_f16_kernel_name(void)
{
    return use_avx512() ? "avx512" : use_avx2() ? "avx2" : "generic";
}

void gemm_f16_widen(float *out, const uint16_t *in, size_t n)
{
    size_t i = 0;
#if GEMM_F16_X86
    if (have_f16c()) i = widen_f16c(out, in, n);
#endif
    for (; i < n; i++) out[i] = safetensors_f16_to_f32_scalar(in[i]);
}

/* gemm_nt_widened's view of a float16 matrix. */
static void widen_rows(float *out, const void *B, size_t first, size_t count, int K)
{
    gemm_f16_widen(out, (const uint16_t *)B + first * (size_t)K, count * (size_t)K);
}

void gemm_f16_nt(float *C, const float *A, const uint16_t *B, int M, int N, int K)
{
    if (M <= 0 || N <= 0) return;
#if GEMM_F16_X86
    if (M <= GEMM_F16_SMALL_M && use_avx2()) {
        if (use_avx512()) dot_rows_avx512(C, A, B, M, N, K);
        else dot_rows_avx2(C, A, B, M, N, K);
        return;
    }
#endif
    /* Large M, or no x86 kernel: widened a block of rows at a time and
     * multiplied by gemm_nt (on the generic path its kernel sums each
     * element in float in k order, whatever M: a row's bits do not depend
     * on the others). */
    gemm_nt_widened(C, A, B, widen_rows, M, N, K);
}
