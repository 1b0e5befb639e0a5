/* dialects.c - the dialects the server speaks, and finding a request's
 * route among them. Each dialect's routes, error body, language codes and
 * CORS rules are in its own api_*.c (internal.h, "dialects"); this list is
 * all the core knows of them. A new dialect is registered here. */
#include "server/internal.h"

#include <string.h>

static const dialect *const dialects[] = {
    &dialect_ops,       /* /, /health, /ready, /metrics, /version, /openapi.json */
    &dialect_native,    /* /translate, /translate/stream */
    &dialect_libre,     /* /languages, /detect, /frontend/settings, /suggest, /spec */
    &dialect_deepl_doc, /* /v2/document... (ahead of DeepL's /v2 routes) */
    &dialect_deepl,     /* /v2/... */
    &dialect_deeplx,    /* /deeplx, /v1/translate */
    &dialect_google,    /* /language/translate/v2..., /translate_a/single */
    &dialect_documents, /* /translate_file, /download_file/..., /translate/document */
    &dialect_jobs,      /* /documents... */
    &dialect_imme,      /* /imme */
    &dialect_kiss,      /* /kiss */
    &dialect_hcfy,      /* /hcfy */
    &dialect_openai,    /* /v1/chat/completions, /v1/responses, /v1/models */
    &dialect_glossary,  /* /glossaries... */
};
enum { NDIALECTS = sizeof dialects / sizeof *dialects };

static int path_matches(const char *pattern, const char *url)
{
    size_t n = strlen(pattern);
    if (n < 2 || strcmp(pattern + n - 2, "/*")) return !strcmp(pattern, url);
    return !strncmp(pattern, url, n - 2) && (url[n - 2] == '\0' || url[n - 2] == '/');
}

static const dialect *answering(const dialect *owner, const route *rt)
{
    return rt->as ? rt->as : owner;
}

const route *route_find(const char *method, const char *url, const route **path_route,
                        const dialect **path_d, const dialect **d)
{
    *path_route = NULL;
    *path_d = *d = NULL;
    if (!strcmp(method, "HEAD")) method = "GET";
    for (int k = 0; k < NDIALECTS; k++) {
        const dialect *dl = dialects[k];
        for (size_t i = 0; i < dl->nroutes; i++) {
            const route *rt = &dl->routes[i];
            if (!path_matches(rt->path, url)) continue;
            if (!*path_route) *path_route = rt, *path_d = answering(dl, rt);
            if (!strcmp(rt->method, method) || !strcmp(rt->method, "*")) {
                *d = answering(dl, rt);
                return rt;
            }
        }
    }
    return NULL;
}

int route_exists(const char *method, const char *path)
{
    const route *any;
    const dialect *d, *pd;
    return route_find(method, path, &any, &pd, &d) != NULL;
}

const char *route_allow(const route *rt)
{
    /* By the methods the path has: bit 0 GET, 1 POST, 2 DELETE. */
    static const char *const allow[8] = {"OPTIONS",
                                         "GET, HEAD, OPTIONS",
                                         "POST, OPTIONS",
                                         "GET, HEAD, POST, OPTIONS",
                                         "DELETE, OPTIONS",
                                         "GET, HEAD, DELETE, OPTIONS",
                                         "POST, DELETE, OPTIONS",
                                         "GET, HEAD, POST, DELETE, OPTIONS"};
    unsigned m = 0;
    for (int k = 0; k < NDIALECTS; k++) {
        for (size_t i = 0; i < dialects[k]->nroutes; i++) {
            const route *o = &dialects[k]->routes[i];
            if (strcmp(o->path, rt->path)) continue;
            if (!strcmp(o->method, "*")) {
                if (m) continue; /* a catch-all behind real routes answers 405 */
                return "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS";
            }
            m |= !strcmp(o->method, "GET")      ? 1u
                 : !strcmp(o->method, "POST")   ? 2u
                 : !strcmp(o->method, "DELETE") ? 4u
                                                : 0u;
        }
    }
    return allow[m];
}
