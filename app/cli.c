/* cli.c — see cli.h. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "cli.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/error.h"
#include "../common/input_file.h"
#include "../common/util.h"
#include "../model/parallel.h"

int cli_parse_count(const char *prog, const char *name, const char *text, int max, int *out)
{
    char *end;
    long n = strtol(text, &end, 10);
    /* plain digits only: strtol also skips spaces and takes a sign */
    if (*end || end == text || !ascii_is_digit(text[0]) || n < 1 || n > max) {
        cli_say(prog, "%s: expected a number from 1 to %d, got '%s'", name, max, text);
        return -1;
    }
    *out = (int)n;
    return 0;
}

int cli_file_value(const char *prog, const char *name, const char *value)
{
    if (value[0] != '-' || !value[1]) return 0;
    cli_say(prog, "%s needs a file name, not the option-like '%s' (a file of that name is ./%s)", name, value,
            value);
    return -1;
}

void cli_option_error(const char *prog, int c, char *const *argv, bool takes_text)
{
    /* the word getopt stopped at: a long option as written (its optopt is
     * 0, or the option's code), a short one as its letter (-qx: -x) */
    const char *word = argv[optind - 1];
    char short_name[3] = {'-', (char)optopt, '\0'};
    bool is_short = optopt > ' ' && optopt < 127 && strncmp(word, "--", 2) != 0;
    const char *name = is_short ? short_name : word;
    if (c == ':')
        cli_say(prog, "option %s needs a value (try '%s --help')", name, prog);
    else if (takes_text)
        cli_say(prog, "unknown option %s (try '%s --help'; a sentence that starts with '-' goes after "
                      "--: %s -- '-5 degrees')", name, prog, prog);
    else
        cli_say(prog, "unknown option %s (try '%s --help')", name, prog);
}

/* The cores this process may run on: a `taskset -c 0` or a container's
 * CPU set allows fewer than the machine has online, and two threads on
 * one core only take turns (and wait for each other at every product). */
static int usable_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? (int)cores : 1;
}

void cli_set_threads(int threads)
{
    parallel_set_threads(threads ? threads : usable_cores());
}

/* realpath of the folder `path` is in, then "/" and its last name: what a
 * file that need not exist yet is named as, a link to a file not yet there
 * followed to that name; NULL if the folder cannot be resolved. */
static char *resolved_name(const char *path)
{
    char *p = xstrdup(path);
    struct stat st;
    /* as many links as Linux follows (SYMLOOP_MAX, 40): past that, opening
     * the name fails anyway */
    for (int hops = 0; hops < 40 && lstat(p, &st) == 0 && S_ISLNK(st.st_mode); hops++) {
        char target[PATH_MAX];
        ssize_t n = readlink(p, target, sizeof target - 1);
        if (n <= 0 || n == (ssize_t)sizeof target - 1) break; /* (possibly cut short) */
        target[n] = '\0';
        const char *slash = strrchr(p, '/');
        size_t keep = target[0] == '/' || !slash ? 0 : (size_t)(slash - p) + 1; /* the link's folder */
        char *next = xmalloc(keep + (size_t)n + 1);
        memcpy(next, p, keep);
        strcpy(next + keep, target);
        free(p);
        p = next;
    }
    const char *slash = strrchr(p, '/');
    char *dir = util_path_folder(p);
    char *real = realpath(dir, NULL);
    free(dir);
    char *name = NULL;
    if (real) {
        const char *base = slash ? slash + 1 : p;
        name = xmalloc(strlen(real) + strlen(base) + 2);
        sprintf(name, "%s/%s", real, base);
        free(real);
    }
    free(p);
    return name;
}

bool cli_same_file(const char *a, const char *b)
{
    if (input_file_same(a, b)) return true;
    char *ra = resolved_name(a), *rb = resolved_name(b);
    bool same = ra && rb && strcmp(ra, rb) == 0;
    free(ra);
    free(rb);
    return same;
}

bool cli_written_directly(const char *path)
{
    struct stat st;
    return strcmp(path, "-") == 0 || (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode));
}

bool cli_plain_decimal(const char *text)
{
    size_t digits = strspn(text, "0123456789"), i = digits;
    if (text[i] == '.') {
        size_t more = strspn(text + i + 1, "0123456789");
        digits += more;
        i += 1 + more;
    }
    if (!digits) return false;
    if (text[i] == 'e' || text[i] == 'E') {
        i++;
        if (text[i] == '+' || text[i] == '-') i++;
        size_t exp = strspn(text + i, "0123456789");
        if (!exp) return false;
        i += exp;
    }
    return text[i] == '\0';
}

void cli_reserve_standard_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        int null = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
        if (null >= 0 && null != fd) {
            dup2(null, fd);
            close(null);
        }
    }
}

static void say(FILE *to, const char *prog, const char *fmt, va_list ap)
{
    /* Formatted at its own length, not into an Error's 512 bytes: a long
     * path would cut off the end of the message, often the hint. */
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *line = xmalloc(n > 0 ? (size_t)n + 1 : 1);
    line[0] = '\0';
    if (n > 0) vsnprintf(line, (size_t)n + 1, fmt, again);
    va_end(again);
    error_one_line(line); /* as every Error */
    fprintf(to, "%s: %s\n", prog, line);
    free(line);
}

void cli_say(const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(stderr, prog, fmt, ap);
    va_end(ap);
}

void cli_say_to(FILE *to, const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(to, prog, fmt, ap);
    va_end(ap);
}

ExitStatus cli_worse(ExitStatus a, ExitStatus b) { return a > b ? a : b; }
