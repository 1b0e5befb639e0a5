/* test_scheduler.c - the scheduler with injected fake engines: order,
 * batching across concurrent jobs, queue limit, deadlines, cancellation,
 * failures, the cache, shutdown, several engines in one pool, pivot routes,
 * forgetting an engine and a stream's urgent waves. Also run under TSan
 * (-DFANYI_TSAN=ON). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "translate/scheduler.h"
#include "util/clock.h"

static int passed, failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond)                                                                                  \
            passed++;                                                                              \
        else {                                                                                     \
            failed++;                                                                              \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                        \
        }                                                                                          \
    } while (0)

/* ---- the fake engine: "[" + sentence + "]", optionally slow or gated ---- */

typedef struct fake {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int gate_closed;
    int delay_us;
    char open, close; /* brackets it puts around a sentence: "[...]" */
    atomic_int calls, workers, freed, max_batch, mixed, entered;
    char log[512]; /* batches as "a,b|c|", each sorted (under lock) */
    fy_engine engine;
    fy_route route; /* this engine alone */
} fake;

static void *fake_worker_new(void *ctx, fy_error *err)
{
    (void)err;
    fake *f = ctx;
    atomic_fetch_add(&f->workers, 1);
    return malloc(16); /* per-worker state the engine would own */
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
    for (size_t i = 0; i < n; i++) gap[i] = (float)strlen(src[i]);
    atomic_fetch_add(&f->entered, 1);
    fake_log(f, src, n);
    pthread_mutex_lock(&f->lock);
    while (f->gate_closed) pthread_cond_wait(&f->cond, &f->lock);
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

static void fake_init_as(fake *f, const char *name, char open, char close)
{
    memset(f, 0, sizeof *f);
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->cond, NULL);
    f->open = open;
    f->close = close;
    f->engine = (fy_engine){fake_translate, fake_worker_new, fake_worker_free, NULL, f, name};
    f->route = (fy_route){{&f->engine}, 1, NULL};
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

/* The fake engine whose route submit() uses. */
static fake *current;

static fy_scheduler *open_sched(fake *f, int threads, size_t queue, fy_cache *cache)
{
    fy_scheduler_options o;
    fy_scheduler_options_default(&o);
    o.threads = threads;
    o.queue_max = queue;
    o.window_us = 5000;
    o.cache = cache;
    current = f;
    fy_error err = {0};
    fy_scheduler *s = fy_scheduler_open(&o, &err);
    if (!s) fprintf(stderr, "open: %s\n", err.msg);
    return s;
}

/* ---- a waiter: collects callbacks ---- */

typedef struct waiter {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done, status, order_ok;
    size_t next;
    atomic_int calls_after_cancel;
} waiter;

static void on_sentence(void *user, size_t i, const char *t)
{
    waiter *w = user;
    (void)t;
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

static fy_job *submit_waves(fy_scheduler *s, const fy_route *route, const char *const *src,
                            const int *waves, size_t n, int64_t deadline, waiter *w, fy_error *err)
{
    fy_job_callbacks cb = {on_sentence, on_done, w};
    fy_sentence_in in[16];
    for (size_t i = 0; i < n; i++) in[i] = (fy_sentence_in){src[i], 0, route, waves ? waves[i] : 0};
    return fy_scheduler_submit(s, in, n, deadline, &cb, err);
}

static fy_job *submit_via(fy_scheduler *s, const fy_route *route, const char *const *src, size_t n,
                          int64_t deadline, waiter *w, fy_error *err)
{
    return submit_waves(s, route, src, NULL, n, deadline, w, err);
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

static void test_concurrent_batching(void)
{
    fake f;
    fake_init(&f);
    f.delay_us = 2000;
    fy_scheduler *s = open_sched(&f, 2, 1000, NULL);
    enum { N = 64 };
    pthread_t th[N];
    client c[N];
    for (int i = 0; i < N; i++) {
        c[i] = (client){s, i, 0};
        pthread_create(&th[i], NULL, client_main, &c[i]);
    }
    int all = 1;
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        all &= c[i].ok;
    }
    CHECK(all);
    fy_scheduler_stats st;
    fy_scheduler_get_stats(s, &st);
    CHECK(st.batch_sentences == 3 * N);
    CHECK(st.batches > 0 && (double)st.batch_sentences / (double)st.batches > 1.5);
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
    usleep(20000); /* the worker takes a's batch and blocks at the gate */
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
    usleep(20000);
    const char *b[] = {"等", "待"};
    waiter wb;
    waiter_init(&wb);
    int64_t t0 = fy_now_ms();
    fy_job *jb = submit(s, b, 2, t0 + 30, &wb, NULL);
    CHECK(waiter_wait(&wb) == FY_ETIMEOUT);
    int64_t took = fy_now_ms() - t0;
    CHECK(took >= 30 && took < 1000);
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
    usleep(20000);
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
    fy_cache *cache = fy_cache_new(1 << 20, NULL);
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
    fy_cache_get_stats(cache, &cs);
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
    usleep(20000);
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
    fy_cache *cache = fy_cache_new(1 << 20, NULL);
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
    fy_scheduler_free(s);
    fy_cache_free(cache);
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
    usleep(20000); /* the only worker holds j1's batch at a's gate */
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
    test_forget();
    test_waves();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
