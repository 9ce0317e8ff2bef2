/* vector.h — the loops over a row of floats that the kernels share.
 *
 * Each keeps 8 independent partial sums where it reduces: the compiler can
 * then hold them in one vector register without -ffast-math (which would
 * let it reorder floating-point sums behind our back), and the result does
 * not depend on how the compiler chose to vectorise. */
#ifndef TRANSLATE_VECTOR_H
#define TRANSLATE_VECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Σ a[i]·b[i] over n floats. */
float vec_dot(const float *a, const float *b, int n);
/* Σ a[i] over n floats. */
float vec_sum(const float *a, int n);
/* y[i] += x[i] (a bias added to a row, a row added to the bias's
 * gradient): one AVX-512 vector for 16 floats where the compiler's
 * baseline, SSE2, needs four. */
void vec_add(float *y, const float *x, int n);
/* The row forms attention uses, over `count` rows of n floats, row j at
 * rows + j·stride.  Each gives the bits of a plain loop over the rows:
 *   vec_dot_rows:  out[j] = vec_dot(a, row j, n)
 *   vec_axpy_rows: y[i] += w[j] · row j[i], for j = 0, 1, … in order
 *                  (y = Σ_j w[j]·row j added to y: attention's weighted sum)
 *   vec_axpy_each: row j[i] += w[j] · x[i], for every j (the outer
 *                  product w xᵀ added to the rows)
 * No two of the arrays may overlap. */
void vec_dot_rows(float *out, const float *a, const float *rows, size_t stride, int count, int n);
void vec_axpy_rows(float *y, const float *w, const float *rows, size_t stride, int count, int n);
void vec_axpy_each(float *rows, size_t stride, const float *w, const float *x, int count, int n);
/* The largest of a[0..n-1], n >= 1 (a NaN anywhere may or may not win). */
float vec_max(const float *a, int n);
/* Σ exp(a[i] - shift) over n floats, each exponential also stored in
 * out[i] unless out is NULL: the softmaxes' and the loss's inner loop.
 * Meant for a[i] <= shift (shift the row's maximum): an exponent below
 * -87 gives exactly 0 (e^-87 is near float's smallest normal), and the
 * exponential is our own polynomial (within 2 ulp of expf), not libm's,
 * so the loop vectorises: one libm call per logit was most of a training
 * step (bench/RESULTS.md). */
float vec_exp_sum(float *out, const float *a, float shift, int n);
/* Dropout's mask over n floats: two per draw of splitmix64 (common/util.h)
 * from `state`, draw j deciding mask[2j] with its top 24 bits and
 * mask[2j+1] with the next 24: 0 below threshold, else keep.  The same
 * masks as (n + 1) / 2 rng_next calls in a row on an Rng at `state`. */
void vec_dropout_mask(float *mask, size_t n, uint64_t state, float keep, uint32_t threshold);
/* Is every one of x[0..n-1] finite (no NaN, no infinity)?  Tested on the
 * bits, exponent all ones, so the loop vectorises: a float32 model's load
 * checks millions of values with it. */
bool vec_all_finite(const float *x, size_t n);

#endif
