/* translate_outputs.c — ending translate's outputs (see translate_outputs.h). */
#include "translate_outputs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

bool translate_outputs_stdout_failed(void)
{
    static bool reported;
    if (reported) return true;
    errno = 0;
    /* stdio errors are sticky: ferror covers every printf since the start. */
    if (fflush(stdout) == 0 && !ferror(stdout)) return false;
    fprintf(stderr, "translate: standard output: cannot write: %s\n", strerror(errno ? errno : EIO));
    reported = true;
    return true;
}

ExitStatus translate_outputs_finish_stdout(ExitStatus status)
{
    if (translate_outputs_stdout_failed()) return cli_worse(status, EXIT_WRITE);
    if (fclose(stdout) != 0) {
        fprintf(stderr, "translate: standard output: cannot write: %s\n", strerror(errno));
        return cli_worse(status, EXIT_WRITE);
    }
    return status;
}

ExitStatus translate_outputs_finish_file(OutputFile *out, bool refused, bool stopped, Error *err)
{
    /* "-" writes through standard output's descriptor: when that failed,
     * translate_outputs_stdout_failed has said so, and the same error
     * twice is noise.  (It is flushed first: --hyps - is not flushed line
     * by line, and its failure was said twice, "-: cannot write" and
     * "standard output".) */
    bool to_stdout = !refused && output_file_is_stdout(out);
    if (to_stdout) fflush(output_file_stream(out));
    if (to_stdout && ferror(output_file_stream(out)) && translate_outputs_stdout_failed()) {
        output_file_abort(out);
        return EXIT_WRITE;
    }
    if (stopped && !refused && !ferror(output_file_stream(out))) {
        output_file_abort(out);
        return EXIT_OK;
    }
    if (refused) output_file_abort(out);
    if (refused || output_file_commit(out, err)) {
        fprintf(stderr, "translate: %s\n", err->message);
        return EXIT_WRITE;
    }
    return EXIT_OK;
}

int translate_outputs_check_not_an_input(const char *option, const char *path, const char *const *inputs,
                                         size_t n, Error *err)
{
    if (!path || cli_written_directly(path)) return 0; /* a device or FIFO is written, never replaced */
    for (size_t i = 0; i < n; i++)
        if (inputs[i] && cli_same_file(path, inputs[i]))
            return error_set(err, "%s: %s would overwrite %s, an input of this run", path, option,
                             inputs[i]);
    return 0;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

int translate_outputs_check_stdout(bool reads_stdin, const char *const *inputs, size_t n, Error *err)
{
    struct stat out, in;
    /* A terminal, a pipe or a device is no file anybody reads back. */
    if (fstat(STDOUT_FILENO, &out) != 0 || !S_ISREG(out.st_mode)) return 0;
    if (reads_stdin && fstat(STDIN_FILENO, &in) == 0 && same_file(&in, &out))
        return error_set(err, "standard output is the file standard input reads: the translations would "
                              "be read back and translated again (send them to another file)");
    for (size_t i = 0; i < n; i++)
        if (inputs[i] && stat(inputs[i], &in) == 0 && same_file(&in, &out))
            return error_set(err, "standard output is %s, an input of this run (send it to another file)",
                             inputs[i]);
    return 0;
}
