/* glossary.c - glossaries (glossary.h): entries, checking them, reading
 * TSV and CSV, the Aho-Corasick matcher, and writing a term's target.
 *
 * Sections: entries (one string pool, a hash set of the compared forms to
 * refuse duplicates), formats, the automaton (a trie over the compared
 * UTF-8 of the source terms, failure links by breadth-first search, each
 * node's edges sorted for a binary search, the root's as a table), the
 * scan, and the output's case.
 */
#include "text/glossary.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "text/text_internal.h"
#include "util/lang.h"
#include "util/lang_rules.h"

typedef struct entry {
    uint32_t src, slen; /* pool offsets of the source term */
    uint32_t tgt, tlen; /* ... of the target ("" for keep as is) */
    uint32_t cmp, clen; /* ... of the compared form (case-folded where the source folds) */
    uint32_t cps;       /* code points of the compared form */
    uint8_t keep;       /* keep as is */
    uint8_t need_left;  /* a word boundary is needed before / after it */
    uint8_t need_right;
} entry;

typedef struct node {
    int32_t fail;  /* the longest proper suffix that is a trie node */
    int32_t dict;  /* the nearest node along fail links that ends a term, -1: none */
    int32_t out;   /* the entry this node ends, -1: none */
    uint32_t edge; /* its edges: edge_byte/edge_next[edge .. edge + nedge) */
    uint32_t nedge;
} node;

struct fy_glossary {
    atomic_int refs;
    char source[FY_LANG_MAX], target[FY_LANG_MAX];
    int fold; /* letters compare without regard to case */
    entry *e;
    size_t n, cap;
    fy_buf pool;
    uint32_t *set; /* entry index + 1 by hash of the compared form; 0: empty */
    size_t set_cap;
    int compiled;
    char hash[FY_GLOSSARY_HASH_LEN + 1];
    /* the automaton */
    node *nodes;
    size_t nnodes;
    uint8_t *edge_byte;
    int32_t *edge_next;
    int32_t root[256]; /* the root's transitions (0: stay at the root) */
};

/* ---- entries ------------------------------------------------------------------ */

fy_glossary *fy_glossary_new(const char *source, const char *target, fy_error *err)
{
    fy_glossary *g = calloc(1, sizeof *g);
    if (!g) {
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    atomic_init(&g->refs, 1);
    if (fy_lang_normalize(source, g->source) < 0 || fy_lang_normalize(target, g->target) < 0) {
        fy_err(err, FY_EINVAL, "'%.32s' is not a language code",
               fy_lang_normalize(source, g->source) < 0 ? source : target);
        free(g);
        return NULL;
    }
    g->fold = fy_lang_rules_of(g->source)->source == FY_SRC_ALPHA;
    return g;
}

static const char *pool_at(const fy_glossary *g, uint32_t off)
{
    return g->pool.p + off;
}

/* Why term s[0..n) cannot be one, or NULL. */
static const char *bad_term(const char *s, size_t n, char *why, size_t cap)
{
    size_t bad;
    if (!fy_utf8_valid(s, n, &bad)) {
        snprintf(why, cap, "is not valid UTF-8 (byte %zu)", bad);
        return why;
    }
    if (n > FY_GLOSSARY_TERM_MAX) {
        snprintf(why, cap, "is longer than %d bytes (%zu)", FY_GLOSSARY_TERM_MAX, n);
        return why;
    }
    for (size_t i = 0, k; i < n; i += k) {
        uint32_t cp = fy_utf8_get(s, n, i, &k);
        if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029) {
            snprintf(why, cap, "contains a control character (U+%04X)", (unsigned)cp);
            return why;
        }
    }
    return NULL;
}

/* s[0..n) without the white space around it. */
static void trim(const char **s, size_t *n)
{
    size_t k;
    while (*n && fy_cp_is_space(fy_utf8_get(*s, *n, 0, &k))) *s += k, *n -= k;
    while (*n) {
        size_t b = fy_utf8_back(*s, *n);
        if (!fy_cp_is_space(fy_utf8_get(*s, *n, b, &k))) break;
        *n = b;
    }
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 0x100000001b3ULL;
    return h;
}

/* Appends the compared form of s[0..n) to the pool; its code points in *cps. */
static void put_compared(fy_glossary *g, const char *s, size_t n, uint32_t *cps)
{
    *cps = 0;
    for (size_t i = 0, k; i < n; i += k, ++*cps) {
        uint32_t cp = fy_utf8_get(s, n, i, &k);
        if (g->fold)
            fy_buf_putcp(&g->pool, fy_cp_fold(cp));
        else
            fy_buf_put(&g->pool, s + i, k);
    }
}

/* The set slot of compared form c[0..n): where it is, or the empty one. */
static size_t set_slot(const fy_glossary *g, const char *c, size_t n)
{
    size_t mask = g->set_cap - 1, at = fnv(0xcbf29ce484222325ULL, c, n) & mask;
    for (;; at = (at + 1) & mask) {
        uint32_t v = g->set[at];
        if (!v) return at;
        const entry *e = &g->e[v - 1];
        if (e->clen == n && !memcmp(pool_at(g, e->cmp), c, n)) return at;
    }
}

static int set_grow(fy_glossary *g)
{
    size_t cap = g->set_cap ? g->set_cap * 2 : 64;
    uint32_t *old = g->set, *set = calloc(cap, sizeof *set);
    if (!set) return FY_ENOMEM;
    size_t old_cap = g->set_cap;
    g->set = set;
    g->set_cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (!old[i]) continue;
        const entry *e = &g->e[old[i] - 1];
        g->set[set_slot(g, pool_at(g, e->cmp), e->clen)] = old[i];
    }
    free(old);
    return 0;
}

static int is_digit(uint32_t cp)
{
    return cp >= '0' && cp <= '9';
}

/* A letter, digit or mark of a script written with spaces between words. */
static int spaced_word(uint32_t cp)
{
    return (is_digit(cp) || fy_cp_is_letter(cp) || fy_cp_is_mark(cp)) && !fy_cp_is_unspaced(cp);
}

static void set_boundaries(entry *e, const char *s, size_t n)
{
    size_t k;
    uint32_t first = fy_utf8_get(s, n, 0, &k), last = fy_utf8_get(s, n, fy_utf8_back(s, n), &k);
    e->need_left = (uint8_t)spaced_word(first);
    e->need_right = (uint8_t)(spaced_word(last) && !fy_cp_is_hangul(last));
}

/* At most 60 bytes of s[0..n) for a message, cut at a character, "..."
 * when cut. */
static const char *quote(const char *s, size_t n, char out[72])
{
    size_t m = n <= 60 ? n : 60;
    while (m < n && m > 0 && ((unsigned char)s[m] & 0xC0) == 0x80) m--;
    memcpy(out, s, m);
    strcpy(out + m, m < n ? "..." : "");
    return out;
}

static int check_terms(const char *s, size_t slen, const char *t, size_t tlen, fy_error *err)
{
    char why[96], q[72];
    size_t bad;
    if (!slen) return fy_err(err, FY_EINVAL, "the source term is empty");
    if (!fy_utf8_valid(s, slen, &bad))
        return fy_err(err, FY_EINVAL, "a source term is not valid UTF-8 (byte %zu)", bad);
    if (bad_term(s, slen, why, sizeof why))
        return fy_err(err, FY_EINVAL, "the source term '%s' %s", quote(s, slen, q), why);
    if (tlen && bad_term(t, tlen, why, sizeof why))
        return fy_err(err, FY_EINVAL, "the target term of '%s' %s", quote(s, slen, q), why);
    return 0;
}

int fy_glossary_add(fy_glossary *g, const char *s, size_t slen, const char *t, size_t tlen,
                    fy_error *err)
{
    if (g->compiled) return fy_err(err, FY_EINVAL, "the glossary is compiled already");
    if (!t) tlen = 0;
    trim(&s, &slen);
    trim(&t, &tlen);
    int rc = check_terms(s, slen, t, tlen, err);
    if (rc) return rc;
    if (g->n >= FY_GLOSSARY_ENTRIES_MAX)
        return fy_err(err, FY_ELIMIT, "a glossary has at most %d entries", FY_GLOSSARY_ENTRIES_MAX);
    if ((g->n + 1) * 2 > g->set_cap && set_grow(g)) return fy_err(err, FY_ENOMEM, "out of memory");
    if (fy_vec_reserve((void **)&g->e, &g->cap, g->n + 1, sizeof *g->e))
        return fy_err(err, FY_ENOMEM, "out of memory");
    size_t mark = g->pool.n;
    entry e = {0};
    e.keep = !tlen || (tlen == slen && !memcmp(s, t, slen));
    e.src = (uint32_t)g->pool.n, e.slen = (uint32_t)slen;
    fy_buf_put(&g->pool, s, slen), fy_buf_putc(&g->pool, '\0');
    e.tgt = (uint32_t)g->pool.n, e.tlen = e.keep ? 0 : (uint32_t)tlen;
    fy_buf_put(&g->pool, t, e.tlen), fy_buf_putc(&g->pool, '\0');
    e.cmp = (uint32_t)g->pool.n;
    put_compared(g, s, slen, &e.cps);
    e.clen = (uint32_t)(g->pool.n - e.cmp);
    fy_buf_putc(&g->pool, '\0');
    if (g->pool.oom) return fy_err(err, FY_ENOMEM, "out of memory");
    set_boundaries(&e, s, slen);
    size_t at = set_slot(g, pool_at(g, e.cmp), e.clen);
    if (g->set[at]) {
        const entry *old = &g->e[g->set[at] - 1];
        char q[72];
        quote(pool_at(g, old->src), old->slen, q);
        g->pool.n = mark;
        return fy_err(err, FY_EINVAL, "duplicate source term '%s' (already in entry %u)", q,
                      g->set[at]);
    }
    g->e[g->n] = e;
    g->set[at] = (uint32_t)++g->n;
    return 0;
}

/* ---- formats ---------------------------------------------------------------------- */

/* One CSV record starting at text[*at]: fields into f (at most max, each
 * a malloc'd unquoted copy); *at past its line break. Returns the field
 * count, or -1 with why. */
static int csv_record(const char *text, size_t len, size_t *at, char **f, size_t *fl, int max,
                      const char **why)
{
    size_t i = *at;
    int nf = 0;
    fy_buf b = {0};
    for (;;) {
        int quoted = i < len && text[i] == '"';
        b.n = 0;
        if (quoted) {
            for (i++;; i++) {
                if (i >= len) {
                    *why = "a quoted field is not closed";
                    goto fail;
                }
                if (text[i] == '"' && i + 1 < len && text[i + 1] == '"') {
                    fy_buf_putc(&b, '"'), i++;
                } else if (text[i] == '"') {
                    i++;
                    break;
                } else {
                    fy_buf_putc(&b, text[i]);
                }
            }
        }
        while (i < len && text[i] != ',' && text[i] != '\n') {
            if (quoted && text[i] != ' ' && text[i] != '\t' && text[i] != '\r') {
                *why = "text after a quoted field";
                goto fail;
            }
            if (!quoted) fy_buf_putc(&b, text[i]);
            i++;
        }
        if (nf == max) {
            *why = "more than four fields";
            goto fail;
        }
        if (!quoted && b.n && b.p[b.n - 1] == '\r') b.n--;
        fl[nf] = b.n;
        if (!(f[nf++] = fy_buf_take(&b, NULL)) && !(f[nf - 1] = calloc(1, 1))) {
            *why = "out of memory";
            goto fail;
        }
        if (i >= len || text[i] == '\n') break;
        i++; /* the comma */
    }
    *at = i < len ? i + 1 : len;
    return nf;
fail:
    fy_buf_free(&b);
    for (int k = 0; k < nf; k++) free(f[k]);
    return -1;
}

/* Do the language columns of a CSV entry (fields 2 and 3, or 2 alone: the
 * target) name g's languages? */
static int csv_langs_ok(const fy_glossary *g, char **f, int nf)
{
    for (int k = 2; k < nf; k++) {
        char tag[FY_LANG_MAX];
        const char *want = nf == 3 || k == 3 ? g->target : g->source;
        if (fy_lang_normalize(f[k], tag) < 0) return 0;
        if (*want && strcmp(tag, want)) return 0;
    }
    return 1;
}

/* Is s only white space? */
static int blank(const char *s, size_t n)
{
    trim(&s, &n);
    return n == 0;
}

static int parse_csv(fy_glossary *g, const char *text, size_t len, fy_error *err)
{
    size_t line = 1;
    for (size_t at = 0; at < len;) {
        char *f[4];
        size_t fl[4], start = at;
        const char *why = NULL;
        int nf = csv_record(text, len, &at, f, fl, 4, &why);
        if (nf < 0) return fy_err(err, FY_EINVAL, "line %zu: %s", line, why);
        int rc = 0, skip = nf == 1 && blank(f[0], fl[0]);
        if (line == 1 && nf >= 2 && !strcasecmp(f[0], "source") && !strcasecmp(f[1], "target"))
            skip = 1; /* a header */
        if (!skip && nf == 1)
            rc = fy_err(err, FY_EINVAL, "line %zu: no comma between the source and the target term",
                        line);
        else if (!skip && !csv_langs_ok(g, f, nf))
            rc = fy_err(err, FY_EINVAL,
                        "line %zu: the entry's language columns are not the glossary's (%s, %s)",
                        line, *g->source ? g->source : "any", *g->target ? g->target : "any");
        else if (!skip && (rc = fy_glossary_add(g, f[0], fl[0], f[1], fl[1], err)))
            fy_err_prefix(err, "line %zu", line);
        for (int k = 0; k < nf; k++) free(f[k]);
        if (rc) return rc;
        for (size_t i = start; i < at; i++) line += text[i] == '\n';
    }
    return 0;
}

static int parse_tsv(fy_glossary *g, const char *text, size_t len, fy_error *err)
{
    size_t line = 0;
    for (size_t at = 0; at < len; line++) {
        const char *s = text + at, *nl = memchr(s, '\n', len - at);
        size_t n = nl ? (size_t)(nl - s) : len - at;
        at += n + (nl != NULL);
        if (n && s[n - 1] == '\r') n--;
        const char *tab = memchr(s, '\t', n);
        size_t rest = tab ? n - (size_t)(tab + 1 - s) : 0;
        const char *sp = s;
        while (sp < s + n && (*sp == ' ' || *sp == '\t')) sp++;
        if (sp == s + n) continue;
        if (!tab)
            return fy_err(err, FY_EINVAL, "line %zu: no tab between the source and the target term",
                          line + 1);
        if (memchr(tab + 1, '\t', rest))
            return fy_err(err, FY_EINVAL,
                          "line %zu: more than one tab (an entry is source TAB target)", line + 1);
        int rc = fy_glossary_add(g, s, (size_t)(tab - s), tab + 1, rest, err);
        if (rc) {
            fy_err_prefix(err, "line %zu", line + 1);
            return rc;
        }
    }
    return 0;
}

int fy_glossary_parse(fy_glossary *g, const char *text, size_t len, int format, fy_error *err)
{
    if (g->compiled) return fy_err(err, FY_EINVAL, "the glossary is compiled already");
    if (!text) len = 0;
    return format == FY_GLOSSARY_CSV ? parse_csv(g, text, len, err) : parse_tsv(g, text, len, err);
}

static void put_csv_field(fy_buf *b, const char *s)
{
    if (!strpbrk(s, ",\"") && *s != ' ' && (!*s || s[strlen(s) - 1] != ' ')) {
        fy_buf_put(b, s, strlen(s));
        return;
    }
    fy_buf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"') fy_buf_putc(b, '"');
        fy_buf_putc(b, *s);
    }
    fy_buf_putc(b, '"');
}

char *fy_glossary_export(const fy_glossary *g, int format, size_t *len)
{
    fy_buf b = {0};
    for (size_t i = 0; i < g->n; i++) {
        const entry *e = &g->e[i];
        const char *s = pool_at(g, e->src), *t = e->keep ? s : pool_at(g, e->tgt);
        if (format == FY_GLOSSARY_CSV) {
            put_csv_field(&b, s);
            fy_buf_putc(&b, ',');
            put_csv_field(&b, t);
        } else {
            fy_buf_printf(&b, "%s\t%s", s, t);
        }
        fy_buf_putc(&b, '\n');
    }
    return fy_buf_take(&b, len);
}

/* ---- the automaton ------------------------------------------------------------------ */

/* A trie under construction: children as sibling lists. */
typedef struct tnode {
    int32_t child, sibling, out;
    uint8_t byte;
} tnode;

typedef struct trie {
    tnode *v;
    size_t n, cap;
} trie;

static int32_t trie_child(const trie *t, int32_t u, uint8_t c)
{
    for (int32_t k = t->v[u].child; k >= 0; k = t->v[k].sibling)
        if (t->v[k].byte == c) return k;
    return -1;
}

static int trie_insert(trie *t, const uint8_t *s, size_t n, int32_t entry)
{
    int32_t u = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t k = trie_child(t, u, s[i]);
        if (k < 0) {
            if (fy_vec_reserve((void **)&t->v, &t->cap, t->n + 1, sizeof *t->v)) return FY_ENOMEM;
            k = (int32_t)t->n++;
            t->v[k] = (tnode){-1, t->v[u].child, -1, s[i]};
            t->v[u].child = k;
        }
        u = k;
    }
    t->v[u].out = entry;
    return 0;
}

/* The node after u on byte c, following failure links. */
static int32_t step(const fy_glossary *g, int32_t u, uint8_t c)
{
    while (u) {
        const node *x = &g->nodes[u];
        size_t lo = x->edge, hi = x->edge + x->nedge;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (g->edge_byte[mid] < c)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < x->edge + x->nedge && g->edge_byte[lo] == c) return g->edge_next[lo];
        u = x->fail;
    }
    return g->root[c];
}

static int byte_cmp(const void *a, const void *b)
{
    return (int)((const tnode *)a)->byte - (int)((const tnode *)b)->byte;
}

/* Copies the trie into sorted edge arrays, in breadth-first order of the
 * trie's own numbering (node ids are kept). */
static int flatten(fy_glossary *g, const trie *t)
{
    g->nnodes = t->n;
    g->nodes = calloc(t->n, sizeof *g->nodes);
    g->edge_byte = malloc(t->n);
    g->edge_next = malloc(t->n * sizeof *g->edge_next);
    tnode *kids = malloc(256 * sizeof *kids);
    if (!g->nodes || !g->edge_byte || !g->edge_next || !kids) {
        free(kids);
        return FY_ENOMEM;
    }
    uint32_t at = 0;
    for (size_t u = 0; u < t->n; u++) {
        uint32_t nk = 0;
        for (int32_t k = t->v[u].child; k >= 0; k = t->v[k].sibling) {
            kids[nk] = t->v[k];
            kids[nk++].child = k; /* carries the id */
        }
        qsort(kids, nk, sizeof *kids, byte_cmp);
        g->nodes[u] = (node){0, -1, t->v[u].out, at, nk};
        for (uint32_t k = 0; k < nk; k++, at++) {
            g->edge_byte[at] = kids[k].byte;
            g->edge_next[at] = kids[k].child;
            if (u == 0) g->root[kids[k].byte] = kids[k].child;
        }
    }
    free(kids);
    return 0;
}

/* Failure and dictionary links, breadth first from the root's children. */
static int link(fy_glossary *g)
{
    int32_t *queue = malloc(g->nnodes * sizeof *queue);
    if (!queue) return FY_ENOMEM;
    size_t head = 0, tail = 0;
    for (uint32_t k = 0; k < g->nodes[0].nedge; k++) queue[tail++] = g->edge_next[k];
    while (head < tail) {
        int32_t u = queue[head++];
        node *x = &g->nodes[u];
        for (uint32_t k = x->edge; k < x->edge + x->nedge; k++) {
            int32_t v = g->edge_next[k];
            int32_t f = step(g, x->fail, g->edge_byte[k]);
            g->nodes[v].fail = f == v ? 0 : f;
            const node *fn = &g->nodes[g->nodes[v].fail];
            g->nodes[v].dict = g->nodes[v].fail && fn->out >= 0 ? g->nodes[v].fail : fn->dict;
            queue[tail++] = v;
        }
    }
    free(queue);
    return 0;
}

static void make_hash(fy_glossary *g)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    h = fnv(h, g->source, strlen(g->source) + 1);
    h = fnv(h, g->target, strlen(g->target) + 1);
    for (size_t i = 0; i < g->n; i++) {
        const entry *e = &g->e[i];
        h = fnv(h, pool_at(g, e->src), e->slen + 1);
        h = fnv(h, pool_at(g, e->tgt), e->tlen + 1);
    }
    snprintf(g->hash, sizeof g->hash, "%016llx", (unsigned long long)h);
}

int fy_glossary_compile(fy_glossary *g, fy_error *err)
{
    if (g->compiled) return 0;
    trie t = {0};
    int rc = fy_vec_reserve((void **)&t.v, &t.cap, 1, sizeof *t.v);
    if (!rc) t.v[t.n++] = (tnode){-1, -1, -1, 0};
    for (size_t i = 0; i < g->n && !rc; i++)
        rc = trie_insert(&t, (const uint8_t *)pool_at(g, g->e[i].cmp), g->e[i].clen, (int32_t)i);
    if (!rc) rc = flatten(g, &t);
    if (!rc) rc = link(g);
    free(t.v);
    if (rc)
        return fy_err(err, FY_ENOMEM, "out of memory compiling a glossary of %zu entries", g->n);
    make_hash(g);
    g->compiled = 1;
    return 0;
}

/* ---- matching ---------------------------------------------------------------------- */

/* Code points of the text a term can span (its compared form is at most
 * FY_GLOSSARY_TERM_MAX bytes of UTF-8, so at most this many): where each
 * of the last ones started. */
#define RING 1024

static int word_boundary_ok(const entry *e, const char *text, size_t len, size_t a, size_t z)
{
    size_t k;
    if (e->need_left && a > 0 && spaced_word(fy_utf8_get(text, len, fy_utf8_back(text, a), &k)))
        return 0;
    if (e->need_right && z < len && spaced_word(fy_utf8_get(text, len, z, &k))) return 0;
    return 1;
}

static int push(fy_term_match **out, size_t *n, size_t *cap, fy_term_match m)
{
    if (fy_vec_reserve((void **)out, cap, *n + 1, sizeof **out)) return FY_ENOMEM;
    (*out)[(*n)++] = m;
    return 0;
}

static int match_cmp(const void *a, const void *b)
{
    const fy_term_match *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->len != y->len) return x->len > y->len ? -1 : 1;
    return (x->entry > y->entry) - (x->entry < y->entry);
}

/* Every occurrence (overlapping ones too) into *all. */
static int scan(const fy_glossary *g, const char *text, size_t len, fy_term_match **all, size_t *n,
                size_t *cap)
{
    size_t ring[RING];
    int32_t u = 0;
    size_t cpi = 0;
    for (size_t i = 0, k; i < len; i += k, cpi++) {
        uint32_t cp = fy_utf8_get(text, len, i, &k);
        ring[cpi % RING] = i;
        char folded[4];
        const char *bytes = text + i;
        size_t nb = k;
        uint32_t f = g->fold ? fy_cp_fold(cp) : cp;
        if (f != cp) nb = fy_utf8_put(folded, f), bytes = folded;
        for (size_t b = 0; b < nb; b++) u = step(g, u, (uint8_t)bytes[b]);
        for (int32_t v = g->nodes[u].out >= 0 ? u : g->nodes[u].dict; v > 0; v = g->nodes[v].dict) {
            const entry *e = &g->e[g->nodes[v].out];
            size_t a = ring[(cpi + 1 - e->cps) % RING], z = i + k;
            if (!word_boundary_ok(e, text, len, a, z)) continue;
            if (push(all, n, cap, (fy_term_match){a, z - a, (uint32_t)g->nodes[v].out}))
                return FY_ENOMEM;
        }
    }
    return 0;
}

int fy_glossary_match(const fy_glossary *g, const char *text, size_t len, fy_term_match **out,
                      size_t *n, size_t *cap)
{
    if (!g || !g->compiled || !g->n) return 0;
    fy_term_match *all = NULL;
    size_t na = 0, ca = 0;
    int rc = scan(g, text, len, &all, &na, &ca);
    if (na > 1) qsort(all, na, sizeof *all, match_cmp);
    size_t end = 0;
    for (size_t i = 0; i < na && !rc; i++) {
        if (i && all[i].start < end) continue;
        rc = push(out, n, cap, all[i]);
        end = all[i].start + all[i].len;
    }
    free(all);
    return rc;
}

/* ---- the output's case ----------------------------------------------------------------- */

static int is_upper(uint32_t cp)
{
    return fy_cp_fold(cp) != cp;
}

static int is_lower(uint32_t cp)
{
    return fy_cp_upper(cp) != cp;
}

/* Two or more upper-case letters and no lower-case one. */
static int all_caps(const char *s, size_t n)
{
    int up = 0;
    for (size_t i = 0, k; i < n; i += k) {
        uint32_t cp = fy_utf8_get(s, n, i, &k);
        if (is_lower(cp)) return 0;
        up += is_upper(cp);
    }
    return up >= 2;
}

/* The first letter that has a case, or 0. */
static uint32_t first_cased(const char *s, size_t n)
{
    for (size_t i = 0, k; i < n; i += k) {
        uint32_t cp = fy_utf8_get(s, n, i, &k);
        if (is_upper(cp) || is_lower(cp)) return cp;
    }
    return 0;
}

/* Appends t[0..n) in capitals (all), or with its first cased letter one. */
static void put_upper(fy_buf *b, const char *t, size_t n, int all)
{
    int done = 0;
    for (size_t i = 0, k; i < n; i += k) {
        uint32_t cp = fy_utf8_get(t, n, i, &k);
        if (!done && (is_upper(cp) || is_lower(cp))) {
            fy_buf_putcp(b, fy_cp_upper(cp));
            done = !all;
        } else if (all) {
            fy_buf_putcp(b, fy_cp_upper(cp));
        } else {
            fy_buf_put(b, t + i, k);
        }
    }
}

int fy_glossary_keeps(const fy_glossary *g, uint32_t i)
{
    return i < g->n && g->e[i].keep;
}

void fy_glossary_render(const fy_glossary *g, uint32_t i, const char *occ, size_t occ_len,
                        fy_buf *b)
{
    if (i >= g->n) return;
    const entry *e = &g->e[i];
    const char *s = pool_at(g, e->src), *t = pool_at(g, e->tgt);
    if (e->keep) {
        fy_buf_put(b, occ, occ_len);
        return;
    }
    if (g->fold && all_caps(occ, occ_len) && !all_caps(s, e->slen)) {
        put_upper(b, t, e->tlen, 1);
        return;
    }
    uint32_t oc = first_cased(occ, occ_len), sc = first_cased(s, e->slen);
    if (g->fold && oc && sc && is_upper(oc) && !is_upper(sc)) {
        put_upper(b, t, e->tlen, 0);
        return;
    }
    fy_buf_put(b, t, e->tlen);
}

/* ---- the rest ------------------------------------------------------------------------- */

fy_glossary *fy_glossary_ref(fy_glossary *g)
{
    if (g) atomic_fetch_add(&g->refs, 1);
    return g;
}

void fy_glossary_unref(fy_glossary *g)
{
    if (!g || atomic_fetch_sub(&g->refs, 1) != 1) return;
    free(g->e);
    free(g->set);
    fy_buf_free(&g->pool);
    free(g->nodes);
    free(g->edge_byte);
    free(g->edge_next);
    free(g);
}

const char *fy_glossary_source(const fy_glossary *g)
{
    return g->source;
}

const char *fy_glossary_target(const fy_glossary *g)
{
    return g->target;
}

size_t fy_glossary_count(const fy_glossary *g)
{
    return g ? g->n : 0;
}

int fy_glossary_entry(const fy_glossary *g, size_t i, const char **source, const char **target)
{
    if (!g || i >= g->n) return FY_EINVAL;
    *source = pool_at(g, g->e[i].src);
    *target = pool_at(g, g->e[i].tgt);
    return 0;
}

size_t fy_glossary_bytes(const fy_glossary *g)
{
    size_t n = 0;
    for (size_t i = 0; g && i < g->n; i++) n += g->e[i].slen + g->e[i].tlen;
    return n;
}

const char *fy_glossary_hash(const fy_glossary *g)
{
    return g->hash;
}
