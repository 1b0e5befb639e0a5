/* document_internal.h - what the document format modules share: the unit
 * table, each format's operations, the markup of HTML units, the zip and
 * XML helpers. Not API (document.h is).
 */
#ifndef FY_TEXT_DOCUMENT_INTERNAL_H
#define FY_TEXT_DOCUMENT_INTERNAL_H

#include <stddef.h>

#include "text/document.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/lang.h"

/* ---- units ------------------------------------------------------------- */

typedef struct unit {
    char *text; /* source, NUL-terminated */
    size_t len;
    int html;  /* an HTML fragment (markup codec, or raw HTML) */
    char *out; /* translation, NULL until set */
    size_t out_len;
    size_t page; /* 1-based, 0 when the format has no pages */
} unit;

typedef struct doc_ops {
    /* Reads data into d's units and d->impl. */
    int (*read)(fy_document *d, const char *data, size_t len, fy_error *err);
    /* Checks a translation of unit i before it is stored (NULL: any). */
    int (*check)(fy_document *d, size_t i, const char *text, size_t len, fy_error *err);
    /* Appends the document with translations to out. */
    int (*write)(fy_document *d, fy_buf *out, fy_error *err);
    void (*free)(void *impl);
    /* Checks the target language d->target just set (NULL: any). */
    int (*target)(fy_document *d, fy_error *err);
    int bilingual; /* has a bilingual output (d->bilingual) */
} doc_ops;

enum { DOC_MAX_NOTES = 64 };

struct fy_document {
    int fmt;
    const doc_ops *ops;
    void *impl;
    fy_doc_limits lim;
    unit *u;
    size_t n, cap;
    size_t chars;
    size_t pages;             /* paged formats */
    char target[FY_LANG_MAX]; /* the translations' language, "" until set */
    int bilingual;            /* fy_document_set_bilingual */
    char *notes[DOC_MAX_NOTES];
    size_t nnotes;
    fy_doc_progress progress; /* fy_document_on_write */
    void *progress_user;
};

/* Adds a unit (text copied); its index in *index if non-NULL. Counts its
 * characters against the limits. 0, FY_ELIMIT or FY_ENOMEM. */
int doc_unit_add(fy_document *d, const char *text, size_t len, int html, size_t *index,
                 fy_error *err);

/* Unit i as it is to be written: the translation if set, else the source. */
const char *doc_unit_out(const fy_document *d, size_t i, size_t *len);

/* Does s[0..len) hold anything but white space? */
int doc_has_text(const char *s, size_t len);

/* Adds a note (fy_document_note); beyond DOC_MAX_NOTES notes, or out of
 * memory, it is dropped (notes inform, they never fail a document). */
void doc_note(fy_document *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The operations of each format. */
extern const doc_ops doc_txt_ops, doc_md_ops, doc_html_ops, doc_srt_ops, doc_vtt_ops, doc_docx_ops,
    doc_odt_ops, doc_pptx_ops, doc_epub_ops, doc_pdf_ops;

/* ---- markup of HTML units (doc_markup.c) ---------------------------------
 *
 * A unit with inline formatting is written as an HTML fragment with four
 * elements, each numbering (data-k) the piece of the source it stands for:
 *   <span data-k="K">...</span>  formatting around words (a run, a span,
 *                                **bold**, a link): its words are translated
 *   <code data-k="K">text</code> text sent as it is and put back as it was
 *                                (inline code, an escape, an autolink)
 *   <img data-k="K"/>            something with no words (an image, a
 *                                bookmark, a footnote mark): kept in place
 *   <br data-k="K"/>             a break between sentences (line break, tab)
 * The pipeline keeps tags in their order, so the translation has the same
 * elements; mk_decode reads it back with libxml2. */
enum { MK_SPAN, MK_CODE, MK_IMG, MK_BR };

/* Appends text, escaping & < > (invalid UTF-8 is the caller's concern). */
void mk_text(fy_buf *b, const char *s, size_t n);
void mk_open(fy_buf *b, size_t k);
void mk_close(fy_buf *b);
/* An object of kind MK_CODE (visible text s[0..n)), MK_IMG or MK_BR. */
void mk_object(fy_buf *b, int kind, size_t k, const char *s, size_t n);

typedef struct mk_sink {
    int (*text)(void *ctx, const char *s, size_t n);
    int (*open)(void *ctx, size_t k);
    int (*close)(void *ctx, size_t k);
    int (*object)(void *ctx, int kind, size_t k);
    void *ctx;
    size_t nk; /* every k must be below this */
} mk_sink;

/* Reads a translated fragment s[0..len) and calls the sink for its text,
 * elements and objects in order; control characters XML cannot hold (C0
 * but tab, LF, CR) are dropped. Returns 0, a sink's error, FY_EINVAL when
 * it is not such a fragment (an unknown element, a bad or out-of-range
 * data-k) or FY_ENOMEM. */
int mk_decode(const char *s, size_t len, const mk_sink *sink, fy_error *err);

/* Checks that s[0..len) decodes (doc_ops.check for markup units). */
int mk_check(const char *s, size_t len, size_t nk, fy_error *err);

/* ---- text documents (doc_text.c) -----------------------------------------
 *
 * txt, md, html, srt and vtt are the source bytes cut into pieces: literal
 * slices written as they are, and units. A markup unit keeps, per data-k,
 * the source slices it stands for: a span's opening and closing
 * delimiters (** and **, [ and ](url)), an object's verbatim text. */
enum { TP_LIT, TP_UNIT };

typedef struct tslot {
    int kind;       /* MK_SPAN, MK_CODE, MK_IMG, MK_BR */
    size_t a, alen; /* opening delimiter, or the object's text */
    size_t b, blen; /* closing delimiter (spans) */
} tslot;

typedef struct tpiece {
    int kind;
    size_t off, len;    /* TP_LIT: source slice */
    size_t unit;        /* TP_UNIT */
    size_t s0, ns;      /* its slots (markup units) */
    size_t cont, ncont; /* md: the prefix written after each line break */
    int cue;            /* subtitles: no blank lines, escaping */
} tpiece;

typedef struct textdoc {
    char *src;
    size_t len;
    tpiece *p;
    size_t np, capp;
    tslot *sl;
    size_t nsl, capsl;
    int markup; /* units are markup (md, subtitles), not plain or raw HTML */
    int escape; /* vtt: & < > in translations are escaped */
} textdoc;

/* Makes d->impl a textdoc holding a copy of data. */
int textdoc_new(fy_document *d, const char *data, size_t len, fy_error *err);
/* Refuses characters that XML cannot carry (C0 controls but tab, LF and CR;
 * U+FFFE, U+FFFF): a markup unit is read back as XML (doc_markup.c). */
int textdoc_xml_chars(const char *s, size_t len, fy_error *err);
int textdoc_lit(textdoc *t, size_t off, size_t len, fy_error *err);
/* A unit of text (copied into the unit table) with slots s0.. (markup). */
int textdoc_unit(fy_document *d, const char *text, size_t len, int html, size_t s0, fy_error *err);
size_t textdoc_slot(textdoc *t, int kind, size_t a, size_t alen, size_t b, size_t blen);
/* Writes the pieces; markup units decoded into source syntax. */
int textdoc_write(fy_document *d, fy_buf *out, fy_error *err);
int textdoc_check(fy_document *d, size_t i, const char *text, size_t len, fy_error *err);
void textdoc_free(void *impl);

/* ---- zip archives (doc_zip.c, libzip) ------------------------------------ */

typedef struct zipdoc zipdoc;

/* Opens data[0..len) as a zip archive held in memory (data is copied) and
 * checks every entry against lim: count, declared sizes, compression ratio,
 * encryption, safe and unique names. NULL with err. */
zipdoc *zipdoc_open(const char *data, size_t len, const fy_doc_limits *lim, const char *what,
                    fy_error *err);
void zipdoc_free(zipdoc *z);
size_t zipdoc_count(const zipdoc *z);
const char *zipdoc_name(const zipdoc *z, size_t i);
/* Index of the entry named name, or -1. */
long zipdoc_find(const zipdoc *z, const char *name);
/* Entry i decompressed (at most lim->max_part bytes, and never more than
 * its declared size): malloc'd, NUL-terminated, *len its length. */
char *zipdoc_read(zipdoc *z, size_t i, size_t *len, fy_error *err);
/* Replaces entry i's content with data[0..len) (taken: freed by the
 * zipdoc) when the archive is next written. */
int zipdoc_replace(zipdoc *z, size_t i, char *data, size_t len, fy_error *err);
/* The archive with the replacements, every other entry copied as it was
 * (compressed bytes included); appended to out. Once: the zipdoc can only
 * be freed afterwards. */
int zipdoc_write(zipdoc *z, fy_buf *out, fy_error *err);

/* ---- XML (doc_xml.c, libxml2) -------------------------------------------- */

/* One-time libxml2 set-up (thread-safe; every other call does it too):
 * no external entity can be loaded, from a file or the network. */
void docxml_init(void);

/* Parses an XML part named name (for messages) safely: no network, no DTD
 * loading, no entities (a DOCTYPE declaring one is FY_EFORMAT), depth at
 * most max_depth (FY_ELIMIT). Returns an xmlDocPtr (as void *) or NULL. */
void *docxml_parse(const char *data, size_t len, const char *name, int max_depth, fy_error *err);
/* Serialises doc (UTF-8, its XML declaration kept) into a malloc'd buffer. */
char *docxml_write(void *doc, size_t *len, fy_error *err);
void docxml_free(void *doc);

/* A paragraph model over an XML tree, shared by docx, odt, pptx and epub:
 * each unit stands for a run of consecutive children of one element; its
 * inline elements (runs, spans, links) become MK_SPAN, the rest objects
 * kept as nodes. A format says how to classify nodes and how text goes
 * back (doc_office.c, doc_epub.c). Defined in doc_xml.c. */
typedef struct xmlpara xmlpara;
typedef struct xml_style xml_style;

/* What a child of a paragraph is (xml_style.classify). */
enum {
    XK_TEXT,    /* a text node (or CDATA) */
    XK_SPACE,   /* an element standing for spaces (ODF text:s): its text is spaces */
    XK_SPAN,    /* an inline element whose children are part of the paragraph */
    XK_RUN,     /* OOXML run: properties + text elements + run objects */
    XK_OBJECT,  /* kept as it is, no words (bookmarks, images, notes) */
    XK_VISIBLE, /* kept as it is, its text shown to the engine (code) */
    XK_BREAK,   /* kept as it is, ends a sentence (line break, tab) */
    XK_FIXED,   /* paragraph properties: not part of the unit, stays in place */
};

struct xml_style {
    /* The kind of node n, a child of a paragraph (or of a span). */
    int (*classify)(const xml_style *st, void *node);
    /* Run children (OOXML): 1 for a text element (w:t, a:t), 2 for a
     * break (w:tab, w:br, w:cr), 3 for the properties (w:rPr), 0 else. */
    int (*run_child)(const xml_style *st, void *node);
    /* Names for new OOXML nodes: run, properties and text elements. NULL run: text goes
     * into text nodes (odt, xhtml). */
    const char *run, *props, *text;
    int preserve_space; /* set xml:space="preserve" on new text elements */
    int odf_spaces;     /* write runs of spaces as text:s (ODF) */
};

/* Units of the paragraph elements under root: is_para(node) says whether an
 * element is one (its children, minus XK_FIXED ones, make one unit);
 * otherwise the walk goes into its children (and into objects, which may
 * hold paragraphs of their own: text boxes, notes). block_inline: any
 * element that is not a paragraph but has inline children with text also
 * makes units of each run of such children (XHTML). Appends to list. */
typedef struct xmlparas {
    xmlpara **v;
    size_t n, cap;
} xmlparas;

int xmlpara_collect(fy_document *d, void *root, const xml_style *st,
                    int (*is_para)(const xml_style *st, void *node), int block_inline,
                    xmlparas *list, fy_error *err);
/* Puts the translation of each paragraph of list back into the tree. */
int xmlpara_apply(fy_document *d, xmlparas *list, fy_error *err);
void xmlparas_free(xmlparas *list);
/* The number of data-k values of the j-th paragraph of list (for checks). */
size_t xmlpara_slots(const xmlparas *list, size_t j);

/* ---- archives of XML parts (doc_office.c) ----------------------------------
 * docx, odt, pptx and epub: a zipdoc and the parts chosen for translation;
 * a part is rewritten only when one of its units was translated. */
int zipxml_open(fy_document *d, const char *data, size_t len, fy_error *err);
zipdoc *zipxml_zip(fy_document *d);
/* Parses entry (an XML part) and collects its paragraphs. */
int zipxml_add_part(fy_document *d, size_t entry, const xml_style *st,
                    int (*is_para)(const xml_style *st, void *node), int block_inline,
                    fy_error *err);
/* Reads an entry by name for a format's own use (epub's container and
 * OPF): parsed safely; NULL with err. */
void *zipxml_parse_entry(fy_document *d, const char *name, fy_error *err);
int zipxml_check(fy_document *d, size_t i, const char *text, size_t len, fy_error *err);
int zipxml_write(fy_document *d, fy_buf *out, fy_error *err);
void zipxml_free(void *impl);

/* Is node an element named local in namespace ns (a URI; NULL: none)? */
int docxml_is(const void *node, const char *ns, const char *local);

#endif
