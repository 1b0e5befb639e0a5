/* api_native.c - Fanyi's own API: POST /translate {"text": ...} and the
 * streaming POST /translate/stream (server-sent events, one per sentence as
 * soon as it is translated, then "done" with the whole translation).
 * POST /translate is shared with LibreTranslate and DeepLX, told apart by
 * the body: "q" is LibreTranslate's, "source_lang"/"target_lang" DeepLX's.
 * With "spans": true the answer says where each sentence is in the source
 * and in the translation, in UTF-16 code units (what a browser's strings
 * count), for the web UI's sentence highlighting. "glossary" (an object of
 * terms, or TSV) and "glossary_id" (a stored glossary) make the translation
 * use their terms; "scores": true adds each sentence's confidence
 * ("scores" in the answer, "score" in each streamed sentence). */
#include "server/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the dialect ----------------------------------------------------------- */

const char *http_code_name(int status)
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

json_t *native_error(int status, const char *msg)
{
    return json_pack("{s:{s:s,s:s}}", "error", "code", http_code_name(status), "message", msg);
}

static enum MHD_Result api_translate(req *r);
static enum MHD_Result api_native_stream(req *r);

static const route native_routes[] = {
    /* Shared with LibreTranslate and DeepLX (told apart by the body), so
     * it answers any origin as LibreTranslate's routes do. */
    {"POST", "/translate", "translate", 1, 1, api_translate, NULL},
    {"POST", "/translate/stream", "translate_stream", 1, 0, api_native_stream, NULL},
};

const dialect dialect_native = {
    "native", native_routes, sizeof native_routes / sizeof *native_routes, native_error, NULL, 0};

/* The search fields: "beam" (default: the server's) and "alternatives"
 * (default: all the beam finds, beam - 1); -1 after a reply. */
static int native_beam(req *r, json_t *in)
{
    int max, def = fy_registry_beam(r->srv->reg, &max);
    long beam, alts;
    if (field_int(r, in, "beam", 0, 1, max, &beam) ||
        field_int(r, in, "alternatives", -1, 0, max - 1, &alts))
        return -1;
    r->beam = (int)beam;
    r->alternatives = alts >= 0 ? (int)alts : (beam ? (int)beam : def) - 1;
    return 0;
}

/* The glossaries: "glossary" (an object of terms, or TSV text) and
 * "glossary_id" (a stored one); -1 after a reply. */
static int native_glossaries(req *r, json_t *in, const langs *lg)
{
    const char *id;
    json_t *g = json_object_get(in, "glossary");
    if (field_string(r, in, "glossary_id", NULL, &id)) return -1;
    if (g && !json_is_null(g) && task_glossary_inline(r, "glossary", g, lg)) return -1;
    return id && *id ? task_glossary_id(r, "glossary_id", id, lg) : 0;
}

/* Reads the common fields into the request; -1 after a reply. */
static int native_request(req *r, json_t *in)
{
    const char *src, *tgt;
    int html;
    langs lg;
    if (field_string(r, in, "source", "auto", &src) || field_string(r, in, "target", NULL, &tgt) ||
        field_bool(r, in, "html", 0, &html) || field_bool(r, in, "spans", 0, &r->spans) ||
        field_bool(r, in, "scores", 0, &r->scores) || native_beam(r, in) ||
        task_langs(r, "source", src, "target", tgt, 0, &lg) || native_glossaries(r, in, &lg))
        return -1;
    return task_texts(r, in, "text", 1, html, &lg);
}

/* ---- spans in UTF-16 code units ------------------------------------------- */

/* UTF-16 code units of UTF-8 s[0..n): one per character, two above U+FFFF. */
static size_t u16_units(const char *s, size_t n)
{
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        u += (c & 0xC0) != 0x80;
        u += c >= 0xF0;
    }
    return u;
}

/* [start, len] of bytes s[start..start+len) in UTF-16 units; *at_byte and
 * *at_u16 are a place before start already converted (spans come in order). */
static json_t *u16_span(const char *s, size_t start, size_t len, size_t *at_byte, size_t *at_u16)
{
    *at_u16 += u16_units(s + *at_byte, start - *at_byte);
    *at_byte = start;
    return json_pack("[I,I]", (json_int_t)*at_u16, (json_int_t)u16_units(s + start, len));
}

/* Text i as the client sent it. */
static const char *source_text(req *r, size_t i)
{
    json_t *t = json_object_get(r->in, "text");
    return json_string_value(r->array ? json_array_get(t, i) : t);
}

/* Text i's sentences: [{"source": [start, len], "translation": [start, len]}]
 * for its translation out (with spans, 2 per sentence, in bytes). */
static json_t *sentence_spans(req *r, size_t i, const char *out, const size_t *spans)
{
    const char *src = source_text(r, i);
    json_t *list = json_array();
    size_t sb = 0, su = 0, tb = 0, tu = 0;
    for (size_t k = 0; src && list && k < fy_request_text_sentences(r->q, i); k++) {
        size_t start = 0, len = 0;
        fy_request_sentence_span(r->q, i, k, &start, &len);
        json_t *one =
            json_pack("{s:o,s:o}", "source", u16_span(src, start, len, &sb, &su), "translation",
                      u16_span(out, spans[2 * k], spans[2 * k + 1], &tb, &tu));
        if (!one || json_array_append_new(list, one)) {
            json_decref(list);
            return NULL;
        }
    }
    return list;
}

/* Each text's translation, and with spans its sentences, as the body has
 * them: one text, or arrays in the texts' order. NULL when out of memory. */
static int native_texts(req *r, json_t **translation, json_t **sentences)
{
    *translation = r->array ? json_array() : NULL;
    *sentences = r->spans && r->array ? json_array() : NULL;
    int ok = !r->array || (*translation && (!r->spans || *sentences));
    for (size_t i = 0; ok && i < task_count(r); i++) {
        size_t n = fy_request_text_sentences(r->q, i);
        size_t *spans = calloc(2 * n + 1, sizeof *spans);
        fy_error err = {0};
        char *s = spans ? fy_request_text(r->q, i, NULL, spans, &err) : NULL;
        json_t *t = s ? json_string(s) : NULL;
        json_t *sp = s && r->spans ? sentence_spans(r, i, s, spans) : NULL;
        free(s);
        free(spans);
        ok = t && (!r->spans || sp);
        if (!r->array) {
            *translation = t;
            *sentences = sp;
        } else if (ok) {
            json_array_append_new(*translation, t);
            if (sp) json_array_append_new(*sentences, sp);
        } else {
            json_decref(t);
            json_decref(sp);
        }
    }
    if (!ok) {
        json_decref(*translation);
        json_decref(*sentences);
        *translation = *sentences = NULL;
    }
    return ok ? 0 : -1;
}

/* Each text's sentences' confidence: an array, or an array of them like the texts. */
static json_t *scores(req *r)
{
    json_t *arr = r->array ? json_array() : NULL;
    for (size_t i = 0; i < task_count(r); i++) {
        json_t *one = task_scores_json(r, i);
        if (!arr) return one;
        if (!one || json_array_append_new(arr, one)) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr ? arr : json_array();
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
    json_t *t, *sentences;
    if (native_texts(r, &t, &sentences)) return NULL;
    json_t *alts = task_alternatives_json(r);
    if (!alts) {
        json_decref(t);
        json_decref(sentences);
        return NULL;
    }
    json_t *body = json_pack("{s:o,s:o,s:o,s:o}", field, t, "alternatives", alts, "source",
                             languages(r, 0), "target", languages(r, 1));
    if (body && sentences) json_object_set_new(body, "sentences", sentences);
    json_t *sc = body && r->scores ? scores(r) : NULL;
    if (body && r->scores && (!sc || json_object_set_new(body, "scores", sc))) {
        json_decref(body);
        return NULL;
    }
    return body;
}

static enum MHD_Result native_finish(req *r)
{
    json_t *body = native_body(r, "translation");
    if (!body) return reply_error(r, 500, "out of memory");
    return reply_json(r, 200, body);
}

static enum MHD_Result api_native(req *r, json_t *in)
{
    if (native_request(r, in)) return REPLIED(r);
    return task_submit(r, native_finish);
}

static enum MHD_Result api_translate(req *r)
{
    /* Decide the dialect first, so that even authentication errors come
     * in the client's own shape. */
    char msg[300];
    int status;
    json_t *peek = req_body_parse(r, &status, msg, sizeof msg);
    if (peek && json_object_get(peek, "q") && !json_object_get(peek, "text")) {
        r->endpoint = "libre_translate";
        r->dialect = &dialect_libre;
    } else if (peek &&
               (json_object_get(peek, "source_lang") || json_object_get(peek, "target_lang"))) {
        /* DeepLX plug-ins are configured with .../translate: its field names. */
        r->endpoint = "deeplx";
        r->dialect = &dialect_deeplx;
    }
    json_t *in = api_body(r);
    if (!in) return REPLIED(r);
    if (r->dialect == &dialect_deeplx) return api_deeplx_body(r, in);
    return r->dialect == &dialect_libre ? api_libre(r, in) : api_native(r, in);
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

/* Called by the request for each sentence, in order, rendered as it will
 * stand in the final text. */
/* With spans: what goes before the sentence in the final text, and where
 * it came from in its text (r->ev_* carry the conversion between events). */
static int sse_spans(req *r, json_t *ev, size_t text, size_t sentence, const char *before,
                     size_t before_len)
{
    size_t start = 0, len = 0;
    const char *src = source_text(r, text);
    if (text != r->ev_text) r->ev_text = text, r->ev_byte = r->ev_u16 = 0;
    fy_request_sentence_span(r->q, text, sentence, &start, &len);
    return !src || json_object_set_new(ev, "before", json_stringn(before, before_len)) ||
           json_object_set_new(ev, "source_span",
                               u16_span(src, start, len, &r->ev_byte, &r->ev_u16));
}

void sse_sentence(void *user, size_t text, size_t sentence, const char *before, size_t before_len,
                  const char *rendered, size_t len)
{
    req *r = user;
    json_t *ev = json_pack("{s:I,s:I,s:I,s:s,s:s%}", "index", (json_int_t)r->ev_count, "text",
                           (json_int_t)text, "sentence", (json_int_t)sentence, "source",
                           fy_request_sentence(r->q, text, sentence), "translation", rendered, len);
    if (ev && r->spans && sse_spans(r, ev, text, sentence, before, before_len)) {
        json_decref(ev);
        ev = NULL;
    }
    if (ev && r->scores &&
        json_object_set_new(ev, "score",
                            confidence_json(fy_request_confidence(r->q, text, sentence)))) {
        json_decref(ev);
        ev = NULL;
    }
    pthread_mutex_lock(&r->lock);
    r->ev_count++;
    if (ev)
        ev_append(r, "sentence", ev);
    else
        r->ev.oom = 1; /* one event per sentence, or the stream fails: never a gap */
    req_notify(r);
    pthread_mutex_unlock(&r->lock);
}

/* The final event once the job is over (no callbacks can run any more):
 * "done", or "error" (FY_ECANCELED: the server stopped it). */
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
        const char *msg = status == FY_ECANCELED ? "the server is shutting down; retry"
                          : err.msg[0]           ? err.msg
                                                 : "translation failed";
        ev = json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", msg);
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
        ssize_t got = stream_take(&r->ev, &r->ev_pos, r->ev_end, req_gone(r), buf, max);
        if (got) {
            pthread_mutex_unlock(&r->lock);
            return got;
        }
        int st;
        unsigned long events;
        int state = req_look(r, &st, &events);
        if (state == WAIT_PENDING && !req_sleep(r, events)) return 0;
        pthread_mutex_unlock(&r->lock); /* joining reads the job: not under r->lock */
        if (state == WAIT_CUT) {
            req_cancel(r);
            st = FY_ECANCELED;
        }
        if (state != WAIT_PENDING) sse_final(r, st);
        pthread_mutex_lock(&r->lock);
    }
}

static enum MHD_Result stream_start(req *r)
{
    return reply_stream(r, "text/event-stream; charset=utf-8", 4096, sse_read);
}

static enum MHD_Result api_native_stream(req *r)
{
    json_t *in = api_body(r);
    if (!in || native_request(r, in)) return REPLIED(r);
    r->sse = 1;
    return task_submit(r, stream_start);
}
