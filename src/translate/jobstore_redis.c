/* jobstore_redis.c - the document jobs' store in Redis (key layout:
 * jobstore.h), shared by every replica pointed at the same server.
 *
 * One connection, one exchange at a time (a mutex): the calls are few
 * (a job's creation, a checkpoint per batch, a state every second or so,
 * polls) and each is one pipelined round trip. Every exchange has one
 * deadline: the configured timeout (at least 2 s) plus the time the bytes
 * it carries take at 20 MB/s, so a document upload to a slow Redis is not
 * cut while a hung one still fails. A failure closes the connection; the
 * next call connects again. Leases are SET NX PX, renewed and released
 * only by their owner (a Lua compare-and-set), so a replica that dies
 * loses its jobs to the others when the lease runs out.
 */
#include "translate/jobstore.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "translate/redis_io.h"
#include "util/buf.h"
#include "util/clock.h"

#define PREFIX "fanyi:job:"
#define ALL    "fanyi:jobs"
#define OPEN   "fanyi:jobs:open"
#define BYTES  "fanyi:jobs:bytes"

enum { MAX_ARGS = 12, MIN_TIMEOUT_MS = 2000, OPEN_TTL_S = 7 * 24 * 3600 };

/* Renews the lease if this owner holds it; releases it if so. */
static const char RENEW[] = "if redis.call('get', KEYS[1]) == ARGV[1] then "
                            "return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
static const char RELEASE[] = "if redis.call('get', KEYS[1]) == ARGV[1] then "
                              "return redis.call('del', KEYS[1]) else return 0 end";

typedef struct redis_store {
    fy_jobstore base;
    fy_redis_options o;
    uint64_t max_bytes;
    char owner[80]; /* this process: host, pid and 64 random bits */
    pthread_mutex_t lock;
    rio io;
    uint64_t bytes; /* as last summed */
    size_t jobs;
} redis_store;

/* One command: up to MAX_ARGS arguments (keys built in its buffers), or
 * an argument array of the caller's (argv, len set). Not to be copied. */
typedef struct cmd {
    int argc;
    const char **argv;
    size_t *len;
    const char *a[MAX_ARGS];
    size_t l[MAX_ARGS];
    char key[3][96];
} cmd;

static void arg(cmd *c, const char *s, size_t len)
{
    c->argv = c->a;
    c->len = c->l;
    c->a[c->argc] = s;
    c->l[c->argc++] = len;
}

static void args(cmd *c, const char *s)
{
    arg(c, s, strlen(s));
}

/* A key of job id ("" : the state's) as the command's next argument. */
static void key(cmd *c, int k, const char *id, const char *suffix)
{
    snprintf(c->key[k], sizeof c->key[k], PREFIX "%s%s", id, suffix);
    args(c, c->key[k]);
}

/* Sends n commands and reads their replies into reps (freed by the
 * caller with free_replies), carrying about bytes. Lock held. An error
 * reply is the caller's to judge. */
static int exchange(redis_store *r, cmd *cmds, int n, redisReply **reps, size_t bytes,
                    fy_error *err)
{
    int ms = r->o.timeout_ms > MIN_TIMEOUT_MS ? r->o.timeout_ms : MIN_TIMEOUT_MS;
    int64_t deadline = fy_now_us() + (int64_t)ms * 1000 + (int64_t)(bytes / 20);
    for (int i = 0; i < n; i++) reps[i] = NULL;
    if (rio_stale(&r->io)) rio_close(&r->io); /* closed by the server while idle */
    if (!r->io.c && rio_connect(&r->io, &r->o, deadline))
        return fy_err(err, FY_ENET, "redis %s:%d: %s", r->o.host, r->o.port, r->io.err);
    int rc = 0;
    for (int i = 0; i < n && !rc; i++)
        rc = rio_append(&r->io, cmds[i].argc, cmds[i].argv, cmds[i].len);
    if (!rc) rc = rio_flush(&r->io, deadline);
    for (int i = 0; i < n && !rc; i++)
        if (!(reps[i] = rio_reply(&r->io, deadline))) rc = -1;
    if (!rc) return 0;
    for (int i = 0; i < n; i++)
        if (reps[i]) freeReplyObject(reps[i]);
    rio_close(&r->io);
    return fy_err(err, FY_ENET, "redis %s:%d: %s", r->o.host, r->o.port, r->io.err);
}

static void free_replies(redisReply **reps, int n)
{
    for (int i = 0; i < n; i++)
        if (reps[i]) freeReplyObject(reps[i]);
}

/* The first error reply among reps as an FY_E* code (Redis out of memory:
 * FY_ESPACE), else 0. */
static int reply_errors(redis_store *r, redisReply **reps, int n, fy_error *err)
{
    for (int i = 0; i < n; i++) {
        if (!reps[i] || reps[i]->type != REDIS_REPLY_ERROR) continue;
        if (!strncmp(reps[i]->str, "OOM", 3))
            return fy_err(err, FY_ESPACE, "the document store is full (redis %s:%d: %.120s)",
                          r->o.host, r->o.port, reps[i]->str);
        return fy_err(err, FY_ENET, "redis %s:%d: %.200s", r->o.host, r->o.port, reps[i]->str);
    }
    return 0;
}

/* Runs cmds, checks for error replies, frees the replies unless keep. */
static int run(redis_store *r, cmd *cmds, int n, redisReply **keep, size_t bytes, fy_error *err)
{
    redisReply *reps[8];
    int rc = exchange(r, cmds, n, reps, bytes, err);
    if (rc) return rc; /* nothing kept */
    rc = reply_errors(r, reps, n, err);
    if (!rc && keep) {
        for (int i = 0; i < n; i++) keep[i] = reps[i];
        return 0;
    }
    free_replies(reps, n);
    return rc;
}

static int bad_id(const char *id, fy_error *err)
{
    return fy_jobstore_id_ok(id) ? 0 : fy_err(err, FY_ENOTFOUND, "no such document job");
}

/* ---- the size bound ------------------------------------------------------------- */

/* Sums what every job holds (the bytes hash) into r->bytes; lock held. */
static int sum_bytes(redis_store *r, fy_error *err)
{
    cmd c[2] = {0};
    args(&c[0], "HVALS");
    args(&c[0], BYTES);
    args(&c[1], "ZCARD");
    args(&c[1], ALL);
    redisReply *reps[2];
    int rc = run(r, c, 2, reps, 0, err);
    if (rc) return rc;
    uint64_t sum = 0;
    for (size_t i = 0; reps[0]->type == REDIS_REPLY_ARRAY && i < reps[0]->elements; i++)
        if (reps[0]->element[i]->type == REDIS_REPLY_STRING)
            sum += strtoull(reps[0]->element[i]->str, NULL, 10);
    r->bytes = sum;
    r->jobs = reps[1]->type == REDIS_REPLY_INTEGER ? (size_t)reps[1]->integer : 0;
    free_replies(reps, 2);
    return 0;
}

/* need more bytes (and room beside them) fit under the bound; lock held. */
static int fits(redis_store *r, uint64_t need, uint64_t room, fy_error *err)
{
    int rc = sum_bytes(r, err);
    if (rc) return rc;
    if (r->bytes + need + room <= r->max_bytes) return 0;
    return fy_err(err, FY_ESPACE,
                  "the document store is full (%llu of %llu MiB used; this needs %llu MiB more): "
                  "wait for finished documents to expire, or raise --jobs-store-mb",
                  (unsigned long long)(r->bytes >> 20), (unsigned long long)(r->max_bytes >> 20),
                  (unsigned long long)((need + room + (1 << 20) - 1) >> 20));
}

/* HINCRBY of the bytes id holds. */
static void add_bytes(cmd *c, const char *id, char *num, size_t cap, uint64_t n)
{
    snprintf(num, cap, "%llu", (unsigned long long)n);
    args(c, "HINCRBY");
    args(c, BYTES);
    args(c, id);
    args(c, num);
}

static void expire(cmd *c, int k, const char *id, const char *suffix, const char *ttl)
{
    args(c, "EXPIRE");
    key(c, k, id, suffix);
    args(c, ttl);
}

/* ---- operations ------------------------------------------------------------------ */

static int r_create(fy_jobstore *s, const char *id, const char *state, const char *data, size_t len,
                    int ttl_s, int lease_ms, fy_error *err)
{
    redis_store *r = (redis_store *)s;
    if (bad_id(id, err)) return FY_ENOTFOUND;
    char ttl[24], now[24], num[24], px[24];
    snprintf(ttl, sizeof ttl, "%d", ttl_s > 0 ? ttl_s : OPEN_TTL_S);
    snprintf(now, sizeof now, "%lld", (long long)fy_wall_ms());
    snprintf(px, sizeof px, "%d", lease_ms);
    cmd c[6] = {0};
    int n = 0;
    if (lease_ms > 0) { /* first: nobody can take the job before its maker */
        args(&c[n], "SET"), key(&c[n], 0, id, ":lease"), args(&c[n], r->owner);
        args(&c[n], "PX"), args(&c[n], px), n++;
    }
    args(&c[n], "SET"), key(&c[n], 0, id, ":src"), arg(&c[n], data, len);
    args(&c[n], "EX"), args(&c[n], ttl), n++;
    args(&c[n], "SET"), key(&c[n], 0, id, ""), args(&c[n], state), args(&c[n], "EX");
    args(&c[n], ttl), n++;
    args(&c[n], "ZADD"), args(&c[n], ALL), args(&c[n], now), args(&c[n], id), n++;
    args(&c[n], "ZADD"), args(&c[n], OPEN), args(&c[n], now), args(&c[n], id), n++;
    add_bytes(&c[n++], id, num, sizeof num, len + strlen(state));
    pthread_mutex_lock(&r->lock);
    int rc = fits(r, len, len, err);
    if (!rc) rc = run(r, c, n, NULL, len, err);
    pthread_mutex_unlock(&r->lock);
    return rc;
}

/* GET of id's key with suffix into *data, *len (malloc'd, NUL-terminated). */
static int get_value(redis_store *r, const char *id, const char *suffix, char **data, size_t *len,
                     fy_error *err)
{
    if (bad_id(id, err)) return FY_ENOTFOUND;
    cmd c = {0};
    args(&c, "GET"), key(&c, 0, id, suffix);
    redisReply *rep;
    pthread_mutex_lock(&r->lock);
    int rc = run(r, &c, 1, &rep, 0, err);
    pthread_mutex_unlock(&r->lock);
    if (rc) return rc;
    if (rep->type != REDIS_REPLY_STRING) {
        freeReplyObject(rep);
        return fy_err(err, FY_ENOTFOUND, "no such document job");
    }
    *data = malloc(rep->len + 1);
    if (*data) {
        memcpy(*data, rep->str, rep->len);
        (*data)[rep->len] = '\0';
        if (len) *len = rep->len;
    }
    freeReplyObject(rep);
    return *data ? 0 : fy_err(err, FY_ENOMEM, "out of memory");
}

static int r_get_state(fy_jobstore *s, const char *id, char **state, fy_error *err)
{
    return get_value((redis_store *)s, id, "", state, NULL, err);
}

static int r_get_source(fy_jobstore *s, const char *id, char **data, size_t *len, fy_error *err)
{
    return get_value((redis_store *)s, id, ":src", data, len, err);
}

static int r_get_result(fy_jobstore *s, const char *id, char **data, size_t *len, fy_error *err)
{
    return get_value((redis_store *)s, id, ":result", data, len, err);
}

/* The state written in one step with its check: a job removed meanwhile
 * stays removed (0), and an open state never replaces an ended one (2: a
 * replica that stalled past its lease must not reopen a job another one
 * finished); 1 when written. */
static const char PUT_STATE[] =
    "local cur = redis.call('get', KEYS[1]) "
    "if not cur then return 0 end "
    "if ARGV[3] == '1' then "
    "  local ok, st = pcall(cjson.decode, cur) "
    "  if ok and type(st) == 'table' and st.state ~= 'queued' and st.state ~= 'translating' "
    "  then return 2 end "
    "end "
    "redis.call('set', KEYS[1], ARGV[1], 'ex', ARGV[2]) "
    "return 1";

/* Its other keys live as long as the state; an ended job leaves the open list. */
static int keep_with_state(redis_store *r, const char *id, const char *ttl, int open, fy_error *err)
{
    cmd c[5] = {0};
    expire(&c[0], 0, id, ":src", ttl);
    expire(&c[1], 0, id, ":units", ttl);
    expire(&c[2], 0, id, ":result", ttl);
    expire(&c[3], 0, id, ":cancel", ttl);
    int n = 4;
    if (!open) args(&c[4], "ZREM"), args(&c[4], OPEN), args(&c[4], id), n = 5;
    return run(r, c, n, NULL, 0, err);
}

static int r_put_state(fy_jobstore *s, const char *id, const char *state, int open, int ttl_s,
                       fy_error *err)
{
    redis_store *r = (redis_store *)s;
    if (bad_id(id, err)) return FY_ENOTFOUND;
    char ttl[24];
    snprintf(ttl, sizeof ttl, "%d", ttl_s > 0 ? ttl_s : OPEN_TTL_S);
    cmd c = {0};
    args(&c, "EVAL"), args(&c, PUT_STATE), args(&c, "1"), key(&c, 0, id, "");
    args(&c, state), args(&c, ttl), args(&c, open ? "1" : "0");
    redisReply *rep;
    pthread_mutex_lock(&r->lock);
    int rc = run(r, &c, 1, &rep, 0, err);
    long long got = rc ? -1 : rep->type == REDIS_REPLY_INTEGER ? rep->integer : -1;
    if (!rc) free_replies(&rep, 1);
    if (got == 1) rc = keep_with_state(r, id, ttl, open, err);
    pthread_mutex_unlock(&r->lock);
    if (rc) return rc;
    if (got == 0) return fy_err(err, FY_ENOTFOUND, "no such document job");
    if (got == 2) return 1;
    return got == 1 ? 0 : fy_err(err, FY_EIO, "redis: unexpected reply to a job's state");
}

static int r_put_units(fy_jobstore *s, const char *id, const size_t *idx, const char *const *texts,
                       const size_t *lens, size_t n, fy_error *err)
{
    redis_store *r = (redis_store *)s;
    if (bad_id(id, err)) return FY_ENOTFOUND;
    if (!n) return 0;
    cmd c[3] = {0};
    /* HSET with every field: an argument array of its own. */
    c[0].argc = (int)(2 * n + 2);
    c[0].argv = malloc((2 * n + 2) * sizeof *c[0].argv);
    c[0].len = malloc((2 * n + 2) * sizeof *c[0].len);
    char(*num)[24] = malloc(n * sizeof *num);
    char ttl[24], bytes[24];
    int rc = 0;
    if (!c[0].argv || !c[0].len || !num) {
        rc = fy_err(err, FY_ENOMEM, "out of memory");
        goto out;
    }
    snprintf(c[0].key[0], sizeof c[0].key[0], PREFIX "%s:units", id);
    c[0].argv[0] = "HSET", c[0].len[0] = 4;
    c[0].argv[1] = c[0].key[0], c[0].len[1] = strlen(c[0].key[0]);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        c[0].len[2 + 2 * i] = (size_t)snprintf(num[i], sizeof num[i], "%zu", idx[i]);
        c[0].argv[2 + 2 * i] = num[i];
        c[0].argv[3 + 2 * i] = texts[i], c[0].len[3 + 2 * i] = lens[i];
        total += lens[i] + c[0].len[2 + 2 * i];
    }
    snprintf(ttl, sizeof ttl, "%d", OPEN_TTL_S);
    expire(&c[1], 0, id, ":units", ttl);
    add_bytes(&c[2], id, bytes, sizeof bytes, total);
    pthread_mutex_lock(&r->lock);
    rc = fits(r, total, 0, err);
    if (!rc) rc = run(r, c, 3, NULL, total, err);
    pthread_mutex_unlock(&r->lock);
out:
    free(c[0].argv);
    free(c[0].len);
    free(num);
    return rc;
}

static int r_get_units(fy_jobstore *s, const char *id, fy_jobstore_unit_fn fn, void *user,
                       fy_error *err)
{
    redis_store *r = (redis_store *)s;
    if (bad_id(id, err)) return FY_ENOTFOUND;
    cmd c = {0};
    args(&c, "HGETALL"), key(&c, 0, id, ":units");
    redisReply *rep;
    pthread_mutex_lock(&r->lock);
    int rc = run(r, &c, 1, &rep, 0, err);
    pthread_mutex_unlock(&r->lock);
    if (rc) return rc;
    for (size_t i = 0; rep->type == REDIS_REPLY_ARRAY && i + 1 < rep->elements; i += 2) {
        redisReply *k = rep->element[i], *v = rep->element[i + 1];
        if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING) continue;
        char *end;
        unsigned long long u = strtoull(k->str, &end, 10);
        if (*end || end == k->str) continue;
        fn(user, (size_t)u, v->str, v->len);
    }
    freeReplyObject(rep);
    return 0;
}

static int r_put_result(fy_jobstore *s, const char *id, const char *data, size_t len, int ttl_s,
                        fy_error *err)
{
    redis_store *r = (redis_store *)s;
    if (bad_id(id, err)) return FY_ENOTFOUND;
    char ttl[24], num[24];
    snprintf(ttl, sizeof ttl, "%d", ttl_s > 0 ? ttl_s : OPEN_TTL_S);
    cmd c[2] = {0};
    args(&c[0], "SET"), key(&c[0], 0, id, ":result"), arg(&c[0], data, len);
    args(&c[0], "EX"), args(&c[0], ttl);
    add_bytes(&c[1], id, num, sizeof num, len);
    pthread_mutex_lock(&r->lock);
    int rc = fits(r, len, 0, err);
    if (!rc) rc = run(r, c, 2, NULL, len, err);
    pthread_mutex_unlock(&r->lock);
    return rc;
}

static int r_remove(fy_jobstore *s, const char *id, fy_error *err)
{
    redis_store *r = (redis_store *)s;
    if (bad_id(id, err)) return FY_ENOTFOUND;
    cmd c[5] = {0};
    args(&c[0], "DEL"), key(&c[0], 0, id, ""), key(&c[0], 1, id, ":src");
    key(&c[0], 2, id, ":units");
    args(&c[1], "DEL"), key(&c[1], 0, id, ":result"), key(&c[1], 1, id, ":cancel");
    key(&c[1], 2, id, ":lease");
    args(&c[2], "ZREM"), args(&c[2], ALL), args(&c[2], id);
    args(&c[3], "ZREM"), args(&c[3], OPEN), args(&c[3], id);
    args(&c[4], "HDEL"), args(&c[4], BYTES), args(&c[4], id);
    pthread_mutex_lock(&r->lock);
    int rc = run(r, c, 5, NULL, 0, err);
    pthread_mutex_unlock(&r->lock);
    return rc;
}

static int r_list(fy_jobstore *s, int open, char (**ids)[33], size_t *n, fy_error *err)
{
    redis_store *r = (redis_store *)s;
    cmd c = {0};
    args(&c, "ZRANGE"), args(&c, open ? OPEN : ALL), args(&c, "0"), args(&c, "-1");
    redisReply *rep;
    pthread_mutex_lock(&r->lock);
    int rc = run(r, &c, 1, &rep, 0, err);
    if (!rc && !open) sum_bytes(r, NULL);
    pthread_mutex_unlock(&r->lock);
    if (rc) return rc;
    size_t cnt = rep->type == REDIS_REPLY_ARRAY ? rep->elements : 0;
    char(*out)[33] = calloc(cnt ? cnt : 1, sizeof *out);
    size_t m = 0;
    for (size_t i = 0; out && i < cnt; i++) {
        redisReply *e = rep->element[i];
        if (e->type == REDIS_REPLY_STRING && e->len == 32 && fy_jobstore_id_ok(e->str))
            memcpy(out[m++], e->str, 33);
    }
    freeReplyObject(rep);
    if (!out) return fy_err(err, FY_ENOMEM, "out of memory");
    *ids = out;
    *n = m;
    return 0;
}

static int r_cancel(fy_jobstore *s, const char *id, fy_error *err)
{
    redis_store *r = (redis_store *)s;
    if (bad_id(id, err)) return FY_ENOTFOUND;
    char ttl[24];
    snprintf(ttl, sizeof ttl, "%d", OPEN_TTL_S);
    cmd c = {0};
    args(&c, "SET"), key(&c, 0, id, ":cancel"), args(&c, "1"), args(&c, "EX"), args(&c, ttl);
    pthread_mutex_lock(&r->lock);
    int rc = run(r, &c, 1, NULL, 0, err);
    pthread_mutex_unlock(&r->lock);
    return rc;
}

static int r_canceled(fy_jobstore *s, const char *id, fy_error *err)
{
    redis_store *r = (redis_store *)s;
    if (bad_id(id, err)) return FY_ENOTFOUND;
    cmd c = {0};
    args(&c, "EXISTS"), key(&c, 0, id, ":cancel");
    redisReply *rep;
    pthread_mutex_lock(&r->lock);
    int rc = run(r, &c, 1, &rep, 0, err);
    pthread_mutex_unlock(&r->lock);
    if (rc) return rc;
    int yes = rep->type == REDIS_REPLY_INTEGER && rep->integer > 0;
    freeReplyObject(rep);
    return yes;
}

static int r_lease(fy_jobstore *s, const char *id, int ms, fy_error *err)
{
    redis_store *r = (redis_store *)s;
    if (bad_id(id, err)) return FY_ENOTFOUND;
    char px[24];
    snprintf(px, sizeof px, "%d", ms);
    cmd c[2] = {0};
    args(&c[0], "EVAL"), args(&c[0], RENEW), args(&c[0], "1"), key(&c[0], 0, id, ":lease");
    args(&c[0], r->owner), args(&c[0], px);
    args(&c[1], "SET"), key(&c[1], 0, id, ":lease"), args(&c[1], r->owner), args(&c[1], "NX");
    args(&c[1], "PX"), args(&c[1], px);
    redisReply *reps[2];
    pthread_mutex_lock(&r->lock);
    int rc = run(r, c, 2, reps, 0, err);
    pthread_mutex_unlock(&r->lock);
    if (rc) return rc;
    int held = (reps[0]->type == REDIS_REPLY_INTEGER && reps[0]->integer == 1) ||
               reps[1]->type == REDIS_REPLY_STATUS;
    free_replies(reps, 2);
    return held;
}

static void r_unlease(fy_jobstore *s, const char *id)
{
    redis_store *r = (redis_store *)s;
    if (!fy_jobstore_id_ok(id)) return;
    cmd c = {0};
    args(&c, "EVAL"), args(&c, RELEASE), args(&c, "1"), key(&c, 0, id, ":lease");
    args(&c, r->owner);
    pthread_mutex_lock(&r->lock);
    run(r, &c, 1, NULL, 0, NULL); /* a lease not given back runs out */
    pthread_mutex_unlock(&r->lock);
}

static void r_usage(fy_jobstore *s, uint64_t *bytes, size_t *jobs)
{
    redis_store *r = (redis_store *)s;
    pthread_mutex_lock(&r->lock);
    *bytes = r->bytes;
    *jobs = r->jobs;
    pthread_mutex_unlock(&r->lock);
}

static void r_free(fy_jobstore *s)
{
    redis_store *r = (redis_store *)s;
    rio_close(&r->io);
    memset(r->o.password, 0, sizeof r->o.password);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

static const fy_jobstore_ops redis_ops = {
    r_create,     r_get_state,  r_put_state, r_get_source, r_put_units, r_get_units,
    r_put_result, r_get_result, r_remove,    r_list,       r_cancel,    r_canceled,
    r_lease,      r_unlease,    r_usage,     r_free,       "redis"};

fy_jobstore *fy_jobstore_redis_open(const fy_redis_options *o, uint64_t max_bytes, fy_error *err)
{
    redis_store *r = calloc(1, sizeof *r);
    if (!r) {
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    r->base.ops = &redis_ops;
    r->o = *o;
    r->max_bytes = max_bytes;
    pthread_mutex_init(&r->lock, NULL);
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    unsigned long long rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        rnd = (unsigned long long)fy_now_us();
    snprintf(r->owner, sizeof r->owner, "%.40s:%ld:%016llx", host, (long)getpid(), rnd);
    return &r->base;
}
