/* pdf_page.c - a page rewritten with its translations.
 *
 * The original text of a translated paragraph is removed glyph by glyph
 * with MuPDF's content-stream filter (pdf_filter_page_contents): its text
 * callback sees every glyph the page (and the forms it draws, each given
 * its own filtered copy) shows, and a glyph goes when its origin is one
 * of the origins the paragraph was read with. Nothing else is touched:
 * images, paths, shadings, text that was not translated (formulas, code,
 * rotated text, invisible OCR layers), annotations and links. The filter
 * leaves the graphics state as it found it, so the translations drawn
 * after it start from the page's own coordinate system; they are drawn in
 * MuPDF's device space (top-left origin, rotation applied) through the
 * inverse of the page transform, one text object per paragraph, glyphs
 * addressed by glyph id (Type0, Identity-H).
 *
 * Bilingual output puts after every page a copy of its page object: the
 * same content streams and resources (shared, not copied: the file grows
 * by the translations only), copies of its annotations but widgets and
 * popups, no structure-tree entry. The copy is the page that is rewritten.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text/pdf_internal.h"
#include "text/text_internal.h"
#include "util/buf.h"

/* ---- bilingual pages ---------------------------------------------------------------------- */

static int skip_key(fz_context *ctx, pdf_obj *key)
{
    static pdf_obj *const keys[] = {PDF_NAME(Parent),   PDF_NAME(Annots),   PDF_NAME(StructParents),
                                    PDF_NAME(B),        PDF_NAME(Contents), PDF_NAME(Resources),
                                    PDF_NAME(MediaBox), PDF_NAME(CropBox),  PDF_NAME(Rotate)};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (pdf_name_eq(ctx, key, keys[i])) return 1;
    return 0;
}

/* Copies of page's annotations for the page dup (widgets belong to the
 * form, popups to their parent: neither is copied). */
static void copy_annots(pdfdoc *p, pdf_obj *page, pdf_obj *dup)
{
    fz_context *ctx = p->ctx;
    pdf_obj *annots = pdf_dict_get(ctx, page, PDF_NAME(Annots));
    int n = pdf_array_len(ctx, annots);
    if (!n) return;
    pdf_obj *list = pdf_dict_put_array(ctx, dup, PDF_NAME(Annots), n);
    for (int i = 0; i < n; i++) {
        pdf_obj *a = pdf_array_get(ctx, annots, i);
        pdf_obj *type = pdf_dict_get(ctx, a, PDF_NAME(Subtype));
        if (!pdf_is_dict(ctx, a) || pdf_name_eq(ctx, type, PDF_NAME(Widget)) ||
            pdf_name_eq(ctx, type, PDF_NAME(Popup)))
            continue;
        p->held[2] = pdf_add_object_drop(ctx, p->doc, pdf_copy_dict(ctx, a));
        pdf_dict_put(ctx, p->held[2], PDF_NAME(P), dup);
        pdf_dict_del(ctx, p->held[2], PDF_NAME(Popup));
        pdf_dict_del(ctx, p->held[2], PDF_NAME(IRT));
        pdf_dict_del(ctx, p->held[2], PDF_NAME(StructParent));
        pdf_array_push(ctx, list, p->held[2]);
        pdf_drop_obj(ctx, p->held[2]);
        p->held[2] = NULL;
    }
}

/* dict[key] = v, where a direct dict or array is copied (its own object
 * in each page: MuPDF tracks a direct object's changes by its container),
 * an indirect one shared. */
static void put_copy(fz_context *ctx, pdf_obj *dict, pdf_obj *key, pdf_obj *v)
{
    if (!pdf_is_indirect(ctx, v) && (pdf_is_dict(ctx, v) || pdf_is_array(ctx, v)))
        pdf_dict_put_drop(ctx, dict, key, pdf_deep_copy_obj(ctx, v));
    else
        pdf_dict_put(ctx, dict, key, v);
}

/* A copy of page i, inserted after it. */
static void duplicate_one(pdfdoc *p, int i)
{
    fz_context *ctx = p->ctx;
    pdf_obj *page = pdf_lookup_page_obj(ctx, p->doc, i);
    p->held[0] = pdf_add_new_dict(ctx, p->doc, 12);
    pdf_obj *dup = p->held[0];
    for (int k = 0, n = pdf_dict_len(ctx, page); k < n; k++) {
        pdf_obj *key = pdf_dict_get_key(ctx, page, k);
        if (!skip_key(ctx, key)) put_copy(ctx, dup, key, pdf_dict_get_val(ctx, page, k));
    }
    static pdf_obj *const inherited[] = {PDF_NAME(Resources), PDF_NAME(MediaBox), PDF_NAME(CropBox),
                                         PDF_NAME(Rotate)};
    for (size_t k = 0; k < sizeof inherited / sizeof *inherited; k++) {
        pdf_obj *v = pdf_dict_get_inheritable(ctx, page, inherited[k]);
        if (v) put_copy(ctx, dup, inherited[k], v);
    }
    /* In an array, so that the filter writes a new stream for the copy
     * instead of rewriting the one both pages show. */
    pdf_obj *contents = pdf_dict_get(ctx, page, PDF_NAME(Contents));
    if (pdf_is_array(ctx, contents))
        pdf_dict_put_drop(ctx, dup, PDF_NAME(Contents), pdf_copy_array(ctx, contents));
    else if (contents)
        pdf_array_push(ctx, pdf_dict_put_array(ctx, dup, PDF_NAME(Contents), 1), contents);
    copy_annots(p, page, dup);
    pdf_insert_page(ctx, p->doc, i + 1, dup);
    pdf_drop_obj(ctx, p->held[0]);
    p->held[0] = NULL;
}

void pdfpage_duplicate(pdfdoc *p, void *unused)
{
    (void)unused;
    for (size_t i = p->npg; i-- > 0;) duplicate_one(p, (int)i);
}

/* ---- drawing --------------------------------------------------------------------------------- */

/* v with 3 decimals, whatever the locale. */
static void num(fy_buf *b, float v)
{
    if (!isfinite(v) || fabsf(v) > 1e9f) v = 0; /* never in a page; keeps lroundf defined */
    long m = lroundf(v * 1000);
    if (m < 0) {
        fy_buf_putc(b, '-');
        m = -m;
    }
    fy_buf_printf(b, "%ld", m / 1000);
    if (m % 1000) {
        char frac[5];
        int k = 3;
        long r = m % 1000;
        while (r % 10 == 0) r /= 10, k--;
        snprintf(frac, sizeof frac, ".%0*ld", k, r);
        fy_buf_put(b, frac, strlen(frac));
    }
    fy_buf_putc(b, ' ');
}

typedef struct pagework {
    size_t page;
    const pdfpara **para; /* those with a translation */
    size_t np;
    uint32_t *cp; /* their texts' code points, para k from off[k] to off[k + 1] */
    size_t *off;
    size_t ncp, capcp;
    pl_char *ch; /* measured */
    fy_buf content;
    fz_point *rm; /* the origins of the glyphs to remove, by x */
    size_t nrm;
    fz_matrix page_ctm;
    uint32_t fonts;
} pagework;

static void draw_para(pdfdoc *p, pagework *w, const pdfpara *pp, const pl_result *r)
{
    fy_buf *b = &w->content;
    /* q/Q: the text state (a synthetic bold's render mode) stays inside. */
    fy_buf_printf(b, "q BT\n");
    for (int c = 0; c < 3; c++) num(b, (float)((pp->color >> (16 - 8 * c)) & 0xFF) / 255.0f);
    fy_buf_printf(b, "rg\n");
    int font = -1;
    unsigned fake = 0;
    for (size_t i = 0; i < r->n; i++) {
        const pl_glyph *g = &r->g[i];
        if (g->font != font || g->run) {
            if (font >= 0) fy_buf_printf(b, "> Tj\n");
            if (g->font != font) {
                font = g->font;
                w->fonts |= 1u << font;
                fy_buf_printf(b, "/%s%d ", p->pg[w->page].res, font);
                num(b, r->size);
                fy_buf_printf(b, "Tf\n");
                unsigned f = pf_synthetic(p->fonts, font, pp->style);
                if ((f & PS_BOLD) && !(fake & PS_BOLD)) {
                    /* Synthetic bold: the outline stroked in the fill colour. */
                    for (int c = 0; c < 3; c++)
                        num(b, (float)((pp->color >> (16 - 8 * c)) & 0xFF) / 255.0f);
                    fy_buf_printf(b, "RG 2 Tr ");
                    num(b, r->size * 0.03f);
                    fy_buf_printf(b, "w\n");
                } else if (!(f & PS_BOLD) && (fake & PS_BOLD)) {
                    fy_buf_printf(b, "0 Tr\n");
                }
                fake = f;
            }
            /* Device space is y-down: the text matrix flips y back. */
            fy_buf_printf(b, "1 0 ");
            num(b, (fake & PS_ITALIC) ? 0.2f : 0);
            fy_buf_printf(b, "-1 ");
            num(b, g->x);
            num(b, g->y);
            fy_buf_printf(b, "Tm <");
        }
        fy_buf_printf(b, "%04X", (unsigned)g->gid & 0xFFFF);
    }
    if (font >= 0) fy_buf_printf(b, "> Tj\n");
    fy_buf_printf(b, "ET Q\n");
}

/* ---- the glyphs to remove -------------------------------------------------------------------- */

static int by_x(const void *a, const void *b)
{
    const fz_point *p = a, *q = b;
    return p->x < q->x ? -1 : p->x > q->x ? 1 : (p->y < q->y ? -1 : p->y > q->y);
}

/* Is o (device space) one of the origins to remove (within 0.05 pt)? */
static int removed(const pagework *w, fz_point o)
{
    const float tol = 0.05f;
    size_t lo = 0, hi = w->nrm;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->rm[mid].x < o.x - tol)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < w->nrm && w->rm[i].x <= o.x + tol; i++)
        if (fabsf(w->rm[i].y - o.y) <= tol) return 1;
    return 0;
}

static int text_filter(fz_context *ctx, void *opaque, int *ucs, int n, fz_matrix trm, fz_matrix ctm,
                       fz_rect bbox)
{
    (void)ctx, (void)ucs, (void)n, (void)bbox;
    const pagework *w = opaque;
    fz_point o = fz_transform_point(fz_make_point(trm.e, trm.f), ctm);
    return removed(w, fz_transform_point(o, w->page_ctm));
}

static void end_page(fz_context *ctx, fz_buffer *buf, void *opaque)
{
    const pagework *w = opaque;
    fz_append_data(ctx, buf, w->content.p, w->content.n);
}

/* ---- one page -------------------------------------------------------------------------------- */

static void measure(pdfdoc *p, void *arg)
{
    pagework *w = arg;
    for (size_t k = 0; k < w->np; k++)
        for (size_t i = w->off[k]; i < w->off[k + 1]; i++)
            pf_glyph(p->ctx, p->fonts, w->para[k]->style, w->cp[i], &w->ch[i]);
}

/* A resource-name prefix the page's own fonts do not start with. */
static void pick_prefix(pdfdoc *p, pdf_obj *page, pdfpage *pg)
{
    fz_context *ctx = p->ctx;
    pdf_obj *fonts =
        pdf_dict_get(ctx, pdf_dict_get_inheritable(ctx, page, PDF_NAME(Resources)), PDF_NAME(Font));
    for (int attempt = 0;; attempt++) {
        snprintf(pg->res, sizeof pg->res, attempt ? "FyT%dF" : "FyTF", attempt);
        size_t len = strlen(pg->res);
        int clash = 0;
        for (int k = 0, n = pdf_dict_len(ctx, fonts); k < n && !clash; k++)
            clash = !strncmp(pdf_to_name(ctx, pdf_dict_get_key(ctx, fonts, k)), pg->res, len);
        if (!clash) return;
    }
}

static void prepare(pdfdoc *p, void *arg)
{
    pagework *w = arg;
    pdfpage *pg = &p->pg[w->page];
    pdf_obj *page = pdf_lookup_page_obj(p->ctx, p->doc, pg->at);
    pick_prefix(p, page, pg);
    pdf_page_obj_transform(p->ctx, page, NULL, &w->page_ctm);
}

static void rewrite(pdfdoc *p, void *arg)
{
    fz_context *ctx = p->ctx;
    pagework *w = arg;
    p->page = pdf_load_page(ctx, p->doc, p->pg[w->page].at);
    /* A fresh stream for this page even when its content stream is shared. */
    pdf_obj *contents = pdf_dict_get(ctx, p->page->obj, PDF_NAME(Contents));
    if (pdf_is_stream(ctx, contents))
        pdf_array_push(ctx, pdf_dict_put_array(ctx, p->page->obj, PDF_NAME(Contents), 1), contents);
    pdf_filter_options o = {0};
    o.opaque = w;
    o.text_filter = text_filter;
    o.end_page = end_page;
    o.recurse = 1;
    o.instance_forms = 1;
    o.sanitize = 1;
    pdf_filter_page_contents(ctx, p->doc, p->page, &o);
}

/* Decodes the translations of the page's paragraphs into w->cp, white
 * space collapsed to single spaces, control characters dropped. */
static int collect(fy_document *d, pdfdoc *p, pagework *w)
{
    const pdfpage *pg = &p->pg[w->page];
    w->para = calloc(pg->np ? pg->np : 1, sizeof *w->para);
    w->off = calloc(pg->np + 1, sizeof *w->off);
    if (!w->para || !w->off) return -1;
    for (size_t k = pg->p0; k < pg->p0 + pg->np; k++) {
        const unit *u = &d->u[p->para[k].unit];
        if (!u->out) continue;
        w->off[w->np] = w->ncp;
        w->para[w->np++] = &p->para[k];
        int space = 1;
        for (size_t i = 0, n; i < u->out_len; i += n) {
            uint32_t c = fy_utf8_get(u->out, u->out_len, i, &n);
            if (fy_cp_is_space(c) && c != 0x3000) {
                if (space) continue;
                c = ' ';
            } else if (c < 0x20 || (c >= 0x7F && c < 0xA0) || c == 0xFEFF || c == 0x200B) {
                continue;
            }
            space = c == ' ';
            if (fy_vec_reserve((void **)&w->cp, &w->capcp, w->ncp + 1, sizeof *w->cp)) return -1;
            w->cp[w->ncp++] = c;
        }
        while (w->ncp > w->off[w->np - 1] && w->cp[w->ncp - 1] == ' ') w->ncp--;
    }
    w->off[w->np] = w->ncp;
    size_t total = 0;
    for (size_t k = 0; k < w->np; k++) total += w->para[k]->ng;
    w->rm = malloc((total ? total : 1) * sizeof *w->rm);
    w->ch = malloc((w->ncp ? w->ncp : 1) * sizeof *w->ch);
    if (!w->rm || !w->ch) return -1;
    for (size_t k = 0; k < w->np; k++) {
        memcpy(w->rm + w->nrm, p->orig + w->para[k]->g0, w->para[k]->ng * sizeof *w->rm);
        w->nrm += w->para[k]->ng;
    }
    qsort(w->rm, w->nrm, sizeof *w->rm, by_x);
    return 0;
}

/* Lays out every paragraph and writes the drawing into w->content. */
static int draw(fy_document *d, pdfdoc *p, pagework *w, fy_error *err)
{
    fy_buf *b = &w->content;
    /* The inverse page transform: device space (y down) to the page's space. */
    fz_matrix m = fz_invert_matrix(w->page_ctm);
    fy_buf_printf(b, "\nq\n");
    num(b, m.a), num(b, m.b), num(b, m.c), num(b, m.d), num(b, m.e), num(b, m.f);
    fy_buf_printf(b, "cm\n");
    size_t tight = 0;
    for (size_t k = 0; k < w->np; k++) {
        pl_result r = {0};
        const pdfpara *pp = w->para[k];
        float min_size = fminf(pp->size, 2.0f);
        if (pl_layout(w->ch + w->off[k], w->off[k + 1] - w->off[k], pp, min_size, &r, err))
            return err->code;
        tight += !r.fits;
        draw_para(p, w, pp, &r);
        pl_result_free(&r);
    }
    fy_buf_printf(b, "Q\n");
    if (b->oom) return fy_err(err, FY_ENOMEM, "out of memory");
    if (tight)
        doc_note(d, "page %zu: %zu paragraph%s too long for %s box even at 2 pt; it runs past it",
                 w->page + 1, tight, tight > 1 ? "s are" : " is", tight > 1 ? "their" : "its");
    return 0;
}

int pdfpage_write(fy_document *d, pdfdoc *p, size_t page, int at, fy_error *err)
{
    pdfpage *pg = &p->pg[page];
    pg->at = -1;
    pagework w = {.page = page};
    int rc = collect(d, p, &w) ? fy_err(err, FY_ENOMEM, "out of memory") : 0;
    if (!rc && w.np) {
        pg->at = at;
        rc = pdf_guard(p, prepare, &w, err);
        if (!rc) rc = pdf_guard(p, measure, &w, err);
        if (!rc) rc = draw(d, p, &w, err);
        if (!rc) rc = pdf_guard(p, rewrite, &w, err);
        pg->fonts = w.fonts;
        if (rc) pg->at = -1;
    }
    free(w.para);
    free(w.off);
    free(w.cp);
    free(w.ch);
    free(w.rm);
    fy_buf_free(&w.content);
    return rc;
}

void pdfpage_fonts(pdfdoc *p, void *unused)
{
    (void)unused;
    fz_context *ctx = p->ctx;
    for (size_t i = 0; i < p->npg; i++) {
        const pdfpage *pg = &p->pg[i];
        if (pg->at < 0 || !pg->fonts) continue;
        pdf_obj *page = pdf_lookup_page_obj(ctx, p->doc, pg->at);
        pdf_obj *res = pdf_dict_get(ctx, page, PDF_NAME(Resources));
        if (!res) res = pdf_dict_put_dict(ctx, page, PDF_NAME(Resources), 2);
        pdf_obj *fonts = pdf_dict_get(ctx, res, PDF_NAME(Font));
        if (!fonts) fonts = pdf_dict_put_dict(ctx, res, PDF_NAME(Font), 4);
        for (int k = 0; k < 32; k++) {
            if (!(pg->fonts & (1u << k))) continue;
            char name[40];
            snprintf(name, sizeof name, "%s%d", pg->res, k);
            pdf_dict_puts(ctx, fonts, name, pf_object(p->fonts, k));
        }
    }
}
