/* api_glossary.c - Fanyi's glossary API: the glossaries the server keeps
 * (translate/glossary_store.h), for the web page's glossary editor and any
 * client; the same store DeepL's glossary routes (api_deepl_glossary.c)
 * and every translation's glossary_id read.
 *   GET    /glossaries[?source=&target=]   the list (those for one direction)
 *   POST   /glossaries                     create: name, and source, target,
 *                                          entries (an object of terms, or TSV
 *                                          or CSV text with format), or
 *                                          dictionaries: [{source, target,
 *                                          entries, format}]
 *   GET    /glossaries/ID                  one glossary, without its entries
 *   PATCH  /glossaries/ID                  rename, and merge entries in
 *   DELETE /glossaries/ID
 *   GET    /glossaries/ID/entries?source=&target=[&format=tsv|csv|json]  export
 *   PUT    /glossaries/ID/entries?source=&target=  import: replaces that
 *                                          direction's entries (a JSON body as
 *                                          for POST, or the TSV or CSV text
 *                                          itself as text/tab-separated-values
 *                                          or text/csv)
 *   DELETE /glossaries/ID/entries?source=&target=  drops that direction
 * Every route needs the API token when the server has one. Errors are the
 * native {"error": {"code", "message"}}. */
#include "server/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Glossaries are larger than texts: 10,000 entries of a few hundred bytes. */
#define GLOSSARY_BODY_MAX ((size_t)8 << 20)

static int is_glossary_path(const char *p)
{
    static const char *const prefixes[] = {"/glossaries", "/v2/glossaries", "/v3/glossaries"};
    for (size_t k = 0; k < sizeof prefixes / sizeof *prefixes; k++) {
        size_t n = strlen(prefixes[k]);
        if (!strncmp(p, prefixes[k], n) && (p[n] == '\0' || p[n] == '/')) return 1;
    }
    return 0;
}

size_t glossary_body_limit(const fy_server *s, const route *rt)
{
    (void)s;
    return rt && is_glossary_path(rt->path) ? GLOSSARY_BODY_MAX : 0;
}

/* ---- shared with the other dialects ------------------------------------------------- */

json_t *glossary_meta_json(const fy_glossary_meta *m)
{
    char when[40];
    time_t secs = (time_t)(m->created_ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    size_t n = strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(when + n, sizeof when - n, ".%03dZ", (int)(m->created_ms % 1000));
    json_t *dicts = json_array();
    for (int k = 0; dicts && k < m->ndicts; k++)
        json_array_append_new(dicts, json_pack("{s:s,s:s,s:I}", "source", m->dicts[k].source,
                                               "target", m->dicts[k].target, "entries",
                                               (json_int_t)m->dicts[k].entries));
    return json_pack("{s:s,s:s,s:s,s:o}", "id", m->id, "name", m->name, "created", when,
                     "dictionaries", dicts);
}

int glossary_entries(req *r, fy_glossary *g, const char *field, json_t *v, int format)
{
    fy_error err = {0};
    if (json_is_string(v)) {
        if (!fy_glossary_parse(g, json_string_value(v), json_string_length(v), format, &err))
            return 0;
        reply_error(r, err.code == FY_ENOMEM ? 500 : 400, "field '%s': %s", field, err.msg);
        return -1;
    }
    if (!json_is_object(v)) {
        reply_error(r, 400,
                    "field '%s' must be an object of terms ({\"source term\": \"target "
                    "term\"}) or %s text",
                    field, format == FY_GLOSSARY_CSV ? "CSV" : "TSV");
        return -1;
    }
    const char *key;
    json_t *val;
    json_object_foreach(v, key, val)
    {
        if (!json_is_string(val)) {
            reply_error(r, 400, "field '%s': the target of '%.60s' must be a string", field, key);
            return -1;
        }
        if (fy_glossary_add(g, key, strlen(key), json_string_value(val), json_string_length(val),
                            &err)) {
            utf8_scrub(err.msg);
            reply_error(r, err.code == FY_ENOMEM ? 500 : 400, "field '%s': %s", field, err.msg);
            return -1;
        }
    }
    return 0;
}

enum MHD_Result glossary_store_error(req *r, const fy_error *err)
{
    int status = err->code == FY_ENOTFOUND ? 404
                 : err->code == FY_EINVAL  ? 400
                 : err->code == FY_ELIMIT  ? 413
                 : err->code == FY_ENET    ? 503
                                           : 500;
    return reply_error(r, status, "%s", err->msg);
}

/* ---- requests --------------------------------------------------------------------------- */

/* The path after /glossaries: id (cap bytes) and whether /entries follows.
 * -1 after a 404. */
static int parse_path(req *r, char *id, size_t cap, int *entries)
{
    const char *p = r->url + strlen("/glossaries");
    *entries = 0;
    id[0] = '\0';
    if (!*p || !strcmp(p, "/")) return 0;
    p++;
    size_t n = strcspn(p, "/");
    const char *rest = p + n;
    if (n == 0 || n >= cap || (*rest && strcmp(rest, "/entries"))) {
        reply_error(r, 404, "no such glossary route: %.100s", r->url);
        return -1;
    }
    memcpy(id, p, n);
    id[n] = '\0';
    *entries = *rest != '\0';
    return 0;
}

/* A language field (a tag, not "auto") into out; -1 after a 400. */
static int lang_field(req *r, const char *field, const char *v, char out[FY_LANG_MAX])
{
    if (!v || fy_lang_normalize(v, out) != 0) {
        reply_error(r, 400, "field '%s' must be a language code (e.g. en, de, zh)%s", field,
                    v ? "" : ", and is required");
        return -1;
    }
    return 0;
}

/* The entry format named by a field ("tsv" default, "csv"); -1 after a 400. */
static int format_field(req *r, json_t *o, int *format)
{
    const char *f;
    if (field_string(r, o, "format", "tsv", &f)) return -1;
    if (strcasecmp(f, "tsv") && strcasecmp(f, "csv")) {
        reply_error(r, 400, "field 'format' must be \"tsv\" or \"csv\", not \"%.20s\"", f);
        return -1;
    }
    *format = !strcasecmp(f, "csv") ? FY_GLOSSARY_CSV : FY_GLOSSARY_TSV;
    return 0;
}

/* One dictionary from o's source, target, entries and format; NULL after a
 * reply. where prefixes the field names ("dictionaries[1].", or ""). */
static fy_glossary *dict_from(req *r, json_t *o, const char *where)
{
    char sf[48], tf[48], ef[48], src[FY_LANG_MAX], tgt[FY_LANG_MAX];
    snprintf(sf, sizeof sf, "%ssource", where);
    snprintf(tf, sizeof tf, "%starget", where);
    snprintf(ef, sizeof ef, "%sentries", where);
    const char *s, *t;
    int format;
    json_t *e = json_object_get(o, "entries");
    if (field_string(r, o, "source", NULL, &s) || field_string(r, o, "target", NULL, &t) ||
        lang_field(r, sf, s, src) || lang_field(r, tf, t, tgt) || format_field(r, o, &format))
        return NULL;
    if (!e || json_is_null(e)) {
        reply_error(r, 400, "field '%s' is required", ef);
        return NULL;
    }
    fy_error err = {0};
    fy_glossary *g = fy_glossary_new(src, tgt, &err);
    if (!g || glossary_entries(r, g, ef, e, format) || fy_glossary_compile(g, &err)) {
        if (!g || err.code) reply_error(r, 500, "%s", err.msg);
        fy_glossary_unref(g);
        return NULL;
    }
    return g;
}

/* The dictionaries of a body: its "dictionaries" list, or one from its own
 * fields. Returns how many (into d), -1 after a reply. */
static int dicts_from(req *r, json_t *in, fy_glossary **d, int need)
{
    json_t *list = json_object_get(in, "dictionaries");
    if (!list && !json_object_get(in, "entries") && !need) return 0;
    if (!list) return (d[0] = dict_from(r, in, "")) ? 1 : -1;
    if (!json_is_array(list) || json_array_size(list) > FY_GSTORE_DICTS_MAX) {
        reply_error(r, 400, "field 'dictionaries' must be a list of at most %d objects",
                    FY_GSTORE_DICTS_MAX);
        return -1;
    }
    int n = 0;
    for (size_t i = 0; i < json_array_size(list); i++) {
        char where[48];
        snprintf(where, sizeof where, "dictionaries[%zu].", i);
        if (!(d[n] = dict_from(r, json_array_get(list, i), where))) {
            for (int k = 0; k < n; k++) fy_glossary_unref(d[k]);
            return -1;
        }
        n++;
    }
    return n;
}

static void unref_all(fy_glossary **d, int n)
{
    for (int k = 0; k < n; k++) fy_glossary_unref(d[k]);
}

static enum MHD_Result reply_meta(req *r, int status, const fy_glossary_meta *m)
{
    json_t *body = glossary_meta_json(m);
    return body ? reply_json(r, status, body) : reply_error(r, 500, "out of memory");
}

static enum MHD_Result list(req *r)
{
    fy_glossary_meta *l;
    size_t n;
    fy_error err = {0};
    char src[FY_LANG_MAX] = "", tgt[FY_LANG_MAX] = "";
    const char *s = req_arg(r, "source"), *t = req_arg(r, "target");
    if ((s || t) && (lang_field(r, "source", s, src) || lang_field(r, "target", t, tgt)))
        return REPLIED(r);
    if (fy_glossary_store_list(r->srv->o.glossaries, src, tgt, &l, &n, &err))
        return glossary_store_error(r, &err);
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++) json_array_append_new(arr, glossary_meta_json(&l[i]));
    free(l);
    if (!arr) return reply_error(r, 500, "out of memory");
    return reply_json(r, 200, json_pack("{s:o}", "glossaries", arr));
}

static enum MHD_Result create(req *r)
{
    json_t *in = api_body(r);
    const char *name;
    fy_glossary *d[FY_GSTORE_DICTS_MAX];
    if (!in || field_string(r, in, "name", NULL, &name)) return REPLIED(r);
    if (!name) return reply_error(r, 400, "field 'name' is required");
    int n = dicts_from(r, in, d, 1);
    if (n < 0) return REPLIED(r);
    fy_glossary_meta m;
    fy_error err = {0};
    int rc = fy_glossary_store_create(r->srv->o.glossaries, name, d, n, &m, &err);
    unref_all(d, n);
    return rc ? glossary_store_error(r, &err) : reply_meta(r, 201, &m);
}

static enum MHD_Result patch(req *r, const char *id)
{
    json_t *in = api_body(r);
    const char *name;
    fy_glossary *d[FY_GSTORE_DICTS_MAX];
    if (!in || field_string(r, in, "name", NULL, &name)) return REPLIED(r);
    int n = dicts_from(r, in, d, 0);
    if (n < 0) return REPLIED(r);
    fy_glossary_meta m;
    fy_error err = {0};
    int rc =
        fy_glossary_store_update(r->srv->o.glossaries, id, name, d, n, FY_GSTORE_MERGE, &m, &err);
    unref_all(d, n);
    return rc ? glossary_store_error(r, &err) : reply_meta(r, 200, &m);
}

/* ?source=&target= of an entries route; -1 after a 400. */
static int pair_args(req *r, char src[FY_LANG_MAX], char tgt[FY_LANG_MAX])
{
    return lang_field(r, "source", req_arg(r, "source"), src) ||
                   lang_field(r, "target", req_arg(r, "target"), tgt)
               ? -1
               : 0;
}

static enum MHD_Result export_entries(req *r, const char *id)
{
    char src[FY_LANG_MAX], tgt[FY_LANG_MAX];
    const char *format = req_arg(r, "format");
    if (api_auth(r) || pair_args(r, src, tgt)) return REPLIED(r);
    if (format && strcmp(format, "tsv") && strcmp(format, "csv") && strcmp(format, "json"))
        return reply_error(r, 400, "format must be tsv, csv or json, not '%.20s'", format);
    fy_error err = {0};
    fy_glossary *g = fy_glossary_store_get(r->srv->o.glossaries, id, src, tgt, &err);
    if (!g) return glossary_store_error(r, &err);
    enum MHD_Result rc;
    if (format && !strcmp(format, "json")) {
        json_t *entries = json_object();
        for (size_t i = 0; entries && i < fy_glossary_count(g); i++) {
            const char *s, *t;
            fy_glossary_entry(g, i, &s, &t);
            json_object_set_new(entries, s, json_string(t));
        }
        rc = reply_json(
            r, 200, json_pack("{s:s,s:s,s:o}", "source", src, "target", tgt, "entries", entries));
    } else {
        int csv = format && !strcmp(format, "csv");
        size_t len;
        char *text = fy_glossary_export(g, csv ? FY_GLOSSARY_CSV : FY_GLOSSARY_TSV, &len);
        rc = text ? reply_text(r, 200,
                               csv ? "text/csv; charset=utf-8"
                                   : "text/tab-separated-values; charset=utf-8",
                               text, len)
                  : reply_error(r, 500, "out of memory");
        free(text);
    }
    fy_glossary_unref(g);
    return rc;
}

/* The body of an import: raw TSV or CSV (by its Content-Type), else JSON. */
static fy_glossary *import_body(req *r, const char *src, const char *tgt)
{
    const char *ct = req_header(r, MHD_HTTP_HEADER_CONTENT_TYPE);
    int tsv = ct && !strncasecmp(ct, "text/tab-separated-values", 25);
    int csv = ct && !strncasecmp(ct, "text/csv", 8);
    fy_error err = {0};
    if (!tsv && !csv) {
        json_t *in = api_body(r);
        if (!in) return NULL;
        json_object_set_new(in, "source", json_string(src));
        json_object_set_new(in, "target", json_string(tgt));
        return dict_from(r, in, "");
    }
    if (api_auth(r)) return NULL;
    fy_glossary *g = fy_glossary_new(src, tgt, &err);
    if (g &&
        !fy_glossary_parse(g, r->body ? r->body : "", r->len,
                           csv ? FY_GLOSSARY_CSV : FY_GLOSSARY_TSV, &err) &&
        !fy_glossary_compile(g, &err))
        return g;
    utf8_scrub(err.msg);
    reply_error(r, err.code == FY_ENOMEM ? 500 : 400, "%s", err.msg);
    fy_glossary_unref(g);
    return NULL;
}

static enum MHD_Result import_entries(req *r, const char *id)
{
    char src[FY_LANG_MAX], tgt[FY_LANG_MAX];
    if (pair_args(r, src, tgt)) return REPLIED(r);
    fy_glossary *g = import_body(r, src, tgt);
    if (!g) return REPLIED(r);
    fy_glossary_meta m;
    fy_error err = {0};
    int rc = fy_glossary_store_update(r->srv->o.glossaries, id, NULL, &g, 1, FY_GSTORE_REPLACE, &m,
                                      &err);
    fy_glossary_unref(g);
    return rc ? glossary_store_error(r, &err) : reply_meta(r, 200, &m);
}

static enum MHD_Result no_content(req *r)
{
    return reply_text(r, 204, "text/plain; charset=utf-8", "", 0);
}

static enum MHD_Result delete_entries(req *r, const char *id)
{
    char src[FY_LANG_MAX], tgt[FY_LANG_MAX];
    fy_error err = {0};
    if (api_auth(r) || pair_args(r, src, tgt)) return REPLIED(r);
    if (fy_glossary_store_delete_dict(r->srv->o.glossaries, id, src, tgt, &err))
        return glossary_store_error(r, &err);
    return no_content(r);
}

static enum MHD_Result one(req *r, const char *id, const char *method)
{
    fy_error err = {0};
    if (!strcmp(method, "PATCH")) return patch(r, id);
    if (api_auth(r)) return REPLIED(r);
    if (!strcmp(method, "DELETE")) {
        if (fy_glossary_store_delete(r->srv->o.glossaries, id, &err))
            return glossary_store_error(r, &err);
        return no_content(r);
    }
    fy_glossary_meta m;
    if (fy_glossary_store_meta(r->srv->o.glossaries, id, &m, &err))
        return glossary_store_error(r, &err);
    return reply_meta(r, 200, &m);
}

static enum MHD_Result not_allowed(req *r, const char *allow)
{
    r->allow = allow;
    return reply_error(r, 405, "%s is not allowed here; allowed: %s", r->url, allow);
}

static enum MHD_Result api_glossaries(req *r)
{
    const char *method = r->method;
    char id[FY_GSTORE_ID_MAX];
    int entries;
    if (!r->srv->o.glossaries) return reply_error(r, 503, "this server keeps no glossaries");
    if (parse_path(r, id, sizeof id, &entries)) return REPLIED(r);
    int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    if (!id[0]) {
        if (get) return api_auth(r) ? REPLIED(r) : list(r);
        if (!strcmp(method, "POST")) return create(r);
        return not_allowed(r, "GET, HEAD, POST, OPTIONS");
    }
    if (!entries) {
        if (get || !strcmp(method, "PATCH") || !strcmp(method, "DELETE"))
            return one(r, id, get ? "GET" : method);
        return not_allowed(r, "GET, HEAD, PATCH, DELETE, OPTIONS");
    }
    if (get) return export_entries(r, id);
    if (!strcmp(method, "PUT")) return import_entries(r, id);
    if (!strcmp(method, "DELETE")) return delete_entries(r, id);
    return not_allowed(r, "GET, HEAD, PUT, DELETE, OPTIONS");
}

static const route glossary_routes[] = {
    {"*", "/glossaries/*", "glossaries", 1, 0, api_glossaries, NULL},
};

const dialect dialect_glossary = {"glossaries",
                                  glossary_routes,
                                  sizeof glossary_routes / sizeof *glossary_routes,
                                  native_error,
                                  NULL,
                                  0};
