/* test_web.c — the WebAssembly engine of make web against the native program.
 *
 * build/web/engine.js (web/wasm_main.c and the project's C code, compiled
 * by emcc) runs under node on the first 50 sources of the Tatoeba dev set
 * in each direction, and ./translate --attention on the same lines.  Each
 * sentence must give the same tokens and translation, and every attention
 * map must agree within 1e-5 (the page runs the generic kernels, the
 * native program here the x86 ones: the same sums in another order).  The
 * log-probabilities of the chosen and top-k tokens agree within 1e-4: they
 * come from logits that are sums over d_model terms.  The maximum
 * differences are printed.
 *
 * First, tests/web_kernels.c (built by make web beside the engine) checks
 * the SIMD128 kernels, which only WebAssembly runs, against the plain code.
 *
 * Skipped ([web]) without node or without the engine (make test builds it
 * when emcc is installed: tools/deps.sh --with-web); [data] without the
 * dev set. */
#include "testutil.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/times.h>
#include <unistd.h>

#define ENGINE "build/web/engine.js"
#define KERNELS "build/web/web_kernels.js"
#define NODE "/usr/bin/node"
#define SENTENCES 50
#define MAP_TOLERANCE 1e-5
#define LOGPROB_TOLERANCE 1e-4

/* Translate each line of `input` with `config` in the engine; the replies'
 * attention documents, one a line, go to `output`. */
static const char NODE_SCRIPT[] =
    "'use strict';\n"
    "const fs = require('fs');\n"
    "const [engine, config, input, output] = process.argv.slice(2);\n"
    "const Module = require(engine);\n"
    "Module.onRuntimeInitialized = () => {\n"
    "  const FS = Module.FS;\n"
    "  const yaml = fs.readFileSync(config, 'utf8');\n"
    "  FS.mkdir('/configs'); FS.mkdir('/weights');\n"
    "  FS.writeFile('/' + config, yaml);\n"
    "  for (const m of yaml.matchAll(/^\\s*(?:weights|source_vocab|target_vocab|simplify): *\\.\\.\\/(\\S+)/gm))\n"
    "    FS.writeFile('/' + m[1], fs.readFileSync(m[1]));\n"
    "  const open = JSON.parse(Module.ccall('web_open', 'string', ['number', 'string'], [0, '/' + config]));\n"
    "  if (open.status !== 0) { console.error(open.error); process.exit(1); }\n"
    "  const lines = fs.readFileSync(input, 'utf8').split('\\n').filter((l) => l !== '');\n"
    "  const out = [];\n"
    "  const t0 = process.cpuUsage();\n"
    "  for (const line of lines) {\n"
    "    const r = JSON.parse(Module.ccall('web_translate', 'string', ['number', 'string', 'number'], [0, line, 0]));\n"
    "    if (r.status !== 0) { console.error(line + ': ' + r.error); process.exit(1); }\n"
    "    out.push(JSON.stringify(r.attention));\n"
    "  }\n"
    "  const cpu = process.cpuUsage(t0);\n"
    "  fs.writeFileSync(output, out.join('\\n') + '\\n');\n"
    "  console.log(((cpu.user + cpu.system) / 1e6).toFixed(2));\n"
    "};\n";

/* CPU seconds used by finished children so far (both programs run as
 * children, so their times compare on this loaded machine better than
 * wall-clock times would). */
static double children_cpu(void)
{
    struct tms t;
    times(&t);
    return (double)(t.tms_cutime + t.tms_cstime) / (double)sysconf(_SC_CLK_TCK);
}

static bool engine_available(void) { return access(ENGINE, R_OK) == 0 && access(NODE, X_OK) == 0; }

typedef struct {
    double map, logprob; /* largest differences seen */
    int numbers;
} Diff;

/* Compare two JSON values; `maps` says whether numbers are attention
 * weights (inside a *_attentions field).  Fails the test on a mismatch,
 * naming `where`. */
static void compare(const cJSON *a, const cJSON *b, const char *where, bool maps, Diff *d)
{
    if (cJSON_IsNumber(a) && cJSON_IsNumber(b)) {
        double diff = fabs(a->valuedouble - b->valuedouble);
        double limit = maps ? MAP_TOLERANCE : LOGPROB_TOLERANCE;
        if (maps && diff > d->map) d->map = diff;
        if (!maps && diff > d->logprob) d->logprob = diff;
        d->numbers++;
        if (!(diff <= limit))
            fail_msg("%s: %.9g (wasm) vs %.9g (native), difference %.3g > %.0e", where, a->valuedouble,
                     b->valuedouble, diff, limit);
        return;
    }
    if ((a->type & 0xFF) != (b->type & 0xFF)) fail_msg("%s: different JSON types", where);
    if (cJSON_IsString(a)) {
        if (strcmp(a->valuestring, b->valuestring) != 0)
            fail_msg("%s: '%s' (wasm) vs '%s' (native)", where, a->valuestring, b->valuestring);
        return;
    }
    if (cJSON_IsArray(a)) {
        if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
            fail_msg("%s: %d items (wasm) vs %d (native)", where, cJSON_GetArraySize(a), cJSON_GetArraySize(b));
        for (const cJSON *x = a->child, *y = b->child; x; x = x->next, y = y->next) compare(x, y, where, maps, d);
        return;
    }
    if (cJSON_IsObject(a)) {
        for (const cJSON *x = a->child; x; x = x->next) {
            if (strcmp(x->string, "line") == 0) continue; /* 1 in the page, the line number here */
            const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, x->string);
            if (!y) fail_msg("%s: native has no '%s'", where, x->string);
            size_t len = strlen(x->string);
            if (len > 5 && strcmp(x->string + len - 5, "_path") == 0 && cJSON_IsString(x) && cJSON_IsString(y)) {
                /* The model's files are at "/" + their paths here, in the engine's file system. */
                if (x->valuestring[0] != '/' || strcmp(x->valuestring + 1, y->valuestring) != 0)
                    fail_msg("%s: %s '%s' (wasm) vs '%s' (native)", where, x->string, x->valuestring, y->valuestring);
                continue;
            }
            char inner[256];
            snprintf(inner, sizeof inner, "%s.%s", where, x->string);
            compare(x, y, inner, maps || strstr(x->string, "attentions") != NULL, d);
        }
        return;
    }
    if (!cJSON_Compare(a, b, true)) fail_msg("%s: different values", where);
}

static void check_direction(const char *config, int column)
{
    if (!engine_available()) SKIP_TEST("web", ENGINE " or node missing (make web; tools/deps.sh --with-web)");
    if (getenv("TEST_EMULATED")) SKIP_TEST("emulated", "100 native translations under an emulator are too slow");
    const char *dir = tatoeba_dir();
    if (!dir) SKIP_TEST("data", "no Tatoeba data at ../shared/data/tatoeba-cmn-eng (or $TATOEBA_DIR)");
    char dev[600], input[600], script[600], wasm_out[600], native_json[600];
    snprintf(dev, sizeof dev, "%s/dev.tsv", dir);
    snprintf(input, sizeof input, "%s/web-input-%d.txt", temp_dir(), column);
    snprintf(script, sizeof script, "%s/web-parity.js", temp_dir());
    snprintf(wasm_out, sizeof wasm_out, "%s/web-out-%d.jsonl", temp_dir(), column);
    snprintf(native_json, sizeof native_json, "%s/web-native-%d.json", temp_dir(), column);
    /* The first SENTENCES sources of the dev set. */
    char *tsv = read_file(dev, NULL);
    assert_non_null(tsv);
    FILE *f = fopen(input, "w");
    assert_non_null(f);
    char *line = tsv;
    for (int n = 0; n < SENTENCES && *line; n++) {
        char *end = line + strcspn(line, "\n");
        char *field = line;
        for (int c = 0; c < column && field < end; c++) field = memchr(field, '\t', (size_t)(end - field)) + 1;
        fprintf(f, "%.*s\n", (int)strcspn(field, "\t\n"), field);
        line = *end ? end + 1 : end;
    }
    fclose(f);
    free(tsv);
    f = fopen(script, "w");
    assert_non_null(f);
    fputs(NODE_SCRIPT, f);
    fclose(f);

    char engine[4096];
    if (!realpath(ENGINE, engine)) fail_msg("no %s", ENGINE);
    const char *node[] = {"/usr/bin/env", "NODE_PATH=/usr/share/nodejs", NODE, script, engine, config,
                          input, wasm_out, NULL};
    double cpu0 = children_cpu();
    RunResult w = run_program(node, NULL, 0);
    double cpu_wasm = children_cpu() - cpu0;
    if (w.status != 0) fail_msg("node exited %d:\n%s", w.status, w.err);
    const char *native[] = {"./translate", "-q", "-t", "1", "-c", config, "-i", input, "-o", "/dev/null",
                            "--attention", native_json, NULL};
    cpu0 = children_cpu();
    RunResult r = run_program(native, NULL, 0);
    double cpu_native = children_cpu() - cpu0;
    if (r.status != 0) fail_msg("translate exited %d:\n%s", r.status, r.err);
    run_result_free(&r);

    char *native_text = read_file(native_json, NULL), *wasm_text = read_file(wasm_out, NULL);
    cJSON *doc = cJSON_Parse(native_text);
    assert_non_null(doc);
    const cJSON *sentences = cJSON_GetObjectItemCaseSensitive(doc, "sentences");
    assert_int_equal(cJSON_GetArraySize(sentences), SENTENCES);
    Diff d = {0};
    int n = 0;
    for (char *p = wasm_text; *p; n++) {
        char *end = strchr(p, '\n');
        *end = '\0';
        cJSON *page = cJSON_Parse(p);
        assert_non_null(page);
        const cJSON *got = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(page, "sentences"), 0);
        const cJSON *want = cJSON_GetArrayItem(sentences, n);
        assert_non_null(want);
        char where[64];
        snprintf(where, sizeof where, "%s line %d", config, n + 1);
        compare(got, want, where, false, &d);
        compare(cJSON_GetObjectItemCaseSensitive(page, "model"), cJSON_GetObjectItemCaseSensitive(doc, "model"),
                where, false, &d);
        cJSON_Delete(page);
        p = end + 1;
    }
    assert_int_equal(n, SENTENCES);
    print_message("%s: %d sentences equal; %d numbers, largest differences: maps %.2g, log-probabilities "
                  "%.2g\n  CPU time, one thread: wasm %.2f s (node, %s s translating), native %.2f s "
                  "(./translate -t 1, loading included): %.1fx\n",
                  config, n, d.numbers, d.map, d.logprob, cpu_wasm, strtok(w.out, "\n"), cpu_native,
                  cpu_native > 0 ? cpu_wasm / cpu_native : 0.0);
    run_result_free(&w);
    cJSON_Delete(doc);
    free(native_text);
    free(wasm_text);
}

/* tests/web_kernels.c (built by make web): the SIMD128 gemm_nt and
 * float16 widening against the plain code, in WebAssembly. */
static void test_simd128_kernels_match_plain_code(void **state)
{
    (void)state;
    if (access(KERNELS, R_OK) != 0 || access(NODE, X_OK) != 0)
        SKIP_TEST("web", KERNELS " or node missing (make web; tools/deps.sh --with-web)");
    const char *node[] = {"/usr/bin/env", "NODE_PATH=/usr/share/nodejs", NODE, KERNELS, NULL};
    RunResult r = run_program(node, NULL, 0);
    if (r.status != 0) fail_msg("web_kernels exited %d:\n%s%s", r.status, r.out, r.err);
    print_message("%s", r.out);
    run_result_free(&r);
}

static void test_en_zh_matches_native(void **state)
{
    (void)state;
    check_direction("configs/en-zh.yaml", 0);
}

static void test_zh_en_matches_native(void **state)
{
    (void)state;
    check_direction("configs/zh-en.yaml", 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simd128_kernels_match_plain_code),
        cmocka_unit_test(test_en_zh_matches_native),
        cmocka_unit_test(test_zh_en_matches_native),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
