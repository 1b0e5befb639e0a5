/* doc_markup.c - the HTML fragments that carry a unit's inline formatting
 * through the translation pipeline (see document_internal.h), and reading
 * the translated fragment back with libxml2. */
#include "text/document_internal.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdlib.h>
#include <string.h>

void mk_text(fy_buf *b, const char *s, size_t n)
{
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        const char *esc = s[i] == '&'   ? "&amp;"
                          : s[i] == '<' ? "&lt;"
                          : s[i] == '>' ? "&gt;"
                                        : NULL;
        if (!esc) continue;
        fy_buf_put(b, s + from, i - from);
        fy_buf_put(b, esc, strlen(esc));
        from = i + 1;
    }
    fy_buf_put(b, s + from, n - from);
}

void mk_open(fy_buf *b, size_t k)
{
    fy_buf_printf(b, "<span data-k=\"%zu\">", k);
}

void mk_close(fy_buf *b)
{
    fy_buf_put(b, "</span>", 7);
}

void mk_object(fy_buf *b, int kind, size_t k, const char *s, size_t n)
{
    if (kind == MK_CODE) {
        fy_buf_printf(b, "<code data-k=\"%zu\">", k);
        mk_text(b, s, n);
        fy_buf_put(b, "</code>", 7);
    } else {
        fy_buf_printf(b, "<%s data-k=\"%zu\"/>", kind == MK_BR ? "br" : "img", k);
    }
}

/* ---- decoding --------------------------------------------------------------- */

static int kind_of(const xmlNode *n)
{
    const char *name = (const char *)n->name;
    if (!strcmp(name, "span")) return MK_SPAN;
    if (!strcmp(name, "code")) return MK_CODE;
    if (!strcmp(name, "img")) return MK_IMG;
    if (!strcmp(name, "br")) return MK_BR;
    return -1;
}

static int slot_of(xmlNode *n, size_t nk, size_t *k, fy_error *err)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)"data-k");
    char *end = NULL;
    unsigned long long x = v ? strtoull((const char *)v, &end, 10) : 0;
    int ok = v && end && !*end && end != (char *)v && x < nk;
    xmlFree(v);
    if (!ok) return fy_err(err, FY_EINVAL, "a translated element <%s> lost its data-k", n->name);
    *k = (size_t)x;
    return 0;
}

static int walk(xmlNode *n, const mk_sink *s, int depth, fy_error *err)
{
    if (depth > 200) return fy_err(err, FY_EINVAL, "translated markup nested too deep");
    for (; n; n = n->next) {
        int rc = 0;
        if (n->type == XML_TEXT_NODE || n->type == XML_CDATA_SECTION_NODE) {
            const char *t = (const char *)n->content;
            if (t && *t) rc = s->text(s->ctx, t, strlen(t));
        } else if (n->type == XML_ELEMENT_NODE) {
            int kind = kind_of(n);
            size_t k = 0;
            if (kind < 0)
                return fy_err(err, FY_EINVAL, "unexpected <%s> in a translation", n->name);
            if ((rc = slot_of(n, s->nk, &k, err))) return rc;
            if (kind == MK_SPAN) {
                if (!(rc = s->open(s->ctx, k)) && !(rc = walk(n->children, s, depth + 1, err)))
                    rc = s->close(s->ctx, k);
            } else {
                rc = s->object(s->ctx, kind, k);
            }
        }
        if (rc)
            return err && err->code ? err->code : fy_err(err, rc, "cannot rebuild the paragraph");
    }
    return 0;
}

/* A model may emit control characters (a random or odd vocabulary); XML 1.0
 * cannot carry them, not even as references, so they are dropped rather than
 * failing the document. UTF-8 bytes below 0x20 are never part of another
 * character. */
static void put_xml_chars(fy_buf *b, const char *s, size_t len)
{
    size_t from = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') continue;
        fy_buf_put(b, s + from, i - from);
        from = i + 1;
    }
    fy_buf_put(b, s + from, len - from);
}

int mk_decode(const char *s, size_t len, const mk_sink *sink, fy_error *err)
{
    fy_buf b = {0};
    fy_buf_put(&b, "<u>", 3);
    put_xml_chars(&b, s, len);
    fy_buf_put(&b, "</u>", 4);
    if (b.oom) {
        fy_buf_free(&b);
        return fy_err(err, FY_ENOMEM, "out of memory");
    }
    fy_error perr = {0};
    xmlDoc *doc = docxml_parse(b.p, b.n, "translation", 256, &perr);
    fy_buf_free(&b);
    if (!doc)
        return fy_err(err, perr.code == FY_ENOMEM ? FY_ENOMEM : FY_EINVAL,
                      "the translation is not the unit's markup: %s", perr.msg);
    if (err) err->code = 0;
    int rc = walk(xmlDocGetRootElement(doc)->children, sink, 0, err);
    docxml_free(doc);
    return rc;
}

static int ok_text(void *ctx, const char *s, size_t n)
{
    (void)ctx, (void)s, (void)n;
    return 0;
}

static int ok_slot(void *ctx, size_t k)
{
    (void)ctx, (void)k;
    return 0;
}

static int ok_object(void *ctx, int kind, size_t k)
{
    (void)ctx, (void)kind, (void)k;
    return 0;
}

int mk_check(const char *s, size_t len, size_t nk, fy_error *err)
{
    mk_sink sink = {ok_text, ok_slot, ok_slot, ok_object, NULL, nk};
    return mk_decode(s, len, &sink, err);
}
