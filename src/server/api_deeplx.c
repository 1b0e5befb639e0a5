/* api_deeplx.c - DeepLX (github.com/OwO-Network/DeepLX), the DeepL proxy
 * that pot-desktop, Bob, Immersive Translate, Kiss Translator and others
 * speak: POST /translate when the body has source_lang or target_lang (the
 * URL those plug-ins are configured with), POST /deeplx, and POST
 * /v1/translate (DeepLX's route for DeepL Pro sessions).
 *
 * Body {"text": "...", "source_lang": "auto", "target_lang": "EN-US",
 * "tag_handling": "html"}; answer {"code": 200, "id", "data",
 * "alternatives": [the other translations of the server's --beam n-best],
 * "source_lang": the given or detected source in
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
    /* Other translations: the n-best of the server's --beam (none when greedy). */
    json_t *alts = task_alternatives_json(r);
    json_t *body =
        alts ? json_pack("{s:i,s:I,s:s,s:o,s:s,s:s,s:s}", "code", 200, "id", id, "data", s,
                         "alternatives", alts, "source_lang", task_code(r, src, code, sizeof code),
                         "target_lang", tgt ? tgt : "", "method", method)
             : NULL;
    free(s);
    if (!body) return reply_error(r, 500, "out of memory");
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
    int max;
    r->alternatives = fy_registry_beam(r->srv->reg, &max) - 1;
    if (task_langs(r, "source_lang", src, "target_lang", tgt, 1, &lg) ||
        task_texts(r, in, "text", 0, *tags ? TEXT_HTML : 0, &lg))
        return REPLIED(r);
    return task_submit(r, finish);
}

enum MHD_Result api_deeplx_body(req *r, json_t *in)
{
    return deeplx_submit(r, in, deeplx_free);
}

static enum MHD_Result api_deeplx(req *r)
{
    json_t *in = api_body(r);
    return in ? deeplx_submit(r, in, deeplx_free) : REPLIED(r);
}

static enum MHD_Result api_deeplx_pro(req *r)
{
    json_t *in = api_body(r);
    return in ? deeplx_submit(r, in, deeplx_pro) : REPLIED(r);
}

/* ---- the dialect ---------------------------------------------------------------- */

static json_t *deeplx_error(int status, const char *msg)
{
    return json_pack("{s:i,s:s}", "code", status, "message", msg);
}

/* POST /translate with a DeepLX body is the native dialect's route
 * (api_native.c), answered here (api_deeplx_body). */
static const route deeplx_routes[] = {
    {"POST", "/deeplx", "deeplx", 1, 0, api_deeplx, NULL},
    {"POST", "/v1/translate", "deeplx", 1, 0, api_deeplx_pro, NULL},
};

const dialect dialect_deeplx = {
    "deeplx",     deeplx_routes, sizeof deeplx_routes / sizeof *deeplx_routes,
    deeplx_error, deepl_code,    0};
