/* input_file.h — opening an input file (config, vocabulary, weights, TSV
 * corpus) so that no path can hang or flood a reader.
 *
 * open(2) runs with O_NONBLOCK, so a FIFO without a writer never blocks
 * us; fstat then says what the path is.  A directory is always refused.
 * A FIFO, a character device (/dev/zero, a terminal) or a socket is
 * refused as "not a regular file" unless the caller passes
 * INPUT_FILE_STREAM; it then reads it blocking, and bounds what it reads
 * itself (input_file_read_all does).  Messages read "PATH: reason". */
#ifndef TRANSLATE_INPUT_FILE_H
#define TRANSLATE_INPUT_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

#include "error.h"

enum { INPUT_FILE_STREAM = 1 }; /* also accept a pipe or a device */

/* A descriptor open for reading (close it), with its fstat in *st; or -1
 * with "PATH: cannot open: reason", "PATH: is a directory" or "PATH: is not
 * a regular file (a FIFO)". */
int input_file_open(const char *path, unsigned flags, struct stat *st, Error *err);
/* The same as a stdio stream (fclose it); NULL with the same messages. */
FILE *input_file_fopen(const char *path, unsigned flags, Error *err);
/* The whole file, NUL-terminated, in a malloc'd buffer (*len bytes, NULs
 * inside kept); NULL with an Error.  Larger than max is "PATH: N bytes,
 * more than WHAT limit of MAX" (a regular file, by its size) or "PATH: more
 * than WHAT limit of MAX bytes" (a stream: found by reading max + 1 bytes,
 * never more).  `what` is e.g. "a config's". */
char *input_file_read_all(const char *path, unsigned flags, size_t max, const char *what,
                          size_t *len, Error *err);

/* Do a and b name one file: the same text, or one existing file (links
 * followed)?  What keeps an output off a file the run reads (app/cli.h's
 * cli_same_file adds names of files not there yet). */
bool input_file_same(const char *a, const char *b);

#endif
