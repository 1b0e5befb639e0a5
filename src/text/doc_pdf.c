/* doc_pdf.c - PDF documents with MuPDF: a context per document with its
 * own memory limit, the file opened from memory, each page's text read
 * into paragraphs (pdf_para.c), and on writing, each page rewritten with
 * its translations (pdf_page.c), the fonts embedded (pdf_font.c) and the
 * whole file saved again (garbage-collected: the replaced content streams
 * do not stay in it).
 *
 * Refused: files MuPDF cannot open or repair (FY_EFORMAT), files that need
 * a password, or whose permissions forbid changes (FY_EUNSUPPORTED), more
 * pages than fy_doc_limits.max_pages or more memory than max_memory
 * (FY_ELIMIT). A file MuPDF had to repair is translated with a note. An
 * encrypted file that opens without a password and allows changes is
 * written encrypted as it was (same method, same permissions).
 */
#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/pdf_internal.h"

/* ---- memory: every MuPDF allocation counted against the document's limit ---------------- */

typedef union memhdr {
    size_t size;
    max_align_t align;
} memhdr;

static void *mem_malloc(void *user, size_t n)
{
    pdfmem *m = user;
    if (n > m->limit - m->used || n > m->limit - sizeof(memhdr)) {
        m->over = 1;
        return NULL;
    }
    memhdr *h = malloc(sizeof *h + n);
    if (!h) return NULL;
    h->size = n;
    m->used += n;
    if (m->used > m->peak) m->peak = m->used;
    return h + 1;
}

static void mem_free(void *user, void *p)
{
    if (!p) return;
    pdfmem *m = user;
    memhdr *h = (memhdr *)p - 1;
    m->used -= h->size;
    free(h);
}

static void *mem_realloc(void *user, void *p, size_t n)
{
    if (!p) return mem_malloc(user, n);
    if (!n) {
        mem_free(user, p);
        return NULL;
    }
    pdfmem *m = user;
    memhdr *h = (memhdr *)p - 1;
    size_t old = h->size;
    if (n > old && (n - old > m->limit - m->used || n > m->limit - sizeof(memhdr))) {
        m->over = 1;
        return NULL;
    }
    memhdr *g = realloc(h, sizeof *g + n);
    if (!g) return NULL;
    g->size = n;
    m->used = m->used - old + n;
    if (m->used > m->peak) m->peak = m->used;
    return g + 1;
}

/* ---- errors ----------------------------------------------------------------------------- */

/* MuPDF prints warnings and errors on stderr by default: a server's log is
 * no place for them. Errors reach the caller through fz_caught_message;
 * warnings (odd but readable files) are dropped. */
static void quiet(void *user, const char *msg)
{
    (void)user, (void)msg;
}

void pdf_raise(pdfdoc *p, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char msg[FY_ERROR_MSG_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fy_err(&p->why, code, "%s", msg);
    fz_throw(p->ctx, FZ_ERROR_GENERIC, "%s", msg);
}

static int caught(pdfdoc *p, fy_error *err)
{
    if (p->why.code) {
        *err = p->why;
        fy_err_clear(&p->why);
        return err->code;
    }
    int code = fz_caught(p->ctx);
    if (code == FZ_ERROR_MEMORY && p->mem.over)
        return fy_err(err, FY_ELIMIT, "the PDF needs more than %zu MiB of memory (the limit)",
                      p->mem.limit >> 20);
    if (code == FZ_ERROR_MEMORY) return fy_err(err, FY_ENOMEM, "out of memory");
    return fy_err(err, FY_EFORMAT, "the PDF is damaged: %s", fz_caught_message(p->ctx));
}

int pdf_guard(pdfdoc *p, void (*fn)(pdfdoc *p, void *arg), void *arg, fy_error *err)
{
    fz_try(p->ctx) fn(p, arg);
    fz_catch(p->ctx) return caught(p, err);
    return 0;
}

/* Drops what a page's steps hold (safe after an error: each is NULL or live). */
static void drop_page_state(pdfdoc *p)
{
    fz_context *ctx = p->ctx;
    fz_drop_device(ctx, p->dev);
    fz_drop_device(ctx, p->inner);
    fz_drop_stext_page(ctx, p->st);
    fz_drop_page(ctx, (fz_page *)p->page);
    for (int i = 0; i < 3; i++) pdf_drop_obj(ctx, p->held[i]);
    memset(p->held, 0, sizeof p->held);
    p->dev = p->inner = NULL;
    p->st = NULL;
    p->page = NULL;
}

/* ---- reading -------------------------------------------------------------------------- */

static void open_doc(pdfdoc *p, void *arg)
{
    const fy_document *d = arg;
    fz_context *ctx = p->ctx;
    p->stm = fz_open_buffer(ctx, p->bytes);
    p->doc = pdf_open_document_with_stream(ctx, p->stm);
    if (pdf_needs_password(ctx, p->doc) && !pdf_authenticate_password(ctx, p->doc, ""))
        pdf_raise(p, FY_EUNSUPPORTED,
                  "the PDF is encrypted and needs a password; remove the password and send it "
                  "again");
    if (!pdf_has_permission(ctx, p->doc, FZ_PERMISSION_EDIT))
        pdf_raise(p, FY_EUNSUPPORTED, "the PDF's permissions do not allow changing it");
    int n = pdf_count_pages(ctx, p->doc);
    if (n <= 0)
        pdf_raise(p, FY_EFORMAT, "the PDF is damaged or truncated: it has no readable page");
    if ((size_t)n > d->lim.max_pages)
        pdf_raise(p, FY_ELIMIT, "the PDF has %d pages; the limit is %zu", n, d->lim.max_pages);
    p->npg = (size_t)n;
}

/* A device that passes only visible text on to the structured-text device:
 * invisible text (render mode 3, the text layer of OCR'd scans) and text
 * used only as a clip are not read, so they are neither translated nor
 * removed. */
typedef struct text_dev {
    fz_device super;
    fz_device *inner;
} text_dev;

static void fill_text(fz_context *ctx, fz_device *dev, const fz_text *text, fz_matrix ctm,
                      fz_colorspace *cs, const float *color, float alpha, fz_color_params cp)
{
    fz_fill_text(ctx, ((text_dev *)dev)->inner, text, ctm, cs, color, alpha, cp);
}

static void stroke_text(fz_context *ctx, fz_device *dev, const fz_text *text,
                        const fz_stroke_state *st, fz_matrix ctm, fz_colorspace *cs,
                        const float *color, float alpha, fz_color_params cp)
{
    fz_stroke_text(ctx, ((text_dev *)dev)->inner, text, st, ctm, cs, color, alpha, cp);
}

static void read_page(pdfdoc *p, void *arg)
{
    fz_context *ctx = p->ctx;
    int i = *(const int *)arg;
    p->page = pdf_load_page(ctx, p->doc, i);
    fz_rect bounds = fz_bound_page(ctx, (fz_page *)p->page);
    p->st = fz_new_stext_page(ctx, bounds);
    fz_stext_options opt = {.flags = FZ_STEXT_MEDIABOX_CLIP};
    p->inner = fz_new_stext_device(ctx, p->st, &opt);
    text_dev *td = fz_new_derived_device(ctx, text_dev);
    td->inner = p->inner;
    td->super.fill_text = fill_text;
    td->super.stroke_text = stroke_text;
    p->dev = &td->super;
    pdf_run_page_contents(ctx, p->page, p->dev, fz_identity, NULL);
    fz_close_device(ctx, p->dev);
    fz_close_device(ctx, p->inner);
}

/* "pages 3, 5 and 9" (at most 20 named). */
static void no_text_note(fy_document *d, const pdfdoc *p)
{
    char list[256] = "";
    size_t n = 0, len = 0;
    for (size_t i = 0; i < p->npg; i++) {
        if (p->pg[i].text) continue;
        if (++n <= 20)
            len +=
                (size_t)snprintf(list + len, sizeof list - len, "%s%zu", n > 1 ? ", " : "", i + 1);
        if (len >= sizeof list) len = sizeof list - 1;
    }
    if (n == 1) doc_note(d, "page %s has no text layer (a scanned page?); kept as it is", list);
    if (n > 1)
        doc_note(d, "%zu pages have no text layer (scanned pages?) and are kept as they are: %s%s",
                 n, list, n > 20 ? ", ..." : "");
}

static int read_pages(fy_document *d, pdfdoc *p, fy_error *err)
{
    p->pg = calloc(p->npg, sizeof *p->pg);
    if (!p->pg) return fy_err(err, FY_ENOMEM, "out of memory");
    for (size_t i = 0; i < p->npg; i++) {
        int at = (int)i;
        int rc = pdf_guard(p, read_page, &at, err);
        if (!rc) rc = pdfpara_page(d, p, i, err);
        drop_page_state(p);
        if (rc) return fy_err_prefix(err, "page %zu", i + 1);
    }
    no_text_note(d, p);
    return 0;
}

static int pdf_read(fy_document *d, const char *data, size_t len, fy_error *err)
{
    pdfdoc *p = calloc(1, sizeof *p);
    if (!p) return fy_err(err, FY_ENOMEM, "out of memory");
    d->impl = p;
    p->mem.limit = d->lim.max_memory;
    fz_alloc_context alloc = {&p->mem, mem_malloc, mem_realloc, mem_free};
    size_t store =
        d->lim.max_memory / 4 < ((size_t)64 << 20) ? d->lim.max_memory / 4 : (size_t)64 << 20;
    p->ctx = fz_new_context(&alloc, NULL, store);
    if (!p->ctx)
        return p->mem.over ? fy_err(err, FY_ELIMIT, "max_memory is too small to open a PDF")
                           : fy_err(err, FY_ENOMEM, "out of memory");
    fz_set_user_context(p->ctx, p);
    fz_set_warning_callback(p->ctx, quiet, p);
    fz_set_error_callback(p->ctx, quiet, p);
    p->fonts = pf_new();
    if (!p->fonts) return fy_err(err, FY_ENOMEM, "out of memory");
    fz_try(p->ctx) p->bytes =
        fz_new_buffer_from_copied_data(p->ctx, (const unsigned char *)data, len);
    fz_catch(p->ctx) return caught(p, err);
    int rc = pdf_guard(p, open_doc, d, err);
    if (rc) return rc;
    d->pages = p->npg;
    if (pdf_was_repaired(p->ctx, p->doc))
        doc_note(d, "the file was damaged and MuPDF repaired it; check the result");
    return read_pages(d, p, err);
}

/* ---- target language ------------------------------------------------------------------- */

static void choose(pdfdoc *p, void *arg)
{
    pf_choose(p->ctx, p->fonts, arg);
}

static int pdf_target(fy_document *d, fy_error *err)
{
    pdfdoc *p = d->impl;
    if (pf_ready(p->fonts)) {
        /* Chosen once: a new target starts over with fresh fonts. */
        pf_free(p->ctx, p->fonts);
        if (!(p->fonts = pf_new())) return fy_err(err, FY_ENOMEM, "out of memory");
    }
    return pdf_guard(p, choose, d->target, err);
}

/* ---- writing ------------------------------------------------------------------------------ */

/* MuPDF gives every save a new instance id (the second string of the
 * trailer's /ID, which by the PDF specification changes with the
 * contents): random bytes, which it prints as a hex string or, when they
 * happen to be mostly printable, as a literal one, so the same document
 * translated twice would differ. save() therefore puts its own /ID in the
 * trailer, the instance id sixteen zero bytes (always printed in hex), and
 * tells MuPDF to leave it; here it becomes the MD5 of the file itself (that
 * string zeroed): the output is a function of the input and its
 * translations (a job resumed after a restart, or taken over by another
 * replica, writes what an uninterrupted one does). A file that had no
 * permanent id (the first string) gets the same one. Should the pattern
 * not be found, the zeros stay: still the same bytes every time. */
static void stable_id(unsigned char *b, size_t n, int had_id)
{
    static const char key[] = "/ID[<";
    size_t k = sizeof key - 1, at = n; /* the last /ID: the trailer's */
    for (size_t i = 0; i + k + 68 <= n; i++)
        if (!memcmp(b + i, key, k)) at = i + k;
    if (at == n || b[at + 32] != '>' || b[at + 33] != '<' || b[at + 66] != '>') return;
    for (int i = 0; i < 32; i++)
        if (!isxdigit(b[at + i]) || !isxdigit(b[at + 34 + i])) return;
    memset(b + at + 34, '0', 32);
    if (!had_id) memset(b + at, '0', 32);
    unsigned char d[16];
    fz_md5 md5;
    fz_md5_init(&md5);
    fz_md5_update(&md5, b, n);
    fz_md5_final(&md5, d);
    char hex[33];
    for (int i = 0; i < 16; i++) snprintf(hex + 2 * i, 3, "%02X", d[i]);
    memcpy(b + at + 34, hex, 32);
    if (!had_id) memcpy(b + at, hex, 32);
}

/* The trailer's /ID before the save: the file's permanent id when it has
 * one (an encrypted file's key is made from it), else zeros, and zeros for
 * the instance id (see stable_id). */
static void set_id(pdfdoc *p)
{
    fz_context *ctx = p->ctx;
    static const char zero[16] = {0};
    pdf_obj *trailer = pdf_trailer(ctx, p->doc);
    pdf_obj *first = pdf_array_get(ctx, pdf_dict_get(ctx, trailer, PDF_NAME(ID)), 0);
    p->had_id = pdf_is_string(ctx, first);
    pdf_obj *id = pdf_new_array(ctx, p->doc, 2);
    fz_try(ctx)
    {
        if (p->had_id)
            pdf_array_push(ctx, id, first);
        else
            pdf_array_push_string(ctx, id, zero, sizeof zero);
        pdf_array_push_string(ctx, id, zero, sizeof zero);
        pdf_dict_put(ctx, trailer, PDF_NAME(ID), id);
    }
    fz_always(ctx) pdf_drop_obj(ctx, id);
    fz_catch(ctx) fz_rethrow(ctx);
}

static void save(pdfdoc *p, void *arg)
{
    (void)arg;
    fz_context *ctx = p->ctx;
    set_id(p);
    pdf_write_options o = pdf_default_write_options;
    o.dont_regenerate_id = 1; /* set_id's placeholder, made stable after the save */
    o.do_garbage = 1;         /* the replaced content streams go */
    o.do_compress = 1;        /* the new content streams are deflated */
    o.do_compress_images = 1;
    o.do_compress_fonts = 1;
    p->out = fz_new_buffer(ctx, 1 << 16);
    p->wr = fz_new_output_with_buffer(ctx, p->out);
    pdf_write_document(ctx, p->doc, p->wr, &o);
    fz_close_output(ctx, p->wr);
}

/* The saved file must read back with every page: MuPDF counts a broken
 * page object of a damaged file as a page when reading, but its save drops
 * what it cannot write (a page tree of [null]), and the client would get a
 * PDF with pages missing or none at all (found by fuzz_document). Each page
 * is loaded: the page tree is walked, no content is parsed. */
static void check_saved(pdfdoc *p, void *arg)
{
    size_t want = *(const size_t *)arg;
    fz_context *ctx = p->ctx;
    fz_stream *stm = NULL;
    pdf_document *doc = NULL;
    int n = -1;
    fz_var(stm);
    fz_var(doc);
    fz_var(n);
    fz_try(ctx)
    {
        stm = fz_open_buffer(ctx, p->out);
        doc = pdf_open_document_with_stream(ctx, stm);
        n = pdf_count_pages(ctx, doc);
        for (int i = 0; i < n; i++) fz_drop_page(ctx, fz_load_page(ctx, (fz_document *)doc, i));
    }
    fz_always(ctx)
    {
        pdf_drop_document(ctx, doc);
        fz_drop_stream(ctx, stm);
    }
    fz_catch(ctx) n = -1;
    if (n < 0 || (size_t)n != want)
        pdf_raise(p, FY_EFORMAT,
                  "the PDF is damaged in a way its pages cannot be written back from; save it "
                  "again from a PDF viewer and send that");
}

static void embed(pdfdoc *p, void *arg)
{
    (void)arg;
    pf_embed(p->ctx, p->fonts, p->doc);
    pdfpage_fonts(p, NULL);
}

static int pdf_write(fy_document *d, fy_buf *out, fy_error *err)
{
    pdfdoc *p = d->impl;
    int rc = pf_ready(p->fonts) ? 0 : pdf_guard(p, choose, (void *)"", err);
    if (!rc && d->bilingual) rc = pdf_guard(p, pdfpage_duplicate, NULL, err);
    for (size_t i = 0; i < p->npg && !rc; i++) {
        rc = pdfpage_write(d, p, i, d->bilingual ? (int)(2 * i + 1) : (int)i, err);
        drop_page_state(p);
        if (rc) fy_err_prefix(err, "page %zu", i + 1);
        if (d->progress) d->progress(d->progress_user, i + 1, p->npg + 1);
    }
    if (!rc) rc = pdf_guard(p, embed, NULL, err);
    if (!rc) rc = pdf_guard(p, save, NULL, err);
    size_t pages = d->bilingual ? 2 * p->npg : p->npg;
    if (!rc) rc = pdf_guard(p, check_saved, &pages, err);
    if (!rc) {
        unsigned char *bytes;
        size_t n = fz_buffer_storage(p->ctx, p->out, &bytes);
        stable_id(bytes, n, p->had_id);
        fy_buf_put(out, bytes, n);
        if (out->oom) rc = fy_err(err, FY_ENOMEM, "out of memory");
    }
    if (!rc && pf_missing(p->fonts))
        doc_note(d, "%zu characters of the translation are in no installed font and show as boxes",
                 pf_missing(p->fonts));
    if (!rc && d->progress) d->progress(d->progress_user, p->npg + 1, p->npg + 1);
    return rc;
}

static void pdf_free(void *impl)
{
    pdfdoc *p = impl;
    if (p->ctx) {
        fz_context *ctx = p->ctx;
        drop_page_state(p);
        fz_drop_output(ctx, p->wr);
        fz_drop_buffer(ctx, p->out);
        pf_free(ctx, p->fonts);
        pdf_drop_document(ctx, p->doc);
        fz_drop_stream(ctx, p->stm);
        fz_drop_buffer(ctx, p->bytes);
        fz_drop_context(ctx);
    } else {
        free(p->fonts);
    }
    free(p->pg);
    free(p->para);
    free(p->orig);
    free(p);
}

const doc_ops doc_pdf_ops = {
    .read = pdf_read, .write = pdf_write, .free = pdf_free, .target = pdf_target, .bilingual = 1};
