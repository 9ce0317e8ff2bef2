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
    "    float a[19], b[19], half = 0.5f;\n"
    "    for (int i = 0; i < 19; i++) { a[i] = (float)i; b[i] = 2.0f; }\n"
    "    vec_axpy_rows(b, &half, a, 0, 1, 19);\n"
    "    printf(\"%g %g\\n\", vec_dot(a, b, 19), vec_sum(b, 19));\n"
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
    if (r.status != 0) fail_msg("linking a caller of vec_dot with clang: %s", r.err);
    run_result_free(&r);
    const char *run[] = {exe, NULL};
    r = run_program(run, NULL, 0);
    assert_int_equal(r.status, 0);
    /* b = 2 + i/2: Σ i·b = 2·171 + 2109/2 = 1396.5; Σ b = 38 + 85.5 = 123.5 */
    assert_string_equal(r.out, "1396.5 123.5\n");
    run_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vector_links_under_clang),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
