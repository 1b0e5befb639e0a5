/* fetch.c - libcurl downloads with resume, streaming sha256, limits, and the install plan.
 *
 * One file's life: open (or reuse) STAGING/.NAME.<sha12>.part, hash what it
 * already holds, ask the server for the rest with "Range: bytes=N-" (a server
 * that answers 200 instead of 206 ignored the range: start over), append and
 * hash as bytes arrive, resume after dropped connections, then compare size
 * and digest, fsync, and rename it to STAGING/NAME. The model's plan
 * (install_model) decides which files come from the installed model (hard
 * links), which from the staging directory of an earlier run, and which are
 * downloaded; src/model/store.c turns the complete staging directory into
 * the installed version.
 *
 * Limits: a request that receives fewer than min_bytes_per_s over
 * rate_window_s is ended (and resumed, but it never counts as progress, so a
 * mirror that drips or stalls runs out of retries); a file gets at most
 * max_attempts requests; the whole fetch at most max_time_s.
 */
#include "model/fetch.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "model/sha256.h"
#include "model/store.h"
#include "util/clock.h"

#define note fy_store_note

/* What stopped a transfer from inside our callbacks (curl only sees "abort"). */
enum {
    STOP_NONE,
    STOP_DISK,
    STOP_TOO_BIG,
    STOP_BAD_RANGE,
    STOP_WRONG_LENGTH,
    STOP_SLOW,    /* under the minimum rate for a window */
    STOP_DEADLINE /* max_time_s is over */
};

/* The state of a file against its manifest entry. */
typedef enum {
    FILE_MISSING,
    FILE_OK,
    FILE_WRONG_SIZE,
    FILE_WRONG_HASH,
    FILE_NOT_REGULAR
} file_state;

typedef struct download {
    const fy_manifest_file *f;
    const fy_fetch_options *o;
    const char *dir;        /* the model directory (messages) */
    int dirfd;              /* the staging directory */
    char part[300];         /* .NAME.<sha12>.part, in dirfd */
    char *part_path;        /* its path (messages) */
    int fd;                 /* the part file, open read/write */
    fy_sha256 *h;           /* digest of bytes [0, have) */
    uint64_t have;          /* bytes in the part file */
    uint64_t received;      /* bytes received this run */
    uint64_t attempt_bytes; /* bytes received by the current request */
    int decided;            /* the current response's first body byte was seen */
    int stop;               /* STOP_* */
    int stop_errno;
    uint64_t server_size; /* length the server announced, 0 if unknown */
    CURL *curl;
    size_t index, count;
    double start;           /* fy_now_s() when the transfer began */
    double deadline;        /* fy_now_s() when max_time_s is over */
    double window_t0;       /* the current rate window began then, */
    uint64_t window_bytes0; /* with attempt_bytes at this */
    uint64_t slow_bytes;    /* what the window that failed the rate received */
} download;

void fy_fetch_options_default(fy_fetch_options *o)
{
    memset(o, 0, sizeof *o);
    o->connect_timeout_s = 20;
    o->rate_window_s = 30;
    o->min_bytes_per_s = 1024;
    o->retries = 5;
    o->max_attempts = 20;
    o->max_time_s = 4 * 3600;
    o->retry_delay_ms = 1000;
}

static char *path_join(const char *dir, const char *a, const char *b)
{
    size_t n = strlen(dir) + strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s%s", dir, a, b);
    return p;
}

static void report(download *d, int finished)
{
    if (!d->o->progress) return;
    fy_fetch_progress p = {
        d->f->name, d->index, d->count, d->have, d->f->size, d->received, fy_now_s() - d->start,
        finished};
    d->o->progress(d->o->ctx, &p);
}

/* ---- checking files ---- */

/* dirfd/f->name (dir names dirfd in messages) against f: size first, then
 * sha256 only when the size is right. Never follows a symbolic link (one is
 * FILE_NOT_REGULAR). *ino (may be NULL) receives the file's inode. Returns 0,
 * FY_EIO or FY_ENOMEM. */
static int check_file(int dirfd, const char *dir, const fy_manifest_file *f, file_state *state,
                      ino_t *ino, fy_error *err)
{
    int fd = openat(dirfd, f->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        if (errno == ENOENT || errno == ELOOP) {
            *state = errno == ENOENT ? FILE_MISSING : FILE_NOT_REGULAR;
            return 0;
        }
        return fy_err(err, FY_EIO, "%s/%s: cannot open: %s", dir, f->name, strerror(errno));
    }
    int rc = 0;
    if (fstat(fd, &st)) {
        rc = fy_err(err, FY_EIO, "%s/%s: cannot stat: %s", dir, f->name, strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        *state = FILE_NOT_REGULAR;
    } else if ((uint64_t)st.st_size != f->size) {
        *state = FILE_WRONG_SIZE;
    } else {
        char hex[65], *path = path_join(dir, f->name, "");
        fy_sha256 *h = fy_sha256_new();
        if (!path || !h)
            rc = fy_err(err, FY_ENOMEM, "out of memory");
        else if (!(rc = fy_sha256_update_fd(h, fd, f->size, path, err))) {
            fy_sha256_hex(h, hex);
            *state = strcmp(hex, f->sha256) ? FILE_WRONG_HASH : FILE_OK;
        }
        fy_sha256_free(h);
        free(path);
    }
    if (ino && !rc) *ino = st.st_ino;
    close(fd);
    return rc;
}

/* ---- the transfer ---- */

/* Decides, on a response's first body byte, whether it continues our part
 * file (206 at our offset, or a file:// read) or replaces it (200). */
static int first_body(download *d)
{
    long code = 0;
    curl_off_t len = -1;
    curl_easy_getinfo(d->curl, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_getinfo(d->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len);
    uint64_t start = d->have;
    if (code == 200 && d->have > 0) {
        /* The server ignored our Range header: its body is the whole file. */
        if (ftruncate(d->fd, 0) || fy_sha256_reset(d->h)) {
            d->stop_errno = errno;
            return STOP_DISK;
        }
        d->have = start = 0;
    } else if (code == 206) {
        struct curl_header *hdr = NULL;
        unsigned long long a = 0, b = 0, total = 0;
        if (curl_easy_header(d->curl, "Content-Range", 0, CURLH_HEADER, -1, &hdr) != CURLHE_OK ||
            sscanf(hdr->value, "bytes %llu-%llu/%llu", &a, &b, &total) != 3 || a != d->have)
            return STOP_BAD_RANGE;
        d->server_size = total;
        if (total != d->f->size) return STOP_WRONG_LENGTH;
    }
    if (len >= 0 && code != 206) {
        d->server_size = start + (uint64_t)len;
        if (d->server_size != d->f->size) return STOP_WRONG_LENGTH;
    }
    return STOP_NONE;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
    download *d = arg;
    size_t n = size * nmemb;
    if (!d->decided) {
        d->decided = 1;
        d->stop = first_body(d);
        if (d->stop) return CURL_WRITEFUNC_ERROR;
    }
    if (d->have + n > d->f->size) {
        d->stop = STOP_TOO_BIG;
        return CURL_WRITEFUNC_ERROR;
    }
    for (size_t off = 0; off < n;) {
        ssize_t w = pwrite(d->fd, data + off, n - off, (off_t)(d->have + off));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            d->stop = STOP_DISK;
            d->stop_errno = w < 0 ? errno : EIO;
            return CURL_WRITEFUNC_ERROR;
        }
        off += (size_t)w;
    }
    fy_sha256_update(d->h, data, n);
    d->have += n;
    d->received += n;
    d->attempt_bytes += n;
    return n;
}

/* curl calls this at least once a second, also while nothing arrives: the
 * place for the rate window and the deadline. */
static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    download *d = arg;
    report(d, 0);
    double t = fy_now_s(), span = t - d->window_t0;
    if (t >= d->deadline) {
        d->stop = STOP_DEADLINE;
        return 1;
    }
    if (span >= (double)d->o->rate_window_s) {
        uint64_t got = d->attempt_bytes - d->window_bytes0;
        if ((double)got < (double)d->o->min_bytes_per_s * span) {
            d->stop = STOP_SLOW;
            d->slow_bytes = got;
            return 1;
        }
        d->window_t0 = t;
        d->window_bytes0 = d->attempt_bytes;
    }
    return 0;
}

/* "host" or "host:port" of url, for messages. */
static void url_host(const char *url, char *out, size_t cap)
{
    snprintf(out, cap, "%s", url);
    CURLU *u = curl_url();
    char *host = NULL, *port = NULL;
    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
        if (curl_url_get(u, CURLUPART_PORT, &port, 0) == CURLUE_OK)
            snprintf(out, cap, "%s:%s", host, port);
        else
            snprintf(out, cap, "%s", host);
    }
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
}

static CURLcode perform(download *d, char *errbuf)
{
    char range[48];
    snprintf(range, sizeof range, "%" PRIu64 "-", d->have);
    curl_easy_reset(d->curl);
    CURL *c = d->curl;
    /* The deadline is checked in on_progress; this catches phases (name
     * resolution) where curl may not call it. */
    double left_ms = (d->deadline - fy_now_s()) * 1000.0;
    curl_easy_setopt(c, CURLOPT_URL, d->f->url);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https,file");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_USERAGENT, "fanyi-model-fetch");
    curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, d->o->connect_timeout_s);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, left_ms < 1 ? 1L : (long)left_ms + 1);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, d);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, d);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    /* A plain Range header, not CURLOPT_RESUME_FROM: that one makes curl
     * fail on a 200 answer, and we would rather start over. */
    if (d->have > 0) curl_easy_setopt(c, CURLOPT_RANGE, range);
    d->decided = 0;
    d->stop = STOP_NONE;
    d->attempt_bytes = 0;
    d->window_t0 = fy_now_s();
    d->window_bytes0 = 0;
    errbuf[0] = '\0';
    CURLcode rc = curl_easy_perform(c);
    if (rc == CURLE_OPERATION_TIMEDOUT && fy_now_s() >= d->deadline) d->stop = STOP_DEADLINE;
    return rc;
}

static int transient(CURLcode rc)
{
    return rc == CURLE_PARTIAL_FILE || rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR ||
           rc == CURLE_GOT_NOTHING || rc == CURLE_OPERATION_TIMEDOUT ||
           rc == CURLE_SSL_CONNECT_ERROR;
}

static int deadline_error(download *d, fy_error *err)
{
    return fy_err(err, FY_ETIMEOUT,
                  "%s: the fetch took longer than %ld s (--max-time), at %" PRIu64 " of %" PRIu64
                  " bytes; run it again to resume",
                  d->f->name, d->o->max_time_s, d->have, d->f->size);
}

/* What our callbacks stopped; returns 1 if worth resuming. */
static int explain_stop(download *d, const char *host, fy_error *err)
{
    const fy_manifest_file *f = d->f;
    switch (d->stop) {
    case STOP_DISK:
        fy_err(err, FY_EIO, "%s: cannot write %s: %s", f->name, d->part_path,
               strerror(d->stop_errno));
        return 0;
    case STOP_TOO_BIG:
        fy_err(err, FY_EHASH,
               "%s: size mismatch: the server sent more than %" PRIu64 " bytes (nothing installed)",
               f->name, f->size);
        return 0;
    case STOP_WRONG_LENGTH:
        fy_err(err, FY_EHASH,
               "%s: size mismatch: the server has %" PRIu64 " bytes, the manifest says %" PRIu64
               " (nothing installed)",
               f->name, d->server_size, f->size);
        return 0;
    case STOP_BAD_RANGE:
        fy_err(err, FY_ENET, "%s: %s answered a range request with a wrong Content-Range", f->name,
               host);
        return 0;
    case STOP_SLOW:
        if (d->slow_bytes == 0)
            fy_err(err, FY_ETIMEOUT,
                   "%s: %s stopped sending data (nothing for %ld s) at %" PRIu64 " of %" PRIu64
                   " bytes",
                   f->name, host, d->o->rate_window_s, d->have, f->size);
        else
            fy_err(err, FY_ETIMEOUT,
                   "%s: %s is too slow: %" PRIu64 " bytes in %ld s, under the minimum of %ld "
                   "bytes/s (--min-rate), at %" PRIu64 " of %" PRIu64 " bytes",
                   f->name, host, d->slow_bytes, d->o->rate_window_s, d->o->min_bytes_per_s,
                   d->have, f->size);
        return 1;
    case STOP_DEADLINE:
        deadline_error(d, err);
        return 0;
    }
    return 0;
}

/* Turns a failed attempt into a message; returns 1 if worth resuming. */
static int explain(download *d, CURLcode rc, const char *errbuf, fy_error *err)
{
    const fy_manifest_file *f = d->f;
    const char *why = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    char host[256];
    url_host(f->url, host, sizeof host);
    if (d->stop) return explain_stop(d, host, err);
    long code = 0;
    curl_off_t connect_us = 0;
    curl_easy_getinfo(d->curl, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_getinfo(d->curl, CURLINFO_CONNECT_TIME_T, &connect_us);
    if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
        rc == CURLE_COULDNT_RESOLVE_PROXY || (rc == CURLE_OPERATION_TIMEDOUT && connect_us == 0)) {
        fy_err(err, FY_ENET,
               "%s: cannot reach %s (%s) — copy the files into %s, or use --mirror URL", f->name,
               host, why, d->dir);
        return 0;
    }
    if (rc == CURLE_HTTP_RETURNED_ERROR) {
        fy_err(err, FY_ENET, "%s: HTTP %ld from %s", f->name, code, f->url);
        return code == 502 || code == 503 || code == 504;
    }
    if (rc == CURLE_OK) {
        fy_err(err, FY_EHASH,
               "%s: size mismatch: the download ended at %" PRIu64 " of %" PRIu64 " bytes", f->name,
               d->have, f->size);
        return d->attempt_bytes > 0;
    }
    fy_err(err, FY_ENET, "%s: download from %s failed at %" PRIu64 " of %" PRIu64 " bytes: %s",
           f->name, host, d->have, f->size, why);
    return transient(rc);
}

/* Empties the part file (its bytes are no prefix of the file). */
static int restart(download *d, fy_error *err)
{
    if (ftruncate(d->fd, 0) || fy_sha256_reset(d->h))
        return fy_err(err, FY_EIO, "%s: cannot truncate %s: %s", d->f->name, d->part_path,
                      strerror(errno));
    d->have = 0;
    return 0;
}

/* Brings the part file to f->size bytes with the digest in d->h, resuming
 * while retries (failures in a row without progress), attempts and time
 * remain. A request ended for being too slow is no progress, however many
 * bytes it brought. */
static int transfer(download *d, fy_error *err)
{
    char errbuf[CURL_ERROR_SIZE];
    int failures = 0, attempts = 0;
    d->start = fy_now_s();
    while (d->have < d->f->size) {
        if (fy_now_s() >= d->deadline) return deadline_error(d, err);
        CURLcode rc = perform(d, errbuf);
        attempts++;
        long code = 0;
        curl_easy_getinfo(d->curl, CURLINFO_RESPONSE_CODE, &code);
        if (rc == CURLE_OK && d->have == d->f->size) break;
        fy_error e = {0}; /* err may be NULL, but the retry note wants the reason */
        int again;
        if (rc == CURLE_HTTP_RETURNED_ERROR && code == 416 && d->have > 0) {
            /* Our part is no prefix of the server's file: start over. */
            note(d->o, "%s: the server refused to resume at %" PRIu64 " bytes; starting over",
                 d->f->name, d->have);
            int bad = restart(d, err);
            if (bad) return bad;
            fy_err(&e, FY_ENET, "%s: HTTP 416 (range not satisfiable) from %s", d->f->name,
                   d->f->url);
            again = 1;
        } else {
            again = explain(d, rc, errbuf, &e);
            if (d->attempt_bytes > 0 && d->stop != STOP_SLOW) failures = 0;
        }
        if (!again || ++failures > d->o->retries) return fy_err(err, e.code, "%s", e.msg);
        if (attempts >= d->o->max_attempts)
            return fy_err(err, e.code, "%s; gave up after %d requests (--max-attempts)", e.msg,
                          attempts);
        note(d->o, "%s; resuming at %" PRIu64 " bytes (retry %d of %d)", e.msg, d->have, failures,
             d->o->retries);
        double left = d->deadline - fy_now_s(), delay = (double)d->o->retry_delay_ms / 1000.0;
        if (delay > left) delay = left > 0 ? left : 0;
        struct timespec pause = {(time_t)delay, (long)((delay - (double)(time_t)delay) * 1e9)};
        nanosleep(&pause, NULL);
    }
    report(d, 1);
    return 0;
}

/* Opens d->part in the staging directory without following links: an
 * existing one (a previous run's partial data, hashed here) only when it is
 * a regular file with no other names; else a new one (O_EXCL). */
static int open_part(download *d, const char *staging, fy_error *err)
{
    snprintf(d->part, sizeof d->part, ".%s.%.12s.part", d->f->name, d->f->sha256);
    if (!(d->part_path = path_join(staging, d->part, "")))
        return fy_err(err, FY_ENOMEM, "out of memory");
    for (int tries = 0; tries < 3 && d->fd < 0; tries++) {
        d->fd = openat(d->dirfd, d->part, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (d->fd < 0 && errno == ENOENT)
            d->fd =
                openat(d->dirfd, d->part, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (d->fd < 0 && errno != EEXIST) break; /* EEXIST: it appeared meanwhile; open that */
    }
    if (d->fd < 0 && errno == ELOOP)
        return fy_err(err, FY_EIO,
                      "%s: %s is a symbolic link; refusing to follow it (remove it and run fetch "
                      "again)",
                      d->f->name, d->part_path);
    if (d->fd < 0)
        return fy_err(err, FY_EIO, "%s: cannot create %s: %s", d->f->name, d->part_path,
                      strerror(errno));
    struct stat st;
    if (fstat(d->fd, &st))
        return fy_err(err, FY_EIO, "%s: cannot stat %s: %s", d->f->name, d->part_path,
                      strerror(errno));
    if (!S_ISREG(st.st_mode) || st.st_nlink != 1)
        return fy_err(err, FY_EIO,
                      "%s: %s is %s; refusing to write to it (remove it and run fetch again)",
                      d->f->name, d->part_path,
                      S_ISREG(st.st_mode) ? "a file with other hard links" : "not a regular file");
    d->have = (uint64_t)st.st_size;
    if (d->have > d->f->size) {
        int rc = restart(d, err);
        if (rc) return rc;
    }
    if (d->have > 0) {
        int rc = fy_sha256_update_fd(d->h, d->fd, d->have, d->part_path, err);
        if (rc) return rc;
        if (d->have == d->f->size)
            note(d->o, "%s: checking a complete previous download", d->f->name);
        else
            note(d->o, "%s: resuming a previous download at %" PRIu64 " of %" PRIu64 " bytes",
                 d->f->name, d->have, d->f->size);
    }
    return 0;
}

/* Downloads one file into its verified, fsync'd part file and renames it
 * to its name in the staging directory. On a digest mismatch after resuming
 * an old part, the old part may be the bad bit: start over once before
 * giving up. */
static int download_file(download *d, fy_error *err)
{
    for (int round = 0;; round++) {
        int resumed = d->have > 0;
        int rc = transfer(d, err);
        if (rc == FY_EHASH) unlinkat(d->dirfd, d->part, 0); /* the server's file is not ours */
        if (rc) return rc;
        char hex[65];
        fy_sha256_hex(d->h, hex);
        if (!strcmp(hex, d->f->sha256)) break;
        if ((rc = restart(d, err))) return rc;
        if (!resumed || round > 0) {
            unlinkat(d->dirfd, d->part, 0);
            return fy_err(
                err, FY_EHASH,
                "%s: sha256 mismatch: got %.16s..., expected %.16s... (nothing installed)",
                d->f->name, hex, d->f->sha256);
        }
        note(d->o, "%s: sha256 mismatch after resuming; downloading again from the start",
             d->f->name);
    }
    if (fsync(d->fd))
        return fy_err(err, FY_EIO, "%s: cannot fsync %s: %s", d->f->name, d->part_path,
                      strerror(errno));
    if (renameat(d->dirfd, d->part, d->dirfd, d->f->name))
        return fy_err(err, FY_EIO, "%s: cannot rename %s: %s", d->f->name, d->part_path,
                      strerror(errno));
    fy_store_fault(d->o, "downloaded");
    return 0;
}

/* ---- the model ---- */

/* Where each file of the new version comes from: the staging directory
 * (an earlier run's download), the installed model (to be hard linked, or
 * linked already), or the network. */
enum { FROM_STAGING, FROM_INSTALLED, FROM_LINKED, FROM_NETWORK };

typedef struct plan {
    const fy_manifest_model *model;
    const fy_fetch_options *o;
    fy_store *s;
    char id[64];
    double deadline;
    file_state *installed; /* each file in the installed model */
    ino_t *ino;            /* and its inode, when FILE_OK */
    int *from;
    int staging_fd;
    char *staging; /* its path (messages) */
} plan;

static void fmt_bytes(uint64_t n, char *out, size_t cap)
{
    snprintf(out, cap, "%" PRIu64 " bytes (%.1f MiB)", n, (double)n / 1048576.0);
}

/* Fails early when the downloads cannot fit, instead of after minutes of
 * download. What partial files already hold is not needed again. */
static int check_space(plan *p, fy_error *err)
{
    uint64_t need = 0;
    for (size_t i = 0; i < p->model->nfiles; i++) {
        const fy_manifest_file *f = &p->model->files[i];
        if (p->from[i] != FROM_NETWORK) continue;
        char part[300];
        struct stat st;
        snprintf(part, sizeof part, ".%s.%.12s.part", f->name, f->sha256);
        uint64_t have = 0;
        if (!fstatat(p->staging_fd, part, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode) &&
            (uint64_t)st.st_size <= f->size)
            have = (uint64_t)st.st_size;
        need += f->size - have;
    }
    struct statvfs vfs;
    uint64_t avail;
    if (p->o->test_free_bytes)
        avail = p->o->test_free_bytes;
    else if (!fstatvfs(p->staging_fd, &vfs))
        avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
    else
        return 0; /* cannot tell: let the writes report it */
    if (avail >= need) return 0;
    char a[64], b[64];
    fmt_bytes(need, a, sizeof a);
    fmt_bytes(avail, b, sizeof b);
    return fy_err(err, FY_EIO, "not enough space in %s: the download needs %s more, %s free",
                  p->s->dir, a, b);
}

static int manifest_index(const fy_manifest_model *m, const char *name)
{
    for (size_t i = 0; i < m->nfiles; i++)
        if (!strcmp(m->files[i].name, name)) return (int)i;
    return -1;
}

static int is_part_of(const fy_manifest_model *m, const char *name)
{
    char part[300];
    for (size_t i = 0; i < m->nfiles; i++) {
        snprintf(part, sizeof part, ".%s.%.12s.part", m->files[i].name, m->files[i].sha256);
        if (!strcmp(part, name)) return 1;
    }
    return 0;
}

/* Keeps what the staging directory holds of this model (complete good
 * files: FROM_STAGING; partial downloads, checked when opened) and removes
 * the rest (bad or stale files, others' leftovers; links are removed, never
 * followed). A non-regular file at a file's name is refused. */
static int scrub_staging(plan *p, fy_error *err)
{
    int fd = openat(p->staging_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return fy_err(err, FY_EIO, "cannot read directory %s: %s", p->staging, strerror(errno));
    }
    int rc = 0;
    struct dirent *e;
    while (!rc && (e = readdir(d))) {
        const char *x = e->d_name;
        int i = manifest_index(p->model, x);
        file_state st;
        if (!strcmp(x, ".") || !strcmp(x, "..") || is_part_of(p->model, x)) continue;
        if (i < 0) {
            unlinkat(p->staging_fd, x, 0); /* fails harmlessly on a directory */
            continue;
        }
        ino_t ino = 0;
        if ((rc = check_file(p->staging_fd, p->staging, &p->model->files[i], &st, &ino, err)))
            break;
        if (st == FILE_NOT_REGULAR)
            rc = fy_err(err, FY_EIO,
                        "%s/%s is not a regular file (a symbolic link?); refusing to use it "
                        "(remove it and run fetch again)",
                        p->staging, x);
        else if (st == FILE_OK && !(p->installed[i] == FILE_OK && ino == p->ino[i]))
            p->from[i] = FROM_STAGING;
        else if (st == FILE_OK && !p->o->force)
            p->from[i] = FROM_LINKED; /* an earlier run linked it */
        else                          /* bad, or --force and only the installed file again */
            unlinkat(p->staging_fd, x, 0);
    }
    closedir(d);
    return rc;
}

/* Hard links the installed model's good files into the staging directory;
 * a file that cannot be linked (or that changed since it was checked) is
 * downloaded instead. */
static void link_installed(plan *p)
{
    for (size_t i = 0; i < p->model->nfiles; i++) {
        if (p->from[i] != FROM_INSTALLED) continue;
        const char *name = p->model->files[i].name;
        struct stat st;
        if (!linkat(p->s->active_fd, name, p->staging_fd, name, 0) &&
            !fstatat(p->staging_fd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode) &&
            st.st_ino == p->ino[i]) {
            p->from[i] = FROM_LINKED;
            continue;
        }
        unlinkat(p->staging_fd, name, 0);
        p->from[i] = FROM_NETWORK;
    }
}

static int download_all(plan *p, fy_fetch_result *res, fy_error *err)
{
    size_t count = 0, index = 0;
    for (size_t i = 0; i < p->model->nfiles; i++) count += p->from[i] == FROM_NETWORK;
    if (!count) return 0;
    CURL *curl = NULL;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) || !(curl = curl_easy_init())) {
        curl_global_cleanup();
        return fy_err(err, FY_ENOMEM, "cannot initialise libcurl");
    }
    int rc = 0;
    for (size_t i = 0; i < p->model->nfiles && !rc; i++) {
        if (p->from[i] != FROM_NETWORK) continue;
        download d = {.f = &p->model->files[i],
                      .o = p->o,
                      .dir = p->s->dir,
                      .dirfd = p->staging_fd,
                      .fd = -1,
                      .curl = curl,
                      .index = index++,
                      .count = count,
                      .deadline = p->deadline};
        if (!(d.h = fy_sha256_new()))
            rc = fy_err(err, FY_ENOMEM, "out of memory");
        else if (!(rc = open_part(&d, p->staging, err)))
            rc = download_file(&d, err);
        res->received += d.received;
        struct stat st;
        /* An empty part is no progress worth keeping for a later run. */
        if (rc && d.fd >= 0 && !fstat(d.fd, &st) && st.st_size == 0)
            unlinkat(p->staging_fd, d.part, 0);
        if (d.fd >= 0) close(d.fd);
        fy_sha256_free(d.h);
        free(d.part_path);
    }
    curl_easy_cleanup(curl);
    curl_global_cleanup();
    return rc;
}

/* Checks every file of the installed model; says which are good. Returns
 * 0 with *good (all are), *differs (the first file in the way that is not
 * the manifest's, or -1). */
static int check_installed(plan *p, int *good, int *differs, fy_error *err)
{
    *good = p->s->active_fd >= 0;
    *differs = -1;
    for (size_t i = 0; i < p->model->nfiles; i++) {
        p->installed[i] = FILE_MISSING;
        if (p->s->active_fd >= 0) {
            int rc = check_file(p->s->active_fd, p->s->dir, &p->model->files[i], &p->installed[i],
                                &p->ino[i], err);
            if (rc) return rc;
        }
        if (p->installed[i] == FILE_OK && !p->o->force)
            note(p->o, "%s: already installed (size and sha256 match)", p->model->files[i].name);
        if (p->installed[i] != FILE_OK) *good = 0;
        if (p->installed[i] != FILE_OK && p->installed[i] != FILE_MISSING && *differs < 0)
            *differs = (int)i;
    }
    return 0;
}

/* A version a fetch built and was killed before switching to: switched to
 * now when its files are good. Returns 1 when it did. */
static int complete_candidate(plan *p, fy_fetch_result *res, fy_error *err, int *rc)
{
    int fd;
    char *name = fy_store_candidate(p->s, p->id, &fd), *path = NULL;
    int good = name != NULL;
    if (name && !(path = path_join(p->s->vdir, name, ""))) good = 0;
    for (size_t i = 0; good && i < p->model->nfiles; i++) {
        file_state st;
        good = !check_file(fd, path, &p->model->files[i], &st, NULL, NULL) && st == FILE_OK;
    }
    if (good) {
        note(p->o, "completing the install of %s %s that an interrupted fetch left in %s",
             p->model->name, p->model->version, path);
        if (!(*rc = fy_store_switch(p->s, name, err))) res->installed = p->model->nfiles;
    }
    if (fd >= 0) close(fd);
    free(name);
    free(path);
    return good;
}

static int install_model(plan *p, fy_fetch_result *res, fy_error *err)
{
    static const char *what[] = {"missing", "installed", "of the wrong size", "corrupt",
                                 "not a regular file (a symbolic link?)"};
    const fy_manifest_model *m = p->model;
    int good, differs, rc = check_installed(p, &good, &differs, err);
    if (rc) return rc;
    if (good && !p->o->force) {
        res->skipped = m->nfiles;
        if (!p->s->read_only) fy_store_cleanup(p->s);
        return 0;
    }
    if (p->s->read_only) return fy_err(err, FY_EIO, "%s", p->s->why);
    if (!p->o->force && complete_candidate(p, res, err, &rc)) {
        if (!rc) fy_store_cleanup(p->s);
        return rc;
    }
    /* An existing staging directory means this install was asked for
     * before (perhaps with --force) and interrupted: continue it. */
    if ((rc = fy_store_staging(p->s, p->id, 0, &p->staging_fd, err))) return rc;
    if (p->staging_fd < 0 && differs >= 0 && !p->o->force) {
        res->refused = 1;
        return fy_err(
            err, FY_EINVAL,
            "%s/%s exists but is %s (not the manifest's %s %s); use --force to replace it",
            p->s->dir, m->files[differs].name, what[p->installed[differs]], m->name, m->version);
    }
    if (p->staging_fd < 0 && (rc = fy_store_staging(p->s, p->id, 1, &p->staging_fd, err)))
        return rc;
    char name[128];
    snprintf(name, sizeof name, "%s.staging", p->id);
    if (!(p->staging = path_join(p->s->vdir, name, "")))
        return fy_err(err, FY_ENOMEM, "out of memory");
    for (size_t i = 0; i < m->nfiles; i++)
        p->from[i] = !p->o->force && p->installed[i] == FILE_OK ? FROM_INSTALLED : FROM_NETWORK;
    if ((rc = scrub_staging(p, err))) return rc;
    link_installed(p);
    for (size_t i = 0; i < m->nfiles; i++) res->skipped += p->from[i] == FROM_LINKED;
    if ((rc = check_space(p, err)) || (rc = download_all(p, res, err))) return rc;
    if (fsync(p->staging_fd))
        return fy_err(err, FY_EIO, "cannot fsync directory %s: %s", p->staging, strerror(errno));
    fy_store_fault(p->o, "staged");
    char *version = NULL;
    rc = fy_store_commit(p->s, p->id, &version, err);
    if (!rc) rc = fy_store_switch(p->s, version, err);
    free(version);
    if (rc) return rc;
    res->installed = m->nfiles - res->skipped;
    fy_store_cleanup(p->s);
    return 0;
}

int fy_fetch_model(const fy_manifest_model *model, const char *dir, const fy_fetch_options *o,
                   fy_fetch_result *res, fy_error *err)
{
    fy_fetch_options defaults;
    fy_fetch_result local;
    if (!o) fy_fetch_options_default(&defaults), o = &defaults;
    if (!res) res = &local;
    memset(res, 0, sizeof *res);
    for (size_t i = 0; i < model->nfiles; i++)
        if (!model->files[i].url)
            return fy_err(err, FY_EINVAL, "%s: the manifest has no base_url; use --mirror URL",
                          model->files[i].name);
    size_t n = model->nfiles;
    plan p = {
        .model = model, .o = o, .deadline = fy_now_s() + (double)o->max_time_s, .staging_fd = -1};
    fy_store s;
    p.s = &s;
    p.installed = calloc(n, sizeof *p.installed);
    p.ino = calloc(n, sizeof *p.ino);
    p.from = calloc(n, sizeof *p.from);
    int rc = fy_store_open(&s, dir, model, o, p.deadline, err);
    if (!rc && (!p.installed || !p.ino || !p.from || fy_store_id(model, p.id, sizeof p.id)))
        rc = fy_err(err, FY_ENOMEM, "out of memory");
    if (!rc) rc = install_model(&p, res, err);
    if (p.staging_fd >= 0) close(p.staging_fd);
    if (rc && p.id[0]) fy_store_drop_staging(&s, p.id);
    fy_store_close(&s);
    free(p.staging);
    free(p.installed);
    free(p.ino);
    free(p.from);
    return rc;
}
