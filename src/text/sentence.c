/* sentence.c - sentence boundaries for text in any language, and
 * the cutting of sentences too long for the engine.
 *
 * Chinese terminators (。！？；) always end a sentence, together with the
 * run that follows them (？！, ……) and the closing quotes and brackets that
 * close the sentence; so does '…' after CJK text. ASCII . ! ?, '…' after
 * Latin text and the terminators of other scripts (। ؟ ։...) end one only
 * where a Latin-script language would:
 * before white space, the end, or CJK text, and not before a lower-case
 * word. A '.' also does not end one after a title (Mr.), after No./Fig./p.
 * before a number, after a number that opens the line (a list item), and
 * after other abbreviations, dotted acronyms and initials only when a
 * sentence opener follows ("in the U.S. The" ends, "U.S. Army" does not).
 * Newlines always end one. The rules look at the characters around the
 * terminator, and at the source's row of the table of language rules
 * (util/lang_rules.h) for what only that language does: its own
 * terminators (Greek ';'), its abbreviations and sentence openers beside
 * English's, and whether '.' after its letters is an abbreviation mark
 * (Thai). Chinese splitting is the same whatever the source is said to be.
 */
#include "text/text_internal.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

static int is_digit(uint32_t c)
{
    return c >= '0' && c <= '9';
}

static int is_break(uint32_t c)
{
    return c == '\n' || c == '\r';
}

/* 。！？；… ｡ ．: always end a sentence ('…' only after CJK, see below). */
static int is_cjk_term(uint32_t cp)
{
    return cp == 0x3002 || cp == 0xFF01 || cp == 0xFF1F || cp == 0xFF1B || cp == 0x2026 ||
           cp == 0xFF61 || cp == 0xFF0E;
}

/* The full stops and question marks of other scripts: Devanagari । ॥,
 * Arabic ؟ ۔, Greek ;, Armenian ։, Ethiopic ።, Myanmar ။, Khmer ។ ៕.
 * They end a sentence where '?' would, whatever the source language. */
static int is_script_term(uint32_t cp)
{
    return cp == 0x0964 || cp == 0x0965 || cp == 0x061F || cp == 0x06D4 || cp == 0x037E ||
           cp == 0x0589 || cp == 0x1362 || cp == 0x104B || cp == 0x17D4 || cp == 0x17D5;
}

/* Is cp one of the terminators of the language alone (Greek ';')? */
static int own_term(uint32_t cp, const fy_lang_rules *r)
{
    return r->terms && fy_utf8_has(r->terms, cp);
}

static int is_term(uint32_t cp, const fy_lang_rules *r)
{
    return is_cjk_term(cp) || is_script_term(cp) || cp == '.' || cp == '!' || cp == '?' ||
           own_term(cp, r);
}

/* Is cp a letter of the language's own script? */
static int own_letter(uint32_t cp, const fy_lang_rules *r)
{
    const char *sc = fy_cp_script(cp);
    return sc && r->script && !strcmp(sc, r->script);
}

/* Closing quotes and brackets stay with the sentence they close. */
static int is_closer(uint32_t cp)
{
    return cp == 0x201D || cp == 0x2019 || cp == 0x300D || cp == 0x300F || cp == 0xFF09 ||
           cp == ')' || cp == 0x3011 || cp == 0x300B || cp == 0x3009 || cp == ']' || cp == '"' ||
           cp == '\'' || cp == 0xFF02 || cp == 0x3017 || cp == 0x3015 || cp == 0xBB;
}

/* Is w[0..n) one of the space-separated words of list (icase: ASCII
 * letters compared without case)? */
static int in_words(const char *w, size_t n, const char *list, int icase)
{
    for (const char *p = list; p && *p;) {
        while (*p == ' ') p++;
        const char *e = p;
        while (*e && *e != ' ') e++;
        if ((size_t)(e - p) == n && n && (icase ? !strncasecmp(p, w, n) : !strncmp(p, w, n)))
            return 1;
        p = e;
    }
    return 0;
}

/* A letter of a script with spaces between words (Han, kana and Hangul are
 * words of their own). */
static int word_letter(uint32_t cp)
{
    return fy_cp_is_letter(cp) && !fy_cp_is_cjk(cp);
}

/* Is w[0..n) in the list (which) of the source's abbreviations or of
 * English's? English words, names and titles turn up in text of every
 * language, so its lists always count. */
static int listed(const char *w, size_t n, const fy_abbrevs *ab, size_t which, int icase)
{
    const fy_abbrevs *en = fy_lang_rules_of("en")->abbrevs;
    const char *const *own = ab ? (const char *const *)((const char *)ab + which) : NULL;
    const char *const *eng = (const char *const *)((const char *)en + which);
    return (own && in_words(w, n, *own, icase)) || in_words(w, n, *eng, icase);
}

#define LISTED(w, n, ab, field, icase) listed(w, n, ab, offsetof(fy_abbrevs, field), icase)

/* Is the word at s[w..len) a sentence opener (followed by a non-letter)? */
static int opener_at(const char *s, size_t len, size_t w, const fy_abbrevs *ab)
{
    size_t e = w, n;
    while (e < len && word_letter(fy_utf8_get(s, len, e, &n))) e += n;
    return e > w && LISTED(s + w, e - w, ab, openers, 0);
}

enum { NOT_ABBREV, ABBREV_NEVER, ABBREV_MAY };

/* What the word ending at s[e) (before a '.') is: not an abbreviation, one
 * after which '.' never ends a sentence, or one after which it ends only
 * before an opener (the language's abbreviations that may end a sentence,
 * dotted acronyms like U.S, initials like the J of "J. K. Rowling", in any
 * alphabet). next_digit: a number follows. ab: the source's lists (NULL:
 * none; English's count for every language). */
static int abbrev_kind(const char *s, size_t e, int next_digit, const fy_abbrevs *ab)
{
    size_t a = e, n, letters = 0;
    while (a > 0) {
        size_t b = fy_utf8_back(s, a);
        uint32_t cp = fy_utf8_get(s, e, b, &n);
        if (cp != '.' && !word_letter(cp)) break;
        letters += cp != '.';
        a = b;
    }
    while (a < e && s[a] == '.') a++;
    n = e - a;
    if (n == 0 || letters == 0) return NOT_ABBREV;
    if (LISTED(s + a, n, ab, never, 1)) return ABBREV_NEVER;
    if (next_digit && LISTED(s + a, n, ab, numbered, 1)) return ABBREV_NEVER;
    if (letters == 1 || memchr(s + a, '.', n) || LISTED(s + a, n, ab, may_end, 1))
        return ABBREV_MAY;
    return NOT_ABBREV;
}

/* The context of one terminator run s[t..j). */
typedef struct term_ctx {
    uint32_t first, prev, next; /* its first character, the one before, the one after */
    uint32_t after_ws;          /* the first one after white space (0 at the end) */
    size_t w;                   /* where after_ws is */
    int list_number;            /* only a short number precedes it on its line */
    int after_span;             /* it follows a URL or e-mail address: no abbreviation */
    const fy_lang_rules *lang;  /* the source's row */
} term_ctx;

/* A '.' run (or '…' after Latin text): decimals never reach here (no space
 * after the dot). */
static int dot_ends(const char *s, size_t len, size_t t, size_t j, const term_ctx *c)
{
    if (fy_cp_is_cjk(c->prev) && fy_cp_is_cjk(c->next)) return 1;
    size_t dots = 0;
    for (size_t k = t; k < j && s[k] == '.'; k++) dots++;
    if (dots == 1 && c->list_number) return 0; /* "1. Introduction" */
    if (dots == 1 && c->first == '.' && (c->lang->flags & FY_LR_NO_DOT_END) &&
        own_letter(c->prev, c->lang))
        return 0; /* Thai พ.ศ. 2567: an abbreviation */
    if (dots == 1 && c->first == '.' && !c->after_span) {
        const fy_abbrevs *ab = c->lang->abbrevs;
        int kind = abbrev_kind(s, t, is_digit(c->after_ws), ab);
        if (kind == ABBREV_NEVER) return 0;
        if (kind == ABBREV_MAY) return c->after_ws == 0 || opener_at(s, len, c->w, ab);
    }
    return !fy_cp_is_lower(c->after_ws); /* "... etc. and more", "wait... what" */
}

/* Decides whether a terminator run s[t..j) ends the sentence. */
static int ends_here(const char *s, size_t len, size_t t, size_t j, const term_ctx *c)
{
    int latin_ellipsis = c->first == 0x2026 && !fy_cp_is_cjk(c->prev);
    if (is_cjk_term(c->first) && !latin_ellipsis) return 1;
    int open =
        c->next == 0 || is_break(c->next) || fy_cp_is_space(c->next) || fy_cp_is_cjk(c->next);
    if (!open) return 0; /* "Yahoo!Mail", "3.14", "Node.js" */
    if (c->first == '.' || latin_ellipsis) return dot_ends(s, len, t, j, c);
    /* ? and ! after Latin text before a lower-case word: "Why?" he asked. */
    return fy_cp_is_cjk(c->prev) || !fy_cp_is_lower(c->after_ws);
}

/* Does the line before s[i] hold only a number of 1 to 3 digits (a list
 * item: "1. Introduction")? */
static int list_number(const char *s, size_t i)
{
    size_t k = i;
    while (k > 0 && is_digit((unsigned char)s[k - 1])) k--;
    if (k == i || i - k > 3) return 0;
    while (k > 0 && (s[k - 1] == ' ' || s[k - 1] == '\t')) k--;
    return k == 0 || is_break((unsigned char)s[k - 1]);
}

static uint32_t cp_at(const char *s, size_t len, size_t i)
{
    size_t n;
    return i < len ? fy_utf8_get(s, len, i, &n) : 0;
}

/* Appends s[a..e) trimmed of white space (empty pieces are not sentences);
 * tokens is its count if known, kept only if trimming changed nothing. */
static int push(fy_ranges *out, const char *s, size_t a, size_t e, int glue, long tokens)
{
    size_t n, a0 = a, e0 = e;
    while (a < e && fy_cp_is_space(fy_utf8_get(s, e, a, &n))) a += n;
    while (e > a) {
        size_t b = fy_utf8_back(s, e);
        if (!fy_cp_is_space(fy_utf8_get(s, e, b, &n))) break;
        e = b;
    }
    if (e == a) return 0;
    if (fy_vec_reserve((void **)&out->v, &out->cap, out->n + 1, sizeof *out->v)) return FY_ENOMEM;
    out->v[out->n++] = (fy_range){a, e - a, glue, a == a0 && e == e0 ? tokens : 0};
    return 0;
}

/* Index of the first span ending after i (spans sorted), from *k on. */
static const fy_span *span_at(const fy_spans *sp, size_t *k, size_t i)
{
    while (sp && *k < sp->n && sp->v[*k].start + sp->v[*k].len <= i) (*k)++;
    if (sp && *k < sp->n && sp->v[*k].start <= i) return &sp->v[*k];
    return NULL;
}

/* Reads the terminator run at s[i..) and its closers (prev is the character
 * before it; after_span: it directly follows a URL or e-mail address).
 * Returns the index after them, *ends whether the sentence ends there. */
static size_t term_run(const char *s, size_t len, size_t i, uint32_t prev, int after_span,
                       const fy_lang_rules *r, int *ends)
{
    size_t n, j = i;
    term_ctx c = {0};
    c.first = fy_utf8_get(s, len, i, &n);
    c.prev = prev;
    c.after_span = after_span;
    c.lang = r;
    j += n;
    while (j < len && is_term(cp_at(s, len, j), r)) j += (fy_utf8_get(s, len, j, &n), n);
    while (j < len && is_closer(cp_at(s, len, j))) j += (fy_utf8_get(s, len, j, &n), n);
    c.next = cp_at(s, len, j);
    c.w = j;
    while (c.w < len && fy_cp_is_space(cp_at(s, len, c.w)) && !is_break(cp_at(s, len, c.w)))
        c.w += (fy_utf8_get(s, len, c.w, &n), n);
    c.after_ws = cp_at(s, len, c.w);
    c.list_number = list_number(s, i);
    *ends = ends_here(s, len, i, j, &c);
    return j;
}

int fy_split_sentences(const char *s, size_t len, const fy_spans *spans, const fy_lang_rules *r,
                       fy_ranges *out)
{
    if (!r) r = fy_lang_rules_default();
    size_t a = 0, i = 0, k = 0, span_end = (size_t)-1;
    uint32_t prev = 0;
    while (i < len) {
        const fy_span *sp = span_at(spans, &k, i);
        if (sp) {
            i = sp->start + sp->len;
            if (sp->kind == FY_SPAN_URL || sp->kind == FY_SPAN_EMAIL) span_end = i;
            prev = 'a';
            continue;
        }
        size_t n;
        uint32_t cp = fy_utf8_get(s, len, i, &n);
        if (is_break(cp)) {
            if (push(out, s, a, i, 0, 0)) return FY_ENOMEM;
            a = i = i + n;
            prev = 0;
            continue;
        }
        if (!is_term(cp, r)) {
            prev = cp;
            i += n;
            continue;
        }
        int ends;
        size_t j = term_run(s, len, i, prev, i == span_end, r, &ends);
        if (ends) {
            if (push(out, s, a, j, 0, 0)) return FY_ENOMEM;
            a = j;
        }
        prev = cp;
        i = j;
    }
    return push(out, s, a, len, 0, 0);
}

/* ---- token counts and long sentences ------------------------------------ */

long fy_estimate_tokens(const char *s, size_t len)
{
    long t = 1; /* EOS */
    size_t i = 0, letters = 0, digits = 0;
    while (i <= len) {
        size_t n = 1;
        uint32_t cp = i < len ? fy_utf8_get(s, len, i, &n) : ' ';
        int letter = cp < 0x80 ? ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') : 0;
        int digit = is_digit(cp);
        if (!letter && letters) t += 1 + (long)(letters - 1) / 6, letters = 0;
        if (!digit && digits) t += 1 + (long)(digits - 1) / 3, digits = 0;
        if (letter)
            letters++;
        else if (digit)
            digits++;
        else if (i < len && !fy_cp_is_space(cp))
            t++;
        i += n;
    }
    return t;
}

long fy_token_count(const char *s, size_t len, fy_token_counter fn, void *ctx)
{
    long t = fn ? fn(ctx, s, len) : -1;
    return t >= 0 ? t : fy_estimate_tokens(s, len);
}

/* The span p is strictly inside, or NULL. */
static const fy_span *span_around(const fy_spans *sp, size_t p)
{
    for (size_t k = 0; sp && k < sp->n; k++)
        if (sp->v[k].start < p && p < sp->v[k].start + sp->v[k].len) return &sp->v[k];
    return NULL;
}

static int in_span(const fy_spans *sp, size_t p)
{
    return span_around(sp, p) != NULL;
}

/* A cut at p moved out of the span it falls in: before the span if the
 * piece from a keeps something, else after it (that piece is then longer
 * than the limit: a span is never cut). */
static size_t outside_spans(const fy_spans *sp, size_t a, size_t p)
{
    const fy_span *v = span_around(sp, p);
    if (!v) return p;
    return v->start > a ? v->start : v->start + v->len;
}

/* Boundary class of a cut at p (0 < p < len): 1 best .. 4 anywhere. */
static int cut_class(const char *s, size_t len, size_t p)
{
    size_t b = fy_utf8_back(s, p), n;
    uint32_t before = fy_utf8_get(s, len, b, &n);
    uint32_t after = cp_at(s, len, p);
    if (before == 0xFF0C || before == 0x3001 || before == 0xFF1A) return 1; /* ，、： */
    if ((before == ',' || before == ';') && fy_cp_is_space(after)) return 2;
    if (fy_cp_is_space(after) && !fy_cp_is_space(before)) return 3;
    return 4;
}

/* The longest prefix of s[a..e) within max tokens, at a character boundary
 * (at least one character). Binary search: counts grow with length. */
static size_t fit(const char *s, size_t a, size_t e, int max, fy_token_counter fn, void *ctx)
{
    size_t n;
    size_t lo = a + (fy_utf8_get(s, e, a, &n), n), hi = e;
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        while (mid > lo && mid < e && ((unsigned char)s[mid] & 0xC0) == 0x80) mid--;
        if (mid == lo) {
            /* No boundary strictly between: try the next one up. */
            mid = lo + (fy_utf8_get(s, e, lo, &n), n);
            if (mid > hi || fy_token_count(s + a, mid - a, fn, ctx) > max) break;
            lo = mid;
            continue;
        }
        if (fy_token_count(s + a, mid - a, fn, ctx) <= max)
            lo = mid;
        else
            hi = mid - 1;
    }
    while (lo > a && lo < e && ((unsigned char)s[lo] & 0xC0) == 0x80) lo--;
    return lo;
}

/* Where the piece starting at a and fitting up to e ends: the best boundary
 * class in (a, e], the last one of that class; without one outside spans,
 * e moved out of its span. *cls receives the class of the cut (4: inside a
 * word, no space may be put there). */
static size_t best_cut(const char *s, size_t len, size_t a, size_t e, const fy_spans *spans,
                       int *cls)
{
    size_t best = a;
    int best_class = 5;
    for (size_t p = e; p > a; p = fy_utf8_back(s, p)) {
        if (p == len || in_span(spans, p)) continue;
        int c = cut_class(s, len, p);
        if (c < best_class) best = p, best_class = c;
        if (c == 1) break;
    }
    if (best <= a) {
        best = outside_spans(spans, a, e > a ? e : len);
        best_class = best < len ? cut_class(s, len, best) : 3;
    }
    *cls = best_class;
    return best;
}

/* No piece needs more bytes than this per token: it bounds the search, so
 * a huge line costs O(n log w) counts of at most w bytes, not O(n^2). */
#define MAX_BYTES_PER_TOKEN 32

int fy_cut_long(const char *s, size_t len, int max_tokens, fy_token_counter fn, void *ctx,
                const fy_spans *spans, fy_ranges *out)
{
    size_t a = 0;
    int glue = 0;
    long rest = 0; /* the count of s[a..len) once it is known to fit */
    if (max_tokens < 1) max_tokens = 1;
    while (a < len) {
        size_t w = len - a, cap = (size_t)max_tokens * MAX_BYTES_PER_TOKEN;
        if (w > cap) {
            w = cap;
            while (w > 1 && ((unsigned char)s[a + w] & 0xC0) == 0x80) w--;
        } else if ((rest = fy_token_count(s + a, w, fn, ctx)) <= max_tokens) {
            break; /* the rest fits */
        }
        rest = 0;
        int best_class;
        size_t e = fit(s, a, a + w, max_tokens, fn, ctx);
        size_t best = best_cut(s, len, a, e, spans, &best_class);
        if (push(out, s, a, best, glue, 0)) return FY_ENOMEM;
        glue = best_class == 4;
        a = best;
    }
    return push(out, s, a, len, glue, rest);
}
