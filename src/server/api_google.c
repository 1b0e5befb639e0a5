/* api_google.c - Google Cloud Translation v2: POST /language/translate/v2
 * with "q" (string or array), "source", "target", "format" (html by
 * default, as Google does). Errors in Google's {"error": {...}} shape. */
#include "server/internal.h"

#include <stdlib.h>
#include <string.h>

static enum MHD_Result google_finish(req *r)
{
    json_t *list = json_array();
    for (size_t i = 0; i < r->t.ndocs; i++) {
        char *s = task_join(r, i);
        if (!s) {
            json_decref(list);
            return reply_error(r, 500, "out of memory");
        }
        json_array_append_new(list, json_pack("{s:s,s:s}", "translatedText", s,
                                              "detectedSourceLanguage", task_doc_lang(r, i)));
        free(s);
    }
    return reply_json(r, 200, json_pack("{s:{s:o}}", "data", "translations", list));
}

enum MHD_Result api_google(req *r)
{
    json_t *in = api_body(r);
    const char *src, *tgt, *format;
    if (!in || field_string(r, in, "source", NULL, &src) ||
        field_string(r, in, "target", NULL, &tgt) || field_string(r, in, "format", "html", &format))
        return REPLIED(r);
    if (strcmp(format, "text") && strcmp(format, "html"))
        return reply_error(r, 400, "field 'format' must be \"text\" or \"html\", not \"%s\"",
                           format);
    if (lang_check(r, "source", src, "target", tgt)) return REPLIED(r);
    if (task_texts(r, in, "q", 1, !strcmp(format, "html"))) return REPLIED(r);
    return task_submit(r, google_finish);
}
