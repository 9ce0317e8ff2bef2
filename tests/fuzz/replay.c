/* replay.c — the fuzz regression test: runs every committed case of one
 * fuzz target (the files in tests/fuzz/corpus/<target>/) through the target's
 * LLVMFuzzerTestOneInput, without libFuzzer, one cmocka test per case.
 * A case that once crashed a target, or exercised an edge worth keeping,
 * is committed there and checked by every `make test` from then on.
 *
 *   build/tests/fuzz_replay_<target> [DIR]   (default: the target's corpus)
 *
 * The target's name is compiled in as FUZZ_TARGET (see the Makefile). */
#include "../testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define STR2(x) #x
#define STR(x) STR2(x)

static void replay_one(void **state)
{
    const char *path = *state;
    size_t len;
    char *bytes = read_file(path, &len);
    if (!bytes) fail_msg("cannot read %s", path);
    /* a copy of exactly len bytes, so ASan sees any read past the end */
    uint8_t *data = malloc(len ? len : 1);
    memcpy(data, bytes, len);
    assert_int_equal(LLVMFuzzerTestOneInput(data, len), 0);
    free(data);
    free(bytes);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "tests/fuzz/corpus/" STR(FUZZ_TARGET);
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "fuzz_replay: cannot open %s (run from the repository root)\n", dir);
        return 1;
    }
    char **paths = NULL;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        paths = realloc(paths, (n + 1) * sizeof *paths);
        paths[n] = malloc(strlen(dir) + strlen(e->d_name) + 2);
        sprintf(paths[n++], "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(paths, n, sizeof *paths, by_name);
    struct CMUnitTest *tests = calloc(n ? n : 1, sizeof *tests);
    for (size_t i = 0; i < n; i++) {
        tests[i].name = strrchr(paths[i], '/') + 1;
        tests[i].test_func = replay_one;
        tests[i].initial_state = paths[i];
    }
    int failed = _cmocka_run_group_tests("fuzz corpus of " STR(FUZZ_TARGET), tests, n, NULL, NULL);
    for (size_t i = 0; i < n; i++) free(paths[i]);
    free(paths);
    free(tests);
    return failed;
}
