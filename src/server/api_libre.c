/* api_libre.c - the LibreTranslate dialect: POST /translate with "q"
 * (JSON or form), GET /languages, POST /detect. Errors: {"error": "..."}. */
#include "server/internal.h"

#include <stdlib.h>
#include <string.h>

#include "text/detect.h"

static json_t *detected(const char *lang, int percent)
{
    return json_pack("{s:f,s:s}", "confidence", (double)percent, "language", lang);
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
    return reply_json(r, 200, body);
}

enum MHD_Result api_libre(req *r, json_t *in)
{
    const char *src, *tgt;
    int html;
    langs lg;
    if (field_string(r, in, "source", "auto", &src) || field_string(r, in, "target", NULL, &tgt) ||
        field_format(r, in, "text", &html) || task_langs(r, "source", src, "target", tgt, 1, &lg) ||
        task_texts(r, in, "q", 1, html, &lg))
        return REPLIED(r);
    return task_submit(r, libre_finish);
}

/* Every language a route starts or ends in, with what it translates into
 * (pivots through English included). */
enum MHD_Result api_libre_languages(req *r)
{
    fy_registry *reg = r->srv->reg;
    char all[64][FY_LANG_MAX], tg[64][FY_LANG_MAX];
    size_t n = fy_registry_languages(reg, all, 64);
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        size_t m = fy_registry_targets(reg, all[i], tg, 64);
        json_t *targets = json_array();
        for (size_t k = 0; k < m; k++) json_array_append_new(targets, json_string(tg[k]));
        json_array_append_new(list, json_pack("{s:s,s:s,s:o}", "code", all[i], "name",
                                              fy_lang_name(all[i]), "targets", targets));
    }
    return reply_json(r, 200, list);
}

enum MHD_Result api_libre_detect(req *r)
{
    json_t *in = api_body(r);
    if (!in) return REPLIED(r);
    json_t *q = json_object_get(in, "q");
    if (!q || json_is_null(q)) return reply_error(r, 400, "field 'q' is required");
    if (!json_is_string(q)) return reply_error(r, 400, "field 'q' must be a string");
    size_t len = json_string_length(q);
    r->chars = srv_utf8_chars(json_string_value(q), len);
    if (r->chars > r->srv->o.max_chars)
        return reply_error(r, 413,
                           "text has %zu characters; the limit is %zu characters per request",
                           r->chars, r->srv->o.max_chars);
    fy_detection d;
    if (fy_detect(json_string_value(q), len, 0, &d))
        return reply_error(r, 400, "field 'q' is not valid UTF-8");
    json_t *list = json_array();
    for (int k = 0; k < d.n; k++)
        json_array_append_new(list, detected(d.top[k].lang, d.top[k].percent));
    return reply_json(r, 200, list);
}
