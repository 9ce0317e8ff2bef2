/* test_build.c — what the Makefile promises someone building by hand
 * (README, after `make clean`): flags on the command line add to the
 * build's own instead of replacing them, and a library pkg-config cannot
 * find is named, with its Debian package, before anything is compiled.
 * Every run is `make -n` (it prints the commands, runs none) in the
 * source tree. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static RunResult make_dry_run(const char *const *args)
{
    const char *argv[16] = {"/usr/bin/make", "-n", "--no-print-directory"};
    int n = 3;
    for (int i = 0; args[i]; i++) argv[n++] = args[i];
    argv[n] = NULL;
    return run_program(argv, NULL, 0);
}

/* `make CFLAGS="-O0 -g"` once replaced every flag of the build: no -MMD
 * (so a changed header rebuilt nothing from then on), no -std=c11, no
 * library include paths.  Now it comes last, after them. */
static void test_command_line_cflags_add_to_the_builds(void **state)
{
    (void)state;
    const char *const args[] = {"-W", "app/translate.c", "CFLAGS=-O0 -DBUILD_TEST_MARK", "build/app/translate.o",
                                NULL};
    RunResult r = make_dry_run(args);
    assert_int_equal(r.status, 0);
    const char *line = strstr(r.out, " -c -o build/app/translate.o");
    if (!line) fail_msg("no compile line for translate.o:\n%s", r.out);
    expect_in(r.out, "-std=c11");
    expect_in(r.out, "-MMD -MP");
    expect_in(r.out, "-Werror");
    const char *ours = strstr(r.out, "-O2"), *yours = strstr(r.out, "-O0 -DBUILD_TEST_MARK");
    if (!ours || !yours || yours < ours) fail_msg("the command line's -O0 does not come after -O2:\n%s", r.out);
    run_result_free(&r);
}

/* Without the libraries' pkg-config files: one line naming each and its
 * package, status 2, before any compile (once: a hundred undefined
 * references at the link, and no word of which package). */
static void test_a_missing_library_is_named_before_building(void **state)
{
    (void)state;
    const char *empty = temp_dir();
    setenv("PKG_CONFIG_LIBDIR", empty, 1);
    setenv("PKG_CONFIG_PATH", empty, 1);
    const char *const args[] = {"translate", NULL};
    RunResult r = make_dry_run(args);
    unsetenv("PKG_CONFIG_LIBDIR");
    unsetenv("PKG_CONFIG_PATH");
    assert_int_equal(r.status, 2);
    assert_string_equal(r.out, "");
    assert_int_equal(count_lines(r.err), 1);
    expect_in(r.err, "pkg-config cannot find yaml-0.1 libutf8proc libcjson: run `make deps` "
                     "(or sudo apt-get install libyaml-dev libutf8proc-dev libcjson-dev)");
    run_result_free(&r);
}

int main(void)
{
    /* The make running these tests passes its jobserver and flags down. */
    unsetenv("MAKEFLAGS");
    unsetenv("MFLAGS");
    unsetenv("MAKELEVEL");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_command_line_cflags_add_to_the_builds),
        cmocka_unit_test(test_a_missing_library_is_named_before_building),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
