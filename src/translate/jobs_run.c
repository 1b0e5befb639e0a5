/* jobs_run.c - running one document job: taking it up (its lease, its
 * file read again and its checkpoints set when it was begun elsewhere or
 * before a restart), one batch after another (each batch's units stored
 * as a checkpoint while the next batch is translated), and its end: the
 * translated file stored, or the error, or the cancellation.
 *
 * A run belongs to one job thread at a time (jobs.c hands it over through
 * the ready queue); while a batch is in flight it belongs to nobody and
 * the batch's end (run_on_batch) puts it back in the queue.
 */
#include "translate/jobs_internal.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"

enum { SAVE_EVERY_MS = 1000 };

run *run_new(fy_jobs *js, const char *id, const fy_job_info *info)
{
    run *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->js = js;
    snprintf(r->id, sizeof r->id, "%s", id);
    if (info) r->info = *info;
    r->phase = RUN_READY;
    return r;
}

static void ck_clear(run *r)
{
    for (size_t k = 0; k < r->ck_n; k++) free(r->ck_text[k]);
    r->ck_n = 0;
}

void run_free(run *r)
{
    if (!r) return;
    fy_docjob_free(r->dj); /* cancels: no callback after this */
    fy_document_free(r->doc);
    ck_clear(r);
    free(r->ck_idx);
    free(r->ck_len);
    free(r->ck_text);
    free(r->page_left);
    free(r);
}

void run_ready(run *r)
{
    fy_jobs *js = r->js;
    r->phase = RUN_READY;
    if (r->in_ready) return;
    r->in_ready = 1;
    r->rnext = NULL;
    if (js->ready_tail)
        js->ready_tail->rnext = r;
    else
        js->ready_head = r;
    js->ready_tail = r;
    pthread_cond_signal(&js->ready_cv);
}

/* ---- the scheduler's callbacks ----------------------------------------------------- */

void run_on_progress(void *user, size_t done, size_t total)
{
    (void)total;
    run *r = user;
    pthread_mutex_lock(&r->js->lock);
    r->info.done = r->base + done;
    if (r->watch.on_progress) r->watch.on_progress(r->watch.user, r->info.done, r->info.sentences);
    pthread_mutex_unlock(&r->js->lock);
}

void run_on_batch(void *user, int status)
{
    run *r = user;
    pthread_mutex_lock(&r->js->lock);
    r->over = 1;
    r->batch_status = status;
    if (r->phase == RUN_WAIT) run_ready(r);
    pthread_mutex_unlock(&r->js->lock);
}

/* In fy_docjob_step, on the owning thread: kept for the checkpoint, and
 * counted on its page. */
void run_on_unit(void *user, size_t i, const char *text, size_t len)
{
    run *r = user;
    if (r->ck_n == r->ck_cap) { /* the three arrays grow together */
        size_t cap = r->ck_cap ? 2 * r->ck_cap : 64;
        size_t *idx = realloc(r->ck_idx, cap * sizeof *idx);
        if (idx) r->ck_idx = idx;
        size_t *lens = idx ? realloc(r->ck_len, cap * sizeof *lens) : NULL;
        if (lens) r->ck_len = lens;
        char **texts = lens ? realloc(r->ck_text, cap * sizeof *texts) : NULL;
        if (texts) r->ck_text = texts;
        if (!texts) return; /* not checkpointed: translated again after a restart */
        r->ck_cap = cap;
    }
    char *copy = strndup(text, len);
    if (!copy) return; /* not checkpointed: translated again after a restart */
    r->ck_idx[r->ck_n] = i;
    r->ck_len[r->ck_n] = len;
    r->ck_text[r->ck_n++] = copy;
    size_t page = fy_document_unit_page(r->doc, i);
    pthread_mutex_lock(&r->js->lock);
    if (page && r->page_left && r->page_left[page - 1] && !--r->page_left[page - 1])
        r->info.pages_done++;
    pthread_mutex_unlock(&r->js->lock);
}

/* ---- the state ---------------------------------------------------------------------- */

/* Seconds left at the rate of this run so far; -1 before it is known. */
static double estimate(const run *r)
{
    int64_t ms = fy_now_ms() - r->t0_ms;
    size_t did = r->info.done > r->done0 ? r->info.done - r->done0 : 0;
    if (!r->dj || !did || ms <= 0) return -1;
    size_t left = r->info.sentences > r->info.done ? r->info.sentences - r->info.done : 0;
    return (double)left * (double)ms / 1000.0 / (double)did;
}

int run_save(run *r, int open, fy_error *err)
{
    fy_jobs *js = r->js;
    pthread_mutex_lock(&js->lock);
    if (r->info.state == FY_JOB_TRANSLATING) r->info.seconds_remaining = estimate(r);
    char *text = jobs_state_encode(&r->info);
    int ttl = jobs_ttl(js, &r->info);
    pthread_mutex_unlock(&js->lock);
    if (!text) return fy_err(err, FY_ENOMEM, "out of memory");
    int rc = js->store->ops->put_state(js->store, r->id, text, open, ttl, err);
    free(text);
    r->saved_ms = fy_now_ms();
    return rc;
}

/* The watcher's end report; js->lock held. */
static void tell_end(run *r)
{
    if (r->watch.on_end) r->watch.on_end(r->watch.user, r->info.state);
    r->watch = (fy_jobs_watch){0};
}

/* Ends the job in state (final), storing it, then lets the lease go.
 * Returns 1 (the run is over). */
static int end(run *r, int state)
{
    fy_jobs *js = r->js;
    if (r->dj && state != FY_JOB_DONE) fy_docjob_cancel(r->dj);
    int64_t now = fy_wall_ms();
    pthread_mutex_lock(&js->lock);
    r->info.state = state;
    r->info.finished_ms = now;
    r->info.expires_ms = now + (int64_t)js->o.ttl_s * 1000;
    r->info.seconds_remaining = -1;
    for (size_t i = 0; r->doc && i < fy_document_notes(r->doc); i++)
        if (!strstr(r->info.notes, fy_document_note(r->doc, i)))
            jobs_note(&r->info, fy_document_note(r->doc, i));
    pthread_mutex_unlock(&js->lock);
    fy_error err = {0};
    if (run_save(r, 0, &err) && err.code != FY_ENOTFOUND)
        jobs_log(js, "document job %s: cannot store its end: %s", r->id, err.msg);
    pthread_mutex_lock(&js->lock);
    r->leased = 0; /* the ticker stops renewing it before it is given back */
    pthread_mutex_unlock(&js->lock);
    js->store->ops->unlease(js->store, r->id);
    pthread_mutex_lock(&js->lock);
    jobs_mark_finished(js, r->id);
    js->st.finished += state == FY_JOB_DONE;
    js->st.failed += state == FY_JOB_ERROR;
    js->st.canceled += state == FY_JOB_CANCELED;
    tell_end(r);
    pthread_mutex_unlock(&js->lock);
    return 1;
}

static int fail(run *r, int code, const char *msg)
{
    pthread_mutex_lock(&r->js->lock);
    r->info.code = code ? code : FY_EIO;
    snprintf(r->info.error, sizeof r->info.error, "%s", msg);
    pthread_mutex_unlock(&r->js->lock);
    jobs_log(r->js, "document job %s failed: %s", r->id, msg);
    return end(r, FY_JOB_ERROR);
}

/* ---- taking a job up ---------------------------------------------------------------- */

/* One glossary id's dictionaries for the job into g[*n..cap): the one of
 * its direction when the source was asked, else every one into its target
 * (the pipeline takes the one of the source it decides), as a request
 * with glossary_id takes them. */
static int glossary_add(run *r, const char *id, fy_glossary **g, int *n, int cap, fy_error *err)
{
    fy_glossary_store *st = r->js->o.glossaries;
    const char *src = r->info.source, *tgt = r->info.target;
    if (!strcmp(src, "auto")) src = "";
    if (!st)
        return fy_err(err, FY_ENOTFOUND, "glossary '%.40s': this server keeps no glossaries", id);
    if (!tgt[0]) return fy_err(err, FY_EINVAL, "glossary '%.40s' needs the target language", id);
    if (src[0]) {
        if (*n == cap) return fy_err(err, FY_ELIMIT, "too many glossaries");
        g[*n] = fy_glossary_store_get(st, id, src, tgt, err);
        return g[*n] ? (++*n, 0) : err->code;
    }
    int got = fy_glossary_store_get_into(st, id, tgt, g + *n, cap - *n, err);
    if (got < 0) return got;
    if (!got)
        return fy_err(err, FY_ENOTFOUND, "glossary '%.40s' has no dictionary into %s", id, tgt);
    *n += got;
    return 0;
}

/* The job's glossaries (info.glossary: ids, comma-separated), compiled
 * from the store now: a job started, resumed or taken over uses them as
 * they are then. Returns how many are in g (new references), or an error
 * (an id gone since the submission fails the job). */
static int glossaries_get(run *r, fy_glossary **g, int cap, fy_error *err)
{
    int n = 0, rc = 0;
    for (const char *p = r->info.glossary; *p && !rc;) {
        size_t len = strcspn(p, ",");
        char id[FY_GSTORE_ID_MAX];
        if (len >= sizeof id)
            rc = fy_err(err, FY_ENOTFOUND, "no glossary '%.40s...'", p);
        else if (len) {
            memcpy(id, p, len);
            id[len] = '\0';
            rc = glossary_add(r, id, g, &n, cap, err);
        }
        p += len + (p[len] == ',');
    }
    if (!rc) return n;
    while (n > 0) fy_glossary_unref(g[--n]);
    fy_err_prefix(err, "glossary_id");
    return rc;
}

int run_prepare(run *r, fy_document *doc, const unsigned char *done, fy_error *err)
{
    fy_jobs *js = r->js;
    r->doc = doc;
    fy_glossary *g[FY_GSTORE_DICTS_MAX];
    int ng = glossaries_get(r, g, FY_GSTORE_DICTS_MAX, err);
    if (ng < 0) return ng;
    fy_docjob_options o = {0};
    o.source = r->info.detected[0] ? r->info.detected : r->info.source;
    o.target = r->info.target;
    o.batch_chars = js->o.batch_chars;
    o.background = 1;
    o.queue_share = 2 * (size_t)(js->o.parallel > 0 ? js->o.parallel : 1);
    o.done = done;
    o.glossaries = (const struct fy_glossary *const *)g;
    o.nglossaries = (size_t)ng;
    fy_docjob_callbacks cb = {run_on_progress, run_on_batch, r, run_on_unit};
    r->dj = fy_docjob_new(js->reg, js->sched, doc, &o, &cb, err);
    while (ng > 0) fy_glossary_unref(g[--ng]); /* the batches are built */
    if (!r->dj) return err->code;
    size_t pages = fy_document_pages(doc), units = fy_document_units(doc);
    r->page_left = pages ? calloc(pages, sizeof *r->page_left) : NULL;
    if (pages && !r->page_left) return fy_err(err, FY_ENOMEM, "out of memory");
    for (size_t i = 0; i < units; i++) {
        size_t p = fy_document_unit_page(doc, i);
        if (p && p <= pages && !(done && done[i])) r->page_left[p - 1]++;
    }
    size_t total = fy_docjob_total(r->dj), pages_done = 0;
    for (size_t p = 0; p < pages; p++) pages_done += !r->page_left[p];
    pthread_mutex_lock(&js->lock);
    fy_job_info *in = &r->info;
    snprintf(in->detected, sizeof in->detected, "%s", fy_docjob_source(r->dj));
    snprintf(in->direction, sizeof in->direction, "%s", fy_docjob_direction(r->dj));
    snprintf(in->target, sizeof in->target, "%s", fy_docjob_target(r->dj));
    /* Resumed: the sentences counted at the start, less those still to do. */
    r->base = done && in->sentences > total ? in->sentences - total : 0;
    in->sentences = r->base + total;
    in->done = r->base;
    in->units = units;
    in->pages = pages;
    in->pages_done = pages_done;
    in->chars = fy_document_chars(doc);
    pthread_mutex_unlock(&js->lock);
    return 0;
}

static void set_unit(void *user, size_t i, const char *text, size_t len)
{
    run *r = ((void **)user)[0];
    unsigned char *done = ((void **)user)[1];
    fy_error err = {0};
    /* A checkpoint that does not fit its unit (another file under this
     * id: impossible; a damaged store) is translated again. */
    if (i < fy_document_units(r->doc) && !fy_document_set(r->doc, i, text, len, &err)) done[i] = 1;
}

/* A job begun before (another process, or before a restart): its state,
 * file and checkpoints from the store. 0, 1 when there is nothing to run
 * (it ended meanwhile), or an error with err. */
static int load(run *r, size_t *resumed, fy_error *err)
{
    fy_jobs *js = r->js;
    fy_jobstore *s = js->store;
    char *state = NULL, *data = NULL;
    size_t len = 0;
    int rc = s->ops->get_state(s, r->id, &state, err);
    fy_job_info info;
    if (!rc) rc = jobs_state_decode(state, &info, err);
    free(state);
    if (rc) return rc;
    pthread_mutex_lock(&js->lock);
    fy_jobs_watch w = r->watch;
    r->info = info;
    r->watch = w;
    pthread_mutex_unlock(&js->lock);
    if (info.state != FY_JOB_QUEUED && info.state != FY_JOB_TRANSLATING) return 1;
    rc = s->ops->get_source(s, r->id, &data, &len, err);
    int fmt = -1;
    for (int f = 0; f < FY_DOC_NFORMATS; f++)
        if (!strcmp(fy_docfmt_get(f)->name, info.format)) fmt = f;
    if (!rc && fmt < 0) rc = fy_err(err, FY_EFORMAT, "unknown format '%s'", info.format);
    fy_document *doc = rc ? NULL : fy_document_read(fmt, data, len, &js->o.limits, err);
    free(data);
    if (!doc) return rc ? rc : err->code;
    if (info.bilingual && fy_document_set_bilingual(doc, 1, err)) {
        fy_document_free(doc);
        return err->code;
    }
    size_t units = fy_document_units(doc);
    unsigned char *done = calloc(units ? units : 1, 1);
    r->doc = doc;
    void *ctx[2] = {r, done};
    rc = done ? s->ops->get_units(s, r->id, set_unit, ctx, err)
              : fy_err(err, FY_ENOMEM, "out of memory");
    *resumed = 0;
    for (size_t i = 0; !rc && i < units; i++) *resumed += done[i];
    r->doc = NULL;
    if (!rc)
        rc = run_prepare(r, doc, done, err);
    else
        fy_document_free(doc);
    free(done);
    return rc;
}

/* ---- running ----------------------------------------------------------------------- */

/* The test hook of fy_jobs_options: stops the process at the checkpoint
 * asked for. */
static void test_stop(fy_jobs *js)
{
    int at = js->o.test_stop_after_checkpoints;
    if (at && atomic_fetch_add(&js->checkpoints, 1) + 1 == at) raise(SIGSTOP);
}

/* Stores the units of the last step (kept for the next try when the store
 * fails: a checkpoint lost only costs their translation again). */
static void checkpoint(run *r)
{
    if (!r->ck_n) return;
    fy_jobstore *s = r->js->store;
    fy_error err = {0};
    if (s->ops->put_units(s, r->id, r->ck_idx, (const char *const *)r->ck_text, r->ck_len, r->ck_n,
                          &err)) {
        if (r->ck_n < 4096) return;
        jobs_log(r->js, "document job %s: checkpoints not stored (%s)", r->id, err.msg);
    } else {
        test_stop(r->js);
    }
    ck_clear(r);
}

static void log_gone(run *r, const char *what)
{
    jobs_log(r->js, "document job %s: %s elsewhere; this run stops without storing anything", r->id,
             what);
}

/* Is the job still this run's? A run that stalled past its lease (a
 * stopped or starved process) while the ticker could not renew it may
 * find the job taken over by another replica, or even finished there (its
 * lease then free again, so that renewing it succeeds): either way the job
 * is no longer this run's to store anything in. Asked before the periodic
 * state and the result are stored; should a takeover still slip in
 * between, both runs write the same bytes (the file depends only on the
 * upload and its translations). */
static int still_ours(run *r)
{
    fy_jobs *js = r->js;
    fy_jobstore *s = js->store;
    fy_error err = {0};
    int got = s->ops->lease(s, r->id, js->o.lease_ms, &err);
    char *text = NULL;
    fy_job_info info;
    int open = 1;
    if (got == 1 && !s->ops->get_state(s, r->id, &text, &err) &&
        !jobs_state_decode(text, &info, &err))
        open = info.state == FY_JOB_QUEUED || info.state == FY_JOB_TRANSLATING;
    free(text);
    if (got != 0 && open) return 1; /* a store error: as before, the store decides */
    log_gone(r, got == 0 ? "its lease went to another server" : "it ended");
    return 0;
}

/* Stops the run here, leaving the job to the process that has it. */
static int let_go(run *r)
{
    fy_jobs *js = r->js;
    pthread_mutex_lock(&js->lock);
    r->leased = 0;
    pthread_mutex_unlock(&js->lock);
    js->store->ops->unlease(js->store, r->id); /* not held: harmless */
    pthread_mutex_lock(&js->lock);
    tell_end(r);
    pthread_mutex_unlock(&js->lock);
    return 1;
}

static int finish(run *r)
{
    fy_jobs *js = r->js;
    fy_error err = {0};
    char *out = NULL;
    size_t len = 0;
    if (fy_document_write(r->doc, &out, &len, &err)) return fail(r, err.code, err.msg);
    if (!still_ours(r)) {
        free(out);
        return let_go(r);
    }
    int rc = js->store->ops->put_result(js->store, r->id, out, len, js->o.ttl_s, &err);
    free(out);
    if (rc) return fail(r, rc, err.msg);
    pthread_mutex_lock(&js->lock);
    r->info.result_bytes = len;
    r->info.done = r->info.sentences;
    r->info.pages_done = r->info.pages;
    pthread_mutex_unlock(&js->lock);
    return end(r, FY_JOB_DONE);
}

/* Collects the batch that ended and submits the next. */
static int step(run *r)
{
    fy_jobs *js = r->js;
    fy_error err = {0};
    pthread_mutex_lock(&js->lock);
    r->over = 0;
    pthread_mutex_unlock(&js->lock);
    int rc = fy_docjob_step(r->dj, &err);
    checkpoint(r);
    if (rc == 1) return finish(r);
    if (rc < 0) return fail(r, rc, err.msg);
    int save = fy_now_ms() - r->saved_ms >= SAVE_EVERY_MS;
    if (save && !still_ours(r)) {
        pthread_mutex_lock(&js->lock); /* the drop: fy_docjob cancelled, let go */
        r->drop = 1;
        run_ready(r);
        pthread_mutex_unlock(&js->lock);
        return 0;
    }
    int saved = save ? run_save(r, 1, &err) : 0;
    if (saved == 1) log_gone(r, "it ended"); /* since still_ours: the store refused it */
    if (saved == 1 || saved == FY_ENOTFOUND) {
        pthread_mutex_lock(&js->lock); /* removed or ended meanwhile: stop */
        r->drop = 1;
        run_ready(r);
        pthread_mutex_unlock(&js->lock);
        return 0;
    }
    pthread_mutex_lock(&js->lock);
    if (r->over || r->cancel || r->drop)
        run_ready(r);
    else
        r->phase = RUN_WAIT;
    pthread_mutex_unlock(&js->lock);
    return 0;
}

static int start(run *r)
{
    fy_jobs *js = r->js;
    fy_error err = {0};
    int rc = 0;
    size_t resumed = 0;
    if (!r->dj) {
        rc = load(r, &resumed, &err);
        if (rc == 1) return 1; /* over already */
        if (rc) return fail(r, rc, err.msg);
        int c = js->store->ops->canceled(js->store, r->id, NULL);
        if (c == 1) return end(r, FY_JOB_CANCELED);
        jobs_log(js, "document job %s taken up: %zu of %zu paragraphs translated before", r->id,
                 resumed, fy_document_units(r->doc));
        pthread_mutex_lock(&js->lock);
        js->st.resumed++;
        pthread_mutex_unlock(&js->lock);
    }
    /* Created here with its lease, this process may have stalled before
     * its first turn. */
    if (!still_ours(r)) return let_go(r);
    pthread_mutex_lock(&js->lock);
    r->info.state = FY_JOB_TRANSLATING;
    if (!r->info.started_ms) r->info.started_ms = fy_wall_ms();
    r->started = 1;
    r->t0_ms = fy_now_ms();
    r->done0 = r->info.done;
    r->renewed_ms = r->t0_ms;
    js->st.started++;
    pthread_mutex_unlock(&js->lock);
    int saved = run_save(r, 1, &err);
    if (saved == FY_ENOTFOUND) return 1; /* removed meanwhile */
    if (saved == 1) {                    /* ended since still_ours, while this process stalled */
        log_gone(r, "it ended");
        return let_go(r);
    }
    return step(r);
}

int run_turn(run *r)
{
    fy_jobs *js = r->js;
    pthread_mutex_lock(&js->lock);
    int leased = r->leased;
    pthread_mutex_unlock(&js->lock);
    if (!leased) {
        fy_error err = {0};
        int got = js->store->ops->lease(js->store, r->id, js->o.lease_ms, &err);
        if (got < 0) jobs_log(js, "document job %s: no lease (%s)", r->id, err.msg);
        if (got != 1) return 1; /* another replica runs it */
    }
    pthread_mutex_lock(&js->lock);
    r->leased = 1;
    int cancel = r->cancel, drop = r->drop;
    if (drop) r->leased = 0;
    pthread_mutex_unlock(&js->lock);
    if (drop) { /* left as it is in the store: another process goes on with it */
        if (r->dj) fy_docjob_cancel(r->dj);
        js->store->ops->unlease(js->store, r->id);
        pthread_mutex_lock(&js->lock);
        tell_end(r);
        pthread_mutex_unlock(&js->lock);
        return 1;
    }
    if (cancel) return end(r, FY_JOB_CANCELED);
    if (!r->started) return start(r);
    return step(r);
}
