/* cmd_translate_file.c - `fanyi translate --file IN [-o OUT] [--bilingual]`:
 * one document (txt, md, html, srt, vtt, docx, odt, pptx, epub, pdf;
 * text/document.h) translated with the server's document job
 * (translate/docjob.h) and written with its formatting and structure kept;
 * what the document reports (pages without text) goes to stderr. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "text/document.h"
#include "translate/docjob.h"
#include "util/buf.h"

typedef struct wait_batch {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
} wait_batch;

static void batch_over(void *user, int status)
{
    (void)status; /* fy_docjob_step reports it */
    wait_batch *w = user;
    pthread_mutex_lock(&w->mu);
    w->done = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static char *slurp(const char *path, size_t *len, size_t max)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fy_buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0 && b.n <= max) fy_buf_put(&b, chunk, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fy_buf_free(&b);
        return NULL;
    }
    if (!b.p) fy_buf_put(&b, "", 0);
    return fy_buf_take(&b, len);
}

/* OUT when not given: the translated name beside IN; a bilingual PDF's
 * has ".bilingual" before the extension (report.en.bilingual.pdf). */
static void default_out(const char *in, const fy_docjob *j, int bilingual, char *out, size_t cap)
{
    char name[256];
    fy_document_name(in, fy_docjob_source(j), fy_docjob_target(j), name, sizeof name);
    char *dot = strrchr(name, '.');
    if (bilingual && dot && strlen(name) + 11 < sizeof name) {
        memmove(dot + 10, dot, strlen(dot) + 1);
        memcpy(dot, ".bilingual", 10);
    }
    const char *slash = strrchr(in, '/');
    if (slash)
        snprintf(out, cap, "%.*s/%s", (int)(slash - in), in, name);
    else
        snprintf(out, cap, "%s", name);
}

static int write_out(const char *path, const char *data, size_t len)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "wb") : stdout;
    if (!f) return -1;
    int bad = fwrite(data, 1, len, f) != len;
    if (f != stdout) bad |= fclose(f) != 0;
    return bad ? -1 : 0;
}

/* Runs the job batch by batch, waiting for each. */
static int run_job(fy_docjob *j, wait_batch *w, fy_error *err)
{
    int rc;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        w->done = 0;
        pthread_mutex_unlock(&w->mu);
        if ((rc = fy_docjob_step(j, err)) != 0) return rc > 0 ? 0 : rc;
        pthread_mutex_lock(&w->mu);
        while (!w->done) pthread_cond_wait(&w->cv, &w->mu);
        pthread_mutex_unlock(&w->mu);
    }
}

int cli_translate_file(const char *in, const char *out, const char *from, const char *to,
                       int bilingual, fy_scheduler *sched, fy_registry *reg)
{
    fy_doc_limits lim;
    fy_doc_limits_default(&lim);
    size_t len;
    char *data = slurp(in, &len, lim.max_bytes);
    if (!data) {
        fprintf(stderr, "fanyi translate: cannot read %s\n", in);
        return 1;
    }
    fy_error err = {0};
    int fmt = fy_docfmt_detect(in, NULL, data, len, &err);
    fy_document *d = fmt < 0 ? NULL : fy_document_read(fmt, data, len, &lim, &err);
    free(data);
    if (d && bilingual && fy_document_set_bilingual(d, 1, &err)) {
        fy_document_free(d);
        d = NULL;
    }
    wait_batch w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    fy_docjob_options o = {from, to, 0, 0};
    fy_docjob_callbacks cb = {NULL, batch_over, &w};
    fy_docjob *j = d ? fy_docjob_new(reg, sched, d, &o, &cb, &err) : NULL;
    int rc = j ? run_job(j, &w, &err) : -1;
    char *result = NULL, path[4096];
    size_t rlen = 0;
    if (!rc) rc = fy_document_write(d, &result, &rlen, &err);
    if (!rc) {
        if (out)
            snprintf(path, sizeof path, "%s", out);
        else
            default_out(in, j, bilingual, path, sizeof path);
        if (!strcmp(path, in)) {
            fprintf(stderr, "fanyi translate: %s would be overwritten; give -o OUT\n", in);
            rc = 2;
        } else if (write_out(path, result, rlen)) {
            fprintf(stderr, "fanyi translate: cannot write %s\n", path);
            rc = 1;
        } else {
            fprintf(stderr, "fanyi translate: %s -> %s (%s, %zu paragraphs, %zu sentences)\n", in,
                    path, fy_docjob_direction(j)[0] ? fy_docjob_direction(j) : "unchanged",
                    fy_document_units(d), fy_docjob_total(j));
        }
    } else if (rc < 0) {
        fprintf(stderr, "fanyi translate: %s: %s\n", in, err.msg);
        rc = 1;
    }
    for (size_t i = 0; d && i < fy_document_notes(d); i++)
        fprintf(stderr, "fanyi translate: %s: %s\n", in, fy_document_note(d, i));
    free(result);
    fy_docjob_free(j);
    fy_document_free(d);
    return rc;
}
