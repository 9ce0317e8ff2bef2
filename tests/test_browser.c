/* test_browser.c — the page of translate --html in a real browser.
 *
 * Headless Chromium (Debian's `chromium`) opens the page from a file, runs
 * its script for a few seconds of virtual time and prints the resulting
 * DOM.  The viewer writes into that DOM what it actually drew (#status:
 * counts of heatmaps, cells, masked cells, lines...) and how many errors
 * it caught (#errors data-count), so the test can check both without any
 * browser automation library.  Each view is opened through the page's
 * #fragment (kind, layer, head, step), and the expected counts come from
 * the --attention JSON of the same run.  A screenshot goes to
 * build/viewer.png.  Without /usr/bin/chromium every test is skipped. */
#include "testutil.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHROMIUM "/usr/bin/chromium"
#define SCREENSHOT "build/viewer.png"

/* The page and its data, made once for all tests. */
static char page_url[PATH_MAX + 16];
static char page_path[PATH_MAX];
static cJSON *doc;

static bool chromium_available(void) { return access(CHROMIUM, X_OK) == 0; }

#define SKIP_WITHOUT_CHROMIUM()                                                                    \
    do {                                                                                           \
        if (!chromium_available())                                                                 \
            SKIP_TEST("browser", "chromium not installed (apt-get install chromium fonts-noto-cjk)");  \
    } while (0)

/* Two sentences, English and (for the tiny English model, unknown)
 * Chinese, through the tiny model: the page, and the JSON to check it by. */
static int make_page(void **state)
{
    (void)state;
    char json[512], html[512];
    snprintf(json, sizeof json, "%s/browser.json", temp_dir());
    snprintf(html, sizeof html, "%s/browser.html", temp_dir());
    const char *argv[] = {"./translate", "-c", "configs/tiny.yaml", "-q", "--attention", json,
                          "--html", html, "I love China.", "我想吃酸菜鱼", NULL};
    RunResult r = run_program(argv, NULL, 0);
    int status = r.status;
    run_result_free(&r);
    char *text = read_file(json, NULL);
    if (status != 0 || !text || !realpath(html, page_path)) {
        free(text);
        return -1;
    }
    snprintf(page_url, sizeof page_url, "file://%s", page_path);
    doc = cJSON_Parse(text);
    free(text);
    return doc ? 0 : -1;
}

static int free_page(void **state)
{
    (void)state;
    cJSON_Delete(doc);
    return 0;
}

/* Run headless Chromium on the page (with `fragment`, e.g. "#kind=cross")
 * and a fresh profile; `extra` is --dump-dom or --screenshot=...  The
 * flags keep it from contacting anything. */
static RunResult run_chromium(const char *fragment, const char *extra)
{
    char profile[512], url[PATH_MAX + 256];
    snprintf(profile, sizeof profile, "--user-data-dir=%s/chromium-profile-XXXXXX", temp_dir());
    if (!mkdtemp(profile + strlen("--user-data-dir="))) fail_msg("mkdtemp failed");
    snprintf(url, sizeof url, "%s%s", page_url, fragment);
    /* timeout(1): a hung browser fails the test instead of hanging it. */
    const char *argv[] = {"/usr/bin/timeout", "120", CHROMIUM, "--headless", "--no-sandbox",
                          "--disable-gpu", "--disable-quic", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update",
                          "--disable-sync", profile, "--enable-logging=stderr", "--v=0",
                          "--virtual-time-budget=5000", "--window-size=1400,1000", extra, url, NULL};
    RunResult r = run_program(argv, NULL, 0);
    const char *rm[] = {"/bin/rm", "-rf", profile + strlen("--user-data-dir="), NULL};
    RunResult cleanup = run_program(rm, NULL, 0);
    run_result_free(&cleanup);
    return r;
}

/* The value of attribute `name` in the start tag that contains `marker`
 * (e.g. id="status"), as a number; fails the test when absent. */
static long attribute(const char *dom, const char *marker, const char *name)
{
    const char *tag = strstr(dom, marker);
    if (!tag) fail_msg("no element with %s in the page", marker);
    const char *end = strchr(tag, '>');
    char key[64];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *at = strstr(tag, key);
    if (!at || at > end) fail_msg("the element with %s has no %s", marker, name);
    return strtol(at + strlen(key), NULL, 10);
}

static long status_of(const char *dom, const char *name) { return attribute(dom, "id=\"status\"", name); }

static RunResult open_view(const char *fragment)
{
    RunResult r = run_chromium(fragment, "--dump-dom");
    if (r.status != 0) fail_msg("chromium exited with %d:\n%s", r.status, r.err);
    if (strstr(r.err, "Uncaught")) fail_msg("an uncaught error in the console:\n%s", r.err);
    assert_int_equal(attribute(r.out, "id=\"errors\"", "data-count"), 0);
    assert_int_equal(status_of(r.out, "data-ready"), 1);
    assert_int_equal(status_of(r.out, "data-sentences"), 2);
    return r;
}

/* ---- what one view should contain, from the JSON ------------------------ */

typedef struct {
    const char *fragment;
    int sentence;       /* 0-based */
    const char *kind;   /* "encoder", "decoder" or "cross" */
    int step;           /* 0: the last */
} View;

typedef struct {
    long heatmaps, cells, masked, future, lines;
} Counts;

static const cJSON *get(const cJSON *obj, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!item) fail_msg("JSON has no '%s'", key);
    return item;
}

/* One large heatmap plus a thumbnail per layer and head and per layer's
 * mean: maps = 1 + L (H + 1), each rows x cols cells.  Masked cells are
 * the decoder's key > query; future cells are the rows at or after the
 * step that are not masked; the line view draws every other cell once. */
static Counts expected(const View *v)
{
    const cJSON *s = cJSON_GetArrayItem(get(doc, "sentences"), v->sentence);
    bool encoder = strcmp(v->kind, "encoder") == 0, decoder = strcmp(v->kind, "decoder") == 0;
    long S = cJSON_GetArraySize(get(get(s, "source"), "tokens"));
    long T = cJSON_GetArraySize(get(get(s, "output"), "tokens"));
    long rows = encoder ? S : T, cols = decoder ? T : S;
    long L = cJSON_GetArraySize(get(s, encoder ? "encoder_attentions" : decoder ? "decoder_attentions"
                                                                              : "cross_attentions"));
    long H = get(get(doc, "model"), "heads")->valueint;
    long step = encoder || v->step == 0 ? rows : v->step;
    long maps = 1 + L * (H + 1), masked = 0, future = 0;
    for (long i = 0; i < rows; i++) {
        long visible = decoder ? i + 1 : cols;
        masked += cols - visible;
        if (i >= step) future += visible;
    }
    return (Counts){maps, maps * rows * cols, maps * masked, maps * future, rows * cols - masked - future};
}

static void check_view(const View *v)
{
    RunResult r = open_view(v->fragment);
    Counts want = expected(v);
    char kind[32];
    snprintf(kind, sizeof kind, "data-kind=\"%s\"", v->kind);
    if (!strstr(r.out, kind)) fail_msg("%s: expected %s", v->fragment, kind);
    assert_int_equal(status_of(r.out, "data-heatmaps"), want.heatmaps);
    assert_int_equal(status_of(r.out, "data-cells"), want.cells);
    assert_int_equal(status_of(r.out, "data-masked"), want.masked);
    assert_int_equal(status_of(r.out, "data-future"), want.future);
    assert_int_equal(status_of(r.out, "data-lines"), want.lines);
    run_result_free(&r);
}

/* ---- the tests ----------------------------------------------------------- */

static void test_default_view_is_cross_attention(void **state)
{
    (void)state;
    SKIP_WITHOUT_CHROMIUM();
    static const View v = {"", 0, "cross", 0};
    check_view(&v);
}

static void test_every_kind_layer_head_and_step(void **state)
{
    (void)state;
    SKIP_WITHOUT_CHROMIUM();
    static const View views[] = {
        {"#kind=decoder&layer=1&head=1", 0, "decoder", 0},
        {"#kind=encoder&layer=2&head=mean", 0, "encoder", 0},
        {"#sentence=2&kind=cross&layer=1&head=2", 1, "cross", 0},
        {"#kind=decoder&head=mean&step=2", 0, "decoder", 2},
        {"#sentence=2&kind=cross&step=1", 1, "cross", 1},
    };
    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) check_view(&views[i]);
}

/* #selftest makes the page run its SVG, CSV and PNG exports. */
static void test_exports_work(void **state)
{
    (void)state;
    SKIP_WITHOUT_CHROMIUM();
    RunResult r = open_view("#kind=encoder&selftest");
    const cJSON *s = cJSON_GetArrayItem(get(doc, "sentences"), 0);
    long S = cJSON_GetArraySize(get(get(s, "source"), "tokens"));
    assert_true(status_of(r.out, "data-export-svg") > 1000);
    assert_int_equal(status_of(r.out, "data-export-csv-lines"), S + 1);
    assert_true(status_of(r.out, "data-export-png") > 1000);
    run_result_free(&r);
}

static void test_screenshot(void **state)
{
    (void)state;
    SKIP_WITHOUT_CHROMIUM();
    unlink(SCREENSHOT);
    char arg[PATH_MAX + 32], cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) fail_msg("getcwd failed");
    snprintf(arg, sizeof arg, "--screenshot=%s/%s", cwd, SCREENSHOT);
    RunResult r = run_chromium("", arg);
    assert_int_equal(r.status, 0);
    size_t len = 0;
    char *png = read_file(SCREENSHOT, &len);
    assert_non_null(png);
    assert_true(len > 10000);
    assert_memory_equal(png, "\x89PNG", 4);
    print_message("screenshot: %s (%zu bytes)\n", SCREENSHOT, len);
    free(png);
    run_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_view_is_cross_attention),
        cmocka_unit_test(test_every_kind_layer_head_and_step),
        cmocka_unit_test(test_exports_work),
        cmocka_unit_test(test_screenshot),
    };
    return cmocka_run_group_tests(tests, make_page, free_page);
}
