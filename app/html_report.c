/* html_report.c — writing the viewer page (see html_report.h).
 *
 * The template app/viewer/viewer.html holds three markers:
 *   {{css}}   replaced by viewer.css (inside its <style> element)
 *   {{js}}    replaced by viewer.js (inside its <script> element)
 *   {{data}}  replaced by one <script type="application/json"> per document
 * Inside <script> and <style> the HTML parser looks for nothing but the
 * closing tag, so the text put there must never contain "</script" or
 * "</style", nor "<!--", which changes how a script's text is read.  The
 * viewer's own files are checked (a violation is a bug in them).  The JSON,
 * which holds whatever the user typed, is written with every '<' as the
 * JSON escape "\u003c".  That is stricter than escaping only "</" as "<\/":
 * it keeps "<!--" out too.  '<' can only occur inside JSON strings, where
 * \u003c means the same character, so the embedded text still parses to
 * the very document --attention writes. */
#include "html_report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/output_file.h"
#include "../common/util.h"

/* build/viewer_assets.c, generated from app/viewer/ by tools/embed.sh: each
 * file's bytes plus a terminating NUL, and its length. */
extern const unsigned char viewer_html[], viewer_css[], viewer_js[];
extern const size_t viewer_html_len, viewer_css_len, viewer_js_len;

/* JSON text with every '<' written as \u003c (see the top of the file). */
static void put_json(FILE *f, const char *json)
{
    for (const char *p = json; *p;) {
        size_t n = strcspn(p, "<");
        fwrite(p, 1, n, f);
        p += n;
        if (*p == '<') {
            fputs("\\u003c", f);
            p++;
        }
    }
}

static void put_documents(FILE *f, const AttentionJson *const *docs, size_t n_docs)
{
    for (size_t i = 0; i < n_docs; i++) {
        fputs("<script type=\"application/json\" class=\"attention-data\">", f);
        char *json = attention_json_print(docs[i]);
        put_json(f, json);
        free(json);
        fputs("</script>\n", f);
    }
}

/* The template with its markers replaced. */
static void put_page(FILE *f, const AttentionJson *const *docs, size_t n_docs)
{
    const char *css = (const char *)viewer_css, *js = (const char *)viewer_js;
    ASSERT(strstr(css, "</style") == NULL && strstr(js, "</script") == NULL &&
           strstr(js, "<!--") == NULL);
    const char *p = (const char *)viewer_html, *mark;
    while ((mark = strstr(p, "{{")) != NULL) {
        fwrite(p, 1, (size_t)(mark - p), f);
        if (strncmp(mark, "{{css}}", 7) == 0) {
            fwrite(css, 1, viewer_css_len, f);
        } else if (strncmp(mark, "{{js}}", 6) == 0) {
            fwrite(js, 1, viewer_js_len, f);
        } else {
            ASSERT(strncmp(mark, "{{data}}", 8) == 0); /* no other marker exists */
            put_documents(f, docs, n_docs);
        }
        p = strstr(mark, "}}") + 2;
    }
    fputs(p, f);
}

typedef struct {
    const AttentionJson *const *docs;
    size_t count;
} Page;

static void put_whole_page(FILE *f, const void *context)
{
    const Page *page = context;
    put_page(f, page->docs, page->count);
}

int html_report_write(const AttentionJson *const *docs, size_t n_docs, const char *path, Error *err)
{
    Page page = {docs, n_docs};
    return output_file_write(path, OUTPUT_FILE_DASH, put_whole_page, &page, err);
}
