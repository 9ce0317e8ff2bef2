/* test_eval_script.c — tools/eval.sh, the script behind `make eval`
 * (issue 13): the table it writes between the doc's markers, the
 * mid-sentence capital and <unk> counts, and a failed run that leaves the
 * doc as it was.
 *
 * The real runs use configs/tiny.yaml (random weights, written on first
 * use) on tests/data/tiny.tsv: seconds, and no shipped weights or shared
 * data needed.  The counts are checked against a stand-in for translate
 * (a shell script, $TRANSLATE) whose translations are known. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DOC_BEFORE "# Models\n\ntext before\n<!-- eval:begin -->\nthe old table\n"
#define DOC_AFTER "<!-- eval:end -->\n\ntext after\n"

static RunResult eval_script(const char *const extra[], const char *translate)
{
    const char *argv[32] = {"/bin/sh", "tools/eval.sh"};
    int n = 2;
    for (int i = 0; extra[i]; i++) argv[n++] = extra[i];
    argv[n] = NULL;
    setenv("TRANSLATE", translate, 1);
    RunResult r = run_program(argv, NULL, 0);
    unsetenv("TRANSLATE");
    return r;
}

static char *slurp(const char *path)
{
    size_t len;
    char *s = read_file(path, &len);
    if (!s) fail_msg("%s: cannot read it", path);
    return s;
}

static void test_writes_the_table_between_the_markers(void **state)
{
    (void)state;
    const char *doc = temp_file("doc.md", DOC_BEFORE DOC_AFTER, strlen(DOC_BEFORE DOC_AFTER));
    const char *args[] = {"--doc", doc, "--config", "configs/tiny.yaml", "--set", "tests/data/tiny.tsv",
                          "--beams", "1 2", NULL};
    RunResult r = eval_script(args, test_program("./translate"));
    if (r.status != 0) {
        print_in_full(&r);
        fail_msg("eval.sh exited %d", r.status);
    }
    /* One progress line per run, and the last one. */
    expect_in(r.err, "eval: [1/2] tiny on data/tiny.tsv (greedy): BLEU ");
    expect_in(r.err, "eval: [2/2] tiny on data/tiny.tsv (beam 2): BLEU ");
    expect_in(r.err, "eval: 2 runs in ");
    char *text = slurp(doc);
    expect_in(text, "# Models\n\ntext before\n<!-- eval:begin -->\nMeasured ");
    expect_in(text, "by `make eval` (tools/eval.sh), commit ");
    expect_in(text, "| model | dev set (sentences) | decoding | BLEU | chrF2 | mid-sentence capitals |");
    expect_in(text, "| tiny | data/tiny.tsv (16) | greedy | ");
    expect_in(text, "| tiny | data/tiny.tsv (16) | beam 2 | ");
    expect_in(text, "|\n" DOC_AFTER);
    assert_null(strstr(text, "the old table"));
    free(text);

    /* Run again: the table is replaced, not added. */
    run_result_free(&r);
    r = eval_script(args, test_program("./translate"));
    assert_int_equal(r.status, 0);
    text = slurp(doc);
    char *first = strstr(text, "Measured ");
    assert_non_null(first);
    assert_null(strstr(first + 1, "Measured "));
    free(text);
    run_result_free(&r);
}

/* A stand-in for translate: with --hyps, five known English translations
 * and an --eval line; without, one <unk> note (line 2) on stderr. */
static const char FAKE_TRANSLATE[] =
    "#!/bin/sh\n"
    "hyps=\n"
    "while [ $# -gt 0 ]; do [ \"$1\" = --hyps ] && hyps=$2; shift; done\n"
    "if [ -z \"$hyps\" ]; then\n"
    "    echo \"translate: line 2: note: 2 unknown words mapped to <unk>: 'a', 'b'\" >&2\n"
    "    exit 0\n"
    "fi\n"
    "printf '%s\\n' 'I saw Tom in Beijing.' 'He likes Apples.' 'Where is the Cat? The dog is here.' \\\n"
    "    '\"Go home,\" she said. She left.' \"I'm sure I'll Go.\" > \"$hyps\"\n"
    "echo 'x.tsv: fake, 5 sentences: BLEU 12.34  chrF2 56.78  (greedy; 0.5 s, 1 not translatable)'\n"
    "echo 'translate: x.tsv:3: not translated (scored as empty): invalid UTF-8 at byte 0' >&2\n"
    "exit 1\n";

/* Its references (English first, as in every set), after a byte order
 * mark and a blank line, with a line of spaces among them: --eval skips
 * both, so the references must skip them too, to pair with the
 * translations (a line of spaces paired each later translation with the
 * reference before its own). */
static const char FAKE_SET[] = "\xef\xbb\xbf\r\n"
                               "I saw Tom in Beijing.\t甲\n"     /* names: no capital counted */
                               "   \n"
                               "He likes apples.\t乙\n"          /* Apples: counted */
                               "Where is the cat? The dog is here.\t丙\n" /* Cat counted, The not */
                               "\"Go home,\" she said. She left.\t丁\n"  /* quote, sentence: not */
                               "I'm sure I'll go.\t戊\n";       /* I'm, I'll not; Go counted */

/* (its languages quoted, as YAML allows and translate reads them) */
static const char FAKE_CONFIG[] = "name: fake\nsource_language: \"zh\"\ntarget_language: 'en'\n";

/* --doc through a symbolic link: the file it names gets the table, the
 * link stays a link (a rename over it had replaced the link and left the
 * doc as it was); the doc's mode stays; a read-only doc is refused, as
 * translate's outputs are. */
static void test_a_linked_or_read_only_doc(void **state)
{
    (void)state;
    const char *doc = temp_file("real-doc.md", DOC_BEFORE DOC_AFTER, strlen(DOC_BEFORE DOC_AFTER));
    assert_int_equal(chmod(doc, 0640), 0);
    char link[700];
    snprintf(link, sizeof link, "%s/doc-link.md", temp_dir());
    unlink(link);
    assert_int_equal(symlink("real-doc.md", link), 0); /* beside it */
    const char *args[] = {"--doc", link, "--config", "configs/tiny.yaml", "--set", "tests/data/tiny.tsv",
                          "--beams", "1", NULL};
    RunResult r = eval_script(args, test_program("./translate"));
    if (r.status != 0) {
        print_in_full(&r);
        fail_msg("eval.sh exited %d", r.status);
    }
    run_result_free(&r);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    char *text = slurp(doc);
    expect_in(text, "| tiny | data/tiny.tsv (16) | greedy | ");
    free(text);
    assert_int_equal(stat(doc, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    /* read-only: refused before any run, the doc as it was */
    const char *ro = temp_file("ro-doc.md", DOC_BEFORE DOC_AFTER, strlen(DOC_BEFORE DOC_AFTER));
    assert_int_equal(chmod(ro, 0444), 0);
    const char *ro_args[] = {"--doc", ro, "--config", "configs/tiny.yaml", "--set", "tests/data/tiny.tsv",
                             "--beams", "1", NULL};
    r = eval_script(ro_args, test_program("./translate"));
    if (r.status != 2) fail_msg("read-only doc: status %d: %s", r.status, r.err);
    expect_in(r.err, "the file is read-only");
    run_result_free(&r);
    expect_file_is(ro, DOC_BEFORE DOC_AFTER);
}

static void test_counts_capitals_and_unknown_words(void **state)
{
    (void)state;
    const char *fake = temp_file("fake-translate", FAKE_TRANSLATE, strlen(FAKE_TRANSLATE));
    chmod(fake, 0755);
    char set[512], config[512];
    snprintf(set, sizeof set, "%s", temp_file("x.tsv", FAKE_SET, strlen(FAKE_SET)));
    snprintf(config, sizeof config, "%s", temp_file("fake.yaml", FAKE_CONFIG, strlen(FAKE_CONFIG)));
    const char *doc = temp_file("doc.md", DOC_BEFORE DOC_AFTER, strlen(DOC_BEFORE DOC_AFTER));
    const char *args[] = {"--doc", doc, "--config", config, "--set", set, "--beams", "1", NULL};
    RunResult r = eval_script(args, fake);
    if (r.status != 0) {
        print_in_full(&r);
        fail_msg("eval.sh exited %d", r.status);
    }
    char *text = slurp(doc);
    /* 3 wrong capitals, 1 source with <unk>, 0.5 s; the untranslatable line noted. */
    expect_in(text, "| fake | ");
    expect_in(text, " (5) | greedy | 12.34 | 56.78 | 3 | 1 | 0.5 |\n");
    expect_in(text, "Not translatable (scored as empty): fake on ");
    free(text);
    run_result_free(&r);
}

/* Lines of s that are not progress lines ("eval: [i/n] ..."). */
static int error_lines(const char *s)
{
    int n = 0;
    for (const char *line = s; *line;) {
        n += strncmp(line, "eval: [", 7) != 0;
        const char *nl = strchr(line, '\n');
        line = nl ? nl + 1 : line + strlen(line);
    }
    return n;
}

/* Every failure: one error line (after the progress lines of the runs
 * that succeeded), the documented status, the doc intact. */
static void expect_failure(const char *const args[], const char *translate, const char *doc,
                           const char *doc_text, int status, const char *phrase)
{
    RunResult r = eval_script(args, translate);
    if (r.status != status || error_lines(r.err) != 1) {
        print_in_full(&r);
        fail_msg("expected status %d and one error line, got %d and %d", status, r.status,
                 error_lines(r.err));
    }
    expect_in(r.err, phrase);
    char *text = slurp(doc);
    assert_string_equal(text, doc_text);
    free(text);
    run_result_free(&r);
}

static void test_failures_leave_the_doc_unchanged(void **state)
{
    (void)state;
    const char *doc_text = DOC_BEFORE DOC_AFTER;
    char doc[512];
    snprintf(doc, sizeof doc, "%s", temp_file("doc.md", doc_text, strlen(doc_text)));
    const char *translate = test_program("./translate");

    /* A run that fails (the weights are missing: translate's status 3). */
    static const char broken[] = "name: broken\nsource_language: en\ntarget_language: zh\n"
                                 "model:\n  weights: no-such.safetensors\n"
                                 "  source_vocab: no-such.src.vocab\n  target_vocab: no-such.tgt.vocab\n"
                                 "architecture:\n  d_model: 16\n  heads: 2\n  encoder_layers: 1\n"
                                 "  decoder_layers: 1\n  d_ff: 32\n  activation: relu\n  norm: pre\n"
                                 "  max_len: 32\n  scale_attention: true\n  tied_output_embedding: true\n";
    char config[512];
    snprintf(config, sizeof config, "%s", temp_file("broken.yaml", broken, strlen(broken)));
    const char *failing[] = {"--doc", doc, "--config", "configs/tiny.yaml", "--config", config,
                             "--set", "tests/data/tiny.tsv", "--beams", "1", NULL};
    expect_failure(failing, translate, doc, doc_text, 1, "eval.sh: broken on data/tiny.tsv");

    /* A missing set, and a doc without its markers. */
    const char *no_set[] = {"--doc", doc, "--set", "no-such.tsv", NULL};
    expect_failure(no_set, translate, doc, doc_text, 2, "eval.sh: no-such.tsv: cannot read it");
    const char *plain = "# no markers\n";
    char plain_doc[512];
    snprintf(plain_doc, sizeof plain_doc, "%s", temp_file("plain.md", plain, strlen(plain)));
    const char *no_markers[] = {"--doc", plain_doc, "--config", "configs/tiny.yaml", "--set",
                                "tests/data/tiny.tsv", NULL};
    expect_failure(no_markers, translate, plain_doc, plain, 2, "needs one line '<!-- eval:begin -->', then");
    const char *reversed = "<!-- eval:end -->\nkept\n<!-- eval:begin -->\n";
    snprintf(plain_doc, sizeof plain_doc, "%s", temp_file("reversed.md", reversed, strlen(reversed)));
    expect_failure(no_markers, translate, plain_doc, reversed, 2, "then one line '<!-- eval:end -->'");
    const char *bad_beam[] = {"--doc", doc, "--config", "configs/tiny.yaml", "--set", "tests/data/tiny.tsv",
                              "--beams", "1 x", NULL};
    expect_failure(bad_beam, translate, doc, doc_text, 2, "--beams: 'x' is not a number");
    const char *zero_beam[] = {"--doc", doc, "--config", "configs/tiny.yaml", "--set", "tests/data/tiny.tsv",
                               "--beams", "1 0", NULL};
    expect_failure(zero_beam, translate, doc, doc_text, 2, "--beams: 0 is not a beam width");
    /* an empty list ran nothing and wrote an empty table */
    const char *no_beams[] = {"--doc", doc, "--config", "configs/tiny.yaml", "--beams", " ", NULL};
    expect_failure(no_beams, translate, doc, doc_text, 2, "--beams needs a list");
    const char *no_config[] = {"--doc", doc, "--config", "", NULL};
    expect_failure(no_config, translate, doc, doc_text, 2, "--config needs a file");
    /* a set translate cannot read: its error quoted, not "cannot read the scores" */
    const char *no_tab = "no tab here\n";
    char set[512];
    snprintf(set, sizeof set, "%s", temp_file("no-tab.tsv", no_tab, strlen(no_tab)));
    const char *unreadable[] = {"--doc", doc, "--config", "configs/tiny.yaml", "--set", set, "--beams", "1", NULL};
    expect_failure(unreadable, translate, doc, doc_text, 1, "expected at least 2 tab-separated columns");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writes_the_table_between_the_markers),
        cmocka_unit_test(test_a_linked_or_read_only_doc),
        cmocka_unit_test(test_counts_capitals_and_unknown_words),
        cmocka_unit_test(test_failures_leave_the_doc_unchanged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
