/* vector.h — the three loops over a row of floats that the kernels share.
 *
 * Each keeps 8 independent partial sums where it reduces: the compiler can
 * then hold them in one vector register without -ffast-math (which would
 * let it reorder floating-point sums behind our back), and the result does
 * not depend on how the compiler chose to vectorise. */
#ifndef TRANSLATE_VECTOR_H
#define TRANSLATE_VECTOR_H

/* Σ a[i]·b[i] over n floats. */
float vec_dot(const float *a, const float *b, int n);
/* Σ a[i] over n floats. */
float vec_sum(const float *a, int n);
/* y[i] += alpha · x[i]. */
void vec_axpy(float *y, float alpha, const float *x, int n);

#endif
