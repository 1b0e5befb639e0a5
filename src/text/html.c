/* html.c - a small HTML tokenizer that turns a document into flat text for
 * the sentence splitter, remembering where every flat byte came from.
 *
 * It is deliberately forgiving: it never fails on malformed markup (a tag
 * or comment left open runs to the end of the input and is kept verbatim),
 * and it only needs to know three things about an element: is it inline
 * (<b>, <a>, <span>...: stays inside a sentence), a block (<p>, <div>, <br>,
 * <li>...: ends a sentence), or untouched (<script>, <style>, <pre>,
 * <code>, <textarea>, translate="no": copied through as it is).
 */
#include "text/text_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const inline_tags[] = {
    "a",   "abbr",   "b",    "bdi", "bdo",   "cite",    "data",  "dfn",  "em",     "font",
    "i",   "kbd",    "mark", "q",   "s",     "samp",    "small", "span", "strong", "sub",
    "sup", "time",   "u",    "var", "label", "ins",     "del",   "img",  "wbr",    "big",
    "tt",  "strike", "ruby", "rt",  "rp",    "acronym", "nobr",
};

/* Elements whose content is never translated. */
static const char *const raw_tags[] = {"script", "style", "pre", "code", "textarea",
                                       "svg",    "math",  "kbd", "samp", "var"};

static const char *const void_tags[] = {"area",  "base", "br",   "col",   "embed",  "hr",    "img",
                                        "input", "link", "meta", "param", "source", "track", "wbr"};

static int name_in(const char *name, size_t n, const char *const *list, size_t count)
{
    for (size_t k = 0; k < count; k++)
        if (strlen(list[k]) == n && strncasecmp(name, list[k], n) == 0) return 1;
    return 0;
}

#define IN(list, name, n) name_in(name, n, list, sizeof list / sizeof *list)

static int is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_name(int c)
{
    return is_alpha(c) || (c >= '0' && c <= '9') || c == '-' || c == ':' || c == '_';
}

/* ---- entities ----------------------------------------------------------- */

static const struct {
    const char *name;
    uint32_t cp;
} entities[] = {
    {"amp", '&'},       {"lt", '<'},       {"gt", '>'},       {"quot", '"'},     {"apos", '\''},
    {"nbsp", 0xA0},     {"copy", 0xA9},    {"reg", 0xAE},     {"trade", 0x2122}, {"hellip", 0x2026},
    {"mdash", 0x2014},  {"ndash", 0x2013}, {"lsquo", 0x2018}, {"rsquo", 0x2019}, {"ldquo", 0x201C},
    {"rdquo", 0x201D},  {"middot", 0xB7},  {"times", 0xD7},   {"deg", 0xB0},     {"yen", 0xA5},
    {"euro", 0x20AC},   {"pound", 0xA3},   {"cent", 0xA2},    {"sect", 0xA7},    {"para", 0xB6},
    {"laquo", 0xAB},    {"raquo", 0xBB},   {"bull", 0x2022},  {"emsp", 0x2003},  {"ensp", 0x2002},
    {"thinsp", 0x2009}, {"plusmn", 0xB1},  {"divide", 0xF7},  {"frac12", 0xBD},  {"shy", 0xAD},
};

size_t fy_html_entity(const char *s, size_t len, size_t i, uint32_t *cp)
{
    size_t p = i + 1;
    if (p >= len) return 0;
    if (s[p] == '#') {
        int hex = p + 1 < len && (s[p + 1] == 'x' || s[p + 1] == 'X');
        size_t q = p + 1 + (size_t)hex, d = q;
        uint32_t v = 0;
        while (q < len && q - d < 8) {
            int c = (unsigned char)s[q], x;
            if (c >= '0' && c <= '9')
                x = c - '0';
            else if (hex && (c | 0x20) >= 'a' && (c | 0x20) <= 'f')
                x = (c | 0x20) - 'a' + 10;
            else
                break;
            v = v * (hex ? 16 : 10) + (uint32_t)x;
            q++;
        }
        if (q == d || q >= len || s[q] != ';') return 0;
        if (v == 0 || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
        *cp = v;
        return q + 1 - i;
    }
    size_t q = p;
    while (q < len && q - p < 10 && is_name((unsigned char)s[q])) q++;
    if (q == p || q >= len || s[q] != ';') return 0;
    for (size_t k = 0; k < sizeof entities / sizeof *entities; k++) {
        if (strlen(entities[k].name) == q - p && memcmp(s + p, entities[k].name, q - p) == 0) {
            *cp = entities[k].cp;
            return q + 1 - i;
        }
    }
    return 0;
}

/* ---- tags ---------------------------------------------------------------- */

typedef struct tag {
    size_t end;       /* one past '>' (or len if unterminated) */
    const char *name; /* into the source */
    size_t name_len;
    int closing, self_closing, no_translate;
} tag;

/* Does the attribute text contain translate="no" or class ...notranslate? */
static int attr_no_translate(const char *s, size_t a, size_t e)
{
    for (size_t i = a; i + 9 <= e; i++) {
        if (strncasecmp(s + i, "translate", 9) == 0 &&
            (i == a || !is_name((unsigned char)s[i - 1])) && i + 9 < e) {
            size_t q = i + 9;
            while (q < e && s[q] == ' ') q++;
            if (q < e && s[q] == '=') {
                q++;
                while (q < e && s[q] == ' ') q++;
                if (q < e && (s[q] == '"' || s[q] == '\'')) q++;
                if (e - q >= 2 && strncasecmp(s + q, "no", 2) == 0 &&
                    (q + 2 == e || !is_name((unsigned char)s[q + 2])))
                    return 1;
            }
        }
        if (i + 11 <= e && strncasecmp(s + i, "notranslate", 11) == 0) return 1;
    }
    return 0;
}

/* Parses the tag at s[i] == '<' followed by a letter or '/'+letter. */
static void parse_tag(const char *s, size_t len, size_t i, tag *t)
{
    memset(t, 0, sizeof *t);
    size_t p = i + 1;
    if (s[p] == '/') t->closing = 1, p++;
    t->name = s + p;
    while (p < len && is_name((unsigned char)s[p])) p++;
    t->name_len = (size_t)(s + p - t->name);
    size_t attrs = p;
    char quote = 0;
    while (p < len) {
        char c = s[p];
        if (quote) {
            if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '>') {
            break;
        }
        p++;
    }
    t->end = p < len ? p + 1 : len;
    t->self_closing = p < len && p > attrs && s[p - 1] == '/';
    t->no_translate = !t->closing && attr_no_translate(s, attrs, p);
}

static size_t skip_comment(const char *s, size_t len, size_t i)
{
    const char *e = memmem(s + i + 4, len - i - 4, "-->", 3);
    return e ? (size_t)(e - s) + 3 : len;
}

/* End of the element whose start tag t begins at i: past its matching end
 * tag, counting nested elements of the same name; raw-text elements
 * (script, style, textarea) end at the first "</name". */
static size_t element_end(const char *s, size_t len, const tag *t)
{
    static const char *const rawtext_tags[] = {"script", "style", "textarea"};
    int rawtext = IN(rawtext_tags, t->name, t->name_len);
    size_t p = t->end;
    int depth = 1;
    while (p < len) {
        const char *lt = memchr(s + p, '<', len - p);
        if (!lt) return len;
        p = (size_t)(lt - s);
        if (!rawtext && len - p >= 4 && memcmp(s + p, "<!--", 4) == 0) {
            p = skip_comment(s, len, p);
            continue;
        }
        int closing = p + 1 < len && s[p + 1] == '/';
        size_t q = p + 1 + (size_t)closing;
        if (len - q >= t->name_len && strncasecmp(s + q, t->name, t->name_len) == 0 &&
            (q + t->name_len == len || !is_name((unsigned char)s[q + t->name_len]))) {
            tag u;
            parse_tag(s, len, p, &u);
            if (closing)
                depth--;
            else if (!rawtext && !u.self_closing)
                depth++;
            if (depth == 0) return u.end;
            p = u.end;
            continue;
        }
        p++;
    }
    return len;
}

/* ---- flattening ---------------------------------------------------------- */

static int event(fy_flat *f, size_t pos, size_t src, size_t len, int kind)
{
    if (fy_vec_reserve((void **)&f->ev, &f->cap_ev, f->nev + 1, sizeof *f->ev)) return FY_ENOMEM;
    f->ev[f->nev++] = (fy_event){pos, src, len, kind};
    return 0;
}

typedef struct flat_state {
    fy_flat *f;
    fy_buf b;
    size_t cap; /* of s0 and s1 */
} flat_state;

static int emit(flat_state *st, const char *bytes, size_t n, size_t s0, size_t s1)
{
    fy_flat *f = st->f;
    size_t at = st->b.n;
    fy_buf_put(&st->b, bytes, n);
    if (st->b.oom) return FY_ENOMEM;
    if (st->b.n > st->cap) {
        size_t c = st->cap ? st->cap : 64;
        while (c < st->b.n) c *= 2;
        size_t *p0 = realloc(f->s0, c * sizeof *p0);
        if (!p0) return FY_ENOMEM;
        f->s0 = p0;
        size_t *p1 = realloc(f->s1, c * sizeof *p1);
        if (!p1) return FY_ENOMEM;
        f->s1 = p1;
        st->cap = c;
    }
    for (size_t k = at; k < st->b.n; k++) f->s0[k] = s0, f->s1[k] = s1;
    return 0;
}

/* One step of the tokenizer at s[i] == '<' (markup): records the tag as an
 * event or a '\n' in the flat text. Returns the index after it; *rc
 * receives 0 or FY_ENOMEM. */
static size_t flat_markup(flat_state *st, const char *s, size_t len, size_t i, int *rc)
{
    size_t pos = st->b.n;
    if (len - i >= 4 && memcmp(s + i, "<!--", 4) == 0) {
        size_t e = skip_comment(s, len, i);
        *rc = event(st->f, pos, i, e - i, FY_EV_OTHER);
        return e;
    }
    if (s[i + 1] == '!' || s[i + 1] == '?') { /* doctype, CDATA, processing instruction */
        const char *gt = memchr(s + i, '>', len - i);
        size_t e = gt ? (size_t)(gt - s) + 1 : len;
        *rc = emit(st, "\n", 1, i, e);
        return e;
    }
    tag t;
    parse_tag(s, len, i, &t);
    int inl = IN(inline_tags, t.name, t.name_len);
    if (!t.closing && (t.no_translate || IN(raw_tags, t.name, t.name_len))) {
        int is_void = IN(void_tags, t.name, t.name_len) || t.self_closing;
        size_t e = is_void ? t.end : element_end(s, len, &t);
        if (inl || (t.name_len == 4 && strncasecmp(t.name, "code", 4) == 0)) {
            *rc = emit(st, "\xef\xbf\xbc", 3, i, e); /* U+FFFC: one object */
            if (!*rc) *rc = event(st->f, pos, i, e - i, FY_EV_OBJECT);
        } else {
            *rc = emit(st, "\n", 1, i, e);
        }
        return e;
    }
    if (inl) {
        int kind = t.closing ? FY_EV_CLOSE : FY_EV_OPEN;
        if (!t.closing && (IN(void_tags, t.name, t.name_len) || t.self_closing)) kind = FY_EV_OTHER;
        *rc = event(st->f, pos, i, t.end - i, kind);
    } else {
        *rc = emit(st, "\n", 1, i, t.end);
    }
    return t.end;
}

/* A placeholder at src[i] as an event; its length, or 0 if there is none. */
static size_t flat_placeholder(flat_state *st, const char *src, size_t len, size_t i, int *rc)
{
    int kind;
    size_t n = fy_placeholder_at(src, len, i, &kind);
    if (n) *rc = event(st->f, st->b.n, i, n, kind);
    return n;
}

int fy_flatten(const char *src, size_t len, int html, int placeholders, fy_flat *out)
{
    memset(out, 0, sizeof *out);
    if (!html && !placeholders) { /* plain text is its own flat text: one copy, no byte map */
        if (!(out->text = malloc(len + 1))) return FY_ENOMEM;
        if (len) memcpy(out->text, src, len);
        out->text[len] = '\0';
        out->len = len;
        return 0;
    }
    flat_state st = {out, {0}, 0};
    int rc = 0;
    size_t i = 0;
    while (i < len && !rc) {
        unsigned char c = (unsigned char)src[i];
        size_t n;
        if (placeholders && (c == '{' || c == '[' || c == '<') &&
            (n = flat_placeholder(&st, src, len, i, &rc))) {
            i += n;
            continue;
        }
        if (html && c == '<' && i + 1 < len &&
            (is_alpha((unsigned char)src[i + 1]) || src[i + 1] == '!' || src[i + 1] == '?' ||
             (src[i + 1] == '/' && i + 2 < len && is_alpha((unsigned char)src[i + 2])))) {
            i = flat_markup(&st, src, len, i, &rc);
            continue;
        }
        uint32_t cp;
        if (html && c == '&' && (n = fy_html_entity(src, len, i, &cp))) {
            char one[4];
            rc = emit(&st, one, fy_utf8_put(one, cp), i, i + n);
            i += n;
            continue;
        }
        fy_utf8_get(src, len, i, &n);
        if (html && (c == '\t' || c == '\n' || c == '\r' || c == '\f')) {
            rc = emit(&st, " ", 1, i, i + 1); /* in HTML a newline is just white space */
        } else {
            rc = emit(&st, src + i, n, i, i + n);
        }
        i += n;
    }
    if (!rc && !st.b.p) fy_buf_put(&st.b, "", 0);
    if (rc || st.b.oom) {
        fy_buf_free(&st.b);
        fy_flat_free(out);
        return FY_ENOMEM;
    }
    out->text = st.b.p;
    out->len = st.b.n;
    return 0;
}

void fy_flat_free(fy_flat *f)
{
    free(f->text);
    free(f->s0);
    free(f->s1);
    free(f->ev);
    memset(f, 0, sizeof *f);
}

void fy_html_text(const char *s, size_t len, fy_buf *b)
{
    size_t i = 0, start = b->n;
    int space = 0;
    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        if (c == '<' && i + 1 < len &&
            (is_alpha((unsigned char)s[i + 1]) || s[i + 1] == '/' || s[i + 1] == '!')) {
            if (len - i >= 4 && memcmp(s + i, "<!--", 4) == 0) {
                i = skip_comment(s, len, i);
            } else {
                const char *gt = memchr(s + i, '>', len - i);
                i = gt ? (size_t)(gt - s) + 1 : len;
            }
            continue;
        }
        uint32_t cp;
        size_t n;
        if (c == '&' && (n = fy_html_entity(s, len, i, &cp))) {
            i += n;
        } else {
            cp = fy_utf8_get(s, len, i, &n);
            i += n;
        }
        if (fy_cp_is_space(cp)) {
            space = 1;
            continue;
        }
        if (space && b->n > start) fy_buf_putc(b, ' ');
        space = 0;
        fy_buf_putcp(b, cp);
    }
}
