/* fuzz_document.c - libFuzzer harness for the document readers and writers
 * (text/document.h): txt, md, html, srt, vtt, the zip + XML formats and PDF.
 *
 * Input: one format byte (its value modulo the number of formats), then the
 * file. Small limits keep each run quick (1 MiB parts, 2,000 entries, depth
 * 64). Checks: reading fails only with a message and a code of the
 * contract; every unit is valid UTF-8 (or the pipeline would refuse it);
 * each unit "translated" through the real split and join (sentences
 * upper-cased: the join places tags and spans as for a real translation)
 * is accepted by fy_document_set; the document then writes; a text
 * format's output is valid UTF-8, and a zip format's or a PDF's output
 * opens again.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/document.h"
#include "text/segment.h"

static void limits(fy_doc_limits *l)
{
    fy_doc_limits_default(l);
    l->max_bytes = 1 << 20;
    l->max_entries = 2000;
    l->max_unpacked = 8 << 20;
    l->max_part = 1 << 20;
    l->max_depth = 64;
    l->max_units = 5000;
    l->max_chars = 200000;
    l->max_pages = 50;
    l->max_memory = (size_t)256 << 20;
}

static int known_code(int c)
{
    return c == FY_EUNSUPPORTED || c == FY_EFORMAT || c == FY_ELIMIT || c == FY_EINVAL ||
           c == FY_ENOMEM;
}

/* Unit i through split and join with upper-cased translations. */
static void translate(fy_document *d, size_t i)
{
    size_t n;
    int html;
    const char *u = fy_document_unit(d, i, &n, &html);
    if (!fy_utf8_valid(u, n, NULL)) abort(); /* the pipeline would refuse the document */
    fy_split_options o;
    fy_split_options_default(&o);
    o.html = html;
    o.source = "en";
    o.target = "de";
    fy_error err = {0};
    fy_doc *sd = fy_doc_split(u, n, &o, &err);
    if (!sd) return; /* a NUL in a unit: refused by the pipeline with a message */
    size_t m = fy_doc_sentence_count(sd);
    char **out = calloc(m ? m : 1, sizeof *out);
    for (size_t k = 0; k < m; k++) {
        out[k] = strdup(fy_doc_sentence(sd, k, NULL));
        for (char *p = out[k]; *p; p++) *p = (char)toupper((unsigned char)*p);
    }
    char *t = fy_doc_join(sd, (const char *const *)out, &err);
    /* The pipeline keeps a markup unit's tags: its translation must fit it. */
    if (t && fy_document_set(d, i, t, strlen(t), &err) && err.code != FY_ENOMEM) {
        fprintf(stderr, "unit %zu: %.*s\ntranslation: %s\nrefused: %s\n", i, (int)n, u, t, err.msg);
        abort();
    }
    free(t);
    for (size_t k = 0; k < m; k++) free(out[k]);
    free(out);
    fy_doc_free(sd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int fmt = data[0] % FY_DOC_NFORMATS;
    const char *file = (const char *)data + 1;
    size_t len = size - 1;
    fy_doc_limits lim;
    limits(&lim);
    fy_error err = {0};
    fy_document *d = fy_document_read(fmt, file, len, &lim, &err);
    if (!d) {
        if (!known_code(err.code) || !err.msg[0]) abort();
        return 0;
    }
    size_t units = fy_document_units(d);
    for (size_t i = 0; i < units; i++) translate(d, i);
    char *out;
    size_t out_len;
    if (fy_document_write(d, &out, &out_len, &err)) {
        if (!known_code(err.code)) abort();
        fy_document_free(d);
        return 0;
    }
    fy_document_free(d);
    if (!fy_docfmt_get(fmt)->zip && fmt != FY_DOC_PDF) {
        if (!fy_utf8_valid(out, out_len, NULL)) abort();
    } else {
        fy_document *again = fy_document_read(fmt, out, out_len, &lim, &err);
        if (!again && err.code != FY_ENOMEM && err.code != FY_ELIMIT) abort();
        fy_document_free(again);
    }
    free(out);
    return 0;
}
