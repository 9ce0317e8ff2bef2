/* input_file.c — see input_file.h. */
#include "input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static const char *kind_name(mode_t mode)
{
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a file";
}

int input_file_open(const char *path, unsigned flags, struct stat *st, Error *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return error_set(err, "%s: cannot open: %s", path, strerror(errno));
    int rc = 0;
    if (fstat(fd, st) != 0)
        rc = error_set(err, "%s: cannot stat: %s", path, strerror(errno));
    else if (S_ISDIR(st->st_mode))
        rc = error_set(err, "%s: is a directory", path);
    else if (!S_ISREG(st->st_mode) && !(flags & INPUT_FILE_STREAM))
        rc = error_set(err, "%s: is not a regular file (%s)", path, kind_name(st->st_mode));
    /* From here on reads may wait: a pipe's data comes as it is written. */
    else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
        rc = error_set(err, "%s: cannot open: %s", path, strerror(errno));
    if (rc) {
        close(fd);
        return -1;
    }
    return fd;
}

FILE *input_file_fopen(const char *path, unsigned flags, Error *err)
{
    struct stat st;
    int fd = input_file_open(path, flags, &st, err);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        error_set(err, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

char *input_file_read_all(const char *path, unsigned flags, size_t max, const char *what,
                          size_t *len, Error *err)
{
    struct stat st;
    int fd = input_file_open(path, flags, &st, err);
    if (fd < 0) return NULL;
    if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size > max) {
        error_set(err, "%s: %lld bytes, more than %s limit of %zu", path,
                  (long long)st.st_size, what, max);
        close(fd);
        return NULL;
    }
    /* Read at most max + 1 bytes: one more than allowed says "too big"
     * without reading the rest (a pipe or /dev/zero never ends). */
    char *buf = xmalloc(max + 2);
    size_t n = 0;
    int e = 0;
    while (n <= max) {
        ssize_t got = read(fd, buf + n, max + 1 - n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) e = errno;
        if (got <= 0) break;
        n += (size_t)got;
    }
    close(fd);
    if (e || n > max) {
        if (e) error_set(err, "%s: cannot read: %s", path, strerror(e));
        else error_set(err, "%s: more than %s limit of %zu bytes", path, what, max);
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

bool input_file_same(const char *a, const char *b)
{
    struct stat sa, sb;
    return strcmp(a, b) == 0 ||
           (stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
}
