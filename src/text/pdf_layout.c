/* pdf_layout.c - a translation set into its paragraph's box: broken into
 * lines by the rules of its script and made as large as fits.
 *
 * Lines break after spaces, after a hyphen inside a word, and between two
 * characters when either is CJK (Han, kana, Hangul, CJK punctuation),
 * except before closing punctuation (，。、」) ! ? and the like) and after
 * opening punctuation (「（ and the like): Chinese and Japanese have no
 * spaces, and any two of their characters may be split. A word wider than
 * a whole line is cut between two characters, with no hyphen.
 *
 * The box keeps the original's baseline grid: the first baseline where the
 * original's was, the others a pitch apart, both scaled with the size. At
 * a size s (of the original's S) the translation fits when every line fits
 * the box's width and its last baseline is no lower than the original's
 * last; the size is the largest that fits, found by bisection (the number
 * of lines only grows as the size grows).
 */
#include <math.h>
#include <stdlib.h>

#include "text/pdf_internal.h"
#include "text/text_internal.h"

/* ---- line breaking -------------------------------------------------------------- */

/* Characters a line may not start with (closing punctuation, small kana, the
 * prolonged sound mark, iteration marks). */
static int no_start(uint32_t c)
{
    static const uint32_t set[] = {
        ')',    ']',    '}',    ',',    '.',    ':',    ';',    '!',    '?',    '%',
        0x00B7, 0x2019, 0x201D, 0x2025, 0x2026, 0x3001, 0x3002, 0x3005, 0x3009, 0x300B,
        0x300D, 0x300F, 0x3011, 0x3015, 0x3017, 0x3019, 0x301F, 0x3041, 0x3043, 0x3045,
        0x3047, 0x3049, 0x3063, 0x3083, 0x3085, 0x3087, 0x308E, 0x309D, 0x309E, 0x30A1,
        0x30A3, 0x30A5, 0x30A7, 0x30A9, 0x30C3, 0x30E3, 0x30E5, 0x30E7, 0x30EE, 0x30F5,
        0x30F6, 0x30FB, 0x30FC, 0x30FD, 0x30FE, 0xFF01, 0xFF09, 0xFF0C, 0xFF0E, 0xFF1A,
        0xFF1B, 0xFF1F, 0xFF3D, 0xFF5D, 0xFF60, 0xFF61, 0xFF63, 0xFF64,
    };
    for (size_t i = 0; i < sizeof set / sizeof *set; i++)
        if (set[i] == c) return 1;
    return 0;
}

/* Characters a line may not end with (opening punctuation). */
static int no_end(uint32_t c)
{
    static const uint32_t set[] = {'(',    '[',    '{',    0x2018, 0x201C, 0x3008, 0x300A,
                                   0x300C, 0x300E, 0x3010, 0x3014, 0x3016, 0x3018, 0x301D,
                                   0xFF08, 0xFF3B, 0xFF5B, 0xFF5F, 0xFF62};
    for (size_t i = 0; i < sizeof set / sizeof *set; i++)
        if (set[i] == c) return 1;
    return 0;
}

static int is_hyphen(uint32_t c)
{
    return c == '-' || c == 0x2010 || c == 0x2013;
}

int pl_break_between(uint32_t a, uint32_t b)
{
    if (no_start(b) || no_end(a)) return 0;
    return fy_cp_is_cjk(a) || fy_cp_is_cjk(b);
}

/* May a line start at c[i] (0 < i < n)? Spaces are never at a line start:
 * the break comes after them. */
static int may_start(const pl_char *c, size_t n, size_t i)
{
    if (c[i].cp == ' ') return 0;
    if (c[i - 1].cp == ' ') return 1;
    if (is_hyphen(c[i - 1].cp) && i >= 2 && fy_cp_is_letter(c[i - 2].cp) && i < n &&
        fy_cp_is_letter(c[i].cp))
        return 1;
    return pl_break_between(c[i - 1].cp, c[i].cp);
}

/* ---- fitting ----------------------------------------------------------------------- */

typedef struct line {
    size_t a, b; /* characters [a, b), trailing spaces excluded */
    float w;     /* width in ems */
} line;

typedef struct lines {
    line *v;
    size_t n, cap;
} lines;

/* Width in ems of c[a..b). */
static float width(const pl_char *c, size_t a, size_t b)
{
    float w = 0;
    for (size_t i = a; i < b; i++) w += c[i].adv;
    return w;
}

static size_t trim(const pl_char *c, size_t a, size_t b)
{
    while (b > a && c[b - 1].cp == ' ') b--;
    return b;
}

/* Greedy lines of at most wmax ems (first: first_max). Never fails to make
 * progress: a line holds at least one character. */
static int break_lines(const pl_char *c, size_t n, float first_max, float wmax, lines *out)
{
    out->n = 0;
    size_t start = 0;
    while (start < n) {
        float lim = out->n ? wmax : first_max, w = 0;
        size_t i = start, brk = start; /* the last place a line may start, past start */
        while (i < n) {
            if (i > start && may_start(c, n, i)) brk = i;
            if (c[i].cp != ' ' && w + c[i].adv > lim && i > start) break;
            w += c[i].adv;
            i++;
        }
        size_t end = i;
        if (i < n && brk > start) end = brk;
        if (fy_vec_reserve((void **)&out->v, &out->cap, out->n + 1, sizeof *out->v)) return -1;
        size_t b = trim(c, start, end);
        out->v[out->n++] = (line){start, b, width(c, start, b)};
        start = end;
        while (start < n && c[start].cp == ' ') start++;
    }
    return 0;
}

/* Lines the box holds at scale k: the last baseline no lower than the
 * original's last. */
static int slots(const pdfpara *p, float k)
{
    float last = p->base + (float)(p->lines - 1) * p->pitch;
    float room = (last - p->base * k) / (p->pitch * k);
    return (int)floorf(room + 1e-3f) + 1;
}

/* Do the lines at scale k fit? Fills ls. -1: out of memory. */
static int fits(const pl_char *c, size_t n, const pdfpara *p, float k, lines *ls)
{
    float s = p->size * k, wbox = p->box.x1 - p->box.x0 + 0.01f;
    if (break_lines(c, n, (wbox - p->indent * k) / s, wbox / s, ls)) return -1;
    if ((int)ls->n > slots(p, k)) return 0;
    for (size_t i = 0; i < ls->n; i++)
        if (ls->v[i].w * s > wbox - (i ? 0 : p->indent * k)) return 0;
    return 1;
}

static int put(pl_result *r, float x, float y, const pl_char *ch, int run)
{
    if (fy_vec_reserve((void **)&r->g, &r->cap, r->n + 1, sizeof *r->g)) return -1;
    r->g[r->n++] = (pl_glyph){x, y, ch->font, ch->gid, run};
    return 0;
}

/* Extra room per gap of a justified line: between words, else (CJK)
 * between characters; 0 when it would look stretched. */
static float justify_gap(const pl_char *c, const line *l, float room, float s, int *by_space)
{
    size_t spaces = 0;
    for (size_t i = l->a; i < l->b; i++) spaces += c[i].cp == ' ';
    *by_space = spaces > 0;
    size_t gaps = spaces ? spaces : (l->b - l->a > 1 ? l->b - l->a - 1 : 0);
    if (!gaps || room <= 0) return 0;
    float g = room / (float)gaps;
    return g > (spaces ? 1.5f : 0.5f) * s ? 0 : g;
}

static int place(const pl_char *c, const lines *ls, const pdfpara *p, float k, pl_result *r)
{
    float s = p->size * k, wbox = p->box.x1 - p->box.x0;
    for (size_t li = 0; li < ls->n; li++) {
        const line *l = &ls->v[li];
        float avail = wbox - (li ? 0 : p->indent * k), w = l->w * s;
        float x = p->box.x0 + (li ? 0 : p->indent * k);
        if (p->align == PA_CENTER && w < avail) x += (avail - w) / 2;
        float y = p->box.y0 + (p->base + (float)li * p->pitch) * k, gap = 0;
        int by_space = 0;
        if (p->align == PA_JUSTIFY && li + 1 < ls->n)
            gap = justify_gap(c, l, avail - w, s, &by_space);
        int run = 1;
        for (size_t i = l->a; i < l->b; i++) {
            if (c[i].gid > 0 || c[i].cp != ' ') {
                if (put(r, x, y, &c[i], run)) return -1;
                run = 0;
            } else {
                run = 1; /* a space the face has no glyph for: skipped */
            }
            x += c[i].adv * s;
            if (gap > 0 && (by_space ? c[i].cp == ' ' : 1)) {
                x += gap;
                run = 1;
            }
        }
    }
    return 0;
}

int pl_layout(const pl_char *c, size_t n, const pdfpara *para, float min_size, pl_result *r,
              fy_error *err)
{
    lines ls = {0};
    float lo = min_size / para->size, hi = 1, k = 1;
    if (lo > 1) lo = 1;
    int ok = fits(c, n, para, 1, &ls);
    if (ok == 0) {
        /* Bisection on the scale: the largest that fits, to 1/1000. */
        int lo_ok = fits(c, n, para, lo, &ls);
        if (lo_ok > 0) {
            while (hi - lo > 1e-3f && lo_ok >= 0) {
                float mid = (lo + hi) / 2;
                int f = fits(c, n, para, mid, &ls);
                if (f < 0) lo_ok = -1;
                if (f > 0) lo = mid;
                if (f == 0) hi = mid;
            }
            ok = lo_ok < 0 ? -1 : 1;
        } else {
            ok = lo_ok;
        }
        k = lo;
        if (ok >= 0 && fits(c, n, para, k, &ls) < 0) ok = -1;
    }
    r->size = para->size * k;
    r->lines = (int)ls.n;
    r->fits = ok > 0;
    if (ok < 0 || place(c, &ls, para, k, r)) {
        free(ls.v);
        return fy_err(err, FY_ENOMEM, "out of memory");
    }
    free(ls.v);
    return 0;
}

void pl_result_free(pl_result *r)
{
    free(r->g);
    *r = (pl_result){0};
}
