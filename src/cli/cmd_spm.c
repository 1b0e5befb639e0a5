/* cmd_spm.c - `fanyi spm encode|decode`: SentencePiece from stdin to stdout.
 *
 * A debugging tool that behaves line for line like Google's spm_encode
 * (--output_format=id|piece) and spm_decode (--input_format=id|piece), so
 * that the parity tests can compare whole files with the reference.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "util/buf.h"
#include "text/spm.h"

static const char encode_usage[] =
    "usage: fanyi spm encode --vocab FILE [--output-format id|piece]\n\n"
    "Reads UTF-8 lines from stdin and writes one line of SentencePiece ids or\n"
    "pieces (space-separated) per input line to stdout, like spm_encode.\n\n"
    "options:\n"
    "  --vocab FILE            the SentencePiece model (vocab.*.spm)\n"
    "  --output-format FMT     id or piece (default: piece)\n";

static const char decode_usage[] =
    "usage: fanyi spm decode --vocab FILE [--input-format id|piece]\n\n"
    "Reads lines of space-separated ids or pieces from stdin and writes the\n"
    "decoded text, one line each, to stdout, like spm_decode.\n\n"
    "options:\n"
    "  --vocab FILE            the SentencePiece model (vocab.*.spm)\n"
    "  --input-format FMT      id or piece (default: piece)\n";

/* Growable scratch reused across lines. */
typedef struct scratch {
    void *p;
    size_t cap; /* bytes */
} scratch;

static void *scratch_get(scratch *s, size_t bytes)
{
    return fy_vec_reserve(&s->p, &s->cap, bytes, 1) ? NULL : s->p;
}

static void put_ids(const int32_t *ids, long n, FILE *out)
{
    char buf[16];
    for (long i = 0; i < n; i++) {
        /* Faster than printf on the million-line parity files. */
        int v = ids[i], k = sizeof buf;
        unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
        do buf[--k] = (char)('0' + u % 10);
        while ((u /= 10));
        if (v < 0) buf[--k] = '-';
        if (i) putc_unlocked(' ', out);
        fwrite(buf + k, 1, sizeof buf - (size_t)k, out);
    }
    putc_unlocked('\n', out);
}

static int encode_lines(const fy_spm *spm, int as_ids)
{
    char *line = NULL;
    size_t line_cap = 0;
    ssize_t len;
    scratch buf = {0};
    long lineno = 0;
    int rc = 0;
    fy_error err = {0};
    while ((len = getline(&line, &line_cap, stdin)) >= 0) {
        lineno++;
        if (len > 0 && line[len - 1] == '\n') len--;
        long n;
        size_t want = (size_t)len * 2 + 64;
        for (;;) {
            void *p = scratch_get(&buf, want);
            if (!p) {
                n = fy_err(&err, FY_ENOMEM, "out of memory");
                break;
            }
            if (as_ids)
                n = fy_spm_encode(spm, line, (size_t)len, p, buf.cap / sizeof(int32_t), &err);
            else
                n = fy_spm_encode_pieces(spm, line, (size_t)len, p, buf.cap, &err);
            size_t need = as_ids ? (size_t)n * sizeof(int32_t) : (size_t)n + 1;
            if (n < 0 || need <= buf.cap) break;
            want = need;
        }
        if (n < 0) {
            fprintf(stderr, "fanyi spm: line %ld: %s\n", lineno, err.msg);
            rc = 1;
            break;
        }
        if (as_ids) {
            put_ids(buf.p, n, stdout);
        } else {
            fwrite(buf.p, 1, (size_t)n, stdout);
            putc_unlocked('\n', stdout);
        }
    }
    free(line);
    free(buf.p);
    return rc;
}

/* Splits line at spaces into its non-empty fields (spm_decode's StrSplit
 * drops empty ones). Returns the count; 0 fields is a valid result, so
 * failure is reported through *ok. */
static size_t split(char *line, size_t len, scratch *ptrs, scratch *lens, int *ok)
{
    size_t n = 1;
    for (size_t i = 0; i < len; i++) n += line[i] == ' ';
    const char **p = scratch_get(ptrs, n * sizeof *p);
    size_t *l = scratch_get(lens, n * sizeof *l);
    *ok = p && l;
    if (!*ok) return 0;
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || line[i] == ' ') {
            if (i > start) {
                p[k] = line + start;
                l[k++] = i - start;
            }
            start = i + 1;
        }
    }
    return k;
}

static int decode_line(const fy_spm *spm, int from_ids, char *line, size_t len, scratch *sc,
                       scratch *out, fy_error *err)
{
    int ok;
    size_t n = split(line, len, &sc[0], &sc[1], &ok);
    int32_t *ids = scratch_get(&sc[2], (n + 1) * sizeof *ids);
    if (!ok || !ids) return fy_err(err, FY_ENOMEM, "out of memory");
    const char **p = sc[0].p;
    if (from_ids) {
        const size_t *l = sc[1].p;
        for (size_t i = 0; i < n; i++) {
            /* atoi on the field alone, as spm_decode: "" and junk read as 0. */
            char *end = (char *)p[i] + l[i], save = *end;
            *end = '\0';
            ids[i] = (int32_t)strtol(p[i], NULL, 10);
            *end = save;
        }
    }
    long r;
    size_t want = len * 4 + 64;
    for (;;) {
        char *o = scratch_get(out, want);
        if (!o) return fy_err(err, FY_ENOMEM, "out of memory");
        r = from_ids ? fy_spm_decode(spm, ids, n, o, out->cap, err)
                     : fy_spm_decode_pieces(spm, p, sc[1].p, n, o, out->cap, err);
        if (r < 0 || (size_t)r < out->cap) break;
        want = (size_t)r + 1;
    }
    if (r < 0) return (int)r;
    fwrite(out->p, 1, (size_t)r, stdout);
    putc_unlocked('\n', stdout);
    return 0;
}

static int decode_lines(const fy_spm *spm, int from_ids)
{
    char *line = NULL;
    size_t line_cap = 0;
    ssize_t len;
    scratch sc[3] = {{0}}, out = {0};
    long lineno = 0;
    int rc = 0;
    fy_error err = {0};
    while ((len = getline(&line, &line_cap, stdin)) >= 0) {
        lineno++;
        if (len > 0 && line[len - 1] == '\n') len--;
        if (decode_line(spm, from_ids, line, (size_t)len, sc, &out, &err)) {
            fprintf(stderr, "fanyi spm: line %ld: %s\n", lineno, err.msg);
            rc = 1;
            break;
        }
    }
    free(line);
    for (int i = 0; i < 3; i++) free(sc[i].p);
    free(out.p);
    return rc;
}

static int run_verb(int argc, char **argv, int encode)
{
    const char *cmd = encode ? "spm encode" : "spm decode";
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
                                         {"vocab", required_argument, NULL, 'v'},
                                         {"output-format", required_argument, NULL, 'o'},
                                         {"input-format", required_argument, NULL, 'i'},
                                         {0}};
    const char *vocab = NULL, *format = "piece";
    int c;
    while ((c = cli_getopt(argc, argv, cmd, "h", opts)) != -1) {
        if (c == 'h') {
            fputs(encode ? encode_usage : decode_usage, stdout);
            return 0;
        } else if (c == 'v') {
            vocab = optarg;
        } else if ((c == 'o' && encode) || (c == 'i' && !encode)) {
            format = optarg;
        } else if (c == 'o' || c == 'i') {
            return cli_usage_error(cmd, "unknown option '--%s-format'",
                                   c == 'o' ? "output" : "input");
        } else {
            return 2;
        }
    }
    if (optind < argc) return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (!vocab) return cli_usage_error(cmd, "--vocab FILE is required");
    if (strcmp(format, "id") && strcmp(format, "piece"))
        return cli_usage_error(cmd, "format must be id or piece, not '%s'", format);
    fy_error err = {0};
    fy_spm *spm = fy_spm_open(vocab, &err);
    if (!spm) {
        fprintf(stderr, "fanyi spm: %s\n", err.msg);
        return 1;
    }
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    int as_ids = !strcmp(format, "id");
    int rc = encode ? encode_lines(spm, as_ids) : decode_lines(spm, as_ids);
    if (fflush(stdout) != 0 && rc == 0) {
        fprintf(stderr, "fanyi spm: cannot write the output\n");
        rc = 1;
    }
    fy_spm_free(spm);
    return rc;
}

int cmd_spm(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "encode")) return run_verb(argc - 1, argv + 1, 1);
    if (argc >= 2 && !strcmp(argv[1], "decode")) return run_verb(argc - 1, argv + 1, 0);
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: fanyi spm encode --vocab FILE [--output-format id|piece]\n"
               "       fanyi spm decode --vocab FILE [--input-format id|piece]\n\n"
               "SentencePiece tokenisation of stdin, line by line, like spm_encode and\n"
               "spm_decode. Run 'fanyi spm encode --help' for details.\n");
        return 0;
    }
    if (argc < 2) return cli_usage_error("spm", "expected 'encode' or 'decode'");
    if (argv[1][0] == '-') return cli_usage_error("spm", "unknown option '%s'", argv[1]);
    return cli_usage_error("spm", "unknown command '%s'", argv[1]);
}
