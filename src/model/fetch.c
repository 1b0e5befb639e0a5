/* fetch.c - libcurl downloads with resume, streaming sha256 and atomic install.
 *
 * One file's life: open (or reuse) DIR/.NAME.<sha12>.part, hash what it
 * already holds, ask the server for the rest with "Range: bytes=N-" (a server
 * that answers 200 instead of 206 ignored the range: start over), append and
 * hash as bytes arrive, resume after dropped connections, then compare size
 * and digest and fsync. Only when every file of the model is good are the
 * parts renamed into place, and then the directory is fsync'd.
 */
#include "model/fetch.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "model/sha256.h"

/* What stopped a transfer from inside our callbacks (curl only sees "abort"). */
enum { STOP_NONE, STOP_DISK, STOP_TOO_BIG, STOP_BAD_RANGE, STOP_WRONG_LENGTH };

typedef struct download {
    const fy_manifest_file *f;
    const fy_fetch_options *o;
    const char *dir;
    char *part;             /* DIR/.NAME.<sha12>.part */
    int fd;                 /* the part file, open read/write */
    fy_sha256 *h;           /* digest of bytes [0, have) */
    uint64_t have;          /* bytes in the part file */
    uint64_t received;      /* bytes received this run */
    uint64_t attempt_bytes; /* bytes received by the current request (progress test) */
    int decided;            /* the current response's first body byte was seen */
    int stop;               /* STOP_* */
    int stop_errno;
    uint64_t server_size; /* length the server announced, 0 if unknown */
    CURL *curl;
    size_t index, count;
    struct timespec start;
} download;

void fy_fetch_options_default(fy_fetch_options *o)
{
    memset(o, 0, sizeof *o);
    o->connect_timeout_s = 20;
    o->stall_timeout_s = 30;
    o->stall_bytes_per_s = 1;
    o->retries = 5;
    o->retry_delay_ms = 1000;
}

static void note(const fy_fetch_options *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(const fy_fetch_options *o, const char *fmt, ...)
{
    if (!o->note) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    o->note(o->ctx, line);
}

static char *path_join(const char *dir, const char *a, const char *b)
{
    size_t n = strlen(dir) + strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s%s", dir, a, b);
    return p;
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

static void report(download *d, int finished)
{
    if (!d->o->progress) return;
    fy_fetch_progress p = {
        d->f->name, d->index, d->count, d->have, d->f->size, d->received, seconds_since(&d->start),
        finished};
    d->o->progress(d->o->ctx, &p);
}

/* ---- checking installed files ---- */

int fy_fetch_check_file(const fy_manifest_file *f, const char *dir, fy_file_state *state,
                        fy_error *err)
{
    char *path = path_join(dir, f->name, "");
    if (!path) return fy_err(err, FY_ENOMEM, "out of memory");
    struct stat st;
    int rc = 0;
    if (stat(path, &st)) {
        if (errno == ENOENT)
            *state = FY_FILE_MISSING;
        else
            rc = fy_err(err, FY_EIO, "%s: cannot stat: %s", path, strerror(errno));
    } else if ((uint64_t)st.st_size != f->size) {
        *state = FY_FILE_WRONG_SIZE;
    } else {
        char hex[65];
        rc = fy_sha256_file(path, hex, NULL, err);
        if (!rc) *state = strcmp(hex, f->sha256) ? FY_FILE_WRONG_HASH : FY_FILE_OK;
    }
    free(path);
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

static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    report(arg, 0);
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
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, d->o->stall_timeout_s);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, d->o->stall_bytes_per_s);
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
    errbuf[0] = '\0';
    return curl_easy_perform(c);
}

static int transient(CURLcode rc)
{
    return rc == CURLE_PARTIAL_FILE || rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR ||
           rc == CURLE_GOT_NOTHING || rc == CURLE_OPERATION_TIMEDOUT ||
           rc == CURLE_SSL_CONNECT_ERROR;
}

/* Turns a failed attempt into a message; returns 1 if worth resuming. */
static int explain(download *d, CURLcode rc, const char *errbuf, fy_error *err)
{
    const fy_manifest_file *f = d->f;
    const char *why = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    char host[256];
    url_host(f->url, host, sizeof host);
    long code = 0;
    curl_off_t connect_us = 0;
    curl_easy_getinfo(d->curl, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_getinfo(d->curl, CURLINFO_CONNECT_TIME_T, &connect_us);
    switch (d->stop) {
    case STOP_DISK:
        fy_err(err, FY_EIO, "%s: cannot write %s: %s", f->name, d->part, strerror(d->stop_errno));
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
    }
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
    if (rc == CURLE_OPERATION_TIMEDOUT) {
        fy_err(err, FY_ETIMEOUT,
               "%s: %s stopped sending data (%s) at %" PRIu64 " of %" PRIu64 " bytes", f->name,
               host, why, d->have, f->size);
        return 1;
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

/* Brings the part file to f->size bytes with the digest in d->h, resuming
 * as long as attempts make progress or retries remain. */
static int transfer(download *d, fy_error *err)
{
    char errbuf[CURL_ERROR_SIZE];
    int failures = 0;
    clock_gettime(CLOCK_MONOTONIC, &d->start);
    while (d->have < d->f->size) {
        CURLcode rc = perform(d, errbuf);
        long code = 0;
        curl_easy_getinfo(d->curl, CURLINFO_RESPONSE_CODE, &code);
        if (rc == CURLE_OK && d->have == d->f->size) break;
        if (rc == CURLE_HTTP_RETURNED_ERROR && code == 416 && d->have > 0) {
            /* Our part is no prefix of the server's file: start over. */
            note(d->o, "%s: the server refused to resume at %" PRIu64 " bytes; starting over",
                 d->f->name, d->have);
            if (ftruncate(d->fd, 0) || fy_sha256_reset(d->h))
                return fy_err(err, FY_EIO, "%s: cannot truncate %s: %s", d->f->name, d->part,
                              strerror(errno));
            d->have = 0;
            if (++failures > d->o->retries)
                return fy_err(err, FY_ENET, "%s: HTTP 416 (range not satisfiable) from %s",
                              d->f->name, d->f->url);
            continue;
        }
        fy_error e = {0}; /* err may be NULL, but the retry note wants the reason */
        int again = explain(d, rc, errbuf, &e);
        if (d->attempt_bytes > 0) failures = 0;
        if (!again || ++failures > d->o->retries) return fy_err(err, e.code, "%s", e.msg);
        note(d->o, "%s; resuming at %" PRIu64 " bytes (retry %d of %d)", e.msg, d->have, failures,
             d->o->retries);
        struct timespec pause = {d->o->retry_delay_ms / 1000,
                                 d->o->retry_delay_ms % 1000 * 1000000};
        nanosleep(&pause, NULL);
    }
    report(d, 1);
    return 0;
}

/* Opens d->part and hashes what it holds (a previous run's partial data). */
static int open_part(download *d, fy_error *err)
{
    char suffix[32];
    snprintf(suffix, sizeof suffix, ".%.12s.part", d->f->sha256);
    char dot_name[300];
    snprintf(dot_name, sizeof dot_name, ".%s", d->f->name);
    d->part = path_join(d->dir, dot_name, suffix);
    if (!d->part) return fy_err(err, FY_ENOMEM, "out of memory");
    d->fd = open(d->part, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (d->fd < 0)
        return fy_err(err, FY_EIO, "%s: cannot create %s: %s", d->f->name, d->part,
                      strerror(errno));
    /* Two fetches appending to one part would interleave garbage. */
    if (flock(d->fd, LOCK_EX | LOCK_NB))
        return fy_err(err, FY_EBUSY, "%s: another fetch is downloading it into %s", d->f->name,
                      d->dir);
    struct stat st;
    if (fstat(d->fd, &st))
        return fy_err(err, FY_EIO, "%s: cannot stat %s: %s", d->f->name, d->part, strerror(errno));
    d->have = (uint64_t)st.st_size;
    if (d->have > d->f->size) {
        if (ftruncate(d->fd, 0))
            return fy_err(err, FY_EIO, "%s: cannot truncate %s: %s", d->f->name, d->part,
                          strerror(errno));
        d->have = 0;
    }
    if (d->have > 0) {
        int rc = fy_sha256_update_fd(d->h, d->fd, d->have, d->part, err);
        if (rc) return rc;
        if (d->have == d->f->size)
            note(d->o, "%s: checking a complete previous download", d->f->name);
        else
            note(d->o, "%s: resuming a previous download at %" PRIu64 " of %" PRIu64 " bytes",
                 d->f->name, d->have, d->f->size);
    }
    return 0;
}

/* Downloads one file into its verified, fsync'd part file. On a digest
 * mismatch after resuming an old part, the old part may be the bad bit:
 * start over once before giving up. */
static int download_file(download *d, fy_error *err)
{
    for (int round = 0;; round++) {
        int resumed = d->have > 0;
        int rc = transfer(d, err);
        if (rc == FY_EHASH) unlink(d->part); /* the server's file is not ours */
        if (rc) return rc;
        char hex[65];
        fy_sha256_hex(d->h, hex);
        if (!strcmp(hex, d->f->sha256)) break;
        if (ftruncate(d->fd, 0) || fy_sha256_reset(d->h))
            return fy_err(err, FY_EIO, "%s: cannot truncate %s: %s", d->f->name, d->part,
                          strerror(errno));
        d->have = 0;
        if (!resumed || round > 0) {
            unlink(d->part);
            return fy_err(
                err, FY_EHASH,
                "%s: sha256 mismatch: got %.16s..., expected %.16s... (nothing installed)",
                d->f->name, hex, d->f->sha256);
        }
        note(d->o, "%s: sha256 mismatch after resuming; downloading again from the start",
             d->f->name);
    }
    if (fsync(d->fd))
        return fy_err(err, FY_EIO, "%s: cannot fsync %s: %s", d->f->name, d->part, strerror(errno));
    return 0;
}

/* ---- the model ---- */

/* mkdir -p for the model directory (its parents may not exist yet). */
static int make_dirs(const char *dir, fy_error *err)
{
    char *p = strdup(dir);
    if (!p) return fy_err(err, FY_ENOMEM, "out of memory");
    int rc = 0;
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0') continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, 0755) && errno != EEXIST) {
            rc = fy_err(err, FY_EIO, "cannot create directory %s: %s", p, strerror(errno));
            break;
        }
        *s = c;
        if (!c) break;
    }
    free(p);
    struct stat st;
    if (!rc && (stat(dir, &st) || !S_ISDIR(st.st_mode)))
        rc = fy_err(err, FY_EIO, "%s is not a directory", dir);
    return rc;
}

/* Fails early when the files cannot fit, instead of after minutes of download. */
static int check_space(const char *dir, uint64_t need, fy_error *err)
{
    struct statvfs vfs;
    if (statvfs(dir, &vfs)) return 0; /* cannot tell: let the writes report it */
    uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
    if (avail < need)
        return fy_err(err, FY_EIO, "not enough space in %s: need %.1f MiB, %.1f MiB free", dir,
                      (double)need / 1048576.0, (double)avail / 1048576.0);
    return 0;
}

/* Decides which files need downloading; refuses (FY_EINVAL) when a differing
 * file is in the way and force is off. */
static int plan(const fy_manifest_model *model, const char *dir, const fy_fetch_options *o,
                int *need, fy_fetch_result *res, fy_error *err)
{
    static const char *what[] = {"missing", "installed", "of the wrong size", "corrupt"};
    for (size_t i = 0; i < model->nfiles; i++) {
        if (!model->files[i].url)
            return fy_err(err, FY_EINVAL, "%s: the manifest has no base_url; use --mirror URL",
                          model->files[i].name);
        fy_file_state st;
        int rc = fy_fetch_check_file(&model->files[i], dir, &st, err);
        if (rc) return rc;
        need[i] = o->force || st != FY_FILE_OK;
        if (!o->force && st == FY_FILE_OK) {
            note(o, "%s: already installed (size and sha256 match)", model->files[i].name);
            res->skipped++;
        } else if (!o->force && st != FY_FILE_MISSING) {
            res->refused = 1;
            return fy_err(err, FY_EINVAL,
                          "%s/%s exists but is %s (not the manifest's %s %s); use --force to "
                          "replace it",
                          dir, model->files[i].name, what[st], model->name, model->version);
        }
    }
    return 0;
}

static int install(download *dl, size_t n, const char *dir, fy_fetch_result *res, fy_error *err)
{
    for (size_t i = 0; i < n; i++) {
        char *final = path_join(dir, dl[i].f->name, "");
        if (!final) return fy_err(err, FY_ENOMEM, "out of memory");
        int bad = rename(dl[i].part, final);
        free(final);
        if (bad)
            return fy_err(err, FY_EIO, "%s: cannot rename %s into place: %s", dl[i].f->name,
                          dl[i].part, strerror(errno));
        res->installed++;
    }
    /* The renames are durable only once the directory itself is synced. */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || fsync(dfd)) {
        int e = errno;
        if (dfd >= 0) close(dfd);
        return fy_err(err, FY_EIO, "cannot fsync directory %s: %s", dir, strerror(e));
    }
    close(dfd);
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
    struct stat st;
    int created = stat(dir, &st) != 0; /* removed again if it stays empty */
    int rc = make_dirs(dir, err);
    if (rc) return rc;
    int *need = calloc(model->nfiles, sizeof *need);
    download *dl = calloc(model->nfiles, sizeof *dl);
    CURL *curl = NULL;
    size_t n = 0;
    if (!need || !dl) {
        rc = fy_err(err, FY_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = plan(model, dir, o, need, res, err))) goto done;
    uint64_t bytes = 0;
    for (size_t i = 0; i < model->nfiles; i++) bytes += need[i] ? model->files[i].size : 0;
    if (bytes == 0) goto done;
    if ((rc = check_space(dir, bytes, err))) goto done;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) || !(curl = curl_easy_init())) {
        rc = fy_err(err, FY_ENOMEM, "cannot initialise libcurl");
        goto done;
    }
    size_t count = 0;
    for (size_t i = 0; i < model->nfiles; i++) count += need[i];
    for (size_t i = 0; i < model->nfiles; i++) {
        if (!need[i]) continue;
        download *d = &dl[n++];
        *d = (download){.f = &model->files[i],
                        .o = o,
                        .dir = dir,
                        .fd = -1,
                        .curl = curl,
                        .index = n - 1,
                        .count = count};
        if (!(d->h = fy_sha256_new())) {
            rc = fy_err(err, FY_ENOMEM, "out of memory");
            goto done;
        }
        if ((rc = open_part(d, err)) || (rc = download_file(d, err))) goto done;
        res->received += d->received;
        close(d->fd);
        d->fd = -1;
    }
    rc = install(dl, n, dir, res, err);
done:
    for (size_t i = 0; dl && i < n; i++) {
        struct stat st;
        /* An empty part is no progress worth keeping for a later run. */
        if (rc && dl[i].part && !stat(dl[i].part, &st) && st.st_size == 0) unlink(dl[i].part);
        if (dl[i].fd >= 0) close(dl[i].fd);
        fy_sha256_free(dl[i].h);
        free(dl[i].part);
    }
    if (curl) {
        curl_easy_cleanup(curl);
        curl_global_cleanup();
    }
    free(dl);
    free(need);
    if (rc && created) rmdir(dir); /* fails, as it should, when parts were kept */
    return rc;
}
