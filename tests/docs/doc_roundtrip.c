/* doc_roundtrip.c - the document readers and writers without a model: reads
 * IN (format by its name and content), translates every unit by upper-
 * casing the ASCII letters of each sentence the real splitter finds (the
 * real join puts them back, tags and all), writes OUT.
 *
 *   doc_roundtrip IN OUT [GLOSSARY.tsv]  -> "units=N chars=M", exit 0
 *   (with an en -> de glossary: its terms enforced, as the pipeline does)
 *   on a refused document     -> "error CODE: message" on stdout, exit 2
 *
 * The document tests (test_documents.py) make files with the real
 * libraries (python-docx, odfpy, ebooklib, zipfile), run this, and read
 * the result back with them.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/document.h"
#include "text/glossary.h"
#include "text/segment.h"
#include "../read_file.h"

static fy_glossary *glossary; /* argv[3], or NULL */

static const char *code_name(int code)
{
    switch (code) {
    case FY_EUNSUPPORTED:
        return "unsupported";
    case FY_EFORMAT:
        return "format";
    case FY_ELIMIT:
        return "limit";
    case FY_EINVAL:
        return "invalid";
    case FY_ENOMEM:
        return "nomem";
    default:
        return "other";
    }
}

/* The "translation" of one unit. */
static char *translate_unit(const char *text, size_t len, int html, fy_error *err)
{
    fy_split_options o;
    fy_split_options_default(&o);
    o.html = html;
    o.source = "en";
    o.target = "de";
    o.glossary = glossary;
    fy_doc *d = fy_doc_split(text, len, &o, err);
    if (!d) return NULL;
    size_t n = fy_doc_sentence_count(d);
    char **out = calloc(n ? n : 1, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        out[i] = strdup(fy_doc_sentence(d, i, NULL));
        for (char *p = out[i]; *p; p++) *p = (char)toupper((unsigned char)*p);
    }
    char *joined = fy_doc_join(d, (const char *const *)out, err);
    for (size_t i = 0; i < n; i++) free(out[i]);
    free(out);
    fy_doc_free(d);
    return joined;
}

static int fail(fy_error *err)
{
    printf("error %s: %s\n", code_name(err->code), err->msg);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: doc_roundtrip IN OUT [GLOSSARY.tsv]\n");
        return 1;
    }
    size_t len;
    fy_error err = {0};
    if (argc == 4) {
        char *tsv = read_file(argv[3], &len);
        glossary = tsv ? fy_glossary_new("en", "de", &err) : NULL;
        if (!glossary || fy_glossary_parse(glossary, tsv, len, FY_GLOSSARY_TSV, &err) ||
            fy_glossary_compile(glossary, &err)) {
            fprintf(stderr, "%s: %s\n", argv[3], tsv ? err.msg : "cannot read");
            return 1;
        }
        free(tsv);
    }
    char *data = read_file(argv[1], &len);
    if (!data) {
        perror(argv[1]);
        return 1;
    }
    int fmt = fy_docfmt_detect(argv[1], NULL, data, len, &err);
    fy_document *d = fmt < 0 ? NULL : fy_document_read(fmt, data, len, NULL, &err);
    free(data);
    if (!d) return fail(&err);
    for (size_t i = 0; i < fy_document_units(d); i++) {
        size_t n;
        int html;
        const char *u = fy_document_unit(d, i, &n, &html);
        char *t = translate_unit(u, n, html, &err);
        if (!t || fy_document_set(d, i, t, strlen(t), &err)) {
            free(t);
            fprintf(stderr, "unit %zu: %s\n", i, u);
            fy_document_free(d);
            return fail(&err);
        }
        free(t);
    }
    char *out;
    size_t out_len;
    if (fy_document_write(d, &out, &out_len, &err)) {
        fy_document_free(d);
        return fail(&err);
    }
    printf("units=%zu chars=%zu format=%s\n", fy_document_units(d), fy_document_chars(d),
           fy_docfmt_get(fmt)->name);
    fy_document_free(d);
    FILE *f = fopen(argv[2], "wb");
    if (!f || fwrite(out, 1, out_len, f) != out_len) {
        perror(argv[2]);
        return 1;
    }
    fclose(f);
    free(out);
    fy_glossary_unref(glossary);
    return 0;
}
