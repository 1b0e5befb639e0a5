/* cmd_translate_file.c - `fanyi translate --file IN [-o OUT] [--bilingual]`:
 * one document (txt, md, html, srt, vtt, docx, odt, pptx, epub, pdf;
 * text/document.h) translated with the server's document job
 * (translate/docjob.h) and written with its formatting and structure kept;
 * what the document reports (pages without text) goes to stderr.
 *
 * The cheap refusals come before the work: a file over --max-document-mb
 * is refused from its size alone (before a byte of it is read or checked),
 * and an OUT that exists is kept unless --force, checked before the first
 * sentence is translated. OUT is written beside itself under a temporary
 * name and renamed into place, so it is whole or absent, never half-written.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "text/document.h"
#include "translate/docjob.h"
#include "util/buf.h"
#include "util/clock.h"

#define CMD "fanyi translate"
#define MIB (1024 * 1024)

typedef struct wait_batch {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* on CLOCK_MONOTONIC: progress ticks while waiting */
    int done;
    /* A paged document (PDF): paragraphs still to translate on each page,
     * and pages with none left (the step's thread only). */
    const fy_document *doc;
    size_t *page_left, pages, pages_done;
} wait_batch;

/* A paragraph is translated: counted on its page. */
static void unit_done(void *user, size_t i, const char *text, size_t len)
{
    (void)text, (void)len;
    wait_batch *w = user;
    size_t p = fy_document_unit_page(w->doc, i);
    if (p && p <= w->pages && w->page_left[p - 1] && !--w->page_left[p - 1]) w->pages_done++;
}

/* The pages of d and their paragraphs (none for formats without pages). 0
 * or -1 when out of memory. */
static int count_pages(wait_batch *w, const fy_document *d)
{
    w->doc = d;
    w->pages = fy_document_pages(d);
    if (!w->pages) return 0;
    w->page_left = calloc(w->pages, sizeof *w->page_left);
    if (!w->page_left) return -1;
    for (size_t i = 0; i < fy_document_units(d); i++) {
        size_t p = fy_document_unit_page(d, i);
        if (p && p <= w->pages) w->page_left[p - 1]++;
    }
    for (size_t p = 0; p < w->pages; p++) w->pages_done += !w->page_left[p];
    return 0;
}

static void batch_over(void *user, int status)
{
    (void)status; /* fy_docjob_step reports it */
    wait_batch *w = user;
    pthread_mutex_lock(&w->mu);
    w->done = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/* "IN is 20.1 MiB, over the limit of 20 MiB (--max-document-mb N raises it)",
 * with as many decimals as it takes not to read as the limit itself. */
static int too_big(const char *in, uint64_t bytes, long max_mb)
{
    double mib = (double)bytes / MIB;
    int prec = 1;
    while (prec < 6 && round(mib * pow(10, prec)) / pow(10, prec) <= (double)max_mb) prec++;
    if (bytes)
        fprintf(stderr,
                CMD ": %s is %.*f MiB, over the limit of %ld MiB (--max-document-mb N raises it)\n",
                in, prec, mib, max_mb);
    else
        fprintf(stderr,
                CMD ": %s is more than %ld MiB, the limit (--max-document-mb N raises it)\n", in,
                max_mb);
    return 1;
}

/* Reads IN whole, refusing a file over max_mb MiB by its size first. NULL
 * after a message. */
static char *read_input(const char *in, long max_mb, size_t *len)
{
    size_t max = (size_t)max_mb * MIB;
    struct stat st;
    if (stat(in, &st) != 0) {
        fprintf(stderr, CMD ": cannot read %s: %s\n", in, strerror(errno));
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        fprintf(stderr, CMD ": cannot read %s: it is a directory\n", in);
        return NULL;
    }
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > max) {
        too_big(in, (uint64_t)st.st_size, max_mb);
        return NULL;
    }
    FILE *f = fopen(in, "rb");
    if (!f) {
        fprintf(stderr, CMD ": cannot read %s: %s\n", in, strerror(errno));
        return NULL;
    }
    fy_buf b = {0};
    char chunk[65536];
    size_t n;
    /* A pipe, or a file that grew since: read one chunk past the limit at most. */
    while (b.n <= max && (n = fread(chunk, 1, sizeof chunk, f)) > 0) fy_buf_put(&b, chunk, n);
    int bad = ferror(f);
    fclose(f);
    if (bad || b.n > max) {
        if (bad)
            fprintf(stderr, CMD ": cannot read %s: %s\n", in, strerror(EIO));
        else
            too_big(in, 0, max_mb); /* a pipe: its size is unknown */
        fy_buf_free(&b);
        return NULL;
    }
    if (!b.p) fy_buf_put(&b, "", 0);
    return fy_buf_take(&b, len);
}

/* OUT when not given: the translated name beside IN (report.en.pdf, or
 * report.en.bilingual.pdf). */
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

/* 0 if OUT may be written, else 1 after a message: it is IN, or it exists
 * and --force was not given. */
static int check_out(const cli_file_options *fo, const char *out)
{
    if (!strcmp(out, "-")) return 0;
    struct stat a, b;
    if (!strcmp(out, fo->in) ||
        (!stat(out, &a) && !stat(fo->in, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino)) {
        fprintf(stderr, CMD ": %s would be overwritten by its translation; give -o OUT\n", fo->in);
        return 1;
    }
    if (!fo->force && lstat(out, &a) == 0) {
        fprintf(stderr, CMD ": %s exists; give --force to replace it, or -o OUT\n", out);
        return 1;
    }
    return 0;
}

/* Writes data to path through a temporary file beside it, renamed into
 * place (replacing what is there only with force). 0, or -1 with errno. */
static int write_out(const char *path, const char *data, size_t len, int force)
{
    if (!strcmp(path, "-")) return fwrite(data, 1, len, stdout) == len ? 0 : -1;
    char tmp[4200];
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(tmp, sizeof tmp, "%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1);
    else
        snprintf(tmp, sizeof tmp, ".%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) return -1;
    mode_t mask = umask(0); /* the permissions a plain fopen would give */
    umask(mask);
    int rc = fchmod(fd, 0666 & ~mask);
    for (size_t at = 0; !rc && at < len;) {
        ssize_t n = write(fd, data + at, len - at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) rc = -1;
        at += n > 0 ? (size_t)n : 0;
    }
    if (close(fd) != 0) rc = -1;
    if (!rc) {
        rc = force ? rename(tmp, path) : renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE);
        if (rc && !force && (errno == EINVAL || errno == ENOSYS)) /* no NOREPLACE here */
            rc = link(tmp, path);
    }
    int saved = errno;
    unlink(tmp); /* gone already after a rename */
    errno = saved;
    return rc;
}

/* One progress line: pages too for a paged document. */
static void draw(cli_progress *pg, const wait_batch *w, const fy_docjob *j, const char *in)
{
    size_t done = fy_docjob_done(j), total = fy_docjob_total(j);
    int pct = total ? (int)(done * 100 / total) : 100;
    if (w->pages)
        cli_progress_draw(pg, 0, CMD ": %s: %zu of %zu pages, %zu of %zu sentences (%d%%), %.0f s",
                          in, w->pages_done, w->pages, done, total, pct, cli_progress_elapsed(pg));
    else
        cli_progress_draw(pg, 0, CMD ": %s: %zu of %zu sentences (%d%%), %.0f s", in, done, total,
                          pct, cli_progress_elapsed(pg));
}

/* Runs the job batch by batch, waiting for each, drawing progress (at
 * least once a batch, then every tick). */
static int run_job(fy_docjob *j, wait_batch *w, const char *in, fy_error *err)
{
    cli_progress pg;
    cli_progress_start(&pg, 1);
    int rc;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        w->done = 0;
        pthread_mutex_unlock(&w->mu);
        if ((rc = fy_docjob_step(j, err)) != 0) break;
        pthread_mutex_lock(&w->mu);
        do {
            draw(&pg, w, j, in);
            struct timespec tick = fy_timespec_us(fy_now_us() + 100000);
            if (!w->done) pthread_cond_timedwait(&w->cv, &w->mu, &tick);
        } while (!w->done);
        pthread_mutex_unlock(&w->mu);
    }
    cli_progress_done(&pg);
    return rc > 0 ? 0 : rc;
}

/* The document's error, with the option that raises a limit it names. */
static void report(const char *in, const fy_error *err)
{
    const char *hint = "";
    if (err->code == FY_ELIMIT && strstr(err->msg, "characters"))
        hint = " (--max-document-chars N raises it)";
    fprintf(stderr, CMD ": %s: %s%s\n", in, err->msg, hint);
}

/* Translates d and writes it. Returns the exit status. */
static int translate_doc(const cli_file_options *fo, fy_document *d, fy_scheduler *sched,
                         fy_registry *reg)
{
    wait_batch w = {.mu = PTHREAD_MUTEX_INITIALIZER};
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w.cv, &ca);
    pthread_condattr_destroy(&ca);
    fy_docjob_options o = {.source = fo->from,
                           .target = fo->to,
                           .glossaries = &fo->glossary,
                           .nglossaries = fo->glossary ? 1 : 0};
    fy_docjob_callbacks cb = {NULL, batch_over, &w, unit_done};
    fy_error err = {0};
    char path[4096], *result = NULL;
    size_t rlen = 0;
    fy_docjob *j = count_pages(&w, d) ? NULL : fy_docjob_new(reg, sched, d, &o, &cb, &err);
    if (!j && !err.code) fy_err(&err, FY_ENOMEM, "out of memory");
    int rc = j ? 0 : 1;
    if (j) {
        if (fo->out)
            snprintf(path, sizeof path, "%s", fo->out);
        else
            default_out(fo->in, j, fo->bilingual, path, sizeof path);
        rc = check_out(fo, path);
    }
    if (j && !rc) rc = run_job(j, &w, fo->in, &err) ? 1 : 0;
    if (j && !rc) rc = fy_document_write(d, &result, &rlen, &err) ? 1 : 0;
    if (rc && err.code) {
        report(fo->in, &err);
    } else if (!rc && write_out(path, result, rlen, fo->force)) {
        fprintf(stderr, CMD ": cannot write %s: %s%s\n", path, strerror(errno),
                errno == EEXIST ? " (it appeared meanwhile; give --force to replace it)" : "");
        rc = 1;
    } else if (!rc) {
        char pages[48] = "";
        if (w.pages) snprintf(pages, sizeof pages, "%zu page%s, ", w.pages, w.pages > 1 ? "s" : "");
        fprintf(stderr, CMD ": %s -> %s (%s, %s%zu paragraphs, %zu sentences)\n", fo->in, path,
                fy_docjob_direction(j)[0] ? fy_docjob_direction(j) : "unchanged", pages,
                fy_document_units(d), fy_docjob_total(j));
    }
    for (size_t i = 0; i < fy_document_notes(d); i++)
        fprintf(stderr, CMD ": %s: %s\n", fo->in, fy_document_note(d, i));
    free(result);
    fy_docjob_free(j);
    free(w.page_left);
    pthread_cond_destroy(&w.cv);
    return rc;
}

int cli_translate_file(const cli_file_options *fo, fy_scheduler *sched, fy_registry *reg)
{
    fy_doc_limits lim;
    fy_doc_limits_default(&lim);
    long max_mb = fo->max_mb ? fo->max_mb : (long)(lim.max_bytes / MIB);
    lim.max_bytes = (size_t)max_mb * MIB;
    if (fo->max_chars) lim.max_chars = (size_t)fo->max_chars;
    /* A named OUT that is in the way is refused before anything is read. */
    if (fo->out && check_out(fo, fo->out)) return 1;
    size_t len;
    char *data = read_input(fo->in, max_mb, &len);
    if (!data) return 1;
    fy_error err = {0};
    int fmt = fy_docfmt_detect(fo->in, NULL, data, len, &err);
    fy_document *d = fmt < 0 ? NULL : fy_document_read(fmt, data, len, &lim, &err);
    free(data);
    if (d && fo->bilingual && fy_document_set_bilingual(d, 1, &err)) {
        fy_document_free(d);
        d = NULL;
    }
    if (!d) {
        report(fo->in, &err);
        return 1;
    }
    int rc = translate_doc(fo, d, sched, reg);
    fy_document_free(d);
    return rc;
}
