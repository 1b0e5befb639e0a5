/* join.c - puts translations back into their document.
 *
 * For each sentence (render, shared by fy_doc_join and
 * fy_doc_render_sentence so streamed and joined text never differ): find
 * its protected spans in the translation (verbatim, else ignoring spacing
 * and case) and mark them with sentinel characters; add missing strict
 * spans before the final punctuation; clean up for the target language
 * (its row of util/lang_rules.h: fy_cleanup_for), with a right-to-left mark
 * where its row asks for one; place the anchors (inline tags, special white
 * space); write it out with the spans' source bytes in place of the
 * sentinels, escaping for HTML.
 *
 * Anchor placement: a tag touching a protected span follows that span; any
 * other anchor goes to the same relative position in the translation,
 * snapped to a word boundary (opening tags before a word, closing tags after
 * one; in text of a script without spaces, Han or Thai say, every character
 * with its combining marks is a word), and never before the anchor
 * placed ahead of it. Keeping source order keeps the nesting, so the output
 * is well-formed if the input was. When the translation equals the engine
 * text, everything goes back exactly where it came from.
 *
 * Between sentences the target's row decides: a space where sentences
 * touched, or, for Chinese and Japanese, no space at all.
 */
#include "text/doc_internal.h"
#include "util/lang.h"

#include <stdlib.h>
#include <string.h>

/* A protected span is marked in the translation by 0xFF and three
 * continuation bytes holding its index: never valid UTF-8, so it cannot
 * collide with any text (inputs are validated, translations sanitized),
 * and clean-up, which only rewrites ASCII, passes it through as a word. */
#define SENTINEL_BYTES 4

#define NNBSP 0x202F /* French: before ! ? ; : */

typedef struct loc {
    size_t a, e; /* where the span is in the translation */
    int found;
    int conveyed; /* not found, but the engine kept its meaning (a number) */
} loc;

typedef struct rendered {
    uint32_t first, last; /* first/last character of the text (0 if empty) */
    int changed;          /* the translation differs from the engine text */
} rendered;

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static void put_sentinel(fy_buf *b, size_t k)
{
    char o[SENTINEL_BYTES] = {(char)0xFF, (char)(0x80 | ((k >> 12) & 0x3F)),
                              (char)(0x80 | ((k >> 6) & 0x3F)), (char)(0x80 | (k & 0x3F))};
    fy_buf_put(b, o, sizeof o);
}

/* Is there the sentinel of span *k (< np) at t[p]? */
static int sentinel_at(const char *t, size_t l, size_t p, size_t np, size_t *k)
{
    if (p + SENTINEL_BYTES > l || (unsigned char)t[p] != 0xFF) return 0;
    size_t v = ((size_t)(t[p + 1] & 0x3F) << 12) | ((size_t)(t[p + 2] & 0x3F) << 6) |
               (size_t)(t[p + 3] & 0x3F);
    if (v >= np) return 0;
    *k = v;
    return 1;
}

static int overlaps(const loc *L, size_t n, size_t a, size_t e)
{
    for (size_t k = 0; k < n; k++)
        if (L[k].found && a < L[k].e && L[k].a < e) return 1;
    return 0;
}

static int is_alnum(int c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

/* A match must not start or end inside a word ("AI" is not in "said"). */
static int whole(const char *t, size_t tl, size_t a, size_t e, const char *nd, size_t nl)
{
    if (is_alnum((unsigned char)nd[0]) && a > 0 && is_alnum((unsigned char)t[a - 1])) return 0;
    if (is_alnum((unsigned char)nd[nl - 1]) && e < tl && is_alnum((unsigned char)t[e])) return 0;
    return 1;
}

static int find_exact(const char *t, size_t tl, const char *nd, size_t nl, size_t from,
                      const loc *L, size_t nL, size_t *at)
{
    for (size_t p = from; p + nl <= tl;) {
        const char *h = memmem(t + p, tl - p, nd, nl);
        if (!h) return 0;
        p = (size_t)(h - t);
        if (!overlaps(L, nL, p, p + nl) && whole(t, tl, p, p + nl, nd, nl)) {
            *at = p;
            return 1;
        }
        p++;
    }
    return 0;
}

/* The needle with white space and ASCII case ignored ("https: //X.com"). */
static int find_fuzzy(const char *t, size_t tl, const char *nd, size_t nl, const loc *L, size_t nL,
                      size_t *a, size_t *e)
{
    for (size_t p = 0; p < tl; p++) {
        if (t[p] == ' ' || ((unsigned char)t[p] & 0xC0) == 0x80) continue;
        size_t q = p, k = 0;
        while (k < nl) {
            if (nd[k] == ' ') {
                k++;
                continue;
            }
            while (q < tl && t[q] == ' ') q++;
            if (q >= tl || lower((unsigned char)t[q]) != lower((unsigned char)nd[k])) break;
            q++, k++;
        }
        /* q > p: a needle of only spaces matches zero bytes, which would be
         * picked again forever. */
        if (k == nl && q > p && !overlaps(L, nL, p, q) && whole(t, tl, p, q, nd, nl)) {
            *a = p, *e = q;
            return 1;
        }
    }
    return 0;
}

/* Finds nd in t: verbatim after the previous span, verbatim anywhere, then
 * ignoring spacing and case. */
static int find(const char *t, size_t tl, const char *nd, size_t nl, size_t cursor, const loc *L,
                size_t nL, size_t *a, size_t *e)
{
    if (!nl) return 0;
    if (find_exact(t, tl, nd, nl, cursor, L, nL, a) || find_exact(t, tl, nd, nl, 0, L, nL, a)) {
        *e = *a + nl;
        return 1;
    }
    return find_fuzzy(t, tl, nd, nl, L, nL, a, e);
}

/* The digits of a number-with-unit span ("3.5" of "3.5GHz", "19.99" of
 * "$19.99"). */
static void number_part(const char *nd, size_t nl, size_t *a, size_t *n)
{
    size_t i = 0;
    while (i < nl && !(nd[i] >= '0' && nd[i] <= '9')) i++;
    size_t j = i;
    while (j < nl && ((nd[j] >= '0' && nd[j] <= '9') || nd[j] == '.' || nd[j] == ',')) j++;
    *a = i, *n = j - i;
}

static void locate_spans(const char *t, size_t tl, const sent *s, const pspan *P, size_t np, loc *L)
{
    size_t cursor = 0, a, e;
    for (size_t k = 0; k < np; k++) {
        const char *nd = s->text + P[k].pos;
        size_t nl = P[k].len;
        if (find(t, tl, nd, nl, cursor, L, k, &a, &e)) {
            L[k] = (loc){a, e, 1, 0};
        } else if (P[k].kind == FY_SPAN_CODE && nl > 2 &&
                   find(t, tl, nd + 1, nl - 2, cursor, L, k, &a, &e)) {
            L[k] = (loc){a, e, 1, 0}; /* the engine dropped the backticks */
        } else if (P[k].kind == FY_SPAN_NUMUNIT) {
            /* "50%" -> "50 percent": the number is there, the engine chose
             * the words for the unit; adding "50%" again would repeat it. */
            size_t na, nn;
            number_part(nd, nl, &na, &nn);
            L[k].conveyed = find(t, tl, nd + na, nn, 0, L, k, &a, &e);
        }
        if (L[k].found) cursor = L[k].e;
    }
}

/* Copies t[a..e) with invalid bytes as U+FFFD (so no sentinel remains). */
static void put_clean(fy_buf *b, const char *t, size_t a, size_t e)
{
    while (a < e) {
        size_t n;
        uint32_t cp = fy_utf8_get(t, e, a, &n);
        if (cp == 0xFFFD && n == 1)
            fy_buf_putcp(b, 0xFFFD);
        else
            fy_buf_put(b, t + a, n);
        a += n;
    }
}

/* Final punctuation and closing quotes beyond ASCII: 。！？…”’）」』, the
 * other scripts' terminators (। ॥ ؟ ۔ ։ ። ။ ។ ៕), » and “ (German's
 * closing mark). */
static int final_mark(uint32_t cp)
{
    return cp == 0x3002 || cp == 0xFF01 || cp == 0xFF1F || cp == 0x2026 || cp == 0x201D ||
           cp == 0x2019 || cp == 0xFF09 || cp == 0x300D || cp == 0x300F || cp == 0x0964 ||
           cp == 0x0965 || cp == 0x061F || cp == 0x06D4 || cp == 0x0589 || cp == 0x1362 ||
           cp == 0x104B || cp == 0x17D4 || cp == 0x17D5 || cp == 0xBB || cp == 0x201C ||
           cp == NNBSP;
}

/* Where missing spans go: before the final punctuation and closing quotes. */
static size_t insert_point(const char *t, size_t tl)
{
    size_t p = tl, n;
    while (p > 0) {
        if (t[p - 1] && strchr(".!?\"')", t[p - 1])) {
            p--;
            continue;
        }
        size_t b = fy_utf8_back(t, p);
        if (!final_mark(fy_utf8_get(t, p, b, &n)) || b + n != p) break;
        p = b;
    }
    while (p > 0 && t[p - 1] == ' ') p--;
    return p;
}

static void put_missing(fy_buf *b, const pspan *P, const loc *L, size_t np)
{
    for (size_t k = 0; k < np; k++) {
        if (L[k].found || L[k].conveyed || !P[k].strict) continue;
        if (b->n && b->p[b->n - 1] != ' ') fy_buf_putc(b, ' ');
        put_sentinel(b, k);
    }
}

/* t with each located span replaced by its sentinel, missing strict spans
 * added at the insertion point. */
static void build_marked(const char *t, size_t tl, const pspan *P, const loc *L, size_t np,
                         int exact, fy_buf *b)
{
    size_t ip = exact ? tl + 1 : insert_point(t, tl), c = 0;
    int missing_done = exact;
    for (;;) {
        size_t next = tl, kn = np;
        for (size_t k = 0; k < np; k++)
            if (L[k].found && L[k].a >= c && L[k].a < next) next = L[k].a, kn = k;
        if (!missing_done && ip >= c && ip <= next) {
            put_clean(b, t, c, ip);
            put_missing(b, P, L, np);
            c = ip;
            missing_done = 1;
        }
        put_clean(b, t, c, next);
        if (kn == np) break;
        put_sentinel(b, kn);
        c = L[kn].e;
    }
}

/* Engine-text offset -> offset in the text with every span a sentinel. */
static size_t map_pos(size_t pos, const pspan *P, size_t np)
{
    size_t q = pos;
    for (size_t k = 0; k < np; k++)
        if (P[k].pos + P[k].len <= pos) q = q + SENTINEL_BYTES - P[k].len;
    return q;
}

/* Punctuation that closes what comes before it: nothing goes in front of
 * it (，。、；：！？）」』》】”…). */
static int closing_punct(uint32_t cp)
{
    return cp == 0xFF0C || cp == 0x3002 || cp == 0x3001 || cp == 0xFF1B || cp == 0xFF1A ||
           cp == 0xFF01 || cp == 0xFF1F || cp == 0xFF09 || cp == 0x300D || cp == 0x300F ||
           cp == 0x300B || cp == 0x3011 || cp == 0x201D || cp == 0x2026;
}

/* Is q a word boundary of t? chars (FY_TAGS_CHARS): a character of a
 * script without spaces is a word of its own, with its combining marks,
 * but closing punctuation stays with the word before it. */
static int boundary(const char *t, size_t l, size_t q, int chars)
{
    if (q == 0 || q >= l) return 1;
    if (((unsigned char)t[q] & 0xC0) == 0x80) return 0;
    if (t[q] == ' ' || t[q - 1] == ' ') return 1;
    if (!chars) return 0;
    size_t n;
    uint32_t after = fy_utf8_get(t, l, q, &n);
    uint32_t before = fy_utf8_get(t, l, fy_utf8_back(t, q), &n);
    if (closing_punct(after) || fy_cp_is_mark(after) || fy_cp_joins_next(before)) return 0;
    return fy_cp_is_cjk(after) || fy_cp_is_cjk(before) || fy_cp_is_unspaced(after) ||
           fy_cp_is_unspaced(before);
}

/* Nearest word boundary to q; opening tags move to the word after it,
 * closing tags to the word before. */
static size_t snap(const char *t, size_t l, size_t q, int kind, int chars)
{
    if (q > l) q = l;
    for (size_t d = 0; d <= l; d++) {
        if (q >= d && boundary(t, l, q - d, chars)) {
            q -= d;
            break;
        }
        if (q + d <= l && boundary(t, l, q + d, chars)) {
            q += d;
            break;
        }
    }
    if (kind == FY_EV_OPEN && q < l && t[q] == ' ') q++;
    if (kind == FY_EV_CLOSE && q > 0 && t[q - 1] == ' ') q--;
    return q;
}

/* The free space nearest q at or after lo, or l if none. */
static size_t nearest_space(const char *t, size_t l, size_t q, size_t lo)
{
    size_t best = l;
    for (size_t j = lo; j < l; j++)
        if (t[j] == ' ' &&
            (best == l || (j > q ? j - q : q - j) < (best > q ? best - q : q - best)))
            best = j;
    return best;
}

/* What emit does with an anchor. */
enum { A_PUT, A_REPLACE /* the space at its position */, A_DROP };

/* Is the white-space anchor a layout the translation must keep (a line
 * break, or markup or a placeholder between the words)? Other runs (double
 * spaces, tabs, U+3000) belong to the source language: the translation's
 * own spaces win. */
static int ws_matters(const fy_doc *d, const anchor *a)
{
    if (a->markup) return 1;
    for (size_t k = 0; k < a->len; k++) {
        char c = d->src[a->src + k];
        if (c == '\n' || c == '\r') return 1;
    }
    return 0;
}

static void place_anchors(const fy_doc *d, const sent *s, const pspan *P, size_t np, const char *t,
                          size_t l, int exact, const size_t *spos, size_t *pos, char *consume)
{
    const anchor *A = (s->na ? d->an + s->a0 : NULL);
    size_t eng = map_pos(s->len + 1, P, np) - 1, prev = 0;
    int chars = d->tgt_rules->tags == FY_TAGS_CHARS;
    for (size_t i = 0; i < s->na; i++) {
        size_t q = map_pos(A[i].pos, P, np), found = 0;
        consume[i] = A[i].kind == A_WS ? A_REPLACE : A_PUT;
        if (!exact && A[i].kind == A_WS && !ws_matters(d, &A[i])) {
            consume[i] = A_DROP;
            pos[i] = prev;
            continue;
        }
        if (!exact) {
            for (size_t k = 0; k < np && !found && A[i].kind != A_WS; k++) {
                if (spos[k] == (size_t)-1) continue;
                if (A[i].pos == P[k].pos && A[i].kind != FY_EV_CLOSE)
                    q = spos[k], found = 1;
                else if (A[i].pos == P[k].pos + P[k].len && A[i].kind == FY_EV_CLOSE)
                    q = spos[k] + SENTINEL_BYTES, found = 1;
            }
            if (!found) q = eng ? (size_t)((double)q * (double)l / (double)eng + 0.5) : 0;
            if (A[i].kind == A_WS) {
                size_t j = nearest_space(t, l, q, prev);
                consume[i] = j < l ? A_REPLACE : A_PUT;
                q = j < l ? j : snap(t, l, q, FY_EV_OTHER, chars);
            } else if (!found) {
                q = snap(t, l, q, A[i].kind, chars);
            }
        }
        if (q < prev) q = prev;
        pos[i] = prev = q;
        if (consume[i] == A_REPLACE) prev = q + 1; /* the next anchor may not take it */
    }
}

static void put_escaped(fy_buf *b, const fy_doc *d, const sent *s, const char *t, size_t p,
                        size_t n, uint32_t cp)
{
    if (!d->html) {
        fy_buf_put(b, t + p, n);
        return;
    }
    for (size_t k = 0; k < s->ne; k++) {
        const ent *e = &d->en[s->e0 + k];
        if (e->cp == cp) {
            fy_buf_put(b, d->src + e->src, e->len);
            return;
        }
    }
    if (cp == '&')
        fy_buf_put(b, "&amp;", 5);
    else if (cp == '<')
        fy_buf_put(b, "&lt;", 4);
    else if (cp == '>')
        fy_buf_put(b, "&gt;", 4);
    else
        fy_buf_put(b, t + p, n);
}

/* What a span writes: its source bytes, or a glossary term's output
 * (escaped in HTML, where it is text). */
static void put_span(fy_buf *b, const fy_doc *d, const pspan *p)
{
    if (!p->rep) {
        fy_buf_put(b, d->src + p->src, p->srclen);
        return;
    }
    const char *r = d->rep.p + p->repat;
    for (size_t i = 0; i < p->len; i++) {
        const char *e = !d->html      ? NULL
                        : r[i] == '&' ? "&amp;"
                        : r[i] == '<' ? "&lt;"
                        : r[i] == '>' ? "&gt;"
                                      : NULL;
        if (e)
            fy_buf_put(b, e, strlen(e));
        else
            fy_buf_putc(b, r[i]);
    }
}

static void emit(fy_buf *b, const fy_doc *d, const sent *s, const char *t, size_t l,
                 const size_t *pos, const char *consume)
{
    const anchor *A = (s->na ? d->an + s->a0 : NULL);
    const pspan *P = (s->np ? d->sp + s->p0 : NULL);
    size_t ai = 0;
    for (size_t p = 0;;) {
        int skip = 0;
        for (; ai < s->na && pos[ai] <= p; ai++) {
            if (consume[ai] != A_DROP) fy_buf_put(b, d->src + A[ai].src, A[ai].len);
            skip |= consume[ai] == A_REPLACE && pos[ai] == p;
        }
        if (p >= l) break;
        size_t n, k;
        if (skip && t[p] == ' ') {
            p++;
            continue;
        }
        if (sentinel_at(t, l, p, s->np, &k)) {
            put_span(b, d, &P[k]);
            p += SENTINEL_BYTES;
            continue;
        }
        uint32_t cp = fy_utf8_get(t, l, p, &n);
        if (cp == 0xFFFD && n == 1)
            fy_buf_putcp(b, 0xFFFD);
        else
            put_escaped(b, d, s, t, p, n, cp);
        p += n;
    }
    for (; ai < s->na; ai++)
        if (consume[ai] != A_DROP) fy_buf_put(b, d->src + A[ai].src, A[ai].len);
}

static void first_last(const char *t, size_t l, size_t np, rendered *r)
{
    size_t n, k;
    r->first = r->last = 0;
    if (!l) return;
    r->first = sentinel_at(t, l, 0, np, &k) ? 'a' : fy_utf8_get(t, l, 0, &n);
    if (l >= SENTINEL_BYTES && sentinel_at(t, l, l - SENTINEL_BYTES, np, &k))
        r->last = 'a'; /* a span counts as a Latin word */
    else
        r->last = fy_utf8_get(t, l, fy_utf8_back(t, l), &n);
}

/* The direction of a character for the first-strong rule: 1 right to
 * left, -1 left to right (a letter of another script, a span marker), 0
 * neutral (digits, punctuation, white space). */
static int strong(uint32_t cp)
{
    const char *sc = fy_cp_script(cp);
    if (cp == 0xFFFD) return -1;
    if (!sc) return 0;
    return !strcmp(sc, "Arab") || !strcmp(sc, "Hebr") || !strcmp(sc, "Syrc") ||
                   !strcmp(sc, "Thaa") || !strcmp(sc, "Nkoo")
               ? 1
               : -1;
}

/* A right-to-left paragraph that starts with left-to-right text ("iPhone
 * ..." in Arabic) is shown left to right by every display that takes the
 * direction from the first strong character: U+200F (RLM) in front of
 * it keeps it right to left. Takes txt; NULL when out of memory. */
static char *rtl_mark(char *txt)
{
    size_t l = strlen(txt), n;
    int first = 0, any_rtl = 0;
    for (size_t i = 0; i < l; i += n) {
        int d = strong(fy_utf8_get(txt, l, i, &n));
        if (!first) first = d;
        any_rtl |= d == 1;
    }
    if (first != -1 || !any_rtl) return txt;
    char *out = malloc(l + 4);
    if (out) memcpy(out, "\xe2\x80\x8f", 3), memcpy(out + 3, txt, l + 1);
    free(txt);
    return out;
}

/* Renders sentence s from translation t (NULL: the engine text) into b. */
static int render(fy_buf *b, const fy_doc *d, const sent *s, const char *t, int flags, rendered *r)
{
    const pspan *P = (s->np ? d->sp + s->p0 : NULL);
    size_t np = s->np, tl = t ? strlen(t) : 0;
    int exact = !t || (tl == s->len && memcmp(t, s->text, tl) == 0);
    if (d->raw) flags |= FY_JOIN_RAW; /* lead + translation + trail, nothing else */
    if (exact) t = s->text, tl = s->len;
    if (s->fixed) exact = 0; /* glossary terms: a translation, cleaned up for the target */
    loc *L = calloc(np + 1, sizeof *L);
    size_t *spos = malloc((np + 1) * sizeof *spos);
    size_t *pos = malloc((s->na + 1) * sizeof *pos);
    char *consume = malloc(s->na + 1);
    fy_buf mk = {0};
    char *txt = NULL;
    int rc = FY_ENOMEM;
    if (!L || !spos || !pos || !consume) goto done;
    if (exact && d->html && !s->terms) {
        /* An untranslated HTML sentence comes back exactly as written: its
         * entities, bare characters and inline tags as in the source. */
        fy_buf_put(b, d->src + s->src, s->srclen);
        first_last(t, tl, 0, r);
        r->changed = 0;
        rc = b->oom ? FY_ENOMEM : 0;
        goto done;
    }
    if (exact)
        for (size_t k = 0; k < np; k++) L[k] = (loc){P[k].pos, P[k].pos + P[k].len, 1, 0};
    else
        locate_spans(t, tl, s, P, np, L);
    build_marked(t, tl, P, L, np, exact, &mk);
    size_t l;
    if (!exact && !(flags & FY_JOIN_RAW)) {
        txt = mk.oom ? NULL : fy_cleanup_for(d->tgt_rules, mk.p ? mk.p : "", mk.n);
        if (txt && s->para && (d->tgt_rules->flags & FY_LR_RTL_MARK)) txt = rtl_mark(txt);
        l = txt ? strlen(txt) : 0;
    } else {
        txt = fy_buf_take(&mk, &l);
    }
    if (!txt) goto done;
    for (size_t k = 0; k < np; k++) spos[k] = (size_t)-1;
    for (size_t p = 0, k; p < l; p++)
        if (sentinel_at(txt, l, p, np, &k)) spos[k] = p, p += SENTINEL_BYTES - 1;
    place_anchors(d, s, P, np, txt, l, exact, spos, pos, consume);
    size_t at = b->n;
    emit(b, d, s, txt, l, pos, consume);
    first_last(txt, l, np, r);
    if (!r->last && b->n > at && !b->oom) {
        /* No text, but its anchors (a line break): the join's spacing looks
         * at what is written, as fy_doc_join_before does. */
        size_t n;
        r->first = fy_utf8_get(b->p + at, b->n - at, 0, &n);
        r->last = fy_utf8_get(b->p, b->n, fy_utf8_back(b->p, b->n), &n);
    }
    r->changed = !exact;
    rc = b->oom ? FY_ENOMEM : 0;
done:
    free(L);
    free(spos);
    free(pos);
    free(consume);
    free(txt);
    fy_buf_free(&mk);
    return rc;
}

static int no_space_before(uint32_t c)
{
    return c < 0x80 && strchr(",.!?;:)]}%", (int)c);
}

static int needs_space(uint32_t a, uint32_t b)
{
    return a && b && !fy_cp_is_space(a) && !fy_cp_is_cjk(a) && !fy_cp_is_space(b) &&
           !fy_cp_is_cjk(b) && !no_space_before(b) && !(a < 0x80 && strchr("([{", (int)a));
}

/* A letter or digit of a script with spaces between words: two of them
 * must not be run together. */
static int word_char(uint32_t c)
{
    return c && !fy_cp_is_cjk(c) && ((c >= '0' && c <= '9') || fy_cp_is_letter(c));
}

/* For a target without spaces between sentences (its row's spacing: zh,
 * ja): are the spaces of the literal between the previous
 * piece and p (rendered as r) to be dropped? Only between two translated
 * sentences, and not where Latin words would run together. */
static int unspaced_gap(const fy_doc *d, int flags, const piece *prev, int prev_changed,
                        uint32_t prev_last, const piece *p, const rendered *r)
{
    return d->tgt_rules->spacing == FY_SPACING_NONE && !(flags & FY_JOIN_RAW) && prev &&
           prev->kind == P_SENT && prev_changed && p->kind == P_SENT && r->changed &&
           !(word_char(prev_last) && word_char(r->first));
}

static int horizontal(char c)
{
    return c == ' ' || c == '\t';
}

int fy_join_gap(uint32_t last, const char *gap, size_t len, uint32_t first, const char *target)
{
    char tag[FY_LANG_MAX];
    if (fy_lang_normalize(target, tag) != 0) tag[0] = '\0';
    int none = fy_lang_rules_of(tag)->spacing == FY_SPACING_NONE;
    if (!len) return !none && needs_space(last, first) ? FY_GAP_SPACE : FY_GAP_KEEP;
    for (size_t i = 0; i < len; i++)
        if (!horizontal(gap[i])) return FY_GAP_KEEP; /* a line break is layout */
    return none && !(word_char(last) && word_char(first)) ? FY_GAP_DROP : FY_GAP_KEEP;
}

/* Writes literal piece p; drop: without the spaces and tabs at its ends
 * (plain text: only if it is nothing else), unless it holds a line break. */
static void put_literal(fy_buf *out, const fy_doc *d, const piece *p, int drop)
{
    const char *s = d->src + p->src;
    size_t a = 0, e = p->len;
    if (drop && !memchr(s, '\n', e) && !memchr(s, '\r', e)) {
        while (a < e && horizontal(s[a])) a++;
        while (e > a && horizontal(s[e - 1])) e--;
        if (!d->html && a < e) a = 0, e = p->len; /* not only spaces and tabs: keep it */
    }
    fy_buf_put(out, s + a, e - a);
}

/* Where a join stands: what it knows of the piece written last, and the
 * literal that waits for the piece after it (its spacing depends on both). */
typedef struct joiner {
    const fy_doc *d;
    int flags;
    uint32_t prev_last;
    int prev_changed;
    const piece *prev, *pending;
} joiner;

/* Writes what goes before piece p (rendered as r): the waiting literal,
 * and a space where two Latin-script pieces touch. */
static void join_lead(fy_buf *out, joiner *j, const piece *p, const rendered *r)
{
    const fy_doc *d = j->d;
    if (j->pending)
        put_literal(out, d, j->pending,
                    unspaced_gap(d, j->flags, j->prev, j->prev_changed, j->prev_last, p, r));
    j->pending = NULL;
    if (d->tgt_rules->spacing == FY_SPACING_SPACE && !(j->flags & FY_JOIN_RAW) && p->touch &&
        !p->glue && (r->changed || j->prev_changed) && needs_space(j->prev_last, r->first))
        fy_buf_putc(out, ' ');
}

/* Piece p (rendered as r) is written. */
static void join_past(joiner *j, const piece *p, const rendered *r)
{
    if (r->last) j->prev_last = r->last;
    j->prev_changed = r->changed;
    j->prev = p;
}

/* A literal piece: written once the piece after it is known. */
static void join_literal(fy_buf *out, joiner *j, const piece *p)
{
    if (j->pending) put_literal(out, j->d, j->pending, 0);
    j->pending = p;
}

static void join_verbatim(fy_buf *out, joiner *j, const piece *p)
{
    rendered r = {p->first, p->last, 0};
    join_lead(out, j, p, &r);
    fy_buf_put(out, j->d->src + p->src, p->len);
    join_past(j, p, &r);
}

char *fy_doc_join_ex(const fy_doc *d, const char *const *tr, int flags, size_t *out_len,
                     size_t *out_spans, fy_error *err)
{
    fy_buf out = {0}, tmp = {0};
    joiner j = {d, flags, 0, 0, NULL, NULL};
    if (!d) {
        fy_err(err, FY_EINVAL, "no document to join");
        return NULL;
    }
    for (size_t i = 0; i < d->npc; i++) {
        const piece *p = &d->pc[i];
        if (p->kind == P_LIT) {
            join_literal(&out, &j, p);
            continue;
        }
        if (p->kind == P_VERB) {
            join_verbatim(&out, &j, p);
            continue;
        }
        rendered r = {p->first, p->last, 0};
        tmp.n = 0;
        if (render(&tmp, d, &d->st[p->sent], tr ? tr[p->sent] : NULL, flags, &r)) {
            out.oom = 1;
            break;
        }
        join_lead(&out, &j, p, &r);
        if (out_spans) {
            out_spans[2 * p->sent] = out.n;
            out_spans[2 * p->sent + 1] = tmp.n;
        }
        fy_buf_put(&out, tmp.p ? tmp.p : "", tmp.n);
        join_past(&j, p, &r);
    }
    if (j.pending) put_literal(&out, d, j.pending, 0);
    fy_buf_free(&tmp);
    char *s = fy_buf_take(&out, out_len);
    if (!s) fy_err(err, FY_ENOMEM, "out of memory joining %zu sentences", d->nst);
    return s;
}

/* The index of sentence k's piece; d->npc for k = d->nst. */
static size_t piece_of(const fy_doc *d, size_t k)
{
    size_t i = 0;
    while (i < d->npc && !(d->pc[i].kind == P_SENT && d->pc[i].sent == k)) i++;
    return i;
}

char *fy_doc_join_before(const fy_doc *d, size_t k, const char *prev, const char *tr, size_t *len,
                         fy_error *err)
{
    if (!d || k > d->nst) {
        fy_err(err, FY_EINVAL, "sentence %zu out of range (%zu sentences)", k, d ? d->nst : 0);
        return NULL;
    }
    fy_buf out = {0}, tmp = {0};
    joiner j = {d, 0, 0, 0, NULL, NULL};
    size_t from = 0, to = piece_of(d, k);
    rendered r = {0, 0, 0};
    int rc = 0;
    if (k > 0) {
        from = piece_of(d, k - 1);
        rc = render(&tmp, d, &d->st[k - 1], prev, 0, &r);
        join_past(&j, &d->pc[from], &r);
        from++;
    }
    for (size_t i = from; !rc && i < to; i++) {
        if (d->pc[i].kind == P_LIT)
            join_literal(&out, &j, &d->pc[i]);
        else
            join_verbatim(&out, &j, &d->pc[i]);
    }
    if (!rc && k < d->nst) {
        tmp.n = 0;
        rc = render(&tmp, d, &d->st[k], tr, 0, &r);
        if (!rc) join_lead(&out, &j, &d->pc[to], &r);
    } else if (!rc && j.pending) {
        put_literal(&out, d, j.pending, 0);
    }
    fy_buf_free(&tmp);
    if (rc) out.oom = 1;
    char *s = fy_buf_take(&out, len);
    if (!s) fy_err(err, FY_ENOMEM, "out of memory joining sentence %zu", k);
    return s;
}

char *fy_doc_join(const fy_doc *d, const char *const *translations, fy_error *err)
{
    return fy_doc_join_ex(d, translations, 0, NULL, NULL, err);
}

char *fy_doc_render_sentence(const fy_doc *d, size_t i, const char *translation, size_t *len,
                             fy_error *err)
{
    if (!d || i >= d->nst) {
        fy_err(err, FY_EINVAL, "sentence %zu out of range (%zu sentences)", i, d ? d->nst : 0);
        return NULL;
    }
    fy_buf b = {0};
    rendered r;
    if (render(&b, d, &d->st[i], translation, 0, &r)) {
        fy_buf_free(&b);
        fy_err(err, FY_ENOMEM, "out of memory rendering sentence %zu", i);
        return NULL;
    }
    char *s = fy_buf_take(&b, len);
    if (!s) fy_err(err, FY_ENOMEM, "out of memory rendering sentence %zu", i);
    return s;
}
