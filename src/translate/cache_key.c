/* cache_key.c - model cache names from file contents, Redis keys. */
#include "translate/cache_key.h"

#include <stdio.h>
#include <string.h>

#include "model/sha256.h"

/* Adds "role sha256\n" for the file at path (or "role none\n"). */
static int add_file(fy_sha256 *h, const char *role, const char *path, fy_error *err)
{
    char hex[65] = "none", line[96];
    if (path) {
        int rc = fy_sha256_file(path, hex, NULL, err);
        if (rc) return rc;
    }
    int n = snprintf(line, sizeof line, "%s %s\n", role, hex);
    fy_sha256_update(h, line, (size_t)n);
    return 0;
}

int fy_cache_model_name(const char *direction, const fy_model_files *files, int shortlist_used,
                        float max_length_factor, char out[FY_CACHE_NAME_MAX], fy_error *err)
{
    if (strlen(direction) > 40)
        return fy_err(err, FY_EINVAL, "cache: direction '%.40s...' too long", direction);
    fy_sha256 *h = fy_sha256_new();
    if (!h) return fy_err(err, FY_ENOMEM, "cache: out of memory");
    /* A description in lines, so that no two different inputs hash the
     * same text (each field on its own line, in a fixed order). */
    char head[160];
    int n = snprintf(head, sizeof head, "fanyi cache %d\ndirection %s\nmax_length_factor %.9g\n",
                     FY_CACHE_KEY_VERSION, direction, (double)max_length_factor);
    fy_sha256_update(h, head, (size_t)n);
    int rc = add_file(h, "model", files->model, err);
    if (!rc) rc = add_file(h, "shortlist", shortlist_used ? files->shortlist : NULL, err);
    if (!rc) rc = add_file(h, "src_vocab", files->src_vocab, err);
    if (!rc) rc = add_file(h, "trg_vocab", files->trg_vocab, err);
    if (!rc) {
        char hex[65];
        fy_sha256_hex(h, hex);
        snprintf(out, FY_CACHE_NAME_MAX, "%s:%.32s", direction, hex);
    }
    fy_sha256_free(h);
    return rc;
}

int fy_cache_redis_key(const char *model, const char *text, char out[FY_CACHE_REDIS_KEY_MAX])
{
    if (strlen(model) >= FY_CACHE_NAME_MAX) return -1;
    fy_sha256 *h = fy_sha256_new();
    if (!h) return -1;
    char hex[65];
    fy_sha256_update(h, text, strlen(text));
    fy_sha256_hex(h, hex);
    fy_sha256_free(h);
    return snprintf(out, FY_CACHE_REDIS_KEY_MAX, "fanyi:%d:%s:%.32s", FY_CACHE_KEY_VERSION, model,
                    hex);
}
