/* api_google.c - Google Cloud Translation v2 (translation.googleapis.com),
 * as @google-cloud/translate, @googleapis/translate and curl call it, and
 * the web endpoint translate.googleapis.com/translate_a/single that
 * browser plug-ins (Kiss Translator's "Google") use:
 *   POST|GET /language/translate/v2            q (string or list), target,
 *                                              source, format, model
 *   POST|GET /language/translate/v2/detect     q
 *   GET|POST /language/translate/v2/languages  target (names in it), model
 *   GET|POST /translate_a/single               client, sl, tl, dt, dj, q
 * Parameters come in the body (JSON or form), the query string or both
 * (a body may be empty), the key as ?key=. Errors in Google's {"error":
 * {"code", "message", "errors", "status"}} shape. Language codes are
 * Google's: zh-CN and zh-TW for Chinese (the language list has "zh" too). */
#include "server/internal.h"

#include <stdlib.h>
#include <string.h>

#include "text/detect.h"

/* The request's parameters: the body's, with those of the query string it
 * lacks (no body: the query string's). Authenticated. NULL after a reply. */
static json_t *google_params(req *r)
{
    const char *bad;
    json_t *query = req_query(r, &bad);
    if (!query) {
        if (bad && !*bad)
            return reply_error(r, 400, "a parameter name is not valid UTF-8 text"), NULL;
        if (bad) return reply_error(r, 400, "parameter '%.60s' is not valid UTF-8 text", bad), NULL;
        return reply_error(r, 500, "out of memory"), NULL;
    }
    if (!r->len && !r->in) r->in = query; /* the query string is the request */
    json_t *in = api_body(r);
    if (in && in != query) {
        const char *key;
        json_t *v;
        json_object_foreach(query, key, v)
        {
            if (!json_object_get(in, key)) json_object_set(in, key, v);
        }
    }
    if (in != query && r->in != query) json_decref(query);
    return in;
}

/* Field "model": Google's "nmt" or "base" (both this server's models), or
 * none (*model NULL). -1 after a 400. */
static int field_model(req *r, json_t *in, const char **model)
{
    if (field_string(r, in, "model", NULL, model)) return -1;
    if (!*model || !strcmp(*model, "nmt") || !strcmp(*model, "base")) return 0;
    reply_error(r, 400, "Invalid Value: model '%.40s' (this server has \"nmt\" and \"base\")",
                *model);
    return -1;
}

/* ---- translate ---------------------------------------------------------------- */

static json_t *google_item(req *r, size_t i, const char *translation)
{
    char code[FY_LANG_MAX];
    json_t *o = json_pack("{s:s}", "translatedText", translation);
    /* As Google: the detected language only when none was given, the
     * model only when one was asked for. */
    const char *src = json_string_value(json_object_get(r->in, "source"));
    if (o && (!src || !*src || !strcmp(src, "auto")))
        json_object_set_new(o, "detectedSourceLanguage",
                            json_string(task_code(r, task_lang(r, i), code, sizeof code)));
    json_t *model = json_object_get(r->in, "model");
    if (o && json_is_string(model)) json_object_set(o, "model", model);
    return o;
}

static enum MHD_Result google_finish(req *r)
{
    json_t *list = task_each(r, google_item);
    if (!list) return reply_error(r, 500, "out of memory");
    return reply_json(r, 200, json_pack("{s:{s:o}}", "data", "translations", list));
}

static enum MHD_Result api_google(req *r)
{
    json_t *in = google_params(r);
    const char *src, *tgt, *model;
    int html;
    langs lg;
    if (!in || field_string(r, in, "source", NULL, &src) ||
        field_string(r, in, "target", NULL, &tgt) || field_format(r, in, "html", &html) ||
        field_model(r, in, &model) || task_langs(r, "source", src, "target", tgt, 1, &lg) ||
        task_texts(r, in, "q", 1, html, &lg))
        return REPLIED(r);
    return task_submit(r, google_finish);
}

/* ---- detect ------------------------------------------------------------------- */

/* The guesses for one text, Google's way: confidence 0..1, "und" when the
 * text has no letters. */
static json_t *detections(req *r, const char *text, size_t len)
{
    fy_detection d;
    if (fy_detect(text, len, 0, &d)) return NULL;
    json_t *list = json_array();
    char code[FY_LANG_MAX];
    for (int k = 0; k < d.n; k++)
        json_array_append_new(list, json_pack("{s:s,s:b,s:f}", "language",
                                              task_code(r, d.top[k].lang, code, sizeof code),
                                              "isReliable", d.reliable && k == 0, "confidence",
                                              d.top[k].percent / 100.0));
    if (!d.n)
        json_array_append_new(list, json_pack("{s:s,s:b,s:f}", "language", "und", "isReliable", 0,
                                              "confidence", 0.0));
    return list;
}

static enum MHD_Result api_google_detect(req *r)
{
    json_t *in = google_params(r);
    if (!in) return REPLIED(r);
    json_t *q = json_object_get(in, "q");
    if (!q || json_is_null(q)) return reply_error(r, 400, "Required Text: field 'q' is required");
    size_t n = json_is_array(q) ? json_array_size(q) : 1;
    if (n > r->srv->o.max_items)
        return reply_error(
            r, 413, "field 'q' has %zu items; the limit is %zu per request (--max-batch-items)", n,
            r->srv->o.max_items);
    for (size_t i = 0; i < n; i++) {
        json_t *t = json_is_array(q) ? json_array_get(q, i) : q;
        if (!json_is_string(t))
            return reply_error(r, 400, "field 'q%s' must be a string",
                               json_is_array(q) ? "[]" : "");
        r->chars += srv_utf8_chars(json_string_value(t), json_string_length(t));
    }
    if (r->chars > r->srv->o.max_chars)
        return reply_error(
            r, 413,
            "text has %zu characters; the limit is %zu characters per request (--max-chars)",
            r->chars, r->srv->o.max_chars);
    json_t *out = json_array();
    for (size_t i = 0; out && i < n; i++) {
        json_t *t = json_is_array(q) ? json_array_get(q, i) : q;
        if (json_array_append_new(out,
                                  detections(r, json_string_value(t), json_string_length(t)))) {
            json_decref(out);
            out = NULL;
        }
    }
    if (!out) return reply_error(r, 500, "out of memory");
    return reply_json(r, 200, json_pack("{s:{s:o}}", "data", "detections", out));
}

/* ---- languages ---------------------------------------------------------------- */

/* Names in Simplified Chinese, for ?target=zh. */
static const struct {
    const char *tag, *name;
} zh_names[] = {
    {"ar", "阿拉伯语"},     {"az", "阿塞拜疆语"},   {"be", "白俄罗斯语"},
    {"bg", "保加利亚语"},   {"bn", "孟加拉语"},     {"bs", "波斯尼亚语"},
    {"ca", "加泰罗尼亚语"}, {"cs", "捷克语"},       {"da", "丹麦语"},
    {"de", "德语"},         {"el", "希腊语"},       {"en", "英语"},
    {"es", "西班牙语"},     {"et", "爱沙尼亚语"},   {"fa", "波斯语"},
    {"fi", "芬兰语"},       {"fr", "法语"},         {"gu", "古吉拉特语"},
    {"he", "希伯来语"},     {"hi", "印地语"},       {"hr", "克罗地亚语"},
    {"hu", "匈牙利语"},     {"id", "印度尼西亚语"}, {"is", "冰岛语"},
    {"it", "意大利语"},     {"ja", "日语"},         {"kn", "卡纳达语"},
    {"ko", "韩语"},         {"lt", "立陶宛语"},     {"lv", "拉脱维亚语"},
    {"ml", "马拉雅拉姆语"}, {"ms", "马来语"},       {"mt", "马耳他语"},
    {"nb", "挪威语"},       {"nl", "荷兰语"},       {"nn", "新挪威语"},
    {"pl", "波兰语"},       {"pt", "葡萄牙语"},     {"ro", "罗马尼亚语"},
    {"ru", "俄语"},         {"sk", "斯洛伐克语"},   {"sl", "斯洛文尼亚语"},
    {"sq", "阿尔巴尼亚语"}, {"sr", "塞尔维亚语"},   {"sv", "瑞典语"},
    {"ta", "泰米尔语"},     {"te", "泰卢固语"},     {"th", "泰语"},
    {"tr", "土耳其语"},     {"uk", "乌克兰语"},     {"ur", "乌尔都语"},
    {"vi", "越南语"},       {"zh", "中文（简体）"}, {"zh-Hant", "中文（繁体）"},
};

/* tag's name for readers of lang ("en", "zh"; others read English). */
static const char *name_in(const char *tag, const char *lang)
{
    if (!strcmp(lang, "zh"))
        for (size_t k = 0; k < sizeof zh_names / sizeof *zh_names; k++)
            if (!strcmp(zh_names[k].tag, tag)) return zh_names[k].name;
    return fy_lang_name(tag);
}

/* The codes Google lists for a tag: Chinese is "zh" and "zh-CN" (its own
 * list has both: clients look for either), Traditional "zh-TW". */
static int google_codes(const char *tag, const char *codes[2])
{
    if (!strcmp(tag, "zh")) return codes[0] = "zh", codes[1] = "zh-CN", 2;
    if (!strcmp(tag, "zh-Hant")) return codes[0] = "zh-TW", 1;
    return codes[0] = tag, 1;
}

/* tag's name in English as Google writes it. */
static const char *name_en(const char *tag)
{
    if (!strcmp(tag, "zh")) return "Chinese (Simplified)";
    return fy_lang_name(tag);
}

/* Every language a route starts or ends in; with target, each named in it
 * (Chinese for zh, else English), without, codes only (as Google). */
static enum MHD_Result api_google_languages(req *r)
{
    json_t *in = google_params(r);
    const char *target, *model;
    char lang[FY_LANG_MAX] = "";
    if (!in || field_string(r, in, "target", NULL, &target) || field_model(r, in, &model))
        return REPLIED(r);
    if (target && fy_lang_normalize(target, lang) != 0)
        return reply_error(r, 400, "Invalid Value: target '%.40s' is not a language code", target);
    fy_registry *reg = r->srv->reg;
    char all[64][FY_LANG_MAX];
    size_t n = fy_registry_languages(reg, all, 64);
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        const char *codes[2];
        int k = google_codes(all[i], codes);
        for (int c = 0; c < k; c++) {
            json_t *o = json_pack("{s:s}", "language", codes[c]);
            const char *name = !strcmp(lang, "zh") ? name_in(all[i], lang) : name_en(all[i]);
            if (target) json_object_set_new(o, "name", json_string(name));
            json_array_append_new(list, o);
        }
    }
    return reply_json(r, 200, json_pack("{s:{s:o}}", "data", "languages", list));
}

/* ---- translate_a/single --------------------------------------------------------- */

/* The answer of the web endpoint for one text: with dj=1 an object
 * {"sentences": [{"trans", "orig"}], "src", "confidence", "ld_result"},
 * else the positional arrays [[[trans, orig, null, null, 10]], null, src,
 * ...]. The whole translation is one sentence entry: clients join the
 * entries' "trans" or read only the first. */
static enum MHD_Result web_finish(req *r)
{
    char *t = task_join(r, 0), code[FY_LANG_MAX];
    if (!t) return reply_error(r, 500, "out of memory");
    int percent;
    const char *src = task_code(r, fy_request_source(r->q, 0, &percent), code, sizeof code);
    const char *orig = json_string_value(json_object_get(r->in, "q"));
    const char *dj = json_string_value(json_object_get(r->in, "dj"));
    double conf = percent / 100.0;
    json_t *body;
    if (dj && !strcmp(dj, "1"))
        body = json_pack("{s:[{s:s,s:s,s:i}],s:s,s:f,s:{},s:{s:[s],s:[f],s:[s]}}", "sentences",
                         "trans", t, "orig", orig, "backend", 10, "src", src, "confidence", conf,
                         "spell", "ld_result", "srclangs", src, "srclangs_confidences", conf,
                         "extended_srclangs", src);
    else
        body = json_pack("[[[s,s,n,n,i]],n,s,n,n,n,f,[],[[s],n,[f],[s]]]", t, orig, 10, src, conf,
                         src, conf, src);
    free(t);
    return reply_json(r, 200, body);
}

static enum MHD_Result api_google_web(req *r)
{
    json_t *in = google_params(r);
    const char *src, *tgt;
    langs lg;
    if (!in || field_string(r, in, "sl", "auto", &src) || field_string(r, in, "tl", NULL, &tgt) ||
        task_langs(r, "sl", src, "tl", tgt, 1, &lg) || task_texts(r, in, "q", 0, 0, &lg))
        return REPLIED(r);
    return task_submit(r, web_finish);
}

/* ---- the dialect ---------------------------------------------------------------- */

/* Google's canonical status name (google.rpc.Code) for an HTTP status. */
static const char *google_status(int status)
{
    switch (status) {
    case 400:
    case 405:
    case 411:
    case 413:
    case 415:
        return "INVALID_ARGUMENT";
    case 429:
        return "RESOURCE_EXHAUSTED";
    case 401:
        return "UNAUTHENTICATED";
    case 403:
        return "PERMISSION_DENIED";
    case 404:
        return "NOT_FOUND";
    case 503:
        return "UNAVAILABLE";
    case 501:
        return "UNIMPLEMENTED";
    case 504:
        return "DEADLINE_EXCEEDED";
    default:
        return "INTERNAL";
    }
}

/* The "reason" Google's v2 errors carry (errors[0].reason). */
static const char *google_reason(int status)
{
    switch (status) {
    case 400:
    case 411:
        return "invalid";
    case 401:
        return "authError";
    case 403:
        return "forbidden";
    case 404:
        return "notFound";
    case 405:
        return "httpMethodNotAllowed";
    case 413:
        return "uploadTooLarge";
    case 415:
        return "unsupportedMediaType";
    case 429:
        return "rateLimitExceeded";
    case 501:
        return "notImplemented";
    default:
        return "backendError";
    }
}

static json_t *google_error(int status, const char *msg)
{
    return json_pack("{s:{s:i,s:s,s:s,s:[{s:s,s:s,s:s}]}}", "error", "code", status, "message", msg,
                     "status", google_status(status), "errors", "message", msg, "domain", "global",
                     "reason", google_reason(status));
}

/* Google writes Chinese zh-CN and zh-TW. */
static const char *google_code(const char *tag, char *buf, size_t cap)
{
    (void)buf, (void)cap;
    if (!strcmp(tag, "zh")) return "zh-CN";
    if (!strcmp(tag, "zh-Hant")) return "zh-TW";
    return tag;
}

static const route google_routes[] = {
    {"POST", "/language/translate/v2", "google", 1, 0, api_google, NULL},
    {"GET", "/language/translate/v2", "google", 1, 0, api_google, NULL},
    {"POST", "/language/translate/v2/detect", "google_detect", 1, 0, api_google_detect, NULL},
    {"GET", "/language/translate/v2/detect", "google_detect", 1, 0, api_google_detect, NULL},
    {"GET", "/language/translate/v2/languages", "google_languages", 0, 0, api_google_languages,
     NULL},
    {"POST", "/language/translate/v2/languages", "google_languages", 0, 0, api_google_languages,
     NULL},
    {"GET", "/translate_a/single", "google_web", 1, 0, api_google_web, NULL},
    {"POST", "/translate_a/single", "google_web", 1, 0, api_google_web, NULL},
};

const dialect dialect_google = {
    "google",     google_routes, sizeof google_routes / sizeof *google_routes,
    google_error, google_code,   0};
