/* cleanup.c - repairs typical defects of engine output in languages that
 * put spaces between words (English and most others).
 *
 * Three passes, each a pure function of its input: (1) with FY_LR_FULLWIDTH,
 * full-width and CJK punctuation left in the text becomes ASCII (with the
 * space such languages want after it); (2) the text is cut into
 * space-separated words, an n-gram repeated more than 3 times in a row is
 * kept once (a degenerate decoder loop), and with FY_LR_TIGHT punctuation
 * standing alone is attached to the word before it (opening marks to the
 * word after); (3) with FY_LR_TIGHT doubled punctuation inside a word is
 * collapsed. URLs and e-mail addresses are words that no pass changes.
 * Only ASCII and CJK punctuation are rewritten: other bytes, valid or not,
 * pass through unchanged (the join relies on that for its span markers).
 * The language's own punctuation rules come after (cleanup_lang.c).
 */
#include "text/text_internal.h"

#include <stdlib.h>
#include <string.h>

/* ASCII replacement for CJK punctuation, or 0. */
static uint32_t ascii_punct(uint32_t cp)
{
    if (cp >= 0xFF01 && cp <= 0xFF5E) return cp - 0xFEE0; /* full-width ASCII forms */
    switch (cp) {
    case 0x3002:
    case 0xFF61:
        return '.'; /* 。｡ */
    case 0x3001:
        return ','; /* 、 */
    case 0x3000:
        return ' ';
    case 0x300C:
    case 0x300D:
    case 0x300E:
    case 0x300F: /* 「」『』 */
    case 0x300A:
    case 0x300B:
    case 0x3008:
    case 0x3009: /* 《》〈〉 */
        return '"';
    case 0x3010:
    case 0x3016:
        return '[';
    case 0x3011:
    case 0x3017:
        return ']';
    default:
        return 0;
    }
}

static int is_end_punct(uint32_t c)
{
    return c == ',' || c == '.' || c == '!' || c == '?' || c == ';' || c == ':';
}

/* Is s[i] inside one of the URL/e-mail spans? k walks the sorted spans. */
static int in_link(const fy_spans *sp, size_t *k, size_t i)
{
    while (*k < sp->n && sp->v[*k].start + sp->v[*k].len <= i) (*k)++;
    return *k < sp->n && sp->v[*k].start <= i &&
           (sp->v[*k].kind == FY_SPAN_URL || sp->v[*k].kind == FY_SPAN_EMAIL);
}

/* Pass 1: CJK punctuation to ASCII. */
static void pass_punct(const char *s, size_t len, const fy_spans *sp, fy_buf *b)
{
    size_t i = 0, k = 0;
    while (i < len) {
        size_t n;
        uint32_t cp = fy_utf8_get(s, len, i, &n);
        if (in_link(sp, &k, i)) {
            fy_buf_put(b, s + i, n);
            i += n;
            continue;
        }
        if (cp == 0x2026 && i + n < len && fy_utf8_get(s, len, i + n, &n) == 0x2026) {
            fy_buf_put(b, "...", 3); /* …… */
            i += 6;
            continue;
        }
        uint32_t a = ascii_punct(cp);
        if (!a) {
            fy_buf_put(b, s + i, n);
            i += n;
            continue;
        }
        fy_buf_putc(b, (char)a);
        i += n;
        if (is_end_punct(a) && i < len) {
            size_t m;
            uint32_t next = fy_utf8_get(s, len, i, &m);
            uint32_t na = ascii_punct(next);
            if (!fy_cp_is_space(next) && !is_end_punct(next) && !is_end_punct(na) && na != ')' &&
                na != ']' && na != '"' && next != '"' && next != ')' &&
                !(a == ',' && next >= '0' && next <= '9'))
                fy_buf_putc(b, ' ');
        }
    }
}

/* Do the g tokens at x and y hold the same bytes? */
static int same(const char *s, const fy_tok *x, const fy_tok *y, size_t g)
{
    for (size_t k = 0; k < g; k++)
        if (x[k].n != y[k].n || memcmp(s + x[k].a, s + y[k].a, x[k].n) != 0) return 0;
    return 1;
}

size_t fy_collapse_repeats(const char *s, fy_tok *w, size_t n)
{
    size_t o = 0, i = 0;
    while (i < n) {
        size_t skip = 0, g;
        for (g = 1; g <= 8 && i + 4 * g <= n; g++) {
            if (g == 1 && (w[i].flags & FY_TOK_SOLO)) continue;
            size_t r = 1;
            while (i + (r + 1) * g <= n && same(s, w + i, w + i + r * g, g)) r++;
            if (r > 3) {
                skip = r;
                break;
            }
        }
        if (skip) {
            for (size_t k = 0; k < g; k++) w[o++] = w[i + k];
            i += skip * g;
        } else {
            w[o++] = w[i++];
        }
    }
    return o;
}

/* Is s[0..n) made only of characters of set (UTF-8)? */
static int all_of(const char *s, size_t n, const char *set)
{
    size_t m;
    for (size_t k = 0; k < n; k += m)
        if (!fy_utf8_has(set, fy_utf8_get(s, n, k, &m))) return 0;
    return n > 0;
}

/* Punctuation that closes the word before it in the languages with spaces:
 * ASCII, Arabic ، ؛ ؟ ۔, the dandas, Armenian ։, Ethiopic ።, Myanmar ။ ၊,
 * Khmer ។ ៕, and ». */
#define CLOSING                                                                                    \
    ",.!?;:)]}%\u060c\u061b\u061f\u06d4\u0964\u0965\u0589\u1362\u104b\u104a\u17d4\u17d5\u00bb"
/* ... and that opens the word after it: ( [ { ¿ ¡ « „ */
#define OPENING "([{\u00bf\u00a1\u00ab\u201e"

/* Pass 3 for one word: ",," -> ",", "!!" -> "!", ".." -> ".", ",." -> ".". */
static void put_word(fy_buf *b, const char *s, size_t n, int link)
{
    if (link) {
        fy_buf_put(b, s, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        char c = s[i], d = i + 1 < n ? s[i + 1] : 0;
        if (c && strchr(",;!?", c) && d == c) continue;
        if (c == ':' && d == ':' && (i + 2 >= n || s[i + 2] == ' ')) continue;
        if (c == '.' && d == '.' && (i == 0 || s[i - 1] != '.') &&
            (i + 2 >= n || s[i + 2] != '.') && (i + 2 >= n || strchr("\"')]", s[i + 2])))
            continue;
        if ((c == ',' || c == ';') && d && strchr(".!?", d)) continue;
        fy_buf_putc(b, c);
    }
}

static char *pass_words(const char *s, size_t len, int tight)
{
    fy_spans sp = {0};
    fy_tok *w = NULL;
    size_t nw = 0, cap = 0;
    fy_buf b = {0};
    if (fy_find_spans(s, len, &sp)) goto fail;
    size_t k = 0;
    for (size_t i = 0; i < len;) {
        while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
        if (i >= len) break;
        size_t a = i;
        int link = 0;
        while (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') {
            link |= in_link(&sp, &k, i);
            i++;
        }
        if (fy_vec_reserve((void **)&w, &cap, nw + 1, sizeof *w)) goto fail;
        w[nw++] = (fy_tok){a, i - a, link ? FY_TOK_LINK : 0, 0};
    }
    nw = fy_collapse_repeats(s, w, nw);
    int glue_next = 0;
    for (size_t i = 0; i < nw; i++) {
        const char *t = s + w[i].a;
        int link = (w[i].flags & FY_TOK_LINK) != 0;
        int closing = tight && !link && all_of(t, w[i].n, CLOSING);
        if (b.n && !closing && !glue_next) fy_buf_putc(&b, ' ');
        /* Collapse doubled punctuation across the join with the word before. */
        if (closing && b.n && strchr(",;!?", t[0]) && b.p[b.n - 1] == t[0]) t++, w[i].n--;
        put_word(&b, t, w[i].n, link || !tight);
        glue_next = tight && !link && all_of(t, w[i].n, OPENING);
    }
    free(sp.v);
    free(w);
    return fy_buf_take(&b, NULL);
fail:
    free(sp.v);
    free(w);
    fy_buf_free(&b);
    return NULL;
}

char *fy_cleanup_words(const char *s, size_t len, unsigned flags)
{
    fy_spans sp = {0};
    fy_buf b = {0};
    if (!(flags & FY_LR_FULLWIDTH)) return pass_words(s, len, (flags & FY_LR_TIGHT) != 0);
    if (fy_find_spans(s, len, &sp)) return NULL;
    pass_punct(s, len, &sp, &b);
    free(sp.v);
    size_t n;
    char *p1 = fy_buf_take(&b, &n);
    if (!p1) return NULL;
    char *out = pass_words(p1, n, (flags & FY_LR_TIGHT) != 0);
    free(p1);
    return out;
}

char *fy_cleanup_english(const char *s, size_t len)
{
    return fy_cleanup_words(s, len, FY_LR_FULLWIDTH | FY_LR_TIGHT);
}
