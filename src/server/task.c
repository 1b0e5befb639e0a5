/* task.c - what every dialect shares: reading fields with errors that name
 * them, the language pair, the limits, splitting texts into sentences,
 * submitting them to the scheduler and joining the translations back. */
#include "server/internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

size_t srv_utf8_chars(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

int field_string(req *r, json_t *o, const char *field, const char *def, const char **out)
{
    json_t *v = json_object_get(o, field);
    *out = def;
    if (!v || json_is_null(v)) return 0;
    if (!json_is_string(v)) {
        reply_error(r, 400, "field '%s' must be a string, not %s", field, type_name(v));
        return -1;
    }
    *out = json_string_value(v);
    return 0;
}

int field_bool(req *r, json_t *o, const char *field, int def, int *out)
{
    json_t *v = json_object_get(o, field);
    *out = def;
    if (!v || json_is_null(v)) return 0;
    if (json_is_boolean(v)) {
        *out = json_is_true(v);
        return 0;
    }
    /* Form bodies carry booleans as text. */
    const char *s = json_string_value(v);
    if (s && (!strcmp(s, "true") || !strcmp(s, "1") || !strcmp(s, "false") || !strcmp(s, "0"))) {
        *out = s[0] == 't' || s[0] == '1';
        return 0;
    }
    reply_error(r, 400, "field '%s' must be a boolean, not %s", field, type_name(v));
    return -1;
}

/* ---- languages ----------------------------------------------------------- */

/* 1 if code names language lang ("zh", "ZH", "zh-CN", "zh_Hans", ...). */
static int lang_is(const char *code, const char *lang)
{
    size_t n = strlen(lang);
    return !strncasecmp(code, lang, n) && (code[n] == '\0' || code[n] == '-' || code[n] == '_');
}

int lang_check(req *r, const char *sfield, const char *src, const char *tfield, const char *tgt)
{
    int src_ok = !src || !*src || !strcasecmp(src, "auto") || lang_is(src, "zh");
    int tgt_ok = tgt && lang_is(tgt, "en");
    if (!tgt || !*tgt) {
        reply_error(r, 400, "field '%s' is required; supported language pairs: zh->en", tfield);
        return -1;
    }
    if (src_ok && tgt_ok) return 0;
    reply_error(r, 400,
                "unsupported language pair '%s'->'%s' (fields '%s', '%s'); supported: zh->en "
                "(source may also be auto)",
                src && *src ? src : "auto", tgt, sfield, tfield);
    return -1;
}

/* ---- texts --------------------------------------------------------------- */

void task_free(task *t)
{
    for (size_t i = 0; t->docs && i < t->ndocs; i++) fy_doc_free(t->docs[i]);
    free(t->docs);
    free(t->first);
    free(t->sent);
    memset(t, 0, sizeof *t);
}

/* Splits the texts (already type-checked) into r->t. -1 after a reply. */
static int split_all(req *r, json_t **texts, size_t n, const char *field, int html)
{
    fy_server *s = r->srv;
    task *t = &r->t;
    t->docs = calloc(n ? n : 1, sizeof *t->docs);
    t->first = calloc(n + 1, sizeof *t->first);
    if (!t->docs || !t->first) goto nomem;
    t->ndocs = n;
    t->html = html;
    fy_split_options so;
    fy_split_options_default(&so);
    so.html = html;
    so.count_tokens = s->o.count_tokens;
    so.count_ctx = s->o.count_ctx;
    for (size_t i = 0; i < n; i++) {
        fy_error err = {0};
        t->docs[i] =
            fy_doc_split(json_string_value(texts[i]), json_string_length(texts[i]), &so, &err);
        if (!t->docs[i]) {
            if (err.code == FY_ENOMEM) goto nomem;
            if (t->array)
                reply_error(r, 400, "field '%s[%zu]': %s", field, i, err.msg);
            else
                reply_error(r, 400, "field '%s': %s", field, err.msg);
            return -1;
        }
        t->first[i] = t->nsent;
        t->nsent += fy_doc_sentence_count(t->docs[i]);
    }
    t->first[n] = t->nsent;
    t->sent = calloc(t->nsent ? t->nsent : 1, sizeof *t->sent);
    if (!t->sent) goto nomem;
    for (size_t i = 0, k = 0; i < n; i++) {
        size_t m = fy_doc_sentence_count(t->docs[i]);
        for (size_t j = 0; j < m; j++) t->sent[k++] = fy_doc_sentence(t->docs[i], j, NULL);
    }
    return 0;
nomem:
    reply_error(r, 500, "out of memory");
    return -1;
}

int task_texts(req *r, json_t *o, const char *field, int allow_array, int html)
{
    fy_server *s = r->srv;
    json_t *v = json_object_get(o, field);
    if (!v || json_is_null(v)) {
        reply_error(r, 400, "field '%s' is required", field);
        return -1;
    }
    json_t *one[1] = {v};
    json_t **texts = one;
    size_t n = 1;
    if (json_is_array(v) && allow_array) {
        r->t.array = 1;
        n = json_array_size(v);
        if (n > s->o.max_items) {
            reply_error(r, 413, "field '%s' has %zu items; the limit is %zu per request", field, n,
                        s->o.max_items);
            return -1;
        }
        texts = n ? calloc(n, sizeof *texts) : one;
        if (!texts) return reply_error(r, 500, "out of memory"), -1;
        for (size_t i = 0; i < n; i++) texts[i] = json_array_get(v, i);
    }
    int rc = 0;
    size_t chars = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (!json_is_string(texts[i])) {
            if (r->t.array)
                reply_error(r, 400, "field '%s[%zu]' must be a string, not %s", field, i,
                            type_name(texts[i]));
            else
                reply_error(r, 400, "field '%s' must be a string%s, not %s", field,
                            allow_array ? " or an array of strings" : "", type_name(texts[i]));
            rc = -1;
            break;
        }
        const char *str = json_string_value(texts[i]);
        size_t len = json_string_length(texts[i]);
        if (strlen(str) != len) {
            reply_error(r, 400, "field '%s' contains a NUL character", field);
            rc = -1;
            break;
        }
        chars += srv_utf8_chars(str, len);
    }
    r->chars = chars;
    if (!rc && chars > s->o.max_chars) {
        reply_error(r, 413, "text has %zu characters; the limit is %zu characters per request",
                    chars, s->o.max_chars);
        rc = -1;
    }
    if (!rc) rc = split_all(r, texts, n, field, html);
    if (texts != one) free(texts);
    return rc;
}

const char *task_doc_lang(req *r, size_t i)
{
    return fy_doc_sentence_count(r->t.docs[i]) ? "zh" : "en";
}

const char *task_detected(req *r)
{
    for (size_t i = 0; i < r->t.ndocs; i++)
        if (fy_doc_sentence_count(r->t.docs[i])) return "zh";
    return "en";
}

/* ---- the job ------------------------------------------------------------- */

static void job_done(void *user, int status)
{
    req *r = user;
    pthread_mutex_lock(&r->lock);
    r->job_done = 1;
    r->job_status = status;
    if (r->suspended) {
        r->suspended = 0;
        MHD_resume_connection(r->conn);
    }
    pthread_mutex_unlock(&r->lock);
}

enum MHD_Result task_submit(req *r, enum MHD_Result (*finish)(req *r))
{
    fy_server *s = r->srv;
    fy_job_callbacks cb = {r->sse ? sse_sentence : NULL, job_done, r};
    fy_error err = {0};
    int64_t deadline = s->o.timeout_ms > 0 ? fy_now_ms() + s->o.timeout_ms : 0;
    r->finish = finish;
    /* More sentences than the queue can ever hold: a 503 "try again" would
     * never succeed, so say what is too big. */
    fy_scheduler_stats st;
    fy_scheduler_get_stats(s->sched, &st);
    if (st.queue_max && r->t.nsent > st.queue_max)
        return reply_error(r, 413,
                           "the text splits into %zu sentences; the server queues at most %zu "
                           "(--queue); send it in smaller requests",
                           r->t.nsent, st.queue_max);
    fy_job *j = fy_scheduler_submit(s->sched, r->t.sent, r->t.nsent, deadline, &cb, &err);
    if (!j) {
        int status = err.code == FY_EBUSY || err.code == FY_ECANCELED ? 503 : 500;
        return reply_error(r, status, "%s", err.msg);
    }
    pthread_mutex_lock(&r->lock);
    r->job = j;
    if (r->sse) {
        pthread_mutex_unlock(&r->lock);
        return finish(r); /* the stream is its own answer */
    }
    r->phase = PH_WAIT;
    if (!r->job_done) {
        r->suspended = 1;
        MHD_suspend_connection(r->conn);
        pthread_mutex_unlock(&r->lock);
        return MHD_YES;
    }
    pthread_mutex_unlock(&r->lock);
    return task_resumed(r);
}

enum MHD_Result task_resumed(req *r)
{
    pthread_mutex_lock(&r->lock);
    int done = r->job_done, st = r->job_status;
    pthread_mutex_unlock(&r->lock);
    if (!done) return MHD_YES; /* spurious wake-up */
    if (st == 0) return r->finish(r);
    fy_error err = {0};
    fy_job_status(r->job, &err);
    if (st == FY_ETIMEOUT)
        return reply_error(r, 504, "translation took longer than %d ms", r->srv->o.timeout_ms);
    if (st == FY_ECANCELED) return reply_error(r, 503, "the server is shutting down");
    return reply_error(r, 500, "translation failed: %s", err.msg);
}

char *task_join(req *r, size_t i)
{
    task *t = &r->t;
    size_t n = t->first[i + 1] - t->first[i];
    const char **out = calloc(n ? n : 1, sizeof *out);
    if (!out) return NULL;
    for (size_t k = 0; k < n; k++) out[k] = fy_job_result(r->job, t->first[i] + k);
    fy_error err = {0};
    char *joined = fy_doc_join(t->docs[i], out, &err);
    free(out);
    return joined;
}

json_t *task_join_json(req *r)
{
    json_t *arr = r->t.array ? json_array() : NULL;
    for (size_t i = 0; i < r->t.ndocs; i++) {
        char *s = task_join(r, i);
        json_t *v = s ? json_string(s) : NULL;
        free(s);
        if (!v) {
            json_decref(arr);
            return NULL;
        }
        if (!arr) return v;
        json_array_append_new(arr, v);
    }
    return arr;
}
