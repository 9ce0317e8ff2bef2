/* gemm_i8.h — products with an int8 weight matrix: translate --int8, the
 * matrices quantised at load to a quarter of float32's bytes (half of
 * float16's), which is what a batch-1 decoding step is bound by.
 *
 * Row n of the weight is q[n, 0..K-1] · scale[n], q in -127..127 and
 * scale[n] = max |w[n, k]| / 127 (so one row's large values do not cost
 * the others their precision: per-row scales, as CTranslate2 keeps them).
 * A and C are float32 as in gemm.h; the activations are not quantised.
 * Each element is scale[n] · Σ_k A[m, k] · q[n, k], the sum in float32:
 *   - up to GEMM_I8_SMALL_M rows of A (decoding: a sentence, a beam, a
 *     mini-batch) take dot-product kernels that read q once per call,
 *     widening it in registers (AVX-512 or AVX2 on x86-64): 8 rows of q at
 *     a time for one row of A, 4 for several.  Within those rows a row's
 *     results do not depend on the other rows (the same bits alone and in
 *     a batch, as gemm_f16.h's small-M kernels promise);
 *   - more rows, and every product on the plain C path (other CPUs,
 *     WebAssembly), widen q a block of rows at a time into float32 (exact:
 *     small integers) and run gemm_nt on it, then scale the columns: there
 *     a row's bits are what gemm_nt gives it (on the plain C path, the same
 *     whatever M). */
#ifndef TRANSLATE_GEMM_I8_H
#define TRANSLATE_GEMM_I8_H

#include <stddef.h>
#include <stdint.h>

/* At most this many rows of A go through the dot-product kernels (a
 * mini-batch of 32 sentences, or 8 of beam 4: as GEMM_F16_SMALL_M). */
#define GEMM_I8_SMALL_M 32

/* C[M,N] = A[M,K] · (q[N,K] · scale[N])ᵀ (C is overwritten, never read). */
void gemm_i8_nt(float *C, const float *A, const int8_t *q, const float *scale, int M, int N, int K);

/* The same as plain loops (sums in double), for tests. */
void gemm_i8_nt_reference(float *C, const float *A, const int8_t *q, const float *scale, int M, int N,
                          int K);

/* Quantise one row w[0..K-1]: q[k] = round(w[k] / s) with s = max |w| / 127
 * (0 and an all-zero row when w is all zeros); returns s. */
float gemm_i8_quantize_row(int8_t *q, const float *w, int K);

/* "avx512", "avx2" or "generic": the small-M kernel gemm_i8_nt uses (it
 * follows gemm.h's choice, as gemm_f16_kernel_name does). */
const char *gemm_i8_kernel_name(void);

#endif
