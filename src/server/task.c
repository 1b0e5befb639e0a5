/* task.c - what every dialect shares: reading fields with errors that name
 * them, the language pair, the limits, and the request (translate/pipeline.h)
 * that turns the texts into translations: JSON in, a request, JSON out. */
#include "server/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/clock.h"

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

int field_int(req *r, json_t *o, const char *field, long def, long min, long max, long *out)
{
    json_t *v = json_object_get(o, field);
    *out = def;
    if (!v || json_is_null(v)) return 0;
    long long x = 0;
    const char *s = json_string_value(v); /* form bodies carry numbers as text */
    int ok = json_is_integer(v);
    if (ok) x = json_integer_value(v);
    if (s && *s && strlen(s) <= 9 && strspn(s, "0123456789") == strlen(s)) {
        x = strtoll(s, NULL, 10);
        ok = 1;
    }
    if (!ok) {
        reply_error(r, 400, "field '%s' must be a whole number from %ld to %ld, not %s", field, min,
                    max, type_name(v));
        return -1;
    }
    if (x < min || x > max) {
        reply_error(r, 400, "field '%s' must be from %ld to %ld, not %lld", field, min, max, x);
        return -1;
    }
    *out = (long)x;
    return 0;
}

/* ---- languages ----------------------------------------------------------- */

int task_langs(req *r, const char *sfield, const char *src, const char *tfield, const char *tgt,
               int tgt_required, langs *out)
{
    memset(out, 0, sizeof *out);
    out->sfield = sfield;
    out->tfield = tfield;
    if (fy_lang_normalize(src, out->src) < 0) {
        reply_error(r, 400, "field '%s': '%.40s' is not a language code (e.g. zh, en, auto)",
                    sfield, src);
        return -1;
    }
    int t = fy_lang_normalize(tgt, out->tgt);
    if (t < 0 || (t == 1 && tgt && *tgt)) {
        reply_error(r, 400, "field '%s': '%.40s' is not a language code (e.g. en, zh)", tfield,
                    tgt);
        return -1;
    }
    if (t == 1 && tgt_required) {
        char pairs[512];
        fy_registry_describe(r->srv->reg, pairs, sizeof pairs);
        reply_error(r, 400, "field '%s' is required; this server translates %s", tfield, pairs);
        return -1;
    }
    /* The pair is known now even when the source is detected per text:
     * refuse a target nothing reaches before reading the texts. */
    if (out->src[0] && out->tgt[0] && strcmp(out->src, out->tgt) &&
        !fy_registry_route_kind(r->srv->reg, out->src, out->tgt)) {
        char pairs[512];
        fy_registry_describe(r->srv->reg, pairs, sizeof pairs);
        reply_error(r, 400,
                    "unsupported language pair '%s'->'%s' (fields '%s', '%s'); this server "
                    "translates %s, and through English between them",
                    out->src, out->tgt, sfield, tfield, pairs);
        return -1;
    }
    return 0;
}

const char *task_code(req *r, const char *tag, char *buf, size_t cap)
{
    if (!tag || !*tag) return "";
    return r->dialect && r->dialect->code ? r->dialect->code(tag, buf, cap) : tag;
}

/* ---- glossaries ------------------------------------------------------------ */

int task_glossary_take(req *r, fy_glossary *g)
{
    if (r->ngl == FY_GSTORE_DICTS_MAX) {
        fy_glossary_unref(g);
        reply_error(r, 400, "a translation takes at most %d glossaries", FY_GSTORE_DICTS_MAX);
        return -1;
    }
    r->gl[r->ngl++] = g;
    return 0;
}

int task_glossary_id(req *r, const char *field, const char *id, const langs *lg)
{
    fy_glossary_store *st = r->srv->o.glossaries;
    fy_error err = {0};
    if (!st) {
        reply_error(r, 503, "field '%s': this server keeps no glossaries", field);
        return -1;
    }
    if (!lg->tgt[0]) {
        reply_error(r, 400, "field '%s' needs the target language ('%s')", field, lg->tfield);
        return -1;
    }
    if (lg->src[0]) {
        fy_glossary *g = fy_glossary_store_get(st, id, lg->src, lg->tgt, &err);
        if (!g) {
            reply_error(r, err.code == FY_ENOMEM ? 500 : 400, "field '%s': %s", field, err.msg);
            return -1;
        }
        return task_glossary_take(r, g);
    }
    fy_glossary *all[FY_GSTORE_DICTS_MAX];
    int n = fy_glossary_store_get_into(st, id, lg->tgt, all, FY_GSTORE_DICTS_MAX - r->ngl, &err);
    if (n <= 0) {
        if (!n)
            fy_err(&err, FY_ENOTFOUND, "glossary '%.40s' has no dictionary into %s", id, lg->tgt);
        reply_error(r, 400, "field '%s': %s", field, err.msg);
        return -1;
    }
    for (int k = 0; k < n; k++) r->gl[r->ngl++] = all[k];
    return 0;
}

int task_glossary_inline(req *r, const char *field, json_t *entries, const langs *lg)
{
    fy_error err = {0};
    fy_glossary *g = fy_glossary_new(lg->src, lg->tgt, &err);
    if (!g) {
        reply_error(r, 500, "%s", err.msg);
        return -1;
    }
    if (glossary_entries(r, g, field, entries, FY_GLOSSARY_TSV)) {
        fy_glossary_unref(g);
        return -1;
    }
    if (fy_glossary_compile(g, &err)) {
        fy_glossary_unref(g);
        reply_error(r, 500, "%s", err.msg);
        return -1;
    }
    return task_glossary_take(r, g);
}

/* ---- confidence -------------------------------------------------------------- */

static json_t *real_or_null(float v)
{
    return isfinite(v) ? json_real((double)v) : json_null();
}

json_t *confidence_json(fy_confidence c)
{
    return json_pack("{s:o,s:o}", "score", real_or_null(c.score), "margin", real_or_null(c.margin));
}

json_t *task_scores_json(req *r, size_t i)
{
    json_t *list = json_array();
    for (size_t k = 0; list && k < fy_request_text_sentences(r->q, i); k++)
        if (json_array_append_new(list, confidence_json(fy_request_confidence(r->q, i, k)))) {
            json_decref(list);
            return NULL;
        }
    return list;
}

/* ---- texts --------------------------------------------------------------- */

/* Checks every text's type and the character limit; -1 after a reply. */
static int check_texts(req *r, json_t **texts, size_t n, const char *field, int allow_array)
{
    size_t chars = 0;
    for (size_t i = 0; i < n; i++) {
        if (!json_is_string(texts[i])) {
            if (r->array)
                reply_error(r, 400, "field '%s[%zu]' must be a string, not %s", field, i,
                            type_name(texts[i]));
            else
                reply_error(r, 400, "field '%s' must be a string%s, not %s", field,
                            allow_array ? " or an array of strings" : "", type_name(texts[i]));
            return -1;
        }
        const char *str = json_string_value(texts[i]);
        size_t len = json_string_length(texts[i]);
        if (strlen(str) != len) {
            reply_error(r, 400, "field '%s' contains a NUL character", field);
            return -1;
        }
        chars += srv_utf8_chars(str, len);
    }
    r->chars = chars;
    if (chars > r->srv->o.max_chars) {
        reply_error(
            r, 413,
            "text has %zu characters; the limit is %zu characters per request (--max-chars)", chars,
            r->srv->o.max_chars);
        return -1;
    }
    return 0;
}

/* The request for the texts; -1 after a reply. */
static int make_request(req *r, json_t **texts, size_t n, const char *field, int mode,
                        const langs *lg)
{
    const char **s = calloc(n ? n : 1, sizeof *s);
    size_t *len = calloc(n ? n : 1, sizeof *len);
    if (!s || !len) {
        free(s);
        free(len);
        return reply_error(r, 500, "out of memory"), -1;
    }
    for (size_t i = 0; i < n; i++) {
        s[i] = json_string_value(texts[i]);
        len[i] = json_string_length(texts[i]);
    }
    int timeout = r->srv->o.timeout_ms;
    fy_request_options o = {.source = lg->src,
                            .target = lg->tgt,
                            .html = (mode & TEXT_HTML) != 0,
                            .raw = (mode & TEXT_RAW) != 0,
                            .deadline_ms = timeout > 0 ? fy_now_ms() + timeout : 0,
                            .placeholders = r->placeholders,
                            .beam = r->beam,
                            .alternatives = r->alternatives,
                            .glossaries = (const struct fy_glossary *const *)r->gl,
                            .nglossaries = (size_t)r->ngl};
    fy_error err = {0};
    size_t bad;
    fy_request *q = fy_request_new(r->srv->reg, s, len, n, &o, &bad, &err);
    free(s);
    free(len);
    if (q) {
        r->q = q;
        r->direction = fy_request_label(q);
        return 0;
    }
    char where[96];
    if (r->array && bad < n)
        snprintf(where, sizeof where, "field '%s[%zu]'", field, bad);
    else
        snprintf(where, sizeof where, "field '%s'", field);
    if (err.code == FY_ENOTFOUND)
        reply_error(r, 400, "%s (languages in '%s'/'%s'): %s", where, lg->sfield, lg->tfield,
                    err.msg);
    else if (err.code == FY_EINVAL || err.code == FY_ELIMIT)
        reply_error(r, 400, "%s: %s", where, err.msg);
    else
        reply_error(r, err.code == FY_ENOMEM ? 500 : 503, "%s", err.msg);
    return -1;
}

int task_texts(req *r, json_t *o, const char *field, int allow_array, int mode, const langs *lg)
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
        r->array = 1;
        n = json_array_size(v);
        if (n > s->o.max_items) {
            reply_error(
                r, 413,
                "field '%s' has %zu items; the limit is %zu per request (--max-batch-items)", field,
                n, s->o.max_items);
            return -1;
        }
        texts = n ? calloc(n, sizeof *texts) : one;
        if (!texts) return reply_error(r, 500, "out of memory"), -1;
        for (size_t i = 0; i < n; i++) texts[i] = json_array_get(v, i);
    }
    int rc = check_texts(r, texts, n, field, allow_array);
    if (!rc) rc = make_request(r, texts, n, field, mode, lg);
    if (texts != one) free(texts);
    return rc;
}

/* ---- the query string ---------------------------------------------------- */

typedef struct query_walk {
    json_t *out;
    const char *bad; /* a key whose value is not text */
    int oom;
} query_walk;

/* Adds value under name (an array once the key repeats); -1 when out of memory. */
static int query_add(json_t *out, const char *name, json_t *value, int is_list)
{
    json_t *old = json_object_get(out, name);
    if (json_is_array(old)) return json_array_append_new(old, value);
    if (!old && !is_list) return json_object_set_new(out, name, value);
    json_t *arr = json_array();
    if (!arr || (old && json_array_append(arr, old)) || json_array_append_new(arr, value)) {
        json_decref(arr);
        return -1;
    }
    return json_object_set_new(out, name, arr);
}

static enum MHD_Result query_value(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    (void)kind;
    query_walk *w = cls;
    char name[128];
    size_t kl = strlen(key), bad;
    int is_list = kl > 2 && !strcmp(key + kl - 2, "[]");
    if (is_list) kl -= 2;
    if (kl >= sizeof name) return MHD_YES; /* no parameter has such a name */
    memcpy(name, key, kl);
    name[kl] = '\0';
    const char *v = value ? value : "";
    if (!fy_utf8_valid(name, kl, &bad)) { /* not echoed: the error's JSON must be UTF-8 */
        w->bad = "";
        return MHD_NO;
    }
    if (!fy_utf8_valid(v, strlen(v), &bad)) {
        w->bad = key;
        return MHD_NO;
    }
    json_t *str = json_string(v);
    if (!str || query_add(w->out, name, str, is_list)) {
        w->oom = 1;
        return MHD_NO;
    }
    return MHD_YES;
}

json_t *req_query(req *r, const char **bad)
{
    query_walk w = {json_object(), NULL, 0};
    *bad = NULL;
    if (!w.out) return NULL;
    MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, query_value, &w);
    if (w.bad || w.oom) {
        *bad = w.bad;
        json_decref(w.out);
        return NULL;
    }
    return w.out;
}

size_t task_count(req *r)
{
    return fy_request_count(r->q);
}

const char *task_lang(req *r, size_t i)
{
    return fy_request_source(r->q, i, NULL);
}

/* ---- the job ------------------------------------------------------------- */

static void job_done(void *user, int status)
{
    req *r = user;
    if (status == 0) atomic_fetch_add(&r->srv->chars_translated, (unsigned long long)r->chars);
    req_work_done(r, status);
}

/* The job is over (req_park): the dialect's answer, or the job's error. */
static enum MHD_Result task_finished(req *r, int st)
{
    if (st == 0) return r->finish(r);
    fy_error err = {0};
    fy_request_status(r->q, &err);
    if (st == FY_ETIMEOUT)
        return reply_error(r, 504, "translation took longer than %d ms (--timeout-ms)",
                           r->srv->o.timeout_ms);
    if (st == FY_ECANCELED) return req_cut_reply(r);
    /* Every device that could run the model failed (a GPU lost): no answer
     * is wrong, none can come from this replica now; another may have one. */
    if (st == FY_EDEVICE) return reply_error(r, 503, "no compute device left: %s", err.msg);
    return reply_error(r, 500, "translation failed: %s", err.msg);
}

enum MHD_Result task_submit(req *r, enum MHD_Result (*finish)(req *r))
{
    fy_request_callbacks cb = {r->on_sentence ? r->on_sentence
                               : r->sse       ? sse_sentence
                                              : NULL,
                               job_done, r};
    fy_error err = {0};
    r->finish = finish;
    r->resume = task_finished;
    req_work_begin(r); /* before the submit: cached answers end the job inside it */
    if (fy_request_submit(r->q, r->srv->sched, &cb, &err)) {
        req_cancel(r); /* nothing runs; only the wait state is reset */
        int status = err.code == FY_ELIMIT ? 413
                     : err.code == FY_EBUSY || err.code == FY_ECANCELED || err.code == FY_EDEVICE
                         ? 503
                         : 500;
        return reply_error(r, status, "%s", err.msg);
    }
    if (r->sse) return finish(r); /* the stream is its own answer */
    r->phase = PH_WAIT;
    return req_park(r);
}

char *task_join(req *r, size_t i)
{
    fy_error err = {0};
    return fy_request_text(r->q, i, NULL, NULL, &err);
}

json_t *task_each(req *r, json_t *(*item)(req *r, size_t i, const char *translation))
{
    json_t *list = json_array();
    for (size_t i = 0; list && i < task_count(r); i++) {
        char *s = task_join(r, i);
        json_t *v = s ? item(r, i, s) : NULL;
        free(s);
        if (!v || json_array_append_new(list, v)) {
            json_decref(list);
            return NULL;
        }
    }
    return list;
}

int field_format(req *r, json_t *o, const char *def, int *html)
{
    const char *format;
    if (field_string(r, o, "format", def, &format)) return -1;
    if (strcmp(format, "text") && strcmp(format, "html")) {
        reply_error(r, 400, "field 'format' must be \"text\" or \"html\", not \"%s\"", format);
        return -1;
    }
    *html = !strcmp(format, "html");
    return 0;
}

/* Text i's alternatives as a JSON array of strings; NULL on error. */
static json_t *text_alternatives(req *r, size_t i)
{
    char **list;
    size_t n;
    fy_error err = {0};
    if (fy_request_text_alternatives(r->q, i, &list, &n, &err)) return NULL;
    json_t *arr = json_array();
    for (size_t k = 0; arr && k < n; k++)
        if (json_array_append_new(arr, json_string(list[k]))) {
            json_decref(arr);
            arr = NULL;
        }
    fy_request_strings_free(list, n);
    return arr;
}

json_t *task_alternatives_json(req *r)
{
    json_t *all = r->array ? json_array() : NULL;
    for (size_t i = 0; i < task_count(r); i++) {
        json_t *v = text_alternatives(r, i);
        if (!v) {
            json_decref(all);
            return NULL;
        }
        if (!all) return v;
        json_array_append_new(all, v);
    }
    return all ? all : json_array();
}

json_t *task_join_json(req *r)
{
    json_t *arr = r->array ? json_array() : NULL;
    for (size_t i = 0; i < task_count(r); i++) {
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
