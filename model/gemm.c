/* gemm.c — see gemm.h.
 *
 * The fast path follows the classic layout of BLIS and GotoBLAS ("Anatomy of
 * High-Performance Matrix Multiplication", Goto & van de Geijn, 2008):
 *
 *   for each block of NC columns of C              (jc)
 *     for each block of KC along the sum           (pc)
 *       pack B[pc.., jc..] into panels NR wide      -> bpack (stays in L2/L3)
 *       (M ≤ MC in gemm_nt: each panel packed just before its use)
 *       for each block of MC rows of C             (ic)
 *         pack A[ic.., pc..] into panels MR high   -> apack (stays in L2)
 *           (gemm_tn; gemm_nt and gemm_nn: only a last, partial panel)
 *         for each NR-wide panel of B, each MR-high panel of A:
 *           micro-kernel: an MR×NR tile of C += panel_A · panel_B
 *
 * A packed panel stores, for k = 0..kc-1, the MR (or NR) values of column
 * (row) k side by side, zero-padded past the matrix edge, and panels
 * follow each other a cache line apart (PANEL_SKEW).  So the
 * micro-kernel reads packed operands sequentially whatever the form, and
 * the three forms differ in the strides the packing reads with.  The
 * micro-kernel keeps its MR×NR tile of C in vector registers: per k it
 * loads NR/16 vectors of B, broadcasts MR values of A and does MR·NR/16
 * fused multiply-adds.  Packing is a transpose when a panel's lines run
 * along k in memory (B of gemm_nt), done 16×16 (AVX-512) or 8×8 (AVX2) in
 * registers; lines lying side by side are copied a whole row of k at a
 * time (pack_cols_avx512).  A of gemm_nt and gemm_nn, whose rows run along
 * k too, is not packed but for a block's last, partial panel: a
 * micro-kernel copy reads its whole panels in place (micro_direct_avx512),
 * the same arithmetic.  When A has only a few
 * rows (decoding: one row per sentence or hypothesis; a short sentence's
 * encoder) packing would cost more than multiplying,
 * so gemm_nt on up to SMALL_M rows skips it (small_nt_avx512) and computes
 * dot products of rows read in place, in another order of summation.  On
 * up to SWAP_M rows the AVX-512 kernel turns gemm_nt around (Cᵀ = B·Aᵀ,
 * micro_t_avx512) so B, a weight used only M times, is read in place
 * instead of transposed into panels; same bits as the blocked path.  A
 * panel's last, partial row panel runs a micro-kernel copy with fewer rows
 * (micro_rows_avx512) rather than multiplying padding.
 *
 * Why results do not depend on the thread count: every element of C is
 * summed by one micro-kernel call per KC block, k in increasing order, then
 * added to C; threads only decide which tiles a thread computes, never how
 * a tile is computed.  Edge tiles run the same arithmetic (zero padding adds
 * exact zeros) and go through a small buffer instead of straight to C.
 *
 * Threads: C is split into one band of whole tiles per thread, run by
 * the worker threads of model/parallel.c (see "threads" below), and only
 * for products big enough to repay it.
 *
 * Deliberately not here: hand-written prefetching (but for the tile of C
 * a micro-kernel is about to write, prefetch_tile and RowPrefetch, and the source packing
 * reads next, PACK_AHEAD), and intrinsics for
 * other CPUs: those without AVX2, and every CPU that is not x86-64 (the
 * x86 kernels and their run-time checks are compiled only under
 * GEMM_X86), run generic_product, plain C that the compiler vectorises
 * (NEON on aarch64, SIMD128 in WebAssembly with -msimd128), but for
 * gemm_nt's form in WebAssembly: SIMD128 intrinsics (generic_dots), the
 * products of the web page's decoding. */
#include "gemm.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "parallel.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define GEMM_X86 1
#include <immintrin.h>
#else
#define GEMM_X86 0
#endif
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

/* Block sizes (in floats).  KC·NR·4 bytes of B (32 KiB for AVX-512) is the
 * B panel the inner loop re-reads while it walks down A; MC·KC·4 bytes
 * (192 KiB) of A, packed or read in place, stays in L2; KC·NC·4 bytes of
 * packed B in L2/L3.  MC must be a multiple of every kernel's MR and NC of
 * every NR. */
enum { KC = 256, MC = 192, NC = 4096 };

/* How far ahead packing asks for the source it will read next: PACK_AHEAD
 * floats (4 cache lines) along a line that runs along k, PACK_ROWS_AHEAD
 * rows of k down a block whose lines lie side by side.  The hardware
 * prefetcher follows one or two streams well but not the dozen a panel
 * reads at once (lines a whole row of the matrix apart, often a page or
 * more): on a source in L3 or memory packing then stalled.  Measured on an
 * AMD EPYC (Zen 5, AVX-512, 1 thread), when A of gemm_nt was still packed
 * by pack_rows: nt 4096×256×256 171 -> 190-202 GF/s, and through
 * pack_cols tn 1024×256×2048 145-160 -> 184-186.  The addresses may lie
 * past the matrix: a prefetch never faults. */
enum { PACK_AHEAD = 64, PACK_ROWS_AHEAD = 4 };

/* Floats from one packed panel of kc·width values to the next: the panel's
 * length rounded up to a cache line, plus one line.  Panels whose length
 * is a multiple of 4 KB (B's 32 KB, A's 12 KB) would otherwise all start
 * in the same cache sets, and pack_cols, which writes row k of every panel
 * before row k + 1, had each row's stores evict the last's lines once
 * there were more panels than L1 has ways: B of nn 32×1024×256 in 64
 * panels (AVX2) packed at a third of its speed.  That was worked around by
 * packing 8 panels at a time, which read each row of the source in pieces
 * of 8 panels' width (1 KB with AVX-512, 512 bytes with AVX2), one pass
 * per 8 panels; skewed, every row is read whole, once, in order.  On an
 * AMD EPYC (Zen 5, 1 thread; the best of 60 rounds, old and new
 * alternated): gemm_tn's weight gradients 256×1024×2048 and ×4096 went
 * 169/167 -> 184/183 GF/s, 256×256×2048 182 -> 202 (AVX2 forced: 105/108
 * -> 114/114), the other 45 training shapes within 4% either way, nn
 * 32×1024×256 (AVX2) 92 -> 94.  Packing moves no value from one product to
 * another, so the bits are the same. */
enum { PANEL_SKEW = 16 };

static size_t panel_stride(int kc, int width)
{
    return ((size_t)kc * width + 15) / 16 * 16 + PANEL_SKEW;
}

/* GEMM_THREAD_MIN_FMAS (gemm.h): below it a product runs on the calling
 * thread, waking a worker has a cost (model/parallel.h).  2^22 left the 32-row
 * training products on one thread; at 2^20 they split, and on an idle AMD
 * EPYC (Zen 5, 2 threads) went 172 -> 301 GF/s (nn 32×256×256),
 * 206 -> 359 (nt), 201 -> 340 (tn), OpenBLAS 197-263; translating (a
 * sentence, a file of 1,000 lines greedy or beam 4) took the same time
 * either way.  (On a Zen 3 host busy with other guests the same change
 * measured nothing clear.) */

/* ---- the references --------------------------------------------------- */

/* Sum in double: the reference is then the more accurate side of every
 * comparison, so a test's tolerance measures the fast kernel's error. */
void gemm_nt_reference(float *C, const float *A, const float *B, int M, int N, int K,
                       bool accumulate)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double sum = accumulate ? C[(size_t)i * N + j] : 0.0;
            for (int k = 0; k < K; k++)
                sum += (double)A[(size_t)i * K + k] * B[(size_t)j * K + k];
            C[(size_t)i * N + j] = (float)sum;
        }
}

void gemm_nn_reference(float *C, const float *A, const float *B, int M, int N, int K,
                       bool accumulate)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double sum = accumulate ? C[(size_t)i * N + j] : 0.0;
            for (int k = 0; k < K; k++)
                sum += (double)A[(size_t)i * K + k] * B[(size_t)k * N + j];
            C[(size_t)i * N + j] = (float)sum;
        }
}

void gemm_tn_reference(float *C, const float *A, const float *B, int M, int N, int K,
                       bool accumulate)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double sum = accumulate ? C[(size_t)i * N + j] : 0.0;
            for (int k = 0; k < K; k++)
                sum += (double)A[(size_t)k * M + i] * B[(size_t)k * N + j];
            C[(size_t)i * N + j] = (float)sum;
        }
}

/* ---- micro-kernels ---------------------------------------------------- */

/* C[mr,nr] (+)= Ap · Bp over kc steps, where Ap is a packed panel
 * [kc][MR] and Bp a packed panel [kc][NR] (both 64-byte aligned), C has
 * row stride ldc and mr ≤ MR, nr ≤ NR are the part of the tile inside C. */
typedef void MicroKernel(int kc, const float *Ap, const float *Bp, float *C, size_t ldc,
                         int mr, int nr, bool accumulate);

#if GEMM_X86
/* Copy an edge tile (row stride nr_full) into the mr×nr corner of C that
 * exists, with the same single addition the full-tile path does. */
static void tile_to_c(float *C, size_t ldc, const float *tile, int nr_full, int mr, int nr,
                      bool accumulate)
{
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nr; j++) {
            float v = tile[i * nr_full + j];
            C[(size_t)i * ldc + j] = accumulate ? C[(size_t)i * ldc + j] + v : v;
        }
}

/* Ask for the mr×nr tile of C the micro-kernel will add to or overwrite
 * after its k loop: that loop (kc steps) hides the misses.  With a long
 * sum and C larger than L2 (N = 256, K = 1024..2858 or a tall gemm_tn),
 * each of the K/KC passes over C otherwise stalled on every tile's first
 * load or store.  Which lines are asked for, and when, changes nothing in
 * the arithmetic: the same bits. */
static inline void prefetch_row(const float *c, int nr)
{
    for (int j = 0; j < nr; j += 16) __asm__ volatile("prefetcht0 %0" : : "m"(c[j]));
    __asm__ volatile("prefetcht0 %0" : : "m"(c[nr - 1]));
}

/* The whole tile before the k loop: AVX2's 6 rows, at most 18 lines. */
static inline void prefetch_tile(const float *C, size_t ldc, int mr, int nr)
{
    for (int r = 0; r < mr; r++) prefetch_row(C + (size_t)r * ldc, nr);
}

/* AVX-512's 12 rows one at a time, over the first third of its k loop (a
 * row every kc/36 steps), which runs in chunks, each after asking for the
 * next row: the last row still has two thirds of the loop to arrive in
 * before a tile that accumulates loads it.  A tile
 * of 12 rows whose lines straddle (C's rows 5,230 floats long, the output
 * projection's) is 36 lines, more misses than a core keeps in flight (16
 * fill buffers on recent Intel cores), and asked for at once, the
 * prefetches themselves stalled the loop: 10% of gemm_nt 4096×5230×256's
 * time on one prefetcht0 (perf, Intel Xeon, AVX-512, 1 thread), 158 GF/s
 * against OpenBLAS's 172.  Spread over the whole loop: 177, but gemm_nn's
 * accumulating 512×256×5230 and 4096×256×5230 lost 3-4%; over its first
 * third, 178, and those as before (185, 174).  AVX2's tiles stay asked
 * for at once: spread over the whole loop, its gemm_tn lost 6% (12
 * multiply-adds a step, where the chunks cost more than its at most 18
 * lines did). */
typedef struct {
    const float *next_row; /* the next row of C to ask for */
    size_t ldc;
    int nr, rows_left, every;
} RowPrefetch;

static inline RowPrefetch row_prefetch_start(const float *C, size_t ldc, int mr, int nr, int kc)
{
    RowPrefetch t = {C, ldc, nr, mr, kc / (3 * mr)};
    if (t.every == 0) { /* a short loop (kc < 36): the whole tile now, one chunk */
        prefetch_tile(C, ldc, mr, nr);
        t.rows_left = 0;
    }
    return t;
}

/* Asks for the next row, if any is left, and returns where the chunk of k
 * that starts at k ends: the last row's runs to kc. */
static inline int row_prefetch_chunk(RowPrefetch *t, int k, int kc)
{
    if (t->rows_left == 0) return kc;
    prefetch_row(t->next_row, t->nr);
    t->next_row += t->ldc;
    return --t->rows_left > 0 ? k + t->every : kc;
}

/* AVX-512: 12 rows × 32 columns = 24 zmm accumulators, plus two for B and
 * the broadcasts folded into the FMAs' memory operands (32 registers). */
enum { MR_512 = 12, NR_512 = 32 };

/* The tile's accumulators into C: straight for a whole tile, through a
 * buffer for an edge one. */
__attribute__((target("avx512f"), always_inline))
static inline void tile_out_avx512(__m512 acc[][2], float *C, size_t ldc, int mr, int nr,
                                   bool accumulate, const int rows)
{
    if (mr == rows && nr == NR_512) {
#pragma GCC unroll 12
        for (int r = 0; r < rows; r++) {
            float *c = C + (size_t)r * ldc;
            if (accumulate) {
                acc[r][0] = _mm512_add_ps(_mm512_loadu_ps(c), acc[r][0]);
                acc[r][1] = _mm512_add_ps(_mm512_loadu_ps(c + 16), acc[r][1]);
            }
            _mm512_storeu_ps(c, acc[r][0]);
            _mm512_storeu_ps(c + 16, acc[r][1]);
        }
    } else {
        _Alignas(64) float tile[MR_512 * NR_512];
#pragma GCC unroll 12
        for (int r = 0; r < rows; r++) {
            _mm512_store_ps(tile + r * NR_512, acc[r][0]);
            _mm512_store_ps(tile + r * NR_512 + 16, acc[r][1]);
        }
        tile_to_c(C, ldc, tile, NR_512, mr, nr, accumulate);
    }
}

/* The micro-kernel on the first `rows` rows of the panel (a constant after
 * inlining, so the accumulators stay in registers).  The last panel of a
 * block is often partly padding (32 rows = 12 + 12 + 8); it runs on the
 * rows it has instead of multiplying zeros, and each element is still the
 * same chain of fused multiply-adds, so the bits do not change. */
__attribute__((target("avx512f,fma"), always_inline))
static inline void micro_rows_avx512(int kc, const float *Ap, const float *Bp, float *C, size_t ldc,
                                     int mr, int nr, bool accumulate, const int rows)
{
    __m512 acc[MR_512][2];
#pragma GCC unroll 12
    for (int r = 0; r < rows; r++) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    RowPrefetch ahead = row_prefetch_start(C, ldc, mr, nr, kc);
    for (int k = 0; k < kc;)
        for (int end = row_prefetch_chunk(&ahead, k, kc); k < end; k++, Ap += MR_512, Bp += NR_512) {
            __m512 b0 = _mm512_load_ps(Bp), b1 = _mm512_load_ps(Bp + 16);
#pragma GCC unroll 12
            for (int r = 0; r < rows; r++) {
                __m512 a = _mm512_set1_ps(Ap[r]);
                acc[r][0] = _mm512_fmadd_ps(a, b0, acc[r][0]);
                acc[r][1] = _mm512_fmadd_ps(a, b1, acc[r][1]);
            }
        }
    tile_out_avx512(acc, C, ldc, mr, nr, accumulate, rows);
}

/* micro_avx512 on 12 whole rows of A read where they lie, `lda` apart,
 * instead of from a packed panel: for gemm_nt and gemm_nn, whose A runs
 * along k in memory, packing A is a transpose, and with N as small as 256
 * (a third of the model's products) its cost was a third of the
 * multiplying (perf, AMD EPYC Zen 5: pack_rows_avx512 12% against
 * micro_avx512's 25% on nt 4096×256×256).  Each value of A is still
 * broadcast once per k and meets the same values of B in the same order,
 * so the bits are the packed path's.  The rows are reached from four
 * pointers (rows 0, 3, 6, 9) and two offsets (lda, 2·lda), which the
 * loads take as base + index·4.  (gemm_tn's A, whose panel at each k is
 * MR floats side by side, was read in place too: training 1-2% faster
 * with AVX-512 and 2.5% slower with AVX2, whose tn 1024×256×2048 fell
 * from 0.98x to 0.73x OpenBLAS — rows of k 4 KB apart, a page a step —
 * so it stays packed.) */
__attribute__((target("avx512f,fma")))
static void micro_direct_avx512(int kc, const float *A, size_t lda, const float *Bp, float *C,
                                size_t ldc, int nr, bool accumulate)
{
    __m512 acc[MR_512][2];
#pragma GCC unroll 12
    for (int r = 0; r < MR_512; r++) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    RowPrefetch ahead = row_prefetch_start(C, ldc, MR_512, nr, kc);
    const float *base[4] = {A, A + 3 * lda, A + 6 * lda, A + 9 * lda};
    const size_t offset[3] = {0, lda, 2 * lda};
    for (int k = 0; k < kc;)
        for (int end = row_prefetch_chunk(&ahead, k, kc); k < end; k++, Bp += NR_512) {
            __m512 b0 = _mm512_load_ps(Bp), b1 = _mm512_load_ps(Bp + 16);
#pragma GCC unroll 12
            for (int r = 0; r < MR_512; r++) {
                __m512 a = _mm512_set1_ps(base[r / 3][offset[r % 3] + (size_t)k]);
                acc[r][0] = _mm512_fmadd_ps(a, b0, acc[r][0]);
                acc[r][1] = _mm512_fmadd_ps(a, b1, acc[r][1]);
            }
        }
    tile_out_avx512(acc, C, ldc, MR_512, nr, accumulate, MR_512);
}

/* mr ≤ 4, ≤ 8 or ≤ 12 rows: three copies are enough to bound the waste. */
__attribute__((target("avx512f,fma")))
static void micro_avx512(int kc, const float *Ap, const float *Bp, float *C, size_t ldc,
                         int mr, int nr, bool accumulate)
{
    if (mr > 8) micro_rows_avx512(kc, Ap, Bp, C, ldc, mr, nr, accumulate, 12);
    else if (mr > 4) micro_rows_avx512(kc, Ap, Bp, C, ldc, mr, nr, accumulate, 8);
    else micro_rows_avx512(kc, Ap, Bp, C, ldc, mr, nr, accumulate, 4);
}

/* Transpose, in registers, the 16×16 block whose rows are row[0..15]:
 * afterwards col[c] holds what was column c.  Four rounds of shuffles: pairs
 * of floats, then 4-float groups within each 128-bit lane, then the lanes. */
__attribute__((target("avx512f")))
static inline void transpose16_avx512(const __m512 row[16], __m512 col[16])
{
    __m512 t[16], u[16];
    for (int q = 0; q < 8; q++) {
        t[2 * q] = _mm512_unpacklo_ps(row[2 * q], row[2 * q + 1]);
        t[2 * q + 1] = _mm512_unpackhi_ps(row[2 * q], row[2 * q + 1]);
    }
    /* u[4p + c], 128-bit lane L: rows 4p..4p+3 of column 4L + c */
    for (int p = 0; p < 4; p++) {
        u[4 * p + 0] = _mm512_shuffle_ps(t[4 * p], t[4 * p + 2], _MM_SHUFFLE(1, 0, 1, 0));
        u[4 * p + 1] = _mm512_shuffle_ps(t[4 * p], t[4 * p + 2], _MM_SHUFFLE(3, 2, 3, 2));
        u[4 * p + 2] = _mm512_shuffle_ps(t[4 * p + 1], t[4 * p + 3], _MM_SHUFFLE(1, 0, 1, 0));
        u[4 * p + 3] = _mm512_shuffle_ps(t[4 * p + 1], t[4 * p + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    /* for each c, a 4×4 transpose of 128-bit lanes across p and L */
    for (int c = 0; c < 4; c++) {
        __m512 w0 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88);
        __m512 w1 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xdd);
        __m512 w2 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88);
        __m512 w3 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xdd);
        col[c] = _mm512_shuffle_f32x4(w0, w2, 0x88);
        col[4 + c] = _mm512_shuffle_f32x4(w1, w3, 0x88);
        col[8 + c] = _mm512_shuffle_f32x4(w0, w2, 0xdd);
        col[12 + c] = _mm512_shuffle_f32x4(w1, w3, 0xdd);
    }
}

/* Columns k0..k0+15 of `count` ≤ 16 rows of a matrix (each contiguous
 * along k, `stride` floats apart; only the first `kn` ≤ 16 values of a row
 * are read), transposed: col[kk] lane x = M(row x, k0 + kk), zero for rows
 * past count.  A whole 16×16 block is loaded 4 floats at a time, rows q,
 * q + 4, q + 8 and q + 12 into the four 128-bit lanes of one register, so
 * what is left is four 4×4 transposes within lanes, and nothing crosses a
 * lane after loading (as load_columns_avx2 does): B of gemm_nt packed at
 * 25 -> 44 GB/s on an AMD EPYC (Zen 5), against transpose16_avx512's
 * shuffles across lanes, which the edges still take. */
__attribute__((target("avx512f")))
static inline void load_columns_avx512(__m512 col[16], const float *src, size_t stride, int count,
                                         int kn)
{
    if (count == 16 && kn == 16) {
        __m512 v[4][4]; /* [k group g][q]: lane L = row q + 4L, values 4g..4g+3 */
#pragma GCC unroll 4
        for (int g = 0; g < 4; g++)
#pragma GCC unroll 4
            for (int q = 0; q < 4; q++) {
                const float *p = src + (size_t)q * stride + 4 * g;
                __m512 x = _mm512_castps128_ps512(_mm_loadu_ps(p));
                x = _mm512_insertf32x4(x, _mm_loadu_ps(p + 4 * stride), 1);
                x = _mm512_insertf32x4(x, _mm_loadu_ps(p + 8 * stride), 2);
                v[g][q] = _mm512_insertf32x4(x, _mm_loadu_ps(p + 12 * stride), 3);
            }
#pragma GCC unroll 4
        for (int g = 0; g < 4; g++) {
            __m512 *r = v[g];
            __m512 t0 = _mm512_unpacklo_ps(r[0], r[1]), t1 = _mm512_unpackhi_ps(r[0], r[1]);
            __m512 t2 = _mm512_unpacklo_ps(r[2], r[3]), t3 = _mm512_unpackhi_ps(r[2], r[3]);
            col[4 * g + 0] = _mm512_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
            col[4 * g + 1] = _mm512_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
            col[4 * g + 2] = _mm512_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
            col[4 * g + 3] = _mm512_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
        }
        return;
    }
    __mmask16 kmask = (__mmask16)((1u << kn) - 1);
    __m512 row[16];
    for (int x = 0; x < 16; x++)
        row[x] = x < count ? _mm512_maskz_loadu_ps(kmask, src + (size_t)x * stride) : _mm512_setzero_ps();
    transpose16_avx512(row, col);
}

/* Pack a panel of `width` (MR_512 or NR_512) lines whose values run along k
 * in memory, `stride` floats apart (A's rows for gemm_nt and gemm_nn, B's
 * rows for gemm_nt): dst[k*width + x] = src[x*stride + k], zero past
 * `count` lines.  A transpose, done 16×16 in registers: several times
 * faster than scalar copies or gathers, which matters when packing costs
 * a visible share of the multiplication (few rows, or N as small as 256). */
__attribute__((target("avx512f")))
static void pack_rows_avx512(float *dst, const float *src, size_t stride, int kc, int count,
                             int width)
{
    for (int x0 = 0; x0 < width; x0 += 16) {
        int n = count - x0 < 0 ? 0 : count - x0 > 16 ? 16 : count - x0;
        int lanes = width - x0 < 16 ? width - x0 : 16;
        __mmask16 store = (__mmask16)((1u << lanes) - 1);
        for (int k0 = 0; k0 < kc; k0 += 16) {
            int kn = kc - k0 < 16 ? kc - k0 : 16;
            __m512 col[16];
            for (int x = 0; x < n; x++) __builtin_prefetch(src + (x0 + x) * stride + k0 + PACK_AHEAD);
            load_columns_avx512(col, src + (size_t)x0 * stride + k0, stride, n, kn);
            for (int kk = 0; kk < kn; kk++)
                _mm512_mask_storeu_ps(dst + (size_t)(k0 + kk) * width + x0, store, col[kk]);
        }
    }
}

/* Pack `count` lines whose values lie side by side in memory (a row of k
 * is `count` contiguous floats, rows `stride` apart: A of gemm_tn, B of
 * gemm_nn and gemm_tn) into ceil(count / width) panels of `width` (MR_512
 * or NR_512), each kc·width floats, panel_stride apart: panel p,
 * dst[p·panel_stride + k·width + x] = src[k·stride + p·width + x], zero
 * past count.  Row k of every panel is written before row k + 1, so each
 * row of the source is read once, in order (packing panel by panel would
 * fetch each cache line once per panel it spans).  The panels wholly
 * inside the block are copied with `width` a constant, in whole vectors
 * but for the 12- and 6-wide panels' last one, under a constant mask; only
 * the last, partial panel computes masks (the zero padding).  (Every panel
 * once computed its masks per row: packing was then bound by those
 * instructions, not by memory.  On an AMD EPYC (Zen 5, 1 thread), B's
 * packing in gemm_tn 256×1024×4096 took 17.5% of the product's time, 7.6%
 * without, and the product 185-188 -> 183-201 GF/s (3 alternated runs);
 * over the 48 training shapes, the best of 40 rounds each, old and new
 * alternated: gemm_tn's weight gradients +8-13%, the 32-row gemm_nn
 * +13-15%, geomean +3.2%, none more than 3% slower; AVX2 forced +1.3%, at
 * most +6.6%.) */
__attribute__((target("avx512f"), always_inline))
static inline void pack_cols_width_avx512(float *dst, const float *src, size_t stride, int kc,
                                          int count, const int width)
{
    int panels = (count + width - 1) / width, whole = count / width;
    size_t panel_len = panel_stride(kc, width);
    const __mmask16 tail = (__mmask16)((1u << (width % 16)) - 1);
    for (int k = 0; k < kc; k++) {
        const float *s = src + (size_t)k * stride;
        float *d = dst + (size_t)k * width;
        for (int p = 0; p < whole; p++, s += width, d += panel_len) {
            __builtin_prefetch(s + PACK_ROWS_AHEAD * stride);
            __builtin_prefetch(s + PACK_ROWS_AHEAD * stride + width - 1);
            int x = 0;
            for (; x + 16 <= width; x += 16) _mm512_storeu_ps(d + x, _mm512_loadu_ps(s + x));
            if (width % 16) _mm512_mask_storeu_ps(d + x, tail, _mm512_maskz_loadu_ps(tail, s + x));
        }
        if (whole < panels) { /* the last panel, zero past count */
            int left = count - whole * width;
            __builtin_prefetch(s + PACK_ROWS_AHEAD * stride);
            for (int x = 0; x < width; x += 16) {
                int n = left - x < 0 ? 0 : left - x > 16 ? 16 : left - x;
                int lanes = width - x < 16 ? width - x : 16;
                __m512 v = _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1), s + x);
                _mm512_mask_storeu_ps(d + x, (__mmask16)((1u << lanes) - 1), v);
            }
        }
    }
}

__attribute__((target("avx512f")))
static void pack_cols_avx512(float *dst, const float *src, size_t stride, int kc, int count,
                             int width)
{
    if (width == NR_512) pack_cols_width_avx512(dst, src, stride, kc, count, NR_512);
    else {
        ASSERT(width == MR_512);
        pack_cols_width_avx512(dst, src, stride, kc, count, MR_512);
    }
}

/* gemm_nt on a few dozen rows (SWAP_M) turned around: Cᵀ = B·Aᵀ.  The
 * blocked path would transpose all of B (a weight, N×K) into panels for a
 * product that uses each of its values only M times; here the micro-kernel
 * broadcasts B's values straight from its rows (`rows` ≤ MR_512 of them,
 * ldb apart) and takes vectors of 32 values of A along m from a packed Aᵀ
 * panel ([kc][32], which is small).  Each element of C is the same chain of
 * fused multiply-adds as in micro_avx512 (a·b and b·a are the same exact
 * product), added to C the same way, so the bits are those of the blocked
 * path.  The tile comes out transposed (rows of the accumulators are
 * columns of C) and is turned around 16×16 in registers on the way to C. */
__attribute__((target("avx512f,fma"), always_inline))
static inline void micro_t_rows_avx512(int kc, const float *B, size_t ldb, const float *Ap,
                                       float *C, size_t ldc, int mj, int nm, bool accumulate,
                                       const int rows)
{
    __m512 acc[MR_512][2];
    const float *brow[MR_512]; /* rows past mj (past N) read row 0 again, for nothing */
#pragma GCC unroll 12
    for (int r = 0; r < rows; r++) {
        acc[r][0] = acc[r][1] = _mm512_setzero_ps();
        brow[r] = B + (size_t)(r < mj ? r : 0) * ldb;
    }
    for (int k = 0; k < kc; k++, Ap += NR_512) {
        __m512 a0 = _mm512_load_ps(Ap), a1 = _mm512_load_ps(Ap + 16);
#pragma GCC unroll 12
        for (int r = 0; r < rows; r++) {
            __m512 b = _mm512_set1_ps(brow[r][k]);
            acc[r][0] = _mm512_fmadd_ps(b, a0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(b, a1, acc[r][1]);
        }
    }
    __mmask16 lanes = (__mmask16)((1u << mj) - 1);
    for (int h = 0; h < 2 && 16 * h < nm; h++) {
        __m512 t[16], col[16];
        for (int r = 0; r < 16; r++) t[r] = r < rows ? acc[r][h] : _mm512_setzero_ps();
        transpose16_avx512(t, col);
        int n = nm - 16 * h < 16 ? nm - 16 * h : 16;
        for (int l = 0; l < n; l++) {
            float *c = C + (size_t)(16 * h + l) * ldc;
            __m512 v = accumulate ? _mm512_add_ps(_mm512_maskz_loadu_ps(lanes, c), col[l]) : col[l];
            _mm512_mask_storeu_ps(c, lanes, v);
        }
    }
}

/* C (+)= the transposed tile: `mj` ≤ MR_512 rows of B from B, nm ≤ NR_512
 * rows of A from the panel Ap; C points at C[m0][j0]. */
__attribute__((target("avx512f,fma")))
static void micro_t_avx512(int kc, const float *B, size_t ldb, const float *Ap, float *C,
                           size_t ldc, int mj, int nm, bool accumulate)
{
    if (mj > 8) micro_t_rows_avx512(kc, B, ldb, Ap, C, ldc, mj, nm, accumulate, 12);
    else if (mj > 4) micro_t_rows_avx512(kc, B, ldb, Ap, C, ldc, mj, nm, accumulate, 8);
    else micro_t_rows_avx512(kc, B, ldb, Ap, C, ldc, mj, nm, accumulate, 4);
}

#endif /* GEMM_X86 */

/* gemm_nt for a few rows of A (small_nt_avx2 below is the same in 8-float
 * vectors): decoding (one row per sentence or beam
 * hypothesis) and the encoder of a short sentence.  There the blocked path
 * is the wrong shape: packing B costs more than the product itself (every
 * weight read, written and read again), and its MR-row micro-kernel
 * multiplies 11 rows of zeros for each real one.  Here each element of C is
 * a dot product of a row of A with a row of B, both contiguous: 16 partial
 * sums along k, then added up.  Four rows of A × four rows of B at a time,
 * so each load is used four times.  On one row this is about 8 times
 * faster than the blocked path; from about 24 rows on the blocked path
 * wins (measured with 256 ≤ K ≤ 1024).  The order of summation differs
 * from the blocked path's, so these rows differ from the same rows of a tall
 * product in the last bits (within float rounding: tests/test_gemm.c), but a
 * row's result does not depend on which or how many rows come with it:
 * beam hypotheses and greedy decoding agree. */
enum { SMALL_M = GEMM_SMALL_M, SMALL_MR = 4, SMALL_NB = 4 };

/* gemm_nt on SMALL_M < M ≤ SWAP_M rows takes the turned-around path
 * (micro_t_avx512): the training shapes' 32-row batches.  Its bits are the
 * blocked path's, so the bound only matters for speed. */
enum { SWAP_M = 48 };

#if GEMM_X86

/* C[0..m-1][0..nb-1] (+)= A[0..m-1] · B[0..nb-1]ᵀ, m and nb constants after
 * inlining so the m·nb accumulators stay in registers. */
__attribute__((target("avx512f,fma"), always_inline))
static inline void small_nt_block_avx512(float *C, size_t ldc, const float *A, size_t lda,
                                         const float *B, size_t ldb, const int m, const int nb,
                                         int k, bool accumulate)
{
    __m512 acc[SMALL_MR][SMALL_NB];
#pragma GCC unroll 4
    for (int i = 0; i < m; i++)
#pragma GCC unroll 4
        for (int j = 0; j < nb; j++) acc[i][j] = _mm512_setzero_ps();
    for (int p = 0; p < k; p += 16) {
        __mmask16 kmask = (__mmask16)(k - p >= 16 ? 0xffff : (1u << (k - p)) - 1);
        __m512 b[SMALL_NB];
#pragma GCC unroll 4
        for (int j = 0; j < nb; j++) b[j] = _mm512_maskz_loadu_ps(kmask, B + (size_t)j * ldb + p);
#pragma GCC unroll 4
        for (int i = 0; i < m; i++) {
            __m512 a = _mm512_maskz_loadu_ps(kmask, A + (size_t)i * lda + p);
#pragma GCC unroll 4
            for (int j = 0; j < nb; j++) acc[i][j] = _mm512_fmadd_ps(a, b[j], acc[i][j]);
        }
    }
#pragma GCC unroll 4
    for (int i = 0; i < m; i++)
#pragma GCC unroll 4
        for (int j = 0; j < nb; j++) {
            float *c = C + (size_t)i * ldc + j, sum = _mm512_reduce_add_ps(acc[i][j]);
            *c = accumulate ? *c + sum : sum;
        }
}

__attribute__((target("avx512f,fma"), always_inline))
static inline void small_nt_rows_avx512(float *C, size_t ldc, const float *A, size_t lda,
                                        const float *B, size_t ldb, const int m, int n, int k,
                                        bool accumulate)
{
    int j = 0;
    for (; j + SMALL_NB <= n; j += SMALL_NB)
        small_nt_block_avx512(C + j, ldc, A, lda, B + (size_t)j * ldb, ldb, m, SMALL_NB, k, accumulate);
    for (; j < n; j++)
        small_nt_block_avx512(C + j, ldc, A, lda, B + (size_t)j * ldb, ldb, m, 1, k, accumulate);
}

/* One copy of the loop per row count, so the accumulators stay in registers. */
__attribute__((target("avx512f,fma")))
static void small_nt_avx512(float *C, size_t ldc, const float *A, size_t lda, const float *B,
                            size_t ldb, int m, int n, int k, bool accumulate)
{
    for (int i = 0; i < m; i += SMALL_MR, C += SMALL_MR * ldc, A += SMALL_MR * lda) {
        switch (m - i) {
        case 1: small_nt_rows_avx512(C, ldc, A, lda, B, ldb, 1, n, k, accumulate); break;
        case 2: small_nt_rows_avx512(C, ldc, A, lda, B, ldb, 2, n, k, accumulate); break;
        case 3: small_nt_rows_avx512(C, ldc, A, lda, B, ldb, 3, n, k, accumulate); break;
        default: small_nt_rows_avx512(C, ldc, A, lda, B, ldb, 4, n, k, accumulate); break;
        }
    }
}

/* AVX2: 6 rows × 16 columns = 12 ymm accumulators of the 16 registers. */
enum { MR_256 = 6, NR_256 = 16 };

/* As tile_out_avx512. */
__attribute__((target("avx2"), always_inline))
static inline void tile_out_avx2(__m256 acc[][2], float *C, size_t ldc, int mr, int nr,
                                 bool accumulate, const int rows)
{
    if (mr == rows && nr == NR_256) {
#pragma GCC unroll 6
        for (int r = 0; r < rows; r++) {
            float *c = C + (size_t)r * ldc;
            if (accumulate) {
                acc[r][0] = _mm256_add_ps(_mm256_loadu_ps(c), acc[r][0]);
                acc[r][1] = _mm256_add_ps(_mm256_loadu_ps(c + 8), acc[r][1]);
            }
            _mm256_storeu_ps(c, acc[r][0]);
            _mm256_storeu_ps(c + 8, acc[r][1]);
        }
    } else {
        _Alignas(32) float tile[MR_256 * NR_256];
#pragma GCC unroll 6
        for (int r = 0; r < rows; r++) {
            _mm256_store_ps(tile + r * NR_256, acc[r][0]);
            _mm256_store_ps(tile + r * NR_256 + 8, acc[r][1]);
        }
        tile_to_c(C, ldc, tile, NR_256, mr, nr, accumulate);
    }
}

/* As micro_rows_avx512: the first `rows` rows of the panel. */
__attribute__((target("avx2,fma"), always_inline))
static inline void micro_rows_avx2(int kc, const float *Ap, const float *Bp, float *C, size_t ldc,
                                   int mr, int nr, bool accumulate, const int rows)
{
    __m256 acc[MR_256][2];
#pragma GCC unroll 6
    for (int r = 0; r < rows; r++) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    prefetch_tile(C, ldc, mr, nr);
    for (int k = 0; k < kc; k++, Ap += MR_256, Bp += NR_256) {
        __m256 b0 = _mm256_load_ps(Bp), b1 = _mm256_load_ps(Bp + 8);
#pragma GCC unroll 6
        for (int r = 0; r < rows; r++) {
            __m256 a = _mm256_broadcast_ss(Ap + r);
            acc[r][0] = _mm256_fmadd_ps(a, b0, acc[r][0]);
            acc[r][1] = _mm256_fmadd_ps(a, b1, acc[r][1]);
        }
    }
    tile_out_avx2(acc, C, ldc, mr, nr, accumulate, rows);
}

/* micro_direct_avx512 in 8-float vectors: 6 whole rows of A read in place,
 * from two pointers (rows 0 and 3) that move along k, each with offsets
 * lda and 2·lda, which the loads take as pointer + lda·4 and + lda·8.
 * (Indexed as micro_direct_avx512's are, base[r / 3] + offset[r % 3] + k,
 * gcc spent 7 integer instructions a step on the addresses, beside 12
 * multiply-adds: on an Intel Xeon, AVX2 forced, 1 thread, 3 alternated
 * rounds, every nt and nn training shape went 5-11% faster this way, e.g.
 * nn 512×256×5230 106 -> 113 GF/s, nt 2048×256×256 114 -> 123; the same
 * loads in the same order, so the same bits.) */
__attribute__((target("avx2,fma")))
static void micro_direct_avx2(int kc, const float *A, size_t lda, const float *Bp, float *C,
                              size_t ldc, int nr, bool accumulate)
{
    __m256 acc[MR_256][2];
#pragma GCC unroll 6
    for (int r = 0; r < MR_256; r++) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    prefetch_tile(C, ldc, MR_256, nr);
    const float *top = A, *middle = A + 3 * lda; /* rows 0 and 3, at k */
    for (int k = 0; k < kc; k++, top++, middle++, Bp += NR_256) {
        __m256 b0 = _mm256_load_ps(Bp), b1 = _mm256_load_ps(Bp + 8);
#pragma GCC unroll 6
        for (int r = 0; r < MR_256; r++) {
            __m256 a = _mm256_broadcast_ss((r < 3 ? top : middle) + (size_t)(r % 3) * lda);
            acc[r][0] = _mm256_fmadd_ps(a, b0, acc[r][0]);
            acc[r][1] = _mm256_fmadd_ps(a, b1, acc[r][1]);
        }
    }
    tile_out_avx2(acc, C, ldc, MR_256, nr, accumulate, MR_256);
}

__attribute__((target("avx2,fma")))
static void micro_avx2(int kc, const float *Ap, const float *Bp, float *C, size_t ldc, int mr,
                       int nr, bool accumulate)
{
    switch (mr) {
    case 1: micro_rows_avx2(kc, Ap, Bp, C, ldc, mr, nr, accumulate, 1); break;
    case 2: micro_rows_avx2(kc, Ap, Bp, C, ldc, mr, nr, accumulate, 2); break;
    case 3: micro_rows_avx2(kc, Ap, Bp, C, ldc, mr, nr, accumulate, 3); break;
    case 4: micro_rows_avx2(kc, Ap, Bp, C, ldc, mr, nr, accumulate, 4); break;
    case 5: micro_rows_avx2(kc, Ap, Bp, C, ldc, mr, nr, accumulate, 5); break;
    default: micro_rows_avx2(kc, Ap, Bp, C, ldc, mr, nr, accumulate, 6); break;
    }
}

/* Columns k0..k0+7 of 8 rows (each contiguous along k, `stride` floats
 * apart, src pointing at row 0's value k0), transposed: col[kk] lane x =
 * row x's value k0 + kk.  Rows x and x + 4 are loaded 4 floats at a time
 * into the two 128-bit lanes of one register, so the transpose is two 4×4
 * ones within lanes (unpacks and shuffles) and no value crosses a lane
 * after loading.  (A transpose of
 * whole rows, finished by 8 vperm2f128 across the lanes, packed B of
 * gemm_nt at 17-18 GB/s on an AMD EPYC (Zen 5), this at 40-53: a 5230×256
 * weight in 0.30 -> 0.13 ms.) */
__attribute__((target("avx2")))
static inline void load_columns_avx2(__m256 col[8], const float *src, size_t stride)
{
    __m256 half[2][4]; /* [k0..3 or k4..7][row pair x, x + 4] */
#pragma GCC unroll 4
    for (int x = 0; x < 4; x++) {
        const float *a = src + (size_t)x * stride, *b = src + (size_t)(x + 4) * stride;
        half[0][x] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(a)), _mm_loadu_ps(b), 1);
        half[1][x] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(a + 4)), _mm_loadu_ps(b + 4), 1);
    }
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) {
        __m256 *r = half[h];
        __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
        __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
        col[4 * h + 0] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
        col[4 * h + 1] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
        col[4 * h + 2] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
        col[4 * h + 3] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
    }
}

/* Mask of the first n ≤ 8 lanes, for maskload / maskstore. */
__attribute__((target("avx2")))
static inline __m256i lanes_avx2(int n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Store the first n ≤ 8 floats of v at d (n = 6 for an A panel, 8 for B):
 * plain stores, since on AMD a masked store is much slower than two. */
__attribute__((target("avx2")))
static inline void store_first_avx2(float *d, __m256 v, int n)
{
    if (n == 8) {
        _mm256_storeu_ps(d, v);
    } else {
        __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
        if (n >= 4) _mm_storeu_ps(d, lo);
        else if (n > 0) _mm_maskstore_ps(d, _mm256_castsi256_si128(lanes_avx2(n)), lo);
        if (n == 6) _mm_storel_pi((__m64 *)(d + 4), hi);
        else if (n > 4) _mm_maskstore_ps(d + 4, _mm256_castsi256_si128(lanes_avx2(n - 4)), hi);
    }
}

/* pack_rows_avx512 in 8-float vectors: a panel of `width` (MR_256 or
 * NR_256) lines running along k, 8×8 at a time (load_columns_avx2).  A
 * block past the matrix's edge (fewer than 8 lines, or of k) is first
 * copied into a tile of zeros. */
__attribute__((target("avx2")))
static void pack_rows_avx2(float *dst, const float *src, size_t stride, int kc, int count,
                           int width)
{
    for (int x0 = 0; x0 < width; x0 += 8) {
        int n = count - x0 < 0 ? 0 : count - x0 > 8 ? 8 : count - x0;
        int lanes = width - x0 < 8 ? width - x0 : 8;
        const float *s = src + (size_t)x0 * stride;
        for (int k0 = 0; k0 < kc; k0 += 8) {
            int kn = kc - k0 < 8 ? kc - k0 : 8;
            __m256 col[8];
            if (k0 % 16 == 0) /* once per cache line */
                for (int x = 0; x < n; x++) __builtin_prefetch(s + x * stride + k0 + PACK_AHEAD);
            float *d = dst + (size_t)k0 * width + x0;
            if (n == 8 && kn == 8) { /* all but the edges (n == 8: the panel is 8 wide here too) */
                load_columns_avx2(col, s + k0, stride);
#pragma GCC unroll 8
                for (int kk = 0; kk < 8; kk++) _mm256_storeu_ps(d + (size_t)kk * width, col[kk]);
                continue;
            }
            float tile[8][8] = {{0}};
            for (int x = 0; x < n; x++) memcpy(tile[x], s + (size_t)x * stride + k0, (size_t)kn * sizeof(float));
            load_columns_avx2(col, tile[0], 8);
            for (int kk = 0; kk < kn; kk++) store_first_avx2(d + (size_t)kk * width, col[kk], lanes);
        }
    }
}

/* pack_cols_avx512 in 8-float vectors (width MR_256 or NR_256). */
__attribute__((target("avx2"), always_inline))
static inline void pack_cols_width_avx2(float *dst, const float *src, size_t stride, int kc,
                                        int count, const int width)
{
    int panels = (count + width - 1) / width, whole = count / width;
    size_t panel_len = panel_stride(kc, width);
    for (int k = 0; k < kc; k++) {
        const float *s = src + (size_t)k * stride;
        float *d = dst + (size_t)k * width;
        for (int p = 0; p < whole; p++, s += width, d += panel_len) {
            __builtin_prefetch(s + PACK_ROWS_AHEAD * stride);
            __builtin_prefetch(s + PACK_ROWS_AHEAD * stride + width - 1);
            int x = 0;
            for (; x + 8 <= width; x += 8) _mm256_storeu_ps(d + x, _mm256_loadu_ps(s + x));
            if (width % 8)
                store_first_avx2(d + x, _mm256_maskload_ps(s + x, lanes_avx2(width % 8)), width % 8);
        }
        if (whole < panels) { /* the last panel, zero past count */
            int left = count - whole * width;
            __builtin_prefetch(s + PACK_ROWS_AHEAD * stride);
            for (int x = 0; x < width; x += 8) {
                int n = left - x < 0 ? 0 : left - x > 8 ? 8 : left - x;
                int lanes = width - x < 8 ? width - x : 8;
                __m256 v = n == 8 ? _mm256_loadu_ps(s + x) : _mm256_maskload_ps(s + x, lanes_avx2(n));
                store_first_avx2(d + x, v, lanes);
            }
        }
    }
}

__attribute__((target("avx2")))
static void pack_cols_avx2(float *dst, const float *src, size_t stride, int kc, int count,
                           int width)
{
    if (width == NR_256) pack_cols_width_avx2(dst, src, stride, kc, count, NR_256);
    else {
        ASSERT(width == MR_256);
        pack_cols_width_avx2(dst, src, stride, kc, count, MR_256);
    }
}

/* The few-rows gemm_nt of small_nt_avx512 in 8-float vectors: 4 rows of A ×
 * 2 rows of B, so the 8 accumulators, 2 rows of B and one of A fit in the
 * 16 registers. */
enum { SMALL_NB_256 = 2 };

__attribute__((target("avx2,fma"), always_inline))
static inline void small_nt_block_avx2(float *C, size_t ldc, const float *A, size_t lda,
                                       const float *B, size_t ldb, const int m, const int nb,
                                       int k, bool accumulate)
{
    __m256 acc[SMALL_MR][SMALL_NB_256];
#pragma GCC unroll 4
    for (int i = 0; i < m; i++)
#pragma GCC unroll 2
        for (int j = 0; j < nb; j++) acc[i][j] = _mm256_setzero_ps();
    for (int p = 0; p < k; p += 8) {
        int left = k - p < 8 ? k - p : 8;
        __m256i kmask = _mm256_cmpgt_epi32(_mm256_set1_epi32(left), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        __m256 b[SMALL_NB_256];
#pragma GCC unroll 2
        for (int j = 0; j < nb; j++) b[j] = _mm256_maskload_ps(B + (size_t)j * ldb + p, kmask);
#pragma GCC unroll 4
        for (int i = 0; i < m; i++) {
            __m256 a = _mm256_maskload_ps(A + (size_t)i * lda + p, kmask);
#pragma GCC unroll 2
            for (int j = 0; j < nb; j++) acc[i][j] = _mm256_fmadd_ps(a, b[j], acc[i][j]);
        }
    }
#pragma GCC unroll 4
    for (int i = 0; i < m; i++)
#pragma GCC unroll 2
        for (int j = 0; j < nb; j++) {
            __m128 half = _mm_add_ps(_mm256_castps256_ps128(acc[i][j]), _mm256_extractf128_ps(acc[i][j], 1));
            half = _mm_add_ps(half, _mm_movehl_ps(half, half));
            float *c = C + (size_t)i * ldc + j, sum = _mm_cvtss_f32(_mm_add_ss(half, _mm_movehdup_ps(half)));
            *c = accumulate ? *c + sum : sum;
        }
}

__attribute__((target("avx2,fma"), always_inline))
static inline void small_nt_rows_avx2(float *C, size_t ldc, const float *A, size_t lda,
                                      const float *B, size_t ldb, const int m, int n, int k,
                                      bool accumulate)
{
    int j = 0;
    for (; j + SMALL_NB_256 <= n; j += SMALL_NB_256)
        small_nt_block_avx2(C + j, ldc, A, lda, B + (size_t)j * ldb, ldb, m, SMALL_NB_256, k, accumulate);
    for (; j < n; j++)
        small_nt_block_avx2(C + j, ldc, A, lda, B + (size_t)j * ldb, ldb, m, 1, k, accumulate);
}

__attribute__((target("avx2,fma")))
static void small_nt_avx2(float *C, size_t ldc, const float *A, size_t lda, const float *B,
                          size_t ldb, int m, int n, int k, bool accumulate)
{
    for (int i = 0; i < m; i += SMALL_MR, C += SMALL_MR * ldc, A += SMALL_MR * lda) {
        switch (m - i) {
        case 1: small_nt_rows_avx2(C, ldc, A, lda, B, ldb, 1, n, k, accumulate); break;
        case 2: small_nt_rows_avx2(C, ldc, A, lda, B, ldb, 2, n, k, accumulate); break;
        case 3: small_nt_rows_avx2(C, ldc, A, lda, B, ldb, 3, n, k, accumulate); break;
        default: small_nt_rows_avx2(C, ldc, A, lda, B, ldb, 4, n, k, accumulate); break;
        }
    }
}

#endif /* GEMM_X86 */

/* ---- kernel choice ---------------------------------------------------- */

typedef struct {
    const char *name;
    int mr, nr;
    MicroKernel *micro; /* NULL: the generic kernel (generic_product) */
    /* Optional fast pack_panel for one panel whose lines run along k with
     * the given stride (A of gemm_nt and gemm_nn, B of gemm_nt); NULL:
     * pack_panel does it. */
    void (*pack_rows)(float *dst, const float *src, size_t stride, int kc, int count, int width);
    /* Optional fast packing of a whole block of `count` lines lying side by
     * side, rows of k `stride` apart (A of gemm_tn, B of gemm_nn and
     * gemm_tn), into ceil(count / width) panels panel_stride apart; NULL:
     * pack_panel does it. */
    void (*pack_cols)(float *dst, const float *src, size_t stride, int kc, int count, int width);
    /* Optional gemm_nt for M ≤ SMALL_M (summed in another order than the
     * blocked path); NULL: the blocked path does it. */
    void (*small_nt)(float *C, size_t ldc, const float *A, size_t lda, const float *B, size_t ldb,
                     int m, int n, int k, bool accumulate);
    /* Optional turned-around micro-kernel for gemm_nt on SMALL_M < M ≤
     * SWAP_M rows (micro_t_avx512; the blocked path's bits); needs
     * pack_rows. */
    void (*micro_t)(int kc, const float *B, size_t ldb, const float *Ap, float *C, size_t ldc,
                    int mj, int nm, bool accumulate);
    /* Optional micro-kernel on MR whole rows of A read in place, rows lda
     * apart, each contiguous along k (micro_direct_avx512; the blocked
     * path's bits): then the blocked path packs no A but an edge panel. */
    void (*micro_direct)(int kc, const float *A, size_t lda, const float *Bp, float *C, size_t ldc,
                         int nr, bool accumulate);
} Kernel;

#if GEMM_X86
static const Kernel KERNEL_AVX512 = {"avx512",         MR_512,           NR_512,
                                     micro_avx512,     pack_rows_avx512, pack_cols_avx512,
                                     small_nt_avx512,  micro_t_avx512,   micro_direct_avx512};
/* No turned-around path for AVX2: written as micro_t_avx512 in 8-float
 * vectors it measured 0.7x the blocked path on 32 rows (6 broadcast
 * streams and two 8×8 transposes per 6×16 tile). */
static const Kernel KERNEL_AVX2 = {"avx2", MR_256, NR_256, micro_avx2, pack_rows_avx2,
                                     pack_cols_avx2, small_nt_avx2, NULL, micro_direct_avx2};
#endif
static const Kernel KERNEL_GENERIC = {"generic", 1, 1, NULL, NULL, NULL, NULL, NULL, NULL};

static bool cpu_runs(const Kernel *k)
{
#if GEMM_X86
    if (k == &KERNEL_AVX512)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
    if (k == &KERNEL_AVX2)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    (void)k;
#endif
    return true;
}

#if GEMM_X86
static const Kernel *const KERNELS[] = {&KERNEL_AVX512, &KERNEL_AVX2, &KERNEL_GENERIC};
#else /* another CPU: the references (gemm.h) */
static const Kernel *const KERNELS[] = {&KERNEL_GENERIC};
#endif

static const Kernel *auto_kernel;   /* best this CPU runs; set once */
static const Kernel *forced_kernel; /* gemm_force_kernel's choice, or NULL */
static pthread_once_t auto_once = PTHREAD_ONCE_INIT;

/* The best kernel this CPU runs, unless TRANSLATE_GEMM names another one
 * it runs ("avx512", "avx2" or "generic"; read once, here): so a benchmark
 * can time the AVX2 path on an AVX-512 machine in a whole program.  An
 * unknown or unrunnable name is ignored (gemm_kernel_name tells what ran). */
static void choose_auto_kernel(void)
{
#if GEMM_X86
    __builtin_cpu_init();
#endif
    const char *want = getenv("TRANSLATE_GEMM");
    for (int pass = want && *want ? 0 : 1; pass < 2 && !auto_kernel; pass++)
        for (size_t i = 0; i < sizeof KERNELS / sizeof *KERNELS; i++)
            if (cpu_runs(KERNELS[i]) && (pass == 1 || strcmp(KERNELS[i]->name, want) == 0)) {
                auto_kernel = KERNELS[i];
                break;
            }
}

static const Kernel *current_kernel(void)
{
    pthread_once(&auto_once, choose_auto_kernel);
    return forced_kernel ? forced_kernel : auto_kernel;
}

const char *gemm_kernel_name(void) { return current_kernel()->name; }

bool gemm_force_kernel(const char *name)
{
    pthread_once(&auto_once, choose_auto_kernel);
    if (!name) {
        forced_kernel = NULL;
        return true;
    }
    for (size_t i = 0; i < sizeof KERNELS / sizeof *KERNELS; i++)
        if (strcmp(KERNELS[i]->name, name) == 0 && cpu_runs(KERNELS[i])) {
            forced_kernel = KERNELS[i];
            return true;
        }
    return false;
}

/* ---- packing and the blocked loops ------------------------------------ */

/* One product C[m,n] (+)= A·B with A and B given by strides:
 * A(i,k) = a[i*a_rs + k*a_cs], B(k,j) = b[k*b_rs + j*b_cs]. */
typedef struct {
    float *c;
    size_t ldc;
    const float *a, *b;
    size_t a_rs, a_cs, b_rs, b_cs;
    int m, n, k;
    bool accumulate;
} Product;

/* Pack a panel of `width` (MR or NR) lines, `count` ≤ width of which exist,
 * kc long: dst[k*width + x] = src[k*k_stride + x*x_stride], zero past count.
 * The loop order follows whichever stride is 1 so reads are sequential. */
static void pack_panel(float *dst, const float *src, size_t k_stride, size_t x_stride, int kc,
                       int count, int width)
{
    if (x_stride == 1) {
        for (int k = 0; k < kc; k++, dst += width) {
            memcpy(dst, src + (size_t)k * k_stride, (size_t)count * sizeof *dst);
            memset(dst + count, 0, (size_t)(width - count) * sizeof *dst);
        }
        return;
    }
    for (int x = 0; x < count; x++) {
        const float *s = src + (size_t)x * x_stride;
        for (int k = 0; k < kc; k++) dst[(size_t)k * width + x] = s[(size_t)k * k_stride];
    }
    for (int k = 0; k < kc; k++)
        for (int x = count; x < width; x++) dst[(size_t)k * width + x] = 0.0f;
}

static int min_int(int a, int b) { return a < b ? a : b; }
static int round_up(int x, int to) { return (x + to - 1) / to * to; }

/* 64-byte aligned float buffer carved out of an xmalloc'd block. */
static float *align64(void *raw) { return (float *)(((uintptr_t)raw + 63) & ~(uintptr_t)63); }

/* Each thread's packing buffer, kept between calls: a fresh allocation per
 * call costs page faults (large blocks are mmap'ed anew each time), which
 * showed up as ~15% of a training step.  A thread that multiplied frees
 * its own when it exits (parallel.c's workers when parallel_stop ends
 * them), through a thread-specific key's destructor (the calling
 * thread of a program keeps its own until exit). */
static _Thread_local void *pack_buffer;
static _Thread_local size_t pack_buffer_size;
static pthread_key_t pack_key;
static pthread_once_t pack_key_once = PTHREAD_ONCE_INIT;

static void pack_release(void *unused)
{
    (void)unused;
    free(pack_buffer);
    pack_buffer = NULL;
    pack_buffer_size = 0;
}

static void pack_key_create(void)
{
    int failed = pthread_key_create(&pack_key, pack_release);
    ASSERT(!failed);
}

static void *pack_space(size_t bytes)
{
    if (bytes > pack_buffer_size) {
        if (!pack_buffer) { /* this thread's first: free it when the thread exits */
            pthread_once(&pack_key_once, pack_key_create);
            pthread_setspecific(pack_key, &pack_buffer_size);
        }
        free(pack_buffer);
        pack_buffer = xmalloc(bytes);
        pack_buffer_size = bytes;
    }
    return pack_buffer;
}

/* Pack `count` lines (rows of A or columns of B), line x and step k at
 * src[k*k_stride + x*x_stride], into ceil(count / width) panels of
 * kc·width floats, panel_stride apart, with the kernel's fast packing
 * where it has one for these strides. */
static void pack_block(const Kernel *kern, float *dst, const float *src, size_t k_stride,
                       size_t x_stride, int kc, int count, int width)
{
    if (x_stride == 1 && kern->pack_cols) {
        kern->pack_cols(dst, src, k_stride, kc, count, width);
        return;
    }
    size_t step = panel_stride(kc, width);
    for (int x = 0; x < count; x += width, dst += step, src += (size_t)width * x_stride) {
        if (k_stride == 1 && kern->pack_rows)
            kern->pack_rows(dst, src, x_stride, kc, min_int(width, count - x), width);
        else
            pack_panel(dst, src, k_stride, x_stride, kc, min_int(width, count - x), width);
    }
}

/* gemm_nt on a few rows: small_nt instead of the blocked loops.  Decided on
 * the whole product, and a threaded one is then split by columns only, so
 * the path (and the bits) never depend on the thread count.  A kernel
 * without a micro-kernel (the generic one) takes PATH_GENERIC whatever
 * the product. */
typedef enum { PATH_BLOCKED, PATH_SMALL, PATH_TURNED, PATH_GENERIC } Path;

/* The generic kernel's tile width (generic_product, below); a threaded
 * generic product is split by columns in bands of whole tiles. */
enum { GEN_NR = 16 };

/* The path a whole product takes, decided once: a threaded product's bands
 * all take it (split by columns for PATH_SMALL, so each band keeps the
 * same rows), so the bits never depend on the thread count.  PATH_TURNED
 * gives the blocked path's bits anyway; PATH_SMALL does not. */
static Path path_of(const Kernel *kern, const Product *p)
{
    if (!kern->micro) return PATH_GENERIC;
    bool nt = p->a_cs == 1 && p->b_rs == 1;
    if (nt && kern->small_nt && p->m <= SMALL_M) return PATH_SMALL;
    if (nt && kern->micro_t && p->m <= SWAP_M) return PATH_TURNED;
    return PATH_BLOCKED;
}

/* PATH_TURNED: gemm_nt as Cᵀ = B·Aᵀ (micro_t_avx512): per K block, A's
 * rows packed as Aᵀ panels NR wide, then for each MR rows of B, each
 * panel.  B is read in place. */
static void turned_run(const Kernel *kern, const Product *p)
{
    const int MR = kern->mr, NR = kern->nr;
    int kc_max = min_int(p->k, KC), panels = (p->m + NR - 1) / NR;
    float *apack = align64(pack_space((size_t)panels * panel_stride(kc_max, NR) * sizeof(float) + 64));
    for (int pc = 0; pc < p->k; pc += KC) {
        int kc = min_int(p->k - pc, KC);
        bool acc = p->accumulate || pc > 0; /* later K blocks add to the first */
        pack_block(kern, apack, p->a + (size_t)pc * p->a_cs, p->a_cs, p->a_rs, kc, p->m, NR);
        for (int jr = 0; jr < p->n; jr += MR)
            for (int x = 0; x < panels; x++)
                kern->micro_t(kc, p->b + (size_t)jr * p->b_cs + (size_t)pc * p->b_rs, p->b_cs,
                              apack + (size_t)x * panel_stride(kc, NR),
                              p->c + (size_t)x * NR * p->ldc + jr,
                              p->ldc, min_int(MR, p->n - jr), min_int(NR, p->m - x * NR), acc);
    }
}

/* Rows ic..ic+mc of A for one K block (pc, kc): those in whole MR panels
 * read in place by micro_direct where the kernel has one and A's rows run
 * along k, the rest packed at apack. */
typedef struct {
    const float *a; /* row ic, column pc */
    const float *apack;
    size_t a_panel; /* floats from one packed panel to the next */
    int ic, mc, kc;
    int direct;     /* rows read in place: a multiple of MR, the rest packed */
} RowBlock;

/* Packs the rows of a row block that are not read in place (into apack)
 * and says where everything is. */
static RowBlock pack_row_block(const Kernel *kern, const Product *p, int ic, int mc, int pc, int kc,
                               float *apack)
{
    const int MR = kern->mr;
    RowBlock r = {p->a + (size_t)ic * p->a_rs + (size_t)pc * p->a_cs, apack, panel_stride(kc, MR),
                  ic, mc, kc, kern->micro_direct && p->a_cs == 1 ? mc / MR * MR : 0};
    if (mc > r.direct)
        pack_block(kern, apack, r.a + (size_t)r.direct * p->a_rs, p->a_cs, p->a_rs, kc, mc - r.direct, MR);
    return r;
}

/* The micro-kernels of a row block's MR-high tiles against one packed
 * panel of B, columns j..j+nr of C. */
static void row_block_times_panel(const Kernel *kern, const Product *p, const RowBlock *r,
                                  const float *bpanel, int j, int nr, bool acc)
{
    const int MR = kern->mr;
    for (int ir = 0; ir < r->mc; ir += MR) {
        float *c = p->c + (size_t)(r->ic + ir) * p->ldc + j;
        if (ir < r->direct)
            kern->micro_direct(r->kc, r->a + (size_t)ir * p->a_rs, p->a_rs, bpanel, c, p->ldc, nr, acc);
        else
            kern->micro(r->kc, r->apack + (size_t)((ir - r->direct) / MR) * r->a_panel, bpanel, c,
                        p->ldc, min_int(MR, r->mc - ir), nr, acc);
    }
}

static void generic_product(const Product *p);

/* The blocked loops of the file's opening comment, on the calling thread
 * (or the path's own: small_nt, turned_run, generic_product).
 *
 * When all of C's rows fit in one row block (M ≤ MC) and B has its lines
 * along k (gemm_nt), each panel of B is packed and at once used by every
 * row, while it is still in L1 or L2, instead of packing all nc columns
 * first (up to NC·KC floats, 4 MB, more than L2) and reading each panel
 * back once, from L3 (bpack, sized for the other order, then holds one
 * panel).  The same packed values and micro-kernel calls, so the
 * same bits.  On an Intel Xeon (AVX-512; 1 thread, best of 30 timings,
 * old and new side by side): AVX2 forced, 32×5230×256 (32 rows through
 * en-zh's output projection) 73.7 -> 96.6 GF/s, where OpenBLAS's Haswell
 * kernel takes 83.7, 32×1024×256 86 -> 102; AVX-512, 100×5230×256
 * 153 -> 178, 192×5230×256 177 -> 197.  Beyond one row block it lost as
 * often as it won (512×256×1024: 199 -> 180), so it stops at MC. */
static void product_run(const Kernel *kern, const Product *p, Path path)
{
    if (path == PATH_GENERIC) {
        generic_product(p);
        return;
    }
    if (path == PATH_SMALL) {
        kern->small_nt(p->c, p->ldc, p->a, p->a_rs, p->b, p->b_cs, p->m, p->n, p->k, p->accumulate);
        return;
    }
    if (path == PATH_TURNED) {
        turned_run(kern, p);
        return;
    }
    const int MR = kern->mr, NR = kern->nr;
    int kc_max = min_int(p->k, KC);
    /* panel_stride keeps every panel, and so bpack, 64-byte aligned */
    size_t a_len = (size_t)(round_up(min_int(p->m, MC), MR) / MR) * panel_stride(kc_max, MR);
    size_t b_len = (size_t)(round_up(min_int(p->n, NC), NR) / NR) * panel_stride(kc_max, NR);
    void *raw = pack_space((a_len + b_len) * sizeof(float) + 64);
    float *apack = align64(raw), *bpack = apack + a_len;
    bool panel_by_panel = p->m <= MC && p->b_rs == 1 && kern->pack_rows;

    for (int jc = 0; jc < p->n; jc += NC) {
        int nc = min_int(p->n - jc, NC);
        for (int pc = 0; pc < p->k; pc += KC) {
            int kc = min_int(p->k - pc, KC);
            bool acc = p->accumulate || pc > 0; /* later K blocks add to the first */
            const float *b = p->b + (size_t)pc * p->b_rs + (size_t)jc * p->b_cs;
            if (panel_by_panel) {
                RowBlock rows = pack_row_block(kern, p, 0, p->m, pc, kc, apack);
                for (int jr = 0; jr < nc; jr += NR) {
                    int nr = min_int(NR, nc - jr);
                    kern->pack_rows(bpack, b + (size_t)jr * p->b_cs, p->b_cs, kc, nr, NR);
                    row_block_times_panel(kern, p, &rows, bpack, jc + jr, nr, acc);
                }
            } else {
                size_t b_panel = panel_stride(kc, NR);
                pack_block(kern, bpack, b, p->b_rs, p->b_cs, kc, nc, NR);
                for (int ic = 0; ic < p->m; ic += MC) {
                    RowBlock rows = pack_row_block(kern, p, ic, min_int(p->m - ic, MC), pc, kc, apack);
                    for (int jr = 0; jr < nc; jr += NR)
                        row_block_times_panel(kern, p, &rows, bpack + (size_t)(jr / NR) * b_panel,
                                              jc + jr, min_int(NR, nc - jr), acc);
                }
            }
        }
    }
}

/* ---- threads ---------------------------------------------------------- */

/* Rows i0..i1 (or columns j0..j1) of p's C, as a product of its own. */
static Product rows_of(const Product *p, int i0, int i1)
{
    Product q = *p;
    q.c += (size_t)i0 * p->ldc;
    q.a += (size_t)i0 * p->a_rs;
    q.m = i1 - i0;
    return q;
}

static Product cols_of(const Product *p, int j0, int j1)
{
    Product q = *p;
    q.c += j0;
    q.b += (size_t)j0 * p->b_cs;
    q.n = j1 - j0;
    return q;
}

/* A product cut into bands of whole tiles along one side of C: parallel_for
 * hands each thread a range of tiles. */
typedef struct {
    const Kernel *kern;
    const Product *p;
    Path path;
    bool by_rows;
    int len, tile; /* C's rows (or columns) and the tile's height (width) */
} Bands;

static void bands_run(void *ctx, int t0, int t1)
{
    const Bands *b = ctx;
    int lo = min_int(b->len, t0 * b->tile), hi = min_int(b->len, t1 * b->tile);
    Product part = b->by_rows ? rows_of(b->p, lo, hi) : cols_of(b->p, lo, hi);
    product_run(b->kern, &part, b->path);
}

/* Split C into one band per thread, in whole tiles, and run the bands at
 * once (model/parallel.h): along its longer side on the blocked path, by
 * columns on the others; only products of at least GEMM_THREAD_MIN_FMAS
 * multiply-adds, passed to parallel_for as that threshold's share of
 * PARALLEL_MIN_WORK. */
static void product_run_threaded(const Kernel *kern, const Product *p)
{
    Path path = path_of(kern, p);
    bool by_rows = p->m >= p->n && path == PATH_BLOCKED;
    int tile = path == PATH_GENERIC ? GEN_NR : by_rows ? kern->mr : kern->nr;
    Bands bands = {kern, p, path, by_rows, by_rows ? p->m : p->n, tile};
    int tiles = (bands.len + bands.tile - 1) / bands.tile;
    double work = (double)p->m * p->n * p->k * ((double)PARALLEL_MIN_WORK / GEMM_THREAD_MIN_FMAS);
    parallel_for(tiles, work, bands_run, &bands);
}

/* ---- the generic kernel ------------------------------------------------ */

/* Every CPU without the x86 kernels (aarch64, WebAssembly, an x86 without
 * AVX2) multiplies here, in plain C that compilers vectorise, with float
 * sums in fixed-size accumulators (the reference loops, which summed in
 * double, ran here before: docs/web.md has the figures).  gemm_nt's form
 * takes dot products of rows read in place (generic_dots); gemm_nn's and
 * gemm_tn's sum a tile of one row × GEN_NR columns of C, one multiply-add
 * per column per k, from a packed panel of GEN_NR columns of B ([k][GEN_NR],
 * zero past the edge) reused by every row of A, each element in k order.
 * Either way an element's order of summation depends only on K, never on
 * the tile it falls in, M, N, the other rows or the threads (which take
 * bands of columns: product_run_threaded), and it is added to C once at
 * the end when accumulating. */

#ifdef __wasm_simd128__
/* gemm_nt's form in WebAssembly SIMD128 intrinsics (make web): no packing,
 * a tile of DOT_R rows of A × DOT_C rows of B read in place, each of its
 * DOT_R·DOT_C dot products summed in one 4-float vector (partial sum l
 * takes k ≡ l mod 4, k in increasing order), then the lanes added as
 * (l0 + l2) + (l1 + l3), then the last K mod 4 products in k order.  A
 * step of 4 along k loads DOT_R + DOT_C vectors for DOT_R·DOT_C
 * multiply-adds; the plain C loops below (one row of A against 4 rows of B,
 * 8 partial sums) load 10 for 4·8, and clang kept their accumulators in
 * a stack array it cleared with a call to memset for every output.
 * Measured here (node 20, V8's TurboFan: 8 accumulators and 6 loads fill
 * its 16 xmm registers without spilling), 50 en-zh dev sentences in
 * CPU time, best of 3: 4×2 1.09 s, 4×4 1.32 s, 4×2 with the k loop
 * unrolled twice 1.06-1.21 s, 4×3 1.20 s, the C loops 1.49 s.  Fewer
 * rows (one for greedy decoding and a beam's first step) take wider tiles,
 * 1×8, 2×4 or 3×2, so there are still 6 to 8 sums in flight: one row of
 * A against en-zh's decoder weights and output projection ran 18% faster as 1×8
 * than as 1×2 (a micro-benchmark under node, best of 6).  B's rows are
 * taken DOT_W at a time for every row of A, so they stay in L1 while
 * the rows pass.  Rows past the edge of B point at its last row again and
 * are never stored; `rows` and `width` are constants after inlining.  An
 * element's order of summation depends only on K: never on the tile, M, N
 * or the other rows, as gemm.h promises. */
enum { DOT_R = 4, DOT_C = 2, DOT_W = 8 };

static inline float lanes_sum4(v128_t v)
{
    v128_t h = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 2, 3)); /* l0 + l2, l1 + l3 */
    return wasm_f32x4_extract_lane(h, 0) + wasm_f32x4_extract_lane(h, 1);
}

__attribute__((always_inline))
static inline void dots_tile_simd128(const Product *p, int i0, int j0, const int rows, int cols,
                                     const int width)
{
    int K = p->k, K4 = K & ~3;
    const float *a[DOT_R], *b[DOT_W];
    for (int r = 0; r < rows; r++) a[r] = p->a + (size_t)(i0 + r) * p->a_rs;
    for (int c = 0; c < width; c++) b[c] = p->b + (size_t)(j0 + min_int(c, cols - 1)) * p->b_cs;
    v128_t acc[DOT_R][DOT_W];
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < width; c++) acc[r][c] = wasm_f32x4_splat(0.0f);
    for (int k = 0; k < K4; k += 4) {
        v128_t av[DOT_R], bv[DOT_W];
        for (int r = 0; r < rows; r++) av[r] = wasm_v128_load(a[r] + k);
        for (int c = 0; c < width; c++) bv[c] = wasm_v128_load(b[c] + k);
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < width; c++)
                acc[r][c] = wasm_f32x4_add(acc[r][c], wasm_f32x4_mul(av[r], bv[c]));
    }
    for (int r = 0; r < rows; r++) {
        float *out = p->c + (size_t)(i0 + r) * p->ldc + j0;
        for (int c = 0; c < cols; c++) {
            float sum = lanes_sum4(acc[r][c]);
            for (int k = K4; k < K; k++) sum += a[r][k] * b[c][k];
            out[c] = p->accumulate ? out[c] + sum : sum;
        }
    }
}

/* Columns j0 .. j0 + DOT_W - 1 (fewer at N's edge) of rows i0 .. i0 +
 * rows - 1, in tiles `width` wide. */
__attribute__((always_inline))
static inline void dots_block_simd128(const Product *p, int i0, int j0, const int rows, const int width)
{
    int end = min_int(j0 + DOT_W, p->n);
    for (int j = j0; j < end; j += width) dots_tile_simd128(p, i0, j, rows, min_int(width, end - j), width);
}

static void generic_dots(const Product *p)
{
    for (int j0 = 0; j0 < p->n; j0 += DOT_W)
        for (int i0 = 0; i0 < p->m; i0 += DOT_R) {
            int rows = p->m - i0;
            if (rows >= 4) dots_block_simd128(p, i0, j0, 4, DOT_C);
            else if (rows == 3) dots_block_simd128(p, i0, j0, 3, 2);
            else if (rows == 2) dots_block_simd128(p, i0, j0, 2, 4);
            else dots_block_simd128(p, i0, j0, 1, 8);
        }
}
#else
/* gemm_nt's form (rows of A and of B both along k): no packing, each row
 * of A against GEN_DC rows of B at a time, each dot product summed in
 * GEN_LANES partial sums (k ≡ l mod GEN_LANES: two 4-float vector
 * registers), added up in a fixed tree, then the last K mod GEN_LANES
 * products in k order.  Packing B for the tiles below cost as much as
 * multiplying when A has a few rows (decoding): with this, 50 en-zh dev
 * sentences in the web page took 40 ms each instead of 55 (node 20,
 * -msimd128).  (4, 8) measured best of (4, 8), (8, 4), (2, 8), (4, 4). */
enum { GEN_DC = 4, GEN_LANES = 8 };

/* x[0] + ... + x[GEN_LANES-1], halving each time: for 8 lanes
 * ((x0 + x4) + (x2 + x6)) + ((x1 + x5) + (x3 + x7)). */
static float lanes_sum(float *x)
{
    for (int w = GEN_LANES / 2; w >= 1; w /= 2)
        for (int l = 0; l < w; l++) x[l] += x[l + w];
    return x[0];
}

static void generic_dots(const Product *p)
{
    int K = p->k, KL = K / GEN_LANES * GEN_LANES;
    /* B's rows outside, A's inside: a decoding step's few rows of A then
     * read each weight row from memory once, the GEN_DC rows in use
     * staying in L1 while every row of A passes. */
    for (int j0 = 0; j0 < p->n; j0 += GEN_DC) {
        int nc = min_int(GEN_DC, p->n - j0);
        const float *b[GEN_DC]; /* past the edge: the last row again, never stored */
        for (int c = 0; c < GEN_DC; c++) b[c] = p->b + (size_t)(j0 + min_int(c, nc - 1)) * p->b_cs;
        for (int i = 0; i < p->m; i++) {
            const float *a = p->a + (size_t)i * p->a_rs;
            float *out = p->c + (size_t)i * p->ldc;
            float acc[GEN_DC][GEN_LANES] = {{0}};
            for (int k = 0; k < KL; k += GEN_LANES)
                for (int c = 0; c < GEN_DC; c++)
                    for (int l = 0; l < GEN_LANES; l++) acc[c][l] += a[k + l] * b[c][k + l];
            for (int c = 0; c < nc; c++) {
                float sum = lanes_sum(acc[c]);
                for (int k = KL; k < K; k++) sum += a[k] * b[c][k];
                out[j0 + c] = p->accumulate ? out[j0 + c] + sum : sum;
            }
        }
    }
}
#endif

static void generic_product(const Product *p)
{
    if (p->a_cs == 1 && p->b_rs == 1) {
        generic_dots(p);
        return;
    }
    float *panel = pack_space((size_t)p->k * GEN_NR * sizeof *panel + 64);
    for (int j0 = 0; j0 < p->n; j0 += GEN_NR) {
        int nc = min_int(GEN_NR, p->n - j0);
        const float *b = p->b + (size_t)j0 * p->b_cs;
        if (nc < GEN_NR) memset(panel, 0, (size_t)p->k * GEN_NR * sizeof *panel);
        if (p->b_rs == 1) { /* gemm_nt: B's columns are rows along k */
            for (int c = 0; c < nc; c++) {
                const float *src = b + (size_t)c * p->b_cs;
                for (int k = 0; k < p->k; k++) panel[(size_t)k * GEN_NR + c] = src[k];
            }
        } else {
            for (int k = 0; k < p->k; k++) {
                const float *src = b + (size_t)k * p->b_rs;
                for (int c = 0; c < nc; c++) panel[(size_t)k * GEN_NR + c] = src[(size_t)c * p->b_cs];
            }
        }
        /* One row of C's tile at a time: GEN_NR accumulators stay in
         * registers better than a 4 × GEN_NR block (GCC kept that in
         * memory: 4.2 s → 2.6 s CPU for 50 dev sentences with
         * TRANSLATE_GEMM=generic), and the panel stays in L1. */
        for (int i = 0; i < p->m; i++) {
            const float *a = p->a + (size_t)i * p->a_rs;
            float acc[GEN_NR] = {0};
            for (int k = 0; k < p->k; k++) {
                const float *bk = panel + (size_t)k * GEN_NR;
                float x = a[(size_t)k * p->a_cs];
                for (int c = 0; c < GEN_NR; c++) acc[c] += x * bk[c];
            }
            float *c = p->c + (size_t)i * p->ldc + j0;
            for (int q = 0; q < nc; q++) c[q] = p->accumulate ? c[q] + acc[q] : acc[q];
        }
    }
}

/* ---- the three forms -------------------------------------------------- */

static void gemm(const Product *p)
{
    ASSERT(p->m >= 0 && p->n >= 0 && p->k >= 0);
    const Kernel *kern = current_kernel();
    if (p->m == 0 || p->n == 0) return;
    if (p->k == 0) { /* an empty sum: C = 0, or C unchanged */
        if (!p->accumulate) memset(p->c, 0, (size_t)p->m * p->n * sizeof *p->c);
    } else {
        product_run_threaded(kern, p);
    }
}

void gemm_nt(float *C, const float *A, const float *B, int M, int N, int K, bool accumulate)
{
    /* A(i,k) = A[i*K + k], B(k,j) = B[j*K + k] */
    Product p = {C, (size_t)N, A, B, (size_t)K, 1, 1, (size_t)K, M, N, K, accumulate};
    gemm(&p);
}

void gemm_nn(float *C, const float *A, const float *B, int M, int N, int K, bool accumulate)
{
    /* A(i,k) = A[i*K + k], B(k,j) = B[k*N + j] */
    Product p = {C, (size_t)N, A, B, (size_t)K, 1, (size_t)N, 1, M, N, K, accumulate};
    gemm(&p);
}

void gemm_tn(float *C, const float *A, const float *B, int M, int N, int K, bool accumulate)
{
    /* A(i,k) = A[k*M + i], B(k,j) = B[k*N + j] */
    Product p = {C, (size_t)N, A, B, 1, (size_t)M, (size_t)N, 1, M, N, K, accumulate};
    gemm(&p);
}

/* Rows of B widened at a time: at most ~1 MiB of float32. */
static int widened_block_rows(int N, int K)
{
    int rows = (1 << 18) / (K > 0 ? K : 1);
    if (rows < 16) rows = 16;
    return rows < N ? rows : N;
}

void gemm_nt_widened(float *C, const float *A, const void *B, GemmWidenFn *widen, int M, int N, int K)
{
    if (M <= 0 || N <= 0) return;
    /* When the block is all of B, C is written in place; otherwise each
     * block's columns go through tmp[M, rows]. */
    int rows = widened_block_rows(N, K);
    float *wide = xmalloc((size_t)rows * K * sizeof *wide);
    float *tmp = rows < N ? xmalloc((size_t)M * rows * sizeof *tmp) : NULL;
    for (int j = 0; j < N; j += rows) {
        int nb = N - j < rows ? N - j : rows;
        widen(wide, B, (size_t)j, (size_t)nb, K);
        if (!tmp) {
            gemm_nt(C, A, wide, M, N, K, false);
            break;
        }
        gemm_nt(tmp, A, wide, M, nb, K, false);
        for (int i = 0; i < M; i++)
            memcpy(C + (size_t)i * N + j, tmp + (size_t)i * nb, (size_t)nb * sizeof *C);
    }
    free(tmp);
    free(wide);
}
