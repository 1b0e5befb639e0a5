/* jobs.c - the document jobs of this process: submitting (the document
 * read and checked at once, stored, queued), the job threads that run
 * them (jobs_run.c) at most `parallel` at a time, the ticker that keeps
 * leases alive, sees cancellations asked on other replicas, takes up jobs
 * nobody runs (after a restart, or a replica's death) and deletes expired
 * ones, and the questions: a job's state, its result, the list.
 */
#include "translate/jobs_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "util/clock.h"

enum { SWEEP_EVERY_MS = 10000, CANCEL_WAIT_MS = 5000 };

void fy_jobs_options_default(fy_jobs_options *o)
{
    memset(o, 0, sizeof *o);
    fy_doc_limits_default(&o->limits);
    o->ttl_s = 86400;
    o->parallel = 2;
    o->lease_ms = 30000;
    o->scan_ms = 1000;
}

void jobs_log(fy_jobs *js, const char *fmt, ...)
{
    if (!js->o.log) return;
    char line[FY_ERROR_MSG_MAX + 128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    js->o.log(js->o.log_user, line);
}

int jobs_ttl(const fy_jobs *js, const fy_job_info *info)
{
    int open = info->state == FY_JOB_QUEUED || info->state == FY_JOB_TRANSLATING;
    return open ? 0 : js->o.ttl_s;
}

void jobs_mark_finished(fy_jobs *js, const char *id)
{
    for (size_t i = 0; i < js->nfinished; i++)
        if (!strcmp(js->finished[i], id)) return;
    if (fy_vec_reserve((void **)&js->finished, &js->finished_cap, js->nfinished + 1,
                       sizeof *js->finished))
        return; /* only costs a look at its state again */
    memcpy(js->finished[js->nfinished++], id, 33);
}

static int is_finished(const fy_jobs *js, const char *id)
{
    for (size_t i = 0; i < js->nfinished; i++)
        if (!strcmp(js->finished[i], id)) return 1;
    return 0;
}

static void forget_finished(fy_jobs *js, const char *id)
{
    for (size_t i = 0; i < js->nfinished; i++)
        if (!strcmp(js->finished[i], id)) {
            memcpy(js->finished[i], js->finished[--js->nfinished], 33);
            return;
        }
}

/* The run of id here, or NULL; lock held. */
static run *find_run(fy_jobs *js, const char *id)
{
    for (run *r = js->runs; r; r = r->next)
        if (!strcmp(r->id, id)) return r;
    return NULL;
}

static int is_queued(fy_jobs *js, const char *id)
{
    for (queued *q = js->q_head; q; q = q->next)
        if (!strcmp(q->id, id)) return 1;
    for (size_t i = 0; i < js->nmaking; i++) /* being submitted here */
        if (!strcmp(js->making[i], id)) return 1;
    return 0;
}

/* A submission's id from before it is stored until it is run or queued:
 * the ticker must not take it up meanwhile (on disk this process's lease
 * would look like its own). Lock held; -1 when out of memory. */
static int making_add(fy_jobs *js, const char *id)
{
    if (fy_vec_reserve((void **)&js->making, &js->making_cap, js->nmaking + 1, sizeof *js->making))
        return -1;
    memcpy(js->making[js->nmaking++], id, 33);
    return 0;
}

static void making_remove(fy_jobs *js, const char *id)
{
    for (size_t i = 0; i < js->nmaking; i++)
        if (!strcmp(js->making[i], id)) {
            memcpy(js->making[i], js->making[--js->nmaking], 33);
            return;
        }
}

/* Adds r to the runs; lock held. */
static void add_run(fy_jobs *js, run *r)
{
    r->prev = NULL;
    r->next = js->runs;
    if (js->runs) js->runs->prev = r;
    js->runs = r;
    js->running += !r->watched;
}

static void remove_run(fy_jobs *js, run *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        js->runs = r->next;
    if (r->next) r->next->prev = r->prev;
    js->running -= !r->watched;
}

/* Starts queued jobs while there is room; lock held. */
static void dispatch(fy_jobs *js)
{
    while (!js->stop && js->running < (size_t)js->o.parallel && js->q_head) {
        queued *q = js->q_head;
        js->q_head = q->next;
        if (!js->q_head) js->q_tail = NULL;
        js->nqueued--;
        run *r = find_run(js, q->id) ? NULL : run_new(js, q->id, NULL);
        free(q);
        if (!r) continue;
        add_run(js, r);
        run_ready(r);
    }
}

/* ---- the job threads --------------------------------------------------------------- */

static void *worker_main(void *arg)
{
    fy_jobs *js = arg;
    pthread_mutex_lock(&js->lock);
    for (;;) {
        while (!js->stop && !js->ready_head) pthread_cond_wait(&js->ready_cv, &js->lock);
        if (js->stop) break;
        run *r = js->ready_head;
        js->ready_head = r->rnext;
        if (!js->ready_head) js->ready_tail = NULL;
        r->in_ready = 0;
        r->phase = RUN_BUSY;
        pthread_mutex_unlock(&js->lock);
        int over = run_turn(r);
        pthread_mutex_lock(&js->lock);
        if (!over) continue;
        remove_run(js, r);
        pthread_cond_broadcast(&js->idle_cv);
        dispatch(js);
        pthread_mutex_unlock(&js->lock);
        run_free(r);
        pthread_mutex_lock(&js->lock);
    }
    pthread_mutex_unlock(&js->lock);
    return NULL;
}

/* ---- the ticker ------------------------------------------------------------------- */

/* Stops the run of id here (cancel: ends it as cancelled; else drop:
 * leaves the job as it is in the store): at once when its batch is in
 * flight (the batch leaves the queue), else at its thread's next turn.
 * Returns the run (only to compare: it may be freed) or NULL. */
static run *stop_here(fy_jobs *js, const char *id, int cancel)
{
    pthread_mutex_lock(&js->lock);
    run *r = find_run(js, id);
    if (r) {
        r->cancel |= cancel;
        r->drop |= !cancel;
    }
    if (r && r->phase == RUN_WAIT) {
        r->phase = RUN_STOPPING; /* no job thread steps it meanwhile */
        pthread_mutex_unlock(&js->lock);
        fy_docjob_cancel(r->dj);
        pthread_mutex_lock(&js->lock);
        run_ready(r);
    }
    pthread_mutex_unlock(&js->lock);
    return r;
}

/* Renews the leases of the jobs running here (from the moment each holds
 * it: a job taken up or created with its lease may take a while to start)
 * and looks for cancellations asked elsewhere. A lease lost (this process
 * stalled past it and another took the job) stops the run without
 * touching the job. */
static void keep_up(fy_jobs *js)
{
    enum { MAX = 64 };
    char ids[MAX][33];
    int n = 0;
    pthread_mutex_lock(&js->lock);
    for (run *r = js->runs; r && n < MAX; r = r->next)
        if (r->leased) memcpy(ids[n++], r->id, 33);
    pthread_mutex_unlock(&js->lock);
    for (int i = 0; i < n; i++) {
        fy_jobstore *s = js->store;
        int lost = s->ops->lease(s, ids[i], js->o.lease_ms, NULL) == 0;
        int canceled = !lost && s->ops->canceled(s, ids[i], NULL) == 1;
        if (lost) jobs_log(js, "document job %s: its lease went to another server", ids[i]);
        if (lost || canceled) stop_here(js, ids[i], canceled);
    }
}

/* Takes up jobs of the store that nobody runs, while there is room. */
static void take_up(fy_jobs *js)
{
    pthread_mutex_lock(&js->lock);
    int room = !js->stop && js->running + js->nqueued < (size_t)js->o.parallel;
    pthread_mutex_unlock(&js->lock);
    if (!room) return;
    char(*ids)[33] = NULL;
    size_t n = 0;
    if (js->store->ops->list(js->store, 1, &ids, &n, NULL)) return;
    for (size_t i = 0; i < n; i++) {
        pthread_mutex_lock(&js->lock);
        int skip = find_run(js, ids[i]) || is_queued(js, ids[i]) || is_finished(js, ids[i]);
        room = !js->stop && js->running < (size_t)js->o.parallel;
        pthread_mutex_unlock(&js->lock);
        if (!room) break;
        if (skip) continue;
        char *text = NULL;
        fy_job_info info;
        if (js->store->ops->get_state(js->store, ids[i], &text, NULL) ||
            jobs_state_decode(text, &info, NULL)) {
            free(text);
            continue;
        }
        free(text);
        int open = info.state == FY_JOB_QUEUED || info.state == FY_JOB_TRANSLATING;
        int got = open ? js->store->ops->lease(js->store, ids[i], js->o.lease_ms, NULL) : 0;
        pthread_mutex_lock(&js->lock);
        if (!open) jobs_mark_finished(js, ids[i]);
        run *r = got == 1 && !find_run(js, ids[i]) ? run_new(js, ids[i], &info) : NULL;
        if (r) {
            r->leased = 1;
            add_run(js, r);
            run_ready(r);
        }
        pthread_mutex_unlock(&js->lock);
        if (got == 1 && !r) js->store->ops->unlease(js->store, ids[i]);
    }
    free(ids);
}

/* Deletes the finished jobs whose time is up (and, in Redis, the index
 * entries of jobs whose keys expired). */
static void sweep(fy_jobs *js)
{
    char(*ids)[33] = NULL;
    size_t n = 0;
    if (js->store->ops->list(js->store, 0, &ids, &n, NULL)) return;
    int64_t now = fy_wall_ms();
    for (size_t i = 0; i < n; i++) {
        pthread_mutex_lock(&js->lock);
        int here = find_run(js, ids[i]) || is_queued(js, ids[i]);
        pthread_mutex_unlock(&js->lock);
        if (here) continue;
        char *text = NULL;
        fy_job_info info;
        fy_error err = {0};
        int rc = js->store->ops->get_state(js->store, ids[i], &text, &err);
        int gone = rc == FY_ENOTFOUND || (!rc && jobs_state_decode(text, &info, NULL));
        free(text);
        int expired = !rc && !gone && info.expires_ms && info.expires_ms <= now;
        if (!gone && !expired) continue;
        js->store->ops->remove(js->store, ids[i], NULL);
        pthread_mutex_lock(&js->lock);
        forget_finished(js, ids[i]);
        js->st.expired += expired;
        pthread_mutex_unlock(&js->lock);
    }
    free(ids);
}

static void *ticker_main(void *arg)
{
    fy_jobs *js = arg;
    int64_t next_keep = 0;
    pthread_mutex_lock(&js->lock);
    while (!js->stop) {
        pthread_mutex_unlock(&js->lock);
        int64_t now = fy_now_ms();
        if (now >= next_keep) {
            keep_up(js);
            next_keep = now + js->o.lease_ms / 3;
        }
        take_up(js);
        if (now >= js->next_sweep_ms) {
            sweep(js);
            /* Every 10 s, or at half the ttl when that is shorter. */
            int64_t every = (int64_t)js->o.ttl_s * 500;
            every = every < 1000 ? 1000 : every > SWEEP_EVERY_MS ? SWEEP_EVERY_MS : every;
            js->next_sweep_ms = now + every;
        }
        pthread_mutex_lock(&js->lock);
        if (js->stop) break;
        struct timespec ts = fy_timespec_us((fy_now_ms() + js->o.scan_ms) * 1000);
        pthread_cond_timedwait(&js->tick_cv, &js->lock, &ts);
    }
    pthread_mutex_unlock(&js->lock);
    return NULL;
}

/* ---- life -------------------------------------------------------------------------- */

fy_jobs *fy_jobs_open(fy_registry *reg, fy_scheduler *sched, const fy_jobs_options *o,
                      fy_error *err)
{
    fy_jobs *js = calloc(1, sizeof *js);
    if (!js) {
        fy_jobstore_free(o->store);
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    js->reg = reg;
    js->sched = sched;
    js->o = *o;
    js->store = o->store;
    if (js->o.ttl_s <= 0) js->o.ttl_s = 86400;
    if (js->o.parallel <= 0) js->o.parallel = 2;
    if (js->o.lease_ms < 300) js->o.lease_ms = 30000;
    if (js->o.scan_ms <= 0) js->o.scan_ms = 1000;
    js->st.store = js->store->ops->name;
    pthread_mutex_init(&js->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&js->ready_cv, &ca);
    pthread_cond_init(&js->tick_cv, &ca);
    pthread_cond_init(&js->idle_cv, &ca);
    pthread_condattr_destroy(&ca);
    for (int i = 0; i < 2; i++) {
        if (pthread_create(&js->threads[i], NULL, worker_main, js)) goto fail;
        js->nthreads++;
    }
    if (pthread_create(&js->ticker, NULL, ticker_main, js)) goto fail;
    js->ticker_started = 1;
    return js;
fail:
    fy_err(err, FY_ENOMEM, "document jobs: cannot start a thread");
    fy_jobs_free(js);
    return NULL;
}

void fy_jobs_free(fy_jobs *js)
{
    if (!js) return;
    pthread_mutex_lock(&js->lock);
    js->stop = 1;
    pthread_cond_broadcast(&js->ready_cv);
    pthread_cond_broadcast(&js->tick_cv);
    pthread_mutex_unlock(&js->lock);
    for (int i = 0; i < js->nthreads; i++) pthread_join(js->threads[i], NULL);
    if (js->ticker_started) pthread_join(js->ticker, NULL);
    /* Nobody steps a run now: each is left in the store as it is (its
     * batch in flight cancelled, its lease given back for the others). */
    while (js->runs) {
        run *r = js->runs;
        remove_run(js, r);
        if (r->leased) js->store->ops->unlease(js->store, r->id);
        if (r->watch.on_end) r->watch.on_end(r->watch.user, r->info.state);
        run_free(r);
    }
    while (js->q_head) {
        queued *q = js->q_head;
        js->q_head = q->next;
        free(q);
    }
    fy_jobstore_free(js->store);
    free(js->finished);
    free(js->making);
    pthread_cond_destroy(&js->ready_cv);
    pthread_cond_destroy(&js->tick_cv);
    pthread_cond_destroy(&js->idle_cv);
    pthread_mutex_destroy(&js->lock);
    free(js);
}

/* ---- submitting ---------------------------------------------------------------------- */

static int random_id(char id[33])
{
    unsigned char b[16];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) return -1;
    for (int i = 0; i < 16; i++) snprintf(id + 2 * i, 3, "%02x", b[i]);
    return 0;
}

/* Reads data as a document and makes r's docjob over it. */
static int read_doc(fy_jobs *js, run *r, const fy_job_spec *sp, const char *data, size_t len,
                    fy_error *err)
{
    if (!len)
        return fy_err(err, FY_EINVAL,
                      "the document is empty (0 bytes): there is nothing to translate");
    const char *name = sp->filename && *sp->filename ? sp->filename : NULL;
    int fmt = fy_docfmt_detect(name, sp->content_type, data, len, err);
    if (fmt < 0) return fmt;
    fy_document *doc = fy_document_read(fmt, data, len, &js->o.limits, err);
    if (!doc) return err->code;
    if (sp->bilingual && fy_document_set_bilingual(doc, 1, err)) {
        fy_document_free(doc);
        return err->code;
    }
    fy_job_info *in = &r->info;
    snprintf(in->format, sizeof in->format, "%s", fy_docfmt_get(fmt)->name);
    snprintf(in->mime, sizeof in->mime, "%s", fy_docfmt_get(fmt)->mime);
    return run_prepare(r, doc, NULL, err);
}

/* The job's first state, from the spec and its docjob. */
static void first_info(run *r, const fy_job_spec *sp, size_t len)
{
    fy_job_info *in = &r->info;
    in->state = FY_JOB_QUEUED;
    in->bytes = len;
    in->bilingual = sp->bilingual;
    in->created_ms = fy_wall_ms();
    in->seconds_remaining = -1;
    snprintf(in->filename, sizeof in->filename, "%s", sp->filename ? sp->filename : "");
    snprintf(in->source, sizeof in->source, "%s",
             sp->source && strcmp(sp->source, "auto") ? sp->source : "");
    snprintf(in->client, sizeof in->client, "%s", sp->client ? sp->client : "");
    snprintf(in->key, sizeof in->key, "%s", sp->key ? sp->key : "");
    snprintf(in->glossary, sizeof in->glossary, "%s", sp->glossary ? sp->glossary : "");
    char given[300];
    snprintf(given, sizeof given, "%s", in->filename);
    if (!given[0]) snprintf(given, sizeof given, "document.%s", in->format);
    fy_document_name(given, in->detected, in->target, in->name, sizeof in->name);
    for (size_t i = 0; i < fy_document_notes(r->doc); i++)
        jobs_note(in, fy_document_note(r->doc, i));
    if (sp->same_is_error && in->detected[0] && !strcmp(in->detected, in->target)) {
        in->state = FY_JOB_ERROR;
        in->code = FY_EINVAL;
        snprintf(in->error, sizeof in->error, "Source and target language are equal.");
        in->finished_ms = in->created_ms;
    }
}

int fy_jobs_submit(fy_jobs *js, const fy_job_spec *sp, const char *data, size_t len,
                   const fy_jobs_watch *watch, fy_job_info *info, fy_error *err)
{
    run *r = run_new(js, "", NULL);
    if (!r) return fy_err(err, FY_ENOMEM, "out of memory");
    snprintf(r->info.target, sizeof r->info.target, "%s", sp->target ? sp->target : "");
    snprintf(r->info.source, sizeof r->info.source, "%s", sp->source ? sp->source : "");
    /* Before the docjob is made: its batches take the glossaries. */
    snprintf(r->info.glossary, sizeof r->info.glossary, "%s", sp->glossary ? sp->glossary : "");
    int rc = random_id(r->id) ? fy_err(err, FY_EIO, "no random numbers for an id") : 0;
    if (!rc) rc = read_doc(js, r, sp, data, len, err);
    if (rc) {
        run_free(r);
        return rc;
    }
    memcpy(r->info.id, r->id, 33);
    first_info(r, sp, len);
    int open = r->info.state == FY_JOB_QUEUED;
    if (!open) r->info.expires_ms = r->info.finished_ms + (int64_t)js->o.ttl_s * 1000;
    char *state = jobs_state_encode(&r->info);
    fy_jobstore *s = js->store;
    /* Started now: watched, or with a free place (leased as it is stored);
     * else it waits its turn and is read again from the store then (its
     * document is not kept). */
    pthread_mutex_lock(&js->lock);
    int now = open && (watch || js->running < (size_t)js->o.parallel);
    rc = making_add(js, r->id) ? fy_err(err, FY_ENOMEM, "out of memory") : 0;
    pthread_mutex_unlock(&js->lock);
    if (!rc)
        rc = state ? s->ops->create(s, r->id, state, data, len, jobs_ttl(js, &r->info),
                                    now ? js->o.lease_ms : 0, err)
                   : fy_err(err, FY_ENOMEM, "out of memory");
    if (!rc && !open) rc = s->ops->put_state(s, r->id, state, 0, js->o.ttl_s, err);
    free(state);
    if (rc) {
        pthread_mutex_lock(&js->lock);
        making_remove(js, r->id);
        pthread_mutex_unlock(&js->lock);
        run_free(r);
        return rc;
    }
    if (info) *info = r->info;
    pthread_mutex_lock(&js->lock);
    making_remove(js, r->id);
    if (!open) jobs_mark_finished(js, r->id);
    if (now) {
        r->leased = 1;
        r->watched = watch != NULL;
        r->info.watched = r->watched;
        if (watch) r->watch = *watch;
        add_run(js, r);
        run_ready(r);
        r = NULL;
    } else if (open) {
        queued *q = calloc(1, sizeof *q);
        if (q) { /* else the ticker takes it up */
            memcpy(q->id, r->id, 33);
            if (js->q_tail)
                js->q_tail->next = q;
            else
                js->q_head = q;
            js->q_tail = q;
            js->nqueued++;
        }
        dispatch(js);
    }
    pthread_mutex_unlock(&js->lock);
    run_free(r);
    return 0;
}

/* ---- questions ------------------------------------------------------------------------- */

void fy_jobs_unwatch(fy_jobs *js, const char *id)
{
    pthread_mutex_lock(&js->lock);
    run *r = find_run(js, id);
    if (r) r->watch = (fy_jobs_watch){0};
    pthread_mutex_unlock(&js->lock);
}

/* The live info of a job running here (with its estimate): 1, or 0 when
 * it does not run here; lock held. */
static int live_info(fy_jobs *js, const char *id, fy_job_info *info)
{
    run *r = find_run(js, id);
    if (!r || !r->started) return 0;
    *info = r->info;
    int64_t ms = fy_now_ms() - r->t0_ms;
    size_t did = info->done > r->done0 ? info->done - r->done0 : 0;
    info->seconds_remaining = -1;
    if (info->state == FY_JOB_TRANSLATING && did && ms > 0)
        info->seconds_remaining =
            (double)(info->sentences - info->done) * (double)ms / 1000.0 / (double)did;
    return 1;
}

int fy_jobs_get(fy_jobs *js, const char *id, fy_job_info *info, fy_error *err)
{
    if (!fy_jobstore_id_ok(id)) return fy_err(err, FY_ENOTFOUND, "no such document job");
    pthread_mutex_lock(&js->lock);
    int live = live_info(js, id, info);
    pthread_mutex_unlock(&js->lock);
    if (live) return 0;
    char *text = NULL;
    int rc = js->store->ops->get_state(js->store, id, &text, err);
    if (!rc) rc = jobs_state_decode(text, info, err);
    free(text);
    if (rc) return rc;
    if (info->expires_ms && info->expires_ms <= fy_wall_ms())
        return fy_err(err, FY_ENOTFOUND, "no such document job (it expired)");
    return 0;
}

int fy_jobs_result(fy_jobs *js, const char *id, char **data, size_t *len, fy_job_info *info,
                   fy_error *err)
{
    fy_job_info tmp;
    if (!info) info = &tmp;
    int rc = fy_jobs_get(js, id, info, err);
    if (rc) return rc;
    if (info->state != FY_JOB_DONE)
        return fy_err(err, FY_EBUSY, "the document is not translated (it is %s)",
                      fy_job_state_name(info->state));
    return js->store->ops->get_result(js->store, id, data, len, err);
}

/* Cancels the run of id here and waits (a while) for it to end. 1 when
 * it ran here. */
static int cancel_here(fy_jobs *js, const char *id)
{
    run *r = stop_here(js, id, 1);
    if (!r) return 0;
    pthread_mutex_lock(&js->lock);
    int64_t until = fy_now_ms() + CANCEL_WAIT_MS;
    while (find_run(js, id) == r && fy_now_ms() < until) {
        struct timespec ts = fy_timespec_us(until * 1000);
        pthread_cond_timedwait(&js->idle_cv, &js->lock, &ts);
    }
    pthread_mutex_unlock(&js->lock);
    return 1;
}

/* Takes id out of the local queue: 1 when it was there. Lock held. */
static int unqueue(fy_jobs *js, const char *id)
{
    for (queued **p = &js->q_head, *prev = NULL; *p; prev = *p, p = &(*p)->next) {
        if (strcmp((*p)->id, id)) continue;
        queued *q = *p;
        *p = q->next;
        if (js->q_tail == q) js->q_tail = prev;
        js->nqueued--;
        free(q);
        return 1;
    }
    return 0;
}

int fy_jobs_cancel(fy_jobs *js, const char *id, fy_job_info *info, fy_error *err)
{
    fy_job_info tmp;
    if (!info) info = &tmp;
    int rc = fy_jobs_get(js, id, info, err);
    if (rc) return rc;
    if (info->state != FY_JOB_QUEUED && info->state != FY_JOB_TRANSLATING) return 0;
    fy_jobstore *s = js->store;
    if (!cancel_here(js, id)) {
        pthread_mutex_lock(&js->lock);
        unqueue(js, id);
        pthread_mutex_unlock(&js->lock);
        /* Nobody runs it: cancelled here and now. Else its runner sees the
         * mark at its next look. */
        int got = s->ops->lease(s, id, js->o.lease_ms, err);
        if (got < 0) return got;
        if (!got) return s->ops->cancel(s, id, err);
        run *r = run_new(js, id, info);
        if (!r) {
            s->ops->unlease(s, id);
            return fy_err(err, FY_ENOMEM, "out of memory");
        }
        r->leased = 1;
        int64_t now = fy_wall_ms();
        r->info.state = FY_JOB_CANCELED;
        r->info.finished_ms = now;
        r->info.expires_ms = now + (int64_t)js->o.ttl_s * 1000;
        r->info.seconds_remaining = -1;
        rc = run_save(r, 0, err);
        s->ops->unlease(s, id);
        run_free(r);
        if (rc) return rc;
    }
    return fy_jobs_get(js, id, info, err);
}

int fy_jobs_remove(fy_jobs *js, const char *id, fy_error *err)
{
    fy_job_info info;
    int rc = fy_jobs_get(js, id, &info, err);
    if (rc == FY_ENOTFOUND && fy_jobstore_id_ok(id)) rc = 0; /* expired: its files may remain */
    if (rc) return rc;
    if (info.state == FY_JOB_QUEUED || info.state == FY_JOB_TRANSLATING)
        fy_jobs_cancel(js, id, NULL, NULL);
    rc = js->store->ops->remove(js->store, id, err);
    pthread_mutex_lock(&js->lock);
    forget_finished(js, id);
    pthread_mutex_unlock(&js->lock);
    return rc;
}

static int newest_first(const void *a, const void *b)
{
    const fy_job_info *x = a, *y = b;
    return x->created_ms < y->created_ms ? 1 : x->created_ms > y->created_ms ? -1 : 0;
}

int fy_jobs_list(fy_jobs *js, const char *client, fy_job_info **list, size_t *n, fy_error *err)
{
    char(*ids)[33] = NULL;
    size_t cnt = 0, m = 0;
    int rc = js->store->ops->list(js->store, 0, &ids, &cnt, err);
    if (rc) return rc;
    fy_job_info *out = calloc(cnt ? cnt : 1, sizeof *out);
    if (!out) {
        free(ids);
        return fy_err(err, FY_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < cnt; i++) {
        if (fy_jobs_get(js, ids[i], &out[m], NULL)) continue; /* gone meanwhile */
        if (!client || !strcmp(out[m].client, client)) m++;
    }
    free(ids);
    qsort(out, m, sizeof *out, newest_first);
    *list = out;
    *n = m;
    return 0;
}

void fy_jobs_get_stats(fy_jobs *js, fy_jobs_stats *st)
{
    uint64_t bytes;
    size_t jobs;
    js->store->ops->usage(js->store, &bytes, &jobs);
    pthread_mutex_lock(&js->lock);
    *st = js->st;
    st->running = 0;
    for (run *r = js->runs; r; r = r->next) st->running++;
    st->queued = js->nqueued;
    pthread_mutex_unlock(&js->lock);
    st->store_bytes = bytes;
    st->store_jobs = jobs;
}
