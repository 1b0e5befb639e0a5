/* api_kiss.c - Kiss Translator's custom API: POST /kiss
 * {"text", "from", "to"} -> {"text", "from", "to"}, and
 * {"texts": [...], "from", "to"} -> {"translations": [{"text", "src"}]}
 * (its default request and response shapes, custom-api_v2.md). Kiss
 * Translator sends a page's text as escaped HTML with its placeholders
 * ({1}, <i1>link</i1>): translated as HTML, the placeholders in place.
 * Languages are its codes (zh-CN, zh-TW). */
#include "server/internal.h"
#include "server/prompt.h"

#include <stdlib.h>
#include <string.h>

static json_t *kiss_item(req *r, size_t i, const char *translation)
{
    return json_pack("{s:s,s:s}", "text", translation, "src", prompt_code_cn(task_lang(r, i)));
}

static enum MHD_Result kiss_finish(req *r)
{
    const char *to = json_string_value(json_object_get(r->in, "to"));
    if (!r->array) {
        char *s = task_join(r, 0);
        if (!s) return reply_error(r, 500, "out of memory");
        json_t *body = json_pack("{s:s,s:s,s:s}", "text", s, "from",
                                 prompt_code_cn(task_lang(r, 0)), "to", to);
        free(s);
        return reply_json(r, 200, body);
    }
    json_t *list = task_each(r, kiss_item);
    if (!list) return reply_error(r, 500, "out of memory");
    return reply_json(r, 200, json_pack("{s:o}", "translations", list));
}

static enum MHD_Result api_kiss(req *r)
{
    json_t *in = api_body(r);
    const char *from, *to;
    langs lg;
    if (!in || field_string(r, in, "from", "auto", &from) || field_string(r, in, "to", NULL, &to) ||
        task_langs(r, "from", from, "to", to, 1, &lg))
        return REPLIED(r);
    json_t *texts = json_object_get(in, "texts");
    if (texts && !json_is_array(texts))
        return reply_error(r, 400, "field 'texts' must be an array of strings");
    r->placeholders = 1;
    int rc = texts ? task_texts(r, in, "texts", 1, 1, &lg) : task_texts(r, in, "text", 0, 1, &lg);
    if (rc) return REPLIED(r);
    return task_submit(r, kiss_finish);
}

static const char *kiss_code(const char *tag, char *buf, size_t cap)
{
    (void)buf, (void)cap;
    return prompt_code_cn(tag);
}

static const route kiss_routes[] = {
    {"POST", "/kiss", "kiss", 1, 0, api_kiss, NULL},
};

const dialect dialect_kiss = {"kiss", kiss_routes, 1, native_error, kiss_code, 0};
