/* document.h - whole documents: their formats, the units of text in them
 * that are translated, and writing them back with everything else kept.
 *
 *     int f = fy_docfmt_detect("report.docx", content_type, data, len, &err);
 *     fy_doc_limits lim;
 *     fy_doc_limits_default(&lim);
 *     fy_document *d = fy_document_read(f, data, len, &lim, &err);
 *     for (i = 0; i < fy_document_units(d); i++) {
 *         text = fy_document_unit(d, i, &n, &html);      -> translate (html: markup kept)
 *         fy_document_set(d, i, translation, m, &err);
 *     }
 *     fy_document_write(d, &out, &out_len, &err);
 *     fy_document_free(d);
 *
 * A unit is a paragraph-sized piece of text: a block of plain text, a
 * chunk of HTML, a Markdown block, a subtitle cue, a paragraph of an office
 * document or an e-book. Units with html = 1 are HTML fragments: their
 * inline markup (bold, links, runs with their own formatting, images,
 * footnote marks) is written as tags the translation pipeline keeps in
 * place (text/segment.h), and fy_document_set puts the formatting back
 * around the translated words. Everything that is not in a unit (code
 * blocks, timings, numbering, URLs, styles, every other file of an archive)
 * is written back exactly as it was.
 *
 * Formats: txt, md, html, srt, vtt, docx, odt, pptx, epub, pdf. docx, odt,
 * pptx and epub are zip archives of XML (libzip, libxml2): only the XML parts with text
 * (docx: word/document.xml, headers, footers, foot- and endnotes; odt:
 * content.xml; pptx: ppt/slides/slideN.xml; epub: the XHTML documents the
 * OPF manifest lists) are parsed and rewritten; every other entry is copied
 * without being decompressed. Everything happens in memory: no entry name
 * is ever used as a path, XML is parsed with no network, no DTD loading, no
 * external or internal entities (a document that declares entities is
 * refused) and bounded depth.
 *
 * PDF (MuPDF) is laid out, not marked up: its units are the paragraphs of
 * text found on each page (plain text, never HTML), and writing it sets
 * each translation back into its paragraph's box on the page, in a font
 * that covers the target language (fy_document_set_target), with the
 * original text of that paragraph removed and everything else (images,
 * drawings, links, annotations, text that is not translated) left as it
 * was. fy_document_set_bilingual makes the output each original page
 * followed by its translation. Pages with no text (scans) are kept and
 * reported as notes (fy_document_note).
 *
 * Units are a pure function of the file's bytes and the limits: reading
 * the same file again gives the same units in the same order, so a job may
 * keep the translations it has by unit index and set them again after a
 * restart (checkpoints), and report progress by unit or by page
 * (fy_document_unit_page).
 *
 * Errors (fy_error codes) and what the server makes of them:
 *   FY_EUNSUPPORTED  415  not a supported format, content that is not what
 *                         the name says, an encrypted archive, a compression
 *                         method libzip lacks, a PDF that needs a password
 *                         or forbids changes, a target language PDF output
 *                         cannot be written in (fy_document_set_target)
 *   FY_EFORMAT       400  a corrupt archive, XML part or PDF, unsafe entry
 *                         names (../, absolute, backslashes), DTD entities
 *   FY_ELIMIT        413  over one of fy_doc_limits (the message names it)
 *   FY_ENOMEM        500
 * A document is used by one thread at a time; different documents may be
 * read and written in parallel.
 */
#ifndef FY_TEXT_DOCUMENT_H
#define FY_TEXT_DOCUMENT_H

#include <stddef.h>

#include "util/error.h"

typedef enum fy_docfmt {
    FY_DOC_TXT,
    FY_DOC_MD,
    FY_DOC_HTML,
    FY_DOC_SRT,
    FY_DOC_VTT,
    FY_DOC_DOCX,
    FY_DOC_ODT,
    FY_DOC_PPTX,
    FY_DOC_EPUB,
    FY_DOC_PDF,
    FY_DOC_NFORMATS
} fy_docfmt;

typedef struct fy_docfmt_info {
    const char *name;       /* "docx": the metrics label, and the extension without the dot */
    const char *extensions; /* every extension it is known by: ".md .markdown" */
    const char *mime;       /* the Content-Type of its files */
    int zip;                /* a zip archive */
} fy_docfmt_info;

/* The description of format f (static storage), or NULL out of range. */
const fy_docfmt_info *fy_docfmt_get(int f);

/* The supported extensions as one string (".txt, .md, ..."), for messages. */
const char *fy_docfmt_list(void);

/* The format of a file named filename (may be NULL or have no directory
 * part) with the given Content-Type (may be NULL; a generic one such as
 * application/octet-stream is ignored) and content data[0..len): the
 * extension decides, else the Content-Type, else the content (zip archives
 * by their mimetype entry or main part, HTML by its first tag, WebVTT and
 * SRT by their first lines, else text when it is valid UTF-8). When the
 * extension or type names a format the content contradicts (a .docx that
 * is not a zip archive, a .txt that is not UTF-8, a zip without the
 * format's main part), FY_EUNSUPPORTED saying so; FY_EUNSUPPORTED listing
 * the supported extensions for any other type. Returns the fy_docfmt. */
int fy_docfmt_detect(const char *filename, const char *content_type, const char *data, size_t len,
                     fy_error *err);

/* Limits on what a document may make us do; over one -> FY_ELIMIT. */
typedef struct fy_doc_limits {
    size_t max_bytes;    /* the file itself */
    size_t max_entries;  /* entries of a zip archive */
    size_t max_unpacked; /* the sizes of all entries together, as declared */
    size_t max_part;     /* one XML part decompressed */
    unsigned max_ratio;  /* uncompressed / compressed of an entry over 1 MiB */
    int max_depth;       /* element nesting of an XML part */
    size_t max_units;    /* units (paragraphs, cues, cells) */
    size_t max_chars;    /* characters of text to translate in all units */
    size_t max_pages;    /* pages of a PDF */
    size_t max_memory;   /* what MuPDF may allocate for one PDF (bytes) */
} fy_doc_limits;

/* 20 MiB files, 10,000 entries, 256 MiB unpacked, 64 MiB per XML part,
 * ratio 200, depth 256, 200,000 units, 1,000,000 characters, 2,000 pages,
 * 512 MiB of memory for a PDF. */
void fy_doc_limits_default(fy_doc_limits *l);

typedef struct fy_document fy_document;

/* Reads data[0..len) (copied as far as needed; the caller may free it
 * afterwards) as format fmt. lim NULL: the defaults. Returns the document
 * or NULL with err (see the codes above; messages name the part and the
 * limit, e.g. "word/document.xml: XML nested deeper than 256 levels"). */
fy_document *fy_document_read(int fmt, const char *data, size_t len, const fy_doc_limits *lim,
                              fy_error *err);

/* Frees d; NULL is harmless. */
void fy_document_free(fy_document *d);

/* The format d was read as. */
int fy_document_format(const fy_document *d);

/* Units, in document order. */
size_t fy_document_units(const fy_document *d);

/* Unit i (NUL-terminated UTF-8, borrowed until fy_document_free): *len its
 * length, *html 1 when it is an HTML fragment to translate with markup
 * kept (pipeline option html), 0 for plain text. NULL if i is out of range. */
const char *fy_document_unit(const fy_document *d, size_t i, size_t *len, int *html);

/* Characters of text to translate in all units (markup not counted). */
size_t fy_document_chars(const fy_document *d);

/* Pages of a paged format (PDF), 0 for the others; and the page (1-based)
 * unit i is on, 0 when the format has no pages or i is out of range. */
size_t fy_document_pages(const fy_document *d);
size_t fy_document_unit_page(const fy_document *d, size_t i);

/* What the reader or the writer has to tell about the document beyond an
 * error: "page 4 has no text layer (a scanned page?); kept as it is",
 * "the file was damaged and has been repaired". Notes, in the order they
 * arose (read, then write); note i is NUL-terminated, borrowed until
 * fy_document_free; NULL out of range. */
size_t fy_document_notes(const fy_document *d);
const char *fy_document_note(const fy_document *d, size_t i);

/* The language the translations are in (a tag: "zh", "en"), before
 * fy_document_write. Formats that lay text out (PDF) choose the font and
 * the line breaking by it; the others ignore it. fy_docjob sets it when
 * it has decided the direction. A PDF whose target was never set is
 * written as for Latin script, with fonts chosen per character. Returns 0,
 * FY_EINVAL (not a language tag) or FY_EUNSUPPORTED (PDF: a script that
 * needs shaping or right-to-left layout, ar fa he hi th ..., or no
 * installed font covers the language; the message says which package to
 * install). */
int fy_document_set_target(fy_document *d, const char *target, fy_error *err);

/* Bilingual output (PDF): every page followed by its translation, so the
 * output has twice the pages. Returns 0, or FY_EUNSUPPORTED for a format
 * that has no such output (all but PDF). */
int fy_document_set_bilingual(fy_document *d, int on, fy_error *err);

/* Called by fy_document_write as it goes (PDF: after each page; the other
 * formats write in one go and do not call it), on the writing thread:
 * done of total steps. NULL clears it. */
typedef void (*fy_doc_progress)(void *user, size_t done, size_t total);
void fy_document_on_write(fy_document *d, fy_doc_progress progress, void *user);

/* The translation of unit i (copied): text[0..len), which for an HTML unit
 * is the pipeline's output for it (the unit's tags in their order). A unit
 * never set is written as it was. Returns 0, FY_EINVAL (i out of range, or
 * an HTML unit whose tags do not match the unit's), FY_ENOMEM. */
int fy_document_set(fy_document *d, size_t i, const char *text, size_t len, fy_error *err);

/* The whole document in its format with the translations in place: a
 * malloc'd buffer in *out (*len bytes; NUL-terminated for convenience).
 * Once, after the units are set (any of them may be left unset): afterwards
 * d can only be freed. Returns 0, or with err FY_ENOMEM, FY_EFORMAT (an
 * archive libzip could not write, a PDF MuPDF could not rewrite), FY_ELIMIT
 * (a PDF past max_memory), FY_EUNSUPPORTED (a PDF whose target was never
 * set and no Latin font is installed). */
int fy_document_write(fy_document *d, char **out, size_t *len, fy_error *err);

/* The name of the translated file: name with its language suffix replaced
 * by target, or target added before the extension ("report.zh.docx" ->
 * "report.en.docx", "notes.docx" -> "notes.en.docx", "README" ->
 * "README.en"). A suffix is a final ".tag" of the stem that is source or
 * a language util/lang.h names. Any directory part of name is dropped
 * (both / and \), and bytes that do not belong in a file name (control
 * characters, quotes, ';') become '_'; an empty name becomes "document".
 * Writes at most cap bytes (NUL included). */
void fy_document_name(const char *name, const char *source, const char *target, char *out,
                      size_t cap);

#endif
