/* test_gemm.c — the fast matrix products against the plain references.
 *
 * Every form (nt, nn, tn) × accumulate off/on × every kernel × 1 and 2
 * threads, over shapes chosen to hit every edge: 1s, primes that
 * are multiples of no tile size, sums longer than one K block, and the
 * model's real shapes.  A fast result must be within
 *     1e-5 · K · max|A| · max|B|  (+ 1e-6 · max|C₀| when accumulating)
 * of the reference, which sums in double.  Then what gemm.h promises
 * beyond accuracy: two runs give the same bits, 1 and 2 threads give the
 * same bits, accumulate leaves C₀ out when off (even NaNs in C₀), and an
 * empty sum (K = 0) gives zeros; the kept worker threads survive many
 * calls, changed thread counts and two callers at once.  Each kernel's checks are test cases of
 * their own ("test_nt_matches_reference/avx512"): on a CPU without that
 * kernel's instructions they are reported as skipped, never passed. */
#include "testutil.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "../model/gemm.h"
#include "../model/parallel.h"

typedef void Gemm(float *C, const float *A, const float *B, int M, int N, int K,
                  bool accumulate);

typedef struct {
    const char *name;
    Gemm *fast, *reference;
} Form;

static const Form FORMS[] = {
    {"nt", gemm_nt, gemm_nt_reference},
    {"nn", gemm_nn, gemm_nn_reference},
    {"tn", gemm_tn, gemm_tn_reference},
};
enum { N_FORMS = sizeof FORMS / sizeof *FORMS };

/* The kernel a per-kernel test case checks is its cmocka state. */
static const char *kernel_of(void **state)
{
    const char *kernel = *state;
    if (!gemm_force_kernel(kernel)) SKIP_TEST("cpu", "this CPU cannot run the %s kernel", kernel);
    return kernel;
}

static int reset_kernel(void **state)
{
    (void)state;
    gemm_force_kernel(NULL);
    parallel_set_threads(1);
    return 0;
}

typedef struct {
    int m, n, k;
} Shape;

static const Shape SHAPES[] = {
    {1, 1, 1},        {1, 1, 7},       {2, 3, 1},      {7, 13, 29},    {13, 7, 29},
    {12, 32, 256},    {11, 31, 257},   {25, 33, 513},  {97, 5, 300},   {5, 97, 300},
    {1, 1024, 256},   {1, 256, 1024},  {3, 7000, 31},  {33, 7000, 256}, {200, 200, 600},
    {197, 4099, 3},   {4096, 256, 256}, {4, 2858, 256}, {2, 17, 35},
    /* odd sizes against every tile and packing width (6, 8, 12, 16, 32) */
    {17, 33, 7},      {33, 17, 17},    {7, 33, 1},     {1, 17, 33},    {49, 65, 263},
    {33, 1, 17},
};
enum { N_SHAPES = sizeof SHAPES / sizeof *SHAPES };

/* Uniform in [-scale, scale). */
static float *random_matrix(size_t n, float scale, Rng *rng)
{
    float *x = xmalloc((n ? n : 1) * sizeof *x);
    for (size_t i = 0; i < n; i++) x[i] = scale * (2.0f * rng_uniform(rng) - 1.0f);
    return x;
}

static float max_abs(const float *x, size_t n)
{
    float m = 0.0f;
    for (size_t i = 0; i < n; i++) m = fmaxf(m, fabsf(x[i]));
    return m;
}

static float *copy(const float *x, size_t n)
{
    float *y = xmalloc((n ? n : 1) * sizeof *y);
    memcpy(y, x, n * sizeof *y);
    return y;
}

/* Inputs for one shape: A and B (sized for any form) and a C₀ to
 * accumulate into.  Scales differ so a mix-up of A and B shows. */
typedef struct {
    Shape s;
    float *a, *b, *c0;
    float tol, tol_acc; /* without / with accumulate */
} Case;

static Case case_make(Shape s, uint64_t seed)
{
    Rng rng;
    rng_seed(&rng, seed);
    Case c = {s, NULL, NULL, NULL, 0, 0};
    size_t mk = (size_t)s.m * s.k, nk = (size_t)s.n * s.k, mn = (size_t)s.m * s.n;
    c.a = random_matrix(mk, 1.0f, &rng);
    c.b = random_matrix(nk, 3.0f, &rng);
    c.c0 = random_matrix(mn, 10.0f, &rng);
    c.tol = 1e-5f * (float)s.k * max_abs(c.a, mk) * max_abs(c.b, nk);
    c.tol_acc = c.tol + 1e-6f * max_abs(c.c0, mn);
    return c;
}

static void case_free(Case *c)
{
    free(c->a);
    free(c->b);
    free(c->c0);
}

/* True if every element is within tol of the reference; otherwise reports
 * the first that is not. */
static bool close_enough(const float *got, const float *want, Shape s, float tol,
                         const char *what)
{
    for (int i = 0; i < s.m; i++)
        for (int j = 0; j < s.n; j++) {
            float g = got[(size_t)i * s.n + j], w = want[(size_t)i * s.n + j];
            if (!(fabsf(g - w) <= tol)) {
                print_error("%s %dx%dx%d: C[%d,%d] = %.9g, reference %.9g (tolerance %g)\n",
                            what, s.m, s.n, s.k, i, j, (double)g, (double)w, (double)tol);
                return false;
            }
        }
    return true;
}

/* One form on one case, with and without accumulate, for the forced
 * kernel and 1 and 2 threads. */
static void check_case(const Form *form, const Case *c, const char *kernel)
{
    size_t mn = (size_t)c->s.m * c->s.n;
    /* "generic" is a kernel of its own (float sums, model/gemm.c's
     * generic_product), no longer the double-precision reference: every
     * shape, both thread counts, as the others. */
    for (int accumulate = 0; accumulate <= 1; accumulate++) {
        float *want = copy(c->c0, mn);
        form->reference(want, c->a, c->b, c->s.m, c->s.n, c->s.k, accumulate);
        for (int threads = 1; threads <= 2; threads++) {
            parallel_set_threads(threads);
            float *got = copy(c->c0, mn);
            form->fast(got, c->a, c->b, c->s.m, c->s.n, c->s.k, accumulate);
            char what[96];
            snprintf(what, sizeof what, "gemm_%s (%s, %d thread%s, accumulate %s)",
                     form->name, kernel, threads, threads > 1 ? "s" : "",
                     accumulate ? "on" : "off");
            bool ok = close_enough(got, want, c->s, accumulate ? c->tol_acc : c->tol, what);
            free(got);
            assert_true(ok);
        }
        free(want);
    }
    parallel_set_threads(1);
}

static void check_form(const Form *form, const char *kernel)
{
    for (int s = 0; s < N_SHAPES; s++) {
        Case c = case_make(SHAPES[s], 100 + (uint64_t)s);
        check_case(form, &c, kernel);
        case_free(&c);
    }
}

static void test_nt_matches_reference(void **state) { check_form(&FORMS[0], kernel_of(state)); }
static void test_nn_matches_reference(void **state) { check_form(&FORMS[1], kernel_of(state)); }
static void test_tn_matches_reference(void **state) { check_form(&FORMS[2], kernel_of(state)); }

/* Shapes big enough to be split between threads, and uneven; 30×20×7000
 * would be split by rows into bands of 16 rows or fewer, where gemm_nt
 * takes another path (and sums in another order) unless the path is
 * decided on the whole product; 40×300×400 takes the turned-around path. */
static const Shape SPLIT_SHAPES[] = {{300, 257, 130}, {97, 1500, 256}, {513, 100, 300},
                                     {30, 20, 7000},  {40, 300, 400}};

/* Same inputs → same bits: twice with one thread count, and across 1, 2
 * and 3 threads (a tile is computed the same way whoever computes it). */
static void test_results_are_deterministic(void **state)
{
    kernel_of(state);
    for (size_t s = 0; s < sizeof SPLIT_SHAPES / sizeof *SPLIT_SHAPES; s++) {
        Case c = case_make(SPLIT_SHAPES[s], 7 + s);
        size_t mn = (size_t)c.s.m * c.s.n;
        for (int f = 0; f < N_FORMS; f++) {
            float *first = NULL;
            for (int threads = 1; threads <= 3; threads++)
                for (int run = 0; run < 2; run++) {
                    parallel_set_threads(threads);
                    float *got = copy(c.c0, mn);
                    FORMS[f].fast(got, c.a, c.b, c.s.m, c.s.n, c.s.k, true);
                    if (!first) {
                        first = got;
                        continue;
                    }
                    if (memcmp(got, first, mn * sizeof *got) != 0)
                        print_error("gemm_%s %dx%dx%d: %d threads, run %d differs from the first\n",
                                    FORMS[f].name, c.s.m, c.s.n, c.s.k, threads, run + 1);
                    assert_memory_equal(got, first, mn * sizeof *got);
                    free(got);
                }
            free(first);
        }
        case_free(&c);
    }
    parallel_set_threads(1);
}

/* The worker threads are kept between calls and stopped when the count
 * changes: many calls in a row, and counts changed in between, still give
 * the one-thread bits. */
static void test_workers_are_kept(void **state)
{
    kernel_of(state);
    Case c = case_make((Shape){97, 300, 150}, 21); /* > 4M multiply-adds: threaded */
    size_t mn = (size_t)c.s.m * c.s.n;
    float *want[N_FORMS];
    parallel_set_threads(1);
    for (int f = 0; f < N_FORMS; f++) {
        want[f] = copy(c.c0, mn);
        FORMS[f].fast(want[f], c.a, c.b, c.s.m, c.s.n, c.s.k, true);
    }
    static const int counts[] = {2, 3, 2, 1, 2};
    float *got = xmalloc(mn * sizeof *got);
    for (size_t t = 0; t < sizeof counts / sizeof *counts; t++) {
        parallel_set_threads(counts[t]);
        for (int call = 0; call < 30; call++) {
            const Form *form = &FORMS[call % N_FORMS];
            memcpy(got, c.c0, mn * sizeof *got);
            form->fast(got, c.a, c.b, c.s.m, c.s.n, c.s.k, true);
            assert_memory_equal(got, want[call % N_FORMS], mn * sizeof *got);
        }
    }
    parallel_set_threads(1);
    free(got);
    for (int f = 0; f < N_FORMS; f++) free(want[f]);
    case_free(&c);
}

/* Two threads of a program calling gemm_* at once, with 2 threads set:
 * one gets the workers, the other runs alone; both get the right bits. */
typedef struct {
    const Case *c;
    const float *want;
    bool ok;
} Caller;

static void *caller_main(void *arg)
{
    Caller *caller = arg;
    const Case *c = caller->c;
    size_t mn = (size_t)c->s.m * c->s.n;
    float *got = xmalloc(mn * sizeof *got);
    caller->ok = true;
    for (int call = 0; call < 40; call++) {
        gemm_nt(got, c->a, c->b, c->s.m, c->s.n, c->s.k, false);
        caller->ok = caller->ok && memcmp(got, caller->want, mn * sizeof *got) == 0;
    }
    free(got);
    return NULL;
}

static void test_concurrent_callers(void **state)
{
    kernel_of(state);
    Case c = case_make((Shape){97, 300, 150}, 22);
    size_t mn = (size_t)c.s.m * c.s.n;
    float *want = xmalloc(mn * sizeof *want);
    parallel_set_threads(1);
    gemm_nt(want, c.a, c.b, c.s.m, c.s.n, c.s.k, false);
    parallel_set_threads(2);
    Caller callers[2] = {{&c, want, false}, {&c, want, false}};
    pthread_t other;
    assert_int_equal(pthread_create(&other, NULL, caller_main, &callers[1]), 0);
    caller_main(&callers[0]);
    pthread_join(other, NULL);
    parallel_set_threads(1);
    assert_true(callers[0].ok);
    assert_true(callers[1].ok);
    free(want);
    case_free(&c);
}

/* gemm_nt on up to 16 rows (decoding, short sentences) takes its own path
 * (see gemm.c), and a row's result there must not depend on how many rows
 * come with it: then a beam of 4 hypotheses computes each exactly as
 * greedy decoding would.
 * (Its accuracy is checked with every other shape above.) Shapes: K within
 * one K block and across several, with tails; N not a multiple of 4. */
static void test_few_rows_do_not_depend_on_each_other(void **state)
{
    const char *kernel = kernel_of(state);
    static const Shape shapes[] = {{16, 7, 5}, {16, 1024, 256}, {16, 256, 1024}, {16, 2858, 256},
                                   {16, 33, 531}, {16, 17, 16}};
    static const int rows[] = {2, 3, 4, 5, 7, 16};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        Case c = case_make(shapes[s], 11 + s);
        size_t n = (size_t)c.s.n, k = (size_t)c.s.k;
        for (int accumulate = 0; accumulate < 2; accumulate++) {
            for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
                int m = rows[r];
                float *together = copy(c.c0, (size_t)m * n);
                gemm_nt(together, c.a, c.b, m, c.s.n, c.s.k, accumulate);
                for (int row = 0; row < m; row++) {
                    float *alone = copy(c.c0 + row * n, n);
                    gemm_nt(alone, c.a + row * k, c.b, 1, c.s.n, c.s.k, accumulate);
                    if (memcmp(alone, together + row * n, n * sizeof *alone))
                        print_error("%s: row %d of %dx%dx%d (accumulate %d) differs from it alone\n",
                                    kernel, row, m, c.s.n, c.s.k, accumulate);
                    assert_memory_equal(alone, together + row * n, n * sizeof *alone);
                    free(alone);
                }
                free(together);
            }
        }
        case_free(&c);
    }
}

/* Each of `count` products, shapes[i] by `form`, must give its rows the
 * bits they have inside a product of the same K and N but `tall` rows (A's
 * first rows the same): the paths a product's height chooses are the same
 * arithmetic.  With and without accumulate. */
static void check_rows_as_in_taller(const char *kernel, const Form *form, const Shape *shapes,
                                    size_t count, int tall, uint64_t seed)
{
    for (size_t s = 0; s < count; s++) {
        Shape tall_shape = shapes[s];
        tall_shape.m = tall;
        Case c = case_make(tall_shape, seed + s);
        size_t n = (size_t)c.s.n, rows = (size_t)shapes[s].m;
        for (int accumulate = 0; accumulate < 2; accumulate++) {
            float *whole = copy(c.c0, (size_t)tall * n), *part = copy(c.c0, rows * n);
            form->fast(whole, c.a, c.b, tall, c.s.n, c.s.k, accumulate);
            form->fast(part, c.a, c.b, (int)rows, c.s.n, c.s.k, accumulate);
            if (memcmp(part, whole, rows * n * sizeof *part))
                print_error("%s: %s %zux%dx%d (accumulate %d) differs from its rows in a %d-row product\n",
                            kernel, form->name, rows, c.s.n, c.s.k, accumulate, tall);
            assert_memory_equal(part, whole, rows * n * sizeof *part);
            free(whole);
            free(part);
        }
        case_free(&c);
    }
}

/* gemm_nt on 17..48 rows runs turned around (Cᵀ = B·Aᵀ, see gemm.c) but
 * must give the bits of the blocked path, which taller products take: each
 * of those rows equals the same row inside a 64-row product. */
static void test_turned_path_matches_blocked(void **state)
{
    static const Shape shapes[] = {{17, 33, 7}, {32, 256, 256}, {40, 300, 513}, {48, 2858, 256},
                                   {33, 17, 300}};
    check_rows_as_in_taller(kernel_of(state), &FORMS[0], shapes, sizeof shapes / sizeof *shapes, 64, 31);
}

/* gemm_nt and gemm_nn read A's whole row panels in place and pack only a
 * block's last, partial one (gemm.c, micro_direct_*), the same arithmetic:
 * in a 52- or 53-row product rows 48.. are that packed panel, in a 64-row
 * product they are read in place, and they must have the same bits. */
static void test_in_place_rows_match_packed(void **state)
{
    static const Shape shapes[] = {{52, 256, 256}, {52, 300, 513}, {53, 33, 7}};
    for (size_t f = 0; f < 2; f++) /* nt, nn */
        check_rows_as_in_taller(kernel_of(state), &FORMS[f], shapes, sizeof shapes / sizeof *shapes, 64,
                                57);
}

/* gemm_nt on rows that fit in one row block (up to MC, 192) packs each
 * panel of B just before using it (gemm.c, product_run); taller products
 * pack a whole block of B first.  (On AVX-512 up to 48 rows take the
 * turned path, tested above.)  Shapes with K past one K block, N past one
 * N block (4096), edge panels both ways, against 400-row products. */
static void test_one_row_block_matches_taller(void **state)
{
    static const Shape shapes[] = {{100, 300, 513}, {49, 4133, 40}, {192, 33, 7}, {61, 17, 300}};
    check_rows_as_in_taller(kernel_of(state), &FORMS[0], shapes, sizeof shapes / sizeof *shapes, 400, 71);
}

/* Without accumulate C's old contents are never read: NaNs there vanish. */
static void test_overwrite_ignores_old_c(void **state)
{
    kernel_of(state);
    Case c = case_make((Shape){13, 37, 20}, 3);
    size_t mn = (size_t)c.s.m * c.s.n;
    for (int f = 0; f < N_FORMS; f++) {
        float *got = xmalloc(mn * sizeof *got);
        for (size_t i = 0; i < mn; i++) got[i] = NAN;
        FORMS[f].fast(got, c.a, c.b, c.s.m, c.s.n, c.s.k, false);
        for (size_t i = 0; i < mn; i++) assert_false(isnan(got[i]));
        free(got);
    }
    case_free(&c);
}

/* K = 0 is an empty sum: zeros, or C unchanged when accumulating. */
static void test_empty_sum(void **state)
{
    kernel_of(state);
    float a[1] = {0}, b[1] = {0};
    for (int f = 0; f < N_FORMS; f++) {
        float c[6] = {1, 2, 3, 4, 5, 6};
        FORMS[f].fast(c, a, b, 2, 3, 0, true);
        assert_true(c[0] == 1.0f && c[5] == 6.0f);
        FORMS[f].fast(c, a, b, 2, 3, 0, false);
        for (int i = 0; i < 6; i++) assert_true(c[i] == 0.0f);
    }
}

/* A 2×2 product small enough to check by hand, in all three layouts. */
static void test_small_product_by_hand(void **state)
{
    kernel_of(state);
    const float a[4] = {1, 2, 3, 4};  /* [[1,2],[3,4]] */
    const float b[4] = {5, 6, 7, 8};  /* [[5,6],[7,8]] */
    const float nt[4] = {17, 23, 39, 53}, nn[4] = {19, 22, 43, 50}, tn[4] = {26, 30, 38, 44};
    const float *want[N_FORMS] = {nt, nn, tn};
    for (int f = 0; f < N_FORMS; f++) {
        float c[4] = {1, 1, 1, 1};
        FORMS[f].fast(c, a, b, 2, 2, 2, true);
        for (int i = 0; i < 4; i++) assert_true(c[i] == want[f][i] + 1.0f);
    }
}

static void test_kernel_choice(void **state)
{
    (void)state;
    const char *chosen = gemm_kernel_name();
    assert_true(strcmp(chosen, "avx512") == 0 || strcmp(chosen, "avx2") == 0 ||
                strcmp(chosen, "generic") == 0);
    assert_true(gemm_force_kernel("generic"));
    assert_string_equal(gemm_kernel_name(), "generic");
    assert_false(gemm_force_kernel("sse9"));
    assert_string_equal(gemm_kernel_name(), "generic"); /* unchanged */
    assert_true(gemm_force_kernel(NULL));
    assert_string_equal(gemm_kernel_name(), chosen);
    const char *forced = getenv("TRANSLATE_GEMM"); /* a benchmark's choice: not the CPU's */
#if defined(__x86_64__) && defined(__GNUC__)
    if (forced && *forced)
        ;
    else if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma"))
        assert_string_equal(chosen, "avx512");
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        assert_string_equal(chosen, "avx2");
#else
    (void)forced;
    assert_string_equal(chosen, "generic"); /* no other kernel off x86-64 */
#endif
    /* make test-avx2 names the kernel its emulated CPU must get, so that a
     * qemu that offers AVX-512 (or none of AVX2) fails the run instead of
     * testing another path than the one it is there for */
    const char *expected = getenv("TEST_GEMM_KERNEL");
    if (expected && *expected) assert_string_equal(chosen, expected);
}

/* One test case per kernel: "test_x/avx512", "test_x/avx2", "test_x/generic". */
#define PER_KERNEL(f)                                                                              \
    {#f "/avx512", f, NULL, reset_kernel, (void *)"avx512"},                                        \
    {#f "/avx2", f, NULL, reset_kernel, (void *)"avx2"},                                            \
    {#f "/generic", f, NULL, reset_kernel, (void *)"generic"}

int main(void)
{
    const struct CMUnitTest tests[] = {
        PER_KERNEL(test_small_product_by_hand),
        PER_KERNEL(test_nt_matches_reference),
        PER_KERNEL(test_nn_matches_reference),
        PER_KERNEL(test_tn_matches_reference),
        PER_KERNEL(test_results_are_deterministic),
        PER_KERNEL(test_workers_are_kept),
        PER_KERNEL(test_concurrent_callers),
        PER_KERNEL(test_few_rows_do_not_depend_on_each_other),
        PER_KERNEL(test_turned_path_matches_blocked),
        PER_KERNEL(test_in_place_rows_match_packed),
        PER_KERNEL(test_one_row_block_matches_taller),
        PER_KERNEL(test_overwrite_ignores_old_c),
        PER_KERNEL(test_empty_sum),
        cmocka_unit_test(test_kernel_choice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
