/* corpus.c — reading a TSV parallel corpus (see corpus.h). */
#include "corpus.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/input_file.h"
#include "../common/line.h"
#include "../common/utf8.h"
#include "../common/util.h"

/* Column `index` of a tab-separated line, copied; NULL if there are fewer
 * columns. */
static char *column(const char *line, int index)
{
    const char *start = line;
    for (int i = 0; i < index; i++) {
        start = strchr(start, '\t');
        if (!start) return NULL;
        start++;
    }
    size_t n = strcspn(start, "\t");
    char *copy = xmalloc(n + 1);
    memcpy(copy, start, n);
    copy[n] = '\0';
    return copy;
}

int corpus_next_line(FILE *f, const char *path, size_t number, char *line, char **text, Error *err)
{
    long n = line_read_or_stop(f, line, CORPUS_MAX_LINE_BYTES);
    if (n == LINE_EOF)
        return ferror(f) ? error_set(err, "%s: read error: %s", path, strerror(errno ? errno : EIO)) : 0;
    if (n == LINE_TOO_LONG) return error_set(err, "%s:%zu: longer than %d bytes", path, number, CORPUS_MAX_LINE_BYTES);
    if (memchr(line, '\0', (size_t)n)) return error_set(err, "%s:%zu: NUL byte in line", path, number);
    *text = number == 1 ? line + utf8_bom_length(line, (size_t)n) : line;
    return 1;
}

int corpus_load(const char *path, int source_column, int target_column, Corpus *c, Error *err)
{
    memset(c, 0, sizeof *c);
    /* Only a regular file: a FIFO or /dev/zero would hang or flood us. */
    FILE *f = input_file_fopen(path, 0, err);
    if (!f) return -1;
    size_t cap = 0;
    char *line = xmalloc(CORPUS_MAX_LINE_BYTES + 1), *text;
    int status = 0, got;
    for (int number = 1; (got = corpus_next_line(f, path, (size_t)number, line, &text, err)) > 0; number++) {
        /* blank lines are allowed (e.g. at the end), spaces alone too: not a
         * sentence with too few columns but a line with none */
        if (!text[strspn(text, " ")]) continue;
        char *src = column(text, source_column), *tgt = column(text, target_column);
        if (!src || !tgt) {
            free(src);
            free(tgt);
            status = error_set(err, "%s:%d: expected at least %d tab-separated columns", path,
                               number, (source_column > target_column ? source_column : target_column) + 1);
            break;
        }
        if (c->count == cap) {
            cap = cap ? 2 * cap : 1024;
            c->source = xrealloc(c->source, cap * sizeof *c->source);
            c->target = xrealloc(c->target, cap * sizeof *c->target);
            c->line = xrealloc(c->line, cap * sizeof *c->line);
        }
        c->source[c->count] = src;
        c->target[c->count] = tgt;
        c->line[c->count++] = number;
    }
    if (got < 0) status = -1;
    free(line);
    fclose(f);
    if (status) corpus_free(c);
    return status;
}

void corpus_free(Corpus *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->count; i++) {
        free(c->source[i]);
        free(c->target[i]);
    }
    free(c->source);
    free(c->target);
    free(c->line);
    memset(c, 0, sizeof *c);
}
