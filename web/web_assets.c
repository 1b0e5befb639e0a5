/* web_assets.c - lookup of the embedded web UI files (data in the generated web_data.c). */
#include "web_assets.h"

#include <string.h>

extern const fy_web_asset fy_web_asset_table[];
extern const size_t fy_web_asset_table_size;

/* Only our own origin: no inline script or style, no frames, no other hosts. */
const char fy_web_csp[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'";

const fy_web_asset *fy_web_asset_find(const char *path)
{
    if (!strcmp(path, "/")) path = "/index.html";
    if (!strcmp(path, "/docs") || !strcmp(path, "/docs/")) path = "/docs.html";
    if (!strcmp(path, "/plugins") || !strcmp(path, "/plugins/")) path = "/plugins.html";
    for (size_t i = 0; i < fy_web_asset_table_size; i++)
        if (!strcmp(fy_web_asset_table[i].path, path)) return &fy_web_asset_table[i];
    return NULL;
}
