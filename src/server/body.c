/* body.c - request bodies: their limits (bytes per route, the server's
 * request memory), how they arrive (a Content-Length, or chunked), and what
 * they become (a JSON object, or form fields as one).
 *
 * A body with a Content-Length over its route's limit is refused from the
 * headers, and the whole cost of one within it is reserved before a byte
 * is kept. A chunked body's size is known only at its end, and
 * libmicrohttpd cannot answer in the middle of a body (it queues an answer
 * only before the body or after it): so a chunked body grows its buffer and
 * its reservation as it arrives, and one that passes the limit (or the
 * budget) is read to its end and dropped, then answered 413 (503), like the
 * same body with a length. Past the limit by more than LINGER_BYTES the
 * connection is closed instead: nobody waits for an endless body
 * (docs/reliability.md, "Chunked request bodies").
 */
#include "server/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- sizes for people ------------------------------------------------------ */

/* n bytes as "512 bytes", "95.1 KiB", "20.1 MiB", with decimals digits. */
static void size_fmt(uint64_t n, int decimals, char *buf, size_t cap)
{
    if (n < 1024)
        snprintf(buf, cap, "%llu byte%s", (unsigned long long)n, n == 1 ? "" : "s");
    else if (n < (uint64_t)1 << 20)
        snprintf(buf, cap, "%.*f KiB", decimals, (double)n / 1024);
    else if (n < (uint64_t)1 << 30)
        snprintf(buf, cap, "%.*f MiB", decimals, (double)n / (1 << 20));
    else
        snprintf(buf, cap, "%.*f GiB", decimals, (double)n / (1 << 30));
}

const char *size_text(uint64_t n, char *buf, size_t cap)
{
    size_fmt(n, 1, buf, cap);
    return buf;
}

const char *size_over(uint64_t n, uint64_t limit, char *buf, size_t cap)
{
    char lim[32];
    for (int d = 1; d <= 3; d++) {
        size_fmt(n, d, buf, cap);
        size_fmt(limit, d, lim, sizeof lim);
        if (n <= limit || strcmp(buf, lim)) return buf; /* reads as more than the limit */
    }
    snprintf(buf, cap, "%llu bytes", (unsigned long long)n);
    return buf;
}

/* ---- limits ------------------------------------------------------------------ */

/* Bytes a JSON or form body may have: JSON can spend up to 6 bytes per
 * character (\uXXXX), plus room for field names and array punctuation. */
static size_t text_limit(const fy_server *s)
{
    return s->o.max_chars * 6 + s->o.max_items * 16 + 65536;
}

size_t body_route_limit(const fy_server *s, const route *rt)
{
    size_t d = doc_body_limit(s, rt), g = glossary_body_limit(s, rt);
    return d ? d : g ? g : text_limit(s);
}

/* The 413 of a body of n bytes over its route's limit, naming the options
 * that set it. */
static enum MHD_Result reply_too_large(req *r, uint64_t n)
{
    fy_server *s = r->srv;
    char got[32], lim[32];
    size_t limit = body_route_limit(s, r->rt);
    size_over(n, limit, got, sizeof got);
    if (doc_body_limit(s, r->rt))
        return reply_error(
            r, 413, "the upload is %s, over the limit of --max-document-mb %zu (%s per document)",
            got, s->o.max_document_bytes >> 20,
            size_text(s->o.max_document_bytes, lim, sizeof lim));
    if (glossary_body_limit(s, r->rt))
        return reply_error(r, 413, "the glossary is %s, over the limit of %s per request", got,
                           size_text(limit, lim, sizeof lim));
    return reply_error(r, 413,
                       "the request body is %s, over the limit of %s that --max-chars %zu "
                       "and --max-batch-items %zu set",
                       got, size_text(limit, lim, sizeof lim), s->o.max_chars, s->o.max_items);
}

/* What a request with a body of n bytes is charged against
 * --request-memory: the body, the JSON document or form built from it and
 * the texts and sentences of its translation, about 4 times the body (with
 * json_shape's bounds; measured in docs/reliability.md), and a fixed part
 * for the request itself. */
static size_t req_cost(size_t n)
{
    return 4 * n + 16384;
}

/* Reserves n more bytes of request memory for r; -1 when the budget has no room. */
static int mem_reserve(req *r, size_t n)
{
    fy_server *s = r->srv;
    pthread_mutex_lock(&s->lock);
    int ok = s->mem_used + n <= s->o.request_memory;
    if (ok) {
        s->mem_used += n;
        r->charge += n;
    } else {
        s->mem_refused++;
    }
    pthread_mutex_unlock(&s->lock);
    return ok ? 0 : -1;
}

static enum MHD_Result reply_no_memory(req *r)
{
    return reply_error(r, 503,
                       "the memory for requests in progress (--request-memory %zu MiB) is in "
                       "use; retry later",
                       r->srv->o.request_memory >> 20);
}

/* ---- arriving ---------------------------------------------------------------- */

int body_begin(req *r)
{
    fy_server *s = r->srv;
    r->chunked = req_header(r, MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL; /* strict.c: chunked */
    const char *cl = req_header(r, MHD_HTTP_HEADER_CONTENT_LENGTH);
    unsigned long long n = cl ? strtoull(cl, NULL, 10) : 0;
    if (n > body_route_limit(s, r->rt)) return reply_too_large(r, n), -1;
    /* The whole cost is reserved before a byte of the body is kept, so the
     * bodies in flight and what they become never exceed the budget. */
    if (n && mem_reserve(r, req_cost(n))) return reply_no_memory(r), -1;
    r->declared = n;
    return 0;
}

/* Room for n more bytes of a chunked body: the buffer doubles (up to the
 * limit) and its cost is reserved as it grows. 0, or the status the body
 * gets at its end: 413 (over the limit), 503 (no request memory), 500. */
static int chunked_room(req *r, size_t n)
{
    size_t limit = body_route_limit(r->srv, r->rt);
    if (r->len + n > limit) return 413;
    if (r->len + n < r->cap) return 0;
    size_t cap = r->cap ? r->cap : 4096;
    while (cap <= r->len + n) cap *= 2;
    if (cap > limit + 1) cap = limit + 1;
    size_t more = req_cost(cap) - (r->cap ? req_cost(r->cap) : 0);
    if (mem_reserve(r, more)) return 503;
    char *p = realloc(r->body, cap);
    if (!p) return 500;
    r->body = p;
    r->cap = cap;
    return 0;
}

enum MHD_Result body_append(req *r, const char *data, size_t n)
{
    if (r->chunked && !r->refused) r->refused = chunked_room(r, n);
    if (r->refused) {
        /* Dropped; the answer comes at the end of the body. A body that
         * goes on and on is not read to its end. */
        r->dropped += n;
        return r->dropped > LINGER_BYTES ? MHD_NO : MHD_YES;
    }
    /* With a Content-Length libmicrohttpd never passes more: that would be
     * a bug, and the connection is cut. The buffer is allocated once, at
     * the declared size (growing it by doubling would spend up to twice the
     * body). */
    if (!r->chunked && r->len + n > r->declared) return MHD_NO;
    if (!r->body) {
        r->body = malloc(r->declared + 1);
        if (!r->body) return MHD_NO;
        r->cap = r->declared + 1;
    }
    memcpy(r->body + r->len, data, n);
    r->len += n;
    r->body[r->len] = '\0';
    return MHD_YES;
}

int body_end(req *r)
{
    if (!r->refused) return 0;
    if (r->refused == 413) return reply_too_large(r, r->len + r->dropped), -1;
    if (r->refused == 503) return reply_no_memory(r), -1;
    return reply_error(r, 500, "out of memory"), -1;
}

/* ---- parsing: JSON and forms ---------------------------------------------- */

/* Form fields as they arrive from MHD's post processor (values come in
 * pieces; a key may repeat). */
typedef struct form {
    struct field {
        char *key, *val;
        size_t len;
    } * f;
    size_t n, cap;
    size_t max;   /* fields a request can have (body_max_values) */
    int too_many; /* more came: the body was not read further */
} form;

static enum MHD_Result form_field(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *filename, const char *content_type,
                                  const char *transfer_encoding, const char *data, uint64_t off,
                                  size_t size)
{
    (void)kind, (void)filename, (void)content_type, (void)transfer_encoding;
    form *fm = cls;
    if (!key) return MHD_YES; /* a multipart part without a name: ignored */
    struct field *f = fm->n ? &fm->f[fm->n - 1] : NULL;
    if (off == 0 || !f || strcmp(f->key, key)) {
        if (fm->n >= fm->max) {
            fm->too_many = 1;
            return MHD_NO;
        }
        if (fy_vec_reserve((void **)&fm->f, &fm->cap, fm->n + 1, sizeof *fm->f)) return MHD_NO;
        f = &fm->f[fm->n];
        *f = (struct field){strdup(key), NULL, 0};
        if (!f->key) return MHD_NO;
        fm->n++;
    }
    char *v = realloc(f->val, f->len + size + 1);
    if (!v) return MHD_NO;
    if (size) memcpy(v + f->len, data, size); /* data may be NULL when size is 0 */
    f->len += size;
    v[f->len] = '\0';
    f->val = v;
    return MHD_YES;
}

/* Form fields as a JSON object: a repeated key (or one named "key[]")
 * becomes an array. A value that is not valid UTF-8 or holds a NUL (%00;
 * a JSON body cannot carry one either) sets *bad to its key. */
static json_t *form_json(form *fm, char **bad)
{
    json_t *out = json_object();
    for (size_t i = 0; out && i < fm->n; i++) {
        struct field *f = &fm->f[i];
        size_t kl = strlen(f->key);
        int is_list = kl > 2 && !strcmp(f->key + kl - 2, "[]");
        if (is_list) f->key[kl - 2] = '\0';
        int nul = f->val && memchr(f->val, '\0', f->len) != NULL;
        json_t *v = nul ? NULL : json_stringn(f->val ? f->val : "", f->len);
        if (!v) {
            if (!*bad) *bad = strdup(f->key);
            v = json_null();
        }
        json_t *old = json_object_get(out, f->key);
        if (json_is_array(old)) {
            json_array_append_new(old, v);
        } else if (old || is_list) {
            json_t *arr = json_array();
            if (old) json_array_append(arr, old);
            json_array_append_new(arr, v);
            json_object_set_new(out, f->key, arr);
        } else {
            json_object_set_new(out, f->key, v);
        }
    }
    return out;
}

static void form_free(form *fm)
{
    for (size_t i = 0; i < fm->n; i++) {
        free(fm->f[i].key);
        free(fm->f[i].val);
    }
    free(fm->f);
}

static int is_form(const char *ct)
{
    return ct && (!strncasecmp(ct, "application/x-www-form-urlencoded", 33) ||
                  !strncasecmp(ct, "multipart/form-data", 19));
}

static int is_json_type(const char *ct)
{
    if (!ct || !*ct) return 1;
    return !strncasecmp(ct, "application/json", 16) || !strncasecmp(ct, "text/plain", 10) ||
           strstr(ct, "+json") != NULL || !strncasecmp(ct, "*/*", 3);
}

/* JSON values (keys included) or form fields a request can need: its
 * texts, each maybe with a key, and room for the dialect's other fields.
 * More cannot be a valid request, so such a body is refused before a
 * document is built: jansson spends some 50 bytes per value, and a body
 * of zeros ([0,0,...]) would cost 25 times its size. */
static size_t body_max_values(const fy_server *s, const route *rt)
{
    /* A glossary's entries may be a JSON object of terms. */
    if (glossary_body_limit(s, rt)) return 2 * FY_GLOSSARY_ENTRIES_MAX * 4 + 256;
    return 2 * s->o.max_items + 256;
}

enum { BODY_MAX_DEPTH = 8 }; /* {"text":[...]} is 2 deep; a request never needs 8 */

/* The shape of a JSON text without building it: 0, 1 when it nests deeper
 * than max_depth, 2 when it holds more than max_values values (keys
 * counted). Strings are skipped by their quotes and escapes; whether the
 * text is JSON at all is jansson's to say afterwards. */
static int json_shape(const char *p, size_t n, size_t max_values, int max_depth)
{
    size_t values = 0;
    int depth = 0, expect = 1; /* expect: a value (or key) may start here */
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
        if (c == '"') {
            for (i++; i < n && p[i] != '"'; i++)
                if (p[i] == '\\') i++;
        }
        if (expect || c == '"') values++;
        if (values > max_values) return 2;
        expect = c == '[' || c == '{' || c == ',' || c == ':';
        if (c == '[' || c == '{') {
            if (++depth > max_depth) return 1;
        } else if (c == ']' || c == '}') {
            depth--;
        }
    }
    return 0;
}

/* Parses the form body; NULL with *status and msg on error. */
static json_t *parse_form(req *r, int *status, char *msg, size_t cap)
{
    form fm = {.max = body_max_values(r->srv, r->rt)};
    struct MHD_PostProcessor *pp = MHD_create_post_processor(r->conn, 4096, form_field, &fm);
    *status = 400;
    if (!pp) {
        snprintf(msg, cap, "cannot parse the form body (bad Content-Type boundary?)");
        return NULL;
    }
    enum MHD_Result ok = r->len ? MHD_post_process(pp, r->body, r->len) : MHD_YES;
    MHD_destroy_post_processor(pp);
    char *bad = NULL;
    json_t *out = ok == MHD_YES ? form_json(&fm, &bad) : NULL;
    form_free(&fm);
    if (fm.too_many) {
        *status = 413;
        snprintf(msg, cap, "the form has more than %zu fields (--max-batch-items is %zu)", fm.max,
                 r->srv->o.max_items);
        return NULL;
    }
    if (!out) snprintf(msg, cap, "malformed form body");
    if (bad) {
        snprintf(msg, cap, "field '%s' is not valid UTF-8 text (or holds a NUL byte)", bad);
        free(bad);
        json_decref(out);
        return NULL;
    }
    return out;
}

json_t *req_body_parse(req *r, int *status, char *msg, size_t cap)
{
    if (r->in) return r->in;
    const char *ct = req_header(r, MHD_HTTP_HEADER_CONTENT_TYPE);
    *status = 400;
    /* `curl -d '{...}'` labels JSON as a form: a body that starts like a
     * JSON object is read as one whatever the label says. */
    size_t lead = 0;
    while (lead < r->len && strchr(" \t\r\n", r->body[lead])) lead++;
    int looks_json = lead < r->len && r->body[lead] == '{';
    if (is_form(ct) && !looks_json) return r->in = parse_form(r, status, msg, cap);
    if (is_form(ct)) ct = NULL;
    if (!is_json_type(ct)) {
        *status = 415;
        snprintf(msg, cap, "unsupported Content-Type '%.100s'; send application/json", ct);
        return NULL;
    }
    if (!r->len) {
        snprintf(msg, cap, "request body is empty; expected a JSON object");
        return NULL;
    }
    size_t bad;
    if (!fy_utf8_valid(r->body, r->len, &bad)) {
        snprintf(msg, cap, "request body is not valid UTF-8 (byte %zu)", bad);
        return NULL;
    }
    size_t max_values = body_max_values(r->srv, r->rt);
    switch (json_shape(r->body, r->len, max_values, BODY_MAX_DEPTH)) {
    case 1:
        snprintf(msg, cap, "JSON nested deeper than %d levels", BODY_MAX_DEPTH);
        return NULL;
    case 2:
        *status = 413;
        snprintf(msg, cap, "the JSON body holds more than %zu values (--max-batch-items is %zu)",
                 max_values, r->srv->o.max_items);
        return NULL;
    }
    json_error_t je;
    json_t *v = json_loadb(r->body, r->len, JSON_REJECT_DUPLICATES, &je);
    if (!v) {
        snprintf(msg, cap, "invalid JSON at line %d column %d: %s", je.line, je.column, je.text);
        return NULL;
    }
    if (!json_is_object(v)) {
        json_decref(v);
        snprintf(msg, cap, "request body must be a JSON object");
        return NULL;
    }
    return r->in = v;
}

json_t *req_body(req *r)
{
    char msg[300];
    int status;
    json_t *in = req_body_parse(r, &status, msg, sizeof msg);
    if (!in) reply_error(r, status, "%s", msg);
    return in;
}
