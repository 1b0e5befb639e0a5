/* segment.c - documents: split into engine sentences, join translations.
 *
 * A fy_doc is the input cut into pieces that cover it exactly once, in
 * order: literal bytes (white space, markup, untouched elements), verbatim
 * text (segments with nothing to translate for the source language: no Han
 * for Chinese, no letter for English...) and sentences for the engine. Joining
 * copies the literal and verbatim pieces and renders each sentence from
 * its translation, so with identity translations the input comes back byte
 * for byte, and no translation can lose a byte of the markup around it.
 *
 * Inside a sentence the engine sees one line of plain text. What it does
 * not see is kept as anchors at byte offsets of that text: inline tags,
 * comments and white space other than one ' ' (newlines and indentation in
 * HTML, double spaces, tabs). Protected spans are kept with their engine
 * offsets and the source bytes that replace them in the output.
 *
 * The source language decides what is text to translate (wanted) and
 * whether Latin identifiers are protected (only where Latin is not the
 * source's own script); raw mode skips all of it: one sentence, as given.
 */
#include "text/doc_internal.h"
#include "text/glossary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fy_split_options_default(fy_split_options *o)
{
    memset(o, 0, sizeof *o);
    o->max_tokens = 128;
}

/* ---- languages ---------------------------------------------------------------- */

/* Is cp text to translate for a source whose text is cls (FY_SRC_*)? */
static int wanted(uint32_t cp, int cls)
{
    if (cls == FY_SRC_HAN) return fy_cp_is_han(cp);
    if (cls == FY_SRC_JA) return fy_cp_is_han(cp) || fy_cp_is_kana(cp);
    if (cls == FY_SRC_KO) return fy_cp_is_hangul(cp);
    if (cp < 0x80) return ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z');
    /* For an alphabetic source, Han, kana and Hangul are another language. */
    const char *sc = fy_cp_script(cp);
    return sc && strcmp(sc, "Hani") && strcmp(sc, "Kana") && strcmp(sc, "Hang") &&
           strcmp(sc, "Bopo");
}

/* Normalises one language option into out (def when unset). */
static int option_lang(const char *which, const char *tag, const char *def, char out[FY_LANG_MAX],
                       fy_error *err)
{
    if (!tag || !*tag) {
        snprintf(out, FY_LANG_MAX, "%s", def);
        return 0;
    }
    int rc = fy_lang_normalize(tag, out);
    if (rc == 0) return 0;
    return fy_err(err, FY_EINVAL, "unknown %s language '%.32s'%s", which, tag,
                  rc == 1 ? " (detect the language before splitting)" : "");
}

/* Reads the language and mode options into d. 0 or FY_EINVAL. */
static int doc_options(fy_doc *d, const fy_split_options *o, fy_error *err)
{
    if (option_lang("source", o->source, "zh", d->source, err) ||
        option_lang("target", o->target, "en", d->target, err))
        return FY_EINVAL;
    if (o->raw && o->html) return fy_err(err, FY_EINVAL, "raw mode is plain text: html must be 0");
    d->html = o->html;
    d->raw = o->raw;
    d->src_rules = fy_lang_rules_of(d->source);
    d->tgt_rules = fy_lang_rules_of(d->target);
    return 0;
}

/* ---- building a doc -------------------------------------------------------- */

static int add_piece(fy_doc *d, piece p)
{
    if (fy_vec_reserve((void **)&d->pc, &d->cap_pc, d->npc + 1, sizeof *d->pc)) return FY_ENOMEM;
    d->pc[d->npc++] = p;
    return 0;
}

static int add_anchor(fy_doc *d, size_t pos, size_t src, size_t len, int kind)
{
    if (fy_vec_reserve((void **)&d->an, &d->cap_an, d->nan + 1, sizeof *d->an)) return FY_ENOMEM;
    d->an[d->nan++] = (anchor){pos, src, len, kind, 0};
    return 0;
}

static int add_pspan(fy_doc *d, pspan p)
{
    if (fy_vec_reserve((void **)&d->sp, &d->cap_sp, d->nsp + 1, sizeof *d->sp)) return FY_ENOMEM;
    d->sp[d->nsp++] = p;
    return 0;
}

/* Remembers how the source wrote cp, first occurrence in the sentence wins. */
static int add_ent(fy_doc *d, size_t e0, uint32_t cp, size_t src, size_t len)
{
    for (size_t k = e0; k < d->nen; k++)
        if (d->en[k].cp == cp) return 0;
    if (fy_vec_reserve((void **)&d->en, &d->cap_en, d->nen + 1, sizeof *d->en)) return FY_ENOMEM;
    d->en[d->nen++] = (ent){cp, src, len};
    return 0;
}

/* The split state shared by the builders below. */
typedef struct splitter {
    fy_doc *d;
    const fy_flat *f;
    const fy_spans *spans;
    const fy_glossary *gl; /* the glossary of the FY_SPAN_TERM spans */
    size_t ev;             /* next event to look at */
    size_t span;           /* next span to look at */
} splitter;

static const fy_span *span_starting(splitter *s, size_t i, size_t fb)
{
    while (s->span < s->spans->n && s->spans->v[s->span].start < i) s->span++;
    const fy_span *sp = s->span < s->spans->n ? &s->spans->v[s->span] : NULL;
    return sp && sp->start == i && sp->start + sp->len <= fb ? sp : NULL;
}

/* The object event at flat[i] (events are sorted by pos). */
static const fy_event *object_at(const fy_flat *f, size_t i)
{
    size_t lo = 0, hi = f->nev;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->ev[mid].pos < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < f->nev && f->ev[lo].pos == i; lo++)
        if (f->ev[lo].kind == FY_EV_OBJECT) return &f->ev[lo];
    return NULL;
}

/* A run of white space at flat[i..j): one ' ' for the engine, plus an
 * anchor with the source bytes unless they were exactly one space. The
 * inline tags inside the run travel with it. */
static int build_space(splitter *s, fy_buf *b, size_t i, size_t j)
{
    const fy_flat *f = s->f;
    size_t a = fy_flat_src0(f, i), e = fy_flat_src1(f, j - 1), ev = s->ev;
    while (s->ev < f->nev && f->ev[s->ev].pos < j) s->ev++;
    fy_buf_putc(b, ' ');
    if (e - a == 1 && s->d->src[a] == ' ') return 0;
    if (add_anchor(s->d, b->n - 1, a, e - a, A_WS)) return FY_ENOMEM;
    s->d->an[s->d->nan - 1].markup = s->ev > ev;
    return 0;
}

/* An untouched inline element (<code>, translate="no"): its text goes to
 * the engine as a strict span, the element itself to the output. */
static int build_object(splitter *s, fy_buf *b, const fy_event *ob)
{
    size_t at = b->n;
    fy_html_text(s->d->src + ob->src, ob->len, b);
    if (b->n == at) return add_anchor(s->d, at, ob->src, ob->len, FY_EV_OTHER);
    return add_pspan(s->d, (pspan){at, b->n - at, ob->src, ob->len, 1, 0, 0, 0});
}

static int build_char(splitter *s, fy_buf *b, sent *st, size_t i, size_t n)
{
    const fy_flat *f = s->f;
    fy_doc *d = s->d;
    fy_buf_put(b, f->text + i, n);
    if (!d->html) return 0;
    size_t a = fy_flat_src0(f, i), e = fy_flat_src1(f, i);
    size_t m;
    uint32_t cp = fy_utf8_get(f->text, f->len, i, &m);
    /* A bare '<', '>' or '&' in the source is not remembered as the way to
     * write it: join always escapes those, so text never turns into markup. */
    if (e - a != n || memcmp(d->src + a, f->text + i, n) != 0)
        return add_ent(d, st->e0, cp, a, e - a);
    return 0;
}

/* Is flat[i] the first text of its line or block (only spaces and tabs
 * before it since a line break or the start)? */
static int line_start(const fy_flat *f, size_t i)
{
    while (i > 0 && (f->text[i - 1] == ' ' || f->text[i - 1] == '\t')) i--;
    return i == 0 || f->text[i - 1] == '\n' || f->text[i - 1] == '\r';
}

/* A glossary term: its output (the entry's target in the occurrence's
 * case) is both the engine text and what the join writes. Inline tags
 * inside the occurrence come after it (their anchors are at its end). */
static int build_term(splitter *s, fy_buf *b, const fy_span *sp)
{
    fy_doc *d = s->d;
    const fy_flat *f = s->f;
    size_t at = d->rep.n;
    fy_glossary_render(s->gl, sp->term, f->text + sp->start, sp->len, &d->rep);
    if (d->rep.oom) return FY_ENOMEM;
    size_t n = d->rep.n - at, e = sp->start + sp->len;
    pspan p = {b->n,
               n,
               fy_flat_src0(f, sp->start),
               fy_flat_src1(f, e - 1) - fy_flat_src0(f, sp->start),
               1,
               FY_SPAN_TERM,
               1,
               at};
    fy_buf_put(b, d->rep.p + at, n);
    return add_pspan(d, p);
}

static int build_sentence(splitter *s, size_t fa, size_t fb, int fixed)
{
    fy_doc *d = s->d;
    const fy_flat *f = s->f;
    sent st = {0};
    st.src = fy_flat_src0(f, fa);
    st.srclen = fy_flat_src1(f, fb - 1) - st.src;
    st.a0 = d->nan, st.p0 = d->nsp, st.e0 = d->nen;
    st.para = line_start(f, fa);
    st.fixed = fixed;
    fy_buf b = {0};
    int rc = 0;
    while (s->ev < f->nev && f->ev[s->ev].pos <= fa) s->ev++;
    size_t i = fa;
    while (i < fb && !rc) {
        for (; s->ev < f->nev && f->ev[s->ev].pos <= i && !rc; s->ev++)
            if (f->ev[s->ev].kind != FY_EV_OBJECT)
                rc = add_anchor(d, b.n, f->ev[s->ev].src, f->ev[s->ev].len, f->ev[s->ev].kind);
        const fy_span *sp = span_starting(s, i, fb);
        if (sp && !rc) {
            size_t e = sp->start + sp->len;
            if (sp->kind == FY_SPAN_TERM) {
                rc = build_term(s, &b, sp);
                st.terms++;
                i = e;
                continue;
            }
            rc = add_pspan(d, (pspan){b.n, sp->len, fy_flat_src0(f, i),
                                      fy_flat_src1(f, e - 1) - fy_flat_src0(f, i),
                                      fy_span_is_strict(sp->kind), sp->kind, 0, 0});
            fy_buf_put(&b, f->text + i, sp->len);
            i = e;
            continue;
        }
        size_t n;
        uint32_t cp = fy_utf8_get(f->text, f->len, i, &n);
        const fy_event *ob;
        if (fy_cp_is_space(cp)) {
            size_t j = i + n;
            while (j < fb && fy_cp_is_space(fy_utf8_get(f->text, f->len, j, &n))) j += n;
            rc = build_space(s, &b, i, j);
            i = j;
        } else if (cp == 0xFFFC && d->html && (ob = object_at(f, i))) {
            rc = build_object(s, &b, ob);
            i += n;
        } else {
            rc = build_char(s, &b, &st, i, n);
            i += n;
        }
    }
    st.na = d->nan - st.a0, st.np = d->nsp - st.p0, st.ne = d->nen - st.e0;
    st.text = fy_buf_take(&b, &st.len);
    if (rc || !st.text || fy_vec_reserve((void **)&d->st, &d->cap_st, d->nst + 1, sizeof *d->st)) {
        free(st.text);
        return FY_ENOMEM;
    }
    d->st[d->nst++] = st;
    return 0;
}

/* Does flat[fa..fb) hold text to translate (wanted) outside strict spans? */
static int translatable(const fy_flat *f, const fy_spans *sp, size_t fa, size_t fb, int cls)
{
    size_t k = 0;
    for (size_t i = fa; i < fb;) {
        while (k < sp->n && sp->v[k].start + sp->v[k].len <= i) k++;
        if (k < sp->n && sp->v[k].start <= i && fy_span_is_strict(sp->v[k].kind)) {
            i = sp->v[k].start + sp->v[k].len;
            continue;
        }
        size_t n;
        if (wanted(fy_utf8_get(f->text, fb, i, &n), cls)) return 1;
        i += n;
    }
    return 0;
}

/* Does flat[fa..fb) hold a glossary term? */
static int has_terms(const fy_spans *sp, size_t fa, size_t fb)
{
    for (size_t k = 0; k < sp->n && sp->v[k].start < fb; k++)
        if (sp->v[k].kind == FY_SPAN_TERM && sp->v[k].start >= fa) return 1;
    return 0;
}

/* What a text range becomes: verbatim text, a sentence for the engine, or
 * a fixed one (glossary terms only). */
enum { R_VERBATIM, R_SENTENCE, R_FIXED };

static int range_kind(const fy_flat *f, const fy_spans *sp, size_t fa, size_t fb, int cls)
{
    if (translatable(f, sp, fa, fb, cls)) return R_SENTENCE;
    return has_terms(sp, fa, fb) ? R_FIXED : R_VERBATIM;
}

/* Adds the pieces for one text range: the literal bytes since the last
 * one, then verbatim text or a sentence (kind: R_*). */
static int add_text(splitter *s, size_t fa, size_t fb, int kind, int glue, size_t *src_end,
                    size_t *flat_end)
{
    int han = kind != R_VERBATIM;
    fy_doc *d = s->d;
    const fy_flat *f = s->f;
    size_t a = fy_flat_src0(f, fa), e = fy_flat_src1(f, fb - 1);
    if (a > *src_end && add_piece(d, (piece){P_LIT, *src_end, a - *src_end, 0, 0, 0, 0, 0}))
        return FY_ENOMEM;
    piece p = {han ? P_SENT : P_VERB, a, e - a, d->nst, d->npc > 0 && fa == *flat_end, glue, 0, 0};
    size_t n;
    p.first = fy_utf8_get(f->text, fb, fa, &n);
    p.last = fy_utf8_get(f->text, fb, fy_utf8_back(f->text, fb), &n);
    if (han && build_sentence(s, fa, fb, kind == R_FIXED)) return FY_ENOMEM;
    *src_end = e;
    *flat_end = fb;
    return add_piece(d, p);
}

/* Spans of flat[a..a+n) shifted to start at 0, for fy_cut_long. */
static int spans_in(const fy_spans *all, size_t a, size_t n, fy_spans *out)
{
    out->n = 0;
    for (size_t k = 0; k < all->n; k++) {
        const fy_span *v = &all->v[k];
        if (v->start < a || v->start + v->len > a + n) continue;
        if (fy_vec_reserve((void **)&out->v, &out->cap, out->n + 1, sizeof *out->v))
            return FY_ENOMEM;
        out->v[out->n++] = (fy_span){v->start - a, v->len, v->kind, v->term};
    }
    return 0;
}

/* Spans with inline markup inside are not protected: the markup must be
 * placed, and a span is replaced as one block. A glossary term is, its
 * markup put after it (build_term). */
static void drop_spans_over_events(const fy_flat *f, fy_spans *sp)
{
    size_t o = 0, e = 0;
    for (size_t k = 0; k < sp->n; k++) {
        size_t a = sp->v[k].start, z = a + sp->v[k].len;
        while (e < f->nev && f->ev[e].pos <= a) e++;
        if (e < f->nev && f->ev[e].pos < z && sp->v[k].kind != FY_SPAN_TERM) continue;
        sp->v[o++] = sp->v[k];
    }
    sp->n = o;
}

/* Is flat[a..e) short Latin text an inline element can wrap as a span
 * (no CJK, no white space at its ends, no sentence inside)? */
static int latin_run(const fy_flat *f, size_t a, size_t e)
{
    if (e <= a || e - a > 40) return 0;
    for (size_t i = a; i < e;) {
        size_t n;
        uint32_t cp = fy_utf8_get(f->text, e, i, &n);
        if (fy_cp_is_cjk(cp) || cp == 0xFFFC || cp == '\n' || cp == '.' || cp == '!' || cp == '?' ||
            ((i == a || i + n == e) && fy_cp_is_space(cp)))
            return 0;
        i += n;
    }
    return 1;
}

/* In HTML, the Latin text an inline element wraps ("<b>Python</b>") is a
 * soft span, so that its tags follow the word into the translation. */
static int add_element_spans(const fy_flat *f, fy_spans *sp)
{
    fy_spans out = {0};
    size_t k = 0;
    for (size_t e = 0; e + 1 < f->nev; e++) {
        const fy_event *o = &f->ev[e], *c = &f->ev[e + 1];
        if (o->kind != FY_EV_OPEN || c->kind != FY_EV_CLOSE || !latin_run(f, o->pos, c->pos))
            continue;
        while (k < sp->n && sp->v[k].start + sp->v[k].len <= o->pos) {
            if (fy_vec_reserve((void **)&out.v, &out.cap, out.n + 1, sizeof *out.v)) goto fail;
            out.v[out.n++] = sp->v[k++];
        }
        if (k < sp->n && sp->v[k].start < c->pos) continue; /* overlaps a span */
        if (fy_vec_reserve((void **)&out.v, &out.cap, out.n + 1, sizeof *out.v)) goto fail;
        out.v[out.n++] = (fy_span){o->pos, c->pos - o->pos, FY_SPAN_WORD, 0};
    }
    for (; k < sp->n; k++) {
        if (fy_vec_reserve((void **)&out.v, &out.cap, out.n + 1, sizeof *out.v)) goto fail;
        out.v[out.n++] = sp->v[k];
    }
    free(sp->v);
    *sp = out;
    return 0;
fail:
    free(out.v);
    return FY_ENOMEM;
}

static int span_cmp(const void *a, const void *b)
{
    const fy_span *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* Do spans x and y overlap? */
static int overlap(const fy_span *x, const fy_span *y)
{
    return x->start < y->start + y->len && y->start < x->start + x->len;
}

/* Merges the glossary's occurrences in text[0..len) into sp (sorted, not
 * overlapping): a URL, e-mail address or `code` span wins over a term it
 * overlaps; a term over a number with a unit, a Latin word or an
 * element's text. 0 or FY_ENOMEM. */
static int add_terms(const fy_glossary *g, const char *text, size_t len, fy_spans *sp)
{
    fy_term_match *m = NULL;
    size_t n = 0, cap = 0, k = 0;
    fy_spans out = {0};
    int rc = fy_glossary_match(g, text, len, &m, &n, &cap);
    for (size_t t = 0; t < n && !rc; t++) { /* the terms no hard span overlaps */
        fy_span term = {m[t].start, m[t].len, FY_SPAN_TERM, m[t].entry};
        while (k < sp->n && sp->v[k].start + sp->v[k].len <= term.start) k++;
        int lost = 0;
        for (size_t j = k; j < sp->n && sp->v[j].start < term.start + term.len; j++)
            lost |= sp->v[j].kind == FY_SPAN_URL || sp->v[j].kind == FY_SPAN_EMAIL ||
                    sp->v[j].kind == FY_SPAN_CODE;
        if (lost) continue;
        if (fy_vec_reserve((void **)&out.v, &out.cap, out.n + 1, sizeof *out.v))
            rc = FY_ENOMEM;
        else
            out.v[out.n++] = term;
    }
    free(m);
    size_t nt = out.n, t = 0;
    for (k = 0; k < sp->n && !rc; k++) { /* the other spans no term overlaps */
        while (t < nt && out.v[t].start + out.v[t].len <= sp->v[k].start) t++;
        if (t < nt && overlap(&out.v[t], &sp->v[k])) continue;
        if (fy_vec_reserve((void **)&out.v, &out.cap, out.n + 1, sizeof *out.v))
            rc = FY_ENOMEM;
        else
            out.v[out.n++] = sp->v[k];
    }
    if (rc) {
        free(out.v);
        return rc;
    }
    if (out.n) qsort(out.v, out.n, sizeof *out.v, span_cmp); /* qsort(NULL, 0) is undefined */
    free(sp->v);
    *sp = out;
    return 0;
}

/* Stores the token count of the sentence just built from t[0..n): the one
 * fy_cut_long measured, else a new count. */
static void set_tokens(fy_doc *d, const fy_split_options *o, const char *t, size_t n, long known)
{
    long c = known > 0 ? known : fy_token_count(t, n, o->count_tokens, o->count_ctx);
    d->st[d->nst - 1].tokens = c < 1 ? 1 : c;
}

static int split_flat(fy_doc *d, const fy_flat *f, const fy_split_options *o)
{
    fy_spans spans = {0}, local = {0};
    fy_ranges rs = {0}, cuts = {0};
    int cls = d->src_rules->source, latin_foreign = cls != FY_SRC_ALPHA;
    const char *tsc = d->tgt_rules->script;
    int rc = fy_find_spans_ex(f->text, f->len, latin_foreign, &spans);
    if (!rc && o->glossary) rc = add_terms(o->glossary, f->text, f->len, &spans);
    if (!rc) drop_spans_over_events(f, &spans);
    /* Tags around a Latin word follow it where the translation keeps it: in
     * non-Latin text, and in a translation into another script (for a Latin
     * target a word found again is as likely a different one: German
     * capitalises). */
    if (!rc && d->html && (latin_foreign || (tsc && strcmp(tsc, "Latn"))))
        rc = add_element_spans(f, &spans);
    if (!rc) rc = fy_split_sentences(f->text, f->len, &spans, d->src_rules, &rs);
    splitter s = {d, f, &spans, o->glossary, 0, 0};
    size_t src_end = 0, flat_end = 0;
    for (size_t k = 0; k < rs.n && !rc; k++) {
        size_t fa = rs.v[k].start, fb = fa + rs.v[k].len;
        int kind = range_kind(f, &spans, fa, fb, cls);
        if (kind != R_SENTENCE) {
            rc = add_text(&s, fa, fb, kind, 0, &src_end, &flat_end);
            if (!rc && kind == R_FIXED) set_tokens(d, o, f->text + fa, fb - fa, 0);
            continue;
        }
        cuts.n = 0;
        rc = spans_in(&spans, fa, fb - fa, &local);
        if (!rc)
            rc = fy_cut_long(f->text + fa, fb - fa, o->max_tokens > 0 ? o->max_tokens : 128,
                             o->count_tokens, o->count_ctx, &local, &cuts);
        for (size_t c = 0; c < cuts.n && !rc; c++) {
            size_t ca = fa + cuts.v[c].start, cb = ca + cuts.v[c].len;
            int ck = range_kind(f, &spans, ca, cb, cls);
            rc = add_text(&s, ca, cb, ck, cuts.v[c].glue, &src_end, &flat_end);
            if (!rc && ck != R_VERBATIM) set_tokens(d, o, f->text + ca, cb - ca, cuts.v[c].tokens);
        }
    }
    if (!rc && d->src_len > src_end)
        rc = add_piece(d, (piece){P_LIT, src_end, d->src_len - src_end, 0, 0, 0, 0, 0});
    free(spans.v);
    free(local.v);
    free(rs.v);
    free(cuts.v);
    return rc;
}

static int is_ascii_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* The raw sentence's engine text into b, with the glossary's terms of
 * d->src[a..e) replaced (spans, no anchors). 0 or FY_ENOMEM. */
static int raw_terms(fy_doc *d, const fy_glossary *g, size_t a, size_t e, fy_buf *b, int *terms)
{
    fy_term_match *m = NULL;
    size_t n = 0, cap = 0, at = a;
    int rc = fy_glossary_match(g, d->src + a, e - a, &m, &n, &cap);
    for (size_t k = 0; k < n && !rc; k++) {
        size_t s0 = a + m[k].start;
        fy_buf_put(b, d->src + at, s0 - at);
        size_t r0 = d->rep.n;
        fy_glossary_render(g, m[k].entry, d->src + s0, m[k].len, &d->rep);
        size_t rn = d->rep.n - r0;
        if (d->rep.oom) rc = FY_ENOMEM;
        if (!rc) rc = add_pspan(d, (pspan){b->n, rn, s0, m[k].len, 1, FY_SPAN_TERM, 1, r0});
        if (!rc) fy_buf_put(b, d->rep.p + r0, rn);
        at = s0 + m[k].len;
        ++*terms;
    }
    fy_buf_put(b, d->src + at, e - at);
    free(m);
    return rc ? rc : b->oom ? FY_ENOMEM : 0;
}

/* Raw mode: lead white space, the one sentence as given (glossary terms
 * replaced), trail. */
static int split_raw(fy_doc *d, const fy_split_options *o)
{
    size_t a = 0, e = d->src_len;
    while (a < e && is_ascii_space(d->src[a])) a++;
    while (e > a && is_ascii_space(d->src[e - 1])) e--;
    if (a > 0 && add_piece(d, (piece){P_LIT, 0, a, 0, 0, 0, 0, 0})) return FY_ENOMEM;
    if (e > a) {
        sent st = {0};
        fy_buf b = {0};
        st.p0 = d->nsp;
        if (o->glossary && raw_terms(d, o->glossary, a, e, &b, &st.terms)) {
            fy_buf_free(&b);
            return FY_ENOMEM;
        }
        if (!o->glossary) fy_buf_put(&b, d->src + a, e - a);
        st.text = fy_buf_take(&b, &st.len);
        if (!st.text || fy_vec_reserve((void **)&d->st, &d->cap_st, d->nst + 1, sizeof *d->st)) {
            free(st.text);
            return FY_ENOMEM;
        }
        st.src = a;
        st.srclen = e - a;
        st.a0 = d->nan, st.e0 = d->nen;
        st.np = d->nsp - st.p0;
        st.para = 1;
        d->st[d->nst++] = st;
        set_tokens(d, o, st.text, st.len, 0);
        if (add_piece(d, (piece){P_SENT, a, e - a, d->nst - 1, 0, 0, 0, 0})) return FY_ENOMEM;
    }
    if (e < d->src_len && add_piece(d, (piece){P_LIT, e, d->src_len - e, 0, 0, 0, 0, 0}))
        return FY_ENOMEM;
    return 0;
}

fy_doc *fy_doc_split(const char *text, size_t len, const fy_split_options *opt, fy_error *err)
{
    fy_split_options def;
    if (!opt) fy_split_options_default(&def), opt = &def;
    size_t bad;
    if (!text && len) {
        fy_err(err, FY_EINVAL, "no text");
        return NULL;
    }
    if (!fy_utf8_valid(text, len, &bad)) {
        fy_err(err, FY_EINVAL, "invalid UTF-8 at byte %zu", bad);
        return NULL;
    }
    const char *nul = len ? memchr(text, '\0', len) : NULL;
    if (nul) {
        fy_err(err, FY_EINVAL, "NUL byte at byte %zu", (size_t)(nul - text));
        return NULL;
    }
    fy_flat f = {0};
    fy_doc *d = calloc(1, sizeof *d);
    if (!d) goto fail;
    if (doc_options(d, opt, err)) {
        free(d);
        return NULL;
    }
    d->src = malloc(len + 1);
    if (!d->src) goto fail;
    if (len) memcpy(d->src, text, len);
    d->src[len] = '\0';
    d->src_len = len;
    if (d->raw) {
        if (split_raw(d, opt)) goto fail;
        return d;
    }
    if (fy_flatten(d->src, len, d->html, opt->placeholders, &f)) goto fail;
    if (split_flat(d, &f, opt)) goto fail;
    fy_flat_free(&f);
    return d;
fail:
    fy_flat_free(&f);
    fy_doc_free(d);
    fy_err(err, FY_ENOMEM, "out of memory splitting %zu bytes of text", len);
    return NULL;
}

void fy_doc_free(fy_doc *d)
{
    if (!d) return;
    for (size_t k = 0; k < d->nst; k++) free(d->st[k].text);
    free(d->st);
    free(d->pc);
    free(d->an);
    free(d->sp);
    free(d->en);
    free(d->src);
    fy_buf_free(&d->rep);
    free(d);
}

size_t fy_doc_sentence_count(const fy_doc *d)
{
    return d ? d->nst : 0;
}

const char *fy_doc_sentence(const fy_doc *d, size_t i, size_t *len)
{
    if (!d || i >= d->nst) return NULL;
    if (len) *len = d->st[i].len;
    return d->st[i].text;
}

int fy_doc_sentence_fixed(const fy_doc *d, size_t i)
{
    return d && i < d->nst && d->st[i].fixed;
}

long fy_doc_sentence_tokens(const fy_doc *d, size_t i)
{
    return d && i < d->nst ? d->st[i].tokens : 0;
}

int fy_doc_sentence_span(const fy_doc *d, size_t i, size_t *start, size_t *len)
{
    if (!d || i >= d->nst) return FY_EINVAL;
    if (start) *start = d->st[i].src;
    if (len) *len = d->st[i].srclen;
    return 0;
}

int fy_split_last_end(const char *text, size_t len, const char *source, size_t *end, size_t *next)
{
    char src[FY_LANG_MAX];
    if (fy_lang_normalize(source, src) != 0) return 0;
    fy_spans spans = {0};
    fy_ranges rs = {0};
    /* The spans the splitter finds: Latin words only in non-Latin text. */
    const fy_lang_rules *r = fy_lang_rules_of(src);
    int rc = fy_find_spans_ex(text, len, r->source != FY_SRC_ALPHA, &spans);
    if (!rc) rc = fy_split_sentences(text, len, &spans, r, &rs);
    int found = !rc && rs.n >= 2;
    if (found) {
        *end = rs.v[rs.n - 2].start + rs.v[rs.n - 2].len;
        *next = rs.v[rs.n - 1].start;
    }
    free(spans.v);
    free(rs.v);
    return found;
}
