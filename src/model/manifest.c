/* manifest.c - the compiled-in model manifest and the JSON manifest loader.
 *
 * The built-in manifest is JSON text in the same schema a --manifest file
 * uses, so both go through one parser and one set of checks (jansson).
 */
#include "model/manifest.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Firefox Translations zh-Hans -> en, version 2.0 (Mozilla Remote Settings
 * attachments). These facts are the whole trust anchor of `model fetch`:
 * every byte downloaded is checked against the sizes and digests here. */
static const char builtin_json[] =
    "{\"schema\": 1,"
    " \"base_url\": \"https://firefox-settings-attachments.cdn.mozilla.net/\","
    " \"models\": {\"zh-en\": {\"version\": \"2.0\", \"files\": ["
    "  {\"name\": \"model.zhen.intgemm.alphas.bin\","
    "   \"location\": \"main-workspace/translations-models/"
    "052699bf-6f88-4c74-bb14-e49a943b4f59.bin\","
    "   \"size\": 59504955,"
    "   \"sha256\": \"3535442962ec8f4a553cc19b206befcac689ee9cddaea44fa91e21527fc30ac2\"},"
    "  {\"name\": \"lex.50.50.zhen.s2t.bin\","
    "   \"location\": \"main-workspace/translations-models/"
    "645c720c-6920-470d-9bb7-3f9a6b0a9cae.bin\","
    "   \"size\": 9220016,"
    "   \"sha256\": \"cdcad3592dc2bc4676c34c4d37203f7649ee989195cf083cbb60f1ea011f976b\"},"
    "  {\"name\": \"vocab.zhen.spm\","
    "   \"location\": \"main-workspace/translations-models/"
    "88a4925d-ff4a-4c76-8813-95e2ac600b14.spm\","
    "   \"size\": 1359697,"
    "   \"sha256\": \"dff594318ab7d8b7b60b844ab98ebe6b932ae8045fab15235404c787715965b3\"}"
    " ]}}}";

#define NAME_MAX_LEN 200

struct fy_manifest {
    size_t nmodels;
    fy_manifest_model *models; /* each model's files array is owned here too */
};

void fy_manifest_free(fy_manifest *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->nmodels; i++) {
        fy_manifest_model *mod = &m->models[i];
        for (size_t j = 0; j < mod->nfiles; j++) {
            free((char *)mod->files[j].name);
            free((char *)mod->files[j].url);
        }
        free((fy_manifest_file *)mod->files);
        free((char *)mod->name);
        free((char *)mod->version);
    }
    free(m->models);
    free(m);
}

/* A name that is safe as one path component: no '/', no leading '.', so a
 * hostile manifest cannot write outside the model directory. */
static int safe_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > NAME_MAX_LEN || s[0] == '.') return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!isalnum(c) && c != '.' && c != '-' && c != '_' && c != '+') return 0;
    }
    return 1;
}

/* base + location with exactly one '/' between them; malloc'd. */
static char *join_url(const char *base, const char *location)
{
    size_t bn = strlen(base);
    while (bn > 0 && base[bn - 1] == '/') bn--;
    while (*location == '/') location++;
    size_t n = bn + 1 + strlen(location) + 1;
    char *url = malloc(n);
    if (url) snprintf(url, n, "%.*s/%s", (int)bn, base, location);
    return url;
}

static const char *get_string(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int parse_file(json_t *jf, const char *base, fy_manifest_file *f, const char *where,
                      fy_error *err)
{
    const char *name = get_string(jf, "name");
    const char *location = get_string(jf, "location");
    const char *sha = get_string(jf, "sha256");
    json_t *size = json_object_get(jf, "size");
    if (!json_is_object(jf) || !name || !location || !sha || !json_is_integer(size))
        return fy_err(err, FY_EFORMAT,
                      "%s: each file needs string name, location, sha256 and integer size", where);
    if (!safe_name(name))
        return fy_err(err, FY_EFORMAT, "%s: file name '%s' is not a plain file name", where, name);
    if (json_integer_value(size) <= 0)
        return fy_err(err, FY_EFORMAT, "%s: %s: size must be positive", where, name);
    if (strlen(sha) != 64 || strspn(sha, "0123456789abcdefABCDEF") != 64)
        return fy_err(err, FY_EFORMAT, "%s: %s: sha256 must be 64 hex digits", where, name);
    f->size = (uint64_t)json_integer_value(size);
    for (int i = 0; i < 64; i++) f->sha256[i] = (char)tolower((unsigned char)sha[i]);
    f->sha256[64] = '\0';
    f->name = strdup(name);
    f->url = base ? join_url(base, location) : NULL;
    if (!f->name || (base && !f->url)) return fy_err(err, FY_ENOMEM, "%s: out of memory", where);
    return 0;
}

static int parse_model(const char *key, json_t *jm, const char *base, fy_manifest_model *mod,
                       const char *where, fy_error *err)
{
    if (!safe_name(key))
        return fy_err(err, FY_EFORMAT, "%s: model name '%s' is not a plain name", where, key);
    const char *version = get_string(jm, "version");
    json_t *files = json_object_get(jm, "files");
    if (!json_is_object(jm) || !version || !json_is_array(files) || json_array_size(files) == 0)
        return fy_err(err, FY_EFORMAT,
                      "%s: model '%s' needs a string version and a non-empty files array", where,
                      key);
    mod->name = strdup(key);
    mod->version = strdup(version);
    fy_manifest_file *fs = calloc(json_array_size(files), sizeof *fs);
    mod->files = fs;
    if (!mod->name || !mod->version || !fs)
        return fy_err(err, FY_ENOMEM, "%s: out of memory", where);
    for (size_t i = 0; i < json_array_size(files); i++) {
        mod->nfiles = i + 1; /* so fy_manifest_free frees what was filled */
        int rc = parse_file(json_array_get(files, i), base, &fs[i], where, err);
        if (rc) return rc;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(fs[j].name, fs[i].name))
                return fy_err(err, FY_EFORMAT, "%s: model '%s' lists %s twice", where, key,
                              fs[i].name);
    }
    return 0;
}

fy_manifest *fy_manifest_parse(const char *json, size_t len, const char *name, const char *mirror,
                               fy_error *err)
{
    json_error_t jerr;
    fy_manifest *m = NULL;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        fy_err(err, FY_EFORMAT, "%s: invalid JSON at line %d: %s", name, jerr.line, jerr.text);
        goto fail;
    }
    json_t *schema = json_object_get(root, "schema");
    json_t *models = json_object_get(root, "models");
    const char *base = mirror && *mirror ? mirror : get_string(root, "base_url");
    if (!json_is_object(root) || !json_is_integer(schema) || !json_is_object(models)) {
        fy_err(err, FY_EFORMAT, "%s: expected an object with integer schema and object models",
               name);
        goto fail;
    }
    if (json_integer_value(schema) != 1) {
        fy_err(err, FY_EFORMAT, "%s: schema %lld is not supported (expected 1)", name,
               (long long)json_integer_value(schema));
        goto fail;
    }
    m = calloc(1, sizeof *m);
    if (m) m->models = calloc(json_object_size(models) + 1, sizeof *m->models);
    if (!m || !m->models) {
        fy_err(err, FY_ENOMEM, "%s: out of memory", name);
        goto fail;
    }
    const char *key;
    json_t *jm;
    json_object_foreach(models, key, jm)
    {
        if (parse_model(key, jm, base, &m->models[m->nmodels++], name, err)) goto fail;
    }
    if (m->nmodels == 0) {
        fy_err(err, FY_EFORMAT, "%s: no models", name);
        goto fail;
    }
    json_decref(root);
    return m;
fail:
    json_decref(root);
    fy_manifest_free(m);
    return NULL;
}

fy_manifest *fy_manifest_builtin(const char *mirror, fy_error *err)
{
    return fy_manifest_parse(builtin_json, sizeof builtin_json - 1, "built-in manifest", mirror,
                             err);
}

fy_manifest *fy_manifest_load(const char *path, const char *mirror, fy_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fy_err(err, errno == ENOENT ? FY_ENOTFOUND : FY_EIO, "%s: cannot open: %s", path,
               strerror(errno));
        return NULL;
    }
    /* A manifest is a few KB; 1 MiB is a generous sanity limit. */
    size_t cap = 1 << 20, n;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        fy_err(err, FY_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    n = fread(buf, 1, cap, f);
    int bad = ferror(f), full = n == cap;
    fclose(f);
    fy_manifest *m = NULL;
    if (bad)
        fy_err(err, FY_EIO, "%s: read error", path);
    else if (full)
        fy_err(err, FY_EFORMAT, "%s: too large for a manifest (over 1 MiB)", path);
    else
        m = fy_manifest_parse(buf, n, path, mirror, err);
    free(buf);
    return m;
}

size_t fy_manifest_model_count(const fy_manifest *m)
{
    return m ? m->nmodels : 0;
}

const fy_manifest_model *fy_manifest_model_at(const fy_manifest *m, size_t i)
{
    return m && i < m->nmodels ? &m->models[i] : NULL;
}

const fy_manifest_model *fy_manifest_find(const fy_manifest *m, const char *name)
{
    for (size_t i = 0; m && i < m->nmodels; i++)
        if (!strcmp(m->models[i].name, name)) return &m->models[i];
    return NULL;
}

const fy_manifest_file *fy_manifest_find_file(const fy_manifest *m, const char *name,
                                              const fy_manifest_model **model)
{
    for (size_t i = 0; m && i < m->nmodels; i++)
        for (size_t j = 0; j < m->models[i].nfiles; j++)
            if (!strcmp(m->models[i].files[j].name, name)) {
                if (model) *model = &m->models[i];
                return &m->models[i].files[j];
            }
    return NULL;
}
