/* cedict.c — CC-CEDICT senses as short glosses (see cedict.h). */
#include "cedict.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/utf8.h"
#include "../common/util.h"
#include "../tokenizer/tokenizer.h"

bool cedict_headword_ok(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s);
    if (!len) return false;
    for (size_t i = 0; i < len;) {
        int32_t cp;
        size_t k = utf8_decode(p + i, len - i, &cp);
        if (!k || !tokenizer_is_cjk(cp)) return false;
        i += k;
    }
    return true;
}

static const char *const dropped_prefixes[] = {
    "CL:", "variant of", "old variant of", "archaic variant of", "Japanese variant of",
    "erhua variant of", "see ", "see also", "used in", "abbr. for", "abbr. of", "abbr. to",
    "short for", "short name for", "surname ", "also written", "also pr.", "Taiwan pr.", "pr. ",
};

static bool has_han(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        int32_t cp;
        size_t k = utf8_decode(p + i, len - i, &cp);
        if (!k) return true; /* invalid: treat as unusable */
        if (tokenizer_is_cjk(cp)) return true;
        i += k;
    }
    return false;
}

/* One sense [s, s+len) cleaned into a new string, or NULL when unusable. */
static char *clean_sense(const char *s, size_t len)
{
    while (len && *s == ' ') s++, len--;
    for (size_t i = 0; i < sizeof dropped_prefixes / sizeof dropped_prefixes[0]; i++) {
        size_t n = strlen(dropped_prefixes[i]);
        if (len >= n && strncasecmp(s, dropped_prefixes[i], n) == 0) return NULL;
    }
    char *out = xmalloc(len + 1);
    size_t n = 0;
    int depth = 0; /* inside (...) or [...], nested */
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '(' || c == '[') depth++;
        else if ((c == ')' || c == ']') && depth) depth--;
        else if (!depth && (c == ',' || c == ';')) break; /* the first alternative only */
        else if (!depth) out[n++] = c;
    }
    /* Collapse and trim spaces; count words. */
    size_t m = 0, words = 0;
    bool latin = false;
    for (size_t i = 0; i < n; i++) {
        if (out[i] == ' ') {
            if (m && out[m - 1] != ' ') out[m++] = ' ';
            continue;
        }
        if (!m || out[m - 1] == ' ') words++;
        latin |= ascii_is_letter(out[i]);
        out[m++] = out[i];
    }
    while (m && (out[m - 1] == ' ' || out[m - 1] == '.')) m--;
    out[m] = '\0';
    if (!m || !latin || words > CEDICT_MAX_WORDS || has_han(out, m)) {
        free(out);
        return NULL;
    }
    return out;
}

size_t cedict_glosses(const char *senses, char **out, size_t max)
{
    size_t count = 0;
    if (max > CEDICT_MAX_SENSES) max = CEDICT_MAX_SENSES;
    for (const char *p = senses; *p && count < max;) {
        const char *end = strstr(p, " / ");
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char *g = clean_sense(p, len);
        if (g) out[count++] = g;
        if (!end) break;
        p = end + 3;
    }
    return count;
}
