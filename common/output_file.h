/* output_file.h — the one way every output file is written (-o,
 * --attention, --html, --logits, --hyps, vocabularies, weights and
 * checkpoints).
 *
 * What happens depends on what the path names, found with stat(2):
 *  - A regular file, or nothing yet: it is never written in place.  The
 *    contents go to a fresh temporary file that mkostemp makes beside the
 *    target (".NAME.translate-tmp.XXXXXX" in the same folder, so two runs writing one
 *    path never share it; NAME cut to its first 233 bytes, so that the
 *    temporary's name fits in 255 where the target's does); every write is checked; commit flushes, fsyncs,
 *    renames it over the target and fsyncs the folder.  Any failure, or an
 *    abort, removes the temporary file: the old target is left as it was.
 *    A writer that is killed leaves it behind; the next open of the same
 *    target clears those (output_file_remove_stale) before it makes its
 *    own.
 *    The new file keeps the old one's permission bits (a new file gets
 *    0666 minus the umask, as fopen would).  A file those bits keep from
 *    being written (no write bit at all, or none for us) is an error, not
 *    replaced: `chmod a-w` protects a file, root's too
 *    (output_file_check_writable asks that of a path beforehand).
 *  - Anything else that opens for writing — a character or block device
 *    (/dev/null, a terminal), a FIFO — is written directly: renaming over
 *    it would replace the device node or the pipe with a regular file.
 *    Opening a FIFO waits for its reader, as for any writer.  Every write
 *    and the close are checked.
 *  - "-" is standard output, when the caller passes OUTPUT_FILE_DASH.
 *  - The file standard output or standard error has open (/dev/stdout, or
 *    the name of the file `>> run.log` appends to) is written through
 *    that descriptor, never replaced: a rename would throw away what it
 *    held and everything written to it after.
 *  - A symbolic link is followed deliberately: what it points to is
 *    written as above (a regular target is replaced through a temporary
 *    file in the target's own folder), and the link stays a link.  A link
 *    to nothing is an error: we do not guess where to create the file.
 *  - A directory is an error.
 *
 * Errors name the caller's path, never the temporary one:
 * "PATH: cannot write: reason". */
#ifndef TRANSLATE_OUTPUT_FILE_H
#define TRANSLATE_OUTPUT_FILE_H

#include <stdbool.h>
#include <stdio.h>

#include "error.h"

enum { OUTPUT_FILE_DASH = 1 }; /* "-" means standard output */

typedef struct OutputFile OutputFile;

/* Open `path` for writing as described above; NULL with an Error.  The
 * returned file must be given to output_file_commit or output_file_abort,
 * which free it. */
OutputFile *output_file_open(const char *path, unsigned flags, Error *err);
/* Would output_file_open refuse the regular file at `path` for its
 * permissions (above)?  0 (also for no file, or one that is not regular),
 * or -1 with the error it would give: for a writer that comes late (train's
 * first model), so that it is said before the work, not after. */
int output_file_check_writable(const char *path, Error *err);
/* STDOUT_FILENO or STDERR_FILENO when `path` names the file that
 * descriptor has open (/dev/stdout, or the file itself, where `> FILE`
 * sent it; a device only by the descriptor's own name), else -1.  Such a
 * path output_file_open writes through that descriptor, after what is
 * there, never replacing it. */
int output_file_standard_stream(const char *path);
/* Where the contents go.  Write errors are remembered (the first errno)
 * and reported by commit, so callers need not check each call — but may
 * stop early when ferror() says the stream failed. */
FILE *output_file_stream(OutputFile *out);
/* Was it opened as "-" (OUTPUT_FILE_DASH): standard output's descriptor? */
bool output_file_is_stdout(const OutputFile *out);
/* The caller's path, as given to output_file_open, for messages; "-" is
 * "standard output". */
const char *output_file_name(const OutputFile *out);
/* Everything commit does before the rename: flushed and synced, every
 * write error reported.  For files that must change together (a model's
 * two vocabularies): prepare each, and commit them only when all are
 * ready; what can then still fail is a rename.  0, or -1 with the
 * message commit would give; the file stays open either way (commit or
 * abort it). */
int output_file_prepare(OutputFile *out, Error *err);
/* Finish: 0, or -1 with "PATH: cannot write: reason" if any write, the
 * flush, fsync, close or rename failed (the old target is then intact). */
int output_file_commit(OutputFile *out, Error *err);
/* Give up: the temporary file is removed, the target untouched (for a
 * device or FIFO, what was written stays written).  NULL-safe. */
void output_file_abort(OutputFile *out);

/* Remove the temporary files that writers of `path` left when they were
 * killed (".NAME.translate-tmp.XXXXXX" beside it, or beside what a link points to).  A
 * writer holds a lock (flock) on its temporary file until the rename, and
 * the kernel drops it when the writer dies: only unlocked ones are
 * removed, so a live writer's file is never touched.  Best effort (an
 * unreadable folder removes nothing); returns how many were removed. */
int output_file_remove_stale(const char *path);

/* The whole file at once: open, fill(stream, context), commit. */
typedef void OutputFill(FILE *f, const void *context);
int output_file_write(const char *path, unsigned flags, OutputFill *fill, const void *context,
                      Error *err);

#endif
