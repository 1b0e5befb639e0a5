/* scheduler.c - one queue of sentences, N workers, batches by engine and
 * length.
 *
 * Locks: the scheduler lock guards the queue, the engine slots, the
 * active-job list and the counters; each job's lock guards its results and
 * callbacks. The order is always scheduler lock, then job lock. Jobs are
 * reference counted: the caller holds one, every queued or in-flight
 * sentence one, and the active-job list one, so a job lives until the last
 * of them lets go.
 */
#include "translate/scheduler.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "translate/alts.h"
#include "util/clock.h"
#include "util/list.h"

enum { ITEM_NONE, ITEM_QUEUED, ITEM_INFLIGHT };

/* A slot's reason for being off a device: a device name and an engine error. */
#define SLOT_WHY_MAX (FY_ERROR_MSG_MAX + 48)

/* What the scheduler keeps per engine: its workers' states and counters. */
typedef struct slot {
    const fy_engine *e;
    void **state; /* [threads] each worker's, made on its first batch */
    size_t queued, in_flight;
    int pins;               /* workers trimming their state (trim_previous) */
    char why[SLOT_WHY_MAX]; /* why a device's workers cannot take it */
    fy_engine_stats st;
    struct slot *prev, *next;
} slot;

typedef struct item {
    struct item *prev, *next; /* queue links while queued */
    fy_job *job;
    fy_route route; /* a copy: a cancelled job's batch may outlive the caller's */
    int leg;        /* the route's engine this sentence is at */
    int beam;       /* 1: greedy */
    slot *slot;     /* that engine's, while queued or in flight */
    char *text;     /* this leg's input (a trimmed copy) */
    int64_t enqueued_us;
    int tokens;
    int wave;                     /* fy_sentence_in.wave, for every leg */
    int background;               /* fy_sentence_in.background: the lower class */
    char variant[FY_VARIANT_MAX]; /* fy_sentence_in.variant, "" for none */
    int small; /* of a small job (FY_SMALL_JOB) or urgent, not background: an express worker
                  may take it */
    int state; /* ITEM_*, under the scheduler lock */
} item;

struct fy_job {
    fy_scheduler *s;
    atomic_int refs;
    pthread_mutex_t lock;
    size_t n, next_emit; /* sentences delivered in order so far */
    size_t taken;        /* legs taken into batches so far (scheduler lock) */
    char **out;          /* [n] translations, NULL until known */
    char ***alts;        /* [n] their alternatives (fy_alts lists), NULL for none */
    float *gap;          /* [n] */
    float *score;        /* [n] each one's last leg's score (fy_confidence), NAN unknown */
    item *items;         /* [n] queue entries (text NULL for cache hits) */
    int done, canceled, status;
    unsigned devices; /* bit i: device i translated some of it */
    fy_error err;
    int64_t deadline_ms;
    fy_job_callbacks cb;
    struct fy_job *prev, *next; /* the active list */
};

/* The cache's model id of an engine at a beam: its name for greedy, else
 * name@beamN, whose entries hold the translation and its alternatives in
 * their one-string form (alts.h); "#" + the sentence's variant after it. */
#define FY_CACHE_MODEL_MAX 160

/* Scratch of one cache lookup of n items (keys, answers, positions). */
typedef struct lookup_buf {
    fy_cache_key *keys;
    char **vals;
    size_t *pos;
    char ***alts;                      /* the final legs' alternatives (beam > 1), NULL for none */
    char (*model)[FY_CACHE_MODEL_MAX]; /* keys' model ids at a beam (cache_model) */
    fy_confidence *conf;               /* what the cache said of each one's legs */
} lookup_buf;

static int lookup_buf_init(lookup_buf *b, size_t n)
{
    n = n ? n : 1;
    b->keys = malloc(n * sizeof *b->keys);
    b->vals = malloc(n * sizeof *b->vals);
    b->pos = malloc(n * sizeof *b->pos);
    b->alts = calloc(n, sizeof *b->alts);
    b->model = malloc(n * sizeof *b->model);
    b->conf = malloc(n * sizeof *b->conf);
    return b->keys && b->vals && b->pos && b->alts && b->model && b->conf ? 0 : -1;
}

static void lookup_buf_free(lookup_buf *b)
{
    free(b->keys);
    free(b->vals);
    free(b->pos);
    free(b->alts);
    free(b->model);
    free(b->conf);
}

/* A device's workers and what they did (scheduler lock). */
typedef struct device {
    fy_sched_device d;
    int threads;
    int failed; /* an engine call failed with FY_EDEVICE: no more work here */
    uint64_t sentences, batches, given_back;
    int64_t busy_us;
} device;

/* A worker's state for an engine that cannot be made on its device: that
 * engine's batches are left to other devices' workers. */
static char cannot_place;
#define STATE_CANNOT ((void *)&cannot_place)

typedef struct worker {
    fy_scheduler *s;
    int index;
    device *dev;      /* the device it computes on */
    size_t max_sent;  /* its batches: sentences... */
    long max_tokens;  /* ...and padded tokens */
    int express;      /* takes only small jobs' sentences (fy_scheduler_options.express) */
    size_t nbatch;    /* the batch in flight's size, 0 when none (scheduler lock) */
    int big;          /* that batch holds a sentence of a job that is not small */
    atomic_int abort; /* set when no one waits for that batch any more (engine's worker_abort) */
    pthread_t thread;
    item **cand;         /* [4 * max_sent] candidates */
    item **batch;        /* [max_sent] */
    const char **src;    /* [max_sent] */
    char **out;          /* [max_sent] */
    char ***alts;        /* [max_sent] */
    float *gap;          /* [max_sent] */
    fy_confidence *conf; /* [max_sent] */
    int *codes;          /* [max_sent] per-sentence error codes */
    fy_error *errs;      /* [max_sent] and their messages */
    item **next;         /* [max_sent] items going on to their next leg */
    char **next_in;      /* [max_sent] their inputs */
    char **final;        /* [max_sent] what the cache answered for them */
    lookup_buf lb;       /* [max_sent] */
    slot *resident;      /* the engine it ran last (scheduler lock) */
    int advancing;       /* moving a batch's sentences on to their next leg (lock) */
    unsigned advanced;   /* how many times it has done so (lock) */
    int started;
} worker;

struct fy_scheduler {
    fy_scheduler_options o;
    pthread_mutex_t lock;
    pthread_cond_t work;    /* queue grew or stopping */
    pthread_cond_t reaper;  /* stopping */
    pthread_cond_t settled; /* an engine's last batch finished, or a worker's next legs */
    item *head, *tail;
    size_t depth;
    size_t urgent; /* queued items of a wave > 0 */
    size_t small;  /* queued items an express worker may take */
    int big_busy;  /* regular workers busy with a batch holding a big job's sentences */
    long queued_tokens;
    size_t in_flight;
    int idle; /* workers waiting for work */
    fy_job *active;
    slot *slots;
    int stop;
    worker *workers;
    int nworkers;
    device devs[FY_SCHED_DEVICES];
    int ndevs;
    atomic_int alive; /* devices that have not failed (written under lock) */
    pthread_t reaper_thread;
    int reaper_started;
    fy_scheduler_stats st;
};

const int fy_sched_hist_bounds[FY_SCHED_HIST - 1] = {1, 2, 4, 8, 16, 32, 64, 128};

void fy_scheduler_options_default(fy_scheduler_options *o)
{
    memset(o, 0, sizeof *o);
    o->queue_max = 1024;
    o->max_batch_tokens = 2048;
    o->max_batch_sentences = 32;
    o->window_us = 2000;
}

/* A job of at most this many sentences is small: express workers take it. */
#define FY_SMALL_JOB 4

/* ---- engines ------------------------------------------------------------- */

/* The slot of engine e, made on first sight; NULL when out of memory.
 * Scheduler lock held. */
static slot *slot_get(fy_scheduler *s, const fy_engine *e)
{
    for (slot *p = s->slots; p; p = p->next)
        if (p->e == e) return p;
    slot *p = calloc(1, sizeof *p);
    if (p) p->state = calloc((size_t)(s->nworkers), sizeof *p->state);
    if (!p || !p->state) {
        free(p);
        return NULL;
    }
    p->e = e;
    FY_LIST_PUSH(s->slots, p);
    return p;
}

static void slot_free(fy_scheduler *s, slot *p)
{
    for (int i = 0; i < s->nworkers; i++)
        if (p->state[i] && p->state[i] != STATE_CANNOT && p->e->worker_free)
            p->e->worker_free(p->state[i]);
    free(p->state);
    free(p);
}

static long count_tokens(const fy_engine *e, const char *text)
{
    size_t len = strlen(text);
    long t = e->count_tokens ? e->count_tokens(e->ctx, text, len) : -1;
    if (t < 1) t = (long)(len / 3 + 1);
    return t > 1 << 20 ? 1 << 20 : t;
}

/* ---- jobs ---------------------------------------------------------------- */

static void job_unref(fy_job *j)
{
    if (!j || atomic_fetch_sub(&j->refs, 1) != 1) return;
    for (size_t i = 0; i < j->n; i++) { /* any of the arrays may be missing (out of memory) */
        if (j->out) free(j->out[i]);
        if (j->alts) fy_alts_free(j->alts[i]);
        if (j->items) free(j->items[i].text);
    }
    free(j->out);
    free(j->alts);
    free(j->gap);
    free(j->score);
    free(j->items);
    pthread_mutex_destroy(&j->lock);
    free(j);
}

static void drop_refs(fy_job *j, int n)
{
    while (n-- > 0) job_unref(j);
}

/* Emits the translations now contiguous from next_emit, then completion.
 * Job lock held. */
static void job_emit(fy_job *j)
{
    if (j->done) return;
    while (j->next_emit < j->n && j->out[j->next_emit]) {
        size_t i = j->next_emit;
        if (j->cb.on_sentence)
            j->cb.on_sentence(j->cb.user, i, j->out[i], (fy_confidence){j->score[i], j->gap[i]});
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

static void enqueue(fy_scheduler *s, item *it, int64_t now)
{
    it->state = ITEM_QUEUED;
    it->enqueued_us = now;
    it->slot->queued++;
    FY_LIST_APPEND(s->head, s->tail, it);
    s->depth++;
    s->urgent += it->wave > 0;
    s->small += it->small;
    s->queued_tokens += it->tokens;
}

/* Takes a queued item out of the queue (lock held); the caller sets its state. */
static void queue_unlink(fy_scheduler *s, item *it)
{
    FY_LIST_UNLINK2(s->head, s->tail, it);
    it->slot->queued--;
    s->depth--;
    s->urgent -= it->wave > 0;
    s->small -= it->small;
    s->queued_tokens -= it->tokens;
}

/* Takes a job's still-queued sentences off the queue; scheduler lock held.
 * Returns how many references the caller must drop (after unlocking). */
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

/* Tells each worker whose batch in flight no one waits for any more (every
 * sentence's job done: cancelled, expired, failed) to stop it. Scheduler
 * lock held; the batch's jobs live while their items are in flight. */
static void abort_orphans(fy_scheduler *s)
{
    for (int k = 0; s->workers && k < s->nworkers; k++) {
        worker *w = &s->workers[k];
        int orphan = w->nbatch > 0;
        for (size_t i = 0; orphan && i < w->nbatch; i++) {
            fy_job *j = w->batch[i]->job;
            pthread_mutex_lock(&j->lock);
            orphan = j->done;
            pthread_mutex_unlock(&j->lock);
        }
        if (orphan) atomic_store(&w->abort, 1);
    }
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
    abort_orphans(s);
    return drop;
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
    abort_orphans(s);
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

float fy_job_gap(fy_job *j, size_t i)
{
    pthread_mutex_lock(&j->lock);
    float g = i < j->n ? j->gap[i] : INFINITY;
    pthread_mutex_unlock(&j->lock);
    return g;
}

fy_confidence fy_job_confidence(fy_job *j, size_t i)
{
    pthread_mutex_lock(&j->lock);
    fy_confidence c = {NAN, INFINITY};
    if (i < j->next_emit) c = (fy_confidence){j->score[i], j->gap[i]};
    pthread_mutex_unlock(&j->lock);
    return c;
}

const char *const *fy_job_alternatives(fy_job *j, size_t i, size_t *count)
{
    pthread_mutex_lock(&j->lock);
    char **l = i < j->next_emit ? j->alts[i] : NULL;
    pthread_mutex_unlock(&j->lock);
    *count = fy_alts_count(l);
    return (const char *const *)l;
}

unsigned fy_job_devices(fy_job *j)
{
    pthread_mutex_lock(&j->lock);
    unsigned m = j->devices;
    pthread_mutex_unlock(&j->lock);
    return m;
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
    return strndup(text, len);
}

static const char *cache_model(const fy_engine *e, int beam, const char *variant, char *buf)
{
    if (beam <= 1 && !*variant) return e->name;
    int n = snprintf(buf, FY_CACHE_MODEL_MAX, "%s", e->name);
    if (beam > 1 && n >= 0 && n < FY_CACHE_MODEL_MAX)
        n += snprintf(buf + n, FY_CACHE_MODEL_MAX - (size_t)n, "@beam%d", beam);
    if (*variant && n >= 0 && n < FY_CACHE_MODEL_MAX)
        snprintf(buf + n, FY_CACHE_MODEL_MAX - (size_t)n, "#%s", variant);
    return buf;
}

/* A beam's cache value into its translation (in place of *text) and its
 * alternatives (into *alts, which it frees first). 0, or -1 when out of
 * memory (*text freed and NULL). */
static int take_alts(char **text, char ***alts)
{
    char *best;
    char **l;
    int rc = fy_alts_decode(*text, &best, &l);
    free(*text);
    *text = rc ? NULL : best;
    fy_alts_free(*alts);
    *alts = rc ? NULL : l;
    return rc ? -1 : 0;
}

/* Counts the legs of engine e the cache answered; q of the keys were asked. */
static void count_hits(fy_scheduler *s, const item *const *its, const lookup_buf *b, size_t q)
{
    pthread_mutex_lock(&s->lock);
    for (size_t j = 0; j < q; j++) {
        if (!b->vals[j]) continue;
        const item *it = its[b->pos[j]];
        slot *p = slot_get(s, it->route.legs[it->leg]);
        if (p) p->st.cache_hits++;
    }
    pthread_mutex_unlock(&s->lock);
}

/* Moves items its[0..n) past the legs the cache answers, with ONE cache
 * lookup for all of them per leg (a remote tier makes it one round trip):
 * texts[k] is item k's input at its current leg (taken). Afterwards
 * final[k] is its translation when no leg is left to run (an empty input
 * translates to ""); else final[k] is NULL and its[k]->text is the input
 * of the leg to run, or NULL when memory ran out; b->alts[k] holds a final
 * beam hit's alternatives. A hit on a leg that is
 * not the last goes through the route's `between`, as the engine's output
 * does. deadline_ms bounds the lookups (0: the cache's own timeout). */
static void skip_cached(fy_scheduler *s, item **its, char **texts, char **final, size_t n,
                        lookup_buf *b, int64_t deadline_ms)
{
    size_t m = n; /* items still undecided, their indexes in b->pos */
    for (size_t k = 0; k < n; k++) {
        b->pos[k] = k, final[k] = NULL, its[k]->text = NULL, b->alts[k] = NULL;
        b->conf[k] = (fy_confidence){NAN, INFINITY};
    }
    /* Each pass finishes an item or moves it one leg on: a route has at
     * most FY_ROUTE_MAX legs, so FY_ROUTE_MAX + 1 passes decide every one. */
    for (int pass = 0; m && pass <= FY_ROUTE_MAX; pass++) {
        size_t q = 0;
        for (size_t j = 0; j < m; j++) {
            size_t k = b->pos[j];
            item *it = its[k];
            if (it->leg >= it->route.n || !*texts[k]) {
                final[k] = texts[k];
                continue;
            }
            const char *model =
                cache_model(it->route.legs[it->leg], it->beam, it->variant, b->model[q]);
            b->keys[q] = (fy_cache_key){model, texts[k]};
            b->pos[q++] = k;
        }
        if (!q) break;
        if (fy_cache_get_many(s->o.cache, b->keys, q, b->vals, deadline_ms) > 0)
            count_hits(s, (const item *const *)its, b, q);
        m = 0;
        for (size_t j = 0; j < q; j++) {
            size_t k = b->pos[j];
            item *it = its[k];
            if (!b->vals[j]) {
                it->text = texts[k]; /* a miss: this leg runs */
                continue;
            }
            free(texts[k]);
            texts[k] = b->vals[j];
            fy_confidence c;
            fy_cache_entry_decode(texts[k], &c);
            b->conf[k].score = c.score;
            if (c.margin < b->conf[k].margin) b->conf[k].margin = c.margin;
            if (it->beam > 1 && take_alts(&texts[k], &b->alts[k])) continue; /* out of memory */
            if (++it->leg < it->route.n) { /* a first leg's alternatives are not the answer's */
                fy_alts_free(b->alts[k]);
                b->alts[k] = NULL;
            }
            if (it->leg < it->route.n && it->route.between) {
                char *next = it->route.between(texts[k], strlen(texts[k]));
                free(texts[k]);
                texts[k] = next;
                if (!next) continue; /* out of memory: neither final nor text */
            }
            b->pos[m++] = k;
        }
    }
}

/* Fills out[] from the cache (or "" for empty sentences) and prepares the
 * queue items of the rest; returns how many must be queued, or -1 when
 * out of memory. */
static long job_prepare(fy_scheduler *s, fy_job *j, const fy_sentence_in *in)
{
    size_t n = j->n ? j->n : 1, m = 0;
    item **its = malloc(n * sizeof *its);
    char **texts = malloc(n * sizeof *texts), ** final = malloc(n * sizeof *final);
    lookup_buf b;
    int oom = lookup_buf_init(&b, n) || !its || !texts || !final;
    for (size_t i = 0; i < j->n && !oom; i++) {
        item *it = &j->items[i];
        j->gap[i] = INFINITY;
        j->score[i] = NAN;
        it->job = j;
        it->background = in[i].background != 0;
        if (in[i].variant) snprintf(it->variant, sizeof it->variant, "%s", in[i].variant);
        it->wave = in[i].wave > 0 && !it->background ? in[i].wave : 0;
        it->beam = in[i].beam > 1 ? in[i].beam : 1;
        it->small = (j->n <= FY_SMALL_JOB || it->wave > 0) && !it->background;
        if (in[i].route) it->route = *in[i].route;
        char *t = trim_copy(in[i].text ? in[i].text : "");
        if (!t) oom = 1;
        if (t && it->route.n < 1) j->out[i] = t; /* nothing to go through: the text as it is */
        if (t && it->route.n >= 1) its[m] = it, texts[m++] = t;
    }
    if (oom) {
        for (size_t k = 0; k < m; k++) free(texts[k]);
        m = 0;
    }
    skip_cached(s, its, texts, final, m, &b, j->deadline_ms);
    long misses = 0;
    for (size_t k = 0; k < m; k++) {
        item *it = its[k];
        j->gap[it - j->items] = b.conf[k].margin;
        if (final[k]) {
            j->out[it - j->items] = final[k];
            j->alts[it - j->items] = b.alts[k];
            j->score[it - j->items] = b.conf[k].score;
            continue;
        }
        if (!it->text) oom = 1;
        if (!it->text) continue;
        const fy_engine *e = it->route.legs[it->leg];
        size_t i = (size_t)(it - j->items);
        long tok = it->leg == 0 && in[i].tokens > 0 ? in[i].tokens : count_tokens(e, it->text);
        it->tokens = tok > 1 << 20 ? 1 << 20 : (int)tok;
        misses++;
    }
    free(its);
    free(texts);
    free(final);
    lookup_buf_free(&b);
    return oom ? -1 : misses;
}

/* May any working worker still take engine p's sentences? Lock held. */
static int placeable(const fy_scheduler *s, const slot *p)
{
    for (int i = 0; i < s->nworkers; i++) {
        const worker *w = &s->workers[i];
        if (!w->express && !w->dev->failed && p->state[i] != STATE_CANNOT) return 1;
    }
    return 0;
}

fy_job *fy_scheduler_submit(fy_scheduler *s, const fy_sentence_in *in, size_t n,
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
    j->alts = calloc(n ? n : 1, sizeof *j->alts);
    j->gap = calloc(n ? n : 1, sizeof *j->gap);
    j->score = calloc(n ? n : 1, sizeof *j->score);
    j->items = calloc(n ? n : 1, sizeof *j->items);
    if (!j->out || !j->alts || !j->gap || !j->score || !j->items) goto nomem;
    long misses = job_prepare(s, j, in);
    if (misses < 0) goto nomem;

    pthread_mutex_lock(&s->lock);
    int oom = 0;
    for (size_t i = 0; i < n && !oom; i++) {
        item *it = &j->items[i];
        if (it->text && !(it->slot = slot_get(s, it->route.legs[it->leg]))) oom = 1;
    }
    const slot *stuck = NULL; /* an engine no device can run */
    for (size_t i = 0; i < n && !oom && !stuck; i++)
        if (j->items[i].text && !placeable(s, j->items[i].slot)) stuck = j->items[i].slot;
    int full = s->depth + (size_t)misses > s->o.queue_max;
    if (s->stop || full || oom || stuck) {
        int stopping = s->stop;
        if (!stopping && full) s->st.rejected++;
        size_t depth = s->depth;
        fy_error why = {0}; /* a failing worker rewrites the slot's reason: copy it locked */
        if (stuck && !stopping)
            fy_err(&why, FY_EDEVICE, "no compute device can run model %s (%s)",
                   stuck->e->name ? stuck->e->name : "?", stuck->why);
        pthread_mutex_unlock(&s->lock);
        if (stopping)
            fy_err(err, FY_ECANCELED, "the server is shutting down");
        else if (stuck)
            fy_err(err, why.code, "%s", why.msg);
        else if (full)
            fy_err(err, FY_EBUSY, "queue full (%zu of %zu sentences waiting), try again later",
                   depth, s->o.queue_max);
        else
            fy_err(err, FY_ENOMEM, "out of memory");
        job_unref(j);
        return NULL;
    }
    int64_t t = fy_now_us();
    for (size_t i = 0; i < n; i++)
        if (j->items[i].text) enqueue(s, &j->items[i], t);
    atomic_fetch_add(&j->refs, (int)misses + 1); /* items + active list */
    FY_LIST_PUSH(s->active, j);
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

/* May worker w take it? An express worker only takes small jobs', and no
 * worker an engine its device cannot hold. */
static int takes(const worker *w, const item *it)
{
    return (!w->express || it->small) && it->slot->state[w->index] != STATE_CANNOT;
}

/* Does it go before best (both queued, it younger)? Interactive before
 * background; then a stream's urgent waves: the lowest wave; otherwise the
 * job that has had the fewest sentences taken into batches so far. */
static int goes_before(const fy_scheduler *s, const item *it, const item *best)
{
    if (it->background != best->background) return !it->background;
    if (s->urgent) return it->wave > 0 && (best->wave == 0 || it->wave < best->wave);
    return it->job->taken < best->job->taken;
}

/* The sentence a batch forms around, among those w takes (NULL: none):
 * the oldest of those nothing goes before (goes_before). A small request
 * does not wait behind the big ones queued before it, big ones take turns,
 * and background work waits for a worker no interactive sentence wants;
 * their sentences still fill the batches of their class around other
 * anchors, oldest first, so none starves within its class. Lock held. */
static item *pick_anchor(fy_scheduler *s, const worker *w)
{
    item *best = NULL;
    for (item *it = s->head; it; it = it->next)
        if (takes(w, it) && (!best || goes_before(s, it, best))) best = it;
    return best;
}

/* Picks a batch around the anchor sentence, from the sentences waiting for
 * the same engine, beam, wave and class (background or not): among the first candidates sorted by
 * length, grow a run of neighbours of similar length while the padded cost
 * (count x longest) stays within the token budget. Scheduler lock held;
 * the chosen items leave the queue. Returns the batch size. */
static size_t pick_batch(fy_scheduler *s, worker *w, item *anchor)
{
    size_t max_sent = w->max_sent, nc = 0;
    /* Idle workers share what is waiting: latency beats a bigger batch when
     * a core would otherwise sit still. */
    size_t share = (s->depth + (size_t)s->idle - 1) / (size_t)(s->idle > 0 ? s->idle : 1);
    if (share >= 1 && share < max_sent) max_sent = share;
    w->cand[nc++] = anchor;
    for (item *it = s->head; it && nc < 4 * max_sent; it = it->next)
        if (it != anchor && it->slot == anchor->slot && it->beam == anchor->beam &&
            it->wave == anchor->wave && it->background == anchor->background && takes(w, it))
            w->cand[nc++] = it;
    qsort(w->cand, nc, sizeof *w->cand, cmp_tokens);
    size_t p = 0;
    while (w->cand[p] != anchor) p++;
    size_t lo = p, hi = p;
    long longest = anchor->tokens, budget = w->max_tokens;
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
        it->job->taken++;
        w->batch[n++] = it;
    }
    anchor->slot->in_flight += n;
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

/* Waits for work and the batching window (an express worker: for small
 * jobs' sentences while a big job's batch holds a regular worker, no
 * window); returns the batch size, 0 to stop. Only the regular workers
 * count as idle: they share the queue between them. */
static size_t wait_batch(fy_scheduler *s, worker *w)
{
    pthread_mutex_lock(&s->lock);
    int regular = !w->express;
    s->idle += regular;
    for (;;) {
        if (s->stop || w->dev->failed) break;
        expire_head(s);
        /* An express worker runs only while a small job would otherwise wait
         * behind a big job's batch: with small jobs alone the regular
         * workers keep up, and the cores stay theirs (and the HTTP threads'). */
        if (!s->head || (w->express && (!s->small || !s->big_busy))) {
            pthread_cond_wait(&s->work, &s->lock);
            continue;
        }
        int64_t until = s->head->enqueued_us + s->o.window_us;
        int full =
            s->depth >= w->max_sent || s->queued_tokens >= w->max_tokens || s->urgent || w->express;
        if (!full && fy_now_us() < until) {
            struct timespec ts = fy_timespec_us(until);
            pthread_cond_timedwait(&s->work, &s->lock, &ts);
            continue;
        }
        item *anchor = pick_anchor(s, w);
        if (!anchor) { /* only what other devices' workers may take */
            pthread_cond_wait(&s->work, &s->lock);
            continue;
        }
        size_t n = pick_batch(s, w, anchor);
        w->nbatch = n;
        w->big = 0;
        for (size_t i = 0; regular && i < n; i++) w->big |= !w->batch[i]->small;
        s->big_busy += w->big;
        if (w->big && s->small) pthread_cond_broadcast(&s->work); /* an express worker's turn */
        atomic_store(&w->abort, 0);
        s->idle -= regular;
        s->in_flight += n;
        pthread_mutex_unlock(&s->lock);
        return n;
    }
    s->idle -= regular;
    pthread_mutex_unlock(&s->lock);
    return 0;
}

/* An unknown confidence. */
#define NO_CONF ((fy_confidence){NAN, INFINITY})

/* Stores one sentence's final result (taking translation and its
 * alternatives) or its failure into its job. Returns 1 when this failed
 * the job. */
static int deliver(item *it, char *translation, char **alts, fy_confidence c, int code,
                   const char *msg)
{
    fy_job *j = it->job;
    int failed = 0;
    size_t i = (size_t)(it - j->items);
    pthread_mutex_lock(&j->lock);
    if (c.margin < j->gap[i]) j->gap[i] = c.margin;
    if (!j->done && translation) {
        j->score[i] = c.score;
        j->out[i] = translation;
        j->alts[i] = alts;
        translation = NULL;
        alts = NULL;
        job_emit(j);
    } else if (!j->done) {
        job_fail(j, code, msg);
        failed = 1;
    }
    pthread_mutex_unlock(&j->lock);
    free(translation);
    fy_alts_free(alts);
    return failed;
}

/* Lowers the smallest logit gap of it's sentence to gap. */
static void note_gap(item *it, float gap)
{
    fy_job *j = it->job;
    size_t i = (size_t)(it - j->items);
    pthread_mutex_lock(&j->lock);
    if (gap < j->gap[i]) j->gap[i] = gap;
    pthread_mutex_unlock(&j->lock);
}

/* Moves it to its next leg, whose input is translation (taken) after the
 * route's `between`. Returns that input, NULL when out of memory. */
static char *advance(item *it, char *translation)
{
    it->leg++;
    free(it->text);
    it->text = NULL;
    if (!it->route.between) return translation;
    char *next = it->route.between(translation, strlen(translation));
    free(translation);
    return next;
}

/* Queues it (its text set) for the leg it is at. 1 when queued (it keeps
 * its job reference), 0 when its job is over or the scheduler stopping,
 * -1 when out of memory, -2 when no device can run that leg's engine (why
 * then says why). */
static int requeue(fy_scheduler *s, item *it, char why[SLOT_WHY_MAX])
{
    const fy_engine *e = it->route.legs[it->leg];
    it->tokens = (int)count_tokens(e, it->text); /* e stays: fy_scheduler_forget waits */
    fy_job *j = it->job;
    pthread_mutex_lock(&s->lock);
    pthread_mutex_lock(&j->lock);
    int alive = !j->done && !s->stop;
    pthread_mutex_unlock(&j->lock);
    int rc = alive ? ((it->slot = slot_get(s, e)) ? 1 : -1) : 0;
    if (rc == 1 && !placeable(s, it->slot)) {
        rc = -2;
        memcpy(why, it->slot->why, SLOT_WHY_MAX); /* rewritten under the lock */
    }
    if (rc == 1) {
        enqueue(s, it, fy_now_us());
        pthread_cond_broadcast(&s->work);
    } else {
        it->state = ITEM_NONE;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* One engine call for n sentences from i0 with beam (the engine's beam
 * search when it has one), their confidence in w->conf. */
static int engine_call(const fy_engine *e, void *state, worker *w, size_t i0, size_t n, int beam,
                       fy_error *err)
{
    if (e->translate_scored)
        return e->translate_scored(e->ctx, state, &w->src[i0], n, beam, &w->out[i0], &w->alts[i0],
                                   &w->conf[i0], err);
    int rc;
    if (beam > 1 && e->translate_beam)
        rc = e->translate_beam(e->ctx, state, &w->src[i0], n, beam, &w->out[i0], &w->alts[i0],
                               &w->gap[i0], err);
    else
        rc = e->translate(e->ctx, state, &w->src[i0], n, &w->out[i0], &w->gap[i0], err);
    for (size_t i = i0; i < i0 + n; i++) w->conf[i].margin = w->gap[i];
    return rc;
}

static void clear_result(worker *w, size_t i)
{
    free(w->out[i]);
    w->out[i] = NULL;
    fy_alts_free(w->alts[i]);
    w->alts[i] = NULL;
}

/* Translates the batch; a failed batch is retried one sentence at a time
 * so that one bad sentence does not sink its neighbours. Afterwards out[i]
 * is NULL exactly for the sentences that failed (code and message in
 * w->codes / w->errs). Returns FY_EDEVICE, with *err, when the device
 * failed (nothing is retried there), else 0. */
static int translate_batch(const fy_engine *e, void *state, worker *w, size_t n, int beam,
                           fy_error *err)
{
    for (size_t i = 0; i < n; i++) {
        w->out[i] = NULL, w->alts[i] = NULL, w->gap[i] = INFINITY;
        w->conf[i] = (fy_confidence){NAN, INFINITY};
    }
    int rc = engine_call(e, state, w, 0, n, beam, err);
    if (rc >= 0) {
        for (size_t i = 0; i < n; i++) {
            w->codes[i] = w->out[i] ? 0 : FY_EFORMAT;
            if (!w->out[i]) fy_err(&w->errs[i], FY_EFORMAT, "the engine returned no translation");
        }
        return 0;
    }
    for (size_t i = 0; i < n; i++) clear_result(w, i);
    if (rc == FY_EDEVICE) return rc;
    /* A batch stopped because no one waits for it: no retries either. */
    int aborted = rc == FY_ECANCELED && atomic_load(&w->abort);
    if (n == 1 || aborted) {
        for (size_t i = 0; i < n; i++) w->codes[i] = rc, w->errs[i] = *err;
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        fy_error e1 = {0};
        int r1 = engine_call(e, state, w, i, 1, beam, &e1);
        if (r1 < 0) clear_result(w, i);
        if (r1 == FY_EDEVICE) {
            for (size_t k = 0; k < i; k++) clear_result(w, k);
            *err = e1;
            return r1;
        }
        w->codes[i] = r1 < 0 ? r1 : 0;
        w->errs[i] = e1;
    }
    return 0;
}

/* This worker's state for the batch's engine, made on first use (NULL with
 * err when it cannot be made). The slot cannot go away meanwhile: its
 * in_flight count is not zero. */
static void *worker_state(fy_scheduler *s, worker *w, slot *p, fy_error *err)
{
    pthread_mutex_lock(&s->lock);
    void *st = p->state[w->index];
    pthread_mutex_unlock(&s->lock);
    if (st || !p->e->worker_new) return st;
    st = p->e->worker_new(p->e->ctx, w->dev->d.dev, err);
    if (!st) return NULL;
    if (p->e->worker_abort) p->e->worker_abort(st, &w->abort);
    pthread_mutex_lock(&s->lock);
    p->state[w->index] = st;
    pthread_mutex_unlock(&s->lock);
    return st;
}

/* A thread runs one batch at a time: when it goes on to another engine, the
 * state of the one it ran last gives its memory back (engine's worker_trim),
 * so that serving several models keeps one model's scratch per thread. */
static void trim_previous(fy_scheduler *s, worker *w, slot *p)
{
    pthread_mutex_lock(&s->lock);
    slot *q = w->resident;
    void *st = q && q != p && q->e->worker_trim ? q->state[w->index] : NULL;
    if (st == STATE_CANNOT) st = NULL;
    if (st) q->pins++; /* fy_scheduler_forget waits for it */
    w->resident = p;
    pthread_mutex_unlock(&s->lock);
    if (!st) return;
    q->e->worker_trim(st);
    pthread_mutex_lock(&s->lock);
    if (!--q->pins) pthread_cond_broadcast(&s->settled);
    pthread_mutex_unlock(&s->lock);
}

/* How run_engine ended. */
enum { RAN, GIVE_BACK_DEVICE, GIVE_BACK_ENGINE };

/* Runs the engine, or records why it could not run for every sentence.
 * On a device of its own (not the default one) a worker whose state for the
 * engine cannot be made leaves that engine to the others (GIVE_BACK_ENGINE),
 * and one whose device failed leaves all work (GIVE_BACK_DEVICE): the
 * batch then goes back to the queue untouched. */
static int run_engine(fy_scheduler *s, worker *w, slot *p, size_t n, int beam, fy_error *err)
{
    trim_previous(s, w, p);
    void *st = worker_state(s, w, p, err);
    if (st || !p->e->worker_new)
        return translate_batch(p->e, st, w, n, beam, err) == FY_EDEVICE ? GIVE_BACK_DEVICE : RAN;
    if (err->code == FY_EDEVICE) return GIVE_BACK_DEVICE;
    if (w->dev->d.dev) return GIVE_BACK_ENGINE;
    for (size_t i = 0; i < n; i++) {
        w->out[i] = NULL;
        w->alts[i] = NULL;
        w->gap[i] = INFINITY;
        w->conf[i] = (fy_confidence){NAN, INFINITY};
        w->codes[i] = err->code ? err->code : FY_ENOMEM;
        w->errs[i] = *err;
    }
    return RAN;
}

/* Puts it back at the head of the queue (lock held): it was the oldest. */
static void enqueue_front(fy_scheduler *s, item *it)
{
    it->state = ITEM_QUEUED;
    it->slot->queued++;
    it->prev = NULL;
    it->next = s->head;
    if (s->head)
        s->head->prev = it;
    else
        s->tail = it;
    s->head = it;
    s->depth++;
    s->urgent += it->wave > 0;
    s->small += it->small;
    s->queued_tokens += it->tokens;
}

/* Fails the jobs with sentences queued for p (any engine when p is NULL)
 * with code and msg. Lock held. */
static void fail_queued(fy_scheduler *s, const slot *p, int code, const char *msg)
{
    for (;;) {
        fy_job *j = NULL;
        for (item *it = s->head; it && !j; it = it->next)
            if (!p || it->slot == p) j = it->job;
        if (!j) return;
        atomic_fetch_add(&j->refs, 1); /* keep it while its references drop */
        drop_refs(j, job_expire(s, j, code, msg));
        job_unref(j);
    }
}

/* Gives the batch back to the queue for other workers, because this
 * worker's device failed (why: err) or cannot hold the engine. Logs once
 * per device or engine; fails what no worker is left to take. */
static void give_back(fy_scheduler *s, worker *w, slot *p, size_t n, int why, const fy_error *err)
{
    pthread_mutex_lock(&s->lock);
    for (size_t k = n; k-- > 0;) {
        item *it = w->batch[k];
        pthread_mutex_lock(&it->job->lock);
        int done = it->job->done;
        pthread_mutex_unlock(&it->job->lock);
        if (done) {
            it->state = ITEM_NONE;
            job_unref(it->job); /* the job holds its own reference still */
        } else {
            enqueue_front(s, it);
        }
    }
    s->in_flight -= n;
    p->in_flight -= n;
    if (!p->in_flight) pthread_cond_broadcast(&s->settled);
    w->nbatch = 0;
    s->big_busy -= w->big;
    w->big = 0;
    w->dev->given_back += n;
    char msg[FY_ERROR_MSG_MAX + 112];
    if (why == GIVE_BACK_DEVICE && !w->dev->failed) {
        w->dev->failed = 1;
        s->alive--;
        fprintf(stderr, "fanyi: device %s failed (%s); its work goes to the other devices\n",
                w->dev->d.name, err->msg);
    } else if (why == GIVE_BACK_ENGINE) {
        p->state[w->index] = STATE_CANNOT;
        fprintf(stderr, "fanyi: %s: model %s stays off this device (%s)\n", w->dev->d.name,
                p->e->name ? p->e->name : "?", err->msg);
    }
    snprintf(msg, sizeof msg, "no compute device can run this model (%.40s: %s)", w->dev->d.name,
             err->msg);
    snprintf(p->why, sizeof p->why, "%.40s: %s", w->dev->d.name, err->msg);
    if (!s->alive)
        fail_queued(s, NULL, FY_EDEVICE, msg);
    else if (!placeable(s, p))
        fail_queued(s, p, why == GIVE_BACK_DEVICE ? FY_EDEVICE : err->code, msg);
    pthread_cond_broadcast(&s->work);
    pthread_mutex_unlock(&s->lock);
}

static void record_batch(fy_scheduler *s, slot *p, size_t n, long tokens)
{
    s->in_flight -= n;
    s->st.batches++;
    s->st.batch_sentences += n;
    s->st.batch_tokens += (uint64_t)tokens;
    int b = 0;
    while (b < FY_SCHED_HIST - 1 && (int)n > fy_sched_hist_bounds[b]) b++;
    s->st.batch_hist[b]++;
    p->st.batches++;
    p->st.sentences += n;
    p->in_flight -= n;
    if (!p->in_flight) pthread_cond_broadcast(&s->settled);
}

/* Stores the batch's translations (never a failed sentence's) in one call;
 * at a beam above 1 with their alternatives, in one string each. */
static void store_batch(fy_scheduler *s, worker *w, const fy_engine *e, size_t n, int beam)
{
    if (!s->o.cache) return;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!w->out[i]) continue;
        char *alts = beam > 1 ? fy_alts_encode(w->out[i], w->alts[i]) : NULL;
        char *v =
            beam <= 1 || alts ? fy_cache_entry_encode(alts ? alts : w->out[i], &w->conf[i]) : NULL;
        free(alts);
        if (!v) continue; /* out of memory: not stored */
        const char *model = cache_model(e, beam, w->batch[i]->variant, w->lb.model[m]);
        w->lb.keys[m] = (fy_cache_key){model, w->src[i]};
        w->lb.vals[m++] = v;
    }
    fy_cache_put_many(s->o.cache, w->lb.keys, (const char *const *)w->lb.vals, m);
    for (size_t k = 0; k < m; k++) free(w->lb.vals[k]);
}

/* Delivers the batch's last legs and failures; the items with a leg to go
 * are left in w->next / w->next_in (returns how many). Adds to *failed. */
static size_t deliver_batch(worker *w, size_t n, int *failed)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        item *it = w->batch[i];
        fy_job *j = it->job;
        char **alts = w->alts[i];
        w->alts[i] = NULL; /* the job's now, or freed */
        int over = 0;
        if (w->out[i]) {
            pthread_mutex_lock(&j->lock);
            j->devices |= 1u << (w->dev - w->s->devs);
            over = j->done;
            pthread_mutex_unlock(&j->lock);
        }
        if (!w->out[i]) {
            *failed += deliver(it, NULL, alts, NO_CONF, w->codes[i], w->errs[i].msg);
        } else if (it->leg + 1 >= it->route.n || over) {
            /* a job that is over (cancelled, late, failed) takes no next
             * leg: its next engine may be unloaded once it has ended */
            deliver(it, w->out[i], alts, w->conf[i], 0, NULL);
        } else {
            fy_alts_free(alts); /* a first leg's alternatives are not the answer's */
            char *next = advance(it, w->out[i]);
            if (next) {
                note_gap(it, w->conf[i].margin);
                w->next[m] = it;
                w->next_in[m++] = next;
                continue; /* still holds its reference */
            }
            *failed +=
                deliver(it, NULL, NULL, NO_CONF, FY_ENOMEM, "out of memory between two legs");
        }
        job_unref(j);
    }
    return m;
}

/* The items going on to another leg: what the cache has (one lookup for
 * all of them) is delivered, the rest goes back into the queue. */
static void next_legs(fy_scheduler *s, worker *w, size_t m, int *failed)
{
    skip_cached(s, w->next, w->next_in, w->final, m, &w->lb, 0);
    for (size_t k = 0; k < m; k++) {
        item *it = w->next[k];
        fy_job *j = it->job;
        char why[SLOT_WHY_MAX];
        int rc = w->final[k] || !it->text ? -1 : requeue(s, it, why);
        if (rc == 1) continue; /* queued: still holds its reference */
        if (w->final[k])
            deliver(it, w->final[k], w->lb.alts[k], w->lb.conf[k], 0, NULL);
        else if (rc == 0) /* its job is over already, or the scheduler stopping */
            deliver(it, NULL, NULL, NO_CONF, FY_ECANCELED, "the server is shutting down");
        else if (rc == -2)
            *failed += deliver(it, NULL, NULL, NO_CONF, FY_EDEVICE, why);
        else
            *failed +=
                deliver(it, NULL, NULL, NO_CONF, FY_ENOMEM, "out of memory between two legs");
        job_unref(j);
    }
}

/* Has a translated sentence of the batch another leg to go? */
static int has_next_leg(const worker *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (w->out[i] && w->batch[i]->leg + 1 < w->batch[i]->route.n) return 1;
    return 0;
}

static void run_batch(fy_scheduler *s, worker *w, size_t n)
{
    slot *p = w->batch[0]->slot;
    long tokens = 0;
    for (size_t i = 0; i < n; i++) {
        w->src[i] = w->batch[i]->text;
        tokens += w->batch[i]->tokens;
    }
    int beam = w->batch[0]->beam;
    fy_error err = {0};
    int64_t t0 = fy_now_us();
    int how = run_engine(s, w, p, n, beam, &err);
    if (how != RAN) {
        give_back(s, w, p, n, how, &err);
        return;
    }
    store_batch(s, w, p->e, n, beam);
    /* Counters first, so that a client woken by its answer already sees them. */
    pthread_mutex_lock(&s->lock);
    w->dev->busy_us += fy_now_us() - t0;
    w->dev->sentences += n;
    w->dev->batches++;
    for (size_t i = 0; i < n; i++) w->batch[i]->state = ITEM_NONE;
    w->nbatch = 0;
    s->big_busy -= w->big;
    w->big = 0;
    record_batch(s, p, n, tokens);
    /* Counted before the jobs are looked at: a job that ends after that
     * look may let its next engine be unloaded, and fy_scheduler_forget
     * waits until this worker is done with it. */
    w->advancing = has_next_leg(w, n);
    pthread_mutex_unlock(&s->lock);
    int failed = 0;
    size_t m = deliver_batch(w, n, &failed);
    if (m) next_legs(s, w, m, &failed);
    if (failed || w->advancing) {
        pthread_mutex_lock(&s->lock);
        s->st.failed += (uint64_t)failed;
        if (w->advancing) {
            w->advancing = 0;
            w->advanced++;
            pthread_cond_broadcast(&s->settled);
        }
        pthread_mutex_unlock(&s->lock);
    }
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
        struct timespec ts = fy_timespec_us(fy_now_us() + 10000);
        pthread_cond_timedwait(&s->reaper, &s->lock, &ts);
        int64_t now = fy_now_ms();
        for (fy_job *j = s->active, *next; j; j = next) {
            next = j->next;
            pthread_mutex_lock(&j->lock);
            int done = j->done;
            pthread_mutex_unlock(&j->lock);
            if (!done && j->deadline_ms && j->deadline_ms <= now) {
                drop_refs(j, job_expire(s, j, FY_ETIMEOUT,
                                        "deadline passed before translation finished"));
                done = 1;
            }
            if (!done) continue;
            FY_LIST_UNLINK(s->active, j);
            job_unref(j); /* the active list's reference; items hold their own */
        }
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* Waits until every worker that is moving sentences on to their next leg
 * has done so (not for later batches: no starving under steady traffic).
 * Scheduler lock held. */
static void wait_advanced(fy_scheduler *s)
{
    for (int i = 0; i < s->nworkers; i++) {
        const worker *w = &s->workers[i];
        unsigned seen = w->advanced;
        while (w->advancing && w->advanced == seen) pthread_cond_wait(&s->settled, &s->lock);
    }
}

void fy_scheduler_forget(fy_scheduler *s, const fy_engine *e, fy_engine_stats *final)
{
    if (final) memset(final, 0, sizeof *final);
    if (!s || !e) return;
    pthread_mutex_lock(&s->lock);
    wait_advanced(s); /* e may have no slot yet and still be some sentence's next leg */
    slot *p = NULL;
    for (slot *q = s->slots; q && !p; q = q->next)
        if (q->e == e) p = q;
    if (!p) {
        pthread_mutex_unlock(&s->lock);
        return;
    }
    for (;;) {
        fail_queued(s, p, FY_ECANCELED, "the model was unloaded");
        while (p->in_flight || p->pins) pthread_cond_wait(&s->settled, &s->lock);
        wait_advanced(s);
        if (!p->queued) break; /* a job that had not ended went on to e meanwhile */
    }
    for (int i = 0; i < s->nworkers; i++)
        if (s->workers[i].resident == p) s->workers[i].resident = NULL;
    if (final) *final = p->st;
    FY_LIST_UNLINK(s->slots, p);
    pthread_mutex_unlock(&s->lock);
    slot_free(s, p);
}

/* ---- lifecycle ----------------------------------------------------------- */

static int worker_init(fy_scheduler *s, worker *w, int index, device *dev, int express,
                       fy_error *err)
{
    w->s = s;
    w->index = index;
    w->dev = dev;
    w->express = express;
    w->max_sent = (size_t)dev->d.max_batch_sentences;
    w->max_tokens = dev->d.max_batch_tokens;
    size_t m = w->max_sent;
    w->cand = calloc(4 * m, sizeof *w->cand);
    w->batch = calloc(m, sizeof *w->batch);
    w->src = calloc(m, sizeof *w->src);
    w->out = calloc(m, sizeof *w->out);
    w->alts = calloc(m, sizeof *w->alts);
    w->gap = calloc(m, sizeof *w->gap);
    w->conf = calloc(m, sizeof *w->conf);
    w->codes = calloc(m, sizeof *w->codes);
    w->errs = calloc(m, sizeof *w->errs);
    w->next = calloc(m, sizeof *w->next);
    w->next_in = calloc(m, sizeof *w->next_in);
    w->final = calloc(m, sizeof *w->final);
    int lb = lookup_buf_init(&w->lb, m);
    if (!w->cand || !w->batch || !w->src || !w->out || !w->alts || !w->gap || !w->conf ||
        !w->codes || !w->errs || !w->next || !w->next_in || !w->final || lb)
        return fy_err(err, FY_ENOMEM, "scheduler: out of memory");
    if (pthread_create(&w->thread, NULL, worker_main, w))
        return fy_err(err, FY_ENOMEM, "scheduler: cannot start a worker thread");
    w->started = 1;
    return 0;
}

/* The devices with their limits filled in; the default device (dev NULL)
 * gets the express workers. Returns the worker count. */
static int plan_devices(fy_scheduler *s)
{
    fy_scheduler_options *o = &s->o;
    s->ndevs =
        o->ndevices > 0 ? (o->ndevices < FY_SCHED_DEVICES ? o->ndevices : FY_SCHED_DEVICES) : 1;
    int workers = 0, has_default = 0;
    for (int i = 0; i < s->ndevs; i++) {
        device *d = &s->devs[i];
        d->d = o->ndevices > 0 ? o->devices[i] : (fy_sched_device){.name = "cpu"};
        if (!d->d.name) d->d.name = d->d.dev ? "device" : "cpu";
        if (d->d.threads <= 0) d->d.threads = d->d.dev ? 1 : o->threads;
        if (d->d.max_batch_sentences <= 0) d->d.max_batch_sentences = o->max_batch_sentences;
        if (d->d.max_batch_tokens <= 0) d->d.max_batch_tokens = o->max_batch_tokens;
        d->threads = d->d.threads;
        has_default |= !d->d.dev;
        workers += d->threads;
    }
    if (!has_default) o->express = 0;
    s->alive = s->ndevs;
    return workers + o->express;
}

fy_scheduler *fy_scheduler_open(const fy_scheduler_options *o, fy_error *err)
{
    fy_scheduler *s = calloc(1, sizeof *s);
    if (!s) {
        fy_err(err, FY_ENOMEM, "scheduler: out of memory");
        return NULL;
    }
    if (o)
        s->o = *o;
    else
        fy_scheduler_options_default(&s->o);
    if (s->o.threads <= 0) s->o.threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (s->o.threads <= 0) s->o.threads = 1;
    if (!s->o.queue_max) s->o.queue_max = 1024;
    if (s->o.max_batch_tokens <= 0) s->o.max_batch_tokens = 2048;
    if (s->o.max_batch_sentences <= 0) s->o.max_batch_sentences = 32;
    if (s->o.window_us < 0) s->o.window_us = 0;
    if (s->o.express < 0) s->o.express = 0;
    pthread_mutex_init(&s->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* deadlines are monotonic */
    pthread_cond_init(&s->work, &ca);
    pthread_cond_init(&s->reaper, &ca);
    pthread_cond_init(&s->settled, &ca);
    pthread_condattr_destroy(&ca);
    int total = plan_devices(s);
    s->workers = calloc((size_t)total, sizeof *s->workers);
    if (!s->workers) {
        fy_err(err, FY_ENOMEM, "scheduler: out of memory");
        goto fail;
    }
    device *dflt = NULL;
    for (int i = 0; i < s->ndevs; i++) {
        device *d = &s->devs[i];
        if (!d->d.dev && !dflt) dflt = d;
        for (int k = 0; k < d->threads; k++) {
            int i = s->nworkers++; /* counted now: a failed one may hold buffers */
            if (worker_init(s, &s->workers[i], i, d, 0, err) < 0) goto fail;
        }
    }
    for (int k = 0; k < s->o.express; k++) {
        int i = s->nworkers++;
        dflt->threads++;
        if (worker_init(s, &s->workers[i], i, dflt, 1, err) < 0) goto fail;
    }
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
    for (int i = 0; s->workers && i < s->nworkers; i++)
        atomic_store(&s->workers[i].abort, 1); /* no batch in flight is waited for now */
    pthread_cond_broadcast(&s->work);
    pthread_cond_broadcast(&s->reaper);
    pthread_mutex_unlock(&s->lock);
    for (int i = 0; s->workers && i < s->nworkers; i++) {
        worker *w = &s->workers[i];
        if (w->started) pthread_join(w->thread, NULL);
        free(w->cand);
        free(w->batch);
        free(w->src);
        free(w->out);
        free(w->alts);
        free(w->gap);
        free(w->conf);
        free(w->codes);
        free(w->errs);
        free(w->next);
        free(w->next_in);
        free(w->final);
        lookup_buf_free(&w->lb);
    }
    if (s->reaper_started) pthread_join(s->reaper_thread, NULL);
    pthread_mutex_lock(&s->lock);
    while (s->head) {
        fy_job *j = s->head->job;
        drop_refs(j, job_expire(s, j, FY_ECANCELED, "the server is shutting down"));
    }
    for (fy_job *j = s->active, *next; j; j = next) {
        next = j->next;
        job_unref(j);
    }
    s->active = NULL;
    while (s->slots) {
        slot *p = s->slots;
        FY_LIST_UNLINK(s->slots, p);
        slot_free(s, p);
    }
    pthread_mutex_unlock(&s->lock);
    pthread_cond_destroy(&s->work);
    pthread_cond_destroy(&s->reaper);
    pthread_cond_destroy(&s->settled);
    pthread_mutex_destroy(&s->lock);
    free(s->workers);
    free(s);
}

void fy_scheduler_get_stats(fy_scheduler *s, fy_scheduler_stats *out)
{
    pthread_mutex_lock(&s->lock);
    *out = s->st;
    out->queue_depth = s->depth;
    out->queue_max = s->o.queue_max;
    out->in_flight = s->in_flight;
    out->threads = s->nworkers - s->o.express;
    pthread_mutex_unlock(&s->lock);
}

void fy_scheduler_engine_stats(fy_scheduler *s, const fy_engine *e, fy_engine_stats *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&s->lock);
    for (slot *p = s->slots; p; p = p->next) {
        if (p->e != e) continue;
        *out = p->st;
        out->queued = p->queued;
        out->in_flight = p->in_flight;
    }
    pthread_mutex_unlock(&s->lock);
}

const char *fy_scheduler_device_name(fy_scheduler *s, int i)
{
    return i >= 0 && i < s->ndevs ? s->devs[i].d.name : NULL;
}

int fy_scheduler_devices_alive(fy_scheduler *s)
{
    /* Without the lock: /health probes must not wait behind the workers. */
    return atomic_load(&s->alive);
}

int fy_scheduler_device_stats(fy_scheduler *s, fy_device_stats *out, int n)
{
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < s->ndevs && i < n; i++) {
        const device *d = &s->devs[i];
        out[i] = (fy_device_stats){.name = d->d.name,
                                   .threads = d->threads,
                                   .failed = d->failed,
                                   .sentences = d->sentences,
                                   .batches = d->batches,
                                   .given_back = d->given_back,
                                   .busy_seconds = (double)d->busy_us / 1e6};
    }
    int count = s->ndevs;
    pthread_mutex_unlock(&s->lock);
    return count;
}
