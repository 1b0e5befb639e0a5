/* api_deepl.c - DeepL API v2 (POST /v2/translate, JSON or form, auth by
 * "Authorization: DeepL-Auth-Key ...") and DeepLX (POST /deeplx).
 * Errors: DeepL {"message": "..."}, DeepLX {"code": N, "message": "..."}.
 * Language codes are DeepL's: upper case (ZH, EN, EN-US, ZH-HANT). */
#include "server/internal.h"

#include <stdlib.h>
#include <string.h>

static json_t *deepl_item(req *r, size_t i, const char *translation)
{
    char code[FY_LANG_MAX];
    return json_pack("{s:s,s:s}", "detected_source_language",
                     task_code(r, task_lang(r, i), code, sizeof code), "text", translation);
}

static enum MHD_Result deepl_finish(req *r)
{
    json_t *list = task_each(r, deepl_item);
    if (!list) return reply_error(r, 500, "out of memory");
    return reply_json(r, 200, json_pack("{s:o}", "translations", list));
}

enum MHD_Result api_deepl(req *r)
{
    json_t *in = api_body(r);
    const char *src, *tgt, *tags;
    langs lg;
    if (!in || field_string(r, in, "source_lang", NULL, &src) ||
        field_string(r, in, "target_lang", NULL, &tgt) ||
        field_string(r, in, "tag_handling", NULL, &tags))
        return REPLIED(r);
    int html = tags && !strcmp(tags, "html");
    if (tags && !html && strcmp(tags, "xml"))
        return reply_error(r, 400, "field 'tag_handling' must be \"html\" or \"xml\"");
    if (task_langs(r, "source_lang", src, "target_lang", tgt, 1, &lg) ||
        task_texts(r, in, "text", 1, html, &lg))
        return REPLIED(r);
    return task_submit(r, deepl_finish);
}

static enum MHD_Result deeplx_finish(req *r)
{
    char *s = task_join(r, 0), code[FY_LANG_MAX];
    if (!s) return reply_error(r, 500, "out of memory");
    pthread_mutex_lock(&r->srv->lock);
    json_int_t id = (json_int_t)(r->srv->next_id * 1000 + 7);
    pthread_mutex_unlock(&r->srv->lock);
    /* DeepLX echoes the target as the client wrote it (EN-US stays EN-US). */
    const char *tgt = json_string_value(json_object_get(r->in, "target_lang"));
    json_t *body =
        json_pack("{s:i,s:I,s:s,s:[],s:s,s:s,s:s}", "code", 200, "id", id, "data", s,
                  "alternatives", "source_lang", task_code(r, task_lang(r, 0), code, sizeof code),
                  "target_lang", tgt ? tgt : "", "method", "Free");
    free(s);
    return reply_json(r, 200, body);
}

enum MHD_Result api_deeplx(req *r)
{
    json_t *in = api_body(r);
    const char *src, *tgt;
    langs lg;
    if (!in || field_string(r, in, "source_lang", "auto", &src) ||
        field_string(r, in, "target_lang", NULL, &tgt) ||
        task_langs(r, "source_lang", src, "target_lang", tgt, 1, &lg) ||
        task_texts(r, in, "text", 0, 0, &lg))
        return REPLIED(r);
    return task_submit(r, deeplx_finish);
}

/* GET /v2/languages[?type=source|target]: what the registry serves. */
enum MHD_Result api_deepl_languages(req *r)
{
    const char *type = req_arg(r, "type");
    int target = type && !strcmp(type, "target");
    if (type && !target && strcmp(type, "source"))
        return reply_error(r, 400, "parameter 'type' must be \"source\" or \"target\"");
    fy_registry *reg = r->srv->reg;
    char src[64][FY_LANG_MAX], all[64][FY_LANG_MAX];
    size_t ns = fy_registry_sources(reg, src, 64), n = 0;
    if (!target) {
        memcpy(all, src, sizeof all);
        n = ns;
    } else { /* every language some source reaches */
        size_t nl = fy_registry_languages(reg, all, 64);
        for (size_t i = 0; i < nl; i++) {
            int reached = 0;
            for (size_t k = 0; k < ns && !reached; k++)
                reached = fy_registry_route_kind(reg, src[k], all[i]) > 0;
            if (reached) memmove(all[n++], all[i], FY_LANG_MAX);
        }
    }
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        char code[FY_LANG_MAX];
        json_t *o = json_pack("{s:s,s:s}", "language", task_code(r, all[i], code, sizeof code),
                              "name", fy_lang_name(all[i]));
        if (target) json_object_set_new(o, "supports_formality", json_false());
        json_array_append_new(list, o);
    }
    return reply_json(r, 200, list);
}
