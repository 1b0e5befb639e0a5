/* cmd_model_fetch.c - `fanyi model fetch`: download a model into the model directory.
 *
 * The library (src/model/fetch.h) does the transfer, checks and atomic
 * install; this file picks the manifest and directory, draws progress
 * (a bar on a terminal, a few plain lines otherwise) and maps errors to the
 * exit codes documented in docs/models.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "model/fetch.h"
#include "model/discover.h"
#include "model/manifest.h"

/* Exit codes beyond cli.h's 0/1/2 (docs/models.md). */
enum { EXIT_NET = 3, EXIT_INTEGRITY = 4, EXIT_REFUSED = 5 };

#define MIB (1024.0 * 1024.0)

typedef struct progress_state {
    int tty, quiet;
    double last_draw; /* elapsed_s of the last line or frame */
    int last_decile;  /* plain mode: the last 10% step printed */
    size_t index;     /* which file the state belongs to */
} progress_state;

/* Spellings the help shows as examples, each printed only when the
 * built-in catalogue has its direction: the help never offers what fetch
 * would refuse. */
static const char *const EXAMPLES[] = {"en-zh", "EN-ZH", "zh-Hans-en", "de-en", "en-ja", "fr-en"};

static void usage(void)
{
    fy_error err;
    fy_manifest *m = fy_manifest_builtin(NULL, &err);
    printf("usage: fanyi model fetch [DIRECTION] [--dir DIR] [--mirror URL] [--manifest FILE]\n"
           "                         [--force] [--no-wait] [--retries N] [--timeout SECONDS]\n"
           "                         [--min-rate BYTES] [--max-attempts N] [--max-time SECONDS]\n"
           "                         [--quiet]\n\n"
           "Downloads the model of DIRECTION (default zh-en) from the catalogue of Firefox\n"
           "Translations models compiled into fanyi (%zu directions: 'fanyi model list\n"
           "--available' lists them), checks every file's size and sha256, and installs the\n"
           "model atomically: it is built beside the installed one and switched to in one\n"
           "rename. DIRECTION is SOURCE-TARGET in any spelling of the languages, e.g.\n",
           m ? fy_manifest_model_count(m) : 0);
    for (size_t i = 0, k = 0; m && i < sizeof EXAMPLES / sizeof *EXAMPLES; i++) {
        const fy_manifest_model *d = fy_manifest_find_direction(m, EXAMPLES[i]);
        if (!d) continue;
        printf("%s%s", k++ ? ", " : "  ", EXAMPLES[i]);
        if (strcmp(d->name, EXAMPLES[i]) && strcasecmp(d->name, EXAMPLES[i]))
            printf(" (= %s)", d->name);
    }
    fy_manifest_free(m);
    printf(".\n\n"
           "  --dir DIR         install as DIR (default: MODELS/DIRECTION, where MODELS is\n"
           "                    $FANYI_MODELS_DIR, else the directory holding\n"
           "                    $FANYI_MODEL_DIR, else ~/.local/share/fanyi/models; zh-en\n"
           "                    goes into $FANYI_MODEL_DIR itself when only that is set)\n"
           "  --mirror URL      download from URL instead of the catalogue's base URL\n"
           "                    (http://, https:// or file://)\n"
           "  --manifest FILE   use a manifest file instead of the built-in catalogue\n"
           "  --force           download again even files that are installed and good\n"
           "  --no-wait         fail at once when another fetch is installing into DIR\n"
           "                    (default: wait for it)\n"
           "  --retries N       resume a dropped download up to N times in a row without\n"
           "                    progress (default 5)\n"
           "  --timeout S       end a request that receives less than --min-rate bytes/s\n"
           "                    over S seconds, then resume (default 30)\n"
           "  --min-rate BYTES  the slowest transfer accepted, in bytes/s (default 1024)\n"
           "  --max-attempts N  requests per file in all (default 20)\n"
           "  --max-time S      give up after S seconds in all, waiting for another fetch\n"
           "                    included; a rerun resumes (default 14400, 4 hours)\n"
           "  --quiet           no progress output\n\n"
           "Exit status: 0 installed (or already installed), 1 other error (disk, manifest,\n"
           "another fetch busy), 2 bad usage (also an unknown direction), 3 network error\n"
           "(also too slow, --max-attempts, --max-time), 4 size or sha256 mismatch (nothing\n"
           "installed), 5 a different file is in the way (use --force).\n");
}

static void format_eta(double s, char *out, size_t cap)
{
    if (s < 0 || s > 99 * 3600) {
        snprintf(out, cap, "--:--");
        return;
    }
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(out, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(out, cap, "%ld:%02ld", t / 60, t % 60);
}

static int term_cols(void)
{
    struct winsize ws;
    if (!ioctl(2, TIOCGWINSZ, &ws) && ws.ws_col >= 40) return ws.ws_col;
    return 80;
}

/* One redrawn line that fits the terminal (a wrapped line breaks the \r trick):
 * "[i/n] NAME [#####.....] 45%  26.8/56.7 MiB  3.10 MiB/s  ETA 0:10". */
static void draw_bar(const fy_fetch_progress *p, double rate)
{
    double frac = p->total ? (double)p->done / (double)p->total : 1.0;
    char head[48], tail[128], eta[32], bar[32];
    format_eta(p->finished ? 0
               : rate > 0  ? (double)(p->total - p->done) / rate
                           : -1,
               eta, sizeof eta);
    int hn = snprintf(head, sizeof head, "[%zu/%zu] ", p->index + 1, p->count);
    int tn =
        snprintf(tail, sizeof tail, " %3d%%  %.1f/%.1f MiB  %.2f MiB/s  ETA %s", (int)(frac * 100),
                 (double)p->done / MIB, (double)p->total / MIB, rate / MIB, eta);
    int avail = term_cols() - 1 - hn - tn - 3; /* " [" and "]" */
    int name_w = (int)strlen(p->name), bar_w = avail - name_w;
    bar_w = bar_w < 10 ? 10 : bar_w > 30 ? 30 : bar_w;
    if (name_w > avail - bar_w) name_w = avail - bar_w < 8 ? 8 : avail - bar_w;
    int fill = (int)(frac * bar_w);
    for (int i = 0; i < bar_w; i++) bar[i] = i < fill ? '#' : '.';
    bar[bar_w] = '\0';
    fprintf(stderr, "\r%s%-*.*s [%s]%s\033[K", head, name_w, name_w, p->name, bar, tail);
    if (p->finished) fputc('\n', stderr);
}

static void on_progress(void *ctx, const fy_fetch_progress *p)
{
    progress_state *s = ctx;
    if (s->quiet) return;
    if (p->index != s->index || (p->elapsed_s < s->last_draw)) {
        s->index = p->index;
        s->last_draw = s->tty ? -1e9 : 0; /* plain: the first line after 5 s */
        s->last_decile = -1;
    }
    double rate = p->elapsed_s > 0.2 ? (double)p->received / p->elapsed_s : 0;
    if (s->tty) {
        if (!p->finished && p->elapsed_s - s->last_draw < 0.1) return;
        s->last_draw = p->elapsed_s;
        draw_bar(p, rate);
        return;
    }
    /* Plain output: a line per 10% at most every 5 s, and one at the end. */
    int decile = p->total ? (int)(p->done * 10 / p->total) : 10;
    if (p->finished) {
        fprintf(stderr, "[%zu/%zu] %s: done, %.1f MiB in %.1f s\n", p->index + 1, p->count, p->name,
                (double)p->total / MIB, p->elapsed_s);
    } else if (decile > s->last_decile && p->elapsed_s - s->last_draw >= 5.0) {
        char eta[32];
        format_eta(rate > 0 ? (double)(p->total - p->done) / rate : -1, eta, sizeof eta);
        fprintf(stderr, "[%zu/%zu] %s: %.1f of %.1f MiB (%d%%), %.2f MiB/s, ETA %s\n", p->index + 1,
                p->count, p->name, (double)p->done / MIB, (double)p->total / MIB, decile * 10,
                rate / MIB, eta);
        s->last_draw = p->elapsed_s;
        s->last_decile = decile;
    }
}

static void on_note(void *ctx, const char *line)
{
    progress_state *s = ctx;
    if (s->quiet) return;
    fprintf(stderr, "%s%s\n", s->tty ? "\r\033[K" : "", line);
}

/* Where a model goes: --dir; else <models root>/<direction name> (never a
 * name taken from its files: zh-Hant models reuse zh's file names); zh-en
 * keeps its old home, $FANYI_MODEL_DIR, when only that is set. */
static char *pick_dir(const char *dir_opt, const char *model)
{
    const char *models = getenv("FANYI_MODELS_DIR"), *one = getenv("FANYI_MODEL_DIR");
    if (dir_opt) return strdup(dir_opt);
    if (!strcmp(model, "zh-en") && !(models && *models) && one && *one) return strdup(one);
    char *root = fy_models_root(NULL);
    if (!root) return NULL;
    size_t n = strlen(root) + strlen(model) + 2;
    char *dir = malloc(n);
    if (dir) snprintf(dir, n, "%s/%s", root, model);
    free(root);
    return dir;
}

/* "no model 'x' ...; closest: a, b, c" as a usage error (status 2). */
static int unknown_model(const fy_manifest *m, const char *name, const char *manifest_path)
{
    const fy_manifest_model *close[5];
    size_t n = fy_manifest_suggest(m, name, close, 5);
    char list[256] = "";
    for (size_t i = 0, at = 0; i < n && at < sizeof list; i++)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "", close[i]->name);
    if (manifest_path)
        return cli_usage_error("model fetch", "the manifest %s has no model '%s'%s%s",
                               manifest_path, name, n ? "; closest: " : "", list);
    return cli_usage_error("model fetch",
                           "no model '%s' in the catalogue; closest: %s (all: fanyi model list "
                           "--available)",
                           name, list);
}

/* After a network failure: the two ways to install the model without that
 * network, with the file names to copy and where to. */
static void offline_hint(const fy_manifest_model *model, const char *dir, const char *mirror)
{
    fprintf(stderr, "fanyi model fetch: without network access, install %s either\n  - by copying ",
            model->name);
    for (size_t i = 0; i < model->nfiles; i++)
        fprintf(stderr, "%s%s", model->files[i].name,
                i + 2 < model->nfiles    ? ", "
                : i + 2 == model->nfiles ? " and "
                                         : "");
    fprintf(stderr,
            " (%.1f MiB,\n    from a machine where 'fanyi model fetch %s' worked) into %s/,\n"
            "    then checking them: fanyi model verify %s\n"
            "  - or from a mirror that holds the catalogue's paths%s:\n"
            "    fanyi model fetch %s --mirror URL   (http://, https:// or file:///PATH/;\n"
            "    docs/models.md, \"Without network access\")\n",
            (double)fy_manifest_model_bytes(model) / MIB, model->name, dir, dir,
            mirror ? " (not this one)" : "", model->name);
}

static int exit_code(int rc, const fy_fetch_result *res)
{
    if (res->refused) return EXIT_REFUSED;
    if (rc == FY_ENET || rc == FY_ETIMEOUT) return EXIT_NET;
    if (rc == FY_EHASH) return EXIT_INTEGRITY;
    return 1;
}

static int run_fetch(const char *name, const char *dir_opt, const char *mirror,
                     const char *manifest_path, fy_fetch_options *o)
{
    fy_error err = {0};
    fy_manifest *m = manifest_path ? fy_manifest_load(manifest_path, mirror, &err)
                                   : fy_manifest_builtin(mirror, &err);
    if (!m) {
        fprintf(stderr, "fanyi model fetch: %s\n", err.msg);
        return 1;
    }
    const fy_manifest_model *model = fy_manifest_find_direction(m, name);
    if (!model) {
        int rc = unknown_model(m, name, manifest_path);
        fy_manifest_free(m);
        return rc;
    }
    char *dir = pick_dir(dir_opt, model->name);
    int status = 1;
    fy_fetch_result res = {0};
    if (!dir) {
        fprintf(stderr, "fanyi model fetch: no directory to install into (set HOME, "
                        "FANYI_MODELS_DIR or --dir)\n");
        goto done;
    }
    uint64_t total = 0;
    for (size_t i = 0; i < model->nfiles; i++) total += model->files[i].size;
    progress_state *s = o->ctx;
    if (!s->quiet)
        fprintf(stderr, "fetching %s %s (%zu files, %.1f MiB) into %s\n", model->name,
                model->version, model->nfiles, (double)total / MIB, dir);
    int rc = fy_fetch_model(model, dir, o, &res, &err);
    /* A synthetic model that ./scripts/run.sh --synth or fanyi model synth
     * wrote in a plain directory stands in for this one until it is
     * fetched: replace it (random weights, which model synth makes again
     * from its seed). One fetch installed (its link into the store) or a
     * link of the user's is kept unless --force, like any other files. */
    struct stat st;
    if (rc && res.refused && !o->force && lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
        cli_model_is_synthetic(dir)) {
        fprintf(stderr, "%s holds a synthetic model (fanyi model synth): replacing it\n", dir);
        o->force = 1;
        memset(&res, 0, sizeof res);
        rc = fy_fetch_model(model, dir, o, &res, &err);
    }
    if (rc) {
        fprintf(stderr, "fanyi model fetch: %s\n", err.msg);
        status = exit_code(rc, &res);
        if (status == EXIT_NET && !manifest_path) offline_hint(model, dir, mirror);
        goto done;
    }
    if (res.installed)
        printf("installed %s %s into %s (%zu downloaded, %zu already present)\n", model->name,
               model->version, dir, res.installed, res.skipped);
    else
        printf("%s %s is already installed in %s (all %zu files verified)\n", model->name,
               model->version, dir, res.skipped);
    status = 0;
done:
    free(dir);
    fy_manifest_free(m);
    return status;
}

/* Test hooks (tests/modelmgmt): fault injection and short delays, never
 * set in normal use (fetch.h, fy_fetch_options). */
static void test_hooks(fy_fetch_options *o)
{
    const char *v;
    o->test_kill_at = getenv("FANYI_TEST_FETCH_KILL");
    o->test_fail_at = getenv("FANYI_TEST_FETCH_FAIL");
    if ((v = getenv("FANYI_TEST_FETCH_FREE_BYTES"))) o->test_free_bytes = strtoull(v, NULL, 10);
    if ((v = getenv("FANYI_TEST_FETCH_RETRY_DELAY_MS"))) o->retry_delay_ms = strtol(v, NULL, 10);
}

enum { OPT_NO_WAIT = 256, OPT_MIN_RATE, OPT_MAX_ATTEMPTS, OPT_MAX_TIME };

int cmd_model_fetch(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"dir", required_argument, NULL, 'd'},
        {"mirror", required_argument, NULL, 'm'},
        {"manifest", required_argument, NULL, 'M'},
        {"force", no_argument, NULL, 'f'},
        {"no-wait", no_argument, NULL, OPT_NO_WAIT},
        {"retries", required_argument, NULL, 'r'},
        {"timeout", required_argument, NULL, 't'},
        {"min-rate", required_argument, NULL, OPT_MIN_RATE},
        {"max-attempts", required_argument, NULL, OPT_MAX_ATTEMPTS},
        {"max-time", required_argument, NULL, OPT_MAX_TIME},
        {"quiet", no_argument, NULL, 'q'},
        {0}};
    const char *dir = NULL, *mirror = NULL, *manifest = NULL;
    progress_state state = {.tty = isatty(2), .index = (size_t)-1};
    fy_fetch_options o;
    fy_fetch_options_default(&o);
    test_hooks(&o);
    o.progress = on_progress;
    o.note = on_note;
    o.ctx = &state;
    long v;
    int c;
    while ((c = cli_getopt(argc, argv, "model fetch", "hd:m:M:fr:t:q", opts)) != -1) {
        switch (c) {
        case 'h':
            usage();
            return 0;
        case 'd':
            dir = optarg;
            break;
        case 'm':
            mirror = optarg;
            break;
        case 'M':
            manifest = optarg;
            break;
        case 'f':
            o.force = 1;
            break;
        case 'q':
            state.quiet = 1;
            break;
        case OPT_NO_WAIT:
            o.no_wait = 1;
            break;
        case 'r':
            if (cli_parse_long("model fetch", "--retries", optarg, 0, 100, &v)) return 2;
            o.retries = (int)v;
            break;
        case 't':
            if (cli_parse_long("model fetch", "--timeout", optarg, 1, 3600, &v)) return 2;
            o.rate_window_s = v;
            o.connect_timeout_s = v < o.connect_timeout_s ? v : o.connect_timeout_s;
            break;
        case OPT_MIN_RATE:
            if (cli_parse_long("model fetch", "--min-rate", optarg, 1, 1L << 30, &v)) return 2;
            o.min_bytes_per_s = v;
            break;
        case OPT_MAX_ATTEMPTS:
            if (cli_parse_long("model fetch", "--max-attempts", optarg, 1, 1000, &v)) return 2;
            o.max_attempts = (int)v;
            break;
        case OPT_MAX_TIME:
            if (cli_parse_long("model fetch", "--max-time", optarg, 1, 7 * 86400, &v)) return 2;
            o.max_time_s = v;
            break;
        default:
            return 2;
        }
    }
    const char *name = "zh-en";
    if (optind < argc) name = argv[optind++];
    if (optind < argc)
        return cli_usage_error("model fetch", "unexpected argument '%s'", argv[optind]);
    return run_fetch(name, dir, mirror, manifest, &o);
}
