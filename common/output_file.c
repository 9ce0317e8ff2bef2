/* output_file.c — see output_file.h.
 *
 * Writes go through a stdio stream whose write function (fopencookie) is
 * ours: it loops over short writes and EINTR and keeps the first errno, so
 * a write error is reported with its real reason ("No space left on
 * device") even when stdio only notices it at the final flush. */
#define _GNU_SOURCE /* fopencookie */
#include "output_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* Our temporary files are ".NAME." TEMPORARY_MARK "XXXXXX" (output_file.h). */
#define TEMPORARY_MARK "translate-tmp."

/* How much of a target's name its temporary files carry: all of it, or as
 * much as leaves room within NAME_MAX for the dots, the mark and mkstemp's
 * six characters.  A target of 234 to 255 bytes was refused ("File name
 * too long": its temporary's name was), though the name itself is one the
 * folder takes. */
static size_t temporary_base_length(const char *base)
{
    size_t room = NAME_MAX - (2 + strlen(TEMPORARY_MARK) + 6), n = strlen(base);
    return n < room ? n : room;
}

struct OutputFile {
    FILE *f;
    int fd;
    char *path;     /* the caller's, for messages */
    char *target;   /* what the rename replaces (a link resolved); NULL: written directly */
    char *tmp;      /* the temporary file; NULL: written directly */
    bool borrowed;  /* fd is standard output's or error's (1 or 2): flushed, never closed */
    int error;      /* errno of the first failed write, or 0 */
};

/* On a failed write it returns the bytes written before it (often 0), as
 * fopencookie(3) requires ("must not return a negative value"): glibc
 * adds what it returns to its count of bytes taken, and a -1 made a later
 * fwrite of a large block copy past its buffer (translate -a /dev/full
 * with 20 lines of input: a segmentation fault once the JSON passed
 * ~580 KB). */
static ssize_t cookie_write(void *cookie, const char *buf, size_t n)
{
    OutputFile *o = cookie;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(o->fd, buf + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            if (!o->error) o->error = w < 0 ? errno : EIO;
            return (ssize_t)done;
        }
        done += (size_t)w;
    }
    return (ssize_t)n;
}

/* Make the rename durable: without this a power cut soon after it can
 * bring back the old directory entry.  Best effort: some file systems
 * refuse fsync on a folder, and the file is complete under its name. */
static void sync_dir(const char *path)
{
    char *dir = util_path_folder(path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

static void output_free(OutputFile *o)
{
    free(o->path);
    free(o->target);
    free(o->tmp);
    free(o);
}

/* NULL with "path: cannot write: STEPreason" (errno e); frees o. */
static OutputFile *open_failed_at(OutputFile *o, const char *step, int e, Error *err)
{
    error_set(err, "%s: cannot write: %s%s", o->path, step, strerror(e));
    if (o->fd >= 0 && !o->borrowed) close(o->fd);
    if (o->tmp) unlink(o->tmp);
    output_free(o);
    return NULL;
}

static OutputFile *open_failed(OutputFile *o, int e, Error *err) { return open_failed_at(o, "", e, err); }

/* A temporary file beside `target`, with the permission bits `mode`,
 * locked (flock) for as long as it may still be renamed: what tells
 * output_file_remove_stale a writer's file from a dead writer's.  If a
 * cleaner removed the name between mkostemp and flock (it saw the file
 * unlocked), the name no longer is our file: take another (a few times;
 * a race, not a state).  A file system without locks (ENOLCK) writes
 * without one, as train's log does; a lock or fstat that fails otherwise
 * removes the file and is the error (it once took another name, forever:
 * 100,000 files in 2 s). */
static int open_temporary(OutputFile *o, mode_t mode)
{
    char *dir = util_path_folder(o->target);
    const char *slash = strrchr(o->target, '/');
    const char *base = slash ? slash + 1 : o->target;
    size_t size = strlen(dir) + strlen(base) + sizeof TEMPORARY_MARK + 16;
    o->tmp = xmalloc(size);
    for (int tries = 0;; tries++) {
        snprintf(o->tmp, size, "%s/.%.*s." TEMPORARY_MARK "XXXXXX", dir, (int)temporary_base_length(base), base);
        o->fd = mkostemp(o->tmp, O_CLOEXEC);
        if (o->fd < 0) break;
        struct stat mine, named;
        if ((flock(o->fd, LOCK_EX) == 0 || errno == ENOLCK) && fstat(o->fd, &mine) == 0) {
            if (stat(o->tmp, &named) == 0 && mine.st_ino == named.st_ino && mine.st_dev == named.st_dev) break;
            close(o->fd); /* the name is gone or another file's: a cleaner took ours */
            o->fd = -1;
            errno = EAGAIN;
            if (tries < 16) continue;
            break;
        }
        int e = errno;
        unlink(o->tmp);
        close(o->fd);
        o->fd = -1;
        errno = e;
        break;
    }
    free(dir);
    if (o->fd < 0) {
        free(o->tmp);
        o->tmp = NULL;
        return -1;
    }
    return fchmod(o->fd, mode);
}

/* Is name ".BASE.translate-tmp.XXXXXX", XXXXXX being what mkstemp puts
 * there (BASE cut as open_temporary cuts it)?  The mark is what makes it
 * ours: a user's ".out.txt.backup" has the shape of mkstemp's six
 * characters, and was removed as a dead writer's (no lock held on it).
 * Two long targets alike in their first 233 bytes share the cut name: one
 * may remove the other's dead writer's file, never a live one's (locked). */
static bool is_temporary_of(const char *name, const char *base)
{
    size_t n = temporary_base_length(base), mark = strlen(TEMPORARY_MARK);
    if (name[0] != '.' || strncmp(name + 1, base, n) != 0 || name[n + 1] != '.') return false;
    if (strncmp(name + n + 2, TEMPORARY_MARK, mark) != 0) return false;
    const char *x = name + n + 2 + mark;
    if (strlen(x) != 6) return false;
    for (; *x; x++)
        if (!((*x >= 'a' && *x <= 'z') || (*x >= 'A' && *x <= 'Z') || (*x >= '0' && *x <= '9')))
            return false;
    return true;
}

int output_file_remove_stale(const char *path)
{
    char *target = realpath(path, NULL); /* a link: its target's folder, as open does */
    if (!target) target = xstrdup(path);
    char *dir = util_path_folder(target);
    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    int removed = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!is_temporary_of(e->d_name, base)) continue;
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) continue; /* gone meanwhile, or not ours to open */
        struct stat st;
        /* unlocked: its writer died (or has just finished, and the name is gone) */
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
            unlinkat(dirfd(d), e->d_name, 0) == 0)
            removed++;
        close(fd);
    }
    if (d) closedir(d);
    free(dir);
    free(target);
    return removed;
}

/* 1 or 2 when `path` names that descriptor itself, through the links
 * /dev/stdout -> /proc/self/fd/1 and the like; else -1. */
static int descriptor_named(const char *path)
{
    static const char *const names[][3] = {{"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"},
                                            {"/dev/stderr", "/dev/fd/2", "/proc/self/fd/2"}};
    char link[256];
    for (int depth = 0; depth < 8; depth++) {
        for (int fd = 0; fd < 2; fd++)
            for (int k = 0; k < 3; k++)
                if (strcmp(path, names[fd][k]) == 0) return fd + 1;
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n <= 0 || link[0] != '/') return -1;
        link[n] = '\0';
        path = link;
    }
    return -1;
}

/* STDOUT_FILENO or STDERR_FILENO when `path` (`st`) is the file that
 * descriptor has open, else -1.  A character device (/dev/null, a
 * terminal) only where the path names the descriptor itself (/dev/stdout):
 * any descriptor writes a device alike, and a closed standard output is
 * /dev/null opened read-only (cli_reserve_standard_fds), so `-o /dev/null
 * >&-` failed writing through it, while `-o /dev/stdout >&-` must fail. */
static int standard_stream_of(const char *path, const struct stat *st)
{
    if (S_ISCHR(st->st_mode)) return descriptor_named(path);
    const int fds[] = {STDOUT_FILENO, STDERR_FILENO};
    for (int i = 0; i < 2; i++) {
        struct stat fd_st;
        if (fstat(fds[i], &fd_st) == 0 && fd_st.st_dev == st->st_dev && fd_st.st_ino == st->st_ino)
            return fds[i];
    }
    return -1;
}

int output_file_standard_stream(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? standard_stream_of(path, &st) : -1;
}

/* A regular file (`target`, what `path` names) that its permissions keep
 * from being written is not replaced either: a rename needs only the
 * folder's permission, and replaced such files where `> FILE` could not
 * have written them (as root, too, a model the user had made read-only to
 * keep it).  No write bit at all is `chmod a-w`, root's files too; else
 * access(2) says (not ours: "Permission denied", "Read-only file system").
 * 0, or -1 with err. */
static int refuse_unwritable(const char *path, const char *target, const struct stat *st, Error *err)
{
    if ((st->st_mode & 0222) == 0)
        return error_set(err, "%s: cannot write: the file is read-only (chmod u+w %s to let it be replaced)",
                         path, path);
    if (access(target, W_OK) != 0) return error_set(err, "%s: cannot write: %s", path, strerror(errno));
    return 0;
}

int output_file_check_writable(const char *path, Error *err)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    return refuse_unwritable(path, path, &st, err);
}

OutputFile *output_file_open(const char *path, unsigned flags, Error *err)
{
    OutputFile *o = xcalloc(1, sizeof *o);
    bool dash = (flags & OUTPUT_FILE_DASH) && strcmp(path, "-") == 0;
    o->path = xstrdup(dash ? "standard output" : path); /* as errors name it ("-: cannot write" said little) */
    o->fd = -1;
    struct stat st; /* what the path names, once for every case below */
    bool exists = stat(path, &st) == 0;
    int stat_errno = errno, stream;
    if (dash) {
        o->fd = STDOUT_FILENO;
        o->borrowed = true;
    } else if (exists && (stream = standard_stream_of(path, &st)) >= 0) {
        /* /dev/stdout (or the file itself) where standard output or error
         * goes: written through that descriptor, after what it has
         * written.  Replaced by a rename, `... >> run.log` lost the log's
         * earlier lines and everything written to it afterwards. */
        o->fd = stream;
        o->borrowed = true;
    } else if (exists && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) return open_failed(o, EISDIR, err);
        /* No O_CREAT, no O_TRUNC: a device or a FIFO is written as it is. */
        o->fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (o->fd < 0) return open_failed(o, errno, err);
        if (fstat(o->fd, &st) != 0 || S_ISREG(st.st_mode)) /* replaced since stat */
            return open_failed(o, EAGAIN, err);
    } else {
        struct stat lst;
        if (!exists && stat_errno != ENOENT) return open_failed(o, stat_errno, err);
        if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
            /* Follow the link: replace what it points to, keep the link. */
            if (!exists) {
                error_set(err, "%s: cannot write: a symbolic link to a missing file", path);
                output_free(o);
                return NULL;
            }
            o->target = realpath(path, NULL);
            if (!o->target) return open_failed(o, errno, err);
        } else {
            o->target = xstrdup(path);
        }
        if (exists && refuse_unwritable(path, o->target, &st, err)) {
            output_free(o);
            return NULL;
        }
        mode_t mask = umask(0);
        umask(mask);
        mode_t mode = exists ? st.st_mode & 07777 : 0666 & ~mask;
        /* Dead writers' files first: a killed checkpoint save leaves
         * hundreds of MB, which on a nearly full disk made every later save
         * of the same file fail for want of the space they held. */
        output_file_remove_stale(o->target);
        if (open_temporary(o, mode)) {
            /* "No such file" where the folder is there (-a /proc/version,
             * a file system that takes no new files): said to be the
             * temporary's, not the target's */
            int e = errno;
            char *dir = util_path_folder(o->target);
            bool folder = e == ENOENT && stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
            free(dir);
            return open_failed_at(o, folder ? "cannot create a temporary file beside it: " : "", e, err);
        }
    }
    cookie_io_functions_t io = {.write = cookie_write};
    o->f = fopencookie(o, "w", io);
    if (!o->f) return open_failed(o, errno, err);
    return o;
}

FILE *output_file_stream(OutputFile *out)
{
    return out->f;
}

bool output_file_is_stdout(const OutputFile *out)
{
    return out->borrowed && out->fd == STDOUT_FILENO;
}

const char *output_file_name(const OutputFile *out)
{
    return out->path;
}

/* 0, or the errno of the first failed write, flush or fsync. */
static int flush_and_sync(OutputFile *o)
{
    if (fflush(o->f) != 0 || ferror(o->f)) return o->error ? o->error : EIO;
    if (o->tmp && fsync(o->fd) != 0) return errno;
    return 0;
}

int output_file_prepare(OutputFile *o, Error *err)
{
    ASSERT(o);
    int e = flush_and_sync(o);
    return e ? error_set(err, "%s: cannot write: %s", o->path, strerror(e)) : 0;
}

int output_file_commit(OutputFile *o, Error *err)
{
    ASSERT(o);
    int e = flush_and_sync(o);
    fclose(o->f); /* our cookie has no close: the descriptor is ours to close */
    /* the lock is the open file's: a copy of the descriptor keeps it until
     * the rename, so no cleaner takes the finished file for a dead one */
    int lock = o->tmp ? dup(o->fd) : -1;
    if (!o->borrowed && close(o->fd) != 0 && !e) e = errno;
    if (!e && o->tmp && rename(o->tmp, o->target) != 0) e = errno;
    if (o->tmp) {
        if (e) unlink(o->tmp);
        else sync_dir(o->target);
    }
    if (lock >= 0) close(lock);
    int rc = e ? error_set(err, "%s: cannot write: %s", o->path, strerror(e)) : 0;
    output_free(o);
    return rc;
}

void output_file_abort(OutputFile *o)
{
    if (!o) return;
    fclose(o->f);
    if (!o->borrowed) close(o->fd);
    if (o->tmp) unlink(o->tmp);
    output_free(o);
}

int output_file_write(const char *path, unsigned flags, OutputFill *fill, const void *context,
                      Error *err)
{
    OutputFile *o = output_file_open(path, flags, err);
    if (!o) return -1;
    fill(o->f, context);
    return output_file_commit(o, err);
}
