/* fuzz.h — what the fuzz targets in tests/fuzz/ share.
 *
 * Each fuzz_<name>.c defines the libFuzzer entry point
 *     int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
 * and nothing else that is not static.  `make fuzz` links each with
 * libFuzzer (clang -fsanitize=fuzzer,address,undefined); `make test` links
 * each with tests/fuzz/replay.c instead, a plain driver that feeds it
 * every committed case under tests/fuzz/corpus/<name>/.  Targets run from
 * the repository root, like the tests.
 *
 * A target checks what must hold for *any* input (a rejection is one line
 * naming what went wrong; what is accepted is well formed) with FUZZ_CHECK,
 * which aborts so that both libFuzzer and the replay driver see it. */
#ifndef TRANSLATE_FUZZ_H
#define TRANSLATE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUZZ_CHECK(cond)                                                             \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                 \
        }                                                                            \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Write `size` bytes to this process's scratch file ("translate-fuzz-
 * <pid><suffix>" in /dev/shm, a RAM disk, when there is one, else /tmp;
 * removed at exit) and return its path (static buffer). */
static char fuzz_scratch_path[128];

static inline void fuzz_remove_scratch(void)
{
    unlink(fuzz_scratch_path);
}

static inline const char *fuzz_scratch_file(const char *suffix, const uint8_t *data, size_t size)
{
    if (!fuzz_scratch_path[0]) atexit(fuzz_remove_scratch);
    snprintf(fuzz_scratch_path, sizeof fuzz_scratch_path, "%s/translate-fuzz-%d%s",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int)getpid(), suffix);
    FILE *f = fopen(fuzz_scratch_path, "wb");
    FUZZ_CHECK(f != NULL);
    FUZZ_CHECK(size == 0 || fwrite(data, 1, size, f) == size);
    FUZZ_CHECK(fclose(f) == 0);
    return fuzz_scratch_path;
}

/* An error message is one non-empty line. */
static inline int fuzz_one_line(const char *message)
{
    return message[0] != '\0' && strchr(message, '\n') == NULL;
}

#endif
