/* api_google.c - Google Cloud Translation v2: POST /language/translate/v2
 * with "q" (string or array), "source", "target", "format" (html by
 * default, as Google does). Errors in Google's {"error": {...}} shape.
 * Language codes are Google's: zh-CN and zh-TW for Chinese. */
#include "server/internal.h"

#include <stdlib.h>
#include <string.h>

static enum MHD_Result google_finish(req *r)
{
    json_t *list = json_array();
    for (size_t i = 0; i < task_count(r); i++) {
        char *s = task_join(r, i), code[FY_LANG_MAX];
        if (!s) {
            json_decref(list);
            return reply_error(r, 500, "out of memory");
        }
        json_array_append_new(list,
                              json_pack("{s:s,s:s}", "translatedText", s, "detectedSourceLanguage",
                                        task_code(r, task_lang(r, i), code, sizeof code)));
        free(s);
    }
    return reply_json(r, 200, json_pack("{s:{s:o}}", "data", "translations", list));
}

enum MHD_Result api_google(req *r)
{
    json_t *in = api_body(r);
    const char *src, *tgt, *format;
    langs lg;
    if (!in || field_string(r, in, "source", NULL, &src) ||
        field_string(r, in, "target", NULL, &tgt) || field_string(r, in, "format", "html", &format))
        return REPLIED(r);
    if (strcmp(format, "text") && strcmp(format, "html"))
        return reply_error(r, 400, "field 'format' must be \"text\" or \"html\", not \"%s\"",
                           format);
    if (task_langs(r, "source", src, "target", tgt, 1, &lg) ||
        task_texts(r, in, "q", 1, !strcmp(format, "html"), &lg))
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
