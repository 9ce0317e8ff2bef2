/* atomic_file.h — writing an output file so that a crash never leaves a
 * half-written file under the requested name: the contents go to
 * "path.tmp", which is flushed, fsync'ed and only then renamed to `path`.
 * (The trained weights and checkpoints get the same treatment in
 * model/safetensors.c, which also fsyncs the folder.) */
#ifndef TRANSLATE_ATOMIC_FILE_H
#define TRANSLATE_ATOMIC_FILE_H

#include <stdio.h>

#include "error.h"

/* Writes the contents to f; write errors are detected afterwards (ferror),
 * so it need not check each call. */
typedef void AtomicFill(FILE *f, const void *context);

/* Returns 0, or -1 with "path: cannot write: reason" (no .tmp is left). */
int atomic_file_write(const char *path, AtomicFill *fill, const void *context, Error *err);

#endif
