/* test_text_lang.c - the text pipeline for any source and target language, and
 * language detection.
 *
 * Tables of real sentences (tests/data/text/): English and other sources'
 * sentence splitting (en_split_cases.txt), the Chinese clean-up
 * (zh_cleanup_cases.txt), joins into CJK and other targets (join_cases.txt),
 * detection (detect_cases.txt). Properties: identity round trips for every
 * source language and raw mode, fy_doc_render_sentence equal to the join's
 * piece of the output for every sentence of the corpus files and of random
 * documents, token counts measured once per ordinary sentence.
 */
#include "text/detect.h"
#include "text/segment.h"
#include "text/text_internal.h"
#include "util/lang.h"
#include "util/lang_rules.h"
#include "harness.h"

#include <dirent.h>
#include <pthread.h>
#include <stdint.h>

static fy_doc *split_lang(const char *s, size_t len, const char *src, const char *tgt, int html,
                          int raw, int max_tokens)
{
    fy_split_options o;
    fy_split_options_default(&o);
    o.source = src, o.target = tgt, o.html = html, o.raw = raw;
    if (max_tokens) o.max_tokens = max_tokens;
    fy_error e = {0};
    fy_doc *d = fy_doc_split(s, len, &o, &e);
    if (!d) printf("  split error: %s\n", e.msg);
    return d;
}

/* Split + NULL join in both join modes gives s back exactly. */
static int round_trip(const char *s, size_t len, const char *src, int html, int raw, int max)
{
    fy_doc *d = split_lang(s, len, src, "en", html, raw, max);
    if (!d) return 0;
    int ok = 1;
    for (int mode = 0; mode < 2 && ok; mode++) {
        size_t n;
        char *j = fy_doc_join_ex(d, NULL, mode ? 0 : FY_JOIN_RAW, &n, NULL, NULL);
        ok = j && n == len && memcmp(j, s, len) == 0;
        free(j);
    }
    for (size_t i = 0; i < fy_doc_sentence_count(d) && ok; i++)
        ok = fy_doc_sentence_tokens(d, i) >= 1;
    fy_doc_free(d);
    return ok;
}

/* fy_doc_join_before for every sentence, and after the last, is exactly
 * what the join has around the sentences' spans (out, spans): a stream of
 * them and the renderings is the join. Sentences that render as nothing
 * are the documented exception and skip the check of what follows them. */
static int stream_matches(const fy_doc *d, const char *const *tr, const char *out, size_t len,
                          const size_t *spans)
{
    size_t n = fy_doc_sentence_count(d), at = 0;
    int ok = 1;
    for (size_t k = 0; k <= n && ok; k++) {
        size_t bl, end = k < n ? spans[2 * k] : len;
        char *b = fy_doc_join_before(d, k, k && tr ? tr[k - 1] : NULL, k < n && tr ? tr[k] : NULL,
                                     &bl, NULL);
        int empty_prev = k > 0 && spans[2 * (k - 1) + 1] == 0;
        ok = b && (empty_prev || (at + bl == end && memcmp(out + at, b, bl) == 0));
        if (!ok)
            printf("  before sentence %zu: \"%s\", joined as \"%.*s\"\n", k, b ? b : "(null)",
                   (int)(end > at ? end - at : 0), out + at);
        free(b);
        if (k < n) at = spans[2 * k] + spans[2 * k + 1];
    }
    return ok;
}

/* For every sentence i: fy_doc_render_sentence(tr[i]) is the piece of the
 * join that out_spans gives for it. */
static int render_matches(const fy_doc *d, const char *const *tr)
{
    size_t n = fy_doc_sentence_count(d), len;
    size_t *spans = calloc(2 * n + 1, sizeof *spans);
    char *out = fy_doc_join_ex(d, tr, 0, &len, spans, NULL);
    int ok = out != NULL;
    for (size_t i = 0; i < n && ok; i++) {
        size_t rl;
        char *r = fy_doc_render_sentence(d, i, tr ? tr[i] : NULL, &rl, NULL);
        ok = r && rl == spans[2 * i + 1] && spans[2 * i] + rl <= len &&
             memcmp(out + spans[2 * i], r, rl) == 0;
        if (!ok)
            printf("  sentence %zu renders as \"%s\", joined as \"%.*s\"\n", i, r ? r : "",
                   (int)spans[2 * i + 1], out + spans[2 * i]);
        free(r);
    }
    ok = ok && stream_matches(d, tr, out, len, spans);
    free(out);
    free(spans);
    return ok;
}

/* ---- splitting ------------------------------------------------------------- */

static void split_case(const test_case *c, void *arg)
{
    (void)arg;
    char src[16];
    const char *lang = case_option(c->name, "src=", "en", src, sizeof src);
    int html = strstr(c->name, " html") != NULL;
    if (c->nparts != 2) {
        check(0, "split case %s: no \"---\"", c->name);
        return;
    }
    fy_doc *d = split_lang(c->part[0], strlen(c->part[0]), lang, "zh", html, 0, 0);
    char got[8192] = "";
    size_t k = 0;
    for (size_t i = 0; d && i < fy_doc_sentence_count(d); i++)
        k += (size_t)snprintf(got + k, sizeof got - k, "%s%s", i ? "\n" : "",
                              fy_doc_sentence(d, i, NULL));
    if (d && !fy_doc_sentence_count(d)) snprintf(got, sizeof got, "(none)");
    check(d && !strcmp(got, c->part[1]), "split %s:\n%s\n-- want\n%s", c->name, got, c->part[1]);
    check(round_trip(c->part[0], strlen(c->part[0]), lang, html, 0, 0), "split %s: round trip",
          c->name);
    fy_doc_free(d);
}

static void test_split_file(const char *dir)
{
    char path[8192];
    size_t len;
    snprintf(path, sizeof path, "%s/en_split_cases.txt", dir);
    char *text = read_file(path, &len);
    check(text != NULL, "read %s", path);
    if (!text) return;
    int n = for_each_case(text, split_case, NULL);
    check(n >= 40, "en_split_cases.txt has %d cases", n);
    printf("split cases: %d\n", n);
    free(text);
}

/* What is text to translate, per source language. */
static void test_sources(void)
{
    static const struct {
        const char *src, *text;
        size_t sentences;
    } cases[] = {
        {"en", "Hello", 1},        {"en", "12345 !!! 3.14", 0}, {"en", "https://x.com/a", 0},
        {"en", "你好，世界。", 0}, {"en", "`make install`", 0}, {"en", "50% 3.5GHz", 0},
        {"en", "a@b.cc", 0},       {"en", "iPhone", 1},         {"en", "ＡＢＣ", 1},
        {"de", "Straße", 1},       {"ru", "Привет", 1},         {"ar", "مرحبا", 1},
        {"ar", "١٢٣٤", 0},         {"hi", "नमस्ते", 1},           {"th", "สวัสดี", 1},
        {"he", "שלום", 1},         {"el", "Γεια", 1},           {"en", "こんにちは", 0},
        {"en", "안녕하세요", 0},   {"zh", "Hello", 0},          {"zh", "你好", 1},
        {"zh-Hant", "你好", 1},    {"zh", "こんにちは", 0},     {"ja", "こんにちは", 1},
        {"ja", "東京", 1},         {"ja", "Hello", 0},          {"ko", "안녕하세요", 1},
        {"ko", "Hello 123", 0},    {NULL, "你好", 1},           {"", "Hello", 0},
        {"EN-us", "Hello", 1},     {"zh_Hans", "你好", 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const char *t = cases[k].text;
        fy_doc *d = split_lang(t, strlen(t), cases[k].src, NULL, 0, 0, 0);
        check(d && fy_doc_sentence_count(d) == cases[k].sentences, "source %s: \"%s\" has %zu",
              cases[k].src ? cases[k].src : "NULL", t, d ? fy_doc_sentence_count(d) : 0);
        fy_doc_free(d);
    }
    /* Latin identifiers are protected (and repaired) only for CJK sources. */
    const char *zh_tr[] = {"We use node. js."}, *en_tr[] = {"Wir nutzen node. js."};
    fy_doc *d = split_lang("我们用Node.js。", strlen("我们用Node.js。"), "zh", "en", 0, 0, 0);
    char *out = fy_doc_join(d, zh_tr, NULL);
    check(out && !strcmp(out, "We use Node.js."), "zh source repairs Node.js: %s", out);
    free(out);
    fy_doc_free(d);
    d = split_lang("We use Node.js.", 15, "en", "de", 0, 0, 0);
    out = fy_doc_join(d, en_tr, NULL);
    check(out && !strcmp(out, "Wir nutzen node. js."), "en source leaves words alone: %s", out);
    free(out);
    fy_doc_free(d);
}

/* ---- options and errors ------------------------------------------------------ */

static void test_options(void)
{
    fy_split_options o;
    fy_split_options_default(&o);
    check(o.source == NULL && o.target == NULL && o.raw == 0, "defaults: zh -> en, not raw");
    fy_error e = {0};
    o.source = "auto";
    check(!fy_doc_split("x", 1, &o, &e) && e.code == FY_EINVAL && strstr(e.msg, "detect"),
          "source auto: %s", e.msg);
    o.source = "not a tag";
    check(!fy_doc_split("x", 1, &o, &e) && strstr(e.msg, "unknown source language"),
          "bad source: %s", e.msg);
    o.source = "en", o.target = "x";
    check(!fy_doc_split("x", 1, &o, &e) && strstr(e.msg, "unknown target language"),
          "bad target: %s", e.msg);
    o.target = "zh", o.raw = 1, o.html = 1;
    check(!fy_doc_split("x", 1, &o, &e) && strstr(e.msg, "raw mode is plain text"), "raw html: %s",
          e.msg);
    o.html = 0;
    check(!fy_doc_split("a\xff", 2, &o, &e) && strstr(e.msg, "invalid UTF-8 at byte 1"),
          "raw invalid UTF-8: %s", e.msg);
    check(!fy_doc_split("a\0b", 3, &o, &e) && strstr(e.msg, "NUL byte at byte 1"), "raw NUL: %s",
          e.msg);
    fy_doc *d = split_lang("Hi.", 3, "en", "zh", 0, 0, 0);
    check(!fy_doc_render_sentence(d, 1, "x", NULL, &e) && e.code == FY_EINVAL &&
              strstr(e.msg, "out of range"),
          "render out of range: %s", e.msg);
    check(!fy_doc_render_sentence(NULL, 0, "x", NULL, &e) && e.code == FY_EINVAL, "render NULL");
    check(!fy_doc_join_before(d, 2, "x", NULL, NULL, &e) && e.code == FY_EINVAL &&
              strstr(e.msg, "out of range"),
          "join_before out of range: %s", e.msg);
    check(!fy_doc_join_before(NULL, 0, NULL, NULL, NULL, &e) && e.code == FY_EINVAL,
          "join_before NULL");
    check(fy_doc_sentence_tokens(d, 1) == 0 && fy_doc_sentence_tokens(NULL, 0) == 0 &&
              fy_doc_sentence_tokens(d, 0) >= 1,
          "sentence tokens range");
    size_t n;
    char *r = fy_doc_render_sentence(d, 0, NULL, &n, NULL);
    check(r && n == 3 && !strcmp(r, "Hi."), "render NULL translation is the engine text");
    free(r);
    fy_doc_free(d);
}

/* ---- the Chinese clean-up -------------------------------------------------------- */

static void test_cleanup_file(const char *dir)
{
    char path[8192];
    size_t len;
    snprintf(path, sizeof path, "%s/zh_cleanup_cases.txt", dir);
    char *text = read_file(path, &len);
    check(text != NULL, "read %s", path);
    if (!text) return;
    int n = 0;
    char *in = NULL;
    size_t in_len = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strncmp(line, "< ", 2)) {
            free(in);
            in = unescape(line + 2, strlen(line + 2), &in_len);
        } else if (!strncmp(line, "> ", 2) && in) {
            size_t wl;
            char *want = unescape(line + 2, strlen(line + 2), &wl);
            char *got = fy_cleanup_chinese(in, in_len);
            check(got && !strcmp(got, want), "cleanup_zh \"%s\" -> \"%s\" (want \"%s\")", in,
                  got ? got : "(null)", want);
            char *again = got ? fy_cleanup_chinese(got, strlen(got)) : NULL;
            check(again && got && !strcmp(again, got), "cleanup_zh is stable on \"%s\": \"%s\"",
                  got ? got : "", again ? again : "");
            free(again);
            free(got);
            free(want);
            free(in);
            in = NULL;
            n++;
        }
    }
    free(in);
    check(n >= 30, "zh_cleanup_cases.txt has %d cases", n);
    printf("chinese clean-up cases: %d\n", n);
    free(text);
    char *e = fy_cleanup_chinese("", 0);
    check(e && !*e, "cleanup_zh of nothing");
    free(e);
    e = fy_cleanup_chinese("你\xe5\xa5", 5); /* truncated: passes through, no over-read */
    check(e && !strcmp(e, "你\xe5\xa5"), "cleanup_zh of truncated UTF-8");
    free(e);
}

/* ---- joins ------------------------------------------------------------------------- */

/* The tags of s in order (naive "<...>" scan), then the <code> elements:
 * those are untouched objects, restored like protected spans, so their
 * place among the other tags may change but not their number. */
static void tag_sequence(const char *s, char *out, size_t cap)
{
    size_t k = 0, objects = 0;
    out[0] = '\0';
    for (const char *p = s; (p = strchr(p, '<'));) {
        const char *e = strchr(p, '>');
        if (!e) break;
        size_t n = (size_t)(e - p + 1);
        if ((n == 6 && !memcmp(p, "<code>", 6)) || (n == 7 && !memcmp(p, "</code>", 7)))
            objects++;
        else
            k += (size_t)snprintf(out + k, k < cap ? cap - k : 0, "%.*s", (int)n, p);
        if (k >= cap) k = cap - 1;
        p = e + 1;
    }
    snprintf(out + k, k < cap ? cap - k : 0, " + %zu code tags", objects);
}

static void join_case(const test_case *c, void *arg)
{
    (void)arg;
    char sb[16], tb[16];
    const char *src = case_option(c->name, "src=", "en", sb, sizeof sb);
    const char *tgt = case_option(c->name, "tgt=", "zh", tb, sizeof tb);
    int html = strstr(c->name, " html") != NULL;
    if (c->nparts != 3) {
        check(0, "join case %s: needs --- and ===", c->name);
        return;
    }
    size_t il, wl;
    char *in = unescape(c->part[0], strlen(c->part[0]), &il);
    char *want = unescape(c->part[2], strlen(c->part[2]), &wl);
    fy_doc *d = split_lang(in, il, src, tgt, html, 0, 0);
    size_t n = fy_doc_sentence_count(d), k = 0;
    char **tr = calloc(n + 1, sizeof *tr);
    for (char *p = c->part[1]; p && *p && k <= n; k++) {
        char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p), tl;
        tr[k < n ? k : n] = strncmp(p, "(engine)", len) ? unescape(p, len, &tl) : NULL;
        if (k >= n) free(tr[n]), tr[n] = NULL;
        p = eol ? eol + 1 : NULL;
    }
    check(k == n, "join %s: %zu translations for %zu sentences", c->name, k, n);
    char *out = d && k == n ? fy_doc_join(d, (const char *const *)tr, NULL) : NULL;
    check(out && !strcmp(out, want), "join %s:\n got  %s\n want %s", c->name, out ? out : "(null)",
          want);
    check(d && render_matches(d, (const char *const *)tr), "join %s: rendering", c->name);
    if (html && out) {
        char a[4096], b[4096];
        tag_sequence(in, a, sizeof a);
        tag_sequence(out, b, sizeof b);
        check(!strcmp(a, b), "join %s: tags %s became %s", c->name, a, b);
    }
    for (size_t i = 0; i < n; i++) free(tr[i]);
    free(tr);
    free(out);
    free(in);
    free(want);
    fy_doc_free(d);
}

static void test_join_file(const char *dir)
{
    char path[8192];
    size_t len;
    snprintf(path, sizeof path, "%s/join_cases.txt", dir);
    char *text = read_file(path, &len);
    check(text != NULL, "read %s", path);
    if (!text) return;
    int n = for_each_case(text, join_case, NULL);
    check(n >= 25, "join_cases.txt has %d cases", n);
    printf("join cases: %d\n", n);
    free(text);
}

/* ---- the table of language rules ------------------------------------------------- */

/* Lines of s (a part of a case), unescaped, into v (at most max). */
static size_t case_lines(const char *s, char **v, size_t max)
{
    size_t n = 0, len;
    for (const char *p = s; p && *p && n < max;) {
        const char *eol = strchr(p, '\n');
        size_t l = eol ? (size_t)(eol - p) : strlen(p);
        v[n++] = unescape(p, l, &len);
        p = eol ? eol + 1 : NULL;
    }
    return n;
}

typedef struct row_count {
    char tag[16];
    int cases;
} row_count;

static void lang_row_case(const test_case *c, void *arg)
{
    row_count *counts = arg;
    char tag[16];
    snprintf(tag, sizeof tag, "%.*s", (int)strcspn(c->name, " "), c->name);
    for (size_t k = 0; counts[k].tag[0]; k++)
        if (!strcmp(counts[k].tag, tag)) counts[k].cases++;
    size_t il;
    char *in = unescape(c->part[0], strlen(c->part[0]), &il), *want[16], *eng[16];
    size_t nw = c->nparts > 1 ? case_lines(c->part[1], want, 16) : 0;
    size_t ne = c->nparts > 2 ? case_lines(c->part[2], eng, 16) : 0;
    fy_doc *d = split_lang(in, il, tag, tag, 0, 0, 0);
    size_t n = fy_doc_sentence_count(d);
    int ok = d && n == nw;
    for (size_t i = 0; ok && i < n; i++) ok = !strcmp(fy_doc_sentence(d, i, NULL), want[i]);
    check(ok, "%s: split into %zu sentences, want %zu%s%s", c->name, n, nw, n ? ", first: " : "",
          n ? fy_doc_sentence(d, 0, NULL) : "");
    check(round_trip(in, il, tag, 0, 0, 0), "%s: identity join", c->name);
    for (size_t i = 0; i < n; i++) {
        size_t a, l;
        fy_doc_sentence_span(d, i, &a, &l);
        char *cl = fy_cleanup(tag, in + a, l);
        check(cl && strlen(cl) == l && !memcmp(cl, in + a, l),
              "%s: the clean-up keeps \"%.*s\" (got \"%s\")", c->name, (int)l, in + a,
              cl ? cl : "(null)");
        free(cl);
    }
    if (ne) {
        char *out = ne == n ? fy_doc_join(d, (const char *const *)eng, NULL) : NULL;
        check(out && !strcmp(out, in), "%s: engine output joined\n got  %s\n want %s", c->name,
              out ? out : "(null)", in);
        check(d && render_matches(d, (const char *const *)eng), "%s: rendering", c->name);
        free(out);
    }
    for (size_t i = 0; i < nw; i++) free(want[i]);
    for (size_t i = 0; i < ne; i++) free(eng[i]);
    free(in);
    fy_doc_free(d);
}

/* The languages of the built-in catalogue (src/model/catalogue.c's
 * "source" fields) into tags; returns their count. */
static size_t catalogue_languages(const char *root, char tags[][16], size_t max)
{
    char path[8192];
    size_t len, n = 0;
    snprintf(path, sizeof path, "%s/src/model/catalogue.c", root);
    char *text = read_file(path, &len);
    check(text != NULL, "read %s", path);
    for (const char *p = text; p && (p = strstr(p, "\\\"source\\\": \\\"")) && n < max;) {
        p += strlen("\\\"source\\\": \\\"");
        char tag[16];
        snprintf(tag, sizeof tag, "%.*s", (int)strcspn(p, "\\"), p);
        size_t k = 0;
        while (k < n && strcmp(tags[k], tag)) k++;
        if (k == n) snprintf(tags[n++], 16, "%s", tag);
    }
    free(text);
    return n;
}

/* Row r as a line of docs/languages.md's table. */
static void row_markdown(const fy_lang_rules *r, char *out, size_t cap)
{
    static const char *const src[] = {"letters", "Han", "Han, kana", "Hangul"};
    static const struct {
        unsigned flag;
        const char *name;
    } fl[] = {{FY_LR_FULLWIDTH, "full-width"},  {FY_LR_TIGHT, "tight"},
              {FY_LR_FRENCH, "French spacing"}, {FY_LR_INVERTED, "¿ ¡"},
              {FY_LR_ARABIC, "، ؛ ؟"},          {FY_LR_DANDA, "।"},
              {FY_LR_RTL_MARK, "RLM"},          {FY_LR_NO_DOT_END, "'.' no end"}};
    char clean[160] = "", quotes[16] = "–";
    size_t k = 0;
    if (r->cleanup == FY_CLEAN_CJK)
        k += (size_t)snprintf(clean, sizeof clean, "CJK");
    else if (r->cleanup == FY_CLEAN_NEUTRAL)
        k += (size_t)snprintf(clean, sizeof clean, "neutral");
    for (size_t i = 0; i < sizeof fl / sizeof *fl; i++)
        if (r->flags & fl[i].flag)
            k += (size_t)snprintf(clean + k, sizeof clean - k, "%s%s", k ? ", " : "", fl[i].name);
    if (r->quotes[0]) {
        size_t q = 0;
        put_utf8(quotes, &q, r->quotes[0]);
        quotes[q++] = ' ';
        put_utf8(quotes, &q, r->quotes[1]);
        quotes[q] = '\0';
    }
    snprintf(out, cap, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s%s%s | %s |", r->tag,
             r->name, r->native, r->script, r->rtl ? "rtl" : "ltr", src[r->source],
             r->spacing == FY_SPACING_NONE ? "none" : "space",
             r->tags == FY_TAGS_CHARS ? "characters" : "words", clean, quotes, r->terms ? "`" : "",
             r->terms ? r->terms : "–", r->terms ? "`" : "", r->abbrevs ? "own + en" : "en");
}

static void test_lang_rows(const char *dir, const char *root)
{
    char docs_path[8192];
    size_t docs_len;
    snprintf(docs_path, sizeof docs_path, "%s/docs/languages.md", root);
    char *docs = read_file(docs_path, &docs_len);
    check(docs != NULL, "read %s", docs_path);
    row_count counts[128] = {{"", 0}};
    size_t rows = 0;
    for (const fy_lang_rules *r; (r = fy_lang_rules_at(rows)) && rows < 127; rows++) {
        snprintf(counts[rows].tag, 16, "%s", r->tag);
        check(r->name && r->native && r->script && fy_lang_rules_of(r->tag) == r,
              "row %s: names, script, found by its tag", r->tag);
        check(!rows || strcmp(fy_lang_rules_at(rows - 1)->tag, r->tag) < 0, "rows sorted at %s",
              r->tag);
        check(!strcmp(fy_lang_name(r->tag), r->name), "fy_lang_name(%s)", r->tag);
        char md[512];
        row_markdown(r, md, sizeof md);
        check(docs && strstr(docs, md), "docs/languages.md has the row:\n%s", md);
    }
    free(docs);
    check(fy_lang_rules_of("xx") == fy_lang_rules_default() && !strcmp(fy_lang_name("xx"), "xx") &&
              fy_lang_rules_default()->cleanup == FY_CLEAN_NEUTRAL &&
              fy_lang_rules_of(NULL) == fy_lang_rules_default(),
          "a tag without a row gets the default row");
    char path[8192], cat[128][16];
    size_t len;
    snprintf(path, sizeof path, "%s/lang_rows.txt", dir);
    char *text = read_file(path, &len);
    check(text != NULL, "read %s", path);
    int n = text ? for_each_case(text, lang_row_case, counts) : 0;
    free(text);
    for (size_t k = 0; k < rows; k++)
        check(counts[k].cases > 0, "row %s has a case in lang_rows.txt", counts[k].tag);
    size_t nc = catalogue_languages(root, cat, 128);
    check(nc >= 40, "the catalogue has %zu languages", nc);
    for (size_t k = 0; k < nc; k++)
        check(fy_lang_rules_of(cat[k]) != fy_lang_rules_default(),
              "catalogue language %s has a row", cat[k]);
    printf("language rows: %zu rows, %d cases, %zu catalogue languages\n", rows, n, nc);
    /* The default never rewrites punctuation to English. */
    static const char *const keep[] = {"Saluton ! Kiel vi fartas ?", "« Bone »", "Ĉu vere ;",
                                       "Bonan tagon。"};
    for (size_t k = 0; k < sizeof keep / sizeof *keep; k++) {
        char *cl = fy_cleanup("eo", keep[k], strlen(keep[k]));
        check(cl && !strcmp(cl, keep[k]), "default clean-up keeps \"%s\" (got \"%s\")", keep[k],
              cl ? cl : "");
        free(cl);
    }
}

/* ---- raw mode ------------------------------------------------------------------------ */

static void test_raw(void)
{
    static const struct {
        const char *in, *tr, *want;
        size_t sentences;
        const char *engine;
    } cases[] = {
        {"  Hello.  World.\n", "你好。 世界。", "  你好。 世界。\n", 1, "Hello.  World."},
        {"\t 你好，  世界 \r\n", "Hello ,  world", "\t Hello ,  world \r\n", 1, "你好，  世界"},
        {"See https://x.com/a.", "Voir .", "Voir .", 1, "See https://x.com/a."},
        {"a\nb", "x", "x", 1, "a\nb"},
        {"Mr. Smith. Dr. Who! Really?", "t", "t", 1, "Mr. Smith. Dr. Who! Really?"},
        {" \t\n\v\f\r", "ignored", " \t\n\v\f\r", 0, NULL},
        {"", "ignored", "", 0, NULL},
        {"\xc2\xa0x\xc2\xa0", "y", "y", 1, "\xc2\xa0x\xc2\xa0"}, /* NBSP is not ASCII */
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const char *in = cases[k].in;
        fy_doc *d = split_lang(in, strlen(in), "en", "zh", 0, 1, 1);
        size_t n = fy_doc_sentence_count(d);
        check(d && n == cases[k].sentences, "raw %zu: %zu sentences", k, n);
        if (n == 1)
            check(!strcmp(fy_doc_sentence(d, 0, NULL), cases[k].engine), "raw %zu: engine \"%s\"",
                  k, fy_doc_sentence(d, 0, NULL));
        const char *tr[] = {cases[k].tr};
        char *out = d ? fy_doc_join(d, tr, NULL) : NULL;
        check(out && !strcmp(out, n ? cases[k].want : in), "raw %zu: \"%s\"", k, out ? out : "");
        free(out);
        check(round_trip(in, strlen(in), "en", 0, 1, 1) &&
                  round_trip(in, strlen(in), "zh", 0, 1, 0),
              "raw %zu: round trip", k);
        check(!d || render_matches(d, tr), "raw %zu: rendering", k);
        fy_doc_free(d);
    }
    /* A long raw line is not cut, whatever max_tokens says. */
    char big[4001];
    for (int i = 0; i < 4000; i++) big[i] = i % 7 == 6 ? ' ' : 'a';
    big[4000] = '\0';
    fy_doc *d = split_lang(big, 4000, "en", "zh", 0, 1, 8);
    check(d && fy_doc_sentence_count(d) == 1 && fy_doc_sentence_tokens(d, 0) > 8,
          "raw: no cutting for length");
    fy_doc_free(d);
    /* Invalid bytes of a translation still become U+FFFD. */
    d = split_lang(" x ", 3, "en", "zh", 0, 1, 0);
    const char *bad[] = {"a\xffz"};
    char *out = fy_doc_join(d, bad, NULL);
    check(out && !strcmp(out, " a\xef\xbf\xbdz "), "raw: invalid translation bytes");
    free(out);
    fy_doc_free(d);
}

/* ---- token counts ---------------------------------------------------------------------- */

static long count_words(void *ctx, const char *s, size_t len)
{
    (*(int *)ctx)++;
    long t = 1;
    for (size_t i = 0; i < len; i++) t += (i == 0 || s[i - 1] == ' ') && s[i] != ' ';
    return t;
}

static void test_tokens(void)
{
    const char *in = "The cat sat. The dog ran fast.\n\nA bird sang! 12:30\n你好。";
    int calls = 0;
    fy_split_options o;
    fy_split_options_default(&o);
    o.source = "en", o.target = "zh";
    o.count_tokens = count_words, o.count_ctx = &calls;
    fy_doc *d = fy_doc_split(in, strlen(in), &o, NULL);
    size_t n = fy_doc_sentence_count(d);
    int ok = d && n == 3 && calls == 3;
    for (size_t i = 0; ok && i < n; i++) {
        int dummy = 0;
        size_t len;
        const char *s = fy_doc_sentence(d, i, &len);
        ok = fy_doc_sentence_tokens(d, i) == count_words(&dummy, s, len);
    }
    check(ok, "one count per ordinary sentence (%d calls for %zu), kept in the doc", calls, n);
    fy_doc_free(d);
    /* A sentence that must be cut: more calls, every piece within the limit. */
    char big[2048] = "";
    for (int k = 0; k < 60; k++) strcat(big, "word ");
    strcat(big, "end.");
    calls = 0;
    o.max_tokens = 16;
    d = fy_doc_split(big, strlen(big), &o, NULL);
    n = fy_doc_sentence_count(d);
    ok = d && n >= 4 && calls > (int)n;
    for (size_t i = 0; ok && i < n; i++)
        ok = fy_doc_sentence_tokens(d, i) >= 1 && fy_doc_sentence_tokens(d, i) <= 16;
    check(ok, "cut sentence: %zu pieces, %d calls, each <= 16 tokens", n, calls);
    fy_doc_free(d);
    /* A span longer than the limit is never cut (it was, before: the cut
     * fell back to a position inside the URL). */
    static const char *const srcs[] = {"zh", "en"};
    for (int k = 0; k < 2; k++) {
        const char *t = k ? "See http://x.y/za@b.ccU.S.cat now" : "看 http://x.y/za@b.ccU.S.cat 吧";
        for (int max = 1; max <= 10; max += 3) {
            d = split_lang(t, strlen(t), srcs[k], "en", 0, 0, max);
            const char *tr[] = {"x", "y", "z", "w", "v", "u"};
            ok = d && fy_doc_sentence_count(d) <= 6;
            for (size_t i = 0; ok && i < fy_doc_sentence_count(d); i++)
                ok = !strstr(fy_doc_sentence(d, i, NULL), "x.y");
            char *out = ok ? fy_doc_join(d, tr, NULL) : NULL;
            check(out && strstr(out, "http://x.y/za@b.ccU.S.cat"), "%s max %d: url kept whole: %s",
                  srcs[k], max, out ? out : "");
            free(out);
            fy_doc_free(d);
        }
    }
    /* An e-mail address before a full stop is a span (it was not). */
    fy_spans sp = {0};
    fy_find_spans_ex("Mail ab@example.com.", 20, 0, &sp);
    check(sp.n == 1 && sp.v[0].kind == FY_SPAN_EMAIL && sp.v[0].start == 5 && sp.v[0].len == 14,
          "e-mail before a full stop");
    free(sp.v);
    /* Without a counter: the estimate. */
    d = split_lang("你好。Hello world.", strlen("你好。Hello world."), "zh", "en", 0, 0, 0);
    check(d && fy_doc_sentence_count(d) == 1 &&
              fy_doc_sentence_tokens(d, 0) == fy_estimate_tokens("你好。", strlen("你好。")),
          "estimated count");
    fy_doc_free(d);
}

/* ---- corpus properties --------------------------------------------------------------------- */

static const char *source_root = "."; /* the repository, for docs/ and src/model/ */

static const char *const sources[] = {"zh", "en", "ja", "ko", "de", "ru", "ar"};
#define NSOURCES (sizeof sources / sizeof *sources)

/* Deterministic "translations" for the target: some NULL, some changed. */
static const char *fake_translation(size_t i, int cjk)
{
    static const char *const zh[] = {NULL, "这是一个句子。", "你好 , 世界 .", "我用 iPhone",
                                     "好的"};
    static const char *const en[] = {NULL, "This is a sentence.", "Hello , world .", "I use it",
                                     "Fine"};
    return cjk ? zh[i % 5] : en[i % 5];
}

static int corpus_doc(const char *text, size_t len, const char *src, int html, int max)
{
    int ok = round_trip(text, len, src, html, 0, max);
    for (int cjk = 0; cjk < 2 && ok; cjk++) {
        fy_doc *d = split_lang(text, len, src, cjk ? "zh" : "en", html, 0, max);
        size_t n = fy_doc_sentence_count(d);
        const char **tr = calloc(n + 1, sizeof *tr);
        for (size_t i = 0; i < n; i++) tr[i] = fake_translation(i, cjk);
        ok = d && render_matches(d, tr);
        free(tr);
        fy_doc_free(d);
    }
    return ok;
}

static void test_corpus(const char *dir)
{
    DIR *dd = opendir(dir);
    check(dd != NULL, "open %s", dir);
    if (!dd) return;
    struct dirent *de;
    int docs = 0, bad = 0;
    while ((de = readdir(dd))) {
        size_t n = strlen(de->d_name);
        if (n < 4 || strcmp(de->d_name + n - 4, ".txt")) continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        size_t len;
        char *text = read_file(path, &len);
        if (!text) continue;
        for (size_t s = 0; s < NSOURCES; s++)
            for (int html = 0; html < 2; html++, docs++)
                if (!corpus_doc(text, len, sources[s], html, html ? 0 : 24)) {
                    bad++;
                    printf("  %s: source %s html %d\n", de->d_name, sources[s], html);
                }
        for (size_t a = 0; a < len; docs++) { /* each line alone, raw */
            const char *nl = memchr(text + a, '\n', len - a);
            size_t e = nl ? (size_t)(nl - text) + 1 : len;
            bad += !round_trip(text + a, e - a, "en", 0, 1, 0);
            a = e;
        }
        free(text);
    }
    closedir(dd);
    check(bad == 0, "corpus: %d of %d documents fail a round trip or render check", bad, docs);
    printf("corpus: %d documents for %zu sources, raw lines\n", docs, NSOURCES);
}

/* English paragraphs from the WMT test set, as an English source. */
static void test_wmt_en(const char *shared)
{
    char path[8192];
    size_t len;
    snprintf(path, sizeof path, "%s/data/wmt/wmt19.en", shared);
    char *text = read_file(path, &len);
    if (!text) {
        printf("wmt19.en: not present, skipped\n");
        return;
    }
    int docs = 0, bad = 0;
    size_t sentences = 0;
    for (size_t a = 0; a < len; docs++) {
        size_t e = a;
        for (int lines = 0; e < len && lines < 1 + docs % 5; lines++) {
            const char *nl = memchr(text + e, '\n', len - e);
            e = nl ? (size_t)(nl - text) + 1 : len;
        }
        fy_doc *d = split_lang(text + a, e - a, "en", "zh", 0, 0, 0);
        sentences += fy_doc_sentence_count(d);
        fy_doc_free(d);
        if (!corpus_doc(text + a, e - a, "en", docs % 2, docs % 7 == 0 ? 16 : 0)) bad++;
        a = e;
    }
    free(text);
    check(bad == 0, "wmt19.en: %d of %d paragraphs fail", bad, docs);
    printf("wmt19.en: %d paragraphs, %zu sentences\n", docs, sentences);
}

/* ---- random documents ------------------------------------------------------------------------ */

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static int count_of(const char *s, size_t n, char c)
{
    int k = 0;
    for (size_t i = 0; i < n; i++) k += s[i] == c;
    return k;
}

static const char *const atoms[] = {"The",
                                    "cat",
                                    " ",
                                    "  ",
                                    ".",
                                    "!",
                                    "?",
                                    "...",
                                    "Mr.",
                                    "U.S.",
                                    "e.g.",
                                    "3.14",
                                    "v2.0",
                                    "\n",
                                    "\t",
                                    "\"",
                                    "(",
                                    ")",
                                    "J.",
                                    "K.",
                                    "etc.",
                                    "No.",
                                    " 5",
                                    "你好",
                                    "。",
                                    "，",
                                    "Привет",
                                    "Ünïcödé",
                                    "http://x.y/z",
                                    "a@b.cc",
                                    "`c d`",
                                    "5GB",
                                    "<b>",
                                    "</b>",
                                    "<p>",
                                    "</p>",
                                    "<br>",
                                    "&amp;",
                                    "&nbsp;",
                                    "<code>x</code>",
                                    "\r\n",
                                    "…",
                                    "”",
                                    "’",
                                    "1.",
                                    "\xf0\x9f\x91\x8d",
                                    "<!--c-->",
                                    "é",
                                    "'",
                                    ":",
                                    ";",
                                    ","};
static const char *const outs[] = {"你好。", "",     "Hello , world .",          "我 用 iPhone.",
                                   "<&>",    "a  b", "这是 这是 这是 这是 句子", "Bonjour !"};

static int occurrences(const char *s, size_t n, const char *needle, size_t nl)
{
    int k = 0;
    for (const char *p = s; (p = memmem(p, n - (size_t)(p - s), needle, nl)); p++) k++;
    return k;
}

/* Every strict span of plain text in[0..len) is in out as often as in in. */
static int spans_kept(const char *in, size_t len, const char *out, size_t ol)
{
    fy_spans sp = {0};
    fy_find_spans_ex(in, len, 0, &sp);
    int ok = 1;
    for (size_t k = 0; k < sp.n && ok; k++) {
        const char *nd = in + sp.v[k].start;
        size_t nl = sp.v[k].len;
        int need = 0;
        for (size_t j = 0; j < sp.n; j++)
            need += sp.v[j].len == nl && !memcmp(in + sp.v[j].start, nd, nl);
        ok = occurrences(out, ol, nd, nl) >= need;
        if (!ok) printf("  lost %.*s\n", (int)nl, nd);
    }
    free(sp.v);
    return ok;
}

/* One random English document in[0..len): round trip, then a join with
 * random translations into tgt that is valid UTF-8, renders sentence by
 * sentence as it joins, keeps the line breaks and strict spans of plain
 * text and the tag sequence of HTML. */
static int random_doc(const char *in, size_t len, const char *tgt, int html, int raw)
{
    int max = 1 + (int)rnd(24);
    int ok = round_trip(in, len, "en", html, raw, max);
    fy_doc *d = split_lang(in, len, "en", tgt, html, raw, max);
    size_t n = fy_doc_sentence_count(d), ol = 0;
    const char **tr = calloc(n + 1, sizeof *tr);
    for (size_t i = 0; i < n; i++) tr[i] = rnd(4) ? outs[rnd(8)] : NULL;
    char *out = d ? fy_doc_join_ex(d, tr, 0, &ol, NULL, NULL) : NULL;
    ok = ok && out && fy_utf8_valid(out, ol, NULL) && render_matches(d, tr);
    /* Raw mode is one sentence: its line breaks are the translation's. */
    ok = ok && (html || raw || count_of(out, ol, '\n') == count_of(in, len, '\n'));
    ok = ok && (html || raw || spans_kept(in, len, out, ol));
    if (ok && html) {
        static char a[8192], b[8192];
        tag_sequence(in, a, sizeof a);
        tag_sequence(out, b, sizeof b);
        ok = !strcmp(a, b);
        if (!ok) printf("  tags %s\n    -> %s\n", a, b);
    }
    free(out);
    free(tr);
    fy_doc_free(d);
    return ok;
}

static void test_random(void)
{
    int bad = 0, n_docs = 2000;
    fy_buf b = {0};
    for (int it = 0; it < n_docs; it++) {
        int html = it % 2, raw = !html && it % 5 == 0;
        static const char *const tgts[] = {"zh", "en", "zh", "fr", "ar", "th", "ja", "es", "hi"};
        const char *tgt = tgts[it % 9];
        b.n = 0;
        for (int k = 0, na = 1 + (int)rnd(30); k < na; k++) {
            const char *a = atoms[rnd(sizeof atoms / sizeof *atoms)];
            fy_buf_put(&b, a, strlen(a));
        }
        const char *in = b.p ? b.p : "";
        if (!random_doc(in, b.n, tgt, html, raw)) {
            printf("  random %d (%s, html %d, raw %d): %s\n", it, tgt, html, raw, in);
            bad++;
        }
    }
    fy_buf_free(&b);
    check(bad == 0, "random english documents: %d of %d fail", bad, n_docs);
}

/* ---- detection --------------------------------------------------------------------------------
 */

static void test_variant_table(void)
{
    const char *t = fy_zh_variant_pairs();
    size_t len = strlen(t), n = 0;
    static uint32_t cps[4096];
    int ok = len % 6 == 0;
    for (size_t i = 0, k; i < len && ok && n < 4096; i += k) {
        uint32_t cp = fy_utf8_get(t, len, i, &k);
        ok = k == 3 && fy_cp_is_han(cp);
        for (size_t j = 0; j < n && ok; j++) ok = cps[j] != cp;
        if (!ok) printf("  variant table: bad or repeated character at byte %zu\n", i);
        cps[n++] = cp;
    }
    check(ok && n / 2 >= 800, "variant table: %zu pairs, all distinct Han characters", n / 2);
    /* Every pair counts: the last pair's forms are told apart too (a
     * fixed-size decoding once dropped the pairs past the 512th). */
    size_t nb;
    uint32_t last_s = fy_utf8_get(t, len, len - 6, &nb), last_t = fy_utf8_get(t, len, len - 3, &nb);
    char ls[8] = "", lt[8] = "";
    size_t q = 0;
    put_utf8(ls, &q, last_s);
    q = 0;
    put_utf8(lt, &q, last_t);
    fy_detection d1, d2;
    check(fy_detect(ls, strlen(ls), 0, &d1) == 0 && d1.n && !strcmp(d1.top[0].lang, "zh") &&
              d1.reliable && fy_detect(lt, strlen(lt), 0, &d2) == 0 && d2.n &&
              !strcmp(d2.top[0].lang, "zh-Hant"),
          "the last pair of the variant table counts (%s %s)", ls, lt);
}

static int detect_case(const char *line)
{
    char want[16], script[16], rel[4];
    const char *p = line;
    if (sscanf(p, "%15[^\t]\t%15[^\t]\t%3[^\t]", want, script, rel) != 3) return 0;
    for (int tabs = 0; tabs < 3 && p; tabs++) p = strchr(p, '\t'), p = p ? p + 1 : NULL;
    if (!p) p = "";
    fy_detection d;
    int rc = fy_detect(p, strlen(p), 0, &d);
    int ok = rc == 0 && (strcmp(want, "-") ? d.n > 0 && !strcmp(d.top[0].lang, want) : d.n == 0);
    ok = ok && (strcmp(script, "-") ? !strcmp(d.script, script) : !d.script[0]);
    ok = ok && (rel[0] == '*' || d.reliable == (rel[0] == '1'));
    for (int k = 0; k < d.n && ok; k++) ok = d.top[k].percent >= 0 && d.top[k].percent <= 100;
    check(ok, "detect \"%s\": %s %s reliable %d (want %s %s %s)", p, d.n ? d.top[0].lang : "-",
          d.script, d.reliable, want, script, rel);
    return 1;
}

typedef struct detect_job {
    const char *text;
    fy_detection want;
    int ok;
} detect_job;

static void *detect_many(void *arg)
{
    detect_job *j = arg;
    j->ok = 1;
    for (int k = 0; k < 200; k++) {
        fy_detection d;
        j->ok &= fy_detect(j->text, strlen(j->text), 0, &d) == 0 && !memcmp(&d, &j->want, sizeof d);
    }
    return NULL;
}

static void test_detect_edges(void);
static void test_detect_threads(void);
static void test_detect_accuracy(const char *dir);
static void test_detect_paragraphs(void);

static void test_detect(const char *dir)
{
    test_variant_table();
    char path[8192];
    size_t len;
    snprintf(path, sizeof path, "%s/detect_cases.txt", dir);
    char *text = read_file(path, &len);
    check(text != NULL, "read %s", path);
    int n = 0;
    for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n"))
        if (line[0] != '#') n += detect_case(line);
    check(n >= 30, "detect_cases.txt has %d cases", n);
    printf("detection cases: %d\n", n);
    free(text);

    test_detect_edges();
    test_detect_threads();
    test_detect_accuracy(dir);
    test_detect_paragraphs();
}

/* ---- detection per paragraph ----------------------------------------------------------- */

/* The parts of text (html) are the given languages, and cover it. */
static void check_parts(const char *name, const char *text, int html, const char *const *langs,
                        size_t nlangs)
{
    fy_detect_part *p = NULL;
    size_t n = 0, at = 0;
    int rc = fy_detect_paragraphs(text, strlen(text), html, &p, &n);
    int ok = rc == 0 && n == nlangs;
    for (size_t k = 0; ok && k < n; k++) {
        ok = p[k].start == at && p[k].len > 0 && p[k].d.n > 0 &&
             !strcmp(p[k].d.top[0].lang, langs[k]);
        at += p[k].len;
    }
    ok = ok && at == strlen(text);
    check(ok, "paragraphs %s: rc %d, %zu parts (first %s)", name, rc, n,
          n && p[0].d.n ? p[0].d.top[0].lang : "-");
    free(p);
}

static void test_detect_paragraphs(void)
{
    const char *doc =
        "Hello everyone, this is the English introduction of our yearly report.\n\n"
        "这是报告的中文部分，我们在这里讨论今年的结果。\n第二段也是中文，说明了下一步的计划。\n"
        "OK\n\nAnd the conclusion is written in English again, for all the readers.\n";
    static const char *const three[] = {"en", "zh", "en"};
    check_parts("en zh en", doc, 0, three, 3);
    const char *html = "<h1>Report</h1><p>The first section is written in English for everyone.</p>"
                       "<p>第二部分是用中文写的，给中国的同事看。</p>";
    static const char *const two[] = {"en", "zh"};
    check_parts("html", html, 1, two, 2);
    static const char *const one[] = {"de"};
    check_parts("one language", "Guten Morgen.\nWie geht es Ihnen heute?\n1.\n", 0, one, 1);
    fy_detect_part *p = (fy_detect_part *)1;
    size_t n = 7;
    check(fy_detect_paragraphs("", 0, 0, &p, &n) == 0 && !p && n == 0, "paragraphs: empty text");
    check(fy_detect_paragraphs("a\xff", 2, 0, &p, &n) == FY_EINVAL && !p && n == 0,
          "paragraphs: invalid UTF-8");
    check(fy_detect_paragraphs("12345\n!!!", 9, 0, &p, &n) == 0 && n == 1 && p[0].d.n == 0 &&
              p[0].len == 9,
          "paragraphs: no letters is one part");
    free(p);
}

/* ---- detection accuracy ------------------------------------------------------------------- */

typedef struct tally {
    char key[16];
    int right, total;
} tally;

static void count(tally *t, size_t max, const char *key, int right)
{
    size_t k = 0;
    while (k < max - 1 && t[k].key[0] && strcmp(t[k].key, key)) k++;
    snprintf(t[k].key, sizeof t[k].key, "%s", key);
    t[k].right += right, t[k].total++;
}

static const tally *find_tally(const tally *t, const char *key)
{
    for (; t->key[0]; t++)
        if (!strcmp(t->key, key)) return t;
    return NULL;
}

/* Prints a Markdown table of t, and checks that docs (docs/languages.md)
 * has each of its lines: the documented figures are the measured ones. */
static void print_tallies(const char *what, const tally *t, const char *docs)
{
    printf("| %s | right | of | accuracy |\n|---|---:|---:|---:|\n", what);
    for (; t->key[0]; t++) {
        char line[128];
        snprintf(line, sizeof line, "| %s | %d | %d | %.1f%% |", t->key, t->right, t->total,
                 100.0 * t->right / t->total);
        printf("%s\n", line);
        check(docs && strstr(docs, line), "docs/languages.md has the line %s", line);
    }
}

/* The accuracy set (detect_accuracy.tsv): every language of the catalogue
 * in short inputs and sentences, mixed Chinese and English, code and URLs.
 * The floors are what the detector achieves, less a little. */
static void test_detect_accuracy(const char *dir)
{
    char path[8192];
    size_t len;
    snprintf(path, sizeof path, "%s/detect_accuracy.tsv", dir);
    char *text = read_file(path, &len);
    check(text != NULL, "read %s", path);
    static tally by_lang[96], by_cat[16];
    int right = 0, total = 0;
    for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        char want[16], cat[16];
        if (line[0] == '#' || sscanf(line, "%15[^\t]\t%15[^\t]", want, cat) != 2) continue;
        const char *t = strchr(strchr(line, '\t') + 1, '\t') + 1;
        fy_detection d;
        int ok = fy_detect(t, strlen(t), 0, &d) == 0 && d.n > 0 && !strcmp(d.top[0].lang, want);
        if (!ok && getenv("FANYI_DETECT_VERBOSE"))
            printf("  miss %s %s: %s (%s)\n", want, cat, d.n ? d.top[0].lang : "-", t);
        count(by_lang, 96, want, ok);
        count(by_cat, 16, cat, ok);
        right += ok, total++;
    }
    free(text);
    snprintf(path, sizeof path, "%s/docs/languages.md", source_root);
    char *docs = read_file(path, &len);
    check(docs != NULL, "read %s", path);
    print_tallies("language", by_lang, docs);
    print_tallies("category", by_cat, docs);
    char all[96];
    snprintf(all, sizeof all, "| all | %d | %d | %.1f%% |", right, total, 100.0 * right / total);
    printf("%s\ndetection accuracy: %d of %d (%.1f%%)\n", all, right, total, 100.0 * right / total);
    check(docs && strstr(docs, all), "docs/languages.md has the line %s", all);
    free(docs);
    check(total >= 300, "the accuracy set has %d inputs", total);
    check(right * 100 >= total * 94, "overall accuracy %d of %d is at least 94%%", right, total);
    static const char *const exact[] = {"zh", "zh-Hant"};
    for (size_t k = 0; k < 2; k++) {
        const tally *t = find_tally(by_lang, exact[k]);
        check(t && t->right == t->total, "every %s input detected as %s", exact[k], exact[k]);
    }
    /* Mixed text, code and links never flip the language; sentences and
     * short inputs miss only between close languages (hr/bs, nb/nn/da,
     * id/ms) and where CLD2 guesses a word or two wrong. */
    static const struct {
        const char *cat;
        int floor;
    } floors[] = {{"mixed", 100}, {"code", 100}, {"url", 100}, {"sentence", 94}, {"short", 90}};
    for (size_t k = 0; k < sizeof floors / sizeof *floors; k++) {
        const tally *t = find_tally(by_cat, floors[k].cat);
        check(t && t->right * 100 >= t->total * floors[k].floor, "%s inputs: %d of %d right",
              floors[k].cat, t ? t->right : 0, t ? t->total : 0);
    }
}

/* Errors, HTML, URLs, the old two-language function, random bytes. */
static void test_detect_edges(void)
{
    fy_detection d;
    check(fy_detect("ab\xff", 3, 0, &d) == FY_EINVAL && d.n == 0, "detect: invalid UTF-8");
    check(fy_detect("\xe4\xbd", 2, 0, &d) == FY_EINVAL, "detect: truncated UTF-8");
    check(fy_detect(NULL, 3, 0, &d) == FY_EINVAL, "detect: NULL text");
    check(fy_detect(NULL, 0, 0, &d) == 0 && d.n == 0 && !d.script[0], "detect: nothing");
    const char *html =
        "<html><head><style>body { font-family: sans-serif; color: red }</style>"
        "<script>var message = 'hello world, this is english';</script></head>"
        "<body><p title=\"an english title\">这是一个网页，我们今天讨论中文。</p></body></html>";
    check(fy_detect(html, strlen(html), 1, &d) == 0 && d.n > 0 && !strcmp(d.top[0].lang, "zh"),
          "detect: html markup is skipped (%s)", d.n ? d.top[0].lang : "-");
    const char *link = "请看 https://www.example.com/english/words/in/a/long/url/path 这里";
    check(fy_detect(link, strlen(link), 0, &d) == 0 && d.n > 0 && !strcmp(d.top[0].lang, "zh"),
          "detect: urls are not language (%s)", d.n ? d.top[0].lang : "-");
    /* The old two-language function, now on top of fy_detect. */
    static const char *const old[][2] = {
        {"你好，世界", "zh"},
        {"Hello, world", "en"},
        {"", "en"},
        {"12345 !!!", "en"},
        {"我们用 SentencePiece 分词", "zh"},
        {"這是繁體中文", "zh"},
        {"\xe4\xbd", "en"},
        {"This long English paragraph mentions Beijing once as 北京 and goes on for many more "
         "words about other things entirely.",
         "en"}};
    for (size_t k = 0; k < sizeof old / sizeof *old; k++)
        check(!strcmp(fy_detect_language(old[k][0], strlen(old[k][0])), old[k][1]),
              "fy_detect_language \"%s\"", old[k][0]);
    /* Random bytes: an error or an answer, never a crash. */
    for (int it = 0; it < 2000; it++) {
        char p[32];
        size_t m = rnd(32);
        for (size_t k = 0; k < m; k++) p[k] = (char)(rnd(2) ? 0x80 + rnd(0x80) : rnd(0x80));
        int rc = fy_detect(p, m, (int)rnd(2), &d);
        if (rc != 0 && rc != FY_EINVAL) check(0, "detect random bytes: %d", rc);
        free(fy_cleanup_chinese(p, m));
        static const char *const tgts[] = {"fr", "es", "de", "ar", "hi", "th", "ja", "eo"};
        char *cl = fy_cleanup(tgts[it % 8], p, m);
        if (!cl) check(0, "cleanup %s of random bytes", tgts[it % 8]);
        free(cl);
    }
}

/* Concurrent detections agree with a single one. */
static void test_detect_threads(void)
{
    static const char *const texts[] = {"Guten Tag, wie geht es Ihnen?", "這是一個問題",
                                        "我爱 Python 编程", "こんにちは、元気ですか？"};
    detect_job jobs[4];
    pthread_t th[4];
    for (int k = 0; k < 4; k++) {
        jobs[k].text = texts[k];
        fy_detect(texts[k], strlen(texts[k]), 0, &jobs[k].want);
        pthread_create(&th[k], NULL, detect_many, &jobs[k]);
    }
    int ok = 1;
    for (int k = 0; k < 4; k++) pthread_join(th[k], NULL), ok &= jobs[k].ok;
    check(ok, "concurrent detections agree");
}

int main(int argc, char **argv)
{
    const char *src = getenv("FANYI_SOURCE_DIR");
    const char *shared = getenv("FANYI_SHARED_DIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/data/text", argc > 1 ? argv[1] : src ? src : ".");
    test_options();
    test_sources();
    test_split_file(dir);
    test_cleanup_file(dir);
    test_join_file(dir);
    source_root = argc > 1 ? argv[1] : src ? src : ".";
    test_lang_rows(dir, source_root);
    test_raw();
    test_tokens();
    test_corpus(dir);
    if (shared)
        test_wmt_en(shared);
    else
        printf("wmt19.en: FANYI_SHARED_DIR not set, skipped\n");
    test_random();
    test_detect(dir);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
