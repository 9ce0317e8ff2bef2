/* gemm_f16.h — products with a float16 weight matrix, for inference on a
 * float16 weights file kept float16 in memory (model.h: model_load_inference).
 *
 * The weights are packed once, at load, into panels: 16 rows of B (16
 * outputs) at a time, their values at k = 0, 1, ... side by side (16
 * IEEE 754 binary16 values, 32 bytes, per k).  A product then reads a
 * panel front to back, widens 16 values in a register (F16C) and
 * multiplies them by one value of A broadcast: every output element is
 * one chain of fused multiply-adds, k ascending, from zero.  That chain is
 * the same whatever the number of rows of A, the tile an element falls
 * in, the thread that computes it and the kernel (AVX-512, AVX2 or plain
 * C with fmaf): a sentence decoded alone and inside a mini-batch get the
 * same bits, on every CPU.  Every float16 is widened exactly (each is a
 * float32 value), so the only difference from float32 weights is the order
 * of summation.
 *
 * A panel of rows j0..j0+15 sits where those rows sit in the row-major
 * matrix (both are 16·K values), so a block of rows starting at a
 * multiple of 16 starts at the same offset in both: the attention's
 * W_Q, W_K and W_V are rows 0, D and 2D of one matrix (model_load_inference
 * keeps float16 only when d_model is a multiple of 16).  Only the last
 * panel of a matrix whose rows are not a multiple of 16 is padded (zero
 * rows, never written to C). */
#ifndef TRANSLATE_GEMM_F16_H
#define TRANSLATE_GEMM_F16_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Rows of B in a panel. */
#define GEMM_F16_PANEL 16

/* Up to this many rows of A a product runs on the calling thread (a
 * mini-batch of 32 sentences, or 8 of beam 4: tens of microseconds, about
 * what waking a worker costs); taller ones are split between the threads of
 * model/parallel.h by panels.  Any number of rows gives the same bits. */
#define GEMM_F16_SMALL_M 32

/* Values (uint16_t) the panels of an [N,K] matrix take: N rounded up to a
 * multiple of 16, times K. */
size_t gemm_f16_panels_size(int N, int K);

/* panels = B[N,K] (row-major float16 bits, as the safetensors file stores
 * them) packed as above; panels holds gemm_f16_panels_size(N, K) values.
 * Returns false if some value of B is Inf or NaN (the panels are then
 * complete but must not be used): the check every float16 matrix gets at
 * load, done in the same pass. */
bool gemm_f16_pack(uint16_t *panels, const uint16_t *B, int N, int K);

/* out[0..K-1] = row j of the matrix packed in `panels` (K values a row),
 * widened to float32 (--int8 quantises the rows from it). */
void gemm_f16_panel_row(float *out, const uint16_t *panels, int j, int K);

/* C[M,N] = A[M,K] · B[N,K]ᵀ, B as packed by gemm_f16_pack (C is
 * overwritten, never read). */
void gemm_f16_nt(float *C, const float *A, const uint16_t *panels, int M, int N, int K);

/* The same from the row-major B, as plain loops (sums in double, as
 * gemm_nt_reference), for tests. */
void gemm_f16_nt_reference(float *C, const float *A, const uint16_t *B, int M, int N, int K);

/* out[n] = the float32 value of in[n] (exact; F16C where the CPU has it). */
void gemm_f16_widen(float *out, const uint16_t *in, size_t n);

/* "avx512", "avx2" (F16C + FMA) or "generic": the kernel gemm_f16_nt uses.
 * It follows gemm.h's choice, gemm_kernel_name(). */
const char *gemm_f16_kernel_name(void);

#endif
