/* api_deepl.c - DeepL API v2, as deepl-node, deepl-python and plug-ins
 * with a DeepL key call it (auth by "Authorization: DeepL-Auth-Key ..."):
 *   POST /v2/translate   JSON or form: text (string or list), target_lang,
 *                        source_lang, tag_handling (html, xml), split_sentences
 *                        (0, 1, nonewlines), preserve_formatting,
 *                        show_billed_characters, formality, context
 *   GET  /v2/languages   ?type=source|target (targets with supports_formality)
 *   GET  /v2/usage       characters translated since the server started
 *   glossaries: api_deepl_glossary.c (glossary_id and glossary_ids here)
 * Documents (/v2/document...): api_deepl_document.c, registered before this.
 * Errors: {"message": "..."}. Codes are DeepL's: upper case (ZH, EN,
 * EN-US, ZH-HANT). */
#include "server/internal.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- preserve_formatting --------------------------------------------------- */

static int is_ascii_letter(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The first ASCII letter of s when nothing but spaces, digits and
 * punctuation comes before it (a text starting with another script has no
 * case to keep), else 0. */
static int first_letter(const char *s, const char **at)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (is_ascii_letter(c)) {
            if (at) *at = s;
            return c;
        }
        if (c >= 0x80) return 0;
    }
    return 0;
}

/* Length of a sentence end (. ! ? or 。！？) ending s[0..n), else 0. */
static size_t end_mark(const char *s, size_t n)
{
    static const char *const marks[] = {".",           "!", "?", "\xe3\x80\x82", "\xef\xbc\x81",
                                        "\xef\xbc\x9f"};
    for (size_t k = 0; k < sizeof marks / sizeof *marks; k++) {
        size_t m = strlen(marks[k]);
        if (n >= m && !memcmp(s + n - m, marks[k], m)) return m;
    }
    return 0;
}

/* Length of s without trailing ASCII white space. */
static size_t trimmed(const char *s)
{
    size_t n = strlen(s);
    while (n && strchr(" \t\r\n", s[n - 1])) n--;
    return n;
}

/* Does s[0..n) end in a letter, digit or ideograph (no punctuation at all)?
 * Punctuation: ASCII, General Punctuation (… “ ”), CJK symbols and
 * punctuation (。、「」), full-width forms (！？：). */
static int ends_open(const char *s, size_t n)
{
    if (!n) return 0;
    size_t i = n - 1;
    while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80) i--;
    unsigned char c = (unsigned char)s[i];
    if (c < 0x80) return is_ascii_letter(c) || (c >= '0' && c <= '9');
    uint32_t cp = c >= 0xF0 ? c & 0x07 : c >= 0xE0 ? c & 0x0F : c & 0x1F;
    for (size_t k = i + 1; k < n; k++) cp = cp << 6 | ((unsigned char)s[k] & 0x3F);
    return !((cp >= 0x2000 && cp <= 0x206F) || (cp >= 0x3000 && cp <= 0x303F) ||
             (cp >= 0xFF00 && cp <= 0xFF20) || (cp >= 0xFF3B && cp <= 0xFF40) ||
             (cp >= 0xFF5B && cp <= 0xFF65) || (cp >= 0x80 && cp <= 0xBF));
}

void deepl_preserve_formatting(const char *source, char *translation)
{
    size_t tn = trimmed(translation), mark = end_mark(translation, tn);
    if (mark &&
        ends_open(source, trimmed(source))) /* the engine closed what the source left open */
        memmove(translation + tn - mark, translation + tn, strlen(translation + tn) + 1);
    const char *at;
    int want = first_letter(source, NULL), have = first_letter(translation, &at);
    if (want && have) {
        char *p = translation + (at - translation);
        *p = (char)(want >= 'a' ? (have | 0x20) : (have & ~0x20));
    }
}

/* ---- POST /v2/translate ------------------------------------------------------ */

/* split_sentences, "1" by default: SPLIT_NONE ("0": each text is one
 * sentence), SPLIT_ALL ("1": punctuation and line breaks end sentences),
 * SPLIT_NONEWLINES (punctuation only). */
enum { SPLIT_NONE, SPLIT_ALL, SPLIT_NONEWLINES };

/* The SPLIT_* of the field's value (absent: SPLIT_ALL), -1 for another. */
static int split_mode(const json_t *v)
{
    const char *s = json_string_value(v);
    if (!v || json_is_null(v)) return SPLIT_ALL;
    if (json_is_integer(v) && (json_integer_value(v) == 0 || json_integer_value(v) == 1))
        s = json_integer_value(v) ? "1" : "0";
    if (!s) return -1;
    return !strcmp(s, "0")            ? SPLIT_NONE
           : !strcmp(s, "1")          ? SPLIT_ALL
           : !strcmp(s, "nonewlines") ? SPLIT_NONEWLINES
                                      : -1;
}

/* A boolean option's value as field_bool reads it (true, "1", "true"). */
static int flag(const json_t *v)
{
    const char *s = json_string_value(v);
    return json_is_true(v) || (s && (!strcmp(s, "1") || !strcmp(s, "true")));
}

/* What shapes a request's translations, read from its body once api_deepl
 * has refused every invalid value. */
typedef struct deepl_opts {
    int markup; /* tag_handling: html or xml */
    int split;  /* SPLIT_* */
    int preserve, billed;
} deepl_opts;

static deepl_opts options_of(const json_t *in)
{
    deepl_opts o = {json_is_string(json_object_get(in, "tag_handling")),
                    split_mode(json_object_get(in, "split_sentences")),
                    flag(json_object_get(in, "preserve_formatting")),
                    flag(json_object_get(in, "show_billed_characters"))};
    return o;
}

/* -1 after a 400 naming the first option that is not valid. */
static int check_options(req *r, json_t *in)
{
    const char *tags, *context;
    int ignored;
    if (field_string(r, in, "tag_handling", NULL, &tags) ||
        field_string(r, in, "context", NULL, &context) ||
        field_bool(r, in, "preserve_formatting", 0, &ignored) ||
        field_bool(r, in, "show_billed_characters", 0, &ignored))
        return -1;
    if (tags && strcmp(tags, "html") && strcmp(tags, "xml")) {
        reply_error(r, 400,
                    "Value for 'tag_handling' not supported: it must be \"html\" or \"xml\"");
        return -1;
    }
    if (split_mode(json_object_get(in, "split_sentences")) < 0) {
        reply_error(r, 400,
                    "Value for 'split_sentences' not supported: it must be \"0\", \"1\" or "
                    "\"nonewlines\"");
        return -1;
    }
    return 0;
}

/* The options this server cannot honour, refused as DeepL refuses them. */
static int check_unsupported(req *r, json_t *in, const char *tgt)
{
    const char *formality;
    if (field_string(r, in, "formality", "default", &formality)) return -1;
    if (!strcmp(formality, "more") || !strcmp(formality, "less")) {
        reply_error(r, 400,
                    "'formality' is not supported for target language %s (use "
                    "prefer_more or prefer_less to fall back to the default)",
                    tgt);
        return -1;
    }
    if (strcmp(formality, "default") && strcmp(formality, "prefer_more") &&
        strcmp(formality, "prefer_less")) {
        reply_error(r, 400, "Value for 'formality' not supported: '%.40s'", formality);
        return -1;
    }
    return 0;
}

/* "a<b" -> "a&lt;b": plain text read by the HTML splitter, whose sentences
 * end at punctuation only and keep line breaks inside them as spaces. */
static json_t *html_escaped(const char *s, size_t len)
{
    fy_buf b = {0};
    for (size_t i = 0; i < len; i++) {
        const char *e = s[i] == '&' ? "&amp;" : s[i] == '<' ? "&lt;" : s[i] == '>' ? "&gt;" : NULL;
        if (e)
            fy_buf_put(&b, e, strlen(e));
        else
            fy_buf_putc(&b, s[i]);
    }
    json_t *v = b.oom ? NULL : json_stringn(b.p ? b.p : "", b.n);
    fy_buf_free(&b);
    return v;
}

/* The inverse, in place (the HTML join writes & < > as these entities). */
static void html_unescape(char *s)
{
    static const struct {
        const char *entity;
        char c;
    } ents[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}};
    char *w = s;
    for (const char *p = s; *p;) {
        size_t k = 0;
        while (k < 3 && strncmp(p, ents[k].entity, strlen(ents[k].entity))) k++;
        if (k < 3) {
            *w++ = ents[k].c;
            p += strlen(ents[k].entity);
        } else {
            *w++ = *p++;
        }
    }
    *w = '\0';
}

/* Are the texts of in strings (a string, or a list of them)? */
static int texts_are_strings(json_t *in)
{
    json_t *t = json_object_get(in, "text"), *v;
    size_t i;
    if (!json_is_array(t)) return json_is_string(t);
    json_array_foreach(t, i, v)
    {
        if (!json_is_string(v)) return 0;
    }
    return 1;
}

/* {"text": the texts of in (strings), HTML-escaped, in the same shape}, or
 * NULL when out of memory. */
static json_t *escaped_texts(json_t *in)
{
    json_t *t = json_object_get(in, "text"), *out = json_object(), *copy, *v;
    if (json_is_string(t)) {
        copy = html_escaped(json_string_value(t), json_string_length(t));
    } else {
        copy = json_array();
        size_t i;
        json_array_foreach(t, i, v)
        {
            if (json_array_append_new(copy,
                                      html_escaped(json_string_value(v), json_string_length(v)))) {
                json_decref(copy);
                copy = NULL;
                break;
            }
        }
    }
    if (!out || !copy || json_object_set_new(out, "text", copy)) {
        json_decref(out);
        return NULL;
    }
    return out;
}

/* Text i of the request as the client sent it. */
static const char *source_text(req *r, size_t i)
{
    json_t *t = json_object_get(r->in, "text");
    return json_string_value(json_is_array(t) ? json_array_get(t, i) : t);
}

static json_t *deepl_item(req *r, size_t i, const char *translation)
{
    char code[FY_LANG_MAX];
    deepl_opts o = options_of(r->in);
    char *text = strdup(translation);
    if (!text) return NULL;
    if (o.split == SPLIT_NONEWLINES && !o.markup) html_unescape(text);
    const char *src = source_text(r, i);
    if (o.preserve && !o.markup) deepl_preserve_formatting(src ? src : "", text);
    /* Never "" (deepl-node refuses it): a text without letters passes
     * through as if in the target language. */
    const char *lang = *task_lang(r, i) ? task_lang(r, i) : fy_request_target(r->q, i);
    json_t *item = json_pack("{s:s,s:s}", "detected_source_language",
                             task_code(r, lang, code, sizeof code), "text", text);
    free(text);
    if (item && o.billed && src)
        json_object_set_new(item, "billed_characters",
                            json_integer((json_int_t)srv_utf8_chars(src, strlen(src))));
    return item;
}

static enum MHD_Result deepl_finish(req *r)
{
    json_t *list = task_each(r, deepl_item);
    if (!list) return reply_error(r, 500, "out of memory");
    return reply_json(r, 200, json_pack("{s:o}", "translations", list));
}

static enum MHD_Result api_deepl(req *r)
{
    json_t *in = api_body(r);
    const char *src, *tgt;
    langs lg;
    if (!in || field_string(r, in, "source_lang", NULL, &src) ||
        field_string(r, in, "target_lang", NULL, &tgt) || check_options(r, in) ||
        task_langs(r, "source_lang", src, "target_lang", tgt, 1, &lg) ||
        check_unsupported(r, in, tgt) || deepl_translate_glossaries(r, in, &lg))
        return REPLIED(r);
    deepl_opts o = options_of(in);
    /* Markup (html, xml) goes to the HTML splitter, whose structure decides
     * the sentences whatever split_sentences says. */
    int mode = o.markup ? TEXT_HTML : o.split == SPLIT_NONE ? TEXT_RAW : 0;
    json_t *texts = in; /* texts that are not strings: task_texts says which */
    if (!o.markup && o.split == SPLIT_NONEWLINES && texts_are_strings(in)) {
        texts = escaped_texts(in);
        if (!texts) return reply_error(r, 500, "out of memory");
        mode = TEXT_HTML;
    }
    int rc = task_texts(r, texts, "text", 1, mode, &lg);
    if (texts != in) json_decref(texts);
    return rc ? REPLIED(r) : task_submit(r, deepl_finish);
}

/* ---- the rest of the API ----------------------------------------------------- */

/* How DeepL lists a target that has regional variants. */
static const struct variant {
    const char *tag, *code, *name;
} variants[] = {
    {"en", "EN-GB", "English (British)"},
    {"en", "EN-US", "English (American)"},
    {"pt", "PT-BR", "Portuguese (Brazilian)"},
    {"pt", "PT-PT", "Portuguese (European)"},
    {"zh", "ZH", "Chinese (simplified)"},
    {"zh", "ZH-HANS", "Chinese (simplified)"},
    {"zh-Hant", "ZH-HANT", "Chinese (traditional)"},
};

/* Appends target language tag to list, as DeepL writes its variants. */
static void add_target(req *r, json_t *list, const char *tag)
{
    int any = 0;
    for (size_t k = 0; k < sizeof variants / sizeof *variants; k++) {
        if (strcmp(variants[k].tag, tag)) continue;
        any = 1;
        json_array_append_new(list, json_pack("{s:s,s:s,s:b}", "language", variants[k].code, "name",
                                              variants[k].name, "supports_formality", 0));
    }
    char code[FY_LANG_MAX];
    if (!any)
        json_array_append_new(list, json_pack("{s:s,s:s,s:b}", "language",
                                              task_code(r, tag, code, sizeof code), "name",
                                              fy_lang_name(tag), "supports_formality", 0));
}

/* GET /v2/languages[?type=source|target]: what the registry serves. */
static enum MHD_Result api_deepl_languages(req *r)
{
    const char *type = req_arg(r, "type");
    int target = type && !strcmp(type, "target");
    if (type && !target && strcmp(type, "source"))
        return reply_error(r, 400,
                           "Value for 'type' not supported: it must be \"source\" or "
                           "\"target\"");
    fy_registry *reg = r->srv->reg;
    char src[64][FY_LANG_MAX], all[64][FY_LANG_MAX], code[FY_LANG_MAX];
    size_t ns = fy_registry_sources(reg, src, 64);
    json_t *list = json_array();
    if (!target) {
        for (size_t i = 0; i < ns; i++)
            json_array_append_new(list, json_pack("{s:s,s:s}", "language",
                                                  task_code(r, src[i], code, sizeof code), "name",
                                                  fy_lang_name(src[i])));
        return reply_json(r, 200, list);
    }
    size_t nl = fy_registry_languages(reg, all, 64);
    for (size_t i = 0; i < nl; i++) { /* every language some source reaches */
        int reached = 0;
        for (size_t k = 0; k < ns && !reached; k++)
            reached = fy_registry_route_kind(reg, src[k], all[i]) > 0;
        if (reached) add_target(r, list, all[i]);
    }
    return reply_json(r, 200, list);
}

/* GET /v2/usage: this server's "billing period" is its lifetime, and it
 * has no quota; the limit is large so that clients never stop. */
static enum MHD_Result api_deepl_usage(req *r)
{
    if (api_auth(r)) return REPLIED(r);
    unsigned long long n = atomic_load(&r->srv->chars_translated);
    return reply_json(r, 200,
                      json_pack("{s:I,s:I}", "character_count", (json_int_t)n, "character_limit",
                                (json_int_t)1000000000000LL));
}

/* ---- the dialect ---------------------------------------------------------------- */

static json_t *deepl_error(int status, const char *msg)
{
    (void)status;
    return json_pack("{s:s}", "message", msg);
}

const char *deepl_code(const char *tag, char *buf, size_t cap)
{
    size_t i = 0;
    for (; tag[i] && i + 1 < cap; i++) buf[i] = (char)toupper((unsigned char)tag[i]);
    buf[i] = '\0';
    return buf;
}

static const route deepl_routes[] = {
    {"POST", "/v2/translate", "deepl", 1, 0, api_deepl, NULL},
    {"GET", "/v2/languages", "deepl_languages", 0, 0, api_deepl_languages, NULL},
    {"GET", "/v2/usage", "deepl_usage", 1, 0, api_deepl_usage, NULL},
    {"GET", "/v2/glossary-language-pairs", "deepl_glossaries", 1, 0, api_deepl_glossary_pairs,
     NULL},
    {"*", "/v2/glossaries/*", "deepl_glossaries", 1, 0, api_deepl_glossaries_v2, NULL},
    {"*", "/v3/glossaries/*", "deepl_glossaries", 1, 0, api_deepl_glossaries_v3, NULL},
};

/* DeepL's clients read a 403 as "check auth_key": a missing key is one too. */
const dialect dialect_deepl = {
    "deepl",     deepl_routes, sizeof deepl_routes / sizeof *deepl_routes,
    deepl_error, deepl_code,   403};
