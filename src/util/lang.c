/* lang.c - normalising language tags and direction names. */
#include "util/lang.h"
#include "util/lang_rules.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static int is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_alnum(int c)
{
    return is_alpha(c) || (c >= '0' && c <= '9');
}

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* Regions and scripts that mean Traditional Chinese. */
static int traditional_subtag(const char *s, size_t n)
{
    static const char *const t[] = {"hant", "tw", "hk", "mo"};
    for (size_t k = 0; k < sizeof t / sizeof *t; k++)
        if (strlen(t[k]) == n && !strncasecmp(s, t[k], n)) return 1;
    return 0;
}

/* Normalises the tag in code[0..len): subtags separated by '-' or '_'. */
static int normalize_n(const char *code, size_t len, char out[FY_LANG_MAX])
{
    out[0] = '\0';
    if (len == 0) return 1;
    if (len == 4 && !strncasecmp(code, "auto", 4)) return 1;
    if (len >= 64) return -1;
    size_t p = 0;
    while (p < len && is_alpha((unsigned char)code[p])) p++;
    if (p < 2 || p > 3 || (p < len && code[p] != '-' && code[p] != '_')) return -1;
    char primary[4] = {0};
    for (size_t i = 0; i < p; i++) primary[i] = (char)lower((unsigned char)code[i]);
    int hant = !strcmp(primary, "zt");
    int script = 0; /* a script subtag that is not Chinese's */
    char sc[5] = {0};
    for (size_t a = p; a < len;) {
        size_t e = ++a;
        while (e < len && is_alnum((unsigned char)code[e])) e++;
        if (e == a || (e < len && code[e] != '-' && code[e] != '_')) return -1;
        if (!strcmp(primary, "zh") && traditional_subtag(code + a, e - a)) hant = 1;
        if (e - a == 4 && is_alpha((unsigned char)code[a]) && strcmp(primary, "zh") && !script) {
            for (int i = 0; i < 4; i++) sc[i] = (char)(i ? lower(code[a + i]) : code[a] & ~0x20);
            script = 1;
        }
        a = e;
    }
    if (hant) {
        snprintf(out, FY_LANG_MAX, "zh-Hant");
    } else if (!strcmp(primary, "zt")) {
        snprintf(out, FY_LANG_MAX, "zh-Hant");
    } else if (script && !strcmp(primary, "sr")) {
        /* Serbian is the one Firefox language written in two scripts. */
        snprintf(out, FY_LANG_MAX, "%s-%s", primary, sc);
    } else {
        snprintf(out, FY_LANG_MAX, "%s", primary);
    }
    return 0;
}

int fy_lang_normalize(const char *code, char out[FY_LANG_MAX])
{
    return normalize_n(code, code ? strlen(code) : 0, out);
}

/* Length of the tag at the start of s: a primary subtag and an optional
 * 4-letter script subtag. */
static size_t tag_length(const char *s)
{
    size_t p = 0;
    while (is_alpha((unsigned char)s[p])) p++;
    if (p < 2 || p > 3) return 0;
    if ((s[p] == '-' || s[p] == '_') && is_alpha((unsigned char)s[p + 1])) {
        size_t e = p + 1;
        while (is_alpha((unsigned char)s[e])) e++;
        if (e - p - 1 == 4 && (s[e] == '-' || s[e] == '_' || s[e] == '\0')) {
            /* "zh-Hant-en": a script; "en-zh" would have a 2-letter one. */
            return e;
        }
    }
    return p;
}

int fy_lang_pair_parse(const char *name, char src[FY_LANG_MAX], char tgt[FY_LANG_MAX])
{
    src[0] = tgt[0] = '\0';
    if (!name) return -1;
    size_t a = tag_length(name);
    if (!a || (name[a] != '-' && name[a] != '_')) return -1;
    const char *rest = name + a + 1;
    size_t b = tag_length(rest);
    if (!b || rest[b] != '\0') return -1;
    if (normalize_n(name, a, src) != 0 || normalize_n(rest, b, tgt) != 0) {
        src[0] = tgt[0] = '\0';
        return -1;
    }
    return 0;
}

void fy_lang_pair_name(const char *src, const char *tgt, char *out, size_t cap)
{
    snprintf(out, cap, "%s-%s", src, tgt);
}

int fy_lang_pair_from_infix(const char *infix, char src[FY_LANG_MAX], char tgt[FY_LANG_MAX])
{
    src[0] = tgt[0] = '\0';
    size_t n = infix ? strlen(infix) : 0;
    for (size_t i = 0; i < n; i++)
        if (!is_alpha((unsigned char)infix[i])) return -1;
    size_t cut;
    if (n == 4)
        cut = 2;
    else if ((n == 5 || n == 6) && !strncasecmp(infix, "en", 2))
        cut = 2;
    else if ((n == 5 || n == 6) && !strcasecmp(infix + n - 2, "en"))
        cut = n - 2;
    else
        return -1;
    char a[8] = {0}, b[8] = {0};
    memcpy(a, infix, cut);
    memcpy(b, infix + cut, n - cut);
    if (fy_lang_normalize(a, src) != 0 || fy_lang_normalize(b, tgt) != 0) {
        src[0] = tgt[0] = '\0';
        return -1;
    }
    return 0;
}

const char *fy_lang_name(const char *tag)
{
    const fy_lang_rules *r = fy_lang_rules_of(tag);
    return r->name ? r->name : tag;
}

int fy_lang_is_cjk(const char *tag)
{
    const fy_lang_rules *r = fy_lang_rules_of(tag);
    return r->source == FY_SRC_HAN || r->source == FY_SRC_JA;
}
