/* test_manifest.c - the built-in manifest, the manifest loader's checks, and sha256. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/discover.h"
#include "model/manifest.h"
#include "model/sha256.h"
#include "util/lang.h"
#include "../check.h"

static void test_builtin(void)
{
    fy_error err = {0};
    fy_manifest *m = fy_manifest_builtin(NULL, &err);
    CHECK(m != NULL);
    if (!m) return;
    /* zh-en: version 3.0 as Firefox ships it, the same files as legacy 2.0. */
    const fy_manifest_model *zh = fy_manifest_find(m, "zh-en");
    CHECK(zh && !strcmp(zh->version, "3.0") && !strcmp(zh->legacy_version, "2.0") &&
          zh->nfiles == 3 && !strcmp(zh->source, "zh") && !strcmp(zh->target, "en") &&
          !strcmp(zh->architecture, "base") && !strcmp(zh->channel, "release"));
    const fy_manifest_model *owner = NULL;
    const fy_manifest_file *f = fy_manifest_find_file(m, "model.zhen.intgemm.alphas.bin", &owner);
    CHECK(f && owner == zh && f->size == 59504955);
    CHECK(f && !strcmp(f->url, "https://firefox-settings-attachments.cdn.mozilla.net/"
                               "main-workspace/translations-models/"
                               "052699bf-6f88-4c74-bb14-e49a943b4f59.bin"));
    CHECK(f &&
          !strcmp(f->sha256, "3535442962ec8f4a553cc19b206befcac689ee9cddaea44fa91e21527fc30ac2"));
    f = fy_manifest_find_file(m, "lex.50.50.zhen.s2t.bin", NULL);
    CHECK(f && f->size == 9220016 && !strncmp(f->sha256, "cdcad359", 8));
    f = fy_manifest_find_file(m, "vocab.zhen.spm", NULL);
    CHECK(f && f->size == 1359697 && !strncmp(f->sha256, "dff59431", 8));
    CHECK(fy_manifest_model_bytes(zh) == 59504955ull + 9220016 + 1359697);

    /* en-zh: base-memory, separate vocabularies (Remote Settings, 2.2). */
    const fy_manifest_model *en = fy_manifest_find(m, "en-zh");
    CHECK(en && en->nfiles == 4 && !strcmp(en->source, "en") && !strcmp(en->target, "zh") &&
          !strcmp(en->architecture, "base-memory"));
    f = fy_manifest_find_file(m, "model.enzh.intgemm.alphas.bin", &owner);
    CHECK(f && owner == en && f->size == 43849787);
    CHECK(fy_manifest_find_file(m, "srcvocab.enzh.spm", NULL) &&
          fy_manifest_find_file(m, "trgvocab.enzh.spm", NULL));

    /* 85 desktop release directions and 5 nightly-only ones; names are
     * directions as lang.h writes them. */
    size_t nightly = 0, n = fy_manifest_model_count(m);
    CHECK(n == 90 && fy_manifest_model_at(m, n) == NULL);
    for (size_t i = 0; i < n; i++) {
        const fy_manifest_model *x = fy_manifest_model_at(m, i);
        char name[FY_PAIR_MAX];
        fy_lang_pair_name(x->source, x->target, name, sizeof name);
        CHECK(!strcmp(name, x->name) && x->version[0] && x->architecture[0] && x->nfiles >= 3);
        nightly += !strcmp(x->channel, "nightly");
        CHECK(!strcmp(x->channel, "nightly") || !strcmp(x->channel, "release"));
    }
    CHECK(nightly == 5);
    const fy_manifest_model *az = fy_manifest_find(m, "az-en");
    CHECK(az && !strcmp(az->channel, "nightly") && fy_manifest_find(m, "en-az") &&
          !strcmp(fy_manifest_find(m, "en-az")->channel, "release"));
    CHECK(fy_manifest_find_file(m, "nope.bin", NULL) == NULL);

    /* Directions in any spelling. */
    CHECK(fy_manifest_find_direction(m, "en-zh") == en);
    CHECK(fy_manifest_find_direction(m, "EN-ZH") == en);
    CHECK(fy_manifest_find_direction(m, "en-zh-Hans") == en);
    CHECK(fy_manifest_find_direction(m, "zh-Hans-en") == zh);
    CHECK(fy_manifest_find_direction(m, "ZH_HANS-EN") == zh);
    CHECK(fy_manifest_find_direction(m, "zh-Hant-en") == NULL);
    CHECK(fy_manifest_find_direction(m, "en-xx") == NULL);
    CHECK(fy_manifest_find_direction(m, "german") == NULL);
    CHECK(fy_manifest_find_direction(m, NULL) == NULL);

    /* Close names: the same languages first. */
    const fy_manifest_model *close[5];
    size_t k = fy_manifest_suggest(m, "de-fr", close, 5);
    CHECK(k == 5 && !strcmp(close[0]->name, "de-en") && !strcmp(close[1]->name, "en-fr"));
    k = fy_manifest_suggest(m, "en-xx", close, 3);
    CHECK(k == 3 && !strcmp(close[0]->source, "en") && !strcmp(close[2]->source, "en") &&
          strcmp(close[0]->name, close[1]->name) < 0);
    CHECK(fy_manifest_suggest(m, "x", close, 0) == 0);
    fy_manifest_free(m);

    /* A mirror replaces the base URL; slashes are joined exactly once. */
    m = fy_manifest_builtin("http://127.0.0.1:8080/mirror//", &err);
    f = m ? fy_manifest_find_file(m, "vocab.zhen.spm", NULL) : NULL;
    CHECK(f && !strcmp(f->url, "http://127.0.0.1:8080/mirror/main-workspace/translations-models/"
                               "88a4925d-ff4a-4c76-8813-95e2ac600b14.spm"));
    fy_manifest_free(m);
    fy_manifest_free(NULL);
}

/* Where installed models live. */
static void test_models_root(void)
{
    setenv("HOME", "/h", 1);
    unsetenv("FANYI_MODELS_DIR");
    unsetenv("FANYI_MODEL_DIR");
    char *r = fy_models_root(NULL);
    CHECK(r && !strcmp(r, "/h/.local/share/fanyi/models"));
    free(r);
    setenv("FANYI_MODEL_DIR", "/srv/fanyi/zh-en/", 1);
    r = fy_models_root(NULL);
    CHECK(r && !strcmp(r, "/srv/fanyi"));
    free(r);
    setenv("FANYI_MODELS_DIR", "/m", 1);
    r = fy_models_root(NULL);
    CHECK(r && !strcmp(r, "/m"));
    free(r);
    unsetenv("FANYI_MODELS_DIR");
    unsetenv("FANYI_MODEL_DIR");
    r = fy_models_root("/given");
    CHECK(r && !strcmp(r, "/given"));
    free(r);
    unsetenv("HOME");
    r = fy_models_root(NULL);
    CHECK(r && !strcmp(r, "./.local/share/fanyi/models"));
    free(r);
}

/* Parses text, expecting failure with code and a message containing want. */
static void expect_bad(const char *json, int code, const char *want)
{
    fy_error err = {0};
    fy_manifest *m = fy_manifest_parse(json, strlen(json), "t.json", NULL, &err);
    CHECK(m == NULL && err.code == code && strstr(err.msg, want) && strstr(err.msg, "t.json"));
    if (m || !strstr(err.msg, want)) fprintf(stderr, "  for %s: got '%s'\n", json, err.msg);
    fy_manifest_free(m);
}

#define FILE_OK                                                                                    \
    "{\"name\":\"a.bin\",\"location\":\"x/a\",\"size\":3,\"sha256\":"                              \
    "\"BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD\"}"

static void test_parse(void)
{
    fy_error err = {0};
    const char *good = "{\"schema\":1,\"base_url\":\"http://h/b\",\"extra\":true,"
                       "\"models\":{\"t\":{\"version\":\"1\",\"files\":[" FILE_OK "]}}}";
    fy_manifest *m = fy_manifest_parse(good, strlen(good), "t.json", NULL, &err);
    CHECK(m != NULL);
    const fy_manifest_file *f = m ? fy_manifest_find_file(m, "a.bin", NULL) : NULL;
    CHECK(f && !strcmp(f->url, "http://h/b/x/a") && f->size == 3);
    /* Digests are stored lowercase whatever the manifest's case. */
    CHECK(f &&
          !strcmp(f->sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    fy_manifest_free(m);

    expect_bad("{\"schema\":1,", FY_EFORMAT, "invalid JSON");
    expect_bad("[]", FY_EFORMAT, "schema");
    expect_bad("{\"schema\":2,\"base_url\":\"u\",\"models\":{}}", FY_EFORMAT, "schema 2");
    expect_bad("{\"schema\":1,\"base_url\":\"u\",\"models\":{}}", FY_EFORMAT, "no models");
    expect_bad("{\"schema\":1,\"base_url\":\"u\",\"models\":{\"t\":{\"files\":[]}}}", FY_EFORMAT,
               "version");
    expect_bad("{\"schema\":1,\"base_url\":\"u\",\"models\":{\"t\":{\"version\":\"1\",\"files\":["
               "{\"name\":\"../x\",\"location\":\"a\",\"size\":3,\"sha256\":\"00\"}]}}}",
               FY_EFORMAT, "not a plain file name");
    expect_bad("{\"schema\":1,\"base_url\":\"u\",\"models\":{\"t\":{\"version\":\"1\",\"files\":["
               "{\"name\":\"x\",\"location\":\"a\",\"size\":3,\"sha256\":\"00\"}]}}}",
               FY_EFORMAT, "64 hex");
    expect_bad("{\"schema\":1,\"base_url\":\"u\",\"models\":{\"t\":{\"version\":\"1\",\"files\":["
               "{\"name\":\"x\",\"location\":\"a\",\"size\":0,\"sha256\":\"00\"}]}}}",
               FY_EFORMAT, "positive");
    expect_bad("{\"schema\":1,\"base_url\":\"u\",\"models\":{\"t\":{\"version\":\"1\",\"files\":"
               "[" FILE_OK "," FILE_OK "]}}}",
               FY_EFORMAT, "twice");
    expect_bad("{\"schema\":1,\"base_url\":\"u\",\"models\":{\"t\":{\"version\":\"1\",\"files\":["
               "{\"name\":\"x\",\"size\":3}]}}}",
               FY_EFORMAT, "each file needs");

    /* The optional keys: given (normalised), derived from a direction name,
     * or empty; a bad language tag or a non-string value is an error. */
    const char *langs =
        "{\"schema\":1,\"models\":{"
        "\"de-en\":{\"version\":\"1\",\"files\":[" FILE_OK "]},"
        "\"t\":{\"version\":\"1\",\"files\":[" FILE_OK "]},"
        "\"zt-x\":{\"version\":\"1\",\"source\":\"zh-TW\",\"target\":\"EN-US\","
        "\"architecture\":\"tiny\",\"channel\":\"nightly\",\"files\":[" FILE_OK "]}}}";
    m = fy_manifest_parse(langs, strlen(langs), "t.json", NULL, &err);
    CHECK(m != NULL);
    const fy_manifest_model *de = m ? fy_manifest_find(m, "de-en") : NULL;
    CHECK(de && !strcmp(de->source, "de") && !strcmp(de->target, "en") && !de->architecture[0] &&
          !de->channel[0] && !de->legacy_version[0]);
    const fy_manifest_model *t = m ? fy_manifest_find(m, "t") : NULL;
    CHECK(t && !t->source[0] && !t->target[0]);
    const fy_manifest_model *zt = m ? fy_manifest_find(m, "zt-x") : NULL;
    CHECK(zt && !strcmp(zt->source, "zh-Hant") && !strcmp(zt->target, "en") &&
          !strcmp(zt->architecture, "tiny") && !strcmp(zt->channel, "nightly"));
    CHECK(m && fy_manifest_find_direction(m, "zh-Hant-EN") == zt);
    CHECK(m && fy_manifest_find_direction(m, "DE-EN") == de);
    fy_manifest_free(m);
    expect_bad("{\"schema\":1,\"models\":{\"t\":{\"version\":\"1\",\"source\":\"1x\","
               "\"files\":[" FILE_OK "]}}}",
               FY_EFORMAT, "source '1x' is not a language tag");
    expect_bad("{\"schema\":1,\"models\":{\"t\":{\"version\":\"1\",\"architecture\":3,"
               "\"files\":[" FILE_OK "]}}}",
               FY_EFORMAT, "architecture must be a string");

    /* Without base_url (and mirror) the files have no URL: fine for verify. */
    const char *nobase =
        "{\"schema\":1,\"models\":{\"t\":{\"version\":\"1\",\"files\":[" FILE_OK "]}}}";
    m = fy_manifest_parse(nobase, strlen(nobase), "t.json", NULL, &err);
    f = m ? fy_manifest_find_file(m, "a.bin", NULL) : NULL;
    CHECK(f && f->url == NULL && f->size == 3);
    fy_manifest_free(m);
    m = fy_manifest_parse(nobase, strlen(nobase), "t.json", "http://mirror/", &err);
    f = m ? fy_manifest_find_file(m, "a.bin", NULL) : NULL;
    CHECK(f && f->url && !strcmp(f->url, "http://mirror/x/a"));
    fy_manifest_free(m);

    fy_manifest *none = fy_manifest_load("/nonexistent/m.json", NULL, &err);
    CHECK(none == NULL && err.code == FY_ENOTFOUND && strstr(err.msg, "/nonexistent/m.json"));
}

static void test_sha256(void)
{
    char hex[65];
    fy_sha256 *h = fy_sha256_new();
    CHECK(h != NULL);
    if (!h) return;
    fy_sha256_update(h, "a", 1);
    fy_sha256_update(h, "bc", 2);
    fy_sha256_hex(h, hex);
    CHECK(!strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    fy_sha256_reset(h);
    fy_sha256_hex(h, hex);
    CHECK(!strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    fy_sha256_free(h);
    fy_sha256_free(NULL);

    char path[] = "/tmp/fy_sha256_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    CHECK(write(fd, "abc", 3) == 3);
    close(fd);
    uint64_t size = 0;
    fy_error err = {0};
    CHECK(fy_sha256_file(path, hex, &size, &err) == 0 && size == 3);
    CHECK(!strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    unlink(path);
    CHECK(fy_sha256_file(path, hex, &size, &err) == FY_ENOTFOUND && strstr(err.msg, path));
}

int main(void)
{
    test_builtin();
    test_models_root();
    test_parse();
    test_sha256();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
