/* glossary_bench.c - what a glossary adds to the text pipeline around the
 * engine (not a test; bench/glossary runs it):
 *
 *     build/tests/text/glossary_bench TERMS.tsv LINES.txt [SECONDS]
 *
 * Reads the glossary (en -> zh) and compiles it (timed), then splits every
 * line for en -> zh and joins it with a "translation" (each sentence's
 * engine text in capitals, so the join has to find the terms again and
 * repair their case: its slow path), without and with the glossary, in
 * rounds for about SECONDS (default 2) each, alternating. Prints one JSON
 * line: the compile time, and the microseconds per line of split + join
 * each way. The engine's time per sentence, which these add to, is
 * measured by `fanyi bench` (bench/glossary combines them).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "text/glossary.h"
#include "text/segment.h"
#include "read_file.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Splits and joins every line once; returns the time taken. */
static double round_once(char **lines, size_t n, const fy_glossary *g, size_t *checksum)
{
    double t0 = now_s();
    for (size_t i = 0; i < n; i++) {
        fy_split_options o;
        fy_split_options_default(&o);
        o.source = "en";
        o.target = "zh";
        o.glossary = g;
        fy_doc *d = fy_doc_split(lines[i], strlen(lines[i]), &o, NULL);
        if (!d) continue;
        size_t m = fy_doc_sentence_count(d);
        char **tr = calloc(m ? m : 1, sizeof *tr);
        for (size_t k = 0; k < m; k++) {
            tr[k] = strdup(fy_doc_sentence(d, k, NULL));
            for (char *p = tr[k]; *p; p++) *p = (char)toupper((unsigned char)*p);
        }
        char *out = fy_doc_join(d, (const char *const *)tr, NULL);
        *checksum += out ? strlen(out) : 0;
        free(out);
        for (size_t k = 0; k < m; k++) free(tr[k]);
        free(tr);
        fy_doc_free(d);
    }
    return now_s() - t0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: glossary_bench TERMS.tsv LINES.txt [SECONDS]\n");
        return 2;
    }
    double secs = argc > 3 ? atof(argv[3]) : 2.0;
    size_t tlen, llen;
    char *terms = read_file(argv[1], &tlen), *text = read_file(argv[2], &llen);
    if (!terms || !text) {
        fprintf(stderr, "cannot read %s\n", terms ? argv[2] : argv[1]);
        return 1;
    }
    fy_error err = {0};
    double t0 = now_s();
    fy_glossary *g = fy_glossary_new("en", "zh", &err);
    if (!g || fy_glossary_parse(g, terms, tlen, FY_GLOSSARY_TSV, &err) ||
        fy_glossary_compile(g, &err)) {
        fprintf(stderr, "%s: %s\n", argv[1], err.msg);
        return 1;
    }
    double build = now_s() - t0;
    size_t n = 0, cap = 1024;
    char **lines = malloc(cap * sizeof *lines);
    for (char *p = strtok(text, "\n"); p; p = strtok(NULL, "\n")) {
        if (n == cap) lines = realloc(lines, (cap *= 2) * sizeof *lines);
        lines[n++] = p;
    }
    double plain = 0, with = 0;
    size_t rounds = 0, sum = 0;
    round_once(lines, n, NULL, &sum); /* warm up */
    round_once(lines, n, g, &sum);
    while (plain + with < 2 * secs || rounds < 3) {
        plain += round_once(lines, n, NULL, &sum);
        with += round_once(lines, n, g, &sum);
        rounds++;
    }
    double per = (double)(rounds * n);
    printf("{\"terms\":%zu,\"lines\":%zu,\"rounds\":%zu,\"compile_ms\":%.3f,"
           "\"plain_us_per_line\":%.2f,\"glossary_us_per_line\":%.2f,\"checksum\":%zu}\n",
           fy_glossary_count(g), n, rounds, build * 1e3, plain / per * 1e6, with / per * 1e6, sum);
    fy_glossary_unref(g);
    free(lines);
    free(terms);
    free(text);
    return 0;
}
