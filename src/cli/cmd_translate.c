/* cmd_translate.c - `fanyi translate`: stdin lines -> stdout translations.
 *
 * One output line per input line, in input order; an empty (or
 * whitespace-only) line gives an empty line. Lines are read in blocks;
 * each block is cut into batches that N worker threads translate
 * concurrently, each with its own fy_worker, and the block is printed in
 * order once all its batches are done.
 *
 * --raw treats each line as exactly one sentence, the way the reference
 * engine (bergamot-translator) treats a one-sentence request: surrounding
 * ASCII whitespace is kept around the translation, nothing else is touched.
 * Without --raw the text pipeline (sentence splitting, clean-up) is meant to
 * run; until it is wired in, the default mode behaves like --raw.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "model/discover.h"
#include "translate/translator.h"

#define CMD "translate"

static const char USAGE[] =
    "usage: fanyi translate [--model DIR] [--threads N] [--batch N] [--raw] [--no-shortlist]\n"
    "                       [--max-length-factor F] [--min-gap]\n"
    "\n"
    "Translates Chinese lines from stdin into English lines on stdout, one per line\n"
    "(empty lines stay empty).\n"
    "\n"
    "  --model DIR            model directory (default $FANYI_MODEL_DIR, else\n"
    "                         ~/.local/share/fanyi/models/zh-en)\n"
    "  --threads N            worker threads translating batches concurrently (default 1)\n"
    "  --batch N              lines per batch (default 16)\n"
    "  --raw                  each line is exactly one sentence; output untouched\n"
    "  --no-shortlist         score the whole vocabulary even if the model has a shortlist\n"
    "  --max-length-factor F  output tokens <= F x source tokens (default 2.0)\n"
    "  --min-gap              after each translation print a TAB and the smallest\n"
    "                         top-1 minus top-2 logit gap over its decoding steps\n";

typedef struct opts {
    char *model_dir;
    long threads, batch;
    int raw, min_gap;
    fy_translator_options topt;
} opts;

/* One block of input lines and everything the threads produce for it. */
typedef struct block {
    char **lines;  /* [n] as read, newline removed */
    char **src;    /* [n] the sentence to translate (NULL: nothing to translate) */
    size_t *lead;  /* [n] leading whitespace bytes kept in the output */
    size_t *trail; /* [n] trailing whitespace bytes kept in the output */
    char **out;    /* [n] translations */
    float *gap;    /* [n] */
    size_t n, cap;
} block;

typedef struct job {
    const fy_translator *t;
    block *b;
    size_t batch;
    atomic_size_t next; /* next batch index to take */
    atomic_int failed;
    fy_error err; /* the first failure */
    pthread_mutex_t lock;
    size_t bad_line;
} job;

static int parse_opts(int argc, char **argv, opts *o)
{
    static const struct option longopts[] = {
        {"model", required_argument, NULL, 'm'},
        {"threads", required_argument, NULL, 't'},
        {"batch", required_argument, NULL, 'b'},
        {"raw", no_argument, NULL, 'r'},
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
            o->model_dir = optarg;
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
        case 'S':
            o->topt.use_shortlist = 0;
            break;
        case 'f': {
            char *end;
            errno = 0;
            double f = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(f > 0.0 && f <= 16.0))
                return cli_usage_error(CMD,
                                       "--max-length-factor needs a number in (0, 16], "
                                       "not '%s'",
                                       optarg);
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
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Input                                                                     */
/* ------------------------------------------------------------------------ */

/* ASCII whitespace, as the reference's sentence splitter trims it. */
static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static void block_clear(block *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->lines[i]);
        free(b->src[i]);
        free(b->out[i]);
        b->lines[i] = b->src[i] = b->out[i] = NULL;
    }
    b->n = 0;
}

static void block_free(block *b)
{
    block_clear(b);
    free(b->lines);
    free(b->src);
    free(b->lead);
    free(b->trail);
    free(b->out);
    free(b->gap);
}

static int block_init(block *b, size_t cap)
{
    memset(b, 0, sizeof *b);
    b->cap = cap;
    b->lines = calloc(cap, sizeof *b->lines);
    b->src = calloc(cap, sizeof *b->src);
    b->lead = calloc(cap, sizeof *b->lead);
    b->trail = calloc(cap, sizeof *b->trail);
    b->out = calloc(cap, sizeof *b->out);
    b->gap = calloc(cap, sizeof *b->gap);
    return b->lines && b->src && b->lead && b->trail && b->out && b->gap ? 0 : -1;
}

/* Reads up to b->cap lines; returns how many (0 at end of input), -1 on error. */
static long block_read(block *b, FILE *in)
{
    block_clear(b);
    while (b->n < b->cap) {
        char *line = NULL;
        size_t size = 0;
        ssize_t len = getline(&line, &size, in);
        if (len < 0) {
            free(line);
            if (ferror(in)) return -1;
            break;
        }
        len = (ssize_t)strlen(line); /* an embedded NUL ends the line */
        if (len > 0 && line[len - 1] == '\n') line[--len] = '\0';
        if (len > 0 && line[len - 1] == '\r') line[--len] = '\0';
        size_t i = b->n++;
        b->lines[i] = line;
        size_t lead = 0, end = (size_t)len;
        while (lead < end && is_space(line[lead])) lead++;
        while (end > lead && is_space(line[end - 1])) end--;
        b->lead[i] = lead;
        b->trail[i] = (size_t)len - end;
        if (end > lead && !(b->src[i] = strndup(line + lead, end - lead))) return -1;
        b->gap[i] = INFINITY;
    }
    return (long)b->n;
}

/* ------------------------------------------------------------------------ */
/* Worker threads                                                            */
/* ------------------------------------------------------------------------ */

/* Translates batch number k of the block: its lines that have a sentence. */
static int run_batch(job *j, fy_worker *w, size_t k, fy_error *err)
{
    block *b = j->b;
    size_t lo = k * j->batch, hi = lo + j->batch < b->n ? lo + j->batch : b->n;
    const char *src[4096];
    size_t at[4096];
    char *out[4096];
    fy_translate_info info[4096];
    size_t m = 0;
    for (size_t i = lo; i < hi; i++)
        if (b->src[i]) {
            src[m] = b->src[i];
            at[m++] = i;
        }
    if (m == 0) return 0;
    int rc = fy_translate_batch_ex(j->t, w, src, m, out, info, err);
    if (rc < 0) {
        j->bad_line = at[0];
        return rc;
    }
    for (size_t i = 0; i < m; i++) {
        b->out[at[i]] = out[i];
        b->gap[at[i]] = info[i].min_gap;
    }
    return 0;
}

static void *thread_main(void *arg)
{
    job *j = arg;
    fy_error err = {0};
    fy_worker *w = fy_worker_new(j->t, &err);
    size_t nbatches = (j->b->n + j->batch - 1) / j->batch;
    int rc = w ? 0 : err.code;
    while (rc == 0 && !atomic_load(&j->failed)) {
        size_t k = atomic_fetch_add(&j->next, 1);
        if (k >= nbatches) break;
        rc = run_batch(j, w, k, &err);
    }
    if (rc < 0) {
        pthread_mutex_lock(&j->lock);
        if (!atomic_load(&j->failed)) j->err = err;
        atomic_store(&j->failed, 1);
        pthread_mutex_unlock(&j->lock);
    }
    fy_worker_free(w);
    return NULL;
}

/* Translates the whole block with nthreads threads; 0 or -1 (j->err set). */
static int translate_block(job *j, fy_worker *w0, long nthreads)
{
    atomic_store(&j->next, 0);
    if (nthreads <= 1) {
        size_t nbatches = (j->b->n + j->batch - 1) / j->batch;
        for (size_t k = 0; k < nbatches; k++)
            if (run_batch(j, w0, k, &j->err) < 0) return -1;
        return 0;
    }
    pthread_t tid[256];
    long started = 0;
    for (; started < nthreads; started++)
        if (pthread_create(&tid[started], NULL, thread_main, j) != 0) break;
    if (started == 0) {
        fy_err(&j->err, FY_ENOMEM, "cannot start worker threads");
        return -1;
    }
    for (long i = 0; i < started; i++) pthread_join(tid[i], NULL);
    return atomic_load(&j->failed) ? -1 : 0;
}

static void print_block(const block *b, int min_gap)
{
    for (size_t i = 0; i < b->n; i++) {
        if (b->out[i]) {
            fwrite(b->lines[i], 1, b->lead[i], stdout);
            fputs(b->out[i], stdout);
            size_t len = strlen(b->lines[i]);
            fwrite(b->lines[i] + len - b->trail[i], 1, b->trail[i], stdout);
        }
        if (min_gap) printf("\t%.9g", (double)b->gap[i]);
        fputc('\n', stdout);
    }
}

/* ------------------------------------------------------------------------ */
/* The command                                                               */
/* ------------------------------------------------------------------------ */

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
    char *dir = fy_model_default_dir(o.model_dir);
    if (!dir) {
        fprintf(stderr, "fanyi translate: out of memory\n");
        return 1;
    }
    fy_translator *t = fy_translator_open(dir, &o.topt, &err);
    free(dir);
    if (!t) {
        fprintf(stderr, "fanyi translate: %s\n", err.msg);
        return 1;
    }
    fy_worker *w0 = fy_worker_new(t, &err);
    block b;
    size_t cap = isatty(STDIN_FILENO) ? 1 : (size_t)(o.batch * o.threads * 4);
    if (!w0 || block_init(&b, cap) < 0) {
        fprintf(stderr, "fanyi translate: %s\n", w0 ? "out of memory" : err.msg);
        fy_worker_free(w0);
        fy_translator_free(t);
        return 1;
    }
    job j = {.t = t, .b = &b, .batch = (size_t)o.batch};
    pthread_mutex_init(&j.lock, NULL);
    rc = 0;
    size_t base = 0;
    for (;;) {
        long n = block_read(&b, stdin);
        if (n < 0) {
            fprintf(stderr, "fanyi translate: reading stdin: %s\n", strerror(errno));
            rc = 1;
            break;
        }
        if (n == 0) break;
        atomic_store(&j.failed, 0);
        if (translate_block(&j, w0, o.threads) < 0) {
            fprintf(stderr, "fanyi translate: line %zu: %s\n", base + j.bad_line + 1, j.err.msg);
            rc = 1;
            break;
        }
        print_block(&b, o.min_gap);
        fflush(stdout);
        base += (size_t)n;
    }
    pthread_mutex_destroy(&j.lock);
    block_free(&b);
    fy_worker_free(w0);
    fy_translator_free(t);
    return rc;
}
