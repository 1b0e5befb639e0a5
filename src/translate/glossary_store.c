/* glossary_store.c - stored glossaries (glossary_store.h): the list in
 * memory, the file of each glossary, and the copy in Redis.
 *
 * Sections: glossaries in memory, the file format, files, Redis, the
 * operations. Locks: `lock` guards the list and every glossary in it (a
 * glossary's dictionaries are replaced, never changed: readers take
 * references); `io_lock` the Redis connection and the files, and is taken
 * before `lock` when both are held.
 */
#include "translate/glossary_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "text/segment.h"
#include "translate/redis_io.h"
#include "util/buf.h"
#include "util/clock.h"

#define FILE_MAX   (64u << 20) /* a glossary file read back: more is not one of ours */
#define KEY_PREFIX "fanyi:glossary:"
#define SET_KEY    "fanyi:glossaries"

typedef struct gl {
    char id[FY_GSTORE_ID_MAX];
    char *name;
    int64_t created_ms;
    fy_glossary *dicts[FY_GSTORE_DICTS_MAX];
    int n;
    char version[17]; /* the Redis version this copy is ("": not from Redis) */
} gl;

struct fy_glossary_store {
    fy_glossary_store_options o;
    char *dir;
    fy_redis_options redis;
    int shared;
    pthread_mutex_t lock;
    gl **v;
    size_t n, cap;
    pthread_mutex_t io_lock;
    rio io;
    int redis_down;      /* logged once until it works again */
    int64_t retry_at_ms; /* while down: no new attempt before (a circuit breaker) */
};

#define RETRY_MS 1000 /* how long a Redis that failed is left alone */

/* ---- glossaries in memory --------------------------------------------------------- */

static void gl_free(gl *g)
{
    if (!g) return;
    for (int k = 0; k < g->n; k++) fy_glossary_unref(g->dicts[k]);
    free(g->name);
    free(g);
}

/* A copy of g sharing its dictionaries (references). NULL when out of memory. */
static gl *gl_copy(const gl *g)
{
    gl *c = malloc(sizeof *c);
    if (!c) return NULL;
    *c = *g;
    if (!(c->name = strdup(g->name))) {
        free(c);
        return NULL;
    }
    for (int k = 0; k < c->n; k++) fy_glossary_ref(c->dicts[k]);
    return c;
}

static int dict_index(const gl *g, const char *src, const char *tgt)
{
    for (int k = 0; k < g->n; k++)
        if (!strcmp(fy_glossary_source(g->dicts[k]), src) &&
            !strcmp(fy_glossary_target(g->dicts[k]), tgt))
            return k;
    return -1;
}

static void gl_meta(const gl *g, fy_glossary_meta *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->id, sizeof m->id, "%s", g->id);
    snprintf(m->name, sizeof m->name, "%s", g->name);
    m->created_ms = g->created_ms;
    m->ndicts = g->n;
    for (int k = 0; k < g->n; k++) {
        fy_gstore_dict *d = &m->dicts[k];
        snprintf(d->source, sizeof d->source, "%s", fy_glossary_source(g->dicts[k]));
        snprintf(d->target, sizeof d->target, "%s", fy_glossary_target(g->dicts[k]));
        d->entries = fy_glossary_count(g->dicts[k]);
    }
}

static size_t gl_bytes(const gl *g)
{
    size_t n = 0;
    for (int k = 0; k < g->n; k++) n += fy_glossary_bytes(g->dicts[k]);
    return n;
}

/* Index of id in the list (lock held), or -1. */
static long find(const fy_glossary_store *s, const char *id)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i]->id, id)) return (long)i;
    return -1;
}

/* Puts g in the list in place of the glossary with its id, or at the end
 * (lock held). Takes g. 0 or FY_ENOMEM (g freed). */
static int put(fy_glossary_store *s, gl *g)
{
    long i = find(s, g->id);
    if (i >= 0) {
        gl_free(s->v[i]);
        s->v[i] = g;
        return 0;
    }
    if (fy_vec_reserve((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v)) {
        gl_free(g);
        return FY_ENOMEM;
    }
    s->v[s->n++] = g;
    return 0;
}

/* Removes id from the list (lock held). */
static void drop(fy_glossary_store *s, const char *id)
{
    long i = find(s, id);
    if (i < 0) return;
    gl_free(s->v[i]);
    memmove(s->v + i, s->v + i + 1, (s->n - (size_t)i - 1) * sizeof *s->v);
    s->n--;
}

static void logf_(fy_glossary_store *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(fy_glossary_store *s, const char *fmt, ...)
{
    if (!s->o.log) return;
    char line[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    s->o.log(s->o.log_user, line);
}

/* ---- the file format ----------------------------------------------------------------- */

/* Why name cannot be a glossary's name, or NULL. */
static const char *bad_name(const char *name)
{
    size_t n = name ? strlen(name) : 0, bad;
    if (!n) return "the glossary's name is empty";
    if (n > FY_GSTORE_NAME_MAX) return "the glossary's name is longer than 1024 bytes";
    if (!fy_utf8_valid(name, n, &bad)) return "the glossary's name is not valid UTF-8";
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)name[i] < 0x20 || name[i] == 0x7F)
            return "the glossary's name holds a control character";
    return NULL;
}

static char *serialize(const gl *g, size_t *len)
{
    fy_buf b = {0};
    fy_buf_printf(&b, "fanyi glossary 1\nid %s\nname %s\ncreated %lld\n", g->id, g->name,
                  (long long)g->created_ms);
    for (int k = 0; k < g->n; k++) {
        const fy_glossary *d = g->dicts[k];
        size_t n = fy_glossary_count(d);
        fy_buf_printf(&b, "dict %s %s %zu\n", fy_glossary_source(d), fy_glossary_target(d), n);
        for (size_t i = 0; i < n; i++) {
            const char *src, *tgt;
            fy_glossary_entry(d, i, &src, &tgt);
            fy_buf_printf(&b, "%s\t%s\n", src, tgt); /* "" target: keep as is */
        }
    }
    fy_buf_put(&b, "end\n", 4);
    return fy_buf_take(&b, len);
}

/* The next line of text[*at..len) into *line / *n; 0 at the end. */
static int next_line(const char *text, size_t len, size_t *at, const char **line, size_t *n)
{
    if (*at >= len) return 0;
    const char *s = text + *at, *nl = memchr(s, '\n', len - *at);
    *line = s;
    *n = nl ? (size_t)(nl - s) : len - *at;
    *at += *n + (nl != NULL);
    return 1;
}

/* "key value": the value when line starts with key and a space, else NULL. */
static const char *field(const char *line, size_t n, const char *key, size_t *vn)
{
    size_t k = strlen(key);
    if (n <= k || memcmp(line, key, k) || line[k] != ' ') return NULL;
    *vn = n - k - 1;
    return line + k + 1;
}

static int read_dict(gl *g, const char *text, size_t len, size_t *at, const char *head, size_t hn,
                     size_t *lineno, char *why, size_t cap)
{
    char src[FY_LANG_MAX], tgt[FY_LANG_MAX];
    unsigned long count;
    char h[80];
    snprintf(h, sizeof h, "%.*s", (int)(hn < 79 ? hn : 79), head);
    if (sscanf(h, "%15s %15s %lu", src, tgt, &count) != 3 || count > FY_GLOSSARY_ENTRIES_MAX ||
        g->n == FY_GSTORE_DICTS_MAX) {
        snprintf(why, cap, "line %zu: not a dictionary header", *lineno);
        return -1;
    }
    size_t start = *at, n;
    const char *line;
    for (unsigned long i = 0; i < count; i++, ++*lineno)
        if (!next_line(text, len, at, &line, &n)) {
            snprintf(why, cap, "line %zu: the file ends inside a dictionary", *lineno);
            return -1;
        }
    fy_error err = {0};
    fy_glossary *d = fy_glossary_new(src, tgt, &err);
    if (d && !fy_glossary_parse(d, text + start, *at - start, FY_GLOSSARY_TSV, &err) &&
        !fy_glossary_compile(d, &err) && fy_glossary_count(d) == count) {
        g->dicts[g->n++] = d;
        return 0;
    }
    snprintf(why, cap, "dictionary %s -> %s: %.180s", src, tgt,
             err.msg[0] ? err.msg : "entries missing");
    fy_glossary_unref(d);
    return -1;
}

/* Parses a glossary file's text. NULL with why. */
static gl *parse(const char *text, size_t len, char *why, size_t cap)
{
    gl *g = calloc(1, sizeof *g);
    size_t at = 0, n, vn, lineno = 1;
    const char *line, *v;
    int ended = 0;
    if (!g) return snprintf(why, cap, "out of memory"), NULL;
    if (!next_line(text, len, &at, &line, &n) || n != 16 || memcmp(line, "fanyi glossary 1", 16)) {
        snprintf(why, cap, "not a glossary file (line 1)");
        goto fail;
    }
    while (!ended && next_line(text, len, &at, &line, &n)) {
        lineno++;
        if ((v = field(line, n, "id", &vn)) && vn < FY_GSTORE_ID_MAX && vn) {
            memcpy(g->id, v, vn);
            g->id[vn] = '\0';
        } else if ((v = field(line, n, "name", &vn))) {
            free(g->name);
            g->name = strndup(v, vn);
        } else if ((v = field(line, n, "created", &vn))) {
            g->created_ms = strtoll(v, NULL, 10);
        } else if ((v = field(line, n, "dict", &vn))) {
            if (read_dict(g, text, len, &at, v, vn, &lineno, why, cap)) goto fail;
        } else if (n == 3 && !memcmp(line, "end", 3)) {
            ended = 1;
        } else {
            snprintf(why, cap, "line %zu: unexpected '%.20s'", lineno, line);
            goto fail;
        }
    }
    if (!ended || !g->id[0] || !g->name || bad_name(g->name)) {
        snprintf(why, cap, "%s",
                 !ended      ? "the file is cut short (no end line)"
                 : !g->id[0] ? "no id"
                             : "no usable name");
        goto fail;
    }
    return g;
fail:
    gl_free(g);
    return NULL;
}

/* ---- files --------------------------------------------------------------------------- */

static int make_dir(const char *path)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) return -1;
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(tmp, 0755) && errno != EEXIST) return -1;
        *p = '/';
    }
    return mkdir(tmp, 0755) && errno != EEXIST ? -1 : 0;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w, n -= (size_t)w;
    }
    return 0;
}

/* Writes g's file atomically (temporary file, fsync, rename, fsync of the
 * directory). 0 or FY_EIO/FY_ENOMEM. */
static int save_file(fy_glossary_store *s, const gl *g, fy_error *err)
{
    if (!s->dir) return 0;
    size_t len;
    char *text = serialize(g, &len);
    if (!text) return fy_err(err, FY_ENOMEM, "out of memory");
    char path[4200], tmp[4240];
    snprintf(path, sizeof path, "%s/%s.glossary", s->dir, g->id);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int fd = make_dir(s->dir) ? -1 : open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int ok = fd >= 0 && !write_all(fd, text, len) && !fsync(fd);
    int e = errno;
    if (fd >= 0) close(fd);
    free(text);
    if (ok && rename(tmp, path)) ok = 0, e = errno;
    if (!ok) {
        unlink(tmp);
        return fy_err(err, FY_EIO, "cannot write %s: %s", path, strerror(e));
    }
    int dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) fsync(dfd), close(dfd);
    return 0;
}

static void remove_file(fy_glossary_store *s, const char *id)
{
    if (!s->dir) return;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.glossary", s->dir, id);
    unlink(path);
}

/* Reads one file into the list (lock not needed: called while opening). */
static void load_file(fy_glossary_store *s, const char *name)
{
    char path[4200], why[256];
    snprintf(path, sizeof path, "%s/%s", s->dir, name);
    FILE *f = fopen(path, "rb");
    char *text = f ? malloc(FILE_MAX + 1) : NULL;
    size_t n = text ? fread(text, 1, FILE_MAX + 1, f) : 0;
    gl *g = NULL;
    if (f) fclose(f);
    if (!f || !text)
        snprintf(why, sizeof why, "%s", f ? "out of memory" : strerror(errno));
    else if (n > FILE_MAX)
        snprintf(why, sizeof why, "larger than %u MiB", FILE_MAX >> 20);
    else if ((g = parse(text, n, why, sizeof why)) &&
             (strncmp(name, g->id, strlen(g->id)) || strcmp(name + strlen(g->id), ".glossary")))
        snprintf(why, sizeof why, "its id %s is not its file name", g->id), gl_free(g), g = NULL;
    free(text);
    if (!g) {
        logf_(s, "glossary store: %s: %s; skipped", path, why);
        return;
    }
    if (put(s, g)) logf_(s, "glossary store: %s: out of memory; skipped", path);
}

static void load_dir(fy_glossary_store *s)
{
    DIR *d = opendir(s->dir);
    if (!d) {
        if (errno != ENOENT)
            logf_(s, "glossary store: cannot read %s: %s", s->dir, strerror(errno));
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > 9 && !strcmp(e->d_name + n - 9, ".glossary")) load_file(s, e->d_name);
    }
    closedir(d);
}

/* ---- Redis --------------------------------------------------------------------------- */

/* The deadline of one exchange: the tier's timeout, at least 2 s (a
 * glossary is read once per request, and writes are rare). */
static int64_t deadline(const fy_glossary_store *s)
{
    int ms = s->redis.timeout_ms > 2000 ? s->redis.timeout_ms : 2000;
    return fy_now_us() + (int64_t)ms * 1000;
}

/* Sends cmds[0..n) (argv each, NULL-terminated) in one round trip and reads
 * their replies into r[0..n) (io_lock held). 0, or FY_ENET with err (the
 * connection closed; one new connection is tried first). */
static int exchange(fy_glossary_store *s, const char *const *const *cmds, const size_t *const *lens,
                    size_t n, redisReply **r, fy_error *err)
{
    if (s->redis_down && fy_now_ms() < s->retry_at_ms) /* failed just now: not again yet */
        return fy_err(err, FY_ENET, "the shared glossary store (Redis) cannot be reached: %s",
                      s->io.err);
    for (int attempt = 0; attempt < 2; attempt++) {
        int64_t dl = deadline(s);
        if (s->io.c && rio_stale(&s->io)) rio_close(&s->io);
        if (!s->io.c && rio_connect(&s->io, &s->redis, dl)) continue;
        int ok = 1;
        for (size_t i = 0; i < n && ok; i++) {
            int argc = 0;
            while (cmds[i][argc]) argc++;
            ok = !rio_append(&s->io, argc, (const char **)cmds[i], lens ? lens[i] : NULL);
        }
        ok = ok && !rio_flush(&s->io, dl);
        size_t got = 0;
        for (; ok && got < n; got++) ok = (r[got] = rio_reply(&s->io, dl)) != NULL;
        for (size_t i = 0; ok && i < n; i++) ok = r[i]->type != REDIS_REPLY_ERROR;
        if (ok) {
            if (s->redis_down) logf_(s, "glossary store: Redis is reachable again");
            s->redis_down = 0;
            return 0;
        }
        if (got == n && s->io.c) { /* an error reply: the command, not the connection */
            const char *what = "error";
            for (size_t i = 0; i < n; i++)
                if (r[i]->type == REDIS_REPLY_ERROR && r[i]->str) what = r[i]->str;
            snprintf(s->io.err, sizeof s->io.err, "%.100s", what);
            for (size_t i = 0; i < n; i++) freeReplyObject(r[i]);
            return fy_err(err, FY_ENET, "the shared glossary store (Redis) refused: %s", s->io.err);
        }
        for (size_t i = 0; i < got; i++) freeReplyObject(r[i]);
        rio_close(&s->io);
    }
    if (!s->redis_down) logf_(s, "glossary store: Redis: %s", s->io.err);
    s->redis_down = 1;
    s->retry_at_ms = fy_now_ms() + RETRY_MS;
    return fy_err(err, FY_ENET, "the shared glossary store (Redis) cannot be reached: %s",
                  s->io.err);
}

static void key_of(const char *id, char *out, size_t cap)
{
    snprintf(out, cap, KEY_PREFIX "%s", id);
}

static void new_version(char out[17])
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) r = (uint64_t)fy_now_us();
    snprintf(out, 17, "%016llx", (unsigned long long)r);
}

/* Stores g in Redis under a new version (written into g) (io_lock held). */
static int remote_put(fy_glossary_store *s, gl *g, fy_error *err)
{
    size_t len;
    char *text = serialize(g, &len);
    if (!text) return fy_err(err, FY_ENOMEM, "out of memory");
    char key[64], ver[17];
    key_of(g->id, key, sizeof key);
    new_version(ver);
    const char *hset[] = {"HSET", key, "v", ver, "data", text, NULL};
    size_t hl[] = {4, strlen(key), 1, 16, 4, len};
    const char *hdel[] = {"HDEL", key, "deleted", NULL};
    size_t dl[] = {4, strlen(key), 7};
    const char *sadd[] = {"SADD", SET_KEY, g->id, NULL};
    size_t sl[] = {4, strlen(SET_KEY), strlen(g->id)};
    const char *const *cmds[] = {hset, hdel, sadd};
    const size_t *lens[] = {hl, dl, sl};
    redisReply *r[3];
    int rc = exchange(s, cmds, lens, 3, r, err);
    free(text);
    if (rc) return rc;
    for (int i = 0; i < 3; i++) freeReplyObject(r[i]);
    memcpy(g->version, ver, sizeof ver);
    return 0;
}

/* Marks id deleted in Redis (io_lock held). */
static int remote_delete(fy_glossary_store *s, const char *id, fy_error *err)
{
    char key[64], ver[17];
    key_of(id, key, sizeof key);
    new_version(ver);
    const char *hset[] = {"HSET", key, "v", ver, "deleted", "1", NULL};
    const char *hdel[] = {"HDEL", key, "data", NULL};
    const char *srem[] = {"SREM", SET_KEY, id, NULL};
    const char *const *cmds[] = {hset, hdel, srem};
    redisReply *r[3];
    int rc = exchange(s, cmds, NULL, 3, r, err);
    for (int i = 0; !rc && i < 3; i++) freeReplyObject(r[i]);
    return rc;
}

/* Reads id's glossary from Redis into the list (io_lock held, lock not): 1,
 * 0 when Redis no longer has it, FY_ENET, or FY_EFORMAT (a copy that does
 * not parse: logged, the list keeps what it had). */
static int fetch(fy_glossary_store *s, const char *id, fy_error *err)
{
    char key[64], why[256];
    key_of(id, key, sizeof key);
    const char *get[] = {"HMGET", key, "v", "data", NULL};
    const char *const *cmds[] = {get};
    redisReply *r[1];
    if (exchange(s, cmds, NULL, 1, r, err)) return FY_ENET;
    const redisReply *v = r[0]->elements == 2 ? r[0]->element[0] : NULL;
    const redisReply *data = r[0]->elements == 2 ? r[0]->element[1] : NULL;
    if (!v || v->type != REDIS_REPLY_STRING || !data || data->type != REDIS_REPLY_STRING) {
        freeReplyObject(r[0]);
        return 0;
    }
    gl *g = parse(data->str, data->len, why, sizeof why);
    if (g && strcmp(g->id, id)) gl_free(g), g = NULL, snprintf(why, sizeof why, "another id");
    if (g) snprintf(g->version, sizeof g->version, "%.16s", v->str);
    freeReplyObject(r[0]);
    if (!g) {
        logf_(s, "glossary store: Redis key %s: %s; ignored", key, why);
        return fy_err(err, FY_EFORMAT, "the shared copy of glossary %s is damaged: %s", id, why);
    }
    pthread_mutex_lock(&s->lock);
    int rc = put(s, g);
    pthread_mutex_unlock(&s->lock);
    return rc ? fy_err(err, FY_ENOMEM, "out of memory") : 1;
}

/* Brings the copy of id in memory up to Redis' (io_lock held, lock not):
 * 1 when Redis has it (the list then holds it), 0 when Redis says it does
 * not exist or was deleted (the list then does not hold it; a copy of a
 * glossary Redis has never seen is put there first), or FY_ENET. */
static int sync_one(fy_glossary_store *s, const char *id, fy_error *err)
{
    char key[64];
    key_of(id, key, sizeof key);
    const char *get[] = {"HMGET", key, "v", "deleted", NULL};
    const char *const *cmds[] = {get};
    redisReply *r[1];
    if (exchange(s, cmds, NULL, 1, r, err)) return FY_ENET;
    const redisReply *v = r[0]->elements == 2 ? r[0]->element[0] : NULL;
    const redisReply *dead = r[0]->elements == 2 ? r[0]->element[1] : NULL;
    int exists = v && v->type == REDIS_REPLY_STRING,
        deleted = dead && dead->type == REDIS_REPLY_STRING;
    char ver[17] = "";
    if (exists) snprintf(ver, sizeof ver, "%.16s", v->str);
    freeReplyObject(r[0]);
    pthread_mutex_lock(&s->lock);
    long i = find(s, id);
    gl *mine = i >= 0 ? gl_copy(s->v[i]) : NULL;
    int same = i >= 0 && exists && !strcmp(s->v[i]->version, ver);
    if (deleted && i >= 0) drop(s, id);
    pthread_mutex_unlock(&s->lock);
    int rc = same ? 1 : 0;
    if (deleted) {
        if (mine) remove_file(s, id);
    } else if (!exists && mine) { /* Redis lost it (restarted empty): ours goes back */
        rc = remote_put(s, mine, err) ? FY_ENET : 1;
        if (rc == 1) {
            pthread_mutex_lock(&s->lock);
            long k = find(s, id);
            if (k >= 0) memcpy(s->v[k]->version, mine->version, sizeof mine->version);
            pthread_mutex_unlock(&s->lock);
        }
    } else if (exists && !same) {
        rc = fetch(s, id, err);
    }
    gl_free(mine);
    return rc;
}

/* Every id Redis and the list know, synced (io_lock held). 0 or FY_ENET. */
static int sync_all(fy_glossary_store *s, fy_error *err)
{
    const char *members[] = {"SMEMBERS", SET_KEY, NULL};
    const char *const *cmds[] = {members};
    redisReply *r[1];
    if (exchange(s, cmds, NULL, 1, r, err)) return FY_ENET;
    size_t n = r[0]->type == REDIS_REPLY_ARRAY ? r[0]->elements : 0;
    pthread_mutex_lock(&s->lock);
    size_t total = n + s->n;
    char(*ids)[FY_GSTORE_ID_MAX] = calloc(total ? total : 1, sizeof *ids);
    for (size_t i = 0; ids && i < s->n; i++) snprintf(ids[i], sizeof *ids, "%s", s->v[i]->id);
    size_t m = ids ? s->n : 0;
    pthread_mutex_unlock(&s->lock);
    for (size_t i = 0; ids && i < n; i++) {
        const redisReply *e = r[0]->element[i];
        if (e->type != REDIS_REPLY_STRING || e->len >= FY_GSTORE_ID_MAX) continue;
        int seen = 0;
        for (size_t k = 0; k < m && !seen; k++) seen = !strcmp(ids[k], e->str);
        if (!seen) snprintf(ids[m++], sizeof *ids, "%s", e->str);
    }
    freeReplyObject(r[0]);
    if (!ids) return fy_err(err, FY_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t k = 0; k < m && rc != FY_ENET; k++) rc = sync_one(s, ids[k], err);
    free(ids);
    return rc == FY_ENET ? rc : 0;
}

/* ---- the operations ---------------------------------------------------------------------- */

void fy_glossary_store_options_default(fy_glossary_store_options *o)
{
    memset(o, 0, sizeof *o);
    o->max_glossaries = 1000;
    o->max_bytes = (size_t)64 << 20;
}

fy_glossary_store *fy_glossary_store_open(const fy_glossary_store_options *o, fy_error *err)
{
    fy_glossary_store *s = calloc(1, sizeof *s);
    if (!s) {
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    s->o = *o;
    if (o->dir && !(s->dir = strdup(o->dir))) {
        free(s);
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    s->o.dir = s->dir;
    if (o->redis) s->redis = *o->redis, s->shared = 1;
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->io_lock, NULL);
    if (s->dir) load_dir(s);
    if (s->shared) { /* ours that Redis never saw go there; deleted ones go */
        fy_error ignored;
        pthread_mutex_lock(&s->io_lock);
        sync_all(s, &ignored);
        pthread_mutex_unlock(&s->io_lock);
    }
    return s;
}

void fy_glossary_store_free(fy_glossary_store *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) gl_free(s->v[i]);
    free(s->v);
    rio_close(&s->io);
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->io_lock);
    free(s->dir);
    free(s);
}

/* Checks dicts[0..n) for a glossary. 0 or FY_EINVAL. */
static int check_dicts(fy_glossary *const *dicts, int n, int need_one, fy_error *err)
{
    if (n > FY_GSTORE_DICTS_MAX)
        return fy_err(err, FY_EINVAL, "a glossary has at most %d dictionaries",
                      FY_GSTORE_DICTS_MAX);
    if (need_one && n < 1) return fy_err(err, FY_EINVAL, "a glossary needs a dictionary");
    for (int k = 0; k < n; k++) {
        const char *a = fy_glossary_source(dicts[k]), *b = fy_glossary_target(dicts[k]);
        if (!*a || !*b)
            return fy_err(err, FY_EINVAL, "a dictionary needs a source and a target language");
        for (int j = 0; j < k; j++)
            if (!strcmp(a, fy_glossary_source(dicts[j])) &&
                !strcmp(b, fy_glossary_target(dicts[j])))
                return fy_err(err, FY_EINVAL, "two dictionaries for %s -> %s", a, b);
    }
    return 0;
}

/* Would the list with candidate in place of its id's glossary break the
 * limits? (lock held) 0 or FY_ELIMIT. */
static int check_limits(const fy_glossary_store *s, const gl *candidate, fy_error *err)
{
    size_t count = 1, bytes = gl_bytes(candidate);
    for (size_t i = 0; i < s->n; i++) {
        if (!strcmp(s->v[i]->id, candidate->id)) continue;
        count++;
        bytes += gl_bytes(s->v[i]);
    }
    if (count > s->o.max_glossaries)
        return fy_err(err, FY_ELIMIT, "this server keeps at most %zu glossaries",
                      s->o.max_glossaries);
    if (bytes > s->o.max_bytes)
        return fy_err(err, FY_ELIMIT,
                      "this server keeps at most %zu MiB of glossary terms (%zu bytes asked)",
                      s->o.max_bytes >> 20, bytes);
    return 0;
}

/* Stores g (new or changed; old: what was stored, NULL for new) in
 * Redis, its file and the list (io_lock held). Takes g. */
static int commit(fy_glossary_store *s, gl *g, const gl *old, fy_error *err)
{
    pthread_mutex_lock(&s->lock);
    int rc = check_limits(s, g, err);
    pthread_mutex_unlock(&s->lock);
    if (!rc) rc = save_file(s, g, err);
    if (!rc && s->shared && (rc = remote_put(s, g, err))) {
        if (old) /* the file goes back to what Redis and the list still have */
            save_file(s, old, NULL);
        else
            remove_file(s, g->id);
    }
    if (rc) {
        gl_free(g);
        return rc;
    }
    pthread_mutex_lock(&s->lock);
    rc = put(s, g);
    pthread_mutex_unlock(&s->lock);
    return rc ? fy_err(err, FY_ENOMEM, "out of memory") : 0;
}

static void new_id(char out[FY_GSTORE_ID_MAX])
{
    unsigned char r[16];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
        uint64_t t = (uint64_t)fy_now_us();
        for (int i = 0; i < 16; i++) r[i] = (unsigned char)(t >> (8 * (i % 8))) ^ (unsigned char)i;
    }
    r[6] = (unsigned char)((r[6] & 0x0F) | 0x40); /* a version 4 UUID */
    r[8] = (unsigned char)((r[8] & 0x3F) | 0x80);
    snprintf(out, FY_GSTORE_ID_MAX,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", r[0], r[1],
             r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13], r[14],
             r[15]);
}

int fy_glossary_store_create(fy_glossary_store *s, const char *name, fy_glossary *const *dicts,
                             int n, fy_glossary_meta *out, fy_error *err)
{
    const char *why = bad_name(name);
    if (why) return fy_err(err, FY_EINVAL, "%s", why);
    int rc = check_dicts(dicts, n, 1, err);
    if (rc) return rc;
    gl *g = calloc(1, sizeof *g);
    if (!g || !(g->name = strdup(name))) {
        free(g);
        return fy_err(err, FY_ENOMEM, "out of memory");
    }
    new_id(g->id);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    g->created_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    for (int k = 0; k < n; k++) g->dicts[g->n++] = fy_glossary_ref(dicts[k]);
    if (out) gl_meta(g, out);
    pthread_mutex_lock(&s->io_lock);
    if (s->shared && sync_all(s, err)) {
        pthread_mutex_unlock(&s->io_lock);
        gl_free(g);
        return FY_ENET;
    }
    rc = commit(s, g, NULL, err);
    pthread_mutex_unlock(&s->io_lock);
    return rc;
}

/* Syncs id from Redis when shared (io_lock taken and released). 0, or
 * FY_ENET when Redis cannot be reached (the copy in memory then serves). */
static void refresh(fy_glossary_store *s, const char *id)
{
    if (!s->shared) return;
    fy_error ignored;
    pthread_mutex_lock(&s->io_lock);
    sync_one(s, id, &ignored);
    pthread_mutex_unlock(&s->io_lock);
}

static int not_found(const char *id, fy_error *err)
{
    return fy_err(err, FY_ENOTFOUND, "no glossary '%.40s'", id);
}

int fy_glossary_store_meta(fy_glossary_store *s, const char *id, fy_glossary_meta *out,
                           fy_error *err)
{
    refresh(s, id);
    pthread_mutex_lock(&s->lock);
    long i = find(s, id);
    if (i >= 0) gl_meta(s->v[i], out);
    pthread_mutex_unlock(&s->lock);
    return i >= 0 ? 0 : not_found(id, err);
}

int fy_glossary_store_list(fy_glossary_store *s, const char *source, const char *target,
                           fy_glossary_meta **list, size_t *n, fy_error *err)
{
    *list = NULL;
    *n = 0;
    if (s->shared) {
        fy_error ignored;
        pthread_mutex_lock(&s->io_lock);
        sync_all(s, &ignored); /* unreachable: the copy in memory serves */
        pthread_mutex_unlock(&s->io_lock);
    }
    int both = source && *source && target && *target;
    pthread_mutex_lock(&s->lock);
    fy_glossary_meta *m = s->n ? malloc(s->n * sizeof *m) : NULL;
    for (size_t i = 0; m && i < s->n; i++)
        if (!both || dict_index(s->v[i], source, target) >= 0) gl_meta(s->v[i], &m[(*n)++]);
    int oom = s->n && !m;
    pthread_mutex_unlock(&s->lock);
    if (oom) return fy_err(err, FY_ENOMEM, "out of memory");
    *list = m;
    return 0;
}

fy_glossary *fy_glossary_store_get(fy_glossary_store *s, const char *id, const char *source,
                                   const char *target, fy_error *err)
{
    refresh(s, id);
    pthread_mutex_lock(&s->lock);
    long i = find(s, id);
    int k = i >= 0 ? dict_index(s->v[i], source, target) : -1;
    fy_glossary *g = k >= 0 ? fy_glossary_ref(s->v[i]->dicts[k]) : NULL;
    pthread_mutex_unlock(&s->lock);
    if (i < 0) not_found(id, err);
    if (i >= 0 && !g)
        fy_err(err, FY_ENOTFOUND, "glossary '%.40s' has no dictionary for %s -> %s", id, source,
               target);
    return g;
}

int fy_glossary_store_get_into(fy_glossary_store *s, const char *id, const char *target,
                               fy_glossary **out, int cap, fy_error *err)
{
    refresh(s, id);
    pthread_mutex_lock(&s->lock);
    long i = find(s, id);
    int n = 0;
    for (int k = 0; i >= 0 && k < s->v[i]->n && n < cap; k++)
        if (!strcmp(fy_glossary_target(s->v[i]->dicts[k]), target))
            out[n++] = fy_glossary_ref(s->v[i]->dicts[k]);
    pthread_mutex_unlock(&s->lock);
    return i >= 0 ? n : not_found(id, err);
}

/* Glossary id's dictionary d merged into by entries of e (e's win). */
static fy_glossary *merged(const fy_glossary *d, const fy_glossary *e, fy_error *err)
{
    fy_glossary *m = fy_glossary_new(fy_glossary_source(e), fy_glossary_target(e), err);
    const char *src, *tgt;
    int rc = m ? 0 : err->code;
    for (size_t i = 0; !rc && i < fy_glossary_count(e); i++) {
        fy_glossary_entry(e, i, &src, &tgt);
        rc = fy_glossary_add(m, src, strlen(src), tgt, strlen(tgt), err);
    }
    for (size_t i = 0; !rc && i < fy_glossary_count(d); i++) {
        fy_glossary_entry(d, i, &src, &tgt);
        int r = fy_glossary_add(m, src, strlen(src), tgt, strlen(tgt), err);
        if (r && r != FY_EINVAL) rc = r; /* EINVAL: e has that term already */
    }
    if (!rc) rc = fy_glossary_compile(m, err);
    if (rc) fy_glossary_unref(m);
    return rc ? NULL : m;
}

/* Applies dicts in mode to g (a copy). 0 or an error. */
static int apply(gl *g, fy_glossary *const *dicts, int n, int mode, fy_error *err)
{
    for (int k = 0; k < n; k++) {
        fy_glossary *d = dicts[k];
        int at = dict_index(g, fy_glossary_source(d), fy_glossary_target(d));
        fy_glossary *nd =
            mode == FY_GSTORE_MERGE && at >= 0 ? merged(g->dicts[at], d, err) : fy_glossary_ref(d);
        if (!nd) return err->code;
        if (at < 0 && g->n == FY_GSTORE_DICTS_MAX) {
            fy_glossary_unref(nd);
            return fy_err(err, FY_EINVAL, "a glossary has at most %d dictionaries",
                          FY_GSTORE_DICTS_MAX);
        }
        if (at >= 0) fy_glossary_unref(g->dicts[at]);
        g->dicts[at >= 0 ? at : g->n++] = nd;
    }
    return 0;
}

/* A copy of id's glossary after syncing (io_lock held), or NULL with err. */
static gl *current(fy_glossary_store *s, const char *id, fy_error *err)
{
    if (s->shared && sync_one(s, id, err) == FY_ENET) return NULL;
    pthread_mutex_lock(&s->lock);
    long i = find(s, id);
    gl *g = i >= 0 ? gl_copy(s->v[i]) : NULL;
    pthread_mutex_unlock(&s->lock);
    if (i < 0) not_found(id, err);
    if (i >= 0 && !g) fy_err(err, FY_ENOMEM, "out of memory");
    return g;
}

int fy_glossary_store_update(fy_glossary_store *s, const char *id, const char *name,
                             fy_glossary *const *dicts, int n, int mode, fy_glossary_meta *out,
                             fy_error *err)
{
    const char *why = name ? bad_name(name) : NULL;
    if (why) return fy_err(err, FY_EINVAL, "%s", why);
    int rc = check_dicts(dicts, n, 0, err);
    if (rc) return rc;
    pthread_mutex_lock(&s->io_lock);
    gl *old = current(s, id, err), *g = old ? gl_copy(old) : NULL;
    rc = !old ? err->code : !g ? fy_err(err, FY_ENOMEM, "out of memory") : 0;
    if (!rc && name) {
        char *nn = strdup(name);
        if (!nn) rc = fy_err(err, FY_ENOMEM, "out of memory");
        if (nn) free(g->name), g->name = nn;
    }
    if (!rc) rc = apply(g, dicts, n, mode, err);
    if (!rc && out) gl_meta(g, out);
    if (!rc) {
        rc = commit(s, g, old, err);
        g = NULL;
    }
    pthread_mutex_unlock(&s->io_lock);
    gl_free(g);
    gl_free(old);
    return rc;
}

int fy_glossary_store_delete_dict(fy_glossary_store *s, const char *id, const char *source,
                                  const char *target, fy_error *err)
{
    pthread_mutex_lock(&s->io_lock);
    gl *old = current(s, id, err), *g = old ? gl_copy(old) : NULL;
    int rc = !old ? err->code : !g ? fy_err(err, FY_ENOMEM, "out of memory") : 0;
    int at = g ? dict_index(g, source, target) : -1;
    if (!rc && at < 0)
        rc = fy_err(err, FY_ENOTFOUND, "glossary '%.40s' has no dictionary for %s -> %s", id,
                    source, target);
    if (!rc) {
        fy_glossary_unref(g->dicts[at]);
        memmove(g->dicts + at, g->dicts + at + 1, (size_t)(g->n - at - 1) * sizeof *g->dicts);
        g->n--;
        rc = commit(s, g, old, err);
        g = NULL;
    }
    pthread_mutex_unlock(&s->io_lock);
    gl_free(g);
    gl_free(old);
    return rc;
}

int fy_glossary_store_delete(fy_glossary_store *s, const char *id, fy_error *err)
{
    pthread_mutex_lock(&s->io_lock);
    gl *old = current(s, id, err);
    int rc = old ? 0 : err->code;
    if (!rc && s->shared) rc = remote_delete(s, id, err);
    if (!rc) {
        remove_file(s, id);
        pthread_mutex_lock(&s->lock);
        drop(s, id);
        pthread_mutex_unlock(&s->lock);
    }
    pthread_mutex_unlock(&s->io_lock);
    gl_free(old);
    return rc;
}
