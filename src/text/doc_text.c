/* doc_text.c - the text formats: plain text (a unit per block of lines),
 * HTML (chunks cut before block tags, each translated by the pipeline's own
 * HTML handling, text/segment.h), and subtitles: SRT and WebVTT, whose cue
 * numbers, timings, settings, headers and notes are kept and whose cue
 * text, all its lines together, is one unit with its tags (<i>, <font>,
 * <v Speaker>, timestamps) kept in place. Also the piece table (textdoc)
 * the Markdown reader shares. */
#include "text/document_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "text/text_internal.h"

/* ---- the piece table -------------------------------------------------------- */

typedef struct textimpl {
    textdoc t;
    size_t *piece_of; /* unit -> piece */
    size_t cap_po;
    int crlf; /* lines end in \r\n: translations' line breaks too */
    int oom;
} textimpl;

int textdoc_new(fy_document *d, const char *data, size_t len, fy_error *err)
{
    size_t bad;
    if (!fy_utf8_valid(data, len, &bad))
        return fy_err(err, FY_EUNSUPPORTED,
                      "the file is not UTF-8 text (byte %zu); convert it to UTF-8", bad);
    const char *nul = len ? memchr(data, '\0', len) : NULL;
    if (nul)
        return fy_err(err, FY_EUNSUPPORTED, "the file holds a NUL byte (at %zu): not text",
                      (size_t)(nul - data));
    textimpl *ti = calloc(1, sizeof *ti);
    if (!ti || !(ti->t.src = malloc(len + 1))) {
        free(ti);
        return fy_err(err, FY_ENOMEM, "out of memory");
    }
    memcpy(ti->t.src, data, len);
    ti->t.src[len] = '\0';
    ti->t.len = len;
    ti->crlf = memmem(data, len, "\r\n", 2) != NULL;
    d->impl = ti;
    return 0;
}

int textdoc_xml_chars(const char *s, size_t len, fy_error *err)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
            return fy_err(err, FY_EUNSUPPORTED,
                          "the file holds a control character U+%04X (at byte %zu): not text", c,
                          i);
        if (c == 0xef && len - i >= 3 && s[i + 1] == '\xbf' &&
            (s[i + 2] == '\xbe' || s[i + 2] == '\xbf'))
            return fy_err(err, FY_EUNSUPPORTED,
                          "the file holds the noncharacter U+FFF%c (at byte %zu)",
                          s[i + 2] == '\xbe' ? 'E' : 'F', i);
    }
    return 0;
}

void textdoc_free(void *impl)
{
    textimpl *ti = impl;
    free(ti->t.src);
    free(ti->t.p);
    free(ti->t.sl);
    free(ti->piece_of);
    free(ti);
}

static int add_piece(textdoc *t, tpiece p, fy_error *err)
{
    if (fy_vec_reserve((void **)&t->p, &t->capp, t->np + 1, sizeof *t->p))
        return fy_err(err, FY_ENOMEM, "out of memory");
    t->p[t->np++] = p;
    return 0;
}

int textdoc_lit(textdoc *t, size_t off, size_t len, fy_error *err)
{
    if (!len) return 0;
    if (t->np && t->p[t->np - 1].kind == TP_LIT &&
        t->p[t->np - 1].off + t->p[t->np - 1].len == off) {
        t->p[t->np - 1].len += len;
        return 0;
    }
    return add_piece(t, (tpiece){.kind = TP_LIT, .off = off, .len = len}, err);
}

size_t textdoc_slot(textdoc *t, int kind, size_t a, size_t alen, size_t b, size_t blen)
{
    textimpl *ti = (textimpl *)t;
    if (fy_vec_reserve((void **)&t->sl, &t->capsl, t->nsl + 1, sizeof *t->sl)) {
        ti->oom = 1;
        return 0;
    }
    t->sl[t->nsl] = (tslot){kind, a, alen, b, blen};
    return t->nsl++;
}

int textdoc_unit(fy_document *d, const char *text, size_t len, int html, size_t s0, fy_error *err)
{
    textimpl *ti = d->impl;
    textdoc *t = &ti->t;
    if (ti->oom) return fy_err(err, FY_ENOMEM, "out of memory");
    size_t u;
    int rc = doc_unit_add(d, text, len, html, &u, err);
    if (rc) return rc;
    if (fy_vec_reserve((void **)&ti->piece_of, &ti->cap_po, u + 1, sizeof *ti->piece_of))
        return fy_err(err, FY_ENOMEM, "out of memory");
    ti->piece_of[u] = t->np;
    return add_piece(t, (tpiece){.kind = TP_UNIT, .unit = u, .s0 = s0, .ns = t->nsl - s0}, err);
}

typedef struct writer {
    textimpl *ti;
    const tpiece *p;
    fy_buf *out;
    int newlines; /* line breaks in a row (subtitles: never a blank line) */
} writer;

static void put_slice(writer *w, size_t off, size_t len)
{
    fy_buf_put(w->out, w->ti->t.src + off, len);
}

static int w_text(void *ctx, const char *s, size_t n)
{
    writer *w = ctx;
    const tpiece *p = w->p;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\r') continue;
        if (c == '\n') {
            if (p->cue && w->newlines) continue; /* a blank line would end the cue */
            w->newlines++;
            fy_buf_put(w->out, w->ti->crlf ? "\r\n" : "\n", w->ti->crlf ? 2 : 1);
            put_slice(w, p->cont, p->ncont);
            continue;
        }
        w->newlines = 0;
        const char *esc = !w->ti->t.escape ? NULL
                          : c == '&'       ? "&amp;"
                          : c == '<'       ? "&lt;"
                          : c == '>'       ? "&gt;"
                                           : NULL;
        if (esc)
            fy_buf_put(w->out, esc, strlen(esc));
        else
            fy_buf_putc(w->out, c);
    }
    return 0;
}

static int w_open(void *ctx, size_t k)
{
    writer *w = ctx;
    const tslot *s = &w->ti->t.sl[w->p->s0 + k];
    if (s->kind != MK_SPAN) return FY_EINVAL;
    put_slice(w, s->a, s->alen);
    w->newlines = 0;
    return 0;
}

static int w_close(void *ctx, size_t k)
{
    writer *w = ctx;
    const tslot *s = &w->ti->t.sl[w->p->s0 + k];
    put_slice(w, s->b, s->blen);
    return 0;
}

static int w_object(void *ctx, int kind, size_t k)
{
    writer *w = ctx;
    const tslot *s = &w->ti->t.sl[w->p->s0 + k];
    (void)kind;
    if (s->kind == MK_SPAN) return FY_EINVAL;
    put_slice(w, s->a, s->alen);
    w->newlines = 0;
    return 0;
}

/* The translation of a markup unit without its leading and trailing line
 * breaks (subtitles) or as it is. */
static int write_unit(writer *w, fy_document *d, fy_error *err)
{
    size_t len;
    const char *s = doc_unit_out(d, w->p->unit, &len);
    if (!d->u[w->p->unit].html || !w->ti->t.markup) {
        fy_buf_put(w->out, s, len);
        return 0;
    }
    if (w->p->cue)
        while (len && (s[len - 1] == '\n' || s[len - 1] == ' ')) len--;
    w->newlines = w->p->cue; /* no line break first */
    mk_sink sink = {w_text, w_open, w_close, w_object, w, w->p->ns};
    return mk_decode(s, len, &sink, err);
}

int textdoc_write(fy_document *d, fy_buf *out, fy_error *err)
{
    textimpl *ti = d->impl;
    writer w = {ti, NULL, out, 0};
    for (size_t i = 0; i < ti->t.np; i++) {
        w.p = &ti->t.p[i];
        if (w.p->kind == TP_LIT) {
            put_slice(&w, w.p->off, w.p->len);
        } else {
            int rc = write_unit(&w, d, err);
            if (rc) return rc;
        }
    }
    return out->oom ? fy_err(err, FY_ENOMEM, "out of memory") : 0;
}

int textdoc_check(fy_document *d, size_t i, const char *text, size_t len, fy_error *err)
{
    textimpl *ti = d->impl;
    if (!d->u[i].html || !ti->t.markup) return 0;
    return mk_check(text, len, ti->t.p[ti->piece_of[i]].ns, err);
}

/* ---- lines ------------------------------------------------------------------- */

/* The line at s[i..): its end without the line break in *end, the start of
 * the next line returned. */
static size_t line_at(const char *s, size_t len, size_t i, size_t *end)
{
    const char *nl = memchr(s + i, '\n', len - i);
    size_t e = nl ? (size_t)(nl - s) : len;
    *end = e > i && s[e - 1] == '\r' ? e - 1 : e;
    return nl ? e + 1 : len;
}

static int blank(const char *s, size_t a, size_t e)
{
    for (size_t i = a; i < e; i++)
        if (!strchr(" \t\r\f\v", s[i])) return 0;
    return 1;
}

/* ---- plain text ----------------------------------------------------------------- */

enum { BLOCK_MAX = 8192 }; /* a unit of plain text or HTML is cut near this many bytes */

/* Blocks of non-blank lines, each a unit (cut at a line break past
 * BLOCK_MAX); blank lines and the line break ending a block stay literal. */
static int txt_read(fy_document *d, const char *data, size_t len, fy_error *err)
{
    int rc = textdoc_new(d, data, len, err);
    if (rc) return rc;
    textimpl *ti = d->impl;
    const char *s = ti->t.src;
    size_t i = 0;
    if (len >= 3 && !memcmp(s, "\xef\xbb\xbf", 3)) rc = textdoc_lit(&ti->t, 0, i = 3, err);
    while (!rc && i < len) {
        size_t e, next = line_at(s, len, i, &e);
        if (blank(s, i, e)) {
            rc = textdoc_lit(&ti->t, i, next - i, err);
            i = next;
            continue;
        }
        size_t a = i, last_end = e;
        for (i = next; i < len && i - a < BLOCK_MAX;) {
            size_t e2, n2 = line_at(s, len, i, &e2);
            if (blank(s, i, e2)) break;
            last_end = e2;
            i = n2;
        }
        rc = textdoc_unit(d, s + a, last_end - a, 0, 0, err);
        if (!rc) rc = textdoc_lit(&ti->t, last_end, i - last_end, err);
    }
    return rc;
}

const doc_ops doc_txt_ops = {
    .read = txt_read, .check = NULL, .write = textdoc_write, .free = textdoc_free};

/* ---- HTML ----------------------------------------------------------------------- */

static int tag_name_is(const char *s, size_t len, size_t i, const char *const *names, size_t n)
{
    size_t p = i + 1;
    size_t q = p;
    while (q < len &&
           ((s[q] | 0x20) >= 'a' && (s[q] | 0x20) <= 'z' ? 1 : (s[q] >= '1' && s[q] <= '6')))
        q++;
    for (size_t k = 0; k < n; k++)
        if (strlen(names[k]) == q - p && !strncasecmp(s + p, names[k], q - p)) return 1;
    return 0;
}

/* Where the raw element (script, style, pre, textarea, svg, math) opened
 * at i ends, past its closing tag; len if it does not. */
static size_t raw_end(const char *s, size_t len, size_t i)
{
    size_t q = i + 1;
    while (q < len && (s[q] | 0x20) >= 'a' && (s[q] | 0x20) <= 'z') q++;
    char close[16];
    int n = snprintf(close, sizeof close, "</%.*s", (int)(q - i - 1), s + i + 1);
    for (size_t p = q; p + (size_t)n <= len; p++)
        if (!strncasecmp(s + p, close, (size_t)n)) return p + (size_t)n;
    return len;
}

/* HTML in chunks: a chunk ends before a block-level tag once it is
 * BLOCK_MAX bytes long, never inside a comment or a raw element, so no
 * sentence is cut in two (the tags end sentences anyway). */
static int html_read(fy_document *d, const char *data, size_t len, fy_error *err)
{
    static const char *const raw[] = {"script", "style", "pre", "textarea", "svg", "math"};
    static const char *const blocks[] = {
        "p",       "div",        "h1",     "h2",    "h3",    "h4",  "h5",    "h6",
        "li",      "ul",         "ol",     "tr",    "td",    "th",  "table", "section",
        "article", "header",     "footer", "nav",   "dl",    "dt",  "dd",    "blockquote",
        "figure",  "figcaption", "main",   "aside", "title", "body"};
    int rc = textdoc_new(d, data, len, err);
    textimpl *ti = rc ? NULL : d->impl;
    const char *s = ti ? ti->t.src : NULL;
    size_t start = 0, i = 0;
    while (!rc && i <= len) {
        int cut = i == len;
        if (!cut && s[i] == '<') {
            if (len - i >= 4 && !memcmp(s + i, "<!--", 4)) {
                const char *e = memmem(s + i + 4, len - i - 4, "-->", 3);
                i = e ? (size_t)(e - s) + 3 : len;
                continue;
            }
            if (tag_name_is(s, len, i, raw, sizeof raw / sizeof *raw)) {
                i = raw_end(s, len, i);
                continue;
            }
            cut = i - start >= BLOCK_MAX &&
                  tag_name_is(s, len, i, blocks, sizeof blocks / sizeof *blocks);
        }
        if (cut && i > start) {
            fy_buf text = {0};
            fy_html_text(s + start, i - start, &text);
            int words = text.p && doc_has_text(text.p, text.n);
            fy_buf_free(&text);
            rc = words ? textdoc_unit(d, s + start, i - start, 1, 0, err)
                       : textdoc_lit(&ti->t, start, i - start, err);
            start = i;
        }
        i++;
    }
    return rc;
}

const doc_ops doc_html_ops = {
    .read = html_read, .check = NULL, .write = textdoc_write, .free = textdoc_free};

/* ---- subtitles --------------------------------------------------------------------- */

typedef struct cue_enc {
    textdoc *t;
    fy_buf b;
    size_t s0;
    size_t stack[32]; /* open tags: their slots */
    char names[32][16];
    int top;
    int vtt;
} cue_enc;

static size_t name_len(const char *s, size_t i, size_t e)
{
    size_t q = i;
    while (q < e && !strchr(" \t.>", s[q])) q++;
    return q - i;
}

/* A tag at s[i] == '<' of cue text ending at e: returns the index after it. */
static size_t cue_tag(cue_enc *c, const char *s, size_t i, size_t e)
{
    const char *gt = memchr(s + i, '>', e - i);
    size_t end = gt ? (size_t)(gt - s) + 1 : e;
    size_t base = (size_t)(s - c->t->src);
    if (s[i + 1] == '/') {
        size_t n = name_len(s, i + 2, end);
        if (c->top && strlen(c->names[c->top - 1]) == n &&
            !strncmp(c->names[c->top - 1], s + i + 2, n)) {
            tslot *sl = &c->t->sl[c->stack[--c->top]];
            sl->b = base + i, sl->blen = end - i;
            mk_close(&c->b);
            return end;
        }
    } else if (((s[i + 1] | 0x20) >= 'a' && (s[i + 1] | 0x20) <= 'z') && c->top < 32) {
        size_t n = name_len(s, i + 1, end);
        size_t k = textdoc_slot(c->t, MK_SPAN, base + i, end - i, 0, 0);
        snprintf(c->names[c->top], sizeof c->names[c->top], "%.*s", (int)n, s + i + 1);
        c->stack[c->top++] = k;
        mk_open(&c->b, k - c->s0);
        return end;
    }
    /* A timestamp, a stray closing tag: kept where it is. */
    size_t k = textdoc_slot(c->t, MK_IMG, base + i, end - i, 0, 0);
    mk_object(&c->b, MK_IMG, k - c->s0, NULL, 0);
    return end;
}

/* Cue text s[0..e) (its lines) as a markup unit. */
static void cue_encode(cue_enc *c, const char *s, size_t e)
{
    size_t base = (size_t)(s - c->t->src);
    for (size_t i = 0; i < e;) {
        if (s[i] == '<' && i + 1 < e) {
            i = cue_tag(c, s, i, e);
            continue;
        }
        uint32_t cp;
        size_t n;
        if (c->vtt && s[i] == '&' && (n = fy_html_entity(s, e, i, &cp))) {
            char one[4];
            size_t k = textdoc_slot(c->t, MK_CODE, base + i, n, 0, 0);
            mk_object(&c->b, MK_CODE, k - c->s0, one, fy_utf8_put(one, cp));
            i += n;
            continue;
        }
        if (s[i] == '{' && i + 1 < e && s[i + 1] == '\\') { /* {\an8}: an ASS override */
            const char *cb = memchr(s + i, '}', e - i);
            size_t end = cb ? (size_t)(cb - s) + 1 : e;
            size_t k = textdoc_slot(c->t, MK_IMG, base + i, end - i, 0, 0);
            mk_object(&c->b, MK_IMG, k - c->s0, NULL, 0);
            i = end;
            continue;
        }
        if (s[i] == '\r') {
            i++;
            continue;
        }
        mk_text(&c->b, s + i, 1);
        i++;
    }
    while (c->top) { /* tags left open: closed by nothing */
        c->top--;
        mk_close(&c->b);
    }
}

static int cue_unit(fy_document *d, size_t a, size_t e, int vtt, fy_error *err)
{
    textimpl *ti = d->impl;
    cue_enc c = {&ti->t, {0}, ti->t.nsl, {0}, {{0}}, 0, vtt};
    cue_encode(&c, ti->t.src + a, e - a);
    int rc = c.b.oom ? fy_err(err, FY_ENOMEM, "out of memory")
                     : textdoc_unit(d, c.b.p ? c.b.p : "", c.b.n, 1, c.s0, err);
    if (!rc) ti->t.p[ti->t.np - 1].cue = 1;
    fy_buf_free(&c.b);
    return rc;
}

/* Blocks separated by blank lines. A cue's lines up to its timing line
 * ("-->") are literal, the rest is its text. SRT: every block with a timing
 * is a cue. VTT: the header block and NOTE, STYLE and REGION blocks are
 * literal. */
static int subs_read(fy_document *d, const char *data, size_t len, int vtt, fy_error *err)
{
    int rc = textdoc_new(d, data, len, err);
    if (!rc) rc = textdoc_xml_chars(data, len, err);
    if (rc) return rc;
    textimpl *ti = d->impl;
    ti->t.markup = 1;
    ti->t.escape = vtt;
    const char *s = ti->t.src;
    size_t i = len >= 3 && !memcmp(s, "\xef\xbb\xbf", 3) ? 3 : 0;
    if (vtt && (len - i < 6 || memcmp(s + i, "WEBVTT", 6)))
        return fy_err(err, FY_EFORMAT, "not a WebVTT file: it does not start with WEBVTT");
    int first = 1, cues = 0;
    while (!rc && i < len) {
        size_t e, next = line_at(s, len, i, &e);
        if (blank(s, i, e)) {
            rc = textdoc_lit(&ti->t, i, next - i, err);
            i = next;
            continue;
        }
        /* One block: its timing line, and where its text ends. */
        size_t timing_next = 0, text_end = 0, j = i;
        int literal =
            vtt && (first || (e - i >= 4 && (!memcmp(s + i, "NOTE", 4) ||
                                             !memcmp(s + i, "STYLE", 5 <= e - i ? 5 : 4) ||
                                             !memcmp(s + i, "REGION", 6 <= e - i ? 6 : 4))));
        first = 0;
        while (j < len) {
            size_t e2, n2 = line_at(s, len, j, &e2);
            if (blank(s, j, e2)) break;
            if (!timing_next && memmem(s + j, e2 - j, "-->", 3)) timing_next = n2;
            text_end = e2;
            j = n2;
        }
        if (literal || !timing_next || timing_next > text_end) {
            rc = textdoc_lit(&ti->t, i, j - i, err);
        } else {
            cues++;
            rc = textdoc_lit(&ti->t, i, timing_next - i, err);
            if (!rc) rc = cue_unit(d, timing_next, text_end, vtt, err);
            if (!rc) rc = textdoc_lit(&ti->t, text_end, j - text_end, err);
        }
        i = j;
    }
    if (!rc && !cues && doc_has_text(s, len) && !vtt)
        return fy_err(err, FY_EFORMAT,
                      "not an SRT file: no cue has a timing line (00:00:01,000 --> ...)");
    return rc;
}

static int srt_read(fy_document *d, const char *data, size_t len, fy_error *err)
{
    return subs_read(d, data, len, 0, err);
}

static int vtt_read(fy_document *d, const char *data, size_t len, fy_error *err)
{
    return subs_read(d, data, len, 1, err);
}

const doc_ops doc_srt_ops = {
    .read = srt_read, .check = textdoc_check, .write = textdoc_write, .free = textdoc_free};
const doc_ops doc_vtt_ops = {
    .read = vtt_read, .check = textdoc_check, .write = textdoc_write, .free = textdoc_free};
