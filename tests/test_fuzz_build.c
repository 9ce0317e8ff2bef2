/* test_fuzz_build.c — what `make fuzz` needs from the library builds under
 * clang: model/vector.c, compiled by clang and called from another file,
 * links and computes what it does under gcc.
 *
 * clang 14 emits target_clones' dispatcher only as "vec_dot.ifunc", so a
 * plain build of vector.c left vec_dot undefined for every other file and
 * no fuzz target linked.  CI also builds and runs every target (make fuzz);
 * this keeps the cause checked by `make test`, in a second.  Skipped
 * without /usr/bin/clang. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CLANG "/usr/bin/clang"

static const char caller[] =
    "#include <stdio.h>\n"
    "#include \"model/vector.h\"\n"
    "int main(void)\n"
    "{\n"
    "    float a[19], b[19], c[19], half = 0.5f, d[2], mask[4];\n"
    "    for (int i = 0; i < 19; i++) { a[i] = (float)i; b[i] = 2.0f; c[i] = 0.0f; }\n"
    "    vec_axpy_rows(b, &half, a, 0, 1, 19);\n"
    "    vec_axpy_each(c, 0, &half, a, 1, 19);\n"
    "    vec_add(c, b, 19);\n"
    "    vec_dot_rows(d, a, b, 0, 2, 19);\n"
    "    vec_dropout_mask(mask, 4, 1, 2.0f, 0);\n"
    "    printf(\"%g %g %g %g %g %.3f %g\\n\", vec_dot(a, b, 19), vec_sum(b, 19), vec_sum(c, 19), d[0] + d[1],\n"
    "           vec_max(a, 19), vec_exp_sum(NULL, a, 18.0f, 19), mask[0] + mask[1] + mask[2] + mask[3]);\n"
    "    return 0;\n"
    "}\n";

static void test_vector_links_under_clang(void **state)
{
    (void)state;
    if (access(CLANG, X_OK) != 0) {
        SKIP_TEST("fuzz", "no " CLANG " (apt-get install clang)");
    }
    char src[512], obj[512], exe[512];
    snprintf(src, sizeof src, "%s", temp_file("vector_caller.c", caller, strlen(caller)));
    snprintf(obj, sizeof obj, "%s/vector.o", temp_dir());
    snprintf(exe, sizeof exe, "%s/vector_caller", temp_dir());
    const char *compile[] = {CLANG, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror",
                             "-c", "-o", obj, "model/vector.c", NULL};
    RunResult r = run_program(compile, NULL, 0);
    if (r.status != 0) fail_msg("clang -c model/vector.c: %s", r.err);
    run_result_free(&r);
    const char *link[] = {CLANG, "-std=c11", "-O1", "-I.", "-o", exe, src, obj, NULL};
    r = run_program(link, NULL, 0);
    if (r.status != 0) fail_msg("linking a caller of vector.h with clang: %s", r.err);
    run_result_free(&r);
    const char *run[] = {exe, NULL};
    r = run_program(run, NULL, 0);
    assert_int_equal(r.status, 0);
    /* Every function of vector.h, so a clone without its wrapper would not
     * link.  b = 2 + i/2: Σ i·b = 2·171 + 2109/2 = 1396.5, Σ b = 38 + 85.5
     * = 123.5; c = i/2 + b = 2 + i: Σ c = 209; vec_dot_rows gives Σ i·b
     * twice; max 18; Σ e^(i - 18) = Σ_k e^-k ≈ 1.582; threshold 0 keeps
     * all four: 4 · 2. */
    assert_string_equal(r.out, "1396.5 123.5 209 2793 18 1.582 8\n");
    run_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vector_links_under_clang),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
