/* api_jobs.c - fanyi's document jobs API (translate/jobs.h): a document
 * is submitted and answered at once with its job; the client then polls,
 * cancels, lists and downloads (docs/api.md, "Document jobs").
 *
 *   POST   /documents                the file (multipart part `file`, or the
 *                                    raw body with ?filename=); target, source,
 *                                    bilingual, output_format, client -> 202
 *                                    and the job, Location: /documents/ID
 *   GET    /documents?client=TAG     the jobs submitted with that tag, newest
 *                                    first; without it every job (needs the
 *                                    API token to be set: it lists everyone's)
 *   GET    /documents/ID             the job: state, progress, pages,
 *                                    seconds_remaining, notes, error
 *   GET    /documents/ID/result      the translated file (409 until done)
 *   DELETE /documents/ID             cancels an unfinished job (it stays,
 *                                    canceled); deletes a finished one
 *
 * The id (128 random bits) is the job's capability; every route also needs
 * the API token when one is set. A job made through DeepL's API is only
 * reached with its document key (?key=).
 */
#include "server/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PREFIX "/documents/"

/* ---- the job as JSON ----------------------------------------------------------------- */

static json_t *when(int64_t ms)
{
    if (!ms) return json_null();
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    char buf[32];
    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return json_string(buf);
}

static json_t *notes_json(const char *notes)
{
    json_t *a = json_array();
    for (const char *p = notes; a && *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        json_array_append_new(a, json_stringn(p, n));
        p += n + (nl != NULL);
    }
    return a;
}

static json_t *job_json(const fy_job_info *in)
{
    size_t pct = in->sentences              ? in->done * 100 / in->sentences
                 : in->state == FY_JOB_DONE ? 100
                                            : 0;
    json_t *progress = json_pack("{s:I,s:I,s:I}", "done", (json_int_t)in->done, "total",
                                 (json_int_t)in->sentences, "percent", (json_int_t)pct);
    if (progress && in->pages) {
        json_object_set_new(progress, "pages_done", json_integer((json_int_t)in->pages_done));
        json_object_set_new(progress, "pages", json_integer((json_int_t)in->pages));
    }
    json_t *o = json_pack(
        "{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:b,s:o,s:I,s:I,s:I,s:o,s:o,s:o,s:o,s:o}", "id",
        in->id, "state", fy_job_state_name(in->state), "filename", in->filename, "name", in->name,
        "format", in->format, "content_type", in->mime, "source", in->detected, "target",
        in->target, "direction", in->direction, "bilingual", in->bilingual, "progress",
        progress ? progress : json_null(), "bytes", (json_int_t)in->bytes, "result_bytes",
        (json_int_t)in->result_bytes, "characters", (json_int_t)in->chars, "created",
        when(in->created_ms), "started", when(in->started_ms), "finished", when(in->finished_ms),
        "expires", when(in->expires_ms), "notes", notes_json(in->notes));
    if (!o) return NULL;
    if (in->state == FY_JOB_TRANSLATING && in->seconds_remaining >= 0)
        json_object_set_new(o, "seconds_remaining",
                            json_integer((json_int_t)(in->seconds_remaining + 0.5)));
    if (in->client[0]) json_object_set_new(o, "client", json_string(in->client));
    if (in->state == FY_JOB_DONE) {
        fy_buf url = {0};
        fy_buf_printf(&url, PREFIX "%s/result", in->id);
        if (!url.oom) json_object_set_new(o, "result", json_string(url.p));
        fy_buf_free(&url);
    }
    if (in->state == FY_JOB_ERROR) {
        int status = doc_status(in->code);
        json_object_set_new(o, "error",
                            json_pack("{s:s,s:i,s:s}", "code", http_code_name(status), "status",
                                      status, "message", in->error));
    }
    return o;
}

/* ---- finding a job ---------------------------------------------------------------------- */

/* The id of /documents/ID[/result] into id (lower case); *result: the
 * /result route. 0, or -1 after a 404. */
static int parse_path(req *r, char id[33], int *result)
{
    const char *p =
        r->url && !strncmp(r->url, PREFIX, strlen(PREFIX)) ? r->url + strlen(PREFIX) : "";
    size_t n = strcspn(p, "/");
    const char *rest = p + n;
    *result = !strcmp(rest, "/result");
    int ok = n == 32 && (!*rest || *result);
    for (size_t i = 0; ok && i < 32; i++) {
        char c = p[i];
        ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
        id[i] = (char)(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
    }
    id[32] = '\0';
    if (ok) return 0;
    return reply_error(r, 404,
                       "no such document job: the path is /documents/ID or "
                       "/documents/ID/result, ID 32 hexadecimal digits"),
           -1;
}

/* The job of the request's path, keyed jobs only with their key. 0, or
 * -1 after the reply (404, or the store's error). */
static int find_job(req *r, fy_job_info *info, int *result)
{
    char id[33];
    if (api_auth(r) || doc_available(r) || parse_path(r, id, result)) return -1;
    fy_error err = {0};
    int rc = fy_jobs_get(r->srv->jobs, id, info, &err);
    const char *key = req_arg(r, "key");
    if (!rc && info->key[0] && !(key && auth_equal(key, info->key))) rc = FY_ENOTFOUND;
    if (rc == FY_ENOTFOUND)
        return reply_error(r, 404,
                           "no such document job (it expired after --download-ttl, was deleted, "
                           "or never existed)"),
               -1;
    if (rc) return reply_error(r, doc_status(rc), "%s", err.msg), -1;
    return 0;
}

/* ---- the routes ------------------------------------------------------------------------- */

static int truth(const char *v, int *out)
{
    if (!v || !*v || !strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "no") ||
        !strcmp(v, "off"))
        return *out = 0, 0;
    if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "on"))
        return *out = 1, 0;
    return -1;
}

static int client_ok(const char *c)
{
    size_t n = strlen(c);
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", c[i]))
            return 0;
    return n >= 1 && n <= 64;
}

/* The fields of a submission into spec (strings borrowed from u). -1
 * after a 400. */
static int submit_fields(req *r, const upload *u, fy_job_spec *spec, langs *lg)
{
    const char *src = upload_field(u, "source"), *tgt = upload_field(u, "target");
    const char *bil = upload_field(u, "bilingual"), *client = upload_field(u, "client");
    if (task_langs(r, "source", src && *src ? src : "auto", "target", tgt && *tgt ? tgt : NULL, 0,
                   lg))
        return -1;
    if (truth(bil, &spec->bilingual))
        return reply_error(r, 400, "bilingual is true or false, not '%.40s'", bil), -1;
    if (client && *client && !client_ok(client))
        return reply_error(r, 400,
                           "client is a tag of 1 to 64 letters, digits, '.', '_' or '-' (a "
                           "random one per browser or user)"),
               -1;
    if (doc_output_format(r, u, upload_field(u, "output_format"))) return -1;
    if (doc_glossary(r, u, lg, spec)) return -1;
    spec->source = lg->src;
    spec->target = lg->tgt;
    spec->client = client && *client ? client : NULL;
    return 0;
}

enum MHD_Result api_jobs_submit(req *r)
{
    upload u = {0};
    langs lg;
    fy_job_spec spec = {0};
    fy_job_info info;
    if (upload_read(r, &u, 1) || auth_token(r, upload_field(&u, "api_key")) ||
        submit_fields(r, &u, &spec, &lg) || doc_submit(r, &u, &spec, NULL, &info)) {
        upload_free(&u);
        return REPLIED(r);
    }
    upload_free(&u);
    json_t *body = job_json(&info);
    if (!body) return reply_error(r, 500, "out of memory");
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    if (!text) return reply_error(r, 500, "out of memory");
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(text);
        return MHD_NO;
    }
    char loc[64];
    snprintf(loc, sizeof loc, PREFIX "%s", info.id);
    MHD_add_response_header(resp, "Content-Type", "application/json");
    MHD_add_response_header(resp, "Location", loc);
    return reply_queue(r, 202, resp);
}

static enum MHD_Result api_jobs_list(req *r)
{
    if (api_auth(r) || doc_available(r)) return REPLIED(r);
    const char *client = req_arg(r, "client");
    if (client && !client_ok(client))
        return reply_error(r, 400, "client is a tag of 1 to 64 letters, digits, '.', '_' or '-'");
    if (!client && !r->srv->token)
        return reply_error(r, 403,
                           "listing every document job needs the server's API token "
                           "(--api-token-file): the list would show everyone's; give "
                           "?client=TAG to list the jobs submitted with that tag");
    fy_job_info *list;
    size_t n;
    fy_error err = {0};
    if (fy_jobs_list(r->srv->jobs, client, &list, &n, &err))
        return reply_error(r, doc_status(err.code), "%s", err.msg);
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) json_array_append_new(a, job_json(&list[i]));
    free(list);
    if (!a) return reply_error(r, 500, "out of memory");
    return reply_json(r, 200, json_pack("{s:o}", "documents", a));
}

static enum MHD_Result api_jobs_get(req *r)
{
    fy_job_info info;
    int result;
    if (find_job(r, &info, &result)) return REPLIED(r);
    if (!result) {
        json_t *body = job_json(&info);
        return body ? reply_json(r, 200, body) : reply_error(r, 500, "out of memory");
    }
    if (info.state == FY_JOB_ERROR)
        return reply_error(r, 409, "the document could not be translated: %s", info.error);
    if (info.state != FY_JOB_DONE)
        return reply_error(r, 409,
                           "the document is %s (%zu of %zu sentences): ask again when "
                           "its state is done",
                           fy_job_state_name(info.state), info.done, info.sentences);
    char *data = NULL;
    size_t len = 0;
    fy_error err = {0};
    int rc = fy_jobs_result(r->srv->jobs, info.id, &data, &len, &info, &err);
    if (rc == FY_ENOTFOUND) return reply_error(r, 404, "no such document job (it expired)");
    if (rc) return reply_error(r, doc_status(rc), "%s", err.msg);
    return doc_reply_file(r, data, len, info.mime, info.name);
}

static enum MHD_Result api_jobs_delete(req *r)
{
    fy_job_info info;
    int result;
    if (find_job(r, &info, &result)) return REPLIED(r);
    if (result) {
        r->allow = "GET, HEAD, OPTIONS";
        return reply_error(r, 405, "DELETE /documents/ID cancels or deletes the job itself");
    }
    fy_error err = {0};
    int open = info.state == FY_JOB_QUEUED || info.state == FY_JOB_TRANSLATING;
    if (open) {
        if (fy_jobs_cancel(r->srv->jobs, info.id, &info, &err))
            return reply_error(r, doc_status(err.code), "%s", err.msg);
        json_t *body = job_json(&info);
        if (body && info.state != FY_JOB_CANCELED) /* on another replica: at its next batch */
            json_object_set_new(body, "canceling", json_true());
        return body ? reply_json(r, 200, body) : reply_error(r, 500, "out of memory");
    }
    if (fy_jobs_remove(r->srv->jobs, info.id, &err))
        return reply_error(r, doc_status(err.code), "%s", err.msg);
    return reply_json(r, 200,
                      json_pack("{s:s,s:s,s:b}", "id", info.id, "state",
                                fy_job_state_name(info.state), "deleted", 1));
}

/* ---- the dialect ------------------------------------------------------------------------- */

static const route jobs_routes[] = {
    {"POST", "/documents", "documents", 1, 0, api_jobs_submit, NULL},
    {"GET", "/documents", "documents_list", 1, 0, api_jobs_list, NULL},
    {"GET", "/documents/*", "document_job", 1, 0, api_jobs_get, NULL},
    {"DELETE", "/documents/*", "document_job", 1, 0, api_jobs_delete, NULL},
};

const dialect dialect_jobs = {"jobs",       jobs_routes, sizeof jobs_routes / sizeof *jobs_routes,
                              native_error, NULL,        0};
