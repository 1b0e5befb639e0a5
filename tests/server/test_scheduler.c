/* test_scheduler.c - the scheduler with injected fake engines: order,
 * batching across concurrent jobs, queue limit, deadlines, cancellation,
 * failures, the cache, shutdown, several engines in one pool, pivot routes,
 * forgetting an engine, a stream's urgent waves, background priority, and beams (batches of one
 * beam, alternatives, their cache entries). Also run under TSan (-DFANYI_TSAN=ON). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "translate/alts.h"
#include "translate/scheduler.h"
#include "util/clock.h"
#include "../check.h"

/* ---- the fake engine: "[" + sentence + "]", optionally slow or gated ---- */

typedef struct fake {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int gate_closed;
    char gate_only; /* when set, the gate holds only batches whose first sentence starts so */
    const atomic_int *abort;   /* the last worker's abort flag (worker_abort; under lock) */
    atomic_int abort_at_entry; /* *abort when the last batch came in */
    int delay_us;
    char open, close; /* brackets it puts around a sentence: "[...]" */
    atomic_int calls, workers, freed, max_batch, mixed, entered;
    char log[512];                     /* batches as "a,b|c|", each sorted (under lock) */
    atomic_int beam_calls, wrong_beam; /* translate_beam calls; batches of mixed beams */
    atomic_int trims;                  /* worker_trim calls on its workers' states */
    void *lost_device;                 /* a batch on this device fails with FY_EDEVICE */
    void *small_device;                /* no worker state can be made on this device */
    atomic_int lost_calls;             /* batches that failed so */
    atomic_int refused;                /* worker states refused on small_device */
    atomic_int counted;                /* count_tokens calls (when set: fake_count) */
    fy_engine engine;
    fy_route route; /* this engine alone */
} fake;

/* The fake engine whose route submit() uses. */
static fake *current;

static void fake_worker_abort(void *worker, const atomic_int *flag)
{
    (void)worker;
    pthread_mutex_lock(&current->lock);
    current->abort = flag;
    pthread_mutex_unlock(&current->lock);
}

/* The last worker's abort flag (NULL before the first batch). */
static const atomic_int *abort_flag(fake *f)
{
    pthread_mutex_lock(&f->lock);
    const atomic_int *a = f->abort;
    pthread_mutex_unlock(&f->lock);
    return a;
}

/* Per-worker state the engine would own. */
typedef struct fake_state {
    fake *f;
    void *device;
} fake_state;

static void *fake_worker_new(void *ctx, void *device, fy_error *err)
{
    fake *f = ctx;
    if (device && device == f->small_device) {
        atomic_fetch_add(&f->refused, 1);
        fy_err(err, FY_ENOMEM, "the model does not fit");
        return NULL;
    }
    atomic_fetch_add(&f->workers, 1);
    fake_state *st = malloc(sizeof *st);
    if (st) st->f = f, st->device = device;
    return st;
}

static void fake_worker_trim(void *w)
{
    fake_state *st = w;
    atomic_fetch_add(&st->f->trims, 1);
}

static atomic_int freed_states;

static void fake_worker_free(void *w)
{
    atomic_fetch_add(&freed_states, 1);
    free(w);
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Appends the batch, sorted (the order inside a batch is the scheduler's
 * business), to f->log. */
static void fake_log(fake *f, const char *const *src, size_t n)
{
    const char *sorted[64];
    if (n > 64) n = 64;
    memcpy(sorted, src, n * sizeof *src);
    qsort(sorted, n, sizeof *sorted, by_text);
    pthread_mutex_lock(&f->lock);
    for (size_t i = 0; i < n; i++) {
        size_t at = strlen(f->log);
        snprintf(f->log + at, sizeof f->log - at, "%s%s", sorted[i], i + 1 < n ? "," : "|");
    }
    pthread_mutex_unlock(&f->lock);
}

static int fake_translate(void *ctx, void *worker, const char *const *src, size_t n, char **out,
                          float *gap, fy_error *err)
{
    fake *f = ctx;
    if (!worker) return fy_err(err, FY_EINVAL, "no worker state");
    fake_state *st = worker;
    if (st->device && st->device == f->lost_device) {
        atomic_fetch_add(&f->lost_calls, 1);
        return fy_err(err, FY_EDEVICE, "device lost");
    }
    for (size_t i = 0; i < n; i++) gap[i] = (float)strlen(src[i]);
    const atomic_int *abort = abort_flag(f);
    if (abort) atomic_store(&f->abort_at_entry, atomic_load(abort));
    atomic_fetch_add(&f->entered, 1);
    fake_log(f, src, n);
    pthread_mutex_lock(&f->lock);
    while (f->gate_closed && (!f->gate_only || (n && src[0][0] == f->gate_only)))
        pthread_cond_wait(&f->cond, &f->lock);
    pthread_mutex_unlock(&f->lock);
    atomic_fetch_add(&f->calls, 1);
    int m = atomic_load(&f->max_batch);
    while ((int)n > m && !atomic_compare_exchange_weak(&f->max_batch, &m, (int)n)) {
    }
    if (f->delay_us) usleep((useconds_t)f->delay_us);
    for (size_t i = 0; i < n; i++)
        if (strstr(src[i], "FAIL")) return fy_err(err, FY_EINVAL, "cannot translate '%s'", src[i]);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(src[i]);
        out[i] = malloc(len + 3);
        out[i][0] = f->open;
        memcpy(out[i] + 1, src[i], len);
        out[i][len + 1] = f->close;
        out[i][len + 2] = '\0';
    }
    return 0;
}

/* Sentences starting with 'g' are sent greedy; the rest with beam 4 (see
 * test_beams). */
static int fake_greedy(void *ctx, void *worker, const char *const *src, size_t n, char **out,
                       float *gap, fy_error *err)
{
    fake *f = ctx;
    for (size_t i = 0; i < n; i++)
        if (src[i][0] != 'g') atomic_fetch_add(&f->wrong_beam, 1);
    return fake_translate(ctx, worker, src, n, out, gap, err);
}

/* "[src]" + "/4", and two alternatives that need the cache's escaping. */
static int fake_beam(void *ctx, void *worker, const char *const *src, size_t n, int beam,
                     char **out, char ***alts, float *gap, fy_error *err)
{
    fake *f = ctx;
    atomic_fetch_add(&f->beam_calls, 1);
    for (size_t i = 0; i < n; i++)
        if (beam != 4 || src[i][0] == 'g') atomic_fetch_add(&f->wrong_beam, 1);
    int rc = fake_translate(ctx, worker, src, n, out, gap, err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        size_t len = strlen(out[i]);
        out[i] = realloc(out[i], len + 3);
        memcpy(out[i] + len, "/4", 3);
        alts[i] = calloc(3, sizeof *alts[i]);
        alts[i][0] = strdup("one\\n");
        alts[i][1] = malloc(len + 8);
        snprintf(alts[i][1], len + 8, "2\n%s\\", src[i]);
    }
    return rc;
}

static void fake_init_as(fake *f, const char *name, char open, char close)
{
    memset(f, 0, sizeof *f);
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->cond, NULL);
    f->open = open;
    f->close = close;
    f->engine = (fy_engine){fake_translate, fake_worker_new,   fake_worker_free, NULL, f, name,
                            NULL,           fake_worker_abort, fake_worker_trim, NULL};
    f->route = (fy_route){{&f->engine}, 1, NULL};
}

/* A later leg's token count, counted: the engine is in use. */
static long fake_count(void *ctx, const char *text, size_t len)
{
    (void)text;
    atomic_fetch_add(&((fake *)ctx)->counted, 1);
    return (long)len;
}

static void fake_init(fake *f)
{
    fake_init_as(f, "fake", '[', ']');
}

static void fake_gate(fake *f, int closed)
{
    pthread_mutex_lock(&f->lock);
    f->gate_closed = closed;
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->lock);
}

static fy_scheduler *open_sched_ex(fake *f, int threads, int express, int max_batch, size_t queue,
                                   fy_cache *cache)
{
    fy_scheduler_options o;
    fy_scheduler_options_default(&o);
    o.threads = threads;
    o.express = express;
    if (max_batch) o.max_batch_sentences = max_batch;
    o.queue_max = queue;
    o.window_us = 5000;
    o.cache = cache;
    current = f;
    fy_error err = {0};
    fy_scheduler *s = fy_scheduler_open(&o, &err);
    if (!s) fprintf(stderr, "open: %s\n", err.msg);
    return s;
}

static fy_scheduler *open_sched(fake *f, int threads, size_t queue, fy_cache *cache)
{
    return open_sched_ex(f, threads, 0, 0, queue, cache);
}

/* ---- a waiter: collects callbacks ---- */

typedef struct waiter {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done, status, order_ok;
    size_t next;
    atomic_int calls_after_cancel;
} waiter;

static void on_sentence(void *user, size_t i, const char *t, fy_confidence conf)
{
    waiter *w = user;
    (void)t, (void)conf;
    pthread_mutex_lock(&w->lock);
    if (i != w->next) w->order_ok = 0;
    w->next = i + 1;
    pthread_mutex_unlock(&w->lock);
}

static void on_done(void *user, int status)
{
    waiter *w = user;
    pthread_mutex_lock(&w->lock);
    w->done++;
    w->status = status;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

static void waiter_init(waiter *w)
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    w->order_ok = 1;
}

static int waiter_wait(waiter *w)
{
    pthread_mutex_lock(&w->lock);
    while (!w->done) pthread_cond_wait(&w->cond, &w->lock);
    int st = w->status;
    pthread_mutex_unlock(&w->lock);
    return st;
}

/* n sentences of one job, each with its wave (waves NULL: all 0) and beam. */
static fy_job *submit_in(fy_scheduler *s, const fy_route *route, const char *const *src,
                         const int *waves, size_t n, int beam, int64_t deadline, waiter *w,
                         fy_error *err)
{
    fy_job_callbacks cb = {on_sentence, on_done, w};
    fy_sentence_in in[16];
    for (size_t i = 0; i < n; i++)
        in[i] = (fy_sentence_in){src[i], 0, route, beam, waves ? waves[i] : 0, 0, NULL};
    return fy_scheduler_submit(s, in, n, deadline, &cb, err);
}

/* n background sentences of one job (fy_sentence_in.background). */
static fy_job *submit_background(fy_scheduler *s, const char *const *src, size_t n, waiter *w)
{
    fy_job_callbacks cb = {on_sentence, on_done, w};
    fy_sentence_in in[16];
    for (size_t i = 0; i < n; i++)
        in[i] = (fy_sentence_in){src[i], 0, &current->route, 1, 0, 1, NULL};
    return fy_scheduler_submit(s, in, n, 0, &cb, NULL);
}

static fy_job *submit_waves(fy_scheduler *s, const fy_route *route, const char *const *src,
                            const int *waves, size_t n, int64_t deadline, waiter *w, fy_error *err)
{
    return submit_in(s, route, src, waves, n, 1, deadline, w, err);
}

static fy_job *submit_beam(fy_scheduler *s, const fy_route *route, const char *const *src, size_t n,
                           int beam, int64_t deadline, waiter *w, fy_error *err)
{
    return submit_in(s, route, src, NULL, n, beam, deadline, w, err);
}

static fy_job *submit_via(fy_scheduler *s, const fy_route *route, const char *const *src, size_t n,
                          int64_t deadline, waiter *w, fy_error *err)
{
    return submit_in(s, route, src, NULL, n, 1, deadline, w, err);
}

/* Waits (5 s at most) until the engine has been called n times. */
static int wait_entered(fake *f, int n)
{
    for (int i = 0; i < 5000 && atomic_load(&f->entered) < n; i++) usleep(1000);
    return atomic_load(&f->entered) >= n;
}

static fy_job *submit(fy_scheduler *s, const char *const *src, size_t n, int64_t deadline,
                      waiter *w, fy_error *err)
{
    return submit_via(s, &current->route, src, n, deadline, w, err);
}

/* ---- tests ---- */

static void test_order(void)
{
    fake f;
    fake_init(&f);
    fy_scheduler *s = open_sched(&f, 3, 100, NULL);
    CHECK(s != NULL);
    CHECK(atomic_load(&f.workers) == 0); /* states are made on a worker's first batch */
    const char *src[] = {"一", "  二二  ", "三三三", "", "五"};
    waiter w;
    waiter_init(&w);
    fy_job *j = submit(s, src, 5, 0, &w, NULL);
    CHECK(j != NULL);
    CHECK(waiter_wait(&w) == 0);
    CHECK(w.order_ok && w.next == 5 && w.done == 1);
    CHECK(!strcmp(fy_job_result(j, 0), "[一]"));
    CHECK(!strcmp(fy_job_result(j, 1), "[二二]")); /* trimmed before the engine */
    CHECK(!strcmp(fy_job_result(j, 3), ""));       /* empty: no engine call */
    CHECK(!strcmp(fy_job_result(j, 4), "[五]"));
    CHECK(fy_job_done(j) && fy_job_status(j, NULL) == 0);
    CHECK(fy_job_gap(j, 0) == (float)strlen("一") && fy_job_gap(j, 3) == INFINITY);
    CHECK(atomic_load(&f.workers) >= 1 && atomic_load(&f.workers) <= 3);
    fy_job_release(j);
    /* zero sentences completes at once */
    waiter w0;
    waiter_init(&w0);
    j = submit(s, NULL, 0, 0, &w0, NULL);
    CHECK(j && w0.done == 1 && w0.status == 0);
    fy_job_release(j);
    fy_scheduler_free(s);
    fy_scheduler_free(NULL);
}

typedef struct client {
    fy_scheduler *s;
    int id, ok;
} client;

static void *client_main(void *arg)
{
    client *c = arg;
    char buf[3][32];
    const char *src[3];
    for (int k = 0; k < 3; k++) {
        snprintf(buf[k], sizeof buf[k], "句%d-%d", c->id, k);
        src[k] = buf[k];
    }
    waiter w;
    waiter_init(&w);
    fy_job *j = submit(c->s, src, 3, fy_now_ms() + 30000, &w, NULL);
    c->ok = j && waiter_wait(&w) == 0 && w.order_ok;
    for (int k = 0; c->ok && k < 3; k++) {
        char want[40];
        snprintf(want, sizeof want, "[%s]", src[k]);
        c->ok = !strcmp(fy_job_result(j, (size_t)k), want);
    }
    fy_job_release(j);
    return NULL;
}

/* Waits (10 s at most) until n sentences are queued or in flight. */
static int wait_submitted(fy_scheduler *s, size_t n)
{
    fy_scheduler_stats st = {0};
    for (int i = 0; i < 10000; i++) {
        fy_scheduler_get_stats(s, &st);
        if (st.queue_depth + st.in_flight >= n) return 1;
        usleep(1000);
    }
    return 0;
}

static void test_concurrent_batching(void)
{
    fake f;
    fake_init(&f);
    f.delay_us = 2000;
    fy_scheduler *s = open_sched(&f, 2, 1000, NULL);
    enum { N = 64 };
    pthread_t th[N];
    client c[N];
    /* The workers hold their first batches at the gate until every client
     * has submitted, so batching does not depend on how fast threads start
     * (slow under the thread sanitizer). */
    fake_gate(&f, 1);
    for (int i = 0; i < N; i++) {
        c[i] = (client){s, i, 0};
        pthread_create(&th[i], NULL, client_main, &c[i]);
    }
    CHECK(wait_submitted(s, 3 * N));
    fake_gate(&f, 0);
    int all = 1;
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        all &= c[i].ok;
    }
    CHECK(all);
    fy_scheduler_stats st;
    fy_scheduler_get_stats(s, &st);
    CHECK(st.batch_sentences == 3 * N);
    CHECK(st.batches > 0 && (double)st.batch_sentences / (double)st.batches > 8);
    CHECK(atomic_load(&f.max_batch) <= 32);
    uint64_t hist = 0;
    for (int b = 0; b < FY_SCHED_HIST; b++) hist += st.batch_hist[b];
    CHECK(hist == st.batches);
    CHECK(st.queue_depth == 0 && st.in_flight == 0);
    printf("64 clients x 3 sentences: %llu batches, mean size %.1f\n",
           (unsigned long long)st.batches, (double)st.batch_sentences / (double)st.batches);
    fy_scheduler_free(s);
}

static void test_queue_full(void)
{
    fake f;
    fake_init(&f);
    fake_gate(&f, 1);
    fy_scheduler *s = open_sched(&f, 1, 4, NULL);
    const char *a[] = {"甲", "乙"};
    const char *b[] = {"丙", "丁", "戊"};
    waiter wa, wb;
    waiter_init(&wa);
    waiter_init(&wb);
    fy_job *ja = submit(s, a, 2, 0, &wa, NULL);
    CHECK(wait_entered(&f, 1)); /* the worker took a's batch and blocks at the gate */
    fy_job *jb = submit(s, b, 3, 0, &wb, NULL);
    CHECK(ja && jb);
    const char *c[] = {"己", "庚"};
    waiter wc;
    waiter_init(&wc);
    fy_error err = {0};
    fy_job *jc = submit(s, c, 2, 0, &wc, &err);
    CHECK(jc == NULL && err.code == FY_EBUSY);
    CHECK(strstr(err.msg, "queue full") != NULL);
    fy_scheduler_stats st;
    fy_scheduler_get_stats(s, &st);
    CHECK(st.rejected == 1 && st.queue_depth == 3);
    fake_gate(&f, 0);
    CHECK(waiter_wait(&wa) == 0 && waiter_wait(&wb) == 0);
    fy_job_release(ja);
    fy_job_release(jb);
    fy_scheduler_free(s);
}

static void test_deadline_and_cancel(void)
{
    fake f;
    fake_init(&f);
    fake_gate(&f, 1);
    fy_scheduler *s = open_sched(&f, 1, 100, NULL);
    const char *a[] = {"慢"};
    waiter wa;
    waiter_init(&wa);
    fy_job *ja = submit(s, a, 1, 0, &wa, NULL); /* occupies the only worker */
    CHECK(wait_entered(&f, 1));
    const char *b[] = {"等", "待"};
    waiter wb;
    waiter_init(&wb);
    int64_t t0 = fy_now_ms();
    fy_job *jb = submit(s, b, 2, t0 + 30, &wb, NULL);
    CHECK(waiter_wait(&wb) == FY_ETIMEOUT);
    int64_t took = fy_now_ms() - t0;
    CHECK(took >= 30 && took < 30000); /* the gate stays shut: the deadline ended it */
    fy_error err = {0};
    CHECK(fy_job_status(jb, &err) == FY_ETIMEOUT && strstr(err.msg, "deadline"));
    fy_scheduler_stats st;
    fy_scheduler_get_stats(s, &st);
    CHECK(st.timeouts == 1 && st.queue_depth == 0); /* its sentences left the queue */

    const char *c[] = {"取", "消"};
    waiter wc;
    waiter_init(&wc);
    fy_job *jc = submit(s, c, 2, 0, &wc, NULL);
    fy_job_cancel(jc);
    fy_scheduler_get_stats(s, &st);
    CHECK(st.queue_depth == 0 && st.canceled == 1);
    fake_gate(&f, 0);
    CHECK(waiter_wait(&wa) == 0);
    usleep(20000);
    CHECK(wc.done == 0 && wc.next == 0); /* no callbacks after cancel */
    fy_job_release(ja);
    fy_job_release(jb);
    fy_job_release(jc);
    fy_scheduler_free(s);
}

static void test_failure_isolated(void)
{
    fake f;
    fake_init(&f);
    fake_gate(&f, 1);
    fy_scheduler *s = open_sched(&f, 1, 100, NULL);
    const char *blocker[] = {"挡"};
    waiter w0, wa, wb;
    waiter_init(&w0);
    waiter_init(&wa);
    waiter_init(&wb);
    fy_job *j0 = submit(s, blocker, 1, 0, &w0, NULL);
    CHECK(wait_entered(&f, 1));
    const char *a[] = {"好", "FAIL"}; /* queued together: one batch */
    const char *b[] = {"也好"};
    fy_job *ja = submit(s, a, 2, 0, &wa, NULL);
    fy_job *jb = submit(s, b, 1, 0, &wb, NULL);
    fake_gate(&f, 0);
    CHECK(waiter_wait(&wa) == FY_EINVAL);
    CHECK(waiter_wait(&wb) == 0);
    CHECK(!strcmp(fy_job_result(jb, 0), "[也好]"));
    fy_error err = {0};
    fy_job_status(ja, &err);
    CHECK(strstr(err.msg, "FAIL") != NULL);
    waiter_wait(&w0);
    fy_job_release(j0);
    fy_job_release(ja);
    fy_job_release(jb);
    fy_scheduler_free(s);
}

static void test_cache(void)
{
    fake f;
    fake_init(&f);
    fy_cache *cache = fy_cache_lru_new(1 << 20, NULL);
    fy_scheduler *s = open_sched(&f, 2, 100, cache);
    const char *a[] = {"缓存", "一下"};
    waiter wa, wb;
    waiter_init(&wa);
    waiter_init(&wb);
    fy_job *ja = submit(s, a, 2, 0, &wa, NULL);
    CHECK(waiter_wait(&wa) == 0);
    int calls = atomic_load(&f.calls);
    const char *b[] = {" 缓存 ", "一下"};
    fy_job *jb = submit(s, b, 2, 0, &wb, NULL);
    CHECK(wb.done == 1 && wb.status == 0); /* all hits: done before submit returned */
    CHECK(atomic_load(&f.calls) == calls);
    CHECK(!strcmp(fy_job_result(jb, 0), "[缓存]"));
    fy_scheduler_stats st;
    fy_scheduler_get_stats(s, &st);
    CHECK(st.cache_sentences == 2);
    fy_cache_stats cs;
    fy_cache_tier_stats(cache, &cs, 1);
    CHECK(cs.hits == 2 && cs.misses == 2);
    fy_job_release(ja);
    fy_job_release(jb);
    fy_scheduler_free(s);
    fy_cache_free(cache);
}

static void test_shutdown_with_queued(void)
{
    fake f;
    fake_init(&f);
    fake_gate(&f, 1);
    fy_scheduler *s = open_sched(&f, 1, 100, NULL);
    const char *a[] = {"甲"};
    const char *b[] = {"乙"};
    waiter wa, wb;
    waiter_init(&wa);
    waiter_init(&wb);
    fy_job *ja = submit(s, a, 1, 0, &wa, NULL);
    CHECK(wait_entered(&f, 1));
    fy_job *jb = submit(s, b, 1, 0, &wb, NULL);
    fake_gate(&f, 0); /* a finishes; b may or may not start before stop */
    fy_scheduler_free(s);
    CHECK(wa.done == 1 && wa.status == 0);
    CHECK(wb.done == 1 && (wb.status == 0 || wb.status == FY_ECANCELED));
    fy_job_release(ja);
    fy_job_release(jb);
}

/* Two engines share the pool: every batch is one engine's. */
static int mixed_translate(void *ctx, void *worker, const char *const *src, size_t n, char **out,
                           float *gap, fy_error *err)
{
    fake *f = ctx;
    for (size_t i = 0; i < n; i++)
        if ((src[i][0] == 'B') != (f->open == '<')) atomic_fetch_add(&f->mixed, 1);
    return fake_translate(ctx, worker, src, n, out, gap, err);
}

static void test_two_engines(void)
{
    fake a, b;
    fake_init_as(&a, "a", '[', ']');
    fake_init_as(&b, "b", '<', '>');
    a.engine.translate = b.engine.translate = mixed_translate;
    fy_scheduler *s = open_sched(&a, 2, 100, NULL);
    waiter wa, wb;
    waiter_init(&wa);
    waiter_init(&wb);
    const char *sa[] = {"A1", "A2", "A3", "A4"}, *sb[] = {"B1", "B2", "B3"};
    fy_job *ja = submit_via(s, &a.route, sa, 4, 0, &wa, NULL);
    fy_job *jb = submit_via(s, &b.route, sb, 3, 0, &wb, NULL);
    CHECK(waiter_wait(&wa) == 0 && waiter_wait(&wb) == 0);
    CHECK(!strcmp(fy_job_result(ja, 3), "[A4]") && !strcmp(fy_job_result(jb, 2), "<B3>"));
    CHECK(atomic_load(&a.mixed) == 0 && atomic_load(&b.mixed) == 0);
    fy_engine_stats st;
    fy_scheduler_engine_stats(s, &b.engine, &st);
    CHECK(st.sentences == 3 && st.queued == 0 && st.in_flight == 0);
    fy_job_release(ja);
    fy_job_release(jb);
    fy_scheduler_free(s);
}

static char *twice(const char *text, size_t len)
{
    char *o = malloc(2 * len + 1);
    if (o) memcpy(o, text, len), memcpy(o + len, text, len), o[2 * len] = '\0';
    return o;
}

/* A pivot: each sentence goes through a, then b; each leg is cached. */
static void test_pivot(void)
{
    fake a, b;
    fake_init_as(&a, "a", '[', ']');
    fake_init_as(&b, "b", '<', '>');
    fy_cache *cache = fy_cache_lru_new(1 << 20, NULL);
    fy_scheduler *s = open_sched(&a, 2, 100, cache);
    fy_route both = {{&a.engine, &b.engine}, 2, NULL};
    const char *src[] = {"x", "", "yy"};
    waiter w;
    waiter_init(&w);
    fy_job *j = submit_via(s, &both, src, 3, 0, &w, NULL);
    CHECK(waiter_wait(&w) == 0 && w.order_ok);
    CHECK(!strcmp(fy_job_result(j, 0), "<[x]>") && !strcmp(fy_job_result(j, 1), ""));
    CHECK(!strcmp(fy_job_result(j, 2), "<[yy]>"));
    CHECK(fy_job_gap(j, 2) == 2.0f); /* the smaller of the legs' gaps: "yy" vs "[yy]" */
    fy_job_release(j);
    /* The second leg alone is in the cache now: "[x]" through b. */
    const char *again[] = {"[x]"};
    waiter w2;
    waiter_init(&w2);
    int calls = atomic_load(&b.calls);
    j = submit_via(s, &b.route, again, 1, 0, &w2, NULL);
    CHECK(w2.done == 1 && !strcmp(fy_job_result(j, 0), "<[x]>") && atomic_load(&b.calls) == calls);
    fy_job_release(j);
    /* What the route does between its legs reaches the second leg. */
    fy_route shout = {{&a.engine, &b.engine}, 2, twice};
    const char *z[] = {"z"};
    waiter w3;
    waiter_init(&w3);
    j = submit_via(s, &shout, z, 1, 0, &w3, NULL);
    CHECK(waiter_wait(&w3) == 0 && !strcmp(fy_job_result(j, 0), "<[z][z]>"));
    fy_job_release(j);
    /* Both legs from the cache: the first leg's cached answer goes through
     * `between` too, so the result is the one the engines gave. */
    calls = atomic_load(&a.calls) + atomic_load(&b.calls);
    waiter w4;
    waiter_init(&w4);
    j = submit_via(s, &shout, z, 1, 0, &w4, NULL);
    CHECK(w4.done == 1 && !strcmp(fy_job_result(j, 0), "<[z][z]>"));
    CHECK(atomic_load(&a.calls) + atomic_load(&b.calls) == calls);
    fy_job_release(j);
    fy_scheduler_free(s);
    fy_cache_free(cache);
}

/* ---- a recording cache tier: what the scheduler asks and stores ---- */

typedef struct rec_cache {
    fy_cache base;
    pthread_mutex_t lock;
    int gets, puts, keys_got, keys_put, stored_fail;
    int64_t last_deadline;
    char hit_text[32], hit_value[32]; /* the one key it knows */
    pthread_cond_t cond;
    int hold, held; /* hold: lookups wait (held: one does) until it is cleared */
} rec_cache;

static int rec_get(fy_cache *c, const fy_cache_key *keys, size_t n, char **values, int64_t dl)
{
    rec_cache *r = (rec_cache *)c;
    pthread_mutex_lock(&r->lock);
    r->gets++;
    r->keys_got += (int)n;
    r->last_deadline = dl;
    while (r->hold) {
        r->held = 1;
        pthread_cond_broadcast(&r->cond);
        pthread_cond_wait(&r->cond, &r->lock);
    }
    int hits = 0;
    for (size_t i = 0; i < n; i++)
        if (r->hit_text[0] && !strcmp(keys[i].text, r->hit_text))
            values[i] = strdup(r->hit_value), hits++;
    pthread_mutex_unlock(&r->lock);
    return hits;
}

static void rec_put(fy_cache *c, const fy_cache_key *keys, const char *const *values, size_t n)
{
    rec_cache *r = (rec_cache *)c;
    pthread_mutex_lock(&r->lock);
    r->puts++;
    r->keys_put += (int)n;
    for (size_t i = 0; i < n; i++) r->stored_fail += strstr(keys[i].text, "FAIL") || !values[i];
    pthread_mutex_unlock(&r->lock);
}

static size_t rec_stats(fy_cache *c, fy_cache_stats *out, size_t cap)
{
    (void)c, (void)out, (void)cap;
    return 1;
}

static void rec_free(fy_cache *c)
{
    (void)c;
}

static const fy_cache_ops rec_ops = {rec_get, rec_put, rec_stats, rec_free};

static void rec_init(rec_cache *r)
{
    memset(r, 0, sizeof *r);
    r->base.ops = &rec_ops;
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->cond, NULL);
}

static void rec_hold(rec_cache *r, int hold)
{
    pthread_mutex_lock(&r->lock);
    r->hold = hold;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
}

/* Waits (5 s at most) until a lookup is held. */
static int rec_wait_held(rec_cache *r)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    pthread_mutex_lock(&r->lock);
    int rc = 0;
    while (!r->held && rc == 0) rc = pthread_cond_timedwait(&r->cond, &r->lock, &until);
    int held = r->held;
    pthread_mutex_unlock(&r->lock);
    return held;
}

/* One lookup per job, one store per batch, the job's deadline passed on,
 * and a failed sentence never stored. */
static void test_cache_calls(void)
{
    fake f;
    fake_init(&f);
    rec_cache rc;
    rec_init(&rc);
    fy_scheduler *s = open_sched(&f, 1, 100, &rc.base);
    const char *src[] = {"一", "二", "", "三", "四"};
    waiter w;
    waiter_init(&w);
    int64_t deadline = fy_now_ms() + 60000;
    fy_job *j = submit(s, src, 5, deadline, &w, NULL);
    CHECK(waiter_wait(&w) == 0);
    CHECK(rc.gets == 1 && rc.keys_got == 4 && rc.last_deadline == deadline); /* "" is not asked */
    CHECK(rc.puts == 1 && rc.keys_put == 4 && atomic_load(&f.calls) == 1);
    fy_job_release(j);
    /* A batch with a sentence the engine fails: retried one by one, and
     * only the translated ones are stored. */
    const char *bad[] = {"好", "FAIL", "坏"};
    waiter w2;
    waiter_init(&w2);
    j = submit(s, bad, 3, 0, &w2, NULL);
    CHECK(waiter_wait(&w2) == FY_EINVAL);
    CHECK(rc.stored_fail == 0 && rc.keys_put == 4 + 2 && rc.puts == 2);
    fy_job_release(j);
    fy_scheduler_free(s);
}

/* A pivot with a remote-like tier: the second legs of a batch are looked
 * up in one call after it, and a cached second leg skips its engine. */
static void test_cache_pivot_calls(void)
{
    fake a, b;
    fake_init_as(&a, "a", '[', ']');
    fake_init_as(&b, "b", '<', '>');
    rec_cache rc;
    rec_init(&rc);
    snprintf(rc.hit_text, sizeof rc.hit_text, "[x]");
    snprintf(rc.hit_value, sizeof rc.hit_value, "<cached>");
    fy_scheduler *s = open_sched(&a, 1, 100, &rc.base);
    fy_route both = {{&a.engine, &b.engine}, 2, NULL};
    const char *src[] = {"x", "y", "z"};
    waiter w;
    waiter_init(&w);
    fy_job *j = submit_via(s, &both, src, 3, 0, &w, NULL);
    CHECK(waiter_wait(&w) == 0);
    CHECK(!strcmp(fy_job_result(j, 0), "<cached>") && !strcmp(fy_job_result(j, 1), "<[y]>"));
    /* submit: 3 keys; after a's batch: 3 second legs in one call. */
    CHECK(rc.gets == 2 && rc.keys_got == 6);
    CHECK(atomic_load(&a.calls) == 1 && atomic_load(&b.calls) == 1);
    fy_engine_stats st;
    fy_scheduler_engine_stats(s, &b.engine, &st);
    CHECK(st.sentences == 2 && st.cache_hits == 1);
    fy_job_release(j);
    fy_scheduler_free(s);
}

/* Forgetting an engine fails its queued jobs and frees its states. */
static void test_forget(void)
{
    fake a, b;
    fake_init_as(&a, "a", '[', ']');
    fake_init_as(&b, "b", '<', '>');
    fake_gate(&a, 1);
    fy_scheduler *s = open_sched(&a, 1, 100, NULL);
    const char *one[] = {"busy"}, *two[] = {"later"}, *three[] = {"b"};
    waiter w1, w2, w3;
    waiter_init(&w1);
    waiter_init(&w2);
    waiter_init(&w3);
    fy_job *j3 = submit_via(s, &b.route, three, 1, 0, &w3, NULL);
    CHECK(waiter_wait(&w3) == 0); /* b has a worker state now */
    fy_job *j1 = submit_via(s, &a.route, one, 1, 0, &w1, NULL);
    CHECK(wait_entered(&a, 1)); /* the only worker holds j1's batch at a's gate */
    fy_job *j2 = submit_via(s, &a.route, two, 1, 0, &w2, NULL);
    int freed = atomic_load(&freed_states);
    fy_engine_stats st;
    fy_scheduler_forget(s, &b.engine, &st);
    CHECK(st.sentences == 1 && atomic_load(&freed_states) == freed + 1);
    fake_gate(&a, 0);
    fy_scheduler_forget(s, &a.engine, &st); /* j2 queued: cancelled; j1 finishes first */
    CHECK(waiter_wait(&w1) == 0 && waiter_wait(&w2) == FY_ECANCELED);
    fy_error err = {0};
    fy_job_status(j2, &err);
    CHECK(strstr(err.msg, "unloaded") != NULL);
    fy_job_release(j1);
    fy_job_release(j2);
    fy_job_release(j3);
    fy_scheduler_free(s);
}

typedef struct forgetter {
    fy_scheduler *s;
    const fy_engine *e;
    atomic_int done;
} forgetter;

static void *forget_main(void *arg)
{
    forgetter *f = arg;
    fy_scheduler_forget(f->s, f->e, NULL);
    atomic_store(&f->done, 1);
    return NULL;
}

/* A pivot's second engine may be unloaded once its jobs have ended: a
 * job that ends while its first leg runs never reaches the second engine,
 * and forgetting it waits for a worker still moving sentences on to it. */
static void test_forget_next_leg(void)
{
    fake a, b;
    fake_init_as(&a, "a", '[', ']');
    fake_init_as(&b, "b", '<', '>');
    b.engine.count_tokens = fake_count;
    rec_cache rc;
    rec_init(&rc);
    fy_scheduler *s = open_sched(&a, 1, 100, &rc.base);
    fy_route both = {{&a.engine, &b.engine}, 2, NULL};
    /* Failed by its other sentence (the batch's first: fewer tokens) while
     * its first leg runs. */
    const char *failing[] = {"FAIL", "xxxxxxxxxx"};
    waiter w;
    waiter_init(&w);
    fy_job *j = submit_via(s, &both, failing, 2, 0, &w, NULL);
    CHECK(waiter_wait(&w) == FY_EINVAL);
    fy_job_release(j);
    /* The only worker takes this job after it is done with that batch. */
    const char *after[] = {"after"};
    waiter_init(&w);
    j = submit_via(s, &a.route, after, 1, 0, &w, NULL);
    CHECK(waiter_wait(&w) == 0);
    fy_job_release(j);
    CHECK(atomic_load(&b.counted) == 0); /* b was not asked for the other's second leg */
    /* Forgotten while a worker looks its second leg up in the cache. */
    fake_gate(&a, 1);
    const char *src[] = {"x"};
    waiter w2;
    waiter_init(&w2);
    int entered = atomic_load(&a.entered);
    j = submit_via(s, &both, src, 1, 0, &w2, NULL);
    CHECK(wait_entered(&a, entered + 1));
    rec_hold(&rc, 1);
    fake_gate(&a, 0);
    CHECK(rec_wait_held(&rc));
    forgetter f = {s, &b.engine, 0};
    pthread_t th;
    pthread_create(&th, NULL, forget_main, &f);
    usleep(50000);
    CHECK(!atomic_load(&f.done)); /* the worker is not done with b */
    rec_hold(&rc, 0);
    pthread_join(th, NULL);
    /* The job had not ended: its sentence went on to b and was cancelled
     * by the unload, not run. */
    CHECK(waiter_wait(&w2) == FY_ECANCELED);
    fy_job_release(j);
    fy_scheduler_free(s);
    CHECK(atomic_load(&b.counted) == 1 && atomic_load(&b.calls) == 0);
}

/* One thread serving two engines keeps only the state of the one it runs
 * resident: going on to the other trims the last one's, never the running
 * one's, and a forgotten engine's state is not trimmed after it is freed. */
static void test_trim(void)
{
    fake a, b;
    fake_init_as(&a, "a", '[', ']');
    fake_init_as(&b, "b", '<', '>');
    fy_scheduler *s = open_sched(&a, 1, 100, NULL);
    const char *one[] = {"x"};
    const fake *order[] = {&a, &a, &b, &b, &a, &b};
    const int want_a[] = {0, 0, 1, 1, 1, 2}, want_b[] = {0, 0, 0, 0, 1, 1};
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        waiter w;
        waiter_init(&w);
        fy_job *j = submit_via(s, &order[i]->route, one, 1, 0, &w, NULL);
        CHECK(waiter_wait(&w) == 0);
        fy_job_release(j);
        CHECK(atomic_load(&a.trims) == want_a[i] && atomic_load(&b.trims) == want_b[i]);
    }
    fy_scheduler_forget(s, &b.engine, NULL); /* b ran last: its state is freed, not trimmed */
    waiter w;
    waiter_init(&w);
    fy_job *j = submit_via(s, &a.route, one, 1, 0, &w, NULL);
    CHECK(waiter_wait(&w) == 0);
    fy_job_release(j);
    CHECK(atomic_load(&a.trims) == 2 && atomic_load(&b.trims) == 1);
    fy_scheduler_free(s);
}

/* A stream's urgent waves go before the sentences waiting in turn, the
 * lower wave first, each in a batch of its own wave only; what follows
 * them is batched as ever. */
static void test_waves(void)
{
    fake f;
    fake_init(&f);
    fake_gate(&f, 1);
    fy_scheduler *s = open_sched(&f, 1, 100, NULL);
    const char *a[] = {"甲"};
    const char *b[] = {"乙1", "乙2", "乙3"};
    const char *c[] = {"丙0", "丙1", "丙2", "丙3", "丙4", "丙5"};
    const int waves[] = {1, 2, 2, 3, 0, 0};
    waiter wa, wb, wc;
    waiter_init(&wa);
    waiter_init(&wb);
    waiter_init(&wc);
    fy_job *ja = submit(s, a, 1, 0, &wa, NULL);
    CHECK(wait_entered(&f, 1)); /* the only worker holds a's batch at the gate */
    fy_job *jb = submit(s, b, 3, 0, &wb, NULL);
    fy_job *jc = submit_waves(s, &f.route, c, waves, 6, 0, &wc, NULL);
    CHECK(ja && jb && jc);
    fake_gate(&f, 0);
    CHECK(waiter_wait(&wa) == 0 && waiter_wait(&wb) == 0 && waiter_wait(&wc) == 0);
    CHECK(wc.order_ok && wc.next == 6 && !strcmp(fy_job_result(jc, 5), "[丙5]"));
    pthread_mutex_lock(&f.lock);
    CHECK(!strcmp(f.log, "甲|丙0|丙1,丙2|丙3|丙4,丙5,乙1,乙2,乙3|"));
    if (strcmp(f.log, "甲|丙0|丙1,丙2|丙3|丙4,丙5,乙1,乙2,乙3|"))
        fprintf(stderr, "log %s\n", f.log);
    pthread_mutex_unlock(&f.lock);
    fy_scheduler_stats st;
    fy_scheduler_get_stats(s, &st);
    CHECK(st.queue_depth == 0 && st.batches == 5);
    fy_job_release(ja);
    fy_job_release(jb);
    fy_job_release(jc);
    fy_scheduler_free(s);
}

/* Fairness: a one-sentence request queued behind a big one goes into the
 * next batch, not after all of the big one's sentences. */
static void test_fair(void)
{
    fake f;
    fake_init(&f);
    fake_gate(&f, 1);
    fy_scheduler *s = open_sched_ex(&f, 1, 0, 4, 100, NULL);
    const char *a[] = {"A00", "A01", "A02", "A03", "A04", "A05",
                       "A06", "A07", "A08", "A09", "A10", "A11"};
    const char *b[] = {"B0"};
    waiter wa, wb;
    waiter_init(&wa);
    waiter_init(&wb);
    fy_job *ja = submit(s, a, 12, 0, &wa, NULL);
    CHECK(wait_entered(&f, 1)); /* the worker holds A's first batch of 4 at the gate */
    fy_job *jb = submit(s, b, 1, 0, &wb, NULL);
    CHECK(ja && jb);
    fake_gate(&f, 0);
    CHECK(waiter_wait(&wa) == 0 && waiter_wait(&wb) == 0);
    pthread_mutex_lock(&f.lock);
    const char *second = strchr(f.log, '|');
    const char *end = second ? strchr(second + 1, '|') : NULL;
    const char *at = strstr(f.log, "B0");
    CHECK(at && second && end && at > second && at < end);
    if (!(at && second && end && at > second && at < end)) fprintf(stderr, "log %s\n", f.log);
    pthread_mutex_unlock(&f.lock);
    fy_job_release(ja);
    fy_job_release(jb);
    fy_scheduler_free(s);
}

/* An express worker answers a small job while the only regular worker is
 * busy, and never takes a big job. */
static void test_express(void)
{
    fake f;
    fake_init(&f);
    f.gate_only = 'A';
    fake_gate(&f, 1);
    fy_scheduler *s = open_sched_ex(&f, 1, 1, 0, 100, NULL);
    const char *a[] = {"A0", "A1", "A2", "A3", "A4", "A5"};
    const char *c[] = {"C0", "C1", "C2", "C3", "C4", "C5"};
    const char *b[] = {"B0", "B1"};
    waiter wa, wb, wc;
    waiter_init(&wa);
    waiter_init(&wb);
    waiter_init(&wc);
    fy_job *ja = submit(s, a, 6, 0, &wa, NULL);
    CHECK(wait_entered(&f, 1)); /* the regular worker holds A at the gate */
    fy_job *jc = submit(s, c, 6, 0, &wc, NULL);
    fy_job *jb = submit(s, b, 2, 0, &wb, NULL);
    CHECK(ja && jb && jc);
    CHECK(waiter_wait(&wb) == 0 && !strcmp(fy_job_result(jb, 1), "[B1]"));
    pthread_mutex_lock(&wc.lock);
    CHECK(!wc.done && wc.next == 0); /* C is big: only the regular worker takes it */
    pthread_mutex_unlock(&wc.lock);
    pthread_mutex_lock(&wa.lock);
    CHECK(!wa.done);
    pthread_mutex_unlock(&wa.lock);
    fake_gate(&f, 0);
    CHECK(waiter_wait(&wa) == 0 && waiter_wait(&wc) == 0);
    fy_scheduler_stats st;
    fy_scheduler_get_stats(s, &st);
    CHECK(st.queue_depth == 0 && st.threads == 1);
    fy_job_release(ja);
    fy_job_release(jb);
    fy_job_release(jc);
    fy_scheduler_free(s);
}

/* Priority: an interactive sentence queued after a background job's goes
 * into the next batch, alone (a batch is of one class); background work
 * runs when nothing else waits, and its fairness among itself holds. */
static void test_background(void)
{
    fake f;
    fake_init(&f);
    fake_gate(&f, 1);
    fy_scheduler *s = open_sched_ex(&f, 1, 0, 4, 100, NULL);
    const char *b[] = {"B0", "B1", "B2", "B3", "B4", "B5", "B6", "B7"};
    const char *c[] = {"C0", "C1"};
    const char *a[] = {"A0"};
    waiter wa, wb, wc;
    waiter_init(&wa);
    waiter_init(&wb);
    waiter_init(&wc);
    fy_job *jb = submit_background(s, b, 8, &wb);
    CHECK(wait_entered(&f, 1)); /* background alone: the worker takes it */
    fy_job *jc = submit_background(s, c, 2, &wc);
    fy_job *ja = submit(s, a, 1, 0, &wa, NULL);
    CHECK(ja && jb && jc);
    fake_gate(&f, 0);
    CHECK(waiter_wait(&wa) == 0 && waiter_wait(&wb) == 0 && waiter_wait(&wc) == 0);
    CHECK(wb.order_ok && wb.next == 8 && !strcmp(fy_job_result(jb, 7), "[B7]"));
    /* A0 next and alone, though C has had none taken; the rest are the
     * background sentences, four then two. */
    const char *want = "B0,B1,B2,B3|A0|";
    pthread_mutex_lock(&f.lock);
    const char *rest = f.log + strlen(want);
    int ok = !strncmp(f.log, want, strlen(want)) && strlen(rest) == 18 && !strchr(rest, 'A') &&
             strchr(rest, '|') == rest + 11;
    CHECK(ok);
    if (!ok) fprintf(stderr, "log %s\n", f.log);
    pthread_mutex_unlock(&f.lock);
    fy_job_release(ja);
    fy_job_release(jb);
    fy_job_release(jc);
    fy_scheduler_free(s);
}

/* An express worker never takes background work, even a job small enough
 * to be "small", while it answers a small interactive one. */
static void test_background_express(void)
{
    fake f;
    fake_init(&f);
    f.gate_only = 'X';
    fake_gate(&f, 1);
    fy_scheduler *s = open_sched_ex(&f, 1, 1, 0, 100, NULL);
    const char *x[] = {"X0", "X1", "X2", "X3", "X4", "X5"};
    const char *b[] = {"b0", "b1"};
    const char *q[] = {"s0"};
    waiter wx, wb, wq;
    waiter_init(&wx);
    waiter_init(&wb);
    waiter_init(&wq);
    fy_job *jx = submit(s, x, 6, 0, &wx, NULL);
    CHECK(wait_entered(&f, 1)); /* the regular worker holds X at the gate */
    fy_job *jb = submit_background(s, b, 2, &wb);
    fy_job *jq = submit(s, q, 1, 0, &wq, NULL);
    CHECK(jx && jb && jq);
    CHECK(waiter_wait(&wq) == 0 && !strcmp(fy_job_result(jq, 0), "[s0]"));
    pthread_mutex_lock(&wb.lock);
    CHECK(!wb.done && wb.next == 0); /* left for the regular worker */
    pthread_mutex_unlock(&wb.lock);
    fake_gate(&f, 0);
    CHECK(waiter_wait(&wx) == 0 && waiter_wait(&wb) == 0);
    fy_job_release(jx);
    fy_job_release(jb);
    fy_job_release(jq);
    fy_scheduler_free(s);
}

/* A batch no one waits for any more (its only job cancelled) is told to
 * stop; the next batch starts with the flag clear. */
static void test_abort(void)
{
    fake f;
    fake_init(&f);
    fake_gate(&f, 1);
    fy_scheduler *s = open_sched(&f, 1, 100, NULL);
    const char *a[] = {"A0", "A1"}, *b[] = {"B0"};
    waiter wa, wb;
    waiter_init(&wa);
    waiter_init(&wb);
    fy_job *ja = submit(s, a, 2, 0, &wa, NULL);
    CHECK(ja && wait_entered(&f, 1) && abort_flag(&f) && !atomic_load(abort_flag(&f)));
    fy_job_cancel(ja);
    CHECK(atomic_load(abort_flag(&f)) == 1);
    fake_gate(&f, 0);
    fy_job *jb = submit(s, b, 1, 0, &wb, NULL);
    CHECK(jb && waiter_wait(&wb) == 0 && atomic_load(&f.abort_at_entry) == 0);
    fy_job_release(ja);
    fy_job_release(jb);
    fy_scheduler_free(s);
}

/* Sentence i of j has exactly the fake's alternatives (or none). */
static int has_fake_alts(fy_job *j, size_t i, const char *src)
{
    size_t n;
    const char *const *a = fy_job_alternatives(j, i, &n);
    char two[64];
    snprintf(two, sizeof two, "2\n%s\\", src);
    return n == 2 && !strcmp(a[0], "one\\n") && !strcmp(a[1], two) && !a[2];
}

/* Beams: a batch holds one beam (greedy sentences go to translate, the
 * others to translate_beam), alternatives reach the job and survive the
 * cache, whose keys tell beams apart; an engine without beams is greedy. */
static void test_beams(void)
{
    fake f;
    fake_init(&f);
    f.engine.translate = fake_greedy;
    f.engine.translate_beam = fake_beam;
    fy_cache *cache = fy_cache_lru_new(1 << 20, NULL);
    fake_gate(&f, 1);
    fy_scheduler *s = open_sched(&f, 1, 100, cache);
    const char *g[] = {"g1", "g2", "g3"}, *b[] = {"b1", "b2", "b3"};
    waiter wg, wb;
    waiter_init(&wg);
    waiter_init(&wb);
    fy_job *jg = submit_beam(s, &f.route, g, 3, 1, 0, &wg, NULL);
    fy_job *jb = submit_beam(s, &f.route, b, 3, 4, 0, &wb, NULL);
    fake_gate(&f, 0); /* both jobs queued together: one batch each */
    CHECK(waiter_wait(&wg) == 0 && waiter_wait(&wb) == 0);
    CHECK(atomic_load(&f.wrong_beam) == 0 && atomic_load(&f.beam_calls) == 1);
    CHECK(!strcmp(fy_job_result(jg, 0), "[g1]") && !strcmp(fy_job_result(jb, 2), "[b3]/4"));
    size_t n;
    CHECK(fy_job_alternatives(jg, 0, &n) == NULL && n == 0);
    CHECK(has_fake_alts(jb, 0, "b1") && has_fake_alts(jb, 2, "b3"));
    /* Again with beam 4: all from the cache, alternatives included. */
    int calls = atomic_load(&f.calls);
    waiter w2;
    waiter_init(&w2);
    fy_job *j2 = submit_beam(s, &f.route, b, 3, 4, 0, &w2, NULL);
    CHECK(w2.done == 1 && atomic_load(&f.calls) == calls);
    CHECK(!strcmp(fy_job_result(j2, 1), "[b2]/4") && has_fake_alts(j2, 1, "b2"));
    fy_cache_stats cs;
    fy_cache_tier_stats(cache, &cs, 1);
    CHECK(cs.entries == 6);
    /* The greedy sentences with beam 4 are not greedy's cache entries. */
    const char *gb[] = {"b4"};
    waiter w3;
    waiter_init(&w3);
    fy_job *j3 = submit_beam(s, &f.route, gb, 1, 1, 0, &w3, NULL);
    CHECK(waiter_wait(&w3) == 0 && atomic_load(&f.wrong_beam) == 1); /* 'b' sent greedy */
    fy_job_release(jg);
    fy_job_release(jb);
    fy_job_release(j2);
    fy_job_release(j3);
    /* Without translate_beam: greedy, no alternatives. */
    f.engine.translate_beam = NULL;
    waiter w4;
    waiter_init(&w4);
    const char *c[] = {"c1"};
    fy_job *j4 = submit_beam(s, &f.route, c, 1, 4, 0, &w4, NULL);
    CHECK(waiter_wait(&w4) == 0 && !strcmp(fy_job_result(j4, 0), "[c1]"));
    CHECK(fy_job_alternatives(j4, 0, &n) == NULL && n == 0);
    fy_job_release(j4);
    fy_scheduler_free(s);
    fy_cache_free(cache);
}

/* A pivot with a beam: both legs search, the alternatives are the second's. */
static void test_beam_pivot(void)
{
    fake a, b;
    fake_init_as(&a, "a", '[', ']');
    fake_init_as(&b, "b", '<', '>');
    a.engine.translate_beam = b.engine.translate_beam = fake_beam;
    fy_scheduler *s = open_sched(&a, 2, 100, NULL);
    fy_route both = {{&a.engine, &b.engine}, 2, NULL};
    const char *src[] = {"x"};
    waiter w;
    waiter_init(&w);
    fy_job *j = submit_beam(s, &both, src, 1, 4, 0, &w, NULL);
    CHECK(waiter_wait(&w) == 0 && !strcmp(fy_job_result(j, 0), "<[x]/4>/4"));
    CHECK(has_fake_alts(j, 0, "[x]/4"));
    CHECK(atomic_load(&a.beam_calls) == 1 && atomic_load(&b.beam_calls) == 1);
    fy_job_release(j);
    fy_scheduler_free(s);
}

/* The cache's one-string form of a list keeps every string as it was. */
static void test_alts_form(void)
{
    char *list[] = {"", "a\\b", "line\nbreak\\n", "\\", NULL};
    char *v = fy_alts_encode("best\n", list);
    char *best, **back;
    CHECK(v && strchr(v, '\n') && fy_alts_decode(v, &best, &back) == 0);
    CHECK(!strcmp(best, "best\n") && fy_alts_count(back) == 4);
    for (int i = 0; i < 4 && back; i++) CHECK(!strcmp(back[i], list[i]));
    free(v);
    free(best);
    fy_alts_free(back);
    v = fy_alts_encode("only", NULL);
    CHECK(v && !strcmp(v, "only") && fy_alts_decode(v, &best, &back) == 0 && !back);
    CHECK(!strcmp(best, "only"));
    free(v);
    free(best);
    fy_alts_free(NULL);
}

/* Opens a scheduler over the given devices (two threads each unless set). */
static fy_scheduler *open_devices(fake *f, const fy_sched_device *devs, int n)
{
    fy_scheduler_options o;
    fy_scheduler_options_default(&o);
    for (int i = 0; i < n; i++) o.devices[i] = devs[i];
    o.ndevices = n;
    o.window_us = 2000;
    current = f;
    fy_error err = {0};
    fy_scheduler *s = fy_scheduler_open(&o, &err);
    if (!s) fprintf(stderr, "open: %s\n", err.msg);
    return s;
}

/* A device that fails mid-batch gives its batch back: every sentence is
 * translated by the other device, nothing is lost or duplicated, the device
 * takes no more work and its counters say so. */
static void test_device_lost(void)
{
    static char gpu;
    fake f;
    fake_init(&f);
    f.lost_device = &gpu;
    fy_sched_device devs[] = {{.dev = &gpu, .name = "gpu", .threads = 1, .max_batch_sentences = 8},
                              {.name = "cpu", .threads = 1, .max_batch_sentences = 2}};
    fy_scheduler *s = open_devices(&f, devs, 2);
    const char *src[] = {"a", "bb", "ccc", "dddd", "e", "ff", "ggg", "h"};
    waiter w[4];
    fy_job *j[4];
    /* The cpu's first batch waits at the gate, so that work is left for
     * the gpu's worker whichever worker starts first. */
    fake_gate(&f, 1);
    for (int k = 0; k < 4; k++) {
        waiter_init(&w[k]);
        j[k] = submit(s, src + 2 * k, 2, 0, &w[k], NULL);
    }
    for (int i = 0; i < 5000 && !atomic_load(&f.lost_calls); i++) usleep(1000);
    fake_gate(&f, 0);
    for (int k = 0; k < 4; k++) {
        CHECK(waiter_wait(&w[k]) == 0);
        CHECK(w[k].order_ok);
        char want[16];
        snprintf(want, sizeof want, "[%s]", src[2 * k + 1]);
        CHECK(fy_job_result(j[k], 1) && !strcmp(fy_job_result(j[k], 1), want));
        CHECK(fy_job_devices(j[k]) == 2u); /* the cpu, device 1, did it all */
        fy_job_release(j[k]);
    }
    fy_device_stats ds[2];
    CHECK(fy_scheduler_device_stats(s, ds, 2) == 2);
    CHECK(ds[0].failed == 1 && ds[0].sentences == 0 && !strcmp(ds[0].name, "gpu"));
    CHECK(atomic_load(&f.lost_calls) == 1); /* once failed, the device took no more */
    CHECK(ds[0].given_back >= 1);
    CHECK(ds[1].failed == 0 && ds[1].sentences == 8);
    CHECK(!strcmp(fy_scheduler_device_name(s, 1), "cpu") && !fy_scheduler_device_name(s, 2));
    fy_scheduler_free(s);
}

/* With every device failed, what is queued fails with FY_EDEVICE and new
 * jobs are refused at once: nobody waits for a device that is gone. */
static void test_all_devices_lost(void)
{
    static char gpu;
    fake f;
    fake_init(&f);
    f.lost_device = &gpu;
    fy_sched_device devs[] = {{.dev = &gpu, .name = "gpu", .threads = 2}};
    fy_scheduler *s = open_devices(&f, devs, 1);
    const char *src[] = {"a", "b", "c"};
    waiter w;
    waiter_init(&w);
    fy_job *j = submit(s, src, 3, 0, &w, NULL);
    CHECK(waiter_wait(&w) == FY_EDEVICE);
    fy_error err = {0};
    fy_job_status(j, &err);
    CHECK(strstr(err.msg, "device lost") != NULL);
    fy_job_release(j);
    waiter w2;
    waiter_init(&w2);
    fy_job *j2 = submit(s, src, 1, 0, &w2, &err);
    CHECK(j2 == NULL && err.code == FY_EDEVICE);
    fy_scheduler_free(s);
}

/* A model that does not fit a device stays off it: the CPU's workers
 * translate it, and the device's worker is not asked again. */
static void test_device_cannot_place(void)
{
    static char gpu;
    fake f;
    fake_init(&f);
    f.small_device = &gpu;
    fy_sched_device devs[] = {{.dev = &gpu, .name = "gpu", .threads = 1},
                              {.name = "cpu", .threads = 1, .max_batch_sentences = 2}};
    fy_scheduler *s = open_devices(&f, devs, 2);
    for (int round = 0; round < 3; round++) {
        const char *src[] = {"x", "yy"};
        waiter w;
        waiter_init(&w);
        /* First round: the cpu's batch waits until the gpu's worker has
         * been refused, so that it certainly tries. */
        if (!round) fake_gate(&f, 1);
        fy_job *j = submit(s, src, 2, 0, &w, NULL);
        if (!round) {
            const char *more[] = {"z"};
            waiter w2;
            waiter_init(&w2);
            fy_job *j2 = submit(s, more, 1, 0, &w2, NULL);
            for (int i = 0; i < 5000 && !atomic_load(&f.refused); i++) usleep(1000);
            fake_gate(&f, 0);
            CHECK(waiter_wait(&w2) == 0);
            fy_job_release(j2);
        }
        CHECK(waiter_wait(&w) == 0);
        CHECK(fy_job_result(j, 0) && !strcmp(fy_job_result(j, 0), "[x]"));
        fy_job_release(j);
    }
    fy_device_stats ds[2];
    fy_scheduler_device_stats(s, ds, 2);
    CHECK(ds[0].failed == 0 && ds[0].sentences == 0 && ds[0].given_back >= 1);
    CHECK(atomic_load(&f.refused) == 1); /* asked once, then left alone */
    CHECK(ds[1].sentences == 7);
    fy_scheduler_free(s);
    /* ...and with no other device, the job fails with the reason. */
    fake_init(&f);
    f.small_device = &gpu;
    s = open_devices(&f, devs, 1);
    const char *one[] = {"z"};
    waiter w;
    waiter_init(&w);
    fy_job *j = submit(s, one, 1, 0, &w, NULL);
    CHECK(waiter_wait(&w) == FY_ENOMEM);
    fy_error err = {0};
    fy_job_status(j, &err);
    CHECK(strstr(err.msg, "does not fit") != NULL);
    fy_job_release(j);
    fy_scheduler_free(s);
}

/* An engine with scores: each sentence's score is minus its length, its
 * margin 1.5 (beam search: "[src]" and no alternatives). */
static int fake_scored(void *ctx, void *worker, const char *const *src, size_t n, int beam,
                       char **out, char ***alts, fy_confidence *conf, fy_error *err)
{
    (void)beam, (void)alts;
    float gap[64];
    int rc = fake_translate(ctx, worker, src, n, out, gap, err);
    for (size_t i = 0; rc == 0 && i < n; i++)
        conf[i] = (fy_confidence){-(float)strlen(src[i]), 1.5f};
    return rc;
}

static fy_job *submit_variant(fy_scheduler *s, const fy_route *route, const char *text,
                              const char *variant, waiter *w)
{
    fy_job_callbacks cb = {on_sentence, on_done, w};
    fy_sentence_in in = {text, 0, route, 1, 0, 0, variant};
    return fy_scheduler_submit(s, &in, 1, 0, &cb, NULL);
}

/* Confidence from the engine and back from the cache; a variant (a
 * glossary) keys its own entries. */
static void test_variant_confidence(void)
{
    fake f;
    fake_init(&f);
    f.engine.translate_scored = fake_scored;
    fy_cache *cache = fy_cache_lru_new(1 << 20, NULL);
    fy_scheduler *s = open_sched(&f, 1, 100, cache);
    waiter w[4];
    fy_job *j[4];
    const char *variants[4] = {NULL, "g1", "g1", ""};
    for (int k = 0; k < 4; k++) {
        waiter_init(&w[k]);
        j[k] = submit_variant(s, &f.route, "一二", variants[k], &w[k]);
        CHECK(j[k] && waiter_wait(&w[k]) == 0 && !strcmp(fy_job_result(j[k], 0), "[一二]"));
        fy_confidence c = fy_job_confidence(j[k], 0);
        CHECK(c.score == -6.0f && c.margin == 1.5f);
        CHECK(fy_job_gap(j[k], 0) == 1.5f);
    }
    /* The engine ran for "" and for "g1" once each; the second "g1" and
     * the last "" came from the cache, with their confidence. */
    CHECK(atomic_load(&f.calls) == 2);
    fy_cache_stats cs;
    fy_cache_tier_stats(cache, &cs, 1);
    CHECK(cs.entries == 2 && cs.hits == 2);
    for (int k = 0; k < 4; k++) fy_job_release(j[k]);
    fy_scheduler_free(s);
    fy_cache_free(cache);
}

/* The cache entry's form: the value, U+001E, the confidence. */
static void test_entry_form(void)
{
    fy_confidence c = {-1.25f, INFINITY}, back;
    char *e = fy_cache_entry_encode("a\nb", &c);
    CHECK(e && !strcmp(e, "a\nb\x1e-1.25 inf"));
    fy_cache_entry_decode(e, &back);
    CHECK(!strcmp(e, "a\nb") && back.score == -1.25f && isinf(back.margin));
    free(e);
    char old[] = "an entry without one";
    fy_cache_entry_decode(old, &back);
    CHECK(!strcmp(old, "an entry without one") && isnan(back.score) && isinf(back.margin));
}

int main(void)
{
    test_order();
    test_concurrent_batching();
    test_queue_full();
    test_deadline_and_cancel();
    test_failure_isolated();
    test_cache();
    test_shutdown_with_queued();
    test_two_engines();
    test_pivot();
    test_cache_calls();
    test_cache_pivot_calls();
    test_forget();
    test_forget_next_leg();
    test_trim();
    test_waves();
    test_fair();
    test_express();
    test_background();
    test_background_express();
    test_abort();
    test_beams();
    test_beam_pivot();
    test_alts_form();
    test_device_lost();
    test_all_devices_lost();
    test_device_cannot_place();
    test_variant_confidence();
    test_entry_form();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
