/* scheduler.c - one queue of sentences, N workers, batches by length.
 *
 * Locks: the scheduler lock guards the queue, the active-job list and the
 * counters; each job's lock guards its results and callbacks. The order is
 * always scheduler lock, then job lock. Jobs are reference counted: the
 * caller holds one, every queued or in-flight sentence one, and the
 * active-job list one, so a job lives until the last of them lets go.
 */
#include "translate/scheduler.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { ITEM_NONE, ITEM_QUEUED, ITEM_INFLIGHT };

typedef struct item {
    struct item *prev, *next; /* queue links while queued */
    fy_job *job;
    char *text; /* trimmed copy */
    int64_t enqueued_us;
    int tokens;
    int state; /* ITEM_*, under the scheduler lock */
} item;

struct fy_job {
    fy_scheduler *s;
    atomic_int refs;
    pthread_mutex_t lock;
    size_t n, next_emit; /* sentences delivered in order so far */
    char **out;          /* [n] translations, NULL until known */
    item *items;         /* [n] queue entries (text NULL for cache hits) */
    int done, canceled, status;
    fy_error err;
    int64_t deadline_ms;
    fy_job_callbacks cb;
    struct fy_job *prev_active, *next_active;
};

typedef struct worker {
    fy_scheduler *s;
    pthread_t thread;
    void *state;
    item **cand;      /* [4 * max_batch_sentences] candidates */
    item **batch;     /* [max_batch_sentences] */
    const char **src; /* [max_batch_sentences] */
    char **out;       /* [max_batch_sentences] */
    int *codes;       /* [max_batch_sentences] per-sentence error codes */
    fy_error *errs;   /* [max_batch_sentences] and their messages */
    int started;
} worker;

struct fy_scheduler {
    fy_scheduler_options o;
    char *model;
    pthread_mutex_t lock;
    pthread_cond_t work;   /* queue grew or stopping */
    pthread_cond_t reaper; /* stopping */
    item *head, *tail;
    size_t depth;
    long queued_tokens;
    size_t in_flight;
    int idle; /* workers waiting for work */
    fy_job *active;
    int stop;
    worker *workers;
    pthread_t reaper_thread;
    int reaper_started;
    fy_scheduler_stats st;
};

const int fy_sched_hist_bounds[FY_SCHED_HIST - 1] = {1, 2, 4, 8, 16, 32, 64, 128};

int64_t fy_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static struct timespec abs_time_us(int64_t us)
{
    struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000};
    return ts;
}

void fy_scheduler_options_default(fy_scheduler_options *o)
{
    memset(o, 0, sizeof *o);
    o->queue_max = 1024;
    o->max_batch_tokens = 2048;
    o->max_batch_sentences = 32;
    o->window_us = 2000;
}

/* ---- jobs ---------------------------------------------------------------- */

static void job_unref(fy_job *j)
{
    if (!j || atomic_fetch_sub(&j->refs, 1) != 1) return;
    for (size_t i = 0; i < j->n; i++) {
        free(j->out[i]);
        free(j->items[i].text);
    }
    free(j->out);
    free(j->items);
    pthread_mutex_destroy(&j->lock);
    free(j);
}

/* Emits the translations now contiguous from next_emit, then completion.
 * Job lock held. */
static void job_emit(fy_job *j)
{
    if (j->done) return;
    while (j->next_emit < j->n && j->out[j->next_emit]) {
        if (j->cb.on_sentence) j->cb.on_sentence(j->cb.user, j->next_emit, j->out[j->next_emit]);
        j->next_emit++;
    }
    if (j->next_emit == j->n) {
        j->done = 1;
        if (j->cb.on_done) j->cb.on_done(j->cb.user, 0);
    }
}

/* Ends a job with an error. Job lock held. */
static void job_fail(fy_job *j, int code, const char *msg)
{
    if (j->done) return;
    j->done = 1;
    j->status = code;
    fy_err(&j->err, code, "%s", msg);
    if (j->cb.on_done) j->cb.on_done(j->cb.user, code);
}

/* Takes a job's still-queued sentences off the queue; scheduler lock held.
 * Returns how many references the caller must drop (after unlocking). */
/* Takes a queued item out of the queue (lock held); the caller sets its state. */
static void queue_unlink(fy_scheduler *s, item *it)
{
    if (it->prev)
        it->prev->next = it->next;
    else
        s->head = it->next;
    if (it->next)
        it->next->prev = it->prev;
    else
        s->tail = it->prev;
    it->prev = it->next = NULL;
    s->depth--;
    s->queued_tokens -= it->tokens;
}

static int job_dequeue(fy_scheduler *s, fy_job *j)
{
    int drop = 0;
    for (size_t i = 0; i < j->n; i++) {
        item *it = &j->items[i];
        if (it->state != ITEM_QUEUED) continue;
        queue_unlink(s, it);
        it->state = ITEM_NONE;
        drop++;
    }
    return drop;
}

/* Fails job j with code; scheduler lock held. Returns refs to drop. */
static int job_expire(fy_scheduler *s, fy_job *j, int code, const char *msg)
{
    int drop = job_dequeue(s, j);
    pthread_mutex_lock(&j->lock);
    if (!j->done) {
        if (code == FY_ETIMEOUT)
            s->st.timeouts++;
        else if (code == FY_ECANCELED)
            s->st.canceled++;
    }
    job_fail(j, code, msg);
    pthread_mutex_unlock(&j->lock);
    return drop;
}

static void drop_refs(fy_job *j, int n)
{
    while (n-- > 0) job_unref(j);
}

void fy_job_cancel(fy_job *j)
{
    if (!j) return;
    fy_scheduler *s = j->s;
    pthread_mutex_lock(&s->lock);
    int drop = job_dequeue(s, j);
    pthread_mutex_lock(&j->lock);
    if (!j->done) s->st.canceled++;
    j->done = 1; /* silently: the caller asked, no on_done */
    j->canceled = 1;
    if (!j->status) j->status = FY_ECANCELED;
    pthread_mutex_unlock(&j->lock);
    pthread_mutex_unlock(&s->lock);
    drop_refs(j, drop);
}

int fy_job_done(fy_job *j)
{
    pthread_mutex_lock(&j->lock);
    int d = j->done;
    pthread_mutex_unlock(&j->lock);
    return d;
}

int fy_job_status(fy_job *j, fy_error *err)
{
    pthread_mutex_lock(&j->lock);
    int st = j->status;
    if (st && err) *err = j->err;
    pthread_mutex_unlock(&j->lock);
    return st;
}

const char *fy_job_result(fy_job *j, size_t i)
{
    pthread_mutex_lock(&j->lock);
    const char *r = i < j->next_emit ? j->out[i] : NULL;
    pthread_mutex_unlock(&j->lock);
    return r;
}

void fy_job_release(fy_job *j)
{
    job_unref(j);
}

/* ---- submission ------------------------------------------------------------ */

static char *trim_copy(const char *text)
{
    static const char ws[] = " \t\r\n\f\v";
    while (*text && strchr(ws, *text)) text++;
    size_t len = strlen(text);
    while (len && strchr(ws, text[len - 1])) len--;
    char *c = malloc(len + 1);
    if (c) {
        memcpy(c, text, len);
        c[len] = '\0';
    }
    return c;
}

/* Fills out[] from the cache (or "" for empty sentences) and prepares the
 * queue items of the rest; returns how many must be queued, or -1. */
static long job_prepare(fy_scheduler *s, fy_job *j, const char *const *sentences)
{
    long misses = 0;
    for (size_t i = 0; i < j->n; i++) {
        char *t = trim_copy(sentences[i]);
        if (!t) return -1;
        if (!*t) {
            j->out[i] = t;
            continue;
        }
        j->out[i] = fy_cache_get(s->o.cache, s->model, t);
        if (j->out[i]) {
            free(t);
            continue;
        }
        item *it = &j->items[i];
        it->job = j;
        it->text = t;
        long tok = s->o.count_tokens ? s->o.count_tokens(s->o.ctx, t, strlen(t))
                                     : (long)(strlen(t) / 3 + 1);
        it->tokens = tok < 1 ? 1 : tok > 1 << 20 ? 1 << 20 : (int)tok;
        misses++;
    }
    return misses;
}

fy_job *fy_scheduler_submit(fy_scheduler *s, const char *const *sentences, size_t n,
                            int64_t deadline_ms, const fy_job_callbacks *cb, fy_error *err)
{
    fy_job *j = calloc(1, sizeof *j);
    if (!j) goto nomem;
    pthread_mutex_init(&j->lock, NULL);
    atomic_init(&j->refs, 1);
    j->s = s;
    j->n = n;
    j->deadline_ms = deadline_ms;
    if (cb) j->cb = *cb;
    j->out = calloc(n ? n : 1, sizeof *j->out);
    j->items = calloc(n ? n : 1, sizeof *j->items);
    if (!j->out || !j->items) goto nomem;
    long misses = job_prepare(s, j, sentences);
    if (misses < 0) goto nomem;

    pthread_mutex_lock(&s->lock);
    if (s->stop || s->depth + (size_t)misses > s->o.queue_max) {
        int stopping = s->stop;
        if (!stopping) s->st.rejected++;
        size_t depth = s->depth;
        pthread_mutex_unlock(&s->lock);
        if (stopping)
            fy_err(err, FY_ECANCELED, "the server is shutting down");
        else
            fy_err(err, FY_EBUSY, "queue full (%zu of %zu sentences waiting), try again later",
                   depth, s->o.queue_max);
        job_unref(j);
        return NULL;
    }
    int64_t t = now_us();
    for (size_t i = 0; i < n; i++) {
        item *it = &j->items[i];
        if (!it->text) continue;
        it->state = ITEM_QUEUED;
        it->enqueued_us = t;
        it->prev = s->tail;
        if (s->tail)
            s->tail->next = it;
        else
            s->head = it;
        s->tail = it;
        s->depth++;
        s->queued_tokens += it->tokens;
    }
    atomic_fetch_add(&j->refs, (int)misses + 1); /* items + active list */
    j->next_active = s->active;
    if (s->active) s->active->prev_active = j;
    s->active = j;
    s->st.jobs++;
    s->st.cache_sentences += n - (size_t)misses;
    if (misses) pthread_cond_broadcast(&s->work);
    pthread_mutex_unlock(&s->lock);

    pthread_mutex_lock(&j->lock);
    job_emit(j);
    pthread_mutex_unlock(&j->lock);
    return j;
nomem:
    job_unref(j);
    fy_err(err, FY_ENOMEM, "out of memory");
    return NULL;
}

/* ---- workers ------------------------------------------------------------- */

static int cmp_tokens(const void *a, const void *b)
{
    const item *x = *(item *const *)a, *y = *(item *const *)b;
    if (x->tokens != y->tokens) return x->tokens < y->tokens ? -1 : 1;
    return x->enqueued_us < y->enqueued_us ? -1 : x->enqueued_us > y->enqueued_us;
}

/* Picks a batch around the oldest sentence: among the first candidates
 * sorted by length, grow a run of neighbours of similar length while the
 * padded cost (count x longest) stays within the token budget. Scheduler
 * lock held; the chosen items leave the queue. Returns the batch size. */
static size_t pick_batch(fy_scheduler *s, worker *w)
{
    size_t max_sent = (size_t)s->o.max_batch_sentences, nc = 0;
    /* Idle workers share what is waiting: latency beats a bigger batch when
     * a core would otherwise sit still. */
    size_t share = (s->depth + (size_t)s->idle - 1) / (size_t)(s->idle > 0 ? s->idle : 1);
    if (share >= 1 && share < max_sent) max_sent = share;
    for (item *it = s->head; it && nc < 4 * max_sent; it = it->next) w->cand[nc++] = it;
    item *anchor = s->head;
    qsort(w->cand, nc, sizeof *w->cand, cmp_tokens);
    size_t p = 0;
    while (w->cand[p] != anchor) p++;
    size_t lo = p, hi = p;
    long longest = anchor->tokens, budget = s->o.max_batch_tokens;
    while (hi - lo + 1 < max_sent) {
        int left = lo > 0, right = hi + 1 < nc;
        long lt = left ? w->cand[lo - 1]->tokens : 0, rt = right ? w->cand[hi + 1]->tokens : 0;
        long count = (long)(hi - lo + 2);
        int right_fits = right && count * (rt > longest ? rt : longest) <= budget;
        int left_fits = left && count * longest <= budget;
        if (left_fits && (!right_fits || anchor->tokens - lt <= rt - anchor->tokens))
            lo--;
        else if (right_fits)
            longest = rt > longest ? rt : longest, hi++;
        else
            break;
    }
    size_t n = 0;
    for (size_t i = lo; i <= hi; i++) {
        item *it = w->cand[i];
        queue_unlink(s, it);
        it->state = ITEM_INFLIGHT;
        w->batch[n++] = it;
    }
    return n;
}

/* Expires jobs at the head of the queue whose deadline passed; lock held.
 * Dropping their references here cannot free them: the active list holds one. */
static void expire_head(fy_scheduler *s)
{
    int64_t now = fy_now_ms();
    while (s->head && s->head->job->deadline_ms && s->head->job->deadline_ms <= now) {
        fy_job *j = s->head->job;
        int drop = job_expire(s, j, FY_ETIMEOUT, "deadline passed before translation finished");
        drop_refs(j, drop);
    }
}

/* Waits for work and the batching window; returns the batch size, 0 to stop. */
static size_t wait_batch(fy_scheduler *s, worker *w)
{
    pthread_mutex_lock(&s->lock);
    s->idle++;
    for (;;) {
        if (s->stop) break;
        expire_head(s);
        if (!s->head) {
            pthread_cond_wait(&s->work, &s->lock);
            continue;
        }
        int64_t until = s->head->enqueued_us + s->o.window_us;
        int full = s->depth >= (size_t)s->o.max_batch_sentences ||
                   s->queued_tokens >= s->o.max_batch_tokens;
        if (!full && now_us() < until) {
            struct timespec ts = abs_time_us(until);
            pthread_cond_timedwait(&s->work, &s->lock, &ts);
            continue;
        }
        size_t n = pick_batch(s, w);
        s->idle--;
        s->in_flight += n;
        pthread_mutex_unlock(&s->lock);
        return n;
    }
    s->idle--;
    pthread_mutex_unlock(&s->lock);
    return 0;
}

/* Stores one sentence's result (taking translation) or its failure into its
 * job. Returns 1 when this failed the job. */
static int deliver(item *it, char *translation, int code, const char *msg)
{
    fy_job *j = it->job;
    int failed = 0;
    pthread_mutex_lock(&j->lock);
    if (!j->done && translation) {
        j->out[it - j->items] = translation;
        translation = NULL;
        job_emit(j);
    } else if (!j->done) {
        job_fail(j, code, msg);
        failed = 1;
    }
    pthread_mutex_unlock(&j->lock);
    free(translation);
    return failed;
}

/* Translates the batch; a failed batch is retried one sentence at a time
 * so that one bad sentence does not sink its neighbours. Afterwards out[i]
 * is NULL exactly for the sentences that failed (code and message in
 * w->codes / w->errs). */
static void translate_batch(fy_scheduler *s, worker *w, size_t n)
{
    fy_error err = {0};
    for (size_t i = 0; i < n; i++) w->out[i] = NULL;
    int rc = s->o.translate(s->o.ctx, w->state, w->src, n, w->out, &err);
    if (rc >= 0) {
        for (size_t i = 0; i < n; i++) {
            w->codes[i] = w->out[i] ? 0 : FY_EFORMAT;
            if (!w->out[i]) fy_err(&w->errs[i], FY_EFORMAT, "the engine returned no translation");
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        free(w->out[i]);
        w->out[i] = NULL;
    }
    if (n == 1) {
        w->codes[0] = rc;
        w->errs[0] = err;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        fy_error e1 = {0};
        int r1 = s->o.translate(s->o.ctx, w->state, &w->src[i], 1, &w->out[i], &e1);
        if (r1 < 0) {
            free(w->out[i]);
            w->out[i] = NULL;
        }
        w->codes[i] = r1 < 0 ? r1 : 0;
        w->errs[i] = e1;
    }
}

static void run_batch(fy_scheduler *s, worker *w, size_t n)
{
    long tokens = 0;
    for (size_t i = 0; i < n; i++) {
        w->src[i] = w->batch[i]->text;
        tokens += w->batch[i]->tokens;
    }
    translate_batch(s, w, n);
    for (size_t i = 0; i < n; i++)
        if (w->out[i]) fy_cache_put(s->o.cache, s->model, w->src[i], w->out[i]);
    /* Counters first, so that a client woken by its answer already sees them. */
    pthread_mutex_lock(&s->lock);
    s->in_flight -= n;
    s->st.batches++;
    s->st.batch_sentences += n;
    s->st.batch_tokens += (uint64_t)tokens;
    int b = 0;
    while (b < FY_SCHED_HIST - 1 && (int)n > fy_sched_hist_bounds[b]) b++;
    s->st.batch_hist[b]++;
    pthread_mutex_unlock(&s->lock);
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        if (w->out[i])
            deliver(w->batch[i], w->out[i], 0, NULL);
        else
            failed += deliver(w->batch[i], NULL, w->codes[i], w->errs[i].msg);
    }
    pthread_mutex_lock(&s->lock);
    s->st.failed += (uint64_t)failed;
    for (size_t i = 0; i < n; i++) w->batch[i]->state = ITEM_NONE;
    pthread_mutex_unlock(&s->lock);
    for (size_t i = 0; i < n; i++) job_unref(w->batch[i]->job);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    size_t n;
    while ((n = wait_batch(w->s, w)) > 0) run_batch(w->s, w, n);
    return NULL;
}

/* Fails timed-out jobs even while every worker is busy; forgets done ones. */
static void *reaper_main(void *arg)
{
    fy_scheduler *s = arg;
    pthread_mutex_lock(&s->lock);
    while (!s->stop) {
        struct timespec ts = abs_time_us(now_us() + 10000);
        pthread_cond_timedwait(&s->reaper, &s->lock, &ts);
        int64_t now = fy_now_ms();
        for (fy_job *j = s->active, *next; j; j = next) {
            next = j->next_active;
            pthread_mutex_lock(&j->lock);
            int done = j->done;
            pthread_mutex_unlock(&j->lock);
            if (!done && j->deadline_ms && j->deadline_ms <= now) {
                drop_refs(j, job_expire(s, j, FY_ETIMEOUT,
                                        "deadline passed before translation finished"));
                done = 1;
            }
            if (!done) continue;
            if (j->prev_active)
                j->prev_active->next_active = j->next_active;
            else
                s->active = j->next_active;
            if (j->next_active) j->next_active->prev_active = j->prev_active;
            job_unref(j); /* the active list's reference; items hold their own */
        }
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* ---- lifecycle ----------------------------------------------------------- */

static int worker_init(fy_scheduler *s, worker *w, fy_error *err)
{
    size_t m = (size_t)s->o.max_batch_sentences;
    w->s = s;
    w->cand = calloc(4 * m, sizeof *w->cand);
    w->batch = calloc(m, sizeof *w->batch);
    w->src = calloc(m, sizeof *w->src);
    w->out = calloc(m, sizeof *w->out);
    w->codes = calloc(m, sizeof *w->codes);
    w->errs = calloc(m, sizeof *w->errs);
    if (!w->cand || !w->batch || !w->src || !w->out || !w->codes || !w->errs)
        return fy_err(err, FY_ENOMEM, "scheduler: out of memory");
    if (s->o.worker_new) {
        w->state = s->o.worker_new(s->o.ctx, err);
        if (!w->state) return err ? err->code : FY_ENOMEM;
    }
    if (pthread_create(&w->thread, NULL, worker_main, w))
        return fy_err(err, FY_ENOMEM, "scheduler: cannot start a worker thread");
    w->started = 1;
    return 0;
}

fy_scheduler *fy_scheduler_open(const fy_scheduler_options *o, fy_error *err)
{
    if (!o || !o->translate) {
        fy_err(err, FY_EINVAL, "scheduler: no translate function");
        return NULL;
    }
    fy_scheduler *s = calloc(1, sizeof *s);
    if (!s) {
        fy_err(err, FY_ENOMEM, "scheduler: out of memory");
        return NULL;
    }
    s->o = *o;
    if (s->o.threads <= 0) s->o.threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (s->o.threads <= 0) s->o.threads = 1;
    if (!s->o.queue_max) s->o.queue_max = 1024;
    if (s->o.max_batch_tokens <= 0) s->o.max_batch_tokens = 2048;
    if (s->o.max_batch_sentences <= 0) s->o.max_batch_sentences = 32;
    if (s->o.window_us < 0) s->o.window_us = 0;
    pthread_mutex_init(&s->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* deadlines are monotonic */
    pthread_cond_init(&s->work, &ca);
    pthread_cond_init(&s->reaper, &ca);
    pthread_condattr_destroy(&ca);
    s->model = strdup(o->model ? o->model : "");
    s->workers = calloc((size_t)s->o.threads, sizeof *s->workers);
    if (!s->model || !s->workers) {
        fy_err(err, FY_ENOMEM, "scheduler: out of memory");
        goto fail;
    }
    for (int i = 0; i < s->o.threads; i++)
        if (worker_init(s, &s->workers[i], err) < 0) goto fail;
    if (pthread_create(&s->reaper_thread, NULL, reaper_main, s)) {
        fy_err(err, FY_ENOMEM, "scheduler: cannot start the reaper thread");
        goto fail;
    }
    s->reaper_started = 1;
    return s;
fail:
    fy_scheduler_free(s);
    return NULL;
}

void fy_scheduler_free(fy_scheduler *s)
{
    if (!s) return;
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    pthread_cond_broadcast(&s->work);
    pthread_cond_broadcast(&s->reaper);
    pthread_mutex_unlock(&s->lock);
    for (int i = 0; s->workers && i < s->o.threads; i++) {
        worker *w = &s->workers[i];
        if (w->started) pthread_join(w->thread, NULL);
        if (w->state && s->o.worker_free) s->o.worker_free(w->state);
        free(w->cand);
        free(w->batch);
        free(w->src);
        free(w->out);
        free(w->codes);
        free(w->errs);
    }
    if (s->reaper_started) pthread_join(s->reaper_thread, NULL);
    pthread_mutex_lock(&s->lock);
    while (s->head) {
        fy_job *j = s->head->job;
        drop_refs(j, job_expire(s, j, FY_ECANCELED, "the server is shutting down"));
    }
    for (fy_job *j = s->active, *next; j; j = next) {
        next = j->next_active;
        job_unref(j);
    }
    s->active = NULL;
    pthread_mutex_unlock(&s->lock);
    pthread_cond_destroy(&s->work);
    pthread_cond_destroy(&s->reaper);
    pthread_mutex_destroy(&s->lock);
    free(s->workers);
    free(s->model);
    free(s);
}

void fy_scheduler_get_stats(fy_scheduler *s, fy_scheduler_stats *out)
{
    pthread_mutex_lock(&s->lock);
    *out = s->st;
    out->queue_depth = s->depth;
    out->queue_max = s->o.queue_max;
    out->in_flight = s->in_flight;
    out->threads = s->o.threads;
    pthread_mutex_unlock(&s->lock);
}
