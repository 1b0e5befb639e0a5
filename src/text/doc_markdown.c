/* doc_markdown.c - Markdown: the block structure (headings, lists, block
 * quotes, tables, front matter, HTML blocks) is kept byte for byte; code
 * blocks, indented code, link reference definitions and thematic breaks
 * are never translated; each paragraph, heading, list item and table cell
 * is a unit whose inline markup (emphasis, links, code spans, images,
 * escapes, inline HTML) travels as markup (document_internal.h), so link
 * targets and code come back exactly as they were.
 *
 * This is a line-based reading of CommonMark, not a full parser: inline
 * constructs are recognised within a line, and emphasis by matching
 * delimiter runs of the same length. What it does not recognise is text,
 * and text is translated and written back in place, so the structure
 * survives either way.
 */
#include "text/document_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "text/text_internal.h"

typedef struct mdenc {
    textdoc *t;
    const char *s; /* the source */
    fy_buf b;      /* the unit being built */
    size_t s0;     /* its first slot */
    int words;
} mdenc;

static int is_punct(int c)
{
    return c > 32 && c < 127 && !isalnum(c);
}

static int is_ws(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void md_slot_object(mdenc *m, int kind, size_t a, size_t n, const char *vis, size_t vn)
{
    size_t k = textdoc_slot(m->t, kind, a, n, 0, 0);
    mk_object(&m->b, kind, k - m->s0, vis, vn);
}

/* The end of the backtick run code span starting at i (run of n), or 0. */
static size_t code_end(const char *s, size_t i, size_t e, size_t n)
{
    for (size_t p = i + n; p < e;) {
        if (s[p] != '`') {
            p++;
            continue;
        }
        size_t q = p;
        while (q < e && s[q] == '`') q++;
        if (q - p == n) return q;
        p = q;
    }
    return 0;
}

/* The ']' closing the '[' at i (nesting, code spans skipped), or 0. */
static size_t bracket_end(const char *s, size_t i, size_t e)
{
    int depth = 0;
    for (size_t p = i; p < e; p++) {
        if (s[p] == '\\') {
            p++;
        } else if (s[p] == '`') {
            size_t n = 0;
            while (p + n < e && s[p + n] == '`') n++;
            size_t c = code_end(s, p, e, n);
            if (c) p = c - 1;
        } else if (s[p] == '[') {
            depth++;
        } else if (s[p] == ']' && --depth == 0) {
            return p;
        }
    }
    return 0;
}

/* After "](" at i: the index past the matching ')', or 0. */
static size_t paren_end(const char *s, size_t i, size_t e)
{
    int depth = 1;
    for (size_t p = i; p < e; p++) {
        if (s[p] == '\\')
            p++;
        else if (s[p] == '(')
            depth++;
        else if (s[p] == ')' && --depth == 0)
            return p + 1;
    }
    return 0;
}

/* A closing delimiter run of n chars c for the opener ending at from. */
static size_t emph_close(const char *s, size_t from, size_t e, char c, size_t n)
{
    for (size_t p = from; p < e; p++) {
        if (s[p] == '\\') {
            p++;
            continue;
        }
        if (s[p] == '`') {
            size_t r = 0;
            while (p + r < e && s[p + r] == '`') r++;
            size_t ce = code_end(s, p, e, r);
            p = (ce ? ce : p + r) - 1;
            continue;
        }
        if (s[p] != c) continue;
        size_t q = p;
        while (q < e && s[q] == c) q++;
        int right = p > from && !is_ws((unsigned char)s[p - 1]);
        if (c == '_' && q < e && isalnum((unsigned char)s[q])) right = 0;
        if (q - p == n && right) return p;
        p = q - 1;
    }
    return 0;
}

static void md_line(mdenc *m, size_t i, size_t e, int depth);

/* One inline construct at i, if there is one: returns the index after it,
 * or i when s[i] is plain text. */
static size_t md_construct(mdenc *m, size_t i, size_t e, int depth)
{
    const char *s = m->s;
    char c = s[i];
    if (c == '\\' && i + 1 < e && is_punct((unsigned char)s[i + 1])) {
        md_slot_object(m, MK_CODE, i, 2, s + i + 1, 1);
        return i + 2;
    }
    if (c == '`') {
        size_t n = 0;
        while (i + n < e && s[i + n] == '`') n++;
        size_t ce = code_end(s, i, e, n);
        if (!ce) return i;
        md_slot_object(m, MK_CODE, i, ce - i, s + i + n, ce - n - i - n);
        return ce;
    }
    if (c == '!' && i + 1 < e && s[i + 1] == '[') {
        size_t be = bracket_end(s, i + 1, e);
        size_t pe = be && be + 1 < e && s[be + 1] == '(' ? paren_end(s, be + 2, e) : 0;
        if (!pe) return i;
        md_slot_object(m, MK_IMG, i, pe - i, NULL, 0);
        return pe;
    }
    if (c == '[') {
        size_t be = bracket_end(s, i, e);
        if (!be) return i;
        size_t end = 0;
        if (be + 1 < e && s[be + 1] == '(')
            end = paren_end(s, be + 2, e);
        else if (be + 1 < e && s[be + 1] == '[') {
            const char *rb = memchr(s + be + 2, ']', e - be - 2);
            end = rb ? (size_t)(rb - s) + 1 : 0;
        }
        if (!end) return i;
        size_t k = textdoc_slot(m->t, MK_SPAN, i, 1, be, end - be);
        mk_open(&m->b, k - m->s0);
        md_line(m, i + 1, be, depth + 1);
        mk_close(&m->b);
        return end;
    }
    if (c == '<' && i + 1 < e &&
        (isalpha((unsigned char)s[i + 1]) || s[i + 1] == '/' || s[i + 1] == '!')) {
        const char *gt = memchr(s + i, '>', e - i);
        if (!gt) return i;
        size_t end = (size_t)(gt - s) + 1;
        const char *colon = memchr(s + i, ':', end - i);
        const char *sp = memchr(s + i, ' ', end - i);
        if (colon && !sp) /* <https://example.com>: an autolink, shown as it is */
            md_slot_object(m, MK_CODE, i, end - i, s + i + 1, end - i - 2);
        else
            md_slot_object(m, MK_IMG, i, end - i, NULL, 0);
        return end;
    }
    if (c == '&') {
        uint32_t cp;
        size_t n = fy_html_entity(s, e, i, &cp);
        if (!n) return i;
        char one[4];
        md_slot_object(m, MK_CODE, i, n, one, fy_utf8_put(one, cp));
        return i + n;
    }
    if (c == '*' || c == '_' || c == '~') {
        size_t n = 0;
        while (i + n < e && s[i + n] == c) n++;
        int left = i + n < e && !is_ws((unsigned char)s[i + n]);
        if (c == '_' && i > 0 && isalnum((unsigned char)s[i - 1])) left = 0;
        if (c == '~' && n != 2) left = 0;
        if (!left || n > 3) return i;
        size_t ce = emph_close(s, i + n, e, c, n);
        if (!ce) return i;
        size_t k = textdoc_slot(m->t, MK_SPAN, i, n, ce, n);
        mk_open(&m->b, k - m->s0);
        md_line(m, i + n, ce, depth + 1);
        mk_close(&m->b);
        return ce + n;
    }
    return i;
}

static void md_flush(mdenc *m, size_t a, size_t b)
{
    if (b <= a) return;
    mk_text(&m->b, m->s + a, b - a);
    if (doc_has_text(m->s + a, b - a)) m->words = 1;
}

/* Inline content s[i..e): text, and constructs (written as they are found,
 * so the text before each is flushed first, and taken back when it turns
 * out to be no construct). */
static void md_line(mdenc *m, size_t i, size_t e, int depth)
{
    size_t text = i;
    while (i < e) {
        if (depth < 16 && m->s[i] && strchr("\\`![<&*_~", m->s[i])) {
            size_t mark = m->b.n, slots = m->t->nsl;
            int words = m->words;
            md_flush(m, text, i);
            size_t next = md_construct(m, i, e, depth);
            if (next != i) {
                text = i = next;
                continue;
            }
            m->b.n = mark;
            if (m->b.p) m->b.p[mark] = '\0';
            m->t->nsl = slots;
            m->words = words;
        }
        i++;
    }
    md_flush(m, text, e);
}

/* ---- blocks ----------------------------------------------------------------- */

typedef struct line {
    size_t a, e, next; /* start, end (no line break), next line */
} line;

static line line_get(const char *s, size_t len, size_t i)
{
    const char *nl = memchr(s + i, '\n', len - i);
    line l = {i, nl ? (size_t)(nl - s) : len, nl ? (size_t)(nl - s) + 1 : len};
    if (l.e > l.a && s[l.e - 1] == '\r') l.e--;
    return l;
}

static int line_blank(const char *s, line l)
{
    for (size_t i = l.a; i < l.e; i++)
        if (s[i] != ' ' && s[i] != '\t') return 0;
    return 1;
}

static size_t indent(const char *s, line l)
{
    size_t i = l.a;
    while (i < l.e && (s[i] == ' ' || s[i] == '\t')) i++;
    return i - l.a;
}

/* Past block quote markers ("> > ") from i. */
static size_t skip_quotes(const char *s, size_t i, size_t e)
{
    for (;;) {
        size_t p = i;
        while (p < e && p - i < 3 && s[p] == ' ') p++;
        if (p >= e || s[p] != '>') return i;
        i = p + 1;
        if (i < e && s[i] == ' ') i++;
    }
}

/* Past a list marker ("- ", "1. ", "- [ ] ") at i, or i. */
static size_t skip_list(const char *s, size_t i, size_t e)
{
    size_t p = i;
    while (p < e && s[p] == ' ') p++;
    size_t q = p;
    if (q < e && strchr("-*+", s[q])) {
        q++;
    } else {
        while (q < e && q - p < 9 && isdigit((unsigned char)s[q])) q++;
        if (q == p || q >= e || (s[q] != '.' && s[q] != ')')) return i;
        q++;
    }
    if (q < e && s[q] != ' ' && s[q] != '\t') return i;
    if (q < e) q++;
    if (q + 3 < e && s[q] == '[' && strchr(" xX", s[q + 1]) && s[q + 2] == ']' && s[q + 3] == ' ')
        q += 4;
    return q;
}

static int is_fence(const char *s, size_t i, size_t e)
{
    while (i < e && s[i] == ' ') i++;
    return e - i >= 3 && (!memcmp(s + i, "```", 3) || !memcmp(s + i, "~~~", 3));
}

/* ---, ***, ___, ===: a thematic break or a setext underline. */
static int is_rule(const char *s, size_t i, size_t e)
{
    while (i < e && s[i] == ' ') i++;
    if (i >= e || !strchr("-*_=", s[i])) return 0;
    char c = s[i];
    size_t n = 0;
    for (; i < e; i++) {
        if (s[i] == c)
            n++;
        else if (s[i] != ' ' && s[i] != '\t')
            return 0;
    }
    return n >= 3 || (c == '=' && n >= 1);
}

static int is_table_delim(const char *s, size_t i, size_t e)
{
    int dash = 0, pipe = 0;
    for (; i < e; i++) {
        if (s[i] == '-')
            dash = 1;
        else if (s[i] == '|')
            pipe = 1;
        else if (!strchr(": \t", s[i]))
            return 0;
    }
    return dash && pipe;
}

static int is_html_block(const char *s, size_t i, size_t e)
{
    static const char *const inl[] = {"a",     "b",   "i",  "em",   "strong", "span",
                                      "code",  "img", "br", "sub",  "sup",    "kbd",
                                      "small", "u",   "s",  "mark", "abbr"};
    while (i < e && s[i] == ' ') i++;
    if (i + 1 >= e || s[i] != '<') return 0;
    if (s[i + 1] == '!') return 1;
    size_t p = i + 1 + (s[i + 1] == '/');
    size_t q = p;
    while (q < e && isalnum((unsigned char)s[q])) q++;
    if (q == p) return 0;
    for (size_t k = 0; k < sizeof inl / sizeof *inl; k++)
        if (strlen(inl[k]) == q - p && !strncasecmp(s + p, inl[k], q - p)) return 0;
    return 1;
}

static int is_refdef(const char *s, size_t i, size_t e)
{
    while (i < e && s[i] == ' ') i++;
    if (i >= e || s[i] != '[') return 0;
    const char *rb = memchr(s + i, ']', e - i);
    return rb && (size_t)(rb - s) + 1 < e && rb[1] == ':';
}

typedef struct mdreader {
    fy_document *d;
    textdoc *t;
    const char *s;
    size_t len;
    size_t done; /* source bytes already in pieces */
} mdreader;

static int lit_to(mdreader *r, size_t to, fy_error *err)
{
    int rc = to > r->done ? textdoc_lit(r->t, r->done, to - r->done, err) : 0;
    if (to > r->done) r->done = to;
    return rc;
}

/* A unit from the inline content of lines: for each line [a_k, e_k) of
 * content; the bytes between them (line breaks, prefixes) are written as
 * the continuation prefix of the piece. */
static int md_unit(mdreader *r, const size_t *a, const size_t *e, size_t n, size_t cont,
                   size_t ncont, fy_error *err)
{
    mdenc m = {r->t, r->s, {0}, r->t->nsl, 0};
    for (size_t k = 0; k < n; k++) {
        if (k) fy_buf_putc(&m.b, '\n');
        md_line(&m, a[k], e[k], 0);
    }
    int rc = 0;
    if (m.b.oom) rc = fy_err(err, FY_ENOMEM, "out of memory");
    if (!rc && (rc = lit_to(r, a[0], err)) == 0) {
        if (m.words) {
            rc = textdoc_unit(r->d, m.b.p, m.b.n, 1, m.s0, err);
            if (!rc) r->t->p[r->t->np - 1].cont = cont, r->t->p[r->t->np - 1].ncont = ncont;
            r->done = e[n - 1];
        } else {
            r->t->nsl = m.s0; /* its slots are not needed: the text stays literal */
        }
    }
    fy_buf_free(&m.b);
    return rc;
}

/* Table row: each cell's content a unit. */
static int md_row(mdreader *r, line l, fy_error *err)
{
    const char *s = r->s;
    size_t i = l.a;
    int rc = 0;
    while (!rc && i < l.e) {
        size_t c = i;
        while (c < l.e && s[c] != '|') {
            if (s[c] == '\\')
                c++;
            else if (s[c] == '`') {
                size_t n = 0;
                while (c + n < l.e && s[c + n] == '`') n++;
                size_t ce = code_end(s, c, l.e, n);
                c = ce ? ce - 1 : c + n - 1;
            }
            c++;
        }
        if (c > l.e) c = l.e;
        size_t a = i, e = c;
        while (a < e && (s[a] == ' ' || s[a] == '\t')) a++;
        while (e > a && (s[e - 1] == ' ' || s[e - 1] == '\t')) e--;
        if (e > a) rc = md_unit(r, &a, &e, 1, 0, 0, err);
        i = c + 1;
    }
    return rc;
}

/* A paragraph from line l on: it ends before a blank line or a line that
 * starts another block. Returns the next line's start. */
static size_t md_paragraph(mdreader *r, line l, size_t content, int *rc, fy_error *err)
{
    enum { MAX_LINES = 256 };
    size_t a[MAX_LINES], e[MAX_LINES], n = 0;
    size_t cont = 0, ncont = 0;
    const char *s = r->s;
    a[n] = content, e[n] = l.e;
    n++;
    size_t next = l.next;
    while (next < r->len && n < MAX_LINES) {
        line m = line_get(s, r->len, next);
        size_t q = skip_quotes(s, m.a, m.e);
        size_t c = q;
        while (c < m.e && (s[c] == ' ' || s[c] == '\t')) c++;
        if (line_blank(s, m) || c >= m.e || is_fence(s, c, m.e) || is_rule(s, c, m.e) ||
            s[c] == '#' || skip_list(s, c, m.e) != c || is_html_block(s, c, m.e))
            break;
        if (n == 1) cont = m.a, ncont = c - m.a;
        a[n] = c, e[n] = m.e;
        n++;
        next = m.next;
    }
    /* trailing "  " (hard breaks) stay with their line as literal text: */
    for (size_t k = 0; k < n; k++)
        while (e[k] > a[k] && (s[e[k] - 1] == ' ' || s[e[k] - 1] == '\t')) e[k]--;
    if (n > 1) {
        /* Continuation lines get their own prefix back (cont); the unit's
         * line breaks stand for "\n" + prefix, so lines with trailing
         * spaces or other prefixes keep them only if they match: use the
         * unit only when every gap is exactly a line break and the prefix. */
        for (size_t k = 1; k < n; k++) {
            size_t gap_a = e[k - 1], gap_e = a[k];
            size_t want = (size_t)(s[gap_a] == '\r') + 1 + ncont;
            if (gap_e - gap_a != want || memcmp(s + gap_e - ncont, s + cont, ncont)) {
                /* Irregular: each line a unit of its own. */
                for (size_t j = 0; j < n && !*rc; j++) *rc = md_unit(r, &a[j], &e[j], 1, 0, 0, err);
                return next;
            }
        }
    }
    *rc = md_unit(r, a, e, n, cont, ncont, err);
    return next;
}

static size_t md_fenced(mdreader *r, line l, size_t c)
{
    const char *s = r->s;
    while (c < l.e && s[c] == ' ') c++;
    char f = s[c];
    size_t n = 0;
    while (c + n < l.e && s[c + n] == f) n++;
    size_t next = l.next;
    while (next < r->len) {
        line m = line_get(s, r->len, next);
        next = m.next;
        size_t q = skip_quotes(s, m.a, m.e);
        while (q < m.e && s[q] == ' ') q++;
        size_t k = 0;
        while (q + k < m.e && s[q + k] == f) k++;
        if (k >= n && line_blank(s, (line){q + k, m.e, 0})) break;
    }
    return next;
}

static int md_read(fy_document *d, const char *data, size_t len, fy_error *err)
{
    int rc = textdoc_new(d, data, len, err);
    if (!rc) rc = textdoc_xml_chars(data, len, err);
    if (rc) return rc;
    textdoc *t = d->impl;
    t->markup = 1;
    mdreader r = {d, t, t->src, len, 0};
    const char *s = t->src;
    size_t i = 0;
    if (len >= 4 && !memcmp(s, "---", 3) && (s[3] == '\n' || s[3] == '\r')) { /* front matter */
        size_t p = line_get(s, len, 0).next;
        while (p < len) {
            line l = line_get(s, len, p);
            p = l.next;
            if (l.e - l.a == 3 && (!memcmp(s + l.a, "---", 3) || !memcmp(s + l.a, "...", 3))) break;
        }
        i = p;
    }
    int prev_blank = 1, in_list = 0;
    while (!rc && i < len) {
        line l = line_get(s, len, i);
        if (line_blank(s, l)) {
            prev_blank = 1;
            i = l.next;
            continue;
        }
        size_t q = skip_quotes(s, l.a, l.e);
        size_t ind = indent(s, (line){q, l.e, 0});
        size_t c = q + ind;
        int para = 0;
        if (is_fence(s, q, l.e)) {
            i = md_fenced(&r, l, q);
        } else if (ind >= 4 && prev_blank && !in_list) { /* indented code */
            i = l.next;
            while (i < len) {
                line m = line_get(s, len, i);
                if (!line_blank(s, m) && indent(s, m) < 4) break;
                i = m.next;
            }
        } else if (is_rule(s, c, l.e) || is_refdef(s, c, l.e) || is_table_delim(s, c, l.e)) {
            i = l.next;
        } else if (is_html_block(s, c, l.e)) {
            i = l.next;
            while (i < len) {
                line m = line_get(s, len, i);
                if (line_blank(s, m)) break;
                i = m.next;
            }
        } else if (s[c] == '#') {
            size_t h = c;
            while (h < l.e && s[h] == '#') h++;
            if (h - c <= 6 && (h == l.e || s[h] == ' ' || s[h] == '\t')) {
                size_t a = h, e = l.e;
                while (a < e && (s[a] == ' ' || s[a] == '\t')) a++;
                while (e > a && (s[e - 1] == '#' || s[e - 1] == ' ')) e--;
                if (e > a) rc = md_unit(&r, &a, &e, 1, 0, 0, err);
                i = l.next;
            } else {
                i = md_paragraph(&r, l, c, &rc, err);
            }
        } else if (memchr(s + c, '|', l.e - c) && l.next < len &&
                   is_table_delim(s, line_get(s, len, l.next).a, line_get(s, len, l.next).e)) {
            rc = md_row(&r, (line){c, l.e, l.next}, err);
            i = line_get(s, len, l.next).next; /* the delimiter row stays literal */
            while (!rc && i < len) {
                line m = line_get(s, len, i);
                if (line_blank(s, m) || !memchr(s + m.a, '|', m.e - m.a)) break;
                rc = md_row(&r, m, err);
                i = m.next;
            }
        } else {
            size_t li = skip_list(s, c, l.e);
            in_list = li != c || (in_list && ind > 0);
            para = 1;
            i = md_paragraph(&r, l, li, &rc, err);
        }
        if (!para) in_list = 0;
        prev_blank = 0;
    }
    if (!rc) rc = lit_to(&r, len, err);
    return rc;
}

const doc_ops doc_md_ops = {
    .read = md_read, .check = textdoc_check, .write = textdoc_write, .free = textdoc_free};
