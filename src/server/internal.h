/* internal.h - what the files of the server module share: the request
 * context, the dialects and their routes, replies, bodies, the wait state
 * and the translation task.
 * Not a public header. */
#ifndef FY_SERVER_INTERNAL_H
#define FY_SERVER_INTERNAL_H

#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "nn/backend.h"
#include "server/server.h"
#include "text/glossary.h"
#include "text/segment.h"
#include "translate/jobs.h"
#include "translate/glossary_store.h"
#include "translate/pipeline.h"
#include "util/buf.h"
#include "util/lang.h"
#include "web_assets.h"

/* ---- dialects ------------------------------------------------------------
 *
 * A dialect is one client API (fanyi's own, LibreTranslate, DeepL, Google,
 * an OpenAI-compatible one, a plug-in's). Its api_*.c file owns a
 * descriptor: its routes and their handlers, its error body, its language
 * codes, which routes answer any origin by default (CORS), and the status
 * of a missing token. dialects.c registers the descriptors with the core,
 * as an nginx module registers its handlers: the core finds a request's
 * route among them and leaves everything dialect-specific to the
 * descriptor. Adding a dialect is its file and one line in dialects.c. */

typedef struct dialect dialect;
typedef struct req req;
typedef enum MHD_Result (*handler_fn)(req *r);

/* A path ending in "/" "*" also matches everything under it (the route
 * "/v2/glossaries/" "*" takes /v2/glossaries and /v2/glossaries/ID/entries);
 * method "*" matches any. */
typedef struct route {
    const char *method, *path, *name; /* name: the metrics/log label */
    int auth;                         /* needs the API token when one is set */
    int cors; /* any origin may call it unless --cors-origin says otherwise */
    handler_fn handler;
    const dialect *as; /* answers in another dialect's shape; NULL: its own */
} route;

struct dialect {
    const char *name;
    const route *routes;
    size_t nroutes;
    /* The body of an error (status, message); NULL when out of memory. */
    json_t *(*error)(int status, const char *msg);
    /* A normalised tag as the dialect writes it (buf, cap bytes, may hold
     * it); NULL: the tag as it is. */
    const char *(*code)(const char *tag, char *buf, size_t cap);
    int missing_token; /* status when a token is needed and none came; 0: 401 */
};

extern const dialect dialect_ops, dialect_native, dialect_libre, dialect_deepl, dialect_deeplx,
    dialect_google, dialect_imme, dialect_kiss, dialect_hcfy, dialect_openai, dialect_documents,
    dialect_jobs, dialect_deepl_doc, dialect_glossary;

/* dialects.c: the registered dialects. The route of method + url (HEAD as
 * GET) and the dialect that answers it (*d); *path_route the first route of
 * the path whatever the method (NULL: no such path), *path_d its dialect. */
const route *route_find(const char *method, const char *url, const route **path_route,
                        const dialect **path_d, const dialect **d);
/* Does some dialect have method + path? */
int route_exists(const char *method, const char *path);
/* The Allow header of rt's path: the methods of its routes. */
const char *route_allow(const route *rt);

/* The languages of a request as its dialect named them (normalised tags,
 * "" for auto / the default target) and the fields they came from. */
typedef struct langs {
    char src[FY_LANG_MAX], tgt[FY_LANG_MAX];
    const char *sfield, *tfield;
} langs;

/* One open connection (MHD_OPTION_NOTIFY_CONNECTION). MHD's own timeout
 * only counts idle time, so a client sending a byte a second would hold a
 * connection forever: the watcher closes a connection whose request has not
 * fully arrived read_timeout_s after the connection opened or its previous
 * request ended. Guarded by the server's conn_lock. */
typedef struct peer {
    int fd;
    int64_t since_ms; /* opened, or the previous request ended */
    int receiving;    /* a request is (or may be) arriving */
    int cut;          /* the watcher shut it down */
    uint64_t linger;  /* > 0: answered before its request was read; bytes to
                       * read and drop before the close (linger.c) */
    struct peer *prev, *next;
} peer;

/* strict.c: the RFC 9112 checks libmicrohttpd does not make, on the first
 * call for a request (method and version as ahc got them). 0, or the status
 * to answer (400, 501) with a message in msg. */
int req_strict(struct MHD_Connection *conn, const char *method, const char *version, char *msg,
               size_t cap);
/* The path of an absolute-form target (http://host/path -> /path); other
 * targets unchanged. Borrowed from url. */
const char *req_origin_form(const char *url);

/* conns.c: connection tracking. MHD_OPTION_NOTIFY_CONNECTION's callback
 * (cls: the server): tracks every connection, refuses one past
 * --max-connections with a 503 at once. */
void conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                 enum MHD_ConnectionNotificationCode code);
/* Was conn refused by conn_notify (its request is never run)? */
int conn_refused(struct MHD_Connection *conn);
/* Marks whether cn (NULL harmless) is waiting for (part of) a request;
 * receiving restarts its read deadline. 1 if the watcher has cut it. */
int conn_set_receiving(fy_server *s, peer *cn, int receiving);
/* The watcher: shuts down connections whose request is later than
 * --read-timeout. */
void conns_check(fy_server *s);
/* r was answered before its body was read: its connection gets a
 * lingering close for the rest of the body. */
void linger_arm(req *r);

/* linger.c: lingering close. A socket answered early is kept open after
 * libmicrohttpd's close and read to its end, for at most LINGER_MS in all,
 * LINGER_QUIET_MS without data, LINGER_BYTES, and LINGER_MAX sockets at a
 * time (past that: closed at once, as before). */
enum { LINGER_MS = 10000, LINGER_QUIET_MS = 2000, LINGER_MAX = 512 };
#define LINGER_BYTES ((uint64_t)32 << 20)
typedef struct lingerer lingerer;
lingerer *linger_new(void);    /* NULL when out of memory or threads */
void linger_free(lingerer *l); /* closes what it still holds; NULL harmless */
/* Takes over a duplicate of fd (fd itself stays the caller's) and drains it
 * of at most bytes. 0, or -1 when it was not taken (full, no descriptor). */
int linger_add(lingerer *l, int fd, uint64_t bytes);
/* Sockets lingering now, and ever. */
void linger_counts(lingerer *l, size_t *open, uint64_t *total);

enum { PH_BODY, PH_HANDLE, PH_WAIT, PH_REPLIED };

/* Why a request is ended from outside (request.c). */
enum { CUT_NONE, CUT_GONE, CUT_STOP }; /* the client went away; the server is stopping */

/* A request's wait state (request.c is its only writer; r->lock guards it). */
typedef struct waitstate {
    int suspended;        /* the connection sleeps (MHD_suspend_connection) */
    int pending;          /* work is in flight (a job, a document's batch) */
    int done, status;     /* its end was reported and not yet taken by the owner */
    int cut;              /* CUT_*: the request is to end now */
    unsigned long events; /* reports so far: output, the end, a cut */
} waitstate;

struct req {
    fy_server *srv;
    struct MHD_Connection *conn;
    const route *rt;
    const char *endpoint;   /* label; a handler may refine it ("libre") */
    const char *allow;      /* Allow header of a 405 */
    int close;              /* its framing is not to be trusted: Connection: close */
    const dialect *dialect; /* the shape of its answers (NULL: fanyi's own) */
    char id[48];
    int64_t start_us;
    int phase, status;
    size_t chars;
    char *body;                /* request body, NUL-terminated */
    size_t len, cap, declared; /* declared: its Content-Length */
    int chunked;               /* the body comes chunked (body.c) */
    int refused;               /* a chunked body over a limit: its status, answered at its end */
    uint64_t dropped;          /* bytes of a refused body read and dropped */
    size_t charge;             /* bytes of the server's request memory it holds */
    json_t *in;                /* parsed body (object) */
    fy_request *q;             /* the translation */
    int beam;                  /* the beam the request asked (0: the server's default) */
    int alternatives;          /* alternatives it asked per text (0: none) */
    int array;                 /* the texts came as an array */
    int placeholders;          /* the dialect's texts carry plug-in placeholders ({0}, <b0></b0>) */
    fy_glossary *gl[FY_GSTORE_DICTS_MAX]; /* glossaries of the translation, one per direction
                                             (task_glossary_*; released with the request) */
    int ngl;
    int scores;            /* native "scores": each sentence's confidence */
    const char *direction; /* label for logs and metrics (borrowed from q), "" if none */
    /* The owner's continuation when the work it waits for is over
     * (req_park): status 0, or the work's error. */
    enum MHD_Result (*resume)(req *r, int status);
    enum MHD_Result (*finish)(req *r); /* the dialect's answer once the job is done (task.c) */
    void (*cancel)(req *r);            /* stops its work (default: cancels r->q) */
    pthread_mutex_t lock;              /* guards w, and the stream fields below */
    waitstate w;
    /* Server-sent events (POST /translate/stream). */
    int sse;
    size_t ev_count; /* sentence events so far */
    fy_buf ev;       /* events not yet sent start at ev_pos */
    size_t ev_pos;
    int ev_end;
    /* A dialect's own state (api_openai.c), freed with the request. */
    void *ctx;
    void (*ctx_free)(void *ctx);
    /* The per-sentence callback of a stream other than the native one. */
    void (*on_sentence)(void *user, size_t text, size_t sentence, const char *before,
                        size_t before_len, const char *rendered, size_t len);
    const char *cors;       /* Access-Control-Allow-Origin of the answer, NULL: none */
    int spans;              /* native "spans": where each sentence is (api_native.c) */
    size_t ev_byte, ev_u16; /* the stream's place in its text's source, for spans */
    size_t ev_text;
    peer *cn;           /* its connection; NULL if not tracked */
    const char *url;    /* the path (MHD's, valid while the request is) */
    const char *method; /* GET, POST... (MHD's, valid while the request is) */
    struct docreq *doc; /* a document's translation (api_document.c) */
    req *prev, *next;   /* the server's list of live requests */
};

struct fy_server {
    fy_server_options o;
    char *host, *token, *cors, *version; /* cors NULL: LibreTranslate's routes only ("*") */
    int cors_off;                        /* --cors-origin '': no CORS headers at all */
    fy_registry *reg;
    fy_scheduler *sched;
    fy_cache *cache;
    struct MHD_Daemon *d;
    int port;
    pthread_mutex_t lock; /* live list, counters */
    req *live;
    size_t nlive;
    atomic_int draining; /* read by HTTP threads without the lock */
    atomic_int stopping; /* the drain is over: requests are cut (request.c) */
    int stop_watch;
    pthread_t watcher;
    int watcher_started;
    uint64_t next_id;
    int64_t started_s;
    pthread_mutex_t conn_lock; /* conns; held while the watcher shuts one down */
    peer *conns;
    size_t nconns;
    uint64_t conns_refused, conns_timed_out; /* under conn_lock */
    lingerer *linger;
    /* Request memory (under lock): held by requests in progress, released
     * since the last malloc_trim, refused requests. */
    size_t mem_used, mem_freed;
    uint64_t mem_refused;
    int64_t trimmed_ms;
    atomic_ullong chars_translated; /* characters of requests translated (DeepL /v2/usage) */
    char *tls_cert, *tls_key;       /* PEM text; NULL: plain HTTP */
    struct metrics *metrics;
    struct docs *docs;    /* the document metrics */
    struct fy_jobs *jobs; /* the document jobs (o.jobs); NULL: documents answer 503 */
};

/* reply.c */
enum MHD_Result reply_json(req *r, int status, json_t *body); /* takes body */
enum MHD_Result reply_text(req *r, int status, const char *type, const char *text, size_t len);
/* A message that quotes the client (or was cut short) made valid UTF-8
 * for JSON, in place: bad bytes become '?'. */
void utf8_scrub(char *s);
/* The error body of r's dialect (fanyi's own when none); fmt is the message. */
enum MHD_Result reply_error(req *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Adds X-Request-Id, CORS and the like, queues, records the status. */
enum MHD_Result reply_queue(req *r, int status, struct MHD_Response *resp);
/* A 200 whose body reader produces as it goes (SSE, NDJSON), of content
 * type ctype, read block bytes at a time, with the headers that keep
 * caches and proxies from holding it back. */
enum MHD_Result reply_stream(req *r, const char *ctype, size_t block,
                             MHD_ContentReaderCallback reader);
/* For a stream reader, r->lock held: up to max of out's bytes past *pos
 * copied into buf (their count); else MHD_CONTENT_READER_END_WITH_ERROR if
 * a part was lost (out->oom) or failed is set, END_OF_STREAM once ended;
 * else 0: nothing to send yet. */
ssize_t stream_take(fy_buf *out, size_t *pos, int ended, int failed, char *buf, size_t max);
/* Query string argument or NULL. */
const char *req_arg(req *r, const char *key);
const char *req_header(req *r, const char *key);

/* ---- body.c: request bodies --------------------------------------------- */

/* n bytes for people: "512 bytes", "95.1 KiB", "20.1 MiB" (in buf, cap
 * bytes; returns buf). size_over: the same for a size over limit, with as
 * many decimals as it takes to read as more (20 MiB + 1 byte is not "20.0"). */
const char *size_text(uint64_t n, char *buf, size_t cap);
const char *size_over(uint64_t n, uint64_t limit, char *buf, size_t cap);
/* The bytes a body of route rt may have. */
size_t body_route_limit(const fy_server *s, const route *rt);
/* The first call (headers): a Content-Length over the route's limit is a
 * 413, and the whole cost of a body within it is reserved (503 when the
 * request memory has no room); a chunked body is taken as it comes. 0, or
 * -1 after the reply. */
int body_begin(req *r);
/* A piece of the body. MHD_NO cuts the connection: more than the declared
 * length (a bug), out of memory, a refused chunked body going on past
 * LINGER_BYTES. */
enum MHD_Result body_append(req *r, const char *data, size_t n);
/* The last call: 0, or -1 after the 413/503 of a chunked body refused
 * while it arrived. */
int body_end(req *r);
/* The request body as a JSON object (JSON, or form fields: repeated keys
 * become arrays). NULL after a 400/415 reply. Borrowed (r->in). */
json_t *req_body(req *r);
/* The same without replying: NULL with *status and a message in msg. */
json_t *req_body_parse(req *r, int *status, char *msg, size_t cap);

/* ---- request.c: a request's life and its wait state ---------------------
 *
 * A request may wait for work done on other threads: its translation job,
 * a document's batch, a stream's next sentence. While it waits, its
 * connection is suspended. request.c is the only code that suspends,
 * resumes and ends that wait; everyone else reports:
 *   producers (scheduler threads)    req_notify: output appended;
 *                                    req_work_done: the work is over
 *   the watcher, the shutdown        req_cut: the client went away, the
 *                                    server is stopping
 *   the owner (the connection's      req_work_begin before submitting work;
 *   HTTP thread)                     req_park (one answer) or req_look +
 *                                    req_sleep (a stream's reader)
 * Only the owner acts on a cut: it stops the work (req_cancel) and answers
 * in its own protocol (a 503 in the dialect's shape, a stream's error
 * event), or closes for a client that is gone. A cut request never sleeps
 * again, and every sleeping one is resumed by the cut, so at shutdown no
 * connection is suspended when libmicrohttpd stops. */

/* A new request on conn, in the server's live list; NULL when out of memory. */
req *req_new(fy_server *s, struct MHD_Connection *conn);
/* Takes r out of the live list, returns its request memory, cancels its
 * work and frees it (MHD's completion notice: no callback is left). */
void req_free(req *r);
/* Owner: work is about to be submitted (a job, a document's next batch);
 * its end is reported by req_work_done, possibly before the submit returns. */
void req_work_begin(req *r);
/* Producer (r->lock not held): the work is over with status (0 or an
 * FY_E* code); wakes the connection. */
void req_work_done(req *r, int status);
/* Producer, r->lock held: a stream's output grew; wakes the connection. */
void req_notify(req *r);
/* The watcher or the shutdown (r->lock not held): r is to end now (CUT_GONE,
 * CUT_STOP); wakes the connection so that its owner acts. */
void req_cut(req *r, int why);
/* The shutdown: marks the server stopping and cuts every live request.
 * Returns how many had work in flight. */
int req_cut_all(fy_server *s);
/* The watcher: cuts the sleeping requests whose client has gone. */
void req_watch_gone(fy_server *s);
/* CUT_* of r (any thread; takes r->lock). A request that arrives while the
 * server is stopping counts as cut. */
int req_cut_reason(req *r);
/* Owner: stops r's work (r->cancel, else its job r->q); no work callback
 * runs once this returns. r->lock not held. */
void req_cancel(req *r);
/* Owner of a request with one answer (r->lock not held), after submitting
 * work or when libmicrohttpd calls again after a resume: sleeps while the
 * work is in flight (MHD_YES); when it is over, r->resume(r, status); when
 * r is cut, cancels and answers 503 (or MHD_NO for a client gone). */
enum MHD_Result req_park(req *r);
/* Owner: the 503 of a request cut by the shutdown, in r's dialect (or
 * MHD_NO when its client is gone); after req_cancel. */
enum MHD_Result req_cut_reply(req *r);
/* What a stream's reader finds, r->lock held: WAIT_DONE (the end of the
 * work, taken: *status), WAIT_CUT (*status: CUT_*) or WAIT_PENDING; *events
 * (may be NULL): the reports so far, for req_sleep. */
enum { WAIT_PENDING, WAIT_DONE, WAIT_CUT };
int req_look(req *r, int *status, unsigned long *events);
/* A stream's reader with nothing to send, r->lock held: when nothing was
 * reported since req_look gave events, the connection sleeps until the
 * next report and this returns 0 with r->lock released (the reader returns
 * 0); else -1 with r->lock still held (the reader looks again). */
int req_sleep(req *r, unsigned long events);
/* Is r's client gone (r->lock held)? A stream then ends without an end. */
int req_gone(const req *r);

/* auth.c: the body of an API request after authentication: the token
 * from a header or the query string is checked first, then the body is
 * parsed (and may carry api_key). NULL after a 400/401/403/415 reply. */
json_t *api_body(req *r);
/* The same check for a request whose parameters are not in a body (GET):
 * 0, or -1 after the 401/403 reply. */
int api_auth(req *r);
/* Constant-time comparison of two NUL-terminated strings. */
int auth_equal(const char *a, const char *b);
/* Authentication for bodies that are not JSON or plain forms (uploads):
 * the token from a header or the query string, else body_token (may be
 * NULL). 0, or -1 after a 401/403 reply. */
int auth_token(req *r, const char *body_token);

/* task.c */
/* Optional string field: *out = value or def; -1 after a 400 reply. */
int field_string(req *r, json_t *o, const char *field, const char *def, const char **out);
/* Optional boolean field. */
int field_bool(req *r, json_t *o, const char *field, int def, int *out);
/* Optional whole-number field in [min, max] (a JSON integer, or digits in
 * a form body): *out = value or def; -1 after a 400 naming the range. */
int field_int(req *r, json_t *o, const char *field, long def, long min, long max, long *out);
/* Normalises the language pair (src NULL/""/"auto": detect; tgt NULL or
 * "": required, or the default) into *out; -1 after a 400 that names the
 * field: a code that is no language, a missing target, or a pair no route
 * serves (listing the pairs there are). */
int task_langs(req *r, const char *sfield, const char *src, const char *tfield, const char *tgt,
               int tgt_required, langs *out);
/* The code of a tag in r's dialect (DeepL upper case, Google zh-CN/zh-TW);
 * buf (cap bytes) may hold it. */
const char *task_code(req *r, const char *tag, char *buf, size_t cap);
/* Texts from field (a string, or an array of strings when arrays are
 * allowed) into the request r->q in languages lg; enforces the limits. -1
 * after a 400/413 reply (a missing field is a 400). mode: TEXT_HTML (the
 * texts are HTML; 1, so a boolean "html" may be passed), TEXT_RAW (each
 * text is one sentence, never split; see fy_request_options.raw). */
enum { TEXT_HTML = 1, TEXT_RAW = 2 };
int task_texts(req *r, json_t *o, const char *field, int allow_array, int mode, const langs *lg);
/* The query string as a JSON object of strings (a repeated key, or one
 * named "key[]", becomes an array, as in form bodies). New reference; NULL
 * when out of memory or a value is not UTF-8 text (*bad: its key, borrowed;
 * "" when a key is not UTF-8 text). */
json_t *req_query(req *r, const char **bad);
/* Texts in the request, and text i's source language (given or detected). */
size_t task_count(req *r);
const char *task_lang(req *r, size_t i);
/* MHD_YES when a response is queued (handlers return this after a reply). */
#define REPLIED(r) ((r)->phase == PH_REPLIED ? MHD_YES : MHD_NO)
/* Submits r->q; finish runs in an HTTP thread when all is translated. */
enum MHD_Result task_submit(req *r, enum MHD_Result (*finish)(req *r));
/* The translation of text i (malloc'd), or NULL on allocation failure. */
char *task_join(req *r, size_t i);
/* A JSON array of item(r, i, translation of text i) for every text (item
 * returns a new value, NULL on error). NULL on error. */
json_t *task_each(req *r, json_t *(*item)(req *r, size_t i, const char *translation));
/* Field "format": "text" or "html" (def when absent) into *html; -1 after a 400. */
int field_format(req *r, json_t *o, const char *def, int *html);
/* Builds a JSON string or array of the joined translations. NULL on error. */
json_t *task_join_json(req *r);
/* The texts' alternatives (fy_request_text_alternatives, at most
 * r->alternatives each; set r->beam and r->alternatives before task_texts):
 * one JSON array of strings, or with an array of texts an array of them.
 * NULL on error. */
json_t *task_alternatives_json(req *r);
/* Unicode characters in valid UTF-8. */
size_t srv_utf8_chars(const char *s, size_t len);
/* Glossaries for the translation, before task_texts: stored glossary id
 * (its dictionary for lg's pair; for a detected source, every dictionary
 * into the target), or the inline entries of field (a JSON object of
 * source -> target terms, "" keeping the term as is; or a TSV string).
 * field names the field in messages. -1 after a 400 (or 503: no store). */
int task_glossary_id(req *r, const char *field, const char *id, const langs *lg);
int task_glossary_inline(req *r, const char *field, json_t *entries, const langs *lg);
/* Adds compiled glossary g to r's (taking the reference). */
int task_glossary_take(req *r, fy_glossary *g);
/* The confidence of text i's sentences: a JSON array of {"score", "margin"}
 * (null where unknown). NULL when out of memory. */
json_t *task_scores_json(req *r, size_t i);
json_t *confidence_json(fy_confidence c);

/* api_glossary.c: the native glossary routes. The body limit of a glossary
 * route (glossaries are larger than texts), 0 for any other route. */
size_t glossary_body_limit(const fy_server *s, const route *rt);
/* A stored glossary as the native API writes it. */
json_t *glossary_meta_json(const fy_glossary_meta *m);
/* Reads entries of a glossary from a JSON value (object of terms, or
 * text in format FY_GLOSSARY_TSV/CSV) into g; -1 after a 400 naming field. */
int glossary_entries(req *r, fy_glossary *g, const char *field, json_t *v, int format);
/* The answer to a store error (404, 400, 413, 503, 500) in r's dialect. */
enum MHD_Result glossary_store_error(req *r, const fy_error *err);
/* api_deepl_glossary.c: DeepL's glossary routes (v2 and v3). */
enum MHD_Result api_deepl_glossaries_v2(req *r);
enum MHD_Result api_deepl_glossaries_v3(req *r);
enum MHD_Result api_deepl_glossary_pairs(req *r);
/* glossary_id / glossary_ids of a /v2/translate body (in) for lg (which
 * needs source_lang, as DeepL says); 0, or -1 after a 400. */
int deepl_translate_glossaries(req *r, json_t *in, const langs *lg);

/* api_deepl.c: DeepL's preserve_formatting=1 for one text: the end and the
 * start of translation (malloc'd, NUL-terminated; rewritten in place) follow
 * source: a final . ! ? (or 。！？) the source does not end with is dropped,
 * and a first Latin letter takes the case of the source's first letter. */
void deepl_preserve_formatting(const char *source, char *translation);

/* tls.c: 0 when cert and key (PEM text) make a usable TLS credential,
 * else FY_EINVAL with GnuTLS's reason. */
int tls_check(const char *cert, const char *key, fy_error *err);

/* SSE: the per-sentence callback (api_native.c). */
void sse_sentence(void *user, size_t text, size_t sentence, const char *before, size_t before_len,
                  const char *rendered, size_t len);

/* What the dialects share beyond their descriptors. */
/* api_native.c: fanyi's error body {"error": {"code", "message"}}, and the
 * code it names a status with ("invalid_request", "unavailable"...). */
json_t *native_error(int status, const char *msg);
const char *http_code_name(int status);
/* api_libre.c: POST /translate with LibreTranslate's body (api_native.c
 * decided by the body); in: its body. */
enum MHD_Result api_libre(req *r, json_t *in);
/* api_deeplx.c: POST /translate with a DeepLX body; in: its body. */
enum MHD_Result api_deeplx_body(req *r, json_t *in);
/* api_deepl.c: DeepL's codes, upper case (ZH, EN-US). */
const char *deepl_code(const char *tag, char *buf, size_t cap);
/* api_document.c: the body limit of a document route (--max-document-bytes
 * plus room for the form), 0 for any other route. */
size_t doc_body_limit(const fy_server *s, const route *rt);
/* Frees r's document state (a job it waits for is unwatched, and deleted
 * when unfinished: nobody can ask for it any more) and counts it. */
void doc_req_free(req *r);

/* ---- what the document endpoints share (api_document.c) -----------------
 * The views that answer when a document is translated (/translate_file,
 * /translate/document), the jobs API (api_jobs.c) and DeepL's
 * (api_deepl_document.c) all submit document jobs (translate/jobs.h). */

/* An upload: the file and every other form field (strings, in fields). */
typedef struct upload {
    fy_buf file;
    int has_file;
    char filename[256], ctype[128];
    json_t *fields; /* field name -> string (the last of a repeated one) */
} upload;
/* Reads r's upload: multipart/form-data (the part `file`, whose file name
 * is the file's unless a `filename` field says otherwise), or with
 * allow_raw the raw body as the file; query arguments fill the fields the
 * form lacks. -1 after the reply (a 400 naming what is missing or wrong). */
int upload_read(req *r, upload *u, int allow_raw);
void upload_free(upload *u);
/* Field key of u, or NULL when absent (borrowed). */
const char *upload_field(const upload *u, const char *key);
/* The HTTP status of a document error (FY_E* code): 415, 413, 400, 404,
 * 503, 504, 507, 500. */
int doc_status(int code);
/* Submits u as a document job (spec's filename and content type from u);
 * watch may be NULL. -1 after the error reply in r's dialect (with the
 * server's limits named in a 413). Requires r->srv->jobs. */
int doc_submit(req *r, const upload *u, fy_job_spec *spec, const fy_jobs_watch *watch,
               fy_job_info *info);
/* want (may be NULL or ""): the output format asked; the translated file is
 * always in the upload's own format. -1 after a 400 naming both when want
 * is another format (DeepL's docx -> pdf), else 0. */
int doc_output_format(req *r, const upload *u, const char *want);
/* The upload's glossary_id (the store must have it for lg's direction)
 * into spec->glossary (borrowed from u). 0, or -1 after a 400/503. */
int doc_glossary(req *r, const upload *u, const langs *lg, fy_job_spec *spec);
/* -1 after a 503 when the server has no document jobs, else 0. */
int doc_available(req *r);
/* "http://HOST" as the client reached us (the Host header when sane). */
void doc_base_url(req *r, fy_buf *b);
/* Percent-encodes s for a URL path or an RFC 5987 parameter. */
void doc_pct(fy_buf *b, const char *s);
/* Answers 200 with a file: its Content-Type, Content-Disposition
 * (attachment, the name in ASCII and UTF-8). Takes data. */
enum MHD_Result doc_reply_file(req *r, char *data, size_t len, const char *mime, const char *name);
/* The route handlers whose bodies are documents (their body limit). */
enum MHD_Result api_jobs_submit(req *r);
enum MHD_Result api_deepl_document(req *r);
/* ops.c: the OpenAPI document (also LibreTranslate's /spec). */
enum MHD_Result op_openapi(req *r);

/* docstore.c: the document metrics (and the job store's gauges). */
struct docs *docs_new(void);
void docs_free(struct docs *d);
/* Counts a document by format and final status, and its bytes. */
void docs_count(struct docs *d, const char *format, int status, size_t in, size_t out);
void docs_render(struct docs *d, struct fy_jobs *jobs, fy_buf *b);

/* metrics.c */
struct metrics *metrics_new(void);
void metrics_free(struct metrics *m);
void metrics_request(struct metrics *m, const char *endpoint, const char *direction, int status,
                     double seconds, size_t chars);
/* Appends the Prometheus text of the request counters to a malloc'd buffer. */
char *metrics_render(fy_server *s, size_t *len);

/* The device of the server's list named name; NULL when not there. */
const fy_nn_dev *server_device(fy_server *s, const char *name);

/* reply.c: answers GET/HEAD of an embedded web asset (UI pages, scripts,
 * openapi.json) with caching headers and the UI's Content-Security-Policy. */
enum MHD_Result reply_asset(req *r, const fy_web_asset *a);
/* The 204 of an OPTIONS request (a CORS preflight) for route rt (NULL: none). */
enum MHD_Result reply_options(req *r, const route *rt);

#endif
