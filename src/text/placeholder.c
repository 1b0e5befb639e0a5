/* placeholder.c - the placeholders translation plug-ins put in a text.
 *
 * Immersive Translate replaces what is not text (an emoji, an inline
 * element) with a numbered placeholder and restores it after the
 * translation: {0} or <b0></b0> in its documented custom API, with
 * user-chosen brackets ({N}, {{N}}, [N], [[N]]) and tag name. Kiss
 * Translator does the same with {1}, {{1}}, [1], [[1]] and wraps rich
 * text in numbered tags (<i1>link text</i1>). A placeholder must come
 * back unchanged and in place, so the splitter keeps it out of the
 * engine's text (an inline event, see fy_flatten) and the join puts it
 * back where it stood.
 */
#include "text/text_internal.h"

#include <string.h>

static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static int is_letter(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Length of the run of at most max digits at s[i] (0 if none, or longer). */
static size_t digits(const char *s, size_t len, size_t i, size_t max)
{
    size_t e = i;
    while (e < len && is_digit((unsigned char)s[e])) e++;
    return e - i <= max ? e - i : 0;
}

/* A numbered bracket: {N}, {{N}}, [N] or [[N]] at s[i]. */
static size_t match_bracket(const char *s, size_t len, size_t i)
{
    char open = s[i], close = open == '{' ? '}' : ']';
    for (size_t depth = 2; depth >= 1; depth--) {
        size_t p = i;
        for (size_t k = 0; k < depth; k++, p++)
            if (p >= len || s[p] != open) goto next;
        size_t n = digits(s, len, p, 4);
        if (!n) goto next;
        p += n;
        for (size_t k = 0; k < depth; k++, p++)
            if (p >= len || s[p] != close) goto next;
        /* "{{1}}}" or "[[1]]]": the brackets do not balance, not ours. */
        if (p < len && s[p] == close) goto next;
        return p - i;
    next:;
    }
    return 0;
}

/* The numbered tag name at s[i] ("b0", "i12"): letters then digits.
 * Returns its length, 0 if there is none. */
static size_t tag_name(const char *s, size_t len, size_t i)
{
    size_t e = i;
    while (e < len && e - i < 8 && is_letter((unsigned char)s[e])) e++;
    if (e == i) return 0;
    size_t n = digits(s, len, e, 4);
    if (!n) return 0;
    e += n;
    return e < len && (is_letter((unsigned char)s[e]) || is_digit((unsigned char)s[e])) ? 0 : e - i;
}

/* Does "<"+name+">" (open) or "</"+name+">" (closing) occur in s[a..e)? */
static int has_tag(const char *s, size_t a, size_t e, const char *name, size_t n, int closing)
{
    char want[16];
    size_t m = 0;
    want[m++] = '<';
    if (closing) want[m++] = '/';
    memcpy(want + m, name, n);
    m += n;
    want[m++] = '>';
    return e > a && memmem(s + a, e - a, want, m) != NULL;
}

/* A numbered tag at s[i] == '<': <b0></b0> and <b0/> are one placeholder;
 * <i1> and </i1> wrap text and are inline tags, but only as a pair. */
static size_t match_tag(const char *s, size_t len, size_t i, int *kind)
{
    int closing = i + 1 < len && s[i + 1] == '/';
    size_t a = i + 1 + (size_t)closing, n = tag_name(s, len, a);
    if (!n) return 0;
    const char *name = s + a;
    size_t p = a + n;
    if (closing) {
        if (p >= len || s[p] != '>' || !has_tag(s, 0, i, name, n, 0)) return 0;
        *kind = FY_EV_CLOSE;
        return p + 1 - i;
    }
    if (p < len && s[p] == ' ') p++;
    if (p + 1 < len && s[p] == '/' && s[p + 1] == '>') {
        *kind = FY_EV_OTHER;
        return p + 2 - i;
    }
    if (p >= len || s[p] != '>') return 0;
    p++;
    if (len - p >= n + 3 && s[p] == '<' && s[p + 1] == '/' && !memcmp(s + p + 2, name, n) &&
        s[p + 2 + n] == '>') {
        *kind = FY_EV_OTHER;
        return p + n + 3 - i;
    }
    if (!has_tag(s, p, len, name, n, 1)) return 0;
    *kind = FY_EV_OPEN;
    return p - i;
}

size_t fy_placeholder_at(const char *s, size_t len, size_t i, int *kind)
{
    if (i >= len) return 0;
    if (s[i] == '{' || s[i] == '[') {
        *kind = FY_EV_OTHER;
        return match_bracket(s, len, i);
    }
    return s[i] == '<' ? match_tag(s, len, i, kind) : 0;
}
