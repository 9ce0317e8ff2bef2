/* test_probes.c — the shipped models on tests/data/probes.tsv (issue 13):
 * short everyday sentences whose translation must contain given words
 * (names, cities, numbers, prices, foods).  Each direction's probes go
 * through one ./translate run, on stdin, with the config's own decoding,
 * as a user would get them; every miss is printed, then the pass rate,
 * and the test fails below PROBE_PASS_PERCENT.
 *
 * The probe format is described at the top of probes.tsv. */
#include "testutil.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../app/config.h"
#include "../common/error.h"

/* The share of probes (%) whose translation has every required word.
 * The models of 2026-12-01 (word vocabularies) passed 23 of 44, 52.3%; the
 * retrained ones (subword vocabularies, four sources; issue 13) 34 of 44,
 * 77.3%, and those trained for 30 epochs on 2026-12-03 pass 35, 79.5%.
 * Issue 13 asks for 90%: not reached yet.  The bar (31 probes) sits four
 * under today's 35 so that a last-bit difference of another build
 * (ASan, aarch64 under qemu) flipping a beam choice does not fail it. */
#define PROBE_PASS_PERCENT 70

#define PROBES "tests/data/probes.tsv"
enum { MAX_PROBES = 256, MAX_REQUIRED = 8 };

typedef struct {
    char *direction;                /* a config name: en-zh */
    char *source;
    char *required[MAX_REQUIRED];   /* each: alternatives separated by '|' */
    int n_required;
} Probe;

typedef struct {
    char *text;     /* the file, cut in place into the fields below */
    Probe probe[MAX_PROBES];
    int count;
} Probes;

/* Read probes.tsv; a malformed line fails the test, naming it. */
static void probes_load(Probes *p)
{
    size_t len;
    p->text = read_file(PROBES, &len);
    p->count = 0;
    if (!p->text) fail_msg("%s: cannot read it", PROBES);
    int line_no = 0;
    for (char *line = p->text, *next; line && *line; line = next) {
        line_no++;
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        if (*line == '#' || *line == '\0') continue;
        if (p->count == MAX_PROBES) fail_msg("%s: more than %d probes", PROBES, MAX_PROBES);
        Probe *pr = &p->probe[p->count++];
        char *fields[2 + MAX_REQUIRED + 1];
        int n = 0;
        for (char *f = line; f && n < 2 + MAX_REQUIRED + 1; n++) {
            fields[n] = f;
            if ((f = strchr(f, '\t'))) *f++ = '\0';
        }
        if (n < 3 || n > 2 + MAX_REQUIRED || !strchr(fields[0], '-') || !*fields[1])
            fail_msg("%s:%d: expected DIRECTION<TAB>SOURCE<TAB>REQUIRED... (at most %d)", PROBES,
                     line_no, MAX_REQUIRED);
        pr->direction = fields[0];
        pr->source = fields[1];
        pr->n_required = n - 2;
        for (int i = 0; i < pr->n_required; i++) {
            if (!*fields[2 + i]) fail_msg("%s:%d: an empty REQUIRED field", PROBES, line_no);
            pr->required[i] = fields[2 + i];
        }
    }
}

/* Does `word` occur in `text` — for English case-insensitively, with no
 * ASCII letter or digit just before or after it; for Chinese as a
 * substring? */
static bool has_word(const char *text, const char *word, size_t word_len, bool english)
{
    if (!english) {
        for (const char *t = text; *t; t++)
            if (strncmp(t, word, word_len) == 0) return true;
        return false;
    }
    for (const char *t = text; *t; t++) {
        if (strncasecmp(t, word, word_len) != 0) continue;
        bool start = t == text || !isalnum((unsigned char)t[-1]);
        bool end = !isalnum((unsigned char)t[word_len]);
        if (start && end) return true;
    }
    return false;
}

/* Is one of the '|'-separated alternatives of `required` in `text`? */
static bool has_one_of(const char *text, const char *required, bool english)
{
    for (const char *alt = required;; alt++) {
        const char *bar = strchr(alt, '|');
        size_t n = bar ? (size_t)(bar - alt) : strlen(alt);
        if (n && has_word(text, alt, n, english)) return true;
        if (!bar) return false;
        alt = bar;
    }
}

static void test_word_matching(void **state)
{
    (void)state;
    assert_true(has_one_of("I live in Shanghai.", "Shanghai", true));
    assert_true(has_one_of("i live in SHANGHAI", "Shanghai", true));
    assert_true(has_one_of("It costs $20.", "twenty|20", true));
    assert_true(has_one_of("We ate Hot pot.", "hot pot|hotpot", true));
    assert_false(has_one_of("I have cats.", "cat", true));
    assert_false(has_one_of("It is 100 yuan.", "10", true));
    assert_false(has_one_of("Tomorrow", "Tom", true));
    assert_true(has_one_of("我住在上海。", "北京|上海", false));
    assert_true(has_one_of("我1990年出生。", "1990", false));
    assert_false(has_one_of("我住在北京。", "上海", false));
    assert_false(has_one_of("", "x|", true));
}

/* The config of a direction: configs/en-zh.yaml. */
static const char *config_of(const char *direction, char *buf, size_t size)
{
    snprintf(buf, size, "configs/%s.yaml", direction);
    return buf;
}

static void test_probes(void **state)
{
    (void)state;
    static Probes p;
    probes_load(&p);
    assert_true(p.count > 0);
    int passed = 0;
    /* One run per direction, in the order they first appear. */
    for (int first = 0; first < p.count; first++) {
        const char *dir = p.probe[first].direction;
        bool seen = false;
        for (int j = 0; j < first; j++) seen |= strcmp(p.probe[j].direction, dir) == 0;
        if (seen) continue;
        char config[256];
        config_of(dir, config, sizeof config);
        Config cfg;
        Error err = {{0}};
        if (config_load(config, &cfg, &err)) fail_msg("%s: %s", config, err.message);
        bool missing = access(cfg.weights_path, R_OK) != 0;
        bool english = strcmp(cfg.target_lang, "en") == 0;
        char weights[512];
        snprintf(weights, sizeof weights, "%s", cfg.weights_path);
        config_free(&cfg);
        if (missing) SKIP_TEST("data", "%s: the weights %s are missing", config, weights);

        size_t size = 1, used = 0;
        for (int i = first; i < p.count; i++)
            if (strcmp(p.probe[i].direction, dir) == 0) size += strlen(p.probe[i].source) + 1;
        char *input = malloc(size);
        assert_non_null(input);
        for (int i = first; i < p.count; i++)
            if (strcmp(p.probe[i].direction, dir) == 0)
                used += (size_t)sprintf(input + used, "%s\n", p.probe[i].source);
        const char *argv[] = {"./translate", "-q", "-c", config, NULL};
        RunResult r = run_program(argv, input, used);
        free(input);
        /* 1: a probe that could not be translated, whose line is empty (a miss). */
        if (r.status > 1) {
            print_in_full(&r);
            fail_msg("%s: translate exited %d", config, r.status);
        }

        int total = 0, ok = 0;
        char *line = r.out;
        for (int i = first; i < p.count; i++) {
            const Probe *pr = &p.probe[i];
            if (strcmp(pr->direction, dir) != 0) continue;
            if (!line || !*line) fail_msg("%s: fewer output lines than probes", config);
            char *nl = strchr(line, '\n');
            if (nl) *nl = '\0';
            bool all = true;
            for (int k = 0; k < pr->n_required; k++)
                if (!has_one_of(line, pr->required[k], english)) {
                    printf("probe %d %s: %s -> \"%s\" lacks \"%s\"\n", i + 1, dir, pr->source, line,
                           pr->required[k]);
                    all = false;
                }
            total++;
            ok += all;
            line = nl ? nl + 1 : NULL;
        }
        printf("probes %s: %d of %d passed\n", dir, ok, total);
        passed += ok;
        run_result_free(&r);
    }
    double rate = 100.0 * passed / p.count;
    printf("probes: %d of %d passed (%.1f%%; the test needs %d%%)\n", passed, p.count, rate,
           PROBE_PASS_PERCENT);
    free(p.text);
    if (rate < PROBE_PASS_PERCENT)
        fail_msg("probes: %.1f%% passed, below PROBE_PASS_PERCENT (%d%%)", rate, PROBE_PASS_PERCENT);
}

/* No probe is a sentence the models were tuned or scored on: a probe
 * found in a dev or train set would measure memory, not translation.
 * (北京是中国的首都。, an example of issue 13, is in
 * tatoeba-cmn-eng-2025/train-additions.tsv, not checked here.) */
static void test_probes_are_unseen(void **state)
{
    (void)state;
    const char *tatoeba = tatoeba_dir();
    if (!tatoeba) SKIP_TEST("data", "the Tatoeba data is not in ../shared/data");
    static Probes p;
    probes_load(&p);
    const char *sets[] = {"dev.tsv", "train.tsv", "../jec-basic/dev.tsv"};
    int found = 0;
    for (size_t s = 0; s < sizeof sets / sizeof *sets; s++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", tatoeba, sets[s]);
        size_t len;
        char *text = read_file(path, &len);
        if (!text) fail_msg("%s: cannot read it", path);
        int line_no = 0;
        for (char *line = text, *next; line && *line; line = next) {
            line_no++;
            if ((next = strchr(line, '\n'))) *next++ = '\0';
            for (char *f = line, *tab; f; f = tab) {
                if ((tab = strchr(f, '\t'))) *tab++ = '\0';
                for (int i = 0; i < p.count; i++)
                    if (strcmp(f, p.probe[i].source) == 0) {
                        printf("probe %d: \"%s\" is in %s:%d\n", i + 1, f, path, line_no);
                        found++;
                    }
            }
        }
        free(text);
    }
    free(p.text);
    assert_int_equal(found, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_word_matching),
        cmocka_unit_test(test_probes),
        cmocka_unit_test(test_probes_are_unseen),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
