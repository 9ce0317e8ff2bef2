/* gemm.h — single-precision matrix multiplication, the three forms a
 * linear layer needs.
 *
 * All matrices are row-major float32 and densely packed (a row of an
 * [R,C] matrix is C floats, the next row follows).  Letters: C is the
 * output [M,N]; K is the length of the sum.  With accumulate the product is
 * added to what C holds (backward passes add into gradients); without it C
 * is overwritten and its old contents are never read (it may hold NaNs).
 * C must not alias A or B.
 *
 * The fast kernels (AVX-512 or AVX2 + FMA, chosen at run time) sum in a
 * different order from the references and use fused multiply-adds, so
 * results differ from gemm_*_reference in the last bits.  They are
 * deterministic: the same inputs and shape give the same bits on every run
 * and for every thread count (each output element is computed by the same
 * sequence of operations however the work is split between threads).
 * gemm_nt on up to 16 rows of A (decoding) sums in yet another order, so a
 * row's result there differs in the last bits from the same row inside a
 * taller product, but never depends on the other rows.  (On 17 to 48 rows
 * the AVX-512 kernel computes gemm_nt turned around, as Cᵀ = B·Aᵀ, with
 * the same bits as a taller product's rows.) */
#ifndef TRANSLATE_GEMM_H
#define TRANSLATE_GEMM_H

#include <stdbool.h>
#include <stddef.h>

/* gemm_nt on at most this many rows of A takes the small-M path above: a
 * row's bits do not depend on the other rows, but differ from the same row
 * in a taller product. */
#define GEMM_SMALL_M 16

/* See "threads" below (gemm.c says how it was chosen). */
#define GEMM_THREAD_MIN_FMAS (1u << 20)

/* C[M,N] (+)= A[M,K] · B[N,K]ᵀ   (forward: out = in · Wᵀ, W in PyTorch's
 * [out_features, in_features] layout). */
void gemm_nt(float *C, const float *A, const float *B, int M, int N, int K, bool accumulate);
/* C[M,N] (+)= A[M,K] · B[K,N]    (backward to the input: d_in = d_out · W). */
void gemm_nn(float *C, const float *A, const float *B, int M, int N, int K, bool accumulate);
/* C[M,N] (+)= A[K,M]ᵀ · B[K,N]   (backward to the weight: d_W += d_outᵀ · in). */
void gemm_tn(float *C, const float *A, const float *B, int M, int N, int K, bool accumulate);

/* Rows first .. first+count-1 of a matrix kept in another type (float16,
 * int8), K values each, written as float32 to out (exactly). */
typedef void GemmWidenFn(float *out, const void *B, size_t first, size_t count, int K);

/* C[M,N] = A[M,K] · B[N,K]ᵀ for a B gemm_nt cannot read: `widen` turns a
 * block of B's rows at a time into a float32 buffer of ~1 MiB (a
 * 16,000-word output projection would be 16 MB widened whole) and gemm_nt
 * multiplies by it, with its kernels and threads.  Each value of B is
 * widened once per call, not once per row of A; a row's bits are those
 * gemm_nt gives it.  (gemm_i8.h's large-M path.) */
void gemm_nt_widened(float *C, const float *A, const void *B, GemmWidenFn *widen, int M, int N, int K);

/* The plain triple loops the kernels are tested against (same contracts
 * as above; they sum in double), for tests only.  A CPU without AVX2 +
 * FMA, and any CPU that is not x86-64 (aarch64, WebAssembly), runs the
 * "generic" kernel of gemm.c instead: plain C with float sums. */
void gemm_nt_reference(float *C, const float *A, const float *B, int M, int N, int K,
                       bool accumulate);
void gemm_nn_reference(float *C, const float *A, const float *B, int M, int N, int K,
                       bool accumulate);
void gemm_tn_reference(float *C, const float *A, const float *B, int M, int N, int K,
                       bool accumulate);

/* Products of at least GEMM_THREAD_MIN_FMAS multiply-adds are split
 * between the threads of model/parallel.h (parallel_set_threads; smaller
 * ones run on the calling thread); gemm_f16_nt's taller products too.
 * While one thread's call uses the workers, another thread's call runs on
 * that thread alone. */

/* "avx512", "avx2" or "generic" (gemm.c's plain C): the kernel gemm_* use.
 * By default the fastest this CPU runs; the environment variable
 * TRANSLATE_GEMM=avx512|avx2|generic, read at the first call, picks another
 * one the CPU runs (for benchmarks; ignored when unknown or unrunnable). */
const char *gemm_kernel_name(void);
/* For tests and benchmarks: use the named kernel from now on (NULL: back to
 * the automatic choice).  Returns false, changing nothing, if the name is
 * unknown or this CPU cannot run it. */
bool gemm_force_kernel(const char *name);

#endif
