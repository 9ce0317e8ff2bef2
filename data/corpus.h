/* corpus.h — a parallel corpus read from a TSV file (Tatoeba's layout:
 * English <TAB> Chinese <TAB> attribution), held in memory.
 *
 * Lines are kept as given (the tokenizer validates them later); a UTF-8
 * byte-order mark at the start of the file and a CR before the newline are
 * dropped; blank lines (empty, or spaces alone) are skipped.  A lone CR
 * inside a line is kept: the tokenizer reads it as a space, as every
 * control character.  A line with too few columns, a NUL
 * byte or more than 65,536 bytes is an error naming path:line; reading
 * stops there.  Only a regular file is read (common/input_file.h). */
#ifndef TRANSLATE_CORPUS_H
#define TRANSLATE_CORPUS_H

#include <stddef.h>
#include <stdio.h>

#include "../common/error.h"

/* The longest line read, in bytes (without its newline); a longer one is
 * an error, so no line makes us allocate more.  A --compare file of
 * translations has the same limit (eval/evaluate.h). */
enum { CORPUS_MAX_LINE_BYTES = 65536 };

typedef struct {
    size_t count;
    char **source;  /* [count] the source column of each line */
    char **target;  /* [count] the target column */
    int *line;      /* [count] 1-based line number in the file, for messages */
} Corpus;

/* The next line of a line file, by the rules every reader of one shares
 * (a TSV here, a --compare file of translations in eval/evaluate.c): at
 * most CORPUS_MAX_LINE_BYTES, no NUL byte, a BOM before line 1 skipped.
 * `line` has room for CORPUS_MAX_LINE_BYTES + 1 bytes; *text points into
 * it, NUL-terminated.  1 with a line, 0 at the end of the file, -1 with
 * "PATH:N: longer than 65536 bytes", "PATH:N: NUL byte in line" or "PATH:
 * read error: ..." (`number`: this line's, from 1). */
int corpus_next_line(FILE *f, const char *path, size_t number, char *line, char **text, Error *err);

int corpus_load(const char *path, int source_column, int target_column, Corpus *corpus,
                Error *err);
void corpus_free(Corpus *corpus); /* NULL-safe, leaves it zeroed */

#endif
