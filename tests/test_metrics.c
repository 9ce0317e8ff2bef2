/* test_metrics.c — BLEU and chrF2 against sacrebleu.
 *
 * The fixture tests read shared/data/metric-fixtures/expected.json (corpus
 * scores computed by sacrebleu 2.x itself) and require every figure to
 * within 0.01; they skip when the fixtures are absent.  The unit cases
 * below were checked by hand (or against sacrebleu's Python source) and pin
 * down the tokenisers, the smoothing and chrF's corner cases one at a time. */
#include "testutil.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../eval/metrics.h"

#define FIXTURE_DIR "../shared/data/metric-fixtures/"
#define TOLERANCE 0.01

/* cmocka's assert_float_equal works in float; scores need double. */
#define assert_near(got, want, tol)                                           \
    do {                                                                       \
        double got_ = (got), want_ = (want);                                   \
        if (!(fabs(got_ - want_) <= (tol)))                                    \
            print_error("got %.10f, want %.10f (tolerance %g)\n", got_, want_, \
                        (double)(tol));                                        \
        assert_true(fabs(got_ - want_) <= (tol));                              \
    } while (0)

/* ---- tokenisers ---- */

typedef struct {
    const char *in, *out;
} TokCase;

static void check_tokenize(const TokCase *cases, size_t n, MetricTokenize tok)
{
    for (size_t i = 0; i < n; i++) {
        char *got = metric_tokenize(cases[i].in, tok);
        if (strcmp(got, cases[i].out) != 0)
            print_error("tokenize(\"%s\") = \"%s\", want \"%s\"\n", cases[i].in, got,
                        cases[i].out);
        assert_string_equal(got, cases[i].out);
        free(got);
    }
}

static void test_tokenize_13a(void **state)
{
    (void)state;
    static const TokCase cases[] = {
        {"Hello, world!", "Hello , world !"},
        {"It's 3.14, isn't it?", "It's 3.14 , isn't it ?"},
        {"From 1990-2000 the well-known $5.00 deal.",
         "From 1990 - 2000 the well-known $ 5.00 deal ."},
        {"a &amp;lt; b &quot;quoted&quot; <skipped>x", "a < b \" quoted \" x"},
        /* sacrebleu replaces &quot; before &amp;: "&amp;quot;" stays an entity's text */
        {"He said &amp;quot;hi&amp;quot; to me.", "He said & quot ; hi & quot ; to me ."},
        /* U+0085 (NEL) is white space, as Python's str.split() has it */
        {"a\xC2\x85" "b c", "a b c"},
        {"(hi) [there] {you} ~/a_b@c.d", "( hi ) [ there ] { you } ~ / a _ b @ c . d"},
        {"Tom...  wait,1,000 apples.\t ", "Tom . . . wait , 1,000 apples ."},
        {"e.g. U.S.A., end.", "e . g . U . S . A . , end ."},
        {"   ", ""},
        {"", ""},
    };
    check_tokenize(cases, sizeof cases / sizeof cases[0], METRIC_TOKENIZE_13A);
}

static void test_tokenize_zh(void **state)
{
    (void)state;
    static const TokCase cases[] = {
        {"我爱中国。", "我 爱 中 国 。"},
        {"汤姆说，你们生气了。", "汤 姆 说 ， 你 们 生 气 了 。"},
        {"他有3.5个苹果,还有2,000个!", "他 有 3.5 个 苹 果 , 还 有 2,000 个 !"},
        {"Hello世界 ok.", "Hello 世 界 ok ."},
        /* U+201C, U+2026, U+2014 fall in sacrebleu's (mis-written) CJK range */
        {"“引号”…—", "“ 引 号 ” … —"},
        {" \u3000中文\u3000 ", "中 文"},
        {"Tom的iPhone 12很贵。", "Tom 的 iPhone 12 很 贵 。"},
    };
    check_tokenize(cases, sizeof cases / sizeof cases[0], METRIC_TOKENIZE_ZH);
}

static void test_tokenize_for_lang(void **state)
{
    (void)state;
    assert_int_equal(metric_tokenize_for_lang("zh"), METRIC_TOKENIZE_ZH);
    assert_int_equal(metric_tokenize_for_lang("en"), METRIC_TOKENIZE_13A);
    assert_int_equal(metric_tokenize_for_lang(""), METRIC_TOKENIZE_13A);
    assert_int_equal(metric_tokenize_for_lang(NULL), METRIC_TOKENIZE_13A);
}

/* ---- hand-checked scores ---- */

static double bleu_of(const char *hyp, const char *ref)
{
    BleuStats s = {0};
    bleu_add(&s, hyp, ref, METRIC_TOKENIZE_13A);
    return bleu_score(&s);
}

static double chrf_of(const char *hyp, const char *ref)
{
    ChrfStats s = {0};
    chrf_add(&s, hyp, ref);
    return chrf_score(&s);
}

static void test_identical_scores_100(void **state)
{
    (void)state;
    assert_near(bleu_of("The cat sat on the mat.", "The cat sat on the mat."), 100.0,
                       1e-9);
    /* never above: train's checkpoint refuses a best BLEU over 100 */
    assert_true(bleu_of("The cat sat on the mat.", "The cat sat on the mat.") <= 100.0);
    assert_near(chrf_of("The cat sat on the mat.", "The cat sat on the mat."), 100.0,
                       1e-9);
}

/* chrF reads U+0085 (NEL) as white space too: "a NEL b" is "ab" */
static void test_chrf_reads_nel_as_white_space(void **state)
{
    (void)state;
    assert_near(chrf_of("a\xC2\x85" "b", "ab"), 100.0, 1e-9);
}

static void test_empty_hypothesis_scores_0(void **state)
{
    (void)state;
    assert_near(bleu_of("", "The cat sat on the mat."), 0.0, 0.0);
    assert_near(chrf_of("", "The cat sat on the mat."), 0.0, 0.0);
}

static void test_empty_corpus_scores_0(void **state)
{
    (void)state;
    BleuStats b = {0};
    ChrfStats c = {0};
    assert_near(bleu_score(&b), 0.0, 0.0);
    assert_near(chrf_score(&c), 0.0, 0.0);
}

typedef struct {
    const char *hyp, *ref;
    double want;
} ScoreCase;

static void test_bleu_hand_computed(void **state)
{
    (void)state;
    static const ScoreCase cases[] = {
        /* precisions 5/6, 3/5, 2/4, 1/3: (1/12)^(1/4) */
        {"the cat sat on the mat", "the cat sat on a mat", 53.72849659},
        /* 2/4 unigrams, then exp smoothing 1/(2*3), 1/(4*2), 1/(8*1) */
        {"the mat sat on", "the cat sat down", 18.99589214},
        /* one token longer than the reference: no brevity penalty;
         * precisions 5/6, 4/5, 3/4, 2/3: (1/3)^(1/4) */
        {"the cat sat on the mat", "the cat sat on the", 75.98356857},
        /* all precisions 1, brevity penalty exp(1 - 6/4) */
        {"the cat sat on", "the cat sat on the mat", 60.65306597},
        /* no 4-grams at all: sacrebleu's log(0) sends the score to 0 */
        {"the cat sat", "the cat sat", 0.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_near(bleu_of(cases[i].hyp, cases[i].ref), cases[i].want, 1e-6);
}

static void test_chrf_hand_computed(void **state)
{
    (void)state;
    static const ScoreCase cases[] = {
        /* orders 1-2 only: P = 1, R = (2/3 + 1/2) / 2, F2 = 35/55 */
        {"ab", "abc", 63.63636364},
        /* whitespace is removed before counting */
        {"a b c", "abc", 100.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_near(chrf_of(cases[i].hyp, cases[i].ref), cases[i].want, 1e-6);
}

/* sacrebleu counts no hypothesis n-grams of an order the reference lacks:
 * here the 3-grams of "abcd" are not counted, giving P3 = 1/1, not 1/3. */
static void test_chrf_ignores_orders_missing_from_reference(void **state)
{
    (void)state;
    ChrfStats s = {0};
    chrf_add(&s, "abcd", "ab");
    chrf_add(&s, "abc", "abc");
    assert_int_equal(s.hyp[2], 1);
    assert_near(chrf_score(&s), 94.40559441, 1e-6);
}

static void test_invalid_utf8_does_not_crash(void **state)
{
    (void)state;
    const char *bad = "ab\xff\xc3 \xe4\xb8 \xed\xa0\x80 end";
    char *t = metric_tokenize(bad, METRIC_TOKENIZE_ZH);
    free(t);
    t = metric_tokenize(bad, METRIC_TOKENIZE_13A);
    free(t);
    assert_near(chrf_of(bad, bad), 100.0, 1e-9);
    BleuStats s = {0};
    bleu_add(&s, bad, bad, METRIC_TOKENIZE_ZH);
    assert_int_equal(s.hyp_len, s.ref_len);
}

/* ---- sacrebleu fixtures ---- */

/* Split a whole file into lines in place ('\n' becomes '\0'); a final
 * newline does not start another line.  Returns a new array of pointers. */
static char **split_lines(char *text, size_t len, size_t *count)
{
    char **lines = malloc((len + 1) * sizeof *lines);
    assert_non_null(lines);
    *count = 0;
    for (char *p = text; p < text + len;) {
        char *nl = memchr(p, '\n', (size_t)(text + len - p));
        lines[(*count)++] = p;
        if (!nl) break;
        *nl = '\0';
        p = nl + 1;
    }
    return lines;
}

typedef struct {
    char *text;
    char **lines;
    size_t count;
} Lines;

static int read_lines(const char *name, Lines *out)
{
    char path[512];
    size_t len;
    snprintf(path, sizeof path, FIXTURE_DIR "%s", name);
    out->text = read_file(path, &len);
    if (!out->text) return -1;
    out->lines = split_lines(out->text, len, &out->count);
    return 0;
}

static void lines_free(Lines *l)
{
    free(l->lines);
    free(l->text);
}

/* For every entry of expected.json, score the corpus with both metrics and
 * compare with sacrebleu's figures.  `which` selects the metric checked. */
typedef enum { CHECK_BLEU, CHECK_CHRF } Check;

static void check_fixtures(Check which)
{
    size_t len;
    char *json = read_file(FIXTURE_DIR "expected.json", &len);
    if (!json) SKIP_TEST("data", "no sacrebleu fixtures: cannot read %s", FIXTURE_DIR "expected.json");
    cJSON *root = cJSON_Parse(json);
    free(json);
    assert_non_null(root);

    int checked = 0;
    for (const cJSON *e = root->child; e; e = e->next) {
        const char *hyp_name = cJSON_GetStringValue(cJSON_GetObjectItem(e, "hyp"));
        const char *ref_name = cJSON_GetStringValue(cJSON_GetObjectItem(e, "ref"));
        const char *tok_name = cJSON_GetStringValue(cJSON_GetObjectItem(e, "tokenize"));
        const cJSON *want = cJSON_GetObjectItem(e, which == CHECK_BLEU ? "bleu" : "chrf2");
        assert_true(hyp_name && ref_name && tok_name && cJSON_IsNumber(want));

        Lines hyp, ref;
        assert_int_equal(read_lines(hyp_name, &hyp), 0);
        assert_int_equal(read_lines(ref_name, &ref), 0);
        assert_int_equal(hyp.count, ref.count);

        MetricTokenize tok = strcmp(tok_name, "zh") == 0 ? METRIC_TOKENIZE_ZH
                                                         : METRIC_TOKENIZE_13A;
        BleuStats bs = {0};
        ChrfStats cs = {0};
        for (size_t i = 0; i < hyp.count; i++) {
            if (which == CHECK_BLEU) bleu_add(&bs, hyp.lines[i], ref.lines[i], tok);
            else chrf_add(&cs, hyp.lines[i], ref.lines[i]);
        }
        double got = which == CHECK_BLEU ? bleu_score(&bs) : chrf_score(&cs);
        printf("  %-13s %-5s ours %8.4f  sacrebleu %8.4f  diff %+.5f\n", e->string,
               which == CHECK_BLEU ? "BLEU" : "chrF2", got, want->valuedouble,
               got - want->valuedouble);
        assert_near(got, want->valuedouble, TOLERANCE);
        lines_free(&hyp);
        lines_free(&ref);
        checked++;
    }
    cJSON_Delete(root);
    assert_true(checked > 0);
}

static void test_bleu_matches_sacrebleu_fixtures(void **state)
{
    (void)state;
    check_fixtures(CHECK_BLEU);
}

static void test_chrf_matches_sacrebleu_fixtures(void **state)
{
    (void)state;
    check_fixtures(CHECK_CHRF);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokenize_13a),
        cmocka_unit_test(test_tokenize_zh),
        cmocka_unit_test(test_tokenize_for_lang),
        cmocka_unit_test(test_identical_scores_100),
        cmocka_unit_test(test_chrf_reads_nel_as_white_space),
        cmocka_unit_test(test_empty_hypothesis_scores_0),
        cmocka_unit_test(test_empty_corpus_scores_0),
        cmocka_unit_test(test_bleu_hand_computed),
        cmocka_unit_test(test_chrf_hand_computed),
        cmocka_unit_test(test_chrf_ignores_orders_missing_from_reference),
        cmocka_unit_test(test_invalid_utf8_does_not_crash),
        cmocka_unit_test(test_bleu_matches_sacrebleu_fixtures),
        cmocka_unit_test(test_chrf_matches_sacrebleu_fixtures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
