/* api_libre.c - the LibreTranslate dialect: POST /translate with "q"
 * (JSON or form), GET /languages, POST /detect. Errors: {"error": "..."}. */
#include "server/internal.h"

#include <stdlib.h>
#include <string.h>

static json_t *detected(const char *lang)
{
    return json_pack("{s:f,s:s}", "confidence", 90.0, "language", lang);
}

static enum MHD_Result libre_finish(req *r)
{
    json_t *t = task_join_json(r);
    if (!t) return reply_error(r, 500, "out of memory");
    json_t *body = json_pack("{s:o}", "translatedText", t);
    const char *src = json_string_value(json_object_get(r->in, "source"));
    if (!src || !strcmp(src, "auto")) {
        json_t *d;
        if (r->t.array) {
            d = json_array();
            for (size_t i = 0; i < r->t.ndocs; i++)
                json_array_append_new(d, detected(task_doc_lang(r, i)));
        } else {
            d = detected(task_doc_lang(r, 0));
        }
        json_object_set_new(body, "detectedLanguage", d);
    }
    return reply_json(r, 200, body);
}

enum MHD_Result api_libre(req *r, json_t *in)
{
    const char *src, *tgt, *format;
    if (field_string(r, in, "source", "auto", &src) || field_string(r, in, "target", NULL, &tgt) ||
        field_string(r, in, "format", "text", &format))
        return REPLIED(r);
    if (strcmp(format, "text") && strcmp(format, "html"))
        return reply_error(r, 400, "field 'format' must be \"text\" or \"html\", not \"%s\"",
                           format);
    if (lang_check(r, "source", src, "target", tgt)) return REPLIED(r);
    if (task_texts(r, in, "q", 1, !strcmp(format, "html"))) return REPLIED(r);
    return task_submit(r, libre_finish);
}

enum MHD_Result api_libre_languages(req *r)
{
    json_t *body = json_pack("[{s:s,s:s,s:[s]},{s:s,s:s,s:[]}]", "code", "zh", "name", "Chinese",
                             "targets", "en", "code", "en", "name", "English", "targets");
    return reply_json(r, 200, body);
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
    const char *lang = fy_detect_language(json_string_value(q), len);
    return reply_json(r, 200, json_pack("[o]", detected(lang)));
}
