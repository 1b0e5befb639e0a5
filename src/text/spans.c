/* spans.c - protected spans: text that must come out exactly as it went in.
 *
 * URLs, e-mail addresses, `code` spans and numbers with Latin units are
 * strict: the splitter never cuts them and fy_doc_join puts them back even
 * if the engine dropped them. Latin identifiers inside Chinese (iPhone,
 * Node.js, GPT-4, COVID-19) are soft: never cut, repaired when the engine
 * changed their case or spacing, but not forced back in. They are only
 * looked for where Latin is not the source's own script (CJK, Korean): in
 * English, Latin words are the text.
 */
#include "text/text_internal.h"

#include <string.h>
#include <strings.h>

static int is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static int is_alnum(int c)
{
    return is_alpha(c) || is_digit(c);
}

int fy_span_is_strict(int kind)
{
    return kind != FY_SPAN_WORD;
}

/* Characters that may continue a URL: printable ASCII except white space,
 * quotes and angle brackets (which end a URL in running text or HTML). */
static int url_char(int c)
{
    return c > 0x20 && c < 0x7F && c != '"' && c != '<' && c != '>' && c != '`' && c != '\'';
}

/* Trailing punctuation belongs to the sentence, not the URL; a ')' stays
 * only if the URL opened one. */
static size_t url_trim(const char *s, size_t a, size_t e)
{
    while (e > a) {
        char c = s[e - 1];
        if (c == ')') {
            int depth = 0; /* keep a ')' that closes a '(' of the URL */
            for (size_t k = a; k < e - 1; k++) depth += (s[k] == '(') - (s[k] == ')');
            if (depth > 0) break;
        } else if (!strchr(".,;:!?]}*", c)) {
            break;
        }
        e--;
    }
    return e;
}

static size_t match_url(const char *s, size_t len, size_t i)
{
    static const char *const schemes[] = {"https://", "http://", "ftp://", "www.", "file://"};
    int c0 = s[i] | 0x20; /* the schemes' first letters: a cheap test for every byte */
    if (c0 != 'h' && c0 != 'f' && c0 != 'w') return 0;
    if (i > 0 && (is_alnum((unsigned char)s[i - 1]) || s[i - 1] == '.' || s[i - 1] == '@'))
        return 0;
    for (size_t k = 0; k < sizeof schemes / sizeof *schemes; k++) {
        size_t m = strlen(schemes[k]);
        if (len - i < m + 1 || strncasecmp(s + i, schemes[k], m) != 0) continue;
        size_t e = i + m;
        while (e < len && url_char((unsigned char)s[e])) e++;
        e = url_trim(s, i + m, e);
        return e > i + m ? e - i : 0;
    }
    return 0;
}

static int email_local(int c)
{
    return is_alnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-';
}

static size_t match_email(const char *s, size_t len, size_t i)
{
    if (!is_alnum((unsigned char)s[i]) || (i > 0 && email_local((unsigned char)s[i - 1]))) return 0;
    size_t at = i;
    while (at < len && email_local((unsigned char)s[at])) at++;
    if (at == i || at >= len || s[at] != '@') return 0;
    size_t e = at + 1, dot = 0;
    while (e < len && (is_alnum((unsigned char)s[e]) || s[e] == '-' || s[e] == '.')) e++;
    /* A final '.' ends the sentence, not the domain ("mail a@b.com."). */
    while (e > at + 1 && (s[e - 1] == '.' || s[e - 1] == '-')) e--;
    for (size_t k = at + 1; k < e; k++)
        if (s[k] == '.') dot = k;
    if (!dot || dot == at + 1) return 0;
    return e - i;
}

static size_t match_code(const char *s, size_t len, size_t i)
{
    if (s[i] != '`') return 0;
    for (size_t e = i + 1; e < len && s[e] != '\n' && s[e] != '\r'; e++)
        if (s[e] == '`') return e > i + 1 ? e + 1 - i : 0;
    return 0;
}

/* Units after a number: a span only if the next character is not a letter
 * (so "5 minutes" and "3 main points" stay translatable text). */
static const char *const units[] = {"km/h",
                                    "m/s",
                                    "mAh",
                                    "GHz",
                                    "MHz",
                                    "kHz",
                                    "Hz",
                                    "GB",
                                    "MB",
                                    "KB",
                                    "TB",
                                    "kB",
                                    "Gbps",
                                    "Mbps",
                                    "kW",
                                    "kWh",
                                    "km",
                                    "cm",
                                    "mm",
                                    "nm",
                                    "kg",
                                    "mg",
                                    "ml",
                                    "mL",
                                    "px",
                                    "pt",
                                    "dpi",
                                    "fps",
                                    "ms",
                                    "%",
                                    "\xe2\x80\xb0" /* ‰ */,
                                    "\xc2\xb0"
                                    "C",
                                    "\xc2\xb0"
                                    "F",
                                    "\xc2\xb0" /* ° */,
                                    "\xe2\x84\x83",
                                    "m",
                                    "g",
                                    "W",
                                    "V",
                                    "L",
                                    "s",
                                    "h",
                                    "K",
                                    "x"};

static size_t match_numunit(const char *s, size_t len, size_t i)
{
    size_t p = i;
    int cur = 0;
    if (s[p] == '$' || s[p] == '\xe2' || s[p] == '\xc2' || s[p] == '\xef') {
        static const char *const cur_signs[] = {"$", "\xe2\x82\xac", "\xc2\xa3", "\xc2\xa5",
                                                "\xef\xbf\xa5"};
        for (size_t k = 0; k < 5; k++) {
            size_t m = strlen(cur_signs[k]);
            if (len - p > m && memcmp(s + p, cur_signs[k], m) == 0 &&
                is_digit((unsigned char)s[p + m])) {
                p += m;
                cur = 1;
                break;
            }
        }
    }
    if (p >= len || !is_digit((unsigned char)s[p])) return 0;
    if (i > 0 && !cur && (is_alnum((unsigned char)s[i - 1]) || s[i - 1] == '.')) return 0;
    while (p < len &&
           (is_digit((unsigned char)s[p]) ||
            ((s[p] == '.' || s[p] == ',') && p + 1 < len && is_digit((unsigned char)s[p + 1]))))
        p++;
    if (cur) return p - i;
    for (int space = 0; space <= 1; space++) {
        size_t q = p + (size_t)space;
        if (space && (q >= len || s[p] != ' ')) break;
        if (q >= len || (unsigned char)s[q] <= ' ' || is_digit((unsigned char)s[q])) continue;
        for (size_t k = 0; k < sizeof units / sizeof *units; k++) {
            if (s[q] != units[k][0]) continue; /* cheap: this runs at every number */
            size_t m = strlen(units[k]);
            if (space && m < 2 && units[k][0] != '%') continue;
            if (len - q < m || memcmp(s + q, units[k], m) != 0) continue;
            if (q + m < len && is_alnum((unsigned char)s[q + m])) continue;
            return q + m - i;
        }
    }
    return 0;
}

static int word_char(int c)
{
    return is_alnum(c) || (c && strchr("._+#-/", c));
}

/* A Latin token that a model could mangle: it has a capital after its first
 * letter (iPhone, GitHub, NASA), or mixes letters with digits or . _ + #. */
static size_t match_word(const char *s, size_t len, size_t i)
{
    if (!is_alpha((unsigned char)s[i])) return 0;
    if (i > 0 && word_char((unsigned char)s[i - 1])) return 0;
    size_t e = i;
    while (e < len && word_char((unsigned char)s[e])) e++;
    while (e > i + 1 && strchr(".-/", s[e - 1])) e--;
    int odd = 0;
    for (size_t k = i; k < e; k++) {
        unsigned char c = (unsigned char)s[k];
        if ((k > i && c >= 'A' && c <= 'Z') || is_digit(c) || strchr("._+#", c)) odd = 1;
    }
    return odd && e - i >= 2 ? e - i : 0;
}

int fy_find_spans_ex(const char *s, size_t len, int words, fy_spans *out)
{
    size_t i = 0;
    while (i < len) {
        size_t m;
        int kind = 0;
        if ((m = match_code(s, len, i)))
            kind = FY_SPAN_CODE;
        else if ((m = match_url(s, len, i)))
            kind = FY_SPAN_URL;
        else if ((m = match_email(s, len, i)))
            kind = FY_SPAN_EMAIL;
        else if ((m = match_numunit(s, len, i)))
            kind = FY_SPAN_NUMUNIT;
        else if (words && (m = match_word(s, len, i)))
            kind = FY_SPAN_WORD;
        if (!kind) {
            /* Skip the rest of an ASCII word so matches start at word starts. */
            i++;
            continue;
        }
        if (fy_vec_reserve((void **)&out->v, &out->cap, out->n + 1, sizeof *out->v))
            return FY_ENOMEM;
        out->v[out->n++] = (fy_span){i, m, kind, 0};
        i += m;
    }
    return 0;
}

int fy_find_spans(const char *s, size_t len, fy_spans *out)
{
    return fy_find_spans_ex(s, len, 1, out);
}
