/* docjob.c - a document in batches of requests: the source decided once,
 * the units grouped (same kind, a character budget, a share of the queue),
 * submitted one batch at a time, and their translations set in the
 * document. */
#include "translate/docjob.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "translate/pipeline.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/lang.h"

enum { SAMPLE_BYTES = 8192, BATCH_UNITS = 256 };

typedef struct batch {
    size_t first, n; /* units */
    fy_request *q;
} batch;

struct fy_docjob {
    fy_registry *reg;
    fy_scheduler *sched;
    fy_document *doc;
    fy_docjob_callbacks cb;
    char source[FY_LANG_MAX], target[FY_LANG_MAX], direction[3 * FY_LANG_MAX];
    batch *b;
    size_t nb, cap;
    size_t next;   /* the batch to submit next */
    int in_flight; /* b[next - 1] is submitted and not yet collected */
    size_t total;  /* sentences */
    atomic_size_t done;
    size_t done_before; /* sentences of the batches already collected */
    int background;
    size_t share;               /* of the queue a batch may take: 1/share */
    const fy_docjob_options *o; /* while fy_docjob_new builds the batches */
};

/* ---- the source language -------------------------------------------------------- */

/* The pipeline decides on a sample of the first units, as for a text. */
static int decide_languages(fy_docjob *j, const fy_docjob_options *o, fy_error *err)
{
    fy_document *d = j->doc;
    fy_buf sample = {0};
    int html = 0;
    for (size_t i = 0; i < fy_document_units(d) && sample.n < SAMPLE_BYTES; i++) {
        size_t n;
        int h;
        const char *u = fy_document_unit(d, i, &n, &h);
        html |= h;
        fy_buf_put(&sample, u, n);
        fy_buf_putc(&sample, '\n');
    }
    if (sample.oom) return fy_err(err, FY_ENOMEM, "out of memory");
    const char *text = sample.p ? sample.p : "";
    size_t len = sample.n;
    /* beam: the default */
    fy_request_options ro = {.source = o->source, .target = o->target, .html = html};
    fy_request *q = fy_request_new(j->reg, &text, &len, 1, &ro, NULL, err);
    fy_buf_free(&sample);
    if (!q) return err->code;
    snprintf(j->source, sizeof j->source, "%s", fy_request_source(q, 0, NULL));
    snprintf(j->target, sizeof j->target, "%s", fy_request_target(q, 0));
    snprintf(j->direction, sizeof j->direction, "%s", fy_request_direction(q, 0));
    fy_request_free(q);
    return 0;
}

/* ---- batches -------------------------------------------------------------------- */

static int build(fy_docjob *j, batch *b, int timeout_ms, int64_t start, fy_error *err)
{
    const char **texts = calloc(b->n, sizeof *texts);
    size_t *lens = calloc(b->n, sizeof *lens);
    int html = 0;
    if (!texts || !lens) {
        free(texts);
        free(lens);
        return fy_err(err, FY_ENOMEM, "out of memory");
    }
    for (size_t k = 0; k < b->n; k++)
        texts[k] = fy_document_unit(j->doc, b->first + k, &lens[k], &html);
    /* Batches run one after the other: the last may start B timeouts in. */
    int64_t deadline = timeout_ms > 0 ? start + (int64_t)timeout_ms * (int64_t)(j->nb + 1) : 0;
    fy_request_options ro = {.source = j->source,
                             .target = j->target,
                             .html = html,
                             .deadline_ms = deadline,
                             .background = j->background,
                             .glossaries = j->o ? j->o->glossaries : NULL,
                             .nglossaries = j->o ? j->o->nglossaries : 0};
    size_t bad;
    b->q = fy_request_new(j->reg, texts, lens, b->n, &ro, &bad, err);
    free(texts);
    free(lens);
    if (!b->q && bad < b->n) fy_err_prefix(err, "paragraph %zu", b->first + bad + 1);
    return b->q ? 0 : err->code;
}

static int add_batch(fy_docjob *j, size_t first, size_t n, size_t queue_max, int timeout_ms,
                     int64_t start, fy_error *err)
{
    if (fy_vec_reserve((void **)&j->b, &j->cap, j->nb + 1, sizeof *j->b))
        return fy_err(err, FY_ENOMEM, "out of memory");
    batch *b = &j->b[j->nb];
    *b = (batch){first, n, NULL};
    int rc = build(j, b, timeout_ms, start, err);
    if (rc) return rc;
    size_t sent = fy_request_sentences(b->q);
    /* A batch takes at most its share of the queue, so that other requests still fit. */
    if (queue_max && sent > queue_max / j->share && n > 1) {
        fy_request_free(b->q);
        size_t half = n / 2;
        rc = add_batch(j, first, half, queue_max, timeout_ms, start, err);
        return rc ? rc : add_batch(j, first + half, n - half, queue_max, timeout_ms, start, err);
    }
    if (queue_max && sent > queue_max) {
        fy_request_free(b->q);
        return fy_err(err, FY_ELIMIT,
                      "paragraph %zu splits into %zu sentences; the server queues at most %zu "
                      "(--queue)",
                      first + 1, sent, queue_max);
    }
    j->total += sent;
    j->nb++;
    return 0;
}

/* Consecutive units of one kind still to translate, up to the character budget. */
static int make_batches(fy_docjob *j, const fy_docjob_options *o, fy_error *err)
{
    fy_scheduler_stats st;
    fy_scheduler_get_stats(j->sched, &st);
    size_t budget = o->batch_chars ? o->batch_chars : 4000;
    int64_t start = fy_now_ms();
    size_t n = fy_document_units(j->doc);
    const unsigned char *done = o->done;
    for (size_t i = 0; i < n;) {
        if (done && done[i]) {
            i++;
            continue;
        }
        size_t len, chars = 0, k = i;
        int html, h;
        fy_document_unit(j->doc, i, &len, &html);
        while (k < n && k - i < BATCH_UNITS && (k == i || chars < budget)) {
            fy_document_unit(j->doc, k, &len, &h);
            if (h != html || (done && done[k])) break;
            chars += len;
            k++;
        }
        int rc = add_batch(j, i, k - i, st.queue_max, o->timeout_ms, start, err);
        if (rc) return rc;
        i = k;
    }
    return 0;
}

fy_docjob *fy_docjob_new(fy_registry *reg, fy_scheduler *sched, fy_document *doc,
                         const fy_docjob_options *o, const fy_docjob_callbacks *cb, fy_error *err)
{
    fy_docjob *j = calloc(1, sizeof *j);
    if (!j) {
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    j->reg = reg;
    j->sched = sched;
    j->doc = doc;
    j->background = o->background;
    j->share = o->queue_share > 1 ? o->queue_share : 2;
    if (cb) j->cb = *cb;
    int rc = decide_languages(j, o, err);
    /* No letters, or already in the target: the document stays as it is. */
    int nothing = !rc && (!j->source[0] || !strcmp(j->source, j->target));
    /* Formats that lay text out (PDF) choose fonts and line breaks by it. */
    if (!rc && !nothing) rc = fy_document_set_target(doc, j->target, err);
    if (!rc && !nothing) {
        fy_docjob_options bo = *o;
        bo.source = j->source;
        bo.target = j->target;
        j->o = &bo;
        rc = make_batches(j, &bo, err);
        j->o = NULL;
    }
    if (rc) {
        fy_docjob_free(j);
        return NULL;
    }
    return j;
}

/* ---- running ---------------------------------------------------------------------- */

/* Progress only counts sentences: what they say is read once the batch is done. */
static void on_sentence(void *user, size_t text, size_t sentence, const char *before,
                        size_t before_len, const char *r, size_t len)
{
    (void)text, (void)sentence, (void)before, (void)before_len, (void)r, (void)len;
    fy_docjob *j = user;
    size_t done = atomic_fetch_add(&j->done, 1) + 1;
    if (j->cb.on_progress) j->cb.on_progress(j->cb.user, done, j->total);
}

static void on_done(void *user, int status)
{
    fy_docjob *j = user;
    if (j->cb.on_batch) j->cb.on_batch(j->cb.user, status);
}

/* The finished batch's translations into the document. */
static int collect(fy_docjob *j, batch *b, fy_error *err)
{
    int st = fy_request_status(b->q, err);
    if (st) return st;
    for (size_t k = 0; k < b->n; k++) {
        size_t len;
        char *t = fy_request_text(b->q, k, &len, NULL, err);
        if (!t) return err->code;
        int rc = fy_document_set(j->doc, b->first + k, t, len, err);
        if (!rc && j->cb.on_unit) j->cb.on_unit(j->cb.user, b->first + k, t, len);
        free(t);
        if (rc) return fy_err_prefix(err, "paragraph %zu", b->first + k + 1);
    }
    j->done_before += fy_request_sentences(b->q);
    atomic_store(&j->done, j->done_before);
    fy_request_free(b->q);
    b->q = NULL;
    return 0;
}

int fy_docjob_step(fy_docjob *j, fy_error *err)
{
    if (j->in_flight) {
        j->in_flight = 0;
        int rc = collect(j, &j->b[j->next - 1], err);
        if (rc) return rc;
    }
    if (j->next == j->nb) return 1;
    batch *b = &j->b[j->next++];
    fy_request_callbacks rcb = {on_sentence, on_done, j};
    int rc = fy_request_submit(b->q, j->sched, &rcb, err);
    if (rc) return rc;
    j->in_flight = 1;
    return 0;
}

const char *fy_docjob_source(const fy_docjob *j)
{
    return j->source;
}

const char *fy_docjob_target(const fy_docjob *j)
{
    return j->target;
}

const char *fy_docjob_direction(const fy_docjob *j)
{
    return j->direction;
}

size_t fy_docjob_total(const fy_docjob *j)
{
    return j->total;
}

size_t fy_docjob_done(const fy_docjob *j)
{
    return atomic_load(&j->done);
}

void fy_docjob_cancel(fy_docjob *j)
{
    if (j && j->in_flight) fy_request_cancel(j->b[j->next - 1].q);
}

void fy_docjob_free(fy_docjob *j)
{
    if (!j) return;
    for (size_t i = 0; i < j->nb; i++) fy_request_free(j->b[i].q); /* cancels first */
    free(j->b);
    free(j);
}
