/* api_deepl_document.c - DeepL's document API (v2) over the document jobs
 * (translate/jobs.h), as deepl-node's translateDocument (uploadDocument,
 * getDocumentStatus, downloadDocument) and deepl-python call it:
 *
 *   POST /v2/document              multipart: file, target_lang, source_lang,
 *                                  filename, output_format, formality,
 *                                  glossary_id -> {"document_id", "document_key"}
 *   POST /v2/document/ID           document_key (form or JSON) -> {"document_id",
 *                                  "status": queued | translating (with
 *                                  seconds_remaining) | done (with
 *                                  billed_characters) | error (error_message)}
 *   POST /v2/document/ID/result    document_key -> the translated file; the
 *                                  document is deleted then, as DeepL does
 *
 * Ids are 32 upper-case hex digits (the job's id), keys 64. A wrong key is
 * an unknown document: 404 {"message": "Document not found"}; a download
 * before the document is done is a 503 (deepl-node's DocumentNotReadyError).
 * A document already in the target language is a document in error
 * ("Source and target language are equal."), as on DeepL. Registered before
 * api_deepl.c's descriptor, in DeepL's error shape (a missing key: 403).
 */
#include "server/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define BASE "/v2/document"

/* ---- glossaries ---------------------------------------------------------------------
 *
 * DeepL's glossary_id (or glossary_ids, comma-separated) names glossaries
 * made with /v2 or /v3 glossaries. Each is looked up now for the
 * document's direction (an id the store lacks: 404, as DeepL answers) and
 * the ids are kept with the job (spec->glossary), which compiles them
 * whenever it starts. */
static int document_glossary(req *r, const upload *u, const langs *lg, fy_job_spec *spec, char *ids,
                             size_t cap)
{
    const char *one = upload_field(u, "glossary_id"), *many = upload_field(u, "glossary_ids");
    if ((!one || !*one) && (!many || !*many)) return 0;
    if (one && *one && many && *many)
        return reply_error(r, 400, "glossary_id and glossary_ids cannot be used together"), -1;
    if (!lg->src[0])
        return reply_error(r, 400,
                           "Use of a glossary requires the source_lang parameter to be set"),
               -1;
    const char *field = one && *one ? "glossary_id" : "glossary_ids",
               *list = one && *one ? one : many;
    if (strlen(list) >= cap)
        return reply_error(r, 400, "Value for '%s' not supported: too many glossaries", field), -1;
    fy_glossary_meta *m = malloc(sizeof *m); /* big: not on the stack */
    if (!m) return reply_error(r, 500, "out of memory"), -1;
    int rc = 0;
    for (const char *p = list; *p && !rc; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        size_t n = strcspn(p, ",");
        char id[FY_GSTORE_ID_MAX];
        fy_error err = {0};
        if (!n) continue;
        snprintf(id, sizeof id, "%.*s", (int)(n < sizeof id ? n : sizeof id - 1), p);
        int known = n < sizeof id && r->srv->o.glossaries &&
                    !fy_glossary_store_meta(r->srv->o.glossaries, id, m, &err);
        if (!known) {
            reply_error(r, 404, "Glossary not found: no glossary has the id '%.80s' on this server",
                        id);
            rc = -1;
        } else {
            rc = task_glossary_id(r, field, id, lg);
        }
    }
    free(m);
    if (rc) return -1;
    snprintf(ids, cap, "%s", list);
    spec->glossary = ids;
    return 0;
}

/* ---- POST /v2/document ----------------------------------------------------------------- */

static int check_formality(req *r, const char *formality, const char *tgt)
{
    if (!formality || !*formality || !strcmp(formality, "default") ||
        !strcmp(formality, "prefer_more") || !strcmp(formality, "prefer_less"))
        return 0;
    if (!strcmp(formality, "more") || !strcmp(formality, "less"))
        reply_error(r, 400,
                    "'formality' is not supported for target language %.20s (use prefer_more or "
                    "prefer_less to fall back to the default)",
                    tgt);
    else
        reply_error(r, 400, "Value for 'formality' not supported: '%.40s'", formality);
    return -1;
}

static void upper(char *s)
{
    for (; *s; s++)
        if (*s >= 'a' && *s <= 'z') *s = (char)(*s - 'a' + 'A');
}

static enum MHD_Result upload_document(req *r)
{
    upload u = {0};
    langs lg;
    fy_job_spec spec = {.same_is_error = 1};
    char ids[FY_JOB_GLOSSARY_MAX];
    fy_job_info info;
    unsigned char rnd[32];
    char key[65];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        return reply_error(r, 500, "no random numbers for a document key");
    for (int i = 0; i < 32; i++) snprintf(key + 2 * i, 3, "%02X", rnd[i]);
    spec.key = key;
    const char *src = NULL, *tgt = NULL;
    int rc = upload_read(r, &u, 0);
    if (!rc) rc = auth_token(r, upload_field(&u, "auth_key"));
    if (!rc) {
        src = upload_field(&u, "source_lang");
        tgt = upload_field(&u, "target_lang");
        if (!tgt || !*tgt) {
            reply_error(r, 400, "Parameter 'target_lang' not specified");
            rc = -1;
        }
    }
    if (!rc)
        rc = task_langs(r, "source_lang", src && *src ? src : "auto", "target_lang", tgt, 1, &lg);
    if (!rc) rc = check_formality(r, upload_field(&u, "formality"), tgt);
    if (!rc) rc = document_glossary(r, &u, &lg, &spec, ids, sizeof ids);
    if (!rc) rc = doc_output_format(r, &u, upload_field(&u, "output_format"));
    if (!rc) {
        spec.source = lg.src;
        spec.target = lg.tgt;
        rc = doc_submit(r, &u, &spec, NULL, &info);
    }
    upload_free(&u);
    if (rc) return REPLIED(r);
    char id[33];
    memcpy(id, info.id, 33);
    upper(id);
    return reply_json(r, 200, json_pack("{s:s,s:s}", "document_id", id, "document_key", key));
}

/* ---- the document of a request ---------------------------------------------------------- */

/* The job of ID (any case) whose key is the request's document_key. 0, or
 * -1 after the reply (400 no key, 404 no such document or another key). */
static int find_document(req *r, const char *id_in, fy_job_info *info)
{
    json_t *in = api_body(r);
    if (!in) return -1;
    const char *key = json_string_value(json_object_get(in, "document_key"));
    if (!key) key = req_arg(r, "document_key");
    if (!key || !*key) return reply_error(r, 400, "Parameter 'document_key' not specified"), -1;
    if (doc_available(r)) return -1;
    char id[33];
    size_t n = strlen(id_in);
    for (size_t i = 0; i < 32 && i < n; i++) {
        char c = id_in[i];
        id[i] = (char)(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
    }
    id[n < 32 ? n : 32] = '\0';
    fy_error err = {0};
    int rc = n == 32 ? fy_jobs_get(r->srv->jobs, id, info, &err) : FY_ENOTFOUND;
    if (!rc && !(info->key[0] && auth_equal(key, info->key))) rc = FY_ENOTFOUND;
    if (rc == FY_ENOTFOUND) return reply_error(r, 404, "Document not found"), -1;
    if (rc) return reply_error(r, doc_status(rc), "%s", err.msg), -1;
    return 0;
}

/* ---- POST /v2/document/ID ---------------------------------------------------------------- */

static enum MHD_Result document_status(req *r, const char *id)
{
    fy_job_info info;
    if (find_document(r, id, &info)) return REPLIED(r);
    char up[33];
    memcpy(up, info.id, 33);
    upper(up);
    static const char *const shown[] = {"queued", "translating", "done", "error", "error"};
    json_t *o = json_pack("{s:s,s:s}", "document_id", up, "status", shown[info.state]);
    if (!o) return reply_error(r, 500, "out of memory");
    if (info.state == FY_JOB_TRANSLATING) {
        /* Always there while translating, as on DeepL: before anything is
         * measured, a second per ten sentences left. */
        double left = info.seconds_remaining >= 0 ? info.seconds_remaining
                                                  : (double)(info.sentences - info.done) / 10.0;
        json_object_set_new(o, "seconds_remaining", json_integer((json_int_t)(left + 0.999)));
    }
    if (info.state == FY_JOB_DONE)
        json_object_set_new(o, "billed_characters", json_integer((json_int_t)info.chars));
    if (info.state == FY_JOB_ERROR)
        json_object_set_new(o, "error_message", json_string(info.error));
    if (info.state == FY_JOB_CANCELED)
        json_object_set_new(o, "error_message", json_string("the translation was cancelled"));
    return reply_json(r, 200, o);
}

/* ---- POST /v2/document/ID/result ---------------------------------------------------------- */

static enum MHD_Result document_result(req *r, const char *id)
{
    fy_job_info info;
    if (find_document(r, id, &info)) return REPLIED(r);
    if (info.state == FY_JOB_QUEUED || info.state == FY_JOB_TRANSLATING)
        return reply_error(r, 503, "Document not ready: it is %s; check its status first",
                           fy_job_state_name(info.state));
    if (info.state != FY_JOB_DONE)
        return reply_error(r, 400, "Document translation failed: %s",
                           info.state == FY_JOB_ERROR ? info.error : "it was cancelled");
    char *data = NULL;
    size_t len = 0;
    fy_error err = {0};
    int rc = fy_jobs_result(r->srv->jobs, info.id, &data, &len, &info, &err);
    if (rc == FY_ENOTFOUND) return reply_error(r, 404, "Document not found");
    if (rc) return reply_error(r, doc_status(rc), "%s", err.msg);
    enum MHD_Result ret = doc_reply_file(r, data, len, info.mime, info.name);
    /* Downloaded once, then gone (the answer holds its own copy). */
    fy_jobs_remove(r->srv->jobs, info.id, NULL);
    return ret;
}

/* ---- routing ------------------------------------------------------------------------------ */

enum MHD_Result api_deepl_document(req *r)
{
    const char *rest = r->url && !strncmp(r->url, BASE, strlen(BASE)) ? r->url + strlen(BASE) : "";
    if (!*rest || !strcmp(rest, "/")) return upload_document(r);
    rest++;
    size_t n = strcspn(rest, "/");
    char id[64];
    if (n >= sizeof id) return reply_error(r, 404, "Document not found");
    memcpy(id, rest, n);
    id[n] = '\0';
    if (!rest[n]) return document_status(r, id);
    if (!strcmp(rest + n, "/result")) return document_result(r, id);
    return reply_error(r, 404, "Not found: %.100s", r->url);
}

static enum MHD_Result api_deepl_document_method(req *r)
{
    r->allow = "POST, OPTIONS";
    return reply_error(r, 405, "Method not allowed: the document API takes POST only");
}

static const route deepl_document_routes[] = {
    {"POST", "/v2/document/*", "deepl_document", 1, 0, api_deepl_document, &dialect_deepl},
    {"*", "/v2/document/*", "deepl_document", 0, 0, api_deepl_document_method, &dialect_deepl},
};

const dialect dialect_deepl_doc = {"deepl_document",
                                   deepl_document_routes,
                                   sizeof deepl_document_routes / sizeof *deepl_document_routes,
                                   NULL,
                                   NULL,
                                   403};
