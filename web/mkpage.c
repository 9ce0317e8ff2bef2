/* mkpage.c — build-time tool of make web: writes the live page,
 * build/web/translate.html, one file that needs nothing else.
 *
 *   build/web/mkpage OUT.html WORKER.js PAGE.js PAGE.css CONFIG...
 *
 * WORKER.js is the worker's whole script (build/web/engine.js followed by
 * web/worker.js); PAGE.js and PAGE.css are web/page.js and web/page.css.
 * Each CONFIG is read with the native program's own config_load, which
 * resolves the files it names; the page embeds the YAML, the weights,
 * both vocabularies and model.simplify's table (if any) of each, in
 * base64, at the paths the worker writes
 * them to in the engine's file system ("/" + the path from here), so that
 * translator_open runs on them unchanged.
 *
 * The page is app/viewer/viewer.html (compiled in, build/viewer_assets.c)
 * with its markers replaced as app/html_report.c does: viewer.js followed
 * by page.js in its script; at its data marker, before that script, the
 * worker and the models' index; the models' files after the script, just
 * before </body>, so that the page and its engine start while the
 * browser still parses ~48 MB of base64 (docs/web.md); and a
 * Content-Security-Policy that adds to the viewer's only what the engine
 * needs: 'wasm-unsafe-eval' (compiling the embedded WebAssembly) and
 * worker-src blob: (the worker is made from the page's own bytes).  Still nothing may be fetched.
 *
 * Deliberately not here: compression (the weights are float16 already;
 * gzip gains ~8% on them, docs/web.md) and any JavaScript of the engine. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../app/config.h"
#include "../common/output_file.h"
#include "../common/util.h"

extern const unsigned char viewer_html[], viewer_css[], viewer_js[];
extern const size_t viewer_html_len, viewer_css_len, viewer_js_len;

#define VIEWER_CSP "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"
#define PAGE_CSP "default-src 'none'; script-src 'unsafe-inline' 'wasm-unsafe-eval'; " \
                 "worker-src blob:; style-src 'unsafe-inline'; img-src data:"

/* The page being written (common/output_file.h: a temporary file beside
 * it until the end), so that every failure can remove it. */
static OutputFile *page;

/* Print "mkpage: ..." and exit 1, the page not written. */
static void fail(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("mkpage: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    output_file_abort(page);
    exit(1);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) fail("cannot read %s", path);
    size_t cap = 1 << 16, n = 0;
    char *buf = xmalloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) buf = xrealloc(buf, cap *= 2);
    }
    if (ferror(f)) fail("cannot read %s", path);
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

static void put_base64(FILE *out, const unsigned char *p, size_t n)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        char q[4] = {digits[v >> 18 & 63], digits[v >> 12 & 63], i + 1 < n ? digits[v >> 6 & 63] : '=',
                     i + 2 < n ? digits[v & 63] : '='};
        fwrite(q, 1, 4, out);
        if ((i / 3 + 1) % 19 == 0) fputc('\n', out); /* 76 a line */
    }
}

/* A text that goes inside <script> or <style> must not close it early. */
static void check_inline(const char *what, const char *text)
{
    if (strstr(text, "</script") || strstr(text, "</style") || strstr(text, "<!--"))
        fail("%s holds </script, </style or <!--", what);
}

/* The size of a file the index names (put_file embeds it later). */
static size_t file_size(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) fail("cannot read %s", path);
    return (size_t)st.st_size;
}

/* One embedded file, element id web-file-<id> (file_id). */
static void put_file(FILE *out, const char *path, int id)
{
    size_t n;
    char *bytes = slurp(path, &n);
    fprintf(out, "<script type=\"text/plain\" class=\"web-file\" id=\"web-file-%d\">\n", id);
    put_base64(out, (const unsigned char *)bytes, n);
    fputs("\n</script>\n", out);
    free(bytes);
}

/* A model of the page: its config, read once, and the files it embeds
 * (the config, the weights, the two vocabularies, and model.simplify's
 * table when it names one: NULL otherwise). */
enum { MODEL_FILES = 5 };
typedef struct {
    Config cfg;
    const char *files[MODEL_FILES];
    int n_files;
} PageModel;

/* The element id of file f of model c: they run on across models. */
static int file_id(int c, int f) { return MODEL_FILES * c + f; }

/* What goes between the quotes of a JSON string in the index unescaped. */
static void check_plain(const char *what, const char *text)
{
    for (const char *s = text; *s; s++)
        if (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20)
            fail("%s with a quote, a backslash or a control character: %s", what, text);
}

static PageModel *load_models(char **configs, int n_configs)
{
    PageModel *models = xcalloc((size_t)n_configs, sizeof *models);
    for (int c = 0; c < n_configs; c++) {
        Error err = {{0}};
        if (config_load(configs[c], &models[c].cfg, &err)) fail("%s", err.message);
        const Config *cfg = &models[c].cfg;
        models[c].files[0] = configs[c];
        models[c].files[1] = cfg->weights_path;
        models[c].files[2] = cfg->source_vocab_path;
        models[c].files[3] = cfg->target_vocab_path;
        models[c].n_files = 4;
        if (cfg->simplify_path) models[c].files[models[c].n_files++] = cfg->simplify_path;
        for (int f = 0; f < models[c].n_files; f++) check_plain("a path", models[c].files[f]);
        check_plain("a name", cfg->name);
    }
    return models;
}

/* The worker's script and the models' index, at the viewer's {{data}}
 * marker, before the page's script: the script starts the engine while
 * the browser is still parsing the models' files. */
static void put_data(FILE *out, const char *worker_path, const PageModel *models, int n_models)
{
    size_t n;
    char *worker = slurp(worker_path, &n);
    fputs("<script type=\"text/plain\" id=\"web-worker\">\n", out);
    put_base64(out, (const unsigned char *)worker, n);
    fputs("\n</script>\n", out);
    free(worker);
    char *index_text = NULL;
    size_t index_len = 0;
    FILE *index = open_memstream(&index_text, &index_len);
    if (!index) fail("out of memory");
    fputs("[", index);
    for (int c = 0; c < n_models; c++) {
        const Config *cfg = &models[c].cfg;
        fprintf(index, "%s{\"name\": \"%s\", \"source_language\": \"%s\", \"target_language\": \"%s\", "
                       "\"config\": \"/%s\", \"files\": [",
                c ? ", " : "", cfg->name, cfg->source_lang, cfg->target_lang, models[c].files[0]);
        for (int f = 0; f < models[c].n_files; f++)
            fprintf(index, "%s{\"path\": \"/%s\", \"id\": \"web-file-%d\", \"bytes\": %zu}", f ? ", " : "",
                    models[c].files[f], file_id(c, f), file_size(models[c].files[f]));
        fputs("]}", index);
    }
    fputs("]", index);
    fclose(index);
    check_inline("the model index", index_text);
    fprintf(out, "<script type=\"application/json\" id=\"web-models\">%s</script>\n", index_text);
    free(index_text);
    fputs("<div id=\"live\" hidden></div>\n", out);
}

/* The models' files, after the page's script (just before </body>), in
 * the order of the index; after each model's files, a line that tells
 * page.js that model is parsed.  The first model's text is then usable
 * after about half of the page's bytes: the browser reads ~24 MB of
 * base64 per model. */
static void put_models(FILE *out, const PageModel *models, int n_models)
{
    for (int c = 0; c < n_models; c++) {
        for (int f = 0; f < models[c].n_files; f++) put_file(out, models[c].files[f], file_id(c, f));
        fprintf(out, "<script>document.dispatchEvent(new CustomEvent('web-model-parsed', "
                     "{ detail: %d }));</script>\n", c);
    }
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: mkpage OUT.html WORKER.js PAGE.js PAGE.css CONFIG...\n");
        return 2;
    }
    size_t page_js_len, page_css_len;
    char *page_js = slurp(argv[3], &page_js_len), *page_css = slurp(argv[4], &page_css_len);
    check_inline("viewer.js", (const char *)viewer_js);
    check_inline("viewer.css", (const char *)viewer_css);
    check_inline(argv[3], page_js);
    check_inline(argv[4], page_css);
    const char *html = (const char *)viewer_html;
    const char *csp = strstr(html, VIEWER_CSP);
    if (!csp) fail("viewer.html no longer has the policy this tool extends");
    /* the models' files go just before </body>, after the page's script */
    const char *body_end = strstr(html, "</body>");
    if (!body_end || strstr(body_end, "{{")) fail("viewer.html has no </body> after its markers");
    int n_models = argc - 5;
    PageModel *models = load_models(argv + 5, n_models);
    Error err = {{0}};
    page = output_file_open(argv[1], 0, &err);
    if (!page) fail("%s", err.message);
    FILE *out = output_file_stream(page);
    const char *p = html, *mark;
    while ((mark = strstr(p, "{{")) != NULL || p <= csp) {
        if (p <= csp && (!mark || csp < mark)) { /* the policy comes before any marker */
            fwrite(p, 1, (size_t)(csp - p), out);
            fputs(PAGE_CSP, out);
            p = csp + strlen(VIEWER_CSP);
            continue;
        }
        fwrite(p, 1, (size_t)(mark - p), out);
        if (strncmp(mark, "{{css}}", 7) == 0) {
            fwrite(viewer_css, 1, viewer_css_len, out);
            fwrite(page_css, 1, page_css_len, out);
        } else if (strncmp(mark, "{{js}}", 6) == 0) {
            fwrite(viewer_js, 1, viewer_js_len, out);
            fputs("\n", out);
            fwrite(page_js, 1, page_js_len, out);
        } else {
            ASSERT(strncmp(mark, "{{data}}", 8) == 0);
            put_data(out, argv[2], models, n_models);
        }
        p = strstr(mark, "}}") + 2;
    }
    fwrite(p, 1, (size_t)(body_end - p), out);
    put_models(out, models, n_models);
    fputs(body_end, out);
    OutputFile *done = page;
    page = NULL; /* committed or removed by output_file_commit */
    if (output_file_commit(done, &err)) fail("%s", err.message);
    free(page_js);
    free(page_css);
    for (int c = 0; c < n_models; c++) config_free(&models[c].cfg);
    free(models);
    return 0;
}
