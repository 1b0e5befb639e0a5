/* test_glossary.c - glossaries (text/glossary.h) and how the splitter and
 * the joiner enforce them (text/segment.h): entries and their errors, TSV
 * and CSV, matching by the language's rules, the target's case, and terms
 * through split -> engine -> join with an identity engine and with
 * translations that move, change or drop the term (plain text, HTML,
 * markup inside a term as at a .docx run boundary, raw mode). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "text/glossary.h"
#include "text/segment.h"
#include "text/text_internal.h"

static fy_glossary *make(const char *src, const char *tgt, const char *tsv)
{
    fy_error err = {0};
    fy_glossary *g = fy_glossary_new(src, tgt, &err);
    if (!g || fy_glossary_parse(g, tsv, strlen(tsv), FY_GLOSSARY_TSV, &err) ||
        fy_glossary_compile(g, &err)) {
        printf("make(%s): %s\n", tsv, err.msg);
        fy_glossary_unref(g);
        return NULL;
    }
    return g;
}

/* The matches of g in text as "start+len:entry " items. */
static char *matches(const fy_glossary *g, const char *text)
{
    fy_term_match *m = NULL;
    size_t n = 0, cap = 0;
    fy_glossary_match(g, text, strlen(text), &m, &n, &cap);
    static char out[512];
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        snprintf(out + strlen(out), sizeof out - strlen(out), "%zu+%zu:%u ", m[i].start, m[i].len,
                 m[i].entry);
    free(m);
    return out;
}

static char *render(const fy_glossary *g, uint32_t e, const char *occ)
{
    static char out[256];
    fy_buf b = {0};
    fy_glossary_render(g, e, occ, strlen(occ), &b);
    char *s = fy_buf_take(&b, NULL);
    snprintf(out, sizeof out, "%s", s ? s : "(null)");
    free(s);
    return out;
}

static void test_case(void)
{
    check(fy_cp_fold('A') == 'a' && fy_cp_upper('z') == 'Z', "ASCII case");
    check(fy_cp_fold(0x00C9) == 0x00E9 && fy_cp_upper(0x00E9) == 0x00C9, "É é");
    check(fy_cp_fold(0x0100) == 0x0101 && fy_cp_upper(0x0101) == 0x0100, "Ā ā");
    check(fy_cp_fold(0x0139) == 0x013A && fy_cp_upper(0x013A) == 0x0139, "Ĺ ĺ (odd pairs)");
    check(fy_cp_fold(0x0218) == 0x0219, "Ș ș (Romanian)");
    check(fy_cp_fold(0x1EA0) == 0x1EA1 && fy_cp_upper(0x1EC7) == 0x1EC6, "Vietnamese");
    check(fy_cp_fold(0x0394) == 0x03B4 && fy_cp_fold(0x03C2) == 0x03C3, "Greek, final sigma");
    check(fy_cp_fold(0x0386) == 0x03AC && fy_cp_upper(0x03CE) == 0x038F, "Greek tonos");
    check(fy_cp_fold(0x0416) == 0x0436 && fy_cp_fold(0x0401) == 0x0451, "Cyrillic Ж Ё");
    check(fy_cp_upper(0x0491) == 0x0490, "Ukrainian ґ");
    check(fy_cp_fold(0x0531) == 0x0561, "Armenian");
    check(fy_cp_fold(0x4E2D) == 0x4E2D && fy_cp_upper(0x00DF) == 0x00DF, "no case: itself");
}

static void test_entries(void)
{
    fy_error err = {0};
    fy_glossary *g = fy_glossary_new("en", "de", &err);
    check(g && !fy_glossary_add(g, "power plant", 11, "Kraftwerk", 9, &err), "add");
    check(fy_glossary_add(g, "Power Plant", 11, "x", 1, &err) == FY_EINVAL &&
              strstr(err.msg, "duplicate source term 'power plant' (already in entry 1)"),
          "a duplicate as English compares it: %s", err.msg);
    check(fy_glossary_add(g, "  ", 2, "x", 1, &err) == FY_EINVAL &&
              !strcmp(err.msg, "the source term is empty"),
          "empty: %s", err.msg);
    check(fy_glossary_add(g, "a\xff", 2, "x", 1, &err) == FY_EINVAL &&
              strstr(err.msg, "not valid UTF-8 (byte 1)"),
          "invalid UTF-8: %s", err.msg);
    check(fy_glossary_add(g, "ok", 2, "b\xc3", 2, &err) == FY_EINVAL &&
              strstr(err.msg, "the target term of 'ok' is not valid UTF-8"),
          "invalid target: %s", err.msg);
    check(fy_glossary_add(g, "a\x01", 2, "x", 1, &err) == FY_EINVAL &&
              strstr(err.msg, "control character (U+0001)"),
          "control: %s", err.msg);
    char longt[FY_GLOSSARY_TERM_MAX + 2];
    memset(longt, 'x', sizeof longt - 1);
    longt[sizeof longt - 1] = '\0';
    check(fy_glossary_add(g, longt, strlen(longt), "y", 1, &err) == FY_EINVAL &&
              strstr(err.msg, "is longer than 1024 bytes (1025)") && strstr(err.msg, "...'"),
          "too long: %s", err.msg);
    check(!fy_glossary_add(g, "Fanyi", 5, "", 0, &err) &&
              !fy_glossary_add(g, "GPU", 3, "GPU", 3, &err),
          "keep as is (empty target, target = source)");
    check(fy_glossary_count(g) == 3, "nothing added on error: %zu", fy_glossary_count(g));
    const char *s, *t;
    check(!fy_glossary_entry(g, 1, &s, &t) && !strcmp(s, "Fanyi") && !strcmp(t, "") &&
              fy_glossary_keeps(g, 1) && fy_glossary_keeps(g, 2) && !fy_glossary_keeps(g, 0),
          "entries");
    check(fy_glossary_compile(g, &err) == 0 && strlen(fy_glossary_hash(g)) == 16, "hash");
    check(fy_glossary_add(g, "b", 1, "c", 1, &err) == FY_EINVAL, "immutable once compiled");
    char *tsv = fy_glossary_export(g, FY_GLOSSARY_TSV, NULL);
    check(tsv && !strcmp(tsv, "power plant\tKraftwerk\nFanyi\tFanyi\nGPU\tGPU\n"), "TSV: %s", tsv);
    fy_glossary *h = make("en", "de", tsv);
    check(h && !strcmp(fy_glossary_hash(h), fy_glossary_hash(g)),
          "export then import: the same hash");
    free(tsv);
    fy_glossary *z = fy_glossary_new("zh", "en", &err);
    check(z && !fy_glossary_add(z, "Apple", 5, "a", 1, &err) &&
              !fy_glossary_add(z, "apple", 5, "b", 1, &err),
          "Chinese compares exactly: Apple and apple are two terms");
    fy_glossary_unref(z);
    fy_glossary_unref(h);
    fy_glossary_unref(g);
    check(fy_glossary_new("en", "not a tag!", &err) == NULL && err.code == FY_EINVAL, "bad tag");
}

static void test_formats(void)
{
    fy_error err = {0};
    fy_glossary *g = fy_glossary_new("en", "de", &err);
    const char *csv = "source,target\n"
                      "\"power plant\",Kraftwerk\r\n"
                      "\n"
                      "\"say \"\"hi\"\", please\",\"sag, hallo\",en,de\n";
    check(!fy_glossary_parse(g, csv, strlen(csv), FY_GLOSSARY_CSV, &err), "CSV: %s", err.msg);
    const char *s, *t;
    check(fy_glossary_count(g) == 2 && !fy_glossary_entry(g, 1, &s, &t) &&
              !strcmp(s, "say \"hi\", please") && !strcmp(t, "sag, hallo"),
          "CSV quoting, header, language columns");
    char *out = fy_glossary_export(g, FY_GLOSSARY_CSV, NULL);
    check(out && !strcmp(out, "power plant,Kraftwerk\n\"say \"\"hi\"\", please\",\"sag, hallo\"\n"),
          "CSV export: %s", out);
    free(out);
    const char *bad = "a,b,fr,de\n";
    check(
        fy_glossary_parse(g, bad, strlen(bad), FY_GLOSSARY_CSV, &err) == FY_EINVAL &&
            strstr(err.msg, "line 1: the entry's language columns are not the glossary's (en, de)"),
        "CSV languages: %s", err.msg);
    bad = "x,y\n\"open,z\n";
    check(fy_glossary_parse(g, bad, strlen(bad), FY_GLOSSARY_CSV, &err) == FY_EINVAL &&
              strstr(err.msg, "line 2: a quoted field is not closed"),
          "CSV quote: %s", err.msg);
    fy_glossary_unref(g);
    g = fy_glossary_new("en", "de", &err);
    const char *tsv = "one\teins\n\ntwo\tzwei\r\nthree zwei\n";
    check(fy_glossary_parse(g, tsv, strlen(tsv), FY_GLOSSARY_TSV, &err) == FY_EINVAL &&
              !strcmp(err.msg, "line 4: no tab between the source and the target term") &&
              fy_glossary_count(g) == 2,
          "TSV line numbers: %s", err.msg);
    tsv = "a\tb\tc\n";
    check(fy_glossary_parse(g, tsv, strlen(tsv), FY_GLOSSARY_TSV, &err) == FY_EINVAL &&
              strstr(err.msg, "line 1: more than one tab"),
          "TSV tabs: %s", err.msg);
    tsv = "one\tx\n";
    check(fy_glossary_parse(g, tsv, strlen(tsv), FY_GLOSSARY_TSV, &err) == FY_EINVAL &&
              !strcmp(err.msg, "line 1: duplicate source term 'one' (already in entry 1)"),
          "TSV duplicate: %s", err.msg);
    fy_glossary_unref(g);
}

static void test_matching(void)
{
    fy_glossary *g = make("en", "de",
                          "AI\tKI\npower plant\tKraftwerk\npower\tStrom\napple\tApfel\n"
                          "C++\tC++\nÉcole\tSchule\n");
    check(!strcmp(matches(g, "AI said: the power plant SAID no."), "0+2:0 13+11:1 "),
          "boundaries, leftmost-longest: %s", matches(g, "AI said: the power plant SAID no."));
    check(!strcmp(matches(g, "POWER, Apple, apples"), "0+5:2 7+5:3 "),
          "case-insensitive, not inside words: %s", matches(g, "POWER, Apple, apples"));
    check(!strcmp(matches(g, "use C++11 and école"), "4+3:4 14+6:5 "),
          "a term ending in punctuation; é folds: %s", matches(g, "use C++11 and école"));
    check(!strcmp(matches(g, "我们用AI写代码"), "9+2:0 "), "Latin term in Chinese text");
    fy_glossary_unref(g);
    g = make("zh", "en", "苹果\tApple\n苹果手机\tiPhone\nAI\tartificial intelligence\n");
    check(!strcmp(matches(g, "我的苹果手机和苹果"), "6+12:1 21+6:0 "),
          "CJK: no boundaries, longest first: %s", matches(g, "我的苹果手机和苹果"));
    check(!strcmp(matches(g, "ai和AI"), "5+2:2 "), "Chinese compares exactly: %s",
          matches(g, "ai和AI"));
    fy_glossary_unref(g);
    g = make("ko", "en", "서울\tSeoul\n");
    check(!strcmp(matches(g, "서울에서 만나요. 북서울"), "0+6:0 "),
          "Korean: particles after a noun, not inside a word: %s",
          matches(g, "서울에서 만나요. 북서울"));
    fy_glossary_unref(g);
}

static void test_render(void)
{
    fy_glossary *g =
        make("en", "de", "apple\tApfel\npower plant\tkraftwerk\nFanyi\t\nNASA\tNASA-de\n");
    check(!strcmp(render(g, 0, "apple"), "Apfel"), "as written");
    check(!strcmp(render(g, 1, "Power plant"), "Kraftwerk"), "capitalised occurrence");
    check(!strcmp(render(g, 1, "POWER PLANT"), "KRAFTWERK"), "capitals");
    check(!strcmp(render(g, 0, "APPLE"), "APFEL"), "capitals");
    check(!strcmp(render(g, 2, "FANYI"), "FANYI"), "keep as is: the occurrence");
    check(!strcmp(render(g, 3, "NASA"), "NASA-de") && !strcmp(render(g, 3, "nasa"), "NASA-de"),
          "a term in capitals keeps its target as written");
    fy_glossary_unref(g);
    g = make("zh", "en", "苹果\tapple pie\n");
    check(!strcmp(render(g, 0, "苹果"), "apple pie"), "no case in Chinese");
    fy_glossary_unref(g);
}

/* Split text with g (html), translate each sentence by tr (NULL: the
 * engine text), join. */
static char *run(const fy_glossary *g, const char *src, const char *tgt, const char *text, int html,
                 const char *const *tr, fy_doc **keep)
{
    fy_split_options o;
    fy_split_options_default(&o);
    o.source = src, o.target = tgt, o.html = html, o.glossary = g;
    fy_error err = {0};
    fy_doc *d = fy_doc_split(text, strlen(text), &o, &err);
    if (!d) {
        printf("split: %s\n", err.msg);
        return NULL;
    }
    char *out = fy_doc_join(d, tr, &err);
    if (keep)
        *keep = d;
    else
        fy_doc_free(d);
    return out;
}

static void test_doc(void)
{
    fy_glossary *g = make("en", "de", "power plant\tKraftwerk\nFanyi\t\napple\tApfel\n");
    fy_doc *d;
    char *out = run(g, "en", "de", "The power plant is big. Apple!", 0, NULL, &d);
    check(out && !strcmp(out, "The Kraftwerk is big. Apfel!"), "identity engine: %s", out);
    check(fy_doc_sentence_count(d) == 2 &&
              !strcmp(fy_doc_sentence(d, 0, NULL), "The Kraftwerk is big.") &&
              !strcmp(fy_doc_sentence(d, 1, NULL), "Apfel!"),
          "the engine sees the target term");
    check(!fy_doc_sentence_fixed(d, 0) && fy_doc_sentence_fixed(d, 1),
          "a sentence of terms is fixed");
    fy_doc_free(d);
    free(out);
    const char *tr1[] = {"Das kraftwerk ist groß.", "Apfel!"};
    out = run(g, "en", "de", "The power plant is big. Apple!", 0, tr1, NULL);
    check(out && !strcmp(out, "Das Kraftwerk ist groß. Apfel!"), "case repaired: %s", out);
    free(out);
    const char *tr2[] = {"Es ist groß."};
    out = run(g, "en", "de", "The power plant is big.", 0, tr2, NULL);
    check(out && !strcmp(out, "Es ist groß Kraftwerk."), "dropped: added before the end: %s", out);
    free(out);
    out = run(g, "en", "de", "See https://x.org/power plant and `apple` for Fanyi.", 0, NULL, NULL);
    check(out && !strcmp(out, "See https://x.org/power plant and `apple` for Fanyi."),
          "URLs and code win; keep as is: %s", out);
    free(out);
    /* HTML: markup around and inside a term, escaping of the target. */
    fy_glossary *h = make("en", "de", "power plant\tKraft & <Werk>\n");
    out = run(h, "en", "de", "<p>The <b>power plant</b> is big.</p>", 1, NULL, NULL);
    check(out && !strcmp(out, "<p>The <b>Kraft &amp; &lt;Werk&gt;</b> is big.</p>"),
          "HTML element around a term: %s", out);
    free(out);
    const char *docx = "<span data-k=\"1\">The pow</span><span data-k=\"2\">er plant runs.</span>";
    out = run(h, "en", "de", docx, 1, NULL, NULL);
    check(out && !strcmp(out, "<span data-k=\"1\">The Kraft &amp; &lt;Werk&gt;</span><span "
                              "data-k=\"2\"> runs.</span>"),
          "a term across a run boundary: the inner tags after it: %s", out);
    free(out);
    const char *tr3[] = {"Die Kraft & <Werk> läuft."};
    out = run(h, "en", "de", docx, 1, tr3, NULL);
    check(out && strstr(out, "Kraft &amp; &lt;Werk&gt;") && !strstr(out, "power") &&
              !strstr(out, "<Werk>"),
          "translated, a run boundary inside: %s", out);
    free(out);
    fy_glossary_unref(h);
    /* Raw mode. */
    fy_split_options o;
    fy_split_options_default(&o);
    o.source = "en", o.target = "de", o.raw = 1, o.glossary = g;
    d = fy_doc_split("  the power plant\n", 18, &o, NULL);
    check(d && !strcmp(fy_doc_sentence(d, 0, NULL), "the Kraftwerk"), "raw: the engine text");
    out = fy_doc_join(d, (const char *const[]){"das kraftwerk"}, NULL);
    check(out && !strcmp(out, "  das Kraftwerk\n"), "raw: %s", out);
    free(out);
    fy_doc_free(d);
    fy_glossary_unref(g);
    /* Chinese source, English target. */
    g = make("zh", "en", "发电厂\tpower plant\n");
    out = run(g, "zh", "en", "这个发电厂很大。", 0,
              (const char *const[]){"This Power Plant is big."}, NULL);
    check(out && !strcmp(out, "This power plant is big."), "zh -> en: %s", out);
    free(out);
    fy_glossary_unref(g);
}

int main(void)
{
    test_case();
    test_entries();
    test_formats();
    test_matching();
    test_render();
    test_doc();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
