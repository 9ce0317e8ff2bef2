/* test_bootstrap.c — is a difference between two systems measurable?
 * eval/bootstrap.h's paired resampling, and translate --eval --compare,
 * which uses it. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../app/translator.h"
#include "../data/dataset.h"
#include "../eval/bootstrap.h"
#include "../eval/evaluate.h"

#define TINY "configs/tiny.yaml"
#define TINY_TSV "tests/data/tiny.tsv"
#define TINY_LINES 16

/* Twelve references, each with a weaker and a stronger translation: the
 * stronger one is the reference itself, the weaker drops words. */
static const char *const refs[] = {
    "I love China.", "I want to eat fish.", "How are you today?", "The cat is sleeping on the sofa.",
    "We are students of this school.", "She likes green tea very much.", "He reads a book every night.",
    "It is raining again today.", "Tom's dog is very big.", "Please open the door for me.",
    "Where is the train station?", "They went home after dinner.",
};
static const char *const weaker[] = {
    "I love.", "I want eat fish.", "How you today?", "The cat sleeping sofa.",
    "We students of school.", "She likes tea much.", "He reads book night.",
    "It raining today.", "Tom dog is big.", "Please open door.",
    "Where is station?", "They went after dinner.",
};
enum { N_REFS = sizeof refs / sizeof refs[0] };

static void stats_of(const char *const *hyps, BleuStats *bleu, ChrfStats *chrf)
{
    for (int i = 0; i < N_REFS; i++) {
        memset(&bleu[i], 0, sizeof bleu[i]);
        memset(&chrf[i], 0, sizeof chrf[i]);
        bleu_add(&bleu[i], hyps[i], refs[i], METRIC_TOKENIZE_13A);
        chrf_add(&chrf[i], hyps[i], refs[i]);
    }
}

/* The weaker translations' statistics and the references' own. */
typedef struct {
    BleuStats weak_bleu[N_REFS], strong_bleu[N_REFS];
    ChrfStats weak_chrf[N_REFS], strong_chrf[N_REFS];
} Systems;

static Systems weak_and_strong(void)
{
    Systems s;
    stats_of(weaker, s.weak_bleu, s.weak_chrf);
    stats_of(refs, s.strong_bleu, s.strong_chrf);
    return s;
}

/* A corpus' statistics are its sentences' merged: the same score as adding
 * every pair to one struct. */
static void test_merged_sentences_score_as_the_corpus(void **state)
{
    (void)state;
    BleuStats each_bleu[N_REFS], corpus_bleu = {0}, merged_bleu = {0};
    ChrfStats each_chrf[N_REFS], corpus_chrf = {0}, merged_chrf = {0};
    stats_of(weaker, each_bleu, each_chrf);
    for (int i = 0; i < N_REFS; i++) {
        bleu_add(&corpus_bleu, weaker[i], refs[i], METRIC_TOKENIZE_13A);
        chrf_add(&corpus_chrf, weaker[i], refs[i]);
        bleu_merge(&merged_bleu, &each_bleu[i]);
        chrf_merge(&merged_chrf, &each_chrf[i]);
    }
    assert_memory_equal(&corpus_bleu, &merged_bleu, sizeof corpus_bleu);
    assert_memory_equal(&corpus_chrf, &merged_chrf, sizeof corpus_chrf);
    assert_true(bleu_score(&merged_bleu) > 0.0 && bleu_score(&merged_bleu) < 100.0);
}

static void test_the_same_system_twice_differs_by_nothing(void **state)
{
    (void)state;
    BleuStats bleu[N_REFS];
    ChrfStats chrf[N_REFS];
    stats_of(weaker, bleu, chrf);
    BootstrapResult r;
    bootstrap_bleu(bleu, bleu, N_REFS, BOOTSTRAP_RESAMPLES, &r);
    assert_true(r.difference == 0.0 && r.low == 0.0 && r.high == 0.0);
    assert_int_equal(r.b_higher, 0);
    assert_int_equal(r.resamples, BOOTSTRAP_RESAMPLES);
    assert_string_equal(bootstrap_verdict(&r), "no measurable difference");
    bootstrap_chrf(chrf, chrf, N_REFS, BOOTSTRAP_RESAMPLES, &r);
    assert_true(r.difference == 0.0 && r.low == 0.0 && r.high == 0.0);
    assert_string_equal(bootstrap_verdict(&r), "no measurable difference");
}

/* B better on every sentence: better on every resample, whichever way round. */
static void test_better_on_every_sentence_is_measurably_higher(void **state)
{
    (void)state;
    Systems sys = weak_and_strong();
    BootstrapResult r;
    bootstrap_bleu(sys.weak_bleu, sys.strong_bleu, N_REFS, BOOTSTRAP_RESAMPLES, &r);
    assert_true(r.score_b > 99.999 && r.score_a < 90.0);
    assert_true(r.difference == r.score_b - r.score_a);
    assert_int_equal(r.b_higher, BOOTSTRAP_RESAMPLES);
    assert_true(0.0 < r.low && r.low <= r.high);
    assert_string_equal(bootstrap_verdict(&r), "measurably higher");
    bootstrap_bleu(sys.strong_bleu, sys.weak_bleu, N_REFS, BOOTSTRAP_RESAMPLES, &r);
    assert_int_equal(r.b_higher, 0);
    assert_true(r.low <= r.high && r.high < 0.0);
    assert_string_equal(bootstrap_verdict(&r), "measurably lower");
    bootstrap_chrf(sys.weak_chrf, sys.strong_chrf, N_REFS, BOOTSTRAP_RESAMPLES, &r);
    assert_int_equal(r.b_higher, BOOTSTRAP_RESAMPLES);
    assert_string_equal(bootstrap_verdict(&r), "measurably higher");
}

/* Each system better on half of the sentences: the interval straddles zero,
 * and the same inputs always give the same interval (a fixed seed). */
static void test_a_mixed_result_is_no_measurable_difference(void **state)
{
    (void)state;
    const char *a[N_REFS], *b[N_REFS];
    for (int i = 0; i < N_REFS; i++) {
        a[i] = i % 2 ? refs[i] : weaker[i];
        b[i] = i % 2 ? weaker[i] : refs[i];
    }
    BleuStats bleu_a[N_REFS], bleu_b[N_REFS];
    ChrfStats chrf_a[N_REFS], chrf_b[N_REFS];
    stats_of(a, bleu_a, chrf_a);
    stats_of(b, bleu_b, chrf_b);
    BootstrapResult r, again;
    bootstrap_bleu(bleu_a, bleu_b, N_REFS, BOOTSTRAP_RESAMPLES, &r);
    assert_true(r.low < 0.0 && r.high > 0.0);
    assert_true(r.b_higher > 0 && r.b_higher < BOOTSTRAP_RESAMPLES);
    assert_string_equal(bootstrap_verdict(&r), "no measurable difference");
    bootstrap_bleu(bleu_a, bleu_b, N_REFS, BOOTSTRAP_RESAMPLES, &again);
    assert_memory_equal(&r, &again, sizeof r);
}

/* One sentence: every resample is that sentence, so the interval is the
 * difference itself; and one resample is enough to run. */
static void test_one_sentence_and_one_resample(void **state)
{
    (void)state;
    Systems sys = weak_and_strong();
    BootstrapResult r;
    bootstrap_chrf(&sys.weak_chrf[3], &sys.strong_chrf[3], 1, 10, &r);
    assert_true(r.difference > 0.0 && r.low == r.difference && r.high == r.difference);
    assert_int_equal(r.b_higher, 10);
    bootstrap_bleu(sys.weak_bleu, sys.strong_bleu, N_REFS, 1, &r);
    assert_int_equal(r.resamples, 1);
    assert_true(r.low == r.high && r.low > 0.0);
}

/* The interval leaves 2.5% of the values out on each side, whatever
 * order they come in. */
static void test_the_interval_is_the_middle_95_percent(void **state)
{
    (void)state;
    double values[1000], low, high;
    for (int i = 0; i < 1000; i++) values[i] = (double)((i * 617) % 1000); /* 0..999, shuffled */
    bootstrap_interval(values, 1000, &low, &high);
    assert_true(low == 25.0 && high == 974.0);
    for (int i = 0; i < 40; i++) values[i] = (double)(39 - i);
    bootstrap_interval(values, 40, &low, &high);
    assert_true(low == 1.0 && high == 38.0);
    values[0] = 7.0;
    bootstrap_interval(values, 1, &low, &high);
    assert_true(low == 7.0 && high == 7.0);
}

/* ---- translate --eval --compare ------------------------------------------------ */

static const char *scratch(const char *name)
{
    static char paths[4][512];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, sizeof paths[0], "%s/%s", temp_dir(), name);
    return p;
}

/* Compared with its own translations, a run differs by nothing; compared
 * with empty translations it is measurably higher on both metrics. */
static void test_compare_prints_the_difference_and_its_interval(void **state)
{
    (void)state;
    const char *own = scratch("own.hyps");
    const char *write[] = {"./translate", "-q", "-c", "en-zh", "-b", "1", "--eval", TINY_TSV, "--hyps", own, NULL};
    RunResult r = run_program(write, NULL, 0);
    assert_int_equal(r.status, 0);
    run_result_free(&r);

    const char *same[] = {"./translate", "-q", "-c", "en-zh", "-b", "1", "--eval", TINY_TSV, "--compare", own, NULL};
    r = run_program(same, NULL, 0);
    if (r.status != 0) print_in_full(&r);
    assert_int_equal(r.status, 0);
    assert_int_equal(count_lines(r.out), 4);
    char want[1024];
    snprintf(want, sizeof want, "compared with %s (BLEU ", own);
    expect_in(r.out, want);
    expect_in(r.out, "paired bootstrap over 1000 resamples:\n");
    expect_in(r.out, "  BLEU  +0.00, 95% interval [+0.00, +0.00], this run higher in 0 of 1000: no measurable difference\n");
    expect_in(r.out, "  chrF2 +0.00, 95% interval [+0.00, +0.00], this run higher in 0 of 1000: no measurable difference\n");
    run_result_free(&r);

    char empty[TINY_LINES + 1];
    memset(empty, '\n', TINY_LINES);
    const char *blank = temp_file("blank.hyps", empty, TINY_LINES);
    const char *against_blank[] = {"./translate", "-q", "-c", "en-zh", "-b", "1", "--eval", TINY_TSV,
                                   "--compare", blank, NULL};
    r = run_program(against_blank, NULL, 0);
    assert_int_equal(r.status, 0);
    expect_in(r.out, "(BLEU 0.00  chrF2 0.00)");
    expect_in(r.out, "this run higher in 1000 of 1000: measurably higher\n  chrF2");
    expect_in(r.out, "this run higher in 1000 of 1000: measurably higher\n");
    run_result_free(&r);

    /* a BOM before the first line is not part of it: the same scores */
    size_t len;
    char *text = read_file(own, &len);
    char *with_bom = malloc(len + 3);
    memcpy(with_bom, "\xEF\xBB\xBF", 3);
    memcpy(with_bom + 3, text, len);
    const char *bom = temp_file("bom.hyps", with_bom, len + 3);
    free(text);
    free(with_bom);
    const char *against_bom[] = {"./translate", "-q", "-c", "en-zh", "-b", "1", "--eval", TINY_TSV,
                                 "--compare", bom, NULL};
    r = run_program(against_bom, NULL, 0);
    assert_int_equal(r.status, 0);
    expect_in(r.out, "  chrF2 +0.00, 95% interval [+0.00, +0.00], this run higher in 0 of 1000");
    run_result_free(&r);
}

/* A file that does not pair line for line with the TSV is refused before
 * anything is translated: one line naming it, status 1. */
static void test_compare_refuses_a_file_that_does_not_pair(void **state)
{
    (void)state;
#define TEXT(s) s, sizeof s - 1
    struct {
        const char *name, *text;
        size_t len;
        const char *phrase;
    } cases[] = {
        {"short.hyps", TEXT("我爱中国。\n我想吃鱼。\n你好吗？\n"), ": 3 lines, " TINY_TSV " has 16 sentences (its non-blank lines)"},
        {"long.hyps", TEXT("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\no\np\nq\n"),
         ": 17 lines, " TINY_TSV " has 16 sentences (its non-blank lines)"},
        {"nul.hyps", TEXT("a\nb\0c\n"), ":2: NUL byte in line"},
        {"utf8.hyps", TEXT("a\nb\xff\n"), ":2: not valid UTF-8"},
        {"missing.hyps", NULL, 0, ": cannot open"},
        /* the other direction's translations of the same TSV (zh-en's
         * --hyps beside an en-zh run): they paired, scored BLEU 0 and
         * made this run "measurably higher", status 0 */
        {"english.hyps",
         TEXT("I love China.\nI want to eat fish.\nHow are you?\nThe cat is sleeping.\nWe are students.\n"
              "She likes tea.\nHe reads.\nIt rains today.\nTom's dog is big.\nPlease open the door.\n"
              "I don't know.\nWhere is the station?\nThe water is cold.\n\n42\nThank you very much!\n"),
         ": reads as English in 14 of 14 lines, where this run's translations are Chinese: the translations "
         "of the other direction?"},
    };
#undef TEXT
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *path = cases[i].text ? temp_file(cases[i].name, cases[i].text, cases[i].len)
                                         : scratch(cases[i].name);
        const char *argv[] = {"./translate", "-q", "-c", TINY, "--eval", TINY_TSV, "--compare", path, NULL};
        RunResult r = run_program(argv, NULL, 0);
        char want[1024];
        snprintf(want, sizeof want, "translate: --compare %s%s", path, cases[i].phrase);
        if (r.status != 1 || !strstr(r.err, want))
            fail_msg("%s: status %d, stderr '%s' (want 1, '%s')", cases[i].name, r.status, r.err, want);
        assert_int_equal(count_lines(r.err), 1);
        assert_string_equal(r.out, "");
        run_result_free(&r);
    }
}

/* The references themselves are never "the other direction": a Chinese
 * reference may read as English (3 Han characters, 3 Latin words, the
 * first Latin), and a 1-line TSV's own reference, given as --compare, was
 * refused ("reads as English in 1 of 1 lines", status 1).  Only lines
 * whose references read as the target language count; the other
 * direction's lines beside them are still refused. */
static void test_compare_takes_the_references_themselves(void **state)
{
    (void)state;
    static const char one[] = "The iPhone 15 Pro Max is out.\tiPhone 15 Pro Max上市了。\n";
    const char *data = temp_file("latin.tsv", one, sizeof one - 1);
    static const char refs[] = "iPhone 15 Pro Max上市了。\n";
    const char *theirs = temp_file("latin-refs.hyps", refs, sizeof refs - 1);
    const char *argv[] = {"./translate", "-q", "-c", TINY, "--eval", data, "--compare", theirs, NULL};
    RunResult r = run_program(argv, NULL, 0);
    if (r.status != 0) fail_msg("the references refused: status %d, stderr '%s'", r.status, r.err);
    expect_in(r.out, "compared with ");
    run_result_free(&r);
    static const char two[] = "The iPhone 15 Pro Max is out.\tiPhone 15 Pro Max上市了。\n"
                              "I love China.\t我爱中国。\n";
    argv[5] = temp_file("latin2.tsv", two, sizeof two - 1);
    static const char english[] = "iPhone 15 Pro Max上市了。\nI love China.\n";
    argv[7] = temp_file("latin-english.hyps", english, sizeof english - 1);
    r = run_program(argv, NULL, 0);
    assert_int_equal(r.status, 1);
    expect_in(r.err, ": reads as English in 1 of 1 lines");
    run_result_free(&r);
}

/* --compare needs --eval; --hyps never replaces the file compared with,
 * and says so before translating anything. */
static void test_compare_needs_eval_and_is_an_input(void **state)
{
    (void)state;
    const char *alone[] = {"./translate", "-c", TINY, "--compare", "x.hyps", "I love China.", NULL};
    RunResult r = run_program(alone, NULL, 0);
    assert_int_equal(r.status, 2);
    expect_in(r.err, "--compare needs --eval");
    run_result_free(&r);

    char lines[TINY_LINES * 4 + 1]; /* Chinese, as an en-zh run's translations are */
    for (int i = 0; i < TINY_LINES; i++) memcpy(lines + 4 * i, "好\n", 4);
    const char *theirs = temp_file("theirs.hyps", lines, TINY_LINES * 4);
    const char *over[] = {"./translate", "-q", "-c", TINY, "--eval", TINY_TSV, "--compare", theirs,
                          "--hyps", theirs, NULL};
    r = run_program(over, NULL, 0);
    assert_int_equal(r.status, 4);
    expect_in(r.err, "--hyps would overwrite");
    assert_string_equal(r.out, ""); /* refused before translating */
    size_t len;
    char *kept = read_file(theirs, &len);
    assert_true(kept && len == TINY_LINES * 4 && memcmp(kept, lines, len) == 0);
    free(kept);
    run_result_free(&r);
}

/* --eval's progress counts the sentences done: its last report is all of
 * them ("16 of 16"), not the chunks begun ("0 of 16" at the end). */
static void record_progress(void *context, size_t done, size_t total)
{
    size_t *seen = context;
    seen[0] = done;
    seen[1] = total;
    seen[2]++;
}

static void test_eval_progress_ends_with_every_sentence(void **state)
{
    (void)state;
    Translator tr;
    Error err = {{0}};
    if (translator_open(&tr, "configs/tiny.yaml", &err)) fail_msg("%s", err.message);
    Dataset d;
    if (dataset_load(&d, "tests/data/tiny.tsv", 0, 1, tr.src_vocab, tr.tgt_vocab, tr.model.arch.max_len, &err))
        fail_msg("%s", err.message);
    size_t seen[3] = {0};
    EvalScores scores;
    evaluate(&tr.model, &d, tr.tgt_vocab, &tr.config.decode, tr.config.target_lang, NULL, NULL, record_progress,
             seen, &scores);
    assert_true(seen[2] >= 1);
    assert_int_equal(seen[0], d.count);
    assert_int_equal(seen[1], d.count);
    dataset_free(&d);
    translator_close(&tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eval_progress_ends_with_every_sentence),
        cmocka_unit_test(test_merged_sentences_score_as_the_corpus),
        cmocka_unit_test(test_the_same_system_twice_differs_by_nothing),
        cmocka_unit_test(test_better_on_every_sentence_is_measurably_higher),
        cmocka_unit_test(test_a_mixed_result_is_no_measurable_difference),
        cmocka_unit_test(test_one_sentence_and_one_resample),
        cmocka_unit_test(test_the_interval_is_the_middle_95_percent),
        cmocka_unit_test(test_compare_prints_the_difference_and_its_interval),
        cmocka_unit_test(test_compare_refuses_a_file_that_does_not_pair),
        cmocka_unit_test(test_compare_takes_the_references_themselves),
        cmocka_unit_test(test_compare_needs_eval_and_is_an_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
