/* cmd_serve.c - `fanyi serve`: find the directions (a models directory, or
 * one model directory), start the scheduler's workers and the HTTP server,
 * print one ready line, and on SIGTERM/SIGINT drain (finish what is in
 * flight, up to 10 s) and exit 0. With --model the model is loaded before
 * the ready line; with --models each loads on its first request. The
 * sentence cache is the memory LRU (--cache-mb), Redis (--redis), or both
 * as tiers: memory first. What users store lives in one data directory
 * (--data-dir): document jobs in DIR/jobs, or in Redis with --redis (shared
 * by the replicas; the unfinished ones of an earlier run are resumed), and
 * glossaries in DIR/glossaries (and Redis with --redis). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "model/discover.h"
#include "nn/backend.h"
#include "nn/par.h"
#include "server/server.h"
#include "translate/cache.h"
#include "translate/cache_redis.h"
#include "translate/glossary_store.h"
#include "translate/jobs.h"
#include "translate/scheduler.h"
#include "translate/models.h"
#include "translate/translator.h"

#define CMD "serve"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fanyi serve [--models DIR | --model DIR] [--models-memory MB]\n"
            "                   [--host ADDR] [--port N] [--threads N] [--express-threads N]\n"
            "                   [--helper-threads N]\n"
            "                   [--device SPEC] [--gpu-threads N] [--device-memory MB]\n"
            "                   [--api-token-file FILE | --api-token T] [--cache-mb N]\n"
            "                   [--max-chars N] [--beam N] [--max-beam N]\n"
            "                   [--max-batch-items N] [--queue N] [--timeout-ms N]\n"
            "                   [--cors-origin ORIGIN] [--max-connections N]\n"
            "                   [--max-connections-per-ip N] [--idle-timeout S]\n"
            "                   [--read-timeout S] [--drain-timeout S]\n"
            "                   [--request-memory MB] [--tls-cert FILE --tls-key FILE]\n"
            "                   [--redis URL] [--redis-ttl S] [--redis-timeout-ms MS]\n"
            "                   [--max-document-mb N] [--max-document-chars N]\n"
            "                   [--data-dir DIR] [--jobs-store-mb N] [--jobs-parallel N]\n"
            "                   [--jobs-lease-s S] [--jobs-batch-chars N] [--download-ttl S]\n"
            "                   [--openai-models any|strict] [--quiet]\n\n"
            "Runs the HTTP translation service (native, LibreTranslate, DeepL, DeepLX,\n"
            "Google v2, Immersive Translate and Kiss Translator APIs; see docs/api.md).\n\n"
            "  --models DIR         directory of model directories named SRC-TGT (zh-en,\n"
            "                       en-zh, zh-Hant-en, ...): every one is a direction, loaded\n"
            "                       on its first request (FANYI_MODELS_DIR; default\n"
            "                       ~/.local/share/fanyi/models)\n"
            "  --model DIR          serve this one model directory instead, loaded at start;\n"
            "                       its direction from its name (SRC-TGT) or its files\n"
            "                       (model.enzh.* -> en->zh) (FANYI_MODEL_DIR)\n"
            "  --models-memory MB   memory the loaded models may take; past it the least\n"
            "                       recently used idle ones are unloaded; 0 = no limit\n"
            "                       (FANYI_MODELS_MEMORY; 0)\n"
            "  --host ADDR          address to listen on (FANYI_HOST; default 127.0.0.1)\n"
            "  --port N             port, 0 for any free one (FANYI_PORT; default 8989)\n"
            "  --threads N          translation workers on the CPU (FANYI_THREADS; default:\n"
            "                       CPU cores)\n"
            "  --device SPEC        where to translate: auto (every GPU found, else the CPU),\n"
            "                       cpu, vulkan (every Vulkan device), vulkan:N, or a list\n"
            "                       (cpu,vulkan:0); several GPUs share the queue (data\n"
            "                       parallel); a device that fails gives its work back\n"
            "                       (FANYI_DEVICE; auto; see fanyi devices)\n"
            "  --gpu-threads N      workers per GPU (FANYI_GPU_THREADS; 2)\n"
            "  --device-memory MB   GPU memory models may take on each GPU; 0 = 90%% of it\n"
            "                       (FANYI_DEVICE_MEMORY; 0)\n"
            "  --helper-threads N   threads that join a CPU worker's matrix products while\n"
            "                       fewer than --threads workers compute: one request on\n"
            "                       a quiet server uses more than one core; under full\n"
            "                       load they sleep (FANYI_HELPER_THREADS; default:\n"
            "                       threads - 1, at most 3; 0 = none)\n"
            "  --express-threads N  more workers only for small requests (at most 4\n"
            "                       sentences) and streams' first sentences while a big\n"
            "                       request's batch runs, so these do not wait behind it\n"
            "                       (FANYI_EXPRESS_THREADS; 1)\n"
            "  --api-token-file FILE  require the token in FILE (its first line) on\n"
            "                       translation endpoints (FANYI_API_TOKEN_FILE)\n"
            "  --api-token T        the same with the token itself (FANYI_API_TOKEN); on\n"
            "                       the command line every local user can read it\n"
            "                       (FANYI_API_TOKEN)\n"
            "  --cache-mb N         sentence cache size, 0 disables (FANYI_CACHE_MB; 64)\n"
            "  --max-chars N        characters per request (FANYI_MAX_CHARS; 5000)\n"
            "  --beam N             beam search width of requests that do not ask one; 1 is\n"
            "                       greedy, the fastest (FANYI_BEAM; 1)\n"
            "  --max-beam N         the largest beam a request may ask (it gets at most N - 1\n"
            "                       alternatives), 1 .. 16 (FANYI_MAX_BEAM; 4)\n"
            "  --max-batch-items N  texts per request (FANYI_MAX_BATCH_ITEMS; 128)\n"
            "  --queue N            sentences that may wait; more -> 503 (FANYI_QUEUE; 1024)\n"
            "  --timeout-ms N       per-request deadline; later -> 504 (FANYI_TIMEOUT_MS; 30000)\n"
            "  --cors-origin ORIGIN CORS headers for ORIGIN (e.g. *) on every route; '' for none\n"
            "                       (default: LibreTranslate's routes, any origin) "
            "(FANYI_CORS_ORIGIN)\n"
            "  --max-connections N  open connections (FANYI_MAX_CONNECTIONS; 1024)\n"
            "  --max-connections-per-ip N  per client address, 0 = no limit\n"
            "                       (FANYI_MAX_CONNECTIONS_PER_IP; 512)\n"
            "  --idle-timeout S     close a connection idle this many seconds\n"
            "                       (FANYI_IDLE_TIMEOUT; 15)\n"
            "  --read-timeout S     close a connection whose request (headers and body) has\n"
            "                       not fully arrived within S seconds of the connection\n"
            "                       opening or its previous request ending; 0 = never\n"
            "                       (FANYI_READ_TIMEOUT; 30)\n"
            "  --drain-timeout S    on SIGTERM, wait up to S seconds for requests in flight\n"
            "                       before cutting them short (FANYI_DRAIN_TIMEOUT; 10)\n"
            "  --request-memory MB  memory the requests in progress may take in all (their\n"
            "                       bodies and what is built from them); past it a request\n"
            "                       with a body gets 503 (FANYI_REQUEST_MEMORY; 256)\n"
            "  --tls-cert FILE      serve HTTPS only, with this PEM certificate (chain)\n"
            "                       (FANYI_TLS_CERT)\n"
            "  --tls-key FILE       the certificate's PEM private key, unencrypted\n"
            "                       (FANYI_TLS_KEY)\n"
            "  --redis URL          share translations with other replicas through Redis:\n"
            "                       redis://[:PASSWORD@]HOST:PORT[/DB]; asked after the\n"
            "                       memory cache; while it is down the engine answers\n"
            "                       (FANYI_REDIS; on the command line a password is\n"
            "                       visible to every local user: use FANYI_REDIS)\n"
            "  --redis-ttl S        expiry of what is stored in Redis, 0 = none\n"
            "                       (FANYI_REDIS_TTL; 604800 = 7 days)\n"
            "  --redis-timeout-ms MS  longest wait for Redis per lookup; slower counts\n"
            "                       as an error (FANYI_REDIS_TIMEOUT_MS; 50)\n"
            "  --max-document-mb N  size of a document to translate (POST /translate_file,\n"
            "                       /translate/document) (FANYI_MAX_DOCUMENT_MB; 20)\n"
            "  --max-document-chars N  characters of text in one document\n"
            "                       (FANYI_MAX_DOCUMENT_CHARS; 500000)\n"
            "  --data-dir DIR       where the server keeps what users store: document jobs\n"
            "                       in DIR/jobs (uploads, checkpoints, translated files, so\n"
            "                       that a restarted server resumes them; with --redis they\n"
            "                       are kept in Redis instead) and glossaries in\n"
            "                       DIR/glossaries (with --redis, in Redis as well)\n"
            "                       (FANYI_DATA_DIR; ~/.local/share/fanyi)\n"
            "  --jobs-store-mb N    the most the document jobs' store holds; a document that\n"
            "                       does not fit gets 507 (FANYI_JOBS_STORE_MB; 1024; the older\n"
            "                       name --download-store-mb works too)\n"
            "  --jobs-parallel N    document jobs translated at once by this server, at a\n"
            "                       lower priority than requests (FANYI_JOBS_PARALLEL; 2)\n"
            "  --jobs-lease-s S     with --redis: a running job's lease; a replica that dies\n"
            "                       loses its jobs to the others this long after\n"
            "                       (FANYI_JOBS_LEASE_S; 30)\n"
            "  --jobs-batch-chars N a document job's batch (and checkpoint), in characters of\n"
            "                       text (FANYI_JOBS_BATCH_CHARS; 4000)\n"
            "  --download-ttl S     keep a finished document (its translated file) this long,\n"
            "                       then delete it (FANYI_DOWNLOAD_TTL; 86400)\n"
            "  --openai-models any|strict  any: a model name the OpenAI-compatible API does\n"
            "                       not know (gpt-4o-mini...) is served as \"fanyi\", the\n"
            "                       prompt saying the direction; strict: 404 for it\n"
            "                       (FANYI_OPENAI_MODELS; any)\n"
            "  --quiet              no per-request log lines on stderr\n");
}

typedef struct serve_config {
    const char *model, *models, *host, *token, *token_file, *cors, *redis, *device, *openai_models;
    const char *data_dir;
    char token_buf[512]; /* the token read from token_file */
    const char *tls_cert_file, *tls_key_file;
    char *tls_cert, *tls_key; /* their contents (malloc'd) */
    long port, threads, express, cache_mb, max_chars, max_items, queue, timeout_ms, max_conn,
        max_per_ip;
    long models_mb, gpu_threads, device_mb, helpers;
    long idle_timeout, read_timeout, drain_timeout, request_mb;
    long beam, max_beam;
    long redis_ttl, redis_timeout_ms;
    long doc_mb, doc_chars, download_ttl, jobs_mb, jobs_parallel, jobs_lease_s, jobs_batch;
    int quiet;
} serve_config;

/* A numeric setting: the environment first, the command line overrides. */
typedef struct numopt {
    const char *flag, *env;
    long min, max;
    long *value;
} numopt;

static int read_env(const numopt *opts, size_t n, serve_config *c)
{
    for (size_t i = 0; i < n; i++) {
        const char *v = getenv(opts[i].env);
        if (v && *v && cli_parse_long(CMD, opts[i].env, v, opts[i].min, opts[i].max, opts[i].value))
            return 2;
    }
    const char *v;
    if ((v = getenv("FANYI_HOST")) && *v) c->host = v;
    if ((v = getenv("FANYI_MODEL_DIR")) && *v) c->model = v;
    if ((v = getenv("FANYI_MODELS_DIR")) && *v) c->models = v;
    if ((v = getenv("FANYI_API_TOKEN")) && *v) c->token = v;
    if ((v = getenv("FANYI_API_TOKEN_FILE")) && *v) c->token_file = v;
    if ((v = getenv("FANYI_CORS_ORIGIN"))) c->cors = v; /* "" turns CORS off */
    if ((v = getenv("FANYI_REDIS")) && *v) c->redis = v;
    if ((v = getenv("FANYI_DEVICE")) && *v) c->device = v;
    if ((v = getenv("FANYI_TLS_CERT")) && *v) c->tls_cert_file = v;
    if ((v = getenv("FANYI_TLS_KEY")) && *v) c->tls_key_file = v;
    if ((v = getenv("FANYI_OPENAI_MODELS")) && *v) c->openai_models = v;
    if ((v = getenv("FANYI_DATA_DIR")) && *v) c->data_dir = v;
    return 0;
}

/* The token of --api-token-file: the file's first line, without the line
 * break and surrounding white space. 0, or 2 after a message. */
static int read_token(serve_config *c)
{
    FILE *f = fopen(c->token_file, "r");
    if (!f) {
        fprintf(stderr, "fanyi serve: %s: cannot read the API token: %s\n", c->token_file,
                strerror(errno));
        return 2;
    }
    char *line = fgets(c->token_buf, sizeof c->token_buf, f);
    fclose(f);
    size_t n = line ? strlen(line) : 0;
    if (n == sizeof c->token_buf - 1 && line[n - 1] != '\n') {
        fprintf(stderr, "fanyi serve: %s: the token is longer than %zu bytes\n", c->token_file,
                sizeof c->token_buf - 2);
        return 2;
    }
    while (n && strchr(" \t\r\n", line[n - 1])) line[--n] = '\0';
    while (line && (*line == ' ' || *line == '\t')) line++, n--;
    if (!n) {
        fprintf(stderr, "fanyi serve: %s: the file holds no token\n", c->token_file);
        return 2;
    }
    c->token = line;
    return 0;
}

/* The text of a PEM file (what: "certificate", "key") into *out
 * (malloc'd). 0, or 2 after a message. */
static int read_pem(const char *path, const char *what, char **out)
{
    enum { PEM_MAX = 1 << 20 }; /* a chain of certificates is a few KiB */
    FILE *f = fopen(path, "rb");
    char *text = f ? malloc(PEM_MAX + 1) : NULL;
    size_t n = text ? fread(text, 1, PEM_MAX + 1, f) : 0;
    int failed = f && ferror(f), error = errno;
    if (f) fclose(f);
    const char *why = !f                            ? strerror(error)
                      : !text                       ? "out of memory"
                      : failed                      ? strerror(error)
                      : n > PEM_MAX                 ? "larger than 1 MiB"
                      : memchr(text, '\0', n) || !n ? "not a PEM file"
                                                    : NULL;
    if (why) {
        fprintf(stderr, "fanyi serve: %s: cannot use it as the TLS %s: %s\n", path, what, why);
        free(text);
        return 2;
    }
    text[n] = '\0';
    *out = text;
    return 0;
}

static int read_tls(serve_config *c)
{
    if (!c->tls_cert_file != !c->tls_key_file)
        return cli_usage_error(CMD, "--tls-cert and --tls-key go together (HTTPS needs both)");
    if (!c->tls_cert_file) return 0;
    return read_pem(c->tls_cert_file, "certificate", &c->tls_cert) ||
                   read_pem(c->tls_key_file, "key", &c->tls_key)
               ? 2
               : 0;
}

static int parse_args(int argc, char **argv, serve_config *c)
{
    const numopt opts[] = {
        {"--port", "FANYI_PORT", 0, 65535, &c->port},
        {"--threads", "FANYI_THREADS", 1, 1024, &c->threads},
        {"--express-threads", "FANYI_EXPRESS_THREADS", 0, 64, &c->express},
        {"--helper-threads", "FANYI_HELPER_THREADS", 0, FY_PAR_MAX_HELPERS, &c->helpers},
        {"--cache-mb", "FANYI_CACHE_MB", 0, 1 << 20, &c->cache_mb},
        {"--max-chars", "FANYI_MAX_CHARS", 1, 10000000, &c->max_chars},
        {"--max-batch-items", "FANYI_MAX_BATCH_ITEMS", 1, 100000, &c->max_items},
        {"--queue", "FANYI_QUEUE", 1, 10000000, &c->queue},
        {"--timeout-ms", "FANYI_TIMEOUT_MS", 1, 3600000, &c->timeout_ms},
        {"--max-connections", "FANYI_MAX_CONNECTIONS", 1, 100000, &c->max_conn},
        {"--max-connections-per-ip", "FANYI_MAX_CONNECTIONS_PER_IP", 0, 100000, &c->max_per_ip},
        {"--idle-timeout", "FANYI_IDLE_TIMEOUT", 1, 86400, &c->idle_timeout},
        {"--read-timeout", "FANYI_READ_TIMEOUT", 0, 86400, &c->read_timeout},
        {"--models-memory", "FANYI_MODELS_MEMORY", 0, 1 << 24, &c->models_mb},
        {"--drain-timeout", "FANYI_DRAIN_TIMEOUT", 0, 3600, &c->drain_timeout},
        {"--request-memory", "FANYI_REQUEST_MEMORY", 1, 1 << 20, &c->request_mb},
        {"--beam", "FANYI_BEAM", 1, FY_BEAM_MAX, &c->beam},
        {"--max-beam", "FANYI_MAX_BEAM", 1, FY_BEAM_MAX, &c->max_beam},
        {"--redis-ttl", "FANYI_REDIS_TTL", 0, 1L << 30, &c->redis_ttl},
        {"--redis-timeout-ms", "FANYI_REDIS_TIMEOUT_MS", 1, 60000, &c->redis_timeout_ms},
        {"--max-document-mb", "FANYI_MAX_DOCUMENT_MB", 1, 4096, &c->doc_mb},
        {"--max-document-chars", "FANYI_MAX_DOCUMENT_CHARS", 1, 100000000, &c->doc_chars},
        {"--download-ttl", "FANYI_DOWNLOAD_TTL", 1, 31 * 86400, &c->download_ttl},
        {"--download-store-mb", "FANYI_DOWNLOAD_STORE_MB", 1, 1 << 24, &c->jobs_mb},
        {"--jobs-store-mb", "FANYI_JOBS_STORE_MB", 1, 1 << 24, &c->jobs_mb},
        {"--jobs-parallel", "FANYI_JOBS_PARALLEL", 1, 64, &c->jobs_parallel},
        {"--jobs-lease-s", "FANYI_JOBS_LEASE_S", 1, 3600, &c->jobs_lease_s},
        {"--jobs-batch-chars", "FANYI_JOBS_BATCH_CHARS", 100, 1000000, &c->jobs_batch},
        {"--gpu-threads", "FANYI_GPU_THREADS", 1, 64, &c->gpu_threads},
        {"--device-memory", "FANYI_DEVICE_MEMORY", 0, 1 << 24, &c->device_mb},
    };
    enum { NNUM = sizeof opts / sizeof *opts, NUM = 1000 }; /* getopt values of opts[] */
    static const struct option named[] = {
        {"redis", required_argument, NULL, 'R'},
        {"device", required_argument, NULL, 'D'},
        {"model", required_argument, NULL, 'm'},
        {"models", required_argument, NULL, 'M'},
        {"host", required_argument, NULL, 'H'},
        {"api-token", required_argument, NULL, 'T'},
        {"api-token-file", required_argument, NULL, 'K'},
        {"cors-origin", required_argument, NULL, 'C'},
        {"tls-cert", required_argument, NULL, 'E'},
        {"tls-key", required_argument, NULL, 'Y'},
        {"openai-models", required_argument, NULL, 'O'},
        {"data-dir", required_argument, NULL, 'A'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
    };
    enum { NNAMED = sizeof named / sizeof *named };
    /* getopt's table: opts[] as NUM + i, then the named ones. */
    struct option longopts[NNUM + NNAMED + 1];
    for (size_t i = 0; i < NNUM; i++)
        longopts[i] = (struct option){opts[i].flag + 2, required_argument, NULL, NUM + (int)i};
    memcpy(longopts + NNUM, named, sizeof named);
    longopts[NNUM + NNAMED] = (struct option){NULL, 0, NULL, 0};
    if (read_env(opts, NNUM, c)) return 2;
    int ch, given_model = 0, given_models = 0;
    while ((ch = cli_getopt(argc, argv, CMD, "h", longopts)) != -1) {
        if (ch >= NUM && ch < NUM + NNUM) {
            const numopt *no = &opts[ch - NUM];
            if (cli_parse_long(CMD, no->flag, optarg, no->min, no->max, no->value)) return 2;
            continue;
        }
        switch (ch) {
        case 'm': /* the command line overrides the environment's choice */
            c->model = optarg;
            if (!given_models) c->models = NULL;
            given_model = 1;
            break;
        case 'M':
            c->models = optarg;
            if (!given_model) c->model = NULL;
            given_models = 1;
            break;
        case 'H':
            c->host = optarg;
            break;
        case 'T':
            c->token = optarg;
            fprintf(stderr, "fanyi serve: warning: a token on the command line is visible to every "
                            "local user (ps); use --api-token-file or FANYI_API_TOKEN\n");
            break;
        case 'C':
            c->cors = optarg;
            break;
        case 'K':
            c->token_file = optarg;
            break;
        case 'R':
            c->redis = optarg;
            if (strchr(optarg, '@'))
                fprintf(stderr, "fanyi serve: warning: a Redis password on the command line is "
                                "visible to every local user (ps); use FANYI_REDIS\n");
            break;
        case 'D':
            c->device = optarg;
            break;
        case 'E':
            c->tls_cert_file = optarg;
            break;
        case 'Y':
            c->tls_key_file = optarg;
            break;
        case 'O':
            c->openai_models = optarg;
            break;
        case 'A':
            c->data_dir = optarg;
            break;
        case 'q':
            c->quiet = 1;
            break;
        case 'h':
            usage(stdout);
            return -1;
        default:
            return 2;
        }
    }
    if (optind < argc) return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
    if (c->token_file && read_token(c)) return 2;
    if (read_tls(c)) return 2;
    if (given_model && given_models)
        return cli_usage_error(CMD, "--model and --models exclude each other");
    if (c->model && c->models)
        return cli_usage_error(CMD, "FANYI_MODEL_DIR and FANYI_MODELS_DIR exclude each other");
    if (c->openai_models && strcmp(c->openai_models, "any") && strcmp(c->openai_models, "strict"))
        return cli_usage_error(CMD, "--openai-models is 'any' or 'strict', not '%s'",
                               c->openai_models);
    if (c->beam > c->max_beam)
        return cli_usage_error(CMD, "--beam %ld is more than --max-beam %ld", c->beam, c->max_beam);
    fy_redis_options ro;
    fy_redis_options_default(&ro);
    fy_error err = {0};
    if (c->redis && fy_redis_parse_url(c->redis, &ro, &err))
        return cli_usage_error(CMD, "%s", err.msg);
    return 0;
}

static void redis_log(void *user, const char *line)
{
    (void)user;
    fprintf(stderr, "fanyi serve: %s\n", line);
}

/* The sentence cache: the LRU alone (as before --redis existed), Redis
 * alone (--cache-mb 0), or memory in front of Redis. NULL with err. */
static fy_cache *make_cache(const serve_config *c, fy_error *err)
{
    size_t budget = (size_t)c->cache_mb << 20;
    if (!c->redis) return fy_cache_lru_new(budget, err);
    fy_redis_options ro;
    fy_redis_options_default(&ro);
    if (fy_redis_parse_url(c->redis, &ro, err)) return NULL;
    ro.ttl_s = (int)c->redis_ttl;
    ro.timeout_ms = (int)c->redis_timeout_ms;
    ro.log = redis_log;
    fy_cache *tiers[2] = {NULL, fy_cache_redis_new(&ro, err)};
    if (!tiers[1] || !budget) return tiers[1];
    if (!(tiers[0] = fy_cache_lru_new(budget, err))) {
        fy_cache_free(tiers[1]);
        return NULL;
    }
    return fy_cache_tiers_new(tiers, 2, err);
}

static void jobs_log(void *user, const char *line)
{
    (void)user;
    fprintf(stderr, "fanyi serve: %s\n", line);
}

/* DATA_DIR/sub: DATA_DIR is --data-dir, $FANYI_DATA_DIR or
 * ~/.local/share/fanyi. -1 without one (no HOME) or when it does not fit. */
static int data_path(const serve_config *c, const char *sub, char *out, size_t cap)
{
    const char *home = getenv("HOME");
    int n = c->data_dir     ? snprintf(out, cap, "%s/%s", c->data_dir, sub)
            : home && *home ? snprintf(out, cap, "%s/.local/share/fanyi/%s", home, sub)
                            : -1;
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* The document jobs: their store in Redis (--redis) or in DATA_DIR/jobs,
 * the document limits of the server, their glossary ids looked up in
 * glossaries. NULL with err (FY_EIO: no place to keep them). */
static fy_jobs *make_jobs(const serve_config *c, fy_registry *reg, fy_scheduler *sched,
                          fy_glossary_store *glossaries, fy_error *err)
{
    fy_jobs_options jo;
    fy_jobs_options_default(&jo);
    uint64_t max = (uint64_t)c->jobs_mb << 20;
    if (c->redis) {
        fy_redis_options ro;
        fy_redis_options_default(&ro);
        if (fy_redis_parse_url(c->redis, &ro, err)) return NULL;
        ro.timeout_ms = (int)c->redis_timeout_ms;
        jo.store = fy_jobstore_redis_open(&ro, max, err);
    } else {
        char dir[4096];
        if (data_path(c, "jobs", dir, sizeof dir)) {
            fy_err(err, c->data_dir ? FY_EINVAL : FY_EIO,
                   c->data_dir ? "--data-dir: the path is too long"
                               : "no --data-dir and no HOME: no place to keep document jobs");
            return NULL;
        }
        jo.store = fy_jobstore_dir_open(dir, max, err);
    }
    if (!jo.store) return NULL;
    jo.limits.max_bytes = (size_t)c->doc_mb << 20;
    jo.limits.max_chars = (size_t)c->doc_chars;
    jo.ttl_s = (int)c->download_ttl;
    jo.parallel = (int)c->jobs_parallel;
    jo.lease_ms = (int)c->jobs_lease_s * 1000;
    jo.batch_chars = (size_t)c->jobs_batch;
    jo.log = jobs_log;
    jo.glossaries = glossaries;
    /* A test hook (jobs.h), never set in normal use. */
    const char *stop = getenv("FANYI_TEST_JOBS_STOP_AFTER");
    if (stop) jo.test_stop_after_checkpoints = atoi(stop);
    return fy_jobs_open(reg, sched, &jo, err);
}

/* The glossary store in DATA_DIR/glossaries (memory only without a data
 * directory), shared through Redis with --redis. NULL with err. */
static fy_glossary_store *make_glossaries(const serve_config *c, fy_error *err)
{
    char dir[4096] = "";
    if (data_path(c, "glossaries", dir, sizeof dir)) {
        if (c->data_dir) {
            fy_err(err, FY_EINVAL, "--data-dir: the path is too long");
            return NULL;
        }
        dir[0] = '\0';
        fprintf(stderr, "fanyi serve: no --data-dir and no HOME: glossaries are kept in memory "
                        "only\n");
    }
    fy_redis_options ro;
    fy_redis_options_default(&ro);
    if (c->redis && fy_redis_parse_url(c->redis, &ro, err)) return NULL;
    ro.timeout_ms = (int)c->redis_timeout_ms;
    fy_glossary_store_options go;
    fy_glossary_store_options_default(&go);
    go.dir = dir[0] ? dir : NULL;
    go.redis = c->redis ? &ro : NULL;
    go.log = redis_log;
    return fy_glossary_store_open(&go, err);
}

static int no_model(const char *where, const char *why)
{
    fprintf(stderr,
            "fanyi serve: no usable model in %s: %s\n"
            "  get a model with:           fanyi model fetch zh-en   (fanyi model list "
            "--available)\n"
            "  or make a small test model: fanyi model synth --preset tiny --int8 --shortlist "
            "--seed 1 --out DIR\n"
            "  then run:                   fanyi serve --model DIR\n",
            where, why);
    return 2;
}

/* "zh-en,en-zh" (at most cap bytes). */
static void direction_list(fy_registry *reg, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = '\0';
    for (size_t i = 0; i < fy_registry_count(reg) && at < cap; i++) {
        fy_direction_info d;
        fy_registry_info(reg, i, &d);
        at += (size_t)snprintf(out + at, cap - at, "%s%s", i ? "," : "", d.name);
    }
}

/* "cpu,vulkan:0" (at most cap bytes). */
static void device_names(fy_nn_dev **devs, int n, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = '\0';
    for (int i = 0; i < n && at < cap; i++)
        at += (size_t)snprintf(out + at, cap - at, "%s%s", i ? "," : "", devs[i]->name);
}

/* Serves until SIGTERM/SIGINT (blocked in every thread, taken here). */
static int run(const serve_config *c, const char *root)
{
    int rc = 1, ndevs = 0, helpers = 0;
    fy_error err = {0};
    fy_nn_dev **devs = NULL;
    fy_server *srv = NULL;
    fy_scheduler *sched = NULL;
    fy_registry *reg = NULL;
    fy_jobs *jobs = NULL;
    fy_glossary_store *glossaries = NULL;
    fy_cache *cache = make_cache(c, &err);
    if (!cache || !(glossaries = make_glossaries(c, &err))) goto out;
    fy_translator_options topt;
    fy_translator_options_default(&topt);
    topt.max_beam = (int)c->max_beam;
    fy_scheduler_options so;
    fy_scheduler_options_default(&so);
    so.threads = (int)c->threads;
    so.express = (int)c->express;
    so.queue_max = (size_t)c->queue;
    so.max_batch_tokens = topt.max_batch_tokens;
    so.max_batch_sentences = topt.max_batch_sentences;
    so.cache = cache;
    if (cli_open_devices(c->device, (int)c->threads, (int)c->gpu_threads, c->device_mb, &so, &devs,
                         &ndevs, &err) < 0) {
        fprintf(stderr, "fanyi serve: --device %s: %s\n", c->device, err.msg);
        rc = 2;
        goto quiet;
    }
    /* The workers are the cores this server means to use (a container's
     * CPU limit): helpers sleep while all of them compute. */
    if ((helpers = cli_start_helpers(devs, ndevs, c->helpers, c->threads, &err)) < 0) goto out;
    sched = fy_scheduler_open(&so, &err);
    if (!sched) goto out;

    fy_registry_options ro;
    fy_registry_options_default(&ro);
    const char *one[1] = {c->model};
    ro.root = c->model ? NULL : root;
    ro.dirs = one;
    ro.ndirs = c->model ? 1 : 0;
    ro.memory_budget = (size_t)c->models_mb << 20;
    ro.topt = topt;
    ro.beam = (int)c->beam;
    ro.sched = sched;
    ro.threads = (int)(c->threads + c->express);
    reg = fy_registry_open(&ro, &err);
    if (!reg || (c->model && fy_registry_preload(reg, &err))) {
        rc = no_model(c->model ? c->model : root, err.msg);
        goto quiet;
    }
    jobs = make_jobs(c, reg, sched, glossaries, &err);
    /* The default place may be unusable (a read-only home in a container):
     * the server goes on without documents. A place given is a promise. */
    if (!jobs && !c->data_dir && !c->redis && err.code == FY_EIO) {
        fprintf(stderr,
                "fanyi serve: warning: %s; documents are refused (503) until "
                "--data-dir DIR (FANYI_DATA_DIR) names a writable place\n",
                err.msg);
    } else if (!jobs) {
        fprintf(stderr, "fanyi serve: document jobs: %s\n", err.msg);
        rc = 2;
        goto quiet;
    }

    fy_server_options o;
    fy_server_options_default(&o);
    o.host = c->host;
    o.port = (int)c->port;
    o.api_token = c->token;
    o.max_chars = (size_t)c->max_chars;
    o.max_items = (size_t)c->max_items;
    o.timeout_ms = (int)c->timeout_ms;
    o.cors_origin = c->cors;
    o.max_connections = (int)c->max_conn;
    o.max_per_ip = (int)c->max_per_ip;
    o.conn_timeout_s = (int)c->idle_timeout;
    o.read_timeout_s = (int)c->read_timeout;
    o.request_memory = (size_t)c->request_mb << 20;
    o.version = cli_version();
    o.quiet = c->quiet;
    o.max_document_bytes = (size_t)c->doc_mb << 20;
    o.max_document_chars = (size_t)c->doc_chars;
    o.jobs = jobs;
    o.tls_cert = c->tls_cert;
    o.tls_key = c->tls_key;
    o.openai_strict = c->openai_models && !strcmp(c->openai_models, "strict");
    o.glossaries = glossaries;
    o.devices = devs;
    o.ndevices = ndevs;
    srv = fy_server_start(&o, reg, sched, cache, &err);
    if (!srv && c->tls_cert && err.code == FY_EINVAL) {
        fprintf(stderr, "fanyi serve: --tls-cert %s, --tls-key %s: %s\n", c->tls_cert_file,
                c->tls_key_file, err.msg);
        rc = 2;
        goto quiet;
    }
    if (!srv) goto out;
    fy_scheduler_stats st;
    fy_scheduler_get_stats(sched, &st);
    char dirs[512];
    direction_list(reg, dirs, sizeof dirs);
    char names[256];
    device_names(devs, ndevs, names, sizeof names);
    for (int i = 0; i < ndevs && !c->quiet; i++)
        if (devs[i] != fy_nn_cpu_device())
            fprintf(stderr, "fanyi serve: %s: %s\n", devs[i]->name, devs[i]->desc);
    printf("fanyi serve: listening on %s://%s%s%s:%d models=%s threads=%d helpers=%d "
           "devices=%s\n",
           c->tls_cert ? "https" : "http", strchr(c->host, ':') ? "[" : "", c->host,
           strchr(c->host, ':') ? "]" : "", fy_server_port(srv), dirs, st.threads, helpers, names);
    fflush(stdout);

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    int sig = 0;
    sigwait(&set, &sig);
    fprintf(stderr, "fanyi serve: %s received, finishing requests in flight (up to %ld s)\n",
            sig == SIGINT ? "SIGINT" : "SIGTERM", c->drain_timeout);
    int cut = fy_server_drain(srv, (int)c->drain_timeout * 1000);
    if (cut) fprintf(stderr, "fanyi serve: %d request(s) cut short at shutdown\n", cut);
    fprintf(stderr, "fanyi serve: stopped\n");
    rc = 0;
out:
    if (rc) fprintf(stderr, "fanyi serve: %s\n", err.msg);
quiet:
    fy_server_free(srv);
    fy_jobs_free(jobs); /* before the models: its jobs hold them */
    fy_registry_free(reg);
    fy_scheduler_free(sched);
    fy_nn_cpu_helpers(0, 0, &err); /* every worker has stopped */
    fy_nn_devices_close(devs, ndevs);
    fy_cache_free(cache);
    fy_glossary_store_free(glossaries);
    return rc;
}

static void free_tls(serve_config *c)
{
    free(c->tls_cert);
    if (c->tls_key) memset(c->tls_key, 0, strlen(c->tls_key)); /* a secret */
    free(c->tls_key);
}

int cmd_serve(int argc, char **argv)
{
    serve_config c = {.host = "127.0.0.1",
                      .port = 8989,
                      .threads = 0,
                      .cache_mb = 64,
                      .max_chars = 5000,
                      .max_items = 128,
                      .queue = 1024,
                      .timeout_ms = 30000,
                      .max_conn = 1024,
                      .max_per_ip = 512,
                      .idle_timeout = 15,
                      .read_timeout = 30,
                      .drain_timeout = 10,
                      .express = 1,
                      .request_mb = 256,
                      .beam = 1,
                      .max_beam = 4,
                      .redis_ttl = 7 * 24 * 3600,
                      .redis_timeout_ms = 50,
                      .doc_mb = 20,
                      .doc_chars = 500000,
                      .download_ttl = 86400,
                      .jobs_mb = 1024,
                      .jobs_parallel = 2,
                      .jobs_lease_s = 30,
                      .jobs_batch = 4000,
                      .device = "auto",
                      .gpu_threads = 2};
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    c.threads = cores > 0 ? cores : 1;
    c.helpers = -1; /* default: from --threads */
    int prc = parse_args(argc, argv, &c);
    if (prc) {
        free_tls(&c);
        return prc < 0 ? 0 : prc;
    }
    if (c.helpers < 0) c.helpers = fy_nn_cpu_default_helpers(c.threads);

    /* Signals are taken synchronously by run(): block them before any
     * thread starts so every thread inherits the mask. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    char *root = fy_models_root(c.models);
    if (!root) {
        fprintf(stderr, "fanyi serve: out of memory\n");
        return 1;
    }
    int rc = run(&c, root);
    free(root);
    free_tls(&c);
    return rc;
}
