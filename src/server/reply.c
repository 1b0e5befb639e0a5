/* reply.c - answers: every response gets the headers all of them carry
 * (X-Request-Id, CORS, Retry-After for 503, WWW-Authenticate for 401,
 * Connection: close while draining), JSON and text bodies, streams,
 * embedded assets, preflights, and errors in the request's dialect. */
#include "server/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *req_header(req *r, const char *key)
{
    return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, key);
}

const char *req_arg(req *r, const char *key)
{
    return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

/* X-Fanyi-Device: the devices that translated the request ("cpu",
 * "vulkan:0", "cpu,vulkan:0"), "cache" when the cache answered it whole:
 * what a gray release compares (docs/deploy.md, "GPU"). On the JSON
 * answers of a finished translation: a stream's headers go out before. */
static void device_header(req *r, struct MHD_Response *resp)
{
    if (!r->q || !fy_request_sentences(r->q)) return;
    unsigned mask = fy_request_devices(r->q);
    char names[160] = "";
    size_t at = 0;
    for (int i = 0; mask && i < 32 && at < sizeof names; i++) {
        const char *name = (mask >> i) & 1 ? fy_scheduler_device_name(r->srv->sched, i) : NULL;
        if (name)
            at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", at ? "," : "", name);
    }
    MHD_add_response_header(resp, "X-Fanyi-Device", mask ? names : "cache");
}

enum MHD_Result reply_queue(req *r, int status, struct MHD_Response *resp)
{
    fy_server *s = r->srv;
    if (!resp) return MHD_NO;
    MHD_add_response_header(resp, "X-Request-Id", r->id);
    if (r->cors) {
        MHD_add_response_header(resp, "Access-Control-Allow-Origin", r->cors);
        MHD_add_response_header(resp, "Access-Control-Expose-Headers",
                                "X-Request-Id, Retry-After, X-Fanyi-Device");
        if (strcmp(r->cors, "*")) MHD_add_response_header(resp, "Vary", "Origin");
    }
    if (status == 503) MHD_add_response_header(resp, "Retry-After", "1");
    /* RFC 9110 §11.6.1: a 401 names the scheme that would be accepted. */
    if (status == 401) MHD_add_response_header(resp, "WWW-Authenticate", "Bearer realm=\"fanyi\"");
    if (r->allow) MHD_add_response_header(resp, "Allow", r->allow);
    if (atomic_load(&s->draining) || r->close) MHD_add_response_header(resp, "Connection", "close");
    r->status = status;
    r->phase = PH_REPLIED;
    enum MHD_Result ret = MHD_queue_response(r->conn, (unsigned)status, resp);
    MHD_destroy_response(resp);
    return ret;
}

enum MHD_Result reply_stream(req *r, const char *ctype, size_t block,
                             MHD_ContentReaderCallback reader)
{
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, block, reader, r, NULL);
    if (!resp) return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", ctype);
    MHD_add_response_header(resp, "Cache-Control", "no-cache");
    MHD_add_response_header(resp, "X-Accel-Buffering", "no"); /* nginx: pass it on as it comes */
    return reply_queue(r, 200, resp);
}

ssize_t stream_take(fy_buf *out, size_t *pos, int ended, int failed, char *buf, size_t max)
{
    if (out->oom || failed)
        return MHD_CONTENT_READER_END_WITH_ERROR; /* no end rather than a wrong one */
    if (*pos < out->n) {
        size_t n = out->n - *pos;
        if (n > max) n = max;
        memcpy(buf, out->p + *pos, n);
        *pos += n;
        return (ssize_t)n;
    }
    return ended ? MHD_CONTENT_READER_END_OF_STREAM : 0;
}

enum MHD_Result reply_text(req *r, int status, const char *type, const char *text, size_t len)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_MUST_COPY);
    if (!resp) return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", type);
    return reply_queue(r, status, resp);
}

enum MHD_Result reply_asset(req *r, const fy_web_asset *a)
{
    /* Assets are compiled in: the ETag changes exactly when the binary's copy
     * does, so browsers revalidate (no-cache) and mostly get a 304. */
    const char *inm = req_header(r, MHD_HTTP_HEADER_IF_NONE_MATCH);
    int fresh = inm && !strcmp(inm, a->etag);
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        fresh ? 0 : a->size, fresh ? NULL : (void *)a->data, MHD_RESPMEM_PERSISTENT);
    if (!resp) return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", a->content_type);
    MHD_add_response_header(resp, "ETag", a->etag);
    MHD_add_response_header(resp, "Cache-Control", "no-cache");
    MHD_add_response_header(resp, "Content-Security-Policy", fy_web_csp);
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(resp, "X-Frame-Options", "DENY");
    return reply_queue(r, fresh ? 304 : 200, resp);
}

enum MHD_Result reply_json(req *r, int status, json_t *body)
{
    char *text = body ? json_dumps(body, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
    json_decref(body);
    if (!text) return reply_text(r, 500, "application/json", "{}", 2);
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", "application/json; charset=utf-8");
    if (status == 200) device_header(r, resp);
    return reply_queue(r, status, resp);
}

/* Messages quote what the client sent (method, path, Content-Type, field
 * values), which may be invalid UTF-8, and truncation may cut a character
 * in two: jansson refuses such strings, so bad bytes become '?'. */
void utf8_scrub(char *s)
{
    size_t bad;
    while (!fy_utf8_valid(s, strlen(s), &bad)) s[bad] = '?';
}

enum MHD_Result reply_error(req *r, int status, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    utf8_scrub(msg);
    const dialect *d = r->dialect && r->dialect->error ? r->dialect : &dialect_native;
    return reply_json(r, status, d->error(status, msg));
}

enum MHD_Result reply_options(req *r, const route *rt)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
    if (!resp) return MHD_NO;
    MHD_add_response_header(resp, "Allow", rt ? route_allow(rt) : "OPTIONS");
    if (r->cors) {
        MHD_add_response_header(resp, "Access-Control-Allow-Methods",
                                rt ? route_allow(rt) : "GET, POST, DELETE, OPTIONS");
        MHD_add_response_header(resp, "Access-Control-Allow-Headers",
                                "Content-Type, Authorization, X-API-Token, X-Request-Id");
        MHD_add_response_header(resp, "Access-Control-Max-Age", "86400");
    }
    return reply_queue(r, 204, resp);
}
