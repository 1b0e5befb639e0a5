/* api_imme.c - Immersive Translate's custom API: POST /imme
 * {"source_lang", "target_lang", "text_list": [...]} ->
 * {"translations": [{"detected_source_lang", "text"}]}. The texts carry
 * its placeholders ({0}, <b0></b0>, in the brackets or tag its settings
 * name), which come back unchanged and in place; languages are its codes
 * (zh-CN, zh-TW). */
#include "server/internal.h"
#include "server/prompt.h"

#include <stdlib.h>
#include <string.h>

static json_t *imme_item(req *r, size_t i, const char *translation)
{
    return json_pack("{s:s,s:s}", "detected_source_lang", prompt_code_cn(task_lang(r, i)), "text",
                     translation);
}

static enum MHD_Result imme_finish(req *r)
{
    json_t *list = task_each(r, imme_item);
    if (!list) return reply_error(r, 500, "out of memory");
    return reply_json(r, 200, json_pack("{s:o}", "translations", list));
}

static enum MHD_Result api_imme(req *r)
{
    json_t *in = api_body(r);
    const char *src, *tgt;
    langs lg;
    if (!in || field_string(r, in, "source_lang", "auto", &src) ||
        field_string(r, in, "target_lang", NULL, &tgt))
        return REPLIED(r);
    json_t *list = json_object_get(in, "text_list");
    if (list && !json_is_array(list))
        return reply_error(r, 400, "field 'text_list' must be an array of strings");
    r->placeholders = 1;
    if (task_langs(r, "source_lang", src, "target_lang", tgt, 1, &lg) ||
        task_texts(r, in, "text_list", 1, 0, &lg))
        return REPLIED(r);
    return task_submit(r, imme_finish);
}

static const char *imme_code(const char *tag, char *buf, size_t cap)
{
    (void)buf, (void)cap;
    return prompt_code_cn(tag);
}

static const route imme_routes[] = {
    {"POST", "/imme", "imme", 1, 0, api_imme, NULL},
};

const dialect dialect_imme = {"imme", imme_routes, 1, native_error, imme_code, 0};
