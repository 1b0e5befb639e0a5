/* server.c - libmicrohttpd glue: the daemon, routing, request bodies,
 * replies with the headers every response carries, the per-request log
 * line, and graceful shutdown.
 *
 * A request's life: first call (headers) -> framing checks (strict.c),
 * route, early refusals (404, 405, 413 by Content-Length, 503 while
 * draining; the connection then closes with a lingering close, linger.c);
 * body chunks -> appended; last call -> the route's handler,
 * which replies at once or submits a job and waits for it (request.c owns
 * the wait: the connection sleeps, the job's end wakes it, and MHD calls us
 * again to format the answer). MHD's completion notice frees the request
 * (and cancels its job, so a client that went away stops costing work).
 *
 * Graceful shutdown (fy_server_drain): no new connections, requests in
 * flight finish; at the end of the drain the rest are cut (request.c) and
 * answer with an error in their own protocol before the daemon stops.
 *
 * Connections are tracked apart from requests (conns.c): past
 * --max-connections a new one is refused at once, and one whose request has
 * not fully arrived within --read-timeout is closed.
 */
#include "server/internal.h"
#include "util/clock.h"
#include "util/list.h"

#include <arpa/inet.h>
#include <malloc.h>
#include <netdb.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

void fy_server_options_default(fy_server_options *o)
{
    memset(o, 0, sizeof *o);
    o->host = "127.0.0.1";
    o->port = 8989;
    o->max_chars = 5000;
    o->max_items = 128;
    o->timeout_ms = 30000;
    o->http_threads = 4;
    o->max_connections = 1024;
    o->max_per_ip = 512;
    o->conn_timeout_s = 15;
    o->read_timeout_s = 30;
    o->request_memory = (size_t)256 << 20;
    o->version = "";
    o->max_document_bytes = (size_t)20 << 20;
    o->max_document_chars = 500000;
}

/* ---- requests ------------------------------------------------------------ */

/* The first call for a request: everything decidable from the headers. */
static enum MHD_Result req_begin(req *r, const char *url, const char *method, const char *version)
{
    fy_server *s = r->srv;
    const route *path_rt;
    const dialect *path_d, *d;
    url = req_origin_form(url);
    r->method = method;
    r->rt = route_find(method, url, &path_rt, &path_d, &d);
    if (path_rt) {
        r->endpoint = path_rt->name;
        r->dialect = d ? d : path_d;
    }
    /* CORS: every route with --cors-origin, none with --cors-origin '', and
     * by default the routes whose dialect says so (LibreTranslate's). */
    int any = path_rt && path_rt->cors;
    r->cors = s->cors_off ? NULL : s->cors ? s->cors : any ? "*" : NULL;
    char msg[300];
    int bad = req_strict(r->conn, method, version, msg, sizeof msg);
    if (bad) {
        r->close = 1;
        return reply_error(r, bad, "%s", msg);
    }
    /* Draining: no new translations, but health and metrics still answer. */
    if (atomic_load(&s->draining) && (!r->rt || r->rt->auth))
        return reply_error(r, 503, "the server is shutting down");
    if (!strcmp(method, "OPTIONS")) return reply_options(r, path_rt);
    if (!path_rt) {
        const fy_web_asset *a =
            strcmp(method, "GET") && strcmp(method, "HEAD") ? NULL : fy_web_asset_find(url);
        if (a) {
            r->endpoint = "ui";
            return reply_asset(r, a);
        }
        return reply_error(r, 404, "no such endpoint: %s %s (see GET /openapi.json)", method, url);
    }
    if (!r->rt) {
        r->allow = route_allow(path_rt);
        return reply_error(r, 405, "method %s is not allowed on %s (allowed: %s)", method, url,
                           r->allow);
    }
    if (body_begin(r)) return REPLIED(r);
    r->phase = PH_BODY;
    return MHD_YES;
}

/* ---- URLs ---------------------------------------------------------------- */

static int hex_value(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* MHD_OPTION_UNESCAPE_CALLBACK for the path and query arguments: percent-
 * decoding, except that %00 stays as it is. MHD's own decoder turns it into
 * a NUL that ends the path early: /health%00.js was /health. */
static size_t url_unescape(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls, (void)c;
    char *w = s;
    for (const char *p = s; *p; p++) {
        int hi = *p == '%' ? hex_value((unsigned char)p[1]) : -1;
        int lo = hi >= 0 ? hex_value((unsigned char)p[2]) : -1;
        if (lo >= 0 && (hi | lo)) {
            *w++ = (char)(hi * 16 + lo);
            p += 2;
        } else {
            *w++ = *p;
        }
    }
    *w = '\0';
    return (size_t)(w - s);
}

static enum MHD_Result ahc(void *cls, struct MHD_Connection *conn, const char *url,
                           const char *method, const char *version, const char *upload_data,
                           size_t *upload_size, void **con_cls)
{
    fy_server *s = cls;
    req *r = *con_cls;
    if (!r) {
        if (conn_refused(conn)) return MHD_NO;
        r = req_new(s, conn);
        if (!r) return MHD_NO;
        *con_cls = r;
        enum MHD_Result ret = req_begin(r, url, method, version);
        if (r->phase != PH_BODY) { /* answered early */
            conn_set_receiving(s, r->cn, 0);
            linger_arm(r);
        }
        return ret;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (r->phase != PH_BODY) return MHD_YES; /* already answered: discard */
        return body_append(r, upload_data, n);
    }
    if (r->phase == PH_BODY) {
        r->phase = PH_HANDLE;
        conn_set_receiving(s, r->cn, 0);
        r->url = url;
        if (body_end(r)) return REPLIED(r);
        if (req_cut_reason(r)) return req_cut_reply(r); /* arrived whole after the drain */
        return r->rt->handler(r);
    }
    if (r->phase == PH_WAIT) return req_park(r);
    return MHD_YES;
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)conn;
    fy_server *s = cls;
    req *r = *con_cls;
    if (!r) return;
    *con_cls = NULL;
    double secs = (double)(fy_now_us() - r->start_us) / 1e6;
    int why = req_cut_reason(r);
    int status = r->status && why != CUT_GONE ? r->status : 499; /* 499: the client went away */
    int cut = conn_set_receiving(s, r->cn, 1); /* keep-alive: the next request's deadline */
    if (cut && !r->status) status = 408;       /* too slow: cut by the watcher */
    if (r->status == 200 && r->sse && why == CUT_STOP) status = 503; /* ended by an error event */
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && r->status == 200 && r->sse && !r->ev_end)
        status = 499;
    const char *dir = r->direction ? r->direction : "";
    metrics_request(s->metrics, r->endpoint, dir, status, secs, r->chars);
    if (!s->o.quiet)
        fprintf(stderr, "fanyi serve: id=%s endpoint=%s direction=%s status=%d chars=%zu ms=%.1f\n",
                r->id, r->endpoint, dir[0] ? dir : "-", status, r->chars, secs * 1000);
    req_free(r);
}

/* Freed request memory mostly stays in glibc's per-thread arenas, out of
 * the operating system's reach: a burst of large requests would leave the
 * process that much bigger for good. Once requests have released
 * TRIM_BYTES of their charge, or any once none is left in progress (the
 * end of a burst: up to TRIM_BYTES would stay otherwise), at most once a
 * second, malloc_trim hands the free pages of every arena back. */
#define TRIM_BYTES ((size_t)16 << 20)

static void mem_trim(fy_server *s)
{
    int64_t now = fy_now_ms();
    pthread_mutex_lock(&s->lock);
    int due = s->mem_freed >= TRIM_BYTES || (s->mem_freed && !s->mem_used);
    int trim = due && now - s->trimmed_ms >= 1000;
    if (trim) {
        s->mem_freed = 0;
        s->trimmed_ms = now;
    }
    pthread_mutex_unlock(&s->lock);
    if (trim) malloc_trim(0);
}

/* glibc raises its mmap and trim thresholds after each large free (a model
 * load frees tables of tens of MB), up to 32 and 64 MB; then request bodies
 * come from the arenas, and what is freed at the top of a thread's arena
 * stays resident, beyond malloc_trim's reach (measured: 15 MB after a
 * burst). Fixed thresholds keep large blocks in their own mappings and
 * let the arenas shrink. */
static void mem_policy(void)
{
    mallopt(M_MMAP_THRESHOLD, 256 << 10);
    mallopt(M_TRIM_THRESHOLD, 1 << 20);
}

static void *watcher_main(void *arg)
{
    fy_server *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        int stop = s->stop_watch;
        pthread_mutex_unlock(&s->lock);
        if (stop) return NULL;
        req_watch_gone(s);
        conns_check(s);
        mem_trim(s);
        usleep(20000);
    }
}

static void watcher_stop(fy_server *s)
{
    if (!s->watcher_started) return;
    pthread_mutex_lock(&s->lock);
    s->stop_watch = 1;
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->watcher, NULL);
    s->watcher_started = 0;
}

/* ---- lifecycle ----------------------------------------------------------- */

static int resolve(const char *host, int port, struct sockaddr_storage *ss, fy_error *err)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    int rc = getaddrinfo(host, ps, &hints, &res);
    if (rc || !res)
        return fy_err(err, FY_EIO, "cannot resolve host '%s': %s", host, gai_strerror(rc));
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    return 0;
}

static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static char *dup_or_null(const char *s)
{
    return s && *s ? strdup(s) : NULL;
}

/* Copies and checks the certificate and key of o (none: plain HTTP). */
static int tls_setup(fy_server *s, const fy_server_options *o, fy_error *err)
{
    int cert = o->tls_cert && *o->tls_cert, key = o->tls_key && *o->tls_key;
    if (!cert && !key) return 0;
    if (!cert || !key)
        return fy_err(err, FY_EINVAL,
                      "HTTPS needs both a certificate and its private key (%s given)",
                      cert ? "only the certificate" : "only the key");
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
        return fy_err(err, FY_EUNSUPPORTED, "this libmicrohttpd was built without TLS support");
    if (tls_check(o->tls_cert, o->tls_key, err)) return -1;
    s->tls_cert = strdup(o->tls_cert);
    s->tls_key = strdup(o->tls_key);
    if (!s->tls_cert || !s->tls_key) return fy_err(err, FY_ENOMEM, "server: out of memory");
    return 0;
}

fy_server *fy_server_start(const fy_server_options *o, fy_registry *reg, fy_scheduler *sched,
                           fy_cache *cache, fy_error *err)
{
    mem_policy();
    fy_server *s = calloc(1, sizeof *s);
    if (!s) goto nomem;
    s->o = *o;
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->conn_lock, NULL);
    s->reg = reg;
    s->sched = sched;
    s->cache = cache;
    s->started_s = (int64_t)time(NULL);
    s->host = strdup(o->host && *o->host ? o->host : "127.0.0.1");
    s->token = dup_or_null(o->api_token);
    s->cors = dup_or_null(o->cors_origin);
    s->cors_off = o->cors_origin && !*o->cors_origin;
    s->version = strdup(o->version ? o->version : "");
    s->metrics = metrics_new();
    s->linger = linger_new();
    if (!s->o.max_document_bytes) s->o.max_document_bytes = (size_t)20 << 20;
    if (!s->o.max_document_chars) s->o.max_document_chars = 500000;
    s->docs = docs_new();
    s->jobs = o->jobs;
    if (!s->host || !s->version || !s->metrics || !s->linger || !s->docs) goto nomem;
    if (tls_setup(s, o, err)) goto fail;
    if (o->api_token && *o->api_token && !s->token) goto nomem;
    if (o->cors_origin && *o->cors_origin && !s->cors) goto nomem;
    s->o.host = s->host;
    if (!s->o.max_chars) s->o.max_chars = 5000;
    if (!s->o.max_items) s->o.max_items = 128;
    if (s->o.http_threads <= 0) s->o.http_threads = 4;
    if (s->o.max_connections <= 0) s->o.max_connections = 1024;
    if (!s->o.request_memory) s->o.request_memory = (size_t)256 << 20;
    /* MHD's own limit sits above ours (it is split among the HTTP threads,
     * and a thread at its share stops accepting): conn_notify refuses. */
    unsigned mhd_limit = (unsigned)s->o.max_connections + 64u * (unsigned)s->o.http_threads;

    struct sockaddr_storage ss;
    if (resolve(s->host, o->port, &ss, err) < 0) goto fail;
    raise_fd_limit();
    /* poll(), not epoll: with epoll, MHD_quiesce_daemon (the drain) and a
     * pool thread between two event rounds both take the listening socket
     * out of that thread's epoll set, and the one that loses the race
     * aborts the process (libmicrohttpd 0.9.75: "Failed to remove listen
     * FD from epoll set", seen on a SIGTERM right after a request). With
     * poll() each thread rebuilds its set every round and quiescing only
     * tells it to leave the socket out. */
    unsigned flags =
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC;
    if (ss.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
    if (s->tls_cert) flags |= MHD_USE_TLS;
    struct MHD_OptionItem tls[] = {{MHD_OPTION_HTTPS_MEM_CERT, 0, s->tls_cert},
                                   {MHD_OPTION_HTTPS_MEM_KEY, 0, s->tls_key},
                                   {MHD_OPTION_END, 0, NULL}};
    s->d = MHD_start_daemon(
        flags, (uint16_t)o->port, NULL, NULL, ahc, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_NOTIFY_COMPLETED, completed, s, MHD_OPTION_THREAD_POOL_SIZE,
        (unsigned)s->o.http_threads, MHD_OPTION_NOTIFY_CONNECTION, conn_notify, s,
        MHD_OPTION_UNESCAPE_CALLBACK, url_unescape, NULL, MHD_OPTION_CONNECTION_LIMIT, mhd_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)o->max_per_ip, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)o->conn_timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)64 * 1024,
        MHD_OPTION_ARRAY, s->tls_cert ? tls : tls + 2, MHD_OPTION_END);
    if (!s->d) {
        fy_err(err, FY_EIO, "cannot listen on %s port %d (in use, or not an address here?)",
               s->host, o->port);
        goto fail;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : o->port;
    if (pthread_create(&s->watcher, NULL, watcher_main, s)) {
        fy_err(err, FY_ENOMEM, "server: cannot start a thread");
        goto fail;
    }
    s->watcher_started = 1;
    return s;
nomem:
    fy_err(err, FY_ENOMEM, "server: out of memory");
fail:
    fy_server_free(s);
    return NULL;
}

int fy_server_port(const fy_server *s)
{
    return s->port;
}

/* Waits until no request is in progress or the clock reaches until (ms). */
static void wait_idle(fy_server *s, int64_t until)
{
    for (;;) {
        pthread_mutex_lock(&s->lock);
        size_t busy = s->nlive;
        pthread_mutex_unlock(&s->lock);
        if (!busy || fy_now_ms() >= until) return;
        usleep(10000);
    }
}

/* The drain's last part, in which the requests it cut send their answers
 * (a 503, a stream's error event): a fifth of it, from 100 ms to 1 s. */
static int flush_ms(int timeout_ms)
{
    int f = timeout_ms / 5;
    return f < 100 ? 100 : f > 1000 ? 1000 : f;
}

int fy_server_drain(fy_server *s, int timeout_ms)
{
    if (!s || !s->d) return 0;
    atomic_store(&s->draining, 1);
    /* New connections are refused at once (shutdown stops the listening),
     * but the descriptor is closed only after MHD_stop_daemon: its threads
     * may still be polling it until they see the quiesce (libmicrohttpd's rule
     * for MHD_quiesce_daemon; closing it earlier is a race TSan reports). */
    MHD_socket fd = MHD_quiesce_daemon(s->d);
    if (fd != MHD_INVALID_SOCKET) shutdown(fd, SHUT_RDWR);
    int flush = flush_ms(timeout_ms);
    int64_t end = fy_now_ms() + (timeout_ms > flush ? timeout_ms : flush);
    wait_idle(s, end - flush);
    /* Whatever is left is cut: its work cancelled, its answer an error in
     * its protocol; none sleeps any more, which libmicrohttpd requires of
     * a daemon it stops. */
    int cut = req_cut_all(s);
    wait_idle(s, end);
    watcher_stop(s);
    MHD_stop_daemon(s->d);
    s->d = NULL;
    if (fd != MHD_INVALID_SOCKET) close(fd);
    return cut;
}

void fy_server_free(fy_server *s)
{
    if (!s) return;
    if (s->d) fy_server_drain(s, 0);
    watcher_stop(s);
    linger_free(s->linger); /* after MHD: its last closes hand sockets over */
    metrics_free(s->metrics);
    docs_free(s->docs);
    free(s->host);
    free(s->token);
    free(s->cors);
    free(s->version);
    free(s->tls_cert);
    if (s->tls_key) { /* the private key does not linger in freed memory */
        memset(s->tls_key, 0, strlen(s->tls_key));
        free(s->tls_key);
    }
    pthread_mutex_destroy(&s->conn_lock);
    pthread_mutex_destroy(&s->lock);
    free(s);
}
