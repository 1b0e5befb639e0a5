/* pdf_para.c - the paragraphs of a page, from the lines MuPDF's structured
 * text gives (fz_stext: characters with their origin, size, font and
 * colour, grouped into lines in content order). Pieces of one line that
 * MuPDF split at wide gaps are joined first (join_segments).
 *
 * A line continues a paragraph above it when it is horizontal, has the
 * same size (within 15%), weight, colour and fixed pitch, sits the next
 * baseline below (0.5 to 1.9 sizes, and the paragraph's own pitch once it
 * has two lines), overlaps it horizontally, is not indented more than a
 * size, does not start with a bullet, and the line above was full: its
 * own first word would not have fitted at the end of it (that is why the
 * line broke). Each line goes to the nearest paragraph it continues, so
 * two columns, or a column interleaved with a sidebar, come apart
 * whatever order the content stream draws them in. Paragraphs keep the
 * order of their first lines.
 *
 * A paragraph is translated unless translating would break it; it is kept
 * as it is (not a unit, its glyphs untouched) when:
 *   - most of its characters are in a monospaced font (code);
 *   - fewer than half of its non-space characters are letters of words
 *     (letters in runs of two or more, or CJK characters): formulas,
 *     numbers, table cells of figures, page numbers, labels like "a)";
 *   - more than a tenth of its characters are unreadable (U+FFFD: a font
 *     without a Unicode mapping);
 *   - its lines are not horizontal (rotated or vertical text);
 *   - its size is under a point (or its matrix degenerate).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text/pdf_internal.h"
#include "text/text_internal.h"
#include "util/buf.h"

typedef struct tchar {
    uint32_t c;
    fz_point o; /* origin */
    float size;
    int color;
    unsigned style;
} tchar;

typedef struct tline {
    fz_rect box;
    float base; /* the first character's baseline */
    float size;
    int color;
    unsigned style;
    int horizontal;
    size_t c0, nc;
    float first_word; /* width of its first word (CJK: first character) */
    int bullet;
    int cjk_start;  /* it starts with a CJK character (no space before it) */
    int words, cjk; /* words of other scripts in it, CJK letters */
    long next;      /* the next line of its paragraph, -1 */
} tline;

typedef struct tpara {
    long head, tail;
    int n;
    fz_rect box;
    float size, pitch;
    int color;
    unsigned style;
} tpara;

typedef struct scan {
    tchar *c;
    size_t nc, capc;
    tline *l;
    size_t nl, capl;
    tpara *p;
    size_t np, capp;
} scan;

/* ---- dominant values ------------------------------------------------------------ */

typedef struct tally {
    float key[8];
    size_t n[8];
    int used;
} tally;

static void tally_add(tally *t, float key)
{
    for (int i = 0; i < t->used; i++)
        if (fabsf(t->key[i] - key) < 0.05f) {
            t->n[i]++;
            return;
        }
    if (t->used < 8) {
        t->key[t->used] = key;
        t->n[t->used++] = 1;
    }
}

static float tally_top(const tally *t)
{
    int best = 0;
    for (int i = 1; i < t->used; i++)
        if (t->n[i] > t->n[best]) best = i;
    return t->used ? t->key[best] : 0;
}

static unsigned char_style(fz_context *ctx, fz_font *f)
{
    if (!f) return 0;
    return (fz_font_is_bold(ctx, f) ? PS_BOLD : 0) | (fz_font_is_italic(ctx, f) ? PS_ITALIC : 0) |
           (fz_font_is_serif(ctx, f) ? PS_SERIF : 0) |
           (fz_font_is_monospaced(ctx, f) ? PS_MONO : 0);
}

/* ---- lines ---------------------------------------------------------------------------- */

static int is_bullet(uint32_t c)
{
    return c == 0x2022 || c == 0x25E6 || c == 0x25AA || c == 0x25CF || c == 0x2023 || c == 0x2043 ||
           c == 0x25A0 || c == 0x25C6 || c == 0x2013;
}

static void line_summary(scan *s, tline *l)
{
    tally size = {0}, color = {0}, style = {0};
    for (size_t i = l->c0; i < l->c0 + l->nc; i++) {
        const tchar *c = &s->c[i];
        if (c->c == ' ') continue;
        tally_add(&size, c->size);
        tally_add(&color, (float)c->color);
        tally_add(&style, (float)c->style);
    }
    l->size = tally_top(&size);
    l->color = (int)tally_top(&color);
    l->style = (unsigned)tally_top(&style);
    size_t i = l->c0, end = l->c0 + l->nc;
    while (i < end && s->c[i].c == ' ') i++;
    l->bullet = i < end && is_bullet(s->c[i].c);
    l->words = l->cjk = 0;
    for (size_t k = i; k < end; k++) {
        uint32_t c = s->c[k].c;
        if (fy_cp_is_cjk(c))
            l->cjk += fy_cp_is_letter(c);
        else if (c != ' ' && (k == i || s->c[k - 1].c == ' ' || fy_cp_is_cjk(s->c[k - 1].c)))
            l->words++;
    }
    size_t j = i + 1;
    if (i < end && !fy_cp_is_cjk(s->c[i].c))
        while (j < end && s->c[j].c != ' ' && !fy_cp_is_cjk(s->c[j].c)) j++;
    /* The first word ends where the next character starts (or the line);
     * a CJK character is an em wide. */
    float x_end = j < end ? s->c[j].o.x : l->box.x1;
    l->first_word = i < end ? x_end - s->c[i].o.x : 0;
    l->cjk_start = i < end && fy_cp_is_cjk(s->c[i].c);
    if (l->cjk_start && l->first_word < s->c[i].size) l->first_word = s->c[i].size;
    l->base = l->nc ? s->c[l->c0].o.y : l->box.y1;
}

static int add_line(fz_context *ctx, scan *s, const fz_stext_line *ln)
{
    if (fy_vec_reserve((void **)&s->l, &s->capl, s->nl + 1, sizeof *s->l)) return -1;
    /* A space first: it separates this line from the previous when the two
     * are joined (join_segments), and is no part of either otherwise. */
    if (fy_vec_reserve((void **)&s->c, &s->capc, s->nc + 1, sizeof *s->c)) return -1;
    tline *prev = s->nl ? &s->l[s->nl - 1] : NULL;
    fz_point o = prev ? fz_make_point(prev->box.x1, prev->base) : fz_make_point(0, 0);
    s->c[s->nc++] = (tchar){' ', o, prev ? prev->size : 0, 0, 0};
    tline *l = &s->l[s->nl];
    *l = (tline){.box = ln->bbox, .c0 = s->nc, .next = -1};
    l->horizontal = ln->wmode == 0 && fabsf(ln->dir.x - 1) < 0.01f && fabsf(ln->dir.y) < 0.01f;
    for (const fz_stext_char *ch = ln->first_char; ch; ch = ch->next) {
        if (fy_vec_reserve((void **)&s->c, &s->capc, s->nc + 1, sizeof *s->c)) return -1;
        uint32_t c = ch->c < 0 || ch->c > 0x10FFFF ? 0xFFFD : (uint32_t)ch->c;
        s->c[s->nc++] = (tchar){c, ch->origin, ch->size, ch->color, char_style(ctx, ch->font)};
    }
    l->nc = s->nc - l->c0;
    if (!l->nc) return 0;
    line_summary(s, l);
    s->nl++;
    return 0;
}

/* ---- one line in pieces ------------------------------------------------------------------
 *
 * MuPDF starts a new line at a gap wider than 0.8 em, so a justified line
 * with wide word spaces (a narrow column) comes in pieces, as does a table
 * row. Two pieces drawn one after the other on one baseline, in one style,
 * are one line when the gap is at most 1.2 em, or when a piece of a line
 * just above or below runs across the middle of the gap: text flows over
 * it there, so it is no column gutter. Repeated until nothing changes (a
 * joined line can bridge its neighbours' gaps). */

static int one_style(const tline *a, const tline *b)
{
    float sz = a->size;
    return a->horizontal && b->horizontal && fabsf(b->base - a->base) < 0.2f * sz &&
           fabsf(b->size - sz) <= 0.15f * sz && !((a->style ^ b->style) & (PS_BOLD | PS_MONO)) &&
           a->color == b->color;
}

/* Does a piece of a line next to a's (above or below) cover x? */
static int bridged(const scan *s, const tline *a, float x)
{
    for (size_t i = 0; i < s->nl; i++) {
        const tline *n = &s->l[i];
        float dy = fabsf(n->base - a->base);
        if (n->horizontal && dy >= 0.5f * a->size && dy <= 1.9f * a->size &&
            fabsf(n->size - a->size) <= 0.15f * a->size && n->box.x0 < x && n->box.x1 > x)
            return 1;
    }
    return 0;
}

static int join_pass(scan *s)
{
    int joined = 0;
    size_t i = 0;
    while (i + 1 < s->nl) {
        tline *a = &s->l[i], *b = &s->l[i + 1];
        float gap = b->box.x0 - a->box.x1;
        if (!one_style(a, b) || gap < -0.5f || gap > 8 * a->size ||
            (gap > 1.2f * a->size && !bridged(s, a, (a->box.x1 + b->box.x0) / 2))) {
            i++;
            continue;
        }
        /* b's characters follow a's and the space before b: a takes them
         * (and stays at i: it may take the next piece too). */
        a->box = fz_union_rect(a->box, b->box);
        a->nc = b->c0 + b->nc - a->c0;
        line_summary(s, a);
        memmove(b, b + 1, (s->nl - i - 2) * sizeof *b);
        s->nl--;
        joined = 1;
    }
    return joined;
}

static void join_segments(scan *s)
{
    for (int pass = 0; pass < 16 && join_pass(s); pass++) {
    }
}

/* ---- paragraphs ------------------------------------------------------------------------ */

static float overlap(float a0, float a1, float b0, float b1)
{
    return fminf(a1, b1) - fmaxf(a0, b0);
}

/* Lines of p but its last that end at edge: justified text. */
static int flush_lines(const scan *s, const tpara *p, float edge)
{
    int n = 0;
    for (long k = p->head; k >= 0 && k != p->tail; k = s->l[k].next)
        n += fabsf(s->l[k].box.x1 - edge) < 0.5f;
    return n;
}

/* Does line l continue paragraph p (whose last line is prev)? */
static int continues(const scan *s, const tpara *p, const tline *prev, const tline *l)
{
    float sz = p->size;
    if (!l->horizontal || !prev->horizontal || l->bullet) return 0;
    if (fabsf(l->size - sz) > 0.15f * sz || l->color != p->color) return 0;
    if ((l->style ^ p->style) & (PS_BOLD | PS_MONO)) return 0;
    float dy = l->base - prev->base;
    if (dy < 0.5f * sz || dy > 1.9f * sz) return 0;
    if (p->n >= 2 && fabsf(dy - p->pitch) > 0.2f * sz) return 0;
    float lw = l->box.x1 - l->box.x0, pw = p->box.x1 - p->box.x0;
    if (overlap(l->box.x0, l->box.x1, p->box.x0, p->box.x1) < 0.5f * fminf(lw, pw)) return 0;
    if (l->box.x0 > p->box.x0 + sz) return 0;
    /* A short line (a table cell, a label) is not wrapped text. */
    if ((prev->words < 2 && prev->cjk < 6) || prev->box.x1 - prev->box.x0 < 8 * sz) return 0;
    /* Justified text: lines end at one edge, except a paragraph's last. */
    float edge = fmaxf(p->box.x1, l->box.x1);
    if (fabsf(l->box.x1 - edge) < 0.5f && edge - prev->box.x1 > 1 && flush_lines(s, p, edge))
        return 0;
    /* The line above broke because this line's first word did not fit. */
    float space = l->cjk_start ? 0 : 0.25f * sz;
    return prev->box.x1 + space + l->first_word > edge - 0.05f * sz;
}

static int new_para(scan *s, size_t li)
{
    if (fy_vec_reserve((void **)&s->p, &s->capp, s->np + 1, sizeof *s->p)) return -1;
    const tline *l = &s->l[li];
    s->p[s->np++] =
        (tpara){(long)li, (long)li, 1, l->box, l->size, 1.2f * l->size, l->color, l->style};
    return 0;
}

static void join(scan *s, tpara *p, size_t li)
{
    tline *l = &s->l[li], *prev = &s->l[p->tail];
    float dy = l->base - prev->base;
    p->pitch = p->n == 1 ? dy : (p->pitch * (float)(p->n - 1) + dy) / (float)p->n;
    prev->next = (long)li;
    p->tail = (long)li;
    p->n++;
    p->box = fz_union_rect(p->box, l->box);
}

static int group(scan *s)
{
    for (size_t li = 0; li < s->nl; li++) {
        long best = -1;
        float best_dy = 0;
        for (size_t k = 0; k < s->np; k++) {
            const tline *prev = &s->l[s->p[k].tail];
            if (!continues(s, &s->p[k], prev, &s->l[li])) continue;
            float dy = s->l[li].base - prev->base;
            if (best < 0 || dy < best_dy) best = (long)k, best_dy = dy;
        }
        if (best >= 0)
            join(s, &s->p[best], li);
        else if (new_para(s, li))
            return -1;
    }
    return 0;
}

/* ---- text and kind ---------------------------------------------------------------------- */

static int is_hyphen(uint32_t c)
{
    return c == '-' || c == 0x00AD || c == 0x2010;
}

/* The last code point of b (0 when empty), and its start in *at. */
static uint32_t last_cp(const fy_buf *b, size_t *at)
{
    if (!b->n) return 0;
    size_t i = fy_utf8_back(b->p, b->n), n;
    *at = i;
    return fy_utf8_get(b->p, b->n, i, &n);
}

/* Han, kana and CJK punctuation: no spaces between them (Hangul has). */
static int wide(uint32_t c)
{
    return fy_cp_is_cjk(c) && !fy_cp_is_hangul(c);
}

/* Where two lines meet: drop a hyphen that split a word, else a space
 * (none between CJK characters). */
static void line_gap(fy_buf *b, uint32_t next)
{
    size_t at = 0, at2 = 0;
    uint32_t last = last_cp(b, &at);
    if (!last) return;
    if (is_hyphen(last) && fy_cp_is_lower(next) && at > 0) {
        size_t keep = b->n;
        b->n = at;
        uint32_t before = last_cp(b, &at2);
        if (fy_cp_is_letter(before)) return; /* "exam-" + "ple" -> "example" */
        b->n = keep;
    }
    if (last == ' ' || fy_cp_is_cjk(last) || fy_cp_is_cjk(next)) return;
    fy_buf_putc(b, ' ');
}

static void para_text(const scan *s, const tpara *p, fy_buf *b)
{
    for (long li = p->head; li >= 0; li = s->l[li].next) {
        const tline *l = &s->l[li];
        size_t i = l->c0, end = l->c0 + l->nc;
        while (i < end && s->c[i].c == ' ') i++;
        if (i < end) line_gap(b, s->c[i].c);
        for (; i < end; i++) {
            uint32_t c = s->c[i].c;
            size_t at;
            if (c < 0x20 || (c >= 0x7F && c < 0xA0)) continue;
            if (c == ' ' && last_cp(b, &at) == ' ') continue;
            if (c != ' ' && wide(c) && last_cp(b, &at) == ' ') {
                /* Spacing between Chinese or Japanese characters (justified
                 * lines) is not a word space. */
                size_t at2, keep = b->n;
                b->n = at;
                if (!wide(last_cp(b, &at2))) b->n = keep;
            }
            fy_buf_putcp(b, c);
        }
        while (b->n && b->p[b->n - 1] == ' ') b->n--;
    }
    if (b->p) b->p[b->n] = '\0';
}

/* Should the paragraph with text t[0..n) be translated? */
static int translatable(const scan *s, const tpara *p, const char *t, size_t n)
{
    size_t mono = 0, all = 0;
    /* Text under a point (or with a degenerate matrix) is not read by anyone. */
    if (!(p->size >= 1 && p->size < 10000) ||
        !isfinite(p->box.x0 + p->box.x1 + p->box.y0 + p->box.y1))
        return 0;
    for (long li = p->head; li >= 0; li = s->l[li].next) {
        const tline *l = &s->l[li];
        if (!l->horizontal) return 0;
        for (size_t i = l->c0; i < l->c0 + l->nc; i++) {
            if (s->c[i].c == ' ') continue;
            all++;
            mono += (s->c[i].style & PS_MONO) != 0;
        }
    }
    if (mono * 2 > all) return 0;
    size_t chars = 0, word = 0, run = 0, bad = 0;
    for (size_t i = 0, k; i < n; i += k) {
        uint32_t c = fy_utf8_get(t, n, i, &k);
        if (fy_cp_is_space(c)) {
            run = 0;
            continue;
        }
        chars++;
        bad += c == 0xFFFD;
        if (fy_cp_is_cjk(c) && fy_cp_is_letter(c)) {
            word++;
            run = 0;
        } else if (fy_cp_is_letter(c)) {
            run++;
            word += run == 2 ? 2 : run > 2;
        } else {
            run = 0;
        }
    }
    return chars && word * 2 >= chars && bad * 10 <= chars;
}

/* ---- into the document ------------------------------------------------------------------ */

static int align_of(const scan *s, const tpara *p, fz_rect page)
{
    float cx = (p->box.x0 + p->box.x1) / 2, tol = fmaxf(1.5f, 0.1f * p->size);
    if (p->n == 1) {
        float pw = page.x1 - page.x0, pc = (page.x0 + page.x1) / 2;
        return fabsf(cx - pc) < 0.02f * pw && p->box.x1 - p->box.x0 < 0.8f * pw ? PA_CENTER
                                                                                : PA_LEFT;
    }
    int centered = 1, justified = p->n >= 3;
    float minx = p->box.x1, maxx = p->box.x0;
    for (long li = p->head; li >= 0; li = s->l[li].next) {
        const tline *l = &s->l[li];
        centered &= fabsf((l->box.x0 + l->box.x1) / 2 - cx) < tol;
        if (l->next >= 0) justified &= p->box.x1 - l->box.x1 < 1.0f;
        minx = fminf(minx, l->box.x0);
        maxx = fmaxf(maxx, l->box.x0);
    }
    if (centered && maxx - minx > 0.5f * p->size) return PA_CENTER;
    return justified ? PA_JUSTIFY : PA_LEFT;
}

static int record(pdfdoc *p, const scan *s, const tpara *tp, size_t page, size_t unit,
                  fz_rect bounds)
{
    if (fy_vec_reserve((void **)&p->para, &p->cappara, p->npara + 1, sizeof *p->para)) return -1;
    const tline *first = &s->l[tp->head];
    pdfpara *pp = &p->para[p->npara];
    *pp = (pdfpara){.page = page,
                    .box = tp->box,
                    .size = tp->size,
                    .pitch = tp->n > 1 ? tp->pitch : 1.2f * tp->size,
                    .base = first->base - tp->box.y0,
                    .indent = tp->n > 1 ? first->box.x0 - tp->box.x0 : 0,
                    .lines = tp->n,
                    .color = tp->color,
                    .style = tp->style,
                    .align = align_of(s, tp, bounds),
                    .unit = unit,
                    .g0 = p->norig};
    if (pp->indent < 0.5f * tp->size) pp->indent = 0;
    for (long li = tp->head; li >= 0; li = s->l[li].next) {
        const tline *l = &s->l[li];
        if (fy_vec_reserve((void **)&p->orig, &p->caporig, p->norig + l->nc, sizeof *p->orig))
            return -1;
        for (size_t i = l->c0; i < l->c0 + l->nc; i++) p->orig[p->norig++] = s->c[i].o;
    }
    pp->ng = p->norig - pp->g0;
    p->npara++;
    return 0;
}

static int add_units(fy_document *d, pdfdoc *p, scan *s, size_t page, fy_error *err)
{
    fy_buf b = {0};
    int rc = 0;
    for (size_t k = 0; k < s->np && !rc; k++) {
        const tpara *tp = &s->p[k];
        b.n = 0;
        para_text(s, tp, &b);
        if (b.oom) {
            rc = fy_err(err, FY_ENOMEM, "out of memory");
            break;
        }
        if (!b.n || !translatable(s, tp, b.p, b.n)) continue;
        size_t unit;
        if ((rc = doc_unit_add(d, b.p, b.n, 0, &unit, err)) != 0) break;
        d->u[unit].page = page + 1;
        if (record(p, s, tp, page, unit, p->st->mediabox))
            rc = fy_err(err, FY_ENOMEM, "out of memory");
    }
    fy_buf_free(&b);
    return rc;
}

int pdfpara_page(fy_document *d, pdfdoc *p, size_t page, fy_error *err)
{
    scan s = {0};
    int rc = 0;
    pdfpage *pg = &p->pg[page];
    pg->p0 = p->npara;
    for (fz_stext_block *b = p->st->first_block; b && !rc; b = b->next) {
        if (b->type != FZ_STEXT_BLOCK_TEXT) continue;
        for (fz_stext_line *ln = b->u.t.first_line; ln && !rc; ln = ln->next)
            if (add_line(p->ctx, &s, ln)) rc = fy_err(err, FY_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < s.nc && !pg->text; i++) pg->text = s.c[i].c != ' ';
    if (!rc) join_segments(&s);
    if (!rc && group(&s)) rc = fy_err(err, FY_ENOMEM, "out of memory");
    if (!rc) rc = add_units(d, p, &s, page, err);
    pg->np = p->npara - pg->p0;
    free(s.c);
    free(s.l);
    free(s.p);
    return rc;
}
