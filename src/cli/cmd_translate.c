/* cmd_translate.c - `fanyi translate`: stdin lines -> stdout translations.
 *
 * One output line per input line, in input order; an empty (or
 * whitespace-only) line gives an empty line. Lines are read in blocks; each
 * block's sentences are cut into batches that N worker threads translate
 * concurrently, each with its own fy_worker, and the block is printed in
 * order once all its batches are done.
 *
 * By default each line goes through the text pipeline (src/text/segment.h):
 * split into sentences, protected spans kept, translations joined and
 * cleaned up. With --html the whole input is one HTML document. --raw treats
 * each line as exactly one sentence, the way the reference engine
 * (bergamot-translator) treats a one-sentence request: surrounding ASCII
 * whitespace is kept around the translation, nothing else is touched.
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
#include "text/segment.h"
#include "translate/translator.h"

#define CMD "translate"

static const char USAGE[] =
    "usage: fanyi translate [--model DIR] [--threads N] [--batch N] [--raw | --html]\n"
    "                       [--no-shortlist] [--max-length-factor F] [--min-gap]\n"
    "\n"
    "Translates Chinese lines from stdin into English lines on stdout, one per line\n"
    "(empty lines stay empty). Each line is split into sentences, and the translations\n"
    "are joined and cleaned up; URLs, e-mail addresses, numbers and code are kept.\n"
    "\n"
    "  --model DIR            model directory (default $FANYI_MODEL_DIR, else\n"
    "                         ~/.local/share/fanyi/models/zh-en)\n"
    "  --threads N            worker threads translating batches concurrently (default 1)\n"
    "  --batch N              lines per batch (default 16)\n"
    "  --raw                  each line is exactly one sentence; output untouched\n"
    "  --html                 the whole input is one HTML document: text is translated,\n"
    "                         markup kept\n"
    "  --no-shortlist         score the whole vocabulary even if the model has a shortlist\n"
    "  --max-length-factor F  output tokens <= F x source tokens (default 2.0)\n"
    "  --min-gap              after each translation print a TAB and the smallest\n"
    "                         top-1 minus top-2 logit gap over its decoding steps\n";

typedef struct opts {
    char *model_dir;
    long threads, batch;
    int raw, html, min_gap;
    fy_translator_options topt;
} opts;

/* One block of input lines and everything the threads produce for it.
 * Line i owns the sentences [first[i], first[i] + count[i]) of src/out/gap. */
typedef struct block {
    char **lines;          /* [n] as read, newline removed (--html: the whole input) */
    size_t *lead;          /* [n] --raw: leading whitespace bytes kept in the output */
    size_t *trail;         /* [n] --raw: trailing whitespace bytes kept in the output */
    char **own;            /* [n] --raw: the trimmed line, the sentence */
    fy_doc **doc;          /* [n] pipeline mode: the line split into sentences */
    size_t *first, *count; /* [n] the line's sentences */
    size_t n, cap;
    const char **src; /* [nsent] sentences (owned by lines[] or doc[]) */
    char **out;       /* [nsent] translations */
    float *gap;       /* [nsent] */
    size_t nsent, sent_cap;
    const fy_translator *t; /* for the pipeline's token counts */
    int mode;               /* MODE_* */
} block;

enum { MODE_RAW, MODE_TEXT, MODE_HTML };

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
        free(b->own[i]);
        fy_doc_free(b->doc[i]);
        b->lines[i] = b->own[i] = NULL;
        b->doc[i] = NULL;
    }
    for (size_t k = 0; k < b->nsent; k++) free(b->out[k]);
    b->n = b->nsent = 0;
}

static void block_free(block *b)
{
    block_clear(b);
    free(b->lines);
    free(b->lead);
    free(b->trail);
    free(b->own);
    free(b->doc);
    free(b->first);
    free(b->count);
    free(b->src);
    free(b->out);
    free(b->gap);
}

static int block_init(block *b, size_t cap, const fy_translator *t, int mode)
{
    memset(b, 0, sizeof *b);
    b->cap = cap;
    b->t = t;
    b->mode = mode;
    b->lines = calloc(cap, sizeof *b->lines);
    b->lead = calloc(cap, sizeof *b->lead);
    b->trail = calloc(cap, sizeof *b->trail);
    b->own = calloc(cap, sizeof *b->own);
    b->doc = calloc(cap, sizeof *b->doc);
    b->first = calloc(cap, sizeof *b->first);
    b->count = calloc(cap, sizeof *b->count);
    return b->lines && b->lead && b->trail && b->own && b->doc && b->first && b->count ? 0 : -1;
}

/* Appends one sentence to translate; -1 when out of memory. */
static int block_add_sentence(block *b, const char *s)
{
    if (b->nsent == b->sent_cap) {
        size_t cap = b->sent_cap ? 2 * b->sent_cap : 256;
        const char **src = realloc(b->src, cap * sizeof *src);
        if (src) b->src = src;
        char **out = realloc(b->out, cap * sizeof *out);
        if (out) b->out = out;
        float *gap = realloc(b->gap, cap * sizeof *gap);
        if (gap) b->gap = gap;
        if (!src || !out || !gap) return -1;
        b->sent_cap = cap;
    }
    b->src[b->nsent] = s;
    b->out[b->nsent] = NULL;
    b->gap[b->nsent++] = INFINITY;
    return 0;
}

static long count_tokens(void *ctx, const char *s, size_t len)
{
    return fy_translator_count_tokens(ctx, s, len);
}

/* Makes line i's sentences: the trimmed line (--raw) or the pipeline's. */
static int block_split_line(block *b, size_t i, fy_error *err)
{
    char *line = b->lines[i];
    size_t len = strlen(line);
    b->first[i] = b->nsent;
    if (b->mode == MODE_RAW) {
        size_t lead = 0, end = len;
        while (lead < end && is_space(line[lead])) lead++;
        while (end > lead && is_space(line[end - 1])) end--;
        b->lead[i] = lead;
        b->trail[i] = len - end;
        b->count[i] = end > lead;
        if (end > lead &&
            (!(b->own[i] = strndup(line + lead, end - lead)) || block_add_sentence(b, b->own[i])))
            return fy_err(err, FY_ENOMEM, "out of memory");
        return 0;
    }
    fy_split_options so;
    fy_split_options_default(&so);
    so.html = b->mode == MODE_HTML;
    so.count_tokens = count_tokens;
    so.count_ctx = (void *)b->t;
    if (!(b->doc[i] = fy_doc_split(line, len, &so, err))) return err->code;
    b->count[i] = fy_doc_sentence_count(b->doc[i]);
    for (size_t k = 0; k < b->count[i]; k++)
        if (block_add_sentence(b, fy_doc_sentence(b->doc[i], k, NULL)))
            return fy_err(err, FY_ENOMEM, "out of memory");
    return 0;
}

/* Reads all of stdin as one line (--html). */
static char *read_all(FILE *in)
{
    size_t len = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - len - 1, in);
        if (ferror(in)) break;
        if (feof(in)) {
            buf[len] = '\0';
            return buf;
        }
        char *grown = len + 1 >= cap ? realloc(buf, cap *= 2) : buf;
        if (!grown) break;
        buf = grown;
    }
    free(buf);
    return NULL;
}

/* Reads up to b->cap lines and splits them; returns how many (0 at end of
 * input), -1 on a read error (errno), -2 on a split error (err, line in *bad). */
static long block_read(block *b, FILE *in, fy_error *err, size_t *bad)
{
    block_clear(b);
    if (b->mode == MODE_HTML) {
        if (feof(in)) return 0;
        if (!(b->lines[0] = read_all(in))) return -1;
        b->n = 1;
        *bad = 0;
        return block_split_line(b, 0, err) ? -2 : 1;
    }
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
        *bad = i;
        if (block_split_line(b, i, err)) return -2;
    }
    return (long)b->n;
}

/* ------------------------------------------------------------------------ */
/* Worker threads                                                            */
/* ------------------------------------------------------------------------ */

/* Translates batch number k of the block's sentences. */
static int run_batch(job *j, fy_worker *w, size_t k, fy_error *err)
{
    block *b = j->b;
    size_t lo = k * j->batch, hi = lo + j->batch < b->nsent ? lo + j->batch : b->nsent;
    fy_translate_info info[4096];
    if (hi <= lo) return 0;
    int rc = fy_translate_batch_ex(j->t, w, b->src + lo, hi - lo, b->out + lo, info, err);
    if (rc < 0) {
        j->bad_line = lo;
        return rc;
    }
    for (size_t i = lo; i < hi; i++) b->gap[i] = info[i - lo].min_gap;
    return 0;
}

static void *thread_main(void *arg)
{
    job *j = arg;
    fy_error err = {0};
    fy_worker *w = fy_worker_new(j->t, &err);
    size_t nbatches = (j->b->nsent + j->batch - 1) / j->batch;
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
        size_t nbatches = (j->b->nsent + j->batch - 1) / j->batch;
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

/* The input line (in the block) that sentence k came from. */
static size_t line_of(const block *b, size_t k)
{
    size_t i = 0;
    while (i + 1 < b->n && b->first[i + 1] <= k) i++;
    return i;
}

/* The line's smallest logit gap over its sentences. */
static float line_gap(const block *b, size_t i)
{
    float g = INFINITY;
    for (size_t k = b->first[i]; k < b->first[i] + b->count[i]; k++)
        if (b->gap[k] < g) g = b->gap[k];
    return g;
}

static int print_block(const block *b, int min_gap, fy_error *err)
{
    for (size_t i = 0; i < b->n; i++) {
        if (b->mode == MODE_RAW) {
            if (b->count[i]) {
                fwrite(b->lines[i], 1, b->lead[i], stdout);
                fputs(b->out[b->first[i]], stdout);
                fputs(b->lines[i] + strlen(b->lines[i]) - b->trail[i], stdout);
            }
        } else {
            char *text = fy_doc_join(b->doc[i], (const char *const *)b->out + b->first[i], err);
            if (!text) return err->code;
            fputs(text, stdout);
            free(text);
        }
        if (min_gap) printf("\t%.9g", (double)line_gap(b, i));
        if (b->mode != MODE_HTML) fputc('\n', stdout);
    }
    return 0;
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
    int mode = o.raw ? MODE_RAW : o.html ? MODE_HTML : MODE_TEXT;
    if (!w0 || block_init(&b, cap, t, mode) < 0) {
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
        size_t bad = 0;
        long n = block_read(&b, stdin, &err, &bad);
        if (n == -1) {
            fprintf(stderr, "fanyi translate: reading stdin: %s\n", strerror(errno));
            rc = 1;
            break;
        }
        if (n == -2) {
            fprintf(stderr, "fanyi translate: line %zu: %s\n", base + bad + 1, err.msg);
            rc = 1;
            break;
        }
        if (n == 0) break;
        atomic_store(&j.failed, 0);
        if (translate_block(&j, w0, o.threads) < 0) {
            fprintf(stderr, "fanyi translate: line %zu: %s\n", base + line_of(&b, j.bad_line) + 1,
                    j.err.msg);
            rc = 1;
            break;
        }
        if (print_block(&b, o.min_gap, &err) < 0) {
            fprintf(stderr, "fanyi translate: %s\n", err.msg);
            rc = 1;
            break;
        }
        fflush(stdout);
        base += (size_t)n;
    }
    pthread_mutex_destroy(&j.lock);
    block_free(&b);
    fy_worker_free(w0);
    fy_translator_free(t);
    return rc;
}
