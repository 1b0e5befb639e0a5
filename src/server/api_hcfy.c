/* api_hcfy.c - Selection Translator (划词翻译, hcfy)'s custom translator:
 *
 *   POST /hcfy {"name": "...", "text": "...", "destination": ["中文(简体)", "英语"],
 *               "source": "英语"}          (source may be "", null or absent: detect)
 *   -> {"text": the text as sent, "from": its language, "to": the target,
 *       "result": [its translation, one string per line]}
 *
 * Languages are hcfy's Chinese names ("中文(简体)", "英语", "日语"; a code
 * such as "en" or "zh-CN" is read too). The target is the first
 * destination, or the second when the text is already in the first (hcfy
 * sends two for that: a Chinese page's selection goes to English, an
 * English one to Chinese). "name" is the translator's name in hcfy's
 * settings, not used. Errors: {"error": "..."}; the token as a Bearer
 * header or ?token=. */
#include "server/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* hcfy's names for the languages this server may serve. */
static const struct {
    const char *tag, *name;
} names[] = {
    {"zh", "中文(简体)"},   {"zh-Hant", "中文(繁体)"},
    {"en", "英语"},         {"ja", "日语"},
    {"ko", "韩语"},         {"fr", "法语"},
    {"de", "德语"},         {"es", "西班牙语"},
    {"ru", "俄语"},         {"it", "意大利语"},
    {"pt", "葡萄牙语"},     {"ar", "阿拉伯语"},
    {"nl", "荷兰语"},       {"pl", "波兰语"},
    {"tr", "土耳其语"},     {"th", "泰语"},
    {"vi", "越南语"},       {"id", "印尼语"},
    {"ms", "马来语"},       {"el", "希腊语"},
    {"cs", "捷克语"},       {"da", "丹麦语"},
    {"fi", "芬兰语"},       {"hu", "匈牙利语"},
    {"nb", "挪威语"},       {"ro", "罗马尼亚语"},
    {"sv", "瑞典语"},       {"uk", "乌克兰语"},
    {"bg", "保加利亚语"},   {"et", "爱沙尼亚语"},
    {"lv", "拉脱维亚语"},   {"lt", "立陶宛语"},
    {"sk", "斯洛伐克语"},   {"sl", "斯洛文尼亚语"},
    {"hi", "印地语"},       {"bn", "孟加拉语"},
    {"ta", "泰米尔语"},     {"te", "泰卢固语"},
    {"gu", "古吉拉特语"},   {"kn", "卡纳达语"},
    {"ml", "马拉雅拉姆语"}, {"fa", "波斯语"},
    {"he", "希伯来语"},     {"ur", "乌尔都语"},
    {"is", "冰岛语"},       {"sr", "塞尔维亚语"},
    {"hr", "克罗地亚语"},   {"bs", "波斯尼亚语"},
    {"sq", "阿尔巴尼亚语"}, {"az", "阿塞拜疆语"},
    {"be", "白俄罗斯语"},   {"ca", "加泰罗尼亚语"},
    {"mt", "马耳他语"},     {"nn", "新挪威语"},
};

/* A language as hcfy names it (or a code) as a normalised tag: 0, or -1
 * when it is neither. "" stays "" (detect). */
static int hcfy_tag(const char *s, char tag[FY_LANG_MAX])
{
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        if (strcmp(names[k].name, s)) continue;
        snprintf(tag, FY_LANG_MAX, "%s", names[k].tag);
        return 0;
    }
    int rc = fy_lang_normalize(s, tag);
    return rc < 0 || (rc == 1 && *s && strcmp(s, "auto")) ? -1 : 0;
}

/* hcfy's name for a tag (the tag itself for a language it has no name for). */
static const char *hcfy_name(const char *tag)
{
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        if (!strcmp(names[k].tag, tag)) return names[k].name;
    return tag;
}

/* The translation, one string per line of it. */
static enum MHD_Result hcfy_finish(req *r)
{
    char *t = task_join(r, 0);
    if (!t) return reply_error(r, 500, "out of memory");
    json_t *lines = json_array();
    for (char *p = t, *nl; lines; p = nl + 1) {
        nl = strchr(p, '\n');
        json_t *line = json_stringn(p, nl ? (size_t)(nl - p) : strlen(p));
        if (json_array_append_new(lines, line)) json_decref(lines), lines = NULL;
        if (!nl) break;
    }
    free(t);
    const char *src = task_lang(r, 0);
    const char *to = r->ctx; /* the destination chosen, as the client named it */
    json_t *body = lines ? json_pack("{s:O,s:s,s:s,s:o}", "text", json_object_get(r->in, "text"),
                                     "from", hcfy_name(*src ? src : fy_request_target(r->q, 0)),
                                     "to", to, "result", lines)
                         : NULL;
    if (!body) return reply_error(r, 500, "out of memory");
    return reply_json(r, 200, body);
}

/* destination[i] as a string and its tag; -1 after a 400. */
static int destination(req *r, json_t *dest, size_t i, const char **name, char tag[FY_LANG_MAX])
{
    *name = json_string_value(json_array_get(dest, i));
    if (!*name || !**name) {
        reply_error(r, 400, "field 'destination[%zu]' must be a language name such as \"英语\"", i);
        return -1;
    }
    if (hcfy_tag(*name, tag) || !*tag) {
        reply_error(r, 400, "field 'destination[%zu]': '%.40s' is not a language this server knows",
                    i, *name);
        return -1;
    }
    return 0;
}

/* The request for the text into tgt (named name); -1 after a reply. */
static int hcfy_request(req *r, json_t *in, const char *src, const char *tgt, const char *name)
{
    langs lg;
    fy_request_free(r->q);
    r->q = NULL;
    r->ctx = (void *)name; /* borrowed from r->in; ctx_free stays NULL */
    return task_langs(r, "source", src, "destination", tgt, 1, &lg) ||
                   task_texts(r, in, "text", 0, 0, &lg)
               ? -1
               : 0;
}

static enum MHD_Result api_hcfy(req *r)
{
    json_t *in = api_body(r);
    const char *source, *text, *name0, *name1 = NULL;
    char src[FY_LANG_MAX], tgt0[FY_LANG_MAX], tgt1[FY_LANG_MAX];
    if (!in || field_string(r, in, "source", "", &source) ||
        field_string(r, in, "text", NULL, &text))
        return REPLIED(r);
    if (!text) return reply_error(r, 400, "field 'text' is required");
    if (hcfy_tag(source, src))
        return reply_error(r, 400, "field 'source': '%.40s' is not a language this server knows",
                           source);
    json_t *dest = json_object_get(in, "destination");
    if (json_is_string(dest))
        dest = json_pack("[O]", dest); /* one target, as a string */
    else
        json_incref(dest);
    int rc = json_is_array(dest) && json_array_size(dest) ? 0 : -1;
    if (rc)
        reply_error(
            r, 400,
            "field 'destination' must be a list of languages, e.g. [\"中文(简体)\", \"英语\"]");
    if (!rc) rc = destination(r, dest, 0, &name0, tgt0);
    if (!rc && json_array_size(dest) > 1) rc = destination(r, dest, 1, &name1, tgt1);
    json_decref(dest); /* the names stay: r->in holds them (or holds the string) */
    if (!rc) rc = hcfy_request(r, in, src, tgt0, name0);
    /* Already in the first target: the second, as hcfy asks. */
    if (!rc && name1 && !strcmp(task_lang(r, 0), tgt0)) rc = hcfy_request(r, in, src, tgt1, name1);
    if (rc) return REPLIED(r);
    return task_submit(r, hcfy_finish);
}

/* ---- the dialect ----------------------------------------------------------------- */

static json_t *hcfy_error(int status, const char *msg)
{
    (void)status;
    return json_pack("{s:s}", "error", msg);
}

static const char *hcfy_code(const char *tag, char *buf, size_t cap)
{
    (void)buf, (void)cap;
    return hcfy_name(tag);
}

static const route hcfy_routes[] = {
    {"POST", "/hcfy", "hcfy", 1, 0, api_hcfy, NULL},
};

const dialect dialect_hcfy = {"hcfy", hcfy_routes, 1, hcfy_error, hcfy_code, 0};
