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
 * and the translations joined and cleaned up; a line longer than 64 KiB is
 * read and translated in pieces cut where sentences end, so memory stays
 * bounded. With --html the whole input
 * is one HTML document. --raw treats each line as exactly one sentence, the
 * way the reference engine (bergamot-translator) treats a one-sentence
 * request: surrounding ASCII white space is kept around the translation,
 * nothing else is touched.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "model/discover.h"
#include "translate/models.h"
#include "text/segment.h"
#include "translate/pipeline.h"
#include "util/buf.h"

#define CMD "translate"

static const char USAGE[] =
    "usage: fanyi translate [--from LANG] [--to LANG] [--models DIR | --model DIR]\n"
    "                       [--threads N] [--batch N] [--raw | --html] [--no-shortlist]\n"
    "                       [--max-length-factor F] [--beam N] [--min-gap]\n"
    "       fanyi translate --file IN [-o OUT] [--bilingual] [--from LANG] [--to LANG] [...]\n"
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
    "  --beam N               beam search keeping N hypotheses per sentence, 1 .. 16\n"
    "                         (default 1: greedy); the best translation is printed\n"
    "  --file IN              translate the document IN (.txt .md .html .srt .vtt\n"
    "                         .docx .odt .pptx .epub .pdf) keeping its formatting\n"
    "  -o, --output OUT       where to write it (default: IN's name with the target\n"
    "                         language: report.docx -> report.en.docx; - for stdout)\n"
    "  --bilingual            PDF: every page followed by its translation\n"
    "                         (default OUT: report.en.bilingual.pdf)\n"
    "  --min-gap              after each translation print a TAB and the smallest\n"
    "                         margin of a decision in its search: top-1 minus top-2\n"
    "                         logit (greedy), or the closest call of the beam search\n";

typedef struct opts {
    const char *model, *models, *from, *to, *file, *output;
    long threads, batch, beam;
    int raw, html, min_gap, bilingual;
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
        {"beam", required_argument, NULL, 'B'},
        {"file", required_argument, NULL, 'i'},
        {"output", required_argument, NULL, 'o'},
        {"bilingual", no_argument, NULL, 'L'},
        {"help", no_argument, NULL, 'h'},
        {0},
    };
    int c;
    while ((c = cli_getopt(argc, argv, CMD, "ho:", longopts)) != -1) {
        switch (c) {
        case 'i':
            o->file = optarg;
            break;
        case 'o':
            o->output = optarg;
            break;
        case 'L':
            o->bilingual = 1;
            break;
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
        case 'B':
            if (cli_parse_long(CMD, "--beam", optarg, 1, FY_BEAM_MAX, &o->beam)) return 2;
            break;
        default:
            return 2;
        }
    }
    if (optind < argc) return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
    if (o->raw && o->html) return cli_usage_error(CMD, "--raw and --html exclude each other");
    if (o->file && (o->raw || o->html || o->min_gap))
        return cli_usage_error(CMD, "--file takes no --raw, --html or --min-gap");
    if (o->output && !o->file) return cli_usage_error(CMD, "-o OUT needs --file IN");
    if (o->bilingual && !o->file) return cli_usage_error(CMD, "--bilingual needs --file IN");
    if (o->model && o->models)
        return cli_usage_error(CMD, "--model and --models exclude each other");
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Input                                                                     */
/* ------------------------------------------------------------------------ */

/* A line longer than this is translated in pieces, each cut where a
 * sentence ends (after white space, else after a full stop), so memory
 * stays bounded whatever the line's length (FANYI_TRANSLATE_PIECE, bytes,
 * lets tests use small pieces). */
#define PIECE_BYTES (64 * 1024)

enum { CUT_LINE, CUT_SPACE, CUT_STOP, CUT_ANY };

typedef struct piece {
    char *text;
    size_t len;
    int ends_line; /* the line's last piece: a line break follows it */
    int after;     /* how the piece before it, of the same line, was cut (CUT_*) */
    char *gap;     /* CUT_SPACE: the spaces and tabs between that piece and this one */
    size_t gap_len;
} piece;

typedef struct reader {
    FILE *in;
    char *buf; /* bytes read but not yet handed out */
    size_t len, cap, piece;
    int eof, whole_lines;
    const char *source; /* the source language when known, else NULL */
    int after;          /* CUT_LINE when the next piece starts a line */
    char *gap;          /* the white space the last cut took out (CUT_SPACE) */
    size_t gap_len;
} reader;

typedef struct block {
    piece *p; /* [n] */
    size_t n, cap;
} block;

static void block_clear(block *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->p[i].text);
        free(b->p[i].gap);
    }
    b->n = 0;
}

/* Fills r->buf up to its piece size (or the end of the input). 0 or -1. */
static int fill(reader *r)
{
    while (!r->eof && r->len < r->piece) {
        if (fy_vec_reserve((void **)&r->buf, &r->cap, r->piece + 1, 1)) {
            errno = ENOMEM;
            return -1;
        }
        size_t n = fread(r->buf + r->len, 1, r->piece - r->len, r->in);
        r->len += n;
        if (n == 0) {
            if (ferror(r->in)) return -1;
            r->eof = 1;
        }
    }
    return 0;
}

static int horizontal(unsigned char c)
{
    return c == ' ' || c == '\t';
}

/* The run of spaces and tabs around s[i], within (0, n): 1 and [*a, *e),
 * or 0 when it touches an end (it may go on beyond the buffer). */
static int space_run(const unsigned char *s, size_t n, size_t i, size_t *a, size_t *e)
{
    *a = i, *e = i + 1;
    while (*a > 0 && horizontal(s[*a - 1])) (*a)--;
    while (*e < n && horizontal(s[*e])) (*e)++;
    return *a > 0 && *e < n;
}

/* Where to cut a long line in buf[0..n): where the splitter ends its last
 * whole sentence (fy_split_last_end; [*end, *next) is the white space
 * taken out, the join's rules put what belongs there), so the pieces
 * translate as the line would; without two sentences, at the last white
 * space of its second half, else at its last character boundary (a
 * sentence of 32 KiB is cut anyway). *how receives CUT_*. */
static void cut_point(const char *buf, size_t n, const char *source, size_t *end, size_t *next,
                      int *how)
{
    const unsigned char *s = (const unsigned char *)buf;
    size_t a, e;
    if (source && fy_split_last_end(buf, n, source, end, next) && *end > n / 4) {
        *how = *next > *end ? CUT_SPACE : CUT_STOP;
        return;
    }
    for (size_t i = n - 1; i > n / 2; i--)
        if (horizontal(s[i]) && space_run(s, n, i, &a, &e)) {
            *end = a, *next = e, *how = CUT_SPACE;
            return;
        }
    size_t i = n;
    while (i > 1 && (s[i] & 0xC0) == 0x80) i--;
    *end = *next = i, *how = CUT_ANY;
}

/* The next piece of input: a whole line, or a piece of a long one (a whole
 * line however long with r->whole_lines, for --raw, where a cut would
 * change what the engine sees). Returns 1, 0 at the end of the input, -1
 * on a read error (errno). A NUL stays in its line (the pipeline refuses
 * it with its position). */
static int next_piece(reader *r, piece *out)
{
    char *nl;
    for (;;) {
        if (fill(r)) return -1;
        if (r->len == 0) return 0;
        nl = memchr(r->buf, '\n', r->len);
        if (nl || r->eof || !r->whole_lines) break;
        r->piece *= 2;
    }
    size_t take = nl ? (size_t)(nl - r->buf) : r->len, skip = take + (nl != NULL);
    int how = CUT_LINE;
    if (!nl && !r->eof) cut_point(r->buf, r->len, r->source, &take, &skip, &how); /* a long line */
    size_t len = take;
    if (how == CUT_LINE && len > 0 && r->buf[len - 1] == '\r') len--;
    if (!(out->text = malloc(len + 1))) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(out->text, r->buf, len);
    out->text[len] = '\0';
    out->len = len;
    out->ends_line = how == CUT_LINE;
    out->after = r->after;
    out->gap = r->gap; /* the white space before this piece: it is the piece's now */
    out->gap_len = r->gap_len;
    r->after = how;
    r->gap = how == CUT_SPACE ? strndup(r->buf + take, skip - take) : NULL;
    r->gap_len = r->gap ? skip - take : 0;
    if (how == CUT_SPACE && !r->gap) {
        errno = ENOMEM;
        return -1;
    }
    memmove(r->buf, r->buf + skip, r->len - skip);
    r->len -= skip;
    return 1;
}

/* Reads all of stdin as one text (--html). */
static int read_all(reader *r, piece *out)
{
    fy_buf all = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, r->in)) > 0) fy_buf_put(&all, chunk, n);
    if (ferror(r->in)) {
        fy_buf_free(&all);
        return -1;
    }
    if (!(out->text = fy_buf_take(&all, &out->len))) {
        errno = ENOMEM;
        return -1;
    }
    out->ends_line = 0;
    out->after = CUT_LINE;
    r->eof = 1;
    return 1;
}

/* Reads up to b->cap pieces; returns how many (0 at end of input), -1 on a
 * read error (errno). whole: the whole input is one piece (--html). */
static long block_read(block *b, reader *r, int whole)
{
    block_clear(b);
    if (whole) {
        if (r->eof) return 0;
        int rc = read_all(r, &b->p[0]);
        if (rc > 0) b->n = 1;
        return rc < 0 ? -1 : (long)b->n;
    }
    while (b->n < b->cap) {
        int rc = next_piece(r, &b->p[b->n]);
        if (rc < 0) return -1;
        if (rc == 0) break;
        b->n++;
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

/* What printing carries from piece to piece: a line's last character so
 * far and its smallest gap, for lines translated in pieces. */
typedef struct printer {
    uint32_t last;
    float gap;
    size_t lines; /* lines finished so far */
} printer;

static uint32_t first_cp(const char *s, size_t len)
{
    uint32_t c = len ? (unsigned char)s[0] : 0;
    if (c >= 0xF0 && len >= 4)
        return (c & 7) << 18 | (s[1] & 63) << 12 | (s[2] & 63) << 6 | (s[3] & 63);
    if (c >= 0xE0 && len >= 3) return (c & 15) << 12 | (s[1] & 63) << 6 | (s[2] & 63);
    if (c >= 0xC0 && len >= 2) return (c & 31) << 6 | (s[1] & 63);
    return c;
}

static uint32_t last_cp(const char *s, size_t len)
{
    size_t i = len;
    while (i > 0 && ((unsigned char)s[i - 1] & 0xC0) == 0x80) i--;
    return i ? first_cp(s + i - 1, len - i + 1) : 0;
}

/* Prints piece i's translation text (len bytes) of request q. */
static void print_piece(const opts *o, printer *pr, const fy_request *q, size_t i, const piece *p,
                        const char *text, size_t len)
{
    /* Between two pieces of a line, what the join would put between their
     * sentences: the white space, nothing, or the space touching sentences get. */
    if (p->after == CUT_SPACE || p->after == CUT_STOP) {
        int g =
            fy_join_gap(pr->last, p->gap, p->gap_len, first_cp(text, len), fy_request_target(q, i));
        if (g == FY_GAP_SPACE) fputc(' ', stdout);
        if (g == FY_GAP_KEEP && p->gap_len) fwrite(p->gap, 1, p->gap_len, stdout);
    }
    /* --raw: a line with no sentence (empty or white space) prints empty. */
    if (len && (!o->raw || fy_request_text_sentences(q, i))) fwrite(text, 1, len, stdout);
    if (len) pr->last = last_cp(text, len);
    float g = fy_request_gap(q, i);
    if (g < pr->gap) pr->gap = g; /* reset to INFINITY when a line ends */
    if (!p->ends_line) return;
    if (o->min_gap) printf("\t%.9g", (double)pr->gap);
    if (!o->html) fputc('\n', stdout);
    pr->last = 0;
    pr->gap = INFINITY;
    pr->lines++;
}

/* The line number of piece bad of block b. */
static size_t line_of(const printer *pr, const block *b, size_t bad)
{
    size_t line = pr->lines + 1;
    for (size_t i = 0; i < bad && i < b->n; i++) line += b->p[i].ends_line;
    return line;
}

/* Translates and prints block b. 0, or 1 after a message. */
static int translate_block(const opts *o, fy_registry *reg, fy_scheduler *sched, block *b,
                           printer *pr)
{
    const char *texts[4096];
    size_t lens[4096];
    for (size_t i = 0; i < b->n; i++) texts[i] = b->p[i].text, lens[i] = b->p[i].len;
    fy_request_options ro = {
        .source = o->from, .target = o->to, .html = o->html, .raw = o->raw, .beam = (int)o->beam};
    fy_error err = {0};
    size_t bad;
    fy_request *q = fy_request_new(reg, texts, lens, b->n, &ro, &bad, &err);
    if (!q) {
        if (bad < b->n && !o->html)
            fprintf(stderr, "fanyi translate: line %zu: %s\n", line_of(pr, b, bad), err.msg);
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
        print_piece(o, pr, q, i, &b->p[i], text, len);
        free(text);
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
    ro.beam = (int)o->beam;
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

/* The piece size: PIECE_BYTES, or $FANYI_TRANSLATE_PIECE (tests). */
static size_t piece_bytes(void)
{
    const char *v = getenv("FANYI_TRANSLATE_PIECE");
    long n = v ? atol(v) : 0;
    return n >= 64 && n <= (1L << 30) ? (size_t)n : PIECE_BYTES;
}

static int run(opts *o, fy_scheduler *sched, fy_registry *reg)
{
    fy_direction_info d;
    default_languages(reg, o, &d);
    reader r = {.in = stdin, .piece = piece_bytes(), .whole_lines = o->raw, .after = CUT_LINE};
    /* Sentence ends are the same for every language but for the spans a
     * source protects: unknown (detected per line), cut as English is. */
    char from[FY_LANG_MAX];
    r.source = o->from && fy_lang_normalize(o->from, from) == 0 ? from : "en";
    block b = {0};
    b.cap = o->html ? 1 : isatty(STDIN_FILENO) ? 1 : (size_t)(o->batch * o->threads * 4);
    if (b.cap > 4096) b.cap = 4096;
    b.p = calloc(b.cap, sizeof *b.p);
    printer pr = {0, INFINITY, 0};
    int rc = b.p ? 0 : 1;
    if (rc) fprintf(stderr, "fanyi translate: out of memory\n");
    while (!rc) {
        long n = block_read(&b, &r, o->html);
        if (n < 0) {
            fprintf(stderr, "fanyi translate: reading stdin: %s\n", strerror(errno));
            rc = 1;
        }
        if (n <= 0) break;
        rc = translate_block(o, reg, sched, &b, &pr);
        /* A reader that went away, a full disk: say so and stop translating. */
        if (!rc && (fflush(stdout) != 0 || ferror(stdout))) {
            fprintf(stderr, "fanyi translate: write error: %s\n", strerror(errno));
            rc = 1;
        }
    }
    block_clear(&b);
    free(b.p);
    free(r.buf);
    free(r.gap);
    return rc;
}

int cmd_translate(int argc, char **argv)
{
    opts o = {.threads = 1, .batch = 16, .beam = 1};
    fy_translator_options_default(&o.topt);
    int rc = parse_opts(argc, argv, &o);
    if (rc >= 0) return rc;
    /* Size each worker's arena for one batch of ordinary lines; longer
     * input is decoded in several rounds, with the same results. */
    o.topt.max_batch_sentences = (int)o.batch;
    o.topt.max_beam = (int)o.beam; /* the only beam asked: scratch for no more */
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
    if (o.file) {
        fy_direction_info d;
        default_languages(reg, &o, &d);
        rc = cli_translate_file(o.file, o.output, o.from, o.to, o.bilingual, sched, reg);
    } else {
        rc = run(&o, sched, reg);
    }
    fy_registry_free(reg);
    fy_scheduler_free(sched);
    if (fclose(stdout) != 0 && !rc) {
        fprintf(stderr, "fanyi translate: write error: %s\n", strerror(errno));
        rc = 1;
    }
    return rc;
}
