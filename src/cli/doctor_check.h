/* doctor_check.h - the clients table run against a server (`fanyi doctor`).
 *
 * web/clients.json, compiled into the binary with the web page, lists every
 * client Fanyi speaks to and the request each sends. The web page's "Connect
 * a plug-in" Test buttons (web/plugins.js) and this module fill those
 * templates and judge the answers by the same rules (docs/api.md, "Connect a
 * plug-in"): one table, two readers, so the page and the operator's command
 * check the same thing.
 */
#ifndef FY_CLI_DOCTOR_CHECK_H
#define FY_CLI_DOCTOR_CHECK_H

#include <jansson.h>

#include "util/error.h"

typedef struct dc_ctx {
    const char *base;      /* "http://host:port[/prefix]", no trailing slash; borrowed */
    const char *token;     /* the API token, "" for none; borrowed */
    const char *src, *tgt; /* the direction, Fanyi's codes (zh, en); borrowed */
    const char *text;      /* a sample in src (dc_sample); borrowed */
    const json_t *table;   /* dc_table's */
    long timeout_ms;       /* per request */
} dc_ctx;

typedef struct dc_result {
    int ok;
    long status;   /* HTTP status, 0 when there was no answer */
    double ms;     /* the request's time */
    char *answer;  /* the translation found (malloc'd), NULL if none */
    char why[640]; /* why it failed ("" when ok) */
} dc_result;

/* The embedded table, parsed (json_decref it). NULL with err when the build's
 * copy is missing or not the table's shape. */
json_t *dc_table(fy_error *err);

/* The table's i-th sample text in lang, or NULL past the last. Borrowed
 * from table. */
const char *dc_sample(const json_t *table, const char *lang, size_t i);

/* The direction to test among pairs (the /version "languages" array of
 * {source, target}): the table's preferred ones first, else the first pair
 * with a sample. 0 with *src and *tgt borrowed from pairs, or -1 when none
 * has a sample. */
int dc_direction(const json_t *table, const json_t *pairs, const char **src, const char **tgt);

/* Sends check (a setup's "check" object) as its client does and judges the
 * answer; out is filled either way (dc_result_free it). 1 passed, 0 failed,
 * a negative FY_E* code when the check itself is malformed (err says why). */
int dc_run(const dc_ctx *ctx, const json_t *check, dc_result *out, fy_error *err);

/* POST /translate's translation of c->text from c->src into c->tgt, with
 * the fields of extra (an object or NULL) added: malloc'd, or NULL with why. */
char *dc_native(const dc_ctx *c, const json_t *extra, char *why, size_t cap);

/* Whether the server takes c->token: POST /translate of an empty text with
 * it (no model runs). The HTTP status, 0 when there was no answer; why says
 * what the server or the connection said when it is not 200. */
long dc_try_token(const dc_ctx *c, char *why, size_t cap);

/* GET base + path: the answer's JSON (json_decref it) and *status, or NULL
 * with why (unreachable, not JSON). */
json_t *dc_get_json(const dc_ctx *ctx, const char *path, long *status, char *why, size_t cap);

/* Frees out's answer; harmless on a zeroed or freed result. */
void dc_result_free(dc_result *out);

#endif
