/* utf8.c — see utf8.h. */
#include "utf8.h"

#include <string.h>

#include "util.h"

size_t utf8_decode(const unsigned char *s, size_t len, int32_t *cp)
{
    unsigned char b = s[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the 2nd byte */
    if (b < 0x80) { *cp = b; return 1; }
    if (b >= 0xC2 && b <= 0xDF) { n = 2; *cp = b & 0x1F; }
    else if (b >= 0xE0 && b <= 0xEF) {
        n = 3; *cp = b & 0x0F;
        if (b == 0xE0) lo = 0xA0;      /* overlong below U+0800 */
        if (b == 0xED) hi = 0x9F;      /* surrogates D800–DFFF */
    } else if (b >= 0xF0 && b <= 0xF4) {
        n = 4; *cp = b & 0x07;
        if (b == 0xF0) lo = 0x90;      /* overlong below U+10000 */
        if (b == 0xF4) hi = 0x8F;      /* above U+10FFFF */
    } else {
        return 0;                      /* continuation byte, C0/C1, F5–FF */
    }
    if (len < n) return 0;
    for (size_t i = 1; i < n; i++) {
        unsigned char c = s[i];
        if (c < (i == 1 ? lo : 0x80) || c > (i == 1 ? hi : 0xBF)) return 0;
        *cp = (*cp << 6) | (c & 0x3F);
    }
    return n;
}

bool utf8_valid(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    int32_t cp;
    for (size_t i = 0, n; i < len; i += n) {
        /* ASCII needs no decoding: 8 bytes at a time while no high bit is
         * set (a vocabulary file is mostly ASCII), then byte by byte. */
        uint64_t word;
        while (i + 8 <= len && (memcpy(&word, u + i, 8), (word & 0x8080808080808080ULL) == 0)) i += 8;
        if (i == len) break;
        if (u[i] < 0x80) n = 1;
        else if ((n = utf8_decode(u + i, len - i, &cp)) == 0) return false;
    }
    return true;
}

size_t utf8_bom_length(const char *s, size_t len)
{
    return len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
}

size_t utf8_encode(int32_t cp, char *out)
{
    if (cp < 0x80) return out[0] = (char)cp, 1;
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

char *utf8_copy_valid(const char *s)
{
    size_t len = strlen(s);
    char *out = xmalloc(3 * len + 1), *o = out; /* one byte -> 3 at most */
    int32_t cp;
    for (size_t i = 0, n; i < len; i += n) {
        n = (unsigned char)s[i] < 0x80 ? 1 : utf8_decode((const unsigned char *)s + i, len - i, &cp);
        if (n == 0) {
            memcpy(o, "\xEF\xBF\xBD", 3);
            o += 3;
            n = 1;
        } else {
            memcpy(o, s + i, n);
            o += n;
        }
    }
    *o = '\0';
    return out;
}
