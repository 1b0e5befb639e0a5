/* pdf_internal.h - the pieces of the PDF format: doc_pdf.c (the document:
 * MuPDF's context, reading, writing), pdf_para.c (paragraphs from the
 * text MuPDF extracts), pdf_layout.c (a translation broken into lines and
 * fitted into its paragraph's box), pdf_font.c (fonts chosen, subsetted,
 * embedded) and pdf_page.c (a page rewritten: the original text of its
 * translated paragraphs removed, the translations drawn). Not API.
 *
 * Coordinates are MuPDF's device space of the page as displayed: points,
 * origin at the top left, y downwards, the page's /Rotate applied.
 *
 * MuPDF reports errors with longjmp (fz_try/fz_catch). Every call into it
 * runs inside pdf_guard, and whatever must be released after an error is
 * held in the pdfdoc (never in a local), so that a jump leaks nothing.
 */
#ifndef FY_TEXT_PDF_INTERNAL_H
#define FY_TEXT_PDF_INTERNAL_H

#include <mupdf/fitz.h>
#include <mupdf/pdf.h>
#include <stddef.h>
#include <stdint.h>

#include "text/document_internal.h"
#include "util/error.h"

/* ---- paragraphs (pdf_para.c) ---------------------------------------------- */

enum { PS_BOLD = 1, PS_ITALIC = 2, PS_SERIF = 4, PS_MONO = 8 };
enum { PA_LEFT, PA_CENTER, PA_JUSTIFY };

/* A paragraph of a page that is a unit: where its text was and how it
 * looked, for setting its translation in the same place. */
typedef struct pdfpara {
    size_t page;    /* 0-based */
    fz_rect box;    /* the union of its lines */
    float size;     /* the font size most of its characters have */
    float pitch;    /* baseline to baseline (one line: 1.2 x size) */
    float base;     /* first baseline - box.y0 */
    float indent;   /* the first line starts this much right of box.x0 */
    int lines;      /* lines it had */
    int color;      /* 0xRRGGBB of most of its characters */
    unsigned style; /* PS_* of most of its characters */
    int align;      /* PA_* */
    size_t unit;
    size_t g0, ng; /* the origins of its glyphs: pdfdoc.orig[g0 .. g0 + ng) */
} pdfpara;

typedef struct pdfpage {
    size_t p0, np; /* its paragraphs: pdfdoc.para[p0 .. p0 + np) */
    int text;      /* it has visible text (translated or not) */
    /* Once rewritten (pdf_page.c): */
    int at;         /* its index in the written document; -1: untouched */
    uint32_t fonts; /* the faces its drawing uses (bit k: font k) */
    char res[16];   /* the prefix of their resource names */
} pdfpage;

/* ---- the document (doc_pdf.c) ----------------------------------------------- */

typedef struct pdfmem {
    size_t used, peak, limit;
    int over; /* an allocation was refused for the limit */
} pdfmem;

typedef struct pdffonts pdffonts;

typedef struct pdfdoc {
    fz_context *ctx;
    pdfmem mem;
    fz_buffer *bytes; /* the file, which the document reads from */
    fz_stream *stm;
    pdf_document *doc;
    pdfpage *pg;
    size_t npg;
    pdfpara *para;
    size_t npara, cappara;
    fz_point *orig; /* glyph origins of the paragraphs, in page order */
    size_t norig, caporig;
    pdffonts *fonts;
    /* Held across MuPDF calls that may jump (released by pdf_guard's
     * caller or by the pdfdoc's free). */
    pdf_page *page;
    fz_stext_page *st;
    fz_device *dev, *inner;
    fz_buffer *out;
    fz_output *wr;
    int had_id;       /* the file came with a permanent id (/ID's first string) */
    pdf_obj *held[3]; /* objects being built */
    fy_error why;     /* our own error raised inside a guard (pdf_raise) */
} pdfdoc;

/* Runs fn(p, arg) with MuPDF errors caught: 0, or the error in err
 * (pdf_raise's, else FY_ELIMIT for the memory limit, FY_ENOMEM, FY_EFORMAT
 * "the PDF is damaged: ..." for the rest). */
int pdf_guard(pdfdoc *p, void (*fn)(pdfdoc *p, void *arg), void *arg, fy_error *err);

/* Inside a guard: fails it with our own code and message (never returns). */
void pdf_raise(pdfdoc *p, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)))
__attribute__((noreturn));

/* Finds the paragraphs of page (its text in p->st), adds those to be
 * translated as units of d, records them in p->para and the page's entry.
 * No MuPDF call that can jump. 0, FY_ELIMIT, FY_ENOMEM. */
int pdfpara_page(fy_document *d, pdfdoc *p, size_t page, fy_error *err);

/* ---- layout (pdf_layout.c) ----------------------------------------------------- */

/* A character of a translation with the glyph that shows it. */
typedef struct pl_char {
    uint32_t cp;
    int font, gid;
    float adv; /* advance, in ems */
} pl_char;

/* A glyph placed on the page. */
typedef struct pl_glyph {
    float x, y; /* origin: pen position on the baseline */
    int font, gid;
    int run; /* starts a new run: the previous glyph's advance does not lead here */
} pl_glyph;

typedef struct pl_result {
    pl_glyph *g;
    size_t n, cap;
    float size; /* the font size chosen */
    int lines;
    int fits; /* 0: did not fit even at the smallest size (set at it) */
} pl_result;

/* Breaks c[0..n) into lines (at spaces; between CJK characters, except
 * before closing and after opening punctuation; inside a word only when
 * it is wider than a line, with no hyphen added) and fits them into para's
 * box: the largest size <= para->size at which the lines fit the box's
 * width and its lines (baselines where the original's were, scaled), not
 * below min_size. Appends the glyphs to r (spaces at line ends dropped).
 * 0 or FY_ENOMEM. */
int pl_layout(const pl_char *c, size_t n, const pdfpara *para, float min_size, pl_result *r,
              fy_error *err);
void pl_result_free(pl_result *r);

/* Can a line break come between a and b (no space between them)? */
int pl_break_between(uint32_t a, uint32_t b);

/* ---- fonts (pdf_font.c) ---------------------------------------------------------- */

/* The fonts for a target language: a face per style of its script, and
 * fallbacks for characters those lack. Allocated empty (no MuPDF call). */
pdffonts *pf_new(void);
/* Inside a guard: chooses the faces for target ("" = Latin) and checks
 * that they cover the language; pdf_raise(FY_EUNSUPPORTED) when the
 * language needs shaping or right-to-left layout, or no installed font
 * covers it. */
void pf_choose(fz_context *ctx, pdffonts *f, const char *target);
/* Inside a guard: the face, glyph and advance (ems) for cp in style; a
 * character no face has gets the primary face's .notdef (gid 0) and is
 * counted. Records the glyph as used (for the subset). */
void pf_glyph(fz_context *ctx, pdffonts *f, unsigned style, uint32_t cp, pl_char *out);
/* Style bits font lacks and that are drawn synthetically (bold: stroked
 * outline, italic: slanted). */
unsigned pf_synthetic(const pdffonts *f, int font, unsigned style);
/* Characters that no face had. */
size_t pf_missing(const pdffonts *f);
/* The family name of font (for messages). */
const char *pf_name(const pdffonts *f, int font);
/* Inside a guard: subsets every used face to its glyphs (harfbuzz) and
 * adds it to doc as a Type0/Identity-H font; pf_object gives it. */
void pf_embed(fz_context *ctx, pdffonts *f, pdf_document *doc);
pdf_obj *pf_object(const pdffonts *f, int font);
/* Were the faces chosen (pf_choose succeeded)? */
int pf_ready(const pdffonts *f);
void pf_free(fz_context *ctx, pdffonts *f);

/* ---- pages (pdf_page.c) --------------------------------------------------------- */

/* Inside a guard: makes every page of p->doc followed by a copy of itself
 * (bilingual output), the copy sharing the original's content and
 * resources, with its own links. */
void pdfpage_duplicate(pdfdoc *p, void *unused);

/* Sets the translations of page (0-based, of the source) into the page
 * at index at of p->doc: lays them out, removes their original glyphs,
 * draws them. 0 or an error. Appends a note to d for paragraphs that did
 * not fit. */
int pdfpage_write(fy_document *d, pdfdoc *p, size_t page, int at, fy_error *err);

/* Inside a guard, after pf_embed: gives every rewritten page the font
 * resources its drawing uses. */
void pdfpage_fonts(pdfdoc *p, void *unused);

#endif
