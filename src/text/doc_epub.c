/* doc_epub.c - EPUB: META-INF/container.xml names the package (OPF); every
 * item of its manifest with media type application/xhtml+xml is a content
 * document, parsed as XML (never as tag soup: the output stays XHTML).
 * Units: the runs of inline content of block elements (p, li, h1, td,
 * title...), with inline elements as spans, code/kbd/samp/var and
 * translate="no" shown as they are, images and other embedded things
 * kept; <pre>, <script> and <style> are never translated. The container,
 * the package, the navigation file's NCX, styles, fonts and images are
 * copied as they were. */
#include "text/document_internal.h"

#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XHTML_NS     "http://www.w3.org/1999/xhtml"
#define CONTAINER_NS "urn:oasis:names:tc:opendocument:xmlns:container"
#define OPF_NS       "http://www.idpf.org/2007/opf"

static int in_list(const char *name, const char *const *list, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!strcmp(name, list[k])) return 1;
    return 0;
}

#define IN(name, list) in_list(name, list, sizeof list / sizeof *list)

static int no_translate(xmlNode *n)
{
    xmlChar *t = xmlGetProp(n, (const xmlChar *)"translate");
    xmlChar *c = xmlGetProp(n, (const xmlChar *)"class");
    int no = (t && !strcmp((const char *)t, "no")) || (c && strstr((const char *)c, "notranslate"));
    xmlFree(t);
    xmlFree(c);
    return no;
}

static int xhtml_classify(const xml_style *st, void *node)
{
    (void)st;
    static const char *const spans[] = {"a",    "abbr",   "b",    "bdi",  "bdo",  "cite", "data",
                                        "dfn",  "em",     "i",    "mark", "q",    "s",    "small",
                                        "span", "strong", "sub",  "sup",  "time", "u",    "ins",
                                        "del",  "big",    "font", "label"};
    static const char *const visible[] = {"code", "kbd", "samp", "var", "tt"};
    static const char *const objects[] = {"img",   "wbr",   "input", "object",
                                          "embed", "audio", "video", "iframe"};
    static const char *const never[] = {"script", "style", "pre",  "textarea",
                                        "svg",    "math",  "ruby", "noscript"};
    xmlNode *n = node;
    if (n->type != XML_ELEMENT_NODE) return XK_OBJECT;
    if (n->ns && strcmp((const char *)n->ns->href, XHTML_NS)) return XK_FIXED; /* svg:, m:, epub: */
    const char *name = (const char *)n->name;
    if (IN(name, never)) return XK_FIXED;
    if (!strcmp(name, "br")) return XK_BREAK;
    if (IN(name, objects)) return XK_OBJECT;
    if (IN(name, visible) || (IN(name, spans) && no_translate(n))) return XK_VISIBLE;
    if (IN(name, spans)) return XK_SPAN;
    if (no_translate(n)) return XK_FIXED;
    return -1; /* a block */
}

static int xhtml_run_child(const xml_style *st, void *n)
{
    (void)st, (void)n;
    return 0;
}

static int xhtml_para(const xml_style *st, void *n)
{
    (void)st, (void)n;
    return 0;
}

static const xml_style xhtml_style = {xhtml_classify, xhtml_run_child, NULL, NULL, NULL, 0, 0};

/* The attribute name of element n as a malloc'd string, or NULL. */
static char *attr(xmlNode *n, const char *name)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
    char *s = v ? strdup((const char *)v) : NULL;
    xmlFree(v);
    return s;
}

static xmlNode *find(xmlNode *n, const char *ns, const char *local)
{
    for (; n; n = n->next) {
        if (docxml_is(n, ns, local)) return n;
        xmlNode *c = find(n->children, ns, local);
        if (c) return c;
    }
    return NULL;
}

static int hexval(int c)
{
    return c >= '0' && c <= '9'                     ? c - '0'
           : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10
                                                    : -1;
}

/* dir + href, percent-decoded, "." and ".." resolved inside the archive
 * (never above its root), fragment dropped: the entry name to look up.
 * Returns 0, or -1 when href leaves the archive or is absolute/remote. */
static int resolve(const char *dir, const char *href, char *out, size_t cap)
{
    if (strchr(href, ':') || href[0] == '/') return -1;
    char joined[1024];
    int n = snprintf(joined, sizeof joined, "%s%s", dir, href);
    if (n < 0 || (size_t)n >= sizeof joined) return -1;
    char *hash = strchr(joined, '#');
    if (hash) *hash = '\0';
    size_t o = 0;
    for (const char *p = joined; *p;) {
        const char *e = strchr(p, '/');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char seg[512];
        size_t sl = 0;
        for (size_t i = 0; i < len && sl + 1 < sizeof seg; i++) {
            int hi, lo;
            if (p[i] == '%' && i + 2 < len + 1 && (hi = hexval(p[i + 1])) >= 0 &&
                (lo = hexval(p[i + 2])) >= 0) {
                seg[sl++] = (char)(hi * 16 + lo);
                i += 2;
            } else {
                seg[sl++] = p[i];
            }
        }
        seg[sl] = '\0';
        if (!strcmp(seg, "..")) {
            if (!o) return -1;
            while (o && out[o - 1] != '/') o--;
            if (o) o--;
            while (o && out[o - 1] != '/') o--;
        } else if (sl && strcmp(seg, ".")) {
            if (o + sl + 2 > cap) return -1;
            memcpy(out + o, seg, sl);
            o += sl;
            if (e) out[o++] = '/';
        }
        p += len + (e ? 1 : 0);
    }
    if (o && out[o - 1] == '/') o--;
    out[o] = '\0';
    return o ? 0 : -1;
}

/* The package's path from the container. */
static char *package_path(fy_document *d, fy_error *err)
{
    xmlDoc *c = zipxml_parse_entry(d, "META-INF/container.xml", err);
    if (!c) return NULL;
    xmlNode *rf = find(xmlDocGetRootElement(c), CONTAINER_NS, "rootfile");
    char *path = rf ? attr(rf, "full-path") : NULL;
    docxml_free(c);
    if (!path) fy_err(err, FY_EFORMAT, "META-INF/container.xml names no package (rootfile)");
    return path;
}

static int epub_read(fy_document *d, const char *data, size_t len, fy_error *err)
{
    int rc = zipxml_open(d, data, len, err);
    if (rc) return rc;
    char *opf_path = package_path(d, err);
    if (!opf_path) return err->code;
    xmlDoc *opf = zipxml_parse_entry(d, opf_path, err);
    char dir[512] = "";
    const char *slash = strrchr(opf_path, '/');
    if (slash) snprintf(dir, sizeof dir, "%.*s/", (int)(slash - opf_path), opf_path);
    free(opf_path);
    if (!opf) return err->code;
    xmlNode *manifest = find(xmlDocGetRootElement(opf), OPF_NS, "manifest");
    if (!manifest) rc = fy_err(err, FY_EFORMAT, "the EPUB package has no manifest");
    for (xmlNode *it = manifest ? manifest->children : NULL; it && !rc; it = it->next) {
        if (!docxml_is(it, OPF_NS, "item")) continue;
        char *type = attr(it, "media-type"), *href = attr(it, "href");
        char name[1024];
        if (type && href && !strcmp(type, "application/xhtml+xml")) {
            long e = resolve(dir, href, name, sizeof name) ? -1 : zipdoc_find(zipxml_zip(d), name);
            if (e < 0)
                rc = fy_err(err, FY_EFORMAT,
                            "the EPUB manifest lists '%.200s', which is not in the archive", href);
            else
                rc = zipxml_add_part(d, (size_t)e, &xhtml_style, xhtml_para, 1, err);
        }
        free(type);
        free(href);
    }
    docxml_free(opf);
    return rc;
}

const doc_ops doc_epub_ops = {
    .read = epub_read, .check = zipxml_check, .write = zipxml_write, .free = zipxml_free};
