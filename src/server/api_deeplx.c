/* api_deeplx.c - DeepLX (github.com/OwO-Network/DeepLX), the DeepL proxy
 * that pot-desktop, Bob, Immersive Translate, Kiss Translator and others
 * speak: POST /translate when the body has source_lang or target_lang (the
 * URL those plug-ins are configured with), POST /deeplx, and POST
 * /v1/translate (DeepLX's route for DeepL Pro sessions).
 *
 * Body {"text": "...", "source_lang": "auto", "target_lang": "EN-US",
 * "tag_handling": "html"}; answer {"code": 200, "id", "data",
 * "alternatives": [...], "source_lang": the given or detected source in
 * DeepL's upper case, "target_lang": exactly as sent, "method": "Free" or
 * "Pro"}. Errors {"code": N, "message": "..."} with HTTP status N. */
#include "server/internal.h"

#include <stdlib.h>
#include <string.h>

/* The answer; method "Free" or "Pro" (DeepLX's /translate and /v1/translate). */
static enum MHD_Result deeplx_answer(req *r, const char *method)
{
    char *s = task_join(r, 0), code[FY_LANG_MAX];
    if (!s) return reply_error(r, 500, "out of memory");
    /* DeepLX's id is a random number; the request's start (in µs) is as
     * unique and never 0. */
    json_int_t id = (json_int_t)r->start_us;
    const char *tgt = json_string_value(json_object_get(r->in, "target_lang"));
    /* A text without letters passes through as if in the target language. */
    const char *src = *task_lang(r, 0) ? task_lang(r, 0) : fy_request_target(r->q, 0);
    /* No n-best yet: DeepLX's list of other translations is empty. */
    json_t *body = json_pack("{s:i,s:I,s:s,s:[],s:s,s:s,s:s}", "code", 200, "id", id, "data", s,
                             "alternatives", "source_lang", task_code(r, src, code, sizeof code),
                             "target_lang", tgt ? tgt : "", "method", method);
    free(s);
    return reply_json(r, 200, body);
}

static enum MHD_Result deeplx_free(req *r)
{
    return deeplx_answer(r, "Free");
}

static enum MHD_Result deeplx_pro(req *r)
{
    return deeplx_answer(r, "Pro");
}

/* Reads a DeepLX body and submits it; finish formats the answer. */
static enum MHD_Result deeplx_submit(req *r, json_t *in, enum MHD_Result (*finish)(req *r))
{
    const char *src, *tgt, *tags;
    langs lg;
    if (field_string(r, in, "source_lang", "auto", &src) ||
        field_string(r, in, "target_lang", NULL, &tgt) ||
        field_string(r, in, "tag_handling", "", &tags))
        return REPLIED(r);
    /* DeepLX's own check and message. */
    if (*tags && strcmp(tags, "html") && strcmp(tags, "xml"))
        return reply_error(r, 400,
                           "Invalid tag_handling value. Allowed values are 'html' and 'xml'.");
    if (task_langs(r, "source_lang", src, "target_lang", tgt, 1, &lg) ||
        task_texts(r, in, "text", 0, *tags ? TEXT_HTML : 0, &lg))
        return REPLIED(r);
    return task_submit(r, finish);
}

enum MHD_Result api_deeplx_body(req *r, json_t *in)
{
    return deeplx_submit(r, in, deeplx_free);
}

enum MHD_Result api_deeplx(req *r)
{
    json_t *in = api_body(r);
    return in ? deeplx_submit(r, in, deeplx_free) : REPLIED(r);
}

enum MHD_Result api_deeplx_pro(req *r)
{
    json_t *in = api_body(r);
    return in ? deeplx_submit(r, in, deeplx_pro) : REPLIED(r);
}
