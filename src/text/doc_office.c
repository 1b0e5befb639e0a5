/* doc_office.c - archives of XML parts (the part table docx, odt, pptx and
 * epub share) and the three office formats:
 *
 *   docx  word/document.xml, word/header*.xml, word/footer*.xml,
 *         word/footnotes.xml, word/endnotes.xml: paragraphs w:p, runs w:r
 *         (w:rPr kept per run; text in w:t), hyperlinks, insertions, smart
 *         tags and content controls as spans; tabs and breaks end sentences;
 *         everything else (drawings, fields, bookmarks) is kept as it is, and
 *         the paragraphs inside it (text boxes) are units of their own.
 *   pptx  ppt/slides/slideN.xml: paragraphs a:p, runs a:r (a:rPr, a:t),
 *         a:br; a:pPr and a:endParaRPr stay where they are.
 *   odt   content.xml: text:p and text:h, with text:span, text:a and
 *         text:meta as spans, text:s as spaces, text:tab and
 *         text:line-break as breaks; notes and frames kept (their
 *         paragraphs translated on their own).
 */
#include "text/document_internal.h"

#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the part table ------------------------------------------------------------ */

typedef struct part {
    size_t entry;
    xmlDoc *doc;
    xmlparas paras;
    size_t first_unit; /* its units are first_unit .. + paras.n */
} part;

typedef struct zipxml {
    zipdoc *z;
    part *p;
    size_t n, cap;
} zipxml;

int zipxml_open(fy_document *d, const char *data, size_t len, fy_error *err)
{
    zipxml *x = calloc(1, sizeof *x);
    if (!x) return fy_err(err, FY_ENOMEM, "out of memory");
    d->impl = x;
    x->z = zipdoc_open(data, len, &d->lim, fy_docfmt_get(d->fmt)->name, err);
    return x->z ? 0 : err->code;
}

zipdoc *zipxml_zip(fy_document *d)
{
    return ((zipxml *)d->impl)->z;
}

void *zipxml_parse_entry(fy_document *d, const char *name, fy_error *err)
{
    zipxml *x = d->impl;
    long i = zipdoc_find(x->z, name);
    if (i < 0) {
        fy_err(err, FY_EUNSUPPORTED, "not a %s file: the archive has no %s",
               fy_docfmt_get(d->fmt)->name, name);
        return NULL;
    }
    size_t len;
    char *data = zipdoc_read(x->z, (size_t)i, &len, err);
    if (!data) return NULL;
    void *doc = docxml_parse(data, len, name, d->lim.max_depth, err);
    free(data);
    return doc;
}

int zipxml_add_part(fy_document *d, size_t entry, const xml_style *st,
                    int (*is_para)(const xml_style *st, void *node), int block_inline,
                    fy_error *err)
{
    zipxml *x = d->impl;
    for (size_t k = 0; k < x->n; k++)
        if (x->p[k].entry == entry) return 0; /* listed twice (an OPF may) */
    const char *name = zipdoc_name(x->z, entry);
    size_t len;
    char *data = zipdoc_read(x->z, entry, &len, err);
    if (!data) return err->code;
    xmlDoc *doc = docxml_parse(data, len, name, d->lim.max_depth, err);
    free(data);
    if (!doc) return err->code;
    if (fy_vec_reserve((void **)&x->p, &x->cap, x->n + 1, sizeof *x->p)) {
        docxml_free(doc);
        return fy_err(err, FY_ENOMEM, "out of memory");
    }
    part *p = &x->p[x->n++];
    *p = (part){entry, doc, {0}, d->n};
    int rc =
        xmlpara_collect(d, xmlDocGetRootElement(doc), st, is_para, block_inline, &p->paras, err);
    if (rc) fy_err_prefix(err, "%s", name);
    return rc;
}

/* The part unit i belongs to. */
static part *part_of(zipxml *x, size_t i)
{
    for (size_t k = 0; k < x->n; k++)
        if (i >= x->p[k].first_unit && i < x->p[k].first_unit + x->p[k].paras.n) return &x->p[k];
    return NULL;
}

int zipxml_check(fy_document *d, size_t i, const char *text, size_t len, fy_error *err)
{
    part *p = part_of(d->impl, i);
    return p ? mk_check(text, len, xmlpara_slots(&p->paras, i - p->first_unit), err) : 0;
}

int zipxml_write(fy_document *d, fy_buf *out, fy_error *err)
{
    zipxml *x = d->impl;
    for (size_t k = 0; k < x->n; k++) {
        part *p = &x->p[k];
        int touched = 0;
        for (size_t u = p->first_unit; u < p->first_unit + p->paras.n; u++)
            touched |= d->u[u].out != NULL;
        if (!touched) continue; /* copied as it was */
        int rc = xmlpara_apply(d, &p->paras, err);
        size_t len = 0;
        char *xml = rc ? NULL : docxml_write(p->doc, &len, err);
        if (!xml) return err->code;
        if ((rc = zipdoc_replace(x->z, p->entry, xml, len, err))) return rc;
    }
    return zipdoc_write(x->z, out, err);
}

void zipxml_free(void *impl)
{
    zipxml *x = impl;
    for (size_t k = 0; k < x->n; k++) {
        xmlparas_free(&x->p[k].paras); /* before the document: nodes use its dictionary */
        docxml_free(x->p[k].doc);
    }
    free(x->p);
    zipdoc_free(x->z);
    free(x);
}

/* Adds every entry whose name matches prefix + digits? + suffix. */
static int add_matching(fy_document *d, const char *prefix, const char *suffix, int digits,
                        const xml_style *st, int (*is_para)(const xml_style *, void *),
                        fy_error *err)
{
    zipdoc *z = zipxml_zip(d);
    size_t pl = strlen(prefix), sl = strlen(suffix);
    for (size_t i = 0; i < zipdoc_count(z); i++) {
        const char *name = zipdoc_name(z, i);
        size_t n = strlen(name);
        if (n < pl + sl || strncmp(name, prefix, pl) || strcmp(name + n - sl, suffix)) continue;
        int ok = 1;
        for (size_t k = pl; k < n - sl; k++) ok &= digits && name[k] >= '0' && name[k] <= '9';
        if (!ok) continue;
        int rc = zipxml_add_part(d, i, st, is_para, 0, err);
        if (rc) return rc;
    }
    return 0;
}

static int require(fy_document *d, const char *name, fy_error *err)
{
    if (zipdoc_find(zipxml_zip(d), name) >= 0) return 0;
    return fy_err(err, FY_EUNSUPPORTED, "not a %s file: the archive has no %s",
                  fy_docfmt_get(d->fmt)->name, name);
}

/* ---- docx ------------------------------------------------------------------------- */

#define W_NS "http://schemas.openxmlformats.org/wordprocessingml/2006/main"

static int w_is(const void *n, const char *const *names, size_t count)
{
    for (size_t k = 0; k < count; k++)
        if (docxml_is(n, W_NS, names[k])) return 1;
    return 0;
}

static int docx_classify(const xml_style *st, void *n)
{
    (void)st;
    static const char *const spans[] = {"hyperlink", "ins",       "smartTag", "sdt", "sdtContent",
                                        "fldSimple", "customXml", "dir",      "bdo", "moveTo"};
    if (docxml_is(n, W_NS, "pPr")) return XK_FIXED;
    if (docxml_is(n, W_NS, "r")) return XK_RUN;
    if (w_is(n, spans, sizeof spans / sizeof *spans)) return XK_SPAN;
    return XK_OBJECT;
}

static int docx_run_child(const xml_style *st, void *n)
{
    (void)st;
    static const char *const breaks[] = {"tab", "br", "cr"};
    if (docxml_is(n, W_NS, "t")) return 1;
    if (w_is(n, breaks, 3)) return 2;
    if (docxml_is(n, W_NS, "rPr")) return 3;
    return 0;
}

static int docx_para(const xml_style *st, void *n)
{
    (void)st;
    return docxml_is(n, W_NS, "p");
}

static const xml_style docx_style = {docx_classify, docx_run_child, "r", "rPr", "t", 1, 0};

static int docx_read(fy_document *d, const char *data, size_t len, fy_error *err)
{
    int rc = zipxml_open(d, data, len, err);
    if (!rc) rc = require(d, "word/document.xml", err);
    if (!rc)
        rc = zipxml_add_part(d, (size_t)zipdoc_find(zipxml_zip(d), "word/document.xml"),
                             &docx_style, docx_para, 0, err);
    static const char *const more[][2] = {{"word/header", ".xml"},
                                          {"word/footer", ".xml"},
                                          {"word/footnotes", ".xml"},
                                          {"word/endnotes", ".xml"}};
    for (size_t k = 0; k < 4 && !rc; k++)
        rc = add_matching(d, more[k][0], more[k][1], k < 2, &docx_style, docx_para, err);
    return rc;
}

const doc_ops doc_docx_ops = {
    .read = docx_read, .check = zipxml_check, .write = zipxml_write, .free = zipxml_free};

/* ---- pptx -------------------------------------------------------------------------- */

#define A_NS "http://schemas.openxmlformats.org/drawingml/2006/main"

static int pptx_classify(const xml_style *st, void *n)
{
    (void)st;
    if (docxml_is(n, A_NS, "pPr") || docxml_is(n, A_NS, "endParaRPr")) return XK_FIXED;
    if (docxml_is(n, A_NS, "r")) return XK_RUN;
    if (docxml_is(n, A_NS, "br")) return XK_BREAK;
    return XK_OBJECT;
}

static int pptx_run_child(const xml_style *st, void *n)
{
    (void)st;
    if (docxml_is(n, A_NS, "t")) return 1;
    if (docxml_is(n, A_NS, "rPr")) return 3;
    return 0;
}

static int pptx_para(const xml_style *st, void *n)
{
    (void)st;
    return docxml_is(n, A_NS, "p");
}

static const xml_style pptx_style = {pptx_classify, pptx_run_child, "r", "rPr", "t", 0, 0};

static int pptx_read(fy_document *d, const char *data, size_t len, fy_error *err)
{
    int rc = zipxml_open(d, data, len, err);
    if (!rc) rc = require(d, "ppt/presentation.xml", err);
    if (!rc) rc = add_matching(d, "ppt/slides/slide", ".xml", 1, &pptx_style, pptx_para, err);
    return rc;
}

const doc_ops doc_pptx_ops = {
    .read = pptx_read, .check = zipxml_check, .write = zipxml_write, .free = zipxml_free};

/* ---- odt ---------------------------------------------------------------------------- */

#define TEXT_NS "urn:oasis:names:tc:opendocument:xmlns:text:1.0"

static int odt_classify(const xml_style *st, void *n)
{
    (void)st;
    if (docxml_is(n, TEXT_NS, "span") || docxml_is(n, TEXT_NS, "a") ||
        docxml_is(n, TEXT_NS, "meta"))
        return XK_SPAN;
    if (docxml_is(n, TEXT_NS, "s")) return XK_SPACE;
    if (docxml_is(n, TEXT_NS, "tab") || docxml_is(n, TEXT_NS, "line-break")) return XK_BREAK;
    return XK_OBJECT;
}

static int odt_run_child(const xml_style *st, void *n)
{
    (void)st, (void)n;
    return 0;
}

static int odt_para(const xml_style *st, void *n)
{
    (void)st;
    return docxml_is(n, TEXT_NS, "p") || docxml_is(n, TEXT_NS, "h");
}

static const xml_style odt_style = {odt_classify, odt_run_child, NULL, NULL, NULL, 0, 1};

static int odt_read(fy_document *d, const char *data, size_t len, fy_error *err)
{
    int rc = zipxml_open(d, data, len, err);
    if (!rc) rc = require(d, "content.xml", err);
    if (!rc)
        rc = zipxml_add_part(d, (size_t)zipdoc_find(zipxml_zip(d), "content.xml"), &odt_style,
                             odt_para, 0, err);
    return rc;
}

const doc_ops doc_odt_ops = {
    .read = odt_read, .check = zipxml_check, .write = zipxml_write, .free = zipxml_free};
