/* cmd_doctor.c - `fanyi doctor [--clients] [URL]`: checks a running server
 * from outside, as an operator would after a deployment (behind a proxy
 * too): it answers, it is ready, its directions and token; with --clients,
 * every client of the web page's "Connect a plug-in" list sends its own
 * request (doctor_check.c) and must get the server's translation back. */
#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/doctor_check.h"
#include "util/buf.h"

typedef struct doctor {
    const char *url, *token, *token_file, *from, *to;
    int clients;
    long timeout_s;
    char base[1024];
    char token_buf[512];
    int checks, passed;
    int token_ok; /* the server takes the token, or needs none */
} doctor;

static void usage(void)
{
    printf("usage: fanyi doctor [--clients] [--token T | --token-file FILE] [--from L --to L]\n"
           "                    [--timeout S] [URL]\n\n"
           "Checks a running fanyi server from outside (directly, or through the proxy in\n"
           "front of it): it answers (/health), it is ready (/ready), its version,\n"
           "directions and token (/version). With --clients, every client of the web page's\n"
           "\"Connect a plug-in\" list (Immersive Translate, Kiss Translator, pot, Bob,\n"
           "openai-translator, Selection Translator, Zotero PDF Translate, the DeepL and\n"
           "Google SDKs, LibreTranslate clients, DeepLX plug-ins) sends its own request and\n"
           "must get the server's translation back. Each check is printed with its name.\n\n"
           "  URL                 the server (default http://127.0.0.1:8989)\n"
           "  --clients           run the plug-in checks too\n"
           "  --token T           the server's API token (FANYI_API_TOKEN)\n"
           "  --token-file FILE   the token from the first line of FILE (FANYI_API_TOKEN_FILE)\n"
           "  --from L --to L     the direction the plug-in checks translate (default zh->en,\n"
           "                      else en->zh, else the server's first with a sample)\n"
           "  --timeout S         seconds per request (default 30)\n\n"
           "Exit status: 0 every check passed, 1 one failed, 2 bad usage.\n");
}

static void report(doctor *d, int ok, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void report(doctor *d, int ok, const char *name, const char *fmt, ...)
{
    d->checks++;
    d->passed += ok != 0;
    printf("%-4s  %-26s ", ok ? "ok" : "FAIL", name);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

/* At most n characters of s (whole UTF-8 sequences), "…" if cut, into out. */
static const char *clip(const char *s, size_t n, char *out, size_t cap)
{
    size_t i = 0, chars = 0;
    while (s[i] && chars < n) {
        size_t step = 1;
        while ((s[i + step] & 0xC0) == 0x80) step++;
        i += step;
        chars++;
    }
    snprintf(out, cap, "%.*s%s", (int)i, s, s[i] ? "…" : "");
    return out;
}

static int parse(doctor *d, int argc, char **argv)
{
    static const struct option opts[] = {{"clients", no_argument, NULL, 'c'},
                                         {"token", required_argument, NULL, 't'},
                                         {"token-file", required_argument, NULL, 'T'},
                                         {"from", required_argument, NULL, 'f'},
                                         {"to", required_argument, NULL, 'o'},
                                         {"timeout", required_argument, NULL, 'w'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    int c;
    while ((c = cli_getopt(argc, argv, "doctor", "h", opts)) != -1) {
        if (c == 'c')
            d->clients = 1;
        else if (c == 't')
            d->token = optarg;
        else if (c == 'T')
            d->token_file = optarg;
        else if (c == 'f')
            d->from = optarg;
        else if (c == 'o')
            d->to = optarg;
        else if (c == 'w') {
            if (cli_parse_long("doctor", "--timeout", optarg, 1, 3600, &d->timeout_s)) return 2;
        } else if (c == 'h') {
            usage();
            return -1;
        } else {
            return 2;
        }
    }
    if (optind < argc) d->url = argv[optind++];
    if (optind < argc) return cli_usage_error("doctor", "unexpected argument '%s'", argv[optind]);
    if (!d->from != !d->to) return cli_usage_error("doctor", "--from and --to go together");
    if (d->token && d->token_file)
        return cli_usage_error("doctor", "--token and --token-file go alone, not together");
    return 0;
}

/* The token: --token, --token-file, FANYI_API_TOKEN, FANYI_API_TOKEN_FILE; "" for none. */
static int read_token(doctor *d)
{
    const char *file = d->token_file;
    if (!d->token && !file) {
        const char *v = getenv("FANYI_API_TOKEN");
        if (v && *v)
            d->token = v;
        else
            file = getenv("FANYI_API_TOKEN_FILE");
    }
    if (!d->token && file && *file) {
        FILE *f = fopen(file, "r");
        if (!f || !fgets(d->token_buf, sizeof d->token_buf, f)) {
            if (f) fclose(f);
            fprintf(stderr, "fanyi doctor: cannot read the token from %s\n", file);
            return 1;
        }
        fclose(f);
        d->token_buf[strcspn(d->token_buf, "\r\n")] = '\0';
        d->token = d->token_buf;
    }
    if (!d->token) d->token = "";
    return 0;
}

/* base: the URL with a scheme, without a trailing slash. */
static void set_base(doctor *d)
{
    const char *u = d->url ? d->url : "http://127.0.0.1:8989";
    snprintf(d->base, sizeof d->base, "%s%s", strstr(u, "://") ? "" : "http://", u);
    size_t n = strlen(d->base);
    while (n && d->base[n - 1] == '/') d->base[--n] = '\0';
}

/* The token: needed or not, given or not, and taken by the server (a wrong
 * one is named here, not as a failure of every client after it). */
static void token_check(doctor *d, const dc_ctx *ctx, int needed)
{
    d->token_ok = 0;
    if (!needed) {
        d->token_ok = 1;
        report(d, 1, "token", "none required");
    } else if (!*d->token) {
        report(d, 0, "token",
               "this server requires an API token: give it with --token or FANYI_API_TOKEN");
    } else {
        char why[640];
        d->token_ok = dc_try_token(ctx, why, sizeof why) == 200;
        if (d->token_ok)
            report(d, 1, "token", "required, given");
        else
            report(d, 0, "token", "required, the one given is not taken: %s", why);
    }
}

/* /health, /ready, /version and the token. The /version answer (json_decref
 * it), or NULL when the server cannot be used. */
static json_t *server_checks(doctor *d, const dc_ctx *ctx)
{
    char why[512];
    long st;
    json_t *h = dc_get_json(ctx, "/health", &st, why, sizeof why);
    int up = h && st == 200;
    if (up)
        report(d, 1, "server", "%s answers", d->base);
    else if (st)
        report(d, 0, "server", "%s/health answered %ld", d->base, st);
    else
        report(d, 0, "server", "no answer from %s/health: %s", d->base, why);
    json_decref(h);
    if (!up) return NULL;
    json_t *r = dc_get_json(ctx, "/ready", &st, why, sizeof why);
    const char *state = json_string_value(json_object_get(r, "status"));
    report(d, r && st == 200, "ready", "%ld %s", st, state ? state : why);
    json_decref(r);
    json_t *v = dc_get_json(ctx, "/version", &st, why, sizeof why);
    json_t *pairs = json_object_get(v, "languages");
    if (!v || st != 200 || !json_is_array(pairs)) {
        report(d, 0, "version", "no /version answer: %s", v ? "not fanyi's" : why);
        json_decref(v);
        return NULL;
    }
    fy_buf list = {0};
    size_t i;
    json_t *p;
    json_array_foreach(pairs, i, p) fy_buf_printf(&list, "%s%s->%s", i ? ", " : "",
                                                  json_string_value(json_object_get(p, "source")),
                                                  json_string_value(json_object_get(p, "target")));
    char *dirs = fy_buf_take(&list, NULL);
    report(d, json_array_size(pairs) > 0, "version", "fanyi %s, %zu directions: %s",
           json_string_value(json_object_get(v, "version")), json_array_size(pairs),
           dirs ? dirs : "");
    free(dirs);
    token_check(d, ctx, json_is_true(json_object_get(v, "auth_required")));
    return v;
}

/* The first sample of the direction's source the server translates to
 * something (a synthetic model makes nothing of some sentences). 0, or -1
 * after a failed check. */
static int pick_sample(doctor *d, dc_ctx *ctx, const json_t *table)
{
    char why[640] = "";
    for (size_t i = 0; (ctx->text = dc_sample(table, ctx->src, i)); i++) {
        char *t = dc_native(ctx, NULL, why, sizeof why);
        int some = t && *t;
        free(t);
        if (!t) break;
        if (some) {
            report(d, 1, "direction", "%s->%s: \"%s\"", ctx->src, ctx->tgt, ctx->text);
            return 0;
        }
    }
    if (why[0])
        report(d, 0, "direction", "%s->%s: %s", ctx->src, ctx->tgt, why);
    else
        report(d, 0, "direction",
               "%s->%s: the table has no sample the server translates to "
               "something",
               ctx->src, ctx->tgt);
    return -1;
}

/* Every setup of every client in the table, in the chosen direction. */
static void client_checks(doctor *d, dc_ctx *ctx, const json_t *table, const json_t *pairs)
{
    const char *src = d->from, *tgt = d->to;
    if (!src && dc_direction(table, pairs, &src, &tgt)) {
        report(d, 0, "direction", "no direction of this server has a sample in the table");
        return;
    }
    ctx->src = src;
    ctx->tgt = tgt;
    if (pick_sample(d, ctx, table)) return;
    char shown[200], name[96];
    size_t i, k;
    const json_t *c, *s;
    json_array_foreach(json_object_get(table, "clients"), i, c)
    {
        const char *cname = json_string_value(json_object_get(c, "name"));
        json_array_foreach(json_object_get(c, "setups"), k, s)
        {
            snprintf(name, sizeof name, "%s/%s", json_string_value(json_object_get(c, "id")),
                     json_string_value(json_object_get(s, "id")));
            dc_result r;
            fy_error err = {0};
            int rc = dc_run(ctx, json_object_get(s, "check"), &r, &err);
            if (rc < 0)
                report(d, 0, name, "%s: %s", cname, err.msg);
            else if (rc)
                report(d, 1, name, "%s: \"%s\" (%.0f ms)", cname,
                       clip(r.answer, 60, shown, sizeof shown), r.ms);
            else
                report(d, 0, name, "%s: %s", cname, r.why);
            dc_result_free(&r);
        }
    }
}

int cmd_doctor(int argc, char **argv)
{
    doctor d = {.timeout_s = 30};
    int rc = parse(&d, argc, argv);
    if (rc) return rc < 0 ? 0 : rc;
    if (read_token(&d)) return 1;
    set_base(&d);
    fy_error err = {0};
    json_t *table = d.clients ? dc_table(&err) : NULL;
    if (d.clients && !table) {
        fprintf(stderr, "fanyi doctor: %s\n", err.msg);
        return 1;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    dc_ctx ctx = {
        .base = d.base, .token = d.token, .table = table, .timeout_ms = d.timeout_s * 1000};
    json_t *v = server_checks(&d, &ctx);
    if (v && d.clients && d.token_ok)
        client_checks(&d, &ctx, table, json_object_get(v, "languages"));
    else if (v && d.clients)
        printf("      (the plug-in checks need a token the server takes)\n");
    printf("%d of %d checks passed\n", d.passed, d.checks);
    json_decref(v);
    json_decref(table);
    curl_global_cleanup();
    return d.passed == d.checks ? 0 : 1;
}
