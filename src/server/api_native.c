/* api_native.c - Fanyi's own API: POST /translate {"text": ...} and the
 * streaming POST /translate/stream (server-sent events, one per sentence as
 * soon as it is translated, then "done" with the whole translation).
 * POST /translate is shared with LibreTranslate and DeepLX, told apart by
 * the body: "q" is LibreTranslate's, "source_lang"/"target_lang" DeepLX's. */
#include "server/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads the common fields into the request; -1 after a reply. */
static int native_request(req *r, json_t *in)
{
    const char *src, *tgt;
    int html;
    langs lg;
    if (field_string(r, in, "source", "auto", &src) || field_string(r, in, "target", NULL, &tgt) ||
        field_bool(r, in, "html", 0, &html) || task_langs(r, "source", src, "target", tgt, 0, &lg))
        return -1;
    return task_texts(r, in, "text", 1, html, &lg);
}

/* Each text's source and target language: a string, or an array like the texts. */
static json_t *languages(req *r, int target)
{
    json_t *arr = r->array ? json_array() : NULL;
    for (size_t i = 0; i < task_count(r); i++) {
        const char *l = target ? fy_request_target(r->q, i) : task_lang(r, i);
        if (!arr) return json_string(l);
        json_array_append_new(arr, json_string(l));
    }
    return arr ? arr : json_string("");
}

static json_t *native_body(req *r, const char *field)
{
    json_t *t = task_join_json(r);
    return t ? json_pack("{s:o,s:o,s:o}", field, t, "source", languages(r, 0), "target",
                         languages(r, 1))
             : NULL;
}

static enum MHD_Result native_finish(req *r)
{
    json_t *body = native_body(r, "translation");
    if (!body) return reply_error(r, 500, "out of memory");
    return reply_json(r, 200, body);
}

enum MHD_Result api_native(req *r, json_t *in)
{
    if (native_request(r, in)) return REPLIED(r);
    return task_submit(r, native_finish);
}

enum MHD_Result api_translate(req *r)
{
    /* Decide the dialect first, so that even authentication errors come
     * in the client's own shape. */
    char msg[300];
    int status;
    json_t *peek = req_body_parse(r, &status, msg, sizeof msg);
    if (peek && json_object_get(peek, "q") && !json_object_get(peek, "text")) {
        r->endpoint = "libre_translate";
        r->dialect = D_LIBRE;
    } else if (peek &&
               (json_object_get(peek, "source_lang") || json_object_get(peek, "target_lang"))) {
        /* DeepLX plug-ins are configured with .../translate: its field names. */
        r->endpoint = "deeplx";
        r->dialect = D_DEEPLX;
    }
    json_t *in = api_body(r);
    if (!in) return REPLIED(r);
    if (r->dialect == D_DEEPLX) return api_deeplx_body(r, in);
    return r->dialect == D_LIBRE ? api_libre(r, in) : api_native(r, in);
}

/* ---- server-sent events -------------------------------------------------- */

/* Appends one event; r->lock held. A failed allocation loses the event,
 * and the stream ends with the final event's error instead (ev.oom). */
static void ev_append(req *r, const char *event, json_t *data)
{
    char *text = json_dumps(data, JSON_COMPACT);
    json_decref(data);
    if (!text) {
        r->ev.oom = 1;
        return;
    }
    fy_buf_printf(&r->ev, "event: %s\ndata: %s\n\n", event, text);
    free(text);
}

static void wake(req *r)
{
    if (r->suspended) {
        r->suspended = 0;
        MHD_resume_connection(r->conn);
    }
}

/* Called by the request for each sentence, in order, rendered as it will
 * stand in the final text. */
void sse_sentence(void *user, size_t text, size_t sentence, const char *rendered, size_t len)
{
    req *r = user;
    json_t *ev = json_pack("{s:I,s:I,s:I,s:s,s:s%}", "index", (json_int_t)r->ev_count, "text",
                           (json_int_t)text, "sentence", (json_int_t)sentence, "source",
                           fy_request_sentence(r->q, text, sentence), "translation", rendered, len);
    pthread_mutex_lock(&r->lock);
    r->ev_count++;
    if (ev)
        ev_append(r, "sentence", ev);
    else
        r->ev.oom = 1; /* one event per sentence, or the stream fails: never a gap */
    wake(r);
    pthread_mutex_unlock(&r->lock);
}

/* The final event once the job is over (no callbacks can run any more). */
static void sse_final(req *r, int status)
{
    json_t *ev;
    const char *name = "done";
    if (status == 0) {
        ev = native_body(r, "translation");
    } else {
        name = "error";
        const char *code = status == FY_ETIMEOUT    ? "timeout"
                           : status == FY_ECANCELED ? "unavailable"
                                                    : "internal_error";
        fy_error err = {0};
        fy_request_status(r->q, &err);
        ev = json_pack("{s:{s:s,s:s}}", "error", "code", code, "message",
                       err.msg[0] ? err.msg : "translation failed");
    }
    pthread_mutex_lock(&r->lock);
    if (ev) ev_append(r, name, ev);
    r->ev_end = 1;
    pthread_mutex_unlock(&r->lock);
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    req *r = cls;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        if (r->ev.oom) { /* an event was lost: better no stream end than a wrong one */
            pthread_mutex_unlock(&r->lock);
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
        if (r->ev_pos < r->ev.n) {
            size_t n = r->ev.n - r->ev_pos;
            if (n > max) n = max;
            memcpy(buf, r->ev.p + r->ev_pos, n);
            r->ev_pos += n;
            pthread_mutex_unlock(&r->lock);
            return (ssize_t)n;
        }
        if (r->ev_end) {
            pthread_mutex_unlock(&r->lock);
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        if (!r->job_done) break;
        int st = r->job_status;
        pthread_mutex_unlock(&r->lock); /* joining reads the job: not under r->lock */
        sse_final(r, st);
        pthread_mutex_lock(&r->lock);
    }
    r->suspended = 1;
    MHD_suspend_connection(r->conn);
    pthread_mutex_unlock(&r->lock);
    return 0;
}

static enum MHD_Result stream_start(req *r)
{
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, sse_read, r, NULL);
    if (!resp) return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", "text/event-stream; charset=utf-8");
    MHD_add_response_header(resp, "Cache-Control", "no-cache");
    MHD_add_response_header(resp, "X-Accel-Buffering", "no");
    return reply_queue(r, 200, resp);
}

enum MHD_Result api_native_stream(req *r)
{
    json_t *in = api_body(r);
    if (!in || native_request(r, in)) return REPLIED(r);
    r->sse = 1;
    return task_submit(r, stream_start);
}
