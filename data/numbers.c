/* numbers.c — the numbers shared by both sides of a pair, replaced by
 * random ones (see numbers.h). */
#include "numbers.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

#define MAX_NUMBERS 8   /* a pair with more is left alone */
#define MAX_DIGITS 24

typedef struct {
    const char *at;            /* where it starts in its text */
    size_t len;                /* bytes there, commas included */
    char digits[MAX_DIGITS + 1];
    bool commas;               /* written with thousands commas */
} Number;

/* Marks that join two digits into something other than a number: a
 * decimal (1.5), a time (9:30), a date or fraction (3/4), a range or a
 * phone number's parts (555-1234), or commas out of their places (1,23). */
static bool is_joiner(char c) { return c && strchr(".:/-,", c) != NULL; }

/* The numbers of text into out[]: how many, or -1 when the text has
 * something numbers.h does not count as one (the pair is then left alone). */
static int find_numbers(const char *text, Number *out)
{
    int n = 0;
    for (const char *p = text; *p;) {
        if (!ascii_is_digit(*p)) {
            p++;
            continue;
        }
        if (n == MAX_NUMBERS) return -1;
        Number *num = &out[n++];
        *num = (Number){.at = p};
        size_t count = 0;
        while (ascii_is_digit(*p)) {
            if (count == MAX_DIGITS) return -1;
            num->digits[count++] = *p++;
        }
        bool grouped = count <= 3; /* commas need 1 to 3 digits before the first */
        while (grouped && p[0] == ',' && ascii_is_digit(p[1]) && ascii_is_digit(p[2]) && ascii_is_digit(p[3]) &&
               !ascii_is_digit(p[4])) {
            if (count + 3 > MAX_DIGITS) return -1;
            memcpy(num->digits + count, p + 1, 3);
            count += 3;
            p += 4;
            num->commas = true;
        }
        num->digits[count] = '\0';
        num->len = (size_t)(p - num->at);
        /* A joiner between two digits is caught at the second number. */
        const char *before = num->at > text ? num->at - 1 : NULL;
        if ((before && ascii_is_letter(*before)) || ascii_is_letter(*p)) return -1;
        if (before && is_joiner(*before) && before > text && ascii_is_digit(before[-1])) return -1;
    }
    return n;
}

/* digits written with thousands commas or without, into out. */
static void write_number(const char *digits, bool commas, char *out)
{
    size_t len = strlen(digits), n = 0;
    for (size_t i = 0; i < len; i++) {
        if (commas && i > 0 && (len - i) % 3 == 0) out[n++] = ',';
        out[n++] = digits[i];
    }
    out[n] = '\0';
}

/* text with each nums[k] replaced by with[k], new. */
static char *replace_all(const char *text, const Number *nums, int n, char (*with)[2 * MAX_DIGITS])
{
    size_t size = strlen(text) + 1;
    for (int k = 0; k < n; k++) size += strlen(with[k]);
    char *out = xmalloc(size), *o = out;
    const char *p = text;
    for (int k = 0; k < n; k++) {
        memcpy(o, p, (size_t)(nums[k].at - p));
        o += nums[k].at - p;
        size_t w = strlen(with[k]);
        memcpy(o, with[k], w);
        o += w;
        p = nums[k].at + nums[k].len;
    }
    strcpy(o, p);
    return out;
}

/* How many of nums[0..n) have these digits; *which: the last. */
static int matches(const Number *nums, int n, const char *digits, int *which)
{
    int count = 0;
    for (int k = 0; k < n; k++)
        if (strcmp(nums[k].digits, digits) == 0) {
            count++;
            *which = k;
        }
    return count;
}

bool numbers_to_random(const char *en, const char *zh, unsigned copy, char **en_out, char **zh_out)
{
    *en_out = *zh_out = NULL;
    Number en_nums[MAX_NUMBERS], zh_nums[MAX_NUMBERS];
    int n = find_numbers(en, en_nums);
    if (n <= 0 || find_numbers(zh, zh_nums) != n) return false;
    int partner[MAX_NUMBERS]; /* en_nums[k] is zh_nums[partner[k]] */
    for (int k = 0; k < n; k++) {
        int unused;
        if (matches(en_nums, n, en_nums[k].digits, &unused) != 1 ||
            matches(zh_nums, n, en_nums[k].digits, &partner[k]) != 1)
            return false;
    }
    Rng rng;
    uint64_t seed = fnv1a(fnv1a(FNV_OFFSET, en, strlen(en) + 1), zh, strlen(zh) + 1);
    rng_seed(&rng, fnv1a(seed, &copy, sizeof copy));
    char en_with[MAX_NUMBERS][2 * MAX_DIGITS], zh_with[MAX_NUMBERS][2 * MAX_DIGITS];
    for (int k = 0; k < n; k++) {
        size_t len = rng_next(&rng) % 2 ? strlen(en_nums[k].digits) : 1 + rng_next(&rng) % 12;
        char digits[MAX_DIGITS + 1];
        for (size_t i = 0; i < len; i++)
            digits[i] = (char)(i == 0 && len > 1 ? '1' + rng_next(&rng) % 9 : '0' + rng_next(&rng) % 10);
        digits[len] = '\0';
        write_number(digits, en_nums[k].commas, en_with[k]);
        write_number(digits, zh_nums[partner[k]].commas, zh_with[partner[k]]);
    }
    *en_out = replace_all(en, en_nums, n, en_with);
    *zh_out = replace_all(zh, zh_nums, n, zh_with);
    return true;
}
