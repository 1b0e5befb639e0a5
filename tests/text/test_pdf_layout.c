/* test_pdf_layout.c - a translation set into a PDF paragraph's box
 * (text/pdf_layout.c), with made-up glyph widths: where lines break
 * (spaces, hyphens, between CJK characters but not before closing or after
 * opening punctuation, inside a too-long word with no hyphen), that every
 * line fits the box, the size chosen (the largest that fits, bisection),
 * alignment and justification. No MuPDF call: the layout is pure.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "text/pdf_internal.h"
#include "text/text_internal.h"

/* Code points of s, each 0.5 em wide (CJK: 1 em), glyph id = its index + 1. */
static size_t chars(const char *s, pl_char *out, size_t cap)
{
    size_t n = 0, len = strlen(s);
    for (size_t i = 0, k; i < len && n < cap; i += k) {
        uint32_t cp = fy_utf8_get(s, len, i, &k);
        out[n] = (pl_char){cp, 0, (int)n + 1, fy_cp_is_cjk(cp) ? 1.0f : 0.5f};
        n++;
    }
    return n;
}

/* A box x 100..100+w, y 50.., with lines lines of size size (pitch 1.2). */
static pdfpara box(float w, int lines, float size)
{
    pdfpara p = {0};
    p.box = (fz_rect){100, 50, 100 + w, 50 + (float)lines * 1.2f * size};
    p.size = size;
    p.pitch = 1.2f * size;
    p.base = 0.9f * size;
    p.lines = lines;
    p.align = PA_LEFT;
    return p;
}

/* The laid-out text back, a '|' at each line start after the first. */
static void text_of(const pl_char *c, const pl_result *r, char *out, size_t cap)
{
    size_t o = 0;
    float y = r->n ? r->g[0].y : 0;
    for (size_t i = 0; i < r->n && o + 8 < cap; i++) {
        if (r->g[i].y != y) {
            out[o++] = '|';
            y = r->g[i].y;
        }
        o += fy_utf8_put(out + o, c[r->g[i].gid - 1].cp);
    }
    out[o] = '\0';
}

static void layout(const char *s, pdfpara p, float min_size, pl_result *r, char *text, size_t cap)
{
    pl_char c[512];
    size_t n = chars(s, c, 512);
    fy_error err = {0};
    *r = (pl_result){0};
    if (pl_layout(c, n, &p, min_size, r, &err)) check(0, "layout of '%s': %s", s, err.msg);
    text_of(c, r, text, cap);
}

/* Every glyph inside the box's width, every line's baseline within the
 * original's last. */
static void inside(const char *what, const pdfpara *p, const pl_result *r, const pl_char *c)
{
    float last = p->box.y0 + p->base + (float)(p->lines - 1) * p->pitch;
    for (size_t i = 0; i < r->n; i++) {
        float right = r->g[i].x + c[r->g[i].gid - 1].adv * r->size;
        if (r->g[i].x < p->box.x0 - 0.01f || right > p->box.x1 + 0.02f ||
            r->g[i].y > last + 0.01f) {
            check(0, "%s: glyph %zu at (%.2f, %.2f) leaves the box", what, i, r->g[i].x, r->g[i].y);
            return;
        }
    }
}

static void test_breaks(void)
{
    check(pl_break_between(0x4E2D, 0x6587), "中|文");
    check(!pl_break_between(0x4E2D, 0xFF0C), "中，: no break before a comma");
    check(!pl_break_between(0x4E2D, 0x3002), "中。: no break before a full stop");
    check(!pl_break_between(0x300C, 0x4E2D), "「中: no break after an opening bracket");
    check(!pl_break_between(0x4E2D, 0x300D), "中」: no break before a closing bracket");
    check(pl_break_between(0x3002, 0x4E2D), "。|中");
    check(pl_break_between('a', 0x4E2D), "a|中");
    check(pl_break_between(0x3042, 0x3044), "あ|い: kana");
    check(!pl_break_between(0x3042, 0x30FC), "あー: no break before the prolonged sound mark");
    check(!pl_break_between('a', 'b'), "ab: no break inside a Latin word");
}

static void test_latin(void)
{
    pl_result r;
    char t[1024];
    /* 10 pt, 0.5 em a character: 40 pt wide holds 8 characters. */
    pdfpara p = box(40, 3, 10);
    layout("one two three four", p, 2, &r, t, sizeof t);
    check(!strcmp(t, "one two|three|four") && r.fits && r.size == 10,
          "latin breaks at spaces at full size: '%s' size %.2f", t, r.size);
    pl_char c[64];
    chars("one two three four", c, 64);
    inside("latin", &p, &r, c);
    check(r.g[0].x == 100 && fabsf(r.g[0].y - 59) < 0.01f,
          "first glyph at the box's first baseline");
    pl_result_free(&r);

    layout("well-known", p, 2, &r, t, sizeof t);
    check(!strcmp(t, "well-|known") && r.size == 10, "latin breaks after a hyphen: '%s'", t);
    pl_result_free(&r);

    /* A word wider than the line is cut, with no hyphen added. */
    pdfpara wide = box(40, 3, 10);
    layout("abcdefghijklmnopqrstu", wide, 10, &r, t, sizeof t);
    check(!strcmp(t, "abcdefgh|ijklmnop|qrstu"), "a long word cut without a hyphen: '%s'", t);
    pl_result_free(&r);
}

static void test_cjk(void)
{
    pl_result r;
    char t[1024];
    /* 10 pt, 1 em a character: 50 pt wide holds 5. */
    pdfpara p = box(50, 3, 10);
    layout("一二三四五六七八", p, 2, &r, t, sizeof t);
    check(!strcmp(t, "一二三四五|六七八") && r.size == 10, "CJK breaks anywhere: '%s'", t);
    pl_result_free(&r);
    layout("一二三四五，六", p, 2, &r, t, sizeof t);
    check(!strcmp(t, "一二三四|五，六"), "no line starts with a comma: '%s'", t);
    pl_result_free(&r);
    layout("一二三四「五六", p, 2, &r, t, sizeof t);
    check(!strcmp(t, "一二三四|「五六"), "no line ends with an opening bracket: '%s'", t);
    pl_result_free(&r);
    pdfpara narrow = box(40, 3, 10);
    layout("使用Python语言", narrow, 2, &r, t, sizeof t);
    check(!strcmp(t, "使用|Python语|言"), "Latin inside CJK stays whole: '%s'", t);
    pl_result_free(&r);
}

static void test_fit(void)
{
    pl_result r;
    char t[1024];
    /* One line of 10 pt, 40 pt wide (8 characters): 16 characters must
     * shrink. */
    pdfpara p = box(40, 1, 10);
    layout("aaaa bbbb cccc dd", p, 2, &r, t, sizeof t);
    pl_char c[64];
    chars("aaaa bbbb cccc dd", c, 64);
    check(r.fits && r.size < 10 && r.size > 4, "shrunk to fit one line: size %.2f '%s'", r.size, t);
    inside("shrunk", &p, &r, c);
    /* The largest that fits: 1 % more would not. */
    pl_result r2;
    pdfpara q = p;
    q.size = r.size * 1.01f;
    layout("aaaa bbbb cccc dd", q, q.size, &r2, t, sizeof t);
    check(!r2.fits, "1%% larger does not fit (%.2f)", q.size);
    pl_result_free(&r2);
    pl_result_free(&r);

    /* Too long even at the smallest size: set at it, reported. */
    layout("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", p, 8, &r,
           t, sizeof t);
    check(!r.fits && r.size == 8, "does not fit at the minimum: fits %d size %.2f", r.fits, r.size);
    pl_result_free(&r);
}

static void test_align(void)
{
    pl_result r;
    char t[1024];
    pdfpara p = box(100, 2, 10);
    p.align = PA_CENTER;
    layout("abcd", p, 2, &r, t, sizeof t);
    check(fabsf(r.g[0].x - 140) < 0.01f, "centred: starts at %.2f (140)", r.g[0].x);
    pl_result_free(&r);

    p = box(50, 3, 10);
    p.align = PA_JUSTIFY;
    layout("aa bb cc dd ee ff", p, 2, &r, t, sizeof t);
    pl_char c[64];
    chars("aa bb cc dd ee ff", c, 64);
    /* First line "aa bb cc" (8 chars, 40 pt) stretched to 50 pt: its last
     * glyph ends at the right edge; the last line is not stretched. */
    size_t last_of_first = 0;
    while (last_of_first + 1 < r.n && r.g[last_of_first + 1].y == r.g[0].y) last_of_first++;
    float end = r.g[last_of_first].x + 0.5f * 10;
    check(fabsf(end - 150) < 0.01f, "justified line ends at the edge: %.2f ('%s')", end, t);
    check(r.g[r.n - 1].x + 5 < 150 - 1, "the last line is not stretched");
    inside("justified", &p, &r, c);
    pl_result_free(&r);

    p = box(50, 2, 10);
    p.indent = 10;
    layout("aaaa bbbb cccc", p, 2, &r, t, sizeof t);
    check(r.g[0].x == 110 && !strcmp(t, "aaaa|bbbb cccc"), "first-line indent: '%s' at %.2f", t,
          r.g[0].x);
    pl_result_free(&r);
}

int main(void)
{
    test_breaks();
    test_latin();
    test_cjk();
    test_fit();
    test_align();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
