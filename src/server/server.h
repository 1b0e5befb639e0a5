/* server.h - the HTTP translation service behind `fanyi serve`.
 *
 * One libmicrohttpd daemon (thread pool + poll) in front of the request
 * pipeline (translate/pipeline.h): HTTP threads parse, authenticate and
 * validate, turn each dialect's JSON into a request and submit it; the
 * scheduler's workers translate; HTTP threads format the request's
 * results as the dialect's JSON. The server is JSON <-> request and nothing
 * else.
 * HTTP threads never block on the engine: a connection waiting for its
 * translation is suspended and resumed when the job completes.
 */
#ifndef FY_SERVER_SERVER_H
#define FY_SERVER_SERVER_H

#include <stddef.h>

#include "translate/cache.h"
#include "translate/models.h"
#include "translate/scheduler.h"
#include "util/error.h"

typedef struct fy_server_options {
    const char *host;                 /* address to bind (default "127.0.0.1") */
    int port;                         /* 0: any free port (see fy_server_port) */
    const char *api_token;            /* NULL or "": no authentication */
    size_t max_chars;                 /* characters per request (default 5000) */
    size_t max_items;                 /* texts per request (default 128) */
    int timeout_ms;                   /* per-request deadline (default 30000) */
    const char *cors_origin;          /* every route allows this origin; "": CORS off; NULL:
                                         LibreTranslate's routes allow any ("*"), as it does */
    int http_threads;                 /* default 4 */
    int max_connections;              /* default 1024 */
    int max_per_ip;                   /* default 512 (0: no per-address limit) */
    int conn_timeout_s;               /* idle connection timeout (default 15) */
    int read_timeout_s;               /* a whole request must arrive within (default 30) */
    size_t request_memory;            /* bytes the requests in progress may take in all (their
                                       * bodies and what is built from them; default 256 MiB);
                                       * past it a request with a body gets 503 */
    const char *tls_cert;             /* PEM certificate chain (text, not a file name); with
                                       * tls_key: HTTPS only. NULL: plain HTTP */
    const char *tls_key;              /* PEM private key of tls_cert (unencrypted) */
    const char *version;              /* program version */
    size_t max_document_bytes;        /* a document's size (default 20 MiB) */
    size_t max_document_chars;        /* characters of text in a document (default 500,000) */
    struct fy_jobs *jobs;             /* the document jobs (translate/jobs.h), borrowed: must
                                       * outlive the server; NULL: document routes answer 503 */
    int quiet;                        /* no per-request log lines */
    struct fy_nn_dev *const *devices; /* the devices the scheduler's workers compute on (borrowed,
                                       * outliving the server), for /health and /metrics; NULL: the
                                       * scheduler's names only */
    int ndevices;
    int openai_strict;                    /* the OpenAI API answers only its own model names (404
                                           * model_not_found for others); 0: any other name is served
                                           * as "fanyi", the prompt saying the direction */
    struct fy_glossary_store *glossaries; /* stored glossaries (translate/glossary_store.h),
                                           * borrowed, must outlive the server; NULL: the glossary
                                           * routes answer 503 and glossary_id is refused */
} fy_server_options;

void fy_server_options_default(fy_server_options *o);

typedef struct fy_server fy_server;

/* Starts listening. reg (the directions), sched (the workers) and cache
 * are borrowed and must outlive the server. Strings in o are copied. NULL
 * with FY_EIO (cannot bind), FY_EINVAL (a certificate without its key or
 * the other way round, a certificate or key GnuTLS cannot use, the two not
 * matching: the message says which), FY_EUNSUPPORTED (TLS asked of a
 * libmicrohttpd built without it) etc. */
fy_server *fy_server_start(const fy_server_options *o, fy_registry *reg, fy_scheduler *sched,
                           fy_cache *cache, fy_error *err);

/* The port actually bound. */
int fy_server_port(const fy_server *s);

/* Graceful stop: closes the listening socket, lets requests in progress
 * finish for up to timeout_ms, then answers the rest 503 and stops. Returns
 * the number of requests that had to be cut short (0 = none lost). */
int fy_server_drain(fy_server *s, int timeout_ms);

/* Stops (draining with no grace if fy_server_drain was not called) and
 * frees. NULL harmless. */
void fy_server_free(fy_server *s);

#endif
