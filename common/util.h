/* util.h — assertions for bugs, checked allocation, ASCII classes, a seeded
 * RNG.
 *
 * ASSERT is for things that cannot happen unless our code is wrong; bad
 * input is never an ASSERT (see error.h).  Allocation failure is a
 * one-line message naming file:line and status UTIL_EXIT_OUT_OF_MEMORY
 * (5): every size we allocate is bounded by a validated input first. */
#ifndef TRANSLATE_UTIL_H
#define TRANSLATE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ASSERT(cond)                                                       \
    do {                                                                   \
        if (!(cond)) util_assert_fail(#cond, __FILE__, __LINE__);          \
    } while (0)

_Noreturn void util_assert_fail(const char *what, const char *file, int line);

/* The exit status when an allocation fails (app/exit_status.h: EXIT_MEMORY). */
enum { UTIL_EXIT_OUT_OF_MEMORY = 5 };

#define xmalloc(n) util_xmalloc((n), __FILE__, __LINE__)
#define xcalloc(n, size) util_xcalloc((n), (size), __FILE__, __LINE__)
#define xrealloc(p, n) util_xrealloc((p), (n), __FILE__, __LINE__)
#define xstrdup(s) util_xstrdup((s), __FILE__, __LINE__)
void *util_xmalloc(size_t n, const char *file, int line);
/* Zeroed memory for the largest arrays (every Params: the weights and, in
 * training, their gradients), mapped on its own and marked for transparent
 * huge pages:
 * 30 MB of weights then cost ~15 page faults instead of ~7,500, and in a
 * virtual machine the faults were the largest part of start-up.  Blocks
 * under 2 MiB come from malloc instead (64-byte aligned).  Out of memory
 * exits as xmalloc does; free with big_free and the same size. */
#define big_calloc(n, size) util_big_calloc((n), (size), __FILE__, __LINE__)
void *util_big_calloc(size_t n, size_t size, const char *file, int line);
void big_free(void *p, size_t n, size_t size); /* NULL-safe */
void *util_xcalloc(size_t n, size_t size, const char *file, int line);
void *util_xrealloc(void *p, size_t n, const char *file, int line);
char *util_xstrdup(const char *s, const char *file, int line);

/* ASCII letters and digits whatever the locale (<ctype.h> answers by it):
 * the rules for names, numbers and casing are about A-Z and 0-9. */
static inline bool ascii_is_upper(char c) { return c >= 'A' && c <= 'Z'; }
static inline bool ascii_is_lower(char c) { return c >= 'a' && c <= 'z'; }
static inline bool ascii_is_letter(char c) { return ascii_is_upper(c) || ascii_is_lower(c); }
static inline bool ascii_is_digit(char c) { return c >= '0' && c <= '9'; }
static inline char ascii_to_lower(char c) { return ascii_is_upper(c) ? (char)(c - 'A' + 'a') : c; }

/* A small, fast, seedable generator: plain splitmix64 (one 64-bit state,
 * passes BigCrush, trivially seedable).  The same seed gives the same
 * stream on every machine. */
typedef struct {
    uint64_t state;
} Rng;

/* splitmix64's increment: the state moves by it at every draw. */
#define RNG_GAMMA 0x9e3779b97f4a7c15ULL

void rng_seed(Rng *rng, uint64_t seed);

/* Inline: dropout draws one per two activations, and the call was half of
 * the generator's cost there (perf: rng_next 2.5% of a training step). */
static inline uint64_t rng_next(Rng *rng)
{
    uint64_t z = (rng->state += RNG_GAMMA);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The state after n more rng_next calls, without making them: splitmix64's
 * state only counts, so draw j of a stream can be taken from anywhere. */
static inline void rng_skip(Rng *rng, uint64_t n) { rng->state += n * RNG_GAMMA; }

float rng_uniform(Rng *rng);            /* [0, 1) */
float rng_normal(Rng *rng);             /* mean 0, std 1 (Box–Muller) */

/* 64-bit FNV-1a over bytes; chain by passing the previous value as `h`,
 * starting from FNV_OFFSET or FNV_OFFSET_STANDARD.  FNV_OFFSET is not
 * FNV's offset basis (that is FNV_OFFSET_STANDARD, 0xcbf29ce484222325):
 * an early copy dropped its last digit.  It stays, as the vocabulary
 * hashes in the shipped weights and the hashes in checkpoints were made
 * with it; the data set's and train's seed hashes use the standard one.
 * Either works as a starting value. */
#define FNV_OFFSET 1469598103934665603ULL
#define FNV_OFFSET_STANDARD 14695981039346656037ULL
uint64_t fnv1a(uint64_t h, const void *data, size_t n);

/* A growable byte string: s[0..len) and a NUL after it once anything is
 * added (s is NULL before); the owner frees s. */
typedef struct {
    char *s;
    size_t len, cap;
} StrBuf;
void strbuf_add(StrBuf *b, const char *bytes, size_t n);

/* Seconds on the monotonic clock: for measuring durations only. */
double util_now(void);

/* The folder part of a path, malloc'd: "a/b" for "a/b/c.yaml", "/" for
 * "/c.yaml", "." for a bare name. */
char *util_path_folder(const char *path);

#endif
