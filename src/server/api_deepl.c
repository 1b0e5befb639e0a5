/* api_deepl.c - DeepL API v2 (POST /v2/translate, JSON or form, auth by
 * "Authorization: DeepL-Auth-Key ...") and DeepLX (POST /deeplx).
 * Errors: DeepL {"message": "..."}, DeepLX {"code": N, "message": "..."}. */
#include "server/internal.h"

#include <stdlib.h>
#include <string.h>

static enum MHD_Result deepl_finish(req *r)
{
    json_t *list = json_array();
    for (size_t i = 0; i < r->t.ndocs; i++) {
        char *s = task_join(r, i);
        if (!s) {
            json_decref(list);
            return reply_error(r, 500, "out of memory");
        }
        const char *lang = strcmp(task_doc_lang(r, i), "zh") ? "EN" : "ZH";
        json_array_append_new(list,
                              json_pack("{s:s,s:s}", "detected_source_language", lang, "text", s));
        free(s);
    }
    return reply_json(r, 200, json_pack("{s:o}", "translations", list));
}

enum MHD_Result api_deepl(req *r)
{
    json_t *in = api_body(r);
    const char *src, *tgt, *tags;
    if (!in || field_string(r, in, "source_lang", NULL, &src) ||
        field_string(r, in, "target_lang", NULL, &tgt) ||
        field_string(r, in, "tag_handling", NULL, &tags))
        return REPLIED(r);
    if (lang_check(r, "source_lang", src, "target_lang", tgt)) return REPLIED(r);
    int html = tags && !strcmp(tags, "html");
    if (tags && !html && strcmp(tags, "xml"))
        return reply_error(r, 400, "field 'tag_handling' must be \"html\" or \"xml\"");
    if (task_texts(r, in, "text", 1, html)) return REPLIED(r);
    return task_submit(r, deepl_finish);
}

static enum MHD_Result deeplx_finish(req *r)
{
    char *s = task_join(r, 0);
    if (!s) return reply_error(r, 500, "out of memory");
    pthread_mutex_lock(&r->srv->lock);
    json_int_t id = (json_int_t)(r->srv->next_id * 1000 + 7);
    pthread_mutex_unlock(&r->srv->lock);
    json_t *body =
        json_pack("{s:i,s:I,s:s,s:[],s:s,s:s,s:s}", "code", 200, "id", id, "data", s,
                  "alternatives", "source_lang", "ZH", "target_lang", "EN", "method", "Free");
    free(s);
    return reply_json(r, 200, body);
}

enum MHD_Result api_deeplx(req *r)
{
    json_t *in = api_body(r);
    const char *src, *tgt;
    if (!in || field_string(r, in, "source_lang", "auto", &src) ||
        field_string(r, in, "target_lang", NULL, &tgt))
        return REPLIED(r);
    if (lang_check(r, "source_lang", src, "target_lang", tgt)) return REPLIED(r);
    if (task_texts(r, in, "text", 0, 0)) return REPLIED(r);
    return task_submit(r, deeplx_finish);
}
