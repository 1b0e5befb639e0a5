/* api_deepl_glossary.c - DeepL's glossary API over the server's glossary
 * store (translate/glossary_store.h), as deepl-node, deepl-python and the
 * plug-ins with a DeepL key call it:
 *   v2 (one direction per glossary)
 *     GET    /v2/glossary-language-pairs  every pair this server translates
 *     POST   /v2/glossaries               name, source_lang, target_lang, entries,
 *                                         entries_format (tsv, csv) -> 201
 *     GET    /v2/glossaries               the glossaries with one dictionary
 *     GET    /v2/glossaries/ID            one of them
 *     GET    /v2/glossaries/ID/entries    its entries as TSV
 *     DELETE /v2/glossaries/ID            -> 204
 *   v3 (dictionaries: one per direction)
 *     POST   /v3/glossaries               name, dictionaries (JSON list, or form
 *                                         fields dictionaries[N].source_lang ...)
 *     GET    /v3/glossaries[/ID]
 *     PATCH  /v3/glossaries/ID            name and/or dictionaries, merged in
 *     DELETE /v3/glossaries/ID
 *     GET    /v3/glossaries/ID/entries?source_lang=&target_lang=
 *     PUT    /v3/glossaries/ID/dictionaries  source_lang, target_lang, entries:
 *                                         replaces (or adds) that dictionary
 *     DELETE /v3/glossaries/ID/dictionaries?source_lang=&target_lang=
 * Languages are written lower case, as DeepL writes a glossary's ("en"),
 * and a regional code counts as its language (EN-GB is en). Errors are
 * DeepL's {"message"}; an unknown glossary is a 404, which deepl-node
 * raises as GlossaryNotFoundError. Every route needs the API token when the
 * server has one. */
#include "server/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- answers ------------------------------------------------------------------------ */

static void iso_time(int64_t ms, char out[40])
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    size_t n = strftime(out, 40, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + n, 40 - n, ".%03dZ", (int)(ms % 1000));
}

static json_t *v2_info(const fy_glossary_meta *m)
{
    char when[40];
    iso_time(m->created_ms, when);
    const fy_gstore_dict *d = &m->dicts[0];
    return json_pack("{s:s,s:s,s:b,s:s,s:s,s:s,s:I}", "glossary_id", m->id, "name", m->name,
                     "ready", 1, "source_lang", d->source, "target_lang", d->target,
                     "creation_time", when, "entry_count", (json_int_t)d->entries);
}

static json_t *v3_dict(const fy_gstore_dict *d)
{
    return json_pack("{s:s,s:s,s:I}", "source_lang", d->source, "target_lang", d->target,
                     "entry_count", (json_int_t)d->entries);
}

static json_t *v3_info(const fy_glossary_meta *m)
{
    char when[40];
    iso_time(m->created_ms, when);
    json_t *dicts = json_array();
    for (int k = 0; dicts && k < m->ndicts; k++)
        json_array_append_new(dicts, v3_dict(&m->dicts[k]));
    return json_pack("{s:s,s:s,s:o,s:s}", "glossary_id", m->id, "name", m->name, "dictionaries",
                     dicts, "creation_time", when);
}

static enum MHD_Result reply_body(req *r, int status, json_t *body)
{
    return body ? reply_json(r, status, body) : reply_error(r, 500, "out of memory");
}

static enum MHD_Result no_content(req *r)
{
    return reply_text(r, 204, "text/plain; charset=utf-8", "", 0);
}

/* ---- requests ----------------------------------------------------------------------- */

/* A DeepL language field (EN, en-GB, ZH-HANT) into a tag; -1 after a 400. */
static int lang_of(req *r, const char *field, const char *v, char out[FY_LANG_MAX])
{
    if (v && *v && fy_lang_normalize(v, out) == 0) return 0;
    if (!v || !*v)
        reply_error(r, 400, "Value for '%s' not supported: the field is required", field);
    else
        reply_error(r, 400, "Value for '%s' not supported: '%.40s' is not a language", field, v);
    return -1;
}

/* A dictionary from fields source_lang, target_lang, entries, entries_format
 * of o (prefix: how the body names them, "" or "dictionaries[N]."). NULL
 * after a reply. */
static fy_glossary *dict_of(req *r, json_t *o, const char *prefix)
{
    char f[4][64];
    const char *names[4] = {"source_lang", "target_lang", "entries", "entries_format"};
    const char *v[4];
    for (int k = 0; k < 4; k++) {
        snprintf(f[k], sizeof f[k], "%s%s", prefix, names[k]);
        v[k] = json_string_value(json_object_get(o, names[k]));
    }
    char src[FY_LANG_MAX], tgt[FY_LANG_MAX];
    if (lang_of(r, f[0], v[0], src) || lang_of(r, f[1], v[1], tgt)) return NULL;
    if (v[3] && strcmp(v[3], "tsv") && strcmp(v[3], "csv")) {
        reply_error(r, 400, "Value for '%s' not supported: it must be \"tsv\" or \"csv\"", f[3]);
        return NULL;
    }
    if (!v[2] || !*v[2]) {
        reply_error(r, 400, "Missing or empty '%s': a glossary needs entries", f[2]);
        return NULL;
    }
    fy_error err = {0};
    fy_glossary *g = fy_glossary_new(src, tgt, &err);
    if (!g) {
        reply_error(r, 500, "%s", err.msg);
        return NULL;
    }
    int format = v[3] && !strcmp(v[3], "csv") ? FY_GLOSSARY_CSV : FY_GLOSSARY_TSV;
    if (glossary_entries(r, g, f[2], json_object_get(o, "entries"), format) ||
        fy_glossary_compile(g, &err)) {
        if (err.code) reply_error(r, 500, "%s", err.msg);
        fy_glossary_unref(g);
        return NULL;
    }
    return g;
}

/* The dictionaries of a v3 body: a JSON list "dictionaries", or the form
 * fields "dictionaries[N].source_lang" etc. Returns how many into d, -1
 * after a reply. */
static int dicts_of(req *r, json_t *in, fy_glossary **d)
{
    json_t *list = json_object_get(in, "dictionaries");
    int n = 0;
    if (json_is_array(list)) {
        if (json_array_size(list) > FY_GSTORE_DICTS_MAX) {
            reply_error(r, 400, "a glossary has at most %d dictionaries", FY_GSTORE_DICTS_MAX);
            return -1;
        }
        for (size_t i = 0; i < json_array_size(list); i++) {
            char prefix[48];
            snprintf(prefix, sizeof prefix, "dictionaries[%zu].", i);
            if (!(d[n] = dict_of(r, json_array_get(list, i), prefix))) goto fail;
            n++;
        }
        return n;
    }
    for (int i = 0; i < FY_GSTORE_DICTS_MAX; i++) { /* form fields */
        char prefix[32], key[64];
        snprintf(prefix, sizeof prefix, "dictionaries[%d].", i);
        json_t *one = json_object();
        const char *names[4] = {"source_lang", "target_lang", "entries", "entries_format"};
        int any = 0;
        for (int k = 0; one && k < 4; k++) {
            snprintf(key, sizeof key, "%s%s", prefix, names[k]);
            json_t *v = json_object_get(in, key);
            if (v) json_object_set(one, names[k], v), any = 1;
        }
        if (!any) {
            json_decref(one);
            break;
        }
        d[n] = one ? dict_of(r, one, prefix) : NULL;
        json_decref(one);
        if (!d[n]) goto fail;
        n++;
    }
    return n;
fail:
    for (int k = 0; k < n; k++) fy_glossary_unref(d[k]);
    return -1;
}

static void unref_all(fy_glossary **d, int n)
{
    for (int k = 0; k < n; k++) fy_glossary_unref(d[k]);
}

/* The path after prefix: the id (cap bytes) and what follows it ("",
 * "/entries", "/dictionaries"). -1 after a 404. */
static int path_of(req *r, const char *prefix, char *id, size_t cap, const char **rest)
{
    const char *p = r->url + strlen(prefix);
    id[0] = '\0';
    *rest = "";
    if (!*p || !strcmp(p, "/")) return 0;
    size_t n = strcspn(++p, "/");
    if (!n || n >= cap) {
        reply_error(r, 404, "Glossary not found");
        return -1;
    }
    memcpy(id, p, n);
    id[n] = '\0';
    *rest = p + n;
    return 0;
}

static enum MHD_Result store_error(req *r, const fy_error *err)
{
    if (err->code == FY_ENOTFOUND) return reply_error(r, 404, "Glossary not found: %s", err->msg);
    return glossary_store_error(r, err);
}

static enum MHD_Result not_allowed(req *r, const char *allow)
{
    r->allow = allow;
    return reply_error(r, 405, "Method not allowed: %s %s (allowed: %s)", r->method, r->url, allow);
}

/* {"glossaries": [...]} in one version's view; v2 sees only one-dictionary glossaries. */
static enum MHD_Result list_glossaries(req *r, json_t *(*info)(const fy_glossary_meta *),
                                       int one_dict_only)
{
    fy_glossary_meta *l;
    size_t n;
    fy_error err = {0};
    if (fy_glossary_store_list(r->srv->o.glossaries, NULL, NULL, &l, &n, &err))
        return store_error(r, &err);
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++)
        if (!one_dict_only || l[i].ndicts == 1) json_array_append_new(arr, info(&l[i]));
    free(l);
    return reply_body(r, 200, arr ? json_pack("{s:o}", "glossaries", arr) : NULL);
}

/* ---- v2 ------------------------------------------------------------------------------ */

static enum MHD_Result v2_create(req *r)
{
    json_t *in = api_body(r);
    if (!in) return REPLIED(r);
    const char *name = json_string_value(json_object_get(in, "name"));
    if (!name || !*name) return reply_error(r, 400, "Missing or empty 'name'");
    fy_glossary *d = dict_of(r, in, "");
    if (!d) return REPLIED(r);
    fy_glossary_meta m;
    fy_error err = {0};
    int rc = fy_glossary_store_create(r->srv->o.glossaries, name, &d, 1, &m, &err);
    fy_glossary_unref(d);
    return rc ? store_error(r, &err) : reply_body(r, 201, v2_info(&m));
}

/* The v2 view of glossary id (one dictionary); -1 after a reply. */
static int v2_meta(req *r, const char *id, fy_glossary_meta *m)
{
    fy_error err = {0};
    if (fy_glossary_store_meta(r->srv->o.glossaries, id, m, &err)) {
        store_error(r, &err);
        return -1;
    }
    if (m->ndicts != 1) {
        reply_error(r, 400, "glossary %s has %d dictionaries: use the v3 glossary endpoints for it",
                    id, m->ndicts);
        return -1;
    }
    return 0;
}

static enum MHD_Result v2_entries(req *r, const char *id)
{
    fy_glossary_meta m;
    if (v2_meta(r, id, &m)) return REPLIED(r);
    fy_error err = {0};
    fy_glossary *g =
        fy_glossary_store_get(r->srv->o.glossaries, id, m.dicts[0].source, m.dicts[0].target, &err);
    if (!g) return store_error(r, &err);
    size_t len;
    char *tsv = fy_glossary_export(g, FY_GLOSSARY_TSV, &len);
    fy_glossary_unref(g);
    if (len && tsv[len - 1] == '\n') len--; /* DeepL's entries end without one */
    enum MHD_Result rc =
        tsv ? reply_text(r, 200, "text/tab-separated-values; charset=utf-8", tsv, len)
            : reply_error(r, 500, "out of memory");
    free(tsv);
    return rc;
}

enum MHD_Result api_deepl_glossaries_v2(req *r)
{
    char id[FY_GSTORE_ID_MAX];
    const char *rest, *m = r->method;
    int get = !strcmp(m, "GET") || !strcmp(m, "HEAD");
    if (!r->srv->o.glossaries) return reply_error(r, 503, "this server keeps no glossaries");
    if (path_of(r, "/v2/glossaries", id, sizeof id, &rest)) return REPLIED(r);
    if (!id[0]) {
        if (!strcmp(m, "POST")) return v2_create(r);
        if (!get) return not_allowed(r, "GET, HEAD, POST, OPTIONS");
        return api_auth(r) ? REPLIED(r) : list_glossaries(r, v2_info, 1);
    }
    if (*rest && strcmp(rest, "/entries")) return reply_error(r, 404, "Not found: %s", r->url);
    if (api_auth(r)) return REPLIED(r);
    if (*rest) return get ? v2_entries(r, id) : not_allowed(r, "GET, HEAD, OPTIONS");
    fy_glossary_meta meta;
    fy_error err = {0};
    if (get) return v2_meta(r, id, &meta) ? REPLIED(r) : reply_body(r, 200, v2_info(&meta));
    if (strcmp(m, "DELETE")) return not_allowed(r, "GET, HEAD, DELETE, OPTIONS");
    if (fy_glossary_store_delete(r->srv->o.glossaries, id, &err)) return store_error(r, &err);
    return no_content(r);
}

/* GET /v2/glossary-language-pairs: every direction this server translates
 * (pivots through English included), in both spellings DeepL's clients see. */
enum MHD_Result api_deepl_glossary_pairs(req *r)
{
    if (api_auth(r)) return REPLIED(r);
    fy_registry *reg = r->srv->reg;
    char all[64][FY_LANG_MAX];
    size_t n = fy_registry_languages(reg, all, 64);
    json_t *list = json_array();
    for (size_t i = 0; list && i < n; i++)
        for (size_t k = 0; k < n; k++)
            if (i != k && fy_registry_route_kind(reg, all[i], all[k]) > 0)
                json_array_append_new(
                    list, json_pack("{s:s,s:s}", "source_lang", all[i], "target_lang", all[k]));
    return reply_body(r, 200, list ? json_pack("{s:o}", "supported_languages", list) : NULL);
}

/* ---- /v2/translate ------------------------------------------------------------------- */

int deepl_translate_glossaries(req *r, json_t *in, const langs *lg)
{
    const char *one, *many;
    if (field_string(r, in, "glossary_id", NULL, &one) ||
        field_string(r, in, "glossary_ids", NULL, &many))
        return -1;
    if ((!one || !*one) && (!many || !*many)) return 0;
    if (one && *one && many && *many) {
        reply_error(r, 400, "glossary_id and glossary_ids cannot be used together");
        return -1;
    }
    if (!lg->src[0]) {
        reply_error(r, 400, "Use of a glossary requires the source_lang parameter to be set");
        return -1;
    }
    if (one && *one) return task_glossary_id(r, "glossary_id", one, lg);
    for (const char *p = many; *p;) { /* comma-separated, as deepl-node sends them */
        size_t n = strcspn(p, ",");
        char id[FY_GSTORE_ID_MAX];
        if (n && n < sizeof id) {
            memcpy(id, p, n);
            id[n] = '\0';
            if (task_glossary_id(r, "glossary_ids", id, lg)) return -1;
        } else if (n) {
            reply_error(r, 400, "Value for 'glossary_ids' not supported: '%.40s'", p);
            return -1;
        }
        p += n + (p[n] == ',');
    }
    return 0;
}

/* ---- v3 ------------------------------------------------------------------------------ */

static enum MHD_Result v3_create(req *r)
{
    json_t *in = api_body(r);
    if (!in) return REPLIED(r);
    const char *name = json_string_value(json_object_get(in, "name"));
    if (!name || !*name) return reply_error(r, 400, "Missing or empty 'name'");
    fy_glossary *d[FY_GSTORE_DICTS_MAX];
    int n = dicts_of(r, in, d);
    if (n < 0) return REPLIED(r);
    if (!n) return reply_error(r, 400, "Missing 'dictionaries': a glossary needs one");
    fy_glossary_meta m;
    fy_error err = {0};
    int rc = fy_glossary_store_create(r->srv->o.glossaries, name, d, n, &m, &err);
    unref_all(d, n);
    return rc ? store_error(r, &err) : reply_body(r, 201, v3_info(&m));
}

static enum MHD_Result v3_patch(req *r, const char *id)
{
    json_t *in = api_body(r);
    if (!in) return REPLIED(r);
    json_t *nv = json_object_get(in, "name");
    const char *name = json_string_value(nv);
    if (nv && (!name || !*name)) return reply_error(r, 400, "Value for 'name' not supported");
    fy_glossary *d[FY_GSTORE_DICTS_MAX];
    int n = dicts_of(r, in, d);
    if (n < 0) return REPLIED(r);
    fy_glossary_meta m;
    fy_error err = {0};
    int rc =
        fy_glossary_store_update(r->srv->o.glossaries, id, name, d, n, FY_GSTORE_MERGE, &m, &err);
    unref_all(d, n);
    return rc ? store_error(r, &err) : reply_body(r, 200, v3_info(&m));
}

/* ?source_lang=&target_lang= (a v3 dictionary); -1 after a reply. */
static int pair_of(req *r, char src[FY_LANG_MAX], char tgt[FY_LANG_MAX])
{
    return lang_of(r, "source_lang", req_arg(r, "source_lang"), src) ||
                   lang_of(r, "target_lang", req_arg(r, "target_lang"), tgt)
               ? -1
               : 0;
}

static enum MHD_Result v3_entries(req *r, const char *id)
{
    char src[FY_LANG_MAX], tgt[FY_LANG_MAX];
    if (pair_of(r, src, tgt)) return REPLIED(r);
    fy_error err = {0};
    fy_glossary *g = fy_glossary_store_get(r->srv->o.glossaries, id, src, tgt, &err);
    if (!g) return store_error(r, &err);
    size_t len;
    char *tsv = fy_glossary_export(g, FY_GLOSSARY_TSV, &len);
    fy_glossary_unref(g);
    if (!tsv) return reply_error(r, 500, "out of memory");
    if (len && tsv[len - 1] == '\n') tsv[len - 1] = '\0';
    json_t *one = json_pack("{s:s,s:s,s:s,s:s}", "source_lang", src, "target_lang", tgt, "entries",
                            tsv, "entries_format", "tsv");
    free(tsv);
    return reply_body(r, 200, one ? json_pack("{s:[o]}", "dictionaries", one) : NULL);
}

static enum MHD_Result v3_put_dict(req *r, const char *id)
{
    json_t *in = api_body(r);
    if (!in) return REPLIED(r);
    fy_glossary *d = dict_of(r, in, "");
    if (!d) return REPLIED(r);
    fy_glossary_meta m;
    fy_error err = {0};
    int rc = fy_glossary_store_update(r->srv->o.glossaries, id, NULL, &d, 1, FY_GSTORE_REPLACE, &m,
                                      &err);
    char src[FY_LANG_MAX], tgt[FY_LANG_MAX];
    snprintf(src, sizeof src, "%s", fy_glossary_source(d));
    snprintf(tgt, sizeof tgt, "%s", fy_glossary_target(d));
    fy_glossary_unref(d);
    if (rc) return store_error(r, &err);
    for (int k = 0; k < m.ndicts; k++)
        if (!strcmp(m.dicts[k].source, src) && !strcmp(m.dicts[k].target, tgt))
            return reply_body(r, 200, v3_dict(&m.dicts[k]));
    return reply_error(r, 500, "the dictionary was not stored");
}

static enum MHD_Result v3_delete_dict(req *r, const char *id)
{
    char src[FY_LANG_MAX], tgt[FY_LANG_MAX];
    if (pair_of(r, src, tgt)) return REPLIED(r);
    fy_error err = {0};
    if (fy_glossary_store_delete_dict(r->srv->o.glossaries, id, src, tgt, &err))
        return store_error(r, &err);
    return no_content(r);
}

static enum MHD_Result v3_one(req *r, const char *id, int get)
{
    fy_glossary_meta m;
    fy_error err = {0};
    if (!strcmp(r->method, "PATCH")) return v3_patch(r, id);
    if (api_auth(r)) return REPLIED(r);
    if (get) {
        if (fy_glossary_store_meta(r->srv->o.glossaries, id, &m, &err)) return store_error(r, &err);
        return reply_body(r, 200, v3_info(&m));
    }
    if (strcmp(r->method, "DELETE")) return not_allowed(r, "GET, HEAD, PATCH, DELETE, OPTIONS");
    if (fy_glossary_store_delete(r->srv->o.glossaries, id, &err)) return store_error(r, &err);
    return no_content(r);
}

enum MHD_Result api_deepl_glossaries_v3(req *r)
{
    char id[FY_GSTORE_ID_MAX];
    const char *rest, *m = r->method;
    int get = !strcmp(m, "GET") || !strcmp(m, "HEAD");
    if (!r->srv->o.glossaries) return reply_error(r, 503, "this server keeps no glossaries");
    if (path_of(r, "/v3/glossaries", id, sizeof id, &rest)) return REPLIED(r);
    if (!id[0]) {
        if (!strcmp(m, "POST")) return v3_create(r);
        if (!get) return not_allowed(r, "GET, HEAD, POST, OPTIONS");
        return api_auth(r) ? REPLIED(r) : list_glossaries(r, v3_info, 0);
    }
    if (!*rest) return v3_one(r, id, get);
    if (!strcmp(rest, "/entries")) {
        if (!get) return not_allowed(r, "GET, HEAD, OPTIONS");
        return api_auth(r) ? REPLIED(r) : v3_entries(r, id);
    }
    if (strcmp(rest, "/dictionaries")) return reply_error(r, 404, "Not found: %s", r->url);
    if (!strcmp(m, "PUT")) return v3_put_dict(r, id);
    if (strcmp(m, "DELETE")) return not_allowed(r, "PUT, DELETE, OPTIONS");
    return api_auth(r) ? REPLIED(r) : v3_delete_dict(r, id);
}
