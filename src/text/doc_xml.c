/* doc_xml.c - XML parts of office documents and e-books with libxml2:
 * parsing them safely, writing them back, and the paragraph model that
 * turns an element's inline content into one unit and the translation
 * back into nodes (document_internal.h).
 *
 * Safety: libxml2 is told never to touch the network, never to load a DTD,
 * and its external entity loader is replaced by one that loads nothing.
 * A document that declares any entity is refused outright (billion
 * laughs needs declarations), and a SAX hook counts element depth so that
 * deep nesting stops the parser at our limit, not libxml2's.
 */
#include "text/document_internal.h"

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/tree.h>
#include <libxml/xmlsave.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- parsing ---------------------------------------------------------------- */

static xmlParserInputPtr no_entities(const char *url, const char *id, xmlParserCtxtPtr ctxt)
{
    (void)url, (void)id, (void)ctxt;
    return NULL; /* nothing outside the document is ever read */
}

static void init_once(void)
{
    xmlInitParser();
    xmlSetExternalEntityLoader(no_entities);
}

void docxml_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_once);
}

typedef struct parse_state {
    int depth, max_depth;
    int too_deep, entity;
} parse_state;

static void on_start(void *ctx, const xmlChar *local, const xmlChar *prefix, const xmlChar *uri,
                     int nns, const xmlChar **ns, int nattr, int ndef, const xmlChar **attrs)
{
    xmlParserCtxtPtr c = ctx;
    parse_state *st = c->_private;
    if (++st->depth > st->max_depth) {
        st->too_deep = 1;
        xmlStopParser(c);
        return;
    }
    xmlSAX2StartElementNs(ctx, local, prefix, uri, nns, ns, nattr, ndef, attrs);
}

static void on_end(void *ctx, const xmlChar *local, const xmlChar *prefix, const xmlChar *uri)
{
    xmlParserCtxtPtr c = ctx;
    parse_state *st = c->_private;
    st->depth--;
    xmlSAX2EndElementNs(ctx, local, prefix, uri);
}

static void on_entity(void *ctx, const xmlChar *name, int type, const xmlChar *pub,
                      const xmlChar *sys, xmlChar *content)
{
    (void)name, (void)type, (void)pub, (void)sys, (void)content;
    xmlParserCtxtPtr c = ctx;
    ((parse_state *)c->_private)->entity = 1;
    xmlStopParser(c);
}

static void on_unparsed(void *ctx, const xmlChar *name, const xmlChar *pub, const xmlChar *sys,
                        const xmlChar *notation)
{
    on_entity(ctx, name, 0, pub, sys, (xmlChar *)notation);
}

void *docxml_parse(const char *data, size_t len, const char *name, int max_depth, fy_error *err)
{
    docxml_init();
    if (len > (size_t)INT32_MAX) {
        fy_err(err, FY_ELIMIT, "%s: the XML part is too large", name);
        return NULL;
    }
    xmlParserCtxtPtr c = xmlNewParserCtxt();
    if (!c) {
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    parse_state st = {0, max_depth, 0, 0};
    c->_private = &st;
    c->sax->startElementNs = on_start;
    c->sax->endElementNs = on_end;
    c->sax->entityDecl = on_entity;
    c->sax->unparsedEntityDecl = on_unparsed;
    /* No XML_PARSE_NOENT (entities stay unexpanded), no DTDLOAD/DTDATTR/
     * DTDVALID, no HUGE: libxml2's own size limits stay in force too. */
    int opts = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
    xmlDocPtr doc = xmlCtxtReadMemory(c, data, (int)len, NULL, NULL, opts);
    int well = c->wellFormed;
    const xmlError *e = xmlCtxtGetLastError(c);
    char why[200] = "";
    if (e && e->message) {
        snprintf(why, sizeof why, "%s", e->message);
        size_t n = strlen(why);
        while (n && (why[n - 1] == '\n' || why[n - 1] == ' ')) why[--n] = '\0';
    }
    int line = e ? e->line : 0;
    xmlFreeParserCtxt(c);
    if (st.too_deep || st.entity || !doc || !well) {
        if (doc) xmlFreeDoc(doc);
        if (st.too_deep)
            fy_err(err, FY_ELIMIT, "%s: XML nested deeper than %d levels", name, max_depth);
        else if (st.entity)
            fy_err(err, FY_EFORMAT,
                   "%s: the XML declares entities (<!ENTITY>), which documents never need; refused",
                   name);
        else
            fy_err(err, FY_EFORMAT, "%s: not well-formed XML (line %d: %s)", name, line,
                   why[0] ? why : "parse error");
        return NULL;
    }
    return doc;
}

char *docxml_write(void *doc, size_t *len, fy_error *err)
{
    xmlChar *mem = NULL;
    int size = 0;
    xmlDocDumpMemoryEnc(doc, &mem, &size, "UTF-8");
    if (!mem) {
        fy_err(err, FY_ENOMEM, "cannot serialise the XML part");
        return NULL;
    }
    char *out = malloc((size_t)size + 1);
    if (out) {
        memcpy(out, mem, (size_t)size);
        out[size] = '\0';
        *len = (size_t)size;
    } else {
        fy_err(err, FY_ENOMEM, "out of memory");
    }
    xmlFree(mem);
    return out;
}

void docxml_free(void *doc)
{
    if (doc) xmlFreeDoc(doc);
}

int docxml_is(const void *node, const char *ns, const char *local)
{
    const xmlNode *n = node;
    if (!n || n->type != XML_ELEMENT_NODE || strcmp((const char *)n->name, local)) return 0;
    if (!ns) return n->ns == NULL;
    return n->ns && n->ns->href && !strcmp((const char *)n->ns->href, ns);
}

/* ---- the paragraph model ------------------------------------------------------ */

typedef struct slot {
    int kind;      /* XK_SPAN, XK_RUN, XK_OBJECT, XK_VISIBLE, XK_BREAK */
    xmlNode *node; /* the element copied (span, run) or kept (objects) */
    xmlNode *run;  /* objects inside an OOXML run: that run (its properties) */
    int used;
} slot;

struct xmlpara {
    xmlNode *parent, *next; /* new nodes go before next (NULL: at the end) */
    xmlNode **old;          /* the children the unit stands for */
    size_t nold;
    slot *sl;
    size_t nsl, cap;
    size_t unit;
    xmlNode *base; /* OOXML: the run whose properties bare text gets */
    const xml_style *st;
    int applied; /* the tree holds the translation already */
};

typedef struct encoder {
    xmlpara *p;
    fy_buf b;
    int words;          /* text was written */
    xmlNode **objects;  /* kept nodes that may hold paragraphs */
    size_t nobj, capobj;
    char *open_props;   /* OOXML: properties of the run span now open */
    char *base_props;
} encoder;

static int add_slot(xmlpara *p, int kind, xmlNode *node, xmlNode *run, size_t *k)
{
    if (fy_vec_reserve((void **)&p->sl, &p->cap, p->nsl + 1, sizeof *p->sl)) return FY_ENOMEM;
    p->sl[p->nsl] = (slot){kind, node, run, 0};
    *k = p->nsl++;
    return 0;
}

static int keep_object(encoder *e, xmlNode *n)
{
    if (fy_vec_reserve((void **)&e->objects, &e->capobj, e->nobj + 1, sizeof *e->objects))
        return FY_ENOMEM;
    e->objects[e->nobj++] = n;
    return 0;
}

/* The text of a node and its descendants (for XK_VISIBLE). */
static void put_content(fy_buf *b, xmlNode *n)
{
    xmlChar *t = xmlNodeGetContent(n);
    if (t) mk_text(b, (const char *)t, strlen((const char *)t));
    xmlFree(t);
}

static void put_text(encoder *e, const char *s, size_t n)
{
    mk_text(&e->b, s, n);
    if (doc_has_text(s, n)) e->words = 1;
}

/* The serialised properties of an OOXML run ("" when it has none). */
static char *run_props(const xml_style *st, xmlNode *run)
{
    for (xmlNode *c = run->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE || st->run_child(st, c) != 3) continue;
        xmlBufferPtr buf = xmlBufferCreate();
        if (!buf) return NULL;
        xmlNodeDump(buf, c->doc, c, 0, 0);
        char *s = strdup((const char *)xmlBufferContent(buf));
        xmlBufferFree(buf);
        return s;
    }
    return strdup("");
}

static int encode_object(encoder *e, int kind, xmlNode *n, xmlNode *run)
{
    size_t k;
    /* Only plain objects are looked into for paragraphs of their own (text
     * boxes, notes); code and breaks are kept whole. */
    if (add_slot(e->p, kind, n, run, &k) || (kind == XK_OBJECT && keep_object(e, n)))
        return FY_ENOMEM;
    if (kind == XK_VISIBLE) {
        fy_buf_printf(&e->b, "<code data-k=\"%zu\">", k);
        put_content(&e->b, n);
        fy_buf_put(&e->b, "</code>", 7);
    } else {
        mk_object(&e->b, kind == XK_BREAK ? MK_BR : MK_IMG, k, NULL, 0);
    }
    return 0;
}

/* Closes the run span open since an earlier run with the same properties. */
static void close_run_span(encoder *e)
{
    if (!e->open_props) return;
    mk_close(&e->b);
    free(e->open_props);
    e->open_props = NULL;
}

static int encode_children(encoder *e, xmlNode *first, xmlNode *stop, int depth);

/* An OOXML run: its text; breaks and other children as objects. Runs with
 * the paragraph's base properties are bare text; consecutive runs with the
 * same other properties share one span (words split into runs by spell
 * checking or editing history stay one word for the engine). */
static int encode_run(encoder *e, xmlNode *run)
{
    const xml_style *st = e->p->st;
    char *props = run_props(st, run);
    if (!props) return FY_ENOMEM;
    int bare = e->base_props && !strcmp(props, e->base_props);
    if (bare || !e->open_props || strcmp(props, e->open_props)) {
        close_run_span(e);
        if (!bare) {
            size_t k;
            if (add_slot(e->p, XK_RUN, run, NULL, &k)) {
                free(props);
                return FY_ENOMEM;
            }
            mk_open(&e->b, k);
            e->open_props = props;
            props = NULL;
        }
    }
    free(props);
    for (xmlNode *c = run->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        int what = st->run_child(st, c);
        int rc = 0;
        if (what == 1) {
            xmlChar *t = xmlNodeGetContent(c);
            if (t) put_text(e, (const char *)t, strlen((const char *)t));
            xmlFree(t);
        } else if (what == 2) {
            rc = encode_object(e, XK_BREAK, c, run);
        } else if (what != 3) {
            rc = encode_object(e, XK_OBJECT, c, run);
        }
        if (rc) return rc;
    }
    return 0;
}

static int encode_node(encoder *e, xmlNode *n, int depth)
{
    const xml_style *st = e->p->st;
    int kind = n->type == XML_TEXT_NODE || n->type == XML_CDATA_SECTION_NODE ? XK_TEXT
               : n->type == XML_ELEMENT_NODE                                 ? st->classify(st, n)
                                                                             : -1;
    if (kind != XK_RUN) close_run_span(e);
    switch (kind) {
    case XK_TEXT:
        if (n->content) put_text(e, (const char *)n->content, strlen((const char *)n->content));
        return 0;
    case XK_SPACE: {
        xmlChar *c = NULL;
        for (xmlAttr *a = n->properties; a && !c; a = a->next)
            if (!strcmp((const char *)a->name, "c")) c = xmlNodeGetContent((xmlNode *)a);
        long count = c ? strtol((const char *)c, NULL, 10) : 1;
        xmlFree(c);
        if (count < 1 || count > 1000) count = 1;
        for (long i = 0; i < count; i++) fy_buf_putc(&e->b, ' ');
        return 0;
    }
    case XK_RUN:
        return encode_run(e, n);
    case XK_SPAN: {
        size_t k;
        if (add_slot(e->p, XK_SPAN, n, NULL, &k)) return FY_ENOMEM;
        mk_open(&e->b, k);
        int rc = encode_children(e, n->children, NULL, depth + 1);
        close_run_span(e);
        mk_close(&e->b);
        return rc;
    }
    case XK_VISIBLE:
    case XK_BREAK:
        return encode_object(e, kind, n, NULL);
    default: /* XK_FIXED in the middle (never looked into, kept in place), */ /* objects, and comments or processing instructions */
        return encode_object(e, XK_OBJECT, n, NULL);
    }
}

static int encode_children(encoder *e, xmlNode *first, xmlNode *stop, int depth)
{
    if (depth > 300) return FY_ELIMIT;
    for (xmlNode *n = first; n && n != stop; n = n->next) {
        int rc = encode_node(e, n, depth);
        if (rc) return rc;
    }
    return 0;
}

/* The properties most of a paragraph's text has (direct runs only). */
static char *base_props(const xml_style *st, xmlNode *first, xmlNode *stop, xmlNode **base)
{
    char *best = NULL;
    size_t best_n = 0;
    *base = NULL;
    for (xmlNode *n = first; n && n != stop; n = n->next) {
        if (n->type != XML_ELEMENT_NODE || st->classify(st, n) != XK_RUN) continue;
        char *p = run_props(st, n);
        if (!p) break;
        size_t chars = 0;
        for (xmlNode *m = first; m && m != stop; m = m->next) {
            if (m->type != XML_ELEMENT_NODE || st->classify(st, m) != XK_RUN) continue;
            char *q = run_props(st, m);
            if (q && !strcmp(p, q)) {
                xmlChar *t = xmlNodeGetContent(m);
                chars += t ? strlen((const char *)t) : 0;
                xmlFree(t);
            }
            free(q);
        }
        if (!best || chars > best_n) {
            free(best);
            best = p;
            best_n = chars;
            *base = n;
        } else {
            free(p);
        }
    }
    return best;
}

static int walk(fy_document *d, xmlNode *n, const xml_style *st,
                int (*is_para)(const xml_style *, void *), int block_inline, xmlparas *list,
                int depth, fy_error *err);

/* A unit for children [first, stop) of parent, if they hold words; then the
 * walk goes into the objects kept (text boxes, notes). */
static int make_para(fy_document *d, xmlNode *parent, xmlNode *first, xmlNode *stop,
                     const xml_style *st, int (*is_para)(const xml_style *, void *),
                     int block_inline, xmlparas *list, int depth, fy_error *err)
{
    xmlpara *p = calloc(1, sizeof *p);
    if (!p) return fy_err(err, FY_ENOMEM, "out of memory");
    p->parent = parent;
    p->next = stop;
    p->st = st;
    encoder e = {p, {0}, 0, NULL, 0, 0, NULL, NULL};
    if (st->run) e.base_props = base_props(st, first, stop, &p->base);
    int rc = encode_children(&e, first, stop, depth);
    close_run_span(&e);
    free(e.base_props);
    if (rc == FY_ELIMIT) rc = fy_err(err, FY_ELIMIT, "a paragraph nests too deep");
    if (!rc && e.b.oom) rc = fy_err(err, FY_ENOMEM, "out of memory");
    if (!rc && e.words) {
        for (xmlNode *n = first; n && n != stop; n = n->next) p->nold++;
        p->old = calloc(p->nold ? p->nold : 1, sizeof *p->old);
        size_t i = 0;
        for (xmlNode *n = first; p->old && n && n != stop; n = n->next) p->old[i++] = n;
        if (!p->old) rc = fy_err(err, FY_ENOMEM, "out of memory");
        if (!rc) rc = doc_unit_add(d, e.b.p ? e.b.p : "", e.b.n, 1, &p->unit, err);
        if (!rc && fy_vec_reserve((void **)&list->v, &list->cap, list->n + 1, sizeof *list->v))
            rc = fy_err(err, FY_ENOMEM, "out of memory");
        if (!rc) list->v[list->n++] = p, p = NULL;
    }
    if (p) {
        free(p->old);
        free(p->sl);
        free(p);
    }
    for (size_t i = 0; !rc && i < e.nobj; i++)
        rc = walk(d, e.objects[i], st, is_para, block_inline, list, depth + 1, err);
    fy_buf_free(&e.b);
    free(e.objects);
    return rc;
}

static int walk(fy_document *d, xmlNode *n, const xml_style *st,
                int (*is_para)(const xml_style *, void *), int block_inline, xmlparas *list,
                int depth, fy_error *err)
{
    if (depth > 400) return fy_err(err, FY_ELIMIT, "the XML nests too deep");
    if (n->type != XML_ELEMENT_NODE) return 0;
    if (is_para(st, n)) {
        xmlNode *first = n->children, *tail = NULL;
        while (first && first->type == XML_ELEMENT_NODE && st->classify(st, first) == XK_FIXED)
            first = first->next;
        /* Properties at the end (a:endParaRPr) stay last: new nodes go before them. */
        for (xmlNode *c = n->last; c && c != first && c->type == XML_ELEMENT_NODE &&
                                   st->classify(st, c) == XK_FIXED;
             c = c->prev)
            tail = c;
        return make_para(d, n, first, tail, st, is_para, block_inline, list, depth, err);
    }
    if (st->classify(st, n) == XK_FIXED) return 0; /* never looked into (<pre>, <head>) */
    xmlNode *run = NULL;
    for (xmlNode *c = n->children;; c = c->next) {
        int block = c && c->type == XML_ELEMENT_NODE &&
                    (!block_inline || st->classify(st, c) == -1 || is_para(st, c) ||
                     st->classify(st, c) == XK_FIXED);
        if (block_inline && (block || !c) && run) {
            int rc = make_para(d, n, run, c, st, is_para, block_inline, list, depth, err);
            if (rc) return rc;
            run = NULL;
        }
        if (!c) break;
        if (block) {
            int rc = walk(d, c, st, is_para, block_inline, list, depth + 1, err);
            if (rc) return rc;
        } else if (block_inline && !run) {
            run = c;
        }
    }
    return 0;
}

int xmlpara_collect(fy_document *d, void *root, const xml_style *st,
                    int (*is_para)(const xml_style *st, void *node), int block_inline,
                    xmlparas *list, fy_error *err)
{
    return root ? walk(d, root, st, is_para, block_inline, list, 0, err) : 0;
}

size_t xmlpara_slots(const xmlparas *list, size_t j)
{
    return j < list->n ? list->v[j]->nsl : 0;
}

/* ---- putting translations back ------------------------------------------------- */

enum { MAX_LEVELS = 256 };

typedef struct level {
    xmlNode *parent;
    xmlNode *tmpl; /* OOXML: the run whose properties new runs copy */
    xmlNode *run;  /* the run being filled, or NULL */
    xmlNode *run_tmpl;
} level;

typedef struct builder {
    xmlpara *p;
    level lv[MAX_LEVELS];
    int top;
} builder;

static xmlNode *add(builder *b, xmlNode *node)
{
    level *l = &b->lv[b->top];
    if (b->top == 0 && b->p->next) return xmlAddPrevSibling(b->p->next, node);
    return xmlAddChild(l->parent, node);
}

/* A copy of n for a place under parent: its attributes, and children when
 * deep, with namespaces looked up where the copy will be (a plain
 * xmlDocCopyNode would declare them again, or lose an attribute's). */
static xmlNode *clone_under(xmlNode *n, xmlNode *parent, int deep)
{
    xmlNode *copy = NULL;
    if (xmlDOMWrapCloneNode(NULL, n->doc, n, &copy, parent->doc, parent, deep, 0) || !copy)
        return NULL;
    if (!deep && copy->children) { /* only the element and its attributes */
        xmlNode *c = copy->children;
        copy->children = copy->last = NULL;
        xmlFreeNodeList(c);
    }
    return copy;
}

/* The run to put text or a run object in, made from template tmpl. */
static xmlNode *current_run(builder *b, xmlNode *tmpl)
{
    level *l = &b->lv[b->top];
    if (l->run && l->run_tmpl == tmpl) return l->run;
    const xml_style *st = b->p->st;
    xmlNode *pn = b->p->parent;
    xmlNode *run = xmlNewDocNode(pn->doc, pn->ns, (const xmlChar *)st->run, NULL);
    if (!run || !(run = add(b, run))) return NULL;
    for (xmlNode *c = tmpl ? tmpl->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && st->run_child(st, c) == 3) {
            xmlNode *props = clone_under(c, run, 1);
            if (!props) return NULL;
            xmlAddChild(run, props);
            break;
        }
    l->run = run;
    l->run_tmpl = tmpl;
    return l->run;
}

/* ODF: runs of spaces as one space and text:s. */
static int add_odf_text(builder *b, const char *s, size_t n)
{
    xmlNode *pn = b->p->parent;
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && !(s[j] == ' ' && j + 1 < n && s[j + 1] == ' ')) j++;
        if (j > i && !add(b, xmlNewDocTextLen(pn->doc, (const xmlChar *)s + i, (int)(j - i))))
            return FY_ENOMEM;
        if (j >= n) break;
        size_t k = j;
        while (k < n && s[k] == ' ') k++;
        if (!add(b, xmlNewDocTextLen(pn->doc, (const xmlChar *)" ", 1))) return FY_ENOMEM;
        xmlNode *sp = xmlNewDocNode(pn->doc, pn->ns, (const xmlChar *)"s", NULL);
        if (!sp) return FY_ENOMEM;
        char c[24];
        snprintf(c, sizeof c, "%zu", k - j - 1);
        if (k - j - 1 > 1) xmlSetNsProp(sp, pn->ns, (const xmlChar *)"c", (const xmlChar *)c);
        add(b, sp);
        i = k;
    }
    return 0;
}

static int on_text(void *ctx, const char *s, size_t n)
{
    builder *b = ctx;
    const xml_style *st = b->p->st;
    level *l = &b->lv[b->top];
    xmlNode *pn = b->p->parent;
    if (!st->run) {
        if (st->odf_spaces) return add_odf_text(b, s, n);
        return add(b, xmlNewDocTextLen(pn->doc, (const xmlChar *)s, (int)n)) ? 0 : FY_ENOMEM;
    }
    xmlNode *run = current_run(b, l->tmpl);
    if (!run) return FY_ENOMEM;
    xmlNode *last = run->last;
    if (last && last->type == XML_ELEMENT_NODE && st->run_child(st, last) == 1 &&
        !strcmp((const char *)last->name, st->text)) {
        xmlNodeAddContentLen(last, (const xmlChar *)s, (int)n);
        return 0;
    }
    xmlNode *t = xmlNewDocNode(pn->doc, pn->ns, (const xmlChar *)st->text, NULL);
    if (!t) return FY_ENOMEM;
    xmlNodeAddContentLen(t, (const xmlChar *)s, (int)n);
    if (st->preserve_space) xmlNodeSetSpacePreserve(t, 1);
    xmlAddChild(run, t);
    return 0;
}

static int on_open(void *ctx, size_t k)
{
    builder *b = ctx;
    slot *s = &b->p->sl[k];
    if (b->top + 1 >= MAX_LEVELS || (s->kind != XK_SPAN && s->kind != XK_RUN)) return FY_EINVAL;
    level *l = &b->lv[b->top];
    level next = {l->parent, s->kind == XK_RUN ? s->node : l->tmpl, NULL, NULL};
    if (s->kind == XK_SPAN) {
        xmlNode *copy = clone_under(s->node, l->parent, 0);
        if (!copy || !(next.parent = add(b, copy))) return FY_ENOMEM;
    }
    l->run = NULL; /* what follows the span goes after it, in a run of its own */
    b->lv[++b->top] = next;
    return 0;
}

static int on_close(void *ctx, size_t k)
{
    builder *b = ctx;
    (void)k;
    if (b->top == 0) return FY_EINVAL;
    b->top--;
    b->lv[b->top].run = NULL;
    return 0;
}

static int place_object(builder *b, slot *s)
{
    xmlUnlinkNode(s->node);
    s->used = 1;
    if (s->run && b->p->st->run) {
        xmlNode *run = current_run(b, s->run);
        if (!run) return FY_ENOMEM;
        xmlAddChild(run, s->node);
        return 0;
    }
    b->lv[b->top].run = NULL;
    add(b, s->node);
    return 0;
}

static int on_object(void *ctx, int kind, size_t k)
{
    builder *b = ctx;
    slot *s = &b->p->sl[k];
    (void)kind;
    if (s->kind == XK_SPAN || s->kind == XK_RUN || s->used) return FY_EINVAL;
    return place_object(b, s);
}

/* Rebuilds paragraph p from its unit's translation. The old children are
 * unlinked (freed by the caller once every paragraph is done: objects of
 * one may hold paragraphs of another). */
static int apply_one(fy_document *d, xmlpara *p, fy_error *err)
{
    size_t len;
    const char *text = doc_unit_out(d, p->unit, &len);
    if (!d->u[p->unit].out || p->applied) return 0; /* untranslated: the tree is as it was */
    p->applied = 1;
    for (size_t i = 0; i < p->nold; i++) xmlUnlinkNode(p->old[i]);
    builder *b = calloc(1, sizeof *b);
    if (!b) return fy_err(err, FY_ENOMEM, "out of memory");
    b->p = p;
    b->lv[0] = (level){p->parent, p->base, NULL, NULL};
    mk_sink sink = {on_text, on_open, on_close, on_object, b, p->nsl};
    int rc = mk_decode(text, len, &sink, err);
    b->top = 0;
    b->lv[0].run = NULL;
    /* Nothing kept may be lost, whatever the translation did. */
    for (size_t k = 0; k < p->nsl; k++)
        if (p->sl[k].kind != XK_SPAN && p->sl[k].kind != XK_RUN && !p->sl[k].used)
            place_object(b, &p->sl[k]);
    free(b);
    return rc;
}

int xmlpara_apply(fy_document *d, xmlparas *list, fy_error *err)
{
    int rc = 0;
    for (size_t i = 0; i < list->n && !rc; i++) rc = apply_one(d, list->v[i], err);
    return rc;
}

void xmlparas_free(xmlparas *list)
{
    for (size_t i = 0; i < list->n; i++) {
        xmlpara *p = list->v[i];
        for (size_t k = 0; k < p->nold; k++)
            if (!p->old[k]->parent) xmlFreeNode(p->old[k]);
        free(p->old);
        free(p->sl);
        free(p);
    }
    free(list->v);
    memset(list, 0, sizeof *list);
}
