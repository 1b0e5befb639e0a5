/* web_assets.h - the web UI's files, compiled into the binary.
 *
 * web/embed.cmake turns every file in web/ listed in web/CMakeLists.txt into
 * a byte array at build time, so `fanyi serve` needs no files on disk and
 * makes no request to any other host.
 */
#ifndef FY_WEB_ASSETS_H
#define FY_WEB_ASSETS_H

#include <stddef.h>

typedef struct fy_web_asset {
    const char *path;         /* URL path, e.g. "/app.js" */
    const char *content_type; /* with charset for text types */
    const unsigned char *data;
    size_t size;
    const char *etag; /* quoted strong ETag: sha256 prefix of the content */
} fy_web_asset;

/* The asset served at a URL path ("/", "/docs" and "/plugins" map to their
 * pages), or NULL. The query string must already be removed. */
const fy_web_asset *fy_web_asset_find(const char *path);

/* The Content-Security-Policy every UI response carries. */
extern const char fy_web_csp[];

#endif
