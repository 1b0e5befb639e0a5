/* api_libre.c - the LibreTranslate dialect: POST /translate with "q"
 * (JSON, form or multipart form, as its web page sends it), GET /languages,
 * POST /detect, GET /frontend/settings (its web page starts from it),
 * POST /suggest (refused: suggestions are disabled here). Errors:
 * {"error": "..."}. Chinese is written as LibreTranslate writes it:
 * zh-Hans and zh-Hant. */
#include "server/internal.h"
#include "util/lang_rules.h"

#include <stdlib.h>
#include <string.h>

#include "text/detect.h"
#include "text/document.h"

/* LibreTranslate's code for a tag: zh-Hans for Simplified Chinese. */
static const char *libre_code(const char *tag)
{
    return strcmp(tag, "zh") ? tag : "zh-Hans";
}

static const char *libre_tag_code(const char *tag, char *buf, size_t cap)
{
    (void)buf, (void)cap;
    return libre_code(tag);
}

static json_t *libre_error(int status, const char *msg)
{
    (void)status;
    return json_pack("{s:s}", "error", msg);
}

static json_t *detected(const char *lang, int percent)
{
    return json_pack("{s:f,s:s}", "confidence", (double)percent, "language", libre_code(lang));
}

/* Field "alternatives" of in: how many alternative translations the
 * client wants (a number, or digits in a form; absent: 0). -1 when it is
 * not a number from 0 to 100. */
static int alternatives_value(json_t *in)
{
    json_t *v = json_object_get(in, "alternatives");
    const char *s = json_string_value(v);
    if (!v || json_is_null(v)) return 0;
    long k = -1;
    if (json_is_integer(v)) {
        k = (long)json_integer_value(v);
    } else if (s && *s) {
        char *end;
        k = strtol(s, &end, 10);
        if (*end) k = -1;
    }
    return k >= 0 && k <= 100 ? (int)k : -1;
}

static int field_alternatives(req *r, json_t *in)
{
    if (alternatives_value(in) >= 0) return 0;
    reply_error(r, 400, "Invalid request: alternatives parameter is not a number from 0 to 100");
    return -1;
}

static enum MHD_Result libre_finish(req *r)
{
    json_t *t = task_join_json(r);
    if (!t) return reply_error(r, 500, "out of memory");
    json_t *body = json_pack("{s:o}", "translatedText", t);
    const char *src = json_string_value(json_object_get(r->in, "source"));
    if (!src || !strcmp(src, "auto")) {
        json_t *d = r->array ? json_array() : NULL;
        for (size_t i = 0; i < task_count(r); i++) {
            int percent;
            const char *lang = fy_request_source(r->q, i, &percent);
            json_t *one = detected(lang, percent);
            if (!d) {
                d = one;
                break;
            }
            json_array_append_new(d, one);
        }
        json_object_set_new(body, "detectedLanguage", d);
    }
    /* As LibreTranslate: the list (a list per text) only when asked for. */
    if (alternatives_value(r->in) > 0) {
        json_t *a = task_alternatives_json(r);
        if (!a) {
            json_decref(body);
            return reply_error(r, 500, "out of memory");
        }
        json_object_set_new(body, "alternatives", a);
    }
    return reply_json(r, 200, body);
}

enum MHD_Result api_libre(req *r, json_t *in)
{
    const char *src, *tgt;
    int html;
    langs lg;
    if (field_string(r, in, "source", "auto", &src) || field_string(r, in, "target", NULL, &tgt) ||
        field_format(r, in, "text", &html) || field_alternatives(r, in) ||
        task_langs(r, "source", src, "target", tgt, 1, &lg))
        return REPLIED(r);
    /* Up to N alternatives from the engine's n-best lists: the beam is then
     * at least N + 1, and N at most what --max-beam allows (LibreTranslate
     * too gives what its model finds, up to N). */
    int max_beam;
    fy_registry_beam(r->srv->reg, &max_beam);
    int want = alternatives_value(in);
    r->alternatives = want < max_beam - 1 ? want : max_beam - 1;
    if (task_texts(r, in, "q", 1, html, &lg)) return REPLIED(r);
    return task_submit(r, libre_finish);
}

/* Every language a route starts or ends in, with what it translates into
 * (pivots through English included), its own name and its direction. */
static enum MHD_Result api_libre_languages(req *r)
{
    fy_registry *reg = r->srv->reg;
    char all[64][FY_LANG_MAX], tg[64][FY_LANG_MAX];
    size_t n = fy_registry_languages(reg, all, 64);
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        size_t m = fy_registry_targets(reg, all[i], tg, 64);
        json_t *targets = json_array();
        for (size_t k = 0; k < m; k++)
            json_array_append_new(targets, json_string(libre_code(tg[k])));
        /* native and dir: the rules table's own name and writing direction
         * (util/lang_rules.h), for pages that show right-to-left text so. */
        const fy_lang_rules *lr = fy_lang_rules_of(all[i]);
        json_array_append_new(list, json_pack("{s:s,s:s,s:s,s:s,s:o}", "code", libre_code(all[i]),
                                              "name", fy_lang_name(all[i]), "native",
                                              lr->native ? lr->native : fy_lang_name(all[i]), "dir",
                                              lr->rtl ? "rtl" : "ltr", "targets", targets));
    }
    return reply_json(r, 200, list);
}

static enum MHD_Result api_libre_detect(req *r)
{
    json_t *in = api_body(r);
    if (!in) return REPLIED(r);
    json_t *q = json_object_get(in, "q");
    if (!q || json_is_null(q)) return reply_error(r, 400, "field 'q' is required");
    if (!json_is_string(q)) return reply_error(r, 400, "field 'q' must be a string");
    size_t len = json_string_length(q);
    r->chars = srv_utf8_chars(json_string_value(q), len);
    if (r->chars > r->srv->o.max_chars)
        return reply_error(
            r, 413,
            "text has %zu characters; the limit is %zu characters per request (--max-chars)",
            r->chars, r->srv->o.max_chars);
    fy_detection d;
    if (fy_detect(json_string_value(q), len, 0, &d))
        return reply_error(r, 400, "field 'q' is not valid UTF-8");
    json_t *list = json_array();
    for (int k = 0; k < d.n; k++)
        json_array_append_new(list, detected(d.top[k].lang, d.top[k].percent));
    return reply_json(r, 200, list);
}

/* The language the web page starts with: a name and a code. */
static json_t *setting_lang(const char *code, const char *name)
{
    return json_pack("{s:s,s:s}", "code", code, "name", name);
}

/* The extensions /translate_file takes (".txt", ".md", ".docx", ...), as
 * the web page lists them in its file picker. */
static json_t *file_formats(void)
{
    json_t *list = json_array();
    const fy_docfmt_info *f;
    for (int k = 0; (f = fy_docfmt_get(k)); k++) {
        for (const char *e = f->extensions; *e;) {
            size_t n = strcspn(e, " ");
            if (n) json_array_append_new(list, json_stringn(e, n));
            e += n;
            e += strspn(e, " ");
        }
    }
    return list;
}

/* GET /frontend/settings: what LibreTranslate's web page reads before it
 * shows anything (limits, whether a key is needed, the default pair). */
static enum MHD_Result api_libre_settings(req *r)
{
    fy_registry *reg = r->srv->reg;
    char all[64][FY_LANG_MAX];
    size_t n = fy_registry_languages(reg, all, 64);
    const char *target = n ? all[0] : "en";
    for (size_t i = 0; i < n; i++)
        if (!strcmp(all[i], "en")) target = "en";
    int key = r->srv->token != NULL, files = route_exists("POST", "/translate_file");
    json_t *formats = files ? file_formats() : json_array();
    json_t *body = json_pack("{s:I,s:i,s:b,s:b,s:b,s:b,s:o,s:{s:o,s:o}}", "charLimit",
                             (json_int_t)r->srv->o.max_chars, "frontendTimeout", 500, "apiKeys",
                             key, "keyRequired", key, "suggestions", 0, "filesTranslation", files,
                             "supportedFilesFormat", formats, "language", "source",
                             setting_lang("auto", "Auto Detect"), "target",
                             setting_lang(libre_code(target), fy_lang_name(target)));
    return reply_json(r, 200, body);
}

/* POST /suggest: LibreTranslate's answer when suggestions are off. */
static enum MHD_Result api_libre_suggest(req *r)
{
    return reply_error(r, 403, "Suggestions are disabled on this server.");
}

/* LibreTranslate's routes answer any origin, as LibreTranslate does (its web
 * page and browser clients call it from elsewhere); its POST /translate is
 * the native dialect's route, told apart by the body (api_native.c), and
 * its documents are in api_document.c. */
static const route libre_routes[] = {
    {"GET", "/languages", "languages", 0, 1, api_libre_languages, NULL},
    {"POST", "/detect", "detect", 1, 1, api_libre_detect, NULL},
    {"GET", "/frontend/settings", "libre_settings", 0, 1, api_libre_settings, NULL},
    {"POST", "/suggest", "libre_suggest", 0, 1, api_libre_suggest, NULL},
    {"GET", "/spec", "openapi", 0, 1, op_openapi, NULL},
};

const dialect dialect_libre = {
    "libre",     libre_routes,   sizeof libre_routes / sizeof *libre_routes,
    libre_error, libre_tag_code, 0};
