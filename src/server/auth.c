/* auth.c - the API token: every way a client dialect sends it, compared in
 * constant time. 401 when no token came (403 for DeepL), 403 when a wrong
 * one did. */
#include "server/internal.h"

#include <string.h>
#include <strings.h>

int auth_equal(const char *a, const char *b)
{
    /* Time depends only on the length of the candidate a, never on where
     * the first difference is. */
    size_t la = strlen(a), lb = strlen(b);
    unsigned char diff = (unsigned char)(la != lb);
    for (size_t i = 0; i < la; i++) diff |= (unsigned char)(a[i] ^ (lb ? b[i % lb] : 0));
    return diff == 0;
}

/* The token sent in a header or the query string, or NULL. */
static const char *outer_token(req *r)
{
    const char *h = req_header(r, MHD_HTTP_HEADER_AUTHORIZATION);
    if (h) {
        static const char *const schemes[] = {"Bearer ", "DeepL-Auth-Key ", "Token ", "Key "};
        for (size_t i = 0; i < sizeof schemes / sizeof *schemes; i++) {
            size_t n = strlen(schemes[i]);
            if (!strncasecmp(h, schemes[i], n)) {
                h += n;
                while (*h == ' ') h++;
                return h;
            }
        }
        return h;
    }
    const char *t = req_header(r, "X-API-Token");
    if (!t) t = req_header(r, "X-API-Key");
    if (!t) t = req_arg(r, "token");
    if (!t) t = req_arg(r, "api_key");
    if (!t) t = req_arg(r, "key"); /* Google */
    if (!t) t = req_arg(r, "auth_key");
    return t;
}

/* The token in the body (LibreTranslate api_key, and apiKey as the npm
 * libretranslate package sends it; DeepL form auth_key). */
static const char *body_token(json_t *body)
{
    const char *t = json_string_value(json_object_get(body, "api_key"));
    if (!t) t = json_string_value(json_object_get(body, "apiKey"));
    if (!t) t = json_string_value(json_object_get(body, "auth_key"));
    if (!t) t = json_string_value(json_object_get(body, "token"));
    return t;
}

/* 0 when got is the token, else -1 after the reply: 401 when no token came
 * (403 for DeepL, whose clients take 403 as "check auth_key"), 403 when a
 * wrong one did. */
static int token_ok(req *r, const char *got)
{
    if (!got || !*got) {
        int missing = r->dialect && r->dialect->missing_token ? r->dialect->missing_token : 401;
        reply_error(r, missing,
                    "an API token is required (Authorization: Bearer TOKEN, X-API-Token, "
                    "?token=, api_key, or DeepL-Auth-Key)");
        return -1;
    }
    if (!auth_equal(got, r->srv->token)) {
        reply_error(r, 403, "the API token is not valid");
        return -1;
    }
    return 0;
}

static int auth_needed(req *r)
{
    return r->srv->token && r->rt && r->rt->auth;
}

int api_auth(req *r)
{
    return auth_needed(r) ? token_ok(r, outer_token(r)) : 0;
}

int auth_token(req *r, const char *body_token)
{
    if (!auth_needed(r)) return 0;
    const char *t = outer_token(r);
    return token_ok(r, t ? t : body_token);
}

json_t *api_body(req *r)
{
    if (!auth_needed(r)) return req_body(r);
    const char *t = outer_token(r);
    if (t) return token_ok(r, t) ? NULL : req_body(r);
    char msg[300];
    int status;
    json_t *in = req_body_parse(r, &status, msg, sizeof msg);
    /* No credentials anywhere (a body that does not parse has none): 401. */
    if (token_ok(r, in ? body_token(in) : NULL)) return NULL;
    return in;
}
