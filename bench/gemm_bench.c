/* gemm_bench.c — GF/s of gemm_nt / gemm_nn / gemm_tn for the shapes the
 * model multiplies, per kernel and thread count.
 *
 *   cc -std=c11 -D_DEFAULT_SOURCE -O2 -g -Wall -Wextra -Werror -pthread \
 *      -o build/gemm_bench bench/gemm_bench.c model/gemm.c common/util.c -lm
 *   ./build/gemm_bench            (all kernels this CPU runs)
 *   ./build/gemm_bench avx512     (one kernel)
 *
 * Each figure is the best of five timings, each of enough repetitions to
 * last about 0.1 s.  The machine is shared: compare figures from one run.
 * The generic kernel (the reference loops) is only timed on shapes small
 * enough to finish quickly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "../model/gemm.h"

typedef void Gemm(float *C, const float *A, const float *B, int M, int N, int K,
                  bool accumulate);

static const struct {
    const char *name;
    Gemm *fn;
} FORMS[] = {{"nt", gemm_nt}, {"nn", gemm_nn}, {"tn", gemm_tn}};

static const struct {
    int m, n, k;
    const char *what;
} SHAPES[] = {
    {32, 256, 256, "a short batch through a D×D projection"},
    {512, 1024, 256, "feed-forward up, D -> F"},
    {512, 256, 1024, "feed-forward down, F -> D"},
    {2048, 256, 256, "a full batch through a D×D projection"},
    {4096, 7000, 256, "vocabulary projection"},
};

static float *random_matrix(size_t n, Rng *rng)
{
    float *x = xmalloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) x[i] = 2.0f * rng_uniform(rng) - 1.0f;
    return x;
}

/* Best GF/s over five timings of one form on one shape. */
static double gflops(Gemm *fn, float *C, const float *A, const float *B, int m, int n, int k)
{
    double flops = 2.0 * m * n * k, best = 0.0;
    int reps = 1;
    fn(C, A, B, m, n, k, false); /* warm up caches and page in C */
    double t0 = util_now();
    fn(C, A, B, m, n, k, false);
    double once = util_now() - t0;
    if (once < 0.1) reps = (int)(0.1 / (once + 1e-9)) + 1;
    for (int trial = 0; trial < 5; trial++) {
        t0 = util_now();
        for (int r = 0; r < reps; r++) fn(C, A, B, m, n, k, false);
        double rate = flops * reps / (util_now() - t0) / 1e9;
        if (rate > best) best = rate;
    }
    return best;
}

int main(int argc, char **argv)
{
    static const char *const KERNELS[] = {"avx512", "avx2", "generic"};
    const char *only = argc > 1 ? argv[1] : NULL;
    Rng rng;
    rng_seed(&rng, 1);
    printf("%-8s %-5s %-7s %18s %9s\n", "kernel", "form", "threads", "M×N×K", "GF/s");
    for (size_t s = 0; s < sizeof SHAPES / sizeof *SHAPES; s++) {
        int m = SHAPES[s].m, n = SHAPES[s].n, k = SHAPES[s].k;
        size_t big = (size_t)(m > n ? m : n) * (size_t)k;
        float *A = random_matrix(big, &rng), *B = random_matrix(big, &rng);
        float *C = random_matrix((size_t)m * n, &rng);
        printf("# %s\n", SHAPES[s].what);
        for (size_t kn = 0; kn < sizeof KERNELS / sizeof *KERNELS; kn++) {
            if (only && strcmp(only, KERNELS[kn]) != 0) continue;
            if (!gemm_force_kernel(KERNELS[kn])) continue;
            bool slow = strcmp(KERNELS[kn], "generic") == 0;
            if (slow && 2.0 * m * n * k > 1e9) continue;
            for (int threads = 1; threads <= 2; threads++) {
                if (slow && threads > 1) continue; /* the references are serial */
                gemm_set_threads(threads);
                for (size_t f = 0; f < sizeof FORMS / sizeof *FORMS; f++) {
                    char shape[32];
                    snprintf(shape, sizeof shape, "%d×%d×%d", m, n, k);
                    printf("%-8s %-5s %-7d %18s %9.1f\n", KERNELS[kn], FORMS[f].name, threads,
                           shape, gflops(FORMS[f].fn, C, A, B, m, n, k));
                    fflush(stdout);
                }
            }
        }
        free(A);
        free(B);
        free(C);
    }
    gemm_force_kernel(NULL);
    return 0;
}
