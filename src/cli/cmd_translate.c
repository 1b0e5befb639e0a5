/* cmd_translate.c - `fanyi translate`: stdin lines -> stdout translations.
 *
 * One output line per input line, in input order; an empty (or
 * white-space-only) line gives an empty line. Lines are read in blocks;
 * each block is one request of the pipeline the server uses
 * (translate/pipeline.h: languages, routes, sentences, one scheduler job,
 * the join), translated by the scheduler's worker threads and printed in
 * order once it is done.
 *
 * Nothing is lost: a line that is not UTF-8 text never reaches the
 * pipeline; it is printed as it came, with a warning naming it, and the
 * lines around it are translated (exit status 3 at the end); with
 * --strict, or a NUL byte, or a line the pipeline refuses, every line
 * before it is printed and the run stops there (exit status 1).
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
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/line_reader.h"
#include "model/discover.h"
#include "translate/models.h"
#include "text/segment.h"
#include "nn/backend.h"
#include "nn/par.h"
#include "text/glossary.h"
#include "translate/pipeline.h"
#include "util/buf.h"

#define CMD "translate"

static const char USAGE[] =
    "usage: fanyi translate [--from LANG] [--to LANG] [--models DIR | --model DIR]\n"
    "                       [--threads N] [--helper-threads N] [--batch N] [--raw | --html]\n"
    "                       [--no-shortlist]\n"
    "                       [--max-length-factor F] [--beam N] [--min-gap] [--strict]\n"
    "                       [--device D] [--glossary FILE]\n"
    "       fanyi translate --file IN [-o OUT] [--bilingual] [--force] [--max-document-mb N]\n"
    "                       [--max-document-chars N] [--from LANG] [--to LANG] [...]\n"
    "\n"
    "Translates lines from stdin into lines on stdout, one per line (empty lines stay\n"
    "empty). Each line is split into sentences, and the translations are joined and\n"
    "cleaned up; URLs, e-mail addresses, numbers and code are kept. A line that is\n"
    "not UTF-8 text is printed as it came, with a warning naming it on stderr.\n"
    "\n"
    "  --from LANG            source language (zh, en, zh-Hant, de, ...); default: the\n"
    "                         only model's, else detected per line\n"
    "  --to LANG              target language; default: the only model's, else English,\n"
    "                         or for English text the one language English goes into\n"
    "  --models DIR           directory of model directories named SRC-TGT (default\n"
    "                         $FANYI_MODELS_DIR, else ~/.local/share/fanyi/models)\n"
    "  --model DIR            use this one model directory ($FANYI_MODEL_DIR)\n"
    "  --threads N            worker threads translating batches concurrently (default 1)\n"
    "  --helper-threads N     threads that join the workers' matrix products while\n"
    "                         cores are idle, 0 .. 3 (default 0: for latency on an\n"
    "                         idle machine, see fanyi serve --help)\n"
    "  --batch N              sentences per batch (default 16)\n"
    "  --device D             where to translate: cpu (default), vulkan:N, auto, or a\n"
    "                         list (see fanyi devices); every device gives the same output\n"
    "  --raw                  each line is exactly one sentence; output untouched\n"
    "  --html                 the whole input is one HTML document: text is translated,\n"
    "                         markup kept\n"
    "  --no-shortlist         score the whole vocabulary even if the model has a shortlist\n"
    "  --max-length-factor F  output tokens <= F x source tokens (default 2.0)\n"
    "  --beam N               beam search keeping N hypotheses per sentence, 1 .. 16\n"
    "                         (default 1: greedy); the best translation is printed\n"
    "  --min-gap              after each translation print a TAB and the smallest\n"
    "                         margin of a decision in its search: top-1 minus top-2\n"
    "                         logit (greedy), or the closest call of the beam search\n"
    "  --glossary FILE        terms the translations must use: a TSV (source TAB\n"
    "                         target per line) or, for a .csv file, CSV glossary, as\n"
    "                         DeepL's; an empty target keeps the term as it is\n"
    "                         (lines of stdin, or the --file document)\n"
    "  --strict               stop at the first line that is not UTF-8 text, after\n"
    "                         printing every line before it (default: print it as it\n"
    "                         came and go on)\n"
    "  --file IN              translate the document IN (.txt .md .html .srt .vtt\n"
    "                         .docx .odt .pptx .epub .pdf) keeping its formatting\n"
    "  -o, --output OUT       where to write it (default: IN's name with the target\n"
    "                         language: report.docx -> report.en.docx; - for stdout)\n"
    "  --bilingual            PDF: every page followed by its translation\n"
    "                         (default OUT: report.en.bilingual.pdf)\n"
    "  --force                replace OUT if it exists (default: refuse)\n"
    "  --max-document-mb N    the largest document --file reads, in MiB (default 20)\n"
    "  --max-document-chars N characters of text in it (default 1000000)\n"
    "\n"
    "On a terminal, long work shows its progress on stderr.\n"
    "Exit status: 0 every line translated (or passed through: nothing to translate),\n"
    "1 stopped by an error (named on stderr; every line before it is printed),\n"
    "2 bad usage, 3 done, but lines that are not UTF-8 text were passed through\n"
    "untranslated (each named on stderr).\n";

typedef struct opts {
    const char *model, *models, *from, *to, *file, *output, *device, *glossary_file;
    fy_glossary *glossary; /* --glossary, for the lines' direction */
    long threads, batch, beam, doc_mb, doc_chars, helpers;
    int raw, html, min_gap, strict, force, bilingual;
    fy_translator_options topt;
} opts;

enum {
    OPT_STRICT = 256,
    OPT_FORCE,
    OPT_DOC_MB,
    OPT_DOC_CHARS,
    OPT_DEVICE,
    OPT_GLOSSARY,
    OPT_HELPERS
};

static int parse_opts(int argc, char **argv, opts *o)
{
    static const struct option longopts[] = {
        {"model", required_argument, NULL, 'm'},
        {"models", required_argument, NULL, 'M'},
        {"from", required_argument, NULL, 'F'},
        {"to", required_argument, NULL, 'T'},
        {"threads", required_argument, NULL, 't'},
        {"helper-threads", required_argument, NULL, OPT_HELPERS},
        {"batch", required_argument, NULL, 'b'},
        {"raw", no_argument, NULL, 'r'},
        {"html", no_argument, NULL, 'H'},
        {"no-shortlist", no_argument, NULL, 'S'},
        {"max-length-factor", required_argument, NULL, 'f'},
        {"min-gap", no_argument, NULL, 'g'},
        {"beam", required_argument, NULL, 'B'},
        {"file", required_argument, NULL, 'i'},
        {"output", required_argument, NULL, 'o'},
        {"strict", no_argument, NULL, OPT_STRICT},
        {"force", no_argument, NULL, OPT_FORCE},
        {"max-document-mb", required_argument, NULL, OPT_DOC_MB},
        {"max-document-chars", required_argument, NULL, OPT_DOC_CHARS},
        {"device", required_argument, NULL, OPT_DEVICE},
        {"glossary", required_argument, NULL, OPT_GLOSSARY},
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
        case OPT_HELPERS:
            if (cli_parse_long(CMD, "--helper-threads", optarg, 0, FY_PAR_MAX_HELPERS, &o->helpers))
                return 2;
            break;
        case OPT_STRICT:
            o->strict = 1;
            break;
        case OPT_FORCE:
            o->force = 1;
            break;
        case OPT_DOC_MB:
            if (cli_parse_long(CMD, "--max-document-mb", optarg, 1, 4096, &o->doc_mb)) return 2;
            break;
        case OPT_DEVICE:
            o->device = optarg;
            break;
        case OPT_GLOSSARY:
            o->glossary_file = optarg;
            break;
        case OPT_DOC_CHARS:
            if (cli_parse_long(CMD, "--max-document-chars", optarg, 1, 100000000, &o->doc_chars))
                return 2;
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
    if (!o->file && (o->force || o->doc_mb || o->doc_chars))
        return cli_usage_error(CMD, "--force and --max-document-* go with --file IN");
    if (o->file && o->strict) return cli_usage_error(CMD, "--strict goes with stdin, not --file");
    if (o->bilingual && !o->file) return cli_usage_error(CMD, "--bilingual needs --file IN");
    if (o->model && o->models)
        return cli_usage_error(CMD, "--model and --models exclude each other");
    return -1;
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
    size_t lines;      /* lines finished so far */
    size_t not_text;   /* lines passed through: they are not UTF-8 text */
    size_t first_bad;  /* the first of them (a line number) */
    size_t named_line; /* the last of them named on stderr */
    cli_progress *pg;  /* cleared before a message */
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

/* Warnings name at most this many lines; the summary at the end counts all. */
#define NAMED_LINES 10

/* Prints piece p, which is not UTF-8 text, as it came (with the white space
 * a cut took out before it), and names its line (bad: the offending byte's
 * offset in the piece). */
static void pass_piece(printer *pr, const piece *p, size_t bad)
{
    size_t line = pr->lines + 1;
    if (pr->named_line != line) { /* a long line's pieces count once */
        cli_progress_done(pr->pg);
        if (++pr->not_text == 1) pr->first_bad = line;
        if (pr->not_text <= NAMED_LINES)
            fprintf(stderr,
                    "fanyi translate: line %zu: not UTF-8 text (byte %zu); passed through "
                    "untranslated\n",
                    line, p->at + bad);
        else if (pr->not_text == NAMED_LINES + 1)
            fprintf(stderr, "fanyi translate: more lines are not UTF-8 text; counted at the end\n");
        pr->named_line = line;
    }
    if (p->after == CUT_SPACE && p->gap_len) fwrite(p->gap, 1, p->gap_len, stdout);
    fwrite(p->text, 1, p->len, stdout);
    pr->last = p->len ? last_cp(p->text, p->len) : pr->last;
    if (!p->ends_line) return;
    fputc('\n', stdout);
    pr->last = 0;
    pr->gap = INFINITY;
    pr->lines++;
}

/* What a piece is, before the pipeline sees it. */
enum { PIECE_TEXT, PIECE_NUL, PIECE_NOT_UTF8 };

/* *at: the offending byte's offset in the piece. */
static int classify(const piece *p, size_t *at)
{
    const char *nul = p->len ? memchr(p->text, '\0', p->len) : NULL;
    if (nul) {
        *at = (size_t)(nul - p->text);
        return PIECE_NUL;
    }
    return fy_utf8_valid(p->text, p->len, at) ? PIECE_TEXT : PIECE_NOT_UTF8;
}

/* Where a block stops, and why: a piece that ends the run (stop < n). */
typedef struct stop {
    size_t at;  /* the piece */
    int kind;   /* PIECE_NUL, PIECE_NOT_UTF8 (--strict, --html) or PIECE_TEXT (the
                   pipeline refused it: msg) */
    size_t bad; /* the offending byte's offset in the piece */
    char msg[FY_ERROR_MSG_MAX];
} stop;

/* The request for the text pieces of b before st->at (their indexes in
 * idx[0..*m)); a text the pipeline refuses moves the stop to it and the
 * request is made again for the pieces before it. NULL with *m 0 when
 * there is nothing to translate; NULL with a message for other errors. */
static fy_request *make_request(const opts *o, fy_registry *reg, block *b, stop *st, size_t *idx,
                                size_t *m, int *failed, cli_progress *pg)
{
    const char *texts[4096];
    size_t lens[4096];
    for (size_t k = 0; k < *m; k++) texts[k] = b->p[idx[k]].text, lens[k] = b->p[idx[k]].len;
    fy_request_options ro = {.source = o->from,
                             .target = o->to,
                             .html = o->html,
                             .raw = o->raw,
                             .beam = (int)o->beam,
                             .glossaries = (const struct fy_glossary *const *)&o->glossary,
                             .nglossaries = o->glossary ? 1 : 0};
    *failed = 0;
    while (*m) {
        fy_error err = {0};
        size_t bad;
        fy_request *q = fy_request_new(reg, texts, lens, *m, &ro, &bad, &err);
        if (q) return q;
        if (bad >= *m || o->html) { /* not one text's fault: nothing of the block goes */
            cli_progress_done(pg);
            fprintf(stderr, "fanyi translate: %s\n", err.msg);
            *failed = 1;
            return NULL;
        }
        st->at = idx[bad];
        st->kind = PIECE_TEXT;
        snprintf(st->msg, sizeof st->msg, "%s", err.msg);
        *m = bad;
    }
    return NULL;
}

/* Waits for request q on sched. 0, or an error code with err. */
static int run_request(fy_request *q, fy_scheduler *sched, fy_error *err)
{
    waiter w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
    fy_request_callbacks cb = {NULL, on_done, &w};
    int rc = fy_request_submit(q, sched, &cb, err);
    if (rc) return rc;
    pthread_mutex_lock(&w.mu);
    while (!w.done) pthread_cond_wait(&w.cv, &w.mu);
    pthread_mutex_unlock(&w.mu);
    if ((rc = w.status)) fy_request_status(q, err);
    return rc;
}

/* Says why the run stops at st (every piece before it is printed). */
static void report_stop(const opts *o, const printer *pr, const piece *p, const stop *st)
{
    cli_progress_done(pr->pg);
    char where[64] = "";
    if (!o->html) snprintf(where, sizeof where, "line %zu: ", pr->lines + 1);
    if (st->kind == PIECE_NUL)
        fprintf(stderr, "fanyi translate: %sNUL byte at byte %zu\n", where, p->at + st->bad);
    else if (st->kind == PIECE_NOT_UTF8)
        fprintf(stderr, "fanyi translate: %snot UTF-8 text (byte %zu)%s\n", where, p->at + st->bad,
                o->strict ? "; stopped there (--strict)" : "; convert it to UTF-8");
    else
        fprintf(stderr, "fanyi translate: %s%s\n", where, st->msg);
}

/* Translates and prints block b: its text pieces in one request, the ones
 * that are not UTF-8 text as they came, up to the first piece that stops
 * the run. 0, or 1 after a message. */
static int translate_block(const opts *o, fy_registry *reg, fy_scheduler *sched, block *b,
                           printer *pr)
{
    size_t idx[4096], m = 0, bad;
    stop st = {.at = b->n};
    for (size_t i = 0; i < b->n && st.at == b->n; i++) {
        int kind = classify(&b->p[i], &bad);
        if (kind == PIECE_TEXT)
            idx[m++] = i;
        else if (kind == PIECE_NUL || o->strict || o->html)
            st = (stop){.at = i, .kind = kind, .bad = bad};
    }
    int failed;
    fy_request *q = make_request(o, reg, b, &st, idx, &m, &failed, pr->pg);
    if (failed) return 1;
    fy_error err = {0};
    int rc = q ? run_request(q, sched, &err) : 0;
    for (size_t i = 0, k = 0; !rc && i < st.at; i++) {
        if (k < m && idx[k] == i) {
            size_t len;
            char *text = fy_request_text(q, k, &len, NULL, &err);
            if (!text) {
                rc = err.code;
                break;
            }
            print_piece(o, pr, q, k++, &b->p[i], text, len);
            free(text);
        } else {
            classify(&b->p[i], &bad);
            pass_piece(pr, &b->p[i], bad);
        }
    }
    fy_request_free(q);
    if (rc) {
        cli_progress_done(pr->pg);
        fprintf(stderr, "fanyi translate: %s\n", err.msg);
        return 1;
    }
    if (st.at == b->n) return 0;
    fflush(stdout);
    report_stop(o, pr, &b->p[st.at], &st);
    return 1;
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

/* Draws how far the run is: lines done, and of how much when stdin is a file. */
static void draw_progress(cli_progress *pg, const printer *pr, const reader *r, int64_t total)
{
    char done[32], all[32];
    cli_size(r->consumed, done, sizeof done);
    if (total > 0)
        cli_progress_draw(pg, 0, "fanyi translate: %zu lines, %s of %s (%d%%)", pr->lines, done,
                          cli_size((uint64_t)total, all, sizeof all),
                          (int)((double)r->consumed * 100.0 / (double)total));
    else
        cli_progress_draw(pg, 0, "fanyi translate: %zu lines (%s read)", pr->lines, done);
}

/* The size of stdin when it is a file (for progress), else -1. */
static int64_t input_size(void)
{
    struct stat st;
    if (fstat(STDIN_FILENO, &st) || !S_ISREG(st.st_mode)) return -1;
    off_t at = lseek(STDIN_FILENO, 0, SEEK_CUR);
    return (int64_t)st.st_size - (at > 0 ? at : 0);
}

/* The last word on lines passed on untranslated: how many, and what to do. */
static int summary(const printer *pr)
{
    if (!pr->not_text) return 0;
    fprintf(
        stderr,
        "fanyi translate: %zu line%s (the first: line %zu) %s not UTF-8 text and %s passed through "
        "untranslated; if the input is in another encoding, convert it first (iconv -f "
        "GB18030 -t UTF-8)\n",
        pr->not_text, pr->not_text == 1 ? "" : "s", pr->first_bad, pr->not_text == 1 ? "is" : "are",
        pr->not_text == 1 ? "was" : "were");
    return 3;
}

/* --glossary FILE for o's languages (any, where not given): 0, or 2 after
 * a message naming the file and the line. */
static int load_glossary(opts *o)
{
    enum { GLOSSARY_FILE_MAX = 32 << 20 };
    if (!o->glossary_file) return 0;
    FILE *f = fopen(o->glossary_file, "rb");
    char *text = f ? malloc(GLOSSARY_FILE_MAX + 1) : NULL;
    size_t n = text ? fread(text, 1, GLOSSARY_FILE_MAX + 1, f) : 0;
    int e = errno, failed = f && ferror(f);
    if (f) fclose(f);
    fy_error err = {0};
    if (!f || !text || failed || n > GLOSSARY_FILE_MAX) {
        fprintf(stderr, "fanyi translate: --glossary %s: %s\n", o->glossary_file,
                !f || failed ? strerror(e)
                : !text      ? "out of memory"
                             : "larger than 32 MiB");
        free(text);
        return 2;
    }
    size_t len = strlen(o->glossary_file);
    int csv = len > 4 && !strcasecmp(o->glossary_file + len - 4, ".csv");
    o->glossary = fy_glossary_new(o->from, o->to, &err);
    int rc =
        !o->glossary ||
        fy_glossary_parse(o->glossary, text, n, csv ? FY_GLOSSARY_CSV : FY_GLOSSARY_TSV, &err) ||
        fy_glossary_compile(o->glossary, &err);
    free(text);
    if (!rc) return 0;
    fprintf(stderr, "fanyi translate: --glossary %s: %s\n", o->glossary_file, err.msg);
    return 2;
}

static int run(opts *o, fy_scheduler *sched, fy_registry *reg)
{
    fy_direction_info d;
    default_languages(reg, o, &d);
    if (load_glossary(o)) return 2;
    reader r = {.in = stdin, .piece = lr_piece_bytes(), .whole_lines = o->raw, .after = CUT_LINE};
    /* Sentence ends are the same for every language but for the spans a
     * source protects: unknown (detected per line), cut as English is. */
    char from[FY_LANG_MAX];
    r.source = o->from && fy_lang_normalize(o->from, from) == 0 ? from : "en";
    int interactive = isatty(STDIN_FILENO);
    block b = {0};
    b.cap = o->html ? 1 : interactive ? 1 : (size_t)(o->batch * o->threads * 4);
    if (b.cap > 4096) b.cap = 4096;
    b.p = calloc(b.cap, sizeof *b.p);
    /* Progress when the output goes elsewhere than the terminal: there the
     * translations themselves show it. */
    cli_progress pg;
    cli_progress_start(&pg, !interactive && !isatty(STDOUT_FILENO));
    printer pr = {0, INFINITY, 0, 0, 0, 0, &pg};
    int64_t total = pg.on ? input_size() : -1;
    int rc = b.p ? 0 : 1;
    if (rc) fprintf(stderr, "fanyi translate: out of memory\n");
    while (!rc) {
        long n = lr_block_read(&b, &r, o->html);
        if (n < 0) {
            cli_progress_done(&pg);
            fprintf(stderr, "fanyi translate: reading stdin: %s\n", strerror(errno));
            rc = 1;
        }
        if (n <= 0) break;
        rc = translate_block(o, reg, sched, &b, &pr);
        /* A reader that went away, a full disk: say so and stop translating. */
        if (fflush(stdout) != 0 || ferror(stdout)) {
            cli_progress_done(&pg);
            fprintf(stderr, "fanyi translate: write error: %s\n", strerror(errno));
            rc = 1;
        }
        if (!rc) draw_progress(&pg, &pr, &r, total);
    }
    cli_progress_done(&pg);
    if (!rc) rc = summary(&pr);
    lr_block_clear(&b);
    free(b.p);
    lr_reader_free(&r);
    return rc;
}

int cmd_translate(int argc, char **argv)
{
    /* No helpers by default: a batch tool often shares the machine, where
     * a helper that loses its core stalls its worker (docs/performance.md,
     * "One sentence on two cores"). */
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
    fy_nn_dev **devs = NULL;
    int ndevs = 0;
    if (cli_open_devices(o.device ? o.device : "cpu", (int)o.threads, 1, 0, &so, &devs, &ndevs,
                         &err) < 0) {
        fprintf(stderr, "fanyi translate: --device %s: %s\n", o.device, err.msg);
        return 2;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    fy_scheduler *sched = cli_start_helpers(devs, ndevs, o.helpers, cores, &err) < 0
                              ? NULL
                              : fy_scheduler_open(&so, &err);
    fy_registry *reg = sched ? open_registry(&o, sched, &err) : NULL;
    if (!reg) {
        fprintf(stderr, "fanyi translate: %s\n", err.msg);
        fy_scheduler_free(sched);
        fy_nn_cpu_helpers(0, 0, &err);
        fy_nn_devices_close(devs, ndevs);
        return 1;
    }
    if (o.file) {
        fy_direction_info d;
        default_languages(reg, &o, &d);
        rc = load_glossary(&o);
        cli_file_options fo = {.in = o.file,
                               .out = o.output,
                               .from = o.from,
                               .to = o.to,
                               .force = o.force,
                               .max_mb = o.doc_mb,
                               .max_chars = o.doc_chars,
                               .bilingual = o.bilingual,
                               .glossary = o.glossary};
        if (!rc) rc = cli_translate_file(&fo, sched, reg);
    } else {
        rc = run(&o, sched, reg);
    }
    fy_registry_free(reg);
    fy_scheduler_free(sched);
    fy_nn_cpu_helpers(0, 0, &err);
    fy_nn_devices_close(devs, ndevs);
    fy_glossary_unref(o.glossary);
    if (fclose(stdout) != 0 && !rc) {
        fprintf(stderr, "fanyi translate: write error: %s\n", strerror(errno));
        rc = 1;
    }
    return rc;
}
