/* document.c - the format registry (extension, Content-Type, content), the
 * unit table every format fills, and the translated file's name. */
#include "text/document_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "text/text_internal.h"
#include "util/lang.h"

static const fy_docfmt_info formats[FY_DOC_NFORMATS] = {
    [FY_DOC_TXT] = {"txt", ".txt .text", "text/plain", 0},
    [FY_DOC_MD] = {"md", ".md .markdown", "text/markdown", 0},
    [FY_DOC_HTML] = {"html", ".html .htm .xhtml", "text/html", 0},
    [FY_DOC_SRT] = {"srt", ".srt", "application/x-subrip", 0},
    [FY_DOC_VTT] = {"vtt", ".vtt", "text/vtt", 0},
    [FY_DOC_DOCX] = {"docx", ".docx",
                     "application/vnd.openxmlformats-officedocument.wordprocessingml.document", 1},
    [FY_DOC_ODT] = {"odt", ".odt", "application/vnd.oasis.opendocument.text", 1},
    [FY_DOC_PPTX] = {"pptx", ".pptx",
                     "application/vnd.openxmlformats-officedocument.presentationml.presentation",
                     1},
    [FY_DOC_EPUB] = {"epub", ".epub", "application/epub+zip", 1},
    [FY_DOC_PDF] = {"pdf", ".pdf", "application/pdf", 0},
};

static const doc_ops *const ops[FY_DOC_NFORMATS] = {
    &doc_txt_ops,  &doc_md_ops,  &doc_html_ops, &doc_srt_ops,  &doc_vtt_ops,
    &doc_docx_ops, &doc_odt_ops, &doc_pptx_ops, &doc_epub_ops, &doc_pdf_ops,
};

const fy_docfmt_info *fy_docfmt_get(int f)
{
    return f >= 0 && f < FY_DOC_NFORMATS ? &formats[f] : NULL;
}

const char *fy_docfmt_list(void)
{
    return ".txt, .md, .html, .srt, .vtt, .docx, .odt, .pptx, .epub, .pdf";
}

void fy_doc_limits_default(fy_doc_limits *l)
{
    l->max_bytes = (size_t)20 << 20;
    l->max_entries = 10000;
    l->max_unpacked = (size_t)256 << 20;
    l->max_part = (size_t)64 << 20;
    l->max_ratio = 200;
    l->max_depth = 256;
    l->max_units = 200000;
    l->max_chars = 1000000;
    l->max_pages = 2000;
    l->max_memory = (size_t)512 << 20;
}

/* ---- detection ------------------------------------------------------------ */

/* The format whose extension list holds ext (".docx", any case), or -1. */
static int by_extension(const char *ext)
{
    size_t n = strlen(ext);
    for (int f = 0; f < FY_DOC_NFORMATS && n > 1; f++) {
        const char *p = formats[f].extensions;
        while (*p) {
            size_t m = strcspn(p, " ");
            if (m == n && !strncasecmp(p, ext, n)) return f;
            p += m;
            while (*p == ' ') p++;
        }
    }
    return -1;
}

/* The format of a Content-Type (parameters ignored), or -1. */
static int by_type(const char *ct)
{
    if (!ct) return -1;
    size_t n = strcspn(ct, "; ");
    for (int f = 0; f < FY_DOC_NFORMATS; f++)
        if (strlen(formats[f].mime) == n && !strncasecmp(ct, formats[f].mime, n)) return f;
    static const struct {
        const char *type;
        int f;
    } more[] = {{"text/x-markdown", FY_DOC_MD},
                {"application/xhtml+xml", FY_DOC_HTML},
                {"text/srt", FY_DOC_SRT},
                {"application/x-srt", FY_DOC_SRT},
                {"text/x-srt", FY_DOC_SRT}};
    for (size_t k = 0; k < sizeof more / sizeof *more; k++)
        if (strlen(more[k].type) == n && !strncasecmp(ct, more[k].type, n)) return more[k].f;
    return -1;
}

static int is_zip(const char *data, size_t len)
{
    return len >= 4 && !memcmp(data, "PK\x03\x04", 4);
}

/* A PDF starts with %PDF- within its first 1,024 bytes (readers allow
 * something before it). */
static int is_pdf(const char *data, size_t len)
{
    return memmem(data, len < 1024 ? len : 1024, "%PDF-", 5) != NULL;
}

/* The zip format by its content: the mimetype entry's text where the
 * format has one (odt, epub: stored first, uncompressed, so readable in
 * place), else the name of the main part in the first local headers. */
static int zip_kind(const char *data, size_t len)
{
    size_t at = len;
    if (len >= 30)
        at = 30 + (size_t)((unsigned char)data[26] | (unsigned char)data[27] << 8) +
             (size_t)((unsigned char)data[28] | (unsigned char)data[29] << 8);
    if (len > 38 && at < len && !memcmp(data + 30, "mimetype", 8)) {
        const char *v = data + at;
        size_t room = len - at;
        if (room >= 20 && !memcmp(v, "application/epub+zip", 20)) return FY_DOC_EPUB;
        if (room >= 39 && !memcmp(v, "application/vnd.oasis.opendocument.text", 39))
            return FY_DOC_ODT;
    }
    size_t scan = len < 65536 ? len : 65536;
    if (memmem(data, scan, "word/", 5)) return FY_DOC_DOCX;
    if (memmem(data, scan, "ppt/", 4)) return FY_DOC_PPTX;
    if (memmem(data, scan, "META-INF/container.xml", 22)) return FY_DOC_EPUB;
    if (memmem(data, scan, "content.xml", 11)) return FY_DOC_ODT;
    return -1;
}

/* The text format of UTF-8 content, by its first non-blank bytes. */
static int text_kind(const char *data, size_t len)
{
    size_t i = 0;
    if (len >= 3 && !memcmp(data, "\xef\xbb\xbf", 3)) i = 3;
    while (i < len && strchr(" \t\r\n", data[i])) i++;
    const char *p = data + i;
    size_t n = len - i;
    if (n >= 6 && !memcmp(p, "WEBVTT", 6)) return FY_DOC_VTT;
    if (n && p[0] == '<') return FY_DOC_HTML;
    /* SRT: a number line, then a timing line "00:00:01,000 --> ..." */
    size_t d = 0;
    while (d < n && p[d] >= '0' && p[d] <= '9') d++;
    if (d && d < n) {
        const char *nl = memchr(p + d, '\n', n - d);
        size_t rest = nl ? (size_t)(p + n - nl) : 0;
        if (rest > 17 && memmem(nl, rest < 64 ? rest : 64, "-->", 3)) return FY_DOC_SRT;
    }
    return FY_DOC_TXT;
}

/* The format the content says, or -1 when it is none of ours. */
static int by_content(const char *data, size_t len)
{
    if (is_zip(data, len)) return zip_kind(data, len);
    if (is_pdf(data, len)) return FY_DOC_PDF;
    if (!fy_utf8_valid(data, len, NULL) || (len && memchr(data, '\0', len))) return -1;
    return text_kind(data, len);
}

/* Does the content fit format f? Writes why not into err. */
static int content_fits(int f, const char *data, size_t len, const char *named, fy_error *err)
{
    const char *what = formats[f].name;
    if (f == FY_DOC_PDF) {
        if (is_pdf(data, len)) return 0;
        return fy_err(err, FY_EUNSUPPORTED,
                      "%s says pdf, but the content is not a PDF (no %%PDF- header)", named);
    }
    if (formats[f].zip) {
        if (!is_zip(data, len))
            return fy_err(err, FY_EUNSUPPORTED,
                          "%s says %s, but the content is not a zip archive (a .%s file is one)",
                          named, what, what);
        int k = zip_kind(data, len);
        if (k >= 0 && k != f)
            return fy_err(err, FY_EUNSUPPORTED, "%s says %s, but the content is a %s archive",
                          named, what, formats[k].name);
        return 0;
    }
    if (is_zip(data, len))
        return fy_err(err, FY_EUNSUPPORTED, "%s says %s, but the content is a zip archive", named,
                      what);
    if (len >= 5 && !memcmp(data, "%PDF-", 5))
        return fy_err(err, FY_EUNSUPPORTED, "%s says %s, but the content is a PDF", named, what);
    size_t bad;
    if (!fy_utf8_valid(data, len, &bad))
        return fy_err(err, FY_EUNSUPPORTED,
                      "%s says %s, but the content is not UTF-8 text (byte %zu); convert it to "
                      "UTF-8",
                      named, what, bad);
    const char *nul = len ? memchr(data, '\0', len) : NULL;
    if (nul)
        return fy_err(err, FY_EUNSUPPORTED, "%s says %s, but the content holds a NUL byte (at %zu)",
                      named, what, (size_t)(nul - data));
    return 0;
}

static const char *extension_of(const char *filename)
{
    if (!filename) return NULL;
    const char *base = filename;
    for (const char *p = filename; *p; p++)
        if (*p == '/' || *p == '\\') base = p + 1;
    const char *dot = strrchr(base, '.');
    return dot && dot != base ? dot : NULL;
}

int fy_docfmt_detect(const char *filename, const char *content_type, const char *data, size_t len,
                     fy_error *err)
{
    const char *ext = extension_of(filename);
    int f = ext ? by_extension(ext) : -1;
    char named[160];
    if (f >= 0) {
        snprintf(named, sizeof named, "the name '%.100s'", filename);
    } else if (ext) {
        return fy_err(err, FY_EUNSUPPORTED,
                      "files of type '%.40s' are not supported; supported: %s", ext,
                      fy_docfmt_list());
    } else if ((f = by_type(content_type)) >= 0) {
        snprintf(named, sizeof named, "Content-Type %.100s", content_type);
    }
    if (f >= 0) return content_fits(f, data, len, named, err) ? err->code : f;
    if ((f = by_content(data, len)) >= 0) return f;
    return fy_err(err, FY_EUNSUPPORTED,
                  "the file is not a document this server translates; supported: %s",
                  fy_docfmt_list());
}

/* ---- documents ------------------------------------------------------------- */

int doc_has_text(const char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        size_t n;
        if (!fy_cp_is_space(fy_utf8_get(s, len, i, &n))) return 1;
        i += n;
    }
    return 0;
}

/* Characters of text in a unit: an HTML unit's tags do not count. */
static size_t unit_chars(const char *s, size_t len, int html)
{
    fy_buf b = {0};
    if (html) {
        fy_html_text(s, len, &b);
        s = b.p ? b.p : "";
        len = b.n;
    }
    size_t n = 0;
    for (size_t i = 0; i < len; i++) n += ((unsigned char)s[i] & 0xC0) != 0x80;
    fy_buf_free(&b);
    return n;
}

int doc_unit_add(fy_document *d, const char *text, size_t len, int html, size_t *index,
                 fy_error *err)
{
    if (d->n >= d->lim.max_units)
        return fy_err(err, FY_ELIMIT, "the document has more than %zu paragraphs (the limit)",
                      d->lim.max_units);
    d->chars += unit_chars(text, len, html);
    if (d->chars > d->lim.max_chars)
        return fy_err(err, FY_ELIMIT,
                      "the document has more than %zu characters of text (the limit is %zu)",
                      d->lim.max_chars, d->lim.max_chars);
    if (fy_vec_reserve((void **)&d->u, &d->cap, d->n + 1, sizeof *d->u))
        return fy_err(err, FY_ENOMEM, "out of memory");
    char *copy = malloc(len + 1);
    if (!copy) return fy_err(err, FY_ENOMEM, "out of memory");
    if (len) memcpy(copy, text, len);
    copy[len] = '\0';
    d->u[d->n] = (unit){copy, len, html, NULL, 0, 0};
    if (index) *index = d->n;
    d->n++;
    return 0;
}

const char *doc_unit_out(const fy_document *d, size_t i, size_t *len)
{
    const unit *u = &d->u[i];
    *len = u->out ? u->out_len : u->len;
    return u->out ? u->out : u->text;
}

fy_document *fy_document_read(int fmt, const char *data, size_t len, const fy_doc_limits *lim,
                              fy_error *err)
{
    if (fmt < 0 || fmt >= FY_DOC_NFORMATS) {
        fy_err(err, FY_EINVAL, "unknown document format %d", fmt);
        return NULL;
    }
    fy_document *d = calloc(1, sizeof *d);
    if (!d) {
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    d->fmt = fmt;
    d->ops = ops[fmt];
    if (lim)
        d->lim = *lim;
    else
        fy_doc_limits_default(&d->lim);
    if (len > d->lim.max_bytes) {
        fy_err(err, FY_ELIMIT, "the file has %zu bytes; the limit is %zu", len, d->lim.max_bytes);
        fy_document_free(d);
        return NULL;
    }
    if (d->ops->read(d, data ? data : "", len, err)) {
        fy_document_free(d);
        return NULL;
    }
    return d;
}

void fy_document_free(fy_document *d)
{
    if (!d) return;
    if (d->impl && d->ops->free) d->ops->free(d->impl);
    for (size_t i = 0; i < d->nnotes; i++) free(d->notes[i]);
    for (size_t i = 0; i < d->n; i++) {
        free(d->u[i].text);
        free(d->u[i].out);
    }
    free(d->u);
    free(d);
}

int fy_document_format(const fy_document *d)
{
    return d->fmt;
}

size_t fy_document_units(const fy_document *d)
{
    return d->n;
}

const char *fy_document_unit(const fy_document *d, size_t i, size_t *len, int *html)
{
    if (i >= d->n) return NULL;
    if (len) *len = d->u[i].len;
    if (html) *html = d->u[i].html;
    return d->u[i].text;
}

size_t fy_document_chars(const fy_document *d)
{
    return d->chars;
}

size_t fy_document_pages(const fy_document *d)
{
    return d->pages;
}

size_t fy_document_unit_page(const fy_document *d, size_t i)
{
    return i < d->n ? d->u[i].page : 0;
}

void doc_note(fy_document *d, const char *fmt, ...)
{
    if (d->nnotes >= DOC_MAX_NOTES) return;
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n >= 0 && s) d->notes[d->nnotes++] = s;
}

size_t fy_document_notes(const fy_document *d)
{
    return d->nnotes;
}

const char *fy_document_note(const fy_document *d, size_t i)
{
    return i < d->nnotes ? d->notes[i] : NULL;
}

int fy_document_set_target(fy_document *d, const char *target, fy_error *err)
{
    char tag[FY_LANG_MAX];
    if (fy_lang_normalize(target, tag) != 0)
        return fy_err(err, FY_EINVAL, "'%.40s' is not a language tag", target ? target : "");
    snprintf(d->target, sizeof d->target, "%s", tag);
    return d->ops->target ? d->ops->target(d, err) : 0;
}

int fy_document_set_bilingual(fy_document *d, int on, fy_error *err)
{
    if (on && !d->ops->bilingual)
        return fy_err(err, FY_EUNSUPPORTED, "bilingual output is made for PDF only, not for %s",
                      formats[d->fmt].name);
    d->bilingual = on != 0;
    return 0;
}

void fy_document_on_write(fy_document *d, fy_doc_progress progress, void *user)
{
    d->progress = progress;
    d->progress_user = user;
}

int fy_document_set(fy_document *d, size_t i, const char *text, size_t len, fy_error *err)
{
    if (i >= d->n) return fy_err(err, FY_EINVAL, "no unit %zu", i);
    if (d->ops->check && d->ops->check(d, i, text, len, err)) return err->code;
    char *copy = malloc(len + 1);
    if (!copy) return fy_err(err, FY_ENOMEM, "out of memory");
    if (len) memcpy(copy, text, len);
    copy[len] = '\0';
    free(d->u[i].out);
    d->u[i].out = copy;
    d->u[i].out_len = len;
    return 0;
}

int fy_document_write(fy_document *d, char **out, size_t *len, fy_error *err)
{
    fy_buf b = {0};
    int rc = d->ops->write(d, &b, err);
    if (!rc && !b.p) fy_buf_put(&b, "", 0);
    char *p = rc ? NULL : fy_buf_take(&b, len);
    fy_buf_free(&b);
    if (!rc && !p) rc = fy_err(err, FY_ENOMEM, "out of memory");
    *out = p;
    return rc;
}

/* ---- names ------------------------------------------------------------------- */

/* Is s[0..n) a language suffix: source, or a tag util/lang.h has a name for? */
static int is_lang_suffix(const char *s, size_t n, const char *source)
{
    char tag[FY_LANG_MAX], norm[FY_LANG_MAX];
    if (n == 0 || n >= sizeof tag) return 0;
    memcpy(tag, s, n);
    tag[n] = '\0';
    if (fy_lang_normalize(tag, norm) != 0) return 0;
    if (source && *source && !strcmp(norm, source)) return 1;
    return strcmp(fy_lang_name(norm), norm) != 0;
}

void fy_document_name(const char *name, const char *source, const char *target, char *out,
                      size_t cap)
{
    const char *base = name ? name : "";
    for (const char *p = base; *p; p++)
        if (*p == '/' || *p == '\\') base = p + 1;
    char clean[256];
    size_t n = 0;
    for (const char *p = base; *p && n + 1 < sizeof clean; p++) {
        unsigned char c = (unsigned char)*p;
        clean[n++] = c < 0x20 || c == 0x7f || c == '"' || c == ';' ? '_' : (char)c;
    }
    clean[n] = '\0';
    if (!n) snprintf(clean, sizeof clean, "document");
    const char *dot = strrchr(clean, '.');
    size_t stem = dot && dot != clean ? (size_t)(dot - clean) : strlen(clean);
    const char *ext = clean + stem;
    /* "report.zh" of report.zh.docx: drop the old language. */
    const char *sdot = NULL;
    for (size_t i = stem; i-- > 1;)
        if (clean[i] == '.') {
            sdot = clean + i;
            break;
        }
    if (sdot && is_lang_suffix(sdot + 1, (size_t)(clean + stem - sdot - 1), source))
        stem = (size_t)(sdot - clean);
    snprintf(out, cap, "%.*s.%s%s", (int)stem, clean, target && *target ? target : "translated",
             ext);
}
