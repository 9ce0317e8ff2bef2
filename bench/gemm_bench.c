/* gemm_bench.c — our gemm_nt / gemm_nn / gemm_tn against OpenBLAS's
 * cblas_sgemm on every product shape training runs, per kernel and thread
 * count, in one process (issue 12's first target: ours ≥ 0.95× OpenBLAS).
 *
 *   gemm_bench [--quick] [-V VOCAB] [-k KERNEL]... [-t MAX_THREADS] [-T MIN_THREADS]
 *              [-s SHAPE]... [-r ROUNDS]
 *   gemm_bench --openblas-info
 *
 * The shapes are those of model/linear.c for a batch of R rows through a
 * linear layer W[O, I]:  forward  nt  M=R N=O K=I,  backward to the input
 * nn  M=R N=I K=O,  backward to the weight  tn  M=O N=I K=R,  for the four
 * weights the model has: (O, I) = D×D (attention projections, 256×256),
 * F×D and D×F (feed-forward, 1024×256 and 256×1024) and V×D (the
 * generator, V = -V, the target vocabulary); R = 32, 512, 2048, 4096 (a
 * short sentence up to a large batch).  --quick: tiny shapes, one quick
 * timing each (make bench-smoke: checks the harness, not the speed).
 *
 * Thread counts: MIN_THREADS (default 1) to MAX_THREADS (default 2).
 * Kernels: -k avx512 / avx2 / generic (repeatable; default every fast
 * kernel this CPU runs, i.e. on an AVX-512 machine the AVX2 one too).
 * -s SHAPE (repeatable) times only the shapes whose "form_weight_Rrows"
 * name contains SHAPE ("nt_DxF_R32", "tn_", "_R4096"): for working on a
 * few shapes without the whole run.  -r ROUNDS interleaves: shape by
 * shape, ROUNDS rounds of (ours, then OpenBLAS), each side's figure the
 * median over the rounds of its best of 7 timings of ~5 ms, so on a
 * shared machine both sides see the same load and the best dodges most of
 * it (on one thread the clock is the thread's CPU time, so time the core
 * spent on other processes is not counted); after each OpenBLAS timing
 * with more than one thread it pauses 0.2 s, so OpenBLAS's spin-waiting
 * threads are asleep when ours run.  Before timing, each side runs its
 * product untimed for 30 ms (warm_seconds): on a VM (AMD EPYC, KVM) two threads
 * coming back from that pause multiplied at half speed for the next
 * ~30 ms (ours, nn 32×256×1024: 59 → 30-45 GF/s, back to 55-76 after
 * 30 ms of warm-up), and as the side timed first after the pause, ours
 * alone paid for it.
 *
 * OpenBLAS is dlopen'ed ("libopenblas.so.0", Debian's libopenblas0-*
 * packages) so neither this program nor the project's build needs its
 * headers or -dev package; without it the reference figures say "none".
 * BENCH_OPENBLAS=FILE dlopens FILE instead (the tests name a missing one).
 * Its thread count is set with openblas_set_num_threads for each row; its
 * core type (openblas_get_corename) is the one it detected, or the one
 * OPENBLAS_CORETYPE forced when the library loaded (bench/run.sh sets that
 * for this command only, where Debian's 0.3.21 mis-detects the CPU).
 *
 * Before the products it measures each kernel's multiply-add peak on one
 * thread (fma_peak below): what no product on this core can exceed, so
 * bench/run.sh can say how near it our products come and how fast
 * training could be if its products ran at it and nothing else took time.
 *
 * Output: lines of key=value pairs (bench/run.sh reads them):
 *   openblas=PATH|none corename=NAME config="…"
 *   peak kernel=K threads=1 gflops=GF/s|none
 *   gemm kernel=K form=F threads=T m=M n=N k=K what=W ours=GF/s openblas=GF/s|none
 * Each GF/s is the best of three timings of enough repetitions to last
 * about 30 ms (--quick: one), after a warm-up call. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/util.h"
#include "../model/gemm.h"
#include "../model/parallel.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define BENCH_X86 1
#include <immintrin.h>
#else
#define BENCH_X86 0
#endif

/* ---- OpenBLAS, found at run time --------------------------------------- */

enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };
typedef void Sgemm(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                   const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc);

static struct {
    Sgemm *sgemm;
    void (*set_threads)(int);
    char *(*corename)(void);
    char *(*config)(void);
    char path[512];
} blas;

static bool blas_open(void)
{
    const char *name = getenv("BENCH_OPENBLAS"); /* another library, or a missing one (tests) */
    void *h = dlopen(name && *name ? name : "libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!h) return false;
    blas.sgemm = (Sgemm *)dlsym(h, "cblas_sgemm");
    blas.set_threads = (void (*)(int))dlsym(h, "openblas_set_num_threads");
    blas.corename = (char *(*)(void))dlsym(h, "openblas_get_corename");
    blas.config = (char *(*)(void))dlsym(h, "openblas_get_config");
    if (!blas.sgemm || !blas.set_threads) {
        blas.sgemm = NULL;
        return false;
    }
    Dl_info info;
    snprintf(blas.path, sizeof blas.path, "libopenblas.so.0");
    if (dladdr((void *)blas.sgemm, &info) && info.dli_fname) {
        char *real = realpath(info.dli_fname, NULL);
        snprintf(blas.path, sizeof blas.path, "%s", real ? real : info.dli_fname);
        free(real);
    }
    return true;
}

/* ---- the products ------------------------------------------------------- */

typedef void Gemm(float *C, const float *A, const float *B, int M, int N, int K, bool accumulate);

/* The same product through cblas_sgemm (row-major, C overwritten). */
static void blas_nt(float *C, const float *A, const float *B, int M, int N, int K, bool acc)
{
    blas.sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_TRANS, M, N, K, 1.0f, A, K, B, K,
               acc ? 1.0f : 0.0f, C, N);
}
static void blas_nn(float *C, const float *A, const float *B, int M, int N, int K, bool acc)
{
    blas.sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, M, N, K, 1.0f, A, K, B, N,
               acc ? 1.0f : 0.0f, C, N);
}
static void blas_tn(float *C, const float *A, const float *B, int M, int N, int K, bool acc)
{
    blas.sgemm(CBLAS_ROW_MAJOR, CBLAS_TRANS, CBLAS_NO_TRANS, M, N, K, 1.0f, A, M, B, N,
               acc ? 1.0f : 0.0f, C, N);
}

static const struct {
    const char *name;
    Gemm *ours, *theirs;
} FORMS[] = {{"nt", gemm_nt, blas_nt}, {"nn", gemm_nn, blas_nn}, {"tn", gemm_tn, blas_tn}};

/* The clock gflops times with: wall time, or with -r on one thread this
 * thread's CPU time, which leaves out the time other processes held the
 * core (a single-threaded product runs on the calling thread, ours and
 * OpenBLAS's alike). */
static bool cpu_clock;

static double now(void)
{
    if (!cpu_clock) return util_now();
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* How long gflops runs a product untimed first (see the top); none with
 * --quick, which checks the harness (make test runs it). */
static double warm_seconds = 0.03;

/* Best GF/s over `trials` timings of one product. */
static double gflops(Gemm *fn, float *C, const float *A, const float *B, int m, int n, int k,
                     double budget, int trials)
{
    double flops = 2.0 * m * n * k, best = 0.0;
    /* warm up caches, page in C, start threads, wake the cores: once at least */
    double start = util_now();
    do fn(C, A, B, m, n, k, false);
    while (util_now() - start < warm_seconds);
    double t0 = now();
    fn(C, A, B, m, n, k, false);
    double once = now() - t0;
    int reps = once < budget ? (int)(budget / (once + 1e-9)) + 1 : 1;
    for (int trial = 0; trial < trials; trial++) {
        t0 = now();
        for (int r = 0; r < reps; r++) fn(C, A, B, m, n, k, false);
        double rate = flops * reps / (now() - t0) / 1e9;
        if (rate > best) best = rate;
    }
    return best;
}

/* ---- the multiply-add peak ----------------------------------------------- */

/* 12 independent chains of vector fused multiply-adds and nothing else (no
 * loads): enough chains to keep two FMA pipes busy through a latency of up
 * to 6 cycles.  The result only keeps the compiler from dropping them. */
enum { PEAK_CHAINS = 12 };

#if BENCH_X86
__attribute__((target("avx512f,fma"))) static float fma_chains_avx512(long reps)
{
    __m512 acc[PEAK_CHAINS], x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
    for (int i = 0; i < PEAK_CHAINS; i++) acc[i] = _mm512_set1_ps((float)i);
    for (long r = 0; r < reps; r++)
#pragma GCC unroll 12
        for (int i = 0; i < PEAK_CHAINS; i++) acc[i] = _mm512_fmadd_ps(acc[i], x, y);
    for (int i = 1; i < PEAK_CHAINS; i++) acc[0] = _mm512_add_ps(acc[0], acc[i]);
    return _mm512_reduce_add_ps(acc[0]);
}

__attribute__((target("avx2,fma"))) static float fma_chains_avx2(long reps)
{
    __m256 acc[PEAK_CHAINS], x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
    for (int i = 0; i < PEAK_CHAINS; i++) acc[i] = _mm256_set1_ps((float)i);
    for (long r = 0; r < reps; r++)
#pragma GCC unroll 12
        for (int i = 0; i < PEAK_CHAINS; i++) acc[i] = _mm256_fmadd_ps(acc[i], x, y);
    for (int i = 1; i < PEAK_CHAINS; i++) acc[0] = _mm256_add_ps(acc[0], acc[i]);
    float lanes[8];
    _mm256_storeu_ps(lanes, acc[0]);
    return lanes[0];
}
#endif

/* The peak GF/s of `kernel`'s vector width on one thread, the best of 5
 * timings of ~20 ms in this thread's CPU time (one with --quick); 0 for
 * the generic kernel, or where the CPU lacks the instructions. */
static double fma_peak(const char *kernel, bool quick)
{
#if BENCH_X86
    float (*chains)(long) = NULL;
    int lanes = 0;
    if (strcmp(kernel, "avx512") == 0 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma"))
        chains = fma_chains_avx512, lanes = 16;
    else if (strcmp(kernel, "avx2") == 0 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        chains = fma_chains_avx2, lanes = 8;
    if (!chains) return 0.0;
    bool was = cpu_clock;
    cpu_clock = true;
    long reps = 100000;
    double t0 = now();
    volatile float sink = chains(reps);
    double once = now() - t0;
    if (!quick && once < 0.02) reps = (long)((double)reps * 0.02 / (once + 1e-9)) + 1;
    double best = 0.0;
    for (int trial = 0; trial < (quick ? 1 : 5); trial++) {
        t0 = now();
        sink = chains(reps);
        double rate = 2.0 * PEAK_CHAINS * lanes * (double)reps / (now() - t0) / 1e9;
        if (rate > best) best = rate;
    }
    (void)sink;
    cpu_clock = was;
    return best;
#else
    (void)kernel, (void)quick;
    return 0.0;
#endif
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *x, int n)
{
    qsort(x, (size_t)n, sizeof *x, compare_doubles);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

static float *random_matrix(size_t n, Rng *rng)
{
    float *x = xmalloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) x[i] = 2.0f * rng_uniform(rng) - 1.0f;
    return x;
}

int main(int argc, char **argv)
{
    bool quick = false, info_only = false;
    int vocab = 8000, max_threads = 2, min_threads = 1, rounds = 0;
    const char *kernels[4]; /* at most 4 (-k beyond that is ignored) */
    int n_kernels = 0;
    const char *only[16]; /* -s: at most 16 (beyond that ignored) */
    int n_only = 0;
    static const struct option longs[] = {{"quick", no_argument, 0, 'q'},
                                          {"openblas-info", no_argument, 0, 'i'},
                                          {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "V:k:t:T:s:r:", longs, NULL)) != -1) {
        switch (c) {
        case 'q': quick = true, warm_seconds = 0.0; break;
        case 'i': info_only = true; break;
        case 'V': vocab = atoi(optarg); break;
        case 't': max_threads = atoi(optarg); break;
        case 'k':
            if (n_kernels < 4) kernels[n_kernels++] = optarg;
            break;
        case 's':
            if (n_only < 16) only[n_only++] = optarg;
            break;
        case 'r': rounds = atoi(optarg); break;
        case 'T': min_threads = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: gemm_bench [--quick] [-V VOCAB] [-k KERNEL]... [-t MAX_THREADS]"
                            " [-T MIN_THREADS] [-s SHAPE]... [-r ROUNDS] | --openblas-info\n");
            return 2;
        }
    }
    if (optind != argc || vocab < 1 || max_threads < 1 || min_threads < 1 || rounds < 0 || rounds > 15) {
        fprintf(stderr, "usage: gemm_bench [--quick] [-V VOCAB] [-k KERNEL]... [-t MAX_THREADS]"
                        " [-T MIN_THREADS] [-s SHAPE]... [-r ROUNDS] | --openblas-info\n");
        return 2;
    }
    bool have_blas = blas_open();
    if (have_blas)
        printf("openblas=%s corename=%s config=\"%s\"\n", blas.path,
               blas.corename ? blas.corename() : "?", blas.config ? blas.config() : "?");
    else
        printf("openblas=none corename=none config=\"libopenblas.so.0 not found\"\n");
    if (info_only) return 0;
    if (n_kernels == 0) { /* every fast kernel this CPU runs */
        if (gemm_force_kernel("avx512")) kernels[n_kernels++] = "avx512";
        if (gemm_force_kernel("avx2")) kernels[n_kernels++] = "avx2";
        if (n_kernels == 0) kernels[n_kernels++] = "generic";
        gemm_force_kernel(NULL);
    }
    for (int kn = 0; kn < n_kernels; kn++) {
        double peak = fma_peak(kernels[kn], quick);
        if (peak > 0.0) printf("peak kernel=%s threads=1 gflops=%.2f\n", kernels[kn], peak);
        else printf("peak kernel=%s threads=1 gflops=none\n", kernels[kn]);
    }
    fflush(stdout);

    /* (O, I) of the model's weights, and the batch rows R. */
    const int D = quick ? 16 : 256, F = quick ? 64 : 1024;
    const struct {
        int o, i;
        const char *what;
    } WEIGHTS[] = {{D, D, "DxD"}, {F, D, "FxD"}, {D, F, "DxF"}, {vocab, D, "VxD"}};
    static const int ROWS[] = {32, 512, 2048, 4096}, QUICK_ROWS[] = {8, 32};
    const int *rows = quick ? QUICK_ROWS : ROWS;
    int n_rows = quick ? 2 : 4;
    double budget = quick ? 0.0 : 0.03;
    int trials = quick ? 1 : 3;
    if (rounds > 0 && !quick) { /* shorter timings, more of them: the best dodges other loads */
        budget = 0.005;
        trials = 7;
    }

    Rng rng;
    rng_seed(&rng, 1);
    size_t big = 0; /* every operand is R×O, R×I or O×I */
    for (size_t w = 0; w < sizeof WEIGHTS / sizeof *WEIGHTS; w++)
        for (int r = 0; r < n_rows; r++) {
            size_t R = (size_t)rows[r], O = (size_t)WEIGHTS[w].o, I = (size_t)WEIGHTS[w].i;
            size_t most = R * O > R * I ? R * O : R * I;
            if (O * I > most) most = O * I;
            if (most > big) big = most;
        }
    float *A = random_matrix(big, &rng), *B = random_matrix(big, &rng), *C = random_matrix(big, &rng);
    /* Per thread count: every kernel of ours on every shape, then OpenBLAS
     * on them (its figures do not depend on our kernel).  Not interleaved
     * shape by shape: OpenBLAS's idle threads spin for a while after each
     * call and would take a core from our next timing. */
    enum { MAX_CASES = 4 * 4 * 3 };
    typedef struct {
        int m, n, k, form;
        char what[24];
    } Case;
    Case cases[MAX_CASES];
    int n_cases = 0;
    for (size_t w = 0; w < sizeof WEIGHTS / sizeof *WEIGHTS; w++)
        for (int r = 0; r < n_rows; r++)
            for (int f = 0; f < 3; f++) {
                int R = rows[r], O = WEIGHTS[w].o, I = WEIGHTS[w].i;
                Case *x = &cases[n_cases];
                if (f == 0) x->m = R, x->n = O, x->k = I;      /* out = in · Wᵀ */
                else if (f == 1) x->m = R, x->n = I, x->k = O; /* d_in = d_out · W */
                else x->m = O, x->n = I, x->k = R;             /* d_W = d_outᵀ · in */
                x->form = f;
                snprintf(x->what, sizeof x->what, "%s_R%d", WEIGHTS[w].what, R);
                char name[32];
                snprintf(name, sizeof name, "%s_%s", FORMS[f].name, x->what);
                bool wanted = n_only == 0;
                for (int s = 0; s < n_only && !wanted; s++) wanted = strstr(name, only[s]) != NULL;
                if (wanted) n_cases++;
            }
    double ours[4][MAX_CASES], theirs[MAX_CASES];
    for (int threads = min_threads; threads <= max_threads; threads++) {
        parallel_set_threads(threads);
        if (rounds > 0 && have_blas) { /* -r: ours and theirs alternate, shape by shape */
            blas.set_threads(threads);
            cpu_clock = threads == 1;
            for (int i = 0; i < n_cases; i++) {
                const Case *x = &cases[i];
                double mine[4][15], blas_rate[15];
                for (int round = 0; round < rounds; round++) {
                    for (int kn = 0; kn < n_kernels; kn++)
                        mine[kn][round] = gemm_force_kernel(kernels[kn])
                                              ? gflops(FORMS[x->form].ours, C, A, B, x->m, x->n, x->k, budget, trials)
                                              : 0.0;
                    blas_rate[round] = gflops(FORMS[x->form].theirs, C, A, B, x->m, x->n, x->k, budget, trials);
                    if (threads > 1) nanosleep(&(struct timespec){0, 200000000L}, NULL);
                }
                for (int kn = 0; kn < n_kernels; kn++) ours[kn][i] = median(mine[kn], rounds);
                theirs[i] = median(blas_rate, rounds);
            }
            blas.set_threads(1);
            cpu_clock = false;
        }
        for (int kn = 0; kn < n_kernels && !(rounds > 0 && have_blas); kn++) {
            if (!gemm_force_kernel(kernels[kn])) continue;
            for (int i = 0; i < n_cases; i++) {
                const Case *x = &cases[i];
                bool slow = strcmp(kernels[kn], "generic") == 0 && 2.0 * x->m * x->n * x->k > 1e8;
                ours[kn][i] = slow ? 0.0
                                   : gflops(FORMS[x->form].ours, C, A, B, x->m, x->n, x->k, budget, trials);
            }
        }
        if (have_blas && rounds == 0) {
            blas.set_threads(threads);
            for (int i = 0; i < n_cases; i++) {
                const Case *x = &cases[i];
                theirs[i] = gflops(FORMS[x->form].theirs, C, A, B, x->m, x->n, x->k, budget, trials);
            }
            blas.set_threads(1);
        }
        for (int kn = 0; kn < n_kernels; kn++) {
            if (!gemm_force_kernel(kernels[kn])) {
                if (threads == 1)
                    fprintf(stderr, "gemm_bench: this CPU cannot run the %s kernel: skipped\n", kernels[kn]);
                continue;
            }
            for (int i = 0; i < n_cases; i++) {
                const Case *x = &cases[i];
                printf("gemm kernel=%s form=%s threads=%d m=%d n=%d k=%d what=%s ours=%.2f", kernels[kn],
                       FORMS[x->form].name, threads, x->m, x->n, x->k, x->what, ours[kn][i]);
                if (have_blas) printf(" openblas=%.2f\n", theirs[i]);
                else printf(" openblas=none\n");
            }
        }
        fflush(stdout);
    }
    gemm_force_kernel(NULL);
    parallel_stop();
    free(A);
    free(B);
    free(C);
    return 0;
}
