/* util.c — see util.h. */
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

_Noreturn void util_assert_fail(const char *what, const char *file, int line)
{
    fprintf(stderr, "%s:%d: internal error: assertion failed: %s\n", file, line, what);
    abort();
}

/* Out of memory is no bug: a message and status UTIL_EXIT_OUT_OF_MEMORY,
 * documented with the others, not abort's SIGABRT (134 and a core).
 * _exit, not exit: another thread may be mid-product, and a temporary
 * output file left behind is cleared by the next write of its target. */
#ifdef __GLIBC__
extern char *program_invocation_short_name; /* glibc's: "translate", "train" */
#endif

static void *checked(void *p, size_t n, const char *file, int line)
{
    if (!p && n) {
#ifdef __GLIBC__
        fprintf(stderr, "%s: ", program_invocation_short_name);
#endif
        fprintf(stderr, "out of memory allocating %zu bytes (%s:%d)\n", n, file, line);
        _exit(UTIL_EXIT_OUT_OF_MEMORY);
    }
    return p;
}

void *util_xmalloc(size_t n, const char *file, int line)
{
    return checked(malloc(n ? n : 1), n, file, line);
}

void *util_xcalloc(size_t n, size_t size, const char *file, int line)
{
    if (size && n > SIZE_MAX / size) util_assert_fail("xcalloc size overflow", file, line);
    return checked(calloc(n ? n : 1, size ? size : 1), n * size, file, line);
}

void *util_xrealloc(void *p, size_t n, const char *file, int line)
{
    return checked(realloc(p, n ? n : 1), n, file, line);
}

char *util_xstrdup(const char *s, const char *file, int line)
{
    size_t n = strlen(s) + 1;
    char *copy = util_xmalloc(n, file, line);
    memcpy(copy, s, n);
    return copy;
}

void rng_seed(Rng *rng, uint64_t seed) { rng->state = seed; }

float rng_uniform(Rng *rng)
{
    return (float)(rng_next(rng) >> 40) / (float)(1ULL << 24); /* 24 random bits */
}

float rng_normal(Rng *rng)
{
    double u1 = ((double)(rng_next(rng) >> 11) + 1.0) / 9007199254740993.0; /* (0,1] */
    double u2 = (double)(rng_next(rng) >> 11) / 9007199254740992.0;
    return (float)(sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2));
}

uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

enum { HUGE_PAGE = 2u << 20 };

static size_t big_bytes(size_t n, size_t size)
{
    return (n * size + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
}

void *util_big_calloc(size_t n, size_t size, const char *file, int line)
{
    if (size && n > (SIZE_MAX - HUGE_PAGE) / size) util_assert_fail("big_calloc size overflow", file, line);
    if (n * size == 0) return NULL;
    /* A block smaller than a huge page gets none, yet its mapping was
     * rounded up to 2 MiB, which the kernel zeroed whole at the first
     * write: translate's 124 KB of biases and LayerNorms cost 3% of its
     * start-up in that (perf).  Such blocks come from malloc, cache-line
     * aligned. */
    if (n * size < HUGE_PAGE) {
        void *p = NULL;
        if (posix_memalign(&p, 64, n * size) != 0) checked(NULL, n * size, file, line);
        return memset(p, 0, n * size);
    }
    /* Map one huge page more than needed and trim both ends, so the block
     * starts on a huge-page boundary (the kernel only backs aligned 2 MiB
     * ranges with huge pages). Fresh anonymous pages read as zero. */
    size_t bytes = big_bytes(n, size), extra = HUGE_PAGE;
    char *raw = mmap(NULL, bytes + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) checked(NULL, bytes, file, line);
    char *start = (char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (start > raw) munmap(raw, (size_t)(start - raw));
    if (start + bytes < raw + bytes + extra) munmap(start + bytes, (size_t)(raw + bytes + extra - (start + bytes)));
#ifdef MADV_HUGEPAGE
    madvise(start, bytes, MADV_HUGEPAGE); /* a hint: without it, ordinary pages */
#endif
    return start;
}

void big_free(void *p, size_t n, size_t size)
{
    if (p && n * size < HUGE_PAGE) free(p);
    else if (p) munmap(p, big_bytes(n, size));
}

void strbuf_add(StrBuf *b, const char *bytes, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = 2 * (b->len + n + 1);
        b->s = xrealloc(b->s, b->cap);
    }
    memcpy(b->s + b->len, bytes, n);
    b->len += n;
    b->s[b->len] = '\0';
}

char *util_path_folder(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return xstrdup(".");
    size_t n = slash == path ? 1 : (size_t)(slash - path); /* keep "/" for "/x" */
    char *dir = xmalloc(n + 1);
    memcpy(dir, path, n);
    dir[n] = '\0';
    return dir;
}

double util_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
