/* fuzz_http.c - libFuzzer harness for the HTTP server's request parsing.
 *
 * LLVMFuzzerInitialize starts two real in-process servers (fy_server_start
 * on 127.0.0.1, port 0, small limits; the second with an API token and CORS)
 * in front of a real scheduler and translator. The model is a toy one
 * (float, d=8, one layer each side, a shortlist, output at most half the
 * input's length) written at start-up through src/model/synth.h for the
 * committed SentencePiece model tests/fuzz/models/tiny_bf.spm, so a
 * translation costs a few milliseconds even under ASan.
 *
 * Each input becomes one HTTP exchange over a loopback socket:
 *   byte 0 % 8 == 7: raw mode, the other bytes are sent verbatim (to the
 *     token server when bit 3 is set), then a pipelined GET /health with
 *     Connection: close, so the exchange ends as soon as the server has
 *     answered everything (else after 30 ms without a byte: the request
 *     was incomplete);
 *   otherwise structured mode: byte 1 the route, byte 2 the method, byte 3
 *     the Content-Type, byte 4 the server and credentials, byte 5 an extra
 *     header and flags (chunked body, Expect: 100-continue, a body past the
 *     limit, a wrong Content-Length); the rest is QUERY \1 HEADER \1 BODY.
 * Checks beyond "no crash": every answer is well-formed HTTP with a status
 * the API documents; every JSON body parses (so every string in it is valid
 * UTF-8 without NUL); error bodies have the dialect's shape and code; a 200
 * of a translation endpoint has the dialect's fields with one translation
 * per text; streams are well-formed server-sent events ending in "done" or
 * "error"; 405 has Allow, 503 Retry-After, a sane X-Request-Id is echoed;
 * after each input the server finishes every request (nothing stays live)
 * and every 32 inputs both servers still answer GET /health 200.
 * FUZZ_HTTP_VERBOSE=1 prints every exchange; FUZZ_HTTP_ALLOW_500=1 lets
 * 500 pass while such a finding is open, so a run can look for others.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <dirent.h>
#include <sys/stat.h>
#include <jansson.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "model/synth.h"
#include "server/internal.h" /* white box: the live-request count and the daemon */
#include "server/server.h"
#include "text/spm.h"
#include "translate/cache.h"
#include "translate/jobs.h"
#include "translate/models.h"
#include "translate/scheduler.h"
#include "translate/translator.h"
#include "web_assets.h"

#define TOKEN     "s3cret-T0ken"
#define FAIL(...) fail_at(__LINE__, __VA_ARGS__)

static fy_registry *registry;
static fy_scheduler *sched;
static fy_cache *cache;
static fy_jobs *jobs;         /* the servers' document jobs, in jobsdir */
static fy_server *servers[2]; /* [0] open, [1] token + CORS */
static char tmpdir[64], jobsdir[64];
static size_t body_max; /* the servers' body limit */

static void fail_at(int line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- the request being checked (for messages) ---------------------------- */

static char req_head[512];      /* the request line and headers (truncated) */
static char resp_head[1024];    /* the last response's status line and headers */
static const char *resp_body_p; /* the last response body (for messages) */
static size_t resp_body_n;

static void fail_at(int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz_http.c:%d: ", line);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n--- request:\n%s\n--- response:\n%s\n%.*s\n", req_head, resp_head,
            (int)(resp_body_n > 600 ? 600 : resp_body_n), resp_body_p ? resp_body_p : "");
    abort();
}

/* ---- set-up --------------------------------------------------------------- */

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "fuzz_http: %s: %s\n", what, msg);
    exit(1);
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    if (!in || !out) die(from, "cannot copy");
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n) die(to, "cannot write");
    fclose(in);
    if (fclose(out)) die(to, "cannot write");
}

/* A toy model for the SentencePiece model in FUZZ_SPM_DIR. */
static void write_model(void)
{
    char spm_path[128], model_path[128];
    fy_error err = {0};
    snprintf(tmpdir, sizeof tmpdir, "/tmp/fuzz_http.XXXXXX");
    if (!mkdtemp(tmpdir)) die("mkdtemp", strerror(errno));
    snprintf(spm_path, sizeof spm_path, "%s/vocab.zhen.spm", tmpdir);
    copy_file(FUZZ_SPM_DIR "/tiny_bf.spm", spm_path);
    fy_spm *spm = fy_spm_open(spm_path, &err);
    if (!spm) die("spm", err.msg);
    fy_synth_options o;
    fy_synth_preset("tiny", &o, &err);
    o.dim_emb = 8;
    o.dim_ffn = 16;
    o.enc_depth = 1;
    o.dec_depth = 1;
    o.heads = 2;
    o.src_vocab_size = o.trg_vocab_size = fy_spm_vocab_size(spm);
    o.int8 = 0; /* float: int8 layers need 64-wide inputs */
    fy_spm_free(spm);
    snprintf(model_path, sizeof model_path, "%s/model.zhen.bin", tmpdir);
    if (fy_synth_write_model(model_path, &o, &err)) die("synth", err.msg);
    /* A shortlist keeps the output layer at a few dozen ids: without it the
     * instrumented matrix products over the whole vocabulary take most of
     * each input's time. */
    snprintf(model_path, sizeof model_path, "%s/lex.zhen.s2t.bin", tmpdir);
    if (fy_synth_write_shortlist(model_path, o.src_vocab_size, o.trg_vocab_size, 8, 4,
                                 FY_SYNTH_LEX_UNIFORM, 1, &err))
        die("shortlist", err.msg);
}

static void remove_model(void)
{
    char p[160];
    snprintf(p, sizeof p, "%s/vocab.zhen.spm", tmpdir);
    unlink(p);
    snprintf(p, sizeof p, "%s/model.zhen.bin", tmpdir);
    unlink(p);
    snprintf(p, sizeof p, "%s/lex.zhen.s2t.bin", tmpdir);
    unlink(p);
    rmdir(tmpdir);
}

/* Statuses seen (structured and raw answers), printed at exit. */
static unsigned long seen[600];

/* Deletes the directory path and everything in it (a temporary store). */
static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char p[512];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        if (!lstat(p, &st) && S_ISDIR(st.st_mode))
            remove_tree(p);
        else
            unlink(p);
    }
    if (d) closedir(d);
    rmdir(path);
}

static void stop_all(void)
{
    fprintf(stderr, "fuzz_http: statuses seen:");
    for (int i = 0; i < 600; i++)
        if (seen[i]) fprintf(stderr, " %d x%lu", i, seen[i]);
    fprintf(stderr, "\n");
    for (int i = 0; i < 2; i++) fy_server_free(servers[i]);
    fy_jobs_free(jobs);
    remove_tree(jobsdir);
    fy_registry_free(registry);
    fy_scheduler_free(sched);
    fy_cache_free(cache);
}

static void health_check(void);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fy_error err = {0};
    write_model();
    cache = fy_cache_new(0, &err); /* off: a cache would hold memory across inputs */
    if (!cache) die("cache", err.msg);
    fy_scheduler_options so;
    fy_scheduler_options_default(&so);
    so.threads = 1;
    so.queue_max = 64;
    so.window_us = 0;
    so.cache = cache;
    sched = fy_scheduler_open(&so, &err);
    if (!sched) die("scheduler", err.msg);
    fy_registry_options ro;
    fy_registry_options_default(&ro);
    const char *dirs[1] = {tmpdir};
    ro.dirs = dirs;
    ro.ndirs = 1;
    ro.topt.max_length_factor = 0.5f; /* the random toy model never ends a sentence by itself */
    ro.sched = sched;
    registry = fy_registry_open(&ro, &err);
    if (!registry) die("registry", err.msg);
    /* Loaded now, with no memory budget it stays: the files can go. */
    fy_lease *l = fy_registry_acquire(registry, "zh", "en", &err);
    if (!l) die("model", err.msg);
    fy_lease_release(l);
    remove_model();
    /* Documents are jobs: a store of their own, removed at exit. */
    snprintf(jobsdir, sizeof jobsdir, "/tmp/fuzz_http_jobs.XXXXXX");
    if (!mkdtemp(jobsdir)) die("mkdtemp", strerror(errno));
    fy_jobs_options jo;
    fy_jobs_options_default(&jo);
    jo.store = fy_jobstore_dir_open(jobsdir, (uint64_t)64 << 20, &err);
    if (!jo.store) die("job store", err.msg);
    jobs = fy_jobs_open(registry, sched, &jo, &err);
    if (!jobs) die("jobs", err.msg);
    for (int i = 0; i < 2; i++) {
        fy_server_options o;
        fy_server_options_default(&o);
        o.port = 0;
        o.max_chars = 200;
        o.max_items = 4;
        o.timeout_ms = 3000; /* a 504 comes well within libFuzzer's -timeout=10 */
        o.http_threads = 2;
        o.max_connections = 64;
        o.conn_timeout_s = 5;
        o.version = "fuzz";
        o.quiet = 1;
        o.jobs = jobs;
        if (i == 1) {
            o.api_token = TOKEN;
            o.cors_origin = "https://example.com";
        }
        servers[i] = fy_server_start(&o, registry, sched, cache, &err);
        if (!servers[i]) die("server", err.msg);
        body_max = o.max_chars * 6 + o.max_items * 16 + 65536;
    }
    atexit(stop_all);
    health_check();
    return 0;
}

/* ---- the client ----------------------------------------------------------- */

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static void buf_add(buf *b, const void *p, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n + 1) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) abort();
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void buf_str(buf *b, const char *s)
{
    buf_add(b, s, strlen(s));
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int dial(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) FAIL("socket: %s", strerror(errno));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) && errno != EINPROGRESS)
        FAIL("connect: %s", strerror(errno));
    return fd;
}

/* Sends req and reads into *resp until the server closes the connection, or
 * (quiet_ms > 0) nothing came for quiet_ms, or limit_ms passed. Returns 1
 * when the server closed, 2 when it reset the connection, 0 otherwise. The
 * server may stop reading early (a 413, malformed HTTP): unsent bytes are
 * then dropped, and the reset that closing with unread data causes may cut
 * the answer short. */
static int exchange(int port, const char *req, size_t len, buf *resp, int quiet_ms, int limit_ms)
{
    int fd = dial(port);
    size_t sent = 0;
    int closed = 0;
    int64_t end = now_ms() + limit_ms, last = now_ms();
    resp->n = 0;
    for (;;) {
        int64_t t = now_ms();
        if (t >= end) break;
        int wait = (int)(end - t);
        if (quiet_ms > 0 && sent == len) {
            int q = (int)(last + quiet_ms - t);
            if (q <= 0) break;
            if (q < wait) wait = q;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN | (sent < len ? POLLOUT : 0)};
        if (poll(&p, 1, wait) < 0) continue;
        if (p.revents & POLLOUT) {
            ssize_t k = send(fd, req + sent, len - sent, MSG_NOSIGNAL);
            if (k > 0) sent += (size_t)k;
            if (k < 0 && errno != EAGAIN) sent = len; /* reset: read what came */
            last = now_ms();
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            char tmp[65536];
            ssize_t k = recv(fd, tmp, sizeof tmp, 0);
            if (k > 0) {
                buf_add(resp, tmp, (size_t)k);
                last = now_ms();
            } else if (k == 0 || errno != EAGAIN) {
                closed = k == 0 ? 1 : 2;
                break;
            }
        }
    }
    close(fd);
    return closed;
}

/* ---- responses ------------------------------------------------------------ */

typedef struct response {
    int status, chunked;
    const char *ctype; /* NULL if none */
    const char *hdrs;  /* the header block (NUL-terminated copy) */
    char *body;        /* decoded, NUL-terminated, malloc'd */
    size_t body_len;
} response;

static char hdr_copy[16384];

/* A header's value in the copied block (NUL-terminated in out), or NULL. */
static const char *header(const char *hdrs, const char *name, char *out, size_t cap)
{
    size_t nl = strlen(name);
    for (const char *l = hdrs; l && *l; l = strstr(l, "\r\n") ? strstr(l, "\r\n") + 2 : NULL) {
        if (strncasecmp(l, name, nl) || l[nl] != ':') continue;
        const char *v = l + nl + 1;
        while (*v == ' ') v++;
        const char *e = strstr(v, "\r\n");
        size_t n = e ? (size_t)(e - v) : strlen(v);
        if (n >= cap) n = cap - 1;
        memcpy(out, v, n);
        out[n] = '\0';
        return out;
    }
    return NULL;
}

/* Parses one response at p[0..n): 1 and *used, 0 if incomplete (or none),
 * -1 if malformed, -2 if cut short by the end of the connection. Interim
 * 100 Continue responses are skipped. */
static int parse_response(const char *p, size_t n, int head, int at_eof, response *r, size_t *used)
{
    size_t off = 0;
    for (;;) {
        const char *end = memmem(p + off, n - off, "\r\n\r\n", 4);
        if (!end) return n - off ? (at_eof ? -2 : 0) : 0;
        size_t hlen = (size_t)(end - (p + off));
        if (hlen < 12 || (memcmp(p + off, "HTTP/1.1 ", 9) && memcmp(p + off, "HTTP/1.0 ", 9)))
            return -1;
        int st = 0;
        for (int i = 9; i < 12; i++) {
            char c = p[off + (size_t)i];
            if (c < '0' || c > '9') return -1;
            st = st * 10 + (c - '0');
        }
        if (st == 100) {
            off += hlen + 4;
            continue;
        }
        size_t cp = hlen < sizeof hdr_copy - 1 ? hlen : sizeof hdr_copy - 1;
        memcpy(hdr_copy, p + off, cp);
        hdr_copy[cp] = '\0';
        snprintf(resp_head, sizeof resp_head, "%s", hdr_copy);
        r->status = st;
        r->hdrs = hdr_copy;
        static char ct[256], te[64], cl[64];
        r->ctype = header(hdr_copy, "Content-Type", ct, sizeof ct);
        r->chunked = header(hdr_copy, "Transfer-Encoding", te, sizeof te) && strstr(te, "chunked");
        const char *clv = header(hdr_copy, "Content-Length", cl, sizeof cl);
        size_t b = off + hlen + 4;
        buf body = {0};
        buf_add(&body, "", 0);
        if (head || st == 204 || st == 304) {
            /* no body */
        } else if (r->chunked) {
            for (;;) {
                const char *le = memmem(p + b, n - b, "\r\n", 2);
                if (!le) {
                    free(body.p);
                    return at_eof ? -2 : 0;
                }
                char *e;
                unsigned long k = strtoul(p + b, &e, 16);
                if (e == p + b) {
                    free(body.p);
                    return -1;
                }
                b = (size_t)(le - p) + 2;
                if (n - b < k + 2) {
                    free(body.p);
                    return at_eof ? -2 : 0;
                }
                buf_add(&body, p + b, k);
                b += k + 2;
                if (k == 0) break;
            }
        } else if (clv) {
            size_t k = strtoull(clv, NULL, 10);
            if (n - b < k) {
                free(body.p);
                return at_eof ? -2 : 0;
            }
            buf_add(&body, p + b, k);
            b += k;
        } else {
            if (!at_eof) {
                free(body.p);
                return 0;
            }
            buf_add(&body, p + b, n - b);
            b = n;
        }
        r->body = body.p;
        r->body_len = body.n;
        resp_body_p = r->body;
        resp_body_n = r->body_len;
        *used = b;
        return 1;
    }
}

static void response_free(response *r)
{
    free(r->body);
    r->body = NULL;
    resp_body_p = NULL;
    resp_body_n = 0;
}

/* ---- what the server must finish ------------------------------------------ */

static size_t live_requests(fy_server *s)
{
    pthread_mutex_lock(&s->lock);
    size_t n = s->nlive;
    pthread_mutex_unlock(&s->lock);
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return n + (di ? di->num_connections : 0);
}

/* Waits (up to 2 s) until both servers have no request or connection left:
 * nothing is stuck, and the memory of this input is freed before the next
 * one (libFuzzer's leak check compares mallocs and frees per input). */
static void wait_idle(void)
{
    int64_t end = now_ms() + 2000;
    for (;;) {
        size_t n = live_requests(servers[0]) + live_requests(servers[1]);
        if (!n) return;
        if (now_ms() > end)
            FAIL("%zu requests or connections still live 2 s after the exchange", n);
        usleep(200);
    }
}

static void health_check(void)
{
    static const char get[] = "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    for (int i = 0; i < 2; i++) {
        buf b = {0};
        int64_t t0 = now_ms();
        snprintf(req_head, sizeof req_head, "%s", get);
        exchange(fy_server_port(servers[i]), get, sizeof get - 1, &b, 0, 1000);
        response r = {0};
        size_t used;
        if (parse_response(b.p ? b.p : "", b.n, 0, 1, &r, &used) != 1 || r.status != 200 ||
            !strstr(r.body, "\"ok\""))
            FAIL("server %d: GET /health did not answer 200 ok (%lld ms)", i,
                 (long long)(now_ms() - t0));
        response_free(&r);
        free(b.p);
    }
}

/* ---- requests ------------------------------------------------------------- */

enum kind {
    K_TRANSLATE,
    K_STREAM,
    K_DETECT,
    K_DEEPL,
    K_DEEPLX,
    K_GOOGLE,
    K_IMME,
    K_KISS,
    K_LANGUAGES,
    K_HEALTH,
    K_READY,
    K_METRICS,
    K_VERSION,
    K_ASSET,
    K_UNKNOWN
};

static const struct target {
    const char *method, *path;
    enum kind kind;
} targets[] = {
    {"POST", "/translate", K_TRANSLATE},
    {"POST", "/translate/stream", K_STREAM},
    {"POST", "/detect", K_DETECT},
    {"POST", "/v2/translate", K_DEEPL},
    {"POST", "/deeplx", K_DEEPLX},
    {"POST", "/language/translate/v2", K_GOOGLE},
    {"POST", "/imme", K_IMME},
    {"POST", "/kiss", K_KISS},
    {"GET", "/languages", K_LANGUAGES},
    {"GET", "/health", K_HEALTH},
    {"GET", "/ready", K_READY},
    {"GET", "/metrics", K_METRICS},
    {"GET", "/version", K_VERSION},
    {"GET", "/", K_ASSET},
    {"GET", "/openapi.json", K_ASSET},
    {"GET", "/index.html", K_ASSET},
    {"GET", "/app.js", K_ASSET},
    {"GET", "/style.css", K_ASSET},
    {"GET", "/docs", K_ASSET},
    {"GET", "/docs/", K_ASSET},
    {"GET", "/docs.js", K_ASSET},
    {"GET", "/favicon.svg", K_ASSET},
    {"GET", "/nope", K_UNKNOWN},
    {"POST", "/translate/", K_UNKNOWN},
    {"POST", "//translate", K_UNKNOWN},
    {"GET", "/../../etc/passwd", K_UNKNOWN},
    {"GET", "/%2e%2e/%2e%2e/etc/passwd", K_UNKNOWN},
    {"POST", "/TRANSLATE", K_UNKNOWN},
    {"POST", "/v2/translate%00", K_UNKNOWN}, /* MHD keeps %00 as it is */
    {"GET", "/web_assets.c", K_UNKNOWN},
    {"POST", "/translate%2Fstream", K_STREAM}, /* but decodes %2F */
    {"GET", "*", K_UNKNOWN},
};
enum { NTARGETS = sizeof targets / sizeof *targets };

static const char *const methods[] = {"GET",    "POST",  "HEAD", "OPTIONS", "PUT",
                                      "DELETE", "PATCH", "get",  "FOO",     "CONNECT"};
static const char *const ctypes[] = {
    "application/json",
    "application/json; charset=utf-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=fzb",
    "multipart/form-data",
    "text/plain",
    NULL,
    "application/xml",
    "application/ld+json",
    "*/*",
    "APPLICATION/X-WWW-FORM-URLENCODED; charset=utf-8",
    "",
    "multipart/form-data; boundary=",
    "text/html",
};
enum { NCTYPES = sizeof ctypes / sizeof *ctypes };

/* Credentials (byte 4, low 4 bits), sent to the token server when bit 4 is set. */
static const char *const auths[] = {
    NULL,
    "Authorization: Bearer " TOKEN "\r\n",
    "Authorization: Bearer wrong\r\n",
    "Authorization: DeepL-Auth-Key " TOKEN "\r\n",
    "X-API-Token: " TOKEN "\r\n",
    "X-API-Key: nope\r\n",
    "?token=" TOKEN,
    "?key=" TOKEN,
    "?api_key=bad",
    "Authorization: Bearer \r\n",
    "Authorization: " TOKEN "\r\n",
    "Authorization: Token  " TOKEN "\r\n",
    "?auth_key=" TOKEN,
    "?token=",
};
enum { NAUTHS = sizeof auths / sizeof *auths };

/* The extra header (byte 5, low 4 bits) that carries the fuzzed value. */
static const char *const xheaders[] = {
    NULL,
    "X-Request-Id",
    "If-None-Match",
    "Origin",
    "Accept",
    "Cookie",
    "Authorization",
    "Content-Type",
    "X-API-Token",
    "Accept-Encoding",
    "Range",
    "X-Fuzz",
    "User-Agent",
    "Accept-Language",
    NULL /* If-None-Match: the asset's ETag */,
    NULL /* framing: a second Host, Content-Length or Transfer-Encoding */,
};
enum { NXHEADERS = sizeof xheaders / sizeof *xheaders };
enum { F_CHUNKED = 0x10, F_EXPECT = 0x20, F_BIG = 0x40, F_CL_LIE = 0x80 };

/* Splits the input at \1: query, header value, body. */
static void split3(const uint8_t *d, size_t n, const uint8_t *part[3], size_t len[3])
{
    for (int i = 0; i < 3; i++) {
        part[i] = d;
        const uint8_t *e = i < 2 ? memchr(d, 1, n) : NULL;
        len[i] = e ? (size_t)(e - d) : n;
        d += len[i] + (e ? 1 : 0);
        n -= len[i] + (e ? 1 : 0);
    }
}

/* Query bytes: anything that would end the request line is %-escaped. */
static void add_query(buf *b, const uint8_t *q, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (q[i] <= ' ' || q[i] == 0x7f || q[i] == '#') {
            char e[4];
            snprintf(e, sizeof e, "%%%02X", q[i]);
            buf_add(b, e, 3);
        } else {
            buf_add(b, &q[i], 1);
        }
    }
}

/* Header value bytes: CR, LF and NUL would end or cut the header. */
static void add_value(buf *b, const uint8_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf_add(b, v[i] == '\r' || v[i] == '\n' || !v[i] ? "_" : (const char *)&v[i], 1);
}

/* A header value that RFC 9112 forbids: a NUL, a CR not before an LF, or
 * another control byte but HTAB (a value with an LF is not judged: the LF
 * starts a line of its own). */
static int value_forbidden(const uint8_t *v, size_t n)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] == '\n') return 0;
        if (v[i] == '\r' && i + 1 < n && v[i + 1] == '\n') continue;
        bad |= (v[i] < 0x20 && v[i] != '\t') || v[i] == 0x7f;
    }
    return bad;
}

static int sane_id(const uint8_t *v, size_t n)
{
    if (!n || n >= 48) return 0;
    for (size_t i = 0; i < n; i++) {
        int c = v[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              c == '-' || c == '_' || c == '.' || c == ':'))
            return 0;
    }
    return 1;
}

/* ---- checks --------------------------------------------------------------- */

static int is_json_ct(const char *ct)
{
    return ct && !strncmp(ct, "application/json", 16);
}

/* The native API's code for each status, as docs/api.md lists them: kept apart from the
 * server's own table so a wrong name there is caught. */
static const char *native_code(int status)
{
    switch (status) {
    case 400:
        return "invalid_request";
    case 401:
        return "unauthorized";
    case 403:
        return "forbidden";
    case 404:
        return "not_found";
    case 405:
        return "method_not_allowed";
    case 409:
        return "conflict";
    case 411:
        return "length_required";
    case 413:
        return "payload_too_large";
    case 415:
        return "unsupported_media_type";
    case 501:
        return "not_implemented";
    case 503:
        return "unavailable";
    case 504:
        return "timeout";
    case 507:
        return "insufficient_storage";
    default:
        return "internal_error";
    }
}

static int shape_native(json_t *b, int status)
{
    json_t *e = json_object_get(b, "error");
    const char *code = json_string_value(json_object_get(e, "code"));
    return code && !strcmp(code, native_code(status)) &&
           json_is_string(json_object_get(e, "message"));
}

static int shape_libre(json_t *b)
{
    return json_is_string(json_object_get(b, "error"));
}

static int shape_deeplx(json_t *b, int status)
{
    return json_integer_value(json_object_get(b, "code")) == status &&
           json_is_string(json_object_get(b, "message"));
}

/* The error body of each dialect (docs/api.md, Errors and limits). */
static void check_error_shape(enum kind k, json_t *b, int status)
{
    int ok;
    switch (k) {
    case K_TRANSLATE: /* native, LibreTranslate when the body has q and no text, DeepLX
                         when it has source_lang or target_lang (JSON or form) */
        ok = shape_native(b, status) || shape_libre(b) ||
             (shape_deeplx(b, status) && json_object_size(b) == 2);
        break;
    case K_DETECT:
    case K_LANGUAGES:
        ok = shape_libre(b);
        break;
    case K_DEEPL:
        ok = json_is_string(json_object_get(b, "message")) && json_object_size(b) == 1;
        break;
    case K_DEEPLX:
        ok = shape_deeplx(b, status);
        break;
    case K_GOOGLE: {
        json_t *e = json_object_get(b, "error");
        json_t *l = json_object_get(e, "errors");
        ok = json_integer_value(json_object_get(e, "code")) == status &&
             json_is_string(json_object_get(e, "message")) &&
             json_is_string(json_object_get(e, "status")) && json_array_size(l) == 1 &&
             json_is_string(json_object_get(json_array_get(l, 0), "reason"));
        break;
    }
    default:
        ok = shape_native(b, status);
    }
    if (!ok) FAIL("error body of status %d does not have the dialect's shape", status);
}

/* Texts sent in field f of the JSON request body: -1 unknown (not JSON,
 * or a form), 0 a single text, n an array of n. */
static long sent_texts(json_t *in, const char *f)
{
    json_t *v = json_object_get(in, f);
    if (!in || !v) return -1;
    return json_is_array(v) ? (long)json_array_size(v) : 0;
}

static void check_count(long sent, json_t *got, const char *what)
{
    if (sent < 0) return;
    if (sent == 0 ? !json_is_string(got) : json_array_size(got) != (size_t)sent)
        FAIL("200 with %s that does not match the %ld texts sent", what, sent);
    for (size_t i = 0; json_is_array(got) && i < json_array_size(got); i++)
        if (!json_is_string(json_array_get(got, i))) FAIL("%s[%zu] is not a string", what, i);
}

/* The array of translation objects each with string member f. */
static void check_list(json_t *list, long sent, const char *f)
{
    if (!json_is_array(list) || !json_array_size(list)) FAIL("200 without a translations list");
    if (sent >= 0 && json_array_size(list) != (size_t)(sent ? sent : 1))
        FAIL("200 with %zu translations for %ld texts", json_array_size(list), sent);
    for (size_t i = 0; i < json_array_size(list); i++)
        if (!json_is_string(json_object_get(json_array_get(list, i), f)))
            FAIL("translation %zu has no string '%s'", i, f);
}

/* A 200 of each endpoint has its dialect's fields, one translation per text. */
static void check_ok(enum kind k, json_t *b, json_t *in)
{
    switch (k) {
    case K_TRANSLATE:
        /* A body with source_lang or target_lang is DeepLX's (a form too). */
        if (json_object_get(b, "code") && json_object_get(b, "method")) {
            if (json_integer_value(json_object_get(b, "code")) != 200 ||
                !json_is_string(json_object_get(b, "data")))
                FAIL("deeplx 200 on /translate without code 200 and data");
            break;
        }
        if (json_object_get(b, "translation"))
            check_count(sent_texts(in, "text"), json_object_get(b, "translation"), "translation");
        else
            check_count(sent_texts(in, "q"), json_object_get(b, "translatedText"),
                        "translatedText");
        if (!json_is_string(json_object_get(b, "translation")) &&
            !json_is_array(json_object_get(b, "translation")) &&
            !json_is_string(json_object_get(b, "translatedText")) &&
            !json_is_array(json_object_get(b, "translatedText")))
            FAIL("200 without translation");
        break;
    case K_DETECT: { /* up to three guesses, best first; none for text without letters */
        if (!json_is_array(b) || json_array_size(b) > 3) FAIL("detect: not an array of <= 3");
        for (size_t i = 0; i < json_array_size(b); i++) {
            json_t *g = json_array_get(b, i);
            const char *l = json_string_value(json_object_get(g, "language"));
            double c = json_number_value(json_object_get(g, "confidence"));
            if (!l || !*l || !json_is_number(json_object_get(g, "confidence")) || c < 0 || c > 100)
                FAIL("detect: a guess without language and a confidence in [0, 100]");
        }
        break;
    }
    case K_DEEPL:
        check_list(json_object_get(b, "translations"), sent_texts(in, "text"), "text");
        break;
    case K_DEEPLX:
        if (json_integer_value(json_object_get(b, "code")) != 200 ||
            !json_is_string(json_object_get(b, "data")))
            FAIL("deeplx 200 without code 200 and data");
        break;
    case K_GOOGLE:
        check_list(json_object_get(json_object_get(b, "data"), "translations"), sent_texts(in, "q"),
                   "translatedText");
        break;
    case K_IMME:
        check_list(json_object_get(b, "translations"), sent_texts(in, "text_list"), "text");
        break;
    case K_KISS:
        if (json_object_get(b, "translations"))
            check_list(json_object_get(b, "translations"), sent_texts(in, "texts"), "text");
        else if (!json_is_string(json_object_get(b, "text")))
            FAIL("kiss 200 without text");
        break;
    case K_LANGUAGES:
        if (!json_is_array(b) || !json_array_size(b)) FAIL("languages: not a list");
        break;
    case K_HEALTH:
        if (!json_string_value(json_object_get(b, "status")) ||
            strcmp(json_string_value(json_object_get(b, "status")), "ok"))
            FAIL("health: not ok");
        break;
    case K_READY:
    case K_VERSION:
        if (!json_is_object(b)) FAIL("not an object");
        break;
    default:
        break;
    }
}

/* Server-sent events: "sentence" events with indexes 0, 1, ... then one
 * "done" (or "error"), every data line JSON. */
static void check_stream(const char *body, size_t len)
{
    if (strlen(body) != len) FAIL("stream with a NUL byte");
    long next = 0;
    int ended = 0;
    const char *p = body;
    while (*p) {
        if (ended) FAIL("event after the end of the stream");
        const char *e = strstr(p, "\n\n");
        if (!e) FAIL("unterminated event");
        char ev[32];
        if (sscanf(p, "event: %31[a-z]\n", ev) != 1) FAIL("event without a name");
        const char *d = strstr(p, "\ndata: ");
        if (!d || d > e) FAIL("event without data");
        json_error_t je;
        json_t *j = json_loadb(d + 7, (size_t)(e - d - 7), 0, &je);
        if (!j) FAIL("event data is not JSON: %s", je.text);
        if (!strcmp(ev, "sentence")) {
            if (json_integer_value(json_object_get(j, "index")) != next++ ||
                !json_is_string(json_object_get(j, "translation")))
                FAIL("sentence event out of order or without translation");
        } else if (!strcmp(ev, "done")) {
            json_t *t = json_object_get(j, "translation");
            if (!json_is_string(t) && !json_is_array(t)) FAIL("done without translation");
            ended = 1;
        } else if (!strcmp(ev, "error")) {
            ended = 1;
        } else {
            FAIL("unknown event '%s'", ev);
        }
        json_decref(j);
        p = e + 2;
    }
    if (!ended) FAIL("stream ended without done or error");
}

/* FUZZ_HTTP_ALLOW_500=1 accepts 500 while a known finding is open, so a run
 * can look for others (docs/reliability.md, Fuzzing, findings). */
static int allow_500 = -1;

static int status_ok(int st, int raw)
{
    if (allow_500 < 0) allow_500 = getenv("FUZZ_HTTP_ALLOW_500") != NULL;
    if (st == 500 && allow_500) return 1;
    static const int api[] = {200, 204, 304, 400, 401, 403, 404, 405, 411, 413, 415, 501, 503, 504};
    for (size_t i = 0; i < sizeof api / sizeof *api; i++)
        if (st == api[i]) return 1;
    /* libmicrohttpd's own refusals of malformed HTTP (no handler involved):
     * too long a URI or header block, bad or unsupported HTTP. */
    return st == 414 || st == 431 || (raw && (st == 417 || st == 501 || st == 505));
}

/* Checks one structured exchange's response. */
static void check_response(const struct target *t, const char *method, response *r, json_t *in,
                           const char *etag, int id_sent, const uint8_t *id, size_t id_len)
{
    if (!status_ok(r->status, 0)) FAIL("unexpected status %d", r->status);
    if (r->status == 500) return; /* allowed while a finding is open */
    char v[256];
    int ours = header(r->hdrs, "X-Request-Id", v, sizeof v) != NULL;
    if (!ours) {
        /* Only libmicrohttpd answers without our headers: malformed HTTP. */
        if (r->status != 400 && r->status != 413 && r->status != 414 && r->status != 431)
            FAIL("status %d without X-Request-Id", r->status);
        return;
    }
    if (id_sent && sane_id(id, id_len) && (strlen(v) != id_len || memcmp(v, id, id_len)))
        FAIL("X-Request-Id not echoed");
    if (r->status == 405 && !header(r->hdrs, "Allow", v, sizeof v)) FAIL("405 without Allow");
    if (r->status == 503 && !header(r->hdrs, "Retry-After", v, sizeof v))
        FAIL("503 without Retry-After");
    if (r->status == 204 && strcmp(method, "OPTIONS")) FAIL("204 for %s", method);
    if (r->status == 304 && !etag) FAIL("304 without a matching If-None-Match");
    int head = !strcmp(method, "HEAD");
    if (r->status == 200 && t->kind == K_STREAM) {
        if (!r->ctype || strncmp(r->ctype, "text/event-stream", 17)) FAIL("stream content type");
        if (!head) check_stream(r->body, r->body_len);
        return;
    }
    if (head || r->status == 204 || r->status == 304) return;
    if (!is_json_ct(r->ctype)) {
        if (r->status != 200 || (t->kind != K_METRICS && t->kind != K_ASSET))
            FAIL("status %d with Content-Type %s", r->status, r->ctype ? r->ctype : "(none)");
        if (!r->body_len) FAIL("empty 200");
        return;
    }
    json_error_t je;
    json_t *b = json_loadb(r->body, r->body_len, 0, &je);
    if (!b) FAIL("JSON response does not parse: %s", je.text);
    if (r->status >= 400)
        check_error_shape(t->kind, b, r->status);
    else if (r->status == 200)
        check_ok(t->kind, b, in);
    json_decref(b);
}

/* The strict framing rules (src/server/strict.c) on one of our answers:
 * a forbidden byte in a value, a second Host or Content-Length is a 400;
 * Transfer-Encoding with a Content-Length a 400; two Transfer-Encoding
 * fields (chunked and the fuzzed one) a 400 or 501 (other codings); nothing
 * of such a request is ever served, and the connection closes. One
 * Transfer-Encoding, chunked, is served (its body decoded by
 * libmicrohttpd), and one with the fuzzed value alone is refused unless
 * that value reads as chunked. */
static void check_framing(response *r, int bad_value, int dup, int has_cl, int chunked)
{
    int st = r->status;
    int te_fields = (dup == 3) + (chunked != 0);
    if (bad_value && st != 400) FAIL("a forbidden byte in a header value got %d, not 400", st);
    if (dup == 1 && st != 400) FAIL("a second Host got %d, not 400", st);
    if (dup == 2 && has_cl && st != 400) FAIL("a second Content-Length got %d, not 400", st);
    if (te_fields == 2 && st != 400 && st != 501)
        FAIL("two Transfer-Encoding fields got %d, not 400/501", st);
    if (te_fields && has_cl && st != 400)
        FAIL("Transfer-Encoding with Content-Length got %d, not 400", st);
    char v[32];
    if ((st == 411 || st == 501) &&
        !(header(r->hdrs, "Connection", v, sizeof v) && !strcasecmp(v, "close")))
        FAIL("%d without Connection: close", st);
}

/* ---- one input ------------------------------------------------------------ */

static void raw_input(int server, const uint8_t *d, size_t n)
{
    static const char tail[] = "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    buf req = {0};
    buf_add(&req, d, n);
    buf_str(&req, tail);
    snprintf(req_head, sizeof req_head, "%.*s", (int)(n < 400 ? n : 400), (const char *)d);
    buf resp = {0};
    int port = fy_server_port(servers[server]);
    int closed = exchange(port, req.p, req.n, &resp, 30, 3000);
    if (getenv("FUZZ_HTTP_VERBOSE"))
        fprintf(stderr, "--- raw request:\n%s\n--- response (closed %d):\n%.*s\n", req_head, closed,
                (int)resp.n, resp.p ? resp.p : "");
    size_t off = 0, used;
    for (;;) {
        response r = {0};
        int rc = parse_response(resp.p ? resp.p + off : "", resp.n - off, 0, closed, &r, &used);
        if (rc == -1) FAIL("malformed response");
        /* Cut short: by a reset, or a HEAD answer's length taken as a body. */
        if (rc == -2 && closed != 2 && !memmem(d, n, "HEAD", 4)) FAIL("response cut short");
        if (rc <= 0) break;
        char v[64];
        int ours = header(r.hdrs, "X-Request-Id", v, sizeof v) != NULL;
        /* libmicrohttpd's own 500: a chunk-size line longer than its read
         * buffer can hold (it says "connection management and blocking"). */
        if (!status_ok(r.status, 1) && !(r.status == 500 && !ours))
            FAIL("unexpected status %d", r.status);
        seen[r.status]++;
        if (is_json_ct(r.ctype)) { /* HEAD answers: an empty body is fine */
            json_t *j = r.body_len ? json_loadb(r.body, r.body_len, 0, NULL) : NULL;
            if (r.body_len && !j) FAIL("JSON response does not parse");
            json_decref(j);
        }
        /* libmicrohttpd's own error answers close the connection (0.9.75
         * sends the header block of some twice: nothing after is parsed). */
        int last = !ours || (header(r.hdrs, "Connection", v, sizeof v) && !strcasecmp(v, "close"));
        response_free(&r);
        if (last) break;
        off += used;
    }
    free(resp.p);
    free(req.p);
}

static void structured_input(const uint8_t *d, size_t n)
{
    const struct target *t = &targets[d[1] % NTARGETS];
    const char *method = d[2] < 160 ? t->method : methods[d[2] % 10];
    const char *ct = ctypes[d[3] % NCTYPES];
    int tok = (d[4] & 0x10) != 0;
    const char *auth = tok ? auths[(d[4] & 15) % NAUTHS] : NULL;
    int xh = (d[5] & 15) % NXHEADERS, flags = d[5] & 0xf0;
    const uint8_t *part[3];
    size_t len[3];
    split3(d + 6, n - 6, part, len);
    const fy_web_asset *asset = xh == 14 ? fy_web_asset_find(t->path) : NULL;

    buf req = {0}, body = {0};
    buf_add(&body, part[2], len[2]);
    if (flags & F_BIG)
        while (body.n <= body_max)
            buf_add(&body, len[2] ? (const char *)part[2] : " ", len[2] ? len[2] : 1);
    buf_str(&req, method);
    buf_str(&req, " ");
    buf_str(&req, t->path);
    int q = 0;
    if (auth && auth[0] == '?') {
        buf_str(&req, auth);
        q = 1;
    }
    if (len[0]) {
        buf_str(&req, q ? "&" : "?");
        add_query(&req, part[0], len[0]);
    }
    buf_str(&req, " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
    if (ct) {
        buf_str(&req, "Content-Type: ");
        buf_str(&req, ct);
        buf_str(&req, "\r\n");
    }
    if (auth && auth[0] != '?') buf_str(&req, auth);
    /* X-Fuzz carries its value's bytes as they are (CR, LF, NUL: the
     * strict framing checks); slot 15 repeats a framing header. */
    static const char *const framing[] = {"Host", "Content-Length", "Transfer-Encoding"};
    int dup = xh == 15 && len[1] ? part[1][0] % 3 + 1 : 0; /* 1 + index in framing */
    if (xh == 11) {
        buf_str(&req, "X-Fuzz: ");
        buf_add(&req, part[1], len[1]);
        buf_str(&req, "\r\n");
    } else if (dup) {
        buf_str(&req, framing[dup - 1]);
        buf_str(&req, ": ");
        add_value(&req, part[1] + 1, len[1] - 1);
        buf_str(&req, "\r\n");
    } else if (xh && xheaders[xh]) {
        buf_str(&req, xheaders[xh]);
        buf_str(&req, ": ");
        add_value(&req, part[1], len[1]);
        buf_str(&req, "\r\n");
    }
    if (asset) {
        buf_str(&req, "If-None-Match: ");
        buf_str(&req, asset->etag);
        buf_str(&req, "\r\n");
    }
    if (flags & F_EXPECT) buf_str(&req, "Expect: 100-continue\r\n");
    char line[96];
    int has_cl = 0;
    if (flags & F_CHUNKED) {
        buf_str(&req, "Transfer-Encoding: chunked\r\n\r\n");
        /* Chunk sizes from the body's own bytes: 1..64. */
        for (size_t i = 0; i < body.n;) {
            size_t k = 1 + ((unsigned char)body.p[i] & 63);
            if (k > body.n - i) k = body.n - i;
            snprintf(line, sizeof line, "%zx\r\n", k);
            buf_str(&req, line);
            buf_add(&req, body.p + i, k);
            buf_str(&req, "\r\n");
            i += k;
        }
        buf_str(&req, "0\r\n\r\n");
    } else {
        /* The lie: a huge length (refused from the header) or a short one
         * (the rest is a second, garbage request the server must reject). */
        if (flags & F_CL_LIE)
            snprintf(line, sizeof line, "Content-Length: %s\r\n\r\n",
                     body.n & 1 || !body.n ? "10000000000" : "1");
        else
            snprintf(line, sizeof line, "Content-Length: %zu\r\n\r\n", body.n);
        has_cl = body.n || (flags & F_CL_LIE) || strcmp(method, "GET");
        buf_str(&req, has_cl ? line : "\r\n");
        buf_add(&req, body.p, body.n);
        /* A lone fuzzed Transfer-Encoding that reads as chunked is served:
         * its (empty) chunked body must follow, or no answer would come.
         * Refused, the request closes the connection and this is not read. */
        if (dup == 3 && !has_cl) buf_str(&req, "0\r\n\r\n");
    }
    snprintf(req_head, sizeof req_head, "%.*s", (int)(req.n < 500 ? req.n : 500), req.p);

    json_t *in = NULL;
    if (!(flags & (F_BIG | F_CL_LIE)) && xh != 7) in = json_loadb(body.p, body.n, 0, NULL);
    buf resp = {0};
    int closed = exchange(fy_server_port(servers[tok]), req.p, req.n, &resp, 0, 4500);
    response r = {0};
    size_t used = 0;
    int rc =
        parse_response(resp.p ? resp.p : "", resp.n, !strcmp(method, "HEAD"), closed, &r, &used);
    if (getenv("FUZZ_HTTP_VERBOSE"))
        fprintf(stderr, "--- request:\n%s\n--- response (%d):\n%.*s\n", req_head, rc, (int)resp.n,
                resp.p ? resp.p : "");
    if (rc == -1 || (rc == -2 && closed != 2)) FAIL("malformed or cut short response");
    /* The request is well-formed HTTP (only header values and the body are
     * fuzzed): it must get an answer, at worst libmicrohttpd's own 400. */
    if (rc == 0) FAIL(closed ? "connection closed without an answer" : "no answer within 4.5 s");
    if (rc == 1 && r.status < 600) seen[r.status]++;
    if (rc == 1)
        check_response(t, method, &r, in, asset ? asset->etag : NULL, xh == 1, part[1], len[1]);
    if (rc == 1 && header(r.hdrs, "X-Request-Id", line, sizeof line))
        check_framing(&r, xh == 11 && value_forbidden(part[1], len[1]), dup, has_cl,
                      (flags & F_CHUNKED) && !(xh == 11 && memchr(part[1], '\n', len[1])));
    response_free(&r);
    json_decref(in);
    free(resp.p);
    free(req.p);
    free(body.p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned runs;
    if (size < 1) return 0;
    if (data[0] % 8 == 7)
        raw_input((data[0] >> 3) & 1, data + 1, size - 1);
    else if (size >= 6)
        structured_input(data, size);
    else
        return 0;
    wait_idle();
    if (++runs % 32 == 0) health_check();
    return 0;
}
