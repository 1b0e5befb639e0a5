/* api_document.c - documents over HTTP:
 *
 *   POST /translate_file        LibreTranslate: multipart file, source,
 *                               target, api_key -> {"translatedFileUrl":
 *                               "http://HOST/download_file/<id>.<name>"}
 *   GET  /download_file/<id>.<name>   the file (Content-Disposition: attachment)
 *   POST /translate/document    native: multipart (file) or the raw file as
 *                               the body with ?filename=&source=&target=;
 *                               answers NDJSON: start, progress..., then done
 *                               with the file inline (base64) and its URL
 *
 * A request reads the document (text/document.h) with the server's limits,
 * makes a document job (translate/docjob.h) and runs it batch by batch: a
 * batch's end wakes the connection, whose HTTP thread collects it and
 * submits the next, so HTTP threads never wait on the engine.
 */
#include "server/internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "text/document.h"
#include "translate/docjob.h"

#define DOWNLOAD_PREFIX "/download_file/"

typedef struct docreq {
    fy_document *doc;
    fy_docjob *job;
    int fmt;
    int stream; /* NDJSON (native) */
    int inline_data;
    char name[256]; /* the translated file's name */
    char direction[3 * FY_LANG_MAX];
    size_t in_bytes, out_bytes;
    int final_status; /* for the metrics: the stream's ending */
    /* NDJSON output (guarded by r->lock) */
    fy_buf out;
    size_t out_pos;
    int ended;
    int started; /* the reader has submitted the first batch */
    int last_pct;
} docreq;

/* ---- limits -------------------------------------------------------------------- */

static enum MHD_Result api_translate_file(req *r);
static enum MHD_Result api_translate_document(req *r);

static int is_doc_route(const route *rt)
{
    return rt && (rt->handler == api_translate_file || rt->handler == api_translate_document);
}

size_t doc_body_limit(const fy_server *s, const route *rt)
{
    return is_doc_route(rt) ? s->o.max_document_bytes + 65536 : 0;
}

static void limits(const fy_server *s, fy_doc_limits *l)
{
    fy_doc_limits_default(l);
    l->max_bytes = s->o.max_document_bytes;
    l->max_chars = s->o.max_document_chars;
}

void doc_req_free(req *r)
{
    docreq *dr = r->doc;
    if (!dr) return;
    fy_docjob_free(dr->job); /* cancels: no callback after this */
    int status = dr->final_status ? dr->final_status : r->status ? r->status : 499;
    if (dr->fmt >= 0)
        docs_count(r->srv->docs, fy_docfmt_get(dr->fmt)->name, status, dr->in_bytes, dr->out_bytes);
    fy_document_free(dr->doc);
    fy_buf_free(&dr->out);
    free(dr);
    r->doc = NULL;
}

/* ---- the upload ---------------------------------------------------------------- */

typedef struct upload {
    fy_buf file;
    int has_file;
    char filename[256], ctype[128];
    char source[64], target[64], api_key[256], format[16], glossary_id[128];
    int too_long; /* a field longer than its buffer */
} upload;

static void field_put(char *dst, size_t cap, const char *data, uint64_t off, size_t size,
                      int *too_long)
{
    if (off + size + 1 > cap) {
        *too_long = 1;
        return;
    }
    memcpy(dst + off, data, size);
    dst[off + size] = '\0';
}

static enum MHD_Result upload_field(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *filename, const char *content_type,
                                    const char *transfer_encoding, const char *data, uint64_t off,
                                    size_t size)
{
    (void)kind, (void)transfer_encoding;
    upload *u = cls;
    if (!key) return MHD_YES;
    if (!strcmp(key, "file")) {
        if (off == 0) {
            u->has_file = 1;
            snprintf(u->filename, sizeof u->filename, "%s", filename ? filename : "");
            snprintf(u->ctype, sizeof u->ctype, "%s", content_type ? content_type : "");
        }
        fy_buf_put(&u->file, data, size);
        return u->file.oom ? MHD_NO : MHD_YES;
    }
    static const struct {
        const char *key;
        size_t off, cap;
    } fields[] = {{"source", offsetof(upload, source), sizeof((upload *)0)->source},
                  {"target", offsetof(upload, target), sizeof((upload *)0)->target},
                  {"api_key", offsetof(upload, api_key), sizeof((upload *)0)->api_key},
                  {"format", offsetof(upload, format), sizeof((upload *)0)->format},
                  {"filename", offsetof(upload, filename), sizeof((upload *)0)->filename},
                  {"glossary_id", offsetof(upload, glossary_id), sizeof((upload *)0)->glossary_id}};
    for (size_t k = 0; k < sizeof fields / sizeof *fields; k++)
        if (!strcmp(key, fields[k].key))
            field_put((char *)u + fields[k].off, fields[k].cap, data, off, size, &u->too_long);
    return MHD_YES;
}

static void arg_copy(req *r, const char *key, char *dst, size_t cap)
{
    const char *v = req_arg(r, key);
    if (v && !*dst) snprintf(dst, cap, "%s", v);
}

/* The file and fields: multipart/form-data (a "file" part), or the raw
 * body with the rest in the query string. -1 after a reply. */
static int read_upload(req *r, upload *u, int allow_raw)
{
    const char *ct = req_header(r, MHD_HTTP_HEADER_CONTENT_TYPE);
    int multipart = ct && !strncasecmp(ct, "multipart/form-data", 19);
    if (multipart) {
        struct MHD_PostProcessor *pp = MHD_create_post_processor(r->conn, 65536, upload_field, u);
        if (!pp) return reply_error(r, 400, "cannot read the multipart body (bad boundary?)"), -1;
        enum MHD_Result ok = r->len ? MHD_post_process(pp, r->body, r->len) : MHD_YES;
        MHD_destroy_post_processor(pp);
        if (ok != MHD_YES || u->file.oom)
            return reply_error(r, u->file.oom ? 500 : 400, "malformed multipart body"), -1;
        if (u->too_long) return reply_error(r, 400, "a form field is too long"), -1;
    } else if (allow_raw) {
        u->has_file = 1; /* the body is the file, however short */
        fy_buf_put(&u->file, r->body ? r->body : "", r->len);
        snprintf(u->ctype, sizeof u->ctype, "%s", ct ? ct : "");
    }
    arg_copy(r, "source", u->source, sizeof u->source);
    arg_copy(r, "target", u->target, sizeof u->target);
    arg_copy(r, "filename", u->filename, sizeof u->filename);
    arg_copy(r, "glossary_id", u->glossary_id, sizeof u->glossary_id);
    if (!u->has_file)
        return reply_error(r, 400,
                           allow_raw ? "Invalid request: missing file (send it as the body, or as "
                                       "a multipart part named 'file')"
                                     : "Invalid request: missing file parameter (a multipart "
                                       "part named 'file')"),
               -1;
    if (u->file.oom) return reply_error(r, 500, "out of memory"), -1;
    return 0;
}

/* ---- errors ------------------------------------------------------------------------ */

static int doc_status(int code)
{
    switch (code) {
    case FY_EUNSUPPORTED:
        return 415;
    case FY_ELIMIT:
        return 413;
    case FY_EINVAL:
    case FY_EFORMAT:
    case FY_ENOTFOUND:
        return 400;
    case FY_EBUSY:
    case FY_ECANCELED:
        return 503;
    case FY_ETIMEOUT:
        return 504;
    default:
        return 500;
    }
}

static const char *code_name(int status)
{
    switch (status) {
    case 400:
        return "invalid_request";
    case 413:
        return "payload_too_large";
    case 415:
        return "unsupported_media_type";
    case 503:
        return "unavailable";
    case 504:
        return "timeout";
    default:
        return "internal_error";
    }
}

/* ---- building the job ----------------------------------------------------------------- */

static void on_progress(void *user, size_t done, size_t total);
static void on_batch(void *user, int status);

/* Reads the document and makes its job; -1 after a reply. */
static int start_job(req *r, upload *u, const langs *lg)
{
    docreq *dr = r->doc;
    fy_error err = {0};
    fy_doc_limits lim;
    limits(r->srv, &lim);
    /* One rule for every endpoint: a file of no bytes is a mistake to
     * report (a document with bytes but no text comes back unchanged). */
    if (!u->file.n)
        return reply_error(r, 400,
                           "the document is empty (0 bytes): there is nothing to translate"),
               -1;
    size_t max = r->srv->o.max_document_bytes;
    char got[32], most[32];
    if (u->file.n > max)
        return reply_error(r, 413,
                           "the document is %s, over the limit of --max-document-mb %zu (%s)",
                           size_over(u->file.n, max, got, sizeof got), max >> 20,
                           size_text(max, most, sizeof most)),
               -1;
    dr->in_bytes = u->file.n;
    const char *data = u->file.p ? u->file.p : "";
    int fmt =
        fy_docfmt_detect(u->filename[0] ? u->filename : NULL, u->ctype, data, u->file.n, &err);
    if (fmt >= 0) dr->fmt = fmt;
    if (fmt >= 0) dr->doc = fy_document_read(fmt, data, u->file.n, &lim, &err);
    if (!dr->doc && err.code == FY_ELIMIT)
        return reply_error(
                   r, 413,
                   "%s (this server's limits: --max-document-chars %zu, --max-document-mb %zu)",
                   err.msg, r->srv->o.max_document_chars, r->srv->o.max_document_bytes >> 20),
               -1;
    if (!dr->doc) return reply_error(r, doc_status(err.code), "%s", err.msg), -1;
    r->chars = fy_document_chars(dr->doc);
    fy_docjob_options o = {
        lg->src, lg->tgt, r->srv->o.timeout_ms, 0, (const struct fy_glossary *const *)r->gl,
        r->ngl};
    fy_docjob_callbacks cb = {on_progress, on_batch, r};
    dr->job = fy_docjob_new(r->srv->reg, r->srv->sched, dr->doc, &o, &cb, &err);
    if (!dr->job) return reply_error(r, doc_status(err.code), "%s", err.msg), -1;
    snprintf(dr->direction, sizeof dr->direction, "%s", fy_docjob_direction(dr->job));
    r->direction = dr->direction;
    char given[300];
    snprintf(given, sizeof given, "%s", u->filename);
    if (!given[0]) snprintf(given, sizeof given, "document.%s", fy_docfmt_get(fmt)->name);
    fy_document_name(given, fy_docjob_source(dr->job), fy_docjob_target(dr->job), dr->name,
                     sizeof dr->name);
    return 0;
}

/* The request's token (header, query, or the form's api_key), its
 * languages, its document and job. -1 after a reply. */
static int doc_request(req *r, int stream, langs *lg)
{
    r->doc = calloc(1, sizeof *r->doc);
    if (!r->doc) return reply_error(r, 500, "out of memory"), -1;
    r->doc->fmt = -1;
    r->doc->stream = stream;
    upload u = {0};
    int rc = read_upload(r, &u, stream);
    if (!rc) rc = auth_token(r, u.api_key[0] ? u.api_key : NULL);
    if (!rc)
        rc = task_langs(r, "source", u.source[0] ? u.source : "auto", "target",
                        u.target[0] ? u.target : NULL, !stream, lg);
    if (!rc && u.glossary_id[0]) rc = task_glossary_id(r, "glossary_id", u.glossary_id, lg);
    if (!rc) rc = start_job(r, &u, lg);
    const char *inl = req_arg(r, "inline");
    r->doc->inline_data = !inl || strcmp(inl, "0");
    fy_buf_free(&u.file);
    return rc;
}

/* ---- the result ------------------------------------------------------------------------ */

static void base64(fy_buf *b, const unsigned char *s, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0) |
                     (i + 2 < n ? s[i + 2] : 0);
        char q[4] = {tab[v >> 18 & 63], tab[v >> 12 & 63], i + 1 < n ? tab[v >> 6 & 63] : '=',
                     i + 2 < n ? tab[v & 63] : '='};
        fy_buf_put(b, q, 4);
    }
}

/* Percent-encodes a file name for a URL path or an RFC 5987 parameter. */
static void pct(fy_buf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            strchr("-._~", c))
            fy_buf_putc(b, (char)c);
        else
            fy_buf_printf(b, "%%%02X", c);
    }
}

/* "http://HOST" as the client reached us (the Host header when sane). */
static void base_url(req *r, fy_buf *b)
{
    const char *host = req_header(r, MHD_HTTP_HEADER_HOST);
    int ok = host && *host && strlen(host) < 256;
    for (const char *p = host; ok && *p; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
             strchr(".-:[]", *p);
    const char *proto = req_header(r, "X-Forwarded-Proto");
    fy_buf_printf(b, "%s://", proto && !strcmp(proto, "https") ? "https" : "http");
    if (ok)
        fy_buf_put(b, host, strlen(host));
    else
        fy_buf_printf(b, "127.0.0.1:%d", r->srv->port);
}

/* Writes the translated document and stores it; its id in id. Returns the
 * bytes (taken by the store; a copy stays for an inline answer when
 * keep), or NULL with status and message. */
static int finish_document(req *r, char id[33], char **keep, size_t *len, int *status, char *msg,
                           size_t cap)
{
    docreq *dr = r->doc;
    fy_error err = {0};
    char *data;
    if (fy_document_write(dr->doc, &data, len, &err)) {
        *status = doc_status(err.code);
        snprintf(msg, cap, "cannot write the translated document: %.200s", err.msg);
        return -1;
    }
    dr->out_bytes = *len;
    *keep = NULL;
    if (dr->stream && dr->inline_data && !(*keep = malloc(*len ? *len : 1))) {
        free(data);
        *status = 500;
        snprintf(msg, cap, "out of memory");
        return -1;
    }
    if (*keep) memcpy(*keep, data, *len);
    if (docs_put(r->srv->docs, data, *len, dr->name, fy_docfmt_get(dr->fmt)->mime, id)) {
        free(data);
        if (!dr->stream) {
            *status = 503;
            char size[32];
            snprintf(msg, cap,
                     "the translated file (%s) does not fit in the download store "
                     "(--download-store-mb %zu)",
                     size_text(*len, size, sizeof size), r->srv->o.download_store_bytes >> 20);
            return -1;
        }
        id[0] = '\0'; /* inline only */
    }
    return 0;
}

/* ---- POST /translate_file (LibreTranslate) ------------------------------------------------ */

static enum MHD_Result libre_done(req *r)
{
    char id[33], msg[600];
    char *keep;
    size_t len;
    int status;
    if (finish_document(r, id, &keep, &len, &status, msg, sizeof msg))
        return reply_error(r, status, "%s", msg);
    fy_buf url = {0};
    base_url(r, &url);
    fy_buf_printf(&url, "%s%s.", DOWNLOAD_PREFIX, id);
    pct(&url, r->doc->name);
    json_t *body = url.oom ? NULL : json_pack("{s:s}", "translatedFileUrl", url.p);
    fy_buf_free(&url);
    if (!body) return reply_error(r, 500, "out of memory");
    return reply_json(r, 200, body);
}

/* Steps the job while batches finish (collecting each, submitting the
 * next); sleeps while one runs. status: the batch's, which the step
 * reports again with its message. */
static enum MHD_Result doc_continue(req *r, int status)
{
    (void)status;
    docreq *dr = r->doc;
    for (;;) {
        fy_error err = {0};
        req_work_begin(r);
        int rc = fy_docjob_step(dr->job, &err);
        if (rc == 1) return libre_done(r);
        if (rc == FY_ETIMEOUT)
            return reply_error(r, 504, "the document took longer than its deadline: %s", err.msg);
        if (rc < 0) return reply_error(r, doc_status(rc), "%s", err.msg);
        int st;
        unsigned long events;
        pthread_mutex_lock(&r->lock);
        int state = req_look(r, &st, &events);
        if (state == WAIT_PENDING && !req_sleep(r, events)) return MHD_YES;
        pthread_mutex_unlock(&r->lock);
        if (state == WAIT_CUT) {
            req_cancel(r); /* the batch in flight stops: its sentences leave the queue */
            return req_cut_reply(r);
        }
    }
}

/* Stops the batch in flight (the owner's thread: never during a step). */
static void doc_cancel(req *r)
{
    if (r->doc) fy_docjob_cancel(r->doc->job);
}

static void on_batch(void *user, int status)
{
    req_work_done(user, status);
}

static enum MHD_Result api_translate_file(req *r)
{
    langs lg;
    if (doc_request(r, 0, &lg)) return REPLIED(r);
    r->phase = PH_WAIT;
    r->resume = doc_continue;
    r->cancel = doc_cancel;
    return doc_continue(r, 0);
}

/* ---- POST /translate/document (native, NDJSON) ---------------------------------------------- */

/* Appends one line; r->lock held. */
static void nd_line(req *r, json_t *v)
{
    docreq *dr = r->doc;
    char *s = v ? json_dumps(v, JSON_COMPACT) : NULL;
    json_decref(v);
    if (!s) {
        dr->out.oom = 1;
        return;
    }
    fy_buf_put(&dr->out, s, strlen(s));
    fy_buf_putc(&dr->out, '\n');
    free(s);
}

static void on_progress(void *user, size_t done, size_t total)
{
    req *r = user;
    docreq *dr = r->doc;
    if (!dr->stream) return;
    int pct = total ? (int)(done * 100 / total) : 100;
    pthread_mutex_lock(&r->lock);
    if (pct > dr->last_pct || done == total) {
        dr->last_pct = pct;
        nd_line(r, json_pack("{s:s,s:I,s:I}", "event", "progress", "done", (json_int_t)done,
                             "total", (json_int_t)total));
        req_notify(r);
    }
    pthread_mutex_unlock(&r->lock);
}

static json_t *error_event(int status, const char *msg)
{
    return json_pack("{s:s,s:i,s:{s:s,s:s}}", "event", "error", "status", status, "error", "code",
                     code_name(status), "message", msg);
}

/* The "done" line (or an "error" line); r->lock not held. */
static void nd_finish(req *r)
{
    docreq *dr = r->doc;
    char id[33], msg[600];
    char *keep = NULL;
    size_t len = 0;
    int status;
    json_t *ev;
    if (finish_document(r, id, &keep, &len, &status, msg, sizeof msg)) {
        ev = error_event(status, msg);
        dr->final_status = status;
    } else {
        fy_buf url = {0}, data = {0};
        if (id[0]) {
            fy_buf_printf(&url, "%s%s.", DOWNLOAD_PREFIX, id);
            pct(&url, dr->name);
        }
        if (keep) base64(&data, (const unsigned char *)keep, len);
        free(keep);
        ev =
            json_pack("{s:s,s:s,s:s,s:I,s:s,s:s,s:s}", "event", "done", "filename", dr->name,
                      "content_type", fy_docfmt_get(dr->fmt)->mime, "bytes", (json_int_t)len, "url",
                      url.p ? url.p : "", "data", data.p ? data.p : "", "direction", dr->direction);
        if (!dr->inline_data) json_object_del(ev, "data");
        if (!id[0]) json_object_del(ev, "url");
        fy_buf_free(&url);
        fy_buf_free(&data);
        dr->final_status = 200;
    }
    pthread_mutex_lock(&r->lock);
    nd_line(r, ev);
    dr->ended = 1;
    pthread_mutex_unlock(&r->lock);
}

/* One step of the job from the stream's reader; r->lock not held. */
static void nd_step(req *r)
{
    docreq *dr = r->doc;
    fy_error err = {0};
    req_work_begin(r);
    int rc = fy_docjob_step(dr->job, &err);
    if (rc == 1) {
        nd_finish(r);
    } else if (rc < 0) {
        int status = doc_status(rc);
        pthread_mutex_lock(&r->lock);
        nd_line(r, error_event(status, err.msg));
        dr->final_status = status;
        dr->ended = 1;
        pthread_mutex_unlock(&r->lock);
    }
}

/* The server is stopping (or the client left): the batch in flight is
 * cancelled and the stream ends with an error line. r->lock not held. */
static void nd_cut(req *r)
{
    docreq *dr = r->doc;
    req_cancel(r);
    char msg[200];
    snprintf(msg, sizeof msg,
             "the server is shutting down: the document was not finished (%zu of %zu sentences "
             "translated); retry",
             fy_docjob_done(dr->job), fy_docjob_total(dr->job));
    pthread_mutex_lock(&r->lock);
    nd_line(r, error_event(503, msg));
    dr->final_status = 503;
    dr->ended = 1;
    pthread_mutex_unlock(&r->lock);
}

static ssize_t nd_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    req *r = cls;
    docreq *dr = r->doc;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        ssize_t got = stream_take(&dr->out, &dr->out_pos, dr->ended, req_gone(r), buf, max);
        if (got) {
            pthread_mutex_unlock(&r->lock);
            return got;
        }
        int st = 0, state = WAIT_DONE; /* the first call submits the first batch */
        unsigned long events = 0;
        if (dr->started) state = req_look(r, &st, &events);
        if (state == WAIT_PENDING && !req_sleep(r, events)) return 0;
        dr->started = 1;
        /* callbacks take r->lock, and may run inside the step */
        pthread_mutex_unlock(&r->lock);
        if (state == WAIT_CUT) nd_cut(r);
        if (state == WAIT_DONE) nd_step(r);
        pthread_mutex_lock(&r->lock);
    }
}

static enum MHD_Result api_translate_document(req *r)
{
    langs lg;
    if (doc_request(r, 1, &lg)) return REPLIED(r);
    docreq *dr = r->doc;
    json_t *start = json_pack(
        "{s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:I}", "event", "start", "filename", dr->name, "format",
        fy_docfmt_get(dr->fmt)->name, "source", fy_docjob_source(dr->job), "target",
        fy_docjob_target(dr->job), "paragraphs", (json_int_t)fy_document_units(dr->doc),
        "sentences", (json_int_t)fy_docjob_total(dr->job), "bytes", (json_int_t)dr->in_bytes);
    r->cancel = doc_cancel;
    pthread_mutex_lock(&r->lock);
    nd_line(r, start);
    r->sse = 1; /* a stream: the log counts a cut one as 499 */
    pthread_mutex_unlock(&r->lock);
    return reply_stream(r, "application/x-ndjson; charset=utf-8", 65536, nd_read);
}

/* ---- GET /download_file/<id>.<name> ---------------------------------------------------- */

/* Content-Disposition: an ASCII name for old clients, the UTF-8 one per RFC 6266. */
static char *disposition(const char *name)
{
    fy_buf b = {0};
    fy_buf_put(&b, "attachment; filename=\"", 22);
    for (const char *p = name; *p; p++) {
        unsigned char c = (unsigned char)*p;
        fy_buf_putc(&b, c < 0x20 || c >= 0x7f || c == '"' || c == '\\' ? '_' : (char)c);
    }
    fy_buf_put(&b, "\"; filename*=UTF-8''", 20);
    pct(&b, name);
    return fy_buf_take(&b, NULL);
}

static enum MHD_Result api_download_file(req *r)
{
    /* The route also matches "/download_file" itself. */
    const char *rest = r->url && !strncmp(r->url, DOWNLOAD_PREFIX, strlen(DOWNLOAD_PREFIX))
                           ? r->url + strlen(DOWNLOAD_PREFIX)
                           : "";
    const char *dot = strchr(rest, '.');
    size_t idlen = dot ? (size_t)(dot - rest) : strlen(rest);
    const char *name = dot ? dot + 1 : "";
    int bad =
        idlen != 32 || !*name || strchr(name, '/') || strchr(name, '\\') || !strcmp(name, "..");
    for (size_t i = 0; !bad && i < idlen; i++) bad = !strchr("0123456789abcdef", rest[i]);
    if (bad) return reply_error(r, 400, "Invalid filename");
    char id[33], mime[128];
    memcpy(id, rest, 32);
    id[32] = '\0';
    char *data;
    size_t len;
    int found = docs_get(r->srv->docs, id, name, &data, &len, mime, sizeof mime);
    if (found < 0) return reply_error(r, 500, "out of memory");
    if (!found)
        return reply_error(r, 404,
                           "no such translated file (it expired after --download-ttl, or was "
                           "translated by another server)");
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(data);
        return MHD_NO;
    }
    char *cd = disposition(name);
    MHD_add_response_header(resp, "Content-Type", mime);
    if (cd) MHD_add_response_header(resp, "Content-Disposition", cd);
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    free(cd);
    return reply_queue(r, 200, resp);
}

/* ---- the dialect ------------------------------------------------------------------------ */

/* LibreTranslate's two answer in its shape and to any origin, as it does. */
static const route document_routes[] = {
    {"POST", "/translate_file", "translate_file", 1, 1, api_translate_file, &dialect_libre},
    {"GET", "/download_file/*", "download_file", 0, 1, api_download_file, &dialect_libre},
    {"POST", "/translate/document", "translate_document", 1, 0, api_translate_document, NULL},
};

const dialect dialect_documents = {"documents",
                                   document_routes,
                                   sizeof document_routes / sizeof *document_routes,
                                   native_error,
                                   NULL,
                                   0};
