/* html_report.h — the attention maps as one self-contained HTML page.
 *
 * The page is the viewer in app/viewer/ (viewer.html, viewer.css,
 * viewer.js), compiled into the program by tools/embed.sh, with its CSS and
 * JS inlined and each attention document (attention_json.h, the same JSON
 * as --attention) embedded in a <script type="application/json"> element.
 * The file needs nothing else to work: no network, no other file. */
#ifndef TRANSLATE_HTML_REPORT_H
#define TRANSLATE_HTML_REPORT_H

#include <stddef.h>

#include "../common/error.h"
#include "attention_json.h"

/* Write the viewer for docs[0..n_docs-1] (e.g. one per translation
 * direction; their sentences share one picker) to `path` ("-": stdout)
 * through common/output_file.h.  Returns 0, or -1 with `err` naming the path. */
int html_report_write(const AttentionJson *const *docs, size_t n_docs, const char *path, Error *err);

#endif
