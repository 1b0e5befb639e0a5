/* manifest.h - which files make up a downloadable model, and where to get them.
 *
 * A manifest lists models by name ("zh-en"); each model has a version and
 * files, each with its install name, download URL, exact size and sha256.
 * The manifest of the models we support is compiled into the binary; a
 * manifest file (`--manifest FILE`) replaces it for tests and mirrors.
 *
 * Schema (JSON, version 1; documented in docs/models.md):
 *   { "schema": 1,
 *     "base_url": "https://host/path/",
 *     "models": { "zh-en": { "version": "2.0",
 *                            "files": [ { "name": "vocab.zhen.spm",
 *                                         "location": "dir/uuid.spm",
 *                                         "size": 1359697,
 *                                         "sha256": "<64 hex digits>" } ] } } }
 * A file's URL is base_url + location; a mirror URL replaces base_url.
 * Unknown keys are ignored so later versions can add fields.
 */
#ifndef FY_MODEL_MANIFEST_H
#define FY_MODEL_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef struct fy_manifest_file {
    const char *name; /* plain file name inside the model directory (no '/') */
    const char *url;  /* full download URL (base or mirror + location); NULL when the
                         manifest has no base_url and no mirror was given */
    uint64_t size;    /* exact size in bytes */
    char sha256[65];  /* lowercase hex digest, NUL-terminated */
} fy_manifest_file;

typedef struct fy_manifest_model {
    const char *name;    /* "zh-en" */
    const char *version; /* "2.0" */
    size_t nfiles;
    const fy_manifest_file *files;
} fy_manifest_model;

typedef struct fy_manifest fy_manifest;

/* The compiled-in manifest. mirror (may be NULL) replaces the base URL.
 * Returns a new manifest the caller frees, or NULL (FY_ENOMEM) with err set. */
fy_manifest *fy_manifest_builtin(const char *mirror, fy_error *err);

/* Reads and validates a manifest file; mirror as above. Returns NULL with a
 * one-line message naming the file on error: FY_ENOTFOUND/FY_EIO (unreadable),
 * FY_EFORMAT (invalid JSON, a missing or mistyped key, a file name with '/',
 * a bad sha256). base_url is optional (verify needs none; fetch then needs a
 * mirror). */
fy_manifest *fy_manifest_load(const char *path, const char *mirror, fy_error *err);

/* Same from len bytes of JSON text; name is used in messages. */
fy_manifest *fy_manifest_parse(const char *json, size_t len, const char *name, const char *mirror,
                               fy_error *err);

/* Frees the manifest and everything it owns; NULL is a no-op. */
void fy_manifest_free(fy_manifest *m);

/* Number of models, and the i-th (borrowed; NULL when out of range). */
size_t fy_manifest_model_count(const fy_manifest *m);
const fy_manifest_model *fy_manifest_model_at(const fy_manifest *m, size_t i);

/* The model called name (borrowed), or NULL if the manifest has none. */
const fy_manifest_model *fy_manifest_find(const fy_manifest *m, const char *name);

/* The first file called name in any model (borrowed), or NULL; *model (if
 * non-NULL) receives the model it belongs to. verify uses this to know a
 * file's expected size and hash from its name alone. */
const fy_manifest_file *fy_manifest_find_file(const fy_manifest *m, const char *name,
                                              const fy_manifest_model **model);

#endif
