/* test_html.c — translate --html: one self-contained, offline HTML file that
 * embeds the same attention document as --attention (app/html_report.c).
 * What the page does in a browser is tests/test_browser.c's job. */
#include "testutil.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TINY "configs/tiny.yaml"
#define DATA_OPEN "<script type=\"application/json\" class=\"attention-data\">"

static void expect_in_page(const char *haystack, const char *needle)
{
    if (!strstr(haystack, needle)) fail_msg("expected '%s' in the page", needle);
}

static int occurrences(const char *haystack, const char *needle)
{
    int n = 0;
    for (const char *p = haystack; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

/* Run translate -c tiny with --html (and --attention when json is not
 * NULL) on the given sentences; returns the page (NULL if not written). */
static char *make_page(const char *const sentences[], int n, const char *json, RunResult *r)
{
    static char html[512];
    snprintf(html, sizeof html, "%s/page.html", temp_dir());
    unlink(html);
    const char *argv[16] = {"./translate", "-c", TINY, "-q", "--html", html};
    int argc = 6;
    if (json) {
        argv[argc++] = "--attention";
        argv[argc++] = json;
    }
    for (int i = 0; i < n; i++) argv[argc++] = sentences[i];
    argv[argc] = NULL;
    *r = run_program(argv, NULL, 0);
    return read_file(html, NULL);
}

/* The text of the first embedded attention document, as a new string. */
static char *embedded_json(const char *page)
{
    const char *start = strstr(page, DATA_OPEN);
    assert_non_null(start);
    start += strlen(DATA_OPEN);
    const char *end = strstr(start, "</script>");
    assert_non_null(end);
    char *text = malloc((size_t)(end - start) + 1);
    memcpy(text, start, (size_t)(end - start));
    text[end - start] = '\0';
    return text;
}

static void test_help_mentions_html(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "--help", NULL};
    RunResult r = run_program(argv, NULL, 0);
    assert_int_equal(r.status, 0);
    if (!strstr(r.out, "--html FILE")) fail_msg("--help does not mention --html FILE");
    run_result_free(&r);
}

static void test_page_is_written_and_self_contained(void **state)
{
    (void)state;
    const char *sentences[] = {"I love China.", "我想吃酸菜鱼"};
    RunResult r;
    char *page = make_page(sentences, 2, NULL, &r);
    assert_int_equal(r.status, 0);
    assert_int_equal(count_lines(r.out), 2); /* the translations still go to stdout */
    assert_non_null(page);
    /* Offline: no address of any kind, and a policy that forbids fetching. */
    assert_null(strstr(page, "http://"));
    assert_null(strstr(page, "https://"));
    expect_in_page(page, "Content-Security-Policy");
    expect_in_page(page, "default-src 'none'");
    /* Inlined CSS and JS, embedded data, and no template marker left over. */
    expect_in_page(page, "/* viewer.css");
    expect_in_page(page, "/* viewer.js");
    expect_in_page(page, DATA_OPEN "{\"format\":\"translate-attention\"");
    expect_in_page(page, "我想吃酸菜鱼");
    assert_null(strstr(page, "{{css}}"));
    assert_null(strstr(page, "{{js}}"));
    assert_null(strstr(page, "{{data}}"));
    assert_int_equal(occurrences(page, DATA_OPEN), 1); /* one model: one document */
    free(page);
    run_result_free(&r);
}

/* The embedded document is the very one --attention writes. */
static void test_embedded_json_equals_attention_file(void **state)
{
    (void)state;
    char json_path[512];
    snprintf(json_path, sizeof json_path, "%s/page.json", temp_dir());
    const char *sentences[] = {"I love China.", "How are you?"};
    RunResult r;
    char *page = make_page(sentences, 2, json_path, &r);
    assert_int_equal(r.status, 0);
    assert_non_null(page);
    char *embedded = embedded_json(page);
    char *file = read_file(json_path, NULL);
    assert_non_null(file);
    cJSON *a = cJSON_Parse(embedded), *b = cJSON_Parse(file);
    assert_non_null(a);
    assert_non_null(b);
    assert_true(cJSON_Compare(a, b, 1));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(a, "sentences")), 2);
    cJSON_Delete(a);
    cJSON_Delete(b);
    free(file);
    free(embedded);
    free(page);
    run_result_free(&r);
}

/* Input that looks like markup stays data: the page keeps exactly its own
 * three script elements, and the text comes back unchanged. */
static void test_markup_in_input_cannot_end_the_script(void **state)
{
    (void)state;
    const char *evil = "</script><!--<script>alert(1)</script>";
    const char *sentences[] = {evil};
    RunResult r;
    char *page = make_page(sentences, 1, NULL, &r);
    assert_non_null(page);
    /* The error catcher, the data and the viewer: three closing tags. */
    assert_int_equal(occurrences(page, "</script"), 3);
    assert_null(strstr(page, "<!--<script"));
    char *embedded = embedded_json(page);
    cJSON *doc = cJSON_Parse(embedded);
    assert_non_null(doc);
    const cJSON *s = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "sentences"), 0);
    assert_string_equal(cJSON_GetObjectItem(s, "text")->valuestring, evil);
    cJSON_Delete(doc);
    free(embedded);
    free(page);
    run_result_free(&r);
}

static void test_unwritable_html_path(void **state)
{
    (void)state;
    const char *argv[] = {"./translate", "-c", TINY, "-q", "--html", "/nonexistent-dir/a.html",
                          "I love China.", "How are you?", NULL};
    RunResult r = run_program(argv, NULL, 0);
    assert_int_equal(r.status, 4);
    assert_int_equal(count_lines(r.out), 2); /* the translations are not lost */
    if (!strstr(r.err, "/nonexistent-dir/a.html: cannot write")) fail_msg("stderr: %s", r.err);
    assert_int_equal(count_lines(r.err), 1);
    assert_int_equal(access("/nonexistent-dir/a.html.tmp", F_OK), -1);
    run_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_mentions_html),
        cmocka_unit_test(test_page_is_written_and_self_contained),
        cmocka_unit_test(test_embedded_json_equals_attention_file),
        cmocka_unit_test(test_markup_in_input_cannot_end_the_script),
        cmocka_unit_test(test_unwritable_html_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
