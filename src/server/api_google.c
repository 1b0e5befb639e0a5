/* api_google.c - Google Cloud Translation v2: POST /language/translate/v2
 * with "q" (string or array), "source", "target", "format" (html by
 * default, as Google does). Errors in Google's {"error": {...}} shape.
 * Language codes are Google's: zh-CN and zh-TW for Chinese. */
#include "server/internal.h"

#include <stdlib.h>
#include <string.h>

static json_t *google_item(req *r, size_t i, const char *translation)
{
    char code[FY_LANG_MAX];
    return json_pack("{s:s,s:s}", "translatedText", translation, "detectedSourceLanguage",
                     task_code(r, task_lang(r, i), code, sizeof code));
}

static enum MHD_Result google_finish(req *r)
{
    json_t *list = task_each(r, google_item);
    if (!list) return reply_error(r, 500, "out of memory");
    return reply_json(r, 200, json_pack("{s:{s:o}}", "data", "translations", list));
}

enum MHD_Result api_google(req *r)
{
    json_t *in = api_body(r);
    const char *src, *tgt;
    int html;
    langs lg;
    if (!in || field_string(r, in, "source", NULL, &src) ||
        field_string(r, in, "target", NULL, &tgt) || field_format(r, in, "html", &html) ||
        task_langs(r, "source", src, "target", tgt, 1, &lg) || task_texts(r, in, "q", 1, html, &lg))
        return REPLIED(r);
    return task_submit(r, google_finish);
}

/* GET /language/translate/v2/languages: every language a route starts or
 * ends in, named in English. */
enum MHD_Result api_google_languages(req *r)
{
    fy_registry *reg = r->srv->reg;
    char all[64][FY_LANG_MAX];
    size_t n = fy_registry_languages(reg, all, 64);
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        char code[FY_LANG_MAX];
        json_array_append_new(list, json_pack("{s:s,s:s}", "language",
                                              task_code(r, all[i], code, sizeof code), "name",
                                              fy_lang_name(all[i])));
    }
    return reply_json(r, 200, json_pack("{s:{s:o}}", "data", "languages", list));
}
