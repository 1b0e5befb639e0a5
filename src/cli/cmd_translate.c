/* cmd_translate.c - `fanyi translate`: stdin lines -> stdout translations.
 *
 * One output line per input line, in input order; an empty (or
 * white-space-only) line gives an empty line. Lines are read in blocks;
 * each block is one request of the pipeline the server uses
 * (translate/pipeline.h: languages, routes, sentences, one scheduler job,
 * the join), translated by the scheduler's worker threads and printed in
 * order once it is done.
 *
 * By default each line is split into sentences, protected spans are kept
 * and the translations joined and cleaned up. With --html the whole input
 * is one HTML document. --raw treats each line as exactly one sentence, the
 * way the reference engine (bergamot-translator) treats a one-sentence
 * request: surrounding ASCII white space is kept around the translation,
 * nothing else is touched.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "model/discover.h"
#include "translate/models.h"
#include "translate/pipeline.h"
#include "util/buf.h"

#define CMD "translate"

static const char USAGE[] =
    "usage: fanyi translate [--from LANG] [--to LANG] [--models DIR | --model DIR]\n"
    "                       [--threads N] [--batch N] [--raw | --html] [--no-shortlist]\n"
    "                       [--max-length-factor F] [--min-gap]\n"
    "\n"
    "Translates lines from stdin into lines on stdout, one per line (empty lines stay\n"
    "empty). Each line is split into sentences, and the translations are joined and\n"
    "cleaned up; URLs, e-mail addresses, numbers and code are kept.\n"
    "\n"
    "  --from LANG            source language (zh, en, zh-Hant, de, ...); default: the\n"
    "                         only model's, else detected per line\n"
    "  --to LANG              target language; default: the only model's, else English,\n"
    "                         or for English text the one language English goes into\n"
    "  --models DIR           directory of model directories named SRC-TGT (default\n"
    "                         $FANYI_MODELS_DIR, else ~/.local/share/fanyi/models)\n"
    "  --model DIR            use this one model directory ($FANYI_MODEL_DIR)\n"
    "  --threads N            worker threads translating batches concurrently (default 1)\n"
    "  --batch N              sentences per batch (default 16)\n"
    "  --raw                  each line is exactly one sentence; output untouched\n"
    "  --html                 the whole input is one HTML document: text is translated,\n"
    "                         markup kept\n"
    "  --no-shortlist         score the whole vocabulary even if the model has a shortlist\n"
    "  --max-length-factor F  output tokens <= F x source tokens (default 2.0)\n"
    "  --min-gap              after each translation print a TAB and the smallest\n"
    "                         top-1 minus top-2 logit gap over its decoding steps\n";

typedef struct opts {
    const char *model, *models, *from, *to;
    long threads, batch;
    int raw, html, min_gap;
    fy_translator_options topt;
} opts;

static int parse_opts(int argc, char **argv, opts *o)
{
    static const struct option longopts[] = {
        {"model", required_argument, NULL, 'm'},
        {"models", required_argument, NULL, 'M'},
        {"from", required_argument, NULL, 'F'},
        {"to", required_argument, NULL, 'T'},
        {"threads", required_argument, NULL, 't'},
        {"batch", required_argument, NULL, 'b'},
        {"raw", no_argument, NULL, 'r'},
        {"html", no_argument, NULL, 'H'},
        {"no-shortlist", no_argument, NULL, 'S'},
        {"max-length-factor", required_argument, NULL, 'f'},
        {"min-gap", no_argument, NULL, 'g'},
        {"help", no_argument, NULL, 'h'},
        {0},
    };
    int c;
    while ((c = cli_getopt(argc, argv, CMD, "h", longopts)) != -1) {
        switch (c) {
        case 'h':
            fputs(USAGE, stdout);
            return 0;
        case 'm':
            o->model = optarg;
            break;
        case 'M':
            o->models = optarg;
            break;
        case 'F':
            o->from = optarg;
            break;
        case 'T':
            o->to = optarg;
            break;
        case 't':
            if (cli_parse_long(CMD, "--threads", optarg, 1, 256, &o->threads)) return 2;
            break;
        case 'b':
            if (cli_parse_long(CMD, "--batch", optarg, 1, 4096, &o->batch)) return 2;
            break;
        case 'r':
            o->raw = 1;
            break;
        case 'H':
            o->html = 1;
            break;
        case 'S':
            o->topt.use_shortlist = 0;
            break;
        case 'f': {
            double f;
            if (cli_parse_double(CMD, "--max-length-factor", optarg, 0, 16, &f)) return 2;
            o->topt.max_length_factor = (float)f;
            break;
        }
        case 'g':
            o->min_gap = 1;
            break;
        default:
            return 2;
        }
    }
    if (optind < argc) return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
    if (o->raw && o->html) return cli_usage_error(CMD, "--raw and --html exclude each other");
    if (o->model && o->models)
        return cli_usage_error(CMD, "--model and --models exclude each other");
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Input                                                                     */
/* ------------------------------------------------------------------------ */

typedef struct block {
    char **lines; /* [n] as read, line break removed (--html: the whole input) */
    size_t *lens;
    size_t n, cap;
} block;

static void block_clear(block *b)
{
    for (size_t i = 0; i < b->n; i++) free(b->lines[i]);
    b->n = 0;
}

/* Reads all of stdin as one text (--html). */
static int read_all(block *b, FILE *in)
{
    fy_buf all = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, in)) > 0) fy_buf_put(&all, chunk, n);
    if (ferror(in)) {
        fy_buf_free(&all);
        return -1;
    }
    if (!(b->lines[0] = fy_buf_take(&all, &b->lens[0]))) {
        errno = ENOMEM;
        return -1;
    }
    b->n = 1;
    return 0;
}

/* Reads up to b->cap lines; returns how many (0 at end of input), -1 on a
 * read error (errno). A NUL inside a line stays in it (the pipeline
 * refuses it with its position). */
static long block_read(block *b, FILE *in, int whole)
{
    block_clear(b);
    if (whole) return feof(in) ? 0 : read_all(b, in) ? -1 : 1;
    while (b->n < b->cap) {
        char *line = NULL;
        size_t size = 0;
        ssize_t len = getline(&line, &size, in);
        if (len < 0) {
            free(line);
            if (ferror(in)) return -1;
            break;
        }
        if (len > 0 && line[len - 1] == '\n') line[--len] = '\0';
        if (len > 0 && line[len - 1] == '\r') line[--len] = '\0';
        b->lines[b->n] = line;
        b->lens[b->n++] = (size_t)len;
    }
    return (long)b->n;
}

/* ------------------------------------------------------------------------ */
/* Translating a block                                                       */
/* ------------------------------------------------------------------------ */

typedef struct waiter {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done, status;
} waiter;

static void on_done(void *user, int status)
{
    waiter *w = user;
    pthread_mutex_lock(&w->mu);
    w->done = 1;
    w->status = status;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/* Translates and prints block b (lines base+1 ...). 0, or 1 after a message. */
static int translate_block(const opts *o, fy_registry *reg, fy_scheduler *sched, block *b,
                           size_t base)
{
    fy_request_options ro = {o->from, o->to, o->html, o->raw, 0};
    fy_error err = {0};
    size_t bad;
    fy_request *q =
        fy_request_new(reg, (const char *const *)b->lines, b->lens, b->n, &ro, &bad, &err);
    if (!q) {
        if (bad < b->n && !o->html)
            fprintf(stderr, "fanyi translate: line %zu: %s\n", base + bad + 1, err.msg);
        else
            fprintf(stderr, "fanyi translate: %s\n", err.msg);
        return 1;
    }
    waiter w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
    fy_request_callbacks cb = {NULL, on_done, &w};
    int rc = fy_request_submit(q, sched, &cb, &err);
    if (!rc) {
        pthread_mutex_lock(&w.mu);
        while (!w.done) pthread_cond_wait(&w.cv, &w.mu);
        pthread_mutex_unlock(&w.mu);
        if ((rc = w.status)) fy_request_status(q, &err);
    }
    for (size_t i = 0; !rc && i < b->n; i++) {
        size_t len;
        char *text = fy_request_text(q, i, &len, NULL, &err);
        if (!text) {
            rc = err.code;
            break;
        }
        /* --raw: a line with no sentence (empty or white space) prints empty. */
        if (!o->raw || fy_request_text_sentences(q, i)) fwrite(text, 1, len, stdout);
        free(text);
        if (o->min_gap) printf("\t%.9g", (double)fy_request_gap(q, i));
        if (!o->html) fputc('\n', stdout);
    }
    fy_request_free(q);
    if (rc) fprintf(stderr, "fanyi translate: %s\n", err.msg);
    return rc ? 1 : 0;
}

/* ------------------------------------------------------------------------ */
/* The command                                                               */
/* ------------------------------------------------------------------------ */

static fy_registry *open_registry(const opts *o, fy_scheduler *sched, fy_error *err)
{
    fy_registry_options ro;
    fy_registry_options_default(&ro);
    ro.topt = o->topt;
    ro.sched = sched;
    ro.threads = (int)o->threads;
    const char *env = getenv("FANYI_MODEL_DIR");
    const char *one[1] = {o->model ? o->model : env};
    char *root = NULL;
    if (one[0] && !o->models) {
        ro.dirs = one;
        ro.ndirs = 1;
    } else if (!(root = fy_models_root(o->models))) {
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    ro.root = root;
    fy_registry *reg = fy_registry_open(&ro, err);
    free(root);
    /* One model named on the command line: a broken one fails at once. */
    if (reg && ro.ndirs && fy_registry_preload(reg, err)) {
        fy_registry_free(reg);
        return NULL;
    }
    return reg;
}

/* With one model and no languages given, its languages: no detection. */
static void default_languages(fy_registry *reg, opts *o, fy_direction_info *d)
{
    if (fy_registry_count(reg) != 1) return;
    fy_registry_info(reg, 0, d);
    if (!o->from) o->from = d->source;
    if (!o->to && !strcmp(o->from, d->source)) o->to = d->target;
}

static int run(opts *o, fy_scheduler *sched, fy_registry *reg)
{
    fy_direction_info d;
    default_languages(reg, o, &d);
    block b = {0};
    b.cap = o->html ? 1 : isatty(STDIN_FILENO) ? 1 : (size_t)(o->batch * o->threads * 4);
    b.lines = calloc(b.cap, sizeof *b.lines);
    b.lens = calloc(b.cap, sizeof *b.lens);
    int rc = b.lines && b.lens ? 0 : 1;
    if (rc) fprintf(stderr, "fanyi translate: out of memory\n");
    for (size_t base = 0; !rc;) {
        long n = block_read(&b, stdin, o->html);
        if (n < 0) {
            fprintf(stderr, "fanyi translate: reading stdin: %s\n", strerror(errno));
            rc = 1;
        }
        if (n <= 0) break;
        rc = translate_block(o, reg, sched, &b, base);
        if (!rc && fflush(stdout) != 0) {
            fprintf(stderr, "fanyi translate: write error: %s\n", strerror(errno));
            rc = 1;
        }
        base += (size_t)n;
    }
    block_clear(&b);
    free(b.lines);
    free(b.lens);
    return rc;
}

int cmd_translate(int argc, char **argv)
{
    opts o = {.threads = 1, .batch = 16};
    fy_translator_options_default(&o.topt);
    int rc = parse_opts(argc, argv, &o);
    if (rc >= 0) return rc;
    /* Size each worker's arena for one batch of ordinary lines; longer
     * input is decoded in several rounds, with the same results. */
    o.topt.max_batch_sentences = (int)o.batch;
    long tokens = o.batch * FY_SEGMENT_TOKENS;
    o.topt.max_batch_tokens = (int)(tokens < 2048 ? tokens : 2048);

    fy_error err = {0};
    fy_scheduler_options so;
    fy_scheduler_options_default(&so);
    so.threads = (int)o.threads;
    so.queue_max = (size_t)1 << 30; /* a block is admitted whole */
    so.max_batch_sentences = o.topt.max_batch_sentences;
    so.max_batch_tokens = o.topt.max_batch_tokens;
    fy_scheduler *sched = fy_scheduler_open(&so, &err);
    fy_registry *reg = sched ? open_registry(&o, sched, &err) : NULL;
    if (!reg) {
        fprintf(stderr, "fanyi translate: %s\n", err.msg);
        fy_scheduler_free(sched);
        return 1;
    }
    rc = run(&o, sched, reg);
    fy_registry_free(reg);
    fy_scheduler_free(sched);
    if (fclose(stdout) != 0 && !rc) {
        fprintf(stderr, "fanyi translate: write error: %s\n", strerror(errno));
        rc = 1;
    }
    return rc;
}
