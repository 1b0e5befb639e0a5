/* web.c - static assets embedded in the binary, served for GET requests.
 *
 * The hook for the web UI (a later task): add its files to the table
 * (generated from web/ at build time) and GET / serves the UI. For now "/"
 * is a minimal page listing the API. No file-system path is ever reachable
 * over HTTP: only what this table holds. */
#include "server/internal.h"

#include <string.h>

static const char index_html[] =
    "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    "<title>Fanyi</title></head><body>\n"
    "<h1>Fanyi</h1><p>Offline Chinese&rarr;English translation. API:</p><ul>\n"
    "<li><code>POST /translate</code> {\"text\": \"...\"} (and LibreTranslate {\"q\": ...})</li>\n"
    "<li><code>POST /translate/stream</code> (server-sent events)</li>\n"
    "<li><code>POST /v2/translate</code> (DeepL), <code>POST /deeplx</code>, "
    "<code>POST /language/translate/v2</code> (Google), <code>POST /imme</code>, "
    "<code>POST /kiss</code></li>\n"
    "<li><code>GET /languages</code>, <code>POST /detect</code></li>\n"
    "<li><code>GET /health</code>, <code>/ready</code>, <code>/metrics</code>, "
    "<code>/version</code>, <a href=\"/openapi.json\"><code>/openapi.json</code></a></li>\n"
    "</ul></body></html>\n";

static const fy_web_asset assets[] = {
    {"/", "text/html; charset=utf-8", index_html, sizeof index_html - 1},
};

const fy_web_asset *fy_web_find(const char *path)
{
    for (size_t i = 0; i < sizeof assets / sizeof *assets; i++)
        if (!strcmp(assets[i].path, path)) return &assets[i];
    return NULL;
}
