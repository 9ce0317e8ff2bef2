/* translate_outputs.h — how translate ends its outputs: standard output
 * checked and its failure said once, an output file (-o, --logits,
 * --hyps) committed or given up, and never one written over a file the
 * run reads.  (common/output_file.h writes a file through a temporary;
 * this is translate's policy on top of it.) */
#ifndef TRANSLATE_TRANSLATE_OUTPUTS_H
#define TRANSLATE_TRANSLATE_OUTPUTS_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/error.h"
#include "../common/output_file.h"
#include "exit_status.h"

/* Has writing to stdout failed (a full disk, a closed descriptor, a reader
 * that went away)?  Flushes, and says so once on stderr.  Callers then
 * stop translating: nobody would see the rest. */
bool translate_outputs_stdout_failed(void);
/* The exit status once stdout is closed: `status`, or EXIT_WRITE when the
 * last of the output could not be written (said). */
ExitStatus translate_outputs_finish_stdout(ExitStatus status);
/* The end of a streamed output file: committed; given up when `refused`
 * (a failed check, its message in err); given up too when translating
 * stopped early (`stopped`), so that the old file stays rather than a
 * part of this run's replacing it, but a file whose own write failed is
 * still committed, for its commit to fail and say why.  Prints the error;
 * EXIT_OK or EXIT_WRITE. */
ExitStatus translate_outputs_finish_file(OutputFile *out, bool refused, bool stopped, Error *err);
/* An output file must not be written over a file this run reads: the
 * output is committed only after the run, and `--logits CONFIG.yaml`
 * would otherwise replace the config.  `option` names the output in the
 * message; inputs[0..n-1] may hold NULLs.  0, or -1 with err naming both. */
int translate_outputs_check_not_an_input(const char *option, const char *path, const char *const *inputs,
                                         size_t n, Error *err);
/* Nor may standard output be such a file (`translate < notes.txt >>
 * notes.txt`, `translate "hi" >> CONFIG.yaml`): appended to the file the
 * lines come from, the translations were read back and translated again,
 * without end, until the disk was full.  `reads_stdin`: the lines come
 * from standard input, whose file counts as an input.  0, or -1 with err
 * naming the input. */
int translate_outputs_check_stdout(bool reads_stdin, const char *const *inputs, size_t n, Error *err);

#endif
