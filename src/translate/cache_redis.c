/* cache_redis.c - the Redis tier: callers queue lookups and values, one
 * I/O thread sends them in rounds over one connection, and a circuit
 * breaker keeps a failing Redis off the request path.
 *
 * Why one I/O thread: the HTTP threads that look sentences up must never
 * wait longer than the timeout, whatever Redis does (a connect that hangs,
 * a name to resolve, a server that never answers), and concurrent lookups
 * should share a round trip. So callers only queue and wait on a condition
 * variable with their own deadline; the thread does all the network work.
 *
 * Locks: one mutex guards the queues, the breaker and the counters. The
 * connection and the round being sent belong to the I/O thread alone. A
 * lookup is shared by its caller and the I/O thread while queued or sent
 * (refs, under the lock); whoever drops the last reference frees it.
 */
#include "translate/cache_redis.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/segment.h"
#include "translate/cache_key.h"
#include "translate/redis_io.h"
#include "util/clock.h"
#include "util/list.h"

enum { L_QUEUED, L_SENT, L_DONE, L_FAILED };
/* One round's most: lookups (a request's sentences are one lookup), their
 * keys, and values stored. Bounds what one pipelined write holds. */
enum { ROUND_LOOKUPS = 256, ROUND_KEYS = 4096, ROUND_WRITES = 512 };
enum { ROUND_DONE, ROUND_FAILED, ROUND_NOCONNECT };

typedef struct lookup {
    struct lookup *prev, *next; /* the queue */
    int refs, state;
    size_t n;
    char (*keys)[FY_CACHE_REDIS_KEY_MAX];
    size_t *klen;
    char **values; /* [n]: what the I/O thread found (malloc'd hits) */
} lookup;

typedef struct wput {
    char *key, *val; /* one allocation: the key, NUL, the value */
    size_t klen, vlen;
} wput;

typedef struct redis {
    fy_cache base; /* first: a fy_cache * is a redis * */
    fy_redis_options o;
    char ttl[16];
    pthread_mutex_t lock;
    pthread_cond_t wake;     /* work queued, or stopping */
    pthread_cond_t answered; /* a lookup was settled */
    lookup *head, *tail;     /* lookups waiting for a round */
    wput *ring;              /* [queue_max] values waiting */
    size_t ring_head, ring_n;
    int stop, connect_now, ever_connected;
    int open; /* the breaker */
    int64_t retry_at_ms;
    int fails; /* failed rounds in a row */
    fy_cache_stats st;
    char logline[512]; /* to be logged once the lock is dropped */
    /* The I/O thread's own. */
    rio io;
    lookup *sent[ROUND_LOOKUPS];
    size_t nsent;
    wput batch[ROUND_WRITES];
    size_t nbatch;
    uint64_t w_ok, w_err, w_lost;
    pthread_t thread;
    int started;
} redis;

/* ---- lookups ------------------------------------------------------------- */

static void lookup_free(lookup *l)
{
    if (!l) return;
    for (size_t i = 0; l->values && i < l->n; i++) free(l->values[i]);
    free(l->values);
    free(l->keys);
    free(l->klen);
    free(l);
}

/* The Redis keys of keys[0..n); NULL when out of memory or a model name is
 * too long. Hashing happens here, in the caller's thread, not under the lock. */
static lookup *lookup_new(const fy_cache_key *keys, size_t n)
{
    lookup *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    l->n = n;
    l->keys = malloc(n * sizeof *l->keys);
    l->klen = malloc(n * sizeof *l->klen);
    l->values = calloc(n, sizeof *l->values);
    int ok = l->keys && l->klen && l->values;
    for (size_t i = 0; ok && i < n; i++) {
        int len = fy_cache_redis_key(keys[i].model, keys[i].text, l->keys[i]);
        ok = len > 0;
        l->klen[i] = ok ? (size_t)len : 0;
    }
    if (ok) return l;
    lookup_free(l);
    return NULL;
}

/* Drops one reference; lock held. */
static void lookup_unref(lookup *l)
{
    if (--l->refs == 0) lookup_free(l);
}

/* Moves l's answer into values and counts it; lock held. Returns the hits,
 * or FY_ETIMEOUT / FY_EIO when there is no answer. */
static int take_answer(redis *r, lookup *l, char **values)
{
    if (l->state != L_DONE) {
        r->st.errors += l->n;
        return l->state == L_FAILED ? FY_EIO : FY_ETIMEOUT;
    }
    int hits = 0;
    for (size_t i = 0; i < l->n; i++) {
        values[i] = l->values[i];
        l->values[i] = NULL;
        hits += values[i] != NULL;
    }
    r->st.hits += (uint64_t)hits;
    r->st.misses += l->n - (uint64_t)hits;
    return hits;
}

static int redis_get_many(fy_cache *base, const fy_cache_key *keys, size_t n, char **values,
                          int64_t deadline_ms)
{
    redis *r = (redis *)base;
    lookup *l = lookup_new(keys, n);
    pthread_mutex_lock(&r->lock);
    if (!l || r->open || r->stop) {
        r->st.errors += n; /* the breaker answers at once: nothing to wait for */
        pthread_mutex_unlock(&r->lock);
        int rc = l ? FY_EIO : FY_ENOMEM;
        lookup_free(l);
        return rc;
    }
    l->refs = 2; /* the caller and the I/O thread */
    FY_LIST_APPEND(r->head, r->tail, l);
    pthread_cond_signal(&r->wake);
    int64_t until = fy_now_us() + (int64_t)r->o.timeout_ms * 1000;
    if (deadline_ms && deadline_ms * 1000 < until) until = deadline_ms * 1000;
    struct timespec ts = fy_timespec_us(until);
    while (l->state <= L_SENT && fy_now_us() < until) /* ends at until at the latest */
        pthread_cond_timedwait(&r->answered, &r->lock, &ts);
    int rc = take_answer(r, l, values);
    if (l->state == L_QUEUED) { /* never sent: the round need not carry it */
        FY_LIST_UNLINK2(r->head, r->tail, l);
        l->refs--;
    }
    lookup_unref(l);
    pthread_mutex_unlock(&r->lock);
    return rc;
}

/* ---- stores -------------------------------------------------------------- */

static int make_put(wput *w, const fy_cache_key *k, const char *value, size_t vlen)
{
    char key[FY_CACHE_REDIS_KEY_MAX];
    int klen = fy_cache_redis_key(k->model, k->text, key);
    if (klen <= 0 || !(w->key = malloc((size_t)klen + 1 + vlen + 1))) return -1;
    memcpy(w->key, key, (size_t)klen + 1);
    w->val = w->key + klen + 1;
    memcpy(w->val, value, vlen + 1);
    w->klen = (size_t)klen;
    w->vlen = vlen;
    return 0;
}

/* Queues one value (taking w->key); lock held. 0, or -1 when full. */
static int ring_push(redis *r, wput *w)
{
    if (r->ring_n == r->o.queue_max) return -1;
    r->ring[(r->ring_head + r->ring_n++) % r->o.queue_max] = *w;
    return 0;
}

static void redis_put_many(fy_cache *base, const fy_cache_key *keys, const char *const *values,
                           size_t n)
{
    redis *r = (redis *)base;
    pthread_mutex_lock(&r->lock);
    int open = r->open || r->stop;
    if (open) r->st.writes_dropped += n; /* no point hashing what cannot be sent */
    pthread_mutex_unlock(&r->lock);
    if (open) return;
    for (size_t i = 0; i < n; i++) {
        size_t vlen = strlen(values[i]);
        wput w;
        if (vlen > r->o.value_max || make_put(&w, &keys[i], values[i], vlen)) continue;
        pthread_mutex_lock(&r->lock);
        int full = r->open || r->stop || ring_push(r, &w);
        if (full)
            r->st.writes_dropped++;
        else
            pthread_cond_signal(&r->wake);
        pthread_mutex_unlock(&r->lock);
        if (full) free(w.key);
    }
}

/* ---- the breaker (lock held) --------------------------------------------- */

/* Fails every queued lookup and drops every queued value. */
static void fail_queued(redis *r)
{
    while (r->head) {
        lookup *l = r->head;
        FY_LIST_UNLINK2(r->head, r->tail, l);
        l->state = L_FAILED;
        lookup_unref(l);
    }
    pthread_cond_broadcast(&r->answered);
    for (; r->ring_n; r->ring_n--, r->ring_head = (r->ring_head + 1) % r->o.queue_max) {
        free(r->ring[r->ring_head].key);
        r->st.writes_dropped++;
    }
}

static void breaker_open(redis *r)
{
    r->open = 1;
    r->retry_at_ms = fy_now_ms() + r->o.retry_ms;
    r->st.breaker_opened++;
    fail_queued(r);
    snprintf(r->logline, sizeof r->logline,
             "redis: %s:%d unavailable (%s); translating without it, trying again every %d ms",
             r->o.host, r->o.port, r->st.last_error, r->o.retry_ms);
}

static void breaker_close(redis *r)
{
    r->open = 0;
    r->fails = 0;
    r->ever_connected = 1; /* this line says so already */
    snprintf(r->logline, sizeof r->logline, "redis: %s:%d available again", r->o.host, r->o.port);
}

/* Logs the pending line, if any, without the lock. Lock held. */
static void flush_log(redis *r)
{
    if (!r->logline[0]) return;
    char line[sizeof r->logline];
    memcpy(line, r->logline, sizeof line);
    r->logline[0] = '\0';
    pthread_mutex_unlock(&r->lock);
    if (r->o.log) r->o.log(r->o.log_user, line);
    pthread_mutex_lock(&r->lock);
}

/* While open: wait for the retry time, then try to connect. Lock held. */
static void breaker_wait(redis *r)
{
    int64_t now = fy_now_ms();
    if (now < r->retry_at_ms) {
        struct timespec ts = fy_timespec_us(r->retry_at_ms * 1000);
        pthread_cond_timedwait(&r->wake, &r->lock, &ts);
        return;
    }
    pthread_mutex_unlock(&r->lock);
    int rc = rio_connect(&r->io, &r->o, fy_now_us() + (int64_t)r->o.timeout_ms * 1000);
    pthread_mutex_lock(&r->lock);
    if (rc) {
        snprintf(r->st.last_error, sizeof r->st.last_error, "%s", r->io.err);
        r->retry_at_ms = fy_now_ms() + r->o.retry_ms;
    } else {
        breaker_close(r);
    }
    r->st.up = !rc;
}

/* ---- rounds (the I/O thread) ----------------------------------------------- */

/* Takes the queued lookups (up to the round's bounds) and values; lock held. */
static void take_round(redis *r)
{
    size_t keys = 0;
    r->nsent = 0;
    while (r->head && r->nsent < ROUND_LOOKUPS && (!keys || keys + r->head->n <= ROUND_KEYS)) {
        lookup *l = r->head;
        FY_LIST_UNLINK2(r->head, r->tail, l);
        l->state = L_SENT;
        keys += l->n;
        r->sent[r->nsent++] = l;
    }
    for (r->nbatch = 0; r->ring_n && r->nbatch < ROUND_WRITES; r->ring_n--) {
        r->batch[r->nbatch++] = r->ring[r->ring_head];
        r->ring_head = (r->ring_head + 1) % r->o.queue_max;
    }
}

/* Settles the round's lookups: done (their values are filled) or failed. */
static void settle(redis *r, int ok)
{
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < r->nsent; i++) {
        r->sent[i]->state = ok ? L_DONE : L_FAILED;
        lookup_unref(r->sent[i]);
    }
    r->nsent = 0;
    pthread_cond_broadcast(&r->answered);
    pthread_mutex_unlock(&r->lock);
}

/* Buffers the round: one MGET per lookup, then one SET per value. */
static int send_round(redis *r)
{
    int rc = 0;
    for (size_t i = 0; i < r->nsent && !rc; i++) {
        lookup *l = r->sent[i];
        const char **argv = malloc((l->n + 1) * sizeof *argv);
        size_t *len = malloc((l->n + 1) * sizeof *len);
        rc = argv && len ? 0 : -1;
        for (size_t k = 0; !rc && k <= l->n; k++) {
            argv[k] = k ? l->keys[k - 1] : "MGET";
            len[k] = k ? l->klen[k - 1] : 4;
        }
        if (!rc) rc = rio_append(&r->io, (int)l->n + 1, argv, len);
        free(argv);
        free(len);
    }
    for (size_t i = 0; i < r->nbatch && !rc; i++) {
        wput *w = &r->batch[i];
        const char *argv[] = {"SET", w->key, w->val, "EX", r->ttl};
        size_t len[] = {3, w->klen, w->vlen, 2, strlen(r->ttl)};
        rc = rio_append(&r->io, r->o.ttl_s > 0 ? 5 : 3, argv, len);
    }
    return rc;
}

/* A value from Redis is used only when it could have been stored by us. */
static int value_ok(const redisReply *e, size_t max)
{
    return e->type == REDIS_REPLY_STRING && (size_t)e->len <= max &&
           !memchr(e->str, '\0', (size_t)e->len) && fy_utf8_valid(e->str, (size_t)e->len, NULL);
}

/* Reads the MGET answer of l into l->values. 0 or -1. */
static int read_mget(redis *r, lookup *l, int64_t deadline_us)
{
    redisReply *rep = rio_reply(&r->io, deadline_us);
    if (!rep) return -1;
    int ok = rep->type == REDIS_REPLY_ARRAY && rep->elements == l->n;
    if (!ok && rep->type == REDIS_REPLY_ERROR)
        snprintf(r->io.err, sizeof r->io.err, "MGET refused: %.80s", rep->str);
    else if (!ok)
        snprintf(r->io.err, sizeof r->io.err, "MGET: unexpected reply");
    for (size_t i = 0; ok && i < l->n; i++)
        if (value_ok(rep->element[i], r->o.value_max))
            l->values[i] = strndup(rep->element[i]->str, (size_t)rep->element[i]->len);
    freeReplyObject(rep);
    if (!ok) rio_close(&r->io);
    return ok ? 0 : -1;
}

/* Reads the SET answers, counting what was stored. 0 or -1. */
static int read_sets(redis *r, int64_t deadline_us)
{
    for (size_t i = 0; i < r->nbatch; i++) {
        redisReply *rep = rio_reply(&r->io, deadline_us);
        if (!rep) {
            r->w_lost += r->nbatch - i;
            return -1;
        }
        if (rep->type == REDIS_REPLY_ERROR)
            r->w_err++;
        else
            r->w_ok++;
        freeReplyObject(rep);
    }
    return 0;
}

/* One round over the network: connect when needed, send, read. The
 * lookups are settled as soon as their answers are in. */
static int exchange(redis *r)
{
    int64_t timeout_us = (int64_t)r->o.timeout_ms * 1000;
    if (rio_stale(&r->io)) rio_close(&r->io); /* closed by the server while idle */
    if (!r->io.c && rio_connect(&r->io, &r->o, fy_now_us() + timeout_us)) {
        r->w_lost += r->nbatch;
        return ROUND_NOCONNECT;
    }
    int64_t deadline = fy_now_us() + timeout_us;
    if (send_round(r) || rio_flush(&r->io, deadline)) {
        r->w_lost += r->nbatch;
        return ROUND_FAILED;
    }
    for (size_t i = 0; i < r->nsent; i++) {
        if (!read_mget(r, r->sent[i], deadline)) continue;
        r->w_lost += r->nbatch;
        return ROUND_FAILED;
    }
    settle(r, 1);
    return read_sets(r, deadline) ? ROUND_FAILED : ROUND_DONE;
}

static void record_rtt(redis *r, double secs)
{
    int b = 0;
    while (b < FY_CACHE_RTT_BUCKETS - 1 && secs > fy_cache_rtt_bounds[b]) b++;
    r->st.rtt[b]++;
    r->st.rtt_count++;
    r->st.rtt_sum += secs;
}

/* Counts a finished round and moves the breaker; lock held. */
static void account(redis *r, int rc, int work, double secs)
{
    r->st.writes += r->w_ok;
    r->st.write_errors += r->w_err;
    r->st.writes_dropped += r->w_lost;
    r->w_ok = r->w_err = r->w_lost = 0;
    if (rc == ROUND_DONE) {
        r->fails = 0;
        if (work) record_rtt(r, secs);
        if (!r->ever_connected)
            snprintf(r->logline, sizeof r->logline, "redis: connected to %s:%d (db %d)", r->o.host,
                     r->o.port, r->o.db);
        r->ever_connected = 1;
    } else {
        r->fails++;
        snprintf(r->st.last_error, sizeof r->st.last_error, "%s", r->io.err);
        rio_close(&r->io);
        if (rc == ROUND_NOCONNECT || r->fails >= r->o.failures)
            breaker_open(r);
        else
            r->connect_now = 1; /* find out now, not on a request, whether it is down */
    }
    r->st.up = r->io.c && !r->open;
}

/* Sends one round: what is queued now. Lock held (dropped meanwhile). */
static void run_round(redis *r)
{
    take_round(r);
    int work = r->nsent || r->nbatch;
    r->connect_now = 0;
    pthread_mutex_unlock(&r->lock);
    int64_t t0 = fy_now_us();
    int rc = exchange(r);
    double secs = (double)(fy_now_us() - t0) / 1e6;
    if (r->nsent) settle(r, 0); /* not answered: failed */
    for (size_t i = 0; i < r->nbatch; i++) free(r->batch[i].key);
    r->nbatch = 0;
    pthread_mutex_lock(&r->lock);
    account(r, rc, work, secs);
}

static void *io_main(void *arg)
{
    redis *r = arg;
    /* A write to a connection Redis closed raises SIGPIPE in this thread:
     * blocked here, write() fails with EPIPE instead of killing the process. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    pthread_mutex_lock(&r->lock);
    while (!r->stop) { /* each pass sleeps until there is work, or does one round */
        if (r->open)
            breaker_wait(r);
        else if (r->head || r->ring_n || r->connect_now)
            run_round(r);
        else
            pthread_cond_wait(&r->wake, &r->lock);
        flush_log(r);
    }
    fail_queued(r);
    pthread_mutex_unlock(&r->lock);
    rio_close(&r->io);
    return NULL;
}

/* ---- the tier ------------------------------------------------------------ */

static size_t redis_stats(fy_cache *base, fy_cache_stats *out, size_t cap)
{
    redis *r = (redis *)base;
    if (!cap) return 1;
    pthread_mutex_lock(&r->lock);
    *out = r->st;
    out->breaker_open = r->open;
    pthread_mutex_unlock(&r->lock);
    return 1;
}

static void redis_free(fy_cache *base)
{
    redis *r = (redis *)base;
    if (r->started) {
        pthread_mutex_lock(&r->lock);
        r->stop = 1;
        pthread_cond_broadcast(&r->wake);
        pthread_mutex_unlock(&r->lock);
        pthread_join(r->thread, NULL);
    }
    for (size_t i = 0; i < r->ring_n; i++) free(r->ring[(r->ring_head + i) % r->o.queue_max].key);
    free(r->ring);
    pthread_cond_destroy(&r->wake);
    pthread_cond_destroy(&r->answered);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

static const fy_cache_ops redis_ops = {redis_get_many, redis_put_many, redis_stats, redis_free};

static int check_options(const fy_redis_options *o, fy_error *err)
{
    if (!o->host[0] || o->port < 1 || o->port > 65535)
        return fy_err(err, FY_EINVAL, "redis: no host or a bad port");
    if (o->timeout_ms < 1 || o->retry_ms < 1 || o->failures < 1 || o->ttl_s < 0 || o->db < 0)
        return fy_err(err, FY_EINVAL, "redis: timeout, retry, failures, ttl or db out of range");
    if (!o->queue_max || !o->value_max || o->value_max > FY_CACHE_VALUE_MAX)
        return fy_err(err, FY_EINVAL, "redis: queue or value size out of range");
    return 0;
}

fy_cache *fy_cache_redis_new(const fy_redis_options *o, fy_error *err)
{
    if (check_options(o, err)) return NULL;
    redis *r = calloc(1, sizeof *r);
    if (!r || !(r->ring = calloc(o->queue_max, sizeof *r->ring))) {
        free(r);
        fy_err(err, FY_ENOMEM, "redis: out of memory");
        return NULL;
    }
    r->base.ops = &redis_ops;
    r->o = *o;
    snprintf(r->ttl, sizeof r->ttl, "%d", o->ttl_s);
    r->st.tier = "redis";
    r->st.remote = 1;
    r->connect_now = 1; /* connect at once, so that /ready and the log tell early */
    pthread_mutex_init(&r->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* deadlines are monotonic */
    pthread_cond_init(&r->wake, &ca);
    pthread_cond_init(&r->answered, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&r->thread, NULL, io_main, r)) {
        redis_free(&r->base);
        fy_err(err, FY_ENOMEM, "redis: cannot start the I/O thread");
        return NULL;
    }
    r->started = 1;
    return &r->base;
}
