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
 * build/viewer.png.  Without /usr/bin/chromium every test is skipped.
 *
 * The exports test cannot rely on that budget: the page makes its PNG
 * asynchronously (canvas.toBlob), and virtual time does not wait for it
 * (it failed 1 run in 3 with "no data-export-png").  It drives Chromium
 * through the DevTools protocol instead and awaits the page's own signal
 * that the exports are done (window.selftestDone, see viewer.js).
 *
 * The live page of make web (build/web/translate.html, docs/web.md) is
 * tested the same way: opened from file:// with every host unresolvable
 * and every connection sent to a dead proxy, it must translate what the
 * #fragment gives it (through its Web Worker and the WebAssembly engine)
 * as ./translate does, draw the maps of that translation, and count no
 * error.  Its screenshot goes to build/tests/web.png.  Skipped ([web])
 * when the page was not built (make test builds it when emcc is there). */
#include "testutil.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHROMIUM "/usr/bin/chromium"
#define SCREENSHOT "build/viewer.png"
#define WEB_PAGE "build/web/translate.html"
#define WEB_SCREENSHOT "build/tests/web.png"

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

/* timeout(1) around every Chromium run: a hung browser fails the test
 * instead of hanging it.  The flags keep it from contacting anything. */
#define CHROMIUM_ARGS(profile)                                                                     \
    "/usr/bin/timeout", "120", CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",            \
        "--disable-quic", "--no-first-run", "--disable-background-networking",                     \
        "--disable-component-update", "--disable-sync", "--host-resolver-rules=MAP * ~NOTFOUND",    \
        "--proxy-server=127.0.0.1:9", profile, "--enable-logging=stderr", "--v=0",                 \
        "--window-size=1400,1000"

/* A fresh profile folder: "--user-data-dir=<temp>/chromium-profile-XXXXXX". */
static void new_profile(char *arg, size_t size)
{
    snprintf(arg, size, "--user-data-dir=%s/chromium-profile-XXXXXX", temp_dir());
    if (!mkdtemp(arg + strlen("--user-data-dir="))) fail_msg("mkdtemp failed");
}

static void remove_profile(const char *arg)
{
    const char *rm[] = {"/bin/rm", "-rf", arg + strlen("--user-data-dir="), NULL};
    RunResult cleanup = run_program(rm, NULL, 0);
    run_result_free(&cleanup);
}

/* Run headless Chromium on the page (with `fragment`, e.g. "#kind=cross")
 * and a fresh profile; `extra` is --dump-dom or --screenshot=... */
static RunResult run_chromium_on(const char *page, const char *fragment, const char *extra)
{
    char profile[512], url[PATH_MAX + 256];
    new_profile(profile, sizeof profile);
    snprintf(url, sizeof url, "%s%s", page, fragment);
    const char *argv[] = {CHROMIUM_ARGS(profile), "--virtual-time-budget=5000", extra, url, NULL};
    RunResult r = run_program(argv, NULL, 0);
    remove_profile(profile);
    return r;
}

static RunResult run_chromium(const char *fragment, const char *extra)
{
    return run_chromium_on(page_url, fragment, extra);
}

/* ---- waiting for the page: the DevTools protocol over a pipe ------------ */

/* Chromium with --remote-debugging-pipe reads protocol messages (JSON, each
 * ended by a NUL byte) on its fd 3 and writes its answers and events on fd 4. */
typedef struct {
    pid_t pid;
    int to, from;    /* our ends of the two pipes */
    char *buf;       /* bytes read and not yet handed out */
    size_t len, cap;
    int last_id;
    bool loaded;     /* a Page.loadEventFired came */
    double deadline; /* CLOCK_MONOTONIC seconds */
} Browser;

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Start Chromium on about:blank, its stdout and stderr into `log`. */
static void browser_start(Browser *b, const char *profile, const char *log)
{
    int to[2], from[2];
    if (pipe(to) || pipe(from)) fail_msg("pipe: %s", strerror(errno));
    signal(SIGPIPE, SIG_IGN);
    pid_t pid = fork();
    if (pid < 0) fail_msg("fork: %s", strerror(errno));
    if (pid == 0) {
        /* above 4 first, so that no dup2 below overwrites a pipe end */
        int in = fcntl(to[0], F_DUPFD, 10), out = fcntl(from[1], F_DUPFD, 10);
        int null = open("/dev/null", O_RDONLY), logfd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0 || null < 0 || logfd < 0) _exit(127);
        dup2(null, 0); dup2(logfd, 1); dup2(logfd, 2); dup2(in, 3); dup2(out, 4);
        for (int fd = 5; fd < 64; fd++) close(fd);
        const char *argv[] = {CHROMIUM_ARGS(profile), "--remote-debugging-pipe", "about:blank", NULL};
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    *b = (Browser){.pid = pid, .to = to[1], .from = from[0], .deadline = now_seconds() + 90};
}

/* Send one command (params: owned, may be NULL) and return its id. */
static int browser_send(Browser *b, const char *session, const char *method, cJSON *params)
{
    cJSON *msg = cJSON_CreateObject();
    cJSON_AddNumberToObject(msg, "id", ++b->last_id);
    if (session) cJSON_AddStringToObject(msg, "sessionId", session);
    cJSON_AddStringToObject(msg, "method", method);
    cJSON_AddItemToObject(msg, "params", params ? params : cJSON_CreateObject());
    char *text = cJSON_PrintUnformatted(msg);
    cJSON_Delete(msg);
    size_t n = strlen(text) + 1, done = 0; /* with its NUL */
    while (done < n) {
        ssize_t w = write(b->to, text + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) fail_msg("Chromium stopped reading its commands (%s): %s", method, strerror(errno));
        done += (size_t)w;
    }
    free(text);
    return b->last_id;
}

/* The next message from Chromium; fails the test at the deadline or EOF. */
static cJSON *browser_next(Browser *b)
{
    for (;;) {
        char *end = b->buf ? memchr(b->buf, '\0', b->len) : NULL;
        if (end) {
            cJSON *msg = cJSON_Parse(b->buf);
            size_t used = (size_t)(end - b->buf) + 1;
            memmove(b->buf, end + 1, b->len - used);
            b->len -= used;
            if (!msg) fail_msg("Chromium sent a message that is not JSON");
            const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
            if (cJSON_IsString(method) && strcmp(method->valuestring, "Page.loadEventFired") == 0)
                b->loaded = true;
            return msg;
        }
        int wait_ms = (int)((b->deadline - now_seconds()) * 1000);
        if (wait_ms <= 0) fail_msg("Chromium did not answer within 90 s");
        struct pollfd p = {b->from, POLLIN, 0};
        int ready = poll(&p, 1, wait_ms);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) continue;
        if (b->len + 65536 > b->cap) {
            b->cap = (b->len + 65536) * 2;
            b->buf = realloc(b->buf, b->cap);
            if (!b->buf) abort();
        }
        ssize_t n = read(b->from, b->buf + b->len, 65536);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail_msg("Chromium closed its protocol pipe");
        b->len += (size_t)n;
    }
}

/* Send a command and return its answer's "result" (inside *msg, which the
 * caller deletes); a protocol error fails the test. */
static const cJSON *browser_call(Browser *b, const char *session, const char *method, cJSON *params,
                                 cJSON **msg)
{
    int id = browser_send(b, session, method, params);
    for (;;) {
        *msg = browser_next(b);
        const cJSON *got = cJSON_GetObjectItemCaseSensitive(*msg, "id");
        if (cJSON_IsNumber(got) && got->valueint == id) break;
        cJSON_Delete(*msg);
    }
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(*msg, "error");
    if (error) {
        char *text = cJSON_PrintUnformatted(error);
        fail_msg("%s failed: %s", method, text);
    }
    return cJSON_GetObjectItemCaseSensitive(*msg, "result");
}

static const char *string_at(const cJSON *obj, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsString(item)) fail_msg("Chromium's answer has no string '%s'", key);
    return item->valuestring;
}

/* The bytes of base64 text (a screenshot from the protocol). */
static unsigned char *from_base64(const char *text, size_t *len)
{
    unsigned char *out = malloc(strlen(text) / 4 * 3 + 3);
    if (!out) abort();
    unsigned v = 0;
    int bits = 0;
    size_t n = 0;
    for (const char *p = text; *p && *p != '='; p++) {
        const char *digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const char *d = strchr(digits, *p);
        if (!d) continue;
        v = v << 6 | (unsigned)(d - digits);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (unsigned char)(v >> bits & 0xFF);
        }
    }
    *len = n;
    return out;
}

/* One thing done to a page once it has loaded: a DevTools command and its
 * params as JSON text (typing through an input method is
 * Input.imeSetComposition, which no script of the page can fake). */
typedef struct {
    const char *method, *params;
} Step;

/* Open `url` (a file:// address with its #fragment) in a fresh tab, wait
 * for its load event, do `steps` (ended by {NULL}; NULL for none), then
 * wait for the promise `wait_for` (a JavaScript expression; undefined does
 * not wait), and return the DOM then as r.out, Chromium's log as r.err;
 * with `screenshot`, also save the page as a PNG there. */
static RunResult open_url_and_drive(const char *url, const Step *steps, const char *wait_for,
                                    const char *screenshot);

static RunResult open_url_and_wait(const char *url, const char *wait_for, const char *screenshot)
{
    return open_url_and_drive(url, NULL, wait_for, screenshot);
}

static RunResult open_and_wait(const char *fragment, const char *wait_for)
{
    char url[PATH_MAX + 256];
    snprintf(url, sizeof url, "%s%s", page_url, fragment);
    return open_url_and_wait(url, wait_for, NULL);
}

static RunResult open_url_and_drive(const char *url, const Step *steps, const char *wait_for,
                                    const char *screenshot)
{
    char profile[512], log[600];
    new_profile(profile, sizeof profile);
    snprintf(log, sizeof log, "%s.log", profile + strlen("--user-data-dir="));
    Browser b;
    browser_start(&b, profile, log);
    cJSON *msg, *params = cJSON_CreateObject();
    cJSON_AddStringToObject(params, "url", "about:blank");
    char *target = strdup(string_at(browser_call(&b, NULL, "Target.createTarget", params, &msg), "targetId"));
    cJSON_Delete(msg);
    params = cJSON_CreateObject();
    cJSON_AddStringToObject(params, "targetId", target);
    cJSON_AddBoolToObject(params, "flatten", true);
    char *session = strdup(string_at(browser_call(&b, NULL, "Target.attachToTarget", params, &msg), "sessionId"));
    cJSON_Delete(msg);
    browser_call(&b, session, "Page.enable", NULL, &msg);
    cJSON_Delete(msg);
    b.loaded = false;
    params = cJSON_CreateObject();
    cJSON_AddStringToObject(params, "url", url);
    browser_call(&b, session, "Page.navigate", params, &msg);
    cJSON_Delete(msg);
    while (!b.loaded) cJSON_Delete(browser_next(&b));
    for (const Step *step = steps; step && step->method; step++) {
        params = cJSON_Parse(step->params);
        if (!params) fail_msg("%s: its params are not JSON: %s", step->method, step->params);
        const cJSON *result = browser_call(&b, session, step->method, params, &msg);
        if (cJSON_GetObjectItemCaseSensitive(result, "exceptionDetails"))
            fail_msg("%s threw: %s", step->method, cJSON_PrintUnformatted(result));
        cJSON_Delete(msg);
    }
    size_t size = strlen(wait_for) + 128;
    char *expression = malloc(size);
    snprintf(expression, size, "Promise.resolve(%s).then(() => document.documentElement.outerHTML)", wait_for);
    params = cJSON_CreateObject();
    cJSON_AddStringToObject(params, "expression", expression);
    free(expression);
    cJSON_AddBoolToObject(params, "awaitPromise", true);
    cJSON_AddBoolToObject(params, "returnByValue", true);
    const cJSON *result = browser_call(&b, session, "Runtime.evaluate", params, &msg);
    if (cJSON_GetObjectItemCaseSensitive(result, "exceptionDetails"))
        fail_msg("the page's script threw: %s", cJSON_PrintUnformatted(result));
    RunResult r = {0};
    r.out = strdup(string_at(cJSON_GetObjectItemCaseSensitive(result, "result"), "value"));
    r.out_len = strlen(r.out);
    cJSON_Delete(msg);
    if (screenshot) {
        const cJSON *shot = browser_call(&b, session, "Page.captureScreenshot", NULL, &msg);
        size_t len;
        unsigned char *png = from_base64(string_at(shot, "data"), &len);
        FILE *f = fopen(screenshot, "wb");
        if (!f || fwrite(png, 1, len, f) != len || fclose(f) != 0) fail_msg("cannot write %s", screenshot);
        free(png);
        cJSON_Delete(msg);
    }
    browser_send(&b, NULL, "Browser.close", NULL);
    close(b.to);
    close(b.from);
    free(b.buf);
    free(target);
    free(session);
    int status;
    waitpid(b.pid, &status, 0);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.err = read_file(log, &r.err_len);
    if (!r.err) r.err = strdup("");
    unlink(log);
    remove_profile(profile);
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

/* What every view must show: no error, ready, both sentences. */
static void check_page(const RunResult *r)
{
    if (r->status != 0) fail_msg("chromium exited with %d:\n%s", r->status, r->err);
    if (strstr(r->err, "Uncaught")) fail_msg("an uncaught error in the console:\n%s", r->err);
    assert_int_equal(attribute(r->out, "id=\"errors\"", "data-count"), 0);
    assert_int_equal(status_of(r->out, "data-ready"), 1);
    assert_int_equal(status_of(r->out, "data-sentences"), 2);
}

static RunResult open_view(const char *fragment)
{
    RunResult r = run_chromium(fragment, "--dump-dom");
    check_page(&r);
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
static Counts expected_in(const cJSON *doc, const View *v)
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

static Counts expected(const View *v) { return expected_in(doc, v); }

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
        {"#kind=__proto__", 0, "cross", 0},      /* names from Object's prototype are no kind: */
        {"#kind=constructor", 0, "cross", 0},    /* the default, not a crash */
    };
    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) check_view(&views[i]);
}

/* A page of translate's own, in temp_dir()/DIR: `./translate -q ARGS...
 * --attention DIR/a.json --html DIR/a.html TEXT TEXT` (two sentences, as
 * check_page wants).  Its file:// address goes to url; returns the JSON
 * (cJSON_Delete it). */
static cJSON *own_page(const char *dir_name, const char *const *args, const char *const texts[2], char *url,
                       size_t size)
{
    char dir[600], json[700], html[700], real[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/%s", temp_dir(), dir_name);
    mkdir(dir, 0755);
    snprintf(json, sizeof json, "%s/a.json", dir);
    snprintf(html, sizeof html, "%s/a.html", dir);
    const char *argv[24] = {"./translate", "-q"};
    int n = 2;
    for (; *args && n < 16; args++) argv[n++] = *args;
    const char *tail[] = {"--attention", json, "--html", html, texts[0], texts[1], NULL};
    for (int i = 0; i < 7; i++) argv[n++] = tail[i];
    RunResult r = run_program(argv, NULL, 0);
    if (r.status != 0) fail_msg("translate exited %d:\n%s", r.status, r.err);
    run_result_free(&r);
    if (!realpath(html, real)) fail_msg("no page %s", html);
    snprintf(url, size, "file://%s", real);
    char *text = read_file(json, NULL);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    assert_non_null(doc);
    return doc;
}

/* "Whole words" (#words) on a page from a subword model: one row and one
 * column per word, fewer than the tokens; without it, one per token. */
static void test_whole_words(void **state)
{
    (void)state;
    SKIP_WITHOUT_CHROMIUM();
    char config[600], url[PATH_MAX + 16];
    subword_tiny_config("browser-subword", config, sizeof config);
    cJSON *sub = own_page("browser-subword", (const char *[]){"-c", config, NULL},
                          (const char *[]){"The cat is sleeping.", "Tom's mother cooks rice."}, url, sizeof url);
    RunResult r;
    const cJSON *s = cJSON_GetArrayItem(get(sub, "sentences"), 0);
    long S = cJSON_GetArraySize(get(get(s, "source"), "tokens"));
    long Ws = cJSON_GetArraySize(get(get(s, "source"), "words"));
    long T = cJSON_GetArraySize(get(get(s, "decoder_input"), "tokens"));
    long Wt = cJSON_GetArraySize(get(get(s, "decoder_input"), "words"));
    long L = cJSON_GetArraySize(get(s, "cross_attentions"));
    long maps = 1 + L * (get(get(sub, "model"), "heads")->valueint + 1);
    assert_true(Ws < S); /* "sleeping" is in pieces */
    static const struct { const char *fragment; int words; } views[] = {
        {"#kind=cross&words", 1}, {"#kind=cross", 0}, {"#kind=decoder&words", 1}, {"#kind=encoder&words", 1},
    };
    for (size_t v = 0; v < sizeof views / sizeof views[0]; v++) {
        r = run_chromium_on(url, views[v].fragment, "--dump-dom");
        check_page(&r);
        bool w = views[v].words, decoder = strstr(views[v].fragment, "decoder"), encoder = strstr(views[v].fragment, "encoder");
        long rows = encoder ? (w ? Ws : S) : (w ? Wt : T), cols = decoder ? rows : (w ? Ws : S);
        long masked = decoder ? rows * (rows - 1) / 2 : 0;
        if (!strstr(r.out, w ? "data-words=\"true\"" : "data-words=\"false\""))
            fail_msg("%s: data-words is not %d", views[v].fragment, w);
        assert_int_equal(status_of(r.out, "data-cells"), maps * rows * cols);
        assert_int_equal(status_of(r.out, "data-masked"), maps * masked);
        assert_int_equal(status_of(r.out, "data-lines"), rows * cols - masked);
        run_result_free(&r);
    }
    cJSON_Delete(sub);
}

/* The page says how the translation was decoded, and why a step kept a
 * token that is not among its 5 most probable: the shipped en-zh model,
 * greedy, copies the source's numbers (copy_numbers), which chose "##4"
 * at a probability of 0.02 with nothing said. */
static void test_a_kept_token_below_the_top_5_says_why(void **state)
{
    (void)state;
    SKIP_WITHOUT_CHROMIUM();
    char url[PATH_MAX + 16];
    cJSON *numbers = own_page("browser-numbers", (const char *[]){"-t", "1", "-b", "1", "-c", "configs/en-zh.yaml", NULL},
                              (const char *[]){"She bought 3 apples for 1990 yen on 2024-05-06.", "I love China."},
                              url, sizeof url);
    assert_true(cJSON_IsTrue(get(get(numbers, "decoding"), "copy_numbers")));
    const cJSON *out = get(cJSON_GetArrayItem(get(numbers, "sentences"), 0), "output");
    assert_true(cJSON_IsTrue(get(out, "copied_numbers")));
    int below = 0; /* the first step (1-based) whose token is not in its top 5 */
    for (int t = 0; !below && t < cJSON_GetArraySize(get(out, "ids")); t++) {
        int id = cJSON_GetArrayItem(get(out, "ids"), t)->valueint;
        bool listed = false;
        const cJSON *alt;
        cJSON_ArrayForEach(alt, cJSON_GetArrayItem(get(out, "top_k"), t)) listed |= get(alt, "id")->valueint == id;
        if (!listed) below = t + 1;
    }
    cJSON_Delete(numbers);
    if (!below) fail_msg("no step kept a token below its top 5: pick another sentence for this test");
    char fragment[64];
    snprintf(fragment, sizeof fragment, "#kind=cross&step=%d", below);
    RunResult r = run_chromium_on(url, fragment, "--dump-dom");
    check_page(&r);
    expect_in(r.out, "decoded: greedy, copy_numbers");
    expect_in(r.out, "copy_numbers: where the source has numbers, a digit is written only where it copies one");
    run_result_free(&r);
}

/* The sentence picker cuts a text longer than 60 characters between
 * characters as a reader sees them: after the emoji, and after the whole
 * family of three (one character of five code points joined by ZWJs), not
 * in the middle of either.  It cut at UTF-16 unit 57, half of the emoji:
 * a lone surrogate, shown as U+FFFD, on which --dump-dom died (SIGILL). */
static void test_the_picker_cuts_whole_characters(void **state)
{
    (void)state;
    SKIP_WITHOUT_CHROMIUM();
    char first[128], second[128], url[PATH_MAX + 16], want[256];
    memset(first, 'x', 56);
    strcpy(first + 56, "😀 the end");
    memset(second, 'y', 56);
    strcpy(second + 56, "👩\u200d👩\u200d👧 and more");
    cJSON *picked = own_page("browser-picker", (const char *[]){"-c", "configs/tiny.yaml", NULL},
                             (const char *[]){first, second}, url, sizeof url);
    cJSON_Delete(picked);
    RunResult r = run_chromium_on(url, "", "--dump-dom");
    check_page(&r);
    snprintf(want, sizeof want, ">1: %.60s...</option>", first); /* 56 x and 4 bytes */
    expect_in(r.out, want);
    snprintf(want, sizeof want, ">2: %.74s...</option>", second); /* 56 y, 3 × 4 + 2 × 3 bytes */
    expect_in(r.out, want);
    run_result_free(&r);
}

/* #selftest makes the page run its SVG, CSV and PNG exports; the test
 * awaits the page's promise that they are done. */
static void test_exports_work(void **state)
{
    (void)state;
    SKIP_WITHOUT_CHROMIUM();
    RunResult r = open_and_wait("#kind=encoder&selftest", "window.selftestDone");
    check_page(&r);
    if (!strstr(r.out, "data-selftest=\"done\""))
        fail_msg("the page did not say its exports are done (data-selftest)");
    const cJSON *s = cJSON_GetArrayItem(get(doc, "sentences"), 0);
    long S = cJSON_GetArraySize(get(get(s, "source"), "tokens"));
    assert_true(status_of(r.out, "data-export-svg") > 1000);
    assert_int_equal(status_of(r.out, "data-export-csv-lines"), S + 1);
    assert_true(status_of(r.out, "data-export-png") > 1000);
    run_result_free(&r);
}

/* A text with characters XML cannot hold (ESC from a terminal, a vertical
 * tab) still exports: they went raw into the SVG, which was then not
 * well-formed, and the PNG export failed ("could not draw the SVG"). */
static void test_exports_of_a_text_with_control_characters(void **state)
{
    (void)state;
    SKIP_WITHOUT_CHROMIUM();
    char html[512], path[PATH_MAX], url[PATH_MAX + 64];
    snprintf(html, sizeof html, "%s/controls.html", temp_dir());
    const char *argv[] = {"./translate", "-c", "configs/tiny.yaml", "-q", "--html", html,
                          "escape \x1b[1mbold\x1b[0m", "vertical\x0btab", NULL};
    RunResult t = run_program(argv, NULL, 0);
    assert_int_equal(t.status, 0);
    run_result_free(&t);
    assert_non_null(realpath(html, path));
    for (int sentence = 0; sentence < 2; sentence++) {
        snprintf(url, sizeof url, "file://%s#sentence=%d&selftest", path, sentence);
        RunResult r = open_url_and_wait(url, "window.selftestDone", NULL);
        if (r.status != 0) fail_msg("chromium exited with %d:\n%s", r.status, r.err);
        if (!strstr(r.out, "data-selftest=\"done\""))
            fail_msg("sentence %d: the exports did not finish:\n%s", sentence, r.out);
        assert_true(status_of(r.out, "data-export-svg") > 1000);
        assert_true(status_of(r.out, "data-export-png") > 1000);
        run_result_free(&r);
    }
}

/* A PNG of some size at path: the screenshot a test keeps as its artifact. */
static void expect_screenshot(const char *path)
{
    size_t len = 0;
    char *png = read_file(path, &len);
    assert_non_null(png);
    assert_true(len > 10000);
    assert_memory_equal(png, "\x89PNG", 4);
    print_message("screenshot: %s (%zu bytes)\n", path, len);
    free(png);
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
    expect_screenshot(SCREENSHOT);
    run_result_free(&r);
}

/* ---- the live page of make web ------------------------------------------ */

static bool web_page_built(void) { return access(WEB_PAGE, R_OK) == 0; }

#define SKIP_WITHOUT_WEB_PAGE()                                                                    \
    do {                                                                                           \
        SKIP_WITHOUT_CHROMIUM();                                                                   \
        if (!web_page_built())                                                                     \
            SKIP_TEST("web", WEB_PAGE " not built (make web; needs tools/deps.sh --with-web)");     \
    } while (0)

/* The attention document ./translate writes for `text` with `config`. */
static cJSON *native_document(const char *config, const char *text)
{
    char json[600];
    snprintf(json, sizeof json, "%s/web-native.json", temp_dir());
    const char *argv[] = {"./translate", "-q", "-c", config, "--attention", json, text, NULL};
    RunResult r = run_program(argv, NULL, 0);
    if (r.status != 0) fail_msg("translate exited %d:\n%s", r.status, r.err);
    run_result_free(&r);
    char *body = read_file(json, NULL);
    cJSON *d = cJSON_Parse(body);
    free(body);
    if (!d) fail_msg("no JSON from translate");
    return d;
}

/* The string attribute `name` of the element with `marker`, unescaped of
 * the few entities outerHTML writes. */
static char *string_attribute(const char *dom, const char *marker, const char *name)
{
    const char *tag = strstr(dom, marker);
    if (!tag) fail_msg("no element with %s in the page", marker);
    char key[64];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *at = strstr(tag, key), *end = strchr(tag, '>');
    if (!at || at > end) fail_msg("the element with %s has no %s", marker, name);
    at += strlen(key);
    const char *close = strchr(at, '"');
    char *out = malloc((size_t)(close - at) + 1);
    size_t n = 0;
    for (const char *p = at; p < close; p++) {
        static const struct { const char *entity; char c; } entities[] = {
            {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}};
        size_t e = 0;
        while (e < 4 && strncmp(p, entities[e].entity, strlen(entities[e].entity)) != 0) e++;
        if (e < 4) {
            out[n++] = entities[e].c;
            p += strlen(entities[e].entity) - 1;
        } else {
            out[n++] = *p;
        }
    }
    out[n] = '\0';
    return out;
}

/* Is the element with `marker` hidden (the attribute in its start tag)? */
static bool element_hidden(const char *dom, const char *marker)
{
    const char *tag = strstr(dom, marker);
    if (!tag) fail_msg("no element with %s in the page", marker);
    const char *hidden = strstr(tag, " hidden");
    return hidden && hidden < strchr(tag, '>');
}

/* The live page opened with `fragment`, `steps` done (open_url_and_drive)
 * and the promise `wait_for` settled; its screenshot to `screenshot` (or none). */
static RunResult drive_web_page(const char *fragment, const Step *steps, const char *wait_for,
                                const char *screenshot)
{
    char real[PATH_MAX];
    if (!realpath(WEB_PAGE, real)) fail_msg("no %s", WEB_PAGE);
    size_t size = strlen(real) + strlen(fragment) + 16; /* a fragment may be long (a text too long) */
    char *url = malloc(size);
    snprintf(url, size, "file://%s%s", real, fragment);
    RunResult r = open_url_and_drive(url, steps, wait_for, screenshot);
    free(url);
    return r;
}

/* The live page opened with `fragment`, once its first translation
 * (window.webFirst) has settled. */
static RunResult open_web_page(const char *fragment, const char *screenshot)
{
    return drive_web_page(fragment, NULL, "window.webFirst", screenshot);
}

/* Open the live page with `fragment`, wait for its first translation and
 * check it against ./translate with `config`: the text, no error, the
 * cells of the default view (the last layer's cross-attention, every head
 * and the mean), and that the note on line breaks is shown if `note`
 * (and only then). */
static void check_web_translation(const char *fragment, const char *config, const char *text,
                                  const char *screenshot, bool note)
{
    RunResult r = open_web_page(fragment, screenshot);
    if (r.status != 0) fail_msg("chromium exited with %d:\n%s", r.status, r.err);
    if (strstr(r.err, "Uncaught") || strstr(r.err, ":ERROR:CONSOLE"))
        fail_msg("an error in the console:\n%s", r.err);
    assert_int_equal(attribute(r.out, "id=\"errors\"", "data-count"), 0);
    assert_int_equal(attribute(r.out, "id=\"web-status\"", "data-results"), 1);
    /* The worker reported its steps while it translated (the progress line). */
    assert_true(attribute(r.out, "id=\"web-status\"", "data-progress") >= 1);
    /* The model was taken as soon as the line after its files said so,
     * not when the whole page had been parsed (web/mkpage.c). */
    char *ready_by = string_attribute(r.out, "id=\"web-status\"", "data-model-ready-by");
    if (strcmp(ready_by, "event") != 0) fail_msg("the model's files were taken when the page ended ('%s')", ready_by);
    free(ready_by);
    cJSON *native = native_document(config, text);
    const cJSON *s = cJSON_GetArrayItem(get(native, "sentences"), 0);
    const char *want = get(get(s, "output"), "text")->valuestring;
    char *got = string_attribute(r.out, "id=\"web-status\"", "data-translation");
    if (strcmp(got, want) != 0) fail_msg("the page translated '%s' as '%s', ./translate as '%s'", text, got, want);
    free(got);
    View v = {"", 0, "cross", 0};
    Counts c = expected_in(native, &v);
    assert_int_equal(status_of(r.out, "data-ready"), 1);
    assert_int_equal(status_of(r.out, "data-heatmaps"), c.heatmaps);
    assert_int_equal(status_of(r.out, "data-cells"), c.cells);
    assert_int_equal(status_of(r.out, "data-masked"), c.masked);
    assert_int_equal(status_of(r.out, "data-lines"), c.lines);
    if (element_hidden(r.out, "id=\"web-note\"") == note)
        fail_msg("the note on line breaks is %s for '%s'", note ? "hidden" : "shown", text);
    print_message("%s: '%s' in %ld ms in the engine; first translation %ld ms after opening the page\n",
                  config, want, attribute(r.out, "id=\"web-status\"", "data-ms"),
                  attribute(r.out, "id=\"web-status\"", "data-first-ms"));
    cJSON_Delete(native);
    run_result_free(&r);
}

static void test_web_page_translates_english(void **state)
{
    (void)state;
    SKIP_WITHOUT_WEB_PAGE();
    unlink(WEB_SCREENSHOT);
    check_web_translation("#dir=en-zh&still&text=I%20love%20china", "configs/en-zh.yaml", "I love china",
                          WEB_SCREENSHOT, false);
    expect_screenshot(WEB_SCREENSHOT);
}

/* #dir= with a name from Object's prototype is no model: the default
 * direction translates (it threw, and the page stayed busy for good). */
static void test_web_page_ignores_an_unknown_direction(void **state)
{
    (void)state;
    SKIP_WITHOUT_WEB_PAGE();
    check_web_translation("#dir=constructor&still&text=I%20love%20china", "configs/en-zh.yaml", "I love china",
                          NULL, false);
}

static void test_web_page_translates_chinese(void **state)
{
    (void)state;
    SKIP_WITHOUT_WEB_PAGE();
    check_web_translation("#dir=zh-en&still&text=%E6%88%91%E6%83%B3%E5%90%83%E9%85%B8%E8%8F%9C%E9%B1%BC",
                          "configs/zh-en.yaml", "我想吃酸菜鱼", NULL, false);
}

/* One click (#seed clicks it): 我想吃酸菜鱼 through zh-en with the
 * walk-through of --explain beside the maps, the native one's text. */
static void test_web_seed_walkthrough(void **state)
{
    (void)state;
    SKIP_WITHOUT_WEB_PAGE();
    RunResult r = open_web_page("#seed&still", NULL);
    assert_int_equal(attribute(r.out, "id=\"errors\"", "data-count"), 0);
    assert_int_equal(attribute(r.out, "id=\"web-status\"", "data-results"), 1);
    const char *argv[] = {"./translate", "-q", "-c", "configs/zh-en.yaml", "--explain", "我想吃酸菜鱼", NULL};
    RunResult native = run_program(argv, NULL, 0);
    assert_int_equal(native.status, 0);
    /* Its ids and first numbers (line 2 and 3: line 1 names the config's
     * path, which in the page is the engine's file system's). */
    const char *ids = strstr(native.out, "2. Tokens"), *x = strstr(native.out, "3. X = ");
    if (!ids || !x) fail_msg("--explain printed no steps 2 and 3:\n%s", native.out);
    char line[512];
    for (int k = 0; k < 2; k++) {
        const char *at = k ? x : ids;
        snprintf(line, sizeof line, "%.*s", (int)strcspn(at, "\n"), at);
        if (!strstr(r.out, "id=\"explain-info\"") || !strstr(r.out, line))
            fail_msg("the page does not show the walk-through's line '%s'", line);
    }
    run_result_free(&native);
    run_result_free(&r);
}

/* A NUL in the text (here from the #fragment) is refused with a message,
 * as ./translate refuses a line with one: the engine's C string would
 * have ended there and translated "a" alone. */
static void test_web_page_refuses_a_nul(void **state)
{
    (void)state;
    SKIP_WITHOUT_WEB_PAGE();
    RunResult r = open_web_page("#dir=en-zh&still&text=a%00b", NULL);
    if (r.status != 0) fail_msg("chromium exited with %d:\n%s", r.status, r.err);
    assert_int_equal(attribute(r.out, "id=\"web-status\"", "data-results"), 0);
    expect_in(r.out, "class=\"error\">NUL character (U+0000) at character 2: not translated<");
    run_result_free(&r);
}

/* A text longer than a line of standard input (65,536 bytes) is refused
 * as ./translate refuses such a line: past about 1.3 million characters it
 * overflowed the engine's stack and the page then waited for ever. */
static void test_web_page_refuses_a_text_too_long(void **state)
{
    (void)state;
    SKIP_WITHOUT_WEB_PAGE();
    enum { N = 70000 };
    char *fragment = malloc(N + 64);
    int at = snprintf(fragment, N + 64, "#dir=en-zh&still&text=");
    memset(fragment + at, 'a', N);
    fragment[at + N] = '\0';
    RunResult r = open_web_page(fragment, NULL);
    free(fragment);
    if (r.status != 0) fail_msg("chromium exited with %d:\n%s", r.status, r.err);
    assert_int_equal(attribute(r.out, "id=\"web-status\"", "data-results"), 0);
    expect_in(r.out, "class=\"error\">longer than 65536 bytes (70000): not translated<");
    run_result_free(&r);
}

/* The box is one sentence, as a TEXT argument of ./translate is: two
 * lines are translated together, as ./translate translates the one
 * argument that holds both, and the page says that its line breaks were
 * read as spaces (it said nothing, where ./translate's standard input
 * translates each line alone). */
static void test_web_page_says_two_lines_are_one_sentence(void **state)
{
    (void)state;
    SKIP_WITHOUT_WEB_PAGE();
    check_web_translation("#dir=en-zh&still&text=I%20love%20china%0AHow%20are%20you%3F", "configs/en-zh.yaml",
                          "I love china\nHow are you?", NULL, true);
}

/* A refused text (a NUL) and one the engine fails on (200 tokens, more
 * than max_len) after a translation: the error shows, and the last
 * translation's maps, its text above them and its text in the address go,
 * as for an emptied box; they stayed, and a reload brought the old text
 * back.  Each probe: main hidden | #texts | the address holds "love". */
static void test_web_page_clears_the_last_sentence_on_an_error(void **state)
{
    (void)state;
    SKIP_WITHOUT_WEB_PAGE();
    static const char *const wait_for =
        "(() => {"
        "  const probe = (name) => document.body.setAttribute('data-' + name, [document.querySelector('main').hidden,"
        "      document.getElementById('texts').textContent, location.hash.includes('love')].join('|'));"
        "  return window.webFirst.then(() => probe('first'))"
        "    .then(() => window.webTranslate('a\\u0000b', 'en-zh')).then(() => probe('refused'))"
        "    .then(() => window.webTranslate('I love china', 'en-zh'))"
        "    .then(() => window.webTranslate('a '.repeat(200), 'en-zh')).then(() => probe('failed'));"
        "})()";
    RunResult r = drive_web_page("#dir=en-zh&still&text=I%20love%20china", NULL, wait_for, NULL);
    if (r.status != 0) fail_msg("chromium exited with %d:\n%s", r.status, r.err);
    assert_int_equal(attribute(r.out, "id=\"errors\"", "data-count"), 0);
    assert_int_equal(attribute(r.out, "id=\"web-status\"", "data-results"), 2);
    expect_in(r.out, "class=\"error\">200 tokens, more than max_len 128");
    static const struct { const char *probe, *want; } probes[] = {
        {"data-first", "false|I love china→"}, {"data-refused", "true||false"}, {"data-failed", "true||false"}};
    for (size_t k = 0; k < sizeof probes / sizeof probes[0]; k++) {
        char *got = string_attribute(r.out, "<body", probes[k].probe);
        if (strncmp(got, probes[k].want, strlen(probes[k].want)) != 0)
            fail_msg("%s: '%s', expected '%s'", probes[k].probe, got, probes[k].want);
        free(got);
    }
    run_result_free(&r);
}

/* The address holds only what means something: emptying the box before
 * any translation wrote layer=Infinity&step=Infinity there (the view's
 * "last layer" and "last step" before a sentence made them numbers), and
 * a sentence and step with none shown.  Now, with no sentence shown: the
 * kind, the head and the layer once a translation has made it a number
 * (kept for the next), the direction, and no empty text. */
static void test_web_page_address_holds_no_meaningless_values(void **state)
{
    (void)state;
    SKIP_WITHOUT_WEB_PAGE();
    static const char *const wait_for =
        "(() => {"
        "  const probe = (name) => document.body.setAttribute('data-' + name, location.hash);"
        "  return window.webFirst.then(() => window.webTranslate('', 'en-zh')).then(() => probe('never'))"
        "    .then(() => window.webTranslate('I love china', 'en-zh')).then(() => probe('shown'))"
        "    .then(() => window.webTranslate('', 'en-zh')).then(() => probe('emptied'));"
        "})()";
    RunResult r = drive_web_page("#dir=en-zh&still", NULL, wait_for, NULL);
    if (r.status != 0) fail_msg("chromium exited with %d:\n%s", r.status, r.err);
    assert_int_equal(attribute(r.out, "id=\"errors\"", "data-count"), 0);
    assert_int_equal(attribute(r.out, "id=\"web-status\"", "data-results"), 1);
    static const struct { const char *probe, *want; } probes[] = {
        {"data-never", "#kind=cross&head=mean&dir=en-zh&still"},
        {"data-shown", "#sentence=1&kind=cross&layer=3&head=mean&step="},
        {"data-emptied", "#kind=cross&layer=3&head=mean&dir=en-zh&still"},
    };
    for (size_t k = 0; k < sizeof probes / sizeof probes[0]; k++) {
        char *got = string_attribute(r.out, "<body", probes[k].probe);
        bool whole = k != 1; /* the step: as many as the translation's tokens */
        if (whole ? strcmp(got, probes[k].want) != 0 : strncmp(got, probes[k].want, strlen(probes[k].want)) != 0)
            fail_msg("%s: '%s', expected '%s'%s", probes[k].probe, got, probes[k].want, whole ? "" : "...");
        free(got);
    }
    run_result_free(&r);
}

/* Typing through an input method: the unfinished pinyin "wo ai" is not
 * translated however long it stays (it was, 0.4 s later, its maps drawn),
 * and the committed 我爱 is, once.  The page first translates 你好 (from
 * the #fragment), so the model is loaded and a translation of the pinyin
 * would be quick; data-composing: the results and #texts 1.5 s into the
 * composition. */
static void test_web_page_waits_for_an_input_method(void **state)
{
    (void)state;
    SKIP_WITHOUT_WEB_PAGE();
    static const Step steps[] = {
        {"Runtime.evaluate", "{\"awaitPromise\": true, \"expression\": \"window.webFirst.then(() => {"
                             " const box = document.getElementById('web-input'); box.value = ''; box.focus(); })\"}"},
        {"Input.imeSetComposition", "{\"text\": \"wo\", \"selectionStart\": 2, \"selectionEnd\": 2}"},
        {"Input.imeSetComposition", "{\"text\": \"wo ai\", \"selectionStart\": 5, \"selectionEnd\": 5}"},
        {"Runtime.evaluate", "{\"awaitPromise\": true, \"expression\": \"new Promise((done) => setTimeout(done, 1500))"
                             ".then(() => document.body.setAttribute('data-composing', [document.getElementById("
                             "'web-status').getAttribute('data-results'), document.getElementById('texts').textContent]"
                             ".join('|')))\"}"},
        {"Input.insertText", "{\"text\": \"我爱\"}"},
        {NULL, NULL},
    };
    static const char *const wait_for = /* the second result, or 60 s */
        "new Promise((done) => { const t0 = Date.now(); (function poll() {"
        "  if (document.getElementById('web-status').getAttribute('data-results') === '2' || Date.now() - t0 > 60000)"
        "    done(); else setTimeout(poll, 50); })(); })"
        ".then(() => new Promise((done) => setTimeout(done, 1000)))"; /* and no third */
    RunResult r = drive_web_page("#dir=zh-en&still&text=%E4%BD%A0%E5%A5%BD", steps, wait_for, NULL);
    if (r.status != 0) fail_msg("chromium exited with %d:\n%s", r.status, r.err);
    assert_int_equal(attribute(r.out, "id=\"errors\"", "data-count"), 0);
    char *composing = string_attribute(r.out, "<body", "data-composing");
    if (strncmp(composing, "1|你好→", strlen("1|你好→")) != 0)
        fail_msg("1.5 s into composing 'wo ai' the page had '%s' (results|texts), not the first result only", composing);
    free(composing);
    assert_int_equal(attribute(r.out, "id=\"web-status\"", "data-results"), 2);
    cJSON *native = native_document("configs/zh-en.yaml", "我爱");
    const char *want = get(get(cJSON_GetArrayItem(get(native, "sentences"), 0), "output"), "text")->valuestring;
    char *got = string_attribute(r.out, "id=\"web-status\"", "data-translation");
    if (strcmp(got, want) != 0) fail_msg("the page translated '%s', ./translate 我爱 as '%s'", got, want);
    free(got);
    cJSON_Delete(native);
    run_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_view_is_cross_attention),
        cmocka_unit_test(test_every_kind_layer_head_and_step),
        cmocka_unit_test(test_whole_words),
        cmocka_unit_test(test_a_kept_token_below_the_top_5_says_why),
        cmocka_unit_test(test_the_picker_cuts_whole_characters),
        cmocka_unit_test(test_exports_work),
        cmocka_unit_test(test_exports_of_a_text_with_control_characters),
        cmocka_unit_test(test_screenshot),
        cmocka_unit_test(test_web_page_translates_english),
        cmocka_unit_test(test_web_page_translates_chinese),
        cmocka_unit_test(test_web_seed_walkthrough),
        cmocka_unit_test(test_web_page_refuses_a_nul),
        cmocka_unit_test(test_web_page_refuses_a_text_too_long),
        cmocka_unit_test(test_web_page_ignores_an_unknown_direction),
        cmocka_unit_test(test_web_page_says_two_lines_are_one_sentence),
        cmocka_unit_test(test_web_page_clears_the_last_sentence_on_an_error),
        cmocka_unit_test(test_web_page_address_holds_no_meaningless_values),
        cmocka_unit_test(test_web_page_waits_for_an_input_method),
    };
    return cmocka_run_group_tests(tests, make_page, free_page);
}
