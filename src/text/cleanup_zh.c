/* cleanup_zh.c - repairs typical defects of Chinese (and Japanese) engine
 * output: ASCII punctuation where Chinese wants full-width, spaces a model
 * trained on tokenised text puts between characters, doubled punctuation,
 * decoder loops. The rules are listed with fy_cleanup_chinese in segment.h.
 *
 * Two passes over "units" (one character, one invalid byte, or one span
 * marker of the join): (1) conversions decided from each ASCII run's
 * neighbours, written out as a new string; (2) that string cut into tokens
 * (a CJK character, or a run of other non-space characters: a Latin word),
 * repeats collapsed (fy_collapse_repeats, shared with cleanup.c), doubled
 * punctuation dropped, and the white space between tokens decided by their
 * classes. URLs, e-mail addresses, `code` and the join's span markers are
 * protected units: never converted, always part of a Latin word.
 */
#include "text/text_internal.h"

#include <stdlib.h>
#include <string.h>

enum { K_SPACE, K_WIDE, K_PUNCT, K_OTHER };

typedef struct unit {
    size_t a, n; /* its bytes */
    uint32_t cp; /* U+FFFD for an invalid byte or a span marker */
    int kind;    /* K_* */
    int prot;    /* URL, e-mail, `code`, span marker: never changed */
} unit;

#define NONE ((size_t)-1)

/* Replacement values beside a code point (no code point is this small). */
enum { R_KEEP = 0, R_ELLIPSIS = 1, R_DROP = 2 };

/* CJK and full-width punctuation, and the general punctuation Chinese sets
 * full-width (“ ” … —): no space is wanted next to any of them. */
static int wide_punct(uint32_t cp)
{
    if (cp >= 0x3001 && cp <= 0x303F)
        return cp != 0x3005 && cp != 0x3007 && !(cp >= 0x3021 && cp <= 0x3029) &&
               !(cp >= 0x3038 && cp <= 0x303B);
    return (cp >= 0xFF01 && cp <= 0xFF0F) || (cp >= 0xFF1A && cp <= 0xFF20) ||
           (cp >= 0xFF3B && cp <= 0xFF40) || (cp >= 0xFF5B && cp <= 0xFF65) ||
           (cp >= 0xFE10 && cp <= 0xFE1F) || (cp >= 0xFE30 && cp <= 0xFE4F) || cp == 0x201C ||
           cp == 0x201D || cp == 0x2026 || cp == 0x2014 || cp == 0x2015 || cp == 0x30FB;
}

/* Han, kana, Bopomofo and full-width letters and digits. */
static int wide_char(uint32_t cp)
{
    if (cp < 0x2E80) return 0;
    if ((cp >= 0xFF10 && cp <= 0xFF19) || (cp >= 0xFF21 && cp <= 0xFF3A) ||
        (cp >= 0xFF41 && cp <= 0xFF5A))
        return 1;
    const char *sc = fy_cp_script(cp);
    return sc && (!strcmp(sc, "Hani") || !strcmp(sc, "Kana") || !strcmp(sc, "Bopo"));
}

static int kind_of(uint32_t cp)
{
    if (fy_cp_is_space(cp)) return K_SPACE;
    if (wide_punct(cp)) return K_PUNCT;
    return wide_char(cp) ? K_WIDE : K_OTHER;
}

/* The join's span marker: 0xFF and three continuation bytes. */
static int marker_at(const char *s, size_t len, size_t i)
{
    if ((unsigned char)s[i] != 0xFF || len - i < 4) return 0;
    for (size_t k = 1; k < 4; k++)
        if (((unsigned char)s[i + k] & 0xC0) != 0x80) return 0;
    return 1;
}

/* Is byte i inside a URL, e-mail or code span? k walks the sorted spans. */
static int in_protected(const fy_spans *sp, size_t *k, size_t i)
{
    while (*k < sp->n && sp->v[*k].start + sp->v[*k].len <= i) (*k)++;
    return *k < sp->n && sp->v[*k].start <= i && sp->v[*k].kind != FY_SPAN_NUMUNIT;
}

/* Cuts s[0..len) into units. Returns the array (*nu entries) or NULL. */
static unit *decode(const char *s, size_t len, size_t *nu)
{
    fy_spans sp = {0};
    unit *u = malloc((len + 1) * sizeof *u);
    if (!u || fy_find_spans_ex(s, len, 0, &sp)) {
        free(u);
        free(sp.v);
        return NULL;
    }
    size_t n = 0, k = 0;
    for (size_t i = 0; i < len; i += u[n - 1].n) {
        unit x = {i, 4, 0xFFFD, K_OTHER, 1};
        if (!marker_at(s, len, i)) {
            x.cp = fy_utf8_get(s, len, i, &x.n);
            x.prot = in_protected(&sp, &k, i);
            x.kind = x.prot ? K_OTHER : kind_of(x.cp);
        }
        u[n++] = x;
    }
    free(sp.v);
    *nu = n;
    return u;
}

/* ---- pass 1: conversions -------------------------------------------------- */

static int cjk_side(const unit *x)
{
    return !x->prot && (x->kind == K_WIDE || x->kind == K_PUNCT);
}

static int han_or_kana(const unit *u, size_t a, size_t e)
{
    for (size_t k = a; k < e; k++)
        if (!u[k].prot && (fy_cp_is_han(u[k].cp) || fy_cp_is_kana(u[k].cp))) return 1;
    return 0;
}

/* ( ) around Han or kana -> （ ）; a pair of " around them -> “ ”. */
static int pair_brackets(const unit *u, size_t nu, uint32_t *rep)
{
    size_t *stack = malloc((nu + 1) * sizeof *stack), depth = 0, quote = NONE;
    if (!stack) return FY_ENOMEM;
    for (size_t k = 0; k < nu; k++) {
        if (u[k].prot) continue;
        if (u[k].cp == '(') {
            stack[depth++] = k;
        } else if (u[k].cp == ')' && depth > 0) {
            size_t o = stack[--depth];
            if (han_or_kana(u, o + 1, k)) rep[o] = 0xFF08, rep[k] = 0xFF09;
        } else if (u[k].cp == '"' && quote == NONE) {
            quote = k;
        } else if (u[k].cp == '"') {
            if (han_or_kana(u, quote + 1, k)) rep[quote] = 0x201C, rep[k] = 0x201D;
            quote = NONE;
        }
    }
    free(stack);
    return 0;
}

static int run_char(uint32_t c)
{
    return c == ',' || c == '.' || c == '?' || c == '!' || c == ':' || c == ';' || c == 0x2026;
}

static int is_digit(uint32_t c)
{
    return c >= '0' && c <= '9';
}

/* The nearest unit before i (after e) that is not white space, or NONE. */
static size_t solid_before(const unit *u, size_t i)
{
    while (i > 0 && u[i - 1].kind == K_SPACE) i--;
    return i > 0 ? i - 1 : NONE;
}

static size_t solid_after(const unit *u, size_t nu, size_t e)
{
    while (e < nu && u[e].kind == K_SPACE) e++;
    return e < nu ? e : NONE;
}

/* Does the Latin word ending with unit p hold a '.' (U.S, v2.0, e.g)? */
static int dotted_word(const unit *u, size_t p)
{
    for (size_t k = p + 1; k-- > 0;) {
        uint32_t c = u[k].cp;
        if (u[k].prot || !(c == '.' || is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')))
            return 0;
        if (c == '.') return 1;
    }
    return 0;
}

/* Closing quotes and brackets: ) " ' ” ’ ） 」 』 》 】 */
static int closer(uint32_t c)
{
    return c == ')' || c == '"' || c == '\'' || c == 0x201D || c == 0x2019 || c == 0xFF09 ||
           c == 0x300D || c == 0x300F || c == 0x300B || c == 0x3011;
}

/* Is there nothing after unit e but white space and closing marks? */
static int at_end(const unit *u, size_t nu, size_t e)
{
    for (; e < nu; e++)
        if (u[e].kind != K_SPACE && !closer(u[e].cp)) return 0;
    return 1;
}

static int terminators_only(const unit *u, size_t i, size_t j)
{
    for (size_t k = i; k < j; k++)
        if (u[k].cp != '.' && u[k].cp != '?' && u[k].cp != '!' && u[k].cp != 0x2026) return 0;
    return 1;
}

static uint32_t full_width(uint32_t c)
{
    return c == ',' ? 0xFF0C : c == '?' ? 0xFF1F : c == '!' ? 0xFF01 : c == ':' ? 0xFF1A : 0xFF1B;
}

/* Writes the replacements of run u[i..j) that is to be converted. */
static void map_run(const unit *u, size_t i, size_t j, int after_wide, uint32_t *rep)
{
    for (size_t k = i; k < j;) {
        if (u[k].cp != '.' && u[k].cp != 0x2026) {
            rep[k] = full_width(u[k].cp);
            k++;
            continue;
        }
        size_t m = k, dots = 0;
        for (; m < j && (u[m].cp == '.' || u[m].cp == 0x2026); m++) dots += u[m].cp == '.' ? 1 : 3;
        if (dots < 3 || after_wide) {
            rep[k] = dots < 3 ? 0x3002 : R_ELLIPSIS;
            for (size_t x = k + 1; x < m; x++) rep[x] = R_DROP;
        }
        k = m;
    }
}

/* Decides about the run of ASCII punctuation (and '…') u[i..j). */
static void convert_run(const unit *u, size_t nu, size_t i, size_t j, int has_cjk, uint32_t *rep)
{
    const unit *pi = i > 0 ? &u[i - 1] : NULL, *ni = j < nu ? &u[j] : NULL;
    if (j - i == 1 && (u[i].cp == '.' || u[i].cp == ',' || u[i].cp == ':') && pi && ni &&
        is_digit(pi->cp) && is_digit(ni->cp))
        return; /* 3.14, 1,000, 10:30 */
    size_t p = solid_before(u, i), q = solid_after(u, nu, j);
    int after_wide = p != NONE && cjk_side(&u[p]);
    int dotted = p != NONE && !after_wide && u[i].cp == '.' && dotted_word(u, p);
    int conv = after_wide || (q != NONE && cjk_side(&u[q]) && !dotted);
    /* A Chinese sentence ending in a Latin word or number: "我用 iPhone." */
    if (!conv && has_cjk && pi && pi->kind != K_SPACE && !dotted && terminators_only(u, i, j) &&
        at_end(u, nu, j))
        conv = 1;
    if (conv) map_run(u, i, j, after_wide, rep);
}

static void put_unit(fy_buf *b, const char *s, const unit *x, uint32_t rep)
{
    if (rep == R_KEEP)
        fy_buf_put(b, s + x->a, x->n);
    else if (rep == R_ELLIPSIS)
        fy_buf_put(b, "\xe2\x80\xa6\xe2\x80\xa6", 6);
    else if (rep != R_DROP)
        fy_buf_putcp(b, rep);
}

/* The style's marks in place of Simplified Chinese's ， “ ” (the only
 * comma and quotation marks the rules above write). */
static void restyle(uint32_t *rep, size_t nu, const uint32_t style[3])
{
    for (size_t i = 0; i < nu; i++) {
        if (rep[i] == 0xFF0C)
            rep[i] = style[0];
        else if (rep[i] == 0x201C)
            rep[i] = style[1];
        else if (rep[i] == 0x201D)
            rep[i] = style[2];
    }
}

static char *pass_convert(const char *s, size_t len, const uint32_t style[3], size_t *out_len)
{
    size_t nu;
    unit *u = decode(s, len, &nu);
    uint32_t *rep = u ? calloc(nu + 1, sizeof *rep) : NULL;
    fy_buf b = {0};
    if (!rep || pair_brackets(u, nu, rep)) goto fail;
    int has_cjk = han_or_kana(u, 0, nu);
    for (size_t i = 0; i < nu;) {
        if (u[i].prot || !run_char(u[i].cp)) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < nu && !u[j].prot && run_char(u[j].cp)) j++;
        convert_run(u, nu, i, j, has_cjk, rep);
        i = j;
    }
    restyle(rep, nu, style);
    for (size_t i = 0; i < nu; i++) put_unit(&b, s, &u[i], rep[i]);
    free(u);
    free(rep);
    return fy_buf_take(&b, out_len);
fail:
    free(u);
    free(rep);
    return NULL;
}

/* ---- pass 2: tokens, repeats, doubled punctuation, white space ------------- */

/* Cuts the units into tokens: one per CJK character, one per run of other
 * non-space units. Returns the count, or NONE when out of memory. */
static size_t tokenize(const unit *u, size_t nu, fy_tok **out)
{
    fy_tok *w = malloc((nu + 1) * sizeof *w);
    size_t n = 0;
    unsigned gap = 0;
    if (!w) return NONE;
    for (size_t i = 0; i < nu;) {
        if (u[i].kind == K_SPACE) {
            gap = FY_TOK_GAP;
            i++;
            continue;
        }
        size_t e = i + 1;
        if (u[i].kind == K_OTHER)
            while (e < nu && u[e].kind == K_OTHER) e++;
        unsigned solo = u[i].kind == K_WIDE ? FY_TOK_SOLO : 0;
        w[n++] = (fy_tok){u[i].a, u[e - 1].a + u[e - 1].n - u[i].a, gap | solo, u[i].kind};
        gap = 0;
        i = e;
    }
    *out = w;
    return n;
}

/* The code point a one-character punctuation token holds, else 0. */
static uint32_t punct_of(const char *s, const fy_tok *t)
{
    size_t n;
    if (t->cls != K_PUNCT) return 0;
    uint32_t cp = fy_utf8_get(s, t->a + t->n, t->a, &n);
    return n == t->n ? cp : 0;
}

/* 。。 -> 。 (also ，、；：), and ，、； before 。！？ dropped. */
static size_t drop_doubled(const char *s, fy_tok *w, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = punct_of(s, &w[i]), b = o ? punct_of(s, &w[o - 1]) : 0;
        if (c && c == b &&
            (c == 0x3002 || c == 0xFF0C || c == 0x3001 || c == 0xFF1B || c == 0xFF1A))
            continue;
        if ((c == 0x3002 || c == 0xFF01 || c == 0xFF1F) &&
            (b == 0xFF0C || b == 0x3001 || b == 0xFF1B)) {
            unsigned gap = w[o - 1].flags & FY_TOK_GAP;
            w[o - 1] = w[i];
            w[o - 1].flags = (w[o - 1].flags & ~(unsigned)FY_TOK_GAP) | gap;
            continue;
        }
        w[o++] = w[i];
    }
    return o;
}

/* Is a space wanted where white space separated classes a and b? */
static int space_between(int a, int b)
{
    return !(a == K_PUNCT || b == K_PUNCT || (a == K_WIDE && b == K_WIDE));
}

static char *pass_tokens(const char *s, size_t len)
{
    size_t nu;
    fy_tok *w = NULL;
    unit *u = decode(s, len, &nu);
    size_t n = u ? tokenize(u, nu, &w) : NONE;
    free(u);
    if (n == NONE) return NULL;
    n = fy_collapse_repeats(s, w, n);
    n = drop_doubled(s, w, n);
    fy_buf b = {0};
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && (w[i].flags & FY_TOK_GAP) && space_between(w[i - 1].cls, w[i].cls))
            fy_buf_putc(&b, ' ');
        fy_buf_put(&b, s + w[i].a, w[i].n);
    }
    free(w);
    return fy_buf_take(&b, NULL);
}

char *fy_cleanup_cjk(const char *s, size_t len, const fy_lang_rules *r)
{
    /* Japanese writes 、 where Chinese writes ，; the quotation marks are
     * the row's (“ ” Simplified, 「 」 Traditional and Japanese). */
    uint32_t style[3] = {0xFF0C, 0x201C, 0x201D};
    if (r && r->script && !strcmp(r->script, "Jpan")) style[0] = 0x3001;
    if (r && r->quotes[0]) style[1] = r->quotes[0], style[2] = r->quotes[1];
    size_t n;
    char *p1 = pass_convert(s ? s : "", s ? len : 0, style, &n);
    if (!p1) return NULL;
    char *out = pass_tokens(p1, n);
    free(p1);
    return out;
}

char *fy_cleanup_chinese(const char *s, size_t len)
{
    return fy_cleanup_cjk(s, len, fy_lang_rules_of("zh"));
}
