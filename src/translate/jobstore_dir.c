/* jobstore_dir.c - the document jobs' store on disk (layout: jobstore.h).
 *
 * Every file is written whole under a temporary name and renamed into
 * place, so a reader (or a process that restarts after a crash) sees the
 * old file or the new one, never a mix; a job's directory appears with
 * its upload and first state already in it. The checkpoints are the one
 * file that grows: records are whole JSON lines, and a line a crash cut
 * short is not read. Leases are flock()s, which the kernel drops when the
 * process dies, so another server on the same directory takes over an
 * orphaned job at once.
 */
#include "translate/jobstore.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/buf.h"

enum { MAX_LEASES = 256, STALE_S = 600 };

typedef struct lease {
    char id[33];
    int fd;
} lease;

typedef struct dir_store {
    fy_jobstore base;
    char *dir;
    uint64_t max_bytes;
    pthread_mutex_t lock; /* the counters, the leases, tmp_seq */
    uint64_t bytes;
    size_t jobs;
    lease leases[MAX_LEASES];
    size_t nleases;
    unsigned long tmp_seq;
} dir_store;

int fy_jobstore_id_ok(const char *id)
{
    size_t n = 0;
    for (; id && id[n]; n++)
        if (!strchr("0123456789abcdef", id[n])) return 0;
    return n == 32;
}

/* ---- files --------------------------------------------------------------------- */

static int io_err(fy_error *err, const char *what, const char *path)
{
    int e = errno;
    if (e == ENOENT) return fy_err(err, FY_ENOTFOUND, "no such document job");
    if (e == ENOSPC || e == EDQUOT)
        return fy_err(err, FY_ESPACE, "%s %s: the disk is full", what, path);
    return fy_err(err, FY_EIO, "%s %s: %s", what, path, strerror(e));
}

static char *path_of(const dir_store *d, const char *id, const char *name)
{
    fy_buf b = {0};
    fy_buf_printf(&b, "%s/%s%s%s", d->dir, id, name ? "/" : "", name ? name : "");
    return fy_buf_take(&b, NULL);
}

/* The whole file (malloc'd, NUL-terminated) into *data, *len. */
static int read_all(const char *path, char **data, size_t *len, fy_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return io_err(err, "cannot read", path);
    fy_buf b = {0};
    char chunk[65536];
    ssize_t n;
    while ((n = read(fd, chunk, sizeof chunk)) != 0) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int rc = io_err(err, "cannot read", path);
            close(fd);
            fy_buf_free(&b);
            return rc;
        }
        fy_buf_put(&b, chunk, (size_t)n);
    }
    close(fd);
    if (!b.p) fy_buf_put(&b, "", 0);
    if (b.oom) {
        fy_buf_free(&b);
        return fy_err(err, FY_ENOMEM, "out of memory");
    }
    *data = fy_buf_take(&b, len);
    return 0;
}

static int write_fd(int fd, const char *data, size_t len)
{
    for (size_t at = 0; at < len;) {
        ssize_t n = write(fd, data + at, len - at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        at += (size_t)n;
    }
    return 0;
}

/* data[0..len) as dir/name: written to a temporary file beside it, synced
 * to the disk, renamed into place. */
static int write_atomic(dir_store *d, const char *dir, const char *name, const char *data,
                        size_t len, fy_error *err)
{
    pthread_mutex_lock(&d->lock);
    unsigned long seq = ++d->tmp_seq;
    pthread_mutex_unlock(&d->lock);
    fy_buf tmp = {0}, dst = {0};
    fy_buf_printf(&tmp, "%s/.%s.%ld.%lu", dir, name, (long)getpid(), seq);
    fy_buf_printf(&dst, "%s/%s", dir, name);
    if (tmp.oom || dst.oom) {
        fy_buf_free(&tmp);
        fy_buf_free(&dst);
        return fy_err(err, FY_ENOMEM, "out of memory");
    }
    int rc = 0;
    int fd = open(tmp.p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        rc = io_err(err, "cannot write", dst.p);
    } else {
        if (write_fd(fd, data, len) || fdatasync(fd)) rc = io_err(err, "cannot write", dst.p);
        if (close(fd) && !rc) rc = io_err(err, "cannot write", dst.p);
        if (!rc && rename(tmp.p, dst.p)) rc = io_err(err, "cannot write", dst.p);
        if (rc) unlink(tmp.p);
    }
    fy_buf_free(&tmp);
    fy_buf_free(&dst);
    return rc;
}

/* Bytes of the files of the job directory path. */
static uint64_t dir_bytes(const char *path)
{
    DIR *dh = opendir(path);
    if (!dh) return 0;
    uint64_t sum = 0;
    struct dirent *e;
    while ((e = readdir(dh))) {
        struct stat st;
        if (fstatat(dirfd(dh), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
            sum += (uint64_t)st.st_size;
    }
    closedir(dh);
    return sum;
}

/* Deletes the directory path and the files in it. */
static void remove_tree(const char *path)
{
    DIR *dh = opendir(path);
    if (dh) {
        struct dirent *e;
        while ((e = readdir(dh)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                unlinkat(dirfd(dh), e->d_name, 0);
        closedir(dh);
    }
    rmdir(path);
}

static int mkdirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        int rc = mkdir(path, 0700);
        *p = '/';
        if (rc && errno != EEXIST) return -1;
    }
    return mkdir(path, 0700) && errno != EEXIST ? -1 : 0;
}

/* ---- the size bound -------------------------------------------------------------- */

/* Reserves need bytes under the bound (room: what must stay free beside
 * them); FY_ESPACE saying what is used. */
static int reserve(dir_store *d, uint64_t need, uint64_t room, fy_error *err)
{
    pthread_mutex_lock(&d->lock);
    uint64_t used = d->bytes;
    int ok = used + need + room <= d->max_bytes;
    if (ok) d->bytes += need;
    pthread_mutex_unlock(&d->lock);
    if (ok) return 0;
    return fy_err(err, FY_ESPACE,
                  "the document store is full (%llu of %llu MiB used; this needs %llu MiB more): "
                  "wait for finished documents to expire, or raise --jobs-store-mb",
                  (unsigned long long)(used >> 20), (unsigned long long)(d->max_bytes >> 20),
                  (unsigned long long)((need + room + (1 << 20) - 1) >> 20));
}

static void release(dir_store *d, uint64_t n)
{
    pthread_mutex_lock(&d->lock);
    d->bytes = d->bytes > n ? d->bytes - n : 0;
    pthread_mutex_unlock(&d->lock);
}

/* ---- operations ---------------------------------------------------------------- */

static int bad_id(const char *id, fy_error *err)
{
    return fy_jobstore_id_ok(id) ? 0 : fy_err(err, FY_ENOTFOUND, "no such document job");
}

static int dir_remove(fy_jobstore *s, const char *id, fy_error *err);

/* The lock file of the job directory dir, flock()ed: its descriptor, or
 * -1 with err. */
static int lock_file(const char *dir, fy_error *err)
{
    fy_buf p = {0};
    fy_buf_printf(&p, "%s/lock", dir);
    if (p.oom) return fy_err(err, FY_ENOMEM, "out of memory"), -1;
    int fd = open(p.p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        io_err(err, "cannot lock", p.p);
    } else if (flock(fd, LOCK_EX | LOCK_NB)) {
        if (errno == EWOULDBLOCK)
            fy_err(err, FY_EBUSY, "held by another process");
        else
            io_err(err, "cannot lock", p.p);
        close(fd);
        fd = -1;
    }
    fy_buf_free(&p);
    return fd;
}

/* Keeps fd as this process's lease on id; FY_ELIMIT when too many. */
static int keep_lease(dir_store *d, const char *id, int fd, fy_error *err)
{
    pthread_mutex_lock(&d->lock);
    int full = d->nleases == MAX_LEASES;
    if (!full) {
        memcpy(d->leases[d->nleases].id, id, 33);
        d->leases[d->nleases++].fd = fd;
    }
    pthread_mutex_unlock(&d->lock);
    if (!full) return 0;
    close(fd);
    return fy_err(err, FY_ELIMIT, "more than %d document jobs running here", MAX_LEASES);
}

static int dir_create(fy_jobstore *s, const char *id, const char *state, const char *data,
                      size_t len, int ttl_s, int lease_ms, fy_error *err)
{
    (void)ttl_s;
    dir_store *d = (dir_store *)s;
    if (bad_id(id, err)) return FY_ENOTFOUND;
    size_t slen = strlen(state);
    int rc = reserve(d, len + slen, len, err);
    if (rc) return rc;
    fy_buf tmp = {0};
    fy_buf_printf(&tmp, "%s/.new-%s", d->dir, id);
    char *dst = path_of(d, id, NULL);
    int fd = -1;
    rc = tmp.oom || !dst ? fy_err(err, FY_ENOMEM, "out of memory") : 0;
    if (!rc && mkdir(tmp.p, 0700)) rc = io_err(err, "cannot make", tmp.p);
    if (!rc) rc = write_atomic(d, tmp.p, "source", data, len, err);
    if (!rc) rc = write_atomic(d, tmp.p, "state.json", state, slen, err);
    /* Locked before it appears: the lock follows the directory's rename. */
    fy_error e = {0};
    if (!rc && lease_ms > 0 && (fd = lock_file(tmp.p, &e)) < 0)
        rc = fy_err(err, e.code, "%s", e.msg);
    if (!rc && rename(tmp.p, dst)) rc = io_err(err, "cannot make", dst);
    if (rc && fd >= 0) close(fd);
    if (rc && tmp.p) remove_tree(tmp.p);
    if (rc) release(d, len + slen);
    if (!rc) {
        pthread_mutex_lock(&d->lock);
        d->jobs++;
        pthread_mutex_unlock(&d->lock);
    }
    if (!rc && fd >= 0 && (rc = keep_lease(d, id, fd, err))) dir_remove(s, id, NULL);
    fy_buf_free(&tmp);
    free(dst);
    return rc;
}

static int dir_get_state(fy_jobstore *s, const char *id, char **state, fy_error *err)
{
    dir_store *d = (dir_store *)s;
    if (bad_id(id, err)) return FY_ENOTFOUND;
    char *p = path_of(d, id, "state.json");
    size_t len;
    int rc = p ? read_all(p, state, &len, err) : fy_err(err, FY_ENOMEM, "out of memory");
    free(p);
    return rc;
}

/* Has the stored state of id ended (not queued, not translating)? A damaged
 * one has not: it is replaced. */
static int has_ended(fy_jobstore *s, const char *id)
{
    char *text = NULL;
    fy_error err = {0};
    if (dir_get_state(s, id, &text, &err)) return 0;
    json_t *o = json_loads(text, 0, NULL);
    const char *st = json_string_value(json_object_get(o, "state"));
    int ended = st && strcmp(st, "queued") && strcmp(st, "translating");
    json_decref(o);
    free(text);
    return ended;
}

/* One process owns a directory and runs a job once at a time, so the check
 * and the write need no lock between processes (the Redis store makes them
 * one step). */
static int dir_put_state(fy_jobstore *s, const char *id, const char *state, int open, int ttl_s,
                         fy_error *err)
{
    (void)ttl_s;
    dir_store *d = (dir_store *)s;
    if (bad_id(id, err)) return FY_ENOTFOUND;
    if (open && has_ended(s, id)) return 1;
    char *dir = path_of(d, id, NULL);
    int rc = dir ? write_atomic(d, dir, "state.json", state, strlen(state), err)
                 : fy_err(err, FY_ENOMEM, "out of memory");
    free(dir);
    return rc;
}

static int dir_get_file(fy_jobstore *s, const char *id, const char *name, char **data, size_t *len,
                        fy_error *err)
{
    dir_store *d = (dir_store *)s;
    if (bad_id(id, err)) return FY_ENOTFOUND;
    char *p = path_of(d, id, name);
    int rc = p ? read_all(p, data, len, err) : fy_err(err, FY_ENOMEM, "out of memory");
    free(p);
    return rc;
}

static int dir_get_source(fy_jobstore *s, const char *id, char **data, size_t *len, fy_error *err)
{
    return dir_get_file(s, id, "source", data, len, err);
}

static int dir_get_result(fy_jobstore *s, const char *id, char **data, size_t *len, fy_error *err)
{
    return dir_get_file(s, id, "result", data, len, err);
}

/* The records as JSON lines in one buffer, so that one write appends them. */
static int unit_lines(const size_t *idx, const char *const *texts, const size_t *lens, size_t n,
                      fy_buf *b)
{
    for (size_t k = 0; k < n; k++) {
        json_t *v = json_pack("{s:I,s:s%}", "i", (json_int_t)idx[k], "t", texts[k], lens[k]);
        char *line = v ? json_dumps(v, JSON_COMPACT) : NULL;
        json_decref(v);
        if (!line) return -1;
        fy_buf_put(b, line, strlen(line));
        fy_buf_putc(b, '\n');
        free(line);
    }
    return b->oom ? -1 : 0;
}

static int dir_put_units(fy_jobstore *s, const char *id, const size_t *idx,
                         const char *const *texts, const size_t *lens, size_t n, fy_error *err)
{
    dir_store *d = (dir_store *)s;
    if (bad_id(id, err)) return FY_ENOTFOUND;
    fy_buf b = {0};
    char *p = path_of(d, id, "units.jsonl");
    int rc =
        !p || unit_lines(idx, texts, lens, n, &b) ? fy_err(err, FY_ENOMEM, "out of memory") : 0;
    if (!rc) rc = reserve(d, b.n, 0, err);
    int fd = rc ? -1 : open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (!rc && fd < 0) rc = io_err(err, "cannot write", p);
    if (fd >= 0) {
        if (write_fd(fd, b.p, b.n)) rc = io_err(err, "cannot write", p);
        close(fd);
    }
    if (rc && rc != FY_ESPACE) release(d, b.n);
    fy_buf_free(&b);
    free(p);
    return rc;
}

static int dir_get_units(fy_jobstore *s, const char *id, fy_jobstore_unit_fn fn, void *user,
                         fy_error *err)
{
    char *data;
    size_t len;
    int rc = dir_get_file(s, id, "units.jsonl", &data, &len, err);
    if (rc == FY_ENOTFOUND) { /* none yet, if the job is there */
        char *state = NULL;
        rc = dir_get_state(s, id, &state, err);
        free(state);
        return rc;
    }
    if (rc) return rc;
    /* Whole lines only: a line a crash cut short has no newline yet. */
    for (char *line = data, *nl; (nl = memchr(line, '\n', len - (size_t)(line - data)));
         line = nl + 1) {
        json_t *v = json_loadb(line, (size_t)(nl - line), 0, NULL);
        json_t *i = json_object_get(v, "i"), *t = json_object_get(v, "t");
        int ok = json_is_integer(i) && json_integer_value(i) >= 0 && json_is_string(t);
        if (ok)
            fn(user, (size_t)json_integer_value(i), json_string_value(t), json_string_length(t));
        json_decref(v);
        if (!ok) break;
    }
    free(data);
    return 0;
}

static int dir_put_result(fy_jobstore *s, const char *id, const char *data, size_t len, int ttl_s,
                          fy_error *err)
{
    (void)ttl_s;
    dir_store *d = (dir_store *)s;
    if (bad_id(id, err)) return FY_ENOTFOUND;
    char *dir = path_of(d, id, NULL);
    if (!dir) return fy_err(err, FY_ENOMEM, "out of memory");
    int rc = reserve(d, len, 0, err);
    if (!rc) rc = write_atomic(d, dir, "result", data, len, err);
    if (rc && rc != FY_ESPACE) release(d, len);
    free(dir);
    return rc;
}

/* Closes the lease of id if this process holds it; lock held. */
static void drop_lease(dir_store *d, const char *id)
{
    for (size_t i = 0; i < d->nleases; i++) {
        if (strcmp(d->leases[i].id, id)) continue;
        close(d->leases[i].fd);
        d->leases[i] = d->leases[--d->nleases];
        return;
    }
}

static int dir_remove(fy_jobstore *s, const char *id, fy_error *err)
{
    dir_store *d = (dir_store *)s;
    if (bad_id(id, err)) return FY_ENOTFOUND;
    char *src = path_of(d, id, NULL);
    fy_buf gone = {0};
    fy_buf_printf(&gone, "%s/.del-%s.%ld", d->dir, id, (long)getpid());
    if (!src || gone.oom) {
        free(src);
        fy_buf_free(&gone);
        return fy_err(err, FY_ENOMEM, "out of memory");
    }
    /* Renamed first: the job is gone at once for every reader. */
    int rc = rename(src, gone.p) ? (errno == ENOENT ? 0 : io_err(err, "cannot delete", src)) : 1;
    if (rc == 1) {
        uint64_t n = dir_bytes(gone.p);
        remove_tree(gone.p);
        pthread_mutex_lock(&d->lock);
        drop_lease(d, id);
        d->bytes = d->bytes > n ? d->bytes - n : 0;
        d->jobs -= d->jobs > 0;
        pthread_mutex_unlock(&d->lock);
        rc = 0;
    }
    free(src);
    fy_buf_free(&gone);
    return rc;
}

/* Every job directory (open or not: the states say); for the whole list,
 * leftovers of a crash (.new-, .del-) older than STALE_S are removed and
 * the counters recounted from what is there (other processes' jobs too). */
static int dir_list(fy_jobstore *s, int open, char (**ids)[33], size_t *n, fy_error *err)
{
    dir_store *d = (dir_store *)s;
    DIR *dh = opendir(d->dir);
    if (!dh) return io_err(err, "cannot read", d->dir);
    char(*out)[33] = NULL;
    size_t cnt = 0, cap = 0;
    uint64_t bytes = 0;
    int oom = 0;
    struct dirent *e;
    while ((e = readdir(dh)) && !oom) {
        char *p = path_of(d, e->d_name, NULL);
        if (!p) {
            oom = 1;
            break;
        }
        struct stat st;
        int isdir = !lstat(p, &st) && S_ISDIR(st.st_mode);
        int leftover = !strncmp(e->d_name, ".new-", 5) || !strncmp(e->d_name, ".del-", 5);
        if (!open && isdir && leftover && time(NULL) - st.st_mtime > STALE_S) remove_tree(p);
        if (isdir && fy_jobstore_id_ok(e->d_name)) {
            if (!open) bytes += dir_bytes(p);
            if (fy_vec_reserve((void **)&out, &cap, cnt + 1, sizeof *out))
                oom = 1;
            else
                memcpy(out[cnt++], e->d_name, 33);
        }
        free(p);
    }
    closedir(dh);
    if (oom) {
        free(out);
        return fy_err(err, FY_ENOMEM, "out of memory");
    }
    if (!open) {
        pthread_mutex_lock(&d->lock);
        d->bytes = bytes;
        d->jobs = cnt;
        pthread_mutex_unlock(&d->lock);
    }
    *ids = out;
    *n = cnt;
    return 0;
}

static int dir_cancel(fy_jobstore *s, const char *id, fy_error *err)
{
    dir_store *d = (dir_store *)s;
    if (bad_id(id, err)) return FY_ENOTFOUND;
    char *p = path_of(d, id, "cancel");
    if (!p) return fy_err(err, FY_ENOMEM, "out of memory");
    int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    int rc = fd < 0 ? io_err(err, "cannot write", p) : 0;
    if (fd >= 0) close(fd);
    free(p);
    return rc;
}

static int dir_canceled(fy_jobstore *s, const char *id, fy_error *err)
{
    dir_store *d = (dir_store *)s;
    if (bad_id(id, err)) return FY_ENOTFOUND;
    char *p = path_of(d, id, "cancel");
    if (!p) return fy_err(err, FY_ENOMEM, "out of memory");
    int there = access(p, F_OK) == 0;
    free(p);
    return there;
}

static int dir_lease(fy_jobstore *s, const char *id, int ms, fy_error *err)
{
    (void)ms;
    dir_store *d = (dir_store *)s;
    if (bad_id(id, err)) return FY_ENOTFOUND;
    pthread_mutex_lock(&d->lock);
    int held = 0;
    for (size_t i = 0; i < d->nleases && !held; i++) held = !strcmp(d->leases[i].id, id);
    pthread_mutex_unlock(&d->lock);
    if (held) return 1;
    char *dir = path_of(d, id, NULL);
    if (!dir) return fy_err(err, FY_ENOMEM, "out of memory");
    fy_error e = {0};
    int fd = lock_file(dir, &e);
    free(dir);
    if (fd < 0 && e.code == FY_EBUSY) return 0;
    if (fd < 0) return fy_err(err, e.code, "%s", e.msg);
    int rc = keep_lease(d, id, fd, err);
    return rc ? rc : 1;
}

static void dir_unlease(fy_jobstore *s, const char *id)
{
    dir_store *d = (dir_store *)s;
    pthread_mutex_lock(&d->lock);
    drop_lease(d, id);
    pthread_mutex_unlock(&d->lock);
}

static void dir_usage(fy_jobstore *s, uint64_t *bytes, size_t *jobs)
{
    dir_store *d = (dir_store *)s;
    pthread_mutex_lock(&d->lock);
    *bytes = d->bytes;
    *jobs = d->jobs;
    pthread_mutex_unlock(&d->lock);
}

static void dir_free(fy_jobstore *s)
{
    dir_store *d = (dir_store *)s;
    for (size_t i = 0; i < d->nleases; i++) close(d->leases[i].fd);
    pthread_mutex_destroy(&d->lock);
    free(d->dir);
    free(d);
}

static const fy_jobstore_ops dir_ops = {
    dir_create,     dir_get_state,  dir_put_state, dir_get_source, dir_put_units, dir_get_units,
    dir_put_result, dir_get_result, dir_remove,    dir_list,       dir_cancel,    dir_canceled,
    dir_lease,      dir_unlease,    dir_usage,     dir_free,       "disk"};

fy_jobstore *fy_jobstore_dir_open(const char *dir, uint64_t max_bytes, fy_error *err)
{
    dir_store *d = calloc(1, sizeof *d);
    if (!d || !(d->dir = strdup(dir))) {
        free(d);
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    d->base.ops = &dir_ops;
    d->max_bytes = max_bytes;
    pthread_mutex_init(&d->lock, NULL);
    size_t n = strlen(d->dir);
    while (n > 1 && d->dir[n - 1] == '/') d->dir[--n] = '\0';
    char(*ids)[33] = NULL;
    size_t count;
    if (mkdirs(d->dir) || access(d->dir, W_OK | X_OK)) {
        fy_err(err, FY_EIO, "%s: cannot keep document jobs there: %s", d->dir, strerror(errno));
        dir_free(&d->base);
        return NULL;
    }
    if (dir_list(&d->base, 0, &ids, &count, err)) { /* counts what is there */
        dir_free(&d->base);
        return NULL;
    }
    free(ids);
    return &d->base;
}

void fy_jobstore_free(fy_jobstore *s)
{
    if (s) s->ops->free(s);
}
