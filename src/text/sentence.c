/* sentence.c - sentence boundaries for Chinese, English and mixed text, and
 * the cutting of sentences too long for the engine.
 *
 * Chinese terminators (。！？；…) always end a sentence, together with the
 * run that follows them (？！, ……) and the closing quotes and brackets that
 * close the sentence. ASCII . ! ? end one only where English would: before
 * white space, the end, or Chinese, and for '.' not after an abbreviation
 * or initial, nor before a lower-case word. Newlines always end one.
 */
#include "text/text_internal.h"

#include <string.h>
#include <strings.h>

static int is_lower(uint32_t c)
{
    return c >= 'a' && c <= 'z';
}

static int is_digit(uint32_t c)
{
    return c >= '0' && c <= '9';
}

static int is_break(uint32_t c)
{
    return c == '\n' || c == '\r';
}

/* 。！？；… ｡ ．: always end a sentence. */
static int is_cjk_term(uint32_t cp)
{
    return cp == 0x3002 || cp == 0xFF01 || cp == 0xFF1F || cp == 0xFF1B || cp == 0x2026 ||
           cp == 0xFF61 || cp == 0xFF0E;
}

static int is_term(uint32_t cp)
{
    return is_cjk_term(cp) || cp == '.' || cp == '!' || cp == '?';
}

/* Closing quotes and brackets stay with the sentence they close. */
static int is_closer(uint32_t cp)
{
    return cp == 0x201D || cp == 0x2019 || cp == 0x300D || cp == 0x300F || cp == 0xFF09 ||
           cp == ')' || cp == 0x3011 || cp == 0x300B || cp == 0x3009 || cp == ']' || cp == '"' ||
           cp == '\'' || cp == 0xFF02 || cp == 0x3017 || cp == 0x3015;
}

/* Abbreviations after which '.' never ends a sentence... */
static const char *const abbrevs[] = {
    "mr",  "mrs", "ms",   "dr",     "prof", "sr",  "jr",  "st",  "vs",   "etc", "inc",
    "ltd", "co",  "corp", "approx", "dept", "est", "gen", "gov", "sen",  "rep", "rev",
    "jan", "feb", "mar",  "apr",    "jun",  "jul", "aug", "sep", "sept", "oct", "nov",
    "dec", "mt",  "ft",   "cf",     "al",   "ca",  "ed",  "eds",
};

/* ...and those that are abbreviations only before a number ("No. 5", but
 * "the answer is no. Then"). */
static const char *const num_abbrevs[] = {"no", "nos", "fig", "figs", "vol", "pp", "p", "op"};

static int in_list(const char *w, size_t n, const char *const *list, size_t count)
{
    for (size_t k = 0; k < count; k++)
        if (strlen(list[k]) == n && strncasecmp(w, list[k], n) == 0) return 1;
    return 0;
}

/* 1 if the word ending at s[e) (before a '.') is an abbreviation, an initial
 * (one letter) or a dotted acronym (U.S, e.g). next_digit: a number follows. */
static int is_abbrev(const char *s, size_t e, int next_digit)
{
    size_t a = e;
    while (a > 0) {
        unsigned char c = (unsigned char)s[a - 1];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.')) break;
        a--;
    }
    size_t n = e - a;
    if (n == 0) return 0;
    if (n == 1) return 1; /* initial: "J. K. Rowling" */
    if (memchr(s + a, '.', n)) return 1;
    if (next_digit && in_list(s + a, n, num_abbrevs, sizeof num_abbrevs / sizeof *num_abbrevs))
        return 1;
    return in_list(s + a, n, abbrevs, sizeof abbrevs / sizeof *abbrevs);
}

/* Decides whether a terminator run s[t..j) (t = its first byte) ends the
 * sentence. prev is the code point before it, next the one after j (0 at
 * the end), after_ws the first one after white space. */
static int ends_here(const char *s, size_t t, size_t j, uint32_t first, uint32_t prev,
                     uint32_t next, uint32_t after_ws)
{
    if (is_cjk_term(first)) return 1;
    int open = next == 0 || is_break(next) || fy_cp_is_space(next) || fy_cp_is_cjk(next);
    if (!open) return 0; /* "Yahoo!Mail", "3.14", "Node.js" */
    if (first != '.') return 1;
    if (fy_cp_is_cjk(prev) && fy_cp_is_cjk(next)) return 1;
    int dots = 0;
    for (size_t k = t; k < j && s[k] == '.'; k++) dots++;
    if (dots == 1 && is_abbrev(s, t, is_digit(after_ws))) return 0;
    if (is_lower(after_ws)) return 0; /* "... etc. and more", "wait... what" */
    return 1;
}

static uint32_t cp_at(const char *s, size_t len, size_t i)
{
    size_t n;
    return i < len ? fy_utf8_get(s, len, i, &n) : 0;
}

static int push(fy_ranges *out, const char *s, size_t a, size_t e, int glue)
{
    /* Trim white space on both ends; empty pieces are not sentences. */
    size_t n;
    while (a < e && fy_cp_is_space(fy_utf8_get(s, e, a, &n))) a += n;
    while (e > a) {
        size_t b = fy_utf8_back(s, e);
        if (!fy_cp_is_space(fy_utf8_get(s, e, b, &n))) break;
        e = b;
    }
    if (e == a) return 0;
    if (fy_vec_reserve((void **)&out->v, &out->cap, out->n + 1, sizeof *out->v)) return FY_ENOMEM;
    out->v[out->n++] = (fy_range){a, e - a, glue};
    return 0;
}

/* Index of the first span ending after i (spans sorted), from *k on. */
static const fy_span *span_at(const fy_spans *sp, size_t *k, size_t i)
{
    while (sp && *k < sp->n && sp->v[*k].start + sp->v[*k].len <= i) (*k)++;
    if (sp && *k < sp->n && sp->v[*k].start <= i) return &sp->v[*k];
    return NULL;
}

int fy_split_sentences(const char *s, size_t len, const fy_spans *spans, fy_ranges *out)
{
    size_t a = 0, i = 0, k = 0;
    uint32_t prev = 0;
    while (i < len) {
        const fy_span *sp = span_at(spans, &k, i);
        if (sp) {
            i = sp->start + sp->len;
            prev = 'a';
            continue;
        }
        size_t n;
        uint32_t cp = fy_utf8_get(s, len, i, &n);
        if (is_break(cp)) {
            if (push(out, s, a, i, 0)) return FY_ENOMEM;
            a = i = i + n;
            prev = 0;
            continue;
        }
        if (!is_term(cp)) {
            prev = cp;
            i += n;
            continue;
        }
        size_t j = i + n;
        while (j < len && is_term(cp_at(s, len, j))) j += (fy_utf8_get(s, len, j, &n), n);
        while (j < len && is_closer(cp_at(s, len, j))) j += (fy_utf8_get(s, len, j, &n), n);
        uint32_t next = cp_at(s, len, j);
        size_t w = j;
        while (w < len && fy_cp_is_space(cp_at(s, len, w)) && !is_break(cp_at(s, len, w)))
            w += (fy_utf8_get(s, len, w, &n), n);
        if (ends_here(s, i, j, cp, prev, next, cp_at(s, len, w))) {
            if (push(out, s, a, j, 0)) return FY_ENOMEM;
            a = j;
        }
        prev = cp;
        i = j;
    }
    return push(out, s, a, len, 0);
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

static long count(const char *s, size_t len, fy_token_counter fn, void *ctx)
{
    long t = fn ? fn(ctx, s, len) : -1;
    return t >= 0 ? t : fy_estimate_tokens(s, len);
}

static int in_span(const fy_spans *sp, size_t p)
{
    for (size_t k = 0; sp && k < sp->n; k++)
        if (sp->v[k].start < p && p < sp->v[k].start + sp->v[k].len) return 1;
    return 0;
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
            if (mid > hi || count(s + a, mid - a, fn, ctx) > max) break;
            lo = mid;
            continue;
        }
        if (count(s + a, mid - a, fn, ctx) <= max)
            lo = mid;
        else
            hi = mid - 1;
    }
    while (lo > a && lo < e && ((unsigned char)s[lo] & 0xC0) == 0x80) lo--;
    return lo;
}

/* No piece needs more bytes than this per token: it bounds the search, so
 * a huge line costs O(n log w) counts of at most w bytes, not O(n^2). */
#define MAX_BYTES_PER_TOKEN 32

int fy_cut_long(const char *s, size_t len, int max_tokens, fy_token_counter fn, void *ctx,
                const fy_spans *spans, fy_ranges *out)
{
    size_t a = 0;
    int glue = 0;
    if (max_tokens < 1) max_tokens = 1;
    while (a < len) {
        size_t w = len - a, cap = (size_t)max_tokens * MAX_BYTES_PER_TOKEN;
        if (w > cap) {
            w = cap;
            while (w > 1 && ((unsigned char)s[a + w] & 0xC0) == 0x80) w--;
        } else if (count(s + a, w, fn, ctx) <= max_tokens) {
            break; /* the rest fits */
        }
        size_t e = fit(s, a, a + w, max_tokens, fn, ctx);
        size_t best = e;
        int best_class = 4;
        for (size_t p = e; p > a; p = fy_utf8_back(s, p)) {
            if (p == len || in_span(spans, p)) continue;
            int c = cut_class(s, len, p);
            if (c < best_class || (c == 4 && best_class == 4 && in_span(spans, best)))
                best = p, best_class = c;
            if (c == 1) break;
        }
        if (best <= a) best = e > a ? e : len;
        if (push(out, s, a, best, glue)) return FY_ENOMEM;
        glue = best_class == 4;
        a = best;
    }
    return push(out, s, a, len, glue);
}
