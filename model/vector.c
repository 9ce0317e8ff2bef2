/* vector.c — see vector.h. */
#include "vector.h"

/* Compiled three times, for AVX-512, AVX2 and any x86-64 (the loader picks
 * one when the program starts): attention calls these once per (query,
 * key, head) on rows of d_k = 64 floats, and wider vectors do each call in
 * fewer instructions.  The results are the same bits on every CPU: the
 * partial sums are fixed by the code (see vector.h), and -std=c11 lets the
 * compiler fuse no multiply-add. */
#if defined(__x86_64__) && defined(__GNUC__)
#define VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define VECTOR_CLONES
#endif

VECTOR_CLONES float vec_dot(const float *a, const float *b, int n)
{
    float acc[8] = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) acc[j] += a[i + j] * b[i + j];
    float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < n; i++) sum += a[i] * b[i];
    return sum;
}

VECTOR_CLONES float vec_sum(const float *a, int n)
{
    float acc[8] = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) acc[j] += a[i + j];
    float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < n; i++) sum += a[i];
    return sum;
}

VECTOR_CLONES void vec_axpy(float *y, float alpha, const float *x, int n)
{
    for (int i = 0; i < n; i++) y[i] += alpha * x[i];
}
