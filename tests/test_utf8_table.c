/* test_utf8_table.c — the tokenizer's UTF-8 check, row by row against
 * The Unicode Standard's Table 3-7, "Well-Formed UTF-8 Byte Sequences"
 * (chapter 3.9):
 *
 *   code points          1st      2nd      3rd      4th
 *   U+0000..U+007F       00..7F
 *   U+0080..U+07FF       C2..DF   80..BF
 *   U+0800..U+0FFF       E0       A0..BF   80..BF
 *   U+1000..U+CFFF       E1..EC   80..BF   80..BF
 *   U+D000..U+D7FF       ED       80..9F   80..BF
 *   U+E000..U+FFFF       EE..EF   80..BF   80..BF
 *   U+10000..U+3FFFF     F0       90..BF   80..BF   80..BF
 *   U+40000..U+FFFFF     F1..F3   80..BF   80..BF   80..BF
 *   U+100000..U+10FFFF   F4       80..8F   80..BF   80..BF
 *
 * For every row and every byte position, a sequence with that byte at the
 * lower and at the upper edge of its range (the other bytes at their lower
 * edge, then at their upper edge) must be accepted, and with that byte just
 * outside the range (edge - 1, edge + 1) refused with the byte offset of
 * the sequence — except for a first byte whose neighbour starts another
 * row (DF+1 = E0 is a first byte too): that case is another row's edge.
 * Surrogates (ED A0..BF ..), overlong forms (E0 9F .., F0 8F ..,  C0, C1)
 * and the last code point (F4 8F BF BF yes, F4 90 80 80 no) fall out of
 * the table and are spelled out too.  Each sequence is tokenised between
 * two ASCII letters, so the error must name byte 1.  And utf8_valid's
 * eight-bytes-at-a-time skipping of ASCII gives the answers of decoding
 * byte by byte, wherever a sequence falls.  utf8_encode, the other way,
 * writes every code point as a sequence decoding reads back. */
#include "testutil.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/utf8.h"
#include "../tokenizer/tokenizer.h"

typedef struct {
    unsigned first, last; /* code points of the row */
    int n;                /* bytes */
    unsigned char lo[4], hi[4];
} Row;

static const Row table_3_7[] = {
    {0x0000, 0x007F, 1, {0x00}, {0x7F}},
    {0x0080, 0x07FF, 2, {0xC2, 0x80}, {0xDF, 0xBF}},
    {0x0800, 0x0FFF, 3, {0xE0, 0xA0, 0x80}, {0xE0, 0xBF, 0xBF}},
    {0x1000, 0xCFFF, 3, {0xE1, 0x80, 0x80}, {0xEC, 0xBF, 0xBF}},
    {0xD000, 0xD7FF, 3, {0xED, 0x80, 0x80}, {0xED, 0x9F, 0xBF}},
    {0xE000, 0xFFFF, 3, {0xEE, 0x80, 0x80}, {0xEF, 0xBF, 0xBF}},
    {0x10000, 0x3FFFF, 4, {0xF0, 0x90, 0x80, 0x80}, {0xF0, 0xBF, 0xBF, 0xBF}},
    {0x40000, 0xFFFFF, 4, {0xF1, 0x80, 0x80, 0x80}, {0xF3, 0xBF, 0xBF, 0xBF}},
    {0x100000, 0x10FFFF, 4, {0xF4, 0x80, 0x80, 0x80}, {0xF4, 0x8F, 0xBF, 0xBF}},
};
enum { ROWS = sizeof table_3_7 / sizeof table_3_7[0] };

/* Is b the first byte of some row? */
static bool starts_a_row(int b)
{
    for (int r = 0; r < ROWS; r++)
        if (b >= table_3_7[r].lo[0] && b <= table_3_7[r].hi[0]) return true;
    return false;
}

static void show(char *out, size_t size, const unsigned char *seq, int n)
{
    size_t at = 0;
    for (int i = 0; i < n && at + 4 < size; i++) at += (size_t)snprintf(out + at, size - at, "%s%02X", i ? " " : "", seq[i]);
}

/* Tokenise "a" SEQ "b" in a child process (so that a sequence that gets
 * through the check and then trips an assertion further down fails this
 * test by name instead of killing the program): 1 when accepted, 0 when
 * refused naming byte 1; another message or a crash fails the test. */
static int accepted(const unsigned char *seq, int n)
{
    char text[8] = "a", hex[16];
    memcpy(text + 1, seq, (size_t)n);
    text[1 + n] = 'b';
    /* U+0000 is well-formed UTF-8 but the tokenizer refuses NUL bytes
     * (a separate rule, tested in test_tokenizer.c): stand in U+0001. */
    if (n == 1 && seq[0] == 0x00) text[1] = 0x01;
    show(hex, sizeof hex, seq, n);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) fail_msg("fork failed");
    if (pid == 0) {
        TokenList list = {0};
        Error err = {{0}};
        int status = tokenize(text, (size_t)n + 2, &list, &err);
        token_list_free(&list);
        if (status == 0) _exit(1);
        if (strcmp(err.message, "invalid UTF-8 at byte 1") == 0) _exit(0);
        fprintf(stderr, "%s: expected \"invalid UTF-8 at byte 1\", got \"%s\"\n", hex, err.message);
        _exit(2);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid) fail_msg("waitpid failed");
    if (WIFSIGNALED(status)) fail_msg("%s: the tokenizer crashed (signal %d)", hex, WTERMSIG(status));
    if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) fail_msg("%s: wrong error message (see above)", hex);
    return WEXITSTATUS(status);
}

static void expect(const unsigned char *seq, int n, int want, const char *why, int *checked)
{
    (*checked)++;
    if (accepted(seq, n) != want) {
        char hex[16];
        show(hex, sizeof hex, seq, n);
        fail_msg("%s was %s (%s)", hex, want ? "refused" : "accepted", why);
    }
}

static void test_both_edges_of_every_byte_range_of_table_3_7(void **state)
{
    (void)state;
    int checked = 0;
    for (int r = 0; r < ROWS; r++) {
        const Row *row = &table_3_7[r];
        for (int base = 0; base < 2; base++) { /* the other bytes at their lower, then upper edge */
            for (int i = 0; i < row->n; i++) {
                unsigned char seq[4];
                memcpy(seq, base ? row->hi : row->lo, 4);
                seq[i] = row->lo[i];
                expect(seq, row->n, 1, "lower edge", &checked);
                seq[i] = row->hi[i];
                expect(seq, row->n, 1, "upper edge", &checked);
                int below = row->lo[i] - 1, above = row->hi[i] + 1;
                if (below >= 0 && !(i == 0 && starts_a_row(below))) {
                    seq[i] = (unsigned char)below;
                    expect(seq, row->n, 0, "just below the range", &checked);
                }
                if (above <= 0xFF && !(i == 0 && starts_a_row(above))) {
                    seq[i] = (unsigned char)above;
                    expect(seq, row->n, 0, "just above the range", &checked);
                }
            }
        }
        /* and one byte short: a truncated sequence is refused */
        if (row->n > 1) expect(row->lo, row->n - 1, 0, "truncated", &checked);
    }
    print_message("%d sequences checked over the %d rows of Table 3-7\n", checked, ROWS);
}

/* The decoder itself, on a buffer cut inside a sequence whose next byte
 * (past `len`) would complete it: it must not look past `len`. */
static void test_decoding_never_reads_past_the_length(void **state)
{
    (void)state;
    for (int r = 0; r < ROWS; r++) {
        const Row *row = &table_3_7[r];
        for (int len = 1; len < row->n; len++) {
            int32_t cp = -1;
            if (utf8_decode(row->lo, (size_t)len, &cp) != 0)
                fail_msg("row %d: %d of its %d bytes decoded as U+%04X", r, len, row->n, (unsigned)cp);
        }
        int32_t cp = -1;
        assert_int_equal(utf8_decode(row->lo, (size_t)row->n, &cp), row->n);
    }
}

static void test_the_first_and_last_code_point_of_every_row(void **state)
{
    (void)state;
    int checked = 0;
    for (int r = 0; r < ROWS; r++) {
        for (int end = 0; end < 2; end++) {
            unsigned cp = end ? table_3_7[r].last : table_3_7[r].first;
            unsigned char seq[4];
            int n = table_3_7[r].n;
            /* encoded by hand, independently of the table's bytes */
            if (n == 1) seq[0] = (unsigned char)cp;
            else {
                for (int i = n - 1; i > 0; i--, cp >>= 6) seq[i] = (unsigned char)(0x80 | (cp & 0x3F));
                static const unsigned lead[5] = {0, 0, 0xC0, 0xE0, 0xF0}; /* 110xxxxx, 1110xxxx, 11110xxx */
                seq[0] = (unsigned char)(lead[n] | cp);
            }
            assert_memory_equal(seq, end ? table_3_7[r].hi : table_3_7[r].lo, (size_t)n);
            expect(seq, n, 1, "a row's first or last code point", &checked);
        }
    }
}

static void test_surrogates_overlongs_and_the_last_code_point(void **state)
{
    (void)state;
    int checked = 0;
    static const struct {
        unsigned char seq[4];
        int n, ok;
        const char *why;
    } cases[] = {
        {{0xED, 0x9F, 0xBF}, 3, 1, "U+D7FF, the last before the surrogates"},
        {{0xED, 0xA0, 0x80}, 3, 0, "U+D800, the first surrogate"},
        {{0xED, 0xAF, 0xBF}, 3, 0, "U+DBFF, the last high surrogate"},
        {{0xED, 0xB0, 0x80}, 3, 0, "U+DC00, the first low surrogate"},
        {{0xED, 0xBF, 0xBF}, 3, 0, "U+DFFF, the last surrogate"},
        {{0xEE, 0x80, 0x80}, 3, 1, "U+E000, the first after the surrogates"},
        {{0xC0, 0x80}, 2, 0, "overlong U+0000"},
        {{0xC1, 0xBF}, 2, 0, "overlong U+007F"},
        {{0xE0, 0x80, 0x80}, 3, 0, "overlong U+0000 in three bytes"},
        {{0xE0, 0x9F, 0xBF}, 3, 0, "overlong U+07FF in three bytes"},
        {{0xF0, 0x80, 0x80, 0x80}, 4, 0, "overlong U+0000 in four bytes"},
        {{0xF0, 0x8F, 0xBF, 0xBF}, 4, 0, "overlong U+FFFF in four bytes"},
        {{0xF4, 0x8F, 0xBF, 0xBF}, 4, 1, "U+10FFFF, the last code point"},
        {{0xF4, 0x90, 0x80, 0x80}, 4, 0, "U+110000, one past the last"},
        {{0xF5, 0x80, 0x80, 0x80}, 4, 0, "F5 starts nothing"},
        {{0xFF}, 1, 0, "FF starts nothing"},
        {{0x80}, 1, 0, "a lone continuation byte"},
        {{0xBF}, 1, 0, "a lone continuation byte"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect(cases[i].seq, cases[i].n, cases[i].ok, cases[i].why, &checked);
}

/* utf8_valid skips ASCII eight bytes at a time: every well-formed and
 * ill-formed sequence above, at each offset 0..17 of a run of ASCII and
 * followed by more (or cut short by the end of the text), must get the
 * answer of decoding it byte by byte. */
static bool valid_byte_by_byte(const unsigned char *s, size_t len)
{
    int32_t cp;
    for (size_t i = 0, n; i < len; i += n)
        if ((n = utf8_decode(s + i, len - i, &cp)) == 0) return false;
    return true;
}

static void test_ascii_runs_around_every_sequence(void **state)
{
    (void)state;
    unsigned char seqs[2 * ROWS + 4][4];
    int lens[2 * ROWS + 4], count = 0;
    for (int r = 0; r < ROWS; r++) {
        memcpy(seqs[count], table_3_7[r].lo, 4), lens[count++] = table_3_7[r].n;
        memcpy(seqs[count], table_3_7[r].hi, 4), lens[count++] = table_3_7[r].n;
    }
    static const unsigned char bad[][4] = {{0xED, 0xA0, 0x80}, {0xC0, 0x80}, {0x80}, {0xF4, 0x90, 0x80, 0x80}};
    static const int bad_len[] = {3, 2, 1, 4};
    for (int i = 0; i < 4; i++) memcpy(seqs[count], bad[i], 4), lens[count++] = bad_len[i];
    int checked = 0;
    for (int k = 0; k < count; k++)
        for (int at = 0; at < 18; at++)
            for (int after = 0; after < 10; after++)
                for (int cut = 0; cut < lens[k] && !(cut && after); cut++) { /* cut: bytes left out: the text ends inside it */
                    unsigned char text[40];
                    memset(text, 'a', sizeof text);
                    memcpy(text + at, seqs[k], (size_t)lens[k]);
                    size_t len = (size_t)(at + lens[k] + after);
                    if (cut) len = (size_t)(at + lens[k] - cut);
                    bool want = valid_byte_by_byte(text, len), got = utf8_valid((const char *)text, len);
                    checked++;
                    if (got != want)
                        fail_msg("sequence %d at offset %d, %zu bytes: utf8_valid says %d", k, at, len, got);
                }
    /* and ASCII alone, of every length up to 40 */
    unsigned char ascii[40];
    memset(ascii, 'z', sizeof ascii);
    for (size_t len = 0; len <= sizeof ascii; len++) assert_true(utf8_valid((const char *)ascii, len));
    print_message("%d texts checked\n", checked);
}

/* utf8_encode writes what utf8_decode reads back: every code point but
 * the surrogates, as a well-formed sequence of the length Table 3-7 gives
 * its row (the simplifier writes characters above U+FFFF, 𪢌 among them,
 * through it). */
static void test_encoding_every_code_point_decodes_back(void **state)
{
    (void)state;
    for (int32_t cp = 0; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF) continue;
        char out[4];
        size_t n = utf8_encode(cp, out), want = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        int32_t back = -1;
        if (n != want || !utf8_valid(out, n) || utf8_decode((const unsigned char *)out, n, &back) != n ||
            back != cp)
            fail_msg("U+%04X: %zu bytes (wanted %zu), read back as U+%04X", (unsigned)cp, n, want, (unsigned)back);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_both_edges_of_every_byte_range_of_table_3_7),
        cmocka_unit_test(test_decoding_never_reads_past_the_length),
        cmocka_unit_test(test_the_first_and_last_code_point_of_every_row),
        cmocka_unit_test(test_surrogates_overlongs_and_the_last_code_point),
        cmocka_unit_test(test_ascii_runs_around_every_sequence),
        cmocka_unit_test(test_encoding_every_code_point_decodes_back),
    };
    return cmocka_run_group_tests_name("UTF-8, Unicode Table 3-7", tests, NULL, NULL);
}
