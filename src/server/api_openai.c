/* api_openai.c - an OpenAI-compatible API for the translation plug-ins
 * that call one (Immersive Translate, Kiss Translator, openai-translator,
 * pot-desktop, Bob): POST /v1/chat/completions (plain, or stream: true as
 * server-sent chat.completion.chunk events ending with "data: [DONE]"),
 * POST /v1/responses (Bob; plain or streamed as response.* events) and
 * GET /v1/models (one model per direction, and "fanyi" for any; a name
 * it does not know is served as "fanyi" unless --openai-models strict).
 *
 * This is no chat model: the last user message (with the system message)
 * must be one of the plug-ins' translation prompts (prompt.h), which say
 * the target language and hold the text; anything else is a 400 in
 * OpenAI's error shape. The answer is the translation, with usage counted
 * in the engine's tokens (what the models read and wrote).
 *
 * Streaming: each text's translation grows as its sentences arrive; the
 * reader sends, on every wake-up, the part of it that is final
 * (fy_request_text_partial), so the deltas add up to the plain answer.
 */
#include "server/internal.h"
#include "server/prompt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { OA_CHAT, OA_RESPONSES };

/* A request's state while it is answered (r->ctx). */
typedef struct oa {
    int api; /* OA_CHAT or OA_RESPONSES */
    prompt p;
    char *model;              /* the name the request gave, echoed in the answer */
    char id[64], item_id[64]; /* chatcmpl-..., resp_... and its message msg_... */
    long long created;
    int usage;            /* chat stream: stream_options.include_usage */
    size_t text;          /* streaming: the text being sent */
    size_t sent;          /* bytes of it sent */
    long long seq;        /* responses stream: the next event's sequence_number */
    fy_buf whole;         /* responses stream: the content so far (for the *.done events) */
    long tok_in, tok_out; /* usage, once counted (count_usage) */
    int counted;
    unsigned long seen; /* streaming: the reports (req_look) the reader has acted on */
} oa;

static void oa_free(void *ctx)
{
    oa *o = ctx;
    if (!o) return;
    prompt_free(&o->p);
    fy_buf_free(&o->whole);
    free(o->model);
    free(o);
}

/* An error in OpenAI's shape with a code of its own (model_not_found). */
static enum MHD_Result oa_error(req *r, int status, const char *code, const char *param,
                                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static enum MHD_Result oa_error(req *r, int status, const char *code, const char *param,
                                const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    utf8_scrub(msg); /* it may quote the model's name, cut short */
    json_t *body = json_pack("{s:{s:s,s:s,s:o,s:s}}", "error", "message", msg, "type",
                             status < 500 ? "invalid_request_error" : "server_error", "param",
                             param ? json_string(param) : json_null(), "code", code);
    return reply_json(r, status, body);
}

/* ---- GET /v1/models -------------------------------------------------------------- */

static json_t *model_entry(req *r, const char *id)
{
    return json_pack("{s:s,s:s,s:I,s:s}", "id", id, "object", "model", "created",
                     (json_int_t)r->srv->started_s, "owned_by", "fanyi");
}

static enum MHD_Result api_openai_models(req *r)
{
    fy_registry *reg = r->srv->reg;
    char src[64][FY_LANG_MAX], tgt[64][FY_LANG_MAX], name[FY_PAIR_MAX];
    json_t *data = json_array();
    json_array_append_new(data, model_entry(r, "fanyi"));
    size_t ns = fy_registry_sources(reg, src, 64);
    for (size_t i = 0; i < ns; i++) {
        size_t nt = fy_registry_targets(reg, src[i], tgt, 64);
        for (size_t k = 0; k < nt; k++) {
            fy_lang_pair_name(src[i], tgt[k], name, sizeof name);
            json_array_append_new(data, model_entry(r, name));
        }
    }
    return reply_json(r, 200, json_pack("{s:s,s:o}", "object", "list", "data", data));
}

/* ---- reading the request ---------------------------------------------------------- */

/* A message's text: a string, or the text parts of an array of parts
 * ({"type": "text"|"input_text", "text": ...}) joined. A new buffer in b;
 * -1 when it is neither. */
static int content_text(json_t *content, fy_buf *b)
{
    if (json_is_string(content)) {
        fy_buf_put(b, json_string_value(content), json_string_length(content));
        return 0;
    }
    if (!json_is_array(content)) return -1;
    size_t i;
    json_t *part;
    json_array_foreach(content, i, part)
    {
        const char *type = json_string_value(json_object_get(part, "type"));
        json_t *text = json_object_get(part, "text");
        if (!type || (strcmp(type, "text") && strcmp(type, "input_text")) || !json_is_string(text))
            return -1;
        fy_buf_put(b, json_string_value(text), json_string_length(text));
    }
    return 0;
}

/* The first system (or developer) message and the last user message of a
 * list of {"role", "content"}; -1 after a 400 naming the field. */
static int read_messages(req *r, json_t *list, const char *field, fy_buf *sys, fy_buf *user)
{
    size_t i, users = 0;
    json_t *m;
    int have_sys = sys->n > 0;
    json_array_foreach(list, i, m)
    {
        const char *role = json_string_value(json_object_get(m, "role"));
        if (!role) {
            oa_error(r, 400, "invalid_request", field, "%s[%zu] must be an object with a 'role'",
                     field, i);
            return -1;
        }
        int is_sys = !strcmp(role, "system") || !strcmp(role, "developer");
        if (strcmp(role, "user") && !is_sys) continue; /* assistant turns: the plug-ins' history */
        fy_buf *to = is_sys ? sys : user;
        if (is_sys && have_sys) continue;
        to->n = 0;
        if (content_text(json_object_get(m, "content"), to)) {
            oa_error(r, 400, "invalid_request", field,
                     "%s[%zu].content must be a string or a list of text parts", field, i);
            return -1;
        }
        have_sys |= is_sys;
        users += !is_sys;
    }
    if (!users) {
        oa_error(r, 400, "invalid_request", field, "'%s' holds no user message", field);
        return -1;
    }
    return 0;
}

/* The directions a model id stands for: a direction served here ("zh-en"),
 * or any (the prompt says which): "fanyi", and every other name unless
 * --openai-models strict. The plug-ins send their default model names
 * (gpt-4o-mini, gpt-3.5-turbo) and a user who only changes the URL should
 * get translations; the answer echoes the name asked for. 0, or -1 after a
 * 404/400. */
static int read_model(req *r, json_t *in, char src[FY_LANG_MAX], char tgt[FY_LANG_MAX], oa *o)
{
    const char *model = json_string_value(json_object_get(in, "model"));
    src[0] = tgt[0] = '\0';
    if (!model || !*model) {
        oa_error(r, 400, "invalid_request", "model",
                 "'model' is required: \"fanyi\", or a direction from GET /v1/models");
        return -1;
    }
    if (!(o->model = strdup(model))) {
        reply_error(r, 500, "out of memory");
        return -1;
    }
    if (!strcmp(model, "fanyi")) return 0;
    if (!fy_lang_pair_parse(model, src, tgt) && fy_registry_route_kind(r->srv->reg, src, tgt))
        return 0;
    src[0] = tgt[0] = '\0';
    if (!r->srv->o.openai_strict) return 0;
    oa_error(r, 404, "model_not_found", "model",
             "The model '%.40s' does not exist here: use \"fanyi\" (any direction, as the "
             "prompt asks) or a direction from GET /v1/models",
             model);
    return -1;
}

/* The languages of the request: the prompt's, checked against the
 * model's direction. 0, or -1 after a 400. */
static int pick_langs(req *r, oa *o, const char *msrc, const char *mtgt, langs *lg)
{
    memset(lg, 0, sizeof *lg);
    lg->sfield = lg->tfield = "messages";
    snprintf(lg->tgt, sizeof lg->tgt, "%s", o->p.target);
    snprintf(lg->src, sizeof lg->src, "%s", o->p.source[0] ? o->p.source : msrc);
    if (mtgt[0] && strcmp(mtgt, o->p.target)) {
        oa_error(r, 400, "invalid_request", "model",
                 "the model '%s' translates into %s, but the %s prompt asks for %s: use the model "
                 "\"fanyi\" (any direction)",
                 o->model, mtgt, o->p.client, o->p.target);
        return -1;
    }
    if (msrc[0] && o->p.source[0] && strcmp(msrc, o->p.source)) {
        oa_error(r, 400, "invalid_request", "model",
                 "the model '%s' translates from %s, but the %s prompt says the text is %s: use "
                 "the model \"fanyi\"",
                 o->model, msrc, o->p.client, o->p.source);
        return -1;
    }
    if (lg->src[0] && strcmp(lg->src, lg->tgt) &&
        !fy_registry_route_kind(r->srv->reg, lg->src, lg->tgt)) {
        char pairs[512];
        fy_registry_describe(r->srv->reg, pairs, sizeof pairs);
        oa_error(r, 400, "unsupported_language_pair", "messages",
                 "the %s prompt asks for %s->%s; this server translates %s, and through English "
                 "between them",
                 o->p.client, lg->src, lg->tgt, pairs);
        return -1;
    }
    return 0;
}

/* The prompt's texts as the request: -1 after a reply. */
static int make_texts(req *r, oa *o, const langs *lg)
{
    json_t *texts =
        o->p.format == PROMPT_TEXT ? json_stringn(o->p.texts[0], o->p.lens[0]) : json_array();
    for (size_t i = 0; texts && o->p.format != PROMPT_TEXT && i < o->p.n; i++)
        json_array_append_new(texts, json_stringn(o->p.texts[i], o->p.lens[i]));
    json_t *holder =
        texts ? json_pack("{s:o}", o->p.format == PROMPT_TEXT ? "messages" : "segments", texts)
              : NULL;
    if (!holder) return reply_error(r, 500, "out of memory"), -1;
    r->placeholders = 1;
    int rc = task_texts(r, holder, o->p.format == PROMPT_TEXT ? "messages" : "segments", 1,
                        o->p.html, lg);
    json_decref(holder);
    return rc;
}

/* ---- answers ------------------------------------------------------------------------ */

static void usage_counts(req *r, long *in, long *out)
{
    *in = *out = 0;
    for (size_t i = 0; i < task_count(r); i++) {
        long a, b;
        fy_request_tokens(r->q, i, &a, &b);
        *in += a, *out += b;
    }
}

/* Counts the usage once. Takes the job's lock: never call it with r->lock
 * held (a sentence callback takes r->lock under the job's). */
static void count_usage(req *r, oa *o)
{
    if (!o->counted) usage_counts(r, &o->tok_in, &o->tok_out);
    o->counted = 1;
}

static json_t *usage_json(req *r, oa *o)
{
    count_usage(r, o); /* counted already when r->lock is held (stream_more) */
    long in = o->tok_in, out = o->tok_out;
    if (o->api == OA_CHAT)
        return json_pack("{s:I,s:I,s:I}", "prompt_tokens", (json_int_t)in, "completion_tokens",
                         (json_int_t)out, "total_tokens", (json_int_t)(in + out));
    return json_pack("{s:I,s:{s:i},s:I,s:{s:i},s:I}", "input_tokens", (json_int_t)in,
                     "input_tokens_details", "cached_tokens", 0, "output_tokens", (json_int_t)out,
                     "output_tokens_details", "reasoning_tokens", 0, "total_tokens",
                     (json_int_t)(in + out));
}

/* The whole answer's content (not streaming). NULL when out of memory. */
static char *whole_content(req *r, oa *o, size_t *len)
{
    fy_buf b = {0};
    prompt_answer_open(&o->p, &b);
    for (size_t i = 0; i < task_count(r); i++) {
        size_t n;
        char *t = fy_request_text(r->q, i, &n, NULL, &(fy_error){0});
        if (!t) b.oom = 1;
        if (t) prompt_answer_item(&o->p, i, t, n, task_lang(r, i), &b);
        free(t);
    }
    prompt_answer_close(&o->p, &b);
    if (!b.p && !b.oom) fy_buf_put(&b, "", 0);
    return fy_buf_take(&b, len);
}

static json_t *output_message(oa *o, const char *text, size_t len, const char *status)
{
    json_t *content = text ? json_pack("[{s:s,s:s%,s:[]}]", "type", "output_text", "text", text,
                                       len, "annotations")
                           : json_array();
    return json_pack("{s:s,s:s,s:s,s:s,s:o}", "id", o->item_id, "type", "message", "status", status,
                     "role", "assistant", "content", content);
}

/* The Responses API's response object. */
static json_t *response_object(req *r, oa *o, const char *status, const char *text, size_t len)
{
    json_t *output = json_array();
    if (text) json_array_append_new(output, output_message(o, text, len, "completed"));
    json_t *resp =
        json_pack("{s:s,s:s,s:I,s:s,s:n,s:n,s:s,s:o,s:b,s:f,s:f,s:s,s:[]}", "id", o->id, "object",
                  "response", "created_at", (json_int_t)o->created, "status", status, "error",
                  "incomplete_details", "model", o->model, "output", output, "parallel_tool_calls",
                  0, "temperature", 1.0, "top_p", 1.0, "tool_choice", "none", "tools");
    if (resp) json_object_set_new(resp, "usage", text ? usage_json(r, o) : json_null());
    return resp;
}

static enum MHD_Result oa_finish(req *r)
{
    oa *o = r->ctx;
    size_t len;
    char *content = whole_content(r, o, &len);
    if (!content) return reply_error(r, 500, "out of memory");
    json_t *body;
    if (o->api == OA_CHAT)
        body = json_pack("{s:s,s:s,s:I,s:s,s:[{s:i,s:{s:s,s:s%,s:n},s:n,s:s}],s:o}", "id", o->id,
                         "object", "chat.completion", "created", (json_int_t)o->created, "model",
                         o->model, "choices", "index", 0, "message", "role", "assistant", "content",
                         content, len, "refusal", "logprobs", "finish_reason", "stop", "usage",
                         usage_json(r, o));
    else
        body = response_object(r, o, "completed", content, len);
    free(content);
    if (!body) return reply_error(r, 500, "out of memory");
    return reply_json(r, 200, body);
}

/* ---- streaming ------------------------------------------------------------------------- */

/* Appends one event (event may be NULL: a data-only chat chunk); takes
 * data. r->lock held. */
static void ev_put(req *r, const char *event, json_t *data)
{
    char *s = data ? json_dumps(data, JSON_COMPACT) : NULL;
    json_decref(data);
    if (!s) {
        r->ev.oom = 1;
        return;
    }
    if (event) fy_buf_printf(&r->ev, "event: %s\n", event);
    fy_buf_printf(&r->ev, "data: %s\n\n", s);
    free(s);
}

static json_t *chat_chunk(oa *o, json_t *delta, const char *finish)
{
    return json_pack("{s:s,s:s,s:I,s:s,s:[{s:i,s:o,s:n,s:o}]}", "id", o->id, "object",
                     "chat.completion.chunk", "created", (json_int_t)o->created, "model", o->model,
                     "choices", "index", 0, "delta", delta, "logprobs", "finish_reason",
                     finish ? json_string(finish) : json_null());
}

/* A Responses API event of type with the fields of extra (taken). */
static void resp_event(req *r, const char *type, json_t *extra)
{
    oa *o = r->ctx;
    json_t *e = json_pack("{s:s,s:I}", "type", type, "sequence_number", (json_int_t)o->seq++);
    if (e && extra) json_object_update(e, extra);
    json_decref(extra);
    ev_put(r, type, e);
}

/* Sends content piece s[0..n) as a delta. r->lock held. */
static void put_delta(req *r, oa *o, const char *s, size_t n)
{
    if (!n) return;
    if (o->api == OA_CHAT) {
        ev_put(r, NULL, chat_chunk(o, json_pack("{s:s%}", "content", s, n), NULL));
        return;
    }
    fy_buf_put(&o->whole, s, n);
    resp_event(r, "response.output_text.delta",
               json_pack("{s:s,s:i,s:i,s:s%,s:[]}", "item_id", o->item_id, "output_index", 0,
                         "content_index", 0, "delta", s, n, "logprobs"));
}

/* The events that open a stream, and the answer's opening (Kiss
 * Translator's batch formats). r->lock held. */
static void stream_open(req *r, oa *o)
{
    fy_buf b = {0};
    prompt_answer_open(&o->p, &b);
    if (b.oom) r->ev.oom = 1;
    if (o->api == OA_CHAT) {
        ev_put(r, NULL,
               chat_chunk(o, json_pack("{s:s,s:s}", "role", "assistant", "content", ""), NULL));
        put_delta(r, o, b.p ? b.p : "", b.n);
        fy_buf_free(&b);
        return;
    }
    resp_event(r, "response.created",
               json_pack("{s:o}", "response", response_object(r, o, "in_progress", NULL, 0)));
    resp_event(r, "response.in_progress",
               json_pack("{s:o}", "response", response_object(r, o, "in_progress", NULL, 0)));
    resp_event(r, "response.output_item.added",
               json_pack("{s:i,s:o}", "output_index", 0, "item",
                         output_message(o, NULL, 0, "in_progress")));
    resp_event(r, "response.content_part.added",
               json_pack("{s:s,s:i,s:i,s:{s:s,s:s,s:[]}}", "item_id", o->item_id, "output_index", 0,
                         "content_index", 0, "part", "type", "output_text", "text", "",
                         "annotations"));
    put_delta(r, o, b.p ? b.p : "", b.n);
    fy_buf_free(&b);
}

/* The events that close a stream that succeeded. r->lock held. */
static void stream_close(req *r, oa *o)
{
    if (o->api == OA_CHAT) {
        ev_put(r, NULL, chat_chunk(o, json_object(), "stop"));
        if (o->usage) {
            json_t *c = json_pack("{s:s,s:s,s:I,s:s,s:[],s:o}", "id", o->id, "object",
                                  "chat.completion.chunk", "created", (json_int_t)o->created,
                                  "model", o->model, "choices", "usage", usage_json(r, o));
            ev_put(r, NULL, c);
        }
        fy_buf_printf(&r->ev, "data: [DONE]\n\n");
        return;
    }
    const char *t = o->whole.p ? o->whole.p : "";
    size_t n = o->whole.n;
    resp_event(r, "response.output_text.done",
               json_pack("{s:s,s:i,s:i,s:s%,s:[]}", "item_id", o->item_id, "output_index", 0,
                         "content_index", 0, "text", t, n, "logprobs"));
    resp_event(r, "response.content_part.done",
               json_pack("{s:s,s:i,s:i,s:{s:s,s:s%,s:[]}}", "item_id", o->item_id, "output_index",
                         0, "content_index", 0, "part", "type", "output_text", "text", t, n,
                         "annotations"));
    resp_event(
        r, "response.output_item.done",
        json_pack("{s:i,s:o}", "output_index", 0, "item", output_message(o, t, n, "completed")));
    resp_event(r, "response.completed",
               json_pack("{s:o}", "response", response_object(r, o, "completed", t, n)));
}

/* Why a stream's job failed, for its error event. Reads the job (takes
 * its lock): never with r->lock held. */
static void fail_message(req *r, int status, char *msg, size_t cap)
{
    fy_error err = {0};
    fy_request_status(r->q, &err);
    snprintf(msg, cap, "%s",
             status == FY_ETIMEOUT    ? "the translation did not finish in time"
             : status == FY_ECANCELED ? "the server is shutting down; retry"
             : err.msg[0]             ? err.msg
                                      : "translation failed");
}

/* A stream whose job failed ends with an error event. r->lock held. */
static void stream_fail(req *r, oa *o, int status, const char *msg)
{
    const char *code = status == FY_ETIMEOUT    ? "timeout"
                       : status == FY_ECANCELED ? "unavailable"
                                                : "internal_error";
    if (o->api == OA_CHAT) {
        ev_put(r, NULL,
               json_pack("{s:{s:s,s:s,s:n,s:s}}", "error", "message", msg, "type", "server_error",
                         "param", "code", code));
        fy_buf_printf(&r->ev, "data: [DONE]\n\n");
    } else {
        resp_event(r, "error", json_pack("{s:s,s:s,s:n}", "code", code, "message", msg, "param"));
    }
}

/* Appends what became final since the last call. Called without r->lock
 * (it reads the request); takes it to append. Returns 1 when the stream
 * has ended. */
static int stream_more(req *r, oa *o, int done, int status)
{
    fy_buf b = {0};
    size_t n = task_count(r);
    while (o->text < n) {
        size_t len, ready;
        char *t = fy_request_text_partial(r->q, o->text, &len, &ready, &(fy_error){0});
        if (!t) {
            b.oom = 1;
            break;
        }
        int whole = ready == len;
        if (o->p.format == PROMPT_TEXT && ready > o->sent)
            fy_buf_put(&b, t + o->sent, ready - o->sent);
        if (o->p.format != PROMPT_TEXT && whole)
            prompt_answer_item(&o->p, o->text, t, len, task_lang(r, o->text), &b);
        o->sent = ready;
        free(t);
        if (!whole) break;
        o->text++, o->sent = 0;
    }
    int end = done && (status || o->text == n);
    if (end && !status) prompt_answer_close(&o->p, &b);
    if (end && !status) count_usage(r, o); /* before r->lock: it takes the job's */
    char why[FY_ERROR_MSG_MAX];
    if (end && status) fail_message(r, status, why, sizeof why); /* likewise */
    pthread_mutex_lock(&r->lock);
    if (b.oom) r->ev.oom = 1;
    put_delta(r, o, b.p ? b.p : "", b.n);
    if (end && !status) stream_close(r, o);
    if (end && status) stream_fail(r, o, status, why);
    if (end) r->ev_end = 1;
    pthread_mutex_unlock(&r->lock);
    fy_buf_free(&b);
    return end;
}

/* A sentence arrived: wake the reader. */
static void oa_sentence(void *user, size_t text, size_t sentence, const char *before,
                        size_t before_len, const char *rendered, size_t len)
{
    (void)text, (void)sentence, (void)before, (void)before_len, (void)rendered, (void)len;
    req *r = user;
    pthread_mutex_lock(&r->lock);
    req_notify(r); /* the reader looks again before it sleeps */
    pthread_mutex_unlock(&r->lock);
}

static ssize_t oa_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    req *r = cls;
    oa *o = r->ctx;
    for (;;) {
        pthread_mutex_lock(&r->lock);
        ssize_t got = stream_take(&r->ev, &r->ev_pos, r->ev_end, req_gone(r), buf, max);
        if (got) {
            pthread_mutex_unlock(&r->lock);
            return got;
        }
        int st;
        unsigned long events;
        int state = req_look(r, &st, &events);
        /* Nothing reported since the last look: sleep until a sentence or the end. */
        if (state == WAIT_PENDING && events == o->seen && !req_sleep(r, events)) return 0;
        o->seen = events;
        pthread_mutex_unlock(&r->lock);
        if (state == WAIT_CUT) {
            req_cancel(r);
            st = FY_ECANCELED;
        }
        stream_more(r, o, state != WAIT_PENDING, st);
    }
}

static enum MHD_Result oa_stream_start(req *r)
{
    pthread_mutex_lock(&r->lock);
    stream_open(r, r->ctx);
    pthread_mutex_unlock(&r->lock);
    return reply_stream(r, "text/event-stream; charset=utf-8", 4096, oa_read);
}

/* ---- the endpoints ----------------------------------------------------------------------- */

static oa *oa_new(req *r, int api)
{
    oa *o = calloc(1, sizeof *o);
    if (!o) return NULL;
    o->api = api;
    o->created = (long long)time(NULL);
    snprintf(o->id, sizeof o->id, "%s%s", api == OA_CHAT ? "chatcmpl-" : "resp_", r->id);
    snprintf(o->item_id, sizeof o->item_id, "msg_%s", r->id);
    r->ctx = o;
    r->ctx_free = oa_free;
    return o;
}

/* Common to both APIs once the messages are read: the prompt, the
 * languages, the request, the answer (streamed or not). */
static enum MHD_Result oa_translate(req *r, json_t *in, oa *o, fy_buf *sys, fy_buf *user)
{
    char msrc[FY_LANG_MAX], mtgt[FY_LANG_MAX], why[512];
    langs lg;
    if (read_model(r, in, msrc, mtgt, o)) return REPLIED(r);
    json_t *stream = json_object_get(in, "stream");
    if (stream && !json_is_boolean(stream) && !json_is_null(stream))
        return oa_error(r, 400, "invalid_request", "stream", "'stream' must be a boolean");
    if (prompt_parse(sys->p, user->p ? user->p : "", user->n, &o->p, why, sizeof why))
        return oa_error(r, 400, "not_a_translation_prompt", "messages", "%s", why);
    if (pick_langs(r, o, msrc, mtgt, &lg) ||
        (o->p.glossary && task_glossary_inline(r, "glossary", o->p.glossary, &lg)) ||
        make_texts(r, o, &lg))
        return REPLIED(r);
    if (!json_is_true(stream)) return task_submit(r, oa_finish);
    r->sse = 1;
    r->on_sentence = oa_sentence;
    return task_submit(r, oa_stream_start);
}

static enum MHD_Result api_openai_chat(req *r)
{
    json_t *in = api_body(r);
    if (!in) return REPLIED(r);
    oa *o = oa_new(r, OA_CHAT);
    if (!o) return reply_error(r, 500, "out of memory");
    json_t *msgs = json_object_get(in, "messages"), *n = json_object_get(in, "n");
    if (!json_is_array(msgs) || !json_array_size(msgs))
        return oa_error(r, 400, "invalid_request", "messages",
                        "'messages' must be a non-empty list of {\"role\", \"content\"}");
    if (n && !json_is_null(n) && json_integer_value(n) != 1)
        return oa_error(r, 400, "invalid_request", "n",
                        "'n' must be 1: a translation has one answer");
    json_t *so = json_object_get(in, "stream_options");
    o->usage = json_is_true(json_object_get(so, "include_usage"));
    fy_buf sys = {0}, user = {0};
    enum MHD_Result ret = read_messages(r, msgs, "messages", &sys, &user)
                              ? REPLIED(r)
                              : oa_translate(r, in, o, &sys, &user);
    fy_buf_free(&sys);
    fy_buf_free(&user);
    return ret;
}

static enum MHD_Result api_openai_responses(req *r)
{
    json_t *in = api_body(r);
    if (!in) return REPLIED(r);
    oa *o = oa_new(r, OA_RESPONSES);
    if (!o) return reply_error(r, 500, "out of memory");
    json_t *inst = json_object_get(in, "instructions"), *input = json_object_get(in, "input");
    fy_buf sys = {0}, user = {0};
    enum MHD_Result ret;
    if (inst && !json_is_null(inst) && !json_is_string(inst)) {
        ret =
            oa_error(r, 400, "invalid_request", "instructions", "'instructions' must be a string");
    } else if (!json_is_string(input) && !json_is_array(input)) {
        ret = oa_error(r, 400, "invalid_request", "input",
                       "'input' must be a string or a list of messages");
    } else {
        if (json_is_string(inst))
            fy_buf_put(&sys, json_string_value(inst), json_string_length(inst));
        int rc = 0;
        if (json_is_string(input))
            fy_buf_put(&user, json_string_value(input), json_string_length(input));
        else
            rc = read_messages(r, input, "input", &sys, &user);
        ret = rc ? REPLIED(r) : oa_translate(r, in, o, &sys, &user);
    }
    fy_buf_free(&sys);
    fy_buf_free(&user);
    return ret;
}

/* ---- the dialect ----------------------------------------------------------------------- */

static json_t *openai_error(int status, const char *msg)
{
    return json_pack("{s:{s:s,s:s,s:n,s:s}}", "error", "message", msg, "type",
                     status < 500 ? "invalid_request_error" : "server_error", "param", "code",
                     status == 401 || status == 403 ? "invalid_api_key" : http_code_name(status));
}

static const route openai_routes[] = {
    {"POST", "/v1/chat/completions", "openai_chat", 1, 0, api_openai_chat, NULL},
    {"POST", "/v1/responses", "openai_responses", 1, 0, api_openai_responses, NULL},
    {"GET", "/v1/models", "openai_models", 0, 0, api_openai_models, NULL},
};

const dialect dialect_openai = {
    "openai", openai_routes, sizeof openai_routes / sizeof *openai_routes, openai_error, NULL, 0};
