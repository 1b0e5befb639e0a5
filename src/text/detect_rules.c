/* detect_rules.c - the parts of language detection that are not CLD2's:
 * what a text's own sentence is written in (its frame), and the letters
 * that tell apart languages of one script in text too short for CLD2.
 *
 * The frame: a Chinese sentence quoting English words ("他说 "machine
 * learning" 然后走了"), an English one naming a person in Chinese ("lunch
 * with Zhang Wei (张伟)"), code and product names in any text (iPhone,
 * max_connections, feature/login, GPT-4): quotations, brackets and
 * code-like words are set aside, and the rest is the language of the text.
 */
#include "text/text_internal.h"

#include <stdlib.h>
#include <string.h>

/* The closing mark of a quotation or bracket opened by cp, or 0. */
static uint32_t closer_of(uint32_t cp)
{
    switch (cp) {
    case '"':
        return '"';
    case '(':
        return ')';
    case 0x201C: /* “ ” */
        return 0x201D;
    case 0xAB: /* « » */
        return 0xBB;
    case 0x300C: /* 「 」 */
        return 0x300D;
    case 0x300E: /* 『 』 */
        return 0x300F;
    case 0xFF08: /* （ ） */
        return 0xFF09;
    default:
        return 0;
    }
}

/* Where the quotation opened at s[i] (n bytes) ends (after its closer), on
 * the same line and within 400 bytes, or 0. */
static size_t quotation_end(const char *s, size_t len, size_t i, size_t n, uint32_t close)
{
    size_t m;
    for (size_t j = i + n; j < len && j < i + 400; j += m) {
        uint32_t cp = fy_utf8_get(s, len, j, &m);
        if (cp == '\n') return 0;
        if (cp == close) return j + m;
    }
    return 0;
}

static int lower_ascii(char c)
{
    return c >= 'a' && c <= 'z';
}

static int upper_ascii(char c)
{
    return c >= 'A' && c <= 'Z';
}

static int digit_ascii(char c)
{
    return c >= '0' && c <= '9';
}

/* Is the ASCII word s[a..e) code or a name rather than a word of a
 * language: an identifier (max_connections), a path (feature/login), an
 * option (-b), markup, camel case (iPhone, OpenAI), letters with digits
 * (GPT-4, h264), dotted (Node.js)? */
static int code_like(const char *s, size_t a, size_t e)
{
    int letters = 0, digits = 0;
    if (s[a] == '-' || s[a] == '$' || s[a] == '#' || s[a] == '@') return 1;
    for (size_t i = a; i < e; i++) {
        char c = s[i];
        if (strchr("_/\\=(){}<>[];|", c)) return 1;
        if (i > a && upper_ascii(c) && lower_ascii(s[i - 1])) return 1;
        if (c == '.' && i > a && i + 1 < e && lower_ascii(s[i - 1]) && lower_ascii(s[i + 1]))
            return 1;
        letters |= lower_ascii(c) || upper_ascii(c);
        digits |= digit_ascii(c);
    }
    return letters && digits;
}

static int ascii_word_char(char c)
{
    return (unsigned char)c > 0x20 && (unsigned char)c < 0x7F && c != '"' && c != '(';
}

char *fy_detect_frame(const char *s, size_t len, size_t *out_len)
{
    fy_buf b = {0};
    for (size_t i = 0, m; i < len; i += m) {
        uint32_t cp = fy_utf8_get(s, len, i, &m), close = closer_of(cp);
        size_t e = close ? quotation_end(s, len, i, m, close) : 0;
        if (e) {
            fy_buf_putc(&b, ' ');
            m = e - i;
            continue;
        }
        if (cp < 0x80 && ascii_word_char((char)cp) && (i == 0 || !ascii_word_char(s[i - 1]))) {
            size_t j = i;
            while (j < len && ascii_word_char(s[j])) j++;
            if (code_like(s, i, j)) {
                fy_buf_putc(&b, ' ');
                m = j - i;
                continue;
            }
        }
        fy_buf_put(&b, s + i, m);
    }
    if (!b.n && !b.oom) fy_buf_putc(&b, ' ');
    return fy_buf_take(&b, out_len);
}

/* ---- letters that tell languages of one script apart ------------------------ */

/* Does s[0..len) hold any character of set (UTF-8)? */
static int has_any(const char *s, size_t len, const char *set)
{
    for (size_t i = 0, m; i < len; i += m)
        if (fy_utf8_has(set, fy_utf8_get(s, len, i, &m))) return 1;
    return 0;
}

/* Belarusian writes ў, і, ы, дз and never и; Ukrainian і, ї, є, ґ and и;
 * Serbian ј љ њ ћ ђ џ; Russian ы э ё; Bulgarian ъ as a vowel. */
static const char *cyrillic(const char *s, size_t n)
{
    int i_dot = has_any(s, n, "іІ"), russian = has_any(s, n, "ыЫэЭёЁ");
    int ii = has_any(s, n, "иИ"),
        dz = memmem(s, n, "дз", strlen("дз")) || memmem(s, n, "Дз", strlen("Дз"));
    if (has_any(s, n, "ўЎ")) return "be";
    if (has_any(s, n, "їЇєЄґҐ")) return "uk";
    if (!ii && dz && (russian || i_dot)) return "be";
    if (i_dot) return ii || !russian ? "uk" : "be";
    if (has_any(s, n, "јЈљЉњЊћЋђЂџЏ")) return "sr";
    if (russian) return "ru";
    if (has_any(s, n, "ъЪ")) return "bg";
    return NULL;
}

static const char *arabic(const char *s, size_t n)
{
    if (has_any(s, n, "ےںٹڈڑۓ")) return "ur";
    int persian = has_any(s, n, "پچژگکی"), arabic_only = has_any(s, n, "ةيى");
    if (persian && !arabic_only) return "fa";
    if (arabic_only && !persian) return "ar";
    return NULL;
}

const char *fy_letter_rule(const char *s, size_t n, const char *script)
{
    if (!script) return NULL;
    if (!strcmp(script, "Cyrl")) return cyrillic(s, n);
    if (!strcmp(script, "Arab")) return arabic(s, n);
    /* Marathi writes ळ, Hindi hardly ever; short Devanagari is Hindi. */
    if (!strcmp(script, "Deva")) return has_any(s, n, "ळ") ? "mr" : "hi";
    return NULL;
}
