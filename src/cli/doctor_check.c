/* doctor_check.c - the clients table (web/clients.json) run against a server
 * with libcurl: templates filled, requests sent as the clients send them,
 * answers judged. The rules are web/plugins.js's, line for line. */
#include "cli/doctor_check.h"

#include <ctype.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/buf.h"
#include "web_assets.h"

enum { MAX_ANSWER = 4 << 20 }; /* bytes of an answer read at most */

json_t *dc_table(fy_error *err)
{
    const fy_web_asset *a = fy_web_asset_find("/clients.json");
    if (!a) {
        fy_err(err, FY_ENOTFOUND, "this build has no clients table (web/clients.json)");
        return NULL;
    }
    json_error_t je;
    json_t *t = json_loadb((const char *)a->data, a->size, 0, &je);
    if (!t || !json_is_object(json_object_get(t, "codes")) ||
        !json_is_array(json_object_get(t, "clients")) ||
        !json_is_object(json_object_get(t, "samples"))) {
        fy_err(err, FY_EFORMAT, "web/clients.json: %s", t ? "not the table's shape" : je.text);
        json_decref(t);
        return NULL;
    }
    return t;
}

const char *dc_sample(const json_t *table, const char *lang, size_t i)
{
    return json_string_value(
        json_array_get(json_object_get(json_object_get(table, "samples"), lang), i));
}

static int pair_is(const json_t *p, const char *src, const char *tgt)
{
    const char *s = json_string_value(json_object_get(p, "source"));
    const char *t = json_string_value(json_object_get(p, "target"));
    return s && t && !strcmp(s, src) && !strcmp(t, tgt);
}

int dc_direction(const json_t *table, const json_t *pairs, const char **src, const char **tgt)
{
    size_t i, k;
    const json_t *want, *p;
    json_array_foreach(json_object_get(table, "prefer"), i, want)
    {
        const char *s = json_string_value(json_array_get(want, 0));
        const char *t = json_string_value(json_array_get(want, 1));
        json_array_foreach(pairs, k, p) if (s && t && pair_is(p, s, t) && dc_sample(table, s, 0))
        {
            *src = json_string_value(json_object_get(p, "source"));
            *tgt = json_string_value(json_object_get(p, "target"));
            return 0;
        }
    }
    json_array_foreach(pairs, k, p)
    {
        const char *s = json_string_value(json_object_get(p, "source"));
        const char *t = json_string_value(json_object_get(p, "target"));
        if (s && t && dc_sample(table, s, 0)) {
            *src = s;
            *tgt = t;
            return 0;
        }
    }
    return -1;
}

/* ---- templates ------------------------------------------------------------------- */

/* lang written with the table's code table scheme ("{code}" / "{CODE}" in its "*"). */
static int put_code(const dc_ctx *c, const char *scheme, const char *lang, fy_buf *out,
                    fy_error *err)
{
    const json_t *map = json_object_get(json_object_get(c->table, "codes"), scheme);
    if (!map) return fy_err(err, FY_EFORMAT, "web/clients.json: no code table \"%s\"", scheme);
    const char *v = json_string_value(json_object_get(map, lang));
    if (!v) v = json_string_value(json_object_get(map, "*"));
    if (!v)
        return fy_err(err, FY_EFORMAT, "web/clients.json: code table \"%s\" has no \"*\"", scheme);
    const char *hole = strstr(v, "{code}") ? strstr(v, "{code}") : strstr(v, "{CODE}");
    if (!hole) {
        fy_buf_put(out, v, strlen(v));
        return 0;
    }
    fy_buf_put(out, v, (size_t)(hole - v));
    for (const char *l = lang; *l; l++)
        fy_buf_putc(out, hole[1] == 'C' ? (char)toupper((unsigned char)*l) : *l);
    fy_buf_put(out, hole + 6, strlen(hole + 6));
    return 0;
}

/* The value of one hole (name without its braces); 1 if name is no hole (the
 * braces are then text, as in a prompt's JSON), 0 put, < 0 error. */
static int put_hole(const dc_ctx *c, const char *name, size_t n, fy_buf *out, fy_error *err)
{
    char h[40];
    if (n >= sizeof h) return 1;
    memcpy(h, name, n);
    h[n] = '\0';
    const char *v = NULL;
    if (!strcmp(h, "base")) v = c->base;
    if (!strcmp(h, "token") || !strcmp(h, "token?")) v = c->token;
    if (!strcmp(h, "key")) v = *c->token ? c->token : "fanyi";
    if (!strcmp(h, "text")) v = c->text;
    if (v) {
        fy_buf_put(out, v, strlen(v));
        return 0;
    }
    if (!strcmp(h, "host")) {
        const char *s = strstr(c->base, "://");
        s = s ? s + 3 : c->base;
        fy_buf_put(out, s, strcspn(s, "/"));
        return 0;
    }
    if (!strcmp(h, "?token")) {
        if (!*c->token) return 0;
        char *e = curl_easy_escape(NULL, c->token, 0);
        if (!e) return fy_err(err, FY_ENOMEM, "out of memory");
        fy_buf_printf(out, "?token=%s", e);
        curl_free(e);
        return 0;
    }
    if ((!strncmp(h, "src:", 4) || !strncmp(h, "tgt:", 4)) && h[4])
        return put_code(c, h + 4, h[0] == 's' ? c->src : c->tgt, out, err);
    return 1;
}

/* s with its holes filled (malloc'd), or NULL with err. */
static char *fill_string(const dc_ctx *c, const char *s, fy_error *err)
{
    fy_buf out = {0};
    fy_buf_put(&out, "", 0);
    while (*s) {
        const char *close = *s == '{' ? strchr(s, '}') : NULL;
        int rc = close ? put_hole(c, s + 1, (size_t)(close - s - 1), &out, err) : 1;
        if (rc < 0) {
            fy_buf_free(&out);
            return NULL;
        }
        if (rc == 0) {
            s = close + 1;
            continue;
        }
        fy_buf_putc(&out, *s++);
    }
    char *r = fy_buf_take(&out, NULL);
    if (!r) fy_err(err, FY_ENOMEM, "out of memory");
    return r;
}

/* A filled copy of v (new reference), or NULL with err. */
static json_t *fill(const dc_ctx *c, const json_t *v, fy_error *err)
{
    if (json_is_string(v)) {
        char *s = fill_string(c, json_string_value(v), err);
        json_t *r = s ? json_string(s) : NULL;
        free(s);
        return r;
    }
    if (json_is_array(v)) {
        json_t *r = json_array();
        size_t i;
        const json_t *x;
        json_array_foreach(v, i, x)
        {
            json_t *y = fill(c, x, err);
            if (!y || json_array_append_new(r, y)) return json_decref(r), NULL;
        }
        return r;
    }
    if (!json_is_object(v)) return json_deep_copy(v);
    const json_t *inner = json_object_get(v, "$json");
    if (inner) {
        json_t *y = fill(c, inner, err);
        char *s = y ? json_dumps(y, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        json_t *r = s ? json_string(s) : NULL;
        json_decref(y);
        free(s);
        return r;
    }
    json_t *r = json_object();
    const char *k;
    const json_t *x;
    json_object_foreach((json_t *)v, k, x)
    {
        if (!*c->token && json_is_string(x) && !strcmp(json_string_value(x), "{token?}")) continue;
        json_t *y = fill(c, x, err);
        if (!y || json_object_set_new(r, k, y)) return json_decref(r), NULL;
    }
    return r;
}

/* ---- answers --------------------------------------------------------------------- */

/* The value at a dotted path ("translations.0.text"), borrowed, or NULL. */
static const json_t *at(const json_t *v, const char *path)
{
    char part[128];
    while (v && *path) {
        size_t n = strcspn(path, ".");
        if (n >= sizeof part) return NULL;
        memcpy(part, path, n);
        part[n] = '\0';
        path += n + (path[n] == '.');
        if (json_is_array(v)) {
            char *end;
            unsigned long i = strtoul(part, &end, 10);
            v = *part && !*end ? json_array_get(v, i) : NULL;
        } else {
            v = json_is_object(v) ? json_object_get(v, part) : NULL;
        }
    }
    return v;
}

/* The JSON inside a model's text answer: from its first { or [ to its last } or ]. */
static json_t *inner_json(const char *s)
{
    const char *a = strpbrk(s, "{[");
    const char *b = NULL;
    for (const char *p = s; *p; p++)
        if (*p == '}' || *p == ']') b = p;
    return a && b && b > a ? json_loadb(a, (size_t)(b - a + 1), 0, NULL) : NULL;
}

/* The translation at path (segments after a "|" read the text so far as JSON):
 * a string, or lines joined by "\n"; malloc'd, NULL if absent. */
static char *answer_at(const json_t *body, const char *path)
{
    char seg[256];
    json_t *owned = NULL;
    const json_t *v = body;
    for (int first = 1; v && *path; first = 0) {
        size_t n = strcspn(path, "|");
        if (n >= sizeof seg) break;
        memcpy(seg, path, n);
        seg[n] = '\0';
        path += n + (path[n] == '|');
        if (!first) {
            json_t *parsed = json_is_string(v) ? inner_json(json_string_value(v)) : NULL;
            json_decref(owned);
            owned = parsed;
            v = parsed;
        }
        v = at(v, seg);
    }
    fy_buf out = {0};
    if (json_is_string(v)) {
        fy_buf_put(&out, json_string_value(v), json_string_length(v));
    } else if (json_is_array(v) && json_array_size(v)) {
        size_t i;
        const json_t *x;
        json_array_foreach(v, i, x)
        {
            if (!json_is_string(x)) {
                fy_buf_free(&out);
                break;
            }
            if (i) fy_buf_putc(&out, '\n');
            fy_buf_put(&out, json_string_value(x), json_string_length(x));
        }
    }
    json_decref(owned);
    return out.n ? fy_buf_take(&out, NULL) : (fy_buf_free(&out), NULL);
}

/* A server-sent event stream's translation: the path of every data event, joined. */
static char *stream_answer(const char *text, const char *path)
{
    fy_buf out = {0};
    int any = 0;
    for (const char *line = text; line && *line;) {
        const char *eol = strchr(line, '\n');
        size_t n = eol ? (size_t)(eol - line) : strlen(line);
        if (n >= 5 && !strncmp(line, "data:", 5)) {
            const char *d = line + 5;
            size_t m = n - 5;
            while (m && (*d == ' ')) d++, m--;
            while (m && (d[m - 1] == '\r' || d[m - 1] == ' ')) m--;
            if (m == 6 && !strncmp(d, "[DONE]", 6)) break;
            json_t *ev = json_loadb(d, m, 0, NULL);
            char *piece = ev ? answer_at(ev, path) : NULL;
            if (piece) fy_buf_put(&out, piece, strlen(piece)), any = 1;
            free(piece);
            json_decref(ev);
        }
        line = eol ? eol + 1 : NULL;
    }
    return any && out.n ? fy_buf_take(&out, NULL) : (fy_buf_free(&out), NULL);
}

/* The message of an error body in any dialect's shape, borrowed, or NULL. */
static const char *error_in(const json_t *body)
{
    const json_t *e = json_object_get(body, "error");
    if (json_is_string(e)) return json_string_value(e);
    const char *m = json_string_value(json_object_get(e, "message"));
    return m ? m : json_string_value(json_object_get(body, "message"));
}

/* ---- requests -------------------------------------------------------------------- */

typedef struct reply {
    fy_buf body;
    long status;
    double ms;
    char error[CURL_ERROR_SIZE];
} reply;

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    fy_buf *b = arg;
    if (b->n + size * n > MAX_ANSWER) return 0; /* curl fails the transfer: too big */
    fy_buf_put(b, p, size * n);
    return size * n;
}

/* key=value&… of a [[key, value], …] array, escaped. */
static char *urlencode(const json_t *pairs)
{
    fy_buf out = {0};
    fy_buf_put(&out, "", 0);
    size_t i;
    const json_t *p;
    json_array_foreach(pairs, i, p)
    {
        char *k = curl_easy_escape(NULL, json_string_value(json_array_get(p, 0)), 0);
        char *v = curl_easy_escape(NULL, json_string_value(json_array_get(p, 1)), 0);
        if (k && v)
            fy_buf_printf(&out, "%s%s=%s", i ? "&" : "", k, v);
        else
            out.oom = 1;
        curl_free(k);
        curl_free(v);
    }
    return fy_buf_take(&out, NULL);
}

/* Sends method url with headers (a "K: V" list) and body (or mime); fills r. 0,
 * or -1 with r->error (no answer). */
static int send_request(const dc_ctx *c, const char *method, const char *url,
                        struct curl_slist *headers, const char *body, curl_mime *mime, reply *r)
{
    CURL *h = curl_easy_init();
    if (!h) {
        snprintf(r->error, sizeof r->error, "cannot start libcurl");
        return -1;
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, r->error);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &r->body);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    if (mime)
        curl_easy_setopt(h, CURLOPT_MIMEPOST, mime);
    else if (body)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    if (strcmp(method, "GET") && strcmp(method, "POST"))
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    else if (!strcmp(method, "POST") && !body && !mime)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
    CURLcode rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
    double s = 0;
    curl_easy_getinfo(h, CURLINFO_TOTAL_TIME, &s);
    r->ms = s * 1000.0;
    curl_easy_cleanup(h);
    fy_buf_put(&r->body, "", 0);
    if (rc != CURLE_OK && !r->error[0])
        snprintf(r->error, sizeof r->error, "%s", curl_easy_strerror(rc));
    return rc == CURLE_OK && !r->body.oom ? 0 : -1;
}

/* A request built from a filled check: its URL, headers and body. */
typedef struct built {
    char *url, *body;
    struct curl_slist *headers;
    curl_mime *mime;
} built;

static void built_free(built *b)
{
    free(b->url);
    free(b->body);
    curl_slist_free_all(b->headers);
    curl_mime_free(b->mime);
}

static int build(const json_t *f, built *b, fy_error *err)
{
    fy_buf url = {0};
    const char *u = json_string_value(json_object_get(f, "url"));
    if (!u) return fy_err(err, FY_EFORMAT, "web/clients.json: a check without a url");
    fy_buf_put(&url, u, strlen(u));
    const json_t *query = json_object_get(f, "query");
    if (query) {
        char *q = urlencode(query);
        fy_buf_printf(&url, "%c%s", strchr(u, '?') ? '&' : '?', q ? q : "");
        free(q);
    }
    b->url = fy_buf_take(&url, NULL);
    int typed = 0;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)json_object_get(f, "headers"), k, v)
    {
        char line[1024];
        snprintf(line, sizeof line, "%s: %s", k, json_string_value(v) ? json_string_value(v) : "");
        typed |= !strcasecmp(k, "Content-Type");
        b->headers = curl_slist_append(b->headers, line);
    }
    b->headers = curl_slist_append(b->headers, "Expect:"); /* no 100-continue round trip */
    const json_t *json = json_object_get(f, "json"), *form = json_object_get(f, "form");
    const json_t *multi = json_object_get(f, "multipart");
    if (json) {
        b->body = json_dumps(json, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!typed) b->headers = curl_slist_append(b->headers, "Content-Type: application/json");
    } else if (form) {
        b->body = urlencode(form);
        b->headers =
            curl_slist_append(b->headers, "Content-Type: application/x-www-form-urlencoded");
    } else if (multi) {
        b->mime = curl_mime_init(NULL);
        size_t i;
        json_array_foreach(multi, i, v)
        {
            curl_mimepart *part = curl_mime_addpart(b->mime);
            curl_mime_name(part, json_string_value(json_array_get(v, 0)));
            curl_mime_data(part, json_string_value(json_array_get(v, 1)), CURL_ZERO_TERMINATED);
        }
    }
    if (!b->url || !b->headers || ((json || form) && !b->body) || (multi && !b->mime))
        return fy_err(err, FY_ENOMEM, "out of memory");
    return 0;
}

json_t *dc_get_json(const dc_ctx *ctx, const char *path, long *status, char *why, size_t cap)
{
    char url[2048];
    snprintf(url, sizeof url, "%s%s", ctx->base, path);
    reply r = {0};
    struct curl_slist *h = curl_slist_append(NULL, "Accept: application/json");
    int rc = send_request(ctx, "GET", url, h, NULL, NULL, &r);
    curl_slist_free_all(h);
    *status = r.status;
    json_t *body = rc ? NULL : json_loads(r.body.p, 0, NULL);
    if (rc)
        snprintf(why, cap, "%s", r.error);
    else if (!body)
        snprintf(why, cap, "HTTP %ld, not JSON: %.120s", r.status, r.body.p);
    fy_buf_free(&r.body);
    return body;
}

/* The request headers for POST /translate with c's token (free them). */
static struct curl_slist *native_headers(const dc_ctx *c)
{
    char auth[600];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", c->token);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    if (h && *c->token) {
        struct curl_slist *more = curl_slist_append(h, auth);
        if (!more) curl_slist_free_all(h);
        h = more;
    }
    return h;
}

long dc_try_token(const dc_ctx *c, char *why, size_t cap)
{
    char url[2048];
    snprintf(url, sizeof url, "%s/translate", c->base);
    struct curl_slist *h = native_headers(c);
    reply r = {0};
    int rc = h ? send_request(c, "POST", url, h, "{\"text\":\"\"}", NULL, &r) : -1;
    curl_slist_free_all(h);
    json_t *answer = rc ? NULL : json_loads(r.body.p, 0, NULL);
    if (rc)
        snprintf(why, cap, "%s", h ? r.error : "out of memory");
    else if (r.status != 200)
        snprintf(why, cap, "HTTP %ld: %.300s", r.status,
                 error_in(answer) ? error_in(answer) : r.body.p);
    else
        why[0] = '\0';
    json_decref(answer);
    fy_buf_free(&r.body);
    return rc ? 0 : r.status;
}

/* ---- judging --------------------------------------------------------------------- */

char *dc_native(const dc_ctx *c, const json_t *extra, char *why, size_t cap)
{
    json_t *req = json_pack("{s:s,s:s,s:s}", "text", c->text, "source", c->src, "target", c->tgt);
    if (req && json_is_object(extra)) json_object_update(req, (json_t *)extra);
    char *body = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    char url[2048];
    snprintf(url, sizeof url, "%s/translate", c->base);
    struct curl_slist *h = native_headers(c);
    reply r = {0};
    int rc = body && h ? send_request(c, "POST", url, h, body, NULL, &r) : -1;
    curl_slist_free_all(h);
    free(body);
    json_t *answer = rc ? NULL : json_loads(r.body.p, 0, NULL);
    const char *t = json_string_value(json_object_get(answer, "translation"));
    char *out = r.status == 200 && t ? strdup(t) : NULL;
    if (!out)
        snprintf(why, cap, "the server's own POST /translate failed: %s",
                 rc                 ? r.error
                 : error_in(answer) ? error_in(answer)
                                    : "no translation");
    json_decref(answer);
    fy_buf_free(&r.body);
    return out;
}

/* The checks on a 200 answer: its translation, the expected fields, the
 * native translation. 1 passed, 0 not (out->why). */
static int judge(const dc_ctx *c, const json_t *check, const json_t *expect, const char *text,
                 dc_result *out)
{
    const char *path = json_string_value(json_object_get(check, "answer"));
    json_t *body = json_loads(text, 0, NULL);
    if (path)
        out->answer = json_is_true(json_object_get(check, "stream")) ? stream_answer(text, path)
                      : body                                         ? answer_at(body, path)
                                                                     : NULL;
    int ok = 0;
    if (!out->answer || !*out->answer) {
        snprintf(out->why, sizeof out->why, "no translation in the answer (at %s)",
                 path ? path : "?");
        goto done;
    }
    const char *k;
    const json_t *want;
    json_object_foreach((json_t *)expect, k, want)
    {
        const json_t *got = at(body, k);
        if (got && json_equal((json_t *)got, (json_t *)want)) continue;
        char *g = got ? json_dumps(got, JSON_ENCODE_ANY) : strdup("nothing");
        char *w = json_dumps(want, JSON_ENCODE_ANY);
        snprintf(out->why, sizeof out->why, "%s is %s, the client expects %s", k, g ? g : "?",
                 w ? w : "?");
        free(g);
        free(w);
        goto done;
    }
    const json_t *extra = json_object_get(check, "native");
    if (!json_is_false(extra)) {
        char *n = dc_native(c, extra, out->why, sizeof out->why);
        if (!n) goto done;
        if (strcmp(n, out->answer))
            snprintf(out->why, sizeof out->why,
                     "the translation \"%.200s\" is not the server's own \"%.200s\"", out->answer,
                     n);
        ok = !strcmp(n, out->answer);
        free(n);
        goto done;
    }
    ok = 1;
done:
    json_decref(body);
    return ok;
}

int dc_run(const dc_ctx *c, const json_t *check, dc_result *out, fy_error *err)
{
    memset(out, 0, sizeof *out);
    json_t *f = fill(c, check, err);
    if (!f) return err && err->code ? err->code : FY_ENOMEM;
    built b = {0};
    int rc = build(f, &b, err);
    reply r = {0};
    if (!rc) {
        const char *method = json_string_value(json_object_get(f, "method"));
        if (send_request(c, method ? method : "GET", b.url, b.headers, b.body, b.mime, &r)) {
            snprintf(out->why, sizeof out->why, "no answer from %s: %s", b.url, r.error);
        } else {
            out->status = r.status;
            out->ms = r.ms;
            if (r.status != 200) {
                json_t *body = json_loads(r.body.p, 0, NULL);
                const char *m = error_in(body);
                snprintf(out->why, sizeof out->why, "HTTP %ld: %.300s", r.status, m ? m : r.body.p);
                json_decref(body);
            } else {
                out->ok = judge(c, check, json_object_get(f, "expect"), r.body.p, out);
            }
        }
    }
    fy_buf_free(&r.body);
    built_free(&b);
    json_decref(f);
    return rc ? rc : out->ok;
}

void dc_result_free(dc_result *out)
{
    if (!out) return;
    free(out->answer);
    out->answer = NULL;
}
