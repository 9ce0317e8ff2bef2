/* vector.c — see vector.h. */
#include "vector.h"

/* Compiled three times, for AVX-512, AVX2 and any x86-64 (the loader picks
 * one when the program starts): attention calls these once per (query,
 * key, head) on rows of d_k = 64 floats, and wider vectors do each call in
 * fewer instructions.  The results are the same bits on every CPU: the
 * partial sums are fixed by the code (see vector.h), and -std=c11 lets the
 * compiler fuse no multiply-add. */
#if defined(__x86_64__) && defined(__clang__)
/* clang 14 gives target_clones' dispatcher the name "vec_dot.ifunc" and
 * never defines "vec_dot" itself, so no other file could link to it (make
 * fuzz failed so).  Under clang the clones are static, named *_clones, and
 * the plain functions at the end of the file jump to them: one jump more
 * per call, in clang builds only.  GCC's build is as it was. */
#define VECTOR_CLONES static __attribute__((target_clones("avx512f", "avx2", "default")))
#define VECTOR_NAME(name) name##_clones
#define VECTOR_WRAPPERS 1
#elif defined(__x86_64__) && defined(__GNUC__)
#define VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#define VECTOR_NAME(name) name
#else
#define VECTOR_CLONES
#define VECTOR_NAME(name) name
#endif

VECTOR_CLONES float VECTOR_NAME(vec_dot)(const float *a, const float *b, int n)
{
    float acc[8] = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) acc[j] += a[i + j] * b[i + j];
    float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < n; i++) sum += a[i] * b[i];
    return sum;
}

VECTOR_CLONES float VECTOR_NAME(vec_sum)(const float *a, int n)
{
    float acc[8] = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) acc[j] += a[i + j];
    float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < n; i++) sum += a[i];
    return sum;
}

VECTOR_CLONES void VECTOR_NAME(vec_axpy)(float *y, float alpha, const float *x, int n)
{
    for (int i = 0; i < n; i++) y[i] += alpha * x[i];
}

#ifdef VECTOR_WRAPPERS
float vec_dot(const float *a, const float *b, int n)
{
    return vec_dot_clones(a, b, n);
}

float vec_sum(const float *a, int n)
{
    return vec_sum_clones(a, n);
}

void vec_axpy(float *y, float alpha, const float *x, int n)
{
    vec_axpy_clones(y, alpha, x, n);
}
#endif
