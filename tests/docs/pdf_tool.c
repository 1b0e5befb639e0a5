/* pdf_tool.c - the PDF reader and writer without a model, for the PDF
 * tests (test_pdf.py).
 *
 *   pdf_tool units IN
 *       one JSON object per line: first {"pages", "notes"}, then per unit
 *       {"unit", "page", "box": [x0, y0, x1, y1], "size", "lines", "text"}
 *       (box: points, top-left origin, the page's rotation applied: the
 *       space pdftotext -bbox reports in)
 *   pdf_tool write IN OUT [--target LANG] [--bilingual] [--skip K]
 *                         [--with FILE | --upper | --keep]
 *       sets every unit (but every K-th with --skip) and writes OUT; the
 *       translations: FILE's lines in unit order (JSON strings, as `units`
 *       prints texts), the text upper-cased (ASCII), or the text itself
 *       (--keep: the layout with the same words); prints the notes and the
 *       most memory MuPDF held at once
 *   either, before IN: --max-pages N, --max-memory MIB (fy_doc_limits)
 *   on a refused document: "error CODE: message", exit 2
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/document.h"
#include "text/pdf_internal.h"
#include "../read_file.h"

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

static int fail(fy_error *err)
{
    printf("error %s: %s\n", code_name(err->code), err->msg);
    return 2;
}

static void json_str(const char *s, size_t n)
{
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* A JSON string of the form json_str writes, decoded in place. */
static size_t json_unquote(char *s)
{
    size_t o = 0;
    for (size_t i = 1; s[i] && s[i] != '"'; i++) {
        if (s[i] == '\\' && s[i + 1] == 'u') {
            s[o++] = (char)strtol((char[]){s[i + 2], s[i + 3], s[i + 4], s[i + 5], 0}, NULL, 16);
            i += 5;
        } else if (s[i] == '\\') {
            s[o++] = s[++i];
        } else {
            s[o++] = s[i];
        }
    }
    s[o] = '\0';
    return o;
}

static void print_notes(const fy_document *d)
{
    for (size_t i = 0; i < fy_document_notes(d); i++) {
        if (i) putchar(',');
        json_str(fy_document_note(d, i), strlen(fy_document_note(d, i)));
    }
}

static int units(fy_document *d)
{
    const pdfdoc *p = d->impl; /* the paragraph boxes are not API */
    printf("{\"pages\": %zu, \"notes\": [", fy_document_pages(d));
    print_notes(d);
    printf("]}\n");
    for (size_t k = 0; k < p->npara; k++) {
        const pdfpara *pp = &p->para[k];
        size_t n;
        const char *t = fy_document_unit(d, pp->unit, &n, NULL);
        printf("{\"unit\": %zu, \"page\": %zu, \"box\": [%.2f, %.2f, %.2f, %.2f], \"size\": %.2f, "
               "\"lines\": %d, \"text\": ",
               pp->unit, fy_document_unit_page(d, pp->unit), pp->box.x0, pp->box.y0, pp->box.x1,
               pp->box.y1, pp->size, pp->lines);
        json_str(t, n);
        printf("}\n");
    }
    return 0;
}

static int write_doc(fy_document *d, int argc, char **argv)
{
    const char *out = argv[0], *with = NULL, *mode = "--keep";
    long skip = 0;
    fy_error err = {0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--target") && i + 1 < argc) {
            if (fy_document_set_target(d, argv[++i], &err)) return fail(&err);
        } else if (!strcmp(argv[i], "--bilingual")) {
            if (fy_document_set_bilingual(d, 1, &err)) return fail(&err);
        } else if (!strcmp(argv[i], "--skip") && i + 1 < argc) {
            skip = strtol(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--with") && i + 1 < argc) {
            with = argv[++i];
        } else {
            mode = argv[i];
        }
    }
    size_t wlen = 0;
    char *lines = with ? read_file(with, &wlen) : NULL, *next = lines;
    if (with && !lines) return perror(with), 1;
    for (size_t i = 0; i < fy_document_units(d); i++) {
        size_t n;
        const char *u = fy_document_unit(d, i, &n, NULL);
        char *t = strdup(u);
        if (next) {
            char *nl = strchr(next, '\n');
            if (nl) *nl = '\0';
            free(t);
            t = strdup(next);
            n = json_unquote(t);
            next = nl ? nl + 1 : next + strlen(next);
        } else if (!strcmp(mode, "--upper")) {
            for (char *c = t; *c; c++) *c = (char)toupper((unsigned char)*c);
        }
        int rc = skip && i % (size_t)skip == 0 ? 0 : fy_document_set(d, i, t, n, &err);
        free(t);
        if (rc) return fail(&err);
    }
    free(lines);
    char *data;
    size_t len;
    if (fy_document_write(d, &data, &len, &err)) return fail(&err);
    FILE *f = fopen(out, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f)) return perror(out), 1;
    free(data);
    const pdfdoc *p = d->impl;
    printf("{\"units\": %zu, \"mupdf_peak_bytes\": %zu, \"notes\": [", fy_document_units(d),
           p->mem.peak);
    print_notes(d);
    printf("]}\n");
    return 0;
}

int main(int argc, char **argv)
{
    fy_doc_limits lim;
    fy_doc_limits_default(&lim);
    while (argc > 3 && argv[2][0] == '-') {
        if (!strcmp(argv[2], "--max-pages")) lim.max_pages = strtoul(argv[3], NULL, 10);
        if (!strcmp(argv[2], "--max-memory")) lim.max_memory = strtoul(argv[3], NULL, 10) << 20;
        memmove(argv + 2, argv + 4, (size_t)(argc - 3) * sizeof *argv);
        argc -= 2;
    }
    if (argc < 3 || (strcmp(argv[1], "units") && strcmp(argv[1], "write")) ||
        (!strcmp(argv[1], "write") && argc < 4)) {
        fprintf(stderr, "usage: pdf_tool units|write [--max-pages N] [--max-memory MIB] IN "
                        "[OUT options]\n");
        return 1;
    }
    size_t len;
    char *data = read_file(argv[2], &len);
    if (!data) return perror(argv[2]), 1;
    fy_error err = {0};
    int fmt = fy_docfmt_detect(argv[2], NULL, data, len, &err);
    fy_document *d = fmt < 0 ? NULL : fy_document_read(fmt, data, len, &lim, &err);
    free(data);
    if (!d) return fail(&err);
    int rc = !strcmp(argv[1], "units") ? units(d) : write_doc(d, argc - 3, argv + 3);
    fy_document_free(d);
    return rc;
}
