/* atomic_file.c — see atomic_file.h. */
#include "atomic_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

int atomic_file_write(const char *path, AtomicFill *fill, const void *context, Error *err)
{
    char *tmp = xmalloc(strlen(path) + 5);
    sprintf(tmp, "%s.tmp", path);
    int status = 0;
    FILE *f = fopen(tmp, "wb");
    if (f) fill(f, context);
    /* stdio errors are sticky: one ferror covers every write of fill. */
    if (!f || ferror(f) || fflush(f) != 0 || fsync(fileno(f)) != 0)
        status = error_set(err, "%s: cannot write: %s", path, strerror(errno ? errno : EIO));
    if (f && fclose(f) != 0 && status == 0)
        status = error_set(err, "%s: cannot write: %s", path, strerror(errno));
    if (status == 0 && rename(tmp, path) != 0)
        status = error_set(err, "%s: cannot write: %s", path, strerror(errno));
    if (status) unlink(tmp);
    free(tmp);
    return status;
}
