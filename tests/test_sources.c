/* test_sources.c — the training data pipeline (data/sources.h): CC-CEDICT
 * senses as glosses, the Traditional → Simplified table, cleaning,
 * filters, deduplication and per-source counts, and each epoch's weighted
 * draw (deterministic from seed and epoch); the names and numbers sources
 * that teach copying. */
#include "testutil.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../data/cedict.h"
#include "../data/names.h"
#include "../data/numbers.h"
#include "../data/simplify.h"
#include "../data/sources.h"

/* ---- CC-CEDICT senses ---------------------------------------------------- */

static void cedict_keeps_short_cleaned_senses(void **state)
{
    (void)state;
    static const struct { const char *senses, *want[CEDICT_MAX_SENSES]; } cases[] = {
        {"pickled vegetables, especially Chinese cabbage", {"pickled vegetables"}},
        {"(classifier used before a noun that has no specific classifier) / (bound form) individual",
         {"individual"}},
        {"Shanghai municipality (abbr. to 沪[Hu4]) / Shanghai", {"Shanghai municipality", "Shanghai"}},
        {"dry / clean / CL:个[ge4]", {"dry", "clean"}},
        {"(pharm.) capsule / CL:粒[li4]", {"capsule"}},
        {"percent (Tw)", {"percent"}},
        {"to eat / to consume / to eat at / to live on", {"to eat", "to consume", "to eat at"}},
        {"aspect particle indicating action in progress", {NULL}},   /* > 4 words */
        {"the eight divinatory trigrams of the Book of Changes / gossip / see 八卦阵", {"gossip"}},
        {"one of the Eight Trigrams 八卦[ba1 gua4]", {NULL}},       /* explains with Chinese */
        {"variant of 乾[qian2]", {NULL}},
        {"old variant of 乾[qian2]", {NULL}},
        {"surname Li", {NULL}},
        {"short name for Shanghai", {NULL}},
        {"abbr. for Beijing", {NULL}},
        {"see 八卦", {NULL}},
        {"used in 自個兒|自个儿[zi4 ge3 r5]", {NULL}},
        {"CL:个[ge4]", {NULL}},
        {"Taiwan pr. [gan4]", {NULL}},
        {"(dialect) / 123", {NULL}},                                /* no Latin letter */
        {"to split the bill; to go Dutch", {"to split the bill"}},  /* ';' ends an alternative too */
        {"Down's syndrome.", {"Down's syndrome"}},                  /* no final '.' */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got[CEDICT_MAX_SENSES] = {0};
        size_t n = cedict_glosses(cases[i].senses, got, CEDICT_MAX_SENSES), want = 0;
        while (want < CEDICT_MAX_SENSES && cases[i].want[want]) want++;
        if (n != want) fail_msg("'%s': %zu glosses, not %zu", cases[i].senses, n, want);
        for (size_t k = 0; k < n; k++) {
            if (strcmp(got[k], cases[i].want[k]) != 0)
                fail_msg("'%s': gloss %zu is '%s', not '%s'", cases[i].senses, k, got[k], cases[i].want[k]);
            free(got[k]);
        }
    }
}

static void cedict_headwords_are_han_only(void **state)
{
    (void)state;
    assert_true(cedict_headword_ok("酸菜"));
    assert_true(cedict_headword_ok("北京"));
    assert_false(cedict_headword_ok("%"));
    assert_false(cedict_headword_ok("110"));
    assert_false(cedict_headword_ok("卡拉OK"));
    assert_false(cedict_headword_ok("AA制"));
    assert_false(cedict_headword_ok(""));
    assert_false(cedict_headword_ok("\xff"));
}

/* ---- Traditional → Simplified ------------------------------------------ */

static void simplify_table_from_cedict_entries(void **state)
{
    (void)state;
    Error err = {{0}};
    Simplifier *s = simplify_load("tests/data/cedict-mini.tsv", &err);
    assert_non_null(s);
    /* 個 這 們 滬 乹 亁: single-character entries that differ; 乾 and 著 have
     * entries of their own as Simplified (surname Qian, zhu4) and stay;
     * 膠 is only in a two-character word: no single entry, no change. */
    assert_int_equal(simplify_size(s), 6);
    assert_int_equal(simplify_char(s, 0x500B /* 個 */), 0x4E2A /* 个 */);
    assert_int_equal(simplify_char(s, 0x4E7E /* 乾 */), 0x4E7E);
    assert_int_equal(simplify_char(s, 0x8457 /* 著 */), 0x8457);
    assert_int_equal(simplify_char(s, 0x81A0 /* 膠 */), 0x81A0);
    size_t changed;
    char *text = simplify_text(s, "這些是我們的朋友。著名", &changed);
    assert_string_equal(text, "这些是我们的朋友。著名");
    assert_int_equal(changed, 2);
    free(text);
    text = simplify_text(s, "abc \xff 個", &changed); /* invalid UTF-8: unchanged */
    assert_string_equal(text, "abc \xff 個");
    assert_int_equal(changed, 0);
    free(text);
    simplify_free(s);
    /* 苧 is the Simplified form of 薴, and the Traditional of 苎 (CC-CEDICT's
     * own entries): valid Simplified, it stays, so 薴 → 苧 and no further
     * (a chain made text simplified twice differ from simplified once) */
    static const char chain[] = "苎\t苧\tzhu4\tramie\n苎麻\t苧麻\tzhu4 ma2\tramie\n苧\t薴\tning2\ttangled\n";
    s = simplify_load(temp_file("chain.tsv", chain, sizeof chain - 1), &err);
    assert_non_null(s);
    assert_int_equal(simplify_char(s, 0x85B4 /* 薴 */), 0x82E7 /* 苧 */);
    assert_int_equal(simplify_char(s, 0x82E7 /* 苧 */), 0x82E7);
    simplify_free(s);
    /* saved as a table (train --simplify-table), it reads back as the same
     * table, by simplify_load_table (translating) and simplify_load alike */
    s = simplify_load("tests/data/cedict-mini.tsv", &err);
    const char *table = temp_file("table.tsv", "", 0);
    assert_int_equal(simplify_save(s, table, &err), 0);
    Simplifier *read = simplify_load_table(table, &err), *voted = simplify_load(table, &err);
    assert_non_null(read);
    assert_non_null(voted);
    assert_int_equal(simplify_size(read), simplify_size(s));
    assert_int_equal(simplify_size(voted), simplify_size(s));
    for (int32_t cp = 0x4E00; cp < 0xA000; cp++)
        if (simplify_char(read, cp) != simplify_char(s, cp) || simplify_char(voted, cp) != simplify_char(s, cp))
            fail_msg("U+%04X: %04X read, %04X voted, %04X built", (unsigned)cp, (unsigned)simplify_char(read, cp),
                     (unsigned)simplify_char(voted, cp), (unsigned)simplify_char(s, cp));
    simplify_free(read);
    simplify_free(voted);
    simplify_free(s);
    /* a CC-CEDICT file is not a table; nor is one listing a character twice */
    assert_null(simplify_load_table("tests/data/cedict-mini.tsv", &err));
    expect_in(err.message, "tests/data/cedict-mini.tsv:1: expected a Simplified character, a tab and a Traditional one");
    static const char twice[] = "个\t個\n箇\t個\n";
    assert_null(simplify_load_table(temp_file("twice.tsv", twice, sizeof twice - 1), &err));
    expect_in(err.message, "U+500B is listed twice");
    /* nor a line of another shape (a newline read as a character, ASCII),
     * nor nothing; a byte order mark is skipped */
    static const char *const bad[] = {"个\t\n\n", "a\t這\n", "个\t個\n\n", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (simplify_load_table(temp_file("bad.tsv", bad[i], strlen(bad[i])), &err)) fail_msg("table %zu read", i);
    expect_in(err.message, "no characters in it");
    static const char bom[] = "\xef\xbb\xbf个\t個\n";
    Simplifier *with_bom = simplify_load_table(temp_file("bom.tsv", bom, sizeof bom - 1), &err);
    assert_non_null(with_bom);
    assert_int_equal(simplify_char(with_bom, 0x500B), 0x4E2A);
    simplify_free(with_bom);
    simplify_free(NULL);
    assert_null(simplify_load("tests/data/no-such-file.tsv", &err));
    expect_in(err.message, "tests/data/no-such-file.tsv");
}

/* ---- the pool ------------------------------------------------------------ */

static const SourceSpec specs[] = {
    {"tests/data/tiny.tsv", SOURCE_TSV, 1.0f, 0, 1, false},
    {"tests/data/sources-extra.tsv", SOURCE_TSV, 2.5f, 0, 1, true},
    {"tests/data/cedict-mini.tsv", SOURCE_CEDICT, 0.5f, 0, 0, false},
};

static Sources load(const Simplifier *simplifier, float ratio)
{
    SourcesSettings set = {specs, 3, true, simplifier, 32, ratio};
    Sources s;
    Error err = {{0}};
    if (sources_load(&set, &s, &err)) fail_msg("%s", err.message);
    return s;
}

static void assert_counts(const SourceCounts *c, size_t read, size_t kept, size_t duplicates, size_t empty,
                          size_t ratio, size_t simplified, size_t notes)
{
    assert_int_equal(c->read, read);
    assert_int_equal(c->kept, kept);
    assert_int_equal(c->duplicates, duplicates);
    assert_int_equal(c->empty, empty);
    assert_int_equal(c->too_long, 0);
    assert_int_equal(c->ratio, ratio);
    assert_int_equal(c->simplified, simplified);
    assert_int_equal(c->notes, notes);
}

/* Is (source, target) in the pool, and from which source? -1: absent. */
static int find(const Sources *s, const char *source, const char *target)
{
    for (size_t i = 0; i < s->pairs.count; i++)
        if (strcmp(s->pairs.source[i], source) == 0 && strcmp(s->pairs.target[i], target) == 0)
            return s->origin[i];
    return -1;
}

static void sources_clean_filter_and_count(void **state)
{
    (void)state;
    Error err = {{0}};
    Simplifier *simplifier = simplify_load("tests/data/cedict-mini.tsv", &err);
    Sources s = load(simplifier, 3.0f);
    assert_int_equal(s.n_sources, 3);
    /*                         read kept dup empty ratio simpl notes */
    assert_counts(&s.counts[0], 16, 16, 0, 0, 0, 0, 0);
    /* sources-extra.tsv: "i love china ." is tiny.tsv's first pair
     * case-folded, "The dog is big." twice, "Yes." ↔ 17 characters, one
     * empty side; three with notes, one Traditional line */
    assert_counts(&s.counts[1], 11, 7, 2, 1, 1, 1, 3);
    /* cedict-mini.tsv: 19 glosses of 20 entries (cedict_keeps_short_...) */
    assert_counts(&s.counts[2], 19, 19, 0, 0, 0, 0, 0);
    assert_int_equal(s.pairs.count, 16 + 7 + 19);
    assert_int_equal(s.counts[1].first, 16);
    assert_int_equal(s.counts[2].first, 23);
    assert_int_equal(find(&s, "These are my friends.", "这些是我们的朋友。"), 1);
    assert_int_equal(find(&s, "Students regard libraries as their second home.", "学生把图书馆当作第二个家。"), 1);
    assert_int_equal(find(&s, "I am tired.", "我身体很累。"), 1);
    assert_int_equal(find(&s, "I can speak English.", "我会英语。"), 1);
    assert_int_equal(find(&s, "He fell asleep.", "他睡著了。"), 1); /* 著 is kept: a known miss */
    assert_int_equal(find(&s, "pickled vegetables", "酸菜"), 2);
    assert_int_equal(find(&s, "individual", "个"), 2);
    assert_int_equal(find(&s, "dry", "干"), 2);
    assert_int_equal(find(&s, "Shanghai", "沪"), -1);
    assert_int_equal(s.pairs.line[s.counts[1].first], 1); /* lines of its file, for messages */
    sources_free(&s);

    /* Without the table the Traditional line stays; without the ratio
     * filter "Yes." is kept. */
    s = load(NULL, 0.0f);
    assert_counts(&s.counts[1], 11, 8, 2, 1, 0, 0, 3);
    assert_int_equal(find(&s, "These are my friends.", "這些是我們的朋友。"), 1);
    sources_free(&s);
    simplify_free(simplifier);
    sources_free(NULL);
}

/* A pair exactly at max_length_ratio is kept (only above it is dropped),
 * and the deduplication key keeps the two sides apart: "Go now" / 走 and
 * "Go" / "now 走" have the same tokens in a row, and are two pairs. */
static void sources_ratio_limit_and_sides(void **state)
{
    (void)state;
    static const char tsv[] = "Go now\t\xE8\xB5\xB0\nGo\tnow \xE8\xB5\xB0\n";
    char path[600];
    snprintf(path, sizeof path, "%s", temp_file("sides.tsv", tsv, strlen(tsv)));
    SourceSpec one = {path, SOURCE_TSV, 1.0f, 0, 1, false};
    SourcesSettings set = {&one, 1, true, NULL, 32, 2.0f};
    Sources s;
    Error err = {{0}};
    if (sources_load(&set, &s, &err)) fail_msg("%s", err.message);
    assert_counts(&s.counts[0], 2, 2, 0, 0, 0, 0, 0);
    sources_free(&s);
}

/* Brackets after a stop in the middle of a line are implicit words, not a
 * note after the sentence ("[I] wander! [I] wander!" lost its second I);
 * a line whose spaces alone are tidied has no note to count. */
static void sources_notes_only_after_the_end(void **state)
{
    (void)state;
    static const char tsv[] = "[I] wander! [I] wander! Where am I? (a poem)\t我走！我走！我在哪？\n"
                              "Is it one ?\t是一个吗？\n";
    SourceSpec spec = {(char *)temp_file("notes.tsv", tsv, sizeof tsv - 1), SOURCE_TSV, 1.0f, 0, 1, true};
    SourcesSettings set = {&spec, 1, true, NULL, 32, 0.0f};
    Sources s;
    Error err = {{0}};
    if (sources_load(&set, &s, &err)) fail_msg("%s", err.message);
    assert_int_equal(find(&s, "I wander! I wander! Where am I?", "我走！我走！我在哪？"), 0);
    assert_counts(&s.counts[0], 2, 2, 0, 0, 0, 0, 1);
    sources_free(&s);
}

static void sources_zh_en_swaps_the_dictionary(void **state)
{
    (void)state;
    SourceSpec zh_en[] = {{"tests/data/sources-extra.tsv", SOURCE_TSV, 1.0f, 1, 0, true},
                          {"tests/data/cedict-mini.tsv", SOURCE_CEDICT, 1.0f, 0, 0, false}};
    SourcesSettings set = {zh_en, 2, false, NULL, 32, 0.0f};
    Sources s;
    Error err = {{0}};
    assert_int_equal(sources_load(&set, &s, &err), 0);
    assert_int_equal(find(&s, "酸菜", "pickled vegetables"), 1);
    /* notes are stripped from the English side, now the target */
    assert_int_equal(find(&s, "我身体很累。", "I am tired."), 0);
    sources_free(&s);
}

static void sources_report_a_missing_file(void **state)
{
    (void)state;
    SourceSpec bad[] = {{"tests/data/tiny.tsv", SOURCE_TSV, 1.0f, 0, 1, false},
                        {"tests/data/no-such-file.tsv", SOURCE_TSV, 1.0f, 0, 1, false}};
    SourcesSettings set = {bad, 2, true, NULL, 32, 0.0f};
    Sources s;
    Error err = {{0}};
    assert_int_equal(sources_load(&set, &s, &err), -1);
    expect_in(err.message, "tests/data/no-such-file.tsv");
    assert_int_equal(s.pairs.count, 0); /* freed and zeroed */
    SourceSpec narrow[] = {{"tests/data/tiny.tsv", SOURCE_TSV, 1.0f, 0, 5, false}};
    set = (SourcesSettings){narrow, 1, true, NULL, 32, 0.0f};
    assert_int_equal(sources_load(&set, &s, &err), -1);
    expect_in(err.message, "tests/data/tiny.tsv:1: expected at least 6 tab-separated columns");
}

/* A short max_len drops the long pairs, counted as such. */
static void sources_count_too_long_pairs(void **state)
{
    (void)state;
    SourceSpec one[] = {{"tests/data/tiny.tsv", SOURCE_TSV, 1.0f, 0, 1, false}};
    SourcesSettings set = {one, 1, true, NULL, 5, 0.0f};
    Sources s;
    Error err = {{0}};
    assert_int_equal(sources_load(&set, &s, &err), 0);
    assert_true(s.counts[0].too_long > 0);
    assert_int_equal(s.counts[0].kept + s.counts[0].too_long, 16);
    for (size_t i = 0; i < s.pairs.count; i++) assert_true(strlen(s.pairs.target[i]) <= 4 * 3); /* <= 4 characters */
    sources_free(&s);
}

/* ---- names made Latin ---------------------------------------------------- */

/* The word that replaced `name` in `in` to make `out` (new), after
 * checking that the rest of `in` is unchanged. */
static char *replaced_word(const char *in, const char *name, const char *out)
{
    const char *at = strstr(in, name);
    if (!at) fail_msg("'%s' not in '%s'", name, in);
    size_t before = (size_t)(at - in), after = strlen(at + strlen(name)), out_len = strlen(out);
    assert_true(out_len > before + after);
    assert_memory_equal(out, in, before);
    assert_string_equal(out + out_len - after, at + strlen(name));
    size_t n = out_len - before - after;
    char *w = malloc(n + 1);
    memcpy(w, out + before, n);
    w[n] = '\0';
    return w;
}

static void names_replace_a_shared_name_on_both_sides(void **state)
{
    (void)state;
    Error err = {{0}};
    NameTable *names = names_load("tests/data/names-mini.tsv", &err);
    assert_non_null(names);
    /* Tom, Mary and Marie, Boston, Tokyo, Thomson; not "United States"
     * (two words), 肯 (one character), 李 (a surname), 酸菜 (not a name) */
    assert_int_equal(names_count(names), 6);
    static const struct { const char *en, *zh, *en_name, *zh_name; } yes[] = {
        {"Tom is here.", "汤姆在这里。", "Tom", "汤姆"},
        {"Ask Mary.", "去问玛丽。", "Mary", "玛丽"},
        {"Ask Marie.", "去问玛丽。", "Marie", "玛丽"},
        {"I live in Boston.", "我住在波士顿。", "Boston", "波士顿"},
        {"Tom's dog is big.", "汤姆的狗很大。", "Tom", "汤姆"},
        {"Tom met Tomas.", "汤姆见了托马斯。", "Tom", "汤姆"},   /* "Tom" once as a word */
    };
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        char *en, *zh, *en2, *zh2;
        if (!names_to_latin(names, yes[i].en, yes[i].zh, &en, &zh)) fail_msg("no name found in '%s'", yes[i].en);
        char *w_en = replaced_word(yes[i].en, yes[i].en_name, en), *w_zh = replaced_word(yes[i].zh, yes[i].zh_name, zh);
        assert_string_equal(w_en, w_zh); /* the same word on both sides */
        assert_true(w_en[0] != '\0');
        for (const char *c = w_en; *c; c++) assert_true((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z'));
        assert_true(names_to_latin(names, yes[i].en, yes[i].zh, &en2, &zh2));
        assert_string_equal(en, en2); /* drawn from the pair: the same every time */
        assert_string_equal(zh, zh2);
        free(w_en), free(w_zh), free(en), free(zh), free(en2), free(zh2);
    }
    static const struct { const char *en, *zh; } no[] = {
        {"Tom likes Tom.", "汤姆喜欢汤姆。"},          /* twice in English */
        {"Tom is here.", "汤姆和汤姆在这里。"},         /* twice in Chinese */
        {"Tomorrow is fine.", "明天可以。"},            /* inside a word */
        {"tom is here.", "汤姆在这里。"},               /* without its capital */
        {"Tom is here.", "他在这里。"},                 /* not in the Chinese */
        {"I love the United States.", "我爱美国。"},    /* a name of two words */
        {"Ken is tall.", "肯很高。"},                   /* a one-character headword */
        {"I like pickled cabbage.", "我喜欢酸菜。"},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        char *en = (char *)1, *zh = (char *)1;
        if (names_to_latin(names, no[i].en, no[i].zh, &en, &zh)) fail_msg("a name found in '%s'", no[i].en);
        assert_null(en);
        assert_null(zh);
    }
    names_free(names);
    names_free(NULL);
    assert_null(names_load("tests/data/no-such-file.tsv", &err));
    expect_in(err.message, "tests/data/no-such-file.tsv");
}

/* The words take every shape names.h lists, and never the English words
 * "A" or "I". */
static void names_draw_words_of_every_shape(void **state)
{
    (void)state;
    Error err = {{0}};
    NameTable *names = names_load("tests/data/names-mini.tsv", &err);
    assert_non_null(names);
    int capital = 0, acronym = 0, name = 0, small_first = 0;
    for (int i = 0; i < 400; i++) {
        char en_in[64], zh_in[64], *en, *zh;
        snprintf(en_in, sizeof en_in, "Tom has %d cats.", i);
        snprintf(zh_in, sizeof zh_in, "汤姆有%d只猫。", i);
        assert_true(names_to_latin(names, en_in, zh_in, &en, &zh));
        char *w = replaced_word(en_in, "Tom", en);
        size_t len = strlen(w), upper = 0;
        for (size_t k = 0; k < len; k++) upper += w[k] >= 'A' && w[k] <= 'Z';
        assert_true(len >= 1 && len <= 8);
        assert_true(strcmp(w, "A") != 0 && strcmp(w, "I") != 0);
        if (len == 1) capital++;
        else if (upper == len) acronym++;
        else if (w[0] >= 'A' && w[0] <= 'Z' && upper == 1) name++;
        else if (w[0] >= 'a' && w[0] <= 'z' && w[1] >= 'A' && w[1] <= 'Z' && upper == 1) small_first++;
        else fail_msg("'%s': an unexpected shape", w);
        free(w), free(en), free(zh);
    }
    /* shares 3 : 2 : 4 : 1 of 10 */
    assert_in_range(capital, 80, 160);
    assert_in_range(acronym, 40, 120);
    assert_in_range(name, 120, 200);
    assert_in_range(small_first, 20, 60);
    names_free(names);
}

/* A names source: the sentence pairs before it that share a name, the
 * name made Latin, after the dictionary's own pairs are passed over. */
static void sources_make_names_latin(void **state)
{
    (void)state;
    for (int english_source = 1; english_source >= 0; english_source--) {
        int en = english_source ? 0 : 1, zh = 1 - en;
        SourceSpec spec[] = {{"tests/data/names-pairs.tsv", SOURCE_TSV, 1.0f, en, zh, false},
                             {"tests/data/names-mini.tsv", SOURCE_CEDICT, 1.0f, 0, 0, false},
                             {"tests/data/names-mini.tsv", SOURCE_NAMES, 0.5f, 0, 0, false}};
        SourcesSettings set = {spec, 3, english_source, NULL, 32, 0.0f};
        Sources s;
        Error err = {{0}};
        assert_int_equal(sources_load(&set, &s, &err), 0);
        /* Tom, Mary, Boston; the dictionary's "Tom" ↔ 汤姆 is not a sentence */
        assert_counts(&s.counts[2], 3, 3, 0, 0, 0, 0, 0);
        assert_int_equal(sources_epoch_count(&s, 2), 2); /* round(1.5) */
        size_t first = s.counts[2].first;
        char **english = english_source ? s.pairs.source : s.pairs.target;
        char **chinese = english_source ? s.pairs.target : s.pairs.source;
        expect_in(english[first], " is here.");
        expect_in(chinese[first], "在这里。");
        assert_null(strstr(english[first], "Tom"));
        assert_int_equal(s.pairs.line[first], 1);
        expect_in(english[first + 2], "I live in ");
        assert_int_equal(s.pairs.line[first + 2], 3);
        sources_free(&s);
    }
}

/* ---- numbers made random --------------------------------------------------- */

static bool all_digits(const char *s)
{
    for (; *s; s++)
        if (*s < '0' || *s > '9') return false;
    return true;
}

static void numbers_replace_shared_numbers_on_both_sides(void **state)
{
    (void)state;
    char *en, *zh, *en2, *zh2;
    /* one number: the same digits on both sides, the rest unchanged */
    assert_true(numbers_to_random("I was born in 1988.", "我生于1988年。", 0, &en, &zh));
    char *w_en = replaced_word("I was born in 1988.", "1988", en), *w_zh = replaced_word("我生于1988年。", "1988", zh);
    assert_string_equal(w_en, w_zh);
    assert_true(all_digits(w_en) && w_en[0] != '\0');
    assert_true(numbers_to_random("I was born in 1988.", "我生于1988年。", 0, &en2, &zh2));
    assert_string_equal(en, en2); /* drawn from the pair and the copy: the same every time */
    assert_string_equal(zh, zh2);
    free(w_en), free(w_zh), free(en), free(zh), free(en2), free(zh2);

    /* each side keeps its own commas */
    for (unsigned copy = 0; copy < 16; copy++) {
        assert_true(numbers_to_random("I owe him 1,000 dollars.", "我欠他1000美元。", copy, &en, &zh));
        w_en = replaced_word("I owe him 1,000 dollars.", "1,000", en);
        w_zh = replaced_word("我欠他1000美元。", "1000", zh);
        assert_true(all_digits(w_zh));
        size_t len = strlen(w_zh), n = 0;
        for (size_t i = 0; i < len; i++) { /* w_en is w_zh with a comma before every group of three */
            if (i > 0 && (len - i) % 3 == 0) assert_int_equal(w_en[n++], ',');
            assert_int_equal(w_en[n++], w_zh[i]);
        }
        assert_int_equal(w_en[n], '\0');
        free(w_en), free(w_zh), free(en), free(zh);
    }

    /* two numbers, in another order in the Chinese: each keeps its partner */
    assert_true(numbers_to_random("I have 2 cats and 3 dogs.", "我有3条狗和2只猫。", 1, &en, &zh));
    char cats[32], dogs[32], dogs_zh[32], cats_zh[32];
    assert_int_equal(sscanf(en, "I have %31[0-9] cats and %31[0-9] dogs.", cats, dogs), 2);
    assert_int_equal(sscanf(zh, "我有%31[0-9]条狗和%31[0-9]只猫。", dogs_zh, cats_zh), 2);
    assert_string_equal(cats, cats_zh);
    assert_string_equal(dogs, dogs_zh);
    free(en), free(zh);

    static const struct { const char *en, *zh; } no[] = {
        {"It is 9:30.", "现在9:30。"},                    /* a time */
        {"It costs 1.5 dollars.", "它1.5美元。"},         /* a decimal */
        {"Call 555-1234.", "打555-1234。"},               /* joined by a dash */
        {"He is 3 years old.", "他三岁。"},               /* not in the Chinese */
        {"I have 3 cats.", "我有4只猫。"},                /* another number */
        {"Buy an MP3 player.", "买一个MP3播放器。"},      /* beside a letter */
        {"I'm 30, you're 30.", "我30岁，你30岁。"},       /* twice */
        {"Take 2 or 3.", "拿2个。"},                      /* one of two */
        {"It is 1,23.", "是1,23。"},                      /* a comma out of place */
        {"I like cats.", "我喜欢猫。"},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        en = zh = (char *)1;
        if (numbers_to_random(no[i].en, no[i].zh, 0, &en, &zh)) fail_msg("numbers found in '%s'", no[i].en);
        assert_null(en);
        assert_null(zh);
    }
}

/* The copies draw numbers of 1 to 12 digits, half of them as long as the
 * number they replace, never with a leading zero. */
static void numbers_draw_every_length(void **state)
{
    (void)state;
    int lengths[13] = {0}, same = 0, copies = 600;
    for (int copy = 0; copy < copies; copy++) {
        char *en, *zh;
        assert_true(numbers_to_random("I was born in 1988.", "我生于1988年。", (unsigned)copy, &en, &zh));
        char *w = replaced_word("I was born in 1988.", "1988", en);
        size_t len = strlen(w);
        assert_true(len >= 1 && len <= 12);
        assert_true(len == 1 || w[0] != '0');
        lengths[len]++;
        same += len == 4 && strcmp(w, "1988") != 0;
        free(w), free(en), free(zh);
    }
    for (int len = 1; len <= 12; len++)
        if (!lengths[len]) fail_msg("no number of %d digits in %d copies", len, copies);
    assert_in_range(lengths[4], copies * 4 / 10, copies * 7 / 10); /* 1/2 + 1/24 expected */
    assert_true(same > copies / 3); /* other numbers, not the year again */
}

/* A numbers source: NUMBERS_COPIES copies of each sentence pair before it
 * that qualifies, in the pairs' order, with their line numbers. */
static void sources_make_numbers_random(void **state)
{
    (void)state;
    for (int english_source = 1; english_source >= 0; english_source--) {
        int en = english_source ? 0 : 1, zh = 1 - en;
        SourceSpec spec[] = {{"tests/data/numbers-pairs.tsv", SOURCE_TSV, 1.0f, en, zh, false},
                             {NULL, SOURCE_NUMBERS, 1.0f, 0, 0, false}};
        SourcesSettings set = {spec, 2, english_source, NULL, 32, 0.0f};
        Sources s;
        Error err = {{0}};
        assert_int_equal(sources_load(&set, &s, &err), 0);
        const SourceCounts *c = &s.counts[1];
        assert_int_equal(c->read, 3 * NUMBERS_COPIES); /* the year, the dollars, the cats and dogs */
        assert_int_equal(c->kept + c->duplicates, c->read);
        assert_true(c->kept >= 2 * NUMBERS_COPIES);
        char **english = english_source ? s.pairs.source : s.pairs.target;
        int last_line = 0;
        for (size_t i = c->first; i < c->first + c->kept; i++) {
            assert_true(s.pairs.line[i] >= last_line && s.pairs.line[i] <= 3);
            last_line = s.pairs.line[i];
            assert_null(strstr(english[i], "1988")); /* 1988 is drawn again once in 10^4 */
        }
        assert_int_equal(s.pairs.line[c->first], 1);
        expect_in(english[c->first], "I was born in ");
        sources_free(&s);
    }
}

/* ---- sampling ------------------------------------------------------------ */

static int compare_ints(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static void epochs_draw_by_weight_deterministically(void **state)
{
    (void)state;
    Sources s = load(NULL, 3.0f);
    /* 16 × 1, 7 × 2.5 = 14 + round(3.5) = 18, 19 × 0.5 = round(9.5) = 10 */
    assert_int_equal(sources_epoch_count(&s, 0), 16);
    assert_int_equal(sources_epoch_count(&s, 1), 18);
    assert_int_equal(sources_epoch_count(&s, 2), 10);
    size_t n = sources_epoch_size(&s);
    assert_int_equal(n, 44);
    int *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    sources_epoch(&s, 7, 3, a);
    sources_epoch(&s, 7, 3, b);
    assert_memory_equal(a, b, n * sizeof *a); /* the same (seed, epoch): the same draw, as on --resume */
    /* each source's share comes from its own range; whole copies first */
    for (size_t i = 0; i < 16; i++) assert_int_equal(a[i], (int)i);
    int times[64] = {0};
    for (size_t i = 16; i < 34; i++) {
        assert_true(a[i] >= 16 && a[i] < 23);
        times[a[i]]++;
    }
    int thrice = 0;
    for (int p = 16; p < 23; p++) {
        assert_true(times[p] == 2 || times[p] == 3); /* 2 copies + half again */
        thrice += times[p] == 3;
    }
    assert_int_equal(thrice, 4);
    for (size_t i = 34; i < n; i++) {
        assert_true(a[i] >= 23 && a[i] < 42);
        assert_int_equal(times[a[i]]++, 0); /* without replacement */
    }
    /* another epoch draws another half of the dictionary (and of the 0.5
     * of sources-extra); so does another seed */
    bool differs = false;
    for (int e = 4; e < 8 && !differs; e++) {
        sources_epoch(&s, 7, e, c);
        qsort(c + 34, 10, sizeof *c, compare_ints);
        qsort(b + 34, 10, sizeof *b, compare_ints);
        differs = memcmp(b + 34, c + 34, 10 * sizeof *c) != 0;
    }
    assert_true(differs);
    sources_epoch(&s, 8, 3, c);
    assert_memory_not_equal(a, c, n * sizeof *a);
    uint64_t h = sources_hash(&s);
    s.counts[2].weight = 0.6f;
    assert_true(sources_hash(&s) != h); /* a checkpoint notices a new weight */
    free(a);
    free(b);
    free(c);
    sources_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cedict_keeps_short_cleaned_senses),
        cmocka_unit_test(cedict_headwords_are_han_only),
        cmocka_unit_test(simplify_table_from_cedict_entries),
        cmocka_unit_test(sources_clean_filter_and_count),
        cmocka_unit_test(sources_ratio_limit_and_sides),
        cmocka_unit_test(sources_notes_only_after_the_end),
        cmocka_unit_test(sources_zh_en_swaps_the_dictionary),
        cmocka_unit_test(sources_report_a_missing_file),
        cmocka_unit_test(sources_count_too_long_pairs),
        cmocka_unit_test(names_replace_a_shared_name_on_both_sides),
        cmocka_unit_test(names_draw_words_of_every_shape),
        cmocka_unit_test(sources_make_names_latin),
        cmocka_unit_test(numbers_replace_shared_numbers_on_both_sides),
        cmocka_unit_test(numbers_draw_every_length),
        cmocka_unit_test(sources_make_numbers_random),
        cmocka_unit_test(epochs_draw_by_weight_deterministically),
    };
    return cmocka_run_group_tests_name("training sources", tests, NULL, NULL);
}
