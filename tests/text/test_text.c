/* test_text.c - unit and property tests of the text pipeline (src/text/).
 *
 * Hand-written cases for every rule (inline here and in
 * tests/data/text/pipeline_cases.txt), round trips (split + identity join
 * gives the input back byte for byte) on tests/data/text/ *.txt and, when
 * present, on paragraphs built from the WMT test sets, HTML round trips and
 * well-formedness, and random documents (run under ASan in the sanitizer
 * build: no input may make the pipeline read out of bounds).
 */
#include "text/segment.h"
#include "text/text_internal.h"
#include "text/document_internal.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../check.h"
#include "../read_file.h"

static fy_doc *split(const char *s, int html, int max_tokens)
{
    fy_split_options o;
    fy_split_options_default(&o);
    o.html = html;
    if (max_tokens) o.max_tokens = max_tokens;
    fy_error e = {0};
    fy_doc *d = fy_doc_split(s, strlen(s), &o, &e);
    if (!d) printf("  split error: %s\n", e.msg);
    return d;
}

/* Joins doc with each sentence translated as tr[i] (NULL: identity). */
static char *join(const fy_doc *d, const char *const *tr, int flags)
{
    fy_error e = {0};
    size_t n = fy_doc_sentence_count(d);
    const char **t = calloc(n + 1, sizeof *t);
    for (size_t i = 0; i < n; i++) t[i] = tr ? tr[i] : fy_doc_sentence(d, i, NULL);
    char *out = fy_doc_join_ex(d, t, flags, NULL, NULL, &e);
    free(t);
    return out;
}

/* Split + identity join in both join modes must give s back exactly. */
static int round_trip(const char *s, size_t len, int html, int max_tokens)
{
    fy_split_options o;
    fy_split_options_default(&o);
    o.html = html;
    if (max_tokens) o.max_tokens = max_tokens;
    fy_doc *d = fy_doc_split(s, len, &o, NULL);
    if (!d) return 0;
    int ok = 1;
    for (size_t i = 0; i < fy_doc_sentence_count(d); i++) {
        size_t n, a, l;
        const char *t = fy_doc_sentence(d, i, &n);
        ok &= n > 0 && !memchr(t, '\n', n) && !memchr(t, '\r', n);
        ok &= fy_doc_sentence_span(d, i, &a, &l) == 0 && a + l <= len;
    }
    for (int mode = 0; mode < 2 && ok; mode++) {
        char *j = join(d, NULL, mode ? 0 : FY_JOIN_RAW);
        ok &= j && strlen(j) == len && memcmp(j, s, len) == 0;
        if (!ok && j) printf("  round trip gave:\n%s\n  for:\n%.*s\n", j, (int)len, s);
        free(j);
    }
    fy_doc_free(d);
    return ok;
}

/* ---- UTF-8, detection ------------------------------------------------------ */

static void test_utf8(void)
{
    static const struct {
        const char *s;
        size_t len;
        int valid;
        size_t bad;
    } cases[] = {
        {"", 0, 1, 0},
        {"abc", 3, 1, 0},
        {"\xe4\xbd\xa0\xe5\xa5\xbd", 6, 1, 0},
        {"\xf0\x9f\x91\x8d", 4, 1, 0},
        {"a\xc0\x80", 3, 0, 1},        /* overlong NUL */
        {"ab\xed\xa0\x80", 5, 0, 2},   /* surrogate */
        {"\xf4\x90\x80\x80", 4, 0, 0}, /* above U+10FFFF */
        {"x\xe4\xbd", 3, 0, 1},        /* truncated at the end */
        {"\xe4\x41\xa0", 3, 0, 0},     /* bad continuation */
        {"\x80", 1, 0, 0},             /* lone continuation */
        {"ok\xff", 3, 0, 2},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        size_t bad = 99;
        int v = fy_utf8_valid(cases[k].s, cases[k].len, &bad);
        check(v == cases[k].valid && (v || bad == cases[k].bad), "utf8 case %zu: %d at %zu", k, v,
              bad);
    }
    /* Truncated input must not be read past its length (ASan checks). */
    char *p = malloc(2);
    memcpy(p, "\xe4\xbd", 2);
    check(!fy_utf8_valid(p, 2, NULL), "truncated heap sequence");
    size_t n;
    check(fy_utf8_get(p, 2, 0, &n) == 0xFFFD && n == 1, "decode truncated");
    free(p);
    fy_error e = {0};
    check(!fy_doc_split("a\xffz", 3, NULL, &e) && e.code == FY_EINVAL &&
              strstr(e.msg, "invalid UTF-8 at byte 1"),
          "split rejects invalid UTF-8: %s", e.msg);
    check(!fy_doc_split("a\0b", 3, NULL, &e) && strstr(e.msg, "NUL byte at byte 1"),
          "split rejects NUL: %s", e.msg);
}

static void test_detect(void)
{
    check(!strcmp(fy_detect_language("你好，世界", strlen("你好，世界")), "zh"), "zh");
    check(!strcmp(fy_detect_language("Hello, world", 12), "en"), "en");
    check(!strcmp(fy_detect_language("", 0), "en"), "empty is en");
    check(!strcmp(fy_detect_language("12345 !!!", 9), "en"), "digits are en");
    const char *mixed = "我们用 SentencePiece 分词";
    check(!strcmp(fy_detect_language(mixed, strlen(mixed)), "zh"), "mixed zh");
    const char *few = "This long English paragraph mentions Beijing once as 北京 and goes on "
                      "for many more words about other things entirely.";
    check(!strcmp(fy_detect_language(few, strlen(few)), "en"), "english with a name");
    check(!strcmp(fy_detect_language("\xe4\xbd", 2), "en"), "truncated input");
}

/* ---- clean-up ------------------------------------------------------------------ */

static void test_cleanup(void)
{
    static const char *const cases[][2] = {
        {"Hello，world。", "Hello, world."},
        {"Really？！Yes！", "Really?! Yes!"},
        {"He said：“go”；then left。", "He said: “go”; then left."},
        {"（note）", "(note)"},
        {"ＡＢＣ１２３", "ABC123"},
        {"apples、pears", "apples, pears"},
        {"Wait……", "Wait..."},
        {"Hello , world .", "Hello, world."},
        {"Yes !", "Yes!"},
        {"a ( b ) c", "a (b) c"},
        {"Hello,, world..", "Hello, world."},
        {"Stop!!", "Stop!"},
        {"Well,.", "Well."},
        {"Wait... what", "Wait... what"},
        {"the the the the cat", "the cat"},
        {"the the the cat", "the the the cat"},
        {"I love you I love you I love you I love you .", "I love you."},
        {"go go go go go go go go go home", "go home"},
        {"a  b\t c", "a b c"},
        {"  padded  ", "padded"},
        {"See https://x.com/a,,b .. ok", "See https://x.com/a,,b. ok"},
        {"mail a..b@x.com now", "mail a..b@x.com now"},
        {"std::vector and ::", "std::vector and:"},
        {"3.14 and 1,000", "3.14 and 1,000"},
        {"", ""},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char *out = fy_cleanup_english(cases[k][0], strlen(cases[k][0]));
        check(out && !strcmp(out, cases[k][1]), "cleanup \"%s\" -> \"%s\" (want \"%s\")",
              cases[k][0], out ? out : "(null)", cases[k][1]);
        free(out);
    }
    char *out = fy_cleanup_english("ab\xe4\xbd", 4); /* truncated: no over-read */
    check(out != NULL, "cleanup of truncated UTF-8");
    free(out);
}

/* ---- spans ----------------------------------------------------------------------- */

static void test_spans(void)
{
    static const struct {
        const char *text, *span;
        int kind;
    } cases[] = {
        {"访问https://example.com/a?b=1。", "https://example.com/a?b=1", FY_SPAN_URL},
        {"see (http://x.org/a_(b)).", "http://x.org/a_(b)", FY_SPAN_URL},
        {"去 www.example.com, 然后", "www.example.com", FY_SPAN_URL},
        {"写信给zhang.san@mail.example.org。", "zhang.san@mail.example.org", FY_SPAN_EMAIL},
        {"运行 `make test` 吧", "`make test`", FY_SPAN_CODE},
        {"硬盘 512GB 的", "512GB", FY_SPAN_NUMUNIT},
        {"涨了2.35%，", "2.35%", FY_SPAN_NUMUNIT},
        {"气温 25°C。", "25°C", FY_SPAN_NUMUNIT},
        {"只要$19.99", "$19.99", FY_SPAN_NUMUNIT},
        {"时速 120 km/h 的", "120 km/h", FY_SPAN_NUMUNIT},
        {"我们用Node.js写", "Node.js", FY_SPAN_WORD},
        {"买了iPhone。", "iPhone", FY_SPAN_WORD},
        {"C++和", "C++", FY_SPAN_WORD},
        {"COVID-19疫情", "COVID-19", FY_SPAN_WORD},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        fy_spans sp = {0};
        fy_find_spans(cases[k].text, strlen(cases[k].text), &sp);
        int ok = 0;
        for (size_t i = 0; i < sp.n; i++)
            if (sp.v[i].len == strlen(cases[k].span) &&
                !memcmp(cases[k].text + sp.v[i].start, cases[k].span, sp.v[i].len) &&
                sp.v[i].kind == cases[k].kind)
                ok = 1;
        check(ok, "span %s in %s", cases[k].span, cases[k].text);
        free(sp.v);
    }
    static const char *const none[] = {"3 main points", "5 minutes", "python",
                                       "a@b",           "第3个",     "2019年"};
    for (size_t k = 0; k < sizeof none / sizeof *none; k++) {
        fy_spans sp = {0};
        fy_find_spans(none[k], strlen(none[k]), &sp);
        check(sp.n == 0, "no span in \"%s\" (got %zu)", none[k], sp.n);
        free(sp.v);
    }
}

/* ---- the cases file ---------------------------------------------------------------- */

static void run_case(const char *name, int html, const char *input, const char *expect)
{
    fy_doc *d = split(input, html, 0);
    if (!d) {
        check(0, "case %s: split failed", name);
        return;
    }
    fy_buf got = {0};
    for (size_t i = 0; i < fy_doc_sentence_count(d); i++) {
        fy_buf_put(&got, fy_doc_sentence(d, i, NULL), strlen(fy_doc_sentence(d, i, NULL)));
        fy_buf_putc(&got, '\n');
    }
    if (!got.n) fy_buf_put(&got, "(none)\n", 7);
    check(!strcmp(got.p, expect), "case %s: sentences\n%s-- want\n%s", name, got.p, expect);
    fy_buf_free(&got);
    fy_doc_free(d);
    check(round_trip(input, strlen(input), html, 0), "case %s: round trip", name);
}

static void test_cases_file(const char *dir)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/pipeline_cases.txt", dir);
    size_t len;
    char *text = read_file(path, &len);
    check(text != NULL, "read %s", path);
    if (!text) return;
    int ncases = 0;
    char *p = text;
    while ((p = strstr(p, "\n### "))) {
        p++;
        char *eol = strchr(p, '\n');
        if (!eol) break;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(eol - p - 4), p + 4);
        int html = strstr(name, " html") != NULL;
        char *body = eol + 1, *sep = strstr(body, "\n---\n");
        if (!sep) break;
        char *end = strstr(sep + 5, "\n\n###");
        char *stop = end ? end + 1 : text + len;
        char *input = strndup(body, (size_t)(sep - body));
        char *expect = strndup(sep + 5, (size_t)(stop - sep - 5));
        size_t el = strlen(expect);
        while (el > 1 && expect[el - 1] == '\n' && expect[el - 2] == '\n') expect[--el] = '\0';
        run_case(name, html, input, expect);
        free(input);
        free(expect);
        ncases++;
        p = stop;
    }
    check(ncases >= 20, "cases file has %d cases", ncases);
    free(text);
}

/* ---- long sentences ------------------------------------------------------------- */

static long count_bytes(void *ctx, const char *s, size_t len)
{
    (void)s;
    (*(int *)ctx)++;
    return (long)len;
}

static void test_long(void)
{
    /* Cut at '，' first, then at spaces, then anywhere (glued). */
    const char *s = "一二三四五，六七八九十，一二三四五六七八九十";
    fy_ranges r = {0};
    int calls = 0;
    fy_cut_long(s, strlen(s), 20, count_bytes, &calls, NULL, &r);
    check(r.n == 4 && r.v[0].len == 18 && r.v[1].len == 18 && r.v[2].len == 18 &&
              r.v[3].len == 12 && !r.v[1].glue && r.v[3].glue,
          "cut at commas, then anywhere: %zu pieces", r.n);
    r.n = 0;
    const char *w = "aaaa bbbb cccc dddd";
    fy_cut_long(w, strlen(w), 10, count_bytes, &calls, NULL, &r);
    check(r.n == 2 && r.v[0].len == 9 && r.v[1].start == 10 && !r.v[1].glue, "cut at space");
    r.n = 0;
    const char *x = "abcdefghijklmnopqrstuvwxyz";
    fy_cut_long(x, strlen(x), 10, count_bytes, &calls, NULL, &r);
    check(r.n == 3 && r.v[1].glue && r.v[2].glue && r.v[0].len == 10, "cut anywhere: %zu", r.n);
    r.n = 0;
    const char *u = "中文中文中文中文"; /* 24 bytes, limit 10: cuts at characters */
    fy_cut_long(u, strlen(u), 10, count_bytes, &calls, NULL, &r);
    int ok = 1;
    for (size_t k = 0; k < r.n; k++) ok &= r.v[k].len % 3 == 0 && r.v[k].len <= 10;
    check(ok && r.n == 3, "cut at UTF-8 boundaries: %zu", r.n);
    r.n = 0;
    const char *c = "前面，aaaa; bbbb, cccc dddd eeee";
    fy_cut_long(c, strlen(c), 25, count_bytes, &calls, NULL, &r);
    check(r.n >= 2 && r.v[0].len == 9, "comma before semicolon: %zu", r.v[0].len);
    free(r.v);

    /* Through the document: default 128 estimated tokens, nothing lost. */
    fy_buf b = {0};
    for (int k = 0; k < 60; k++)
        fy_buf_put(&b, "这是一个很长的句子，", strlen("这是一个很长的句子，"));
    fy_buf_put(&b, "结束。", strlen("结束。"));
    fy_doc *d = split(b.p, 0, 0);
    size_t n = fy_doc_sentence_count(d);
    ok = n > 1;
    for (size_t k = 0; k < n; k++)
        ok &= fy_estimate_tokens(fy_doc_sentence(d, k, NULL),
                                 strlen(fy_doc_sentence(d, k, NULL))) <= 128;
    check(ok, "long sentence cut into %zu pieces of <= 128 tokens", n);
    fy_doc_free(d);
    check(round_trip(b.p, b.n, 0, 0) && round_trip(b.p, b.n, 0, 7) && round_trip(b.p, b.n, 1, 5),
          "long sentence round trip");
    fy_buf_free(&b);
    check(fy_estimate_tokens("", 0) == 1 && fy_estimate_tokens("你好", 6) == 3 &&
              fy_estimate_tokens("hello world", 11) == 3,
          "token estimate");
}

/* A counter like the engine's: one token per Han character, plus EOS. */
static long count_han(void *ctx, const char *s, size_t len)
{
    (*(int *)ctx)++;
    long t = 1;
    for (size_t i = 0, n; i < len; i += n) t += fy_cp_is_han(fy_utf8_get(s, len, i, &n));
    return t;
}

static long count_unknown(void *ctx, const char *s, size_t len)
{
    (void)ctx, (void)s, (void)len;
    return -1;
}

static void test_counter(void)
{
    const char *in = "一二三四五六七八九十，一二三四五六七八九十。";
    int calls = 0;
    fy_split_options o;
    fy_split_options_default(&o);
    o.max_tokens = 12;
    o.count_tokens = count_han;
    o.count_ctx = &calls;
    fy_doc *d = fy_doc_split(in, strlen(in), &o, NULL);
    check(d && fy_doc_sentence_count(d) == 2 && calls > 0 &&
              !strcmp(fy_doc_sentence(d, 0, NULL), "一二三四五六七八九十，"),
          "split uses the token counter (%d calls)", calls);
    fy_doc_free(d);
    o.count_tokens = count_unknown;
    o.max_tokens = 0; /* zeroed options: 128 */
    d = fy_doc_split(in, strlen(in), &o, NULL);
    check(d && fy_doc_sentence_count(d) == 1, "unknown counts fall back to the estimate");
    fy_doc_free(d);
}

/* ---- joining --------------------------------------------------------------------- */

static void expect_join(const char *name, const char *in, int html, const char *const *tr,
                        const char *want)
{
    fy_doc *d = split(in, html, 0);
    char *out = d ? join(d, tr, 0) : NULL;
    check(out && !strcmp(out, want), "join %s:\n got  %s\n want %s", name, out ? out : "(null)",
          want);
    free(out);
    fy_doc_free(d);
}

static void test_join(void)
{
    const char *t1[] = {"Hello.", "I am Xiao Ming!", "And you?"};
    expect_join("spaces between sentences", "你好。我是小明！你呢？", 0, t1,
                "Hello. I am Xiao Ming! And you?");
    const char *t2[] = {"First paragraph.", "Second.", "Third, indented."};
    expect_join("paragraphs", "第一段。\n\n第二段。\n    第三段。\n", 0, t2,
                "First paragraph.\n\nSecond.\n    Third, indented.\n");
    const char *t3[] = {"Visit for details."};
    expect_join("missing url is put back", "访问https://example.com/a?b=1了解详情。", 0, t3,
                "Visit for details https://example.com/a?b=1.");
    const char *t4[] = {"Visit https: //Example. com/a?b=1 for details."};
    expect_join("mangled url is repaired", "访问https://example.com/a?b=1了解详情。", 0, t4,
                "Visit https://example.com/a?b=1 for details.");
    const char *t5[] = {"We write code in node. js and c++."};
    expect_join("soft words are repaired, not forced", "我们用Node.js和C++写代码。", 0, t5,
                "We write code in Node.js and C++.");
    const char *t6[] = {"We write code."};
    expect_join("soft words are not forced", "我们用Node.js写代码。", 0, t6, "We write code.");
    const char *t7[] = {"Hello，world。", "the the the the end"};
    expect_join("clean-up applied", "你好世界。结束", 0, t7, "Hello, world. the end");
    const char *t8[] = {NULL, "Fine."};
    expect_join("NULL translation keeps the source", "你好。很好。", 0, t8, "你好。Fine.");
    const char *t9[] = {"Hello."};
    expect_join("english passthrough keeps its place", "OK!你好。Bye.", 0, t9, "OK! Hello. Bye.");
    const char *t10[] = {"Price 5GB disk."};
    expect_join("number with unit", "价格 5GB 硬盘。", 0, t10, "Price 5GB disk.");
    const char *t11[] = {"Run `make install` now."};
    expect_join("code span", "现在运行 `make install`。", 0, t11, "Run `make install` now.");

    const char *t13[] = {"He said we use ai technology."};
    expect_join("soft spans match whole words only", "他说我们用AI技术。", 0, t13,
                "He said we use AI technology.");
    const char *t14[] = {"Run the make install command."};
    expect_join("code span without backticks", "运行 `make install` 命令。", 0, t14,
                "Run the `make install` command.");
    const char *t15[] = {"Up 50 percent."};
    expect_join("number conveyed in words", "涨了50%。", 0, t15, "Up 50 percent.");
    const char *t16[] = {"It went up."};
    expect_join("number dropped is put back", "涨了50%。", 0, t16, "It went up 50%.");
    const char *t17[] = {"Hello world."};
    expect_join("source spacing does not leak", "你好　世界，  再见。", 0, t17, "Hello world.");
    const char *t18[] = {"Good.", "\"Yes,\" he said."};
    expect_join("space before an opening quote", "好。“是的，”他说。", 0, t18,
                "Good. \"Yes,\" he said.");

    /* Pieces cut inside a word get no space between them. */
    fy_doc *d = split("中文中文中文", 0, 3);
    const char *t12[] = {"Chi", "nese", "text"};
    char *out = d ? join(d, t12, 0) : NULL;
    check(fy_doc_sentence_count(d) == 3 && out && !strcmp(out, "Chinesetext"), "glued pieces: %s",
          out);
    free(out);
    fy_doc_free(d);

    /* out_spans give each translation's place in the output. */
    d = split("第一句。\n第二句。", 0, 0);
    const char *tr[] = {"One.", "Two."};
    size_t spans[4], len;
    out = fy_doc_join_ex(d, tr, 0, &len, spans, NULL);
    check(out && len == 9 && spans[0] == 0 && spans[1] == 4 && spans[2] == 5 && spans[3] == 4,
          "output spans");
    size_t a, l;
    check(fy_doc_sentence_span(d, 1, &a, &l) == 0 && a == 13 && l == 12, "source span");
    check(fy_doc_sentence_span(d, 2, &a, &l) == FY_EINVAL && !fy_doc_sentence(d, 2, NULL),
          "out of range");
    free(out);
    fy_doc_free(d);
    fy_doc_free(NULL);
    check(fy_doc_sentence_count(NULL) == 0, "NULL doc");

    /* No Chinese: nothing for the engine, the text comes back unchanged. */
    d = split("Just English, nothing else.\n  Indented. https://x.com", 0, 0);
    out = join(d, NULL, 0);
    check(fy_doc_sentence_count(d) == 0 &&
              !strcmp(out, "Just English, nothing else.\n  Indented. https://x.com"),
          "english passthrough");
    free(out);
    fy_doc_free(d);
    d = split("", 0, 0);
    out = join(d, NULL, 0);
    check(d && fy_doc_sentence_count(d) == 0 && out && !strcmp(out, ""), "empty input");
    free(out);
    fy_doc_free(d);
}

/* ---- HTML ------------------------------------------------------------------------- */

/* The sequence of tags in s (naive "<...>" scan), for well-formedness. */
static void tags_of(const char *s, fy_buf *b)
{
    for (const char *p = s; (p = strchr(p, '<'));) {
        const char *e = strchr(p, '>');
        if (!e) break;
        if (p[1] == '/' || (p[1] >= 'a' && p[1] <= 'z') || p[1] == '!') {
            fy_buf_put(b, p, (size_t)(e - p + 1));
            fy_buf_putc(b, '\n');
        }
        p = e + 1;
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The tags of s, one per line, sorted (s's buffer is modified). */
static size_t sorted_tags(char *s, char **v, size_t cap)
{
    size_t n = 0;
    for (char *p = strtok(s, "\n"); p && n < cap; p = strtok(NULL, "\n")) v[n++] = p;
    qsort(v, n, sizeof *v, cmp_str);
    return n;
}

/* Are the open/close tags of s properly nested (void tags ignored)? */
static int nested(const char *s)
{
    char stack[64][16];
    int depth = 0;
    for (const char *p = s; (p = strchr(p, '<'));) {
        const char *e = strchr(p, '>');
        if (!e) break;
        int close = p[1] == '/';
        const char *nm = p + 1 + close;
        size_t n = strspn(nm, "abcdefghijklmnopqrstuvwxyz0123456789");
        static const char *const voids = " br img meta hr input link ";
        char key[24];
        snprintf(key, sizeof key, " %.*s ", (int)(n < 16 ? n : 15), nm);
        p = e + 1;
        if (!n || strstr(voids, key) || e[-1] == '/') continue;
        if (!close) {
            if (depth == 64) return 0;
            snprintf(stack[depth++], 16, "%.*s", (int)(n < 15 ? n : 15), nm);
        } else if (!depth || strncmp(stack[--depth], nm, n) || stack[depth][n]) {
            return 0;
        }
    }
    return depth == 0;
}

/* Output has the same tags as the input, and is well-formed if it was. */
static int same_tags(const char *a, const char *b)
{
    fy_buf x = {0}, y = {0};
    tags_of(a, &x);
    tags_of(b, &y);
    int ok = x.n == y.n;
    if (ok && x.n) {
        static char *va[4096], *vb[4096];
        size_t na = sorted_tags(x.p, va, 4096), nb = sorted_tags(y.p, vb, 4096);
        ok = na == nb;
        for (size_t k = 0; ok && k < na; k++) ok = !strcmp(va[k], vb[k]);
    }
    if (ok && nested(a)) ok = nested(b);
    fy_buf_free(&x);
    fy_buf_free(&y);
    return ok;
}

static const char *const html_docs[] = {
    "<!DOCTYPE html>\n<html lang=\"zh\"><head><meta charset=\"utf-8\"><title>标题</title>\n"
    "<style>p { color: red; } /* 中文。 */</style></head>\n<body>\n"
    "  <h1>欢迎来到<em>我们的</em>网站！</h1>\n"
    "  <p>这是<b>粗体</b>文字。第二句&amp;符号&nbsp;空格！</p>\n"
    "  <div translate=\"no\">不要翻译。</div>\n"
    "  <p>运行<code>make &lt;x&gt;</code>命令，\n     然后<a "
    "href=\"https://x.com\">点击这里</a>。<br>换行后。</p>\n"
    "  <pre>  预格式 <b>文本</b>。 </pre><!-- 注释。 -->\n"
    "  <ul><li>一</li><li>English only.</li><li>第<i>三</i>项</li></ul>\n"
    "  <script>var s = \"<p>中文。</p>\";</script>\n</body></html>\n",
    "<p>链接：<a href=\"https://example.com\">https://example.com</a>，请访问。</p>",
    "<p><span class=\"x\">嵌套<b>的<i>标签</i></b>很多</span>，还有<img src=\"a.png\" "
    "alt=\"图\">图片。</p>",
    "<table><tr><td>单元格一</td><td>单元格二。</td></tr></table>",
    "未闭合的<b>标签。<p>还有<!-- 未闭合的注释",
    "<p>A &lt; B &amp;&amp; C &gt; D，这是比较。&#20320;&#x597D;</p>",
    "<p title='单引号\"属性' data-x=\"a>b\">属性里有&gt;号。</p>",
    "<div><p>段落<br/>换行<br>再换行</p></div>",
    "纯文本没有标签。第二句。",
};

static int collect_text(void *ctx, const char *s, size_t n)
{
    fy_buf_put(ctx, s, n);
    return 0;
}

static int collect_slot(void *ctx, size_t k)
{
    (void)ctx, (void)k;
    return 0;
}

static int collect_object(void *ctx, int kind, size_t k)
{
    (void)ctx, (void)kind, (void)k;
    return 0;
}

/* A translation with a control character (a synthetic model emitted U+0013)
 * still rebuilds its unit: the character is dropped, not the document. */
static void test_markup_controls(void)
{
    const char *tr = "a\x13<span data-k=\"0\">b\x01"
                     "c</span>\td";
    fy_buf got = {0};
    mk_sink sink = {collect_text, collect_slot, collect_slot, collect_object, &got, 1};
    fy_error err = {0};
    int rc = mk_decode(tr, strlen(tr), &sink, &err);
    fy_buf_putc(&got, 0);
    check(rc == 0 && !strcmp(got.p, "abc\td"),
          "markup with control characters decodes (%d %s): '%s'", rc, err.msg, got.p);
    check(mk_check("x\x1fy", 3, 0, &err) == 0, "mk_check accepts a control character (%s)",
          err.msg);
    fy_buf_free(&got);
}

static void test_html(void)
{
    for (size_t k = 0; k < sizeof html_docs / sizeof *html_docs; k++) {
        const char *in = html_docs[k];
        check(round_trip(in, strlen(in), 1, 0), "html %zu round trip", k);
        fy_doc *d = split(in, 1, 0);
        size_t n = fy_doc_sentence_count(d);
        const char **tr = calloc(n + 1, sizeof *tr);
        static const char *const words[] = {
            "Hello world, this is text.", "A <b> & c > d", "One", "",
            "https://example.com now",    "x y z w"};
        for (size_t i = 0; i < n; i++) tr[i] = words[(i + k) % 6];
        char *out = join(d, tr, 0);
        check(out && same_tags(in, out), "html %zu keeps its tags:\n%s", k, out ? out : "");
        check(out && !strstr(out, "A <b> &"), "html %zu escapes translations", k);
        free(out);
        free(tr);
        fy_doc_free(d);
    }
    /* Untouched content survives a translation. */
    fy_doc *d = split(html_docs[0], 1, 0);
    size_t n = fy_doc_sentence_count(d);
    const char **tr = calloc(n + 1, sizeof *tr);
    for (size_t i = 0; i < n; i++) tr[i] = "Translated.";
    char *out = join(d, tr, 0);
    check(out && strstr(out, "<div translate=\"no\">不要翻译。</div>") &&
              strstr(out, "<pre>  预格式 <b>文本</b>。 </pre><!-- 注释。 -->") &&
              strstr(out, "var s = \"<p>中文。</p>\";") &&
              strstr(out, "<code>make &lt;x&gt;</code>") && strstr(out, "/* 中文。 */") &&
              strstr(out, "<li>English only.</li>") && strstr(out, "<title>Translated.</title>"),
          "html untouched parts:\n%s", out);
    free(out);
    free(tr);
    fy_doc_free(d);

    /* Tags around a protected span follow it; tags at boundaries stay there. */
    const char *t1[] = {"Link: https://example.com, please visit."};
    expect_join(
        "tags follow a span", html_docs[1], 1, t1,
        "<p>Link: <a href=\"https://example.com\">https://example.com</a>, please visit.</p>");
    const char *t2[] = {"This is bold text.", "Second!"};
    expect_join("boundary tags", "<p><b>这是粗体文字。</b>第二！</p>", 1, t2,
                "<p><b>This is bold text.</b> Second!</p>");
    const char *t3[] = {"Use make now."};
    expect_join("code element", "<p>现在用<code>make</code>。</p>", 1, t3,
                "<p>Use <code>make</code> now.</p>");
    const char *t4[] = {"This is a long sentence, wrapped in the source."};
    expect_join("newline inside a sentence", "<p>这是一个很长的句子，\n   在源码里换了行。</p>", 1,
                t4, "<p>This is a long sentence,\n   wrapped in the source.</p>");
    const char *t6[] = {"I like Python programming, and GitHub."};
    expect_join("tags around latin words", "<p>我喜欢<b>Python</b>编程，和<i>GitHub</i>。</p>", 1,
                t6, "<p>I like <b>Python</b> programming, and <i>GitHub</i>.</p>");
    const char *t5[] = {"Fish & chips < 5 > 3 ©."};
    expect_join("escaping", "<p>炸鱼&amp;薯条&copy;。</p>", 1, t5,
                "<p>Fish &amp; chips &lt; 5 &gt; 3 &copy;.</p>");
}

/* ---- placeholders --------------------------------------------------------------------- */

static fy_doc *split_ph(const char *s, int html, const char *source, const char *target)
{
    fy_split_options o;
    fy_split_options_default(&o);
    o.html = html;
    o.placeholders = 1;
    o.source = source;
    o.target = target;
    fy_error e = {0};
    fy_doc *d = fy_doc_split(s, strlen(s), &o, &e);
    if (!d) printf("  split error: %s\n", e.msg);
    return d;
}

/* The engine text of every sentence of in, joined by "|". */
static void expect_engine(const char *name, const char *in, int html, const char *want)
{
    fy_doc *d = split_ph(in, html, "zh", "en");
    char got[512] = "";
    for (size_t i = 0; d && i < fy_doc_sentence_count(d); i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? "|" : "",
                 fy_doc_sentence(d, i, NULL));
    check(d && !strcmp(got, want), "placeholders %s: engine text\n got  %s\n want %s", name, got,
          want);
    fy_doc_free(d);
}

static void expect_ph(const char *name, const char *in, int html, const char *source,
                      const char *target, const char *const *tr, const char *want)
{
    fy_doc *d = split_ph(in, html, source, target);
    char *out = d ? join(d, tr, 0) : NULL;
    check(out && !strcmp(out, want), "placeholders %s:\n got  %s\n want %s", name,
          out ? out : "(null)", want);
    free(out);
    char *same = d ? join(d, NULL, 0) : NULL;
    check(same && !strcmp(same, in), "placeholders %s: identity join", name);
    free(same);
    fy_doc_free(d);
}

static void test_placeholders(void)
{
    int kind;
    static const char *const one[] = {"{0}",       "{{12}}", "[3]",    "[[4]]",
                                      "<b0></b0>", "<b0/>",  "<x12 />"};
    for (size_t k = 0; k < sizeof one / sizeof *one; k++) {
        char s[32];
        snprintf(s, sizeof s, "%s tail", one[k]);
        check(fy_placeholder_at(s, strlen(s), 0, &kind) == strlen(one[k]) && kind == FY_EV_OTHER,
              "placeholder %s", one[k]);
    }
    static const char *const not_one[] = {"{}",   "{a}",       "{12345}", "{{1}",
                                          "{1}}", "[[1]",      "<b></b>", "<b0></b1>",
                                          "<b0>", "<0b></0b>", "<b0x>"};
    for (size_t k = 0; k < sizeof not_one / sizeof *not_one; k++)
        check(!fy_placeholder_at(not_one[k], strlen(not_one[k]), 0, &kind), "not a placeholder %s",
              not_one[k]);
    const char *pair = "<i1>link</i1>";
    check(fy_placeholder_at(pair, strlen(pair), 0, &kind) == 4 && kind == FY_EV_OPEN &&
              fy_placeholder_at(pair, strlen(pair), 8, &kind) == 5 && kind == FY_EV_CLOSE,
          "a numbered pair is an inline element");

    /* The engine never sees them. */
    expect_engine("removed", "<b0></b0> 你好 <b1></b1> 世界", 0, "你好 世界");
    expect_engine("inside words", "你好{0}世界{1}", 0, "你好世界");
    expect_engine("html", "<p>你好{{1}}<b0></b0>世界</p>", 1, "你好世界");
    expect_engine("pair", "点击<i1>这里</i1>。", 1, "点击这里。");

    /* Immersive Translate's examples: each comes back unchanged, in place (at
     * the edges and between sentences exactly, inside a sentence at the same
     * relative position, on a word boundary). */
    const char *t1[] = {"Hello world"};
    expect_ph("edges and spaces", "{0} 你好 {1} 世界", 0, "zh", "en", t1, "{0} Hello {1} world");
    expect_ph("tags", "<b0></b0> 你好 <b1></b1> 世界", 0, "zh", "en", t1,
              "<b0></b0> Hello <b1></b1> world");
    const char *t2[] = {"Hallo Welt"};
    expect_ph("latin source", "{0} Hello {1} world", 0, "en", "de", t2, "{0} Hallo {1} Welt");
    const char *t3[] = {"Hello world."};
    expect_ph("no spaces, CJK source", "你好{0}世界{1}。", 0, "zh", "en", t3, "Hello{0} world.{1}");
    const char *t4[] = {"你好。", "世界。"};
    expect_ph("between sentences", "Hello.{0} World. [1]", 0, "en", "zh", t4,
              "你好。{0} 世界。 [1]");
    const char *t5[] = {"Click here to see more."};
    expect_ph("kiss rich text", "点击<i1>这里</i1>查看{1}更多。", 1, "zh", "en", t5,
              "Click <i1>here</i1> to {1}see more.");
    const char *t6[] = {"Tom & Jerry"};
    expect_ph("html escapes text, not placeholders", "汤姆&amp;杰瑞 {2}", 1, "zh", "en", t6,
              "Tom &amp; Jerry {2}");
    /* Without the option they are text like any other. */
    fy_doc *d = split("你好{0}世界", 0, 0);
    check(d && fy_doc_sentence_count(d) == 1 && !strcmp(fy_doc_sentence(d, 0, NULL), "你好{0}世界"),
          "placeholders are text without the option");
    fy_doc_free(d);
}

/* ---- round trips on files ----------------------------------------------------------- */

static int round_trip_paragraphs(const char *text, size_t len, int *count)
{
    int ok = 1;
    /* The whole file, then each blank-line separated paragraph, then lines. */
    ok &= round_trip(text, len, 0, 0);
    ok &= round_trip(text, len, 0, 16);
    ok &= round_trip(text, len, 1, 0);
    (*count)++;
    for (size_t a = 0; a < len;) {
        const char *nl = memchr(text + a, '\n', len - a);
        size_t e = nl ? (size_t)(nl - text) + 1 : len;
        ok &= round_trip(text + a, e - a, 0, 0);
        (*count)++;
        a = e;
    }
    return ok;
}

static void test_files(const char *dir)
{
    DIR *dd = opendir(dir);
    check(dd != NULL, "open %s", dir);
    if (!dd) return;
    struct dirent *de;
    int files = 0, count = 0;
    while ((de = readdir(dd))) {
        size_t n = strlen(de->d_name);
        if (n < 4 || strcmp(de->d_name + n - 4, ".txt")) continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        size_t len;
        char *text = read_file(path, &len);
        check(text && round_trip_paragraphs(text, len, &count), "round trip %s", path);
        free(text);
        files++;
    }
    closedir(dd);
    check(files >= 2, "text files: %d", files);
    printf("round trip: %d files, %d documents\n", files, count);
}

/* Paragraphs from WMT lines: groups of Chinese and English lines joined by
 * varied separators (newline, blank line, indentation, CRLF, nothing). */
static void test_wmt(const char *shared)
{
    static const char *const sets[] = {"wmt18", "wmt19"};
    static const char *const seps[] = {"\n", "\n\n", "\n    ",         "\r\n",
                                       "",   " ",    "\n\u3000\u3000", "\t"};
    int docs = 0, bad = 0, sentences = 0;
    clock_t t0 = clock();
    for (size_t s = 0; s < 2; s++) {
        char pz[8192], pe[8192];
        snprintf(pz, sizeof pz, "%s/data/wmt/%s.zh", shared, sets[s]);
        snprintf(pe, sizeof pe, "%s/data/wmt/%s.en", shared, sets[s]);
        size_t lz, le;
        char *z = read_file(pz, &lz), *e = read_file(pe, &le);
        if (!z || !e) {
            printf("wmt %s: not present, skipped\n", sets[s]);
            free(z);
            free(e);
            continue;
        }
        const char *pzc = z, *pec = e;
        fy_buf b = {0};
        for (int g = 0; *pzc || *pec; g++) {
            b.n = 0;
            int lines = 1 + g % 6;
            for (int k = 0; k < lines; k++) {
                const char **pp = (k + g) % 3 == 2 ? &pec : &pzc;
                if (!**pp) pp = **pp ? pp : (pp == &pec ? &pzc : &pec);
                if (!**pp) break;
                const char *nl = strchr(*pp, '\n');
                size_t n = nl ? (size_t)(nl - *pp) : strlen(*pp);
                if (k) fy_buf_put(&b, seps[(g + k) % 8], strlen(seps[(g + k) % 8]));
                fy_buf_put(&b, *pp, n);
                *pp += n + (nl != NULL);
            }
            if (!b.n) continue;
            fy_split_options o;
            fy_split_options_default(&o);
            fy_doc *d = fy_doc_split(b.p, b.n, &o, NULL);
            sentences += d ? (int)fy_doc_sentence_count(d) : 0;
            fy_doc_free(d);
            if (!round_trip(b.p, b.n, g % 2, g % 5 == 0 ? 24 : 0)) bad++;
            docs++;
        }
        fy_buf_free(&b);
        free(z);
        free(e);
    }
    check(bad == 0, "wmt round trip: %d of %d paragraphs differ", bad, docs);
    printf("wmt round trip: %d paragraphs, %d sentences, %.2f s\n", docs, sentences,
           (double)(clock() - t0) / CLOCKS_PER_SEC);
}

/* ---- random documents ----------------------------------------------------------------- */

static uint64_t rng = 88172645463325252ull;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static int count_of(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p++) n++;
    return n;
}

/* Every strict span of in (URL, e-mail, code, number with unit) occurs in
 * the output of a join where every sentence is translated as tr. */
static int spans_kept(const char *in, const char *tr)
{
    fy_doc *d = split(in, 0, 64);
    size_t n = fy_doc_sentence_count(d);
    const char **t = calloc(n + 1, sizeof *t);
    for (size_t i = 0; i < n; i++) t[i] = tr;
    char *out = join(d, t, 0);
    fy_spans sp = {0};
    fy_find_spans(in, strlen(in), &sp);
    int ok = out != NULL;
    for (size_t k = 0; k < sp.n && ok; k++) {
        if (!fy_span_is_strict(sp.v[k].kind)) continue;
        char *needle = strndup(in + sp.v[k].start, sp.v[k].len);
        int need = 0;
        for (size_t j = 0; j < sp.n; j++)
            need += sp.v[j].len == sp.v[k].len && !memcmp(in + sp.v[j].start, needle, sp.v[k].len);
        ok = count_of(out, needle) >= need;
        if (!ok) printf("  lost %s:\n%s\n->\n%s\n", needle, in, out);
        free(needle);
    }
    free(sp.v);
    free(out);
    free(t);
    fy_doc_free(d);
    return ok;
}

static void test_random(void)
{
    static const char *const atoms[] = {"你",
                                        "好",
                                        "。",
                                        "！",
                                        "？",
                                        "?",
                                        "!",
                                        ".",
                                        ",",
                                        "，",
                                        "、",
                                        " ",
                                        "\n",
                                        "  ",
                                        "\t",
                                        "a",
                                        "Bb",
                                        "3",
                                        ".14",
                                        "http://x.y/z",
                                        "a@b.cc",
                                        "`c`",
                                        "5GB",
                                        "e.g.",
                                        "Mr.",
                                        "“",
                                        "”",
                                        "（",
                                        "）",
                                        "……",
                                        "；",
                                        "\u3000",
                                        "<b>",
                                        "</b>",
                                        "<p>",
                                        "</p>",
                                        "<br>",
                                        "&amp;",
                                        "&nbsp;",
                                        "<!--c-->",
                                        "<code>x</code>",
                                        "&",
                                        "<a href=\"u\">",
                                        "</a>",
                                        "\r\n",
                                        "\xf0\x9f\x91\x8d",
                                        "iPhone",
                                        "&#x4e2d;",
                                        "<span translate=\"no\">不</span>",
                                        "\xf3\xb0\x80\x80",
                                        "\xef\xbf\xbc",
                                        "\xef\xbf\xbd"};
    static const char *const outs[] = {
        "Hello world.",    "",    "x", "Hello https://x.y/z and a@b.cc", "a  b", "<&>",
        "the the the the", "你好"};
    int bad_rt = 0, bad_tags = 0, bad_utf8 = 0, bad_lines = 0, bad_spans = 0, n_docs = 3000;
    fy_buf b = {0};
    for (int it = 0; it < n_docs; it++) {
        int html = it % 2;
        b.n = 0;
        int na = 1 + (int)rnd(40);
        size_t natoms = sizeof atoms / sizeof *atoms;
        for (int k = 0; k < na; k++) {
            const char *a = atoms[rnd((uint32_t)natoms)];
            if (html && (!strcmp(a, "&") || !strcmp(a, "<!--c-->"))) continue;
            fy_buf_put(&b, a, strlen(a));
        }
        if (!round_trip(b.p ? b.p : "", b.n, html, 1 + (int)rnd(20))) bad_rt++;
        fy_doc *d = split(b.p ? b.p : "", html, 1 + (int)rnd(20));
        size_t n = fy_doc_sentence_count(d);
        const char **tr = calloc(n + 1, sizeof *tr);
        for (size_t i = 0; i < n; i++) tr[i] = outs[rnd(8)];
        char *out = join(d, tr, 0);
        if (!out || !fy_utf8_valid(out, strlen(out), NULL)) bad_utf8++;
        if (html && out && !same_tags(b.p ? b.p : "", out)) bad_tags++;
        if (out && count_of(out, "\n") != count_of(b.p ? b.p : "", "\n")) bad_lines++;
        free(out);
        free(tr);
        fy_doc_free(d);
        if (!html && !spans_kept(b.p ? b.p : "", outs[it % 8])) bad_spans++;
    }
    check(bad_lines == 0, "random joins: %d changed the line breaks", bad_lines);
    check(bad_spans == 0, "random joins: %d lost a protected span", bad_spans);
    check(bad_rt == 0, "random round trips: %d of %d differ", bad_rt, n_docs);
    check(bad_utf8 == 0, "random joins: %d invalid outputs", bad_utf8);
    check(bad_tags == 0, "random html: %d lost their tag sequence", bad_tags);
    /* Random bytes: rejected or split, never read out of bounds. */
    for (int it = 0; it < 2000; it++) {
        size_t n = rnd(24);
        char *p = malloc(n + 1);
        for (size_t k = 0; k < n; k++) p[k] = (char)(rnd(2) ? 0x80 + rnd(0x80) : rnd(0x80));
        fy_doc *d = fy_doc_split(p, n, NULL, NULL);
        if (d) {
            char *o = join(d, NULL, 0);
            check(o && strlen(o) == n && !memcmp(o, p, n), "random bytes round trip");
            free(o);
        }
        fy_doc_free(d);
        free(fy_cleanup_english(p, n));
        fy_detect_language(p, n);
        fy_utf8_valid(p, n, NULL);
        free(p);
    }
    fy_buf_free(&b);
}

/* ---- threads ------------------------------------------------------------------------- */

typedef struct job {
    const fy_doc *d;
    const char *want;
    int ok;
} job;

static void *join_many(void *arg)
{
    job *j = arg;
    const char *tr[] = {"One <b>.", "Two https://x.com.", "Three three three three."};
    j->ok = 1;
    for (int k = 0; k < 200; k++) {
        char *out = fy_doc_join(j->d, tr, NULL);
        j->ok &= out && !strcmp(out, j->want);
        free(out);
    }
    return NULL;
}

static void test_threads(void)
{
    const char *in = "<p>第一<b>句</b>。</p><p>看https://x.com吧。</p><p>第三句。</p>";
    fy_doc *d = split(in, 1, 0);
    const char *tr[] = {"One <b>.", "Two https://x.com.", "Three three three three."};
    char *want = fy_doc_join(d, tr, NULL);
    job jobs[4];
    pthread_t th[4];
    for (int k = 0; k < 4; k++) {
        jobs[k] = (job){d, want, 0};
        pthread_create(&th[k], NULL, join_many, &jobs[k]);
    }
    int ok = 1;
    for (int k = 0; k < 4; k++) pthread_join(th[k], NULL), ok &= jobs[k].ok;
    check(ok && want, "concurrent joins of one doc agree");
    free(want);
    fy_doc_free(d);
}

int main(int argc, char **argv)
{
    const char *src = getenv("FANYI_SOURCE_DIR");
    const char *shared = getenv("FANYI_SHARED_DIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/data/text", argc > 1 ? argv[1] : src ? src : ".");
    test_utf8();
    test_detect();
    test_cleanup();
    test_spans();
    test_cases_file(dir);
    test_long();
    test_counter();
    test_join();
    test_html();
    test_markup_controls();
    test_placeholders();
    test_files(dir);
    if (shared)
        test_wmt(shared);
    else
        printf("wmt round trip: FANYI_SHARED_DIR not set, skipped\n");
    test_random();
    test_threads();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
