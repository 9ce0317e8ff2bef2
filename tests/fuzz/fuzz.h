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

#include <fcntl.h>
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

/* Make the open file `fd` hold exactly data[0..size). */
static inline void fuzz_rewrite(int fd, const uint8_t *data, size_t size)
{
    for (size_t done = 0; done < size;) {
        ssize_t n = pwrite(fd, data + done, size - done, (off_t)done);
        FUZZ_CHECK(n > 0);
        done += (size_t)n;
    }
    FUZZ_CHECK(ftruncate(fd, (off_t)size) == 0);
}

/* Write `size` bytes to this process's scratch file ("translate-fuzz-
 * <pid><suffix>" in /dev/shm, a RAM disk, when there is one, else /tmp;
 * removed at exit) and return its path (static buffer).  The file is
 * created once and rewritten in place for each input: fopen + fwrite +
 * fclose per input cost 34 us in the sanitized build, pwrite + ftruncate
 * 2 us, and for the config and vocabulary targets that was half of each
 * execution.  Each target uses one suffix. */
static char fuzz_scratch_path[128];
static int fuzz_scratch_fd = -1;

static inline void fuzz_remove_scratch(void)
{
    unlink(fuzz_scratch_path);
}

static inline const char *fuzz_scratch_file(const char *suffix, const uint8_t *data, size_t size)
{
    if (fuzz_scratch_fd < 0) {
        snprintf(fuzz_scratch_path, sizeof fuzz_scratch_path, "%s/translate-fuzz-%d%s",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int)getpid(), suffix);
        fuzz_scratch_fd = open(fuzz_scratch_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        FUZZ_CHECK(fuzz_scratch_fd >= 0);
        atexit(fuzz_remove_scratch);
    }
    fuzz_rewrite(fuzz_scratch_fd, data, size);
    return fuzz_scratch_path;
}

/* An error message is one non-empty line. */
static inline int fuzz_one_line(const char *message)
{
    return message[0] != '\0' && strchr(message, '\n') == NULL;
}

#endif
