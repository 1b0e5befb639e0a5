/* api_document.c - documents over HTTP that answer when the document is
 * translated, as views of a document job (translate/jobs.h), and what
 * every document endpoint shares:
 *
 *   POST /translate_file        LibreTranslate: multipart file, source,
 *                               target, api_key, glossary_id -> {"translatedFileUrl":
 *                               "http://HOST/download_file/<id>.<name>"}
 *   GET  /download_file/<id>.<name>   the file (Content-Disposition: attachment)
 *   POST /translate/document    native: multipart (file) or the raw file as
 *                               the body with ?filename=&source=&target=
 *                               (&glossary_id=);
 *                               answers NDJSON: start, progress..., then done
 *                               with the file inline (base64) and its URL
 *
 * A view submits the document as a job that starts at once in this
 * process with the view as its watcher: the job's progress wakes the
 * connection (a stream's progress lines), its end gives the answer. A
 * view whose client goes away, or which the shutdown cuts, deletes its
 * unfinished job: nobody could ask for it. The translated file stays in
 * the job store for --download-ttl (any replica serves /download_file
 * with --redis).
 */
#include "server/internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "text/document.h"

#define DOWNLOAD_PREFIX "/download_file/"

typedef struct docreq {
    char id[33];     /* its job ("": none yet) */
    const char *fmt; /* the format's name for the metrics (static), NULL: unknown */
    int view;        /* the job's watcher */
    int stream;      /* NDJSON (native) */
    int inline_data; /* the stream's done line carries the file */
    int ok;          /* the job ended done */
    char name[256];  /* the translated file's name */
    char direction[3 * FY_LANG_MAX];
    size_t in_bytes, out_bytes;
    int final_status; /* for the metrics: the stream's ending */
    /* NDJSON output (guarded by r->lock) */
    fy_buf out;
    size_t out_pos;
    int ended;
    int last_pct;
} docreq;

/* ---- limits ---------------------------------------------------------------------- */

static enum MHD_Result api_translate_file(req *r);
static enum MHD_Result api_translate_document(req *r);

static int is_doc_route(const route *rt)
{
    return rt && (rt->handler == api_translate_file || rt->handler == api_translate_document ||
                  rt->handler == api_jobs_submit || rt->handler == api_deepl_document);
}

size_t doc_body_limit(const fy_server *s, const route *rt)
{
    return is_doc_route(rt) ? s->o.max_document_bytes + 65536 : 0;
}

void doc_req_free(req *r)
{
    docreq *dr = r->doc;
    if (!dr) return;
    if (dr->view && dr->id[0]) {
        fy_jobs_unwatch(r->srv->jobs, dr->id); /* no callback after this */
        if (!dr->ok) fy_jobs_remove(r->srv->jobs, dr->id, NULL);
    }
    int status = dr->final_status ? dr->final_status : r->status ? r->status : 499;
    if (dr->fmt) docs_count(r->srv->docs, dr->fmt, status, dr->in_bytes, dr->out_bytes);
    fy_buf_free(&dr->out);
    free(dr);
    r->doc = NULL;
}

/* ---- the upload ------------------------------------------------------------------ */

typedef struct form {
    upload *u;
    fy_buf value; /* the field being read */
    char key[64];
    int too_long, oom;
} form;

/* A field's value ends: kept (the last of a repeated key wins). */
static void form_flush(form *f)
{
    if (!f->key[0]) return;
    json_t *v = f->value.oom ? NULL : json_stringn(f->value.p ? f->value.p : "", f->value.n);
    if (!v || json_object_set_new(f->u->fields, f->key, v)) f->oom |= v != NULL || f->value.oom;
    f->key[0] = '\0';
    fy_buf_free(&f->value);
}

static enum MHD_Result form_part(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *filename, const char *content_type,
                                 const char *transfer_encoding, const char *data, uint64_t off,
                                 size_t size)
{
    (void)kind, (void)transfer_encoding;
    form *f = cls;
    upload *u = f->u;
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
    if (off == 0) {
        form_flush(f);
        if (strlen(key) >= sizeof f->key) return MHD_YES; /* no field of ours */
        snprintf(f->key, sizeof f->key, "%s", key);
    }
    if (!f->key[0] || strcmp(f->key, key)) return MHD_YES;
    if (f->value.n + size > 4096) {
        f->too_long = 1;
        return MHD_YES;
    }
    fy_buf_put(&f->value, data, size);
    return MHD_YES;
}

/* Query arguments into the fields the form did not give. */
static enum MHD_Result query_field(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    (void)kind;
    upload *u = cls;
    if (key && value && !json_object_get(u->fields, key))
        json_object_set_new(u->fields, key, json_string(value)); /* NULL (not UTF-8): ignored */
    return MHD_YES;
}

void upload_free(upload *u)
{
    fy_buf_free(&u->file);
    json_decref(u->fields);
    u->fields = NULL;
}

const char *upload_field(const upload *u, const char *key)
{
    return json_string_value(json_object_get(u->fields, key));
}

static int read_multipart(req *r, upload *u)
{
    form f = {.u = u};
    struct MHD_PostProcessor *pp = MHD_create_post_processor(r->conn, 65536, form_part, &f);
    if (!pp) return reply_error(r, 400, "cannot read the multipart body (bad boundary?)"), -1;
    enum MHD_Result ok = r->len ? MHD_post_process(pp, r->body, r->len) : MHD_YES;
    MHD_destroy_post_processor(pp);
    form_flush(&f);
    fy_buf_free(&f.value);
    if (ok != MHD_YES || u->file.oom || f.oom)
        return reply_error(r, u->file.oom || f.oom ? 500 : 400, "malformed multipart body"), -1;
    if (f.too_long) return reply_error(r, 400, "a form field is too long"), -1;
    return 0;
}

int upload_read(req *r, upload *u, int allow_raw)
{
    u->fields = json_object();
    if (!u->fields) return reply_error(r, 500, "out of memory"), -1;
    const char *ct = req_header(r, MHD_HTTP_HEADER_CONTENT_TYPE);
    int multipart = ct && !strncasecmp(ct, "multipart/form-data", 19);
    if (multipart && read_multipart(r, u)) return -1;
    if (!multipart && allow_raw) {
        u->has_file = 1; /* the body is the file, however short */
        fy_buf_put(&u->file, r->body ? r->body : "", r->len);
        snprintf(u->ctype, sizeof u->ctype, "%s", ct ? ct : "");
    }
    MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, query_field, u);
    const char *name = upload_field(u, "filename");
    if (name && *name) snprintf(u->filename, sizeof u->filename, "%s", name);
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

/* ---- submitting -------------------------------------------------------------------- */

int doc_status(int code)
{
    switch (code) {
    case FY_EUNSUPPORTED:
        return 415;
    case FY_ELIMIT:
        return 413;
    case FY_EINVAL:
    case FY_EFORMAT:
        return 400;
    case FY_ENOTFOUND:
        return 400; /* no model for the pair */
    case FY_EBUSY:
    case FY_ECANCELED:
    case FY_ENET:
        return 503;
    case FY_ETIMEOUT:
        return 504;
    case FY_ESPACE:
        return 507;
    default:
        return 500;
    }
}

int doc_available(req *r)
{
    if (r->srv->jobs) return 0;
    reply_error(r, 503, "documents are not available on this server (no document store)");
    return -1;
}

/* The static name of the format the upload is, for the metrics. */
static const char *format_of(const upload *u)
{
    fy_error err = {0};
    int f = fy_docfmt_detect(u->filename[0] ? u->filename : NULL, u->ctype,
                             u->file.p ? u->file.p : "", u->file.n, &err);
    return f >= 0 ? fy_docfmt_get(f)->name : NULL;
}

/* Is want one of format f's names ("docx", "htm" for html)? */
static int names_format(const char *want, int f)
{
    const fy_docfmt_info *fi = fy_docfmt_get(f);
    if (!strcasecmp(want, fi->name)) return 1;
    size_t n = strlen(want);
    for (const char *p = fi->extensions; (p = strchr(p, '.')); p++)
        if (!strncasecmp(p + 1, want, n) && (p[1 + n] == ' ' || !p[1 + n])) return 1;
    return 0;
}

int doc_output_format(req *r, const upload *u, const char *want)
{
    if (!want || !*want) return 0;
    fy_error err = {0};
    int f = fy_docfmt_detect(u->filename[0] ? u->filename : NULL, u->ctype,
                             u->file.p ? u->file.p : "", u->file.n, &err);
    if (f < 0 || names_format(want, f)) return 0; /* the format's own error comes later */
    reply_error(r, 400,
                "Value for 'output_format' not supported: this server writes a translated "
                "document in the format it came in (%s); converting %s to %.20s is not supported",
                fy_docfmt_get(f)->name, fy_docfmt_get(f)->name, want);
    return -1;
}

int doc_submit(req *r, const upload *u, fy_job_spec *spec, const fy_jobs_watch *watch,
               fy_job_info *info)
{
    if (doc_available(r)) return -1;
    if (!r->doc && !(r->doc = calloc(1, sizeof *r->doc)))
        return reply_error(r, 500, "out of memory"), -1;
    docreq *dr = r->doc;
    dr->in_bytes = u->file.n;
    dr->fmt = format_of(u);
    size_t max = r->srv->o.max_document_bytes;
    char got[32], most[32];
    if (u->file.n > max)
        return reply_error(r, 413,
                           "the document is %s, over the limit of --max-document-mb %zu (%s)",
                           size_over(u->file.n, max, got, sizeof got), max >> 20,
                           size_text(max, most, sizeof most)),
               -1;
    spec->filename = u->filename[0] ? u->filename : NULL;
    spec->content_type = u->ctype;
    fy_error err = {0};
    if (!fy_jobs_submit(r->srv->jobs, spec, u->file.p ? u->file.p : "", u->file.n, watch, info,
                        &err)) {
        memcpy(dr->id, info->id, 33);
        dr->view = watch != NULL;
        snprintf(dr->name, sizeof dr->name, "%s", info->name);
        snprintf(dr->direction, sizeof dr->direction, "%s", info->direction);
        r->direction = dr->direction;
        r->chars = info->chars;
        return 0;
    }
    if (err.code == FY_ELIMIT)
        return reply_error(
                   r, 413,
                   "%s (this server's limits: --max-document-chars %zu, --max-document-mb %zu)",
                   err.msg, r->srv->o.max_document_chars, r->srv->o.max_document_bytes >> 20),
               -1;
    int status = doc_status(err.code);
    /* DeepL answers a file it cannot read with a 400 (its clients know no 415). */
    if (status == 415 && r->dialect == &dialect_deepl) status = 400;
    return reply_error(r, status, "%s", err.msg), -1;
}

/* The glossary_id field of an upload: looked up now, so that an id the
 * store does not have is the request's 400, and kept with the job
 * (spec->glossary, borrowed from u), which compiles it whenever it starts.
 * -1 after a reply. */
int doc_glossary(req *r, const upload *u, const langs *lg, fy_job_spec *spec)
{
    const char *id = upload_field(u, "glossary_id");
    if (!id || !*id) return 0;
    /* The job keeps a list of ids: one with a comma is none of the store's. */
    if (strchr(id, ',') || strlen(id) >= FY_GSTORE_ID_MAX)
        return reply_error(r, 400, "field 'glossary_id': no glossary '%.40s'", id), -1;
    if (task_glossary_id(r, "glossary_id", id, lg)) return -1;
    spec->glossary = id;
    return 0;
}

/* ---- answering with a file ---------------------------------------------------------- */

void doc_pct(fy_buf *b, const char *s)
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

void doc_base_url(req *r, fy_buf *b)
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
    doc_pct(&b, name);
    return fy_buf_take(&b, NULL);
}

enum MHD_Result doc_reply_file(req *r, char *data, size_t len, const char *mime, const char *name)
{
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

static void base64(fy_buf *b, const char *data, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *s = (const unsigned char *)data;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0) |
                     (i + 2 < n ? s[i + 2] : 0);
        char q[4] = {tab[v >> 18 & 63], tab[v >> 12 & 63], i + 1 < n ? tab[v >> 6 & 63] : '=',
                     i + 2 < n ? tab[v & 63] : '='};
        fy_buf_put(b, q, 4);
    }
}

/* ---- the views' watch ------------------------------------------------------------------ */

/* Appends one NDJSON line; r->lock held. */
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

/* The job's progress (a scheduler thread): a stream's line, at most one a percent. */
static void view_progress(void *user, size_t done, size_t total)
{
    req *r = user;
    pthread_mutex_lock(&r->lock);
    docreq *dr = r->doc;
    int pct = total ? (int)(done * 100 / total) : 100;
    if (dr->stream && (pct > dr->last_pct || done == total)) {
        dr->last_pct = pct;
        nd_line(r, json_pack("{s:s,s:I,s:I}", "event", "progress", "done", (json_int_t)done,
                             "total", (json_int_t)total));
        req_notify(r);
    }
    pthread_mutex_unlock(&r->lock);
}

/* The job's end: the owner answers (status: the fy_job_state). */
static void view_end(void *user, int state)
{
    req_work_done(user, state);
}

/* The view stops (client gone, shutdown): its job is deleted. Owner's thread. */
static void view_cancel(req *r)
{
    docreq *dr = r->doc;
    if (!dr || !dr->id[0]) return;
    fy_jobs_unwatch(r->srv->jobs, dr->id);
    if (!dr->ok) fy_jobs_remove(r->srv->jobs, dr->id, NULL);
    dr->view = 0;
}

/* The upload, token and languages of a view, submitted. -1 after a reply. */
static int view_submit(req *r, int stream, fy_job_info *info)
{
    if (doc_available(r)) return -1;
    if (!(r->doc = calloc(1, sizeof *r->doc))) return reply_error(r, 500, "out of memory"), -1;
    r->doc->stream = stream;
    const char *inl = req_arg(r, "inline");
    r->doc->inline_data = !inl || strcmp(inl, "0");
    upload u = {0};
    langs lg;
    int rc = upload_read(r, &u, stream);
    if (!rc) rc = auth_token(r, upload_field(&u, "api_key"));
    const char *src = upload_field(&u, "source"), *tgt = upload_field(&u, "target");
    if (!rc)
        rc = task_langs(r, "source", src && *src ? src : "auto", "target", tgt && *tgt ? tgt : NULL,
                        !stream, &lg);
    fy_job_spec spec = {0};
    if (!rc) rc = doc_glossary(r, &u, &lg, &spec);
    if (!rc) {
        spec.source = lg.src;
        spec.target = lg.tgt;
        fy_jobs_watch w = {view_progress, view_end, r};
        req_work_begin(r); /* before: the job may end before the submit returns */
        rc = doc_submit(r, &u, &spec, &w, info);
    }
    upload_free(&u);
    return rc;
}

/* ---- POST /translate_file (LibreTranslate) ------------------------------------------------ */

/* The job ended (status: its state). */
static enum MHD_Result libre_done(req *r, int status)
{
    docreq *dr = r->doc;
    fy_job_info info;
    fy_error err = {0};
    if (fy_jobs_get(r->srv->jobs, dr->id, &info, &err))
        return reply_error(r, doc_status(err.code), "%s", err.msg);
    if (status == FY_JOB_ERROR || info.state == FY_JOB_ERROR)
        return reply_error(r, doc_status(info.code), "%s", info.error);
    if (info.state != FY_JOB_DONE)
        return reply_error(r, 503, "the document was not translated (the server is stopping)");
    dr->ok = 1;
    dr->out_bytes = info.result_bytes;
    fy_buf url = {0};
    doc_base_url(r, &url);
    fy_buf_printf(&url, "%s%s.", DOWNLOAD_PREFIX, dr->id);
    doc_pct(&url, dr->name);
    json_t *body = url.oom ? NULL : json_pack("{s:s}", "translatedFileUrl", url.p);
    fy_buf_free(&url);
    if (!body) return reply_error(r, 500, "out of memory");
    return reply_json(r, 200, body);
}

static enum MHD_Result api_translate_file(req *r)
{
    fy_job_info info;
    r->cancel = view_cancel;
    if (view_submit(r, 0, &info)) {
        req_cancel(r);
        return REPLIED(r);
    }
    r->phase = PH_WAIT;
    r->resume = libre_done;
    return req_park(r);
}

/* ---- POST /translate/document (native, NDJSON) ---------------------------------------------- */

static json_t *error_event(int status, const char *msg)
{
    return json_pack("{s:s,s:i,s:{s:s,s:s}}", "event", "error", "status", status, "error", "code",
                     http_code_name(status), "message", msg);
}

/* The line after the job ended (status: its state); r->lock not held. */
static void nd_finish(req *r, int status)
{
    docreq *dr = r->doc;
    fy_job_info info;
    fy_error err = {0};
    char *data = NULL;
    size_t len = 0;
    json_t *ev;
    int rc = fy_jobs_result(r->srv->jobs, dr->id, &data, &len, &info, &err);
    if (rc == FY_EBUSY && info.state == FY_JOB_ERROR) {
        dr->final_status = doc_status(info.code);
        ev = error_event(dr->final_status, info.error);
    } else if (rc || status != FY_JOB_DONE) {
        dr->final_status = rc && rc != FY_EBUSY ? doc_status(rc) : 503;
        ev = error_event(dr->final_status, rc && rc != FY_EBUSY ? err.msg
                                                                : "the document was not translated "
                                                                  "(the server is stopping)");
    } else {
        fy_buf url = {0}, b64 = {0};
        fy_buf_printf(&url, "%s%s.", DOWNLOAD_PREFIX, dr->id);
        doc_pct(&url, dr->name);
        if (dr->inline_data) base64(&b64, data, len);
        ev = json_pack("{s:s,s:s,s:s,s:I,s:s,s:s,s:s}", "event", "done", "filename", dr->name,
                       "content_type", info.mime, "bytes", (json_int_t)len, "url",
                       url.p ? url.p : "", "data", b64.p ? b64.p : "", "direction", dr->direction);
        if (!dr->inline_data) json_object_del(ev, "data");
        fy_buf_free(&url);
        fy_buf_free(&b64);
        dr->ok = 1;
        dr->out_bytes = len;
        dr->final_status = 200;
    }
    free(data);
    pthread_mutex_lock(&r->lock);
    nd_line(r, ev);
    dr->ended = 1;
    pthread_mutex_unlock(&r->lock);
}

/* The server is stopping (or the client left): the job is deleted and the
 * stream ends with an error line. r->lock not held. */
static void nd_cut(req *r)
{
    docreq *dr = r->doc;
    fy_job_info info = {0};
    fy_jobs_get(r->srv->jobs, dr->id, &info, NULL);
    req_cancel(r);
    char msg[200];
    snprintf(msg, sizeof msg,
             "the server is shutting down: the document was not finished (%zu of %zu sentences "
             "translated); retry",
             info.done, info.sentences);
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
        int st = 0;
        unsigned long events = 0;
        int state = req_look(r, &st, &events);
        if (state == WAIT_PENDING && !req_sleep(r, events)) return 0;
        /* the job's calls take r->lock */
        pthread_mutex_unlock(&r->lock);
        if (state == WAIT_CUT) nd_cut(r);
        if (state == WAIT_DONE) nd_finish(r, st);
        pthread_mutex_lock(&r->lock);
    }
}

static enum MHD_Result api_translate_document(req *r)
{
    fy_job_info info;
    r->cancel = view_cancel;
    if (view_submit(r, 1, &info)) {
        req_cancel(r);
        return REPLIED(r);
    }
    json_t *start =
        json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:s}", "event", "start", "filename", info.name,
                  "format", info.format, "source", info.detected, "target", info.target,
                  "paragraphs", (json_int_t)info.units, "sentences", (json_int_t)info.sentences,
                  "bytes", (json_int_t)info.bytes, "id", info.id);
    if (info.pages) json_object_set_new(start, "pages", json_integer((json_int_t)info.pages));
    pthread_mutex_lock(&r->lock);
    nd_line(r, start);
    r->sse = 1; /* a stream: the log counts a cut one as 499 */
    pthread_mutex_unlock(&r->lock);
    return reply_stream(r, "application/x-ndjson; charset=utf-8", 65536, nd_read);
}

/* ---- GET /download_file/<id>.<name> ---------------------------------------------------- */

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
    if (doc_available(r)) return REPLIED(r);
    char id[33];
    memcpy(id, rest, 32);
    id[32] = '\0';
    char *data = NULL;
    size_t len = 0;
    fy_job_info info;
    fy_error err = {0};
    int rc = fy_jobs_result(r->srv->jobs, id, &data, &len, &info, &err);
    /* A job made through DeepL's API is its key holder's only. */
    if (!rc && (strcmp(info.name, name) || info.key[0])) {
        free(data);
        rc = FY_ENOTFOUND;
    }
    if (rc == FY_ENOTFOUND || rc == FY_EBUSY)
        return reply_error(r, 404,
                           "no such translated file (it expired after --download-ttl, or was "
                           "never made)");
    if (rc) return reply_error(r, doc_status(rc), "%s", err.msg);
    return doc_reply_file(r, data, len, info.mime, name);
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
