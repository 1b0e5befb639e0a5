/* utf8.c - UTF-8 decoding and validation, and character classes (scripts:
 * script.c; encoding and the growable buffer: util/buf.h).
 *
 * Every reader here takes an explicit length and never looks past it, so
 * invalid or truncated input cannot make the pipeline read out of bounds.
 */
#include "text/text_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- decoding ---------------------------------------------------------- */

/* Length of the valid sequence at s[i], or 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t len, size_t i, uint32_t *cp)
{
    unsigned c = s[i];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t n;
    uint32_t v, min;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2, v = c & 0x1F, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3, v = c & 0x0F, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len - i < n) return 0;
    for (size_t k = 1; k < n; k++) {
        unsigned d = s[i + k];
        if ((d & 0xC0) != 0x80) return 0;
        v = (v << 6) | (d & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return n;
}

uint32_t fy_utf8_get(const char *s, size_t len, size_t i, size_t *n)
{
    uint32_t cp;
    size_t k = utf8_seq((const unsigned char *)s, len, i, &cp);
    if (!k) {
        *n = 1;
        return 0xFFFD;
    }
    *n = k;
    return cp;
}

size_t fy_utf8_back(const char *s, size_t i)
{
    size_t j = i - 1;
    for (int k = 0; k < 3 && j > 0 && ((unsigned char)s[j] & 0xC0) == 0x80; k++) j--;
    return j;
}

int fy_utf8_valid(const char *s, size_t len, size_t *bad_offset)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        if (u[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t cp;
        size_t n = utf8_seq(u, len, i, &cp);
        if (!n) {
            if (bad_offset) *bad_offset = i;
            return 0;
        }
        i += n;
    }
    return 1;
}

int fy_utf8_has(const char *set, uint32_t cp)
{
    size_t len = strlen(set), n;
    for (size_t i = 0; i < len; i += n)
        if (fy_utf8_get(set, len, i, &n) == cp) return 1;
    return 0;
}

/* ---- character classes -------------------------------------------------- */

int fy_cp_is_han(uint32_t cp)
{
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x20000 && cp <= 0x3134F);
}

int fy_cp_is_cjk(uint32_t cp)
{
    return fy_cp_is_han(cp) || (cp >= 0x3000 && cp <= 0x30FF) || /* CJK punct, kana */
           (cp >= 0xAC00 && cp <= 0xD7AF) ||                     /* hangul */
           (cp >= 0xFF00 && cp <= 0xFFEF) ||                     /* full-width forms */
           (cp >= 0xFE30 && cp <= 0xFE4F);                       /* CJK compatibility forms */
}

int fy_cp_is_space(uint32_t cp)
{
    return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || cp == '\f' || cp == '\v' ||
           cp == 0xA0 || cp == 0x3000 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x202F ||
           cp == 0x205F || cp == 0x1680;
}
