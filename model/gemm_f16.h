/* gemm_f16.h — products with a float16 weight matrix, for inference on a
 * float16 weights file kept float16 in memory (model.h: model_load_inference).
 *
 * B holds IEEE 754 binary16 values (the bits, uint16_t, as the safetensors
 * file stores them); A and C are float32, row-major and dense as in
 * gemm.h.  Every float16 is widened exactly (each is a float32 value), so
 * the only difference from gemm_nt on the widened matrix is the order of
 * summation:
 *   - up to GEMM_F16_SMALL_M rows of A (decoding: one row per sentence or
 *     hypothesis, a mini-batch of them) take dot-product kernels that read
 *     B once, converting it in registers (F16C; x86-64 CPUs with AVX2 + FMA,
 *     or AVX-512 where gemm.c uses it; several rows of A share each
 *     converted value of B, then the next rows convert it again from L1):
 *     half the bytes of float32, which is what a batch-1 decoding step is
 *     bound by; a row's results do not depend on the other rows, so a
 *     sentence decoded alone and inside a mini-batch get the same bits;
 *   - more rows widen B a block of rows at a time into a small float32
 *     buffer and run gemm_nt on it, so they get gemm.c's kernels and its
 *     threads (and, gemm.c's kernels being independent of N, the bits
 *     gemm_nt gives on the float32 matrix).
 * The plain C path (any CPU without F16C/AVX2/FMA, aarch64, ...) widens
 * with safetensors_f16_to_f32_scalar and sums in float in k order.
 * Results never depend on the thread count or on the other rows of A. */
#ifndef TRANSLATE_GEMM_F16_H
#define TRANSLATE_GEMM_F16_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* At most this many rows of A go through the dot-product kernels (a
 * mini-batch of 32 sentences, or 8 of beam 4). */
#define GEMM_F16_SMALL_M 32

/* C[M,N] = A[M,K] · B[N,K]ᵀ, B float16 (C is overwritten, never read). */
void gemm_f16_nt(float *C, const float *A, const uint16_t *B, int M, int N, int K);

/* The same as plain loops (sums in double, as gemm_nt_reference), for tests. */
void gemm_f16_nt_reference(float *C, const float *A, const uint16_t *B, int M, int N, int K);

/* out[n] = the float32 value of in[n] (exact; F16C where the CPU has it). */
void gemm_f16_widen(float *out, const uint16_t *in, size_t n);

/* "avx512", "avx2" (F16C + FMA) or "generic": the small-M kernel
 * gemm_f16_nt uses.  It follows gemm.h's choice, gemm_kernel_name(). */
const char *gemm_f16_kernel_name(void);

#endif
