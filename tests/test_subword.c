/* test_subword.c — subword vocabularies: the learner (tokenizer/bpe.c),
 * the subword writer and encoder (tokenizer/vocab.c, encode.c) and joining
 * pieces back into text (tokenizer/detokenize.c).  Also: old word
 * vocabularies give exactly the ids they gave before. */
#include "testutil.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/util.h"
#include "../data/corpus.h"
#include "../tokenizer/bpe.h"
#include "../tokenizer/detokenize.h"
#include "../tokenizer/encode.h"
#include "../tokenizer/tokenizer.h"
#include "../tokenizer/vocab.h"

/* A subword vocabulary learned from texts[0..n) (each weight 1). */
static Vocab *learn(const char *name, const char *const *texts, size_t n, int max_size, int min_count)
{
    VocabBuilder *b = vocab_builder_new();
    Error err;
    for (size_t i = 0; i < n; i++)
        if (vocab_builder_add_text(b, texts[i], strlen(texts[i]), 1.0, &err)) fail_msg("%s", err.message);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", temp_dir(), name);
    if (write_vocab_at(vocab_builder_write_subword, b, path, max_size, min_count, &err)) fail_msg("%s", err.message);
    vocab_builder_free(b);
    Vocab *v = vocab_load(path, &err);
    if (!v) fail_msg("%s", err.message);
    return v;
}

/* The pieces of text, joined by spaces: "shang ##hai". */
static char *pieces(const Vocab *v, const char *text)
{
    Encoding e;
    Error err;
    if (encode_text(v, text, strlen(text), &e, &err)) fail_msg("%s", err.message);
    size_t cap = 1;
    for (size_t i = 0; i < e.count; i++) cap += strlen(vocab_token(v, e.ids[i])) + 1;
    char *s = xmalloc(cap);
    s[0] = '\0';
    for (size_t i = 0; i < e.count; i++) {
        if (i) strcat(s, " ");
        strcat(s, vocab_token(v, e.ids[i]));
    }
    encoding_free(&e);
    return s;
}

static void expect_pieces(const Vocab *v, const char *text, const char *want)
{
    char *got = pieces(v, text);
    if (strcmp(got, want) != 0) fail_msg("pieces of \"%s\": got \"%s\", want \"%s\"", text, got, want);
    free(got);
}

/* encode → ids → detokenize_ids. */
static char *round_trip(const Vocab *v, const char *text, const char *lang)
{
    Encoding e;
    Error err;
    if (encode_text(v, text, strlen(text), &e, &err)) fail_msg("%s", err.message);
    char *out = detokenize_ids(v, e.ids, e.count, lang);
    encoding_free(&e);
    return out;
}

static void expect_round_trip(const Vocab *v, const char *text, const char *lang, const char *want)
{
    char *got = round_trip(v, text, lang);
    if (strcmp(got, want) != 0) fail_msg("round trip of \"%s\": got \"%s\", want \"%s\"", text, got, want);
    free(got);
}

static const char *const english[] = {
    "I live in Shanghai.",   "Shanghai is big.",     "We went to Shanghai in 1990.",
    "What are you saying?",  "I don't understand what you're saying.",
    "Where is Tom?",         "Tom knows where we live.", "We know what we want.",
    "The shanghai rooster.", "She is singing and dancing.", "They were singing.",
};
#define N_ENGLISH (sizeof english / sizeof english[0])

static void test_byte_tokens_follow_the_specials(void **state)
{
    (void)state;
    Vocab *v = learn("bytes.vocab", english, N_ENGLISH, 600, 1);
    assert_true(vocab_is_subword(v));
    assert_string_equal(vocab_token(v, 4), "<0x00>");
    assert_string_equal(vocab_token(v, 4 + 127), "<0x7F>");
    assert_string_equal(vocab_token(v, 4 + 128), "<0xC0>");
    assert_string_equal(vocab_token(v, 4 + 192), "##<0x00>");
    assert_string_equal(vocab_token(v, 4 + 447), "##<0xFF>");
    assert_true(vocab_size(v) <= 600);
    assert_true(vocab_size(v) > 4 + VOCAB_BYTE_TOKENS);
    vocab_free(v);
}

static void test_words_split_into_pieces(void **state)
{
    (void)state;
    Vocab *v = learn("pieces.vocab", english, N_ENGLISH, 4 + VOCAB_BYTE_TOKENS + 60, 1);
    /* frequent words whole, rarer ones in pieces that start with ## inside */
    expect_pieces(v, "shanghai", "shanghai");
    char *got = pieces(v, "shanghaiing");
    assert_true(strncmp(got, "shanghai ##", 11) == 0);
    free(got);
    /* a letter never seen: its bytes, continuing where it continues */
    expect_pieces(v, "shanghaié", "shanghai ##<0xC3> ##<0xA9>");
    expect_pieces(v, "ésa", "<0xC3> ##<0xA9> ##s ##a");
    vocab_free(v);
}

static void test_digits_are_single_pieces(void **state)
{
    (void)state;
    const char *texts[] = {"1990 1990 1990 1990 2000 2000 19 19 19", "in 1990, mp3 mp3 mp3"};
    Vocab *v = learn("digits.vocab", texts, 2, 600, 1);
    expect_pieces(v, "1990", "1 ##9 ##9 ##0");
    expect_pieces(v, "mp3", "mp ##3");
    expect_round_trip(v, "In 1990, mp3.", "en", "In 1990, mp3.");
    expect_round_trip(v, "3.5 and 1,000", "en", "3.5 and 1,000");
    /* no learned piece holds a digit with anything else */
    for (int id = 4 + VOCAB_BYTE_TOKENS; id < vocab_size(v); id++) {
        const char *t = vocab_token(v, id);
        if (strncmp(t, "##", 2) == 0) t += 2;
        if (strpbrk(t, "0123456789")) assert_int_equal(strlen(t), 1);
    }
    vocab_free(v);
}

static void test_han_characters_stay_single(void **state)
{
    (void)state;
    const char *texts[] = {"我想吃酸菜鱼。", "我在Google工作。", "我出生于1990年。", "我想吃鱼。"};
    Vocab *v = learn("zh.vocab", texts, 4, 700, 1);
    expect_pieces(v, "我想吃酸菜鱼", "我 想 吃 酸 菜 鱼");
    /* an unseen Han character: its three bytes, then back */
    expect_pieces(v, "龘", "<0xE9> ##<0xBE> ##<0x98>");
    expect_round_trip(v, "我想吃龘。", "zh", "我想吃龘。");
    expect_round_trip(v, "我在Google工作。", "zh", "我在Google工作。");
    expect_round_trip(v, "我出生于1990年。", "zh", "我出生于1990年。");
    vocab_free(v);
}

static void test_round_trips(void **state)
{
    (void)state;
    Vocab *v = learn("trip.vocab", english, N_ENGLISH, 4 + VOCAB_BYTE_TOKENS + 90, 1);
    expect_round_trip(v, "I don't understand what you're saying.", "en",
                      "I don't understand what you're saying.");
    expect_round_trip(v, "We went to Shanghai in 1990.", "en", "We went to Shanghai in 1990.");
    /* never seen: bytes all the way, and still the same text */
    expect_round_trip(v, "Zoë’s café ☃ 𝔘", "en", "Zoë’s café ☃ u");
    /* (detokenize capitalises a sentence's first letter only in ASCII) */
    expect_round_trip(v, "Ωμέγα", "en", "ωμέγα");
    vocab_free(v);
}

/* Casing comes from where a word is not first in its sentence. */
static void test_casing_from_non_initial_words(void **state)
{
    (void)state;
    const char *texts[] = {"What is it?", "What?", "Where is it? Where!", "We are. We are.",
                           "I know what we want.", "Tell me where.", "\"What\" he said."};
    Vocab *v = learn("case.vocab", texts, 7, 700, 1);
    int id = vocab_id(v, "what");
    assert_true(id >= 4);
    assert_string_equal(vocab_cased(v, id), "what");
    assert_string_equal(vocab_cased(v, vocab_id(v, "where")), "where");
    assert_string_equal(vocab_cased(v, vocab_id(v, "we")), "we");
    /* only ever first: its casing there */
    assert_string_equal(vocab_cased(v, vocab_id(v, "tell")), "Tell");
    vocab_free(v);

    /* and the word vocabulary builder counts the same way */
    VocabBuilder *b = vocab_builder_new();
    Error err;
    for (int i = 0; i < 7; i++) assert_int_equal(vocab_builder_add_text(b, texts[i], strlen(texts[i]), 1.0, &err), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/case-word.vocab", temp_dir());
    assert_int_equal(write_vocab_at(vocab_builder_write, b, path, 100, 1, &err), 0);
    vocab_builder_free(b);
    v = vocab_load(path, &err);
    assert_non_null(v);
    assert_false(vocab_is_subword(v));
    assert_string_equal(vocab_cased(v, vocab_id(v, "what")), "what");
    assert_string_equal(vocab_cased(v, vocab_id(v, "tell")), "Tell");
    vocab_free(v);
}

/* Multi-piece words: the pieces' casings joined ("Shang" + "##hai"). */
static void test_casing_of_pieces(void **state)
{
    (void)state;
    const char *texts[] = {"I like Shanghai and Shanghai likes me.", "I saw the iPhone and an iPhone."};
    Vocab *v = learn("case-pieces.vocab", texts, 2, 4 + VOCAB_BYTE_TOKENS + 30, 1);
    expect_round_trip(v, "we like shanghai", "en", "We like Shanghai");
    expect_round_trip(v, "an iphone", "en", "An iPhone");
    vocab_free(v);
}

/* A piece that is a word of its own in one casing and begins longer words
 * in another: "st" is "St" alone (St Paul) but lower case at the start of
 * "stairs", which is written with pieces (seen once, under min_count). */
static const char *const saints[] = {"We saw St Paul.", "He met St John there.", "Look at St Mary.",
                                     "He climbed the stairs.", "We still stand.", "You stop."};

static void test_casing_inside_words(void **state)
{
    (void)state;
    Vocab *v = learn("case-in-word.vocab", saints, 6, 4 + VOCAB_BYTE_TOKENS + 60, 2);
    int st = vocab_id(v, "st"), continues;
    assert_true(st >= 4);
    assert_int_equal(vocab_id(v, "stairs"), VOCAB_UNK);
    assert_string_equal(vocab_piece(v, st, VOCAB_CASED, &continues), "St");
    assert_string_equal(vocab_piece(v, st, VOCAB_CASED_IN_WORD, &continues), "st");
    expect_round_trip(v, "he climbed the stairs", "en", "He climbed the stairs");
    expect_round_trip(v, "we still stand at st", "en", "We still stand at St");
    vocab_free(v);
}

/* vocab_builder_recase: the same tokens, ids and counts (so the same hash:
 * a model trained with the file still loads), the casings of other text. */
static void test_recase_keeps_tokens_and_counts(void **state)
{
    (void)state;
    Vocab *old = learn("recase.vocab", saints, 6, 4 + VOCAB_BYTE_TOKENS + 60, 2);
    char path[512];
    snprintf(path, sizeof path, "%s/recase.vocab", temp_dir());
    size_t len;
    char *before = read_file(path, &len);
    VocabBuilder *b = vocab_builder_new();
    Error err;
    const char *shouting[] = {"WE SAW ST PAUL.", "HE CLIMBED THE STAIRS."};
    for (int i = 0; i < 2; i++)
        assert_int_equal(vocab_builder_add_text(b, shouting[i], strlen(shouting[i]), 1.0, &err), 0);
    assert_int_equal(recase_vocab_at(b, path, &err), 0);
    Vocab *v = vocab_load(path, &err);
    assert_non_null(v);
    assert_int_equal(vocab_size(v), vocab_size(old));
    assert_true(vocab_hash(v) == vocab_hash(old));
    int st = vocab_id(v, "st"), continues;
    assert_string_equal(vocab_cased(v, st), "ST");
    assert_string_equal(vocab_piece(v, st, VOCAB_CASED_IN_WORD, &continues), "ST");
    /* the counts column is the old file's, line for line */
    char *after = read_file(path, &len);
    for (char *a = before, *c = after; *a && *c;) {
        char *a_end = strchr(a, '\n'), *c_end = strchr(c, '\n');
        assert_non_null(a_end);
        assert_non_null(c_end);
        *a_end = *c_end = '\0';
        char *a_count = strchr(strchr(a, '\t') + 1, '\t') + 1, *c_count = strchr(strchr(c, '\t') + 1, '\t') + 1;
        assert_true(strcspn(a_count, "\t") > 0);
        assert_int_equal(strcspn(a_count, "\t"), strcspn(c_count, "\t"));
        assert_memory_equal(a_count, c_count, strcspn(a_count, "\t"));
        a = a_end + 1;
        c = c_end + 1;
    }
    free(before);
    free(after);
    vocab_free(v);
    vocab_free(old);
    /* a word vocabulary has no pieces to recase */
    snprintf(path, sizeof path, "%s/recase-word.vocab", temp_dir());
    assert_int_equal(write_vocab_at(vocab_builder_write, b, path, 100, 1, &err), 0);
    assert_int_equal(recase_vocab_at(b, path, &err), -1);
    expect_in(err.message, "recase-word.vocab: not a subword vocabulary");
    vocab_builder_free(b);
}

static void test_weights_and_min_count(void **state)
{
    (void)state;
    VocabBuilder *b = vocab_builder_new();
    Error err;
    assert_int_equal(vocab_builder_add_text(b, "rare", 4, 0.5, &err), 0);
    assert_int_equal(vocab_builder_add_text(b, "common common", 13, 3.0, &err), 0);
    assert_int_equal(vocab_builder_add_text(b, "\xff", 1, 1.0, &err), -1);
    expect_in(err.message, "invalid UTF-8 at byte 0");
    char path[512];
    snprintf(path, sizeof path, "%s/weights.vocab", temp_dir());
    assert_int_equal(write_vocab_at(vocab_builder_write_subword, b, path, 1000, 2, &err), 0);
    Vocab *v = vocab_load(path, &err);
    assert_non_null(v);
    assert_true(vocab_id(v, "common") >= 4);
    assert_int_equal(vocab_id(v, "##a"), VOCAB_UNK); /* "rare" counts 0.5 < 2 */
    expect_pieces(v, "rare", "<0x72> ##<0x61> ##<0x72> ##<0x65>");
    vocab_free(v);
    /* too small for anything but the reserved tokens */
    assert_int_equal(write_vocab_at(vocab_builder_write_subword, b, path, 4 + VOCAB_BYTE_TOKENS, 1, &err), -1);
    expect_in(err.message, "no room for pieces");
    vocab_builder_free(b);
}

static void test_bad_byte_tokens_are_rejected(void **state)
{
    (void)state;
    const char *text = "<pad>\t<pad>\t0\n<unk>\t<unk>\t0\n<s>\t<s>\t0\n</s>\t</s>\t0\n"
                       "<0x00>\t<0x00>\t0\n<0x02>\t<0x02>\t0\n";
    Error err;
    assert_null(vocab_load(temp_file("bad-bytes.vocab", text, strlen(text)), &err));
    expect_in(err.message, "bad-bytes.vocab:6: expected byte token '<0x01>' (id 5), found '<0x02>'");
    const char *cut = "<pad>\t<pad>\t0\n<unk>\t<unk>\t0\n<s>\t<s>\t0\n</s>\t</s>\t0\n<0x00>\t<0x00>\t0\n";
    assert_null(vocab_load(temp_file("cut-bytes.vocab", cut, strlen(cut)), &err));
    expect_in(err.message, "cut-bytes.vocab:6: expected byte token '<0x01>' (id 5), found end of file");
}

/* Model output in an order no text has: still valid UTF-8. */
static void test_stray_bytes_become_replacement_characters(void **state)
{
    (void)state;
    Vocab *v = learn("stray.vocab", english, N_ENGLISH, 600, 1);
    int ids[] = {4 + 0xC3 - 64, 4 + 192 + 'a', vocab_id(v, "tom")};
    char *got = detokenize_ids(v, ids, 3, "en");
    assert_string_equal(got, "\xEF\xBF\xBD" "a Tom");
    free(got);
    vocab_free(v);
}

/* A byte token for a control character writes nothing: a newline in a
 * translation would make two output lines of one input line. */
static void test_control_bytes_are_not_written(void **state)
{
    (void)state;
    Vocab *v = learn("control.vocab", english, N_ENGLISH, 600, 1);
    int tom = vocab_id(v, "tom");
    int ids[] = {tom, 4 + '\n', tom, 4 + 192 + '\r', 4 + '\t', 4 + 0x7F, 4 + 192 + '\n', tom};
    char *got = detokenize_ids(v, ids, sizeof ids / sizeof ids[0], "en");
    assert_string_equal(got, "Tom Tom Tom");
    free(got);
    got = detokenize_ids(v, ids, sizeof ids / sizeof ids[0], "zh");
    assert_null(strpbrk(got, "\n\r\t\x7F"));
    free(got);
    vocab_free(v);
}

/* Old word vocabularies: exactly one id per token, as vocab_id gives.
 * (The shipped weights/ vocabularies were word vocabularies until issue 13's
 * retraining; tests/data/tiny.* still are.) */
static void test_word_vocabularies_are_unchanged(void **state)
{
    (void)state;
    const char *paths[] = {"tests/data/tiny.tgt.vocab", "tests/data/tiny.src.vocab", "tests/data/tiny.src.vocab"};
    const char *texts[] = {"I love china, Shanghai and 1990 zyzzyva.", "我想吃酸菜鱼。龘", "Zoë’s café ☃"};
    Error err;
    for (size_t p = 0; p < 3; p++) {
        Vocab *v = vocab_load(paths[p], &err);
        if (!v) fail_msg("%s", err.message);
        assert_false(vocab_is_subword(v));
        for (size_t t = 0; t < 3; t++) {
            Encoding e;
            assert_int_equal(encode_text(v, texts[t], strlen(texts[t]), &e, &err), 0);
            assert_int_equal(e.count, e.tokens.count);
            size_t unknown = 0;
            for (size_t i = 0; i < e.count; i++) {
                assert_int_equal(e.ids[i], vocab_id(v, e.tokens.folded[i]));
                assert_int_equal(e.token[i], i);
                unknown += e.ids[i] == VOCAB_UNK;
            }
            assert_int_equal(e.unknown, unknown);
            encoding_free(&e);
        }
        vocab_free(v);
    }
}

/* Labels: each piece knows its token, where in the input it starts and
 * whether white space came before it. */
static void test_encoding_offsets(void **state)
{
    (void)state;
    Vocab *v = learn("offsets.vocab", english, N_ENGLISH, 600, 1);
    const char *text = "  Shanghaiing 19";
    Encoding e;
    Error err;
    assert_int_equal(encode_text(v, text, strlen(text), &e, &err), 0);
    assert_true(e.count >= 4);
    assert_int_equal(e.token[0], 0);
    assert_int_equal(e.offset[0], 2);
    assert_int_equal(e.offset[1], 10); /* "##ing" after "shanghai" */
    assert_int_equal(e.token[e.count - 1], 1);
    assert_int_equal(e.offset[e.count - 1], 15);
    /* white space before: the first piece of a word after it, never a later one */
    assert_true(e.spaced[0]);
    assert_false(e.spaced[1]);
    assert_true(e.spaced[e.count - 2]); /* 1 of 19 */
    assert_false(e.spaced[e.count - 1]); /* its ##9 */
    encoding_free(&e);
    const char *list = "110, 120";
    assert_int_equal(encode_text(v, list, strlen(list), &e, &err), 0);
    assert_int_equal(e.count, 7); /* 1 ##1 ##0 , 1 ##2 ##0 */
    for (size_t i = 0; i < e.count; i++) assert_int_equal(e.spaced[i], i == 4);
    encoding_free(&e);
    encoding_free(NULL);
    vocab_free(v);
}

/* Same texts, same file, byte for byte. */
static void test_learner_is_deterministic(void **state)
{
    (void)state;
    char path[2][512];
    for (int k = 0; k < 2; k++) {
        VocabBuilder *b = vocab_builder_new();
        Error err;
        for (size_t i = 0; i < N_ENGLISH; i++)
            assert_int_equal(vocab_builder_add_text(b, english[i], strlen(english[i]), 1.0, &err), 0);
        snprintf(path[k], sizeof path[k], "%s/det%d.vocab", temp_dir(), k);
        assert_int_equal(write_vocab_at(vocab_builder_write_subword, b, path[k], 520, 1, &err), 0);
        vocab_builder_free(b);
    }
    size_t na, nb;
    char *a = read_file(path[0], &na), *b = read_file(path[1], &nb);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na);
    free(a);
    free(b);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* 8,000 pieces from the Tatoeba English side in seconds; and every dev
 * sentence encodes without <unk> and round-trips to its tokens. */
static void test_tatoeba_speed(void **state)
{
    (void)state;
    const char *dir = tatoeba_dir();
    if (!dir) SKIP_TEST("data", "no Tatoeba data");
    char path[512];
    snprintf(path, sizeof path, "%s/train.tsv", dir);
    Corpus c;
    Error err;
    if (corpus_load(path, 0, 1, &c, &err)) fail_msg("%s", err.message);
    double t0 = now();
    VocabBuilder *b = vocab_builder_new();
    for (size_t i = 0; i < c.count; i++)
        assert_int_equal(vocab_builder_add_text(b, c.source[i], strlen(c.source[i]), 1.0, &err), 0);
    double t1 = now();
    char out[512];
    snprintf(out, sizeof out, "%s/tatoeba-en.vocab", temp_dir());
    assert_int_equal(write_vocab_at(vocab_builder_write_subword, b, out, 8000, 1, &err), 0);
    double t2 = now();
    vocab_builder_free(b);
    print_message("tatoeba English: counting %.2f s, learning and writing 8000 pieces %.2f s\n", t1 - t0, t2 - t1);
    assert_true(t2 - t1 < 60); /* seconds on an idle machine; generous for a loaded one */
    Vocab *v = vocab_load(out, &err);
    assert_non_null(v);
    assert_int_equal(vocab_size(v), 8000);
    /* casing from where words are not sentence-initial: what the model
     * writes in lower case comes out as a reader expects */
    expect_round_trip(v, "i don't understand what you're saying.", "en", "I don't understand what you're saying.");
    expect_round_trip(v, "where do we live? we live in shanghai in 1990.", "en",
                      "Where do we live? We live in Shanghai in 1990.");
    expect_round_trip(v, "tom and mary went to boston.", "en", "Tom and Mary went to Boston.");
    corpus_free(&c);
    snprintf(path, sizeof path, "%s/dev.tsv", dir);
    if (corpus_load(path, 0, 1, &c, &err)) fail_msg("%s", err.message);
    size_t tokens = 0, ids = 0;
    for (size_t i = 0; i < c.count; i++) {
        Encoding e;
        assert_int_equal(encode_text(v, c.source[i], strlen(c.source[i]), &e, &err), 0);
        assert_int_equal(e.unknown, 0);
        tokens += e.tokens.count;
        ids += e.count;
        encoding_free(&e);
    }
    print_message("tatoeba English dev: %zu tokens as %zu pieces\n", tokens, ids);
    corpus_free(&c);
    vocab_free(v);
}

static const cJSON *get(const cJSON *obj, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!item) fail_msg("JSON has no '%s'", key);
    return item;
}

/* Each token list of the attention JSON says how its tokens join into
 * words: word_of[i] for each token, then the words' texts. */
static void check_words(const cJSON *list, const char *want_words)
{
    const cJSON *tokens = get(list, "tokens"), *word_of = get(list, "word_of"), *words = get(list, "words");
    int n = cJSON_GetArraySize(tokens);
    assert_int_equal(cJSON_GetArraySize(word_of), n);
    char joined[1024] = "";
    for (int k = 0; k < cJSON_GetArraySize(words); k++) {
        if (k) strcat(joined, " ");
        strcat(joined, cJSON_GetArrayItem(words, k)->valuestring);
    }
    if (want_words && strcmp(joined, want_words) != 0) fail_msg("words \"%s\", want \"%s\"", joined, want_words);
    int prev = -1;
    for (int i = 0; i < n; i++) {
        int w = cJSON_GetArrayItem(word_of, i)->valueint;
        const char *t = cJSON_GetArrayItem(tokens, i)->valuestring;
        /* a continuing piece stays in the word before it; anything else starts one */
        assert_int_equal(w, strncmp(t, "##", 2) == 0 && prev >= 0 ? prev : prev + 1);
        prev = w;
    }
    assert_int_equal(prev + 1, cJSON_GetArraySize(words));
}

/* The displays with a subword model: the attention JSON's tokens and
 * words, --explain and --show say how to read the pieces. */
static void test_displays_show_pieces(void **state)
{
    (void)state;
    char config[600], json[600];
    subword_tiny_config("subword-model", config, sizeof config);
    snprintf(json, sizeof json, "%s/subword-model/a.json", temp_dir());
    const char *argv[] = {"./translate", "-q", "-c", config, "-a", json, "--explain", "--show", "cross",
                          "The cat is sleeping in 1990.", NULL};
    RunResult r = run_program(argv, NULL, 0);
    if (r.status != 0) fail_msg("translate exited %d:\n%s", r.status, r.err);
    expect_in(r.out, "words; a \"##\" piece continues the word before it, <0xXX> is one byte)");
    expect_in(r.out, "is one byte (\\xXX above a column)\n"); /* --show's note */
    expect_in(r.out, "<0x31> | ##<0x39> | ##<0x39> | ##<0x30>"); /* no digit in tiny.tsv: bytes */
    /* --show's columns say which byte, not "<0x3" ("\x31" ends the first window of 13 keys) */
    expect_in(r.out, " \\x31\n");
    expect_in(r.out, " \\x39 \\x39 \\x30 ");
    char *text = read_file(json, NULL);
    cJSON *doc = cJSON_Parse(text);
    assert_non_null(doc);
    assert_string_equal(get(doc, "format_version")->valuestring, "1.2");
    const cJSON *s = cJSON_GetArrayItem(get(doc, "sentences"), 0);
    check_words(get(s, "source"), "the cat is sleeping in 1990 .");
    assert_true(cJSON_GetArraySize(get(get(s, "source"), "tokens")) > 10); /* pieces, digits */
    check_words(get(s, "decoder_input"), NULL);
    check_words(get(s, "output"), NULL);
    assert_string_equal(cJSON_GetArrayItem(get(get(s, "decoder_input"), "words"), 0)->valuestring, "<s>");
    cJSON_Delete(doc);
    free(text);
    run_result_free(&r);
}

/* Is `piece` among the learned ones? */
static bool learned(const BpePieces *p, const char *piece)
{
    for (size_t i = 0; i < p->count; i++)
        if (strcmp(p->piece[i], piece) == 0) return true;
    return false;
}

/* The limits of BPE's merges: a piece of exactly BPE_MAX_PIECE_BYTES of
 * text is learned (a "##" piece of them too, and kept in the vocabulary
 * file), and of two pairs seen equally often the one whose pieces come
 * first by their bytes merges first (bpe.h). */
static void test_bpe_limits_and_ties(void **state)
{
    (void)state;
    char stem[BPE_MAX_PIECE_BYTES + 1];
    for (int i = 0; i < BPE_MAX_PIECE_BYTES; i++) stem[i] = (char)('a' + i % 26);
    stem[BPE_MAX_PIECE_BYTES] = '\0';
    BpeToken whole = {stem, 10};
    BpePieces p;
    bpe_learn(&whole, 1, 1000, 1, &p);
    assert_true(learned(&p, stem));
    bpe_pieces_free(&p);
    /* the stem after other letters: "##stem", 64 bytes of text, in the file */
    const char *texts[8];
    char words[8][BPE_MAX_PIECE_BYTES + 2];
    for (int i = 0; i < 8; i++) {
        words[i][0] = (char)('b' + i);
        strcpy(words[i] + 1, stem);
        texts[i] = words[i];
    }
    Vocab *v = learn("longest.vocab", texts, 8, 600, 1);
    char continued[BPE_MAX_PIECE_BYTES + 3] = "##";
    strcat(continued, stem);
    assert_string_equal(vocab_token(v, vocab_id(v, continued)), continued); /* not <unk>'s */
    vocab_free(v);
    /* ties: "a ##b" and "c ##d" are each seen twice; one merge: "ab" */
    BpeToken tied[] = {{"ab", 2}, {"cd", 2}};
    bpe_learn(tied, 2, 5, 1, &p);
    assert_true(learned(&p, "ab"));
    assert_false(learned(&p, "cd"));
    bpe_pieces_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_byte_tokens_follow_the_specials),
        cmocka_unit_test(test_words_split_into_pieces),
        cmocka_unit_test(test_digits_are_single_pieces),
        cmocka_unit_test(test_han_characters_stay_single),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_casing_from_non_initial_words),
        cmocka_unit_test(test_casing_of_pieces),
        cmocka_unit_test(test_casing_inside_words),
        cmocka_unit_test(test_recase_keeps_tokens_and_counts),
        cmocka_unit_test(test_weights_and_min_count),
        cmocka_unit_test(test_bpe_limits_and_ties),
        cmocka_unit_test(test_bad_byte_tokens_are_rejected),
        cmocka_unit_test(test_stray_bytes_become_replacement_characters),
        cmocka_unit_test(test_control_bytes_are_not_written),
        cmocka_unit_test(test_word_vocabularies_are_unchanged),
        cmocka_unit_test(test_encoding_offsets),
        cmocka_unit_test(test_learner_is_deterministic),
        cmocka_unit_test(test_tatoeba_speed),
        cmocka_unit_test(test_displays_show_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
